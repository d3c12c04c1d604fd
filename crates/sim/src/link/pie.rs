//! PIE (Proportional Integral controller Enhanced, RFC 8033), ported from Linux
//! `net/sched/sch_pie.c` and `include/net/pie.h` with Linux's defaults and fixed-point
//! arithmetic: every `tupdate` a PI controller moves the drop probability by
//! `alpha·(qdelay − target) + beta·(qdelay − qdelay_old)` (both scaled down while the
//! probability is small), packets are dropped at enqueue with that probability, after a burst
//! allowance of 150 ms, never while the queue holds under two MTUs, and with Linux's
//! de-randomisation by accumulated probability (`accu_prob`).
//!
//! Times are in Linux's psched ticks (64 ns) so the arithmetic is the kernel's. Differences:
//! - The update timer: Linux arms it 500 ms after the qdisc is created, then every `tupdate`
//!   (15 ms, rounded to jiffies: 16 ms at HZ = 250). rove runs the updates due before each
//!   enqueue and dequeue, in order; between two packet events nothing the controller reads
//!   changes, so this is the same sequence of updates. `tupdate` is exact (15 ms), as at
//!   HZ = 1000.
//! - Queueing delay from timestamps (Linux's default, `dq_rate_estimator` off); no ECN, no
//!   bytemode (Linux's defaults).
//! - The random draw comes from the link's own seeded stream (`link:NAME:pie`).

use super::queue::QueuedPacket;
use crate::rng::Stream;
use crate::Nanos;

/// pie.h: `MAX_PROB (U64_MAX >> BITS_PER_BYTE)`.
const MAX_PROB: u64 = u64::MAX >> 8;
/// psched ticks: 2^6 ns (`PSCHED_SHIFT`).
const PSCHED_SHIFT: u32 = 6;
const PSCHED_TICKS_PER_SEC: u64 = 1_000_000_000 >> PSCHED_SHIFT;
/// pie.h: `DTIME_INVALID`.
const DTIME_INVALID: u64 = u64::MAX;
/// sch_pie.c pie_init: the first update 500 ms (`HZ / 2`) after the qdisc starts.
const FIRST_UPDATE_NS: Nanos = 500_000_000;
/// `psched_mtu` of a 1500-byte MTU Ethernet device.
const MTU_BYTES: u64 = 1514;

fn ticks(ns: Nanos) -> u64 {
    ns >> PSCHED_SHIFT
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieParams {
    pub target_ns: Nanos,
    pub tupdate_ns: Nanos,
    /// In units of 1/16 Hz (Linux: alpha 2 = 0.125, beta 20 = 1.25).
    pub alpha: u32,
    pub beta: u32,
    pub max_burst_ns: Nanos,
}

/// pie.h `struct pie_vars` (the estimator's fields are not needed without it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieVars {
    pub qdelay: u64,
    pub qdelay_old: u64,
    pub burst_time: u64,
    pub dq_tstamp: u64,
    pub prob: u64,
    pub accu_prob: u64,
}

pub struct Pie {
    params: PieParams,
    target: u64,
    pub vars: PieVars,
    next_update: Nanos,
    rng: Stream,
}

impl Pie {
    pub fn new(params: PieParams, rng: Stream) -> Self {
        let mut pie = Pie {
            params,
            target: ticks(params.target_ns),
            vars: PieVars {
                qdelay: 0,
                qdelay_old: 0,
                burst_time: 0,
                dq_tstamp: DTIME_INVALID,
                prob: 0,
                accu_prob: 0,
            },
            next_update: FIRST_UPDATE_NS,
            rng,
        };
        pie.vars_init();
        pie
    }

    /// pie_vars_init (leaves `prob`, `qdelay` and `qdelay_old`, as Linux does).
    fn vars_init(&mut self) {
        self.vars.burst_time = ticks(self.params.max_burst_ns);
        self.vars.dq_tstamp = DTIME_INVALID;
        self.vars.accu_prob = 0;
    }

    /// The drop probability, as a fraction.
    #[cfg(test)]
    fn probability(&self) -> f64 {
        self.vars.prob as f64 / MAX_PROB as f64
    }

    /// Runs the probability updates due at or before `now` (the timer), with the backlog the
    /// queue has held since the last packet event.
    #[inline]
    pub fn catch_up(&mut self, now: Nanos, backlog: u64) {
        while self.next_update <= now {
            self.calculate_probability(backlog);
            self.next_update += self.params.tupdate_ns;
        }
    }

    /// pie_drop_early: whether to drop a packet arriving to a queue of `backlog` bytes.
    pub fn drop_early(&mut self, backlog: u64) -> bool {
        let v = &mut self.vars;
        if v.burst_time > 0 {
            return false;
        }
        if v.qdelay < self.target / 2 && v.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * MTU_BYTES {
            return false;
        }
        let local_prob = v.prob;
        if local_prob == 0 {
            v.accu_prob = 0;
        } else {
            v.accu_prob = v.accu_prob.wrapping_add(local_prob);
        }
        if v.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if v.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        let rnd = self.rng.next_u64();
        if (rnd >> 8) < local_prob {
            self.vars.accu_prob = 0;
            return true;
        }
        false
    }

    /// pie_process_dequeue without the rate estimator: the departing packet's sojourn is the
    /// queueing delay; the burst allowance drains by the time since the previous departure.
    pub fn process_dequeue(&mut self, now: Nanos, p: &QueuedPacket, backlog_after: u64) {
        let now_t = ticks(now);
        let v = &mut self.vars;
        v.qdelay = now_t.wrapping_sub(ticks(p.enqueued_at));
        let dtime = if v.dq_tstamp != DTIME_INVALID {
            now_t.wrapping_sub(v.dq_tstamp)
        } else {
            0
        };
        v.dq_tstamp = now_t;
        if backlog_after == 0 {
            v.qdelay = 0;
        }
        if dtime == 0 {
            return;
        }
        if v.burst_time > 0 {
            v.burst_time = v.burst_time.saturating_sub(dtime);
        }
    }

    /// pie_calculate_probability (timestamp mode).
    fn calculate_probability(&mut self, backlog: u64) {
        let target = self.target;
        let v = &mut self.vars;
        let qdelay = v.qdelay;
        let qdelay_old = v.qdelay_old;
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        // alpha and beta in 1/16 Hz, scaled to probability per tick.
        let mut alpha = (u64::from(self.params.alpha) * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        let mut beta = (u64::from(self.params.beta) * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        if v.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power: u64 = 100;
            while v.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // s64 arithmetic on u64 operands, as the kernel's (two's complement wraps the same).
        let mut delta: i64 = (alpha as i64).wrapping_mul(qdelay.wrapping_sub(target) as i64);
        delta =
            delta.wrapping_add((beta as i64).wrapping_mul(qdelay.wrapping_sub(qdelay_old) as i64));
        let oldprob = v.prob;
        if delta > (MAX_PROB / (100 / 2)) as i64 && v.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        // Non-linear drop: above 250 ms of delay, +2 % per update.
        if qdelay > ticks(250_000_000) {
            delta = delta.wrapping_add((MAX_PROB / (100 / 2)) as i64);
        }
        v.prob = v.prob.wrapping_add_signed(delta);
        if delta > 0 {
            if v.prob < oldprob {
                v.prob = MAX_PROB;
                update_prob = false;
            }
        } else if v.prob > oldprob {
            v.prob = 0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            v.prob -= v.prob / 64;
        }
        v.qdelay = qdelay;
        if v.qdelay < target / 2 && v.qdelay_old < target / 2 && v.prob == 0 {
            self.vars_init();
        }
        self.vars.qdelay_old = qdelay;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pie() -> Pie {
        Pie::new(
            PieParams {
                target_ns: 15_000_000,
                tupdate_ns: 15_000_000,
                alpha: 2,
                beta: 20,
                max_burst_ns: 150_000_000,
            },
            Stream::new(1, "test"),
        )
    }

    #[test]
    fn one_update_moves_the_probability_by_alpha_and_beta() {
        // qdelay 35 ms, previously 25 ms, probability 20 % (no scaling of alpha and beta):
        // delta = 0.125/s · 20 ms + 1.25/s · 10 ms = 0.0025 + 0.0125 = 1.5 %.
        let mut p = pie();
        p.vars.prob = MAX_PROB / 5;
        p.vars.qdelay = ticks(35_000_000);
        p.vars.qdelay_old = ticks(25_000_000);
        p.calculate_probability(100_000);
        let got = p.probability() - 0.2;
        assert!((got - 0.015).abs() < 1e-4, "{got}");
        assert_eq!(p.vars.qdelay_old, ticks(35_000_000));
    }

    #[test]
    fn small_probabilities_scale_alpha_and_beta_down() {
        // At prob < 1 %: alpha and beta are halved, then quartered once per decade below 1 %
        // (RFC 8033 §5.2's table): from 0.5 % (one decade: /8 in all) the same delays give
        // 1.5 % / 8 = 0.1875 %.
        let mut p = pie();
        p.vars.prob = MAX_PROB / 200;
        p.vars.qdelay = ticks(35_000_000);
        p.vars.qdelay_old = ticks(25_000_000);
        p.calculate_probability(100_000);
        let got = p.probability() - 0.005;
        assert!((got - 0.001875).abs() < 2e-5, "{got}");
    }

    #[test]
    fn no_early_drop_during_the_burst_allowance_or_below_two_mtus() {
        let mut p = pie();
        p.vars.prob = MAX_PROB; // would always drop
        p.vars.qdelay = ticks(100_000_000);
        assert!(!p.drop_early(1_000_000), "burst allowance");
        p.vars.burst_time = 0;
        assert!(!p.drop_early(2 * MTU_BYTES - 1), "under two MTUs");
        assert!(p.drop_early(1_000_000));
    }

    #[test]
    fn updates_run_every_tupdate_from_500_ms() {
        let mut p = pie();
        p.vars.qdelay = ticks(30_000_000);
        p.catch_up(499_999_999, 100_000);
        assert_eq!(p.vars.prob, 0);
        p.catch_up(500_000_000 + 2 * 15_000_000, 100_000); // three updates: 500, 515, 530 ms
        assert_eq!(p.next_update, 545_000_000);
        assert!(p.vars.prob > 0);
    }
}
