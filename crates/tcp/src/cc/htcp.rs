//! H-TCP (Shorten & Leith, PFLDnet 2004), as Linux 6.18 `net/ipv4/tcp_htcp.c`.
//!
//! # The algorithm
//!
//! H-TCP makes the additive increase a function of the time Δ since the last congestion event:
//! for the first Δ_L = 1 s after a backoff it behaves like Reno, then it speeds up
//! quadratically, so a flow on a large-BDP path regains its window in seconds rather than
//! minutes, while flows that see frequent losses stay Reno-like:
//!
//! ```text
//!     α(Δ) = 1                                    Δ ≤ Δ_L
//!     α(Δ) = 1 + 10·(Δ − Δ_L) + ((Δ − Δ_L)/2)²    Δ > Δ_L          (Δ in seconds)
//! ```
//!
//! The backoff factor β adapts to the path: `β = RTT_min / RTT_max` clamped to [0.5, 0.8]
//! (a flow whose RTT hardly grows before a loss has a small buffer to drain and backs off less),
//! unless the achieved throughput changed by more than 20 % between the last two congestion
//! events (`use_bandwidth_switch`), when it falls back to β = 0.5 to converge fairly. The
//! increase is scaled by `2·(1 − β)` to stay fair against Reno, and, with `use_rtt_scaling`, by
//! `RTT_min / 100 ms` (clamped to [0.5, 10]) so flows with different RTTs grow alike.
//!
//! The kernel keeps α and β in fixed point `<< 7` (`ALPHA_BASE` = 128 is 1.0, `BETA_MIN` = 64
//! is 0.5, `BETA_MAX` = 102 is 0.8), times in jiffies (`tcp_jiffies32`, at the kernel profile's
//! HZ = 250: 4 ms a jiffy, so Δ_L = HZ = 250 jiffies and RTTs are rounded up to 4 ms steps), and
//! the achieved throughput `Bi` in packets per second.
//!
//! # Hooks
//!
//! | tcp_congestion_ops | here | what |
//! |---|---|---|
//! | `init` (htcp_init) | `init` | α = 1, β = 0.5, last congestion = now |
//! | `ssthresh` (htcp_recalc_ssthresh) | `ssthresh` | update β and α, fade maxRTT, `cwnd·β` |
//! | `cong_avoid` (htcp_cong_avoid) | `cong_avoid` | slow start; else `cwnd += α/cwnd` per ACK |
//! | `set_state` (htcp_state) | `set_state` | CWR/Recovery/Loss: a congestion event now |
//! | `undo_cwnd` (htcp_cwnd_undo) | `undo_cwnd` | restore the last event's time, maxRTT, maxB |
//! | `pkts_acked` (measure_achieved_throughput) | `pkts_acked` | min/max RTT, throughput |
//!
//! # Where this differs from tcp_htcp.c
//!
//! - The jiffy clock is derived from `tp.now` (`crate::kernel::jiffies_at`, with Linux's
//!   INITIAL_JIFFIES); HZ is a parameter (`hz`, default the profile's 250) as for CUBIC.
//! - The kernel's u8/u16 fields (`beta`, `pkts_acked`) are kept at their widths; u32 arithmetic
//!   wraps as in the kernel (e.g. `snd_cwnd − α` in the throughput test).
//! - Otherwise none: every formula and order of updates is the kernel's.

use super::{params, reject_unknown, CcConfig, CongestionControl, ParamError};
use crate::kernel;
use crate::state::{AckSample, CaState, TcpState};

/// ALPHA_BASE, tcp_htcp.c: 1.0 << 7.
const ALPHA_BASE: u32 = 1 << 7;
/// BETA_MIN, tcp_htcp.c: 0.5 << 7.
const BETA_MIN: u32 = 1 << 6;
/// BETA_MAX, tcp_htcp.c: 0.8 << 7 (102/128 = 0.797).
const BETA_MAX: u32 = 102;
/// measure_rtt, tcp_htcp.c: maxRTT follows only samples within 20 ms above it.
const MAX_RTT_STEP_MS: u32 = 20;
/// htcp_beta_update, tcp_htcp.c: β adapts only when minRTT exceeds 10 ms.
const BETA_ADAPT_MIN_RTT_MS: u32 = 10;
/// htcp_param_update, tcp_htcp.c: maxRTT fades to minRTT + 95 % of the excess per event.
const MAX_RTT_FADE_PERCENT: u32 = 95;
/// measure_achieved_throughput, tcp_htcp.c: throughput right after a backoff (within 3 minRTTs)
/// restarts the estimate.
const BACKOFF_CCOUNT: u32 = 3;

/// Tunables: the module parameters of tcp_htcp.c.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HtcpParams {
    /// tcp_htcp.c: use_rtt_scaling = 1.
    pub use_rtt_scaling: bool,
    /// tcp_htcp.c: use_bandwidth_switch = 1.
    pub use_bandwidth_switch: bool,
    /// CONFIG_HZ of the kernel modelled ([`kernel::HZ`], 250).
    pub hz: u32,
}

impl Default for HtcpParams {
    fn default() -> Self {
        HtcpParams {
            use_rtt_scaling: true,
            use_bandwidth_switch: true,
            hz: kernel::HZ,
        }
    }
}

const PARAM_KEYS: &[&str] = &["use_rtt_scaling", "use_bandwidth_switch", "hz"];

impl HtcpParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = HtcpParams::default();
        let hz = params::integer(
            t,
            "hz",
            d.hz,
            100,
            1000,
            "a CONFIG_HZ value: 100, 250, 300 or 1000",
        )?;
        if !kernel::HZ_CHOICES.contains(&hz) {
            return Err(ParamError {
                key: "hz".into(),
                message: format!("{hz} is not a CONFIG_HZ value; accepted: 100, 250, 300, 1000"),
            });
        }
        Ok(HtcpParams {
            use_rtt_scaling: params::boolean(t, "use_rtt_scaling", d.use_rtt_scaling)?,
            use_bandwidth_switch: params::boolean(
                t,
                "use_bandwidth_switch",
                d.use_bandwidth_switch,
            )?,
            hz,
        })
    }
}

/// struct htcp, tcp_htcp.c. Times and RTTs in jiffies.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    /// α << 7.
    alpha: u32,
    /// β << 7 (u8 in the kernel).
    beta: u8,
    /// Whether β may adapt (set after the first congestion event).
    modeswitch: bool,
    /// Packets acked by the last ACK in Open (u16 in the kernel).
    pkts_acked: u16,
    packetcount: u32,
    min_rtt: u32,
    max_rtt: u32,
    /// Time of the last congestion event.
    last_cong: u32,
    undo_last_cong: u32,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    /// Achieved throughput (packets per second): min, max, max at the previous event, current.
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    lasttime: u32,
}

pub struct Htcp {
    p: HtcpParams,
    ca: State,
}

/// `between(seq1, seq2, seq3)`, include/net/tcp.h: seq2 ≤ seq1 ≤ seq3 in wrapping u32.
fn between(seq1: u32, seq2: u32, seq3: u32) -> bool {
    seq3.wrapping_sub(seq2) >= seq1.wrapping_sub(seq2)
}

impl Htcp {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        Ok(Box::new(Htcp::new(HtcpParams::from_table(config.params)?)))
    }

    pub fn new(p: HtcpParams) -> Self {
        Htcp {
            p,
            ca: State {
                alpha: ALPHA_BASE,
                beta: BETA_MIN as u8,
                pkts_acked: 1,
                ..Default::default()
            },
        }
    }

    fn jiffies(&self, now_ns: u64) -> u32 {
        kernel::jiffies_at(now_ns, self.p.hz)
    }

    /// htcp_cong_time: jiffies since the last congestion event.
    fn cong_time(&self, now_j: u32) -> u32 {
        now_j.wrapping_sub(self.ca.last_cong)
    }

    /// htcp_ccount: minimum RTTs since the last congestion event.
    fn ccount(&self, now_j: u32) -> u32 {
        self.cong_time(now_j) / self.ca.min_rtt
    }

    /// htcp_reset: a congestion event now (remembering the previous one for undo).
    fn reset(&mut self, now_j: u32) {
        let ca = &mut self.ca;
        ca.undo_last_cong = ca.last_cong;
        ca.undo_max_rtt = ca.max_rtt;
        ca.undo_old_max_b = ca.old_max_b;
        ca.last_cong = now_j;
    }

    /// measure_rtt: minRTT ever, maxRTT (in Open, following samples at most 20 ms above it).
    fn measure_rtt(&mut self, srtt: u32, state: CaState) {
        let step = kernel::msecs_to_jiffies_at(MAX_RTT_STEP_MS, self.p.hz);
        let ca = &mut self.ca;
        if ca.min_rtt > srtt || ca.min_rtt == 0 {
            ca.min_rtt = srtt;
        }
        if state == CaState::Open {
            if ca.max_rtt < ca.min_rtt {
                ca.max_rtt = ca.min_rtt;
            }
            if ca.max_rtt < srtt && srtt <= ca.max_rtt.wrapping_add(step) {
                ca.max_rtt = srtt;
            }
        }
    }

    /// htcp_beta_update: β = minRTT/maxRTT in [0.5, 0.8], or 0.5 when the throughput at this
    /// event differs by more than 20 % from the last one (bandwidth switch).
    fn beta_update(&mut self, min_rtt: u32, max_rtt: u32) {
        let ten_ms = kernel::msecs_to_jiffies_at(BETA_ADAPT_MIN_RTT_MS, self.p.hz);
        let ca = &mut self.ca;
        if self.p.use_bandwidth_switch {
            let max_b = ca.max_b;
            let old_max_b = ca.old_max_b;
            ca.old_max_b = ca.max_b;
            if !between(
                max_b.wrapping_mul(5),
                old_max_b.wrapping_mul(4),
                old_max_b.wrapping_mul(6),
            ) {
                ca.beta = BETA_MIN as u8;
                ca.modeswitch = false;
                return;
            }
        }
        if ca.modeswitch && min_rtt > ten_ms && max_rtt != 0 {
            let beta = (min_rtt << 7) / max_rtt;
            ca.beta = beta.clamp(BETA_MIN, BETA_MAX) as u8;
        } else {
            ca.beta = BETA_MIN as u8;
            ca.modeswitch = true;
        }
    }

    /// htcp_alpha_update: α(Δ) from the time since the last event, RTT-scaled, times 2(1 − β).
    fn alpha_update(&mut self, now_j: u32) {
        let hz = self.p.hz;
        let min_rtt = self.ca.min_rtt;
        let mut factor: u32 = 1;
        let mut diff = self.cong_time(now_j);
        if diff > hz {
            diff -= hz;
            // 1 + 10·Δ' + (Δ'/2)², Δ' = Δ − Δ_L in seconds (jiffies / HZ).
            let half = diff / 2;
            factor = 1 + diff
                .wrapping_mul(10)
                .wrapping_add(half.wrapping_mul(half) / hz)
                / hz;
        }
        if self.p.use_rtt_scaling && min_rtt != 0 {
            // scale = 100 ms / minRTT, << 3, clamped to [0.5, 10].
            let scale = ((hz << 3) / (10 * min_rtt)).clamp(1 << 2, 10 << 3);
            factor = (factor << 3) / scale;
            if factor == 0 {
                factor = 1;
            }
        }
        self.ca.alpha = 2u32
            .wrapping_mul(factor)
            .wrapping_mul((1 << 7) - self.ca.beta as u32);
        if self.ca.alpha == 0 {
            self.ca.alpha = ALPHA_BASE;
        }
    }

    /// htcp_param_update: at a congestion event, β then α, and fade maxRTT toward minRTT.
    fn param_update(&mut self, now_j: u32) {
        let (min_rtt, max_rtt) = (self.ca.min_rtt, self.ca.max_rtt);
        self.beta_update(min_rtt, max_rtt);
        self.alpha_update(now_j);
        if min_rtt > 0 && max_rtt > min_rtt {
            self.ca.max_rtt = min_rtt + (max_rtt - min_rtt) * MAX_RTT_FADE_PERCENT / 100;
        }
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    /// htcp_init.
    fn init(&mut self, tp: &mut TcpState) {
        self.ca = State {
            alpha: ALPHA_BASE,
            beta: BETA_MIN as u8,
            pkts_acked: 1,
            last_cong: self.jiffies(tp.now),
            ..Default::default()
        };
    }

    /// htcp_recalc_ssthresh.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.param_update(self.jiffies(tp.now));
        (tp.snd_cwnd.wrapping_mul(self.ca.beta as u32) >> 7).max(2)
    }

    /// htcp_cong_avoid: cwnd += α/cwnd per ACK (α counted in the ACK's packets, Open only).
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            tp.slow_start(acked);
            return;
        }
        if (tp.snd_cwnd_cnt.wrapping_mul(self.ca.alpha) >> 7) >= tp.snd_cwnd {
            if tp.snd_cwnd < tp.snd_cwnd_clamp {
                tp.snd_cwnd += 1;
            }
            tp.snd_cwnd_cnt = 0;
            self.alpha_update(self.jiffies(tp.now));
        } else {
            tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.wrapping_add(self.ca.pkts_acked as u32);
        }
        self.ca.pkts_acked = 1;
    }

    /// htcp_state.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        let now_j = self.jiffies(tp.now);
        match new_state {
            CaState::Open => {
                if self.ca.undo_last_cong != 0 {
                    self.ca.last_cong = now_j;
                    self.ca.undo_last_cong = 0;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now_j),
            CaState::Disorder => {}
        }
    }

    /// htcp_cwnd_undo: the congestion event was spurious.
    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        let ca = &mut self.ca;
        if ca.undo_last_cong != 0 {
            ca.last_cong = ca.undo_last_cong;
            ca.max_rtt = ca.undo_max_rtt;
            ca.old_max_b = ca.undo_old_max_b;
            ca.undo_last_cong = 0;
        }
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    /// measure_achieved_throughput.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let now = self.jiffies(tp.now);
        if tp.ca_state == CaState::Open {
            self.ca.pkts_acked = sample.pkts_acked as u16;
        }
        if sample.rtt_us > 0 {
            let rtt_us = sample.rtt_us.min(u32::MAX as i64) as u32;
            let j = kernel::usecs_to_jiffies_at(rtt_us, self.p.hz) as u32;
            self.measure_rtt(j, tp.ca_state);
        }
        if !self.p.use_bandwidth_switch {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            self.ca.packetcount = 0;
            self.ca.lasttime = now;
            return;
        }
        self.ca.packetcount = self.ca.packetcount.wrapping_add(sample.pkts_acked);
        let alpha_pkts = match self.ca.alpha >> 7 {
            0 => 1,
            a => a,
        };
        let elapsed = now.wrapping_sub(self.ca.lasttime);
        if self.ca.packetcount >= tp.snd_cwnd.wrapping_sub(alpha_pkts)
            && elapsed >= self.ca.min_rtt
            && self.ca.min_rtt > 0
        {
            let cur_bi = self.ca.packetcount.wrapping_mul(self.p.hz) / elapsed;
            if self.ccount(now) <= BACKOFF_CCOUNT {
                // Just after a backoff.
                self.ca.min_b = cur_bi;
                self.ca.max_b = cur_bi;
                self.ca.bi = cur_bi;
            } else {
                let ca = &mut self.ca;
                ca.bi = (3 * ca.bi + cur_bi) / 4;
                if ca.bi > ca.max_b {
                    ca.max_b = ca.bi;
                }
                if ca.min_b > ca.max_b {
                    ca.min_b = ca.max_b;
                }
            }
            self.ca.packetcount = 0;
            self.ca.lasttime = now;
        }
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        &["htcp_alpha", "htcp_beta"]
    }

    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = self.ca.alpha as f64 / 128.0;
        out[1] = self.ca.beta as f64 / 128.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    /// One jiffy at HZ = 250.
    const JIFFY: u64 = 4 * MS;

    fn htcp() -> Htcp {
        Htcp::new(HtcpParams::default())
    }

    /// α (<< 7) `delta_j` jiffies after the last congestion event, with minRTT `min_rtt_j`
    /// jiffies and β = 0.5.
    fn alpha_at(h: &mut Htcp, delta_j: u32, min_rtt_j: u32) -> u32 {
        h.ca.last_cong = 1000;
        h.ca.min_rtt = min_rtt_j;
        h.ca.beta = BETA_MIN as u8;
        h.alpha_update(1000 + delta_j);
        h.ca.alpha
    }

    #[test]
    #[allow(clippy::identity_op)]
    fn alpha_is_renos_below_delta_l_and_grows_quadratically_above() {
        let mut h = htcp();
        // minRTT = 25 jiffies = 100 ms: RTT scale = (250 << 3)/(10·25) = 8 (1.0), no scaling.
        // Δ = 0.8 s = 200 jiffies ≤ Δ_L = HZ: factor 1, α = 2·1·(128 − 64) = 128 (1.0).
        assert_eq!(alpha_at(&mut h, 200, 25), 2 * 1 * (128 - 64));
        // Δ = HZ exactly is still ≤ Δ_L.
        assert_eq!(alpha_at(&mut h, 250, 25), 128);
        // Δ = 3 s = 750 jiffies: Δ' = 500, factor = 1 + (10·500 + 250·250/250)/250
        //   = 1 + (5000 + 250)/250 = 1 + 21 = 22 (paper: 1 + 10·2 + (2/2)² = 22);
        // α = 2·22·64 = 2816 (22.0).
        assert_eq!(
            alpha_at(&mut h, 750, 25),
            2 * (1 + (10 * 500 + 250 * 250 / 250) / 250) * 64
        );
        assert_eq!(alpha_at(&mut h, 750, 25), 2816);
        // Δ = 1.5 s = 375 jiffies: Δ' = 125, factor = 1 + (1250 + 62·62/250)/250
        //   = 1 + (1250 + 15)/250 = 1 + 5 = 6; α = 2·6·64 = 768.
        assert_eq!(alpha_at(&mut h, 375, 25), 768);
    }

    #[test]
    #[allow(clippy::identity_op)]
    fn alpha_is_scaled_by_the_min_rtt_over_100ms() {
        let mut h = htcp();
        // minRTT = 50 jiffies (200 ms): scale = 2000/500 = 4 (0.5): factor 22 → (22 << 3)/4 = 44.
        assert_eq!(alpha_at(&mut h, 750, 50), 2 * ((22 << 3) / 4) * 64);
        // minRTT = 5 jiffies (20 ms): scale = 2000/50 = 40 (5.0): factor 22 → 176/40 = 4.
        assert_eq!(alpha_at(&mut h, 750, 5), 2 * (176 / 40) * 64);
        // minRTT = 1 jiffy: scale 200 clamped to 80 (10.0): factor 1 → 8/80 = 0 → 1.
        assert_eq!(alpha_at(&mut h, 0, 1), 2 * 1 * 64);
        // Without RTT scaling the factor is used as is.
        let mut h = Htcp::new(HtcpParams {
            use_rtt_scaling: false,
            ..Default::default()
        });
        assert_eq!(alpha_at(&mut h, 750, 50), 2816);
    }

    #[test]
    fn beta_is_min_over_max_rtt_clamped_after_the_first_event() {
        let mut h = Htcp::new(HtcpParams {
            use_bandwidth_switch: false,
            ..Default::default()
        });
        // First event: modeswitch is off: β = 0.5 and modeswitch turns on.
        h.beta_update(25, 30);
        assert_eq!((h.ca.beta, h.ca.modeswitch), (64, true));
        // minRTT 25, maxRTT 30 jiffies: β = (25 << 7)/30 = 3200/30 = 106 → clamped to 102.
        h.beta_update(25, 30);
        assert_eq!(h.ca.beta as u32, ((25u32 << 7) / 30).min(BETA_MAX));
        assert_eq!(h.ca.beta, 102);
        // minRTT 25, maxRTT 40: β = 3200/40 = 80 (0.625).
        h.beta_update(25, 40);
        assert_eq!(h.ca.beta, 80);
        // maxRTT 100: 3200/100 = 32 → clamped to 64 (0.5).
        h.beta_update(25, 100);
        assert_eq!(h.ca.beta, 64);
        // minRTT ≤ 10 ms (msecs_to_jiffies(10) = 3 jiffies): β = 0.5.
        h.beta_update(3, 4);
        assert_eq!(h.ca.beta, 64);
    }

    #[test]
    fn beta_falls_to_one_half_when_the_throughput_moved_more_than_20_percent() {
        let mut h = htcp();
        h.ca.modeswitch = true;
        // maxB 1000 after 1000: 5·1000 in [4000, 6000]: adaptive β = (25 << 7)/40 = 80.
        h.ca.old_max_b = 1000;
        h.ca.max_b = 1000;
        h.beta_update(25, 40);
        assert_eq!((h.ca.beta, h.ca.old_max_b), (80, 1000));
        // maxB 1250 after 1000: 6250 > 6000: switch to β = 0.5 and modeswitch off.
        h.ca.max_b = 1250;
        h.beta_update(25, 40);
        assert_eq!(
            (h.ca.beta, h.ca.modeswitch, h.ca.old_max_b),
            (64, false, 1250)
        );
        // maxB 1000 after 1250: 5000 ≥ 4·1250 = 5000: in range, but modeswitch was off: 0.5.
        h.ca.max_b = 1000;
        h.beta_update(25, 40);
        assert_eq!((h.ca.beta, h.ca.modeswitch), (64, true));
    }

    #[test]
    fn ssthresh_applies_beta_and_fades_max_rtt() {
        let mut h = htcp();
        let tp = TcpState {
            now: 10_000 * MS,
            snd_cwnd: 1000,
            ..Default::default()
        };
        h.init(&mut tp.clone());
        h.ca.modeswitch = true;
        h.ca.min_rtt = 25;
        h.ca.max_rtt = 40;
        // No throughput measured (maxB = oldmaxB = 0): between(0, 0, 0) holds: β = 80.
        // ssthresh = 1000·80 >> 7 = 625; maxRTT = 25 + 15·95/100 = 25 + 14 = 39.
        assert_eq!(h.ssthresh(&tp), (1000 * 80) >> 7);
        assert_eq!(h.ca.max_rtt, 25 + 15 * 95 / 100);
    }

    #[test]
    fn cong_avoid_adds_alpha_over_cwnd_per_ack() {
        let mut h = htcp();
        h.ca.alpha = 2816; // 22.0
        let mut tp = TcpState {
            snd_cwnd: 220,
            snd_ssthresh: 100,
            is_cwnd_limited: true,
            ..Default::default()
        };
        // cwnd grows once cnt·22 ≥ 220, i.e. after cnt reaches 10: 10 ACKs count, the 11th grows.
        for _ in 0..10 {
            h.cong_avoid(&mut tp, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (220, 10));
        h.cong_avoid(&mut tp, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (221, 0));
    }

    #[test]
    fn rtt_is_measured_in_jiffies_rounded_up() {
        let mut h = htcp();
        let mut tp = TcpState::default();
        h.init(&mut tp);
        let s = |us| AckSample {
            pkts_acked: 1,
            rtt_us: us,
            in_flight: 0,
        };
        // 100.001 ms → 26 jiffies (rounded up); then 110 ms = 28 (within 20 ms = 5 jiffies).
        h.pkts_acked(&mut tp, &s(100_001));
        h.pkts_acked(&mut tp, &s(110_000));
        assert_eq!((h.ca.min_rtt, h.ca.max_rtt), (26, 28));
        // 200 ms = 50 jiffies is more than 5 above maxRTT: ignored for maxRTT.
        h.pkts_acked(&mut tp, &s(200_000));
        assert_eq!(h.ca.max_rtt, 28);
        let _ = JIFFY;
    }

    #[test]
    fn set_state_marks_the_event_and_undo_restores_it() {
        let mut h = htcp();
        let mut tp = TcpState::default();
        h.init(&mut tp);
        let first = h.ca.last_cong;
        tp.now = 2_000 * MS;
        h.set_state(&mut tp, CaState::Recovery);
        assert_eq!(h.ca.last_cong, first.wrapping_add(500));
        assert_eq!(h.undo_cwnd(&tp), tp.snd_cwnd.max(tp.prior_cwnd));
        assert_eq!(h.ca.last_cong, first);
    }

    #[test]
    fn parameters_are_read_and_validated() {
        let t: toml::Table = "use_rtt_scaling = false\nhz = 1000".parse().unwrap();
        let p = HtcpParams::from_table(&t).unwrap();
        assert_eq!(
            (p.use_rtt_scaling, p.use_bandwidth_switch, p.hz),
            (false, true, 1000)
        );
        let t: toml::Table = "hz = 200".parse().unwrap();
        assert_eq!(HtcpParams::from_table(&t).unwrap_err().key, "hz");
        let t: toml::Table = "alpha = 1".parse().unwrap();
        assert_eq!(HtcpParams::from_table(&t).unwrap_err().key, "alpha");
    }
}
