//! Child processes of a run (emulator, traffic servers and clients), each the leader of its own
//! process group, stopped as a group when the run ends or when this guard is dropped (an error,
//! a signal): SIGTERM first, SIGKILL after a grace period.

use crate::sys::{child_setup, kill_group};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub struct Procs {
    list: Vec<(String, Child)>,
}

/// How long a stopped child may take to exit before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(3);

impl Default for Procs {
    fn default() -> Self {
        Self::new()
    }
}

impl Procs {
    pub fn new() -> Procs {
        Procs { list: Vec::new() }
    }

    /// Spawns `cmd` in its own process group (see `sys::child_setup`); returns its index.
    pub fn spawn(&mut self, label: &str, mut cmd: Command) -> Result<usize, String> {
        // SAFETY: child_setup only makes async-signal-safe calls.
        unsafe { cmd.pre_exec(|| child_setup()) };
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {label} ({:?}): {e}", cmd.get_program()))?;
        self.list.push((label.to_string(), child));
        Ok(self.list.len() - 1)
    }

    pub fn child_mut(&mut self, i: usize) -> &mut Child {
        &mut self.list[i].1
    }

    pub fn label(&self, i: usize) -> &str {
        &self.list[i].0
    }

    /// The exit status of child `i` if it has ended (`None` while it runs).
    pub fn exited(&mut self, i: usize) -> Option<std::process::ExitStatus> {
        self.list[i].1.try_wait().ok().flatten()
    }

    /// Waits up to `timeout` for child `i` to end by itself.
    pub fn wait_for(&mut self, i: usize, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.exited(i) {
                return Some(s);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops the children with indices in `which` (SIGTERM to each group, then SIGKILL to what
    /// is left after `STOP_GRACE`) and reaps them. Returns their exit statuses.
    pub fn stop(&mut self, which: &[usize]) -> Vec<Option<std::process::ExitStatus>> {
        for &i in which {
            if self.exited(i).is_none() {
                kill_group(self.list[i].1.id(), libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + STOP_GRACE;
        let mut statuses = vec![None; which.len()];
        loop {
            let mut running = false;
            for (k, &i) in which.iter().enumerate() {
                if statuses[k].is_none() {
                    statuses[k] = self.exited(i);
                    running |= statuses[k].is_none();
                }
            }
            if !running || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        for (k, &i) in which.iter().enumerate() {
            if statuses[k].is_none() {
                kill_group(self.list[i].1.id(), libc::SIGKILL);
                statuses[k] = self.list[i].1.wait().ok();
            }
            // Anything the child left in its group (e.g. a grandchild) goes too.
            kill_group(self.list[i].1.id(), libc::SIGKILL);
        }
        statuses
    }

    pub fn stop_all(&mut self) {
        let all: Vec<usize> = (0..self.list.len()).collect();
        self.stop(&all);
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        self.stop_all();
    }
}
