//! Unresponsive workloads (issue 10): constant bit rate, Poisson and on/off sources deliver what
//! the path lets through, lose the rest, and report one-way delay.

use crate::common;

use common::run;

fn link_and(flows: &str, buffer: &str) -> String {
    format!(
        r#"duration = "10s"
[links.down]
rate = "20Mbps"
delay = "10ms"
buffer = "{buffer}"
[links.up]
rate = "20Mbps"
delay = "10ms"
{flows}"#
    )
}

fn source(name: &str, workload: &str, rate: &str, extra: &str) -> String {
    format!("[[flows]]\nname = \"{name}\"\nworkload = \"{workload}\"\nrate = \"{rate}\"\npath = [\"down\"]\n{extra}\n")
}

#[test]
fn a_cbr_source_below_capacity_arrives_whole_after_delay_plus_serialization() {
    let (_, s) = run(&link_and(&source("v", "cbr", "6Mbps", ""), "100pkt"));
    let f = &s.flows[0];
    let d = f.datagram.as_ref().unwrap();
    assert_eq!(d.workload, "cbr");
    // One packet every 2 ms from 0 s to 10 s inclusive (the run's last instant is part of it).
    assert_eq!(d.sent_pkts, 5001, "6 Mbit/s of 1500-byte packets for 10 s");
    assert_eq!(d.loss_rate, 0.0);
    // 10 ms + 1500 B at 20 Mbit/s (0.6 ms); no queue at 30 % load with CBR spacing.
    assert!(
        (d.owd_mean_ms.unwrap() - 10.6).abs() < 1e-6,
        "{:?}",
        d.owd_mean_ms
    );
    let payload_mbps = 6.0 * 1472.0 / 1500.0;
    assert!(
        (f.goodput_mbps - payload_mbps).abs() < 0.01,
        "{}",
        f.goodput_mbps
    );
}

#[test]
fn a_cbr_flood_above_capacity_loses_the_excess_and_fills_the_queue() {
    let (_, s) = run(&link_and(&source("flood", "cbr", "30Mbps", ""), "100pkt"));
    let d = s.flows[0].datagram.as_ref().unwrap();
    // A third of the packets cannot fit through 20 Mbit/s.
    assert!((d.loss_rate - 1.0 / 3.0).abs() < 0.01, "{}", d.loss_rate);
    // The 100-packet queue stays full: 100 x 0.6 ms of queueing on top of 10.6 ms.
    assert!(
        d.owd_p95_ms.unwrap() > 70.0 && d.owd_p95_ms.unwrap() < 71.0,
        "{:?}",
        d.owd_p95_ms
    );
    assert!(s.links[0].utilization > 0.99, "{}", s.links[0].utilization);
    // Every packet sent was dropped by the queue, delivered, or is still on its way (at most
    // the 100 queued, the one in service and 10 ms of propagation at 20 Mbit/s: 17).
    let unaccounted = d.sent_pkts - d.received_pkts - s.links[0].queue_drops;
    assert!(unaccounted <= 118, "{unaccounted}");
}

#[test]
fn poisson_and_onoff_sources_average_their_rates() {
    let (_, s) = run(&link_and(
        &(source("p", "poisson", "4Mbps", "")
            + &source("o", "onoff", "8Mbps", "on = \"1s\"\noff = \"1s\"")),
        "1000pkt",
    ));
    let p = s.flows[0].datagram.as_ref().unwrap();
    assert!(
        (p.sent_pkts as f64 - 3333.3).abs() < 3.0 * 3333f64.sqrt(),
        "{}",
        p.sent_pkts
    );
    let o = s.flows[1].datagram.as_ref().unwrap();
    // On in [0,1), [2,3), ... [8,9): 667 packets 1.5 ms apart in each; the sixth on period
    // starts at exactly 10 s, the run's last instant.
    assert_eq!(o.sent_pkts, 5 * 667 + 1);
    assert_eq!(p.loss_rate + o.loss_rate, 0.0);
}

#[test]
fn a_flood_takes_most_of_a_droptail_queue_from_a_reno_flow() {
    let reno = "[[flows]]\nname = \"r\"\ncc = \"reno\"\npath = [\"down\"]\nack_path = [\"up\"]\n";
    let (_, alone) = run(&link_and(reno, "100pkt"));
    let (_, flooded) = run(&link_and(
        &(reno.to_string() + &source("flood", "cbr", "30Mbps", "start = \"2s\"")),
        "100pkt",
    ));
    assert!(alone.flows[0].goodput_mbps > 18.0);
    // 30 Mbit/s offered into 20: the flood fills the queue and Reno keeps what slips in after
    // each departure, under a quarter of the link.
    assert!(
        flooded.flows[0].goodput_mbps < 5.0,
        "{}",
        flooded.flows[0].goodput_mbps
    );
}
