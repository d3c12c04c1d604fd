//! wVegas, weighted Vegas for multipath TCP: Y. Cao, M. Xu, X. Fu, "Delay-based Congestion
//! Control for Multipath TCP", IEEE ICNP 2012; Linux MPTCP's `wvegas`
//! (`net/mptcp/mptcp_wvegas.c`, by the authors; followed here as in the tree's 4.x releases
//! (v0.9x, the `ack_sample` API), which the sources' experiments ran: MPTCP v0.94/v0.95).
//! Summarised in seed 001 §3.
//!
//! # The algorithm
//!
//! Each subflow runs Vegas: once per RTT (a round ends when snd_una passes the snd_nxt recorded
//! at its start) it compares the expected and actual rates through the number of its packets
//! queued in the network,
//!
//! ```text
//!   rtt  = mean of this round's RTT samples,  base_rtt = min RTT ever seen
//!   diff = cwnd · (rtt − base_rtt) / rtt                                  (packets in queues)
//! ```
//!
//! and holds `diff` at its share `α_r` of a connection-wide budget of queued packets
//! (`total_alpha`): the share is the subflow's share of the connection's rate,
//!
//! ```text
//!   weight_r = x_r / Σ_k x_k,   x_k = cwnd_k / rtt_k      (updated when diff ≥ α_r: at equilibrium)
//!   α_r      = max(2, ⌊weight_r · total_alpha⌋)
//!   diff > α_r: cwnd −= 1;   diff < α_r: cwnd += 1                          (once per RTT)
//! ```
//!
//! so a connection keeps about `total_alpha` packets queued in all, shifting traffic to the
//! paths where its packets queue least. Two more rules (the paper's §III-C, and the kernel):
//! - **Drain**: with `q = rtt − base_rtt` and `q_min` the smallest q seen since the last drain,
//!   if `q ≥ 2·q_min` then `cwnd ← cwnd · base_rtt / (2·rtt)`, and q_min restarts.
//! - **Slow start** as Vegas: once `diff > γ` in slow start, cwnd drops to `target + 1`
//!   (`target = cwnd·base_rtt/rtt`) and ssthresh to it; a loss halves cwnd as Reno
//!   (`tcp_reno_ssthresh`), and outside the Open state (Recovery, Loss, CWR) the subflow runs
//!   Reno (`wvegas_disable`) until it is Open again, when its Vegas state restarts.
//!
//! # Constants (mptcp_wvegas.c module parameters; `cc_params`)
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `initial_alpha` | 2 | α_r before the first weight update (`initial_alpha`) |
//! | `total_alpha` | 10 | packets the whole connection keeps queued (`total_alpha`) |
//! | `gamma` | 1 | slow-start exit threshold on diff (`gamma`) |
//! | `kernel_zero_queue_backoff` | false | see below |
//!
//! The floor 2 of α_r is the kernel's literal `max(2U, ...)`.
//!
//! # Details as the kernel has them
//!
//! - RTT samples are `rtt_us + 1` (`vrtt`, so that 0 never occurs); `base_rtt` starts at
//!   0x7fffffff µs and is reset only by a restart after idle (`CA_EVENT_CWND_RESTART`).
//! - A round with ≤ 2 RTT samples runs Reno instead (`cnt_rtt <= 2`); between round ends, slow
//!   start continues per ACK (`tcp_in_slow_start`: cwnd < ssthresh). (The tree's older 3.x
//!   code tested `cwnd <= ssthresh` and lowered ssthresh to `cwnd − 1`; with the modern
//!   `tcp_slow_start`, capped at ssthresh, cwnd = ssthresh is then a fixed point that never
//!   leaves slow start, which the 4.x code fixed. `mptcp_wvegas_ssthresh` is `min(ssthresh, cwnd)`.)
//! - `diff`, `target` and the drain factor are integer arithmetic (the drain factor in 2^-16).
//! - The sum of rates counts the group's subflows that can send and have RTT samples in their
//!   current round (`sampled_rtt > 0`); each contributes the rate it computed at its own last
//!   weight update (`instant_rate`, zeroed by a loss timeout and by a return to Open).
//! - After each round ssthresh is `tcp_current_ssthresh`, and cwnd is clamped to [2, clamp].
//!
//! **[GAP] `kernel_zero_queue_backoff`.** The kernel applies the drain test after setting
//! `q_min = min(q_min, q)`, so a round whose RTTs all equal base_rtt (q = 0) satisfies
//! `0 ≥ 2·0` and halves cwnd. Real paths always show some jitter, so this hardly happens in the
//! kernel; in this deterministic simulator an idle bottleneck gives q = 0 exactly, and the rule
//! would halve cwnd every RTT on an empty path. By default the drain needs q > 0 (the paper's
//! intent: drain when the queueing delay doubles); `true` restores the kernel's test.

use super::super::{reject_unknown, CcConfig, CongestionControl, ParamError};
use super::{members, CouplingSlot, SlotState};
use crate::cc::params;
use crate::state::{AckSample, CaEvent, CaState, TcpState};

/// MPTCP_WVEGAS_SCALE: fixed-point scale of the drain factor.
const WVEGAS_SCALE: u32 = 16;
/// mptcp_wvegas_cong_avoid: `max(2U, weight·total_alpha)`, the floor of α_r (packets).
const WVEGAS_MIN_ALPHA: u32 = 2;
/// mptcp_wvegas_init: base_rtt starts at 0x7fffffff µs.
const WVEGAS_BASE_RTT_INIT_US: u64 = 0x7fff_ffff;

const PARAM_KEYS: &[&str] = &[
    "initial_alpha",
    "total_alpha",
    "gamma",
    "kernel_zero_queue_backoff",
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WVegasParams {
    pub initial_alpha: u32,
    pub total_alpha: u32,
    pub gamma: u32,
    pub kernel_zero_queue_backoff: bool,
}

impl Default for WVegasParams {
    fn default() -> Self {
        // mptcp_wvegas.c: initial_alpha = 2, total_alpha = 10, gamma = 1.
        WVegasParams {
            initial_alpha: 2,
            total_alpha: 10,
            gamma: 1,
            kernel_zero_queue_backoff: false,
        }
    }
}

impl WVegasParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = WVegasParams::default();
        Ok(WVegasParams {
            initial_alpha: params::integer(
                t,
                "initial_alpha",
                d.initial_alpha,
                1,
                1 << 20,
                "packets",
            )?,
            total_alpha: params::integer(
                t,
                "total_alpha",
                d.total_alpha,
                1,
                1 << 20,
                "packets queued by the whole connection",
            )?,
            gamma: params::integer(t, "gamma", d.gamma, 0, 1 << 20, "packets")?,
            kernel_zero_queue_backoff: params::boolean(
                t,
                "kernel_zero_queue_backoff",
                d.kernel_zero_queue_backoff,
            )?,
        })
    }
}

pub struct WVegas {
    cpl: CouplingSlot,
    p: WVegasParams,
    /// Right edge of the current round (beg_snd_nxt).
    beg_snd_nxt: u64,
    /// doing_wvegas_now.
    doing: bool,
    /// RTT samples in this round and their sum (µs).
    cnt_rtt: u32,
    sampled_rtt: u64,
    base_rtt: u64,
    /// cwnd/rtt at the last weight update, packets per µs (0 = none).
    instant_rate: f64,
    weight: f64,
    alpha: u32,
    /// Smallest queueing delay since the last drain, µs (0 = none).
    queue_delay: u64,
}

impl WVegas {
    pub fn new(p: WVegasParams, cpl: CouplingSlot) -> Self {
        WVegas {
            cpl,
            p,
            beg_snd_nxt: 0,
            doing: true,
            cnt_rtt: 0,
            sampled_rtt: 0,
            base_rtt: WVEGAS_BASE_RTT_INIT_US,
            instant_rate: 0.0,
            weight: 1.0,
            alpha: p.initial_alpha,
            queue_delay: 0,
        }
    }

    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        let p = WVegasParams::from_table(config.params)?;
        Ok(Box::new(WVegas::new(
            p,
            config.coupling.clone().unwrap_or_else(CouplingSlot::alone),
        )))
    }

    /// wvegas_enable.
    fn enable(&mut self, tp: &TcpState) {
        self.doing = true;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.sampled_rtt = 0;
        self.instant_rate = 0.0;
        self.alpha = self.p.initial_alpha;
        self.weight = 1.0;
        self.queue_delay = 0;
    }

    fn publish(&self, tp: &TcpState) {
        let (rate, sampled) = (self.instant_rate, self.sampled_rtt > 0);
        self.cpl.publish(tp, |s| {
            s.wvegas_rate = rate;
            s.wvegas_sampled = sampled;
        });
    }

    /// The α_r in force (for tests and metrics).
    pub fn alpha(&self) -> u32 {
        self.alpha
    }
}

/// mptcp_wvegas_weight: `me`'s share of its group's rate, or `current` when there is no sum.
pub fn weight(slots: &[SlotState], me: usize, current: f64) -> f64 {
    let total: f64 = members(slots, me)
        .filter(|(_, s)| s.wvegas_sampled)
        .map(|(_, s)| s.wvegas_rate)
        .sum();
    let own = slots[me].wvegas_rate;
    if total > 0.0 && own > 0.0 {
        own / total
    } else {
        current
    }
}

impl CongestionControl for WVegas {
    fn name(&self) -> &'static str {
        "wvegas"
    }

    /// mptcp_wvegas_init.
    fn init(&mut self, tp: &mut TcpState) {
        self.base_rtt = WVEGAS_BASE_RTT_INIT_US;
        self.enable(tp);
        self.publish(tp);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.publish(tp);
        crate::cc::tcp_reno_ssthresh(tp)
    }

    /// mptcp_wvegas_pkts_acked.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if sample.rtt_us >= 0 {
            let vrtt = sample.rtt_us as u64 + 1;
            self.base_rtt = self.base_rtt.min(vrtt);
            self.sampled_rtt += vrtt;
            self.cnt_rtt += 1;
        }
        self.publish(tp);
    }

    /// mptcp_wvegas_state.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
        } else {
            self.doing = false;
        }
        self.publish(tp);
    }

    /// mptcp_wvegas_cwnd_event.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        match event {
            CaEvent::CwndRestart => self.init(tp),
            CaEvent::Loss => {
                self.instant_rate = 0.0;
                self.publish(tp);
            }
            _ => {}
        }
    }

    /// mptcp_wvegas_cong_avoid.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !self.doing {
            crate::cc::tcp_reno_cong_avoid(tp, acked);
            self.publish(tp);
            return;
        }
        if tp.snd_una > self.beg_snd_nxt {
            self.beg_snd_nxt = tp.snd_nxt;
            if self.cnt_rtt <= 2 {
                crate::cc::tcp_reno_cong_avoid(tp, acked);
            } else {
                self.round(tp, acked);
            }
            self.cnt_rtt = 0;
            self.sampled_rtt = 0;
        } else if tp.in_slow_start() {
            tp.slow_start(acked);
        }
        self.publish(tp);
    }
}

impl WVegas {
    /// The once-per-RTT update of mptcp_wvegas_cong_avoid (a round with more than 2 samples).
    fn round(&mut self, tp: &mut TcpState, acked: u32) {
        let rtt = self.sampled_rtt / self.cnt_rtt as u64;
        let cwnd = tp.snd_cwnd as u64;
        let target_cwnd = cwnd * self.base_rtt / rtt;
        let diff = cwnd * rtt.saturating_sub(self.base_rtt) / rtt;

        if diff > self.p.gamma as u64 && tp.in_slow_start() {
            tp.snd_cwnd = tp.snd_cwnd.min(target_cwnd as u32 + 1);
            tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd); // mptcp_wvegas_ssthresh
        } else if tp.in_slow_start() {
            tp.slow_start(acked);
        } else {
            if diff >= self.alpha as u64 {
                self.instant_rate = tp.snd_cwnd as f64 / rtt as f64;
                let rate = self.instant_rate;
                let current = self.weight;
                self.weight = self.cpl.publish_and(
                    tp,
                    |s| {
                        s.wvegas_rate = rate;
                        s.wvegas_sampled = true;
                    },
                    |slots, me| weight(slots, me, current),
                );
                self.alpha =
                    WVEGAS_MIN_ALPHA.max((self.weight * self.p.total_alpha as f64).floor() as u32);
            }
            if diff > self.alpha as u64 {
                tp.snd_cwnd -= 1;
                tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd); // mptcp_wvegas_ssthresh
            } else if diff < self.alpha as u64 {
                tp.snd_cwnd += 1;
            }
            // Drain the queue if the queueing delay doubled.
            let q_delay = rtt.saturating_sub(self.base_rtt);
            if self.queue_delay == 0 || self.queue_delay > q_delay {
                self.queue_delay = q_delay;
            }
            if q_delay >= 2 * self.queue_delay && (q_delay > 0 || self.p.kernel_zero_queue_backoff)
            {
                let backoff_factor = (self.base_rtt << WVEGAS_SCALE) / (2 * rtt);
                tp.snd_cwnd = ((tp.snd_cwnd as u64 * backoff_factor) >> WVEGAS_SCALE) as u32;
                self.queue_delay = 0;
            }
        }
        tp.snd_cwnd = tp.snd_cwnd.clamp(2, tp.snd_cwnd_clamp.max(2));
        tp.snd_ssthresh = tp.current_ssthresh();
    }
}

#[cfg(test)]
mod tests {
    use super::super::CouplingHandle;
    use super::*;

    /// One round: base RTT 100 ms from a first sample, then three samples of 120 ms; the round
    /// mean is (100000 + 3·120000)/4 = 115000 µs (vrtt = rtt_us + 1).
    fn one_round(cc: &mut WVegas, tp: &mut TcpState) {
        for rtt in [99_999, 119_999, 119_999, 119_999] {
            cc.pkts_acked(
                tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: rtt,
                    in_flight: 0,
                },
            );
        }
        tp.snd_una = cc.beg_snd_nxt + 1;
        tp.snd_nxt = tp.snd_una + tp.snd_cwnd as u64;
        cc.cong_avoid(tp, 1);
    }

    fn tp(cwnd: u32, ssthresh: u32) -> TcpState {
        TcpState {
            snd_cwnd: cwnd,
            snd_ssthresh: ssthresh,
            srtt_us: 115_000,
            is_cwnd_limited: true,
            ..Default::default()
        }
    }

    #[test]
    fn weight_sets_alpha_and_the_window_moves_toward_it() {
        // cwnd 40: diff = 40·(115000 − 100000)/115000 = 5 (5.2 truncated) ≥ initial α 2, so the
        // weight is updated: x_a = 40/115000 µs⁻¹ = 3.478e-4; the other subflow published
        // x_b = 5e-4: weight = 3.478/8.478 = 0.410, α = max(2, ⌊4.10⌋) = 4.
        // diff 5 > 4: cwnd 39, ssthresh min(10, 39) = 10, then tcp_current_ssthresh =
        // max(10, 19 + 9) = 28. q = 15000 µs becomes q_min; 15000 < 30000: no drain.
        let h = CouplingHandle::new();
        let (a, b) = (h.subflow(), h.subflow());
        b.publish(
            &TcpState {
                srtt_us: 80_000,
                ..Default::default()
            },
            |s| {
                s.wvegas_rate = 5e-4;
                s.wvegas_sampled = true;
            },
        );
        let mut cc = WVegas::new(WVegasParams::default(), a);
        let mut t = tp(40, 10);
        cc.init(&mut t);
        one_round(&mut cc, &mut t);
        assert_eq!(cc.alpha(), 4);
        assert!((cc.weight - (40.0 / 115_000.0) / (40.0 / 115_000.0 + 5e-4)).abs() < 1e-12);
        assert_eq!(t.snd_cwnd, 39);
        assert_eq!(t.snd_ssthresh, 28);
        assert_eq!(cc.queue_delay, 15_000);
        assert!(h.slot(0).wvegas_rate > 0.0);

        // Alone in its group (the other two slots moved to group 9): weight 1,
        // α = total_alpha = 10 > diff 5: cwnd 41.
        h.set_group(0, 9);
        h.set_group(1, 9);
        let mut cc = WVegas::new(WVegasParams::default(), h.subflow());
        let mut t = tp(40, 10);
        cc.init(&mut t);
        one_round(&mut cc, &mut t);
        assert_eq!(cc.alpha(), 10);
        assert_eq!(t.snd_cwnd, 41);
    }

    #[test]
    fn slow_start_ends_at_target_when_diff_exceeds_gamma() {
        // cwnd 40 in slow start, diff 5 > γ 1: target = ⌊40·100000/115000⌋ = 34, cwnd 35,
        // ssthresh min(∞, 35) = 35, then tcp_current_ssthresh = max(35, 17 + 8) = 35: the next
        // round is in congestion avoidance.
        let mut cc = WVegas::new(WVegasParams::default(), CouplingSlot::alone());
        let mut t = tp(40, crate::state::INFINITE_SSTHRESH);
        cc.init(&mut t);
        one_round(&mut cc, &mut t);
        assert_eq!((t.snd_cwnd, t.snd_ssthresh), (35, 35));
        assert!(!t.in_slow_start());
    }

    #[test]
    fn drain_when_queueing_delay_doubles() {
        // Round 1 (alone, α 10, diff 5): cwnd 41, q_min = 15000.
        // Round 2: samples of 130 ms only: rtt 130001, base 100000: q = 30001 ≥ 2·15000,
        // diff = 41·30001/130001 = 9 < 10: cwnd 42, then the drain:
        // factor = ⌊100000·2^16/260002⌋ = 25205, cwnd = ⌊42·25205/65536⌋ = 16.
        let mut cc = WVegas::new(WVegasParams::default(), CouplingSlot::alone());
        let mut t = tp(40, 10);
        cc.init(&mut t);
        one_round(&mut cc, &mut t);
        assert_eq!(t.snd_cwnd, 41);
        for _ in 0..3 {
            cc.pkts_acked(
                &mut t,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: 130_000,
                    in_flight: 0,
                },
            );
        }
        t.snd_una = cc.beg_snd_nxt + 1;
        cc.cong_avoid(&mut t, 1);
        assert_eq!(t.snd_cwnd, 16);
        assert_eq!(cc.queue_delay, 0);
    }

    #[test]
    fn zero_queue_does_not_drain_unless_asked() {
        // Every sample equals the base RTT: q = 0, diff 0 < α: cwnd + 1; the kernel's test
        // (0 ≥ 2·0) would also halve: ⌊(41·⌊100000·2^16/200000⌋) >> 16⌋ = 20.
        for (kernel, expect) in [(false, 41), (true, 20)] {
            let p = WVegasParams {
                kernel_zero_queue_backoff: kernel,
                ..Default::default()
            };
            let mut cc = WVegas::new(p, CouplingSlot::alone());
            let mut t = tp(40, 10);
            cc.init(&mut t);
            for _ in 0..3 {
                cc.pkts_acked(
                    &mut t,
                    &AckSample {
                        pkts_acked: 1,
                        rtt_us: 99_999,
                        in_flight: 0,
                    },
                );
            }
            t.snd_una = 1;
            cc.cong_avoid(&mut t, 1);
            assert_eq!(t.snd_cwnd, expect, "kernel_zero_queue_backoff = {kernel}");
        }
    }

    #[test]
    fn outside_open_it_is_reno_and_returning_to_open_restarts() {
        let mut cc = WVegas::new(WVegasParams::default(), CouplingSlot::alone());
        let mut t = tp(40, 10);
        cc.init(&mut t);
        cc.set_state(&mut t, CaState::Recovery);
        for _ in 0..40 {
            cc.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 41);
        t.snd_nxt = 77;
        cc.set_state(&mut t, CaState::Open);
        assert!(cc.doing);
        assert_eq!((cc.beg_snd_nxt, cc.alpha()), (77, 2));
    }

    #[test]
    fn params_are_checked() {
        let mut p = toml::Table::new();
        p.insert("total_alpha".into(), toml::Value::Integer(0));
        let e = WVegas::build(&CcConfig::new(&p, 1)).err().unwrap();
        assert_eq!(e.key, "total_alpha");
        assert!(e.message.contains("1..="), "{}", e.message);
        let mut p = toml::Table::new();
        p.insert("alpha".into(), toml::Value::Integer(3));
        assert_eq!(
            WVegas::build(&CcConfig::new(&p, 1)).err().unwrap().key,
            "alpha"
        );
    }
}
