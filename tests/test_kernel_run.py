"""The kernel backend end to end: ``rove run --backend kernel`` and ``rove-kernel run``.

These tests make network namespaces and TUN devices, so they need root and /dev/net/tun, and
the binaries in target/release (``make setup`` builds them); otherwise they are skipped with
the reason. Traffic stays inside the namespaces the run makes.

The traffic generator is the real ``rove-traffic`` (real sockets, ``TCP_INFO``). Tests that
must recognise the processes of one run start a private copy of it (its path names them).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = REPO / "target" / "release"
TRAFFIC = BIN / "rove-traffic"


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "the kernel backend needs root (network namespaces, TUN devices)"
    if not Path("/dev/net/tun").exists():
        return "/dev/net/tun is missing"
    if shutil.which("ip") is None:
        return "iproute2's 'ip' is not installed"
    for b in ("rove-kernel", "rove-emu", "rove-traffic"):
        if not (BIN / b).is_file():
            return f"{BIN / b} is not built (run 'make setup')"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))

# How long a run may take to start its first client: a wait budget, not a measurement. Creating
# namespaces waits for the kernel to finish tearing down earlier runs' (cleanup_net), which takes
# seconds after tests that end many connections.
CLIENT_START_S = 40

CUBIC_20MBPS_40MS = """
name = "cubic-fill"
duration = "8s"
seed = 1

[links.down]
rate = "20Mbps"
delay = "20ms"
buffer = "100pkt"

[links.up]
rate = "20Mbps"
delay = "20ms"

[[flows]]
name = "cubic"
cc = "cubic"
path = ["down"]
ack_path = ["up"]
"""


def _rove(*args, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "rove", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=120, **kw)


def _env(traffic: Path | None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + os.pathsep + env.get("PYTHONPATH", "")
    if traffic is not None:
        env["ROVE_TRAFFIC"] = str(traffic)
    return env


def _private_traffic(tmp_path: Path, tag: str) -> Path:
    """A copy of rove-traffic whose path identifies the processes of one run."""
    copy = tmp_path / f"rove-traffic-{tag}"
    shutil.copy(TRAFFIC, copy)
    copy.chmod(0o755)
    return copy


def _rove_namespaces(pid: int) -> list[str]:
    try:
        names = os.listdir("/run/netns")
    except FileNotFoundError:
        return []
    return [n for n in names if n.startswith(f"rove-{pid}-")]


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmd:
            found.append(int(d))
    return found


@pytest.fixture(scope="module")
def cubic_run(tmp_path_factory):
    traffic = TRAFFIC
    d = tmp_path_factory.mktemp("cubic")
    scenario = d / "s.toml"
    scenario.write_text(textwrap.dedent(CUBIC_20MBPS_40MS))
    out = d / "out"
    r = _rove("run", "--backend", "kernel", scenario, "-o", out, env=_env(traffic))
    assert r.returncode == 0, r.stderr
    return out


def test_cubic_fills_a_20mbps_40ms_link(cubic_run):
    summary = json.loads((cubic_run / "summary.json").read_text())
    assert summary["backend"] == "kernel"
    flow = summary["flows"][0]
    link = summary["links"][0]
    # Slow start takes under a second of the 8; afterwards the link is full.
    assert flow["goodput_mbps"] > 0.85 * 20, flow
    assert link["utilization"] > 0.85, link
    import pandas as pd

    ts = pd.read_parquet(cubic_run / "timeseries.parquet")
    late = ts[ts["time_s"] >= 2.0]
    rate = (late["bytes_acked"].iloc[-1] - late["bytes_acked"].iloc[0]) * 8 / (
        late["time_s"].iloc[-1] - late["time_s"].iloc[0]) / 1e6
    assert rate > 0.95 * 20 * 1448 / 1500, f"{rate:.2f} Mbps of payload after 2 s"


def test_base_rtt_equals_configured(cubic_run):
    import pandas as pd

    ts = pd.read_parquet(cubic_run / "timeseries.parquet")
    min_rtt = ts.loc[ts["min_rtt_ms"] > 0, "min_rtt_ms"].min()
    # 2 x 20 ms propagation plus serialization: the kernel's min RTT comes from its smallest
    # samples (the handshake: 60-byte packets, 0.02 ms each at 20 Mbps), at most a full
    # 1500-byte segment's 0.6 ms; the hosts' own stacks add microseconds. 0.5 ms of slack.
    assert 40.0 <= min_rtt <= 40.0 + 0.62 + 0.5, min_rtt
    # That bound holds because the emulator asked idle CPUs to wake at once (without the request a
    # halted vCPU delayed the handshake by 0.7-1.4 ms; docs/kernel-backend.md "Idle CPUs").
    summary = json.loads((cubic_run / "summary.json").read_text())
    assert summary["emulator"]["cpu_latency_us"] == 0, summary["emulator"]
    # The per-ACK samples behind mean/p95 RTT: never below the propagation delay, never above
    # it plus a full 100-packet queue (60 ms at 20 Mbps) and a delayed ACK's 40 ms.
    flow = json.loads((cubic_run / "summary.json").read_text())["flows"][0]
    assert 40.0 <= flow["mean_rtt_ms"] <= flow["p95_rtt_ms"] <= 40.0 + 60 + 40 + 1, flow
    with open(cubic_run / "raw" / "emu" / "rtt.csv") as f:
        rtts = [float(line.split(",")[2]) for line in list(f)[1:]]
    assert len(rtts) > 1000 and min(rtts) >= 40.0, (len(rtts), min(rtts))


def test_time_series_hold_the_kernels_tcp_info(cubic_run):
    import pandas as pd

    ts = pd.read_parquet(cubic_run / "timeseries.parquet")
    late = ts[ts["time_s"] >= 2.0]
    # Real TCP_INFO readings, not placeholders: a window that moves, a pacing and a delivery
    # rate near the link's rate, a smoothed RTT between the base RTT and base + queue, the
    # kernel's ca_state names, bytes acked growing, ssthresh set by the first reduction.
    assert late["cwnd_pkts"].nunique() > 5 and late["cwnd_pkts"].min() >= 2
    assert (late["inflight_pkts"] > 0).all()
    assert late["pacing_rate_bps"].median() > 20e6  # cwnd/srtt x 1.2 in congestion avoidance
    assert 0.8 * 20e6 < late["delivery_rate_bps"].median() < 20e6 * 1.05
    assert 40.0 <= late["srtt_ms"].median() <= 40.0 + 60 + 5
    assert set(ts["ca_state"]) <= {"open", "disorder", "cwr", "recovery", "loss"}
    assert ts["bytes_acked"].is_monotonic_increasing
    assert late["ssthresh_pkts"].max() < 2**31 - 1
    assert set(ts["cc_state"]) == {"n/a"}


def test_results_have_the_simulators_schema(cubic_run, tmp_path):
    import pyarrow.parquet as pq

    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(CUBIC_20MBPS_40MS).replace('"8s"', '"1s"'))
    r = _rove("run", scenario, "-o", tmp_path / "sim", env=_env(None))
    assert r.returncode == 0, r.stderr
    sim = json.loads((tmp_path / "sim" / "summary.json").read_text())
    kern = json.loads((cubic_run / "summary.json").read_text())
    assert list(kern)[:len(sim)] == list(sim)
    assert list(kern["flows"][0]) == list(sim["flows"][0])
    assert list(kern["links"][0]) == list(sim["links"][0])
    for name in ("timeseries.parquet", "queue.parquet"):
        assert pq.read_schema(cubic_run / name) == pq.read_schema(tmp_path / "sim" / name), name
    r = _rove("report", cubic_run, env=_env(None))
    assert r.returncode == 0, r.stderr
    assert (cubic_run / "raw" / "emu" / "queue.jsonl").is_file()


QUEUE_AND_LOSS = """
name = "queue-and-loss"
duration = "6s"
seed = 3

# A 20-packet DropTail queue that a CUBIC flow overflows again and again.
[links.small]
rate = "20Mbps"
delay = "10ms"
buffer = "20pkt"

# 2 % random loss and a queue too large to overflow in 6 s of a lossy flow.
[links.lossy]
rate = "20Mbps"
delay = "10ms"
buffer = "1000pkt"
loss = 0.02

[links.up]
rate = "100Mbps"
delay = "10ms"

[[flows]]
name = "fills"
cc = "cubic"
path = ["small"]
ack_path = ["up"]

[[flows]]
name = "loses"
cc = "cubic"
path = ["lossy"]
ack_path = ["up"]
"""


def test_queue_limit_and_loss_rate_hold_for_kernel_flows(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(QUEUE_AND_LOSS))
    out = tmp_path / "out"
    r = _rove("run", "--backend", "kernel", scenario, "-o", out, env=_env(TRAFFIC))
    assert r.returncode == 0, r.stderr
    import pandas as pd

    q = pd.read_parquet(out / "queue.parquet")
    emu = json.loads((out / "raw" / "emu" / "emu_summary.json").read_text())
    links = {link["name"]: link for link in emu["links"]}
    small = q[q["link"] == "small"]
    # The queue reached its limit (the flow overflowed it) and never held more.
    assert small["backlog_pkts"].max() == 20, small["backlog_pkts"].max()
    assert links["small"]["queue_drops"] > 0 and links["small"]["loss_drops"] == 0, links["small"]
    # No packet waited longer than 20 full packets' serialization (0.6 ms each at 20 Mbit/s).
    worst = small["sojourn_max_ms"].max()
    assert worst <= 20 * 0.6 + 0.01, worst
    assert links["small"]["max_queue_delay_ms"] <= 20 * 0.6 + 0.01, links["small"]
    # Random loss: the share of packets offered to the lossy link that it dropped is 2 %
    # within 4 standard deviations of a binomial count; no queue drop there.
    lossy = links["lossy"]
    n, lost = lossy["arrived_pkts"], lossy["loss_drops"]
    sd = (n * 0.02 * 0.98) ** 0.5
    assert n > 1000 and abs(lost - 0.02 * n) <= 4 * sd, (n, lost)
    assert lossy["queue_drops"] == 0, lossy
    # The kernel saw those losses and repaired them: at least as many retransmissions.
    summary = json.loads((out / "summary.json").read_text())
    loses = next(f for f in summary["flows"] if f["name"] == "loses")
    segs = emu["flows"][1]["data_segs_in"]
    assert loses["retrans_rate"] * segs >= 0.9 * lost, (loses, lost)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_run_leaves_nothing_behind(tmp_path, sig):
    # A private copy of rove-traffic: its path identifies this run's processes.
    traffic = _private_traffic(tmp_path, sig.name)
    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(CUBIC_20MBPS_40MS).replace('"8s"', '"30s"'))
    out = tmp_path / "out"
    proc = subprocess.Popen([str(BIN / "rove-kernel"), "run", str(scenario), "-o", str(out),
                             "--traffic-bin", str(traffic)], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + CLIENT_START_S
    while time.monotonic() < deadline and not _processes_mentioning(f"{traffic} client"):
        time.sleep(0.05)
    assert _processes_mentioning(f"{traffic} client"), "the client never started"
    assert _rove_namespaces(proc.pid)
    time.sleep(0.5)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig, err
    assert "interrupted" in err
    assert _rove_namespaces(proc.pid) == []
    assert _processes_mentioning(str(traffic)) == []
    assert _processes_mentioning(f"rove-{proc.pid}-") == []  # the emulator names its namespaces
    assert not out.exists() or not any(p.name.startswith("raw") for p in out.iterdir())


def test_killed_run_leaves_no_process_and_cleanup_removes_its_namespaces(tmp_path):
    traffic = _private_traffic(tmp_path, "kill")
    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(CUBIC_20MBPS_40MS).replace('"8s"', '"30s"'))
    proc = subprocess.Popen([str(BIN / "rove-kernel"), "run", str(scenario), "-o",
                             str(tmp_path / "out"), "--traffic-bin", str(traffic)],
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + CLIENT_START_S
    while time.monotonic() < deadline and not _processes_mentioning(f"{traffic} client"):
        time.sleep(0.05)
    proc.kill()  # SIGKILL: no clean-up in the orchestrator itself
    proc.wait()
    # Its children get SIGTERM from the kernel (PR_SET_PDEATHSIG) and exit.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (_processes_mentioning(str(traffic))
                                           or _processes_mentioning(f"rove-{proc.pid}-")):
        time.sleep(0.05)
    assert _processes_mentioning(str(traffic)) == []
    assert _processes_mentioning(f"rove-{proc.pid}-") == []
    # Its namespaces are left behind (unless a concurrent run already swept them) until the
    # stale-namespace sweep, which every `rove-kernel run` also does when it starts.
    r = subprocess.run([str(BIN / "rove-kernel"), "cleanup"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert _rove_namespaces(proc.pid) == []


def test_sigterm_to_rove_run_cleans_up(tmp_path):
    traffic = _private_traffic(tmp_path, "cli")
    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(CUBIC_20MBPS_40MS).replace('"8s"', '"30s"'))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "rove", "run", "--backend", "kernel",
                             str(scenario), "-o", str(out)], env=_env(traffic),
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + CLIENT_START_S
    while time.monotonic() < deadline and not _processes_mentioning(f"{traffic} client"):
        time.sleep(0.05)
    assert _processes_mentioning(f"{traffic} client"), "the client never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    time.sleep(0.2)
    assert _processes_mentioning(str(traffic)) == []
    assert not out.exists()
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []


def test_kill_9_of_rove_run_stops_the_orchestrator_and_next_run_removes_its_staging(tmp_path):
    traffic = _private_traffic(tmp_path, "kill9")
    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(CUBIC_20MBPS_40MS).replace('"8s"', '"30s"'))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "rove", "run", "--backend", "kernel",
                             str(scenario), "-o", str(out)], env=_env(traffic),
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + CLIENT_START_S
    while time.monotonic() < deadline and not _processes_mentioning(f"{traffic} client"):
        time.sleep(0.05)
    assert _processes_mentioning(f"{traffic} client"), "the client never started"
    orchestrators = _processes_mentioning(f"rove-kernel run {scenario}")
    assert len(orchestrators) == 1, orchestrators
    proc.kill()  # SIGKILL of the Python process: no clean-up of its own
    proc.wait()
    # rove-kernel gets SIGTERM (PR_SET_PDEATHSIG) and removes what it made, in seconds rather
    # than at the scenario's end (30 s).
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (_processes_mentioning(str(traffic))
                                           or _processes_mentioning(f"rove-kernel run {scenario}")):
        time.sleep(0.05)
    assert _processes_mentioning(f"rove-kernel run {scenario}") == []
    assert _processes_mentioning(str(traffic)) == []
    assert _rove_namespaces(orchestrators[0]) == []
    stale = [p for p in tmp_path.iterdir() if p.name.startswith(".out.partial-")]
    assert stale, "the killed run's staging directory should be there until the next run"
    r = _rove("run", "--backend", "kernel", scenario, "-o", out, "--set", "duration=2s",
              env=_env(traffic))
    assert r.returncode == 0, r.stderr
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []
    assert (out / "summary.json").is_file()


def test_unknown_cc_and_cc_params_are_clear_errors(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(CUBIC_20MBPS_40MS).replace('cc = "cubic"', 'cc = "copa"'))
    r = _rove("run", "--backend", "kernel", scenario, "-o", tmp_path / "o", env=_env(TRAFFIC))
    assert r.returncode == 2
    assert "flows[0] (cubic).cc" in r.stderr and "available:" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    scenario.write_text(textwrap.dedent(CUBIC_20MBPS_40MS).replace(
        'cc = "cubic"', 'cc = "cubic"\ncc_params = { hystart = false }'))
    r = _rove("run", "--backend", "kernel", scenario, "-o", tmp_path / "o", env=_env(TRAFFIC))
    assert r.returncode == 2
    assert "cc_params.hystart" in r.stderr, r.stderr


def test_a_failing_client_ends_the_run_at_once_with_its_message(tmp_path):
    # A generator whose client refuses the algorithm as the contract says (exit 2, one line).
    fake = tmp_path / "traffic-fail.sh"
    fake.write_text(f"""#!/bin/sh
if [ "$1" = server ]; then exec {TRAFFIC} "$@"; fi
echo "rove-traffic: error: unknown congestion control 'cubic' (available: reno)" >&2
exit 2
""")
    fake.chmod(0o755)
    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(CUBIC_20MBPS_40MS).replace('"8s"', '"30s"'))
    t0 = time.monotonic()
    r = subprocess.run([str(BIN / "rove-kernel"), "run", str(scenario), "-o", str(tmp_path / "o"),
                        "--traffic-bin", str(fake)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "unknown congestion control 'cubic'" in r.stderr
    assert time.monotonic() - t0 < 15  # not the scenario's 30 s
    assert _rove_namespaces(os.getpid()) == []
    assert _processes_mentioning(str(fake)) == []


def test_cleanup_command_sweeps_stale_namespaces():
    # A namespace named as if by a process that no longer exists.
    dead = 3_000_000  # a pid no process has (checked below)
    while Path(f"/proc/{dead}").exists():
        dead += 1
    name = f"rove-{dead}-0-snd"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        r = subprocess.run([str(BIN / "rove-kernel"), "cleanup"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert f"removed {name}" in r.stdout
        assert name not in os.listdir("/run/netns")
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)


PORTED = """
name = "ported"
duration = "10s"
seed = 1

[links.down]
rate = "20Mbps"
delay = "10ms"
buffer = "200pkt"
ports = ["a", "b"]

[links.up]
rate = "100Mbps"
delay = "10ms"

[[flows]]
name = "cubic"
cc = "cubic"
path = ["down:a"]
ack_path = ["up"]

[[flows]]
name = "bbr"
cc = "bbr"
path = ["down:b"]
ack_path = ["up"]
"""


def test_a_links_ports_run_on_the_kernel_backend(tmp_path):
    # The emulator passes each packet's port to the link model as the simulator does: the two
    # kernel flows have a queue each and share the link in turn. CUBIC fills its own 200-packet
    # queue (about 240 ms at half the link); BBR's RTT does not include it, as it would behind
    # one shared FIFO.
    scenario = tmp_path / "s.toml"
    scenario.write_text(textwrap.dedent(PORTED))
    out = tmp_path / "out"
    r = _rove("run", "--backend", "kernel", scenario, "-o", out, env=_env(TRAFFIC))
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    cubic, bbr = summary["flows"]
    assert cubic["goodput_mbps"] > 6 and bbr["goodput_mbps"] > 6, summary["flows"]
    assert cubic["goodput_mbps"] + bbr["goodput_mbps"] > 16, summary["flows"]
    assert bbr["mean_rtt_ms"] < cubic["mean_rtt_ms"] / 2, (bbr["mean_rtt_ms"], cubic["mean_rtt_ms"])


def _radio_totals(tmp_path: Path, name: str, flows: int, sets: tuple[str, ...] = ()) -> dict:
    """scenarios/radio/NAME for 6 s (and the ``--set`` overrides ``sets``) on both backends:
    each backend's total goodput, after checking that every one of its ``flows`` flows got
    more than 1 Mbit/s."""
    totals = {}
    overrides = [a for s in sets for a in ("--set", s)]
    for backend in ("kernel", "sim"):
        out = tmp_path / backend
        r = _rove("run", "--backend", backend, REPO / "scenarios" / "radio" / name, "-o", out,
                  "--set", "duration=6s", *overrides, "--quiet", env=_env(TRAFFIC))
        assert r.returncode == 0, r.stderr
        got = json.loads((out / "summary.json").read_text())["flows"]
        assert len(got) == flows and all(f["goodput_mbps"] > 1.0 for f in got), got
        totals[backend] = sum(f["goodput_mbps"] for f in got)
    return totals


def test_a_wifi_cell_carries_linux_tcp_as_the_simulator_does(tmp_path):
    """Issue 14: the WiFi cell (kind = "wifi", DCF) runs in the kernel backend's emulator on
    the real clock, under Linux's CUBIC and BBR: every flow gets airtime, and the cell carries
    about what the simulator's TCP gets through the same model (measured over 5 s: kernel
    22.8, simulator 23.7 Mbit/s in all), never more than one station's saturation rate at
    54 Mbit/s (30.5 Mbit/s, Bianchi with n = 1; crates/world/tests/wifi.rs)."""
    totals = _radio_totals(tmp_path, "wifi-3sta.toml", flows=3)
    assert totals["kernel"] <= 30.5, totals
    assert abs(totals["kernel"] - totals["sim"]) <= 0.2 * totals["sim"], totals
    _check_radio_results(tmp_path / "kernel", tmp_path / "sim", duration_s=6.0)


# scenarios/radio/wifi-3sta.toml with each station on an access point of its own, the three
# APs on the one channel (crates/sim link/wifi/bss.rs).
THREE_APS = ('links.air.aps=["ap1", "ap2", "ap3"]', "links.air.stations.s1.ap=ap1",
             "links.air.stations.s2.ap=ap2", "links.air.stations.s3.ap=ap3")


def test_a_cell_of_several_access_points_carries_linux_tcp_as_the_simulator_does(tmp_path):
    """Issue 19 item 4's cell: three APs on one channel (one station each) run in the kernel
    backend's emulator as in the simulator (measured over 6 s: kernel 21.9, simulator 22.0
    Mbit/s in all); radio.parquet has the simulator's schema, with the ``ap`` column, and
    summary.json each AP's survey (the channel's busy time at every AP) and its stations."""
    import pyarrow.parquet as pq

    totals = _radio_totals(tmp_path, "wifi-3sta.toml", flows=3, sets=THREE_APS)
    assert abs(totals["kernel"] - totals["sim"]) <= 0.2 * totals["sim"], totals
    _check_radio_results(tmp_path / "kernel", tmp_path / "sim", duration_s=6.0)
    for backend in ("kernel", "sim"):
        df = pq.read_table(tmp_path / backend / "radio.parquet").to_pandas()
        assert dict(zip(df.port, df.ap)) == {"s1": "ap1", "s1:up": "ap1", "s2": "ap2",
                                             "s2:up": "ap2", "s3": "ap3", "s3:up": "ap3"}
        summary = json.loads((tmp_path / backend / "summary.json").read_text())
        aps = next(l for l in summary["links"] if l.get("radio"))["radio"]["aps"]
        assert [(a["ap"], a["stations"]) for a in aps] == [
            ("ap1", ["s1"]), ("ap2", ["s2"]), ("ap3", ["s3"])], aps
        assert len({a["survey_busy_ms"] for a in aps}) == 1, aps
        assert all(0 < a["survey_tx_ms"] < a["survey_busy_ms"] for a in aps), aps


def _check_radio_results(kernel: Path, sim: Path, duration_s: float) -> None:
    """The kernel run's radio.parquet has the simulator's schema and sampling (every 10 ms to
    the end), and its last rows hold the totals of its summary's ``radio`` (as the
    simulator's); MAC drops are reported as the simulator reports them."""
    import pyarrow.parquet as pq

    k, s = pq.read_table(kernel / "radio.parquet"), pq.read_table(sim / "radio.parquet")
    assert k.schema.equals(s.schema), (k.schema, s.schema)
    assert k.num_rows == s.num_rows, (k.num_rows, s.num_rows)
    df = k.to_pandas()
    assert df.time_s.max() == duration_s
    summary = json.loads((kernel / "summary.json").read_text())
    air = next(l for l in summary["links"] if l.get("radio"))
    sim_air = next(l for l in json.loads((sim / "summary.json").read_text())["links"]
                   if l.get("radio"))
    assert list(air) == list(sim_air), (list(air), list(sim_air))
    last = df[df.time_s == duration_s].set_index("port")
    for p in air["radio"]["ports"]:
        for key in ("tx_packets", "tx_bytes", "tx_retries", "mac_drops", "collisions"):
            assert last.loc[p["port"], key] == p[key], (p["port"], key)
    assert air["mac_drops"] == air["radio"]["mac_drops"]


def test_an_lte_cell_carries_linux_tcp_as_the_simulator_does(tmp_path):
    """Issue 14: the LTE cell (kind = "lte": 1 ms TTIs, HARQ, PF scheduling, EVA fading,
    mobility, uplink grants) runs in the kernel backend's emulator on the real clock, under
    Linux CUBIC: both UEs get data, and the cell carries about what the simulator's TCP gets
    through the same model (measured over 6 s: kernel 30.62 + 6.78 = 37.4, simulator
    31.01 + 6.63 = 37.6 Mbit/s), never more than the cell's peak (MCS 28 over 100 PRBs:
    75.4 Mbit/s; crates/world/tests/lte.rs)."""
    totals = _radio_totals(tmp_path, "lte-mobility.toml", flows=2)
    assert totals["kernel"] <= 75.4, totals
    assert abs(totals["kernel"] - totals["sim"]) <= 0.2 * totals["sim"], totals


def _final_min_rtt_ms(out: Path) -> float:
    import pyarrow.parquet as pq

    return pq.read_table(out / "timeseries.parquet").column("min_rtt_ms").to_pylist()[-1]


def test_an_lte_cell_with_the_request_grant_uplink_carries_linux_tcp_as_the_simulator_does(
        tmp_path):
    """Issue 14: the LTE cell's request-grant uplink (uplink = "sr_bsr": scheduling requests,
    grants, buffer status reports; scenarios/radio/lte-slow-start.toml) runs in the kernel
    backend's emulator on the real clock: Linux CUBIC's ACKs pay the request-grant cycle, at
    least 9 ms (grant_delay + pusch_delay + 1 ms) on the 68 ms path, and it gets about the
    simulator's goodput (measured over 6 s: 47.89 and 48.51 Mbit/s).

    The minimum RTT is set by the first window's ACKs, so it depends on where the flow starts
    on the 10 ms grid of SR opportunities: the simulator gives 77.0-80.0 ms as the start moves
    over one SR period (start 0-1 ms: 80.0; 2.5: 79.5; 3: 79.0; 4: 78.0; 5: 77.0; 6-9: 80.0).
    On the real clock that phase is whatever the connection's start happens to be (kernel runs
    measured 79.26 and 77.96 ms), so the kernel's minimum RTT must lie in the simulator's range
    over the phase, within 1 ms (the emulator's added-delay error is below 0.2 ms), not near
    the one phase of a start at 0."""
    totals = _radio_totals(tmp_path, "lte-slow-start.toml", flows=1)
    assert abs(totals["kernel"] - totals["sim"]) <= 0.2 * totals["sim"], totals
    kernel = _final_min_rtt_ms(tmp_path / "kernel")
    assert kernel >= 68 + 9 - 1, kernel
    sim = [_final_min_rtt_ms(tmp_path / "sim")]
    for start_ms in range(1, 10):  # the rest of one sr_period (10 ms) of start phases
        out = tmp_path / f"sim-{start_ms}ms"
        r = _rove("run", REPO / "scenarios" / "radio" / "lte-slow-start.toml", "-o", out,
                  "--set", "duration=2s", "--set", f"flows.0.start={start_ms}ms", "--quiet",
                  env=_env(None))
        assert r.returncode == 0, r.stderr
        sim.append(_final_min_rtt_ms(out))
    assert max(sim) - min(sim) >= 2, sim  # the phase matters in the model
    assert min(sim) - 1 <= kernel <= max(sim) + 1, (kernel, sim)


# scenarios/radio/driveby.toml with a constant schedule short enough for a test: associations
# of 6 s every 9 s (3-s holes), data after 1 s of set-up: data periods [1, 6), [10, 15),
# [19, 24) s.
DRIVEBY_FIXED = [f"links.air.stations.car.driveby.{k}" for k in (
    "window_mean=6s", "hole_mean=3s", "setup=1s", "window_cv=0", "hole_cv=0", "setup_failure=0")]
DRIVEBY_DATA_S = [(1.0, 6.0), (10.0, 15.0), (19.0, 24.0)]


def test_a_drive_by_station_carries_linux_tcp_only_in_its_data_periods(tmp_path):
    """Issue 14 item 3: drive-by WiFi (seed-000 chapter 3) runs in the kernel backend's
    emulator: both backends draw the same associations (summary.json's
    ``links[].radio.driveby``), Linux CUBIC's bytes acknowledged grow only in the car's data
    periods (and for the ACKs still on the 20-ms wired uplink when one ends: 0.1 s allowed),
    its packets meeting no connectivity are dropped with cause "offline", it resumes after the
    first hole, and in the first data period (1-6 s, before any hole) it carries what the
    simulator's CUBIC does (within 10 %; measured 14.70-14.89 MB acknowledged by 6.1 s in five
    kernel runs, simulator 14.95).

    The whole run's goodput is not compared: after a hole each side resumes at its next
    backed-off retransmission timer, and with a 4-s gap the fourth one falls within
    milliseconds of the next data period's start (timers at RTO·(2^k − 1) s after the loss,
    RTO ≈ 0.26 s). The simulator's falls at 9.83 s, in the set-up, so it resumes at 13.91 s
    (7.13 Mbit/s over 20 s); the kernel's fell at 10.05-10.38 s in three runs (11.2-12.2
    Mbit/s) and before 10 s in one (13.59 s, 7.39 Mbit/s)."""
    import pyarrow.parquet as pq

    first_period = {}
    for backend in ("kernel", "sim"):
        out = tmp_path / backend
        sets = [a for kv in ["duration=20s", *DRIVEBY_FIXED] for a in ("--set", kv)]
        r = _rove("run", "--backend", backend, REPO / "scenarios" / "radio" / "driveby.toml",
                  "-o", out, *sets, "--quiet", env=_env(TRAFFIC))
        assert r.returncode == 0, r.stderr
        summary = json.loads((out / "summary.json").read_text())
        air = next(l for l in summary["links"] if l["name"] == "air")
        car = air["radio"]["driveby"][0]
        assert [(a["start_s"], a["data_from_s"], a["end_s"]) for a in car["associations"]] == [
            (0.0, 1.0, 6.0), (9.0, 10.0, 15.0), (18.0, 19.0, 24.0)], (backend, car)
        assert air["offline_drops"] == car["offline_drops"] > 0, (backend, air)
        ts = pq.read_table(out / "timeseries.parquet").to_pandas()
        ts = ts[ts.subflow == -1]
        grew = ts.time_s[ts.bytes_acked.diff() > 0]
        outside = [t for t in grew
                   if not any(a <= t <= b + 0.1 for a, b in DRIVEBY_DATA_S)]
        assert not outside, (backend, outside[:5])
        assert (grew >= 10.0).any(), backend  # it resumed after the first hole
        first_period[backend] = int(ts.bytes_acked[ts.time_s <= 6.1].max())
    causes = (tmp_path / "kernel" / "raw" / "emu" / "drops.csv").read_text().splitlines()[1:]
    assert sum(1 for line in causes if line.split(",")[2] == "offline") > 0
    k, s = first_period["kernel"], first_period["sim"]
    assert abs(k - s) <= 0.1 * s, first_period
