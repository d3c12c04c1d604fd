//! Packet schedulers: which subflow(s) carry the next data segment.
//!
//! A scheduler sees a snapshot of every subflow ([`SubflowInfo`]) and of the connection
//! ([`SchedContext`]) and answers with a [`Pick`]: new data on one subflow, new data duplicated
//! on several, an already-sent DSN on one subflow (for schedulers that keep several copies in
//! flight), new data queued on subflows' send queues, or wait. The connection asks again after
//! every hand-over until the answer is to wait, and again after every ACK and timer of any
//! subflow. Reinjections (data of a failed subflow) are served by the connection before it asks.
//!
//! **Per-subflow send queues.** Most schedulers hand a DSN to a subflow only when it has cwnd
//! space ([`Pick::New`]). A scheduler that plans ahead (BCCPS, seed 001 §2.5: "scheduling more
//! packets on a subflow than it can currently send, so queues build up at the sender") answers
//! [`Pick::Enqueue`]: the connection creates the next DSN and appends it to a connection-level
//! FIFO of every subflow in the mask (several bits: the same DSN on several subflows), whether
//! or not the subflow has cwnd space, and even while it is still joining. Whenever a usable
//! subflow has cwnd space the connection feeds it from the head of its FIFO before asking the
//! scheduler (after reinjections). Each FIFO holds DSNs in increasing order; a DSN DATA_ACKed
//! while still queued (another copy arrived) is dropped and counted (`Connection::queue_drops`);
//! a subflow that becomes potentially failed (RTO), is paused or is removed gives its queued
//! DSNs to the reinjection queue, but for those another subflow carried or still queues. The
//! scheduler bounds its queues (it sees their lengths in [`SubflowInfo`]); the connection only
//! refuses to queue more than [`MAX_QUEUED_SEGS`] on one subflow, so a faulty scheduler cannot
//! run away. A DSN's application delay starts at its first hand-over to a subflow, not at the
//! time it was queued.
//!
//! Schedulers take parameters (the flow's `scheduler_params` table): the registry's builder
//! reads them and rejects unknown keys with the accepted list, as congestion control does with
//! `cc_params` ([`rove_tcp::cc::params`]).
//!
//! To add a scheduler: write `sched/NAME.rs` implementing [`Scheduler`] and add one line to
//! [`REGISTRY`].

mod bccps;
mod blest;
mod ecf;
mod minrtt;
mod redundant;
mod round_robin;
mod tsc;

pub use bccps::{Bccps, BccpsParams};
pub use blest::Blest;
pub use ecf::Ecf;
pub use minrtt::MinRtt;
pub use redundant::Redundant;
pub use round_robin::RoundRobin;
pub use tsc::{Tsc, TscParams};

use crate::SubflowMask;
use rove_sim::Nanos;
use rove_tcp::cc::{reject_unknown, ModelPhase, ParamError};

/// The most DSNs one subflow's send queue may hold: a guard against a faulty scheduler, not a
/// model (schedulers bound their queues themselves; the connection window bounds them too).
/// 16384 segments are 23.7 MB of 1448-byte payload.
pub const MAX_QUEUED_SEGS: u32 = 1 << 14;

/// Default weight of the loss-rate EWMA ([`SubflowInfo::loss_rate`]): seed-001 §2.5 [GAP]
/// "Suggested EWMA weight 1/8".
pub const DEFAULT_LOSS_RATE_WEIGHT: f64 = 0.125;

/// What a scheduler knows of one subflow.
#[derive(Debug, Clone, Copy, Default)]
pub struct SubflowInfo {
    /// Established and not potentially failed.
    pub usable: bool,
    pub srtt_us: u64,
    /// Linux's tp->rttvar_us (the RTO's variance term, about 4·RTTVAR with the 200 ms floor), µs.
    pub rttvar_us: u64,
    /// Smallest and largest srtt seen on the subflow, µs (BLEST).
    pub min_srtt_us: u64,
    pub max_srtt_us: u64,
    pub cwnd: u32,
    pub ssthresh: u32,
    /// tcp_packets_in_flight.
    pub in_flight: u32,
    /// Segments handed over and not yet sent (waiting for pacing).
    pub unsent: u32,
    pub mss: u32,
    /// The fields below are the extended view: the connection fills them only for a scheduler
    /// that [`uses_extended_info`](Scheduler::uses_extended_info), and leaves them at their
    /// defaults (false, 0, None) otherwise, to keep the per-step refresh cheap.
    ///
    /// The MP_JOIN SYN is out and the subflow is not established yet (nor closed): it may be
    /// given queued data ([`Pick::Enqueue`]), which it sends once established.
    pub joining: bool,
    /// The subflow's send queue at the connection: DSNs and their payload bytes.
    pub queued_segs: u32,
    pub queued_bytes: u64,
    /// The congestion control's bottleneck-bandwidth estimate, bit/s of payload
    /// (`CongestionControl::path_model`); 0 when the algorithm has no model or no sample yet.
    pub btl_bw_bps: f64,
    /// Round-trip propagation time, µs: the model's min_rtt, else the sender's windowed minimum
    /// RTT; 0 before a sample.
    pub rtprop_us: u64,
    /// The model's state-machine phase (None without a model).
    pub phase: Option<ModelPhase>,
    /// q_r: an EWMA (weight [`Scheduler::loss_rate_weight`]) of the fraction of segments lost
    /// between consecutive loss events (entering Recovery, or an RTO), updated at each; 0
    /// before the first (seed-001 §2.5 [GAP]).
    pub loss_rate: f64,
}

impl SubflowInfo {
    /// Segments the subflow may still take: cwnd − (in flight + handed over, unsent), as the
    /// kernel's mptcp_is_temp_unavailable tests with tcp_cwnd_test.
    #[inline]
    pub fn space(&self) -> u32 {
        self.cwnd.saturating_sub(self.in_flight + self.unsent)
    }

    /// Usable with cwnd space.
    #[inline]
    pub fn available(&self) -> bool {
        self.usable && self.space() > 0
    }
}

/// What a scheduler knows of the connection.
pub struct SchedContext<'a> {
    pub now: Nanos,
    pub subflows: &'a [SubflowInfo],
    /// The application has new data and the connection-level window allows sending it.
    pub can_send_new: bool,
    /// DATA_ACK and the next new DSN: DSNs in `[data_una, dsn_next)` were sent and may still be
    /// missing at the receiver.
    pub data_una: u64,
    pub dsn_next: u64,
    /// Bytes queued at the connection, not yet handed to a subflow (ECF's k).
    pub queued_bytes: u64,
    /// The connection-level send window, bytes (BLEST's meta_tp->snd_wnd).
    pub send_window_bytes: u64,
    /// Times new data was blocked by the connection window so far.
    pub window_blocked: u64,
    /// Penalisations of slow subflows so far (BLEST's λ rises after one).
    pub penalizations: u64,
    /// Payload bytes of DSN `dsn_next` (0 when the application has nothing unsent); filled
    /// only for a scheduler that [`uses_extended_info`](Scheduler::uses_extended_info), 0
    /// otherwise.
    pub next_payload_bytes: u32,
}

/// A scheduler's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Send the next new DSN on every subflow in this bit set (one bit: plain scheduling; more:
    /// duplication).
    New(SubflowMask),
    /// Send the already-sent `dsn` on subflow `sub` too.
    Existing { sub: usize, dsn: u64 },
    /// Put the next new DSN at the tail of the send queue of every subflow in this bit set,
    /// cwnd space or not (see the module documentation).
    Enqueue(SubflowMask),
    /// Send nothing now.
    Wait,
}

pub trait Scheduler: Send + Sync {
    /// Name as in the scenario's `scheduler` key.
    fn name(&self) -> &'static str;
    fn pick(&mut self, cx: &SchedContext) -> Pick;

    /// Whether the connection runs the kernel's receive-buffer optimisation (opportunistic
    /// retransmission and penalisation, mptcp_rcv_buf_optimization) when the connection window
    /// blocks new data: yes for the schedulers built on mptcp_sched.c's next-segment logic.
    fn uses_receive_buffer_optimization(&self) -> bool {
        true
    }

    /// Weight of the EWMA the connection keeps of each subflow's loss rate
    /// ([`SubflowInfo::loss_rate`]); read once, when the connection is built.
    fn loss_rate_weight(&self) -> f64 {
        DEFAULT_LOSS_RATE_WEIGHT
    }

    /// Whether the scheduler reads [`SubflowInfo`]'s extended fields (joining, send queue,
    /// path model, loss rate); the connection fills them at every scheduling step only then.
    fn uses_extended_info(&self) -> bool {
        false
    }

    /// When the scheduler wants to be asked again though no ACK, timer or write comes (a rate
    /// limiter's next refill): the connection arms a timer for it after each scheduling step
    /// (`rove_tcp::Timer::Scheduler`). `None`: only when something happens.
    fn wake_at(&self) -> Option<Nanos> {
        None
    }

    /// The connection's `paths` (the subflows it is built with) and their costs
    /// (`paths[].cost`, seed 003's a_s per Mbit/s; `None` when the scenario gives none), once,
    /// when the world is built. A scheduler that needs them rejects what it cannot use, naming
    /// its parameter.
    fn set_path_costs(&mut self, _paths: usize, _costs: Option<&[f64]>) -> Result<(), ParamError> {
        Ok(())
    }
}

/// Builds a scheduler from its `scheduler_params`.
type Builder = fn(&toml::Table) -> Result<Box<dyn Scheduler>, ParamError>;

/// A builder for a scheduler without parameters.
fn plain<S: Scheduler + Default + 'static>(
    params: &toml::Table,
) -> Result<Box<dyn Scheduler>, ParamError> {
    reject_unknown(params, &[])?;
    Ok(Box::new(S::default()))
}

/// Every scheduler rove knows: (name, constructor). Add a line here for a new scheduler.
pub const REGISTRY: &[(&str, Builder)] = &[
    ("minrtt", plain::<MinRtt>),
    ("roundrobin", plain::<RoundRobin>),
    ("redundant", plain::<Redundant>),
    ("blest", plain::<Blest>),
    ("ecf", plain::<Ecf>),
    ("bccps", Bccps::build),
    ("tsc", Tsc::build),
];

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _)| *n).collect()
}

/// Builds scheduler `name` with `params` (its `scheduler_params`); `None` when the name is
/// unknown, `Some(Err)` naming the key when a parameter is unknown or bad.
pub fn build(name: &str, params: &toml::Table) -> Option<Result<Box<dyn Scheduler>, ParamError>> {
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| b(params))
}

/// The usable subflow with the lowest srtt, among those with cwnd space when `need_space`
/// (ties: the lowest index). minRTT's choice with `need_space`; BLEST's and ECF's "fastest
/// subflow" without.
pub fn lowest_rtt(subs: &[SubflowInfo], need_space: bool) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, s) in subs.iter().enumerate() {
        if !s.usable || (need_space && s.space() == 0) {
            continue;
        }
        if best.is_none_or(|b| s.srtt_us < subs[b].srtt_us) {
            best = Some(i);
        }
    }
    best
}

/// The step BLEST and ECF begin with: minRTT's choice `best` (lowest srtt with cwnd space) and
/// the fastest subflow `fast` (lowest srtt, space or not). `Err` is the pick already decided:
/// wait when new data cannot go or nothing is usable, `best` itself when it is the fastest.
pub fn best_and_fastest(cx: &SchedContext) -> Result<(usize, usize), Pick> {
    if !cx.can_send_new {
        return Err(Pick::Wait);
    }
    let (Some(best), Some(fast)) = (
        lowest_rtt(cx.subflows, true),
        lowest_rtt(cx.subflows, false),
    ) else {
        return Err(Pick::Wait);
    };
    if best == fast {
        return Err(Pick::New(1 << best));
    }
    Ok((best, fast))
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// A usable subflow with `srtt_ms`, `cwnd` and `in_flight` packets.
    pub fn sub(srtt_ms: u64, cwnd: u32, in_flight: u32) -> SubflowInfo {
        SubflowInfo {
            usable: true,
            srtt_us: srtt_ms * 1000,
            rttvar_us: 0,
            min_srtt_us: srtt_ms * 1000,
            max_srtt_us: srtt_ms * 1000,
            cwnd,
            ssthresh: rove_tcp::state::INFINITE_SSTHRESH,
            in_flight,
            unsent: 0,
            mss: rove_tcp::MSS,
            ..Default::default()
        }
    }

    pub fn cx(subflows: &[SubflowInfo]) -> SchedContext<'_> {
        SchedContext {
            now: 0,
            subflows,
            can_send_new: true,
            data_una: 0,
            dsn_next: 0,
            queued_bytes: 1 << 22,
            send_window_bytes: 6 << 20,
            window_blocked: 0,
            penalizations: 0,
            next_payload_bytes: rove_tcp::MSS,
        }
    }
}
