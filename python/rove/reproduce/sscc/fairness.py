"""Multipath fairness at a shared bottleneck (thesis Tables 5.5 and 5.6, Figs. 5.12-5.17) and
rove's ablations of it.

* ``table5-5``: one MPTCP connection of M = 2..6 subflows and a NewReno flow (from 20 s) through
  one static 40 Mbit/s bottleneck; Jain's index over 120-180 s;
* ``table5-6``: M paths of 40/M Mbit/s through a shared 50 Mbit/s link on which 20 Mbit/s of
  UDP start at 20 s, a NewReno flow per path from 40 s; Jain's index between the connection and
  the M NewReno flows over 120-180 s;
* the ablations run the same sweeps with one piece of MPTCP-SSCC changed: the selection off
  (OLIA* with RFC 8382 detection, uncoupled subflows on Reno), no detection (every subflow
  alone, on the selection's algorithm), the topology's true grouping, or Poisson UDP.

The thesis ran only MPTCP-SSCC in these tables; LIA, OLIA, BALIA and uncoupled Reno are rove's
reference rows (in the table, not in the claims).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..document import Section, Table, fmt
from ..document import spread as pm
from ..study import Context, pyplot, save_figure
from ..verdicts import Claim, combine, judge_less, judge_range, median, NOT_MEASURED
from .common import (FAIR_BAND, FAIR_PARTLY, JAIN_FLOOR, SSCC, SUBFLOWS, THESIS_DYNAMIC,
                     THESIS_STATIC, by_case, jain_of_run, opened_section)

WHERE_STATIC = "§5.5.2, Table 5.5, Figs. 5.12-5.14"
WHERE_DYNAMIC = "§5.5.2, Table 5.6, Figs. 5.15-5.17"


def measure(run_dir: Path, rows: pd.DataFrame) -> dict:
    """A fairness run's record: Jain's index (connection against the NewReno flows), both
    sides' goodput, and the connection's detection accuracy and regroupings."""
    out = jain_of_run(rows)
    mp = rows[rows["flow"].astype(str) == "mptcp"]
    for col in ("detection_accuracy", "detection_regroupings"):
        out[col] = float(mp[col].iloc[0]) if col in mp.columns and len(mp) else float("nan")
    return out


def _runs(ctx: Context) -> pd.DataFrame:
    return (ctx.data or {}).get("runs", pd.DataFrame())


def jain_table(ctx: Context, thesis: dict[int, float] | None, caption: str) -> Table:
    """One row per scheme (Jain's index in %, mean ± sd (seeds) per subflow count), the
    thesis's row first."""
    runs = _runs(ctx)
    cols = [m for m in SUBFLOWS if len(runs) and f"m{m}" in set(runs["case"])]
    rows = []
    if thesis is not None:
        rows.append(["thesis (MPTCP-SSCC)", *[f"{thesis[m]:.2f}" for m in cols]])
    for key, label in ctx.labels().items():
        cells = by_case(runs, key, "jain")
        rows.append([label, *[pm([100 * x for x in cells.get(m, [])]) for m in cols]])
    return Table(["scheme", *[f"{m} subflows" for m in cols]], rows, caption)


def goodput_table(ctx: Context) -> Table:
    runs = _runs(ctx)
    cols = [m for m in SUBFLOWS if len(runs) and f"m{m}" in set(runs["case"])]
    rows = []
    for key, label in ctx.labels().items():
        mp, tcp = by_case(runs, key, "mptcp_mbps"), by_case(runs, key, "tcp_mbps")
        rows.append([label, *[f"{fmt(np.mean(mp[m]) if mp.get(m) else None, '.1f')} / "
                              f"{fmt(np.mean(tcp[m]) if tcp.get(m) else None, '.1f')}"
                              for m in cols]])
    return Table(["scheme", *[f"{m} subflows" for m in cols]], rows,
                 "goodput (Mbit/s, mean over seeds) of the MPTCP connection / of a NewReno flow, "
                 "over 120-180 s")


def jain_figure(ctx: Context, thesis: dict[int, float] | None, title: str) -> str:
    runs = _runs(ctx)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for key, label in ctx.labels().items():
        cells = by_case(runs, key, "jain")
        ms = sorted(cells)
        ax.errorbar(ms, [100 * np.mean(cells[m]) for m in ms],
                    yerr=[100 * np.std(cells[m]) for m in ms], marker="o", capsize=2,
                    label=label)
    if thesis is not None:
        ax.plot(list(thesis), list(thesis.values()), "k--", marker="s", label="thesis")
    ax.axhline(100 * JAIN_FLOOR, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("subflows")
    ax.set_ylabel("Jain's index (%)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, ctx.figure("jain"))


def figure_claims(runs: pd.DataFrame, thesis: dict[int, float], where: str,
                  table: str) -> list[Claim]:
    """Per subflow count, the thesis's figure against MPTCP-SSCC's median over seeds; then the
    done-when's floor over every count."""
    claims, floor = [], []
    cells = by_case(runs, SSCC.key, "jain")
    for m in SUBFLOWS:
        if m not in cells:
            continue
        t = thesis[m] / 100
        med = median(cells[m])
        v = judge_range(med, (t - FAIR_BAND, t + FAIR_BAND), (t - FAIR_PARTLY, 1.0))
        claims.append(Claim(
            f"{table}: with {m} subflows MPTCP-SSCC's Jain's index against NewReno is "
            f"{thesis[m]:.2f} %", where,
            f"median {fmt(100 * med if med is not None else None)} % over {len(cells[m])} seeds "
            f"[{fmt(100 * min(cells[m]))}–{fmt(100 * max(cells[m]))}]",
            f"median within ±{100 * FAIR_BAND:g} points of the thesis (holds); up to "
            f"{100 * FAIR_PARTLY:g} points below it, or fairer than it by more than "
            f"{100 * FAIR_BAND:g} (partly); else does not hold", v))
        floor.append((m, med))
    if floor:
        vs = [judge_range(med, (JAIN_FLOOR, 1.0)) for _, med in floor]
        claims.append(Claim(
            f"{table}: MPTCP-SSCC is fair to NewReno at the bottleneck (issue 16's done-when: "
            f"Jain ≥ {JAIN_FLOOR:g})", where,
            "; ".join(f"{m}: {fmt(med, '.3f')}" for m, med in floor),
            f"median over seeds ≥ {JAIN_FLOOR:g} for every subflow count", combine(vs)))
    return claims


def _analyse(ctx: Context, title: str, thesis: dict[int, float], where: str, table: str,
             setup: str) -> Section:
    s, runs = opened_section(ctx, title, [SSCC.key])
    if not len(runs):
        return s
    s.paragraphs.append(setup)
    s.tables.append(jain_table(ctx, thesis, "Jain's index (%) between the MPTCP connection and "
                               "the NewReno flow(s), over 120-180 s: mean ± sd (seeds); the "
                               "thesis ran MPTCP-SSCC only"))
    s.tables.append(goodput_table(ctx))
    s.figures.append((jain_figure(ctx, thesis, title), "Jain's index against the number of "
                      f"subflows, per scheme (mean ± sd over seeds); dashed: the thesis; dotted: "
                      f"the done-when's {JAIN_FLOOR:g}."))
    s.claims += figure_claims(runs, thesis, where, table)
    s.verdict = combine(c.verdict for c in s.claims) if s.claims else NOT_MEASURED
    return s


def analyse_static(ctx: Context) -> Section:
    return _analyse(
        ctx, "Fairness at a static shared bottleneck (Table 5.5)", THESIS_STATIC, WHERE_STATIC,
        "Table 5.5",
        "Setup (thesis §5.5.2, scenarios/sscc/table5-5-static.toml): M = 2..6 subflows, each "
        "through its own 1 Gbit/s access link, and one NewReno flow share the bottleneck R1-R2 "
        "(40 Mbit/s, RTT 40 ms, no loss, DropTail buffer of 2 BDP = 267 packets); the MPTCP "
        "download lasts 180 s, NewReno starts at 20 s; Jain's index over 120-180 s. Seeds differ "
        "by a ±0.5 ms jitter on the ACK links ([GAP]: rove's runs are otherwise repeatable to "
        "the packet).")


def analyse_dynamic(ctx: Context) -> Section:
    return _analyse(
        ctx, "Fairness at a dynamic bottleneck (Table 5.6)", THESIS_DYNAMIC, WHERE_DYNAMIC,
        "Table 5.6",
        "Setup (thesis §5.5.2, scenarios/sscc/table5-6-dynamic-m*.toml): M paths, each with its "
        "own link of 40/M Mbit/s and its own NewReno pair (from 40 s), all through the shared "
        "link LS (50 Mbit/s); 20 Mbit/s of UDP (constant bit rate) enter LS at 20 s, which makes "
        "LS the connection's one shared bottleneck. RTT 40 ms, no loss, 2-BDP buffers (BDP at "
        "40 Mbit/s); Jain's index between the connection and the M NewReno flows over "
        "120-180 s.")


# --------------------------------------------------------------------------------------------
# Ablations (not counted)


def analyse_ablation(ctx: Context, title: str,
                     hypotheses: Sequence[tuple[str, str, str]]) -> Section:
    """The fairness tables of the ablation's series, and each hypothesis (statement, series
    ``lower``, series ``higher``): "``lower`` is less fair than ``higher``", judged over seeds
    at every subflow count."""
    s, runs = opened_section(ctx, title, list(ctx.labels()))
    if not len(runs):
        return s
    s.tables.append(jain_table(ctx, None, "Jain's index (%), mean ± sd (seeds)"))
    s.tables.append(goodput_table(ctx))
    ms = sorted(by_case(runs, SSCC.key, "jain"))
    acc_rows = []
    for key, label in ctx.labels().items():
        acc = by_case(runs, key, "detection_accuracy")
        acc_rows.append([label, *[pm(acc.get(m, []), ".2f") for m in ms]])
    s.tables.append(Table(["scheme", *[f"{m} subflows" for m in ms]], acc_rows,
                          "detection accuracy against the topology's grouping (the link of "
                          "lowest nominal capacity; at the dynamic bottleneck that is each "
                          "path's own link, so 1.0 means never grouped), over 120-180 s"))
    labels = ctx.labels()
    for hypothesis, lower, higher in hypotheses:
        a, b = by_case(runs, lower, "jain"), by_case(runs, higher, "jain")
        verdicts, parts = [], []
        for m in ms:
            v, _ = judge_less(a.get(m, []), b.get(m, []))
            verdicts.append(v)
            parts.append(f"{m}: {fmt(np.mean(a[m]) if a.get(m) else None, '.3f')} < "
                         f"{fmt(np.mean(b[m]) if b.get(m) else None, '.3f')} {v}")
        s.claims.append(Claim(
            hypothesis, "rove's ablation", "; ".join(parts) or "no runs",
            f"Jain's index of {labels.get(lower, lower)} < that of {labels.get(higher, higher)} "
            f"at each subflow count, over seeds (difference beyond the larger s.d.: holds; "
            f"positive: partly)", combine(verdicts) if verdicts else NOT_MEASURED))
    s.verdict = combine(c.verdict for c in s.claims)
    return s
