"""``rove reproduce bccps``: seed 001 (Wei et al., "BBR-Based Congestion Control and Packet
Scheduling for Bottleneck Fairness Considered Multipath TCP", IEEE TVT 2021) rerun on rove's
simulator, with the baseline anchored on the kernel backend.

    rove reproduce bccps -o DIR [--quick] [--only EXP[,EXP...]] [-j N] [--sim-only]

The paper's text has no number from any figure: besides its two headline numbers (H1: ">50 %"
fewer out-of-order packets, H2: ">30 %" more goodput than the comparison schemes) it states
orderings (Q1-Q11 of the summary, ``../shared/research/seed-001.md`` §5). Each experiment is a
committed sweep file under ``scenarios/bccps/sweeps/`` (Table I's topologies,
``scenarios/bccps/table1-*.toml``, and Table II's WiFi + LTE paths, ``table2-wifi-lte.toml``),
run once per scheme (:mod:`.common`'s series); every claim's criterion is fixed in the code
before the runs, the same for every scheme it compares, and judged over seeds (10 per point in
the full run). rove's ablations (which piece earns which gain), the prose's 1 Mbit/s capacity
and the kernel anchor are reported beside, not counted. ``--quick`` (CI) runs short runs, small
grids and two seeds; ``--sim-only`` leaves the kernel runs out.
"""

from __future__ import annotations

import dataclasses

from ..runner import Quick, Series, repo_root
from ..study import (Context, Experiment, Part, RunInfo, Study, main as _study_main, run_line,
                     run_parts)
from . import ablation, kernel
from .common import (BALIA_LRF, BBR_LRF, BCCPS, BLEST_LIA, LIA_LRF, MPBBR_LRF, MPBBR_RR,
                     single_path)
from .fairness import analyse_detection, analyse_disjoint, analyse_shared
from .throughput import analyse_delay, analyse_loss, analyse_ofo, analyse_window_limited
from .transfers import analyse_file_size, analyse_mouse, analyse_wifi_lte

SCENARIOS = repo_root() / "scenarios" / "bccps"
SWEEPS = SCENARIOS / "sweeps"

# The detectors of Figs. 8(a)/9(a), each regrouping the MPTCP-BBR connection's coupling.
DET_S1S2 = Series("s1s2", "MPTCP-BBR's detector (S1 + S2)", "mpbbr",
                  extra={"flows.0.scheduler": "minrtt", "flows.0.detector": "bccps"})
DET_DWC = Series("dwc", "DWC", "mpbbr",
                 extra={"flows.0.scheduler": "minrtt", "flows.0.detector": "dwc"})
# The best single-path TCP-BBR of Fig. 10: the file over one of the shared topology's paths.
SP0 = single_path("sp0", "single-path BBR, path 0")
SP1 = single_path("sp1", "single-path BBR, path 1", ["acc1", "btl"], ["ack1"])

SCHEDULERS = (BCCPS, MPBBR_RR, MPBBR_LRF)
FILE_SIZE_QUICK = Quick({"flows.0.size": ["30KB", "100KB", "1MB"]}, {"duration": "15s"}, (1, 2))
Q60 = {"duration": "20s", "measure": ["5s", "20s"]}     # quick: 20-s runs measured over 5-20 s

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("detection", "Shared-bottleneck detection accuracy, S1 + S2 against DWC",
               (DET_S1S2, DET_DWC),
               (Part("main", "detection.toml", Quick({}, {"duration": "20s"}, (1, 2))),),
               analyse_detection),
    Experiment("fairness-shared", "Bottleneck fairness at a shared bottleneck",
               (MPBBR_LRF, LIA_LRF, BALIA_LRF, BBR_LRF),
               (Part("main", "fairness-shared.toml", Quick({}, Q60, (1, 2))),),
               analyse_shared),
    Experiment("fairness-disjoint", "Fairness on disjoint bottlenecks",
               (MPBBR_LRF, LIA_LRF, BALIA_LRF, BBR_LRF),
               (Part("main", "fairness-disjoint.toml", Quick({}, Q60, (1, 2))),),
               analyse_disjoint),
    Experiment("file-size", "Download time against file size (shared bottleneck)",
               analyse=analyse_file_size, run=lambda *a: _run_file_size(*a)),
    Experiment("mouse", "100 KB downloads on lossy disjoint paths", SCHEDULERS,
               (Part("main", "mouse.toml", Quick({}, {"duration": "10s"}, (1, 2, 3))),),
               analyse_mouse),
    Experiment("loss", "Goodput against random loss (disjoint)",
               (*SCHEDULERS, LIA_LRF, BALIA_LRF),
               (Part("main", "loss.toml", Quick({"links.btl1.loss": [0.001, 0.02]}, Q60, (1, 2))),),
               analyse_loss),
    Experiment("delay", "Goodput against subflow 1's delay (disjoint)",
               (*SCHEDULERS, LIA_LRF, BALIA_LRF),
               (Part("main", "delay.toml", Quick({}, Q60, (1, 2))),),
               analyse_delay),
    Experiment("ofo", "Out-of-order queue (disjoint)", (*SCHEDULERS, BLEST_LIA),
               (Part("main", "ofo.toml", Quick({}, Q60, (1, 2))),),
               analyse_ofo),
    Experiment("wifi-lte", "WiFi + LTE: a 100 MB file and web pages",
               (LIA_LRF, MPBBR_LRF, BCCPS),
               (Part("bulk", "wifi-lte-bulk.toml",
                     Quick({}, {"flows.0.size": "10MB", "duration": "30s"}, (1, 2))),
                Part("web", "wifi-lte-web.toml", Quick({}, {}, (1, 2)))),
               analyse_wifi_lte),
    Experiment("ablation-coupling", "What holds MPTCP-BBR's fairness (rove's ablation)",
               ablation.COUPLING_SERIES,
               (Part("shared", "fairness-shared.toml", Quick({}, Q60, (1,))),
                Part("disjoint", "fairness-disjoint.toml", Quick({}, Q60, (1,)))),
               ablation.analyse_coupling, counted=False),
    Experiment("ablation-scheduler", "What the BCCPS scheduler's pieces earn (rove's ablation)",
               ablation.SCHEDULER_SERIES,
               (Part("mouse", "mouse.toml", Quick({}, {"duration": "10s"}, (1, 2))),
                Part("file-size", "file-size.toml", FILE_SIZE_QUICK),
                Part("ofo", "ofo.toml", Quick({}, Q60, (1,))),
                Part("wifi-lte", "wifi-lte-bulk.toml",
                     Quick({}, {"flows.0.size": "10MB", "duration": "30s"}, (1,)))),
               ablation.analyse_scheduler, counted=False),
    Experiment("window-limited", "H1 and H2 with a binding receive window (rove's check)",
               (*SCHEDULERS, LIA_LRF),
               (Part("main", "window-limited.toml", Quick({}, Q60, (1, 2))),),
               analyse_window_limited, counted=False),
    Experiment("capacity-1mbps", "The shared bottleneck at the prose's 1 Mbit/s (rove's check)",
               (MPBBR_LRF, LIA_LRF, BALIA_LRF),
               # 1 BDP at 1 Mbit/s x 40 ms = 5 KB: 4 packets of 1500 B (BBR's floor)
               (Part("main", "fairness-shared.toml", Quick({}, Q60, (1,)),
                     fixed={"links.btl.rate": "1Mbps", "links.btl.buffer": "4pkt"}),),
               lambda ctx: _one_mbps(ctx), counted=False),
    Experiment("kernel", "The baseline row on upstream Linux MPTCP (rove's check)",
               analyse=kernel.analyse, run=kernel.run, counted=False),
)


def _run_file_size(exp, out, quick, jobs, log, options) -> Context:
    """Fig. 10's schemes over the MPTCP connection (file-size.toml) and the single-path
    baseline over each of its paths (file-size-single.toml), into one context."""
    mp = run_parts(SWEEPS, dataclasses.replace(
        exp, run=None, series=SCHEDULERS,
        parts=(Part("main", "file-size.toml", FILE_SIZE_QUICK),)), out, quick, jobs, log, options)
    sp = run_parts(SWEEPS, dataclasses.replace(
        exp, run=None, series=(SP0, SP1),
        parts=(Part("single", "file-size-single.toml", FILE_SIZE_QUICK),)), out, quick, jobs, log,
        options)
    import pandas as pd

    frames = [d for d in (mp.df, sp.df) if len(d)]
    return Context(exp.id, out, quick, mp.runs + sp.runs,
                   pd.concat(frames, ignore_index=True, sort=False) if frames else pd.DataFrame(),
                   {**mp.skipped, **sp.skipped}, {**mp.durations_s, **sp.durations_s}, options,
                   failures=mp.failures + sp.failures)


def _one_mbps(ctx):
    sec = analyse_shared(ctx)
    sec.title = "Fairness at a 1 Mbit/s shared bottleneck (the prose's capacity; rove's check)"
    sec.paragraphs.insert(0, "The shared-bottleneck fairness experiment with the bottleneck at "
                          "the prose's 1 Mbit/s (Table I says 10; a 1-BDP buffer is then 4 "
                          "packets, BBR's cwnd floor).")
    return sec


def _add_arguments(p) -> None:
    p.add_argument("--sim-only", action="store_true",
                   help="do not run the kernel backend (its experiment reports not measured)")


def _prepare(args) -> dict:
    from ..fidelity.runs import KernelRunner, kernel_backend_status

    if args.sim_only:
        enabled, status = False, "not run (--sim-only)"
    else:
        enabled, status = kernel_backend_status()
    return {"kernel": KernelRunner(enabled), "kernel_status": status}


def _intro(info: RunInfo) -> list[str]:
    return [
        "Seed 001 (Wei, Xue, Han, Xing, Wei, Hong, IEEE TVT 2021): BCCPS, an MPTCP whose "
        "subflows run BBR, coupled only where they share a bottleneck (MPTCP-BBR: RTT' = the "
        "set's largest RTprop, cruise gain α = max BtlBW / Σ BtlBW), with sender-side "
        "shared-bottleneck detection (S1 + S2) and a scheduler that sends the first 100 KB on "
        "every subflow and then predicts each packet's arrival (Eqs. 7-9). The paper's text "
        "gives no figure values: its two numbers (H1 ≥ 50 % fewer out-of-order packets, H2 "
        "≥ 30 % more goodput than the comparison schemes) and its orderings are judged here, "
        "each with its criterion stated and fixed before the runs, symmetric between the "
        "schemes, over seeds. Where a claim does not hold, the ablations (reported beside, not "
        "counted) show which piece does what. The paper ran NS-3 (mptcp-ns3) and Linux MPTCP "
        "v0.94; rove's schemes are built on its own Linux-faithful TCP, so expect orderings to "
        "be comparable, not absolute values.",
        run_line(info) + f" Kernel backend: {info.options.get('kernel_status')}.",
    ]


STUDY = Study(
    name="bccps",
    title="Reproduction: BCCPS, bottleneck-fair MPTCP-BBR and its scheduler (seed 001)",
    description="Run the experiments of seed 001 (BCCPS) on the simulator.",
    experiments=EXPERIMENTS,
    intro=_intro,
    quick_help="short runs, small grids, one to three seeds (well under two minutes on two cores "
               "with --sim-only)",
    sweeps=SWEEPS,
    add_arguments=_add_arguments,
    prepare=_prepare,
    default_jobs=2,
)


def main(argv=None) -> int:
    """``rove reproduce bccps ...`` (see :func:`rove.reproduce.study.main`)."""
    return _study_main(STUDY, argv)
