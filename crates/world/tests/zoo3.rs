//! The cellular and research algorithms of the zoo (issue 12 item 2, part): Copa and C2TCP,
//! each against the baseline its design argues with, in whole runs; and both on multipath
//! subflows and switched to and from mid-connection. Their arithmetic is unit-tested in
//! crates/tcp/src/cc/{copa,c2tcp}.rs.

use crate::common;

use common::{bottleneck, goodput_between, mean_queue_ms, run, run_on_two_subflows, run_switched};
use rove_world::{Summary, World};

/// Mean of link 0's backlog (packets) over the rows in [t0, t1] s.
fn mean_backlog_pkts(w: &World, t0: f64, t1: f64) -> f64 {
    let l = &w.recorder.links;
    let v: Vec<f64> = (0..l.time_s.len())
        .filter(|&i| l.link[i] == 0 && (t0..=t1).contains(&l.time_s[i]))
        .map(|i| l.backlog_pkts[i] as f64)
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// One flow over a 20 Mbit/s bottleneck, 60 ms RTT (BDP 100 packets), with a deep 1000-packet
/// buffer; the world (with 10 ms samples) and its summary.
fn fixed_link(cc: &str, params: &str) -> (World, Summary) {
    run(&bottleneck(
        "30s",
        "sample_interval = \"10ms\"",
        "rate = \"20Mbps\"\ndelay = \"40ms\"\nbuffer = \"1000pkt\"",
        &[("f", cc, params)],
    ))
}

#[test]
fn copa_keeps_its_standing_queue_near_one_over_delta_packets_at_high_utilisation() {
    let (w, s) = fixed_link("copa", "");
    let q = mean_backlog_pkts(&w, 5.0, 30.0);
    let util = s.links[0].utilization;
    let (wd, sd) = fixed_link("copa", "delta = 0.1");
    let qd = mean_backlog_pkts(&wd, 5.0, 30.0);
    let (wc, sc) = fixed_link("cubic", "");
    let qc = mean_backlog_pkts(&wc, 5.0, 30.0);
    eprintln!(
        "copa δ=0.5: {q:.2} pkts queued, {:.1} ms, util {util:.3}, {:.2} Mbit/s; δ=0.1: {qd:.2} pkts, util {:.3}; cubic: {qc:.1} pkts, {:.0} ms",
        mean_queue_ms(&s),
        s.flows[0].goodput_mbps,
        sd.links[0].utilization,
        mean_queue_ms(&sc)
    );
    // The paper's equilibrium is λ·d_q = 1/δ = 2 packets queued, the window oscillating around
    // it with the queue emptying every few RTTs (§2.2). Measured: mean backlog 2.57 packets
    // (5-30 s; 3.4 ms of queueing delay), utilisation 0.980 (18.9 Mbit/s); CUBIC fills the
    // buffer (mean 800 packets, 420 ms). (With the paper's 3-RTT velocity rule: 3.19 packets,
    // utilisation 0.923.)
    assert!((1.0..=5.0).contains(&q), "Copa's mean queue {q} packets");
    assert!(util > 0.88, "Copa's utilisation {util}");
    assert!(qc > 50.0 * q, "CUBIC {qc} vs Copa {q} packets");
    // The queue follows 1/δ: δ = 0.1 (1/δ = 10) keeps more packets queued (measured: 12.8,
    // utilisation 0.967; with the 3-RTT rule 11.1 and 0.736, its five times larger steps
    // swinging the window between 40 and 160 packets).
    assert!(qd > 2.5 * q && qd < 25.0, "δ = 0.1: {qd} packets vs {q}");
}

/// Copa (with `params`) and CUBIC sharing a 20 Mbit/s, 60 ms RTT bottleneck with a one-BDP
/// (100-packet) buffer for 60 s: (Copa's and CUBIC's goodput over 10-60 s, the share of
/// Copa's samples in competitive mode over 10-60 s).
fn against_cubic(params: &str) -> (f64, f64, f64) {
    let (w, _) = run(&bottleneck(
        "60s",
        "sample_interval = \"10ms\"",
        "rate = \"20Mbps\"\ndelay = \"40ms\"\nbuffer = \"100pkt\"",
        &[("c", "copa", params), ("k", "cubic", "")],
    ));
    let f = &w.recorder.flows;
    let rows: Vec<usize> = (0..f.time_s.len())
        .filter(|&i| f.flow[i] == 0 && f.time_s[i] > 10.0)
        .collect();
    let competitive = rows
        .iter()
        .filter(|&&i| f.cc_state[i] == "competitive")
        .count() as f64
        / rows.len() as f64;
    (
        goodput_between(f, 0, 10.0, 60.0),
        goodput_between(f, 1, 10.0, 60.0),
        competitive,
    )
}

#[test]
fn copa_switches_to_competitive_mode_against_cubic() {
    let (copa, cubic, comp) = against_cubic("");
    let (copa_d, cubic_d, comp_d) = against_cubic("mode = \"default\"");
    eprintln!("auto: copa {copa:.2} cubic {cubic:.2} Mbit/s, competitive {comp:.2}; default only: copa {copa_d:.2} cubic {cubic_d:.2}, competitive {comp_d:.2}");
    // CUBIC keeps the queue from emptying, so Copa runs competitive most of the time
    // (measured: 92 % of samples, 6.10 against 13.20 Mbit/s) ...
    assert!(comp > 0.7, "competitive {comp}");
    // ... where Copa with δ held at 0.5 is starved (measured: 1.17 against 18.14 Mbit/s).
    assert_eq!(comp_d, 0.0);
    assert!(copa_d < 0.2 * cubic_d, "{copa_d} vs {cubic_d}");
    assert!(copa > 4.0 * copa_d, "{copa} vs {copa_d}");
    // Ablation for the expected failure below: with the paper's 3-RTT velocity rule Copa keeps
    // more than half of CUBIC's goodput (measured: 7.88 against 11.43 Mbit/s).
    let (copa3, cubic3, _) = against_cubic("velocity_rtts = 3");
    eprintln!("velocity_rtts = 3: copa {copa3:.2} cubic {cubic3:.2} Mbit/s");
    assert!(copa3 > 0.5 * cubic3, "{copa3} vs {cubic3}");
}

/// Expected failure (strict: the test fails if the assertion starts to hold). In competitive
/// mode Copa should keep a reasonable share against CUBIC, here at least half of CUBIC's
/// goodput. Measured with genericCC's velocity rule (doubling after 2 RTTs, the default since
/// it is the code Pantheon runs): 6.10 against 13.20 Mbit/s (0.46). Suspected cause: the
/// faster velocity growth makes Copa's window overshoot and fall back harder each time CUBIC
/// fills the buffer; with the paper's 3-RTT rule the same run gives 0.69 (the ablation in the
/// test above).
#[test]
#[should_panic(expected = "Copa keeps half of CUBIC's goodput")]
fn copa_keeps_half_of_cubics_goodput_against_it() {
    let (copa, cubic, _) = against_cubic("");
    assert!(
        copa > 0.5 * cubic,
        "Copa keeps half of CUBIC's goodput: {copa} vs {cubic}"
    );
}

/// One flow on a cellular link (`trace`, 20 ms one way each direction) with a deep
/// 1000-packet buffer, 60 s: (goodput Mbit/s, mean queueing delay ms, p95 RTT ms).
fn cellular(trace: &str, cc: &str) -> (f64, f64, f64) {
    let (_, s) = run(&bottleneck(
        "60s",
        "",
        &format!("trace = \"{trace}\"\ndelay = \"20ms\"\nbuffer = \"1000pkt\""),
        &[("f", cc, "")],
    ));
    (
        s.flows[0].goodput_mbps,
        mean_queue_ms(&s),
        s.flows[0].p95_rtt_ms.unwrap(),
    )
}

fn c2tcp_against_cubic(trace: &str) -> [(f64, f64, f64); 2] {
    let cubic = cellular(trace, "cubic");
    let c2tcp = cellular(trace, "c2tcp");
    eprintln!(
        "{trace}: cubic {:.2} Mbit/s, queue {:.0} ms, p95 RTT {:.0} ms; c2tcp {:.2} Mbit/s, queue {:.1} ms, p95 RTT {:.0} ms",
        cubic.0, cubic.1, cubic.2, c2tcp.0, c2tcp.1, c2tcp.2
    );
    [cubic, c2tcp]
}

#[test]
fn c2tcp_keeps_a_deep_cellular_buffer_short_at_a_modest_throughput_cost() {
    let [cubic, c2tcp] = c2tcp_against_cubic("synth:cellular");
    // CUBIC fills the 1000-packet buffer of the varying link (measured: 13.05 Mbit/s, 673 ms
    // mean queueing delay, p95 RTT 1237 ms). C2TCP's setpoint is 2·minRTT (≈ 80 ms RTT):
    // measured 22 ms of queue, p95 RTT 112 ms ...
    assert!(cubic.1 > 300.0, "CUBIC's queue {} ms", cubic.1);
    assert!(c2tcp.1 < cubic.1 / 10.0, "{} vs {} ms", c2tcp.1, cubic.1);
    assert!(
        c2tcp.2 < cubic.2 / 5.0,
        "p95 RTT {} vs {} ms",
        c2tcp.2,
        cubic.2
    );
    // ... for 16 % less throughput (measured: 11.00 against 13.05 Mbit/s).
    assert!(
        c2tcp.0 < cubic.0 && c2tcp.0 > 0.7 * cubic.0,
        "{c2tcp:?} vs {cubic:?}"
    );
}

#[test]
fn c2tcp_on_a_mahimahi_lte_trace() {
    let trace = "/work/shared/traces/mahimahi/TMobile-LTE-short.down";
    if !std::path::Path::new(trace).exists() {
        eprintln!(
            "skipped: {trace} is absent (the shared Mahimahi traces are not on this machine)"
        );
        return;
    }
    let [cubic, c2tcp] = c2tcp_against_cubic(trace);
    // Measured: CUBIC 13.36 Mbit/s, 677 ms queue, p95 RTT 1682 ms; C2TCP 9.97 Mbit/s, 26 ms,
    // p95 RTT 135 ms (25 % less throughput for a 26th of the queue).
    assert!(c2tcp.1 < cubic.1 / 10.0, "{} vs {} ms", c2tcp.1, cubic.1);
    assert!(
        c2tcp.2 < cubic.2 / 5.0,
        "p95 RTT {} vs {} ms",
        c2tcp.2,
        cubic.2
    );
    assert!(c2tcp.0 > 0.6 * cubic.0, "{c2tcp:?} vs {cubic:?}");
}

#[test]
fn copa_and_c2tcp_run_on_multipath_subflows_and_switch_to_and_from_mid_connection() {
    for cc in ["copa", "c2tcp"] {
        // Multipath, uncoupled: both subflows run it and the connection uses both paths.
        let (goodput, per) = run_on_two_subflows(cc);
        assert!(
            per.iter().all(|&g| g > 3.0),
            "{cc}: subflow throughputs {per:?}"
        );
        assert!(goodput > 12.0, "{cc}: {goodput}");

        // Single path: CUBIC, switched to `cc` at 5 s (its init from the live state), then to
        // Reno at 10 s; the flow keeps the link busy throughout.
        let (w, s) = run_switched("cubic", cc, "reno");
        let f = &w.recorder.flows;
        let during = goodput_between(f, 0, 6.0, 10.0);
        let after = goodput_between(f, 0, 11.0, 15.0);
        eprintln!(
            "{cc} switched: {during:.2} Mbit/s while live, {after:.2} after switching to Reno"
        );
        assert!(during > 10.0, "{cc} while live: {during} Mbit/s");
        assert!(after > 15.0, "{cc}, Reno after: {after} Mbit/s");
        assert!(s.flows[0].goodput_mbps > 15.0, "{cc}");
    }
}

#[test]
fn unknown_parameters_are_rejected_with_the_key() {
    for (cc, key) in [("copa", "alpha"), ("c2tcp", "delta")] {
        let text = bottleneck(
            "1s",
            "",
            "rate = \"10Mbps\"\ndelay = \"10ms\"",
            &[("f", cc, &format!("{key} = 1"))],
        );
        let e = rove_world::load(
            &text,
            &rove_world::ParseOptions {
                source: "<test>",
                ..Default::default()
            },
        )
        .err()
        .unwrap_or_else(|| panic!("{cc}: {key} accepted"))
        .to_string();
        assert!(e.contains(key), "{cc}: {e}");
    }
}
