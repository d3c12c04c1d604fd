//! MPTCP-SSCC's selection in whole runs (crates/world/src/control/sscc/; issue 16 item 3): the
//! Data Units the engine records, the selector's switches with hand-made models, and the
//! thesis's switching demo (Fig. 5.18) with the shipped model set.

use crate::common;
use rove_world::control::FeatureLog;
use rove_world::World;

/// Two disjoint paths: a (10 Mbit/s, 20 ms each way) and b (20 Mbit/s, 40 ms each way), ACK
/// links at 1 Gbit/s, DropTail buffers of `buffer`, path a's random loss `loss_a`; a
/// multipath connection `mp` running `cc` (`extra`: more of its keys), a 1 MB receive window.
fn two_paths(
    duration: &str,
    cc: &str,
    extra: &str,
    buffer: &str,
    loss_a: f64,
    tail: &str,
) -> String {
    format!(
        r#"duration = "{duration}"
seed = 1
[links.a_down]
rate = "10Mbps"
delay = "20ms"
buffer = "{buffer}"
loss = {loss_a}
[links.a_up]
rate = "1Gbps"
delay = "20ms"
[links.b_down]
rate = "20Mbps"
delay = "40ms"
buffer = "{buffer}"
[links.b_up]
rate = "1Gbps"
delay = "40ms"
[[flows]]
name = "mp"
cc = "{cc}"
rwnd = "1MB"
{extra}
paths = [
  {{ path = ["a_down"], ack_path = ["a_up"] }},
  {{ path = ["b_down"], ack_path = ["b_up"] }},
]
{tail}
"#
    )
}

const RECORDER: &str = "[[controllers]]\nkind = \"data_units\"\nflow = \"mp\"\n";

fn du_log(w: &World) -> &FeatureLog {
    w.controllers
        .iter()
        .flatten()
        .find(|c| c.kind() == "data_units")
        .and_then(|c| c.features())
        .expect("a data_units recorder")
}

fn col<'a>(log: &'a FeatureLog, name: &str) -> &'a [f64] {
    let i = log.names.iter().position(|n| *n == name).unwrap();
    &log.values[i]
}

/// Rows of subflow `sub`.
fn rows(log: &FeatureLog, sub: i32) -> Vec<usize> {
    (0..log.time_s.len())
        .filter(|&i| log.subflow[i] == sub)
        .collect()
}

/// BBR, no loss (buffers of 1000 packets, more than the 1 MB window holds): each path's Data
/// Units carry its propagation RTT as delay_min (2 × one way + a 1500-byte packet's
/// serialisation: 40 + 1.2 = 41.2 ms on a, 80 + 0.6 = 80.6 ms on b), its payload rate (1448 of
/// 1500 bytes: 9.653 and 19.31 Mbit/s) as tput_max, no loss, one DU per 20 ACKs, and a reward
/// of at most 1 (tput ≤ tput_max, delay' ≥ delay_min).
#[test]
fn data_units_of_a_scripted_run_hold_each_paths_rtt_rate_and_no_loss() {
    const CC: &str = "bbr";
    let (w, _) = common::run(&two_paths(
        "10s",
        CC,
        "coupling = \"uncoupled\"",
        "1000pkt",
        0.0,
        RECORDER,
    ));
    let log = du_log(&w);
    let c = w.flows[0].transport.connection().unwrap();
    for (sub, base_rtt_ms, rate_mbps) in [
        (0, 41.2, 10.0 * 1448.0 / 1500.0),
        (1, 80.6, 20.0 * 1448.0 / 1500.0),
    ] {
        let r = rows(log, sub);
        let acks = c.subflows[sub as usize].sender.stats.acks;
        assert_eq!(
            r.len() as u64,
            acks / 20,
            "subflow {sub}: one DU per 20 of its {acks} ACKs"
        );
        let min = col(log, "delay_min_ms");
        let last = *r.last().unwrap();
        assert!(
            min[last] >= base_rtt_ms && min[last] < base_rtt_ms + 0.05,
            "subflow {sub}: delay_min {} ms",
            min[last]
        );
        // tput is the mean of the sender's delivery-rate samples: none above the path's
        // payload rate, the largest DU at it, and the mean a little below (BBR's drain phases
        // send at 0.75 of it, and a sample is limited by its send rate: measured 2.3 % below on
        // path a).
        let max = col(log, "tput_max_mbps")[last];
        let late: Vec<usize> = r
            .iter()
            .copied()
            .filter(|&i| log.time_s[i] >= 4.0)
            .collect();
        let tput = late.iter().map(|&i| col(log, "tput_mbps")[i]).sum::<f64>() / late.len() as f64;
        eprintln!(
            "subflow {sub}: {} DUs, delay_min {:.3} ms, tput_max {max:.4}, mean tput after 4 s {tput:.3} Mbit/s (link payload rate {rate_mbps:.4})",
            r.len(),
            min[last]
        );
        assert!(
            max <= rate_mbps * (1.0 + 1e-9) && max > 0.999 * rate_mbps,
            "subflow {sub}: tput_max {max}"
        );
        assert!(
            tput < rate_mbps && tput > 0.95 * rate_mbps,
            "subflow {sub}: tput {tput}"
        );
        for &i in &r {
            assert_eq!(log.cc[i], CC);
            assert_eq!(col(log, "is_coupled")[i], 0.0);
            assert_eq!(col(log, "loss_mbps")[i], 0.0);
            assert_eq!(col(log, "loss_fraction")[i], 0.0);
            assert!(col(log, "delay_ms")[i] >= col(log, "delay_min_ms")[i]);
            assert!(col(log, "tput_mbps")[i] <= col(log, "tput_max_mbps")[i]);
            assert!(
                col(log, "reward")[i] <= 1.0 + 1e-12,
                "reward {}",
                col(log, "reward")[i]
            );
        }
        // The spans tile the time from the establishment to the last DU.
        let spans: f64 = r.iter().map(|&i| col(log, "span_ms")[i]).sum();
        let est = c.subflows[sub as usize]
            .sender
            .stats
            .established_at
            .unwrap() as f64
            / 1e6;
        assert!(
            (spans - (log.time_s[last] * 1e3 - est)).abs() < 1e-6,
            "{spans} vs {est}"
        );
    }
}

/// 1 % random loss on path a: each DU's loss in bit/s is whole lost packets of 1448 bytes over
/// its span, its fraction is lost / (lost + delivered) of the same packets, the DUs' lost
/// packets add up to the sender's count (less those of the last, unfinished DU), and over the
/// run the fraction is about the link's 1 %.
#[test]
fn data_unit_losses_are_the_senders_lost_packets_per_second_and_per_packet() {
    let (w, _) = common::run(&two_paths(
        "20s",
        "cubic",
        "coupling = \"uncoupled\"",
        "1000pkt",
        0.01,
        RECORDER,
    ));
    let log = du_log(&w);
    let r = rows(log, 0);
    let mut lost = 0.0;
    for &i in &r {
        let n = col(log, "loss_mbps")[i] * 1e6 * col(log, "span_ms")[i] / 1e3 / (8.0 * 1448.0);
        assert!((n - n.round()).abs() < 1e-6, "whole packets: {n}");
        let f = col(log, "loss_fraction")[i];
        if n.round() > 0.0 {
            let all = n.round() / f;
            assert!(
                (all - all.round()).abs() < 1e-6,
                "lost + delivered whole: {all}"
            );
        }
        lost += n.round();
    }
    let sender_lost = w.flows[0].transport.sender(0).tp.lost as f64;
    let delivered: f64 = w.flows[0].transport.sender(0).tp.delivered as f64;
    let overall = sender_lost / (sender_lost + delivered);
    eprintln!("path a: {lost} packets lost in the DUs, {sender_lost} by the sender, {overall:.4} of its packets");
    assert!(
        lost <= sender_lost && sender_lost - lost <= 3.0,
        "{lost} vs {sender_lost}"
    );
    assert!(
        overall > 0.007 && overall < 0.013,
        "overall loss fraction {overall}"
    );
}

// ------------------------------------------------------------------------------------------
// The selector (`kind = "sscc"`) with hand-made model sets.

const FEATURES: &str = r#"["tput_mbps", "loss_mbps", "delay_ms", "delay_min_ms", "tput_max_mbps"]"#;

/// A rove-trees regressor: one stump on `feature` (`x <= threshold` gives `left`), or a
/// constant when `feature` is `None`.
fn stump(feature: Option<(usize, f64)>, left: f64, right: f64) -> String {
    let tree = match feature {
        None => format!(
            r#"{{"children_left": [-1], "children_right": [-1], "feature": [-2], "threshold": [-2.0], "value": [[{left}]]}}"#
        ),
        Some((f, t)) => format!(
            r#"{{"children_left": [1, -1, -1], "children_right": [2, -1, -1], "feature": [{f}, -2, -2], "threshold": [{t}, -2.0, -2.0], "value": [[0.0], [{left}], [{right}]]}}"#
        ),
    };
    format!(
        r#"{{"format": "rove-trees", "version": 1, "estimator": "test", "task": "regression", "n_features": 5, "feature_names": {FEATURES}, "n_outputs": 1, "combine": "sum", "trees": [{tree}]}}"#
    )
}

/// Writes a model set (candidate, model text) into a fresh directory; returns its manifest.
fn model_set(name: &str, models: &[(&str, String)]) -> String {
    let dir = std::env::temp_dir().join(format!("rove-sscc-select-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for (cc, text) in models {
        std::fs::write(dir.join(format!("{cc}.json")), text).unwrap();
        files.push(format!(r#""{cc}": "{cc}.json""#));
    }
    let candidates: Vec<String> = models.iter().map(|(cc, _)| format!("{cc:?}")).collect();
    let manifest = format!(
        r#"{{"format": "rove-sscc-models", "version": 1, "features": {FEATURES}, "du_acks": 20, "candidates": [{}], "models": {{{}}}}}"#,
        candidates.join(", "),
        files.join(", ")
    );
    let path = dir.join("manifest.json");
    std::fs::write(&path, manifest).unwrap();
    path.display().to_string()
}

fn constant(v: f64) -> String {
    stump(None, v, v)
}

/// The selector on `mp` with the model set at `manifest` (more keys in `keys`).
fn selector(manifest: &str, keys: &str) -> String {
    format!("[[controllers]]\nkind = \"sscc\"\nflow = \"mp\"\nmodel = \"{manifest}\"\n{keys}\n")
}

/// The algorithm each DU of subflow `sub` ran (the recorder's `cc`), with the DU's time.
fn timeline(log: &FeatureLog, sub: i32) -> Vec<(f64, &'static str)> {
    rows(log, sub)
        .into_iter()
        .map(|i| (log.time_s[i], log.cc[i]))
        .collect()
}

/// Each subflow starts on `initial` (CUBIC: no prediction for its prefix yet) and, at its first
/// Data Unit, takes the candidate with the largest predicted reward (BBR: 0.9 against 0.5 and
/// 0.1), which it keeps.
#[test]
fn an_uncoupled_subflow_starts_on_cubic_then_runs_the_best_predicted_candidate() {
    let m = model_set(
        "best",
        &[
            ("cubic", constant(0.5)),
            ("bbr", constant(0.9)),
            ("vegas", constant(0.1)),
        ],
    );
    let tail = format!("{RECORDER}{}", selector(&m, ""));
    let (w, _) = common::run(&two_paths(
        "5s",
        "sscc",
        "detector = \"none\"",
        "100pkt",
        0.0,
        &tail,
    ));
    let log = du_log(&w);
    for sub in [0, 1] {
        let t = timeline(log, sub);
        assert_eq!(
            t[0].1, "cubic",
            "subflow {sub}: its first DU on the initial algorithm"
        );
        assert!(
            t[1..].iter().all(|(_, cc)| *cc == "bbr"),
            "subflow {sub}: {:?}",
            &t[..4]
        );
    }
}

/// Algorithm 4 returns no candidate when none predicts a reward above 0: the subflow keeps its
/// algorithm (CUBIC, its first).
#[test]
fn no_prediction_above_zero_keeps_the_running_algorithm() {
    let m = model_set("none", &[("bbr", constant(-0.1)), ("vegas", constant(0.0))]);
    let tail = format!("{RECORDER}{}", selector(&m, "initial = \"westwood\""));
    let (w, _) = common::run(&two_paths(
        "3s",
        "sscc",
        "detector = \"none\"",
        "100pkt",
        0.0,
        &tail,
    ));
    let log = du_log(&w);
    assert!(!log.cc.is_empty());
    assert!(
        log.cc.iter().all(|cc| *cc == "westwood"),
        "the initial algorithm throughout"
    );
}

/// Subflows a detector groups (here the topology's truth at a shared bottleneck) run OLIA*:
/// each starts alone on CUBIC, and goes back to olia_sbd once the grouping couples it.
#[test]
fn coupled_subflows_go_back_to_olia_star() {
    let m = model_set("coupled", &[("bbr", constant(0.9))]);
    let text = std::fs::read_to_string(format!(
        "{}/../../scenarios/multipath/shared-bottleneck.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replacen(
        "cc = \"reno\"\npaths",
        "cc = \"sscc\"\ndetector = \"truth\"\npaths",
        1,
    )
    .replacen("coupling = \"uncoupled\"\n", "", 1)
    .replacen("duration = \"60s\"", "duration = \"5s\"", 1)
        + &format!(
            "{}{}",
            RECORDER.replace("\"mp\"", "\"mptcp\""),
            selector(&m, "").replace("\"mp\"", "\"mptcp\"")
        );
    let (w, _) = common::run(&text);
    let f = &w.recorder.flows;
    let rows: Vec<usize> = (0..f.time_s.len())
        .filter(|&i| f.flow[i] == 0 && f.subflow[i] >= 0)
        .collect();
    assert!(
        rows.iter().any(|&i| f.cc[i] == "cubic"),
        "alone at first: CUBIC"
    );
    assert!(rows
        .iter()
        .filter(|&&i| f.time_s[i] >= 0.5)
        .all(|&i| f.cc[i] == "olia_sbd"));
    let log = du_log(&w);
    assert!((0..log.time_s.len())
        .filter(|&i| log.time_s[i] >= 0.5)
        .all(|i| col(log, "is_coupled")[i] == 1.0 && log.cc[i] == "olia_sbd"));
}

/// Algorithm 5: a subflow opened later starts on its destination prefix's choice, the prefix
/// being its data path's last hop. BBR is predicted 0.9 on paths with delay_min ≤ 60 ms (0.2
/// above), Westwood 0.5 everywhere: subflow 0 (over a_down, 43 ms) runs BBR, subflow 1 (over
/// b_down, 81 ms) Westwood. At 3 s, subflow 2 opens over another first link into a_down and
/// starts on BBR, subflow 3 into b_down on Westwood, and subflow 4 into a link no prediction
/// has named on CUBIC.
#[test]
fn a_new_subflow_starts_on_its_prefixs_choice() {
    let m = model_set(
        "prefix",
        &[
            ("bbr", stump(Some((3, 60.0)), 0.9, 0.2)),
            ("westwood", constant(0.5)),
        ],
    );
    let text = format!(
        r#"duration = "6s"
seed = 1
[links.a1]
rate = "1Gbps"
delay = "1ms"
[links.c1]
rate = "1Gbps"
delay = "1ms"
[links.c2]
rate = "1Gbps"
delay = "1ms"
[links.a_down]
rate = "10Mbps"
delay = "20ms"
buffer = "100pkt"
[links.b_down]
rate = "20Mbps"
delay = "40ms"
buffer = "100pkt"
[links.d_down]
rate = "20Mbps"
delay = "40ms"
buffer = "100pkt"
[links.a_up]
rate = "1Gbps"
delay = "21ms"
[links.b_up]
rate = "1Gbps"
delay = "40ms"
[[flows]]
name = "mp"
cc = "sscc"
detector = "none"
paths = [
  {{ path = ["a1", "a_down"], ack_path = ["a_up"] }},
  {{ path = ["b_down"], ack_path = ["b_up"] }},
]
[[actions]]
at = "3s"
flow = "mp"
add_subflow = {{ path = ["c1", "a_down"], ack_path = ["a_up"] }}
[[actions]]
at = "3s"
flow = "mp"
add_subflow = {{ path = ["c2", "b_down"], ack_path = ["b_up"] }}
[[actions]]
at = "3s"
flow = "mp"
add_subflow = {{ path = ["d_down"], ack_path = ["b_up"] }}
{RECORDER}{}"#,
        selector(&m, "")
    );
    let (w, _) = common::run(&text);
    let log = du_log(&w);
    let first_and_last = |sub| {
        let t = timeline(log, sub);
        (t[0].1, t.last().unwrap().1)
    };
    assert_eq!(first_and_last(0), ("cubic", "bbr"));
    assert_eq!(first_and_last(1), ("cubic", "westwood"));
    assert_eq!(
        first_and_last(2),
        ("bbr", "bbr"),
        "a_down's choice from the start"
    );
    assert_eq!(
        first_and_last(3),
        ("westwood", "westwood"),
        "b_down's choice"
    );
    assert_eq!(first_and_last(4).0, "cubic", "a prefix without predictions");
}

/// `period = N` predicts every N Data Units: with BBR always predicted best and period 3, the
/// subflow switches at its third Data Unit, not its first.
#[test]
fn the_period_counts_data_units_between_predictions() {
    let m = model_set("period", &[("bbr", constant(0.9))]);
    let tail = format!("{RECORDER}{}", selector(&m, "period = 3"));
    let (w, _) = common::run(&two_paths(
        "3s",
        "sscc",
        "detector = \"none\"",
        "100pkt",
        0.0,
        &tail,
    ));
    let t = timeline(du_log(&w), 0);
    let ccs: Vec<&str> = t.iter().take(5).map(|(_, cc)| *cc).collect();
    assert_eq!(ccs, ["cubic", "cubic", "cubic", "bbr", "bbr"]);
}

#[test]
fn the_selectors_keys_are_checked() {
    let m = model_set("keys", &[("bbr", constant(0.9))]);
    let load = |keys: &str, cc: &str| {
        let tail = selector(&m, keys);
        rove_world::load(
            &two_paths("1s", cc, "", "100pkt", 0.0, &tail),
            &rove_world::ParseOptions {
                source: "<test>",
                ..Default::default()
            },
        )
        .err()
        .map(|e| (e.location, e.message))
    };
    assert_eq!(load("", "sscc"), None);
    let (at, msg) = load("decay = 1.0", "sscc").unwrap();
    assert_eq!(at, "controllers[0].decay");
    assert!(msg.contains("0 < α < 1"), "{msg}");
    let (at, msg) = load("period = 0", "sscc").unwrap();
    assert_eq!(at, "controllers[0].period");
    assert!(msg.contains("whole number of Data Units"), "{msg}");
    let (at, msg) = load("initial = \"olia\"", "sscc").unwrap();
    assert_eq!(at, "controllers[0].initial");
    assert!(msg.contains("coupled"), "{msg}");
    let (at, msg) = load("every = \"1s\"", "sscc").unwrap();
    assert_eq!(at, "controllers[0].every");
    assert!(
        msg.contains("accepted: kind, flow, model, period, decay, initial"),
        "{msg}"
    );
    let (at, msg) = load("", "cubic").unwrap();
    assert_eq!(at, "controllers[0].flow");
    assert!(msg.contains("cc = \"sscc\""), "{msg}");
    let bad = model_set("bad", &[("olia", constant(0.9))]);
    let tail = selector(&bad, "");
    let e = rove_world::load(
        &two_paths("1s", "sscc", "", "100pkt", 0.0, &tail),
        &rove_world::ParseOptions {
            source: "<test>",
            ..Default::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.location, "controllers[0].model");
    assert!(e.message.contains("coupled algorithm"), "{}", e.message);
}

/// A `cc = "sscc"` flow that no `kind = "sscc"` controller names gets one with the defaults
/// (the built-in model set); a flow with one keeps only that one.
#[test]
fn a_sscc_flow_gets_its_selection_without_being_asked() {
    let w = common::world(&two_paths("1s", "sscc", "", "100pkt", 0.0, ""));
    let kinds: Vec<&str> = w.controllers.iter().flatten().map(|c| c.kind()).collect();
    assert_eq!(kinds, ["sscc"]);
    let m = model_set("implied", &[("bbr", constant(0.9))]);
    let w = common::world(&two_paths(
        "1s",
        "sscc",
        "",
        "100pkt",
        0.0,
        &selector(&m, ""),
    ));
    let kinds: Vec<&str> = w.controllers.iter().flatten().map(|c| c.kind()).collect();
    assert_eq!(kinds, ["sscc"]);
    let w = common::world(&two_paths(
        "1s",
        "olia_sbd",
        "detector = \"rfc8382\"",
        "100pkt",
        0.0,
        "",
    ));
    assert!(
        w.controllers.is_empty(),
        "OLIA* with detection alone: no selection"
    );
}

// ------------------------------------------------------------------------------------------
// The thesis's switching demo (Fig. 5.18) with the built-in model set.

/// The algorithm most of subflow `sub`'s Data Units in [t0, t1) s ran, and the counts.
fn majority(
    log: &FeatureLog,
    sub: i32,
    t0: f64,
    t1: f64,
) -> (&'static str, Vec<(&'static str, usize)>) {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for (t, cc) in timeline(log, sub) {
        if t >= t0 && t < t1 {
            match counts.iter_mut().find(|(c, _)| *c == cc) {
                Some((_, n)) => *n += 1,
                None => counts.push((cc, 1)),
            }
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1));
    (counts.first().map_or("", |c| c.0), counts)
}

/// Fig. 5.18 (seed 000 §4.6): one MPTCP download over a cellular path (RTT 40 ms, no loss) and
/// a WiFi path (RTT 100 ms) that loses 5 % of its packets from 10 to 20 s. The thesis: both
/// subflows start on CUBIC (no history), the cellular one then mostly runs C2TCP, and the WiFi
/// one switches to BBR during the lossy period. Here the paths have constant rates (20 and 10
/// Mbit/s; the thesis's saturatr traces are not available) and 1-BDP buffers (100 and 125 kB),
/// with `cc = "sscc"` as it comes (RFC 8382 detection, the built-in models, period 1).
/// Asserted: the WiFi subflow mostly runs a loss-tolerant algorithm (BBR, whose model of the
/// path ignores random loss) in 10-20 s and not before. The switches are printed.
///
/// Expected failure (strict): the WiFi subflow runs BBR most of the time before the lossy period
/// too. Measured (Data Units per algorithm, WiFi): 0-10 s BBR 242, C2TCP 78, CUBIC 9; 10-20 s
/// BBR 285, C2TCP 80, CUBIC 50; 20-30 s BBR 243, C2TCP 85, CUBIC 10 (222 switches in 30 s).
/// Cellular: C2TCP 279, Illinois 220, BBR 208 in 0-10 s and alike later (644 switches): C2TCP
/// most, as in the thesis. Suspected cause: the built-in models come from the default scale's
/// bootstrap, in which BBR earned the best mean reward (0.77 against 0.27-0.65, on 24 times more
/// Data Units than CUBIC: it keeps its rate under Table 5.4's random loss), so BBR's and C2TCP's
/// models lead on this 100-ms path whether or not it loses (mean predictions over the WiFi DUs
/// of 0-10 s: C2TCP 0.76, Illinois 0.66, BBR 0.50, Vegas 0.50, Westwood 0.46, CUBIC -0.49; of
/// 10-20 s: C2TCP 0.72, Illinois 0.66, BBR 0.64, ...; Algorithm 4 takes the maximum per DU, not
/// of the means). And the switching itself loses packets: with a prediction at every Data Unit
/// the choice flips between two candidates every few DUs, and each switch restarts the new
/// algorithm (BBR from STARTUP), so the subflows lose 10-14 % of their packets on paths without
/// random loss. Ablation (DU-mean loss fraction, cellular / WiFi in 0-10 s): any fixed
/// algorithm 0.001-0.009 / 0.020-0.028; `period = 1` 0.142 / 0.103; `period = 10` 0.109 /
/// 0.127; `period = 50` 0.002 / 0.037, and then the WiFi subflow runs BBR in 10-20 s (381 DUs,
/// CUBIC 0) but already mostly before (BBR 177, CUBIC 50). With the earlier, larger models (60
/// trees of depth 4) the WiFi subflow ran mostly C2TCP and BBR's share rose from 8 % to 30 % of
/// its DUs in the lossy period.
#[test]
#[should_panic(expected = "the WiFi subflow before the lossy period")]
fn a_lossy_wifi_period_switches_the_wifi_subflow_to_a_loss_tolerant_algorithm() {
    let text = format!(
        r#"duration = "30s"
seed = 1
[links.cell_down]
rate = "20Mbps"
delay = "20ms"
buffer = "100kB"
[links.cell_up]
rate = "1Gbps"
delay = "20ms"
[links.wifi_down]
rate = "10Mbps"
delay = "50ms"
buffer = "125kB"
[links.wifi_up]
rate = "1Gbps"
delay = "50ms"
[[flows]]
name = "mp"
cc = "sscc"
paths = [
  {{ path = ["cell_down"], ack_path = ["cell_up"] }},
  {{ path = ["wifi_down"], ack_path = ["wifi_up"] }},
]
[[actions]]
at = "10s"
link = "wifi_down"
loss = 0.05
[[actions]]
at = "20s"
link = "wifi_down"
loss = 0.0
{RECORDER}"#
    );
    let (w, s) = common::run(&text);
    let log = du_log(&w);
    for (sub, name) in [(0, "cellular"), (1, "WiFi")] {
        let mut last = "";
        let mut switches = Vec::new();
        for (t, cc) in timeline(log, sub) {
            if cc != last {
                switches.push(format!("{t:.2} s {cc}"));
                last = cc;
            }
        }
        eprintln!(
            "{name} subflow: {} switches: {}",
            switches.len().saturating_sub(1),
            switches.join(", ")
        );
        for (t0, t1) in [(0.0, 10.0), (10.0, 20.0), (20.0, 30.0)] {
            eprintln!("  {t0}-{t1} s: {:?}", majority(log, sub, t0, t1).1);
        }
    }
    eprintln!("goodput {:.2} Mbit/s", s.flows[0].goodput_mbps);
    let (before, _) = majority(log, 1, 0.0, 10.0);
    let (lossy, _) = majority(log, 1, 10.0, 20.0);
    assert_eq!(
        lossy, "bbr",
        "the WiFi subflow's algorithm during the lossy period"
    );
    assert_ne!(before, "bbr", "the WiFi subflow before the lossy period");
}
