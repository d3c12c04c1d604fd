"""The multipath tables of docs/multipath.md, from the output of two sweeps.

    rove sweep scenarios/sweeps/multipath-schedulers.toml -o results/multipath-schedulers
    rove sweep scenarios/sweeps/multipath-coupling.toml -o results/multipath-coupling
    python -m rove.mptables results/multipath-schedulers results/multipath-coupling

prints the scheduler tables (one per receive window) and the coupled-congestion-control table
in Markdown. Every cell is the mean over the sweep's seeds, followed by ``[min–max]`` where the
seeds differ at the printed precision; per-subflow throughputs come from each run's own
``summary.json`` (the sweep table holds the connection's row only).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Sequence

SCHEDULERS = ["minrtt", "roundrobin", "redundant", "blest", "ecf"]
CCS = ["cubic", "reno", "lia", "olia", "balia", "wvegas"]


def cell(values: Sequence[float], fmt: str = "{:.1f}") -> str:
    """Mean of ``values``, with ``[min–max]`` when those differ once formatted."""
    vals = [float(v) for v in values]
    mean, lo, hi = sum(vals) / len(vals), min(vals), max(vals)
    text = fmt.format(mean)
    if fmt.format(lo) != fmt.format(hi):
        text += f" [{fmt.format(lo)}–{fmt.format(hi)}]"
    return text


def _download(values: Sequence[float | None], simulated_s: float) -> str:
    if any(v is None or v != v for v in values):  # None or NaN: not finished
        return f"not done in {simulated_s:g} s"
    return cell(values)


def _subflow_mbps(sweep: Path, point: str) -> list[float]:
    summary = json.loads((sweep / "runs" / point / "summary.json").read_text())
    return [s["throughput_mbps"] for s in summary["flows"][0]["subflows"]]


def _rows(sweep: Path):
    import pandas as pd

    table = pd.read_parquet(sweep / "summary.parquet")
    return table[table["flow"] == "mptcp"]


def _columns(rows, sweep: Path, simulated_s: float,
             with_subflows: bool) -> list[str]:
    out = [cell(rows["goodput_mbps"], "{:.2f}")]
    if with_subflows:
        per = [_subflow_mbps(sweep, p) for p in rows["point"]]
        out.append(" / ".join(f"{sum(x[k] for x in per) / len(per):.2f}" for k in range(2)))
    out += [cell(rows["ofo_mean_bytes"] / 1000), cell(rows["ofo_max_bytes"] / 1000, "{:.0f}"),
            cell(rows["app_delay_p95_ms"]),
            _download([None if v != v else v for v in rows["download_time_s"]], simulated_s)]
    return out


def _window_bytes(text: str) -> float:
    units = {"KiB": 1024, "MiB": 1 << 20, "KB": 1e3, "MB": 1e6, "B": 1}
    for suffix, scale in units.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * scale
    return float(text)


def scheduler_tables(sweep: Path, simulated_s: float = 150.0) -> str:
    rows = _rows(sweep)
    parts = []
    # The default window first, then smaller ones (the order docs/multipath.md discusses them).
    for rwnd in sorted(set(rows["flows.0.rwnd"]), key=_window_bytes, reverse=True):
        seeds = ", ".join(str(s) for s in sorted(set(rows["seed"])))
        parts.append(f"**Receive window {rwnd}** (mean of seeds {seeds}; min–max in brackets "
                     "where they differ)\n")
        parts.append("| scheduler | goodput (Mbit/s) | WiFi / LTE throughput (Mbit/s) | "
                     "reordering buffer mean (KB) | max (KB) | app delay p95 (ms) | "
                     "100 MB download (s) |")
        parts.append("|---|---|---|---|---|---|---|")
        for sched in SCHEDULERS:
            sel = rows[(rows["flows.0.rwnd"] == rwnd) & (rows["flows.0.scheduler"] == sched)]
            if len(sel):
                parts.append("| " + " | ".join([sched] + _columns(sel, sweep, simulated_s, True))
                             + " |")
        parts.append("")
    return "\n".join(parts)


def coupling_table(sweep: Path, simulated_s: float = 150.0) -> str:
    rows = _rows(sweep)
    parts = ["| cc | coupling | goodput (Mbit/s) | reordering buffer mean (KB) | max (KB) | "
             "app delay p95 (ms) | 100 MB download (s) |",
             "|---|---|---|---|---|---|---|"]
    for cc in CCS:
        sel = rows[rows["flows.0.cc"] == cc]
        if len(sel):
            coupling = sel["coupling"].iloc[0]
            parts.append("| " + " | ".join([cc, coupling]
                                           + _columns(sel, sweep, simulated_s, False)) + " |")
    return "\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m rove.mptables SCHEDULER_SWEEP_DIR COUPLING_SWEEP_DIR",
              file=sys.stderr)
        return 2
    makers: list[tuple[Path, Callable[[Path], str]]] = [
        (Path(args[0]), scheduler_tables), (Path(args[1]), coupling_table)]
    for d, make in makers:
        if not (d / "summary.parquet").is_file():
            print(f"rove.mptables: {d}: no summary.parquet (run the sweep first)", file=sys.stderr)
            return 2
        print(make(d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
