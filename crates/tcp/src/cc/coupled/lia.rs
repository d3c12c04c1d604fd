//! LIA, the Linked Increases Algorithm of RFC 6356 ("Coupled Congestion Control for Multipath
//! Transport Protocols"), Linux MPTCP's `lia` (`net/mptcp/mptcp_coupled.c`).
//!
//! # The algorithm (RFC 6356 §3)
//!
//! With `cwnd_i` in bytes and `rtt_i` the smoothed RTT of subflow i, over the subflows i of the
//! group (here: the coupling group, see [`super`]):
//!
//! ```text
//!   alpha       = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)²        (RFC 6356 §3)
//!   per ACK on subflow i, in congestion avoidance:
//!   cwnd_i     += min(alpha · bytes_acked · MSS_i / cwnd_total,  bytes_acked · MSS_i / cwnd_i)
//! ```
//!
//! The first term couples the subflows (the connection as a whole takes no more than one TCP on
//! its best path would, RFC 6356 goals 1–3); the second caps each subflow at what a TCP on that
//! path would take. Slow start, fast retransmit and the halving on loss are TCP's own (§3:
//! "the decrease ... is as in TCP": `cwnd_i/2`, here `tcp_reno_ssthresh`, floor 2).
//!
//! # The packet-count form
//!
//! Substituting alpha, the coupled term per packet acked (bytes_acked = MSS_i), in packets, is
//! `max_k(c_k/rtt_k²) · MSS_i / (Σ_k c_k/rtt_k)²` with `c_k = cwnd_k · MSS_k` in bytes;
//! `cwnd_total` cancels. Like `mptcp_coupled.c`, the increase is applied as "one packet every N
//! packets acked" through the Reno counter (`tcp_cong_avoid_ai`), with
//!
//! ```text
//!   N = max(cwnd_i, floor(1 / coupled term))        (mptcp_ccc_cong_avoid: max of 1/alpha' and cwnd)
//! ```
//!
//! which is `1/min(coupled term, 1/cwnd_i)` rounded down. The kernel computes the same quotient
//! in fixed point: `alpha' = (best_cwnd << 32) / (Σ_k (cwnd_k << 10)·best_rtt/rtt_k)²`
//! (`alpha_scale_num = 32`, `alpha_scale_den = 10`) and `N = (1 << alpha_scale) / alpha'`
//! (`alpha_scale = 12`), i.e. `N = (Σ_k cwnd_k·best_rtt/rtt_k)² / best_cwnd`, which truncates
//! alpha' to an integer (a few percent off at windows of tens of packets, more at hundreds);
//! here the quotient is taken in floating point, and only N is truncated. With equal MSS the
//! byte form and the kernel's packet form are the same number.
//!
//! Differences from `mptcp_coupled.c`, none of which changes the formula:
//! - the counter is the modern `tcp_cong_avoid_ai(tp, N, acked)` (one packet per N acked);
//!   the kernel's own counter (`if cnt >= N {cwnd++; cnt = 0} else cnt++`) counts one per ACK
//!   and takes N+1 ACKs per packet. `kernel_ack_counting = true` counts one per ACK
//!   ([`super::KERNEL_ACK_COUNTING`]).
//! - slow start hands its leftover to congestion avoidance as `tcp_reno_cong_avoid` does (the
//!   kernel drops it), so a lone LIA subflow is exactly Reno.
//! - alpha is recomputed on every ACK in congestion avoidance (the kernel caches it and
//!   recomputes on cwnd changes, state changes and losses).

use super::super::{reject_unknown, CcConfig, CongestionControl, ParamError};
use super::{members, CouplingSlot, SlotState, KERNEL_ACK_COUNTING};
use crate::cc::params;
use crate::state::{AckSample, TcpState};

pub struct Lia {
    cpl: CouplingSlot,
    kernel_ack_counting: bool,
}

impl Lia {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        reject_unknown(config.params, &[KERNEL_ACK_COUNTING])?;
        Ok(Box::new(Lia {
            cpl: config.coupling.clone().unwrap_or_else(CouplingSlot::alone),
            kernel_ack_counting: params::boolean(config.params, KERNEL_ACK_COUNTING, false)?,
        }))
    }
}

/// RFC 6356's terms over `me`'s group: (max_k c_k/rtt_k², Σ_k c_k/rtt_k, Σ_k c_k), with c_k the
/// window in bytes and rtt_k in µs. `None` when `me` does not count or is alone in its group.
fn terms(slots: &[SlotState], me: usize) -> Option<(f64, f64, f64)> {
    if !slots[me].counts() {
        return None;
    }
    let (mut best, mut sum, mut total, mut n) = (0.0f64, 0.0f64, 0.0f64, 0);
    for (_, s) in members(slots, me) {
        let c = s.cwnd as f64 * s.mss as f64;
        let rtt = s.srtt_us as f64;
        best = best.max(c / (rtt * rtt));
        sum += c / rtt;
        total += c;
        n += 1;
    }
    (n > 1).then_some((best, sum, total))
}

/// RFC 6356's alpha for `me`'s group: `cwnd_total · max_i(cwnd_i/rtt_i²) / (Σ_i cwnd_i/rtt_i)²`
/// (1 for a subflow alone).
pub fn alpha(slots: &[SlotState], me: usize) -> f64 {
    match terms(slots, me) {
        Some((best, sum, total)) => total * best / (sum * sum),
        None => 1.0,
    }
}

/// The increase of `me`'s cwnd, in packets, per packet acked in congestion avoidance:
/// `min(alpha · MSS_i / cwnd_total, 1 / cwnd_i)` (RFC 6356 §3 with bytes_acked = MSS_i).
pub fn increase_per_packet(slots: &[SlotState], me: usize) -> f64 {
    let own = 1.0 / slots[me].cwnd.max(1) as f64;
    match terms(slots, me) {
        Some((best, sum, _)) => (best * slots[me].mss as f64 / (sum * sum)).min(own),
        None => own,
    }
}

/// Packets acked per one-packet increase: `max(cwnd_i, floor(1 / coupled term))`.
pub fn acks_per_increment(slots: &[SlotState], me: usize) -> u32 {
    let cwnd = slots[me].cwnd.max(1);
    match terms(slots, me) {
        Some((best, sum, _)) => {
            let coupled = best * slots[me].mss as f64 / (sum * sum);
            // floor, with a 1e-12 relative allowance so that a quotient that is an integer on
            // paper (45, not 44.999…) is not cut by a rounding error.
            let x = 1.0 / coupled;
            let n = (x + x * 1e-12).floor();
            if n.is_finite() && n < u32::MAX as f64 {
                cwnd.max(n as u32)
            } else {
                u32::MAX
            }
        }
        None => cwnd,
    }
}

impl CongestionControl for Lia {
    fn name(&self) -> &'static str {
        "lia"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.cpl.publish(tp, |_| {});
    }

    /// tcp_reno_ssthresh (RFC 6356 §3: the decrease is TCP's, cwnd_i/2), floor 2.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.cpl.publish(tp, |_| {});
        crate::cc::tcp_reno_ssthresh(tp)
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, _sample: &AckSample) {
        self.cpl.publish(tp, |_| {});
    }

    /// mptcp_ccc_cong_avoid: slow start as TCP, then one packet per N packets acked.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if tp.in_slow_start() {
            acked = tp.slow_start(acked);
            if acked == 0 {
                self.cpl.publish(tp, |_| {});
                return;
            }
        }
        let units = if self.kernel_ack_counting { 1 } else { acked };
        // N = cwnd (Reno's tcp_cong_avoid_ai) for a subflow alone.
        let n = self.cpl.publish_and(tp, |_| {}, acks_per_increment);
        tp.cong_avoid_ai(n, units);
        self.cpl.publish(tp, |_| {});
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::test_util::slot;
    use super::super::CouplingHandle;
    use super::*;
    use crate::cc::reno::Reno;

    /// RFC 6356 §3 closed form in packets (equal MSS): alpha = w_total·max(w/rtt²)/(Σ w/rtt)².
    #[test]
    fn two_subflows_match_rfc6356_closed_form() {
        // w = (10, 20) packets, rtt = (100 ms, 50 ms).
        // w/rtt² = 10/0.01 = 1000, 20/0.0025 = 8000 → max 8000 (per s²).
        // Σ w/rtt = 100 + 400 = 500 → squared 250000.
        // alpha = 30 · 8000 / 250000 = 0.96.
        // increase on subflow 0 per packet = min(0.96/30, 1/10) = min(0.032, 0.1) = 0.032 → N = 31.
        // increase on subflow 1 = min(0.032, 1/20 = 0.05) = 0.032 → N = floor(31.25) = 31.
        let slots = [slot(10, 100_000), slot(20, 50_000)];
        assert!((alpha(&slots, 0) - 0.96).abs() < 1e-12);
        assert!((increase_per_packet(&slots, 0) - 0.032).abs() < 1e-12);
        assert!((increase_per_packet(&slots, 1) - 0.032).abs() < 1e-12);
        assert_eq!(acks_per_increment(&slots, 0), 31);
        assert_eq!(acks_per_increment(&slots, 1), 31);
    }

    #[test]
    fn three_subflows_match_rfc6356_closed_form_and_the_cap_binds() {
        // w = (10, 10, 40), rtt = (20 ms, 40 ms, 80 ms).
        // w/rtt² = 10/0.0004 = 25000, 10/0.0016 = 6250, 40/0.0064 = 6250 → max 25000.
        // Σ w/rtt = 500 + 250 + 500 = 1250 → squared 1562500.
        // alpha = 60 · 25000 / 1562500 = 0.96; alpha/w_total = 0.016.
        // subflow 0: min(0.016, 0.1) = 0.016 → N = 62 (1/0.016 = 62.5).
        // subflow 2: min(0.016, 0.025) = 0.016.
        let slots = [slot(10, 20_000), slot(10, 40_000), slot(40, 80_000)];
        assert!((alpha(&slots, 1) - 0.96).abs() < 1e-12);
        for me in 0..3 {
            assert!((increase_per_packet(&slots, me) - 0.016).abs() < 1e-12);
            assert_eq!(acks_per_increment(&slots, me), 62);
        }
        // Equal RTTs and windows (5, 5, 5): alpha = 15·(5/r²)/(15/r)² = 1/3; alpha/w_total = 1/45
        // < 1/5, so each subflow grows one packet per 45 acked: together one per 15, as one TCP
        // with the total window (RFC 6356 goal: take no more than one TCP).
        let slots = [slot(5, 30_000), slot(5, 30_000), slot(5, 30_000)];
        assert!((alpha(&slots, 0) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(acks_per_increment(&slots, 0), 45);
        // The cap: a tiny window on the best path is limited to 1/w_i.
        // w = (2, 100), rtt = (10 ms, 100 ms): w/rtt² = 20000, 10000; Σ w/rtt = 200 + 1000 = 1200.
        // coupled term = 20000/1440000 = 0.01389 < 1/2 = 0.5, and < 1/100? no: 0.0139 > 0.01,
        // so on subflow 1 the cap 1/100 binds: N = 100.
        let slots = [slot(2, 10_000), slot(100, 100_000)];
        assert!((increase_per_packet(&slots, 1) - 0.01).abs() < 1e-12);
        assert_eq!(acks_per_increment(&slots, 1), 100);
        assert_eq!(acks_per_increment(&slots, 0), 72); // floor(1/0.013888…) = 72
    }

    #[test]
    fn different_mss_uses_the_byte_form() {
        // c = (10·1000, 10·500) bytes, equal rtt r = 0.1 s: max c/r² = 10000/0.01 = 1e6,
        // Σ c/r = 100000 + 50000 = 150000 → squared 2.25e10.
        // Subflow 0: 1e6 · 1000 / 2.25e10 = 0.04444 packets per packet acked (cap 0.1).
        // Subflow 1: 1e6 · 500 / 2.25e10 = 0.02222 (cap 0.1).
        let mut slots = [slot(10, 100_000), slot(10, 100_000)];
        slots[0].mss = 1000;
        slots[1].mss = 500;
        assert!((increase_per_packet(&slots, 0) - 1e9 / 2.25e10).abs() < 1e-12);
        assert!((increase_per_packet(&slots, 1) - 5e8 / 2.25e10).abs() < 1e-12);
    }

    #[test]
    fn coupled_subflow_grows_once_per_n_acks() {
        let h = CouplingHandle::new();
        let (a, b) = (h.subflow(), h.subflow());
        let p = toml::Table::new();
        let mut ca = Lia::build(&CcConfig::new(&p, 1).with_coupling(a)).unwrap();
        let mut cb = Lia::build(&CcConfig::new(&p, 1).with_coupling(b)).unwrap();
        let mut ta = TcpState {
            snd_cwnd: 10,
            snd_ssthresh: 5,
            srtt_us: 100_000,
            is_cwnd_limited: true,
            ..Default::default()
        };
        let mut tb = TcpState {
            snd_cwnd: 20,
            snd_ssthresh: 5,
            srtt_us: 50_000,
            is_cwnd_limited: true,
            ..Default::default()
        };
        ca.pkts_acked(&mut ta, &AckSample::default());
        cb.pkts_acked(&mut tb, &AckSample::default());
        // N = 31 (two_subflows_match_rfc6356_closed_form): 30 packets acked leave cwnd at 10.
        for _ in 0..30 {
            ca.cong_avoid(&mut ta, 1);
        }
        assert_eq!(ta.snd_cwnd, 10);
        ca.cong_avoid(&mut ta, 1);
        assert_eq!(ta.snd_cwnd, 11);
        assert_eq!(h.slot(0).cwnd, 11);
    }

    /// Drives Reno and an algorithm side by side through slow start, congestion avoidance with
    /// mixed ACK sizes and losses, and checks the windows stay identical.
    pub(crate) fn assert_same_as_reno(mut algo: Box<dyn CongestionControl>) {
        let mut reno = Reno;
        let base = TcpState {
            snd_cwnd: 10,
            srtt_us: 40_000,
            is_cwnd_limited: true,
            ..Default::default()
        };
        let (mut t1, mut t2) = (base.clone(), base);
        algo.init(&mut t2);
        for step in 0..3000u32 {
            let acked = 1 + step % 3;
            algo.pkts_acked(
                &mut t2,
                &AckSample {
                    pkts_acked: acked,
                    rtt_us: 40_000,
                    in_flight: 0,
                },
            );
            reno.cong_avoid(&mut t1, acked);
            algo.cong_avoid(&mut t2, acked);
            if step % 700 == 699 {
                let (s1, s2) = (reno.ssthresh(&t1), algo.ssthresh(&t2));
                t1.snd_ssthresh = s1;
                t1.snd_cwnd = s1;
                t2.snd_ssthresh = s2;
                t2.snd_cwnd = s2;
            }
            assert_eq!(
                (t1.snd_cwnd, t1.snd_cwnd_cnt, t1.snd_ssthresh),
                (t2.snd_cwnd, t2.snd_cwnd_cnt, t2.snd_ssthresh),
                "step {step}"
            );
        }
        assert!(t1.snd_cwnd > 50);
    }

    #[test]
    fn lone_lia_is_reno() {
        let p = toml::Table::new();
        assert_same_as_reno(Lia::build(&CcConfig::new(&p, 1)).unwrap());
        // Also a subflow whose partner is in another group, or not usable.
        let h = CouplingHandle::new();
        let (a, b) = (h.subflow(), h.subflow());
        let tb = TcpState {
            snd_cwnd: 50,
            srtt_us: 10_000,
            ..Default::default()
        };
        b.publish(&tb, |_| {});
        h.set_group(1, 3);
        assert_same_as_reno(Lia::build(&CcConfig::new(&p, 1).with_coupling(a.clone())).unwrap());
        h.set_group(1, 0);
        h.set_usable(1, false);
        assert_same_as_reno(Lia::build(&CcConfig::new(&p, 1).with_coupling(a)).unwrap());
    }

    #[test]
    fn kernel_ack_counting_counts_acks_not_packets() {
        let mut p = toml::Table::new();
        p.insert(KERNEL_ACK_COUNTING.into(), toml::Value::Boolean(true));
        let mut lia = Lia::build(&CcConfig::new(&p, 1)).unwrap();
        let mut tp = TcpState {
            snd_cwnd: 10,
            snd_ssthresh: 5,
            srtt_us: 1000,
            is_cwnd_limited: true,
            ..Default::default()
        };
        // Ten ACKs of 2 packets each: the kernel counts 10, one increment.
        for _ in 0..10 {
            lia.cong_avoid(&mut tp, 2);
        }
        assert_eq!(tp.snd_cwnd, 11);
        p.insert(KERNEL_ACK_COUNTING.into(), toml::Value::Integer(1));
        let e = Lia::build(&CcConfig::new(&p, 1)).err().unwrap();
        assert_eq!(e.key, KERNEL_ACK_COUNTING);
        assert!(e.message.contains("boolean"), "{}", e.message);
    }
}
