"""``rove reproduce oal``: seed 004 (Lin & Jiang 2020, "Learning-Based On-AP TCP Performance
Enhancement", OAL) rerun on rove's simulator.

    rove reproduce oal -o DIR [--quick] [--only EXP[,EXP...]] [-j N] [--sim-only]

The paper's evaluation (``../shared/research/seed-004.md`` §3-4): nine downlink TCP flows from
one server, one to each of nine stations, OAL (CUBIC with the on-AP controller) against BBR and
PCC Vivace, 10 iterations x 600 s: throughput +17.5 / +16.5 %, delay −30 / −26 %, jitter −16 /
−2 %, congestion-loss ratio −25.2 / −12.6 % (against BBR / Vivace, the body's numbers), and its
model tables (2, 4, 6). Experiments:

* ``schemes``: OAL, BBR, PCC Vivace and CUBIC alone on every iteration (:mod:`.schemes`); each
  of the paper's percentages is a claim with its criterion fixed in :mod:`.common`;
* ``tables``: Kendall τ / IG, the classifiers and the cwnd regressors on items recorded in runs
  of CUBIC alone (:mod:`.tables`, :mod:`rove.oal`);
* ``oal-effect`` (not counted): OAL against CUBIC alone from the same runs, with the
  controllers' reports (summary.json's ``controllers``).
* ``trigger`` (not counted, rove's ablation): OAL acting on the last observed window's class
  (``trigger = "observed"``, no tree in the decision) beside OAL and CUBIC alone, to separate
  the predictor from the enforcement (3 iterations of 60 s; ``--quick``: 2 of 20 s).

The network is ``scenarios/oal/reproduce.toml``: the study reads from it which flow and which
controller belongs to which AP (:func:`.common.network`), so the same code runs one cell or
several APs on one channel. The full run: the paper's 10 iterations per scheme, of 120 s
(not 600 s, for the shared machine's time: see ``scenarios/oal/sweeps/schemes.toml``), two
120-s tables runs. ``--quick`` (CI): two 20-s iterations, one 30-s tables run.
Simulator only; ``--sim-only`` is accepted and changes nothing.
"""

from __future__ import annotations

from ..runner import Quick, repo_root
from ..study import (Experiment, Part, RunInfo, Study, accept_sim_only, main as _study_main,
                     run_line)
from . import schemes, tables
from .common import CUBIC_RECORDED, NETWORK, SCHEMES, TRIGGER_SERIES

SWEEPS = repo_root() / "scenarios" / "oal" / "sweeps"

ITERATIONS_FULL, ITERATIONS_QUICK = 10, 2        # §8.1: 10 iterations per method
TABLE_ITERATIONS_FULL, TABLE_ITERATIONS_QUICK = 2, 1

SCHEMES_PART = Part("main", "schemes.toml", Quick({}, {"duration": "20s"}, (1,)))
TRIGGER_ITERATIONS_FULL = 3                      # rove's ablation: 3 x 60 s (trigger.toml)
TRIGGER_PART = Part("main", "trigger.toml", Quick({}, {"duration": "20s"}, (1,)))
TABLES_PART = Part("main", "tables.toml", Quick({}, {"duration": "30s"}, (1,)))

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("schemes", "OAL against BBR and PCC Vivace (§8.2, Figs. 10-13)", SCHEMES,
               (SCHEMES_PART,), schemes.analyse,
               run=schemes.run_iterations(ITERATIONS_FULL, ITERATIONS_QUICK)),
    Experiment("tables", "The classifier and regressor tables (Tables 2, 4 and 6)",
               (CUBIC_RECORDED,), (TABLES_PART,), tables.analyse,
               run=tables.run_tables(schemes.run_iterations(TABLE_ITERATIONS_FULL,
                                                            TABLE_ITERATIONS_QUICK))),
    Experiment("oal-effect", "What OAL does to CUBIC (rove's comparison with CUBIC alone)",
               SCHEMES, (SCHEMES_PART,), schemes.analyse_effect,
               run=schemes.run_iterations(ITERATIONS_FULL, ITERATIONS_QUICK,
                                          source_id="schemes"),
               counted=False),
    Experiment("trigger", "Predictor or enforcement: OAL acting on the observed class "
               "(rove's ablation)", TRIGGER_SERIES, (TRIGGER_PART,), schemes.analyse_trigger,
               run=schemes.run_iterations(TRIGGER_ITERATIONS_FULL, ITERATIONS_QUICK),
               counted=False),
)


def _intro(info: RunInfo) -> list[str]:
    aps = NETWORK.aps
    setting = (f"{len(aps)} APs on one channel ({', '.join(aps)})" if len(aps) > 1 else
               f"one AP ({len(NETWORK.stations)} stations; the paper had 3 APs x 3 stations)")
    return [
        "Seed 004 (Lin & Jiang 2020): OAL samples an access point's queue, channel and "
        "station counters at 250 Hz, predicts the next window's congestion-loss class with a "
        "decision tree retrained every second, and on Poor/Bad rewrites the receive window in "
        "the stations' uplink ACKs so that unmodified CUBIC senders slow down before the "
        "queue overflows. rove runs the whole loop in the engine (`[[controllers]] kind = "
        "\"oal\"`, docs/oal.md). The paper's testbed was three OpenWrt APs and nine laptops; "
        f"here: {setting}, {NETWORK.describe_cell()} (scenarios/oal/reproduce.toml), stations' "
        "SNR random walks ([GAP]s, python/rove/reproduce/oal/common.py). Each of the paper's "
        "percentages (the body's; the abstract's differ) is a claim whose criterion is fixed "
        "in the code before the runs, the same for every scheme, judged over iterations.",
        run_line(info) + " Simulator only.",
    ]


STUDY = Study(
    name="oal",
    title="Reproduction: OAL, learned congestion prediction and rate control at the WiFi "
          "access point (seed 004)",
    description="Run the evaluation of seed 004 (OAL against BBR and PCC Vivace, Tables 2, 4 "
                "and 6) on the simulator.",
    experiments=EXPERIMENTS,
    intro=_intro,
    quick_help="two 20-s iterations and one 30-s tables run (well under two minutes on two "
               "cores)",
    sweeps=SWEEPS,
    add_arguments=accept_sim_only,
    default_jobs=2,
)


def main(argv=None) -> int:
    """``rove reproduce oal ...`` (see :func:`rove.reproduce.study.main`)."""
    return _study_main(STUDY, argv)
