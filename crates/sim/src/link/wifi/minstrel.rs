//! Minstrel-HT rate control (`mcs = "minstrel"`), ported from Linux 5.10's
//! net/mac80211/rc80211_minstrel_ht.c and rc80211_minstrel.{c,h} (Felix Fietkau), for one
//! transmitter's frames to one peer. The peer's rates are one group (the 802.11a rates; Linux
//! ≥ 5.11 puts them in minstrel_ht's OFDM group).
//!
//! - Every transmission reports its attempts per rate (`minstrel_ht_tx_status`): a frame sent
//!   alone is a status of length 1 (acknowledged or not); an A-MPDU is one status for the
//!   whole aggregate, `ampdu_len` subframes sent and `ampdu_ack_len` acknowledged in the Block
//!   Ack, so each rate of its chain counts `count × ampdu_len` attempts and the last one the
//!   `ampdu_ack_len` successes. Every `update_interval / 2` = 50 ms (`mp->update_interval =
//!   HZ / 10`, halved in `minstrel_ht_tx_status`) each rate's success probability is averaged
//!   by an EWMA with weight EWMA_LEVEL / EWMA_DIV = 96/128 on the old value
//!   (`minstrel_calc_rate_stats`, `minstrel_ewma`), and so is the mean A-MPDU length of the
//!   interval's statuses (`avg_ampdu_len`, 1 at the start: `minstrel_ht_update_caps`; taken
//!   truncated to an integer, `minstrel_ht_avg_ampdu_len`).
//! - A rate's throughput is min(prob, 90 %) / (overhead / A-MPDU length + its duration), 0 below
//!   10 % (`minstrel_ht_get_tp_avg`); the rate table is the best and second-best throughput
//!   rates and the max-probability rate (the highest-throughput rate above 75 %, else the most
//!   reliable; `minstrel_ht_set_best_prob_rate`), each with a retry count from the 6000 µs
//!   segment (`minstrel_calc_retransmit`: an attempt carries an A-MPDU of the mean length), 2
//!   below 20 % (`minstrel_ht_set_rate`).
//! - Sampling: after each sample, 16 + 2 · (mean A-MPDU length) frames wait
//!   (`sample_wait`), 8 samples per stats interval per group (`sample_count`); the sample rate
//!   comes from a random permutation table of 10 columns (`init_sample_table`), skipping the
//!   current best rates, rates above 95 %, rates 3× slower than the max-probability rate,
//!   already sampled slow rates, and slow rates sampled less than 20 intervals ago (at most 2
//!   slow samples per interval) (`minstrel_get_sample_rate`). A sample frame's chain is the
//!   sample rate once, then the table's second and third rates (mac80211 fills slots after the
//!   probe from the station's rate table).
//! - With A-MPDU the cell asks for a sample decision per MPDU it takes from a queue
//!   ([`Minstrel::sample_rate`], mac80211's per-frame `minstrel_ht_get_rate`) and for the rate
//!   chain per aggregate ([`Minstrel::table`]): the chain of a sample frame's probe rate
//!   (ath9k's `ath_tx_form_aggr` never puts a probe frame after the first subframe, so it
//!   heads its own aggregate) or the current rate table (ath9k's `ath_set_rates` per aggregate).
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

/// A frame's multi-rate retry chain: (MCS, transmissions) per slot, in order (the first
/// throughput rate or a sample, the second throughput rate, the max-probability rate: three
/// slots, `minstrel_ht_update_rates` with `max_rates >= 3`).
pub type Chain = [(usize, u8); 3];

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
    /// `mi->avg_ampdu_len` (in subframes; Linux keeps it in MINSTREL_FRAC fixed point), and
    /// this interval's statuses and subframes (`ampdu_packets`, `ampdu_len`).
    avg_ampdu_len: f64,
    ampdu_packets: u32,
    ampdu_len: u64,
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
            // MINSTREL_FRAC(1, 1) (minstrel_ht_update_caps).
            avg_ampdu_len: 1.0,
            ampdu_packets: 0,
            ampdu_len: 0,
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

    /// `minstrel_ht_avg_ampdu_len`: the mean A-MPDU length truncated to an integer
    /// (MINSTREL_TRUNC). Every status has at least one subframe and the mean starts at 1, so it
    /// is at least 1 (Linux's AVG_AMPDU_SIZE fallback for 0 is never needed).
    pub fn avg_ampdu_len(&self) -> u64 {
        (self.avg_ampdu_len.floor() as u64).max(1)
    }

    /// `minstrel_ht_get_tp_avg`, in frames per second: the per-access overhead is shared by
    /// the mean A-MPDU's subframes.
    fn tp(&self, r: usize) -> f64 {
        let prob = self.rates[r].prob;
        if prob < 0.1 {
            return 0.0;
        }
        let nsecs = self.overhead_us * 1000 / self.avg_ampdu_len() + self.duration_ns[r];
        prob.min(0.9) / (nsecs as f64 / 1e9)
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
        if self.ampdu_packets > 0 {
            let mean = self.ampdu_len as f64 / f64::from(self.ampdu_packets);
            self.avg_ampdu_len += (1.0 - EWMA_OLD) * (mean - self.avg_ampdu_len);
            self.ampdu_packets = 0;
            self.ampdu_len = 0;
        }
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
            // tx_time_data: one attempt carries an A-MPDU of the mean length.
            let data_us = self.duration_ns[r] * self.avg_ampdu_len() / 1000;
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

    /// `minstrel_get_sample_rate`, called once per frame (`minstrel_ht_get_rate`): the rate
    /// this frame samples, if it is a sample frame.
    pub fn sample_rate(&mut self) -> Option<usize> {
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

    /// A fresh controller for a new association at `now` (mac80211 makes a new station entry:
    /// `rate_control_rate_init`), from `initial`, the state the controller was built with.
    pub fn restarted(initial: &Minstrel, now: Nanos) -> Minstrel {
        let mut m = initial.clone();
        m.last_update = now;
        m
    }

    /// `minstrel_ht_get_rate` and the rate table (`minstrel_ht_update_rates`): the chain of a
    /// frame taken for transmission.
    pub fn chain(&mut self) -> Chain {
        let sample = self.sample_rate();
        self.table(sample)
    }

    /// The chain of a transmission: a sample rate once then the table's second and third
    /// rates, or the rate table (`max_tp_rate[0]`, `max_tp_rate[1]`, `max_prob_rate`).
    pub fn table(&mut self, sample: Option<usize>) -> Chain {
        let first = match sample {
            Some(r) => (r, 1),
            None => self.slot(self.max_tp[0], 0),
        };
        [
            first,
            self.slot(self.max_tp[1], 1),
            self.slot(self.max_prob, 2),
        ]
    }

    /// `minstrel_ht_tx_status` for a frame sent alone: `attempts` transmissions along `chain`,
    /// acknowledged or not, finished at `now` (a status of one subframe).
    pub fn tx_status(&mut self, now: Nanos, chain: &Chain, attempts: u32, acked: bool) {
        self.ampdu_status(now, chain, attempts, 1, u32::from(acked));
    }

    /// `minstrel_ht_tx_status` for one A-MPDU (IEEE80211_TX_STAT_AMPDU): sent `attempts` times
    /// along `chain`, `ampdu_len` subframes in it, `ampdu_ack_len` of them acknowledged by the
    /// Block Ack of its last attempt; finished at `now`.
    pub fn ampdu_status(
        &mut self,
        now: Nanos,
        chain: &Chain,
        attempts: u32,
        ampdu_len: u32,
        ampdu_ack_len: u32,
    ) {
        self.ampdu_packets += 1;
        self.ampdu_len += u64::from(ampdu_len);
        if self.sample_wait == 0 && self.sample_tries == 0 && self.sample_count > 0 {
            self.sample_wait = 16 + 2 * self.avg_ampdu_len() as u32;
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
            self.rates[r].attempts += used * ampdu_len;
            if left == 0 {
                self.rates[r].success += ampdu_ack_len;
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
        let chain = [(7, 2), (6, 1), (0, 3)];
        let rates: Vec<Option<usize>> = (0..7).map(|k| chain_rate(&chain, k)).collect();
        assert_eq!(
            rates,
            vec![Some(7), Some(7), Some(6), Some(0), Some(0), Some(0), None]
        );
    }

    /// 802.11n, 20 MHz, long GI, one stream (HT MCS 0-7).
    const HT20: Phy = Phy {
        standard: super::super::phy::Standard::N,
        width_mhz: 20,
        short_gi: false,
        streams: 1,
    };

    #[test]
    fn an_ampdu_status_counts_subframes_sent_and_block_acked() {
        let mut m = Minstrel::new(&mut Stream::new(1, "t"), &HT20);
        // An A-MPDU of 20 subframes sent twice at MCS 7 (no Block Ack), then once at MCS 6,
        // whose Block Ack acknowledged 15: MCS 7 counts 2 · 20 attempts and no success, MCS 6
        // 20 attempts and 15 successes (rates[i].count × ampdu_len; ampdu_ack_len on the last).
        m.ampdu_status(0, &[(7, 2), (6, 2), (0, 2)], 3, 20, 15);
        assert_eq!((m.rates[7].attempts, m.rates[7].success), (40, 0));
        assert_eq!((m.rates[6].attempts, m.rates[6].success), (20, 15));
        assert_eq!((m.rates[0].attempts, m.rates[0].success), (0, 0));
        m.update_stats(60_000_000);
        assert_eq!(m.prob(6), 0.75);
        assert_eq!(m.prob(7), 0.0);
        // avg_ampdu_len: 1 + (20 / 1 - 1) · 32/128 = 5.75, used truncated: 5.
        assert_eq!(m.avg_ampdu_len, 5.75);
        assert_eq!(m.avg_ampdu_len(), 5);
    }

    #[test]
    fn the_mean_ampdu_length_shares_the_overhead_and_lengthens_an_attempt() {
        let mut m = Minstrel::new(&mut Stream::new(1, "t"), &HT20);
        // HT MCS 7, 20 MHz: 16 · 1200 B in ⌈153600 / 260⌉ = 591 symbols of 4 µs, / 16 =
        // 147750 ns a packet. Throughput at prob ≥ 90 %: 0.9 / (108000 / len + 147750) ns.
        assert_eq!(m.duration_ns[7], 147_750);
        m.rates[7].prob = 1.0;
        let tp1 = 0.9 / ((108_000.0 + 147_750.0) * 1e-9);
        assert!((m.tp(7) / tp1 - 1.0).abs() < 1e-12, "{}", m.tp(7));
        m.avg_ampdu_len = 5.75;
        let tp5 = 0.9 / ((21_600.0 + 147_750.0) * 1e-9);
        assert!((m.tp(7) / tp5 - 1.0).abs() < 1e-12, "{}", m.tp(7));
        // minstrel_calc_retransmit with 5 subframes an attempt: data 147750 · 5 / 1000 = 738
        // µs; contention 67 + 139 = 206; tx = 206 + 2 · (108 + 738) = 1898, then + 283 + 846 =
        // 3027, + 571 + 846 = 4444, + 1147 + 846 = 6437 ≥ 6000: 4 tries. RTS/CTS overhead 228:
        // 2138, 3387, 4924 (< 6000), 7037: 4.
        assert_eq!(m.retries(7), (4, 4));
        // The sample wait after a sample: 16 + 2 · 5 frames.
        m.sample_wait = 0;
        m.sample_tries = 0;
        m.ampdu_status(0, &[(7, 4), (6, 4), (0, 4)], 1, 5, 5);
        assert_eq!(m.sample_wait, 26);
    }

    #[test]
    fn a_frame_alone_is_a_status_of_one_subframe() {
        let mut m = Minstrel::new(&mut Stream::new(1, "t"), &Phy::A);
        m.tx_status(0, &[(7, 2), (6, 1), (0, 3)], 3, true);
        assert_eq!((m.rates[7].attempts, m.rates[6].attempts), (2, 1));
        assert_eq!((m.rates[6].success, m.rates[7].success), (1, 0));
        m.update_stats(60_000_000);
        assert_eq!(m.avg_ampdu_len, 1.0);
    }
}
