//! One subflow's one-way-delay statistics over its last N measurement intervals: the features
//! of RFC 8382 §3 as the thesis writes them (Eqs. 5.1–5.7, seed 000 §4.3).
//!
//! The intervals live in a ring of N + 1 slots, the N completed ones and the current one (as
//! MPTCP-SBD's `owd_snapshots`). A sample is compared, as it arrives, with two references that
//! are fixed for the whole interval: the long-term mean OWD̄ of the completed intervals (Eq. 5.3's
//! skewness counts) and the mean of the previous interval (Eq. 5.5's deviation). The features are
//! read at the end of an interval, over the completed intervals that have samples:
//!
//! ```text
//!   OWD̄_k     = Σ_c OWD_c / C_k                                   (5.1)
//!   OWD̄       = Σ_k OWD̄_k / K              K = intervals with samples   (5.2, [CODE] K for N)
//!   skew_est  = Σ_k (#[OWD_c < OWD̄] − #[OWD_c > OWD̄]) / Σ_k C_k   (5.3, 5.4)
//!   var_est   = Σ_k Σ_c |OWD_c − OWD̄_{k−1}| / Σ_k C_k             (5.5, 5.6)
//!   freq_est  = crossings / K                                      (5.7, [CODE] K for N)
//!   loss rate = loss signals / segments
//! ```
//!
//! A *crossing* ([CODE] `mptcp_sbd.c`, which ignores RFC 8382's skew condition): walking the
//! intervals oldest first, each OWD̄_k is above (+1), inside (0) or below (−1) the band
//! OWD̄ ± p_v·var_est; the first interval's side is the starting side; an interval outside the
//! band on a side other than the last side recorded counts a crossing and records its side.
//!
//! [GAP] choices (the equations leave them open; the kernel's behaviour is noted):
//! - A sample taken before any earlier interval of the window has samples has no OWD̄ to compare
//!   with: it counts in neither skewness count nor in Eq. 5.4's denominator. (The kernel compares
//!   it with a mean of 0, so every first-interval sample counts as "above" and the subflow looks
//!   congested for the first N intervals.)
//! - Eq. 5.5's OWD̄_{k−1} is the mean of the most recent earlier interval with samples; a sample
//!   with none counts in neither var_est's numerator nor its denominator. (The kernel uses
//!   interval k − 1 strictly, and a mean of 0 when it is empty.) With continuous traffic every
//!   interval has samples and both readings agree.
//! - The loss rate's denominator is every segment that arrived, sampled or not (the kernel's is
//!   the samples kept by the 5-ms spacing, which inflates the rate by the packets per 5 ms).

/// What one measurement interval of one subflow accumulated.
#[derive(Debug, Clone, Copy)]
struct Interval {
    /// The interval's number k; [`Interval::NONE`] when the slot holds none.
    index: u64,
    /// C_k: OWD samples taken.
    samples: u32,
    /// Σ OWD_c, ns.
    owd_sum_ns: i64,
    /// Samples below and above the long-term mean (Eq. 5.3), of the `compared` that had one.
    below: u32,
    above: u32,
    compared: u32,
    /// Σ |OWD_c − OWD̄_{k−1}| (Eq. 5.5), ns, over the `deviations` samples that had a reference.
    deviation_sum_ns: f64,
    deviations: u32,
    /// Segments that arrived, and the loss signals they carried.
    segments: u32,
    losses: u32,
    /// Sample spacing: the first spacing slot in which the next sample may be taken.
    next_slot: u64,
}

impl Interval {
    const NONE: u64 = u64::MAX;

    fn starting(index: u64) -> Self {
        Interval {
            index,
            samples: 0,
            owd_sum_ns: 0,
            below: 0,
            above: 0,
            compared: 0,
            deviation_sum_ns: 0.0,
            deviations: 0,
            segments: 0,
            losses: 0,
            next_slot: 0,
        }
    }

    /// OWD̄_k (Eq. 5.1), ns; only for an interval with samples.
    fn mean_ns(&self) -> f64 {
        self.owd_sum_ns as f64 / self.samples as f64
    }
}

/// A subflow's features at the end of an interval (RFC 8382's summary statistics).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Features {
    /// OWD̄ (Eq. 5.2), ns.
    pub mean_ns: f64,
    /// skew_est (Eq. 5.4): in [−1, 1], negative when most samples lie above the mean.
    pub skew: f64,
    /// var_est (Eq. 5.6): mean absolute deviation from the previous interval's mean, ns.
    pub var_ns: f64,
    /// freq_est (Eq. 5.7): mean crossings per interval.
    pub freq: f64,
    /// Loss signals per segment.
    pub loss_rate: f64,
    /// K: completed intervals with samples.
    pub intervals: u32,
}

/// One subflow's interval ring.
#[derive(Debug, Clone)]
pub struct SubflowStats {
    slots: Vec<Interval>,
    /// The current interval's number.
    current: u64,
    /// OWD̄ over the completed intervals: Eq. 5.3's reference during the current interval, ns.
    long_term_mean_ns: Option<f64>,
    /// The most recent completed interval's mean: Eq. 5.5's reference, ns.
    previous_mean_ns: Option<f64>,
}

impl SubflowStats {
    /// Statistics over the last `n` intervals (N), starting in interval `current`.
    pub fn new(n: usize, current: u64) -> Self {
        let mut slots = vec![Interval::starting(Interval::NONE); n + 1];
        let ring = slots.len() as u64;
        slots[(current % ring) as usize] = Interval::starting(current);
        SubflowStats {
            slots,
            current,
            long_term_mean_ns: None,
            previous_mean_ns: None,
        }
    }

    fn ring(&self) -> u64 {
        self.slots.len() as u64
    }

    /// N.
    fn n(&self) -> u64 {
        self.ring() - 1
    }

    fn slot(&self, index: u64) -> &Interval {
        &self.slots[(index % self.ring()) as usize]
    }

    /// The completed intervals (of the last N) that have samples, oldest first.
    fn completed(&self) -> impl Iterator<Item = &Interval> + '_ {
        let from = self.current.saturating_sub(self.n());
        (from..self.current).filter_map(move |k| {
            let iv = self.slot(k);
            (iv.index == k && iv.samples > 0).then_some(iv)
        })
    }

    /// Ends the current interval (and any empty ones after it): interval `k` begins. The
    /// references of the new interval are fixed here.
    pub fn advance_to(&mut self, k: u64) {
        if k <= self.current {
            return;
        }
        let ring = self.ring();
        let first = (self.current + 1).max(k.saturating_sub(self.n()));
        for index in first..=k {
            self.slots[(index % ring) as usize] = Interval::starting(index);
        }
        self.current = k;
        let (mut sum, mut count, mut latest) = (0.0, 0u32, None);
        for iv in self.completed() {
            sum += iv.mean_ns();
            count += 1;
            latest = Some(iv.mean_ns());
        }
        self.long_term_mean_ns = (count > 0).then(|| sum / count as f64);
        self.previous_mean_ns = latest;
    }

    /// A segment arrived in the current interval with one-way delay `owd_ns`, carrying a loss
    /// signal or not. `spacing_slot` (the arrival time in sample-spacing units) lets one sample
    /// in per slot (`None`: every segment is a sample). Returns whether it was sampled.
    pub fn record(&mut self, owd_ns: i64, loss: bool, spacing_slot: Option<u64>) -> bool {
        let (long_term, previous) = (self.long_term_mean_ns, self.previous_mean_ns);
        let ring = self.ring();
        let iv = &mut self.slots[(self.current % ring) as usize];
        iv.segments += 1;
        iv.losses += loss as u32;
        if let Some(slot) = spacing_slot {
            if slot < iv.next_slot {
                return false;
            }
            iv.next_slot = slot + 1;
        }
        iv.samples += 1;
        iv.owd_sum_ns += owd_ns;
        let owd = owd_ns as f64;
        if let Some(mean) = long_term {
            iv.compared += 1;
            if owd < mean {
                iv.below += 1;
            } else if owd > mean {
                iv.above += 1;
            }
        }
        if let Some(mean) = previous {
            iv.deviations += 1;
            iv.deviation_sum_ns += (owd - mean).abs();
        }
        true
    }

    /// The features over the completed intervals, with the crossing band OWD̄ ± `p_v`·var_est;
    /// `None` when none of them has samples.
    pub fn features(&self, p_v: f64) -> Option<Features> {
        let (mut intervals, mut mean_sum) = (0u32, 0.0);
        let (mut skew_base, mut compared) = (0i64, 0u64);
        let (mut deviation_sum, mut deviations) = (0.0, 0u64);
        let (mut losses, mut segments) = (0u64, 0u64);
        for iv in self.completed() {
            intervals += 1;
            mean_sum += iv.mean_ns();
            skew_base += iv.below as i64 - iv.above as i64;
            compared += iv.compared as u64;
            deviation_sum += iv.deviation_sum_ns;
            deviations += iv.deviations as u64;
            losses += iv.losses as u64;
            segments += iv.segments as u64;
        }
        if intervals == 0 {
            return None;
        }
        let ratio = |a: f64, b: u64| if b > 0 { a / b as f64 } else { 0.0 };
        let mean_ns = mean_sum / intervals as f64;
        let var_ns = ratio(deviation_sum, deviations);
        let (low, high) = (mean_ns - p_v * var_ns, mean_ns + p_v * var_ns);
        let mut side: Option<i8> = None;
        let mut crossings = 0u32;
        for iv in self.completed() {
            let m = iv.mean_ns();
            let here = if m > high {
                1
            } else if m < low {
                -1
            } else {
                0
            };
            match side {
                None => side = Some(here),
                Some(s) if here != 0 && here != s => {
                    crossings += 1;
                    side = Some(here);
                }
                Some(_) => {}
            }
        }
        Some(Features {
            mean_ns,
            skew: ratio(skew_base as f64, compared),
            var_ns,
            freq: crossings as f64 / intervals as f64,
            loss_rate: ratio(losses as f64, segments),
            intervals,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// Feeds `intervals` (OWD samples in ms, one list per interval) into statistics over the
    /// last `n` intervals, then starts the next interval so that all of them are completed.
    fn fed(n: usize, intervals: &[&[i64]]) -> SubflowStats {
        let mut s = SubflowStats::new(n, 0);
        for (k, samples) in intervals.iter().enumerate() {
            s.advance_to(k as u64);
            for &owd in *samples {
                s.record(owd * MS, false, None);
            }
        }
        s.advance_to(intervals.len() as u64);
        s
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    /// Eqs. 5.1–5.7 on a hand-made series of four intervals (ms):
    ///
    /// ```text
    ///   k   samples        OWD̄_k   reference OWD̄ (5.3)       below−above   ref. OWD̄_{k−1}   Σ|OWD−ref|
    ///   0   10 12 14       12      none (no earlier interval)      –             none              –
    ///   1   20 22 24 26    23      12                         0 − 4 = −4       12         8+10+12+14 = 44
    ///   2   10 10          10      (12+23)/2 = 17.5           2 − 0 = +2       23         13+13 = 26
    ///   3   30             30      (12+23+10)/3 = 15          0 − 1 = −1       10         20
    /// ```
    ///
    /// OWD̄ (5.2) = (12 + 23 + 10 + 30)/4 = 18.75 ms. skew_est (5.4) = (−4 + 2 − 1)/(4 + 2 + 1)
    /// = −3/7 (interval 0's three samples had no reference). var_est (5.6) = (44 + 26 + 20)/7
    /// = 90/7 ≈ 12.857 ms. Band (p_v = 0.7): 18.75 ± 9 = [9.75, 27.75]: interval means 12 (in,
    /// start at 0), 23 (in), 10 (in), 30 (above: a side other than 0, one crossing). freq_est
    /// (5.7) = 1/4.
    #[test]
    fn the_features_of_a_hand_made_owd_series() {
        let s = fed(50, &[&[10, 12, 14], &[20, 22, 24, 26], &[10, 10], &[30]]);
        let f = s.features(0.7).unwrap();
        assert_eq!(f.intervals, 4);
        assert!(close(f.mean_ns, 18.75e6), "{}", f.mean_ns);
        assert!(close(f.skew, -3.0 / 7.0), "{}", f.skew);
        assert!(close(f.var_ns, 90e6 / 7.0), "{}", f.var_ns);
        assert!(close(f.freq, 0.25), "{}", f.freq);
        assert_eq!(f.loss_rate, 0.0);
        // The references the next interval will use: OWD̄ over the four, and interval 3's mean.
        assert_eq!(s.long_term_mean_ns, Some(18.75e6));
        assert_eq!(s.previous_mean_ns, Some(30e6));
    }

    /// Crossings count only a change of side outside the band: means 10, 30, 20, 30, 10, 30
    /// (ms, one sample each) have OWD̄ = 130/6 ≈ 21.67 and var_est = (20+10+10+20+20)/5 = 16
    /// (the first has no reference), band ±11.2 = [10.47, 32.87]: sides −1 (start), 0, 0, 0,
    /// −1, 0: no crossing. With p_v = 0.5 (±8, [13.67, 29.67]): −1 (start), +1 (crossing), 0,
    /// +1 (same side as recorded: none), −1 (crossing), +1 (crossing): 3 of 6.
    #[test]
    fn a_crossing_is_a_change_of_side_outside_the_band() {
        let s = fed(50, &[&[10], &[30], &[20], &[30], &[10], &[30]]);
        let f = s.features(0.7).unwrap();
        assert!(close(f.var_ns, 16e6), "{}", f.var_ns);
        assert_eq!(f.freq, 0.0);
        assert!(close(s.features(0.5).unwrap().freq, 0.5));
    }

    #[test]
    fn only_the_last_n_intervals_count_and_empty_ones_are_skipped() {
        // N = 2: after intervals 0 (10 ms), 1 (empty), 2 (20 ms), 3 (30 ms), only 2 and 3 count.
        let s = fed(2, &[&[10], &[], &[20], &[30]]);
        let f = s.features(0.7).unwrap();
        assert_eq!(f.intervals, 2);
        assert!(close(f.mean_ns, 25e6));
        // Interval 2's sample compared with interval 0's mean (the most recent with samples).
        assert!(close(f.var_ns, (10e6 + 10e6) / 2.0), "{}", f.var_ns);
        // A jump of many intervals clears the ring.
        let mut s = s;
        s.advance_to(100);
        assert_eq!(s.features(0.7), None);
    }

    #[test]
    fn loss_signals_count_per_segment_and_spacing_keeps_one_sample_per_slot() {
        let mut s = SubflowStats::new(50, 0);
        // Four segments in spacing slot 7, one in slot 8; the second and fifth signal a loss.
        for (slot, loss) in [(7, false), (7, true), (7, false), (7, false), (8, true)] {
            s.record(10 * MS, loss, Some(slot));
        }
        s.advance_to(1);
        let f = s.features(0.7).unwrap();
        assert_eq!(f.loss_rate, 2.0 / 5.0);
        assert_eq!(s.slot(0).samples, 2, "one sample per 5-ms slot");
    }

    /// No clock synchronisation is needed: a constant offset between the clocks shifts OWD̄
    /// and nothing else.
    #[test]
    fn a_clock_offset_changes_only_the_mean() {
        let series: [&[i64]; 4] = [&[10, 12, 14], &[20, 22, 24, 26], &[10, 10], &[30]];
        let shifted: Vec<Vec<i64>> = series
            .iter()
            .map(|v| v.iter().map(|x| x - 5_000).collect())
            .collect();
        let shifted: Vec<&[i64]> = shifted.iter().map(|v| v.as_slice()).collect();
        let a = fed(50, &series).features(0.7).unwrap();
        let b = fed(50, &shifted).features(0.7).unwrap();
        assert!(close(b.mean_ns, a.mean_ns - 5e9));
        assert_eq!((a.skew, a.var_ns, a.freq), (b.skew, b.var_ns, b.freq));
    }
}
