//! `rove-bench SCENARIO [--set KEY=VALUE ...] [--dump FILE] [--json]`: runs one scenario in the
//! simulator without writing results and prints wall time, events, events per second, packets
//! delivered, nanoseconds per delivered packet and peak memory (`--json`: the same figures as
//! one JSON object, for `bench/run_bench.py --scale`). A delivered packet is a data segment that
//! reached the end of its route (its receiver), SYNs and datagrams included; ACKs are counted
//! apart.
//!
//! `--dump FILE` writes the run's summary (minus its wall time) and every time-series column
//! (the recorder's, `{:?}`: floats in shortest round-trip form, so equal text means equal
//! bits) to FILE: `bench/same_results.py` compares such dumps before and after an engine
//! change.
//! `make bench` runs it once per benchmark scenario and algorithm, each in its own process so
//! the peak-memory figure belongs to that run alone.

use rove_world::{load, summarize, ParseOptions};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// Peak resident set size of this process (VmHWM), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: rove-bench SCENARIO [--set KEY=VALUE ...] [--dump FILE] [--json]");
        return ExitCode::from(2);
    };
    let mut overrides = Vec::new();
    let mut dump = None;
    let mut json = false;
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        if a == "--json" {
            json = true;
            continue;
        }
        match (a.as_str(), it.next()) {
            ("--dump", Some(file)) => dump = Some(file.clone()),
            ("--set", Some(kv)) => match kv.split_once('=') {
                Some((k, v)) => overrides.push((k.to_string(), v.to_string())),
                None => {
                    eprintln!("rove-bench: error: --set expects KEY=VALUE, got {kv:?}");
                    return ExitCode::from(2);
                }
            },
            _ => {
                eprintln!("rove-bench: error: unexpected argument {a:?}");
                return ExitCode::from(2);
            }
        }
    }
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("rove-bench: error: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let p = Path::new(path);
    let opts = ParseOptions {
        source: path,
        base_dir: p.parent(),
        overrides: &overrides,
        ..Default::default()
    };
    let t0 = Instant::now();
    let mut world = match load(&text, &opts) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("rove-bench: error: {e}");
            return ExitCode::from(2);
        }
    };
    world.run();
    let summary = summarize(&world);
    let wall = t0.elapsed().as_secs_f64();
    let events = world.events();
    if let Some(file) = dump {
        let text = format!(
            "{summary:#?}\n{:#?}\n{:#?}\n",
            world.recorder.flows, world.recorder.links
        );
        if let Err(e) = std::fs::write(&file, text) {
            eprintln!("rove-bench: error: {file}: {e}");
            return ExitCode::from(2);
        }
    }
    let goodput: f64 = summary.flows.iter().map(|f| f.goodput_mbps).sum();
    let (data, acks) = world.packets_delivered();
    if json {
        println!(
            "{{\"wall_s\": {wall}, \"events\": {events}, \"data_packets\": {data}, \"acks\": {acks}, \"peak_rss_mib\": {}, \"flows\": {}, \"goodput_mbps\": {goodput}, \"duration_s\": {}}}",
            peak_rss_mib().unwrap_or(-1.0),
            summary.flows.len(),
            summary.duration_s,
        );
        return ExitCode::SUCCESS;
    }
    let label = overrides
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    println!(
        "{:<40} {:>8.3} s wall  {:>11} events  {:>6.2} M events/s  {:>11} data pkts  {:>6.0} ns/pkt  {:>7.1} MiB peak  ({} flows, {:.1} Mbps total goodput, {:.0} s simulated, {} ACKs)",
        format!("{} {}", p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(), label),
        wall,
        events,
        events as f64 / wall / 1e6,
        data,
        wall * 1e9 / data.max(1) as f64,
        peak_rss_mib().unwrap_or(f64::NAN),
        summary.flows.len(),
        goodput,
        summary.duration_s,
        acks,
    );
    ExitCode::SUCCESS
}
