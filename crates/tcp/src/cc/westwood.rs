//! TCP Westwood+, as Linux 6.x `net/ipv4/tcp_westwood.c` (Mascolo, Casetti, Gerla et al., "TCP
//! Westwood: bandwidth estimation for TCP", MobiCom 2001; Grieco & Mascolo, "Performance
//! evaluation of New Reno, Vegas, Westwood+ TCP", CCR 2004).
//!
//! # The algorithm
//!
//! Westwood+ probes like Reno (slow start, one packet per window) but, after a loss, sets
//! ssthresh from an end-to-end bandwidth estimate instead of halving: the window that would
//! just fill the pipe at the measured rate with an empty queue,
//!
//! ```text
//!   ssthresh = max(bw_est · rtt_min / mss, 2)
//! ```
//!
//! so a random (non-congestive) loss on a lossy link costs little, while a loss from a full
//! queue still drains it (the queue is not part of bw_est·rtt_min).
//!
//! **The estimate.** Each ACK adds the bytes it acknowledges to `bk`; once per RTT (when more
//! than `max(rtt, TCP_WESTWOOD_RTT_MIN)` jiffies have passed since the window started,
//! `westwood_update_window`) the sample `bk / delta` (bytes per jiffy) goes through two
//! cascaded 7/8 low-pass filters (`westwood_do_filter`, `(7a + b) >> 3`):
//!
//! ```text
//!   bw_ns_est ← (7·bw_ns_est + bk/delta) >> 3      ("not too smoothed")
//!   bw_est    ← (7·bw_est    + bw_ns_est) >> 3
//! ```
//!
//! the first sample filling both. On the slow path (duplicate ACKs, SACK, window updates,
//! `CA_ACK_SLOWPATH`) the acked count is `westwood_acked_count`: a duplicate ACK counts one MSS
//! (remembered in `accounted`), and a later cumulative ACK that covers those segments counts
//! only what was not already counted. `rtt` is the last RTT sample in jiffies
//! (`usecs_to_jiffies`, rounded up), `rtt_min` its running minimum, reset to the next sample
//! after an RTO.
//!
//! **Where the estimate acts.** `ssthresh` itself is Reno's (`tcp_reno_ssthresh`, used during
//! fast recovery's PRR); at the end of recovery or CWR (`CA_EVENT_COMPLETE_CWR`) both cwnd and
//! ssthresh become `bw_est·rtt_min/mss`, and on an RTO (`CA_EVENT_LOSS`) ssthresh does.
//!
//! # Constants
//!
//! - `TCP_WESTWOOD_RTT_MIN = HZ/20` jiffies (50 ms nominal; 12 jiffies = 48 ms at HZ = 250),
//!   the shortest window a bandwidth sample is taken over.
//! - `TCP_WESTWOOD_INIT_RTT = 20·HZ` jiffies (20 s), rtt and rtt_min before any sample.
//!
//! tcp_westwood.c has no module parameters. `cc_params`: `hz` (CONFIG_HZ, default the kernel
//! profile's 250; 100, 300 or 1000 model other kernels), since every Westwood+ time is in
//! jiffies.
//!
//! # Hooks
//!
//! | tcp_congestion_ops | here |
//! |---|---|
//! | `init` | `tcp_westwood_init` |
//! | `ssthresh` | `tcp_reno_ssthresh` |
//! | `cong_avoid` | `tcp_reno_cong_avoid` |
//! | `undo_cwnd` | `tcp_reno_undo_cwnd` (the trait's default) |
//! | `cwnd_event` | `tcp_westwood_event`: COMPLETE_CWR, LOSS |
//! | `in_ack_event` | `tcp_westwood_ack`: slow path (`westwood_acked_count`) or fast path |
//! | `pkts_acked` | `tcp_westwood_pkts_acked`: `rtt = usecs_to_jiffies(rtt_us)` if `rtt_us > 0` |
//! | `get_info` | telemetry `westwood_bw_est_bps` (bw_est in bit/s), `westwood_rtt_min_ms` |
//!
//! # Where this differs from tcp_westwood.c
//!
//! - **Hook order.** As Linux 6.18's `tcp_ack` (since commit 149dfb31615e, "tcp: reorganize
//!   tcp_in_ack_event() and tcp_count_delivered()"), rove calls `pkts_acked` (inside the
//!   retransmission queue's cleaning) before `in_ack_event`, so `tcp_westwood_ack` sees the
//!   advanced `snd_una` and this ACK's RTT sample in `w->rtt`. (Before that commit Linux called
//!   `in_ack_event` first, with the previous sample; rove used to emulate that order.)
//! - **Fast path.** Which ACKs reach `tcp_westwood_ack` without `CA_ACK_SLOWPATH` is decided
//!   by rove's model of Linux's header prediction (the sender's `ack_path`: no SACK option, the
//!   window field predicted, prediction on after the first window change; Linux 6.18's
//!   tcp_in_ack_event flags), fed by rove's receiver; it decides whether the bytes a recovery's
//!   duplicate ACKs counted are taken back from the ACK that covers them
//!   (`westwood_acked_count`) or counted again (`westwood_fast_bw`). On Linux that covering ACK
//!   takes the slow path because the receiver offers a smaller window while the hole's data is
//!   unread (receiver.rs, `tuned_window`); until issue 13 rove's receiver offered the whole
//!   window, the ACK took the fast path and the estimate ran 1.17× the goodput under 1 %
//!   loss. What the model leaves out: rove's receivers do not compress SACKs
//!   (`tcp_comp_sack_*`: the kernel's receiver sent 1,277 SACK-bearing ACKs where rove's sent
//!   2,377 in the same 20-s run, so Linux's duplicate ACKs count fewer MSS and its covering ACK
//!   takes back less), the window field is read at wscale 10 whatever the receiver's window,
//!   and PAWS never fails.
//! - Sequence numbers count segments (u64); `snd_una` in bytes is `snd_una·mss` truncated to
//!   u32, so the byte differences (and their u32 wrap) are the kernel's.
//! - `usecs_to_jiffies` rounds up as the kernel's does at HZ = 100, 250 and 1000; at HZ = 300
//!   the kernel's multiply-and-shift can differ from exact rounding up by a jiffy.
//! - The u32 products (`bw_est·rtt_min`) wrap as the kernel's would.

use super::{params, reject_unknown, tcp_reno_cong_avoid, tcp_reno_ssthresh};
use super::{CcConfig, CongestionControl, ParamError};
use crate::kernel::{jiffies_at, usecs_to_jiffies_at, HZ, HZ_CHOICES};
use crate::state::{AckSample, CaEvent, TcpState, CA_ACK_SLOWPATH};

/// tcp_westwood.c: TCP_WESTWOOD_RTT_MIN = HZ/20 jiffies (50 ms).
fn westwood_rtt_min_jiffies(hz: u32) -> u32 {
    hz / 20
}

/// tcp_westwood.c: TCP_WESTWOOD_INIT_RTT = 20·HZ jiffies (20 s).
fn westwood_init_rtt_jiffies(hz: u32) -> u32 {
    20 * hz
}

/// tcp_westwood.c: the bandwidth estimate never asks for less than 2 packets.
const WESTWOOD_MIN_WND: u32 = 2;

const PARAM_KEYS: &[&str] = &["hz"];

const WESTWOOD_TELEMETRY: &[&str] = &["westwood_bw_est_bps", "westwood_rtt_min_ms"];

/// westwood_do_filter: the low-pass filter `(7a + b) / 8` (u32, as the kernel's).
pub(crate) fn westwood_do_filter(a: u32, b: u32) -> u32 {
    (7u32.wrapping_mul(a).wrapping_add(b)) >> 3
}

pub struct Westwood {
    hz: u32,
    /// First-stage bandwidth estimate, bytes per jiffy.
    bw_ns_est: u32,
    /// Bandwidth estimate, bytes per jiffy.
    bw_est: u32,
    /// Start of the current sampling window, jiffies.
    rtt_win_sx: u32,
    /// Bytes acked in the current window.
    bk: u32,
    /// snd_una in bytes (u32) at the last ACK.
    snd_una: u32,
    cumul_ack: u32,
    /// Bytes counted for duplicate ACKs not yet covered by a cumulative ACK.
    accounted: u32,
    /// Last RTT sample, jiffies.
    rtt: u32,
    /// Minimum RTT, jiffies.
    rtt_min: u32,
    first_ack: bool,
    reset_rtt_min: bool,
}

impl Westwood {
    pub fn new(hz: u32) -> Self {
        let init_rtt = westwood_init_rtt_jiffies(hz);
        Westwood {
            hz,
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            snd_una: 0,
            cumul_ack: 0,
            accounted: 0,
            rtt: init_rtt,
            rtt_min: init_rtt,
            first_ack: true,
            reset_rtt_min: true,
        }
    }

    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        let t = config.params;
        reject_unknown(t, PARAM_KEYS)?;
        let hz = params::integer(
            t,
            "hz",
            HZ,
            100,
            1000,
            "a CONFIG_HZ value: 100, 250, 300 or 1000",
        )?;
        if !HZ_CHOICES.contains(&hz) {
            return Err(ParamError {
                key: "hz".into(),
                message: format!("{hz} is not a CONFIG_HZ value; accepted: 100, 250, 300, 1000"),
            });
        }
        Ok(Box::new(Westwood::new(hz)))
    }

    fn jiffies(&self, tp: &TcpState) -> u32 {
        jiffies_at(tp.now, self.hz)
    }

    /// tp->snd_una as the kernel's u32 byte sequence.
    fn snd_una_bytes(tp: &TcpState) -> u32 {
        tp.snd_una.wrapping_mul(tp.mss_cache as u64) as u32
    }

    /// westwood_filter.
    fn filter(&mut self, delta: u32) {
        let sample = self.bk / delta;
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = westwood_do_filter(self.bw_ns_est, sample);
            self.bw_est = westwood_do_filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// westwood_update_window: close the sampling window once an RTT (at least
    /// TCP_WESTWOOD_RTT_MIN) has passed.
    fn update_window(&mut self, tp: &TcpState) {
        let now = self.jiffies(tp);
        let delta = now.wrapping_sub(self.rtt_win_sx) as i32;
        if self.first_ack {
            self.snd_una = Self::snd_una_bytes(tp);
            self.first_ack = false;
        }
        // `delta > max_t(u32, ...)`: the s32 delta is compared as u32.
        let bound = self.rtt.max(westwood_rtt_min_jiffies(self.hz));
        if self.rtt != 0 && delta as u32 > bound {
            self.filter(delta as u32);
            self.bk = 0;
            self.rtt_win_sx = now;
        }
    }

    /// update_rtt_min.
    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// westwood_acked_count: bytes this ACK newly accounts for, dupacks counted one MSS each.
    fn acked_count(&mut self, tp: &TcpState) -> u32 {
        let una = Self::snd_una_bytes(tp);
        let mss = tp.mss_cache;
        self.cumul_ack = una.wrapping_sub(self.snd_una);
        if self.cumul_ack == 0 {
            // A dupack: it does not move snd_una.
            self.accounted = self.accounted.wrapping_add(mss);
            self.cumul_ack = mss;
        }
        if self.cumul_ack > mss {
            // Partial or delayed ACK.
            if self.accounted >= self.cumul_ack {
                self.accounted -= self.cumul_ack;
                self.cumul_ack = mss;
            } else {
                self.cumul_ack -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = una;
        self.cumul_ack
    }

    /// tcp_westwood_ack.
    fn ack(&mut self, tp: &TcpState, flags: u32) {
        self.update_window(tp);
        if flags & CA_ACK_SLOWPATH != 0 {
            let n = self.acked_count(tp);
            self.bk = self.bk.wrapping_add(n);
        } else {
            // westwood_fast_bw.
            let una = Self::snd_una_bytes(tp);
            self.bk = self.bk.wrapping_add(una.wrapping_sub(self.snd_una));
            self.snd_una = una;
        }
        self.update_rtt_min();
    }

    /// tcp_westwood_bw_rttmin: bw_est·rtt_min in packets, at least 2.
    fn bw_rttmin(&self, tp: &TcpState) -> u32 {
        (self.bw_est.wrapping_mul(self.rtt_min) / tp.mss_cache).max(WESTWOOD_MIN_WND)
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    /// tcp_westwood_init.
    fn init(&mut self, tp: &mut TcpState) {
        *self = Westwood::new(self.hz);
        self.rtt_win_sx = self.jiffies(tp);
        self.snd_una = Self::snd_una_bytes(tp);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp_reno_ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        tcp_reno_cong_avoid(tp, acked)
    }

    /// tcp_westwood_event.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        match event {
            CaEvent::CompleteCwr => {
                let w = self.bw_rttmin(tp);
                tp.snd_ssthresh = w;
                tp.snd_cwnd = w;
            }
            CaEvent::Loss => {
                tp.snd_ssthresh = self.bw_rttmin(tp);
                // Update rtt_min when the next ACK arrives.
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }

    /// tcp_westwood_ack.
    fn in_ack_event(&mut self, tp: &mut TcpState, flags: u32) {
        self.ack(tp, flags);
    }

    /// tcp_westwood_pkts_acked.
    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        if sample.rtt_us > 0 {
            let j = usecs_to_jiffies_at(sample.rtt_us.min(u32::MAX as i64) as u32, self.hz);
            self.rtt = j.min(u32::MAX as u64) as u32;
        }
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        WESTWOOD_TELEMETRY
    }

    /// tcp_westwood_info's fields, in SI units: bw_est (bytes/jiffy → bit/s) and rtt_min.
    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = self.bw_est as f64 * self.hz as f64 * 8.0;
        out[1] = self.rtt_min as f64 * 1000.0 / self.hz as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::CA_ACK_WIN_UPDATE;

    const MSS: u32 = 1448;
    /// One jiffy at HZ = 250, in ns.
    const JIFFY_NS: u64 = 4_000_000;

    fn ack_at(w: &mut Westwood, tp: &mut TcpState, t_jiffies: u64, una: u64, flags: u32) {
        tp.now = t_jiffies * JIFFY_NS;
        tp.snd_una = una;
        // Linux 6.18's tcp_ack order: pkts_acked, then in_ack_event.
        w.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 100_000,
                in_flight: 0,
            },
        );
        w.in_ack_event(tp, flags);
    }

    fn westwood() -> (Westwood, TcpState) {
        let mut tp = TcpState {
            mss_cache: MSS,
            ..Default::default()
        };
        let mut w = Westwood::new(HZ);
        w.init(&mut tp);
        (w, tp)
    }

    #[test]
    fn the_filter_is_a_seven_eighths_ewma() {
        assert_eq!(westwood_do_filter(800, 1600), (7 * 800 + 1600) >> 3);
        assert_eq!(westwood_do_filter(800, 1600), 900);
        assert_eq!(westwood_do_filter(0, 7), 0, "integer: 7 >> 3 = 0");
    }

    #[test]
    fn first_sample_fills_both_stages_then_two_ewmas_follow() {
        let mut w = Westwood::new(HZ);
        w.bk = 26 * 10_000; // 260000 bytes over 26 jiffies: 10000 B/jiffy
        w.filter(26);
        assert_eq!((w.bw_ns_est, w.bw_est), (10_000, 10_000));
        w.bk = 26 * 18_000; // a sample of 18000 B/jiffy
        w.filter(26);
        // bw_ns_est = (7·10000 + 18000) >> 3 = 11000; bw_est = (7·10000 + 11000) >> 3 = 10125.
        assert_eq!(w.bw_ns_est, (7 * 10_000 + 18_000) >> 3);
        assert_eq!(w.bw_est, (7 * 10_000 + 11_000) >> 3);
        assert_eq!((w.bw_ns_est, w.bw_est), (11_000, 10_125));
    }

    #[test]
    fn ssthresh_after_an_rto_is_bw_est_times_rtt_min_over_mss() {
        let mut w = Westwood::new(HZ);
        w.bw_est = 10_125; // bytes per jiffy
        w.rtt_min = 25; // jiffies (100 ms at HZ 250)
        let mut tp = TcpState {
            mss_cache: MSS,
            snd_cwnd: 300,
            ..Default::default()
        };
        w.cwnd_event(&mut tp, CaEvent::Loss);
        // 10125·25/1448 = 253125/1448 = 174.
        assert_eq!(tp.snd_ssthresh, 10_125 * 25 / MSS);
        assert_eq!(tp.snd_ssthresh, 174);
        assert!(w.reset_rtt_min);
        // The end of recovery sets cwnd too.
        tp.snd_cwnd = 150;
        w.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (174, 174));
        // Floor of 2 packets.
        w.bw_est = 10;
        w.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (2, 2));
        // Reno's ssthresh during recovery.
        tp.snd_cwnd = 300;
        assert_eq!(w.ssthresh(&tp), 150);
    }

    #[test]
    fn acked_bytes_per_rtt_window_become_the_estimate() {
        let (mut w, mut tp) = westwood();
        // RTT 100 ms → usecs_to_jiffies(100000) = 25 jiffies; the window closes after > 25.
        // First ACK (fast path): snd_una taken as the start, its own bytes not counted.
        ack_at(&mut w, &mut tp, 1, 10, CA_ACK_WIN_UPDATE);
        assert_eq!(w.rtt, 25);
        // rtt_min (reset at init) takes this ACK's sample: pkts_acked runs first (6.18).
        assert_eq!(w.rtt_min, 25);
        assert_eq!(w.bk, 0);
        // Twenty more packets over the next 20 jiffies.
        for j in 2..=21 {
            ack_at(&mut w, &mut tp, j, 10 + (j - 1), CA_ACK_WIN_UPDATE);
        }
        assert_eq!(w.bk, 20 * MSS);
        // At jiffy 26 (delta 26 > max(25, 12)) the window closes before this ACK's bytes count.
        ack_at(&mut w, &mut tp, 26, 31, CA_ACK_WIN_UPDATE);
        // bk/delta = 20·1448/26 = 1113 bytes/jiffy, the first sample: both stages.
        assert_eq!(w.bw_est, 20 * MSS / 26);
        assert_eq!(w.bw_ns_est, 20 * MSS / 26);
        assert_eq!(w.bk, MSS, "the closing ACK starts the next window");
    }

    #[test]
    fn dupacks_count_one_mss_and_the_covering_ack_only_the_rest() {
        let (mut w, mut tp) = westwood();
        ack_at(&mut w, &mut tp, 1, 10, CA_ACK_WIN_UPDATE);
        // Three dupacks (slow path, snd_una stays 10): 3 MSS counted, 3 MSS accounted.
        for j in 2..=4 {
            ack_at(&mut w, &mut tp, j, 10, CA_ACK_SLOWPATH);
        }
        assert_eq!((w.bk, w.accounted), (3 * MSS, 3 * MSS));
        // The cumulative ACK for 5 segments (slow path): 5 − 3 = 2 MSS more.
        ack_at(&mut w, &mut tp, 5, 15, CA_ACK_SLOWPATH);
        assert_eq!((w.bk, w.accounted), (5 * MSS, 0));
        // A partial ACK of 2 segments with 3 MSS accounted: counts 1 MSS, leaves 1 accounted.
        for j in 6..=8 {
            ack_at(&mut w, &mut tp, j, 15, CA_ACK_SLOWPATH);
        }
        ack_at(&mut w, &mut tp, 9, 17, CA_ACK_SLOWPATH);
        assert_eq!(w.accounted, 3 * MSS - 2 * MSS);
        assert_eq!(w.bk, 5 * MSS + 3 * MSS + MSS);
    }

    #[test]
    fn rtt_is_in_jiffies_rounded_up_and_rtt_min_resets_after_an_rto() {
        let (mut w, mut tp) = westwood();
        ack_at(&mut w, &mut tp, 1, 1, CA_ACK_WIN_UPDATE);
        // usecs_to_jiffies(100000) at HZ 250: ⌈100000/4000⌉ = 25; pkts_acked runs first, so
        // rtt_min (reset at init) takes this ACK's sample.
        assert_eq!((w.rtt, w.rtt_min), (25, 25));
        tp.now = 2 * JIFFY_NS;
        w.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 40_001,
                in_flight: 0,
            },
        );
        w.in_ack_event(&mut tp, CA_ACK_WIN_UPDATE);
        assert_eq!(w.rtt, 11, "⌈40001/4000⌉");
        assert_eq!(w.rtt_min, 11, "the same ACK's sample");
        ack_at(&mut w, &mut tp, 3, 2, CA_ACK_WIN_UPDATE); // sample 100 ms: rtt 25
        assert_eq!(w.rtt_min, 11);
        w.cwnd_event(&mut tp, CaEvent::Loss);
        ack_at(&mut w, &mut tp, 4, 3, CA_ACK_WIN_UPDATE);
        assert_eq!(
            w.rtt_min, 25,
            "after an RTO: reset to the next ACK's sample, 25, above 11"
        );
        ack_at(&mut w, &mut tp, 5, 4, CA_ACK_WIN_UPDATE);
        assert_eq!(w.rtt_min, 25);
    }

    #[test]
    fn parameters() {
        let t: toml::Table = "hz = 1000".parse().unwrap();
        assert!(Westwood::build(&CcConfig::new(&t, 1)).is_ok());
        let t: toml::Table = "hz = 200".parse().unwrap();
        assert_eq!(
            Westwood::build(&CcConfig::new(&t, 1)).err().unwrap().key,
            "hz"
        );
        let t: toml::Table = "beta = 1".parse().unwrap();
        assert_eq!(
            Westwood::build(&CcConfig::new(&t, 1)).err().unwrap().key,
            "beta"
        );
    }
}
