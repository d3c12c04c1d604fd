//! What controllers (and the Python stepping API) see of a running world: one flat record per
//! subflow and per link. These are the features a learned controller is trained on, defined
//! once here: the feature recorder writes exactly these fields (see `control/features.rs`).

use crate::transport::Transport;
use crate::world::World;
use rove_tcp::sender::TcpSender;

/// A TCP sender's state, as `TCP_INFO` would report it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SenderView {
    pub cwnd_pkts: u32,
    pub ssthresh_pkts: u32,
    pub inflight_pkts: u32,
    /// Smoothed and minimum RTT; 0 before the first sample.
    pub srtt_ms: f64,
    pub min_rtt_ms: f64,
    pub delivery_rate_bps: f64,
    pub pacing_rate_bps: f64,
    /// Segments marked lost, and retransmitted, since the start.
    pub lost_pkts: u64,
    pub retrans_segs: u64,
    pub bytes_acked: u64,
    /// The live algorithm, its mode, and the sender's recovery state.
    pub cc: &'static str,
    pub mode: &'static str,
    pub ca_state: &'static str,
}

impl SenderView {
    pub fn of(s: &TcpSender) -> Self {
        let tp = &s.tp;
        SenderView {
            cwnd_pkts: tp.snd_cwnd,
            ssthresh_pkts: tp.snd_ssthresh,
            inflight_pkts: tp.packets_in_flight(),
            srtt_ms: tp.srtt_us as f64 / 1000.0,
            min_rtt_ms: if tp.min_rtt_us == u64::MAX {
                0.0
            } else {
                tp.min_rtt_us as f64 / 1000.0
            },
            delivery_rate_bps: tp.delivery_rate_bps(),
            pacing_rate_bps: tp.pacing_rate as f64 * 8.0,
            lost_pkts: tp.lost,
            retrans_segs: s.stats.retrans_segs,
            bytes_acked: tp.bytes_acked,
            cc: s.cc.name(),
            mode: s.cc_mode(),
            ca_state: tp.ca_state.name(),
        }
    }
}

/// A link's counters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkView {
    pub backlog_bytes: u64,
    pub backlog_pkts: usize,
    pub drops: u64,
    pub departed_bytes: u64,
    /// Bytes departed over the bytes it could have carried since the start.
    pub utilization: f64,
}

impl World {
    /// Scenario index of the flow named `name` ("a.2" for the second of a counted flow).
    pub fn flow_index(&self, name: &str) -> Option<usize> {
        self.flows.iter().position(|f| f.name == name)
    }

    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name() == name)
    }

    /// Subflow `sub` of flow `flow` (0 for a single-path flow).
    pub fn sender_view(&self, flow: usize, sub: usize) -> SenderView {
        SenderView::of(self.flows[flow].transport.sender(sub))
    }

    /// In-order bytes flow `flow`'s application received.
    pub fn bytes_delivered(&self, flow: usize) -> u64 {
        self.flows[flow].bytes_delivered()
    }

    /// Reordering-buffer occupancy of a multipath flow (0 for a single-path one).
    pub fn ofo_bytes(&self, flow: usize) -> u64 {
        match &self.flows[flow].transport {
            Transport::Multipath(c) => c.reorder.ofo_bytes,
            _ => 0,
        }
    }

    pub fn link_view(&self, link: usize) -> LinkView {
        let l = &self.links[link];
        let s = l.stats();
        let capacity = l.capacity_bytes(self.now());
        LinkView {
            backlog_bytes: l.backlog_bytes(),
            backlog_pkts: l.backlog_packets(),
            drops: s.drops(),
            departed_bytes: s.departed_bytes,
            utilization: if capacity > 0.0 {
                (s.departed_bytes as f64 - l.unsent_bytes(self.now())) / capacity
            } else {
                0.0
            },
        }
    }
}
