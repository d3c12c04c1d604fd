//! Per-flow parameters of an eBPF congestion control (`cc_params` on the kernel backend).
//!
//! Only "bbr2plus" takes them: its object holds a hash map `rove_b2p_params` whose value is the
//! port's `struct bbr2_params` (crates/emu/bpf/bbr2_common.h) and whose key is (the sender's
//! network namespace inode, the flow's destination IPv4 address). The run resolves each flow's
//! `cc_params` with the simulator's own parser (`rove_tcp::cc::bbr2plus_kernel_params`: the
//! same keys, defaults and errors), writes the entry after its namespaces exist and before the
//! flow's client starts, and deletes it when the run ends (this value's drop). A socket's
//! `init` looks its entry up; the namespace inode is unique per run and the address per flow,
//! so concurrent runs with different parameters do not meet. Flows of "bbr2plus" without
//! `cc_params` get no entry: the port's defaults are the thesis's, as the simulator's.
//!
//! [GAP] The map is found by name: the newest `rove_b2p_params` (highest id). Only one
//! registration of "bbr2plus" is live at a time (bpf_cc.rs), and an older one lingering until
//! its sockets close was created before it.

use std::net::Ipv4Addr;
use std::os::unix::fs::MetadataExt;
use std::process::Command;

/// The algorithms that take `cc_params` on the kernel backend.
pub const WITH_PARAMS: &[&str] = &["bbr2plus"];
/// The parameter map of "bbr2plus" (BPF object names are at most 15 characters).
const BBR2PLUS_MAP: &str = "rove_b2p_params";

/// `cc_params` of a flow with algorithm `cc`, resolved to the map value's bytes; None when the
/// flow has none. Err(key, message) as the simulator's parser reports it.
pub fn resolve(cc: &str, params: &toml::Table) -> Result<Option<Vec<u8>>, (String, String)> {
    if params.is_empty() {
        return Ok(None);
    }
    match cc {
        "bbr2plus" => rove_tcp::cc::bbr2plus_kernel_params(params)
            .map(|v| Some(v.iter().flat_map(|x| x.to_ne_bytes()).collect()))
            .map_err(|e| (e.key, e.message)),
        _ => Err((
            params.keys().next().cloned().unwrap_or_default(),
            format!(
                "the kernel's {cc} takes no per-flow parameters (only {} does)",
                WITH_PARAMS.join(", ")
            ),
        )),
    }
}

/// The map key's bytes: the namespace inode (native order) and the address as the socket
/// stores it (network order).
fn key_bytes(netns_ino: u32, daddr: Ipv4Addr) -> Vec<u8> {
    let mut k = netns_ino.to_ne_bytes().to_vec();
    k.extend_from_slice(&daddr.octets());
    k
}

fn hex_args(bytes: &[u8]) -> Vec<String> {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn bpftool(args: &[String]) -> Result<String, String> {
    let out = Command::new("bpftool")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run bpftool: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "bpftool {}: {}",
            args.join(" "),
            err.lines().last().unwrap_or("no message").trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The id of the newest map named `name`.
fn map_id(name: &str) -> Result<u64, String> {
    let shown: serde_json::Value = serde_json::from_str(&bpftool(&[
        "-j".into(),
        "map".into(),
        "show".into(),
        "name".into(),
        name.into(),
    ])?)
    .map_err(|e| format!("bpftool's JSON output: {e}"))?;
    let ids: Vec<u64> = match &shown {
        serde_json::Value::Array(a) => a.iter().filter_map(|m| m["id"].as_u64()).collect(),
        m => m["id"].as_u64().into_iter().collect(),
    };
    ids.into_iter()
        .max()
        .ok_or_else(|| format!("no BPF map {name}: is bbr2plus registered?"))
}

/// The inode of a named network namespace (`ip netns` bind-mounts it at /run/netns/NAME).
pub fn netns_inode(name: &str) -> Result<u32, String> {
    let path = format!("/run/netns/{name}");
    let m = std::fs::metadata(&path).map_err(|e| format!("{path}: {e}"))?;
    u32::try_from(m.ino()).map_err(|_| format!("{path}: inode {} beyond 32 bits", m.ino()))
}

/// The entries a run wrote; deleted on drop.
#[derive(Debug, Default)]
pub struct ParamEntries {
    written: Vec<(u64, Vec<u8>)>,
}

impl ParamEntries {
    /// Writes `value` (from [`resolve`]) for the flow of algorithm `cc` to `daddr` from the
    /// namespace with inode `netns_ino`.
    pub fn write(
        &mut self,
        cc: &str,
        netns_ino: u32,
        daddr: Ipv4Addr,
        value: &[u8],
    ) -> Result<(), String> {
        if cc != "bbr2plus" {
            return Err(format!("{cc} takes no per-flow parameters"));
        }
        let id = map_id(BBR2PLUS_MAP)?;
        let key = key_bytes(netns_ino, daddr);
        let mut args: Vec<String> = ["map", "update", "id", &id.to_string(), "key", "hex"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(hex_args(&key));
        args.extend(["value".to_string(), "hex".to_string()]);
        args.extend(hex_args(value));
        bpftool(&args)?;
        self.written.push((id, key));
        Ok(())
    }
}

impl Drop for ParamEntries {
    fn drop(&mut self) {
        for (id, key) in &self.written {
            let mut args: Vec<String> = ["map", "delete", "id", &id.to_string(), "key", "hex"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            args.extend(hex_args(key));
            // The map may be gone already (unregistered and freed): nothing to delete then.
            let _ = bpftool(&args);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_inode_then_the_address_in_network_order() {
        let k = key_bytes(0x1234_5678, Ipv4Addr::new(10, 72, 0, 1));
        assert_eq!(&k[4..], &[10, 72, 0, 1]);
        assert_eq!(u32::from_ne_bytes(k[..4].try_into().unwrap()), 0x1234_5678);
        assert_eq!(hex_args(&[0x0a, 0xff]), ["0a", "ff"]);
    }

    #[test]
    fn only_bbr2plus_takes_parameters_and_bad_ones_name_their_key() {
        let t: toml::Table = toml::from_str("beta = 0.5").unwrap();
        let v = resolve("bbr2plus", &t).unwrap().unwrap();
        assert_eq!(v.len(), 33 * 4);
        assert_eq!(u32::from_ne_bytes(v[4..8].try_into().unwrap()), 128); // beta 0.5
        assert_eq!(resolve("bbr2plus", &toml::Table::new()).unwrap(), None);
        let (key, msg) = resolve("cubic", &t).unwrap_err();
        assert_eq!(key, "beta");
        assert!(msg.contains("only bbr2plus"), "{msg}");
        let t: toml::Table = toml::from_str("theta = 0.5").unwrap();
        let (key, msg) = resolve("bbr2plus", &t).unwrap_err();
        assert_eq!(key, "theta");
        assert!(msg.contains("from 1 to 4"), "{msg}");
    }
}
