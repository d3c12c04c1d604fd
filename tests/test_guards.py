"""Resource guards (python/rove/guards.py, crates/world/src/estimate.rs): runs that cannot fit
are refused before anything is built, with the estimate in a one-line error and exit 2;
``--no-limit`` runs them; the estimate tracks what runs really cost; Ctrl-C stops any run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import rove
from rove import guards

from conftest import REPO, run_cli

BASE = """
name = "g"
duration = "{duration}"
seed = 1
sample_interval = "{interval}"

[links.d]
rate = "{rate}"
delay = "10ms"

[links.u]
rate = "{rate}"
delay = "10ms"

[[flows]]
name = "f"
cc = "cubic"
path = ["d"]
ack_path = ["u"]
count = {count}
"""


def _scenario(tmp_path, duration="5s", interval="10ms", rate="100Mbps", count=1, name="s.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(BASE.format(duration=duration, interval=interval, rate=rate,
                                             count=count)).lstrip())
    return p


def _refused(r) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rove: error: "), r.stderr
    return lines[0]


def test_nanosecond_sampling_is_refused_with_its_estimate(tmp_path):
    s = _scenario(tmp_path, interval="1ns")
    for cmd in ("validate", "run"):
        args = [cmd, s] + (["-o", tmp_path / "out"] if cmd == "run" else [])
        line = _refused(run_cli(*args))
        # 5 s / 1 ns = 5e9 samples per flow, named in the message with the event estimate
        assert "sample_interval: 1 ns is below the 1 ms minimum" in line
        assert "5,000,000,000 samples per flow" in line and "events" in line
    assert not (tmp_path / "out").exists()


def test_fine_sampling_runs_with_no_limit_when_it_fits(tmp_path):
    s = _scenario(tmp_path, duration="2ms", interval="100us")
    r = run_cli("run", s, "-o", tmp_path / "out", "-q", "--no-limit")
    assert r.returncode == 0, r.stderr
    res = rove.read_results(tmp_path / "out")
    assert len(res.timeseries) == 20  # 2 ms / 100 µs


def test_a_hundred_thousand_flows_are_refused_beyond_the_memory_available(tmp_path):
    s = _scenario(tmp_path, duration="1s", count=100_000)
    env = dict(os.environ, ROVE_MEMORY_LIMIT="2GiB")
    line = _refused(run_cli("validate", s, env=env))
    assert "needs about" in line and "100,000 flows" in line and "2.0 GiB available" in line
    assert "--no-limit" in line
    # The same with the override is accepted (validated, not run here: it takes 25 s).
    r = run_cli("validate", s, "--no-limit", env=env)
    assert r.returncode == 0, r.stderr
    assert "100000 flows" in r.stdout and "GiB peak memory" in r.stdout


def test_hundred_thousand_flows_run_with_no_limit_when_short(tmp_path):
    s = _scenario(tmp_path, duration="10ms", count=100_000)
    env = dict(os.environ, ROVE_MEMORY_LIMIT="512MiB")
    _refused(run_cli("run", s, "-o", tmp_path / "out", "-q", env=env))
    r = run_cli("run", s, "-o", tmp_path / "out", "-q", "--no-limit", env=env)
    assert r.returncode == 0, r.stderr
    assert len(rove.read_results(tmp_path / "out").summary["flows"]) == 100_000


def test_a_grid_of_a_hundred_million_points_is_refused_before_anything_runs(tmp_path):
    s = _scenario(tmp_path, duration="1s")
    sweep = tmp_path / "sweep.toml"
    values = ", ".join(f'"{r}Mbps"' for r in range(1, 101))
    delays = ", ".join(f'"{d}ms"' for d in range(1, 101))
    buffers = ", ".join(f'"{b}pkt"' for b in range(10, 110))
    sizes = ", ".join(f'"{k}MB"' for k in range(1, 101))
    sweep.write_text(f'scenario = "s.toml"\n[grid]\n"links.d.rate" = [{values}]\n'
                     f'"links.d.delay" = [{delays}]\n"links.d.buffer" = [{buffers}]\n'
                     f'"flows.0.size" = [{sizes}]\n')
    t0 = time.monotonic()
    line = _refused(run_cli("sweep", sweep, "-o", tmp_path / "sw"))
    assert time.monotonic() - t0 < 30
    assert "100,000,000 points" in line
    assert not (tmp_path / "sw").exists()


def test_a_misspelt_grid_key_fails_before_any_point_runs(tmp_path):
    _scenario(tmp_path)
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('scenario = "s.toml"\n[grid]\n"links.d.rate" = ["10Mbps", "20Mbps"]\n'
                     '"flows.0.ccc" = ["reno", "bbr"]\n')
    line = _refused(run_cli("sweep", sweep, "-o", tmp_path / "sw"))
    assert 'grid."flows.0.ccc"' in line or "ccc" in line
    assert not (tmp_path / "sw").exists()


def test_a_bad_grid_value_names_its_key_and_value(tmp_path):
    _scenario(tmp_path)
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('scenario = "s.toml"\n[grid]\n"flows.0.cc" = ["reno", "bbbr"]\n')
    line = _refused(run_cli("sweep", sweep, "-o", tmp_path / "sw"))
    assert 'grid."flows.0.cc" = bbbr' in line
    assert not (tmp_path / "sw").exists()


def test_a_sweep_naming_itself_as_its_scenario_fails_before_running(tmp_path):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('scenario = "sweep.toml"\n[grid]\n"duration" = ["1s", "2s"]\n')
    line = _refused(run_cli("sweep", sweep, "-o", tmp_path / "sw"))
    assert "sweep.toml" in line
    assert not (tmp_path / "sw").exists()


@pytest.mark.parametrize("count,duration", [(10, "60s"), (2000, "3s")])
def test_the_estimate_is_within_a_factor_of_two_of_the_real_peak(tmp_path, count, duration):
    s = _scenario(tmp_path, duration=duration, count=count, rate="1Gbps")
    est = rove.validate(s)["estimate"]
    # VmHWM, the high-water mark of this process's own memory: getrusage's ru_maxrss would
    # carry over the parent's (pytest's, hundreds of MB late in the suite) across fork and exec.
    code = textwrap.dedent(f"""
        import rove
        rove.run({str(s)!r}, out={str(tmp_path / 'out')!r})
        hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
        print(int(hwm.split()[1]) * 1024)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO / "python")))
    assert r.returncode == 0, r.stderr
    peak = int(r.stdout.split()[-1])
    assert peak / 2 <= est["memory_bytes"] <= peak * 2, (peak, est)
    events = rove.read_results(tmp_path / "out").summary["events"]
    assert events / 2 <= est["events"] <= events * 2, (events, est)


def test_ctrl_c_stops_a_long_engine_call_promptly(tmp_path):
    # One call that would run ~20 s of engine time: before, SIGINT waited for it to return.
    s = _scenario(tmp_path, duration="600s", rate="1Gbps", count=10)
    code = textwrap.dedent(f"""
        import rove, time
        text = open({str(s)!r}).read()
        sim = rove._core.Simulation(text, "s.toml", None, [], None)
        print("ready", flush=True)
        try:
            sim.run_until(sim.duration_ns)
        except KeyboardInterrupt:
            print("interrupted at", sim.now_ns, flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO / "python")))
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    took = time.monotonic() - t0
    assert "interrupted at" in out, out
    assert took < 3.0, f"SIGINT took {took:.1f} s to stop the run"
    stopped_at = int(out.split()[-1])
    assert 0 < stopped_at < 600 * 10**9


def test_available_memory_honours_rove_memory_limit(monkeypatch):
    monkeypatch.setenv("ROVE_MEMORY_LIMIT", "1.5GiB")
    assert guards.available_memory() <= int(1.5 * 2**30)
    monkeypatch.setenv("ROVE_MEMORY_LIMIT", "lots")
    with pytest.raises(guards.LimitError, match="ROVE_MEMORY_LIMIT"):
        guards.available_memory()


def test_limit_check_is_symmetric_in_its_inputs():
    est = {"sample_interval_ns": 10**7, "samples": 100, "events": 1e6, "memory_bytes": 10**9,
           "flows": 1, "flow_state_bytes": 0, "series_bytes": 10**9, "queue_bytes": 0,
           "link_crossings": 0.0}
    guards.check(est, "x", available=2 * 10**9)            # 1 GB of a 1.6 GB budget: fits
    with pytest.raises(guards.LimitError, match="2 parallel runs"):
        guards.check(est, "x", available=2 * 10**9, parallel=2)
    guards.check(est, "x", available=10**8, no_limit=True)
