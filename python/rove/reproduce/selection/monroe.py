"""The MONROE-like operator profiles (seed-002 PA2.2, Fig. 4.10; H6 of the summary's §8.3):
a 10 MB long download and, a delay Y after it, ten 1 MB downloads one after another, on O1
(7 Mbit/s, deep queue), O2 (40 Mbit/s, deep) and O3 (40 Mbit/s, 80-packet queue), for CUBIC,
CUBIC-3x, NewReno and BBR (every flow runs the algorithm).

The thesis's completion times: L (the long flow), T (the whole experiment: until the last
short flow completes or the long one finishes, whichever is later), SC (short flows competing
with the long one), S (all short flows). rove reads each short transfer's end from the short
flow's delivered bytes (10 ms samples: the end of transfer k is the first sample with k MB
delivered) and its length as the time from the previous one's end plus the 0.1 s think time
(the first from the flow's start; both include the request's one-way delay, 33 ms); a transfer
competes when it ends before the long flow completes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..document import Section, fmt
from ..verdicts import FAILS, HOLDS, NOT_MEASURED, PARTLY, Claim, mean
from .common import combined, pairs_claim
from .runs import flow_row, flow_series
from .static import _runs, _table, _values

SHORT_BYTES = 1_000_000    # "a 1 MB short file"
THINK_S = 0.1              # "(D) Wait 0.1 s"
START = "flows.1.start"


def short_transfers(ts: pd.DataFrame, start_s: float, n: int) -> list[tuple[float, float]]:
    """(end s, length s) of each completed short transfer from the short flow's samples."""
    t = ts["time_s"].to_numpy(float)
    b = ts["bytes_delivered"].to_numpy(float)
    out, prev_end = [], None
    for k in range(1, n + 1):
        idx = np.nonzero(b >= k * SHORT_BYTES)[0]
        if not len(idx):
            break
        end = float(t[idx[0]])
        begin = start_s if prev_end is None else prev_end + THINK_S
        out.append((end, end - begin))
        prev_end = end
    return out


def measure(run_dir: Path, rows: pd.DataFrame) -> dict:
    long_, short = flow_row(rows, "long"), flow_row(rows, "short")
    ts = flow_series(run_dir, "short")
    start = float(short.get("start_s") or 0.0)
    n = int(short.get("transfers_started") or 10)
    transfers = short_transfers(ts, start, max(n, 10))
    long_fct = long_.get("fct_s")
    long_end = (long_.get("start_s") or 0.0) + long_fct if long_fct is not None else np.nan
    comp = [d for e, d in transfers if e <= long_end]
    last = transfers[-1][0] if len(transfers) >= 10 else np.nan
    return {"L": long_fct if long_fct is not None else np.nan,
            "S": float(np.mean([d for _, d in transfers])) if transfers else np.nan,
            "SC": float(np.mean(comp)) if comp else np.nan,
            "T": max(long_end, last) if np.isfinite(long_end) and np.isfinite(last) else np.nan,
            "rtt_long_ms": long_.get("mean_rtt_ms"), "rtt_short_ms": short.get("mean_rtt_ms"),
            "short_done": len(transfers)}


OTHERS = ("cubic", "cubic-3x", "reno")
HALF = 0.5          # O1: BBR's RTT "at least half" below the others'
TWICE = 1.5         # O3: "about 2x faster": the others' long-flow time ≥ 1.5 x BBR's
SIMILAR = 0.10      # O2: "similar completion times": within 10 %


def _pairs(runs, column, lo_hi, case, scale_b=1.0):
    out = []
    for y in sorted(set(runs[START])):
        m = runs[(runs["case"] == case) & (runs[START] == y)]
        for lo, hi in lo_hi:
            out.append((f"Y={y} {lo} < {hi}", _values(m, lo, column),
                        [x * scale_b for x in _values(m, hi, column)]))
    return out


def analyse(ctx) -> Section:
    s = Section("MONROE-like operators: long and short flows (H6)")
    runs = _runs(ctx)
    if not len(runs):
        s.paragraphs.append("No run completed.")
        s.verdict = NOT_MEASURED
        return s
    labels = ctx.labels() or {}
    s.paragraphs.append(
        "Every flow runs the algorithm of the row. O1: 7.2 Mbit/s of transport blocks, 7 MB "
        "queue; O2: 39.2 Mbit/s, 7 MB; O3: 39.2 Mbit/s, 120 KB (80 packets); 69 ms minimum "
        "RTT. L, T, SC, S in seconds (see the module's doc for how the short transfers are "
        "read); RTTs are the flows' mean RTT.")
    s.tables.append(_table(runs, [("L", "L", ".2f"), ("T", "T", ".2f"), ("SC", "SC", ".2f"),
                                  ("S", "S", ".2f"), ("rtt_long_ms", "RTT long, ms", ".0f")],
                           ["case", START], "mean ± sd (seeds)", labels))
    bb = [("bbr", o) for o in OTHERS]
    ob = [(o, "bbr") for o in OTHERS]
    s.claims.append(pairs_claim(
        "O1: BBR induces on average at least half the delay of the other CCAs", "§5.1 #9; H6",
        _pairs(runs, "rtt_long_ms", bb, "o1", HALF), "long flow's mean RTT: BBR's below half "
        "each other's, per Y", holds_at=0.8))
    s.claims.append(pairs_claim("O1: BBR long flows are slower", "§5.1 #9; H6",
                                _pairs(runs, "L", ob, "o1"), "L: each other's below BBR's"))
    s.claims.append(pairs_claim("O1: BBR short flows are faster", "§5.1 #9; H6",
                                _pairs(runs, "S", bb, "o1"), "S: BBR's below each other's"))
    s.claims.append(pairs_claim("O1: with BBR the total experiment is fastest", "§5.1 #9; H6",
                                _pairs(runs, "T", bb, "o1"), "T: BBR's below each other's"))
    s.claims.append(_ratio_claim(runs))
    s.claims.append(pairs_claim("O3: competing short flows get slower with BBR",
                                "§5.1 #10; H6", _pairs(runs, "SC", ob, "o3"),
                                "SC: each other's below BBR's"))
    s.claims.append(_similar_claim(runs))
    s.claims.append(pairs_claim("O2: BBR has the lowest delay", "§2.8 PA2.2 guidance",
                                _pairs(runs, "rtt_long_ms", bb, "o2"),
                                "long flow's mean RTT: BBR's below each other's"))
    s.claims.append(Claim("BBR shows more DUPACKs per retransmission", "§8.3 H6; PA2.2",
                          "rove's time series count retransmissions, not duplicate ACKs",
                          "–", NOT_MEASURED))
    s.verdict = combined(s.claims)
    return s


def _ratio_claim(runs) -> Claim:
    """O3: BBR's long flow about 2x faster: per Y and other algorithm, the other's mean L over
    BBR's ≥ 1.5 holds; every ratio ≥ 1 partly."""
    ratios = []
    for y in sorted(set(runs[START])):
        m = runs[(runs["case"] == "o3") & (runs[START] == y)]
        b = mean(_values(m, "bbr", "L"))
        for o in OTHERS:
            a = mean(_values(m, o, "L"))
            if a is not None and b:
                ratios.append((f"Y={y} {o}", a / b))
    if not ratios:
        verdict = NOT_MEASURED
    elif all(r >= TWICE for _, r in ratios):
        verdict = HOLDS
    elif all(r >= 1 for _, r in ratios):
        verdict = PARTLY
    else:
        verdict = FAILS
    return Claim("O3: BBR downloads the long flow in half the time of the others",
                 "§5.1 #10; H6", "; ".join(f"{k} {fmt(r, '.2f')}" for k, r in ratios) or "no runs",
                 f"the others' mean L over BBR's, per Y: all ≥ {TWICE} holds, all ≥ 1 partly",
                 verdict)


def _similar_claim(runs) -> Claim:
    """O2: CUBIC-3x, NewReno and BBR have similar completion times: per Y, their mean T
    within 10 % of each other."""
    flags, parts = [], []
    for y in sorted(set(runs[START])):
        m = runs[(runs["case"] == "o2") & (runs[START] == y)]
        ts = [mean(_values(m, cc, "T")) for cc in ("cubic-3x", "reno", "bbr")]
        if None in ts:
            continue
        ok = max(ts) / min(ts) <= 1 + SIMILAR
        flags.append(ok)
        parts.append(f"Y={y}: {', '.join(fmt(t, '.2f') for t in ts)}")
    verdict = NOT_MEASURED if not flags else HOLDS if all(flags) else \
        PARTLY if any(flags) else FAILS
    return Claim("O2: CUBIC-3x, NewReno and BBR have similar completion times",
                 "§2.8 PA2.2 guidance", "; ".join(parts) or "no runs",
                 f"per Y, the three mean T within {SIMILAR:.0%} (max/min): all Y holds, some "
                 "partly", verdict)
