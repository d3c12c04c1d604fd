//! The second half of the Linux congestion-control zoo (issue 12 item 1): HighSpeed, H-TCP, YeAH
//! and CDG, each against the baseline its design argues with, in whole runs; and all four on
//! multipath subflows and switched to and from mid-connection. Their arithmetic is unit-tested
//! in crates/tcp/src/cc/{highspeed,htcp,yeah,cdg}.rs.

use crate::common;

use common::{bottleneck, goodput_between, mean_queue_ms, run, run_on_two_subflows, run_switched};
use rove_world::Summary;

const NEW: [&str; 4] = ["highspeed", "htcp", "yeah", "cdg"];

/// One flow over a 20 Mbit/s bottleneck, 60 ms RTT (BDP 100 packets), a deep 1000-packet
/// buffer (10 BDP, 600 ms of queue).
fn deep_buffer(cc: &str) -> (f64, f64, f64) {
    let (_, s) = run(&bottleneck(
        "30s",
        "",
        "rate = \"20Mbps\"\ndelay = \"40ms\"\nbuffer = \"1000pkt\"",
        &[("f", cc, "")],
    ));
    (
        s.flows[0].goodput_mbps,
        mean_queue_ms(&s),
        s.links[0].utilization,
    )
}

/// One flow on a 1 Gbit/s, 100 ms RTT path (BDP 8333 packets), 2000-packet buffer, with a
/// 50 ms outage at `outage_s` (a loss episode at a time we choose, after slow start's).
fn fat_pipe(cc: &str, duration_s: u32, outage_s: f64) -> (rove_world::World, Summary) {
    run(&bottleneck(
        &format!("{duration_s}s"),
        "sample_interval = \"100ms\"",
        &format!(
            "rate = \"1Gbps\"\ndelay = \"80ms\"\nbuffer = \"2000pkt\"\noutages = [{{ at = \"{outage_s}s\", for = \"50ms\" }}]"
        ),
        &[("f", cc, "")],
    ))
}

#[test]
fn cdg_keeps_a_deep_buffer_nearly_empty_at_lower_utilisation_than_cubic() {
    let (cubic_mbps, cubic_q, _) = deep_buffer("cubic");
    let (cdg_mbps, cdg_q, cdg_util) = deep_buffer("cdg");
    eprintln!("cubic {cubic_mbps:.2} Mbit/s, queue {cubic_q:.1} ms; cdg {cdg_mbps:.2} Mbit/s, queue {cdg_q:.1} ms, utilisation {cdg_util:.3}");
    // CUBIC fills the 1000-packet buffer (measured: 420 ms mean queueing delay); CDG's
    // delay-gradient backoffs keep it nearly empty (measured: 2 ms).
    assert!(cubic_q > 200.0, "CUBIC's queue: {cubic_q} ms");
    assert!(
        cdg_q < cubic_q / 20.0,
        "CDG's queue {cdg_q} ms against CUBIC's {cubic_q} ms"
    );
    // At a price: lower utilisation (measured: 16.2 against 19.1 Mbit/s), but not starved.
    assert!(cdg_mbps <= cubic_mbps, "{cdg_mbps} vs {cubic_mbps}");
    assert!(
        cdg_mbps > 0.5 * cubic_mbps,
        "CDG starved: {cdg_mbps} Mbit/s"
    );
}

#[test]
fn yeah_fills_the_link_with_a_shorter_queue_than_reno() {
    let (reno_mbps, reno_q, _) = deep_buffer("reno");
    let (yeah_mbps, yeah_q, yeah_util) = deep_buffer("yeah");
    eprintln!("reno {reno_mbps:.2} Mbit/s, queue {reno_q:.1} ms; yeah {yeah_mbps:.2} Mbit/s, queue {yeah_q:.1} ms, utilisation {yeah_util:.3}");
    // Both fill the link (measured: 19.14 Mbit/s each, utilisation 0.993) ...
    assert!(yeah_util > 0.95, "YeAH's utilisation {yeah_util}");
    assert!(yeah_mbps > 0.97 * reno_mbps, "{yeah_mbps} vs {reno_mbps}");
    // ... but YeAH's decongestion and queue-sized loss response keep the queue far shorter
    // (measured: 116 ms against 323 ms).
    assert!(
        yeah_q < 0.5 * reno_q,
        "YeAH's queue {yeah_q} ms against Reno's {reno_q} ms"
    );
}

#[test]
fn highspeed_and_htcp_regrow_faster_than_reno_after_a_loss_at_a_large_bdp() {
    let post_loss = |cc: &str| {
        let (w, _) = fat_pipe(cc, 30, 10.0);
        let f = &w.recorder.flows;
        (
            goodput_between(f, 0, 10.0, 30.0),
            goodput_between(f, 0, 20.0, 30.0),
        )
    };
    let (reno, reno_late) = post_loss("reno");
    let (hs, hs_late) = post_loss("highspeed");
    let (htcp, htcp_late) = post_loss("htcp");
    eprintln!("after the loss at 10 s (10-30 s, 20-30 s, Mbit/s): reno {reno:.0} {reno_late:.0}, highspeed {hs:.0} {hs_late:.0}, htcp {htcp:.0} {htcp_late:.0}");
    // Reno regrows one packet per 100 ms RTT from ~2200 packets (measured: 264 Mbit/s over
    // the 20 s after the loss). HighSpeed's a(w) is 20-30 packets per RTT there (measured: 356);
    // H-TCP's α(Δ) grows quadratically after Δ_L = 1 s (measured: 433).
    assert!(hs > 1.2 * reno, "HighSpeed {hs} vs Reno {reno}");
    assert!(
        hs_late > 1.3 * reno_late,
        "HighSpeed {hs_late} vs Reno {reno_late}"
    );
    assert!(htcp > 1.4 * reno, "H-TCP {htcp} vs Reno {reno}");
    assert!(
        htcp_late > 1.6 * reno_late,
        "H-TCP {htcp_late} vs Reno {reno_late}"
    );
}

#[test]
fn each_new_algorithm_runs_on_multipath_subflows_and_switches_to_and_from_cubic() {
    for cc in NEW {
        // Multipath, uncoupled: both subflows run it and the connection uses both paths.
        let (goodput, per) = run_on_two_subflows(cc);
        assert!(
            per.iter().all(|&g| g > 3.0),
            "{cc}: subflow throughputs {per:?}"
        );
        assert!(goodput > 12.0, "{cc}: {goodput}");

        // Single path: CUBIC, switched to `cc` at 5 s (its init from the live state), then to
        // CUBIC again at 10 s; the flow keeps the link busy throughout.
        let (w, s) = run_switched("cubic", cc, "cubic");
        let f = &w.recorder.flows;
        let during = goodput_between(f, 0, 6.0, 10.0);
        let after = goodput_between(f, 0, 11.0, 15.0);
        eprintln!("{cc} switched: {during:.2} Mbit/s while live, {after:.2} after switching back");
        assert!(during > 10.0, "{cc} while live: {during} Mbit/s");
        assert!(after > 15.0, "{cc}, CUBIC after: {after} Mbit/s");
        assert!(s.flows[0].goodput_mbps > 15.0, "{cc}");
    }
}

#[test]
fn unknown_parameters_are_rejected_with_the_key() {
    for (cc, key) in [
        ("highspeed", "ai"),
        ("htcp", "beta"),
        ("yeah", "alpha"),
        ("cdg", "g"),
    ] {
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
