//! `workload = "video"`: a VBR video source (seed 003's H.264 video, synthesised as the seed's
//! reproduction notes suggest, since the Seeling–Reisslein traces are not available offline).
//!
//! Frame k is written at t₀ + k/fps, where t₀ is when the connection is established. Frames
//! repeat a group of pictures (GOP) of G = `gop` frames: one I-frame, then anchors (P-frames)
//! every b + 1 frames with b = `b_frames` B-frames between them (gop 12 with b = 2 is
//! I B B P B B P B B P B B, the "G12B2" structure of the Seeling–Reisslein H.264 traces). An
//! I-frame is r_I = `i_to_p` and a B-frame r_B = `b_to_p` times a P-frame. A GOP holds one
//! I-frame, n_P = ⌊(G − 1)/(b + 1)⌋ P-frames and n_B = G − 1 − n_P B-frames, and its frames
//! average the mean frame M = bitrate / (8·fps), so
//!
//! ```text
//!     P = G·M / (r_I + n_P + n_B·r_B),    I = r_I·P,    B = r_B·P
//! ```
//!
//! (without B-frames P = G·M/(r_I + G − 1)). Burstiness comes in three scales: within a GOP
//! (an I-frame is I/M times the mean frame), per scene (`scene_spread = s`: every `scene` of
//! time, all sizes are multiplied by a new uniform draw from [1 − s, 1 + s], so the rate of a
//! scene lies in bitrate·[1 − s, 1 + s], mean kept; a 4 Mbit/s video with s = 0.5 is seed
//! 003's "VBR, f ∈ [0, 6] Mbit/s" at its top), and per frame (`frame_jitter = j`: each size
//! times a uniform draw from [1 − j, 1 + j], mean kept). The scene draws come from a stream of
//! their own (`flow:NAME:scenes`), so turning them on leaves the frame draws as they were.
//! A frame's delay runs from its write to the in-order delivery of its last byte
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
    /// Draws of the scene factors, the current scene's index and its factor.
    scene_rng: Stream,
    scene: Option<(u64, f64)>,
    /// When frame 0 was written (the establishment), and the next frame's index.
    first_at: Nanos,
    next_frame: u64,
    pub log: WriteLog,
    pub stats: AppStats,
}

impl VideoSource {
    pub fn new(spec: VideoSpec, limit_bytes: Option<u64>, rng: Stream, scene_rng: Stream) -> Self {
        let mean = spec.bitrate_bps as f64 / 8.0 / spec.fps;
        let g = spec.gop as f64;
        let (_, b_frames) = gop_counts(spec.gop, spec.b_frames);
        // r_I + n_P + n_B·r_B written as r_I + G − 1 + n_B·(r_B − 1): without B-frames the
        // same number, to the bit, as before B-frames existed.
        let weights = spec.i_to_p + g - 1.0 + b_frames as f64 * (spec.b_to_p - 1.0);
        VideoSource {
            p_frame_bytes: g * mean / weights,
            spec,
            limit_bytes,
            rng,
            scene_rng,
            scene: None,
            first_at: 0,
            next_frame: 0,
            log: WriteLog::default(),
            stats: AppStats::default(),
        }
    }

    pub fn deadline_ns(&self) -> Nanos {
        self.spec.deadline_ns
    }

    /// Size of frame `k` before the scene factor and jitter: an I-frame at the start of each
    /// GOP, a P-frame every `b_frames + 1` frames after it, B-frames between.
    pub fn nominal_frame_bytes(&self, k: u64) -> f64 {
        let in_gop = k % self.spec.gop as u64;
        if in_gop == 0 {
            self.spec.i_to_p * self.p_frame_bytes
        } else if in_gop.is_multiple_of(self.spec.b_frames as u64 + 1) {
            self.p_frame_bytes
        } else {
            self.spec.b_to_p * self.p_frame_bytes
        }
    }

    /// The scene factor of frame `k` (1 without `scene_spread`): a new uniform draw from
    /// [1 − s, 1 + s] for the first frame written in each scene of `scene_ns`.
    fn scene_factor(&mut self, k: u64) -> f64 {
        let s = self.spec.scene_spread;
        if s == 0.0 {
            return 1.0;
        }
        let at = self.frame_at(k) - self.first_at;
        let index = at / self.spec.scene_ns;
        match self.scene {
            Some((i, f)) if i == index => f,
            _ => {
                let f = 1.0 + s * (2.0 * self.scene_rng.uniform() - 1.0);
                self.scene = Some((index, f));
                f
            }
        }
    }

    fn frame_bytes(&mut self, k: u64) -> u64 {
        let mut b = self.nominal_frame_bytes(k);
        if self.spec.scene_spread > 0.0 {
            b *= self.scene_factor(k);
        }
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

/// P- and B-frames in a GOP of `gop` frames with `b_frames` B-frames between anchors:
/// n_P = ⌊(G − 1)/(b + 1)⌋, n_B = G − 1 − n_P.
pub fn gop_counts(gop: u32, b_frames: u32) -> (u32, u32) {
    let p = (gop - 1) / (b_frames + 1);
    (p, gop - 1 - p)
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
            b_frames: 0,
            b_to_p: 0.5,
            scene_spread: 0.0,
            scene_ns: 5 * NS_PER_S,
            frame_jitter,
            deadline_ns: 150_000_000,
            required_delay_ns: None,
        }
    }

    #[test]
    fn the_gop_pattern_gives_the_hand_computed_frame_sizes() {
        // 2 Mbit/s at 25 frames/s: a mean frame of 10 000 B. GOP 10 with I = 4·P: a GOP holds
        // 4P + 9P = 13P = 100 000 B, so P = 7692.3 B and I = 30 769.2 B.
        let mut v = VideoSource::new(
            spec(10, 4.0, 0.0),
            None,
            Stream::new(1, "t"),
            Stream::new(1, "s"),
        );
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
    fn b_frames_follow_the_g12b2_pattern_with_the_hand_computed_sizes() {
        // 2 Mbit/s at 25 frames/s: M = 10 000 B. I B B P B B P B B P B B: n_P = 3, n_B = 8;
        // with I = 5P and B = P/2 a GOP holds 5P + 3P + 4P = 12P = 120 000 B, so P = 10 000 B,
        // I = 50 000 B, B = 5 000 B.
        assert_eq!(gop_counts(12, 2), (3, 8));
        let mut s = spec(12, 5.0, 0.0);
        s.b_frames = 2;
        let mut v = VideoSource::new(s, None, Stream::new(1, "t"), Stream::new(1, "s"));
        let sizes: Vec<u64> = (0..24).map(|k| v.frame_bytes(k)).collect();
        let expected: Vec<u64> = (0..24)
            .map(|k| match k % 12 {
                0 => 50_000,
                3 | 6 | 9 => 10_000,
                _ => 5_000,
            })
            .collect();
        assert_eq!(sizes, expected);
        assert_eq!(sizes[..12].iter().sum::<u64>(), 120_000);
    }

    #[test]
    fn without_b_frames_the_p_frame_is_the_earlier_formula_to_the_bit() {
        let v = VideoSource::new(
            spec(12, 5.0, 0.0),
            None,
            Stream::new(1, "t"),
            Stream::new(1, "s"),
        );
        let mean = 2_000_000.0 / 8.0 / 25.0;
        assert_eq!(v.p_frame_bytes, 12.0 * mean / (5.0 + 12.0 - 1.0));
    }

    #[test]
    fn a_scene_scales_every_frame_of_it_by_one_draw_in_the_band_keeping_the_mean() {
        // GOP 1 (all frames 10 000 B), scenes of 1 s = 25 frames, spread 0.5.
        let mut s = spec(1, 1.0, 0.0);
        s.scene_spread = 0.5;
        s.scene_ns = NS_PER_S;
        let mut v = VideoSource::new(s, None, Stream::new(3, "t"), Stream::new(3, "s"));
        let sizes: Vec<u64> = (0..25 * 2000).map(|k| v.frame_bytes(k)).collect();
        for scene in sizes.chunks(25) {
            assert!(scene.iter().all(|&b| b == scene[0]), "one factor per scene");
            assert!((5_000..=15_000).contains(&scene[0]), "{}", scene[0]);
        }
        assert_ne!(sizes[0], sizes[25], "a new draw for the next scene");
        let mean = sizes.iter().sum::<u64>() as f64 / sizes.len() as f64;
        // 2000 uniform draws of sd 0.5/√3: the mean's sd is 0.0065, so 1 % is 1.5 sd.
        assert!((mean - 10_000.0).abs() < 150.0, "{mean}");
        // The frame draws are another stream's: with jitter too, each frame's size over its
        // scene's factor is the jitter-only source's size.
        let mut jit = spec(1, 1.0, 0.2);
        let mut alone = VideoSource::new(jit, None, Stream::new(3, "t"), Stream::new(3, "s"));
        jit.scene_spread = 0.5;
        jit.scene_ns = NS_PER_S;
        let mut both = VideoSource::new(jit, None, Stream::new(3, "t"), Stream::new(3, "s"));
        for k in 0..100 {
            let (a, b) = (alone.frame_bytes(k) as f64, both.frame_bytes(k) as f64);
            let f = sizes[k as usize] as f64 / 10_000.0;
            // Three roundings to whole bytes: at most 0.5 + 0.5·f + a·0.5e-4 < 2.5 B.
            assert!((b - a * f).abs() < 2.5, "frame {k}: {b} vs {a}·{f}");
        }
    }

    #[test]
    fn frames_are_written_every_frame_interval_from_the_start() {
        let mut v = VideoSource::new(
            spec(10, 4.0, 0.0),
            None,
            Stream::new(1, "t"),
            Stream::new(1, "s"),
        );
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
        let mut v = VideoSource::new(
            spec(1, 1.0, 0.5),
            None,
            Stream::new(7, "t"),
            Stream::new(7, "s"),
        );
        let sizes: Vec<u64> = (0..10_000).map(|k| v.frame_bytes(k)).collect();
        assert!(sizes.iter().all(|&b| (5_000..=15_000).contains(&b)));
        let mean = sizes.iter().sum::<u64>() as f64 / sizes.len() as f64;
        assert!((mean - 10_000.0).abs() < 100.0, "{mean}");
    }

    #[test]
    fn a_size_limit_stops_the_source_before_the_frame_that_would_cross_it() {
        // GOP 1: every frame 10 000 B; 25 000 B hold two frames.
        let mut v = VideoSource::new(
            spec(1, 1.0, 0.0),
            Some(25_000),
            Stream::new(1, "t"),
            Stream::new(1, "s"),
        );
        let mut n = 0;
        let mut at = v.start(0);
        while let Some(t) = at {
            at = v.on_wake(t, &mut |_| n += 1);
        }
        assert_eq!((n, v.log.written_bytes), (2, 20_000));
    }

    #[test]
    fn late_and_overdue_frames_are_deadline_misses() {
        let mut v = VideoSource::new(
            spec(1, 1.0, 0.0),
            None,
            Stream::new(1, "t"),
            Stream::new(1, "s"),
        );
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
        let mut v = VideoSource::new(s, None, Stream::new(1, "t"), Stream::new(1, "s"));
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
