"""Seed 003's delay models of multipath TCP (Park, "Multi-path TCP extension for multimedia QoS
in wireless networks", SNU PhD 2016, Ch. 2 and Ch. 3), as pure functions.

Equation numbers are the dissertation's; the reader's summary is
``/work/shared/research/seed-003.md`` ("the summary" below). Functions take scalars or
per-subflow sequences and return floats or numpy arrays.

Units. The formulas mix windows with ``(M_s - 1)`` hops and rates with ``1/d``, so, as the
summary's section 1 says, windows are in packets (MSS), rates in packets per second and times in
seconds wherever a formula mixes them. Functions whose formula is homogeneous (3.2, 3.5, 3.9,
3.10's network term) accept any consistent unit; the send-buffer terms (2.1, 2.16, 3.1) need
packets per second to give seconds. :func:`mbps_to_pps` converts, with the MSS of the case
(1440 B in the Ch. 3 testbed, summary section 1).

Chapter 2 (MPTCP-TSC, sender side):

* (2.1) :func:`send_buffer_delay_mm1`; (2.2) :func:`rtt_closed_queue`; (2.3)
  :func:`window_limited_rate`; (2.4) :func:`network_delay_bound`; (2.5)
  :func:`reordering_delay`; (2.6)/(2.7) :func:`loss_recovery_delay`; (2.8)/(2.9)
  :func:`end_to_end_delay_bound`.
* (2.12) :func:`estimate_app_rate`; (2.13) :func:`estimate_capacity`.
* (2.14)-(2.17) :func:`tsc_allocate` (with (2.15) :func:`tsc_rate_bound` and (2.16)
  :func:`tsc_total_rate`).

Chapter 3 (threshold control and R-TSC):

* (3.1) :func:`kingman_send_buffer_delay`; (3.2) :func:`network_delay`; (3.3)
  :func:`reordering_delay_bound`; (3.4) :func:`application_delay_bound`; (3.5)
  :func:`rtt_time_varying` (and :func:`base_rtt`, T^p = W^BDP/c).
* (3.6)-(3.9) :func:`reno_rate` (single Reno flow over a DropTail buffer).
* (3.13)-(3.17) :func:`lia_cycle_rate` (one subflow's cycle) and :func:`lia_rates` (the
  summary's Gauss-Seidel fixed point over the subflows).
* (3.10) :func:`minimize_delay` (water-filling on the common network delay; SLSQP fallback).
* (3.20) :func:`search_thresholds` (exhaustive search of W-bar^Loss in [W^BDP, 2 W^BDP]).

Differences from the dissertation, and choices where it is silent ([GAP], each a keyword
parameter whose default is given here):

* (2.3)'s middle term is a typo (summary section 2.2); the right-hand side is used, and
  :func:`network_delay_bound` uses (2.4) = RTT'/2 with RTT' = K_s/(c_s - x_s), K_s = M_s - 1 +
  c_s RTT_s^min, which eliminates w from (2.2)-(2.3).
* [GAP] ``hops`` (M_s): the dissertation's model check used M_s = 5 (summary 2.2); its
  simulations do not say. Default 5.
* [GAP] ``p_loss`` in (2.6)-(2.9): the dissertation has no loss model. It is an input, default 0.
* Infeasible operating points (sum rate <= f, or x_s >= c_s) have unbounded expected delay:
  the delay functions return ``inf`` there rather than a negative number.
* (2.13) is undefined without a queue (RTT = RTT^min). [GAP] ``min_queue_delay`` (default 0 s):
  when RTT - RTT^min <= it, :func:`estimate_capacity` keeps ``previous`` (default ``inf``, "c
  large"), as the summary's note suggests.
* (2.14)-(2.17): x-bar from (2.15) can be negative on a slow path; x_s >= 0 of (2.11) clamps
  it at 0 before x^min applies. [GAP] ``x_min`` (default 0 pkt/s, unspecified in the
  dissertation). [GAP] ``min_rate_for_unassigned`` (default True): the printed step 4 gives the
  subflows left once T <= 0 rate 0, while (2.14) bounds every subflow below by x^min (which
  exists to keep the RTT measured); the default follows (2.14). With x_min = 0 both agree.
  x^cw is cwnd/RTT with the measured RTT (the summary's pseudocode). d_thr^send defaults to
  the dissertation's 100 ms; [GAP] ``d_req`` (default None: unchecked) checks (2.11)'s
  d_thr^net + d_thr^send <= d_req when given. Ties in cost go to the
  lower subflow index.
* (3.1): [GAP] ``ca2`` (C_a^2), default 1 (exponential inter-arrivals; the dissertation's
  Table 3.1 shows about 1 after averaging over 10 packets, and the summary's worked vectors
  use 1).
* (3.9) is the continuous limit of (3.6)-(3.8) (the "+1" of the discrete sum in (3.8) is
  dropped, as the summary's note does). For general beta the same derivation gives
  x = c (1 - beta^2) / (1 - 2 beta rho + rho^2) for beta <= rho <= 1, and c for rho < beta;
  beta = 1/2 gives (3.9) exactly.
* (3.10): the max over subflows runs over subflows with x_r > 0 (a subflow that carries nothing
  delays nothing; the dissertation: "all the subflows with non-zero x_r have the same network
  delay"). The exact solver is the summary's water-filling on the common delay D; the
  dissertation's "gradient method" is kept as ``method="slsqp"`` on the epigraph form.
* (3.13)-(3.19): (3.18)-(3.19) as printed give windows, not rates, and write W^Loss/2 for
  beta W^Loss (summary 3.6); the summary's implementable form is used: a cycle from beta W^Loss
  to W^Loss, phase 1 (w < W^BDP, RTT = T^p, dw/dt = alpha_1/T^p, rate w/T^p), phase 2 (w >
  W^BDP, RTT = w/c, dw/dt = alpha_2 c/w, rate c), alpha capped at 1 (LIA increases at most as
  Reno, min(a/w_tot, 1/w_r)), the cycle's mean rate by numerical integration over w.
  [GAP] ``steps`` (default 2000 points per phase), ``tol`` (default 1e-9 relative),
  ``max_iter`` (default 200). [GAP] ``mean_rtt``: T-hat_b^R, the long-run mean RTT, is
  max(T^p, (1+beta)/2 W^Loss / c) by default (``"window"``, the summary's estimate);
  ``"cycle"`` uses the time-average RTT over the modelled cycle instead. The dominant subflow b
  = argmax x_i/T_i is recomputed at every Gauss-Seidel sweep (the dissertation assumes it
  fixed). With one subflow the model is Reno's: alpha = 1 in both phases.
* (3.20): [GAP] ``eps`` (unspecified): default 1 % of each subflow's capacity. [GAP]
  ``grid_points`` per subflow (default 21, i.e. steps of 5 % of W^BDP). The search is the
  dissertation's sequential exhaustive search over the product of the grids, stopping at the
  first point that meets (3.20) for every subflow; when none does, it returns the point with
  the smallest largest error and ``found = False``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np
from scipy import optimize

ArrayLike = Union[float, Sequence[float], np.ndarray]

__all__ = [
    "DEFAULT_HOPS",
    "DelayOptimum",
    "LiaRates",
    "ThresholdSearch",
    "application_delay_bound",
    "base_rtt",
    "end_to_end_delay_bound",
    "estimate_app_rate",
    "estimate_capacity",
    "kingman_send_buffer_delay",
    "lia_cycle_rate",
    "lia_rates",
    "loss_recovery_delay",
    "mbps_to_pps",
    "minimize_delay",
    "network_delay",
    "network_delay_bound",
    "path_constant",
    "pps_to_mbps",
    "reno_rate",
    "reordering_delay",
    "reordering_delay_bound",
    "rtt_closed_queue",
    "rtt_time_varying",
    "search_thresholds",
    "send_buffer_delay_mm1",
    "tsc_allocate",
    "tsc_rate_bound",
    "tsc_total_rate",
    "window_limited_rate",
]

# M_s: hops on a path; the dissertation's WiFi/LTE model check used M_s = 5 (Section 2.3,
# summary section 2.2). [GAP] for its simulations.
DEFAULT_HOPS = 5
# numpy >= 2 names it trapezoid; numpy 1.x trapz.
_trapezoid = getattr(np, "trapezoid", None) or np.trapz

# LIA and Reno halve the window on a loss (RFC 6356 section 3; dissertation Section 3.3.2).
RENO_BETA = 0.5


# ----------------------------------------------------------------------------------------------
# Helpers


def _vec(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as a 1-D float array; a one-line ValueError naming ``name`` otherwise."""
    try:
        arr = np.atleast_1d(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number or a sequence of numbers, got {value!r}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a number or a 1-D sequence, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite numbers, got {value!r}")
    return arr


def _positive(name: str, value: ArrayLike) -> np.ndarray:
    arr = _vec(name, value)
    if np.any(arr <= 0):
        raise ValueError(f"{name}: expected values > 0, got {value!r}")
    return arr


def _nonneg(name: str, value: ArrayLike) -> np.ndarray:
    arr = _vec(name, value)
    if np.any(arr < 0):
        raise ValueError(f"{name}: expected values >= 0, got {value!r}")
    return arr


def _same_length(**arrays: np.ndarray) -> int:
    """Broadcast length of per-subflow arrays (each of length n or 1)."""
    n = max(len(a) for a in arrays.values())
    for name, a in arrays.items():
        if len(a) not in (1, n):
            raise ValueError(f"{name}: expected one value per subflow ({n}) or a single value, got {len(a)}")
    return n


def _scalar_if_one(arr: np.ndarray):
    return float(arr[0]) if arr.shape == (1,) else arr


def mbps_to_pps(rate_mbps: ArrayLike, mss_bytes: float = 1440.0):
    """Mbit/s to packets/s of ``mss_bytes`` (default 1440 B: the Ch. 3 testbed, summary 1)."""
    return _scalar_if_one(_vec("rate_mbps", rate_mbps) * 1e6 / (8.0 * mss_bytes))


def pps_to_mbps(rate_pps: ArrayLike, mss_bytes: float = 1440.0):
    """Packets/s of ``mss_bytes`` to Mbit/s."""
    return _scalar_if_one(_vec("rate_pps", rate_pps) * 8.0 * mss_bytes / 1e6)


# ----------------------------------------------------------------------------------------------
# Chapter 2: delay terms (2.1)-(2.9)


def send_buffer_delay_mm1(x: ArrayLike, f: float) -> float:
    """(2.1) E[d^send] = 1/(sum_s x_s - f): the M/M/1 send buffer (arrivals f, service sum x).

    Rates in packets/s, delay in s; ``inf`` when sum x <= f (the queue is unstable).
    """
    total = float(np.sum(_nonneg("x", x)))
    f = float(_nonneg("f", f)[0])
    return math.inf if total <= f else 1.0 / (total - f)


def path_constant(c: ArrayLike, rtt_min: ArrayLike, *, hops: ArrayLike = DEFAULT_HOPS):
    """K_s = M_s - 1 + c_s RTT_s^min (packets), the numerator of (2.4), (2.7), (2.9), (2.15)."""
    c, rtt_min, m = _positive("c", c), _nonneg("rtt_min", rtt_min), _positive("hops", hops)
    _same_length(c=c, rtt_min=rtt_min, hops=m)
    return _scalar_if_one(m - 1.0 + c * rtt_min)


def rtt_closed_queue(w: ArrayLike, c: ArrayLike, rtt_min: ArrayLike, *, hops: ArrayLike = DEFAULT_HOPS):
    """(2.2) E[RTT'_s] = RTT_s^min + (w_s + M_s - 1)/c_s (Schwartz's closed queueing network).

    ``w`` in packets, ``c`` in packets/s, times in s.
    """
    w, c, rtt_min, m = _nonneg("w", w), _positive("c", c), _nonneg("rtt_min", rtt_min), _positive("hops", hops)
    _same_length(w=w, c=c, rtt_min=rtt_min, hops=m)
    return _scalar_if_one(rtt_min + (w + m - 1.0) / c)


def window_limited_rate(w: ArrayLike, c: ArrayLike, rtt_min: ArrayLike, *, hops: ArrayLike = DEFAULT_HOPS):
    """(2.3) x_s^cw(w_s) = w_s c_s / (w_s + M_s - 1 + c_s RTT_s^min) = w_s / E[RTT'_s].

    (The printed middle term c_s/E[RTT_s^min] is a typo; summary section 2.2.)
    """
    w, c, rtt_min, m = _nonneg("w", w), _positive("c", c), _nonneg("rtt_min", rtt_min), _positive("hops", hops)
    _same_length(w=w, c=c, rtt_min=rtt_min, hops=m)
    return _scalar_if_one(w * c / (w + m - 1.0 + c * rtt_min))


def network_delay_bound(x: ArrayLike, c: ArrayLike, rtt_min: ArrayLike, *, hops: ArrayLike = DEFAULT_HOPS):
    """(2.4) E[d_s^net(x_s)] <= (M_s - 1 + c_s RTT_s^min) / (2 (c_s - x_s)): half of RTT' at
    x_s = x_s^cw. ``inf`` where x_s >= c_s.
    """
    x, c, rtt_min, m = _nonneg("x", x), _positive("c", c), _nonneg("rtt_min", rtt_min), _positive("hops", hops)
    _same_length(x=x, c=c, rtt_min=rtt_min, hops=m)
    k = m - 1.0 + c * rtt_min
    with np.errstate(divide="ignore"):
        d = np.where(x < c, k / (2.0 * np.maximum(c - x, 0.0)), math.inf)
    return _scalar_if_one(d)


def reordering_delay(x: ArrayLike, c: ArrayLike, rtt_min: ArrayLike, *, hops: ArrayLike = DEFAULT_HOPS) -> np.ndarray:
    """(2.5) E[d_s^re] = max_i E[d_i^net(x_i)] - E[d_s^net(x_s)], per subflow."""
    d = np.atleast_1d(network_delay_bound(x, c, rtt_min, hops=hops))
    worst = np.max(d)
    if math.isinf(worst):
        return np.where(np.isinf(d), 0.0, math.inf)
    return worst - d


def loss_recovery_delay(
    x: ArrayLike, c: ArrayLike, rtt_min: ArrayLike, *, p_loss: ArrayLike = 0.0, hops: ArrayLike = DEFAULT_HOPS
) -> float:
    """(2.6)-(2.7) E[d^loss] = sum_s RTT_s p_s^loss with RTT_s = K_s/(c_s - x_s): a loss costs one
    RTT (Fast Retransmit). [GAP] ``p_loss``: the dissertation has no loss model; default 0.
    """
    p = _nonneg("p_loss", p_loss)
    if np.any(p > 1):
        raise ValueError(f"p_loss: expected probabilities in [0, 1], got {p_loss!r}")
    rtt = 2.0 * np.atleast_1d(network_delay_bound(x, c, rtt_min, hops=hops))
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, rtt * p, 0.0)  # a lossless path adds nothing, even if unstable
    return float(np.sum(terms))


def end_to_end_delay_bound(
    x: ArrayLike,
    f: float,
    c: ArrayLike,
    rtt_min: ArrayLike,
    *,
    p_loss: ArrayLike = 0.0,
    hops: ArrayLike = DEFAULT_HOPS,
) -> float:
    """(2.8)-(2.9) E[d^e-e] <= 1/(sum x - f) + max_s K_s/(2(c_s - x_s)) + sum_s K_s p_s/(c_s - x_s).

    The max runs over subflows with x_s > 0 (an unused subflow delays nothing); ``inf`` when the
    send buffer or a used subflow is unstable.
    """
    xv = _nonneg("x", x)
    d_net = np.atleast_1d(network_delay_bound(xv, c, rtt_min, hops=hops))
    used = np.broadcast_to(xv, d_net.shape) > 0
    worst = float(np.max(d_net[used])) if np.any(used) else 0.0
    return send_buffer_delay_mm1(xv, f) + worst + loss_recovery_delay(xv, c, rtt_min, p_loss=p_loss, hops=hops)


# ----------------------------------------------------------------------------------------------
# Chapter 2: estimators (2.12)-(2.13)


def estimate_app_rate(backlog_now: float, backlog_prev: float, dt: float, x: ArrayLike) -> float:
    """(2.12) f_k = (b_{k+1} - b_k)/dt + sum_s x_{s,k}: the application's rate over the last slot,
    from the send-buffer backlog (packets) and the rates the subflows drained it at (packets/s).
    """
    dt = float(_positive("dt", dt)[0])
    return (float(backlog_now) - float(backlog_prev)) / dt + float(np.sum(_nonneg("x", x)))


def estimate_capacity(
    x: ArrayLike,
    rtt: ArrayLike,
    rtt_min: ArrayLike,
    *,
    hops: ArrayLike = DEFAULT_HOPS,
    previous: ArrayLike = math.inf,
    min_queue_delay: float = 0.0,
):
    """(2.13) c_{s,k} = (x_{s,k} RTT_{s,k} + M_s - 1) / (RTT_{s,k} - RTT_s^min): the capacity that
    makes (2.4)'s RTT' = K_s/(c_s - x_s) equal the measured RTT.

    Undefined without a queue: where RTT - RTT^min <= ``min_queue_delay`` ([GAP], default 0 s)
    the ``previous`` estimate is kept ([GAP], default ``inf``: "treat c as large").
    """
    x, rtt, rtt_min, m = _nonneg("x", x), _positive("rtt", rtt), _nonneg("rtt_min", rtt_min), _positive("hops", hops)
    prev = np.atleast_1d(np.asarray(previous, dtype=float))  # may be inf ("c large")
    if prev.ndim != 1 or np.any(np.isnan(prev)) or np.any(prev <= 0):
        raise ValueError(f"previous: expected capacities > 0 (inf allowed), got {previous!r}")
    n = _same_length(x=x, rtt=rtt, rtt_min=rtt_min, hops=m, previous=prev)
    queue = np.broadcast_to(rtt - rtt_min, (n,))
    with np.errstate(divide="ignore", invalid="ignore"):
        est = (x * rtt + m - 1.0) / (rtt - rtt_min)
    out = np.where(queue > min_queue_delay, np.broadcast_to(est, (n,)), np.broadcast_to(prev, (n,)))
    return _scalar_if_one(out.astype(float))


# ----------------------------------------------------------------------------------------------
# Chapter 2: the TSC allocator (2.14)-(2.17)


def tsc_rate_bound(c_hat: ArrayLike, rtt_min: ArrayLike, d_net_thr: float, *, hops: ArrayLike = DEFAULT_HOPS):
    """(2.15) x-bar_s = c_s - (M_s - 1 + c_s RTT_s^min) / (2 d_thr^net): the largest rate whose
    (2.4) network delay is d_thr^net. May be negative (the path cannot meet the threshold).
    """
    c, rtt_min, m = _positive("c_hat", c_hat), _nonneg("rtt_min", rtt_min), _positive("hops", hops)
    d = float(_positive("d_net_thr", d_net_thr)[0])
    _same_length(c_hat=c, rtt_min=rtt_min, hops=m)
    return _scalar_if_one(c - (m - 1.0 + c * rtt_min) / (2.0 * d))


def tsc_total_rate(f_hat: float, d_send_thr: float) -> float:
    """(2.16) T = f + 1/d_thr^send: the smallest total rate whose (2.1) delay is d_thr^send
    (packets/s; d_thr^send = 100 ms adds 10 pkt/s)."""
    return float(_nonneg("f_hat", f_hat)[0]) + 1.0 / float(_positive("d_send_thr", d_send_thr)[0])


def tsc_allocate(
    f_hat: float,
    c_hat: ArrayLike,
    rtt: ArrayLike,
    rtt_min: ArrayLike,
    cost: ArrayLike,
    cwnd: ArrayLike,
    slow_start: Union[bool, Sequence[bool]],
    d_net_thr: float,
    *,
    d_send_thr: float = 0.1,
    x_min: ArrayLike = 0.0,
    hops: ArrayLike = DEFAULT_HOPS,
    min_rate_for_unassigned: bool = True,
    d_req: float = None,
) -> np.ndarray:
    """MPTCP-TSC's per-slot greedy split (2.14)-(2.17), cheapest subflow first.

    ``f_hat`` (2.12) and ``c_hat`` (2.13) in packets/s, ``rtt``/``rtt_min`` in s, ``cwnd`` in
    packets, ``cost`` a_s per unit rate. Returns x_{s,k} in packets/s:

    1. x-bar_s from (2.15); x^cw_s = cwnd_s / RTT_s.
    2. T = f + 1/d_thr^send (2.16); d_thr^send defaults to the dissertation's 100 ms.
    3. For subflows by increasing a_s while T > 0: x_s = min(T, x^cw_s) in slow start, else
       min(x-bar_s, T, x^cw_s) (2.17), never below 0 (2.11) nor below x^min (2.14); T -= x_s.
    4. Subflows left when T <= 0 get x^min ([GAP] ``min_rate_for_unassigned``, default True,
       per (2.14)) or 0 (the printed step 4).

    ``d_req`` (optional; the dissertation does not give the one it used) checks (2.11)'s
    d_thr^net + d_thr^send <= d_req.
    """
    if d_req is not None and d_net_thr + d_send_thr > float(_positive("d_req", d_req)[0]):
        raise ValueError(
            f"d_net_thr, d_send_thr: (2.11) needs d_net_thr + d_send_thr <= d_req, got {d_net_thr} + {d_send_thr} > {d_req}"
        )
    c = _positive("c_hat", c_hat)
    rtt, rtt_min = _positive("rtt", rtt), _nonneg("rtt_min", rtt_min)
    a, w = _vec("cost", cost), _nonneg("cwnd", cwnd)
    ss = np.atleast_1d(np.asarray(slow_start, dtype=bool))
    xmin, m = _nonneg("x_min", x_min), _positive("hops", hops)
    n = _same_length(c_hat=c, rtt=rtt, rtt_min=rtt_min, cost=a, cwnd=w, slow_start=ss, x_min=xmin, hops=m)
    bcast = lambda v: np.broadcast_to(v, (n,)).astype(float)  # noqa: E731
    x_bar = bcast(np.atleast_1d(tsc_rate_bound(c, rtt_min, d_net_thr, hops=m)))
    x_cw = bcast(w / rtt)
    xmin, a, ss = bcast(xmin), bcast(a), np.broadcast_to(ss, (n,))
    total = tsc_total_rate(f_hat, d_send_thr)
    x = np.zeros(n)
    for s in sorted(range(n), key=lambda i: (a[i], i)):
        if total <= 0:
            x[s] = xmin[s] if min_rate_for_unassigned else 0.0
            continue
        share = min(total, x_cw[s]) if ss[s] else min(x_bar[s], total, x_cw[s])
        x[s] = max(share, 0.0, xmin[s])
        total -= x[s]
    return x


# ----------------------------------------------------------------------------------------------
# Chapter 3: delay terms (3.1)-(3.5)


def kingman_send_buffer_delay(x: ArrayLike, f: float, *, ca2: float = 1.0) -> float:
    """(3.1) T^s <= (f/sum x) / (sum x - f) * (1 + C_a^2)/2: Kingman's G/M/1 send-buffer wait.

    Rates in packets/s, delay in s; ``inf`` when sum x <= f. [GAP] ``ca2`` = C_a^2, default 1.
    """
    total = float(np.sum(_nonneg("x", x)))
    f = float(_nonneg("f", f)[0])
    ca2 = float(_nonneg("ca2", ca2)[0])
    if total <= f:
        return math.inf
    return (f / total) / (total - f) * (1.0 + ca2) / 2.0


def network_delay(x: ArrayLike, c: ArrayLike, tp: ArrayLike):
    """(3.2) T_r^n = c_r T_r^p/(c_r - x_r) - T_r^p/2: forward delay of a closed-loop M/M/1 path.

    ``x`` and ``c`` in the same unit; ``inf`` where x_r >= c_r.
    """
    x, c, tp = _nonneg("x", x), _positive("c", c), _nonneg("tp", tp)
    _same_length(x=x, c=c, tp=tp)
    with np.errstate(divide="ignore"):
        d = np.where(x < c, c * tp / np.maximum(c - x, 0.0) - tp / 2.0, math.inf)
    return _scalar_if_one(d)


def reordering_delay_bound(x: ArrayLike, c: ArrayLike, tp: ArrayLike) -> np.ndarray:
    """(3.3) T_r^o <= max_i T_i^n - T_r^n, per subflow, the max over subflows with x_i > 0."""
    xv = _nonneg("x", x)
    d = np.atleast_1d(network_delay(xv, c, tp))
    used = np.broadcast_to(xv, d.shape) > 0
    worst = float(np.max(d[used])) if np.any(used) else 0.0
    return np.where(used, worst - d, 0.0)


def application_delay_bound(x: ArrayLike, f: float, c: ArrayLike, tp: ArrayLike, *, ca2: float = 1.0) -> float:
    """(3.4) T <= T^s + max_r T_r^n (the objective of (3.10)), max over subflows with x_r > 0."""
    xv = _nonneg("x", x)
    d = np.atleast_1d(network_delay(xv, c, tp))
    used = np.broadcast_to(xv, d.shape) > 0
    worst = float(np.max(d[used])) if np.any(used) else 0.0
    return kingman_send_buffer_delay(xv, f, ca2=ca2) + worst


def rtt_time_varying(w: ArrayLike, c: ArrayLike, tp: ArrayLike):
    """(3.5) T_r^R = T_r^p + max(0, w_r - W_r^BDP)/c_r = max(T_r^p, w_r/c_r), W^BDP = c T^p."""
    w, c, tp = _nonneg("w", w), _positive("c", c), _nonneg("tp", tp)
    _same_length(w=w, c=c, tp=tp)
    return _scalar_if_one(np.maximum(tp, w / c))


def base_rtt(w_bdp: ArrayLike, c: ArrayLike):
    """T_r^p = W_r^BDP / c_r: the fixed RTT implied by a measured BDP (W^BDP = c T^p, Section
    3.3.2; the knee of (3.5)). ``w_bdp`` in bytes and ``c`` in bytes/s give seconds."""
    w_bdp, c = _positive("w_bdp", w_bdp), _positive("c", c)
    _same_length(w_bdp=w_bdp, c=c)
    return _scalar_if_one(w_bdp / c)


def reno_rate(c: ArrayLike, w_bdp: ArrayLike, w_loss: ArrayLike, *, beta: float = RENO_BETA):
    """(3.9) x-hat = (3/4) c / (1 - rho + rho^2), rho = W^BDP/W^Loss: a Reno flow's mean rate over
    a DropTail buffer (W^Loss = W^BDP + buffer), from the two-phase cycle (3.6)-(3.8).

    Continuous limit; for general ``beta`` c (1 - beta^2)/(1 - 2 beta rho + rho^2) on
    beta <= rho <= 1 and c below (the window never leaves the linear-RTT phase). ``w_bdp`` and
    ``w_loss`` in the same unit, the rate in ``c``'s. W^Loss < W^BDP is rejected (a window
    below the BDP cannot overflow a queue).
    """
    c, w_bdp, w_loss = _positive("c", c), _positive("w_bdp", w_bdp), _positive("w_loss", w_loss)
    beta = float(_vec("beta", beta)[0])
    if not 0.0 < beta < 1.0:
        raise ValueError(f"beta: expected 0 < beta < 1, got {beta}")
    _same_length(c=c, w_bdp=w_bdp, w_loss=w_loss)
    rho = w_bdp / w_loss
    if np.any(rho > 1.0 + 1e-12):
        raise ValueError(f"w_loss: expected W^Loss >= W^BDP (W^Loss = BDP + buffer), got {w_loss!r} < {w_bdp!r}")
    rate = np.where(rho <= beta, c, c * (1.0 - beta**2) / (1.0 - 2.0 * beta * rho + rho**2))
    return _scalar_if_one(rate)


# ----------------------------------------------------------------------------------------------
# Chapter 3: the LIA rate model (3.13)-(3.17) and its fixed point


def _cycle_integrals(
    w_loss: float, w_bdp: float, c: float, tp: float, alpha1, alpha2, beta: float, steps: int
) -> tuple[float, float, float]:
    """(packets, duration, integral of RTT dt) over one loss cycle from beta W^Loss to W^Loss.

    Phase 1 (w < W^BDP): RTT = T^p, dw/dt = alpha_1/T^p, so dt = T^p/alpha_1 dw and the
    packets sent are (w/T^p) dt = w/alpha_1 dw. Phase 2 (w > W^BDP): RTT = w/c, dw/dt =
    alpha_2 c/w, dt = (w/c)/alpha_2 dw, packets c dt = w/alpha_2 dw.
    """
    lo = beta * w_loss
    pkts = dur = rtt_dt = 0.0
    if lo < w_bdp:
        w = np.linspace(lo, min(w_bdp, w_loss), steps)
        a = np.minimum(1.0, alpha1(w))
        dt = tp / a
        dur += _trapezoid(dt, w)
        pkts += _trapezoid(w / a, w)
        rtt_dt += _trapezoid(tp * dt, w)
    if w_loss > w_bdp:
        w = np.linspace(max(w_bdp, lo), w_loss, steps)
        a = np.minimum(1.0, alpha2(w))
        dt = (w / c) / a
        dur += _trapezoid(dt, w)
        pkts += _trapezoid(w / a, w)
        rtt_dt += _trapezoid((w / c) * dt, w)
    return float(pkts), float(dur), float(rtt_dt)


def lia_cycle_rate(
    w_loss: float,
    c: float,
    tp: float,
    *,
    others_rate: float,
    is_dominant: bool,
    dominant_rate: float = 0.0,
    dominant_rtt: float = 1.0,
    beta: float = RENO_BETA,
    steps: int = 2000,
) -> tuple[float, float]:
    """One LIA subflow's mean rate over its loss cycle, the others' rates fixed: (3.15)-(3.17).

    ``others_rate`` = sum_{i != r} x-hat_i; for r != b, alpha_1 = w (x_b/T_b)/(w/T^p + S)^2 and
    alpha_2 = w (x_b/T_b)/(c + S)^2 (3.16); for r = b, alpha_1 = (w/T^p)^2/(w/T^p + S)^2 and
    alpha_2 = c^2/(c + S)^2 (3.17); both capped at 1. Windows in packets, rates in packets/s.
    Returns (mean rate, time-average RTT over the cycle).
    """
    s = float(others_rate)
    if s < 0:
        raise ValueError(f"others_rate: expected a rate >= 0, got {others_rate!r}")
    if not is_dominant and not (dominant_rate > 0 and dominant_rtt > 0):
        raise ValueError(
            f"dominant_rate, dominant_rtt: expected > 0 for a subflow other than b, got {dominant_rate!r}, {dominant_rtt!r}"
        )
    if is_dominant:
        alpha1 = lambda w: (w / tp) ** 2 / (w / tp + s) ** 2  # noqa: E731
        alpha2 = lambda w: np.full_like(w, c**2 / (c + s) ** 2)  # noqa: E731
    else:
        gain = float(dominant_rate) / float(dominant_rtt)
        alpha1 = lambda w: w * gain / (w / tp + s) ** 2  # noqa: E731
        alpha2 = lambda w: w * gain / (c + s) ** 2  # noqa: E731
    pkts, dur, rtt_dt = _cycle_integrals(w_loss, c * tp, c, tp, alpha1, alpha2, beta, steps)
    return pkts / dur, rtt_dt / dur


@dataclass(frozen=True)
class LiaRates:
    """The LIA fixed point: per-subflow mean rates ``x`` (packets/s), the dominant subflow
    ``b``, the long-run RTTs T-hat used (s), the sweeps run and whether it converged."""

    x: np.ndarray
    b: int
    mean_rtt: np.ndarray
    iterations: int
    converged: bool


def lia_rates(
    w_loss: ArrayLike,
    c: ArrayLike,
    tp: ArrayLike,
    *,
    beta: float = RENO_BETA,
    steps: int = 2000,
    tol: float = 1e-9,
    max_iter: int = 200,
    mean_rtt: str = "window",
) -> LiaRates:
    """MPTCP-LIA's subflow rates from the two-phase model (3.13)-(3.17), by the summary's fixed
    point: start from (3.9), b = argmax x_i/T-hat_i, then Gauss-Seidel sweeps of
    :func:`lia_cycle_rate` over the subflows until the largest relative change is below ``tol``.

    ``w_loss`` in packets (W^Loss: BDP + buffer, or the threshold W-bar^Loss), ``c`` in
    packets/s, ``tp`` in s. ``mean_rtt`` ([GAP]): ``"window"`` = max(T^p, (1+beta)/2 W^Loss/c)
    (the summary's estimate, default) or ``"cycle"`` (time average over the modelled cycle).
    """
    wl, cv, tpv = _positive("w_loss", w_loss), _positive("c", c), _positive("tp", tp)
    n = _same_length(w_loss=wl, c=cv, tp=tpv)
    wl, cv, tpv = (np.broadcast_to(v, (n,)).astype(float) for v in (wl, cv, tpv))
    if mean_rtt not in ("window", "cycle"):
        raise ValueError(f"mean_rtt: expected 'window' or 'cycle', got {mean_rtt!r}")
    if not (isinstance(steps, int) and steps >= 3):
        raise ValueError(f"steps: expected an integer >= 3, got {steps!r}")
    w_bdp = cv * tpv
    # (3.9) needs W^Loss >= W^BDP; below it the window never reaches the queue: rate = mean w/T^p.
    x = np.where(
        wl >= w_bdp,
        np.atleast_1d(reno_rate(cv, w_bdp, np.maximum(wl, w_bdp), beta=beta)),
        (1.0 + beta) / 2.0 * wl / tpv,
    )
    t_hat = np.maximum(tpv, (1.0 + beta) / 2.0 * wl / cv)
    converged = False
    it = 0
    b = int(np.argmax(x / t_hat))
    for it in range(1, max_iter + 1):
        b = int(np.argmax(x / t_hat))
        old = x.copy()
        for r in range(n):
            rate, rtt_avg = lia_cycle_rate(
                wl[r],
                cv[r],
                tpv[r],
                others_rate=float(np.sum(x) - x[r]),
                is_dominant=(r == b),
                dominant_rate=x[b],
                dominant_rtt=t_hat[b],
                beta=beta,
                steps=steps,
            )
            x[r] = rate
            if mean_rtt == "cycle":
                t_hat[r] = rtt_avg
        if np.max(np.abs(x - old) / np.maximum(old, 1e-300)) < tol:
            converged = True
            break
    return LiaRates(x=x, b=b, mean_rtt=t_hat, iterations=it, converged=converged)


# ----------------------------------------------------------------------------------------------
# Chapter 3: the delay-minimisation problem (3.10)


@dataclass(frozen=True)
class DelayOptimum:
    """Solution of (3.10): rates ``x`` (in ``c``'s unit), the common network delay
    ``network_delay`` (s) of the used subflows, the send-buffer delay ``send_delay`` (s) and
    the bound ``bound`` = send_delay + network_delay."""

    x: np.ndarray
    network_delay: float
    send_delay: float
    bound: float


def _rates_at_delay(d: float, c: np.ndarray, tp: np.ndarray) -> np.ndarray:
    """x_r(D) = max(0, c_r (D - T_r^p/2)/(D + T_r^p/2)): the rate whose (3.2) delay is D."""
    return np.maximum(0.0, c * (d - tp / 2.0) / (d + tp / 2.0))


def minimize_delay(
    c: ArrayLike,
    tp: ArrayLike,
    f: float,
    *,
    ca2: float = 1.0,
    method: str = "waterfill",
    scan_points: int = 400,
) -> DelayOptimum:
    """(3.10): minimise T^s(x) (3.1) + max_r T_r^n(x_r) (3.2) s.t. sum x >= f, x_r <= c_r.

    Rates (``c``, ``f``) in packets/s, ``tp`` in s. ``method``:

    * ``"waterfill"`` (default, exact): for a fixed sum rate the max is least when every used
      subflow has the same delay D, so x_r = x_r(D) and the problem is 1-D in D: g(D) =
      T^s(sum x(D)) + D over D with sum x(D) > f. A log-spaced scan of ``scan_points`` points
      then bounded Brent around the best.
    * ``"slsqp"``: the dissertation's iterative method, on the epigraph form (min T^s + D s.t.
      T_r^n(x_r) <= D), started from a proportional split.
    """
    cv, tpv = _positive("c", c), _positive("tp", tp)
    n = _same_length(c=cv, tp=tpv)
    cv, tpv = (np.broadcast_to(v, (n,)).astype(float) for v in (cv, tpv))
    f = float(_positive("f", f)[0])
    if float(np.sum(cv)) <= f:
        raise ValueError(f"f: the application rate {f:g} must be below the total capacity {float(np.sum(cv)):g}")

    def send(xs: np.ndarray) -> float:
        return kingman_send_buffer_delay(xs, f, ca2=ca2)

    if method == "waterfill":
        # D_lo: the smallest common delay whose rates carry f (sum x(D) rises from 0 to sum c).
        lo = float(np.min(tpv)) / 2.0
        hi = lo * 2.0 + 1e-3
        while np.sum(_rates_at_delay(hi, cv, tpv)) <= f:
            hi *= 2.0
        d_lo = optimize.brentq(lambda d: np.sum(_rates_at_delay(d, cv, tpv)) - f, lo, hi, xtol=1e-15, rtol=1e-15)

        def g(d: float) -> float:
            return send(_rates_at_delay(d, cv, tpv)) + d

        # g -> inf at D_lo and grows like D far out; scan to where D alone exceeds the scan's best.
        d_hi = d_lo * 2.0
        grid = d_lo + np.geomspace(1e-9, 1.0, scan_points) * (d_hi - d_lo)
        vals = np.array([g(d) for d in grid])
        while d_hi < np.min(vals):
            d_hi *= 2.0
            grid = d_lo + np.geomspace(1e-9, 1.0, scan_points) * (d_hi - d_lo)
            vals = np.array([g(d) for d in grid])
        i = int(np.argmin(vals))
        a, bnd = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        res = optimize.minimize_scalar(g, bounds=(a, bnd), method="bounded", options={"xatol": 1e-12})
        d = float(res.x) if res.fun <= vals[i] else float(grid[i])
        x = _rates_at_delay(d, cv, tpv)
        ts = send(x)
        return DelayOptimum(x=x, network_delay=d, send_delay=ts, bound=ts + d)
    if method == "slsqp":
        # Variables (x_1..x_n, D), rates scaled by sum c for conditioning.
        scale = float(np.sum(cv))
        share = (f + 0.5 * (scale - f)) / scale
        z0 = np.append(cv * share / scale, float(np.max(network_delay(cv * share, cv, tpv))))

        def objective(z):
            xs = z[:-1] * scale
            total = float(np.sum(xs))
            if total <= f:
                return 1e6
            return (f / total) / (total - f) * (1.0 + ca2) / 2.0 + z[-1]

        cons = [
            {"type": "ineq", "fun": lambda z: np.sum(z[:-1]) * scale - f - 1e-9 * scale},
            # D (c_r - x_r) - c_r T^p + (T^p/2)(c_r - x_r) >= 0  <=>  T_r^n(x_r) <= D (for x_r < c_r).
            {"type": "ineq", "fun": lambda z: (z[-1] + tpv / 2.0) * (cv - z[:-1] * scale) / scale - cv * tpv / scale},
        ]
        bounds = [(0.0, ci / scale * (1 - 1e-9)) for ci in cv] + [(0.0, None)]
        res = optimize.minimize(objective, z0, method="SLSQP", bounds=bounds, constraints=cons,
                                options={"maxiter": 500, "ftol": 1e-14})
        x = np.maximum(res.x[:-1] * scale, 0.0)
        used = x > 0
        d = float(np.max(np.atleast_1d(network_delay(x, cv, tpv))[used]))
        ts = send(x)
        return DelayOptimum(x=x, network_delay=d, send_delay=ts, bound=ts + d)
    raise ValueError(f"method: expected 'waterfill' or 'slsqp', got {method!r}")


# ----------------------------------------------------------------------------------------------
# Chapter 3: the window-threshold search (3.20)


@dataclass(frozen=True)
class ThresholdSearch:
    """Result of (3.20): thresholds ``w_loss`` (packets), the modelled rates ``x`` they give
    (packets/s), the largest |x* - x| ``error``, whether it met eps for every subflow
    (``found``) and how many grid points were evaluated."""

    w_loss: np.ndarray
    x: np.ndarray
    error: float
    found: bool
    evaluated: int


def search_thresholds(
    x_target: ArrayLike,
    c: ArrayLike,
    tp: ArrayLike,
    *,
    eps: ArrayLike = None,
    grid_points: int = 21,
    beta: float = RENO_BETA,
    steps: int = 500,
    mean_rtt: str = "window",
) -> ThresholdSearch:
    """(3.20): find W-bar^Loss in [W^BDP, 2 W^BDP] per subflow with |x*_r - x-hat_r(W-bar)| < eps
    for every r, x-hat from the LIA model (:func:`lia_rates`; Reno (3.9) for one subflow).

    The dissertation's sequential exhaustive search over the product of per-subflow grids of
    ``grid_points`` points ([GAP], default 21), stopping at the first point that meets eps
    ([GAP], default 1 % of each subflow's capacity). ``x_target``, ``c`` in packets/s, ``tp``
    in s. ``steps`` is the LIA integration's resolution (500 here to keep the search fast; its
    rates differ from 2000 steps' by under 1e-6 relative:
    2.5e-7 at most over W in [1, 2] BDP on four capacity pairs).
    """
    xt, cv, tpv = _nonneg("x_target", x_target), _positive("c", c), _positive("tp", tp)
    n = _same_length(x_target=xt, c=cv, tp=tpv)
    xt, cv, tpv = (np.broadcast_to(v, (n,)).astype(float) for v in (xt, cv, tpv))
    tol = 0.01 * cv if eps is None else np.broadcast_to(_positive("eps", eps), (n,))
    if not (isinstance(grid_points, int) and grid_points >= 2):
        raise ValueError(f"grid_points: expected an integer >= 2, got {grid_points!r}")
    w_bdp = cv * tpv
    grids = [np.linspace(wb, 2.0 * wb, grid_points) for wb in w_bdp]
    best = None
    count = 0
    for point in itertools.product(*grids):
        wl = np.array(point)
        x = lia_rates(wl, cv, tpv, beta=beta, steps=steps, mean_rtt=mean_rtt).x
        count += 1
        err = np.abs(xt - x)
        if best is None or np.max(err) < best[2]:
            best = (wl, x, float(np.max(err)))
        if np.all(err < tol):
            return ThresholdSearch(w_loss=wl, x=x, error=float(np.max(err)), found=True, evaluated=count)
    return ThresholdSearch(w_loss=best[0], x=best[1], error=best[2], found=False, evaluated=count)
