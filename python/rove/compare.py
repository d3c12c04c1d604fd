"""``rove compare DIR_A DIR_B [DIR_C ...] [-o OUT]``: results directories side by side.

Typical use is the simulator against the kernel backend on the same scenario, but any two
results directories work (two seeds, two algorithms, two queue settings): both backends write the
same schema (:mod:`rove.results`).

The directories are named by their names (their paths where names repeat). Flows are matched
by name (every directory must hold the same flow names; otherwise a one-line error lists them);
links are matched by name too, and a link missing from a directory is listed but not compared.
For each flow: goodput, mean and p95 RTT, retransmission rate and flow completion time; for
each link: utilization, mean and p95 queueing delay and drops — the value in each directory and
its ratio to the first directory's (1.0 when both are 0; ``inf`` when only the first is 0;
empty when a value is missing).

With ``-o OUT``, OUT also gets:

- ``goodput.png``, ``cwnd.png``, ``rtt.png``: per flow, each directory over time (the first
  solid, then dashed, dotted, dash-dotted);
- ``queue_sojourn_cdf.png``: per link, the CDF of the packets' queueing delay (the summary's
  percentiles), per directory;
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
    values: list  # one per directory (None where missing)
    ratios: list  # values[k] / values[0], k = 1, 2, ...


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


def compare_summaries(summaries: Sequence[dict], wheres: Sequence[str]) -> tuple[list[Row], list[str]]:
    """The rows of the comparison and notes (links missing somewhere, algorithms that differ).

    Raises :class:`CompareError` when the flow names differ between directories.
    """
    names = [_names(s, "flows") for s in summaries]
    for s_names, where in zip(names[1:], wheres[1:]):
        if sorted(s_names) != sorted(names[0]):
            only_a = sorted(set(names[0]) - set(s_names))
            only_b = sorted(set(s_names) - set(names[0]))
            detail = []
            if only_a:
                detail.append(f"only in {wheres[0]}: {', '.join(only_a)}")
            if only_b:
                detail.append(f"only in {where}: {', '.join(only_b)}")
            if not detail:
                detail.append("a flow name is repeated")
            raise CompareError(
                f"flows differ ({'; '.join(detail)}); {wheres[0]} has [{', '.join(names[0])}], "
                f"{where} has [{', '.join(s_names)}] (flows are matched by name)")
    flows = [{str(f.get("name")): f for f in s.get("flows", [])} for s in summaries]
    links = [{str(x.get("name")): x for x in s.get("links", [])} for s in summaries]
    rows: list[Row] = []
    for f in summaries[0].get("flows", []):
        name = str(f.get("name"))
        for key, _ in FLOW_METRICS:
            rows.append(_row("flow", name, key, [_number(d[name].get(key)) for d in flows]))
    shared = [n for n in _names(summaries[0], "links") if all(n in d for d in links)]
    for name in shared:
        for key, _ in LINK_METRICS:
            rows.append(_row("link", name, key, [_number(d[name].get(key)) for d in links]))
    notes = []
    for f in summaries[0].get("flows", []):
        name = str(f.get("name"))
        ccs = [d[name].get("cc") for d in flows]
        if len(set(map(str, ccs))) > 1:
            notes.append(f"flow {name}: cc " + ", ".join(f"{c} in {w}" for c, w in zip(ccs, wheres)))
    for d, where in zip(links, wheres):
        alone = sorted(set(d) - set(shared))
        if alone:
            notes.append(f"links only in {where} (not compared): {', '.join(alone)}")
    return rows, notes


def _row(kind: str, name: str, key: str, values: list) -> Row:
    return Row(kind, name, key, values, [ratio(values[0], v) for v in values[1:]])


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
                      *map(_fmt, r.values), *map(_fmt_ratio, r.ratios)])
        previous = who
    return cells


def _heads(names: Sequence[str]) -> list[str]:
    """The value and ratio columns' titles: each directory, then each one over the first."""
    return list(names) + [f"{n}/{names[0]}" for n in names[1:]]


def format_table(rows: Sequence[Row], names: Sequence[str]) -> str:
    """Flows, then links: name, metric, each directory's value, ratios to the first."""
    out = []
    for kind in ("flow", "link"):
        part = [r for r in rows if r.kind == kind]
        if not part:
            continue
        head = [kind, "metric", *_heads(names)]
        body = _table_cells(part)
        widths = [max(len(c[i]) for c in [head] + body) for i in range(len(head))]
        line = lambda c: "  ".join(  # noqa: E731
            c[i].ljust(widths[i]) if i < 2 else c[i].rjust(widths[i])
            for i in range(len(head))).rstrip()
        out.append(line(head))
        out.extend(line(c) for c in body)
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def labels(*dirs) -> list[str]:
    """What the table and the figures call the directories: their names, or their paths where
    a name repeats (``a/run`` and ``b/run``)."""
    paths = [Path(d) for d in dirs]
    names = [p.name for p in paths]
    if all(names) and len(set(names)) == len(names):
        return names
    return [str(p) for p in paths]


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


_STYLES = ("-", "--", ":", "-.")


def _fig_per_flow(flows, series_by_dir, names, what, ylabel, series):
    plt = _pyplot()
    shown = flows[:_MAX_PANELS]
    fig, axes = plt.subplots(len(shown), 1, figsize=(10, 1.3 + 2.4 * len(shown)), sharex=True,
                             squeeze=False)
    for ax, name in zip(axes[:, 0], shown):
        for k, (data, label) in enumerate(zip(series_by_dir, names)):
            style = _STYLES[k % len(_STYLES)]
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


def _sojourn_percentiles(result: RunResult, link: str) -> np.ndarray:
    """The link's 0th..100th queueing-delay percentiles from its summary (empty if none)."""
    for lk in result.summary.get("links", []):
        if str(lk.get("name")) == link:
            return np.asarray(lk.get("queue_delay_percentiles_ms") or [], dtype=float)
    return np.array([])


def _fig_sojourn_cdf(links, results, names):
    plt = _pyplot()
    shown = links[:_MAX_PANELS] or ["(none)"]
    fig, axes = plt.subplots(len(shown), 1, figsize=(8, 1.3 + 2.6 * len(shown)), squeeze=False)
    for ax, name in zip(axes[:, 0], shown):
        drawn = 0
        for k, (r, label) in enumerate(zip(results, names)):
            style = _STYLES[k % len(_STYLES)]
            x = _sojourn_percentiles(r, name) if links else np.array([])
            if x.size == 0:
                continue
            ax.plot(x, np.linspace(0.0, 1.0, x.size), ls=style, lw=1.2, label=label)
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
    ("goodput", "Goodput over time", "Goodput (100 ms windows) of each flow, per directory."),
    ("cwnd", "Congestion window over time", "cwnd (packets) of each flow, per directory."),
    ("rtt", "RTT over time", "Smoothed RTT (srtt) of each flow, per directory."),
    ("queue_sojourn_cdf", "Queueing delay CDF",
     "The distribution of the packets' sojourn time at each link (its percentiles, from the "
     "summary)."),
)


def _markdown(header: list[str], names: Sequence[str], rows: Sequence[Row], notes: list[str],
              images: list[str]) -> str:
    parts = ["# rove compare", ""] + [f"- {h}" for h in header] + [
        "", f"Ratios: each directory's value over {names[0]}'s.", ""]
    for kind in ("flow", "link"):
        part = [r for r in rows if r.kind == kind]
        if not part:
            continue
        heads = _heads(names)
        parts.append("| " + " | ".join([kind, "metric", *heads]) + " |")
        parts.append("|---|---|" + "---:|" * len(heads))
        parts.extend("| " + " | ".join(c) + " |" for c in _table_cells(part))
        parts.append("")
    parts.extend(f"Note: {n}" for n in notes)
    for key, title, caption in _FIGURES:
        if f"{key}.png" in images:
            parts += ["", f"## {title}", "", caption, "", f"![{title}]({key}.png)"]
    return "\n".join(parts) + "\n"


def _html(header: list[str], names: Sequence[str], rows: Sequence[Row], notes: list[str],
          out: Path, images: list[str]) -> str:
    from .report import _CSS

    esc = html.escape
    parts = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>rove compare</title>", f"<style>{_CSS}</style></head><body>",
             "<h1>rove compare</h1>", "<ul>" + "".join(f"<li>{esc(h)}</li>" for h in header)
             + "</ul>", f"<p>Ratios: each directory's value over {esc(names[0])}'s.</p>"]
    for kind in ("flow", "link"):
        part = [r for r in rows if r.kind == kind]
        if not part:
            continue
        head = "".join(f"<th>{esc(h)}</th>" for h in (kind, "metric", *_heads(names)))
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


def compare(dirs: Sequence[str | os.PathLike], out: str | os.PathLike | None = None) -> Comparison:
    """Compare results directories (at least two); with ``out``, also write figures and
    documents there."""
    if len(dirs) < 2:
        raise CompareError("compare needs at least two results directories")
    results = [read_results(d) for d in dirs]
    wheres = [str(d) for d in dirs]
    rows, notes = compare_summaries([r.summary for r in results], wheres)
    names = labels(*dirs)
    header = [f"{n} = {_describe(r, w)}" for n, r, w in zip(names, results, wheres)]
    text = ("\n".join(header) + "\n\n" + format_table(rows, names)
            + "".join(f"note: {n}\n" for n in notes))
    files: list[Path] = []
    if out is not None:
        files = _write(Path(out), results, names, rows, notes, header)
    return Comparison(rows, notes, header, text, files)


def _write(out: Path, results: Sequence[RunResult], names: Sequence[str], rows, notes,
           header) -> list[Path]:
    if out.exists() and not out.is_dir():
        raise CompareError(f"{out}: exists and is not a directory (-o names a directory)")
    out.mkdir(parents=True, exist_ok=True)
    flows = [str(f.get("name")) for f in results[0].summary.get("flows", [])]
    links = [n for n in _names(results[0].summary, "links")
             if all(n in set(_names(r.summary, "links")) for r in results)]
    series = [_flow_series(r) for r in results]
    shown = [f"{n} ({r.summary.get('backend', '?')})" for n, r in zip(names, results)]
    figures = {}
    if flows:
        figures["goodput"] = lambda: _fig_per_flow(flows, series, shown, "Goodput over time",
                                                   "goodput (Mbit/s)", _goodput)
        figures["cwnd"] = lambda: _fig_per_flow(flows, series, shown, "cwnd over time",
                                                "cwnd (packets)", _column_series("cwnd_pkts"))
        figures["rtt"] = lambda: _fig_per_flow(flows, series, shown, "RTT (srtt) over time",
                                               "srtt (ms)", _column_series("srtt_ms"))
    figures["queue_sojourn_cdf"] = lambda: _fig_sojourn_cdf(links, results, shown)
    written: list[Path] = []
    for key, make in figures.items():
        path = out / f"{key}.png"
        _save(make(), path)
        written.append(path)
    images = [p.name for p in written]
    docs = {
        "compare.md": _markdown(header, names, rows, notes, images),
        "compare.html": _html(header, names, rows, notes, out, images),
        "compare.json": json.dumps({"dirs": header, "names": list(names), "notes": notes,
                                    "rows": [_row_json(r) for r in rows]}, indent=2) + "\n",
    }
    for name, text in docs.items():
        write_bytes_atomically(out / name, text.encode("utf-8"))
        written.append(out / name)
    return written


def _row_json(r: Row) -> dict:
    d = asdict(r)
    d["ratios"] = ["inf" if x is not None and math.isinf(x) else x for x in d["ratios"]]  # JSON has no infinity
    return d


def run_cli(args) -> int:
    """``rove compare`` (argparse namespace with ``dirs``, ``out``, ``force``)."""
    if args.out is not None:
        check_output_dir(args.out, "compare", force=args.force)
    result = compare(args.dirs, args.out)
    print(result.text, end="")
    if result.files:
        html_path = next(p for p in result.files if p.name == "compare.html")
        print(f"compare: {html_path}")
    return 0
