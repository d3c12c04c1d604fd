//! What a run will cost, from its scenario alone (before anything is built): events, peak
//! memory and the size of its results. `rove validate` prints it and `rove run` refuses a run
//! that cannot fit in the machine's memory (python/rove/guards.py holds the policy); nothing
//! here allocates per flow or per packet.
//!
//! The model is deliberately simple and errs high: every flow sends at its fair share of the
//! slowest link of its path (an unresponsive source at its configured rate, dropped or not),
//! a TCP receiver acknowledges every second segment, and each packet costs two events per link
//! it crosses. The per-item costs are measured on this engine (see each constant); an estimate
//! is meant to be right within a factor of two, which is what a refusal needs.

use rove_scenario::{Hop, Scenario, Serializer, Workload};
use serde::Serialize;

/// Engine state per flow once built (sender, receiver, their buffers and histograms), measured
/// with 2000 flows: ~13 KiB; rounded up.
pub const BYTES_PER_FLOW: u64 = 16 * 1024;
/// The summary's working set per flow at the end of a run (windowed histograms, per-flow
/// records), measured with 2000 flows.
pub const BYTES_PER_FLOW_AT_END: u64 = 24 * 1024;
/// One time-series row: 144 bytes in the engine's columns, which grow by doubling (so up to
/// twice that), plus a 4-byte dictionary key per name column while the file is written (the
/// results are written from the engine's own columns, one column at a time: crates/results).
/// Measured: 139-194 bytes per row of a whole `rove run` at 600,000 rows (10 flows x 600 s,
/// 100 flows x 60 s, 2000 flows x 3 s).
pub const BYTES_PER_SERIES_ROW: u64 = 200;
/// One queue row: 88 bytes in the engine's columns, as the time series grows, and the link's
/// dictionary key.
pub const BYTES_PER_QUEUE_ROW: u64 = 128;
/// One `radio.parquet` row: ~150 bytes in the engine (rove_sim's `RadioSeries`), as the time
/// series grows, and five name columns' dictionary keys.
pub const BYTES_PER_RADIO_ROW: u64 = 230;
/// A link's queueing-delay histogram at its largest (37 KiB, rove_sim::histogram) and the
/// copies a measurement window keeps.
pub const BYTES_PER_LINK: u64 = 3 * 37 * 1024;
/// Events per packet per link crossed (offer/service/arrival); measured 1.7 on the 10-flow
/// dumbbell (1.28 M events for 0.75 M link crossings).
pub const EVENTS_PER_CROSSING: f64 = 2.0;
/// Segment size used for the estimate (the engine's MSS plus headers).
const PACKET_BYTES: f64 = 1500.0;
/// An ACK every second full segment (delayed ACKs).
const ACKS_PER_SEGMENT: f64 = 0.5;
/// The Python interpreter with rove and its engine loaded, before the run (`rove run` imports
/// neither numpy nor pyarrow): measured 19.3 MiB at the peak of a 1-s single-flow run.
pub const BASELINE_BYTES: u64 = 24 * 1024 * 1024;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Estimate {
    /// Flows after `count` expansion, and their subflows (1 each for single-path flows).
    pub flows: u64,
    pub subflows: u64,
    /// Time-series samples per flow row (`duration / sample_interval`).
    pub samples: u64,
    pub sample_interval_ns: u64,
    /// Packets crossing links over the run (each link crossing counted once).
    pub link_crossings: f64,
    pub events: f64,
    /// Peak memory of the run, in bytes, and its parts.
    pub memory_bytes: u64,
    pub flow_state_bytes: u64,
    pub series_bytes: u64,
    pub queue_bytes: u64,
}

/// The radio cells' counter rows (`radio.parquet`: a row per port per sample, at the cell's
/// own `sample_interval` or the scenario's), counted with the queue rows.
fn radio_bytes(s: &Scenario) -> u64 {
    s.links
        .iter()
        .filter(|l| l.kind == "wifi" || l.kind == "lte")
        .map(|l| {
            let interval = l
                .model
                .get("sample_interval")
                .and_then(|v| v.as_str())
                .and_then(|t| rove_scenario::units::parse_time(t).ok())
                .filter(|&ns| ns > 0)
                .unwrap_or(s.sample_interval_ns.max(1));
            let rows = s.duration_ns.div_ceil(interval) + 1;
            rows.saturating_mul(l.ports.len() as u64)
                .saturating_mul(BYTES_PER_RADIO_ROW)
        })
        .fold(0u64, u64::saturating_add)
}

/// The capacity of a link in bit/s: its largest scheduled rate, or its trace's mean.
fn capacity_bps(serializer: &Serializer) -> f64 {
    match serializer {
        Serializer::Rate { rate_bps, changes } => {
            changes.iter().map(|c| c.rate_bps).fold(*rate_bps, u64::max) as f64
        }
        Serializer::Trace {
            opportunities_ms,
            period_ms,
            ..
        } => opportunities_ms.len() as f64 * PACKET_BYTES * 8.0 * 1000.0 / f64::from(*period_ms),
        Serializer::Model { peak_bps } => *peak_bps as f64,
    }
}

pub fn estimate(s: &Scenario) -> Estimate {
    let duration_s = s.duration_ns as f64 / 1e9;
    let capacity: Vec<f64> = s
        .links
        .iter()
        .map(|l| capacity_bps(&l.serializer))
        .collect();
    // Each data path (a flow's, or each subflow's) and what it offers.
    let mut paths: Vec<(&[Hop], &[Hop], Option<(f64, f64)>)> = Vec::new();
    for f in &s.flows {
        match (&f.multipath, &f.workload) {
            (
                _,
                Workload::Unresponsive {
                    rate_bps,
                    packet_bytes,
                    ..
                },
            ) => paths.push((
                &f.path,
                &[],
                Some((*rate_bps as f64, f64::from(*packet_bytes))),
            )),
            (Some(mp), _) => {
                for sub in &mp.paths {
                    paths.push((&sub.path, &sub.ack_path, None));
                }
            }
            (None, _) => paths.push((&f.path, &f.ack_path, None)),
        }
    }
    let mut sharing = vec![0u64; s.links.len()];
    for (path, _, _) in &paths {
        for l in Hop::links(path) {
            sharing[l] += 1;
        }
    }
    let mut crossings = 0.0;
    for (path, ack_path, offered) in &paths {
        let (packets_per_s, acks) = match offered {
            Some((rate, bytes)) => (rate / (bytes.max(1.0) * 8.0), 0.0),
            None => {
                let share = Hop::links(path)
                    .map(|l| capacity[l] / sharing[l].max(1) as f64)
                    .fold(f64::INFINITY, f64::min);
                let pkts = share / (PACKET_BYTES * 8.0);
                (pkts, pkts * ACKS_PER_SEGMENT)
            }
        };
        crossings +=
            duration_s * (packets_per_s * path.len() as f64 + acks * ack_path.len() as f64);
    }
    let flows = s.flows.len() as u64;
    let subflows = s
        .flows
        .iter()
        .map(|f| f.multipath.as_ref().map_or(1, |m| m.paths.len() as u64))
        .sum::<u64>();
    let samples = s.duration_ns.div_ceil(s.sample_interval_ns.max(1));
    // A multipath flow records one row for itself and one per subflow.
    let series_rows_per_sample = flows
        + s.flows
            .iter()
            .filter_map(|f| f.multipath.as_ref().map(|m| m.paths.len() as u64))
            .sum::<u64>();
    let events =
        crossings * EVENTS_PER_CROSSING + samples as f64 * (flows + s.links.len() as u64) as f64;
    let flow_state_bytes = flows.saturating_mul(BYTES_PER_FLOW + BYTES_PER_FLOW_AT_END)
        + (subflows - flows.min(subflows)).saturating_mul(BYTES_PER_FLOW);
    let series_bytes = samples
        .saturating_mul(series_rows_per_sample)
        .saturating_mul(BYTES_PER_SERIES_ROW);
    let queue_bytes = samples
        .saturating_mul(s.links.len() as u64)
        .saturating_mul(BYTES_PER_QUEUE_ROW)
        .saturating_add((s.links.len() as u64).saturating_mul(BYTES_PER_LINK))
        .saturating_add(radio_bytes(s));
    Estimate {
        flows,
        subflows,
        samples,
        sample_interval_ns: s.sample_interval_ns,
        link_crossings: crossings,
        events,
        memory_bytes: BASELINE_BYTES
            .saturating_add(flow_state_bytes)
            .saturating_add(series_bytes)
            .saturating_add(queue_bytes),
        flow_state_bytes,
        series_bytes,
        queue_bytes,
    }
}
