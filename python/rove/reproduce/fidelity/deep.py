"""Experiment 2 of the fidelity study: deep buffers on cellular traces, distributions against
distributions (issue 11 item 5).

Seed 000's cellular experiments use a 1.5 MB buffer and 20 ms each way; the grid (experiment 1)
has no deep buffer on a trace and compares single runs. Here every Mahimahi trace carries one
bulk flow of cubic and of bbr through a 1.5 MB DropTail buffer, 20 ms each way, for 30 s (at
most the trace's length), run on the simulator with several seeds and on the kernel backend
several times; per run we measure like with like on both sides: goodput and the retransmission
rate from the summaries, and the time-averaged srtt (the mean of the flow's srtt sampled every
10 ms, the kernel's from TCP_INFO) and its p95 from the time series. A metric agrees on a trace
when the ratio of the medians (kernel / simulator) is within its tolerance; when it is not but
the two ranges over the runs overlap, the difference is within the run-to-run spread (partly).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..document import Section, Table, fmt
from ...metrics import percentile
from ..study import Context
from ..verdicts import NOT_MEASURED, Claim, combine, judge_distributions, median
from .runs import Case, Outcome, run_cases, scenario, trace_mean_mbps

CCS = ("cubic", "bbr")
BUFFER = "1.5MB"            # seed 000's cellular experiments (thesis §4.5.7)
BUFFER_BYTES = 1.5e6
RTT_MS = 40                 # 20 ms each way
DURATION_S = 30.0
QUICK_DURATION_S = 10.0
SIM_SEEDS = (1, 2, 3)
# [GAP] On a loss-free trace the simulator's seed changes nothing, while a kernel flow starts
# when its process is launched (a few ms of jitter) and a drop-tail overflow's size depends on
# where in the trace's capacity pattern the window reaches it: on TMobile-LTE-short, starting
# CUBIC 5 ms later takes its retransmissions from 0.29 % to 0.16 %. So seed N also starts the
# flow (N − 1) × 7 ms later, sampling that timing on the simulator's side.
START_STEP_MS = 7.0
QUICK_SIM_SEEDS = (1, 2)
KERNEL_RUNS = 3
QUICK_KERNEL_RUNS = 2
# |median(kernel) / median(simulator) − 1| at most this holds (issue 5's targets for goodput and
# RTT; [GAP] none was set for retransmissions: 25 %, so a 3.5× difference cannot pass).
TOLERANCE = {"goodput_mbps": 0.05, "mean_srtt_ms": 0.10, "p95_srtt_ms": 0.10,
             "retrans_rate": 0.25}
LABEL = {"goodput_mbps": "goodput (Mbit/s)", "mean_srtt_ms": "time-averaged srtt (ms)",
         "p95_srtt_ms": "p95 srtt (ms)", "retrans_rate": "retransmission rate"}


def deep_cases(quick: bool, traces_dir: Path | None, duration_s: float | None = None) -> list[Case]:
    traces = sorted(traces_dir.glob("*.down")) if traces_dir else []
    if quick:
        traces = traces[:1]
    dur = duration_s if duration_s is not None else (QUICK_DURATION_S if quick else DURATION_S)
    out = []
    for path in traces:
        _, length = trace_mean_mbps(path)
        d = min(dur, length)
        for cc in (CCS[:1] if quick else CCS):
            cid = f"deep-{cc}-{path.name.replace('.', '_')}-{RTT_MS}ms-{BUFFER}"
            down = {"trace": str(path.resolve()), "buffer": BUFFER}
            out.append(Case(cid, cc, 1, RTT_MS, None, trace=path, duration_s=d,
                            buffer_bytes=BUFFER_BYTES,
                            scenario=scenario(cid, down, RTT_MS, cc, 1, d)))
    return out


def run(exp, out: Path, quick: bool, jobs: int, log, options) -> Context:
    traces = options.get("traces")
    cases = deep_cases(quick, traces, options.get("duration_s"))
    outcomes = run_cases(cases, out / exp.id, options["kernel"], log,
                         sim_seeds=QUICK_SIM_SEEDS if quick else SIM_SEEDS,
                         kernel_runs=QUICK_KERNEL_RUNS if quick else KERNEL_RUNS, overlay=False,
                         start_step_ms=START_STEP_MS)
    failures = [f"{o.case.id}: simulator: {o.sim_error}" for o in outcomes if o.sim_error]
    ctx = Context(exp.id, out, quick, options=options, data=outcomes, failures=failures)
    if traces is None:
        ctx.skipped["traces"] = "no Mahimahi traces (../shared/traces/mahimahi or --traces)"
    return ctx


def run_metrics(run_dir: Path, summary: dict) -> dict[str, float | None]:
    """The compared quantities of one run (its first flow)."""
    from ..measures import srtt_samples

    f = (summary.get("flows") or [{}])[0]
    srtt = srtt_samples(run_dir, f.get("name"))
    return {"goodput_mbps": f.get("goodput_mbps"), "retrans_rate": f.get("retrans_rate"),
            "mean_srtt_ms": float(srtt.mean()) if len(srtt) else None,
            "p95_srtt_ms": percentile(srtt, 0.95)}


def judge_outcome(sim: Sequence[dict], kernel: Sequence[dict]) -> dict[str, tuple[str, str]]:
    """Per metric, :func:`~rove.reproduce.verdicts.judge_distributions` of the kernel's runs
    against the simulator's seeds."""
    return {k: judge_distributions([m[k] for m in sim], [m[k] for m in kernel], tol)
            for k, tol in TOLERANCE.items()}


def analyse(ctx: Context) -> Section:
    outcomes: list[Outcome] = ctx.data
    s = Section("2. Deep buffers on cellular traces: several kernel runs against several "
                "simulator seeds")
    s.paragraphs.append(
        f"Setup: each Mahimahi trace, one bulk flow of {' and '.join(CCS)}, {BUFFER} DropTail, "
        f"20 ms each way, {fmt(QUICK_DURATION_S if ctx.quick else DURATION_S, 'g')} s (at most "
        f"the trace); simulator seeds ({', '.join(map(str, QUICK_SIM_SEEDS if ctx.quick else SIM_SEEDS))}) against "
        f"{QUICK_KERNEL_RUNS if ctx.quick else KERNEL_RUNS} kernel runs; seed N starts the flow "
        f"(N − 1) × {START_STEP_MS:g} ms later (the start instant the kernel's runs do not "
        f"control; the seed alone changes nothing on a loss-free trace). srtt: the flow's smoothed "
        f"RTT sampled every 10 ms on both sides (time-averaged, and its p95). Kernel: "
        f"{ctx.options.get('kernel_status', '')}.")
    for part, why in ctx.skipped.items():
        s.notes.append(f"Not run: {why}")
    if not outcomes:
        s.paragraphs.append("No scenario (no traces).")
        return s
    rows, per_claim = [], {}
    for o in outcomes:
        sim = [run_metrics(d, x) for d, x in zip(o.sim_dirs, o.sims)]
        ker = [run_metrics(d, x) for d, x in zip(o.kernel_dirs, o.kernels)]
        judged = judge_outcome(sim, ker)
        for key, (verdict, text) in judged.items():
            per_claim.setdefault((o.case.cc, key), []).append((o.case.trace.name, verdict, text))
            rows.append([o.case.trace.name, o.case.cc, LABEL[key],
                         fmt(median([m[key] for m in sim]), ".4g"),
                         fmt(median([m[key] for m in ker]), ".4g"), text, verdict])
        if o.kernel_error:
            s.notes.append(f"{o.case.id}: kernel: {o.kernel_error}")
    s.tables.append(Table(["trace", "cc", "metric", "simulator median", "kernel median",
                           "simulator vs kernel (median [range, runs], ratio k/s)", "verdict"],
                          rows, "per trace: every run's value in the run directories "
                                "(`deep-cellular/runs/ID/sim-seedN`, `kernel-N`)"))
    for (cc, key), items in per_claim.items():
        tol = TOLERANCE[key]
        s.claims.append(Claim(
            f"{cc}: the simulator's {LABEL[key]} agrees with the Linux kernel's on deep-buffered "
            f"cellular paths", "issue 11 item 5 (fidelity on seed 000's cellular setup); issue "
            f"5's targets", "; ".join(f"{t}: {text}" for t, _, text in items),
            f"per trace: median ratio k/s within ±{tol:.0%} holds, else the ranges over runs "
            f"overlap partly, else does not hold; not measured without kernel runs; traces "
            f"combined", combine(v for _, v, _ in items)))
    s.verdict = combine(c.verdict for c in s.claims)
    if all(c.verdict == NOT_MEASURED for c in s.claims):
        s.verdict = NOT_MEASURED
    return s
