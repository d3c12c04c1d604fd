//! MPTCP-TSC (`scheduler = "tsc"`, seed 003 Ch. 2) on the dissertation's Ch. 2 setting.

mod common;

use common::run;
use rove_world::{Summary, World};

/// WiFi (subflow 0, cost 1) and LTE (subflow 1, cost 10) carrying a VBR video.
fn ch2(scheduler: &str, params: &str, video: &str, duration: &str) -> String {
    format!(
        r#"duration = "{duration}"
[links.wifi]
rate = "3Mbps"
delay = "10ms"
buffer = "750KB"
[links.wifi_up]
rate = "20Mbps"
delay = "10ms"
[links.lte]
rate = "15Mbps"
delay = "20ms"
buffer = "7MB"
[links.lte_up]
rate = "20Mbps"
delay = "20ms"
[[flows]]
name = "v"
cc = "reno"
workload = "video"
{video}
paths = [{{ path = ["wifi"], ack_path = ["wifi_up"], cost = 1 }}, {{ path = ["lte"], ack_path = ["lte_up"], cost = 10 }}]
scheduler = "{scheduler}"
scheduler_params = {{ {params} }}
"#
    )
}

/// Fraction of subflow `j`'s RTT samples below `ms`.
fn rtt_fraction_below(w: &World, j: usize, ms: f64) -> f64 {
    let c = w.flows[0].transport.connection().unwrap();
    let h = &c.subflows[j].sender.stats.rtt;
    let n = h.count();
    // The histogram's quantiles: the fraction is the largest q with quantile(q) < ms.
    let mut lo = 0.0;
    for k in 1..=1000 {
        let q = k as f64 / 1000.0;
        if (h.quantile(q).unwrap() as f64) / 1e6 < ms {
            lo = q;
        }
    }
    let _ = n;
    lo
}

fn report(name: &str, w: &World, s: &Summary, d_net_ms: f64) {
    let f = &s.flows[0];
    let mp = f.multipath.as_ref().unwrap();
    let v = f.video.as_ref().unwrap();
    let p = v.packets.as_ref().unwrap();
    println!(
        "{name}: goodput {:.2} Mbit/s, cost {:.2}, within {:.3} (req {} ms), pkt p50 {:?} p95 {:?}, frames miss {:?}",
        f.goodput_mbps,
        mp.path_cost.unwrap(),
        p.packets_within_required_delay.unwrap_or(f64::NAN),
        p.required_delay_ms,
        p.packet_delay_p50_ms,
        p.packet_delay_p95_ms,
        v.deadline_miss_ratio
    );
    for sf in &mp.subflows {
        println!(
            "   sub {}: {:.2} Mbit/s, rtt mean {:?} p95 {:?}, peak x/c {:?}, retrans {:.4}",
            sf.index,
            sf.throughput_mbps,
            sf.mean_rtt_ms,
            sf.p95_rtt_ms,
            sf.peak_x_over_c,
            sf.retrans_rate
        );
    }
    println!(
        "   WiFi RTT < 2 d_net ({} ms): {:.3}",
        2.0 * d_net_ms,
        rtt_fraction_below(w, 0, 2.0 * d_net_ms)
    );
}

const VIDEO: &str = "bitrate = \"4Mbps\"\nfps = 30\nframe_jitter = 0.5";

#[test]
fn explore() {
    for (d_net, p) in [
        (100.0, "backlog_term = true"),
        (100.0, "slow_start_exemption = false"),
        (100.0, "estimate_rate = \"carried\""),
        (100.0, "x_min_pps = 0"),
        (100.0, "slow_start_exemption = false, backlog_term = true"),
        (
            100.0,
            "slow_start_exemption = false, backlog_term = true, x_min_pps = 0",
        ),
        (
            100.0,
            "slow_start_exemption = false, backlog_term = true, rate_slots = 3",
        ),
    ] {
        let req = d_net + 100.0;
        let video = format!("{VIDEO}\nrequired_delay = \"{req}ms\"");
        let params = if p.is_empty() {
            format!("d_net_thr_ms = {d_net}")
        } else {
            format!("d_net_thr_ms = {d_net}, {p}")
        };
        let (w, s) = run(&ch2("tsc", &params, &video, "60s"));
        report(&format!("tsc {params}"), &w, &s, d_net);
    }
}
