//! Bounded memory (issue 10 item 7): the engine keeps no per-packet record (RTT, one-way delay,
//! application delay and queueing delay go into bounded histograms), so a run ten times longer
//! needs no more memory, apart from the time series the scenario asks for (one row per
//! `sample_interval`, which grows with the duration by design). The test therefore holds the
//! number of rows fixed (100 samples in both runs) and compares peak memory of the engine alone,
//! each run in its own process (`rove-bench` reports its VmHWM).

use std::process::Command;

const SCENARIO: &str = r#"
name = "memory"
duration = "60s"
seed = 1

[links.down]
rate = "100Mbps"
delay = "20ms"
buffer = "1000pkt"

[links.up]
rate = "100Mbps"
delay = "20ms"

[[flows]]
name = "f"
cc = "cubic"
path = ["down"]
ack_path = ["up"]
"#;

/// Peak resident memory (MiB) of one `rove-bench` run of the scenario for `duration`.
fn peak_mib(path: &std::path::Path, duration: &str, sample_interval: &str) -> f64 {
    let out = Command::new(env!("CARGO_BIN_EXE_rove-bench"))
        .arg(path)
        .args(["--set", &format!("duration={duration}")])
        .args(["--set", &format!("sample_interval={sample_interval}")])
        .output()
        .expect("rove-bench runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    // "... 6.3 MiB peak ..."
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "MiB")
        .unwrap_or_else(|| panic!("no peak memory in {line:?}"));
    words[at - 1].parse().unwrap()
}

#[test]
fn a_600s_run_at_100mbps_peaks_at_the_memory_of_a_60s_one() {
    let dir = std::env::temp_dir().join(format!("rove-memory-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("memory.toml");
    std::fs::write(&path, SCENARIO).unwrap();
    let short = peak_mib(&path, "60s", "600ms");
    let long = peak_mib(&path, "600s", "6s");
    std::fs::remove_dir_all(&dir).ok();
    eprintln!("peak memory: 60 s {short:.1} MiB, 600 s {long:.1} MiB");
    // 8.3 k packets/s for 600 s: a per-packet record of 8 bytes alone would add 40 MiB.
    assert!(long <= short * 1.1, "600 s: {long} MiB, 60 s: {short} MiB");
}
