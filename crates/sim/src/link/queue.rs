//! Queue disciplines: DropTail (a limit in packets or bytes), CoDel (RFC 8289), fq_codel
//! (`fq_codel.rs`) and PIE (`pie.rs`); and a link's ports (`ports.rs`), one such queue per
//! destination served in deficit round robin.
//!
//! "Dequeue" means the packet leaves the queue for the serializer; its sojourn time is measured
//! from enqueue to that moment, as CoDel measures it and as Linux qdiscs report it.

use super::fq_codel::FqCodel;
use super::pie::{Pie, PieParams};
use super::ports::PortQueues;
use super::{DropReason, LinkOutput};
use crate::packet::PacketId;
use crate::rng::Stream;
use crate::Nanos;
use rove_scenario::spec::{QueueLimit, QueueSpec};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy)]
pub struct QueuedPacket {
    pub id: PacketId,
    pub bytes: u32,
    pub enqueued_at: Nanos,
}

/// What CoDel dequeues from: a FIFO, or one flow's queue inside fq_codel (whose backlog test
/// looks at the whole qdisc, as Linux passes `sch->qstats.backlog`).
pub(crate) trait PacketQueue {
    /// Removes the head packet (updating every byte count it belongs to).
    fn pop(&mut self) -> Option<QueuedPacket>;
    /// The backlog CoDel compares with MAXPACKET, after the pop.
    fn backlog_bytes(&self) -> u64;
}

/// A FIFO of packets and its byte count.
#[derive(Default)]
pub(crate) struct Fifo {
    pub packets: VecDeque<QueuedPacket>,
    pub bytes: u64,
}

impl Fifo {
    fn with_capacity(n: usize) -> Self {
        Fifo {
            packets: VecDeque::with_capacity(n),
            bytes: 0,
        }
    }

    #[inline]
    pub fn push(&mut self, p: QueuedPacket) {
        self.bytes += p.bytes as u64;
        self.packets.push_back(p);
    }
}

impl PacketQueue for Fifo {
    #[inline]
    fn pop(&mut self) -> Option<QueuedPacket> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.bytes as u64;
        Some(p)
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
}

enum Discipline {
    /// DropTail, or CoDel at dequeue.
    Fifo(Option<CoDel>),
    FqCodel(Box<FqCodel>),
    Pie(Box<Pie>),
    /// One queue of the link's discipline per port.
    Ports(Box<PortQueues>),
}

/// Whether a packet of `bytes` fits in `fifo` under `limit`.
#[inline]
fn fits(limit: QueueLimit, fifo: &Fifo, bytes: u32) -> bool {
    match limit {
        QueueLimit::Packets(n) => (fifo.packets.len() as u64) < n as u64,
        QueueLimit::Bytes(b) => fifo.bytes + bytes as u64 <= b,
    }
}

/// A link's queue: its limit and its discipline.
pub struct Queue {
    /// The FIFO of DropTail, CoDel and PIE (fq_codel keeps its own per-flow queues).
    fifo: Fifo,
    limit: QueueLimit,
    discipline: Discipline,
}

impl Queue {
    /// `run_seed` and `label` seed the random stream of a discipline that draws (PIE).
    pub fn new(spec: &QueueSpec, run_seed: u64, label: &str) -> Self {
        let limit = spec.limit();
        let discipline = match *spec {
            QueueSpec::DropTail { .. } => Discipline::Fifo(None),
            QueueSpec::CoDel {
                target_ns,
                interval_ns,
                ..
            } => Discipline::Fifo(Some(CoDel::new(
                target_ns,
                interval_ns,
                CODEL_MAXPACKET_BYTES,
            ))),
            QueueSpec::FqCodel {
                target_ns,
                interval_ns,
                flows,
                quantum,
                ..
            } => Discipline::FqCodel(Box::new(FqCodel::new(
                limit,
                target_ns,
                interval_ns,
                flows,
                quantum,
            ))),
            QueueSpec::Pie {
                target_ns,
                tupdate_ns,
                alpha,
                beta,
                max_burst_ns,
                ..
            } => Discipline::Pie(Box::new(Pie::new(
                PieParams {
                    target_ns,
                    tupdate_ns,
                    alpha,
                    beta,
                    max_burst_ns,
                },
                Stream::new(run_seed, label),
            ))),
        };
        Self::with_discipline(discipline, limit)
    }

    /// A queue per port (`ports` of them, each `spec`), served in deficit round robin.
    pub fn with_ports(spec: &QueueSpec, ports: usize, run_seed: u64, label: &str) -> Self {
        let discipline = Discipline::Ports(Box::new(PortQueues::new(spec, ports, run_seed, label)));
        Self::with_discipline(discipline, spec.limit())
    }

    fn with_discipline(discipline: Discipline, limit: QueueLimit) -> Self {
        let capacity = match (&discipline, limit) {
            (Discipline::FqCodel(_) | Discipline::Ports(_), _) => 0,
            (_, QueueLimit::Packets(n)) => (n as usize).min(1 << 16),
            (_, QueueLimit::Bytes(b)) => ((b / 1500) as usize).min(1 << 16),
        };
        Queue {
            fifo: Fifo::with_capacity(capacity + 1),
            limit,
            discipline,
        }
    }

    /// Offers `p` (of connection `flow`, for `port`) to the queue at `now`. Returns
    /// `Some(reason)` when the queue refuses it (the caller reports the drop); packets the
    /// discipline drops instead (fq_codel's fattest flow) are pushed to `out` and counted in
    /// `drops`.
    #[inline]
    pub fn enqueue(
        &mut self,
        now: Nanos,
        p: QueuedPacket,
        flow: u32,
        port: u16,
        out: &mut Vec<LinkOutput>,
        drops: &mut u64,
    ) -> Option<DropReason> {
        // DropTail and CoDel (nearly every link) inline here; the others out of line.
        if let Discipline::Fifo(_) = self.discipline {
            if !fits(self.limit, &self.fifo, p.bytes) {
                return Some(DropReason::QueueFull);
            }
            self.fifo.push(p);
            return None;
        }
        self.enqueue_other(now, p, flow, port, out, drops)
    }

    #[inline(never)]
    fn enqueue_other(
        &mut self,
        now: Nanos,
        p: QueuedPacket,
        flow: u32,
        port: u16,
        out: &mut Vec<LinkOutput>,
        drops: &mut u64,
    ) -> Option<DropReason> {
        match &mut self.discipline {
            Discipline::Fifo(_) => unreachable!("enqueued inline"),
            Discipline::FqCodel(fq) => {
                fq.enqueue(p, flow, out, drops);
                None
            }
            Discipline::Ports(ports) => ports.enqueue(now, p, flow, port, out, drops),
            Discipline::Pie(pie) => {
                pie.catch_up(now, self.fifo.bytes);
                // sch_pie.c pie_qdisc_enqueue: the limit first, then the early drop
                if !fits(self.limit, &self.fifo, p.bytes) {
                    pie.vars.accu_prob = 0;
                    return Some(DropReason::QueueFull);
                }
                if pie.drop_early(self.fifo.bytes) {
                    pie.vars.accu_prob = 0;
                    return Some(DropReason::Aqm);
                }
                self.fifo.push(p);
                None
            }
        }
    }

    /// Takes the next packet for the serializer. An AQM may drop packets here; their ids are
    /// pushed to `out` and counted in `aqm_drops`.
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Nanos,
        out: &mut Vec<LinkOutput>,
        aqm_drops: &mut u64,
    ) -> Option<QueuedPacket> {
        if let Discipline::Fifo(None) = self.discipline {
            return self.fifo.pop();
        }
        self.dequeue_aqm(now, out, aqm_drops)
    }

    #[inline(never)]
    fn dequeue_aqm(
        &mut self,
        now: Nanos,
        out: &mut Vec<LinkOutput>,
        aqm_drops: &mut u64,
    ) -> Option<QueuedPacket> {
        match &mut self.discipline {
            Discipline::Fifo(None) => unreachable!("dequeued inline"),
            Discipline::Fifo(Some(codel)) => codel.dequeue(now, &mut self.fifo, out, aqm_drops),
            Discipline::FqCodel(fq) => fq.dequeue(now, out, aqm_drops),
            Discipline::Ports(ports) => ports.dequeue(now, out, aqm_drops),
            Discipline::Pie(pie) => {
                pie.catch_up(now, self.fifo.bytes);
                let p = self.fifo.pop()?;
                pie.process_dequeue(now, &p, self.fifo.bytes);
                Some(p)
            }
        }
    }

    /// Puts a packet taken from this queue back at its head (a frame its transmitter could not
    /// send: Linux's `dev_requeue_skb`), whatever the limit. FIFO disciplines only (DropTail,
    /// CoDel, PIE): the WiFi cell's queues.
    pub fn requeue_front(&mut self, p: QueuedPacket) {
        assert!(
            !matches!(
                self.discipline,
                Discipline::FqCodel(_) | Discipline::Ports(_)
            ),
            "requeue_front on a FIFO discipline only"
        );
        self.fifo.bytes += p.bytes as u64;
        self.fifo.packets.push_front(p);
    }

    /// Empties the queue, giving each packet to `each` in order (no AQM runs). FIFO
    /// disciplines only, as [`requeue_front`](Self::requeue_front).
    pub fn flush(&mut self, mut each: impl FnMut(QueuedPacket)) {
        assert!(
            !matches!(
                self.discipline,
                Discipline::FqCodel(_) | Discipline::Ports(_)
            ),
            "flush on a FIFO discipline only"
        );
        while let Some(p) = self.fifo.pop() {
            each(p);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }

    pub fn len_packets(&self) -> usize {
        match &self.discipline {
            Discipline::FqCodel(fq) => fq.len_packets(),
            Discipline::Ports(ports) => ports.len_packets(),
            _ => self.fifo.packets.len(),
        }
    }

    pub fn len_bytes(&self) -> u64 {
        match &self.discipline {
            Discipline::FqCodel(fq) => fq.len_bytes(),
            Discipline::Ports(ports) => ports.len_bytes(),
            _ => self.fifo.bytes,
        }
    }
}

/// CoDel, RFC 8289 §5 pseudocode, with the RFC's constants as defaults (target 5 ms, interval
/// 100 ms) and MAXPACKET = one 1500-byte MTU.
pub struct CoDel {
    target_ns: Nanos,
    interval_ns: Nanos,
    /// A backlog at or below this many bytes is never a standing queue (RFC 8289 MAXPACKET;
    /// Linux passes the device MTU with its header, 1514).
    maxpacket_bytes: u64,
    /// Time sojourn first stayed above target plus one interval; 0 when below target.
    first_above_time: Nanos,
    drop_next: Nanos,
    count: u32,
    last_count: u32,
    dropping: bool,
}

/// RFC 8289 §4.2 MAXPACKET: a queue holding at most one MTU is never considered standing.
pub(crate) const CODEL_MAXPACKET_BYTES: u64 = 1500;

impl CoDel {
    pub fn new(target_ns: Nanos, interval_ns: Nanos, maxpacket_bytes: u64) -> Self {
        CoDel {
            target_ns,
            interval_ns,
            maxpacket_bytes,
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
    fn do_dequeue(&mut self, now: Nanos, q: &mut impl PacketQueue) -> (Option<QueuedPacket>, bool) {
        let Some(p) = q.pop() else {
            self.first_above_time = 0;
            return (None, false);
        };
        let sojourn = now.saturating_sub(p.enqueued_at);
        let mut ok_to_drop = false;
        if sojourn < self.target_ns || q.backlog_bytes() <= self.maxpacket_bytes {
            self.first_above_time = 0;
        } else if self.first_above_time == 0 {
            self.first_above_time = now + self.interval_ns;
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        (Some(p), ok_to_drop)
    }

    /// Linux fq_codel_drop: packets dropped from this flow's head on overflow count as CoDel
    /// drops too ("tell codel to increase its signal strength").
    pub(crate) fn add_count(&mut self, n: u32) {
        self.count = self.count.wrapping_add(n);
    }

    #[cfg(test)]
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    pub(crate) fn dequeue(
        &mut self,
        now: Nanos,
        q: &mut impl PacketQueue,
        out: &mut Vec<LinkOutput>,
        drops: &mut u64,
    ) -> Option<QueuedPacket> {
        let (mut p, mut ok_to_drop) = self.do_dequeue(now, q);
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
                (p, ok_to_drop) = self.do_dequeue(now, q);
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
            (p, _) = self.do_dequeue(now, q);
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
