//! Shared-bottleneck detection in whole runs (`detector` on a multipath flow,
//! crates/mp/src/detect and crates/mp/src/detection.rs): the detector regroups the MPTCP-BBR
//! connection's coupling at run time, and its accuracy — the fraction of 100-ms samples whose
//! grouping equals the topology's (crates/world/src/bottleneck.rs) — is in the summary.
//!
//! Topologies: seed-001 Table I as committed, `scenarios/bccps/table1-shared.toml` (two
//! subflows and one single-path BBR flow through one 10 Mbit/s bottleneck) and
//! `table1-disjoint.toml` (each subflow at its own bottleneck with its own BBR flow), 60-s runs,
//! MPTCP-BBR with minRTT. Issue 15's done-when: "the detector's accuracy beats DWC's in both
//! topologies" (seed 001 §5 Q1), judged on the median over seeds 1–3.

use crate::common;
use common::run;
use rove_world::summary::Summary;

const SEEDS: std::ops::RangeInclusive<u64> = 1..=3;

/// A committed BCCPS scenario with the connection running MPTCP-BBR and `detector`.
fn scenario(file: &str, detector: &str, seed: u64) -> String {
    let path = format!(
        "{}/../../scenarios/bccps/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let base = std::fs::read_to_string(path).unwrap();
    base.replacen(
        "cc = \"bbr\"\n",
        &format!("cc = \"mpbbr\"\ndetector = \"{detector}\"\n"),
        1,
    )
    .replace("seed = 1\n", &format!("seed = {seed}\n"))
}

fn detection(s: &Summary) -> (f64, u64, Vec<u32>) {
    let m = s.flows[0].multipath.as_ref().unwrap();
    (
        m.detection_accuracy.unwrap(),
        m.detection_regroupings.unwrap(),
        m.detection_groups.clone().unwrap(),
    )
}

/// The median accuracy of `detector` over [`SEEDS`] on `file`, printed with every value.
fn median_accuracy(file: &str, detector: &str) -> f64 {
    let mut v: Vec<f64> = SEEDS
        .map(|seed| {
            let (_, s) = run(&scenario(file, detector, seed));
            let (acc, regroupings, groups) = detection(&s);
            eprintln!("{file} {detector} seed {seed}: accuracy {acc:.3}, {regroupings} regroupings, final {groups:?}");
            acc
        })
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[test]
fn the_true_grouping_is_exact_after_its_first_consultation() {
    // "truth" groups by the topology from its first consultation (100 ms): every later sample
    // matches. Shared: the sample at 100 ms still sees the start's grouping (each subflow
    // alone), so 599 of 600 match; disjoint: the start's grouping is already the true one.
    let (_, s) = run(&scenario("table1-shared.toml", "truth", 1));
    let (acc, regroupings, groups) = detection(&s);
    assert_eq!((acc, regroupings, groups), (599.0 / 600.0, 1, vec![0, 0]));
    let (_, s) = run(&scenario("table1-disjoint.toml", "truth", 1));
    assert_eq!(detection(&s), (1.0, 0, vec![0, 1]));
}

#[test]
fn the_detected_grouping_is_the_couplings() {
    // MPTCP-BBR's own detector (the default for cc = "mpbbr") couples the shared subflows once
    // S2 confirms them: α (Eq. 6) is 1 before and about 1/2 after, on both subflows.
    let text = scenario("table1-shared.toml", "auto", 1);
    let (w, s) = run(&text);
    let m = s.flows[0].multipath.as_ref().unwrap();
    assert_eq!(m.detector.as_deref(), Some("bccps"));
    assert_eq!(m.detection_groups.as_deref(), Some(&[0, 0][..]));
    let f = &w.recorder.flows;
    let alpha = &f.extra.iter().find(|(n, _)| *n == "mpbbr_alpha").unwrap().1;
    let at = |t: f64, sub: i32| {
        (0..f.time_s.len())
            .find(|&i| f.flow[i] == 0 && f.subflow[i] == sub && f.time_s[i] >= t)
            .map(|i| alpha[i])
            .unwrap()
    };
    for sub in [0, 1] {
        assert_eq!(at(5.0, sub), 1.0, "subflow {sub} alone before S2 confirms");
        let late = at(55.0, sub);
        assert!((0.3..0.7).contains(&late), "subflow {sub}: α {late}");
    }
}

#[test]
fn on_disjoint_bottlenecks_the_bccps_detector_is_more_accurate_than_dwc() {
    // Measured medians: bccps 0.51 (0.17-0.82: S2 confirms subflows whose PROBE_RTT timers
    // started together, see detect/bccps.rs's `require_s1`), DWC 0.02 (it groups the subflows
    // at their first coincident loss and delay signals, and keeps them grouped).
    let ours = median_accuracy("table1-disjoint.toml", "bccps");
    let dwc = median_accuracy("table1-disjoint.toml", "dwc");
    assert!(ours > dwc, "bccps {ours:.3} vs dwc {dwc:.3}");
}

/// Expected failure (strict: the test fails if the assertion starts to hold). Seed 001 §5 Q1
/// at the shared bottleneck: the paper's detector more accurate than DWC. Measured: bccps 0.83
/// on every seed (the subflows stay independent until S2 confirms them at their first
/// coincident PROBE_RTT, about 10 s into the 60-s run, then stay grouped), DWC 0.99 (it groups
/// them at the first coincident loss and delay signals, within a second, and keeps them
/// grouped: on disjoint bottlenecks the same habit costs it, see the test above). The cause is
/// S2's wait for a PROBE_RTT, which the paper requires before coupling ("confirmed finally");
/// with `couple = "candidate"` (S1 alone) bccps regroups on S1's votes and flaps (0.44, 26
/// regroupings, seed 1).
#[test]
#[should_panic(expected = "bccps more accurate than DWC at the shared bottleneck")]
fn at_the_shared_bottleneck_the_bccps_detector_is_more_accurate_than_dwc() {
    let ours = median_accuracy("table1-shared.toml", "bccps");
    let dwc = median_accuracy("table1-shared.toml", "dwc");
    assert!(
        ours > dwc,
        "bccps more accurate than DWC at the shared bottleneck: {ours:.3} vs {dwc:.3}"
    );
}

#[test]
fn a_detector_is_refused_with_its_accepted_names_and_parameters() {
    let text = scenario("table1-shared.toml", "psychic", 1);
    let e = rove_world::parse(
        &text,
        &rove_world::ParseOptions {
            source: "<test>",
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.location, "flows[0].detector");
    assert!(
        e.message
            .contains("accepted: auto, truth, none, bccps, dwc"),
        "{}",
        e.message
    );
    let text = scenario("table1-shared.toml", "dwc", 1).replacen(
        "detector = \"dwc\"\n",
        "detector = \"dwc\"\ndetector_params = { r2_min = 0.5 }\n",
        1,
    );
    let e = rove_world::load(
        &text,
        &rove_world::ParseOptions {
            source: "<test>",
            ..Default::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.location, "flows[0].detector_params.r2_min");
    assert!(e.message.contains("accepted: interval_ms"), "{}", e.message);
}
