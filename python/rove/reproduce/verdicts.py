"""Numbers and verdicts of a reproduction: Jain's index, per-network normalisation, and the
comparison of a measured value with a claim of the paper.

A *verdict* is one of :data:`HOLDS`, :data:`PARTLY`, :data:`FAILS` or :data:`NOT_MEASURED`; it
is always computed from numbers with a criterion that the report prints next to it, never set by
hand. Everything here is plain arithmetic so that the tests can pin it with hand-computed values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from ..metrics import jain_index  # noqa: F401  (re-exported: the studies' Jain's index)

HOLDS = "holds"
PARTLY = "partly"
FAILS = "does not hold"
NOT_MEASURED = "not measured"
NOT_AVAILABLE = "not available in this build"

__all__ = [
    "HOLDS", "PARTLY", "FAILS", "NOT_MEASURED", "NOT_AVAILABLE", "Claim",
    "jain_index", "judge_range", "judge_fraction", "judge_near", "judge_less", "combine",
    "judge_distributions", "mean", "mean_sd", "median",
    "normalise_networks", "is_number",
]


def is_number(x) -> bool:
    """A finite real number (not None, not NaN, not a bool)."""
    if x is None or isinstance(x, bool):
        return False
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def judge_range(value, holds: tuple[float, float], partly: tuple[float, float] | None = None) -> str:
    """:data:`HOLDS` when ``holds[0] <= value <= holds[1]``, else :data:`PARTLY` when inside
    ``partly`` (if given), else :data:`FAILS`; :data:`NOT_MEASURED` when ``value`` is not a
    number. Use ``-inf`` / ``inf`` for one-sided criteria."""
    if not is_number(value):
        return NOT_MEASURED
    v = float(value)
    if holds[0] <= v <= holds[1]:
        return HOLDS
    if partly is not None and partly[0] <= v <= partly[1]:
        return PARTLY
    return FAILS


def judge_fraction(flags: Sequence[bool | None], holds_at: float = 0.8,
                   partly_at: float = 0.5) -> tuple[str, float | None]:
    """For a claim checked at several points: the share of points where it is true (points
    given as ``None`` are not counted) and the verdict: :data:`HOLDS` when the share is at least
    ``holds_at``, :data:`PARTLY` when at least ``partly_at``, else :data:`FAILS`."""
    known = [bool(f) for f in flags if f is not None]
    if not known:
        return NOT_MEASURED, None
    share = sum(known) / len(known)
    if share >= holds_at:
        return HOLDS, share
    if share >= partly_at:
        return PARTLY, share
    return FAILS, share


def combine(verdicts: Iterable[str]) -> str:
    """One verdict for several: all hold -> holds; none holds or is partial -> does not hold;
    otherwise partly. A verdict that was not measured (or not available) never counts as
    support: with it, "all hold" becomes partly (the rest is unknown), and nothing else
    changes; if nothing was measured the result is :data:`NOT_MEASURED`."""
    verdicts = list(verdicts)
    vs = [v for v in verdicts if v in (HOLDS, PARTLY, FAILS)]
    if not vs:
        return NOT_MEASURED
    if all(v == FAILS for v in vs):
        return FAILS
    if all(v == HOLDS for v in vs) and len(vs) == len(verdicts):
        return HOLDS
    return PARTLY


def judge_near(value, target: float, step: float) -> str:
    """For a claim "X happens at about ``target``" measured on a grid of spacing ``step``:
    :data:`HOLDS` within one grid step of the target, :data:`PARTLY` within two, else
    :data:`FAILS`; :data:`FAILS` when it never happens (``value`` None)."""
    if value is None:
        return FAILS
    if not is_number(value):
        return NOT_MEASURED
    off = abs(float(value) - target)
    if off <= step + 1e-12:
        return HOLDS
    if off <= 2 * step + 1e-12:
        return PARTLY
    return FAILS


def _mean_sd(xs: Sequence[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd


def judge_less(a: Sequence[float], b: Sequence[float], slack: float = 0.0,
               min_seeds: int = 2, rel_margin: float = 0.0) -> tuple[str, str]:
    """Whether ``a`` < ``b`` (plus ``slack``: "a is not above b by more than slack"), judged
    over seeds with one margin for both sides: the larger of the two samples' standard
    deviations, and at least ``rel_margin`` × the larger of the two means' magnitudes (for
    deterministic runs, where seeds change nothing and the s.d. is 0: one run a side, with
    ``min_seeds=1``). :data:`HOLDS` when ``mean(b) + slack − mean(a)`` exceeds the margin;
    :data:`PARTLY` when it is positive but within the margin (the right direction, not
    separable from the noise); :data:`FAILS` otherwise; :data:`NOT_MEASURED` with fewer than
    ``min_seeds`` values on a side. Returns the verdict and the numbers as text."""
    a = [float(x) for x in a if is_number(x)]
    b = [float(x) for x in b if is_number(x)]
    if len(a) < min_seeds or len(b) < min_seeds:
        return NOT_MEASURED, f"needs {min_seeds} seeds a side, has {len(a)} and {len(b)}"
    (ma, sa), (mb, sb) = _mean_sd(a), _mean_sd(b)
    floor = rel_margin * max(abs(ma), abs(mb))
    margin = max(sa, sb, floor)
    d = mb + slack - ma
    if floor and margin == floor:
        text = f"difference {d:.3g}, margin ({rel_margin:.0%} of the larger value) {margin:.3g}"
    else:
        text = (f"difference {d:.3g}, margin (larger s.d. over {min(len(a), len(b))}+ seeds) "
                f"{margin:.3g}")
    if d > margin:
        return HOLDS, text
    if d > 0:
        return PARTLY, text
    return FAILS, text


def mean(xs: Iterable) -> float | None:
    """The mean of the numbers in ``xs`` (None when there is none)."""
    v = [float(x) for x in xs if is_number(x)]
    return sum(v) / len(v) if v else None


def mean_sd(xs: Iterable) -> tuple[float | None, float | None]:
    """The mean and the sample standard deviation (0 for one number) of the numbers in
    ``xs``; (None, None) when there is none."""
    v = [float(x) for x in xs if is_number(x)]
    if not v:
        return None, None
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return m, sd


def median(xs: Sequence[float]) -> float | None:
    """The median of the numbers in ``xs`` (the mean of the middle two for an even count)."""
    v = sorted(float(x) for x in xs if is_number(x))
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def judge_distributions(reference: Sequence[float], other: Sequence[float],
                        tolerance: float, outlier_factor: float = 2.0,
                        outlier_floor: float = 1e-3,
                        factor: float | None = None) -> tuple[str, str]:
    """Whether several runs of one side (``other``, e.g. the kernel) agree with several of the
    other (``reference``, e.g. the simulator's seeds), judged on both spreads: :data:`HOLDS`
    when the ratio of the medians is within ``1 ± tolerance``; :data:`PARTLY` when it is not
    but the two ranges (min–max over the runs) overlap, so the difference is within the
    run-to-run spread; :data:`FAILS` otherwise; :data:`NOT_MEASURED` when a side has no run.
    A median hides a single deviating run: a run off the other side's median by more than
    ``outlier_factor`` (and by more than ``outlier_floor`` in absolute terms) makes a "holds"
    only partly. Symmetric up to the ratio's direction. With ``factor``, the medians' ratio
    must lie within ``[1/factor, factor]`` instead of ``1 ± tolerance``. Returns the verdict
    and the numbers as text."""
    a = [float(x) for x in reference if is_number(x)]
    b = [float(x) for x in other if is_number(x)]

    def side(xs):
        if not xs:
            return "no runs"
        return f"{median(xs):.4g} [{min(xs):.4g}–{max(xs):.4g}, {len(xs)} runs]"

    text = f"median {side(a)} vs {side(b)}"
    if not a or not b:
        return NOT_MEASURED, text
    ma, mb = median(a), median(b)
    r = (1.0 if mb == 0 else math.inf) if ma == 0 else mb / ma
    text += f", ratio {r:.3g}"
    def outliers(xs, m):
        return [x for x in xs if abs(x - m) > outlier_floor
                and (min(x, m) <= 0 or max(x, m) / min(x, m) > outlier_factor)]

    odd = outliers(a, mb) + outliers(b, ma)
    within = (1.0 / factor - 1e-12 <= r <= factor + 1e-12) if factor else \
        abs(r - 1.0) <= tolerance + 1e-12
    if within:
        if odd:
            return PARTLY, text + f"; outlier run(s) {', '.join(f'{x:.4g}' for x in odd)}"
        return HOLDS, text
    if max(a) >= min(b) and max(b) >= min(a):
        return PARTLY, text
    return FAILS, text


@dataclass
class Claim:
    """One statement of the paper, checked: the quote and where it is, what we measured, the
    criterion, and the verdict computed from the measurement."""

    quote: str                     # the paper's words
    where: str                     # "§4.3.2, Fig. 4.5"
    measured: str                  # our numbers, as text
    criterion: str                 # how the verdict is computed
    verdict: str                   # HOLDS / PARTLY / FAILS / NOT_MEASURED / NOT_AVAILABLE
    notes: list[str] = field(default_factory=list)


def normalise_networks(rows: Sequence[Mapping], network: str = "network", scheme: str = "scheme",
                       tput: str = "tput", delay: str = "delay",
                       p95: str = "p95", reference=None) -> dict[str, dict[str, float | None]]:
    """The thesis's normalisation (§4.5.2, Fig. 4.18), per network then across networks.

    ``rows`` hold one run each: its network, scheme, throughput, average queueing delay and
    95th-percentile queueing delay. Per network and scheme the runs are averaged; then, in each
    network, a scheme's average throughput is divided by the largest average throughput of any
    scheme there, and its average and p95 delay by the smallest *average* delay of any scheme
    there ("the 95%tile queuing delay ... is also normalized to the minimum average queuing
    delay"). Returns, per scheme, the mean and the (population) standard deviation of each
    normalised value across networks: ``{"tput_mean", "tput_sd", "delay_mean", "delay_sd",
    "p95_mean", "p95_sd", "networks"}``. A network whose smallest average delay is 0 gives no
    delay values (they would be infinite) and is counted in ``"delay_skipped"``.
    ``reference``, if given, is the set of schemes whose values define each network's largest
    throughput and smallest delay (the schemes the paper compared); the others are normalised
    by the same figures.
    """
    cells: dict[tuple, list[Mapping]] = {}
    for r in rows:
        cells.setdefault((r[network], r[scheme]), []).append(r)

    def avg(xs):
        xs = [float(x) for x in xs if is_number(x)]
        return sum(xs) / len(xs) if xs else None

    per_net: dict = {}
    for (net, sch), rs in cells.items():
        per_net.setdefault(net, {})[sch] = (avg(r[tput] for r in rs), avg(r[delay] for r in rs),
                                            avg(r[p95] for r in rs))
    norm: dict[str, dict[str, list[float]]] = {}
    skipped: dict[str, int] = {}
    for net, schemes in per_net.items():
        ref = [v for k, v in schemes.items() if reference is None or k in reference]
        tputs = [v[0] for v in ref if v[0] is not None]
        delays = [v[1] for v in ref if v[1] is not None]
        max_t = max(tputs) if tputs else None
        min_d = min(delays) if delays else None
        for sch, (t, d, p) in schemes.items():
            acc = norm.setdefault(sch, {"tput": [], "delay": [], "p95": []})
            if t is not None and max_t:
                acc["tput"].append(t / max_t)
            if min_d is not None and min_d > 0:
                if d is not None:
                    acc["delay"].append(d / min_d)
                if p is not None:
                    acc["p95"].append(p / min_d)
            else:
                skipped[sch] = skipped.get(sch, 0) + 1

    def mean_sd(xs):
        if not xs:
            return None, None
        m = sum(xs) / len(xs)
        return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))

    out = {}
    for sch, acc in norm.items():
        tm, ts = mean_sd(acc["tput"])
        dm, ds = mean_sd(acc["delay"])
        pm, ps = mean_sd(acc["p95"])
        out[sch] = {"tput_mean": tm, "tput_sd": ts, "delay_mean": dm, "delay_sd": ds,
                    "p95_mean": pm, "p95_sd": ps, "networks": len(acc["tput"]),
                    "delay_skipped": skipped.get(sch, 0)}
    return out
