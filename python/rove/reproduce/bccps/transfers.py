"""Finite transfers (seed 001 Figs. 10, 11, 16, 17; Q4, Q5, Q6, Q10, Q11 and H1/H2 on WiFi +
LTE): download times of files and pages, normalised to the best single-path TCP-BBR where the
paper does, and the receiver's out-of-order queue.

A download's time is the flow's ``fct_s``: from its start (the SYN) to the sender's
acknowledgement of its last byte (the last DATA_ACK of a multipath connection), the same
definition for single-path and multipath flows.
"""

from __future__ import annotations

import numpy as np

from ..document import Section, Table, fmt
from ..measures import size_bytes
from ..study import Context
from ..verdicts import HOLDS, NOT_MEASURED, Claim, combine, is_number, judge_fraction
from .common import (BCCPS, H1_FACTOR, H2_FACTOR, LIA_LRF, MPBBR_LRF, MPBBR_RR, bar_figure,
                     less_claim, mean, pm, pyplot, ratio_claim, runs_table, save_figure,
                     scheme_table, unavailable_notes)

MP = "mptcp"
SIZE = "flows.0.size"
SMALL_BYTES = 100_000            # the paper's mouse-flow threshold ("≤ 100 KB")


def _per_seed(ctx: Context, column: str, keys=("case",)) -> dict:
    """{series key: {key tuple: [value of flow mptcp per seed]}}; a part without cases is its
    own case (the WiFi + LTE experiment's "bulk")."""
    df = runs_table(ctx)
    if len(df) and "part" in df.columns:
        plain = df["case"] == "default"
        df.loc[plain, "case"] = df.loc[plain, "part"]
    out: dict = {}
    if not len(df) or column not in df.columns:
        return out
    m = df[df["flow"] == MP]
    for k, g in m.groupby(["series", *keys], sort=True):
        out.setdefault(k[0], {})[tuple(k[1:])] = [float(x) for x in g[column] if is_number(x)]
    return out


def _size_label(text) -> str:
    return str(text)


# --------------------------------------------------------------------------------------------
# Fig. 10: download time against file size at the shared bottleneck


def analyse_file_size(ctx: Context) -> Section:
    s = Section("Download time against file size at the shared bottleneck (Fig. 10)")
    s.notes += unavailable_notes(ctx)
    fct = _per_seed(ctx, "fct_s", ("case", SIZE))
    if not fct:
        s.paragraphs.append("No run completed.")
        return s
    s.paragraphs.append(
        "Setup (Fig. 7(a)): one file over the MPTCP connection while the single-path TCP-BBR "
        "background flow runs (alone for the first 5 s); case d10: RTT 40/40 ms, d20: 40/60 ms; "
        "0.1 % loss, 1-BDP buffer. Each download time is divided by the best single-path "
        "TCP-BBR's mean (the same file over path 0 or path 1 alone, the same background: the "
        "paper's \"theoretical performance value\").")
    labels = ctx.labels()
    cases = sorted({k[0] for cells in fct.values() for k in cells})
    sizes = sorted({k[1] for cells in fct.values() for k in cells}, key=size_bytes)
    norm: dict[str, dict[tuple, list[float]]] = {}
    best: dict[tuple, float] = {}
    for key in {(c, z) for c in cases for z in sizes}:
        sp = [mean(fct.get(k, {}).get(key, [])) for k in ("sp0", "sp1")]
        sp = [x for x in sp if is_number(x)]
        if sp:
            best[key] = min(sp)
    for series, cells in fct.items():
        for key, xs in cells.items():
            if key in best:
                norm.setdefault(series, {})[key] = [x / best[key] for x in xs]
    # the best single-path's own values, normalised (1.0 on average by construction)
    for key, b in best.items():
        which = min(("sp0", "sp1"), key=lambda k: mean(fct.get(k, {}).get(key, [])) or np.inf)
        norm.setdefault("sp-best", {})[key] = [x / b for x in fct.get(which, {}).get(key, [])]
    names = {**labels, "sp-best": "best single-path BBR"}
    for case in cases:
        rows = {names.get(k, k): {_size_label(z): norm[k].get((case, z), []) for z in sizes}
                for k in [*labels, "sp-best"] if k in norm and k not in ("sp0", "sp1")}
        s.tables.append(scheme_table(rows, [_size_label(z) for z in sizes],
                                     f"case {case}: download time over the best single-path "
                                     f"TCP-BBR's (mean ± sd (seeds))", ".2f"))
        s.figures.append((bar_figure(ctx, f"size-{case}", rows, [_size_label(z) for z in sizes],
                                     "normalised download time", f"File sizes, case {case}",
                                     hline=1.0),
                          f"Case {case}: normalised download time per file size."))
    raw = {names.get(k, k): {f"{c} {z}": v for (c, z), v in cells.items()}
           for k, cells in fct.items()}
    s.tables.append(scheme_table(raw, [f"{c} {z}" for c in cases for z in sizes],
                                 "download time, s (mean ± sd (seeds))", ".3g"))

    def vals(series, case, pred):
        return {z: norm.get(series, {}).get((case, z), []) for z in sizes if pred(size_bytes(z))}

    small = lambda b: b <= SMALL_BYTES      # noqa: E731
    large = lambda b: b > SMALL_BYTES       # noqa: E731
    where = "§IV-A2, Fig. 10(a)"

    def per_size_claim(quote, where, case, pred, lower_keys, higher_keys, what):
        verdicts, parts = [], []
        for z in [z for z in sizes if pred(size_bytes(z))]:
            c = less_claim(quote, where,
                           {names.get(k, k): norm.get(k, {}).get((case, z), []) for k in lower_keys},
                           {names.get(k, k): norm.get(k, {}).get((case, z), []) for k in higher_keys},
                           what)
            verdicts.append(c.verdict)
            parts.append(f"{z}: {c.verdict}")
        flags = [v == HOLDS if v != NOT_MEASURED else None for v in verdicts]
        verdict, share = judge_fraction(flags, holds_at=1.0, partly_at=0.5)
        return Claim(quote, where, f"case {case}: " + "; ".join(parts) + (
            f" (holds at {share:.0%} of sizes)" if share is not None else ""),
            f"{what} at each size judged over seeds (the larger s.d. as margin, every pair); "
            f"holds when it holds at every size, partly at half of them or more", verdict)

    if "d10" in cases:
        s.claims.append(per_size_claim(
            "Below 100 KB, single-path TCP-BBR beats RR and LRF (loss hurts mouse flows)", where,
            "d10", small, ["sp-best"], [MPBBR_RR.key, MPBBR_LRF.key], "normalised download time"))
        s.claims.append(per_size_claim(
            "... while BCCPS avoids this through redundancy (BCCPS below single-path TCP-BBR "
            "for files of 100 KB or less)", where, "d10", small, [BCCPS.key], ["sp-best"],
            "normalised download time"))
        s.claims.append(per_size_claim(
            "Above 100 KB ... BCCPS is best (below RR and LRF)", where, "d10", large,
            [BCCPS.key], [MPBBR_RR.key, MPBBR_LRF.key], "normalised download time"))
    if "d20" in cases:
        s.claims.append(per_size_claim(
            "BCCPS is the best regardless of file size (RTT0 = 10 ms, RTT1 = 20 ms)",
            "§IV-A2, Fig. 10(b)", "d20", lambda b: True, [BCCPS.key],
            [MPBBR_RR.key, MPBBR_LRF.key, "sp-best"], "normalised download time"))
    s.verdict = combine(c.verdict for c in s.claims)
    return s


# --------------------------------------------------------------------------------------------
# Fig. 11: 100 KB downloads against dynamic background


def analyse_mouse(ctx: Context) -> Section:
    s = Section("100 KB downloads on disjoint lossy bottlenecks (Fig. 11)")
    s.notes += unavailable_notes(ctx)
    fct = _per_seed(ctx, "fct_s", ())
    if not fct:
        s.paragraphs.append("No run completed.")
        return s
    labels = ctx.labels()
    s.paragraphs.append(
        "Setup (Fig. 7(b)): a 100 KB download starting at 5 s on disjoint 10 Mbit/s "
        "bottlenecks (RTT 20 ms) with 0.1 % (subflow 0) and 0.5 % (subflow 1) random loss, "
        "against dynamic background ([GAP] BBR0 and BBR1 as on/off TCP sources: 3 MB "
        "responses, exponential think times of mean 5 s); one download per seed. The "
        "paper's caption says \"CDF of end-to-end RTT\" where its text discusses the 100 KB "
        "completion time: the completion time is what is judged, its CDF is drawn.")
    vals = {k: cells.get((), []) for k, cells in fct.items()}
    s.tables.append(Table(["scheme", "completion time, s (mean ± sd (seeds))", "median", "p90"],
                          [[labels.get(k, k), pm(v, ".3f"),
                            fmt(np.median(v) if v else None, ".3f"),
                            fmt(np.percentile(v, 90) if v else None, ".3f")]
                           for k, v in vals.items()]))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for k, v in vals.items():
        if v:
            xs = np.sort(v)
            ax.step(xs, np.arange(1, len(xs) + 1) / len(xs), where="post", label=labels.get(k, k))
    ax.set_xlabel("100 KB completion time (s)")
    ax.set_ylabel("CDF")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    s.figures.append((save_figure(fig, ctx.figure("cdf")), "CDF of the 100 KB completion time."))
    s.claims.append(less_claim(
        "BCCPS beats RR and LRF because redundancy avoids retransmission (100 KB completion time)",
        "§IV-A2, Fig. 11", {labels.get(BCCPS.key, BCCPS.key): vals.get(BCCPS.key, [])},
        {labels.get(k.key, k.key): vals.get(k.key, []) for k in (MPBBR_RR, MPBBR_LRF)},
        "completion time"))
    s.verdict = combine(c.verdict for c in s.claims)
    return s


# --------------------------------------------------------------------------------------------
# Table II: WiFi + LTE, a 100 MB file and web pages (Figs. 16, 17)


LEGACY = LIA_LRF        # "traditional MPTCP": [GAP] LIA + the default (LRF) scheduler


def analyse_wifi_lte(ctx: Context) -> Section:
    s = Section("WiFi + LTE: a 100 MB file and web pages (Table II, Figs. 16-17)")
    s.notes += unavailable_notes(ctx)
    fct = _per_seed(ctx, "fct_s")
    ofo = _per_seed(ctx, "ofo_mean_bytes")
    if not fct:
        s.paragraphs.append("No run completed.")
        return s
    labels = ctx.labels()
    s.paragraphs.append(
        "Setup (Table II, emulated; the paper measured a phone behind a SOCKS proxy): WiFi "
        "11 Mbit/s, RTT 40 ms, 0.75 % loss; LTE 18 Mbit/s, RTT 90 ms, 0.1 % loss ([GAP] the "
        "middle of each of Table II's ranges; 1-BDP buffers). Schemes: \"traditional MPTCP\" "
        "([GAP] LIA + LRF: the paper does not name its congestion control), MPTCP-BBR + LRF, "
        "BCCPS. Cases: bulk (the 100 MB file) and three web pages loaded on a new connection "
        "each ([GAP] a page as one download of its total bytes: Wikipedia 300 KB, Amazon "
        "1.5 MB, Instagram 3 MB).")
    cases = sorted({k[0] for cells in fct.values() for k in cells},
                   key=lambda c: (c != "bulk", c))
    order = [k for k in (LEGACY.key, MPBBR_LRF.key, BCCPS.key) if k in fct] + \
        [k for k in fct if k not in (LEGACY.key, MPBBR_LRF.key, BCCPS.key)]
    rows_t = {labels.get(k, k): {c: fct[k].get((c,), []) for c in cases} for k in order}
    rows_o = {labels.get(k, k): {c: [x / 1500 for x in ofo.get(k, {}).get((c,), [])]
                                 for c in cases} for k in order}
    s.tables.append(scheme_table(rows_t, cases, "download time, s (mean ± sd (seeds))", ".3g"))
    s.tables.append(scheme_table(rows_o, cases, "time-averaged out-of-order queue at the "
                                 "receiver, packets of 1500 B (mean ± sd)", ".1f"))
    s.figures.append((bar_figure(ctx, "time", rows_t, cases, "download time (s)",
                                 "WiFi + LTE download time", log=True),
                      "Download time per scheme and case (log scale)."))
    s.figures.append((bar_figure(ctx, "ofo", rows_o, cases, "mean OFO queue (packets)",
                                 "WiFi + LTE out-of-order queue"),
                      "Time-averaged out-of-order queue per scheme and case."))

    def lab(series):
        return labels.get(series.key, series.key)

    def v(table, series, case):
        return table.get(series.key, {}).get((case,), [])

    where = "§IV-B, Fig. 16"
    if "bulk" in cases:
        c1 = less_claim("100 MB download: BCCPS is faster than MPTCP-BBR (LRF)", where,
                        {lab(BCCPS): v(fct, BCCPS, "bulk")}, {lab(MPBBR_LRF): v(fct, MPBBR_LRF, "bulk")},
                        "download time")
        c2 = less_claim("100 MB download: MPTCP-BBR is faster than traditional MPTCP", where,
                        {lab(MPBBR_LRF): v(fct, MPBBR_LRF, "bulk")}, {lab(LEGACY): v(fct, LEGACY, "bulk")},
                        "download time")
        c3 = less_claim("BCCPS reduces the average MPTCP OFO queue compared with both; MPTCP-BBR "
                        "has a larger OFO queue than traditional MPTCP", where,
                        {lab(BCCPS): v(ofo, BCCPS, "bulk")},
                        {lab(LEGACY): v(ofo, LEGACY, "bulk"), lab(MPBBR_LRF): v(ofo, MPBBR_LRF, "bulk")},
                        "mean OFO queue")
        c4 = less_claim("(OFO) traditional MPTCP < MPTCP-BBR", where,
                        {lab(LEGACY): v(ofo, LEGACY, "bulk")}, {lab(MPBBR_LRF): v(ofo, MPBBR_LRF, "bulk")},
                        "mean OFO queue")
        s.claims += [c1, c2, c3, c4]
    web = [c for c in cases if c.startswith("web")]
    if web:
        verdicts, parts = [], []
        for c in web:
            cl = less_claim("", "", {lab(BCCPS): v(fct, BCCPS, c)},
                            {lab(MPBBR_LRF): v(fct, MPBBR_LRF, c), lab(LEGACY): v(fct, LEGACY, c)},
                            "page download time")
            verdicts.append(cl.verdict)
            parts.append(f"{c}: {cl.verdict}")
        s.claims.append(Claim("Web pages: BCCPS has the shortest download time", "§IV-B, Fig. 17(a)",
                              "; ".join(parts), "page download time below MPTCP-BBR's and "
                              "traditional MPTCP's, judged over seeds, for every page",
                              combine(verdicts)))
        gains = {}
        for c in web:
            a, b = mean(v(fct, BCCPS, c)), mean(v(fct, LEGACY, c))
            gains[c] = 1 - a / b if is_number(a) and is_number(b) and b > 0 else None
        big, small_page = "web-instagram", "web-wikipedia"
        if is_number(gains.get(big)) and is_number(gains.get(small_page)):
            ok = gains[big] > gains[small_page]
            verdict = HOLDS if ok else "does not hold"
        else:
            verdict = NOT_MEASURED
        s.claims.append(Claim(
            "... with a larger advantage for larger pages (Instagram)", "§IV-B, Fig. 17(a)",
            "; ".join(f"{c}: {fmt(g, '.1%')}" for c, g in gains.items()),
            "BCCPS's relative gain over traditional MPTCP (1 − mean time ratio) larger for "
            "Instagram (3 MB) than for Wikipedia (300 KB)", verdict))
    s.verdict = combine(c.verdict for c in s.claims)
    # H1 and H2 on the real-network case
    h = []
    if "bulk" in cases:
        c, t = ratio_claim("(H1) reduce the out-of-order packets in the receiver's buffer by "
                           ">50% (WiFi + LTE, 100 MB)", "Abstract; contribution 3",
                           {f"bulk vs {lab(k)}": (v(ofo, BCCPS, "bulk"), v(ofo, k, "bulk"))
                            for k in (MPBBR_LRF, LEGACY)},
                           H1_FACTOR, "mean OFO queue, BCCPS over the other", False)
        h.append((c, t))
        gp = _per_seed(ctx, "goodput_mbps")
        c, t = ratio_claim("(H2) increase the goodput by >30% (WiFi + LTE, 100 MB)",
                           "Abstract; contribution 3",
                           {f"bulk vs {lab(k)}": (v(gp, BCCPS, "bulk"), v(gp, k, "bulk"))
                            for k in (MPBBR_LRF, LEGACY)},
                           H2_FACTOR, "goodput (the file's bytes over its transfer time), BCCPS "
                           "over the other", True)
        h.append((c, t))
    for c, t in h:
        s.claims.append(c)
        s.tables.append(t)
    s.verdict = combine(c.verdict for c in s.claims)
    return s
