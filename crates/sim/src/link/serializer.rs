//! Serializers: how fast a link's bytes leave it.
//!
//! A fixed-rate serializer takes `bytes·8/rate` per packet, with scheduled rate changes applied
//! to the next packet that starts. A trace serializer follows Mahimahi's mm-link: 1500-byte
//! delivery opportunities at the trace's millisecond timestamps, repeating with the trace's last
//! timestamp as period, unused opportunities lost.

use crate::{Nanos, NS_PER_MS, NS_PER_S};
use rove_scenario::spec::{RateChange, TRACE_OPPORTUNITY_BYTES};
use std::sync::Arc;

/// Nanoseconds to serialize `bytes` at `rate_bps`, rounded to the nearest nanosecond.
/// 1500 bytes at 12 Mbps is exactly 1 ms.
#[inline]
pub fn serialization_ns(bytes: u32, rate_bps: u64) -> Nanos {
    // In 64 bits whenever the numerator fits (packets up to ~2 GB): the same quotient as the
    // 128-bit division below, at a fraction of its cost (the per-packet hot path).
    if let Some(n) = (bytes as u64)
        .checked_mul(8 * NS_PER_S)
        .and_then(|b| b.checked_add(rate_bps / 2))
    {
        return n / rate_bps;
    }
    let bits_ns = bytes as u128 * 8 * NS_PER_S as u128;
    ((bits_ns + rate_bps as u128 / 2) / rate_bps as u128) as Nanos
}

pub struct RateSchedule {
    rate_bps: u64,
    changes: Vec<RateChange>,
    next_change: usize,
}

impl RateSchedule {
    pub fn new(rate_bps: u64, changes: Vec<RateChange>) -> Self {
        RateSchedule {
            rate_bps,
            changes,
            next_change: 0,
        }
    }

    /// The rate in force at `now` (time only moves forward).
    #[inline]
    pub fn rate_at(&mut self, now: Nanos) -> u64 {
        while let Some(c) = self.changes.get(self.next_change) {
            if c.at_ns > now {
                break;
            }
            self.rate_bps = c.rate_bps;
            self.next_change += 1;
        }
        self.rate_bps
    }

    /// Sets the rate from `now` on (until the next scheduled change, which still applies).
    pub fn set_rate(&mut self, now: Nanos, rate_bps: u64) {
        self.rate_at(now);
        self.rate_bps = rate_bps;
    }

    /// Bytes the serializer could send in `[from, to)` at the scheduled rates (for utilization).
    /// `changes` are in increasing time order (the parser's and `set_rate`'s).
    pub fn capacity_bytes(initial_bps: u64, changes: &[RateChange], from: Nanos, to: Nanos) -> f64 {
        let mut total_bits = 0.0;
        let mut rate = initial_bps;
        let mut t = 0;
        for c in changes.iter().chain(std::iter::once(&RateChange {
            at_ns: Nanos::MAX,
            rate_bps: 0,
        })) {
            let (a, b) = (t.max(from), c.at_ns.min(to));
            if b > a {
                total_bits += segment_bits(rate, a, b);
            }
            if c.at_ns >= to {
                break;
            }
            rate = c.rate_bps;
            t = c.at_ns;
        }
        total_bits / 8.0
    }
}

/// Bits sent at `rate_bps` in `[a, b)`.
#[inline]
fn segment_bits(rate_bps: u64, a: Nanos, b: Nanos) -> f64 {
    rate_bps as f64 * (b - a) as f64 / NS_PER_S as f64
}

/// A rate schedule's capacity from time 0, by binary search: `bits_before[k]` is what
/// [`RateSchedule::capacity_bytes`] has summed when it reaches change `k`, added in the same
/// order, so [`bytes_until`](Self::bytes_until) gives the same value to the last bit. The
/// recorder asks at every sample; walking the schedule each time made a long run with a
/// `rate_cycle` quadratic in its length.
pub struct CapacityPrefix {
    bits_before: Vec<f64>,
}

impl CapacityPrefix {
    pub fn new(initial_bps: u64, changes: &[RateChange]) -> Self {
        let mut bits_before = Vec::with_capacity(changes.len() + 1);
        let (mut total, mut rate, mut t) = (0.0, initial_bps, 0);
        bits_before.push(total);
        for c in changes {
            if c.at_ns > t {
                total += segment_bits(rate, t, c.at_ns);
            }
            bits_before.push(total);
            rate = c.rate_bps;
            t = c.at_ns;
        }
        CapacityPrefix { bits_before }
    }

    /// `RateSchedule::capacity_bytes(initial_bps, changes, 0, to)` for the schedule this was
    /// built from.
    pub fn bytes_until(&self, initial_bps: u64, changes: &[RateChange], to: Nanos) -> f64 {
        debug_assert_eq!(self.bits_before.len(), changes.len() + 1);
        // The first change at or after `to` ends the walk; the ones before it are whole segments.
        let k = changes.partition_point(|c| c.at_ns < to);
        let (rate, t) = match k {
            0 => (initial_bps, 0),
            _ => (changes[k - 1].rate_bps, changes[k - 1].at_ns),
        };
        let mut total = self.bits_before[k];
        if to > t {
            total += segment_bits(rate, t, to);
        }
        total / 8.0
    }
}

/// A position in a repeating Mahimahi trace: opportunity `index` of repetition `cycle`.
pub struct TraceCursor {
    ops_ms: Arc<Vec<u32>>,
    period_ms: u64,
    cycle: u64,
    index: usize,
}

impl TraceCursor {
    pub fn new(ops_ms: Arc<Vec<u32>>, period_ms: u32) -> Self {
        assert!(
            period_ms > 0 && !ops_ms.is_empty(),
            "validated by the scenario parser"
        );
        TraceCursor {
            ops_ms,
            period_ms: period_ms as u64,
            cycle: 0,
            index: 0,
        }
    }

    /// Time of the opportunity under the cursor.
    #[inline]
    pub fn time_ns(&self) -> Nanos {
        (self.cycle * self.period_ms + self.ops_ms[self.index] as u64) * NS_PER_MS
    }

    #[inline]
    fn step(&mut self) {
        self.index += 1;
        if self.index == self.ops_ms.len() {
            self.index = 0;
            self.cycle += 1;
        }
    }

    /// Moves the cursor to the first opportunity at or after `t` (never backwards).
    pub fn seek(&mut self, t: Nanos) {
        for _ in 0..64 {
            if self.time_ns() >= t {
                return;
            }
            self.step();
        }
        // Far ahead: jump arithmetically. The first opportunity at time >= target_ms may be the
        // last line of the previous repetition (its timestamp equals the period).
        let target_ms = t.div_ceil(NS_PER_MS);
        let (mut cycle, rem) = (target_ms / self.period_ms, target_ms % self.period_ms);
        let mut index = self.ops_ms.partition_point(|&m| (m as u64) < rem);
        if rem == 0 && cycle > 0 {
            cycle -= 1;
            index = self
                .ops_ms
                .partition_point(|&m| (m as u64) < self.period_ms);
        }
        if index == self.ops_ms.len() {
            index = 0;
            cycle += 1;
        }
        if (cycle, index) > (self.cycle, self.index) {
            self.cycle = cycle;
            self.index = index;
        }
    }

    /// Consumes every opportunity at exactly the cursor's time and returns their number.
    pub fn take_all_at_cursor(&mut self) -> u32 {
        let t = self.time_ns();
        let mut n = 0;
        while self.time_ns() == t {
            n += 1;
            self.step();
        }
        n
    }

    /// Number of opportunities with times in `[from, to)`.
    pub fn count_between(ops_ms: &[u32], period_ms: u32, from: Nanos, to: Nanos) -> u64 {
        let period = period_ms as u64;
        let below = |x: u64| ops_ms.partition_point(|&m| (m as u64) < x) as u64;
        // Opportunities with time < t. Timestamps lie in [0, period], so only the repetition
        // containing t and the one before it can be partly before t.
        let count_before = |t: Nanos| -> u64 {
            let t_ms = t.div_ceil(NS_PER_MS); // m·1ms < t  <=>  m < ceil(t / 1ms)
            let c0 = t_ms / period;
            let mut n = below(t_ms - c0 * period);
            if c0 >= 1 {
                n += (c0 - 1) * ops_ms.len() as u64 + below(t_ms - (c0 - 1) * period);
            }
            n
        };
        count_before(to).saturating_sub(count_before(from))
    }

    pub fn opportunity_bytes() -> u32 {
        TRACE_OPPORTUNITY_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_of_1500_bytes_at_12_mbps_takes_one_ms() {
        assert_eq!(serialization_ns(1500, 12_000_000), 1_000_000);
        assert_eq!(serialization_ns(1500, 100_000_000), 120_000);
        assert_eq!(serialization_ns(52, 1_000_000_000), 416);
    }

    /// The 64-bit shortcut and the 128-bit path give the same quotient, on both sides of the
    /// overflow edge: u32::MAX bytes is 34,359,738,360,000,000,000 bit·ns, over 2^64.
    #[test]
    fn large_packets_take_the_128_bit_path_with_the_same_rounding() {
        let wide = |bytes: u32, rate: u64| {
            ((bytes as u128 * 8_000_000_000 + rate as u128 / 2) / rate as u128) as Nanos
        };
        for (bytes, rate) in [
            (1500, 3),
            (2_000_000_000, 1),
            (2_305_843_009, 1_000),
            (u32::MAX, 1),
            (u32::MAX, 10_000_000_000),
            (u32::MAX, u64::MAX),
        ] {
            assert_eq!(
                serialization_ns(bytes, rate),
                wide(bytes, rate),
                "{bytes} B at {rate}"
            );
        }
        // 4,294,967,295 B at 10 Gbit/s: 3.435973836 s.
        assert_eq!(serialization_ns(u32::MAX, 10_000_000_000), 3_435_973_836);
    }

    #[test]
    fn rate_schedule_applies_changes_in_order() {
        let mut s = RateSchedule::new(
            10,
            vec![
                RateChange {
                    at_ns: 5,
                    rate_bps: 20,
                },
                RateChange {
                    at_ns: 9,
                    rate_bps: 30,
                },
            ],
        );
        assert_eq!(s.rate_at(0), 10);
        assert_eq!(s.rate_at(4), 10);
        assert_eq!(s.rate_at(5), 20);
        assert_eq!(s.rate_at(100), 30);
    }

    #[test]
    fn capacity_integrates_the_schedule() {
        let ch = vec![RateChange {
            at_ns: NS_PER_S,
            rate_bps: 16_000_000,
        }];
        // 1 s at 8 Mbps + 1 s at 16 Mbps = 1 MB + 2 MB
        let c = RateSchedule::capacity_bytes(8_000_000, &ch, 0, 2 * NS_PER_S);
        assert!((c - 3_000_000.0).abs() < 1e-6, "{c}");
        let half = RateSchedule::capacity_bytes(8_000_000, &ch, NS_PER_S / 2, 2 * NS_PER_S);
        assert!((half - 2_500_000.0).abs() < 1e-6, "{half}");
    }

    #[test]
    fn cursor_repeats_with_the_last_timestamp_as_period() {
        let mut c = TraceCursor::new(Arc::new(vec![0, 2, 5]), 5);
        let mut times = vec![];
        for _ in 0..7 {
            times.push(c.time_ns() / NS_PER_MS);
            c.step();
        }
        assert_eq!(times, vec![0, 2, 5, 5, 7, 10, 10]);
    }

    #[test]
    fn seek_finds_the_first_opportunity_at_or_after() {
        let ops = Arc::new(vec![0, 2, 5]);
        for t_ms in [0u64, 1, 2, 3, 5, 6, 10, 11, 1000, 1003] {
            let mut fast = TraceCursor::new(ops.clone(), 5);
            fast.seek(t_ms * NS_PER_MS);
            let mut slow = TraceCursor::new(ops.clone(), 5);
            while slow.time_ns() < t_ms * NS_PER_MS {
                slow.step();
            }
            assert_eq!(
                (fast.cycle, fast.index),
                (slow.cycle, slow.index),
                "t = {t_ms} ms"
            );
        }
    }

    #[test]
    fn take_all_counts_coinciding_opportunities() {
        let mut c = TraceCursor::new(Arc::new(vec![1, 1, 1, 3]), 3);
        assert_eq!(c.take_all_at_cursor(), 3);
        // 3 ms: the last line and, one period on, nothing else at 3 ms (next is 4 ms).
        assert_eq!(c.time_ns(), 3 * NS_PER_MS);
        assert_eq!(c.take_all_at_cursor(), 1);
        assert_eq!(c.time_ns(), 4 * NS_PER_MS);
    }

    #[test]
    fn count_between_matches_enumeration() {
        let ops = vec![0, 2, 5];
        assert_eq!(TraceCursor::count_between(&ops, 5, 0, 11 * NS_PER_MS), 7); // 0,2,5,5,7,10,10
        assert_eq!(TraceCursor::count_between(&[1], 1, 0, NS_PER_S), 999); // 1 ms .. 999 ms
        let arc = Arc::new(ops.clone());
        for to_ms in 0..40u64 {
            let mut c = TraceCursor::new(arc.clone(), 5);
            let mut n = 0;
            while c.time_ns() < to_ms * NS_PER_MS {
                n += 1;
                c.step();
            }
            assert_eq!(
                TraceCursor::count_between(&ops, 5, 0, to_ms * NS_PER_MS),
                n,
                "to = {to_ms} ms"
            );
        }
    }

    #[test]
    fn capacity_prefix_equals_the_walk_bit_for_bit() {
        // Rates and times chosen so that sums round: the prefix must add the same values in
        // the same order as the walk, not merely close ones.
        let changes: Vec<RateChange> = [
            (3, 7_000_001),
            (1_000_000_007, 11_000_003),
            (1_000_000_008, 13),
            (2_500_000_011, 999_999_937),
        ]
        .iter()
        .map(|&(at_ns, rate_bps)| RateChange { at_ns, rate_bps })
        .collect();
        let prefix = CapacityPrefix::new(14_000_017, &changes);
        for to in [
            0,
            1,
            3,
            4,
            999_999_999,
            1_000_000_007,
            1_000_000_008,
            1_000_000_009,
            2_500_000_011,
            7_777_777_777,
        ] {
            let walk = RateSchedule::capacity_bytes(14_000_017, &changes, 0, to);
            let fast = prefix.bytes_until(14_000_017, &changes, to);
            assert_eq!(walk.to_bits(), fast.to_bits(), "to = {to}");
        }
        // Hand-computed: 3 ns at 14,000,017 bit/s then 1 s + 4 ns at 7,000,001 bit/s.
        let hand = (14_000_017.0 * 3.0 / 1e9 + 7_000_001.0 * 1_000_000_004.0 / 1e9) / 8.0;
        assert!((prefix.bytes_until(14_000_017, &changes, 1_000_000_007) - hand).abs() < 1e-9);
        let empty = CapacityPrefix::new(8_000_000, &[]);
        assert_eq!(empty.bytes_until(8_000_000, &[], NS_PER_S), 1_000_000.0);
    }
}
