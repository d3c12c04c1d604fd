"""Shared pieces of the ``rove reproduce bbrv2plus`` analyses: formatting helpers and the
constants of the thesis's setups.

The analyses themselves (seed 000, thesis chapter 4) are in ``fairness`` (experiments 1-2),
``paths`` (3, 4, 6: retransmissions, loss, jitter), ``dynamics`` (5, 7, 8: bandwidth steps and
traces) and ``ablation`` (the cellular gain over more networks, not counted). Each takes a
:class:`~rove.reproduce.study.Context` and returns a :class:`~rove.reproduce.document.Section`; criteria are fixed before looking at results and
printed next to each verdict; nothing is tuned toward the paper.
"""

from __future__ import annotations

import math
from ..document import fmt
# (re-exported for the analyses: the context they see, the one figure set-up and PNG writer)
from ..study import Context, pyplot as _plt, save_figure as _save  # noqa: F401
from ..verdicts import FAILS, HOLDS, NOT_AVAILABLE, NOT_MEASURED, Claim, is_number

INF = math.inf
FAIRNESS_BDP_BYTES = 200_000          # 40 Mbps x 40 ms
LINK_MBPS = 40.0
# The algorithms the thesis compared on traces (Orca aside): they define each network's
# normalisation; other series (the code variant) are normalised by the same figures.
THESIS_SCHEMES = {"cubic", "bbr", "bbr2", "bbr2plus"}


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
