"""The stepping API (rove.Simulation) and what a run writes when it acts: a change made from
Python means what the same [[actions]] entry means, and feature recorders land in
features.parquet."""

from __future__ import annotations

import pandas as pd
import pytest

import rove
from rove.results import read_results

SCENARIO = {
    "duration": "8s",
    "seed": 3,
    "links": {
        "down": {"rate": "20Mbps", "delay": "20ms", "buffer": "100pkt"},
        "up": {"rate": "1Gbps", "delay": "20ms"},
    },
    "flows": [{"name": "a", "cc": "cubic", "path": ["down"], "ack_path": ["up"]}],
}


def with_actions(*actions) -> dict:
    return {**SCENARIO, "actions": list(actions)}


def test_a_change_from_python_equals_the_same_scheduled_action():
    scheduled = rove.run(with_actions({"at": "4s", "flow": "a", "cc": "bbr", "handoff": "set",
                                       "cwnd": 40}))
    sim = rove.Simulation(SCENARIO)
    sim.run_until("4s")
    assert sim.now_s == 4.0
    assert sim.flow("a").stats()[0]["cc"] == "cubic"
    sim.flow("a").set_cc("bbr", handoff="set", cwnd=40)
    assert sim.flow("a").stats()[0]["cwnd_pkts"] == 40
    stepped = sim.run()
    cols = ["time_s", "cc", "cwnd_pkts", "cc_state", "bytes_delivered"]
    pd.testing.assert_frame_equal(scheduled.timeseries[cols], stepped.timeseries[cols])
    assert set(stepped.timeseries.loc[stepped.timeseries.time_s >= 4, "cc"]) == {"bbr"}
    assert set(stepped.timeseries.loc[stepped.timeseries.time_s < 4, "cc"]) == {"cubic"}


def test_a_delay_scaled_handoff_from_python_equals_the_scheduled_one():
    """seed-002 Eq. 6.3 through set_cc: the same window as the [[actions]] entry, and that
    window is the mean cwnd of the last 5 samples times Dmin / their mean RTT (< the live one
    with a standing queue)."""
    scheduled = rove.run(with_actions({"at": "4s", "flow": "a", "cc": "reno",
                                       "handoff": "delay_scaled", "samples": 5}))
    sim = rove.Simulation(SCENARIO).run_until("4s")
    before = sim.flow("a").stats()[0]
    sim.flow("a").set_cc("reno", handoff="delay_scaled", samples=5)
    after = sim.flow("a").stats()[0]
    assert after["cc"] == "reno" and 2 <= after["cwnd_pkts"] < before["cwnd_pkts"]
    stepped = sim.run()
    cols = ["time_s", "cc", "cwnd_pkts", "bytes_delivered"]
    pd.testing.assert_frame_equal(scheduled.timeseries[cols], stepped.timeseries[cols])


def test_stats_show_what_a_controller_sees():
    sim = rove.Simulation(SCENARIO).run_until("2s")
    (s,) = sim.flow("a").stats()
    assert s["cc"] == "cubic" and s["ca_state"] in ("open", "disorder", "recovery", "cwr", "loss")
    assert 40.0 <= s["min_rtt_ms"] < 41.0  # 2 x 20 ms plus serialization
    assert s["srtt_ms"] >= s["min_rtt_ms"] and s["cwnd_pkts"] >= s["inflight_pkts"] > 0
    link = sim.link("down").stats()
    assert 0.0 < link["utilization"] <= 1.0 and link["backlog_pkts"] <= 100


def test_link_and_window_changes_take_effect():
    sim = rove.Simulation(SCENARIO).run_until("4s")
    sim.link("down").set(rate="5Mbps")
    sim.flow("a").clamp_rwnd("64KB")
    r = sim.run()
    # The clamp never moves the window's right edge left (tcp_select_window), so it holds once
    # the ACKs pass the edge advertised before it: the auto-tuned window was ~2.5 MB, which
    # takes until ~6.9 s at 5 Mbit/s.
    late = r.timeseries[r.timeseries.time_s >= 7.2]
    assert (late.inflight_pkts * 1448 <= 65536).all()
    before = r.timeseries[(r.timeseries.time_s >= 4.5) & (r.timeseries.time_s < 6.5)]
    assert (before.inflight_pkts * 1448 > 65536).all()
    delivered = late.bytes_delivered.to_numpy()
    rate_mbps = (delivered[-1] - delivered[0]) * 8 / (late.time_s.iloc[-1] - late.time_s.iloc[0]) / 1e6
    assert 3.0 < rate_mbps <= 5.0


def test_bad_changes_are_one_line_scenario_errors():
    sim = rove.Simulation(SCENARIO).run_until("1s")
    with pytest.raises(rove.ScenarioError, match=r'unknown congestion control "vegs"'):
        sim.flow("a").set_cc("vegs")
    with pytest.raises(rove.ScenarioError, match=r"goes with handoff"):
        sim.act(flow="a", cc="bbr", cwnd=10)
    with pytest.raises(rove.ScenarioError, match=r"subflow selects a subflow of a multipath flow"):
        sim.flow("a").remove_subflow(0)
    with pytest.raises(rove.ScenarioError, match=r"unknown flow 'b'"):
        sim.flow("b")
    with pytest.raises(ValueError, match="before now"):
        sim.run_until("0.5s")


def test_a_feature_recorder_writes_features_parquet(tmp_path):
    scenario = {**SCENARIO, "controllers": [{"kind": "features", "every": "100ms",
                                             "link": "down"}]}
    r = rove.run(scenario, out=tmp_path / "r")
    f = r.features
    assert len(f) == 80  # 8 s every 100 ms, one flow
    assert {"srtt_ms", "cwnd_pkts", "link_backlog_pkts", "controller"} <= set(f.columns)
    assert (tmp_path / "r" / "features.parquet").is_file()
    again = read_results(tmp_path / "r").features
    pd.testing.assert_frame_equal(again, f)


def test_controller_keys_are_checked_before_the_run():
    bad = {**SCENARIO, "controllers": [{"kind": "features", "every": "100ms", "flwo": "a"}]}
    with pytest.raises(rove.ScenarioError, match=r"controllers\[0\]\.flwo: unknown key; accepted"):
        rove.validate(bad)
    bad = {**SCENARIO, "controllers": [{"kind": "feature"}]}
    with pytest.raises(rove.ScenarioError, match=r'unknown kind "feature"; known: features'):
        rove.validate(bad)
