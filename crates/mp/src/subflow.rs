//! One subflow: a full rove-tcp sender/receiver pair, the mapping of its sequence numbers to
//! data sequence numbers, and the state the connection keeps about it: its send queue (DSNs a
//! scheduler queued for it, `sched` module documentation) and its loss rate.

use rove_sim::Nanos;
use rove_tcp::receiver::TcpReceiver;
use rove_tcp::sender::TcpSender;
use rove_tcp::state::CaState;
use std::collections::VecDeque;

/// Subflow sequence number to DSN, for the segments from the subflow's oldest unacknowledged
/// one to the last handed over (the DSS mapping, one segment per mapping).
#[derive(Debug, Default)]
pub struct DsnMap {
    base: u64,
    dsns: VecDeque<u64>,
}

impl DsnMap {
    #[inline]
    pub fn dsn(&self, seq: u64) -> u64 {
        self.dsns[(seq - self.base) as usize]
    }

    /// Maps the next subflow segment, `seq`, to `dsn`.
    pub fn push(&mut self, seq: u64, dsn: u64) {
        debug_assert_eq!(seq, self.base + self.dsns.len() as u64);
        self.dsns.push_back(dsn);
    }

    /// Forgets segments below `una` (acknowledged on the subflow).
    pub fn release_below(&mut self, una: u64) {
        while self.base < una && !self.dsns.is_empty() {
            self.dsns.pop_front();
            self.base += 1;
        }
    }

    /// DSNs of the segments still held: sent and unacknowledged, or handed over and unsent.
    pub fn held(&self) -> impl Iterator<Item = u64> + '_ {
        self.dsns.iter().copied()
    }
}

pub struct Subflow {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    pub map: DsnMap,
    /// The SYN (MP_CAPABLE for subflow 0, MP_JOIN for the others) has been sent.
    pub started_at: Option<Nanos>,
    /// Potentially failed: an RTO fired and no new data has been acknowledged since.
    pub potentially_failed: bool,
    /// Paused by the application or a controller (MP_PRIO backup): not scheduled.
    pub paused: bool,
    /// Closed (removed): sends nothing more; its packets still in the network are ignored.
    pub closed: bool,
    /// Times this subflow was declared potentially failed.
    pub failures: u64,
    /// Smallest and largest srtt seen, µs (BLEST's min_srtt_us / max_srtt_us); 0 before a sample.
    pub min_srtt_us: u64,
    pub max_srtt_us: u64,
    /// Segments handed over by the scheduler, and those of them that were reinjections; the
    /// payload bytes handed over.
    pub segs_assigned: u64,
    pub segs_reinjected: u64,
    pub bytes_assigned: u64,
    /// The send queue: DSNs queued for this subflow and their payload bytes, in increasing DSN
    /// order, and the bytes it holds.
    pub queue: VecDeque<(u64, u32)>,
    pub queue_bytes: u64,
    /// Queued DSNs dropped because they were DATA_ACKed before this subflow sent them.
    pub queue_drops: u64,
    /// The loss-rate estimate q_r (`SubflowInfo::loss_rate`), the loss events seen, and the
    /// sender's lost and sent segment counts at the last one.
    pub loss_rate: f64,
    pub loss_events: u64,
    lost_at_event: u64,
    sent_at_event: u64,
}

impl Subflow {
    pub fn new(sender: TcpSender, receiver: TcpReceiver) -> Self {
        Subflow {
            sender,
            receiver,
            map: DsnMap::default(),
            started_at: None,
            potentially_failed: false,
            paused: false,
            closed: false,
            failures: 0,
            min_srtt_us: 0,
            max_srtt_us: 0,
            segs_assigned: 0,
            segs_reinjected: 0,
            bytes_assigned: 0,
            queue: VecDeque::new(),
            queue_bytes: 0,
            queue_drops: 0,
            loss_rate: 0.0,
            loss_events: 0,
            lost_at_event: 0,
            sent_at_event: 0,
        }
    }

    /// The MP_JOIN (or MP_CAPABLE) SYN is out, the subflow is not established, and it is open.
    pub fn is_joining(&self) -> bool {
        self.started_at.is_some() && !self.sender.is_established() && !self.closed
    }

    /// Open, not paused and not potentially failed: it may be given queued data (it sends it
    /// once established).
    pub fn may_queue(&self) -> bool {
        !self.potentially_failed && !self.paused && !self.closed
    }

    /// Appends `dsn` (`payload` bytes) to the send queue.
    pub fn enqueue(&mut self, dsn: u64, payload: u32) {
        self.queue.push_back((dsn, payload));
        self.queue_bytes += payload as u64;
    }

    /// Takes the oldest queued DSN.
    pub fn dequeue(&mut self) -> Option<u64> {
        let (dsn, payload) = self.queue.pop_front()?;
        self.queue_bytes -= payload as u64;
        Some(dsn)
    }

    /// Drops queued DSNs below `data_una` (DATA_ACKed: another copy arrived); returns how many.
    pub(crate) fn drop_acked_queued(&mut self, data_una: u64) -> u64 {
        let mut dropped = 0;
        while self.queue.front().is_some_and(|&(d, _)| d < data_una) {
            self.dequeue();
            dropped += 1;
        }
        self.queue_drops += dropped;
        dropped
    }

    /// Whether `dsn` waits in the send queue.
    pub fn queues(&self, dsn: u64) -> bool {
        self.queue.binary_search_by_key(&dsn, |&(d, _)| d).is_ok()
    }

    /// Updates the loss rate after the sender handled an ACK or a timer: a loss event is
    /// entering Recovery (`prior_state` was not Recovery) or an RTO (`prior_rtos`, the sender's
    /// RTO expiration count before, grew). At one, the fraction of segments marked lost among
    /// those sent since the previous event (tp->lost, retransmissions included in both) enters
    /// an EWMA of weight `weight`: q ← (1 − w)·q + w·lost/sent.
    pub(crate) fn note_loss_events(&mut self, prior_state: CaState, prior_rtos: u32, weight: f64) {
        let tp = &self.sender.tp;
        let entered_recovery = tp.ca_state == CaState::Recovery && prior_state != CaState::Recovery;
        let rto = self.sender.rto_expirations() > prior_rtos;
        if !(entered_recovery || rto) {
            return;
        }
        let (lost, sent) = (tp.lost, self.sender.stats.segs_sent);
        let d_sent = sent - self.sent_at_event;
        if d_sent > 0 {
            let fraction = ((lost - self.lost_at_event) as f64 / d_sent as f64).min(1.0);
            self.loss_rate = (1.0 - weight) * self.loss_rate + weight * fraction;
        }
        self.loss_events += 1;
        self.lost_at_event = lost;
        self.sent_at_event = sent;
    }

    /// Established, open, not paused and not potentially failed: a scheduler may use it.
    pub fn is_usable(&self) -> bool {
        self.sender.is_established() && !self.potentially_failed && !self.paused && !self.closed
    }

    /// Tracks the srtt range BLEST's linger-time estimate uses.
    pub(crate) fn note_srtt(&mut self) {
        let s = self.sender.tp.srtt_us;
        if s == 0 {
            return;
        }
        self.min_srtt_us = if self.min_srtt_us == 0 {
            s
        } else {
            self.min_srtt_us.min(s)
        };
        self.max_srtt_us = self.max_srtt_us.max(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rove_tcp::cc::{self, CcConfig};
    use rove_tcp::Segments;

    fn subflow() -> Subflow {
        let reno = cc::build("reno", &CcConfig::new(&toml::Table::new(), 0))
            .unwrap()
            .unwrap();
        Subflow::new(
            TcpSender::new_fed(reno),
            TcpReceiver::new(Segments { size_bytes: None }, 1 << 20),
        )
    }

    #[test]
    fn loss_rate_is_an_ewma_of_the_lost_fraction_between_loss_events() {
        let mut sf = subflow();
        let w = 0.125;
        // 100 sent, 2 lost, then Recovery: q = 1/8 · 2/100 = 0.0025.
        sf.sender.stats.segs_sent = 100;
        sf.sender.tp.lost = 2;
        sf.sender.tp.ca_state = CaState::Recovery;
        sf.note_loss_events(CaState::Open, 0, w);
        assert!((sf.loss_rate - 0.0025).abs() < 1e-15);
        assert_eq!(sf.loss_events, 1);
        // Still in Recovery: no new event, whatever was lost meanwhile.
        sf.sender.stats.segs_sent = 300;
        sf.sender.tp.lost = 12;
        sf.note_loss_events(CaState::Recovery, 0, w);
        assert_eq!(sf.loss_events, 1);
        // The next Recovery: 10 lost of the 200 sent since the last event (0.05):
        // q = 7/8 · 0.0025 + 1/8 · 0.05 = 0.0084375.
        sf.note_loss_events(CaState::Open, 0, w);
        assert!((sf.loss_rate - 0.0084375).abs() < 1e-15);
        // No event (Open to Open, no RTO): unchanged.
        sf.sender.tp.ca_state = CaState::Open;
        sf.note_loss_events(CaState::Disorder, 0, w);
        assert_eq!(sf.loss_events, 2);
    }

    #[test]
    fn the_send_queue_counts_bytes_and_drops_data_acked_dsns() {
        let mut sf = subflow();
        for (dsn, payload) in [(3, 1448), (5, 1448), (9, 100)] {
            sf.enqueue(dsn, payload);
        }
        assert_eq!(sf.queue_bytes, 2996);
        assert!(sf.queues(5) && !sf.queues(4));
        assert_eq!(sf.drop_acked_queued(6), 2);
        assert_eq!((sf.queue_bytes, sf.queue_drops), (100, 2));
        assert_eq!(sf.dequeue(), Some(9));
        assert_eq!((sf.dequeue(), sf.queue_bytes), (None, 0));
    }
}
