"""rove run --pcap LINK: a capture that tshark (Debian's Wireshark) reads, with the packets the
link carried and TCP fields consistent with the run."""

from __future__ import annotations

import json
import shutil
import subprocess

import pyarrow.parquet as pq
import pytest

from conftest import SMALL_SCENARIO, run_cli

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed ('make setup' "
                                                       "installs it on Debian)")


def _tshark(path, *fields, filt=None):
    cmd = [TSHARK, "-r", str(path), "-o", "tcp.relative_sequence_numbers:FALSE", "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    if filt:
        cmd += ["-Y", filt]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.splitlines()]


def test_a_short_run_opens_in_tshark_with_every_packet(write_scenario, tmp_path):
    out = tmp_path / "res"
    s = write_scenario(SMALL_SCENARIO)
    r = run_cli("run", s, "-o", out, "-q", "--set", "flows.0.size=2MB", "--set",
                "links.down.buffer=20pkt", "--pcap", "down", "--pcap", "up")
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["flows"][0]["completed"] is True
    q = pq.read_table(out / "queue.parquet").to_pandas()
    for link in ("down", "up"):
        rows = _tshark(out / f"{link}.pcap", "frame.len", "ip.len", "tcp.srcport", "tcp.dstport")
        departed = int(q[q["link"] == link]["departed_bytes"].iloc[-1])
        # every byte the link sent is a packet in the capture (nothing in flight at the end)
        assert sum(int(r[0]) for r in rows) == departed
        assert all(r[0] == r[1] for r in rows)  # IP total length = the packet's size
        ports = {(r[2], r[3]) for r in rows}
        assert ports == ({("40000", "5201")} if link == "down" else {("5201", "40000")})
    data = _tshark(out / "down.pcap", "tcp.seq", "tcp.len", "tcp.flags.syn",
                   filt="tcp.len > 0")
    assert max(int(r[0]) + int(r[1]) for r in data) == 1001 + 2_000_000
    acks = _tshark(out / "up.pcap", "tcp.ack", "tcp.window_size", "tcp.options.timestamp.tsecr")
    assert max(int(r[0]) for r in acks) == 1001 + 2_000_000
    assert all(int(r[1]) > 0 and int(r[2]) > 0 for r in acks[1:])
    # the 20-packet buffer overflows in slow start: the receiver SACKs, Wireshark decodes them
    sacks = _tshark(out / "up.pcap", "tcp.options.sack_le", "tcp.options.sack_re",
                    filt="tcp.options.sack_le")
    assert sacks, "no SACK blocks decoded"
    le, re_ = (int(x) for x in (sacks[0][0].split(",")[0], sacks[0][1].split(",")[0]))
    assert re_ > le and (re_ - le) % 1448 == 0


def test_an_unknown_link_is_a_one_line_error_and_nothing_is_left(write_scenario, tmp_path):
    r = run_cli("run", write_scenario(SMALL_SCENARIO), "-o", tmp_path / "out", "--pcap", "nope")
    assert r.returncode == 2
    assert r.stderr.strip() == (f"rove: error: --pcap nope: no link named \"nope\"; accepted: "
                                f"down, up")
    assert [p.name for p in tmp_path.iterdir() if p.name != "scenario.toml"] == []
