//! The run's summary (summary.json, DESIGN.md "Results"), computed from the endpoints' and
//! links' counters at the end of a run.

use crate::datagram::DatagramSource;
use crate::record::ns_to_ms;
use crate::transport::Transport;
use crate::window::{FlowMark, Marks};
use crate::workload::App;
use crate::world::{Flow, World};
use rove_mp::Connection;
use rove_scenario::spec::Workload;
use rove_sim::histogram::Histogram;
use rove_sim::link::QueueDelaySummary;
use rove_sim::{Nanos, NS_PER_S};
use rove_tcp::sender::TcpSender;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub scenario: String,
    pub backend: &'static str,
    pub duration_s: f64,
    pub seed: u64,
    pub events: u64,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    /// Jain's fairness index over the flows' goodputs; null when every goodput is zero.
    pub jain_index: Option<f64>,
    /// What the controllers counted (absent when none reports): one entry per controller
    /// whose [`Controller::report`](crate::control::Controller::report) gives one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<ControllerReport>,
    /// What the reader should know (absent when nothing): scheduled actions or controllers'
    /// changes that could not be applied, finite flows that did not finish.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One controller's report, over the whole run (not the measurement window): where it sits
/// among the world's controllers (the scenario's `[[controllers]]` in order, then those its
/// flows imply), its kind, and what it counted, as the controller gives it.
#[derive(Debug, Clone, Serialize)]
pub struct ControllerReport {
    pub index: usize,
    pub kind: &'static str,
    pub report: serde_json::Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowSummary {
    pub name: String,
    pub cc: String,
    pub start_s: f64,
    /// In-order bytes delivered to the receiving application over the flow's active time
    /// (from its start to its completion, or to the end of the run).
    pub goodput_mbps: f64,
    /// Payload bytes that reached the receiver, duplicates included, over the same time.
    pub throughput_mbps: f64,
    pub mean_rtt_ms: Option<f64>,
    pub p95_rtt_ms: Option<f64>,
    /// Retransmitted segments over segments sent.
    pub retrans_rate: f64,
    /// Flow completion time for a finite flow that completed, from its start (SYN) to the ACK
    /// of its last byte; null otherwise.
    pub fct_s: Option<f64>,
    /// Finite flows (`size` given): whether every byte reached the application by the end of
    /// the run, and how many did not; null for unbounded and unresponsive flows. An unfinished
    /// transfer also adds a line to `warnings`.
    pub completed: Option<bool>,
    pub bytes_left: Option<u64>,
    pub bytes_delivered: u64,
    /// Multipath flows only (absent from single-path flows' entries).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub multipath: Option<MultipathSummary>,
    /// Unresponsive flows only.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub datagram: Option<DatagramSummary>,
    /// `workload = "video"` only.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoSummary>,
    /// `workload = "requests"` only.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestsSummary>,
}

/// What a video flow's summary adds: its frames, their delays and deadline misses. A frame
/// counts in the window when it is delivered or its deadline passes in it.
#[derive(Debug, Clone, Serialize)]
pub struct VideoSummary {
    pub workload: &'static str,
    /// Frames written and frames delivered in full (in order) to the receiving application.
    pub frames_sent: u64,
    pub frames_delivered: u64,
    pub deadline_ms: f64,
    /// Frames delivered after their deadline or still undelivered when it passed, and their
    /// share of the frames that were delivered or due; null when none was.
    pub deadline_misses: u64,
    pub deadline_miss_ratio: Option<f64>,
    /// Frame delay: from the frame's write to the in-order delivery of its last byte.
    pub frame_delay_mean_ms: Option<f64>,
    pub frame_delay_p50_ms: Option<f64>,
    pub frame_delay_p95_ms: Option<f64>,
    pub frame_delay_max_ms: Option<f64>,
    /// With a `required_delay` only: seed 003's per-packet application delay.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub packets: Option<PacketDelaySummary>,
}

/// A video's packets (segments) against its `required_delay` (seed 003's d_req): each
/// segment's delay runs from its frame's write to its own in-order delivery. A segment counts
/// in the window when it is delivered or its required delay passes in it.
#[derive(Debug, Clone, Serialize)]
pub struct PacketDelaySummary {
    pub required_delay_ms: f64,
    /// Segments written, and delivered in order to the receiving application.
    pub packets_sent: u64,
    pub packets_delivered: u64,
    /// Segments delivered within the required delay over those delivered or due (delivered
    /// late, or undelivered when it passed); null when none was.
    pub packets_within_required_delay: Option<f64>,
    pub packet_delay_mean_ms: Option<f64>,
    pub packet_delay_p50_ms: Option<f64>,
    pub packet_delay_p95_ms: Option<f64>,
}

/// What a request/response flow's summary adds: its transfers' completion times (from the
/// request to the in-order delivery of the response's last byte).
#[derive(Debug, Clone, Serialize)]
pub struct RequestsSummary {
    pub workload: &'static str,
    /// Responses written, and responses delivered in full.
    pub transfers_started: u64,
    pub transfers_completed: u64,
    pub fct_mean_s: Option<f64>,
    pub fct_p50_s: Option<f64>,
    pub fct_p95_s: Option<f64>,
    pub fct_max_s: Option<f64>,
}

/// What an unresponsive flow's summary adds: what was sent, lost and how late it arrived.
#[derive(Debug, Clone, Serialize)]
pub struct DatagramSummary {
    pub workload: &'static str,
    pub sent_pkts: u64,
    pub received_pkts: u64,
    /// Packets dropped on the way (by a queue, random loss or a path element) over packets
    /// sent; packets still in flight at the end count as neither.
    pub loss_rate: f64,
    /// One-way delay of the packets received.
    pub owd_mean_ms: Option<f64>,
    pub owd_p95_ms: Option<f64>,
}

/// What a multipath flow's summary adds (DESIGN.md, results).
#[derive(Debug, Clone, Serialize)]
pub struct MultipathSummary {
    pub scheduler: String,
    pub coupling: String,
    /// Reordering-buffer occupancy, time-averaged over the flow's active time, and its maximum.
    pub ofo_mean_bytes: f64,
    pub ofo_max_bytes: u64,
    /// Application delay: from a segment's first hand-over to a subflow to its in-order
    /// delivery, over every delivered segment; null when none was delivered.
    pub app_delay_mean_ms: Option<f64>,
    pub app_delay_p50_ms: Option<f64>,
    pub app_delay_p95_ms: Option<f64>,
    pub app_delay_p99_ms: Option<f64>,
    /// The largest application delay in the window, within the histogram's relative error (the
    /// top non-empty bucket's estimate; seed 003 Ch. 4's "delay bounded within 600 ms").
    pub app_delay_max_ms: Option<f64>,
    /// Download time of a finite transfer: from the start (first SYN) to the in-order delivery
    /// of its last byte at the receiver; null for unlimited or unfinished transfers.
    pub download_time_s: Option<f64>,
    /// Data segments that reached the receiver for data it already had (reinjections,
    /// redundant copies, spurious retransmissions).
    pub duplicate_segs: u64,
    /// Segments reinjected after their subflow failed.
    pub reinjected_segs: u64,
    /// Window-blocking segments retransmitted on a faster subflow, and slow-subflow cwnd
    /// halvings (the kernel's receive-buffer optimisation).
    pub opportunistic_segs: u64,
    pub penalizations: u64,
    /// Shared-bottleneck detection (a `detector` ran): its name, the fraction of 100-ms
    /// samples in the window whose grouping equalled the topology's (`rove_world::bottleneck`),
    /// the regroupings over the run, and the grouping at the end (subflow i's set id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detector: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detection_accuracy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detection_regroupings: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detection_groups: Option<Vec<u32>>,
    /// Paths with a cost (`paths[].cost`, seed 003's a_s per Mbit/s): Σ_s a_s·x_s with x_s each
    /// subflow's `throughput_mbps` (`crate::path_cost`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_cost: Option<f64>,
    /// The receiver behaviour (`receiver`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
    /// Its telemetry at the end of the run (`ReceiverBehaviour::telemetry`; SPC: active
    /// subflows, |R_F|, dup-ACKs, switches off and on), when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver_telemetry: Option<std::collections::BTreeMap<&'static str, f64>>,
    pub subflows: Vec<SubflowSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SubflowSummary {
    pub index: usize,
    pub path: Vec<String>,
    pub ack_path: Vec<String>,
    /// Time its SYN left (0 for the first subflow, one RTT later for the others), null if never.
    pub start_s: Option<f64>,
    pub established_s: Option<f64>,
    /// Payload that arrived on this subflow (duplicates included) over the flow's active time.
    pub throughput_mbps: f64,
    /// This subflow's part of the payload that arrived on all subflows.
    pub share: f64,
    pub mean_rtt_ms: Option<f64>,
    pub p95_rtt_ms: Option<f64>,
    pub retrans_rate: f64,
    pub segs_sent: u64,
    /// Times an RTO made it potentially failed (stopped being used, data reinjected).
    pub failures: u64,
    /// Paths with a cost: its a_s, and the largest x_s/c_s over 100-ms windows
    /// (`crate::path_cost`; absent before a window closed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_x_over_c: Option<f64>,
    /// Intentional ACK control (a receiver behaviour, or `[[actions]]` dupacks / withhold_acks),
    /// present when the flow has a receiver behaviour or one happened: duplicate-ACK episodes
    /// begun over the whole run and the time each began, the duplicate ACKs sent, and the ACKs
    /// withheld.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dupack_episodes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dupack_episode_times_s: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dupacks_sent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withheld_acks: Option<u64>,
    /// What the behaviour decided last for this subflow (R-TSC: W̄_r in packets, c_r and x*_r
    /// in Mbit/s; null where it had none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_cap_pkts: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_estimate_mbps: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_rate_mbps: Option<Option<f64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkSummary {
    pub name: String,
    /// Bytes that left the link over the bytes it could have carried (outages excluded).
    pub utilization: f64,
    #[serde(flatten)]
    pub queue_delay: QueueDelaySummary,
    pub drops: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    /// Radio links only (every kind but p2p): frames the MAC dropped after its retry limit,
    /// counted in `drops` and never in `queue_drops`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac_drops: Option<u64>,
    /// WiFi cells with drive-by stations only: packets for or from a station without data
    /// connectivity, counted in `drops`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline_drops: Option<u64>,
    /// A radio cell's counters (radio.parquet's columns) over the whole run, whatever the
    /// measurement window: equal to radio.parquet's last rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub radio: Option<RadioSummary>,
}

pub use rove_sim::link::wifi::counters::{DrivebySummary, RadioPortSummary, RadioSummary};

/// Jain's index (Σx)² / (n·Σx²).
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        return None;
    }
    Some(sum * sum / (xs.len() as f64 * sq))
}

/// The span a summary covers: the measurement window (the whole run by default) and the
/// counters at its edges.
struct Span<'a> {
    from: Nanos,
    to: Nanos,
    start: &'a Marks,
    end: &'a Marks,
}

impl Span<'_> {
    /// Seconds flow `f` was active inside the window: from its start (or the window's) to its
    /// completion (or the window's end).
    fn active_s(&self, f: &Flow, done: Option<Nanos>) -> f64 {
        secs(self.active_ns(f, done)).max(1e-9)
    }

    fn active_ns(&self, f: &Flow, done: Option<Nanos>) -> Nanos {
        let flow_end = done.unwrap_or(self.to).min(self.to);
        flow_end.saturating_sub(f.start_ns.max(self.from))
    }
}

fn rate(x: f64, r: f64) -> f64 {
    if r == 0.0 {
        0.0
    } else {
        x / r
    }
}

pub fn summarize(world: &World) -> Summary {
    let duration = world.scenario.duration_ns;
    let (from, to) = world.scenario.measure_ns;
    let zero;
    let now;
    let span = Span {
        from,
        to: to.min(duration),
        start: match &world.measure_marks[0] {
            Some(m) => m,
            None => {
                zero = Marks::zero(world);
                &zero
            }
        },
        end: match &world.measure_marks[1] {
            Some(m) => m,
            None => {
                now = Marks::take(world);
                &now
            }
        },
    };
    let flows: Vec<FlowSummary> = world
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut summary = match &f.transport {
                Transport::Tcp { sender, .. } => tcp_flow_summary(f, i, sender, &span),
                Transport::Multipath(c) => multipath_flow_summary(world, f, i, c, &span),
                Transport::Datagram { source, .. } => datagram_flow_summary(f, i, source, &span),
            };
            if let Some(a) = &f.app {
                app_summary(
                    &mut summary,
                    &a.app,
                    &span.start.flows[i],
                    &span.end.flows[i],
                );
            }
            // Over the whole run, not the measurement window: "finished" is about the transfer.
            if let (Some(size), Workload::Bulk) = (
                world.scenario.flows[i].size_bytes,
                &world.scenario.flows[i].workload,
            ) {
                let left = size.saturating_sub(f.bytes_delivered());
                summary.completed = Some(left == 0);
                summary.bytes_left = Some(left);
            }
            summary
        })
        .collect();
    let mut warnings = world.warnings.clone();
    for (f, wf) in flows.iter().zip(&world.flows) {
        if wf.bytes_delivered() == 0 && wf.start_ns < duration {
            warnings.push(format!(
                "flow {} delivered no data in the whole run (is its path too slow, too lossy or \
                 its window too small to carry a packet in {} s?)",
                f.name,
                secs(duration - wf.start_ns)
            ));
        }
    }
    for f in &flows {
        if let (Some(false), Some(left)) = (f.completed, f.bytes_left) {
            warnings.push(format!(
                "flow {} did not finish: {left} of its bytes had not reached the receiving \
                 application when the run ended (fct_s is null; a longer duration lets it finish)",
                f.name
            ));
        }
    }
    let links = world
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            // A trace's capacity at 0 counts its opportunities at 0: a window from the start
            // takes the capacity to its end as it is.
            let capacity = l.capacity_bytes(span.to)
                - if from > 0 {
                    l.capacity_bytes(from)
                } else {
                    0.0
                };
            let (s, e) = (&span.start.links[i], &span.end.links[i]);
            let soj = e.sojourn.since(&s.sojourn);
            let radio = l
                .radio()
                .filter(|r| r.in_summary())
                .map(|r| RadioSummary::of(&r.radio_totals(), r.driveby_summary(duration)));
            let driveby = radio.as_ref().is_some_and(|r| !r.driveby.is_empty());
            LinkSummary {
                name: l.name().to_string(),
                utilization: if capacity > 0.0 {
                    no_rounding_above_one((e.sent_bytes - s.sent_bytes) / capacity)
                } else {
                    0.0
                },
                queue_delay: QueueDelaySummary::of(&soj),
                drops: e.drops - s.drops,
                queue_drops: e.queue_drops - s.queue_drops,
                loss_drops: e.loss_drops - s.loss_drops,
                mac_drops: (l.kind() != "p2p").then(|| e.mac_drops - s.mac_drops),
                offline_drops: driveby.then(|| e.offline_drops - s.offline_drops),
                radio,
            }
        })
        .collect();
    let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_mbps).collect();
    let controllers = world
        .controllers
        .iter()
        .enumerate()
        .filter_map(|(index, c)| {
            let c = c.as_ref()?;
            Some(ControllerReport { index, kind: c.kind(), report: c.report()? })
        })
        .collect();
    Summary {
        scenario: world.scenario.name.clone(),
        backend: "sim",
        duration_s: secs(duration),
        seed: world.scenario.seed,
        events: world.events(),
        jain_index: jain_index(&goodputs),
        flows,
        links,
        controllers,
        warnings,
    }
}

/// A link busy for the whole window sends exactly its capacity, but the two are sums of
/// different floating-point terms: 1 + 2e-16 is rounding, and reads as 1. Anything further
/// above 1 is a bug and is left visible.
fn no_rounding_above_one(u: f64) -> f64 {
    if u > 1.0 && u < 1.0 + 1e-9 {
        1.0
    } else {
        u
    }
}

fn secs(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_S as f64
}

/// The largest sample of a window's histogram `h` (taken `since` the mark `earlier`): exact
/// when the window opens with the run, else its highest quantile (within the histogram's error).
fn window_max(h: &Histogram, earlier: &Histogram) -> Option<Nanos> {
    if earlier.is_empty() {
        h.max()
    } else {
        h.quantile(1.0)
    }
}

/// Adds an application's results (over the window from mark `s` to mark `e`).
fn app_summary(summary: &mut FlowSummary, app: &App, s: &FlowMark, e: &FlowMark) {
    let (a, b) = (&s.app, &e.app);
    let delays = b.delay.since(&a.delay);
    let delay_max = window_max(&delays, &a.delay);
    let written = b.writes - a.writes;
    let delivered = b.delivered - a.delivered;
    match app {
        App::Video(v) => {
            // Misses so far (late deliveries and frames overdue now) only ever grow: a frame
            // turns from overdue to late when it finally arrives.
            let misses = (b.late + e.overdue) - (a.late + s.overdue);
            let on_time = delivered - (b.late - a.late);
            summary.video = Some(VideoSummary {
                workload: app.name(),
                frames_sent: written,
                frames_delivered: delivered,
                deadline_ms: ns_to_ms(v.deadline_ns()),
                deadline_misses: misses,
                deadline_miss_ratio: (on_time + misses > 0)
                    .then(|| misses as f64 / (on_time + misses) as f64),
                frame_delay_mean_ms: delays.mean().map(|m| m / 1e6),
                frame_delay_p50_ms: delays.quantile(0.50).map(ns_to_ms),
                frame_delay_p95_ms: delays.quantile(0.95).map(ns_to_ms),
                frame_delay_max_ms: delay_max.map(ns_to_ms),
                packets: v.required_delay_ns().map(|required| {
                    let delays = b.packet_delay.since(&a.packet_delay);
                    let delivered = b.packets_delivered - a.packets_delivered;
                    let misses =
                        (b.packets_late + e.overdue_packets) - (a.packets_late + s.overdue_packets);
                    let on_time = delivered - (b.packets_late - a.packets_late);
                    PacketDelaySummary {
                        required_delay_ms: ns_to_ms(required),
                        packets_sent: b.packets_written - a.packets_written,
                        packets_delivered: delivered,
                        packets_within_required_delay: (on_time + misses > 0)
                            .then(|| on_time as f64 / (on_time + misses) as f64),
                        packet_delay_mean_ms: delays.mean().map(|m| m / 1e6),
                        packet_delay_p50_ms: delays.quantile(0.50).map(ns_to_ms),
                        packet_delay_p95_ms: delays.quantile(0.95).map(ns_to_ms),
                    }
                }),
            });
        }
        App::Requests(_) => {
            summary.requests = Some(RequestsSummary {
                workload: app.name(),
                transfers_started: written,
                transfers_completed: delivered,
                fct_mean_s: delays.mean().map(|m| m / 1e9),
                fct_p50_s: delays.quantile(0.50).map(secs),
                fct_p95_s: delays.quantile(0.95).map(secs),
                fct_max_s: delay_max.map(secs),
            });
        }
    }
}

fn tcp_flow_summary(f: &Flow, i: usize, sender: &TcpSender, span: &Span) -> FlowSummary {
    let (s, e) = (&span.start.flows[i], &span.end.flows[i]);
    let (s0, e0) = (s.subflow(0), e.subflow(0));
    let done = sender.stats.completed_at;
    let active_s = span.active_s(f, done);
    let rtts = e0.rtt.since(&s0.rtt);
    let delivered = e.delivered - s.delivered;
    FlowSummary {
        name: f.name.clone(),
        cc: f.cc_name.clone(),
        start_s: secs(f.start_ns),
        goodput_mbps: delivered as f64 * 8.0 / active_s / 1e6,
        throughput_mbps: (e0.received - s0.received) as f64 * 8.0 / active_s / 1e6,
        mean_rtt_ms: rtts.mean().map(|m| m / 1e6),
        p95_rtt_ms: rtts.quantile(0.95).map(ns_to_ms),
        retrans_rate: rate(
            (e0.retrans_segs - s0.retrans_segs) as f64,
            (e0.segs_sent - s0.segs_sent) as f64,
        ),
        fct_s: done.map(|t| secs(t - f.start_ns)),
        completed: None,
        bytes_left: None,
        bytes_delivered: delivered,
        multipath: None,
        datagram: None,
        video: None,
        requests: None,
    }
}

fn datagram_flow_summary(f: &Flow, i: usize, source: &DatagramSource, span: &Span) -> FlowSummary {
    let (s, e) = (&span.start.flows[i], &span.end.flows[i]);
    let active_s = span.active_s(f, None);
    let delivered = e.delivered - s.delivered;
    let goodput = delivered as f64 * 8.0 / active_s / 1e6;
    let sent = e.sent_pkts - s.sent_pkts;
    let owd = e.owd.since(&s.owd);
    FlowSummary {
        name: f.name.clone(),
        cc: f.cc_name.clone(),
        start_s: secs(f.start_ns),
        goodput_mbps: goodput,
        throughput_mbps: goodput,
        mean_rtt_ms: None,
        p95_rtt_ms: None,
        retrans_rate: 0.0,
        fct_s: None,
        completed: None,
        bytes_left: None,
        bytes_delivered: delivered,
        multipath: None,
        video: None,
        requests: None,
        datagram: Some(DatagramSummary {
            workload: source.kind(),
            sent_pkts: sent,
            received_pkts: e.received_pkts - s.received_pkts,
            loss_rate: rate((e.drops - s.drops) as f64, sent as f64),
            owd_mean_ms: owd.mean().map(|m| m / 1e6),
            owd_p95_ms: owd.quantile(0.95).map(ns_to_ms),
        }),
    }
}

fn multipath_flow_summary(
    world: &World,
    m: &Flow,
    i: usize,
    c: &Connection,
    span: &Span,
) -> FlowSummary {
    let (s, e) = (&span.start.flows[i], &span.end.flows[i]);
    let done = c.data.completed_at;
    let active_s = span.active_s(m, done);
    let diff = |j: usize| {
        let (a, b) = (s.subflow(j), e.subflow(j));
        (
            b.segs_sent - a.segs_sent,
            b.retrans_segs - a.retrans_segs,
            b.received - a.received,
        )
    };
    let rtt_window = |j: usize| e.subflow(j).rtt.since(&s.subflow(j).rtt);
    let n = c.subflows.len();
    let mut rtts = Histogram::default();
    for j in 0..n {
        rtts.merge(&rtt_window(j));
    }
    let sent: u64 = (0..n).map(|j| diff(j).0).sum();
    let retrans: u64 = (0..n).map(|j| diff(j).1).sum();
    let received: u64 = (0..n).map(|j| diff(j).2).sum();
    let link_names = |route: u32| {
        world
            .route(route)
            .iter()
            .map(|h| {
                let l = &world.links[h.link as usize];
                match l.port_names().get(h.port as usize) {
                    Some(p) => format!("{}:{p}", l.name()),
                    None => l.name().to_string(),
                }
            })
            .collect::<Vec<_>>()
    };
    let costs = world.scenario.flows[i]
        .multipath
        .as_ref()
        .and_then(|mp| mp.costs.as_deref());
    let report = c.receiver_behaviour().and_then(|b| b.report());
    let subflows: Vec<SubflowSummary> = c
        .subflows
        .iter()
        .enumerate()
        .map(|(j, sf)| {
            let st = &sf.sender.stats;
            let ia = &sf.receiver.intentional;
            let acks_controlled = c.receiver_name().is_some() || ia.episodes + ia.withheld_acks > 0;
            let shown = |v: u64| acks_controlled.then_some(v);
            let reported = |f: fn(&rove_mp::receiver::BehaviourReport) -> &Vec<Option<f64>>| {
                report.as_ref().map(|r| f(r).get(j).copied().flatten())
            };
            let (segs, re, rcv) = diff(j);
            let rtts = rtt_window(j);
            SubflowSummary {
                index: j,
                path: link_names(m.routes[j].data),
                ack_path: link_names(m.routes[j].ack),
                start_s: sf.started_at.map(secs),
                established_s: st.established_at.map(secs),
                throughput_mbps: rcv as f64 * 8.0 / active_s / 1e6,
                share: rate(rcv as f64, received as f64),
                mean_rtt_ms: rtts.mean().map(|m| m / 1e6),
                p95_rtt_ms: rtts.quantile(0.95).map(ns_to_ms),
                retrans_rate: rate(re as f64, segs as f64),
                segs_sent: segs,
                failures: sf.failures,
                // A subflow added at run time has no cost (and no part in path_cost).
                cost: costs.and_then(|c| c.get(j).copied()),
                peak_x_over_c: m
                    .rate_peaks
                    .as_ref()
                    .and_then(|p| p.peak.get(j).copied().flatten()),
                dupack_episodes: shown(ia.episodes),
                dupack_episode_times_s: acks_controlled
                    .then(|| ia.episode_starts.iter().map(|&t| secs(t)).collect()),
                dupacks_sent: shown(ia.dupacks),
                withheld_acks: shown(ia.withheld_acks),
                window_cap_pkts: reported(|r| &r.window_cap_pkts),
                capacity_estimate_mbps: reported(|r| &r.capacity_mbps),
                target_rate_mbps: reported(|r| &r.target_rate_mbps),
            }
        })
        .collect();
    let path_cost = costs.map(|_| {
        subflows
            .iter()
            .map(|s| s.cost.unwrap_or(0.0) * s.throughput_mbps)
            .sum()
    });
    let delays = e.app_delay.since(&s.app_delay);
    let total_bytes = c.data.bytes_before(c.data.total);
    let download = match (c.data.total, c.reorder.last_delivery_at, total_bytes) {
        (u64::MAX, _, _) | (_, _, None) => None,
        (_, Some(t), Some(total)) if c.reorder.bytes_delivered >= total => {
            Some(secs(t - m.start_ns))
        }
        _ => None,
    };
    let delivered = e.delivered - s.delivered;
    FlowSummary {
        name: m.name.clone(),
        cc: m.cc_name.clone(),
        start_s: secs(m.start_ns),
        goodput_mbps: delivered as f64 * 8.0 / active_s / 1e6,
        throughput_mbps: received as f64 * 8.0 / active_s / 1e6,
        mean_rtt_ms: rtts.mean().map(|m| m / 1e6),
        p95_rtt_ms: rtts.quantile(0.95).map(ns_to_ms),
        retrans_rate: rate(retrans as f64, sent as f64),
        fct_s: done.map(|t| secs(t - m.start_ns)),
        completed: None,
        bytes_left: None,
        bytes_delivered: delivered,
        datagram: None,
        video: None,
        requests: None,
        multipath: Some(MultipathSummary {
            scheduler: c.scheduler_name().to_string(),
            coupling: m.coupling.clone().unwrap_or_default(),
            ofo_mean_bytes: match span.active_ns(m, done) {
                0 => 0.0,
                ns => (e.ofo_area - s.ofo_area) as f64 / ns as f64,
            },
            ofo_max_bytes: c.reorder.ofo_max_bytes,
            app_delay_mean_ms: delays.mean().map(|m| m / 1e6),
            app_delay_p50_ms: delays.quantile(0.50).map(ns_to_ms),
            app_delay_p95_ms: delays.quantile(0.95).map(ns_to_ms),
            app_delay_p99_ms: delays.quantile(0.99).map(ns_to_ms),
            app_delay_max_ms: delays.quantile(1.0).map(ns_to_ms),
            download_time_s: download,
            duplicate_segs: c.reorder.duplicate_segs,
            reinjected_segs: c.reinjected_segs,
            opportunistic_segs: c.opportunistic_segs,
            penalizations: c.penalizations,
            detector: c.detection.as_ref().map(|d| d.name().to_string()),
            detection_accuracy: c.detection.as_ref().and_then(|_| {
                let n = e.detection_samples - s.detection_samples;
                (n > 0).then(|| (e.detection_matches - s.detection_matches) as f64 / n as f64)
            }),
            detection_regroupings: c.detection.as_ref().map(|d| d.regroupings),
            detection_groups: c.detection.as_ref().map(|d| d.groups().to_vec()),
            path_cost,
            receiver: c.receiver_name().map(str::to_string),
            receiver_telemetry: c.receiver_behaviour().and_then(|b| {
                let names = b.telemetry_names();
                let mut values = vec![0.0; names.len()];
                b.telemetry(&mut values);
                (!names.is_empty()).then(|| names.iter().copied().zip(values).collect())
            }),
            subflows,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_hand_values() {
        assert_eq!(jain_index(&[5.0, 5.0]), Some(1.0));
        assert_eq!(jain_index(&[10.0, 0.0]), Some(0.5));
        assert_eq!(jain_index(&[1.0, 2.0, 3.0]), Some(36.0 / 42.0));
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }
}
