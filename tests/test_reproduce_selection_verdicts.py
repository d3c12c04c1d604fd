"""The analyses of ``rove reproduce selection`` judged on hand-made numbers: the per-slot
arithmetic of Eqs. 6.1/6.2 on a hand-made series, and for each experiment a table where its
claims hold, one where they fail and, where a claim has one, its partial level (and a missing
algorithm, which is "not measured" and never support). The numbers are chosen by hand from
each claim's printed criterion, so a criterion that accepts any outcome fails here."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rove.reproduce.selection import mobility, monroe, static, switching
from rove.reproduce.selection.common import CASES, case_info
from rove.reproduce.selection.phases import (CAPACITY_TO_TCP, as_tables, phase_values,
                                             phases_of_case, slots)
from rove.reproduce.study import Context
from rove.reproduce.verdicts import FAILS, HOLDS, NOT_MEASURED, PARTLY
from rove.selection import phases_of
from rove.selection.phases import Phase
from rove.selection.tables import CANDIDATES, OPTION2, PHASE_TABLES

SEEDS = (1, 2, 3)
JITTER = (0.99, 1.0, 1.01)     # ±1 % around each mean: a 10 % difference is far beyond a s.d.


def ctx_with(tmp_path, exp_id: str, **data) -> Context:
    return Context(exp_id, tmp_path, True, data=data)


def verdicts(sec) -> list[str]:
    return [c.verdict for c in sec.claims]


def claim(sec, text: str):
    found = [c for c in sec.claims if text in c.quote]
    assert len(found) == 1, (text, [c.quote for c in sec.claims])
    return found[0]


# --------------------------------------------------------------------------------------------
# Eq. 6.1 / 6.2 per 100 ms slot


def series(n: int, per_sample: float, srtt: float, retrans_every: int = 0) -> pd.DataFrame:
    """n 10 ms samples of a TCP flow delivering ``per_sample`` bytes each, constant srtt, a
    retransmission every ``retrans_every`` samples."""
    t = [0.01 * (k + 1) for k in range(n)]
    return pd.DataFrame({"time_s": t, "bytes_delivered": [per_sample * (k + 1) for k in range(n)],
                         "srtt_ms": [srtt] * n, "min_rtt_ms": [srtt / 2] * n,
                         "retrans_segs": [(k + 1) // retrans_every if retrans_every else 0
                                          for k in range(n)]})


def test_slot_values_follow_eq_6_1_and_6_2_by_hand():
    # K = 12500 B per 10 ms = 10 Mbit/s; Kt = 20 Mbit/s of TCP payload (the datagram's
    # 1472-byte payloads scaled to 1448); D = 80 ms, Dmin = 40 ms: A = 0.5, B = 0.5;
    # BDP = Kt·Dmin = 100,000 B; R = 10 packets a slot: C = (100000 - 15000)/100000 = 0.85.
    tcp = series(20, 12500, 80.0, retrans_every=1)
    cap_per_sample = 20e6 / 8 * 0.01 / CAPACITY_TO_TCP
    cap = pd.DataFrame({"time_s": tcp["time_s"],
                        "bytes_delivered": [cap_per_sample * (k + 1) for k in range(20)]})
    sl = slots(tcp, cap, 0.2)
    assert list(sl["start_s"]) == pytest.approx([0.0, 0.1])
    assert list(sl["goodput_bps"]) == pytest.approx([10e6, 10e6])
    assert list(sl["capacity_bps"]) == pytest.approx([20e6, 20e6])
    assert list(sl["delay_ms"]) == pytest.approx([80.0, 80.0])
    assert list(sl["retrans_pkts"]) == pytest.approx([10, 10])
    v = phase_values(sl, [Phase("startup", 0.0, 0.1), Phase("run", 0.0, 0.2)], 40.0)
    pm = (0.5 + 0.5 + 0.85) / 3                # Eq. 6.1: 0.61667
    dpm = (0.5 + 10 * 0.5 + 0.85) / 12         # Eq. 6.2: 0.52917
    assert v["pm"].tolist() == pytest.approx([pm, pm])
    assert v["dpm"].tolist() == pytest.approx([dpm, dpm])
    assert v["goodput_mbps"].tolist() == pytest.approx([10.0, 10.0])
    assert v["slots"].tolist() == [1, 2]


def test_a_slot_without_an_rtt_has_no_pm_and_is_counted():
    tcp = series(20, 12500, 80.0)
    tcp.loc[:9, "srtt_ms"] = 0.0                # no RTT measured in the first slot
    cap = pd.DataFrame({"time_s": tcp["time_s"], "bytes_delivered": tcp["bytes_delivered"] * 2})
    v = phase_values(slots(tcp, cap, 0.2), [Phase("run", 0.0, 0.2)], 40.0)
    assert v["skipped"].iloc[0] == 1 and v["slots"].iloc[0] == 2
    assert v["goodput_mbps"].iloc[0] == pytest.approx(10.0)   # goodput counts both slots


def test_phases_of_a_use_case_are_the_time_rule_plus_the_whole_run():
    ph = phases_of_case("forward", 60, 60.0)
    assert [(p.name, p.start_s, p.end_s) for p in ph] == [
        ("startup", 0.0, 2.0), ("sustainer", 2.0, 50.0), ("constrained", 50.0, 60.0),
        ("run", 0.0, 60.0)]
    assert [p.name for p in phases_of_case("backward", 300, 12.0)] == ["startup", "scaling", "run"]


def test_spearman_and_rank_agreement():
    assert mobility.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert mobility.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert mobility.spearman([1, 1, 1], [1, 2, 3]) is None
    t = PHASE_TABLES[("goodput", "4g")]
    rho, n = mobility.rank_agreement(t, t)
    assert rho == pytest.approx(1.0) and n == 17


# --------------------------------------------------------------------------------------------
# Hand-made per-phase tables (the mobility experiments)


def phase_frame(phase_value, run_value, latencies=("4g", "low")) -> pd.DataFrame:
    """One row per (case, cc, seed, phase): ``phase_value(lat, d, sp, cc, k, phase)`` gives
    (goodput, capacity, pm, dpm) of phase k; ``run_value(lat, d, sp, cc)`` the whole run's."""
    rows = []
    for case in CASES:
        lat, d, sp = case_info(case)
        if lat not in latencies:
            continue
        for cc in CANDIDATES:
            for seed, j in zip(SEEDS, JITTER):
                vals = [(ph, phase_value(lat, d, sp, cc, k, ph))
                        for k, ph in enumerate(phases_of(d, sp))]
                vals.append(("run", run_value(lat, d, sp, cc)))
                for ph, (g, c, pm, dpm) in vals:
                    rows.append({"latency": lat, "direction": d, "speed": sp, "cc": cc,
                                 "seed": seed, "phase": ph, "goodput_mbps": g * j,
                                 "capacity_mbps": c, "pm": pm * j, "dpm": dpm * j})
    return pd.DataFrame(rows)


def thesis_phase(util: float):
    """The thesis's own per-phase means (so rove's ranking equals the thesis's), capacity
    giving utilisation ``util``."""
    def value(lat, d, sp, cc, k, ph):
        g = PHASE_TABLES[("goodput", lat)][(d, sp)][cc][k]
        return (g, g / util, PHASE_TABLES[("pm", lat)][(d, sp)][cc][k],
                PHASE_TABLES[("delay", lat)][(d, sp)][cc][k])
    return value


def reversed_phase(lat, d, sp, cc, k, ph):
    """The thesis's values turned upside down (ranking reversed), utilisation 0.9, Westwood+
    as fast as the others at start-up, CUBIC/NewReno best in F120's constrained area."""
    g = 50 - PHASE_TABLES[("goodput", lat)][(d, sp)][cc][k]
    return (g, g / 0.9, 1 - PHASE_TABLES[("pm", lat)][(d, sp)][cc][k],
            1 - PHASE_TABLES[("delay", lat)][(d, sp)][cc][k])


# H4/H5 whole-run values. holds: forward > backward; CUBIC > NewReno at 4G; NewReno = CUBIC at
# low latency; NewReno best PM at low latency with BBR second; BBR/Illinois best goodput and
# worst delay-PM backward at 4G; NewReno/Westwood+ best delay-PM at 4G.
GOOD_4G = {"bbr": 50, "illinois": 48, "cubic": 30, "reno": 25, "westwood": 20}
DPM_4G = {"reno": 0.9, "westwood": 0.85, "cubic": 0.8, "bbr": 0.5, "illinois": 0.55}
PM_LL = {"reno": 0.9, "bbr": 0.85, "cubic": 0.7, "westwood": 0.6, "illinois": 0.6}


def holds_run(lat, d, sp, cc):
    if lat == "4g":
        g = GOOD_4G[cc] - (10 if d == "backward" else 0)
        return (g, 60.0, 0.8, DPM_4G[cc])
    return (30.0, 60.0, PM_LL[cc], 0.5)


def fails_run(lat, d, sp, cc):
    if lat == "4g":
        g = GOOD_4G[cc] + (10 if d == "backward" else 0)   # backward above forward
        g = {"bbr": 10, "illinois": 12}.get(cc, g)          # BBR/Illinois lowest
        if cc == "reno":
            g = 60 + (10 if d == "backward" else 0)         # NewReno above CUBIC
        return (g, 60.0, 0.8, 1.5 - DPM_4G[cc])             # delay-PM order reversed
    return (30.0 if cc != "cubic" else 45.0, 60.0, 1.5 - PM_LL[cc], 0.5)


def test_mobility_claims_hold_on_the_thesis_tables_and_the_stated_behaviours(tmp_path):
    df = phase_frame(thesis_phase(0.5), holds_run)
    sec = mobility.analyse_tables(ctx_with(tmp_path, "phase-tables", phases=df))
    by = {c.quote: c.verdict for c in sec.claims}
    for name in ("6.2", "6.3", "6.4", "6.5", "6.6", "6.7"):
        assert claim(sec, f"Table {name}:").verdict == HOLDS
        assert "mean ρ 1.00 over 17" in claim(sec, f"Table {name}:").measured
    assert claim(sec, "constrained area").verdict == HOLDS
    # Westwood+ at start-up: the thesis's own tables give 9 of 12 at 2/3 (75 %: holds)
    assert claim(sec, "Westwood+ Start-up").verdict == HOLDS
    assert "9 of 12" in claim(sec, "Westwood+ Start-up").measured
    for text in ("forward goodput > backward", "50 % of the maximum rate",
                 "CUBIC > NewReno at 60 and 300", "near-equal in goodput",
                 "NewReno is competitive", "highest goodput in backward",
                 "worst delay", "Westwood+ and NewReno rank high", "BBR ranks high on PM"):
        assert claim(sec, text).verdict == HOLDS, (text, by)
    assert sec.verdict == HOLDS


def test_mobility_claims_fail_when_every_order_is_reversed(tmp_path):
    df = phase_frame(reversed_phase, fails_run)
    sec = mobility.analyse_tables(ctx_with(tmp_path, "phase-tables", phases=df))
    for name in ("6.2", "6.3", "6.4", "6.5", "6.6", "6.7"):
        assert claim(sec, f"Table {name}:").verdict == FAILS
    for text in ("constrained area", "Westwood+ Start-up", "forward goodput > backward",
                 "50 % of the maximum rate", "CUBIC > NewReno at 60 and 300",
                 "near-equal in goodput", "NewReno is competitive", "highest goodput in backward",
                 "worst delay", "Westwood+ and NewReno rank high", "BBR ranks high on PM"):
        assert claim(sec, text).verdict == FAILS, text
    assert sec.verdict == FAILS


def test_mobility_partial_levels(tmp_path):
    # forward above backward at 60 and 120 km/h but not at 300: 10 of 15 pairs (67 %) partly
    def run(lat, d, sp, cc):
        g, c, pm, dpm = holds_run(lat, d, sp, cc)
        if lat == "4g" and sp == 300 and d == "backward":
            g += 20
        return (g, c, pm, dpm)
    df = phase_frame(thesis_phase(0.5), run)
    sec = mobility.analyse_tables(ctx_with(tmp_path, "phase-tables", phases=df))
    c = claim(sec, "forward goodput > backward")
    assert c.verdict == PARTLY and c.measured.startswith("10 of 15")


def test_mobility_with_one_latency_missing_is_not_measured_there(tmp_path):
    df = phase_frame(thesis_phase(0.5), holds_run, latencies=("4g",))
    sec = mobility.analyse_tables(ctx_with(tmp_path, "phase-tables", phases=df))
    assert claim(sec, "Table 6.5:").verdict == NOT_MEASURED
    assert claim(sec, "near-equal in goodput").verdict == NOT_MEASURED
    assert claim(sec, "forward goodput > backward").verdict == HOLDS
    assert sec.verdict == PARTLY                # "not measured" never counts as support


# --------------------------------------------------------------------------------------------
# The selector on rove's tables


def plan_frame(first: str, rest: str) -> pd.DataFrame:
    """Per-phase values where ``first`` is best in start-up and ``rest`` in every later phase
    (by 10 %), the others equal."""
    def value(lat, d, sp, cc, k, ph):
        best = first if k == 0 else rest
        v = 1.1 if cc == best else 1.0
        return (v, 2.0, v / 2, v / 2)
    return phase_frame(value, lambda *a: (1.0, 2.0, 0.5, 0.5))


def test_selector_derives_plans_from_rove_tables_and_judges_the_start_up_pattern(tmp_path):
    df = plan_frame("reno", "bbr")
    plans = mobility.rove_plans(df)
    assert len(plans) == 36
    assert plans[("goodput", "4g", "backward", 300)] == ("reno", "bbr")
    assert plans[("pm", "low", "forward", 60)] == ("reno", "bbr", "bbr")
    sec = mobility.analyse_selector(ctx_with(tmp_path, "selector", phases=df))
    assert verdicts(sec) == [HOLDS]
    assert "36 of 36" in sec.claims[0].measured
    # one algorithm throughout: no switching plan, the share is not a number
    sec = mobility.analyse_selector(ctx_with(tmp_path, "selector", phases=plan_frame("bbr", "bbr")))
    assert verdicts(sec) == [NOT_MEASURED]


def test_selector_pattern_fails_when_switches_come_later(tmp_path):
    # the best algorithm changes only in the last phase (constrained/scaling)
    def value(lat, d, sp, cc, k, ph):
        n = len(phases_of(d, sp))
        best = "illinois" if k == n - 1 else "reno"
        v = 1.1 if cc == best else 1.0
        return (v, 2.0, v / 2, v / 2)
    df = phase_frame(value, lambda *a: (1.0, 2.0, 0.5, 0.5))
    sec = mobility.analyse_selector(ctx_with(tmp_path, "selector", phases=df))
    # B300 has two phases: its switch is at the end of start-up (6 of 36): share 1/6 < 0.25
    assert verdicts(sec) == [FAILS]
    assert sec.claims[0].measured.startswith("6 of 36")


# --------------------------------------------------------------------------------------------
# Switching


def test_outcome_classes_follow_the_thesis_bounds():
    assert switching.outcome(None, False) == "option 1"
    assert switching.outcome(0.0501, True) == "> +5 %"
    assert switching.outcome(0.05, True) == "0 to +5 %"
    assert switching.outcome(0.0, True) == "0 to +5 %"
    assert switching.outcome(-0.001, True) == "worse"
    assert switching.outcome(None, True) is None


def switch_data(gain_of):
    """Single algorithms: BBR best everywhere (whole-run values 10 for every criterion, the
    others 8); every plan (rove's: the thesis's plans) scores 10 x (1 + gain_of(key))."""
    df = phase_frame(lambda *a: (1.0, 2.0, 0.5, 0.5),
                     lambda lat, d, sp, cc: (10.0, 20.0, 10.0, 10.0) if cc == "bbr"
                     else (8.0, 20.0, 8.0, 8.0))
    plans, rows = {}, []
    for (crit, lat, d, sp), plan in OPTION2.items():
        if switching.switches(plan):
            plans[("thesis", crit, lat, d, sp)] = plan
            plans[("rove", crit, lat, d, sp)] = plan
            g = gain_of((crit, lat, d, sp))
            for seed, j in zip(SEEDS, JITTER):
                v = 10.0 * (1 + g) * j
                rows.append({"case": switching.case_key(lat, d, sp), "plan": "/".join(plan),
                             "seed": seed, "goodput_mbps": v, "pm": v, "dpm": v})
    return {"phases": df, "switch": pd.DataFrame(rows), "plans": plans,
            "rove_plans": dict(OPTION2)}


def thesis_like_gain(key):
    """Gains shaped like the thesis's statements."""
    crit, lat, d, sp = key
    if key == ("goodput", "4g", "backward", 300):
        return 0.41
    if key == ("goodput", "4g", "forward", 60):
        return 0.075
    if crit == "goodput":
        return 0.01
    if crit == "pm":
        return 0.03
    return 0.0 if lat == "4g" else 0.02


def test_switching_claims_hold_with_thesis_like_gains(tmp_path):
    sec = switching.analyse(ctx_with(tmp_path, "switching", **switch_data(thesis_like_gain)))
    by = {c.quote: c.verdict for c in sec.claims}
    assert all(v == HOLDS for v in by.values()), by
    tally = sec.tables[0].rows
    # 25 switching rows: B300 and F60 (goodput, 4G) above 5 %, 23 between 0 and 5 %; 11 single
    assert tally[0][2] == "11" and tally[1][2] == "2" and tally[2][2] == "23" and tally[3][2] == "0"


def test_switching_claims_fail_when_every_switch_loses(tmp_path):
    sec = switching.analyse(ctx_with(tmp_path, "switching", **switch_data(lambda k: -0.2)))
    for text in ("10 of 36 use cases gain", "only 2 of the 25", "backward/variable",
                 "+41.21 %", "+7.54 %", "+0.23 %", "+1.51 %", "4 of 5 cases at 4G",
                 "all cases at low latency"):
        assert claim(sec, text).verdict == FAILS, text
    # "no improvement at 4G for delay" is true when every switch loses
    assert claim(sec, "Delay criterion at 4G").verdict == HOLDS
    # forward/stable goodput gains at most 5 %: true too
    assert claim(sec, "forward/stable").verdict == HOLDS
    assert sec.tables[0].rows[3][2] == "25"


def test_switching_partial_levels(tmp_path):
    # +3 % everywhere: positive gains, none above 5 %
    sec = switching.analyse(ctx_with(tmp_path, "switching", **switch_data(lambda k: 0.03)))
    assert claim(sec, "10 of 36 use cases gain").verdict == FAILS
    assert claim(sec, "backward/variable").verdict == PARTLY
    assert claim(sec, "+41.21 %").verdict == PARTLY
    assert claim(sec, "+0.23 %").verdict == HOLDS
    # +8 %: above 5 % on the means for the small-gain headlines: partly
    sec = switching.analyse(ctx_with(tmp_path, "switching", **switch_data(lambda k: 0.08)))
    assert claim(sec, "+0.23 %").verdict == PARTLY
    assert claim(sec, "Delay criterion at 4G").verdict == FAILS


def test_gain_claim_is_partly_within_the_seed_spread(tmp_path):
    v = {"plan": ("bbr", "illinois"), "best": "bbr", "gain": 0.06,
         "values": [10.6, 11.6, 9.6], "best_values": [10.0, 11.0, 9.0]}
    c = switching.gain_claim("q", "w", v)
    assert c.verdict == PARTLY          # +6 % on the means, 1.05 x best not beyond the s.d.
    assert switching.gain_claim("q", "w", None).verdict == NOT_MEASURED


# --------------------------------------------------------------------------------------------
# Start-up (H1)


def startup_rows(values: dict, cases=("base", "loaded")) -> pd.DataFrame:
    """values[series] = (1 MB FCT s, exit window packets)."""
    rows = []
    for case in cases:
        for series, (fct, exit_cwnd) in values.items():
            for seed, j in zip(SEEDS, JITTER):
                for size in ("1MB", "inf"):
                    rows.append({"series": series, "case": case, "seed": seed,
                                 "flows.0.size": size, "fct_s": fct * j if size == "1MB" else None,
                                 "exit_cwnd": exit_cwnd * j if size == "inf" else math.nan,
                                 "exit_s": 0.5, "min_rtt_ms": 69.0})
    return pd.DataFrame(rows)


def test_startup_claims_hold_with_the_thesis_behaviour(tmp_path):
    # BDP base: 32.86 x 1448/1500 Mbit/s of payload, 69 ms, in 1500-byte packets = 189;
    # loaded: 94.5. CUBIC leaves at 60 packets (≤ 0.8 BDP in both), NewReno at 900.
    runs = startup_rows({"reno": (0.5, 900), "cubic-3x": (0.6, 400), "cubic": (0.8, 60),
                         "cubic-nohystart": (0.5, 900), "cubic-delay": (0.8, 62)})
    sec = static.analyse_startup(ctx_with(tmp_path, "startup", runs=runs))
    assert verdicts(sec) == [HOLDS, HOLDS, HOLDS, HOLDS]
    assert "BDP 189" in sec.claims[0].measured and "BDP 94" in sec.claims[0].measured


def test_startup_claims_fail_in_the_other_order(tmp_path):
    runs = startup_rows({"reno": (0.9, 100), "cubic-3x": (0.6, 400), "cubic": (0.5, 900),
                         "cubic-nohystart": (0.5, 900), "cubic-delay": (0.5, 300)})
    sec = static.analyse_startup(ctx_with(tmp_path, "startup", runs=runs))
    assert verdicts(sec) == [FAILS, FAILS, FAILS, FAILS]


def test_startup_partly_when_one_case_of_two_holds(tmp_path):
    runs = pd.concat([startup_rows({"reno": (0.5, 900), "cubic": (0.8, 60)}, ("base",)),
                      startup_rows({"reno": (0.5, 900), "cubic": (0.8, 200)}, ("loaded",))])
    sec = static.analyse_startup(ctx_with(tmp_path, "startup", runs=runs))
    assert claim(sec, "well below the BDP").verdict == PARTLY
    # CUBIC-3x, CUBIC without HyStart and the delay-only CUBIC did not run: not measured
    assert claim(sec, "1 MB FCT ordering").verdict == NOT_MEASURED
    assert claim(sec, "HyStart disabled").verdict == NOT_MEASURED


# --------------------------------------------------------------------------------------------
# The static cell (H2) and the step (H3)


def static_rows(values: dict, cases=("base", "loaded")) -> pd.DataFrame:
    """values[case][series] = (goodput, mean RTT ms, goodput over 0-10 s)."""
    rows = []
    for case in cases:
        for series, (g, rtt, g10) in values[case].items():
            for seed, j in zip(SEEDS, JITTER):
                rows.append({"series": series, "case": case, "seed": seed,
                             "goodput_mbps": g * j, "mean_rtt_ms": rtt * j, "min_rtt_ms": 69.0,
                             "goodput_0_10": g10 * j, "retrans_rate": 0.0})
    return pd.DataFrame(rows)


def test_static_claims(tmp_path):
    base = {"cubic": (31, 290, 28), "reno": (31, 280, 29), "illinois": (31, 300, 29),
            "cdg": (20, 90, 18), "westwood": (29, 150, 15)}
    loaded = {k: (v[0] / 2 + (5 if k == "cdg" else 0), v[1], v[2]) for k, v in base.items()}
    sec = static.analyse_static(ctx_with(tmp_path, "static",
                                         runs=static_rows({"base": base, "loaded": loaded})))
    assert verdicts(sec) == [HOLDS, HOLDS, HOLDS, HOLDS]
    # the other way: NewReno without a standing queue (2 of 3: partly), CDG fastest, Westwood+
    # quickest, load widens the spread
    base = {"cubic": (31, 200, 20), "reno": (31, 130, 20), "illinois": (31, 300, 20),
            "cdg": (35, 400, 25), "westwood": (29, 150, 30)}
    loaded = {k: (v[0] / 4 if k == "cdg" else v[0], v[1], v[2]) for k, v in base.items()}
    sec = static.analyse_static(ctx_with(tmp_path, "static",
                                         runs=static_rows({"base": base, "loaded": loaded})))
    assert verdicts(sec) == [PARTLY, FAILS, FAILS, FAILS]


def step_rows(values: dict) -> pd.DataFrame:
    """values[case][series] = (goodput after, srtt after, power after)."""
    rows = []
    for case, by in values.items():
        for series, (g, rtt, power) in by.items():
            for seed, j in zip(SEEDS, JITTER):
                rows.append({"series": series, "case": case, "seed": seed, "goodput_before": 15.0,
                             "goodput_after": g * j, "srtt_after_ms": rtt * j,
                             "power_after": power * j})
    return pd.DataFrame(rows)


def test_step_claims(tmp_path):
    up = {"cubic": (30, 200, 0.1), "reno": (30, 200, 0.1), "illinois": (30, 200, 0.1),
          "cdg": (18, 80, 0.1), "westwood": (20, 90, 0.1)}
    down = {"cubic": (15, 600, 0.05), "reno": (15, 400, 0.05), "illinois": (15, 450, 0.05),
            "cdg": (14, 100, 0.1), "westwood": (15, 120, 0.2)}
    sec = static.analyse_step(ctx_with(tmp_path, "step", runs=step_rows({"up": up, "down": down})))
    assert verdicts(sec) == [HOLDS, HOLDS, HOLDS, HOLDS]
    # 12.0 Mbit/s is below 0.8 x 15.9: CDG and Westwood+ do not adapt: 3 of 5 (60 %) partly
    down2 = {**down, "cdg": (12, 100, 0.1), "westwood": (12, 120, 0.2)}
    sec = static.analyse_step(ctx_with(tmp_path, "step", runs=step_rows({"up": up, "down": down2})))
    assert claim(sec, "all CCAs adapt").verdict == PARTLY
    up3 = {k: (30, 200, 0.1) for k in up}
    # 3 of 5 below 0.8 x the new capacity (40 % adapt), CUBIC the shortest srtt, Westwood+
    # the worst power
    down3 = {"cubic": (15, 100, 0.3), "reno": (5, 400, 0.05), "illinois": (15, 450, 0.05),
             "cdg": (5, 100, 0.1), "westwood": (5, 120, 0.01)}
    sec = static.analyse_step(ctx_with(tmp_path, "step", runs=step_rows({"up": up3, "down": down3})))
    assert verdicts(sec) == [FAILS, FAILS, FAILS, FAILS]


def test_window_claims(tmp_path):
    def rows(goodputs):
        return pd.DataFrame([{"series": s, "case": "default", "seed": seed, "goodput_mbps": g * j,
                              "mean_rtt_ms": 72.0, "min_rtt_ms": 69.0}
                             for s, g in goodputs.items() for seed, j in zip(SEEDS, (1, 1, 1))])
    cap = 65535 * 8 / 0.069 / 1e6               # 7.598 Mbit/s
    sec = static.analyse_window(ctx_with(tmp_path, "window",
                                         runs=rows({cc: 7.2 for cc in CANDIDATES})))
    assert verdicts(sec) == [HOLDS, HOLDS, HOLDS]
    sec = static.analyse_window(ctx_with(tmp_path, "window", runs=rows(
        {"reno": 7.2, "cubic": 7.2, "bbr": cap * 1.3, "westwood": 7.2, "illinois": cap * 1.3})))
    assert verdicts(sec) == [HOLDS, PARTLY, FAILS]


# --------------------------------------------------------------------------------------------
# MONROE (H6)


def test_short_transfers_are_read_from_the_delivered_bytes():
    # 1 MB delivered at 1.0 s, 2 MB at 1.5 s, a flow started at 0.5 s
    ts = pd.DataFrame({"time_s": [0.5, 1.0, 1.2, 1.5], "bytes_delivered": [0, 1e6, 1.5e6, 2e6]})
    assert monroe.short_transfers(ts, 0.5, 10) == [(1.0, 0.5), (1.5, pytest.approx(0.4))]


def monroe_rows(values: dict) -> pd.DataFrame:
    """values[case][series] = (L, T, SC, S, RTT long)."""
    rows = []
    for case, by in values.items():
        for series, (L, T, SC, S, rtt) in by.items():
            for seed, j in zip(SEEDS, JITTER):
                rows.append({"series": series, "case": case, "seed": seed, "flows.1.start": "0.5s",
                             "L": L * j, "T": T * j, "SC": SC * j, "S": S * j,
                             "rtt_long_ms": rtt * j, "rtt_short_ms": rtt * j})
    return pd.DataFrame(rows)


def test_monroe_claims(tmp_path):
    others = {"cubic": (12, 25, 2.5, 2.5, 700), "cubic-3x": (12, 25, 2.5, 2.5, 700),
              "reno": (12, 25, 2.5, 2.5, 700)}
    o1 = {**others, "bbr": (15, 20, 1.2, 1.2, 150)}
    o2 = {"cubic": (3, 6, 0.5, 0.5, 200), "cubic-3x": (3, 6.2, 0.5, 0.5, 200),
          "reno": (3, 6.1, 0.5, 0.5, 200), "bbr": (3, 6.0, 0.5, 0.5, 90)}
    o3 = {k: (4, 7, 0.6, 0.6, 80) for k in others} | {"bbr": (2, 7, 1.2, 1.0, 80)}
    sec = monroe.analyse(ctx_with(tmp_path, "monroe", runs=monroe_rows({"o1": o1, "o2": o2,
                                                                         "o3": o3})))
    assert verdicts(sec) == [HOLDS] * 8 + [NOT_MEASURED]
    assert sec.verdict == PARTLY         # the DUPACK claim is not measured
    # the other way round
    o1 = {**others, "bbr": (10, 30, 4, 4, 600)}
    o2 = {"cubic": (3, 6, 0.5, 0.5, 200), "cubic-3x": (3, 9, 0.5, 0.5, 200),
          "reno": (3, 6.1, 0.5, 0.5, 200), "bbr": (3, 6.0, 0.5, 0.5, 300)}
    o3 = {k: (4, 7, 0.6, 0.6, 80) for k in others} | {"bbr": (5, 7, 0.4, 1.0, 80)}
    sec = monroe.analyse(ctx_with(tmp_path, "monroe", runs=monroe_rows({"o1": o1, "o2": o2,
                                                                         "o3": o3})))
    assert verdicts(sec) == [FAILS] * 8 + [NOT_MEASURED]
    # O3: BBR's long flow faster, but not 1.5 x: partly
    o3 = {k: (4, 7, 0.6, 0.6, 80) for k in others} | {"bbr": (3.5, 7, 1.2, 1.0, 80)}
    sec = monroe.analyse(ctx_with(tmp_path, "monroe", runs=monroe_rows({"o1": o1, "o2": o2,
                                                                         "o3": o3})))
    assert claim(sec, "half the time").verdict == PARTLY


def test_as_tables_leaves_out_a_use_case_with_a_missing_value():
    df = phase_frame(thesis_phase(0.5), holds_run, latencies=("4g",))
    means = df.groupby(["latency", "direction", "speed", "cc", "phase"]).mean(
        numeric_only=True).reset_index()
    full = as_tables(means, "goodput_mbps", CANDIDATES, [("forward", 60)])
    assert set(full) == {("forward", 60)}
    gone = as_tables(means[means["cc"] != "bbr"], "goodput_mbps", CANDIDATES, [("forward", 60)])
    assert gone == {}
