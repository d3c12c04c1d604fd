//! Time series, sampled every `sample_interval` of simulated time: per flow (TCP_INFO-like
//! fields) and per link (backlog, drops, and the sojourn of every packet dequeued since the
//! previous sample). Columns are kept as vectors (struct of arrays) and handed out as-is.

use crate::world::Flow;
use rove_sim::link::Link;
use rove_sim::{Nanos, NS_PER_MS, NS_PER_S};

#[derive(Default, Debug, Clone)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub cwnd_pkts: Vec<u32>,
    pub ssthresh_pkts: Vec<u32>,
    pub inflight_pkts: Vec<u32>,
    pub pacing_rate_bps: Vec<f64>,
    pub srtt_ms: Vec<f64>,
    pub min_rtt_ms: Vec<f64>,
    pub delivery_rate_bps: Vec<f64>,
    pub bytes_acked: Vec<u64>,
    pub bytes_delivered: Vec<u64>,
    pub retrans_segs: Vec<u64>,
    pub ca_state: Vec<&'static str>,
    pub cc_state: Vec<&'static str>,
}

#[derive(Default, Debug, Clone)]
pub struct LinkSeries {
    pub time_s: Vec<f64>,
    pub link: Vec<u32>,
    pub backlog_bytes: Vec<u64>,
    pub backlog_pkts: Vec<u32>,
    pub drops: Vec<u64>,
    pub queue_drops: Vec<u64>,
    pub loss_drops: Vec<u64>,
    pub departed_bytes: Vec<u64>,
    /// Row i's sojourn samples are `link.stats.sojourn_ns[sojourn_from[i]..sojourn_to[i]]`.
    pub sojourn_from: Vec<usize>,
    pub sojourn_to: Vec<usize>,
}

pub struct Recorder {
    pub flows: FlowSeries,
    pub links: LinkSeries,
    /// Per link: how many sojourn samples the previous row covered.
    sojourn_seen: Vec<usize>,
}

impl Recorder {
    pub fn new(n_links: usize, n_flows: usize) -> Self {
        let _ = n_flows;
        Recorder { flows: FlowSeries::default(), links: LinkSeries::default(), sojourn_seen: vec![0; n_links] }
    }

    pub fn sample(&mut self, now: Nanos, flows: &[Flow], links: &[Link]) {
        let t = now as f64 / NS_PER_S as f64;
        let ms = |us: u64| us as f64 / 1000.0;
        for (i, f) in flows.iter().enumerate() {
            let s = &mut self.flows;
            let tp = &f.sender.tp;
            s.time_s.push(t);
            s.flow.push(i as u32);
            s.cwnd_pkts.push(tp.snd_cwnd);
            s.ssthresh_pkts.push(tp.snd_ssthresh);
            s.inflight_pkts.push(tp.packets_in_flight());
            s.pacing_rate_bps.push(tp.pacing_rate as f64 * 8.0);
            s.srtt_ms.push(ms(tp.srtt_us));
            s.min_rtt_ms.push(if tp.min_rtt_us == u64::MAX { 0.0 } else { ms(tp.min_rtt_us) });
            s.delivery_rate_bps.push(tp.delivery_rate_bps());
            s.bytes_acked.push(tp.bytes_acked);
            s.bytes_delivered.push(f.receiver.bytes_delivered);
            s.retrans_segs.push(f.sender.stats.retrans_segs);
            let (ca, cc) = if now < f.start_ns || !f.sender.is_established() {
                ("idle", "idle")
            } else if f.sender.is_complete() {
                ("done", "done")
            } else {
                (tp.ca_state.name(), f.sender.cc_mode())
            };
            s.ca_state.push(ca);
            s.cc_state.push(cc);
        }
        for (i, l) in links.iter().enumerate() {
            let s = &mut self.links;
            s.time_s.push(t);
            s.link.push(i as u32);
            s.backlog_bytes.push(l.backlog_bytes());
            s.backlog_pkts.push(l.backlog_packets() as u32);
            s.drops.push(l.stats.drops());
            s.queue_drops.push(l.stats.queue_drops);
            s.loss_drops.push(l.stats.loss_drops);
            s.departed_bytes.push(l.stats.departed_bytes);
            s.sojourn_from.push(self.sojourn_seen[i]);
            s.sojourn_to.push(l.stats.sojourn_ns.len());
            self.sojourn_seen[i] = l.stats.sojourn_ns.len();
        }
    }
}

/// Nanoseconds to milliseconds as f64.
pub fn ns_to_ms(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_MS as f64
}
