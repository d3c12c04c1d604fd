//! MPTCP socket options: per-subflow TCP_INFO and addresses, and the connection-level counters.
//!
//! Definitions from the kernel's `include/uapi/linux/mptcp.h` (Linux ≥ 5.16 for
//! `MPTCP_TCPINFO`/`MPTCP_SUBFLOW_ADDRS`; `struct mptcp_info` grew its byte counters in 6.5).
//! Each subflow option fills a `struct mptcp_subflow_data` header followed by one element per
//! subflow; the kernel copies `min(size_user, its own size)` bytes per element, so a struct of
//! ours that is longer or shorter than the kernel's is handled.

use std::io;
use std::mem::{offset_of, size_of};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::RawFd;

use serde_json::{json, Value};

use super::tcp_info::{Sample, TcpInfo};

/// SOL_MPTCP, include/linux/socket.h.
pub const SOL_MPTCP: libc::c_int = 284;
/// include/uapi/linux/mptcp.h
pub const MPTCP_INFO: libc::c_int = 1;
pub const MPTCP_TCPINFO: libc::c_int = 2;
pub const MPTCP_SUBFLOW_ADDRS: libc::c_int = 3;

/// The most subflows of a connection on the kernel backend, and read per sample: upstream
/// MPTCP's limit of 8 (MPTCP_PM_ADDR_MAX, net/mptcp/pm_kernel.c; `ip mptcp limits` refuses
/// more), which rove's eBPF coupling shares (COUPLED_SUBFLOWS, bpf/mptcp_coupled.h). The
/// simulator allows rove_scenario::MAX_SUBFLOWS.
pub const MAX_SUBFLOWS: usize = 8;

/// `struct mptcp_subflow_data`, include/uapi/linux/mptcp.h (aligned(8), 16 bytes).
#[repr(C, align(8))]
#[derive(Debug, Default, Clone, Copy)]
struct SubflowData {
    size_subflow_data: u32,
    /// Set by the kernel: how many subflows the connection has (may exceed those copied).
    num_subflows: u32,
    /// Set by the kernel: its size of one element.
    size_kernel: u32,
    /// Our size of one element; the kernel writes back the size it copied.
    size_user: u32,
}

/// `struct mptcp_subflow_addrs`: two unions of `struct __kernel_sockaddr_storage` (128 bytes).
#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct SubflowAddrs {
    local: [u8; 128],
    remote: [u8; 128],
}

/// `struct mptcp_info`, include/uapi/linux/mptcp.h of Linux 6.10 (older kernels fill a prefix).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct MptcpInfo {
    pub mptcpi_subflows: u8,
    pub mptcpi_add_addr_signal: u8,
    pub mptcpi_add_addr_accepted: u8,
    pub mptcpi_subflows_max: u8,
    pub mptcpi_add_addr_signal_max: u8,
    pub mptcpi_add_addr_accepted_max: u8,
    pub mptcpi_flags: u32,
    pub mptcpi_token: u32,
    pub mptcpi_write_seq: u64,
    pub mptcpi_snd_una: u64,
    pub mptcpi_rcv_nxt: u64,
    pub mptcpi_local_addr_used: u8,
    pub mptcpi_local_addr_max: u8,
    pub mptcpi_csum_enabled: u8,
    pub mptcpi_retransmits: u32,
    pub mptcpi_bytes_retrans: u64,
    pub mptcpi_bytes_sent: u64,
    pub mptcpi_bytes_received: u64,
    /// Data-level bytes acknowledged by the peer (DATA_ACK), Linux ≥ 6.5.
    pub mptcpi_bytes_acked: u64,
    pub mptcpi_subflows_total: u8,
    pub reserved: [u8; 3],
    pub mptcpi_last_data_sent: u32,
    pub mptcpi_last_data_recv: u32,
    pub mptcpi_last_ack_recv: u32,
}

/// One subflow's state at a sample.
#[derive(Debug, Clone)]
pub struct Subflow {
    pub local: Option<SocketAddr>,
    pub remote: Option<SocketAddr>,
    pub sample: Sample,
}

impl Subflow {
    pub fn to_json(&self) -> Value {
        let mut m = self.sample.to_json();
        m.insert("local".into(), json!(self.local.map(|a| a.to_string())));
        m.insert("remote".into(), json!(self.remote.map(|a| a.to_string())));
        Value::Object(m)
    }
}

/// A getsockopt(SOL_MPTCP, `opt`) that returns a header and up to MAX_SUBFLOWS elements of T.
fn subflow_array<T: Copy>(fd: RawFd, opt: libc::c_int, zero: T) -> io::Result<(Vec<T>, usize)> {
    #[repr(C)]
    struct Buf<T> {
        head: SubflowData,
        items: [T; MAX_SUBFLOWS],
    }
    let mut buf = Buf {
        head: SubflowData::default(),
        items: [zero; MAX_SUBFLOWS],
    };
    buf.head.size_subflow_data = size_of::<SubflowData>() as u32;
    buf.head.size_user = size_of::<T>() as u32;
    let mut len = size_of::<Buf<T>>() as libc::socklen_t;
    // SAFETY: `buf` is a repr(C) plain-old-data buffer of `len` bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            SOL_MPTCP,
            opt,
            &mut buf as *mut Buf<T> as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let copied_each = buf.head.size_user as usize;
    if copied_each == 0 {
        return Ok((Vec::new(), 0));
    }
    // The header's size_subflow_data is ours (16), so the elements start where `items` does.
    let count = (buf.head.num_subflows as usize).min(MAX_SUBFLOWS);
    Ok((buf.items[..count].to_vec(), copied_each))
}

fn sockaddr_from_storage(raw: &[u8; 128]) -> Option<SocketAddr> {
    let family = u16::from_ne_bytes([raw[0], raw[1]]) as libc::c_int;
    let port = u16::from_be_bytes([raw[2], raw[3]]);
    match family {
        libc::AF_INET => {
            let ip = Ipv4Addr::new(raw[4], raw[5], raw[6], raw[7]);
            Some(SocketAddr::new(ip.into(), port))
        }
        libc::AF_INET6 => {
            let mut b = [0u8; 16];
            b.copy_from_slice(&raw[8..24]);
            Some(SocketAddr::new(Ipv6Addr::from(b).into(), port))
        }
        _ => None,
    }
}

/// Every subflow's TCP_INFO with its addresses (the two reads are matched by position; a subflow
/// opening or closing between them can shift addresses by one for one sample).
pub fn subflows(fd: RawFd) -> io::Result<Vec<Subflow>> {
    let (infos, info_len) = subflow_array(fd, MPTCP_TCPINFO, TcpInfo::default())?;
    let addrs = subflow_array(
        fd,
        MPTCP_SUBFLOW_ADDRS,
        SubflowAddrs {
            local: [0; 128],
            remote: [0; 128],
        },
    )
    .map(|(a, _)| a)
    .unwrap_or_default();
    Ok(infos
        .iter()
        .enumerate()
        .map(|(k, info)| Subflow {
            local: addrs.get(k).and_then(|a| sockaddr_from_storage(&a.local)),
            remote: addrs.get(k).and_then(|a| sockaddr_from_storage(&a.remote)),
            sample: Sample::from_info(info, info_len),
        })
        .collect())
}

/// `getsockopt(SOL_MPTCP, MPTCP_INFO)`: the connection-level info and the length filled.
/// Fails with EOPNOTSUPP when the connection fell back to plain TCP.
pub fn info(fd: RawFd) -> io::Result<(MptcpInfo, usize)> {
    let mut info = MptcpInfo::default();
    let mut len = size_of::<MptcpInfo>() as libc::socklen_t;
    // SAFETY: plain-old-data repr(C) struct of `len` bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            SOL_MPTCP,
            MPTCP_INFO,
            &mut info as *mut MptcpInfo as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((info, len as usize))
}

/// Data-level byte counters of the connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataCounters {
    /// Bytes sent at the data level, retransmissions and reinjections included.
    pub bytes_sent: u64,
    /// Bytes acknowledged by DATA_ACK (counts the DATA_FIN once acknowledged).
    pub bytes_acked: u64,
    /// Bytes sent again at the data level (`mptcpi_bytes_retrans`: MPTCP's own retransmissions
    /// after its RTO and reinjections off a stalled or closed subflow, net/mptcp/protocol.c
    /// __mptcp_retrans). These are the copies by which the subflows' bytes can exceed the data
    /// level's.
    pub bytes_retrans: u64,
}

/// The data-level counters, when the kernel reports them (Linux ≥ 6.5; not after a fallback to
/// plain TCP).
pub fn data_counters(fd: RawFd) -> Option<DataCounters> {
    let (i, len) = info(fd).ok()?;
    let end = offset_of!(MptcpInfo, mptcpi_bytes_acked) + size_of::<u64>();
    (len >= end).then_some(DataCounters {
        bytes_sent: i.mptcpi_bytes_sent,
        bytes_acked: i.mptcpi_bytes_acked,
        bytes_retrans: i.mptcpi_bytes_retrans,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_uapi_header() {
        assert_eq!(size_of::<SubflowData>(), 16);
        assert_eq!(size_of::<SubflowAddrs>(), 256);
        assert_eq!(offset_of!(MptcpInfo, mptcpi_write_seq), 16);
        assert_eq!(offset_of!(MptcpInfo, mptcpi_retransmits), 44);
        assert_eq!(offset_of!(MptcpInfo, mptcpi_bytes_retrans), 48);
        assert_eq!(offset_of!(MptcpInfo, mptcpi_bytes_acked), 72);
        assert_eq!(size_of::<MptcpInfo>(), 96);
    }

    #[test]
    fn sockaddr_in_is_decoded() {
        let mut raw = [0u8; 128];
        raw[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        raw[2..4].copy_from_slice(&5201u16.to_be_bytes());
        raw[4..8].copy_from_slice(&[10, 0, 2, 1]);
        assert_eq!(
            sockaddr_from_storage(&raw),
            Some("10.0.2.1:5201".parse().unwrap())
        );
        assert_eq!(sockaddr_from_storage(&[0u8; 128]), None);
    }
}
