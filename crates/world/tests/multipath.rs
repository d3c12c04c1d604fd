//! Multipath scenarios (issue 6): the application's byte stream, schedulers, subflow joining,
//! reinjection after outages, the share at a shared bottleneck, results and determinism.

mod common;

use common::world;
use rove_world::{summarize, Summary, World};

const SCHEDULERS: [&str; 5] = ["minrtt", "roundrobin", "redundant", "blest", "ecf"];

/// Two disjoint paths: `a` (fast) and `b`, each with its own ACK link.
fn two_paths(rate_a: &str, delay_a: &str, rate_b: &str, delay_b: &str, extra_links: &str, flow: &str) -> String {
    format!(
        r#"
name = "mp"
duration = "20s"
seed = 1

[links.a_down]
rate = "{rate_a}"
delay = "{delay_a}"
buffer = "100pkt"
[links.a_up]
rate = "100Mbps"
delay = "{delay_a}"
[links.b_down]
rate = "{rate_b}"
delay = "{delay_b}"
buffer = "100pkt"
[links.b_up]
rate = "100Mbps"
delay = "{delay_b}"
{extra_links}

[[flows]]
name = "mp"
cc = "reno"
paths = [{{ path = ["a_down"], ack_path = ["a_up"] }}, {{ path = ["b_down"], ack_path = ["b_up"] }}]
{flow}
"#
    )
}

fn run_logged(mut w: World) -> (World, Summary) {
    w.connections[0].conn.reorder.delivery_log = Some(Vec::new());
    w.run();
    let s = summarize(&w);
    (w, s)
}

/// The application got every byte of the transfer, each DSN once and in order.
fn assert_complete_in_order(w: &World, s: &Summary, size: u64, what: &str) {
    let c = &w.connections[0].conn;
    let log = c.reorder.delivery_log.as_deref().unwrap();
    let total = size.div_ceil(rove_tcp::MSS as u64);
    assert_eq!(log.len() as u64, total, "{what}: DSNs delivered");
    assert!(log.iter().enumerate().all(|(i, &d)| d == i as u64), "{what}: delivered out of order or twice");
    assert_eq!(c.reorder.bytes_delivered, size, "{what}: bytes delivered");
    assert_eq!(s.flows[0].bytes_delivered, size, "{what}");
    assert!(s.flows[0].multipath.as_ref().unwrap().download_time_s.is_some(), "{what}: did not finish");
    assert_eq!(c.reorder.ofo_bytes, 0, "{what}: data left in the reordering buffer");
}

#[test]
fn byte_stream_is_complete_and_in_order_for_every_scheduler_seed_and_outage() {
    let size = 4_000_000;
    // Outages: none; path b down for 2 s in the middle; path a down for 1.5 s; path b down from
    // 1 s to the end of the run (its data must be reinjected on path a).
    let cases: [(&str, &str); 4] = [
        ("none", ""),
        ("b down 1s..3s", r#"outages = [{ at = "1s", for = "2s" }]"#),
        ("a down 0.5s..2s", r#"outages = [{ at = "500ms", for = "1500ms" }]"#),
        ("b down from 1s", r#"outages = [{ at = "1s", for = "60s" }]"#),
    ];
    for sched in SCHEDULERS {
        for seed in 1..=3 {
            for (label, outage) in cases {
                // Lossy paths with jitter so that subflows retransmit and reorder.
                let mut toml = two_paths("10Mbps", "15ms", "20Mbps", "45ms", "", &format!("scheduler = \"{sched}\"\nsize = \"{size}B\""));
                toml = toml.replace("seed = 1", &format!("seed = {seed}"));
                toml = toml.replace("[links.a_down]\n", "[links.a_down]\nloss = 0.01\n");
                toml = toml.replace("[links.b_down]\n", "[links.b_down]\nloss = 0.002\njitter = \"5ms\"\njitter_reorder = true\n");
                if label.starts_with('a') {
                    toml = toml.replace("[links.a_down]\n", &format!("[links.a_down]\n{outage}\n"));
                } else if label.starts_with('b') {
                    toml = toml.replace("[links.b_down]\n", &format!("[links.b_down]\n{outage}\n"));
                }
                let (w, s) = run_logged(world(&toml));
                let what = format!("{sched}, seed {seed}, outage {label}");
                assert_complete_in_order(&w, &s, size, &what);
                if label == "b down from 1s" {
                    let mp = s.flows[0].multipath.as_ref().unwrap();
                    assert!(mp.subflows[1].failures >= 1, "{what}: subflow b never declared failed");
                    // (The redundant scheduler already sent every DSN on both paths.)
                    assert!(sched == "redundant" || mp.reinjected_segs > 0, "{what}: nothing reinjected");
                }
            }
        }
    }
}

#[test]
fn second_subflow_joins_one_rtt_after_the_first() {
    // Path a: 10 ms each way at 100 Mbps. SYN and SYN-ACK are 60 bytes: 4.8 µs each to
    // serialize, so subflow 0 is established at 20 ms + 9.6 µs, and subflow 1 sends its SYN
    // (MP_JOIN) then; its own handshake takes 2·30 ms + 9.6 µs more.
    let toml = two_paths("100Mbps", "10ms", "100Mbps", "30ms", "", "size = \"100KB\"");
    let (_, s) = run_logged(world(&toml));
    let sub = &s.flows[0].multipath.as_ref().unwrap().subflows;
    assert_eq!(sub[0].start_s, Some(0.0));
    assert_eq!(sub[0].established_s, Some(0.020_009_6));
    assert_eq!(sub[1].start_s, Some(0.020_009_6));
    assert_eq!(sub[1].established_s, Some(0.020_009_6 + 0.060_009_6));
}
