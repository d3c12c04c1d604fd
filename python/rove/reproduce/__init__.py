"""``rove reproduce NAME ...``: rerun a source document's experiments and report how our numbers
compare with the source's claims.

    rove reproduce bbrv2plus -o DIR [--quick] [--only EXP]   # seed 000, thesis chapter 4
    rove reproduce fidelity -o DIR [--quick] [--sim-only]    # the simulator against the kernel
    rove reproduce bccps -o DIR [--quick] [--sim-only]       # seed 001: BCCPS
    rove reproduce selection -o DIR [--quick] [--sim-only]   # seed 002: CCA selection over LTE
    rove reproduce tsc -o DIR [--quick]                      # seed 003: TSC, rate models, R-TSC, SPC
    rove reproduce sscc -o DIR [--quick] [--sim-only]        # seed 000, thesis chapter 5: MPTCP-SSCC
    rove reproduce oal -o DIR [--quick] [--sim-only]         # seed 004: OAL, on-AP learning

One framework (:mod:`rove.reproduce.study`: experiments, parts, the run log and resume, the
command line, the report writer; :mod:`~rove.reproduce.verdicts`: the verdict machinery), one
subpackage per study. A study's package defines ``STUDY`` (a :class:`~rove.reproduce.study.Study`);
adding one is its folder and one line below. Studies are imported only when asked for.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Sequence

# name -> (module defining STUDY, what it reproduces)
STUDIES = {
    "bbrv2plus": ("rove.reproduce.bbrv2plus", "seed 000, thesis chapter 4: BBRv2 and BBRv2+"),
    "fidelity": ("rove.reproduce.fidelity", "agreement of the simulator with the kernel backend"),
    "bccps": ("rove.reproduce.bccps", "seed 001: BCCPS (bottleneck-fair MPTCP-BBR, its scheduler)"),
    "selection": ("rove.reproduce.selection",
                  "seed 002: congestion-control selection and switching over LTE"),
    "tsc": ("rove.reproduce.tsc", "seed 003: MPTCP-TSC and the Ch. 3 rate models"),
    "sscc": ("rove.reproduce.sscc", "seed 000, thesis chapter 5: MPTCP-SSCC"),
    "oal": ("rove.reproduce.oal", "seed 004: OAL, learned congestion prediction at the WiFi AP"),
}


def main(argv: Sequence[str]) -> int:
    """Dispatch ``[NAME, *args]`` to the study's command line."""
    from ..cli import CliError
    from .study import main as study_main

    argv = list(argv)
    names = ", ".join(STUDIES)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: rove reproduce NAME [options]   (NAME: " + names + "; "
              "'rove reproduce NAME --help' for its options)")
        for name, (_, what) in STUDIES.items():
            print(f"  {name:<10} {what}")
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in STUDIES:
        raise CliError(f"reproduce: unknown study {name!r} (accepted: {names})")
    module_name = STUDIES[name][0]
    if importlib.util.find_spec(module_name) is None:
        raise CliError(f"reproduce {name}: not available in this build ({module_name} is missing)")
    module = importlib.import_module(module_name)
    return int(study_main(module.STUDY, rest) or 0)
