//! The validated, fully resolved form of a scenario: what both backends consume.
//!
//! Every value here is already in engine units (nanoseconds, bits per second, bytes) and every
//! reference (a flow's path naming links, a trace file) is resolved, so a backend never has to
//! report a scenario error of its own. Parsing and validation live in `parse.rs`.

use std::sync::Arc;

/// Simulated time and durations, in integer nanoseconds (DESIGN.md: "time is an integer").
pub type Nanos = u64;

pub const NS_PER_MS: Nanos = 1_000_000;
pub const NS_PER_S: Nanos = 1_000_000_000;

/// Bytes a Mahimahi delivery opportunity can carry (issue 2; mm-link uses 1504 with its TUN header).
pub const TRACE_OPPORTUNITY_BYTES: u32 = 1500;

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    /// Path of the scenario file, or "<dict>" / "<string>" when it came from memory. Errors name it.
    pub source: String,
    pub duration_ns: Nanos,
    pub seed: u64,
    /// Interval between time-series samples (key `sample_interval`, default 10 ms).
    pub sample_interval_ns: Nanos,
    /// The measurement window (key `measure = [from, to]`, default the whole run): every
    /// summary metric is computed over it.
    pub measure_ns: (Nanos, Nanos),
    /// Links in the order they appear in the file (TOML tables keep insertion order here).
    pub links: Vec<LinkSpec>,
    /// Flows after `count = N` expansion: N entries named `name`, or `name.1` .. `name.N` when N > 1.
    pub flows: Vec<FlowSpec>,
    /// Scheduled actions (`[[actions]]`), sorted by time (ties keep the file's order).
    pub actions: Vec<ActionSpec>,
    /// Path elements (`[[elements]]`): packet rewriters on links, built by the engine's registry.
    pub elements: Vec<ComponentSpec>,
    /// Controllers (`[[controllers]]`), built by the engine's registry.
    pub controllers: Vec<ComponentSpec>,
    /// Directory that relative file paths in the scenario resolve against (the scenario file's
    /// directory, as for traces); `None`: the current directory. Components read paths with
    /// [`ComponentParams::path`](crate::component::ComponentParams::path).
    pub base_dir: Option<std::path::PathBuf>,
}

/// A component the engine builds from its own registry (a path element, a controller): its
/// `kind` and the rest of its table, which the component reads and validates itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentSpec {
    pub kind: String,
    /// Every key but `kind`.
    pub params: toml::Table,
    /// Where it sits in the file, for errors: `elements[0]`, `controllers[2]`.
    pub location: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    pub name: String,
    /// The link model (key `kind`, default "p2p"), from the engine's registry of link models.
    pub kind: String,
    pub serializer: Serializer,
    /// One-way propagation delay.
    pub delay_ns: Nanos,
    pub queue: QueueSpec,
    pub loss: LossSpec,
    pub jitter: Option<JitterSpec>,
    /// Scheduled outages: the link sends nothing in `[start, end)`; its queue still fills.
    pub outages: Vec<Outage>,
    /// Named destinations (key `ports`, or the ports a link model declares from its own keys,
    /// as a WiFi cell's `"s1"` and `"s1:up"` per station), each with a queue of its own; a path
    /// names one as `"LINK:PORT"`. Empty: one queue for every packet.
    pub ports: Vec<String>,
    /// The link model's own keys (every key of `[links.NAME]` that is not a common link key),
    /// already checked by the model's [`LinkKind::check`]; empty for the point-to-point link.
    pub model: toml::Table,
}

/// What the scenario parser needs to know of a link model (the engine's registry of link
/// models gives one per kind, `ParseOptions::known_link_kinds`): which of the common link keys
/// it takes, which keys are its own, and how to check those.
#[derive(Debug, Clone, Copy)]
pub struct LinkKind {
    /// `links.NAME.kind`.
    pub kind: &'static str,
    /// The common link keys it takes besides `kind` (`delay`, `buffer`, ...); any other common
    /// key is an error naming the kind. `None`: every common key (the point-to-point link,
    /// whose serializer is `rate`, `rate_cycle` or `trace`).
    pub common_keys: Option<&'static [&'static str]>,
    /// The model's own keys (top level of `[links.NAME]`).
    pub own_keys: &'static [&'static str],
    /// Checks the model's own keys; returns the link's ports and peak rate, or the key that is
    /// wrong (relative to `links.NAME`, e.g. `stations.s1.snr`) and a one-line message saying
    /// what is accepted.
    pub check: fn(&toml::Table) -> Result<ModelShape, (String, String)>,
}

/// What a link model's check tells the parser about one link.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelShape {
    /// Port names, in port-number order (paths name them as `"LINK:PORT"`).
    pub ports: Vec<String>,
    /// The highest rate the model can serve, bit/s (estimates of a run's cost).
    pub peak_bps: u64,
}

/// One entry of a path: a link (index into `Scenario::links`) and the port of it the packets
/// are for (0 on a link without ports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub link: usize,
    pub port: u16,
}

impl Hop {
    /// The links of a path, without their ports.
    pub fn links(path: &[Hop]) -> impl Iterator<Item = usize> + '_ {
        path.iter().map(|h| h.link)
    }

    /// How a scenario writes this hop: `"LINK"`, or `"LINK:PORT"` on a link with ports.
    pub fn name(&self, links: &[LinkSpec]) -> String {
        let l = &links[self.link];
        match l.ports.get(self.port as usize) {
            Some(p) => format!("{}:{p}", l.name),
            None => l.name.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Serializer {
    /// A fixed-rate serializer whose rate may change at scheduled times.
    /// `changes` is sorted by time, strictly after 0, already expanded up to the run's duration.
    Rate {
        rate_bps: u64,
        changes: Vec<RateChange>,
    },
    /// A Mahimahi trace: delivery opportunities at these millisecond offsets, repeating with
    /// `period_ms` (the last timestamp, as mm-link does). Sorted, non-decreasing, period > 0.
    Trace {
        opportunities_ms: Arc<Vec<u32>>,
        period_ms: u32,
        origin: String,
    },
    /// The link model schedules its own transmissions (a radio cell's channel access, its
    /// rates per station); `peak_bps` is its highest rate, for estimates.
    Model { peak_bps: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateChange {
    pub at_ns: Nanos,
    pub rate_bps: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum QueueSpec {
    DropTail {
        limit: QueueLimit,
    },
    /// CoDel, RFC 8289. The limit bounds the queue like DropTail does (Linux codel's `limit`).
    CoDel {
        limit: QueueLimit,
        target_ns: Nanos,
        interval_ns: Nanos,
    },
    /// fq_codel (Linux `sch_fq_codel.c`): flows hashed into `flows` queues served by deficit
    /// round robin (`quantum` bytes per round, new flows first), CoDel in each; over the limit
    /// (packets, or bytes of a `buffer` in bytes) the fattest queue loses half its backlog from
    /// its head, at most 64 packets.
    FqCodel {
        limit: QueueLimit,
        target_ns: Nanos,
        interval_ns: Nanos,
        flows: u32,
        quantum: u32,
    },
    /// PIE (RFC 8033 as Linux `sch_pie.c` runs it): an enqueue-time random drop whose
    /// probability a PI controller updates every `tupdate` from the queueing delay (timestamps:
    /// Linux's default, no departure-rate estimator), with a burst allowance. `alpha` and
    /// `beta` in Linux's units of 1/16 Hz.
    Pie {
        limit: QueueLimit,
        target_ns: Nanos,
        tupdate_ns: Nanos,
        alpha: u32,
        beta: u32,
        max_burst_ns: Nanos,
    },
}

impl QueueSpec {
    /// The queue's limit, whatever the discipline.
    pub fn limit(&self) -> QueueLimit {
        match *self {
            QueueSpec::DropTail { limit }
            | QueueSpec::CoDel { limit, .. }
            | QueueSpec::FqCodel { limit, .. }
            | QueueSpec::Pie { limit, .. } => limit,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossSpec {
    None,
    /// Each packet is lost with probability `p`, independently.
    Bernoulli {
        p: f64,
    },
    /// Two-state Markov loss (Gilbert-Elliott), stepped once per packet.
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_in_good: f64,
        loss_in_bad: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JitterSpec {
    /// Gaussian: standard deviation; uniform: half-width (delay ± amount).
    pub amount_ns: Nanos,
    pub distribution: JitterDistribution,
    /// false: a packet never overtakes one sent before it on this link (its delivery is held back),
    /// true: packets may be reordered, as tc-netem does with jitter.
    pub reorder: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JitterDistribution {
    Gaussian,
    Uniform,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outage {
    pub start_ns: Nanos,
    pub end_ns: Nanos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    pub name: String,
    /// Congestion control algorithm name, validated against the engine's registry by the caller
    /// of `parse` (see `ParseOptions::known_cc`).
    pub cc: String,
    /// Algorithm parameters as written (`cc_params = { ... }`); the algorithm validates them.
    pub cc_params: toml::Table,
    /// The links crossed, in order. Never empty. For a multipath flow, the first subflow's path
    /// (`multipath.paths[0]`).
    pub path: Vec<Hop>,
    pub ack_path: Vec<Hop>,
    pub start_ns: Nanos,
    /// Bytes to send; `None` for an unlimited (bulk) flow.
    pub size_bytes: Option<u64>,
    /// Receiver's advertised window in bytes (key `rwnd`). For a multipath flow, the one
    /// connection-level receive window.
    pub rwnd_bytes: u64,
    /// Key `rcv_buffer`: Linux's receive-buffer auto-tuning (`"auto"`, default for single-path
    /// flows; the window grows up to `rwnd_bytes`) or a window fixed at `rwnd_bytes`.
    pub rcv_autotune: bool,
    /// Key `rcv_truesize`: memory of one buffered full segment, for auto-tuning.
    pub rcv_truesize: u64,
    /// `Some` for a multipath flow (key `paths`): its subflows, scheduler and coupling.
    pub multipath: Option<MultipathSpec>,
    /// What the flow's application does (key `workload`): a TCP bulk transfer (the default),
    /// an application writing over a TCP connection (video, requests) or an unresponsive packet
    /// source. An unresponsive flow has no `ack_path` (empty).
    pub workload: Workload,
    /// Key `slow_start_after_idle` (TCP flows whose application writes over time): Linux's
    /// net.ipv4.tcp_slow_start_after_idle, default 1 (true).
    pub slow_start_after_idle: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    /// A TCP connection sending `size` bytes (or forever) as fast as its congestion control
    /// lets it.
    Bulk,
    /// A video source writing frames into a TCP connection (single-path or multipath).
    Video(VideoSpec),
    /// A closed loop of request/response transfers over one persistent TCP connection.
    Requests(RequestSpec),
    /// An unresponsive (UDP-like) source: packets of `packet_bytes` on the wire at an average
    /// of `rate_bps`, spaced by `process`; nothing is acknowledged or retransmitted.
    Unresponsive {
        process: Process,
        rate_bps: u64,
        packet_bytes: u32,
    },
}

/// How an unresponsive source spaces its packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
    /// Constant bit rate: one packet every packet_bytes·8/rate.
    Cbr,
    /// Poisson arrivals: exponential gaps with that mean.
    Poisson,
    /// Constant bit rate during `on_ns`, silent during `off_ns`, repeating (on first).
    OnOff { on_ns: Nanos, off_ns: Nanos },
}

/// A video source (seed 003's VBR video): frames at `fps`, an I-frame every `gop` frames and
/// P-frames between (with `b_frames` B-frames between anchors), I-frames `i_to_p` and B-frames
/// `b_to_p` times the size of P-frames, sizes averaging `bitrate`, optionally varied per scene
/// (`scene_spread`) and scattered per frame by `frame_jitter`; each frame is due `deadline`
/// after it is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoSpec {
    pub fps: f64,
    pub bitrate_bps: u64,
    pub gop: u32,
    pub i_to_p: f64,
    /// B-frames between two anchor (I or P) frames of a GOP (0: none).
    pub b_frames: u32,
    /// A B-frame's size over a P-frame's.
    pub b_to_p: f64,
    /// Each scene's sizes are multiplied by a uniform draw from [1 − s, 1 + s] (0: none).
    pub scene_spread: f64,
    /// A scene's length: the sizes' scene factor is drawn anew every `scene_ns`.
    pub scene_ns: Nanos,
    /// Each frame's size is multiplied by a uniform draw from [1 − j, 1 + j] (0: none).
    pub frame_jitter: f64,
    pub deadline_ns: Nanos,
    /// seed 003's required application delay d_req per packet (key `required_delay`): when
    /// given, the results add each packet's delay and the fraction within it.
    pub required_delay_ns: Option<Nanos>,
}

/// Request/response transfers: request, wait for the whole response, think, repeat.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    pub sizes: ResponseSizes,
    pub think: ThinkTime,
    /// Key `requests`: stop after this many transfers (`None`: until the run ends).
    pub max_requests: Option<u64>,
}

/// Where response sizes come from.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseSizes {
    /// `sizes = [...]`, taken in turn (`size_order = "cycle"`) or uniformly at random.
    List { bytes: Vec<u64>, random: bool },
    /// `size_dist = "lognormal"`: median · e^(σ·Z), Z standard normal.
    LogNormal {
        median_bytes: f64,
        sigma: f64,
        max_bytes: Option<u64>,
    },
    /// `size_dist = "pareto"`: x_m · U^(−1/α), the Pareto distribution with scale x_m
    /// (`size_min`) and shape α (`size_alpha`).
    Pareto {
        min_bytes: f64,
        alpha: f64,
        max_bytes: Option<u64>,
    },
}

/// Think time between a response's arrival and the next request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThinkTime {
    Fixed(Nanos),
    /// Exponentially distributed with this mean.
    Exponential(Nanos),
}

impl Workload {
    /// Whether the flow is a TCP connection (bulk, video or requests), with congestion control,
    /// windows and possibly subflows; else an unresponsive source.
    pub fn is_tcp(&self) -> bool {
        !matches!(self, Workload::Unresponsive { .. })
    }

    /// The name written for the flow's `cc` in results: the workload's name for unresponsive
    /// flows.
    pub fn name(&self) -> &'static str {
        match self {
            Workload::Bulk => "bulk",
            Workload::Video(_) => "video",
            Workload::Requests(_) => "requests",
            Workload::Unresponsive { process, .. } => match process {
                Process::Cbr => "cbr",
                Process::Poisson => "poisson",
                Process::OnOff { .. } => "onoff",
            },
        }
    }
}

/// A multipath (MPTCP-like) flow: one connection over several paths, one subflow per path.
#[derive(Debug, Clone, PartialEq)]
pub struct MultipathSpec {
    /// One entry per subflow, in order (subflow 0 opens the connection, the others join).
    pub paths: Vec<SubflowPath>,
    /// Each path's cost per Mbit/s of payload (key `cost` of every `paths` entry, or of none;
    /// seed 003's a_s): the results add the path cost, and a cost-aware scheduler uses them.
    pub costs: Option<Vec<f64>>,
    /// Packet scheduler name (key `scheduler`), validated against `ParseOptions::known_schedulers`.
    pub scheduler: String,
    /// The scheduler's parameters (key `scheduler_params`, a table): the scheduler checks them
    /// when the world is built (unknown keys rejected with the accepted list).
    pub scheduler_params: toml::Table,
    /// Congestion-control coupling name (key `coupling`), validated against
    /// `ParseOptions::known_couplings`; "uncoupled" runs the flow's `cc` on every subflow.
    pub coupling: String,
    /// Shared-bottleneck detector name (key `detector`), validated against
    /// `ParseOptions::known_detectors`: it regroups the coupling at run time, and its accuracy
    /// against the topology's true grouping is a result. "auto": the algorithm's own.
    pub detector: String,
    /// The detector's parameters (key `detector_params`), checked when the world is built.
    pub detector_params: toml::Table,
    /// Receiver behaviour name (key `receiver`), validated against
    /// `ParseOptions::known_receivers`; `None`: a plain receiver.
    pub receiver: Option<String>,
    /// The behaviour's parameters (key `receiver_params`), checked when the world is built.
    pub receiver_params: toml::Table,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SubflowPath {
    /// Forward (data) links and ACK links. Never empty.
    pub path: Vec<Hop>,
    pub ack_path: Vec<Hop>,
}

/// A scheduled action (`[[actions]]`): at `at_ns`, apply `change` to a flow, one of its
/// subflows, or a link. The same form is what controllers and the Python stepping API apply.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionSpec {
    pub at_ns: Nanos,
    pub target: ActionTarget,
    pub change: Change,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionTarget {
    /// Scenario flow index; `subflow` selects one subflow of a multipath flow (`None`: every
    /// subflow, or the single-path flow itself).
    Flow { flow: usize, subflow: Option<usize> },
    /// Scenario link index.
    Link(usize),
}

/// What an action changes.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Switch the congestion control (Linux `setsockopt(TCP_CONGESTION)`), then hand the
    /// window over.
    Cc {
        name: String,
        params: toml::Table,
        handoff: HandoffSpec,
    },
    /// Clamp the receive window the receiver advertises (Linux `TCP_WINDOW_CLAMP`), bytes.
    Rwnd(u64),
    /// Open a new subflow of a multipath flow over these links.
    AddSubflow {
        path: Vec<Hop>,
        ack_path: Vec<Hop>,
    },
    /// Close a subflow: it sends nothing more and what it held is reinjected.
    RemoveSubflow,
    /// Couple a subflow only with the subflows of this group (a coupled algorithm's
    /// `CouplingHandle::set_group`: what a shared-bottleneck detector does when it regroups).
    /// Groups are numbered from 0; every subflow starts in group 0.
    CouplingGroup(u32),
    /// Stop scheduling data on a subflow (MP_PRIO backup), and use it again.
    PauseSubflow,
    ResumeSubflow,
    /// An intentional duplicate-ACK episode on a subflow's receiver (`rove_mp::receiver`): its
    /// cumulative ACK is held at the next in-order segment until the sender retransmits it, so
    /// the sender sees duplicate ACKs and reduces its window.
    DupAcks,
    /// Stop sending a subflow's ACKs; and send one now and resume.
    WithholdAcks,
    ReleaseAck,
    /// A link's serializer rate from now on (fixed-rate links).
    LinkRate(u64),
    /// A link's one-way propagation delay for packets that leave it from now on.
    LinkDelay(Nanos),
    /// A link's random (Bernoulli) loss probability from now on.
    LinkLoss(f64),
}

/// The most samples `handoff = "delay_scaled"` averages: the size of the sender's ring
/// (`rove_tcp::HANDOFF_HISTORY`, checked at compile time in rove-world).
pub const HANDOFF_SAMPLES_MAX: u64 = 32;

/// The default `samples` of `handoff = "delay_scaled"`: seed-002 §2.7, "the last 7 samples".
pub const HANDOFF_SAMPLES_DEFAULT: u32 = 7;

/// How the window is handed to a newly switched algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffSpec {
    /// Whatever the new algorithm's `init` leaves (Linux's behaviour).
    Keep,
    /// cwnd (and optionally ssthresh), in packets, set after `init`.
    Set { cwnd: u32, ssthresh: Option<u32> },
    /// seed-002 Eq. 6.3: cwnd = sCWND·Dmin/sD over the last `samples` (cwnd, RTT) samples.
    DelayScaled { samples: u32 },
}
