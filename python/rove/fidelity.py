"""``rove reproduce fidelity [--quick] -o DIR``: the simulator checked against the kernel.

Issue 5, item 6: the same scenarios on both backends — reno, cubic and bbr; one and two flows;
fixed links of 10 and 50 Mbit/s with 20 and 100 ms RTT and buffers of 0.5, 2 and 8 BDP; and the
Mahimahi traces in ``../shared/traces/mahimahi/`` when present — and a report of goodput, mean
and p95 RTT, queueing delay and retransmission rate, simulator against kernel, with the ratio
kernel/simulator and whether it is within the targets (goodput within 5 %, mean and p95 RTT
within 10 %).

The simulator runs in-process (:func:`rove.run`); the kernel backend through the command line,
``python -m rove run --backend kernel SCENARIO -o DIR``, one run at a time (real time). When
this build's ``rove run`` has no ``--backend`` option, or a kernel run fails (not root, no TUN),
the report says so and shows the simulator's side alone.

Layout of DIR::

    scenarios/ID.toml             every generated scenario (run them by hand with rove run)
    runs/ID/sim/, runs/ID/kernel/ results directories (a run whose summary.json exists is reused)
    runs/ID/compare/              rove compare of the two (A = simulator, B = kernel)
    fidelity.json                 every compared row, the targets, what was (not) run
    report.md, report.html        the tables and figures
    goodput.png, rtt.png, queue_delay.png   kernel against simulator, one point per flow/link
    sim_by_buffer.png             the simulator's goodput and p95 RTT against the buffer

Choices the issue leaves open ([GAP], each a parameter of :func:`experiments`):

- duration 30 s per run (``--quick``: 10 s), long enough for cubic's and BBR's cycles at 100 ms
  RTT while keeping the full kernel set under an hour (72 + 3 per trace runs);
- the RTT is split evenly between the data link and the ACK link; the ACK link is 100 Mbit/s
  with the default buffer, so that ACKs are never the bottleneck;
- a buffer of k BDP is ``round(k * rate * RTT / 1500 B)`` packets, at least 2;
- two flows start together (``count = 2``);
- trace scenarios: one flow per algorithm over the trace's downlink, 40 ms RTT, a buffer of
  2 BDP at the trace's mean rate, at most the trace's length;
- ``--quick``: each algorithm, one flow, 10 Mbit/s, 20 ms, 2 BDP; cubic with two flows at
  50 Mbit/s, 100 ms, 0.5 BDP; and, when traces are present, cubic over the first trace.
"""

from __future__ import annotations

import argparse
import html
import base64
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

CCS = ("reno", "cubic", "bbr")
FLOW_COUNTS = (1, 2)
RATES_MBPS = (10, 50)
RTTS_MS = (20, 100)
BUFFERS_BDP = (0.5, 2, 8)
DURATION_S = 30.0  # [GAP] see the module docstring
QUICK_DURATION_S = 10.0
ACK_LINK_RATE = "100Mbps"  # [GAP]
TRACE_RTT_MS = 40  # [GAP]
TRACE_BUFFER_BDP = 2  # [GAP]
PACKET_BYTES = 1500

# Targets (issue 5, "Done when"): |kernel/sim - 1| at most this.
TARGETS = {"goodput_mbps": 0.05, "mean_rtt_ms": 0.10, "p95_rtt_ms": 0.10}
FLOW_KEYS = ("goodput_mbps", "mean_rtt_ms", "p95_rtt_ms", "retrans_rate")
LINK_KEYS = ("mean_queue_delay_ms", "p95_queue_delay_ms")


def default_traces_dir() -> Path | None:
    """``../shared/traces/mahimahi`` next to the checkout, else /work/shared/traces/mahimahi."""
    here = Path(__file__).resolve()
    for base in [p / "shared" / "traces" for p in here.parents[2:4]] + [Path("/work/shared/traces")]:
        d = base / "mahimahi"
        if d.is_dir() and any(d.glob("*.down")):
            return d
    return None


@dataclass
class Experiment:
    id: str
    cc: str
    flows: int
    rtt_ms: float
    buffer_bdp: float
    rate_mbps: float | None = None  # fixed link
    trace: Path | None = None  # trace-driven downlink
    duration_s: float = DURATION_S
    scenario: dict = field(default_factory=dict)


def buffer_pkts(rate_mbps: float, rtt_ms: float, bdp: float) -> int:
    """``bdp`` bandwidth-delay products in packets of 1500 bytes (at least 2)."""
    bdp_bytes = rate_mbps * 1e6 / 8 * rtt_ms / 1e3
    return max(2, round(bdp * bdp_bytes / PACKET_BYTES))


def _fmt_num(x: float) -> str:
    return f"{x:g}".replace(".", "p")


def _scenario(name: str, down: dict, rtt_ms: float, cc: str, flows: int, duration_s: float) -> dict:
    half = f"{rtt_ms / 2:g}ms"
    flow = {"name": cc, "cc": cc, "path": ["down"], "ack_path": ["up"], "size": "inf"}
    if flows > 1:
        flow["count"] = flows
    return {
        "name": name,
        "duration": f"{duration_s:g}s",
        "seed": 1,
        "links": {"down": dict(down, delay=half, queue="droptail"),
                  "up": {"rate": ACK_LINK_RATE, "delay": half}},
        "flows": [flow],
    }


def trace_mean_mbps(path: Path) -> tuple[float, float]:
    """(mean rate in Mbit/s, length in s) of a Mahimahi trace: one 1500-byte packet per line."""
    stamps = [int(line) for line in path.read_text().split() if line.strip()]
    if not stamps:
        raise ValueError(f"{path}: empty trace")
    length_s = max(stamps[-1], 1) / 1000.0
    return len(stamps) * PACKET_BYTES * 8 / length_s / 1e6, length_s


def experiments(quick: bool = False, traces_dir: Path | None = None,
                duration_s: float | None = None) -> list[Experiment]:
    """The experiment list of issue 5 item 6 (or its ``quick`` subset), scenarios included."""
    dur = duration_s if duration_s is not None else (QUICK_DURATION_S if quick else DURATION_S)
    if quick:
        fixed = [(cc, 1, 10, 20, 2) for cc in CCS] + [("cubic", 2, 50, 100, 0.5)]
    else:
        fixed = [(cc, n, rate, rtt, buf) for cc in CCS for n in FLOW_COUNTS for rate in RATES_MBPS
                 for rtt in RTTS_MS for buf in BUFFERS_BDP]
    out = []
    for cc, n, rate, rtt, buf in fixed:
        eid = f"{cc}-{n}f-{rate}M-{rtt}ms-{_fmt_num(buf)}bdp"
        down = {"rate": f"{rate}Mbps", "buffer": f"{buffer_pkts(rate, rtt, buf)}pkt"}
        out.append(Experiment(eid, cc, n, rtt, buf, rate_mbps=rate, duration_s=dur,
                              scenario=_scenario(eid, down, rtt, cc, n, dur)))
    traces = sorted(traces_dir.glob("*.down")) if traces_dir else []
    if quick:
        traces = traces[:1]
    for path in traces:
        mean, length = trace_mean_mbps(path)
        for cc in (("cubic",) if quick else CCS):
            d = min(dur, length)
            eid = f"{cc}-1f-{path.name.replace('.', '_')}-{TRACE_RTT_MS}ms-{TRACE_BUFFER_BDP}bdp"
            down = {"trace": str(path.resolve()),
                    "buffer": f"{buffer_pkts(mean, TRACE_RTT_MS, TRACE_BUFFER_BDP)}pkt"}
            out.append(Experiment(eid, cc, 1, TRACE_RTT_MS, TRACE_BUFFER_BDP, trace=path,
                                  duration_s=d, scenario=_scenario(eid, down, TRACE_RTT_MS, cc, 1, d)))
    return out


# --------------------------------------------------------------------------------------------
# Running


def kernel_backend_status(python: str = sys.executable) -> tuple[bool, str]:
    """Whether ``python -m rove run`` accepts ``--backend kernel``, and why not."""
    try:
        proc = subprocess.run([python, "-m", "rove", "run", "--help"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"cannot run '{python} -m rove run --help': {e}"
    if proc.returncode != 0:
        return False, f"'rove run --help' failed: {proc.stderr.strip().splitlines()[-1:]}"
    if "--backend" not in proc.stdout:
        return False, ("this build's 'rove run' has no --backend option (the kernel backend, "
                       "issue 5 items 1-4, is not merged here)")
    return True, "rove run --backend kernel"


def _have(directory: Path) -> bool:
    return (directory / "summary.json").is_file()


def _run_sim(scenario_file: Path, out: Path) -> str | None:
    import rove

    try:
        rove.run(str(scenario_file), out=out)
    except Exception as e:  # noqa: BLE001 - one failed point must not end the whole report
        return f"{type(e).__name__}: {' '.join(str(e).split())}"
    return None


def _run_kernel(scenario_file: Path, out: Path, duration_s: float,
                python: str = sys.executable) -> str | None:
    cmd = [python, "-m", "rove", "run", "--backend", "kernel", str(scenario_file), "-o", str(out),
           "--quiet"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=duration_s * 3 + 120)
    except subprocess.TimeoutExpired:
        return f"timed out after {duration_s * 3 + 120:.0f} s"
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return f"exit {proc.returncode}: {lines[-1] if lines else '(no message)'}"
    return None


@dataclass
class Outcome:
    experiment: Experiment
    sim: dict | None = None
    kernel: dict | None = None
    sim_error: str | None = None
    kernel_error: str | None = None
    compare_error: str | None = None


def _overlay(run_dir: Path) -> str | None:
    """``rove compare`` of the two runs into ``run_dir/compare`` (figures over each other)."""
    from .compare import compare

    try:
        compare([run_dir / "sim", run_dir / "kernel"], out=run_dir / "compare")
    except Exception as e:  # noqa: BLE001 - a figure must not end the whole report
        return f"{type(e).__name__}: {' '.join(str(e).split())}"
    return None


def _write_scenario(path: Path, scenario: dict) -> None:
    import tomli_w

    from .results import write_bytes_atomically

    write_bytes_atomically(path, tomli_w.dumps(scenario).encode("utf-8"))


def _load_summary(d: Path) -> dict | None:
    try:
        return json.loads((d / "summary.json").read_text())
    except (OSError, ValueError):
        return None


def run_all(exps: Sequence[Experiment], out: Path, kernel: bool,
            log: Callable[[str], None] = lambda s: None) -> list[Outcome]:
    """Run every experiment (reusing results already in ``out``).

    The kernel backend exits 2 for an unusable machine (not root, no TUN) as for bad input; when
    two scenarios in a row fail with the same exit-2 message, the remaining kernel runs are
    skipped with that message instead of failing one by one.
    """
    (out / "scenarios").mkdir(parents=True, exist_ok=True)
    outcomes = []
    previous_usage_error = None
    skip_kernel = None
    for i, e in enumerate(exps, 1):
        scen = out / "scenarios" / f"{e.id}.toml"
        _write_scenario(scen, e.scenario)
        run_dir = out / "runs" / e.id
        run_dir.mkdir(parents=True, exist_ok=True)
        o = Outcome(e)
        t0 = time.monotonic()
        if not _have(run_dir / "sim"):
            o.sim_error = _run_sim(scen, run_dir / "sim")
        o.sim = _load_summary(run_dir / "sim") if o.sim_error is None else None
        if kernel:
            if _have(run_dir / "kernel"):
                pass
            elif skip_kernel:
                o.kernel_error = f"not run: {skip_kernel}"
            else:
                o.kernel_error = _run_kernel(scen, run_dir / "kernel", e.duration_s)
                usage = o.kernel_error if (o.kernel_error or "").startswith("exit 2:") else None
                if usage and usage == previous_usage_error:
                    skip_kernel = f"skipped after the same error twice ({usage})"
                previous_usage_error = usage
            o.kernel = _load_summary(run_dir / "kernel") if o.kernel_error is None else None
        if o.sim and o.kernel:
            o.compare_error = _overlay(run_dir)
        status = [f"sim {'ok' if o.sim else 'FAILED: ' + str(o.sim_error)}"]
        if kernel:
            status.append(f"kernel {'ok' if o.kernel else 'FAILED: ' + str(o.kernel_error)}")
        log(f"[{i}/{len(exps)}] {e.id}: {', '.join(status)} ({time.monotonic() - t0:.1f} s)")
        outcomes.append(o)
    return outcomes


# --------------------------------------------------------------------------------------------
# Comparing


def _ratio(sim: Any, kern: Any) -> float | None:
    from .compare import ratio

    return ratio(sim, kern)


def _within(key: str, r: float | None) -> bool | None:
    if key not in TARGETS or r is None or math.isinf(r):
        return None
    return abs(r - 1.0) <= TARGETS[key] + 1e-12


def rows_of(o: Outcome) -> list[dict]:
    """One row per flow and per bottleneck (``down``) link: sim, kernel, ratio, within target."""
    e = o.experiment
    base = {"id": e.id, "cc": e.cc, "flows": e.flows,
            "link": f"{e.rate_mbps:g} Mbit/s" if e.rate_mbps else e.trace.name,
            "rtt_ms": e.rtt_ms, "buffer_bdp": e.buffer_bdp}
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
    """Per algorithm and target metric: how many flows were compared and how many within target."""
    out: dict[str, dict[str, Any]] = {}
    for cc in CCS:
        per = {}
        for key in TARGETS:
            judged = [r[key]["within"] for r in rows
                      if r["kind"] == "flow" and r["cc"] == cc and r[key]["within"] is not None]
            errs = [abs(r[key]["ratio"] - 1) for r in rows if r["kind"] == "flow" and r["cc"] == cc
                    and r[key]["ratio"] is not None]
            per[key] = {"compared": len(judged), "within": sum(judged),
                        "median_abs_error": (sorted(errs)[len(errs) // 2] if errs else None)}
        out[cc] = per
    return out


# --------------------------------------------------------------------------------------------
# Report


def _pyplot():
    from .report import _pyplot as pyplot

    return pyplot()


_CC_COLORS = {"reno": "tab:blue", "cubic": "tab:orange", "bbr": "tab:green"}


def _fig_scatter(rows, keys: Sequence[tuple[str, str]], kind: str, title: str, kernel_note: str):
    plt = _pyplot()
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
            ax.text(0.5, 0.5, kernel_note, ha="center", va="center", wrap=True,
                    transform=ax.transAxes, color="gray", fontsize=8)
        else:
            ax.legend(loc="upper left")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _fig_sim_by_buffer(rows):
    plt = _pyplot()
    fixed = [r for r in rows if r["kind"] == "flow" and not r["link"].endswith((".down", ".up"))
             and "Mbit/s" in r["link"]]
    combos = sorted({(r["link"], r["rtt_ms"], r["flows"]) for r in fixed})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    for cc in CCS:
        for (link, rtt, n) in combos:
            sel = sorted([r for r in fixed if r["cc"] == cc and (r["link"], r["rtt_ms"], r["flows"])
                          == (link, rtt, n)], key=lambda r: r["buffer_bdp"])
            if not sel:
                continue
            # per buffer: the flows' total goodput as a share of the link, their worst p95 RTT
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
    fig.tight_layout()
    return fig


def _save(fig, path: Path) -> None:
    from .results import replace_atomically

    plt = _pyplot()
    try:
        replace_atomically(path, lambda tmp: fig.savefig(tmp, format="png"))
    finally:
        plt.close(fig)


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


def _table_rows(rows, kind, columns) -> tuple[list[str], list[list[str]]]:
    head = ["scenario", "flow" if kind == "flow" else "link"]
    for _, label in columns:
        head += [f"{label} sim", "kernel", "k/s"] + (["ok"] if _ in TARGETS else [])
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
    return head, body


def _md_table(head, body) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(c) + " |" for c in body]
    return "\n".join(lines)


def _html_table(head, body) -> str:
    h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
                for cells in body)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table>"


def _agreement_table(agree) -> tuple[list[str], list[list[str]]]:
    head = ["cc"] + [f"{k} within ±{v:.0%}" for k, v in TARGETS.items()] + \
        [f"{k} median abs. error" for k in TARGETS]
    body = []
    for cc, per in agree.items():
        cells = [cc] + [f"{per[k]['within']}/{per[k]['compared']}" for k in TARGETS]
        cells += ["–" if per[k]["median_abs_error"] is None else f"{per[k]['median_abs_error']:.1%}"
                  for k in TARGETS]
        body.append(cells)
    return head, body


_FIGS = (("goodput", "Goodput, kernel against simulator"),
         ("rtt", "Mean and p95 RTT, kernel against simulator"),
         ("queue_delay", "Queueing delay at the bottleneck, kernel against simulator"),
         ("sim_by_buffer", "Simulator: goodput and delay against the buffer"))


def write_report(out: Path, outcomes: Sequence[Outcome], kernel_status: str, quick: bool) -> Path:
    rows = [r for o in outcomes for r in rows_of(o)]
    agree = agreement(rows)
    failures = [{"id": o.experiment.id, "sim_error": o.sim_error, "kernel_error": o.kernel_error}
                for o in outcomes if o.sim_error or o.kernel_error]
    n_kernel = sum(1 for o in outcomes if o.kernel)
    note = f"kernel results: {n_kernel} of {len(outcomes)} runs ({kernel_status})"
    figs = {
        "goodput": _fig_scatter(rows, [("goodput_mbps", "goodput (Mbit/s)")], "flow",
                                "Goodput per flow", note),
        "rtt": _fig_scatter(rows, [("mean_rtt_ms", "mean RTT (ms)"), ("p95_rtt_ms", "p95 RTT (ms)")],
                            "flow", "RTT per flow", note),
        "queue_delay": _fig_scatter(rows, [("mean_queue_delay_ms", "mean queue delay (ms)"),
                                           ("p95_queue_delay_ms", "p95 queue delay (ms)")],
                                    "link", "Bottleneck queueing delay", note),
        "sim_by_buffer": _fig_sim_by_buffer(rows),
    }
    for key, fig in figs.items():
        _save(fig, out / f"{key}.png")
    from .results import write_bytes_atomically

    doc = {"quick": quick, "kernel": kernel_status, "kernel_runs": n_kernel,
           "runs": len(outcomes), "targets": TARGETS, "agreement": agree, "failures": failures,
           "rows": rows}
    write_bytes_atomically(out / "fidelity.json",
                           (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode())
    intro = [f"Simulator against kernel, {len(outcomes)} scenarios"
             f"{' (--quick subset)' if quick else ''}; ratio k/s = kernel / simulator; "
             f"targets: goodput within 5 %, mean and p95 RTT within 10 %.", note + "."]
    if failures:
        intro.append(f"{len(failures)} scenario(s) had a failed run (listed at the end).")
    ah, ab = _agreement_table(agree)
    fh, fb = _table_rows(rows, "flow", _COLUMNS)
    lh, lb = _table_rows(rows, "link", _LINK_COLUMNS)
    md = ["# rove reproduce fidelity", ""] + intro + ["", "## Agreement per algorithm", "",
                                                      _md_table(ah, ab)]
    for key, title in _FIGS:
        md += ["", f"## {title}", "", f"![{title}]({key}.png)"]
    md += ["", "## Flows", "", _md_table(fh, fb), "", "## Bottleneck link", "", _md_table(lh, lb)]
    if failures:
        md += ["", "## Failed runs", ""] + [f"- {f['id']}: sim: {f['sim_error'] or 'ok'}; "
                                            f"kernel: {f['kernel_error'] or 'ok'}" for f in failures]
    md += ["", "Scenarios: `scenarios/`; results: `runs/ID/sim`, `runs/ID/kernel`; both over "
           "each other (rove compare, A = simulator, B = kernel): `runs/ID/compare/compare.html`; "
           "every row: `fidelity.json`."]
    write_bytes_atomically(out / "report.md", ("\n".join(md) + "\n").encode())
    from .report import _CSS

    parts = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             f"<title>rove reproduce fidelity</title><style>{_CSS}</style></head><body>",
             "<h1>rove reproduce fidelity</h1>"]
    parts += [f"<p>{html.escape(x)}</p>" for x in intro]
    parts += ["<h2>Agreement per algorithm</h2>", _html_table(ah, ab)]
    for key, title in _FIGS:
        data = base64.b64encode((out / f"{key}.png").read_bytes()).decode("ascii")
        parts.append(f"<h2>{html.escape(title)}</h2><img alt=\"{key}\" "
                     f"src=\"data:image/png;base64,{data}\">")
    parts += ["<h2>Flows</h2>", _html_table(fh, fb), "<h2>Bottleneck link</h2>", _html_table(lh, lb)]
    if failures:
        parts.append("<h2>Failed runs</h2><ul>" + "".join(
            f"<li>{html.escape(f['id'])}: sim: {html.escape(f['sim_error'] or 'ok')}; kernel: "
            f"{html.escape(f['kernel_error'] or 'ok')}</li>" for f in failures) + "</ul>")
    parts.append("</body></html>\n")
    write_bytes_atomically(out / "report.html", "\n".join(parts).encode())
    return out / "report.html"


# --------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    """``rove reproduce fidelity [--quick] -o DIR [--duration SECS] [--sim-only]``."""
    from .cli import CliError, _Parser

    try:
        return _main(_Parser, argv)
    except CliError as e:  # bad options: one line, exit 2 (as every rove command)
        print(f"rove: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2


def _main(parser_class, argv: list[str]) -> int:
    p = parser_class(prog="rove reproduce fidelity",
                                description="Run the fidelity scenarios on the simulator and the "
                                            "kernel backend and write report.md/report.html.")
    p.add_argument("--quick", action="store_true", help="a small subset (a few minutes)")
    p.add_argument("-o", "--out", metavar="DIR", required=True, help="output directory")
    p.add_argument("--duration", type=float, metavar="SECS",
                   help=f"seconds per run (default {DURATION_S:g}, --quick {QUICK_DURATION_S:g})")
    p.add_argument("--sim-only", action="store_true", help="do not run the kernel backend")
    p.add_argument("--traces", metavar="DIR",
                   help="Mahimahi traces (*.down); default ../shared/traces/mahimahi if present")
    args = p.parse_args(argv)
    if args.duration is not None and not (args.duration > 0 and math.isfinite(args.duration)):
        p.error(f"--duration: expected seconds > 0, got {args.duration}")
    from .outputs import OutputError, check_study_dir, mark_study_dir

    try:
        out = check_study_dir(args.out)
    except OutputError as e:
        p.error(str(e))
    traces = Path(args.traces) if args.traces else default_traces_dir()
    if args.traces and not traces.is_dir():
        p.error(f"--traces {traces}: no such directory")
    exps = experiments(args.quick, traces, args.duration)
    if args.sim_only:
        kernel, status = False, "not run (--sim-only)"
    else:
        kernel, status = kernel_backend_status()
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    log(f"fidelity: {len(exps)} scenarios -> {out}; kernel backend: "
        f"{'yes' if kernel else 'NO: ' + status}")
    mark_study_dir(out, "fidelity")
    outcomes = run_all(exps, out, kernel, log)
    report = write_report(out, outcomes, status, args.quick)
    print(f"fidelity report: {report}")
    return 1 if any(o.sim_error for o in outcomes) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
