//! Prints, per TCP flow and subflow, how its sender's ACKs went through tcp_ack: the fast path
//! (header prediction, Linux's `TcpExtTCPHPAcks`) or the slow path (`TcpExtTCPPureAcks`), with
//! the flow's goodput, as JSON lines: `cargo run --release -p rove-world --example ack_paths --
//! FILE [KEY=VALUE ...]`. The kernel backend's counterpart is `netstat` in the kernel run's
//! summary.json (the sender namespace's /proc/net/netstat at the end of the run).
use rove_world::{load_file, summarize};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: ack_paths SCENARIO [KEY=VALUE ...]");
        std::process::exit(2);
    }
    let overrides: Vec<(String, String)> = args[2..]
        .iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or_else(|| {
                eprintln!("{kv}: expected KEY=VALUE");
                std::process::exit(2)
            });
            (k.to_string(), v.to_string())
        })
        .collect();
    let mut world = load_file(Path::new(&args[1]), &overrides).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    world.run();
    let summary = summarize(&world);
    for (i, f) in world.flows.iter().enumerate() {
        for sub in 0..f.transport.subflow_count() {
            let Some(s) = f.transport.tcp_sender(sub) else {
                continue;
            };
            let line = serde_json::json!({
                "flow": f.name, "subflow": sub, "cc": s.cc.name(),
                "goodput_mbps": summary.flows[i].goodput_mbps,
                "acks": s.stats.acks, "hp_acks": s.stats.hp_acks,
                "pure_acks": s.stats.pure_acks,
                "segs_sent": s.stats.segs_sent, "retrans_segs": s.stats.retrans_segs,
            });
            println!("{line}");
        }
    }
}
