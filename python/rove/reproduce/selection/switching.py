"""Option 2 on rove's cell: switching runs of every use case whose plan switches, against the
best single algorithm (seed-002 §2.11, §5.1 headlines 1-6, §8.3 H7).

Two sets of plans run, each with the selection controller (``[[controllers]] kind =
"selection"``: the thesis's time rule, Eq. 6.3's handoff over the last 7 samples) on the
use case's scenario and seeds:

- **rove's plans**: the selector on rove's own per-phase tables (the thesis's procedure:
  derive the plan from the measurements, then run it); their outcome classes are rove's 36-case
  tally beside the thesis's (11 Option 1 already best, 10 above +5 %, 13 between 0 and 5 %,
  2 worse);
- **the thesis's plans** (Table 6.8) on rove's cell: the headline gains (+41.21 % for BBR →
  Illinois at B300, +7.54 % at F60, ...) are claims about those plans.

A use case's gain is the plan's mean whole-run value of its criterion (goodput; the mean PM of
Eq. 6.1; the mean delay-weighted PM of Eq. 6.2) over the best single algorithm's, the best
being the candidate with the highest mean over the same seeds. [GAP] the thesis restarted the
second algorithm's experiments from the switching point ("emulated" switching); rove switches
the live connection, as the controller does on the kernel.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

import pandas as pd

from ...selection import switches
from ...selection.phases import Phase
from ...selection.tables import CANDIDATES, OPTION2
from ..document import Section, Table, fmt
from ..runner import Series, SeriesRequest, Setting, run_batch, safe_name
from ..study import Context, Experiment
from ..verdicts import (FAILS, HOLDS, NOT_MEASURED, PARTLY, Claim, judge_less, judge_range, mean)
from .common import SWITCH_GAIN, case_info, case_key, combined, display, fraction_claim
from .mobility import (LATENCY_LABEL, MOBILITY, QUICK_CASES, SWEEPS, USE_CASES, CRITERIA,
                       phases_df, plan_text, rove_plans, run_mobility, whole_run)
from .phases import run_values

COLUMN = {crit: col for crit, col, _ in CRITERIA}
CLASSES = ("option 1", "> +5 %", "0 to +5 %", "worse")
# The thesis's tally (§2.11): 36 use cases.
THESIS_TALLY = {"option 1": 11, "> +5 %": 10, "0 to +5 %": 13, "worse": 2}


def selection_controller(plan, direction: str, speed: int) -> dict:
    """The controller table running ``plan`` on the mobility scenarios' flow ``ue``."""
    return {"kind": "selection", "flow": "ue", "plan": list(plan), "direction": direction,
            "speed": f"{speed}km/h", "phases": "time", "handoff": "delay_scaled", "samples": 7}


def plan_series(plan, direction: str, speed: int) -> Series:
    key = safe_name("-".join(plan))
    return Series(key, plan_text(plan), plan[0],
                  extra={"controllers": [selection_controller(plan, direction, speed)]})


def switching_plans(rove: Mapping, cases) -> dict:
    """``{(source, criterion, latency, direction, speed): plan}`` of every plan that switches,
    rove's and the thesis's, for the use cases of ``cases``."""
    out = {}
    for (crit, lat, d, sp), plan in OPTION2.items():
        if case_key(lat, d, sp) not in cases:
            continue
        if switches(plan):
            out[("thesis", crit, lat, d, sp)] = tuple(plan)
        ours = rove.get((crit, lat, d, sp))
        if ours is not None and switches(ours):
            out[("rove", crit, lat, d, sp)] = tuple(ours)
    return out


def run(exp: Experiment, out: Path, quick: bool, jobs: int, log, options) -> Context:
    ctx = run_mobility(exp, out, quick, jobs, log, options)
    df = phases_df(ctx)
    cases = set(QUICK_CASES if quick else [case_key(lat, d, sp) for lat in ("4g", "low")
                                           for d, sp in USE_CASES])
    ours = rove_plans(df)
    plans = switching_plans(ours, cases)
    unique = sorted({(case_key(lat, d, sp), plan) for (_, _, lat, d, sp), plan in plans.items()})
    requests = []
    for case, plan in unique:
        _, d, sp = case_info(case)
        series = plan_series(plan, d, sp)
        requests.append(SeriesRequest(SWEEPS / MOBILITY.sweep, out / "switching" / case / series.key,
                                      series, Setting(case, case, cases=(case,)),
                                      MOBILITY.quick if quick else None))
    log(f"  {len(unique)} switching plans ({len(plans)} use-case plans, rove's and the thesis's)")
    runs = run_batch(requests, jobs, log)
    cap = next((r for r in ctx.runs if r.series.key == "capacity" and r.table is not None), None)
    rows = []
    for (case, plan), r in zip(unique, runs):
        if r.failures:
            ctx.failures.append(f"{len(r.failures)} point(s) of {r.series.label} [{case}] "
                                f"failed: {r.failures[0]['error']}")
        if r.table is None or cap is None:
            continue
        for point, g in r.table.groupby("point", sort=False):
            cap_dir = cap.run_dir(point)
            if not (cap_dir / "timeseries.parquet").exists():
                continue
            duration = json.loads((r.run_dir(point) / "summary.json").read_text())["duration_s"]
            v = run_values(r.run_dir(point), cap_dir, "ue", [Phase("run", 0.0, float(duration))])
            rows.append({"case": case, "plan": "/".join(plan), "seed": int(g.iloc[0]["seed"]),
                         **{c: float(v.iloc[0][c]) for c in ("goodput_mbps", "pm", "dpm")}})
    ctx.data = {"phases": df, "switch": pd.DataFrame(rows), "plans": plans, "rove_plans": ours}
    return ctx


# --------------------------------------------------------------------------------------------
# Gains


def outcome(gain: float | None, switching: bool) -> str | None:
    """The thesis's class of a use case: Option 1 already best (no switch), above +5 %, 0 to
    +5 %, or worse (below 0)."""
    if not switching:
        return "option 1"
    if gain is None:
        return None
    if gain > SWITCH_GAIN:
        return "> +5 %"
    return "0 to +5 %" if gain >= 0 else "worse"


def use_case_gain(df: pd.DataFrame, sw: pd.DataFrame, crit: str, lat: str, d: str, sp: int,
                  plan) -> dict:
    """The plan against the best single algorithm on the criterion's whole-run value:
    ``{"best", "best_values", "values", "gain"}`` (gain None when either side is missing)."""
    col = COLUMN[crit]
    singles = {cc: whole_run(df, lat, d, sp, cc, col) for cc in CANDIDATES}
    singles = {cc: v for cc, v in singles.items() if v}
    best = max(singles, key=lambda cc: mean(singles[cc])) if singles else None
    case = case_key(lat, d, sp)
    m = sw[(sw["case"] == case) & (sw["plan"] == "/".join(plan))] if len(sw) else sw
    values = [float(x) for x in m.sort_values("seed")[col]] if len(m) else []
    b = mean(singles[best]) if best else None
    gain = (mean(values) / b - 1) if values and b else None
    return {"best": best, "best_values": singles.get(best, []), "values": values, "gain": gain}


def gains(df: pd.DataFrame, sw: pd.DataFrame, plans: Mapping, source: str,
          derived: Mapping | None = None) -> dict:
    """``{(criterion, latency, direction, speed): use_case_gain(...) + {"plan", "class"}}`` of
    the switching plans of ``source`` ("rove" or "thesis") over the use cases measured; a use
    case whose plan does not switch is class "option 1". ``derived``: rove's plan of every use
    case (a use case the selector had no table for is left out)."""
    out = {}
    measured = set(zip(df["latency"], df["direction"], df["speed"])) if len(df) else set()
    for crit in ("goodput", "pm", "delay"):
        for lat in ("low", "4g"):
            for d, sp in USE_CASES:
                if (lat, d, sp) not in measured:
                    continue
                if source == "rove" and derived is not None and (crit, lat, d, sp) not in derived:
                    continue
                plan = plans.get((source, crit, lat, d, sp))
                if plan is None:
                    if source == "thesis":
                        base = OPTION2[(crit, lat, d, sp)]
                        if switches(base):
                            continue          # a switching plan that did not run
                    out[(crit, lat, d, sp)] = {"plan": None, "class": "option 1", "gain": None,
                                               "best": None, "values": [], "best_values": []}
                    continue
                g = use_case_gain(df, sw, crit, lat, d, sp, plan)
                out[(crit, lat, d, sp)] = {**g, "plan": plan, "class": outcome(g["gain"], True)}
    return out


def tally(g: Mapping) -> dict[str, int]:
    out = {c: 0 for c in CLASSES}
    for v in g.values():
        if v["class"] is not None:
            out[v["class"]] += 1
    return out


def _gain_text(v: Mapping) -> str:
    return "–" if v.get("gain") is None else f"{v['gain']:+.1%}"


def _uc(d: str, sp: int) -> str:
    return f"{d[0].upper()}{sp}"


def gain_claim(quote: str, where: str, v: Mapping | None) -> Claim:
    """A headline gain of a thesis plan: holds when the plan beats 1.05 x the best single
    algorithm over seeds, partly when its mean gain is positive, else does not hold."""
    if not v or not v.get("values") or not v.get("best_values"):
        return Claim(quote, where, "not run", "–", NOT_MEASURED)
    verdict, text = judge_less([x * (1 + SWITCH_GAIN) for x in v["best_values"]], v["values"])
    if verdict != HOLDS:
        verdict = PARTLY if (v["gain"] or 0) > 0 else FAILS
    return Claim(quote, where,
                 f"{plan_text(v['plan'])}: {_gain_text(v)} over {display(v['best'])} "
                 f"({fmt(mean(v['values']), '.3g')} vs {fmt(mean(v['best_values']), '.3g')}; "
                 f"{text})",
                 f"the plan's whole-run value above 1.05 x the best single algorithm's over "
                 f"seeds (the larger s.d. as margin) holds; a positive mean gain partly", verdict)


def small_gain_claim(quote: str, where: str, vs: Mapping[str, Mapping | None]) -> Claim:
    """Headlines of small gains: each plan's mean gain within [0, +5 %] holds; all within
    [-5 %, +10 %] partly."""
    gs = {k: (v or {}).get("gain") for k, v in vs.items()}
    known = {k: g for k, g in gs.items() if g is not None}
    if not known:
        return Claim(quote, where, "not run", "–", NOT_MEASURED)
    if len(known) == len(gs) and all(0 <= g <= SWITCH_GAIN for g in known.values()):
        verdict = HOLDS
    elif all(-SWITCH_GAIN <= g <= 2 * SWITCH_GAIN for g in known.values()):
        verdict = PARTLY
    else:
        verdict = FAILS
    return Claim(quote, where, "; ".join(f"{k} {plan_text((vs[k] or {}).get('plan') or ())}: "
                                         f"{_gain_text(vs[k] or {})}" for k in gs),
                 "each plan's mean gain over the best single algorithm within [0, +5 %] "
                 "holds; all within [-5 %, +10 %] partly", verdict)


def count_claim(quote: str, where: str, vs: Mapping[str, Mapping], test, need: int,
                criterion: str) -> Claim:
    flags = {k: (None if v.get("gain") is None else bool(test(v["gain"]))) for k, v in vs.items()}
    known = [k for k, f in flags.items() if f is not None]
    n = sum(1 for k in known if flags[k])
    if not known:
        verdict = NOT_MEASURED
    elif n >= need:
        verdict = HOLDS
    elif n > 0:
        verdict = PARTLY
    else:
        verdict = FAILS
    return Claim(quote, where, f"{n} of {len(known)}: " + "; ".join(
        f"{k} {_gain_text(vs[k])}" for k in flags), criterion, verdict)


def analyse(ctx: Context) -> Section:
    s = Section("Option 2: switching runs against the best single algorithm (the 36-case "
                "tally, headlines 1-6, H7)")
    data = ctx.data or {}
    df = phases_df(ctx)
    sw = data.get("switch", pd.DataFrame())
    plans = data.get("plans", {})
    if not len(df):
        s.paragraphs.append("No run completed.")
        s.verdict = NOT_MEASURED
        return s
    seeds = df["seed"].nunique()
    s.paragraphs.append(
        "Each use case whose plan switches runs with the selection controller (the thesis's "
        "time rule; Eq. 6.3's handoff over the last 7 samples) on the same scenario and "
        f"seeds ({seeds}) as the single algorithms; its gain is the mean whole-run value of "
        "the use case's criterion (goodput; mean PM, Eq. 6.1; mean delay-weighted PM, "
        "Eq. 6.2) over the best single algorithm's. rove's plans come from the selector on "
        "rove's own tables (previous section); the thesis's plans (Table 6.8) run on rove's "
        "cell too, for the headline gains.")
    ours = gains(df, sw, plans, "rove", data.get("rove_plans"))
    theirs = gains(df, sw, plans, "thesis")
    t_ours, t_theirs = tally(ours), tally(theirs)
    s.tables.append(Table(["outcome", "thesis (Aeroflex, its plans)", "rove's plans on rove's "
                           "cell", "the thesis's plans on rove's cell"],
                          [[c, str(THESIS_TALLY[c]), str(t_ours[c]), str(t_theirs[c])]
                           for c in CLASSES] +
                          [["use cases", "36", str(sum(t_ours.values())),
                            str(sum(t_theirs.values()))]],
                          "The 36-case tally (§2.11): a use case keeping one algorithm is "
                          "\"option 1\"; a switching one by its mean gain"))
    rows = []
    for (crit, lat, d, sp), v in ours.items():
        th = theirs.get((crit, lat, d, sp), {})
        rows.append([f"{crit}, {LATENCY_LABEL[lat]}, {_uc(d, sp)}",
                     plan_text(v["plan"] or ()) if v["plan"] else "one algorithm",
                     _gain_text(v), display(v["best"]) if v.get("best") else "–",
                     plan_text(OPTION2[(crit, lat, d, sp)]),
                     _gain_text(th) if th else "–"])
    s.tables.append(Table(["use case", "rove's plan", "gain", "best single", "thesis's plan",
                           "its gain on rove's cell"], rows,
                          "Per use case: mean whole-run gain over the best single algorithm"))
    s.claims += tally_claims(ours)
    s.claims += headline_claims(theirs)
    s.verdict = combined(s.claims)
    return s


def tally_claims(ours: Mapping) -> list[Claim]:
    out = []
    switching = {k: v for k, v in ours.items() if v["plan"] is not None and v["values"]}
    # Headline 1 / H7: switching pays off (> 5 %) in some use cases
    beyond = [k for k, v in switching.items()
              if judge_less([x * (1 + SWITCH_GAIN) for x in v["best_values"]], v["values"])[0]
              == HOLDS]
    on_means = [k for k, v in switching.items() if (v["gain"] or 0) > SWITCH_GAIN]
    verdict = (HOLDS if beyond else PARTLY if on_means else FAILS) if switching else NOT_MEASURED
    out.append(Claim(
        "Option 2: 10 of 36 use cases gain more than 5 % by switching", "§2.11; §5.1 #1",
        f"rove's plans: {len(on_means)} of {len(ours)} use cases above +5 % on the means, "
        f"{len(beyond)} beyond the seeds' spread"
        + (f" ({', '.join(_key(k) for k in beyond)})" if beyond else ""),
        "at least one of rove's switching plans above 1.05 x the best single algorithm over "
        "seeds holds; above it on the means only partly", verdict))
    # Headline 1: switching is rarely worse (2 of 36)
    flags = {_key(k): judge_less(v["values"], v["best_values"])[0] != HOLDS
             for k, v in switching.items()}
    out.append(fraction_claim(
        "Option 2: only 2 of the 25 switching use cases did worse than one algorithm",
        "§2.11; §5.1 #1", flags,
        "per switching use case of rove's plans, the plan not below the best single "
        "algorithm beyond the seeds' spread"))
    # H7: > 5 % in some backward/variable use cases (B60, B300)
    back = {k: v for k, v in switching.items() if k[2] == "backward" and k[3] in (60, 300)}
    best = max(back.items(), key=lambda kv: kv[1]["gain"] or -1, default=None)
    if best is None:
        out.append(Claim("(H7) switching yields more than 5 % in some backward/variable "
                         "scenarios", "§8.3 H7", "no switching plan at B60/B300", "–",
                         NOT_MEASURED if not switching else FAILS))
    else:
        out.append(Claim("(H7) switching yields more than 5 % in some backward/variable "
                         "scenarios", "§8.3 H7",
                         f"largest gain at B60/B300: {_key(best[0])} {_gain_text(best[1])}",
                         "the largest mean gain of rove's plans at B60/B300 > +5 % holds, "
                         "> 0 partly", judge_range(best[1]["gain"], (SWITCH_GAIN + 1e-12, 9e9),
                                                   (1e-12, SWITCH_GAIN))))
    # H7: at most a few percent in forward/stable goodput cases (F120)
    fs = {_key(k): v for k, v in ours.items() if k[0] == "goodput" and k[2:] == ("forward", 120)}
    flags = {k: (True if v["plan"] is None else
                 None if v["gain"] is None else v["gain"] <= SWITCH_GAIN) for k, v in fs.items()}
    out.append(fraction_claim(
        "(H7) at most a few percent in forward/stable goodput cases", "§8.3 H7", flags,
        "goodput at F120 (both latencies): rove's plan keeps one algorithm or gains at most "
        "+5 % on the means", holds_at=1.0, partly_at=0.5))
    return out


def _key(k) -> str:
    crit, lat, d, sp = k
    return f"{crit}-{'4G' if lat == '4g' else 'LL'} {_uc(d, sp)}"


def headline_claims(theirs: Mapping) -> list[Claim]:
    g = theirs.get
    out = [
        gain_claim("+41.21 % goodput with BBR (Start-up) -> Illinois (Scaling), backward at "
                   "300 km/h, 4G latency", "§5.1 #2; Table 6.8", g(("goodput", "4g", "backward", 300))),
        gain_claim("+7.54 % goodput: NewReno -> Illinois -> CUBIC, forward at 60 km/h, 4G",
                   "§5.1 #3; Table 6.8", g(("goodput", "4g", "forward", 60))),
        small_gain_claim("+0.23 % (forward 120 km/h) and +1.32 % (forward 300 km/h) goodput, "
                         "4G", "§5.1 #4", {"F120": g(("goodput", "4g", "forward", 120)),
                                           "F300": g(("goodput", "4g", "forward", 300))}),
        small_gain_claim("+1.51 % and +0.26 % goodput (F60, F120) and \"almost 5 %\" in B60 "
                         "(NewReno -> CUBIC), low latency", "§5.1 #5",
                         {"F60": g(("goodput", "low", "forward", 60)),
                          "F120": g(("goodput", "low", "forward", 120)),
                          "B60": g(("goodput", "low", "backward", 60))}),
    ]
    pm4 = {_uc(d, sp): v for (c, lat, d, sp), v in theirs.items()
           if c == "pm" and lat == "4g" and v.get("plan")}
    out.append(count_claim("PM criterion: the combination better than every single CCA in 4 "
                           "of 5 cases at 4G", "§5.1 #6", pm4, lambda x: x > 0, 4,
                           "the thesis's PM-4G plans with a positive mean gain: at least 4 "
                           "holds, some partly"))
    pml = {_uc(d, sp): v for (c, lat, d, sp), v in theirs.items()
           if c == "pm" and lat == "low" and v.get("plan")}
    out.append(count_claim("PM criterion: the combination better in all cases at low latency",
                           "§5.1 #6", pml, lambda x: x > 0, max(1, len(pml)),
                           "every PM-LL plan of the thesis with a positive mean gain holds, "
                           "some partly"))
    d4 = {_uc(d, sp): v for (c, lat, d, sp), v in theirs.items()
          if c == "delay" and lat == "4g" and v.get("plan")}
    out.append(count_claim("Delay criterion at 4G: no improvement (similar or worse)",
                           "§5.1 #6", d4, lambda x: x <= SWITCH_GAIN, max(1, len(d4)),
                           "every D-4G plan of the thesis gains at most +5 % on the means "
                           "holds, some partly"))
    return out


__all__ = ["run", "analyse", "gains", "tally", "outcome", "switching_plans", "use_case_gain",
           "THESIS_TALLY", "CLASSES"]
