//! `rove-emu`: the link emulator of rove's kernel backend (see `rove_emu::link_emu`).
//!
//!     rove-emu --scenario FILE [--seed N] [--set KEY=VALUE ...] --snd-ns NS --rcv-ns NS
//!              [--tun NAME] --t0-mono-ns T --out DIR [--stop-after-s S] [--spin-us U]
//!              [--rt-prio P] [--min-sleep-us M] [--isolate on|off] [--cpu-latency-us L|off]
//!
//! Attaches to the TUN device NAME (default rove0) in both namespaces, prints `ready` on
//! stdout, then moves packets until SIGTERM/SIGINT or S seconds of emulator time, and writes
//! its records into DIR. T is the CLOCK_MONOTONIC time (ns) of the scenario's time 0.
//! P (default 10, 0: off) is the SCHED_FIFO priority the emulator runs at (see sys::set_realtime).
//! M (default 50) is the shortest sleep of the event loop (link_emu::DEFAULT_MIN_SLEEP_NS).
//! `--isolate on` (default) pins the emulator to its last allowed CPU and steers the two
//! namespaces' receive processing to the others (see rove_emu::isolate); `off` does neither.
//! L (default 0) is the wake-up latency from idle, in µs, the emulator asks of every CPU while
//! it runs (sys::hold_cpu_latency; `off`: no request, the CPUs' idle states as configured).
//! Exit status: 0 done, 1 runtime failure, 2 bad arguments or scenario.

use rove_emu::args::{split_set, Args};
use rove_emu::link_emu::{
    EmuOptions, Emulator, DEFAULT_CPU_LATENCY_US, DEFAULT_MIN_SLEEP_NS, DEFAULT_SPIN_NS,
};
use rove_emu::sys;
use rove_emu::tun::Tun;
use std::io::Write;
use std::path::PathBuf;

struct Cli {
    scenario: PathBuf,
    seed: Option<u64>,
    overrides: Vec<(String, String)>,
    snd_ns: String,
    rcv_ns: String,
    tun: String,
    t0: u64,
    out: PathBuf,
    stop_after_s: Option<f64>,
    spin_us: u64,
    rt_prio: i32,
    min_sleep_us: u64,
    isolate: bool,
    cpu_latency_us: Option<u32>,
}

fn need<T>(v: Option<T>, opt: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("{opt} is required (see --help)"))
}

fn parse_cli() -> Result<Cli, String> {
    let mut a = Args::from_env();
    let (mut scenario, mut seed, mut overrides) = (None, None, Vec::new());
    let (mut snd_ns, mut rcv_ns, mut tun, mut t0, mut out) =
        (None, None, "rove0".to_string(), None, None);
    let (mut stop_after_s, mut spin_us, mut rt_prio) = (None, DEFAULT_SPIN_NS / 1000, 10);
    let (mut min_sleep_us, mut isolate) = (DEFAULT_MIN_SLEEP_NS / 1000, true);
    let mut cpu_latency_us = Some(DEFAULT_CPU_LATENCY_US);
    while let Some(opt) = a.next_arg() {
        match opt.as_str() {
            "--scenario" => scenario = Some(PathBuf::from(a.value(&opt)?)),
            "--seed" => seed = Some(a.parsed(&opt, "an integer >= 0")?),
            "--set" => overrides.push(split_set(&a.value(&opt)?)?),
            "--snd-ns" => snd_ns = Some(a.value(&opt)?),
            "--rcv-ns" => rcv_ns = Some(a.value(&opt)?),
            "--tun" => tun = a.value(&opt)?,
            "--t0-mono-ns" => t0 = Some(a.parsed(&opt, "nanoseconds of CLOCK_MONOTONIC")?),
            "--out" => out = Some(PathBuf::from(a.value(&opt)?)),
            "--stop-after-s" => stop_after_s = Some(a.parsed(&opt, "seconds")?),
            "--spin-us" => spin_us = a.parsed(&opt, "microseconds")?,
            "--rt-prio" => rt_prio = a.parsed(&opt, "a priority 0..99")?,
            "--min-sleep-us" => min_sleep_us = a.parsed(&opt, "microseconds")?,
            "--isolate" => {
                isolate = match a.value(&opt)?.as_str() {
                    "on" => true,
                    "off" => false,
                    v => return Err(format!("--isolate {v:?}: expected on or off")),
                }
            }
            "--cpu-latency-us" => {
                cpu_latency_us = match a.value(&opt)?.as_str() {
                    "off" => None,
                    v => Some(v.parse().map_err(|_| {
                        format!("--cpu-latency-us {v:?}: expected microseconds >= 0 or off")
                    })?),
                }
            }
            "-h" | "--help" => {
                println!("usage: rove-emu --scenario FILE [--seed N] [--set K=V ...] --snd-ns NS --rcv-ns NS [--tun NAME] --t0-mono-ns T --out DIR [--stop-after-s S] [--spin-us U] [--rt-prio P] [--min-sleep-us M] [--isolate on|off] [--cpu-latency-us L|off]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?} (see --help)")),
        }
    }
    Ok(Cli {
        scenario: need(scenario, "--scenario")?,
        seed,
        overrides,
        snd_ns: need(snd_ns, "--snd-ns")?,
        rcv_ns: need(rcv_ns, "--rcv-ns")?,
        tun,
        t0: need(t0, "--t0-mono-ns")?,
        out: need(out, "--out")?,
        stop_after_s,
        spin_us,
        rt_prio,
        min_sleep_us,
        isolate,
        cpu_latency_us,
    })
}

fn fail(code: i32, msg: impl std::fmt::Display) -> ! {
    eprintln!("rove-emu: error: {msg}");
    std::process::exit(code)
}

/// Pins this process and steers both namespaces' receive processing elsewhere (warnings only:
/// the emulator works without, at a higher CPU cost).
fn isolate(snd_ns: &str, rcv_ns: &str, tun: &str) {
    use rove_emu::isolate::{allowed_cpus, claim_cpu, pin_to, plan, steer};
    let Some((cpu, mask)) = allowed_cpus().ok().and_then(|c| plan(&c, claim_cpu)) else {
        return; // one CPU (nothing to steer to), or every CPU has its emulator
    };
    if let Err(e) = pin_to(cpu) {
        eprintln!("rove-emu: warning: cannot pin to CPU {cpu} ({e}); not steering");
        return;
    }
    for ns in [snd_ns, rcv_ns] {
        if let Err(e) = steer(ns, tun, &mask) {
            eprintln!("rove-emu: warning: cannot steer receive processing: {e}");
        }
    }
}

fn main() {
    let cli = parse_cli().unwrap_or_else(|e| fail(2, e));
    if let Err(e) = rove_emu::orchestrate::check_machine() {
        fail(2, e);
    }
    let scenario = rove_emu::link_emu::parse_scenario(&cli.scenario, &cli.overrides, cli.seed)
        .unwrap_or_else(|e| fail(2, e));
    // Stop signals arrive through a signalfd in the event loop, never in the middle of a write.
    if let Err(e) = sys::block_stop_signals() {
        fail(1, format!("cannot block signals: {e}"));
    }
    let sigfd = sys::stop_signalfd().unwrap_or_else(|e| fail(1, format!("signalfd: {e}")));
    let snd = Tun::attach(&cli.snd_ns, &cli.tun).unwrap_or_else(|e| fail(1, e));
    let rcv = Tun::attach(&cli.rcv_ns, &cli.tun).unwrap_or_else(|e| fail(1, e));
    // Held until the process exits: the kernel withdraws the request however it ends.
    let cpu_latency = cli.cpu_latency_us.and_then(|us| match sys::hold_cpu_latency(us) {
        Ok(f) => Some((us, f)),
        Err(e) => {
            eprintln!("rove-emu: warning: cannot request a {us} µs CPU wake-up latency ({e}); packets may leave late while CPUs idle");
            None
        }
    });
    let opts = EmuOptions {
        t0_mono_ns: cli.t0,
        stop_at_ns: cli.stop_after_s.map(|s| (s.max(0.0) * 1e9) as u64),
        spin_ns: cli.spin_us * 1000,
        min_sleep_ns: cli.min_sleep_us * 1000,
        cpu_latency_us: cpu_latency.as_ref().map(|(us, _)| *us),
        out_dir: cli.out,
    };
    if cli.isolate {
        isolate(&cli.snd_ns, &cli.rcv_ns, &cli.tun);
    }
    if cli.rt_prio > 0 {
        if let Err(e) = sys::set_realtime(cli.rt_prio.min(99)) {
            eprintln!("rove-emu: warning: cannot run at real-time priority ({e}); delivery times may be late on a busy machine");
        }
    }
    let mut emu = Emulator::new(scenario, opts).unwrap_or_else(|e| fail(1, e));
    println!("ready");
    let _ = std::io::stdout().flush();
    use std::os::fd::AsRawFd;
    if let Err(e) = emu.run(&snd, &rcv, sigfd.as_raw_fd()) {
        fail(1, e);
    }
}
