//! One subflow: a full rove-tcp sender/receiver pair, the mapping of its sequence numbers to
//! data sequence numbers, and the state the connection keeps about it.

use rove_sim::Nanos;
use rove_tcp::receiver::TcpReceiver;
use rove_tcp::sender::TcpSender;
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
    /// Segments handed over by the scheduler, and those of them that were reinjections.
    pub segs_assigned: u64,
    pub segs_reinjected: u64,
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
        }
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
