"""``rove reproduce selection``: seed-002 (Atxutegi, "Moving toward the intra-protocol
de-ossification of TCP in mobile networks: Start-up and mobility", PhD thesis, 2018) rerun on
rove's LTE cell.

    rove reproduce selection -o DIR [--quick] [--only EXP[,EXP...]] [-j N] [--sim-only]

The thesis measured five congestion controls (NewReno, CUBIC, Westwood+, Illinois, BBR) per
mobility phase on an Aeroflex LTE emulator (Tables 6.2-6.7), derived a per-phase selection
(Table 6.8) and reported switching gains over 36 use cases; it also measured start-up, static
and operator behaviours on ns-3 and MONROE. None of it is public, so rove reruns every
experiment on its own cell (``scenarios/selection/``, one committed sweep each under
``scenarios/selection/sweeps/``) and judges the thesis's statements (the headlines of the
summary's §5.1 and the behaviours H1-H7 of its §8.3, ``../shared/research/seed-002.md``) by
criteria fixed in the code before the runs, the same for every algorithm they compare, over
seeds (10 per point in the full run). Absolute numbers cannot match (another radio, UE and
kernel); orderings and signs can. ``--quick`` (CI): the 300 km/h use cases only, shorter runs,
one or two seeds. Simulator only: the kernel side of the selection controller is
``tests/test_kernel_selection.py``'s; ``--sim-only`` is accepted (and changes nothing) so that
the command reads like the other studies' (``.ci/run``).
"""

from __future__ import annotations

from ..runner import Quick, repo_root
from ..study import (Experiment, Part, RunInfo, Study, accept_sim_only,
                     main as _study_main, run_line)
from . import mobility, monroe, static, switching
from .common import (CCAS, CDG, CUBIC_3X, CUBIC_DELAY_ONLY, CUBIC_NO_HYSTART, every_flow,
                     series_of)
from .runs import run_with_records

SWEEPS = repo_root() / "scenarios" / "selection" / "sweeps"

RENO, CUBIC, BBR, WESTWOOD, ILLINOIS = (series_of(cc) for cc in
                                        ("reno", "cubic", "bbr", "westwood", "illinois"))
STARTUP = (RENO, CUBIC, CUBIC_3X, CUBIC_NO_HYSTART, CUBIC_DELAY_ONLY)
NS3 = (CUBIC, RENO, ILLINOIS, CDG, WESTWOOD)         # the thesis's ns-3 set (no BBR there)
MONROE = tuple(every_flow(s, (0, 1)) for s in (CUBIC, CUBIC_3X, RENO, BBR))

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("phase-tables", "Per-phase tables on rove's cell (Tables 6.2-6.7), H4, H5",
               analyse=mobility.analyse_tables, run=mobility.run_mobility),
    Experiment("selector", "The selector on rove's own tables (Table 6.8)",
               analyse=mobility.analyse_selector, run=mobility.run_mobility),
    Experiment("switching", "Switching runs: the 36-case tally, headlines 1-6, H7",
               analyse=switching.analyse, run=switching.run),
    Experiment("startup", "Start-up: HyStart's early exit and 1 MB downloads (H1)", STARTUP,
               (Part("main", "startup.toml", Quick({}, {}, (1, 2), cases=("base",))),),
               static.analyse_startup, run=run_with_records(SWEEPS, static.measure_startup)),
    Experiment("static", "The static cell, alone and loaded (H2)", NS3,
               (Part("main", "static.toml", Quick({}, {"duration": "20s"}, (1, 2))),),
               static.analyse_static, run=run_with_records(SWEEPS, static.measure_static)),
    Experiment("step", "The capacity step at 20 s (H3)", NS3,
               (Part("main", "step.toml", Quick({}, {"duration": "30s"}, (1, 2))),),
               static.analyse_step, run=run_with_records(SWEEPS, static.measure_step)),
    Experiment("monroe", "MONROE-like operators: long and short flows (H6)", MONROE,
               (Part("main", "monroe.toml", Quick({"flows.1.start": ["0.5s"]}, {}, (1, 2))),),
               monroe.analyse, run=run_with_records(SWEEPS, monroe.measure)),
    Experiment("window", "No window scaling (Finding 1)", CCAS,
               (Part("main", "no-window-scaling.toml", Quick({}, {"duration": "10s"}, (1, 2))),),
               static.analyse_window, run=run_with_records(SWEEPS, static.measure_window)),
)


def _intro(info: RunInfo) -> list[str]:
    return [
        "Seed 002 (Atxutegi, PhD thesis, UPV/EHU 2018): a framework that selects a TCP "
        "congestion control per application requirement (goodput; the performance metric PM "
        "of Eq. 6.1; the delay-weighted PM of Eq. 6.2) and network context, at set-up "
        "(Option 1, Table 6.1) or per mobility phase with a live switch (Option 2, Table 6.8; "
        "the window handed over with Eq. 6.3), built on measurements of NewReno, CUBIC, "
        "Westwood+, Illinois and BBR over an LTE emulator, ns-3 and MONROE. rove reruns them "
        "on its LTE cell (TTIs, CQI/MCS/TBS link adaptation, HARQ, proportional fair, "
        "EVA/HST fading, mobility, uplink grants): per-phase tables, the selector on rove's "
        "own tables, switching runs with rove's selection controller, and the behaviours H1-H7 "
        "of the summary (../shared/research/seed-002.md §8.3). Every criterion is stated next "
        "to its verdict and was fixed before the runs; absolute values differ from the "
        "thesis's by construction (another radio, UE and kernel), so orderings, signs and "
        "classes are what is judged.",
        run_line(info) + " Simulator only.",
    ]


STUDY = Study(
    name="selection",
    title="Reproduction: congestion-control selection and switching over LTE with mobility "
          "(seed 002)",
    description="Run the experiments of seed 002 (the selection framework) on the simulator.",
    experiments=EXPERIMENTS,
    intro=_intro,
    quick_help="the 300 km/h use cases only, short runs, one or two seeds (well under two "
               "minutes on two cores)",
    sweeps=SWEEPS,
    add_arguments=accept_sim_only,
    default_jobs=2,
)


def main(argv=None) -> int:
    """``rove reproduce selection ...`` (see :func:`rove.reproduce.study.main`)."""
    return _study_main(STUDY, argv)
