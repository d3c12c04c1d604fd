//! Receiver behaviours: what a multipath receiver does with its ACKs beyond a plain Linux
//! receiver, to steer an unmodified sender from the receiving end (seed 003 Ch. 3's R-TSC and
//! Ch. 4's Subflow Population Control).
//!
//! A behaviour sees every data segment that arrives on every subflow ([`SegmentArrival`]: time,
//! subflow, sequence numbers, the sender's timestamp) and a read-only view of the receiving
//! side ([`ReceiverView`]: each subflow's TCP receiver, the reordering buffer), and answers with
//! [`ReceiverAction`]s, which the connection applies before the segment is acknowledged:
//!
//! * [`ReceiverAction::DupAcks`]: an intentional duplicate-ACK episode on a subflow. The
//!   segment that arrives in order next (this one, if it is in order) is received and goes to
//!   the reordering buffer as usual (no application byte waits), but the subflow's cumulative
//!   ACK stays at it until the sender retransmits it; every arrival meanwhile is acknowledged
//!   at once with that ACK number and a SACK block for the data above it. The third duplicate
//!   makes a SACK sender mark the held segment lost (RACK's reordering window is 0 once
//!   tp->reordering = 3 segments are SACKed), retransmit it and reduce its window
//!   (`rove_tcp::receiver`'s module documentation has the details).
//! * [`ReceiverAction::Withhold`]: the subflow's ACKs are built but not sent (its sender
//!   times out); [`ReceiverAction::Release`] sends one ACK now and resumes.
//!
//! A behaviour may also ask to be woken at a time of its choosing ([`ReceiverBehaviour::wake_at`],
//! a cadence or a one-off deadline; the connection arms `rove_tcp::Timer::Receiver` for it).
//!
//! A multipath flow names one with `receiver = "NAME"` and its parameters with
//! `receiver_params = { ... }`; the builder rejects unknown keys with the accepted list, as
//! `cc_params` are ([`rove_tcp::cc::params`]). Without `receiver`, the receiver is a plain one
//! (no behaviour object at all).
//!
//! To add a behaviour: write `receiver/NAME.rs` implementing [`ReceiverBehaviour`] and add one
//! line to [`REGISTRY`].

pub mod delay_optimum;
mod rtsc;
mod spc;

pub use rtsc::{Rtsc, RtscParams};
pub use spc::Spc;

use crate::reorder::ReorderBuffer;
use crate::subflow::Subflow;
use rove_sim::Nanos;
use rove_tcp::cc::ParamError;
use rove_tcp::receiver::TcpReceiver;

/// A data segment that reached the receiver, before it is processed.
#[derive(Debug, Clone, Copy)]
pub struct SegmentArrival {
    pub now: Nanos,
    pub sub: usize,
    /// The subflow sequence number (segments).
    pub seq: u64,
    /// It is the next segment the subflow expects (seq = its rcv_nxt).
    pub in_order: bool,
    /// The subflow has it already (a retransmission of received data).
    pub duplicate: bool,
    pub dsn: u64,
    pub payload_bytes: u32,
    /// The sender's timestamp at full precision (the timestamp option's TSval): `now - sent_at`
    /// is the one-way delay (a real receiver sees it plus a constant clock offset).
    pub sent_at: Nanos,
    /// The receiver-side RTT sample of the echoed timestamp (Linux tcp_rcv_rtt_measure_ts:
    /// now − TSecr, at the timestamp clock's 1 ms resolution); `None` before one was echoed.
    pub echo_rtt_ns: Option<Nanos>,
}

/// What a behaviour asks of the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiverAction {
    /// An intentional duplicate-ACK episode on subflow `sub` (module documentation); ignored
    /// while one runs on it.
    DupAcks { sub: usize },
    /// Stop sending subflow `sub`'s ACKs.
    Withhold { sub: usize },
    /// Send one ACK of subflow `sub` now and stop withholding its ACKs.
    Release { sub: usize },
}

/// The receiving side as a behaviour may see it: no sender state.
pub struct ReceiverView<'a> {
    pub(crate) subflows: &'a [Subflow],
    pub(crate) reorder: &'a ReorderBuffer,
}

impl<'a> ReceiverView<'a> {
    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }

    /// Subflow `sub`'s TCP receiver (its rcv_nxt, whether an episode runs, its counters).
    pub fn receiver(&self, sub: usize) -> &'a TcpReceiver {
        &self.subflows[sub].receiver
    }

    /// Subflow `sub` is closed (removed).
    pub fn is_closed(&self, sub: usize) -> bool {
        self.subflows[sub].closed
    }

    /// The connection-level reordering buffer (in-order bytes delivered, occupancy).
    pub fn reorder(&self) -> &'a ReorderBuffer {
        self.reorder
    }
}

pub trait ReceiverBehaviour: Send + Sync {
    /// Name as in the scenario's `receiver` key.
    fn name(&self) -> &'static str;

    /// A data segment arrived; push what the receiver should do onto `actions` (applied before
    /// the segment is acknowledged).
    fn on_segment(
        &mut self,
        arrival: &SegmentArrival,
        view: &ReceiverView,
        actions: &mut Vec<ReceiverAction>,
    );

    /// When to be woken next (`on_wake`) though no segment arrives; read after every call.
    /// `None`: only when segments arrive.
    fn wake_at(&self) -> Option<Nanos> {
        None
    }

    fn on_wake(&mut self, _now: Nanos, _view: &ReceiverView, _actions: &mut Vec<ReceiverAction>) {}

    /// Names of the behaviour's time-series columns, on its connection's row (SPC: the active
    /// subflows and its action counts); their last values go to the summary's
    /// `receiver_telemetry`. Empty: none.
    fn telemetry_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The columns' values now, one per name (`values` is as long as the names).
    fn telemetry(&self, _values: &mut [f64]) {}

    /// Per subflow, a line of what the behaviour decided, for the results (R-TSC: its window
    /// cap); `None` when it has nothing to report.
    fn report(&self) -> Option<BehaviourReport> {
        None
    }
}

/// What a behaviour reports at the end of a run (`summary.json`'s `receiver_state`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BehaviourReport {
    /// Per subflow: the last window cap, packets (`None`: uncapped).
    pub window_cap_pkts: Vec<Option<f64>>,
    /// Per subflow: the last capacity estimate, Mbit/s of payload (`None`: not observed).
    pub capacity_mbps: Vec<Option<f64>>,
    /// Per subflow: the last target rate x*, Mbit/s (`None`: not computed).
    pub target_rate_mbps: Vec<Option<f64>>,
}

/// Builds a behaviour from its `receiver_params`.
type Builder = fn(&toml::Table) -> Result<Box<dyn ReceiverBehaviour>, ParamError>;

/// Every receiver behaviour rove knows: (name, constructor). Add a line here for a new one.
pub const REGISTRY: &[(&str, Builder)] = &[("rtsc", Rtsc::build), ("spc", Spc::build)];

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _)| *n).collect()
}

/// Builds behaviour `name` with `params`; `None` when the name is unknown, `Some(Err)` naming
/// the key when a parameter is unknown or bad.
pub fn build(
    name: &str,
    params: &toml::Table,
) -> Option<Result<Box<dyn ReceiverBehaviour>, ParamError>> {
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| b(params))
}
