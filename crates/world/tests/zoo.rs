//! The congestion-control zoo (issue 12 item 1): each Linux algorithm's signature behaviour in a
//! whole scenario, on multipath subflows, and switched to and from mid-connection.
//!
//! The paths are `common::bottleneck`: a bottleneck "down" (link 0) and a 1 Gbit/s, 20 ms ACK
//! link "up". Packets are 1500 bytes on the wire (MSS 1448 + 52 bytes of headers).

use crate::common;

use common::{assert_complete_in_order, bottleneck, run, run_logged, run_switched, world};
use rove_world::World;

/// Bits per packet on the wire.
const PKT_BITS: f64 = 1500.0 * 8.0;

/// Mean backlog (packets) of link `link` over the rows at or after `from_s`.
fn mean_backlog_pkts(w: &World, link: u32, from_s: f64) -> f64 {
    let l = &w.recorder.links;
    let v: Vec<f64> = (0..l.time_s.len())
        .filter(|&i| l.link[i] == link && l.time_s[i] >= from_s)
        .map(|i| l.backlog_pkts[i] as f64)
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// Mean queueing delay (ms) of the packets that left link `link` at or after `from_s`.
fn mean_sojourn_ms(w: &World, link: u32, from_s: f64) -> f64 {
    let l = &w.recorder.links;
    let (mut n, mut sum) = (0.0, 0.0);
    for i in 0..l.time_s.len() {
        if l.link[i] == link && l.time_s[i] >= from_s && l.sojourn_count[i] > 0 {
            n += l.sojourn_count[i] as f64;
            sum += l.sojourn_count[i] as f64 * l.sojourn_mean_ms[i];
        }
    }
    sum / n
}

#[test]
fn vegas_holds_between_alpha_and_beta_packets_in_the_queue() {
    // 10 Mbit/s, 40 ms RTT (BDP 33 packets), a 200-packet buffer: Vegas, alone, never fills it.
    let rate_bps = 10e6;
    let (w, s) = run(&bottleneck(
        "30s",
        "",
        "rate = \"10Mbps\"\ndelay = \"20ms\"\nbuffer = \"200pkt\"",
        &[("a", "vegas", "")],
    ));
    // The queue in packets from its queueing delay: delay × rate / packet size.
    let sojourn_ms = mean_sojourn_ms(&w, 0, 10.0);
    let queue_pkts = sojourn_ms * 1e-3 * rate_bps / PKT_BITS;
    let backlog = mean_backlog_pkts(&w, 0, 10.0);
    println!("vegas: queueing delay {sojourn_ms:.2} ms = {queue_pkts:.2} packets; mean backlog {backlog:.2} packets; goodput {:.3} Mbit/s", s.flows[0].goodput_mbps);
    // tcp_vegas.c: alpha = 2, beta = 4. Vegas's diff = ⌊cwnd·(rtt − baseRTT)/baseRTT⌋ is held in
    // [α, β]; the truncation lets the real backlog reach just under β + 1.
    let (alpha, beta) = (2.0, 4.0);
    for (what, q) in [
        ("from the queueing delay", queue_pkts),
        ("sampled", backlog),
    ] {
        assert!(
            (alpha..beta + 1.0).contains(&q),
            "queue {what}: {q:.2} packets, not in [α, β + 1)"
        );
    }
    assert_eq!(
        s.links[0].drops, 0,
        "Vegas alone never overflows the buffer"
    );
    // Goodput: 10 Mbit/s · 1448/1500 = 9.65 Mbit/s at most; at least 95 % of it.
    assert!(s.flows[0].goodput_mbps > 0.95 * 10.0 * 1448.0 / 1500.0);
}

/// Goodput (Mbit/s) of one `cc` flow over a 20 Mbit/s, 40 ms RTT path with 1 % random loss.
fn lossy_goodput(cc: &str) -> f64 {
    let (_, s) = run(&bottleneck(
        "30s",
        "",
        "rate = \"20Mbps\"\ndelay = \"20ms\"\nbuffer = \"200pkt\"\nloss = 0.01",
        &[("a", cc, "")],
    ));
    s.flows[0].goodput_mbps
}

/// Strict expected failure (issue 13): the factor 2 was met only while the simulator's receiver
/// offered its whole window again on the ACK for a filled hole, so that ACK took the sender's
/// fast path and Westwood+ counted the recovery's duplicate ACKs twice (its estimate ran 1.17×
/// the goodput; westwood 9.03 against reno 3.42 Mbit/s in the fidelity zoo's case). With the
/// window Linux's receiver offers there (receiver.rs, `tuned_window`) this case measures
/// westwood 6.23 against reno 3.29 Mbit/s, 1.89×; the kernel backend 1.57× (5.07 vs 3.22 Mbit/s,
/// tests/test_kernel_bpf.py) and 1.7× in the zoo's case (5.75-5.84 vs 3.37).
#[test]
#[should_panic(expected = "westwood 6.2")]
fn westwood_keeps_more_of_a_lossy_link_than_reno() {
    let (westwood, reno) = (lossy_goodput("westwood"), lossy_goodput("reno"));
    println!("1 % loss, 20 Mbit/s: westwood {westwood:.2} Mbit/s, reno {reno:.2} Mbit/s");
    // A random loss sets cwnd to bw_est·rtt_min (the pipe), not to cwnd/2.
    assert!(westwood > 2.0 * reno, "westwood {westwood}, reno {reno}");
}

#[test]
fn westwood_estimates_the_rate_it_gets_under_random_loss() {
    // Westwood+'s bw_est is the bytes each ACK newly acknowledges (a duplicate ACK one MSS,
    // taken back from the ACK that covers it: westwood_acked_count) per sampling window,
    // through two 7/8 filters: over a run its mean is the rate at which snd_una advances, the
    // goodput. The ACK that ends a recovery carries a smaller window (the data the
    // retransmission joined to the stream is still unread), so it takes the slow path and the
    // recovery's duplicate ACKs are not counted twice. Measured: 1.013 (1.172 when that ACK
    // took the fast path).
    let (w, s) = run(&bottleneck(
        "30s",
        "",
        "rate = \"20Mbps\"\ndelay = \"20ms\"\nbuffer = \"200pkt\"\nloss = 0.01",
        &[("a", "westwood", "")],
    ));
    let f = &w.recorder.flows;
    let est = &f
        .extra
        .iter()
        .find(|(n, _)| *n == "westwood_bw_est_bps")
        .unwrap()
        .1;
    let rows: Vec<usize> = common::rows(f)
        .into_iter()
        .filter(|&i| f.time_s[i] >= 5.0)
        .collect();
    let (first, last) = (rows[0], *rows.last().unwrap());
    let mean_est = rows.iter().map(|&i| est[i]).sum::<f64>() / rows.len() as f64;
    let goodput = (f.bytes_delivered[last] - f.bytes_delivered[first]) as f64 * 8.0
        / (f.time_s[last] - f.time_s[first]);
    let ratio = mean_est / goodput;
    println!(
        "westwood, 1 % loss: bw_est mean {:.3} Mbit/s, goodput {:.3} Mbit/s (5-30 s), ratio {ratio:.3}; summary goodput {:.3}",
        mean_est / 1e6,
        goodput / 1e6,
        s.flows[0].goodput_mbps
    );
    assert!((0.95..1.05).contains(&ratio), "bw_est / goodput = {ratio}");
}

#[test]
fn veno_keeps_more_of_a_random_loss_link_than_reno() {
    let (veno, reno) = (lossy_goodput("veno"), lossy_goodput("reno"));
    println!("1 % loss, 20 Mbit/s: veno {veno:.2} Mbit/s, reno {reno:.2} Mbit/s");
    // With a backlog below β = 3 packets a loss cuts cwnd by 1/5, not 1/2.
    assert!(veno > 1.3 * reno, "veno {veno}, reno {reno}");
}

#[test]
fn illinois_keeps_a_larger_standing_queue_than_cubic_at_a_two_bdp_buffer() {
    // 50 Mbit/s, 100 ms RTT: BDP = 50e6·0.1/12000 = 417 packets; buffer 800 packets (1.9 BDP).
    let measure = |cc: &str| {
        let (w, s) = run(&bottleneck(
            "60s",
            "",
            "rate = \"50Mbps\"\ndelay = \"50ms\"\nbuffer = \"800pkt\"",
            &[("a", cc, "")],
        ));
        (
            mean_backlog_pkts(&w, 0, 10.0),
            s.flows[0].mean_rtt_ms.unwrap(),
        )
    };
    let (illinois_q, illinois_rtt) = measure("illinois");
    let (cubic_q, cubic_rtt) = measure("cubic");
    println!(
        "illinois: backlog {illinois_q:.1} packets, mean RTT {illinois_rtt:.1} ms; cubic: {cubic_q:.1}, {cubic_rtt:.1} ms"
    );
    // Illinois's α stays large while the queueing delay is a small part of its maximum, and
    // only near the maximum slows to 0.3 packets per RTT: it sits near a full buffer.
    assert!(illinois_q > cubic_q, "backlog {illinois_q} vs {cubic_q}");
    assert!(
        illinois_rtt > cubic_rtt,
        "mean RTT {illinois_rtt} vs {cubic_rtt}"
    );
}

const ZOO: [&str; 4] = ["vegas", "westwood", "illinois", "veno"];

#[test]
fn each_new_algorithm_runs_on_multipath_subflows_and_switches_to_and_from() {
    for cc in ZOO {
        // Two uncoupled subflows, each running `cc`, over paths of different RTTs.
        let size = 5_000_000u64;
        let toml = format!(
            r#"
duration = "30s"
[links.a_down]
rate = "10Mbps"
delay = "15ms"
buffer = "100pkt"
loss = 0.002
[links.a_up]
rate = "100Mbps"
delay = "15ms"
[links.b_down]
rate = "20Mbps"
delay = "40ms"
buffer = "100pkt"
[links.b_up]
rate = "100Mbps"
delay = "40ms"
[[flows]]
name = "mp"
cc = "{cc}"
size = "{size}B"
paths = [{{ path = ["a_down"], ack_path = ["a_up"] }}, {{ path = ["b_down"], ack_path = ["b_up"] }}]
"#
        );
        let (w, s) = run_logged(world(&toml));
        assert_complete_in_order(&w, &s, size, &format!("multipath {cc}"));
        let mp = s.flows[0].multipath.as_ref().unwrap();
        for (i, sub) in mp.subflows.iter().enumerate() {
            assert!(sub.share > 0.1, "{cc}: subflow {i} carried {:?}", sub.share);
        }

        // cubic → cc at 5 s → reno at 10 s, on one flow.
        let (w, s) = run_switched("cubic", cc, "reno");
        let f = &w.recorder.flows;
        let rows: Vec<usize> = (0..f.time_s.len()).filter(|&i| f.flow[i] == 0).collect();
        let at = |t: f64| {
            *rows
                .iter()
                .find(|&&i| (f.time_s[i] - t).abs() < 1e-9)
                .unwrap_or_else(|| panic!("no row at {t} s"))
        };
        // Each algorithm kept the link busy in its period (20 Mbit/s = 2.5 MB/s, at least 70 %).
        for (from, to, who) in [(5.0, 9.99, cc), (10.0, 14.99, "reno")] {
            let (i, j) = (at(from), at(to));
            let bytes = (f.bytes_acked[j] - f.bytes_acked[i]) as f64;
            let mbps = bytes * 8.0 / (f.time_s[j] - f.time_s[i]) / 1e6;
            assert!(
                mbps > 0.7 * 20.0,
                "{cc}: {who} from {from} s: {mbps:.2} Mbit/s"
            );
        }
        assert!(s.flows[0].retrans_rate < 0.05, "{cc}: retransmissions");
    }
}
