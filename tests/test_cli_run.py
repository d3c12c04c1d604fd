"""rove run / validate output, progress bar and interruption."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rove import drive

from conftest import SMALL_SCENARIO, rove_command, run_cli


def test_validate_prints_one_line_digest(write_scenario):
    r = run_cli("validate", write_scenario(SMALL_SCENARIO))
    assert r.returncode == 0, r.stderr
    # The estimate by hand (crates/world/src/estimate.rs): 2 s at 20 Mbit/s is 3333 packets of
    # 1500 B and 1667 ACKs, two events per link crossing, plus 200 samples x (1 flow + 2 links)
    assert r.stdout.startswith("ok: small, 2 s, 2 links, 1 flow; estimate ~10.6 k events, ~")
    assert r.stdout.endswith(" MiB peak memory\n")


def test_validate_counts_expanded_flows(write_scenario):
    s = write_scenario(SMALL_SCENARIO + "count = 4\n")
    r = run_cli("validate", s, "--set", "duration=90s")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok: small, 90 s, 2 links, 4 flows; estimate ~")


def test_run_prints_a_line_per_flow_and_writes_results(write_scenario, tmp_path):
    s = write_scenario(SMALL_SCENARIO + "count = 2\n")
    out = tmp_path / "out"
    r = run_cli("run", s, "-o", out, "--seed", "3", "--set", "links.down.rate=10Mbps")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("small: 2 s simulated")
    assert any(ln.strip().startswith("bulk.1 ") for ln in lines)
    assert any(ln.strip().startswith("bulk.2 ") for ln in lines)
    assert r.stderr == ""  # no progress bar when stderr is not a terminal
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 3
    assert all(f["goodput_mbps"] <= 10.0 for f in summary["flows"])


def test_quiet_run_prints_nothing(write_scenario, tmp_path):
    r = run_cli("run", write_scenario(SMALL_SCENARIO), "-o", tmp_path / "o", "--quiet")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""


class _SlowSim:
    """Stands in for rove._core.Simulation: 20 chunks of 60 ms each."""

    duration_ns = 2_000_000_000
    now_ns = 0

    def __init__(self):
        self.calls = []

    def run_until(self, t):
        time.sleep(0.06)
        self.calls.append(t)
        self.now_ns = t


def test_drive_runs_in_chunks_and_shows_progress_after_the_delay(capsys):
    sim = _SlowSim()
    drive(sim, progress=True, chunks=20, show_after_s=0.3)
    assert sim.calls == [100_000_000 * i for i in range(1, 21)]
    err = capsys.readouterr().err
    assert "simulated" in err  # the bar appeared once 0.3 s had passed


def test_drive_without_progress_is_silent(capsys):
    drive(_SlowSim(), progress=False, chunks=5)
    assert capsys.readouterr().err == ""


# About 20 s of work for the engine (600 s of 20 flows at 1 Gbit/s); the tests stop it after 1 s.
LONG = """
name = "long"
duration = "600s"

[links.bottleneck]
rate = "1Gbps"
delay = "20ms"
buffer = "1000pkt"

[links.ack]
rate = "10Gbps"
delay = "20ms"

[[flows]]
name = "f"
path = ["bottleneck"]
ack_path = ["ack"]
count = 20
"""


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_leaves_no_output_dir(sig, code, tmp_path):
    scenario = tmp_path / "long.toml"
    scenario.write_text(LONG)
    out = tmp_path / "out"
    proc = subprocess.Popen(rove_command() + ["run", str(scenario), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    if proc.poll() is not None:
        pytest.fail(f"the 600 s run finished within 1 s; make LONG longer: {proc.communicate()}")
    proc.send_signal(sig)
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("rove run did not stop within 60 s of the signal")
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.toml"]


def test_interrupt_keeps_previous_results(write_scenario, tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", write_scenario(SMALL_SCENARIO), "-o", out, "--quiet").returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    scenario = tmp_path / "long.toml"
    scenario.write_text(LONG)
    proc = subprocess.Popen(rove_command() + ["run", str(scenario), "-o", str(out), "--force"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_an_unfinished_transfer_is_flagged(write_scenario, tmp_path):
    # 10 MB over 10 Mbit/s needs 8 s; the run lasts 2 s.
    s = write_scenario(SMALL_SCENARIO)
    out = tmp_path / "out"
    r = run_cli("run", s, "-o", out, "--set", "flows.0.size=10MB", "--set", "duration=2s",
                "--set", "links.down.rate=10Mbps")
    assert r.returncode == 0, r.stderr
    f = json.loads((out / "summary.json").read_text())["flows"][0]
    assert f["completed"] is False and f["fct_s"] is None
    assert f["bytes_left"] == 10_000_000 - f["bytes_delivered"] > 0
    assert "unfinished" in r.stdout
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("rove: warning: ")]
    assert len(warnings) == 1 and "did not finish" in warnings[0]
    # A transfer that finishes says so, and a bulk flow has neither key set.
    r = run_cli("run", s, "-o", out, "--force", "--set", "flows.0.size=100KB", "-q")
    assert r.returncode == 0 and r.stderr == ""
    f = json.loads((out / "summary.json").read_text())["flows"][0]
    assert f["completed"] is True and f["bytes_left"] == 0 and f["fct_s"] is not None
    r = run_cli("run", s, "-o", out, "--force", "-q")
    f = json.loads((out / "summary.json").read_text())["flows"][0]
    assert f["completed"] is None and f["bytes_left"] is None


def test_a_flow_that_delivers_nothing_is_reported(write_scenario, tmp_path):
    # At 1 bit/s the 60-byte SYN alone takes 480 s.
    r = run_cli("run", write_scenario(SMALL_SCENARIO), "-o", tmp_path / "out",
                "--set", "links.down.rate=1bps")
    assert r.returncode == 0, r.stderr
    assert "rove: warning: flow bulk delivered no data in the whole run" in r.stderr


def test_python_api_rejects_a_negative_seed_with_a_scenario_error(write_scenario):
    import rove

    with pytest.raises(rove.ScenarioError, match=r"seed: expected an integer in \[0, 2\^64\)"):
        rove.run(write_scenario(SMALL_SCENARIO), seed=-5)


def test_a_negative_option_value_gets_a_hint(tmp_path):
    r = run_cli("trace", "synth", "constant", "-o", tmp_path / "t", "--duration", "-1s")
    assert r.returncode == 2
    assert "--duration=-1s" in r.stderr
    r = run_cli("trace", "synth", "constant", "-o", tmp_path / "t", "--duration=-1s")
    assert r.returncode == 2 and "--duration" in r.stderr and "Traceback" not in r.stderr


def test_import_rove_exposes_no_standard_modules():
    import rove

    for name in ("os", "re", "shutil", "sys", "json", "math", "time"):
        assert not hasattr(rove, name), name
