//! MPTCP-SSCC's coupling in whole runs: RFC 8382 detection at the receiver
//! (crates/mp/src/detect/rfc8382/) and OLIA* over the subflows it groups
//! (crates/tcp/src/cc/coupled/olia.rs). The detection tests run the coupling alone,
//! `cc = "olia_sbd"` with `detector = "rfc8382"` (an uncoupled subflow runs Reno: OLIA* alone),
//! which is `cc = "sscc"` without its learned selection; the tests of `cc = "sscc"` itself run
//! the selection too (crates/world/src/control/sscc/, tested in sscc_select.rs), and what it does
//! to the detection at a shared bottleneck is measured below.
//!
//! Issue 16's done-when for items 1-3: two subflows through one bottleneck are grouped together
//! within a few seconds and two on disjoint bottlenecks are not (accuracy over seeds: the
//! fraction of 100-ms samples whose grouping equals the topology's); at a shared bottleneck the
//! connection's Jain index against a NewReno flow is ≥ 0.88 (thesis Table 5.5: 96.33 % with two
//! subflows). The detector merges its decisions every D·T = 10 × 350 ms = 3.5 s, so the first
//! grouping can come at 3.5 s after the first segment, and the next chance 3.5 s later.

use crate::common;
use rove_world::summary::Summary;

const SEEDS: std::ops::RangeInclusive<u64> = 1..=3;

fn scenario_file(path: &str) -> String {
    let path = format!("{}/../../scenarios/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

/// `cc = "sscc"` made into its coupling alone: OLIA* with RFC 8382 detection, no selection.
fn coupling_only(text: &str) -> String {
    assert!(text.contains("cc = \"sscc\"\n"));
    text.replacen(
        "cc = \"sscc\"\n",
        "cc = \"olia_sbd\"\ndetector = \"rfc8382\"\n",
        1,
    )
}

fn with_seed(text: &str, seed: u64) -> String {
    text.replacen("seed = 1\n", &format!("seed = {seed}\n"), 1)
}

/// scenarios/multipath/shared-bottleneck.toml with the connection on `cc = "sscc"`: two
/// subflows and a Reno flow through one 20 Mbit/s bottleneck with a 1-BDP buffer, 40 ms RTT.
fn shared(seed: u64) -> String {
    let text = scenario_file("multipath/shared-bottleneck.toml")
        .replacen("cc = \"reno\"\npaths", "cc = \"sscc\"\npaths", 1)
        .replacen("coupling = \"uncoupled\"\n", "", 1);
    with_seed(&text, seed)
}

/// scenarios/bccps/table1-disjoint.toml (two 10 Mbit/s bottlenecks, 20 ms RTT, 17-packet
/// buffers, 0.1 % loss, a BBR flow at each) with the connection on `cc = "sscc"`; with
/// `differ`, bottleneck 1 as the BCCPS delay sweep's "d30" (30 ms one way each way: RTT 60 ms,
/// 50-packet buffer).
fn disjoint(seed: u64, differ: bool) -> String {
    let mut text = scenario_file("bccps/table1-disjoint.toml").replacen(
        "cc = \"bbr\"\npaths",
        "cc = \"sscc\"\npaths",
        1,
    );
    if differ {
        for (from, to) in [
            (
                "[links.btl1]\nrate = \"10Mbps\"\ndelay = \"10ms\"\nbuffer = \"17pkt\"",
                "[links.btl1]\nrate = \"10Mbps\"\ndelay = \"30ms\"\nbuffer = \"50pkt\"",
            ),
            (
                "[links.ack1]\nrate = \"100Mbps\"\ndelay = \"10ms\"",
                "[links.ack1]\nrate = \"100Mbps\"\ndelay = \"30ms\"",
            ),
            (
                "[links.ack_bg1]\nrate = \"100Mbps\"\ndelay = \"10ms\"",
                "[links.ack_bg1]\nrate = \"100Mbps\"\ndelay = \"30ms\"",
            ),
        ] {
            assert!(text.contains(from), "{from}");
            text = text.replacen(from, to, 1);
        }
    }
    with_seed(&text, seed)
}

/// What a run says of the detection.
struct Detected {
    /// When the grouping in force first put subflows 0 and 1 together (s, 100-ms steps).
    first_grouped_s: Option<f64>,
    accuracy: f64,
    regroupings: u64,
    summary: Summary,
}

fn run_detected(text: &str) -> Detected {
    let mut w = common::world(text);
    let mut first_grouped_s = None;
    let mut t = 0;
    while first_grouped_s.is_none() && t < w.duration_ns() {
        t += 100_000_000;
        w.run_until(t);
        let c = w.flows[0].transport.connection().unwrap();
        let g = c.detection.as_ref().unwrap().groups();
        if g[0] == g[1] {
            first_grouped_s = Some(t as f64 / 1e9);
        }
    }
    w.run();
    let summary = rove_world::summarize(&w);
    let m = summary.flows[0].multipath.as_ref().unwrap();
    Detected {
        first_grouped_s,
        accuracy: m.detection_accuracy.unwrap(),
        regroupings: m.detection_regroupings.unwrap(),
        summary,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Measured: grouped first at 3.7 s (the first merge, 3.5 s after the first segment), accuracy
/// 0.765 with 7 regroupings, on every seed (the scenario has no random element: the seed
/// drives only random loss and jitter). Two of the seventeen merges split the pair: the
/// subflows sample the one queue at the times they send, and their var_est then differ by a
/// little more than p_mad = 10 % (7.7 vs 8.6 ms around 42 s).
#[test]
fn at_a_shared_bottleneck_the_subflows_are_grouped_at_the_first_or_second_merge() {
    let runs: Vec<Detected> = SEEDS
        .map(|seed| run_detected(&coupling_only(&shared(seed))))
        .collect();
    for (seed, d) in SEEDS.zip(&runs) {
        eprintln!(
            "sscc, shared bottleneck, seed {seed}: grouped first at {:?} s, accuracy {:.3}, {} regroupings, Jain {:.3}",
            d.first_grouped_s, d.accuracy, d.regroupings, d.summary.jain_index.unwrap()
        );
        let first = d.first_grouped_s.expect("grouped at some point");
        assert!(first <= 7.5, "seed {seed}: first grouped at {first} s");
        assert!(d.accuracy >= 0.5, "seed {seed}: grouped most of the time");
    }
    assert!(
        runs.iter().all(|d| d.accuracy == runs[0].accuracy),
        "no random element: the seeds agree"
    );
}

/// Expected failure (strict). With the selection (`cc = "sscc"`, the built-in models), the
/// shared bottleneck's pair is grouped late and for little of the run. Measured on seed 1:
/// grouped first at 31.7 s, accuracy 0.117 with 4 regroupings, Jain 0.544 against the Reno flow
/// (the coupling alone, the test above: 3.7 s, 0.765, 7 regroupings). Suspected cause: while
/// they are apart, the subflows run the algorithms the models choose instead of Reno (mostly
/// C2TCP and BBR in the Fig. 5.18 run below, sscc_select.rs), which keep the shared queue
/// shorter and less variable or sample it at other times, so RFC 8382's summary statistics
/// (skewness, variability, loss) of the two subflows differ and the first merges keep them
/// apart; the reward (Eq. 5.8) prizes exactly the low delay that hides the shared queue.
#[test]
#[should_panic(expected = "with the selection, grouped most of the time")]
fn with_the_selection_the_shared_pair_is_grouped_most_of_the_time() {
    let d = run_detected(&shared(1));
    eprintln!(
        "sscc with its selection, shared bottleneck, seed 1: grouped first at {:?} s, accuracy {:.3}, {} regroupings, Jain {:.3}",
        d.first_grouped_s, d.accuracy, d.regroupings, d.summary.jain_index.unwrap()
    );
    let first = d.first_grouped_s.unwrap_or(f64::INFINITY);
    assert!(
        first <= 7.5 && d.accuracy >= 0.5,
        "with the selection, grouped most of the time: first grouped at {first} s, accuracy {:.3}",
        d.accuracy
    );
}

/// Measured: accuracy 1.0 on seeds 1-3 (never grouped, no regrouping). The bottlenecks differ
/// in RTT and buffer: the subflows' delays and loss rates differ, so the decisions keep them
/// apart.
#[test]
fn on_disjoint_bottlenecks_that_differ_the_subflows_are_never_grouped() {
    let acc: Vec<f64> = SEEDS
        .map(|seed| {
            let d = run_detected(&coupling_only(&disjoint(seed, true)));
            eprintln!(
                "sscc, disjoint (d30), seed {seed}: grouped first at {:?} s, accuracy {:.3}, {} regroupings",
                d.first_grouped_s, d.accuracy, d.regroupings
            );
            d.accuracy
        })
        .collect();
    let m = median(acc);
    assert!(m >= 0.9, "median accuracy {m:.3}");
}

/// Expected failure (strict: the test fails if the assertion starts to hold). On the committed
/// disjoint topology the two bottlenecks are identical (10 Mbit/s, 20 ms, 17 packets, 0.1 %
/// loss, a BBR flow each). Measured accuracy 0.475, 0.527, 0.585 (seeds 1-3; grouped first at
/// 14.2, 14.2, 17.7 s; grouped at the end on seeds 2 and 3). Cause: BBR v1 starves the Reno-like
/// subflows in the 1-BDP buffers (about 0.9 Mbit/s for the connection against 9 for each BBR
/// flow), and the subflows lose about a fifth of their segments; both are congested by loss
/// (≥ p_l = 10 %) and the third stage compares their loss rates, which two identical bottlenecks
/// make equal within p_d = 10 % (0.19 vs 0.18 at 56 s, seed 2). RFC 8382 compares summary
/// statistics, not their timing: independent but identical bottlenecks look shared. The
/// bottlenecks that differ (the test above) are told apart every time.
#[test]
#[should_panic(expected = "identical disjoint bottlenecks told apart")]
fn on_identical_disjoint_bottlenecks_the_subflows_are_told_apart() {
    let acc: Vec<f64> = SEEDS
        .map(|seed| {
            let d = run_detected(&coupling_only(&disjoint(seed, false)));
            eprintln!(
                "sscc, disjoint (as committed), seed {seed}: grouped first at {:?} s, accuracy {:.3}, {} regroupings, goodputs {:?}",
                d.first_grouped_s,
                d.accuracy,
                d.regroupings,
                d.summary.flows.iter().map(|f| f.goodput_mbps).collect::<Vec<_>>()
            );
            d.accuracy
        })
        .collect();
    let m = median(acc);
    assert!(
        m >= 0.9,
        "identical disjoint bottlenecks told apart: median accuracy {m:.3}"
    );
}

/// Thesis Table 5.5 (scenarios/sscc/table5-5-static.toml: 40 Mbit/s, 40 ms, 2 BDP, NewReno from
/// 20 s, Jain over 120-180 s): 96.33 % for two subflows; the done-when asks ≥ 0.88. Measured
/// with the selection (`cc = "sscc"`, the built-in models): 0.990 (MPTCP 21.27, NewReno 17.34
/// Mbit/s; grouped first at 10.7 s, accuracy 0.942, 7 regroupings). Before the selection (the
/// coupling alone, uncoupled subflows on Reno) it was 0.982 (16.7 and 21.9 Mbit/s; grouped
/// first at 10.7 s, accuracy 0.883, 11 regroupings). Ablation: with `detector = "none"` (both
/// subflows alone, on the selection's algorithms) the connection takes 31.41 against 7.20
/// Mbit/s, Jain 0.718; with `"truth"`
/// (coupled from 0.1 s) 20.65 against 17.96, Jain 0.995.
#[test]
fn at_the_table_5_5_bottleneck_sscc_is_fair_to_newreno() {
    let text = scenario_file("sscc/table5-5-static.toml");
    let d = run_detected(&text);
    let jain = d.summary.jain_index.unwrap();
    let goodputs: Vec<f64> = d.summary.flows.iter().map(|f| f.goodput_mbps).collect();
    eprintln!(
        "sscc, Table 5.5: Jain {jain:.3}, goodputs {goodputs:?} Mbit/s, grouped first at {:?} s, accuracy {:.3}, {} regroupings",
        d.first_grouped_s, d.accuracy, d.regroupings
    );
    let ablation = |detector: &str| {
        let text = text.replacen(
            "cc = \"sscc\"\n",
            &format!("cc = \"sscc\"\ndetector = \"{detector}\"\n"),
            1,
        );
        let (_, s) = common::run(&text);
        let goodputs: Vec<f64> = s.flows.iter().map(|f| f.goodput_mbps).collect();
        eprintln!(
            "  detector {detector}: Jain {:.3}, goodputs {goodputs:?}",
            s.jain_index.unwrap()
        );
        s.jain_index.unwrap()
    };
    let none = ablation("none");
    ablation("truth");
    assert!(jain >= 0.88, "Jain {jain:.3}");
    assert!(none < jain, "uncoupled {none:.3} vs sscc {jain:.3}");
}

#[test]
fn sscc_runs_rfc8382_and_olia_star_unless_told_otherwise() {
    let (w, s) = common::run(&shared(1).replacen("duration = \"60s\"", "duration = \"2s\"", 1));
    let m = s.flows[0].multipath.as_ref().unwrap();
    assert_eq!(s.flows[0].cc, "sscc");
    assert_eq!(m.detector.as_deref(), Some("rfc8382"));
    assert_eq!(m.coupling, "connection");
    // Not grouped yet in 2 s (the first merge is at 3.5 s): the subflows are uncoupled, and the
    // selection starts them on CUBIC (no prediction for their prefix yet) and then runs the
    // candidates the built-in models choose.
    let f = &w.recorder.flows;
    let ccs: Vec<&str> = (0..f.time_s.len())
        .filter(|&i| f.flow[i] == 0 && f.subflow[i] >= 0)
        .map(|i| f.cc[i])
        .collect();
    assert!(ccs.contains(&"cubic"), "{ccs:?}");
    let candidates = [
        "bbr", "cubic", "vegas", "c2tcp", "westwood", "illinois", "olia_sbd",
    ];
    assert!(ccs.iter().all(|cc| candidates.contains(cc)), "{ccs:?}");
    // Without the selection, the subflows run OLIA* throughout.
    let (w, _) = common::run(&coupling_only(&shared(1)).replacen(
        "duration = \"60s\"",
        "duration = \"2s\"",
        1,
    ));
    let f = &w.recorder.flows;
    assert!((0..f.time_s.len())
        .filter(|&i| f.flow[i] == 0 && f.subflow[i] >= 0)
        .all(|i| f.cc[i] == "olia_sbd"));
    // A fixed coupling runs no detection; another detector may be named.
    let text = shared(1).replacen(
        "cc = \"sscc\"\n",
        "cc = \"sscc\"\ncoupling = \"connection\"\n",
        1,
    );
    let w = common::world(&text);
    assert!(w.flows[0]
        .transport
        .connection()
        .unwrap()
        .detection
        .is_none());
    let text = shared(1).replacen("cc = \"sscc\"\n", "cc = \"sscc\"\ndetector = \"dwc\"\n", 1);
    let w = common::world(&text);
    let c = w.flows[0].transport.connection().unwrap();
    assert_eq!(c.detection.as_ref().unwrap().name(), "dwc");
    // Its parameters are checked with the detector's.
    let text = shared(1).replacen(
        "cc = \"sscc\"\n",
        "cc = \"sscc\"\ndetector_params = { p_mad = 1.5 }\n",
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
    assert_eq!(e.location, "flows[0].detector_params.p_mad");
    assert!(e.message.contains("[0, 1]"), "{}", e.message);
}
