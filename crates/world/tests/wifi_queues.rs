//! A WiFi cell's EDCA access categories, its AP queues (DropTail or CoDel) and its counters in
//! whole runs.

use crate::common;

use common::run;
use rove_sim::link::wifi::counters::RadioTotals;
use rove_world::World;

/// The cell's counter totals.
fn totals(w: &World, link: usize) -> RadioTotals {
    w.links[link].radio().expect("a wifi cell").radio_totals()
}

/// Frames delivered from port `name`.
fn delivered(t: &RadioTotals, name: &str) -> u64 {
    t.ports.iter().find(|p| p.0 == name).unwrap().1.tx_packets
}

/// Two saturated stations sending uplink (60 Mbit/s of 1500-byte CBR each at 54 Mbit/s),
/// one in access category `a`, one in `b`.
fn two_acs(a: &str, b: &str, duration: &str) -> String {
    format!(
        r#"
duration = "{duration}"
[links.air]
kind = "wifi"
mcs = 7
edca = true
[links.air.stations.a]
snr = "30dB"
ac = "{a}"
[links.air.stations.b]
snr = "30dB"
ac = "{b}"
[[flows]]
name = "a"
workload = "cbr"
rate = "60Mbps"
path = ["air:a:up"]
[[flows]]
name = "b"
workload = "cbr"
rate = "60Mbps"
path = ["air:b:up"]
"#
    )
}

/// EDCA, one VO and one BE station, both saturated with equal frames: the share of the
/// delivered frames (= of the airtime of successful frames) each gets.
///
/// The expected shares follow from the standard's rules alone (10.22.2, Table 9-155), played
/// over abstract idle slots with no PHY: after every busy period VO counts its backoff from
/// AIFS[VO] = DIFS (AIFSN 2), BE from AIFS[BE] = DIFS + 1 slot (AIFSN 3); VO draws from
/// [0, 3] (CW 3..7), BE from [0, 15] (CW 15..1023); the loser of a round keeps its residual
/// counter (decremented by the idle slots it saw after its AIFS), a collision doubles both
/// CWs, the retry limit is 7. BE transmits only when its residual is within one slot of
/// VO's fresh draw (e.g. r = 0 against v >= 2), which VO's mean decrement of
/// E[max(0, v - 1)] = 0.75 slot per round makes rare. Three Monte Carlo runs of 2,000,000
/// rounds each of those rules (a 30-line Python loop) give BE 0.523 %, 0.520 %, 0.513 % of
/// the successes (VO 99.48 %), 0.96 % of rounds colliding. Without the AIFS difference (BE at
/// AIFSN 2) BE would get 3.3 %, so the test tells the AIFS apart from the CW.
/// VI (CW 7..15, AIFSN 2) against BE: 85.0 % / 15.0 % by the same rules.
///
/// Measured (seed 1): VO 99.48 % / BE 0.52 % (1,530 of 291,511 frames in 100 s; BE's share
/// varies ~14 % between 20-s runs of the abstract rules, hence 100 s and a 20 % band);
/// VI 85.22 % / BE 14.78 % (7,865 of 53,228 frames in 20 s).
#[test]
fn edca_shares_follow_aifs_and_cw() {
    for (hi, lo, duration, expected_lo, tolerance) in [
        ("vo", "be", "100s", 0.0052, 0.2),
        ("vi", "be", "20s", 0.150, 0.05),
    ] {
        let (w, _) = run(&two_acs(hi, lo, duration));
        let t = totals(&w, 0);
        let (a, b) = (delivered(&t, "a:up") as f64, delivered(&t, "b:up") as f64);
        let share = b / (a + b);
        eprintln!(
            "{hi} vs {lo}: {hi} {:.2} % {lo} {:.2} % ({b} of {} frames)",
            100.0 * (1.0 - share),
            100.0 * share,
            a + b
        );
        assert!(
            (share / expected_lo - 1.0).abs() < tolerance,
            "{lo}'s share {share:.4}, expected {expected_lo} within {tolerance}"
        );
    }
}

/// Under the DCF (no `edca`) two saturated stations share equally (the control for the test
/// above). Measured: 49.99 % / 50.01 %.
#[test]
fn without_edca_two_stations_share_equally() {
    let text = two_acs("be", "be", "20s")
        .replace("edca = true\n", "")
        .replace("ac = \"be\"\n", "");
    let (w, _) = run(&text);
    let t = totals(&w, 0);
    let (a, b) = (delivered(&t, "a:up") as f64, delivered(&t, "b:up") as f64);
    let share = b / (a + b);
    eprintln!(
        "dcf: {:.2} % / {:.2} %",
        100.0 * (1.0 - share),
        100.0 * share
    );
    assert!((share - 0.5).abs() < 0.02, "{share}");
    assert!(t.ports.iter().all(|p| p.1.internal_collisions == 0));
}

/// A CUBIC download through the AP's queue to one station (1000-packet buffer, 20 ms WAN
/// each way): DropTail lets CUBIC fill the buffer, CoDel (`aqm = "codel"`, mac80211's 20 ms
/// target and 100 ms interval) keeps the queueing delay near its target.
/// Measured (5-30 s): DropTail mean queueing delay 259.7 ms (87 overflow drops), 23.53
/// Mbit/s; CoDel mean 10.2 ms (12 CoDel drops, no overflow), 24.13 Mbit/s.
#[test]
fn codel_on_the_ap_queue_keeps_cubic_near_the_target() {
    let scenario = |aqm: &str| {
        format!(
            r#"
duration = "30s"
measure = ["5s", "30s"]
[links.air]
kind = "wifi"
mcs = 7
buffer = "1000pkt"
{aqm}
[links.air.stations.s1]
snr = "30dB"
[links.wan]
rate = "1Gbps"
delay = "20ms"
[links.wan_up]
rate = "1Gbps"
delay = "20ms"
[[flows]]
name = "down"
cc = "cubic"
path = ["wan", "air:s1"]
ack_path = ["air:s1:up", "wan_up"]
"#
        )
    };
    let (w_dt, s_dt) = run(&scenario(""));
    let (w_cd, s_cd) = run(&scenario("aqm = \"codel\""));
    let q = |s: &rove_world::Summary| s.links[0].queue_delay.mean_queue_delay_ms.unwrap();
    let (dt, cd) = (q(&s_dt), q(&s_cd));
    let t_dt = totals(&w_dt, 0);
    let t_cd = totals(&w_cd, 0);
    let down = |t: &RadioTotals| t.ports[0].1;
    eprintln!(
        "droptail: mean queue {dt:.1} ms, overflow {} codel {}; codel: mean queue {cd:.1} ms, overflow {} codel {}; goodput {:.2} / {:.2} Mbit/s",
        down(&t_dt).overflow_drops,
        down(&t_dt).codel_drops,
        down(&t_cd).overflow_drops,
        down(&t_cd).codel_drops,
        s_dt.flows[0].goodput_mbps,
        s_cd.flows[0].goodput_mbps,
    );
    assert!(dt > 150.0, "DropTail fills the buffer: {dt:.1} ms");
    assert!(
        cd < 40.0 && cd > 5.0,
        "CoDel keeps the delay near 20 ms: {cd:.1} ms"
    );
    assert!(down(&t_cd).codel_drops > 0);
    assert_eq!(down(&t_dt).codel_drops, 0);
    // CoDel's drops are queue drops of their own cause, never MAC drops (the link's
    // counters over the whole run; the summary's are over the measurement window).
    assert_eq!(
        w_cd.links[0].stats().queue_drops,
        down(&t_cd).overflow_drops + down(&t_cd).codel_drops
    );
}

/// Collisions past a retry limit of 1 among 20 Poisson stations: the MAC drops show in the
/// counters as `mac_drops` (per port and in total), never as overflow or CoDel drops; the
/// summary's radio totals equal the recorder's last rows. Measured: 932 MAC drops over 40
/// ports, 0 queue drops.
#[test]
fn a_mac_drop_shows_with_its_cause_and_not_as_a_queue_drop() {
    let mut text = String::from(
        "duration = \"10s\"\n[links.air]\nkind = \"wifi\"\nmcs = 7\nretry_limit = 1\nsample_interval = \"4ms\"\n",
    );
    for i in 0..20 {
        text += &format!("[links.air.stations.s{i}]\nsnr = \"30dB\"\n");
    }
    for i in 0..20 {
        text += &format!(
            "[[flows]]\nname = \"s{i}\"\nworkload = \"poisson\"\nrate = \"1Mbps\"\npath = [\"air:s{i}:up\"]\n"
        );
    }
    let mut w = common::world(&text);
    w.run();
    w.finish_radio();
    let s = rove_world::summarize(&w);
    let stats = w.links[0].stats().clone();
    let radio = s.links[0].radio.as_ref().unwrap();
    eprintln!(
        "mac drops {} (link {}), overflow {}, codel {}",
        radio.mac_drops, stats.mac_drops, radio.overflow_drops, radio.codel_drops
    );
    assert!(radio.mac_drops > 100);
    assert_eq!(radio.mac_drops, stats.mac_drops);
    assert_eq!((radio.overflow_drops, radio.codel_drops), (0, 0));
    assert_eq!(s.links[0].queue_drops, 0);
    // 4 ms sampling: 2,500 samples of 40 ports, the last at 10 s.
    let r = &w.recorder.radio;
    assert_eq!(r.len(), 2500 * 40);
    assert!((r.time_s[40] - r.time_s[0] - 0.004).abs() < 1e-12);
    let last = r.len() - 40..r.len();
    assert!(last.clone().all(|i| r.time_s[i] == 10.0));
    let mac: u64 = last.clone().map(|i| r.mac_drops[i]).sum();
    assert_eq!(mac, radio.mac_drops);
    for (k, i) in last.enumerate() {
        assert_eq!(r.tx_packets[i], radio.ports[k].tx_packets);
        assert_eq!(r.mac_drops[i], radio.ports[k].mac_drops);
        assert_eq!(r.survey_busy_ms[i], radio.survey_busy_ms);
    }
    // Every station's own frames: the survey's rx time; the AP sent only Acks.
    assert!(radio.survey_rx_ms > radio.survey_tx_ms);
    assert!(radio.survey_busy_ms <= 10_000.0);
}

/// The AP's scheduler with a fast (MCS 7, 54 Mbit/s) and a slow (MCS 0, 6 Mbit/s) station, both
/// saturated downlink (60 Mbit/s of 1500-byte CBR each; only the AP transmits, so no
/// collisions and a mean backoff of 7.5 slots after each frame).
///
/// Hand computation (802.11a; a 1500-byte packet is a 1536-byte PSDU): at MCS 7 the data frame
/// takes 248 µs and a cycle 248 + SIFS 16 + Ack 28 + DIFS 34 + 67.5 = 393.5 µs; at MCS 0 the
/// frame takes 20 + 4·⌈(16 + 8·1536 + 6)/24⌉ = 2072 µs, its Ack (6 Mbit/s) 44 µs, a cycle
/// 2072 + 16 + 44 + 34 + 67.5 = 2233.5 µs.
/// - Round robin (a frame each in turn): each station 12000 bits per 393.5 + 2233.5 µs =
///   4.568 Mbit/s.
/// - Airtime fairness (mac80211's deficits charged with each PPDU's air time): equal data
///   air time, n_fast · 248 = n_slow · 2072, so 8.355 fast frames per slow one in
///   8.355 · 393.5 + 2233.5 = 5521 µs: fast 18.16 Mbit/s, slow 2.174 Mbit/s.
///
/// Measured (20 s): round robin 4.568 / 4.568 Mbit/s; airtime 18.152 / 2.173 Mbit/s.
#[test]
fn the_airtime_scheduler_gives_stations_equal_airtime_and_round_robin_equal_frames() {
    let scenario = |scheduler: &str| {
        format!(
            r#"
duration = "20s"
[links.air]
kind = "wifi"
{scheduler}
[links.air.stations.fast]
mcs = 7
[links.air.stations.slow]
mcs = 0
[[flows]]
name = "fast"
workload = "cbr"
rate = "60Mbps"
path = ["air:fast"]
[[flows]]
name = "slow"
workload = "cbr"
rate = "60Mbps"
path = ["air:slow"]
"#
        )
    };
    for (scheduler, fast, slow) in [
        ("", 4.568, 4.568),
        ("scheduler = \"airtime\"", 18.16, 2.174),
    ] {
        let (w, _) = run(&scenario(scheduler));
        let t = totals(&w, 0);
        let mbps = |port: &str| {
            t.ports.iter().find(|p| p.0 == port).unwrap().1.tx_bytes as f64 * 8.0 / 20.0 / 1e6
        };
        let (f, s) = (mbps("fast"), mbps("slow"));
        eprintln!("{scheduler:?}: fast {f:.3} slow {s:.3} Mbit/s (hand {fast} / {slow})");
        assert!((f / fast - 1.0).abs() < 0.02, "fast {f:.3}, hand {fast}");
        assert!((s / slow - 1.0).abs() < 0.02, "slow {s:.3}, hand {slow}");
    }
}
