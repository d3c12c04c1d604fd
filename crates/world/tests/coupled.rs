//! The coupled algorithms (LIA, OLIA, BALIA, wVegas; crates/tcp/src/cc/coupled) on single-path
//! flows, where each is a one-subflow group. Multipath behaviour (shares at a shared
//! bottleneck) is tested with the connection layer.

mod common;
use common::{rows, run};

fn one_flow(cc: &str, loss: f64, buffer: &str) -> String {
    format!(
        r#"
duration = "20s"
sample_interval = "10ms"
[links.down]
rate = "20Mbps"
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
cc = "{cc}"
"#
    )
}

#[test]
fn lone_lia_olia_and_balia_are_reno_packet_for_packet() {
    // RFC 6356 §3, OLIA and BALIA all reduce to Reno on one path; the whole run, with random
    // losses and a queue that overflows, must be identical to Reno's.
    let (reno_w, reno) = run(&one_flow("reno", 0.002, "100pkt"));
    let reno_cwnd: Vec<u32> = rows(&reno_w.recorder.flows).iter().map(|&i| reno_w.recorder.flows.cwnd_pkts[i]).collect();
    assert!(reno.flows[0].retrans_rate > 0.0);
    for cc in ["lia", "olia", "balia"] {
        let (w, s) = run(&one_flow(cc, 0.002, "100pkt"));
        let cwnd: Vec<u32> = rows(&w.recorder.flows).iter().map(|&i| w.recorder.flows.cwnd_pkts[i]).collect();
        assert_eq!(cwnd, reno_cwnd, "{cc}");
        assert_eq!(s.flows[0].goodput_mbps, reno.flows[0].goodput_mbps, "{cc}");
        assert_eq!(s.flows[0].retrans_rate, reno.flows[0].retrans_rate, "{cc}");
    }
}

#[test]
fn lone_wvegas_keeps_the_queue_short() {
    // Alone, wVegas aims at α = total_alpha = 10 packets queued (6 ms at 20 Mbit/s), where Reno
    // fills the 1000-packet buffer (600 ms). Its drain rule (cwnd·base_rtt/(2·rtt) once the
    // queueing delay reaches twice its minimum since the last drain) fires as soon as the queue
    // doubles from the one packet that delayed-ACK pairs leave, and the round's mean RTT (not
    // Vegas's minimum) includes samples delayed by the 40 ms delayed-ACK timer, so on this
    // clean path it holds cwnd near 40 packets (BDP 68) and about half the link: low
    // throughput, as the thesis reports for wVegas (seed 000 §4.8).
    let (_, s) = run(&one_flow("wvegas", 0.0, "1000pkt"));
    let f = &s.flows[0];
    assert!(f.goodput_mbps > 9.0 && f.goodput_mbps < 16.0, "goodput {}", f.goodput_mbps);
    assert!(f.mean_rtt_ms.unwrap() < 40.6 + 6.0, "mean rtt {:?}", f.mean_rtt_ms);
    let (_, r) = run(&one_flow("reno", 0.0, "1000pkt"));
    assert!(r.flows[0].mean_rtt_ms.unwrap() > 200.0, "reno mean rtt {:?}", r.flows[0].mean_rtt_ms);
}
