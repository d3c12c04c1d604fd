"""The thesis's chapter 6 on rove's cell: the five candidates over the Aeroflex-like mobility
runs (``scenarios/selection/aeroflex-*.toml``), measured per phase (Tables 6.2-6.7), the
per-phase selector run on rove's own tables (Table 6.8), and the behaviours H4 and H5 of the
summary (seed-002 §8.3) on the same runs.

The runs are shared: :func:`run_mobility` runs the sweep once per algorithm and once with the
saturating datagram flow (the capacity Kt), into ``OUT/mobility/`` whichever experiment asks
first; the others resume them. Each run is reduced to its per-phase values
(:func:`~.phases.run_values`) into one table, ``ctx.data["phases"]``: one row per (latency,
direction, speed, cc, seed, phase), the phase ``"run"`` being the whole run. The analyses read
only that table, so the tests give them hand-made ones.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...selection import phases_of, select_per_phase, switches
from ...selection.policy import KEEP_TOLERANCE
from ...selection.tables import CANDIDATES, OPTION2, PHASE_TABLES
from ..document import Section, Table, fmt
from ..runner import Quick, repo_root
from ..study import Context, Experiment, Part, run_parts
from ..verdicts import (FAILS, HOLDS, NOT_MEASURED, PARTLY, Claim, combine, judge_less, mean)
from .common import (CAPACITY, CASES, CCAS, USE_CASES, case_info, combined, display,
                     fraction_claim, pairs_claim)
from .phases import as_tables, mean_by, phases_of_case, run_values

SWEEPS = repo_root() / "scenarios" / "selection" / "sweeps"
# Quick mode: the four 12-s use cases (300 km/h) at both latencies, one seed.
QUICK_CASES = ("4g-F300", "4g-B300", "low-F300", "low-B300")
MOBILITY = Part("main", "mobility.toml", Quick({}, {}, (1,), cases=QUICK_CASES))
CRITERIA = (("goodput", "goodput_mbps", "goodput, Mbit/s"), ("pm", "pm", "PM (Eq. 6.1)"),
            ("delay", "dpm", "delay-weighted PM (Eq. 6.2)"))
TABLE_NAMES = {("goodput", "4g"): "6.2", ("pm", "4g"): "6.3", ("delay", "4g"): "6.4",
               ("goodput", "low"): "6.5", ("pm", "low"): "6.6", ("delay", "low"): "6.7"}
LATENCY_LABEL = {"4g": "4G latency", "low": "low latency"}
PHASE_ABBR = {"startup": "SU", "sustainer": "Sus", "constrained": "Con", "scaling": "Sca"}
VALUE_COLUMNS = ["goodput_mbps", "capacity_mbps", "pm", "dpm"]


# --------------------------------------------------------------------------------------------
# Running


def run_mobility(exp: Experiment, out: Path, quick: bool, jobs: int, log, options) -> Context:
    """The mobility sweep for the five candidates and the capacity (shared by the experiments
    that use it) and its per-phase table (``ctx.data["phases"]``)."""
    runs = Experiment("mobility", "mobility runs", (*CCAS, CAPACITY), (MOBILITY,),
                      analyse=lambda ctx: Section(""))
    ctx = run_parts(SWEEPS, runs, out, quick, jobs, log, options)
    ctx.exp_id = exp.id
    ctx.data = {"phases": phase_table(ctx, out / "mobility", log)}
    return ctx


def phase_table(ctx: Context, cache_dir: Path, log=None) -> pd.DataFrame:
    """Every TCP run of ``ctx`` reduced to its per-phase values, its capacity from the
    capacity series' run of the same point (cached in ``cache_dir/phase-values.parquet``,
    keyed by the runs it holds)."""
    cap = next((r for r in ctx.runs if r.series.key == CAPACITY.key and r.table is not None),
               None)
    todo = []
    for r in ctx.runs:
        if r.series.key == CAPACITY.key or r.table is None or not len(r.table):
            continue
        for point, g in r.table.groupby("point", sort=False):
            row = g.iloc[0]
            todo.append((r, point, str(row.get("case", "")), int(row["seed"])))
    key = sorted(f"{r.series.key}/{p}" for r, p, _, _ in todo)
    cache = Path(cache_dir) / "phase-values.parquet"
    stamp = Path(cache_dir) / "phase-values.json"
    try:
        if json.loads(stamp.read_text()) == key:
            return pd.read_parquet(cache)
    except (OSError, ValueError):
        pass
    frames = []
    for r, point, case, seed in todo:
        if cap is None or not (cap.run_dir(point) / "timeseries.parquet").exists():
            ctx.failures.append(f"{r.series.label} {point}: no capacity run of that point")
            continue
        latency, direction, speed = case_info(case)
        duration = json.loads((r.run_dir(point) / "summary.json").read_text())["duration_s"]
        v = run_values(r.run_dir(point), cap.run_dir(point), "ue",
                       phases_of_case(direction, speed, float(duration)))
        v.insert(0, "seed", seed)
        v.insert(0, "cc", r.series.key)
        v.insert(0, "speed", speed)
        v.insert(0, "direction", direction)
        v.insert(0, "latency", latency)
        frames.append(v)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["latency", "direction", "speed", "cc", "seed", "phase", *VALUE_COLUMNS])
    if frames:
        from ...results import write_bytes_atomically

        cache.parent.mkdir(parents=True, exist_ok=True)
        df.to_parquet(cache)
        write_bytes_atomically(stamp, json.dumps(key).encode())
    if log is not None:
        log(f"  per-phase values of {len(frames)} runs")
    return df


# --------------------------------------------------------------------------------------------
# Reading the per-phase table


def phases_df(ctx: Context) -> pd.DataFrame:
    data = ctx.data or {}
    df = data.get("phases") if isinstance(data, Mapping) else None
    return df if df is not None else pd.DataFrame()


def rove_tables(df: pd.DataFrame) -> dict:
    """rove's Tables 6.2-6.7: ``{(criterion, latency): {(direction, speed): {cc: values}}}``
    of the means over seeds, the shape of :data:`rove.selection.tables.PHASE_TABLES`."""
    if not len(df):
        return {}
    means = mean_by(df, ["latency", "direction", "speed", "cc", "phase"], VALUE_COLUMNS)
    out = {}
    for lat in ("4g", "low"):
        m = means[means["latency"] == lat]
        for crit, col, _ in CRITERIA:
            t = as_tables(m, col, CANDIDATES, USE_CASES)
            if t:
                out[(crit, lat)] = t
    return out


def whole_run(df: pd.DataFrame, latency: str, direction: str, speed: int, cc: str,
              column: str) -> list[float]:
    """Per seed, ``column`` over the whole run of a use case for ``cc``."""
    m = df[(df["latency"] == latency) & (df["direction"] == direction) & (df["speed"] == speed)
           & (df["cc"] == cc) & (df["phase"] == "run")]
    return [float(x) for x in m.sort_values("seed")[column] if np.isfinite(x)]


def phase_seeds(df: pd.DataFrame, latency: str, direction: str, speed: int, cc: str,
                phase: str, column: str) -> list[float]:
    m = df[(df["latency"] == latency) & (df["direction"] == direction) & (df["speed"] == speed)
           & (df["cc"] == cc) & (df["phase"] == phase)]
    return [float(x) for x in m.sort_values("seed")[column] if np.isfinite(x)]


def _uc(direction: str, speed: int) -> str:
    return f"{direction[0].upper()}{speed}"


# --------------------------------------------------------------------------------------------
# Tables 6.2-6.7


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rank correlation of two equally long lists (average ranks for ties); None
    when either is constant or shorter than 2."""
    if len(a) != len(b) or len(a) < 2:
        return None
    ra, rb = pd.Series(a).rank().to_numpy(), pd.Series(b).rank().to_numpy()
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def rank_agreement(ours: Mapping, theirs: Mapping) -> tuple[float | None, int]:
    """The mean over the phase columns both tables have of Spearman's ρ between the two
    rankings of the algorithms, and the number of columns."""
    rhos = []
    for uc, by_cc in ours.items():
        if uc not in theirs:
            continue
        ccs = [cc for cc in by_cc if cc in theirs[uc]]
        for k in range(len(next(iter(by_cc.values())))):
            r = spearman([by_cc[cc][k] for cc in ccs], [theirs[uc][cc][k] for cc in ccs])
            if r is not None:
                rhos.append(r)
    return (sum(rhos) / len(rhos) if rhos else None), len(rhos)


RHO_HOLDS, RHO_PARTLY = 0.5, 0.0


def table_markdown(tables: Mapping, crit: str, lat: str, spec: str) -> Table | None:
    t = tables.get((crit, lat))
    if not t:
        return None
    header, cols = ["algorithm"], []
    for direction, speed in USE_CASES:
        if (direction, speed) in t:
            for ph in phases_of(direction, speed):
                header.append(f"{_uc(direction, speed)} {PHASE_ABBR[ph]}")
            cols.append((direction, speed))
    rows = []
    for cc in CANDIDATES:
        row = [display(cc)]
        for uc in cols:
            row += [fmt(v, spec) for v in t[uc].get(cc, ())]
        rows.append(row)
    name = TABLE_NAMES[(crit, lat)]
    what = dict((c, w) for c, _, w in CRITERIA)[crit]
    return Table(header, rows, f"rove's Table {name}: {what} by phase, {LATENCY_LABEL[lat]} "
                               f"(mean over seeds)")


def analyse_tables(ctx: Context) -> Section:
    s = Section("Per-phase tables on rove's cell (Tables 6.2-6.7) and the mobility behaviours "
                "(H4, H5)")
    df = phases_df(ctx)
    s.notes += [f"Series `{k}` not available in this build: {why}"
                for k, why in ctx.unavailable().items()]
    if not len(df):
        s.paragraphs.append("No run completed.")
        s.verdict = NOT_MEASURED
        return s
    seeds = df["seed"].nunique()
    s.paragraphs.append(
        "The five candidates over the Aeroflex-like use cases (scenarios/selection/"
        "aeroflex-*.toml: one UE on a 20 MHz cell driving the same 1 km of road at 60, 120 and "
        "300 km/h in EVA60, EVA120 and HST300 fading, away from the eNodeB (the thesis's "
        "forward) or towards it (backward), at 4G and low latency), each measured per phase of "
        "the thesis's time rule in 100 ms slots: goodput, and the PM of Eqs. 6.1 and 6.2 with "
        "the capacity Kt of each slot taken from a saturating datagram flow over the same "
        f"channel (same seed). Means over {seeds} seed(s). Absolute values differ from the "
        "Aeroflex's (another radio, UE and kernel); what is compared is the ranking of the "
        "algorithms in each phase column (Spearman's ρ per column, averaged) and the "
        "behaviours of the summary's §8.3.")
    tables = rove_tables(df)
    for crit, lat in TABLE_NAMES:
        t = table_markdown(tables, crit, lat, ".2f" if crit == "goodput" else ".3f")
        if t is not None:
            s.tables.append(t)
    # ranking agreement with the thesis's tables, one claim per table
    for (crit, lat), name in TABLE_NAMES.items():
        rho, n = rank_agreement(tables.get((crit, lat), {}), PHASE_TABLES[(crit, lat)])
        from ..verdicts import judge_range

        v = judge_range(rho, (RHO_HOLDS, math.inf), (RHO_PARTLY + 1e-12, RHO_HOLDS))
        s.claims.append(Claim(
            f"Table {name}: the algorithms' order in each phase ({dict((c, w) for c, _, w in CRITERIA)[crit]}, {LATENCY_LABEL[lat]})",
            f"§6, Table {name}", f"mean ρ {fmt(rho, '.2f')} over {n} phase columns",
            f"Spearman's ρ between rove's and the thesis's ranking of the five algorithms per "
            f"phase column, averaged: ≥ {RHO_HOLDS} holds, > {RHO_PARTLY} partly",
            v if n else NOT_MEASURED))
    s.claims += observation_claims(df)
    s.claims += h4_claims(df)
    s.claims += h5_claims(df)
    s.verdict = combined(s.claims)
    s.notes.append("The thesis's phase tables are verbatim in rove.selection.tables; rove's "
                   "per-seed values are in OUT/mobility/phase-values.parquet.")
    return s


# --------------------------------------------------------------------------------------------
# The observations of the summary's §5.2 and H4/H5


def observation_claims(df: pd.DataFrame) -> list[Claim]:
    out = []
    # "At 120 km/h the constrained area is very poor: CUBIC and NewReno get only about 2-2.6
    # Mbps there, while BBR and Illinois get about 8-9 Mbps, in both latency classes."
    pairs = []
    for lat in ("4g", "low"):
        for lo in ("cubic", "reno"):
            for hi in ("bbr", "illinois"):
                pairs.append((f"{lat} {display(lo)} < {display(hi)}",
                              phase_seeds(df, lat, "forward", 120, lo, "constrained", "goodput_mbps"),
                              phase_seeds(df, lat, "forward", 120, hi, "constrained", "goodput_mbps")))
    out.append(pairs_claim("At 120 km/h the constrained area: CUBIC and NewReno about 2-2.6 "
                           "Mbit/s, BBR and Illinois about 8-9, in both latency classes",
                           "§5.2, Tables 6.2/6.5 (F120 Con)", pairs,
                           "goodput in F120's constrained phase", holds_at=0.75))
    # "Westwood+ Start-up goodput is about 2-4x lower than the others (its post-slow-start
    # back-off)" (the summary's reading; the thesis's own tables give 1.2-3x): per use case,
    # Westwood+'s start-up goodput at most 2/3 of the others' mean (1.5 times lower).
    flags, thesis_flags = {}, {}
    for lat in ("4g", "low"):
        for d, sp in USE_CASES:
            ww = mean(phase_seeds(df, lat, d, sp, "westwood", "startup", "goodput_mbps"))
            others = [mean(phase_seeds(df, lat, d, sp, cc, "startup", "goodput_mbps"))
                      for cc in CANDIDATES if cc != "westwood"]
            others = [x for x in others if x is not None]
            label = f"{lat} {_uc(d, sp)}"
            flags[label] = None if ww is None or len(others) < 4 else \
                ww <= WESTWOOD_STARTUP_RATIO * (sum(others) / len(others))
            t = PHASE_TABLES[("goodput", lat)][(d, sp)]
            th_others = [t[cc][0] for cc in CANDIDATES if cc != "westwood"]
            thesis_flags[label] = t["westwood"][0] <= WESTWOOD_STARTUP_RATIO * sum(th_others) / 4
    n_thesis = sum(thesis_flags.values())
    out.append(fraction_claim(
        "Westwood+ Start-up goodput is about 2-4x lower than the others",
        "§5.2, Tables 6.2/6.5 (SU columns)", flags,
        f"Westwood+'s mean start-up goodput ≤ 2/3 of the other four's mean, per use case and "
        f"latency (the thesis's own tables: {n_thesis} of 12)", holds_at=0.75, partly_at=0.5))
    return out


WESTWOOD_STARTUP_RATIO = 2 / 3
NEAR_EQUAL = 1.15      # H4: "near-equal" goodput: within 15 % of each other
NEAR_BEST = 0.95       # H4: "competitive or best": within 5 % of the best


def _thesis_ratio(direction: str, speed: int) -> float:
    """NewReno's and CUBIC's goodput at low latency in the thesis's Table 6.5 (phase means),
    the larger over the smaller."""
    t = PHASE_TABLES[("goodput", "low")][(direction, speed)]
    a, b = (sum(t[cc]) / len(t[cc]) for cc in ("reno", "cubic"))
    return max(a, b) / min(a, b)


def h4_claims(df: pd.DataFrame) -> list[Claim]:
    out = []
    # H4: at 4G latency forward goodput > backward goodput (same road, reversed)
    pairs = [(f"{display(cc)} {sp}", whole_run(df, "4g", "backward", sp, cc, "goodput_mbps"),
              whole_run(df, "4g", "forward", sp, cc, "goodput_mbps"))
             for sp in (60, 120, 300) for cc in CANDIDATES]
    out.append(pairs_claim("(H4) mobility at 4G latency: forward goodput > backward goodput",
                           "§8.3 H4; §5.1 #14, #15", pairs,
                           "whole-run goodput, backward below forward, per speed and algorithm"))
    # H4 / headline 17: backward at 4G (B120) NewReno and CUBIC sit at about 50 % of capacity
    # in parts of the run
    flags = {}
    for cc in ("reno", "cubic"):
        utils = []
        for ph in phases_of("backward", 120):
            g = mean(phase_seeds(df, "4g", "backward", 120, cc, ph, "goodput_mbps"))
            c = mean(phase_seeds(df, "4g", "backward", 120, cc, ph, "capacity_mbps"))
            if g is not None and c:
                utils.append(g / c)
        flags[display(cc)] = (min(utils) <= HALF_CAPACITY) if utils else None
    out.append(fraction_claim(
        "(H4) backward at 4G latency both CCAs reach only about 50 % of the maximum rate in "
        "parts of the run (120 km/h)", "§8.3 H4; §5.1 #17", flags,
        f"B120 at 4G: the lowest per-phase utilisation (mean goodput over mean capacity) ≤ "
        f"{HALF_CAPACITY} for NewReno and CUBIC", holds_at=1.0, partly_at=0.5))
    # H4: the NewReno gap grows with variability: CUBIC > NewReno at 60 and 300 km/h (4G)
    pairs = [(f"{_uc(d, sp)}", whole_run(df, "4g", d, sp, "reno", "goodput_mbps"),
              whole_run(df, "4g", d, sp, "cubic", "goodput_mbps"))
             for sp in (60, 300) for d in ("forward", "backward")]
    out.append(pairs_claim("(H4) at 4G latency CUBIC > NewReno at 60 and 300 km/h (the "
                           "variable channels)", "§8.3 H4; Finding 9; Table 5.3", pairs,
                           "whole-run goodput, NewReno below CUBIC", holds_at=0.75))
    # H4: at low latency the CCAs are near-equal in goodput (Findings 8 and 9 compare NewReno
    # and CUBIC, Table 5.3's "*")
    flags, parts = {}, []
    for d, sp in USE_CASES:
        ratio = {}
        for lat in ("low", "4g"):
            a = mean(whole_run(df, lat, d, sp, "reno", "goodput_mbps"))
            b = mean(whole_run(df, lat, d, sp, "cubic", "goodput_mbps"))
            ratio[lat] = max(a, b) / min(a, b) if a and b else None
        flags[_uc(d, sp)] = None if ratio["low"] is None else ratio["low"] <= NEAR_EQUAL
        parts.append(f"{_uc(d, sp)} {fmt(ratio['low'], '.2f')} (4G {fmt(ratio['4g'], '.2f')})")
    n_th = sum(_thesis_ratio(d, sp) <= NEAR_EQUAL for d, sp in USE_CASES)
    out.append(fraction_claim(
        "(H4) at low latency the CCAs are near-equal in goodput", "§8.3 H4; Findings 8, 9",
        flags, f"per use case at low latency, NewReno's and CUBIC's mean whole-run goodputs "
        f"within a factor {NEAR_EQUAL} (the thesis's tables, phase means: {n_th} of 6)",
        detail="larger/smaller: " + "; ".join(parts)))
    # H4: at low latency NewReno is competitive or best on efficiency (PM)
    flags = {}
    for d, sp in USE_CASES:
        ms = {cc: mean(whole_run(df, "low", d, sp, cc, "pm")) for cc in CANDIDATES}
        if any(v is None for v in ms.values()):
            flags[_uc(d, sp)] = None
            continue
        flags[_uc(d, sp)] = ms["reno"] >= NEAR_BEST * max(ms.values())
    th = {uc: {cc: sum(v) / len(v) for cc, v in t.items()}
          for uc, t in PHASE_TABLES[("pm", "low")].items()}
    n_th = sum(m["reno"] >= NEAR_BEST * max(m.values()) for m in th.values())
    out.append(fraction_claim(
        "(H4) at low latency NewReno is competitive or best on efficiency",
        "§8.3 H4; Finding 8", flags,
        f"per use case at low latency, NewReno's mean whole-run PM ≥ {NEAR_BEST} x the best "
        f"(the thesis's Table 6.6, phase means: {n_th} of 6)", holds_at=0.65, partly_at=0.3))
    return out


HALF_CAPACITY = 0.6


def h5_claims(df: pd.DataFrame) -> list[Claim]:
    out = []
    # H5: at 4G latency BBR and Illinois give the highest goodput in backward movement ...
    flags, worst_flags = {}, {}
    for sp in (60, 120, 300):
        best = _top(df, "4g", "backward", sp, "goodput_mbps", ("bbr", "illinois"), top=True)
        flags[f"B{sp}"] = best
        worst_flags[f"B{sp}"] = _top(df, "4g", "backward", sp, "dpm", ("bbr", "illinois"),
                                     top=False)
    out.append(fraction_claim(
        "(H5) at 4G latency BBR and Illinois give the highest goodput in backward movement",
        "§8.3 H5; Table 6.1 (4G G backward: BBR)", flags,
        "per backward use case at 4G, the better of BBR and Illinois above each of the other "
        "three over seeds (whole-run goodput)", holds_at=1.0, partly_at=0.5))
    out.append(fraction_claim(
        "(H5) ... but the worst delay/retransmissions (Eq. 6.2 PM)", "§8.3 H5", worst_flags,
        "per backward use case at 4G, the worse of BBR and Illinois below each of the other "
        "three over seeds (whole-run delay-weighted PM)", holds_at=1.0, partly_at=0.5))
    # Westwood+ and NewReno rank high on the delay criterion (4G)
    flags = {}
    for d, sp in USE_CASES:
        ms = {cc: mean(whole_run(df, "4g", d, sp, cc, "dpm")) for cc in CANDIDATES}
        if any(v is None for v in ms.values()):
            flags[_uc(d, sp)] = None
            continue
        ranked = sorted(ms, key=lambda cc: -ms[cc])
        flags[_uc(d, sp)] = bool({"westwood", "reno"} & set(ranked[:2]))
    out.append(fraction_claim(
        "(H5) Westwood+ and NewReno rank high on the delay criterion (4G latency)",
        "§8.3 H5; Table 6.1 (4G D: NewReno)", flags,
        "per use case at 4G, NewReno or Westwood+ among the two best mean whole-run "
        "delay-weighted PMs"))
    # at low latency BBR ranks high on PM
    flags = {}
    for d, sp in USE_CASES:
        ms = {cc: mean(whole_run(df, "low", d, sp, cc, "pm")) for cc in CANDIDATES}
        if any(v is None for v in ms.values()):
            flags[_uc(d, sp)] = None
            continue
        flags[_uc(d, sp)] = "bbr" in sorted(ms, key=lambda cc: -ms[cc])[:2]
    out.append(fraction_claim(
        "(H5) at low latency BBR ranks high on PM", "§8.3 H5; Table 6.1 (LL PM: BBR)", flags,
        "per use case at low latency, BBR among the two best mean whole-run PMs"))
    return out


def _top(df, lat, d, sp, column, group, top: bool) -> bool | None:
    """Whether the best (``top``) or the worst of ``group`` is beyond each other candidate
    over seeds on ``column`` (whole run); None when a value is missing."""
    vals = {cc: whole_run(df, lat, d, sp, cc, column) for cc in CANDIDATES}
    if any(len(v) < 2 for v in vals.values()):
        return None
    pick = (max if top else min)(group, key=lambda cc: mean(vals[cc]))
    for cc in CANDIDATES:
        if cc in group:
            continue
        a, b = (vals[cc], vals[pick]) if top else (vals[pick], vals[cc])
        if judge_less(a, b)[0] != HOLDS:
            return False
    return True


# --------------------------------------------------------------------------------------------
# The selector on rove's tables (Table 6.8)


def plan_text(plan: Sequence[str]) -> str:
    if not plan:
        return "–"
    if switches(plan) == 0:
        return display(plan[0])
    return " / ".join(display(cc) for cc in plan)


def rove_plans(df: pd.DataFrame, tolerance: float = KEEP_TOLERANCE) -> dict:
    """rove's Table 6.8: ``{(criterion, latency, direction, speed): plan}``, the selector
    (:func:`rove.selection.select_per_phase`: argmax per phase with the keep-previous rule) over
    rove's own per-phase tables, no overrides, for the use cases measured."""
    out = {}
    for (crit, lat), table in rove_tables(df).items():
        for (d, sp), by_cc in table.items():
            out[(crit, lat, d, sp)] = select_per_phase(by_cc, tolerance=tolerance)
    return out


def start_up_switch_share(plans: Mapping) -> tuple[int, int]:
    """(switching plans whose first phase's algorithm differs from the second's, switching
    plans)."""
    sw = [p for p in plans.values() if switches(p)]
    return sum(1 for p in sw if p[0] != p[1]), len(sw)


def analyse_selector(ctx: Context) -> Section:
    s = Section("The selector on rove's own tables (Table 6.8)")
    df = phases_df(ctx)
    if not len(df):
        s.paragraphs.append("No run completed.")
        s.verdict = NOT_MEASURED
        return s
    plans = rove_plans(df)
    argmax = rove_plans(df, tolerance=0.0)
    s.paragraphs.append(
        "rove.selection.derive_table_6_8 (per phase the best algorithm, keeping the previous "
        f"phase's when within {KEEP_TOLERANCE:.1%} of the best; no overrides) on rove's "
        "per-phase tables of the previous section, beside the thesis's Table 6.8 (which the "
        "same selector reproduces in 34 of 36 rows from the thesis's own Tables 6.2-6.7).")
    header = ["criterion, latency"] + [_uc(d, sp) for d, sp in USE_CASES]
    rows = []
    same_rows = same_phases = n_phases = 0
    for crit in ("goodput", "pm", "delay"):
        for lat in ("low", "4g"):
            row = [f"{crit}, {LATENCY_LABEL[lat]}"]
            for d, sp in USE_CASES:
                ours = plans.get((crit, lat, d, sp))
                theirs = OPTION2[(crit, lat, d, sp)]
                if ours is None:
                    row.append(f"– (thesis {plan_text(theirs)})")
                    continue
                same_rows += tuple(ours) == tuple(theirs)
                same_phases += sum(a == b for a, b in zip(ours, theirs))
                n_phases += len(theirs)
                row.append(f"{plan_text(ours)} (thesis {plan_text(theirs)})")
            rows.append(row)
    s.tables.append(Table(header, rows, "rove's Table 6.8 (thesis's in brackets); one "
                                        "algorithm = Option 1 suffices"))
    n = len(plans)
    singles = sum(1 for p in plans.values() if switches(p) == 0)
    changed = sum(1 for k in plans if tuple(plans[k]) != tuple(argmax.get(k, ())))
    s.paragraphs.append(
        f"Use cases measured: {n} of 36. Rows equal to the thesis's: {same_rows}; phases with "
        f"the thesis's algorithm: {same_phases} of {n_phases}. Rows keeping one algorithm "
        f"(Option 1 suffices): {singles} (the thesis: 11 of 36). The keep-previous rule "
        f"changes {changed} of rove's rows against pure argmax.")
    ours_su, ours_sw = start_up_switch_share(plans)
    th_su, th_sw = start_up_switch_share(OPTION2)
    share = ours_su / ours_sw if ours_sw else None
    from ..verdicts import judge_range

    s.claims.append(Claim(
        "(H7) the winning pattern is a different CCA for Start-up, then the main CCA",
        "§2.11; §8.3 H7", f"{ours_su} of {ours_sw} of rove's switching plans change algorithm "
                          f"at the end of start-up (the thesis's Table 6.8: {th_su} of {th_sw})",
        "share of rove's switching plans whose start-up algorithm differs from the next "
        "phase's: > 0.5 holds, ≥ 0.25 partly", judge_range(share, (0.5 + 1e-12, 1.0),
                                                           (0.25, 0.5))))
    s.verdict = combined(s.claims)
    return s


__all__ = ["run_mobility", "phase_table", "analyse_tables", "analyse_selector", "rove_tables",
           "rove_plans", "whole_run", "phases_df", "QUICK_CASES", "MOBILITY", "CRITERIA",
           "spearman", "rank_agreement", "start_up_switch_share", "plan_text", "FAILS",
           "PARTLY", "combine"]
