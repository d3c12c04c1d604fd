//! `workload = "video"` (issue 10): frames written at the frame rate reach the application
//! after one-way delay plus serialisation when the path has room, and miss their deadline more
//! and more when it does not.

use crate::common;

use common::{run, run_logged, world};
use rove_world::summary::VideoSummary;

/// One 20 ms round trip: `down` at `rate` (10 ms), `up` at 100 Mbit/s (10 ms).
fn video_over(rate: &str, duration: &str, video: &str) -> String {
    format!(
        r#"duration = "{duration}"
[links.down]
rate = "{rate}"
delay = "10ms"
buffer = "1000pkt"
[links.up]
rate = "100Mbps"
delay = "10ms"
[[flows]]
name = "v"
cc = "reno"
workload = "video"
path = ["down"]
ack_path = ["up"]
{video}
"#
    )
}

/// 1 Mbit/s at 25 frames/s: a mean frame of 5000 B. GOP 10 with I = 2·P: 11 P per GOP, so
/// P = 50 000 / 11 = 4545 B (4 segments) and I = 9091 B (7 segments), both within the
/// initial window of 10.
const SMALL_FRAMES: &str = "bitrate = \"1Mbps\"\nfps = 25\ngop = 10\ni_to_p = 2";

fn video(s: &rove_world::Summary) -> &VideoSummary {
    s.flows[0].video.as_ref().expect("a video flow's summary")
}

#[test]
fn with_room_every_frame_arrives_after_one_way_delay_plus_serialisation() {
    let (_, s) = run(&video_over("100Mbps", "5s", SMALL_FRAMES));
    let v = video(&s);
    // The connection is established at 20.0096 ms (a 60-byte SYN and SYN-ACK each way); frames
    // follow every 40 ms while before 5 s: k = 0 .. 124.
    assert_eq!((v.frames_sent, v.frames_delivered), (125, 125));
    assert_eq!((v.deadline_misses, v.deadline_miss_ratio), (0, Some(0.0)));
    // A frame leaves in one burst into an idle link: it arrives 10 ms plus its wire bytes (payload
    // and 52 header bytes per segment) at 100 Mbit/s after it is written.
    // P: 4545 + 4·52 = 4753 B → 0.38024 ms; I: 9091 + 7·52 = 9455 B → 0.7564 ms.
    let max = v.frame_delay_max_ms.unwrap();
    assert!((max - 10.7564).abs() < 1e-9, "{max}");
    let p50 = v.frame_delay_p50_ms.unwrap();
    assert!((p50 - 10.38024).abs() < 10.38024 * 0.005, "{p50}");
    // 13 I-frames (k = 0, 10, ..., 120) and 112 P-frames, every byte in order.
    assert_eq!(s.flows[0].bytes_delivered, 13 * 9091 + 112 * 4545);
    assert_eq!(s.flows[0].retrans_rate, 0.0);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

/// seed 003's per-packet application delay (`required_delay`): each segment from its frame's
/// write to its own in-order delivery. The frames of `SMALL_FRAMES` leave in one burst into the
/// idle 100-Mbit/s link: segment k of a frame arrives after 10 ms plus k full segments' 1500
/// wire bytes (0.12 ms each), the short last one sooner. With d_req = 10.3 ms the first two
/// segments of every frame are in time (10.12, 10.24 ms), the others not (10.36 ms and later).
#[test]
fn with_a_required_delay_every_packet_of_a_frame_is_followed() {
    let (_, s) = run(&video_over(
        "100Mbps",
        "5s",
        &format!("{SMALL_FRAMES}\nrequired_delay = \"10.3ms\""),
    ));
    let p = video(&s).packets.as_ref().expect("required_delay given");
    // 13 I-frames of 7 segments, 112 P-frames of 4.
    assert_eq!((p.packets_sent, p.packets_delivered), (539, 539));
    assert_eq!(p.required_delay_ms, 10.3);
    assert_eq!(p.packets_within_required_delay, Some(250.0 / 539.0));
    // Ranks 251 to 375 (the third segments) are 10.36 ms: the median.
    let p50 = p.packet_delay_p50_ms.unwrap();
    assert!((p50 - 10.36).abs() < 10.36 * 0.005, "{p50}");
    // Without it no packet keys appear.
    let (_, plain) = run(&video_over("100Mbps", "1s", SMALL_FRAMES));
    assert!(video(&plain).packets.is_none());
    let json = serde_json::to_string(&plain).unwrap();
    assert!(!json.contains("packet"), "{json}");
}

#[test]
fn on_a_link_slower_than_the_video_the_deadline_miss_ratio_grows() {
    // 2 Mbit/s of video (2.07 Mbit/s on the wire with headers).
    let hd = "bitrate = \"2Mbps\"\nfps = 25\ngop = 10\ni_to_p = 4\ndeadline = \"150ms\"";
    let ratio = |rate: &str, duration: &str| {
        let (_, s) = run(&video_over(rate, duration, hd));
        video(&s).deadline_miss_ratio.unwrap()
    };
    // Twice the rate it needs: an I-frame (30 769 B, 22 segments) takes ~64 ms to serialise.
    assert_eq!(ratio("4Mbps", "10s"), 0.0);
    // Slower than the video: the backlog, and every frame's delay, grows without bound.
    let slow_5s = ratio("1.9Mbps", "5s");
    let slow_10s = ratio("1.9Mbps", "10s");
    let slower_10s = ratio("1Mbps", "10s");
    assert!(
        0.0 < slow_5s && slow_5s < slow_10s && slow_10s < slower_10s,
        "{slow_5s} {slow_10s} {slower_10s}"
    );
    assert!(slower_10s > 0.8, "{slower_10s}");
}

#[test]
fn a_size_limit_stops_the_video_and_every_frame_is_delivered() {
    // GOP 1, I/P 1: every frame 5000 B; 52 KB hold 10 frames.
    let (_, s) = run(&video_over(
        "100Mbps",
        "2s",
        "bitrate = \"1Mbps\"\nfps = 25\ngop = 1\ni_to_p = 1\nsize = \"52KB\"",
    ));
    let v = video(&s);
    assert_eq!((v.frames_sent, v.frames_delivered), (10, 10));
    assert_eq!(s.flows[0].bytes_delivered, 50_000);
}

#[test]
fn a_multipath_video_delivers_every_frame_once_and_in_order() {
    let toml = r#"duration = "5s"
[links.wifi]
rate = "20Mbps"
delay = "10ms"
[links.wifi_up]
rate = "20Mbps"
delay = "10ms"
[links.lte]
rate = "20Mbps"
delay = "30ms"
[links.lte_up]
rate = "20Mbps"
delay = "30ms"
[[flows]]
name = "v"
cc = "cubic"
workload = "video"
bitrate = "8Mbps"
fps = 30
deadline = "200ms"
paths = [{path = ["wifi"], ack_path = ["wifi_up"]}, {path = ["lte"], ack_path = ["lte_up"]}]
"#;
    let (w, s) = run_logged(world(toml));
    let v = video(&s);
    // Established at 20 ms; a frame every 33.3 ms while before 5 s: k = 0 .. 149.
    assert_eq!(v.frames_sent, 150);
    assert!(v.frames_delivered >= 148, "{}", v.frames_delivered);
    assert_eq!(v.deadline_misses, 0, "{v:?}");
    let c = w.flows[0].transport.connection().unwrap();
    let log = c.reorder.delivery_log.as_deref().unwrap();
    assert!(log.iter().enumerate().all(|(i, &d)| d == i as u64));
    assert_eq!(c.reorder.duplicate_segs, 0);
    // The application's byte count (whole frames and the full segments of the one in
    // progress) is the reordering buffer's.
    assert_eq!(s.flows[0].bytes_delivered, c.reorder.bytes_delivered);
}
