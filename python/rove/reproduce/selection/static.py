"""The ns-3-like static cell (seed-002 PA1.2, PA2.1; Table 5.1) and the no-window-scaling case
(PA1.1): the behaviours H1 (HyStart's early exit and the 1 MB completion order), H2 (standing
queues, CDG, Westwood+, background load), H3 (the capacity step at 20 s) of the summary's §8.3,
and Finding 1 (a 64 KB window caps the rate whatever the algorithm).

Each experiment runs a committed sweep (``scenarios/selection/sweeps/``) once per algorithm;
:func:`~.runs.records` reduces each run to one row of what its claims read
(``ctx.data["runs"]``), so the tests give the analyses hand-made rows.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ...selection import connections_to_fill
from ...selection.handoff import bdp_bytes
from ..document import Section, Table, fmt, spread
from ..verdicts import HOLDS, NOT_MEASURED, Claim, judge_range, mean
from .common import combined, display, fraction_claim, pairs_claim
from .runs import flow_row, flow_series, mean_srtt_ms, slow_start_exit, window_goodput_mbps

# The static cell (scenarios/selection/ns3-static.toml): 32.86 Mbit/s of transport blocks at
# 13 dB, half of it with the background; in TCP payload (1448 of 1500 bytes).
CELL_MBPS = 32.856
PAYLOAD = 1448 / 1500
CAPACITY_MBPS = {"base": CELL_MBPS * PAYLOAD, "loaded": CELL_MBPS / 2 * PAYLOAD}
STEP_S = 20.0          # the capacity step (Table 5.1, PA1.2)
SETTLE_S = 5.0         # [GAP] after the step, 5 s for an algorithm to settle before measuring
WINDOW_BYTES = 65535   # no window scaling: the 16-bit window unscaled (Finding 1)


def _values(runs: pd.DataFrame, series: str, column: str, **where) -> list[float]:
    m = runs[runs["series"] == series]
    for k, v in where.items():
        m = m[m[k] == v]
    return [float(x) for x in m.sort_values("seed")[column] if np.isfinite(x)]


def _runs(ctx) -> pd.DataFrame:
    d = ctx.data or {}
    return d.get("runs", pd.DataFrame()) if isinstance(d, dict) else pd.DataFrame()


def _table(runs: pd.DataFrame, columns: list[tuple[str, str, str]], by: list[str],
           caption: str, labels: dict[str, str]) -> Table:
    """mean ± sd (seeds) of each column, one row per series and ``by`` values."""
    rows = []
    for keys, g in runs.groupby(["series", *by], sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        rows.append([labels.get(keys[0], keys[0]), *[str(k) for k in keys[1:]],
                     *[spread(g[c], spec) for c, _, spec in columns]])
    return Table(["algorithm", *by, *[h for _, h, _ in columns]], rows, caption)


# --------------------------------------------------------------------------------------------
# H1: start-up


def measure_startup(run_dir: Path, rows: pd.DataFrame) -> dict:
    f = flow_row(rows, "ue")
    ts = flow_series(run_dir, "ue")
    t, cwnd = slow_start_exit(ts)
    mins = ts["min_rtt_ms"][ts["min_rtt_ms"] > 0]
    return {"fct_s": f.get("fct_s"), "exit_s": t, "exit_cwnd": cwnd,
            "min_rtt_ms": float(mins.min()) if len(mins) else math.nan}


def bdp_pkts(case: str, min_rtt_ms: float) -> float:
    return bdp_bytes(CAPACITY_MBPS[case] * 1e6 / PAYLOAD, min_rtt_ms / 1e3) / 1500


def analyse_startup(ctx) -> Section:
    s = Section("Start-up over the static cell: HyStart's early exit and 1 MB downloads (H1)")
    runs = _runs(ctx)
    if not len(runs):
        s.paragraphs.append("No run completed.")
        s.verdict = NOT_MEASURED
        return s
    labels = ctx.labels() or {}
    size = "flows.0.size"
    s.paragraphs.append(
        "A fresh connection on the ns-3-like static cell (scenarios/selection/ns3-static.toml: "
        "a UE at 13 dB, 32.9 Mbit/s of transport blocks, a 1.1 MB RLC queue, 69 ms minimum "
        "RTT; loaded: half the cell to a background UE), ACKs on 5 ms uplink grants. A 1 MB "
        "download gives the completion time; an unlimited one where slow start ends (the "
        "first change of ssthresh, and the largest window before it). BDP = the UE's "
        "capacity times the minimum RTT.")
    s.tables.append(_table(runs[runs[size] == "1MB"], [("fct_s", "1 MB FCT, s", ".3f")],
                           ["case"], "1 MB completion time (mean ± sd (seeds))", labels))
    long = runs[runs[size] == "inf"]
    s.tables.append(_table(long, [("exit_cwnd", "slow-start exit window, packets", ".0f"),
                                  ("exit_s", "exit time, s", ".3f")], ["case"],
                           "Where slow start ends (unlimited download)", labels))
    cases = sorted(set(runs["case"]))
    # H1: CUBIC+HyStart exits at a window well below the BDP while NewReno keeps ramping
    flags, parts = {}, []
    for case in cases:
        cu = _values(long, "cubic", "exit_cwnd", case=case)
        re = _values(long, "reno", "exit_cwnd", case=case)
        rtt = mean(_values(long, "reno", "min_rtt_ms", case=case)) or math.nan
        bdp = bdp_pkts(case, rtt)
        if len(cu) < 2 or len(re) < 2:
            flags[case] = None
            continue
        from ..verdicts import judge_less

        below = mean(cu) <= WELL_BELOW * bdp and judge_less(cu, re)[0] == HOLDS
        flags[case] = below
        parts.append(f"{case}: CUBIC {fmt(mean(cu), '.0f')}, NewReno {fmt(mean(re), '.0f')} "
                     f"packets, BDP {fmt(bdp, '.0f')}")
    s.claims.append(fraction_claim(
        "(H1) CUBIC+HyStart exits slow start at a cwnd well below the BDP (about 120 packets) "
        "while NewReno keeps ramping", "§8.3 H1; §5.1 #8", flags,
        f"per case, CUBIC's mean exit window ≤ {WELL_BELOW} x the BDP and below NewReno's over "
        "seeds", holds_at=1.0, partly_at=0.5, detail="; ".join(parts)))
    # 1 MB FCT ordering NewReno ≤ CUBIC-3x ≤ CUBIC
    short = runs[runs[size] == "1MB"]
    pairs = []
    for case in cases:
        for a, b in (("reno", "cubic-3x"), ("cubic-3x", "cubic")):
            pairs.append((f"{case} {labels.get(a, a)} < {labels.get(b, b)}",
                          _values(short, a, "fct_s", case=case), _values(short, b, "fct_s", case=case)))
    s.claims.append(pairs_claim("(H1) 1 MB FCT ordering NewReno ≤ CUBIC-3x ≤ CUBIC",
                                "§8.3 H1; PA2.2", pairs, "1 MB completion time", holds_at=1.0))
    # with HyStart disabled, CUBIC's slow start equals NewReno's
    flags = {}
    for case in cases:
        a = mean(_values(long, "cubic-nohystart", "exit_cwnd", case=case))
        b = mean(_values(long, "reno", "exit_cwnd", case=case))
        fa = mean(_values(short, "cubic-nohystart", "fct_s", case=case))
        fb = mean(_values(short, "reno", "fct_s", case=case))
        flags[case] = None if None in (a, b, fa, fb) else \
            abs(a / b - 1) <= SAME and abs(fa / fb - 1) <= SAME
    s.claims.append(fraction_claim(
        "(H1) with HyStart disabled, CUBIC's slow start equals NewReno's", "§8.3 H1", flags,
        f"per case, CUBIC without HyStart's mean exit window and 1 MB FCT within {SAME:.0%} of "
        "NewReno's", holds_at=1.0, partly_at=0.5))
    # the ACK-train test never fires: HyStart's exit with the delay test alone is the same
    flags = {}
    for case in cases:
        a = mean(_values(long, "cubic-delay", "exit_cwnd", case=case))
        b = mean(_values(long, "cubic", "exit_cwnd", case=case))
        flags[case] = None if None in (a, b) else abs(a / b - 1) <= SAME
    s.claims.append(fraction_claim(
        "(H1) the ACK-train test never fires (the delay test is the culprit)",
        "§3.2(b); Fig. 5.7; §8.3 H1", flags,
        f"per case, CUBIC with the delay test alone (hystart_detect = \"delay\") leaves slow "
        f"start at a mean window within {SAME:.0%} of CUBIC with both tests'",
        holds_at=1.0, partly_at=0.5))
    s.verdict = combined(s.claims)
    return s


WELL_BELOW = 0.8   # "well below the BDP": at most 80 % of it
SAME = 0.10        # "equals": within 10 %


# --------------------------------------------------------------------------------------------
# H2: the static cell, alone and loaded


def measure_static(run_dir: Path, rows: pd.DataFrame) -> dict:
    f = flow_row(rows, "ue")
    ts = flow_series(run_dir, "ue")
    mins = ts["min_rtt_ms"][ts["min_rtt_ms"] > 0]
    return {"goodput_mbps": f.get("goodput_mbps"), "mean_rtt_ms": f.get("mean_rtt_ms"),
            "retrans_rate": f.get("retrans_rate"),
            "min_rtt_ms": float(mins.min()) if len(mins) else math.nan,
            "goodput_0_10": window_goodput_mbps(ts, 0.0, 10.0),
            "goodput_10_40": window_goodput_mbps(ts, 10.0, float(ts["time_s"].max()))}


LOSS_BASED = ("cubic", "reno", "illinois")
STANDING_QUEUE_MS = 100.0    # "RTT inflation toward hundreds of ms"


def analyse_static(ctx) -> Section:
    s = Section("The static cell: standing queues, CDG, Westwood+ and background load (H2)")
    runs = _runs(ctx)
    if not len(runs):
        s.paragraphs.append("No run completed.")
        s.verdict = NOT_MEASURED
        return s
    labels = ctx.labels() or {}
    runs = runs.assign(queue_ms=runs["mean_rtt_ms"] - runs["min_rtt_ms"])
    s.paragraphs.append(
        "One UE at about half the cell's maximum (32.9 Mbit/s, 1.1 MB RLC queue: 250 ms at that "
        "rate), 69 ms minimum RTT, 40-s runs, alone (base) and with a background UE taking "
        "half the cell (loaded). Queueing = mean RTT − minimum RTT.")
    s.tables.append(_table(runs, [("goodput_mbps", "goodput, Mbit/s", ".2f"),
                                  ("mean_rtt_ms", "mean RTT, ms", ".0f"),
                                  ("queue_ms", "queueing, ms", ".0f"),
                                  ("goodput_0_10", "goodput 0-10 s", ".2f")], ["case"],
                           "mean ± sd (seeds)", labels))
    base = runs[runs["case"] == "base"]
    flags = {}
    for cc in LOSS_BASED:
        q = mean(_values(base, cc, "queue_ms"))
        flags[display(cc)] = None if q is None else q >= STANDING_QUEUE_MS
    s.claims.append(fraction_claim(
        "(H2) loss-based CCAs (CUBIC, NewReno, Illinois) show RTT inflation toward hundreds of "
        "ms (standing queue up to 250 ms)", "§8.3 H2; §5.1 #12; Table 5.1", flags,
        f"base case, each one's mean queueing (mean RTT − minimum) ≥ {STANDING_QUEUE_MS:.0f} ms",
        holds_at=1.0, partly_at=0.5))
    pairs = [(f"RTT CDG < {display(cc)}", _values(base, "cdg", "mean_rtt_ms"),
              _values(base, cc, "mean_rtt_ms")) for cc in LOSS_BASED]
    pairs += [(f"goodput CDG < {display(cc)}", _values(base, "cdg", "goodput_mbps"),
               _values(base, cc, "goodput_mbps")) for cc in LOSS_BASED]
    s.claims.append(pairs_claim("(H2) CDG keeps RTT near base with lower goodput",
                                "§8.3 H2; Table 5.1", pairs,
                                "base case: CDG's mean RTT and goodput below each loss-based "
                                "algorithm's", holds_at=1.0))
    pairs = [(f"Westwood+ < {display(cc)}", _values(base, "westwood", "goodput_0_10"),
              _values(base, cc, "goodput_0_10")) for cc in LOSS_BASED]
    s.claims.append(pairs_claim("(H2) Westwood+ recovers slowly after its first back-off "
                                "(\"very aggressive back-off; slow ramp-up\")",
                                "§8.3 H2; Table 5.1", pairs,
                                "base case, goodput over the first 10 s: Westwood+'s below each "
                                "loss-based algorithm's", holds_at=1.0))
    # 50 % background load shrinks the differences
    spreads = {}
    for case in ("base", "loaded"):
        m = runs[runs["case"] == case]
        gs = [mean(_values(m, cc, "goodput_mbps")) for cc in set(m["series"])]
        gs = [g for g in gs if g]
        spreads[case] = (max(gs) - min(gs)) / max(gs) if len(gs) >= 2 else None
    ok = None if None in spreads.values() else spreads["loaded"] < spreads["base"]
    s.claims.append(Claim(
        "(H2) 50 % background load shrinks the differences", "§8.3 H2; Table 5.1; §5.3",
        f"relative goodput spread (max − min)/max over the algorithms: base "
        f"{fmt(spreads['base'], '.3f')}, loaded {fmt(spreads['loaded'], '.3f')}",
        "the spread loaded below the spread alone", NOT_MEASURED if ok is None else
        (HOLDS if ok else "does not hold")))
    s.verdict = combined(s.claims)
    return s


# --------------------------------------------------------------------------------------------
# H3: the capacity step at 20 s


def measure_step(run_dir: Path, rows: pd.DataFrame) -> dict:
    ts = flow_series(run_dir, "ue")
    end = float(ts["time_s"].max())
    g_after = window_goodput_mbps(ts, STEP_S + SETTLE_S, end)
    rtt_after = mean_srtt_ms(ts, STEP_S, STEP_S + 10.0)
    return {"goodput_before": window_goodput_mbps(ts, STEP_S - 10.0, STEP_S),
            "goodput_after": g_after, "srtt_after_ms": rtt_after,
            "power_after": g_after / mean_srtt_ms(ts, STEP_S + SETTLE_S, end)}


def analyse_step(ctx) -> Section:
    s = Section("The capacity step at 20 s (H3)")
    runs = _runs(ctx)
    if not len(runs):
        s.paragraphs.append("No run completed.")
        s.verdict = NOT_MEASURED
        return s
    labels = ctx.labels() or {}
    s.paragraphs.append(
        "The static cell with the background UE (half the cell) stopping at 20 s (up: the TCP "
        "UE's share goes from 15.9 to 31.7 Mbit/s of payload) or starting at 20 s (down: from "
        f"31.7 to 15.9). Goodput over 10-20 s and over {STEP_S + SETTLE_S:.0f} s to the end "
        f"([GAP] {SETTLE_S:.0f} s to settle), mean srtt over 20-30 s.")
    s.tables.append(_table(runs, [("goodput_before", "goodput 10-20 s", ".2f"),
                                  ("goodput_after", "goodput after", ".2f"),
                                  ("srtt_after_ms", "srtt 20-30 s, ms", ".0f")], ["case"],
                           "mean ± sd (seeds)", labels))
    up = runs[runs["case"] == "up"]
    pairs = [(f"{display(lo)} < {display(hi)}", _values(up, lo, "goodput_after"),
              _values(up, hi, "goodput_after"))
             for lo in ("cdg", "westwood") for hi in LOSS_BASED]
    s.claims.append(pairs_claim("(H3) step up: CDG and Westwood+ fail to use the new capacity",
                                "§8.3 H3; Table 5.1; Finding 4", pairs,
                                "goodput after the step: CDG's and Westwood+'s below each "
                                "loss-based algorithm's", holds_at=1.0))
    down = runs[runs["case"] == "down"]
    flags = {}
    for cc in sorted(set(down["series"])):
        g = mean(_values(down, cc, "goodput_after"))
        flags[labels.get(cc, cc)] = None if g is None else \
            g >= ADAPTED * CAPACITY_MBPS["loaded"]
    s.claims.append(fraction_claim(
        "(H3) step down: all CCAs adapt", "§8.3 H3; Table 5.1", flags,
        f"each one's mean goodput after the step ≥ {ADAPTED} x the UE's new capacity "
        f"({CAPACITY_MBPS['loaded']:.1f} Mbit/s of payload)", holds_at=1.0, partly_at=0.6))
    pairs = [(f"{display(cc)} < CUBIC", _values(down, cc, "srtt_after_ms"),
              _values(down, "cubic", "srtt_after_ms"))
             for cc in sorted(set(down["series"])) if cc != "cubic"]
    s.claims.append(pairs_claim("(H3) step down: CUBIC takes longest to stabilise (an instant "
                                "huge queue)", "§8.3 H3; Table 5.1", pairs,
                                "mean srtt over the 10 s after the step: every other "
                                "algorithm's below CUBIC's", holds_at=1.0))
    pairs = [(f"{display(cc)} < Westwood+", _values(down, cc, "power_after"),
              _values(down, "westwood", "power_after"))
             for cc in sorted(set(down["series"])) if cc != "westwood"]
    s.claims.append(pairs_claim("(H3) step down: Westwood+ gets the best goodput/delay",
                                "§8.3 H3; Table 5.1", pairs,
                                "goodput over mean srtt after the step: every other "
                                "algorithm's below Westwood+'s", holds_at=1.0))
    s.verdict = combined(s.claims)
    return s


ADAPTED = 0.8


# --------------------------------------------------------------------------------------------
# Finding 1: no window scaling


def measure_window(run_dir: Path, rows: pd.DataFrame) -> dict:
    f = flow_row(rows, "ue")
    ts = flow_series(run_dir, "ue")
    mins = ts["min_rtt_ms"][ts["min_rtt_ms"] > 0]
    return {"goodput_mbps": f.get("goodput_mbps"), "mean_rtt_ms": f.get("mean_rtt_ms"),
            "min_rtt_ms": float(mins.min()) if len(mins) else math.nan}


def analyse_window(ctx) -> Section:
    s = Section("No window scaling: a 64 KB window caps every algorithm (Finding 1)")
    runs = _runs(ctx)
    n = connections_to_fill(100e6, 0.150)
    bdp = bdp_bytes(100e6, 0.150)
    s.claims.append(Claim(
        "29 parallel connections are needed with a 64 KB window (100 Mbps, RTT 150 ms, BDP "
        "1,875,000 B)", "§4.2 PA1.1; §5.1 #13",
        f"rove.selection.connections_to_fill: {n} connections, BDP {bdp:,.0f} B",
        "exactly 29 and 1,875,000 B", HOLDS if (n, round(bdp)) == (29, 1875000) else "does not hold"))
    if not len(runs):
        s.paragraphs.append("No run completed.")
        s.verdict = combined(s.claims)
        return s
    labels = ctx.labels() or {}
    s.paragraphs.append(
        "A static UE at 20 dB (46.9 Mbit/s of transport blocks), 69 ms minimum RTT, a fixed "
        "65,535-byte receive window (no window scaling), 30-s runs.")
    s.tables.append(_table(runs, [("goodput_mbps", "goodput, Mbit/s", ".3f"),
                                  ("mean_rtt_ms", "mean RTT, ms", ".1f")], [],
                           "mean ± sd (seeds)", labels))
    flags, parts = {}, []
    for cc in sorted(set(runs["series"])):
        g = mean(_values(runs, cc, "goodput_mbps"))
        r = mean(_values(runs, cc, "min_rtt_ms"))
        cap = WINDOW_BYTES * 8 / (r / 1e3) / 1e6 if r else None
        flags[labels.get(cc, cc)] = None if g is None or cap is None else g <= cap * 1.001
        parts.append(f"{labels.get(cc, cc)} {fmt(g, '.3f')} ≤ {fmt(cap, '.3f')}")
    s.claims.append(fraction_claim(
        "Without window scaling rwnd ≤ 64 KB and the rate ≤ 64 KB per RTT", "Finding 1 "
        "(Table 5.4)", flags, "each algorithm's mean goodput ≤ 65,535 B x 8 / its minimum RTT",
        holds_at=1.0, partly_at=0.5, detail="; ".join(parts)))
    gs = [mean(_values(runs, cc, "goodput_mbps")) for cc in sorted(set(runs["series"]))]
    gs = [g for g in gs if g]
    spread_ratio = max(gs) / min(gs) if len(gs) >= 2 else None
    s.claims.append(Claim(
        "... so a more aggressive CCA cannot help (the limit is the receiver)",
        "Finding 1 (Table 5.4)", f"best/worst mean goodput {fmt(spread_ratio, '.3f')} over "
                                 f"{len(gs)} algorithms",
        f"the best algorithm's mean goodput ≤ {SAME_RATE} x the worst's",
        judge_range(spread_ratio, (0.0, SAME_RATE))))
    s.verdict = combined(s.claims)
    return s


SAME_RATE = 1.05
