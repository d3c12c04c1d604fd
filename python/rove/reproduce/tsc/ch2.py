"""Ch. 2: MPTCP-TSC against conventional MPTCP on the VBR video over WiFi + LTE (seed-003 §2.5
-2.6, Figs. 2.2-2.5; §5 rows 1-6), and rove's TSC-vs-minRTT comparison with the ablation of the
two departures ``crates/mp/src/sched/tsc.rs`` offers.

Per run: the share of the video's packets delivered within d_req and their p95 delay (the
summary's ``packets_within_required_delay``, ``packet_delay_p95_ms``), the path cost Σ a_s x_s
(``path_cost``), the WiFi subflow's peak instantaneous x/c (``subflows[0].peak_x_over_c``) and
its srtt samples (``timeseries.parquet``, every 10 ms: the dissertation's Fig. 2.3 plots a CDF
of the WiFi RTT per packet; a time-sampled srtt is what rove records per subflow).
"""

from __future__ import annotations

import numpy as np

from ..document import Section, Table, fmt
from ..document import spread as pm
from ..study import Context, pyplot, save_figure
from ..verdicts import Claim, combine, judge_less, judge_range, median
from ..bccps.common import bar_figure, less_claim
from .common import (BOUND_WITHIN, CONVENTIONAL_PEAKS, COUPLED_P95_S, COUPLED_WITHIN, D_NETS,
                     EXTRA_QUEUE_SHARE, ORDER, PARTLY_WITHIN, PEAK_NEAR_ONE, PEAK_PARTLY,
                     TSC_RTT_SHARE, UNCOUPLED_P95_S, UNCOUPLED_WITHIN, WIFI_BASE_RTT_MS,
                     d_req_ms, lia, minrtt, per_seed, pooled_srtt, rr, run_records, tsc,
                     tsc_fixed, tsc_one_fix, wifi_share_below)

FLOW = "video"
WHERE = "§2.5-2.6"

CH2_SERIES = (*(rr(d) for d in D_NETS), *(lia(d) for d in D_NETS), *(tsc(d) for d in D_NETS))
MINRTT_SERIES = (*(minrtt(d) for d in D_NETS), *(tsc(d) for d in D_NETS),
                 *(tsc_fixed(d) for d in D_NETS), tsc_one_fix(100, "backlog_term"),
                 tsc_one_fix(100, "slow_start_exemption"))


def _column(ctx: Context, key: str, column: str) -> list[float]:
    df = ctx.df
    if not len(df) or column not in df.columns:
        return []
    m = df[(df["series"] == key) & (df["flow"] == FLOW)]
    return [float(x) for x in m[column] if x == x]


def _within(ctx, key):
    return _column(ctx, key, "packets_within_required_delay")


def _p95_s(ctx, key):
    return [x / 1e3 for x in _column(ctx, key, "packet_delay_p95_ms")]


def _cost(ctx, key):
    return _column(ctx, key, "path_cost")


def _order_claim(quote: str, ctx: Context, key: str, within: float, p95_s: float) -> Claim:
    """Rows 1-2: the median over seeds of the within-d_req share and of the p95 delay each
    within a factor of ORDER of the dissertation's."""
    w, p = median(_within(ctx, key)), median(_p95_s(ctx, key))
    vw = judge_range(w, (within / ORDER, within * ORDER))
    vp = judge_range(p, (p95_s / ORDER, p95_s * ORDER))
    return Claim(quote, f"{WHERE}, Fig. 2.2",
                 f"within d_req {d_req_ms(100)} ms: median {fmt(w, '.3f')} "
                 f"({pm(_within(ctx, key), '.3f')}); p95 {fmt(p, '.2f')} s "
                 f"({pm(_p95_s(ctx, key), '.2f')})",
                 f"order of magnitude (summary §8.3): each median over seeds within a factor "
                 f"{ORDER:g} of the dissertation's ({within:.2f} in [{within / ORDER:.3f}, "
                 f"{within * ORDER:.2f}]; {p95_s:.2f} s in [{p95_s / ORDER:.2f}, "
                 f"{p95_s * ORDER:.2f}] s); both hold: holds, one: partly",
                 combine([vw, vp]))


def _scheme_rows(ctx: Context, keys: dict[str, list[str]], value) -> dict:
    """{label: {"d_net/d_req": values}} for a grouped bar figure and a table."""
    return {label: {f"{d}/{d_req_ms(d)} ms": value(ctx, k) for d, k in zip(D_NETS, ks)}
            for label, ks in keys.items()}


def _table(rows: dict, caption: str, spec: str) -> Table:
    cols = [f"{d}/{d_req_ms(d)} ms" for d in D_NETS]
    return Table(["scheme", *[f"d_net/d_req {c}" for c in cols]],
                 [[label, *[pm(cells.get(c, []), spec) for c in cols]]
                  for label, cells in rows.items()], caption)


def _srtt_figure(ctx: Context, records, keys: dict[str, str]) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for label, key in keys.items():
        v = np.sort(pooled_srtt(records, key))
        if v.size:
            ax.plot(v, np.arange(1, v.size + 1) / v.size, label=label)
    for d in D_NETS:
        ax.axvline(2 * d, color="k", lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("WiFi subflow srtt (ms), every 10 ms, all seeds")
    ax.set_ylabel("CDF")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("WiFi RTT (Fig. 2.3); dotted: 2·d_net")
    return save_figure(fig, ctx.figure("wifi-rtt"))


def analyse_ch2(ctx: Context) -> Section:
    s = Section("Ch. 2: TSC against conventional MPTCP on a VBR video over WiFi + LTE "
                "(Figs. 2.2-2.5)")
    if not len(ctx.df):
        s.paragraphs.append("No run completed.")
        return s
    records = run_records(ctx)
    s.paragraphs.append(
        "Setting (`scenarios/tsc/ch2-wifi-lte.toml`): WiFi 3, 5, 2, 2 Mbit/s for 5 s each (mean "
        "3, peak 5) at cost 1, RTT 20 ms, 750 KB buffer; LTE 15, 20, 10, 15 Mbit/s at cost 10, "
        "RTT 40 ms, 7 MB buffer; a 4 Mbit/s H.264-like VBR video (G12B2 GOP, scenes of 5 s at "
        "2-6 Mbit/s); 60 s runs. Conventional MPTCP: round robin (the ns-3 model's default) with "
        "uncoupled Reno or LIA; TSC as printed ((2.12)-(2.17), tsc.rs's defaults) on uncoupled "
        "Reno. d_req = d_thr^net + d_thr^send [GAP]: TSC at d_net = 100/200/500 ms is judged at "
        "200/300/600 ms and every conventional scheme is run at each of these.")
    conv = {"uncoupled Reno + RR": [rr(d).key for d in D_NETS],
            "LIA + RR": [lia(d).key for d in D_NETS],
            "TSC (as printed)": [tsc(d).key for d in D_NETS]}
    within = _scheme_rows(ctx, conv, _within)
    s.tables.append(_table(within, "packets within d_req (mean ± sd (seeds))", ".3f"))
    s.tables.append(_table(_scheme_rows(ctx, conv, _p95_s), "packet delay p95, s", ".2f"))
    cost = _scheme_rows(ctx, conv, _cost)
    s.tables.append(_table(cost, "path cost Σ a_s x_s (a: 1 WiFi, 10 LTE per Mbit/s)", ".1f"))
    peaks = {label: {f"{d}/{d_req_ms(d)} ms": per_seed(records, k, "peak_wifi")
                     for d, k in zip(D_NETS, ks)} for label, ks in conv.items()}
    s.tables.append(_table(peaks, "WiFi peak instantaneous x/c (100-ms windows)", ".2f"))
    cols = [f"{d}/{d_req_ms(d)} ms" for d in D_NETS]
    s.figures.append((bar_figure(ctx, "within", within, cols, "share within d_req",
                                 "Packets within d_req (Fig. 2.2)"),
                      "Share of the video's packets delivered within d_req, per scheme."))
    s.figures.append((_srtt_figure(ctx, records, {"uncoupled Reno + RR": rr(100).key,
                                                  "LIA + RR": lia(100).key,
                                                  **{f"TSC d_net {d}": tsc(d).key
                                                     for d in D_NETS}}),
                      "CDF of the WiFi subflow's srtt (Fig. 2.3)."))
    s.figures.append((bar_figure(ctx, "cost", cost, cols, "Σ a_s x_s", "Path cost (Fig. 2.4)"),
                      "Path cost per scheme."))

    # Rows 1-2
    s.claims.append(_order_claim("Uncoupled MPTCP: only 24 % of packets within the required "
                                 "delay; p95 about 2.02 s", ctx, rr(100).key, UNCOUPLED_WITHIN,
                                 UNCOUPLED_P95_S))
    s.claims.append(_order_claim("Coupled MPTCP (LIA): 18 % within; p95 about 1.96 s", ctx,
                                 lia(100).key, COUPLED_WITHIN, COUPLED_P95_S))
    s.claims.append(less_claim("Coupled MPTCP is worse than uncoupled (18 % vs 24 %)",
                               f"{WHERE}, Fig. 2.2", {"LIA + RR": _within(ctx, lia(100).key)},
                               {"uncoupled + RR": _within(ctx, rr(100).key)},
                               f"share within d_req {d_req_ms(100)} ms"))
    # Row 3
    verdicts, parts = [], []
    for d in D_NETS:
        m = median(_within(ctx, tsc(d).key))
        verdicts.append(judge_range(m, (BOUND_WITHIN, 1.0), (PARTLY_WITHIN, 1.0)))
        parts.append(f"d_net {d}: {fmt(m, '.3f')} within {d_req_ms(d)} ms")
    s.claims.append(Claim("MPTCP-TSC with d_net = 100/200/500 ms keeps the delays within the "
                          "bound", f"{WHERE}, Fig. 2.2", "; ".join(parts),
                          f"median share within d_req = d_net + d_send ≥ {BOUND_WITHIN} (holds), "
                          f"≥ {PARTLY_WITHIN} (partly), at every d_net; combined",
                          combine(verdicts)))
    # Row 4
    thr = 2 * WIFI_BASE_RTT_MS
    verdicts, parts = [], []
    for label, key in (("uncoupled + RR", rr(100).key), ("LIA + RR", lia(100).key)):
        above = [1.0 - x for x in wifi_share_below(records, key, thr)]
        m = median(above)
        verdicts.append(judge_range(m, (EXTRA_QUEUE_SHARE + 1e-12, 1.0)))
        parts.append(f"{label}: {fmt(m, '.3f')} of WiFi srtt samples ≥ {thr:g} ms")
    s.claims.append(Claim("Conventional MPTCP: more than 40 % of WiFi packets see extra "
                          "queueing delay", f"{WHERE}, Fig. 2.3", "; ".join(parts),
                          f"median over seeds of the share of WiFi srtt samples ≥ 2 × the base "
                          f"RTT ({thr:g} ms: a queue of at least one base RTT, [GAP]) above "
                          f"{EXTRA_QUEUE_SHARE} for both", combine(verdicts)))
    verdicts, parts = [], []
    for d in D_NETS:
        m = median(wifi_share_below(records, tsc(d).key, 2 * d))
        verdicts.append(judge_range(m, (TSC_RTT_SHARE + 1e-12, 1.0)))
        parts.append(f"d_net {d}: {fmt(m, '.3f')} below {2 * d} ms")
    s.claims.append(Claim("TSC: more than 80 % of WiFi packets have RTT < 2·d_net",
                          f"{WHERE}, Fig. 2.3", "; ".join(parts),
                          f"median over seeds of the share of WiFi srtt samples below 2·d_net "
                          f"above {TSC_RTT_SHARE} at every d_net", combine(verdicts)))
    # Row 5
    verdicts, parts = [], []
    for (label, key), paper in zip((("uncoupled + RR", rr(100).key), ("LIA + RR", lia(100).key)),
                                   CONVENTIONAL_PEAKS):
        m = median(per_seed(records, key, "peak_wifi"))
        verdicts.append(judge_range(m, (1.0 + 1e-12, float("inf"))))
        parts.append(f"{label}: {fmt(m, '.2f')} (dissertation {paper})")
    s.claims.append(Claim("Conventional MPTCP's peak instantaneous WiFi x/c: 1.39 and 1.56 "
                          "(above 1: WiFi over-injected)", f"{WHERE}, Fig. 2.5", "; ".join(parts),
                          "median peak over seeds above 1 for both (the values are reported "
                          "beside, not judged: the WiFi capacity process is not given)",
                          combine(verdicts)))
    verdicts, parts = [], []
    for d in D_NETS:
        m = median(per_seed(records, tsc(d).key, "peak_wifi"))
        verdicts.append(judge_range(m, (0.0, PEAK_NEAR_ONE), (0.0, PEAK_PARTLY)))
        parts.append(f"d_net {d}: {fmt(m, '.2f')}")
    s.claims.append(Claim("TSC keeps the WiFi peak x/c near or below 1", f"{WHERE}, Fig. 2.5",
                          "; ".join(parts), f"median peak ≤ {PEAK_NEAR_ONE} (holds), ≤ "
                          f"{PEAK_PARTLY} (partly), at every d_net", combine(verdicts)))
    # Row 6
    s.claims.append(less_claim("TSC with d_net = 100 ms costs more than conventional MPTCP",
                               f"{WHERE}, Fig. 2.4",
                               {"uncoupled + RR": _cost(ctx, rr(100).key),
                                "LIA + RR": _cost(ctx, lia(100).key)},
                               {"TSC d_net 100": _cost(ctx, tsc(100).key)}, "path cost"))
    s.claims.append(_cost_falls(ctx, tsc))
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def _cost_falls(ctx: Context, scheme) -> Claim:
    """Row 6's ordering: the cost falls as d_net rises (100 > 200 > 500), pair by pair."""
    verdicts, parts = [], []
    for lo, hi in ((200, 100), (500, 200)):
        v, text = judge_less(_cost(ctx, scheme(lo).key), _cost(ctx, scheme(hi).key))
        verdicts.append(v)
        parts.append(f"d_net {lo} {fmt(median(_cost(ctx, scheme(lo).key)), '.1f')} < d_net {hi} "
                     f"{fmt(median(_cost(ctx, scheme(hi).key)), '.1f')}: {v} ({text})")
    return Claim("A smaller d_net moves traffic to LTE and raises the cost", f"{WHERE}, Fig. 2.4",
                 "; ".join(parts), "cost at the larger d_net below the cost at the smaller, "
                 "each pair over seeds (the larger s.d. as margin); combined", combine(verdicts))


def analyse_minrtt(ctx: Context) -> Section:
    """rove's addition: TSC against Linux's default scheduler, and what each departure from
    the printed TSC changes (not counted)."""
    s = Section("TSC against minRTT, and the ablation of TSC's backlog and slow-start rules "
                "(rove's check)")
    if not len(ctx.df):
        s.paragraphs.append("No run completed.")
        return s
    records = run_records(ctx)
    s.paragraphs.append(
        "The Ch. 2 setting with Linux's default scheduler (minRTT, uncoupled Reno), TSC as "
        "printed, and TSC with the two departures of `crates/mp/src/sched/tsc.rs`: "
        "`backlog_term = true` ((2.16) with the backlog: T = f̃ + (1 + b)/d_thr^send) and "
        "`slow_start_exemption = false` (the delay bound of (2.14) also in slow start, which a "
        "rate-limited subflow that never loses a packet never leaves). Each alone at d_net = "
        "100 ms, both at every d_net.")
    schemes = {"minRTT": [minrtt(d).key for d in D_NETS],
               "TSC (as printed)": [tsc(d).key for d in D_NETS],
               "TSC + both": [tsc_fixed(d).key for d in D_NETS]}
    one = {"TSC + backlog term only": tsc_one_fix(100, "backlog_term").key,
           "TSC + bound in slow start only": tsc_one_fix(100, "slow_start_exemption").key}
    rows = []
    for label, ks in schemes.items():
        for d, k in zip(D_NETS, ks):
            rows.append(_row(ctx, records, f"{label}, d_net {d}", k, d))
    for label, k in one.items():
        rows.append(_row(ctx, records, f"{label}, d_net 100", k, 100))
    s.tables.append(Table(["scheme", "within d_req", "p95 (s)", "cost", "WiFi peak x/c",
                           "WiFi srtt < 2·d_net", "goodput (Mbit/s)"], rows,
                          "mean ± sd over seeds; d_req = d_net + 100 ms"))
    fixed_within = [median(_within(ctx, tsc_fixed(d).key)) for d in D_NETS]
    verdicts = [judge_range(m, (BOUND_WITHIN, 1.0), (PARTLY_WITHIN, 1.0)) for m in fixed_within]
    s.claims.append(Claim("TSC with both departures keeps the delays within the bound",
                          "rove's check of §2.6", "; ".join(f"d_net {d}: {fmt(m, '.3f')}"
                                                          for d, m in zip(D_NETS, fixed_within)),
                          f"median share within d_req ≥ {BOUND_WITHIN} (holds), ≥ "
                          f"{PARTLY_WITHIN} (partly), at every d_net", combine(verdicts)))
    s.claims.append(less_claim("TSC (both departures) costs less than minRTT", "rove's check",
                               {f"TSC + both, d_net {d}": _cost(ctx, tsc_fixed(d).key)
                                for d in D_NETS},
                               {"minRTT": _cost(ctx, minrtt(100).key)}, "path cost"))
    s.claims.append(_cost_falls(ctx, tsc_fixed))
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def _row(ctx, records, label, key, d) -> list[str]:
    return [label, pm(_within(ctx, key), ".3f"), pm(_p95_s(ctx, key), ".2f"),
            pm(_cost(ctx, key), ".1f"), pm(per_seed(records, key, "peak_wifi"), ".2f"),
            pm(wifi_share_below(records, key, 2 * d), ".3f"),
            pm(_column(ctx, key, "goodput_mbps"), ".2f")]
