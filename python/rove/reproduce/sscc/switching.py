"""The switching demo (thesis Fig. 5.18): which algorithm MPTCP-SSCC's selector runs on each
subflow over time, on a cellular path and a WiFi path that loses 5 % of its packets during
10-20 s (scenarios/sscc/fig5-18-switching.toml).

Each run's ``features.parquet`` (the ``data_units`` recorder) holds every Data Unit of each
subflow with the algorithm that ran during it; a subflow's algorithm in a window is the one most
of its Data Units there ran (Data Units are 20 ACKs, so a faster period weighs more, as in the
thesis's per-DU plot).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from ..document import Section, Table
from ..study import Context, pyplot, save_figure
from ..verdicts import Claim, NOT_MEASURED, combine, judge_fraction
from .common import SSCC, opened_section, sscc_every, thesis_models

WHERE = "§5.5.3, Fig. 5.18"
WINDOWS = ((0.0, 10.0), (10.0, 20.0), (20.0, 30.0))
SUBFLOW_NAMES = {0: "cellular", 1: "WiFi"}
CANDIDATE_ORDER = ("cubic", "bbr", "c2tcp", "vegas", "westwood", "illinois", "olia_sbd")

# The selector with a prediction every 50 Data Units instead of every one (rove's ablation).
SSCC_PERIOD_50 = sscc_every(50, recorder=True)
THESIS_MODELS = thesis_models("mp", recorder=True)


def data_units(run_dir: Path) -> pd.DataFrame:
    """A run's Data Units: ``time_s``, ``subflow``, ``cc``, sorted by time."""
    t = pq.read_table(Path(run_dir) / "features.parquet",
                      columns=["time_s", "subflow", "cc"]).to_pandas()
    t["cc"] = t["cc"].astype(str)
    return t.sort_values("time_s", kind="stable").reset_index(drop=True)


def majority(dus: pd.DataFrame, subflow: int, t0: float, t1: float) -> tuple[str, dict]:
    """The algorithm most of ``subflow``'s Data Units in [t0, t1) ran ("" when none), and the
    counts per algorithm (ties: the first in :data:`CANDIDATE_ORDER`)."""
    d = dus[(dus["subflow"] == subflow) & (dus["time_s"] >= t0) & (dus["time_s"] < t1)]
    counts = {str(k): int(v) for k, v in d["cc"].value_counts().items()}
    if not counts:
        return "", counts
    order = {c: i for i, c in enumerate(CANDIDATE_ORDER)}
    best = max(counts, key=lambda c: (counts[c], -order.get(c, len(order))))
    return best, counts


def measure(run_dir: Path, rows: pd.DataFrame) -> dict:
    """A run's record: per subflow its first Data Unit's algorithm, its majority over the whole
    run and in each window, its switches, and the directory (for the figure)."""
    dus = data_units(run_dir)
    out: dict = {"dir": str(run_dir)}
    for sub, name in SUBFLOW_NAMES.items():
        d = dus[dus["subflow"] == sub]
        out[f"{name}_first"] = str(d["cc"].iloc[0]) if len(d) else ""
        out[f"{name}_all"] = majority(dus, sub, 0.0, float("inf"))[0]
        for i, (t0, t1) in enumerate(WINDOWS):
            best, counts = majority(dus, sub, t0, t1)
            out[f"{name}_w{i}"] = best
            out[f"{name}_w{i}_counts"] = counts
        out[f"{name}_switches"] = int((d["cc"] != d["cc"].shift()).sum() - 1) if len(d) else 0
    mp = rows[rows["flow"].astype(str) == "mp"]
    out["goodput_mbps"] = float(mp["goodput_mbps"].iloc[0]) if len(mp) else float("nan")
    return out


def claims_of(runs: pd.DataFrame) -> list[Claim]:
    """The thesis's three statements on Fig. 5.18, each judged by the share of seeds where it is
    true (holds at 80 %, partly at 50 %)."""
    def fraction(quote, flags, criterion):
        v, share = judge_fraction(flags)
        return Claim(quote, WHERE, f"{sum(flags)} of {len(flags)} seeds" +
                     ("" if share is None else f" ({share:.0%})"),
                     f"{criterion}; holds in 80 % of the seeds, partly in 50 %", v)

    first = [r["cellular_first"] == "cubic" and r["WiFi_first"] == "cubic"
             for _, r in runs.iterrows()]
    cell = [r["cellular_all"] == "c2tcp" for _, r in runs.iterrows()]
    wifi = [r["WiFi_w1"] == "bbr" and r["WiFi_w0"] != "bbr" for _, r in runs.iterrows()]
    return [
        fraction("No history exists yet, so both subflows start with CUBIC", first,
                 "each subflow's first Data Unit ran CUBIC"),
        fraction("The cellular subflow then mostly runs C2TCP", cell,
                 "C2TCP is the algorithm of most of the cellular subflow's Data Units over "
                 "0-30 s"),
        fraction("The WiFi subflow switches to BBR during the lossy 10-20 s", wifi,
                 "BBR is the algorithm of most of the WiFi subflow's Data Units in 10-20 s and "
                 "not in 0-10 s (a switch because of the loss)"),
    ]


def window_table(runs: pd.DataFrame, caption: str) -> Table:
    """Data Units per algorithm, summed over seeds, per subflow and window."""
    rows = []
    for name in SUBFLOW_NAMES.values():
        for i, (t0, t1) in enumerate(WINDOWS):
            total: dict[str, int] = {}
            for counts in runs[f"{name}_w{i}_counts"]:
                for k, v in counts.items():
                    total[k] = total.get(k, 0) + v
            n = sum(total.values()) or 1
            rows.append([name, f"{t0:g}-{t1:g} s",
                         ", ".join(f"{k} {100 * v / n:.0f} %" for k, v in
                                   sorted(total.items(), key=lambda kv: -kv[1]))])
    return Table(["subflow", "window", "share of Data Units per algorithm (all seeds)"], rows,
                 caption)


def timeline_figure(ctx: Context, run_dir: Path, name: str, title: str) -> str:
    dus = data_units(run_dir)
    present = [c for c in CANDIDATE_ORDER if c in set(dus["cc"])]
    present += sorted(set(dus["cc"]) - set(present))
    y = {c: i for i, c in enumerate(present)}
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(7, 4.2), sharex=True)
    for ax, (sub, sname) in zip(axes, SUBFLOW_NAMES.items()):
        d = dus[dus["subflow"] == sub]
        ax.axvspan(10, 20, color="tab:red", alpha=0.08)
        ax.plot(d["time_s"], [y[c] for c in d["cc"]], "|", ms=6)
        ax.set_yticks(range(len(present)))
        ax.set_yticklabels(present, fontsize=7)
        ax.set_ylabel(sname)
        ax.grid(True, axis="y", alpha=0.3)
    axes[-1].set_xlabel("time (s); shaded: WiFi loses 5 %")
    axes[0].set_title(title)
    return save_figure(fig, ctx.figure(name))


def analyse(ctx: Context) -> Section:
    return _analyse(ctx, "The switching demo (Fig. 5.18)", SSCC.key)


def analyse_ablation(ctx: Context) -> Section:
    """The demo with each ablation's selector: its own section per series."""
    s = _analyse(ctx, "The switching demo with a prediction every 50 Data Units (rove's "
                 "ablation)", SSCC_PERIOD_50.key)
    s.paragraphs.insert(0, "The same runs with the selector predicting every 50 Data Units "
                        "instead of every one (`period = 50`): does switching less often change "
                        "what it picks?")
    t = _analyse(ctx, "", THESIS_MODELS.key)
    s.paragraphs.append("With the thesis-scale models (scenarios/sscc/model-thesis/) and a "
                        "prediction every Data Unit:")
    s.tables += t.tables
    s.figures += t.figures
    for c in t.claims:
        c.quote += " (thesis-scale models)"
    s.claims += t.claims
    s.verdict = combine(c.verdict for c in s.claims) if s.claims else NOT_MEASURED
    return s


def _analyse(ctx: Context, title: str, key: str) -> Section:
    s, runs = opened_section(ctx, title, [key])
    if len(runs):
        runs = runs[runs["series"] == key].sort_values("seed")
    if not len(runs):
        if not s.paragraphs:
            s.paragraphs.append(f"No run of {key} completed.")
        return s
    s.paragraphs.append(
        "Setup (thesis §5.5.3, scenarios/sscc/fig5-18-switching.toml): one MPTCP-SSCC download "
        "over a cellular path (20 Mbit/s, RTT 40 ms, no loss) and a WiFi path (10 Mbit/s, RTT "
        "100 ms, 5 % random loss during 10-20 s), disjoint bottlenecks, 1-BDP buffers; the "
        "built-in models (`rove train sscc`, default scale), a prediction every Data Unit "
        "unless stated. [GAP] The thesis's saturatr traces are not published: constant rates.")
    s.tables.append(window_table(runs, f"{len(runs)} seeds"))
    rows = [[int(r["seed"]), r["cellular_first"], r["cellular_all"], r["cellular_switches"],
             r["WiFi_first"], r["WiFi_w0"], r["WiFi_w1"], r["WiFi_w2"], r["WiFi_switches"],
             f"{r['goodput_mbps']:.2f}"] for _, r in runs.iterrows()]
    s.tables.append(Table(["seed", "cellular: first", "cellular: most", "cellular: switches",
                           "WiFi: first", "WiFi 0-10 s", "WiFi 10-20 s", "WiFi 20-30 s",
                           "WiFi: switches", "goodput (Mbit/s)"], rows,
                          "per seed: each subflow's first algorithm, the algorithm of most of "
                          "its Data Units, and its switches"))
    first = runs.iloc[0]
    s.figures.append((timeline_figure(ctx, Path(first["dir"]), f"timeline-{key}",
                                      f"{title}, seed {int(first['seed'])}"),
                      "The algorithm of every Data Unit of each subflow over time (one seed)."))
    s.claims += claims_of(runs)
    s.verdict = combine(c.verdict for c in s.claims) if s.claims else NOT_MEASURED
    return s
