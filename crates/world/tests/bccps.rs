//! BCCPS's scheduler (seed-001 §2.5, `scheduler = "bccps"`) on heterogeneous paths: the
//! reordering buffer against minRTT and round-robin, finite transfers through the redundant
//! phase and the send queues (complete, in order, each byte once, also when a path dies), and
//! `scheduler_params` errors.

use crate::common;

use common::{assert_complete_in_order, run, run_logged, world};

/// Seed-001 Table II (real WiFi + LTE), one value from each range: WiFi 10 Mbit/s, 40 ms RTT
/// (20 ms each way), 0.5 % loss; LTE 18 Mbit/s, 90 ms RTT, 0.1 % loss. DropTail buffers of
/// about one BDP (Table I's "1 BDP" router buffers): 10 Mbit/s · 40 ms = 50 KB = 34 packets,
/// 18 Mbit/s · 90 ms = 202.5 KB = 135 packets. Uncoupled BBR on both subflows. `flow` adds keys
/// to the multipath flow.
fn wifi_lte(seed: u64, duration: &str, flow: &str) -> String {
    format!(
        r#"
name = "bccps-wifi-lte"
duration = "{duration}"
seed = {seed}

[links.wifi_down]
rate = "10Mbps"
delay = "20ms"
loss = 0.005
buffer = "34pkt"
[links.wifi_up]
rate = "100Mbps"
delay = "20ms"
[links.lte_down]
rate = "18Mbps"
delay = "45ms"
loss = 0.001
buffer = "135pkt"
[links.lte_up]
rate = "100Mbps"
delay = "45ms"

[[flows]]
name = "mp"
cc = "bbr"
coupling = "uncoupled"
paths = [{{ path = ["wifi_down"], ack_path = ["wifi_up"] }}, {{ path = ["lte_down"], ack_path = ["lte_up"] }}]
{flow}
"#
    )
}

/// Seed-001 Table I's non-shared-bottleneck topology (`scenarios/bccps/table1-disjoint.toml`:
/// two disjoint 10 Mbit/s bottlenecks with 0.1 % loss, a single-path BBR flow competing at
/// each) with subflow 1's bottleneck at 50 ms each way (Fig. 13's largest asymmetry; the
/// study's sweep value), its buffer resized to 1 BDP: 10 Mbit/s · 100 ms = 125 KB = 84 packets.
fn table1_disjoint_50ms(seed: u64, flow: &str) -> rove_world::Summary {
    let base = include_str!("../../../scenarios/bccps/table1-disjoint.toml");
    // The multipath flow's keys: `flow` replaces its `scheduler = "minrtt"` line.
    let text = base.replace("scheduler = \"minrtt\"\n", &format!("{flow}\n"));
    let overrides: Vec<(String, String)> = [
        ("links.btl1.delay", "50ms"),
        ("links.btl1.buffer", "84pkt"),
        ("links.ack1.delay", "50ms"),
        ("links.ack_bg1.delay", "50ms"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut w = rove_world::load(
        &text,
        &rove_world::ParseOptions {
            source: "table1-disjoint.toml",
            overrides: &overrides,
            seed: Some(seed),
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    w.run();
    rove_world::summarize(&w)
}

const SEEDS: [u64; 3] = [1, 2, 3];

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The schedulers compared: minRTT, round-robin, BCCPS, and ablations of BCCPS's queue cap
/// ([GAP], bccps.rs): the rule as first specified (own-RTprop BDPs, a full queue skipped) and
/// each half of it. Only the first three are asserted on.
const SCHEDULERS: [(&str, &str); 6] = [
    ("minrtt", "scheduler = \"minrtt\""),
    ("roundrobin", "scheduler = \"roundrobin\""),
    ("bccps", "scheduler = \"bccps\""),
    (
        "bccps own+skip",
        "scheduler = \"bccps\"\nscheduler_params = { cap_rtt = \"own\", at_cap = \"skip\" }",
    ),
    (
        "bccps max+skip",
        "scheduler = \"bccps\"\nscheduler_params = { at_cap = \"skip\" }",
    ),
    (
        "bccps own+wait",
        "scheduler = \"bccps\"\nscheduler_params = { cap_rtt = \"own\" }",
    ),
];

/// Runs every scheduler of [`SCHEDULERS`] over [`SEEDS`] with `run_one(seed, flow keys)`
/// returning (time-averaged reordering buffer in bytes, goodput in Mbit/s); prints them and
/// returns the mean reordering buffer (KB) of each.
fn compare(what: &str, run_one: impl Fn(u64, &str) -> (f64, f64)) -> Vec<f64> {
    println!("{what}:");
    let mut means = Vec::new();
    for (name, flow) in SCHEDULERS {
        let runs: Vec<(f64, f64)> = SEEDS.iter().map(|&seed| run_one(seed, flow)).collect();
        let ofo: Vec<f64> = runs.iter().map(|r| r.0 / 1000.0).collect();
        let goodput: Vec<f64> = runs.iter().map(|r| r.1).collect();
        println!(
            "{name:>16}: ofo_mean {:6.1} KB {ofo:.1?}, goodput {:5.2} Mbit/s {goodput:.2?}",
            mean(&ofo),
            mean(&goodput)
        );
        means.push(mean(&ofo));
    }
    means
}

fn ofo_and_goodput(s: &rove_world::Summary) -> (f64, f64) {
    let f = &s.flows[0];
    (f.multipath.as_ref().unwrap().ofo_mean_bytes, f.goodput_mbps)
}

/// Seed-001 H1/Q9/Q10: BCCPS's OFO queue is smaller than LRF's (minRTT) and RR's with the
/// same congestion control (uncoupled BBR) on heterogeneous paths. The paper claims > 50 %
/// fewer; the tests assert "smaller" on the mean over three seeds and print the values.
fn assert_smaller(means: &[f64]) {
    let (minrtt, rr, bccps) = (means[0], means[1], means[2]);
    println!(
        "BCCPS / minRTT = {:.2}, BCCPS / round-robin = {:.2}",
        bccps / minrtt,
        bccps / rr
    );
    assert!(
        bccps < minrtt,
        "BCCPS {bccps:.1} KB vs minRTT {minrtt:.1} KB"
    );
    assert!(bccps < rr, "BCCPS {bccps:.1} KB vs round-robin {rr:.1} KB");
}

#[test]
fn reordering_buffer_is_smaller_than_min_rtt_and_round_robin_on_wifi_and_lte() {
    let means = compare("Table II WiFi + LTE, 60 s bulk", |seed, flow| {
        ofo_and_goodput(&run(&wifi_lte(seed, "60s", flow)).1)
    });
    assert_smaller(&means);
}

#[test]
fn reordering_buffer_is_smaller_than_min_rtt_and_round_robin_on_table1_disjoint_paths() {
    let means = compare(
        "Table I non-shared, 10 ms / 50 ms, BBR cross traffic, 60 s",
        |seed, flow| ofo_and_goodput(&table1_disjoint_50ms(seed, flow)),
    );
    assert_smaller(&means);
}

#[test]
fn a_finite_transfer_through_the_redundant_phase_arrives_complete_and_in_order() {
    // 50 KB: a mouse flow, wholly in the redundant phase (every DSN queued on both subflows);
    // 3 MB: past it. Each byte reaches the application once, in order.
    for (size, seed) in [(50_000, 1), (3_000_000, 1), (3_000_000, 2), (3_000_000, 3)] {
        let toml = wifi_lte(
            seed,
            "30s",
            &format!("scheduler = \"bccps\"\nsize = \"{size}B\""),
        );
        let (w, s) = run_logged(world(&toml));
        let what = format!("{size} B, seed {seed}");
        assert_complete_in_order(&w, &s, size, &what);
        let c = w.flows[0].transport.connection().unwrap();
        let mp = s.flows[0].multipath.as_ref().unwrap();
        println!(
            "{what}: download {:.3} s, duplicates {}, queued copies dropped {}, reinjected {}",
            mp.download_time_s.unwrap(),
            mp.duplicate_segs,
            c.queue_drops(),
            mp.reinjected_segs
        );
        // The redundant phase queued each of its DSNs (70 of 1448 B, or all 35 of the 50-KB
        // transfer) on both subflows. Of each DSN's two copies one is delivered; the other is
        // dropped from its queue when the DSN is DATA_ACKed first, or sent and dropped at the
        // receiver as a duplicate (subflow TCP retransmits it if lost). Later DSNs are queued
        // on one subflow, so no other queued copy is ever dropped; spurious retransmissions
        // can only add duplicates.
        let redundant = size.div_ceil(rove_tcp::MSS as u64).min(70);
        assert!(c.queue_drops() <= redundant, "{what}");
        assert!(mp.duplicate_segs + c.queue_drops() >= redundant, "{what}");
        assert!(
            c.subflows.iter().all(|s| s.queue.is_empty()),
            "{what}: queues left"
        );
    }
}

#[test]
fn a_dead_path_gives_its_send_queue_to_the_other() {
    // LTE goes down at 2 s for the rest of the run: its subflow's RTO fires, its queued and
    // in-flight DSNs are reinjected on WiFi, and the 6 MB still arrive complete and in order.
    let size = 6_000_000;
    let toml = wifi_lte(
        1,
        "40s",
        &format!("scheduler = \"bccps\"\nsize = \"{size}B\""),
    )
    .replace(
        "[links.lte_down]\n",
        "[links.lte_down]\noutages = [{ at = \"2s\", for = \"60s\" }]\n",
    );
    let (w, s) = run_logged(world(&toml));
    assert_complete_in_order(&w, &s, size, "LTE down from 2 s");
    let mp = s.flows[0].multipath.as_ref().unwrap();
    println!(
        "LTE down from 2 s: failures {}, reinjected {}",
        mp.subflows[1].failures, mp.reinjected_segs
    );
    assert!(mp.subflows[1].failures >= 1);
    assert!(mp.reinjected_segs > 0);
}

#[test]
fn same_seed_same_results() {
    let toml = wifi_lte(4, "20s", "scheduler = \"bccps\"\nsize = \"5MB\"");
    let a = serde_json::to_string(&run_logged(world(&toml)).1).unwrap();
    let b = serde_json::to_string(&run_logged(world(&toml)).1).unwrap();
    assert_eq!(a, b);
}

#[test]
fn scheduler_params_errors_name_the_key() {
    let err = |flow: &str| match rove_world::load(
        &wifi_lte(1, "1s", flow),
        &rove_world::ParseOptions {
            source: "t.toml",
            ..Default::default()
        },
    ) {
        Ok(_) => panic!("accepted {flow}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        err("scheduler = \"bccps\"\nscheduler_params = { rtt = \"min\" }"),
        "t.toml: flows[0].scheduler_params.rtt: unknown value \"min\"; accepted: \"srtt\", \"rtprop\""
    );
    assert_eq!(
        err("scheduler = \"bccps\"\nscheduler_params = { cap = 2 }"),
        "t.toml: flows[0].scheduler_params.cap: unknown parameter; accepted: redundant_bytes, rtt, \
         queue_cap_bdp, cap_rtt, at_cap, count_inflight, serialization, probe_rtt_available, unsampled, fallback, \
         loss_rate_weight, receive_buffer_optimization"
    );
    assert_eq!(
        err("scheduler_params = { rtt = \"srtt\" }"),
        "t.toml: flows[0].scheduler_params.rtt: unknown parameter; accepted: none"
    );
    assert_eq!(
        err("scheduler = \"bccps\"\nscheduler_params = 3"),
        "t.toml: flows[0].scheduler_params: expected a table like { rtt = \"rtprop\" }, got the number 3"
    );
    // A single-path flow has no scheduler.
    let single = "duration = \"1s\"\n[links.d]\nrate = \"10Mbps\"\n[links.u]\nrate = \"10Mbps\"\n\
                  [[flows]]\npath = [\"d\"]\nack_path = [\"u\"]\nscheduler_params = { rtt = \"srtt\" }\n";
    let e = rove_world::load(single, &rove_world::ParseOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("flows[0].scheduler_params") && e.contains("multipath flows only"),
        "{e}"
    );
}
