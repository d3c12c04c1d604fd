"""Shared pieces of ``rove reproduce selection``: the algorithms (series), the use cases of
the mobility sweep, the criteria fixed before the runs, and small claim builders.

Every claim is judged by a criterion fixed here or in its section before the runs, the same
for every algorithm it compares, over seeds (:func:`~rove.reproduce.verdicts.judge_less` takes
the larger standard deviation of the two sides as its margin); "not measured" never counts as
support (:func:`~rove.reproduce.verdicts.combine`).
"""

from __future__ import annotations

from typing import Sequence

from ...selection.tables import CANDIDATES, DISPLAY
from ..document import fmt
from ..runner import Series
from ..verdicts import NOT_MEASURED, Claim, combine, judge_fraction, judge_less, mean

__all__ = ["CCAS", "CAPACITY", "CDG", "CUBIC_3X", "CUBIC_NO_HYSTART", "CUBIC_DELAY_ONLY",
           "series_of",
           "every_flow", "CASES", "case_info", "case_key", "SWITCH_GAIN", "display",
           "pairs_claim", "fraction_claim"]

# --------------------------------------------------------------------------------------------
# The algorithms. The thesis's five candidates (chapter 6) by rove's names: NewReno is Linux
# `reno` (with SACK, RACK and PRR around it), Westwood+ is `westwood`; every algorithm with
# rove's defaults (Linux 6.x: CUBIC's HyStart in µs, BBR with the ACK-aggregation allowance),
# the ones the selection controller switches to.


def series_of(cc: str, params: dict | None = None, key: str | None = None,
              label: str | None = None, flows: tuple[int, ...] = (0,)) -> Series:
    return Series(key or cc, label or DISPLAY.get(cc, cc), cc, dict(params or {}), flows)


CCAS: tuple[Series, ...] = tuple(series_of(cc) for cc in CANDIDATES)
# CAIA Delay-Gradient: in the thesis's chapter 5 (ns-3), dropped from chapter 6.
CDG = series_of("cdg", label="CDG")
# The thesis's "modified CUBIC": HyStart's delay exit only after three detections (§3.2(c)).
CUBIC_3X = series_of("cubic", {"hystart_delay_checks": 3}, "cubic-3x", "CUBIC-3x")
CUBIC_NO_HYSTART = series_of("cubic", {"hystart": False}, "cubic-nohystart",
                             "CUBIC without HyStart")
# HyStart with its delay test alone: if it leaves slow start where CUBIC does, the ACK-train
# test did not end it (the thesis's Fig. 5.7 ablation).
CUBIC_DELAY_ONLY = series_of("cubic", {"hystart_detect": "delay"}, "cubic-delay",
                             "CUBIC, HyStart delay test only")
# The available capacity Kt of Eq. 6.1: a saturating datagram flow in place of the TCP flow
# (the scenario's flows replaced: a sweep merges a table into the flow it overrides, so the
# whole list goes), offered at 100 Mbit/s (above the cell's 75.4 Mbit/s peak) over the same
# path.
CAPACITY = Series("capacity", "capacity (saturating datagrams)", "cbr", flows=(),
                  extra={"flows": [{"name": "ue", "workload": "cbr", "rate": "100Mbps",
                                    "path": ["wan", "cell:ue"]}]})


def every_flow(s: Series, flows: tuple[int, ...]) -> Series:
    """``s`` on every flow of ``flows`` (the MONROE experiment's long and short downloads)."""
    return Series(s.key, s.label, s.cc, s.params, flows, s.extra)


def display(cc: str) -> str:
    return DISPLAY.get(cc, cc)


# --------------------------------------------------------------------------------------------
# The mobility sweep's cases (scenarios/selection/sweeps/mobility.toml): "4g-F60" is the
# thesis's use case F60 (forward, 60 km/h) at 4G latency.

LATENCIES = ("4g", "low")
USE_CASES = tuple((d, s) for s in (60, 120, 300) for d in ("forward", "backward"))
CASES = tuple(f"{lat}-{d[0].upper()}{s}" for lat in LATENCIES for d, s in USE_CASES)


def case_key(latency: str, direction: str, speed: int) -> str:
    return f"{latency}-{direction[0].upper()}{speed}"


def case_info(case: str) -> tuple[str, str, int]:
    """``"4g-B300"`` -> ``("4g", "backward", 300)``."""
    latency, uc = case.split("-")
    return latency, {"F": "forward", "B": "backward"}[uc[0]], int(uc[1:])


# --------------------------------------------------------------------------------------------
# Criteria fixed before the runs

# The thesis's outcome classes of a switching use case (§2.11): "improvements over the 5%",
# "below the 5%", "worse".
SWITCH_GAIN = 0.05


# --------------------------------------------------------------------------------------------
# Claims


def pairs_claim(quote: str, where: str, pairs: Sequence[tuple[str, Sequence[float], Sequence[float]]],
                what: str, holds_at: float = 0.8, partly_at: float = 0.5,
                slack: float = 0.0) -> Claim:
    """The claim "in each pair (label, a, b), a < b", each pair judged over seeds
    (:func:`judge_less`: holds beyond the larger s.d.); the claim holds when that share of the
    pairs holds is at least ``holds_at``, partly at ``partly_at``."""
    flags, parts = [], []
    for label, a, b in pairs:
        v, _ = judge_less(a, b, slack=slack)
        flags.append(None if v == NOT_MEASURED else v == "holds")
        parts.append(f"{label}: {fmt(mean(a), '.3g')} < {fmt(mean(b), '.3g')} {v}")
    verdict, share = judge_fraction(flags, holds_at=holds_at, partly_at=partly_at)
    n_ok = sum(1 for f in flags if f)
    n = sum(1 for f in flags if f is not None)
    return Claim(quote, where, (f"{n_ok} of {n} pairs hold: " if n else "") + "; ".join(parts)
                 if parts else "no runs",
                 f"{what}: each pair over seeds (the difference of the means beyond the larger "
                 f"s.d.); holds when {holds_at:.0%} of the pairs hold, partly at "
                 f"{partly_at:.0%}", verdict)


def fraction_claim(quote: str, where: str, flags: dict[str, bool | None], criterion: str,
                   holds_at: float = 0.8, partly_at: float = 0.5, detail: str = "") -> Claim:
    """The claim "X is true in each setting" judged by the share of settings where it is
    (a setting given as None was not measured and is not counted)."""
    verdict, share = judge_fraction(list(flags.values()), holds_at=holds_at, partly_at=partly_at)
    known = [k for k, f in flags.items() if f is not None]
    true = [k for k in known if flags[k]]
    measured = (f"{len(true)} of {len(known)}: " + (", ".join(true) or "none")
                + (f" ({detail})" if detail else "")) if known else "not measured"
    return Claim(quote, where, measured, f"{criterion}; holds in {holds_at:.0%} of the "
                 f"settings, partly in {partly_at:.0%}", verdict)


def combined(claims: Sequence[Claim]) -> str:
    return combine(c.verdict for c in claims) if claims else NOT_MEASURED
