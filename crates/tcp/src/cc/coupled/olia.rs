//! OLIA, the Opportunistic Linked-Increases Algorithm: R. Khalili, N. Gast, M. Popovic,
//! J.-Y. Le Boudec, "MPTCP is not Pareto-optimal: performance issues and a possible solution",
//! CoNEXT 2012 (and IEEE/ACM ToN 21(5), 2013); specified in draft-khalili-mptcp-congestion-control
//! (-05, 2014); Linux MPTCP's `olia` (`net/mptcp/mptcp_olia.c`, by the same authors).
//!
//! # The algorithm
//!
//! For each ACK on path r in congestion avoidance (windows in packets, rtt the smoothed RTT, over
//! the paths p of the group, here the coupling group):
//!
//! ```text
//!   w_r += (w_r / rtt_r²) / (Σ_p w_p / rtt_p)²  +  α_r / w_r                  (OLIA, Eq. (4) of the paper;
//!                                                                            draft-05 §3, Eqs. (2)–(4))
//! ```
//!
//! The first term is the "Kelly–Voice" increase, which alone would be optimal but flappy; the
//! second moves window from the paths with the largest windows to the presumably best paths:
//!
//! - `l_r` = max(packets acked between the last two losses on r, packets acked since the last
//!   loss on r) (draft-05 §3: `l1r`, `l2r`, "smoothed estimate of the number of bytes ... between
//!   losses");
//! - best paths **B**: the paths maximising the best-path metric of l_r and rtt_r (below);
//! - max-window paths **M**: the paths with the largest w_p;
//! - collected paths **B∖M**;
//! - with |R| the number of paths:
//!   `α_r = 1/(|R|·|B∖M|)` if r ∈ B∖M; `α_r = −1/(|R|·|M|)` if r ∈ M and B∖M ≠ ∅;
//!   `α_r = 0` otherwise. Σ_r α_r = 0.
//!
//! Decrease on loss: `w_r/2` (TCP's; `tcp_reno_ssthresh`, floor 2). Slow start as TCP.
//!
//! # The best-path metric (`best_path_metric`) [GAP]
//!
//! The sources disagree on how l_r and rtt_r combine. `mptcp_olia.c` (`mptcp_get_epsilon`) ranks
//! paths by `l_r / rtt_r²`: with l_r ≈ 1/p_r, that is the square of a TCP's rate on r,
//! √(2/p_r)/rtt_r, i.e. "the path where a TCP would get most"; seed 001 §3 and seed 000 §5
//! (which read the kernel) give this one. draft-khalili-05, as implemented from the draft in
//! INET's SCTP-CMT model, ranks by `l_r² / rtt_r`. The default is the kernel's
//! (`"l_per_rtt2"`), since every experiment of the sources ran the kernel; `"l2_per_rtt"` selects
//! the draft's. The comparison is exact (cross-multiplied integers, as the kernel does), so ties
//! put several paths in B.
//!
//! # As the kernel applies it
//!
//! - A path's window, in the sums and in M, is `ssthresh` while that path is in Recovery
//!   (`mptcp_get_crt_cwnd`: ignore the RFC 5681 inflation).
//! - The increase (which may be negative) accumulates in a signed counter in units of 2^-10
//!   packet (`scale = 10`), each ACK adding the increase truncated toward zero; at
//!   `≥ 2^10 − 1` cwnd grows by one, at `≤ −(2^10 − 1)` it shrinks by one (not below 1), and the
//!   counter restarts at 0. Here an ACK that covers `acked` packets adds `acked` times the
//!   increase (see [`super::KERNEL_ACK_COUNTING`]) and may then move cwnd by more than one.
//! - `l_r` comes from three snapshots of snd_una: `loss3` is updated on every `cong_avoid`;
//!   entering Loss, Recovery or CWR shifts `loss1 ← loss2 ← loss3` unless nothing was acked since
//!   (`loss3 == loss2`) or the RTO is a repeated one (kernel: `icsk_retransmits != 0`; here: the
//!   state is already Loss, which is when the kernel's count is non-zero).
//! - A path counts when it can send and has an RTT sample (`mptcp_olia_sk_can_send`).
//! - Alone in its group (one counting path), OLIA's formula is Reno's (α = 0, increase 1/w);
//!   the subflow then runs `tcp_reno_cong_avoid` exactly, as `mptcp_oliasbdx.c` does for a lone
//!   subflow (seed 000 §4.3).
//!
//! # OLIA* (`cc = "olia_sbd"`, and MPTCP-SSCC's coupled algorithm, `cc = "sscc"`)
//!
//! MPTCP-SSCC couples the subflows that its shared-bottleneck detection groups and runs OLIA
//! over each group: "OLIA*" (Yang's thesis, footnote 1 of ch. 5; seed 000 §4.3), whose code is
//! `mptcp_oliasbdx.c` of the SSCC kernel fork (Ferlin's MPTCP-SBD OLIA, ported to 4.19). Read
//! against the fork's and multipath-tcp.org's `mptcp_olia.c`, it differs from `olia` above in:
//!
//! 1. **ssthresh = max(cwnd/2, 1)** (`mptcp_olia_ssthresh`, "let it go down to 1"), where
//!    `olia` uses `tcp_reno_ssthresh`, max(cwnd/2, 2). (The fork's own `mptcp_olia.c` carries the
//!    same change; multipath-tcp.org's does not.)
//! 2. **Slow start drops the leftover for a lone subflow too**: `mptcp_oliasbdx` returns after
//!    `tcp_slow_start` before it checks whether the subflow is alone, so the packets an ACK
//!    acknowledges beyond ssthresh are not carried into Reno's congestion avoidance, as `olia`
//!    (Reno exactly, when alone) carries them.
//! 3. **Who is coupled.** `mptcp_oliasbdx` couples a grouped subflow with its group *and* with
//!    every non-congested or not-yet-grouped subflow ("they might appear in the group at any
//!    moment"), and a non-congested subflow with all. MPTCP-SSCC's sender instead puts
//!    non-congested subflows and groups of one in its *uncoupled* group, which runs other
//!    algorithms (thesis §5.4.2), so OLIA* there is OLIA over the coupled group only. rove
//!    follows the thesis: the coupling is the detector's partition (`detect::rfc8382` puts
//!    non-congested subflows alone), and OLIA* couples within its group exactly as `olia` does.
//! 4. **Slow-start test.** `mptcp_oliasbdx` enters slow start while `cwnd <= ssthresh` (the 3.x
//!    kernels' test) but calls 4.19's `tcp_slow_start`, which caps cwnd at ssthresh: read
//!    literally, a subflow at cwnd = ssthresh, where every fast recovery ends, would never grow
//!    again. [GAP] rove takes it for a porting slip and uses `tcp_in_slow_start`
//!    (cwnd < ssthresh), as the fork's `mptcp_olia.c` does.
//!
//! Everything else (the increase, α, l_r, the 2^-10 counter, undo as Reno) is `olia`'s, and so
//! are the parameters.

use super::super::{reject_unknown, CcConfig, CongestionControl, ParamError};
use super::{members, reno_ai, CouplingSlot, SlotState, KERNEL_ACK_COUNTING};
use crate::cc::params;
use crate::state::{AckSample, CaState, TcpState};

/// `scale` in mptcp_olia.c: the increase counter is in units of 2^-10 packet.
const OLIA_SCALE: u32 = 10;
/// mptcp_olia_cong_avoid: the counter moves cwnd at ±((1 << scale) − 1).
const OLIA_CNT_THRESHOLD: i64 = (1 << OLIA_SCALE) - 1;

/// How best paths are ranked (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BestPathMetric {
    /// l_r / rtt_r², mptcp_olia.c.
    LPerRtt2,
    /// l_r² / rtt_r, draft-khalili-mptcp-congestion-control-05.
    L2PerRtt,
}

const PARAM_KEYS: &[&str] = &[KERNEL_ACK_COUNTING, "best_path_metric"];

/// Which OLIA (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// `olia`: mptcp_olia.c.
    Olia,
    /// `olia_sbd`, OLIA*: mptcp_oliasbdx.c.
    Sbd,
}

pub struct Olia {
    variant: Variant,
    cpl: CouplingSlot,
    kernel_ack_counting: bool,
    metric: BestPathMetric,
    /// snd_una at the second-last loss, the last loss, and now (mptcp_loss1..3), segments.
    loss1: u64,
    loss2: u64,
    loss3: u64,
    /// mptcp_snd_cwnd_cnt, in 2^-10 packet.
    cnt: i64,
}

impl Olia {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        Self::build_variant(config, Variant::Olia)
    }

    /// OLIA* (`olia_sbd`, MPTCP-SSCC's coupled algorithm).
    pub fn build_sbd(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        Self::build_variant(config, Variant::Sbd)
    }

    fn build_variant(
        config: &CcConfig,
        variant: Variant,
    ) -> Result<Box<dyn CongestionControl>, ParamError> {
        reject_unknown(config.params, PARAM_KEYS)?;
        let metric = match params::choice(
            config.params,
            "best_path_metric",
            "l_per_rtt2",
            &["l_per_rtt2", "l2_per_rtt"],
        )? {
            "l2_per_rtt" => BestPathMetric::L2PerRtt,
            _ => BestPathMetric::LPerRtt2,
        };
        Ok(Box::new(Olia {
            variant,
            cpl: config.coupling.clone().unwrap_or_else(CouplingSlot::alone),
            kernel_ack_counting: params::boolean(config.params, KERNEL_ACK_COUNTING, false)?,
            metric,
            loss1: 0,
            loss2: 0,
            loss3: 0,
            cnt: 0,
        }))
    }

    fn inter_loss_pkts(&self) -> u64 {
        (self.loss3 - self.loss2).max(self.loss2 - self.loss1)
    }

    fn publish(&self, tp: &TcpState) {
        let l = self.inter_loss_pkts();
        self.cpl.publish(tp, |s| s.olia_inter_loss_pkts = l);
    }
}

/// mptcp_get_crt_cwnd: ssthresh while in Recovery, else cwnd.
fn crt_cwnd(s: &SlotState) -> u32 {
    if s.in_recovery {
        s.ssthresh
    } else {
        s.cwnd
    }
}

/// The best-path metric of a slot as an exact fraction (numerator, denominator), with l in bytes
/// and rtt in µs.
fn metric_of(s: &SlotState, metric: BestPathMetric) -> (u128, u128) {
    let l = s.olia_inter_loss_pkts as u128 * s.mss as u128;
    let rtt = s.srtt_us as u128;
    match metric {
        BestPathMetric::LPerRtt2 => (l, rtt * rtt),
        BestPathMetric::L2PerRtt => (l * l, rtt),
    }
}

/// a/b compared with c/d (b, d > 0).
fn cmp_frac((a, b): (u128, u128), (c, d): (u128, u128)) -> std::cmp::Ordering {
    (a * d).cmp(&(c * b))
}

/// OLIA's α_r for `me` (0 when `me` does not count or is alone).
pub fn alpha(slots: &[SlotState], me: usize, metric: BestPathMetric) -> f64 {
    if !slots[me].counts() {
        return 0.0;
    }
    let mut n = 0u32;
    let mut max_w = 0u32;
    let mut best = (0u128, 1u128);
    for (_, s) in members(slots, me) {
        n += 1;
        max_w = max_w.max(crt_cwnd(s));
        let m = metric_of(s, metric);
        if cmp_frac(m, best).is_ge() {
            best = m;
        }
    }
    if n <= 1 {
        return 0.0;
    }
    let in_b = |s: &SlotState| cmp_frac(metric_of(s, metric), best).is_eq();
    let in_m = |s: &SlotState| crt_cwnd(s) == max_w;
    let size_m = members(slots, me).filter(|(_, s)| in_m(s)).count() as f64;
    let size_b_not_m = members(slots, me)
        .filter(|(_, s)| in_b(s) && !in_m(s))
        .count() as f64;
    let r = &slots[me];
    if size_b_not_m == 0.0 {
        0.0
    } else if in_b(r) && !in_m(r) {
        1.0 / (n as f64 * size_b_not_m)
    } else if in_m(r) {
        -1.0 / (n as f64 * size_m)
    } else {
        0.0
    }
}

/// OLIA's increase of `me`'s window per packet acked, in packets:
/// `(w_r/rtt_r²)/(Σ_p w_p/rtt_p)² + α_r/w_r`. For `me` alone: `1/w_r`.
pub fn increase_per_packet(slots: &[SlotState], me: usize, metric: BestPathMetric) -> f64 {
    let r = &slots[me];
    let w_r = r.cwnd.max(1) as f64;
    if !r.counts() {
        return 1.0 / w_r;
    }
    // Σ_p w_p · rtt_r / rtt_p (mptcp_get_rate, dimensionless): then the first term is w_r / sum².
    let rtt_r = r.srtt_us as f64;
    let sum: f64 = members(slots, me)
        .map(|(_, s)| crt_cwnd(s) as f64 * rtt_r / s.srtt_us as f64)
        .sum();
    w_r / (sum * sum) + alpha(slots, me, metric) / w_r
}

impl CongestionControl for Olia {
    fn name(&self) -> &'static str {
        match self.variant {
            Variant::Olia => "olia",
            Variant::Sbd => "olia_sbd",
        }
    }

    /// mptcp_olia_init.
    fn init(&mut self, tp: &mut TcpState) {
        self.loss1 = tp.snd_una;
        self.loss2 = tp.snd_una;
        self.loss3 = tp.snd_una;
        self.cnt = 0;
        self.publish(tp);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.publish(tp);
        match self.variant {
            Variant::Olia => crate::cc::tcp_reno_ssthresh(tp),
            // mptcp_oliasbdx.c mptcp_olia_ssthresh: max(snd_cwnd >> 1, 1).
            Variant::Sbd => (tp.snd_cwnd >> 1).max(1),
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, _sample: &AckSample) {
        self.publish(tp);
    }

    /// mptcp_olia_set_state: a loss episode starts; shift the inter-loss snapshots.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if matches!(new_state, CaState::Loss | CaState::Recovery | CaState::Cwr) {
            let repeated_rto = new_state == CaState::Loss && tp.ca_state == CaState::Loss;
            if self.loss3 != self.loss2 && !repeated_rto {
                self.loss1 = self.loss2;
                self.loss2 = self.loss3;
            }
        }
        self.publish(tp);
    }

    /// mptcp_olia_cong_avoid.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        self.loss3 = tp.snd_una;
        let l = self.inter_loss_pkts();
        let metric = self.metric;
        let (alone, inc) = self.cpl.publish_and(
            tp,
            |s| s.olia_inter_loss_pkts = l,
            |slots, me| {
                (
                    super::group_size(slots, me) <= 1 || !slots[me].counts(),
                    increase_per_packet(slots, me, metric),
                )
            },
        );
        if !tp.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if tp.in_slow_start() {
            acked = tp.slow_start(acked);
            // The kernel drops the leftover when coupled; Reno (a lone subflow) keeps it, except
            // in OLIA*, whose slow start returns before the lone test (mptcp_oliasbdx.c).
            if acked == 0 || !alone || self.variant == Variant::Sbd {
                self.publish(tp);
                return;
            }
        }
        let units = if self.kernel_ack_counting { 1 } else { acked };
        if alone {
            reno_ai(tp, units);
            self.publish(tp);
            return;
        }
        // Truncated toward zero, as the kernel's division of magnitudes.
        self.cnt += (inc * (1u64 << OLIA_SCALE) as f64 * units as f64).trunc() as i64;
        if self.cnt >= OLIA_CNT_THRESHOLD {
            let steps = 1 + (self.cnt - OLIA_CNT_THRESHOLD) as u64 / (1 << OLIA_SCALE);
            tp.snd_cwnd = (tp.snd_cwnd as u64 + steps).min(tp.snd_cwnd_clamp as u64) as u32;
            self.cnt = 0;
        } else if self.cnt <= -OLIA_CNT_THRESHOLD {
            let steps = 1 + (-self.cnt - OLIA_CNT_THRESHOLD) as u64 / (1 << OLIA_SCALE);
            tp.snd_cwnd = (tp.snd_cwnd as i64 - steps as i64).max(1) as u32;
            self.cnt = 0;
        }
        self.publish(tp);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::slot;
    use super::super::CouplingHandle;
    use super::*;

    fn with_l(mut s: SlotState, l: u64) -> SlotState {
        s.olia_inter_loss_pkts = l;
        s
    }

    const K: BestPathMetric = BestPathMetric::LPerRtt2;
    const D: BestPathMetric = BestPathMetric::L2PerRtt;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn two_paths_move_window_from_the_largest_to_the_best() {
        // Path 0: w 10, rtt 100 ms, l 1000; path 1: w 20, rtt 50 ms, l 100.
        // M = {1} (largest window). l/rtt²: 1000/0.01 = 1e5 > 100/0.0025 = 4e4, so B = {0};
        // (l²/rtt: 1e7 > 2e5, the same). B∖M = {0}, |R| = 2.
        // α_0 = 1/(2·1) = 0.5, α_1 = −1/(2·1) = −0.5.
        // Σ w/rtt = 100 + 400 = 500 /s, squared 250000.
        // inc_0 = (10/0.01)/250000 + 0.5/10 = 0.004 + 0.05 = 0.054.
        // inc_1 = (20/0.0025)/250000 − 0.5/20 = 0.032 − 0.025 = 0.007.
        let slots = [
            with_l(slot(10, 100_000), 1000),
            with_l(slot(20, 50_000), 100),
        ];
        for m in [K, D] {
            assert!(close(alpha(&slots, 0, m), 0.5));
            assert!(close(alpha(&slots, 1, m), -0.5));
            assert!(close(increase_per_packet(&slots, 0, m), 0.054));
            assert!(close(increase_per_packet(&slots, 1, m), 0.007));
        }
    }

    #[test]
    fn three_paths_with_ties_and_a_bystander() {
        // Equal rtt 50 ms; w = (20, 20, 10); l = (100, 100, 400).
        // M = {0, 1}, B = {2}, B∖M = {2}, |R| = 3: α_2 = 1/3, α_0 = α_1 = −1/(3·2) = −1/6.
        // Σ w/rtt = 50/0.05 = 1000, squared 1e6.
        // inc_0 = (20/0.0025)/1e6 − (1/6)/20 = 0.008 − 1/120; inc_2 = (10/0.0025)/1e6 + (1/3)/10.
        let slots = [
            with_l(slot(20, 50_000), 100),
            with_l(slot(20, 50_000), 100),
            with_l(slot(10, 50_000), 400),
        ];
        assert!(close(alpha(&slots, 2, K), 1.0 / 3.0));
        assert!(close(alpha(&slots, 0, K), -1.0 / 6.0));
        assert!(close(alpha(&slots, 1, K), -1.0 / 6.0));
        assert!(close(
            increase_per_packet(&slots, 0, K),
            0.008 - 1.0 / 120.0
        ));
        assert!(close(increase_per_packet(&slots, 2, K), 0.004 + 1.0 / 30.0));
        // w = (30, 10, 10), l = (10, 500, 100): M = {0}, B = {1}; path 2 is in neither: α_2 = 0.
        let slots = [
            with_l(slot(30, 50_000), 10),
            with_l(slot(10, 50_000), 500),
            with_l(slot(10, 50_000), 100),
        ];
        assert!(close(alpha(&slots, 0, K), -1.0 / 3.0));
        assert!(close(alpha(&slots, 1, K), 1.0 / 3.0));
        assert!(close(alpha(&slots, 2, K), 0.0));
        // Σ w/rtt = 50/0.05 = 1000: inc_2 = (10/0.0025)/1e6 = 0.004, the Kelly–Voice term only.
        assert!(close(increase_per_packet(&slots, 2, K), 0.004));
    }

    #[test]
    fn best_path_in_m_means_no_transfer_and_the_metrics_differ() {
        // Path 0: w 30, rtt 10 ms, l 100; path 1: w 10, rtt 40 ms, l 300.
        // l/rtt²: 100/1e-4 = 1e6 > 300/0.0016 = 187500 → B = {0} = M: B∖M = ∅, all α = 0.
        // l²/rtt: 1e4/0.01 = 1e6 < 9e4/0.04 = 2.25e6 → B = {1}, B∖M = {1}: α_1 = 1/2, α_0 = −1/2.
        let slots = [with_l(slot(30, 10_000), 100), with_l(slot(10, 40_000), 300)];
        assert!(close(alpha(&slots, 0, K), 0.0));
        assert!(close(alpha(&slots, 1, K), 0.0));
        assert!(close(alpha(&slots, 0, D), -0.5));
        assert!(close(alpha(&slots, 1, D), 0.5));
    }

    #[test]
    fn a_path_in_recovery_counts_with_its_ssthresh() {
        // Path 1 is in Recovery with cwnd 40 (inflated) and ssthresh 5: its window is 5, so the
        // largest window is path 0's (10): M = {0}; l: path 1 best → α_1 = 1/2, α_0 = −1/2.
        let mut p1 = with_l(slot(40, 50_000), 1000);
        p1.in_recovery = true;
        p1.ssthresh = 5;
        let slots = [with_l(slot(10, 50_000), 10), p1];
        assert!(close(alpha(&slots, 0, K), -0.5));
        // Σ w·rtt_0/rtt_p = 10 + 5 = 15: inc_0 = 10/225 − 0.5/10.
        assert!(close(
            increase_per_packet(&slots, 0, K),
            10.0 / 225.0 - 0.05
        ));
    }

    fn pair(
        w0: u32,
        rtt0: u64,
        l0: u64,
        w1: u32,
        rtt1: u64,
        l1: u64,
    ) -> (CouplingHandle, Box<dyn CongestionControl>, TcpState) {
        let h = CouplingHandle::new();
        let (a, b) = (h.subflow(), h.subflow());
        b.publish(
            &TcpState {
                snd_cwnd: w1,
                snd_ssthresh: 2,
                srtt_us: rtt1,
                ..Default::default()
            },
            |s| s.olia_inter_loss_pkts = l1,
        );
        let p = toml::Table::new();
        let mut cc = Olia::build(&CcConfig::new(&p, 1).with_coupling(a)).unwrap();
        let mut tp = TcpState {
            snd_cwnd: w0,
            snd_ssthresh: 2,
            srtt_us: rtt0,
            is_cwnd_limited: true,
            ..Default::default()
        };
        cc.init(&mut tp);
        // l_0 = snd_una advances between losses: set it through two loss episodes.
        tp.snd_una = l0;
        cc.cong_avoid(&mut tp, 0); // loss3 = l0 (0 packets acked: no growth)
        cc.set_state(&mut tp, CaState::Recovery); // loss1 = 0, loss2 = l0
        tp.snd_cwnd = w0;
        (h, cc, tp)
    }

    #[test]
    fn counter_grows_and_shrinks_as_the_kernel_does() {
        // The two-path case above from path 0's side: inc_0 = 0.054 → trunc(0.054·1024) = 55 per
        // packet; 1023/55 = 18.6, so the 19th packet acked adds one packet.
        let (h, mut cc, mut tp) = pair(10, 100_000, 1000, 20, 50_000, 100);
        assert_eq!(h.slot(0).olia_inter_loss_pkts, 1000);
        for _ in 0..18 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 10);
        cc.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 11);

        // Path 0: w 40, rtt 200 ms (M); path 1: w 10, rtt 20 ms, much larger l (B).
        // α_0 = −1/2. Σ w/rtt = 200 + 500 = 700, squared 490000.
        // inc_0 = (40/0.04)/490000 − 0.5/40 = 0.00204082 − 0.0125 = −0.01045918;
        // ·1024 = −10.71 → −10 per packet: cwnd drops by one at the 103rd packet (−1030 ≤ −1023).
        let (_h, mut cc, mut tp) = pair(40, 200_000, 100, 10, 20_000, 5000);
        for _ in 0..102 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 40);
        cc.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 39);
    }

    #[test]
    fn inter_loss_distance_follows_snd_una_between_losses() {
        let h = CouplingHandle::new();
        let p = toml::Table::new();
        let mut cc = Olia::build(&CcConfig::new(&p, 1).with_coupling(h.subflow())).unwrap();
        let mut tp = TcpState {
            srtt_us: 10_000,
            ..Default::default()
        };
        cc.init(&mut tp);
        tp.snd_una = 100;
        cc.cong_avoid(&mut tp, 0);
        assert_eq!(h.slot(0).olia_inter_loss_pkts, 100); // since the start
        cc.set_state(&mut tp, CaState::Recovery); // loss at 100
        tp.ca_state = CaState::Recovery;
        tp.snd_una = 250;
        cc.cong_avoid(&mut tp, 0);
        assert_eq!(h.slot(0).olia_inter_loss_pkts, 150); // max(150 since, 100 between)
        tp.ca_state = CaState::Open;
        cc.set_state(&mut tp, CaState::Loss); // loss at 250
        tp.ca_state = CaState::Loss;
        cc.set_state(&mut tp, CaState::Loss); // a repeated RTO: no shift
        tp.snd_una = 260;
        cc.cong_avoid(&mut tp, 0);
        assert_eq!(h.slot(0).olia_inter_loss_pkts, 150); // max(10, 150)
    }

    #[test]
    fn lone_olia_is_reno() {
        let p = toml::Table::new();
        super::super::lia::tests::assert_same_as_reno(Olia::build(&CcConfig::new(&p, 1)).unwrap());
    }

    #[test]
    fn olia_star_halves_to_one_and_drops_the_slow_start_leftover_when_alone() {
        let p = toml::Table::new();
        let mut olia = Olia::build(&CcConfig::new(&p, 1)).unwrap();
        let mut star = Olia::build_sbd(&CcConfig::new(&p, 1)).unwrap();
        assert_eq!((olia.name(), star.name()), ("olia", "olia_sbd"));
        for (cwnd, reno, sbd) in [(3, 2, 1), (2, 2, 1), (1, 2, 1), (40, 20, 20)] {
            let tp = TcpState {
                snd_cwnd: cwnd,
                ..Default::default()
            };
            assert_eq!((olia.ssthresh(&tp), star.ssthresh(&tp)), (reno, sbd));
        }
        // Alone, cwnd 10, ssthresh 12, an ACK of 5 packets: slow start to 12 uses 2; Reno (olia)
        // counts the other 3 toward its next increase, OLIA* drops them.
        for (cc, cnt) in [(&mut olia, 3), (&mut star, 0)] {
            let mut tp = TcpState {
                snd_cwnd: 10,
                snd_ssthresh: 12,
                srtt_us: 40_000,
                is_cwnd_limited: true,
                ..Default::default()
            };
            cc.init(&mut tp);
            cc.cong_avoid(&mut tp, 5);
            assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (12, cnt), "{}", cc.name());
        }
    }

    /// OLIA* on a mixed connection: subflows 0 and 1 share a bottleneck (group 0, the two-path
    /// case above: inc_0 = 0.054, +1 at the 19th packet acked), subflow 2 is alone in group 9
    /// with a large window and a short RTT. Subflow 0 ignores it; subflow 2 is Reno (+1 after
    /// 100 packets at cwnd 100). Were subflow 2 in group 0, it would be in M and B (so α = 0)
    /// and dominate the sum: Σ w·rtt_0/rtt_p = 10 + 20·2 + 100·10 = 1050, inc_0 = 10/1050²
    /// ≈ 9e-6, 0 in the kernel's 2^-10 counter: no growth at all.
    #[test]
    fn olia_star_on_a_mixed_group_couples_only_its_group_and_a_lone_subflow_is_reno() {
        let p = toml::Table::new();
        for grouped_apart in [true, false] {
            let h = CouplingHandle::new();
            let (a, b, c) = (h.subflow(), h.subflow(), h.subflow());
            let other = |cwnd, srtt_us| TcpState {
                snd_cwnd: cwnd,
                snd_ssthresh: 2,
                srtt_us,
                is_cwnd_limited: true,
                ..Default::default()
            };
            b.publish(&other(20, 50_000), |s| s.olia_inter_loss_pkts = 100);
            c.publish(&other(100, 10_000), |s| s.olia_inter_loss_pkts = 100_000);
            if grouped_apart {
                h.set_group(2, 9);
            }
            let mut cc0 = Olia::build_sbd(&CcConfig::new(&p, 1).with_coupling(a)).unwrap();
            let mut tp0 = other(10, 100_000);
            cc0.init(&mut tp0);
            tp0.snd_una = 1000;
            cc0.cong_avoid(&mut tp0, 0);
            cc0.set_state(&mut tp0, CaState::Recovery); // l_0 = 1000
            for _ in 0..19 {
                cc0.cong_avoid(&mut tp0, 1);
            }
            assert_eq!(tp0.snd_cwnd, if grouped_apart { 11 } else { 10 });
            if grouped_apart {
                let mut cc2 = Olia::build_sbd(&CcConfig::new(&p, 1).with_coupling(c)).unwrap();
                let mut tp2 = other(100, 10_000);
                cc2.init(&mut tp2);
                for _ in 0..99 {
                    cc2.cong_avoid(&mut tp2, 1);
                }
                assert_eq!(tp2.snd_cwnd, 100);
                cc2.cong_avoid(&mut tp2, 1);
                assert_eq!(tp2.snd_cwnd, 101);
            }
        }
    }

    #[test]
    fn sscc_builds_olia_star_and_both_are_coupled() {
        let p = toml::Table::new();
        for name in ["olia_sbd", "sscc"] {
            let cc = crate::cc::build(name, &CcConfig::new(&p, 1))
                .unwrap()
                .unwrap();
            assert_eq!(cc.name(), "olia_sbd");
            assert!(super::super::is_coupled(name));
        }
    }

    #[test]
    fn bad_metric_is_rejected_with_the_accepted_values() {
        let mut p = toml::Table::new();
        p.insert(
            "best_path_metric".into(),
            toml::Value::String("fastest".into()),
        );
        let e = Olia::build(&CcConfig::new(&p, 1)).err().unwrap();
        assert_eq!(e.key, "best_path_metric");
        assert!(
            e.message.contains("\"l_per_rtt2\", \"l2_per_rtt\""),
            "{}",
            e.message
        );
    }
}
