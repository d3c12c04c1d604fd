"""A simulation you can step, look into and steer from Python: prototype a controller in a
notebook, then write it in Rust (``crates/world/src/control/``) once it works.

    sim = rove.Simulation("scenarios/demo.toml")
    sim.run_until("10s")
    sim.flow("reno").stats()                  # per subflow: cwnd, srtt, mode, algorithm, ...
    sim.flow("reno").set_cc("bbr", handoff="keep")
    result = sim.run()                        # the same RunResult as rove.run

Every change goes through the engine's one action parser and ``World::apply``: a change made
here means exactly what the same ``[[actions]]`` table means in a scenario file
(docs/scenario-format.md#actions).
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms at start-up)

if TYPE_CHECKING:  # annotations only
    from typing import Any

from . import _core
from .units import parse_time_ns

__all__ = ["Simulation", "FlowHandle", "LinkHandle"]


def _seconds(t) -> float:
    """``"10s"``, ``"250ms"`` or a number of seconds."""
    if isinstance(t, str):
        return parse_time_ns(t) / 1e9
    return float(t)


class Simulation:
    """A scenario loaded and ready to run step by step (same arguments as :func:`rove.run`)."""

    def __init__(self, scenario, seed: int | None = None, overrides=None, no_limit: bool = False,
                 **kw_overrides):
        from . import _guarded, _overrides, _scenario_source

        text, source, base_dir = _scenario_source(scenario)
        ovr = _overrides(overrides) + _overrides(kw_overrides)
        _guarded(text, source, base_dir, ovr, seed, no_limit)
        self._t0 = time.perf_counter()
        self._sim = _core.Simulation(text, source, base_dir, ovr, seed)
        self._done = False

    @property
    def now_s(self) -> float:
        return self._sim.now_ns / 1e9

    @property
    def duration_s(self) -> float:
        return self._sim.duration_ns / 1e9

    @property
    def flows(self) -> list[str]:
        return list(self._sim.flow_names)

    @property
    def links(self) -> list[str]:
        return list(self._sim.link_names)

    def run_until(self, t) -> "Simulation":
        """Run to simulated time ``t`` ("10s" or seconds): every event before ``t`` happens, and
        a change made next happens at ``t`` before anything else then, exactly as an
        ``[[actions]]`` entry with ``at = t`` would."""
        self._check_open()
        ns = round(_seconds(t) * 1e9)
        if ns < self._sim.now_ns:
            raise ValueError(f"run_until: {t} is before now ({self.now_s} s)")
        self._sim.advance_to(ns)
        return self

    def flow(self, name: str) -> "FlowHandle":
        if name not in self._sim.flow_names:
            raise _core.ScenarioError(f"unknown flow {name!r}; flows are: {', '.join(self.flows)}")
        return FlowHandle(self, name)

    def link(self, name: str) -> "LinkHandle":
        if name not in self._sim.link_names:
            raise _core.ScenarioError(f"unknown link {name!r}; links are: {', '.join(self.links)}")
        return LinkHandle(self, name)

    def act(self, **action: Any) -> None:
        """Apply one action now, given as the keys of an ``[[actions]]`` table
        (``sim.act(flow="a", cc="bbr", handoff="set", cwnd=40)``)."""
        import tomli_w

        self._check_open()
        action = {k: v for k, v in action.items() if v is not None}
        self._sim.act(tomli_w.dumps(action))

    def run(self, out: str | os.PathLike | None = None):
        """Run to the end and return the :class:`rove.RunResult` (written to ``out`` if given)."""
        from . import _result_from_sim

        self._check_open()
        ended = self._sim.finish_run()
        self._done = True
        return _result_from_sim(self._sim, ended, time.perf_counter() - self._t0, out)

    def _check_open(self) -> None:
        if self._done:
            raise RuntimeError("this simulation has finished; make a new one")


class FlowHandle:
    """One flow of a :class:`Simulation`."""

    def __init__(self, sim: Simulation, name: str):
        self._sim, self.name = sim, name

    def stats(self) -> list[dict]:
        """Per subflow (one entry for a single-path flow): what a controller sees."""
        return list(self._sim._sim.flow_stats(self.name))

    def set_cc(self, cc: str, handoff: str = "keep", cwnd: int | None = None,
               ssthresh: int | None = None, cc_params: dict | None = None,
               subflow: int | None = None, samples: int | None = None) -> None:
        """Switch the congestion control now (Linux ``setsockopt(TCP_CONGESTION)``); the
        handoff is ``"keep"``, ``"set"`` (with ``cwnd``/``ssthresh``) or ``"delay_scaled"``
        (seed-002 Eq. 6.3 over the last ``samples`` RTT samples, default 7)."""
        self._sim.act(flow=self.name, subflow=subflow, cc=cc, handoff=handoff, cwnd=cwnd,
                      ssthresh=ssthresh, cc_params=cc_params, samples=samples)

    def clamp_rwnd(self, size: str) -> None:
        """Clamp the advertised receive window from now on (``TCP_WINDOW_CLAMP``)."""
        self._sim.act(flow=self.name, rwnd=size)

    def add_subflow(self, path: list[str], ack_path: list[str]) -> None:
        self._sim.act(flow=self.name, add_subflow={"path": path, "ack_path": ack_path})

    def remove_subflow(self, subflow: int) -> None:
        self._sim.act(flow=self.name, subflow=subflow, remove=True)

    def pause_subflow(self, subflow: int) -> None:
        self._sim.act(flow=self.name, subflow=subflow, pause=True)

    def resume_subflow(self, subflow: int) -> None:
        self._sim.act(flow=self.name, subflow=subflow, resume=True)


class LinkHandle:
    """One link of a :class:`Simulation`."""

    def __init__(self, sim: Simulation, name: str):
        self._sim, self.name = sim, name

    def stats(self) -> dict:
        return dict(self._sim._sim.link_stats(self.name))

    def set(self, rate: str | None = None, delay: str | None = None,
            loss: float | None = None) -> None:
        """Change the link from now on; one parameter per call, as one action each."""
        given = {k: v for k, v in (("rate", rate), ("delay", delay), ("loss", loss)) if v is not None}
        for key, value in given.items():
            self._sim.act(link=self.name, **{key: value})
