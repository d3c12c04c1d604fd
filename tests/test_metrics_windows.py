"""rove.metrics' windowed utilisation, CDF and shares (seed 003's link utilisation in 100-ms
windows and its CDF, the share of WiFi RTTs below 2·d_thr^net), against hand-computed values."""

import math

import numpy as np
import pytest

from rove.metrics import (SampledCapacity, StepCapacity, empirical_cdf, share_at_least,
                          share_below, window_utilisation)


def test_a_fixed_rate_carries_rate_times_time():
    c = StepCapacity([1_000_000.0])
    assert c.bytes_between(0.0, 0.1) == pytest.approx(100_000.0)
    assert c.bytes_between(2.5, 3.0) == pytest.approx(500_000.0)


def test_a_rate_cycle_integrates_its_steps_and_repeats():
    # 3, 5, 2, 2 Mbit/s for 5 s each: 375 000, 625 000, 250 000, 250 000 B/s.
    c = StepCapacity.of_link({"rate_cycle": {"period": "5s", "rates": ["3Mbps", "5Mbps",
                                                                        "2Mbps", "2Mbps"]}})
    assert c.bytes_between(0, 5) == pytest.approx(5 * 375_000)
    # [4, 6]: 1 s at 3 Mbit/s and 1 s at 5 Mbit/s.
    assert c.bytes_between(4, 6) == pytest.approx(375_000 + 625_000)
    # A whole cycle (20 s) is 3 Mbit/s on average: 7.5 MB; [21, 22] is in the first step again.
    assert c.bytes_between(0, 20) == pytest.approx(7_500_000)
    assert c.bytes_between(21, 22) == pytest.approx(375_000)
    assert StepCapacity.of_link({"rate": "8Mbps"}).bytes_between(0, 1) == pytest.approx(1e6)
    with pytest.raises(ValueError, match="accepted: rate, rate_cycle"):
        StepCapacity.of_link({"trace": "x.up"})


def test_a_sampled_capacity_interpolates_the_recorded_counter_from_zero_at_time_zero():
    # queue.parquet's capacity_bytes every 100 ms of a link at 8 Mbit/s (100 000 B per 100 ms)
    # for 0.2 s, then at 1.6 Mbit/s (20 000 B per 100 ms).
    c = SampledCapacity([0.1, 0.2, 0.3, 0.4], [100_000.0, 200_000.0, 220_000.0, 240_000.0])
    assert c.bytes_between(0.0, 0.1) == pytest.approx(100_000.0)
    assert c.bytes_between(0.05, 0.15) == pytest.approx(100_000.0)
    assert c.bytes_between(0.2, 0.4) == pytest.approx(40_000.0)
    u = window_utilisation([0.1, 0.2, 0.3], [0.0, 50_000.0, 60_000.0], c)
    assert list(u) == pytest.approx([0.5, 0.5])
    with pytest.raises(ValueError, match="increasing times"):
        SampledCapacity([0.2, 0.1], [1.0, 2.0])


def test_windows_close_every_tenth_ten_ms_sample_and_divide_by_the_capacity():
    # Samples every 10 ms over 0.3 s; a counter growing 1000 B per sample for 0.1 s, then
    # 500 B, then nothing; capacity 12 500 B per 100 ms (1 Mbit/s).
    t = np.round(np.arange(0, 31) * 0.01, 6)
    per = [1000] * 10 + [500] * 10 + [0] * 10
    b = np.concatenate([[0], np.cumsum(per)])
    u = window_utilisation(t, b, StepCapacity([125_000.0]), window_s=0.1)
    assert u == pytest.approx([10_000 / 12_500, 5_000 / 12_500, 0.0])


def test_the_cdf_and_the_shares_count_by_hand():
    x, f = empirical_cdf([0.95, 0.5, 0.9, 1.0])
    assert list(x) == [0.5, 0.9, 0.95, 1.0]
    assert list(f) == [0.25, 0.5, 0.75, 1.0]
    assert share_at_least([0.95, 0.5, 0.9, 1.0], 0.9) == 0.75
    assert share_below([150.0, 250.0, 199.9, 200.0], 200.0) == 0.5
    assert share_below([], 1.0) is None and share_at_least([], 1.0) is None
