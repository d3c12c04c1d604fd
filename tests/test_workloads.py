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


APPS = """
duration = "10s"
[links.down]
rate = "100Mbps"
delay = "10ms"
buffer = "1000pkt"
[links.up]
rate = "100Mbps"
delay = "10ms"
[[flows]]
name = "web"
cc = "reno"
workload = "requests"
sizes = ["100KB"]
think = "2s"
path = ["down"]
ack_path = ["up"]
[[flows]]
name = "vid"
cc = "cubic"
workload = "video"
bitrate = "2Mbps"
fps = 25
path = ["down"]
ack_path = ["up"]
"""


def test_video_and_request_flows_report_frames_and_transfer_times(tmp_path):
    scenario = tmp_path / "apps.toml"
    scenario.write_text(APPS)
    r = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    web_line = next(l for l in lines if l.startswith("  web"))
    vid_line = next(l for l in lines if l.startswith("  vid"))
    # TCP flows: RTT and retransmissions, then what their application measured.
    assert "RTT mean" in web_line and "requests: 5/5 done" in web_line and "fct mean" in web_line
    assert "RTT mean" in vid_line and "video: 250/250 frames" in vid_line
    assert "deadline misses 0.0 %" in vid_line
    web, vid = json.loads((tmp_path / "out" / "summary.json").read_text())["flows"]
    assert web["workload"] == "requests" and web["cc"] == "reno"
    assert (web["transfers_started"], web["transfers_completed"]) == (5, 5)
    # Slow start from 10 segments over a 20 ms RTT: three rounds for 100 KB, about 65 ms
    # (the Rust scenario tests derive the bound).
    assert 0.0603 < web["fct_p50_s"] < 0.0805
    assert web["bytes_delivered"] == 500_000 and web["fct_s"] is None
    assert vid["workload"] == "video" and vid["deadline_ms"] == 150.0
    assert vid["frames_sent"] == 250 and vid["deadline_miss_ratio"] == 0.0
    assert vid["frame_delay_p50_ms"] > 10.0  # at least the one-way delay
    assert abs(vid["goodput_mbps"] - 2.0) < 0.05


def test_a_key_of_another_workload_is_an_error_naming_it(tmp_path):
    scenario = tmp_path / "bad.toml"
    scenario.write_text(APPS.replace('fps = 25', 'fps = 25\nthink = "1s"'))
    r = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert r.returncode != 0
    assert 'flows[1].think' in r.stderr
    assert '"think" belongs to workload = "requests", not "video"' in r.stderr
