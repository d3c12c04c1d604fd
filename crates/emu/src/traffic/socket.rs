//! Socket set-up through libc: TCP or MPTCP sockets, the congestion control, the device binding.

use std::ffi::CString;
use std::io;
use std::mem::size_of;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, RawFd};

use super::TrafficError;

/// IPPROTO_MPTCP, include/uapi/linux/in.h.
pub const IPPROTO_MPTCP: libc::c_int = 262;

/// The kernel's list of congestion controls (global, not per network namespace).
pub const AVAILABLE_CC_PATH: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// The congestion controls the kernel has, as it lists them.
pub fn available_congestion_controls() -> io::Result<Vec<String>> {
    let text = std::fs::read_to_string(AVAILABLE_CC_PATH)?;
    Ok(text.split_whitespace().map(str::to_owned).collect())
}

/// Exit-2 error unless `cc` is one of the kernel's congestion controls.
pub fn check_congestion_control(cc: &str) -> Result<(), TrafficError> {
    let available = available_congestion_controls()
        .map_err(|e| TrafficError::usage(format!("cannot read {AVAILABLE_CC_PATH}: {e}")))?;
    if available.iter().any(|a| a == cc) {
        Ok(())
    } else {
        Err(unknown_cc(cc, &available))
    }
}

fn unknown_cc(cc: &str, available: &[String]) -> TrafficError {
    TrafficError::usage(format!(
        "--cc: the kernel has no congestion control {cc:?} (available: {}; from {AVAILABLE_CC_PATH})",
        available.join(", ")
    ))
}

struct Fd(RawFd);

impl Drop for Fd {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: we own the descriptor until `release`.
            unsafe { libc::close(self.0) };
        }
    }
}

impl Fd {
    fn release(mut self) -> RawFd {
        std::mem::replace(&mut self.0, -1)
    }
}

fn new_socket(addr: &SocketAddr, mptcp: bool) -> io::Result<Fd> {
    let family = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    let proto = if mptcp {
        IPPROTO_MPTCP
    } else {
        libc::IPPROTO_TCP
    };
    // SAFETY: plain socket(2).
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        if mptcp
            && matches!(
                e.raw_os_error(),
                Some(libc::EPROTONOSUPPORT) | Some(libc::ENOPROTOOPT)
            )
        {
            return Err(io::Error::new(
                e.kind(),
                format!("MPTCP sockets are not available ({e}); enable them with sysctl net.mptcp.enabled=1"),
            ));
        }
        return Err(e);
    }
    Ok(Fd(fd))
}

fn setsockopt_bytes(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    value: &[u8],
) -> io::Result<()> {
    // SAFETY: `value` is valid for `value.len()` bytes.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            value.as_ptr() as *const libc::c_void,
            value.len() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    setsockopt_bytes(fd, level, opt, &value.to_ne_bytes())
}

/// `setsockopt(TCP_CONGESTION)` on a connected socket: a live switch (Linux keeps cwnd and
/// ssthresh and calls the new algorithm's init).
pub fn set_congestion_control(fd: RawFd, name: &str) -> io::Result<()> {
    setsockopt_bytes(fd, libc::SOL_TCP, libc::TCP_CONGESTION, name.as_bytes())
}

/// `getsockopt(TCP_CONGESTION)`: the algorithm the socket actually uses.
pub fn congestion_control(fd: RawFd) -> io::Result<String> {
    let mut buf = [0u8; 32]; // TCP_CA_NAME_MAX, include/net/tcp.h
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is valid for `len` bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let bytes = &buf[..(len as usize).min(buf.len())];
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
}

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain old data; all-zero is a valid value.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in and suitably aligned.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in, sin) };
            size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in6, sin6) };
            size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// A listening TCP or MPTCP socket on `addr` (SO_REUSEADDR, backlog 128).
pub fn listen(addr: &SocketAddr, mptcp: bool) -> io::Result<TcpListener> {
    let fd = new_socket(addr, mptcp)?;
    setsockopt_int(fd.0, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    let (ss, len) = sockaddr(addr);
    // SAFETY: `ss` holds a valid sockaddr of `len` bytes.
    if unsafe { libc::bind(fd.0, &ss as *const _ as *const libc::sockaddr, len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: plain listen(2).
    if unsafe { libc::listen(fd.0, 128) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: we own the listening descriptor and hand it over.
    Ok(unsafe { TcpListener::from_raw_fd(fd.release()) })
}

/// What the client asks of its socket before connecting.
pub struct ConnectOptions<'a> {
    pub cc: &'a str,
    pub mptcp: bool,
    pub bind_dev: Option<&'a str>,
}

/// A connected socket with the congestion control set before connect (so the handshake's
/// initial window and the whole connection use it).
pub fn connect(addr: &SocketAddr, opts: &ConnectOptions) -> Result<TcpStream, TrafficError> {
    let fd =
        new_socket(addr, opts.mptcp).map_err(|e| TrafficError::runtime(format!("socket: {e}")))?;
    if let Err(e) = setsockopt_bytes(
        fd.0,
        libc::SOL_TCP,
        libc::TCP_CONGESTION,
        opts.cc.as_bytes(),
    ) {
        return Err(match e.raw_os_error() {
            Some(libc::ENOENT) => unknown_cc(opts.cc, &available_congestion_controls().unwrap_or_default()),
            Some(libc::EPERM) => TrafficError::usage(format!(
                "--cc {}: not permitted for this user (see /proc/sys/net/ipv4/tcp_allowed_congestion_control, or run as root)",
                opts.cc
            )),
            _ => TrafficError::runtime(format!("setsockopt(TCP_CONGESTION, {:?}): {e}", opts.cc)),
        });
    }
    if let Some(dev) = opts.bind_dev {
        let name = CString::new(dev)
            .map_err(|_| TrafficError::usage(format!("--bind-dev: bad interface name {dev:?}")))?;
        setsockopt_bytes(
            fd.0,
            libc::SOL_SOCKET,
            libc::SO_BINDTODEVICE,
            name.as_bytes_with_nul(),
        )
        .map_err(|e| TrafficError::runtime(format!("--bind-dev {dev}: SO_BINDTODEVICE: {e}")))?;
    }
    let (ss, len) = sockaddr(addr);
    // SAFETY: `ss` holds a valid sockaddr of `len` bytes.
    let rc = unsafe { libc::connect(fd.0, &ss as *const _ as *const libc::sockaddr, len) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(TrafficError::runtime(format!("connect to {addr}: {e}")));
    }
    // SAFETY: we own the connected descriptor and hand it over.
    Ok(unsafe { TcpStream::from_raw_fd(fd.release()) })
}
