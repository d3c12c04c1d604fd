"""rove's eBPF congestion controls on the kernel backend (issue 13): algorithms this kernel
lacks, loaded as struct_ops for a run and unloaded after it, also after SIGKILL + cleanup, and
shared by runs that overlap.

They need what the kernel backend needs (root, /dev/net/tun, the binaries) plus the built
objects in target/bpf (``make setup`` builds them where the kernel has BTF) and bpftool;
otherwise they are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = REPO / "target" / "release"
BPF = REPO / "target" / "bpf"
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
LEASES = Path("/run/rove-bpf")


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "the kernel backend needs root"
    if not Path("/dev/net/tun").exists():
        return "/dev/net/tun is missing"
    if shutil.which("bpftool") is None:
        return "bpftool is not installed (make setup installs Debian's)"
    if not Path("/sys/kernel/btf/vmlinux").exists():
        return "the kernel has no BTF: eBPF congestion controls cannot be built"
    for b in ("rove-kernel", "rove-emu", "rove-traffic"):
        if not (BIN / b).is_file():
            return f"{BIN / b} is not built (run 'make setup')"
    if not (BPF / "westwood.bpf.o").is_file():
        return f"{BPF}/westwood.bpf.o is not built (run 'make setup')"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))

LOSSY = """
name = "lossy"
duration = "{duration}"
seed = 1
[links.down]
rate = "20Mbps"
delay = "20ms"
buffer = "100KB"
loss = 0.01
[links.up]
rate = "100Mbps"
delay = "20ms"
[[flows]]
name = "f"
cc = "{cc}"
path = ["down"]
ack_path = ["up"]
"""


def _available() -> list[str]:
    return AVAILABLE.read_text().split()


def _kernel_run(tmp_path: Path, text: str, name: str) -> dict:
    """``rove run --backend kernel`` of the scenario ``text``; its summary.json. A run its
    results flag with ``kernel_anomalies`` (an impossible congestion state of this kernel with
    eBPF congestion controls, docs/kernel-backend.md) measures no congestion control: it is
    printed and run again, three runs at most."""
    scenario = tmp_path / f"{name}.toml"
    scenario.write_text(text)
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    for attempt in range(3):
        r = subprocess.run([sys.executable, "-m", "rove", "run", "--backend", "kernel",
                            str(scenario), "-o", str(tmp_path / name)]
                           + (["--force"] if attempt else []),
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        summary = json.loads((tmp_path / name / "summary.json").read_text())
        if not summary.get("kernel_anomalies"):
            break
        print(f"{name}: the kernel anomaly {summary['kernel_anomalies']}: run again")
    return summary


def _kernel_run_text(tmp_path: Path, text: str, name: str) -> dict:
    """The first flow of :func:`_kernel_run`'s summary."""
    return _kernel_run(tmp_path, text, name)["flows"][0]


@pytest.fixture(scope="module")
def westwood_and_reno(tmp_path_factory):
    if "westwood" in _available():
        pytest.skip("this kernel has its own westwood: nothing to load")
    tmp = tmp_path_factory.mktemp("bpf")
    return (_kernel_run(tmp, LOSSY.format(cc="westwood", duration="8s"), "westwood"),
            _kernel_run(tmp, LOSSY.format(cc="reno", duration="8s"), "reno"))


def test_westwood_runs_on_the_kernel_and_is_unloaded_after(westwood_and_reno):
    westwood, _ = westwood_and_reno
    flow = westwood["flows"][0]
    assert flow["cc"] == "westwood" and flow["goodput_mbps"] > 1.0, flow
    assert "westwood" not in _available()
    assert not any((LEASES / "westwood").glob("*"))


def test_westwood_keeps_its_rate_under_random_loss_better_than_reno(westwood_and_reno):
    # Westwood+'s signature: a random (non-congestive) loss sets ssthresh from bw_est·rtt_min
    # instead of halving. 1 % loss, 20 Mbit/s, 40 ms: measured 5.07 vs 3.22 Mbit/s (1.57x) on
    # the kernel; the simulator's ports give 7.03 vs 3.32.
    westwood, reno = westwood_and_reno
    w, r = westwood["flows"][0]["goodput_mbps"], reno["flows"][0]["goodput_mbps"]
    assert w > 1.2 * r, (w, r)


DEEP = """
name = "deep"
duration = "8s"
seed = 1
[links.down]
rate = "20Mbps"
delay = "20ms"
buffer = "400KB"
[links.up]
rate = "100Mbps"
delay = "20ms"
[[flows]]
name = "f"
cc = "{cc}"
path = ["down"]
ack_path = ["up"]
"""



@pytest.mark.parametrize("cc", ["veno", "illinois"])
def test_loss_tolerant_ports_beat_reno_under_random_loss(cc, westwood_and_reno, tmp_path):
    # Veno cuts by 1/5 when its backlog estimate says the loss was random; Illinois cuts by
    # beta = 1/8 while the queueing delay is low. 1 % loss, 20 Mbit/s, 40 ms (measured on the
    # kernel: veno 4.95, illinois 14.16, reno 3.15 Mbit/s; simulator: 5.12, 16.11, 3.32).
    if cc in _available():
        pytest.skip(f"this kernel has its own {cc}")
    flow = _kernel_run_text(tmp_path, LOSSY.format(cc=cc, duration="8s"), cc)
    reno = westwood_and_reno[1]["flows"][0]["goodput_mbps"]
    assert flow["cc"] == cc
    assert flow["goodput_mbps"] > 1.2 * reno, (flow["goodput_mbps"], reno)
    assert cc not in _available()


@pytest.fixture(scope="module")
def deep_reno(tmp_path_factory):
    return _kernel_run_text(tmp_path_factory.mktemp("deep"), DEEP.format(cc="reno"), "reno")


def test_vegas_keeps_the_queue_short_where_reno_fills_it(tmp_path, deep_reno):
    # 20 Mbit/s, 40 ms, a 400 KB buffer (~3 BDP): Vegas holds alpha-beta packets in the queue
    # (measured mean RTT 62.3 ms on the kernel, 64.6 on the simulator), Reno fills the buffer
    # (131.0 and 132.8 ms); both carry ~19 Mbit/s.
    if "vegas" in _available():
        pytest.skip("this kernel has its own vegas")
    vegas = _kernel_run_text(tmp_path, DEEP.format(cc="vegas"), "vegas")
    assert vegas["cc"] == "vegas"
    assert vegas["mean_rtt_ms"] < 0.6 * deep_reno["mean_rtt_ms"], (vegas, deep_reno)
    assert vegas["goodput_mbps"] > 0.9 * deep_reno["goodput_mbps"], (vegas, deep_reno)


def test_cdg_backs_off_on_delay_gradients_where_reno_fills_the_buffer(tmp_path, deep_reno):
    # The same path: CDG's probabilistic backoff on a rising RTT keeps the queue near empty
    # (measured mean RTT 43.5 ms on the kernel, 44.6 on the simulator). Goodput, not asserted:
    # 17.78 Mbit/s on the kernel, 16.02 on the simulator. Before the port held cong_avoid as
    # CWR does after a backoff it was 8.28 (it could back off again one round later instead of
    # two: docs/kernel-backend.md).
    if "cdg" in _available():
        pytest.skip("this kernel has its own cdg")
    cdg = _kernel_run_text(tmp_path, DEEP.format(cc="cdg"), "cdg")
    print(f"cdg on the kernel: {cdg['goodput_mbps']:.2f} Mbit/s, mean RTT {cdg['mean_rtt_ms']:.1f} ms")
    assert cdg["cc"] == "cdg"
    assert cdg["mean_rtt_ms"] < 0.6 * deep_reno["mean_rtt_ms"], (cdg, deep_reno)


def test_c2tcp_over_the_kernels_cubic_holds_the_delay_near_its_setpoint(tmp_path):
    # C2TCP rides on the kernel's own CUBIC (its hooks called as kfuncs) and cuts the window
    # when the RTT stays above 2 x min RTT for an interval: measured mean RTT 64.0 ms at
    # 18.25 Mbit/s on the kernel (simulator 64.2 ms, 18.37), where CUBIC fills the 400 KB buffer
    # (148.9 ms; simulator 152.7).
    if "c2tcp" in _available():
        pytest.skip("this kernel has its own c2tcp")
    c2tcp = _kernel_run_text(tmp_path, DEEP.format(cc="c2tcp"), "c2tcp")
    cubic = _kernel_run_text(tmp_path, DEEP.format(cc="cubic"), "cubic")
    assert c2tcp["cc"] == "c2tcp"
    assert c2tcp["mean_rtt_ms"] < 0.6 * cubic["mean_rtt_ms"], (c2tcp, cubic)
    assert c2tcp["goodput_mbps"] > 0.85 * cubic["goodput_mbps"], (c2tcp, cubic)


def test_two_overlapping_runs_share_one_registration(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY.format(cc="westwood", duration="4s"))
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    procs = [subprocess.Popen([str(BIN / "rove-kernel"), "run", str(scenario), "-o",
                               str(tmp_path / f"out{k}")], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for k in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    for k in range(2):
        flows = [json.loads(line) for line in
                 (tmp_path / f"out{k}" / "raw" / "flow-0.jsonl").read_text().splitlines()
                 if line.strip()]
        assert any(f.get("cc") == "westwood" for f in flows), flows[-1:]
    assert "westwood" not in _available()


def test_a_killed_run_leaves_its_algorithm_until_cleanup(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY.format(cc="westwood", duration="30s"))
    proc = subprocess.Popen([str(BIN / "rove-kernel"), "run", str(scenario), "-o",
                             str(tmp_path / "out")], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 40  # a wait budget: namespace set-up can wait for teardowns
    while time.monotonic() < deadline and "westwood" not in _available():
        time.sleep(0.05)
    assert "westwood" in _available(), "the run never loaded westwood"
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert "westwood" in _available()  # SIGKILL: nothing could unload it
    r = subprocess.run([str(BIN / "rove-kernel"), "cleanup"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "unregistered eBPF congestion control westwood" in r.stdout
    assert "westwood" not in _available()


def test_an_algorithm_neither_native_nor_ported_is_a_clear_error(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY.format(cc="vivace", duration="2s"))
    r = subprocess.run([str(BIN / "rove-kernel"), "run", str(scenario), "-o",
                        str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 2
    assert "no eBPF port" in r.stderr and "loadable as eBPF: " in r.stderr, r.stderr


SWITCHES = """
name = "switch"
duration = "8s"
seed = 1
[links.down]
rate = "20Mbps"
delay = "20ms"
buffer = "200KB"
[links.up]
rate = "100Mbps"
delay = "20ms"
[[flows]]
name = "f"
cc = "cubic"
path = ["down"]
ack_path = ["up"]
[[actions]]
at = "3s"
flow = "f"
cc = "bbr"
handoff = "keep"
[[actions]]
at = "5s"
flow = "f"
cc = "westwood"
handoff = "set"
cwnd = 40
[[actions]]
at = "6.5s"
flow = "f"
cc = "cubic"
handoff = "delay_scaled"
samples = 7
"""


def test_live_switches_show_in_the_time_series_with_their_handoff(tmp_path):
    # CUBIC -> BBR at 3 s keeping the window, -> Westwood+ at 5 s with cwnd set to 40 through
    # the handoff algorithm, -> CUBIC at 6.5 s with seed-002's Eq. 6.3 over the last 7 samples.
    _kernel_run_text(tmp_path, SWITCHES, "switch")
    import pandas as pd

    ts = pd.read_parquet(tmp_path / "switch" / "timeseries.parquet")
    cc = ts.set_index("time_s")["cc"].astype(str)
    assert set(cc[cc.index < 2.9]) == {"cubic"}
    assert set(cc[(cc.index > 3.1) & (cc.index < 4.9)]) == {"bbr"}
    assert set(cc[(cc.index > 5.1) & (cc.index < 6.4)]) == {"westwood"}
    assert set(cc[cc.index > 6.6]) == {"cubic"}

    rows = [json.loads(line) for line in
            (tmp_path / "switch" / "raw" / "flow-0.jsonl").read_text().splitlines() if line.strip()]
    samples = [r for r in rows if not r.get("final")]
    done = next(r for r in rows if r.get("final"))["switches"]
    assert [s["cc"] for s in done] == ["bbr", "westwood", "cubic"]
    assert done[0]["cwnd_pkts"] is None and done[1]["cwnd_pkts"] == 40
    # Eq. 6.3 from the client's own last 7 samples before the switch: floor(Σcwnd·Dmin/Σsrtt).
    before = [s for s in samples if s["t_s"] < done[2]["t_s"]][-7:]
    expected = max(2, sum(s["cwnd_pkts"] for s in before) * round(before[-1]["min_rtt_ms"] * 1000)
                   // sum(round(s["srtt_ms"] * 1000) for s in before))
    assert done[2]["cwnd_pkts"] == expected, (done[2], expected)
    # The kernel took those windows: the first sample after each set switch starts there (it
    # may have grown by the ACKs of the few ms before the sample, never shrunk below).
    for sw in done[1:]:
        after = next(s for s in samples if s["t_s"] > sw["t_s"])
        assert sw["cwnd_pkts"] <= after["cwnd_pkts"] <= 1.5 * sw["cwnd_pkts"], (sw, after)
        assert after["cc"] == sw["cc"]
    assert "handoff" not in _available() and "westwood" not in _available()


def test_switches_the_kernel_cannot_do_are_clear_errors(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(SWITCHES.replace('at = "3s"', 'at = "0s"'))
    r = subprocess.run([str(BIN / "rove-kernel"), "run", str(scenario), "-o",
                        str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 2
    assert "actions[0]" in r.stderr and "after flow" in r.stderr, r.stderr


def _shared_bottleneck(tmp_path: Path, cc: str, coupling: str, seed: int) -> tuple[float, list]:
    """(The MPTCP connection's goodput over the TCP flow's, the run's kernel anomalies): 30 s of
    the committed shared-bottleneck scenario with 0.1 % random loss at the bottleneck (as the
    simulator's own coupled.rs test: single DropTail runs swing with the phase of the
    overflows)."""
    out = tmp_path / f"sb-{cc}-{seed}"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([sys.executable, "-m", "rove", "run", "--backend", "kernel",
                        str(REPO / "scenarios" / "multipath" / "shared-bottleneck.toml"),
                        "-o", str(out), "--seed", str(seed), "--set", "duration=30s",
                        "--set", f"flows.0.cc={cc}", "--set", f"flows.0.coupling={coupling}",
                        "--set", "links.bottleneck.loss=0.001"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    flows = {f["name"]: f for f in summary["flows"]}
    assert flows["mptcp"]["cc"] == cc
    print(f"{cc} seed {seed}: " + ", ".join(
        f"{name} {f['goodput_mbps']:.2f} Mbit/s retrans {f['retrans_rate']:.4f}"
        for name, f in flows.items()))
    return (flows["mptcp"]["goodput_mbps"] / flows["tcp"]["goodput_mbps"],
            summary.get("kernel_anomalies", []))


@pytest.mark.parametrize("cc", ["lia", "olia", "balia"])
def test_coupled_ports_on_upstream_mptcp_take_about_one_share_at_a_shared_bottleneck(cc,
                                                                                    tmp_path):
    # Two MPTCP subflows and one TCP Reno flow through one 20 Mbit/s bottleneck with 0.1 %
    # random loss; rove's eBPF LIA couples the subflows through a map keyed by their
    # connection. Measured on this machine (connection / TCP goodput), 90-s kernel runs: 17
    # runs 0.92-1.30, median 1.02, mean 1.04, 15 of 17 within the 0.85-1.15 (the
    # simulator's 90-s seeds 1-8: 0.96-1.20, mean 1.09); 30-s runs spread more (0.97-1.43).
    # Uncoupled Reno subflows: 1.23-2.07 (kernel), 1.64 and 2.09 (simulator).
    # About one 90-s LIA run in four (8 of 26) hits a kernel anomaly (also seen with eBPF
    # BALIA, and with single-path eBPF CDG and Illinois under 1 % loss): a subflow enters
    # recovery with ssthresh 0x81104110 while none of LIA's hooks ran, and PRR then grows cwnd
    # to ~10^9 (docs/kernel-backend.md, "Impossible congestion states"; the results flag it
    # as kernel_anomalies). Such a run measures no congestion control: it is printed and
    # replaced by the next seed. CI cannot afford the runs the band needs, so it asserts about
    # one share, not the ~2 of independent subflows, over three clean 30-s runs.
    # The criterion. Clean 30-s runs of the three ports spread 0.73-1.54 with no change to the
    # code between them (LIA 1.30/0.73/0.74 in a fresh-clone CI run, 1.19/0.91/1.32 here the same
    # day; OLIA 0.79/1.07/0.92 and 1.09/0.77/0.95; BALIA 0.96/0.80/0.73 and 0.90/1.54/0.91):
    # about 50 loss events per flow in 30 s give each run's ratio a standard deviation near 0.2.
    # The earlier criterion, the median of three runs in [0.85, 1.5], failed about one run in
    # three by that spread alone (it failed LIA at 0.74 in CI and 0.83 here). The mean of three
    # (standard deviation ~0.12) is asserted in [0.7, 1.5]: a false failure at a true share of
    # 0.92 (OLIA's 90-s median) is ~3 %, and a port that takes half a share or two fails.
    # BALIA (the same
    # machinery, mptcp_coupled.h) measured 1.05 and 1.12 in 60-s kernel runs, the simulator's
    # 90-s seeds 1.13 and 1.04. OLIA (olia.bpf.c, the same machinery): clean 30-s runs 0.787,
    # 1.065, 0.923 (median 0.923; seeds 1 and 3 hit the kernel anomaly), load average 2.2-2.6;
    # the simulator's 30-s seeds 1-6 0.88-1.31, median 1.01. The band itself is judged over 90-s
    # runs by the fidelity study's coupled experiment (docs/reproductions/fidelity/coupled.md:
    # OLIA 0.90 on the kernel, 0.95 on the simulator).
    if cc in _available():
        pytest.skip(f"this kernel has its own {cc}")
    clean, anomalous = [], []
    for seed in range(1, 7):
        ratio, anomalies = _shared_bottleneck(tmp_path, cc, "auto", seed)
        (anomalous if anomalies else clean).append((seed, round(ratio, 3), anomalies))
        if len(clean) == 3:
            break
    print(f"{cc} connection / TCP, clean 30-s runs: {clean}; runs with kernel anomalies: "
          f"{anomalous}")
    assert len(clean) == 3, f"three of six runs hit the kernel anomaly: {anomalous}"
    mean = sum(r for _, r, _ in clean) / len(clean)
    assert 0.7 <= mean <= 1.5, clean
    assert cc not in _available()


def test_uncoupled_lia_is_refused_on_the_kernel(tmp_path):
    r = subprocess.run([str(BIN / "rove-kernel"), "run",
                        str(REPO / "scenarios" / "multipath" / "shared-bottleneck.toml"), "-o",
                        str(tmp_path / "out"), "--set", "flows.0.cc=lia"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "flows[0] (mptcp).coupling" in r.stderr and "couples every subflow" in r.stderr, r.stderr


def _sim_run_text(tmp_path: Path, text: str, name: str) -> dict:
    """The first flow of the simulator's run of the scenario ``text`` (for comparison)."""
    scenario = tmp_path / f"{name}-sim.toml"
    scenario.write_text(text)
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([sys.executable, "-m", "rove", "run", str(scenario), "-o",
                        str(tmp_path / f"{name}-sim"), "--quiet"], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / f"{name}-sim" / "summary.json").read_text())["flows"][0]


def test_bbr2_fills_the_link_with_a_short_queue_where_cubic_fills_the_buffer(tmp_path):
    # 20 Mbit/s, 40 ms, a 400 KB buffer (4 BDP), 8 s. Measured on the kernel (two runs):
    # bbr2 18.40 / 18.24 Mbit/s, mean RTT 48.4 / 48.5 ms, p95 119.3 / 119.9 ms (STARTUP's
    # queue), no retransmissions; CUBIC 18.89 / 18.89 Mbit/s, mean RTT 149.9 / 149.6 ms,
    # 0.2 % retransmitted. The simulator's bbr2 on the same scenario: 18.47 Mbit/s, 47.8 ms,
    # p95 119.8 ms, no retransmissions (CUBIC 18.97 Mbit/s, 152.7 ms).
    if "bbr2" in _available():
        pytest.skip("this kernel has its own bbr2")
    bbr2 = _kernel_run_text(tmp_path, DEEP.format(cc="bbr2"), "bbr2")
    cubic = _kernel_run_text(tmp_path, DEEP.format(cc="cubic"), "cubic")
    sim = _sim_run_text(tmp_path, DEEP.format(cc="bbr2"), "bbr2")
    print(f"kernel bbr2 {bbr2}\nkernel cubic {cubic}\nsimulator bbr2 {sim}")
    assert bbr2["cc"] == "bbr2"
    assert bbr2["goodput_mbps"] > 0.85 * 20, bbr2
    assert bbr2["mean_rtt_ms"] < 0.5 * cubic["mean_rtt_ms"], (bbr2, cubic)
    assert bbr2["retrans_rate"] <= cubic["retrans_rate"], (bbr2, cubic)
    # Kernel and simulator agree (the fidelity criteria of issue 13: goodput 5 %, mean RTT 10 %).
    assert abs(bbr2["goodput_mbps"] / sim["goodput_mbps"] - 1) < 0.05, (bbr2, sim)
    assert abs(bbr2["mean_rtt_ms"] / sim["mean_rtt_ms"] - 1) < 0.10, (bbr2, sim)
    assert "bbr2" not in _available()


def test_bbr2_backs_off_under_random_loss_where_bbr_does_not(tmp_path):
    # 20 Mbit/s, 40 ms, a 100 KB (1 BDP) buffer, 1 % random loss, 8 s, two runs each. BBRv2
    # cuts bw_lo / inflight_lo by beta in every round with a loss (outside its probes); BBRv1
    # ignores loss below its 20 % long-term threshold. Measured on the kernel: bbr2 15.90 /
    # 16.13 Mbit/s, bbr 18.59 / 18.70 (ratio of the means 0.86); the simulator: bbr2 16.98,
    # bbr 18.82 (0.90).
    if "bbr2" in _available():
        pytest.skip("this kernel has its own bbr2")
    runs = {cc: [_kernel_run_text(tmp_path, LOSSY.format(cc=cc, duration="8s"), f"{cc}{k}")
                 for k in range(2)] for cc in ("bbr2", "bbr")}
    mean = {cc: sum(f["goodput_mbps"] for f in fs) / len(fs) for cc, fs in runs.items()}
    sim = _sim_run_text(tmp_path, LOSSY.format(cc="bbr2", duration="8s"), "bbr2")
    print(f"kernel goodput means {mean}; simulator bbr2 {sim['goodput_mbps']:.2f} Mbit/s")
    assert all(f["cc"] == "bbr2" for f in runs["bbr2"])
    assert mean["bbr2"] < 0.95 * mean["bbr"], mean
    assert mean["bbr2"] > 0.5 * 20, mean  # backs off, does not collapse as Reno does (3 Mbit/s)
    assert abs(mean["bbr2"] / sim["goodput_mbps"] - 1) < 0.10, (mean, sim)


def test_bbr2plus_keeps_its_rate_under_random_loss_as_on_the_simulator(tmp_path):
    # BBRv2+ (seed 000 ch. 4, the thesis's defaults): alpha = 20 % where BBRv2 has 2 %, and
    # ProbeTry / continuous probing keep it probing. 20 Mbit/s, 40 ms, 100 KB buffer, 1 % random
    # loss, 8 s: measured on the kernel 18.37 Mbit/s (BBRv2 there: 15.90 / 16.13), the
    # simulator's bbr2plus 18.40.
    if "bbr2plus" in _available():
        pytest.skip("this kernel has its own bbr2plus")
    flow = _kernel_run_text(tmp_path, LOSSY.format(cc="bbr2plus", duration="8s"), "bbr2plus")
    sim = _sim_run_text(tmp_path, LOSSY.format(cc="bbr2plus", duration="8s"), "bbr2plus")
    print(f"kernel bbr2plus {flow}\nsimulator bbr2plus {sim}")
    assert flow["cc"] == "bbr2plus"
    assert flow["goodput_mbps"] > 0.85 * 20, flow
    assert abs(flow["goodput_mbps"] / sim["goodput_mbps"] - 1) < 0.05, (flow, sim)
    assert "bbr2plus" not in _available()


def test_bbr2plus_cc_params_reach_the_kernels_socket(tmp_path):
    # cc_params go through the port's parameter map (keyed by the run's sender namespace and
    # the flow's address): probe_rtt_cwnd_gain = 0 holds PROBE_RTT (about 5 s in) at 4
    # packets; by default it holds 0.5 BDP. Measured on the kernel, 20 Mbit/s, 40 ms, 200 KB,
    # 8 s: min cwnd after 2 s 4 packets with the parameter, 34 without (both at 5.05 s).
    if "bbr2plus" in _available():
        pytest.skip("this kernel has its own bbr2plus")
    import pandas as pd

    text = DEEP.format(cc="bbr2plus").replace('buffer = "400KB"', 'buffer = "200KB"')
    with_gain = text.replace('cc = "bbr2plus"', 'cc = "bbr2plus"\ncc_params = { probe_rtt_cwnd_gain = 0.0 }')
    _kernel_run(tmp_path, with_gain, "gain0")
    ts = pd.read_parquet(tmp_path / "gain0" / "timeseries.parquet")
    assert ts[ts["time_s"] > 2]["cwnd_pkts"].min() <= 5, ts["cwnd_pkts"].describe()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('cc = "bbr2plus"', 'cc = "bbr2plus"\ncc_params = { theta = 0.5 }'))
    r = subprocess.run([str(BIN / "rove-kernel"), "run", str(bad), "-o", str(tmp_path / "bad")],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "flows[0] (f).cc_params.theta" in r.stderr and "from 1 to 4" in r.stderr, r.stderr
    assert "bbr2plus" not in _available()


def test_overlapping_bbr2plus_runs_keep_their_own_cc_params(tmp_path):
    # Two runs at once share one registration of bbr2plus and its parameter map; each flow's
    # entry is keyed by its run's sender namespace, so each socket finds its own: measured
    # min cwnd after 2 s 4 packets with probe_rtt_cwnd_gain = 0, 34 (0.5 BDP) without.
    if "bbr2plus" in _available():
        pytest.skip("this kernel has its own bbr2plus")
    text = DEEP.format(cc="bbr2plus").replace('buffer = "400KB"', 'buffer = "200KB"')
    texts = [text.replace('cc = "bbr2plus"',
                          'cc = "bbr2plus"\ncc_params = { probe_rtt_cwnd_gain = 0.0 }'), text]
    procs = []
    for k, t in enumerate(texts):
        (tmp_path / f"s{k}.toml").write_text(t)
        procs.append(subprocess.Popen([str(BIN / "rove-kernel"), "run", str(tmp_path / f"s{k}.toml"),
                                       "-o", str(tmp_path / f"out{k}")], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=90)
        assert p.returncode == 0, err
    low = []
    for k in range(2):
        rows = [json.loads(line) for line in
                (tmp_path / f"out{k}" / "raw" / "flow-0.jsonl").read_text().splitlines()
                if line.strip()]
        low.append(min(r["cwnd_pkts"] for r in rows if not r.get("final") and r["t_s"] > 2))
    assert low[0] <= 5 and low[1] >= 20, low
    assert "bbr2plus" not in _available()
