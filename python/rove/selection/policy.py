"""Choosing the congestion control: Option 1 at set-up (Table 6.1 with the rules of Findings
1-9 and §2.8's tie-break) and Option 2 per phase (Table 6.8, and the per-phase selector that
derives such a table from measurements). seed-002 §2.3-§2.11.

[GAP] choices, each a parameter or a documented constant:
- latency class from the baseline RTT: below ``LOW_LATENCY_MAX_MS`` = 40 ms is "low" (the
  thesis's classes are ~18 ms and >= 68 ms);
- speed class: the nearest of 60, 120 and 300 km/h on a log scale (the boundaries ~85 and
  ~190 km/h); below ``MOVING_MIN_KMH`` = 5 km/h the UE is static and Table 6.1 does not apply;
- variability: EVA120 is the thesis's "stable" case, EVA60 and HST300 "variable" (§2.3);
- aggressiveness (Finding 1): reno and westwood low, cubic medium, illinois and bbr high;
- a short flow is at most 1 MB (the thesis's short flows, §2.3);
- the per-phase selector keeps the previous phase's algorithm when it is within 0.6 % of the
  phase's best (seed-002 §2.11 [I]: fitted, 0.57-0.62 % reproduce 34 of 36 rows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .tables import (CANDIDATES, CRITERIA, OPTION1, OPTION2, PHASE_TABLES, SPEEDS,
                     THESIS_OVERRIDES, USE_CASES, phases_of)

LOW_LATENCY_MAX_MS = 40.0
MOVING_MIN_KMH = 5.0
SHORT_FLOW_BYTES = 1_000_000
KEEP_TOLERANCE = 0.006
DEFAULT_CC = "cubic"  # §2.8 tie-break b): "the by-default CCA" (Linux's default)
HYSTART_CCS = frozenset({"cubic", "cdg"})
AGGRESSIVENESS = {"reno": "low", "westwood": "low", "cubic": "medium", "illinois": "high",
                  "bbr": "high"}


@dataclass(frozen=True)
class Context:
    """What the sender knows of the connection (seed-002 §2.3). Every field is optional: a
    rule whose input is missing does not apply."""
    min_rtt_ms: float | None = None
    latency: str | None = None          # "low" | "4g"; derived from min_rtt_ms if absent
    direction: str | None = None        # "forward" (away from the cell) | "backward"
    speed_kmh: float | None = None
    variability: str | None = None      # "stable" | "variable"; derived from the speed class
    window_scaling: bool | None = None  # False: rwnd capped at 64 KB (Finding 1)
    queue: str | None = None            # "deep" | "shallow" (Findings 2, 6)
    bandwidth: str | None = None        # "low" | "high"
    loaded: bool | None = None          # a cell with other users' traffic
    flow_bytes: int | None = None       # None: a long or unknown flow

    def __post_init__(self):
        for name, allowed in (("latency", ("low", "4g")), ("direction", ("forward", "backward")),
                              ("variability", ("stable", "variable")),
                              ("queue", ("deep", "shallow")), ("bandwidth", ("low", "high"))):
            value = getattr(self, name)
            if value is not None and value not in allowed:
                raise ValueError(f"Context.{name}: {value!r} is not one of {', '.join(allowed)}")

    @property
    def latency_class(self) -> str | None:
        if self.latency is not None:
            return self.latency
        if self.min_rtt_ms is None:
            return None
        return "low" if self.min_rtt_ms < LOW_LATENCY_MAX_MS else "4g"

    @property
    def speed_class(self) -> int | None:
        if self.speed_kmh is None or self.speed_kmh < MOVING_MIN_KMH:
            return None
        return min(SPEEDS, key=lambda s: abs(math.log(self.speed_kmh / s)))

    @property
    def variability_class(self) -> str | None:
        if self.variability is not None:
            return self.variability
        speed = self.speed_class
        return None if speed is None else ("stable" if speed == 120 else "variable")

    @property
    def short_flow(self) -> bool:
        return self.flow_bytes is not None and self.flow_bytes <= SHORT_FLOW_BYTES


@dataclass(frozen=True)
class Choice:
    cc: str
    reason: str                                     # where the choice came from
    table_entry: str | None = None                  # Table 6.1's cell ("*" for several)
    excluded: Mapping[str, str] = field(default_factory=dict)  # cc -> the finding excluding it


def exclusions(context: Context, criterion: str,
               candidates: Sequence[str] = CANDIDATES) -> dict[str, str]:
    """The algorithms the findings rule out in ``context`` (cc -> reason)."""
    out: dict[str, str] = {}

    def rule_out(ccs, reason):
        for cc in ccs:
            if cc in candidates:
                out.setdefault(cc, reason)

    if context.short_flow:
        rule_out(HYSTART_CCS, "Finding 5: HyStart exits early under cellular delay "
                              "variability; no HyStart algorithm for a short flow")
    if context.window_scaling is False:
        rule_out([cc for cc, a in AGGRESSIVENESS.items() if a == "high"],
                 "Finding 1: without window scaling rwnd <= 64 KB; low or medium "
                 "aggressiveness")
    if context.queue == "shallow" and context.short_flow:
        rule_out(["bbr"], "Finding 6: BBR's probing needs a deep queue; short flows beside it "
                          "on a shallow queue finish later")
    if context.direction == "backward":
        rule_out(["westwood", "cdg"], "Finding 4: delay-based and Westwood+ cannot take up a "
                                      "capacity increase")
    westwood_fits = (context.bandwidth == "low" or context.loaded or criterion == "delay")
    if not westwood_fits:
        rule_out(["westwood"], "§2.8: Westwood+ only at low bandwidth, in a loaded cell or "
                               "for delay")
    rule_out(["cdg"], "§2.8: CDG is avoided as a general rule")
    return out


def option1(context: Context, criterion: str, *, preference: Sequence[str] = (),
            default: str = DEFAULT_CC, current: str | None = None,
            candidates: Sequence[str] = CANDIDATES) -> Choice:
    """The algorithm for a new connection (Option 1).

    Table 6.1's entry when the context is one of its cases (a moving UE of known direction and
    latency class) and no finding rules it out; otherwise the rule of Finding 8 or 9 where it
    applies; otherwise §2.8's tie-break among what is left: a) the developer's ``preference``
    (first one allowed), b) the ``default`` algorithm, c) the ``current`` one, d) the first
    candidate."""
    _check_criterion(criterion)
    excluded = exclusions(context, criterion, candidates)
    allowed = [cc for cc in candidates if cc not in excluded]
    if not allowed:
        raise ValueError("option1: the findings rule out every candidate: "
                         + "; ".join(f"{cc}: {r}" for cc, r in excluded.items()))
    entry = None
    latency, speed, direction = context.latency_class, context.speed_class, context.direction
    if latency and speed and direction:
        cell = OPTION1[(speed, direction, latency, criterion)]
        entry = cell or "*"
        if cell is not None and cell in allowed:
            return Choice(cell, "Table 6.1", entry, excluded)
    ruled = _findings_8_9(context, criterion)
    if ruled is not None and ruled[0] in allowed:
        return Choice(ruled[0], ruled[1], entry, excluded)
    for cc, why in ([(p, "tie-break a): developer preference") for p in preference]
                    + [(default, "tie-break b): the default algorithm"),
                       (current, "tie-break c): the algorithm already established")]):
        if cc in allowed:
            return Choice(cc, why, entry, excluded)
    return Choice(allowed[0], "tie-break d): the first candidate allowed", entry, excluded)


def _findings_8_9(context: Context, criterion: str) -> tuple[str, str] | None:
    latency, variability = context.latency_class, context.variability_class
    if criterion != "goodput" or latency is None or variability is None:
        return None
    if variability == "stable":
        if latency == "low":
            return "reno", "Finding 8: stable channel, low latency: the least aggressive"
        if context.direction == "backward":
            return "reno", "Finding 8: stable channel, 4G latency, backward: NewReno"
        if context.direction == "forward":
            return "cubic", "Finding 8: stable channel, 4G latency, forward: CUBIC"
        return None
    if latency == "4g":
        return "cubic", "Finding 9: variable channel, 4G latency: CUBIC's aggressiveness"
    return None


def option2_plan(criterion: str, latency: str, direction: str, speed: int) -> tuple[str, ...]:
    """Table 6.8: the algorithm of each phase of ``phases_of(direction, speed)``."""
    _check_criterion(criterion)
    try:
        return OPTION2[(criterion, latency, direction, speed)]
    except KeyError:
        raise ValueError(f"Table 6.8 has no case ({criterion}, {latency}, {direction}, "
                         f"{speed} km/h): latency is 'low' or '4g', speed 60, 120 or 300"
                         ) from None


def select_per_phase(tables: Mapping[str, Sequence[float]], *,
                     tolerance: float = KEEP_TOLERANCE) -> tuple[str, ...]:
    """An algorithm per phase from per-phase measurements (``{cc: (value per phase)}``, higher
    better): the best of each phase, except that the previous phase's algorithm is kept when
    it is within ``tolerance`` (relative) of that phase's best (seed-002 §2.11)."""
    if not tables:
        raise ValueError("select_per_phase: no algorithms measured")
    lengths = {len(v) for v in tables.values()}
    if len(lengths) != 1:
        raise ValueError("select_per_phase: every algorithm needs a value for every phase")
    plan: list[str] = []
    for k in range(lengths.pop()):
        column = {cc: values[k] for cc, values in tables.items()}
        best = max(column, key=lambda cc: column[cc])  # ties: the first listed
        prev = plan[-1] if plan else None
        if prev is not None and column[prev] >= column[best] * (1 - tolerance):
            plan.append(prev)
        else:
            plan.append(best)
    return tuple(plan)


def derive_table_6_8(*, tolerance: float = KEEP_TOLERANCE, overrides: Mapping | None = None,
                     phase_tables: Mapping = PHASE_TABLES) -> dict:
    """Table 6.8 derived from per-phase tables (the thesis's Tables 6.2-6.7 by default, or a
    reproduction's own): ``{(criterion, latency, direction, speed): plan}``, with ``overrides``
    (e.g. ``tables.THESIS_OVERRIDES``) replacing the derived rows they name."""
    out = {}
    for (criterion, latency), table in phase_tables.items():
        for direction, speed in USE_CASES:
            out[(criterion, latency, direction, speed)] = select_per_phase(
                table[(direction, speed)], tolerance=tolerance)
    out.update(overrides or {})
    return out


def switches(plan: Sequence[str]) -> int:
    """How many times a plan changes algorithm (0: Option 1 suffices)."""
    return sum(1 for a, b in zip(plan, plan[1:]) if a != b)


def _check_criterion(criterion: str) -> None:
    if criterion not in CRITERIA:
        raise ValueError(f"criterion {criterion!r}: expected one of {', '.join(CRITERIA)}")


__all__ = ["Context", "Choice", "exclusions", "option1", "option2_plan", "select_per_phase",
           "derive_table_6_8", "switches", "THESIS_OVERRIDES", "phases_of"]
