//! BBRv2+ (seed 000, thesis chapter 4, §4.4) in whole scenarios (issue 4, item 2). Only the
//! pieces implemented so far: loss threshold 20 %, ProbeTry, Algorithm 1 (expire BtlBW) and
//! Algorithm 3 (BDP compensation).

use rove_world::{load, ParseOptions, World};

mod common;
use common::{run};

/// One flow over a 20 Mbit/s bottleneck that drops to 5 Mbit/s at 10 s; 20 ms each way, a
/// deep (2000-packet) buffer, sampled every 10 ms.
fn rate_drop(cc: &str, cc_params: &str) -> String {
    format!(
        r#"
duration = "20s"
sample_interval = "10ms"
[links.down]
rate = "20Mbps"
rate_steps = [{{ at = "10s", rate = "5Mbps" }}]
delay = "20ms"
buffer = "2000pkt"
[links.up]
rate = "1Gbps"
delay = "20ms"
[[flows]]
name = "f"
path = ["down"]
ack_path = ["up"]
cc = "{cc}"
cc_params = {{ {cc_params} }}
"#
    )
}

/// Mean sojourn (queueing delay) at the bottleneck of the packets dequeued in [from, to) s, ms.
fn mean_queue_delay_ms(w: &World, from: f64, to: f64) -> f64 {
    let l = &w.recorder.links;
    let soj = &w.links[0].stats.sojourn_ns;
    let (mut sum, mut n) = (0.0, 0usize);
    for i in 0..l.time_s.len() {
        if l.link[i] != 0 || l.time_s[i] <= from || l.time_s[i] > to {
            continue;
        }
        for &s in &soj[l.sojourn_from[i]..l.sojourn_to[i]] {
            sum += s as f64 / 1e6;
            n += 1;
        }
    }
    assert!(n > 0, "no packets dequeued in [{from}, {to})");
    sum / n as f64
}

#[test]
fn bbr2plus_with_algorithm_1_drains_the_queue_faster_than_bbr2_after_a_rate_drop() {
    // Thesis §4.5 (Fig. 4.16): on a decrease BBRv2+ sees the RTT rise, expires BtlBW and adapts
    // much faster than BBRv2, with lower queueing.
    let mut rows = vec![];
    for (cc, params) in [
        ("bbr2", ""),
        ("bbr2", "loss_thresh = 0.2"),
        ("bbr2plus", "expire_btlbw = false"),
        ("bbr2plus", ""),
        ("bbr2plus", "probe_try = false, bdp_compensation = false"),
        ("bbr2plus", "probe_try = false, bdp_compensation = false, expire_btlbw = false"),
        ("bbr2plus", "expire_btlbw = false, bdp_compensation = false"),
    ] {
        let (w, s) = run(&rate_drop(cc, params));
        let states: std::collections::BTreeSet<&str> = w.recorder.flows.cc_state.iter().copied().collect();
        println!("   states: {states:?}");
        let before = mean_queue_delay_ms(&w, 5.0, 10.0);
        let after = mean_queue_delay_ms(&w, 10.0, 15.0);
        let late = mean_queue_delay_ms(&w, 15.0, 20.0);
        let per_s: Vec<String> =
            (10..15).map(|t| format!("{:.0}", mean_queue_delay_ms(&w, t as f64, t as f64 + 1.0))).collect();
        println!("   per second 10..15: {per_s:?} ms");
        println!(
            "{cc:>8} {{{params:<66}}}: mean queueing delay 5-10 s {before:6.2} ms, 10-15 s {after:6.2} ms, 15-20 s {late:6.2} ms; goodput {:.3} Mbit/s, drops {}",
            s.flows[0].goodput_mbps, s.links[0].drops
        );
        rows.push((cc, params, after, s.flows[0].goodput_mbps));
    }
    let (bbr2, bbr2_a20, plus_no_alg1, plus, plus_alg1_only, plus_all_off) =
        (rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]);
    // With every piece off, bbr2plus is bbr2 at alpha 20 %: the same run.
    assert_eq!(plus_all_off.2, bbr2_a20.2);
    assert_eq!(plus_all_off.3, bbr2_a20.3);
    // Algorithm 1 alone (measured: 80 ms against 199 ms for bbr2 and for bbr2plus with it off):
    // the queue of the drop is gone about 2 s after it instead of about 4 s.
    assert!(
        plus_alg1_only.2 < 0.6 * bbr2.2 && plus_alg1_only.2 < 0.6 * plus_all_off.2,
        "10-15 s queueing: Algorithm 1 only {:.2} ms, bbr2 {:.2} ms, all pieces off {:.2} ms",
        plus_alg1_only.2, bbr2.2, plus_all_off.2
    );
    // With Algorithm 3 on too (the default), Algorithm 1 still shortens the queue against
    // Algorithm 3 alone (measured: 206 against 379 ms) but not below bbr2's (199 ms): the
    // queue that builds after the drop raises mdev, Algorithm 3 reads it as jitter
    // (> mu · RTprop) and enlarges the cwnd target. Reported, not tuned away.
    assert!(plus.2 < plus_no_alg1.2, "default {:.2} ms, without Algorithm 1 {:.2} ms", plus.2, plus_no_alg1.2);
    // ProbeTry without Algorithm 1 (measured: 276 ms, the queue still 287 ms at 14-15 s): a
    // failed ProbeTry goes to DOWN_SLIGHTLY without BBRv2's end-of-probe bw_hi advance, so the
    // old 20 Mbit/s max lasts longer; in BBRv2+ BtlBW expires through Algorithm 1. Printed only.
    // Not at the price of the link: goodput within 10 % of bbr2's.
    for r in [plus, plus_alg1_only] {
        assert!(r.3 > 0.9 * bbr2.3, "goodput {} {{{}}} {} vs bbr2 {}", r.0, r.1, r.3, bbr2.3);
    }
}

#[test]
fn bbr2plus_rejects_pieces_not_implemented_and_bbr2_rejects_bbr2plus_keys() {
    for (cc, params, key) in [
        ("bbr2plus", "continuous_probing = true", "continuous_probing"),
        ("bbr2plus", "dual_mode = true", "dual_mode"),
        ("bbr2plus", "theta = 0.5", "theta"),
        ("bbr2", "expire_btlbw = true", "expire_btlbw"),
    ] {
        let e = load(
            &rate_drop(cc, params),
            &ParseOptions { source: "<test>", ..Default::default() },
        )
        .err()
        .unwrap_or_else(|| panic!("{cc} accepted {params}"));
        let msg = e.to_string();
        assert!(msg.contains(key), "{cc} {params}: {msg}");
    }
}
