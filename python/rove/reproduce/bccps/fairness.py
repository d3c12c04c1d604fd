"""Bottleneck fairness and shared-bottleneck detection (seed 001 Figs. 8 and 9; Q1, Q2, Q3, H3).

* ``fairness-shared``: the MPTCP connection's goodput over the competing single-path BBR
  flow's at the one shared bottleneck (Fig. 8(b));
* ``fairness-disjoint``: its goodput over BBR0 + BBR1's on disjoint bottlenecks (Fig. 9(b));
* ``detection``: the accuracy of the connection's shared-bottleneck detector against the true
  grouping, the paper's S1 + S2 against DWC (Figs. 8(a), 9(a)).
"""

from __future__ import annotations

from ..document import Section
from ..study import Context
from ..verdicts import combine
from .common import (BALIA_LRF, FAIR_BAND, LIA_LRF, MPBBR_LRF, band_claim, bar_figure,
                     less_claim, runs_table, scheme_table, unavailable_claim,
                     unavailable_notes)

MP = "mptcp"


def _ratios(ctx: Context, baseline: tuple[str, ...]) -> dict[str, dict[str, list[float]]]:
    """{series label: {case: [goodput(mptcp) / Σ goodput(baseline), per seed]}}."""
    df = runs_table(ctx)
    out: dict[str, dict[str, list[float]]] = {}
    if not len(df):
        return out
    labels = ctx.labels()
    for (series, case, seed), g in df.groupby(["series", "case", "seed"], sort=True):
        gp = dict(zip(g["flow"], g["goodput_mbps"]))
        base = sum(float(gp.get(b, float("nan"))) for b in baseline)
        mp = float(gp.get(MP, float("nan")))
        r = mp / base if base > 0 else float("nan")
        out.setdefault(labels.get(series, series), {}).setdefault(case, []).append(r)
    return out


def _fairness(ctx: Context, title: str, baseline: tuple[str, ...], base_text: str,
              where: str, quote_close: str, quote_beats: str, setup: str) -> Section:
    s = Section(title)
    s.notes += unavailable_notes(ctx)
    ratios = _ratios(ctx, baseline)
    if not ratios:
        s.paragraphs.append("No run completed.")
        return s
    cases = sorted({c for cells in ratios.values() for c in cells})
    s.paragraphs.append(setup)
    s.tables.append(scheme_table(ratios, cases, f"goodput of the MPTCP connection over "
                                 f"{base_text} (mean ± sd (seeds)), measured over 10-60 s",
                                 ".3f"))
    s.figures.append((bar_figure(ctx, "ratio", ratios, cases, f"goodput / {base_text}", title,
                                 hline=1.0), f"Goodput ratio per scheme and case; the dashed "
                                 f"line is the single-path baseline. Band {FAIR_BAND}."))
    mp = ratios.get(MPBBR_LRF.label, {})
    c1 = unavailable_claim(quote_close, where, ctx, [MPBBR_LRF.key]) or band_claim(
        quote_close, where, {f"case {c}": v for c, v in mp.items()})
    s.claims.append(c1)
    others = {k.label: ratios.get(k.label, {}) for k in (LIA_LRF, BALIA_LRF)}
    verdicts = []
    for case in cases:
        c = less_claim(quote_beats, where, {lab: cells.get(case, []) for lab, cells in
                                            others.items()}, {MPBBR_LRF.label: mp.get(case, [])},
                       "goodput ratio")
        c.measured = f"case {case}: {c.measured}"
        verdicts.append(c)
    beats = unavailable_claim(quote_beats, where, ctx, [LIA_LRF.key, BALIA_LRF.key,
                                                        MPBBR_LRF.key])
    if beats is None:
        beats = verdicts[0]
        beats.measured = " | ".join(v.measured for v in verdicts)
        beats.verdict = combine(v.verdict for v in verdicts)
        beats.criterion += "; every case"
    s.claims.append(beats)
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def analyse_shared(ctx: Context) -> Section:
    return _fairness(
        ctx, "Fairness at a shared bottleneck (Fig. 8(b))", ("bbr",), "the single-path BBR flow",
        "§IV-A1, Fig. 8(b)",
        "MPTCP-BBR ... is close to single-path TCP-BBR (bottleneck fairness: the subflows "
        "sharing a bottleneck together take what one TCP-BBR flow takes there)",
        "MPTCP-BBR clearly beats LIA and BALIA, also when Subflow1's RTT grows",
        "Setup (seed-001 Fig. 7(a), Table I): one MPTCP connection of two subflows and one "
        "single-path TCP-BBR flow share a 10 Mbit/s bottleneck with 0.1 % random loss and a "
        "1-BDP DropTail buffer; subflow 1's access delay equal to subflow 0's (case d10: RTT "
        "40/40 ms) or 10 ms longer (d20: 40/60 ms); scheduler LRF (minRTT). MPTCP-BBR runs "
        "its own shared-bottleneck detection (S1 + S2), which couples the subflows once it "
        "has found the shared set; LIA and BALIA couple over the whole connection.")


def analyse_disjoint(ctx: Context) -> Section:
    return _fairness(
        ctx, "Fairness on disjoint bottlenecks (Fig. 9(b))", ("bbr0", "bbr1"),
        "BBR0 + BBR1", "§IV-A1, Fig. 9(b)",
        "MPTCP-BBR ... comes close to BBR0 + BBR1 (each subflow takes what the TCP-BBR flow "
        "at its bottleneck takes)",
        "MPTCP-BBR beats LIA and BALIA on disjoint bottlenecks",
        "Setup (seed-001 Fig. 7(b), Table I): the connection's two subflows cross two "
        "10 Mbit/s bottlenecks (RTT 20 ms, 0.1 % loss, 1-BDP buffers); at each a single-path "
        "TCP-BBR flow competes (BBR0, BBR1); scheduler LRF.")


# --------------------------------------------------------------------------------------------
# Detection accuracy


def analyse_detection(ctx: Context) -> Section:
    s = Section("Shared-bottleneck detection accuracy (Figs. 8(a), 9(a))")
    s.notes += unavailable_notes(ctx)
    df = runs_table(ctx)
    quote = ("MPTCP-BBR's detection accuracy is higher than DWC's (shared bottleneck, equal and "
             "different delays; disjoint bottlenecks with dynamic background: \"more difficult "
             "... but our solution is still better than DWC\")")
    where = "§IV-A1, Figs. 8(a), 9(a)"
    if not len(df) or "detection_accuracy" not in df.columns:
        s.paragraphs.append("No run completed" + ("" if not len(df) else
                            " with a detector's accuracy in its summary") + ".")
        return s
    m = df[df["flow"] == MP]
    labels = ctx.labels()
    acc: dict[str, dict[str, list[float]]] = {}
    regroup: dict[str, dict[str, list[float]]] = {}
    for (series, case), g in m.groupby(["series", "case"], sort=True):
        acc.setdefault(labels.get(series, series), {})[case] = list(g["detection_accuracy"])
        if "detection_regroupings" in g.columns:
            regroup.setdefault(labels.get(series, series), {})[case] = \
                list(g["detection_regroupings"])
    cases = sorted({c for cells in acc.values() for c in cells})
    s.paragraphs.append(
        "Setup: the MPTCP-BBR connection (LRF) with the paper's detector (S1: RTT rises that "
        "coincide during ProbeBW's 1.25 probes; S2: coincident ProbeRTT episodes confirm a set) "
        "or DWC (loss and delay signals that coincide within one srtt), which regroups its "
        "coupling at run time. Accuracy: the fraction of 100-ms samples at which the "
        "detector's grouping equals the topology's (shared: one set of both subflows; "
        "disjoint: each alone), over the whole 60-s run ([GAP] the paper does not define it). "
        "Cases: shared-d10 and shared-d20 (Fig. 8(a)), disjoint-dynamic (Fig. 9(a): BBR0 and "
        "BBR1 as on/off TCP sources).")
    s.tables.append(scheme_table(acc, cases, "detection accuracy (mean ± sd (seeds))", ".3f"))
    if regroup:
        s.tables.append(scheme_table(regroup, cases, "regroupings per run (mean ± sd)", ".1f"))
    s.figures.append((bar_figure(ctx, "accuracy", acc, cases, "detection accuracy",
                                 "Shared-bottleneck detection"), "Accuracy per detector and case."))
    keys = [k for k in labels if k in ("s1s2", "dwc")]
    if len(keys) < 2:
        claim = unavailable_claim(quote, where, ctx, ["s1s2", "dwc"])
        if claim is not None:
            s.claims.append(claim)
            s.verdict = claim.verdict
        return s
    ours, dwc = labels["s1s2"], labels["dwc"]
    parts = [less_claim(quote, where, {dwc: acc[dwc].get(c, [])}, {ours: acc[ours].get(c, [])},
                        "accuracy") for c in cases]
    claim = parts[0]
    claim.measured = " | ".join(f"{c}: {p.measured}" for c, p in zip(cases, parts))
    claim.verdict = combine(p.verdict for p in parts)
    claim.criterion += "; in every case"
    s.claims.append(claim)
    s.verdict = claim.verdict
    return s
