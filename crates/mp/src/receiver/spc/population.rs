//! Algorithm 2 of seed 003 (§4.4): which subflow gets the next intentional 3-dup-ACK, which is
//! switched off, which comes back on. Pure state over the arrivals it is told about; the
//! behaviour (`super`) feeds it and turns its [`Act`]s into receiver actions.
//!
//! ```text
//! on a data segment on subflow s at t, with RTT sample R:
//!   R ≥ RTT_min + σ_RTT (codel::RttStats)  and  t ≥ t_dup (codel::Schedule):
//!       some active subflow is not in R_F → 3-dup-ACK the one of highest throughput over the
//!                                           last RTT, add it to R_F
//!       else                              → switch one of R_F off (withhold its ACKs), add it
//!                                           to R_O
//!       cnt += 1, Δ by the control law, t_dup = t + Δ
//!   below the target:  Δ = interval, cnt = 0;  if R_O ≠ ∅ and t − t_on ≥ R: switch one on
//!                      (release an ACK), t_on = t
//!   s's duplicate-ACK episode was repaired (the sender retransmitted the held segment): R_F −= s
//! ```
//!
//! "Active" subflows are the open ones not switched off (R ∖ R_O); R_F and R_O are bit sets.
//!
//! [GAP] choices (the dissertation is silent; seed 003 §4.4's notes):
//! * Throughput over "one RTT": bytes per subflow counted in epochs of one SRTT (all subflows
//!   share the epoch boundaries, so comparing the last complete epoch's bytes compares rates);
//!   an epoch with no arrival counts zero. Before the first RTT sample an epoch is one interval
//!   (100 ms).
//! * Ties for the highest throughput go round robin: to the first tied subflow after the one
//!   chosen last ("highest-throughput-first round robin").
//! * Line 9 names no rule for which subflow of R_F goes off: the one of lowest throughput over
//!   the last RTT (it carries least), ties to the highest index. At least `min_active`
//!   subflows stay on (default 1; the dissertation never reaches it).
//! * Which subflow of R_O comes on first: the last one switched off (the seed summary's
//!   suggestion). Switching it on also removes it from R_F ("turning one on resets the
//!   3-dup-ACK count": its sender restarts from an RTO).
//! * An off subflow is never chosen for a 3-dup-ACK (line 5 reads r ∉ R_F; an off subflow whose
//!   RTO retransmission repaired its episode would otherwise qualify with zero throughput).

use super::codel::{ControlLaw, RttStats, Schedule};
use crate::{SubflowMask, MAX_SUBFLOWS};
use rove_sim::Nanos;

/// What Algorithm 2 decided at one arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// Line 7: an intentional 3-dup-ACK on this subflow.
    DupAcks(usize),
    /// Line 9: withhold this subflow's ACKs (its sender falls into RTO).
    Off(usize),
    /// Line 20: send this subflow one ACK and stop withholding.
    On(usize),
}

/// One data segment as Algorithm 2 sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub now: Nanos,
    pub sub: usize,
    pub payload_bytes: u32,
    /// The RTT sample this segment gives (`None`: none, e.g. no echoed timestamp yet).
    pub rtt_ns: Option<Nanos>,
    /// The subflow's intentional duplicate-ACK episode is over (or none runs): line 25.
    pub repaired: bool,
}

/// Per-subflow bytes over the last complete epoch of one RTT, and the epoch being counted.
#[derive(Debug, Clone, PartialEq)]
struct Throughput {
    epoch_start: Nanos,
    current: [u64; MAX_SUBFLOWS],
    last: [u64; MAX_SUBFLOWS],
}

impl Throughput {
    fn count(&mut self, now: Nanos, epoch_ns: Nanos, sub: usize, bytes: u32) {
        if now >= self.epoch_start + epoch_ns {
            // A gap of more than one epoch: the last complete one had nothing.
            self.last = if now >= self.epoch_start + 2 * epoch_ns {
                [0; MAX_SUBFLOWS]
            } else {
                self.current
            };
            self.current = [0; MAX_SUBFLOWS];
            self.epoch_start = now;
        }
        self.current[sub] += bytes as u64;
    }
}

/// Algorithm 2's state.
#[derive(Debug, Clone, PartialEq)]
pub struct Population {
    pub rtt: RttStats,
    pub schedule: Schedule,
    min_active: usize,
    /// R: the open subflows.
    open: SubflowMask,
    /// R_F: subflows sent a 3-dup-ACK whose episode is not repaired yet.
    pub fast_recovery: SubflowMask,
    /// R_O in the order switched off (the last is the first on).
    off: [u8; MAX_SUBFLOWS],
    off_len: usize,
    t_on: Nanos,
    /// The subflow chosen for the last 3-dup-ACK (round robin among ties).
    last_chosen: usize,
    throughput: Throughput,
    /// Counts of each action, for the results.
    pub dup_acks: u64,
    pub turned_off: u64,
    pub turned_on: u64,
}

fn bit(sub: usize) -> SubflowMask {
    1 << sub
}

impl Population {
    pub fn new(interval_ns: Nanos, law: ControlLaw, min_active: usize) -> Self {
        Population {
            rtt: RttStats::default(),
            schedule: Schedule::new(interval_ns, law),
            min_active: min_active.max(1),
            open: 0,
            fast_recovery: 0,
            off: [0; MAX_SUBFLOWS],
            off_len: 0,
            t_on: 0,
            last_chosen: MAX_SUBFLOWS - 1,
            throughput: Throughput {
                epoch_start: 0,
                current: [0; MAX_SUBFLOWS],
                last: [0; MAX_SUBFLOWS],
            },
            dup_acks: 0,
            turned_off: 0,
            turned_on: 0,
        }
    }

    /// Subflow `sub` is open (`true`) or closed: R.
    pub fn set_open(&mut self, sub: usize, open: bool) {
        if open {
            self.open |= bit(sub);
        } else {
            self.open &= !bit(sub);
            self.fast_recovery &= !bit(sub);
            self.remove_off(sub);
        }
    }

    /// R_O as a bit set.
    pub fn off_mask(&self) -> SubflowMask {
        self.off[..self.off_len]
            .iter()
            .fold(0, |m, &s| m | bit(s as usize))
    }

    /// Open subflows not switched off.
    pub fn active(&self) -> u32 {
        (self.open & !self.off_mask()).count_ones()
    }

    fn remove_off(&mut self, sub: usize) {
        if let Some(k) = self.off[..self.off_len]
            .iter()
            .position(|&s| s as usize == sub)
        {
            self.off.copy_within(k + 1..self.off_len, k);
            self.off_len -= 1;
        }
    }

    /// Bytes of subflow `sub` over the last complete epoch.
    pub fn last_epoch_bytes(&self, sub: usize) -> u64 {
        self.throughput.last[sub]
    }

    /// Algorithm 2 at one arrival; at most one action.
    pub fn on_arrival(&mut self, a: &Arrival) -> Option<Act> {
        self.open |= bit(a.sub);
        let epoch_ns = if self.rtt.ready() {
            self.rtt.srtt_ns.max(1)
        } else {
            self.schedule.interval_ns
        };
        self.throughput
            .count(a.now, epoch_ns, a.sub, a.payload_bytes);
        // Lines 25–27.
        if a.repaired {
            self.fast_recovery &= !bit(a.sub);
        }
        let r = a.rtt_ns?;
        self.rtt.update(r);
        if self.rtt.above_target(r) {
            if !self.schedule.due(a.now) {
                return None;
            }
            let act = self.act_above()?;
            self.schedule.acted(a.now);
            Some(act)
        } else {
            self.schedule.reset();
            if self.off_len > 0 && a.now.saturating_sub(self.t_on) >= r {
                self.off_len -= 1;
                let sub = self.off[self.off_len] as usize;
                self.fast_recovery &= !bit(sub);
                self.t_on = a.now;
                self.turned_on += 1;
                return Some(Act::On(sub));
            }
            None
        }
    }

    /// Lines 4–11: a 3-dup-ACK to the fastest active subflow not in R_F, or one of R_F off.
    /// `None` when neither is possible (every active subflow in R_F and `min_active` left).
    fn act_above(&mut self) -> Option<Act> {
        let active = self.open & !self.off_mask();
        let candidates = active & !self.fast_recovery;
        if candidates != 0 {
            let sub = self.fastest(candidates);
            self.fast_recovery |= bit(sub);
            self.last_chosen = sub;
            self.dup_acks += 1;
            return Some(Act::DupAcks(sub));
        }
        if (active.count_ones() as usize) <= self.min_active {
            return None;
        }
        let sub = self.slowest(active & self.fast_recovery)?;
        self.off[self.off_len] = sub as u8;
        self.off_len += 1;
        self.turned_off += 1;
        Some(Act::Off(sub))
    }

    /// The subflow of `set` with the most bytes last epoch; ties to the first after
    /// `last_chosen` in cyclic order.
    fn fastest(&self, set: SubflowMask) -> usize {
        let mut best: Option<(u64, usize)> = None;
        for k in 1..=MAX_SUBFLOWS {
            let s = (self.last_chosen + k) % MAX_SUBFLOWS;
            if set & bit(s) == 0 {
                continue;
            }
            let b = self.throughput.last[s];
            if best.is_none_or(|(bb, _)| b > bb) {
                best = Some((b, s));
            }
        }
        best.expect("a non-empty set").1
    }

    /// The subflow of `set` with the fewest bytes last epoch; ties to the highest index.
    fn slowest(&self, set: SubflowMask) -> Option<usize> {
        (0..MAX_SUBFLOWS)
            .filter(|&s| set & bit(s) != 0)
            .min_by_key(|&s| (self.throughput.last[s], std::cmp::Reverse(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::codel::INTERVAL_NS;
    use super::*;

    const MS: Nanos = 1_000_000;

    fn arrival(now_ms: u64, sub: usize, rtt_ms: Option<u64>) -> Arrival {
        Arrival {
            now: now_ms * MS,
            sub,
            payload_bytes: 1448,
            rtt_ns: rtt_ms.map(|r| r * MS),
            repaired: false,
        }
    }

    fn population(subflows: usize) -> Population {
        let mut p = Population::new(INTERVAL_NS, ControlLaw::Standard, 1);
        for s in 0..subflows {
            p.set_open(s, true);
        }
        p
    }

    /// Builds the RTT statistics: SRTT 50 ms, RTTVAR 25·(3/4)^4 = 7.91 ms, RTT_min 50 ms.
    fn settled(p: &mut Population, subflows: usize) {
        for k in 0..5 {
            assert_eq!(p.on_arrival(&arrival(k, k as usize % subflows, Some(50))), None);
        }
        assert_eq!(p.rtt.rttvar_ns, 7_910_156);
    }

    #[test]
    fn no_sample_no_decision() {
        let mut p = population(2);
        assert_eq!(p.on_arrival(&arrival(0, 0, None)), None);
        assert!(!p.rtt.ready());
    }

    #[test]
    fn above_the_target_the_fastest_subflow_gets_the_dup_acks_on_the_codel_schedule() {
        let mut p = population(3);
        settled(&mut p, 3);
        // One epoch (SRTT = 50 ms) with subflow 1 carrying most: 3 segments, the others 1.
        for (t, s) in [(60, 0), (61, 1), (62, 1), (63, 1), (64, 2)] {
            assert_eq!(p.on_arrival(&arrival(t, s, Some(50))), None);
        }
        // At 110 ms the epoch opened at 60 ms closes: last = [1, 3, 1] segments. RTTVAR was
        // 25·(3/4)^9 = 1.88 ms; the 60-ms sample makes it ¾·1.88 + ¼·10 = 3.91 ms, and
        // 60 − 50 = 10 ms ≥ 3.91 ms: above the target, and t_dup = 0 has passed.
        assert_eq!(p.on_arrival(&arrival(110, 0, Some(60))), Some(Act::DupAcks(1)));
        assert_eq!(p.last_epoch_bytes(1), 3 * 1448);
        // t_dup = 110 + 100 ms: nothing before 210 ms however high the RTT.
        assert_eq!(p.on_arrival(&arrival(209, 2, Some(80))), None);
        // At 209 ms the epoch [110, 209) closed (SRTT 51.25 ms) with only subflow 0's segment
        // of 110 ms: at 210 ms subflow 0 is the fastest not in R_F.
        assert_eq!(p.on_arrival(&arrival(210, 2, Some(80))), Some(Act::DupAcks(0)));
        assert_eq!(p.schedule.count, 2);
        // Second gap: 100/√2 ms = 70.71 ms.
        assert_eq!(p.schedule.next_ns, 210 * MS + 70_710_678);
        // Then the last one left, though it carried nothing.
        let next = p.schedule.next_ns / MS + 1;
        assert_eq!(p.on_arrival(&arrival(next, 0, Some(80))), Some(Act::DupAcks(2)));
        assert_eq!(p.fast_recovery, 0b111);
    }

    #[test]
    fn ties_for_the_highest_throughput_go_round_robin() {
        let mut p = population(4);
        p.throughput.last[..4].copy_from_slice(&[5, 9, 9, 9]);
        // Subflows 1, 2, 3 tie at 9: the first after the last chosen, cyclically.
        p.last_chosen = 2;
        assert_eq!(p.fastest(0b1111), 3);
        p.last_chosen = 3;
        assert_eq!(p.fastest(0b1111), 1);
        // Without the tied ones, 0 is the fastest left.
        assert_eq!(p.fastest(0b0001), 0);
        // The slowest goes off; ties to the highest index.
        p.throughput.last[..4].copy_from_slice(&[5, 2, 9, 2]);
        assert_eq!(p.slowest(0b1111), Some(3));
        assert_eq!(p.slowest(0b0111), Some(1));
        assert_eq!(p.slowest(0), None);
    }

    #[test]
    fn when_every_active_subflow_is_in_fast_recovery_one_is_switched_off() {
        let mut p = population(2);
        settled(&mut p, 2);
        assert_eq!(p.on_arrival(&arrival(100, 0, Some(80))), Some(Act::DupAcks(0)));
        assert_eq!(p.on_arrival(&arrival(200, 0, Some(80))), Some(Act::DupAcks(1)));
        assert_eq!(p.fast_recovery, 0b11);
        // R_F = R: switch one off at t_dup = 200 + 70.71 ms: the slowest over the last epoch
        // ([200, 271): subflow 0's segment of 200 ms, none of 1), subflow 1.
        assert_eq!(p.on_arrival(&arrival(271, 0, Some(80))), Some(Act::Off(1)));
        assert_eq!((p.active(), p.off_mask()), (1, 0b10));
        // One active subflow left, all in R_F: min_active = 1 stops there.
        assert_eq!(p.on_arrival(&arrival(400, 0, Some(80))), None);
        assert_eq!((p.dup_acks, p.turned_off), (2, 1));
    }

    #[test]
    fn a_repaired_episode_leaves_fast_recovery() {
        let mut p = population(2);
        settled(&mut p, 2);
        assert_eq!(p.on_arrival(&arrival(100, 0, Some(80))), Some(Act::DupAcks(0)));
        let mut a = arrival(150, 0, Some(50));
        a.repaired = true;
        p.on_arrival(&a);
        assert_eq!(p.fast_recovery, 0);
    }

    #[test]
    fn below_the_target_the_schedule_resets_and_one_subflow_per_rtt_comes_back_last_off_first() {
        let mut p = population(3);
        settled(&mut p, 3);
        // Three dup-ACKs (0 then round robin 1, 2 at equal throughput), then two offs.
        let mut t = 100;
        let mut acts = Vec::new();
        for _ in 0..5 {
            let now = p.schedule.next_ns.max(t * MS);
            let mut a = arrival(0, 0, Some(90));
            a.now = now;
            acts.push(p.on_arrival(&a).unwrap());
            t = now / MS + 1;
        }
        assert_eq!(
            acts,
            vec![
                Act::DupAcks(0),
                Act::DupAcks(1),
                Act::DupAcks(2),
                Act::Off(2),
                Act::Off(1)
            ]
        );
        assert_eq!(p.schedule.count, 5);
        // A sample at the minimum: below; cnt 0, Δ 100 ms; t_on = 0, so 50 ms have passed
        // long ago: subflow 1 (the last off) comes on, and leaves R_F.
        let now = t + 10;
        assert_eq!(p.on_arrival(&arrival(now, 0, Some(50))), Some(Act::On(1)));
        assert_eq!((p.schedule.count, p.schedule.delta_ns), (0, INTERVAL_NS));
        assert_eq!(p.fast_recovery, 0b101);
        // Within one RTT (50 ms) of that, nothing more comes on; at 50 ms, subflow 2 does.
        assert_eq!(p.on_arrival(&arrival(now + 49, 0, Some(50))), None);
        assert_eq!(p.on_arrival(&arrival(now + 50, 0, Some(50))), Some(Act::On(2)));
        assert_eq!(p.active(), 3);
        assert_eq!((p.dup_acks, p.turned_off, p.turned_on), (3, 2, 2));
    }

    #[test]
    fn throughput_epochs_follow_srtt_and_a_long_gap_counts_zero() {
        let mut p = population(2);
        settled(&mut p, 2); // epoch start 0, SRTT 50 ms
        p.on_arrival(&arrival(10, 1, Some(50)));
        // 60 ms: the epoch [0, 60) closes: subflow 0 had 3 arrivals (0, 2, 4 ms), 1 had 3.
        p.on_arrival(&arrival(60, 0, Some(50)));
        assert_eq!((p.last_epoch_bytes(0), p.last_epoch_bytes(1)), (3 * 1448, 3 * 1448));
        // 200 ms: more than two epochs later: the last complete one was empty.
        p.on_arrival(&arrival(200, 0, Some(50)));
        assert_eq!((p.last_epoch_bytes(0), p.last_epoch_bytes(1)), (0, 0));
    }

    #[test]
    fn a_closed_subflow_leaves_every_set() {
        let mut p = population(3);
        settled(&mut p, 3);
        p.on_arrival(&arrival(100, 0, Some(90)));
        p.set_open(0, false);
        assert_eq!((p.fast_recovery, p.active()), (0, 2));
    }
}
