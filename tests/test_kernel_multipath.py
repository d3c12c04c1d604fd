"""An MPTCP flow over two emulated paths on the kernel backend (issue 5: "an MPTCP flow over two
emulated paths uses both (per-subflow bytes in the results)").

Runs ``scenarios/multipath/wifi-lte.toml`` (shortened to 8 s of bulk transfer) with
``rove run --backend kernel``: one ``IPPROTO_MPTCP`` connection, a subflow per path opened by the
kernel's path manager from the second path's endpoint, each path's packets routed by the
emulator through that path's links. Needs root, /dev/net/tun, MPTCP in the kernel and the
binaries in target/release (skipped with the reason otherwise).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = REPO / "target" / "release"
SCENARIO = REPO / "scenarios" / "multipath" / "wifi-lte.toml"


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "the kernel backend needs root (network namespaces, TUN devices)"
    if not Path("/dev/net/tun").exists():
        return "/dev/net/tun is missing"
    if shutil.which("ip") is None:
        return "iproute2's 'ip' is not installed"
    try:
        if Path("/proc/sys/net/mptcp/enabled").read_text().strip() != "1":
            return "MPTCP is disabled (sysctl net.mptcp.enabled)"
    except OSError:
        return "this kernel has no MPTCP (no /proc/sys/net/mptcp)"
    for b in ("rove-kernel", "rove-emu", "rove-traffic"):
        if not (BIN / b).is_file():
            return f"{BIN / b} is not built (run 'make setup')"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@pytest.fixture(scope="module")
def mp_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mptcp") / "out"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "rove", "run", "--backend", "kernel", str(SCENARIO),
                        "-o", str(out), "--set", "duration=8s", "--set", "flows.0.size=inf"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def test_an_mptcp_flow_uses_both_paths(mp_run):
    summary = json.loads((mp_run / "summary.json").read_text())
    flow = summary["flows"][0]
    assert flow["name"] == "mptcp" and flow["scheduler"] == "minrtt"
    subs = flow["subflows"]
    assert [s["path"] for s in subs] == [["wifi_down"], ["lte_down"]]
    # Both subflows carried data: over 1 Mbit/s each (both are loss-limited: 0.75 % random
    # loss on WiFi holds CUBIC near 3-4 Mbit/s at 40 ms, 0.1 % on LTE near 5-10 at 90 ms).
    for s in subs:
        assert s["throughput_mbps"] > 1.0, subs
        assert s["segs_sent"] > 500, subs
    assert abs(sum(s["share"] for s in subs) - 1.0) < 1e-9
    # The data delivered in order came over both: more than either subflow carried.
    assert flow["goodput_mbps"] > max(s["throughput_mbps"] for s in subs) + 0.5, flow
    # Each subflow's packets went through its own path's links: what the emulator read from
    # each path's sender address is exactly what that path's links were offered (this flow is
    # alone on them), in both directions.
    emu = json.loads((mp_run / "raw" / "emu" / "emu_summary.json").read_text())
    links = {link["name"]: link for link in emu["links"]}
    per_path = {s["subflow"]: s for s in emu["subflows"] if s["flow"] == 0}
    assert per_path[0]["data_pkts_in"] == links["wifi_down"]["arrived_pkts"]
    assert per_path[1]["data_pkts_in"] == links["lte_down"]["arrived_pkts"]
    assert per_path[0]["ack_pkts_in"] == links["wifi_up"]["arrived_pkts"]
    assert per_path[1]["ack_pkts_in"] == links["lte_up"]["arrived_pkts"]
    assert emu["unclassified_pkts"] == 0
    # Per-subflow RTT: each path's own base RTT (40 ms WiFi, 90 ms LTE) at least.
    assert 40.0 <= subs[0]["mean_rtt_ms"] < 90.0, subs[0]
    assert subs[1]["mean_rtt_ms"] >= 90.0, subs[1]


def test_subflow_rows_in_the_time_series(mp_run):
    import pandas as pd

    ts = pd.read_parquet(mp_run / "timeseries.parquet")
    assert set(ts["subflow"]) == {-1, 0, 1}
    for k in (0, 1):
        rows = ts[ts["subflow"] == k]
        assert rows["bytes_acked"].iloc[-1] > 1_000_000, k
        assert (rows["srtt_ms"] > 0).any() and (rows["cwnd_pkts"] > 0).all(), k
    own = ts[ts["subflow"] == -1]
    # The data level got more than either subflow carried alone.
    assert own["bytes_acked"].iloc[-1] > max(_last_acked(ts, k) for k in (0, 1))


def _last_acked(ts, k):
    return ts[ts["subflow"] == k]["bytes_acked"].iloc[-1]


def test_data_level_bytes_acked_against_the_subflows(mp_run):
    """In every sample, what DATA_ACKs cover and what the subflows' ACKs cover differ only by
    MPTCP's own copies, the receiver's data-level reordering and the ACKs still under way: the
    subflows' bytes acked add up to at most the data level's plus the bytes it sent again
    (`data_retrans_bytes`: retransmissions after MPTCP's RTO and reinjections) plus one receive
    window (subflow-acked bytes waiting above a data-level hole); and the data level covers
    only bytes some subflow sent (a DATA_ACK on the fast path can cover a segment whose own ACK
    is still crossing the slow one, so the data level may run ahead of the subflows' ACKs, by
    as much as a path's flight when the machine is loaded)."""
    lines = [json.loads(x) for x in (mp_run / "raw" / "flow-0.jsonl").read_text().splitlines()]
    samples = [s for s in lines if not s.get("final") and len(s.get("subflows") or []) == 2]
    assert len(samples) > 400, len(samples)
    if samples[-1].get("data_retrans_bytes") is None:
        pytest.skip("this kernel's MPTCP_INFO has no mptcpi_bytes_retrans (Linux < 6.5)")
    slack = 64 * 1024
    for s in samples:
        acked = sum(int(x["bytes_acked"]) for x in s["subflows"])
        sent = sum(int(x["bytes_sent"]) for x in s["subflows"])
        own = int(s["bytes_acked"])
        window = max(int(x.get("snd_wnd_bytes") or 0) for x in s["subflows"])
        assert own <= sent, s
        assert acked - own <= int(s["data_retrans_bytes"]) + window + slack, s
