//! Measurement windows (`measure = [from, to]`): every summary metric over the window only.

use crate::common;

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
    let u = late.links[0].utilization;
    assert!(u > 0.95 && u <= 1.0, "utilization {u}");
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

/// Issue 21's case: two Reno flows, the second starting 10 s after the first (`stagger`). Over
/// the whole run the first had the link alone for a third of its active time, so the goodputs
/// differ and Jain's index is well below 1; in a window where both have been running for a
/// while (15–30 s) they share the link and the index is close to 1.
#[test]
fn the_window_changes_jains_index_on_staggered_starts() {
    let scenario = |measure: &str| {
        format!(
            "duration = \"30s\"\n{measure}\n[links.down]\nrate = \"10Mbps\"\ndelay = \"10ms\"\n\
             buffer = \"50pkt\"\n[links.up]\nrate = \"10Mbps\"\ndelay = \"10ms\"\n\
             [[flows]]\nname = \"r\"\ncc = \"reno\"\npath = [\"down\"]\nack_path = [\"up\"]\n\
             count = 2\nstagger = \"10s\"\n"
        )
    };
    let (_, whole) = common::run(&scenario(""));
    let (_, window) = common::run(&scenario("measure = [\"15s\", \"30s\"]"));
    assert_eq!(whole.flows[1].start_s, 10.0);
    let (jw, jm) = (whole.jain_index.unwrap(), window.jain_index.unwrap());
    // By hand: whole run, flow 1 ≈ (10 s alone at 10 Mbit/s + 20 s shared at ~5) / 30 s ≈ 6.7,
    // flow 2 ≈ 5 over its 20 s: J = (6.7 + 5)² / (2 · (6.7² + 5²)) ≈ 0.98 at best; the window
    // removes the first flow's head start.
    assert!(jw < 0.99, "whole-run Jain {jw}");
    assert!(jm > 0.99, "windowed Jain {jm}");
    assert!(jm > jw);
}
