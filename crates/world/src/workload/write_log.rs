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

    /// The segments a move of the in-order point to `in_order_seg` delivers, write by write:
    /// `f(write, segments)` for each write that gets some, oldest first (call it before
    /// [`advance`](Self::advance)).
    pub fn newly_in_order(&self, in_order_seg: u64, mut f: impl FnMut(&Write, u64)) {
        for w in &self.pending {
            if w.first_seg >= in_order_seg {
                break;
            }
            let from = w.first_seg.max(self.in_order_seg);
            let to = w.end_seg.min(in_order_seg);
            if to > from {
                f(w, to - from);
            }
        }
    }

    /// Segments of the writes not delivered in full that are still missing, per write:
    /// `(write, missing segments)`, oldest first.
    pub fn missing_segments(&self) -> impl Iterator<Item = (&Write, u64)> {
        self.pending
            .iter()
            .map(|w| (w, w.end_seg - w.first_seg.max(self.in_order_seg)))
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

    #[test]
    fn segments_are_followed_one_by_one_across_writes() {
        let mut log = WriteLog::default();
        log.write(3000, 10); // segments 0..3
        log.write(MSS as u64, 20); // segment 3
        let newly = |log: &WriteLog, to: u64| {
            let mut got = Vec::new();
            log.newly_in_order(to, |w, n| got.push((w.at, n)));
            got
        };
        assert_eq!(newly(&log, 2), [(10, 2)]);
        log.advance(2, |_| {});
        let missing: Vec<_> = log.missing_segments().map(|(w, n)| (w.at, n)).collect();
        assert_eq!(missing, [(10, 1), (20, 1)]);
        // From 2 to 4: the first write's last segment and the second write's one.
        assert_eq!(newly(&log, 4), [(10, 1), (20, 1)]);
        assert_eq!(newly(&log, 2), []);
    }
}
