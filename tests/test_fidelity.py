"""``rove reproduce fidelity`` (python/rove/reproduce/fidelity/): the scenarios of issue 5 item 6
and of the deep-buffer cellular experiment, the sim-versus-kernel rows, their targets and the
verdicts at each level on hand-made numbers, and a --quick simulator-only report on the shared
study framework."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from rove.cli import main as cli_main
from rove.reproduce import fidelity
from rove.reproduce.document import check_json
from rove.reproduce.fidelity import (Case, KernelRunner, Outcome, buffer_pkts, deep, grid,
                                     grid_cases, rows_of, zoo)
from rove.reproduce.study import Context
from rove.reproduce.verdicts import FAILS, HOLDS, NOT_MEASURED, PARTLY, judge_distributions

from conftest import assert_drawn_png


def test_buffers_are_bdp_multiples_in_packets():
    # 10 Mbit/s x 20 ms = 25 000 B = 16.7 packets of 1500 B
    assert buffer_pkts(10, 20, 2) == 33
    assert buffer_pkts(10, 20, 0.5) == 8
    # 50 Mbit/s x 100 ms = 625 000 B = 416.7 packets
    assert buffer_pkts(50, 100, 8) == 3333
    assert buffer_pkts(1, 1, 0.5) == 2  # never below 2 packets


def test_the_full_list_covers_the_issues_grid():
    exps = grid_cases(quick=False, traces_dir=None)
    assert len(exps) == 3 * 2 * 2 * 2 * 3 == 72
    assert len({e.id for e in exps}) == 72
    assert {(e.cc, e.flows, e.rate_mbps, e.rtt_ms, e.buffer_bdp) for e in exps} == {
        (cc, n, r, t, b) for cc in ("reno", "cubic", "bbr") for n in (1, 2) for r in (10, 50)
        for t in (20, 100) for b in (0.5, 2, 8)}
    e = next(x for x in exps if x.id == "bbr-2f-50M-100ms-0p5bdp")
    s = e.scenario
    assert s["links"]["down"] == {"rate": "50Mbps", "buffer": "208pkt", "delay": "50ms",
                                  "queue": "droptail"}
    assert s["links"]["up"]["delay"] == "50ms"
    assert s["flows"][0]["cc"] == "bbr" and s["flows"][0]["count"] == 2
    assert s["duration"] == "30s"


def _trace_dir(tmp_path):
    d = tmp_path / "traces"
    d.mkdir()
    # 2 packets per ms for 2 s: 24 Mbit/s
    (d / "Test.down").write_text("".join(f"{t}\n{t}\n" for t in range(1, 2001)))
    (d / "Test.up").write_text("".join(f"{t}\n" for t in range(1, 2001)))
    return d


def test_traces_add_one_scenario_per_algorithm(tmp_path):
    d = _trace_dir(tmp_path)
    exps = grid_cases(quick=False, traces_dir=d)
    traced = [e for e in exps if e.trace is not None]
    assert [e.cc for e in traced] == ["reno", "cubic", "bbr"]
    mean, length = fidelity.trace_mean_mbps(d / "Test.down")
    assert mean == pytest.approx(24.0) and length == pytest.approx(2.0)
    assert traced[0].duration_s == pytest.approx(2.0)  # at most the trace's length
    assert traced[0].scenario["links"]["down"]["buffer"] == f"{buffer_pkts(24.0, 40, 2)}pkt"
    quick = grid_cases(quick=True, traces_dir=d)
    assert len(quick) == 5 and sum(e.trace is not None for e in quick) == 1
    assert all(e.duration_s <= 10 for e in quick)


def test_rows_hold_kernel_over_sim_and_the_targets():
    e = Case("x", "cubic", 1, 20, 2, rate_mbps=10)
    sim = {"flows": [{"name": "cubic", "goodput_mbps": 10.0, "mean_rtt_ms": 40.0,
                      "p95_rtt_ms": 50.0, "retrans_rate": 0.01}],
           "links": [{"name": "down", "mean_queue_delay_ms": 20.0, "p95_queue_delay_ms": 30.0},
                     {"name": "up", "mean_queue_delay_ms": 0.0}]}
    kern = {"flows": [{"name": "cubic", "goodput_mbps": 9.6, "mean_rtt_ms": 45.0,
                       "p95_rtt_ms": 54.0, "retrans_rate": 0.02}],
            "links": [{"name": "down", "mean_queue_delay_ms": 25.0, "p95_queue_delay_ms": 33.0}]}
    flow, link = rows_of(Outcome(e, sims=[sim], kernels=[kern]))
    assert flow["goodput_mbps"]["ratio"] == pytest.approx(0.96)
    assert flow["goodput_mbps"]["within"] is True  # 4 % off, target 5 %
    assert flow["mean_rtt_ms"]["ratio"] == pytest.approx(1.125)
    assert flow["mean_rtt_ms"]["within"] is False  # 12.5 % off, target 10 %
    assert flow["p95_rtt_ms"]["within"] is True  # 8 % off
    assert flow["retrans_rate"]["ratio"] == pytest.approx(2.0) and flow["retrans_rate"]["within"] is None
    assert link["name"] == "down" and link["mean_queue_delay_ms"]["ratio"] == pytest.approx(1.25)
    # without kernel results: the simulator's values, nothing judged
    (alone, _) = rows_of(Outcome(e, sims=[sim]))
    assert alone["goodput_mbps"] == {"sim": 10.0, "kernel": None, "ratio": None, "within": None}


def test_a_build_without_the_kernel_backend_is_detected(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'usage: rove run SCENARIO -o DIR [--seed N]'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    ok, why = fidelity.kernel_backend_status(str(fake))
    assert ok is False and "--backend" in why
    ok, why = fidelity.kernel_backend_status(str(tmp_path / "missing"))
    assert ok is False and "cannot run" in why


def test_quick_sim_only_writes_the_report(tmp_path, capsys):
    out = tmp_path / "fid"
    code = cli_main(["reproduce", "fidelity", "--quick", "--sim-only", "--duration", "1",
                     "--traces", str(_trace_dir(tmp_path)), "-o", str(out)])
    assert code == 0
    for name in ("report.md", "report.html", "report.json", "fidelity.json", "grid-goodput.png",
                 "grid-rtt.png", "grid-queue_delay.png", "grid-sim_by_buffer.png"):
        assert (out / name).stat().st_size > 0, name
    # the shared framework's report.json: well formed, every claim "not measured" without the
    # kernel (never a verdict the simulator alone could earn)
    report = json.loads((out / "report.json").read_text())
    assert check_json((out / "report.json").read_text()) == []
    assert [s["title"][:2] for s in report["sections"]] == ["1.", "2.", "3.", "4."]
    claims = [c for s in report["sections"][:2] for c in s["claims"]]
    assert len(claims) == 9 + 4
    # every claim about the kernel is "not measured"; the coupled experiment's claims about the
    # simulator alone ("LIA/OLIA/BALIA on the simulator takes one share") are the ones with a
    # verdict
    sim_only = [c for s in report["sections"] for c in s["claims"]
                if " on the simulator takes one share" in c["statement"]]
    assert len(sim_only) == 3 and all(c["verdict"] != NOT_MEASURED for c in sim_only)
    assert {c["verdict"] for s in report["sections"] for c in s["claims"]
            if c not in sim_only} == {NOT_MEASURED}
    doc = json.loads((out / "fidelity.json").read_text())
    assert doc["runs"] == 5 and doc["kernel_runs"] == 0 and doc["failures"] == []
    assert doc["kernel"] == "not run (--sim-only)"
    flows = [r for r in doc["rows"] if r["kind"] == "flow"]
    assert len(flows) == 6  # four one-flow scenarios and one with two flows
    assert all(r["goodput_mbps"]["sim"] > 0 for r in flows)
    assert (out / "scenarios" / "cubic-2f-50M-100ms-0p5bdp.toml").is_file()
    assert (out / "runs" / "cubic-2f-50M-100ms-0p5bdp" / "sim" / "summary.json").is_file()
    # the deep-buffer experiment: the trace with 1.5 MB, two simulator seeds
    deep_runs = out / "deep-cellular" / "runs" / "deep-cubic-Test_down-40ms-1.5MB"
    assert (deep_runs / "sim-seed1" / "summary.json").is_file()
    assert (deep_runs / "sim-seed2" / "summary.json").is_file()
    md = (out / "report.md").read_text()
    assert "kernel results: 0 of 5 runs (not run (--sim-only))" in md
    assert "| reno-1f-10M-20ms-2bdp | reno |" in md
    assert "reproduce fidelity:" in capsys.readouterr().out


def test_bad_options_are_one_line_exit_2(tmp_path, capsys):
    assert cli_main(["reproduce", "fidelity", "--quick"]) == 2
    assert cli_main(["reproduce", "fidelity", "-o", str(tmp_path), "--duration", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and all(ln.startswith("rove: error: ") for ln in err.splitlines())


def _summary(goodput, rtt):
    return {"flows": [{"name": "f", "goodput_mbps": goodput, "mean_rtt_ms": rtt,
                       "p95_rtt_ms": rtt * 1.2, "retrans_rate": 0.0}],
            "links": [{"name": "down", "mean_queue_delay_ms": rtt - 20,
                       "p95_queue_delay_ms": rtt - 15}]}


def test_grid_verdicts_at_each_level_from_hand_made_numbers(tmp_path):
    """Each algorithm and target metric is judged on the share of its flows within target:
    reno all within (holds), cubic one of two (partly), bbr none (does not hold)."""
    def case(cid, cc):
        return Case(cid, cc, 1, 20, 2, rate_mbps=10)

    outcomes = [
        Outcome(case("reno-a", "reno"), sims=[_summary(9.0, 40.0)], kernels=[_summary(9.3, 41.0)]),
        Outcome(case("cubic-a", "cubic"), sims=[_summary(9.0, 40.0)], kernels=[_summary(9.1, 40.5)]),
        Outcome(case("cubic-b", "cubic"), sims=[_summary(9.0, 40.0)], kernels=[_summary(7.0, 60.0)]),
        Outcome(case("bbr-b", "bbr"), sims=[_summary(9.0, 30.0)], kernels=[_summary(8.0, 36.0)]),
    ]
    ctx = Context("grid", tmp_path, False, data=outcomes,
                  options={"kernel_status": "rove run --backend kernel"})
    sec = grid.analyse(ctx)
    verdicts = {c.quote.split(":")[0] + " " + c.quote.split("'s ")[1].split(" is")[0]: c.verdict
                for c in sec.claims}
    assert verdicts == {"reno goodput": HOLDS, "reno mean RTT": HOLDS, "reno p95 RTT": HOLDS,
                        "cubic goodput": PARTLY, "cubic mean RTT": PARTLY,
                        "cubic p95 RTT": PARTLY, "bbr goodput": FAILS, "bbr mean RTT": FAILS,
                        "bbr p95 RTT": FAILS}
    assert sec.verdict == PARTLY
    doc = json.loads((tmp_path / "fidelity.json").read_text())
    assert doc["kernel_runs"] == 4
    assert doc["agreement"]["reno"]["goodput_mbps"] == {
        "compared": 1, "within": 1, "median_abs_error": pytest.approx(0.3 / 9), "verdict": HOLDS}
    assert doc["agreement"]["cubic"]["goodput_mbps"]["within"] == 1
    assert_drawn_png(tmp_path / "grid-goodput.png")
    # without kernel results nothing is judged
    sim_only = [Outcome(o.case, sims=o.sims) for o in outcomes]
    sec = grid.analyse(Context("grid", tmp_path, False, data=sim_only,
                               options={"kernel_status": "not run (--sim-only)"}))
    assert {c.verdict for c in sec.claims} == {NOT_MEASURED} and sec.verdict == NOT_MEASURED


def test_distributions_are_judged_on_medians_and_both_spreads():
    # medians 10 and 10.4: within 5 %
    v, text = judge_distributions([9.8, 10.0, 10.3], [10.4, 10.2, 10.9], 0.05)
    assert v == HOLDS and "ratio 1.04" in text and "3 runs" in text
    # medians 10 and 11.5 (15 % off) but the kernel's runs spread over the simulator's: partly
    assert judge_distributions([9.0, 10.0, 11.0], [10.5, 11.5, 13.0], 0.05)[0] == PARTLY
    # the retransmission outlier of issue 11: 7.0 % against 2.0-2.1 % over three kernel runs
    v, text = judge_distributions([0.070, 0.069, 0.071], [0.020, 0.021, 0.020], 0.25)
    assert v == FAILS and "ratio 0.286" in text
    # symmetric in the spread: the same verdicts with the sides swapped
    assert judge_distributions([10.5, 11.5, 13.0], [9.0, 10.0, 11.0], 0.05)[0] == PARTLY
    # the medians agree but one simulator seed retransmits 22.5 % against the kernel's 3.55 %
    # (a spurious timeout, docs/reproductions/fidelity/deep-cellular.md): partly, not holds
    v, text = judge_distributions([0.0363, 0.2246, 0.0410], [0.0355, 0.0354, 0.0356], 0.25)
    assert v == PARTLY and "outlier run(s) 0.2246" in text
    # tiny absolute differences are no outliers (BBR's retransmissions: 0 against 8.9e-5)
    assert judge_distributions([0.0, 8.9e-5, 9.0e-5], [8.86e-5, 8.87e-5, 8.88e-5], 0.25)[0] == HOLDS
    # a side without runs: not measured, the other side still shown
    v, text = judge_distributions([5.0, 6.0], [], 0.05)
    assert v == NOT_MEASURED and "5.5 [5–6, 2 runs]" in text and "no runs" in text


def test_deep_cellular_cases(tmp_path):
    d = _trace_dir(tmp_path)
    full = deep.deep_cases(False, d)
    assert [c.cc for c in full] == ["cubic", "bbr"]
    c = full[0]
    assert c.scenario["links"]["down"]["buffer"] == "1.5MB"
    assert c.scenario["links"]["down"]["delay"] == "20ms" == c.scenario["links"]["up"]["delay"]
    assert c.duration_s == pytest.approx(2.0)      # at most the trace's length
    assert [c.cc for c in deep.deep_cases(True, d)] == ["cubic"]
    assert deep.deep_cases(True, None) == []


def test_srtt_samples_are_the_flows_samples_after_its_first_rtt(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rove.reproduce.measures import srtt_samples

    pq.write_table(pa.table({"time_s": [0.01, 0.01, 0.02, 0.02, 0.03, 0.03],
                             "flow": ["a", "b"] * 3, "srtt_ms": [0.0, 5.0, 40.0, 6.0, 60.0, 7.0],
                             "subflow": [-1] * 6}), tmp_path / "timeseries.parquet")
    assert list(srtt_samples(tmp_path)) == [40.0, 60.0]        # the first flow, from 0.02 s
    assert list(srtt_samples(tmp_path, "b")) == [5.0, 6.0, 7.0]


def test_existing_kernel_results_are_reused_and_drawn_over_the_simulator(tmp_path):
    import rove

    cases = grid_cases(quick=True, traces_dir=None, duration_s=1)[:1]
    c = cases[0]
    out = tmp_path / "fid"
    # Stand-in for a kernel run: the simulator with another seed, already in place, so
    # run_cases must reuse it and not start a kernel run.
    rove.run(c.scenario, out=out / "runs" / c.id / "kernel", seed=5)

    def never(*a, **k):
        raise AssertionError("a kernel run was started")

    outcomes = fidelity.run_cases(cases, out, KernelRunner(True, run=never))
    (o,) = outcomes
    assert o.kernel is not None and o.kernel_error is None and o.compare_error is None
    assert (out / "runs" / c.id / "compare" / "compare.html").is_file()
    assert (out / "runs" / c.id / "compare" / "goodput.png").is_file()
    grid.analyse(Context("grid", out, True, data=outcomes, options={"kernel_status": "stand-in"}))
    doc = json.loads((out / "fidelity.json").read_text())
    (row,) = [r for r in doc["rows"] if r["kind"] == "flow"]
    sim, kern = row["goodput_mbps"]["sim"], row["goodput_mbps"]["kernel"]
    assert row["goodput_mbps"]["ratio"] == pytest.approx(kern / sim)


def test_a_machine_that_cannot_run_the_kernel_backend_stops_trying(tmp_path):
    calls = []

    def refuse(scenario_file, out, duration_s, python=None):
        calls.append(scenario_file)
        return "exit 2: rove: error: the kernel backend needs root"

    cases = grid_cases(quick=True, traces_dir=None, duration_s=0.5)
    outcomes = fidelity.run_cases(cases, tmp_path / "fid", KernelRunner(True, run=refuse))
    assert len(calls) == 2  # the same exit-2 error twice: no more attempts
    assert all(o.sim is not None and o.kernel is None for o in outcomes)
    assert outcomes[-1].kernel_error.startswith("not run: skipped after the same error twice")


def test_kernel_run_n_meets_simulator_seed_n(tmp_path):
    # The emulator draws a link's random loss from the simulator's stream, so kernel runs at
    # one seed drop the same packets: with kernel_seeds, run N gets seed N's scenario (its start
    # shifted as the simulator's seed N) and --seed N.
    calls = []

    def record(scenario_file, out, duration_s, seed=None):
        calls.append((Path(scenario_file).name, seed))
        return "exit 1: stand-in"

    case = zoo.zoo_cases(["reno"], True, None, duration_s=0.5)[0]
    fidelity.run_cases([case], tmp_path / "fid", KernelRunner(True, run=record),
                       sim_seeds=(1, 2), kernel_runs=2, overlay=False, start_step_ms=7.0,
                       kernel_seeds=True)
    assert calls == [(f"{case.id}.toml", 1), (f"{case.id}-seed2.toml", 2)]
    # Without kernel_seeds (the other studies), every kernel run gets the scenario's own seed.
    calls.clear()
    fidelity.run_cases([case], tmp_path / "fid2", KernelRunner(True, run=record),
                       sim_seeds=(1,), kernel_runs=2, overlay=False)
    assert calls == [(f"{case.id}.toml", None), (f"{case.id}.toml", None)]


def _fake_rove_kernel(tmp_path, monkeypatch, doc: dict) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "rove-kernel"
    exe.write_text("#!/bin/sh\necho '" + json.dumps(doc) + "'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("ROVE_BIN_DIR", str(bin_dir))


def test_zoo_takes_its_algorithms_from_what_the_kernel_can_run(tmp_path, monkeypatch):
    # The kernel's own and rove's loadable eBPF ports, each the simulator also has; the coupled
    # multipath port and the handoff helper (no simulator algorithm) are left out, and named.
    _fake_rove_kernel(tmp_path, monkeypatch, {"native": ["reno", "cubic", "bbr", "htcp_x"],
                                              "ebpf": ["cdg", "handoff", "lia", "westwood"],
                                              "coupled": ["lia"]})
    algos, source = zoo.kernel_algorithms(["reno", "cubic", "bbr", "cdg", "lia", "westwood"])
    assert algos == [("bbr", "kernel"), ("cdg", "eBPF"), ("cubic", "kernel"),
                     ("reno", "kernel"), ("westwood", "eBPF")]
    assert "handoff, htcp_x" in source and "coupled multipath ports left out: lia" in source
    monkeypatch.setenv("ROVE_BIN_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    monkeypatch.setattr("rove.kernel._repo_root", lambda: tmp_path / "nowhere")
    assert zoo.kernel_algorithms(["reno"])[0] == []


def test_zoo_cases_cover_fixed_links_loss_and_a_deep_trace(tmp_path):
    d = _trace_dir(tmp_path)
    full = zoo.zoo_cases(["vegas", "bbr"], False, d)
    assert len(full) == 2 * 5
    vegas = [c for c in full if c.cc == "vegas"]
    assert [zoo.case_class(c) for c in vegas] == ["0.5 BDP", "2 BDP", "8 BDP", "2 BDP, 1% loss",
                                                  "Test.down, 1.5MB"]
    # 20 Mbit/s x 40 ms = 100 kB: 0.5, 2 and 8 BDP in 1500-B packets
    assert [c.scenario["links"]["down"]["buffer"] for c in vegas[:4]] == [
        "33pkt", "133pkt", "533pkt", "133pkt"]
    assert vegas[3].scenario["links"]["down"]["loss"] == 0.01
    assert "loss" not in vegas[1].scenario["links"]["down"]
    assert vegas[4].scenario["links"]["down"]["buffer"] == "1.5MB"
    assert vegas[4].duration_s == pytest.approx(2.0)   # at most the trace's length
    quick = zoo.zoo_cases(["vegas", "bbr"], True, d)
    assert [zoo.case_class(c) for c in quick] == ["2 BDP", "2 BDP"]
    assert all(c.duration_s == zoo.QUICK_DURATION_S for c in quick)


def test_zoo_judges_retransmissions_within_a_factor_of_one_and_a_half():
    def m(g, r):
        return {"goodput_mbps": g, "mean_srtt_ms": 50.0, "p95_srtt_ms": 60.0, "retrans_rate": r}

    sim = [m(10.0, 0.010), m(10.0, 0.010)]
    assert zoo.judge(sim, [m(10.4, 0.014)])["retrans_rate"][0] == HOLDS     # 1.4x
    assert zoo.judge(sim, [m(10.4, 0.0068)])["retrans_rate"][0] == HOLDS    # 1/1.47
    assert zoo.judge(sim, [m(10.4, 0.016)])["retrans_rate"][0] == FAILS     # 1.6x
    assert zoo.judge(sim, [m(10.4, 0.006)])["retrans_rate"][0] == FAILS     # 1/1.67
    # goodput 4 % off holds, 6 % off does not (±5 %)
    assert zoo.judge(sim, [m(10.4, 0.01)])["goodput_mbps"][0] == HOLDS
    assert zoo.judge(sim, [m(10.6, 0.01)])["goodput_mbps"][0] == FAILS


def test_coupled_experiment_reads_the_shared_bottleneck_and_leaves_anomalous_runs_out(tmp_path):
    from rove.reproduce.fidelity import coupled

    c = coupled.case("lia", 90.0)
    assert c.scenario["flows"][0]["cc"] == "lia" and c.scenario["flows"][0]["coupling"] == "auto"
    assert c.scenario["links"]["bottleneck"]["loss"] == 0.001
    assert c.scenario["duration"] == "90s"
    u = coupled.case("reno-uncoupled", 30.0)
    assert (u.scenario["flows"][0]["cc"], u.scenario["flows"][0]["coupling"]) == ("reno",
                                                                                  "uncoupled")

    def summary(mptcp, tcp, anomalies=None):
        s = {"flows": [{"name": "mptcp", "goodput_mbps": mptcp},
                       {"name": "tcp", "goodput_mbps": tcp}]}
        if anomalies:
            s["kernel_anomalies"] = anomalies
        return s

    o = Outcome(c, sims=[summary(10.0, 10.0), summary(11.0, 10.0)],
                kernel_dirs=[tmp_path / "kernel-1", tmp_path / "kernel-2"],
                kernels=[summary(9.0, 10.0), summary(15.0, 5.0, [{"subflow": 0}])])
    sim, ker, odd = coupled.ratios(o)
    assert sim == [1.0, 1.1] and ker == [0.9] and len(odd) == 1 and "kernel-2" in odd[0]


def test_zoo_names_kernel_runs_whose_emulator_ran_late(tmp_path):
    """A kernel run whose emulator's lateness p99 passed zoo.LATE_P99_US gave its sender ACK
    timing the simulator does not have (BBR's bandwidth filter keeps the largest sample, which
    ACK jitter inflates): the zoo names it beside the verdicts, shows each case's worst kernel
    run's lateness in the table, and still judges it."""
    import shutil

    import rove

    case = zoo.zoo_cases(["reno"], True, None, duration_s=0.5)[0]
    sim_dir = tmp_path / "sim-seed1"
    r = rove.run(case.scenario, out=sim_dir)
    kernels, dirs = [], []
    for n, late_us in ((1, 40.0), (2, 850.0)):
        d = tmp_path / f"kernel-{n}"
        shutil.copytree(sim_dir, d)
        dirs.append(d)
        kernels.append(dict(r.summary, backend="kernel",
                            emulator={"lateness_p99_us": late_us, "lateness_max_us": 2 * late_us}))
    outcome = Outcome(case, sim_dirs=[sim_dir], kernel_dirs=dirs, sims=[r.summary],
                      kernels=kernels)
    ctx = Context("zoo", tmp_path, True, options={"zoo_algorithms": [("reno", "kernel")]},
                  data=[outcome])
    s = zoo.analyse(ctx)
    assert [n for n in s.notes if "lateness" in n] == [
        f"{case.id}: emulator lateness p99 above 200 µs in kernel-2 850 µs (ACK timing the "
        f"simulator does not have)"]
    table = s.tables[0]
    assert table.header[-1] == "emulator lateness p99, worst kernel run (µs)"
    assert {row[-1] for row in table.rows} == {"850"}
    # judged all the same: the copies agree with the simulator on every metric
    assert {row[-2] for row in table.rows} == {"holds"}
