"""``rove reproduce NAME ...``: rerun a source document's experiments and report how our numbers
compare with the paper's.

    rove reproduce bbrv2plus -o DIR [--quick] [--only EXP]   # seed 000, thesis chapter 4
    rove reproduce fidelity ...                             # rove.fidelity (simulator vs kernel)

Each study is a module with ``main(argv) -> exit status``; they are imported only when asked for.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Sequence

# name -> (module, what it reproduces)
STUDIES = {
    "bbrv2plus": ("rove.reproduce.bbrv2plus", "seed 000, thesis chapter 4: BBRv2 and BBRv2+"),
    "fidelity": ("rove.fidelity", "agreement of the simulator with the kernel backend"),
}


def main(argv: Sequence[str]) -> int:
    """Dispatch ``[NAME, *args]`` to the study's ``main(args)``."""
    from ..cli import CliError

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
    return int(module.main(rest) or 0)
