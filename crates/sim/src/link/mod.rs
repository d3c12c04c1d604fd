//! The unidirectional link model, shared by the simulator and the kernel backend's emulator.
//!
//! A packet offered to a link meets, in order: random loss (Bernoulli or Gilbert-Elliott, drawn
//! on entry as tc-netem does), the queue (DropTail or CoDel), the serializer (fixed rate with a
//! schedule, or a Mahimahi trace), scheduled outages (the serializer stops, the queue keeps
//! filling), then propagation delay plus optional jitter.
//!
//! The link owns no clock. `offer` and `service` take `now`; when the link needs to be serviced
//! later it returns that time and the driver calls `service` then. At most one service call is
//! outstanding at a time. Packets leave through `LinkOutput`s pushed to a caller-owned buffer,
//! so nothing allocates per packet.

mod fq_codel;
mod impairment;
pub mod lte;
pub mod model;
mod pie;
pub mod ports;
pub mod queue;
pub mod radio;
pub mod serializer;
pub mod wifi;

use crate::histogram::Histogram;
use crate::packet::PacketId;
use crate::rng::Stream;
use crate::Nanos;
use impairment::{Loss, Propagation};
pub use model::{AnyLink, LinkChange, LinkModel, Offer};
use queue::{Queue, QueuedPacket};
use rove_scenario::spec::{LinkSpec, LossSpec, Outage, RateChange, Serializer as SerializerSpec};
use serializer::{serialization_ns, CapacityPrefix, RateSchedule, TraceCursor};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// Random loss on entry.
    Loss,
    /// The queue was full (tail drop).
    QueueFull,
    /// Dropped by the AQM (CoDel) at dequeue.
    Aqm,
    /// A radio MAC gave up on the frame after its retry limit (not congestion: the queue had
    /// room; counted in `LinkStats::mac_drops`).
    MacRetryLimit,
    /// A drive-by WiFi station had no data connectivity (a hole between roadside APs, or an
    /// association still setting up): not congestion, not the MAC (counted in
    /// `LinkStats::offline_drops`).
    Offline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkOutput {
    /// The packet reaches the far end of the link at `at`.
    Deliver { id: PacketId, at: Nanos },
    /// The packet is gone; the driver frees it.
    Drop { id: PacketId, reason: DropReason },
}

/// Counters and samples a link accumulates; the recorder reads them.
#[derive(Debug, Default, Clone)]
pub struct LinkStats {
    pub arrived_pkts: u64,
    pub departed_bytes: u64,
    pub departed_pkts: u64,
    pub loss_drops: u64,
    pub queue_drops: u64,
    /// Frames a radio MAC dropped after its retry limit (never counted as queue drops).
    pub mac_drops: u64,
    /// Packets for or from a drive-by WiFi station without data connectivity.
    pub offline_drops: u64,
    /// Sojourn time of the packets that left the queue.
    pub sojourn: SojournStats,
}

/// The queueing delays of the packets that left a queue, in bounded memory: a histogram over the
/// whole run (the summary's mean and percentiles, and the windows' differences), and the count,
/// sum and maximum since the recorder's previous sample (one row of `queue.parquet`).
#[derive(Debug, Default, Clone)]
pub struct SojournStats {
    pub all: Histogram,
    interval: SojournInterval,
}

/// The sojourns recorded between two samples.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SojournInterval {
    pub count: u64,
    pub sum_ns: u128,
    pub max_ns: Nanos,
}

impl SojournInterval {
    /// The mean sojourn in ms, `None` when nothing left the queue.
    pub fn mean_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64 / 1e6)
    }

    pub fn max_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.max_ns as f64 / 1e6)
    }
}

/// A queue's delays as the results report them (`summary.json`'s link keys, on both backends).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct QueueDelaySummary {
    pub mean_queue_delay_ms: Option<f64>,
    pub p95_queue_delay_ms: Option<f64>,
    pub p99_queue_delay_ms: Option<f64>,
    pub max_queue_delay_ms: Option<f64>,
    /// The 0th (minimum), 1st, ..., 100th percentile (nearest rank, within the histogram's
    /// relative error): the distribution in 101 numbers, for CDF plots; empty when no packet
    /// left the queue.
    pub queue_delay_percentiles_ms: Vec<f64>,
}

impl QueueDelaySummary {
    pub fn of(h: &Histogram) -> Self {
        let ms = |ns: Nanos| ns as f64 / 1e6;
        QueueDelaySummary {
            mean_queue_delay_ms: h.mean().map(|m| m / 1e6),
            p95_queue_delay_ms: h.quantile(0.95).map(ms),
            p99_queue_delay_ms: h.quantile(0.99).map(ms),
            max_queue_delay_ms: h.max().map(ms),
            queue_delay_percentiles_ms: h.percentiles().into_iter().map(ms).collect(),
        }
    }
}

impl SojournStats {
    #[inline]
    pub fn record(&mut self, ns: Nanos) {
        self.all.record(ns);
        let i = &mut self.interval;
        i.count += 1;
        i.sum_ns += ns as u128;
        i.max_ns = i.max_ns.max(ns);
    }

    /// The sojourns since the previous call (or the start), and a new interval from now.
    pub fn take_interval(&mut self) -> SojournInterval {
        std::mem::take(&mut self.interval)
    }
}

impl LinkStats {
    pub fn drops(&self) -> u64 {
        self.loss_drops + self.queue_drops + self.mac_drops + self.offline_drops
    }
}

enum Serializer {
    Rate(RateSchedule),
    /// `in_service`: the head packet and its bytes not yet covered by opportunities.
    Trace {
        cursor: TraceCursor,
        in_service: Option<(QueuedPacket, u32)>,
    },
}

pub struct Link {
    pub name: String,
    spec: LinkSpec,
    queue: Queue,
    serializer: Serializer,
    loss: Loss,
    propagation: Propagation,
    /// Fixed-rate serializer busy until this time, with the packet it started at
    /// `serving_since` (`serving_bytes` long): counted as departed when it started, so
    /// [`unsent_bytes`](Link::unsent_bytes) can take back what is not on the wire yet.
    busy_until: Nanos,
    serving_since: Nanos,
    serving_bytes: u32,
    /// Index of the first outage that has not ended yet.
    next_outage: usize,
    /// Time of the service call the driver has been asked for, if any.
    service_pending: Option<Nanos>,
    /// The rate schedule's capacity from time 0 (fixed-rate links only), for utilisation.
    capacity_prefix: Option<CapacityPrefix>,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(spec: &LinkSpec, run_seed: u64) -> Self {
        let serializer = match &spec.serializer {
            SerializerSpec::Rate { rate_bps, changes } => {
                Serializer::Rate(RateSchedule::new(*rate_bps, changes.clone()))
            }
            SerializerSpec::Trace {
                opportunities_ms,
                period_ms,
                ..
            } => Serializer::Trace {
                cursor: TraceCursor::new(opportunities_ms.clone(), *period_ms),
                in_service: None,
            },
            SerializerSpec::Model { .. } => {
                unreachable!("the parser gives a point-to-point link a rate or a trace")
            }
        };
        let label = |what: &str| format!("link:{}:{}", spec.name, what);
        Link {
            name: spec.name.clone(),
            spec: spec.clone(),
            queue: if spec.ports.is_empty() {
                Queue::new(&spec.queue, run_seed, &label("pie"))
            } else {
                Queue::with_ports(&spec.queue, spec.ports.len(), run_seed, &label("pie"))
            },
            serializer,
            loss: Loss::new(spec.loss, Stream::new(run_seed, &label("loss"))),
            propagation: Propagation::new(
                spec.delay_ns,
                spec.jitter,
                Stream::new(run_seed, &label("jitter")),
            ),
            busy_until: 0,
            serving_since: 0,
            serving_bytes: 0,
            next_outage: 0,
            service_pending: None,
            capacity_prefix: capacity_prefix(&spec.serializer),
            stats: LinkStats::default(),
        }
    }

    pub fn spec(&self) -> &LinkSpec {
        &self.spec
    }

    pub fn backlog_packets(&self) -> usize {
        self.queue.len_packets()
    }

    pub fn backlog_bytes(&self) -> u64 {
        self.queue.len_bytes()
    }

    /// Offers a packet to the link at `now`. Drops are pushed to `out`. Returns the time at which
    /// the driver must call `service`, when the link was idle and now has work.
    #[inline(always)]
    pub fn offer(&mut self, now: Nanos, packet: Offer, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        let Offer {
            id,
            bytes,
            port,
            flow,
        } = packet;
        self.stats.arrived_pkts += 1;
        if self.loss.drops_next() {
            self.stats.loss_drops += 1;
            out.push(LinkOutput::Drop {
                id,
                reason: DropReason::Loss,
            });
            return None;
        }
        let p = QueuedPacket {
            id,
            bytes,
            enqueued_at: now,
        };
        if let Some(reason) =
            self.queue
                .enqueue(now, p, flow, port, out, &mut self.stats.queue_drops)
        {
            self.stats.queue_drops += 1;
            out.push(LinkOutput::Drop { id, reason });
            return None;
        }
        if self.service_pending.is_some() {
            return None;
        }
        let t = self.next_service_time(now);
        if t == now && matches!(self.serializer, Serializer::Rate(_)) {
            // An idle fixed-rate link starts serializing at once: the packet being sent does
            // not count against the queue limit, as with a qdisc feeding an idle NIC.
            return self.service(now, out);
        }
        self.service_pending = Some(t);
        Some(t)
    }

    /// Runs the serializer at `now` (a time this link asked for). Returns the next service time,
    /// if the link still has work.
    pub fn service(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        self.service_pending = None;
        let outage_end = self.outage_end_at(now);
        if outage_end > now {
            // The link is down: look again when it comes back up.
            self.service_pending = Some(self.next_service_time(outage_end));
            return self.service_pending;
        }
        let more = match self.serializer {
            Serializer::Rate(_) => self.serve_rate(now, out),
            Serializer::Trace { .. } => self.serve_trace(now, out),
        };
        if more {
            let t = self.next_service_time(now);
            self.service_pending = Some(t);
        }
        self.service_pending
    }

    /// Fixed rate: start serializing the head packet. Returns whether more work remains.
    #[inline]
    fn serve_rate(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) -> bool {
        let Serializer::Rate(schedule) = &mut self.serializer else {
            unreachable!()
        };
        let rate_bps = schedule.rate_at(now);
        let Some(p) = self.queue.dequeue(now, out, &mut self.stats.queue_drops) else {
            return false;
        };
        let departs = now + serialization_ns(p.bytes, rate_bps);
        self.busy_until = departs;
        self.serving_since = now;
        self.serving_bytes = p.bytes;
        self.record_departure(now, &p);
        let at = self.propagation.arrival(departs);
        out.push(LinkOutput::Deliver { id: p.id, at });
        !self.queue.is_empty()
    }

    /// Trace: spend the opportunities at `now` on the head of the queue. Returns whether more
    /// work remains.
    fn serve_trace(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) -> bool {
        let Serializer::Trace { cursor, in_service } = &mut self.serializer else {
            unreachable!()
        };
        cursor.seek(now);
        if cursor.time_ns() != now {
            // Asked too early (cannot happen with times this link gave out); try again later.
            return true;
        }
        let mut credit = cursor.take_all_at_cursor() * TraceCursor::opportunity_bytes();
        while credit > 0 {
            let (p, remaining) = match in_service.take() {
                Some(s) => s,
                None => match self.queue.dequeue(now, out, &mut self.stats.queue_drops) {
                    Some(p) => {
                        self.stats.sojourn.record(now - p.enqueued_at);
                        (p, p.bytes)
                    }
                    None => break, // unused bytes of this opportunity are lost
                },
            };
            let used = remaining.min(credit);
            credit -= used;
            if used < remaining {
                *in_service = Some((p, remaining - used));
                break;
            }
            self.stats.departed_bytes += p.bytes as u64;
            self.stats.departed_pkts += 1;
            let at = self.propagation.arrival(now);
            out.push(LinkOutput::Deliver { id: p.id, at });
        }
        in_service.is_some() || !self.queue.is_empty()
    }

    fn record_departure(&mut self, now: Nanos, p: &QueuedPacket) {
        self.stats.departed_bytes += p.bytes as u64;
        self.stats.departed_pkts += 1;
        self.stats.sojourn.record(now - p.enqueued_at);
    }

    /// The earliest time at or after `now` the serializer can act: after the packet being
    /// serialized, at the next trace opportunity, and outside outages.
    fn next_service_time(&mut self, now: Nanos) -> Nanos {
        let mut t = now;
        loop {
            t = match &mut self.serializer {
                Serializer::Rate(_) => t.max(self.busy_until),
                Serializer::Trace { cursor, .. } => {
                    cursor.seek(t);
                    cursor.time_ns()
                }
            };
            let end = self.outage_end_at(t);
            if end <= t {
                return t;
            }
            t = end;
        }
    }

    /// If `t` falls inside an outage, its end; otherwise `t`. Outages are sorted and disjoint,
    /// and `t` never decreases between calls.
    fn outage_end_at(&mut self, t: Nanos) -> Nanos {
        let outages: &[Outage] = &self.spec.outages;
        while let Some(o) = outages.get(self.next_outage) {
            if o.end_ns <= t {
                self.next_outage += 1;
                continue;
            }
            return if o.start_ns <= t { o.end_ns } else { t };
        }
        t
    }

    /// Bytes counted in `departed_bytes` that are not serialized yet at `now`: the rest of the
    /// packet on the wire of a fixed-rate link (a trace-driven link counts a packet when its
    /// last byte leaves). Utilisation counts `departed_bytes - unsent_bytes`, so a slow link
    /// never shows more than it could carry (a 1500-byte packet takes 120 ms at 100 kbit/s).
    pub fn unsent_bytes(&self, now: Nanos) -> f64 {
        if self.busy_until <= now || self.busy_until <= self.serving_since {
            return 0.0;
        }
        f64::from(self.serving_bytes) * (self.busy_until - now) as f64
            / (self.busy_until - self.serving_since) as f64
    }

    /// Bytes the link could have carried in `[0, until]`, outages excluded.
    pub fn capacity_bytes(&self, until: Nanos) -> f64 {
        let in_window = |from: Nanos, to: Nanos| -> f64 {
            match &self.spec.serializer {
                SerializerSpec::Rate { rate_bps, changes } => match &self.capacity_prefix {
                    Some(prefix) if from == 0 => prefix.bytes_until(*rate_bps, changes, to),
                    _ => RateSchedule::capacity_bytes(*rate_bps, changes, from, to),
                },
                SerializerSpec::Trace {
                    opportunities_ms,
                    period_ms,
                    ..
                } => {
                    // Opportunities at exactly `until` still deliver within the run.
                    let end = if to == until { to + 1 } else { to };
                    TraceCursor::count_between(opportunities_ms, *period_ms, from, end) as f64
                        * TraceCursor::opportunity_bytes() as f64
                }
                SerializerSpec::Model { .. } => 0.0,
            }
        };
        let mut total = in_window(0, until);
        for o in &self.spec.outages {
            let (a, b) = (o.start_ns.min(until), o.end_ns.min(until));
            if b > a {
                total -= in_window(a, b);
            }
        }
        total.max(0.0)
    }
}

fn capacity_prefix(serializer: &SerializerSpec) -> Option<CapacityPrefix> {
    match serializer {
        SerializerSpec::Rate { rate_bps, changes } => Some(CapacityPrefix::new(*rate_bps, changes)),
        _ => None,
    }
}

impl LinkModel for Link {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "p2p"
    }

    fn port(&self, name: &str) -> Option<u16> {
        self.spec
            .ports
            .iter()
            .position(|p| p == name)
            .map(|i| i as u16)
    }

    fn port_names(&self) -> Vec<String> {
        self.spec.ports.clone()
    }

    #[inline]
    fn offer(&mut self, now: Nanos, packet: Offer, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        Link::offer(self, now, packet, out)
    }

    #[inline]
    fn service(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        Link::service(self, now, out)
    }

    fn stats(&self) -> &LinkStats {
        &self.stats
    }

    fn stats_mut(&mut self) -> &mut LinkStats {
        &mut self.stats
    }

    fn backlog_bytes(&self) -> u64 {
        Link::backlog_bytes(self)
    }

    fn backlog_packets(&self) -> usize {
        Link::backlog_packets(self)
    }

    fn capacity_bytes(&self, until: Nanos) -> f64 {
        Link::capacity_bytes(self, until)
    }

    fn unsent_bytes(&self, now: Nanos) -> f64 {
        Link::unsent_bytes(self, now)
    }

    fn change(&mut self, now: Nanos, change: LinkChange) -> Result<(), String> {
        match change {
            LinkChange::Rate(rate_bps) => {
                let (Serializer::Rate(schedule), SerializerSpec::Rate { changes, .. }) =
                    (&mut self.serializer, &mut self.spec.serializer)
                else {
                    return Err(format!(
                        "link {:?} is trace-driven: its rate is the trace's",
                        self.name
                    ));
                };
                schedule.set_rate(now, rate_bps);
                // The spec's schedule is what the capacity (utilisation) is computed from.
                let at = changes.partition_point(|c| c.at_ns <= now);
                changes.insert(
                    at,
                    RateChange {
                        at_ns: now,
                        rate_bps,
                    },
                );
                self.capacity_prefix = capacity_prefix(&self.spec.serializer);
            }
            LinkChange::Delay(delay_ns) => {
                self.propagation.set_delay(delay_ns);
                self.spec.delay_ns = delay_ns;
            }
            LinkChange::Loss(p) => {
                let spec = if p > 0.0 {
                    LossSpec::Bernoulli { p }
                } else {
                    LossSpec::None
                };
                self.loss.set(spec);
                self.spec.loss = spec;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
