"""rove trace synth, load_trace, and trace-driven scenarios."""

from __future__ import annotations

import pytest

import rove

from conftest import run_cli, shared_traces_dir


@pytest.mark.parametrize("kind", ["constant", "steps", "cellular"])
def test_synth_writes_a_trace_that_load_trace_reads(kind, tmp_path):
    out = tmp_path / f"{kind}.trace"
    r = run_cli("trace", "synth", kind, "-o", out, "--duration", "10s", "--seed", "4")
    assert r.returncode == 0, r.stderr
    stamps = rove.load_trace(str(out))
    assert len(stamps) > 0
    assert stamps == sorted(stamps)
    assert all(isinstance(t, int) and 0 <= t <= 10_000 for t in stamps)
    assert stamps == rove.synth_trace(kind, {}, 10_000, 4)
    lines = out.read_text().splitlines()
    assert lines == [str(t) for t in stamps]


def test_constant_12mbps_is_one_opportunity_per_ms(tmp_path):
    out = tmp_path / "c.trace"
    r = run_cli("trace", "synth", "constant", "-o", out, "--duration", "2s",
                "--param", "rate=12Mbps")
    assert r.returncode == 0, r.stderr
    stamps = rove.load_trace(str(out))
    assert len(stamps) == 2000
    assert stamps[:3] == [1, 2, 3] or stamps[:3] == [0, 1, 2]


def test_synth_params_change_the_trace(tmp_path):
    a = rove.synth_trace("cellular", {"median": "6Mbps"}, 20_000, 1)
    b = rove.synth_trace("cellular", {"median": "24Mbps"}, 20_000, 1)
    assert 2 * len(a) < len(b)


def test_synth_seed_matters():
    assert rove.synth_trace("cellular", {}, 5_000, 1) != rove.synth_trace("cellular", {}, 5_000, 2)
    assert rove.synth_trace("cellular", {}, 5_000, 1) == rove.synth_trace("cellular", {}, 5_000, 1)


def test_scenario_with_a_trace_file(tmp_path):
    trace = tmp_path / "ten.trace"
    r = run_cli("trace", "synth", "constant", "-o", trace, "--duration", "1s",
                "--param", "rate=12Mbps")
    assert r.returncode == 0, r.stderr
    d = {
        "name": "trace-file", "duration": "2s",
        "links": {"down": {"trace": str(trace), "delay": "10ms"},
                  "up": {"rate": "100Mbps", "delay": "10ms"}},
        "flows": [{"name": "f", "path": ["down"], "ack_path": ["up"]}],
    }
    res = rove.run(d)
    # a 12 Mbit/s trace carries at most 12 Mbit/s of goodput
    assert 6.0 < res.summary["flows"][0]["goodput_mbps"] <= 12.0


def test_shared_mahimahi_trace(tmp_path):
    traces = shared_traces_dir()
    if traces is None:
        pytest.skip("shared Mahimahi traces (../shared/traces/mahimahi) are not on this machine")
    down = sorted(traces.glob("*.down"))
    if not down:
        pytest.skip(f"no *.down trace in {traces}")
    stamps = rove.load_trace(str(down[0]))
    assert stamps == sorted(stamps) and len(stamps) > 100
    scenario = tmp_path / "cell.toml"
    scenario.write_text(f"""
name = "cell"
duration = "5s"

[links.down]
trace = "{down[0]}"
delay = "20ms"
buffer = "250pkt"

[links.up]
rate = "100Mbps"
delay = "20ms"

[[flows]]
path = ["down"]
ack_path = ["up"]
""")
    r = run_cli("run", scenario, "-o", tmp_path / "res", "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert (tmp_path / "res" / "summary.json").is_file()
