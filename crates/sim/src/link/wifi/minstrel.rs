//! Minstrel-HT rate control (`mcs = "minstrel"`), ported from Linux 5.10's
//! net/mac80211/rc80211_minstrel_ht.c and rc80211_minstrel.{c,h} (Felix Fietkau), for one
//! transmitter's frames to one peer. The peer's rates are one group (the 802.11a rates; Linux
//! ≥ 5.11 puts them in minstrel_ht's OFDM group).
//!
//! - Every frame reports its attempts per rate and whether it was acknowledged
//!   (`minstrel_ht_tx_status`); every `update_interval / 2` = 50 ms (`mp->update_interval =
//!   HZ / 10`, halved in `minstrel_ht_tx_status`) each rate's success probability is averaged
//!   by an EWMA with weight EWMA_LEVEL / EWMA_DIV = 96/128 on the old value
//!   (`minstrel_calc_rate_stats`, `minstrel_ewma`).
//! - A rate's throughput is min(prob, 90 %) / (overhead / A-MPDU length + its duration), 0 below
//!   10 % (`minstrel_ht_get_tp_avg`); the rate table is the best and second-best throughput
//!   rates and the max-probability rate (the highest-throughput rate above 75 %, else the most
//!   reliable; `minstrel_ht_set_best_prob_rate`), each with a retry count from the 6000 µs
//!   segment (`minstrel_calc_retransmit`), 2 below 20 % (`minstrel_ht_set_rate`).
//! - Sampling: after each sample, 16 + 2 · (mean A-MPDU length) frames wait
//!   (`sample_wait`), 8 samples per stats interval per group (`sample_count`); the sample rate
//!   comes from a random permutation table of 10 columns (`init_sample_table`), skipping the
//!   current best rates, rates above 95 %, rates 3× slower than the max-probability rate,
//!   already sampled slow rates, and slow rates sampled less than 20 intervals ago (at most 2
//!   slow samples per interval) (`minstrel_get_sample_rate`). A sample frame's chain is the
//!   sample rate once, then the table's second and third rates (mac80211 fills slots after the
//!   probe from the station's rate table).
//!
//! Differences from Linux: floating-point probabilities instead of 12-bit fixed point; the
//! EWMA, i.e. Linux's `new_avg = false` (5.10 defaults to `new_avg = true`, a second-order
//! noise filter, which also halves `sample_count` and the idle update interval); no
//! `sample_switch` (it applies to hardware without multi-rate retry; this one has a 4-slot
//! chain, `has_mrr`); no RTS/CTS on fallback rates (their retry count, `count_rts`, is kept);
//! one spatial stream, so no stream downgrade.

use super::phy::Phy;
use crate::rng::Stream;
use crate::Nanos;

/// MAX_THR_RATES (rc80211_minstrel_ht.h).
const MAX_THR_RATES: usize = 4;
/// SAMPLE_COLUMNS (rc80211_minstrel_ht.h).
const SAMPLE_COLUMNS: usize = 10;
/// EWMA_LEVEL / EWMA_DIV: the weight of the old average (rc80211_minstrel.h).
const EWMA_OLD: f64 = 96.0 / 128.0;
/// `mp->update_interval / 2` = HZ / 10 / 2: 50 ms (minstrel_ht_alloc, minstrel_ht_tx_status).
const UPDATE_INTERVAL_NS: Nanos = 50_000_000;
/// AVG_PKT_SIZE (rc80211_minstrel_ht.c): the packet the rate durations are computed for.
const AVG_PKT_BYTES: u32 = 1200;
/// `mp->segment_size`, µs: the longest a frame may spend in one chain slot.
const SEGMENT_US: u64 = 6000;
/// `mp->max_retry` when the hardware gives no `max_rate_tries`.
const MAX_RETRY: u32 = 7;
/// `mp->cw_min`, `mp->cw_max`; `t_slot`, µs (minstrel_calc_retransmit's "FIXME" 9 µs).
const CW_MIN: u64 = 15;
const CW_MAX: u64 = 1023;
const T_SLOT_US: u64 = 9;

/// One rate's counters (`struct minstrel_rate_stats`).
#[derive(Debug, Clone, Default)]
struct RateStats {
    /// This interval's attempts and successes.
    attempts: u32,
    success: u32,
    /// The averaged success probability (`prob_avg`), 0 to 1.
    prob: f64,
    att_hist: u64,
    /// Intervals since the rate was last attempted.
    sample_skipped: u32,
    /// (retry_count, retry_count_rtscts), computed when the rate table is made.
    retry: Option<(u8, u8)>,
}

/// A frame's multi-rate retry chain: (MCS, transmissions) per slot, in order.
pub type Chain = Vec<(usize, u8)>;

#[derive(Clone)]
pub struct Minstrel {
    rates: Vec<RateStats>,
    /// The rates the PHY has (`mi->supported`).
    supported: Vec<bool>,
    /// Air time of an AVG_PKT_SIZE packet per rate, ns (`minstrel_get_duration`).
    duration_ns: Vec<u64>,
    /// `mi->overhead` and `mi->overhead_rtscts`, µs.
    overhead_us: u64,
    overhead_rtscts_us: u64,
    max_tp: [usize; MAX_THR_RATES],
    max_prob: usize,
    sample_table: Vec<Vec<usize>>,
    column: usize,
    index: usize,
    sample_wait: u32,
    sample_tries: u32,
    sample_count: u32,
    sample_slow: u32,
    last_update: Nanos,
}

/// mac80211's `ieee80211_frame_duration` for OFDM at `rate_100kbps` (util.c): SIFS and signal
/// extension 16 µs, preamble 16, SIGNAL 4, then 4 µs per symbol of (16 + 8·(len + 4) + 6) bits.
fn frame_duration_us(len: u64, rate_100kbps: u64) -> u64 {
    16 + 16 + 4 + 4 * ((16 + 8 * (len + 4) + 6) * 10).div_ceil(4 * rate_100kbps)
}

/// MCS_DURATION: the data symbols of AVG_AMPDU_SIZE packets of AVG_PKT_SIZE, 4 µs each (3.6
/// with the short GI: `MCS_SYMBOL_TIME`), divided by AVG_AMPDU_SIZE (16).
fn duration_ns(phy: &Phy, r: usize) -> u64 {
    let bits = u64::from(AVG_PKT_BYTES) * 16 * 8;
    let syms = bits.div_ceil(u64::from(phy.n_dbps(r)));
    let t = if phy.short_gi {
        (syms * 18_000 + 4_000) / 5
    } else {
        syms * 4_000
    };
    t / 16
}

impl Minstrel {
    pub fn new(rng: &mut Stream, phy: &Phy) -> Self {
        let n = phy.mcs_count();
        // init_sample_table: each column a permutation, rate i placed at (i + rnd) mod n or the
        // next free slot.
        let sample_table = (0..SAMPLE_COLUMNS)
            .map(|_| {
                let mut col = vec![usize::MAX; n];
                for i in 0..n {
                    let mut at = (i + (rng.next_u64() & 0xff) as usize) % n;
                    while col[at] != usize::MAX {
                        at = (at + 1) % n;
                    }
                    col[at] = i;
                }
                col
            })
            .collect();
        // minstrel_ht_update_caps: ack_dur = frame_duration(10 B at 6 Mbit/s), overhead =
        // frame_duration(0 B) + ack_dur, overhead_rtscts = overhead + 2 · ack_dur.
        let ack_dur = frame_duration_us(10, 60);
        let overhead_us = frame_duration_us(0, 60) + ack_dur;
        let mut m = Minstrel {
            rates: vec![RateStats::default(); n],
            duration_ns: (0..n).map(|r| duration_ns(phy, r)).collect(),
            supported: (0..n).map(|r| phy.valid(r)).collect(),
            overhead_us,
            overhead_rtscts_us: overhead_us + 2 * ack_dur,
            max_tp: [0; MAX_THR_RATES],
            max_prob: 0,
            sample_table,
            column: 0,
            index: 0,
            // has_mrr: sample_count 16, sample_wait 0; sample_tries 4 (minstrel_ht_update_caps).
            sample_wait: 0,
            sample_tries: 4,
            sample_count: 16,
            sample_slow: 0,
            last_update: 0,
        };
        m.update_stats(0);
        m.sample_count = 16;
        m
    }

    /// The rate the chain starts with outside sampling (`max_tp_rate[0]`).
    pub fn best(&self) -> usize {
        self.max_tp[0]
    }

    pub fn max_prob(&self) -> usize {
        self.max_prob
    }

    /// A rate's averaged success probability.
    pub fn prob(&self, mcs: usize) -> f64 {
        self.rates[mcs].prob
    }

    /// `minstrel_ht_get_tp_avg` with A-MPDU length 1, in frames per second.
    fn tp(&self, r: usize) -> f64 {
        let prob = self.rates[r].prob;
        if prob < 0.1 {
            return 0.0;
        }
        prob.min(0.9) / ((self.overhead_us * 1000 + self.duration_ns[r]) as f64 / 1e9)
    }

    /// `minstrel_ht_sort_best_tp_rates`: inserts `r` into the sorted `list`.
    fn sort_best_tp(&self, r: usize, list: &mut [usize; MAX_THR_RATES]) {
        let (cur_tp, cur_prob) = (self.tp(r), self.rates[r].prob);
        let mut j = MAX_THR_RATES;
        while j > 0 {
            let t = list[j - 1];
            let (tp, prob) = (self.tp(t), self.rates[t].prob);
            if cur_tp < tp || (cur_tp == tp && cur_prob <= prob) {
                break;
            }
            j -= 1;
        }
        if j < MAX_THR_RATES {
            list.copy_within(j..MAX_THR_RATES - 1, j + 1);
            list[j] = r;
        }
    }

    /// `minstrel_ht_set_best_prob_rate` for one group.
    fn set_best_prob(&mut self, r: usize) {
        let best = self.max_prob;
        if self.rates[r].prob > 0.75 {
            if self.tp(r) > self.tp(best) {
                self.max_prob = r;
            }
        } else if self.rates[r].prob > self.rates[best].prob {
            self.max_prob = r;
        }
    }

    /// `minstrel_ht_update_stats` (with `minstrel_calc_rate_stats` per rate).
    fn update_stats(&mut self, now: Nanos) {
        self.sample_slow = 0;
        for s in &mut self.rates {
            if s.attempts > 0 {
                s.sample_skipped = 0;
                let cur = f64::from(s.success) / f64::from(s.attempts);
                s.prob = if s.att_hist == 0 {
                    cur
                } else {
                    s.prob + (1.0 - EWMA_OLD) * (cur - s.prob)
                };
                s.att_hist += u64::from(s.attempts);
            } else {
                s.sample_skipped += 1;
            }
            s.attempts = 0;
            s.success = 0;
            s.retry = None;
        }
        let mut tp_list = [0; MAX_THR_RATES];
        for r in 0..self.rates.len() {
            if !self.supported[r] || self.tp(r) == 0.0 {
                continue;
            }
            self.sort_best_tp(r, &mut tp_list);
            self.set_best_prob(r);
        }
        self.max_tp = tp_list;
        // One group: "sample_count *= 8" per supported group.
        self.sample_count = 8;
        self.last_update = now;
    }

    /// `minstrel_calc_retransmit`: (retry_count, retry_count_rtscts) of rate `r`.
    fn retries(&mut self, r: usize) -> (u8, u8) {
        if let Some(rc) = self.rates[r].retry {
            return rc;
        }
        let rc = if self.rates[r].prob < 0.1 {
            (1, 1)
        } else {
            let (mut count, mut count_rts) = (2u32, 2u32);
            let data_us = self.duration_ns[r] / 1000;
            let mut cw = CW_MIN;
            let mut ctime = (T_SLOT_US * cw) >> 1;
            cw = ((cw << 1) | 1).min(CW_MAX);
            ctime += (T_SLOT_US * cw) >> 1;
            cw = ((cw << 1) | 1).min(CW_MAX);
            let mut tx = ctime + 2 * (self.overhead_us + data_us);
            let mut tx_rts = ctime + 2 * (self.overhead_rtscts_us + data_us);
            loop {
                let ctime = (T_SLOT_US * cw) >> 1;
                cw = ((cw << 1) | 1).min(CW_MAX);
                tx += ctime + self.overhead_us + data_us;
                tx_rts += ctime + self.overhead_rtscts_us + data_us;
                if tx_rts < SEGMENT_US {
                    count_rts += 1;
                }
                if tx >= SEGMENT_US {
                    break;
                }
                count += 1;
                if count >= MAX_RETRY {
                    break;
                }
            }
            (count as u8, count_rts as u8)
        };
        self.rates[r].retry = Some(rc);
        rc
    }

    /// `minstrel_ht_set_rate`'s count for chain slot `offset` (fallback slots take
    /// `count_rts`).
    fn slot(&mut self, r: usize, offset: usize) -> (usize, u8) {
        let (count, count_rts) = self.retries(r);
        let count = if self.rates[r].prob < 0.2 {
            2
        } else if offset > 0 {
            count_rts
        } else {
            count
        };
        (r, count)
    }

    /// `minstrel_get_sample_rate`.
    fn sample_rate(&mut self) -> Option<usize> {
        if self.sample_wait > 0 {
            self.sample_wait -= 1;
            return None;
        }
        if self.sample_tries == 0 {
            return None;
        }
        let r = self.sample_table[self.column][self.index];
        self.index += 1;
        if self.index >= self.rates.len() {
            self.index = 0;
            self.column = (self.column + 1) % SAMPLE_COLUMNS;
        }
        if !self.supported[r] || r == self.max_tp[0] || r == self.max_prob {
            return None;
        }
        let dur = |x: usize| self.duration_ns[x];
        let (tp1, tp2) = if dur(self.max_tp[0]) > dur(self.max_tp[1]) {
            (self.max_tp[1], self.max_tp[0])
        } else {
            (self.max_tp[0], self.max_tp[1])
        };
        let sample_dur = dur(r);
        let s = &self.rates[r];
        if s.prob > 0.95 || dur(self.max_prob) * 3 < sample_dur {
            return None;
        }
        if sample_dur >= dur(tp1) && s.attempts > 0 {
            return None;
        }
        // One stream: "cur_max_tp_streams - 1 < streams" always holds.
        if sample_dur >= dur(tp2) {
            if s.sample_skipped < 20 {
                return None;
            }
            let slow = self.sample_slow;
            self.sample_slow += 1;
            if slow > 2 {
                return None;
            }
        }
        self.sample_tries -= 1;
        Some(r)
    }

    /// `minstrel_ht_get_rate` and the rate table (`minstrel_ht_update_rates`): the chain of a
    /// frame taken for transmission.
    /// A fresh controller for a new association at `now` (mac80211 makes a new station entry:
    /// `rate_control_rate_init`), from `initial`, the state the controller was built with.
    pub fn restarted(initial: &Minstrel, now: Nanos) -> Minstrel {
        let mut m = initial.clone();
        m.last_update = now;
        m
    }

    pub fn chain(&mut self) -> Chain {
        let sample = self.sample_rate();
        let mut chain = Vec::with_capacity(3);
        match sample {
            Some(r) => {
                chain.push((r, 1));
                chain.push(self.slot(self.max_tp[1], 1));
            }
            None => {
                chain.push(self.slot(self.max_tp[0], 0));
                chain.push(self.slot(self.max_tp[1], 1));
            }
        }
        chain.push(self.slot(self.max_prob, 2));
        chain
    }

    /// `minstrel_ht_tx_status`: a frame sent `attempts` times along `chain`, acknowledged or
    /// not, finished at `now`.
    pub fn tx_status(&mut self, now: Nanos, chain: &Chain, attempts: u32, acked: bool) {
        if self.sample_wait == 0 && self.sample_tries == 0 && self.sample_count > 0 {
            // 16 + 2 · avg_ampdu_len, the A-MPDU length being 1.
            self.sample_wait = 16 + 2;
            self.sample_tries = 1;
            self.sample_count -= 1;
        }
        let mut left = attempts;
        for &(r, count) in chain {
            if left == 0 {
                break;
            }
            let used = left.min(u32::from(count));
            left -= used;
            self.rates[r].attempts += used;
            if left == 0 && acked {
                self.rates[r].success += 1;
            }
        }
        if now > self.last_update + UPDATE_INTERVAL_NS {
            self.update_stats(now);
        }
    }
}

/// The rate of a chain's attempt `k` (0-based), `None` when the chain is exhausted.
pub fn chain_rate(chain: &Chain, k: u32) -> Option<usize> {
    let mut k = k;
    for &(r, count) in chain {
        if k < u32::from(count) {
            return Some(r);
        }
        k -= u32::from(count);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac80211_frame_durations_and_overheads() {
        // 0 B at 6 Mbit/s: 36 + 4 · ⌈540 / 240⌉ = 48 µs; 10 B: 36 + 4 · ⌈1340 / 240⌉ = 60 µs.
        assert_eq!(frame_duration_us(0, 60), 48);
        assert_eq!(frame_duration_us(10, 60), 60);
        let m = Minstrel::new(&mut Stream::new(1, "t"), &Phy::A);
        assert_eq!((m.overhead_us, m.overhead_rtscts_us), (108, 228));
    }

    #[test]
    fn retry_counts_fill_the_6000_us_segment() {
        let mut m = Minstrel::new(&mut Stream::new(1, "t"), &Phy::A);
        // 54 Mbit/s, prob 1: 1200 B in 712 / 16 symbols of 4 µs → 178 µs; contention of the
        // first two tries (9·15 >> 1) + (9·31 >> 1) = 206 µs; tx = 206 + 2 · (108 + 178) = 778,
        // then + 283 + 286 = 1347, + 571 + 286 = 2204, + 1147 + 286 = 3637, + 2299 + 286 =
        // 6222 ≥ 6000: 5 tries. With RTS overhead 228: 1018, 1707, 2684, 4237 (< 6000), 6942:
        // 5. 6 Mbit/s (1600 µs): 206 + 3416 = 3622, + 283 + 1708 = 5613 < 6000, + 571 + 1708
        // ≥ 6000: 3.
        assert_eq!(m.duration_ns[7], 178_000);
        m.rates[7].prob = 1.0;
        assert_eq!(m.retries(7), (5, 5));
        m.rates[1].prob = 1.0;
        m.rates[0].prob = 1.0;
        assert_eq!(m.retries(0), (3, 3));
        m.rates[0].retry = None;
        m.rates[0].prob = 0.05;
        assert_eq!(m.retries(0), (1, 1));
    }

    #[test]
    fn the_chain_is_walked_slot_by_slot() {
        let chain = vec![(7, 2), (6, 1), (0, 3)];
        let rates: Vec<Option<usize>> = (0..7).map(|k| chain_rate(&chain, k)).collect();
        assert_eq!(
            rates,
            vec![Some(7), Some(7), Some(6), Some(0), Some(0), Some(0), None]
        );
    }
}
