//! CUBIC and HyStart in whole scenarios, against the formulas of tcp_cubic.c (RFC 9438 §4):
//! the window after a loss follows W(t) = C·(t − K)³ + W_max, fast convergence lowers W_max to
//! W·(1 + β)/2 when a loss comes below the previous one, and HyStart leaves slow start before
//! the buffer overflows.
//!
//! The path: 20 Mbit/s, 80 ms RTT (BDP = 133 packets of 1500 B), a 150-packet buffer, so the
//! pipe holds 283 packets. A 100 ms outage of the bottleneck drops what does not fit in the
//! buffer: one loss episode at a time we choose, with the window anywhere between 150 and 283
//! packets, and no loss otherwise until cwnd grows past 283.

use rove_world::{load, summarize, ParseOptions, World};

/// tcp_cubic.c: beta = 717/1024.
const BETA: f64 = 717.0 / 1024.0;
/// C = 0.4 (RFC 9438; the kernel's bic_scale·10/1024 = 0.4004).
const C: f64 = 0.4;

fn run(toml: &str) -> World {
    let mut w = load(
        toml,
        &ParseOptions {
            source: "<test>",
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    w.run();
    let s = summarize(&w);
    assert_eq!(s.flows.len(), 1);
    w
}

/// The 20 Mbit/s, 80 ms path with outages at `outages_s` (100 ms each), one CUBIC flow.
fn outage_path(duration_s: u32, outages_s: &[f64], cc_params: &str) -> String {
    let outages: Vec<String> = outages_s
        .iter()
        .map(|t| format!("{{ at = \"{t}s\", for = \"100ms\" }}"))
        .collect();
    format!(
        r#"
duration = "{duration_s}s"
[links.down]
rate = "20Mbps"
delay = "40ms"
buffer = "150pkt"
outages = [{}]
[links.up]
rate = "1Gbps"
delay = "40ms"
[[flows]]
name = "f"
cc = "cubic"
cc_params = {{ {cc_params} }}
path = ["down"]
ack_path = ["up"]
"#,
        outages.join(", ")
    )
}

/// A loss episode seen in the time series (consecutive Recovery or Loss samples).
#[derive(Debug, Clone, Copy)]
struct Episode {
    /// Time of the first Recovery/Loss sample.
    start_s: f64,
    /// cwnd at the last sample before the episode: the window the loss hit (W).
    cwnd_before: u32,
    /// ssthresh set on entering the episode.
    ssthresh: u32,
    /// Time of the first Open sample after the episode: the new epoch starts on that ACK.
    epoch_s: f64,
    /// Whether the episode was a retransmission timeout.
    rto: bool,
}

fn episodes(w: &World) -> Vec<Episode> {
    let s = &w.recorder.flows;
    let in_episode = |i: usize| matches!(s.ca_state[i], "recovery" | "loss");
    let mut out = Vec::new();
    let mut i = 1;
    while i < s.time_s.len() {
        if in_episode(i) && !in_episode(i - 1) {
            let start = i;
            let mut rto = false;
            while i < s.time_s.len() && in_episode(i) {
                rto |= s.ca_state[i] == "loss";
                i += 1;
            }
            let epoch_s = if i < s.time_s.len() {
                s.time_s[i]
            } else {
                f64::INFINITY
            };
            out.push(Episode {
                start_s: s.time_s[start],
                cwnd_before: s.cwnd_pkts[start - 1],
                ssthresh: s.ssthresh_pkts[start],
                epoch_s,
                rto,
            });
        }
        i += 1;
    }
    out
}

/// The curve of an epoch that starts at cwnd `w_epoch` below `w_max`: W(t) = C·(t − K)³ + W_max
/// with K = ∛((W_max − w_epoch)/C) (RFC 9438 §4.2; = ∛(W_max·(1 − β)/C) when w_epoch = β·W_max).
#[derive(Debug, Clone, Copy)]
struct Curve {
    w_max: f64,
    k: f64,
}

impl Curve {
    fn new(w_max: f64, w_epoch: f64) -> Self {
        Curve {
            w_max,
            k: ((w_max - w_epoch) / C).cbrt(),
        }
    }

    fn w(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }
}

/// Largest |cwnd − W(t − epoch)| over samples in [from_s, to_s], and its time.
fn max_deviation(w: &World, curve: Curve, epoch_s: f64, from_s: f64, to_s: f64) -> (f64, f64) {
    let s = &w.recorder.flows;
    let mut worst = (0.0, from_s);
    let mut n = 0;
    for i in 0..s.time_s.len() {
        let t = s.time_s[i];
        if t < from_s || t > to_s {
            continue;
        }
        n += 1;
        let dev = (s.cwnd_pkts[i] as f64 - curve.w(t - epoch_s)).abs();
        if dev > worst.0 {
            worst = (dev, t);
        }
    }
    assert!(n > 100, "only {n} samples in [{from_s}, {to_s}]");
    worst
}

/// The sample of cwnd closest to time `t_s`.
fn cwnd_at(w: &World, t_s: f64) -> u32 {
    let s = &w.recorder.flows;
    let i = s
        .time_s
        .iter()
        .position(|&t| t >= t_s)
        .unwrap_or(s.time_s.len() - 1);
    s.cwnd_pkts[i]
}

/// Tolerance of the W(t) comparisons, in packets. The kernel aims one min-RTT ahead and cwnd
/// reaches the aim over one real RTT, so cwnd lags W(t) by the queueing delay (up to 60 ms here)
/// times the slope (3·C·(t − K)², up to ~40 packets/s in these windows): ~2.5 packets; cnt is an
/// integer recomputed at most once per jiffy (≤ 1 packet); the epoch start is known to one
/// 10 ms sample (≤ 0.4 packet). Delayed ACKs do not matter: growth counts packets acked.
const TOL_PKTS: f64 = 4.0;

#[test]
fn cubic_window_after_a_single_loss_follows_c_t_minus_k_cubed_plus_w_max() {
    // The outage at 1.2 s hits the first congestion-avoidance epoch (HyStart left slow start at
    // about one BDP) with cwnd ≈ 220 > 150 buffered: one burst of drops, one recovery. The next
    // loss comes only when cwnd passes the 283-packet pipe, well after K.
    let w = run(&outage_path(14, &[1.2], ""));
    let eps = episodes(&w);
    assert!(!eps.is_empty() && !eps[0].rto, "{eps:?}");
    let e = eps[0];
    assert!((1.2..1.5).contains(&e.start_s), "{e:?}");
    let w_max = e.cwnd_before as f64;
    // ssthresh = W·717/1024 (W may have grown by a packet or two after the last sample).
    let beta_w = (e.cwnd_before * 717 / 1024) as i64;
    assert!(
        (e.ssthresh as i64 - beta_w).abs() <= 1,
        "ssthresh {} for W {}",
        e.ssthresh,
        e.cwnd_before
    );
    // K = ∛(W_max·(1 − β)/C).
    let curve = Curve::new(w_max, BETA * w_max);
    let k = curve.k;
    let next_loss = eps.get(1).map_or(f64::INFINITY, |n| n.start_s);
    assert!(
        next_loss > e.epoch_s + k + 3.0,
        "second loss at {next_loss} s, epoch {} s, K {k:.2} s",
        e.epoch_s
    );
    // Compare from 0.1 s into the epoch, through the plateau at K, to 3 s into the convex region.
    let to = e.epoch_s + k + 3.0;
    let (dev, at) = max_deviation(&w, curve, e.epoch_s, e.epoch_s + 0.1, to);
    eprintln!("W_max {w_max}, epoch {:.2} s, K {k:.2} s: max |cwnd − W(t)| = {dev:.2} packets at {at:.2} s", e.epoch_s);
    assert!(
        dev <= TOL_PKTS,
        "cwnd departs from W(t) by {dev:.2} packets at {at:.2} s"
    );
    // The plateau: at t = K, cwnd is W_max.
    let at_k = cwnd_at(&w, e.epoch_s + k) as f64;
    assert!(
        (at_k - w_max).abs() <= 2.0,
        "cwnd {at_k} at K, W_max {w_max}"
    );
}

#[test]
fn fast_convergence_lowers_w_max_to_w_times_1_plus_beta_over_2() {
    // Second outage 1.5 s into the first epoch: cwnd ≈ 195, below the first loss's W ≈ 224.
    let outages = [1.2, 3.1];
    let on = run(&outage_path(14, &outages, ""));
    let off = run(&outage_path(14, &outages, "fast_convergence = false"));
    let (eps_on, eps_off) = (episodes(&on), episodes(&off));
    assert!(
        eps_on.len() >= 2 && eps_off.len() >= 2,
        "{eps_on:?} {eps_off:?}"
    );
    let (first, second) = (eps_on[0], eps_on[1]);
    assert!(!first.rto && !second.rto);
    assert!((3.1..3.4).contains(&second.start_s), "{second:?}");
    assert!(
        second.cwnd_before < first.cwnd_before,
        "second loss {second:?} not below the first {first:?}"
    );
    // Both runs are the same up to the second loss (fast convergence only acts there).
    assert_eq!(eps_off[1].cwnd_before, second.cwnd_before);
    assert_eq!(eps_off[1].epoch_s, second.epoch_s);

    let w2 = second.cwnd_before;
    // cubictcp_recalc_ssthresh: W_max = W·(1024 + 717)/2048 with fast convergence, W without.
    // Either way the epoch starts from ssthresh = β·W, so with fast convergence K is
    // ∛((W_max − β·W)/C), shorter than the textbook ∛(W_max·(1 − β)/C).
    let w_epoch = second.ssthresh as f64;
    let fc = Curve::new((w2 * (1024 + 717) / 2048) as f64, w_epoch);
    let plain = Curve::new(w2 as f64, w_epoch);
    let epoch = second.epoch_s;
    let (from, to) = (epoch + 0.1, epoch + fc.k + 2.0);
    let next_on = eps_on.get(2).map_or(f64::INFINITY, |n| n.start_s);
    let next_off = eps_off.get(2).map_or(f64::INFINITY, |n| n.start_s);
    assert!(
        next_on > to && next_off > to,
        "third loss inside the window: {next_on}, {next_off}"
    );

    let (fc_fit, _) = max_deviation(&on, fc, epoch, from, to);
    let (fc_vs_plain, _) = max_deviation(&on, plain, epoch, from, to);
    let (plain_fit, _) = max_deviation(&off, plain, epoch, from, to);
    let plateau_on = cwnd_at(&on, epoch + fc.k) as f64;
    eprintln!(
        "W1 {} W2 {w2}, ssthresh {}: W_max {} (fast convergence) vs {}; K {:.2} s vs {:.2} s; cwnd at K {plateau_on}; \
         max dev: on vs FC curve {fc_fit:.2}, on vs plain curve {fc_vs_plain:.2}, off vs plain curve {plain_fit:.2}",
        first.cwnd_before, second.ssthresh, fc.w_max, plain.w_max, fc.k, plain.k
    );
    assert!(
        fc_fit <= TOL_PKTS,
        "fast convergence: cwnd departs from the lowered curve by {fc_fit:.2}"
    );
    assert!(
        plain_fit <= TOL_PKTS,
        "no fast convergence: cwnd departs from the W curve by {plain_fit:.2}"
    );
    assert!(
        fc_vs_plain > 5.0 * TOL_PKTS,
        "the two curves are not told apart ({fc_vs_plain:.2})"
    );
    assert!(
        (plateau_on - fc.w_max).abs() <= 2.0,
        "plateau {plateau_on} vs lowered W_max {}",
        fc.w_max
    );
}

/// 20 Mbit/s, 100 ms RTT, a 10-BDP buffer (BDP = 167 packets of 1500 B).
fn deep_buffer(cc_params: &str) -> String {
    format!(
        r#"
duration = "20s"
[links.down]
rate = "20Mbps"
delay = "50ms"
buffer = "1667pkt"
[links.up]
rate = "1Gbps"
delay = "50ms"
[[flows]]
name = "f"
cc = "cubic"
cc_params = {{ {cc_params} }}
path = ["down"]
ack_path = ["up"]
"#
    )
}

/// (time, cwnd, ssthresh, retransmissions so far) at the first sample with a finite ssthresh.
fn first_exit(w: &World) -> Option<(f64, u32, u32, u64)> {
    let s = &w.recorder.flows;
    let i = s.ssthresh_pkts.iter().position(|&x| x < 0x7fff_ffff)?;
    Some((
        s.time_s[i],
        s.cwnd_pkts[i],
        s.ssthresh_pkts[i],
        s.retrans_segs[i],
    ))
}

#[test]
fn hystart_leaves_slow_start_before_the_first_loss_and_not_when_off() {
    const BDP_PKTS: f64 = 20e6 * 0.1 / 8.0 / 1500.0;
    let on = run(&deep_buffer(""));
    let (t, cwnd, ssthresh, retrans) = first_exit(&on).expect("never left slow start");
    eprintln!("HyStart: left slow start at {t:.2} s, cwnd {cwnd}, ssthresh {ssthresh}, BDP {BDP_PKTS:.0}, retransmissions {retrans}");
    assert_eq!(retrans, 0, "ssthresh set by a loss, not by HyStart");
    let s = &on.recorder.flows;
    let first_retrans = s
        .retrans_segs
        .iter()
        .position(|&r| r > 0)
        .map(|i| s.time_s[i]);
    assert!(first_retrans.is_none_or(|r| r > t));
    // HyStart exits around the BDP: far below the 11-BDP pipe where a loss would stop it.
    assert!(
        (0.5 * BDP_PKTS..=2.0 * BDP_PKTS).contains(&(ssthresh as f64)),
        "ssthresh {ssthresh}"
    );

    let off = run(&deep_buffer("hystart = false"));
    let (t, cwnd, ssthresh, retrans) = first_exit(&off).expect("never left slow start");
    eprintln!("no HyStart: left slow start at {t:.2} s, cwnd {cwnd}, ssthresh {ssthresh}, retransmissions {retrans}");
    let s = &off.recorder.flows;
    let i = s.time_s.iter().position(|&x| x >= t).unwrap_or(0);
    assert!(
        retrans > 0 || matches!(s.ca_state[i], "recovery" | "loss"),
        "left slow start without a loss"
    );
    // It overshoots the 11-BDP pipe (1834 packets) before the loss is seen.
    assert!(
        ssthresh as f64 > 0.7 * 10.0 * BDP_PKTS,
        "ssthresh {ssthresh}"
    );
}

#[test]
fn bad_cubic_parameters_are_errors_that_name_the_key() {
    let opts = ParseOptions {
        source: "s.toml",
        ..Default::default()
    };
    for (params, key, says) in [
        (
            "hystart = \"off\"",
            "flows[0].cc_params.hystart",
            "expected a boolean",
        ),
        (
            "beta = 0.7",
            "flows[0].cc_params.beta",
            "expected an integer in 1..=1023",
        ),
        (
            "hystart_detect = \"train\"",
            "flows[0].cc_params.hystart_detect",
            "\"ack_train\"",
        ),
        (
            "fast_convergance = true",
            "flows[0].cc_params.fast_convergance",
            "accepted: hystart, ",
        ),
    ] {
        let e = match load(&deep_buffer(params), &opts) {
            Ok(_) => panic!("{params} accepted"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("s.toml") && e.contains(key) && e.contains(says),
            "{params}: {e}"
        );
    }
}

#[test]
fn two_cubic_flows_share_a_bottleneck_fairly() {
    // Jain's index >= 0.95 over the last 30 s of a 60 s run, the second flow starting 2 s late
    // (20 Mbit/s, 40 ms RTT, one BDP of buffer).
    let toml = r#"
duration = "60s"
[links.down]
rate = "20Mbps"
delay = "20ms"
buffer = "67pkt"
[links.up]
rate = "1Gbps"
delay = "20ms"
[[flows]]
name = "a"
path = ["down"]
ack_path = ["up"]
cc = "cubic"
[[flows]]
name = "b"
path = ["down"]
ack_path = ["up"]
cc = "cubic"
start = "2s"
"#;
    let mut w = load(
        toml,
        &ParseOptions {
            source: "<test>",
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    w.run();
    let g: Vec<f64> = (0..2)
        .map(|i| w.goodput_mbps_between(i, 30.0, 60.0))
        .collect();
    let jain = (g[0] + g[1]).powi(2) / (2.0 * (g[0] * g[0] + g[1] * g[1]));
    println!("goodputs {g:?} Mbit/s, Jain {jain:.4}");
    assert!(jain >= 0.95, "Jain's index {jain}: {g:?}");
    assert!(g[0] + g[1] > 0.85 * 20.0 * 1448.0 / 1500.0, "{g:?}");
}
