//! TCP Illinois, as Linux 6.x `net/ipv4/tcp_illinois.c` (S. Liu, T. Başar, R. Srikant,
//! "TCP-Illinois: A Loss and Delay-Based Congestion Control Algorithm for High-Speed Networks",
//! VALUETOOLS 2006 / Performance Evaluation 2008; the kernel's is "implemented from description
//! in paper and ns-2 simulation").
//!
//! # The algorithm
//!
//! Illinois is AIMD with both factors set from the queueing delay: loss says *whether* to back
//! off, delay says *how hard* to push and back off. Per RTT sample (µs) it keeps `base_rtt` (min
//! ever) and `max_rtt` (max ever), and over each round the sum and count of samples. Once per
//! round (the cumulative ACK passes the `snd_nxt` at the round's start, `end_seq`):
//!
//! ```text
//!   dm = max_rtt − base_rtt          maximum queueing delay (µs)
//!   da = avg_rtt − base_rtt          this round's average queueing delay
//! ```
//!
//! **α (additive increase, packets per RTT, in 1/128).** With `d1 = dm/100`: if `da ≤ d1` α is
//! `ALPHA_MAX` = 10 (but once the delay has been above d1, only after `theta` = 5 consecutive
//! such rounds; until then α stays where it was); otherwise α falls along
//!
//! ```text
//!   α = (dm − d1)·ALPHA_MAX / ((dm − d1) + (da − d1)·(ALPHA_MAX − ALPHA_MIN)/ALPHA_MIN)
//! ```
//!
//! from α_max at `da = d1` to α_min = 0.3 at `da = dm`.
//!
//! **β (multiplicative decrease, in 1/64).** With `d2 = dm/10`, `d3 = 8·dm/10`: `β = BETA_MIN` =
//! 1/8 if `da ≤ d2`, `BETA_MAX` = 1/2 if `da ≥ d3`, linear in between:
//! `β = (BETA_MIN·d3 − BETA_MAX·d2 + (BETA_MAX − BETA_MIN)·da) / (d3 − d2)`.
//!
//! Below `win_thresh` (15 packets) α = 1 and β = 1/2: Reno. In congestion avoidance cwnd grows
//! by α/cwnd per packet acked (`snd_cwnd_cnt·α >> 7 ≥ cwnd` → `cwnd += that / cwnd`); a loss
//! sets ssthresh = `max(cwnd − cwnd·β, 2)`. An RTO (`TCP_CA_Loss`) resets α = 1, β = 1/2.
//! Slow start is Reno's; growth only when cwnd-limited (`tcp_is_cwnd_limited`).
//!
//! # Constants (tcp_illinois.c)
//!
//! | name | value | |
//! |---|---|---|
//! | `ALPHA_SHIFT` | 7 | α in 1/128 |
//! | `ALPHA_MIN` | 3·128/10 = 38 | ≈ 0.3 (0.297) |
//! | `ALPHA_MAX` | 10·128 = 1280 | 10.0 |
//! | `ALPHA_BASE` | 128 | 1.0 |
//! | `RTT_MAX` | U32_MAX / ALPHA_MAX = 3355443 µs | RTT samples are capped here (3.3 s) |
//! | `BETA_SHIFT` | 6 | β in 1/64 |
//! | `BETA_MIN` | 64/8 = 8 | 0.125 |
//! | `BETA_MAX` | 64/2 = 32 | 0.5 |
//! | `BETA_BASE` | `BETA_MAX` | |
//!
//! Module parameters (`cc_params`): `win_thresh` (15 packets), `theta` (5 rounds).
//!
//! # Hooks
//!
//! | tcp_congestion_ops | here |
//! |---|---|
//! | `init` | `tcp_illinois_init`: α = α_max, β = 1/2, base_rtt = 0x7fffffff |
//! | `ssthresh` | `tcp_illinois_ssthresh` |
//! | `cong_avoid` | `tcp_illinois_cong_avoid` |
//! | `set_state` | `tcp_illinois_state`: reset on Loss |
//! | `pkts_acked` | `tcp_illinois_acked` |
//! | `undo_cwnd` | `tcp_reno_undo_cwnd` (the trait's default) |
//! | `get_info` | telemetry `illinois_alpha`, `illinois_beta` (as fractions), `illinois_avg_delay_ms` (this round's da so far) |
//!
//! # Where this differs from tcp_illinois.c
//!
//! - Sequence numbers count segments (u64), so `after(ack, end_seq)` is `snd_una > end_seq`.
//! - `win_thresh` and `theta` are the kernel's `int`s; here they are validated as 0..=2^20
//!   (a negative value would compare as a huge u32 in `cwnd < win_thresh`). The counters keep
//!   the kernel's widths: `cnt_rtt` and `acked` u16, `rtt_low` u8 (so a `theta` above 255 never
//!   lets α return to α_max, as in the kernel).
//! - Nothing else: the u32 arithmetic of α and β, the RTT_MAX cap, and `max_rtt` never aging
//!   (the kernel's "TODO: age max_rtt?") are the kernel's.

use super::{params, reject_unknown, CcConfig, CongestionControl, ParamError};
use crate::state::{AckSample, CaState, TcpState};

/// tcp_illinois.c: ALPHA_SHIFT, α in units of 1/128.
const ALPHA_SHIFT: u32 = 7;
/// tcp_illinois.c: ALPHA_SCALE = 1 << ALPHA_SHIFT.
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// tcp_illinois.c: ALPHA_MIN = 3·ALPHA_SCALE/10 (≈ 0.3).
pub(crate) const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// tcp_illinois.c: ALPHA_MAX = 10·ALPHA_SCALE (10.0).
pub(crate) const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// tcp_illinois.c: ALPHA_BASE = ALPHA_SCALE (1.0).
pub(crate) const ALPHA_BASE: u32 = ALPHA_SCALE;
/// tcp_illinois.c: RTT_MAX = U32_MAX / ALPHA_MAX (µs, 3.3 s), so α's products never wrap.
const RTT_MAX_US: u32 = u32::MAX / ALPHA_MAX;
/// tcp_illinois.c: BETA_SHIFT, β in units of 1/64.
const BETA_SHIFT: u32 = 6;
/// tcp_illinois.c: BETA_SCALE = 1 << BETA_SHIFT.
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// tcp_illinois.c: BETA_MIN = BETA_SCALE/8 (0.125).
pub(crate) const BETA_MIN: u32 = BETA_SCALE / 8;
/// tcp_illinois.c: BETA_MAX = BETA_SCALE/2 (0.5).
pub(crate) const BETA_MAX: u32 = BETA_SCALE / 2;
/// tcp_illinois.c: BETA_BASE = BETA_MAX.
pub(crate) const BETA_BASE: u32 = BETA_MAX;
/// tcp_illinois_init: base_rtt starts at 0x7fffffff µs.
const ILLINOIS_BASE_RTT_INIT_US: u32 = 0x7fff_ffff;
/// tcp_illinois_ssthresh: never below 2 packets.
const ILLINOIS_MIN_SSTHRESH: u32 = 2;

const PARAM_KEYS: &[&str] = &["win_thresh", "theta"];

const ILLINOIS_TELEMETRY: &[&str] = &["illinois_alpha", "illinois_beta", "illinois_avg_delay_ms"];

/// The module parameters of tcp_illinois.c.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IllinoisParams {
    /// tcp_illinois.c: win_thresh = 15 ("Window threshold for starting adaptive sizing").
    pub win_thresh: u32,
    /// tcp_illinois.c: theta = 5 ("# of fast RTT's before full growth").
    pub theta: u32,
}

impl Default for IllinoisParams {
    fn default() -> Self {
        IllinoisParams {
            win_thresh: 15,
            theta: 5,
        }
    }
}

impl IllinoisParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = IllinoisParams::default();
        Ok(IllinoisParams {
            win_thresh: params::integer(t, "win_thresh", d.win_thresh, 0, 1 << 20, "packets")?,
            theta: params::integer(t, "theta", d.theta, 0, 1 << 20, "rounds")?,
        })
    }
}

pub struct Illinois {
    p: IllinoisParams,
    /// Sum of this round's RTT samples, µs.
    sum_rtt: u64,
    /// This round's RTT samples (u16).
    cnt_rtt: u16,
    /// Min RTT ever, µs.
    base_rtt: u32,
    /// Max RTT ever, µs.
    max_rtt: u32,
    /// The round ends when the cumulative ACK passes this sequence (segments).
    end_seq: u64,
    /// Additive increase, 1/128 packets per RTT.
    alpha: u32,
    /// Multiplicative decrease, 1/64.
    beta: u32,
    /// Packets acked by the current ACK (u16).
    acked: u16,
    /// The average delay has been above d1 since α was last at α_max.
    rtt_above: bool,
    /// Consecutive low-delay rounds (u8).
    rtt_low: u8,
}

impl Illinois {
    pub fn new(p: IllinoisParams) -> Self {
        Illinois {
            p,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: ILLINOIS_BASE_RTT_INIT_US,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
        }
    }

    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        Ok(Box::new(Illinois::new(IllinoisParams::from_table(
            config.params,
        )?)))
    }

    /// rtt_reset: a new round from snd_nxt.
    fn rtt_reset(&mut self, tp: &TcpState) {
        self.end_seq = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// max_delay.
    fn max_delay(&self) -> u32 {
        self.max_rtt.wrapping_sub(self.base_rtt)
    }

    /// avg_delay (the caller ensures cnt_rtt > 0).
    fn avg_delay(&self) -> u32 {
        ((self.sum_rtt / self.cnt_rtt as u64) as u32).wrapping_sub(self.base_rtt)
    }

    /// alpha(): α for average delay `da` and maximum delay `dm` (µs).
    pub(crate) fn alpha(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100; // low threshold
        if da <= d1 {
            // Never left the low-delay zone: α_max.
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Wait for theta good rounds before going back to α_max.
            self.rtt_low = self.rtt_low.wrapping_add(1);
            if (self.rtt_low as u32) < self.p.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        let dm = dm - d1;
        let da = da - d1;
        dm.wrapping_mul(ALPHA_MAX)
            / dm.wrapping_add(da.wrapping_mul(ALPHA_MAX - ALPHA_MIN) / ALPHA_MIN)
    }

    /// update_params: α and β once per round.
    fn update_params(&mut self, tp: &TcpState) {
        if tp.snd_cwnd < self.p.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_delay();
            let da = self.avg_delay();
            self.alpha = self.alpha(da, dm);
            self.beta = beta(da, dm);
        }
        self.rtt_reset(tp);
    }
}

/// beta(): β for average delay `da` and maximum delay `dm` (µs), in 1/64.
pub(crate) fn beta(da: u32, dm: u32) -> u32 {
    let d2 = dm / 10;
    if da <= d2 {
        return BETA_MIN;
    }
    let d3 = 8u32.wrapping_mul(dm) / 10;
    if da >= d3 || d3 <= d2 {
        return BETA_MAX;
    }
    (BETA_MIN.wrapping_mul(d3))
        .wrapping_sub(BETA_MAX.wrapping_mul(d2))
        .wrapping_add((BETA_MAX - BETA_MIN).wrapping_mul(da))
        / (d3 - d2)
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    /// tcp_illinois_init.
    fn init(&mut self, tp: &mut TcpState) {
        *self = Illinois::new(self.p);
        self.rtt_reset(tp);
    }

    /// tcp_illinois_ssthresh: cwnd − cwnd·β.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cwnd = tp.snd_cwnd;
        (cwnd.wrapping_sub(cwnd.wrapping_mul(self.beta) >> BETA_SHIFT)).max(ILLINOIS_MIN_SSTHRESH)
    }

    /// tcp_illinois_cong_avoid.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if tp.snd_una > self.end_seq {
            self.update_params(tp);
        }
        // RFC 2861: only increase cwnd if fully utilised.
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            tp.slow_start(acked);
        } else {
            // snd_cwnd_cnt counts packets since the last increment.
            tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.wrapping_add(self.acked as u32);
            self.acked = 1;
            // ≈ cwnd += α/cwnd per packet.
            let delta = tp.snd_cwnd_cnt.wrapping_mul(self.alpha) >> ALPHA_SHIFT;
            if delta >= tp.snd_cwnd {
                tp.snd_cwnd = (tp.snd_cwnd + delta / tp.snd_cwnd).min(tp.snd_cwnd_clamp);
                tp.snd_cwnd_cnt = 0;
            }
        }
    }

    /// tcp_illinois_state: an RTO resets α, β and the delay history of the round.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tp);
        }
    }

    /// tcp_illinois_acked.
    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        self.acked = sample.pkts_acked as u16;
        if sample.rtt_us < 0 {
            return; // dupack, no RTT sample
        }
        // Ignore bogus values: prevents wrap-around in the α arithmetic.
        let rtt = sample.rtt_us.min(RTT_MAX_US as i64) as u32;
        if self.base_rtt > rtt {
            self.base_rtt = rtt;
        }
        if self.max_rtt < rtt {
            self.max_rtt = rtt;
        }
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
        self.sum_rtt += rtt as u64;
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        ILLINOIS_TELEMETRY
    }

    /// α and β as fractions, and this round's average queueing delay so far (NaN before a
    /// sample), as tcp_illinois_info reports its average RTT.
    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = self.alpha as f64 / ALPHA_SCALE as f64;
        out[1] = self.beta as f64 / BETA_SCALE as f64;
        out[2] = if self.cnt_rtt > 0 {
            self.avg_delay() as f64 / 1000.0
        } else {
            f64::NAN
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn illinois() -> Illinois {
        Illinois::new(IllinoisParams::default())
    }

    fn sample(rtt_us: i64, pkts_acked: u32) -> AckSample {
        AckSample {
            pkts_acked,
            rtt_us,
            in_flight: 0,
        }
    }

    #[test]
    fn constants_are_the_kernels() {
        assert_eq!((ALPHA_MIN, ALPHA_MAX, ALPHA_BASE), (38, 1280, 128));
        assert_eq!((BETA_MIN, BETA_MAX, BETA_BASE), (8, 32, 32));
        assert_eq!(RTT_MAX_US, 4_294_967_295 / 1280);
    }

    #[test]
    fn alpha_is_max_at_low_delay_and_min_at_the_maximum_delay() {
        let mut c = illinois();
        // dm = 100 ms: d1 = 1 ms. da = 0.5 ms ≤ d1, never above: α_max.
        assert_eq!(c.alpha(500, 100_000), ALPHA_MAX);
        // da = dm: α = (dm−d1)·1280 / ((dm−d1) + (dm−d1)·(1280−38)/38)
        //         = 99000·1280 / (99000 + 99000·1242/38) = 126720000 / (99000 + 3235736) = 38.
        assert_eq!(
            c.alpha(100_000, 100_000),
            99_000 * 1280 / (99_000 + 99_000 * 1242 / 38)
        );
        assert_eq!(c.alpha(100_000, 100_000), ALPHA_MIN);
        assert!(c.rtt_above);
        // da = 10 ms: 99000·1280 / (99000 + 9000·1242/38) = 126720000 / 393157 = 322 (≈ 2.5).
        assert_eq!(
            c.alpha(10_000, 100_000),
            99_000 * 1280 / (99_000 + 9_000 * 1242 / 38)
        );
        assert_eq!(c.alpha(10_000, 100_000), 322);
    }

    #[test]
    fn alpha_returns_to_max_only_after_theta_low_delay_rounds() {
        let mut c = illinois();
        c.alpha = c.alpha(50_000, 100_000); // above d1
        let held = c.alpha;
        for round in 1..5 {
            assert_eq!(c.alpha(0, 100_000), held, "low round {round} of theta = 5");
        }
        assert_eq!(c.alpha(0, 100_000), ALPHA_MAX, "the 5th low round");
        assert!(!c.rtt_above);
        assert_eq!(c.rtt_low, 0);
    }

    #[test]
    fn beta_follows_its_curve() {
        // dm = 100 ms: d2 = 10 ms, d3 = 80 ms.
        assert_eq!(beta(10_000, 100_000), BETA_MIN); // da ≤ d2: 1/8
        assert_eq!(beta(80_000, 100_000), BETA_MAX); // da ≥ d3: 1/2
                                                     // da = 45 ms: (8·80000 − 32·10000 + 24·45000) / 70000 = (640000 − 320000 + 1080000)/70000 = 20.
        assert_eq!(
            beta(45_000, 100_000),
            (8 * 80_000 - 32 * 10_000 + 24 * 45_000) / 70_000
        );
        assert_eq!(beta(45_000, 100_000), 20); // 20/64 ≈ 0.31
                                               // da = 20 ms: (640000 − 320000 + 480000)/70000 = 11.
        assert_eq!(beta(20_000, 100_000), 11);
        // Degenerate dm (d3 ≤ d2): β_max once da > d2.
        assert_eq!(beta(1, 1), BETA_MAX);
    }

    #[test]
    fn ssthresh_is_cwnd_minus_beta_cwnd() {
        let mut c = illinois();
        let tp = TcpState {
            snd_cwnd: 100,
            ..Default::default()
        };
        assert_eq!(c.ssthresh(&tp), 100 - (100 * 32 >> 6)); // β = 1/2: 50
        c.beta = BETA_MIN;
        assert_eq!(c.ssthresh(&tp), 100 - (100 * 8 >> 6)); // β = 1/8: 100 − 12 = 88
        c.beta = 20;
        assert_eq!(c.ssthresh(&tp), 100 - (100 * 20 >> 6)); // 100 − 31 = 69
        let tp = TcpState {
            snd_cwnd: 3,
            ..Default::default()
        };
        c.beta = BETA_MAX;
        assert_eq!(c.ssthresh(&tp), 2);
    }

    #[test]
    fn once_per_round_alpha_and_beta_come_from_the_rounds_average_delay() {
        let mut c = illinois();
        let mut tp = TcpState {
            snd_cwnd: 100,
            snd_ssthresh: 50,
            snd_nxt: 200,
            is_cwnd_limited: true,
            ..Default::default()
        };
        c.init(&mut tp);
        assert_eq!(c.end_seq, 200);
        // base 100 ms, max 200 ms (dm = 100 ms); this round's samples average 145 ms (da = 45 ms).
        for rtt in [100_000, 200_000, 145_000, 135_000] {
            c.pkts_acked(&mut tp, &sample(rtt, 1));
        }
        c.sum_rtt = 0;
        c.cnt_rtt = 0;
        for rtt in [140_000, 150_000] {
            c.pkts_acked(&mut tp, &sample(rtt, 1));
        }
        tp.snd_una = 201;
        tp.snd_nxt = 300;
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.beta, 20);
        // α at da = 45 ms: 99000·1280 / (99000 + 44000·1242/38) = 126720000 / 1537105 = 82.
        assert_eq!(c.alpha, 99_000 * 1280 / (99_000 + 44_000 * 1242 / 38));
        assert_eq!(c.end_seq, 300);
        assert_eq!(c.cnt_rtt, 0);
    }

    #[test]
    fn small_windows_are_reno() {
        let mut c = illinois();
        let mut tp = TcpState {
            snd_cwnd: 14,
            snd_ssthresh: 10,
            snd_nxt: 10,
            is_cwnd_limited: true,
            ..Default::default()
        };
        c.init(&mut tp);
        c.pkts_acked(&mut tp, &sample(100_000, 1));
        tp.snd_una = 11;
        c.cong_avoid(&mut tp, 1);
        assert_eq!((c.alpha, c.beta), (ALPHA_BASE, BETA_BASE));
    }

    #[test]
    fn congestion_avoidance_adds_alpha_over_cwnd_per_packet() {
        let mut c = illinois();
        let mut tp = TcpState {
            snd_cwnd: 100,
            snd_ssthresh: 50,
            snd_nxt: 1000,
            is_cwnd_limited: true,
            ..Default::default()
        };
        c.init(&mut tp); // α = α_max = 10 packets per RTT
        c.acked = 1;
        // delta = cnt·1280 >> 7 = 10·cnt ≥ 100 first at cnt = 10: +delta/cwnd = +1.
        for _ in 0..9 {
            c.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 100);
        c.cong_avoid(&mut tp, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (101, 0));
        // An ACK of 25 packets (pkts_acked sets acked): delta = 25·10 = 250 ≥ 101: +250/101 = +2.
        c.pkts_acked(&mut tp, &sample(-1, 25));
        c.cong_avoid(&mut tp, 25);
        assert_eq!(tp.snd_cwnd, 103);
        // Not cwnd-limited: no growth.
        tp.is_cwnd_limited = false;
        tp.snd_cwnd_cnt = 1000;
        c.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 103);
    }

    #[test]
    fn an_rto_resets_alpha_and_beta_and_samples_are_capped() {
        let mut c = illinois();
        let mut tp = TcpState::default();
        c.init(&mut tp);
        c.alpha = 300;
        c.beta = 10;
        c.set_state(&mut tp, CaState::Recovery);
        assert_eq!((c.alpha, c.beta), (300, 10));
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!((c.alpha, c.beta), (ALPHA_BASE, BETA_BASE));
        c.pkts_acked(&mut tp, &sample(10_000_000, 1));
        assert_eq!(c.max_rtt, RTT_MAX_US);
    }

    #[test]
    fn parameters() {
        let t: toml::Table = "win_thresh = 30\ntheta = 3".parse().unwrap();
        assert_eq!(
            IllinoisParams::from_table(&t).unwrap(),
            IllinoisParams {
                win_thresh: 30,
                theta: 3
            }
        );
        let t: toml::Table = "alpha = 3".parse().unwrap();
        assert_eq!(IllinoisParams::from_table(&t).unwrap_err().key, "alpha");
        let t: toml::Table = "theta = \"5\"".parse().unwrap();
        assert_eq!(IllinoisParams::from_table(&t).unwrap_err().key, "theta");
    }
}
