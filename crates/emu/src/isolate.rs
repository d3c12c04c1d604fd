//! Keeping the hosts' network stacks off the emulator's core.
//!
//! A write into a TUN device runs the receiving namespace's stack on the writer's CPU:
//! `tun_get_user` hands the packet to `netif_receive_skb` (drivers/net/tun.c), which runs IP,
//! UDP/TCP, the socket wake-up and, for an ACK, the sender's next transmissions. Profiled at
//! 1 Gbit/s (UDP, 1500-byte packets) that was 38 % of the emulator's CPU. Linux's Receive
//! Packet Steering (Documentation/networking/scaling.rst) moves that work to another CPU:
//! with a non-empty `rps_cpus` mask on the device's receive queue, `netif_receive_skb`
//! enqueues the packet on the backlog of a CPU from the mask (`get_rps_cpu`,
//! `enqueue_to_backlog`, net/core/dev.c) and returns. The receive time stamp
//! (`SO_TIMESTAMPNS`) is taken before the steering (`net_timestamp_check` at the top of
//! `netif_receive_skb_internal`), so a packet's exit time is still when the emulator wrote it.
//!
//! So the emulator pins itself to one CPU (the highest it may run on) and sets the `rps_cpus`
//! of `rove0` in both namespaces to every other CPU it may run on: data packets are received,
//! and ACKs are processed (with the sender's resulting transmissions), on the other CPUs, as
//! they would be on separate hosts. With a single CPU there is nothing to steer to: no pinning,
//! no steering. [GAP] which CPU: the last allowed one (CPU 0 takes most device interrupts) that
//! no other running rove-emu has claimed (a lock file per CPU), so that emulators running at
//! once do not share a core; when every CPU is claimed, neither pinning nor steering.

use std::io;
use std::process::Command;

/// CPUs this process may run on (its affinity mask), ascending.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// The emulator's CPU (the highest of `cpus` that `free` accepts) and the steering mask for
/// the others, or `None` with a single CPU or none free.
pub fn plan(cpus: &[usize], mut free: impl FnMut(usize) -> bool) -> Option<(usize, String)> {
    if cpus.len() < 2 {
        return None;
    }
    let emu = cpus.iter().rev().copied().find(|&c| free(c))?;
    let others: Vec<usize> = cpus.iter().copied().filter(|&c| c != emu).collect();
    Some((emu, rps_mask(&others)))
}

/// Claims `cpu` for this process's lifetime with an exclusive `flock` on
/// `/run/rove-emu-cpu<N>.lock` (released by the kernel when the process ends, however it
/// ends), so that emulators running at once on one machine pin to different CPUs; false when
/// another process holds it.
pub fn claim_cpu(cpu: usize) -> bool {
    use std::os::fd::IntoRawFd;
    let Ok(f) = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(format!("/run/rove-emu-cpu{cpu}.lock"))
    else {
        return false;
    };
    // SAFETY: a valid open descriptor.
    if unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    } < 0
    {
        return false;
    }
    let _kept_open_until_exit = f.into_raw_fd();
    true
}

/// The `rps_cpus` text for a set of CPUs: a hexadecimal bitmap, most significant word first,
/// 32-bit words separated by commas (the format of `bitmap_parse`, lib/bitmap-str.c).
pub fn rps_mask(cpus: &[usize]) -> String {
    let words = cpus.iter().max().map_or(1, |m| m / 32 + 1);
    let mut w = vec![0u32; words];
    for &c in cpus {
        w[c / 32] |= 1 << (c % 32);
    }
    w.iter()
        .rev()
        .map(|x| format!("{x:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Pins the calling process to `cpu`.
pub fn pin_to(cpu: usize) -> io::Result<()> {
    // SAFETY: as above; CPU_SET on a zeroed set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the receive-steering mask of device `dev` in namespace `netns`. The device's sysfs
/// directory is visible only to a sysfs mounted inside the namespace, which `ip netns exec`
/// does (in a private mount namespace).
pub fn steer(netns: &str, dev: &str, mask: &str) -> Result<(), String> {
    let path = format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus");
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            netns,
            "sh",
            "-c",
            "echo \"$0\" > \"$1\"",
            mask,
            &path,
        ])
        .output()
        .map_err(|e| format!("ip netns exec: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{path} in {netns}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_hex_bitmaps() {
        assert_eq!(rps_mask(&[0]), "00000001");
        assert_eq!(rps_mask(&[0, 1, 2]), "00000007");
        assert_eq!(rps_mask(&[1, 33]), "00000002,00000002");
    }

    #[test]
    fn the_last_cpu_is_the_emulators() {
        assert_eq!(plan(&[0], |_| true), None);
        assert_eq!(plan(&[0, 1], |_| true), Some((1, "00000001".to_string())));
        assert_eq!(
            plan(&[0, 2, 5], |_| true),
            Some((5, "00000005".to_string()))
        );
        // CPU 1 claimed by another emulator: this one takes CPU 0 and steers to CPU 1.
        assert_eq!(plan(&[0, 1], |c| c != 1), Some((0, "00000002".to_string())));
        assert_eq!(plan(&[0, 1], |_| false), None);
    }
}
