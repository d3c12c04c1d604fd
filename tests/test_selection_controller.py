"""The selection controller (issue 17 item 2) from Python: the Rust time rule both backends use
equals ``rove.selection.thesis_phases``, ``controller_spec`` gives Table 6.8's plan, and the
committed LTE scenario switches at its phase boundary in a simulator run."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import rove
from rove import _core, selection

REPO = Path(__file__).resolve().parent.parent
LTE_B300 = REPO / "scenarios" / "selection" / "lte-backward-300.toml"

# The thesis's speeds, and others that take the 166.7 m rule (a fraction of a second, a whole
# number of seconds, a very fast and a slow one).
SPEEDS = (60, 120, 300, 90, 150, 200, 250, 30, 500)


@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("speed", SPEEDS)
@pytest.mark.parametrize("duration", [12.5, 30, 60, 101.3])
def test_the_rust_schedule_equals_thesis_phases(direction, speed, duration):
    try:
        py = [(p.name, p.start_s, p.end_s)
              for p in selection.thesis_phases(direction, speed, duration)]
    except ValueError:  # too short for the phases (30 km/h: 20 s constrained): Rust refuses too
        with pytest.raises(ValueError, match="longer than"):
            _core.selection_phases(direction, speed, duration)
        return
    rust = _core.selection_phases(direction, speed, duration)
    assert [n for n, *_ in rust] == [n for n, *_ in py]
    for (_, a0, a1), (_, b0, b1) in zip(rust, py):
        assert a0 == pytest.approx(b0, abs=1e-9) and a1 == pytest.approx(b1, abs=1e-9)


@pytest.mark.parametrize("direction, speed, startup, constrained", [
    ("forward", 60, 3.0, 4.0), ("backward", 120, 1.5, 7.25), ("backward", 300, 2.5, 6.0),
    ("forward", 75, 0.5, 0.0)])
def test_the_rust_schedule_equals_thesis_phases_with_given_durations(direction, speed, startup,
                                                                       constrained):
    py = selection.thesis_phases(direction, speed, 30, startup_s=startup, constrained_s=constrained)
    rust = _core.selection_phases(direction, speed, 30, startup, constrained)
    assert rust == [(p.name, pytest.approx(p.start_s), pytest.approx(p.end_s)) for p in py]


@pytest.mark.parametrize("direction, speed, duration", [
    ("forward", 60, 12.0), ("backward", 120, 7.0), ("backward", 300, 2.0), ("sideways", 60, 30),
    ("forward", 0, 30)])
def test_both_refuse_the_same_impossible_cases(direction, speed, duration):
    with pytest.raises(ValueError):
        selection.thesis_phases(direction, speed, duration)
    with pytest.raises(ValueError):
        _core.selection_phases(direction, speed, duration)


def test_controller_spec_is_table_6_8s_plan_ready_for_a_scenario():
    assert selection.controller_spec("goodput", "4g", "backward", 300, flow="ue") == {
        "kind": "selection", "flow": "ue", "plan": ["bbr", "illinois"], "direction": "backward",
        "speed": "300km/h", "phases": "time", "handoff": "delay_scaled", "samples": 7}
    # A single-algorithm row of Table 6.8 (G-4G B120: BBR throughout): the same algorithm in
    # every phase, so the controller never switches.
    keep = selection.controller_spec("goodput", "4g", "backward", 120, flow="f", handoff="keep")
    assert keep["plan"] == ["bbr"] * 3 and "samples" not in keep
    with pytest.raises(ValueError, match="handoff"):
        selection.controller_spec("goodput", "4g", "backward", 300, flow="f", handoff="set")
    with pytest.raises(ValueError, match="Table 6.8 has no case"):
        selection.controller_spec("goodput", "4g", "backward", 90, flow="f")


def test_the_committed_scenario_runs_table_6_8s_plan_for_its_context():
    doc = tomllib.loads(LTE_B300.read_text())
    (controller,) = doc["controllers"]
    assert controller == selection.controller_spec("goodput", "4g", "backward", 300,
                                                   flow="ue")
    (flow,) = doc["flows"]
    assert flow["cc"] == controller["plan"][0]
    # The thesis's backward (quality rising) is rove's LTE "forward" (towards the eNodeB).
    assert doc["links"]["cell"]["ues"]["ue"]["direction"] == "forward"
    assert doc["links"]["cell"]["ues"]["ue"]["speed"] == controller["speed"]


def test_the_committed_scenario_switches_at_the_end_of_start_up_in_the_simulator():
    # BBR for the 2 s start-up, Illinois for scaling: the 2.00 s sample is Illinois's (the
    # switch is the first event at 2 s). Measured: cwnd 314 before, 239 after (Eq. 6.3 over the
    # last 7 ACK samples; crates/world/tests/selection.rs recomputes it), min RTT 68.3 ms.
    ts = rove.run(LTE_B300).timeseries
    first = ts.groupby("cc").time_s.min()
    assert set(first.index) == {"bbr", "illinois"}
    assert first["illinois"] == pytest.approx(2.0)
    assert ts.loc[ts.time_s < 2.0, "cc"].eq("bbr").all()
    assert ts.loc[ts.time_s >= 2.0, "cc"].eq("illinois").all()
    before = ts.loc[ts.time_s < 2.0, "cwnd_pkts"].iloc[-1]
    after = ts.loc[ts.time_s >= 2.0, "cwnd_pkts"].iloc[0]
    assert after < before, (before, after)  # the standing queue taken out
    assert 66 <= ts.min_rtt_ms[ts.min_rtt_ms > 0].min() <= 70  # the thesis's 4G class, 68 ms


def test_a_run_switches_at_every_boundary_of_thesis_phases_at_another_speed():
    # Forward at 90 km/h for 20 s: start-up 0-2 s, sustainer 2-13.33 s, constrained 13.33-20 s;
    # the switch lands on the boundary, so the first sample of each algorithm is the first on
    # or after it (10 ms samples).
    phases = selection.thesis_phases("forward", 90, 20)
    scenario = {
        "duration": "20s",
        "links": {"down": {"rate": "20Mbps", "delay": "20ms", "buffer": "100pkt"},
                  "up": {"rate": "1Gbps", "delay": "20ms"}},
        "flows": [{"name": "a", "cc": "reno", "path": ["down"], "ack_path": ["up"]}],
        "controllers": [{"kind": "selection", "flow": "a", "plan": ["reno", "cubic", "bbr"],
                         "direction": "forward", "speed": "90km/h"}],
    }
    ts = rove.run(scenario).timeseries
    first = ts.groupby("cc").time_s.min()
    for phase, cc in zip(phases[1:], ["cubic", "bbr"]):
        assert phase.start_s <= first[cc] < phase.start_s + 0.01 + 1e-9, (phase, first[cc])
