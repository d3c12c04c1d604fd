"""One run's measurements per mobility phase, as the thesis's chapter 6 tables report them
(seed-002 §2.5, §2.6, §5.2): 100 ms slots of goodput K, available capacity Kt, delay D and
retransmitted packets R, the PM of Eq. 6.1 and the delay-weighted PM of Eq. 6.2 per slot
(:func:`rove.selection.performance_metric`), and their means over each phase of the thesis's
time rule (:func:`rove.selection.thesis_phases`).

Where the numbers come from (rove's choices where the thesis is silent, each a [GAP] of
``docs/selection.md`` or stated here):

- K: the flow's in-order payload bytes (``bytes_delivered``) over the slot;
- Kt: what a saturating datagram flow got from the same cell, seed and UE in a run of its own
  (the fading is drawn from the UE's own stream, so it is the same channel), converted to TCP
  payload: a datagram carries 1472 payload bytes per 1500-byte packet, a TCP segment 1448
  (``CAPACITY_TO_TCP``), so a TCP flow using every transmission opportunity has A = 1;
- D: the mean of the sender's smoothed RTT (``srtt_ms``) over the slot's samples (the
  thesis's "TCP RTT as measured"); Dmin the run's minimum RTT;
- R: segments retransmitted during the slot (``retrans_segs``).

Everything here is plain arithmetic over DataFrames, so the tests pin it with hand-made series.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ...selection import performance_metric, thesis_phases
from ...selection.metric import SAMPLE_S
from ...selection.phases import Phase

__all__ = ["SLOT_S", "CAPACITY_TO_TCP", "slots", "phase_values", "run_values", "read_flow",
           "phases_of_case", "mean_by", "as_tables"]

SLOT_S = SAMPLE_S                  # the thesis's 100 ms slots ([GAP], rove.selection.metric)
TCP_PAYLOAD_BYTES = 1448           # MSS: crates/tcp/src/lib.rs, 1500 bytes on the wire
DATAGRAM_PAYLOAD_BYTES = 1472      # a 1500-byte datagram less IPv4 + UDP (28 B)
CAPACITY_TO_TCP = TCP_PAYLOAD_BYTES / DATAGRAM_PAYLOAD_BYTES
FLOW_COLUMNS = ["time_s", "flow", "bytes_delivered", "srtt_ms", "min_rtt_ms", "retrans_segs",
                "cwnd_pkts", "ssthresh_pkts", "cc"]


def read_flow(run_dir: Path, flow: str, columns: Sequence[str] = FLOW_COLUMNS) -> pd.DataFrame:
    """One flow's time-series rows of a run, in time order (a datagram flow has no TCP
    columns: those it lacks are left out)."""
    path = Path(run_dir) / "timeseries.parquet"
    have = set(pq.read_schema(path).names)
    t = pq.read_table(path, columns=[c for c in columns if c in have]).to_pandas()
    t["flow"] = t["flow"].astype(str)
    return t[t["flow"] == flow].sort_values("time_s").reset_index(drop=True)


def _cumulative_at(times: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """A cumulative counter's value at each instant of ``at``: its last sample at or before it
    (0 before the first sample)."""
    idx = np.searchsorted(times, at + 1e-9, side="right") - 1
    out = np.where(idx >= 0, values[np.clip(idx, 0, None)], 0.0)
    return out.astype(float)


def slots(flow: pd.DataFrame, capacity: pd.DataFrame, end_s: float,
          slot_s: float = SLOT_S) -> pd.DataFrame:
    """The run's slots ``[k·slot_s, (k+1)·slot_s)`` up to ``end_s``: ``start_s``,
    ``goodput_bps`` (K), ``capacity_bps`` (Kt, TCP payload), ``delay_ms`` (D, NaN when no RTT
    was measured in the slot) and ``retrans_pkts`` (R).

    ``flow``: the TCP flow's samples (``time_s``, ``bytes_delivered``, ``srtt_ms``,
    ``retrans_segs``); ``capacity``: the saturating datagram flow's (``time_s``,
    ``bytes_delivered``)."""
    n = int(math.floor(end_s / slot_s + 1e-9))
    bounds = np.arange(n + 1) * slot_s
    t = flow["time_s"].to_numpy(float)
    delivered = _cumulative_at(t, flow["bytes_delivered"].to_numpy(float), bounds)
    retrans = _cumulative_at(t, flow["retrans_segs"].to_numpy(float), bounds)
    tc = capacity["time_s"].to_numpy(float)
    cap = _cumulative_at(tc, capacity["bytes_delivered"].to_numpy(float), bounds)
    srtt = flow["srtt_ms"].to_numpy(float)
    # the samples of slot k are those in (start, end]: a sample at time t covers the 10 ms up to t
    slot_of = np.ceil(t / slot_s - 1e-9).astype(int) - 1
    delay = np.full(n, np.nan)
    ok = (srtt > 0) & (slot_of >= 0) & (slot_of < n)
    if ok.any():
        sums = np.bincount(slot_of[ok], weights=srtt[ok], minlength=n)
        counts = np.bincount(slot_of[ok], minlength=n)
        delay = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return pd.DataFrame({
        "start_s": bounds[:-1],
        "goodput_bps": np.diff(delivered) * 8 / slot_s,
        "capacity_bps": np.diff(cap) * 8 / slot_s * CAPACITY_TO_TCP,
        "delay_ms": delay,
        "retrans_pkts": np.diff(retrans),
    })


def _slot_pm(row, dmin_ms: float, criterion: str) -> float | None:
    if not (row.delay_ms > 0):
        return None
    return performance_metric(row.goodput_bps, row.capacity_bps, row.delay_ms, dmin_ms,
                              row.retrans_pkts, criterion=criterion)


def phase_values(sl: pd.DataFrame, phases: Sequence[Phase], dmin_ms: float) -> pd.DataFrame:
    """Per phase (one row each, in order): ``phase``, ``goodput_mbps`` (the mean of K over its
    slots), ``capacity_mbps`` (of Kt), ``pm`` and ``dpm`` (the means of Eq. 6.1 and Eq. 6.2
    over the slots that have one: a slot without capacity or without an RTT has none),
    ``slots`` and ``skipped`` (slots without a PM)."""
    rows = []
    for ph in phases:
        part = sl[(sl["start_s"] >= ph.start_s - 1e-9) & (sl["start_s"] < ph.end_s - 1e-9)]
        pms = [_slot_pm(r, dmin_ms, "pm") for r in part.itertuples()]
        dpms = [_slot_pm(r, dmin_ms, "delay") for r in part.itertuples()]
        good = [x for x in pms if x is not None]
        dgood = [x for x in dpms if x is not None]
        rows.append({
            "phase": ph.name,
            "goodput_mbps": part["goodput_bps"].mean() / 1e6 if len(part) else math.nan,
            "capacity_mbps": part["capacity_bps"].mean() / 1e6 if len(part) else math.nan,
            "pm": sum(good) / len(good) if good else math.nan,
            "dpm": sum(dgood) / len(dgood) if dgood else math.nan,
            "slots": len(part),
            "skipped": len(part) - len(good),
        })
    return pd.DataFrame(rows)


def phases_of_case(direction: str, speed_kmh: int, duration_s: float) -> list[Phase]:
    """The thesis's phases of a use case (direction in the thesis's words) over a run of
    ``duration_s`` seconds, plus the whole run as the phase ``"run"``."""
    return [*thesis_phases(direction, speed_kmh, duration_s), Phase("run", 0.0, duration_s)]


def run_values(run_dir: Path, capacity_dir: Path, flow: str, phases: Sequence[Phase],
               capacity_flow: str | None = None) -> pd.DataFrame:
    """:func:`phase_values` of one run directory, its capacity from ``capacity_dir`` (the
    saturating run of the same point), Dmin the run's minimum RTT."""
    f = read_flow(run_dir, flow)
    c = read_flow(capacity_dir, capacity_flow or flow, ["time_s", "flow", "bytes_delivered"])
    end = max(p.end_s for p in phases)
    mins = f["min_rtt_ms"].to_numpy(float)
    mins = mins[mins > 0]
    dmin = float(mins.min()) if len(mins) else math.nan
    out = phase_values(slots(f, c, end), phases, dmin)
    out["dmin_ms"] = dmin
    return out


def mean_by(frame: pd.DataFrame, keys: Sequence[str], values: Sequence[str]) -> pd.DataFrame:
    """The mean over seeds of ``values`` per ``keys``."""
    return frame.groupby(list(keys), sort=False)[list(values)].mean().reset_index()


def as_tables(means: pd.DataFrame, value: str, ccs: Sequence[str],
              use_cases: Sequence[tuple[str, int]]) -> dict[tuple[str, int], dict[str, tuple]]:
    """``{(direction, speed): {cc: (value per phase)}}`` from per-phase means (one latency):
    the shape of :data:`rove.selection.tables.PHASE_TABLES`' tables. A use case missing a
    value for any algorithm or phase is left out."""
    from ...selection import phases_of

    out: dict = {}
    for direction, speed in use_cases:
        names = phases_of(direction, speed)
        row: dict[str, tuple] = {}
        for cc in ccs:
            m = means[(means["direction"] == direction) & (means["speed"] == speed)
                      & (means["cc"] == cc)]
            vals = []
            for ph in names:
                v = m.loc[m["phase"] == ph, value]
                vals.append(float(v.iloc[0]) if len(v) and np.isfinite(v.iloc[0]) else None)
            if any(v is None for v in vals):
                row = {}
                break
            row[cc] = tuple(vals)
        if row:
            out[(direction, speed)] = row
    return out

