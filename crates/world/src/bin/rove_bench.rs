//! `rove-bench SCENARIO [--set KEY=VALUE ...]`: runs one scenario in the simulator without
//! writing results and prints wall time, events, events per second and peak memory.
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
        eprintln!("usage: rove-bench SCENARIO [--set KEY=VALUE ...]");
        return ExitCode::from(2);
    };
    let mut overrides = Vec::new();
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.next()) {
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
    let goodput: f64 = summary.flows.iter().map(|f| f.goodput_mbps).sum();
    let label = overrides
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    println!(
        "{:<40} {:>8.3} s wall  {:>11} events  {:>6.2} M events/s  {:>7.1} MiB peak  ({} flows, {:.1} Mbps total goodput, {:.0} s simulated)",
        format!("{} {}", p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(), label),
        wall,
        events,
        events as f64 / wall / 1e6,
        peak_rss_mib().unwrap_or(f64::NAN),
        summary.flows.len(),
        goodput,
        summary.duration_s,
    );
    ExitCode::SUCCESS
}
