//! Time series, sampled every `sample_interval` of simulated time: per flow (TCP_INFO-like
//! fields) and per link (backlog, drops, and the count, mean and maximum sojourn of the packets
//! dequeued since the previous sample). Columns are kept as vectors (struct of arrays) and handed out as-is.
//!
//! Flow rows come in scenario order; `flow` is the scenario's flow index. A multipath flow has
//! one connection row (`subflow` = -1, like every single-path row) followed by one row per
//! subflow (`subflow` = 0, 1, ...). In a connection row cwnd, ssthresh, inflight, pacing and
//! delivery rate are sums over the established subflows, srtt and min_rtt the lowest of theirs,
//! bytes_acked the DATA_ACKed bytes and bytes_delivered the in-order bytes the application got,
//! and `ofo_bytes` the connection's reordering-buffer occupancy. In a subflow row every field
//! is the subflow's own, and bytes_delivered counts the payload that arrived on it (duplicates
//! included): its throughput.

use crate::datagram::{DatagramSink, DatagramSource};
use crate::transport::Transport;
use crate::world::Flow;
use rove_mp::Connection;
use rove_sim::link::wifi::counters::{RadioSampling, RadioSeries};
use rove_sim::link::AnyLink;
use rove_sim::{Nanos, NS_PER_MS, NS_PER_S};
use rove_tcp::sender::TcpSender;

#[derive(Default, Debug, Clone)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    /// -1 for a flow's (or connection's) own row, else the subflow index.
    pub subflow: Vec<i32>,
    /// The congestion control live at the sample (a connection row: its first subflow's).
    pub cc: Vec<&'static str>,
    pub cwnd_pkts: Vec<u32>,
    pub ssthresh_pkts: Vec<u32>,
    pub inflight_pkts: Vec<u32>,
    pub pacing_rate_bps: Vec<f64>,
    pub srtt_ms: Vec<f64>,
    pub min_rtt_ms: Vec<f64>,
    pub delivery_rate_bps: Vec<f64>,
    pub bytes_acked: Vec<u64>,
    pub bytes_delivered: Vec<u64>,
    /// Payload that has reached the receiver, in order or not, duplicates included (a
    /// connection row: over its subflows): its rate is the arrival rate, which does not jump
    /// when a hole fills the way in-order delivery does.
    pub bytes_received: Vec<u64>,
    pub retrans_segs: Vec<u64>,
    pub ca_state: Vec<&'static str>,
    pub cc_state: Vec<&'static str>,
    /// Reordering-buffer occupancy of a multipath connection (its row), else 0.
    pub ofo_bytes: Vec<u64>,
    /// The algorithms' own telemetry columns (`CongestionControl::telemetry`), by name, in the
    /// order they first appeared; NaN in rows whose sender runs another algorithm.
    pub extra: Vec<(&'static str, Vec<f64>)>,
}

impl FlowSeries {
    /// Appends telemetry value `x` of column `name` to the current (last) row.
    fn put_extra(&mut self, name: &'static str, x: f64) {
        let rows = self.time_s.len();
        let col = match self.extra.iter().position(|(n, _)| *n == name) {
            Some(i) => &mut self.extra[i].1,
            None => {
                self.extra.push((name, vec![f64::NAN; rows - 1]));
                &mut self.extra.last_mut().expect("pushed").1
            }
        };
        col.push(x);
    }

    /// Ends a row: telemetry columns it did not fill get NaN.
    fn end_row(&mut self) {
        let rows = self.time_s.len();
        for (_, col) in &mut self.extra {
            if col.len() < rows {
                col.push(f64::NAN);
            }
        }
    }
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
    /// Bytes the link could have carried since the start of the run (its offered capacity,
    /// outages excluded): its rate is the capacity line of a trace-driven link.
    pub capacity_bytes: Vec<f64>,
    /// The packets that left the queue since the previous row: how many, and their mean and
    /// largest queueing delay (NaN when none left).
    pub sojourn_count: Vec<u64>,
    pub sojourn_mean_ms: Vec<f64>,
    pub sojourn_max_ms: Vec<f64>,
}

pub struct Recorder {
    pub flows: FlowSeries,
    pub links: LinkSeries,
    /// The radio cells' counters (`radio.parquet`), sampled with the other series or at a
    /// cell's own `sample_interval`.
    pub radio: RadioSeries,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    pub fn new() -> Self {
        Recorder {
            flows: FlowSeries::default(),
            links: LinkSeries::default(),
            radio: RadioSeries::default(),
        }
    }

    /// One row per flow (and subflow) and per link; takes each link's sojourn interval.
    pub fn sample(&mut self, now: Nanos, flows: &[Flow], links: &mut [AnyLink]) {
        let t = now as f64 / NS_PER_S as f64;
        for (k, f) in flows.iter().enumerate() {
            let k = k as u32;
            match &f.transport {
                Transport::Tcp { sender, receiver } => {
                    let done = sender.is_complete().then_some("done");
                    let bytes = (f.bytes_delivered(), receiver.bytes_received);
                    self.sender_row(t, k, -1, sender, bytes, done);
                }
                Transport::Datagram { source, sink } => {
                    self.datagram_row(t, now, k, f.start_ns, source, sink)
                }
                Transport::Multipath(c) => {
                    self.connection_row(t, now, k, f.start_ns, c);
                    let done = c.is_complete().then_some("done");
                    for (j, sf) in c.subflows.iter().enumerate() {
                        let state = if sf.potentially_failed && done.is_none() {
                            Some("failed")
                        } else {
                            done
                        };
                        // A subflow row's bytes_delivered is what arrived on it (duplicates
                        // included): its throughput.
                        let bytes = (sf.receiver.bytes_received, sf.receiver.bytes_received);
                        self.sender_row(t, k, j as i32, &sf.sender, bytes, state);
                    }
                }
            }
        }
        for (i, l) in links.iter_mut().enumerate() {
            let s = &mut self.links;
            let (backlog_bytes, backlog_pkts) = (l.backlog_bytes(), l.backlog_packets() as u32);
            let capacity = l.capacity_bytes(now);
            let stats = l.stats_mut();
            let soj = stats.sojourn.take_interval();
            s.time_s.push(t);
            s.link.push(i as u32);
            s.backlog_bytes.push(backlog_bytes);
            s.backlog_pkts.push(backlog_pkts);
            s.drops.push(stats.drops());
            s.queue_drops.push(stats.queue_drops);
            s.loss_drops.push(stats.loss_drops);
            s.departed_bytes.push(stats.departed_bytes);
            s.capacity_bytes.push(capacity);
            s.sojourn_count.push(soj.count);
            s.sojourn_mean_ms.push(soj.mean_ms().unwrap_or(f64::NAN));
            s.sojourn_max_ms.push(soj.max_ms().unwrap_or(f64::NAN));
        }
        for (i, l) in links.iter().enumerate() {
            if let Some(r) = l.radio() {
                if r.radio_sampling() == RadioSampling::WithRecorder {
                    r.sample_radio(now, i as u32, &mut self.radio);
                }
            }
        }
    }

    /// The radio cells' rows at the end of the run (`now`): any sampled at `now` already are
    /// replaced, so the last rows hold the counters the summary reports.
    pub fn final_radio_sample(&mut self, now: Nanos, links: &[AnyLink]) {
        if !links.iter().any(|l| l.radio().is_some()) {
            return;
        }
        self.radio.truncate_from(now as f64 / NS_PER_S as f64);
        for (i, l) in links.iter().enumerate() {
            if let Some(r) = l.radio() {
                r.sample_radio(now, i as u32, &mut self.radio);
            }
        }
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl Recorder {
    /// One row of a TCP sender: a single-path flow's (`sub` = -1) or a subflow's. A sender that
    /// is not established (or not yet started) is "idle"; otherwise `state` ("done", "failed")
    /// overrides the algorithm's states.
    fn sender_row(
        &mut self,
        t: f64,
        k: u32,
        sub: i32,
        sender: &TcpSender,
        (bytes_delivered, bytes_received): (u64, u64),
        state: Option<&'static str>,
    ) {
        let s = &mut self.flows;
        let tp = &sender.tp;
        s.time_s.push(t);
        s.flow.push(k);
        s.subflow.push(sub);
        s.cc.push(sender.cc_name());
        s.cwnd_pkts.push(tp.snd_cwnd);
        s.ssthresh_pkts.push(tp.snd_ssthresh);
        s.inflight_pkts.push(tp.packets_in_flight());
        s.pacing_rate_bps.push(tp.pacing_rate as f64 * 8.0);
        s.srtt_ms.push(ms(tp.srtt_us));
        s.min_rtt_ms.push(if tp.min_rtt_us == u64::MAX {
            0.0
        } else {
            ms(tp.min_rtt_us)
        });
        s.delivery_rate_bps.push(tp.delivery_rate_bps());
        s.bytes_acked.push(tp.bytes_acked);
        s.bytes_delivered.push(bytes_delivered);
        s.bytes_received.push(bytes_received);
        s.retrans_segs.push(sender.stats.retrans_segs);
        let (ca, cc) = match state {
            _ if !sender.is_established() => ("idle", "idle"),
            Some("failed") => ("failed", sender.cc_mode()),
            Some(st) => (st, st),
            None => (tp.ca_state.name(), sender.cc_mode()),
        };
        s.ca_state.push(ca);
        s.cc_state.push(cc);
        s.ofo_bytes.push(0);
        let names = sender.cc.telemetry_names();
        if !names.is_empty() {
            let mut values = [0.0; 8];
            let values = &mut values[..names.len()];
            sender.cc.telemetry(tp, values);
            for (name, &x) in names.iter().zip(values.iter()) {
                s.put_extra(name, x);
            }
        }
        s.end_row();
    }

    /// An unresponsive flow's row: what it sent and what arrived; the TCP columns are 0.
    fn datagram_row(
        &mut self,
        t: f64,
        now: Nanos,
        k: u32,
        start_ns: Nanos,
        source: &DatagramSource,
        sink: &DatagramSink,
    ) {
        let s = &mut self.flows;
        s.time_s.push(t);
        s.flow.push(k);
        s.subflow.push(-1);
        s.cc.push(source.kind());
        s.cwnd_pkts.push(0);
        s.ssthresh_pkts.push(0);
        s.inflight_pkts.push(0);
        s.pacing_rate_bps.push(0.0);
        s.srtt_ms.push(0.0);
        s.min_rtt_ms.push(0.0);
        s.delivery_rate_bps.push(0.0);
        s.bytes_acked.push(0);
        s.bytes_delivered.push(sink.payload_bytes);
        s.bytes_received.push(sink.payload_bytes);
        s.retrans_segs.push(0);
        let state = if now < start_ns {
            "idle"
        } else if source.is_complete() {
            "done"
        } else {
            "open"
        };
        s.ca_state.push(state);
        s.cc_state.push(if state == "open" {
            source.kind()
        } else {
            state
        });
        s.ofo_bytes.push(0);
        s.end_row();
    }

    /// A multipath connection's own row: sums and minima over its established subflows.
    fn connection_row(&mut self, t: f64, now: Nanos, k: u32, start_ns: Nanos, c: &Connection) {
        let established = || c.subflows.iter().filter(|sf| sf.sender.is_established());
        let min_nonzero = |xs: &mut dyn Iterator<Item = u64>| {
            xs.filter(|&x| x != 0 && x != u64::MAX).min().unwrap_or(0)
        };
        let s = &mut self.flows;
        s.time_s.push(t);
        s.flow.push(k);
        s.subflow.push(-1);
        s.cc.push(c.subflows[0].sender.cc_name());
        s.cwnd_pkts.push(
            established()
                .map(|sf| sf.sender.tp.snd_cwnd)
                .fold(0u32, |a, b| a.saturating_add(b)),
        );
        s.ssthresh_pkts.push(
            established()
                .map(|sf| sf.sender.tp.snd_ssthresh)
                .fold(0u32, |a, b| a.saturating_add(b)),
        );
        s.inflight_pkts.push(
            established()
                .map(|sf| sf.sender.tp.packets_in_flight())
                .sum(),
        );
        s.pacing_rate_bps.push(
            established()
                .map(|sf| sf.sender.tp.pacing_rate as f64 * 8.0)
                .sum(),
        );
        s.srtt_ms.push(ms(min_nonzero(
            &mut established().map(|sf| sf.sender.tp.srtt_us),
        )));
        s.min_rtt_ms.push(ms(min_nonzero(
            &mut established().map(|sf| sf.sender.tp.min_rtt_us),
        )));
        s.delivery_rate_bps.push(
            established()
                .map(|sf| sf.sender.tp.delivery_rate_bps())
                .sum(),
        );
        s.bytes_acked.push(c.data.bytes_acked());
        s.bytes_delivered.push(c.reorder.bytes_delivered);
        s.bytes_received
            .push(c.subflows.iter().map(|sf| sf.receiver.bytes_received).sum());
        s.retrans_segs.push(
            c.subflows
                .iter()
                .map(|sf| sf.sender.stats.retrans_segs)
                .sum(),
        );
        let state = if now < start_ns || established().next().is_none() {
            "idle"
        } else if c.is_complete() {
            "done"
        } else {
            "open"
        };
        s.ca_state.push(state);
        s.cc_state
            .push(if state == "open" { "multipath" } else { state });
        s.ofo_bytes.push(c.reorder.ofo_bytes);
        if let Some(b) = c.receiver_behaviour() {
            let names = b.telemetry_names();
            let mut values = [0.0; MAX_RECEIVER_TELEMETRY];
            let values = &mut values[..names.len()];
            b.telemetry(values);
            for (name, &x) in names.iter().zip(values.iter()) {
                s.put_extra(name, x);
            }
        }
        s.end_row();
    }
}

/// Most time-series columns a receiver behaviour has (`ReceiverBehaviour::telemetry_names`).
pub const MAX_RECEIVER_TELEMETRY: usize = 8;

/// Nanoseconds to milliseconds as f64.
pub fn ns_to_ms(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_MS as f64
}
