//! Measurement windows (`measure = [from, to]`): every summary metric over the window only.

mod common;

use common::{bottleneck, run};

/// Two Reno flows on 20 Mbit/s: "a" from 0 s, "b" from 20 s, 40 s in all.
fn staggered(measure: &str) -> String {
    let s = bottleneck(
        "40s",
        measure,
        "rate = \"20Mbps\"\ndelay = \"20ms\"\nbuffer = \"100pkt\"",
        &[("a", "reno", ""), ("b", "reno", "")],
    );
    s.replacen("name = \"b\"\n", "name = \"b\"\nstart = \"20s\"\n", 1)
}

#[test]
fn a_window_after_the_late_start_shows_the_fair_share() {
    let (_, whole) = run(&staggered(""));
    let (_, late) = run(&staggered("measure = [\"25s\", \"40s\"]"));
    // Over the whole run "a" has the link alone for 20 s: ~15 Mbit/s average against ~10.
    let j_whole = whole.jain_index.unwrap();
    let j_late = late.jain_index.unwrap();
    assert!(j_whole < 0.97, "whole run {j_whole}");
    assert!(
        j_late > 0.98,
        "after convergence {j_late} (whole run {j_whole})"
    );
    let sum: f64 = late.flows.iter().map(|f| f.goodput_mbps).sum();
    assert!(sum > 18.0 && sum <= 20.0, "{sum}");
    // Counts cover the window only.
    let bytes: u64 = late.flows.iter().map(|f| f.bytes_delivered).sum();
    assert!((bytes as f64 * 8.0 / 15.0 / 1e6 - sum).abs() < 0.01);
    assert!(late.links[0].utilization > 0.95 && late.links[0].utilization <= 1.0);
}

#[test]
fn the_whole_run_as_a_window_is_the_default() {
    let (_, default) = run(&staggered(""));
    let (_, explicit) = run(&staggered("measure = [\"0s\", \"40s\"]"));
    assert_eq!(
        serde_json::to_string(&default).unwrap(),
        serde_json::to_string(&explicit).unwrap()
    );
}

#[test]
fn a_window_that_closes_early_ignores_what_follows() {
    let (w, early) = run(&staggered("measure = [\"5s\", \"15s\"]"));
    // Only "a" runs in [5, 15]: "b" has no active time there and delivered nothing.
    assert_eq!(early.flows[1].bytes_delivered, 0);
    let a = w.goodput_mbps_between(0, 5.0, 15.0);
    assert!(
        (early.flows[0].goodput_mbps - a).abs() < 0.05,
        "{} vs {a}",
        early.flows[0].goodput_mbps
    );
    let rtt = early.flows[0].mean_rtt_ms.unwrap();
    assert!(rtt > 40.0 && rtt < 40.0 + 100.0 * 0.6 + 1.0, "{rtt}");
}
