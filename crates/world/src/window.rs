//! Measurement windows (`measure = ["10s", "60s"]`): every summary metric is computed over the
//! window only, from two marks of the world's counters, one when the window opens and one when
//! it closes. A mark holds counters and copies of the (bounded) histograms, so a window's counts
//! and distributions are differences: nothing is recomputed and nothing is kept per packet.

use crate::transport::Transport;
use crate::workload::AppStats;
use crate::world::World;
use rove_sim::histogram::Histogram;
use rove_sim::Nanos;

/// One TCP sender/receiver pair's counters (a single-path flow's, or one subflow's).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SenderMark {
    pub segs_sent: u64,
    pub retrans_segs: u64,
    /// The sender's RTT histogram so far.
    pub rtt: Histogram,
    /// Payload that reached the receiver, duplicates included.
    pub received: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowMark {
    /// In-order payload the application got.
    pub delivered: u64,
    /// Per subflow (one for a single-path flow; none for an unresponsive one).
    pub subflows: Vec<SenderMark>,
    /// Multipath: the application-delay histogram so far, and the reordering buffer's
    /// occupancy integrated over time so far (byte-ns).
    pub app_delay: Histogram,
    pub ofo_area: u128,
    /// Multipath with shared-bottleneck detection: accuracy samples so far and how many
    /// matched the true grouping (`rove_mp::detection`).
    pub detection_samples: u64,
    pub detection_matches: u64,
    /// Unresponsive flows: packets sent and received, one-way-delay samples, drops.
    pub sent_pkts: u64,
    pub received_pkts: u64,
    pub owd: Histogram,
    pub drops: u64,
    /// Applications writing over time: their counters, and (video) the frames past their
    /// deadline and not delivered at this instant.
    pub app: AppStats,
    pub overdue: u64,
    /// Video with a `required_delay`: segments past it and not delivered at this instant.
    pub overdue_packets: u64,
}

impl FlowMark {
    /// Subflow `j`'s counters (zero for a subflow that did not exist yet).
    pub fn subflow(&self, j: usize) -> SenderMark {
        self.subflows.get(j).cloned().unwrap_or_default()
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkMark {
    /// Bytes serialized so far: departed, less the part of the packet on the wire not sent yet.
    pub sent_bytes: f64,
    /// The queueing-delay histogram so far.
    pub sojourn: Histogram,
    pub drops: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    /// Frames a radio MAC dropped after its retry limit (0 on other links).
    pub mac_drops: u64,
    /// Packets a drive-by WiFi station could not send or get (0 on other links).
    pub offline_drops: u64,
}

/// The world's counters at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Marks {
    pub at: Nanos,
    pub flows: Vec<FlowMark>,
    pub links: Vec<LinkMark>,
}

fn sender_mark(t: &Transport, j: usize) -> SenderMark {
    let (s, r) = (t.sender(j), t.receiver(j));
    SenderMark {
        segs_sent: s.stats.segs_sent,
        retrans_segs: s.stats.retrans_segs,
        rtt: s.stats.rtt.clone(),
        received: r.bytes_received,
    }
}

impl Marks {
    /// Everything zero at time 0: the mark of a window that opens with the run.
    pub fn zero(world: &World) -> Self {
        Marks {
            at: 0,
            flows: vec![FlowMark::default(); world.flows.len()],
            links: vec![LinkMark::default(); world.links.len()],
        }
    }

    pub fn take(world: &World) -> Self {
        let flows = world
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let t = &f.transport;
                let mut m = FlowMark {
                    delivered: f.bytes_delivered(),
                    drops: world.flow_drops(i),
                    ..Default::default()
                };
                if let Some(a) = &f.app {
                    m.app = a.app.stats().clone();
                    m.overdue = a.app.overdue(world.now());
                    m.overdue_packets = a.app.overdue_packets(world.now());
                }
                match t {
                    Transport::Tcp { .. } => m.subflows.push(sender_mark(t, 0)),
                    Transport::Multipath(c) => {
                        m.subflows = (0..c.subflows.len()).map(|j| sender_mark(t, j)).collect();
                        m.app_delay = c.app_delay.clone();
                        m.ofo_area = c.reorder.ofo_area_at(world.now());
                        if let Some(d) = &c.detection {
                            (m.detection_samples, m.detection_matches) = d.counts_at(world.now());
                        }
                    }
                    Transport::Datagram { source, sink } => {
                        m.sent_pkts = source.sent_pkts;
                        m.received_pkts = sink.received_pkts;
                        m.owd = sink.owd.clone();
                    }
                }
                m
            })
            .collect();
        let links = world
            .links
            .iter()
            .map(|l| {
                let s = l.stats();
                LinkMark {
                    sent_bytes: s.departed_bytes as f64 - l.unsent_bytes(world.now()),
                    sojourn: s.sojourn.all.clone(),
                    drops: s.drops(),
                    queue_drops: s.queue_drops,
                    loss_drops: s.loss_drops,
                    mac_drops: s.mac_drops,
                    offline_drops: s.offline_drops,
                }
            })
            .collect();
        Marks {
            at: world.now(),
            flows,
            links,
        }
    }
}
