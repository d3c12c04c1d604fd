//! TCP Veno, as Linux 6.x `net/ipv4/tcp_veno.c` (C. P. Fu, S. C. Liew, "TCP Veno: TCP
//! Enhancement for Transmission over Wireless Access Networks", IEEE JSAC 21(2), 2003).
//!
//! # The algorithm
//!
//! Veno is Reno that uses a Vegas-style estimate of its own backlog in the bottleneck queue to
//! tell a congestive loss from a random one (a wireless link's corruption):
//!
//! ```text
//!   basertt = min RTT ever (µs, +1),   rtt = min RTT since the last ACK processed
//!   target  = cwnd · basertt / rtt                         (in 1/2 packets: << V_PARAM_SHIFT)
//!   diff    = 2·cwnd − 2·target  =  2·N,  N = cwnd·(rtt − basertt)/rtt   packets queued
//! ```
//!
//! - **Multiplicative decrease**: a loss with `N < β` = 3 packets (`diff < 3 << 1`) is taken as
//!   random and cuts cwnd by 1/5 (`ssthresh = max(cwnd·4/5, 2)`); with `N ≥ β` it is congestive
//!   and halves (`max(cwnd >> 1, 2)`).
//! - **Additive increase**: below β (non-congestive) one packet per window as Reno
//!   (`tcp_cong_avoid_ai`); at or above β, one packet every *other* window: when a window's worth
//!   of packets has been counted (`snd_cwnd_cnt ≥ cwnd`), cwnd grows only if `inc` is set, and
//!   `inc` alternates.
//!
//! Veno needs more than 2 RTT samples (`cntrtt > 2`, counted since init and never reset) before
//! it departs from Reno; outside the Open state it is Reno (`veno_disable`); growth only when
//! cwnd-limited. Unlike Vegas, the "round" is one ACK: `minrtt` is reset to 0x7fffffff at the end
//! of every `cong_avoid`, so `rtt` is the smallest sample of the ACKs since the last call (the
//! last ACK's own sample), and an ACK without an RTT sample sees `rtt` = 0x7fffffff µs, hence
//! `target` ≈ 0 and a congestive-looking diff (the kernel's behaviour, kept).
//!
//! # Constants (tcp_veno.c)
//!
//! - `V_PARAM_SHIFT = 1`: target and diff in 1/2 packets.
//! - `beta = 3 << V_PARAM_SHIFT`: 3 packets of backlog separate random from congestive loss.
//! - Loss cuts: 4/5 (random), 1/2 (congestive); floor 2 packets.
//!
//! tcp_veno.c has no module parameters (`beta` is a `static const`); `cc_params` accepts none.
//!
//! # Hooks
//!
//! | tcp_congestion_ops | here |
//! |---|---|
//! | `init` | `tcp_veno_init`: basertt = 0x7fffffff, inc = 1, `veno_enable` |
//! | `ssthresh` | `tcp_veno_ssthresh` |
//! | `cong_avoid` | `tcp_veno_cong_avoid` |
//! | `pkts_acked` | `tcp_veno_pkts_acked` |
//! | `set_state` | `tcp_veno_state` |
//! | `cwnd_event` | `tcp_veno_cwnd_event`: `tcp_veno_init` on CWND_RESTART and TX_START |
//! | `undo_cwnd` | `tcp_reno_undo_cwnd` (the trait's default) |
//! | telemetry | `veno_backlog_pkts` (diff/2, the N of the last calculation) |
//!
//! # Where this differs from tcp_veno.c
//!
//! - Nothing in the arithmetic: `diff` is the kernel's u32 (`(cwnd << 1) − target` truncated),
//!   `cntrtt` its u16 (it wraps after 65535 samples, and Veno is Reno for the next 3), `inc`
//!   and `doing_veno_now` are its flags.
//! - `ack` of `cong_avoid` is not used by Veno (only passed on to tcp_reno_cong_avoid, which
//!   ignores it), so rove's `cong_avoid(tp, acked)` carries everything it needs.

use super::{reject_unknown, tcp_reno_cong_avoid, CcConfig, CongestionControl, ParamError};
use crate::state::{AckSample, CaEvent, CaState, TcpState};

/// tcp_veno.c: V_PARAM_SHIFT, target and diff in units of 1/2 packet.
const V_PARAM_SHIFT: u32 = 1;
/// tcp_veno.c: beta = 3 << V_PARAM_SHIFT (3 packets of backlog).
pub(crate) const VENO_BETA: u32 = 3 << V_PARAM_SHIFT;
/// veno_enable / tcp_veno_init: minrtt and basertt start at 0x7fffffff µs.
const VENO_RTT_INIT_US: u32 = 0x7fff_ffff;
/// tcp_veno_cong_avoid: more than 2 RTT samples before Veno departs from Reno.
const VENO_MIN_SAMPLES: u16 = 2;
/// tcp_veno_cong_avoid / tcp_veno_ssthresh: floor of cwnd and ssthresh, packets.
const VENO_MIN_CWND: u32 = 2;

const VENO_TELEMETRY: &[&str] = &["veno_backlog_pkts"];

/// `struct veno`; `Default` is the zeroed private area the kernel hands to init.
#[derive(Default)]
pub struct Veno {
    doing_veno_now: bool,
    /// RTT samples since init (u16; never reset, as the kernel's).
    cntrtt: u16,
    /// Min RTT since the last cong_avoid, µs + 1.
    minrtt: u32,
    /// Min RTT ever (since init), µs + 1.
    basertt: u32,
    /// In the congestive state: whether the next window's worth of ACKs may grow cwnd.
    inc: bool,
    /// 2·(estimated backlog), packets << V_PARAM_SHIFT.
    diff: u32,
}

impl Veno {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        reject_unknown(config.params, &[])?;
        Ok(Box::new(Veno::default()))
    }

    /// veno_enable.
    fn enable(&mut self) {
        self.doing_veno_now = true;
        self.minrtt = VENO_RTT_INIT_US;
    }

    /// `(cwnd << 1) − cwnd·basertt·2/rtt` in u32: twice the estimated backlog.
    pub(crate) fn backlog_diff(cwnd: u32, basertt: u32, rtt: u32) -> u32 {
        let target = ((cwnd as u64 * basertt as u64) << V_PARAM_SHIFT) / rtt as u64;
        (cwnd << V_PARAM_SHIFT).wrapping_sub(target as u32)
    }
}

impl CongestionControl for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    /// tcp_veno_init.
    fn init(&mut self, _tp: &mut TcpState) {
        self.basertt = VENO_RTT_INIT_US;
        self.inc = true;
        self.enable();
    }

    /// tcp_veno_ssthresh: 4/5 for a random loss, 1/2 for a congestive one.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        if self.diff < VENO_BETA {
            (tp.snd_cwnd.wrapping_mul(4) / 5).max(VENO_MIN_CWND)
        } else {
            (tp.snd_cwnd >> 1).max(VENO_MIN_CWND)
        }
    }

    /// tcp_veno_cong_avoid.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !self.doing_veno_now {
            tcp_reno_cong_avoid(tp, acked);
            return;
        }
        // Limited by the application.
        if !tp.is_cwnd_limited() {
            return;
        }
        if self.cntrtt <= VENO_MIN_SAMPLES {
            tcp_reno_cong_avoid(tp, acked);
        } else {
            self.diff = Self::backlog_diff(tp.snd_cwnd, self.basertt, self.minrtt);
            let mut acked = acked;
            let mut grow = true;
            if tp.in_slow_start() {
                acked = tp.slow_start(acked);
                grow = acked > 0; // `goto done` when slow start used every packet
            }
            if grow {
                if self.diff < VENO_BETA {
                    // Non-congestive: one packet per window.
                    let w = tp.snd_cwnd;
                    tp.cong_avoid_ai(w, acked);
                } else if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                    // Congestive: one packet every other window.
                    if self.inc && tp.snd_cwnd < tp.snd_cwnd_clamp {
                        tp.snd_cwnd += 1;
                        self.inc = false;
                    } else {
                        self.inc = true;
                    }
                    tp.snd_cwnd_cnt = 0;
                } else {
                    tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.wrapping_add(acked);
                }
            }
            if tp.snd_cwnd < VENO_MIN_CWND {
                tp.snd_cwnd = VENO_MIN_CWND;
            } else if tp.snd_cwnd > tp.snd_cwnd_clamp {
                tp.snd_cwnd = tp.snd_cwnd_clamp;
            }
        }
        // Wipe the slate clean for the next RTT (cntrtt is not reset, as in the kernel).
        self.minrtt = VENO_RTT_INIT_US;
    }

    /// tcp_veno_pkts_acked.
    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        let vrtt = (sample.rtt_us as u32).wrapping_add(1);
        if vrtt < self.basertt {
            self.basertt = vrtt;
        }
        self.minrtt = self.minrtt.min(vrtt);
        self.cntrtt = self.cntrtt.wrapping_add(1);
    }

    /// tcp_veno_state.
    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable();
        } else {
            self.doing_veno_now = false;
        }
    }

    /// tcp_veno_cwnd_event.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.init(tp);
        }
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        VENO_TELEMETRY
    }

    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = (self.diff >> V_PARAM_SHIFT) as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rtt_us: i64) -> AckSample {
        AckSample {
            pkts_acked: 1,
            rtt_us,
            in_flight: 0,
        }
    }

    /// A Veno in congestion avoidance (cwnd 50, ssthresh 20) with basertt 100001 µs and 3
    /// samples, the last of `rtt_us`.
    fn veno(rtt_us: i64) -> (Veno, TcpState) {
        let mut tp = TcpState {
            snd_cwnd: 50,
            snd_ssthresh: 20,
            is_cwnd_limited: true,
            ..Default::default()
        };
        let mut v = Veno::default();
        v.init(&mut tp);
        v.pkts_acked(&mut tp, &sample(100_000));
        v.pkts_acked(&mut tp, &sample(100_000));
        v.minrtt = VENO_RTT_INIT_US;
        v.pkts_acked(&mut tp, &sample(rtt_us));
        (v, tp)
    }

    #[test]
    fn backlog_estimate_is_twice_cwnd_minus_twice_target() {
        // cwnd 50, base 100001, rtt 104001: target = 50·100001·2/104001 = 10000100/104001 = 96;
        // diff = 100 − 96 = 4, N = 2 packets (50·4000/104001 = 1.92).
        assert_eq!(
            Veno::backlog_diff(50, 100_001, 104_001),
            100 - 10_000_100 / 104_001
        );
        assert_eq!(Veno::backlog_diff(50, 100_001, 104_001), 4);
        // rtt 108001: target = 10000100/108001 = 92, diff = 8 (N = 4).
        assert_eq!(Veno::backlog_diff(50, 100_001, 108_001), 8);
    }

    #[test]
    fn a_loss_below_beta_backlog_is_random_and_cuts_by_a_fifth() {
        let (mut v, mut tp) = veno(104_000);
        v.cong_avoid(&mut tp, 1);
        assert_eq!(v.diff, 4); // < β = 6: non-congestive
        tp.snd_cwnd = 50;
        assert_eq!(v.ssthresh(&tp), 50 * 4 / 5); // 40
    }

    #[test]
    fn a_loss_at_or_above_beta_backlog_is_congestive_and_halves() {
        let (mut v, mut tp) = veno(108_000);
        v.cong_avoid(&mut tp, 1);
        assert_eq!(v.diff, 8); // ≥ β = 6
        tp.snd_cwnd = 50;
        assert_eq!(v.ssthresh(&tp), 50 >> 1); // 25
                                              // rtt 106001: target = 10000100/106001 = 94, diff = 6 = β: congestive.
        assert_eq!(Veno::backlog_diff(50, 100_001, 106_001), VENO_BETA);
        assert_eq!(
            Veno {
                diff: 2,
                ..Veno::default()
            }
            .ssthresh(&TcpState {
                snd_cwnd: 2,
                ..Default::default()
            }),
            2,
            "floor of 2"
        );
    }

    #[test]
    fn non_congestive_growth_is_one_packet_per_window() {
        let (mut v, mut tp) = veno(104_000);
        // tcp_cong_avoid_ai(cwnd = 50): the 50th packet grows cwnd.
        for _ in 0..49 {
            v.pkts_acked(&mut tp, &sample(104_000));
            v.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 50);
        v.pkts_acked(&mut tp, &sample(104_000));
        v.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 51);
    }

    #[test]
    fn congestive_growth_is_one_packet_every_other_window() {
        let (mut v, mut tp) = veno(108_000);
        tp.snd_cwnd = 50;
        let mut cwnd_after_window = Vec::new();
        // Each window: snd_cwnd_cnt counts 0..cwnd (cwnd ACKs), the next ACK decides (cnt ≥ cwnd).
        for _ in 0..4 {
            loop {
                v.pkts_acked(&mut tp, &sample(108_000));
                let decides = tp.snd_cwnd_cnt >= tp.snd_cwnd;
                v.cong_avoid(&mut tp, 1);
                assert!(v.diff >= VENO_BETA, "stays congestive");
                if decides {
                    break;
                }
            }
            cwnd_after_window.push(tp.snd_cwnd);
        }
        // inc starts at 1: +1, skip, +1, skip.
        assert_eq!(cwnd_after_window, vec![51, 51, 52, 52]);
    }

    #[test]
    fn an_ack_without_an_rtt_sample_looks_congestive() {
        let (mut v, mut tp) = veno(104_000);
        v.cong_avoid(&mut tp, 1);
        // No sample on this ACK: minrtt = 0x7fffffff, target = 50·100001·2/2147483647 = 0,
        // diff = 100.
        v.pkts_acked(&mut tp, &sample(-1));
        v.cong_avoid(&mut tp, 1);
        assert_eq!(v.diff, 100);
    }

    #[test]
    fn reno_until_three_samples_and_outside_open() {
        let mut tp = TcpState {
            snd_cwnd: 10,
            snd_ssthresh: 100,
            is_cwnd_limited: true,
            ..Default::default()
        };
        let mut v = Veno::default();
        v.init(&mut tp);
        v.pkts_acked(&mut tp, &sample(100_000));
        v.pkts_acked(&mut tp, &sample(300_000));
        v.cong_avoid(&mut tp, 2); // 2 samples: Reno slow start
        assert_eq!((tp.snd_cwnd, v.diff), (12, 0));
        v.set_state(&mut tp, CaState::Recovery);
        v.pkts_acked(&mut tp, &sample(300_000));
        v.cong_avoid(&mut tp, 2); // off: Reno
        assert_eq!((tp.snd_cwnd, v.diff), (14, 0));
        v.set_state(&mut tp, CaState::Open);
        v.pkts_acked(&mut tp, &sample(300_000));
        v.cong_avoid(&mut tp, 2); // 4 samples: Veno; diff = 28 − 14·2·100001/300001 = 28 − 9
        assert_eq!(v.diff, 28 - (14 * 2 * 100_001 / 300_001));
        assert_eq!(tp.snd_cwnd, 16, "slow start as Reno's");
    }

    #[test]
    fn no_parameters() {
        let t: toml::Table = "beta = 3".parse().unwrap();
        assert_eq!(
            Veno::build(&CcConfig::new(&t, 1)).err().unwrap().key,
            "beta"
        );
    }
}
