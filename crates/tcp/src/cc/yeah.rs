//! YeAH-TCP ("Yet Another Highspeed TCP", Baiocchi, Castellani & Vacirca, PFLDnet 2007), as
//! Linux 6.18 `net/ipv4/tcp_yeah.c`.
//!
//! # The algorithm
//!
//! YeAH runs in one of two modes, chosen once per RTT from a Vegas-style estimate of its own
//! packets queued at the bottleneck:
//!
//! ```text
//!     Q = cwnd · (RTT_min_last_rtt − RTT_base) / RTT_min_last_rtt        (packets)
//! ```
//!
//! - **Fast mode** (`Q ≤ 80` packets, TCP_YEAH_ALPHA, and the queueing delay at most
//!   RTT_base/8, TCP_YEAH_PHY): grow like Scalable TCP, one packet per `min(cwnd, 100)`
//!   packets acked (TCP_SCALABLE_AI_CNT), i.e. about 1 % per RTT at large windows.
//! - **Slow mode** (otherwise): grow like Reno (one packet per cwnd acked), and, when `Q > 80`,
//!   *precautionary decongestion*: take `min(Q/γ, cwnd/2)` packets off cwnd (γ = 1,
//!   TCP_YEAH_GAMMA; cwnd/2^ε, ε = 1, TCP_YEAH_EPSILON) but not below `reno_count`, and set
//!   ssthresh to the result. `reno_count` estimates the window of competing Reno flows: it is
//!   set to cwnd/2 on the first slow-mode RTT, then grows by one per slow-mode RTT, and is reset
//!   to 2 after more than 50 (TCP_YEAH_ZETA) fast-mode RTTs. `doing_reno_now` counts consecutive
//!   slow-mode RTTs.
//!
//! On loss (its own **ssthresh**), YeAH removes only its queue when it has not been in slow mode
//! for long: fewer than 16 (TCP_YEAH_RHO) consecutive slow-mode RTTs mean it is not competing
//! with Reno flows, so the cut is `Q` clamped to `[cwnd/8, max(cwnd/2, 2)]` (cwnd/2^δ, δ = 3,
//! TCP_YEAH_DELTA); otherwise it halves like Reno. ssthresh = `max(cwnd − cut, 2)`.
//!
//! Slow start is Reno's; the mode test runs once per RTT from the first ACK past
//! `beg_snd_nxt`, and only when at least 3 RTT samples were taken in that RTT (fewer suggests
//! delayed ACKs only).
//!
//! # The Vegas helpers, ported here
//!
//! tcp_yeah.c includes `tcp_vegas.h` and uses Vegas's state and four of its exported hooks:
//! `tcp_vegas_init` (from its init and on `CA_EVENT_TX_START`/`CA_EVENT_CWND_RESTART` via
//! `tcp_vegas_cwnd_event`), `tcp_vegas_pkts_acked` (RTT+1 µs samples: baseRTT ever, minRTT of
//! this RTT, their count), `tcp_vegas_state` (enable on Open, disable otherwise). Those are
//! ported inside this file ([`VegasHelpers`]) instead of depending on a `vegas.rs`, which is
//! being ported separately: YeAH then does not change if Vegas's port does. `doing_vegas_now`
//! is kept although YeAH never reads it (as in the kernel).
//!
//! # Hooks
//!
//! | tcp_congestion_ops | here |
//! |---|---|
//! | `init` (tcp_yeah_init) | `init` |
//! | `ssthresh` (tcp_yeah_ssthresh) | `ssthresh` |
//! | `cong_avoid` (tcp_yeah_cong_avoid) | `cong_avoid` |
//! | `set_state` (tcp_vegas_state) | `set_state` |
//! | `cwnd_event` (tcp_vegas_cwnd_event) | `cwnd_event` |
//! | `pkts_acked` (tcp_vegas_pkts_acked) | `pkts_acked` |
//! | `undo_cwnd` (tcp_reno_undo_cwnd) | default |
//!
//! # Where this differs from tcp_yeah.c
//!
//! - `ack` of `cong_avoid(sk, ack, acked)` is `tp.snd_una` after the ACK was processed (what
//!   the kernel passes: the ACK's ack_seq, which snd_una has reached by then); sequence numbers
//!   count segments and are u64, so `after(ack, beg_snd_nxt)` is a plain `>`.
//! - `get_info` (Vegas's inet_diag report) is not offered; the mode and queue estimate are
//!   telemetry columns instead (`yeah_fast`, `yeah_queue_pkts`).
//! - tcp_yeah.c has no module parameters (its constants are `#define`s); `cc_params` accepts
//!   none.

use super::{reject_unknown, CcConfig, CongestionControl, ParamError};
use crate::state::{AckSample, CaEvent, CaState, TcpState};

/// TCP_YEAH_ALPHA, tcp_yeah.c: packets of our own queued at the bottleneck above which we are
/// in slow mode.
const TCP_YEAH_ALPHA: u32 = 80;
/// TCP_YEAH_GAMMA, tcp_yeah.c: fraction (1/γ) of the queue removed per RTT in decongestion.
const TCP_YEAH_GAMMA: u32 = 1;
/// TCP_YEAH_DELTA, tcp_yeah.c: log2 of the minimum fraction of cwnd removed on loss (1/8).
const TCP_YEAH_DELTA: u32 = 3;
/// TCP_YEAH_EPSILON, tcp_yeah.c: log2 of the maximum fraction removed by decongestion (1/2).
const TCP_YEAH_EPSILON: u32 = 1;
/// TCP_YEAH_PHY, tcp_yeah.c: queueing delay above baseRTT/PHY means slow mode.
const TCP_YEAH_PHY: u32 = 8;
/// TCP_YEAH_RHO, tcp_yeah.c: consecutive slow-mode RTTs after which a loss halves like Reno.
const TCP_YEAH_RHO: u32 = 16;
/// TCP_YEAH_ZETA, tcp_yeah.c: fast-mode RTTs after which reno_count is reset.
const TCP_YEAH_ZETA: u32 = 50;
/// TCP_SCALABLE_AI_CNT, tcp_yeah.c: fast mode adds one packet per min(cwnd, 100) acked.
const TCP_SCALABLE_AI_CNT: u32 = 100;
/// tcp_yeah_init: snd_cwnd_clamp ≤ 0xffffffff/128.
const YEAH_CWND_CLAMP: u32 = 0xffff_ffff / 128;
/// tcp_yeah_cong_avoid: doing_reno_now saturates at 0xffffff.
const DOING_RENO_MAX: u32 = 0xff_ffff;
/// tcp_vegas.c: "infinite" RTT (µs) for baseRTT and minRTT before a sample.
const VEGAS_RTT_INF: u32 = 0x7fff_ffff;

/// struct vegas (tcp_vegas.h) and the helpers of tcp_vegas.c that YeAH calls.
#[derive(Debug, Clone, Copy, Default)]
pub struct VegasHelpers {
    /// Whether Vegas sampling is on (set in Open); unused by YeAH, as in the kernel.
    pub doing_vegas_now: bool,
    /// RTT samples taken this RTT.
    pub cnt_rtt: u32,
    /// Minimum RTT (+1 µs) this RTT.
    pub min_rtt: u32,
    /// Minimum RTT (+1 µs) ever: the propagation delay.
    pub base_rtt: u32,
    pub beg_snd_una: u64,
    /// The current RTT ends when an ACK passes this sequence.
    pub beg_snd_nxt: u64,
    pub beg_snd_cwnd: u32,
}

impl VegasHelpers {
    /// vegas_enable: start a sampling RTT at snd_nxt.
    fn enable(&mut self, tp: &TcpState) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = VEGAS_RTT_INF;
    }

    /// tcp_vegas_init.
    fn init(&mut self, tp: &TcpState) {
        self.base_rtt = VEGAS_RTT_INF;
        self.enable(tp);
    }

    /// tcp_vegas_pkts_acked: never a zero RTT (sample + 1 µs).
    fn pkts_acked(&mut self, rtt_us: i64) {
        if rtt_us < 0 {
            return;
        }
        let vrtt = (rtt_us as u32).wrapping_add(1);
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// tcp_vegas_state.
    fn state(&mut self, tp: &TcpState, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
        } else {
            self.doing_vegas_now = false;
        }
    }
}

pub struct Yeah {
    vegas: VegasHelpers,
    /// Queue estimate of the last measured RTT, packets.
    last_q: u32,
    /// Consecutive slow-mode RTTs (0: fast mode).
    doing_reno_now: u32,
    /// Estimated window of competing Reno flows.
    reno_count: u32,
    /// Fast-mode RTTs since reno_count was last reset.
    fast_count: u32,
}

impl Yeah {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        reject_unknown(config.params, &[])?;
        Ok(Box::new(Yeah::new()))
    }

    fn new() -> Self {
        Yeah {
            vegas: VegasHelpers::default(),
            last_q: 0,
            doing_reno_now: 0,
            reno_count: 2,
            fast_count: 0,
        }
    }

    /// The once-per-RTT mode decision and precautionary decongestion (the second half of
    /// tcp_yeah_cong_avoid).
    fn per_rtt(&mut self, tp: &mut TcpState) {
        if tp.snd_una <= self.vegas.beg_snd_nxt {
            return;
        }
        // At least 3 samples: at least one not from a delayed ACK.
        if self.vegas.cnt_rtt > 2 {
            let rtt = self.vegas.min_rtt;
            let base = self.vegas.base_rtt;
            let queue = (tp.snd_cwnd as u64 * rtt.wrapping_sub(base) as u64 / rtt as u64) as u32;
            if queue > TCP_YEAH_ALPHA || rtt.wrapping_sub(base) > base / TCP_YEAH_PHY {
                // Slow mode.
                if queue > TCP_YEAH_ALPHA && tp.snd_cwnd > self.reno_count {
                    let reduction = (queue / TCP_YEAH_GAMMA).min(tp.snd_cwnd >> TCP_YEAH_EPSILON);
                    tp.snd_cwnd -= reduction;
                    tp.snd_cwnd = tp.snd_cwnd.max(self.reno_count);
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
                if self.reno_count <= 2 {
                    self.reno_count = (tp.snd_cwnd >> 1).max(2);
                } else {
                    self.reno_count += 1;
                }
                self.doing_reno_now = (self.doing_reno_now + 1).min(DOING_RENO_MAX);
            } else {
                // Fast mode.
                self.fast_count += 1;
                if self.fast_count > TCP_YEAH_ZETA {
                    self.reno_count = 2;
                    self.fast_count = 0;
                }
                self.doing_reno_now = 0;
            }
            self.last_q = queue;
        }
        // The next RTT: what is sent from now on.
        self.vegas.beg_snd_una = self.vegas.beg_snd_nxt;
        self.vegas.beg_snd_nxt = tp.snd_nxt;
        self.vegas.beg_snd_cwnd = tp.snd_cwnd;
        self.vegas.cnt_rtt = 0;
        self.vegas.min_rtt = VEGAS_RTT_INF;
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    /// tcp_yeah_init.
    fn init(&mut self, tp: &mut TcpState) {
        self.vegas.init(tp);
        self.doing_reno_now = 0;
        self.last_q = 0;
        self.reno_count = 2;
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(YEAH_CWND_CLAMP);
    }

    /// tcp_yeah_ssthresh: remove the queue (between cwnd/8 and cwnd/2), or halve when
    /// competing with Reno flows.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cwnd = tp.snd_cwnd;
        let reduction = if self.doing_reno_now < TCP_YEAH_RHO {
            self.last_q
                .min((cwnd >> 1).max(2))
                .max(cwnd >> TCP_YEAH_DELTA)
        } else {
            (cwnd >> 1).max(2)
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        (cwnd.wrapping_sub(reduction) as i32).max(2) as u32
    }

    /// tcp_yeah_cong_avoid.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if tp.in_slow_start() {
            acked = tp.slow_start(acked);
        }
        if acked > 0 {
            let w = if self.doing_reno_now == 0 {
                tp.snd_cwnd.min(TCP_SCALABLE_AI_CNT) // Scalable
            } else {
                tp.snd_cwnd // Reno
            };
            tp.cong_avoid_ai(w, acked);
        }
        self.per_rtt(tp);
    }

    /// tcp_vegas_state.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        self.vegas.state(tp, new_state);
    }

    /// tcp_vegas_cwnd_event: restart the Vegas estimates after idle.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.vegas.init(tp);
        }
    }

    /// tcp_vegas_pkts_acked.
    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        self.vegas.pkts_acked(sample.rtt_us);
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        &["yeah_fast", "yeah_queue_pkts"]
    }

    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = if self.doing_reno_now == 0 { 1.0 } else { 0.0 };
        out[1] = self.last_q as f64;
    }

    fn mode(&self, tp: &TcpState) -> &'static str {
        if tp.in_slow_start() {
            "slow_start"
        } else if self.doing_reno_now == 0 {
            "fast"
        } else {
            "slow"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A YeAH in congestion avoidance whose current RTT ends on the next ACK, with baseRTT
    /// `base_us` and this RTT's minimum `rtt_us` (as the Vegas helpers store them, +1 µs
    /// included), three samples taken.
    fn at_rtt_end(cwnd: u32, base_us: u32, rtt_us: u32) -> (Yeah, TcpState) {
        let mut y = Yeah::new();
        let mut tp = TcpState {
            snd_cwnd: cwnd,
            snd_ssthresh: 2,
            is_cwnd_limited: true,
            snd_una: 1000,
            snd_nxt: 1000 + cwnd as u64,
            ..Default::default()
        };
        y.init(&mut tp);
        y.vegas.beg_snd_nxt = 999;
        y.vegas.base_rtt = base_us;
        y.vegas.min_rtt = rtt_us;
        y.vegas.cnt_rtt = 3;
        (y, tp)
    }

    #[test]
    fn fast_mode_below_alpha_packets_queued_grows_one_per_100_acked() {
        // cwnd 1000, base 100 ms, this RTT 105 ms: Q = 1000·5000/105000 = 47 ≤ 80 and
        // 5 ms ≤ 100/8 = 12.5 ms: fast mode.
        let (mut y, mut tp) = at_rtt_end(1000, 100_000, 105_000);
        y.cong_avoid(&mut tp, 1);
        assert_eq!(y.last_q, 1000 * 5_000 / 105_000);
        assert_eq!((y.doing_reno_now, y.fast_count), (0, 1));
        assert_eq!(y.mode(&tp), "fast");
        // Scalable increase: one packet per min(cwnd, 100) = 100 acked.
        let mut tp = TcpState {
            snd_cwnd: 1000,
            snd_ssthresh: 2,
            is_cwnd_limited: true,
            ..Default::default()
        };
        y.vegas.beg_snd_nxt = u64::MAX; // no RTT end
        y.cong_avoid(&mut tp, 99);
        assert_eq!(tp.snd_cwnd, 1000);
        y.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 1001);
    }

    #[test]
    fn a_delay_above_base_over_phy_switches_to_slow_mode_without_a_cut() {
        // cwnd 100, base 100 ms, this RTT 120 ms: Q = 100·20000/120000 = 16 ≤ 80, but 20 ms >
        // 100/8 = 12.5 ms: slow mode; no cut since Q ≤ 80; reno_count = max(100/2, 2) = 50.
        let (mut y, mut tp) = at_rtt_end(100, 100_000, 120_000);
        y.cong_avoid(&mut tp, 1);
        assert_eq!(y.last_q, 16);
        assert_eq!((y.doing_reno_now, y.reno_count, tp.snd_cwnd), (1, 50, 100));
        assert_eq!(y.mode(&tp), "slow");
        // Reno increase now: one per cwnd acked.
        y.vegas.beg_snd_nxt = u64::MAX;
        tp.snd_cwnd_cnt = 0;
        y.cong_avoid(&mut tp, 99);
        assert_eq!(tp.snd_cwnd, 100);
        y.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 101);
    }

    #[test]
    fn a_queue_above_alpha_is_removed_by_precautionary_decongestion() {
        // cwnd 1000, base 100 ms, RTT 120 ms: Q = 1000·20000/120000 = 166 > 80: cut
        // min(166/1, 1000 >> 1) = 166: cwnd = 834 (≥ reno_count 2), ssthresh = 834;
        // then reno_count = max(834 >> 1, 2) = 417.
        let (mut y, mut tp) = at_rtt_end(1000, 100_000, 120_000);
        y.vegas.beg_snd_nxt = u64::MAX;
        y.cong_avoid(&mut tp, 1); // the fast-mode increase of this ACK first: +0 (cnt 1/100)
        y.vegas.beg_snd_nxt = 999;
        y.vegas.cnt_rtt = 3;
        y.cong_avoid(&mut tp, 1);
        let q = 1000 * 20_000 / 120_000;
        assert_eq!(q, 166);
        assert_eq!(
            (y.last_q, tp.snd_cwnd, tp.snd_ssthresh),
            (q, 1000 - q, 1000 - q)
        );
        assert_eq!((y.reno_count, y.doing_reno_now), ((1000 - q) >> 1, 1));
        // The next RTT's decongestion stops at reno_count: Q = 834·20000/120000 = 139,
        // min(139, 417) = 139 → 695 ≥ 417; reno_count 418.
        y.vegas.beg_snd_nxt = 999;
        y.vegas.cnt_rtt = 3;
        y.vegas.min_rtt = 120_000;
        y.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 834 - 834 * 20_000 / 120_000);
        assert_eq!((y.reno_count, y.doing_reno_now), (418, 2));
    }

    #[test]
    fn fewer_than_three_samples_skip_the_decision() {
        let (mut y, mut tp) = at_rtt_end(1000, 100_000, 120_000);
        y.vegas.cnt_rtt = 2;
        y.cong_avoid(&mut tp, 1);
        assert_eq!((y.doing_reno_now, y.last_q, tp.snd_cwnd), (0, 0, 1000));
        // But the RTT still rolls over.
        assert_eq!((y.vegas.beg_snd_nxt, y.vegas.cnt_rtt), (tp.snd_nxt, 0));
    }

    #[test]
    fn ssthresh_removes_the_queue_clamped_to_an_eighth_and_a_half_or_halves_under_competition() {
        let tp = |cwnd| TcpState {
            snd_cwnd: cwnd,
            ..Default::default()
        };
        let mut y = Yeah::new();
        // Q = 166 at cwnd 1000: cut 166 (between 1000 >> 3 = 125 and 500): ssthresh 834.
        y.last_q = 166;
        assert_eq!(y.ssthresh(&tp(1000)), 1000 - 166);
        // Q = 10: cut raised to cwnd/8 = 125.
        y.last_q = 10;
        assert_eq!(y.ssthresh(&tp(1000)), 1000 - (1000 >> 3));
        // Q = 900: cut capped at cwnd/2 = 500.
        y.last_q = 900;
        assert_eq!(y.ssthresh(&tp(1000)), 500);
        // 16 slow-mode RTTs in a row (RHO): Reno's halving whatever Q says.
        y.last_q = 10;
        y.doing_reno_now = TCP_YEAH_RHO;
        assert_eq!(y.ssthresh(&tp(1000)), 500);
        // reno_count halves (floor 2), fast_count clears.
        y.reno_count = 40;
        y.fast_count = 7;
        y.ssthresh(&tp(1000));
        assert_eq!((y.reno_count, y.fast_count), (20, 0));
        // Floor of 2.
        assert_eq!(y.ssthresh(&tp(2)), 2);
    }

    #[test]
    fn reno_count_resets_after_more_than_zeta_fast_rtts() {
        let (mut y, mut tp) = at_rtt_end(100, 100_000, 100_001);
        y.reno_count = 30;
        for i in 1..=51 {
            y.vegas.beg_snd_nxt = 0;
            y.vegas.cnt_rtt = 3;
            y.vegas.min_rtt = 100_001;
            y.cong_avoid(&mut tp, 1);
            if i == 50 {
                assert_eq!((y.reno_count, y.fast_count), (30, 50));
            }
        }
        assert_eq!((y.reno_count, y.fast_count), (2, 0));
    }

    #[test]
    fn vegas_helpers_keep_rtt_plus_one_and_restart_on_tx_start() {
        let mut y = Yeah::new();
        let mut tp = TcpState::default();
        y.init(&mut tp);
        let s = |us| AckSample {
            pkts_acked: 1,
            rtt_us: us,
            in_flight: 0,
        };
        y.pkts_acked(&mut tp, &s(50_000));
        y.pkts_acked(&mut tp, &s(40_000));
        y.pkts_acked(&mut tp, &s(-1));
        assert_eq!(
            (y.vegas.base_rtt, y.vegas.min_rtt, y.vegas.cnt_rtt),
            (40_001, 40_001, 2)
        );
        y.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!((y.vegas.base_rtt, y.vegas.cnt_rtt), (VEGAS_RTT_INF, 0));
    }
}
