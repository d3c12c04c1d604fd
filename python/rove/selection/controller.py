"""The ``[[controllers]] kind = "selection"`` table for a context: Table 6.8's plan (Option 2)
for the criterion, latency class, direction and speed, ready to put in a scenario.

The engine's controller (crates/world/src/control/selection.rs, keys read by
crates/scenario/src/selection.rs for both backends) switches the flow's algorithm at each
phase boundary of the thesis's time rule (``thesis_phases``) where the plan changes, handing
the window over with Eq. 6.3 (``handoff = "delay_scaled"``, 7 samples) or keeping it.
"""

from __future__ import annotations

from .handoff import HANDOFF_SAMPLES
from .policy import option2_plan

HANDOFFS = ("delay_scaled", "keep")


def controller_spec(criterion: str, latency: str, direction: str, speed: int, *,
                    flow: str, handoff: str = "delay_scaled",
                    samples: int = HANDOFF_SAMPLES) -> dict:
    """A selection controller's table, e.g. for ("goodput", "4g", "backward", 300):
    ``{"kind": "selection", "flow": flow, "plan": ["bbr", "illinois"], "direction":
    "backward", "speed": "300km/h", "phases": "time", "handoff": "delay_scaled",
    "samples": 7}``. The flow must set up with ``plan[0]`` (its ``cc``). A single-algorithm
    row of Table 6.8 gives a one-element plan (no switch)."""
    if handoff not in HANDOFFS:
        raise ValueError(f"handoff {handoff!r}: expected one of {', '.join(HANDOFFS)}")
    spec = {"kind": "selection", "flow": flow,
            "plan": list(option2_plan(criterion, latency, direction, speed)),
            "direction": direction, "speed": f"{speed}km/h", "phases": "time",
            "handoff": handoff}
    if handoff == "delay_scaled":
        spec["samples"] = samples
    return spec


__all__ = ["controller_spec", "HANDOFFS"]
