//! The two bpf(2) operations the client needs, without libbpf: find a map by its name, and
//! write a socket's element of an sk_storage map (key = the socket's descriptor).
//!
//! `union bpf_attr` layouts from include/uapi/linux/bpf.h; only the fields used are set, the
//! rest zero (the kernel requires unused fields to be zero).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_MAP_GET_NEXT_ID: libc::c_long = 12;
const BPF_MAP_GET_FD_BY_ID: libc::c_long = 14;
const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
/// `struct bpf_map_info`: name[BPF_OBJ_NAME_LEN] at offset 24 (after type, id, key_size,
/// value_size, max_entries, map_flags).
const INFO_NAME_OFFSET: usize = 24;
const OBJ_NAME_LEN: usize = 16;

#[repr(C, align(8))]
struct Attr([u8; 128]);

impl Attr {
    fn new() -> Attr {
        Attr([0; 128])
    }
    fn u32_at(mut self, off: usize, v: u32) -> Attr {
        self.0[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64_at(mut self, off: usize, v: u64) -> Attr {
        self.0[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn read_u32(&self, off: usize) -> u32 {
        u32::from_ne_bytes(self.0[off..off + 4].try_into().expect("4 bytes"))
    }
}

fn bpf(cmd: libc::c_long, attr: &mut Attr) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a valid, zero-initialised bpf_attr of 128 bytes for the command.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut Attr as *mut libc::c_void,
            128usize,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A descriptor of the first map named `name` (the kernel's truncated BPF_OBJ_NAME_LEN name).
pub fn map_by_name(name: &str) -> io::Result<OwnedFd> {
    let mut id = 0u32;
    loop {
        let mut attr = Attr::new().u32_at(0, id);
        if let Err(e) = bpf(BPF_MAP_GET_NEXT_ID, &mut attr) {
            return Err(if e.raw_os_error() == Some(libc::ENOENT) {
                io::Error::new(io::ErrorKind::NotFound, format!("no BPF map named {name}"))
            } else {
                e
            });
        }
        id = attr.read_u32(4);
        let mut attr = Attr::new().u32_at(0, id);
        let fd = match bpf(BPF_MAP_GET_FD_BY_ID, &mut attr) {
            Ok(fd) => fd as RawFd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue, // freed meanwhile
            Err(e) => return Err(e),
        };
        // SAFETY: the kernel just gave us this descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut info = [0u8; 96];
        let mut attr = Attr::new()
            .u32_at(0, fd.as_raw_fd() as u32)
            .u32_at(4, info.len() as u32)
            .u64_at(8, info.as_mut_ptr() as u64);
        bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr)?;
        let raw = &info[INFO_NAME_OFFSET..INFO_NAME_OFFSET + OBJ_NAME_LEN];
        let end = raw.iter().position(|&b| b == 0).unwrap_or(OBJ_NAME_LEN);
        if &raw[..end] == name.as_bytes() {
            return Ok(fd);
        }
    }
}

/// Writes `value` as socket `sock`'s element of the sk_storage map `map` (BPF_ANY).
pub fn update_sk_storage(map: &str, sock: RawFd, value: &[u32]) -> io::Result<()> {
    let map = map_by_name(map)?;
    let key: i32 = sock;
    let mut attr = Attr::new()
        .u32_at(0, map.as_raw_fd() as u32)
        .u64_at(8, &key as *const i32 as u64)
        .u64_at(16, value.as_ptr() as u64);
    bpf(BPF_MAP_UPDATE_ELEM, &mut attr).map(|_| ())
}
