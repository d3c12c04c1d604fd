"""``rove reproduce fidelity`` (python/rove/fidelity.py): the experiment list of issue 5 item 6,
the sim-versus-kernel rows and their targets, and a --quick simulator-only report."""

from __future__ import annotations

import json
import stat

import pytest

from rove import fidelity
from rove.fidelity import Experiment, Outcome, buffer_pkts, experiments, rows_of


def test_buffers_are_bdp_multiples_in_packets():
    # 10 Mbit/s x 20 ms = 25 000 B = 16.7 packets of 1500 B
    assert buffer_pkts(10, 20, 2) == 33
    assert buffer_pkts(10, 20, 0.5) == 8
    # 50 Mbit/s x 100 ms = 625 000 B = 416.7 packets
    assert buffer_pkts(50, 100, 8) == 3333
    assert buffer_pkts(1, 1, 0.5) == 2  # never below 2 packets


def test_the_full_list_covers_the_issues_grid():
    exps = experiments(quick=False, traces_dir=None)
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
    exps = experiments(quick=False, traces_dir=d)
    traced = [e for e in exps if e.trace is not None]
    assert [e.cc for e in traced] == ["reno", "cubic", "bbr"]
    mean, length = fidelity.trace_mean_mbps(d / "Test.down")
    assert mean == pytest.approx(24.0) and length == pytest.approx(2.0)
    assert traced[0].duration_s == pytest.approx(2.0)  # at most the trace's length
    assert traced[0].scenario["links"]["down"]["buffer"] == f"{buffer_pkts(24.0, 40, 2)}pkt"
    quick = experiments(quick=True, traces_dir=d)
    assert len(quick) == 5 and sum(e.trace is not None for e in quick) == 1
    assert all(e.duration_s <= 10 for e in quick)


def test_rows_hold_kernel_over_sim_and_the_targets():
    e = Experiment("x", "cubic", 1, 20, 2, rate_mbps=10)
    sim = {"flows": [{"name": "cubic", "goodput_mbps": 10.0, "mean_rtt_ms": 40.0,
                      "p95_rtt_ms": 50.0, "retrans_rate": 0.01}],
           "links": [{"name": "down", "mean_queue_delay_ms": 20.0, "p95_queue_delay_ms": 30.0},
                     {"name": "up", "mean_queue_delay_ms": 0.0}]}
    kern = {"flows": [{"name": "cubic", "goodput_mbps": 9.6, "mean_rtt_ms": 45.0,
                       "p95_rtt_ms": 54.0, "retrans_rate": 0.02}],
            "links": [{"name": "down", "mean_queue_delay_ms": 25.0, "p95_queue_delay_ms": 33.0}]}
    flow, link = rows_of(Outcome(e, sim=sim, kernel=kern))
    assert flow["goodput_mbps"]["ratio"] == pytest.approx(0.96)
    assert flow["goodput_mbps"]["within"] is True  # 4 % off, target 5 %
    assert flow["mean_rtt_ms"]["ratio"] == pytest.approx(1.125)
    assert flow["mean_rtt_ms"]["within"] is False  # 12.5 % off, target 10 %
    assert flow["p95_rtt_ms"]["within"] is True  # 8 % off
    assert flow["retrans_rate"]["ratio"] == pytest.approx(2.0) and flow["retrans_rate"]["within"] is None
    assert link["name"] == "down" and link["mean_queue_delay_ms"]["ratio"] == pytest.approx(1.25)
    # without kernel results: the simulator's values, nothing judged
    (alone, _) = rows_of(Outcome(e, sim=sim))
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
    code = fidelity.main(["--quick", "--sim-only", "--duration", "1", "--traces",
                          str(_trace_dir(tmp_path)), "-o", str(out)])
    assert code == 0
    for name in ("report.md", "report.html", "fidelity.json", "goodput.png", "rtt.png",
                 "queue_delay.png", "sim_by_buffer.png"):
        assert (out / name).stat().st_size > 0, name
    doc = json.loads((out / "fidelity.json").read_text())
    assert doc["runs"] == 5 and doc["kernel_runs"] == 0 and doc["failures"] == []
    assert doc["kernel"] == "not run (--sim-only)"
    flows = [r for r in doc["rows"] if r["kind"] == "flow"]
    assert len(flows) == 6  # four one-flow scenarios and one with two flows
    assert all(r["goodput_mbps"]["sim"] > 0 for r in flows)
    assert (out / "scenarios" / "cubic-2f-50M-100ms-0p5bdp.toml").is_file()
    assert (out / "runs" / "cubic-2f-50M-100ms-0p5bdp" / "sim" / "summary.json").is_file()
    md = (out / "report.md").read_text()
    assert "kernel results: 0 of 5 runs (not run (--sim-only))" in md
    assert "| reno-1f-10M-20ms-2bdp | reno |" in md
    assert "fidelity report:" in capsys.readouterr().out


def test_bad_options_are_one_line_exit_2(tmp_path, capsys):
    assert fidelity.main(["--quick"]) == 2
    assert fidelity.main(["-o", str(tmp_path), "--duration", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and all(ln.startswith("rove: error: ") for ln in err.splitlines())


def test_report_with_kernel_results_counts_agreement(tmp_path):
    e1 = Experiment("reno-a", "reno", 1, 20, 2, rate_mbps=10)
    e2 = Experiment("bbr-b", "bbr", 1, 20, 2, rate_mbps=10)

    def summary(goodput, rtt):
        return {"flows": [{"name": "f", "goodput_mbps": goodput, "mean_rtt_ms": rtt,
                           "p95_rtt_ms": rtt * 1.2, "retrans_rate": 0.0}],
                "links": [{"name": "down", "mean_queue_delay_ms": rtt - 20,
                           "p95_queue_delay_ms": rtt - 15}]}

    outcomes = [Outcome(e1, sim=summary(9.0, 40.0), kernel=summary(9.3, 41.0)),  # both within
                Outcome(e2, sim=summary(9.0, 30.0), kernel=summary(8.0, 36.0))]  # both outside
    out = tmp_path / "r"
    out.mkdir()
    fidelity.write_report(out, outcomes, "rove run --backend kernel", quick=False)
    doc = json.loads((out / "fidelity.json").read_text())
    assert doc["kernel_runs"] == 2
    assert doc["agreement"]["reno"]["goodput_mbps"] == {"compared": 1, "within": 1,
                                                       "median_abs_error": pytest.approx(0.3 / 9)}
    assert doc["agreement"]["bbr"]["mean_rtt_ms"]["within"] == 0
    assert doc["agreement"]["cubic"]["goodput_mbps"]["compared"] == 0
    md = (out / "report.md").read_text()
    assert "| reno | 1/1 | 1/1 | 1/1 |" in md and "| bbr | 0/1 | 0/1 | 0/1 |" in md
    assert (out / "goodput.png").stat().st_size > 0


def test_existing_kernel_results_are_reused_and_drawn_over_the_simulator(tmp_path):
    import rove

    exps = experiments(quick=True, traces_dir=None, duration_s=1)[:1]
    e = exps[0]
    out = tmp_path / "fid"
    # Stand-in for a kernel run (the kernel backend is another branch): the simulator with
    # another seed, already in place, so run_all must reuse it and not start a kernel run.
    rove.run(e.scenario, out=out / "runs" / e.id / "kernel", seed=5)
    outcomes = fidelity.run_all(exps, out, kernel=True)
    (o,) = outcomes
    assert o.kernel is not None and o.kernel_error is None and o.compare_error is None
    assert (out / "runs" / e.id / "compare" / "compare.html").is_file()
    assert (out / "runs" / e.id / "compare" / "goodput.png").is_file()
    fidelity.write_report(out, outcomes, "stand-in", quick=True)
    doc = json.loads((out / "fidelity.json").read_text())
    (row,) = [r for r in doc["rows"] if r["kind"] == "flow"]
    sim, kern = row["goodput_mbps"]["sim"], row["goodput_mbps"]["kernel"]
    assert row["goodput_mbps"]["ratio"] == pytest.approx(kern / sim)


def test_a_machine_that_cannot_run_the_kernel_backend_stops_trying(tmp_path, monkeypatch):
    calls = []

    def refuse(scenario_file, out, duration_s, python=None):
        calls.append(scenario_file)
        return "exit 2: rove: error: the kernel backend needs root"

    monkeypatch.setattr(fidelity, "_run_kernel", refuse)
    exps = experiments(quick=True, traces_dir=None, duration_s=0.5)
    outcomes = fidelity.run_all(exps, tmp_path / "fid", kernel=True)
    assert len(calls) == 2  # the same exit-2 error twice: no more attempts
    assert all(o.sim is not None and o.kernel is None for o in outcomes)
    assert outcomes[-1].kernel_error.startswith("not run: skipped after the same error twice")
