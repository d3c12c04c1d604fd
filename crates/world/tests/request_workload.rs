//! `workload = "requests"` (issue 10): a closed request/response loop over one persistent
//! connection completes the transfers its think time allows, each no faster than slow start
//! from the initial window permits, and Linux's slow start after idle resets cwnd after a think
//! time longer than the RTO.

use crate::common;

use common::{run, run_logged, world};
use rove_world::summary::RequestsSummary;
use rove_world::workload::App;
use rove_world::World;

const MS: f64 = 1e-3;

/// `down` and `up` at 100 Mbit/s, 10 ms each way; one request flow with `keys`.
fn requests_over(duration: &str, cc: &str, keys: &str) -> String {
    format!(
        r#"duration = "{duration}"
[links.down]
rate = "100Mbps"
delay = "10ms"
buffer = "1000pkt"
[links.up]
rate = "100Mbps"
delay = "10ms"
[[flows]]
name = "web"
cc = "{cc}"
workload = "requests"
sizes = ["100KB"]
path = ["down"]
ack_path = ["up"]
{keys}
"#
    )
}

fn requests(s: &rove_world::Summary) -> &RequestsSummary {
    s.flows[0]
        .requests
        .as_ref()
        .expect("a request flow's summary")
}

/// The shortest and longest transfer times (exact: the histogram keeps its extremes).
fn fct_range(w: &World) -> (f64, f64) {
    let app = &w.flows[0].app.as_ref().unwrap().app;
    let App::Requests(r) = app else {
        panic!("not a request loop")
    };
    let d = &r.stats.delay;
    (d.min().unwrap() as f64 / 1e9, d.max().unwrap() as f64 / 1e9)
}

fn cwnd_restarts(w: &World) -> u64 {
    w.flows[0].transport.sender(0).stats.cwnd_restarts
}

/// A 100 KB response is 70 segments (69 × 1448 B + 88 B). From a cwnd of 10, slow start sends
/// them in rounds of 10, 20 and 40: the 31st segment needs the ACK of a second-round segment,
/// which left no earlier than one minimum RTT after the response was written and returns one
/// minimum RTT later. Minimum RTT: 2 × 10 ms + 1500 B and 52 B at 100 Mbit/s = 20.12416 ms.
/// So a transfer takes at least the request delay (10 ms), two minimum RTTs, and the last
/// segment's serialisation (0.12 ms) and propagation (10 ms): 60.36832 ms.
const MIN_RTT_S: f64 = 20.124_16 * MS;
const FCT_MIN_S: f64 = 10.0 * MS + 2.0 * MIN_RTT_S + 0.12 * MS + 10.0 * MS;

#[test]
fn a_request_loop_completes_the_hand_computed_transfers_no_faster_than_slow_start_allows() {
    // Established at 20.0096 ms; transfer k is requested at 20 ms + k × (2 s + its FCT), so
    // the fifth starts near 8.3 s and the sixth would start after 10 s.
    let (w, s) = run(&requests_over("10s", "reno", "think = \"2s\""));
    let r = requests(&s);
    assert_eq!((r.transfers_started, r.transfers_completed), (5, 5));
    let (min, max) = fct_range(&w);
    // Every transfer starts from the restart window (the 2 s think is past the RTO) and needs
    // three rounds: at least FCT_MIN, and less than one more round.
    assert!(min >= FCT_MIN_S, "{min} < {FCT_MIN_S}");
    assert!(max < FCT_MIN_S + MIN_RTT_S, "{max}");
    assert_eq!(s.flows[0].bytes_delivered, 5 * 100_000);
    assert!(r.fct_p50_s.unwrap() >= FCT_MIN_S * 0.995);
    assert_eq!(cwnd_restarts(&w), 4, "before every transfer but the first");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn a_request_count_stops_the_loop() {
    let (_, s) = run(&requests_over(
        "10s",
        "cubic",
        "think = \"100ms\"\nrequests = 3",
    ));
    let r = requests(&s);
    assert_eq!((r.transfers_started, r.transfers_completed), (3, 3));
}

#[test]
fn slow_start_after_idle_resets_cwnd_after_a_long_think_time_only() {
    // 50 ms of thought (plus the request delay) is shorter than the RTO (200 ms minimum):
    // cwnd carries over, and the responses after the first leave in one burst (10 ms + 8.3 ms
    // of serialisation + 10 ms), far below the slow-start bound.
    let (w, s) = run(&requests_over(
        "10s",
        "reno",
        "think = \"50ms\"\nrequests = 5",
    ));
    assert_eq!(cwnd_restarts(&w), 0);
    assert_eq!(requests(&s).transfers_completed, 5);
    assert!(requests(&s).fct_p50_s.unwrap() < 30.0 * MS, "{s:?}");
    // One second of thought: restarted before each of the four later transfers.
    let (w, _) = run(&requests_over(
        "10s",
        "reno",
        "think = \"1s\"\nrequests = 5",
    ));
    assert_eq!(cwnd_restarts(&w), 4);
    assert!(fct_range(&w).0 >= FCT_MIN_S);
    // The sysctl off (net.ipv4.tcp_slow_start_after_idle = 0): cwnd carries over.
    let (w, s) = run(&requests_over(
        "10s",
        "reno",
        "think = \"1s\"\nrequests = 5\nslow_start_after_idle = false",
    ));
    assert_eq!(cwnd_restarts(&w), 0);
    assert!(requests(&s).fct_p50_s.unwrap() < 30.0 * MS);
    // BBR sets cwnd itself (cong_control): Linux skips the restart for it.
    let (w, _) = run(&requests_over("10s", "bbr", "think = \"1s\"\nrequests = 5"));
    assert_eq!(cwnd_restarts(&w), 0);
}

#[test]
fn a_multipath_request_loop_completes_its_transfers_in_order() {
    let toml = r#"duration = "10s"
[links.wifi]
rate = "20Mbps"
delay = "10ms"
[links.wifi_up]
rate = "20Mbps"
delay = "10ms"
[links.lte]
rate = "10Mbps"
delay = "25ms"
[links.lte_up]
rate = "10Mbps"
delay = "25ms"
[[flows]]
name = "web"
cc = "reno"
workload = "requests"
sizes = ["300KB", "30KB"]
think = "500ms"
requests = 6
paths = [{path = ["wifi"], ack_path = ["wifi_up"]}, {path = ["lte"], ack_path = ["lte_up"]}]
"#;
    let (w, s) = run_logged(world(toml));
    let r = requests(&s);
    assert_eq!((r.transfers_started, r.transfers_completed), (6, 6));
    assert_eq!(s.flows[0].bytes_delivered, 3 * 300_000 + 3 * 30_000);
    let c = w.flows[0].transport.connection().unwrap();
    let log = c.reorder.delivery_log.as_deref().unwrap();
    // 300 KB: 208 segments; 30 KB: 21 segments.
    assert_eq!(log.len() as u64, 3 * 208 + 3 * 21);
    assert!(log.iter().enumerate().all(|(i, &d)| d == i as u64));
    // A 30 KB response from a restarted window takes at least the request delay (10 ms over
    // wifi_up) and one path's one-way delay.
    assert!(fct_range(&w).0 > 20.0 * MS);
}
