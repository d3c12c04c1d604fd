"""Reports of a sweep (``rove sweep``, ``rove run --each``): schemes compared across points.

``rove report SWEEP_DIR`` reads ``summary.parquet`` (one row per flow per point; the grid keys
are its columns between ``seed`` and ``flow``) and writes into the sweep directory:

- ``comparison.png``: the Pantheon-style comparison: per scheme, goodput against delay (filled
  marker: 95th-percentile RTT, hollow: mean RTT, joined by a line), the mean over seeds with the
  spread over seeds as error bars (one standard deviation); delay axis reversed so that better
  is up and to the right; one panel per scenario point (each combination of the grid keys that
  are not the scheme's);
- ``vs_KEY.png`` for each such key with several values: goodput and p95 RTT against the key's
  values, one line per scheme (and per combination of the other keys);
- ``report.html``: the table of those means and spreads, and the figures.

A *scheme* is a flow's congestion control (the ``cc`` column), with the value of a
``...cc_params`` grid key when there is one: a sweep over ``flows.*.cc`` compares algorithms, a
fairness sweep with two algorithms per point shows each flow's algorithm.
"""

from __future__ import annotations

import html
import math
import os
from pathlib import Path

import numpy as np

from .results import ResultsError

__all__ = ["make_sweep_report", "make_runs_report", "scheme_table", "is_sweep_dir"]

SUMMARY_TABLE = "summary.parquet"
SWEEP_FILE = "sweep.json"
_METRICS = ("goodput_mbps", "mean_rtt_ms", "p95_rtt_ms", "retrans_rate")


def is_sweep_dir(d: Path) -> bool:
    return (d / SWEEP_FILE).is_file() and (d / SUMMARY_TABLE).is_file()


def _grid_keys(columns: list[str]) -> list[str]:
    try:
        return columns[columns.index("seed") + 1:columns.index("flow")]
    except ValueError:
        raise ResultsError(f"{SUMMARY_TABLE}: not a sweep table (needs the columns seed and "
                           f"flow)") from None


def _is_scheme_key(key: str) -> bool:
    return key.split(".")[-1] in ("cc", "cc_params")


def _text(v) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "-"
    return str(v)


def scheme_table(df):
    """Per (panel, scheme): the mean and standard deviation over seeds of each metric, where a
    seed's value is the mean over the scheme's flows in that point. Returns ``(table, panel_keys,
    schemes)``; the table is a DataFrame with columns ``panel``, ``scheme``, ``seeds`` and
    ``METRIC`` / ``METRIC_std`` for goodput, mean and p95 RTT and retransmission rate."""
    import pandas as pd

    keys = _grid_keys(list(df.columns))
    panel_keys = [k for k in keys if not _is_scheme_key(k)]
    param_keys = [k for k in keys if k.split(".")[-1] == "cc_params"]
    df = df.copy()
    df["scheme"] = df["cc"].astype(str)
    for k in param_keys:
        df["scheme"] = df["scheme"] + " " + df[k].map(_text)
    if panel_keys:
        short = {k: k.split(".")[-1] for k in panel_keys}
        if len(set(short.values())) < len(panel_keys):  # ambiguous last parts: full keys
            short = {k: k for k in panel_keys}
        df["panel"] = df[panel_keys].astype(str).apply(
            lambda row: ", ".join(row[k] if k == "case" else f"{short[k]}={row[k]}"
                                  for k in panel_keys), axis=1)
    else:
        df["panel"] = "all points"
    # the order of first appearance (grid order), not alphabetical
    panels = list(dict.fromkeys(df["panel"]))
    schemes = list(dict.fromkeys(df["scheme"]))
    per_seed = (df.groupby(["panel", "scheme", "seed"], sort=False)[list(_METRICS)]
                .mean().reset_index())
    rows = []
    for (panel, scheme), g in per_seed.groupby(["panel", "scheme"], sort=False):
        row = {"panel": panel, "scheme": scheme, "seeds": len(g)}
        for m in _METRICS:
            vals = g[m].to_numpy(dtype=float)
            vals = vals[np.isfinite(vals)]
            row[m] = float(vals.mean()) if len(vals) else math.nan
            row[f"{m}_std"] = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
        for k in panel_keys:
            row[k] = df.loc[df["panel"] == panel, k].iloc[0]
        rows.append(row)
    table = pd.DataFrame(rows)
    table["panel"] = pd.Categorical(table["panel"], panels, ordered=True)
    table = table.sort_values(["panel"], kind="stable").reset_index(drop=True)
    table["panel"] = table["panel"].astype(str)
    return table, panel_keys, schemes


def _colors(schemes):
    from .report import _pyplot

    cmap = _pyplot().get_cmap("tab10" if len(schemes) <= 10 else "tab20")
    return {s: cmap(i % cmap.N) for i, s in enumerate(schemes)}


def _fig_comparison(table, schemes, title: str, names: bool = False):
    """The Pantheon-style figure, one panel per scenario point; ``names`` writes each scheme's
    name beside its point (for a figure of one panel with many schemes)."""
    from .report import _pyplot

    plt = _pyplot()
    panels = list(dict.fromkeys(table["panel"]))
    ncol = min(3, len(panels))
    nrow = math.ceil(len(panels) / ncol)
    width, height = (7.5, 5.2) if names else (4.6, 3.9)
    fig, axes = plt.subplots(nrow, ncol, figsize=(width * ncol + 1.8, height * nrow),
                             squeeze=False)
    colors = _colors(schemes)
    for ax, panel in zip(axes.flat, panels):
        sub = table[table["panel"] == panel]
        xs, labels = [], []
        for _, r in sub.iterrows():
            c = colors[r["scheme"]]
            g, p95, mean = r["goodput_mbps"], r["p95_rtt_ms"], r["mean_rtt_ms"]
            if not (math.isfinite(g) and math.isfinite(p95)):
                continue
            if math.isfinite(mean):
                ax.plot([mean, p95], [g, g], color=c, lw=1.0, alpha=0.6)
                ax.scatter([mean], [g], s=30, facecolors="white", edgecolors=[c], zorder=3)
                xs.append(mean)
            ax.errorbar([p95], [g], xerr=[r["p95_rtt_ms_std"]], yerr=[r["goodput_mbps_std"]],
                        fmt="o", ms=7, color=c, ecolor=c, elinewidth=1.0, capsize=3, zorder=4)
            labels.append((r["scheme"], p95, g, c))
            xs.append(p95 + r["p95_rtt_ms_std"])
            xs.append(p95 - r["p95_rtt_ms_std"])
        tops = (sub["goodput_mbps"] + sub["goodput_mbps_std"]).to_numpy(dtype=float)
        tops = tops[np.isfinite(tops)]
        if names and xs and len(tops):
            # one panel with named points: zoom on them (the table beside it has the numbers)
            lows = (sub["goodput_mbps"] - sub["goodput_mbps_std"]).to_numpy(dtype=float)
            lo, hi = float(np.nanmin(lows)), float(tops.max())
            pad = max(0.08 * (hi - lo), 0.02 * hi, 1e-3)
            ax.set_ylim(max(0.0, lo - pad), hi + pad)
            left, right = max(xs), min(xs)
            pad = max(0.08 * (left - right), 1.0)
            ax.set_xlim(left + pad, max(0.0, right - pad))
            _name_points(ax, labels)
        else:
            if xs:
                ax.set_xlim(max(xs) * 1.1 + 1.0, 0)
            ax.set_ylim(0, tops.max() * 1.12 if len(tops) and tops.max() > 0 else 1.0)
            ax.set_title(panel, fontsize=9, loc="left")
        ax.set_xlabel("RTT (ms; ● p95, ○ mean)")
        ax.set_ylabel("goodput (Mbit/s)")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    handles = [plt.Line2D([], [], marker="o", ls="", color=colors[s], label=s) for s in schemes]
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0 - 1.6 / fig.get_figwidth(),
                                                                   0.93), fontsize=8,
               title="scheme")
    fig.suptitle(f"{title}: goodput against delay, mean over seeds ± 1 s.d. "
                 f"(better: up and right)", fontsize=10 if not names else 9)
    fig.tight_layout(rect=(0, 0, 1.0 - 1.7 / fig.get_figwidth(), 0.95))
    return fig


def _name_points(ax, labels) -> None:
    """Write each scheme's name beside its point, moving a name down (with a leader line) where
    it would cover one already written. Call after the axis limits are set."""
    placed: list[tuple[float, float]] = []
    step = 0.04
    for name, x, y, color in sorted(labels, key=lambda t: (-t[2], -t[1])):
        fx, fy = ax.transLimits.transform((x, y))
        tx, ty = fx + 0.012, fy + 0.015
        while any(abs(tx - px) < 0.11 and abs(ty - py) < step for px, py in placed):
            ty -= step
        placed.append((tx, ty))
        moved = ty < fy
        ax.annotate(name, (x, y), xytext=(tx, ty), textcoords="axes fraction", fontsize=7,
                    color=color, va="bottom" if not moved else "center",
                    arrowprops=dict(arrowstyle="-", color=color, lw=0.5, alpha=0.6)
                    if moved else None)


def _fig_versus(table, key: str, panel_keys, schemes, title: str):
    from .report import _pyplot

    plt = _pyplot()
    others = [k for k in panel_keys if k != key]
    values = list(dict.fromkeys(table[key].astype(str)))
    colors = _colors(schemes)
    styles = ["-", "--", ":", "-."]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.0))
    groups = (table.groupby(others, sort=False) if others else [((), table)])
    for gi, (combo, g) in enumerate(groups):
        combo = combo if isinstance(combo, tuple) else (combo,)
        suffix = (" (" + ", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(others, combo)) + ")"
                  if others else "")
        for scheme in schemes:
            s = g[g["scheme"] == scheme].set_index(g[key].astype(str)[g["scheme"] == scheme])
            if s.empty:
                continue
            x = [i for i, v in enumerate(values) if v in s.index]
            for ax, m in zip(axes, ("goodput_mbps", "p95_rtt_ms")):
                y = [s.loc[values[i], m] for i in x]
                e = [s.loc[values[i], f"{m}_std"] for i in x]
                ax.errorbar(x, y, yerr=e, color=colors[scheme], ls=styles[gi % len(styles)],
                            marker="o", ms=4, capsize=2, label=scheme + suffix)
    for ax, label in zip(axes, ("goodput (Mbit/s)", "p95 RTT (ms)")):
        ax.set_xticks(range(len(values)), values, rotation=30 if len(values) > 4 else 0)
        ax.set_xlabel(key)
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.suptitle(f"{title}: against {key} (mean over seeds ± 1 s.d.)", fontsize=10)
    fig.tight_layout()
    return fig


def _safe(key: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in key)


def _html(title: str, table, panel_keys, images: dict[str, Path], failures: int) -> str:
    import base64

    def cell(v, std=None, digits=3):
        if isinstance(v, float):
            if not math.isfinite(v):
                return "-"
            text = f"{v:.{digits}g}"
            return text + (f" ± {std:.2g}" if std else "")
        return html.escape(str(v))

    head = ["scenario point", "scheme", "seeds", "goodput (Mbit/s)", "mean RTT (ms)",
            "p95 RTT (ms)", "retransmissions"]
    rows = "".join(
        "<tr>" + "".join(f"<td>{c}</td>" for c in (
            html.escape(r["panel"]), html.escape(r["scheme"]), r["seeds"],
            cell(r["goodput_mbps"], r["goodput_mbps_std"]),
            cell(r["mean_rtt_ms"], r["mean_rtt_ms_std"]),
            cell(r["p95_rtt_ms"], r["p95_rtt_ms_std"]),
            cell(r["retrans_rate"] * 100, r["retrans_rate_std"] * 100) + " %")) + "</tr>"
        for _, r in table.iterrows())
    figs = "".join(
        f"<h2>{html.escape(name)}</h2><img alt='{html.escape(name)}' "
        f"src='data:image/png;base64,{base64.b64encode(p.read_bytes()).decode()}'>"
        for name, p in images.items())
    note = (f"<p><b>{failures} point(s) failed</b>: see failures.json; they are not in the "
            f"table.</p>" if failures else "")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>body{{font-family:sans-serif;max-width:1200px;margin:2em auto}}"
            f"table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:3px 8px;"
            f"text-align:right}}img{{max-width:100%}}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>{note}<p>Each value: the mean over seeds of the "
            f"scheme's flows' mean in a point, ± one standard deviation over seeds.</p>"
            f"<table><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr>{rows}</table>"
            f"{figs}</body></html>")


def make_sweep_report(directory: str | os.PathLike, out: str | os.PathLike | None = None,
                      markdown: bool = False) -> Path:
    """Draw the comparison of a sweep directory into ``out`` (default: the sweep directory);
    return the path of its ``report.html``, or with ``markdown`` of its ``README.md``: a page
    for a documentation folder, with one figure and one table per scenario point (the sweep
    file's ``title`` and ``description`` on top, its skipped cases and failed points named)."""
    import pandas as pd

    d = Path(directory)
    if not is_sweep_dir(d):
        raise ResultsError(f"{d}: not a complete sweep directory (needs {SWEEP_FILE} and "
                           f"{SUMMARY_TABLE}; a sweep that was interrupted writes them when "
                           f"rerun)")
    df = pd.read_parquet(d / SUMMARY_TABLE)
    if df.empty:
        raise ResultsError(f"{d / SUMMARY_TABLE}: no complete point to report")
    failures = _read_json(d / "failures.json", [])
    out = Path(out) if out is not None else d
    if markdown:
        manifest = _read_json(d / SWEEP_FILE, {})
        if "case" in df.columns and isinstance(manifest.get("cases"), dict):
            order = {c: i for i, c in enumerate(manifest["cases"])}  # the sweep file's order
            df = df.sort_values("case", key=lambda c: c.astype(str).map(order), kind="stable")
        return _write_markdown(df, out, manifest.get("title") or f"sweep {d.name}",
                               manifest.get("description"), failures,
                               _read_json(d / "skipped.json", []))
    return _write(df, out, f"sweep {d.name}", len(failures))


def _read_json(path: Path, default):
    import json

    if not path.is_file():
        return default
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ResultsError(f"{path}: unreadable: {' '.join(str(e).split())}") from None


def _md_cell(v, std=None, scale=1.0, decimals=2) -> str:
    """``v ± std`` with fixed decimals; the spread is left out when it rounds to zero (runs
    without a random component give the same value for every seed)."""
    if not isinstance(v, float) or not math.isfinite(v):
        return "-"
    text = f"{v * scale:.{decimals}f}"
    if std and round(std * scale, decimals) != 0:
        text += f" ± {std * scale:.{decimals}f}"
    return text


def _write_markdown(df, out: Path, title: str, description: str | None, failures: list,
                    skipped: list) -> Path:
    """README.md and its figures: per scenario point, the Pantheon-style figure (one point per
    scheme, named) and the table of means ± s.d. over seeds; then each metric against each
    non-case grid key."""
    from .report import _pyplot
    from .results import write_bytes_atomically

    out.mkdir(parents=True, exist_ok=True)
    write_bytes_atomically(out / ".rove-page", b"a sweep's page, written by rove report --markdown\n")
    for old in [*out.glob("scenario-*.png"), *out.glob("vs_*.png")]:  # an earlier page's figures
        old.unlink()
    table, panel_keys, schemes = scheme_table(df)
    plt = _pyplot()

    def save(fig, name: str) -> str:
        try:
            fig.savefig(out / name)
        finally:
            plt.close(fig)
        return name

    seeds = sorted({int(s) for s in df["seed"]})
    lines = [f"# {title}", ""]
    if description:
        lines += [description.strip(), ""]
    lines += [f"Each point and cell: the mean over {len(seeds)} seed(s) ({', '.join(map(str, seeds))})"
              f" of the scheme's flows' mean, ± one standard deviation over seeds. Delay axes are "
              f"reversed: better is up and to the right. Filled marker: 95th-percentile RTT; "
              f"hollow: mean RTT.", ""]
    for s in skipped:
        lines.append(f"- **{s.get('case')}: skipped**: {', '.join(s.get('missing', []))} "
                     f"absent on the machine that ran the sweep.")
    for f in failures:
        lines.append(f"- **{f.get('point')}: failed**: {f.get('error')}")
    if skipped or failures:
        lines.append("")
    head = ("| scheme | seeds | goodput (Mbit/s) | mean RTT (ms) | p95 RTT (ms) | "
            "retransmissions (%) |\n|---|---:|---:|---:|---:|---:|")
    for i, panel in enumerate(dict.fromkeys(table["panel"])):
        sub = table[table["panel"] == panel]
        fig = save(_fig_comparison(sub, schemes, panel, names=True),
                   f"scenario-{i + 1:02d}-{_safe(panel)}.png")
        lines += [f"## {panel}", "", f"![{panel}]({fig})", "", head]
        for _, r in sub.iterrows():
            lines.append(
                f"| {r['scheme']} | {r['seeds']} | "
                f"{_md_cell(r['goodput_mbps'], r['goodput_mbps_std'])} | "
                f"{_md_cell(r['mean_rtt_ms'], r['mean_rtt_ms_std'], decimals=1)} | "
                f"{_md_cell(r['p95_rtt_ms'], r['p95_rtt_ms_std'], decimals=1)} | "
                f"{_md_cell(r['retrans_rate'], r['retrans_rate_std'], scale=100)} |")
        lines.append("")
    for key in panel_keys:
        if key != "case" and table[key].astype(str).nunique() > 1:
            fig = save(_fig_versus(table, key, panel_keys, schemes, title), f"vs_{_safe(key)}.png")
            lines += [f"## Against {key}", "", f"![against {key}]({fig})", ""]
    page = out / "README.md"
    write_bytes_atomically(page, "\n".join(lines).encode())
    return page


def _write(df, out: Path, title: str, failures: int) -> Path:
    """Draw the comparison of the sweep-shaped table ``df`` into ``out``; return report.html."""
    from .report import _pyplot
    from .results import write_bytes_atomically

    out.mkdir(parents=True, exist_ok=True)
    table, panel_keys, schemes = scheme_table(df)
    plt = _pyplot()
    figures = {"comparison": lambda: _fig_comparison(table, schemes, title)}
    for key in panel_keys:
        if key != "case" and table[key].astype(str).nunique() > 1:
            figures[f"vs_{_safe(key)}"] = (
                lambda key=key: _fig_versus(table, key, panel_keys, schemes, title))
    images = {}
    for name, make in figures.items():
        fig = make()
        path = out / f"{name}.png"
        try:
            fig.savefig(path)
        finally:
            plt.close(fig)
        images[name] = path
    page = out / "report.html"
    write_bytes_atomically(page, _html(title, table, panel_keys, images, failures).encode())
    return page


def _labels(dirs: list[Path]) -> list[str]:
    """Each directory's name, or its path where names repeat (``a/out``, ``b/out``)."""
    names = [d.name or str(d) for d in dirs]
    return [str(d) if names.count(n) > 1 else n for d, n in zip(dirs, names)]


def make_runs_report(dirs, out: str | os.PathLike) -> Path:
    """Compare several results directories the way a sweep's schemes are compared: each
    directory is a scheme named after it, in one panel; return report.html's path."""
    import pandas as pd

    from .results import read_results

    dirs = [Path(d) for d in dirs]
    rows = []
    for d, label in zip(dirs, _labels(dirs)):
        r = read_results(d)
        for f in r.summary.get("flows", []):
            rows.append({"point": label, "seed": r.summary.get("seed"), "flow": f.get("name"),
                         "cc": label, **{m: f.get(m) for m in _METRICS}})
    df = pd.DataFrame(rows)
    for m in _METRICS:
        df[m] = pd.to_numeric(df[m], errors="coerce")
    return _write(df, Path(out), f"{len(dirs)} runs", failures=0)
