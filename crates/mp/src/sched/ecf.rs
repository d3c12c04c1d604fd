//! ECF, Earliest Completion First (Lim, Nahum, Towsley, Gibbens, CoNEXT 2017), as in the
//! multipath-tcp.org kernel's `mptcp_ecf.c` (summary: seed-001 §3).
//!
//! When the fastest subflow f has no cwnd space and minRTT would use the slower s, ECF asks
//! whether waiting for f finishes the queued data sooner. With k the bytes queued at the
//! connection, δ = max(rttvar_f, rttvar_s) and β = 1/4 the hysteresis of the `waiting` flag:
//!
//! ```text
//! if srtt_f · (max(k, cwnd_f·MSS) + cwnd_f·MSS) < cwnd_f·MSS · (srtt_s + δ) · (1 + waiting·β):
//!     if srtt_s · max(k, cwnd_s·MSS) ≥ cwnd_s·MSS · (2·srtt_f + δ):  wait for f (waiting = 1)
//!     else: use s
//! else: use s (waiting = 0)
//! ```
//!
//! rttvar is the kernel's: `tp->rttvar_us >> 1` (Linux's rttvar_us is about 4·RTTVAR and
//! carries the 200 ms RTO floor, so δ is at least 100 ms, as in the kernel).

use super::{lowest_rtt, Pick, SchedContext, Scheduler};

/// 1/β: mptcp_ecf.c's mptcp_ecf_r_beta = 4.
pub const R_BETA: u64 = 4;

#[derive(Default)]
pub struct Ecf {
    /// The hysteresis flag (ecf_cb->switching_margin).
    pub waiting: bool,
}

impl Scheduler for Ecf {
    fn name(&self) -> &'static str {
        "ecf"
    }

    fn pick(&mut self, cx: &SchedContext) -> Pick {
        if !cx.can_send_new {
            return Pick::Wait;
        }
        let (Some(best), Some(fast)) = (lowest_rtt(cx.subflows, true), lowest_rtt(cx.subflows, false)) else {
            return Pick::Wait;
        };
        if best == fast {
            return Pick::New(1 << best);
        }
        let (s, f) = (&cx.subflows[best], &cx.subflows[fast]);
        let mss = s.mss as u128;
        let k = cx.queued_bytes as u128;
        let (srtt_f, srtt_s) = (f.srtt_us as u128, s.srtt_us as u128);
        let delta = (f.rttvar_us.max(s.rttvar_us) >> 1) as u128;
        let x_f = f.cwnd as u128 * mss;
        let lhs = srtt_f * (k.max(x_f) + x_f);
        let rhs = x_f * (srtt_s + delta);
        if R_BETA as u128 * lhs < R_BETA as u128 * rhs + self.waiting as u128 * rhs {
            let x_s = s.cwnd as u128 * mss;
            if srtt_s * k.max(x_s) >= x_s * (2 * srtt_f + delta) {
                self.waiting = true;
                return Pick::Wait;
            }
            Pick::New(1 << best)
        } else {
            self.waiting = false;
            Pick::New(1 << best)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_support::{cx, sub};
    use rove_tcp::MSS;

    #[test]
    fn little_queued_data_waits_for_the_fast_subflow() {
        // f: 20 ms, cwnd 10 (full); s: 200 ms, cwnd 10; δ = 0; k = 5 segments.
        let subs = [sub(20, 10, 10), sub(200, 10, 0)];
        let mut e = Ecf::default();
        let mut c = cx(&subs);
        c.queued_bytes = 5 * MSS as u64;
        // 20·(10+10) = 400 < 10·200 = 2000; then 200·10 = 2000 ≥ 10·40 = 400: wait.
        assert_eq!(e.pick(&c), Pick::Wait);
        assert!(e.waiting);
        // A long queue: 20·(1000+10) = 20200 > 10·200·(1+1/4) = 2500: use s, and reset.
        c.queued_bytes = 1000 * MSS as u64;
        assert_eq!(e.pick(&c), Pick::New(0b10));
        assert!(!e.waiting);
    }
}
