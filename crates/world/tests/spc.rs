//! Subflow Population Control (`receiver = "spc"`, seed 003 Ch. 4) on the dissertation's static
//! setting (§4.5): one path of 25 ms one-way propagation (RTT_min 50 ms) at 20, 40 or 80 Mbit/s,
//! 20 subflows of uncoupled Cubic, CoDel (target 5 ms, interval 100 ms, rove's defaults) at the
//! bottleneck, against conventional MPTCP with 1, 5, 10 and 20 fixed subflows over the same
//! link. The ACK link mirrors the data link (rate, delay). Not given by the dissertation
//! ([UNSPECIFIED] in seed-003 §4.5), chosen here: 30 s per run, MSS 1448 B, CoDel's queue limit
//! rove's default (1000 packets). Delay is the application delay (a segment's first hand-over
//! to a subflow to its in-order delivery: network, recovery and reordering delay, as Fig. 4.5).

use crate::common;

use common::{rows, run};
use rove_world::{Summary, World};

/// Duration of each run, seconds.
const SECONDS: u32 = 30;

/// The Ch. 4 path at `mbps` (its queue as TOML lines) carrying one multipath flow of
/// `subflows` subflows; `receiver` is the flow's receiver lines (empty: a plain receiver).
fn ch4(mbps: u32, queue: &str, subflows: usize, receiver: &str) -> String {
    format!(
        r#"duration = "{SECONDS}s"
sample_interval = "100ms"
[links.down]
rate = "{mbps}Mbps"
delay = "25ms"
{queue}
[links.up]
rate = "{mbps}Mbps"
delay = "25ms"
[[flows]]
name = "mp"
cc = "cubic"
coupling = "uncoupled"
paths = [{{ path = ["down"], ack_path = ["up"], subflows = {subflows} }}]
{receiver}
"#
    )
}

const CODEL: &str = r#"queue = "codel""#;
const SPC: &str = r#"receiver = "spc""#;

/// What a run shows.
#[derive(Debug)]
struct Outcome {
    goodput_mbps: f64,
    delay_p95_ms: f64,
    delay_p99_ms: f64,
    delay_max_ms: f64,
    /// Share of 100-ms windows after the first second whose in-order goodput is at least 80 %
    /// of the link rate (the dissertation's "near-max utilisation", whose ceiling is 0.9).
    busy_share: f64,
    /// SPC: active subflows, time-averaged over the second half, and at the end.
    active_mean: Option<f64>,
    active_end: Option<f64>,
}

fn column<'a>(w: &'a World, name: &str) -> Option<&'a Vec<f64>> {
    w.recorder
        .flows
        .extra
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| c)
}

fn measure(mbps: u32, queue: &str, subflows: usize, receiver: &str) -> Outcome {
    let (w, s) = run(&ch4(mbps, queue, subflows, receiver));
    let o = outcome(&w, &s, mbps);
    println!("{mbps} Mbit/s, {queue}, {subflows} subflows, {receiver:?}: {o:?}");
    o
}

fn outcome(w: &World, s: &Summary, mbps: u32) -> Outcome {
    let f = &s.flows[0];
    let mp = f.multipath.as_ref().unwrap();
    let c = w.flows[0].transport.connection().unwrap();
    let series = &w.recorder.flows;
    let own: Vec<usize> = rows(series)
        .into_iter()
        .filter(|&i| series.subflow[i] == -1)
        .collect();
    let (mut windows, mut busy) = (0, 0);
    for pair in own.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if series.time_s[a] < 1.0 {
            continue;
        }
        let dt = series.time_s[b] - series.time_s[a];
        let mbit = (series.bytes_delivered[b] - series.bytes_delivered[a]) as f64 * 8.0 / 1e6;
        windows += 1;
        busy += (mbit / dt >= 0.8 * mbps as f64) as u32;
    }
    let active = column(w, "active_subflows").map(|col| {
        let half: Vec<f64> = own
            .iter()
            .filter(|&&i| series.time_s[i] >= SECONDS as f64 / 2.0)
            .map(|&i| col[i])
            .collect();
        half.iter().sum::<f64>() / half.len() as f64
    });
    Outcome {
        goodput_mbps: f.goodput_mbps,
        delay_p95_ms: mp.app_delay_p95_ms.unwrap(),
        delay_p99_ms: mp.app_delay_p99_ms.unwrap(),
        delay_max_ms: c.app_delay.max().unwrap() as f64 / 1e6,
        busy_share: busy as f64 / windows.max(1) as f64,
        active_mean: active,
        active_end: mp
            .receiver_telemetry
            .as_ref()
            .map(|t| t["active_subflows"]),
    }
}

/// Seed 003 §4.6 / Fig. 4.6: "Delay is bounded within 600 ms at all capacities": the largest
/// application delay of the run, at 40 and 80 Mbit/s (20 Mbit/s is the expected failure
/// below). The run also carries SPC's results: the `active_subflows` column and the summary's
/// `receiver_telemetry`.
#[test]
fn spc_keeps_the_application_delay_within_600_ms_at_40_and_80_mbps() {
    for mbps in [40, 80] {
        let o = measure(mbps, CODEL, 20, SPC);
        assert!(o.delay_max_ms <= 600.0, "{mbps} Mbit/s: {o:?}");
        assert!(o.active_end.is_some() && o.active_mean.is_some(), "{o:?}");
    }
}

/// Expected failure (strict). The same bound at 20 Mbit/s. Measured: largest application
/// delay 767.6 ms (p99 564.1 ms, p95 284.2 ms; 20 fixed subflows without SPC: 945.2 ms).
/// Suspected cause: SPC keeps all 20 subflows (the test of 3–4 subflows below), so at a BDP
/// of about 83 packets each Cubic subflow holds 4 or so; of the network CoDel's 663 drops a
/// few cost RTOs (4 over the run, none at 80 Mbit/s: too few packets in flight for three
/// duplicate ACKs), and the segments behind them wait in the reordering buffer. With 3–4
/// subflows, as in the dissertation, the windows would be large enough for fast retransmit.
#[test]
#[should_panic(expected = "delay within 600 ms at 20 Mbit/s")]
fn spc_keeps_the_application_delay_within_600_ms_at_20_mbps() {
    let o = measure(20, CODEL, 20, SPC);
    assert!(
        o.delay_max_ms <= 600.0,
        "delay within 600 ms at 20 Mbit/s: {o:?}"
    );
}

/// SPC against conventional MPTCP on the same CoDel link: less application delay than the 20
/// fixed subflows it starts from (p95 and p99), more goodput than one subflow (Fig. 4.5: one
/// subflow under-uses the link).
#[test]
fn spc_has_less_delay_than_twenty_fixed_subflows_and_more_goodput_than_one() {
    for mbps in [20, 40, 80] {
        let spc = measure(mbps, CODEL, 20, SPC);
        let twenty = measure(mbps, CODEL, 20, "");
        let one = measure(mbps, CODEL, 1, "");
        assert!(
            spc.delay_p95_ms < twenty.delay_p95_ms && spc.delay_p99_ms < twenty.delay_p99_ms,
            "{mbps} Mbit/s: SPC {spc:?} vs 20 fixed {twenty:?}"
        );
        assert!(
            spc.goodput_mbps > one.goodput_mbps,
            "{mbps} Mbit/s: SPC {spc:?} vs 1 subflow {one:?}"
        );
    }
}

/// Fig. 4.5's baselines, the shape the dissertation describes: with CoDel, more fixed subflows
/// mean more application delay (RTOs and reordering behind bursty CoDel losses); one subflow
/// has the least.
#[test]
fn fixed_subflows_over_codel_delay_grows_with_their_number() {
    for mbps in [20, 40, 80] {
        let p99: Vec<f64> = [1, 5, 10, 20]
            .iter()
            .map(|&n| measure(mbps, CODEL, n, "").delay_p99_ms)
            .collect();
        assert!(
            p99.windows(2).all(|w| w[0] < w[1]),
            "{mbps} Mbit/s: p99 for 1, 5, 10, 20 subflows: {p99:?}"
        );
    }
}

/// The receiver-side CoDel alone, without the network's: on a bufferbloated DropTail link
/// (10000 packets, §4.3's largest buffer: 3 s at 40 Mbit/s), SPC's intentional dup-ACKs keep
/// the application delay at a fraction of what 20 plain subflows fill the buffer to, at the
/// same goodput within 5 % (the plain subflows fill the buffer up to the connection's
/// 6 MiB receive window, 1.3 s at 40 Mbit/s).
#[test]
fn on_a_bloated_droptail_link_the_receiver_codel_holds_the_delay_down() {
    let bloated = r#"buffer = "10000pkt""#;
    let spc = measure(40, bloated, 20, SPC);
    let plain = measure(40, bloated, 20, "");
    assert!(
        spc.delay_p95_ms * 4.0 < plain.delay_p95_ms,
        "SPC {spc:?} vs plain {plain:?}"
    );
    assert!(
        spc.goodput_mbps > 0.95 * plain.goodput_mbps,
        "SPC {spc:?} vs plain {plain:?}"
    );
}

/// Expected failure (strict: the test fails if the assertion starts to hold). Seed 003 §4.6,
/// Fig. 4.6: "the number of subflows goes from 20 at start down to 3–4". Measured (second
/// half of each 30-s run, mean of the `active_subflows` column): 20.0 at 20, 40 and 80 Mbit/s. Suspected cause: a subflow leaves R_F when its
/// held segment is retransmitted, about one RTT after its dup-ACKs, while the
/// inverse-square-root schedule spaces the actions by ≥ interval/√cnt and every sample below
/// the target resets cnt: R_F holds 3.4, 2.3 and 1.9 subflows on average (20/40/80 Mbit/s),
/// so Algorithm 2 line 9 (switch one off) ran 5, 0 and 0 times in 30 s. The printed compounding law (`control_law =
/// "compounding"`, Δ ← Δ/√cnt) fills R_F within a few hundred ms and does switch subflows
/// off, but they come back on one per RTT whenever a sample falls below the target: the count
/// oscillates between 1 and 20 (docs/multipath.md has the ablation).
#[test]
#[should_panic(expected = "SPC settles at 3 to 4 subflows")]
fn spc_reduces_twenty_subflows_to_three_or_four() {
    let mut means = Vec::new();
    for mbps in [20, 40, 80] {
        means.push(measure(mbps, CODEL, 20, SPC).active_mean.unwrap());
    }
    assert!(
        means.iter().all(|&m| (3.0..=4.5).contains(&m)),
        "SPC settles at 3 to 4 subflows: mean active over the second half at 20/40/80 Mbit/s {means:?}"
    );
}

/// Fig. 4.6: "for more than 80 % of the simulation time, utilisation is almost at its
/// maximum" (here: a 100-ms window's in-order goodput ≥ 0.8 of the link rate).
#[test]
fn spc_keeps_utilisation_near_its_maximum_most_of_the_time() {
    for mbps in [40, 80] {
        let o = measure(mbps, CODEL, 20, SPC);
        assert!(o.busy_share > 0.8, "{mbps} Mbit/s: {o:?}");
    }
}

/// The ablation: the compounding law of Algorithm 2 as printed does switch subflows off
/// (fewer than 20 active on average), at a cost in goodput (below 80 % of the link).
#[test]
fn the_printed_compounding_law_switches_subflows_off_and_on() {
    let o = measure(
        40,
        CODEL,
        20,
        r#"receiver = "spc"
receiver_params = { control_law = "compounding" }"#,
    );
    assert!(o.active_mean.unwrap() < 18.0, "{o:?}");
    assert!(o.goodput_mbps < 0.8 * 40.0, "{o:?}");
}
