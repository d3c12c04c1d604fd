"""``rove reproduce fidelity -o DIR [--quick] [--sim-only] [--duration SECS] [--traces DIR]``:
the simulator checked against the kernel backend (Linux's own TCP in network namespaces over
rove's link emulator, which drives the simulator's link model on the real clock).

Experiments (each a section of the report, with claims and verdicts):

1. ``grid`` (:mod:`.grid`): issue 5's grid, one simulator run against one kernel run per
   scenario, each flow judged against issue 5's targets;
2. ``deep-cellular`` (:mod:`.deep`): deep buffers (1.5 MB) on the Mahimahi traces, several
   kernel runs against several simulator seeds, like with like (time-averaged srtt sampled every
   10 ms on both sides, retransmission rates), the spread reported on both sides;
3. ``zoo`` (:mod:`.zoo`): every algorithm the kernel can run (its own and rove's eBPF ports,
   from ``rove-kernel algorithms``) on fixed links of 0.5-8 BDP, random loss and a deep-buffered
   trace, several kernel runs against several simulator seeds;
4. ``coupled`` (:mod:`.coupled`): rove's eBPF LIA, OLIA and BALIA on upstream MPTCP at a shared
   bottleneck against the simulator's, with uncoupled subflows as the contrast.

The simulator runs in-process (:func:`rove.run`); the kernel backend through the command line,
``python -m rove run --backend kernel SCENARIO -o DIR``, one run at a time (real time, root).
With ``--sim-only``, when this build's ``rove run`` has no ``--backend`` option, or when kernel
runs fail (not root, no TUN), the report shows the simulator's side and the claims are "not
measured".

Layout of DIR: ``scenarios/ID.toml`` (every generated scenario), ``runs/ID/sim``,
``runs/ID/kernel`` and ``runs/ID/compare`` (rove compare of the two) for the grid;
``deep-cellular/runs/ID/sim-seedN`` and ``kernel-N`` (and the same under ``zoo/``); ``fidelity.json`` (every compared row of
the grid); ``report.md``, ``report.html``, ``report.json`` and the figures.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..study import Experiment, RunInfo, Study, main as _study_main, run_line
from . import coupled, deep, grid, zoo
from .grid import TARGETS, agreement, grid_cases, rows_of  # noqa: F401  (the grid's API)
from .runs import (Case, KernelRunner, Outcome, buffer_pkts, default_traces_dir,  # noqa: F401
                   kernel_backend_status, run_cases, trace_mean_mbps)

EXPERIMENTS = (
    Experiment("grid", "Issue 5's grid, single runs", analyse=grid.analyse, run=grid.run),
    Experiment("deep-cellular", "Deep buffers on cellular traces, runs against seeds",
               analyse=deep.analyse, run=deep.run),
    Experiment("zoo", "Every algorithm on both backends, runs against seeds",
               analyse=zoo.analyse, run=zoo.run),
    Experiment("coupled", "Coupled LIA, OLIA and BALIA on upstream MPTCP at a shared bottleneck",
               analyse=coupled.analyse, run=coupled.run),
)


def _add_arguments(p) -> None:
    p.add_argument("--duration", type=float, metavar="SECS",
                   help=f"seconds per run (default {grid.DURATION_S:g}, --quick "
                        f"{grid.QUICK_DURATION_S:g}; at most a trace's length)")
    p.add_argument("--sim-only", action="store_true", help="do not run the kernel backend")
    p.add_argument("--traces", metavar="DIR",
                   help="Mahimahi traces (*.down); default ../shared/traces/mahimahi if present")


def _prepare(args) -> dict:
    from ...cli import CliError

    if args.duration is not None and not (args.duration > 0 and math.isfinite(args.duration)):
        raise CliError(f"--duration: expected seconds > 0, got {args.duration}")
    traces = Path(args.traces) if args.traces else default_traces_dir()
    if args.traces and not traces.is_dir():
        raise CliError(f"--traces {traces}: no such directory")
    if args.sim_only:
        enabled, status = False, "not run (--sim-only)"
    else:
        enabled, status = kernel_backend_status()
    return {"traces": traces, "duration_s": args.duration, "kernel": KernelRunner(enabled),
            "kernel_status": status}


def _intro(info: RunInfo) -> list[str]:
    o = info.options
    return [
        "The simulator against the Linux kernel (the kernel backend: Linux 6.18's own TCP in "
        "network namespaces over rove's link emulator, which drives the simulator's link model "
        "on the real clock, so a difference points at TCP). Claims are rove's own targets "
        "(issue 5) and the design's promise that one scenario runs on either backend; each "
        "verdict is computed from the numbers with its criterion stated.",
        run_line(info) + f" Kernel backend: {o.get('kernel_status')}; traces: "
        + (f"`{o['traces']}`" if o.get("traces") else "none") + ".",
    ]


STUDY = Study(
    name="fidelity",
    title="Fidelity: the simulator against the Linux kernel",
    description="Run the fidelity scenarios on the simulator and the kernel backend.",
    experiments=EXPERIMENTS,
    intro=_intro,
    quick_help="a small subset (under a minute with --sim-only)",
    add_arguments=_add_arguments,
    prepare=_prepare,
)


def main(argv=None) -> int:
    """``rove reproduce fidelity ...`` (see :func:`rove.reproduce.study.main`)."""
    return _study_main(STUDY, argv)
