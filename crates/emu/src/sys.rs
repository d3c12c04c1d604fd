//! Thin, checked wrappers over the few Linux calls the kernel backend needs: the monotonic
//! clock, entering a named network namespace, signal masks, and per-child process set-up.
//! Everything returns `io::Result`; nothing here panics on a failing call.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `CLOCK_MONOTONIC` in nanoseconds. It is one clock for every network namespace, so the
/// orchestrator, the emulator and a test's packet generator can compare their stamps.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Where `ip netns add NAME` keeps the namespace's handle.
pub fn netns_path(name: &str) -> String {
    format!("/run/netns/{name}")
}

/// Moves the calling thread into the named network namespace until the guard is dropped.
/// Sockets and TUN devices opened meanwhile belong to that namespace for their whole life.
pub struct NetnsGuard {
    original: OwnedFd,
}

impl NetnsGuard {
    pub fn enter(name: &str) -> io::Result<NetnsGuard> {
        let original = File::open("/proc/thread-self/ns/net")?;
        let target = File::open(netns_path(name))
            .map_err(|e| io::Error::new(e.kind(), format!("network namespace {name}: {e}")))?;
        // SAFETY: both are open namespace file descriptors.
        check(unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) })?;
        Ok(NetnsGuard {
            original: original.into(),
        })
    }
}

impl Drop for NetnsGuard {
    fn drop(&mut self) {
        // SAFETY: `original` is the namespace this thread came from.
        unsafe { libc::setns(self.original.as_raw_fd(), libc::CLONE_NEWNET) };
    }
}

/// The signals that end a run cleanly: Ctrl-C, `kill`, a closed terminal.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn stop_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, initialised by sigemptyset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in STOP_SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks the stop signals in the calling thread (and threads it starts later), so that they
/// stay pending until [`wait_stop_signal`] or a signalfd collects them: the process is never
/// killed half-way through building or tearing down a topology.
pub fn block_stop_signals() -> io::Result<()> {
    let set = stop_set();
    // SAFETY: valid set pointer; the old mask is not needed.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// Waits up to `timeout_ns` for a stop signal; returns it, or `None` when the time ran out.
pub fn wait_stop_signal(timeout_ns: u64) -> Option<libc::c_int> {
    let set = stop_set();
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid pointers; the siginfo is not needed.
    let r = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &ts) };
    if r > 0 {
        Some(r)
    } else {
        None
    }
}

/// A stop signal already pending, if any (does not wait).
pub fn pending_stop_signal() -> Option<libc::c_int> {
    wait_stop_signal(0)
}

/// A signalfd that becomes readable when a (blocked) stop signal arrives.
pub fn stop_signalfd() -> io::Result<OwnedFd> {
    let set = stop_set();
    // SAFETY: valid set; -1 asks for a new descriptor.
    let fd = check(unsafe { libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) })?;
    // SAFETY: `fd` was just returned by signalfd and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Runs in a child between fork and exec: restore the default signal mask (the parent blocks
/// the stop signals), make the child the leader of its own process group (so the whole tree it
/// starts can be signalled at once with `killpg`) and have it receive SIGTERM should the parent
/// die without cleaning up.
///
/// # Safety
/// Only async-signal-safe calls, as `pre_exec` requires.
pub unsafe fn child_setup() -> io::Result<()> {
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    check(libc::setpgid(0, 0))?;
    check(libc::prctl(
        libc::PR_SET_PDEATHSIG,
        libc::SIGTERM as libc::c_ulong,
        0,
        0,
        0,
    ))?;
    Ok(())
}

/// Sends `sig` to the process group led by `pgid` (ignoring a group that is already gone).
pub fn kill_group(pgid: u32, sig: libc::c_int) {
    // SAFETY: plain syscall; a negative pid addresses the group.
    unsafe { libc::kill(-(pgid as libc::pid_t), sig) };
}

/// Whether a process with this id exists.
pub fn process_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Asks the kernel to wake timers within 1 ns of their deadline instead of the default 50 µs
/// slack: the emulator's delivery times depend on it.
pub fn set_min_timer_slack() {
    // SAFETY: plain prctl.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Asks every CPU to leave idle within `max_us` microseconds of an interrupt, for as long as
/// the returned file stays open (Linux PM QoS, Documentation/power/pm_qos_interface.rst: the
/// request is a 32-bit value written to `/dev/cpu_dma_latency`; closing the file, also by the
/// process's death, withdraws it). At 0 an idle CPU polls instead of halting. On the guests
/// rove runs on (cpuidle `haltpoll`), a halted vCPU took hundreds of µs to wake: the hosts'
/// stacks, steered to the other CPU (isolate.rs), answered late, and a 20 Mbit/s CUBIC run's
/// emulator lateness p99 fell from 814-2055 µs to 68-201 µs with the request, its handshake RTT
/// from 40.77-40.89 ms to 40.22-40.39 ms (docs/kernel-backend.md).
pub fn hold_cpu_latency(max_us: u32) -> io::Result<std::fs::File> {
    use std::io::Write;
    let path = "/dev/cpu_dma_latency";
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?;
    f.write_all(&(max_us.min(i32::MAX as u32) as i32).to_ne_bytes())
        .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?;
    Ok(f)
}

/// CPU time (user + system) this process has used, in seconds.
pub fn cpu_seconds() -> f64 {
    // SAFETY: valid out-pointer.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Writes `value` to a `/proc/sys` file inside the named network namespace (the `net.*`
/// sysctls are per namespace and resolved by the writing thread's namespace). Runs on a
/// short-lived thread so that the caller's own namespace never changes.
pub fn netns_sysctl(ns: &str, key: &str, value: &str) -> io::Result<()> {
    let (ns, key, value) = (ns.to_string(), key.to_string(), value.to_string());
    std::thread::spawn(move || -> io::Result<()> {
        let _in = NetnsGuard::enter(&ns)?;
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        std::fs::write(&path, value.as_bytes())
            .map_err(|e| io::Error::new(e.kind(), format!("{path} in {ns}: {e}")))
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("sysctl thread panicked")))
}

/// Puts the calling process under `SCHED_FIFO` with `priority` (1..=99), so that on a busy
/// machine the emulator is not preempted by ordinary work between a packet's due time and its
/// exit (measured: p99 lateness of several ms without it on a loaded 2-core machine). The
/// kernel's real-time throttling (`sched_rt_runtime_us`) keeps a share of the CPU for others.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: valid param pointer; pid 0 is this process.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) }).map(|_| ())
}
