//! Congestion control: the trait every algorithm implements, and the registry that builds them.
//!
//! The hooks mirror Linux's `struct tcp_congestion_ops` (include/net/tcp.h), and the sender calls
//! them where Linux does (tcp_input.c, tcp_output.c), so an algorithm ports from the kernel one
//! hook at a time. To add an algorithm: write `cc/NAME.rs` implementing [`CongestionControl`] and
//! add one line to [`REGISTRY`].

mod bbr;
mod bbr2;
mod bbr_model;
mod c2tcp;
mod cdg;
mod copa;
pub mod coupled;
mod cubic;
mod highspeed;
mod htcp;
mod illinois;
pub mod params;
pub mod record;
mod reno;
mod vegas;
mod veno;
mod vivace;
mod westwood;
mod yeah;

pub use bbr2::{bbr2plus_kernel_params, BBR2_PARAM_FIELDS};
pub use reno::{tcp_reno_cong_avoid, tcp_reno_ssthresh};

pub use coupled::{CouplingHandle, CouplingSlot};

use crate::state::{AckSample, CaEvent, CaState, RateSample, TcpState, TxRecord};

pub trait CongestionControl: Send + Sync {
    /// Name as in the scenario's `cc` key (and Linux's `tcp_congestion_ops.name`).
    fn name(&self) -> &'static str;

    /// `init`: called once when the connection is established.
    fn init(&mut self, _tp: &mut TcpState) {}

    /// `ssthresh`: the slow-start threshold after a loss (required).
    fn ssthresh(&mut self, tp: &TcpState) -> u32;

    /// `cong_avoid`: grow cwnd on an ACK that acked or sacked `acked` packets. Not called for
    /// algorithms that implement `cong_control`.
    fn cong_avoid(&mut self, _tp: &mut TcpState, _acked: u32) {}

    /// Whether this algorithm implements `cong_control` (Linux: `ops->cong_control != NULL`).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// `cong_control`: take over cwnd and pacing on every ACK, given the delivery-rate sample.
    fn cong_control(&mut self, _tp: &mut TcpState, _rs: &RateSample) {}

    /// `set_state`: called before the sender changes `tp.ca_state` to `new_state`.
    fn set_state(&mut self, _tp: &mut TcpState, _new_state: CaState) {}

    /// `cwnd_event`.
    fn cwnd_event(&mut self, _tp: &mut TcpState, _event: CaEvent) {}

    /// `pkts_acked`: called on every ACK (pkts_acked may be 0), with its newest RTT sample.
    fn pkts_acked(&mut self, _tp: &mut TcpState, _sample: &AckSample) {}

    /// `in_ack_event`: once per ACK at or above snd_una, with the `CA_ACK_*` flags of
    /// `state.rs` as Linux 6.18's tcp_ack → tcp_in_ack_event gives them (the sender's
    /// `ack_path`): `CA_ACK_SLOWPATH` for every ACK header prediction refused (a SACK or D-SACK
    /// option, a window field other than the one predicted, prediction still off after the
    /// handshake), `CA_ACK_WIN_UPDATE` on the fast path and wherever tcp_ack_update_window
    /// accepts the window (the ACK advances snd_una, or the window grew). A header-predicted
    /// ACK that does not advance snd_una gets 0.
    fn in_ack_event(&mut self, _tp: &mut TcpState, _flags: u32) {}

    /// `release`: the algorithm is being replaced (tcp_cleanup_congestion_control).
    fn release(&mut self, _tp: &mut TcpState) {}

    /// A segment left the sender: its sequence number, payload bytes, and whether it is a
    /// retransmission. Not a Linux hook (Linux's rate-based modules read `tcp_skb_cb` in
    /// `cong_control`); rate-based algorithms such as PCC Vivace delimit their monitor
    /// intervals with it.
    fn on_segment_sent(&mut self, _tp: &TcpState, _seq: u64, _bytes: u32, _retrans: bool) {}

    /// `skb_marked_lost` (BBRv2's addition to tcp_congestion_ops): a segment was just marked
    /// lost; `tx` is what it carried from its last transmission.
    fn skb_marked_lost(&mut self, _tp: &mut TcpState, _tx: &TxRecord) {}

    /// `undo_cwnd`: the cwnd to restore when a reduction proves spurious.
    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    /// Names of the algorithm's own time-series columns (per-algorithm telemetry, e.g. BBR's
    /// bandwidth estimate); the recorder adds one column per name, NaN in the rows of senders
    /// running another algorithm. Prefix them with the algorithm's name.
    fn telemetry_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The telemetry values now, in the order of `telemetry_names` (`out` has that length).
    fn telemetry(&self, _tp: &TcpState, _out: &mut [f64]) {}

    /// A model-based algorithm's estimate of its path (BBR's btl_bw and min_rtt) and where its
    /// state machine is: what multipath schedulers and shared-bottleneck detectors read (BCCPS,
    /// seed 001 §2.3 and §2.5). `None` for algorithms without such a model.
    fn path_model(&self, _tp: &TcpState) -> Option<PathModel> {
        None
    }

    /// The algorithm's own mode for the time series ("slow_start", "probe_bw", ...).
    fn mode(&self, tp: &TcpState) -> &'static str {
        if tp.in_slow_start() {
            "slow_start"
        } else {
            "cong_avoid"
        }
    }
}

/// What a model-based algorithm estimates of its path ([`CongestionControl::path_model`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathModel {
    /// Bottleneck-bandwidth estimate, bit/s (BBR's bbr_bw); 0 before the first sample.
    pub bw_bps: f64,
    /// Round-trip propagation time estimate (BBR's min_rtt), µs; `None` before a sample.
    pub min_rtt_us: Option<u32>,
    pub phase: ModelPhase,
    /// Pacing gain in force (1.0 = cruising; > 1 in PROBE_BW's probing phase).
    pub pacing_gain: f64,
}

/// The state-machine phase of a model-based algorithm, as a BBR-family state machine names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelPhase {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// What an algorithm is built from: its `cc_params` and a seed for its own random choices
/// (e.g. BBR's random ProbeBW start phase), derived from the run's seed and the flow's name;
/// and, for a subflow of a multipath connection, its slot in the connection's coupling
/// ([`coupled`]), which the coupled algorithms ([`coupled::NAMES`]) read and the others ignore.
#[derive(Clone)]
pub struct CcConfig<'a> {
    pub params: &'a toml::Table,
    pub seed: u64,
    pub coupling: Option<CouplingSlot>,
}

impl<'a> CcConfig<'a> {
    /// A single-path configuration (no coupling).
    pub fn new(params: &'a toml::Table, seed: u64) -> Self {
        CcConfig {
            params,
            seed,
            coupling: None,
        }
    }

    /// The same, for a subflow coupled through `slot` (from [`CouplingHandle::subflow`]).
    pub fn with_coupling(mut self, slot: CouplingSlot) -> Self {
        self.coupling = Some(slot);
        self
    }
}

type Builder = fn(&CcConfig) -> Result<Box<dyn CongestionControl>, ParamError>;

/// Every algorithm rove knows: (name, constructor). Add a line here for a new algorithm.
pub const REGISTRY: &[(&str, Builder)] = &[
    ("reno", reno::Reno::build),
    ("bbr", bbr::Bbr::build),
    ("bbr2", bbr2::Bbr2::build),
    ("bbr2plus", bbr2::Bbr2::build_plus),
    ("bbr3", bbr2::Bbr2::build_v3),
    ("cubic", cubic::Cubic::build),
    ("vegas", vegas::Vegas::build),
    ("westwood", westwood::Westwood::build),
    ("illinois", illinois::Illinois::build),
    ("veno", veno::Veno::build),
    ("lia", coupled::lia::Lia::build),
    ("olia", coupled::olia::Olia::build),
    ("olia_sbd", coupled::olia::Olia::build_sbd),
    ("balia", coupled::balia::Balia::build),
    ("wvegas", coupled::wvegas::WVegas::build),
    ("mpbbr", coupled::mpbbr::build),
    // MPTCP-SSCC (seed 000 §4): OLIA* on every subflow; a multipath flow adds its detection.
    ("sscc", coupled::olia::Olia::build_sbd),
    ("highspeed", highspeed::HighSpeed::build),
    ("htcp", htcp::Htcp::build),
    ("yeah", yeah::Yeah::build),
    ("cdg", cdg::Cdg::build),
    ("vivace", vivace::Vivace::build),
    ("copa", copa::Copa::build),
    ("c2tcp", c2tcp::C2tcp::build),
];

/// A bad `cc_params` entry: the key (relative to `cc_params`) and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError {
    pub key: String,
    pub message: String,
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _)| *n).collect()
}

/// Builds algorithm `name`. `None` when the name is unknown.
pub fn build(
    name: &str,
    config: &CcConfig,
) -> Option<Result<Box<dyn CongestionControl>, ParamError>> {
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| b(config).map(|algo| record::wrap(name, config, algo)))
}

/// Rejects every key of `params` not in `known` (each algorithm calls this first).
pub fn reject_unknown(params: &toml::Table, known: &[&str]) -> Result<(), ParamError> {
    for key in params.keys() {
        if !known.contains(&key.as_str()) {
            let accepted = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            return Err(ParamError {
                key: key.clone(),
                message: format!("unknown parameter; accepted: {accepted}"),
            });
        }
    }
    Ok(())
}
