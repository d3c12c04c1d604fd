//! Queue disciplines: DropTail (a limit in packets or bytes) and CoDel (RFC 8289).
//!
//! "Dequeue" means the packet leaves the queue for the serializer; its sojourn time is measured
//! from enqueue to that moment, as CoDel measures it and as Linux qdiscs report it.

use super::{DropReason, LinkOutput};
use crate::packet::PacketId;
use crate::Nanos;
use rove_scenario::spec::{QueueLimit, QueueSpec};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy)]
pub struct QueuedPacket {
    pub id: PacketId,
    pub bytes: u32,
    pub enqueued_at: Nanos,
}

pub struct Queue {
    packets: VecDeque<QueuedPacket>,
    bytes: u64,
    limit: QueueLimit,
    codel: Option<CoDel>,
}

impl Queue {
    pub fn new(spec: &QueueSpec) -> Self {
        let (limit, codel) = match *spec {
            QueueSpec::DropTail { limit } => (limit, None),
            QueueSpec::CoDel {
                limit,
                target_ns,
                interval_ns,
            } => (limit, Some(CoDel::new(target_ns, interval_ns))),
        };
        let capacity = match limit {
            QueueLimit::Packets(n) => (n as usize).min(1 << 16),
            QueueLimit::Bytes(b) => ((b / 1500) as usize).min(1 << 16),
        };
        Queue {
            packets: VecDeque::with_capacity(capacity + 1),
            bytes: 0,
            limit,
            codel,
        }
    }

    /// Whether a packet of `bytes` fits under the limit (tail drop otherwise).
    #[inline]
    pub fn admits(&self, bytes: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.packets.len() as u64) < n as u64,
            QueueLimit::Bytes(b) => self.bytes + bytes as u64 <= b,
        }
    }

    #[inline]
    pub fn push(&mut self, p: QueuedPacket) {
        self.bytes += p.bytes as u64;
        self.packets.push_back(p);
    }

    /// Takes the next packet for the serializer. CoDel may drop packets here; their ids are
    /// pushed to `out` and counted in `codel_drops`.
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Nanos,
        out: &mut Vec<LinkOutput>,
        codel_drops: &mut u64,
    ) -> Option<QueuedPacket> {
        match self.codel.as_mut() {
            None => {
                let p = self.packets.pop_front()?;
                self.bytes -= p.bytes as u64;
                Some(p)
            }
            Some(codel) => codel.dequeue(now, &mut self.packets, &mut self.bytes, out, codel_drops),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn len_packets(&self) -> usize {
        self.packets.len()
    }

    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

/// CoDel, RFC 8289 §5 pseudocode, with the RFC's constants as defaults (target 5 ms, interval
/// 100 ms) and MAXPACKET = one 1500-byte MTU.
pub struct CoDel {
    target_ns: Nanos,
    interval_ns: Nanos,
    /// Time sojourn first stayed above target plus one interval; 0 when below target.
    first_above_time: Nanos,
    drop_next: Nanos,
    count: u32,
    last_count: u32,
    dropping: bool,
}

/// RFC 8289 §4.2 MAXPACKET: a queue holding at most one MTU is never considered standing.
const CODEL_MAXPACKET_BYTES: u64 = 1500;

impl CoDel {
    pub fn new(target_ns: Nanos, interval_ns: Nanos) -> Self {
        CoDel {
            target_ns,
            interval_ns,
            first_above_time: 0,
            drop_next: 0,
            count: 0,
            last_count: 0,
            dropping: false,
        }
    }

    /// RFC 8289 control_law: t + interval / sqrt(count).
    fn control_law(&self, t: Nanos) -> Nanos {
        t + (self.interval_ns as f64 / (self.count.max(1) as f64).sqrt()) as Nanos
    }

    /// RFC 8289 dodequeue: pops the head and says whether it may be dropped.
    fn do_dequeue(
        &mut self,
        now: Nanos,
        q: &mut VecDeque<QueuedPacket>,
        bytes: &mut u64,
    ) -> (Option<QueuedPacket>, bool) {
        let Some(p) = q.pop_front() else {
            self.first_above_time = 0;
            return (None, false);
        };
        *bytes -= p.bytes as u64;
        let sojourn = now.saturating_sub(p.enqueued_at);
        let mut ok_to_drop = false;
        if sojourn < self.target_ns || *bytes <= CODEL_MAXPACKET_BYTES {
            self.first_above_time = 0;
        } else if self.first_above_time == 0 {
            self.first_above_time = now + self.interval_ns;
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        (Some(p), ok_to_drop)
    }

    fn dequeue(
        &mut self,
        now: Nanos,
        q: &mut VecDeque<QueuedPacket>,
        bytes: &mut u64,
        out: &mut Vec<LinkOutput>,
        drops: &mut u64,
    ) -> Option<QueuedPacket> {
        let (mut p, mut ok_to_drop) = self.do_dequeue(now, q, bytes);
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                let dropped = p?;
                out.push(LinkOutput::Drop {
                    id: dropped.id,
                    reason: DropReason::Aqm,
                });
                *drops += 1;
                self.count += 1;
                (p, ok_to_drop) = self.do_dequeue(now, q, bytes);
                if !ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
            }
        } else if ok_to_drop {
            if let Some(dropped) = p {
                out.push(LinkOutput::Drop {
                    id: dropped.id,
                    reason: DropReason::Aqm,
                });
                *drops += 1;
            }
            (p, _) = self.do_dequeue(now, q, bytes);
            self.dropping = true;
            // RFC 8289: resume near the previous drop rate if we were dropping recently.
            let delta = self.count.wrapping_sub(self.last_count);
            self.count = if self.count > self.last_count
                && delta > 1
                && now.saturating_sub(self.drop_next) < 16 * self.interval_ns
            {
                delta
            } else {
                1
            };
            self.drop_next = self.control_law(now);
            self.last_count = self.count;
        }
        p
    }
}
