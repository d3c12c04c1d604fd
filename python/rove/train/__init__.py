"""``rove train NAME ...``: train a learned controller's models with rove's own runs.

    rove train sscc -o DIR [--scale default|thesis] [--jobs N]   # MPTCP-SSCC's selection models

One module per trainable thing, with a ``main(argv)`` that parses its own options; adding one
is its module and one line below. Trainers are imported only when asked for.
"""

from __future__ import annotations

import importlib
from typing import Sequence

# name -> (module with main(argv), what it trains)
TRAINERS = {
    "sscc": ("rove.train.sscc",
             "MPTCP-SSCC's per-candidate reward regressors (seed 000 §4.5, Table 5.4 bootstrap)"),
}


def main(argv: Sequence[str]) -> int:
    """Dispatch ``[NAME, *args]`` to the trainer's command line."""
    from ..cli import CliError

    argv = list(argv)
    names = ", ".join(TRAINERS)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: rove train NAME [options]   (NAME: " + names + "; "
              "'rove train NAME --help' for its options)")
        for name, (_, what) in TRAINERS.items():
            print(f"  {name:<8} {what}")
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in TRAINERS:
        raise CliError(f"train: unknown trainer {name!r} (accepted: {names})")
    module = importlib.import_module(TRAINERS[name][0])
    return int(module.main(rest) or 0)
