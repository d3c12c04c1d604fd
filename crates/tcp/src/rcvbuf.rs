//! Linux's receive-buffer auto-tuning and window growth, as far as they shape the advertised
//! window and the timing of ACKs (Linux 6.18, net/ipv4/tcp_input.c).
//!
//! - The buffer starts at `tcp_rmem[1]` (131072 B). Once per receiver RTT the bytes the
//!   application read in the last RTT (`copied`, dynamic right-sizing) are compared with the
//!   previous measure (`rcvq_space.space`); when they grew, `tcp_rcvbuf_grow` sets the buffer to
//!   hold `2·copied`, plus `2·(2·copied)·(copied − space)/space` for a sender in slow start, in
//!   `truesize` units, at most `tcp_rmem[2]`; `window_clamp` follows (`tcp_win_from_space`).
//! - Each arriving data segment raises `rcv_ssthresh` by `2·advmss` towards the free space
//!   (`tcp_grow_window`), and every segment that raised it is acknowledged at once
//!   (`icsk_ack.quick |= 1`). In slow start this gives runs of one ACK per segment after every
//!   buffer step, which is what lets HyStart's ACK-train test see trains at low rates.
//! - The advertised window is `min(free space, rcv_ssthresh)`, and its right edge never moves
//!   left (`__tcp_select_window`, `tcp_select_window`).
//! - The receiver's RTT comes from the timestamps the sender echoes (`tcp_rcv_rtt_measure_ts`,
//!   millisecond granularity: a minimum, then an EWMA with gain 1/8 upward).
//!
//! Bytes in the buffer are counted in `truesize`, the memory a buffered segment takes
//! ([`RcvBufConfig::truesize`]); Linux measures `tp->scaling_ratio = len·256/truesize` on the first
//! full segment and converts between window and buffer with it. [GAP] truesize depends on the
//! receiving driver; 2304 B (ratio 160/256) is what Linux 6.18 shows for the TUN devices of
//! rove's kernel backend (`ss -tmi`: rcvbuf steps 131072 → 244316 → 556032 → 1112064 → 1230800 B,
//! each matching the rule above exactly, and rcv_ssthresh settling 1440 B = 2304·160/256 under
//! the clamp).
//! Simplified: the application reads every in-order byte right after the ACK its arrival
//! triggers, so only the out-of-order queue and what that arrival made readable (the segment,
//! or with a segment that fills a hole all the data it joined to the stream) occupy the buffer
//! when an ACK is built (`receiver.rs`, `tuned_window`); no memory pressure; window scaling is
//! not rounded (its granularity at these windows is below one segment).

use crate::MSS;
use rove_sim::Nanos;

/// tcp_rmem[1], the initial receive buffer (net.ipv4.tcp_rmem default).
pub const RMEM_INIT: u64 = 131_072;
/// tcp_rmem[2], the largest buffer auto-tuning may reach (default since Linux 6.x: 32 MiB).
pub const RMEM_MAX: u64 = 33_554_432;
/// TCP_DEFAULT_SCALING_RATIO before the first full-sized segment is measured: 1/2.
const DEFAULT_SCALING_RATIO: u64 = 128;
/// TCP_RMEM_TO_WIN_SCALE.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// TCP_INIT_CWND: rcvq_space.space starts at 10 segments (tcp_init_buffer_space).
const INIT_SPACE_SEGS: u64 = 10;
/// net.ipv4.tcp_rcvbuf_low_rtt default (µs): below it, growth is damped by rtt/threshold.
const RCVBUF_LOW_RTT_US: u64 = 1000;
/// The initial advertised window: 65535, the largest unscaled window (tcp_select_initial_window).
const INITIAL_WINDOW: u64 = 65_535;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RcvBufConfig {
    /// Memory one buffered full-sized segment takes (skb->truesize), bytes; more than `MSS`.
    pub truesize: u64,
    /// The largest window ever advertised (the scenario's `rwnd`).
    pub max_window: u64,
}

/// [GAP] skb->truesize of a full segment on the kernel backend's TUN devices (Linux 6.18).
pub const DEFAULT_TRUESIZE: u64 = 2304;

impl RcvBufConfig {
    pub fn new(truesize: u64, max_window: u64) -> Self {
        RcvBufConfig {
            truesize,
            max_window,
        }
    }

    /// tp->scaling_ratio for this truesize: len·256/truesize (tcp_measure_rcv_mss), 1..=255.
    pub fn scaling_ratio(&self) -> u64 {
        ((MSS as u64) << RMEM_TO_WIN_SCALE)
            .checked_div(self.truesize)
            .unwrap_or(255)
            .clamp(1, 255)
    }
}

/// Receive-buffer state of one connection's receiver.
#[derive(Debug, Clone)]
pub struct RcvBuf {
    cfg: RcvBufConfig,
    ratio: u64,
    /// sk_rcvbuf (bytes of truesize).
    rcvbuf: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// rcvq_space.space / .seq (as bytes delivered) / .time.
    space: u64,
    space_seq: u64,
    space_time: Nanos,
    /// rcv_rtt_est.rtt_us, scaled by 8 (0 until the first sample).
    rtt_us8: u64,
    last_tsecr: u32,
    /// The right edge of the last advertised window, in bytes of the stream.
    right_edge: u64,
    measured: bool,
}

impl RcvBuf {
    pub fn new(cfg: RcvBufConfig) -> Self {
        let mut b = RcvBuf {
            cfg,
            ratio: DEFAULT_SCALING_RATIO,
            rcvbuf: RMEM_INIT,
            window_clamp: 0,
            rcv_ssthresh: 0,
            space: 0,
            space_seq: 0,
            space_time: 0,
            rtt_us8: 0,
            last_tsecr: 0,
            right_edge: 0,
            measured: false,
        };
        // tcp_init_buffer_space: window_clamp = full space less one segment when that is tight.
        let full = b.win_from_space(b.rcvbuf);
        b.window_clamp = full.saturating_sub(MSS as u64).max(2 * MSS as u64);
        b.rcv_ssthresh = INITIAL_WINDOW.min(b.window_clamp);
        b.space = b
            .rcv_ssthresh
            .min(INITIAL_WINDOW)
            .min(INIT_SPACE_SEGS * MSS as u64);
        b
    }

    fn win_from_space(&self, space: u64) -> u64 {
        (space * self.ratio) >> RMEM_TO_WIN_SCALE
    }

    fn space_from_win(&self, win: u64) -> u64 {
        (win << RMEM_TO_WIN_SCALE) / self.ratio
    }

    /// tcp_space: window that the free buffer can back, with `held_segs` segments buffered.
    fn free_window(&self, held_segs: u64) -> u64 {
        self.win_from_space(self.rcvbuf.saturating_sub(held_segs * self.cfg.truesize))
    }

    /// The window to advertise at `ack_bytes` (rcv_nxt in bytes), `held_segs` segments buffered.
    pub fn window(&mut self, ack_bytes: u64, held_segs: u64) -> u64 {
        let w = self
            .free_window(held_segs)
            .min(self.rcv_ssthresh)
            .min(self.cfg.max_window);
        // tcp_select_window: never move the right edge left.
        let edge = (ack_bytes + w).max(self.right_edge);
        self.right_edge = edge;
        edge - ack_bytes
    }

    /// A data segment of `len` payload bytes arrived; `tsecr` is the timestamp it echoes and
    /// `held_segs` the segments buffered with it. Returns whether it must be ACKed at once
    /// because it grew the window (tcp_event_data_recv / tcp_data_queue_ofo).
    pub fn on_data(&mut self, now: Nanos, len: u32, tsecr: u32, held_segs: u64) -> bool {
        if !self.measured && len >= MSS {
            // tcp_measure_rcv_mss: the first full segment sets the scaling ratio.
            self.measured = true;
            self.ratio = self.cfg.scaling_ratio();
            self.window_clamp = self.win_from_space(self.rcvbuf);
            self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        }
        self.measure_rtt(now, len, tsecr);
        // tcp_grow_window (skb->len >= 128; a full segment fits its truesize, so 2·advmss).
        if len < 128 {
            return false;
        }
        let room = self
            .window_clamp
            .min(self.free_window(held_segs))
            .saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        let incr = (2 * MSS as u64).max(2 * len as u64);
        self.rcv_ssthresh += room.min(incr);
        true
    }

    /// tcp_rcv_rtt_measure_ts: a sample per newly echoed timestamp, in whole milliseconds.
    fn measure_rtt(&mut self, now: Nanos, len: u32, tsecr: u32) {
        if tsecr == 0 || tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = tsecr;
        if len < MSS {
            return;
        }
        let delta_ms = crate::ts_ms(now).wrapping_sub(tsecr);
        if delta_ms == 0 || delta_ms > i32::MAX as u32 / 1000 {
            return;
        }
        // tcp_rcv_rtt_update (win_dep = 0): a new minimum, else 7/8 old + 1/8 new.
        let sample = delta_ms as u64 * 1000;
        let m = sample << 3;
        self.rtt_us8 = if self.rtt_us8 == 0 || m < self.rtt_us8 {
            m
        } else {
            self.rtt_us8 - (self.rtt_us8 >> 3) + sample
        };
    }

    /// tcp_rcv_space_adjust, as the application reads: `delivered` bytes read so far.
    pub fn on_read(&mut self, now: Nanos, delivered: u64, ooo_span_bytes: u64) {
        let rtt_us = self.rtt_us8 >> 3;
        let elapsed_us = now.saturating_sub(self.space_time) / 1000;
        if rtt_us == 0 || elapsed_us < rtt_us {
            return;
        }
        let copied = delivered - self.space_seq;
        if copied > self.space {
            self.grow(copied, rtt_us, ooo_span_bytes);
        }
        self.space_seq = delivered;
        self.space_time = now;
    }

    /// tcp_rcvbuf_grow(newval = copied).
    fn grow(&mut self, copied: u64, rtt_us: u64, ooo_span_bytes: u64) {
        let old = self.space;
        self.space = copied;
        // "DRS is always one RTT late."
        let mut rcvwin = copied << 1;
        let grow = if rtt_us < RCVBUF_LOW_RTT_US {
            rcvwin * rtt_us / RCVBUF_LOW_RTT_US
        } else {
            // Slow start: allow the sender to double its rate.
            ((rcvwin << 1) * (copied - old)) / old
        };
        rcvwin += grow + ooo_span_bytes;
        let rcvbuf = self.space_from_win(rcvwin).min(RMEM_MAX);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = self.win_from_space(rcvbuf);
        }
    }

    pub fn rcvbuf(&self) -> u64 {
        self.rcvbuf
    }

    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    pub fn space(&self) -> u64 {
        self.space
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn measured(truesize: u64) -> RcvBuf {
        let mut b = RcvBuf::new(RcvBufConfig::new(truesize, 6 << 20));
        b.on_data(0, MSS, 0, 1);
        b
    }

    #[test]
    fn the_default_truesize_gives_the_ratio_linux_measured() {
        assert_eq!(RcvBufConfig::new(DEFAULT_TRUESIZE, 1).scaling_ratio(), 160);
        assert_eq!(RcvBufConfig::new(4096, 1).scaling_ratio(), 90);
    }

    #[test]
    fn starts_as_linux_6_18_measured_on_tun() {
        // ss -tmi on the kernel backend's receiver: rb131072, rcv_space 14480, and rcv_ssthresh
        // 80480 = 131072·160/256 less one segment's share of the buffer (1440).
        let mut b = measured(DEFAULT_TRUESIZE);
        assert_eq!(b.rcvbuf(), 131_072);
        assert_eq!(b.space(), 14_480);
        // Grow to the free space: the segment being processed holds 2304 B of truesize.
        for _ in 0..20 {
            b.on_data(0, MSS, 0, 1);
        }
        assert_eq!(b.rcv_ssthresh(), 81_920 - 1_440);
    }

    #[test]
    fn buffer_steps_match_tcp_rcvbuf_grow() {
        // The steps seen on the kernel (space old → new: rcvbuf): 15928 → 28960: 244316;
        // 28960 → 57920: 556032; 57920 → 115840: 1112064; 115840 → 181000: 1230800.
        let mut b = measured(DEFAULT_TRUESIZE);
        for (old, new, rcvbuf) in [
            (15_928, 28_960, 244_316),
            (28_960, 57_920, 556_032),
            (57_920, 115_840, 1_112_064),
            (115_840, 181_000, 1_230_800),
        ] {
            b.space = old;
            b.grow(new, 100_000, 0);
            assert_eq!((b.space(), b.rcvbuf()), (new, rcvbuf));
        }
    }

    #[test]
    fn each_segment_that_grows_the_window_is_acked_at_once_until_it_reaches_the_clamp() {
        let mut b = measured(DEFAULT_TRUESIZE);
        b.rcvbuf = 556_032;
        b.window_clamp = b.win_from_space(b.rcvbuf); // 347520
        b.rcv_ssthresh = 141_296;
        let mut quick = 0;
        while b.on_data(0, MSS, 0, 1) {
            quick += 1;
        }
        // (347520 − 1440 − 141296) / 2896 = 70.7: 71 segments raise it, the last partly.
        assert_eq!(quick, 71);
        assert_eq!(b.rcv_ssthresh(), 347_520 - 1_440);
    }

    #[test]
    fn the_receiver_rtt_is_a_minimum_then_an_ewma_upwards() {
        let mut b = measured(DEFAULT_TRUESIZE);
        // Segments echo ACK timestamps; ts_ms(now) = now_ms + 1.
        b.on_data(100 * MS, MSS, crate::ts_ms(0), 1); // 100 ms
        assert_eq!(b.rtt_us8 >> 3, 100_000);
        b.on_data(180 * MS, MSS, crate::ts_ms(20 * MS), 1); // 160 ms: 7/8·100 + 1/8·160
        assert_eq!(b.rtt_us8 >> 3, 107_500);
        b.on_data(190 * MS, MSS, crate::ts_ms(20 * MS), 1); // same echo: no sample
        assert_eq!(b.rtt_us8 >> 3, 107_500);
        b.on_data(290 * MS, MSS, crate::ts_ms(200 * MS), 1); // 90 ms: a new minimum
        assert_eq!(b.rtt_us8 >> 3, 90_000);
    }

    #[test]
    fn dynamic_right_sizing_runs_once_per_receiver_rtt() {
        let mut b = measured(DEFAULT_TRUESIZE);
        b.on_data(100 * MS, MSS, crate::ts_ms(0), 1); // rtt 100 ms
        b.on_read(50 * MS, 40_000, 0); // before one RTT: nothing
        assert_eq!(b.space(), 14_480);
        b.on_read(100 * MS, 40_000, 0); // 40000 > 14480: grows
        assert_eq!(b.space(), 40_000);
        assert!(b.rcvbuf() > RMEM_INIT);
        let rcvbuf = b.rcvbuf();
        b.on_read(150 * MS, 90_000, 0); // half an RTT later: nothing
        assert_eq!((b.space(), b.rcvbuf()), (40_000, rcvbuf));
    }

    #[test]
    fn the_right_edge_never_moves_left_and_the_window_is_capped() {
        let mut b = RcvBuf::new(RcvBufConfig::new(DEFAULT_TRUESIZE, 50_000));
        b.on_data(0, MSS, 0, 1);
        let w = b.window(0, 0);
        assert_eq!(w, 50_000);
        // Out-of-order data fills the buffer: the free space shrinks, the edge stays.
        assert_eq!(b.window(10_000, 200), 40_000);
    }
}
