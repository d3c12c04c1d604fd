//! fq_codel, ported from Linux `net/sched/sch_fq_codel.c` (the qdisc Linux installs by default
//! and mac80211 runs per station): packets are hashed by flow into `flows` queues, served by
//! deficit round robin with a quantum of `quantum` bytes, flows that just became active first
//! (the "new flows" list), each queue under its own CoDel. On overflow the fattest queue loses
//! half its backlog from its head (at most 64 packets), so a flood cannot push out a polite flow.
//!
//! Differences from Linux, each a choice:
//! - Classification: Linux hashes the 5-tuple with a random perturbation (`skb_get_hash`), so
//!   two flows share a queue with probability ~n²/2048; rove knows the connection and puts
//!   connection `k` in queue `k mod flows`, so fewer than `flows` connections never share one
//!   (deterministic, and what an ideal hash gives).
//! - CoDel is rove's RFC 8289 CoDel (`queue.rs`): its control law takes an exact square root
//!   where Linux iterates Newton's method on a 16-bit reciprocal; MAXPACKET is Linux's MTU
//!   with header, 1514 bytes, compared with the whole qdisc's backlog as Linux does.
//! - The limit: `buffer = "Npkt"` is Linux's `limit` (packets, default 10240); a `buffer` in
//!   bytes stands for `memory_limit`, counted on wire bytes where Linux counts `truesize` (the
//!   packet limit binds first for full-size packets: 10240 × 1514 B < 32 MB). No ECN.

use super::queue::{CoDel, PacketQueue, QueuedPacket};
use super::{DropReason, LinkOutput};
use crate::Nanos;
use rove_scenario::spec::QueueLimit;
use std::collections::VecDeque;

/// sch_fq_codel.c fq_codel_init: `drop_batch_size = 64`.
const DROP_BATCH: u32 = 64;
/// sch_fq_codel.c: `q->cparams.mtu = psched_mtu(dev)`: a 1500-byte MTU plus 14 bytes of header.
const CODEL_MTU_BYTES: u64 = 1514;
/// Linux's default `memory_limit` (32 MB), when the limit is given in packets.
const DEFAULT_MEMORY_LIMIT: u64 = 32 << 20;
/// Linux's default `limit` (10240 packets), when the limit is given in bytes.
const DEFAULT_PACKET_LIMIT: usize = 10 * 1024;

/// Which list a flow is on (Linux `flowchain`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct Flow {
    packets: VecDeque<QueuedPacket>,
    backlog: u64,
    deficit: i64,
    list: List,
    codel: CoDel,
}

pub struct FqCodel {
    flows: Vec<Flow>,
    /// Flow indices in round-robin order: flows that just became active, then the others.
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    quantum: i64,
    limit_pkts: usize,
    memory_limit: u64,
    qlen: usize,
    backlog: u64,
    /// Flows that became active (Linux `new_flow_count`).
    pub new_flow_count: u64,
}

/// One flow's queue as CoDel sees it: popping updates the flow's and the qdisc's counts, and
/// the backlog CoDel tests is the qdisc's (Linux passes `&sch->qstats.backlog`).
struct FlowQueue<'a> {
    packets: &'a mut VecDeque<QueuedPacket>,
    flow_backlog: &'a mut u64,
    qlen: &'a mut usize,
    backlog: &'a mut u64,
}

impl PacketQueue for FlowQueue<'_> {
    fn pop(&mut self) -> Option<QueuedPacket> {
        let p = self.packets.pop_front()?;
        *self.flow_backlog -= u64::from(p.bytes);
        *self.qlen -= 1;
        *self.backlog -= u64::from(p.bytes);
        Some(p)
    }

    fn backlog_bytes(&self) -> u64 {
        *self.backlog
    }
}

impl FqCodel {
    pub fn new(
        limit: QueueLimit,
        target_ns: Nanos,
        interval_ns: Nanos,
        flows: u32,
        quantum: u32,
    ) -> Self {
        let (limit_pkts, memory_limit) = match limit {
            QueueLimit::Packets(n) => (n as usize, DEFAULT_MEMORY_LIMIT),
            QueueLimit::Bytes(b) => (DEFAULT_PACKET_LIMIT, b),
        };
        FqCodel {
            flows: (0..flows)
                .map(|_| Flow {
                    packets: VecDeque::new(),
                    backlog: 0,
                    deficit: 0,
                    list: List::None,
                    codel: CoDel::new(target_ns, interval_ns, CODEL_MTU_BYTES),
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: i64::from(quantum),
            limit_pkts,
            memory_limit,
            qlen: 0,
            backlog: 0,
            new_flow_count: 0,
        }
    }

    pub fn len_packets(&self) -> usize {
        self.qlen
    }

    pub fn len_bytes(&self) -> u64 {
        self.backlog
    }

    /// fq_codel_enqueue: always queue, then, over a limit, drop from the fattest flow.
    pub fn enqueue(
        &mut self,
        p: QueuedPacket,
        flow: u32,
        out: &mut Vec<LinkOutput>,
        drops: &mut u64,
    ) {
        let idx = (flow as usize) % self.flows.len();
        let f = &mut self.flows[idx];
        f.packets.push_back(p);
        f.backlog += u64::from(p.bytes);
        self.backlog += u64::from(p.bytes);
        self.qlen += 1;
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.quantum;
            self.new_flows.push_back(idx as u32);
            self.new_flow_count += 1;
        }
        if self.qlen <= self.limit_pkts && self.backlog <= self.memory_limit {
            return;
        }
        self.drop_from_fattest(out, drops);
    }

    /// fq_codel_drop: from the flow with the largest backlog, drop head packets until half its
    /// backlog is gone or `DROP_BATCH` packets were dropped.
    fn drop_from_fattest(&mut self, out: &mut Vec<LinkOutput>, drops: &mut u64) {
        // The first flow with the largest backlog, as Linux's `>` scan finds it.
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > max {
                max = f.backlog;
                idx = i;
            }
        }
        let threshold = max >> 1;
        let f = &mut self.flows[idx];
        let (mut len, mut n) = (0u64, 0u32);
        loop {
            let Some(p) = f.packets.pop_front() else {
                break;
            };
            len += u64::from(p.bytes);
            n += 1;
            out.push(LinkOutput::Drop {
                id: p.id,
                reason: DropReason::QueueFull,
            });
            if n >= DROP_BATCH || len >= threshold {
                break;
            }
        }
        f.codel.add_count(n);
        f.backlog -= len;
        self.backlog -= len;
        self.qlen -= n as usize;
        *drops += u64::from(n);
    }

    /// fq_codel_dequeue: deficit round robin over new then old flows, CoDel in each.
    pub fn dequeue(
        &mut self,
        now: Nanos,
        out: &mut Vec<LinkOutput>,
        aqm_drops: &mut u64,
    ) -> Option<QueuedPacket> {
        loop {
            let (from_new, idx) = match self.new_flows.front() {
                Some(&i) => (true, i as usize),
                None => (false, *self.old_flows.front()? as usize),
            };
            let quantum = self.quantum;
            let f = &mut self.flows[idx];
            if f.deficit <= 0 {
                f.deficit += quantum;
                f.list = List::Old;
                self.pop_list(from_new);
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let mut q = FlowQueue {
                packets: &mut f.packets,
                flow_backlog: &mut f.backlog,
                qlen: &mut self.qlen,
                backlog: &mut self.backlog,
            };
            match f.codel.dequeue(now, &mut q, out, aqm_drops) {
                Some(p) => {
                    f.deficit -= i64::from(p.bytes);
                    return Some(p);
                }
                None => {
                    // Empty: a new flow goes to the old list once (so that a flow sending a
                    // packet at a time cannot stay "new" forever), an old one leaves the lists.
                    let to_old = from_new && !self.old_flows.is_empty();
                    self.pop_list(from_new);
                    if to_old {
                        self.flows[idx].list = List::Old;
                        self.old_flows.push_back(idx as u32);
                    } else {
                        self.flows[idx].list = List::None;
                    }
                }
            }
        }
    }

    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u32, bytes: u32, at: Nanos) -> QueuedPacket {
        QueuedPacket {
            id,
            bytes,
            enqueued_at: at,
        }
    }

    fn fq(limit: u32) -> FqCodel {
        FqCodel::new(
            QueueLimit::Packets(limit),
            5_000_000,
            100_000_000,
            1024,
            1514,
        )
    }

    fn dequeue_flows(q: &mut FqCodel, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut drops = 0;
        (0..n)
            .filter_map(|_| q.dequeue(0, &mut out, &mut drops))
            .map(|p| p.id / 1000)
            .collect()
    }

    #[test]
    fn round_robin_gives_each_backlogged_flow_a_quantum_in_turn() {
        // Flow 1 has 6 full packets queued, flow 2 then joins with 6: with a 1514-byte quantum
        // each round serves one 1500-byte packet of each, the newly active flow first.
        let mut q = fq(100);
        let (mut out, mut drops) = (Vec::new(), 0);
        for i in 0..6 {
            q.enqueue(pkt(1000 + i, 1500, 0), 1, &mut out, &mut drops);
        }
        assert_eq!(dequeue_flows(&mut q, 1), [1]);
        for i in 0..6 {
            q.enqueue(pkt(2000 + i, 1500, 0), 2, &mut out, &mut drops);
        }
        // Flow 1 still has deficit 14 > 0: one more packet, then it goes to the old list;
        // flow 2 is new and is served before flow 1 comes round again.
        assert_eq!(dequeue_flows(&mut q, 10), [1, 2, 2, 1, 2, 1, 2, 1, 2, 1]);
        assert!(out.is_empty() && drops == 0);
    }

    #[test]
    fn small_packets_get_as_many_bytes_per_round_as_large_ones() {
        // Flow 1 sends 1500-byte packets, flow 2 300-byte ones: per round of 1514 bytes of
        // quantum, flow 2 gets ~5 packets for flow 1's one.
        let mut q = fq(1000);
        let (mut out, mut drops) = (Vec::new(), 0);
        for i in 0..20 {
            q.enqueue(pkt(1000 + i, 1500, 0), 1, &mut out, &mut drops);
        }
        for i in 0..100 {
            q.enqueue(pkt(2000 + i, 300, 0), 2, &mut out, &mut drops);
        }
        let served = dequeue_flows(&mut q, 60);
        let (n1, n2) = (
            served.iter().filter(|&&f| f == 1).count(),
            served.iter().filter(|&&f| f == 2).count(),
        );
        let (b1, b2) = (n1 * 1500, n2 * 300);
        assert!(
            (b1 as f64 / b2 as f64 - 1.0).abs() < 0.25,
            "{n1} x 1500 B vs {n2} x 300 B"
        );
    }

    #[test]
    fn overflow_drops_half_of_the_fattest_flow_from_its_head() {
        // Limit 10: flow 1 queues 9, flow 2 one; the 11th packet (flow 2) overflows and flow 1,
        // the fattest (9 × 1500 B), loses head packets until 6750 B (half) are gone: 5 packets.
        let mut q = fq(10);
        let (mut out, mut drops) = (Vec::new(), 0);
        for i in 0..9 {
            q.enqueue(pkt(1000 + i, 1500, 0), 1, &mut out, &mut drops);
        }
        q.enqueue(pkt(2000, 1500, 0), 2, &mut out, &mut drops);
        assert!(out.is_empty());
        q.enqueue(pkt(2001, 1500, 0), 2, &mut out, &mut drops);
        let dropped: Vec<u32> = out
            .iter()
            .map(|o| match o {
                LinkOutput::Drop { id, .. } => *id,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(dropped, [1000, 1001, 1002, 1003, 1004]);
        assert_eq!(drops, 5);
        assert_eq!(q.len_packets(), 6);
        assert_eq!(q.len_bytes(), 6 * 1500);
        assert_eq!(q.flows[1].codel.count(), 5);
    }
}
