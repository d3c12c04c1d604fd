//! eBPF congestion controls: rove's algorithms that the kernel lacks, loaded into a stock kernel
//! as `struct_ops` `tcp_congestion_ops` (issue 13).
//!
//! Each algorithm is `crates/emu/bpf/NAME.bpf.c`, built by the project's set-up into
//! `target/bpf/NAME.bpf.o` (clang against a `vmlinux.h` dumped from this kernel's BTF); its
//! struct_ops map is `rove_NAME` and its `tcp_congestion_ops.name` is NAME, so once registered
//! `TCP_CONGESTION "NAME"` selects it like a built-in algorithm.
//!
//! Registration is shared by every run on the machine: a run that needs NAME takes a *lease*
//! (the file `LEASE_DIR/NAME/PID`), registers the object with `bpftool struct_ops register` if
//! no live run has, and on release unregisters it when no live lease is left. All of it under
//! an exclusive `flock` on `LEASE_DIR/lock`, so two runs at once neither register twice nor
//! unregister what the other uses. A run killed outright leaves its lease; the next run's
//! release, or `rove-kernel cleanup`, finds its process gone and unregisters what nobody uses.
//! Sockets that still use an algorithm keep it until they close (the kernel holds a reference).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where leases live (tmpfs: a reboot clears them, as it clears the registrations).
pub const LEASE_DIR: &str = "/run/rove-bpf";
/// Prefix of every struct_ops map rove registers (`rove_NAME`).
pub const MAP_PREFIX: &str = "rove_";
/// The eBPF ports that couple the subflows of an MPTCP connection (upstream has none).
pub const COUPLED: &[&str] = &["lia", "olia", "balia"];

/// The directory of the built objects: `$ROVE_BPF_DIR`, else `target/bpf` beside the
/// executable's `target/release`.
pub fn object_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ROVE_BPF_DIR") {
        return PathBuf::from(d);
    }
    std::env::current_exe()
        .ok()
        .and_then(|e| e.parent()?.parent().map(|t| t.join("bpf")))
        .unwrap_or_else(|| PathBuf::from("target/bpf"))
}

fn object(name: &str) -> PathBuf {
    object_dir().join(format!("{name}.bpf.o"))
}

/// The algorithms this machine can load (their objects are built), sorted.
pub fn loadable() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(object_dir())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let f = e.file_name().to_string_lossy().into_owned();
                    f.strip_suffix(".bpf.o").map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// rove's struct_ops maps that are registered now: (map id, algorithm name).
///
/// A map stays listed after it is unregistered, in state TOBEFREE, until the last socket that
/// used it is freed (sockets of a namespace being torn down can take a while), so the state is
/// read from each map's dump, not from its presence.
pub fn registered() -> Result<Vec<(u64, String)>, String> {
    let shown: serde_json::Value = json(&bpftool(&["-j", "struct_ops", "show"])?)?;
    let mut out = Vec::new();
    for m in shown.as_array().into_iter().flatten() {
        let (Some(id), Some(name)) = (m["id"].as_u64(), m["name"].as_str()) else {
            continue;
        };
        let Some(alg) = name.strip_prefix(MAP_PREFIX) else {
            continue;
        };
        // The map may be freed between the two calls: then it is simply not registered.
        let Ok(dump) = bpftool(&["-j", "struct_ops", "dump", "id", &id.to_string()]) else {
            continue;
        };
        if map_state(&json(&dump)?).as_deref() == Some("BPF_STRUCT_OPS_STATE_INUSE") {
            out.push((id, alg.to_string()));
        }
    }
    Ok(out)
}

/// `common.state` of a `bpftool -j struct_ops dump`: in an object, or in any object of an
/// array (bpftool 7.1 prints the map info and the value as two objects).
fn map_state(dump: &serde_json::Value) -> Option<String> {
    let objects: Vec<&serde_json::Value> = match dump {
        serde_json::Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    objects.into_iter().find_map(|o| {
        o.as_object()?
            .iter()
            .find(|(k, _)| k.starts_with("bpf_struct_ops_"))
            .and_then(|(_, v)| v["common"]["state"].as_str().map(str::to_string))
    })
}

/// bpftool's JSON. bpftool 7.1's `struct_ops dump` prints two objects separated by a comma
/// without the enclosing brackets; such output is read as the array it means.
fn json(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text)
        .or_else(|e| serde_json::from_str(&format!("[{}]", text.trim())).map_err(|_| e))
        .map_err(|e| format!("bpftool's JSON output: {e}"))
}

fn bpftool(args: &[&str]) -> Result<String, String> {
    let out = Command::new("bpftool").args(args).output().map_err(|e| {
        format!("cannot run bpftool (install Debian's bpftool; 'make setup' does): {e}")
    })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        return Err(format!("bpftool {}: {}", args.join(" "), first.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The exclusive lock over registrations and leases, held while this value lives (the
/// descriptor's close releases it).
struct Lock(#[allow(dead_code)] File);

impl Lock {
    fn take() -> Result<Lock, String> {
        std::fs::create_dir_all(LEASE_DIR).map_err(|e| format!("{LEASE_DIR}: {e}"))?;
        let path = Path::new(LEASE_DIR).join("lock");
        let f = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        // SAFETY: flock on a descriptor we own; released when the file closes.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(format!(
                "flock {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(Lock(f))
    }
}

fn lease_dir(name: &str) -> PathBuf {
    Path::new(LEASE_DIR).join(name)
}

/// Live leases on `name`; stale ones (their process is gone) are removed.
fn live_leases(name: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(lease_dir(name)) else {
        return 0;
    };
    let mut live = 0;
    for e in entries.flatten() {
        let pid = e.file_name().to_string_lossy().parse::<u32>().ok();
        match pid {
            Some(pid) if crate::sys::process_alive(pid) => live += 1,
            _ => {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    live
}

/// Unregisters `name` if rove registered it and nobody holds a live lease on it.
fn unregister_if_unused(name: &str) -> Result<bool, String> {
    if live_leases(name) > 0 {
        return Ok(false);
    }
    let mut done = false;
    for (id, _) in registered()?.into_iter().filter(|(_, n)| n == name) {
        bpftool(&["struct_ops", "unregister", "id", &id.to_string()])?;
        done = true;
    }
    Ok(done)
}

/// The algorithms a run holds; released (and unregistered when unused) on drop.
#[derive(Debug, Default)]
pub struct Leases {
    names: Vec<String>,
}

impl Leases {
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// Makes every algorithm of `names` selectable: those the kernel has natively are left alone,
/// the others are leased and registered from their objects. Errors name the algorithm.
pub fn acquire(names: &[String], native: &[String]) -> Result<Leases, String> {
    let mut leases = Leases::default();
    let wanted: Vec<&String> = {
        let mut v: Vec<&String> = names.iter().filter(|n| !native.contains(n)).collect();
        v.sort();
        v.dedup();
        v
    };
    if wanted.is_empty() {
        return Ok(leases);
    }
    let _lock = Lock::take()?;
    let pid = std::process::id().to_string();
    let present: Vec<String> = registered()?.into_iter().map(|(_, n)| n).collect();
    for name in wanted {
        let obj = object(name);
        if !obj.is_file() {
            return Err(format!(
                "no eBPF object for {name:?} at {} (built by 'make setup' from crates/emu/bpf/{name}.bpf.c)",
                obj.display()
            ));
        }
        let dir = lease_dir(name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        std::fs::write(dir.join(&pid), b"").map_err(|e| format!("{}: {e}", dir.display()))?;
        leases.names.push(name.clone());
        if !present.contains(name) {
            bpftool(&["struct_ops", "register", &obj.to_string_lossy()])
                .map_err(|e| format!("cannot load {name:?}: {e}"))?;
        }
    }
    Ok(leases)
}

impl Drop for Leases {
    fn drop(&mut self) {
        if self.names.is_empty() {
            return;
        }
        let Ok(_lock) = Lock::take() else { return };
        let pid = std::process::id().to_string();
        for name in &self.names {
            let _ = std::fs::remove_file(lease_dir(name).join(&pid));
            if let Err(e) = unregister_if_unused(name) {
                eprintln!("rove-kernel: warning: {e}");
            }
        }
    }
}

/// `rove-kernel cleanup`: unregisters every rove algorithm no live run holds; returns them.
/// Without bpftool nothing can have been registered by rove: nothing to do.
pub fn sweep_stale() -> Result<Vec<String>, String> {
    if Command::new("bpftool").arg("version").output().is_err() {
        return Ok(Vec::new());
    }
    let _lock = Lock::take()?;
    let mut removed = Vec::new();
    let mut names: Vec<String> = registered()?.into_iter().map(|(_, n)| n).collect();
    names.dedup();
    for name in names {
        if unregister_if_unused(&name)? {
            removed.push(name);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_state_reads_bpftools_dump_in_both_shapes() {
        let one = r#"{"bpf_map_info":{"id":32,"name":"rove_westwood"},
            "bpf_struct_ops_tcp_congestion_ops":{"common":{"refcnt":{"refs":{"counter":1}},
            "state":"BPF_STRUCT_OPS_STATE_TOBEFREE"},"data":{}}}"#;
        let v = json(one).unwrap();
        assert_eq!(
            map_state(&v).as_deref(),
            Some("BPF_STRUCT_OPS_STATE_TOBEFREE")
        );
        let arr = json(&format!("[{one}]")).unwrap();
        assert_eq!(
            map_state(&arr).as_deref(),
            Some("BPF_STRUCT_OPS_STATE_TOBEFREE")
        );
        // bpftool 7.1: `{info},{value}` without brackets.
        let split = r#"{"bpf_map_info":{"id":36}},{"bpf_struct_ops_tcp_congestion_ops":
            {"common":{"state":"BPF_STRUCT_OPS_STATE_INUSE"}}}"#;
        let v = json(split).unwrap();
        assert_eq!(map_state(&v).as_deref(), Some("BPF_STRUCT_OPS_STATE_INUSE"));
        assert_eq!(map_state(&json("{}").unwrap()), None);
    }
}
