//! Switching a live socket's congestion control (`--switches`), with the window handoff of the
//! scenario's `[[actions]]` (`handoff = "keep" | "set" | "delay_scaled"`).
//!
//! `keep` is `setsockopt(TCP_CONGESTION, cc)` alone: Linux keeps cwnd and ssthresh and calls
//! the new algorithm's `init` (`tcp_reinit_congestion_control`). No socket option sets cwnd, so
//! `set` and `delay_scaled` go through rove's eBPF `handoff` algorithm
//! (crates/emu/bpf/handoff.bpf.c): the client writes the target window into its sk_storage map
//! for this socket, switches to `handoff` (whose `init` applies it) and at once to `cc`.
//!
//! `delay_scaled` is seed-002's Eq. 6.3 over the last N `TCP_INFO` samples of this client
//! (`tcpi_snd_cwnd`, `tcpi_rtt`) with Dmin = `tcpi_min_rtt`: cwnd = ⌊Σcwnd·Dmin/Σsrtt⌋, at least
//! 2, as the simulator's sender computes it over its last N per-ACK samples. The samples differ:
//! the kernel side has the smoothed RTT every `--sample-ms`, the simulator each ACK's RTT.

use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::time::Duration;

/// The eBPF algorithm that applies a window (its `tcp_congestion_ops.name`).
pub const HANDOFF_CC: &str = "handoff";
/// Its sk_storage map (the C name, ≤ 15 characters: BPF_OBJ_NAME_LEN).
const HANDOFF_MAP: &str = "rove_handoff_w";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handoff {
    Keep,
    Set { cwnd: u32, ssthresh: Option<u32> },
    DelayScaled { samples: u32 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Switch {
    /// Since the client's start (its `t_s` clock).
    pub at: Duration,
    pub cc: String,
    pub handoff: Handoff,
}

impl Switch {
    /// `AT_S:CC:HANDOFF`, HANDOFF = `keep` | `set=CWND[/SSTHRESH]` | `scaled=N`.
    pub fn to_arg(&self) -> String {
        let h = match self.handoff {
            Handoff::Keep => "keep".to_string(),
            Handoff::Set {
                cwnd,
                ssthresh: None,
            } => format!("set={cwnd}"),
            Handoff::Set {
                cwnd,
                ssthresh: Some(s),
            } => format!("set={cwnd}/{s}"),
            Handoff::DelayScaled { samples } => format!("scaled={samples}"),
        };
        format!("{}:{}:{h}", self.at.as_secs_f64(), self.cc)
    }

    pub fn needs_handoff_cc(&self) -> bool {
        self.handoff != Handoff::Keep
    }
}

/// `--switches` = comma-separated [`Switch::to_arg`] values, in time order.
pub fn parse_switches(text: &str) -> Result<Vec<Switch>, String> {
    let mut out: Vec<Switch> = Vec::new();
    for item in text.split(',').filter(|s| !s.is_empty()) {
        let bad =
            || format!("--switches: {item:?} is not AT_S:CC:keep|set=CWND[/SSTHRESH]|scaled=N");
        let mut parts = item.splitn(3, ':');
        let (Some(at), Some(cc), Some(h)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad());
        };
        let at = at
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(bad)?;
        if cc.is_empty() || cc.len() >= 16 {
            return Err(bad());
        }
        let num = |s: &str| s.parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(bad);
        let handoff = if h == "keep" {
            Handoff::Keep
        } else if let Some(v) = h.strip_prefix("set=") {
            match v.split_once('/') {
                Some((c, s)) => Handoff::Set {
                    cwnd: num(c)?,
                    ssthresh: Some(num(s)?),
                },
                None => Handoff::Set {
                    cwnd: num(v)?,
                    ssthresh: None,
                },
            }
        } else if let Some(n) = h.strip_prefix("scaled=") {
            Handoff::DelayScaled { samples: num(n)? }
        } else {
            return Err(bad());
        };
        let at = Duration::from_secs_f64(at);
        if out.last().is_some_and(|p| p.at > at) {
            return Err(format!(
                "--switches: {item:?} is earlier than the switch before it"
            ));
        }
        out.push(Switch {
            at,
            cc: cc.to_string(),
            handoff,
        });
    }
    Ok(out)
}

/// The client's recent (cwnd, srtt µs) samples for Eq. 6.3.
#[derive(Debug, Default)]
pub struct History {
    samples: VecDeque<(u32, u64)>,
}

/// As many samples as the simulator's sender keeps (crates/tcp/src/sender.rs HANDOFF_HISTORY).
const HISTORY: usize = 32;

impl History {
    pub fn push(&mut self, cwnd: u32, srtt_us: u64) {
        if srtt_us == 0 {
            return; // no RTT sample yet
        }
        if self.samples.len() == HISTORY {
            self.samples.pop_front();
        }
        self.samples.push_back((cwnd, srtt_us));
    }

    /// Eq. 6.3 over the last `n` samples; None without samples or without a min RTT.
    pub fn delay_scaled_cwnd(&self, n: usize, min_rtt_us: u64) -> Option<u32> {
        let n = n.min(self.samples.len());
        if n == 0 || min_rtt_us == 0 {
            return None;
        }
        let (cwnds, rtts) = self
            .samples
            .iter()
            .rev()
            .take(n)
            .fold((0u64, 0u64), |(c, r), &(cw, rt)| (c + cw as u64, r + rt));
        Some((cwnds * min_rtt_us / rtts.max(1)).clamp(2, u32::MAX as u64) as u32)
    }
}

/// What a switch did, for the final line.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub t_s: f64,
    pub cc: String,
    /// The window written through the handoff algorithm (None: kept).
    pub cwnd: Option<u32>,
}

/// Switches `fd` to `sw.cc` with its handoff; `min_rtt_us` is the kernel's min RTT.
pub fn apply(
    fd: RawFd,
    sw: &Switch,
    history: &History,
    min_rtt_us: u64,
) -> Result<Option<u32>, String> {
    let target = match sw.handoff {
        Handoff::Keep => None,
        Handoff::Set { cwnd, ssthresh } => Some((cwnd, ssthresh.unwrap_or(0))),
        Handoff::DelayScaled { samples } => history
            .delay_scaled_cwnd(samples as usize, min_rtt_us)
            .map(|c| (c, 0)),
    };
    if let Some((cwnd, ssthresh)) = target {
        super::bpf_map::update_sk_storage(HANDOFF_MAP, fd, &[cwnd, ssthresh]).map_err(|e| {
            format!("the handoff algorithm's map {HANDOFF_MAP}: {e} (is 'handoff' loaded?)")
        })?;
        super::socket::set_congestion_control(fd, HANDOFF_CC)
            .map_err(|e| format!("setsockopt(TCP_CONGESTION, {HANDOFF_CC:?}): {e}"))?;
    }
    super::socket::set_congestion_control(fd, &sw.cc)
        .map_err(|e| format!("setsockopt(TCP_CONGESTION, {:?}): {e}", sw.cc))?;
    Ok(target.map(|(c, _)| c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_round_trip_through_their_argument() {
        let text = "10:bbr:keep,12.5:cubic:set=40,20:reno:set=40/30,30:westwood:scaled=7";
        let sws = parse_switches(text).unwrap();
        assert_eq!(sws.len(), 4);
        assert_eq!(
            sws[1].handoff,
            Handoff::Set {
                cwnd: 40,
                ssthresh: None
            }
        );
        assert_eq!(sws[3].handoff, Handoff::DelayScaled { samples: 7 });
        let again: Vec<String> = sws.iter().map(Switch::to_arg).collect();
        assert_eq!(again.join(","), text);
    }

    #[test]
    fn bad_switches_are_one_line_errors() {
        for bad in [
            "10:bbr",
            "x:bbr:keep",
            "10:bbr:half",
            "10:bbr:set=0",
            "2:a:keep,1:b:keep",
        ] {
            assert!(parse_switches(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn eq_6_3_is_the_theses_example_over_the_last_samples() {
        let mut h = History::default();
        for _ in 0..10 {
            h.push(1000, 1_000);
        }
        for _ in 0..7 {
            h.push(100, 150_000);
        }
        // sCWND = 100, sD = 150 ms, Dmin = 60 ms -> 40 (seed-002 §2.7).
        assert_eq!(h.delay_scaled_cwnd(7, 60_000), Some(40));
        assert_eq!(History::default().delay_scaled_cwnd(7, 60_000), None);
        h.push(1, 10_000_000);
        assert_eq!(h.delay_scaled_cwnd(1, 60_000), Some(2), "at least 2");
    }
}
