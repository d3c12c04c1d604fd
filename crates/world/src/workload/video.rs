//! `workload = "video"`: a VBR video source (seed 003's H.264 video, synthesised as the seed's
//! reproduction notes suggest, since the Seeling–Reisslein traces are not available offline).
//!
//! Frame k is written at t₀ + k/fps, where t₀ is when the connection is established. Frames
//! repeat a group of pictures (GOP) of `gop` frames: one I-frame, then `gop − 1` P-frames, an
//! I-frame `i_to_p` times the size of a P-frame. Over a GOP the sizes average the mean frame
//! M = bitrate / (8·fps), so with r = i_to_p and G = gop:
//!
//! ```text
//!     P = G·M / (r + G − 1),    I = r·P
//! ```
//!
//! With `frame_jitter = j` each size is multiplied by a uniform draw from [1 − j, 1 + j] (mean
//! preserved). A frame's delay runs from its write to the in-order delivery of its last byte
//! at the receiving application; it misses its deadline when that delay exceeds `deadline`, or
//! when the deadline passes before it is delivered at all.
//!
//! With `required_delay` (seed 003's d_req) every segment is followed too: its delay runs from
//! its frame's write to its own in-order delivery (the dissertation's "one-way
//! application-level packet delay", which counts the send buffer, the network and the
//! reordering buffer), and it is late past the required delay, or overdue when that passes
//! before it is delivered.

use super::write_log::WriteLog;
use super::AppStats;
use rove_scenario::spec::VideoSpec;
use rove_sim::rng::Stream;
use rove_sim::{Nanos, NS_PER_S};

pub struct VideoSource {
    spec: VideoSpec,
    p_frame_bytes: f64,
    /// Stop before a frame that would take the bytes written past this (`size`).
    limit_bytes: Option<u64>,
    /// Draws of the frame-size jitter.
    rng: Stream,
    /// When frame 0 was written (the establishment), and the next frame's index.
    first_at: Nanos,
    next_frame: u64,
    pub log: WriteLog,
    pub stats: AppStats,
}

impl VideoSource {
    pub fn new(spec: VideoSpec, limit_bytes: Option<u64>, rng: Stream) -> Self {
        let mean = spec.bitrate_bps as f64 / 8.0 / spec.fps;
        let g = spec.gop as f64;
        VideoSource {
            p_frame_bytes: g * mean / (spec.i_to_p + g - 1.0),
            spec,
            limit_bytes,
            rng,
            first_at: 0,
            next_frame: 0,
            log: WriteLog::default(),
            stats: AppStats::default(),
        }
    }

    pub fn deadline_ns(&self) -> Nanos {
        self.spec.deadline_ns
    }

    /// Size of frame `k` before jitter: an I-frame at the start of each GOP, else a P-frame.
    pub fn nominal_frame_bytes(&self, k: u64) -> f64 {
        if k.is_multiple_of(self.spec.gop as u64) {
            self.spec.i_to_p * self.p_frame_bytes
        } else {
            self.p_frame_bytes
        }
    }

    fn frame_bytes(&mut self, k: u64) -> u64 {
        let mut b = self.nominal_frame_bytes(k);
        if self.spec.frame_jitter > 0.0 {
            b *= 1.0 + self.spec.frame_jitter * (2.0 * self.rng.uniform() - 1.0);
        }
        (b.round() as u64).max(1)
    }

    /// Frame `k`'s write time.
    fn frame_at(&self, k: u64) -> Nanos {
        self.first_at + (k as f64 * NS_PER_S as f64 / self.spec.fps).round() as Nanos
    }

    /// The connection is established: frame 0 is due now.
    pub fn start(&mut self, now: Nanos) -> Option<Nanos> {
        self.first_at = now;
        Some(now)
    }

    /// Writes the frames due at `now` through `write`; returns when the next one is due.
    pub fn on_wake(&mut self, now: Nanos, write: &mut dyn FnMut(u64)) -> Option<Nanos> {
        while self.frame_at(self.next_frame) <= now {
            let bytes = self.frame_bytes(self.next_frame);
            if self
                .limit_bytes
                .is_some_and(|l| self.log.written_bytes + bytes > l)
            {
                return None;
            }
            let w = self.log.write(bytes, now);
            self.stats.writes += 1;
            if self.spec.required_delay_ns.is_some() {
                self.stats.packets_written += w.end_seg - w.first_seg;
            }
            self.next_frame += 1;
            write(bytes);
        }
        Some(self.frame_at(self.next_frame))
    }

    /// The transport's in-order point reached `in_order_seg` at `now`.
    pub fn on_delivery(&mut self, now: Nanos, in_order_seg: u64) {
        let deadline = self.spec.deadline_ns;
        let stats = &mut self.stats;
        if let Some(required) = self.spec.required_delay_ns {
            self.log.newly_in_order(in_order_seg, |w, segments| {
                let delay = now - w.at;
                for _ in 0..segments {
                    stats.packet_delay.record(delay);
                }
                stats.packets_delivered += segments;
                if delay > required {
                    stats.packets_late += segments;
                }
            });
        }
        self.log.advance(in_order_seg, |w| {
            let delay = now - w.at;
            stats.delay.record(delay);
            stats.delivered += 1;
            if delay > deadline {
                stats.late += 1;
            }
        });
    }

    /// With a `required_delay`: segments written and not delivered whose required delay has
    /// passed at `now` (0 without one).
    pub fn overdue_packets(&self, now: Nanos) -> u64 {
        let Some(required) = self.spec.required_delay_ns else {
            return 0;
        };
        self.log
            .missing_segments()
            .filter(|(w, _)| w.at + required < now)
            .map(|(_, n)| n)
            .sum()
    }

    pub fn required_delay_ns(&self) -> Option<Nanos> {
        self.spec.required_delay_ns
    }

    /// Frames written and not delivered whose deadline has passed at `now`.
    pub fn overdue(&self, now: Nanos) -> u64 {
        let deadline = self.spec.deadline_ns;
        self.log.pending().filter(|w| w.at + deadline < now).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(gop: u32, i_to_p: f64, frame_jitter: f64) -> VideoSpec {
        VideoSpec {
            fps: 25.0,
            bitrate_bps: 2_000_000,
            gop,
            i_to_p,
            frame_jitter,
            deadline_ns: 150_000_000,
            required_delay_ns: None,
        }
    }

    #[test]
    fn the_gop_pattern_gives_the_hand_computed_frame_sizes() {
        // 2 Mbit/s at 25 frames/s: a mean frame of 10 000 B. GOP 10 with I = 4·P: a GOP holds
        // 4P + 9P = 13P = 100 000 B, so P = 7692.3 B and I = 30 769.2 B.
        let mut v = VideoSource::new(spec(10, 4.0, 0.0), None, Stream::new(1, "t"));
        let sizes: Vec<u64> = (0..20).map(|k| v.frame_bytes(k)).collect();
        assert_eq!(sizes[0], 30_769);
        assert_eq!(sizes[10], 30_769);
        assert!(sizes
            .iter()
            .enumerate()
            .all(|(k, &b)| k % 10 == 0 || b == 7_692));
        let gop_bytes: u64 = sizes[..10].iter().sum();
        assert!((gop_bytes as i64 - 100_000).abs() <= 5, "{gop_bytes}");
    }

    #[test]
    fn frames_are_written_every_frame_interval_from_the_start() {
        let mut v = VideoSource::new(spec(10, 4.0, 0.0), None, Stream::new(1, "t"));
        let mut written = Vec::new();
        let mut at = v.start(1_000).unwrap();
        for _ in 0..3 {
            at = v
                .on_wake(at, &mut |b| written.push(b))
                .expect("an endless source");
        }
        assert_eq!(written.len(), 3);
        assert_eq!(at, 1_000 + 3 * 40_000_000, "25 frames/s: one every 40 ms");
        let pending: Vec<Nanos> = v.log.pending().map(|w| w.at).collect();
        assert_eq!(pending, [1_000, 40_001_000, 80_001_000]);
    }

    #[test]
    fn jitter_keeps_sizes_within_the_band_and_the_mean() {
        let mut v = VideoSource::new(spec(1, 1.0, 0.5), None, Stream::new(7, "t"));
        let sizes: Vec<u64> = (0..10_000).map(|k| v.frame_bytes(k)).collect();
        assert!(sizes.iter().all(|&b| (5_000..=15_000).contains(&b)));
        let mean = sizes.iter().sum::<u64>() as f64 / sizes.len() as f64;
        assert!((mean - 10_000.0).abs() < 100.0, "{mean}");
    }

    #[test]
    fn a_size_limit_stops_the_source_before_the_frame_that_would_cross_it() {
        // GOP 1: every frame 10 000 B; 25 000 B hold two frames.
        let mut v = VideoSource::new(spec(1, 1.0, 0.0), Some(25_000), Stream::new(1, "t"));
        let mut n = 0;
        let mut at = v.start(0);
        while let Some(t) = at {
            at = v.on_wake(t, &mut |_| n += 1);
        }
        assert_eq!((n, v.log.written_bytes), (2, 20_000));
    }

    #[test]
    fn late_and_overdue_frames_are_deadline_misses() {
        let mut v = VideoSource::new(spec(1, 1.0, 0.0), None, Stream::new(1, "t"));
        let at = v.start(0).unwrap();
        v.on_wake(at, &mut |_| {});
        v.on_wake(40_000_000, &mut |_| {});
        // Frame 0 (7 segments) delivered after 100 ms: on time. Frame 1 is still in flight at
        // 200 ms, 160 ms after its write: overdue.
        v.on_delivery(100_000_000, 7);
        assert_eq!((v.stats.delivered, v.stats.late), (1, 0));
        assert_eq!(v.overdue(200_000_000), 1);
        // It arrives at 250 ms: late (210 ms), no longer overdue.
        v.on_delivery(250_000_000, 14);
        assert_eq!((v.stats.delivered, v.stats.late), (2, 1));
        assert_eq!(v.overdue(250_000_000), 0);
        assert_eq!(v.stats.delay.max(), Some(210_000_000));
    }

    #[test]
    fn with_a_required_delay_every_packet_is_followed() {
        let mut s = spec(1, 1.0, 0.0);
        s.required_delay_ns = Some(100_000_000);
        let mut v = VideoSource::new(s, None, Stream::new(1, "t"));
        let at = v.start(0).unwrap();
        v.on_wake(at, &mut |_| {}); // frame 0: segments 0..7 at 0
        v.on_wake(40_000_000, &mut |_| {}); // frame 1: segments 7..14 at 40 ms
        assert_eq!(v.stats.packets_written, 14);
        // 10 segments in order at 90 ms: frame 0's 7 (90 ms) and frame 1's first 3 (50 ms).
        v.on_delivery(90_000_000, 10);
        assert_eq!((v.stats.packets_delivered, v.stats.packets_late), (10, 0));
        assert_eq!(v.stats.packet_delay.max(), Some(90_000_000));
        // At 150 ms frame 1's 4 missing segments are overdue (written at 40 ms, 110 ms ago).
        assert_eq!(v.overdue_packets(150_000_000), 4);
        assert_eq!(v.overdue_packets(139_000_000), 0);
        // They arrive at 160 ms: 120 ms after their write, late; no longer overdue.
        v.on_delivery(160_000_000, 14);
        assert_eq!((v.stats.packets_delivered, v.stats.packets_late), (14, 4));
        assert_eq!(v.overdue_packets(160_000_000), 0);
        assert_eq!(v.stats.packet_delay.count(), 14);
    }
}
