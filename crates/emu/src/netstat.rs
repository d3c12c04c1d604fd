//! The kernel's per-namespace MIB counters (`/proc/net/netstat`: `TcpExt`, `IpExt`, `MPTcpExt`;
//! `/proc/net/snmp`: `Tcp`, `Ip`, ...), read inside a run's namespace. A namespace counts only
//! its own sockets and each run makes its own namespaces, so the counters at the end of a run
//! are the run's: e.g. `TcpExt.TCPHPAcks` (ACKs tcp_ack took on the fast path,
//! LINUX_MIB_TCPHPACKS) against `TcpExt.TCPPureAcks` (pure ACKs on the slow path) in the
//! sender namespace, `TcpExt.TCPSackRecovery` (recoveries begun). `rove-kernel run` writes
//! them to `raw/netstat.json` (`{"sender": {...}, "receiver": {...}}`, each `{"TcpExt":
//! {"TCPHPAcks": n, ...}, ...}`), and `python/rove/kernel.py` puts the nonzero ones into the
//! summary's `netstat`.

use std::collections::BTreeMap;
use std::io;

/// `{"TcpExt": {"TCPHPAcks": 1947, ...}, "Tcp": {...}, ...}`.
pub type Counters = BTreeMap<String, BTreeMap<String, u64>>;

/// Parses the `/proc/net/netstat` and `/proc/net/snmp` format: pairs of lines `Group: Name1
/// Name2 ...` and `Group: v1 v2 ...`. Values that are not unsigned integers (snmp's
/// `Tcp: ... MaxConn -1`) are left out.
pub fn parse(text: &str, into: &mut Counters) {
    let mut lines = text.lines();
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        let (Some((group, names)), Some((group2, values))) =
            (names.split_once(':'), values.split_once(':'))
        else {
            continue;
        };
        if group != group2 {
            continue;
        }
        let entry = into.entry(group.trim().to_string()).or_default();
        for (name, value) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = value.parse::<u64>() {
                entry.insert(name.to_string(), v);
            }
        }
    }
}

/// The counters of namespace `ns` now (read by a short-lived thread inside it, so the caller's
/// namespace never changes).
pub fn read(ns: &str) -> io::Result<Counters> {
    let ns = ns.to_string();
    std::thread::spawn(move || -> io::Result<Counters> {
        let _in = crate::sys::NetnsGuard::enter(&ns)?;
        let mut out = Counters::new();
        for file in ["netstat", "snmp"] {
            let path = format!("/proc/thread-self/net/{file}");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| io::Error::new(e.kind(), format!("{path} in {ns}: {e}")))?;
            parse(&text, &mut out);
        }
        Ok(out)
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("netstat thread panicked")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_value_lines_pair_up() {
        let text = "TcpExt: SyncookiesSent TCPHPAcks TCPPureAcks\nTcpExt: 0 1947 1419\n\
                    IpExt: InNoRoutes\nIpExt: 3\n";
        let mut c = Counters::new();
        parse(text, &mut c);
        assert_eq!(c["TcpExt"]["TCPHPAcks"], 1947);
        assert_eq!(c["TcpExt"]["TCPPureAcks"], 1419);
        assert_eq!(c["TcpExt"]["SyncookiesSent"], 0);
        assert_eq!(c["IpExt"]["InNoRoutes"], 3);
    }

    #[test]
    fn negative_values_are_left_out() {
        let mut c = Counters::new();
        parse(
            "Tcp: RtoAlgorithm MaxConn ActiveOpens\nTcp: 1 -1 2\n",
            &mut c,
        );
        assert_eq!(c["Tcp"].get("MaxConn"), None);
        assert_eq!(c["Tcp"]["ActiveOpens"], 2);
    }
}
