"""The receiver trick of seed 003 (R-TSC, Subflow Population Control) on real kernel MPTCP
(issue 18 item 7): an ``[[actions]]`` ``dupacks = true`` entry makes rove's emulator hold one
subflow's ACK number with a SACK block above it (crates/emu/src/dupack.rs), and the sending
kernel halves that subflow's window; the other run, without the action, does not.

Two paths of 20 Mbit/s, 10 ms each way, buffers far above what the window reaches in 6 s (no
loss of its own), one MPTCP connection with Reno (Linux's tcp_reno_ssthresh: cwnd/2), the
episode at 3 s on subflow 1. Per-subflow cwnd is the kernel's own (MPTCP_TCPINFO, sampled every
10 ms into timeseries.parquet). Needs root, /dev/net/tun, MPTCP and the binaries in
target/release (skipped with the reason otherwise); packets only inside the namespaces the
run creates.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_kernel_multipath import REPO, _skip_reason

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))

SCENARIO = """\
duration = "6s"
[links.a]
rate = "20Mbps"
delay = "10ms"
buffer = "8MB"
[links.a_up]
rate = "100Mbps"
delay = "10ms"
[links.b]
rate = "20Mbps"
delay = "10ms"
buffer = "8MB"
[links.b_up]
rate = "100Mbps"
delay = "10ms"
[[flows]]
name = "mp"
cc = "reno"
paths = [{ path = ["a"], ack_path = ["a_up"] }, { path = ["b"], ack_path = ["b_up"] }]
"""
ACTION = '[[actions]]\nat = "3s"\nflow = "mp"\nsubflow = 1\ndupacks = true\n'


def _run(tmp: Path, text: str) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    scenario = tmp / "s.toml"
    scenario.write_text(text)
    out = tmp / "out"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "rove", "run", "--backend", "kernel", str(scenario), "-o", str(out)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def _cwnd_around(out: Path, at_s: float) -> tuple[float, float]:
    """Subflow 1's cwnd at the last sample before ``at_s`` and its smallest in the 0.5 s after."""
    import pandas as pd

    ts = pd.read_parquet(out / "timeseries.parquet")
    rows = ts[ts["subflow"] == 1]
    before = rows[rows["time_s"] < at_s]["cwnd_pkts"].iloc[-1]
    after = rows[(rows["time_s"] >= at_s) & (rows["time_s"] < at_s + 0.5)]["cwnd_pkts"].min()
    return float(before), float(after)


def test_emulator_dupacks_halve_a_kernel_subflows_cwnd(tmp_path):
    held = _cwnd_around(_run(tmp_path / "held", SCENARIO + ACTION), 3.0)
    plain = _cwnd_around(_run(tmp_path / "plain", SCENARIO), 3.0)
    print(f"subflow 1 cwnd before/after 3 s: with dupacks {held}, without {plain}")
    before, after = held
    assert before >= 20, held
    # Reno: ssthresh = cwnd/2 and Recovery ends at ssthresh (PRR may dip a little below).
    assert 0.3 * before <= after <= 0.6 * before, held
    assert plain[1] >= 0.9 * plain[0], plain
