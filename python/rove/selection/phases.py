"""Mobility phases (seed-002 §2.6): the thesis's time rule and a measurement-based detector.

Forward movement (quality falling, moving away from the eNodeB): start-up, sustainer,
constrained. Backward (quality rising): start-up, constrained, scaling; at 300 km/h backward the
thesis's tables have start-up and scaling only.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .tables import PHASES, phases_of

STARTUP_S = 2.0  # "The Start-up phase will be treated always as the first two seconds"
# "... and the constrained area will be of ten seconds at 60 km/h, five seconds at 120 km/h and
# two seconds at 300 km/h" (thesis §6.3.2).
CONSTRAINED_S = {60: 10.0, 120: 5.0, 300: 2.0}
# [GAP] other speeds: the same stretch of road, 60 km/h x 10 s = 166.7 m (seed-002 §2.6 [I]).
CONSTRAINED_M = 60 / 3.6 * 10.0


@dataclass(frozen=True)
class Phase:
    name: str
    start_s: float
    end_s: float


def constrained_seconds(speed_kmh: float) -> float:
    """The constrained area's duration: the thesis's value at 60/120/300 km/h, else the time
    to cross the same 166.7 m at ``speed_kmh``."""
    if speed_kmh in CONSTRAINED_S:
        return CONSTRAINED_S[speed_kmh]
    if speed_kmh <= 0:
        raise ValueError(f"speed {speed_kmh} km/h: a moving UE has a positive speed")
    return CONSTRAINED_M / (speed_kmh / 3.6)


def thesis_phases(direction: str, speed_kmh: float, duration_s: float, *,
                  startup_s: float = STARTUP_S,
                  constrained_s: float | None = None) -> list[Phase]:
    """The thesis's time rule: start-up the first 2 s; the constrained area at the end of a
    forward run, right after start-up in a backward one; the rest sustainer or scaling."""
    if direction not in PHASES:
        raise ValueError(f"direction {direction!r}: expected 'forward' or 'backward'")
    con = constrained_seconds(speed_kmh) if constrained_s is None else constrained_s
    names = phases_of(direction, int(speed_kmh)) if speed_kmh in CONSTRAINED_S else PHASES[direction]
    if "constrained" not in names:
        con = 0.0
    if duration_s <= startup_s + con:
        raise ValueError(f"duration {duration_s} s: the phases need more than "
                         f"{startup_s + con:g} s (start-up {startup_s:g} s, constrained {con:g} s)")
    if direction == "forward":
        bounds = (0.0, startup_s, duration_s - con, duration_s)
    elif "constrained" in names:
        bounds = (0.0, startup_s, startup_s + con, duration_s)
    else:
        bounds = (0.0, startup_s, duration_s)
    return [Phase(n, a, b) for n, a, b in zip(names, bounds, bounds[1:])]


def phase_at(phases: list[Phase], t_s: float) -> str:
    for p in phases:
        if p.start_s <= t_s < p.end_s:
            return p.name
    return phases[-1].name


class PhaseDetector:
    """Phases from measurements, for real use where the time rule's geometry is unknown.

    Feed it a capacity estimate every sample (100 ms: the delivery rate, or a network
    assistant's figure). Its state is the mean of the last ``window`` samples (7, as the
    thesis's smoothing "only smoothed samples ... are used", §2.2 step 5):

    - ``startup`` for the first ``startup_s``;
    - ``constrained`` once the mean falls below ``constrained_fraction`` of the reference
      capacity, left only when it climbs above ``constrained_fraction + hysteresis`` of it;
    - otherwise ``sustainer`` while the trend is flat or falling (forward) and ``scaling``
      while it rises (backward): the trend compares the mean now with the mean
      ``trend_samples`` earlier, and changes only past ``trend_fraction`` relative change.

    [GAP] the thesis describes no detector ("the near-future with the movement pattern and speed
    or ... a network assistant"): every threshold is a parameter. ``reference_bps`` is the cell's
    peak capacity when known; without it the detector uses the largest mean seen so far, which
    cannot call the start of a backward run constrained (nothing larger has been seen yet).
    """

    def __init__(self, *, startup_s: float = STARTUP_S, window: int = 7,
                 constrained_fraction: float = 0.35, hysteresis: float = 0.1,
                 trend_samples: int = 20, trend_fraction: float = 0.1,
                 reference_bps: float | None = None, direction: str | None = None):
        if window < 1 or trend_samples < 1:
            raise ValueError("window and trend_samples must be >= 1")
        if direction not in (None, "forward", "backward"):
            raise ValueError(f"direction {direction!r}: expected 'forward', 'backward' or None")
        self.startup_s, self.window = startup_s, window
        self.constrained_fraction, self.hysteresis = constrained_fraction, hysteresis
        self.trend_samples, self.trend_fraction = trend_samples, trend_fraction
        self.reference_bps = reference_bps
        self._fixed_direction = direction
        self._direction = direction or "forward"
        self._recent: deque[float] = deque(maxlen=window)
        self._means: deque[float] = deque(maxlen=trend_samples + 1)
        self._peak = 0.0
        self._constrained = False
        self.phase = "startup"

    @property
    def direction(self) -> str:
        return self._direction

    def update(self, t_s: float, capacity_bps: float) -> str:
        self._recent.append(capacity_bps)
        mean = sum(self._recent) / len(self._recent)
        self._means.append(mean)
        self._peak = max(self._peak, mean)
        if self._fixed_direction is None and len(self._means) > self.trend_samples:
            before = self._means[0]
            change = (mean - before) / before if before > 0 else 0.0
            if change > self.trend_fraction:
                self._direction = "backward"
            elif change < -self.trend_fraction:
                self._direction = "forward"
        ref = self.reference_bps if self.reference_bps is not None else self._peak
        if t_s < self.startup_s:
            self.phase = "startup"
            return self.phase
        if ref > 0:
            if self._constrained:
                self._constrained = mean <= (self.constrained_fraction + self.hysteresis) * ref
            else:
                self._constrained = mean < self.constrained_fraction * ref
        if self._constrained:
            self.phase = "constrained"
        else:
            self.phase = "scaling" if self._direction == "backward" else "sustainer"
        return self.phase
