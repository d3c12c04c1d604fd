"""`rove reproduce tsc` end to end: every committed scenario of ``scenarios/tsc/`` validates, every
sweep validates for every series it runs with, the criteria's helpers compute what they say on
hand-made numbers, and the quick study writes a well-formed report in which every experiment
ran and every claim was judged.

Measured: the quick run takes about 15 s of wall time on the project's 2-core machine (the runs
are 20-s Ch. 2 videos, 60-80-s Ch. 3 model sweeps, 10-s Ch. 3 testbed videos at two WiFi rates
(LRF among their series), 30-s single-Cubic baselines and 10-s Ch. 4 runs of four capacities, on
two seeds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rove
from conftest import quick_study_report
from rove.models import mptcp_delay as md
from rove.reproduce import tsc as study
from rove.reproduce.runner import DEFAULT_SETTING, check_available, derived_spec
from rove.reproduce.tsc import baselines, capacity, lrf, spc, testbed
from rove.reproduce.tsc.common import d_req_ms, wifi_share_below
from rove.reproduce.verdicts import FAILS, HOLDS, NOT_AVAILABLE, NOT_MEASURED, PARTLY
from rove.sweeps import expand_points, load_sweep

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((REPO / "scenarios" / "tsc").glob("*.toml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_committed_scenario_validates(path):
    assert rove.validate(path)["flows"], path


def _parts():
    return [(part, s) for exp in study.EXPERIMENTS for part in exp.parts for s in exp.series]


@pytest.mark.parametrize("part,series", _parts(),
                         ids=lambda x: getattr(x, "key", None) or "x")
def test_every_sweep_validates_for_its_series(part, series):
    doc = derived_spec(study.SWEEPS / part.sweep, {**series.overrides(), **part.fixed}, None)
    assert check_available(doc, series, DEFAULT_SETTING) is None
    for f in sorted(study.SWEEPS.glob("*.toml")):
        assert expand_points(load_sweep(f)), f


def test_d_req_is_d_net_plus_d_send_and_the_wifi_share_counts_by_hand():
    assert [d_req_ms(d) for d in (100, 200, 500)] == [200, 300, 600]
    records = [{"series": "a", "wifi_srtt_ms": np.array([50.0, 150.0, 250.0, 199.0])},
               {"series": "a", "wifi_srtt_ms": np.array([300.0])},
               {"series": "b", "wifi_srtt_ms": np.array([10.0])}]
    assert wifi_share_below(records, "a", 200.0) == [0.75, 0.0]


def test_the_reno_sweep_spans_rho_from_0_3_to_0_95_with_its_model_values():
    # buffer = 100 (1/ρ − 1) packets; (3.9): 1 at ρ ≤ 0.5, 0.75/(1 − ρ + ρ²) above.
    bufs = load_sweep(study.SWEEPS / "reno-model.toml").grid["links.btl.buffer"]
    rhos = [100 / (100 + float(b[:-3])) for b in bufs]
    assert rhos[0] == pytest.approx(0.3, abs=0.001) and rhos[-1] == pytest.approx(0.952, abs=0.001)
    assert md.reno_rate(1.0, 100.0, 200.0) == pytest.approx(1.0)
    assert md.reno_rate(1.0, 100.0, 125.0) == pytest.approx(0.75 / (1 - 0.8 + 0.64))


def _toml(path):
    import tomllib

    return tomllib.loads(Path(path).read_text(encoding="utf-8"))


def test_ch4_capacities_in_the_committed_files_are_the_generators():
    scen = REPO / "scenarios" / "tsc"
    assert _toml(scen / "ch4-periodic.toml")["links"]["down"]["rate_cycle"] == \
        capacity.periodic_cycle(40)
    assert _toml(scen / "ch4-random-walk.toml")["links"]["down"]["rate_cycle"] == \
        capacity.random_walk_cycle(1, 30)
    cases = _toml(study.SWEEPS / "ch4-spc.toml")["cases"]
    for c in (20, 40, 80):
        assert cases[f"periodic-{c}"]["set"]["links.down.rate_cycle"] == capacity.periodic_cycle(c)
        assert cases[f"static-{c}"]["set"]["links.down.rate"] == f"{c}Mbps"
    for w in (2, 3):
        assert cases[f"walk-{w}"]["set"]["links.down.rate_cycle"] == \
            capacity.random_walk_cycle(w, 30)


def test_the_periodic_capacity_is_a_fifth_for_one_second_in_five():
    assert capacity.periodic_cycle(20) == {"period": "1s", "rates": ["20Mbps"] * 4 + ["4Mbps"]}


def test_random_walks_hold_2_to_6_s_within_a_fifth_to_8_times_the_base():
    for w in (1, 2, 3):
        steps = capacity.random_walk_steps(w, 300)
        holds = [h for _, h in steps]
        assert set(holds) <= {2, 3, 4, 5, 6} and len(set(holds)) == 5   # every hold drawn
        assert all(2.0 <= level <= 80.0 for level, _ in steps)          # 10 × [1/5, 8]
        v = capacity.random_walk_mbps(w, 300)
        assert len(v) == 300
        assert v == [level for level, h in steps for _ in range(h)][:300]
    assert capacity.random_walk_mbps(1, 30) != capacity.random_walk_mbps(2, 30)


def test_the_testbed_optimum_is_the_rust_tests():
    # crates/world/tests/rtsc.rs's optimum_ms and docs/multipath.md: 115.4, 87.6, 74.4 ms.
    assert [round(testbed.optimum_ms(w), 1) for w in (8, 12, 15)] == [115.4, 87.6, 74.4]


def test_lrf_definitions_on_hand_made_numbers():
    # Catch-up: the first second from which 3 windows carry >= half of the share.
    assert lrf.catch_up_s([5.0, 0.1, 0.1, 3.0, 3.0, 3.0, 0.0], 4.0) == 3.0
    assert lrf.catch_up_s([5.0, 5.0, 0.1, 5.0, 5.0], 4.0) is None
    assert lrf.share_mbps(12) == pytest.approx(35.85 * 12 / 52)
    # The nominal schedule: a GOP of 12 frames (I = 5 P) carries 0.4 s of 35.85 Mbit/s.
    times, cum = lrf.written_schedule(1.0)
    assert times[12] == pytest.approx(0.4)
    assert cum[11] == pytest.approx(35.85e6 / 8 * 0.4)
    assert cum[0] == pytest.approx(5 * cum[11] / 16)
    # Nothing delivered: the head-of-line age is the time since frame 0; all delivered: 0.
    t = np.array([0.1, 0.2, 0.3])
    assert list(lrf.head_age_ms(t, np.zeros(3), 0.0)) == pytest.approx([100.0, 200.0, 300.0])
    assert list(lrf.head_age_ms(t, cum[[3, 6, 9]], 0.0)) == pytest.approx([0.0, 0.0, 0.0])
    assert lrf.long_delay_period_s(np.array([1.0, 2.0, 3.0]), np.array([600.0, 700.0, 100.0])) \
        == 2.0
    assert lrf.long_delay_period_s(np.array([1.0]), np.array([100.0])) == 0.0


def test_baseline_criteria_on_hand_made_runs():
    import pandas as pd

    def runs(codel_util, drop_util, max_rtt_ms):
        return pd.DataFrame([{"series": k, "case": c, "seed": seed, "utilisation": u,
                              "max_rtt_ms": max_rtt_ms if k == "droptail" else 80.0,
                              "goodput_mbps": 36 * u}
                             for seed in (1, 2) for c in ("static", "half")
                             for k, u in (("codel", codel_util), ("droptail", drop_util))])
    assert baselines._rtt_claim(runs(0.6, 0.96, 3050.0)).verdict == HOLDS
    assert baselines._rtt_claim(runs(0.6, 0.96, 1400.0)).verdict == PARTLY   # 3 s / 2.25 = 1.33 s
    assert baselines._rtt_claim(runs(0.6, 0.96, 600.0)).verdict == FAILS
    assert baselines._half_claim(runs(0.6, 0.96, 3050.0)).verdict == HOLDS
    assert baselines._half_claim(runs(0.8, 0.96, 3050.0)).verdict == PARTLY  # below DropTail
    assert baselines._half_claim(runs(0.97, 0.96, 3050.0)).verdict == FAILS


def _spc_runs(rows):
    import pandas as pd

    base = {"busy": 0.9, "delay_max_ms": 100.0, "active_mean": None, "utilisation": 0.9,
            "delay_p95_ms": 50.0}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_spc_criteria_on_hand_made_runs():
    runs = _spc_runs([
        {"series": "spc", "case": "static-20", "seed": s, "active_mean": 3.5,
         "delay_max_ms": 590.0} for s in (1, 2)] + [
        {"series": "spc", "case": "static-80", "seed": s, "active_mean": 8.0,
         "delay_max_ms": 610.0, "busy": 0.7} for s in (1, 2)])
    cases = ["static-20", "static-80"]
    assert spc._settles(runs, cases[:1]).verdict == HOLDS
    assert spc._settles(runs, cases).verdict == PARTLY          # 8 of 20: at most halved
    assert spc._bounded("q", "w", runs, cases[:1], 600.0).verdict == HOLDS
    assert spc._bounded("q", "w", runs, cases[1:], 600.0).verdict == FAILS
    assert spc._busy("q", "w", runs, cases[1:]).verdict == FAILS
    walk = _spc_runs([{"series": k, "case": "walk-1", "seed": s, "delay_p95_ms": p}
                      for s in (1, 2) for k, p in (("spc", 70.0), ("fixed-1", 50.0),
                                                   ("fixed-20", 300.0))])
    assert spc._close_to_one(walk, ["walk-1"]).verdict == HOLDS   # 70 ≤ 1.5 × 50
    walk.loc[walk["series"] == "spc", "delay_p95_ms"] = 200.0
    assert spc._close_to_one(walk, ["walk-1"]).verdict == PARTLY  # below 20 subflows' 300


def test_quick_study_writes_a_complete_report(tmp_path):
    out = tmp_path / "tsc"
    doc = quick_study_report("tsc", out, len(study.EXPERIMENTS), args=(),
                             refused=(NOT_AVAILABLE, NOT_MEASURED))
    # The testbed emulation and SPC: every claim they make, their tables and figures.
    tb = next(s for s in doc["sections"] if s["title"].startswith("Ch. 3: R-TSC"))
    ch4 = next(s for s in doc["sections"] if s["title"].startswith("Ch. 4: Subflow"))
    assert len(tb["claims"]) == 6 and len(ch4["claims"]) == 11
    assert any("(row 11" in c["statement"] for c in tb["claims"])
    assert any("(row 12)" in c["statement"] for c in tb["claims"])
    base = next(s for s in doc["sections"] if s["title"].startswith("Ch. 4: single Cubic"))
    assert [("(row 14)" in c["statement"], "(row 15)" in c["statement"]) for c in base["claims"]] == \
        [(True, False), (False, True)]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| (c_0, c_1) Mbit/s | receiver | (3.10) bound (ms) |" in md
    assert "| capacity | scheme | goodput (Mbit/s) |" in md
    assert "| (c_0, c_1) Mbit/s | scheme | WiFi catch-up, median |" in md
    assert "| capacity | queue | max srtt (ms) |" in md
    for name in ("ch3-testbed-delay.png", "ch4-spc-active.png", "ch4-spc-delay.png",
                 "ch4-spc-utilisation.png"):
        assert (out / name).stat().st_size > 0, name


def test_ch4_orderings_hold_beyond_two_percent_of_one_deterministic_run():
    """Ch. 4's runs are deterministic (a second seed repeats the first to the byte), so each
    scheme runs once and an ordering a < b holds beyond 2 % of the larger value, is partly
    support when merely in the right direction, and is not measured without a run."""
    from rove.reproduce.tsc.common import DETERMINISTIC_MARGIN, less_deterministic

    assert DETERMINISTIC_MARGIN == 0.02
    assert less_deterministic([0.910], [0.914])[0] == PARTLY   # 0.4 % (walk-2: 20 fixed vs SPC)
    assert less_deterministic([0.80], [0.90])[0] == HOLDS      # 0.10 > 0.018
    assert less_deterministic([0.90], [0.80])[0] == FAILS
    assert less_deterministic([], [0.9])[0] == NOT_MEASURED
    v, text = less_deterministic([100.0], [101.5])
    assert v == PARTLY and "margin (2% of the larger value) 2.03" in text
    for name in ("ch4-spc.toml", "ch4-baselines.toml"):
        assert load_sweep(study.SWEEPS / name).seeds == [1], name
