"""Per-run records of a sweep-run experiment (:func:`rove.reproduce.study.records`: one row
per (series, point) with the run's grid values and whatever a measuring function reads from its
directory), and the measures the selection study's records read from a run's time series."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..study import records, run_with_records  # noqa: F401 (this module's API)
from .phases import read_flow

__all__ = ["run_with_records", "records", "window_goodput_mbps", "slow_start_exit",
           "mean_srtt_ms"]

KEYS = ("series", "point", "case", "seed")


def flow_row(rows: pd.DataFrame, flow: str) -> dict:
    m = rows[rows["flow"].astype(str) == flow]
    return m.iloc[0].to_dict() if len(m) else {}


def window_goodput_mbps(ts: pd.DataFrame, start_s: float, end_s: float) -> float:
    """A flow's goodput over ``[start_s, end_s]`` from its cumulative ``bytes_delivered``
    (the last sample at or before each end)."""
    t = ts["time_s"].to_numpy(float)
    b = ts["bytes_delivered"].to_numpy(float)

    def at(x):
        i = np.searchsorted(t, x + 1e-9, side="right") - 1
        return b[i] if i >= 0 else 0.0

    return (at(end_s) - at(start_s)) * 8 / (end_s - start_s) / 1e6


def mean_srtt_ms(ts: pd.DataFrame, start_s: float, end_s: float) -> float:
    m = ts[(ts["time_s"] > start_s) & (ts["time_s"] <= end_s + 1e-9) & (ts["srtt_ms"] > 0)]
    return float(m["srtt_ms"].mean()) if len(m) else float("nan")


def slow_start_exit(ts: pd.DataFrame) -> tuple[float, float]:
    """(time s, cwnd) where slow start ended: the first sample whose ssthresh differs from the
    initial one, and the largest cwnd before it (HyStart sets ssthresh = cwnd there; a loss
    halves it). (NaN, NaN) when slow start never ended."""
    s = ts["ssthresh_pkts"].to_numpy(float)
    if not len(s):
        return float("nan"), float("nan")
    changed = np.nonzero(s != s[0])[0]
    if not len(changed):
        return float("nan"), float("nan")
    i = int(changed[0])
    cw = ts["cwnd_pkts"].to_numpy(float)[: i + 1]
    return float(ts["time_s"].iloc[i]), float(cw.max())


def flow_series(run_dir: Path, flow: str) -> pd.DataFrame:
    return read_flow(run_dir, flow)
