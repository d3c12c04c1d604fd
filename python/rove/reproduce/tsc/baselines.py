"""Ch. 4's baseline study: one TCP Cubic flow over DropTail and over CoDel (seed-003 §4.3,
Figs. 4.2-4.3; research/seed-003.md §4.3, §5 rows 14-15).

``scenarios/tsc/ch4-baselines.toml``: 40 Mbit/s, RTT_min 50 ms, DropTail with 10,000 packets
or CoDel (5 ms / 100 ms), at a static capacity (case ``static``) and at half capacity for 1 s
every 5 s (case ``half``: 40 Mbit/s for 4 s, 20 Mbit/s for 1 s). Per run: the sender's largest
smoothed RTT (timeseries.parquet, 100-ms samples) and the utilisation, in-order bytes delivered
over the bytes the link could carry (queue.parquet's ``capacity_bytes``, wire bytes, so 1448/1500
= 0.965 is the ceiling) from the end of the first 5-s cycle to the end of the run.

Row 14 ("the maximum RTT is about 3 s at 10,000 packets") is judged on DropTail's largest RTT,
row 15 ("CoDel gets about half of the capacity") on CoDel's utilisation in the half case; the
[GAP] "capacity" is the schedule's capacity (36 Mbit/s on average), and the nominal 40 Mbit/s
is shown beside.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from ..document import Section, Table, fmt
from ..document import spread as pm
from ..runner import Series
from ..study import Context, run_with_records
from ..verdicts import HOLDS, PARTLY, Claim, combine, judge_range, median
from .common import DETERMINISTIC_MARGIN, less_deterministic, link_capacity, recorded_runs, utilisation_between

WHERE = "§4.3"
LINK = "down"
NOMINAL_MBPS = 40.0
SKIP_S = 5.0                  # [GAP] utilisation from the end of the first 5-s cycle
# Row 14: max RTT about 3 s (10,000 × 1500 B × 8 / 40 Mbit/s = 3.0 s); within a factor
# ROW14_FACTOR (holds), within 2 × that (partly).
ROW14_S = 3.0
ROW14_FACTOR = 1.5
# Row 15: "about half": CoDel's utilisation in the half case within HALF ± HALF_BAND (holds);
# below DropTail's in the same case beyond common.DETERMINISTIC_MARGIN (partly: the ordering only).
HALF, HALF_BAND = 0.5, 0.15

DROPTAIL = Series("droptail", "Cubic + DropTail (10,000 pkt)", "cubic")
CODEL = Series("codel", "Cubic + CoDel", "cubic", extra={"links.down.queue": "codel"})
BASELINE_SERIES = (DROPTAIL, CODEL)
CASES = (("static", "static 40 Mbit/s"), ("half", "half capacity 1 s every 5 s"))


def measure(run_dir: Path, rows) -> dict:
    d = Path(run_dir)
    f = json.loads((d / "summary.json").read_text(encoding="utf-8"))["flows"][0]
    t = pq.read_table(d / "timeseries.parquet", columns=["time_s", "srtt_ms", "bytes_delivered"]
                      ).to_pandas().sort_values("time_s")
    late = t[t["time_s"] >= SKIP_S - 1e-9]
    times = late["time_s"].to_numpy()
    util, span = utilisation_between(times, late["bytes_delivered"].to_numpy(),
                                     link_capacity(d, LINK))
    seconds = float(times[-1] - times[0])
    return {"max_rtt_ms": float(t["srtt_ms"].max()), "mean_rtt_ms": f.get("mean_rtt_ms"),
            "goodput_mbps": f.get("goodput_mbps"), "retrans_rate": f.get("retrans_rate"),
            "utilisation": util,
            "capacity_mbps": span * 8 / seconds / 1e6 if seconds > 0 else None}


def run_baselines(sweeps: Path):
    return run_with_records(sweeps, measure)


def _values(runs, series: Series, case: str, column: str) -> list[float]:
    m = runs[(runs["series"] == series.key) & (runs["case"] == case)]
    return [float(x) for x in m[column] if x is not None and x == x]


def analyse_baselines(ctx: Context) -> Section:
    s = Section("Ch. 4: single Cubic over DropTail and CoDel (Figs. 4.2-4.3)")
    runs = recorded_runs(ctx, s)
    if runs is None:
        return s
    s.paragraphs.append(
        "Setting (`scenarios/tsc/ch4-baselines.toml`): one TCP Cubic bulk flow, 40 Mbit/s, "
        "25 ms each way (RTT_min 50 ms), DropTail with 10,000 packets or CoDel (target 5 ms, "
        "interval 100 ms), a 64-MiB receive window [GAP], 60 s (30 s in quick mode); static, or "
        "20 Mbit/s in the last second of every 5 s. Utilisation: in-order bytes over the "
        f"link's capacity from {SKIP_S:g} s to the end (ceiling 0.965: headers).")
    rows = []
    for case, label in CASES:
        for series in BASELINE_SERIES:
            if not _values(runs, series, case, "max_rtt_ms"):
                continue
            rows.append([label, series.label,
                         pm(_values(runs, series, case, "max_rtt_ms"), ".0f"),
                         pm(_values(runs, series, case, "mean_rtt_ms"), ".0f"),
                         pm(_values(runs, series, case, "goodput_mbps"), ".2f"),
                         pm(_values(runs, series, case, "capacity_mbps"), ".1f"),
                         pm(_values(runs, series, case, "utilisation"), ".3f"),
                         pm(_values(runs, series, case, "retrans_rate"), ".4f")])
    s.tables.append(Table(["capacity", "queue", "max srtt (ms)", "mean RTT (ms)",
                           "goodput (Mbit/s)", "capacity (Mbit/s)", "utilisation",
                           "retransmitted share"], rows, "mean ± sd over seeds"))
    s.claims += [_rtt_claim(runs), _half_claim(runs)]
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def _rtt_claim(runs) -> Claim:
    m = median(_values(runs, DROPTAIL, "static", "max_rtt_ms"))
    sec = m / 1e3 if m is not None else None
    f = ROW14_FACTOR
    v = judge_range(sec, (ROW14_S / f, ROW14_S * f), (ROW14_S / f**2, ROW14_S * f**2))
    codel = median(_values(runs, CODEL, "static", "max_rtt_ms"))
    return Claim("Cubic over a 10,000-packet DropTail buffer at 40 Mbit/s: the maximum RTT is "
                 "about 3 s (row 14)", f"{WHERE}, Fig. 4.2",
                 f"DropTail's largest srtt {fmt(sec, '.2f')} s (median over seeds; CoDel's "
                 f"{fmt(codel, '.0f')} ms)",
                 f"the median largest srtt within ×{f:g} of {ROW14_S:g} s (holds), within "
                 f"×{f**2:g} (partly)", v)


def _half_claim(runs) -> Claim:
    codel = _values(runs, CODEL, "half", "utilisation")
    drop = _values(runs, DROPTAIL, "half", "utilisation")
    v = judge_range(median(codel), (HALF - HALF_BAND, HALF + HALF_BAND))
    order, text = less_deterministic(codel, drop)
    if v != HOLDS and order == HOLDS:
        v = PARTLY
    good = median(_values(runs, CODEL, "half", "goodput_mbps"))
    return Claim("With half capacity for 1 s every 5 s, Cubic over CoDel gets about half of "
                 "the capacity; large-buffer DropTail keeps high throughput (row 15)",
                 f"{WHERE}, Fig. 4.3",
                 f"CoDel's utilisation {fmt(median(codel), '.3f')} of the schedule's capacity "
                 f"({fmt(good, '.1f')} Mbit/s, {fmt(good / NOMINAL_MBPS if good else None, '.2f')}"
                 f" of the nominal 40), DropTail's {fmt(median(drop), '.3f')}; CoDel below "
                 f"DropTail: {order} ({text})",
                 f"CoDel's median utilisation within {HALF:g} ± {HALF_BAND:g} (holds); outside "
                 f"it but below DropTail's beyond {DETERMINISTIC_MARGIN:.0%} of the larger (one "
                 f"deterministic run a side; partly)", v)
