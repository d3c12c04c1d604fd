"""Shared pieces of ``rove reproduce bccps``: the schemes (series), per-run records read from the
sweeps, and the claim builders every section uses.

Every claim is judged by a criterion fixed here or in its section before the runs, the same for
each scheme it compares, over seeds (:func:`~rove.reproduce.verdicts.judge_less` takes the
larger standard deviation of the two sides as its margin); "not measured" never counts as
support (:func:`~rove.reproduce.verdicts.combine`).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..document import Table, fmt
from ..document import spread as pm
from ..runner import Series
from ..study import Context, pyplot, save_figure
from ..verdicts import (FAILS, HOLDS, NOT_AVAILABLE, NOT_MEASURED, PARTLY, Claim, combine,
                        is_number, judge_less, judge_range, mean, mean_sd, median)

__all__ = ["BCCPS", "MPBBR_LRF", "MPBBR_RR", "LIA_LRF", "BALIA_LRF", "BLEST_LIA", "BBR_LRF",
           "single_path", "runs_table", "flow_values", "by_seed", "mean", "mean_sd", "pm",
           "less_claim", "band_claim", "ratio_claim", "unavailable_notes", "scheme_table",
           "pyplot", "save_figure", "FAIR_BAND", "H1_FACTOR", "H2_FACTOR"]

# --------------------------------------------------------------------------------------------
# The schemes. Every multipath series runs on flow 0 (the MPTCP connection C0 -> S0 of seed 001
# Fig. 7); the background flows keep the committed scenario's single-path BBR.

# MPTCP-BBR (issue 15 item 1) with its shared-bottleneck detector (item 2, `detector = "auto"`:
# the paper's S1 + S2 for mpbbr) and the BCCPS scheduler (item 3): the paper's full scheme.
BCCPS = Series("bccps", "BCCPS", "mpbbr", extra={"flows.0.scheduler": "bccps"})
# MPTCP-BBR with the comparison schedulers of Figs. 10-14 (§IV-A3: all three use MPTCP-BBR).
MPBBR_LRF = Series("mpbbr-lrf", "MPTCP-BBR + LRF", "mpbbr", extra={"flows.0.scheduler": "minrtt"})
MPBBR_RR = Series("mpbbr-rr", "MPTCP-BBR + RR", "mpbbr",
                  extra={"flows.0.scheduler": "roundrobin"})
# The network-fair coupled algorithms of Figs. 8(b)/9(b), with LRF ("scheduler = LRF").
LIA_LRF = Series("lia-lrf", "LIA + LRF", "lia",
                 extra={"flows.0.scheduler": "minrtt", "flows.0.coupling": "connection"})
BALIA_LRF = Series("balia-lrf", "BALIA + LRF", "balia",
                   extra={"flows.0.scheduler": "minrtt", "flows.0.coupling": "connection"})
# Fig. 14's BLEST, which "cannot be applied to MPTCP-BBR": on LIA (a loss-based CC).
BLEST_LIA = Series("blest-lia", "BLEST (LIA)", "lia",
                   extra={"flows.0.scheduler": "blest", "flows.0.coupling": "connection"})
# What upstream Linux MPTCP runs: BBR on each subflow, uncoupled, the default scheduler.
BBR_LRF = Series("bbr-lrf", "uncoupled BBR + LRF", "bbr",
                 extra={"flows.0.scheduler": "minrtt", "flows.0.coupling": "uncoupled"})


def single_path(key: str, label: str, path: Sequence[str] | None = None,
                ack_path: Sequence[str] | None = None) -> Series:
    """Single-path TCP-BBR in place of the MPTCP connection, over one of its paths (the
    "best single-path TCP-BBR" of Figs. 10 and 11), for ``table1-shared-single.toml``, whose
    flow 0 runs over path 0: ``path``/``ack_path`` move it to another."""
    extra = {}
    if path is not None:
        extra = {"flows.0.path": list(path), "flows.0.ack_path": list(ack_path or [])}
    return Series(key, label, "bbr", extra=extra)


# --------------------------------------------------------------------------------------------
# Criteria fixed before the runs (issue 15; seed-001 §5 and the summary's "How to check")

FAIR_BAND = (0.85, 1.15)     # Q2/Q3/H3: MPTCP-BBR's goodput over the single-path baseline
H1_FACTOR = 0.5              # H1: "reduce the out-of-order packets ... by >50%"
H2_FACTOR = 1.3              # H2: "increase the goodput by >30%"


# --------------------------------------------------------------------------------------------
# Reading runs


def runs_table(ctx: Context) -> pd.DataFrame:
    """The experiment's rows (one per flow per point), with a ``case`` column even for sweeps
    without cases (then "default")."""
    df = ctx.df.copy()
    if not len(df):
        return df
    if "case" not in df.columns:
        df["case"] = "default"
    df["case"] = df["case"].fillna("default")
    return df


def flow_values(df: pd.DataFrame, flow: str, column: str, keys: Sequence[str]) -> pd.DataFrame:
    """``column`` of flow ``flow`` in each run, indexed by ``keys`` + seed (one row per run)."""
    m = df[df["flow"] == flow]
    if column not in m.columns:
        return pd.DataFrame(columns=[*keys, "seed", column])
    return m[[*keys, "seed", column]].reset_index(drop=True)


def by_seed(df: pd.DataFrame, keys: Sequence[str], value: Callable[[pd.DataFrame], float]
            ) -> pd.DataFrame:
    """One row per run (``keys`` + seed) with ``value(rows of that run)``."""
    rows = []
    for k, g in df.groupby([*keys, "seed"], sort=True, dropna=False):
        rows.append({**dict(zip([*keys, "seed"], k)), "value": value(g)})
    return pd.DataFrame(rows)




# --------------------------------------------------------------------------------------------
# Claims


def less_claim(quote: str, where: str, lower: dict[str, Sequence[float]],
               higher: dict[str, Sequence[float]], what: str, slack: float = 0.0) -> Claim:
    """The claim "every scheme of ``lower`` has a smaller ``what`` than every scheme of
    ``higher``", judged pair by pair over seeds (:func:`judge_less`) and combined."""
    verdicts, parts = [], []
    for la, a in lower.items():
        for lb, b in higher.items():
            v, text = judge_less(a, b, slack=slack)
            verdicts.append(v)
            parts.append(f"{la} {fmt(mean(a), '.3g')} < {lb} {fmt(mean(b), '.3g')}: {v} ({text})")
    return Claim(quote, where, "; ".join(parts) or "no runs",
                 f"{what}: each pair judged over seeds, the difference of the means beyond the "
                 f"larger standard deviation (holds), positive but within it (partly); all "
                 f"pairs combined", combine(verdicts) if verdicts else NOT_MEASURED)


def band_claim(quote: str, where: str, values: dict[str, Sequence[float]], band=FAIR_BAND,
               what: str = "median over seeds") -> Claim:
    """The claim "each of ``values`` (a label per setting) lies in ``band``", judged on its
    median over seeds; all settings combined."""
    verdicts, parts = [], []
    for label, xs in values.items():
        m = median(xs)
        v = judge_range(m, band)
        verdicts.append(v)
        parts.append(f"{label}: {fmt(m, '.3f')} [{fmt(min(xs, default=None), '.2f')}–"
                     f"{fmt(max(xs, default=None), '.2f')}, {len([x for x in xs if is_number(x)])} "
                     f"seeds]")
    return Claim(quote, where, "; ".join(parts) or "no runs",
                 f"{what} within {band[0]:g}–{band[1]:g} in every setting",
                 combine(verdicts) if verdicts else NOT_MEASURED)


def ratio_claim(quote: str, where: str, pairs: dict[str, tuple[Sequence[float], Sequence[float]]],
                factor: float, what: str, higher_is_better: bool) -> tuple[Claim, Table]:
    """A claim of a relative gain by ``factor`` (H1: OFO × 0.5 or less; H2: goodput × 1.3 or
    more) of the first of each pair over the second, per setting (label), on the means over
    seeds; judged by the share of settings where it holds (every setting: holds; at least one:
    partly; none: does not hold). Also the table of every setting's ratio."""
    rows, flags = [], []
    for label, (ours, theirs) in pairs.items():
        a, b = mean(ours), mean(theirs)
        r = a / b if is_number(a) and is_number(b) and b > 0 else None
        ok = None if r is None else (r >= factor if higher_is_better else r <= factor)
        flags.append(ok)
        rows.append([label, fmt(a, ".3g"), fmt(b, ".3g"), fmt(r, ".2f"),
                     "–" if ok is None else ("yes" if ok else "no")])
    known = [f for f in flags if f is not None]
    if not known:
        verdict = NOT_MEASURED
    elif all(known) and len(known) == len(flags):
        verdict = HOLDS
    elif any(known):
        verdict = PARTLY
    else:
        verdict = FAILS
    cmp = "≥" if higher_is_better else "≤"
    table = Table(["setting", "ours (mean)", "theirs (mean)", "ratio", f"{cmp} {factor:g}"], rows,
                  f"{what}: ratio of the means over seeds")
    n_ok = sum(1 for f in known if f)
    claim = Claim(quote, where, f"{n_ok} of {len(flags)} settings: "
                  + "; ".join(f"{r[0]} {r[3]}" for r in rows),
                  f"{what}: ratio of means {cmp} {factor:g} in every setting (holds), in some "
                  f"(partly), in none (does not hold)", verdict)
    return claim, table


def unavailable_notes(ctx: Context) -> list[str]:
    return [f"Series `{k}` not available in this build: {why}"
            for k, why in ctx.unavailable().items()]


def unavailable_claim(quote: str, where: str, ctx: Context, keys: Sequence[str]) -> Claim | None:
    """A "not available" claim when one of the series a claim needs was refused by the engine."""
    una = ctx.unavailable()
    missing = [k for k in keys if k in una]
    if not missing:
        return None
    return Claim(quote, where, "not run", "–", NOT_AVAILABLE,
                 [f"`{k}` not available in this build: {una[k]}" for k in missing])


def scheme_table(rows: dict[str, dict[str, Sequence[float]]], columns: Sequence[str],
                 caption: str, spec: str = ".2f") -> Table:
    """A table of ``mean ± sd (n)``: one row per scheme label, one column per setting."""
    return Table(["scheme", *columns],
                 [[label, *[pm(cells.get(c, []), spec) for c in columns]]
                  for label, cells in rows.items()], caption)


def bar_figure(ctx: Context, name: str, rows: dict[str, dict[str, Sequence[float]]],
               columns: Sequence[str], ylabel: str, title: str, hline: float | None = None,
               log: bool = False) -> str:
    """Grouped bars (one group per column, one bar per scheme) of mean ± sd."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(columns) + 2), 3.6))
    n = max(1, len(rows))
    width = 0.8 / n
    x = np.arange(len(columns))
    for i, (label, cells) in enumerate(rows.items()):
        ms = [mean_sd(cells.get(c, [])) for c in columns]
        ax.bar(x + (i - (n - 1) / 2) * width, [m if m is not None else np.nan for m, _ in ms],
               width, yerr=[s if s is not None else 0 for _, s in ms], capsize=2, label=label)
    if hline is not None:
        ax.axhline(hline, color="k", lw=0.8, ls="--")
    ax.set_xticks(x)
    ax.set_xticklabels(columns)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, ctx.figure(name))
