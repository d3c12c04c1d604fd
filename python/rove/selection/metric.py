"""The thesis's performance metric (seed-002 §2.5, Eqs. 6.1 and 6.2), per 100 ms sample.

    A = K / Kt                       share of the available capacity reached
    B = Dmin / D                     baseline delay over current delay
    C = (BDP - 1500·R) / BDP         share of the BDP not wasted in retransmissions
    PM = (α·A + β·B + γ·C) / (α + β + γ)

with α = β = γ = 1 for the "performance metric" criterion (Eq. 6.1) and β = 10 for the
delay-sensitive one (Eq. 6.2). [GAP] choices of the thesis's silence, each a keyword argument:
the sample period is 100 ms (§6.1 counts "retransmissions per time slots of 100ms"); BDP is the
current available capacity times the baseline delay, Kt·Dmin (``bdp_bytes`` overrides it); C is
clamped to [0, 1] (it goes negative when more than a BDP is retransmitted); A and B are not
clamped (a sample can exceed the capacity estimate; the thesis does not clamp them either); a
sample with no capacity (Kt = 0) or no delay measured has no PM (``None``), and
:func:`mean_performance_metric` skips such samples and says how many it skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

# Eq. 6.1 and Eq. 6.2's weights (α, β, γ).
WEIGHTS = {"pm": (1.0, 1.0, 1.0), "delay": (1.0, 10.0, 1.0)}
PACKET_BYTES = 1500  # Eq. 6.1's "1500 * R"
SAMPLE_S = 0.1       # [GAP] the thesis's 100 ms slots


def performance_metric(goodput_bps: float, capacity_bps: float, delay_ms: float,
                       min_delay_ms: float, retrans_pkts: float, *, criterion: str = "pm",
                       weights: tuple[float, float, float] | None = None,
                       bdp_bytes: float | None = None, packet_bytes: int = PACKET_BYTES) -> float | None:
    """PM of one sample (Eq. 6.1, or Eq. 6.2 with ``criterion="delay"``).

    ``goodput_bps`` K and ``capacity_bps`` Kt over the sample (a ``SAMPLE_S`` slot),
    ``delay_ms`` D the sample's mean RTT and ``min_delay_ms`` Dmin the baseline,
    ``retrans_pkts`` R the packets retransmitted during the slot. Returns ``None`` for a
    sample that has no capacity or no delay (the thesis leaves it undefined)."""
    alpha, beta, gamma = weights if weights is not None else _weights(criterion)
    if capacity_bps <= 0 or delay_ms <= 0 or min_delay_ms <= 0:
        return None
    a = goodput_bps / capacity_bps
    b = min_delay_ms / delay_ms
    bdp = bdp_bytes if bdp_bytes is not None else capacity_bps / 8 * min_delay_ms / 1e3
    if bdp <= 0:
        return None
    c = min(1.0, max(0.0, (bdp - packet_bytes * retrans_pkts) / bdp))
    return (alpha * a + beta * b + gamma * c) / (alpha + beta + gamma)


def _weights(criterion: str) -> tuple[float, float, float]:
    try:
        return WEIGHTS[criterion]
    except KeyError:
        raise ValueError(f"criterion {criterion!r}: expected one of {', '.join(WEIGHTS)}") from None


@dataclass(frozen=True)
class Sample:
    """One 100 ms slot: goodput K and capacity Kt (bit/s), RTT D, retransmitted packets R."""
    goodput_bps: float
    capacity_bps: float
    delay_ms: float
    retrans_pkts: float = 0.0


@dataclass(frozen=True)
class MeanMetric:
    value: float | None  # mean PM over the samples that have one; None if none has
    samples: int         # samples averaged
    skipped: int         # samples without a PM (no capacity or no delay)


def mean_performance_metric(samples: Iterable[Sample], min_delay_ms: float, *,
                            criterion: str = "pm", **kw) -> MeanMetric:
    """The mean PM over a phase's samples (how Tables 6.3, 6.4, 6.6 and 6.7 report it)."""
    values, skipped = [], 0
    for s in samples:
        pm = performance_metric(s.goodput_bps, s.capacity_bps, s.delay_ms, min_delay_ms,
                                s.retrans_pkts, criterion=criterion, **kw)
        if pm is None:
            skipped += 1
        else:
            values.append(pm)
    mean = sum(values) / len(values) if values else None
    return MeanMetric(mean, len(values), skipped)
