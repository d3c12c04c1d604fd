//! The run's summary (summary.json, DESIGN.md "Results"), computed from the endpoints' and
//! links' counters at the end of a run.

use crate::datagram::{DatagramSink, DatagramSource};
use crate::record::ns_to_ms;
use crate::transport::Transport;
use crate::world::{Flow, World};
use rove_mp::Connection;
use rove_sim::{Nanos, NS_PER_S};
use rove_tcp::receiver::TcpReceiver;
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
    /// Scheduled actions or controllers' changes that could not be applied (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
    pub bytes_delivered: u64,
    /// Multipath flows only (absent from single-path flows' entries).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub multipath: Option<MultipathSummary>,
    /// Unresponsive flows only.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub datagram: Option<DatagramSummary>,
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
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkSummary {
    pub name: String,
    /// Bytes that left the link over the bytes it could have carried (outages excluded).
    pub utilization: f64,
    pub mean_queue_delay_ms: Option<f64>,
    pub p95_queue_delay_ms: Option<f64>,
    pub drops: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
}

/// Nearest-rank percentile (the smallest value with at least `q` of the samples at or below it).
pub fn percentile(samples: &[Nanos], q: f64) -> Option<Nanos> {
    if samples.is_empty() {
        return None;
    }
    let mut v = samples.to_vec();
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    let (_, x, _) = v.select_nth_unstable(rank);
    Some(*x)
}

pub fn mean(samples: &[Nanos]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    Some(samples.iter().map(|&x| x as f64).sum::<f64>() / samples.len() as f64)
}

/// Jain's index (Σx)² / (n·Σx²).
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        return None;
    }
    Some(sum * sum / (xs.len() as f64 * sq))
}

pub fn summarize(world: &World) -> Summary {
    let duration = world.scenario.duration_ns;
    let flows: Vec<FlowSummary> = world
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| match &f.transport {
            Transport::Tcp { sender, receiver } => tcp_flow_summary(f, sender, receiver, duration),
            Transport::Multipath(c) => multipath_flow_summary(world, f, c, duration),
            Transport::Datagram { source, sink } => {
                datagram_flow_summary(f, source, sink, world.flow_drops(i), duration)
            }
        })
        .collect();
    let links = world
        .links
        .iter()
        .map(|l| {
            let capacity = l.capacity_bytes(duration);
            let stats = l.stats();
            let soj = &stats.sojourn_ns;
            LinkSummary {
                name: l.name().to_string(),
                utilization: if capacity > 0.0 {
                    stats.departed_bytes as f64 / capacity
                } else {
                    0.0
                },
                mean_queue_delay_ms: mean(soj).map(|m| m / 1e6),
                p95_queue_delay_ms: percentile(soj, 0.95).map(ns_to_ms),
                drops: stats.drops(),
                queue_drops: stats.queue_drops,
                loss_drops: stats.loss_drops,
            }
        })
        .collect();
    let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_mbps).collect();
    Summary {
        scenario: world.scenario.name.clone(),
        backend: "sim",
        duration_s: secs(duration),
        seed: world.scenario.seed,
        events: world.events(),
        jain_index: jain_index(&goodputs),
        flows,
        links,
        warnings: world.warnings.clone(),
    }
}

fn secs(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_S as f64
}

fn tcp_flow_summary(
    f: &Flow,
    sender: &TcpSender,
    receiver: &TcpReceiver,
    duration: Nanos,
) -> FlowSummary {
    let done = sender.stats.completed_at;
    let end = done.unwrap_or(duration).min(duration);
    let active_s = secs(end.saturating_sub(f.start_ns)).max(1e-9);
    let rtts = &sender.stats.rtt_samples_ns;
    let sent = sender.stats.segs_sent;
    FlowSummary {
        name: f.name.clone(),
        cc: f.cc_name.clone(),
        start_s: secs(f.start_ns),
        goodput_mbps: receiver.bytes_delivered as f64 * 8.0 / active_s / 1e6,
        throughput_mbps: receiver.bytes_received as f64 * 8.0 / active_s / 1e6,
        mean_rtt_ms: mean(rtts).map(|m| m / 1e6),
        p95_rtt_ms: percentile(rtts, 0.95).map(ns_to_ms),
        retrans_rate: if sent == 0 {
            0.0
        } else {
            sender.stats.retrans_segs as f64 / sent as f64
        },
        fct_s: done.map(|t| secs(t - f.start_ns)),
        bytes_delivered: receiver.bytes_delivered,
        multipath: None,
        datagram: None,
    }
}

fn datagram_flow_summary(
    f: &Flow,
    source: &DatagramSource,
    sink: &DatagramSink,
    drops: u64,
    duration: Nanos,
) -> FlowSummary {
    let active_s = secs(duration.saturating_sub(f.start_ns)).max(1e-9);
    let rate = sink.payload_bytes as f64 * 8.0 / active_s / 1e6;
    FlowSummary {
        name: f.name.clone(),
        cc: f.cc_name.clone(),
        start_s: secs(f.start_ns),
        goodput_mbps: rate,
        throughput_mbps: rate,
        mean_rtt_ms: None,
        p95_rtt_ms: None,
        retrans_rate: 0.0,
        fct_s: None,
        bytes_delivered: sink.payload_bytes,
        multipath: None,
        datagram: Some(DatagramSummary {
            workload: source.kind(),
            sent_pkts: source.sent_pkts,
            received_pkts: sink.received_pkts,
            loss_rate: if source.sent_pkts == 0 {
                0.0
            } else {
                drops as f64 / source.sent_pkts as f64
            },
            owd_mean_ms: mean(&sink.owd_ns).map(|m| m / 1e6),
            owd_p95_ms: percentile(&sink.owd_ns, 0.95).map(ns_to_ms),
        }),
    }
}

fn multipath_flow_summary(world: &World, m: &Flow, c: &Connection, duration: Nanos) -> FlowSummary {
    let done = c.data.completed_at;
    let end = done.unwrap_or(duration).min(duration);
    let active_s = secs(end.saturating_sub(m.start_ns)).max(1e-9);
    let rtts: Vec<Nanos> = c
        .subflows
        .iter()
        .flat_map(|sf| sf.sender.stats.rtt_samples_ns.iter().copied())
        .collect();
    let sent: u64 = c.subflows.iter().map(|sf| sf.sender.stats.segs_sent).sum();
    let retrans: u64 = c
        .subflows
        .iter()
        .map(|sf| sf.sender.stats.retrans_segs)
        .sum();
    let received: u64 = c.subflows.iter().map(|sf| sf.receiver.bytes_received).sum();
    let link_names = |route: u32| {
        world
            .route(route)
            .iter()
            .map(|h| world.links[h.link as usize].name().to_string())
            .collect::<Vec<_>>()
    };
    let subflows = c
        .subflows
        .iter()
        .enumerate()
        .map(|(j, sf)| {
            let st = &sf.sender.stats;
            SubflowSummary {
                index: j,
                path: link_names(m.routes[j].data),
                ack_path: link_names(m.routes[j].ack),
                start_s: sf.started_at.map(secs),
                established_s: st.established_at.map(secs),
                throughput_mbps: sf.receiver.bytes_received as f64 * 8.0 / active_s / 1e6,
                share: if received == 0 {
                    0.0
                } else {
                    sf.receiver.bytes_received as f64 / received as f64
                },
                mean_rtt_ms: mean(&st.rtt_samples_ns).map(|m| m / 1e6),
                p95_rtt_ms: percentile(&st.rtt_samples_ns, 0.95).map(ns_to_ms),
                retrans_rate: if st.segs_sent == 0 {
                    0.0
                } else {
                    st.retrans_segs as f64 / st.segs_sent as f64
                },
                segs_sent: st.segs_sent,
                failures: sf.failures,
            }
        })
        .collect();
    let delays = &c.app_delay_ns;
    let total_bytes = c.data.bytes_before(c.data.total);
    let download = match (c.data.total, c.reorder.last_delivery_at) {
        (u64::MAX, _) => None,
        (_, Some(t)) if c.reorder.bytes_delivered >= total_bytes => Some(secs(t - m.start_ns)),
        _ => None,
    };
    FlowSummary {
        name: m.name.clone(),
        cc: m.cc_name.clone(),
        start_s: secs(m.start_ns),
        goodput_mbps: c.reorder.bytes_delivered as f64 * 8.0 / active_s / 1e6,
        throughput_mbps: received as f64 * 8.0 / active_s / 1e6,
        mean_rtt_ms: mean(&rtts).map(|m| m / 1e6),
        p95_rtt_ms: percentile(&rtts, 0.95).map(ns_to_ms),
        retrans_rate: if sent == 0 {
            0.0
        } else {
            retrans as f64 / sent as f64
        },
        fct_s: done.map(|t| secs(t - m.start_ns)),
        bytes_delivered: c.reorder.bytes_delivered,
        datagram: None,
        multipath: Some(MultipathSummary {
            scheduler: c.scheduler_name().to_string(),
            coupling: m.coupling.clone().unwrap_or_default(),
            ofo_mean_bytes: c.reorder.mean_ofo_bytes(m.start_ns, end.max(m.start_ns)),
            ofo_max_bytes: c.reorder.ofo_max_bytes,
            app_delay_mean_ms: mean(delays).map(|m| m / 1e6),
            app_delay_p50_ms: percentile(delays, 0.50).map(ns_to_ms),
            app_delay_p95_ms: percentile(delays, 0.95).map(ns_to_ms),
            app_delay_p99_ms: percentile(delays, 0.99).map(ns_to_ms),
            download_time_s: download,
            duplicate_segs: c.reorder.duplicate_segs,
            reinjected_segs: c.reinjected_segs,
            opportunistic_segs: c.opportunistic_segs,
            penalizations: c.penalizations,
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

    #[test]
    fn nearest_rank_percentile() {
        let xs: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&xs, 0.95), Some(95));
        assert_eq!(percentile(&[7], 0.95), Some(7));
        assert_eq!(percentile(&[3, 1, 2], 0.5), Some(2));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
