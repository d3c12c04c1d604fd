//! A TUN device seen from the emulator: a non-blocking file descriptor that yields the IPv4
//! packets the namespace's stack routes into the device, and injects packets into that stack.
//!
//! The devices are created persistent by the topology (`ip tuntap add`), so they live and die
//! with their namespace; the emulator attaches to them by name. Attaching must happen from
//! inside the namespace: the kernel looks the name up in the namespace of the opener of
//! `/dev/net/tun`. The flags are `IFF_TUN | IFF_NO_PI` (bare IP packets, no 4-byte header) and
//! no `IFF_VNET_HDR`: without a virtio-net header the device offers no TSO/GSO to the stack, so
//! every packet is segmented before it reaches us and is at most the device's MTU.

use crate::sys::NetnsGuard;
use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

/// `TUNSETIFF`, `_IOW('T', 202, int)` in linux/if_tun.h.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags (the rest is padding).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

pub struct Tun {
    fd: OwnedFd,
    pub name: String,
    pub netns: String,
}

impl Tun {
    /// Attaches to the TUN device `name` inside network namespace `netns`.
    pub fn attach(netns: &str, name: &str) -> io::Result<Tun> {
        if name.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("interface name {name:?} is longer than 15 bytes"),
            ));
        }
        let file = {
            let _inside = NetnsGuard::enter(netns)?;
            OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open("/dev/net/tun")
                .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e}")))?
        };
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: `req` is a properly laid out ifreq that outlives the call.
        let r = unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF, &mut req as *mut IfReq) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("TUNSETIFF {name} in {netns}: {e}"),
            ));
        }
        Ok(Tun {
            fd: file.into(),
            name: name.to_string(),
            netns: netns.to_string(),
        })
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Reads one packet; `Ok(None)` when none is waiting.
    #[inline]
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
            _ => Err(e),
        }
    }

    /// Injects one packet into the namespace's stack.
    #[inline]
    pub fn send(&self, pkt: &[u8]) -> io::Result<()> {
        // SAFETY: `pkt` is valid for reads of its length.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), pkt.as_ptr().cast(), pkt.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}
