"""``rove reproduce sscc``: seed 000's chapter 5 (Yang's thesis, MPTCP-SSCC: shared-bottleneck
detection, OLIA* over the subflows that share one, and a learned per-subflow choice of
algorithm elsewhere) rerun on rove's simulator.

    rove reproduce sscc -o DIR [--quick] [--only EXP[,EXP...]] [-j N] [--sim-only]

The thesis's figures (``../shared/research/seed-000.md`` §4.8, §7 rows 14-16): Jain's index
against NewReno at a static (Table 5.5) and a dynamic (Table 5.6) shared bottleneck with 2-6
subflows, the switching demo (Fig. 5.18) and the performance comparison on dual-path traces
(Figs. 5.19-5.20: +21-32 % throughput and 3-28 % less queueing delay than LIA, OLIA, BALIA and
MPCC; MPCC is not built in rove). Each experiment is a committed sweep under
``scenarios/sscc/sweeps/`` run once per scheme (:mod:`.common`'s series); every claim's
criterion is fixed in the code before the runs, the same for every scheme, over seeds (5 per
point in the full run). rove's ablations (the selection off, no detection, the true grouping,
Poisson UDP, fewer predictions, fixed candidates) are reported beside, not counted. The
selection runs the built-in models (``scenarios/sscc/model/``, ``rove train sscc``'s default
scale). ``--quick`` (CI): two subflow counts, shorter runs, one network, one or two seeds.
Simulator only (the kernel backend has no MPTCP-SSCC); ``--sim-only`` is accepted and changes
nothing, so the command reads like the other studies'.
"""

from __future__ import annotations

from ..runner import Quick, repo_root
from ..study import (Experiment, Part, RunInfo, Study, accept_sim_only,
                     main as _study_main, run_line)
from . import fairness, performance, switching
from .common import (BALIA, LIA, NO_BBR, NO_DETECTION, OLIA, POISSON_UDP, SELECTION_OFF,
                     SSCC, TRUE_GROUPING, UNCOUPLED_RENO, WVEGAS, run_with_records,
                     thesis_models)

SWEEPS = repo_root() / "scenarios" / "sscc" / "sweeps"

FAIRNESS_SERIES = (SSCC, LIA, OLIA, BALIA, UNCOUPLED_RENO)
THESIS_MODELS = thesis_models("mptcp")         # the fairness scenarios' connection
# Quick: two subflow counts, shorter runs measured over their last 20 s (NewReno still starts at
# 20 s on the static bottleneck, at 40 s on the dynamic one).
STATIC_QUICK = Quick({}, {"duration": "60s", "measure": ["40s", "60s"]}, (1, 2),
                     cases=("m2", "m4"))
DYNAMIC_QUICK = Quick({}, {"duration": "80s", "measure": ["60s", "80s"]}, (1, 2),
                      cases=("m2", "m4"))
SWITCHING_QUICK = Quick({}, {}, (1, 2))
PERFORMANCE_QUICK = Quick({}, {}, (1,), cases=("short1", "long4"))

STATIC = Part("main", "table5-5.toml", STATIC_QUICK)
DYNAMIC = Part("main", "table5-6.toml", DYNAMIC_QUICK)
SWITCHING = Part("main", "fig5-18.toml", SWITCHING_QUICK)
PERFORMANCE = Part("main", "performance.toml", PERFORMANCE_QUICK)


def _one_seed(part: Part, cases: tuple[str, ...] | None = None) -> Part:
    """An ablation's part: the experiment's, with one seed (and fewer cases) in quick mode."""
    q = part.quick
    return Part(part.key, part.sweep, Quick(q.grid, q.fixed, (1,), cases or q.cases))


STATIC_ABLATION = _one_seed(STATIC, ("m2",))
DYNAMIC_ABLATION = _one_seed(DYNAMIC, ("m2",))
PERFORMANCE_ABLATION = _one_seed(PERFORMANCE)

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("table5-5", "Fairness at a static shared bottleneck (Table 5.5)",
               FAIRNESS_SERIES, (STATIC,), fairness.analyse_static,
               run=run_with_records(SWEEPS, fairness.measure)),
    Experiment("table5-6", "Fairness at a dynamic bottleneck (Table 5.6)",
               FAIRNESS_SERIES, (DYNAMIC,), fairness.analyse_dynamic,
               run=run_with_records(SWEEPS, fairness.measure)),
    Experiment("fig5-18", "The switching demo (Fig. 5.18)", (SSCC,), (SWITCHING,),
               switching.analyse, run=run_with_records(SWEEPS, switching.measure)),
    Experiment("performance", "Performance on dual-path traces (Figs. 5.19-5.20)",
               (SSCC, LIA, OLIA, BALIA, WVEGAS), (PERFORMANCE,), performance.analyse,
               run=performance.run_on_networks(performance.NETWORKS_FULL)),
    Experiment("ablation-static", "What keeps MPTCP-SSCC fair at the static bottleneck "
               "(rove's ablation)",
               (SSCC, SELECTION_OFF, NO_DETECTION, TRUE_GROUPING, NO_BBR, THESIS_MODELS),
               (STATIC_ABLATION,),
               lambda ctx: fairness.analyse_ablation(
                   ctx, "What keeps MPTCP-SSCC fair at the static bottleneck (rove's ablation)",
                   (("rove's hypothesis: without detection (every subflow alone, on the "
                     "selection's algorithms) MPTCP-SSCC is less fair to NewReno",
                     NO_DETECTION.key, SSCC.key),
                    ("rove's hypothesis: the selection makes MPTCP-SSCC less fair than its "
                     "coupling alone (OLIA* + RFC 8382)", SSCC.key, SELECTION_OFF.key),
                    ("rove's hypothesis: BBR among the candidates makes MPTCP-SSCC less fair "
                     "(a subflow keeps BBR's pacing after it is switched back to OLIA*)",
                     SSCC.key, NO_BBR.key))),
               run=run_with_records(SWEEPS, fairness.measure), counted=False),
    Experiment("ablation-dynamic", "What MPTCP-SSCC does at the dynamic bottleneck (rove's "
               "ablation)", (SSCC, SELECTION_OFF, NO_DETECTION, NO_BBR, POISSON_UDP, THESIS_MODELS),
               (DYNAMIC_ABLATION,),
               lambda ctx: fairness.analyse_ablation(
                   ctx, "What MPTCP-SSCC does at the dynamic bottleneck (rove's ablation)",
                   (("rove's hypothesis: at the dynamic bottleneck the selection makes "
                     "MPTCP-SSCC less fair than its coupling alone (OLIA* + RFC 8382)",
                     SSCC.key, SELECTION_OFF.key),
                    ("rove's hypothesis: BBR among the candidates makes MPTCP-SSCC less fair",
                     SSCC.key, NO_BBR.key))),
               run=run_with_records(SWEEPS, fairness.measure), counted=False),
    Experiment("ablation-switching", "The switching demo with fewer predictions or the "
               "thesis-scale models (rove's ablation)",
               (switching.SSCC_PERIOD_50, switching.THESIS_MODELS), (SWITCHING,),
               switching.analyse_ablation, run=run_with_records(SWEEPS, switching.measure),
               counted=False),
    Experiment("ablation-performance", "What the selection earns on the dual-path traces "
               "(rove's ablation)", performance.ABLATION_SERIES, (PERFORMANCE_ABLATION,),
               performance.analyse_ablation,
               run=performance.run_on_networks(performance.ABLATION_NETWORKS), counted=False),
)


def _intro(info: RunInfo) -> list[str]:
    return [
        "Seed 000, chapter 5 (Furong Yang's PhD thesis, 2022): MPTCP-SSCC couples only the "
        "subflows that the receiver's one-way-delay statistics (RFC 8382) say share a "
        "bottleneck, runs OLIA* over them, and gives every other subflow the algorithm an "
        "XGBoost model predicts will earn the best reward on its path for the next Data Unit "
        "(BBR, CUBIC, Vegas, C2TCP, Westwood, Illinois). rove runs it as `cc = \"sscc\"` "
        "(docs/sscc.md) with the models `rove train sscc` made (scenarios/sscc/model/: the "
        "bootstrap of Table 5.4 at the default scale, 60 environments; the thesis's trace "
        "iteration is not built). The thesis ran Mininet and mpshell on the out-of-tree MPTCP "
        "v0.95 kernel; rove's schemes are built on its own Linux-faithful TCP, and its "
        "networks are the thesis's described ones with every unstated value a [GAP] choice "
        "named where it is made. Each claim's criterion was fixed before the runs, symmetric "
        "between the schemes, over seeds; where rove disagrees with the thesis, the ablations "
        "(reported beside, not counted) show which piece does what.",
        run_line(info) + " Simulator only.",
    ]


STUDY = Study(
    name="sscc",
    title="Reproduction: MPTCP-SSCC, shared-bottleneck coupling and learned per-subflow "
          "selection (seed 000, chapter 5)",
    description="Run the experiments of seed 000's chapter 5 (MPTCP-SSCC) on the simulator.",
    experiments=EXPERIMENTS,
    intro=_intro,
    quick_help="two subflow counts, short runs, one network, one or two seeds (well under two "
               "minutes on two cores)",
    sweeps=SWEEPS,
    add_arguments=accept_sim_only,
    default_jobs=2,
)


def main(argv=None) -> int:
    """``rove reproduce sscc ...`` (see :func:`rove.reproduce.study.main`)."""
    return _study_main(STUDY, argv)
