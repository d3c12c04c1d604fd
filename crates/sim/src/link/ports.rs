//! A link's ports: destinations that share its serializer, each behind a queue of its own,
//! served by deficit round robin (Shreedhar & Varghese, SIGCOMM 1995) — the downlink of an
//! access point with per-station queues, or of a cell whose scheduler takes its UEs in turn,
//! with every destination's channel equally good. A link declares its ports with
//! `ports = ["a", "b"]` and a path names one as `"LINK:a"`.
//!
//! Each port's queue is the link's queue discipline with the link's buffer (a port cannot take
//! another's buffer, as with mac80211's per-station queues). Each turn a backlogged port gets
//! one quantum of bytes of credit and sends packets while its credit covers them; a port that
//! empties leaves the round and its credit is reset, so an idle port does not bank credit.

use super::queue::{Queue, QueuedPacket};
use super::{DropReason, LinkOutput};
use crate::Nanos;
use rove_scenario::spec::QueueSpec;
use std::collections::VecDeque;

/// DRR quantum: one 1500-byte MTU, the largest packet the simulator sends, so a port sends at
/// least one packet per turn (Shreedhar & Varghese: quantum >= the largest packet keeps DRR
/// O(1) per packet). [GAP] a choice; equal quanta give every backlogged port an equal byte
/// share.
pub const PORT_QUANTUM_BYTES: u32 = 1500;

pub struct PortQueues {
    queues: Vec<Queue>,
    /// Backlogged ports in round order; the head is being served.
    active: VecDeque<u16>,
    /// Credit of each port in the round, bytes; may go negative by less than a packet (the
    /// variant of Linux's sch_fq_codel, which needs no peek at the head packet's size).
    deficit: Vec<i64>,
}

impl PortQueues {
    pub fn new(spec: &QueueSpec, ports: usize, run_seed: u64, label: &str) -> Self {
        PortQueues {
            queues: (0..ports)
                .map(|i| Queue::new(spec, run_seed, &format!("{label}:port{i}")))
                .collect(),
            active: VecDeque::with_capacity(ports),
            deficit: vec![0; ports],
        }
    }

    pub fn enqueue(
        &mut self,
        now: Nanos,
        p: QueuedPacket,
        flow: u32,
        port: u16,
        out: &mut Vec<LinkOutput>,
        drops: &mut u64,
    ) -> Option<DropReason> {
        let i = port as usize;
        let q = &mut self.queues[i];
        let was_empty = q.is_empty();
        let refused = q.enqueue(now, p, flow, 0, out, drops);
        if was_empty && !q.is_empty() {
            // A port joining the round starts with one quantum.
            self.deficit[i] = PORT_QUANTUM_BYTES as i64;
            self.active.push_back(port);
        }
        refused
    }

    /// The next packet in DRR order (sch_fq_codel's fq_codel_dequeue loop over ports): a head
    /// port out of credit gets a quantum and goes to the back; an empty one leaves the round.
    pub fn dequeue(
        &mut self,
        now: Nanos,
        out: &mut Vec<LinkOutput>,
        aqm_drops: &mut u64,
    ) -> Option<QueuedPacket> {
        while let Some(&port) = self.active.front() {
            let i = port as usize;
            if self.deficit[i] <= 0 {
                self.deficit[i] += PORT_QUANTUM_BYTES as i64;
                self.active.rotate_left(1);
                continue;
            }
            let q = &mut self.queues[i];
            let p = q.dequeue(now, out, aqm_drops);
            if q.is_empty() {
                self.active.pop_front();
            }
            if let Some(p) = p {
                self.deficit[i] -= p.bytes as i64;
                return Some(p);
            }
        }
        None
    }

    pub fn len_packets(&self) -> usize {
        self.queues.iter().map(|q| q.len_packets()).sum()
    }

    pub fn len_bytes(&self) -> u64 {
        self.queues.iter().map(|q| q.len_bytes()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rove_scenario::spec::QueueLimit;

    fn pkt(id: u32, bytes: u32) -> QueuedPacket {
        QueuedPacket {
            id,
            bytes,
            enqueued_at: 0,
        }
    }

    fn droptail(n: u32) -> QueueSpec {
        QueueSpec::DropTail {
            limit: QueueLimit::Packets(n),
        }
    }

    #[test]
    fn backlogged_ports_alternate_packet_by_packet_at_equal_sizes() {
        let mut q = PortQueues::new(&droptail(100), 2, 1, "t");
        let (mut out, mut drops) = (Vec::new(), 0);
        for k in 0..6 {
            q.enqueue(0, pkt(k, 1500), 0, 0, &mut out, &mut drops);
        }
        for k in 0..3 {
            q.enqueue(0, pkt(100 + k, 1500), 0, 1, &mut out, &mut drops);
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(0, &mut out, &mut drops))
            .map(|p| p.id)
            .collect();
        // One 1500-byte quantum per turn: 0, 100, 1, 101, 2, 102, then port 0 alone.
        assert_eq!(order, vec![0, 100, 1, 101, 2, 102, 3, 4, 5]);
        assert_eq!(q.len_packets(), 0);
    }

    #[test]
    fn ports_get_equal_bytes_whatever_their_packet_sizes() {
        // Port 0 sends 1500-byte packets, port 1 300-byte ones: per round 1500 bytes each, so
        // five small packets for every large one.
        let mut q = PortQueues::new(&droptail(1000), 2, 1, "t");
        let (mut out, mut drops) = (Vec::new(), 0);
        for k in 0..100 {
            q.enqueue(0, pkt(k, 1500), 0, 0, &mut out, &mut drops);
            for j in 0..5 {
                q.enqueue(0, pkt(1000 + 5 * k + j, 300), 0, 1, &mut out, &mut drops);
            }
        }
        let mut bytes = [0u64; 2];
        for _ in 0..300 {
            let p = q.dequeue(0, &mut out, &mut drops).unwrap();
            bytes[(p.id >= 1000) as usize] += p.bytes as u64;
        }
        assert!(bytes[0].abs_diff(bytes[1]) <= 1500, "{bytes:?}");
    }

    #[test]
    fn each_port_has_its_own_buffer() {
        let mut q = PortQueues::new(&droptail(2), 2, 1, "t");
        let (mut out, mut drops) = (Vec::new(), 0);
        let refused: Vec<bool> = (0..4)
            .map(|k| {
                q.enqueue(0, pkt(k, 1500), 0, 0, &mut out, &mut drops)
                    .is_some()
            })
            .collect();
        assert_eq!(refused, vec![false, false, true, true]);
        // Port 1's buffer is untouched by port 0's overflow.
        assert!(q
            .enqueue(0, pkt(9, 1500), 0, 1, &mut out, &mut drops)
            .is_none());
        assert_eq!(q.len_packets(), 3);
    }
}
