//! BLEST, BLocking ESTimation (Ferlin, Alay, Mehani, Boreli, IFIP Networking 2016), as in the
//! multipath-tcp.org kernel's `mptcp_blest.c` (summary: seed-001 §3).
//!
//! When minRTT would send on a slower subflow s because the fastest subflow f has no cwnd
//! space, BLEST estimates how much f could send while the segment lingers on s, and skips s
//! (waits for f) if that would not fit in the connection's send window next to what s holds:
//!
//! ```text
//! linger_s = max(srtt_s, min_srtt_s + (max_srtt_s − min_srtt_s) · inflight_s / cwnd_s)
//!            (max_srtt_s when inflight_s ≥ cwnd_s; inflight_s counts the new segment)
//! n        = linger_s / avg_rtt_f + 1,   avg_rtt_f = (min_srtt_f + max_srtt_f) / 2
//! X        = MSS · cwnd_f · (2^n − 1) · λ                      initial slow start (n ≤ 16)
//!            MSS · (max(cwnd_f, ssthresh_f + 1) + (n − 1)/2) · n · λ   otherwise
//! wait if X > send_window − (bytes_on_s + MSS)
//! ```
//!
//! λ starts at 1.2 and stays in [1.0, 1.3]; at most once per min_srtt of the slow subflow it
//! rises by 0.04 when a slow subflow was penalised (receive-buffer optimisation, see
//! `Connection`) since the last update, and falls by 0.01 otherwise.

use super::{best_and_fastest, Pick, SchedContext, Scheduler};
use rove_sim::Nanos;
use rove_tcp::state::INFINITE_SSTHRESH;

/// λ in thousandths: initial value, bounds and steps (mptcp_blest.c: lambda = 1200,
/// min 1000, max 1300, +40 when blocked, −10 otherwise).
pub const LAMBDA_INIT: u64 = 1200;
pub const LAMBDA_MIN: u64 = 1000;
pub const LAMBDA_MAX: u64 = 1300;
pub const LAMBDA_INC: u64 = 40;
pub const LAMBDA_DEC: u64 = 10;
/// Cap on the slow-start doubling count (mptcp_blest.c).
const MAX_SS_RTTS: u64 = 16;

pub struct Blest {
    /// λ × 1000.
    pub lambda: u64,
    last_lambda_update: Option<Nanos>,
    /// Penalisations counted at the last λ update.
    blocked_seen: u64,
}

impl Default for Blest {
    fn default() -> Self {
        Blest {
            lambda: LAMBDA_INIT,
            last_lambda_update: None,
            blocked_seen: 0,
        }
    }
}

impl Blest {
    fn update_lambda(&mut self, cx: &SchedContext, slow_min_srtt_us: u64) {
        if self
            .last_lambda_update
            .is_some_and(|t| cx.now < t + slow_min_srtt_us * 1000)
        {
            return;
        }
        if cx.penalizations > self.blocked_seen {
            self.lambda = (self.lambda + LAMBDA_INC).min(LAMBDA_MAX);
        } else {
            self.lambda = self.lambda.saturating_sub(LAMBDA_DEC).max(LAMBDA_MIN);
        }
        self.blocked_seen = cx.penalizations;
        self.last_lambda_update = Some(cx.now);
    }
}

/// The time a new segment would linger on subflow `s`, µs (blestsched_estimate_linger_time).
pub fn linger_time_us(s: &super::SubflowInfo) -> u64 {
    let inflight = s.in_flight as u64 + 1; // the new segment
    let cwnd = (s.cwnd as u64).max(1);
    let estimate = if inflight >= cwnd {
        s.max_srtt_us
    } else {
        s.min_srtt_us + (s.max_srtt_us - s.min_srtt_us) * inflight / cwnd
    };
    estimate.max(s.srtt_us)
}

/// Bytes subflow `f` could send in `linger_us` (blestsched_estimate_bytes), λ in thousandths.
pub fn fast_bytes(f: &super::SubflowInfo, linger_us: u64, lambda: u64) -> u64 {
    let avg_rtt = (f.min_srtt_us + f.max_srtt_us) / 2;
    let n = if avg_rtt == 0 {
        1
    } else {
        linger_us / avg_rtt + 1
    };
    let packets = if f.ssthresh >= INFINITE_SSTHRESH {
        f.cwnd as u64 * ((1u64 << n.min(MAX_SS_RTTS)) - 1)
    } else {
        let ca_cwnd = (f.cwnd as u64).max(f.ssthresh as u64 + 1);
        (ca_cwnd + (n - 1) / 2) * n
    };
    packets * f.mss as u64 * lambda / 1000
}

impl Scheduler for Blest {
    fn name(&self) -> &'static str {
        "blest"
    }

    fn pick(&mut self, cx: &SchedContext) -> Pick {
        let (best, fast) = match best_and_fastest(cx) {
            Ok(pair) => pair,
            Err(decided) => return decided,
        };
        let (s, f) = (&cx.subflows[best], &cx.subflows[fast]);
        self.update_lambda(cx, s.min_srtt_us);
        let x = fast_bytes(f, linger_time_us(s), self.lambda);
        let slow_bytes = (s.in_flight as u64 + s.unsent as u64) * s.mss as u64 + s.mss as u64;
        let avail = cx.send_window_bytes.saturating_sub(slow_bytes);
        if x > avail {
            Pick::Wait
        } else {
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
    fn linger_time_and_fast_bytes_hand_computed() {
        // Slow subflow: srtt 100 ms, seen 80..120 ms, 4 of 10 in flight (+1 new = 5):
        // 80 + 40·5/10 = 100 ms; max(srtt 100, 100) = 100 ms.
        let mut s = sub(100, 10, 4);
        s.min_srtt_us = 80_000;
        s.max_srtt_us = 120_000;
        assert_eq!(linger_time_us(&s), 100_000);
        // Full window: max_srtt.
        s.in_flight = 9;
        assert_eq!(linger_time_us(&s), 120_000);
        // Fast subflow, avg rtt 40 ms: n = 100/40 + 1 = 3.
        // Congestion avoidance, cwnd 20, ssthresh 15: (max(20, 16) + 1) · 3 = 63 packets.
        let mut f = sub(40, 20, 20);
        f.ssthresh = 15;
        assert_eq!(fast_bytes(&f, 100_000, 1000), 63 * MSS as u64);
        assert_eq!(fast_bytes(&f, 100_000, 1200), 63 * MSS as u64 * 12 / 10);
        // Initial slow start, cwnd 10: 10 · (2³ − 1) = 70 packets.
        let f = sub(40, 10, 10);
        assert_eq!(fast_bytes(&f, 100_000, 1000), 70 * MSS as u64);
    }

    #[test]
    fn waits_for_the_fast_subflow_when_the_window_is_short() {
        let subs = [sub(40, 10, 10), sub(100, 10, 0)];
        let mut b = Blest::default();
        let mut c = cx(&subs);
        assert_eq!(
            b.pick(&c),
            Pick::New(0b10),
            "a 6 MB window has room for both"
        );
        // fast: n = 100/40 + 1 = 3 → 70 packets · MSS · λ 1.18 (fell twice) ≈ 120 KB > 100 KB − 1448.
        c.send_window_bytes = 100_000;
        c.now = 1_000_000_000;
        assert_eq!(b.pick(&c), Pick::Wait);
    }

    #[test]
    fn lambda_rises_after_a_penalisation_and_falls_otherwise_once_per_slow_min_srtt() {
        let subs = [sub(40, 10, 10), sub(100, 10, 0)];
        let mut b = Blest::default();
        let mut c = cx(&subs);
        c.penalizations = 1;
        b.pick(&c);
        assert_eq!(b.lambda, 1240);
        c.now = 99_000_000; // less than the slow subflow's min srtt (100 ms) later: no update
        c.penalizations = 2;
        b.pick(&c);
        assert_eq!(b.lambda, 1240);
        c.now = 100_000_000;
        b.pick(&c);
        assert_eq!(b.lambda, 1280);
        for k in 2..5 {
            c.now = k * 100_000_000;
            c.penalizations += 1;
            b.pick(&c);
        }
        assert_eq!(b.lambda, LAMBDA_MAX);
        c.now = 600_000_000;
        b.pick(&c);
        assert_eq!(b.lambda, 1290, "no penalisation since: −0.01");
    }
}
