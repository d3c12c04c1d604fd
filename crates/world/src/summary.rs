//! The run's summary (summary.json, DESIGN.md "Results"), computed from the endpoints' and
//! links' counters at the end of a run.

use crate::record::ns_to_ms;
use crate::world::World;
use rove_sim::{Nanos, NS_PER_S};
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
    let secs = |ns: Nanos| ns as f64 / NS_PER_S as f64;
    let flows: Vec<FlowSummary> = world
        .flows
        .iter()
        .map(|f| {
            let done = f.sender.stats.completed_at;
            let end = done.unwrap_or(duration).min(duration);
            let active_s = secs(end.saturating_sub(f.start_ns)).max(1e-9);
            let rtts = &f.sender.stats.rtt_samples_ns;
            let sent = f.sender.stats.segs_sent;
            FlowSummary {
                name: f.name.clone(),
                cc: f.cc_name.clone(),
                start_s: secs(f.start_ns),
                goodput_mbps: f.receiver.bytes_delivered as f64 * 8.0 / active_s / 1e6,
                throughput_mbps: f.receiver.bytes_received as f64 * 8.0 / active_s / 1e6,
                mean_rtt_ms: mean(rtts).map(|m| m / 1e6),
                p95_rtt_ms: percentile(rtts, 0.95).map(ns_to_ms),
                retrans_rate: if sent == 0 { 0.0 } else { f.sender.stats.retrans_segs as f64 / sent as f64 },
                fct_s: done.map(|t| secs(t - f.start_ns)),
                bytes_delivered: f.receiver.bytes_delivered,
            }
        })
        .collect();
    let links = world
        .links
        .iter()
        .map(|l| {
            let capacity = l.capacity_bytes(duration);
            let soj = &l.stats.sojourn_ns;
            LinkSummary {
                name: l.name.clone(),
                utilization: if capacity > 0.0 { l.stats.departed_bytes as f64 / capacity } else { 0.0 },
                mean_queue_delay_ms: mean(soj).map(|m| m / 1e6),
                p95_queue_delay_ms: percentile(soj, 0.95).map(ns_to_ms),
                drops: l.stats.drops(),
                queue_drops: l.stats.queue_drops,
                loss_drops: l.stats.loss_drops,
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
