//! BBRv2+ (seed 000, thesis chapter 4, §4.4) in whole scenarios (issue 4, item 2): the pieces
//! switched on and off one at a time on the same run.

use rove_world::{load, ParseOptions, World};

use crate::common;
use common::{bottleneck, run};

/// One flow over a 20 Mbit/s bottleneck that drops to 5 Mbit/s at 10 s; 20 ms each way, a
/// deep (2000-packet) buffer, sampled every 10 ms.
fn rate_drop(cc: &str, cc_params: &str) -> String {
    let down = "rate = \"20Mbps\"\nrate_steps = [{ at = \"10s\", rate = \"5Mbps\" }]\ndelay = \"20ms\"\nbuffer = \"2000pkt\"";
    bottleneck(
        "20s",
        "sample_interval = \"10ms\"",
        down,
        &[("f", cc, cc_params)],
    )
}

/// Mean sojourn (queueing delay) at the bottleneck of the packets dequeued in [from, to) s, ms.
fn mean_queue_delay_ms(w: &World, from: f64, to: f64) -> f64 {
    let l = &w.recorder.links;
    let (mut sum, mut n) = (0.0, 0u64);
    for i in 0..l.time_s.len() {
        if l.link[i] != 0 || l.time_s[i] <= from || l.time_s[i] > to || l.sojourn_count[i] == 0 {
            continue;
        }
        sum += l.sojourn_mean_ms[i] * l.sojourn_count[i] as f64;
        n += l.sojourn_count[i];
    }
    assert!(n > 0, "no packets dequeued in [{from}, {to})");
    sum / n as f64
}

#[test]
fn bbr2plus_with_algorithm_1_drains_the_queue_faster_than_bbr2_after_a_rate_drop() {
    // Thesis §4.5 (Fig. 4.16): on a decrease BBRv2+ sees the RTT rise, expires BtlBW and adapts
    // much faster than BBRv2, with lower queueing.
    let mut rows = vec![];
    const OFF: &str = "probe_try = false, continuous_probing = false, probe_interval_rounds = 0, expire_btlbw = false, dual_mode = false, bdp_compensation = false";
    for (cc, params) in [
        ("bbr2", "".to_string()),
        ("bbr2", "loss_thresh = 0.2".to_string()),
        ("bbr2plus", OFF.to_string()),
        (
            "bbr2plus",
            OFF.replace("expire_btlbw = false", "expire_btlbw = true"),
        ),
        ("bbr2plus", "expire_btlbw = false".to_string()),
        ("bbr2plus", "".to_string()),
        ("bbr2plus", "bdp_compensation = false".to_string()),
        ("bbr2plus", "variant = \"code\"".to_string()),
        (
            "bbr2plus",
            "variant = \"code\", bdp_compensation = false".to_string(),
        ),
        (
            "bbr2plus",
            OFF.replace(
                "probe_try = false, continuous_probing = false, probe_interval_rounds = 0",
                "probe_try = true, continuous_probing = true, probe_interval_rounds = 8",
            ),
        ),
    ] {
        let (w, s) = run(&rate_drop(cc, &params));
        let states: std::collections::BTreeSet<&str> =
            w.recorder.flows.cc_state.iter().copied().collect();
        println!("   states: {states:?}");
        let before = mean_queue_delay_ms(&w, 5.0, 10.0);
        let after = mean_queue_delay_ms(&w, 10.0, 15.0);
        let late = mean_queue_delay_ms(&w, 15.0, 20.0);
        let per_s: Vec<String> = (10..15)
            .map(|t| format!("{:.0}", mean_queue_delay_ms(&w, t as f64, t as f64 + 1.0)))
            .collect();
        println!("   per second 10..15: {per_s:?} ms");
        println!(
            "{cc:>8} {{{params:<66}}}: mean queueing delay 5-10 s {before:6.2} ms, 10-15 s {after:6.2} ms, 15-20 s {late:6.2} ms; goodput {:.3} Mbit/s, drops {}",
            s.flows[0].goodput_mbps, s.links[0].drops
        );
        rows.push((cc, params, after, s.flows[0].goodput_mbps));
    }
    let by = |i: usize| (rows[i].2, rows[i].3);
    let (
        bbr2,
        bbr2_a20,
        all_off,
        alg1_only,
        no_alg1,
        plus,
        plus_no_alg3,
        code,
        _code_no_alg3,
        probing_only,
    ) = (
        by(0),
        by(1),
        by(2),
        by(3),
        by(4),
        by(5),
        by(6),
        by(7),
        by(8),
        by(9),
    );
    // With every piece off, bbr2plus is bbr2 at alpha 20 %: the same run, to the byte.
    assert_eq!(all_off, bbr2_a20);
    // Algorithm 1 alone (measured: 80 ms against 199 ms for bbr2): the queue of the drop is
    // gone about 2 s after it instead of about 4 s.
    assert!(
        alg1_only.0 < 0.6 * bbr2.0,
        "10-15 s queueing: Algorithm 1 only {:.2} ms, bbr2 {:.2} ms",
        alg1_only.0,
        bbr2.0
    );
    // The thesis's BBRv2+ without Algorithm 3 (measured 63 ms): the redesigned ProbeBW with
    // Algorithm 1 drains the drop's queue within about 1 s.
    assert!(
        plus_no_alg3.0 < 0.5 * bbr2.0,
        "no Algorithm 3 {:.2} ms, bbr2 {:.2} ms",
        plus_no_alg3.0,
        bbr2.0
    );
    // The full default (measured 162 ms) is better than bbr2 but gives back much of that: the
    // queue that builds after the drop raises mdev, Algorithm 3 reads it as jitter
    // (> mu · RTprop) and enlarges the cwnd target. Reported, not tuned away.
    assert!(
        plus.0 < bbr2.0 && plus.0 < no_alg1.0,
        "default {:.2} ms, bbr2 {:.2}, without Algorithm 1 {:.2}",
        plus.0,
        bbr2.0,
        no_alg1.0
    );
    // The probing redesign without Algorithm 1 (measured 276 ms) and the authors'-code variant
    // (measured 465 ms, still 69 ms at 15-20 s) hold a standing queue: cwnd-limited at 2 BDP of
    // the old rate, UP cannot raise the RTT, so ProbeTry and continuous probing pass and loop
    // UP -> POST_UP -> UP without a DOWN; Algorithm 1 runs only in CRUISE and DOWN, and the
    // code drops BBRv2's end-of-probe bw_hi advance, leaving its 25-round forced advance
    // (rounds of ~330 ms here) as the way out. Asserted as measured, so a change shows.
    assert!(
        probing_only.0 > bbr2.0 && code.0 > bbr2.0,
        "probing only {:.2} ms, code {:.2} ms",
        probing_only.0,
        code.0
    );
    // Not at the price of the link: goodput within 10 % of bbr2's.
    for r in [plus, alg1_only, plus_no_alg3, code] {
        assert!(r.1 > 0.9 * bbr2.1, "goodput {} vs bbr2 {}", r.1, bbr2.1);
    }
}

#[test]
fn bbr2plus_rejects_bad_values_and_bbr2_rejects_bbr2plus_keys() {
    for (cc, params, key) in [
        ("bbr2plus", "variant = \"paper\"", "variant"),
        ("bbr2plus", "eta1 = 0", "eta1"),
        ("bbr2plus", "theta = 0.5", "theta"),
        ("bbr2plus", "round_rtt = \"mean\"", "round_rtt"),
        ("bbr2", "expire_btlbw = true", "expire_btlbw"),
        ("bbr2", "dual_mode = true", "dual_mode"),
    ] {
        let e = load(
            &rate_drop(cc, params),
            &ParseOptions {
                source: "<test>",
                ..Default::default()
            },
        )
        .err()
        .unwrap_or_else(|| panic!("{cc} accepted {params}"));
        let msg = e.to_string();
        assert!(msg.contains(key), "{cc} {params}: {msg}");
    }
}

/// BBRv2+ against one CUBIC flow: 40 Mbit/s, 40 ms RTT, a deep buffer of `bdps` BDPs, 60 s.
fn against_cubic(plus_params: &str, bdps: f64) -> String {
    let buffer = (bdps * 40e6 * 0.040 / 8.0 / 1500.0).round() as u64;
    let down = format!("rate = \"40Mbps\"\ndelay = \"20ms\"\nbuffer = \"{buffer}pkt\"");
    bottleneck(
        "60s",
        "",
        &down,
        &[("plus", "bbr2plus", plus_params), ("cubic", "cubic", "")],
    )
}

#[test]
fn dual_mode_keeps_bbr2plus_from_starving_against_cubic_in_a_deep_buffer() {
    // Thesis §4.5 (Fig. 4.20): without dual mode BBRv2+ is starved by CUBIC in deep buffers
    // (it reads CUBIC's queue as a bandwidth decrease); with it, it is not. Measured share of
    // the last 30 s (bbr2plus / cubic, Mbit/s): 8 BDP 0.57 / 38.1 without, 20.9 / 17.7 with;
    // 16 BDP 0.10 / 38.5 without, 15.0 / 23.6 with. At 4 BDP it is not starved either way
    // (16.0 / 22.6 without, 19.3 / 19.4 with); before the receiver's window auto-tuning, whose
    // per-segment ACKs end CUBIC's slow start earlier, it was (7.5 against 16.5 Mbit/s).
    for (bdps, starved) in [(4.0, false), (8.0, true), (16.0, true)] {
        let mut share = vec![];
        for params in ["dual_mode = false", ""] {
            let (w, _) = run(&against_cubic(params, bdps));
            let plus = w.goodput_mbps_between(0, 30.0, 60.0);
            let cubic = w.goodput_mbps_between(1, 30.0, 60.0);
            println!("{bdps:>4} BDP {{{params:<18}}}: bbr2plus {plus:6.2} Mbit/s, cubic {cubic:6.2} Mbit/s");
            share.push(plus / (plus + cubic));
        }
        let (without, with) = (share[0], share[1]);
        assert!(
            with > without,
            "{bdps} BDP: share without dual mode {without:.3}, with {with:.3}"
        );
        if starved {
            assert!(
                without < 0.1 && with > 0.3,
                "{bdps} BDP: share without dual mode {without:.3}, with {with:.3}"
            );
        }
    }
}

#[test]
fn bdp_compensation_keeps_bbr2plus_going_under_gaussian_jitter_where_bbr2_collapses() {
    // Thesis §4.5 (Fig. 4.19): BBR and BBRv2 degrade once jitter reaches the path RTT (40 ms);
    // BBRv2+ does not, slightly below CUBIC. 40 Mbit/s, 40 ms, a 32-BDP buffer, jitter with a
    // standard deviation of 80 ms on the data path (held in order), 20 s.
    let goodput = |cc: &str, params: &str| {
        let down = "rate = \"40Mbps\"\ndelay = \"20ms\"\nbuffer = \"4267pkt\"\njitter = \"80ms\"";
        let toml = bottleneck("20s", "", down, &[("f", cc, params)]);
        run(&toml).1.flows[0].goodput_mbps
    };
    let (cubic, bbr2, plus, plus_no_alg3) = (
        goodput("cubic", ""),
        goodput("bbr2", ""),
        goodput("bbr2plus", ""),
        goodput("bbr2plus", "bdp_compensation = false"),
    );
    println!("goodput under 80 ms jitter: cubic {cubic:.2}, bbr2 {bbr2:.2}, bbr2plus {plus:.2}, without Algorithm 3 {plus_no_alg3:.2} Mbit/s");
    // Measured: cubic 23.3, bbr2 2.4, bbr2plus 24.3, bbr2plus without Algorithm 3 1.4 Mbit/s
    // (with the auto-tuned receiver; with a fixed window 23.3, 2.0, 25.1, 1.3).
    assert!(
        plus > 5.0 * bbr2 && plus > 3.0 * plus_no_alg3,
        "bbr2plus {plus:.2}, bbr2 {bbr2:.2}, no Algorithm 3 {plus_no_alg3:.2}"
    );
    assert!(plus > 0.7 * cubic, "bbr2plus {plus:.2} vs cubic {cubic:.2}");
}
