//! BBR v1's behaviour in whole scenarios, each against the expectation tcp_bbr.c's design sets
//! (issue 3, "Done when"). The path is 10 Mbit/s with a 40 ms two-way propagation delay:
//! 833.3 packets of 1500 bytes per second, a BDP of 34.3 packets (41.2 ms including one
//! packet's serialization), and 9.653 Mbit/s of payload (1448 of every 1500 bytes).

use rove_world::record::FlowSeries;

use crate::common;
use common::{rows, run};

/// Payload rate of the 10 Mbit/s link, bit/s.
const PAYLOAD_BPS: f64 = 10e6 * 1448.0 / 1500.0;
/// BDP in packets: 833.3 pkt/s · (40 ms + 1.2 ms serialization).
const BDP_PKTS: f64 = 10e6 / 8.0 / 1500.0 * 0.0412;

/// One BBR flow over 10 Mbit/s, 20 ms each way, a `buffer` deep bottleneck, sampled every ms.
fn one_flow(duration: &str, buffer: &str, cc_params: &str) -> String {
    format!(
        r#"
duration = "{duration}"
sample_interval = "1ms"
[links.down]
rate = "10Mbps"
delay = "20ms"
buffer = "{buffer}"
[links.up]
rate = "1Gbps"
delay = "20ms"
[[flows]]
name = "f"
path = ["down"]
ack_path = ["up"]
cc = "bbr"
cc_params = {{ {cc_params} }}
"#
    )
}

/// Index (into `rows`) of the first row whose cc_state is `state`.
fn first_in(f: &FlowSeries, rows: &[usize], state: &str) -> usize {
    rows.iter()
        .position(|&i| f.cc_state[i] == state)
        .unwrap_or_else(|| panic!("never in {state}"))
}

/// Packet-timed rounds (as BBR counts them) completed between rows `from` and `to`: a round
/// ends when everything in flight at its start has been acknowledged (no losses here, so
/// snd_nxt = snd_una + inflight · MSS in bytes).
fn rounds_between(f: &FlowSeries, rows: &[usize], from: usize, to: usize) -> u32 {
    let mut rounds = 0;
    let mut round_end = f.bytes_acked[rows[from]] + f.inflight_pkts[rows[from]] as u64 * 1448;
    for &i in &rows[from + 1..=to] {
        if f.bytes_acked[i] >= round_end {
            rounds += 1;
            round_end = f.bytes_acked[i] + f.inflight_pkts[i] as u64 * 1448;
        }
    }
    rounds
}

/// Rows of flow 0 from index `from` on that stay in `state`.
fn run_length(f: &FlowSeries, rows: &[usize], from: usize, state: &str) -> usize {
    rows[from..]
        .iter()
        .take_while(|&&i| f.cc_state[i] == state)
        .count()
}

#[test]
fn bbr_leaves_startup_within_three_rounds_of_the_bandwidth_plateau() {
    let (w, _) = run(&one_flow("2s", "5000pkt", ""));
    let f = &w.recorder.flows;
    let r = rows(f);
    // The plateau: the first delivery-rate sample at the link's rate (within 5 %).
    let plateau = r
        .iter()
        .position(|&i| f.delivery_rate_bps[i] >= 0.95 * PAYLOAD_BPS)
        .expect("reaches the link rate");
    let drain = first_in(f, &r, "drain");
    assert!(
        r[..plateau].iter().all(|&i| f.cc_state[i] != "drain"),
        "left STARTUP before the plateau"
    );
    // tcp_bbr.c: full bandwidth is reached after 3 round starts without 25 % growth, so
    // STARTUP ends at most three rounds after the round that reached the plateau.
    let rounds = rounds_between(f, &r, plateau, drain);
    println!(
        "plateau at {:.3} s, DRAIN at {:.3} s: {rounds} rounds (srtt {:.1} ms)",
        f.time_s[r[plateau]], f.time_s[r[drain]], f.srtt_ms[r[drain]]
    );
    assert!(
        (1..=3).contains(&rounds),
        "STARTUP ended {rounds} rounds after the plateau"
    );
}

#[test]
fn bbr_drains_the_startup_queue_to_about_one_bdp_in_flight() {
    // Start PROBE_BW at a cruising phase, so that inflight right after DRAIN is not already
    // being raised by the 1.25 phase.
    let (w, _) = run(&one_flow("2s", "5000pkt", "cycle_start = 2"));
    let f = &w.recorder.flows;
    let l = &w.recorder.links;
    let r = rows(f);
    let drain = first_in(f, &r, "drain");
    let probe_bw = first_in(f, &r, "probe_bw");
    let peak = r[..drain]
        .iter()
        .map(|&i| f.inflight_pkts[i])
        .max()
        .unwrap();
    // Each sample has one row for the flow and one per link (down, up): the bottleneck's row
    // of flow row i is 2i.
    let queue_at_drain = l.backlog_pkts[2 * r[drain]];
    let inflight = f.inflight_pkts[r[probe_bw]];
    let queue = l.backlog_pkts[2 * r[probe_bw]];
    println!(
        "STARTUP peak inflight {peak} ({:.2} BDP); DRAIN {:.3}-{:.3} s; inflight at PROBE_BW {inflight} ({:.2} BDP), queue {queue} pkts (was {queue_at_drain})",
        peak as f64 / BDP_PKTS,
        f.time_s[r[drain]],
        f.time_s[r[probe_bw]],
        inflight as f64 / BDP_PKTS
    );
    // STARTUP's cwnd gain of 2.89 put about 3 BDP in flight, most of it queued.
    assert!(peak as f64 > 2.5 * BDP_PKTS, "peak inflight {peak}");
    // DRAIN ends when inflight is one BDP plus the quantization budget (34 + 6 packets).
    assert!(
        (inflight as f64 / BDP_PKTS - 1.0).abs() <= 0.25,
        "inflight {inflight} at the end of DRAIN"
    );
    assert!(
        queue_at_drain > 50,
        "STARTUP queued only {queue_at_drain} packets"
    );
    assert!(queue <= 10, "queue of {queue} packets left after DRAIN");
    // It takes about one round at pacing gain 1/2.89 (the round is ~125 ms with STARTUP's queue).
    let drain_s = f.time_s[r[probe_bw]] - f.time_s[r[drain]];
    assert!(drain_s < 0.2, "DRAIN lasted {drain_s} s");
}

#[test]
fn bbr_probe_bw_cycles_pacing_gain_five_quarters_three_quarters_then_one_six_times() {
    let (w, _) = run(&one_flow("9s", "5000pkt", ""));
    let f = &w.recorder.flows;
    let r: Vec<usize> = rows(f)
        .into_iter()
        .filter(|&i| f.time_s[i] >= 2.0 && f.cc_state[i] == "probe_bw")
        .collect();
    // Runs of equal pacing rate: (rate, ms).
    let mut runs: Vec<(f64, usize)> = vec![];
    for &i in &r {
        match runs.last_mut() {
            Some(last) if last.0 == f.pacing_rate_bps[i] => last.1 += 1,
            _ => runs.push((f.pacing_rate_bps[i], 1)),
        }
    }
    let runs = &runs[1..runs.len() - 1]; // whole runs only
                                         // The unity rate: btl_bw is the link's 833.3 packets/s, paced at 1448 bytes each, less
                                         // 1 %: 9.557 Mbit/s (the kernel's fixed point gives 1_194_598 B/s).
    let unity = 1_194_598.0 * 8.0;
    assert!((unity / (PAYLOAD_BPS * 0.99) - 1.0).abs() < 0.001);
    let gain = |rate: f64| rate / unity;
    let gains: Vec<f64> = runs
        .iter()
        .map(|x| (gain(x.0) * 1000.0).round() / 1000.0)
        .collect();
    println!(
        "gain runs: {:?}",
        runs.iter()
            .take(6)
            .map(|x| (gain(x.0), x.1))
            .collect::<Vec<_>>()
    );
    // The cycle, from wherever it started: 1.25, 0.75, then 1 (six phases in one run).
    let start = gains
        .iter()
        .position(|&g| g == 1.25)
        .expect("a probing phase");
    let cycles = (gains.len() - start) / 3;
    assert!(cycles >= 15, "{cycles} cycles in 7 s");
    for c in 0..cycles {
        let k = start + 3 * c;
        assert_eq!(
            &gains[k..k + 3],
            &[1.25, 0.75, 1.0],
            "cycle {c}: {:?}",
            &gains[k..k + 3]
        );
        // A phase lasts about min_rtt (40 ms): probing at least that, draining at most that
        // (it stops early at one BDP in flight), cruising six phases.
        let (probe, drain, cruise) = (runs[k].1, runs[k + 1].1, runs[k + 2].1);
        assert!((40..=60).contains(&probe), "probe phase {probe} ms");
        assert!((10..=45).contains(&drain), "drain phase {drain} ms");
        assert!((6 * 40..=6 * 45).contains(&cruise), "cruise {cruise} ms");
    }
}

#[test]
fn bbr_enters_probe_rtt_after_10s_without_a_new_min_rtt_and_holds_4_packets_for_200ms() {
    let (w, _) = run(&one_flow("11s", "5000pkt", ""));
    let f = &w.recorder.flows;
    let r = rows(f);
    let established = w.flows[0].transport.sender(0).stats.established_at.unwrap() as f64 / 1e9;
    // BBR's min_rtt is the handshake's 40.05 ms (a 60-byte SYN); data packets add 1.2 ms of
    // serialization, so no later sample matches it and the filter expires 10 s after init.
    let k = first_in(f, &r, "probe_rtt");
    let entered = f.time_s[r[k]] - established;
    let held = run_length(f, &r, k, "probe_rtt");
    let at_four = r[k..k + held]
        .iter()
        .filter(|&&i| f.inflight_pkts[i] <= 4)
        .count();
    println!("PROBE_RTT {entered:.3} s after init, for {held} ms ({at_four} ms at <= 4 packets in flight)");
    assert!(
        (10.0..10.05).contains(&entered),
        "entered PROBE_RTT {entered} s after init"
    );
    assert!(
        r[k..k + held].iter().all(|&i| f.cwnd_pkts[i] == 4),
        "cwnd must be 4 packets throughout"
    );
    // At least 200 ms at 4 packets in flight (and one round), after inflight drained to 4.
    assert!(at_four >= 200, "{at_four} ms at 4 packets");
    assert!(held < 400, "PROBE_RTT lasted {held} ms");
    // Then back to PROBE_BW with the cwnd saved on entry.
    let after = r[k + held];
    assert_eq!(f.cc_state[after], "probe_bw");
    assert!(
        f.cwnd_pkts[after] as f64 > 2.0 * BDP_PKTS,
        "cwnd {} after PROBE_RTT",
        f.cwnd_pkts[after]
    );
}

#[test]
fn one_bbr_flow_with_a_deep_buffer_keeps_queueing_delay_under_one_rtprop_at_over_90_percent() {
    // Buffer 5000 packets: ~150 BDP. A loss-based flow would fill it (6 s of queue).
    let (_, s) = run(&one_flow("60s", "5000pkt", ""));
    let link = &s.links[0];
    let delay = link.queue_delay.mean_queue_delay_ms.unwrap();
    println!(
        "mean queueing delay {delay:.2} ms (p95 {:.2} ms), utilization {:.4}, goodput {:.3} Mbit/s, drops {}",
        link.queue_delay.p95_queue_delay_ms.unwrap(),
        link.utilization,
        s.flows[0].goodput_mbps,
        link.drops
    );
    assert!(delay < 40.0, "mean queueing delay {delay} ms, RTprop 40 ms");
    assert!(link.utilization > 0.90, "utilization {}", link.utilization);
    assert_eq!(link.drops, 0);
}

#[test]
fn two_bbr_flows_share_a_bottleneck_fairly() {
    // Jain's index >= 0.95 over the last 30 s of a 60 s run, the second flow starting 2 s late.
    let toml = r#"
duration = "60s"
[links.down]
rate = "20Mbps"
delay = "20ms"
buffer = "140pkt"
[links.up]
rate = "1Gbps"
delay = "20ms"
[[flows]]
name = "a"
path = ["down"]
ack_path = ["up"]
cc = "bbr"
[[flows]]
name = "b"
path = ["down"]
ack_path = ["up"]
cc = "bbr"
start = "2s"
"#;
    let (w, s) = run(toml);
    let g: Vec<f64> = (0..2)
        .map(|i| w.goodput_mbps_between(i, 30.0, 60.0))
        .collect();
    let jain = (g[0] + g[1]).powi(2) / (2.0 * (g[0] * g[0] + g[1] * g[1]));
    println!(
        "goodputs {g:?} Mbit/s, Jain {jain:.4}, utilization {:.3}",
        s.links[0].utilization
    );
    assert!(jain >= 0.95, "Jain's index {jain}: {g:?}");
    assert!(g[0] + g[1] > 0.9 * 20.0 * 1448.0 / 1500.0, "{g:?}");
}

#[test]
fn bbr_takes_most_of_a_shallow_buffer_against_cubic_and_cubic_most_of_a_deep_one() {
    // 20 Mbit/s, 40 ms: BDP = 66.7 packets. The pattern reported for Linux (e.g. Hock et al.,
    // ICNP 2017; Ware et al., IMC 2019): in a shallow buffer BBR's model-based rate ignores
    // CUBIC's losses and dominates; in a deep one CUBIC fills the queue, BBR's cwnd cap of
    // 2·BDP (with an inflated min_rtt) leaves it the smaller share.
    let pair = |buffer: &str| {
        format!(
            r#"
duration = "60s"
[links.down]
rate = "20Mbps"
delay = "20ms"
buffer = "{buffer}"
[links.up]
rate = "1Gbps"
delay = "20ms"
[[flows]]
name = "bbr"
path = ["down"]
ack_path = ["up"]
cc = "bbr"
[[flows]]
name = "cubic"
path = ["down"]
ack_path = ["up"]
cc = "cubic"
"#
        )
    };
    for (buffer, bdps) in [("33pkt", 0.5), ("1067pkt", 16.0)] {
        let (w, _) = run(&pair(buffer));
        let (bbr, cubic) = (
            w.goodput_mbps_between(0, 30.0, 60.0),
            w.goodput_mbps_between(1, 30.0, 60.0),
        );
        println!("{bdps} BDP buffer: BBR {bbr:.2} Mbit/s, CUBIC {cubic:.2} Mbit/s");
        if bdps < 1.0 {
            assert!(
                bbr > 2.0 * cubic,
                "shallow buffer: BBR {bbr}, CUBIC {cubic}"
            );
        } else {
            assert!(cubic > 2.0 * bbr, "deep buffer: BBR {bbr}, CUBIC {cubic}");
        }
    }
}
