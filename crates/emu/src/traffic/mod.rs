//! `rove-traffic`: real Linux TCP and MPTCP flows for the kernel backend, measured by sampling
//! `TCP_INFO`.
//!
//! The orchestrator (`rove-kernel run`) runs one server per receiver namespace and one client
//! per flow in the sender's namespace, with exactly these command lines:
//!
//! ```text
//! rove-traffic server --bind IP:PORT [--mptcp]
//! rove-traffic client --connect IP:PORT --cc NAME [--bytes N | --duration SECS] [--mptcp]
//!                     [--sample-ms 10] [--bind-dev IFACE] [--switches AT:CC:HANDOFF,...]
//!                     --out FILE.jsonl
//! ```
//!
//! **Server**: accepts any number of connections, one thread each; reads and discards until
//! EOF, then closes. Prints `rove-traffic: listening on IP:PORT` on stdout once it accepts
//! (port 0 binds an ephemeral port and prints the one chosen). Runs until killed.
//!
//! **Client**: sets `TCP_CONGESTION` before `connect` (an algorithm the kernel lacks: exit 2
//! and a one-line error listing `/proc/sys/net/ipv4/tcp_available_congestion_control`).
//! - `--bytes N`: a sized transfer: writes N bytes, `shutdown(SHUT_WR)`, waits for the server's
//!   EOF (which the server sends after reading everything); the flow completion time `fct_s`
//!   runs from the start of `connect` to that EOF.
//! - `--duration SECS`: bulk: writes for SECS seconds from the start of `connect`, then closes.
//! - neither: bulk until SIGTERM or SIGINT.
//!
//! SIGTERM or SIGINT at any time ends the transfer: the client writes its final line and exits
//! 0. Every `--sample-ms` (default 10) a separate thread reads `TCP_INFO` (on a schedule fixed
//! at the start, so sampling does not drift) and appends one JSON object to `--out`:
//!
//! ```text
//! {"t_s", "cwnd_pkts", "ssthresh_pkts", "inflight_pkts", "pacing_rate_bps", "delivery_rate_bps",
//!  "srtt_ms", "min_rtt_ms", "bytes_acked", "bytes_sent", "retrans_segs", "ca_state", "cc",
//!  "busy_us", "rwnd_limited_us", "sndbuf_limited_us", "snd_wnd_bytes", "notsent_bytes"}
//! ```
//!
//! `t_s` is seconds since the client started (just before `connect`); rates are bit/s (the
//! kernel's bytes/s × 8), `null` when the kernel does not know them (pacing unlimited, no RTT
//! sample yet, or a kernel too old for the field); `ssthresh_pkts` is the kernel's raw value,
//! 2147483647 before the first reduction (as the simulator writes it); `inflight_pkts` is
//! Linux's `tcp_packets_in_flight`; `ca_state` is `open|disorder|cwr|recovery|loss`; `cc` is
//! what `getsockopt(TCP_CONGESTION)` returns; `busy_us`, `rwnd_limited_us`, `sndbuf_limited_us` are
//! the kernel's cumulative chrono times (what limited sending: the congestion window, the peer's
//! receive window, the send buffer), `snd_wnd_bytes` the peer's advertised window. MPTCP samples also hold `"subflows"`: one object
//! per subflow with the same keys (without `t_s`, `cc`) plus `"local"` and `"remote"` addresses.
//! The connection's keys of an MPTCP sample are the first subflow's TCP_INFO (what the kernel
//! returns for `TCP_INFO` on an MPTCP socket), except `bytes_acked` and `bytes_sent` (the
//! data-level counts of `MPTCP_INFO`, Linux ≥ 6.5; else the subflows' sums) and `retrans_segs`
//! (the subflows' sum); they add `"data_retrans_bytes"` (`mptcpi_bytes_retrans`: bytes MPTCP sent
//! again at the data level, reinjections included; `null` before Linux 6.5). Those copies are
//! why the subflows' `bytes_acked` may add up to more than the connection's.
//!
//! `bytes_acked` counts data bytes only: the kernel's `tcpi_bytes_acked` also counts the SYN and
//! the FIN (one sequence number each), which are removed, so a completed `--bytes N` transfer
//! reports exactly N. A subflow's `bytes_acked` is bounded by its own `bytes_sent` the same way.
//!
//! The last line is `{"final": true, "fct_s", "bytes_acked", "bytes_sent", "retrans_segs",
//! "cc", "elapsed_s", "end", "samples"}` (+ `"data_retrans_bytes"` and `"subflows"` for MPTCP: every subflow seen during
//! the connection with its latest reading, also those closed before the end; + `"error"` when the
//! transfer failed, exit 1). `end` is `eof` (sized transfer complete), `duration`, `signal` or
//! `error`; `fct_s` is `null` unless `end` is `eof`. The output is buffered and flushed at the
//! end (and whenever the buffer fills).
//!
//! **MPTCP**: `--mptcp` opens `IPPROTO_MPTCP` sockets on both sides. The client connects to
//! the server's address on the first path; further subflows come from the kernel's in-kernel
//! path manager, which the orchestrator configures before starting the flows:
//! - client namespace: `ip mptcp limits set subflows K` (K = paths − 1) and, per extra path,
//!   `ip mptcp endpoint add CLIENT_ADDR_ON_PATH dev IFACE subflow`: the kernel then opens a
//!   subflow from that address to the server's (first-path) address, bound to IFACE. The
//!   client namespace therefore needs a route to the server's address through IFACE: the same
//!   prefix as the first path's route with a higher metric, e.g.
//!   `ip route add SERVER_SUBNET dev IFACE metric 200` (a more specific route, such as a /32,
//!   would pull the first subflow onto IFACE too);
//! - server namespace: `ip mptcp limits set subflows K` (it accepts K joins) and a route back
//!   to each client address through its path (the connected routes do this when each path
//!   has its own subnet).
//!
//! The test `mptcp_over_two_shaped_paths_uses_both` (tests/traffic.rs) runs exactly this on
//! two veth pairs shaped to 10 Mbit/s each: both subflows carry 4–10 Mbit/s, together > 12.
//!
//! The client itself does nothing per path: it reads per-subflow TCP_INFO with
//! `getsockopt(SOL_MPTCP, MPTCP_TCPINFO)` and the addresses with `MPTCP_SUBFLOW_ADDRS`.

pub mod args;
pub mod bpf_map;
pub mod client;
pub mod handoff;
pub mod mptcp;
pub mod server;
pub mod signals;
pub mod socket;
pub mod tcp_info;

use std::fmt;

/// An error that ends `rove-traffic` with a one-line message and an exit status.
#[derive(Debug)]
pub struct TrafficError {
    /// 2 for bad input (usage, unknown congestion control), 1 for a runtime failure.
    pub exit_code: i32,
    pub message: String,
}

impl TrafficError {
    pub fn usage(message: impl Into<String>) -> Self {
        TrafficError {
            exit_code: 2,
            message: message.into(),
        }
    }
    pub fn runtime(message: impl Into<String>) -> Self {
        TrafficError {
            exit_code: 1,
            message: message.into(),
        }
    }
}

impl fmt::Display for TrafficError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TrafficError {}

/// Runs `rove-traffic` with its arguments (without the program name); returns the exit status.
pub fn main_with_args(argv: &[String]) -> Result<i32, TrafficError> {
    match args::parse(argv)? {
        args::Command::Server(s) => server::run(&s).map(|()| 0),
        args::Command::Client(c) => client::run(&c),
        args::Command::Help => {
            print!("{}", args::USAGE);
            Ok(0)
        }
    }
}
