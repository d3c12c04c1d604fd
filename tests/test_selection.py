"""rove.selection: the thesis's policy (seed-002 §2.5-§2.11, §8.3 "deterministic"), exactly."""

import math

import pytest

from rove import selection as s
from rove.selection import tables as t


# --- Eq. 6.3, HyStart's threshold, the window-scaling example -------------------------------

def test_handoff_cwnd_is_the_theses_worked_example():
    assert s.handoff_cwnd(100, 150, 60) == 40


def test_handoff_cwnd_rounds_down_and_keeps_two_packets_like_the_engine():
    assert s.handoff_cwnd(61, 150, 60) == 24          # 24.4
    assert s.handoff_cwnd(3, 300, 60) == 2            # 0.6 -> the floor of 2
    with pytest.raises(ValueError):
        s.handoff_cwnd(10, 0, 60)


def test_handoff_from_samples_averages_the_last_seven():
    cwnds = [1000] * 3 + [100] * 7
    rtts = [1.0] * 3 + [150.0] * 7
    assert s.handoff_from_samples(cwnds, rtts, 60) == 40
    assert s.handoff_from_samples([90, 110], [140, 160], 60) == 40  # fewer than 7: all


def test_window_scaling_example_needs_29_connections():
    assert s.bdp_bytes(100e6, 0.150) == pytest.approx(1_875_000)
    assert s.connections_to_fill(100e6, 0.150) == 29


@pytest.mark.parametrize("kernel", ["4.10", "6.x"])
@pytest.mark.parametrize("delay_min, threshold", [(60, 7.5), (20, 4.0), (200, 16.0), (32, 4.0),
                                                   (128, 16.0), (100, 12.5)])
def test_hystart_delay_threshold_is_an_eighth_clamped_to_4_16_ms(kernel, delay_min, threshold):
    assert s.hystart_delay_threshold_ms(delay_min, kernel) == threshold


def test_hystart_threshold_truncates_in_each_kernels_units():
    # 4.10 keeps ms << 3: 50.3 ms -> 402 eighths -> >> 3 = 50 eighths = 6.25 ms;
    # 6.x keeps µs: 50300 >> 3 = 6287 µs.
    assert s.hystart_delay_threshold_ms(50.3, "4.10") == 6.25
    assert s.hystart_delay_threshold_ms(50.3, "6.x") == 6.287


# --- the performance metric (Eqs. 6.1, 6.2) ---------------------------------------------------

def test_pm_is_one_at_full_capacity_baseline_delay_and_no_retransmissions():
    assert s.performance_metric(10e6, 10e6, 50, 50, 0) == 1.0
    assert s.performance_metric(10e6, 10e6, 50, 50, 0, criterion="delay") == 1.0


def test_pm_by_hand():
    # K/Kt = 0.5, Dmin/D = 60/120 = 0.5, BDP = 8e6/8 * 0.06 = 60 kB, R = 10 -> C = 0.75.
    assert s.performance_metric(4e6, 8e6, 120, 60, 10) == pytest.approx((0.5 + 0.5 + 0.75) / 3)
    assert s.performance_metric(4e6, 8e6, 120, 60, 10, criterion="delay") == pytest.approx(
        (0.5 + 10 * 0.5 + 0.75) / 12)


def test_pm_clamps_c_to_zero_when_more_than_a_bdp_is_retransmitted():
    # BDP 60 kB, 100 retransmissions = 150 kB: C = 0, not -1.5.
    assert s.performance_metric(8e6, 8e6, 60, 60, 100) == pytest.approx(2 / 3)


def test_pm_of_a_sample_without_capacity_is_none_and_the_mean_skips_it():
    assert s.performance_metric(0, 0, 60, 60, 0) is None
    m = s.mean_performance_metric([s.Sample(8e6, 8e6, 60), s.Sample(0, 0, 60),
                                   s.Sample(4e6, 8e6, 120)], 60)
    assert (m.samples, m.skipped) == (2, 1)
    assert m.value == pytest.approx((1.0 + (0.5 + 0.5 + 1.0) / 3) / 2)


# --- Option 1: Table 6.1 ----------------------------------------------------------------------

@pytest.mark.parametrize("key", sorted(t.OPTION1, key=str))
def test_option1_returns_table_6_1_verbatim(key):
    speed, direction, latency, criterion = key
    ctx = s.Context(min_rtt_ms=18 if latency == "low" else 68, direction=direction,
                    speed_kmh=speed)
    choice = s.option1(ctx, criterion)
    entry = t.OPTION1[key]
    if entry is None:  # "*": Finding 8 where it applies, else §2.8's tie-break b)
        assert choice.table_entry == "*"
        if (speed, latency, criterion) == (120, "low", "goodput"):
            assert (choice.cc, choice.reason[:9]) == ("reno", "Finding 8")
        else:
            assert (choice.cc, choice.reason) == ("cubic", "tie-break b): the default algorithm")
    else:
        assert (choice.cc, choice.reason, choice.table_entry) == (entry, "Table 6.1", entry)


def test_option1_star_prefers_the_developers_choice_first():
    ctx = s.Context(latency="low", direction="forward", speed_kmh=60)
    assert s.option1(ctx, "goodput", preference=["illinois"]).cc == "illinois"
    assert s.option1(ctx, "goodput", preference=["cdg", "reno"]).cc == "reno"  # cdg avoided


def test_option1_short_flow_excludes_hystart_algorithms():
    # B60 low-latency goodput is CUBIC in Table 6.1; a 500 kB flow must not start with HyStart.
    ctx = s.Context(latency="low", direction="backward", speed_kmh=60, flow_bytes=500_000)
    choice = s.option1(ctx, "goodput")
    assert choice.cc != "cubic" and "Finding 5" in choice.excluded["cubic"]
    assert choice.table_entry == "cubic"


def test_option1_without_window_scaling_avoids_the_aggressive():
    ctx = s.Context(latency="4g", direction="backward", speed_kmh=120, window_scaling=False)
    choice = s.option1(ctx, "goodput")  # Table 6.1: BBR
    assert choice.cc not in ("bbr", "illinois")
    assert (choice.cc, choice.reason[:9]) == ("reno", "Finding 8")  # stable, 4G, backward
    assert "Finding 1" in choice.excluded["bbr"]


def test_option1_off_table_uses_findings_8_and_9():
    static_ll = s.Context(min_rtt_ms=15, variability="stable")
    assert s.option1(static_ll, "goodput").cc == "reno"
    assert s.option1(s.Context(min_rtt_ms=80, variability="variable"), "goodput").cc == "cubic"


def test_context_classes():
    assert s.Context(speed_kmh=80).speed_class == 60
    assert s.Context(speed_kmh=180).speed_class == 120  # log-nearest: boundary ~190 km/h
    assert s.Context(speed_kmh=250).speed_class == 300
    assert s.Context(speed_kmh=2).speed_class is None
    assert s.Context(min_rtt_ms=39).latency_class == "low"
    assert s.Context(min_rtt_ms=68).latency_class == "4g"
    with pytest.raises(ValueError, match="direction"):
        s.Context(direction="sideways")


# --- Option 2: Table 6.8 and the per-phase selector --------------------------------------------

def test_option2_plan_is_table_6_8():
    assert s.option2_plan("goodput", "4g", "backward", 300) == ("bbr", "illinois")
    assert s.option2_plan("goodput", "4g", "forward", 60) == ("reno", "illinois", "cubic")
    assert s.option2_plan("delay", "low", "forward", 60) == ("westwood",) * 3


def test_table_6_8_has_eleven_single_algorithm_rows():
    assert sum(1 for plan in t.OPTION2.values() if s.switches(plan) == 0) == 11
    assert t.SINGLE_ALGORITHM_ROWS == 11


def _matches(derived):
    return sum(derived[k] == t.OPTION2[k] for k in t.OPTION2)


def test_selector_on_tables_6_2_to_6_7_gives_34_of_36_rows_with_the_keep_rule():
    assert _matches(s.derive_table_6_8()) == 34
    assert _matches(s.derive_table_6_8(tolerance=0.0)) == 32  # pure argmax


def test_the_two_rows_left_are_the_documented_overrides():
    derived = s.derive_table_6_8()
    wrong = {k for k in t.OPTION2 if derived[k] != t.OPTION2[k]}
    assert wrong == set(t.THESIS_OVERRIDES)
    assert _matches(s.derive_table_6_8(overrides=t.THESIS_OVERRIDES)) == 36


@pytest.mark.parametrize("tolerance, rows", [(0.0056, 33), (0.0057, 34), (0.0062, 34),
                                             (0.0063, 33)])
def test_only_tolerances_near_0_6_percent_give_34_rows(tolerance, rows):
    assert _matches(s.derive_table_6_8(tolerance=tolerance)) == rows


def test_selector_keeps_the_previous_algorithm_within_the_tolerance():
    tables = {"a": (1.0, 0.995, 0.90), "b": (0.9, 1.0, 1.0)}
    assert s.select_per_phase(tables) == ("a", "a", "b")        # 0.995 >= 1.0 * 0.994
    assert s.select_per_phase(tables, tolerance=0.0) == ("a", "b", "b")


# --- phases -----------------------------------------------------------------------------------

def test_thesis_phases_forward_60_ends_with_ten_constrained_seconds():
    p = s.thesis_phases("forward", 60, 40)
    assert [(x.name, x.start_s, x.end_s) for x in p] == [
        ("startup", 0, 2), ("sustainer", 2, 30), ("constrained", 30, 40)]


def test_thesis_phases_backward_120_and_300():
    assert [(x.name, x.start_s, x.end_s) for x in s.thesis_phases("backward", 120, 30)] == [
        ("startup", 0, 2), ("constrained", 2, 7), ("scaling", 7, 30)]
    assert [x.name for x in s.thesis_phases("backward", 300, 30)] == ["startup", "scaling"]


def test_constrained_area_is_the_same_stretch_of_road():
    for speed in (60, 120, 300):
        assert speed / 3.6 * s.constrained_seconds(speed) == pytest.approx(166.67, abs=0.01)
    assert s.constrained_seconds(200) == pytest.approx(3.0)


def test_detector_follows_a_forward_run_into_the_constrained_area_with_hysteresis():
    det = s.PhaseDetector(reference_bps=40e6)
    phases = []
    for k in range(300):  # 30 s at 100 ms; capacity falls 40 -> 4 Mbit/s, then wobbles
        t_s = k / 10
        cap = 40e6 - 36e6 * min(1.0, t_s / 20)
        if t_s > 25:
            cap = 14.5e6 if k % 2 else 13.5e6  # around the 35 % threshold (14 Mbit/s)
        phases.append(det.update(t_s, cap))
        if k == 200:
            assert det.direction == "forward"
    assert phases[0] == "startup" and phases[19] == "startup"
    assert phases[25] == "sustainer"
    first_con = phases.index("constrained")
    # the 7-sample mean drops below 14 Mbit/s at ~t = 14.8 s
    assert 14 <= first_con / 10 <= 16
    assert set(phases[first_con:]) == {"constrained"}  # 14 Mbit/s wobble: no flapping


def test_detector_calls_a_rising_capacity_scaling():
    det = s.PhaseDetector(reference_bps=40e6)
    for k in range(300):
        phase = det.update(k / 10, 4e6 + 36e6 * k / 300)
    assert det.direction == "backward" and phase == "scaling"
