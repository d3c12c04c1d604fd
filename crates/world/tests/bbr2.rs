//! BBRv2 (v2alpha) in whole scenarios (issue 4, item 1). The path is 10 Mbit/s with a 40 ms
//! two-way propagation delay: 833.3 packets of 1500 bytes per second, a BDP of 34.3 packets
//! (41.2 ms including one packet's serialization), 9.653 Mbit/s of payload.

use rove_world::{load, ParseOptions};

use crate::common;
use common::{rows, run};

/// Payload rate of the 10 Mbit/s link, Mbit/s.
const PAYLOAD_MBPS: f64 = 10.0 * 1448.0 / 1500.0;
/// BDP in packets: 833.3 pkt/s · (40 ms + 1.2 ms serialization).
const BDP_PKTS: f64 = 10e6 / 8.0 / 1500.0 * 0.0412;

/// One BBRv2 flow over 10 Mbit/s, 20 ms each way, a `buffer` deep bottleneck with random loss
/// `loss`, sampled every ms.
fn one_flow(duration: &str, buffer: &str, loss: f64, cc_params: &str) -> String {
    format!(
        r#"
duration = "{duration}"
sample_interval = "1ms"
[links.down]
rate = "10Mbps"
delay = "20ms"
buffer = "{buffer}"
loss = {loss}
[links.up]
rate = "1Gbps"
delay = "20ms"
[[flows]]
name = "f"
path = ["down"]
ack_path = ["up"]
cc = "bbr2"
cc_params = {{ {cc_params} }}
"#
    )
}

#[test]
fn one_bbr2_flow_with_a_deep_buffer_uses_over_90_percent_with_queueing_under_one_rtprop() {
    let (_, s) = run(&one_flow("60s", "5000pkt", 0.0, ""));
    let link = &s.links[0];
    let delay = link.queue_delay.mean_queue_delay_ms.unwrap();
    println!(
        "bbr2 deep buffer: utilization {:.4}, goodput {:.3} Mbit/s, mean queueing delay {delay:.2} ms (p95 {:.2} ms), drops {}, retrans {:.4}",
        link.utilization,
        s.flows[0].goodput_mbps,
        link.queue_delay.p95_queue_delay_ms.unwrap(),
        link.drops,
        s.flows[0].retrans_rate
    );
    assert!(link.utilization > 0.90, "utilization {}", link.utilization);
    assert!(delay < 40.0, "mean queueing delay {delay} ms, RTprop 40 ms");
}

#[test]
fn bbr2_with_the_default_loss_threshold_collapses_under_random_loss_and_with_20_percent_keeps_going(
) {
    // Thesis §4.3 (Fig. 4.9): BBRv2 with alpha = 2 % collapses above 2 % random loss; with
    // alpha = 20 % (beta = 0.3) it keeps about half the link at 10 % loss. Deep buffer (32 BDP).
    let buffer = "1100pkt";
    let goodput = |loss: f64, params: &str| {
        run(&one_flow("30s", buffer, loss, params)).1.flows[0].goodput_mbps
    };
    let mut at = vec![];
    for loss in [0.0, 0.01, 0.02, 0.05, 0.1] {
        let (g_def, g_20) = (goodput(loss, ""), goodput(loss, "loss_thresh = 0.2"));
        println!(
            "random loss {:>4.1} %: bbr2(alpha 2 %) {g_def:.3} Mbit/s ({:.1} % of the link), bbr2(alpha 20 %) {g_20:.3} Mbit/s ({:.1} %)",
            100.0 * loss,
            100.0 * g_def / PAYLOAD_MBPS,
            100.0 * g_20 / PAYLOAD_MBPS
        );
        at.push((loss, g_def, g_20));
    }
    let (_, g_def, g_20) = at[3]; // 5 %
    assert!(
        g_20 > 2.0 * g_def,
        "5 % loss: alpha 20 %: {g_20} Mbit/s, alpha 2 %: {g_def} Mbit/s"
    );
    assert!(
        g_def < 0.5 * PAYLOAD_MBPS,
        "alpha 2 % kept {g_def} Mbit/s at 5 % loss"
    );
    let (_, g_def, g_20) = at[4]; // 10 %
                                  // (At 10 % the result varies with the seed: 2.6-6.4 Mbit/s for alpha 20 % over seeds 1-6.)
    assert!(
        g_20 > 1.5 * g_def,
        "10 % loss: alpha 20 %: {g_20} Mbit/s, alpha 2 %: {g_def} Mbit/s"
    );
    // Without random loss alpha makes no difference to a lone flow in a deep buffer.
    let (_, g_def, g_20) = at[0];
    assert!(
        g_def > 0.9 * PAYLOAD_MBPS && g_20 > 0.9 * PAYLOAD_MBPS,
        "no loss: {g_def}, {g_20}"
    );
}

#[test]
fn bbr2_probe_bw_visits_down_cruise_refill_up_in_that_order() {
    let (w, _) = run(&one_flow("20s", "5000pkt", 0.0, ""));
    let f = &w.recorder.flows;
    let r = rows(f);
    // Runs of equal state among ProbeBW sub-states.
    let mut runs: Vec<(&str, usize, f64)> = vec![];
    for &i in &r {
        let st = f.cc_state[i];
        match runs.last_mut() {
            Some(last) if last.0 == st => last.1 += 1,
            _ => runs.push((st, 1, f.time_s[i])),
        }
    }
    let seq: Vec<&str> = runs.iter().map(|x| x.0).collect();
    println!(
        "states: {:?}",
        runs.iter()
            .take(24)
            .map(|x| (x.0, x.1, (x.2 * 1000.0).round() / 1000.0))
            .collect::<Vec<_>>()
    );
    for st in [
        "startup",
        "drain",
        "probe_bw_down",
        "probe_bw_cruise",
        "probe_bw_refill",
        "probe_bw_up",
    ] {
        assert!(seq.contains(&st), "never in {st}: {seq:?}");
    }
    // Every REFILL is followed by UP, every UP by DOWN (or PROBE_RTT); DOWN by CRUISE or REFILL.
    let cycle = [
        "probe_bw_down",
        "probe_bw_cruise",
        "probe_bw_refill",
        "probe_bw_up",
    ];
    let mut full_cycles = 0;
    for k in 0..seq.len().saturating_sub(1) {
        let (a, b) = (seq[k], seq[k + 1]);
        match a {
            "probe_bw_refill" => assert!(b == "probe_bw_up" || b == "probe_rtt", "{a} -> {b}"),
            "probe_bw_up" => assert!(b == "probe_bw_down" || b == "probe_rtt", "{a} -> {b}"),
            "probe_bw_down" => assert!(
                matches!(b, "probe_bw_cruise" | "probe_bw_refill" | "probe_rtt"),
                "{a} -> {b}"
            ),
            "probe_bw_cruise" => assert!(b == "probe_bw_refill" || b == "probe_rtt", "{a} -> {b}"),
            _ => {}
        }
        if k + 4 <= seq.len() && seq[k..k + 4] == cycle {
            full_cycles += 1;
        }
    }
    println!("{full_cycles} full DOWN-CRUISE-REFILL-UP cycles in 20 s");
    assert!(full_cycles >= 3, "{full_cycles} full cycles");
    // Cruising between probes lasts 2-3 s of wall clock or the Reno bound of
    // min(63, target inflight ~ 40) rounds (~1.6 s): at least one second.
    // (Cruises cut short by PROBE_RTT are left out.)
    for w in runs
        .windows(2)
        .filter(|w| w[0].0 == "probe_bw_cruise" && w[1].0 == "probe_bw_refill")
    {
        assert!(w[0].1 >= 1000, "cruise of {} ms at {:.3} s", w[0].1, w[0].2);
    }
}

#[test]
fn bbr2_probe_rtt_holds_cwnd_near_half_a_bdp_every_5s() {
    let (w, _) = run(&one_flow("12s", "5000pkt", 0.0, ""));
    let f = &w.recorder.flows;
    let r = rows(f);
    let entries: Vec<usize> = (1..r.len())
        .filter(|&k| f.cc_state[r[k]] == "probe_rtt" && f.cc_state[r[k - 1]] != "probe_rtt")
        .collect();
    let times: Vec<f64> = entries.iter().map(|&k| f.time_s[r[k]]).collect();
    println!("PROBE_RTT entered at {times:?}");
    assert!(!entries.is_empty(), "never in PROBE_RTT");
    let k = entries[0];
    let held = r[k..]
        .iter()
        .take_while(|&&i| f.cc_state[i] == "probe_rtt")
        .count();
    let cwnds: Vec<u32> = r[k..k + held].iter().map(|&i| f.cwnd_pkts[i]).collect();
    let min_cwnd = *cwnds.iter().min().unwrap();
    let max_cwnd = *cwnds.iter().max().unwrap();
    println!("first PROBE_RTT {held} ms, cwnd {min_cwnd}..{max_cwnd} packets (BDP {BDP_PKTS:.1}, half {:.1})", BDP_PKTS / 2.0);
    // bbr_probe_rtt_cwnd_gain 0.5: ceil(0.5 · 34.3) ~ 17-18 packets (not v1's 4).
    assert!(
        (0.4 * BDP_PKTS..=0.6 * BDP_PKTS).contains(&(max_cwnd as f64)),
        "cwnd {max_cwnd} in PROBE_RTT"
    );
    assert!(
        min_cwnd as f64 >= 0.4 * BDP_PKTS,
        "cwnd {min_cwnd} in PROBE_RTT"
    );
    assert!((200..400).contains(&held), "PROBE_RTT lasted {held} ms");
    // bbr_probe_rtt_win_ms = 5000: the first one within about 5 s of the start.
    assert!(times[0] < 5.5, "first PROBE_RTT at {} s", times[0]);
    if times.len() > 1 {
        let gap = times[1] - times[0];
        assert!((4.9..=5.6).contains(&gap), "PROBE_RTTs {gap} s apart");
    }
}

#[test]
fn bbr2_rejects_unknown_and_out_of_range_parameters() {
    for (params, key) in [
        ("alpha = 0.1", "alpha"),
        ("loss_thresh = 1.5", "loss_thresh"),
        ("beta = -0.1", "beta"),
    ] {
        let toml = one_flow("1s", "100pkt", 0.0, params);
        let err = load(
            &toml,
            &ParseOptions {
                source: "<test>",
                ..Default::default()
            },
        )
        .err()
        .expect("an error");
        let msg = format!("{err}");
        assert!(msg.contains(key), "{params}: {msg}");
    }
}
