//! PCC Vivace (issue 12 item 2) in whole runs: it fills a fixed link with a short queue where
//! CUBIC fills the buffer, it keeps a random-loss link busy where CUBIC backs off, and it runs on
//! uncoupled multipath subflows and is switched to and from mid-connection. Its arithmetic is
//! unit-tested in crates/tcp/src/cc/vivace.rs.

use crate::common;

use common::{bottleneck, goodput_between, mean_queue_ms, run, run_on_two_subflows, run_switched};
use rove_world::{Summary, World};

/// One flow over a 20 Mbit/s bottleneck, 60 ms RTT (BDP 100 packets), a deep 1000-packet
/// buffer, `cc` with `params`: (goodput Mbit/s, mean queueing delay ms, utilisation).
fn deep_buffer(cc: &str, params: &str) -> (f64, f64, f64) {
    let (_, s) = run(&bottleneck(
        "30s",
        "",
        "rate = \"20Mbps\"\ndelay = \"40ms\"\nbuffer = \"1000pkt\"",
        &[("f", cc, params)],
    ));
    (
        s.flows[0].goodput_mbps,
        mean_queue_ms(&s),
        s.links[0].utilization,
    )
}

#[test]
fn vivace_fills_a_deep_buffered_link_with_a_short_queue_where_cubic_fills_the_buffer() {
    let (cubic_mbps, cubic_q, cubic_util) = deep_buffer("cubic", "");
    let (viv_mbps, viv_q, viv_util) = deep_buffer("vivace", "");
    let (_, blind_q, _) = deep_buffer("vivace", "latency_coefficient = 0");
    eprintln!("cubic {cubic_mbps:.2} Mbit/s, utilisation {cubic_util:.3}, queue {cubic_q:.1} ms; vivace {viv_mbps:.2} Mbit/s, utilisation {viv_util:.3}, queue {viv_q:.1} ms; vivace with b = 0: queue {blind_q:.1} ms");
    // CUBIC fills the 1000-packet buffer (measured: 19.14 Mbit/s, utilisation 0.993, 420 ms
    // mean queueing delay). Vivace's latency-gradient penalty (b = 900) turns it back as soon
    // as the queue grows (measured: 18.01 Mbit/s, utilisation 0.934, 1.8 ms).
    assert!(cubic_q > 200.0, "CUBIC's queue: {cubic_q} ms");
    assert!(viv_q < 10.0, "Vivace's queue: {viv_q} ms");
    assert!(viv_util > 0.85, "Vivace's utilisation: {viv_util}");
    assert!(viv_mbps > 0.85 * cubic_mbps, "{viv_mbps} vs {cubic_mbps}");
    // It is the latency term: without it (b = 0) Vivace fills the buffer as CUBIC does
    // (measured: 560 ms).
    assert!(blind_q > 200.0, "Vivace with b = 0: queue {blind_q} ms");
}

/// Goodput (Mbit/s) of one `cc` flow over a 20 Mbit/s, 40 ms RTT path with 1 % random loss.
fn lossy_goodput(cc: &str) -> f64 {
    let (_, s) = run(&bottleneck(
        "30s",
        "",
        "rate = \"20Mbps\"\ndelay = \"20ms\"\nbuffer = \"200pkt\"\nloss = 0.01",
        &[("f", cc, "")],
    ));
    s.flows[0].goodput_mbps
}

#[test]
fn vivace_keeps_a_random_loss_link_busy_where_cubic_backs_off() {
    let (viv, cubic) = (lossy_goodput("vivace"), lossy_goodput("cubic"));
    eprintln!("1 % loss, 20 Mbit/s: vivace {viv:.2} Mbit/s, cubic {cubic:.2} Mbit/s");
    // At L = 1 % the loss term 11.35·L·x is 0.11·x, below the slope of x^0.9 at any rate up
    // to the link's, so the utility still rises with rate: Vivace stays near the link rate
    // (measured: 16.69 Mbit/s); CUBIC cuts its window on every loss (measured: 3.14 Mbit/s).
    assert!(viv > 15.0, "Vivace at 1 % loss: {viv} Mbit/s");
    assert!(viv > 2.0 * cubic, "Vivace {viv} vs CUBIC {cubic}");
}

#[test]
fn vivace_runs_on_multipath_subflows() {
    let (goodput, per) = run_on_two_subflows("vivace");
    // Each subflow learns its own path's rate (measured: 8.97 and 8.60 Mbit/s of 10, 17.53
    // Mbit/s of goodput).
    assert!(per.iter().all(|&g| g > 6.0), "subflow throughputs {per:?}");
    assert!(goodput > 14.0, "{goodput}");
}

#[test]
fn vivace_is_switched_to_from_cubic_and_then_to_reno_mid_connection() {
    // CUBIC until 5 s, Vivace (its init from the live state) until 10 s, Reno after.
    let (w, s) = run_switched("cubic", "vivace", "reno");
    let f = &w.recorder.flows;
    let during = goodput_between(f, 0, 6.0, 10.0);
    let after = goodput_between(f, 0, 11.0, 15.0);
    eprintln!(
        "switched: {during:.2} Mbit/s under Vivace, {after:.2} under Reno after, {:.2} overall",
        s.flows[0].goodput_mbps
    );
    // Measured: 18.52 Mbit/s under Vivace, 19.30 under Reno, 18.91 overall.
    assert!(during > 15.0, "Vivace while live: {during} Mbit/s");
    assert!(after > 15.0, "Reno after: {after} Mbit/s");
    assert!(s.flows[0].goodput_mbps > 15.0);
}

#[test]
fn unknown_vivace_parameters_are_rejected_with_the_key() {
    let text = bottleneck(
        "1s",
        "",
        "rate = \"10Mbps\"\ndelay = \"10ms\"",
        &[("f", "vivace", "omega = 1")],
    );
    let e = rove_world::load(
        &text,
        &rove_world::ParseOptions {
            source: "<test>",
            ..Default::default()
        },
    )
    .err()
    .expect("omega accepted")
    .to_string();
    assert!(e.contains("omega"), "{e}");
}

/// The zoo's cellular path (scenarios/zoo/cellular.toml: 30 s, 20 ms one way each direction,
/// 250-packet drop-tail buffers) on Mahimahi's Verizon LTE trace in both directions, one `cc`
/// flow.
fn verizon_lte(cc: &str) -> (World, Summary) {
    let dir = "/work/shared/traces/mahimahi/Verizon-LTE-short";
    let link = |d: &str| format!("trace = \"{dir}.{d}\"\ndelay = \"20ms\"\nbuffer = \"250pkt\"\n");
    run(&format!(
        "duration = \"30s\"\nseed = 1\n[links.down]\n{}[links.up]\n{}[[flows]]\nname = \"bulk\"\n\
         cc = \"{cc}\"\npath = [\"down\"]\nack_path = [\"up\"]\n",
        link("down"),
        link("up")
    ))
}

/// Vivace's retransmissions on an LTE trace (docs/zoo: 49 % on Verizon, 40 % on T-Mobile,
/// CUBIC 2 %) come from the reference's rules, not from the port: this pins the mechanism
/// found (crates/tcp/src/cc/vivace.rs, "On cellular traces"). STARTING ends at the trace's
/// first-second capacity (≈ 11 Mbit/s); the trace then falls to 1–7 Mbit/s, and Vivace never
/// learns a lower rate: a probing round is six monitor intervals of at least an RTT each (0.5–2
/// s behind the full buffer), the intervals' utilities are dominated by trace-driven RTT swings
/// (the b = 900 term) and capacity changes larger than the ±5 % probes, and a decision to
/// decrease needs all three pairs to agree. Fates are attributed correctly (the unit test
/// `fates_are_counted_for_the_monitor_interval_that_sent_them_under_loss_and_retransmission`;
/// per-packet counting from skb_marked_lost gives the same summary).
#[test]
fn vivace_on_a_mahimahi_lte_trace_keeps_its_rate_above_capacity_under_the_reference_rules() {
    let trace = "/work/shared/traces/mahimahi/Verizon-LTE-short.down";
    if !std::path::Path::new(trace).exists() {
        eprintln!(
            "skipped: {trace} is absent (the shared Mahimahi traces are not on this machine)"
        );
        return;
    }
    let (_, cubic) = verizon_lte("cubic");
    let (w, viv) = verizon_lte("vivace");
    let f = &w.recorder.flows;
    let rate = &f
        .extra
        .iter()
        .find(|(n, _)| *n == "vivace_rate_mbps")
        .unwrap()
        .1;
    // Vivace's central rate from the end of STARTING (1 s) on.
    let after: Vec<f64> = (0..f.time_s.len())
        .filter(|&i| f.flow[i] == 0 && f.time_s[i] >= 1.0)
        .map(|i| rate[i])
        .collect();
    let lowest = after.iter().cloned().fold(f64::INFINITY, f64::min);
    let (viv_mbps, viv_rtx) = (viv.flows[0].goodput_mbps, viv.flows[0].retrans_rate);
    eprintln!(
        "Verizon LTE: cubic {:.2} Mbit/s, retransmissions {:.1} %; vivace {viv_mbps:.2} Mbit/s, \
         retransmissions {:.1} %, central rate ≥ {lowest:.2} Mbit/s after 1 s",
        cubic.flows[0].goodput_mbps,
        100.0 * cubic.flows[0].retrans_rate,
        100.0 * viv_rtx
    );
    // Measured: CUBIC 5.13 Mbit/s, 2.1 % retransmitted.
    assert!(cubic.flows[0].retrans_rate < 0.05);
    // Measured: Vivace's central rate never below 11.04 Mbit/s after 1 s, while it gets 4.72
    // Mbit/s through; 48.7 % of its segments are retransmissions. At its utility's optimum
    // (d/dx[x^0.9 − 11.35·L·x] = 0) Vivace would tolerate L ≈ 0.079·x^−0.1, about 7 % at 5
    // Mbit/s; a change that brings it near that has changed the algorithm: revisit the module
    // doc.
    assert!(lowest > 2.0 * viv_mbps, "{lowest} vs {viv_mbps} Mbit/s");
    assert!(viv_rtx > 0.3, "Vivace's retransmissions {viv_rtx}");
}
