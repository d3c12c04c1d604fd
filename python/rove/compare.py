"""``rove compare DIR_A DIR_B [-o OUT]``: two results directories side by side.

Typical use is the simulator against the kernel backend on the same scenario, but any two
results directories work (two seeds, two algorithms, two queue settings): both backends write the
same schema (:mod:`rove.results`).

Flows are matched by name (both directories must hold the same flow names; otherwise a one-line
error lists them); links are matched by name too, and a link present on one side only is listed
but not compared. For each flow: goodput, mean and p95 RTT, retransmission rate and flow
completion time; for each link: utilization, mean and p95 queueing delay and drops — A, B and
the ratio **B/A** (1.0 when both are 0; ``inf`` when only A is 0; empty when a value is missing).

With ``-o OUT``, OUT also gets:

- ``goodput.png``, ``cwnd.png``, ``rtt.png``: per flow, A (solid) and B (dashed) over time;
- ``queue_sojourn_cdf.png``: per link, the CDF of every packet's queueing delay, A and B;
- ``compare.md``, ``compare.html`` (figures embedded) and ``compare.json`` (the table's rows).
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .outputs import check_output_dir
from .results import ResultsError, RunResult, read_results, write_bytes_atomically

__all__ = ["CompareError", "Row", "FLOW_METRICS", "LINK_METRICS", "ratio", "compare_summaries",
           "format_table", "compare", "Comparison"]

# (summary key, what the table calls it). Keys are those of summary.json (DESIGN.md, "Results").
FLOW_METRICS = (
    ("goodput_mbps", "goodput (Mbit/s)"),
    ("mean_rtt_ms", "mean RTT (ms)"),
    ("p95_rtt_ms", "p95 RTT (ms)"),
    ("retrans_rate", "retrans. rate"),
    ("fct_s", "FCT (s)"),
)
LINK_METRICS = (
    ("utilization", "utilization"),
    ("mean_queue_delay_ms", "mean queue delay (ms)"),
    ("p95_queue_delay_ms", "p95 queue delay (ms)"),
    ("drops", "drops"),
)

_MAX_PANELS = 8
_THROUGHPUT_WINDOW_S = 0.1


class CompareError(ResultsError):
    """Two results directories that cannot be compared (e.g. different flow names)."""


@dataclass
class Row:
    kind: str  # "flow" or "link"
    name: str
    metric: str  # summary key
    a: float | None
    b: float | None
    ratio: float | None  # b / a


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return None if math.isnan(v) else float(v)


def ratio(a: Any, b: Any) -> float | None:
    """B/A: ``None`` if either is missing, 1.0 if both are 0, ``inf`` if only A is 0."""
    a, b = _number(a), _number(b)
    if a is None or b is None:
        return None
    if a == 0:
        return 1.0 if b == 0 else math.inf
    return b / a


def _names(summary: dict, key: str) -> list[str]:
    return [str(x.get("name")) for x in summary.get(key, [])]


def compare_summaries(sa: dict, sb: dict, where_a: str = "A", where_b: str = "B") -> tuple[list[Row], list[str]]:
    """The rows of the comparison and notes (links present on one side only).

    Raises :class:`CompareError` when the flow names differ.
    """
    fa, fb = _names(sa, "flows"), _names(sb, "flows")
    if sorted(fa) != sorted(fb):
        only_a = sorted(set(fa) - set(fb))
        only_b = sorted(set(fb) - set(fa))
        detail = []
        if only_a:
            detail.append(f"only in {where_a}: {', '.join(only_a)}")
        if only_b:
            detail.append(f"only in {where_b}: {', '.join(only_b)}")
        if not detail:
            detail.append("a flow name is repeated")
        raise CompareError(
            f"flows differ ({'; '.join(detail)}); {where_a} has [{', '.join(fa)}], {where_b} has "
            f"[{', '.join(fb)}] (flows are matched by name)")
    rows: list[Row] = []
    by_b = {str(f.get("name")): f for f in sb.get("flows", [])}
    for f in sa.get("flows", []):
        g = by_b[str(f.get("name"))]
        for key, _ in FLOW_METRICS:
            a, b = _number(f.get(key)), _number(g.get(key))
            rows.append(Row("flow", str(f.get("name")), key, a, b, ratio(a, b)))
    la, lb = _names(sa, "links"), _names(sb, "links")
    links_b = {str(x.get("name")): x for x in sb.get("links", [])}
    for link in sa.get("links", []):
        other = links_b.get(str(link.get("name")))
        if other is None:
            continue
        for key, _ in LINK_METRICS:
            a, b = _number(link.get(key)), _number(other.get(key))
            rows.append(Row("link", str(link.get("name")), key, a, b, ratio(a, b)))
    notes = []
    for f in sa.get("flows", []):
        ca, cb = f.get("cc"), by_b[str(f.get("name"))].get("cc")
        if ca != cb:
            notes.append(f"flow {f.get('name')}: cc {ca} in {where_a}, {cb} in {where_b}")
    if set(la) - set(lb):
        notes.append(f"links only in {where_a} (not compared): {', '.join(sorted(set(la) - set(lb)))}")
    if set(lb) - set(la):
        notes.append(f"links only in {where_b} (not compared): {', '.join(sorted(set(lb) - set(la)))}")
    return rows, notes


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if math.isinf(v):
        return "inf"
    if v == 0:
        return "0"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        return f"{v:.3e}"
    return f"{v:.4g}"


def _fmt_ratio(r: float | None) -> str:
    if r is None:
        return "-"
    return "inf" if math.isinf(r) else f"{r:.3f}"


_LABELS = dict(FLOW_METRICS + LINK_METRICS)


def _table_cells(rows: Sequence[Row]) -> list[list[str]]:
    cells = []
    previous = None
    for r in rows:
        who = (r.kind, r.name)
        cells.append([r.name if who != previous else "", _LABELS.get(r.metric, r.metric),
                      _fmt(r.a), _fmt(r.b), _fmt_ratio(r.ratio)])
        previous = who
    return cells


def format_table(rows: Sequence[Row], label_a: str = "A", label_b: str = "B") -> str:
    """Flows, then links: name, metric, A, B, B/A in aligned columns."""
    out = []
    for kind, title in (("flow", "flow"), ("link", "link")):
        part = [r for r in rows if r.kind == kind]
        if not part:
            continue
        head = [title, "metric", label_a, label_b, "B/A"]
        body = _table_cells(part)
        widths = [max(len(c[i]) for c in [head] + body) for i in range(5)]
        line = lambda c: "  ".join(  # noqa: E731
            c[i].ljust(widths[i]) if i < 2 else c[i].rjust(widths[i]) for i in range(5)).rstrip()
        out.append(line(head))
        out.extend(line(c) for c in body)
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def labels(dir_a, dir_b) -> tuple[str, str]:
    """What the table and the figures call the two directories: their names, or their paths
    where the names are the same (``a/run`` and ``b/run``)."""
    a, b = Path(dir_a), Path(dir_b)
    if a.name and b.name and a.name != b.name:
        return a.name, b.name
    return str(a), str(b)


def _describe(result: RunResult, where: str) -> str:
    s = result.summary
    return (f"{where} ({s.get('backend', '?')} backend, scenario {s.get('scenario', '?')}, "
            f"seed {s.get('seed', '?')}, {s.get('duration_s', '?')} s)")


# --------------------------------------------------------------------------------------------
# Figures


def _pyplot():
    from .report import _pyplot as pyplot

    return pyplot()


def _flow_series(result: RunResult) -> dict[str, Any]:
    ts = result.timeseries
    if ts.empty or "flow" not in ts:
        return {}
    return {str(k): g.sort_values("time_s") for k, g in ts.groupby(ts["flow"].astype(str), sort=False)}


def _goodput(g) -> tuple[np.ndarray, np.ndarray]:
    from .report import flow_throughput

    col = "bytes_delivered" if "bytes_delivered" in g else "bytes_acked"
    if col not in g or len(g) < 2:
        return np.array([]), np.array([])
    return flow_throughput(g["time_s"].to_numpy(), g[col].to_numpy(), _THROUGHPUT_WINDOW_S)


def _fig_per_flow(flows, sa, sb, label_a, label_b, what, ylabel, series):
    plt = _pyplot()
    shown = flows[:_MAX_PANELS]
    fig, axes = plt.subplots(len(shown), 1, figsize=(10, 1.3 + 2.4 * len(shown)), sharex=True,
                             squeeze=False)
    for ax, name in zip(axes[:, 0], shown):
        for data, label, style in ((sa, label_a, "-"), (sb, label_b, "--")):
            g = data.get(name)
            if g is None or g.empty:
                continue
            t, y = series(g)
            ax.plot(t, y, ls=style, lw=1.1, label=label)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.set_title(f"flow {name}", fontsize=10, loc="left")
        ax.legend(loc="upper right")
    axes[-1, 0].set_xlabel("time (s)")
    title = what + (f" (first {len(shown)} of {len(flows)} flows)" if len(flows) > len(shown) else "")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _column_series(column: str):
    def series(g):
        if column not in g:
            return np.array([]), np.array([])
        y = g[column].to_numpy(dtype=float).copy()
        if column == "srtt_ms":
            y[y <= 0] = np.nan  # no RTT sample yet
        return g["time_s"].to_numpy(), y
    return series


def _sojourns(result: RunResult, link: str) -> np.ndarray:
    import pyarrow.compute as pc

    table = result.queue_table
    if table.num_rows == 0 or "sojourn_ms" not in table.column_names:
        return np.array([])
    mask = pc.equal(pc.cast(table.column("link"), "string"), link)
    col = table.filter(mask).column("sojourn_ms")
    flat = [pc.list_flatten(c).to_numpy(zero_copy_only=False) for c in col.chunks]
    return np.sort(np.concatenate(flat).astype(float)) if flat else np.array([])


def _fig_sojourn_cdf(links, ra, rb, label_a, label_b):
    plt = _pyplot()
    shown = links[:_MAX_PANELS] or ["(none)"]
    fig, axes = plt.subplots(len(shown), 1, figsize=(8, 1.3 + 2.6 * len(shown)), squeeze=False)
    for ax, name in zip(axes[:, 0], shown):
        drawn = 0
        for r, label, style in ((ra, label_a, "-"), (rb, label_b, "--")):
            x = _sojourns(r, name) if links else np.array([])
            if x.size == 0:
                continue
            ax.plot(x, np.arange(1, x.size + 1) / x.size, ls=style, lw=1.2,
                    label=f"{label} ({x.size:,} packets)")
            drawn += 1
        ax.set_xlabel("queueing delay (ms)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.0)
        ax.set_title(f"link {name}", fontsize=10, loc="left")
        if drawn:
            ax.set_xlim(left=0)
            ax.legend(loc="lower right")
        else:
            ax.text(0.5, 0.5, "no packet left this queue", ha="center", va="center",
                    transform=ax.transAxes, color="gray")
    fig.suptitle("Queueing delay (sojourn) CDF per link")
    fig.tight_layout()
    return fig


def _save(fig, path: Path) -> None:
    from .results import replace_atomically

    plt = _pyplot()
    try:
        replace_atomically(path, lambda tmp: fig.savefig(tmp, format="png"))
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------------------------
# Documents

_FIGURES = (
    ("goodput", "Goodput over time", "Goodput (100 ms windows) of each flow; A solid, B dashed."),
    ("cwnd", "Congestion window over time", "cwnd (packets) of each flow; A solid, B dashed."),
    ("rtt", "RTT over time", "Smoothed RTT (srtt) of each flow; A solid, B dashed."),
    ("queue_sojourn_cdf", "Queueing delay CDF", "Every packet's sojourn time at each link."),
)


def _markdown(header: list[str], rows: Sequence[Row], notes: list[str], images: list[str]) -> str:
    parts = ["# rove compare", ""] + [f"- {h}" for h in header] + ["", "Ratio: B/A.", ""]
    for kind in ("flow", "link"):
        part = [r for r in rows if r.kind == kind]
        if not part:
            continue
        parts.append(f"| {kind} | metric | A | B | B/A |")
        parts.append("|---|---|---:|---:|---:|")
        parts.extend("| " + " | ".join(c) + " |" for c in _table_cells(part))
        parts.append("")
    parts.extend(f"Note: {n}" for n in notes)
    for key, title, caption in _FIGURES:
        if f"{key}.png" in images:
            parts += ["", f"## {title}", "", caption, "", f"![{title}]({key}.png)"]
    return "\n".join(parts) + "\n"


def _html(header: list[str], rows: Sequence[Row], notes: list[str], out: Path,
          images: list[str]) -> str:
    from .report import _CSS

    esc = html.escape
    parts = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>rove compare</title>", f"<style>{_CSS}</style></head><body>",
             "<h1>rove compare</h1>", "<ul>" + "".join(f"<li>{esc(h)}</li>" for h in header)
             + "</ul>", "<p>Ratio: B/A.</p>"]
    for kind in ("flow", "link"):
        part = [r for r in rows if r.kind == kind]
        if not part:
            continue
        head = "".join(f"<th>{h}</th>" for h in (kind, "metric", "A", "B", "B/A"))
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>"
                       for cells in _table_cells(part))
        parts.append(f"<h2>{kind.capitalize()}s</h2><table><thead><tr>{head}</tr></thead>"
                     f"<tbody>{body}</tbody></table>")
    parts.extend(f"<p>Note: {esc(n)}</p>" for n in notes)
    for key, title, caption in _FIGURES:
        if f"{key}.png" not in images:
            continue
        data = base64.b64encode((out / f"{key}.png").read_bytes()).decode("ascii")
        parts.append(f"<h2>{esc(title)}</h2><p>{esc(caption)} <a href=\"{key}.png\">{key}.png</a>"
                     f"</p><img alt=\"{key}\" src=\"data:image/png;base64,{data}\">")
    parts.append("</body></html>\n")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------


@dataclass
class Comparison:
    rows: list[Row]
    notes: list[str]
    header: list[str]
    text: str
    files: list[Path]


def compare(dir_a: str | os.PathLike, dir_b: str | os.PathLike,
            out: str | os.PathLike | None = None) -> Comparison:
    """Compare two results directories; with ``out``, also write figures and documents there."""
    ra, rb = read_results(dir_a), read_results(dir_b)
    where_a, where_b = str(dir_a), str(dir_b)
    rows, notes = compare_summaries(ra.summary, rb.summary, where_a, where_b)
    header = [f"A = {_describe(ra, where_a)}", f"B = {_describe(rb, where_b)}"]
    label_a, label_b = labels(dir_a, dir_b)
    text = ("\n".join(header) + "\n\n" + format_table(rows, label_a, label_b)
            + "".join(f"note: {n}\n" for n in notes))
    files: list[Path] = []
    if out is not None:
        files = _write(Path(out), ra, rb, rows, notes, header)
    return Comparison(rows, notes, header, text, files)


def _write(out: Path, ra: RunResult, rb: RunResult, rows, notes, header) -> list[Path]:
    if out.exists() and not out.is_dir():
        raise CompareError(f"{out}: exists and is not a directory (-o names a directory)")
    out.mkdir(parents=True, exist_ok=True)
    flows = [str(f.get("name")) for f in ra.summary.get("flows", [])]
    links = [n for n in _names(ra.summary, "links") if n in set(_names(rb.summary, "links"))]
    sa, sb = _flow_series(ra), _flow_series(rb)
    la, lb = (f"{k} ({r.summary.get('backend', '?')})"
              for k, r in zip(labels(ra.out, rb.out), (ra, rb)))
    figures = {}
    if flows:
        figures["goodput"] = lambda: _fig_per_flow(flows, sa, sb, la, lb, "Goodput over time",
                                                   "goodput (Mbit/s)", _goodput)
        figures["cwnd"] = lambda: _fig_per_flow(flows, sa, sb, la, lb, "cwnd over time",
                                                "cwnd (packets)", _column_series("cwnd_pkts"))
        figures["rtt"] = lambda: _fig_per_flow(flows, sa, sb, la, lb, "RTT (srtt) over time",
                                               "srtt (ms)", _column_series("srtt_ms"))
    figures["queue_sojourn_cdf"] = lambda: _fig_sojourn_cdf(links, ra, rb, la, lb)
    written: list[Path] = []
    for key, make in figures.items():
        path = out / f"{key}.png"
        _save(make(), path)
        written.append(path)
    names = [p.name for p in written]
    docs = {
        "compare.md": _markdown(header, rows, notes, names),
        "compare.html": _html(header, rows, notes, out, names),
        "compare.json": json.dumps({"a": header[0], "b": header[1], "notes": notes,
                                    "rows": [_row_json(r) for r in rows]}, indent=2) + "\n",
    }
    for name, text in docs.items():
        write_bytes_atomically(out / name, text.encode("utf-8"))
        written.append(out / name)
    return written


def _row_json(r: Row) -> dict:
    d = asdict(r)
    if d["ratio"] is not None and math.isinf(d["ratio"]):
        d["ratio"] = "inf"  # JSON has no infinity
    return d


def run_cli(args) -> int:
    """``rove compare`` (argparse namespace with ``dir_a``, ``dir_b``, ``out``, ``force``)."""
    if args.out is not None:
        check_output_dir(args.out, "compare", force=args.force)
    result = compare(args.dir_a, args.dir_b, args.out)
    print(result.text, end="")
    if result.files:
        html_path = next(p for p in result.files if p.name == "compare.html")
        print(f"compare: {html_path}")
    return 0
