//! BALIA, the Balanced Linked Adaptation algorithm: Q. Peng, A. Walid, J. Hwang, S. H. Low,
//! "Multipath TCP: Analysis, Design, and Implementation", IEEE/ACM ToN 24(1), 2016 (§V, Eq. (14));
//! Linux MPTCP's `balia` (`net/mptcp/mptcp_balia.c`, by the authors). Seed 000 §5 quotes it
//! (Eqs. 2.8–2.9, with a garbled Eq. 2.8; the canonical form below is the one seed 000 and seed
//! 001 §3 give, checked against the kernel).
//!
//! # The algorithm
//!
//! With `x_k = w_k / rtt_k` the rate of path k (windows in packets, smoothed RTTs) over the paths
//! of the group, and `α_r = max_k x_k / x_r` (≥ 1):
//!
//! ```text
//!   per ACK on r:  w_r += (x_r / rtt_r) / (Σ_k x_k)² · (1 + α_r)/2 · (4 + α_r)/5
//!   per loss on r: w_r −= (w_r / 2) · min(α_r, 1.5)
//! ```
//!
//! The increase balances LIA's responsiveness and OLIA's friendliness (the paper's design
//! space); on the best path (α = 1) it is `(x_r/rtt_r)/(Σx)²`, the Kelly–Voice term; on a path k
//! times slower it is multiplied by (1+k)(4+k)/10, and its decrease is up to 1.5·w/2 (so slow
//! paths give up more).
//!
//! # As the kernel applies it
//!
//! `mptcp_balia_recalc_ai` computes the increase as "one packet every `ai` packets acked",
//! `ai = (Σx)²·10·w_r / ((x_r + max x)·(4x_r + max x))` = `1/increase`, truncated, and applies
//! it through the Reno counter; here likewise (`tcp_cong_avoid_ai`, see [`super::lia`] for the
//! counter and [`super::KERNEL_ACK_COUNTING`]). The kernel's rates are
//! `mss·cwnd·8·10⁶/srtt_us` with one MSS for every path, i.e. the packet form used here.
//!
//! The decrease is `ssthresh = max(w − ⌊⌊w/2⌋ · min(α_r, 1.5)⌋, 2)`: the kernel rounds the same
//! way (`(cwnd >> 1) · min(α, 3/2)` in 2^-10 fixed point) but truncates α to an integer first
//! (`alpha = max_rate / rate`, an integer division), so its factor is 1 for α < 2 and 1.5
//! above; here α is the paper's real number. The floor is 2 (Reno's; the kernel's is 1).
//!
//! Alone in its group (one counting path) BALIA is Reno (α = 1: increase 1/w, decrease w/2);
//! the subflow then runs `tcp_reno_cong_avoid` and `tcp_reno_ssthresh` exactly (seed 001 §3:
//! "one subflow only: Reno"; the kernel does so when the socket is not multipath).

use super::super::{reject_unknown, CcConfig, CongestionControl, ParamError};
use super::{group_size, members, reno_ai, CouplingSlot, SlotState, KERNEL_ACK_COUNTING};
use crate::cc::params;
use crate::state::{AckSample, TcpState};

/// mptcp_balia_recalc_ai / the paper: the decrease factor is capped at 1.5 (`3 << alpha_scale >> 1`).
const BALIA_MAX_DECREASE_FACTOR: f64 = 1.5;

pub struct Balia {
    cpl: CouplingSlot,
    kernel_ack_counting: bool,
}

impl Balia {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        reject_unknown(config.params, &[KERNEL_ACK_COUNTING])?;
        Ok(Box::new(Balia {
            cpl: config.coupling.clone().unwrap_or_else(CouplingSlot::alone),
            kernel_ack_counting: params::boolean(config.params, KERNEL_ACK_COUNTING, false)?,
        }))
    }
}

/// (x_r, max_k x_k, Σ_k x_k) in packets per µs; `None` when `me` does not count or is alone.
fn rates(slots: &[SlotState], me: usize) -> Option<(f64, f64, f64)> {
    if !slots[me].counts() {
        return None;
    }
    let rate = |s: &SlotState| s.cwnd as f64 / s.srtt_us as f64;
    let (mut max, mut sum, mut n) = (0.0f64, 0.0f64, 0);
    for (_, s) in members(slots, me) {
        let x = rate(s);
        max = max.max(x);
        sum += x;
        n += 1;
    }
    (n > 1).then_some((rate(&slots[me]), max, sum))
}

/// BALIA's α_r = max_k x_k / x_r (1 for a path alone).
pub fn alpha(slots: &[SlotState], me: usize) -> f64 {
    match rates(slots, me) {
        Some((x, max, _)) if x > 0.0 => max / x,
        _ => 1.0,
    }
}

/// The increase of `me`'s window per packet acked, in packets:
/// `(x_r/rtt_r)/(Σx)² · (1+α_r)/2 · (4+α_r)/5`. For `me` alone: `1/w_r`.
pub fn increase_per_packet(slots: &[SlotState], me: usize) -> f64 {
    let r = &slots[me];
    match rates(slots, me) {
        Some((x, _, sum)) => {
            let a = alpha(slots, me);
            (x / r.srtt_us as f64) / (sum * sum) * (1.0 + a) / 2.0 * (4.0 + a) / 5.0
        }
        None => 1.0 / r.cwnd.max(1) as f64,
    }
}

/// Packets acked per one-packet increase: the kernel's `ai`, `floor(1/increase)`, at least 1.
pub fn acks_per_increment(slots: &[SlotState], me: usize) -> u32 {
    if rates(slots, me).is_none() {
        return slots[me].cwnd.max(1);
    }
    let x = 1.0 / increase_per_packet(slots, me);
    // A 1e-12 relative allowance keeps an integer quotient from being cut by rounding.
    let n = (x + x * 1e-12).floor();
    if n.is_finite() && n < u32::MAX as f64 {
        (n as u32).max(1)
    } else {
        u32::MAX
    }
}

/// The ssthresh after a loss on `me` with window `cwnd`: `max(cwnd − ⌊⌊cwnd/2⌋·min(α, 1.5)⌋, 2)`;
/// Reno's `max(cwnd/2, 2)` for a path alone.
pub fn ssthresh_after_loss(slots: &[SlotState], me: usize, cwnd: u32) -> u32 {
    if rates(slots, me).is_none() {
        return (cwnd >> 1).max(2);
    }
    let md = ((cwnd >> 1) as f64 * alpha(slots, me).min(BALIA_MAX_DECREASE_FACTOR)).floor() as u32;
    cwnd.saturating_sub(md).max(2)
}

impl CongestionControl for Balia {
    fn name(&self) -> &'static str {
        "balia"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.cpl.publish(tp, |_| {});
    }

    /// mptcp_balia_ssthresh.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cwnd = tp.snd_cwnd;
        self.cpl
            .publish_and(tp, |_| {}, |slots, me| ssthresh_after_loss(slots, me, cwnd))
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, _sample: &AckSample) {
        self.cpl.publish(tp, |_| {});
    }

    /// mptcp_balia_cong_avoid.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        let alone = self.cpl.publish_and(
            tp,
            |_| {},
            |slots, me| group_size(slots, me) <= 1 || !slots[me].counts(),
        );
        let mut acked = acked;
        if tp.in_slow_start() {
            acked = tp.slow_start(acked);
            // The kernel drops the leftover when coupled; Reno (a lone subflow) keeps it.
            if acked == 0 || !alone {
                self.cpl.publish(tp, |_| {});
                return;
            }
        }
        let units = if self.kernel_ack_counting { 1 } else { acked };
        if alone {
            reno_ai(tp, units);
        } else {
            let n = self.cpl.publish_and(tp, |_| {}, acks_per_increment);
            tp.cong_avoid_ai(n, units);
        }
        self.cpl.publish(tp, |_| {});
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::slot;
    use super::super::CouplingHandle;
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn two_paths_match_the_papers_formula() {
        // w = (10, 20), rtt = (100 ms, 50 ms): x = (100, 400) /s, Σx = 500, squared 250000.
        // α_0 = 400/100 = 4, α_1 = 1.
        // inc_0 = (100/0.1)/250000 · (1+4)/2 · (4+4)/5 = 0.004 · 2.5 · 1.6 = 0.016 → ai 62.
        // inc_1 = (400/0.05)/250000 · 1 · 1 = 0.032 → ai 31.
        let slots = [slot(10, 100_000), slot(20, 50_000)];
        assert!(close(alpha(&slots, 0), 4.0));
        assert!(close(alpha(&slots, 1), 1.0));
        assert!(close(increase_per_packet(&slots, 0), 0.016));
        assert!(close(increase_per_packet(&slots, 1), 0.032));
        assert_eq!(acks_per_increment(&slots, 0), 62);
        assert_eq!(acks_per_increment(&slots, 1), 31);
        // Decrease: path 0, α = 4 → factor 1.5: 10 − ⌊5·1.5⌋ = 10 − 7 = 3.
        // Path 1, α = 1: 20 − 10 = 10.
        assert_eq!(ssthresh_after_loss(&slots, 0, 10), 3);
        assert_eq!(ssthresh_after_loss(&slots, 1, 20), 10);
    }

    #[test]
    fn three_paths_match_the_papers_formula() {
        // w = (10, 10, 40), rtt = (20, 40, 80) ms: x = (500, 250, 500), Σx = 1250, sq 1562500.
        // α = (1, 2, 1).
        // inc_0 = (500/0.02)/1562500 = 0.016.
        // inc_1 = (250/0.04)/1562500 · (3/2)·(6/5) = 0.004 · 1.8 = 0.0072
        //   (kernel: ai = 1562500·10/(250+500) · 10/(1000+500) = 138.9 = 1/0.0072).
        // inc_2 = (500/0.08)/1562500 = 0.004.
        let slots = [slot(10, 20_000), slot(10, 40_000), slot(40, 80_000)];
        assert!(close(alpha(&slots, 1), 2.0));
        assert!(close(increase_per_packet(&slots, 0), 0.016));
        assert!(close(increase_per_packet(&slots, 1), 0.0072));
        assert!(close(increase_per_packet(&slots, 2), 0.004));
        assert_eq!(acks_per_increment(&slots, 1), 138);
        // α between 1 and 1.5 is used as is: w = (10, 12), equal rtt: α_0 = 1.2,
        // decrease ⌊5·1.2⌋ = 6 → 4.
        let slots = [slot(10, 50_000), slot(12, 50_000)];
        assert!(close(alpha(&slots, 0), 1.2));
        assert_eq!(ssthresh_after_loss(&slots, 0, 10), 4);
    }

    #[test]
    fn coupled_subflow_uses_the_ai_counter() {
        let h = CouplingHandle::new();
        let (a, b) = (h.subflow(), h.subflow());
        b.publish(
            &TcpState {
                snd_cwnd: 20,
                srtt_us: 50_000,
                ..Default::default()
            },
            |_| {},
        );
        let p = toml::Table::new();
        let mut cc = Balia::build(&CcConfig::new(&p, 1).with_coupling(a)).unwrap();
        let mut tp = TcpState {
            snd_cwnd: 10,
            snd_ssthresh: 5,
            srtt_us: 100_000,
            is_cwnd_limited: true,
            ..Default::default()
        };
        cc.pkts_acked(&mut tp, &AckSample::default());
        assert_eq!(cc.ssthresh(&tp), 3);
        for _ in 0..61 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 10);
        cc.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 11);
    }

    #[test]
    fn lone_balia_is_reno() {
        let p = toml::Table::new();
        super::super::lia::tests::assert_same_as_reno(Balia::build(&CcConfig::new(&p, 1)).unwrap());
    }
}
