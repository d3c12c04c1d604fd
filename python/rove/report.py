"""Reports: PNG figures and one HTML page from a results directory.

Works on any directory with the results schema (see :mod:`rove.results`), whichever backend
wrote it. ``rove report DIR`` writes into DIR:

- ``throughput.png``: above, goodput of each flow over time (bytes delivered in order at the
  receiver, averaged over 100 ms windows), and the sum over flows when there are several;
  below, the arrival rate (payload reaching the receiver in any order: it does not jump when a
  hole fills); on both, the offered capacity of each link that carried data (dashed: a
  trace-driven link's capacity as it varies);
- ``rtt.png``: smoothed RTT (srtt) of each flow over time, and of each subflow of a multipath
  flow (dashed, labelled with its links);
- ``cwnd.png``: congestion window of each flow over time;
- ``queue_delay.png``: queueing delay at each link over time (mean and maximum sojourn of the
  packets that left the queue in each sample interval);
- ``throughput_delay.png``: the Pantheon-style summary, one point per flow at (p95 RTT, goodput),
  delay axis inverted so that better is up and to the right;
- ``multipath.png`` (only when there are multipath flows): per subflow, throughput (payload that
  arrived on it) and srtt over time, and each connection's reordering-buffer occupancy;
- ``radio.png`` (only with a radio cell's ``radio.parquet``): per cell, the capacity given to
  each port beside each flow's goodput, the PHY rate and SNR, airtime shares and the AP's
  counters over time (:mod:`rove.radio_report`);
- ``report.html``: the summary tables and the figures (embedded, so the page can be moved alone).

Up to 10 flows get a colour each; beyond, flows are coloured by congestion control and the
legend has one entry per algorithm (with its number of flows). ``make_report`` takes an output
directory, a time window and a subset of flows (``rove report DIR -o OUT --from 10s --to 20s
--flows a,b``).
"""

from __future__ import annotations

import base64
import html
import math
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .radio_report import fig_radio, radio_links
from .results import ResultsError, read_results

__all__ = ["make_report", "FIGURES", "flow_throughput", "queue_delay_per_sample"]

FIGURES = ("throughput", "rtt", "cwnd", "queue_delay", "throughput_delay")
THROUGHPUT_WINDOW_S = 0.1
_HIDDEN_STATES = {"idle", "done"}
_MAX_LEGEND = 16
_MAX_LINK_PANELS = 8
_MAX_POINT_LABELS = 6


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "figure.dpi": 110,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "font.size": 10,
        "legend.fontsize": 8,
        "legend.framealpha": 0.85,
    })
    return plt


# --------------------------------------------------------------------------------------------
# Derived series


def _flow_names(result) -> list[str]:
    names = [str(f.get("name")) for f in result.summary.get("flows", [])]
    seen = set(names)
    if "flow" in result.timeseries:
        for n in result.timeseries["flow"].astype(str).unique():
            if n not in seen:
                names.append(n)
                seen.add(n)
    return names


def _link_names(result) -> list[str]:
    names = [str(link.get("name")) for link in result.summary.get("links", [])]
    seen = set(names)
    if "link" in result.queue:
        for n in result.queue["link"].astype(str).unique():
            if n not in seen:
                names.append(n)
                seen.add(n)
    return names


def flow_throughput(time_s: np.ndarray, bytes_cum: np.ndarray,
                    window_s: float = THROUGHPUT_WINDOW_S) -> tuple[np.ndarray, np.ndarray]:
    """Rate in Mbit/s from a cumulative byte counter, over windows of ``window_s``.

    Returns ``(window_mid_s, mbps)``. The window is at least the sample spacing.
    """
    t = np.asarray(time_s, dtype=float)
    b = np.asarray(bytes_cum, dtype=float)
    if len(t) < 2:
        return np.array([]), np.array([])
    spacing = float(np.median(np.diff(t))) if len(t) > 1 else window_s
    w = max(window_s, spacing)
    n = int(math.floor((t[-1] - t[0]) / w + 1e-9))
    if n < 1:
        edges = np.array([t[0], t[-1]])
    else:
        edges = t[0] + w * np.arange(n + 1)
    cum = np.interp(edges, t, b)
    dt = np.diff(edges)
    with np.errstate(invalid="ignore", divide="ignore"):
        mbps = np.diff(cum) * 8.0 / dt / 1e6
    return (edges[:-1] + edges[1:]) / 2.0, mbps


def queue_delay_per_sample(queue_table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of the queue table: (packets that left the queue since the previous row, their
    mean and their largest queueing delay in ms; NaN when none left)."""
    n = queue_table.num_rows
    if n == 0 or "sojourn_count" not in queue_table.column_names:
        return np.zeros(n, dtype=np.int64), np.full(n, np.nan), np.full(n, np.nan)

    def col(name):
        return queue_table.column(name).to_numpy()

    return (col("sojourn_count").astype(np.int64), col("sojourn_mean_ms").astype(float),
            col("sojourn_max_ms").astype(float))


_MAX_FLOW_COLORS = 10


class Palette:
    """Colours and legend labels of flows: one colour per flow up to 10 flows; beyond, one per
    congestion control, with one legend entry per algorithm ("cubic (40 flows)")."""

    def __init__(self, result, flows: Sequence[str]):
        plt = _pyplot()
        cc = {str(f.get("name")): str(f.get("cc")) for f in result.summary.get("flows", [])}
        self.by_cc = len(flows) > _MAX_FLOW_COLORS
        keys = list(dict.fromkeys(cc.get(n, "?") for n in flows)) if self.by_cc else list(flows)
        cmap = plt.get_cmap("tab10" if len(keys) <= 10 else "tab20")
        colour = {k: cmap(i % cmap.N) for i, k in enumerate(keys)}
        counts = {k: sum(1 for n in flows if cc.get(n, "?") == k) for k in keys}
        self.color = {}
        self.label = {}
        seen = set()
        for n in flows:
            key = cc.get(n, "?") if self.by_cc else n
            self.color[n] = colour[key]
            if self.by_cc:  # one legend entry per algorithm: its first flow carries the label
                self.label[n] = None if key in seen else f"{key} ({counts[key]} flows)"
                seen.add(key)
            else:
                self.label[n] = n if cc.get(n) in (None, "?") or len(set(cc.values())) < 2 \
                    else f"{n} ({cc[n]})"

    def get(self, name, default="black"):
        return self.color.get(name, default)

    def __getitem__(self, name):
        return self.color[name]

    def legend_items(self) -> int:
        return sum(1 for v in self.label.values() if v)


def _legend(ax, n_items: int) -> None:
    if n_items == 0:
        return
    if n_items <= _MAX_LEGEND:
        # outside, right of the axes: time series fill the whole plot area
        ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0.0,
                  ncol=1 if n_items <= 10 else 2)


# --------------------------------------------------------------------------------------------
# Figures


def _time_axis(ax, result) -> None:
    ax.set_xlabel("time (s)")
    window = getattr(result, "window", None)
    d = result.summary.get("duration_s")
    if window is not None:
        ax.set_xlim(*window)
    elif isinstance(d, (int, float)) and d > 0:
        ax.set_xlim(0, d)


def _title(result, what: str) -> str:
    return f"{what} — {result.summary.get('scenario', '')}"


def _by_flow(result) -> dict:
    ts = result.timeseries
    if "flow" not in ts or ts.empty:
        return {}
    if "subflow" in ts:
        ts = ts[ts["subflow"] < 0]  # each flow's own row; a multipath flow's subflows are extra
    return {str(k): g for k, g in ts.groupby(ts["flow"].astype(str), sort=False)}


def _data_links(result) -> list[str]:
    """Links that carried data: those busier than 10 % of their capacity (ACK links are not)."""
    return [str(lk.get("name")) for lk in result.summary.get("links", [])
            if isinstance(lk.get("utilization"), (int, float)) and lk["utilization"] > 0.1]


def _plot_capacity(ax, result, links: Sequence[str]) -> int:
    """The offered capacity of ``links`` over time (from ``capacity_bytes``); returns how many
    lines were drawn (none for results without the column, e.g. the kernel backend's)."""
    q = result.queue
    if "capacity_bytes" not in q or q.empty or not q["capacity_bytes"].notna().any():
        return 0  # the kernel backend writes the column as nulls
    drawn = 0
    for name in links[:4]:
        g = q[q["link"].astype(str) == name]
        if len(g) < 2:
            continue
        t, mbps = flow_throughput(g["time_s"].to_numpy(), g["capacity_bytes"].to_numpy())
        ax.plot(t, mbps, lw=1.0, color="0.45", ls=(0, (4, 2)), drawstyle="steps-mid",
                label=f"capacity of {name}")
        drawn += 1
    return drawn


def _fig_throughput(result, flows, colors, by_flow):
    plt = _pyplot()
    ts = result.timeseries
    has_arrivals = "bytes_received" in ts and bool(ts["bytes_received"].notna().any())
    fig, axes = plt.subplots(2 if has_arrivals else 1, 1, figsize=(10, 7.4 if has_arrivals else 4.2),
                             sharex=True, squeeze=False)
    columns = [("bytes_delivered", "goodput (in order)")]
    if has_arrivals:
        columns.append(("bytes_received", "arrival rate (any order)"))
    links = _data_links(result)
    for ax, (column, what) in zip(axes[:, 0], columns):
        total_t, total = None, None
        for name in flows:
            g = by_flow.get(name)
            if g is None or len(g) < 2:
                continue
            t, mbps = flow_throughput(g["time_s"].to_numpy(), g[column].to_numpy())
            ax.plot(t, mbps, lw=1.2, color=colors[name], label=colors.label[name])
            if total is None:
                total_t, total = t, mbps.copy()
            elif len(t) == len(total_t):
                total = total + mbps
        if total is not None and len(flows) > 1:
            ax.plot(total_t, total, lw=1.0, color="black", ls="--", label="sum of flows")
        n_cap = _plot_capacity(ax, result, links)
        ax.set_ylabel(f"{what}\n(Mbit/s, {THROUGHPUT_WINDOW_S * 1000:g} ms windows)")
        ax.set_ylim(bottom=0)
        _legend(ax, colors.legend_items() + (1 if len(flows) > 1 else 0) + n_cap)
    _time_axis(axes[-1, 0], result)
    axes[0, 0].set_title(_title(result, "Goodput and arrival rate over time" if has_arrivals
                                else "Goodput over time"))
    return fig


def _fig_flow_metric(result, flows, colors, by_flow, column: str, ylabel: str, what: str):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.2))
    drawn = 0
    if column in result.timeseries:
        for name in flows:
            g = by_flow.get(name)
            if g is None or g.empty:
                continue
            y = g[column].to_numpy(dtype=float).copy()
            if "ca_state" in g:
                y[g["ca_state"].astype(str).isin(_HIDDEN_STATES).to_numpy()] = np.nan
            if column == "srtt_ms":
                y[y <= 0] = np.nan  # no RTT sample yet
            ax.plot(g["time_s"].to_numpy(), y, lw=1.0, color=colors[name],
                    label=colors.label[name])
            drawn += 1 if colors.label[name] else 0
        if column == "srtt_ms":  # a connection row has its lowest subflow RTT: show each one
            drawn += _plot_subflows(ax, result, flows, colors, column)
    else:
        ax.text(0.5, 0.5, f"no column {column!r} in timeseries.parquet", ha="center",
                transform=ax.transAxes)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    _time_axis(ax, result)
    ax.set_title(_title(result, what))
    _legend(ax, drawn)
    return fig


def subflow_labels(result) -> dict[tuple[str, int], str]:
    """``(flow, subflow index)`` -> ``"flow subflow 0 (wifi)"``, with the links of its path."""
    out = {}
    for f in result.summary.get("flows", []):
        for sf in f.get("subflows") or []:
            path = sf.get("path")
            where = f" ({','.join(map(str, path))})" if path else ""
            out[(str(f.get("name")), int(sf.get("index", 0)))] = \
                f"{f.get('name')} subflow {sf.get('index')}{where}"
    return out


def _plot_subflows(ax, result, flows, colors, column: str) -> int:
    ts = result.timeseries
    if "subflow" not in ts:
        return 0
    subs = ts[(ts["subflow"] >= 0) & ts["flow"].astype(str).isin(set(flows))]
    labels = subflow_labels(result)
    styles = [(0, (4, 2)), (0, (1, 1)), (0, (6, 2, 1, 2))]
    drawn = 0
    for (flow, sub), g in subs.groupby([subs["flow"].astype(str), subs["subflow"]], sort=False):
        y = g[column].to_numpy(dtype=float).copy()
        y[g["ca_state"].astype(str).isin(_HIDDEN_STATES).to_numpy() | (y <= 0)] = np.nan
        ax.plot(g["time_s"].to_numpy(), y, lw=0.9, color=colors.get(flow),
                ls=styles[int(sub) % len(styles)],
                label=labels.get((flow, int(sub)), f"{flow} subflow {sub}"))
        drawn += 1
    return drawn


def _fig_queue_delay(result, links):
    plt = _pyplot()
    table = result.queue_table
    counts, mean, mx = queue_delay_per_sample(table)
    link_col = np.asarray(result.queue["link"].astype(str)) if len(result.queue) else np.array([])
    time_col = result.queue["time_s"].to_numpy() if len(result.queue) else np.array([])
    shown = links[:_MAX_LINK_PANELS]
    fig, axes = plt.subplots(max(1, len(shown)), 1, figsize=(10, 1.2 + 2.4 * max(1, len(shown))),
                             sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], shown):
        sel = link_col == name
        t = time_col[sel]
        ax.plot(t, mx[sel], lw=0.8, color="tab:red", alpha=0.55, label="max")
        ax.plot(t, mean[sel], lw=1.2, color="tab:blue", label="mean")
        link_summary = next((lk for lk in result.summary.get("links", [])
                             if str(lk.get("name")) == name), {})
        p95 = link_summary.get("p95_queue_delay_ms")
        if isinstance(p95, (int, float)) and not math.isnan(p95):
            ax.axhline(p95, color="gray", ls=":", lw=1.0, label=f"p95 {p95:.3g} ms")
        ax.set_ylabel("sojourn (ms)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"link {name}", fontsize=10, loc="left")
        if counts[sel].sum() == 0:
            ax.text(0.5, 0.5, "no packets left this queue", ha="center", va="center",
                    transform=ax.transAxes, color="gray")
        else:
            ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0.0)
    _time_axis(axes[-1, 0], result)
    title = _title(result, "Queueing delay per sample interval")
    if len(links) > len(shown):
        title += f" (first {len(shown)} of {len(links)} links)"
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _has_subflows(result) -> bool:
    ts = result.timeseries
    return "subflow" in ts and bool((ts["subflow"] >= 0).any())


def _fig_multipath(result):
    """Per subflow: throughput and srtt; per connection: reordering-buffer occupancy."""
    plt = _pyplot()
    ts = result.timeseries
    fig, axes = plt.subplots(3, 1, figsize=(10, 9.5), sharex=True)
    subs = ts[ts["subflow"] >= 0]
    labels = subflow_labels(result)
    n = 0
    for (flow, sub), g in subs.groupby([subs["flow"].astype(str), subs["subflow"]], sort=False):
        label = labels.get((flow, int(sub)), f"{flow} subflow {sub}")
        if len(g) >= 2:
            t, mbps = flow_throughput(g["time_s"].to_numpy(), g["bytes_delivered"].to_numpy())
            axes[0].plot(t, mbps, lw=1.0, label=label)
        y = g["srtt_ms"].to_numpy(dtype=float).copy()
        y[g["ca_state"].astype(str).isin(_HIDDEN_STATES).to_numpy() | (y <= 0)] = np.nan
        axes[1].plot(g["time_s"].to_numpy(), y, lw=1.0, label=label)
        n += 1
    conns = set(subs["flow"].astype(str))
    own = ts[(ts["subflow"] < 0) & ts["flow"].astype(str).isin(conns)]
    for flow, g in own.groupby(own["flow"].astype(str), sort=False):
        axes[2].plot(g["time_s"].to_numpy(), g["ofo_bytes"].to_numpy(dtype=float) / 1000, lw=1.0, label=flow)
    axes[0].set_ylabel("throughput (Mbit/s)")
    axes[1].set_ylabel("smoothed RTT (ms)")
    axes[2].set_ylabel("reordering buffer (KB)")
    for ax in axes:
        ax.set_ylim(bottom=0)
    _legend(axes[0], n)
    _legend(axes[1], n)
    _legend(axes[2], len(conns))
    _time_axis(axes[2], result)
    fig.suptitle(_title(result, "Multipath subflows"))
    fig.tight_layout()
    return fig


def _fig_throughput_delay(result, flows, colors):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5))
    points = []
    for f in result.summary.get("flows", []):
        name = str(f.get("name"))
        if name not in colors.color:
            continue
        g, p95, mean = f.get("goodput_mbps"), f.get("p95_rtt_ms"), f.get("mean_rtt_ms")
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (g, p95)):
            continue
        c = colors.get(name, "black")
        if isinstance(mean, (int, float)) and math.isfinite(mean):
            ax.plot([mean, p95], [g, g], color=c, lw=1.0, alpha=0.6)
            ax.scatter([mean], [g], s=30, facecolors="white", edgecolors=[c], zorder=3)
        ax.scatter([p95], [g], s=55, color=c, zorder=4, label=colors.label.get(name))
        points.append((p95, g, name))
    if len(points) <= _MAX_POINT_LABELS:
        for x, y, name in points:
            ax.annotate(name, (x, y), textcoords="offset points", xytext=(6, 6), fontsize=8)
    else:  # labels would overlap: name the points (or their algorithms) in a legend instead
        _legend(ax, colors.legend_items())
    ax.set_xlabel("RTT (ms; ● 95th percentile, ○ mean) — axis reversed: lower delay to the right")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_ylim(bottom=0)
    if points:
        xs = [p[0] for p in points]
        lo = min([0.0] + xs)
        hi = max(xs)
        ax.set_xlim(hi * 1.1 + 1.0, max(0.0, lo * 0.9 - 1.0) if lo > 0 else 0.0)
        ax.set_ylim(0, max(p[1] for p in points) * 1.15 + 1e-9)
    else:
        ax.text(0.5, 0.5, "no flow with an RTT sample", ha="center", transform=ax.transAxes)
        ax.invert_xaxis()
    ax.set_title(_title(result, "Throughput against delay (better: up and right)"))
    return fig


# --------------------------------------------------------------------------------------------
# HTML


def _fmt_cell(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:.4e}"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, (list, dict)):
        return f"{len(v)} item(s)"
    return str(v)


def _table(rows: list[dict]) -> str:
    if not rows:
        return "<p><em>none</em></p>"
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys and not isinstance(r[k], (list, dict)):
                keys.append(k)
    head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_fmt_cell(r.get(k)))}</td>" for k in keys) + "</tr>"
        for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif;
       margin: 2em auto; max-width: 1150px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
.meta { color: #555; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
code { background: #f4f4f4; padding: 0 0.2em; }
"""

_HEADINGS = {
    "throughput_delay": "Throughput against delay",
    "throughput": "Goodput and arrival rate over time",
    "rtt": "RTT over time",
    "cwnd": "Congestion window over time",
    "queue_delay": "Queueing delay over time",
    "multipath": "Multipath subflows and reordering buffer",
    "radio": "Radio cells",
}

_CAPTIONS = {
    "throughput_delay": "Throughput against delay: one point per flow (filled: p95 RTT, hollow: "
                        "mean RTT); up and to the right is better.",
    "throughput": "Goodput of each flow (bytes delivered in order at the receiver) and, below, "
                  "its arrival rate (bytes reaching the receiver in any order); dashed: the "
                  "offered capacity of each link that carried data.",
    "rtt": "Smoothed RTT (srtt) of each flow; dashed: each subflow of a multipath flow.",
    "cwnd": "Congestion window of each flow (packets).",
    "queue_delay": "Queueing delay at each link: mean and maximum sojourn time of the packets "
                   "that left the queue in each sample interval.",
    "multipath": "Multipath flows: throughput and srtt of each subflow, and each connection's "
                 "reordering-buffer occupancy.",
    "radio": "Per radio cell: the capacity the cell gave each port (its delivered bytes) beside "
             "each flow's goodput (dashed); the PHY rate of each port's last transmission and "
             "each station's SNR (dotted); each port's airtime share and the channel's busy "
             "time; the AP's queue lengths and the cell's drops by cause (radio.parquet).",
}


def _html(result, images: dict[str, Path]) -> str:
    s = result.summary
    meta_keys = [k for k in s if not isinstance(s[k], (list, dict))]
    meta = " · ".join(f"{html.escape(k)}: <b>{html.escape(_fmt_cell(s[k]))}</b>" for k in meta_keys)
    parts = [
        "<!DOCTYPE html>",
        "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>rove report: {html.escape(str(s.get('scenario', '')))}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>rove report: {html.escape(str(s.get('scenario', '')))}</h1>",
        f"<p class=\"meta\">{meta}</p>",
        "<h2>Flows</h2>", _table(s.get("flows", [])),
        "<h2>Links</h2>", _table(s.get("links", [])),
    ]
    for key in ("throughput_delay", "throughput", "rtt", "cwnd", "queue_delay", "multipath",
                "radio"):
        path = images.get(key)
        if path is None:
            continue
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        parts.append(f"<h2>{html.escape(_HEADINGS[key])}</h2>")
        parts.append(f"<p>{html.escape(_CAPTIONS[key])} <a href=\"{path.name}\">{path.name}</a></p>")
        parts.append(f"<img alt=\"{key}\" src=\"data:image/png;base64,{data}\">")
    parts.append("<h2>Raw data</h2><p>In this directory: <code>summary.json</code>, "
                 "<code>timeseries.parquet</code> (one row per flow per sample), "
                 "<code>queue.parquet</code> (one row per link per sample).</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------


def _restricted(result, window: tuple[float, float] | None):
    """The result with its time series cut to ``window`` (seconds); the summary is unchanged."""
    if window is None:
        return result
    import pyarrow.compute as pc

    from .results import RunResult

    t0, t1 = window
    def cut(table):
        t = table.column("time_s")
        return table.filter(pc.and_(pc.greater_equal(t, t0), pc.less_equal(t, t1)))
    radio = result.radio_table
    cut_result = RunResult(result.summary, cut(result.timeseries_table), cut(result.queue_table),
                           out=result.out, radio_table=cut(radio) if radio is not None else None)
    cut_result.window = window
    return cut_result


def make_report(directory: str | os.PathLike, out: str | os.PathLike | None = None,
                window: tuple[float, float] | None = None,
                flows: Sequence[str] | None = None) -> Path:
    """Draw the figures and write ``report.html`` into ``out`` (default: ``directory``); return
    the HTML's path.

    ``window`` = ``(from_s, to_s)`` limits the figures' time axis (and the series drawn) to that
    span; ``flows`` draws only those flows (by name). The tables are the run's summary as it is.
    Raises :class:`rove.results.ResultsError` when the directory holds no rove results, or a
    flow name or the window does not fit the results.
    """
    d = Path(directory)
    result = read_results(d)
    for col in ("bytes_delivered",):
        if col not in result.timeseries:
            raise ResultsError(f"{d / 'timeseries.parquet'}: missing column {col}")
    duration = result.summary.get("duration_s")
    if window is not None:
        t0, t1 = window
        if not (0 <= t0 < t1) or (isinstance(duration, (int, float)) and t0 >= duration):
            raise ResultsError(f"{d}: time window [{t0:g} s, {t1:g} s] is empty or outside the "
                               f"run (0 to {duration} s)")
    result = _restricted(result, window)
    d_out = Path(out) if out is not None else d
    d_out.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    all_flows = _flow_names(result)
    if flows is not None:
        unknown = [f for f in flows if f not in all_flows]
        if unknown:
            raise ResultsError(f"{d}: no flow named {unknown[0]!r}; accepted: "
                               f"{', '.join(all_flows)}")
        all_flows = [f for f in all_flows if f in set(flows)]
    flows = all_flows
    links = _link_names(result)
    colors = Palette(result, flows)
    by_flow = _by_flow(result)
    makers = {
        "throughput": lambda: _fig_throughput(result, flows, colors, by_flow),
        "rtt": lambda: _fig_flow_metric(result, flows, colors, by_flow, "srtt_ms",
                                        "smoothed RTT (ms)", "RTT (srtt) over time"),
        "cwnd": lambda: _fig_flow_metric(result, flows, colors, by_flow, "cwnd_pkts",
                                         "congestion window (packets)", "cwnd over time"),
        "queue_delay": lambda: _fig_queue_delay(result, links),
        "throughput_delay": lambda: _fig_throughput_delay(result, flows, colors),
    }
    images: dict[str, Path] = {}
    keys = FIGURES + (("multipath",) if _has_subflows(result) else ())
    keys += ("radio",) if radio_links(result) else ()
    makers["multipath"] = lambda: _fig_multipath(result)
    makers["radio"] = lambda: fig_radio(result, flows, colors, by_flow)
    for key in keys:
        fig = makers[key]()
        path = d_out / f"{key}.png"
        try:
            if not fig.get_tight_layout() and key != "queue_delay":
                fig.tight_layout()
            fig.savefig(path)
        finally:
            plt.close(fig)
        images[key] = path
    page = d_out / "report.html"
    tmp = d_out / ".report.html.partial"
    tmp.write_text(_html(result, images), encoding="utf-8")
    os.replace(tmp, page)
    return page
