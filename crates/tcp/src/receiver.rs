//! The TCP receiver: cumulative ACKs with SACK blocks (RFC 2018), delayed ACKs, quick-ACK mode
//! at the start, and an advertised window that is either Linux's auto-tuned one
//! ([`crate::rcvbuf`], with its quick ACKs while the window grows) or fixed (a locked
//! SO_RCVBUF). The application reads every in-order byte right after the ACK its arrival
//! triggers, so that ACK's auto-tuned window counts it as buffered (for a segment that fills a
//! hole, with all the data it joined to the stream), as Linux's does.
//!
//! ACK policy, as Linux's __tcp_ack_snd_check and tcp_event_data_recv:
//! - the first 16 data segments are acknowledged at once (quick-ACK mode, TCP_MAX_QUICKACKS),
//!   and so is every segment that raises the auto-tuned window (tcp_grow_window);
//! - then an ACK for every second full segment, or after the 40 ms delayed-ACK timer
//!   (TCP_DELACK_MIN; Linux adapts this timeout, `ato`, between 40 and 200 ms: we keep 40 ms);
//! - out-of-order data, a segment that fills a hole and duplicates are acknowledged at once
//!   (Linux compresses dup-ACKs after the third, tcp_comp_sack_*: not modelled);
//! - a duplicate segment is reported as a D-SACK block (RFC 2883, tcp_dsack_set) in front of
//!   the SACK blocks of the ACK it triggers.
//!
//! Intentional ACK control, for receiver behaviours that steer an unmodified sender (seed 003's
//! R-TSC and Subflow Population Control; `rove_mp::receiver`), none of which a plain Linux
//! receiver does:
//! - **held ACK** ([`TcpReceiver::hold_next_ack`]): the next segment that arrives in order is
//!   received as usual (the application gets it), but the cumulative ACK stays at it, as if it
//!   were missing, until the sender sends it again. Every arrival meanwhile is acknowledged at
//!   once with that ACK number and a SACK block for the data above it: duplicate ACKs. A SACK
//!   sender marks the held segment lost once three segments above it are SACKed (RACK's
//!   reordering window is 0 at tp->reordering = 3 sacked segments), retransmits it and reduces
//!   its window: seed 003's "intentional 3 duplicate ACKs". The retransmission is absorbed
//!   without a D-SACK (which would undo the reduction, tcp_try_undo_dsack), and the ACK it
//!   triggers echoes its timestamp (so Eifel detection sees no spurious retransmission).
//! - **withheld ACKs** ([`TcpReceiver::withhold_acks`]): ACKs are built but not sent (the
//!   sender eventually times out); [`TcpReceiver::release_ack`] sends one now and resumes.

use crate::rcvbuf::{RcvBuf, RcvBufConfig};
use crate::{ack_wire_bytes, Segments, Timer, Wire, MSS, SYN_BYTES};
use rove_sim::packet::{Kind, Packet, SeqRange, MAX_SACK_BLOCKS};
use rove_sim::Nanos;

/// TCP_DELACK_MIN, include/net/tcp.h (HZ/25).
pub const DELAYED_ACK_NS: Nanos = 40_000_000;
/// The smallest window clamp Linux accepts: SOCK_MIN_RCVBUF / 2 (tcp_set_window_clamp;
/// SOCK_MIN_RCVBUF = 2048 + TCP_SKB_MIN_TRUESIZE, 2048 + 2304 on x86-64). [RECON] from
/// include/net/sock.h; the sk_buff size is build-dependent.
pub const MIN_WINDOW_CLAMP_BYTES: u64 = (2048 + 2304) / 2;
/// TCP_MAX_QUICKACKS, include/net/tcp.h.
const MAX_QUICKACKS: u32 = 16;

pub struct TcpReceiver {
    segments: Segments,
    /// The fixed window, or the cap of the auto-tuned one.
    rwnd_bytes: u64,
    /// Linux's receive-buffer auto-tuning; `None`: the window is `rwnd_bytes` throughout.
    rcvbuf: Option<RcvBuf>,
    /// Next segment expected in order.
    rcv_nxt: u64,
    /// rcv_nxt when the last ACK was sent (tp->rcv_wup).
    rcv_wup: u64,
    /// Out-of-order ranges held, sorted and disjoint.
    ofo: Vec<SeqRange>,
    /// SACK blocks in the order they are reported: the most recently changed first.
    sack_order: Vec<SeqRange>,
    quick_acks: u32,
    got_data: bool,
    delack_deadline: Option<Nanos>,
    /// TS.Recent (RFC 7323): the timestamp to echo.
    ts_recent: u32,
    /// A duplicate segment to report as the first SACK block of the next ACK (D-SACK).
    dsack: Option<SeqRange>,
    /// Payload bytes delivered in order to the application.
    pub bytes_delivered: u64,
    /// Payload bytes of every data segment that arrived, duplicates included.
    pub bytes_received: u64,
    /// Largest out-of-order backlog seen, in segments.
    pub max_ofo_segs: u64,
    /// TCP_WINDOW_CLAMP set during the run, bytes.
    window_clamp: Option<u64>,
    /// Right edge of the last window advertised (ack + window), bytes: it never moves left.
    right_edge: u64,
    /// Segments the arrival being processed made readable (itself, and the out-of-order data
    /// it joined to the stream when it filled a hole): they occupy the buffer until the
    /// application reads them, after the ACK this arrival triggers (see [`Self::window`]).
    unread_segs: u64,
    /// An intentional duplicate-ACK episode: armed, or holding the ACK at a segment.
    hold: Option<Hold>,
    /// ACKs are built but not sent.
    withheld: bool,
    /// The ACK number of the last ACK sent (or withheld).
    last_ack: Option<u64>,
    /// What intentional ACK control did (module documentation).
    pub intentional: IntentionalAcks,
}

/// An intentional duplicate-ACK episode's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Waiting for the next segment that arrives in order.
    Armed,
    /// The cumulative ACK is held at this segment until it arrives again.
    At(u64),
}

/// Counters of intentional ACK control.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntentionalAcks {
    /// Episodes begun (a segment held), and the time each began.
    pub episodes: u64,
    pub episode_starts: Vec<Nanos>,
    /// Episodes ended by the held segment's retransmission.
    pub episodes_answered: u64,
    /// Duplicate ACKs sent while an ACK was held (same ACK number as the previous ACK).
    pub dupacks: u64,
    /// ACKs built but not sent while withheld.
    pub withheld_acks: u64,
}

impl TcpReceiver {
    pub fn new(segments: Segments, rwnd_bytes: u64) -> Self {
        TcpReceiver {
            segments,
            rwnd_bytes,
            rcvbuf: None,
            rcv_nxt: 0,
            rcv_wup: 0,
            ofo: Vec::new(),
            sack_order: Vec::with_capacity(MAX_SACK_BLOCKS + 1),
            quick_acks: 0,
            got_data: false,
            delack_deadline: None,
            ts_recent: 0,
            dsack: None,
            bytes_delivered: 0,
            bytes_received: 0,
            max_ofo_segs: 0,
            window_clamp: None,
            right_edge: 0,
            unread_segs: 0,
            hold: None,
            withheld: false,
            last_ack: None,
            intentional: IntentionalAcks::default(),
        }
    }

    /// Starts an intentional duplicate-ACK episode (module documentation): the next segment
    /// that arrives in order is held. Returns false (and does nothing) while an episode runs.
    pub fn hold_next_ack(&mut self) -> bool {
        if self.hold.is_some() {
            return false;
        }
        self.hold = Some(Hold::Armed);
        true
    }

    /// Whether an intentional duplicate-ACK episode is armed or holding.
    pub fn is_holding(&self) -> bool {
        self.hold.is_some()
    }

    /// Stops sending ACKs (they are built, counted and dropped) while `on`.
    pub fn withhold_acks(&mut self, on: bool) {
        self.withheld = on;
    }

    pub fn is_withheld(&self) -> bool {
        self.withheld
    }

    /// Ends withholding and sends one ACK now (for the data received so far).
    pub fn release_ack<W: Wire>(&mut self, w: &mut W) {
        self.withheld = false;
        if self.got_data {
            self.send_ack(w);
        }
    }

    /// The ACK number this receiver sends: rcv_nxt, or the held segment during an episode.
    fn ack_number(&self) -> u64 {
        match self.hold {
            Some(Hold::At(h)) => h,
            _ => self.rcv_nxt,
        }
    }

    /// `setsockopt(TCP_WINDOW_CLAMP)` during the connection: the advertised window shrinks to
    /// `bytes` (at least [`MIN_WINDOW_CLAMP_BYTES`]) as data is acknowledged, without ever moving
    /// its right edge left (tcp_select_window).
    pub fn set_window_clamp(&mut self, bytes: u64) {
        let ack_bytes = self.segments.bytes_before(self.rcv_nxt);
        let advertised = if self.rcvbuf.is_some() {
            self.tuned_window()
        } else {
            self.rwnd_bytes
        };
        self.right_edge = self.right_edge.max(ack_bytes + advertised);
        self.window_clamp = Some(bytes.max(MIN_WINDOW_CLAMP_BYTES));
    }

    /// The same receiver with Linux's auto-tuned window, at most `rwnd_bytes`.
    pub fn autotuned(mut self, truesize: u64) -> Self {
        self.rcvbuf = Some(RcvBuf::new(RcvBufConfig::new(truesize, self.rwnd_bytes)));
        self
    }

    pub fn rcvbuf(&self) -> Option<&RcvBuf> {
        self.rcvbuf.as_ref()
    }

    /// Segments held out of order.
    pub fn ofo_segs(&self) -> u64 {
        self.ofo.iter().map(|r| r.end - r.start).sum()
    }

    /// The window to advertise now.
    fn window(&mut self) -> u64 {
        let tuned = self.rcvbuf.is_some();
        let Some(clamp) = self.window_clamp else {
            return if tuned {
                self.tuned_window()
            } else {
                self.rwnd_bytes
            };
        };
        let w = if tuned {
            self.tuned_window()
        } else {
            self.rwnd_bytes
        };
        let ack_bytes = self.segments.bytes_before(self.rcv_nxt);
        let edge = (ack_bytes + w.min(clamp)).max(self.right_edge);
        self.right_edge = edge;
        edge - ack_bytes
    }

    /// The auto-tuned window: the free buffer with the out-of-order queue and the data not yet
    /// read held. Linux builds an ACK's window (tcp_select_window, from __tcp_transmit_skb)
    /// while the segments the arrival made readable still sit in sk_receive_queue: the reader
    /// runs only after tcp_rcv_established returns. So the ACK for a segment that fills a hole
    /// offers the free space less everything the hole held back, and since the right edge never
    /// moves left (tcp_select_window's "never shrink"), no more than the old right edge: a
    /// smaller window than the ACKs before and after it (measured on the kernel backend: 1,470
    /// → 1,441 → 1,470 units of 1,024 B around a 22-segment hole). A delayed ACK's timer finds
    /// everything read.
    fn tuned_window(&mut self) -> u64 {
        let ack_bytes = self.segments.bytes_before(self.rcv_nxt);
        let held = self.ofo_segs() + self.unread_segs;
        self.rcvbuf
            .as_mut()
            .map_or(self.rwnd_bytes, |b| b.window(ack_bytes, held))
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn on_packet<W: Wire>(&mut self, p: &Packet, w: &mut W) {
        match p.kind {
            Kind::Syn => {
                let now = w.now();
                self.ts_recent = p.tsval;
                let tsval = crate::ts_ms(now);
                let rwnd_bytes = self.window();
                w.transmit(Packet {
                    kind: Kind::SynAck,
                    wire_bytes: SYN_BYTES,
                    rwnd_bytes,
                    sent_at: now,
                    tsval,
                    tsecr: p.tsval,
                    ..Default::default()
                });
            }
            Kind::Segment => self.on_segment(p, w),
            _ => {}
        }
    }

    fn on_segment<W: Wire>(&mut self, p: &Packet, w: &mut W) {
        self.bytes_received += p.payload_bytes as u64;
        if !self.got_data {
            // tcp_event_data_recv: the first data segment starts quick-ACK mode.
            self.got_data = true;
            self.quick_acks = ((self.rwnd_bytes / (2 * MSS as u64)) as u32).clamp(2, MAX_QUICKACKS);
        }
        let seq = p.seq;
        if self.hold == Some(Hold::Armed) && seq == self.rcv_nxt {
            self.hold = Some(Hold::At(seq));
            self.intentional.episodes += 1;
            self.intentional.episode_starts.push(w.now());
        }
        // tcp_replace_ts_recent: only a segment at or left of the last ACKed edge updates the
        // echoed timestamp, so a delayed ACK echoes the earliest segment it covers and the ACK
        // for a filled hole echoes whichever copy (original or retransmission) filled it.
        if seq <= self.rcv_wup {
            self.ts_recent = p.tsval;
        }
        let duplicate = seq < self.rcv_nxt || self.holds(seq);
        let delivered_new = seq == self.rcv_nxt;
        let holding = matches!(self.hold, Some(Hold::At(_)));
        let immediate = if duplicate && self.hold == Some(Hold::At(seq)) {
            // The held segment came again: the sender answered the duplicate ACKs. No D-SACK
            // (it would undo the reduction); the ACK moves on.
            self.hold = None;
            self.intentional.episodes_answered += 1;
            true
        } else if duplicate {
            self.dsack = Some(SeqRange {
                start: seq,
                end: seq + 1,
            });
            true // duplicate
        } else if seq == self.rcv_nxt {
            let had_ofo = !self.ofo.is_empty();
            let before = self.rcv_nxt;
            self.rcv_nxt += 1;
            if let Some(first) = self.ofo.first() {
                if first.start == self.rcv_nxt {
                    self.rcv_nxt = first.end;
                    self.ofo.remove(0);
                }
            }
            let nxt = self.rcv_nxt;
            self.unread_segs = nxt - before;
            self.sack_order.retain(|b| b.end > nxt);
            self.bytes_delivered = self.segments.bytes_before(self.rcv_nxt);
            had_ofo
        } else {
            self.insert_ofo(seq);
            true
        };
        // tcp_event_data_recv / tcp_data_queue_ofo: new data may grow the window, and a
        // segment that grew it is acknowledged at once. It sits in the buffer with the
        // out-of-order queue while it is processed. [Differs] Linux's tcp_grow_window runs
        // before tcp_ofo_queue, with the out-of-order data still charged to the buffer, so for
        // a segment that fills a hole it also counts the data the hole held back (here already
        // joined to the stream, not counted): left as it is, since it changes how every
        // algorithm's window grows after a loss early in a connection.
        let mut grew = false;
        if !duplicate && self.rcvbuf.is_some() {
            let held = self.ofo_segs() + 1;
            let now = w.now();
            if let Some(b) = self.rcvbuf.as_mut() {
                grew = b.on_data(now, p.payload_bytes, p.tsecr, held);
            }
        }
        let unacked_segs = self.rcv_nxt - self.rcv_wup;
        if immediate || holding || grew || unacked_segs > 1 || self.quick_acks > 0 {
            self.send_ack(w);
        } else if self.delack_deadline.is_none() {
            let at = w.now() + DELAYED_ACK_NS;
            self.delack_deadline = Some(at);
            w.arm(Timer::DelayedAck, at);
        }
        // The application reads what arrived in order (tcp_rcv_space_adjust on recvmsg).
        self.unread_segs = 0;
        if delivered_new && self.rcvbuf.is_some() {
            let now = w.now();
            let span = self.ofo.last().map_or(0, |r| {
                self.segments.bytes_before(r.end) - self.bytes_delivered
            });
            let delivered = self.bytes_delivered;
            if let Some(b) = self.rcvbuf.as_mut() {
                b.on_read(now, delivered, span);
            }
        }
    }

    pub fn on_timer<W: Wire>(&mut self, timer: Timer, w: &mut W) {
        if timer != Timer::DelayedAck {
            return;
        }
        match self.delack_deadline {
            Some(d) if d <= w.now() => self.send_ack(w),
            Some(d) => w.arm(Timer::DelayedAck, d),
            None => {}
        }
    }

    /// Whether out-of-order segment `seq` is held (received above a hole).
    pub fn holds_out_of_order(&self, seq: u64) -> bool {
        self.holds(seq)
    }

    fn holds(&self, seq: u64) -> bool {
        let i = self.ofo.partition_point(|r| r.end <= seq);
        self.ofo.get(i).is_some_and(|r| r.start <= seq)
    }

    /// Adds out-of-order segment `seq`, merging neighbours, and puts its block first in the SACK
    /// order (tcp_sack_new_ofo_skb).
    fn insert_ofo(&mut self, seq: u64) {
        let i = self.ofo.partition_point(|r| r.end < seq);
        let merged = match self.ofo.get_mut(i) {
            Some(r) if r.end == seq => {
                r.end = seq + 1;
                // Join with the next range if this closed the gap between them.
                if self.ofo.get(i + 1).is_some_and(|n| n.start == seq + 1) {
                    let next = self.ofo.remove(i + 1);
                    self.ofo[i].end = next.end;
                }
                self.ofo[i]
            }
            Some(r) if r.start == seq + 1 => {
                r.start = seq;
                *r
            }
            _ => {
                let r = SeqRange {
                    start: seq,
                    end: seq + 1,
                };
                self.ofo.insert(i, r);
                r
            }
        };
        self.sack_order
            .retain(|b| b.end < merged.start || b.start > merged.end);
        self.sack_order.insert(0, merged);
        self.sack_order.truncate(MAX_SACK_BLOCKS + 1);
        self.max_ofo_segs = self.max_ofo_segs.max(self.ofo_segs());
    }

    fn send_ack<W: Wire>(&mut self, w: &mut W) {
        let ack = self.ack_number();
        // During an episode, the data received above the held segment is SACKed first.
        let held_above = (ack < self.rcv_nxt).then_some(SeqRange {
            start: ack + 1,
            end: self.rcv_nxt,
        });
        let mut sack = [SeqRange::default(); MAX_SACK_BLOCKS];
        let mut n = 0;
        for b in self
            .dsack
            .take()
            .iter()
            .chain(held_above.iter().filter(|b| b.start < b.end))
            .chain(self.sack_order.iter())
            .take(MAX_SACK_BLOCKS)
        {
            sack[n] = *b;
            n += 1;
        }
        let rwnd_bytes = self.window();
        let duplicate = self.last_ack == Some(ack);
        self.last_ack = Some(ack);
        self.rcv_wup = ack;
        self.delack_deadline = None;
        self.quick_acks = self.quick_acks.saturating_sub(1);
        if duplicate && matches!(self.hold, Some(Hold::At(_))) {
            self.intentional.dupacks += 1;
        }
        if self.withheld {
            self.intentional.withheld_acks += 1;
            return;
        }
        w.transmit(Packet {
            kind: Kind::Ack,
            ack,
            rwnd_bytes,
            sack,
            sack_len: n as u8,
            wire_bytes: ack_wire_bytes(n),
            sent_at: w.now(),
            tsval: crate::ts_ms(w.now()),
            tsecr: self.ts_recent,
            ..Default::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wire that records what the receiver sends.
    #[derive(Default)]
    struct Recorder {
        now: Nanos,
        sent: Vec<Packet>,
        armed: Vec<(Timer, Nanos)>,
    }

    impl Wire for Recorder {
        fn now(&self) -> Nanos {
            self.now
        }
        fn transmit(&mut self, p: Packet) {
            self.sent.push(p);
        }
        fn arm(&mut self, t: Timer, at: Nanos) {
            self.armed.push((t, at));
        }
    }

    fn seg(seq: u64) -> Packet {
        Packet {
            kind: Kind::Segment,
            seq,
            payload_bytes: MSS,
            ..Default::default()
        }
    }

    fn receiver() -> TcpReceiver {
        TcpReceiver::new(Segments { size_bytes: None }, 6_000_000)
    }

    #[test]
    fn quick_acks_then_every_second_segment_then_timer() {
        let mut r = receiver();
        let mut w = Recorder::default();
        for s in 0..16 {
            r.on_packet(&seg(s), &mut w);
        }
        assert_eq!(
            w.sent.len(),
            16,
            "quick-ACK mode acks each of the first 16 segments"
        );
        r.on_packet(&seg(16), &mut w);
        assert_eq!(w.sent.len(), 16, "17th segment: delayed");
        assert_eq!(w.armed.last(), Some(&(Timer::DelayedAck, DELAYED_ACK_NS)));
        r.on_packet(&seg(17), &mut w);
        assert_eq!(w.sent.len(), 17, "second full segment: ACK now");
        assert_eq!(w.sent.last().unwrap().ack, 18);
        r.on_packet(&seg(18), &mut w);
        assert_eq!(w.sent.len(), 17);
        w.now = DELAYED_ACK_NS;
        r.on_timer(Timer::DelayedAck, &mut w);
        assert_eq!(w.sent.len(), 18);
        assert_eq!(w.sent.last().unwrap().ack, 19);
    }

    #[test]
    fn an_autotuned_receiver_acks_every_segment_while_its_window_grows() {
        // rcv_ssthresh starts at 64088 B and grows 2896 B per segment up to the free space,
        // 80480 B with the segment being processed ((131072 − 2304 B) · 160/256, the value
        // `ss -tmi` showed on Linux 6.18): the 6th segment reaches it. The first 16 are quick
        // ACKs anyway; the advertised window grows with it.
        let mut r = receiver().autotuned(crate::rcvbuf::DEFAULT_TRUESIZE);
        let mut w = Recorder::default();
        for s in 0..16 {
            r.on_packet(&seg(s), &mut w);
        }
        assert_eq!(w.sent.len(), 16);
        assert_eq!(w.sent[0].rwnd_bytes, 64_088 + 2_896);
        assert_eq!(r.rcvbuf().unwrap().rcv_ssthresh(), 80_480);
        // Window full grown: back to one ACK per two segments.
        r.on_packet(&seg(16), &mut w);
        assert_eq!(w.sent.len(), 16);
        r.on_packet(&seg(17), &mut w);
        assert_eq!(w.sent.len(), 17);
        // A fixed-window receiver advertises its rwnd throughout.
        let mut fixed = receiver();
        let mut w2 = Recorder::default();
        fixed.on_packet(&seg(0), &mut w2);
        assert_eq!(w2.sent[0].rwnd_bytes, 6_000_000);
    }

    #[test]
    fn the_ack_for_a_filled_hole_offers_less_window_while_the_joined_data_is_unread() {
        // As above: after 18 segments rcvbuf 131072 B, rcv_ssthresh 80480 B; one segment's
        // truesize (2304 B) takes 1440 B of window, so with k segments in the buffer the free
        // window is 81920 − 1440·k.
        let mut r = receiver().autotuned(crate::rcvbuf::DEFAULT_TRUESIZE);
        let mut w = Recorder::default();
        for s in 0..18 {
            r.on_packet(&seg(s), &mut w);
        }
        let m = MSS as u64;
        let last = w.sent.last().unwrap();
        // The segment being processed is in the buffer: min(81920 − 1440, 80480) = 80480.
        assert_eq!((last.ack, last.rwnd_bytes), (18, 80_480));
        let edge = 18 * m + 80_480;
        // Segment 18 is lost; 19-22 arrive out of order, each acked at once. The free window
        // shrinks (81920 − 1440·k for k held), the right edge stays: 80480 B offered.
        for s in 19..23 {
            r.on_packet(&seg(s), &mut w);
            let a = w.sent.last().unwrap();
            assert_eq!((a.ack, a.rwnd_bytes), (18, edge - 18 * m));
        }
        // Segment 18 fills the hole: the ACK (for 23) is built with 18-22 in the buffer, unread
        // (5 segments): free window 81920 − 7200 = 74720, its right edge 23·1448 + 74720 =
        // 108024 right of the old one (106544). Before the application read them rove offered
        // the whole 80480 again, and the sender took that ACK as header-predicted.
        r.on_packet(&seg(18), &mut w);
        let a = w.sent.last().unwrap();
        assert_eq!((a.ack, a.rwnd_bytes), (23, 81_920 - 5 * 1_440));
        assert_eq!(a.rwnd_bytes, 74_720);
        // Read, the next ACK (every second segment) has the full window back.
        r.on_packet(&seg(23), &mut w);
        r.on_packet(&seg(24), &mut w);
        let a = w.sent.last().unwrap();
        assert_eq!((a.ack, a.rwnd_bytes), (25, 80_480));
    }

    #[test]
    fn out_of_order_data_gets_immediate_acks_with_most_recent_block_first() {
        let mut r = receiver();
        let mut w = Recorder::default();
        r.quick_acks = 0;
        r.got_data = true;
        r.on_packet(&seg(0), &mut w); // in order, delayed
        assert!(w.sent.is_empty());
        r.on_packet(&seg(2), &mut w);
        r.on_packet(&seg(3), &mut w);
        r.on_packet(&seg(6), &mut w);
        let last = w.sent.last().unwrap();
        assert_eq!(last.ack, 1);
        assert_eq!(
            last.sack_blocks(),
            &[SeqRange { start: 6, end: 7 }, SeqRange { start: 2, end: 4 }]
        );
        assert_eq!(last.wire_bytes, 52 + 4 + 16);
        // Filling the first hole acks at once and drops the covered block.
        r.on_packet(&seg(1), &mut w);
        let last = w.sent.last().unwrap();
        assert_eq!(last.ack, 4);
        assert_eq!(last.sack_blocks(), &[SeqRange { start: 6, end: 7 }]);
        assert_eq!(r.bytes_delivered, 4 * MSS as u64);
    }

    #[test]
    fn duplicates_are_reported_as_a_dsack_block_first() {
        let mut r = receiver();
        let mut w = Recorder::default();
        for s in [0, 1, 3] {
            r.on_packet(&seg(s), &mut w);
        }
        r.on_packet(&seg(0), &mut w); // below rcv_nxt
        let last = w.sent.last().unwrap();
        assert_eq!(last.ack, 2);
        assert_eq!(
            last.sack_blocks(),
            &[SeqRange { start: 0, end: 1 }, SeqRange { start: 3, end: 4 }]
        );
        r.on_packet(&seg(3), &mut w); // duplicate of out-of-order data
        assert_eq!(
            w.sent.last().unwrap().sack_blocks(),
            &[SeqRange { start: 3, end: 4 }, SeqRange { start: 3, end: 4 }]
        );
        // Reported once.
        r.on_packet(&seg(5), &mut w);
        assert_eq!(
            w.sent.last().unwrap().sack_blocks()[0],
            SeqRange { start: 5, end: 6 }
        );
    }

    #[test]
    fn adjacent_out_of_order_segments_merge_into_one_block() {
        let mut r = receiver();
        let mut w = Recorder::default();
        for s in [5, 3, 4, 9, 7, 8] {
            r.on_packet(&seg(s), &mut w);
        }
        assert_eq!(
            r.ofo,
            vec![
                SeqRange { start: 3, end: 6 },
                SeqRange { start: 7, end: 10 }
            ]
        );
        assert_eq!(
            w.sent.last().unwrap().sack_blocks()[0],
            SeqRange { start: 7, end: 10 }
        );
    }

    fn seg_ts(seq: u64, tsval: u32) -> Packet {
        Packet { tsval, ..seg(seq) }
    }

    #[test]
    fn a_held_ack_repeats_with_sack_blocks_until_the_retransmission_and_sends_no_dsack() {
        let mut r = receiver();
        let mut w = Recorder::default();
        r.quick_acks = 0;
        r.got_data = true;
        for s in 0..4 {
            r.on_packet(&seg_ts(s, 10 + s as u32), &mut w);
        }
        assert_eq!(w.sent.last().unwrap().ack, 4);
        let before = w.sent.len();
        assert!(r.hold_next_ack());
        assert!(!r.hold_next_ack(), "one episode at a time");
        // Segment 4 arrives in order: received (rcv_nxt 5, delivered), but ACKed as missing.
        r.on_packet(&seg_ts(4, 20), &mut w);
        assert_eq!(r.rcv_nxt(), 5);
        assert_eq!(r.bytes_delivered, 5 * MSS as u64);
        assert_eq!(r.intentional.episodes, 1);
        let a = w.sent.last().unwrap();
        assert_eq!((a.ack, a.sack_len), (4, 0));
        // Segments 5, 6, 7: each acknowledged at once, ACK 4, SACK [5, rcv_nxt): three duplicates.
        for s in 5..8 {
            r.on_packet(&seg_ts(s, 21 + s as u32), &mut w);
            let a = w.sent.last().unwrap();
            assert_eq!(a.ack, 4);
            assert_eq!(
                a.sack_blocks(),
                &[SeqRange {
                    start: 5,
                    end: s + 1
                }]
            );
            assert_eq!(a.tsecr, 20, "echoes the held segment's timestamp");
        }
        assert_eq!(w.sent.len(), before + 4);
        assert_eq!(r.intentional.dupacks, 4, "the ACK for 4 repeats ACK 4 too");
        // The retransmission of 4: no D-SACK, the ACK moves to rcv_nxt and echoes its timestamp.
        r.on_packet(&seg_ts(4, 99), &mut w);
        let a = w.sent.last().unwrap();
        assert_eq!((a.ack, a.sack_len, a.tsecr), (8, 0, 99));
        assert!(!r.is_holding());
        assert_eq!(r.intentional.episodes_answered, 1);
        // Back to delayed ACKs for in-order data.
        r.on_packet(&seg_ts(8, 100), &mut w);
        assert_eq!(w.sent.last().unwrap().ack, 8);
    }

    #[test]
    fn withheld_acks_are_not_sent_and_a_release_sends_one() {
        let mut r = receiver();
        let mut w = Recorder::default();
        r.withhold_acks(true);
        for s in 0..5 {
            r.on_packet(&seg(s), &mut w);
        }
        assert!(w.sent.is_empty());
        assert_eq!(r.intentional.withheld_acks, 5, "quick ACKs, all withheld");
        r.release_ack(&mut w);
        assert_eq!(w.sent.len(), 1);
        assert_eq!(w.sent[0].ack, 5);
        assert!(!r.is_withheld());
    }

    #[test]
    fn last_segment_of_a_finite_flow_counts_its_real_size() {
        let mut r = TcpReceiver::new(
            Segments {
                size_bytes: Some(3000),
            },
            65535,
        );
        let mut w = Recorder::default();
        r.on_packet(&seg(0), &mut w);
        r.on_packet(&seg(1), &mut w);
        r.on_packet(
            &Packet {
                payload_bytes: 104,
                ..seg(2)
            },
            &mut w,
        );
        assert_eq!(r.bytes_delivered, 3000);
    }
}
