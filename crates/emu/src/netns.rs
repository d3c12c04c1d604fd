//! Named network namespaces with guaranteed removal, through iproute2's `ip`.
//!
//! Every namespace a run makes is named `rove-<pid>-<n>-<role>`: the pid of the process that
//! made it lets `rove-kernel cleanup` tell a stale namespace (its maker is gone) from one in use
//! by a concurrent run.

use std::io::Write;
use std::process::{Command, Stdio};

/// Prefix of every namespace rove makes.
pub const PREFIX: &str = "rove-";

/// Runs `ip ARGS...`; on failure the error names the command and carries ip's message.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run 'ip' (iproute2): {e}"))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        return Err(format!("'ip {}' failed: {}", args.join(" "), msg.trim()));
    }
    Ok(())
}

/// Runs many `ip` commands inside namespace `ns` with one process (`ip -n NS -batch -`).
pub fn ip_batch(ns: &str, commands: &[String]) -> Result<(), String> {
    let mut child = Command::new("ip")
        .args(["-n", ns, "-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run 'ip' (iproute2): {e}"))?;
    let text = commands.join("\n") + "\n";
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|e| format!("ip -batch: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("ip -batch: {e}"))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        return Err(format!("'ip -n {ns} -batch' failed: {}", msg.trim()));
    }
    Ok(())
}

/// A network namespace that is deleted when this value is dropped. Deleting a namespace
/// removes every interface, address and route in it (the TUN devices included).
#[derive(Debug)]
pub struct Netns {
    pub name: String,
}

impl Netns {
    pub fn create(name: &str) -> Result<Netns, String> {
        ip(&["netns", "add", name])?;
        let ns = Netns {
            name: name.to_string(),
        };
        ip(&["-n", name, "link", "set", "lo", "up"])?;
        Ok(ns)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if let Err(e) = ip(&["netns", "delete", &self.name]) {
            eprintln!("rove: warning: {e}");
        }
    }
}

/// Names of the namespaces that exist now (from `/run/netns`).
pub fn list() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/run/netns")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The pid encoded in a rove namespace name, `rove-<pid>-...`.
pub fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Deletes rove namespaces whose maker is no longer running; returns their names.
pub fn sweep_stale() -> Result<Vec<String>, String> {
    let mut removed = Vec::new();
    for name in list() {
        let Some(pid) = owner_pid(&name) else {
            continue;
        };
        if crate::sys::process_alive(pid) {
            continue;
        }
        ip(&["netns", "delete", &name])?;
        removed.push(name);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_from_names() {
        assert_eq!(owner_pid("rove-1234-0-snd"), Some(1234));
        assert_eq!(owner_pid("rove-x-0-snd"), None);
        assert_eq!(owner_pid("other-1234"), None);
    }
}
