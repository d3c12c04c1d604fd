//! BBRv2+ (`cc = "bbr2plus"`): the thesis's delay-aware BBRv2 (seed 000, chapter 4, §4.4;
//! research summary §3.4), as pieces switched on in the BBRv2 state machine of [`super`].
//! "bbr2" is the same machine with every piece off.
//!
//! ```text
//!  PROBE_BW (BBRv2+ ProbeBW; pacing gain in brackets; transitions at round ends unless noted)
//!
//!   DOWN [0.75] / DOWN_SLIGHTLY [0.90] --inflight <= min(BDP, headroom'd inflight_hi)--> CRUISE [1.0]
//!      ^  entering picks the probe wait: 8 + U[0,4) rounds, counted in CRUISE only      |
//!      |                                                                                | wait over (rounds,
//!      |   Algorithm 1 in CRUISE and DOWN*: round min RTT > theta*RTprop -> expire BtlBW | or BBRv2's 2-3 s /
//!      |   Algorithm 2 when CRUISE ends: dual mode (may restart from STARTUP)            v  Reno bound)
//!      +--- fail: GUARD's RTT > gamma * PRE_UP's --- GUARD [1.0] <-- PRE_UP [1.10] <-- REFILL [1.0]
//!      |                                               | pass
//!      +--- POST_UP's min RTT > gamma * before-probe - UP [1.25] <--+   (loss too high: DOWN)
//!                         POST_UP [1.0] <--(>= min_rtt and 1.25 BDP in flight)
//!                               +--- else (continuous probing) ----+
//! ```
//!
//! Algorithm 3 (BDP compensation) acts on the cwnd target in every state.
//!
//! | key | thesis | code | meaning |
//! |---|---|---|---|
//! | `variant` | `"thesis"` | `"code"` | which column below supplies the defaults; any key overrides it |
//! | `loss_thresh` | 0.2 | 0.2 | α, 20 % in all BBRv2+ experiments (Table 4.2) |
//! | `probe_try` | true | true | ProbeTry: PRE_UP 1.10 and GUARD 1.0 for a round each, then UP or DOWN_SLIGHTLY 0.90 |
//! | `gamma` | 1.02 | 1.02 | γ, ProbeTry's and continuous probing's RTT tolerance |
//! | `rtt_margin` | `"multiplicative"` | `"additive"` | `rtt <= gamma * ref`, or `rtt <= ref + min((gamma - 1) * ref, rtt_margin_cap_ms)`; also picks Algorithm 2's threshold form |
//! | `rtt_margin_cap_ms` | 2 | 2 | the additive margin's cap (code: fast_conv_rtt_error_us) |
//! | `round_rtt` | `"min"` | `"srtt"` | ProbeTry compares per-round min RTTs, or per-round EWMA srtt (1/8 gain) |
//! | `continuous_probing` | true | true | after UP, one round of POST_UP (1.0); UP again if its min RTT is within the margin of the one before UP |
//! | `probe_interval_rounds` | 8 | 8 | rounds of CRUISE between probes, plus U[0, `probe_interval_rand_rounds`); 0 = BBRv2's interval |
//! | `probe_interval_rand_rounds` | 4 | 4 | |
//! | `expire_btlbw` | true | true | Algorithm 1 |
//! | `theta` | 1.1 | 1.1 | θ (Table 4.2 recommends 1.05 to 1.15) |
//! | `theta_rtprop` | `"min_rtt"` | `"recent_min"` | Algorithm 1's RTprop: BBRv2's min_rtt filter, or the min of the 4 previous rounds' min RTTs |
//! | `probe_end_bw_advance` | true | false | BBRv2's advance of the bw_hi window at the end of each probe |
//! | `forced_bw_advance_rounds` | 0 | 25 | advance the bw_hi window after this many rounds without a sample at the max; 0 = never |
//! | `dual_mode` | true | true | Algorithm 2 |
//! | `lambda1`, `lambda2`, `eta1`, `eta2` | 1.1, 1.05, 2, 4 | same | Algorithm 2's thresholds and counts (Table 4.2) |
//! | `bdp_compensation` | true | true | Algorithm 3 |
//! | `mu` | 0.5 | 0.4 | μ |
//!
//! Where the thesis is silent, the choice is marked [GAP] at the code that makes it.

use super::{
    bad, bdp, factor_at_least_one, gain, integer, reject_unknown, AckPhase, Bbr2, Mode, ParamError,
    Params, Phase, BBR_SCALE, BBR_UNIT, PARAM_KEYS, PORT_PARAM_KEYS,
};
use crate::state::{RateSample, TcpState};

// ---------------------------------------------------------------------------------------------
// Constants (seed 000: Table 4.2 for the thesis, the research summary's [CODE] column for the
// authors' tcp_bbr2plus.c module parameters).

/// α: "20 % in all BBRv2+ experiments" (Table 4.2; the code sets BBRv2's loss_thresh to 51/256).
pub(super) const PLUS_LOSS_THRESH: u32 = BBR_UNIT * 20 / 100;
/// θ: Table 4.2 recommends [1.05, 1.15]; the code's fast_conv_rtt_thresh = 1.1 (281/256).
pub(super) const PLUS_THETA: u32 = BBR_UNIT * 110 / 100;
/// μ: 0.5 (Table 4.2; 128/256).
pub(super) const PLUS_MU: u32 = BBR_UNIT / 2;
/// μ in the code: rtt_comp_rtt_var_thresh = 0.4 (102/256).
const CODE_MU: u32 = BBR_UNIT * 40 / 100;
/// γ: 1.02 (Table 4.2; code fast_conv_preup_rtt_thresh = fast_conv_probe_again_thresh = 2/100).
pub(super) const PLUS_GAMMA: u32 = BBR_UNIT * 102 / 100;
/// The code's additive margin is capped at fast_conv_rtt_error_us = 2000 µs.
const RTT_MARGIN_CAP_MS: u32 = 2;
/// ProbeTry's first round paces at 1.10 (§4.4.2; code pacing-gain index 4, PRE_UP).
pub(super) const PLUS_PRE_UP_GAIN: u32 = BBR_UNIT * 110 / 100;
/// A failed ProbeTry drains at 0.90 (§4.4.2; code index 7, DOWN_SLIGHTLY).
pub(super) const PLUS_DOWN_SLIGHTLY_GAIN: u32 = BBR_UNIT * 90 / 100;
/// Max_4RTT(jitter) spans 4 rounds (Table 4.1; code rtt_comp_jitter_win_sz = 4).
pub(super) const JITTER_WIN_ROUNDS: usize = 4;
/// The code's "recent min RTT" for θ: running min of 4 rounds' min RTTs (rc_min_rtt_win_sz).
const RECENT_MIN_RTT_ROUNDS: usize = 4;
/// Probe interval "approximately BBR's 8 rounds" (§4.4.2); code fast_conv_probe_cycle_base = 8
/// plus prandom(fast_conv_probe_cycle_random = 4) rounds.
const PROBE_INTERVAL_ROUNDS: u32 = 8;
const PROBE_INTERVAL_RAND_ROUNDS: u32 = 4;
/// Code: fast_conv_rounds_to_advance_bw_filter = 25 rounds without a new max (not in the thesis).
const CODE_FORCED_BW_ADVANCE_ROUNDS: u32 = 25;
/// Algorithm 2: λ1 = 1.1, λ2 = 1.05, η1 = 2, η2 = 4 (§4.4.3, "in practice, we used").
const LAMBDA1: u32 = BBR_UNIT * 110 / 100;
const LAMBDA2: u32 = BBR_UNIT * 105 / 100;
const ETA1: u32 = 2;
const ETA2: u32 = 4;

// ---------------------------------------------------------------------------------------------
// Parameters

/// How an RTT is compared with a reference "plus a tolerance".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RttMargin {
    /// The thesis: `rtt <= factor * ref`.
    Multiplicative,
    /// The authors' code: `rtt <= ref + min((factor - 1) * ref, cap)`.
    Additive,
}

/// ProbeTry's per-round RTT statistic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RoundRtt {
    /// The round's min RTT (the thesis; the code's copa_style = 1).
    Min,
    /// An EWMA of the round's RTT samples with gain 1/8, restarted each round (the code's default).
    Srtt,
}

/// The RTprop Algorithm 1 multiplies by θ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ThetaRef {
    /// BBRv2's min_rtt filter ("conn.RTprop", the thesis).
    MinRtt,
    /// Min of the previous 4 rounds' min RTTs (the code's rc_min_rtt).
    RecentMin,
}

/// The BBRv2+ pieces. [`Plus::off`] for "bbr2"; [`Plus::thesis`] and [`Plus::code`] for
/// "bbr2plus".
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Plus {
    pub probe_try: bool,
    /// γ in 1/256 units.
    pub gamma: u32,
    pub rtt_margin: RttMargin,
    pub rtt_margin_cap_us: u32,
    pub round_rtt: RoundRtt,
    pub continuous_probing: bool,
    /// 0: BBRv2's probe timing only.
    pub probe_interval_rounds: u32,
    pub probe_interval_rand_rounds: u32,
    pub expire_btlbw: bool,
    /// θ in 1/256 units.
    pub theta: u32,
    pub theta_rtprop: ThetaRef,
    pub probe_end_bw_advance: bool,
    /// 0: never.
    pub forced_bw_advance_rounds: u32,
    pub dual_mode: bool,
    /// λ1, λ2 in 1/256 units.
    pub lambda1: u32,
    pub lambda2: u32,
    pub eta1: u32,
    pub eta2: u32,
    pub bdp_compensation: bool,
    /// μ in 1/256 units.
    pub mu: u32,
}

impl Default for Plus {
    fn default() -> Self {
        Plus::off()
    }
}

impl Plus {
    /// Every piece off: BBRv2.
    pub fn off() -> Self {
        Plus {
            probe_try: false,
            continuous_probing: false,
            probe_interval_rounds: 0,
            expire_btlbw: false,
            probe_end_bw_advance: true,
            forced_bw_advance_rounds: 0,
            dual_mode: false,
            bdp_compensation: false,
            ..Plus::thesis()
        }
    }

    /// BBRv2+ as the thesis describes it (Table 4.2 and §4.4).
    pub fn thesis() -> Self {
        Plus {
            probe_try: true,
            gamma: PLUS_GAMMA,
            rtt_margin: RttMargin::Multiplicative,
            rtt_margin_cap_us: RTT_MARGIN_CAP_MS * 1000,
            round_rtt: RoundRtt::Min,
            continuous_probing: true,
            probe_interval_rounds: PROBE_INTERVAL_ROUNDS,
            probe_interval_rand_rounds: PROBE_INTERVAL_RAND_ROUNDS,
            expire_btlbw: true,
            theta: PLUS_THETA,
            theta_rtprop: ThetaRef::MinRtt,
            // [GAP] The thesis does not say BBRv2+ drops BBRv2's end-of-probe advance of the
            // bw_hi window, so its variant keeps it; the authors' code drops it (see code()).
            probe_end_bw_advance: true,
            forced_bw_advance_rounds: 0,
            dual_mode: true,
            lambda1: LAMBDA1,
            lambda2: LAMBDA2,
            eta1: ETA1,
            eta2: ETA2,
            bdp_compensation: true,
            mu: PLUS_MU,
        }
    }

    /// BBRv2+ as the authors' module tcp_bbr2plus.c sets it (research summary §3.4, [CODE]).
    pub fn code() -> Self {
        Plus {
            rtt_margin: RttMargin::Additive,
            round_rtt: RoundRtt::Srtt,
            theta_rtprop: ThetaRef::RecentMin,
            probe_end_bw_advance: false,
            forced_bw_advance_rounds: CODE_FORCED_BW_ADVANCE_ROUNDS,
            mu: CODE_MU,
            ..Plus::thesis()
        }
    }
}

/// The cc_params of "bbr2plus" beyond BBRv2's.
const PLUS_PARAM_KEYS: &[&str] = &[
    "variant",
    "probe_try",
    "gamma",
    "rtt_margin",
    "rtt_margin_cap_ms",
    "round_rtt",
    "continuous_probing",
    "probe_interval_rounds",
    "probe_interval_rand_rounds",
    "expire_btlbw",
    "theta",
    "theta_rtprop",
    "probe_end_bw_advance",
    "forced_bw_advance_rounds",
    "dual_mode",
    "lambda1",
    "lambda2",
    "eta1",
    "eta2",
    "bdp_compensation",
    "mu",
];

/// A string parameter with a fixed set of accepted values.
fn choice<T: Copy>(
    t: &toml::Table,
    key: &str,
    accepted: &[(&str, T)],
) -> Result<Option<T>, ParamError> {
    let Some(v) = t.get(key) else { return Ok(None) };
    let names: Vec<String> = accepted.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    match v
        .as_str()
        .and_then(|s| accepted.iter().find(|(n, _)| *n == s))
    {
        Some((_, value)) => Ok(Some(*value)),
        None => Err(bad(
            key,
            format!("expected one of {}, got {v}", names.join(", ")),
        )),
    }
}

impl Params {
    /// BBRv2+'s ("bbr2plus"): BBRv2's keys with loss_thresh 20 %, plus the pieces above, their
    /// defaults taken from `variant`.
    pub(super) fn from_table_plus(t: &toml::Table) -> Result<Self, ParamError> {
        let keys: Vec<&str> = PARAM_KEYS
            .iter()
            .chain(PLUS_PARAM_KEYS)
            .chain(PORT_PARAM_KEYS)
            .copied()
            .collect();
        reject_unknown(t, &keys)?;
        let plus = match choice(t, "variant", &[("thesis", false), ("code", true)])? {
            Some(true) => Plus::code(),
            _ => Plus::thesis(),
        };
        let mut p = Params {
            plus,
            loss_thresh: PLUS_LOSS_THRESH,
            ..Params::default()
        };
        let q = &mut p.plus;
        let set_bool = |key: &str, field: &mut bool| -> Result<(), ParamError> {
            if let Some(v) = crate::cc::params::optional_boolean(t, key)? {
                *field = v;
            }
            Ok(())
        };
        set_bool("probe_try", &mut q.probe_try)?;
        set_bool("continuous_probing", &mut q.continuous_probing)?;
        set_bool("expire_btlbw", &mut q.expire_btlbw)?;
        set_bool("probe_end_bw_advance", &mut q.probe_end_bw_advance)?;
        set_bool("dual_mode", &mut q.dual_mode)?;
        set_bool("bdp_compensation", &mut q.bdp_compensation)?;
        for (key, field) in [
            ("gamma", &mut q.gamma),
            ("theta", &mut q.theta),
            ("lambda1", &mut q.lambda1),
            ("lambda2", &mut q.lambda2),
        ] {
            if let Some(v) = factor_at_least_one(t, key)? {
                *field = v;
            }
        }
        if let Some(v) = gain(t, "mu")? {
            q.mu = v;
        }
        if let Some(v) = integer(t, "rtt_margin_cap_ms", 0, 10_000)? {
            q.rtt_margin_cap_us = v * 1000;
        }
        for (key, field, lo) in [
            ("probe_interval_rounds", &mut q.probe_interval_rounds, 0),
            (
                "probe_interval_rand_rounds",
                &mut q.probe_interval_rand_rounds,
                0,
            ),
            (
                "forced_bw_advance_rounds",
                &mut q.forced_bw_advance_rounds,
                0,
            ),
            ("eta1", &mut q.eta1, 1),
            ("eta2", &mut q.eta2, 1),
        ] {
            if let Some(v) = integer(t, key, lo, 1000)? {
                *field = v;
            }
        }
        let margins = [
            ("multiplicative", RttMargin::Multiplicative),
            ("additive", RttMargin::Additive),
        ];
        if let Some(v) = choice(t, "rtt_margin", &margins)? {
            q.rtt_margin = v;
        }
        if let Some(v) = choice(
            t,
            "round_rtt",
            &[("min", RoundRtt::Min), ("srtt", RoundRtt::Srtt)],
        )? {
            q.round_rtt = v;
        }
        let refs = [
            ("min_rtt", ThetaRef::MinRtt),
            ("recent_min", ThetaRef::RecentMin),
        ];
        if let Some(v) = choice(t, "theta_rtprop", &refs)? {
            q.theta_rtprop = v;
        }
        Self::parse(t, p)
    }
}

// ---------------------------------------------------------------------------------------------
// State

/// Per-connection BBRv2+ state (Table 4.1 and its bookkeeping). Unused by "bbr2".
#[derive(Debug, Clone)]
pub(super) struct PlusState {
    /// MinRTT_curr_rtt: min RTT of the current round, µs (u32::MAX: no sample yet).
    pub round_min_us: u32,
    /// MinRTT_prev_rtt: min RTT of the round that ended last.
    pub prev_round_min_us: u32,
    /// Per-round EWMA srtt (the code's ProbeTry statistic), current and previous round.
    pub round_srtt_us: u32,
    pub prev_round_srtt_us: u32,
    /// The min RTTs of the rounds before the previous one (ring), for ThetaRef::RecentMin.
    pub recent_round_min_us: [u32; RECENT_MIN_RTT_ROUNDS],
    pub recent_idx: usize,
    /// Max_4RTT(jitter): per-round max of mdev (µs) over the last 4 rounds, and the current slot.
    pub jitter_max_us: [u32; JITTER_WIN_ROUNDS],
    pub jitter_idx: usize,
    /// Min RTT since the current PROBE_BW sub-state began: MinRTT_curr_cruise in CRUISE, UP's
    /// feedback in POST_UP.
    pub phase_min_us: u32,
    /// ProbeTry's reference: the PRE_UP round's statistic.
    pub probe_try_ref_us: u32,
    /// MinRTT_before_probe: the statistic of the round before UP began.
    pub before_probe_us: u32,
    /// CRUISE rounds left before the next probe.
    pub probe_wait_rounds: u32,
    /// Rounds since a bandwidth sample reached max_bw (for the forced advance).
    pub rounds_without_max: u32,
    /// Algorithm 2: BBRv2+'s ProbeBW in use (false: BBRv2's).
    pub fast_probing: bool,
    pub buffer_filling: u32,
    pub buffer_empty: u32,
    /// The previous CRUISE's min RTT (the code's dual-mode threshold).
    pub last_cruise_min_us: u32,
    /// The lowest RTT ever measured (the code's dual-mode reference).
    pub ever_min_rtt_us: u32,
    /// How often Algorithm 2 switched, each way.
    pub switches_to_bbr2: u32,
    pub switches_to_plus: u32,
}

impl Default for PlusState {
    fn default() -> Self {
        PlusState {
            round_min_us: u32::MAX,
            prev_round_min_us: u32::MAX,
            round_srtt_us: u32::MAX,
            prev_round_srtt_us: u32::MAX,
            recent_round_min_us: [u32::MAX; RECENT_MIN_RTT_ROUNDS],
            recent_idx: 0,
            jitter_max_us: [0; JITTER_WIN_ROUNDS],
            jitter_idx: 0,
            phase_min_us: u32::MAX,
            probe_try_ref_us: u32::MAX,
            before_probe_us: u32::MAX,
            probe_wait_rounds: 0,
            rounds_without_max: 0,
            fast_probing: true,
            buffer_filling: 0,
            buffer_empty: 0,
            last_cruise_min_us: u32::MAX,
            ever_min_rtt_us: u32::MAX,
            switches_to_bbr2: 0,
            switches_to_plus: 0,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Pure rules (hand-checked in the tests)

/// `rtt` is within the tolerance of `reference`: `rtt <= factor * ref` (multiplicative), or
/// `rtt <= ref + min((factor - 1) * ref, cap)` (additive); factor in 1/256 units. True when
/// either has no sample (nothing argues against probing).
pub(super) fn within_margin(
    rtt_us: u32,
    reference_us: u32,
    factor: u32,
    margin: RttMargin,
    cap_us: u32,
) -> bool {
    if rtt_us == u32::MAX || reference_us == u32::MAX {
        return true;
    }
    rtt_us as u64 <= threshold_us(reference_us, factor, margin, cap_us)
}

/// The threshold of [`within_margin`].
fn threshold_us(reference_us: u32, factor: u32, margin: RttMargin, cap_us: u32) -> u64 {
    let reference = reference_us as u64;
    match margin {
        RttMargin::Multiplicative => (reference * factor as u64) >> BBR_SCALE,
        RttMargin::Additive => {
            let extra = (reference * factor.saturating_sub(BBR_UNIT) as u64) >> BBR_SCALE;
            reference + extra.min(cap_us as u64)
        }
    }
}

/// Algorithm 1's trigger: rtt > theta · rtprop (theta in 1/256 units). False with no sample.
pub(super) fn rtt_above(rtt_us: u32, rtprop_us: u32, theta: u32) -> bool {
    if rtt_us == u32::MAX || rtprop_us == u32::MAX {
        return false;
    }
    (rtt_us as u64) << BBR_SCALE > rtprop_us as u64 * theta as u64
}

/// Algorithm 3's fixed_RTprop: rtprop + jitter when jitter > mu · rtprop (mu in 1/256 units).
pub(super) fn compensated_rtprop(rtprop_us: u32, jitter_us: u32, mu: u32) -> u32 {
    if rtprop_us == u32::MAX {
        return rtprop_us;
    }
    if (jitter_us as u64) << BBR_SCALE > rtprop_us as u64 * mu as u64 {
        rtprop_us.saturating_add(jitter_us).min(u32::MAX - 1)
    } else {
        rtprop_us
    }
}

/// What Algorithm 2 decides at the end of a CRUISE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DualModeStep {
    Stay,
    /// A buffer-filling competitor: BBRv2's ProbeBW, restarting from STARTUP.
    ToBbr2,
    /// The competitor is gone: BBRv2+'s ProbeBW again.
    ToPlus,
}

/// Algorithm 2 (§4.4.3), its counters updated in `s`, for a CRUISE whose min RTT was
/// `cruise_min_us`; `rtprop_us` is BBRv2's min_rtt. The thesis compares with λ · RTprop; the
/// code (rtt_margin = additive) with `min(last_cruise_min, min_rtt) + (λ1 - 1) · ref` and
/// `min_rtt + (λ2 - 1) · ref`, ref the lowest RTT ever measured.
pub(super) fn dual_mode_step(
    p: &Plus,
    s: &mut PlusState,
    cruise_min_us: u32,
    rtprop_us: u32,
) -> DualModeStep {
    if cruise_min_us == u32::MAX || rtprop_us == u32::MAX {
        return DualModeStep::Stay; // [GAP] a CRUISE without an RTT sample says nothing
    }
    let cruise = cruise_min_us as u64;
    let extra = |lambda: u32| {
        (s.ever_min_rtt_us.min(rtprop_us) as u64 * lambda.saturating_sub(BBR_UNIT) as u64)
            >> BBR_SCALE
    };
    if s.fast_probing {
        let threshold = match p.rtt_margin {
            RttMargin::Multiplicative => (rtprop_us as u64 * p.lambda1 as u64) >> BBR_SCALE,
            RttMargin::Additive => s.last_cruise_min_us.min(rtprop_us) as u64 + extra(p.lambda1),
        };
        s.buffer_filling = if cruise > threshold {
            s.buffer_filling + 1
        } else {
            0
        };
        if s.buffer_filling >= p.eta1 {
            s.buffer_filling = 0;
            s.fast_probing = false;
            s.switches_to_bbr2 += 1;
            return DualModeStep::ToBbr2;
        }
    } else {
        let threshold = match p.rtt_margin {
            RttMargin::Multiplicative => (rtprop_us as u64 * p.lambda2 as u64) >> BBR_SCALE,
            RttMargin::Additive => rtprop_us as u64 + extra(p.lambda2),
        };
        s.buffer_empty = if cruise <= threshold {
            s.buffer_empty + 1
        } else {
            0
        };
        if s.buffer_empty >= p.eta2 {
            s.buffer_empty = 0;
            s.fast_probing = true;
            s.switches_to_plus += 1;
            return DualModeStep::ToPlus;
        }
    }
    DualModeStep::Stay
}

// ---------------------------------------------------------------------------------------------
// The pieces, as steps of the BBRv2 machine

impl Bbr2 {
    /// BBRv2+'s ProbeBW is in use: some piece of it is on and Algorithm 2 has not switched to
    /// BBRv2's.
    fn fast_probing(&self) -> bool {
        self.ps.fast_probing
    }

    /// Enters PROBE_BW sub-state `phase` (every transition goes through here).
    pub(super) fn enter_phase(&mut self, phase: Phase) {
        self.cycle_idx = phase;
        self.ps.phase_min_us = u32::MAX;
    }

    /// Per-ACK bookkeeping: the rounds' min RTTs and srtt (MinRTT_curr_rtt, MinRTT_prev_rtt),
    /// the sub-state's min RTT, the 4-round jitter max filter. A round's statistics close when
    /// the next round starts; the ACK that starts a round counts in the new one.
    pub(super) fn plus_update_rtt_rounds(&mut self, tp: &TcpState, rs: &RateSample) {
        let s = &mut self.ps;
        if self.round_start {
            s.recent_round_min_us[s.recent_idx] = s.prev_round_min_us;
            s.recent_idx = (s.recent_idx + 1) % RECENT_MIN_RTT_ROUNDS;
            s.prev_round_min_us = s.round_min_us;
            s.round_min_us = u32::MAX;
            s.prev_round_srtt_us = s.round_srtt_us;
            s.round_srtt_us = u32::MAX;
            s.jitter_idx = (s.jitter_idx + 1) % JITTER_WIN_ROUNDS;
            s.jitter_max_us[s.jitter_idx] = 0;
        }
        if rs.rtt_ns >= 0 {
            let rtt = (rs.rtt_ns as u64 / 1000).min(u32::MAX as u64 - 1) as u32;
            s.round_min_us = s.round_min_us.min(rtt);
            s.phase_min_us = s.phase_min_us.min(rtt);
            s.ever_min_rtt_us = s.ever_min_rtt_us.min(rtt);
            // The code's per-round srtt: srtt += (rtt - srtt) / 8, restarted each round.
            s.round_srtt_us = if s.round_srtt_us == u32::MAX {
                rtt
            } else {
                (s.round_srtt_us as i64 + (rtt as i64 - s.round_srtt_us as i64) / 8) as u32
            };
        }
        // Jitter = the RTT variation TCP keeps: the code's tp->mdev_us >> 2 (Table 4.1).
        let jitter = (tp.mdev_us4 >> 2).min(u32::MAX as u64) as u32;
        let slot = &mut s.jitter_max_us[s.jitter_idx];
        *slot = (*slot).max(jitter);
    }

    /// The per-round statistic ProbeTry compares, of the round that ended last.
    fn prev_round_rtt_us(&self) -> u32 {
        match self.p.plus.round_rtt {
            RoundRtt::Min => self.ps.prev_round_min_us,
            RoundRtt::Srtt => self.ps.prev_round_srtt_us,
        }
    }

    fn within_gamma(&self, rtt_us: u32, reference_us: u32) -> bool {
        let p = &self.p.plus;
        within_margin(
            rtt_us,
            reference_us,
            p.gamma,
            p.rtt_margin,
            p.rtt_margin_cap_us,
        )
    }

    /// Max_4RTT(jitter), µs.
    pub(super) fn max_jitter_us(&self) -> u32 {
        self.ps.jitter_max_us.iter().copied().max().unwrap_or(0)
    }

    /// A bandwidth sample: one at (or above) max_bw restarts the forced-advance count.
    pub(super) fn plus_note_bw_sample(&mut self, sample_bw: u32) {
        if sample_bw >= self.max_bw() {
            self.ps.rounds_without_max = 0;
        }
    }

    /// At a round start in PROBE_BW, while BBRv2+'s ProbeBW is in use: Algorithm 1 and the
    /// code's forced advance of the bw_hi window.
    ///
    /// Algorithm 1 (§4.4.2): in CRUISE or DOWN, if the round that just ended had its min RTT
    /// above theta · RTprop, the older bw_hi slot expires. [GAP] The thesis runs it "at most
    /// once per RTT round, on a new ACK" comparing MinRTT_curr_rtt; we judge the completed
    /// round's min at the round's end (a whole round of samples). [GAP] When the current slot
    /// has no sample yet nothing expires (as bbr2_advance_bw_hi_filter), so max_bw never
    /// drops to 0.
    pub(super) fn plus_maybe_advance_bw_filter(&mut self) {
        if !self.round_start || self.mode != Mode::ProbeBw || !self.fast_probing() {
            return;
        }
        let forced = self.p.plus.forced_bw_advance_rounds;
        if forced > 0 {
            self.ps.rounds_without_max += 1;
            if self.ps.rounds_without_max >= forced {
                self.ps.rounds_without_max = 0;
                self.advance_bw_hi_filter();
            }
        }
        if self.p.plus.expire_btlbw
            && matches!(
                self.cycle_idx,
                Phase::Cruise | Phase::Down | Phase::DownSlightly
            )
            && rtt_above(
                self.ps.prev_round_min_us,
                self.theta_rtprop_us(),
                self.p.plus.theta,
            )
        {
            self.advance_bw_hi_filter();
        }
    }

    fn theta_rtprop_us(&self) -> u32 {
        match self.p.plus.theta_rtprop {
            ThetaRef::MinRtt => self.min_rtt_us,
            ThetaRef::RecentMin => {
                let recent = self
                    .ps
                    .recent_round_min_us
                    .iter()
                    .copied()
                    .min()
                    .unwrap_or(u32::MAX);
                if recent == u32::MAX {
                    self.min_rtt_us
                } else {
                    recent
                }
            }
        }
    }

    /// Whether BBRv2's end-of-probe advance of the bw_hi window applies.
    pub(super) fn probe_end_bw_advance(&self) -> bool {
        self.p.plus.probe_end_bw_advance || !self.fast_probing()
    }

    /// Algorithm 3 (§4.4.4): the BDP for the cwnd target, bw · (RTprop + jitter) · gain when
    /// the 4-round max jitter exceeds mu · RTprop, else BBRv2's bw · RTprop · gain.
    /// [GAP] Applied to the cwnd target only, as the authors' code does (`target_cwnd +=
    /// BtlBW × jitter × g`), not to the other uses of the BDP (DOWN's exit test, the
    /// Reno-coexistence bound, PROBE_RTT's cwnd); and with bw = min(max_bw, bw_lo), the bw
    /// the cwnd target uses, where the code takes max_bw.
    pub(super) fn compensated_bdp(&self, bw: u32, gain: u32) -> u32 {
        if !self.p.plus.bdp_compensation {
            return self.bdp(bw, gain);
        }
        bdp(
            bw,
            compensated_rtprop(self.min_rtt_us, self.max_jitter_us(), self.p.plus.mu),
            gain,
        )
    }

    /// The probe wait in CRUISE rounds, picked when a probe ends (entering DOWN*).
    pub(super) fn plus_pick_probe_wait_rounds(&mut self) {
        let base = self.p.plus.probe_interval_rounds;
        if base > 0 {
            self.ps.probe_wait_rounds =
                base + self.random_below(self.p.plus.probe_interval_rand_rounds);
        }
    }

    /// CRUISE counts a round toward the probe wait.
    pub(super) fn plus_count_cruise_round(&mut self) {
        if self.round_start {
            self.ps.probe_wait_rounds = self.ps.probe_wait_rounds.saturating_sub(1);
        }
    }

    /// The CRUISE-round probe interval is over (BBRv2+'s ProbeBW only).
    pub(super) fn plus_probe_rounds_over(&self) -> bool {
        self.p.plus.probe_interval_rounds > 0
            && self.fast_probing()
            && self.ps.probe_wait_rounds == 0
    }

    /// REFILL's round is over: ProbeTry's PRE_UP, or UP at once.
    pub(super) fn plus_after_refill(&self) -> bool {
        self.p.plus.probe_try && self.fast_probing()
    }

    /// ProbeTry (§4.4.2). PRE_UP's round ends: its statistic is the reference. GUARD's round
    /// ends: UP if GUARD's statistic is within gamma of PRE_UP's, else DOWN_SLIGHTLY.
    pub(super) fn plus_probe_try_step(&mut self, tp: &TcpState) {
        if !self.round_start {
            return;
        }
        match self.cycle_idx {
            Phase::PreUp => {
                self.ps.probe_try_ref_us = self.prev_round_rtt_us();
                self.enter_phase(Phase::Guard);
            }
            Phase::Guard => {
                if self.within_gamma(self.prev_round_rtt_us(), self.ps.probe_try_ref_us) {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tp);
                } else {
                    // [GAP] Handled as the end of a probe (ProbeStopping): BBRv2's end-of-probe
                    // bookkeeping, including the bw_hi advance where it applies, follows.
                    self.start_bw_probe_down(tp);
                    self.enter_phase(Phase::DownSlightly);
                }
            }
            _ => {}
        }
    }

    /// UP entry: MinRTT_before_probe is the statistic of the round before it.
    /// [GAP] The min RTT of the round that ended last (GUARD's, or POST_UP's when probing
    /// continues), the thesis's "MinRTT_curr_rtt saved before entering ProbeUp".
    pub(super) fn plus_on_probe_up(&mut self) {
        self.ps.before_probe_us = self.ps.prev_round_min_us;
    }

    /// UP is over (queue building): POST_UP for a round to collect its feedback when
    /// continuous probing is on, else BBRv2's DOWN.
    pub(super) fn plus_end_probe_up(&mut self, tp: &TcpState) {
        if self.p.plus.continuous_probing && self.fast_probing() {
            self.enter_phase(Phase::PostUp);
            self.next_rtt_delivered = tp.delivered; // a full round of UP's ACKs
        } else {
            self.start_bw_probe_down(tp);
        }
    }

    /// POST_UP's round ends (§4.4.2, continuous probing): UP again if the min RTT seen in it
    /// (ACKs of what UP sent) is within gamma of MinRTT_before_probe, else DOWN.
    /// [GAP] The thesis has no POST_UP: it tests "at the end of ProbeUp"; the code waits this
    /// round so the test sees UP's own packets.
    pub(super) fn plus_post_up_step(&mut self, tp: &TcpState) {
        if !self.round_start {
            return;
        }
        if self.within_gamma(self.ps.phase_min_us, self.ps.before_probe_us) {
            self.start_bw_probe_up(tp);
        } else {
            self.start_bw_probe_down(tp);
        }
    }

    /// CRUISE ends: Algorithm 2 on its min RTT. True when it restarted from STARTUP.
    pub(super) fn plus_end_cruise(&mut self) -> bool {
        if !self.p.plus.dual_mode {
            return false;
        }
        let cruise_min = self.ps.phase_min_us;
        let step = dual_mode_step(&self.p.plus, &mut self.ps, cruise_min, self.min_rtt_us);
        if cruise_min != u32::MAX {
            self.ps.last_cruise_min_us = cruise_min;
        }
        if step == DualModeStep::ToBbr2 {
            self.restart_from_startup();
            return true;
        }
        false
    }

    /// restart_from_startup (Algorithm 2): "regain the bandwidth potentially yielded to
    /// loss-based competitors". As the code: STARTUP with the full-pipe detection reset.
    /// [GAP] The short-term lower bounds are reset too (as when a BBRv2 probe starts), so
    /// STARTUP is not held at a bw_lo learned while yielding.
    fn restart_from_startup(&mut self) {
        self.mode = Mode::Startup;
        self.full.restart();
        self.reset_lower_bounds();
        self.bw_probe_samples = false;
        self.ack_phase = AckPhase::Init;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bbr2, in_probe_bw, BW_10MBPS};
    use super::super::CWND_GAIN;
    use super::*;
    use crate::cc::CongestionControl;

    fn bbr2plus(params: &str) -> Bbr2 {
        let t: toml::Table = toml::from_str(params).expect("valid toml");
        let mut b = Bbr2::new(Params::from_table_plus(&t).expect("valid params"), 7);
        b.name = "bbr2plus";
        b
    }

    fn rtt(us: i64) -> RateSample {
        RateSample {
            rtt_ns: us * 1000,
            ..Default::default()
        }
    }

    /// One ACK: RTT bookkeeping, then the PROBE_BW step, then the gains (cong_control's order).
    fn step(b: &mut Bbr2, tp: &TcpState, round_start: bool, sample: &RateSample) {
        b.round_start = round_start;
        b.plus_update_rtt_rounds(tp, sample);
        b.plus_maybe_advance_bw_filter();
        b.update_cycle_phase(tp, sample);
        b.update_gains();
    }

    #[test]
    fn defaults_are_table_4_2_and_the_code_variant_differs_where_the_summary_lists() {
        let b = bbr2plus("");
        assert_eq!(b.name(), "bbr2plus");
        // alpha 20 % = 51/256, theta 1.1 = 281/256, mu 0.5 = 128/256, gamma 1.02 = 261/256.
        assert_eq!(
            (b.p.loss_thresh, b.p.plus.theta, b.p.plus.mu, b.p.plus.gamma),
            (51, 281, 128, 261)
        );
        // lambda1 1.1 = 281, lambda2 1.05 = 268, eta1 2, eta2 4; 8 + U[0, 4) rounds.
        let q = &b.p.plus;
        assert_eq!((q.lambda1, q.lambda2, q.eta1, q.eta2), (281, 268, 2, 4));
        assert_eq!(
            (q.probe_interval_rounds, q.probe_interval_rand_rounds),
            (8, 4)
        );
        assert!(
            q.probe_try
                && q.continuous_probing
                && q.expire_btlbw
                && q.dual_mode
                && q.bdp_compensation
        );
        assert_eq!(
            (q.rtt_margin, q.round_rtt, q.theta_rtprop),
            (RttMargin::Multiplicative, RoundRtt::Min, ThetaRef::MinRtt)
        );
        assert!(q.probe_end_bw_advance && q.forced_bw_advance_rounds == 0);
        assert_eq!(
            (b.p.beta, b.p.headroom),
            (super::super::BETA, super::super::HEADROOM)
        );
        let c = bbr2plus("variant = \"code\"");
        let q = &c.p.plus;
        assert_eq!(
            (q.rtt_margin, q.round_rtt, q.theta_rtprop),
            (RttMargin::Additive, RoundRtt::Srtt, ThetaRef::RecentMin)
        );
        assert_eq!(
            (
                q.mu,
                q.forced_bw_advance_rounds,
                q.probe_end_bw_advance,
                q.rtt_margin_cap_us
            ),
            (102, 25, false, 2000)
        );
        // The same as the thesis elsewhere; explicit keys override the variant.
        assert_eq!(
            Plus {
                rtt_margin: RttMargin::Multiplicative,
                round_rtt: RoundRtt::Min,
                theta_rtprop: ThetaRef::MinRtt,
                probe_end_bw_advance: true,
                forced_bw_advance_rounds: 0,
                mu: PLUS_MU,
                ..Plus::code()
            },
            Plus::thesis()
        );
        let c = bbr2plus("variant = \"code\"\nmu = 0.5\nround_rtt = \"min\"\ndual_mode = false\nlambda1 = 1.2\neta2 = 6");
        assert_eq!(
            (
                c.p.plus.mu,
                c.p.plus.round_rtt,
                c.p.plus.dual_mode,
                c.p.plus.lambda1,
                c.p.plus.eta2
            ),
            (128, RoundRtt::Min, false, 307, 6)
        );
        // "bbr2" has every piece off and takes none of their keys.
        let b = bbr2("");
        assert_eq!(b.p.plus, Plus::off());
        for key in PLUS_PARAM_KEYS {
            let t: toml::Table = toml::from_str(&format!("{key} = 1")).unwrap();
            assert!(Params::from_table(&t).is_err(), "bbr2 accepted {key}");
        }
    }

    #[test]
    fn bad_parameters_are_named_with_what_is_accepted() {
        for (src, key, phrase) in [
            ("variant = \"paper\"", "variant", "\"thesis\", \"code\""),
            (
                "rtt_margin = \"relative\"",
                "rtt_margin",
                "\"multiplicative\", \"additive\"",
            ),
            ("round_rtt = 1", "round_rtt", "\"min\", \"srtt\""),
            (
                "theta_rtprop = \"x\"",
                "theta_rtprop",
                "\"min_rtt\", \"recent_min\"",
            ),
            ("gamma = 0.98", "gamma", "from 1 to 4"),
            ("lambda2 = 0.5", "lambda2", "from 1 to 4"),
            ("eta1 = 0", "eta1", ""),
            ("probe_try = 1", "probe_try", "true or false"),
            ("dual_mode = \"yes\"", "dual_mode", "true or false"),
            ("mu = 5", "mu", "gain"),
            ("probe_interval_rounds = -1", "probe_interval_rounds", ""),
            ("delta = 1", "delta", "accepted"),
        ] {
            let t: toml::Table = toml::from_str(src).unwrap();
            let e = Params::from_table_plus(&t)
                .err()
                .unwrap_or_else(|| panic!("{src} accepted"));
            assert_eq!(e.key, key, "{src}");
            assert!(e.message.contains(phrase), "{src}: {}", e.message);
        }
    }

    #[test]
    fn margins_multiplicative_and_additive_by_hand() {
        // gamma 261/256 on 40 ms: 40000 · 261 / 256 = 40781.25 -> 40781.
        let m = |rtt, r| within_margin(rtt, r, PLUS_GAMMA, RttMargin::Multiplicative, 2000);
        assert!(m(40_781, 40_000) && !m(40_782, 40_000));
        // Additive: 40 ms + min(0.0195 · 40 ms = 781 µs, 2 ms) = 40781; at 200 ms the 2 ms cap
        // binds (3906 µs > 2000): 202000.
        let a = |rtt, r| within_margin(rtt, r, PLUS_GAMMA, RttMargin::Additive, 2000);
        assert!(a(40_781, 40_000) && !a(40_782, 40_000));
        assert!(a(202_000, 200_000) && !a(202_001, 200_000) && m(203_906, 200_000));
        // No sample on either side: nothing argues against probing.
        assert!(m(u32::MAX, 40_000) && m(50_000, u32::MAX));
    }

    #[test]
    fn algorithm_1_expires_the_older_btlbw_when_a_rounds_min_rtt_exceeds_theta_rtprop() {
        // theta = 281/256: 40 ms · 281 / 256 = 43.906 ms.
        assert!(rtt_above(43_907, 40_000, PLUS_THETA));
        assert!(!rtt_above(43_906, 40_000, PLUS_THETA));
        assert!(!rtt_above(u32::MAX, 40_000, PLUS_THETA));
        assert!(!rtt_above(50_000, u32::MAX, PLUS_THETA));
        let rtt_ms = |ms: i64| rtt(ms * 1000);
        for (phase, expires) in [
            (Phase::Cruise, true),
            (Phase::Down, true),
            (Phase::DownSlightly, true),
            (Phase::Up, false),
            (Phase::Refill, false),
        ] {
            let mut b = bbr2plus("");
            let tp = in_probe_bw(&mut b, phase);
            b.min_rtt_us = 40_000;
            b.bw_hi = [BW_10MBPS, 5000];
            // A round whose samples are 50, 44 and 46 ms: min 44 ms > 43.9 ms.
            b.round_start = true;
            b.plus_update_rtt_rounds(&tp, &rtt_ms(50));
            b.round_start = false;
            b.plus_update_rtt_rounds(&tp, &rtt_ms(44));
            b.plus_update_rtt_rounds(&tp, &rtt_ms(46));
            b.plus_maybe_advance_bw_filter(); // not at a round start: nothing yet
            assert_eq!(b.bw_hi, [BW_10MBPS, 5000]);
            b.round_start = true;
            b.plus_update_rtt_rounds(&tp, &rtt_ms(47));
            assert_eq!(
                (b.ps.prev_round_min_us, b.ps.round_min_us),
                (44_000, 47_000)
            );
            b.plus_maybe_advance_bw_filter();
            let want = if expires {
                [5000, 0]
            } else {
                [BW_10MBPS, 5000]
            };
            assert_eq!(b.bw_hi, want, "{phase:?}");
        }
        // A round at 43.9 ms does not expire; neither does bbr2, bbr2plus with the piece off,
        // or bbr2plus after Algorithm 2 switched to BBRv2's ProbeBW.
        let mut switched = bbr2plus("");
        switched.ps.fast_probing = false;
        for (mut b, ms, theta_expires) in [
            (bbr2plus(""), 43.9, true),
            (bbr2(""), 44.0, false),
            (bbr2plus("expire_btlbw = false"), 44.0, false),
            (bbr2plus("theta = 1.15"), 46.0, true), // 40 · 294 / 256 = 45.94 ms: 46 expires
            (switched, 44.0, false),
        ] {
            let tp = in_probe_bw(&mut b, Phase::Cruise);
            b.min_rtt_us = 40_000;
            b.bw_hi = [BW_10MBPS, 5000];
            b.round_start = true;
            b.plus_update_rtt_rounds(&tp, &rtt((ms * 1000.0) as i64));
            b.plus_update_rtt_rounds(&tp, &RateSample::default()); // next round starts
            b.plus_maybe_advance_bw_filter();
            let expired = b.bw_hi == [5000, 0];
            assert_eq!(
                expired,
                theta_expires && b.p.plus.theta == 294,
                "{} theta {} at {ms} ms",
                b.name,
                b.p.plus.theta
            );
        }
        // An empty current slot is not rotated in: max_bw never drops to 0.
        let mut b = bbr2plus("");
        let _tp = in_probe_bw(&mut b, Phase::Cruise);
        b.min_rtt_us = 40_000;
        b.bw_hi = [BW_10MBPS, 0];
        b.ps.prev_round_min_us = 60_000;
        b.round_start = true;
        b.plus_maybe_advance_bw_filter();
        assert_eq!(b.bw_hi, [BW_10MBPS, 0]);
    }

    #[test]
    fn code_variant_theta_uses_the_min_of_the_four_previous_rounds() {
        // RTprop (min_rtt filter) 40 ms, but the last rounds sat at 45, 46, 47, 48 ms: the code
        // compares a 50 ms round with 1.1 · 45 = 49.5 ms (expire), a 49 ms one does not; the
        // thesis compares both with 1.1 · 40 = 44 ms (both expire).
        for (variant, round_ms, expires) in [
            ("code", 50, true),
            ("code", 49, false),
            ("thesis", 49, true),
        ] {
            let mut b = bbr2plus(&format!("variant = \"{variant}\""));
            let tp = in_probe_bw(&mut b, Phase::Cruise);
            b.min_rtt_us = 40_000;
            for ms in [45, 46, 47, 48, round_ms] {
                b.round_start = true;
                b.plus_update_rtt_rounds(&tp, &rtt(ms * 1000));
            }
            b.bw_hi = [BW_10MBPS, 5000];
            b.ps.rounds_without_max = 0;
            b.round_start = true;
            b.plus_update_rtt_rounds(&tp, &RateSample::default());
            assert_eq!(b.ps.prev_round_min_us, round_ms as u32 * 1000);
            b.plus_maybe_advance_bw_filter();
            assert_eq!(b.bw_hi == [5000, 0], expires, "{variant} {round_ms} ms");
        }
    }

    #[test]
    fn code_variant_forces_a_bw_hi_advance_after_25_rounds_without_a_max_sample() {
        let mut b = bbr2plus("variant = \"code\"\nexpire_btlbw = false");
        let _tp = in_probe_bw(&mut b, Phase::Cruise);
        b.bw_hi = [BW_10MBPS, 5000];
        for round in 1..25 {
            b.round_start = true;
            b.plus_maybe_advance_bw_filter();
            assert_eq!(b.bw_hi, [BW_10MBPS, 5000], "round {round}");
            if round == 10 {
                b.plus_note_bw_sample(4000); // below max: does not count
            }
        }
        b.round_start = true;
        b.plus_maybe_advance_bw_filter();
        assert_eq!(b.bw_hi, [5000, 0]);
        // A sample at the max restarts the count.
        b.bw_hi = [BW_10MBPS, 5000];
        for _ in 0..24 {
            b.round_start = true;
            b.plus_maybe_advance_bw_filter();
        }
        b.plus_note_bw_sample(BW_10MBPS);
        b.round_start = true;
        b.plus_maybe_advance_bw_filter();
        assert_eq!(b.bw_hi, [BW_10MBPS, 5000]);
        // The thesis variant never forces it.
        let mut b = bbr2plus("expire_btlbw = false");
        let _tp = in_probe_bw(&mut b, Phase::Cruise);
        b.bw_hi = [BW_10MBPS, 5000];
        for _ in 0..100 {
            b.round_start = true;
            b.plus_maybe_advance_bw_filter();
        }
        assert_eq!(b.bw_hi, [BW_10MBPS, 5000]);
    }

    #[test]
    fn algorithm_3_compensates_the_cwnd_bdp_by_the_4_round_max_jitter_above_mu_rtprop() {
        // mu = 128/256: the threshold at RTprop 40 ms is 20 ms, exclusive.
        assert_eq!(compensated_rtprop(40_000, 20_000, PLUS_MU), 40_000);
        assert_eq!(compensated_rtprop(40_000, 20_001, PLUS_MU), 60_001);
        assert_eq!(compensated_rtprop(40_000, 0, PLUS_MU), 40_000);
        assert_eq!(compensated_rtprop(u32::MAX, 50_000, PLUS_MU), u32::MAX);
        // The code's mu 0.4: 16.25 ms of jitter at 40 ms compensates, 15.9 ms does not.
        assert_eq!(compensated_rtprop(40_000, 16_250, CODE_MU), 56_250);
        assert_eq!(compensated_rtprop(40_000, 15_900, CODE_MU), 40_000);
        let mut b = bbr2plus("");
        let mut tp = in_probe_bw(&mut b, Phase::Cruise);
        b.min_rtt_us = 40_000;
        // Jitter = mdev_us4 >> 2: 25 ms in one round, then 1 ms.
        tp.mdev_us4 = 100_000;
        b.round_start = true;
        b.plus_update_rtt_rounds(&tp, &RateSample::default());
        b.round_start = false;
        tp.mdev_us4 = 4_000;
        b.plus_update_rtt_rounds(&tp, &RateSample::default());
        assert_eq!(b.max_jitter_us(), 25_000);
        // 2 · bw · 65 ms: 13981 · 65000 · 512 / 256 / 2^24 = 108.3 -> 109 packets (vs 67 at 40 ms).
        assert_eq!(b.compensated_bdp(BW_10MBPS, CWND_GAIN), 109);
        // The cwnd target follows it: from 60, an ACK of 100 packets grows cwnd to 109.
        tp.snd_cwnd = 60;
        b.set_cwnd(&mut tp, 100, BW_10MBPS, CWND_GAIN);
        assert_eq!(tp.snd_cwnd, 109);
        // The 25 ms stays in the window for 4 rounds in all, then is forgotten.
        for round in 1..4 {
            b.round_start = true;
            b.plus_update_rtt_rounds(&tp, &RateSample::default());
            assert_eq!(b.max_jitter_us(), 25_000, "round {round}");
        }
        b.round_start = true;
        b.plus_update_rtt_rounds(&tp, &RateSample::default());
        assert_eq!(b.max_jitter_us(), 1_000);
        assert_eq!(b.compensated_bdp(BW_10MBPS, CWND_GAIN), 67);
        // bbr2, and bbr2plus with the piece off, keep 67 under the same jitter.
        for mut b in [bbr2(""), bbr2plus("bdp_compensation = false")] {
            let mut tp = in_probe_bw(&mut b, Phase::Cruise);
            b.min_rtt_us = 40_000;
            tp.mdev_us4 = 100_000;
            b.plus_update_rtt_rounds(&tp, &RateSample::default());
            assert_eq!(b.compensated_bdp(BW_10MBPS, CWND_GAIN), 67);
        }
    }

    #[test]
    fn probe_try_paces_1_1_then_1_0_for_a_round_each_then_goes_up_or_down_slightly() {
        assert_eq!((PLUS_PRE_UP_GAIN, PLUS_DOWN_SLIGHTLY_GAIN), (281, 230));
        // gamma 1.02: GUARD at 40.7 ms passes against PRE_UP's 40 ms (<= 40.781), 41 ms fails.
        for (guard_us, to_up) in [(40_700, true), (41_000, false)] {
            let mut b = bbr2plus("");
            let tp = in_probe_bw(&mut b, Phase::Refill);
            // REFILL's round ends: PRE_UP at 1.10.
            step(&mut b, &tp, true, &rtt(40_000));
            assert_eq!(
                (b.cycle_idx, b.pacing_gain, b.mode(&tp)),
                (Phase::PreUp, 281, "probe_bw_pre_up")
            );
            // PRE_UP's round (min 40 ms) ends: GUARD at 1.0, with 40 ms as the reference.
            step(&mut b, &tp, false, &rtt(40_500));
            step(&mut b, &tp, true, &rtt(guard_us));
            assert_eq!(
                (b.cycle_idx, b.pacing_gain, b.ps.probe_try_ref_us),
                (Phase::Guard, 256, 40_000)
            );
            // GUARD's round (min guard_us) ends: the decision.
            step(&mut b, &tp, false, &rtt(guard_us + 300));
            step(&mut b, &tp, true, &rtt(guard_us + 500));
            if to_up {
                assert_eq!((b.cycle_idx, b.pacing_gain), (Phase::Up, 320), "{guard_us}");
                assert!(b.bw_probe_samples);
                assert_eq!(b.ps.before_probe_us, guard_us as u32);
            } else {
                assert_eq!(
                    (b.cycle_idx, b.pacing_gain, b.mode(&tp)),
                    (Phase::DownSlightly, 230, "probe_bw_down_slightly")
                );
                assert!(!b.bw_probe_samples && b.ack_phase == AckPhase::ProbeStopping);
                // A new probe wait of 8 + U[0, 4) CRUISE rounds.
                assert!(
                    (8..12).contains(&b.ps.probe_wait_rounds),
                    "{}",
                    b.ps.probe_wait_rounds
                );
                // As DOWN: to CRUISE once inflight is at most one BDP (here 0 in flight).
                step(&mut b, &tp, false, &RateSample::default());
                assert_eq!(b.cycle_idx, Phase::Cruise);
            }
        }
        // bbr2, and bbr2plus with probe_try off, go from REFILL straight to UP.
        for mut b in [bbr2(""), bbr2plus("probe_try = false")] {
            let tp = in_probe_bw(&mut b, Phase::Refill);
            b.round_start = true;
            b.update_cycle_phase(&tp, &RateSample::default());
            assert_eq!(b.cycle_idx, Phase::Up);
        }
    }

    #[test]
    fn probe_try_in_the_code_variant_compares_per_round_srtt_additively() {
        // PRE_UP round: samples 40, 48 ms -> srtt 40 + (48 - 40) / 8 = 41 ms (min 40 ms).
        // GUARD round: 41.5, 41.9 ms -> srtt 41.5 + 0.4 / 8 = 41.55 ms: within 41 + 0.8 ms, so
        // the code goes UP, where the thesis (min 41.5 ms > 1.02 · 40 = 40.78 ms) does not.
        for (variant, up) in [("code", true), ("thesis", false)] {
            let mut b = bbr2plus(&format!("variant = \"{variant}\""));
            let tp = in_probe_bw(&mut b, Phase::Refill);
            step(&mut b, &tp, true, &rtt(40_000)); // REFILL ends; PRE_UP's round begins
            assert_eq!(b.cycle_idx, Phase::PreUp);
            step(&mut b, &tp, false, &rtt(48_000));
            step(&mut b, &tp, true, &rtt(41_500)); // PRE_UP ends
            assert_eq!(b.cycle_idx, Phase::Guard);
            let want_ref = if variant == "code" { 41_000 } else { 40_000 };
            assert_eq!(b.ps.probe_try_ref_us, want_ref);
            step(&mut b, &tp, false, &rtt(41_900));
            step(&mut b, &tp, true, &rtt(41_000)); // GUARD ends
            assert_eq!(b.cycle_idx == Phase::Up, up, "{variant}: {:?}", b.cycle_idx);
        }
    }

    #[test]
    fn continuous_probing_goes_up_again_while_post_up_rtt_stays_within_gamma() {
        for (post_up_us, again) in [(40_700, true), (41_000, false)] {
            let mut b = bbr2plus("");
            let mut tp = in_probe_bw(&mut b, Phase::Up);
            b.min_rtt_us = 40_000;
            b.ps.before_probe_us = 40_000;
            b.cycle_mstamp = 0; // UP began long ago
            b.inflight_hi = 1000;
            // Inflight at 1.25 BDP (BDP 34 at 10 Mbit/s, 40 ms): UP is done -> POST_UP at 1.0.
            let full = RateSample {
                prior_in_flight: 60,
                ..rtt(45_000)
            };
            step(&mut b, &tp, false, &full);
            assert_eq!(
                (b.cycle_idx, b.pacing_gain, b.mode(&tp)),
                (Phase::PostUp, 256, "probe_bw_post_up")
            );
            assert!(b.is_probing_bandwidth());
            // Its round: UP's ACKs, min post_up_us.
            tp.delivered += 50;
            step(&mut b, &tp, false, &rtt(post_up_us + 900));
            step(&mut b, &tp, false, &rtt(post_up_us));
            step(&mut b, &tp, true, &rtt(post_up_us + 100));
            if again {
                assert_eq!(b.cycle_idx, Phase::Up);
                assert_eq!(b.ps.before_probe_us, b.ps.prev_round_min_us);
            } else {
                assert_eq!(b.cycle_idx, Phase::Down);
            }
        }
        // Without continuous probing (or in bbr2), UP ends in DOWN.
        for mut b in [bbr2plus("continuous_probing = false"), bbr2("")] {
            let tp = in_probe_bw(&mut b, Phase::Up);
            b.cycle_mstamp = 0;
            b.inflight_hi = 1000;
            step(
                &mut b,
                &tp,
                false,
                &RateSample {
                    prior_in_flight: 60,
                    ..Default::default()
                },
            );
            assert_eq!(b.cycle_idx, Phase::Down, "{}", b.name);
        }
    }

    #[test]
    fn cruise_lasts_the_probe_wait_in_rounds_then_refills() {
        let mut b = bbr2plus("dual_mode = false");
        let tp = in_probe_bw(&mut b, Phase::Cruise);
        b.probe_wait_us = u64::MAX / 4; // the wall clock never fires here
        b.ps.probe_wait_rounds = 9;
        b.inflight_hi = 1000;
        for round in 1..9 {
            step(&mut b, &tp, true, &RateSample::default());
            assert_eq!(b.cycle_idx, Phase::Cruise, "round {round}");
        }
        step(&mut b, &tp, false, &RateSample::default()); // not a round start
        assert_eq!(b.cycle_idx, Phase::Cruise);
        step(&mut b, &tp, true, &RateSample::default());
        assert_eq!(b.cycle_idx, Phase::Refill);
        // bbr2 waits for its 2-3 s clock.
        let mut b = bbr2("");
        let tp = in_probe_bw(&mut b, Phase::Cruise);
        b.probe_wait_us = u64::MAX / 4;
        for _ in 0..20 {
            step(&mut b, &tp, true, &RateSample::default());
        }
        assert_eq!(b.cycle_idx, Phase::Cruise);
    }

    #[test]
    fn dual_mode_counts_cruises_and_switches_at_eta1_and_eta2() {
        let p = Plus::thesis();
        let mut s = PlusState::default();
        // lambda1 · 40 ms = 40000 · 281 / 256 = 43906 µs. One filling cruise: no switch.
        assert_eq!(
            dual_mode_step(&p, &mut s, 44_000, 40_000),
            DualModeStep::Stay
        );
        assert_eq!(s.buffer_filling, 1);
        // A cruise at the threshold resets the count.
        assert_eq!(
            dual_mode_step(&p, &mut s, 43_906, 40_000),
            DualModeStep::Stay
        );
        assert_eq!(s.buffer_filling, 0);
        // Two (eta1) in a row: to BBRv2.
        assert_eq!(
            dual_mode_step(&p, &mut s, 50_000, 40_000),
            DualModeStep::Stay
        );
        assert_eq!(
            dual_mode_step(&p, &mut s, 50_000, 40_000),
            DualModeStep::ToBbr2
        );
        assert!(!s.fast_probing && s.buffer_filling == 0);
        // Back needs eta2 = 4 cruises at most lambda2 · 40 ms = 40000 · 268 / 256 = 41875 µs.
        for _ in 0..3 {
            assert_eq!(
                dual_mode_step(&p, &mut s, 41_875, 40_000),
                DualModeStep::Stay
            );
        }
        assert_eq!(s.buffer_empty, 3);
        assert_eq!(
            dual_mode_step(&p, &mut s, 41_876, 40_000),
            DualModeStep::Stay
        );
        assert_eq!(s.buffer_empty, 0);
        for _ in 0..3 {
            dual_mode_step(&p, &mut s, 40_000, 40_000);
        }
        assert_eq!(
            dual_mode_step(&p, &mut s, 40_000, 40_000),
            DualModeStep::ToPlus
        );
        assert!(s.fast_probing && (s.switches_to_bbr2, s.switches_to_plus) == (1, 1));
        // A cruise without samples changes nothing.
        assert_eq!(
            dual_mode_step(&p, &mut s, u32::MAX, 40_000),
            DualModeStep::Stay
        );
        // The code's form: min(last cruise, min_rtt) + 0.1 · ever-min. With min_rtt 40 ms,
        // ever-min 38 ms and the last cruise at 39 ms: 39 + 3.7 (38000 · 25 / 256 = 3710) ms.
        let c = Plus::code();
        let mut s = PlusState {
            ever_min_rtt_us: 38_000,
            last_cruise_min_us: 39_000,
            ..PlusState::default()
        };
        dual_mode_step(&c, &mut s, 42_710, 40_000);
        assert_eq!(s.buffer_filling, 0);
        dual_mode_step(&c, &mut s, 42_711, 40_000);
        assert_eq!(s.buffer_filling, 1);
    }

    #[test]
    fn dual_mode_restarts_from_startup_and_bbr2_probing_follows() {
        let mut b = bbr2plus("");
        let tp = in_probe_bw(&mut b, Phase::Cruise);
        b.min_rtt_us = 40_000;
        b.probe_wait_us = u64::MAX / 4;
        b.bw_lo = 5000;
        let cruise = |b: &mut Bbr2, rtt_us: i64| {
            b.enter_phase(Phase::Cruise);
            b.ps.probe_wait_rounds = 1;
            step(b, &tp, false, &rtt(rtt_us));
            step(b, &tp, true, &rtt(rtt_us)); // the wait is over: CRUISE ends
        };
        cruise(&mut b, 50_000);
        assert_eq!((b.mode, b.cycle_idx), (Mode::ProbeBw, Phase::Refill));
        cruise(&mut b, 50_000);
        assert_eq!(b.mode, Mode::Startup);
        assert!(!b.full.reached && b.full.bw == 0 && b.bw_lo == u32::MAX && !b.ps.fast_probing);
        // In BBRv2's ProbeBW: REFILL goes straight to UP, UP ends in DOWN, and no CRUISE-round
        // interval (only BBRv2's clock and Reno bound).
        b.mode = Mode::ProbeBw;
        b.full.reached = true;
        b.enter_phase(Phase::Refill);
        step(&mut b, &tp, true, &RateSample::default());
        assert_eq!(b.cycle_idx, Phase::Up);
        b.ps.probe_wait_rounds = 0;
        assert!(!b.plus_probe_rounds_over());
        // With dual mode off, the same cruises never switch.
        let mut b = bbr2plus("dual_mode = false");
        let _ = in_probe_bw(&mut b, Phase::Cruise);
        b.min_rtt_us = 40_000;
        b.probe_wait_us = u64::MAX / 4;
        for _ in 0..5 {
            cruise(&mut b, 50_000);
            assert_eq!(b.mode, Mode::ProbeBw);
        }
    }
}
