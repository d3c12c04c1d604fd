"""Experiments 5, 7 and 8 of ``rove reproduce bbrv2plus``: responsiveness to bandwidth steps,
synthetic step traces and cellular traces (thesis §4.3.5, §4.5.1, §4.5.2, §4.5.7)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .common import (INF, THESIS_SCHEMES, Context, _bool_verdict, _plt, _pm, _save,
                               _unavailable_notes)
from ..document import Section, Table, fmt
from ..measures import queue_series
from ..verdicts import Claim, combine, is_number, judge_less, judge_range, normalise_networks


# --------------------------------------------------------------------------------------------
# 5: responsiveness to +-5 Mbps steps


def rate_at(schedule: Sequence[float], period_s: float, t: float) -> float:
    """The rate (Mbps) of a ``rate_cycle`` at time ``t``."""
    return schedule[int(t // period_s) % len(schedule)]


def phase_metrics(q: pd.DataFrame, schedule: Sequence[float], period_s: float,
                  skip_s: float) -> dict[str, float | None]:
    """Utilisation and mean queueing delay over the 2-s phases that follow an increase
    (``up``) and a decrease (``down``) of the rate, leaving out the first ``skip_s`` seconds.
    ``q`` is :func:`~rove.reproduce.measures.queue_series` output."""
    q = q.sort_values("time_s")
    t = q["time_s"].to_numpy()
    dep = q["departed_bytes"].to_numpy(dtype=float)
    acc = {"up": [0.0, 0.0, 0.0, 0], "down": [0.0, 0.0, 0.0, 0]}   # bytes, capacity, delay sum, n
    for i in range(1, len(t)):
        mid = (t[i - 1] + t[i]) / 2
        if mid < skip_s:
            continue
        ph = int(mid // period_s)
        now = schedule[ph % len(schedule)]
        prev = schedule[(ph - 1) % len(schedule)]
        kind = "up" if now > prev else "down"
        a = acc[kind]
        a[0] += dep[i] - dep[i - 1]
        a[1] += now * 1e6 / 8 * (t[i] - t[i - 1])
        a[2] += float(q["sojourn_sum_ms"].iloc[i])
        a[3] += int(q["sojourn_n"].iloc[i])
    out = {}
    for kind, (b, cap, dsum, n) in acc.items():
        out[f"util_{kind}"] = b / cap if cap > 0 else None
        out[f"delay_{kind}_ms"] = dsum / n if n else None
    return out


def responsiveness_records(ctx: Context, schedule: Sequence[float], period_s: float,
                           skip_s: float) -> tuple[list[dict], dict[str, pd.DataFrame]]:
    """Per run, its series, seed and :func:`phase_metrics`; and the first seed's queue series
    of each series (for the figure)."""
    recs, first = [], {}
    for run in ctx.runs:
        if run.table is None:
            continue
        for point, g in run.table.groupby("point", sort=False):
            q = queue_series(run.run_dir(point), "btl")
            m = phase_metrics(q, schedule, period_s, skip_s)
            recs.append({"series": run.series.key, "seed": int(g["seed"].iloc[0]), **m})
            first.setdefault(run.series.key, q)
    return recs, first


def _timeline(ctx, s, keys, labels, first, schedule, period_s) -> None:
    plt = _plt()
    fig, axes = plt.subplots(len(keys), 1, figsize=(9, 2.4 * len(keys)), sharex=True, squeeze=False)
    for ax, k in zip(axes[:, 0], keys):
        q = first[k]
        t = q["time_s"].to_numpy()
        dt = np.diff(t, prepend=0.0)
        dt[dt <= 0] = np.nan
        tput = np.diff(q["departed_bytes"].to_numpy(dtype=float), prepend=0.0) * 8 / dt / 1e6
        cap = [rate_at(schedule, period_s, x - 1e-9) for x in t]
        ax.plot(t, cap, color="g", lw=1.2, label="capacity")
        ax.plot(t, tput, color="tab:red", lw=0.8, label="sent by bottleneck")
        ax.set_ylabel("Mbps")
        ax.set_ylim(0, max(schedule) * 1.3)
        ax2 = ax.twinx()
        qd = q["backlog_bytes"].to_numpy(dtype=float) * 8 / (np.array(cap) * 1e6) * 1e3
        ax2.plot(t, qd, color="k", lw=0.8, label="queue (ms)")
        ax2.set_ylabel("queue (ms)")
        ax.set_title(labels[k], fontsize=9)
        ax.legend(loc="upper left", fontsize=7)
    axes[-1, 0].set_xlabel("time (s)")
    s.figures.append((_save(fig, ctx.figure("timeline")),
                      "Capacity, rate sent by the bottleneck (per 100 ms) and queue length in "
                      "ms at the current rate, first seed of each algorithm."))


def analyse_responsiveness(ctx: Context, schedule: Sequence[float], period_s: float,
                           records: tuple[list[dict], dict] | None = None) -> Section:
    """The section of experiment 5; ``records`` (:func:`responsiveness_records`, read from the
    runs when not given) lets a test judge hand-made numbers."""
    s = Section("5. Responsiveness to ±5 Mbps steps every 2 s (thesis §4.3.5 Fig. 4.12, §4.5.1 "
                "Fig. 4.16)")
    s.notes += _unavailable_notes(ctx)
    s.notes.append("[GAP] the schedule's range is not in the thesis; we use the staircase "
                   + " → ".join(f"{x:g}" for x in schedule) + " Mbps (repeating), 2 s per step.")
    if not len(ctx.df):
        s.paragraphs.append("No run completed.")
        return s
    labels = ctx.labels()
    skip = 4.0
    s.paragraphs.append(f"Setup: RTT 40 ms, buffer 6.4 MB (32 × BDP at 40 Mbps), samples every "
                        f"100 ms, {fmt(ctx.durations_s.get('main'), 'g')} s runs. 'Up' phases are "
                        f"the 2-s steps after a rate increase, 'down' phases after a decrease; the "
                        f"first {skip:g} s (start-up) are left out. Utilisation = bytes sent by the "
                        f"bottleneck / its capacity; delay = mean sojourn of the packets.")
    recs, first = records if records is not None else responsiveness_records(
        ctx, schedule, period_s, skip)
    r = pd.DataFrame(recs).groupby("series").mean(numeric_only=True)
    val = lambda k, c: float(r.loc[k, c]) if k in r.index and is_number(r.loc[k, c]) else None  # noqa: E731
    s.tables.append(Table(["algorithm", "utilisation (up)", "utilisation (down)",
                           "queue delay ms (up)", "queue delay ms (down)"],
                          [[labels[k], fmt(val(k, "util_up"), ".3f"), fmt(val(k, "util_down"), ".3f"),
                            fmt(val(k, "delay_up_ms"), ".1f"), fmt(val(k, "delay_down_ms"), ".1f")]
                           for k in labels if k in r.index], "mean over seeds"))
    keys = [k for k in labels if k in first]
    if keys:
        _timeline(ctx, s, keys, labels, first, schedule, period_s)
    u1, u2, up = val("bbr", "util_up"), val("bbr2", "util_up"), val("bbr2plus", "util_up")
    d1, d2, dp = (val(k, "delay_down_ms") for k in ("bbr", "bbr2", "bbr2plus"))
    q1, qp = val("bbr", "delay_up_ms"), val("bbr2plus", "delay_up_ms")
    # Every comparison over seeds, one margin for both sides (verdicts.judge_less).
    seeds = lambda k, c: [rec[c] for rec in recs if rec["series"] == k]  # noqa: E731
    vu, tu = judge_less(seeds("bbr2", "util_up"), seeds("bbr", "util_up"))
    vd, td = judge_less(seeds("bbr", "delay_down_ms"), seeds("bbr2", "delay_down_ms"))
    s.claims.append(Claim("BBRv2 is less effective than BBR in terms of responsiveness to "
                          "bandwidth dynamics, resulting in the low utilization of bandwidth and "
                          "long queuing delay", "§4.3.5, Fig. 4.12",
                          f"utilisation (up): BBR {fmt(u1, '.3f')}, BBRv2 {fmt(u2, '.3f')} ({tu}); "
                          f"delay (down): BBR {fmt(d1, '.1f')} ms, BBRv2 {fmt(d2, '.1f')} ms ({td})",
                          "utilisation(BBRv2) < BBR's and delay(BBRv2) > BBR's, each by more than "
                          "the larger s.d. over seeds for holds (in that direction within it: "
                          "partly); combined", combine([vu, vd])))
    vu, tu = judge_less(seeds("bbr", "util_up"), seeds("bbr2plus", "util_up"), slack=0.02)
    vq, tq = judge_less(seeds("bbr2plus", "delay_up_ms"), seeds("bbr", "delay_up_ms"))
    s.claims.append(Claim("BBRv2+ is capable of utilizing newly available bandwidth as quick as "
                          "BBR, while the delay information guided probing strategy reduces "
                          "queuing delay", "§4.5.1, Fig. 4.16a",
                          f"utilisation (up): BBRv2+ {fmt(up, '.3f')}, BBR {fmt(u1, '.3f')} ({tu}); "
                          f"delay (up): BBRv2+ {fmt(qp, '.1f')} ms, BBR {fmt(q1, '.1f')} ms ({tq})",
                          "utilisation(BBRv2+) ≥ BBR's − 0.02 and delay(BBRv2+) < BBR's, each "
                          "beyond the larger s.d. over seeds for holds (within it: partly); "
                          "combined", combine([vu, vq])))
    v1, t1 = judge_less(seeds("bbr2plus", "delay_down_ms"), seeds("bbr", "delay_down_ms"))
    v2, t2 = judge_less(seeds("bbr2plus", "delay_down_ms"), seeds("bbr2", "delay_down_ms"))
    s.claims.append(Claim("Compared with the results of BBR and BBRv2 in Figure 4.12, BBRv2+ "
                          "adapts its sending rate to the decreased bandwidth much faster, which "
                          "leads to lower queuing delay", "§4.5.1, Fig. 4.16b",
                          f"delay (down): BBRv2+ {fmt(dp, '.1f')} ms vs BBR {fmt(d1, '.1f')} ({t1}), "
                          f"BBRv2 {fmt(d2, '.1f')} ms ({t2})",
                          "below each beyond the larger s.d. over seeds for holds; combined",
                          combine([v1, v2])))
    s.verdict = combine(c.verdict for c in s.claims)
    return s


# --------------------------------------------------------------------------------------------
# 7 and 8: normalised throughput and queueing delay per network


def network_rows(df: pd.DataFrame, network_col: str) -> list[dict]:
    return [{"network": str(r[network_col]), "scheme": r["series"], "tput": r["goodput_mbps"],
             "delay": r["link_down_mean_queue_delay_ms"], "p95": r["link_down_p95_queue_delay_ms"]}
            for _, r in df.iterrows()]


def _norm_table(norm: dict, labels: dict, caption: str) -> Table:
    return Table(["algorithm", "norm. throughput", "norm. avg delay", "norm. p95 delay", "networks"],
                 [[labels[k], _pm(norm[k]["tput_mean"], norm[k]["tput_sd"]),
                   _pm(norm[k]["delay_mean"], norm[k]["delay_sd"]),
                   _pm(norm[k]["p95_mean"], norm[k]["p95_sd"]), str(norm[k]["networks"])]
                  for k in labels if k in norm], caption)


def _norm_plot(ax, norm: dict, labels: dict, title: str) -> None:
    for k, lab in labels.items():
        n = norm.get(k)
        if not n or not is_number(n["tput_mean"]) or not is_number(n["delay_mean"]):
            continue
        ln = ax.errorbar(n["delay_mean"], n["tput_mean"], xerr=n["delay_sd"], yerr=n["tput_sd"],
                         marker="o", capsize=3, label=lab)
        if is_number(n["p95_mean"]):
            ax.plot([n["delay_mean"], n["p95_mean"]], [n["tput_mean"]] * 2, "-", lw=1,
                    color=ln[0].get_color(), alpha=0.6)
    ax.set_xscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("normalised queueing delay (avg; line to p95), log")
    ax.set_ylabel("normalised throughput")
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)


def _raw_ratio(df: pd.DataFrame, network_col: str, a: str, b: str, col: str) -> float | None:
    """Mean over networks of (mean of ``a``) / (mean of ``b``) in ``col``."""
    g = df.groupby([network_col, "series"])[col].mean().unstack()
    if a not in g or b not in g:
        return None
    r = (g[a] / g[b]).replace([np.inf, -np.inf], np.nan).dropna()
    return float(r.mean()) if len(r) else None


def analyse_step_traces(ctx: Context, networks_doc: list[str]) -> Section:
    s = Section("7. Synthetic step-function traces (thesis §4.5.2, Figs. 4.17–4.18)")
    s.notes += _unavailable_notes(ctx)
    s.notes.append("[GAP] the five networks (the thesis shows one example, Fig. 4.17, and follows "
                   "Orca without listing rates): " + "; ".join(networks_doc))
    if not len(ctx.df):
        s.paragraphs.append("No run completed.")
        return s
    labels = ctx.labels()
    s.paragraphs.append(f"Setup: buffer 1.5 MB, delay 20 ms each way, no loss, one bulk flow of "
                        f"{fmt(ctx.durations_s.get('main'), 'g')} s per network, algorithm and seed. "
                        f"Per network: throughput / the largest average throughput of any "
                        f"algorithm; average and p95 queueing delay / the smallest average delay "
                        f"of any algorithm (thesis §4.5.2); then mean ± sd across networks.")
    norm = normalise_networks(network_rows(ctx.df, "setting"), reference=THESIS_SCHEMES)
    s.tables.append(_norm_table(norm, labels, "normalised across the networks"))
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    _norm_plot(ax, norm, labels, "Step traces: normalised throughput vs queueing delay")
    s.figures.append((_save(fig, ctx.figure("normalised")),
                      "Normalised throughput against normalised queueing delay (marker: average, "
                      "line: to the p95 delay, bars: sd across networks), as Fig. 4.18."))
    get = lambda k, c: norm.get(k, {}).get(c)   # noqa: E731
    tp, t2, t1 = get("bbr2plus", "tput_mean"), get("bbr2", "tput_mean"), get("bbr", "tput_mean")
    dp, d2, d1 = get("bbr2plus", "delay_mean"), get("bbr2", "delay_mean"), get("bbr", "delay_mean")
    v = combine([judge_range(None if tp is None or t2 is None else tp - t2, (0.05, INF), (1e-9, 0.05)),
                 _bool_verdict(None if dp is None or d2 is None else dp < d2)])
    s.claims.append(Claim("compared with BBRv2, BBRv2+ achieves significantly higher throughput "
                          "and lower queuing delay", "§4.5.2, Fig. 4.18",
                          f"norm. throughput BBRv2+ {fmt(tp)}, BBRv2 {fmt(t2)}; norm. delay "
                          f"BBRv2+ {fmt(dp)}, BBRv2 {fmt(d2)}",
                          "throughput higher by ≥ 0.05 (> 0 partly) and delay lower; combined", v))
    r = tp / t1 if is_number(tp) and is_number(t1) and t1 > 0 else None
    v = combine([_bool_verdict(None if dp is None or d1 is None else dp < d1),
                 judge_range(r, (0.85, 1.0), (0.7, 1.05))])
    s.claims.append(Claim("compared with BBR, BBRv2+ achieves lower queuing delay at the cost of "
                          "slightly lower throughput", "§4.5.2, Fig. 4.18",
                          f"norm. delay BBRv2+ {fmt(dp)}, BBR {fmt(d1)}; throughput ratio "
                          f"BBRv2+/BBR {fmt(r)}",
                          "delay lower, and throughput ratio in 0.85–1.0 (0.7–1.05 partly); combined", v))
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def analyse_cellular(ctx: Context) -> Section:
    s = Section("8. Cellular traces (thesis §4.5.7, Fig. 4.24b; summaries in §1.3 and §4.1)")
    s.notes += _unavailable_notes(ctx)
    for part, why in ctx.skipped.items():
        s.notes.append(f"Part `{part}` skipped: {why}")
    s.notes.append("[GAP] the thesis's 20 saturatr traces are not published; we use the public "
                   "Mahimahi LTE traces (when present) and rove's `synth:cellular` traces (one "
                   "trace per seed), delay 20 ms each way. The thesis emulated each trace's "
                   "delay and loss rate as measured with ping and prints neither; we run every "
                   "trace set without loss and again with 1 % random loss on the data path, and "
                   "judge each separately.")
    if not len(ctx.df):
        s.paragraphs.append("No run completed.")
        return s
    labels = ctx.labels()
    s.paragraphs.append("Setup: buffer 1.5 MB, one bulk flow per trace, algorithm and seed, "
                        "normalised per network as in §4.5.2 (a network = one trace: one "
                        "Mahimahi trace pair, or one seed of the synthetic generator) by the "
                        "algorithms the thesis compared (CUBIC, BBR, BBRv2, BBRv2+; Orca is not "
                        "in rove); other series are normalised by the same figures.")
    plt = _plt()
    names = {"mahimahi": "Mahimahi LTE traces", "synth": "rove synth:cellular traces",
             "mahimahi-loss1": "Mahimahi LTE traces + 1 % loss",
             "synth-loss1": "rove synth:cellular traces + 1 % loss"}
    parts = [p for p in names if p in set(ctx.df["part"])]
    ncol = min(2, max(1, len(parts)))
    nrow = max(1, -(-len(parts) // ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.3 * ncol, 4.2 * nrow), squeeze=False)
    for ax in axes.flat[len(parts):]:
        ax.set_visible(False)
    for ax, part in zip(axes.flat, parts):
        d = ctx.df[ctx.df["part"] == part].copy()
        netcol = "setting" if part.startswith("mahimahi") else "seed"
        norm = normalise_networks(network_rows(d, netcol), reference=THESIS_SCHEMES)
        name = names[part]
        s.tables.append(_norm_table(norm, labels, name))
        raw = d.groupby("series")[["goodput_mbps", "link_down_mean_queue_delay_ms"]].mean()
        s.tables.append(Table(["algorithm", "goodput Mbps", "mean queueing delay ms"],
                              [[labels[k], fmt(raw.loc[k, "goodput_mbps"]),
                                fmt(raw.loc[k, "link_down_mean_queue_delay_ms"], ".1f")]
                               for k in labels if k in raw.index], f"{name}: raw means"))
        _norm_plot(ax, norm, labels, name)
        rt = _raw_ratio(d, netcol, "bbr2plus", "bbr2", "goodput_mbps")
        rd = _raw_ratio(d, netcol, "bbr2plus", "bbr2", "link_down_mean_queue_delay_ms")
        v = combine([judge_range(rt, (1.15, 1.35), (1.05, INF)), judge_range(rd, (0, 1.25), (0, 1.5))])
        s.claims.append(Claim("Compared with BBRv2, BBRv2+ can achieve a throughput improvement of "
                              "about 25% in mobile scenarios, and the queuing delay is close to "
                              "that of BBRv2", f"§1.3 and §4.1 (summaries), Fig. 4.24b [{name}]",
                              f"mean per-network ratio BBRv2+/BBRv2: throughput {fmt(rt)}, "
                              f"mean queueing delay {fmt(rd)}",
                              "throughput ratio 1.15–1.35 holds (≥ 1.05 partly) and delay ratio ≤ "
                              "1.25 (≤ 1.5 partly); combined", v))
        order = sorted([k for k in norm if k in THESIS_SCHEMES and is_number(norm[k]["tput_mean"])],
                       key=lambda k: -norm[k]["tput_mean"])
        d1 = norm.get("bbr", {}).get("delay_mean")
        dp = norm.get("bbr2plus", {}).get("delay_mean")
        v = combine([_bool_verdict(order[:2] == ["bbr", "bbr2plus"] if len(order) >= 2 else None),
                     _bool_verdict(None if d1 is None or dp is None else d1 > dp)])
        s.claims.append(Claim("In mobile scenarios, BBR and BBRv2+ achieve the highest and the "
                              "second-highest throughput respectively ... BBR achieves higher "
                              "throughput at the cost of higher queuing delay",
                              f"§4.5.7, Fig. 4.24b [{name}]",
                              "throughput order: " + " > ".join(labels.get(k, k) for k in order)
                              + f"; norm. delay BBR {fmt(d1)}, BBRv2+ {fmt(dp)}",
                              "order starts BBR, BBRv2+ and BBR's delay is higher; both for holds", v))
    s.figures.append((_save(fig, ctx.figure("normalised")),
                      "Normalised throughput against normalised queueing delay per trace set "
                      "(as Fig. 4.24)."))
    s.verdict = combine(c.verdict for c in s.claims)
    return s
