"""The summary metrics computed in Python, once: what the kernel backend's converter, the
studies and `rove compare` share. They follow the simulator's summary
(crates/world/src/summary.rs), which computes the same quantities in Rust for its own runs.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

__all__ = ["percentile", "jain_index", "window_utilisation", "empirical_cdf", "share_at_least",
           "share_below", "StepCapacity", "SampledCapacity"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank ``q``-quantile (the smallest value with at least ``q`` of the values at
    or below it), as the simulator's summary; ``None`` for no values."""
    if len(values) == 0:
        return None
    v = np.sort(np.asarray(values, dtype=float))
    rank = min(max(math.ceil(q * len(v)), 1), len(v)) - 1
    return float(v[rank])


def jain_index(values: Iterable[float]) -> float | None:
    """Jain's fairness index ``(sum x)^2 / (n * sum x^2)``; for two flows the thesis's
    ``F = (T1 + T2)^2 / (2 (T1^2 + T2^2))``. ``None`` for no values or when all are zero."""
    xs = [float(v) for v in values]
    if not xs:
        return None
    sq = sum(x * x for x in xs)
    if sq == 0.0:
        return None
    return sum(xs) ** 2 / (len(xs) * sq)


# --------------------------------------------------------------------------------------------
# Link utilisation in fixed windows (seed 003: "link utilisation = application goodput ÷
# capacity in fixed windows (for example 100 ms), and its CDF", research/seed-003.md §8.2 B)


class StepCapacity:
    """A link's capacity as a piecewise-constant rate (bytes per second) that repeats: rates
    ``rates_Bps[i]`` for ``period_s`` each, in turn, cycling (a scenario's ``rate_cycle``); a
    fixed-rate link is one step. :meth:`bytes_between` integrates it exactly."""

    def __init__(self, rates_Bps: Sequence[float], period_s: float = math.inf):
        if not rates_Bps or any(r < 0 for r in rates_Bps):
            raise ValueError(f"rates_Bps: expected rates >= 0, got {list(rates_Bps)!r}")
        if len(rates_Bps) > 1 and not (period_s > 0 and math.isfinite(period_s)):
            raise ValueError(f"period_s: expected a finite time > 0 for {len(rates_Bps)} steps, "
                             f"got {period_s!r}")
        self.rates = [float(r) for r in rates_Bps]
        self.period = float(period_s)

    @classmethod
    def of_link(cls, link: dict) -> "StepCapacity":
        """The capacity of a scenario's link table (``rate = "3Mbps"``, or ``rate_cycle = {
        period, rates }``, which steps through ``rates`` for ``period`` each and repeats).
        Other serializers (traces, schedules, radio cells) are not piecewise-constant cycles:
        a ValueError names the keys accepted."""
        from .reproduce.measures import rate_mbps, time_ms

        if "rate" in link:
            return cls([rate_mbps(link["rate"]) * 1e6 / 8])
        if "rate_cycle" in link:
            c = link["rate_cycle"]
            return cls([rate_mbps(r) * 1e6 / 8 for r in c["rates"]], time_ms(c["period"]) / 1e3)
        raise ValueError(f"link {sorted(link)}: a capacity needs `rate` or `rate_cycle` "
                         f"(accepted: rate, rate_cycle)")

    def _cumulative(self, t: float) -> float:
        """Bytes the link could carry in [0, t]."""
        if len(self.rates) == 1:
            return self.rates[0] * t
        n = len(self.rates)
        cycles, rest = divmod(t, n * self.period)
        total = cycles * sum(r * self.period for r in self.rates)
        k = 0
        while rest > 0:
            d = min(rest, self.period)
            total += self.rates[k % n] * d
            rest -= d
            k += 1
        return total

    def bytes_between(self, t0: float, t1: float) -> float:
        """Bytes the link could carry in [t0, t1]."""
        return self._cumulative(t1) - self._cumulative(t0)


class SampledCapacity:
    """A link's capacity as recorded by a run: its cumulative ``capacity_bytes`` (queue.parquet)
    at each sample time, from 0 bytes at time 0. :meth:`bytes_between` interpolates linearly
    between samples, which is exact when the rate changes only at sample times (a scenario's
    ``rate_cycle`` of whole seconds sampled every 100 ms)."""

    def __init__(self, time_s: Sequence[float], capacity_bytes: Sequence[float]):
        t = np.asarray(time_s, dtype=float)
        c = np.asarray(capacity_bytes, dtype=float)
        if t.shape != c.shape or t.size == 0 or np.any(np.diff(t) <= 0):
            raise ValueError("time_s and capacity_bytes: expected equal lengths, at least one "
                             "sample, increasing times")
        self.t = np.concatenate(([0.0], t)) if t[0] > 0 else t
        self.c = np.concatenate(([0.0], c)) if t[0] > 0 else c

    def bytes_between(self, t0: float, t1: float) -> float:
        """Bytes the link could carry in [t0, t1] (t0, t1 within the samples)."""
        return float(np.interp(t1, self.t, self.c) - np.interp(t0, self.t, self.c))


def window_utilisation(time_s: Sequence[float], cumulative_bytes: Sequence[float],
                       capacity: StepCapacity, window_s: float = 0.1) -> np.ndarray:
    """The utilisation of each window of ``window_s``: the bytes counted in it (the difference
    of ``cumulative_bytes``, a counter sampled at ``time_s``: a link's departed bytes, or a
    flow's delivered bytes for seed 003's "application goodput ÷ capacity") over the bytes the
    link could carry in it. Windows open at the first sample and close at the first sample at
    least ``window_s`` later (with samples every 10 ms, every tenth); a window in which the
    link could carry nothing is left out."""
    t = np.asarray(time_s, dtype=float)
    b = np.asarray(cumulative_bytes, dtype=float)
    if t.shape != b.shape:
        raise ValueError(f"time_s and cumulative_bytes differ in length ({t.size}, {b.size})")
    if not window_s > 0:
        raise ValueError(f"window_s: expected a time > 0, got {window_s!r}")
    out = []
    if t.size < 2:
        return np.asarray(out)
    i = 0
    for j in range(1, t.size):
        if t[j] - t[i] >= window_s - 1e-9:
            cap = capacity.bytes_between(t[i], t[j])
            if cap > 0:
                out.append((b[j] - b[i]) / cap)
            i = j
    return np.asarray(out)


def empirical_cdf(values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The empirical CDF of ``values``: the values sorted and, for each, the share of values at
    or below it (i/n for the i-th of n, from 1)."""
    v = np.sort(np.asarray(values, dtype=float))
    return v, np.arange(1, v.size + 1) / v.size if v.size else np.asarray([])


def share_at_least(values: Sequence[float], level: float) -> float | None:
    """The share of ``values`` at or above ``level`` (``None`` for no values): e.g. the share of
    100-ms windows whose utilisation is at least 0.9 (seed 003 Ch. 4's "near-max utilisation
    more than 80 % of the time")."""
    v = np.asarray(values, dtype=float)
    return float(np.mean(v >= level)) if v.size else None


def share_below(values: Sequence[float], level: float) -> float | None:
    """The share of ``values`` strictly below ``level`` (``None`` for no values): e.g. the
    share of WiFi RTT samples below 2·d_thr^net (seed 003 Fig. 2.3)."""
    v = np.asarray(values, dtype=float)
    return float(np.mean(v < level)) if v.size else None
