"""Window arithmetic the thesis uses: the Eq. 6.3 handoff, HyStart's delay threshold in the two
kernels' units, and the window-scaling example (seed-002 §2.7, §3.2(b), §4.2 PA1.1)."""

from __future__ import annotations

import math
from typing import Sequence

HANDOFF_SAMPLES = 7   # "the average CWND and RTT of the last 7 samples" (§2.7)
MIN_CWND = 2          # rove's floor, as the engine's handoff (crates/tcp/src/sender.rs)


def handoff_cwnd(scwnd_pkts: float, sd_ms: float, dmin_ms: float) -> int:
    """Eq. 6.3: the next algorithm's initial window ``CWND = sCWND / (sD / Dmin)``, in packets,
    rounded down and at least 2, exactly as the engine's ``handoff = "delay_scaled"``
    computes it. ``handoff_cwnd(100, 150, 60) == 40`` (the thesis's example)."""
    if sd_ms <= 0 or dmin_ms <= 0 or scwnd_pkts < 0:
        raise ValueError("handoff_cwnd: sCWND must be >= 0 and sD, Dmin > 0")
    return max(MIN_CWND, math.floor(scwnd_pkts * dmin_ms / sd_ms + 1e-9))


def handoff_from_samples(cwnds: Sequence[float], rtts_ms: Sequence[float], dmin_ms: float,
                         samples: int = HANDOFF_SAMPLES) -> int:
    """Eq. 6.3 over the last ``samples`` (cwnd, RTT) pairs: sCWND and sD are their means."""
    if len(cwnds) != len(rtts_ms) or not cwnds:
        raise ValueError("handoff_from_samples: need as many cwnd as RTT samples, at least one")
    n = min(samples, len(cwnds))
    return handoff_cwnd(sum(cwnds[-n:]) / n, sum(rtts_ms[-n:]) / n, dmin_ms)


def hystart_delay_threshold_ms(delay_min_ms: float, kernel: str = "6.x") -> float:
    """HyStart's delay-increase threshold over ``delay_min`` (§3.2(b)): ``clamp(delay_min/8,
    4 ms, 16 ms)``, computed in the kernel's own integer units.

    ``"4.10"``: ``tcp_cubic.c`` keeps delays in ms << 3 (``(rtt_us << 3) / USEC_PER_MSEC``) and
    the threshold is ``clamp(delay_min >> 3, 4U << 3, 16U << 3)`` in the same units;
    ``"6.x"`` (since 5.6): µs, ``clamp(delay_min >> 3, 4000, 16000)``."""
    if kernel == "4.10":
        delay_min = (int(round(delay_min_ms * 1000)) << 3) // 1000  # ms << 3
        return min(max(delay_min >> 3, 4 << 3), 16 << 3) / 8
    if kernel == "6.x":
        delay_min = int(round(delay_min_ms * 1000))  # µs
        return min(max(delay_min >> 3, 4000), 16000) / 1000
    raise ValueError(f"kernel {kernel!r}: expected '4.10' or '6.x'")


def connections_to_fill(rate_bps: float, rtt_s: float, window_bytes: int = 65535) -> int:
    """Parallel connections a path's BDP needs when each is capped at ``window_bytes``
    (Finding 1: no window scaling caps rwnd at 64 KB). 100 Mbit/s at 150 ms: BDP 1,875,000 B,
    29 connections (§4.2 PA1.1)."""
    return math.ceil(bdp_bytes(rate_bps, rtt_s) / window_bytes)


def bdp_bytes(rate_bps: float, rtt_s: float) -> float:
    return rate_bps / 8 * rtt_s
