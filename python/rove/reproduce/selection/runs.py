"""Per-run records of a sweep-run experiment: one row per (series, point) with the run's grid
values and whatever a measuring function reads from its directory (summary rows and time
series), so that the analyses read one small table (``ctx.data["runs"]``) and the tests can
hand-make it."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..study import Context, run_parts
from .phases import read_flow

__all__ = ["run_with_records", "records", "window_goodput_mbps", "slow_start_exit",
           "mean_srtt_ms"]

KEYS = ("series", "point", "case", "seed")


def records(ctx: Context, measure: Callable[[Path, pd.DataFrame], dict]) -> pd.DataFrame:
    """One row per run of ``ctx``: ``series``, ``point``, ``case``, ``seed``, the grid values
    (the sweep table's dotted columns) and ``measure(run_dir, that run's summary rows)``."""
    out = []
    for r in ctx.runs:
        if r.table is None or not len(r.table):
            continue
        for point, g in r.table.groupby("point", sort=False):
            first = g.iloc[0]
            row = {"series": r.series.key, "point": point,
                   "case": first["case"] if "case" in g.columns else "default",
                   "seed": int(first["seed"])}
            row.update({c: first[c] for c in g.columns if "." in c})
            row.update(measure(r.run_dir(point), g))
            out.append(row)
    return pd.DataFrame(out)


def run_with_records(sweeps: Path, measure: Callable[[Path, pd.DataFrame], dict]):
    """An experiment's ``run``: its parts as usual, then :func:`records` into
    ``ctx.data["runs"]``."""

    def run(exp, out, quick, jobs, log, options) -> Context:
        ctx = run_parts(sweeps, exp, out, quick, jobs, log, options)
        ctx.data = {"runs": records(ctx, measure)}
        return ctx

    return run


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
