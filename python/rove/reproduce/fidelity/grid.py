"""Experiment 1 of the fidelity study: issue 5's grid (reno, cubic and bbr; one and two flows;
10 and 50 Mbit/s, 20 and 100 ms, 0.5, 2 and 8 BDP; each Mahimahi trace with a 2-BDP buffer),
one simulator run against one kernel run per scenario, each flow judged against issue 5's
targets (goodput within 5 %, mean and p95 RTT within 10 %).

Choices the issue leaves open ([GAP], each a parameter of :func:`grid_cases`): 30-s runs
(``--quick``: 10 s); the RTT split evenly between the data and the ACK link, the ACK link at
100 Mbit/s; a buffer of k BDP is ``round(k × rate × RTT / 1500 B)`` packets, at least 2; two
flows start together; trace scenarios: one flow over the trace's downlink, 40 ms RTT, 2 BDP at
the trace's mean rate, at most the trace's length. ``--quick``: each algorithm with one flow at
10 Mbit/s, 20 ms, 2 BDP; cubic with two flows at 50 Mbit/s, 100 ms, 0.5 BDP; cubic over the
first trace (when traces are present).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

from ..document import Section, Table
from ..study import Context, pyplot, save_figure
from ..verdicts import NOT_MEASURED, Claim, combine, judge_fraction
from .runs import Case, Outcome, buffer_pkts, fmt_id, run_cases, scenario, trace_mean_mbps

CCS = ("reno", "cubic", "bbr")
FLOW_COUNTS = (1, 2)
RATES_MBPS = (10, 50)
RTTS_MS = (20, 100)
BUFFERS_BDP = (0.5, 2, 8)
DURATION_S = 30.0  # [GAP] long enough for cubic's and BBR's cycles at 100 ms RTT
QUICK_DURATION_S = 10.0
TRACE_RTT_MS = 40  # [GAP]
TRACE_BUFFER_BDP = 2  # [GAP]

# Targets (issue 5, "Done when"): |kernel/sim - 1| at most this.
TARGETS = {"goodput_mbps": 0.05, "mean_rtt_ms": 0.10, "p95_rtt_ms": 0.10}
FLOW_KEYS = ("goodput_mbps", "mean_rtt_ms", "p95_rtt_ms", "retrans_rate")
LINK_KEYS = ("mean_queue_delay_ms", "p95_queue_delay_ms")
# A metric's verdict per algorithm: the share of its flows within target.
HOLDS_AT, PARTLY_AT = 0.8, 0.5


def grid_cases(quick: bool = False, traces_dir: Path | None = None,
               duration_s: float | None = None) -> list[Case]:
    """The scenarios of issue 5 item 6 (or its ``quick`` subset)."""
    dur = duration_s if duration_s is not None else (QUICK_DURATION_S if quick else DURATION_S)
    if quick:
        fixed = [(cc, 1, 10, 20, 2) for cc in CCS] + [("cubic", 2, 50, 100, 0.5)]
    else:
        fixed = [(cc, n, rate, rtt, buf) for cc in CCS for n in FLOW_COUNTS for rate in RATES_MBPS
                 for rtt in RTTS_MS for buf in BUFFERS_BDP]
    out = []
    for cc, n, rate, rtt, buf in fixed:
        cid = f"{cc}-{n}f-{rate}M-{rtt}ms-{fmt_id(buf)}bdp"
        down = {"rate": f"{rate}Mbps", "buffer": f"{buffer_pkts(rate, rtt, buf)}pkt"}
        out.append(Case(cid, cc, n, rtt, buf, rate_mbps=rate, duration_s=dur,
                        scenario=scenario(cid, down, rtt, cc, n, dur)))
    traces = sorted(traces_dir.glob("*.down")) if traces_dir else []
    if quick:
        traces = traces[:1]
    for path in traces:
        mean, length = trace_mean_mbps(path)
        for cc in (("cubic",) if quick else CCS):
            d = min(dur, length)
            cid = f"{cc}-1f-{path.name.replace('.', '_')}-{TRACE_RTT_MS}ms-{TRACE_BUFFER_BDP}bdp"
            down = {"trace": str(path.resolve()),
                    "buffer": f"{buffer_pkts(mean, TRACE_RTT_MS, TRACE_BUFFER_BDP)}pkt"}
            out.append(Case(cid, cc, 1, TRACE_RTT_MS, TRACE_BUFFER_BDP, trace=path,
                            duration_s=d, scenario=scenario(cid, down, TRACE_RTT_MS, cc, 1, d)))
    return out


def run(exp, out: Path, quick: bool, jobs: int, log, options) -> Context:
    cases = grid_cases(quick, options.get("traces"), options.get("duration_s"))
    outcomes = run_cases(cases, out, options["kernel"], log)
    failures = [f"{o.case.id}: simulator: {o.sim_error}" for o in outcomes if o.sim_error]
    return Context(exp.id, out, quick, options=options, data=outcomes, failures=failures)


# --------------------------------------------------------------------------------------------
# Comparing


def _ratio(sim: Any, kern: Any) -> float | None:
    from ...compare import ratio

    return ratio(sim, kern)


def _within(key: str, r: float | None) -> bool | None:
    if key not in TARGETS or r is None or math.isinf(r):
        return None
    return abs(r - 1.0) <= TARGETS[key] + 1e-12


def rows_of(o: Outcome) -> list[dict]:
    """One row per flow and per bottleneck (``down``) link: sim, kernel, ratio, within target."""
    c = o.case
    base = {"id": c.id, "cc": c.cc, "flows": c.flows,
            "link": f"{c.rate_mbps:g} Mbit/s" if c.rate_mbps else c.trace.name,
            "rtt_ms": c.rtt_ms, "buffer_bdp": c.buffer_bdp}
    if o.sim is None:
        return []
    rows = []
    kflows = {str(f.get("name")): f for f in (o.kernel or {}).get("flows", [])}
    for f in o.sim.get("flows", []):
        k = kflows.get(str(f.get("name")), {})
        row = dict(base, kind="flow", name=str(f.get("name")))
        for key in FLOW_KEYS:
            r = _ratio(f.get(key), k.get(key)) if o.kernel else None
            row[key] = {"sim": f.get(key), "kernel": k.get(key) if o.kernel else None,
                        "ratio": None if r is None or math.isinf(r) else r,
                        "within": _within(key, r)}
        rows.append(row)
    klinks = {str(x.get("name")): x for x in (o.kernel or {}).get("links", [])}
    for link in o.sim.get("links", []):
        if str(link.get("name")) != "down":
            continue
        k = klinks.get("down", {})
        row = dict(base, kind="link", name="down")
        for key in LINK_KEYS:
            r = _ratio(link.get(key), k.get(key)) if o.kernel else None
            row[key] = {"sim": link.get(key), "kernel": k.get(key) if o.kernel else None,
                        "ratio": None if r is None or math.isinf(r) else r, "within": None}
        rows.append(row)
    return rows


def agreement(rows: Sequence[dict]) -> dict[str, dict[str, Any]]:
    """Per algorithm and target metric: how many flows were compared, how many within target,
    the median absolute error, and the verdict (share within target ≥ 80 % holds, ≥ 50 %
    partly; not measured without kernel results)."""
    out: dict[str, dict[str, Any]] = {}
    for cc in CCS:
        per = {}
        for key in TARGETS:
            judged = [r[key]["within"] for r in rows
                      if r["kind"] == "flow" and r["cc"] == cc and r[key]["within"] is not None]
            errs = sorted(abs(r[key]["ratio"] - 1) for r in rows if r["kind"] == "flow"
                          and r["cc"] == cc and r[key]["ratio"] is not None)
            verdict, _ = judge_fraction(judged, HOLDS_AT, PARTLY_AT)
            per[key] = {"compared": len(judged), "within": sum(judged),
                        "median_abs_error": (errs[len(errs) // 2] if errs else None),
                        "verdict": verdict}
        out[cc] = per
    return out


# --------------------------------------------------------------------------------------------
# Figures

_CC_COLORS = {"reno": "tab:blue", "cubic": "tab:orange", "bbr": "tab:green"}


def fig_scatter(rows, keys: Sequence[tuple[str, str]], kind: str, title: str, note: str):
    """Kernel against simulator, one point per flow (or link) per metric, with the target."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(keys), figsize=(5.2 * len(keys), 4.8), squeeze=False)
    for ax, (key, label) in zip(axes[0], keys):
        pts = [(r[key]["sim"], r[key]["kernel"], r["cc"]) for r in rows if r["kind"] == kind
               and isinstance(r[key]["sim"], (int, float)) and isinstance(r[key]["kernel"], (int, float))]
        for cc in CCS:
            xs = [p[0] for p in pts if p[2] == cc]
            ys = [p[1] for p in pts if p[2] == cc]
            if xs:
                ax.scatter(xs, ys, s=22, color=_CC_COLORS[cc], label=cc, alpha=0.8)
        hi = max([p[0] for p in pts] + [p[1] for p in pts] + [1e-9]) * 1.08
        ax.plot([0, hi], [0, hi], color="black", lw=0.8)
        tol = TARGETS.get(key)
        if tol:
            ax.fill_between([0, hi], [0, hi * (1 - tol)], [0, hi * (1 + tol)], color="gray",
                            alpha=0.15, label=f"±{tol:.0%} target")
        ax.set_xlim(0, hi)
        ax.set_ylim(0, hi)
        ax.set_xlabel(f"simulator: {label}")
        ax.set_ylabel(f"kernel: {label}")
        if not pts:
            ax.text(0.5, 0.5, note, ha="center", va="center", wrap=True,
                    transform=ax.transAxes, color="gray", fontsize=8)
        else:
            ax.legend(loc="upper left")
    fig.suptitle(title)
    return fig


def fig_sim_by_buffer(rows):
    """The simulator's goodput share and p95 RTT against the buffer, every fixed-link point."""
    plt = pyplot()
    fixed = [r for r in rows if r["kind"] == "flow" and "Mbit/s" in r["link"]]
    combos = sorted({(r["link"], r["rtt_ms"], r["flows"]) for r in fixed})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    for cc in CCS:
        for (link, rtt, n) in combos:
            sel = [r for r in fixed if r["cc"] == cc and (r["link"], r["rtt_ms"], r["flows"])
                   == (link, rtt, n)]
            if not sel:
                continue
            bufs = sorted({r["buffer_bdp"] for r in sel})
            rate = float(link.split()[0])
            share = [sum(r["goodput_mbps"]["sim"] or 0 for r in sel if r["buffer_bdp"] == b) / rate
                     for b in bufs]
            p95 = [max((r["p95_rtt_ms"]["sim"] or 0) / rtt for r in sel if r["buffer_bdp"] == b)
                   for b in bufs]
            kw = dict(color=_CC_COLORS[cc], alpha=0.7, lw=1.0, marker="o", ms=3)
            axes[0].plot(bufs, share, **kw)
            axes[1].plot(bufs, p95, **kw)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks(list(BUFFERS_BDP), [f"{b:g}" for b in BUFFERS_BDP])
        ax.minorticks_off()
        ax.set_xlabel("buffer (BDP)")
    axes[0].set_ylabel("total goodput / link rate")
    axes[1].set_ylabel("p95 RTT / base RTT")
    for cc in CCS:
        axes[0].plot([], [], color=_CC_COLORS[cc], label=cc)
    axes[0].legend(loc="lower right")
    fig.suptitle("Simulator: every fixed-link scenario (one line per rate, RTT, flow count)")
    return fig


# --------------------------------------------------------------------------------------------
# The section


def _cell(v: Any, spec: str = ".4g") -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return f"{v:{spec}}"
    return str(v)


_COLUMNS = (("goodput_mbps", "goodput (Mbit/s)"), ("mean_rtt_ms", "mean RTT (ms)"),
            ("p95_rtt_ms", "p95 RTT (ms)"), ("retrans_rate", "retrans. rate"))
_LINK_COLUMNS = (("mean_queue_delay_ms", "mean queue delay (ms)"),
                 ("p95_queue_delay_ms", "p95 queue delay (ms)"))
_METRIC = {"goodput_mbps": "goodput", "mean_rtt_ms": "mean RTT", "p95_rtt_ms": "p95 RTT"}


def _rows_table(rows, kind, columns, caption) -> Table:
    head = ["scenario", "flow" if kind == "flow" else "link"]
    for key, label in columns:
        head += [f"{label} sim", "kernel", "k/s"] + (["ok"] if key in TARGETS else [])
    body = []
    for r in rows:
        if r["kind"] != kind:
            continue
        cells = [r["id"], r["name"]]
        for key, _ in columns:
            m = r[key]
            cells += [_cell(m["sim"]), _cell(m["kernel"]), _cell(m["ratio"], ".3f")]
            if key in TARGETS:
                cells.append(_cell(m["within"]))
        body.append(cells)
    return Table(head, body, caption)


def analyse(ctx: Context) -> Section:
    outcomes: list[Outcome] = ctx.data
    kernel_status = ctx.options.get("kernel_status", "")
    s = Section("1. Issue 5's grid: one simulator run against one kernel run per scenario")
    rows = [r for o in outcomes for r in rows_of(o)]
    agree = agreement(rows)
    n_kernel = sum(1 for o in outcomes if o.kernel)
    note = f"kernel results: {n_kernel} of {len(outcomes)} runs ({kernel_status})"
    s.paragraphs.append(
        f"{len(outcomes)} scenarios{' (the --quick subset)' if ctx.quick else ''}: reno, cubic "
        f"and bbr over fixed links and the Mahimahi traces (when present); ratio k/s = kernel / "
        f"simulator; targets (issue 5): goodput within 5 %, mean and p95 RTT within 10 %. "
        f"{note}.")
    for cc in CCS:
        for key, tol in TARGETS.items():
            a = agree[cc][key]
            err = a["median_abs_error"]
            measured = (f"{a['within']} of {a['compared']} flows within ±{tol:.0%}"
                        + ("" if err is None else f"; median |k/s − 1| = {err:.1%}"))
            if a["compared"] == 0:
                measured = f"no kernel results ({kernel_status})"
            s.claims.append(Claim(
                f"{cc}: the simulator's {_METRIC[key]} is within {tol:.0%} of the Linux kernel's "
                f"on the same scenario", "issue 5, “Done when” (targets); DESIGN.md: one "
                f"scenario file runs on either backend", measured,
                f"share of {cc}'s flows within ±{tol:.0%}: ≥ {HOLDS_AT:.0%} holds, ≥ "
                f"{PARTLY_AT:.0%} partly; not measured without kernel runs", a["verdict"]))
    s.verdict = combine(c.verdict for c in s.claims) if n_kernel else NOT_MEASURED
    figs = (("goodput", "Goodput per flow, kernel against simulator",
             fig_scatter(rows, [("goodput_mbps", "goodput (Mbit/s)")], "flow", "Goodput per flow",
                         note)),
            ("rtt", "Mean and p95 RTT per flow, kernel against simulator",
             fig_scatter(rows, [("mean_rtt_ms", "mean RTT (ms)"), ("p95_rtt_ms", "p95 RTT (ms)")],
                         "flow", "RTT per flow", note)),
            ("queue_delay", "Queueing delay at the bottleneck, kernel against simulator",
             fig_scatter(rows, [("mean_queue_delay_ms", "mean queue delay (ms)"),
                                ("p95_queue_delay_ms", "p95 queue delay (ms)")],
                         "link", "Bottleneck queueing delay", note)),
            ("sim_by_buffer", "Simulator: goodput and delay against the buffer",
             fig_sim_by_buffer(rows)))
    for key, caption, fig in figs:
        s.figures.append((save_figure(fig, ctx.figure(key)), caption))
    s.tables.append(_rows_table(rows, "flow", _COLUMNS, "per flow"))
    s.tables.append(_rows_table(rows, "link", _LINK_COLUMNS, "bottleneck link"))
    failures = [{"id": o.case.id, "sim_error": o.sim_error, "kernel_error": o.kernel_error}
                for o in outcomes if o.sim_error or o.kernel_error]
    s.notes += [f"{f['id']}: simulator: {f['sim_error'] or 'ok'}; kernel: "
                f"{f['kernel_error'] or 'ok'}" for f in failures]
    s.notes.append("Scenarios: `scenarios/`; results: `runs/ID/sim`, `runs/ID/kernel`; both "
                   "over each other (rove compare): `runs/ID/compare/compare.html`; every row: "
                   "`fidelity.json`.")
    from ...results import write_bytes_atomically

    doc = {"quick": ctx.quick, "kernel": kernel_status, "kernel_runs": n_kernel,
           "runs": len(outcomes), "targets": TARGETS, "agreement": agree, "failures": failures,
           "rows": rows}
    write_bytes_atomically(ctx.out / "fidelity.json",
                           (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode())
    return s
