"""The performance comparison on dual-path traces (thesis §5.5.4, Figs. 5.19-5.20; the
"+21-32 %" claim): MPTCP-SSCC against LIA, OLIA, BALIA and wVegas (MPCC is not built in rove)
on networks of a cellular and a WiFi path, short, long and mixed flows.

**Networks.** The thesis replayed 50 recorded dual-path traces (saturatr bandwidth, ping's delay
and loss) that its training had not used. None is public, and rove's ``rove train sscc`` trains
on Table 5.4's fixed-rate environments only (the thesis's second, trace-based iteration is not
built), so no trace here was seen in training. Each network (:func:`draw_networks`, seeded) is a
cellular and a WiFi trace drawn once with ``rove trace synth cellular`` and written beside the
runs, so that a network's repetitions replay the same traces, with per-path delays and WiFi loss.
Half the networks are *stationary* and half *mobile* (the thesis's split). [GAP] every
parameter of the draw (:data:`STATIONARY`, :data:`MOBILE`, the RTT and loss ranges): the thesis
gives none; rove has no WiFi trace generator, so a WiFi path is the cellular generator with
WiFi-like parameters.

**Configurations** are the committed sweep's cases (``scenarios/sscc/sweeps/performance.toml``:
a download size and a CUBIC background size per path). A run's throughput is the download's
size over its download time (thesis: "per-transfer average throughput"); its queueing delay
is every packet's sojourn in the two downlinks' queues while the download lasts (thesis: "per
packet queuing delay on both paths from mpshell logs", which include the background's packets
too): the mean, and the 95th percentile of the 10-ms samples' means weighted by their packets
([GAP]: rove's queue record keeps a mean per sample, not every packet).

**Normalisation** (thesis §5.5.4, as :func:`~rove.reproduce.verdicts.normalise_networks`): per
(network, configuration), each scheme's throughput averaged over its runs is divided by the
largest of any scheme there, its average and p95 delay by the smallest average delay; then
averaged over the (network, configuration) cells of a flow class (short, long, mixed = both).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..document import Section, Table, fmt
from ..runner import Setting
from ..study import Context, pyplot, run_parts, save_figure
from ..verdicts import (FAILS, HOLDS, NOT_MEASURED, PARTLY, Claim, combine, is_number,
                        normalise_networks)
from .common import (CLOSE, COUPLED, DELAY_CUT, OLIA, SSCC, THROUGHPUT_GAIN, WVEGAS,
                     opened_section, records, sscc_every, thesis_models, uncoupled)

WHERE = "§5.5.4, Figs. 5.19-5.20"
DOWNLINKS = ("cell_down", "wifi_down")
TRACE_S = 90                                  # the longest configuration's run
SAMPLE_S = 0.01                               # the scenario's time-series interval (default)

# [GAP] The networks' draw. A path's trace: `rove trace synth cellular` with these parameters
# (median in Mbit/s drawn uniformly from the range).
STATIONARY = {
    "cellular": {"median": (8, 20), "sigma": 0.3, "coherence": "2s", "outage_rate": 0.005,
                 "outage": "300ms"},
    "wifi": {"median": (10, 30), "sigma": 0.3, "coherence": "1s", "outage_rate": 0.0,
             "outage": "300ms"},
}
MOBILE = {
    "cellular": {"median": (5, 15), "sigma": 0.7, "coherence": "300ms", "outage_rate": 0.05,
                 "outage": "500ms"},
    "wifi": {"median": (5, 20), "sigma": 0.8, "coherence": "200ms", "outage_rate": 0.1,
             "outage": "1s"},
}
CELL_RTT_MS = (40.0, 120.0)                   # uniform; split evenly between data and ACK link
WIFI_RTT_MS = (20.0, 80.0)
WIFI_LOSS = (0.0, 0.01)                       # uniform random loss on the WiFi downlink
NETWORK_SEED = 5                              # numpy default_rng seed of the draw
NETWORKS_FULL = 8                             # half stationary, half mobile
NETWORKS_QUICK = 1
ABLATION_NETWORKS = 4                         # the ablation runs the first four


def draw_networks(n: int, seed: int = NETWORK_SEED) -> list[dict]:
    """``n`` networks (alternately stationary and mobile): per path its trace parameters and
    generator seed, its RTT, and the WiFi loss."""
    rng = np.random.default_rng(seed)
    nets = []
    for i in range(n):
        kind = "stationary" if i % 2 == 0 else "mobile"
        spec = STATIONARY if kind == "stationary" else MOBILE
        net = {"key": f"net{i + 1}-{kind}", "kind": kind}
        for path, rtt in (("cellular", CELL_RTT_MS), ("wifi", WIFI_RTT_MS)):
            p = dict(spec[path])
            lo, hi = p.pop("median")
            p["median"] = f"{rng.uniform(lo, hi):.1f}Mbps"
            net[path] = {"params": p, "seed": int(rng.integers(1, 2**31)),
                         "rtt_ms": round(float(rng.uniform(*rtt)), 1)}
        net["wifi_loss"] = round(float(rng.uniform(*WIFI_LOSS)), 4)
        nets.append(net)
    return nets


def write_traces(nets: list[dict], directory: Path) -> None:
    """Each network's two trace files in ``directory`` (reused when present); their paths go
    into ``net[path]["trace"]``."""
    import rove

    from ...results import write_bytes_atomically

    directory.mkdir(parents=True, exist_ok=True)
    for net in nets:
        for path in ("cellular", "wifi"):
            p = net[path]
            # Absolute: the sweep resolves a relative trace against the scenario's folder.
            f = (directory / f"{net['key']}-{path}.down").resolve()
            if not f.is_file():
                stamps = rove.synth_trace("cellular", p["params"], TRACE_S * 1000, p["seed"])
                write_bytes_atomically(f, "".join(f"{int(t)}\n" for t in stamps).encode())
            p["trace"] = str(f)


def network_setting(net: dict) -> Setting:
    c, w = net["cellular"], net["wifi"]
    fixed = {"links.cell_down.trace": c["trace"], "links.wifi_down.trace": w["trace"],
             "links.cell_down.delay": f"{c['rtt_ms'] / 2:g}ms",
             "links.cell_up.delay": f"{c['rtt_ms'] / 2:g}ms",
             "links.wifi_down.delay": f"{w['rtt_ms'] / 2:g}ms",
             "links.wifi_up.delay": f"{w['rtt_ms'] / 2:g}ms",
             "links.wifi_down.loss": net["wifi_loss"]}
    return Setting(net["key"], net["key"], fixed)


def networks_table(nets: list[dict]) -> Table:
    from ..measures import trace_mean_mbps

    rows = []
    for n in nets:
        c, w = n["cellular"], n["wifi"]
        rows.append([n["key"], n["kind"],
                     f"{trace_mean_mbps(Path(c['trace']))[0]:.1f}", f"{c['rtt_ms']:g}",
                     f"{trace_mean_mbps(Path(w['trace']))[0]:.1f}", f"{w['rtt_ms']:g}",
                     f"{100 * n['wifi_loss']:.2f}"])
    return Table(["network", "kind", "cellular mean (Mbit/s)", "cellular RTT (ms)",
                  "WiFi mean (Mbit/s)", "WiFi RTT (ms)", "WiFi loss (%)"], rows,
                 "the networks (traces drawn once, replayed by every run of the network)")


# --------------------------------------------------------------------------------------------
# Measuring a run


def weighted_percentile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The ``q`` quantile (0-1) of ``values`` each counted ``weights`` times: the smallest value
    whose cumulative weight reaches ``q`` of the total."""
    keep = weights > 0
    v, w = values[keep], weights[keep]
    if not len(v):
        return float("nan")
    order = np.argsort(v, kind="stable")
    cum = np.cumsum(w[order])
    return float(v[order][np.searchsorted(cum, q * cum[-1] - 1e-9)])


def queue_delays(queue: pd.DataFrame, end_s: float) -> tuple[float, float]:
    """(mean, p95) queueing delay in ms of the downlinks' packets up to ``end_s`` (the samples
    whose interval ends at or before the next sample after it)."""
    q = queue[queue["link"].astype(str).isin(DOWNLINKS) & (queue["time_s"] <= end_s + SAMPLE_S)]
    n = q["sojourn_count"].to_numpy(dtype=float)
    m = q["sojourn_mean_ms"].to_numpy(dtype=float)
    ok = np.isfinite(m) & (n > 0)
    if not ok.any():
        return float("nan"), float("nan")
    mean = float((m[ok] * n[ok]).sum() / n[ok].sum())
    return mean, weighted_percentile(m[ok], n[ok], 0.95)


def measure(run_dir: Path, rows: pd.DataFrame) -> dict:
    """A run's record: the download's throughput (Mbit/s), whether it finished, and its
    queueing delays (ms)."""
    import json

    import pyarrow.parquet as pq

    mp = rows[rows["flow"].astype(str) == "mp"].iloc[0]
    done = bool(mp.get("completed", False))
    t = float(mp["download_time_s"]) if done and is_number(mp.get("download_time_s")) else None
    bits = float(mp["bytes_delivered"]) * 8
    if t is not None and t > 0:
        tput, end = bits / t / 1e6, t
    else:                   # unfinished: what arrived over the whole run
        end = float(json.loads((Path(run_dir) / "summary.json").read_text())["duration_s"])
        tput = bits / end / 1e6
    queue = pq.read_table(Path(run_dir) / "queue.parquet",
                          columns=["time_s", "link", "sojourn_count", "sojourn_mean_ms"]
                          ).to_pandas()
    mean, p95 = queue_delays(queue, end)
    return {"tput_mbps": tput, "completed": done, "delay_ms": mean, "p95_ms": p95}


# --------------------------------------------------------------------------------------------
# Running


def run_on_networks(n_full: int):
    """An experiment's ``run``: draw ``n_full`` networks (one in quick mode), write their
    traces, run the sweep for every scheme on every network, and gather one record per run
    into ``ctx.data``."""

    def run(exp, out: Path, quick: bool, jobs: int, log, options) -> Context:
        from . import SWEEPS

        nets = draw_networks(NETWORKS_QUICK if quick else n_full)
        write_traces(nets, out / "traces")
        settings = [network_setting(n) for n in nets]
        parts = tuple(replace(p, settings=lambda _q, s=settings: (s, None)) for p in exp.parts)
        ctx = run_parts(SWEEPS, replace(exp, parts=parts, run=None), out, quick, jobs, log,
                        options)
        ctx.data = {"runs": records(ctx, measure), "networks": nets}
        return ctx

    return run


# --------------------------------------------------------------------------------------------
# Analysis


def flow_class(case: str) -> str:
    return "short" if str(case).startswith("short") else "long"


def normalised(runs: pd.DataFrame, cls: str | None = None, kind: str | None = None,
               reference=None) -> dict:
    """:func:`normalise_networks` over the (network, configuration) cells of flow class ``cls``
    (None: mixed) and network kind ``kind`` (None: all)."""
    r = runs
    if cls is not None:
        r = r[r["case"].map(flow_class) == cls]
    if kind is not None:
        r = r[r["setting"].str.endswith(kind)]
    rows = [{"network": (x.setting, x.case), "scheme": x.series, "tput": x.tput_mbps,
             "delay": x.delay_ms, "p95": x.p95_ms} for x in r.itertuples()]
    return normalise_networks(rows, reference=reference)


def gain_claim(quote: str, norm: dict, baselines, gain: float, key: str = "tput_mean",
               higher_is_better: bool = True, where: str = WHERE) -> Claim:
    """MPTCP-SSCC's normalised value against each baseline's: the ratio (ours / theirs) at
    least ``1 + gain`` (a gain in throughput) or at most ``1 - gain`` (a cut in delay) against
    every baseline: holds; in the right direction against every one: partly; else does not
    hold."""
    ours = (norm.get(SSCC.key) or {}).get(key)
    parts, vs = [], []
    for b in baselines:
        theirs = (norm.get(b.key) or {}).get(key)
        if not (is_number(ours) and is_number(theirs) and theirs > 0):
            vs.append(NOT_MEASURED)
            parts.append(f"{b.label}: –")
            continue
        r = ours / theirs
        if higher_is_better:
            v = HOLDS if r >= 1 + gain - 1e-12 else (PARTLY if r > 1 else FAILS)
        else:
            v = HOLDS if r <= 1 - gain + 1e-12 else (PARTLY if r < 1 else FAILS)
        vs.append(v)
        parts.append(f"{b.label}: {100 * (r - 1):+.1f} %")
    what = "throughput" if higher_is_better else "average queueing delay"
    cmp = f"≥ +{100 * gain:g} %" if higher_is_better else f"≤ −{100 * gain:g} %"
    return Claim(quote, where, f"MPTCP-SSCC's normalised {what} against " + "; ".join(parts),
                 f"ratio of the normalised {what}s (mean over the cells) {cmp} against every "
                 f"baseline: holds; better than every baseline but not by that: partly; else "
                 f"does not hold", combine(vs))


def scheme_table(ctx: Context, runs: pd.DataFrame, reference) -> Table:
    rows = []
    labels = ctx.labels()
    norms = {c: normalised(runs, None if c == "mixed" else c, reference=reference)
             for c in ("short", "long", "mixed")}
    for key, label in labels.items():
        row = [label]
        for c in ("short", "long", "mixed"):
            n = norms[c].get(key) or {}
            row += [f"{fmt(n.get('tput_mean'), '.3f')} ± {fmt(n.get('tput_sd'), '.3f')}",
                    fmt(n.get("delay_mean"), ".2f"), fmt(n.get("p95_mean"), ".2f")]
        rows.append(row)
    head = ["scheme"] + [f"{c}: {m}" for c in ("short", "long", "mixed")
                         for m in ("throughput", "avg delay", "p95 delay")]
    n_cells = len({(s, c) for s, c in zip(runs["setting"], runs["case"])})
    return Table(head, rows, f"normalised throughput (mean ± sd over cells), average and p95 "
                 f"queueing delay (over the smallest average), {n_cells} (network, "
                 f"configuration) cells, each the mean of its runs")


def scatter_figure(ctx: Context, runs: pd.DataFrame, reference, name: str, title: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.6), sharey=True)
    labels = ctx.labels()
    for ax, c in zip(axes, ("short", "long", "mixed")):
        norm = normalised(runs, None if c == "mixed" else c, reference=reference)
        for key, label in labels.items():
            n = norm.get(key)
            if not n or not is_number(n.get("delay_mean")):
                continue
            ax.errorbar(n["delay_mean"], n["tput_mean"], yerr=n["tput_sd"], marker="o",
                        capsize=2, label=label)
        ax.invert_xaxis()                    # better to the right, as Pantheon's plots
        ax.set_title(f"{c} flows")
        ax.set_xlabel("normalised avg queueing delay")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("normalised throughput")
    axes[-1].legend(fontsize=7)
    fig.suptitle(title)
    return save_figure(fig, ctx.figure(name))


def analyse(ctx: Context) -> Section:
    s, runs = opened_section(ctx, "Performance on dual-path traces (Figs. 5.19-5.20, the "
                             "+21-32 % claim)", [x.key for x in (SSCC, *COUPLED, WVEGAS)])
    if not len(runs):
        return s
    nets = ctx.data.get("networks", [])
    s.paragraphs.append(
        "Setup (thesis §5.5.4; scenarios/sscc/dual-path.toml, sweeps/performance.toml): one "
        "MPTCP download over a cellular and a WiFi path that share no bottleneck, a CUBIC "
        "background transfer on each path, 1.5 MB DropTail buffers; every configuration on "
        "every network for every scheme, "
        f"{runs['seed'].nunique()} seed(s). MPCC, the thesis's fifth baseline, is not built in "
        "rove: it is left out of every comparison. Networks, measures and normalisation: "
        "python/rove/reproduce/sscc/performance.py's header.")
    if nets:
        s.tables.append(networks_table(nets))
    incomplete = runs[~runs["completed"].astype(bool)]
    if len(incomplete):
        s.notes.append(f"{len(incomplete)} of {len(runs)} downloads did not finish within the "
                       f"run; their throughput is the bytes delivered over the run "
                       f"({', '.join(sorted(set(incomplete['series'])))}).")
    s.tables.append(scheme_table(ctx, runs, None))
    s.figures.append((scatter_figure(ctx, runs, None, "throughput-delay",
                                     "MPTCP-SSCC and the coupled baselines"),
                      "Normalised throughput against normalised average queueing delay, "
                      "one point per scheme (mean over cells, bar: sd), per flow class."))
    mixed = normalised(runs)
    s.notes.append("MPCC is not built in rove: the thesis's ranges include it, rove's "
                   "comparisons do not.")
    s.claims.append(gain_claim(
        "Mixed flows: MPTCP-SSCC achieves +21-32 % throughput over LIA/OLIA/BALIA/MPCC",
        mixed, COUPLED, THROUGHPUT_GAIN))
    s.claims.append(gain_claim(
        "Mixed flows: MPTCP-SSCC has 3-28 % lower average queueing delay than "
        "LIA/OLIA/BALIA/MPCC", mixed, COUPLED, DELAY_CUT, "delay_mean", False))
    for kind, gain in (("stationary", 0.18), ("mobile", 0.26)):
        norm = normalised(runs, kind=kind)
        if any(norm.get(b.key) for b in COUPLED):
            s.claims.append(gain_claim(
                f"On {kind} traces MPTCP-SSCC's throughput gain is "
                f"{'+18-26' if kind == 'stationary' else '+26-38'} %", norm, COUPLED, gain,
                ))
    s.claims.append(lowest_claim(mixed, ctx.labels()))
    s.claims.append(close_claim(mixed))
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def lowest_claim(norm: dict, labels) -> Claim:
    """"wVegas has low throughput (CUBIC background)": its normalised throughput is the lowest
    of the schemes."""
    tp = {k: v["tput_mean"] for k, v in norm.items() if is_number(v.get("tput_mean"))}
    if WVEGAS.key not in tp or len(tp) < 2:
        v, text = NOT_MEASURED, "not measured"
    else:
        low = min(tp, key=tp.get)
        v = HOLDS if low == WVEGAS.key else FAILS
        text = ", ".join(f"{labels.get(k, k)} {x:.3f}" for k, x in sorted(tp.items(),
                                                                        key=lambda kv: kv[1]))
    return Claim("wVegas has low throughput (the CUBIC background takes the queue)", WHERE,
                 text, "wVegas's normalised throughput (mixed flows) is the lowest of the "
                 "schemes", v)


def close_claim(norm: dict) -> Claim:
    """"LIA, OLIA and BALIA are close": the largest of their normalised throughputs over the
    smallest at most 1 + CLOSE (holds), 1 + 2 CLOSE (partly)."""
    tp = [norm.get(b.key, {}).get("tput_mean") for b in COUPLED]
    if not all(is_number(x) and x > 0 for x in tp):
        v, text = NOT_MEASURED, "not measured"
    else:
        r = max(tp) / min(tp)
        v = HOLDS if r <= 1 + CLOSE else (PARTLY if r <= 1 + 2 * CLOSE else FAILS)
        text = (", ".join(f"{b.label} {x:.3f}" for b, x in zip(COUPLED, tp))
                + f"; largest / smallest {r:.3f}")
    return Claim("LIA, OLIA and BALIA are close", WHERE, text,
                 f"largest / smallest normalised throughput (mixed) ≤ {1 + CLOSE:g} (holds), "
                 f"≤ {1 + 2 * CLOSE:g} (partly)", v)


# --------------------------------------------------------------------------------------------
# Ablation: what the selection earns (not counted)

# Uncoupled single-path algorithms on both subflows: the selection's candidates fixed.
FIXED_BBR, FIXED_CUBIC, FIXED_C2TCP = (uncoupled(cc, name) for cc, name in
                                       (("bbr", "BBR"), ("cubic", "CUBIC"), ("c2tcp", "C2TCP")))
SSCC_P50 = sscc_every(50)
THESIS_MODELS = thesis_models("mp")
ABLATION_SERIES = (SSCC, OLIA, FIXED_BBR, FIXED_CUBIC, FIXED_C2TCP, SSCC_P50, THESIS_MODELS)


def analyse_ablation(ctx: Context) -> Section:
    s, runs = opened_section(ctx, "What the selection earns on the dual-path traces (rove's "
                             "ablation)", [x.key for x in ABLATION_SERIES])
    if not len(runs):
        return s
    s.paragraphs.append(
        "The performance runs (the first four networks) with MPTCP-SSCC beside OLIA, each of "
        "three candidates fixed on both subflows (uncoupled), and the selector predicting every "
        "50 Data Units instead of every one, or with the thesis-scale models "
        "(scenarios/sscc/model-thesis/); normalised among these schemes. If a fixed "
        "candidate matches or beats MPTCP-SSCC, the models' choices earn nothing on these "
        "paths; if `period = 50` beats `period = 1`, switching costs more than it earns.")
    s.tables.append(scheme_table(ctx, runs, None))
    s.figures.append((scatter_figure(ctx, runs, None, "throughput-delay",
                                     "MPTCP-SSCC against fixed candidates"),
                      "Normalised throughput against normalised average queueing delay."))
    mixed = normalised(runs)
    s.claims.append(gain_claim(
        "rove's hypothesis: the selection earns more than any one of its candidates run fixed "
        "(mixed flows)", mixed, (FIXED_BBR, FIXED_CUBIC, FIXED_C2TCP), 0.0,
        where="rove's ablation"))
    s.claims.append(gain_claim(
        "rove's hypothesis: predicting every Data Unit earns more than every 50 (mixed flows)",
        mixed, (SSCC_P50,), 0.0, where="rove's ablation"))
    s.claims.append(gain_claim(
        "rove's hypothesis: the built-in (default-scale) models earn no less than the "
        "thesis-scale ones (mixed flows)", mixed, (THESIS_MODELS,), 0.0,
        where="rove's ablation"))
    s.verdict = combine(c.verdict for c in s.claims)
    return s
