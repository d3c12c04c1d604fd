//! Prints the summary of a scenario as JSON: `cargo run --release -p rove-world --example summary -- FILE [KEY=VALUE ...]`.
use rove_world::{load_file, summarize};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let overrides: Vec<(String, String)> = args[2..]
        .iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("KEY=VALUE");
            (k.to_string(), v.to_string())
        })
        .collect();
    let mut world = load_file(Path::new(&args[1]), &overrides).unwrap_or_else(|e| panic!("{e}"));
    world.run();
    if std::env::var_os("ROVE_ROWS").is_some() {
        // Time-series rows, one line each (for a quick look at a run).
        let f = &world.recorder.flows;
        for i in 0..f.time_s.len() {
            if (f.time_s[i] * 100.0).round() as u64 % 50 == 0 {
                println!(
                    "t={:.2} flow={} sub={} cwnd={} inflight={} srtt={:.1} delivered={} ofo={} {}",
                    f.time_s[i],
                    f.flow[i],
                    f.subflow[i],
                    f.cwnd_pkts[i],
                    f.inflight_pkts[i],
                    f.srtt_ms[i],
                    f.bytes_delivered[i],
                    f.ofo_bytes[i],
                    f.ca_state[i]
                );
            }
        }
        return;
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&summarize(&world)).unwrap()
    );
}
