//! RFC 8382 shared-bottleneck detection at the receiver, as MPTCP-SSCC's Dynamic Coupling
//! Module runs it (Yang's thesis §5.4.2, seed 000 §4.3; the MPTCP-SBD code of the SSCC kernel
//! fork, `net/mptcp/mptcp_sbd.c` and `mptcp_input.c`, read for the [CODE] details).
//!
//! # The idea
//!
//! Subflows that cross one bottleneck queue in one buffer, so the *shapes* of their one-way
//! delays (OWD) move together: the same skew toward high delays while the queue builds, the same
//! variability, the same rhythm of excursions. The receiver measures each subflow's OWD from the
//! sender's timestamp on every segment and groups subflows whose summary statistics agree. Only
//! differences and statistics of OWDs are used, so the clocks need not be synchronised.
//!
//! ```text
//!  sender ─ segment (timestamp, loss signal) ─▶ receiver: per subflow, per T = 350 ms interval:
//!                                                 C_k, Σ OWD, skew counts, |OWD − OWD̄_{k−1}|, losses
//!                                               end of an interval (any subflow's first segment
//!                                               of the next one): features over the last N = 50
//!                                               intervals (stats.rs, Eqs. 5.1–5.7) → one decision
//!                                               (grouping.rs, Fig. 5.6) → every D = 10 decisions
//!                                               the merge (pairwise, together in ≥ 5)
//!  sender ◀─ ACK (the grouping, MPTCP Group option) ─┘
//!  coupling: subflows of a set of ≥ 2 coupled (OLIA* over the set); non-congested subflows,
//!            subflows in no set and sets of one uncoupled
//! ```
//!
//! # How rove models the wire
//!
//! - **Timestamps.** Every segment carries its send time (`Packet::sent_at`, set on every
//!   transmission, retransmissions included): MPTCP-SSCC's timestamp option. The OWD is the
//!   arrival time minus it ([`SegmentObservation::owd_ns`]). The option carries microseconds;
//!   rove's nanoseconds only refine it.
//! - **Loss signals (the option's L bit).** The sender counts the packets it marks lost and each
//!   segment it sends signals one of them; the receiver counts the signals per interval. Here a
//!   segment signals one loss when the sender's count ([`SegmentObservation::sender_lost_pkts`])
//!   exceeds the losses already signalled on that subflow. [GAP, simplification] the count is
//!   read when the segment arrives, not when it left: a loss is signalled up to one one-way delay
//!   early, and a signal is not lost with the segment that carries it.
//! - **Sample spacing.** [CODE] `sysctl_mptcp_sbd_sample_spacing` = 5 ms: at most one OWD sample
//!   per subflow per 5 ms (`sample_spacing_ms`; 0 samples every segment). Every segment counts for
//!   the loss rate.
//! - **Intervals** are numbered from the first segment's arrival (the receiver's connection,
//!   `mpcb->start_ns`, [GAP] its first data rather than its SYN). An interval ends when a segment
//!   of a later interval arrives on any subflow; then every subflow's features are computed and
//!   one decision is made (once, however many intervals passed, as the kernel does).
//! - **Feedback.** The receiver sends its grouping on its ACKs (the MPTCP Group option); the
//!   sender applies the grouping of the most recent merge made before the latest ACK it has
//!   received left the receiver ([`AckObservation::sent_at`]). The option carries one subflow's
//!   group per ACK; [GAP, simplification] one ACK here carries the whole grouping. The connection
//!   reads the applied grouping every `interval_ms` (the detectors' common key, default 100 ms).
//!
//! # Stabilisation
//!
//! The thesis: "records the latest D grouping decision results (D = 10), and selects the most
//! popular grouping decision (the decision appeared in more than half of the recent D
//! decisions)". [CODE] `mptcp_execute_sbd` merges the decisions in batches of ten (a new grouping
//! every 3.5 s) with a pairwise threshold of five. `stabilisation = "batch"` (default, the code
//! the thesis's experiments ran) or `"sliding"` (the text: the last D decisions, merged after
//! every decision once D exist); `together` is the threshold (default 5, the code's).
//!
//! # Parameters (Table 5.1 unless said)
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `t_ms` | 350 | T, the measurement interval |
//! | `n` | 50 | N, intervals of history |
//! | `c_s` | −0.01 | skew_est below it: congested |
//! | `c_h` | 0.3 | skew_est below it: still congested if it was (hysteresis) |
//! | `p_f` | 0.1 | freq_est difference that splits (absolute) |
//! | `p_s` | 0.1 | skew_est difference that splits (absolute) |
//! | `p_v` | 0.7 | crossing band: OWD̄ ± p_v·var_est |
//! | `p_mad` | 0.1 | var_est difference that splits (relative to the higher) |
//! | `p_d` | 0.1 | loss-rate difference that splits (relative to the higher) |
//! | `p_l` | 0.1 | loss rate that makes a subflow congested and splits by loss |
//! | `decisions` | 10 | D, decisions merged (thesis §5.4.2) |
//! | `together` | 5 | decisions of D a pair must share ([CODE]) |
//! | `stabilisation` | `"batch"` | `"batch"` ([CODE]) or `"sliding"` (thesis text) |
//! | `sample_spacing_ms` | 5 | at most one OWD sample per subflow per this many ms ([CODE]); 0: all |
//!
//! The statistics' own [GAP] choices (a sample with no reference mean, the loss rate's
//! denominator) are in [`stats`]; the grouping's [CODE] details in [`grouping`]. Floating point
//! replaces the kernel's fixed point (skewness in 1/1000, var_est in 1/8 µs, truncated).
//!
//! # In whole runs (crates/world/tests/sscc.rs)
//!
//! Two subflows behind one 20 Mbit/s bottleneck with a Reno flow are grouped at the first merge
//! (3.7 s) and grouped 77 % of the time: their var_est, each sampled when its own subflow sends,
//! sometimes differ by more than p_mad. Disjoint bottlenecks that differ are never grouped. Two
//! *identical* disjoint bottlenecks are grouped about half the time: RFC 8382 compares summary
//! statistics, not their timing, and identical independent queues have the same statistics.

pub mod grouping;
pub mod stats;

use super::{
    real, AckObservation, Common, Detector, SegmentObservation, COMMON_KEYS, MAX_SUBFLOWS,
};
use grouping::{Decision, Thresholds};
use rove_sim::{Nanos, NS_PER_MS};
use rove_tcp::cc::{params, reject_unknown, ParamError};
use stats::{Features, SubflowStats};

pub const PARAM_KEYS: &[&str] = &[
    "t_ms",
    "n",
    "c_s",
    "c_h",
    "p_f",
    "p_s",
    "p_v",
    "p_mad",
    "p_d",
    "p_l",
    "decisions",
    "together",
    "stabilisation",
    "sample_spacing_ms",
];

/// T, ms (Table 5.1).
pub const T_MS: u32 = 350;
/// N, intervals (Table 5.1).
pub const N: u32 = 50;
/// c_s (Table 5.1).
pub const C_S: f64 = -0.01;
/// c_h (Table 5.1).
pub const C_H: f64 = 0.3;
/// p_f (Table 5.1).
pub const P_F: f64 = 0.1;
/// p_s (Table 5.1).
pub const P_S: f64 = 0.1;
/// p_v (Table 5.1).
pub const P_V: f64 = 0.7;
/// p_mad (Table 5.1).
pub const P_MAD: f64 = 0.1;
/// p_d (Table 5.1).
pub const P_D: f64 = 0.1;
/// p_l (Table 5.1).
pub const P_L: f64 = 0.1;
/// D, decisions remembered (thesis §5.4.2).
pub const DECISIONS: u32 = 10;
/// Pairwise threshold of the merge: `merge_observations(..., 5)` in mptcp_sbd.c.
pub const TOGETHER: u32 = 5;
/// `sysctl_mptcp_sbd_sample_spacing` (mptcp_ctrl.c), ms.
pub const SAMPLE_SPACING_MS: u32 = 5;
/// Merged groupings the receiver has sent and the sender has not yet received (a bound for
/// the ring; an older one is dropped when it is full, the newer ones supersede it anyway).
const PENDING: usize = 16;

/// How the decisions are stabilised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stabilisation {
    /// Merge every D decisions, then start afresh ([CODE]).
    Batch,
    /// Merge the last D decisions after every decision (the thesis's text).
    Sliding,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rfc8382Params {
    pub t: Nanos,
    pub n: usize,
    pub thresholds: Thresholds,
    pub p_v: f64,
    pub decisions: usize,
    pub together: u32,
    pub stabilisation: Stabilisation,
    /// 0: every segment is a sample.
    pub sample_spacing: Nanos,
}

impl Default for Rfc8382Params {
    fn default() -> Self {
        Rfc8382Params {
            t: T_MS as Nanos * NS_PER_MS,
            n: N as usize,
            thresholds: Thresholds {
                c_s: C_S,
                c_h: C_H,
                p_f: P_F,
                p_s: P_S,
                p_mad: P_MAD,
                p_d: P_D,
                p_l: P_L,
            },
            p_v: P_V,
            decisions: DECISIONS as usize,
            together: TOGETHER,
            stabilisation: Stabilisation::Batch,
            sample_spacing: SAMPLE_SPACING_MS as Nanos * NS_PER_MS,
        }
    }
}

impl Rfc8382Params {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        let keys: Vec<&str> = COMMON_KEYS.iter().chain(PARAM_KEYS).copied().collect();
        reject_unknown(t, &keys)?;
        let fraction = |key: &str, default: f64| real(t, key, default, 0.0, 1.0, "a fraction");
        let skew = |key: &str, default: f64| real(t, key, default, -1.0, 1.0, "skew_est units");
        let decisions = params::integer(t, "decisions", DECISIONS, 1, 64, "decisions")?;
        let together = params::integer(t, "together", TOGETHER, 1, 64, "decisions")?;
        if together > decisions {
            return Err(ParamError {
                key: "together".to_string(),
                message: format!(
                    "{together} is more than `decisions` ({decisions}); accepted: an integer in 1..={decisions}"
                ),
            });
        }
        Ok(Rfc8382Params {
            t: params::integer(t, "t_ms", T_MS, 1, 60_000, "ms")? as Nanos * NS_PER_MS,
            n: params::integer(t, "n", N, 1, 1000, "intervals")? as usize,
            thresholds: Thresholds {
                c_s: skew("c_s", C_S)?,
                c_h: skew("c_h", C_H)?,
                p_f: fraction("p_f", P_F)?,
                p_s: real(t, "p_s", P_S, 0.0, 2.0, "skew_est units")?,
                p_mad: fraction("p_mad", P_MAD)?,
                p_d: fraction("p_d", P_D)?,
                p_l: fraction("p_l", P_L)?,
            },
            p_v: real(t, "p_v", P_V, 0.0, 100.0, "multiples of var_est")?,
            decisions: decisions as usize,
            together,
            stabilisation: match params::choice(t, "stabilisation", "batch", &["batch", "sliding"])?
            {
                "sliding" => Stabilisation::Sliding,
                _ => Stabilisation::Batch,
            },
            sample_spacing: params::integer(
                t,
                "sample_spacing_ms",
                SAMPLE_SPACING_MS,
                0,
                60_000,
                "ms",
            )? as Nanos
                * NS_PER_MS,
        })
    }
}

/// One subflow at the receiver.
struct Flow {
    stats: SubflowStats,
    /// Loss signals received (the sender's count they have caught up with).
    signalled_losses: u64,
    /// PB: congested at the last decision.
    previously_congested: bool,
}

pub struct Rfc8382 {
    p: Rfc8382Params,
    interval: Nanos,
    /// Arrival of the first segment: interval 0 starts here.
    origin: Option<Nanos>,
    /// The current interval's number.
    current: u64,
    /// Per subflow index, once it has sent a segment.
    flows: Vec<Option<Flow>>,
    /// Subflows seen: indices below this.
    n: usize,
    /// The last D decisions (a ring) and how many it holds.
    recent: Vec<Decision>,
    recent_len: usize,
    recent_next: usize,
    /// Decisions since the last batch merge.
    since_merge: usize,
    /// Merged groupings not yet received by the sender: (time made, partition), oldest first.
    pending: [(Nanos, [u8; MAX_SUBFLOWS]); PENDING],
    pending_head: usize,
    pending_len: usize,
    /// The grouping the sender applies (set ids, ids < 64; subflow i alone: i).
    applied: [u8; MAX_SUBFLOWS],
    /// The latest departure time of an ACK the sender has received.
    latest_ack_sent_at: Option<Nanos>,
    /// Decisions and merges made (diagnostics).
    pub decisions_made: u64,
    pub merges_made: u64,
}

pub(in crate::detect) fn build(
    t: &toml::Table,
    common: Common,
    _subflows: usize,
) -> Result<Box<dyn Detector>, ParamError> {
    Ok(Box::new(Rfc8382::new(
        Rfc8382Params::from_table(t)?,
        common,
    )))
}

fn identity() -> [u8; MAX_SUBFLOWS] {
    let mut a = [0u8; MAX_SUBFLOWS];
    for (i, x) in a.iter_mut().enumerate() {
        *x = i as u8;
    }
    a
}

impl Rfc8382 {
    pub fn new(p: Rfc8382Params, common: Common) -> Self {
        Rfc8382 {
            interval: common.interval,
            origin: None,
            current: 0,
            flows: (0..MAX_SUBFLOWS).map(|_| None).collect(),
            n: 0,
            recent: vec![[grouping::ABSENT; MAX_SUBFLOWS]; p.decisions],
            recent_len: 0,
            recent_next: 0,
            since_merge: 0,
            pending: [(0, [0; MAX_SUBFLOWS]); PENDING],
            pending_head: 0,
            pending_len: 0,
            applied: identity(),
            latest_ack_sent_at: None,
            decisions_made: 0,
            merges_made: 0,
            p,
        }
    }

    /// Subflow `sub`'s features over its completed intervals, as the last decision saw them.
    pub fn features(&self, sub: usize) -> Option<Features> {
        self.flows.get(sub)?.as_ref()?.stats.features(self.p.p_v)
    }

    /// The most recent decision (labels per subflow), if any.
    pub fn last_decision(&self) -> Option<&Decision> {
        (self.recent_len > 0)
            .then(|| &self.recent[(self.recent_next + self.p.decisions - 1) % self.p.decisions])
    }

    /// Interval `k` has begun at `now`: every subflow's earlier intervals end, one decision is
    /// made, and the stabilisation may send a new grouping.
    fn end_intervals(&mut self, k: u64, now: Nanos) {
        self.current = k;
        let mut features = [None; MAX_SUBFLOWS];
        let mut pb = [false; MAX_SUBFLOWS];
        for (i, f) in self.flows[..self.n].iter_mut().enumerate() {
            if let Some(f) = f {
                f.stats.advance_to(k);
                features[i] = f.stats.features(self.p.p_v);
                pb[i] = f.previously_congested;
            }
        }
        let decision = grouping::decide(&features[..self.n], &mut pb[..self.n], &self.p.thresholds);
        for (i, f) in self.flows[..self.n].iter_mut().enumerate() {
            if let Some(f) = f {
                f.previously_congested = pb[i];
            }
        }
        self.decisions_made += 1;
        let d = self.p.decisions;
        self.recent[self.recent_next] = decision;
        self.recent_next = (self.recent_next + 1) % d;
        self.recent_len = (self.recent_len + 1).min(d);
        self.since_merge += 1;
        let merge_now = match self.p.stabilisation {
            Stabilisation::Batch => self.since_merge == d,
            Stabilisation::Sliding => self.recent_len == d,
        };
        if merge_now {
            self.since_merge = 0;
            self.merges_made += 1;
            let merged = grouping::merge(&self.recent[..self.recent_len], self.n, self.p.together);
            let partition = grouping::sender_partition(&merged, self.n);
            self.send(now, partition);
        }
    }

    /// The receiver puts `partition` on its ACKs from `now` on.
    fn send(&mut self, now: Nanos, partition: [u8; MAX_SUBFLOWS]) {
        if self.pending_len == PENDING {
            self.pending_head = (self.pending_head + 1) % PENDING;
            self.pending_len -= 1;
        }
        let at = (self.pending_head + self.pending_len) % PENDING;
        self.pending[at] = (now, partition);
        self.pending_len += 1;
    }

    /// The sender applies every grouping made before the latest ACK it received left.
    fn receive(&mut self) {
        let Some(latest) = self.latest_ack_sent_at else {
            return;
        };
        while self.pending_len > 0 {
            let (made, partition) = self.pending[self.pending_head];
            if made > latest {
                break;
            }
            self.applied = partition;
            self.pending_head = (self.pending_head + 1) % PENDING;
            self.pending_len -= 1;
        }
    }
}

impl Detector for Rfc8382 {
    fn name(&self) -> &'static str {
        "rfc8382"
    }

    fn on_ack(&mut self, _sub: usize, obs: &AckObservation) {
        self.latest_ack_sent_at = Some(
            self.latest_ack_sent_at
                .map_or(obs.sent_at, |t| t.max(obs.sent_at)),
        );
        self.receive();
    }

    /// The receiver learns of losses from the loss signals on segments, not from the sender.
    fn on_loss_event(&mut self, _sub: usize, _now: Nanos) {}

    fn on_segment(&mut self, sub: usize, obs: &SegmentObservation) {
        if sub >= MAX_SUBFLOWS {
            return;
        }
        let origin = *self.origin.get_or_insert(obs.now);
        let since = obs.now.saturating_sub(origin);
        let k = since / self.p.t;
        if k > self.current {
            self.end_intervals(k, obs.now);
        }
        let n = self.p.n;
        let flow = self.flows[sub].get_or_insert_with(|| Flow {
            stats: SubflowStats::new(n, k),
            signalled_losses: 0,
            previously_congested: false,
        });
        self.n = self.n.max(sub + 1);
        let loss = obs.sender_lost_pkts > flow.signalled_losses;
        flow.signalled_losses += loss as u64;
        let slot = (self.p.sample_spacing > 0).then(|| since / self.p.sample_spacing);
        flow.stats.record(obs.owd_ns, loss, slot);
    }

    fn partition(&mut self, _now: Nanos, groups: &mut [u32]) {
        self.receive();
        for (i, g) in groups.iter_mut().enumerate() {
            *g = if i < MAX_SUBFLOWS {
                self.applied[i] as u32
            } else {
                i as u32
            };
        }
    }

    fn interval(&self) -> Nanos {
        self.interval
    }
}

#[cfg(test)]
mod tests;
