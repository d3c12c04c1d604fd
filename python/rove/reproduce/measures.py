"""Reading measurements out of run directories, and small unit parsers for grid values.

Sweep tables hold each run's whole-run summary; some of the thesis's metrics need the time
series instead (Jain's index over the last 60 s, utilisation per bandwidth step). These helpers
read just the columns they need from a run's ``timeseries.parquet`` / ``queue.parquet``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

__all__ = ["size_bytes", "rate_mbps", "time_ms", "window_goodputs", "queue_series",
           "srtt_samples", "trace_mean_mbps", "trace_rate_cv"]

PACKET_BYTES = 1500       # a Mahimahi delivery opportunity

_NUM_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
_SIZE = {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 1024, "mib": 1024**2, "gib": 1024**3}
_RATE = {"bps": 1e-6, "kbps": 1e-3, "mbps": 1.0, "gbps": 1e3, "kbit": 1e-3, "mbit": 1.0,
         "gbit": 1e3}
_TIME = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3, "min": 6e4}


def _parse(text, units: dict, what: str) -> float:
    m = _NUM_UNIT.match(str(text))
    if not m or m.group(2).lower() not in units:
        raise ValueError(f"not a {what}: {text!r}")
    return float(m.group(1)) * units[m.group(2).lower()]


def size_bytes(text) -> float:
    """``"1.5MB"`` -> 1.5e6 (decimal units, as the scenario format)."""
    return _parse(text, _SIZE, "size")


def rate_mbps(text) -> float:
    """``"500Mbps"`` -> 500.0."""
    return _parse(text, _RATE, "rate")


def time_ms(text) -> float:
    """``"75ms"`` -> 75.0, ``"2s"`` -> 2000.0."""
    return _parse(text, _TIME, "time")


def _trace_stamps(path: Path) -> np.ndarray:
    stamps = np.array([int(x) for x in Path(path).read_text().split() if x.strip()], dtype=float)
    if not len(stamps):
        raise ValueError(f"{path}: empty trace")
    return stamps


def trace_mean_mbps(path: Path) -> tuple[float, float]:
    """(mean rate in Mbit/s, length in s) of a Mahimahi trace: one 1500-byte packet per line."""
    stamps = _trace_stamps(path)
    length_s = max(stamps[-1], 1) / 1000.0
    return len(stamps) * PACKET_BYTES * 8 / length_s / 1e6, length_s


def trace_rate_cv(path: Path, bin_ms: float = 100.0) -> float:
    """How much a Mahimahi trace's rate varies: the coefficient of variation (s.d. / mean) of
    its delivery rate over ``bin_ms`` bins."""
    stamps = _trace_stamps(path)
    n_bins = max(1, int(np.ceil(max(stamps[-1], 1) / bin_ms)))
    counts = np.bincount(np.minimum((stamps // bin_ms).astype(int), n_bins - 1), minlength=n_bins)
    m = counts.mean()
    return float(counts.std() / m) if m > 0 else float("nan")


def window_goodputs(run_dir: Path, window_s: float) -> dict[str, float]:
    """Per flow, the goodput (Mbps) over the last ``window_s`` seconds of the run: in-order bytes
    delivered between the last sample and the last sample at or before ``end - window_s``."""
    t = pq.read_table(Path(run_dir) / "timeseries.parquet",
                      columns=["time_s", "flow", "bytes_delivered"]).to_pandas()
    t["flow"] = t["flow"].astype(str)
    out = {}
    end = float(t["time_s"].max())
    start = end - window_s
    for flow, g in t.groupby("flow", sort=False):
        g = g.sort_values("time_s")
        last = g.iloc[-1]
        before = g[g["time_s"] <= start + 1e-9]
        first = before.iloc[-1] if len(before) else g.iloc[0]
        span = float(last["time_s"] - first["time_s"])
        delivered = float(last["bytes_delivered"]) - float(first["bytes_delivered"])
        out[str(flow)] = delivered * 8 / span / 1e6 if span > 0 else float("nan")
    return out


def srtt_samples(run_dir: Path, flow: str | None = None, subflow: int = -1) -> np.ndarray:
    """A flow's smoothed RTT (ms) at every time-series sample from its first RTT measurement
    on (samples with srtt 0 come before it). Samples are evenly spaced in time (every
    ``sample_interval``, 10 ms by default, on both backends: the kernel's from TCP_INFO), so
    their mean is the time-averaged srtt. ``flow`` None: the first flow; a multipath flow's
    connection row (``subflow`` -1), or with ``subflow`` = i its subflow i's own srtt."""
    t = pq.read_table(Path(run_dir) / "timeseries.parquet",
                      columns=["time_s", "flow", "srtt_ms", "subflow"]).to_pandas()
    t["flow"] = t["flow"].astype(str)
    if flow is None:
        flow = t["flow"].iloc[0] if len(t) else ""
    t = t[(t["flow"] == str(flow)) & (t["subflow"].fillna(-1) == subflow)].sort_values("time_s")
    v = t["srtt_ms"].to_numpy(dtype=float)
    return v[np.isfinite(v) & (v > 0)]


def queue_series(run_dir: Path, link: str) -> pd.DataFrame:
    """One link's samples: ``time_s``, ``backlog_bytes``, ``departed_bytes`` (cumulative), and
    ``sojourn_sum_ms`` / ``sojourn_n`` (the sum and count of the packets' queueing delays since
    the previous sample)."""
    t = pq.read_table(Path(run_dir) / "queue.parquet").to_pandas()
    t = t[t["link"].astype(str) == link].sort_values("time_s").reset_index(drop=True)
    t["sojourn_n"] = t["sojourn_count"].astype(np.int64)
    t["sojourn_sum_ms"] = (t["sojourn_mean_ms"] * t["sojourn_n"]).where(t["sojourn_n"] > 0, 0.0)
    return t[["time_s", "backlog_bytes", "departed_bytes", "sojourn_sum_ms", "sojourn_n"]]
