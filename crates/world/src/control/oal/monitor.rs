//! The AP's packet monitor (seed-004 §4: Open vSwitch's datapath on the AP), a path element at
//! the entry of the WiFi cell that the OAL controller places for itself. For each downlink TCP
//! flow through the cell it sees the data segments reaching the AP's queue and the station's
//! ACKs on their way up, and:
//!
//! * counts arrivals (packets, bytes) and every packet forwarded (the datapath's data rate);
//! * detects losses from the packet stream as the paper does, "by checking the sequence and
//!   payload of each packet": a data segment at or below the highest one seen is a
//!   retransmission, so an earlier copy was lost ([GAP] spurious retransmissions count too);
//! * keeps UNA, the segments seen going down and not yet acknowledged by an ACK going up
//!   (Hagos et al.'s window estimate, seed-004 §7);
//! * measures the flow's round trip through the AP from TCP timestamps ([GAP]: the paper does
//!   not say how the AP knows RTT): the air part from a data segment's TSval to the first ACK
//!   echoing it, the wired part from an ACK's TSval to the first data segment echoing it; the
//!   flow's RTT is the sum of the two parts' minima;
//! * rewrites the receive window of the flow's ACKs to the controller's target
//!   ([`rewritten_window`](super::allocate::rewritten_window): scaled, never raised).
//!
//! [GAP] The element sits at the cell's entry, so it sees an ACK as it enters the station's
//! uplink queue, one uplink access earlier than the AP would (the window written is the one the
//! controller holds at that moment).
//!
//! The monitor reads a packet as an [`Observed`]: the simulator's element fills one from its
//! `Packet` (sequence numbers count segments), the kernel backend's emulator from a real
//! IPv4/TCP header (`crates/emu/src/oal.rs`: sequence numbers count bytes, windows in the
//! flow's own scale), so both backends run this one monitor.

use super::allocate::rewritten_window;
use crate::element::{Fate, PathElement};
use rove_sim::packet::{Direction, Kind, Packet};
use rove_sim::Nanos;
use std::sync::{Arc, Mutex};

/// One downlink flow as the AP sees it.
#[derive(Debug, Clone, Copy)]
pub struct FlowSeen {
    pub tracked: bool,
    /// The station (index among the cell's) the flow's data go to.
    pub station: usize,
    /// The receive window scale of the flow's ACKs.
    pub wscale: u8,
    /// Sequence units per segment: 1 where sequence numbers count segments (the simulator),
    /// the flow's MSS where they count bytes (the kernel backend).
    pub units_per_segment: u64,
    /// The next sequence number after the highest seen going down.
    pub next_seq: u64,
    /// The highest cumulative ACK seen going up.
    pub high_ack: u64,
    /// Since the last tick.
    pub arrivals_pkts: u64,
    pub arrivals_bytes: u64,
    pub retransmissions: u64,
    /// The window the controller wants written into the flow's ACKs.
    pub target_bytes: Option<u64>,
    pub(super) probe_air: Option<(u32, Nanos)>,
    pub(super) probe_wired: Option<(u32, Nanos)>,
    pub min_air_ns: Nanos,
    pub min_wired_ns: Nanos,
}

impl FlowSeen {
    pub const UNTRACKED: FlowSeen = FlowSeen {
        tracked: false,
        station: 0,
        wscale: 0,
        units_per_segment: 1,
        next_seq: 0,
        high_ack: 0,
        arrivals_pkts: 0,
        arrivals_bytes: 0,
        retransmissions: 0,
        target_bytes: None,
        probe_air: None,
        probe_wired: None,
        min_air_ns: Nanos::MAX,
        min_wired_ns: Nanos::MAX,
    };

    /// Unacknowledged segments past the AP ([GAP] on the kernel: bytes over the MSS, rounded
    /// down).
    pub fn una_pkts(&self) -> u64 {
        self.next_seq.saturating_sub(self.high_ack) / self.units_per_segment.max(1)
    }

    /// The round trip through the AP (both parts' minima); `None` before both are measured.
    pub fn min_rtt_ns(&self) -> Option<Nanos> {
        (self.min_air_ns != Nanos::MAX && self.min_wired_ns != Nanos::MAX)
            .then(|| self.min_air_ns + self.min_wired_ns)
    }
}

/// What a packet is to the monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A downlink data segment (it carries payload).
    Segment,
    /// An uplink acknowledgment (not a SYN-ACK: its window is never scaled, RFC 7323 §2.2).
    Ack,
    /// Anything else of a tracked flow (handshake, a bare FIN): counted as forwarded only.
    Other,
}

/// A packet as the monitor reads it, and the window it may rewrite.
#[derive(Debug, Clone, Copy)]
pub struct Observed {
    pub role: Role,
    /// Bytes on the wire (IP and TCP headers included).
    pub wire_bytes: u32,
    /// Segment: its first and end sequence numbers (units: [`FlowSeen::units_per_segment`]).
    pub seq: u64,
    pub seq_end: u64,
    /// Ack: the cumulative acknowledgment, same units.
    pub ack: u64,
    /// TCP timestamp option (RFC 7323).
    pub tsval: u32,
    pub tsecr: u32,
    /// Ack: the advertised window in bytes (the field shifted by the flow's scale); the
    /// monitor lowers it when the controller holds a target for the flow.
    pub rwnd_bytes: u64,
}

impl Observed {
    /// The simulator's packet as the monitor reads it.
    fn of(p: &Packet) -> Observed {
        let role = match (p.direction, p.kind) {
            (Direction::Data, Kind::Segment) => Role::Segment,
            (Direction::Ack, Kind::Ack) => Role::Ack,
            _ => Role::Other,
        };
        Observed {
            role,
            wire_bytes: p.wire_bytes,
            seq: p.seq,
            seq_end: p.seq + 1,
            ack: p.ack,
            tsval: p.tsval,
            tsecr: p.tsecr,
            rwnd_bytes: p.rwnd_bytes,
        }
    }
}

/// TCP timestamps compare modulo 2^32 (RFC 7323 §5.2).
fn ts_at_or_after(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) as i32 >= 0
}

/// What the monitor shares with the controller.
#[derive(Debug, Clone)]
pub struct Monitor {
    pub flows: Vec<FlowSeen>,
    /// Since the last tick: bytes and packets forwarded, both directions.
    pub datapath_bytes: u64,
    pub datapath_pkts: u64,
    /// Run totals.
    pub retransmissions: u64,
    pub rewrites: u64,
    /// The least window written (bytes) may be, unless the client advertised less.
    pub floor_bytes: u64,
}

impl Monitor {
    pub fn new(flows: Vec<FlowSeen>, floor_bytes: u64) -> Self {
        Monitor {
            flows,
            datapath_bytes: 0,
            datapath_pkts: 0,
            retransmissions: 0,
            rewrites: 0,
            floor_bytes,
        }
    }

    /// Flow `flow`'s packet `p` enters the cell at `now`: counts it, follows the flow's
    /// sequence and round trip, and on an ACK writes the controller's target into
    /// `p.rwnd_bytes` (scaled, never raised). Returns whether the window was lowered.
    pub fn see(&mut self, now: Nanos, flow: usize, p: &mut Observed) -> bool {
        let Some(f) = self.flows.get_mut(flow).filter(|f| f.tracked) else {
            return false;
        };
        self.datapath_bytes += u64::from(p.wire_bytes);
        self.datapath_pkts += 1;
        match p.role {
            Role::Other => false,
            Role::Segment => {
                f.arrivals_pkts += 1;
                f.arrivals_bytes += u64::from(p.wire_bytes);
                if p.seq < f.next_seq {
                    f.retransmissions += 1;
                    self.retransmissions += 1;
                } else {
                    f.next_seq = p.seq_end;
                }
                if let Some((w, t)) = f.probe_wired {
                    if ts_at_or_after(p.tsecr, w) {
                        f.min_wired_ns = f.min_wired_ns.min(now - t);
                        f.probe_wired = None;
                    }
                }
                if f.probe_air.is_none() {
                    f.probe_air = Some((p.tsval, now));
                }
                false
            }
            Role::Ack => {
                f.high_ack = f.high_ack.max(p.ack);
                if let Some((v, t)) = f.probe_air {
                    if ts_at_or_after(p.tsecr, v) {
                        f.min_air_ns = f.min_air_ns.min(now - t);
                        f.probe_air = None;
                    }
                }
                if f.probe_wired.is_none() {
                    f.probe_wired = Some((p.tsval, now));
                }
                let Some(target) = f.target_bytes else {
                    return false;
                };
                let w = rewritten_window(p.rwnd_bytes, target, self.floor_bytes, f.wscale);
                let lowered = w < p.rwnd_bytes;
                if lowered {
                    self.rewrites += 1;
                }
                p.rwnd_bytes = w;
                lowered
            }
        }
    }
}

/// The element OAL places at its cell's entry.
pub struct MonitorElement {
    pub shared: Arc<Mutex<Monitor>>,
}

impl PathElement for MonitorElement {
    fn kind(&self) -> &'static str {
        "oal"
    }

    fn on_packet(&mut self, now: Nanos, packet: &mut Packet) -> Fate {
        let mut seen = Observed::of(packet);
        self.shared
            .lock()
            .expect("the run is single-threaded")
            .see(now, packet.flow as usize, &mut seen);
        packet.rwnd_bytes = seen.rwnd_bytes;
        Fate::Pass
    }
}
