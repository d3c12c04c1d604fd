//! MPTCP-BBR (`cc = "mpbbr"`, crates/tcp/src/cc/coupled/mpbbr.rs) in whole runs: a lone
//! subflow is BBR sample for sample, and the bottleneck fairness seed 001 claims (§5 Q2, Q3)
//! on its Table I topologies, the committed `scenarios/bccps/table1-shared.toml` (two subflows
//! and one single-path BBR flow through one 10 Mbit/s bottleneck, 40 ms RTT, 0.1 % loss, 1-BDP
//! buffer) and `table1-disjoint.toml` (each subflow with its own BBR flow at its own
//! bottleneck).
//!
//! Each ratio is the median over five seeds of 60-s runs (the summary's run length), taken over
//! 10–60 s so that STARTUP is left out; the band is the summary's 0.85–1.15.

use crate::common;
use common::{rows, run};
use rove_world::World;

const SEEDS: std::ops::RangeInclusive<u64> = 1..=5;

/// A committed BCCPS scenario whose connection (its first flow) runs `cc` with `coupling` and
/// `cc_params = { params }`, with `seed`; `extra` is appended (actions).
fn bccps(file: &str, cc: &str, coupling: &str, params: &str, seed: u64, extra: &str) -> String {
    let path = format!(
        "{}/../../scenarios/bccps/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let base = std::fs::read_to_string(path).unwrap();
    assert!(base.contains("seed = 1\n") && base.contains("duration = \"60s\""));
    let s = base
        .replacen(
            "cc = \"bbr\"\n",
            &format!("cc = \"{cc}\"\ncoupling = \"{coupling}\"\ncc_params = {{ {params} }}\n"),
            1,
        )
        .replace("seed = 1\n", &format!("seed = {seed}\n"));
    format!("{s}\n{extra}")
}

/// Goodput (Mbit/s) of flow `flow` over 10–60 s.
fn goodput(w: &World, flow: usize) -> f64 {
    w.goodput_mbps_between(flow, 10.0, 60.0)
}

/// The connection's goodput over the single-path BBR flow's at the shared bottleneck.
fn shared_ratio(cc: &str, coupling: &str, params: &str, seed: u64) -> f64 {
    let (w, _) = run(&bccps("table1-shared.toml", cc, coupling, params, seed, ""));
    goodput(&w, 0) / goodput(&w, 1)
}

/// The connection's goodput over BBR0 + BBR1's on the disjoint bottlenecks.
fn disjoint_ratio(cc: &str, coupling: &str, seed: u64) -> f64 {
    let (w, _) = run(&bccps("table1-disjoint.toml", cc, coupling, "", seed, ""));
    goodput(&w, 0) / (goodput(&w, 1) + goodput(&w, 2))
}

/// The median of `f` over [`SEEDS`], printed with every value.
fn median(what: &str, f: impl Fn(u64) -> f64) -> f64 {
    let mut v: Vec<f64> = SEEDS.map(f).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v[v.len() / 2];
    eprintln!("{what}: median {m:.3} of {v:.3?}");
    m
}

/// Every sampled row of (flow 0, `subflow`) as (cwnd, inflight, pacing rate, bytes acked).
fn trajectory(w: &World, subflow: i32) -> Vec<(u32, u32, u64, u64)> {
    let f = &w.recorder.flows;
    (0..f.time_s.len())
        .filter(|&i| f.flow[i] == 0 && f.subflow[i] == subflow)
        .map(|i| {
            (
                f.cwnd_pkts[i],
                f.inflight_pkts[i],
                f.pacing_rate_bps[i].to_bits(),
                f.bytes_acked[i],
            )
        })
        .collect()
}

#[test]
fn a_lone_mpbbr_subflow_is_bbr_sample_for_sample() {
    // A single-path flow (its algorithm built without a coupling slot), against BBR and a
    // 0.1 %-lossy 1-BDP bottleneck shared with a CUBIC flow.
    let one = |cc: &str| {
        common::bottleneck(
            "30s",
            "",
            "rate = \"10Mbps\"\ndelay = \"20ms\"\nbuffer = \"34pkt\"\nloss = 0.001",
            &[("f", cc, ""), ("g", "cubic", "")],
        )
    };
    let (bbr, sb) = run(&one("bbr"));
    let (mp, sm) = run(&one("mpbbr"));
    assert!(rows(&mp.recorder.flows)
        .iter()
        .all(|&i| mp.recorder.flows.cc[i] == "mpbbr"));
    assert_eq!(trajectory(&mp, -1), trajectory(&bbr, -1));
    assert!(trajectory(&bbr, -1).len() > 2000);
    assert_eq!(sm.flows[0].goodput_mbps, sb.flows[0].goodput_mbps);
    assert_eq!(sm.flows[1].goodput_mbps, sb.flows[1].goodput_mbps);
    // A connection's subflows, each alone: uncoupled, or coupled over the connection but
    // moved into groups of their own before the first packet.
    let split = "[[actions]]\nat = \"0s\"\nflow = \"mptcp\"\nsubflow = 1\ncoupling_group = 1\n";
    let (bbr, _) = run(&bccps("table1-shared.toml", "bbr", "uncoupled", "", 1, ""));
    for (coupling, extra) in [("uncoupled", ""), ("connection", split)] {
        let (mp, _) = run(&bccps(
            "table1-shared.toml",
            "mpbbr",
            coupling,
            "",
            1,
            extra,
        ));
        for sub in [0, 1] {
            assert_eq!(trajectory(&mp, sub), trajectory(&bbr, sub), "{coupling}");
        }
        assert_eq!(goodput(&mp, 0), goodput(&bbr, 0), "{coupling}");
    }
}

/// Expected failure (strict: the test fails if the assertion starts to hold). Seed 001 §5 Q2:
/// at the shared bottleneck, MPTCP-BBR coupled over the connection (the true grouping) takes
/// 0.85–1.15 of the competing single-path BBR flow's goodput. Measured: median 0.28 over seeds
/// 1–5 (the pair about 2.3 Mbit/s against BBR's 7.2). None of the [GAP] choices is the cause
/// (`the_shared_bottleneck_shortfall_is_alphas` measures the ablations: cwnd_cap = "bdp" 0.09,
/// phase_len = "own" 0.28, rtt_prime = "own" 0.27, lt_bw = false 0.29, align_phases 0.27);
/// α itself is. Eq. (6) assumes max_r BtlBW_r is what one BBR flow would get at the
/// bottleneck, but BtlBW_r is BBR's max-filtered *delivery* rate: pacing the cruise phases at
/// α·BtlBW_r < BtlBW_r, each subflow delivers less, and only its own 1.25 phase can hold its
/// estimate up, against a competitor that cruises at its full estimate. A fluid argument (n
/// members at a, one BBR flow at b = C − a, α = 1/n) says a member's probe keeps its estimate
/// only while a ≤ 0.25·C/(1.25 − 1/n) = C/3 for n = 2, and the queue's overflow losses push it
/// lower: measured (seed 1), the subflows' BtlBW average 1.7 and 1.5 Mbit/s while BBR's climbs
/// to 8.2 (against 4.1, 3.4 and 3.6 when the subflows are uncoupled BBR).
#[test]
#[should_panic(expected = "MPTCP-BBR takes one BBR share at the shared bottleneck")]
fn at_the_shared_bottleneck_mpbbr_takes_one_bbr_share() {
    let m = median("mpbbr, connection", |s| {
        shared_ratio("mpbbr", "connection", "", s)
    });
    assert!(
        (0.85..=1.15).contains(&m),
        "MPTCP-BBR takes one BBR share at the shared bottleneck: median ratio {m:.3}"
    );
}

#[test]
fn at_the_shared_bottleneck_lia_and_balia_take_less_than_mpbbr() {
    // Seed 001 §5 Q2's ordering: MPTCP-BBR > BALIA, LIA (coupled over the connection, minRTT
    // scheduler), all against the single-path BBR flow. Measured medians: 0.28, 0.10, 0.09.
    let mpbbr = median("mpbbr, connection", |s| {
        shared_ratio("mpbbr", "connection", "", s)
    });
    for cc in ["lia", "balia"] {
        let m = median(cc, |s| shared_ratio(cc, "connection", "", s));
        assert!(m < mpbbr, "{cc}: {m:.3} against mpbbr's {mpbbr:.3}");
    }
}

#[test]
fn on_disjoint_bottlenecks_uncoupled_mpbbr_takes_bbr0_plus_bbr1() {
    // Seed 001 §5 Q3: each subflow alone in its group (the true grouping) is BBR, and takes
    // about what the BBR flow sharing its bottleneck takes. Measured: median 1.00.
    let m = median("mpbbr, uncoupled, disjoint", |s| {
        disjoint_ratio("mpbbr", "uncoupled", s)
    });
    assert!((0.85..=1.15).contains(&m), "median ratio {m:.3}");
}

/// Mean over 10–60 s of telemetry column `name` of flow `flow`'s rows for `subflow`.
fn mean_column(w: &World, name: &str, flow: u32, subflow: i32) -> f64 {
    let f = &w.recorder.flows;
    let col = &f.extra.iter().find(|(n, _)| *n == name).unwrap().1;
    let v: Vec<f64> = (0..f.time_s.len())
        .filter(|&i| f.flow[i] == flow && f.subflow[i] == subflow && f.time_s[i] >= 10.0)
        .map(|i| col[i])
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn the_shared_bottleneck_shortfall_is_alphas() {
    // The ablations of the expected failure above: no [GAP] choice brings the ratio near one
    // BBR share (measured medians: cwnd_cap = "bdp" 0.09, phase_len = "own" 0.28, rtt_prime =
    // "own" 0.27, lt_bw = false 0.29, align_phases = true 0.27) ...
    for params in [
        "cwnd_cap = \"bdp\"",
        "phase_len = \"own\"",
        "rtt_prime = \"own\"",
        "lt_bw = false",
        "align_phases = true",
    ] {
        let m = median(params, |s| shared_ratio("mpbbr", "connection", params, s));
        assert!(m < 0.5, "{params}: {m:.3}");
    }
    // ... while without α (each subflow alone: uncoupled BBR) the pair takes more than the
    // band allows, up to two shares (measured median 1.57, from 1.18 to 2.06).
    let m = median("mpbbr, uncoupled", |s| {
        shared_ratio("mpbbr", "uncoupled", "", s)
    });
    assert!(m > 1.15, "uncoupled: {m:.3}");
    // The mechanism: coupled, the subflows' BtlBW estimates (what α divides) fall far below
    // the BBR flow's (measured: 1.7 and 1.5 against 8.2 Mbit/s); uncoupled, the three are alike
    // (4.1, 3.4, 3.6).
    let bw = |coupling| {
        let (w, _) = run(&bccps("table1-shared.toml", "mpbbr", coupling, "", 1, ""));
        let bw = [(0, 0), (0, 1), (1, -1)].map(|(f, s)| mean_column(&w, "bbr_bw_bps", f, s) / 1e6);
        eprintln!("{coupling}: mean BtlBW subflow 0, subflow 1, BBR: {bw:.2?} Mbit/s");
        bw
    };
    let coupled = bw("connection");
    assert!(coupled[0].max(coupled[1]) < 0.3 * coupled[2], "{coupled:?}");
    let alone = bw("uncoupled");
    assert!(alone[0].max(alone[1]) > 0.7 * alone[2], "{alone:?}");
    assert!(alone[0].min(alone[1]) < 1.4 * alone[2], "{alone:?}");
}
