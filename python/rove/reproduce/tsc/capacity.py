"""Ch. 4's time-varying capacities as rate schedules (seed-003 §4.2, §4.5; research/seed-003.md
§4.5), written into ``scenarios/tsc/ch4-*.toml`` and ``scenarios/tsc/sweeps/ch4-spc.toml`` as
``rate_cycle`` tables, so a run reads its capacity from its scenario like any other link.

* Periodic (§4.5, Fig. 4.7-4.8): the capacity c for 4 s, then c/5 for 1 s, repeating ("1/5 of
  it for 1 s in every 5 s"; §4.3's Cubic study uses 1/2, Ch. 4's evaluation 1/5).
  [GAP] where the low second falls in the 5 s: last, so every run starts at c as the static
  one does.
* Random walk (§4.2, §4.5, Fig. 4.9): the capacity is held for "several seconds", then jumps
  "at a random time" to a level "between 1/5× and 8×" of a base. The base, the hold time and
  the level's distribution are [UNSPECIFIED]. Chosen here [GAP]: base 10 Mbit/s, so the levels
  span 2-80 Mbit/s, the static settings' range (20-80) and below; holds of a whole number of
  seconds drawn uniformly from 2 to 6; levels log-uniform on [1/5, 8] × base (a jump is as
  likely to halve as to double), rounded to 0.1 Mbit/s; independent draws from numpy's PCG64
  seeded with the walk's number. Each walk is a ``rate_cycle`` of 1-s entries as long as the
  run, so it never repeats within it.
"""

from __future__ import annotations

import math

import numpy as np

# §4.5: "1/5 of it for 1 s in every 5 s".
PERIOD_S = 5
LOW_FOR_S = 1
LOW_FACTOR = 1 / 5
# §4.5: "between 1/5× and 8×" of a base; [GAP] the base, the holds.
WALK_BASE_MBPS = 10.0
WALK_LOW, WALK_HIGH = 1 / 5, 8.0
WALK_HOLD_S = (2, 6)


def _mbps(x: float) -> str:
    return f"{x:g}Mbps"


def periodic_cycle(capacity_mbps: float) -> dict:
    """The periodic capacity as a ``rate_cycle`` table: c for PERIOD_S − LOW_FOR_S seconds,
    then c·LOW_FACTOR for LOW_FOR_S, repeating."""
    high = [_mbps(capacity_mbps)] * (PERIOD_S - LOW_FOR_S)
    return {"period": "1s", "rates": high + [_mbps(capacity_mbps * LOW_FACTOR)] * LOW_FOR_S}


def random_walk_steps(walk: int, duration_s: int, base_mbps: float = WALK_BASE_MBPS,
                      low: float = WALK_LOW, high: float = WALK_HIGH,
                      hold_s: tuple[int, int] = WALK_HOLD_S) -> list[tuple[float, int]]:
    """Walk number ``walk`` as its draws: (level in Mbit/s, hold in s), enough to cover
    ``duration_s`` seconds (the last one may run past the end; see the module's [GAP]s)."""
    if duration_s < 1 or walk < 0:
        raise ValueError(f"duration_s >= 1 and walk >= 0 expected, got {duration_s}, {walk}")
    rng = np.random.default_rng(walk)
    steps: list[tuple[float, int]] = []
    while sum(h for _, h in steps) < duration_s:
        hold = int(rng.integers(hold_s[0], hold_s[1] + 1))
        level = base_mbps * math.exp(rng.uniform(math.log(low), math.log(high)))
        steps.append((round(level, 1), hold))
    return steps


def random_walk_mbps(walk: int, duration_s: int, **kw) -> list[float]:
    """Walk number ``walk``: the capacity (Mbit/s) of each second of a ``duration_s``-second
    run (:func:`random_walk_steps`, each level repeated for its hold)."""
    out = [level for level, hold in random_walk_steps(walk, duration_s, **kw)
           for _ in range(hold)]
    return out[:duration_s]


def random_walk_cycle(walk: int, duration_s: int) -> dict:
    """Walk number ``walk`` as a ``rate_cycle`` table of 1-s entries."""
    return {"period": "1s", "rates": [_mbps(x) for x in random_walk_mbps(walk, duration_s)]}
