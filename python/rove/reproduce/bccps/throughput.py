"""Goodput and reordering on disjoint bottlenecks (seed 001 Figs. 12, 13, 14; Q7, Q8, Q9, and the
headline claims H1 (OFO −50 %) and H2 (goodput +30 %) where the paper's settings allow).

Goodput is the MPTCP connection's over the 10-60 s window; the out-of-order queue is the
receiver's reordering buffer, time-averaged over the same window (``ofo_mean_bytes``).
"""

from __future__ import annotations

from ..document import Section
from ..study import Context
from ..verdicts import HOLDS, NOT_MEASURED, Claim, combine, is_number, judge_fraction
from .common import (BALIA_LRF, BCCPS, BLEST_LIA, H1_FACTOR, H2_FACTOR, LIA_LRF, MPBBR_LRF,
                     MPBBR_RR, bar_figure, less_claim, mean, ratio_claim, runs_table,
                     scheme_table, unavailable_notes)

MP = "mptcp"
LOSS = "links.btl1.loss"


def _values(ctx: Context, column: str, key: str) -> dict[str, dict[str, list[float]]]:
    """{series key: {setting (a case, or a grid value as text): [mptcp's column per seed]}}."""
    df = runs_table(ctx)
    out: dict[str, dict[str, list[float]]] = {}
    if not len(df) or column not in df.columns:
        return out
    m = df[df["flow"] == MP]
    for (series, setting), g in m.groupby(["series", key], sort=True):
        label = f"{float(setting):.1%}" if key == LOSS else str(setting)
        out.setdefault(series, {})[label] = [float(x) for x in g[column] if is_number(x)]
    return out


def _settings(values: dict, key: str) -> list[str]:
    out = sorted({s for cells in values.values() for s in cells},
                 key=lambda s: float(s.rstrip("%")) if key == LOSS else s)
    return out


def _rows(ctx: Context, values: dict, settings: list[str], scale: float = 1.0) -> dict:
    labels = ctx.labels()
    return {labels.get(k, k): {s: [x * scale for x in cells.get(s, [])] for s in settings}
            for k, cells in values.items()}


def _every(quote: str, where: str, ctx: Context, values: dict, settings: list[str],
           lower: list[str], higher: list[str], what: str) -> Claim:
    """``lower`` schemes below ``higher`` ones at every setting (judged per setting over seeds;
    holds when it holds at every setting, partly at half of them or more)."""
    labels = ctx.labels()
    verdicts, parts = [], []
    for st in settings:
        c = less_claim(quote, where, {labels.get(k, k): values.get(k, {}).get(st, []) for k in lower},
                       {labels.get(k, k): values.get(k, {}).get(st, []) for k in higher}, what)
        verdicts.append(c.verdict)
        parts.append(f"{st}: {c.verdict}")
    flags = [None if v == NOT_MEASURED else v == HOLDS for v in verdicts]
    verdict, share = judge_fraction(flags, holds_at=1.0, partly_at=0.5)
    return Claim(quote, where, "; ".join(parts) + (f" ({share:.0%} of settings)" if share is not None else ""),
                 f"{what} judged per setting over seeds (each pair, the larger s.d. as margin); "
                 f"holds at every setting, partly at half of them or more", verdict)


def _against(ctx: Context, values: dict, settings: list[str], others) -> dict:
    """{"SETTING vs SCHEME": (BCCPS's values, the scheme's)} for every setting and every scheme
    of ``others`` that ran: the pairs of an H1 or H2 claim."""
    labels = ctx.labels()
    return {f"{st} vs {labels.get(k.key, k.key)}": (values.get(BCCPS.key, {}).get(st, []),
                                                    values[k.key].get(st, []))
            for st in settings for k in others if k.key in values}


def _h1(ctx: Context, ofo: dict, settings: list[str], others, quote: str):
    return ratio_claim(quote, "Abstract; contribution 3", _against(ctx, ofo, settings, others),
                       H1_FACTOR, "mean OFO queue, BCCPS over the other", False)


def _h2(ctx: Context, values: dict, settings: list[str], where: str, which: str, others=None,
        quote: str | None = None) -> tuple[Claim, object]:
    others = others or (LIA_LRF, BALIA_LRF, MPBBR_RR, MPBBR_LRF)
    quote = quote or f"(H2) increase the goodput by >30% than the comparison schemes ({which})"
    return ratio_claim(quote, where, _against(ctx, values, settings, others), H2_FACTOR,
                       "goodput, BCCPS over the other", True)


def analyse_loss(ctx: Context) -> Section:
    s = Section("Goodput against random loss on disjoint bottlenecks (Fig. 12)")
    s.notes += unavailable_notes(ctx)
    gp = _values(ctx, "goodput_mbps", LOSS)
    if not gp:
        s.paragraphs.append("No run completed.")
        return s
    settings = _settings(gp, LOSS)
    s.paragraphs.append(
        "Setup (Fig. 7(b)): disjoint 10 Mbit/s bottlenecks, RTT 20/20 ms, subflow 0 at 0.1 % "
        "loss and subflow 1's loss as the column says; one TCP-BBR flow at each bottleneck. "
        "Goodput of the MPTCP connection over 10-60 s. LIA and BALIA (with LRF) are added for "
        "H2, whose \"comparison schemes\" include them.")
    rows = _rows(ctx, gp, settings)
    s.tables.append(scheme_table(rows, settings, "goodput, Mbit/s (mean ± sd (seeds)) by "
                                 "subflow 1's loss", ".2f"))
    s.figures.append((bar_figure(ctx, "goodput", rows, settings, "goodput (Mbit/s)",
                                 "Goodput against subflow 1's loss"),
                      "Goodput of the MPTCP connection per scheme and loss rate."))
    where = "§IV-A3, Fig. 12"
    s.claims.append(_every("BCCPS has the best goodput at every loss rate (0.1-5 %)", where, ctx,
                           gp, settings, [MPBBR_RR.key, MPBBR_LRF.key], [BCCPS.key],
                           "goodput (RR and LRF below BCCPS)"))
    # "RR ≈ LRF (equal RTTs)": the two means within 10 % of each other at every loss rate
    flags, parts = [], []
    for st in settings:
        a, b = mean(gp.get(MPBBR_RR.key, {}).get(st, [])), mean(gp.get(MPBBR_LRF.key, {}).get(st, []))
        ok = None if not (is_number(a) and is_number(b) and max(a, b) > 0) else \
            abs(a - b) / max(a, b) <= 0.10
        flags.append(ok)
        parts.append(f"{st}: {a:.2f} vs {b:.2f}" if ok is not None else f"{st}: –")
    verdict, share = judge_fraction(flags, holds_at=1.0, partly_at=0.5)
    s.claims.append(Claim("RR ≈ LRF (equal RTTs)", where, "; ".join(parts),
                          "RR's and LRF's mean goodputs within 10 % of the larger at every loss "
                          "rate (holds), at half of them or more (partly)", verdict))
    lossy = [st for st in settings if float(st.rstrip("%")) >= 0.5]
    c, t = _h2(ctx, gp, lossy, "Abstract; the summary's H2 setting: non-shared, loss ≥ 0.5 %",
               "lossy disjoint paths")
    s.claims.append(c)
    s.tables.append(t)
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def analyse_delay(ctx: Context) -> Section:
    s = Section("Goodput against subflow 1's delay on disjoint bottlenecks (Fig. 13)")
    s.notes += unavailable_notes(ctx)
    gp = _values(ctx, "goodput_mbps", "case")
    if not gp:
        s.paragraphs.append("No run completed.")
        return s
    settings = sorted({st for cells in gp.values() for st in cells}, key=lambda c: int(c[1:]))
    s.paragraphs.append(
        "Setup (Fig. 7(b)): disjoint 10 Mbit/s bottlenecks with 0.1 % loss; subflow 0 at RTT "
        "20 ms, subflow 1's one-way delay 10-50 ms (case dN: N ms, RTT 2N ms; its buffer kept "
        "at 1 BDP). Goodput of the MPTCP connection over 10-60 s.")
    rows = _rows(ctx, gp, settings)
    s.tables.append(scheme_table(rows, settings, "goodput, Mbit/s (mean ± sd (seeds)) by "
                                 "subflow 1's one-way delay", ".2f"))
    s.figures.append((bar_figure(ctx, "goodput", rows, settings, "goodput (Mbit/s)",
                                 "Goodput against subflow 1's delay"),
                      "Goodput of the MPTCP connection per scheme and delay."))
    where = "§IV-A3, Fig. 13"
    first, last = settings[0], settings[-1]
    labels = ctx.labels()
    falls = [less_claim("", "", {labels.get(k, k): gp[k].get(last, [])},
                        {labels.get(k, k): gp[k].get(first, [])}, "goodput")
             for k in (BCCPS.key, MPBBR_RR.key, MPBBR_LRF.key) if k in gp]
    s.claims.append(Claim("Goodput falls as the delay grows", where,
                          "; ".join(f.measured for f in falls) or "no runs",
                          f"each scheme's goodput at {last} below its goodput at {first}, judged "
                          f"over seeds", combine(f.verdict for f in falls) if falls else NOT_MEASURED))

    def gap(st):
        b = mean(gp.get(BCCPS.key, {}).get(st, []))
        o = [mean(gp.get(k, {}).get(st, [])) for k in (MPBBR_RR.key, MPBBR_LRF.key)]
        o = [x for x in o if is_number(x)]
        return b - max(o) if is_number(b) and o else None

    g0, g1 = gap(first), gap(last)
    verdict = NOT_MEASURED if g0 is None or g1 is None else (HOLDS if g1 > g0 else "does not hold")
    s.claims.append(Claim("BCCPS's advantage grows with asymmetry (the gap BCCPS − {RR, LRF} "
                          "widens)", where,
                          f"gap to the better of RR and LRF: {first} {g0:.2f}, {last} {g1:.2f} "
                          "Mbit/s" if g0 is not None and g1 is not None else "no runs",
                          f"BCCPS's mean goodput minus the better of RR's and LRF's larger at "
                          f"{last} than at {first}", verdict))
    asym = [st for st in settings if int(st[1:]) >= 30]    # the summary's H2 setting: Subflow1 ≥ 30 ms
    c, t = _h2(ctx, gp, asym, "Abstract; the summary's H2 setting: non-shared, subflow 1 delay ≥ "
               "30 ms", "asymmetric disjoint paths")
    s.claims.append(c)
    s.tables.append(t)
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def analyse_ofo(ctx: Context) -> Section:
    s = Section("Out-of-order queue on disjoint bottlenecks (Fig. 14)")
    s.notes += unavailable_notes(ctx)
    ofo = _values(ctx, "ofo_mean_bytes", "case")
    gp = _values(ctx, "goodput_mbps", "case")
    if not ofo:
        s.paragraphs.append("No run completed.")
        return s
    settings = sorted({st for cells in ofo.values() for st in cells})
    s.paragraphs.append(
        "Setup (Fig. 7(b)): disjoint 10 Mbit/s bottlenecks; case equal: RTT 20/20 ms, 0.1 % "
        "loss each; case hetero ([GAP] the paper does not say which of its settings Fig. 14 "
        "used): subflow 1 at RTT 80 ms and 0.5 % loss. The receiver's out-of-order queue, "
        "time-averaged over 10-60 s, in packets of 1500 B. BLEST runs on LIA: \"BLEST cannot "
        "be applied to MPTCP-BBR\" (so its row differs in congestion control as well).")
    rows = _rows(ctx, ofo, settings, 1 / 1500)
    s.tables.append(scheme_table(rows, settings, "mean OFO queue, packets (mean ± sd (seeds))",
                                 ".1f"))
    s.tables.append(scheme_table(_rows(ctx, gp, settings), settings,
                                 "goodput, Mbit/s (mean ± sd)", ".2f"))
    s.figures.append((bar_figure(ctx, "ofo", rows, settings, "mean OFO queue (packets)",
                                 "Out-of-order queue"), "Mean OFO queue per scheme and case."))
    where = "§IV-A3, Fig. 14"
    st = "hetero" if "hetero" in settings else settings[-1]
    labels = ctx.labels()

    def v(k):
        return ofo.get(k.key, {}).get(st, [])

    s.claims.append(less_claim(f"BCCPS has the lowest OFO queue, below BLEST (case {st})", where,
                               {labels.get(BCCPS.key, "BCCPS"): v(BCCPS)},
                               {labels.get(BLEST_LIA.key, "BLEST"): v(BLEST_LIA)}, "mean OFO queue"))
    s.claims.append(less_claim(f"BLEST is lower than RR and LRF, which have the most OFO (case {st})",
                               where, {labels.get(BLEST_LIA.key, "BLEST"): v(BLEST_LIA)},
                               {labels.get(k.key, k.key): v(k) for k in (MPBBR_RR, MPBBR_LRF)},
                               "mean OFO queue"))
    c, t = _h1(ctx, ofo, settings, (MPBBR_RR, MPBBR_LRF, BLEST_LIA),
               "(H1) reduce the out-of-order packets in the receiver's buffer by >50% (the "
               "comparison schemes RR, LRF, BLEST)")
    s.claims.append(c)
    s.tables.append(t)
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def analyse_window_limited(ctx: Context) -> Section:
    """rove's check (not counted): H1 and H2 where the connection's receive window binds."""
    s = Section("H1 and H2 with a receive window of 2 × Σ BDP (rove's check)")
    s.notes += unavailable_notes(ctx)
    ofo = _values(ctx, "ofo_mean_bytes", "case")
    gp = _values(ctx, "goodput_mbps", "case")
    if not ofo:
        s.paragraphs.append("No run completed.")
        return s
    settings = sorted({st for cells in ofo.values() for st in cells})
    s.paragraphs.append(
        "The paper does not give its receive buffer; the counted experiments use rove's "
        "default window (6 MB), which never binds, so a scheduler cannot change a bulk "
        "transfer's goodput there. Here the connection-level window is 2 × the sum of the "
        "paths' BDPs (the summary's \"2-path-BDP-sized buffer to expose HoL\"): an "
        "out-of-order queue now holds the sender back, which is where BCCPS's in-order "
        "arrivals could turn into goodput (H2) as well as a smaller queue (H1). Cases: "
        "disjoint equal paths (100 KB), disjoint heterogeneous paths (RTT 20/80 ms, 0.1/0.5 % "
        "loss; 250 KB), Table II's WiFi + LTE (515 KB).")
    s.tables.append(scheme_table(_rows(ctx, gp, settings), settings,
                                 "goodput, Mbit/s (mean ± sd (seeds))", ".2f"))
    s.tables.append(scheme_table(_rows(ctx, ofo, settings, 1 / 1500), settings,
                                 "mean OFO queue, packets (mean ± sd)", ".1f"))
    others = (MPBBR_RR, MPBBR_LRF, LIA_LRF)
    for c, t in (_h1(ctx, ofo, settings, others, "(rove, H1 with a binding window) BCCPS's OFO "
                     "queue at most half the other schemes'"),
                 _h2(ctx, gp, settings, "Abstract; contribution 3", "", others,
                     "(rove, H2 with a binding window) BCCPS's goodput at least 1.3 times the "
                     "other schemes'")):
        s.claims.append(c)
        s.tables.append(t)
    s.verdict = combine(c.verdict for c in s.claims)
    return s
