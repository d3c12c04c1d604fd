"""``rove trace record`` (issue 14 item 5): the capacity a radio port received, as a Mahimahi
trace, replayed on a plain trace-driven link (python/rove/trace_record.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rove
from rove.trace_record import OPPORTUNITY_BYTES, TraceRecordError, opportunities, record

REPO = Path(__file__).resolve().parent.parent

# One 802.11a station at 54 Mbit/s, error-free (30 dB), saturated by 40 Mbit/s of 1500-byte
# CBR from the AP: it gets Bianchi's n = 1 rate, 30.49 Mbit/s (crates/world/tests/wifi.rs).
CELL = """\
duration = "20s"
[links.air]
kind = "wifi"
mcs = 7
[links.air.stations.s1]
snr = "30dB"
[[flows]]
name = "down"
workload = "cbr"
rate = "40Mbps"
path = ["air:s1"]
"""


def _replay(trace: Path, duration: str = "20s", rate: str = "40Mbps") -> dict:
    """The same CBR flow over a plain link driven by ``trace``; its summary."""
    return rove.run({"duration": duration, "links": {"l": {"trace": str(trace)}},
                     "flows": [{"name": "down", "workload": "cbr", "rate": rate,
                                "path": ["l"]}]}).summary


def test_opportunities_cut_bytes_into_1500_and_spread_them_over_the_interval():
    # 1-ms samples: 3000 B by 1 ms (2 opportunities at 1 ms), 1499 more by 2 ms (none: 4499 B
    # is 2 whole ones), 1 more by 3 ms (the third, at 3 ms).
    assert opportunities([0.001, 0.002, 0.003], [3000, 4499, 4500]) == [1, 1, 3]
    # A 10-ms interval with 4 opportunities: at ceil(10 + j·10/4) = 13, 15, 18, 20 ms.
    assert opportunities([0.01, 0.02], [0, 6000]) == [13, 15, 18, 20]
    with pytest.raises(TraceRecordError, match="decreases"):
        opportunities([0.001, 0.002], [3000, 1500])


def test_a_recorded_port_replays_on_a_plain_link_at_the_rate_it_received(tmp_path):
    """The trace of what the saturated station received, replayed under the same CBR load on a
    plain trace-driven link, delivers the same packets: the trace holds floor(bytes / 1500)
    opportunities of the 1-ms samples, and the replay link, backlogged from its first
    millisecond, sends one 1500-byte packet per opportunity. Stated tolerance: 2 packets of
    the 50,824 (a packet in service at each end). Measured: the cell 50,823 packets, the
    trace 50,824 opportunities (30.49 Mbit/s), the replay 50,824."""
    scenario = tmp_path / "cell.toml"
    scenario.write_text(CELL)
    rec = record(scenario, "air:s1")
    assert rec.sample_interval_ms == 1.0 and rec.duration_ms == 20_000
    assert len(rec.stamps) == rec.delivered_bytes // OPPORTUNITY_BYTES
    assert rec.stamps == sorted(rec.stamps) and rec.stamps[-1] == 20_000
    trace = tmp_path / "s1.trace"
    trace.write_text(rec.text())
    cell = rove.run(str(scenario)).summary["flows"][0]["received_pkts"]
    replayed = _replay(trace)["flows"][0]["received_pkts"]
    print(f"cell {cell} packets, trace {len(rec.stamps)} opportunities ({rec.mean_mbps:.2f} "
          f"Mbit/s), replay {replayed} packets")
    assert abs(cell - 20 * 30.49e6 / 12_000) < 0.002 * cell
    assert abs(replayed - cell) <= 2, (cell, replayed)


def test_a_results_directory_gives_the_same_opportunities_spread_over_its_samples(tmp_path):
    """From a results directory (the cell sampled every 10 ms, the scenario's default) the
    trace has the same opportunities, each within the 10-ms interval its bytes were counted
    in, so it replays at the same rate."""
    scenario = tmp_path / "cell.toml"
    scenario.write_text(CELL)
    out = tmp_path / "run"
    rove.run(str(scenario), out=out)
    coarse = record(out, "air:s1")
    fine = record(scenario, "air:s1")
    assert coarse.sample_interval_ms == 10.0
    assert len(coarse.stamps) == len(fine.stamps)
    # The k-th opportunity of the coarse trace lies in the same 10-ms interval as the fine one.
    assert all(-10 < c - f < 10 for c, f in zip(coarse.stamps, fine.stamps))
    trace = tmp_path / "coarse.trace"
    trace.write_text(coarse.text())
    cell = json.loads((out / "summary.json").read_text())["flows"][0]
    assert abs(_replay(trace)["flows"][0]["received_pkts"]
               - cell["received_pkts"]) <= 2


def test_a_drive_by_stations_trace_is_empty_in_its_holes(tmp_path):
    """Drive-by WiFi: associations of 10 s every 15 s with a 1-s set-up, so data periods
    [1, 10), [16, 25) s in a 30-s run: every opportunity lies in one (to the millisecond its
    bytes were counted in), and the replay delivers what the car got (2 packets of tolerance
    per period end). Measured: 45,733 and 45,733."""
    scenario = tmp_path / "car.toml"
    scenario.write_text(CELL.replace('duration = "20s"', 'duration = "30s"').replace(
        'snr = "30dB"', 'snr = "30dB"\ndriveby = { window_mean = "10s", hole_mean = "5s", '
                        'setup = "1s" }'))
    rec = record(scenario, "air:s1")
    assert all(1_000 < t <= 10_001 or 16_000 < t <= 25_001 for t in rec.stamps)
    assert rec.stamps[-1] <= 25_001  # the period of the trace: the run ended in a hole
    trace = tmp_path / "car.trace"
    trace.write_text(rec.text())
    car = rove.run(str(scenario)).summary["flows"][0]["received_pkts"]
    replayed = _replay(trace, duration=f"{rec.stamps[-1]}ms")["flows"][0]
    print(f"car {car} packets, replay {replayed['received_pkts']}")
    assert abs(replayed["received_pkts"] - car) <= 4


def test_the_command_writes_the_trace_and_explains_bad_ports(tmp_path):
    scenario = tmp_path / "cell.toml"
    scenario.write_text(CELL.replace('"20s"', '"2s"'))
    out = tmp_path / "up.trace"

    def rove_cli(*args):
        return subprocess.run([sys.executable, "-m", "rove", *map(str, args)],
                              capture_output=True, text=True, timeout=120)

    r = rove_cli("trace", "record", scenario, "--port", "air:s1", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "air:s1, 2 s" in r.stdout and "sampled every 1 ms" in r.stdout
    assert out.read_text().splitlines()[-1] == "2000"
    r = rove_cli("trace", "record", scenario, "--port", "air:s1", "-o", out)
    assert r.returncode == 2 and "--force" in r.stderr
    r = rove_cli("trace", "record", scenario, "--port", "air:s9", "-o", tmp_path / "x")
    assert r.returncode == 2 and "air:s1:up" in r.stderr, r.stderr
    r = rove_cli("trace", "record", scenario, "--port", "air:s1:up", "-o", tmp_path / "x")
    assert r.returncode == 2 and "less than one" in r.stderr, r.stderr  # nothing went up
    r = rove_cli("trace", "record", scenario, "--port", "s1", "-o", tmp_path / "x")
    assert r.returncode == 2 and "LINK:PORT" in r.stderr
    plain = tmp_path / "plain.toml"
    plain.write_text('duration = "1s"\n[links.l]\nrate = "10Mbps"\n'
                     '[[flows]]\npath = ["l"]\nack_path = ["l"]\n')
    r = rove_cli("trace", "record", plain, "--port", "l:x", "-o", tmp_path / "x")
    assert r.returncode == 2 and "kind = \"wifi\"" in r.stderr, r.stderr
    r = rove_cli("trace", "record", tmp_path / "nothing", "--port", "a:b", "-o", tmp_path / "x")
    assert r.returncode == 2 and "no such" in r.stderr
