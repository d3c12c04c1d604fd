//! The receiving side of the data sequence space: the reordering (out-of-order) buffer that
//! holds data arriving ahead of a gap, in-order delivery to the application, and the buffer's
//! occupancy over time (BCCPS's "MPTCP OFO queue size"; seed-001 §4 leaves the unit open [GAP]:
//! bytes, time-averaged, and the maximum).

use rove_sim::Nanos;
use std::collections::VecDeque;
use std::ops::Range;

#[derive(Debug, Default)]
pub struct ReorderBuffer {
    /// Next DSN the application expects (the DATA_ACK this receiver sends).
    pub rcv_nxt: u64,
    /// Payload bytes of DSN `rcv_nxt + i` held, 0 when not held. Slot 0 is always empty.
    held: VecDeque<u32>,
    /// Bytes held now, and the most ever held.
    pub ofo_bytes: u64,
    pub ofo_max_bytes: u64,
    /// ∫ ofo_bytes dt (byte·ns) up to `last_change`.
    ofo_area: u128,
    last_change: Nanos,
    /// In-order bytes delivered to the application.
    pub bytes_delivered: u64,
    /// Data segments that arrived for a DSN already delivered or held (reinjections, redundant
    /// copies, spurious retransmissions): dropped, never delivered twice.
    pub duplicate_segs: u64,
    /// Time the last in-order delivery happened.
    pub last_delivery_at: Option<Nanos>,
    /// Every DSN delivered, in delivery order, when enabled (tests check the stream with it).
    pub delivery_log: Option<Vec<u64>>,
}

impl ReorderBuffer {
    pub fn new(start: Nanos) -> Self {
        ReorderBuffer {
            last_change: start,
            ..Default::default()
        }
    }

    /// A data segment for `dsn` with `payload` bytes arrived at `now`. Returns the DSNs it
    /// made deliverable, in order (empty when it was out of order or a duplicate).
    pub fn on_segment(&mut self, dsn: u64, payload: u32, now: Nanos) -> Range<u64> {
        let from = self.rcv_nxt;
        if dsn < self.rcv_nxt {
            self.duplicate_segs += 1;
            return from..from;
        }
        let i = (dsn - self.rcv_nxt) as usize;
        if i >= self.held.len() {
            self.held.resize(i + 1, 0);
        }
        if self.held[i] != 0 {
            self.duplicate_segs += 1;
            return from..from;
        }
        self.account(now);
        if i > 0 {
            self.held[i] = payload;
            self.ofo_bytes += payload as u64;
            self.ofo_max_bytes = self.ofo_max_bytes.max(self.ofo_bytes);
            return from..from;
        }
        self.deliver(dsn, payload);
        self.held.pop_front();
        while let Some(&p) = self.held.front() {
            if p == 0 {
                break;
            }
            self.ofo_bytes -= p as u64;
            let d = self.rcv_nxt;
            self.deliver(d, p);
            self.held.pop_front();
        }
        self.last_delivery_at = Some(now);
        from..self.rcv_nxt
    }

    fn deliver(&mut self, dsn: u64, payload: u32) {
        self.rcv_nxt = dsn + 1;
        self.bytes_delivered += payload as u64;
        if let Some(log) = &mut self.delivery_log {
            log.push(dsn);
        }
    }

    fn account(&mut self, now: Nanos) {
        self.ofo_area += self.ofo_bytes as u128 * (now.saturating_sub(self.last_change)) as u128;
        self.last_change = self.last_change.max(now);
    }

    /// Time-averaged occupancy in bytes from `start` to `now`.
    pub fn mean_ofo_bytes(&self, start: Nanos, now: Nanos) -> f64 {
        if now <= start {
            return 0.0;
        }
        self.ofo_area_at(now) as f64 / (now - start) as f64
    }

    /// Occupancy integrated over time (byte-nanoseconds) from the start to `now` (no earlier
    /// than the last change).
    pub fn ofo_area_at(&self, now: Nanos) -> u128 {
        self.ofo_area + self.ofo_bytes as u128 * now.saturating_sub(self.last_change) as u128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_out_of_order_data_and_delivers_each_dsn_once_in_order() {
        let mut r = ReorderBuffer::new(0);
        r.delivery_log = Some(Vec::new());
        assert_eq!(r.on_segment(1, 100, 10), 0..0);
        assert_eq!(r.on_segment(3, 100, 20), 0..0);
        assert_eq!((r.ofo_bytes, r.ofo_max_bytes), (200, 200));
        assert_eq!(r.on_segment(1, 100, 25), 0..0, "duplicate of held data");
        assert_eq!(r.on_segment(0, 100, 30), 0..2);
        assert_eq!(r.ofo_bytes, 100);
        assert_eq!(r.on_segment(2, 100, 40), 2..4);
        assert_eq!(
            r.on_segment(2, 100, 50),
            4..4,
            "duplicate of delivered data"
        );
        assert_eq!(r.delivery_log.as_deref(), Some(&[0, 1, 2, 3][..]));
        assert_eq!(
            (r.bytes_delivered, r.duplicate_segs, r.ofo_bytes),
            (400, 2, 0)
        );
        // Occupancy: 100 B over [10,20), 200 B over [20,30), 100 B over [30,40): area 4000 B·ns.
        assert_eq!(r.mean_ofo_bytes(0, 50), 4000.0 / 50.0);
    }
}
