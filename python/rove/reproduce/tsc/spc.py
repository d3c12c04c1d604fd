"""Ch. 4: Subflow Population Control against conventional MPTCP with 1, 5, 10 and 20 fixed
subflows over a CoDel bottleneck (seed-003 §4.5-4.6, Figs. 4.5-4.9; §5 rows 16-20).

``scenarios/tsc/sweeps/ch4-spc.toml``: one path of 25 ms each way, CoDel, uncoupled Cubic
(crates/world/tests/spc.rs's ``ch4``, its [GAP]s), static at 20/40/80 Mbit/s, periodic (1/5 of
it for 1 s every 5 s) and three random walks (:mod:`.capacity`), each a case. SPC is
``receiver = "spc"`` on 20 subflows; the fixed schemes set ``subflows``. Per run:

* application delay (a segment's first hand-over to a subflow to its in-order delivery:
  network, recovery and reordering, as Fig. 4.5): mean, p95, p99 and the largest
  (``app_delay_max_ms``, within the delay histogram's 0.5 %);
* utilisation in 100-ms windows from the end of the first second (start-up left out [GAP], as
  crates/world/tests/spc.rs): in-order goodput over the bytes the bottleneck could carry in the
  window (:class:`rove.metrics.SampledCapacity` of queue.parquet's ``capacity_bytes``), the
  dissertation's "application-layer throughput ÷ bottleneck capacity"; the share of windows at
  or above NEAR_MAX, and the mean over the run;
* SPC's active subflows over time (the ``active_subflows`` column), averaged over the run's
  second half.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from ..document import Section, Table, fmt
from ..document import spread as pm
from ..runner import Series
from ..study import Context, pyplot, run_with_records, save_figure
from ..verdicts import FAILS, HOLDS, NOT_MEASURED, PARTLY, Claim, combine, judge_range, median
from ...metrics import share_at_least, window_utilisation
from .common import DETERMINISTIC_MARGIN, less_deterministic, link_capacity, recorded_runs, utilisation_between

WHERE = "§4.5-4.6"
SUBFLOWS = (1, 5, 10, 20)
CAPACITIES = (20, 40, 80)
WALKS = (1, 2, 3)
LINK = "down"
WARMUP_S = 1.0                 # [GAP] windows from the end of the first second (spc.rs)

# Criteria fixed before the runs.
# Row 18 (Fig. 4.6): "20 → 3-4" subflows: the mean active over the second half in this band
# (crates/world/tests/spc.rs's); at most HALVED (partly).
SETTLED = (3.0, 4.5)
HALVED = 10.0
# Rows 18-19: "bounded within 600 ms" (static), "under 1 s" (periodic): the largest delay.
STATIC_BOUND_MS, PERIODIC_BOUND_MS = 600.0, 1000.0
# Rows 18-19: "utilisation almost at its maximum for more than 80 % of the time": issue 18's
# reading, a 100-ms window's utilisation ≥ 0.9 (the dissertation's ceiling "about 0.9"; rove's
# ACKs take no downlink capacity, so its ceiling is 1448/1500 ≈ 0.965) in more than 80 % of
# the windows.
NEAR_MAX, BUSY_SHARE = 0.9, 0.8
# Row 16 (Fig. 4.5): one subflow's "average delay about 40 ms, maximum about 200 ms": each
# within a factor ORDER of it (§8.3: "qualitative ordering plus the bounds").
ONE_MEAN_MS, ONE_MAX_MS, ORDER = 40.0, 200.0, 2.0
# Row 17: "delays up to several seconds": the largest delay of 5, 10 or 20 subflows ≥ SEVERAL_S
# (holds), ≥ 1 s (partly).
SEVERAL_S = 2.0
# Row 20 (Fig. 4.9): SPC's delay "close to single Cubic + CoDel": its p95 within CLOSE × one
# subflow's (holds); else below 20 fixed subflows' (partly).
CLOSE = 1.5

SPC = Series("spc", "SPC (from 20)", "cubic", extra={"flows.0.receiver": "spc"})


def fixed(n: int) -> Series:
    """Conventional MPTCP (uncoupled Cubic) with ``n`` subflows on the path."""
    return Series(f"fixed-{n}", f"{n} fixed", "cubic", extra={"flows.0.paths.0.subflows": n})


SPC_SERIES = (SPC, *(fixed(n) for n in SUBFLOWS))
SCHEMES = {s.key: s.label for s in SPC_SERIES}


def static(c: int) -> str:
    return f"static-{c}"


def periodic(c: int) -> str:
    return f"periodic-{c}"


def walk(w: int) -> str:
    return f"walk-{w}"


def measure(run_dir: Path, rows) -> dict:
    """The run's delays (summary.json), its 100-ms utilisation windows and SPC's active
    subflows (timeseries.parquet, queue.parquet)."""
    d = Path(run_dir)
    f = json.loads((d / "summary.json").read_text(encoding="utf-8"))["flows"][0]
    ts = pq.read_table(d / "timeseries.parquet")
    cols = ["time_s", "subflow", "bytes_delivered"]
    if "active_subflows" in ts.column_names:
        cols.append("active_subflows")
    t = ts.select(cols).to_pandas()
    t = t[t["subflow"] == -1].sort_values("time_s")
    cap = link_capacity(d, LINK)
    late = t[t["time_s"] >= WARMUP_S - 1e-9]
    times, delivered = late["time_s"].to_numpy(), late["bytes_delivered"].to_numpy()
    util = window_utilisation(times, delivered, cap)
    whole, _ = utilisation_between(times, delivered, cap)
    out = {"goodput_mbps": f.get("goodput_mbps"), "delay_mean_ms": f.get("app_delay_mean_ms"),
           "delay_p95_ms": f.get("app_delay_p95_ms"), "delay_p99_ms": f.get("app_delay_p99_ms"),
           "delay_max_ms": f.get("app_delay_max_ms"), "busy": share_at_least(util, NEAR_MAX),
           "utilisation": whole, "util_windows": util,
           "active_mean": None, "active_t": None, "active": None}
    if "active_subflows" in t.columns:
        end = float(t["time_s"].max())
        half = t[t["time_s"] >= end / 2]
        out.update(active_mean=float(half["active_subflows"].mean()),
                   active_t=t["time_s"].to_numpy(), active=t["active_subflows"].to_numpy())
    return out


def run_spc(sweeps: Path):
    return run_with_records(sweeps, measure)


def _values(runs, series: str, case: str, column: str) -> list[float]:
    m = runs[(runs["series"] == series) & (runs["case"] == case)]
    return [float(x) for x in m[column] if x is not None and x == x]


def _cases(runs, prefix: str) -> list[str]:
    have = set(runs["case"])
    order = [static(c) for c in CAPACITIES] + [periodic(c) for c in CAPACITIES] + \
        [walk(w) for w in WALKS]
    return [c for c in order if c in have and c.startswith(prefix)]


def analyse_spc(ctx: Context) -> Section:
    s = Section("Ch. 4: Subflow Population Control against 1, 5, 10 and 20 fixed subflows over "
                "CoDel (Figs. 4.5-4.9)")
    runs = recorded_runs(ctx, s)
    if runs is None:
        return s
    s.paragraphs.append(
        "Setting (`scenarios/tsc/ch4-*.toml`, crates/world/tests/spc.rs's `ch4`): one path, 25 ms "
        "each way, CoDel (5 ms / 100 ms, 1000 packets), uncoupled Cubic, 30 s (10 s in quick "
        "mode); static 20/40/80 Mbit/s, periodic (the capacity for 4 s, a fifth of it for 1 s), "
        "three random walks (held 2-6 s, levels log-uniform on 2-80 Mbit/s; "
        "`python/rove/reproduce/tsc/capacity.py`, its [GAP]s). SPC starts 20 subflows and steers "
        "them from the receiver; the fixed schemes are conventional MPTCP. Delay: application "
        "delay (hand-over to a subflow to in-order delivery). Utilisation: in-order goodput over "
        f"capacity in 100-ms windows from 1 s on; \"near-max\": ≥ {NEAR_MAX}. Nothing in these "
        "scenarios is random (a second seed repeats a run to the byte), so each scheme runs "
        f"once and an ordering holds beyond {DETERMINISTIC_MARGIN:.0%} of the larger value.")
    cases = _cases(runs, "")
    s.tables.append(_table(runs, cases))
    s.figures += [(_active_figure(ctx, runs), "SPC's active subflows over time (Figs. 4.6, 4.8)."),
                  (_delay_figure(ctx, runs, cases), "Largest and p95 application delay per "
                   "scheme and capacity."),
                  (_util_figure(ctx, runs), "CDF of the 100-ms utilisation windows (Figs. "
                   "4.6-4.9), seed 1.")]
    st, pe, wk = _cases(runs, "static"), _cases(runs, "periodic"), _cases(runs, "walk")
    s.claims += [_one_subflow_delay(runs, st), _one_subflow_utilisation(runs, st),
                 _many_subflows_delay(runs, st), _delay_grows(runs, st),
                 _settles(runs, st),
                 _bounded("SPC's delay is bounded within 600 ms at all capacities (static)",
                          "Fig. 4.6", runs, st, STATIC_BOUND_MS),
                 _busy("SPC's utilisation is almost at its maximum for more than 80 % of the "
                       "time (static)", "Fig. 4.6", runs, st),
                 _bounded("Periodic capacity: SPC's delay stays under 1 s", "Fig. 4.8", runs, pe,
                          PERIODIC_BOUND_MS),
                 _busy("Periodic capacity: SPC's throughput is almost at its maximum for more "
                       "than 80 % of the time", "Fig. 4.8", runs, pe),
                 _highest_utilisation(runs, wk), _close_to_one(runs, wk)]
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def _table(runs, cases) -> Table:
    rows = []
    for case in cases:
        for key, label in SCHEMES.items():
            if not _values(runs, key, case, "goodput_mbps"):
                continue
            rows.append([case, label, pm(_values(runs, key, case, "goodput_mbps"), ".2f"),
                         pm(_values(runs, key, case, "utilisation"), ".3f"),
                         pm(_values(runs, key, case, "busy"), ".2f"),
                         pm(_values(runs, key, case, "delay_mean_ms"), ".1f"),
                         pm(_values(runs, key, case, "delay_p95_ms"), ".1f"),
                         pm(_values(runs, key, case, "delay_p99_ms"), ".1f"),
                         pm(_values(runs, key, case, "delay_max_ms"), ".1f"),
                         pm(_values(runs, key, case, "active_mean"), ".1f")])
    return Table(["capacity", "scheme", "goodput (Mbit/s)", "utilisation", f"windows ≥ {NEAR_MAX}",
                  "delay mean (ms)", "p95", "p99", "max", "active subflows (2nd half)"], rows,
                 "mean ± sd over seeds")


def _claim_per_case(quote, where, runs, cases, judge, criterion) -> Claim:
    verdicts, parts = [], []
    for case in cases:
        v, text = judge(case)
        verdicts.append(v)
        parts.append(f"{case}: {text}")
    return Claim(quote, f"{WHERE}, {where}", "; ".join(parts) or "no runs", criterion,
                 combine(verdicts))


def _one_subflow_delay(runs, cases) -> Claim:
    def judge(case):
        m = median(_values(runs, "fixed-1", case, "delay_mean_ms"))
        x = median(_values(runs, "fixed-1", case, "delay_max_ms"))
        v = combine([judge_range(m, (ONE_MEAN_MS / ORDER, ONE_MEAN_MS * ORDER)),
                     judge_range(x, (ONE_MAX_MS / ORDER, ONE_MAX_MS * ORDER))])
        return v, f"mean {fmt(m, '.1f')} ms, max {fmt(x, '.1f')} ms"
    return _claim_per_case("One subflow over CoDel: average delay about 40 ms, maximum about "
                           "200 ms", "Fig. 4.5", runs, cases, judge,
                           f"median over seeds of the mean within ×{ORDER:g} of 40 ms "
                           f"({ONE_MEAN_MS / ORDER:g}-{ONE_MEAN_MS * ORDER:g}) and of the largest "
                           f"within ×{ORDER:g} of 200 ms, at every capacity")


def _one_subflow_utilisation(runs, cases) -> Claim:
    verdicts, parts = [], []
    for larger, smaller in zip(cases[1:], cases[:-1]):   # cases by capacity, smallest first
        a, b = (_values(runs, "fixed-1", larger, "busy"),
                _values(runs, "fixed-1", smaller, "busy"))
        v, text = less_deterministic(a, b)
        verdicts.append(v)
        parts.append(f"{larger} {fmt(median(a), '.2f')} < {smaller} {fmt(median(b), '.2f')}: "
                     f"{v} ({text})")
    return Claim("One subflow's utilisation falls as the BDP grows (20 → 80 Mbit/s)",
                 f"{WHERE}, Fig. 4.5", "; ".join(parts) or "one capacity only",
                 f"one subflow's share of windows ≥ {NEAR_MAX} at the larger capacity below that "
                 f"at the next smaller, each pair beyond {DETERMINISTIC_MARGIN:.0%} of the larger "
                 f"(one deterministic run a side)",
                 combine(verdicts))


def _many_subflows_delay(runs, cases) -> Claim:
    def judge(case):
        worst = max((median(_values(runs, f"fixed-{n}", case, "delay_max_ms")) or 0.0
                     for n in (5, 10, 20)), default=None)
        s_ = None if worst is None else worst / 1e3
        return judge_range(s_, (SEVERAL_S, float("inf")), (1.0, float("inf"))), \
            f"largest of 5/10/20 subflows {fmt(s_, '.2f')} s"
    return _claim_per_case("5, 10 or 20 subflows over CoDel: delays up to several seconds",
                           "Fig. 4.5", runs, cases, judge,
                           f"the largest delay (median over seeds) of the worst of 5, 10, 20 "
                           f"subflows ≥ {SEVERAL_S:g} s (holds), ≥ 1 s (partly), at every capacity")


def _delay_grows(runs, cases) -> Claim:
    verdicts, parts = [], []
    for case in cases:
        for a, b in zip(SUBFLOWS[:-1], SUBFLOWS[1:]):
            x, y = _values(runs, f"fixed-{a}", case, "delay_p99_ms"), \
                _values(runs, f"fixed-{b}", case, "delay_p99_ms")
            v, _ = less_deterministic(x, y)
            verdicts.append(v)
            parts.append(f"{case} {a} < {b}: {fmt(median(x), '.0f')} < {fmt(median(y), '.0f')} "
                         f"ms {v}")
    return Claim("With CoDel, more subflows mean more delay; one subflow has the least",
                 f"{WHERE}, Fig. 4.5", "; ".join(parts) or "no runs",
                 "p99 application delay ordered 1 < 5 < 10 < 20 subflows at every capacity, "
                 f"each pair beyond {DETERMINISTIC_MARGIN:.0%} of the larger (one deterministic run a "
                 f"side); combined", combine(verdicts))


def _settles(runs, cases) -> Claim:
    def judge(case):
        m = median(_values(runs, "spc", case, "active_mean"))
        return judge_range(m, SETTLED, (0.0, HALVED)), f"{fmt(m, '.1f')} active"
    return _claim_per_case("SPC: the number of subflows goes from 20 at start down to 3-4",
                           "Fig. 4.6", runs, cases, judge,
                           f"median over seeds of SPC's mean active subflows over the second "
                           f"half in [{SETTLED[0]:g}, {SETTLED[1]:g}] (holds; the criterion of "
                           f"crates/world/tests/spc.rs), at most {HALVED:g} (partly), at every "
                           f"capacity")


def _bounded(quote, where, runs, cases, bound_ms) -> Claim:
    def judge(case):
        x = median(_values(runs, "spc", case, "delay_max_ms"))
        return judge_range(x, (0.0, bound_ms)), f"max {fmt(x, '.1f')} ms"
    return _claim_per_case(quote, where, runs, cases, judge,
                           f"median over seeds of SPC's largest application delay ≤ "
                           f"{bound_ms:g} ms at every capacity (the same value for every scheme "
                           f"is in the table)")


def _busy(quote, where, runs, cases) -> Claim:
    def judge(case):
        b = median(_values(runs, "spc", case, "busy"))
        return judge_range(b, (BUSY_SHARE + 1e-12, 1.0)), f"{fmt(b, '.2f')} of windows"
    return _claim_per_case(quote, where, runs, cases, judge,
                           f"median over seeds of SPC's share of 100-ms windows with utilisation "
                           f"≥ {NEAR_MAX} above {BUSY_SHARE} at every capacity")


def _highest_utilisation(runs, cases) -> Claim:
    verdicts, parts = [], []
    for case in cases:
        spc = _values(runs, "spc", case, "utilisation")
        for n in SUBFLOWS:
            other = _values(runs, f"fixed-{n}", case, "utilisation")
            v, _ = less_deterministic(other, spc)
            verdicts.append(v)
            parts.append(f"{case}: SPC {fmt(median(spc), '.3f')} > {n} fixed "
                         f"{fmt(median(other), '.3f')} {v}")
    return Claim("Random walk: SPC has the highest utilisation of all schemes",
                 f"{WHERE}, Fig. 4.9", "; ".join(parts) or "no runs",
                 "SPC's mean utilisation (goodput over capacity from 1 s on) above every fixed "
                 f"scheme's on every walk, each pair beyond {DETERMINISTIC_MARGIN:.0%} of the larger "
                 f"(one deterministic run a side); "
                 "combined", combine(verdicts))


def _close_to_one(runs, cases) -> Claim:
    def judge(case):
        spc = median(_values(runs, "spc", case, "delay_p95_ms"))
        one = median(_values(runs, "fixed-1", case, "delay_p95_ms"))
        twenty = median(_values(runs, "fixed-20", case, "delay_p95_ms"))
        v = NOT_MEASURED if one is None else judge_range(spc, (0.0, CLOSE * one))
        # below 20 subflows' is partial support only where one subflow's was measured
        if v == FAILS and spc is not None and twenty is not None and spc < twenty:
            v = PARTLY
        return v, (f"p95 SPC {fmt(spc, '.1f')}, 1 subflow {fmt(one, '.1f')}, 20 subflows "
                   f"{fmt(twenty, '.1f')} ms")
    return _claim_per_case("Random walk: SPC's delay is close to single Cubic + CoDel's, the "
                           "lowest achievable", "Fig. 4.9", runs, cases, judge,
                           f"median p95 application delay of SPC ≤ {CLOSE}× one subflow's "
                           f"(holds), else below 20 fixed subflows' (partly), on every walk")


def _active_figure(ctx: Context, runs) -> str:
    plt = pyplot()
    kinds = [k for k in ("static", "periodic", "walk") if _cases(runs, k)]
    fig, axes = plt.subplots(1, len(kinds), figsize=(4.2 * len(kinds), 3.2), squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        for case in _cases(runs, kind):
            m = runs[(runs["series"] == "spc") & (runs["case"] == case)].sort_values("seed")
            if len(m) and m.iloc[0]["active_t"] is not None:
                ax.plot(m.iloc[0]["active_t"], m.iloc[0]["active"], label=case, lw=1)
        ax.axhspan(SETTLED[0], SETTLED[1], color="k", alpha=0.1)
        ax.set_ylim(0, 21)
        ax.set_xlabel("time (s)")
        ax.set_title(f"SPC, {kind}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("active subflows (shaded: 3-4.5)")
    return save_figure(fig, ctx.figure("active"))


def _delay_figure(ctx: Context, runs, cases) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(cases) + 2), 3.6))
    width = 0.8 / len(SCHEMES)
    x = np.arange(len(cases))
    for i, (key, label) in enumerate(SCHEMES.items()):
        off = x + (i - (len(SCHEMES) - 1) / 2) * width
        mx = [median(_values(runs, key, c, "delay_max_ms")) for c in cases]
        p95 = [median(_values(runs, key, c, "delay_p95_ms")) for c in cases]
        ax.bar(off, [v if v is not None else np.nan for v in mx], width, label=label, alpha=0.85)
        ax.plot(off, [v if v is not None else np.nan for v in p95], "_", color="k", ms=6)
    ax.axhline(STATIC_BOUND_MS, color="k", lw=0.7, ls="--")
    ax.axhline(PERIODIC_BOUND_MS, color="k", lw=0.7, ls=":")
    ax.set_xticks(x)
    ax.set_xticklabels(cases, rotation=30, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("largest app delay (ms); tick: p95")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=3)
    ax.set_title("Application delay (dashed 600 ms, dotted 1 s)")
    return save_figure(fig, ctx.figure("delay"))


def _util_figure(ctx: Context, runs) -> str:
    plt = pyplot()
    shown = [c for c in (static(40), periodic(40), walk(1)) if c in set(runs["case"])] or \
        _cases(runs, "")[:1]
    fig, axes = plt.subplots(1, len(shown), figsize=(4.2 * len(shown), 3.2), squeeze=False)
    for ax, case in zip(axes[0], shown):
        for key, label in SCHEMES.items():
            m = runs[(runs["series"] == key) & (runs["case"] == case)].sort_values("seed")
            if not len(m):
                continue
            v = np.sort(np.asarray(m.iloc[0]["util_windows"], dtype=float))
            if v.size:
                ax.plot(v, np.arange(1, v.size + 1) / v.size, label=label, lw=1)
        ax.axvline(NEAR_MAX, color="k", lw=0.6, ls=":")
        ax.set_xlim(0, 1.2)
        ax.set_xlabel("utilisation (100-ms windows)")
        ax.set_title(case)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("CDF")
    return save_figure(fig, ctx.figure("utilisation"))
