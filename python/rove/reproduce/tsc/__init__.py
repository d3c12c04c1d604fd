"""``rove reproduce tsc``: seed 003 (Park, "Multi-path TCP extension for multimedia QoS in
wireless networks", SNU PhD 2016) rerun on rove's simulator.

    rove reproduce tsc -o DIR [--quick] [--only EXP[,EXP...]] [-j N]

Experiments are registered per chapter (:data:`EXPERIMENTS`): Ch. 2's MPTCP-TSC against
conventional MPTCP on a VBR video over WiFi + LTE (§5 rows 1-6) and rove's TSC-vs-minRTT
ablation (not counted); Ch. 3's rate models against rove's Reno and LIA (Figs. 3.4, 3.7; rows
7-8); Ch. 3's testbed emulation, R-TSC (``receiver = "rtsc"``) against the conventional receiver
at (40, 8/12/15) Mbit/s with the (3.10) optimum beside (:mod:`.testbed`; Figs. 3.8-3.9, row
13); Ch. 4's Subflow Population Control (``receiver = "spc"``) against 1, 5, 10 and 20 fixed
subflows over CoDel at static, periodic and random-walk capacity (:mod:`.spc`, the capacities
in :mod:`.capacity`; Figs. 4.5-4.9, rows 16-20). Each runs committed sweep files under
``scenarios/tsc/sweeps/`` and ends in an analysis function. Every claim's criterion is fixed in
the code (the constants of :mod:`.common`, :mod:`.ch3`, :mod:`.testbed` and :mod:`.spc`) before
the runs, the same for every scheme it compares, judged over seeds (10 in the full run where a
seed changes the run: Ch. 2 and the testbed's video; two where nothing is random: the rate
models and Ch. 4). ``--quick`` (CI) runs 20-s Ch. 2 runs, shorter, coarser Ch. 3 sweeps, 10-s
testbed runs at two WiFi rates and 10-s Ch. 4 runs at four capacities, on two seeds.
"""

from __future__ import annotations

from ..runner import Quick, Series, repo_root
from ..study import Experiment, Part, RunInfo, Study, main as _study_main, run_line
from .ch2 import CH2_SERIES, MINRTT_SERIES, analyse_ch2, analyse_minrtt
from .ch3 import analyse_lia, analyse_reno
from .spc import SPC_SERIES, analyse_spc, run_spc
from .testbed import TESTBED_SERIES, WIFI_KEY, analyse_testbed, run_testbed

SWEEPS = repo_root() / "scenarios" / "tsc" / "sweeps"

CH2_QUICK = Quick({}, {"duration": "20s"}, (1, 2))
RENO = Series("reno", "Reno", "reno")
LIA = Series("lia", "MPTCP-LIA", "lia")

EXPERIMENTS: tuple[Experiment, ...] = (
    # Ch. 2 (§2.5-2.6)
    Experiment("ch2-video", "Ch. 2: TSC against conventional MPTCP (WiFi + LTE video)",
               CH2_SERIES, (Part("main", "ch2.toml", CH2_QUICK),), analyse_ch2),
    Experiment("ch2-minrtt", "Ch. 2: TSC against minRTT and its ablation (rove's check)",
               MINRTT_SERIES, (Part("main", "ch2.toml", CH2_QUICK),), analyse_minrtt,
               counted=False),
    # Ch. 3 (§3.3.2, §3.6.2)
    Experiment("ch3-reno", "Ch. 3: the single-Reno rate model (3.9) (Fig. 3.4)", (RENO,),
               (Part("main", "reno-model.toml",
                     Quick({"links.btl.buffer": ["233pkt", "100pkt", "43pkt", "11pkt"]},
                           {"duration": "80s", "measure": ["20s", "80s"]}, (1, 2))),),
               analyse_reno),
    Experiment("ch3-lia", "Ch. 3: the LIA rate model (Fig. 3.7(a))", (LIA,),
               (Part("main", "lia-model.toml",
                     Quick({"links.lte.buffer": ["5000B", "75000B", "125000B", "175000B"]},
                           {"duration": "60s", "measure": ["20s", "60s"]}, (1, 2))),),
               analyse_lia),
    # Ch. 3 (§3.6.3): the testbed emulation
    Experiment("ch3-testbed", "Ch. 3: R-TSC against the conventional receiver (testbed "
               "emulation, Figs. 3.8-3.9)", TESTBED_SERIES,
               (Part("main", "rtsc-testbed.toml",
                     Quick({WIFI_KEY: ["8Mbps", "15Mbps"]}, {"duration": "10s"}, (1, 2))),),
               analyse_testbed, run=run_testbed(SWEEPS)),
    # Ch. 4 (§4.5-4.6)
    Experiment("ch4-spc", "Ch. 4: Subflow Population Control against fixed subflows over CoDel "
               "(Figs. 4.5-4.9)", SPC_SERIES,
               (Part("main", "ch4-spc.toml",
                     Quick({}, {"duration": "10s"}, (1, 2),
                           cases=["static-20", "static-80", "periodic-40", "walk-1"])),),
               analyse_spc, run=run_spc(SWEEPS)),
)


def _intro(info: RunInfo) -> list[str]:
    return [
        "Seed 003 (Park, SNU PhD 2016): delay-bounded multipath TCP for video. Ch. 2's "
        "MPTCP-TSC (`scheduler = \"tsc\"`) splits a video's rate over WiFi and LTE each time "
        "slot, the cheapest path first, up to the rate whose modelled network delay is "
        "d_thr^net; Ch. 3 models a Reno flow's and MPTCP-LIA's rates with a time-varying RTT "
        "(`rove.models.mptcp_delay`) and enforces delay-optimal rates from the receiver with "
        "intentional duplicate ACKs (R-TSC, `receiver = \"rtsc\"`); Ch. 4 opens 20 subflows on "
        "one path and switches them off and on from the receiver (Subflow Population Control, "
        "`receiver = \"spc\"`). Each headline of the summary's §5 that these settings "
        "reach is judged here with its criterion fixed in `python/rove/reproduce/tsc/` before "
        "the runs, symmetric between schemes, over seeds. The dissertation ran ns-3 (Chihani & "
        "Denis's MPTCP model) and did not give d_req, the WiFi capacity process, the video "
        "trace, buffers or delays ([GAP]s, chosen in `scenarios/tsc/`): expect orderings and "
        "magnitudes to be comparable, not the figures' values.",
        run_line(info),
    ]


STUDY = Study(
    name="tsc",
    title="Reproduction: MPTCP-TSC, the Ch. 3 rate models, R-TSC and Subflow Population Control "
          "(seed 003)",
    description="Run the experiments of seed 003 (MPTCP-TSC, the rate models, R-TSC, Subflow "
                "Population Control) on the simulator.",
    experiments=EXPERIMENTS,
    intro=_intro,
    quick_help="20-s Ch. 2 runs, coarser Ch. 3 sweeps, 10-s testbed and Ch. 4 runs, two seeds "
               "(well under two minutes on two cores)",
    sweeps=SWEEPS,
    default_jobs=2,
)


def main(argv=None) -> int:
    """``rove reproduce tsc ...`` (see :func:`rove.reproduce.study.main`)."""
    return _study_main(STUDY, argv)
