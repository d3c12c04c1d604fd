//! TCP Vegas, as Linux 6.x `net/ipv4/tcp_vegas.c` (Brakmo & Peterson, "TCP Vegas: End to end
//! congestion avoidance on a global internet", IEEE JSAC 13(8), 1995).
//!
//! # The algorithm
//!
//! Vegas keeps a small, fixed number of its own packets queued at the bottleneck. It compares
//! the rate it would get with an empty queue (`cwnd / baseRTT`) with the rate it gets
//! (`cwnd / rtt`); the difference times baseRTT is the number of packets it has sitting in
//! queues:
//!
//! ```text
//!   baseRTT = min of every RTT sample (µs, +1 so it is never 0)    propagation delay
//!   rtt     = min of this round's RTT samples                     (filters delayed ACKs)
//!   diff    = cwnd · (rtt − baseRTT) / baseRTT                     packets queued (integer)
//! ```
//!
//! Once per round (a round ends when the cumulative ACK passes the `snd_nxt` recorded at its
//! start, `beg_snd_nxt`) and only if the round gave at least 3 RTT samples:
//!
//! - in slow start, if `diff > γ`: leave slow start with `cwnd = min(cwnd, target + 1)`,
//!   `target = cwnd·baseRTT/rtt` (the window that would have kept the queue empty), and
//!   `ssthresh = min(ssthresh, cwnd)`; otherwise slow start goes on (per ACK, as Reno's);
//! - in congestion avoidance: `diff > β` → `cwnd −= 1` (and ssthresh follows it down),
//!   `diff < α` → `cwnd += 1`, else hold;
//! - then cwnd is clamped to [2, snd_cwnd_clamp] and `ssthresh = tcp_current_ssthresh`.
//!
//! A round with ≤ 2 samples runs Reno instead (they are probably delayed ACKs), and outside the
//! Open state (Disorder, CWR, Recovery, Loss) Vegas is off and Reno runs (`vegas_disable`);
//! returning to Open restarts the round (`vegas_enable`). A loss halves cwnd as Reno
//! (`tcp_reno_ssthresh`). A restart after idle or the first transmission with nothing in flight
//! (`CA_EVENT_CWND_RESTART`, `CA_EVENT_TX_START`) forgets baseRTT as well (`tcp_vegas_init`).
//!
//! # Constants (tcp_vegas.c module parameters; `cc_params`)
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `alpha` | 2 | below this many queued packets, grow (`alpha`) |
//! | `beta` | 4 | above this many, shrink (`beta`) |
//! | `gamma` | 1 | slow-start exit threshold (`gamma`) |
//!
//! # Hooks
//!
//! | tcp_congestion_ops | here |
//! |---|---|
//! | `init` | `tcp_vegas_init`: baseRTT = 0x7fffffff, `vegas_enable` |
//! | `ssthresh` | `tcp_reno_ssthresh` |
//! | `undo_cwnd` | `tcp_reno_undo_cwnd` (the trait's default) |
//! | `cong_avoid` | `tcp_vegas_cong_avoid` |
//! | `pkts_acked` | `tcp_vegas_pkts_acked`: `vrtt = rtt_us + 1`, baseRTT and the round's min |
//! | `set_state` | `tcp_vegas_state`: enable in Open, disable elsewhere |
//! | `cwnd_event` | `tcp_vegas_cwnd_event`: `tcp_vegas_init` on CWND_RESTART and TX_START |
//! | `get_info` | telemetry: `vegas_enabled`, `vegas_rtt_cnt`, `vegas_base_rtt_us`, `vegas_min_rtt_us` (struct tcpvegas_info) |
//!
//! [`VegasState`] holds the part Linux exports for other modules (`tcp_vegas_init`,
//! `tcp_vegas_pkts_acked`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`; YeAH builds on them).
//!
//! # Where this differs from tcp_vegas.c
//!
//! - Sequence numbers count segments and are u64, so `after(ack, beg_snd_nxt)` is a plain `>`;
//!   `ack` is `tp.snd_una` (cong_avoid runs after the cumulative ACK has been applied).
//! - The kernel's `alpha`, `beta`, `gamma` are `int`s compared with the u32 `diff` (so a
//!   negative value would act as a huge one); here they are validated as 0..=2^20 packets.
//! - Everything else, the u32 arithmetic (`diff` wraps as the kernel's would for cwnd·queueing
//!   delay ≥ 2^32 µs), the u16 `cntRTT` and the clamps, is the kernel's.

use super::{params, reject_unknown, tcp_reno_cong_avoid, tcp_reno_ssthresh};
use super::{CcConfig, CongestionControl, ParamError};
use crate::state::{AckSample, CaEvent, CaState, TcpState};

/// tcp_vegas_init / vegas_enable: baseRTT and minRTT start at 0x7fffffff µs.
pub(crate) const VEGAS_RTT_INIT_US: u32 = 0x7fff_ffff;
/// tcp_vegas_cong_avoid: a round needs more than 2 RTT samples (`cntRTT <= 2` runs Reno).
const VEGAS_MIN_SAMPLES: u16 = 2;
/// tcp_vegas_cong_avoid: cwnd never drops below 2 packets.
const VEGAS_MIN_CWND: u32 = 2;

const PARAM_KEYS: &[&str] = &["alpha", "beta", "gamma"];

const VEGAS_TELEMETRY: &[&str] = &[
    "vegas_enabled",
    "vegas_rtt_cnt",
    "vegas_base_rtt_us",
    "vegas_min_rtt_us",
];

/// The module parameters of tcp_vegas.c.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VegasParams {
    /// tcp_vegas.c: alpha = 2 ("lower bound of packets in network").
    pub alpha: u32,
    /// tcp_vegas.c: beta = 4 ("upper bound of packets in network").
    pub beta: u32,
    /// tcp_vegas.c: gamma = 1 ("limit on increase").
    pub gamma: u32,
}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams {
            alpha: 2,
            beta: 4,
            gamma: 1,
        }
    }
}

impl VegasParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = VegasParams::default();
        let get = |key: &str, default: u32| params::integer(t, key, default, 0, 1 << 20, "packets");
        Ok(VegasParams {
            alpha: get("alpha", d.alpha)?,
            beta: get("beta", d.beta)?,
            gamma: get("gamma", d.gamma)?,
        })
    }
}

/// `struct vegas` (tcp_vegas.h) and the functions tcp_vegas.c exports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VegasState {
    /// Whether the Vegas calculation runs this round (Open state).
    pub doing_vegas_now: bool,
    /// The round ends when the cumulative ACK passes this sequence (segments).
    pub beg_snd_nxt: u64,
    /// RTT samples this round (u16, as the kernel's).
    pub cnt_rtt: u16,
    /// Min RTT this round, µs + 1.
    pub min_rtt: u32,
    /// Min RTT ever (since the last init), µs + 1.
    pub base_rtt: u32,
}

impl Default for VegasState {
    fn default() -> Self {
        VegasState {
            doing_vegas_now: false,
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            min_rtt: VEGAS_RTT_INIT_US,
            base_rtt: VEGAS_RTT_INIT_US,
        }
    }
}

impl VegasState {
    /// vegas_enable: start a round at snd_nxt.
    pub fn enable(&mut self, tp: &TcpState) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = VEGAS_RTT_INIT_US;
    }

    /// vegas_disable.
    pub fn disable(&mut self) {
        self.doing_vegas_now = false;
    }

    /// tcp_vegas_init: forget baseRTT too.
    pub fn init(&mut self, tp: &TcpState) {
        self.base_rtt = VEGAS_RTT_INIT_US;
        self.enable(tp);
    }

    /// tcp_vegas_pkts_acked.
    pub fn pkts_acked(&mut self, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Never allow zero rtt or baseRTT (the kernel's s32 rtt_us + 1, as u32).
        let vrtt = (sample.rtt_us as u32).wrapping_add(1);
        if vrtt < self.base_rtt {
            self.base_rtt = vrtt;
        }
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
    }

    /// tcp_vegas_state.
    pub fn set_state(&mut self, tp: &TcpState, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
        } else {
            self.disable();
        }
    }

    /// tcp_vegas_cwnd_event.
    pub fn cwnd_event(&mut self, tp: &TcpState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.init(tp);
        }
    }
}

/// tcp_vegas_ssthresh (the static one in tcp_vegas.c): min(ssthresh, cwnd).
fn vegas_ssthresh(tp: &TcpState) -> u32 {
    tp.snd_ssthresh.min(tp.snd_cwnd)
}

/// `cwnd · (rtt − baseRTT) / baseRTT` in u32, as tcp_vegas_cong_avoid: packets queued.
pub(crate) fn vegas_diff(cwnd: u32, rtt: u32, base_rtt: u32) -> u32 {
    cwnd.wrapping_mul(rtt.wrapping_sub(base_rtt)) / base_rtt
}

/// `cwnd · baseRTT / rtt` in u64: the window that would keep the queue empty.
pub(crate) fn vegas_target_cwnd(cwnd: u32, rtt: u32, base_rtt: u32) -> u64 {
    cwnd as u64 * base_rtt as u64 / rtt as u64
}

pub struct Vegas {
    p: VegasParams,
    pub(crate) v: VegasState,
}

impl Vegas {
    pub fn new(p: VegasParams) -> Self {
        Vegas {
            p,
            v: VegasState::default(),
        }
    }

    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        Ok(Box::new(Vegas::new(VegasParams::from_table(
            config.params,
        )?)))
    }

    /// The once-per-round decision of tcp_vegas_cong_avoid (enough samples).
    fn adjust(&mut self, tp: &mut TcpState, acked: u32) {
        let rtt = self.v.min_rtt;
        let base = self.v.base_rtt;
        let target_cwnd = vegas_target_cwnd(tp.snd_cwnd, rtt, base);
        let diff = vegas_diff(tp.snd_cwnd, rtt, base);
        if diff > self.p.gamma && tp.in_slow_start() {
            // Going too fast: match the actual rate (+1 against integer truncation).
            tp.snd_cwnd = tp.snd_cwnd.min((target_cwnd as u32).wrapping_add(1));
            tp.snd_ssthresh = vegas_ssthresh(tp);
        } else if tp.in_slow_start() {
            tp.slow_start(acked);
        } else if diff > self.p.beta {
            tp.snd_cwnd -= 1;
            tp.snd_ssthresh = vegas_ssthresh(tp);
        } else if diff < self.p.alpha {
            tp.snd_cwnd += 1;
        }
        if tp.snd_cwnd < VEGAS_MIN_CWND {
            tp.snd_cwnd = VEGAS_MIN_CWND;
        } else if tp.snd_cwnd > tp.snd_cwnd_clamp {
            tp.snd_cwnd = tp.snd_cwnd_clamp;
        }
        tp.snd_ssthresh = tp.current_ssthresh();
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.v.init(tp);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp_reno_ssthresh(tp)
    }

    /// tcp_vegas_cong_avoid.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !self.v.doing_vegas_now {
            tcp_reno_cong_avoid(tp, acked);
            return;
        }
        let ack = tp.snd_una;
        if ack > self.v.beg_snd_nxt {
            // Once per round: the next round ends with what is sent now.
            self.v.beg_snd_nxt = tp.snd_nxt;
            if self.v.cnt_rtt <= VEGAS_MIN_SAMPLES {
                tcp_reno_cong_avoid(tp, acked);
            } else {
                self.adjust(tp, acked);
            }
            self.v.cnt_rtt = 0;
            self.v.min_rtt = VEGAS_RTT_INIT_US;
        } else if tp.in_slow_start() {
            tp.slow_start(acked);
        }
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        self.v.pkts_acked(sample);
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        self.v.set_state(tp, new_state);
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        self.v.cwnd_event(tp, event);
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        VEGAS_TELEMETRY
    }

    /// tcp_vegas_get_info (struct tcpvegas_info).
    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = self.v.doing_vegas_now as u32 as f64;
        out[1] = self.v.cnt_rtt as f64;
        out[2] = self.v.base_rtt as f64;
        out[3] = self.v.min_rtt as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rtt_us: i64) -> AckSample {
        AckSample {
            pkts_acked: 1,
            rtt_us,
            in_flight: 0,
        }
    }

    /// A Vegas in congestion avoidance (cwnd 20, ssthresh 10) that has just seen three RTT
    /// samples of `rtt_us` (so min_rtt = rtt_us + 1) with baseRTT = 100000 µs + 1, at the end of
    /// a round (snd_una past beg_snd_nxt).
    fn at_round_end(cwnd: u32, ssthresh: u32, rtt_us: i64) -> (Vegas, TcpState) {
        let mut tp = TcpState {
            snd_cwnd: cwnd,
            snd_ssthresh: ssthresh,
            snd_una: 0,
            snd_nxt: 100,
            is_cwnd_limited: true,
            ..Default::default()
        };
        let mut v = Vegas::new(VegasParams::default());
        v.init(&mut tp);
        v.pkts_acked(&mut tp, &sample(100_000));
        v.v.min_rtt = VEGAS_RTT_INIT_US; // a new round: only base_rtt remembers 100 ms
        for _ in 0..3 {
            v.pkts_acked(&mut tp, &sample(rtt_us));
        }
        tp.snd_una = 101;
        tp.snd_nxt = 150;
        (v, tp)
    }

    #[test]
    fn rtt_samples_are_plus_one_and_filtered_by_min() {
        let mut tp = TcpState::default();
        let mut v = Vegas::new(VegasParams::default());
        v.init(&mut tp);
        v.pkts_acked(&mut tp, &sample(-1)); // no sample (Karn)
        assert_eq!(v.v.cnt_rtt, 0);
        v.pkts_acked(&mut tp, &sample(30_000));
        v.pkts_acked(&mut tp, &sample(20_000));
        v.pkts_acked(&mut tp, &sample(25_000));
        assert_eq!(v.v.base_rtt, 20_001);
        assert_eq!(v.v.min_rtt, 20_001);
        assert_eq!(v.v.cnt_rtt, 3);
    }

    #[test]
    fn diff_below_alpha_grows_by_one() {
        // diff = 20·(110001 − 100001)/100001 = 200000/100001 = 1 < α = 2.
        let (mut v, mut tp) = at_round_end(20, 10, 110_000);
        assert_eq!(vegas_diff(20, 110_001, 100_001), 200_000 / 100_001);
        v.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 21);
        // ssthresh = tcp_current_ssthresh = max(10, 21·3/4 = (21>>1)+(21>>2) = 15).
        assert_eq!(tp.snd_ssthresh, (21 >> 1) + (21 >> 2));
        assert_eq!(v.v.beg_snd_nxt, 150, "the next round ends at snd_nxt");
        assert_eq!((v.v.cnt_rtt, v.v.min_rtt), (0, VEGAS_RTT_INIT_US));
    }

    #[test]
    fn diff_between_alpha_and_beta_holds() {
        // diff = 20·(115001 − 100001)/100001 = 300000/100001 = 2: α ≤ 2 ≤ β.
        let (mut v, mut tp) = at_round_end(20, 10, 115_000);
        assert_eq!(vegas_diff(20, 115_001, 100_001), 2);
        v.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 20);
        // diff = 20·25000/100001 = 4 = β: still holds (the test is diff > β).
        let (mut v, mut tp) = at_round_end(20, 10, 125_000);
        assert_eq!(vegas_diff(20, 125_001, 100_001), 4);
        v.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 20);
    }

    #[test]
    fn diff_above_beta_shrinks_by_one_and_lowers_ssthresh() {
        // diff = 20·(130001 − 100001)/100001 = 600000/100001 = 5 > β = 4.
        let (mut v, mut tp) = at_round_end(20, 10, 130_000);
        assert_eq!(vegas_diff(20, 130_001, 100_001), 5);
        tp.snd_ssthresh = 19; // below cwnd: congestion avoidance
        v.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 19);
        // ssthresh = min(19, 19) = 19, then tcp_current_ssthresh = max(19, (19>>1)+(19>>2) = 13).
        assert_eq!(tp.snd_ssthresh, 19);
    }

    #[test]
    fn slow_start_ends_when_diff_exceeds_gamma() {
        // Slow start (ssthresh infinite), cwnd 40, rtt 110001: diff = 40·10000/100001 = 3 > γ = 1.
        let (mut v, mut tp) = at_round_end(40, u32::MAX >> 1, 110_000);
        assert_eq!(vegas_diff(40, 110_001, 100_001), 3);
        v.cong_avoid(&mut tp, 1);
        // target = 40·100001/110001 = 36 (36.36): cwnd = min(40, 36 + 1) = 37.
        assert_eq!(vegas_target_cwnd(40, 110_001, 100_001), 4_000_040 / 110_001);
        assert_eq!(tp.snd_cwnd, 4_000_040 / 110_001 + 1);
        // ssthresh = min(ssthresh, cwnd) = 37; then tcp_current_ssthresh: max(37, 27) = 37.
        assert_eq!(tp.snd_ssthresh, 37);
        assert!(!tp.in_slow_start());
    }

    #[test]
    fn slow_start_continues_while_diff_is_at_most_gamma() {
        // cwnd 10, rtt 105001: diff = 10·5000/100001 = 0 ≤ γ: slow start, +acked.
        let (mut v, mut tp) = at_round_end(10, u32::MAX >> 1, 105_000);
        v.cong_avoid(&mut tp, 2);
        assert_eq!(tp.snd_cwnd, 12);
        // Inside the round (snd_una not past beg_snd_nxt = 150): slow start per ACK.
        tp.snd_una = 120;
        v.cong_avoid(&mut tp, 3);
        assert_eq!(tp.snd_cwnd, 15);
    }

    #[test]
    fn a_round_with_two_samples_runs_reno_and_outside_open_vegas_is_off() {
        let (mut v, mut tp) = at_round_end(20, 10, 130_000);
        v.v.cnt_rtt = 2;
        tp.snd_cwnd_cnt = 19;
        v.cong_avoid(&mut tp, 1); // Reno: the 20th packet of the window grows cwnd
        assert_eq!(tp.snd_cwnd, 21);
        v.set_state(&mut tp, CaState::Recovery);
        assert!(!v.v.doing_vegas_now);
        v.set_state(&mut tp, CaState::Open);
        assert!(v.v.doing_vegas_now);
        assert_eq!(v.v.beg_snd_nxt, tp.snd_nxt);
        assert_eq!(v.ssthresh(&tp), 10, "tcp_reno_ssthresh: 21 >> 1");
    }

    #[test]
    fn idle_restart_forgets_base_rtt() {
        let (mut v, mut tp) = at_round_end(20, 10, 110_000);
        assert_eq!(v.v.base_rtt, 100_001);
        v.cwnd_event(&mut tp, CaEvent::CwndRestart);
        assert_eq!(v.v.base_rtt, VEGAS_RTT_INIT_US);
        v.cwnd_event(&mut tp, CaEvent::CompleteCwr); // not a restart
        assert!(v.v.doing_vegas_now);
    }

    #[test]
    fn parameters_are_typed_and_unknown_keys_rejected() {
        let t: toml::Table = "alpha = 3\nbeta = 6".parse().unwrap();
        assert_eq!(
            VegasParams::from_table(&t).unwrap(),
            VegasParams {
                alpha: 3,
                beta: 6,
                gamma: 1
            }
        );
        let t: toml::Table = "delta = 1".parse().unwrap();
        assert_eq!(VegasParams::from_table(&t).unwrap_err().key, "delta");
        let t: toml::Table = "alpha = -1".parse().unwrap();
        assert_eq!(VegasParams::from_table(&t).unwrap_err().key, "alpha");
    }
}
