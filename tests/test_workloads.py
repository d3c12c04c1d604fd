"""Unresponsive workloads through the CLI and the API: their summary keys and their line."""

from __future__ import annotations

import json

from conftest import run_cli

FLOOD = """
duration = "5s"
[links.down]
rate = "20Mbps"
delay = "10ms"
buffer = "100pkt"
[links.up]
rate = "20Mbps"
delay = "10ms"
[[flows]]
name = "r"
cc = "cubic"
path = ["down"]
ack_path = ["up"]
[[flows]]
name = "flood"
workload = "cbr"
rate = "30Mbps"
path = ["down"]
"""


def test_an_unresponsive_flow_reports_loss_and_one_way_delay(tmp_path):
    scenario = tmp_path / "flood.toml"
    scenario.write_text(FLOOD)
    r = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("  flood"))
    assert "OWD mean" in line and "loss" in line and "RTT" not in line
    flood = json.loads((tmp_path / "out" / "summary.json").read_text())["flows"][1]
    assert flood["workload"] == "cbr" and flood["cc"] == "cbr"
    assert flood["sent_pkts"] == 12501  # every 0.4 ms from 0 s to 5 s inclusive
    assert 0.3 < flood["loss_rate"] < 0.45  # beyond the 20 Mbit/s the link carries, and Reno's share
    assert flood["owd_p95_ms"] > 60.0  # a full 100-packet queue ahead of it
