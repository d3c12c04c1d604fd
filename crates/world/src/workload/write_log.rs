//! The application's writes and when each reached the receiving application.
//!
//! An application flow writes chunks (a video frame, a response) into its connection's send
//! buffer at times of its choosing. Each write becomes whole segments (the last one shorter,
//! [`rove_tcp::segment_payloads`]), so it covers a range of the transport's segment numbers (the
//! subflow sequence of a single-path flow, the data sequence space of a multipath one). The
//! write has reached the receiving application when the transport's in-order point (rcv_nxt, or
//! the multipath reordering buffer's data-level rcv_nxt) passes the write's last segment. The
//! receiving application knows where a write ends (a frame header, a Content-Length), so the
//! log is shared knowledge of both ends, not something either TCP endpoint needs.
//!
//! Memory: a write is kept from its write until it is delivered in full, so the log holds what
//! the network has not delivered yet, not the run's history.

use rove_sim::Nanos;
use rove_tcp::MSS;
use std::collections::VecDeque;

/// One write the receiving application has not received in full yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    /// Segments `[first_seg, end_seg)` carry it.
    pub first_seg: u64,
    pub end_seg: u64,
    pub bytes: u64,
    /// When the application wrote it.
    pub at: Nanos,
}

#[derive(Debug, Default)]
pub struct WriteLog {
    pending: VecDeque<Write>,
    /// One past the last segment written.
    end_seg: u64,
    /// Bytes written so far.
    pub written_bytes: u64,
    pub writes: u64,
    /// The transport's in-order point the last time it was reported, and the bytes of the
    /// writes delivered in full below it.
    in_order_seg: u64,
    whole_writes_bytes: u64,
    pub delivered_writes: u64,
}

impl WriteLog {
    /// Records a write of `bytes` (> 0) at `at`; the transport numbers its segments next.
    pub fn write(&mut self, bytes: u64, at: Nanos) -> Write {
        debug_assert!(bytes > 0);
        let w = Write {
            first_seg: self.end_seg,
            end_seg: self.end_seg + bytes.div_ceil(MSS as u64),
            bytes,
            at,
        };
        self.end_seg = w.end_seg;
        self.written_bytes += bytes;
        self.writes += 1;
        self.pending.push_back(w);
        w
    }

    /// The transport's in-order point moved to `in_order_seg`: calls `delivered` for every write
    /// it completed, oldest first.
    pub fn advance(&mut self, in_order_seg: u64, mut delivered: impl FnMut(&Write)) {
        if in_order_seg <= self.in_order_seg {
            return;
        }
        self.in_order_seg = in_order_seg;
        while let Some(w) = self.pending.front() {
            if w.end_seg > in_order_seg {
                break;
            }
            self.whole_writes_bytes += w.bytes;
            self.delivered_writes += 1;
            delivered(w);
            self.pending.pop_front();
        }
    }

    /// Bytes the receiving application has in order: the writes delivered in full and the full
    /// segments of the one in progress.
    pub fn bytes_delivered(&self) -> u64 {
        self.whole_writes_bytes
            + self.pending.front().map_or(0, |w| {
                self.in_order_seg.saturating_sub(w.first_seg) * MSS as u64
            })
    }

    /// Writes not yet delivered in full, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = &Write> {
        self.pending.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_delivered_when_the_in_order_point_passes_its_last_segment() {
        let mut log = WriteLog::default();
        // 3000 B: two full segments and 104 B; 1448 B: one segment.
        let a = log.write(3000, 10);
        let b = log.write(MSS as u64, 20);
        assert_eq!(
            (a.first_seg, a.end_seg, b.first_seg, b.end_seg),
            (0, 3, 3, 4)
        );
        let mut done = Vec::new();
        log.advance(2, |w| done.push(w.at));
        assert!(done.is_empty());
        assert_eq!(log.bytes_delivered(), 2 * MSS as u64);
        log.advance(4, |w| done.push(w.at));
        assert_eq!(done, [10, 20]);
        assert_eq!(log.bytes_delivered(), 3000 + MSS as u64);
        assert_eq!((log.writes, log.delivered_writes), (2, 2));
        assert_eq!(log.pending().count(), 0);
    }
}
