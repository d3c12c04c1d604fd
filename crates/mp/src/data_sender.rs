//! The sending side of the data sequence space: which DSNs exist, which were DATA_ACKed, when
//! each was first handed to a subflow and on which subflows it travelled, the reinjection queue
//! and the connection-level send window.
//!
//! The DSNs are either a bulk transfer's (the application wrote `size` bytes, or an endless
//! stream, at the start: [`Segments`]) or what an application writing over time has written so
//! far ([`FedSegments`], one entry per DSN not yet DATA_ACKed); the latter never completes.

use crate::SubflowMask;
use rove_sim::Nanos;
use rove_tcp::{DataSource, FedSegments, Segments, MSS};
use std::collections::VecDeque;

/// The application's send buffer for an unlimited (bulk) transfer, as ECF's "bytes queued in the
/// meta send buffer" sees it. [GAP] Linux autotunes sk_sndbuf up to tcp_wmem[2], 4 MiB by
/// default (net.ipv4.tcp_wmem = 4096 16384 4194304); we take that maximum.
pub const SEND_BUFFER_BYTES: u64 = 4 << 20;

/// Flag in `carried`: the DSN waits in the reinjection queue (subflow bits are below it).
const QUEUED_FOR_REINJECTION: SubflowMask = 1 << (SubflowMask::BITS - 1);

/// `first_tx` of a DSN created into subflows' send queues and not yet handed to any subflow.
const NOT_HANDED_OVER: Nanos = Nanos::MAX;

pub struct DataSender {
    source: DataSource,
    /// DSNs in the transfer, `u64::MAX` for unlimited; for an application writing over time,
    /// the DSNs written so far.
    pub total: u64,
    /// Application writes: payload bytes written and not yet handed to a subflow, and bytes
    /// DATA_ACKed.
    unsent_bytes: u64,
    acked_bytes: u64,
    /// First DSN never handed to a subflow.
    pub next: u64,
    /// DATA_ACK: every DSN below it reached the receiver's application.
    pub una: u64,
    /// Connection-level window in segments (receive window / MSS, at least 1).
    pub window_segs: u64,
    /// Per DSN from `una` to `next`: time of its first hand-over to a subflow
    /// (`NOT_HANDED_OVER` while it only waits in send queues), and a bit per subflow that
    /// carried it (plus `QUEUED_FOR_REINJECTION`).
    first_tx: VecDeque<Nanos>,
    carried: VecDeque<SubflowMask>,
    /// DSNs to send again on another subflow (from potentially failed subflows), oldest first.
    pub reinject: VecDeque<u64>,
    /// Times the scheduler found new data blocked by the connection-level window.
    pub window_blocked: u64,
    /// Time the last DSN was DATA_ACKed (finite transfers).
    pub completed_at: Option<Nanos>,
}

impl DataSender {
    pub fn new(size_bytes: Option<u64>, rwnd_bytes: u64) -> Self {
        let segments = Segments { size_bytes };
        Self::with_source(DataSource::Stream(segments), segments.count(), rwnd_bytes)
    }

    /// The data sequence space of an application that writes over time ([`write`](Self::write)).
    pub fn app_written(rwnd_bytes: u64) -> Self {
        Self::with_source(DataSource::Fed(FedSegments::default()), 0, rwnd_bytes)
    }

    fn with_source(source: DataSource, total: u64, rwnd_bytes: u64) -> Self {
        DataSender {
            source,
            total,
            unsent_bytes: 0,
            acked_bytes: 0,
            next: 0,
            una: 0,
            window_segs: (rwnd_bytes / MSS as u64).max(1),
            first_tx: VecDeque::with_capacity(1024),
            carried: VecDeque::with_capacity(1024),
            reinject: VecDeque::new(),
            window_blocked: 0,
            completed_at: None,
        }
    }

    #[inline]
    pub fn payload(&self, dsn: u64) -> u32 {
        self.source.payload(dsn)
    }

    /// Whether an application writes the data over time (else it is a bulk transfer).
    pub fn is_app_written(&self) -> bool {
        matches!(self.source, DataSource::Fed(_))
    }

    /// Payload bytes of DSNs `[0, end)` of a bulk transfer (`None` for application writes,
    /// whose byte counts the application keeps).
    pub fn bytes_before(&self, end: u64) -> Option<u64> {
        match &self.source {
            DataSource::Stream(s) => Some(s.bytes_before(end)),
            DataSource::Fed(_) => None,
        }
    }

    /// Payload bytes DATA_ACKed.
    pub fn bytes_acked(&self) -> u64 {
        match &self.source {
            DataSource::Stream(s) => s.bytes_before(self.una),
            DataSource::Fed(_) => self.acked_bytes,
        }
    }

    /// The application wrote one more segment of `payload` bytes: the next DSN.
    pub fn write(&mut self, payload: u32) {
        let DataSource::Fed(f) = &mut self.source else {
            panic!("write() on a bulk transfer")
        };
        f.push(payload);
        self.total = f.end();
        self.unsent_bytes += payload as u64;
    }

    pub fn has_unsent(&self) -> bool {
        self.next < self.total
    }

    /// A new connection-level window (a clamp of the receive window), bytes.
    pub fn set_window(&mut self, rwnd_bytes: u64) {
        self.window_segs = (rwnd_bytes / MSS as u64).max(1);
    }

    /// New data may be handed over: the application has some, and the window allows it.
    pub fn can_send_new(&self) -> bool {
        self.has_unsent() && self.next < self.una + self.window_segs
    }

    /// Bytes the application has written and the connection not yet handed to a subflow (ECF's
    /// k), bounded by the send buffer.
    pub fn queued_bytes(&self) -> u64 {
        let left = match (&self.source, self.total) {
            (DataSource::Fed(_), _) => self.unsent_bytes,
            (DataSource::Stream(_), u64::MAX) => u64::MAX,
            (DataSource::Stream(s), total) => s.bytes_before(total) - s.bytes_before(self.next),
        };
        left.min(SEND_BUFFER_BYTES)
    }

    /// Creates the next DSN, handed over now.
    pub fn new_dsn(&mut self, now: Nanos) -> u64 {
        let dsn = self.next;
        if let DataSource::Fed(f) = &self.source {
            self.unsent_bytes -= f.payload(dsn) as u64;
        }
        self.next += 1;
        self.first_tx.push_back(now);
        self.carried.push_back(0);
        dsn
    }

    /// Creates the next DSN into subflows' send queues: its hand-over time is set when a
    /// subflow first takes it ([`note_handed_over`](Self::note_handed_over)).
    pub fn new_queued_dsn(&mut self) -> u64 {
        self.new_dsn(NOT_HANDED_OVER)
    }

    /// Payload bytes of the next new DSN, 0 when the application has none.
    pub fn next_payload(&self) -> u32 {
        if self.has_unsent() {
            self.payload(self.next)
        } else {
            0
        }
    }

    pub fn note_carried(&mut self, dsn: u64, sub: usize) {
        if dsn >= self.una {
            self.carried[(dsn - self.una) as usize] |= 1 << sub;
        }
    }

    /// A DSN created into send queues is handed to a subflow at `now`: its first hand-over
    /// time, unless it has one.
    pub fn note_handed_over(&mut self, dsn: u64, now: Nanos) {
        if dsn >= self.una && dsn < self.next {
            let t = &mut self.first_tx[(dsn - self.una) as usize];
            if *t == NOT_HANDED_OVER {
                *t = now;
            }
        }
    }

    /// Subflows that carried `dsn` (bit per subflow); 0 once DATA_ACKed.
    pub fn carried(&self, dsn: u64) -> SubflowMask {
        if dsn >= self.una && dsn < self.next {
            self.carried[(dsn - self.una) as usize] & !QUEUED_FOR_REINJECTION
        } else {
            0
        }
    }

    /// First hand-over time of `dsn`, while it is not DATA_ACKed (None before its hand-over).
    pub fn first_tx(&self, dsn: u64) -> Option<Nanos> {
        (dsn >= self.una && dsn < self.next)
            .then(|| self.first_tx[(dsn - self.una) as usize])
            .filter(|&t| t != NOT_HANDED_OVER)
    }

    /// A DATA_ACK arrived.
    pub fn on_data_ack(&mut self, data_ack: u64, now: Nanos) {
        let ack = data_ack.min(self.next);
        if let DataSource::Fed(f) = &self.source {
            self.acked_bytes += (self.una..ack.max(self.una))
                .map(|d| f.payload(d) as u64)
                .sum::<u64>();
        }
        while self.una < ack {
            self.first_tx.pop_front();
            self.carried.pop_front();
            self.una += 1;
        }
        match &mut self.source {
            DataSource::Fed(f) => f.release_below(self.una),
            DataSource::Stream(_) => {
                if self.una >= self.total && self.completed_at.is_none() {
                    self.completed_at = Some(now);
                }
            }
        }
    }

    /// Queues `dsn` for reinjection unless it was DATA_ACKed or is queued already.
    pub fn queue_reinjection(&mut self, dsn: u64) {
        if dsn < self.una || dsn >= self.next {
            return;
        }
        let flags = &mut self.carried[(dsn - self.una) as usize];
        if *flags & QUEUED_FOR_REINJECTION == 0 {
            *flags |= QUEUED_FOR_REINJECTION;
            self.reinject.push_back(dsn);
        }
    }

    /// The oldest reinjection still needed (drops DATA_ACKed ones).
    pub fn next_reinjection(&mut self) -> Option<u64> {
        while let Some(&d) = self.reinject.front() {
            if d >= self.una {
                return Some(d);
            }
            self.reinject.pop_front();
        }
        None
    }

    /// Takes the oldest reinjection off the queue (after `next_reinjection` returned it).
    pub fn pop_reinjection(&mut self) {
        if let Some(d) = self.reinject.pop_front() {
            if d >= self.una && d < self.next {
                self.carried[(d - self.una) as usize] &= !QUEUED_FOR_REINJECTION;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_ack_forgets_dsns_and_completes_a_finite_transfer() {
        let mut d = DataSender::new(Some(3000), 6 << 20);
        assert_eq!(d.total, 3);
        for t in 0..3 {
            d.new_dsn(t);
        }
        d.note_carried(1, 2);
        assert_eq!(d.carried(1), 4);
        assert_eq!(d.first_tx(2), Some(2));
        d.on_data_ack(2, 10);
        assert_eq!(
            (d.una, d.first_tx(1), d.first_tx(2), d.carried(1)),
            (2, None, Some(2), 0)
        );
        assert!(d.completed_at.is_none());
        d.on_data_ack(3, 11);
        assert_eq!(d.completed_at, Some(11));
        assert_eq!(d.payload(2), 3000 - 2 * MSS);
    }

    #[test]
    fn application_writes_extend_the_dsn_space_and_never_complete() {
        let mut d = DataSender::app_written(6 << 20);
        assert!(!d.has_unsent());
        for p in [MSS, 100] {
            d.write(p);
        }
        assert_eq!((d.total, d.queued_bytes()), (2, MSS as u64 + 100));
        d.new_dsn(0);
        assert_eq!(d.queued_bytes(), 100);
        d.new_dsn(1);
        d.on_data_ack(2, 5);
        assert_eq!((d.una, d.completed_at, d.queued_bytes()), (2, None, 0));
        d.write(7);
        assert_eq!((d.total, d.payload(2)), (3, 7));
    }

    #[test]
    fn window_bounds_new_data_above_the_data_ack() {
        let mut d = DataSender::new(None, 4 * MSS as u64);
        for t in 0..4 {
            assert!(d.can_send_new());
            d.new_dsn(t);
        }
        assert!(!d.can_send_new());
        d.on_data_ack(1, 5);
        assert!(d.can_send_new());
        assert_eq!(d.queued_bytes(), SEND_BUFFER_BYTES);
    }

    #[test]
    fn reinjection_queue_skips_acked_and_duplicate_dsns() {
        let mut d = DataSender::new(None, 1 << 20);
        for t in 0..5 {
            d.new_dsn(t);
        }
        for dsn in [1, 2, 2, 3] {
            d.queue_reinjection(dsn);
        }
        assert_eq!(d.reinject.len(), 3);
        d.on_data_ack(3, 9);
        assert_eq!(d.next_reinjection(), Some(3));
    }
}
