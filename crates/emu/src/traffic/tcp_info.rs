//! `getsockopt(TCP_INFO)` and the sample it becomes.
//!
//! libc's `tcp_info` for glibc targets stops at `tcpi_total_retrans` (glibc's own copy of the
//! struct), so it lacks the pacing and delivery rates, `tcpi_min_rtt`, `tcpi_bytes_acked` and
//! `tcpi_bytes_sent`. [`TcpInfo`] is therefore our own `repr(C)` copy of `struct tcp_info` from
//! the kernel's `include/uapi/linux/tcp.h`, up to `tcpi_snd_wnd` (Linux 5.4). Older kernels
//! return a shorter prefix: [`read`] reports the length the kernel filled, and [`Sample`] leaves
//! a field `None` (JSON `null`) when the kernel did not reach it.

use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::RawFd;

use serde_json::{json, Value};

/// `struct tcp_info`, include/uapi/linux/tcp.h (field for field up to `tcpi_snd_wnd`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct TcpInfo {
    pub tcpi_state: u8,
    pub tcpi_ca_state: u8,
    pub tcpi_retransmits: u8,
    pub tcpi_probes: u8,
    pub tcpi_backoff: u8,
    pub tcpi_options: u8,
    /// `tcpi_snd_wscale : 4, tcpi_rcv_wscale : 4`
    pub tcpi_wscale: u8,
    /// `tcpi_delivery_rate_app_limited : 1, tcpi_fastopen_client_fail : 2`
    pub tcpi_app_limited_bits: u8,

    pub tcpi_rto: u32,
    pub tcpi_ato: u32,
    pub tcpi_snd_mss: u32,
    pub tcpi_rcv_mss: u32,

    pub tcpi_unacked: u32,
    pub tcpi_sacked: u32,
    pub tcpi_lost: u32,
    pub tcpi_retrans: u32,
    pub tcpi_fackets: u32,

    pub tcpi_last_data_sent: u32,
    pub tcpi_last_ack_sent: u32,
    pub tcpi_last_data_recv: u32,
    pub tcpi_last_ack_recv: u32,

    pub tcpi_pmtu: u32,
    pub tcpi_rcv_ssthresh: u32,
    /// Smoothed RTT, µs.
    pub tcpi_rtt: u32,
    pub tcpi_rttvar: u32,
    pub tcpi_snd_ssthresh: u32,
    pub tcpi_snd_cwnd: u32,
    pub tcpi_advmss: u32,
    pub tcpi_reordering: u32,

    pub tcpi_rcv_rtt: u32,
    pub tcpi_rcv_space: u32,

    pub tcpi_total_retrans: u32,

    /// Bytes per second; `u64::MAX` when unlimited.
    pub tcpi_pacing_rate: u64,
    pub tcpi_max_pacing_rate: u64,
    pub tcpi_bytes_acked: u64,
    pub tcpi_bytes_received: u64,
    pub tcpi_segs_out: u32,
    pub tcpi_segs_in: u32,

    pub tcpi_notsent_bytes: u32,
    /// Windowed minimum RTT, µs; `u32::MAX` before the first RTT sample.
    pub tcpi_min_rtt: u32,
    pub tcpi_data_segs_in: u32,
    pub tcpi_data_segs_out: u32,

    /// Bytes per second (tcp_rate.c's latest delivery-rate sample).
    pub tcpi_delivery_rate: u64,

    pub tcpi_busy_time: u64,
    pub tcpi_rwnd_limited: u64,
    pub tcpi_sndbuf_limited: u64,

    pub tcpi_delivered: u32,
    pub tcpi_delivered_ce: u32,

    pub tcpi_bytes_sent: u64,
    pub tcpi_bytes_retrans: u64,
    pub tcpi_dsack_dups: u32,
    pub tcpi_reord_seen: u32,

    pub tcpi_rcv_ooopack: u32,

    pub tcpi_snd_wnd: u32,
}

/// TCP_INFINITE_SSTHRESH, include/net/tcp.h: ssthresh before the first loss.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// `getsockopt(fd, SOL_TCP, TCP_INFO)`: the struct and the number of bytes the kernel filled.
pub fn read(fd: RawFd) -> io::Result<(TcpInfo, usize)> {
    let mut info = TcpInfo::default();
    let mut len = size_of::<TcpInfo>() as libc::socklen_t;
    // SAFETY: `info` is a plain-old-data repr(C) struct of `len` bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_TCP,
            libc::TCP_INFO,
            &mut info as *mut TcpInfo as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((info, len as usize))
}

/// Name of `tcpi_ca_state` (enum tcp_ca_state, include/uapi/linux/tcp.h), spelt as the
/// simulator's `ca_state` column spells it.
pub fn ca_state_name(state: u8) -> &'static str {
    match state {
        0 => "open",
        1 => "disorder",
        2 => "cwr",
        3 => "recovery",
        4 => "loss",
        _ => "unknown",
    }
}

/// `Some(value)` when the kernel's `len` bytes cover the field ending at `end`.
fn covered<T>(len: usize, end: usize, value: T) -> Option<T> {
    (len >= end).then_some(value)
}

macro_rules! field_end {
    ($field:ident) => {
        offset_of!(TcpInfo, $field) + {
            let probe = TcpInfo::default();
            std::mem::size_of_val(&probe.$field)
        }
    };
}

/// One TCP_INFO reading converted to the sample's units (see the module `traffic`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub cwnd_pkts: u32,
    /// Raw kernel value: [`INFINITE_SSTHRESH`] before the first reduction (as the simulator).
    pub ssthresh_pkts: u32,
    /// Linux's `tcp_packets_in_flight`: unacked − sacked − lost + retransmitted.
    pub inflight_pkts: u32,
    pub pacing_rate_bps: Option<u64>,
    pub delivery_rate_bps: Option<u64>,
    pub srtt_ms: f64,
    pub min_rtt_ms: Option<f64>,
    pub bytes_acked: Option<u64>,
    pub bytes_sent: Option<u64>,
    pub retrans_segs: u32,
    pub ca_state: &'static str,
    /// Cumulative time (µs) the connection had data to send (`tcpi_busy_time`), and of that,
    /// the time limited by the peer's receive window (`tcpi_rwnd_limited`) and by the sender's
    /// own send buffer (`tcpi_sndbuf_limited`); chrono_stat in net/ipv4/tcp_output.c
    /// (tcp_chrono_start/stop). They tell whether the congestion window was what limited a flow.
    pub busy_us: Option<u64>,
    pub rwnd_limited_us: Option<u64>,
    pub sndbuf_limited_us: Option<u64>,
    /// The peer's advertised receive window in bytes (`tcpi_snd_wnd`, Linux 5.4).
    pub snd_wnd_bytes: Option<u32>,
    /// Bytes written by the application that TCP has not sent yet (`tcpi_notsent_bytes`).
    pub notsent_bytes: Option<u32>,
}

impl Sample {
    pub fn from_info(i: &TcpInfo, len: usize) -> Sample {
        let inflight = (i.tcpi_unacked as i64 - i.tcpi_sacked as i64 - i.tcpi_lost as i64
            + i.tcpi_retrans as i64)
            .max(0) as u32;
        let pacing = covered(len, field_end!(tcpi_pacing_rate), i.tcpi_pacing_rate)
            .filter(|&r| r != u64::MAX)
            .map(|r| r.saturating_mul(8));
        let delivery = covered(len, field_end!(tcpi_delivery_rate), i.tcpi_delivery_rate)
            .map(|r| r.saturating_mul(8));
        let min_rtt = covered(len, field_end!(tcpi_min_rtt), i.tcpi_min_rtt)
            .filter(|&r| r != u32::MAX && r != 0)
            .map(|us| us as f64 / 1000.0);
        Sample {
            cwnd_pkts: i.tcpi_snd_cwnd,
            ssthresh_pkts: i.tcpi_snd_ssthresh,
            inflight_pkts: inflight,
            pacing_rate_bps: pacing,
            delivery_rate_bps: delivery,
            srtt_ms: i.tcpi_rtt as f64 / 1000.0,
            min_rtt_ms: min_rtt,
            bytes_acked: covered(len, field_end!(tcpi_bytes_acked), i.tcpi_bytes_acked),
            bytes_sent: covered(len, field_end!(tcpi_bytes_sent), i.tcpi_bytes_sent),
            retrans_segs: i.tcpi_total_retrans,
            ca_state: ca_state_name(i.tcpi_ca_state),
            busy_us: covered(len, field_end!(tcpi_busy_time), i.tcpi_busy_time),
            rwnd_limited_us: covered(len, field_end!(tcpi_rwnd_limited), i.tcpi_rwnd_limited),
            sndbuf_limited_us: covered(len, field_end!(tcpi_sndbuf_limited), i.tcpi_sndbuf_limited),
            snd_wnd_bytes: covered(len, field_end!(tcpi_snd_wnd), i.tcpi_snd_wnd),
            notsent_bytes: covered(len, field_end!(tcpi_notsent_bytes), i.tcpi_notsent_bytes),
        }
    }

    /// The sample's keys of the JSONL contract (without `t_s` and `cc`, which the caller adds).
    pub fn to_json(&self) -> serde_json::Map<String, Value> {
        let v = json!({
            "cwnd_pkts": self.cwnd_pkts,
            "ssthresh_pkts": self.ssthresh_pkts,
            "inflight_pkts": self.inflight_pkts,
            "pacing_rate_bps": self.pacing_rate_bps,
            "delivery_rate_bps": self.delivery_rate_bps,
            "srtt_ms": self.srtt_ms,
            "min_rtt_ms": self.min_rtt_ms,
            "bytes_acked": self.bytes_acked,
            "bytes_sent": self.bytes_sent,
            "retrans_segs": self.retrans_segs,
            "ca_state": self.ca_state,
            "busy_us": self.busy_us,
            "rwnd_limited_us": self.rwnd_limited_us,
            "sndbuf_limited_us": self.sndbuf_limited_us,
            "snd_wnd_bytes": self.snd_wnd_bytes,
            "notsent_bytes": self.notsent_bytes,
        });
        match v {
            Value::Object(m) => m,
            _ => unreachable!("json! of an object literal"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_uapi_header() {
        // Offsets from include/uapi/linux/tcp.h on x86_64/aarch64 (all fields naturally aligned).
        assert_eq!(offset_of!(TcpInfo, tcpi_rto), 8);
        assert_eq!(offset_of!(TcpInfo, tcpi_snd_cwnd), 80);
        assert_eq!(offset_of!(TcpInfo, tcpi_total_retrans), 100);
        assert_eq!(offset_of!(TcpInfo, tcpi_pacing_rate), 104);
        assert_eq!(offset_of!(TcpInfo, tcpi_bytes_acked), 120);
        assert_eq!(offset_of!(TcpInfo, tcpi_min_rtt), 148);
        assert_eq!(offset_of!(TcpInfo, tcpi_delivery_rate), 160);
        assert_eq!(offset_of!(TcpInfo, tcpi_bytes_sent), 200);
        assert_eq!(size_of::<TcpInfo>(), 232);
    }

    #[test]
    fn units_and_sentinels() {
        let i = TcpInfo {
            tcpi_snd_cwnd: 10,
            tcpi_snd_ssthresh: INFINITE_SSTHRESH,
            tcpi_unacked: 10,
            tcpi_sacked: 2,
            tcpi_lost: 3,
            tcpi_retrans: 1,
            tcpi_rtt: 20_500,
            tcpi_min_rtt: u32::MAX,
            tcpi_pacing_rate: u64::MAX,
            tcpi_delivery_rate: 1_250_000,
            tcpi_ca_state: 3,
            ..TcpInfo::default()
        };
        let s = Sample::from_info(&i, size_of::<TcpInfo>());
        assert_eq!(s.inflight_pkts, 6);
        assert_eq!(s.srtt_ms, 20.5);
        assert_eq!(s.min_rtt_ms, None);
        assert_eq!(s.pacing_rate_bps, None);
        assert_eq!(s.delivery_rate_bps, Some(10_000_000));
        assert_eq!(s.ca_state, "recovery");
        assert_eq!(s.ssthresh_pkts, INFINITE_SSTHRESH);
        assert_eq!(s.busy_us, Some(0));
    }

    #[test]
    fn a_short_kernel_struct_leaves_newer_fields_null() {
        let i = TcpInfo {
            tcpi_bytes_sent: 99,
            tcpi_bytes_acked: 7,
            ..TcpInfo::default()
        };
        // A kernel that stops before tcpi_delivery_rate (Linux 4.6 ended at tcpi_data_segs_out).
        let s = Sample::from_info(&i, offset_of!(TcpInfo, tcpi_delivery_rate));
        assert_eq!(s.bytes_acked, Some(7));
        assert_eq!(s.delivery_rate_bps, None);
        assert_eq!(s.bytes_sent, None);
        assert_eq!(s.rwnd_limited_us, None);
        assert_eq!(s.snd_wnd_bytes, None);
    }
}
