//! MPTCP-TSC (`scheduler = "tsc"`, seed 003 Ch. 2) on the dissertation's Ch. 2 setting (§2.5):
//! a WiFi path of 3 Mbit/s at cost 1 and an LTE path of 15 Mbit/s (in its 10–20) at cost 10
//! per Mbit/s, carrying a VBR video of 4 Mbit/s (its f ∈ [0, 6] Mbit/s, above c_wifi as its
//! footnote asks), against minRTT, Linux's default scheduler, with uncoupled Reno.
//!
//! The dissertation does not give its paths' delays, buffers or the video trace ([UNSPECIFIED]
//! in seed-003 §2.5). Here: round trips of 20 ms (WiFi) and 40 ms (LTE; "the LTE RTT is always
//! 40 ms"), buffers of the sizes its Ch. 3 measured (Table 3.2: 0.72–0.78 MB on WiFi, 6.9–7.6 MB
//! on LTE), the video at 30 frames/s with rove's GOP defaults and sizes scattered by ±50 %, and
//! d_req = d_thr^net + d_thr^send, the largest (2.11) allows. 60 s per run.

use crate::common;

use common::run;
use rove_world::{Summary, World};

/// WiFi (subflow 0, cost 1) and LTE (subflow 1, cost 10) carrying the video.
fn ch2(scheduler: &str, params: &str, required_delay_ms: f64) -> String {
    format!(
        r#"duration = "60s"
[links.wifi]
rate = "3Mbps"
delay = "10ms"
buffer = "750KB"
[links.wifi_up]
rate = "20Mbps"
delay = "10ms"
[links.lte]
rate = "15Mbps"
delay = "20ms"
buffer = "7MB"
[links.lte_up]
rate = "20Mbps"
delay = "20ms"
[[flows]]
name = "v"
cc = "reno"
workload = "video"
bitrate = "4Mbps"
fps = 30
frame_jitter = 0.5
required_delay = "{required_delay_ms}ms"
paths = [{{ path = ["wifi"], ack_path = ["wifi_up"], cost = 1 }}, {{ path = ["lte"], ack_path = ["lte_up"], cost = 10 }}]
scheduler = "{scheduler}"
scheduler_params = {{ {params} }}
"#
    )
}

/// What a run shows.
#[derive(Debug)]
struct Outcome {
    goodput_mbps: f64,
    cost: f64,
    /// Packets within d_req.
    within: f64,
    /// WiFi RTT samples below 2·d_thr^net.
    wifi_rtt_below: f64,
}

/// The share of subflow `j`'s RTT samples below `ms` (within the histogram's 0.5 %).
fn rtt_share_below(w: &World, j: usize, ms: f64) -> f64 {
    let c = w.flows[0].transport.connection().unwrap();
    let h = &c.subflows[j].sender.stats.rtt;
    (1..=1000)
        .map(|k| k as f64 / 1000.0)
        .filter(|&q| (h.quantile(q).unwrap() as f64) / 1e6 < ms)
        .last()
        .unwrap_or(0.0)
}

/// Runs `scheduler` with `params` at d_thr^net = `d_net_ms` and prints what it shows.
fn measure(scheduler: &str, params: &str, d_net_ms: f64) -> Outcome {
    let (w, s) = run(&ch2(scheduler, params, d_net_ms + 100.0));
    let o = outcome(&w, &s, d_net_ms);
    print(&format!("{scheduler} {{ {params} }}"), &s, &o, d_net_ms);
    o
}

fn outcome(w: &World, s: &Summary, d_net_ms: f64) -> Outcome {
    let f = &s.flows[0];
    let p = f.video.as_ref().unwrap().packets.as_ref().unwrap();
    Outcome {
        goodput_mbps: f.goodput_mbps,
        cost: f.multipath.as_ref().unwrap().path_cost.unwrap(),
        within: p.packets_within_required_delay.unwrap(),
        wifi_rtt_below: rtt_share_below(w, 0, 2.0 * d_net_ms),
    }
}

fn print(name: &str, s: &Summary, o: &Outcome, d_net_ms: f64) {
    let f = &s.flows[0];
    let p = f.video.as_ref().unwrap().packets.as_ref().unwrap();
    println!(
        "{name} at d_net {d_net_ms} ms: goodput {:.2} Mbit/s, cost {:.2}, packets within {} ms \
         {:.3} (delay p50 {:.0} ms, p95 {:.0} ms), WiFi RTT < {} ms {:.3}",
        o.goodput_mbps,
        o.cost,
        p.required_delay_ms,
        o.within,
        p.packet_delay_p50_ms.unwrap_or(f64::NAN),
        p.packet_delay_p95_ms.unwrap_or(f64::NAN),
        2.0 * d_net_ms,
        o.wifi_rtt_below
    );
    for sf in &f.multipath.as_ref().unwrap().subflows {
        println!(
            "    subflow {} (cost {}): {:.2} Mbit/s, RTT mean {:.0} ms p95 {:.0} ms, peak x/c {:.2}",
            sf.index,
            sf.cost.unwrap(),
            sf.throughput_mbps,
            sf.mean_rtt_ms.unwrap_or(f64::NAN),
            sf.p95_rtt_ms.unwrap_or(f64::NAN),
            sf.peak_x_over_c.unwrap_or(f64::NAN)
        );
    }
}

/// Issue 18's "done when" and Fig. 2.3: under TSC "more than 80 % of packets have RTT <
/// 2·d_thr^net" on WiFi. Measured with the defaults: 100 %, 100 %, 100 % of the WiFi RTT
/// samples at d_thr^net = 100, 200, 500 ms (the WiFi RTT's mean is 79 ms, its p95 112 ms).
#[test]
fn tsc_keeps_the_wifi_rtt_under_twice_d_net_for_most_packets() {
    for d_net in [100.0, 200.0, 500.0] {
        let o = measure("tsc", &format!("d_net_thr_ms = {d_net}"), d_net);
        assert!(o.wifi_rtt_below > 0.8, "d_net {d_net} ms: {o:?}");
    }
}

/// TSC costs less than minRTT at an equal or better share of packets within d_req
/// (d_thr^net = 100 ms, d_req = 200 ms). **Expected to fail**, measured: minRTT costs 39.5 with
/// 100.0 % of the packets in time (its WiFi srtt goes stale above LTE's after the first bursts,
/// and all the video goes over LTE, which has room for it); TSC as the dissertation prints it
/// costs 8.3 (WiFi 2.9 Mbit/s, LTE 0.5) but delivers 3.42 of the video's 3.96 Mbit/s, so its
/// send buffer grows all run: 0.5 % of the packets in time, a packet delay of 4.0 s at p50.
///
/// Cause, two parts of (2.14)–(2.17) together (the ablation is the next test):
/// * (2.16) T = f̃ + 1/d_thr^send has no term for a backlog. A frame's burst is larger than
///   the subflows' windows let them take in one 10-ms slot (x_s ≤ x^cw = cwnd/RTT), the rest of
///   T is left unallocated, and the next slot's f̃ (2.12) is the new arrivals only: what is left
///   drains at 1/d_thr^send = 10 packets/s. With a backlog term alone (T = f̃ + (1 + b)/d) the
///   backlog drains but the WiFi subflow, still in slow start, takes it without a delay bound:
///   WiFi RTT 763 ms on average, 0.9 % of the packets in time.
/// * (2.14) drops the delay bound of a subflow in slow start, and a rate-limited subflow that
///   never loses a packet never leaves slow start (cwnd < ssthresh = ∞ all run): d_thr^net
///   never binds (the runs at 100, 200 and 500 ms are identical). Without the exemption alone,
///   the backlog still grows (0.2 % in time).
#[test]
#[should_panic(expected = "within the required delay")]
fn tsc_costs_less_than_minrtt_at_an_equal_or_better_within_deadline_fraction() {
    let min_rtt = measure("minrtt", "", 100.0);
    let tsc = measure("tsc", "d_net_thr_ms = 100", 100.0);
    assert!(tsc.cost < min_rtt.cost, "cost: {tsc:?} {min_rtt:?}");
    assert!(
        tsc.within >= min_rtt.within,
        "packets within the required delay: TSC {:.3}, minRTT {:.3}",
        tsc.within,
        min_rtt.within
    );
}

/// The ablation of the expected failure above: each cause alone changed, then both. Measured:
/// with the backlog term alone 0.9 % of the packets in time, without the slow-start exemption
/// alone 0.2 %; with both, the whole video arrives (3.96 Mbit/s) and 99.6 % of the packets
/// within 200 ms, at a cost of 19.7 (WiFi 2.2 Mbit/s, LTE 1.8), half minRTT's 39.5 — still a
/// little below minRTT's 100.0 %, as an I-frame's burst waits for a budget that minRTT's
/// 15-Mbit/s LTE path does not need.
#[test]
fn with_a_backlog_term_and_no_slow_start_exemption_the_video_arrives_in_time_at_half_the_cost() {
    let min_rtt = measure("minrtt", "", 100.0);
    let backlog = measure("tsc", "backlog_term = true", 100.0);
    let bound = measure("tsc", "slow_start_exemption = false", 100.0);
    assert!(
        backlog.within < 0.05 && bound.within < 0.05,
        "{backlog:?} {bound:?}"
    );
    let both = measure(
        "tsc",
        "backlog_term = true, slow_start_exemption = false",
        100.0,
    );
    assert!(
        (both.goodput_mbps - min_rtt.goodput_mbps).abs() < 0.01 * min_rtt.goodput_mbps,
        "the whole video arrives: {both:?} {min_rtt:?}"
    );
    assert!(both.within > 0.99, "{both:?}");
    assert!(both.cost < 0.6 * min_rtt.cost, "{both:?} {min_rtt:?}");
    assert!(both.wifi_rtt_below > 0.8, "{both:?}");
}

/// The cost metrics on a case computed by hand: a 1 Mbit/s video of equal frames (5000 B, four
/// segments: 5208 B on the wire) at 25 frames/s, over two 10-Mbit/s paths of cost 2 (20-ms
/// round trip) and 3 (60 ms). minRTT sends everything on the first.
#[test]
fn the_cost_metrics_follow_their_definitions() {
    let toml = r#"duration = "5s"
[links.a]
rate = "10Mbps"
delay = "10ms"
[links.a_up]
rate = "10Mbps"
delay = "10ms"
[links.b]
rate = "10Mbps"
delay = "30ms"
[links.b_up]
rate = "10Mbps"
delay = "30ms"
[[flows]]
name = "v"
cc = "reno"
workload = "video"
bitrate = "1Mbps"
fps = 25
gop = 1
i_to_p = 1
paths = [{ path = ["a"], ack_path = ["a_up"], cost = 2 }, { path = ["b"], ack_path = ["b_up"], cost = 3 }]
"#;
    let (_, s) = run(toml);
    let mp = s.flows[0].multipath.as_ref().unwrap();
    let (a, b) = (&mp.subflows[0], &mp.subflows[1]);
    assert_eq!((a.cost, b.cost), (Some(2.0), Some(3.0)));
    // Every frame (k = 0 .. 124, from 20 ms) arrives over path a: 625 000 B in 5 s, 1 Mbit/s.
    assert!(
        (a.throughput_mbps - 1.0).abs() < 1e-9 && b.throughput_mbps == 0.0,
        "{a:?}"
    );
    // Σ a_s·x_s = 2·1 + 3·0.
    assert!((mp.path_cost.unwrap() - 2.0).abs() < 1e-9);
    // Windows of 100 ms open at the first sample (10 ms): [10, 110) ms holds the frames written
    // at 20, 60 and 100 ms (written at establishment, 20.01 ms, then every 40 ms), so the peak
    // is three frames' 5208 wire bytes over the 125 000 B path a carries in 100 ms.
    assert_eq!(a.peak_x_over_c, Some(3.0 * 5208.0 / 125_000.0));
    assert_eq!(b.peak_x_over_c, Some(0.0));
    // Without costs none of these keys appear.
    let (_, plain) = run(&toml.replace(", cost = 2", "").replace(", cost = 3", ""));
    let json = serde_json::to_string(&plain).unwrap();
    for key in ["path_cost", "\"cost\"", "peak_x_over_c"] {
        assert!(!json.contains(key), "{key} in {json}");
    }
}
