"""The summary metrics computed in Python, once: what the kernel backend's converter, the
studies and `rove compare` share. They follow the simulator's summary
(crates/world/src/summary.rs), which computes the same quantities in Rust for its own runs.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

__all__ = ["percentile", "jain_index"]


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
