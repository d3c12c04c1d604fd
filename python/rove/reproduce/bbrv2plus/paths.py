"""Experiments 3, 4 and 6 of ``rove reproduce bbrv2plus``: throughput and retransmissions over
bandwidth x RTT, random loss, and jitter (thesis §4.3.3, §4.3.4, §4.3.6, §4.5.3, §4.5.6)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from .common import INF, LINK_MBPS, Context, _plt, _pm, _save, _unavailable_notes
from ..document import Section, Table, fmt
from ..measures import rate_mbps, size_bytes, time_ms
from ..verdicts import (FAILS, NOT_MEASURED, Claim, combine, is_number, judge_fraction, judge_near,
                       judge_range)


# --------------------------------------------------------------------------------------------
# 3: throughput and retransmissions over bandwidth x RTT


def retrans_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Per (series, buffer, rate, RTT): mean goodput and retransmission rate over seeds, with
    the BDP in bytes and the buffer in multiples of it."""
    d = df.copy()
    d["buffer_bytes"] = d["links.btl.buffer"].map(size_bytes)
    d["rate_mbps"] = d["links.btl.rate"].map(rate_mbps)
    d["rtt_ms"] = d["links.btl.delay"].map(time_ms)
    g = d.groupby(["series", "buffer_bytes", "rate_mbps", "rtt_ms"], sort=True)
    out = g[["goodput_mbps", "retrans_rate"]].mean().reset_index()
    out["bdp_bytes"] = out["rate_mbps"] * 1e6 / 8 * out["rtt_ms"] / 1e3
    out["buffer_bdp"] = out["buffer_bytes"] / out["bdp_bytes"]
    return out


def tput_gain(cells: pd.DataFrame, a: str = "bbr", b: str = "bbr2") -> pd.DataFrame:
    """Eq. 4.3 per cell: ``(T_a − T_b) / T_b``, with both retransmission rates."""
    keys = ["buffer_bytes", "rate_mbps", "rtt_ms", "bdp_bytes", "buffer_bdp"]
    cols = keys + ["goodput_mbps", "retrans_rate"]
    x = cells[cells["series"] == a][cols]
    y = cells[cells["series"] == b][cols]
    j = x.merge(y, on=keys, how="inner", suffixes=("_a", "_b"))
    j["gain"] = (j["goodput_mbps_a"] - j["goodput_mbps_b"]) / j["goodput_mbps_b"]
    return j


def _heat(ax, cells: pd.DataFrame, col: str, title: str, fmtspec: str, vmin=None, vmax=None,
          cmap="viridis"):
    piv = cells.pivot_table(index="rtt_ms", columns="rate_mbps", values=col)
    im = ax.imshow(piv.values, origin="lower", aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(piv.columns)), [f"{c:g}" for c in piv.columns], fontsize=7)
    ax.set_yticks(range(len(piv.index)), [f"{r:g}" for r in piv.index], fontsize=7)
    ax.set_xlabel("bandwidth (Mbps)", fontsize=8)
    ax.set_ylabel("RTT (ms)", fontsize=8)
    ax.set_title(title, fontsize=9)
    for i in range(piv.shape[0]):
        for k in range(piv.shape[1]):
            v = piv.values[i, k]
            if is_number(v):
                ax.text(k, i, format(v, fmtspec), ha="center", va="center", fontsize=6,
                        color="k")
    return im


def analyse_retrans(ctx: Context) -> Section:
    s = Section("3. Throughput and retransmissions over 10–750 Mbps × 5–150 ms (thesis §4.3.3 "
                "Figs. 4.7–4.8, §4.5.6 Fig. 4.22)")
    s.notes += _unavailable_notes(ctx)
    if not len(ctx.df):
        s.paragraphs.append("No run completed.")
        return s
    dur = ctx.durations_s.get("main")
    s.paragraphs.append(f"Setup: one flow of {fmt(dur, 'g')} s per point; buffer 100 KB "
                        f"(shallow) and 10 MB (deep); the RTT is all propagation delay. "
                        f"Tput_Gain = (T_BBR − T_BBRv2) / T_BBRv2 (Eq. 4.3), goodput over the "
                        f"whole flow.")
    cells = retrans_cells(ctx.df)
    shallow = cells[np.isclose(cells["buffer_bytes"], 100e3)]
    deepc = cells[np.isclose(cells["buffer_bytes"], 10e6)]
    g_sh = tput_gain(shallow)
    g_dp = tput_gain(deepc)
    labels = ctx.labels()

    rows = []
    keys = ["rate_mbps", "rtt_ms"]
    wide = shallow.pivot_table(index=keys + ["buffer_bdp"], columns="series",
                               values="retrans_rate").reset_index()
    gains = g_sh.set_index(keys)["gain"] if len(g_sh) else pd.Series(dtype=float)
    gains_d = g_dp.set_index(keys)["gain"] if len(g_dp) else pd.Series(dtype=float)
    for _, r in wide.iterrows():
        k = (r["rate_mbps"], r["rtt_ms"])
        rows.append([fmt(r["rate_mbps"], "g"), fmt(r["rtt_ms"], "g"), fmt(r["buffer_bdp"], ".3f")]
                    + [fmt(100 * r[s_], ".2f") if s_ in r else "–" for s_ in labels]
                    + [fmt(100 * gains.get(k, np.nan), "+.1f"), fmt(100 * gains_d.get(k, np.nan), "+.1f")])
    s.tables.append(Table(["Mbps", "RTT ms", "100 KB / BDP"]
                          + [f"retrans % {labels[k]} (100 KB)" for k in labels]
                          + ["Tput_Gain % (100 KB)", "Tput_Gain % (10 MB)"], rows,
                          "per point, mean over seeds"))

    plt = _plt()
    series = [k for k in ("bbr", "bbr2", "bbr2plus") if k in labels]
    n = len(series) + 2
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.6))
    for ax, k in zip(axes, series):
        c = shallow[shallow["series"] == k].copy()
        c["pct"] = 100 * c["retrans_rate"]
        _heat(ax, c, "pct", f"retrans % {labels[k]} (100 KB)", ".1f", 0,
              max(1e-9, 100 * shallow["retrans_rate"].max()), "YlOrRd")
    for ax, g, t in ((axes[-2], g_sh, "Tput_Gain % (100 KB)"), (axes[-1], g_dp, "Tput_Gain % (10 MB)")):
        if len(g):
            g = g.copy()
            g["pct"] = 100 * g["gain"]
            _heat(ax, g, "pct", t, ".0f", -30, 30, "coolwarm")
    s.figures.append((_save(fig, ctx.figure("heatmaps")),
                      "Retransmission rate (100 KB buffer) per algorithm, and Tput_Gain of BBR "
                      "over BBRv2 with the 100 KB and 10 MB buffers."))

    big = g_sh[g_sh["bdp_bytes"] > 400e3]
    flags = [None if not (r["retrans_rate_a"] > 0) else r["retrans_rate_b"] < 0.5 * r["retrans_rate_a"]
             for _, r in big.iterrows()]
    v, share = judge_fraction(flags)
    s.claims.append(Claim("the retransmission rate of BBRv2 is significantly reduced compared with "
                          "that of BBR, especially when the BDP is larger than 400KB (i.e. the "
                          "buffer size ≤ 0.25 × BDP)", "§4.3.3, Fig. 4.7",
                          f"BBRv2 < ½ BBR's rate at {fmt(share and 100 * share, '.0f')} % of the "
                          f"{len(big)} points with BDP > 400 KB (median BBR "
                          f"{fmt(100 * big['retrans_rate_a'].median() if len(big) else None, '.2f')} %, "
                          f"BBRv2 {fmt(100 * big['retrans_rate_b'].median() if len(big) else None, '.2f')} %)",
                          "share of points with BBRv2 below half of BBR: ≥ 80 % holds, ≥ 50 % partly", v))
    med = float(big["gain"].median()) if len(big) else None
    s.claims.append(Claim("the throughput of BBRv2 is 13% – 16% lower than that of BBR in these "
                          "cases", "§4.3.3, Fig. 4.8a",
                          f"median Tput_Gain over BDP > 400 KB: {fmt(med and 100 * med, '+.1f')} % "
                          f"(range {fmt(100 * big['gain'].min() if len(big) else None, '+.0f')} to "
                          f"{fmt(100 * big['gain'].max() if len(big) else None, '+.0f')} %)",
                          "median in 13–16 % holds, in 5–25 % partly",
                          judge_range(med, (0.13, 0.16), (0.05, 0.25))))
    medd = float(g_dp["gain"].abs().median()) if len(g_dp) else None
    s.claims.append(Claim("The throughput differences between BBR and BBRv2 are indeed marginal "
                          "in these networks [10 MB buffer]", "§4.3.3, Fig. 4.8b",
                          f"median |Tput_Gain| with 10 MB: {fmt(medd and 100 * medd, '.1f')} %",
                          "≤ 5 % holds, ≤ 10 % partly", judge_range(medd, (0, 0.05), (0, 0.10))))
    if "bbr2plus" in labels:
        gp = tput_gain(shallow, "bbr2plus", "bbr")
        flags = [None if not (r["retrans_rate_b"] > 0.001) else r["retrans_rate_a"] < r["retrans_rate_b"]
                 for _, r in gp.iterrows()]
        v1, share1 = judge_fraction(flags)
        gq = tput_gain(shallow, "bbr2plus", "bbr2")
        more = gq[gq["retrans_rate_a"] > gq["retrans_rate_b"] + 0.001]
        tiny = gq["buffer_bdp"] <= SHALLOW_BDP
        v2, (share_tiny, share_rest) = judge_shallow_pattern(
            gq["retrans_rate_a"], gq["retrans_rate_b"], gq["buffer_bdp"])
        s.claims.append(Claim(
            "when the buffer is extremely shallow (e.g. 0.02 × BDP when the bandwidth is 500 Mbps "
            "and the RTT is 75 ms), BBRv2+ incurs more retransmissions than BBRv2 ... However, "
            "compared with the results of BBR in Figure 4.7a, BBRv2+ reduces retransmissions "
            "significantly", "§4.5.6, Fig. 4.22",
            f"BBRv2+ below BBR at {fmt(share1 and 100 * share1, '.0f')} % of the points where BBR "
            f"retransmits > 0.1 %; BBRv2+ above BBRv2 (+0.1 pt) at {len(more)} points: "
            f"{fmt(share_tiny and 100 * share_tiny, '.0f')} % of the {int(tiny.sum())} points at "
            f"≤ {SHALLOW_BDP:g} BDP, and not above at {fmt(share_rest and 100 * share_rest, '.0f')} % "
            f"of the {int((~tiny).sum())} others",
            f"three parts, each ≥ 80 % holds (≥ 50 % partly), all combined: BBRv2+ < BBR where BBR "
            f"retransmits; BBRv2+ > BBRv2 at the points ≤ {SHALLOW_BDP:g} BDP; not > at the "
            f"others (judged apart, so agreement on the deep points cannot carry the shallow "
            f"claim)",
            combine([v1, v2])))
    s.verdict = combine(c.verdict for c in s.claims)
    return s


# --------------------------------------------------------------------------------------------
# 4 and 6: throughput against loss and against jitter


def _curve(df: pd.DataFrame, xcol: str, conv: Callable = float) -> pd.DataFrame:
    d = df.copy()
    d["x"] = d[xcol].map(conv)
    g = d.groupby(["series", "x"], sort=True)["goodput_mbps"]
    out = g.mean().to_frame("tput")
    out["tput_sd"] = g.std(ddof=0)
    return out.reset_index()


def _at(curve, series, x):
    m = curve[(curve["series"] == series) & np.isclose(curve["x"], x)]
    return float(m["tput"].iloc[0]) if len(m) else None


def _curve_table(curve, labels, xname, xfmt) -> Table:
    xs = sorted(curve["x"].unique())
    keys = [k for k in labels if k in set(curve["series"])]
    return Table([xname] + [labels[k] for k in keys],
                 [[xfmt(x)] + [_pm(_at(curve, k, x), _sd_at(curve, k, x), ".1f") for k in keys]
                  for x in xs], "goodput in Mbps (mean ± sd over seeds)")


def _sd_at(curve, series, x):
    m = curve[(curve["series"] == series) & np.isclose(curve["x"], x)]
    return float(m["tput_sd"].iloc[0]) if len(m) else None


def _curve_plot(ctx, curve, labels, xlabel, title, xscale=1.0) -> str:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, lab in labels.items():
        m = curve[curve["series"] == k]
        if len(m):
            ax.errorbar(m["x"] * xscale, m["tput"], yerr=m["tput_sd"], marker="o", capsize=3,
                        label=lab)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("goodput (Mbps)")
    ax.set_ylim(0, LINK_MBPS * 1.05)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, ctx.figure("goodput"))


def _nearest(xs, target):
    xs = list(xs)
    return min(xs, key=lambda x: abs(x - target)) if xs else None


def analyse_loss(ctx: Context) -> Section:
    s = Section("4. Resilience to random loss (thesis §4.3.4, Fig. 4.9)")
    s.notes += _unavailable_notes(ctx)
    if not len(ctx.df):
        s.paragraphs.append("No run completed.")
        return s
    labels = ctx.labels()
    s.paragraphs.append(f"Setup: 40 Mbps, RTT 40 ms, buffer 32 × BDP (6.4 MB), Bernoulli loss on "
                        f"data packets, one flow of {fmt(ctx.durations_s.get('main'), 'g')} s; "
                        f"BBRv2(α, β) = `bbr2` with `loss_thresh` = α and `beta` = β.")
    curve = _curve(ctx.df, "links.btl.loss")
    s.tables.append(_curve_table(curve, labels, "loss", lambda x: f"{100 * x:g} %"))
    s.figures.append((_curve_plot(ctx, curve, labels, "random loss (%)",
                                  "Goodput against random loss (40 Mbps, 40 ms, 32 BDP)", 100),
                      "Goodput against the random loss rate (mean ± sd over seeds)."))
    xs = sorted(curve["x"].unique())
    above = [x for x in xs if x > 0.02 + 1e-12]
    x_above = above[0] if above else None
    t0, ta = _at(curve, "bbr2", 0.0), (_at(curve, "bbr2", x_above) if x_above is not None else None)
    ratio = ta / t0 if is_number(t0) and is_number(ta) and t0 > 0 else None
    s.claims.append(Claim("the throughput of BBRv2 drops significantly when the random loss rate "
                          "goes beyond 2%", "§4.3.4, Fig. 4.9",
                          f"BBRv2 at {fmt(x_above and 100 * x_above, 'g')} % loss: "
                          f"{fmt(ta, '.1f')} Mbps vs {fmt(t0, '.1f')} Mbps at 0 %",
                          "ratio ≤ 0.5 holds, ≤ 0.8 partly", judge_range(ratio, (0, 0.5), (0, 0.8))))
    x10 = _nearest(xs, 0.10)
    t = _at(curve, "bbr2-a20", x10) if x10 is not None else None
    s.claims.append(Claim("with a 10% random loss rate, BBRv2(20%, 0.3) occupies around half of "
                          "the maximum bandwidth", "§4.3.4, Fig. 4.9",
                          f"{fmt(t, '.1f')} Mbps of 40 at {fmt(x10 and 100 * x10, 'g')} % loss",
                          "35–65 % of 40 Mbps holds, 20–80 % partly",
                          judge_range(None if t is None else t / LINK_MBPS, (0.35, 0.65), (0.2, 0.8))))
    t = _at(curve, "bbr2", x10) if x10 is not None else None
    s.claims.append(Claim("while the default BBRv2's throughput nearly drops to zero",
                          "§4.3.4, Fig. 4.9", f"{fmt(t, '.1f')} Mbps at {fmt(x10 and 100 * x10, 'g')} % loss",
                          "≤ 10 % of 40 Mbps holds, ≤ 25 % partly",
                          judge_range(None if t is None else t / LINK_MBPS, (0, 0.1), (0, 0.25))))
    diffs = [abs(_at(curve, "bbr2-a20-b0", x) - _at(curve, "bbr", x)) / LINK_MBPS for x in xs
             if is_number(_at(curve, "bbr2-a20-b0", x)) and is_number(_at(curve, "bbr", x))]
    md = float(np.mean(diffs)) if diffs else None
    s.claims.append(Claim("BBRv2(20%, 0), which performs similar to BBR", "§4.3.4, Fig. 4.9",
                          f"mean |difference| over the loss rates: {fmt(md and 100 * md, '.1f')} % of 40 Mbps",
                          "≤ 10 % holds, ≤ 20 % partly", judge_range(md, (0, 0.1), (0, 0.2))))
    flags = [None if not (is_number(_at(curve, "bbr2-a20", x)) and is_number(_at(curve, "bbr2-a20-b0", x)))
             else _at(curve, "bbr2-a20", x) < _at(curve, "bbr2-a20-b0", x) for x in xs if x > 0]
    v, share = judge_fraction(flags)
    s.claims.append(Claim("the loss resilience of BBRv2(20%, 0.3) is lower than that of "
                          "BBRv2(20%, 0)", "§4.3.4, Fig. 4.9",
                          f"β = 0.3 below β = 0 at {fmt(share and 100 * share, '.0f')} % of the loss rates > 0",
                          "≥ 80 % holds, ≥ 50 % partly", v))
    s.verdict = combine(c.verdict for c in s.claims)
    return s


# Fig. 4.22's "extremely shallow" buffers: the thesis names 0.02 × BDP; [GAP] the grid's
# points up to 0.05 × BDP count as that shallow.
SHALLOW_BDP = 0.05


def judge_shallow_pattern(rate_plus, rate_v2, buffer_bdp, threshold: float = 0.001):
    """"BBRv2+ retransmits more than BBRv2 only at extremely shallow buffers", judged on the
    shallow points and on the others separately: the share of shallow points where BBRv2+ is
    above BBRv2 by more than ``threshold``, and the share of the other points where it is not,
    each ≥ 80 % for holds (≥ 50 % partly), combined. Returns the verdict and the two shares."""
    shallow, rest = [], []
    for a, b, bdp in zip(rate_plus, rate_v2, buffer_bdp):
        if not (is_number(a) and is_number(b) and is_number(bdp)):
            continue
        more = a > b + threshold
        (shallow if bdp <= SHALLOW_BDP else rest).append(more)
    v_s, share_s = judge_fraction(shallow)
    v_r, share_r = judge_fraction([not m for m in rest])
    return combine([v_s, v_r]), (share_s, share_r)


def jitter_onset(curve: pd.DataFrame, series: str, drop: float = 0.8) -> float | None:
    """The smallest jitter (ms) at which ``series``' goodput is below ``drop`` × its goodput
    without jitter; ``None`` if it never is (or there is no jitter-free point)."""
    t0 = _at(curve, series, 0.0)
    if not is_number(t0) or t0 <= 0:
        return None
    for x in sorted(curve[curve["series"] == series]["x"]):
        t = _at(curve, series, x)
        if x > 0 and is_number(t) and t < drop * t0:
            return float(x)
    return None


# §4.3.6: "starts when the average jitter reaches the path RTT (i.e. 40 ms)".
JITTER_ONSET_MS = 40.0


def grid_step(xs, at: float) -> float | None:
    """How precisely the grid ``xs`` can place an onset near ``at``: the gap of the grid
    interval holding ``at``, or, when ``at`` is a grid value, the larger of its two gaps."""
    xs = sorted(set(float(x) for x in xs))
    below = [x for x in xs if x <= at]
    above = [x for x in xs if x >= at]
    if not below or not above:
        return None
    lo, hi = below[-1], above[0]
    if lo < hi:
        return hi - lo
    gaps = [at - x for x in below[-2:-1]] + [x - at for x in above[1:2]]
    return max(gaps) if gaps else None


def analyse_jitter(ctx: Context) -> Section:
    s = Section("6. Resilience to delay jitter (thesis §4.3.6 Fig. 4.13, §4.5.3 Fig. 4.19)")
    s.notes += _unavailable_notes(ctx)
    s.notes.append("[GAP] jitter mapping: the thesis's “mean jitter” J (netem `delay 0 J "
                   "distribution normal` on R3's egress) is taken as netem's jitter parameter, "
                   "the σ of the normal law; rove's `jitter` is that σ, on a link after the "
                   "bottleneck with no fixed delay, negative draws clamped to 0, no reordering "
                   "(`jitter_reorder = false`). The mean extra delay is then ≈ 0.4 J (E[max(0, "
                   "N(0, J))] = J/√(2π)), plus FIFO hold-back.")
    if not len(ctx.df):
        s.paragraphs.append("No run completed.")
        return s
    labels = ctx.labels()
    s.paragraphs.append(f"Setup: 40 Mbps, RTT 40 ms, buffer 32 × BDP, Gaussian jitter σ = J on "
                        f"the data path after the bottleneck, one flow of "
                        f"{fmt(ctx.durations_s.get('main'), 'g')} s.")
    curve = _curve(ctx.df, "links.jit.jitter", time_ms)
    s.tables.append(_curve_table(curve, labels, "jitter J (ms)", lambda x: f"{x:g}"))
    s.figures.append((_curve_plot(ctx, curve, labels, "jitter J (ms, σ of the Gaussian)",
                                  "Goodput against jitter (40 Mbps, 40 ms, 32 BDP)"),
                      "Goodput against jitter (mean ± sd over seeds)."))
    xs = sorted(curve["x"].unique())
    xmax = xs[-1] if xs else None
    tc = _at(curve, "cubic", xmax) if xmax is not None else None
    vs, meas = [], []
    for k in ("bbr", "bbr2"):
        t = _at(curve, k, xmax) if xmax is not None else None
        r = t / tc if is_number(t) and is_number(tc) and tc > 0 else None
        vs.append(judge_range(r, (0, 0.7), (0, 0.9)))
        meas.append(f"{labels.get(k, k)} {fmt(r, '.2f')}")
    s.claims.append(Claim("Compared with Cubic, both BBR and BBRv2 experience low throughput "
                          "under high jitter", "§4.3.6, Fig. 4.13",
                          f"goodput / CUBIC's at J = {fmt(xmax, 'g')} ms: " + ", ".join(meas),
                          "each ≤ 0.7 holds (≤ 0.9 partly); both must hold", combine(vs)))
    vs, meas = [], []
    step = grid_step(xs, JITTER_ONSET_MS)
    for k in ("bbr", "bbr2"):
        on = jitter_onset(curve, k)
        meas.append(f"{labels.get(k, k)} {fmt(on, 'g')} ms" if on is not None else f"{labels.get(k, k)} none")
        vs.append(judge_near(on, JITTER_ONSET_MS, step) if step is not None else NOT_MEASURED)
    s.claims.append(Claim("the significant throughput degradation starts when the average jitter "
                          "reaches the path RTT (i.e. 40 ms)", "§4.3.6, Fig. 4.13",
                          "first J with goodput < 0.8 × goodput at J = 0: " + ", ".join(meas),
                          f"onset within one grid step ({fmt(step, 'g')} ms) of 40 ms holds, within "
                          f"two partly; elsewhere or none fails; both algorithms combined",
                          combine(vs)))
    t0 = _at(curve, "bbr2plus", 0.0)
    ts = [_at(curve, "bbr2plus", x) for x in xs]
    worst = min([t for t in ts if is_number(t)], default=None)
    r = worst / t0 if is_number(worst) and is_number(t0) and t0 > 0 else None
    s.claims.append(Claim("the throughput of BBRv2+ does not degrade when the network jitter "
                          "becomes larger", "§4.5.3, Fig. 4.19a",
                          f"lowest goodput over J / goodput at J = 0: {fmt(r, '.2f')}",
                          "≥ 0.8 holds, ≥ 0.6 partly", judge_range(r, (0.8, INF), (0.6, 0.8))))
    rs = [(_at(curve, "bbr2plus", x) / _at(curve, "cubic", x)) for x in xs if x > 0
          and is_number(_at(curve, "bbr2plus", x)) and is_number(_at(curve, "cubic", x))
          and _at(curve, "cubic", x) > 0]
    mr = float(np.mean(rs)) if rs else None
    s.claims.append(Claim("the throughput of BBRv2+ is slightly lower than Cubic",
                          "§4.5.3, Fig. 4.19a", f"mean goodput ratio BBRv2+ / CUBIC over J > 0: {fmt(mr, '.2f')}",
                          "0.8–1.0 holds, 0.6–1.05 partly", judge_range(mr, (0.8, 1.0), (0.6, 1.05))))
    s.verdict = combine(c.verdict for c in s.claims)
    return s
