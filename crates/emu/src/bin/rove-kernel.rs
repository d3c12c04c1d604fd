//! `rove-kernel`: runs a scenario on the real Linux stack (see `rove_emu::orchestrate`).
//!
//!     rove-kernel run SCENARIO -o DIR [--seed N] [--set KEY=VALUE ...]
//!                 [--traffic-bin PATH] [--emu-bin PATH] [--spin-us U]
//!     rove-kernel cleanup        delete namespaces left by rove runs whose process is gone,
//!                                and unregister eBPF congestion controls no live run uses
//!     rove-kernel algorithms     the congestion controls a run can use here, as JSON:
//!                                {"native": the kernel's own, "ebpf": rove's loadable ports,
//!                                "coupled": the ports that couple MPTCP subflows}
//!
//! `run` writes DIR/raw/ (the emulator's records, one JSONL per flow, run.json); `rove run
//! --backend kernel` turns it into summary.json and the Parquet files. The binaries default to
//! rove-emu and rove-traffic beside this executable ($ROVE_TRAFFIC / $ROVE_EMU override).
//! Exit status: 0 done, 1 failure, 2 bad input or unusable machine (not root, no TUN),
//! 128+N after signal N (everything the run made is removed first).

use rove_emu::args::{split_set, Args};
use rove_emu::orchestrate::{self, RunOptions};
use std::path::PathBuf;

const USAGE: &str = "usage: rove-kernel run SCENARIO -o DIR [--seed N] [--set KEY=VALUE ...] [--traffic-bin PATH] [--emu-bin PATH] [--spin-us U]\n       rove-kernel cleanup\n       rove-kernel algorithms";

fn fail(code: i32, msg: impl std::fmt::Display) -> ! {
    eprintln!("rove-kernel: error: {msg}");
    std::process::exit(code)
}

/// A sibling binary: `$ENV`, else next to this executable.
fn sibling(env: &str, name: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env) {
        return PathBuf::from(p);
    }
    std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(name)))
        .unwrap_or_else(|| PathBuf::from(name))
}

fn parse_run(mut a: Args) -> Result<RunOptions, String> {
    let (mut scenario, mut out, mut seed, mut overrides) = (None, None, None, Vec::new());
    let mut traffic_bin = sibling("ROVE_TRAFFIC", "rove-traffic");
    let mut emu_bin = sibling("ROVE_EMU", "rove-emu");
    let mut spin_us = rove_emu::link_emu::DEFAULT_SPIN_NS / 1000;
    while let Some(arg) = a.next_arg() {
        match arg.as_str() {
            "-o" | "--out" => out = Some(PathBuf::from(a.value(&arg)?)),
            "--seed" => seed = Some(a.parsed(&arg, "an integer >= 0")?),
            "--set" => overrides.push(split_set(&a.value(&arg)?)?),
            "--traffic-bin" => traffic_bin = PathBuf::from(a.value(&arg)?),
            "--emu-bin" => emu_bin = PathBuf::from(a.value(&arg)?),
            "--spin-us" => spin_us = a.parsed(&arg, "microseconds")?,
            s if s.starts_with('-') => return Err(format!("unknown option {s:?}\n{USAGE}")),
            s if scenario.is_none() => scenario = Some(PathBuf::from(s)),
            s => return Err(format!("unexpected argument {s:?}\n{USAGE}")),
        }
    }
    Ok(RunOptions {
        scenario: scenario.ok_or_else(|| format!("run: SCENARIO is required\n{USAGE}"))?,
        out_dir: out.ok_or_else(|| format!("run: -o DIR is required\n{USAGE}"))?,
        seed,
        overrides,
        emu_bin,
        traffic_bin,
        spin_us,
    })
}

fn main() {
    let mut a = Args::from_env();
    match a.next_arg().as_deref() {
        Some("run") => {
            let opts = parse_run(a).unwrap_or_else(|e| fail(2, e));
            match orchestrate::run(&opts) {
                Ok(raw) => println!("{}", raw.display()),
                Err(e) => fail(e.exit_code(), e.message()),
            }
        }
        Some("cleanup") => {
            if let Err(e) = orchestrate::check_machine() {
                fail(2, e);
            }
            match rove_emu::netns::sweep_stale() {
                Ok(removed) => {
                    for n in &removed {
                        println!("removed {n}");
                    }
                    println!("{} stale namespace(s) removed", removed.len());
                }
                Err(e) => fail(1, e),
            }
            match rove_emu::bpf_cc::sweep_stale() {
                Ok(removed) => {
                    for n in &removed {
                        println!("unregistered eBPF congestion control {n}");
                    }
                    println!(
                        "{} unused eBPF congestion control(s) unregistered",
                        removed.len()
                    );
                }
                Err(e) => fail(1, e),
            }
        }
        Some("algorithms") => {
            // The kernel's list also shows rove's ports while some run has them registered.
            let ebpf = rove_emu::bpf_cc::loadable();
            let native: Vec<String> = orchestrate::available_cc()
                .into_iter()
                .filter(|n| !ebpf.contains(n))
                .collect();
            let doc = serde_json::json!({
                "native": native,
                "ebpf": ebpf,
                "coupled": rove_emu::bpf_cc::COUPLED,
            });
            println!("{doc}");
        }
        Some("-h") | Some("--help") => println!("{USAGE}"),
        _ => fail(2, USAGE),
    }
}
