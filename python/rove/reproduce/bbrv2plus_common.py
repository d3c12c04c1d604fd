"""Shared pieces of the ``rove reproduce bbrv2plus`` analyses: the :class:`Context` an analysis
sees, plotting and formatting helpers, and the constants of the thesis's setups.

The analyses themselves (seed 000, thesis chapter 4) are in ``bbrv2plus_fairness`` (experiments
1-2), ``bbrv2plus_paths`` (3, 4, 6: retransmissions, loss, jitter) and ``bbrv2plus_dynamics``
(5, 7, 8: bandwidth steps and traces). Each takes a :class:`Context` and returns a
:class:`~rove.reproduce.document.Section`; criteria are fixed before looking at results and
printed next to each verdict; nothing is tuned toward the paper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .document import fmt
from .runner import SeriesRun
from .verdicts import FAILS, HOLDS, NOT_AVAILABLE, NOT_MEASURED, Claim, is_number

INF = math.inf
FAIRNESS_BDP_BYTES = 200_000          # 40 Mbps x 40 ms
LINK_MBPS = 40.0
# The algorithms the thesis compared on traces (Orca aside): they define each network's
# normalisation; other series (the code variant) are normalised by the same figures.
THESIS_SCHEMES = {"cubic", "bbr", "bbr2", "bbr2plus"}


@dataclass
class Context:
    """What an analysis sees: the experiment's runs, their joint table, where to draw."""

    exp_id: str
    out: Path                              # the report's directory (figures go here)
    quick: bool
    runs: list[SeriesRun]
    df: pd.DataFrame                       # all runs' rows, with series / setting / part
    skipped: dict[str, str] = field(default_factory=dict)   # part -> reason it did not run
    durations_s: dict[str, float] = field(default_factory=dict)   # part -> simulated seconds

    def labels(self) -> dict[str, str]:
        """series key -> label, in run order, for the series that ran."""
        out: dict[str, str] = {}
        for r in self.runs:
            if r.table is not None:
                out.setdefault(r.series.key, r.series.label)
        return out

    def unavailable(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in self.runs:
            if r.unavailable is not None:
                out.setdefault(r.series.key, r.unavailable)
        return out

    def figure(self, name: str) -> Path:
        return self.out / f"{self.exp_id}-{name}.png"


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> str:
    from ..results import replace_atomically

    replace_atomically(path, lambda tmp: fig.savefig(tmp, dpi=90, bbox_inches="tight",
                                                     format="png"))
    _plt().close(fig)
    return path.name


def _pm(mean, sd, spec=".2f") -> str:
    if not is_number(mean):
        return "–"
    if not is_number(sd) or sd == 0:
        return fmt(mean, spec)
    return f"{fmt(mean, spec)} ± {fmt(sd, spec)}"


def _bool_verdict(flag) -> str:
    if flag is None:
        return NOT_MEASURED
    return HOLDS if flag else FAILS


def _unavailable_claim(quote, where, series_label, reason) -> Claim:
    return Claim(quote, where, f"{series_label}: not run", "–", NOT_AVAILABLE,
                 [f"{series_label} is not available in this build: {reason}"])


def _unavailable_notes(ctx: Context) -> list[str]:
    return [f"Series `{k}` not available in this build: {why}" for k, why in
            ctx.unavailable().items()]
