//! MPTCP-BBR, the bottleneck-fair coupled BBR of BCCPS: W. Wei, K. Xue, J. Han, Y. Xing,
//! D. S. L. Wei, P. Hong, "BBR-Based Congestion Control and Packet Scheduling for Bottleneck
//! Fairness Considered Multipath TCP in Heterogeneous Wireless Networks", IEEE Trans. Vehicular
//! Technology, 2021, §III-B-2, Eqs. (1)–(6) and Algorithm 1 (research/seed-001.md §2.4).
//!
//! # The algorithm
//!
//! Every subflow runs BBR v1: rove's one BBR (`cc/bbr.rs`, Linux `tcp_bbr.c`), built with an
//! [`MpBbrCoupling`] that supplies what the coupling changes; this module holds the coupling's
//! arithmetic. The subflows of one *shared-bottleneck set* S_i, here one coupling group of the
//! connection's [`CouplingHandle`](super::CouplingHandle), are coupled through their BBR
//! estimates (BtlBW_r, BBR's windowed-max delivery rate, Eq. 5; RTprop_r, its min_rtt):
//!
//! ```text
//!   RTT'  = max_{r∈S} RTprop_r                            (1)  the set's common time base
//!   BDP_r = BtlBW_r · RTT'                                (2)  subflow r's BDP
//!   G_r   = [1.25, 0.75, α, α, α, α, α, α]                (4)  its PROBE_BW pacing-gain cycle
//!   α     = max_{r∈S} BtlBW_r / Σ_{r∈S} BtlBW_r            (6)  the same for every member
//! ```
//!
//! In the six cruise phases the set together paces at Σ_r α·BtlBW_r = max_r BtlBW_r: one BBR
//! flow's rate on the set's best path, split in proportion to the members' own estimates
//! ("bottleneck fairness": the set takes one BBR flow's share at the bottleneck it shares). The
//! 1.25 and 0.75 phases are not scaled, so every member still probes for more bandwidth. RTT' as
//! every member's time base removes BBR's RTT unfairness inside the set (a long-RTT flow queues
//! more per probe; the paper cites Ma et al., arXiv 1706.09115).
//!
//! For a subflow in PROBE_BW this means, with everything else BBR's:
//!
//! * pacing rate = `G_r[phase]` · BtlBW_r (`bbr_set_pacing_rate`, with its 1 % margin);
//! * cwnd target = cwnd_gain · BtlBW_r · RTT' (+ BBR's ACK-aggregation and quantization
//!   allowances), i.e. 2·BDP_r, see `cwnd_cap`;
//! * the inflight targets of the gain cycle use BDP_r: the 1.25 phase lasts until inflight
//!   reaches 1.25·BDP_r (or a loss), the 0.75 phase ends early at BDP_r;
//! * each phase lasts RTT' (`phase_len`) instead of the subflow's own min_rtt.
//!
//! A subflow alone in its group (a singleton set, Algorithm 1 lines 17–18; a group whose other
//! members have no RTT sample yet; a connection with `coupling = "uncoupled"`; a single-path flow
//! with `cc = "mpbbr"`) has RTT' = its own min_rtt and α = 1: it is BBR, ACK for ACK (it even
//! draws its random PROBE_BW start phase from the same stream as `bbr`).
//!
//! # Reading the group
//!
//! Each subflow publishes BtlBW_r (`bbr_bw`, which is the long-term rate while BBR models a
//! policer), RTprop_r and its PROBE_BW phase into its slot at the end of every ACK, and at `init`
//! and idle-restart events. RTT' and α are computed from the group's current members each time
//! they are needed (a scan of at most 8 slots under the handle's lock, no allocation), with the
//! subflow's own estimates as they stand at that moment and the other members' as they last
//! published them. Nothing about the group is kept between ACKs, so a regrouping
//! ([`CouplingHandle::set_group`](super::CouplingHandle::set_group), as a shared-bottleneck
//! detector does) takes effect at the next ACK. A member counts when it counts for the other
//! coupled algorithms (usable, with an RTT sample); it enters RTT' once it has a min_rtt and
//! adds its BtlBW (0 before its first sample) to Σ.
//!
//! Bandwidths are compared in bytes (bbr_bw times the member's MSS). α is applied as a BBR gain,
//! in tcp_bbr.c's 1/256 units (`BBR_UNIT`), rounded to nearest: ⌊(256·max + Σ/2) / Σ⌋, at least
//! 1/256; alone, exactly 256/256.
//!
//! # Parameters (`cc_params`)
//!
//! Every `bbr` key (same meaning and default), and the choices the paper leaves open ([GAP],
//! seed 001 §2.4):
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `cwnd_cap` | `"gain"` | `"gain"`: the PROBE_BW cwnd target is BBR's with RTT', cwnd_gain·BtlBW_r·RTT' = 2·BDP_r. `"bdp"`: Eq. (3) read literally (R_r = 0 while inflight > BDP_r), applied as a cwnd cap of BDP_r = ⌈BtlBW_r·RTT'⌉ packets (at least 4) in PROBE_BW; inflight then cannot reach the 1.25 phase's 1.25·BDP_r target, so that phase ends only on a loss |
//! | `phase_len` | `"group"` | length of a PROBE_BW phase: RTT' (the paper: "the time length of the probing period for all the subflows in a shared-bottleneck set"), or `"own"`: the subflow's own min_rtt, as BBR |
//! | `align_phases` | `false` | `true`: a subflow entering PROBE_BW (from DRAIN, from PROBE_RTT, or at the end of a policed period) takes the gain-cycle phase, and that phase's start time, of the lowest-index other member of its group that is in PROBE_BW, instead of BBR's random phase (BBR's choice when no member is in PROBE_BW). It may so start in the 0.75 phase, which BBR never does. Phases are aligned at entry only: each then ends on its own subflow's ACKs, so they may drift apart |
//! | `rtt_prime` | `"max"` | `"max"`: Eq. (1). `"own"`: each subflow its own RTprop as RTT' (an ablation: no common time base) |
//!
//! # Other choices
//!
//! * α = 1/n_i while no member has a bandwidth sample (Algorithm 1, line 3), n_i being the
//!   members that count [GAP]; from the first sample on, Eq. (6).
//! * [GAP] STARTUP, DRAIN and PROBE_RTT are BBR's unchanged, and their BDP uses the subflow's
//!   own min_rtt: the paper changes only PROBE_BW's gain cycle and the rate rule of Eqs. (2)–(3).
//! * The kind of a PROBE_BW phase (probe, drain, cruise) is read from BBR's own cycle
//!   (`bbr_pacing_gain[cycle_idx]`: 1.25, 0.75, then 1), never from α: `bbr_is_next_cycle_phase`
//!   recognises a cruise phase by its gain being 1.0, and α < 1 in force there must not turn
//!   a cruise phase into a drain phase. BBR's field `pacing_gain` therefore keeps the kernel's
//!   value; α replaces it only where the pacing rate is set (and in telemetry and `path_model`).
//! * While BBR models a policer (`lt_bw`, its long-term rate) it paces at gain 1 in every phase;
//!   so does MPTCP-BBR (no α): lt_bw is what the subflow itself gets through the policer.
//! * [GAP] Restarting from idle in PROBE_BW, BBR paces at gain 1 ("no need for more");
//!   MPTCP-BBR at its cruise gain α.
//!
//! # Where this differs from the paper
//!
//! * The sets are the coupling groups: `coupling = "connection"` makes all of a connection's
//!   subflows one set, and a shared-bottleneck detector regroups them at run time; the paper's
//!   own detector (§2.3) is not part of this module.
//! * Eq. (2)'s max over a window W of "6 to 10 times RTprop" is BBR's max filter over 10
//!   packet-timed rounds.
//! * Eq. (3) is not applied by default (`cwnd_cap`): read literally it caps inflight at one BDP,
//!   which contradicts the 1.25 probe and BBR's cwnd_gain of 2 that the paper keeps.
//! * The summary suggests disabling BBR's long-term policer detection for the reproduction; it
//!   stays BBR's default here (`lt_bw = false` turns it off).
//!
//! # What it does in rove's runs
//!
//! At seed 001's shared bottleneck (Table I, `crates/world/tests/mpbbr.rs`) a two-subflow
//! MPTCP-BBR connection takes 0.28 of a competing BBR flow's goodput, not the paper's ≈ 1: BtlBW
//! is a delivery rate, and cruising at α·BtlBW the subflows deliver, and so estimate, less and
//! less until only their 1.25 probes hold their estimates up (the test file derives and measures
//! it). On disjoint bottlenecks, each subflow alone in its group, it is BBR (ratio 1.00).

use super::super::bbr::{self, Bbr, BBR_UNIT};
use super::super::{params, reject_unknown, CcConfig, CongestionControl, ParamError};
use super::{members, CouplingSlot, SlotState};
use crate::state::TcpState;

/// MPTCP-BBR's own `cc_params` keys (BBR's are accepted too).
pub const PARAM_KEYS: &[&str] = &["cwnd_cap", "phase_len", "align_phases", "rtt_prime"];

/// `cwnd_cap`: the cwnd rule in PROBE_BW.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CwndCap {
    /// cwnd_gain · BtlBW_r · RTT' (BBR's target with RTT').
    Gain,
    /// At most BDP_r = BtlBW_r · RTT' (Eq. 3 literally).
    Bdp,
}

/// `phase_len`: how long a PROBE_BW phase lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseLen {
    /// RTT', the set's.
    Group,
    /// The subflow's own min_rtt (BBR).
    Own,
}

/// `rtt_prime`: what RTT' is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttPrime {
    /// Eq. (1): the largest RTprop of the set.
    Max,
    /// The subflow's own RTprop (ablation).
    Own,
}

/// MPTCP-BBR's settings, from `cc_params` (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub cwnd_cap: CwndCap,
    pub phase_len: PhaseLen,
    pub align_phases: bool,
    pub rtt_prime: RttPrime,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            cwnd_cap: CwndCap::Gain,
            phase_len: PhaseLen::Group,
            align_phases: false,
            rtt_prime: RttPrime::Max,
        }
    }
}

impl Params {
    /// Reads MPTCP-BBR's keys of `t` (unknown keys are rejected by [`build`]).
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        let cwnd_cap = match params::choice(t, "cwnd_cap", "gain", &["gain", "bdp"])? {
            "bdp" => CwndCap::Bdp,
            _ => CwndCap::Gain,
        };
        let phase_len = match params::choice(t, "phase_len", "group", &["group", "own"])? {
            "own" => PhaseLen::Own,
            _ => PhaseLen::Group,
        };
        let rtt_prime = match params::choice(t, "rtt_prime", "max", &["max", "own"])? {
            "own" => RttPrime::Own,
            _ => RttPrime::Max,
        };
        Ok(Params {
            cwnd_cap,
            phase_len,
            align_phases: params::boolean(t, "align_phases", false)?,
            rtt_prime,
        })
    }
}

/// The registry's constructor for `cc = "mpbbr"`: BBR with a coupling, on the subflow's slot
/// (a private one-slot handle when built without one: a single-path flow is BBR).
pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
    let keys: Vec<&str> = bbr::PARAM_KEYS.iter().chain(PARAM_KEYS).copied().collect();
    reject_unknown(config.params, &keys)?;
    let coupling = MpBbrCoupling::new(
        config.coupling.clone().unwrap_or_else(CouplingSlot::alone),
        Params::from_table(config.params)?,
    );
    Ok(Box::new(Bbr::build_coupled(config, coupling)?))
}

/// Where a subflow is in PROBE_BW's gain cycle, as published for `align_phases`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeBwPhase {
    /// bbr->cycle_idx: 0 is the 1.25 phase, 1 the 0.75 one, 2..7 cruise.
    pub cycle_idx: u32,
    /// bbr->cycle_mstamp: when the phase began (delivered_mstamp, µs of the run's clock).
    pub start_us: u64,
}

/// A subflow's own BBR estimates as they stand now (they may be newer than its slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnModel {
    /// bbr_bw: packets per µs << 24 (tcp_bbr.c's BW_UNIT).
    pub bw: u32,
    /// mss_cache, bytes.
    pub mss: u32,
    /// min_rtt, µs; `u32::MAX` before a sample.
    pub min_rtt_us: u32,
}

impl OwnModel {
    fn rate(&self) -> u64 {
        self.bw as u64 * self.mss as u64
    }
}

/// The other counting members of `me`'s group (none when `me` itself is unusable: it is then
/// alone, as a subflow whose path is down).
fn others(slots: &[SlotState], me: usize) -> impl Iterator<Item = &SlotState> {
    let usable = slots[me].usable;
    members(slots, me)
        .filter(move |(i, _)| usable && *i != me)
        .map(|(_, s)| s)
}

/// RTT' (Eq. 1), µs: the largest min_rtt of `me`'s group, its own (`own_min_rtt_us`) included;
/// `u32::MAX` while `me` has no min_rtt (BBR's BDP is then the initial window).
pub fn rtt_prime_us(slots: &[SlotState], me: usize, own_min_rtt_us: u32) -> u32 {
    if own_min_rtt_us == u32::MAX {
        return u32::MAX;
    }
    others(slots, me)
        .map(|s| s.bbr_min_rtt_us)
        .filter(|&rtt| rtt != u32::MAX)
        .fold(own_min_rtt_us, u32::max)
}

/// (max BtlBW, Σ BtlBW, n) over `me`'s group, in bytes per µs << 24, and its counting members.
fn bw_max_sum(slots: &[SlotState], me: usize, own: &OwnModel) -> (u64, u64, u32) {
    let (mut max, mut sum, mut n) = (own.rate(), own.rate(), 1);
    for s in others(slots, me) {
        let rate = s.bbr_bw as u64 * s.mss as u64;
        max = max.max(rate);
        sum += rate;
        n += 1;
    }
    (max, sum, n)
}

/// α (Eq. 6): max BtlBW / Σ BtlBW over `me`'s group; 1/n before any member has a bandwidth
/// sample (Algorithm 1, line 3). 1 alone.
pub fn alpha(slots: &[SlotState], me: usize, own: &OwnModel) -> f64 {
    let (max, sum, n) = bw_max_sum(slots, me, own);
    if sum == 0 {
        1.0 / n as f64
    } else {
        max as f64 / sum as f64
    }
}

/// α as the cruise phases' pacing gain, in BBR_UNIT (256 = 1.0), rounded to nearest, at least 1.
pub fn cruise_gain(slots: &[SlotState], me: usize, own: &OwnModel) -> u32 {
    let (max, sum, n) = bw_max_sum(slots, me, own);
    let (num, den) = if sum == 0 {
        (1, n as u128)
    } else {
        (max as u128, sum as u128)
    };
    ((num * BBR_UNIT as u128 + den / 2) / den).clamp(1, BBR_UNIT as u128) as u32
}

/// The PROBE_BW phase of the lowest-index other member of `me`'s group that is in PROBE_BW.
pub fn reference_phase(slots: &[SlotState], me: usize) -> Option<ProbeBwPhase> {
    others(slots, me).find_map(|s| s.bbr_probe_bw)
}

/// What turns a BBR into an MPTCP-BBR subflow: its coupling slot and settings. BBR asks it for
/// RTT', the phase length, the cruise gain and a phase to align with, and publishes through it.
#[derive(Debug, Clone)]
pub struct MpBbrCoupling {
    slot: CouplingSlot,
    p: Params,
}

impl MpBbrCoupling {
    pub fn new(slot: CouplingSlot, p: Params) -> Self {
        MpBbrCoupling { slot, p }
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    /// The slot's index in its connection's handle.
    pub fn slot_index(&self) -> usize {
        self.slot.index()
    }

    /// Publishes `tp` (window, RTT, MSS) and the subflow's model into its slot.
    pub fn publish(&self, tp: &TcpState, bw: u32, min_rtt_us: u32, phase: Option<ProbeBwPhase>) {
        self.slot.publish(tp, |s| {
            s.bbr_bw = bw;
            s.bbr_min_rtt_us = min_rtt_us;
            s.bbr_probe_bw = phase;
        });
    }

    /// RTT', µs, as `rtt_prime` says.
    pub fn rtt_prime_us(&self, own_min_rtt_us: u32) -> u32 {
        match self.p.rtt_prime {
            RttPrime::Own => own_min_rtt_us,
            RttPrime::Max => self
                .slot
                .read(|slots, me| rtt_prime_us(slots, me, own_min_rtt_us)),
        }
    }

    /// The length of a PROBE_BW phase, µs, as `phase_len` says.
    pub fn phase_len_us(&self, own_min_rtt_us: u32) -> u32 {
        match self.p.phase_len {
            PhaseLen::Own => own_min_rtt_us,
            PhaseLen::Group => self.rtt_prime_us(own_min_rtt_us),
        }
    }

    /// α in BBR_UNIT, for a cruise phase.
    pub fn cruise_gain(&self, own: &OwnModel) -> u32 {
        self.slot.read(|slots, me| cruise_gain(slots, me, own))
    }

    /// α as a number (telemetry).
    pub fn alpha(&self, own: &OwnModel) -> f64 {
        self.slot.read(|slots, me| alpha(slots, me, own))
    }

    /// With `align_phases`, the phase a subflow entering PROBE_BW takes.
    pub fn aligned_phase(&self) -> Option<ProbeBwPhase> {
        if !self.p.align_phases {
            return None;
        }
        self.slot.read(reference_phase)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mbps` Mbit/s of 1500-byte packets in BBR's unit, packets per µs << 24:
    /// mbps · 10^6 / (8 · 1500) / 10^6 · 2^24 = mbps · 2^24 / 12_000 (10 Mbit/s: 13_981).
    fn bw_units(mbps: u64) -> u32 {
        (mbps * (1 << 24) / 12_000) as u32
    }

    fn member(mbps: u64, min_rtt_us: u32) -> SlotState {
        SlotState {
            srtt_us: min_rtt_us as u64,
            bbr_bw: bw_units(mbps),
            bbr_min_rtt_us: min_rtt_us,
            ..Default::default()
        }
    }

    fn own(s: &SlotState) -> OwnModel {
        OwnModel {
            bw: s.bbr_bw,
            mss: s.mss,
            min_rtt_us: s.bbr_min_rtt_us,
        }
    }

    #[test]
    fn alpha_is_the_largest_bandwidth_over_the_sum() {
        // 10 and 20 Mbit/s: α = 20/30 = 2/3, for both members.
        let slots = [member(10, 20_000), member(20, 40_000)];
        for me in 0..2 {
            let a = alpha(&slots, me, &own(&slots[me]));
            assert!((a - 2.0 / 3.0).abs() < 1e-4, "{a}");
            // 256 · 2/3 = 170.67 -> 171.
            assert_eq!(cruise_gain(&slots, me, &own(&slots[me])), 171);
        }
        // Three equal members: 1/3 (85.33 -> 85).
        let slots = [member(10, 20_000); 3];
        let a = alpha(&slots, 1, &own(&slots[1]));
        assert!((a - 1.0 / 3.0).abs() < 1e-12, "{a}");
        assert_eq!(cruise_gain(&slots, 1, &own(&slots[1])), 85);
        // Alone: 1, exactly BBR's cruise gain.
        let slots = [member(10, 20_000)];
        assert_eq!(alpha(&slots, 0, &own(&slots[0])), 1.0);
        assert_eq!(cruise_gain(&slots, 0, &own(&slots[0])), BBR_UNIT);
    }

    #[test]
    fn the_sets_cruise_rates_add_up_to_the_best_members_bandwidth() {
        for mbps in [[10, 20, 0], [5, 7, 30], [12, 12, 12]] {
            let slots: Vec<SlotState> = mbps
                .iter()
                .filter(|&&m| m > 0)
                .map(|&m| member(m, 30_000))
                .collect();
            let best = slots.iter().map(|s| s.bbr_bw).max().unwrap() as f64;
            // Eq. (6) exactly: Σ α·BtlBW_r = max BtlBW.
            let sum: f64 = (0..slots.len())
                .map(|r| alpha(&slots, r, &own(&slots[r])) * slots[r].bbr_bw as f64)
                .sum();
            assert!(
                (sum / best - 1.0).abs() < 1e-12,
                "{mbps:?}: {sum} vs {best}"
            );
            // With α as a 1/256 gain: within half a unit per member.
            let fixed: f64 = (0..slots.len())
                .map(|r| {
                    cruise_gain(&slots, r, &own(&slots[r])) as f64 / 256.0 * slots[r].bbr_bw as f64
                })
                .sum();
            assert!(
                (fixed / best - 1.0).abs() <= slots.len() as f64 * 0.5 / 256.0,
                "{mbps:?}: {fixed} vs {best}"
            );
        }
    }

    #[test]
    fn alpha_is_one_over_n_before_bandwidth_samples() {
        let mut slots = [member(0, 20_000), member(0, 30_000)];
        assert_eq!(alpha(&slots, 0, &own(&slots[0])), 0.5);
        assert_eq!(cruise_gain(&slots, 0, &own(&slots[0])), 128);
        // Once one member has a sample, Eq. (6): max/Σ = 1 for both (the other adds 0).
        slots[1].bbr_bw = bw_units(10);
        assert_eq!(alpha(&slots, 0, &own(&slots[0])), 1.0);
    }

    #[test]
    fn rtt_prime_is_the_sets_largest_rtprop_and_sets_each_members_bdp() {
        let slots = [member(10, 20_000), member(20, 40_000)];
        assert_eq!(rtt_prime_us(&slots, 0, 20_000), 40_000);
        assert_eq!(rtt_prime_us(&slots, 1, 40_000), 40_000);
        // BDP_r of the 10 Mbit/s member over RTT' = 40 ms: 10e6/8 · 0.04 = 50 KB, 33.3 packets
        // of 1500 B, rounded up by bbr_bdp: 34.
        let bdp = bbr::bdp(bw_units(10), rtt_prime_us(&slots, 0, 20_000), BBR_UNIT);
        assert_eq!(bdp, 34);
        // (Exactly: 13_981 · 40_000 / 2^24 = 33.33.)
        assert!((13_981.0 * 40_000.0 / 16_777_216.0 - 50_000.0 / 1500.0f64).abs() < 0.01);
        // A member without an RTT sample, or in another group, does not count; nor does a
        // member's min_rtt before its first sample.
        let mut slots = [member(10, 20_000), member(20, 40_000), member(20, 60_000)];
        slots[1].srtt_us = 0;
        slots[2].group = 9;
        assert_eq!(rtt_prime_us(&slots, 0, 20_000), 20_000);
        slots[1].srtt_us = 40_000;
        slots[1].bbr_min_rtt_us = u32::MAX;
        assert_eq!(rtt_prime_us(&slots, 0, 20_000), 20_000);
        // The subflow's own value is the one it passes (newer than its slot's).
        assert_eq!(rtt_prime_us(&slots, 0, 25_000), 25_000);
        assert_eq!(rtt_prime_us(&slots, 0, u32::MAX), u32::MAX);
        // An unusable subflow (path down) is alone.
        let mut slots = [member(10, 20_000), member(20, 40_000)];
        slots[0].usable = false;
        assert_eq!(rtt_prime_us(&slots, 0, 20_000), 20_000);
        assert_eq!(alpha(&slots, 0, &own(&slots[0])), 1.0);
    }

    #[test]
    fn the_reference_phase_is_the_lowest_index_other_member_in_probe_bw() {
        let phase = |i, t| {
            Some(ProbeBwPhase {
                cycle_idx: i,
                start_us: t,
            })
        };
        let mut slots = [member(10, 20_000); 4];
        assert_eq!(reference_phase(&slots, 0), None);
        slots[2].bbr_probe_bw = phase(5, 1000);
        slots[3].bbr_probe_bw = phase(1, 2000);
        assert_eq!(reference_phase(&slots, 0), phase(5, 1000));
        slots[1].bbr_probe_bw = phase(3, 3000);
        assert_eq!(reference_phase(&slots, 0), phase(3, 3000));
        // Never itself; another group's members do not count.
        assert_eq!(reference_phase(&slots, 1), phase(5, 1000));
        slots[2].group = 1;
        assert_eq!(reference_phase(&slots, 1), phase(1, 2000));
    }

    #[test]
    fn parameters_are_validated() {
        let build_err = |s: &str| {
            let t: toml::Table = toml::from_str(s).unwrap();
            build(&CcConfig::new(&t, 1)).err()
        };
        assert!(build_err("").is_none());
        assert!(build_err(
            "cwnd_cap = \"bdp\"\nphase_len = \"own\"\nalign_phases = true\nrtt_prime = \"own\"\nlt_bw = false\ncwnd_gain = 2.5"
        )
        .is_none());
        let e = build_err("beta = 1").unwrap();
        assert_eq!(e.key, "beta");
        // The accepted list names BBR's keys and MPTCP-BBR's.
        assert!(e.message.contains("lt_bw"), "{}", e.message);
        assert!(
            e.message
                .contains("cwnd_cap, phase_len, align_phases, rtt_prime"),
            "{}",
            e.message
        );
        let e = build_err("cwnd_cap = \"twice\"").unwrap();
        assert_eq!(e.key, "cwnd_cap");
        assert!(e.message.contains("\"gain\", \"bdp\""), "{}", e.message);
        assert_eq!(build_err("phase_len = 1").unwrap().key, "phase_len");
        assert_eq!(build_err("rtt_prime = \"min\"").unwrap().key, "rtt_prime");
        assert_eq!(
            build_err("align_phases = \"yes\"").unwrap().key,
            "align_phases"
        );
        // BBR's own checks still apply.
        assert_eq!(build_err("cwnd_gain = 5").unwrap().key, "cwnd_gain");
        let t: toml::Table = toml::from_str("phase_len = \"own\"\nalign_phases = true").unwrap();
        assert_eq!(
            Params::from_table(&t).unwrap(),
            Params {
                phase_len: PhaseLen::Own,
                align_phases: true,
                ..Params::default()
            }
        );
    }
}

/// MPTCP-BBR driven through BBR's hooks (with `cc/bbr.rs`'s test helpers).
#[cfg(test)]
mod with_bbr {
    use super::super::super::bbr::tests::{
        ack, bbr, established, in_probe_bw, mpbbr, Ack, BW_10MBPS,
    };
    use super::super::super::bbr::{bdp, bw_to_pacing_rate, Bbr};
    use super::super::CouplingHandle;
    use super::*;
    use crate::state::{CaEvent, CaState};

    /// Publishes, for a member `slot` that is not driven, a BBR model of `bw` and `min_rtt_us`.
    fn publish_member(slot: &CouplingSlot, bw: u32, min_rtt_us: u32) {
        let tp = TcpState {
            srtt_us: min_rtt_us as u64,
            ..Default::default()
        };
        MpBbrCoupling::new(slot.clone(), Params::default()).publish(&tp, bw, min_rtt_us, None);
    }

    /// Subflow A (driven; min_rtt 40 ms, 10 Mbit/s) with `params`, in PROBE_BW at `phase`, and
    /// a member B of its group at 10 Mbit/s with an RTprop of 80 ms: α = 1/2, RTT' = 80 ms.
    fn pair(params: &str, phase: u32) -> (CouplingHandle, Bbr, TcpState) {
        let h = CouplingHandle::new();
        let (sa, sb) = (h.subflow(), h.subflow());
        let mut a = mpbbr(params, sa);
        let mut tp = established(&mut a, 0);
        publish_member(&sb, BW_10MBPS, 80_000);
        in_probe_bw(&mut a, &mut tp, BW_10MBPS, phase);
        (h, a, tp)
    }

    /// One ACK 1 ms after the previous one with `in_flight` packets in flight (the defaults
    /// otherwise: 10 Mbit/s samples, RTT 41 ms).
    fn ack_ms(b: &mut Bbr, tp: &mut TcpState, in_flight: u32) {
        ack(
            b,
            tp,
            Ack {
                dt_us: 1000,
                in_flight,
                ..Default::default()
            },
        );
    }

    #[test]
    fn the_gain_vector_over_a_probe_bw_cycle_is_five_quarters_three_quarters_then_six_alphas() {
        let (_h, mut a, mut tp) = pair("extra_acked_gain = 0", 0);
        let rate = |tp: &TcpState, gain| bw_to_pacing_rate(tp, BW_10MBPS, gain);
        // (phase, pacing rate, length) of each phase, from ACKs every ms. Inflight is 150 in
        // the probing phase (above 1.25·BDP_r + budget = 84 + 6 + 2 = 92 with BDP_r over RTT'
        // = 80 ms) and 10 after it: the 0.75 phase then ends at its first ACK (inflight at most
        // BDP_r), while the cruise phases, whose gain α = 1/2 is below 1 too, last RTT' all
        // the same: their kind comes from the cycle, not from the gain.
        let mut phases = vec![];
        let (mut idx, mut start, mut pacing) = (a.cycle_idx(), tp.now, tp.pacing_rate);
        while phases.len() < 9 {
            let in_flight = if a.cycle_idx() == 0 { 150 } else { 10 };
            ack_ms(&mut a, &mut tp, in_flight);
            if a.cycle_idx() != idx {
                phases.push((idx, pacing, (tp.now - start) / 1_000_000));
                (idx, start) = (a.cycle_idx(), tp.now);
            }
            pacing = tp.pacing_rate;
        }
        let (probe, drain, cruise) = (rate(&tp, 320), rate(&tp, 192), rate(&tp, 128));
        assert_eq!((probe, drain, cruise), (1_493_248, 895_949, 597_299));
        assert_eq!(
            phases,
            [
                (0, probe, 81),
                (1, drain, 1),
                (2, cruise, 81),
                (3, cruise, 81),
                (4, cruise, 81),
                (5, cruise, 81),
                (6, cruise, 81),
                (7, cruise, 81),
                (0, probe, 81),
            ]
        );
        // BBR's own field keeps the kernel's gain (1.0 in cruise); what is in force is α.
        ack_ms(&mut a, &mut tp, 10);
        assert_eq!(a.cycle_idx(), 2);
        assert_eq!(a.pacing_gain(), BBR_UNIT);
        let m = a.path_model(&tp).unwrap();
        assert_eq!(m.pacing_gain, 0.5);
    }

    #[test]
    fn cwnd_is_cwnd_gain_times_bdp_over_rtt_prime() {
        // Cruise phase: cwnd target 2·BDP_r = ⌈13_981 · 80_000 · 2 / 2^24⌉ = ⌈133.3⌉ = 134, plus
        // the quantization budget 3 · 2 segments: 140 (BBR with its own 40 ms: 67 + 6 = 73 -> 74).
        assert_eq!(bdp(BW_10MBPS, 80_000, 2 * BBR_UNIT), 134);
        let (_h, mut a, mut tp) = pair("extra_acked_gain = 0", 3);
        tp.snd_cwnd = 300;
        ack_ms(&mut a, &mut tp, 100);
        assert_eq!(tp.snd_cwnd, 140);
        let mut b = bbr("extra_acked_gain = 0");
        let mut tpb = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tpb, BW_10MBPS, 3);
        tpb.snd_cwnd = 300;
        ack_ms(&mut b, &mut tpb, 100);
        assert_eq!(tpb.snd_cwnd, 74);
        // rtt_prime = "own": the subflow's own 40 ms, as BBR (but paced at α).
        let (_h, mut a, mut tp) = pair("extra_acked_gain = 0\nrtt_prime = \"own\"", 3);
        tp.snd_cwnd = 300;
        ack_ms(&mut a, &mut tp, 100);
        assert_eq!(tp.snd_cwnd, 74);
        assert_eq!(tp.pacing_rate, bw_to_pacing_rate(&tp, BW_10MBPS, 128));
    }

    #[test]
    fn cwnd_cap_bdp_holds_cwnd_at_one_bdp_r() {
        // BDP_r = ⌈13_981 · 80_000 / 2^24⌉ = ⌈66.7⌉ = 67, in every PROBE_BW phase.
        for phase in [0, 1, 4] {
            let (_h, mut a, mut tp) = pair("extra_acked_gain = 0\ncwnd_cap = \"bdp\"", phase);
            tp.snd_cwnd = 300;
            ack_ms(&mut a, &mut tp, 100);
            assert_eq!(tp.snd_cwnd, 67, "phase {phase}");
        }
        // Not outside PROBE_BW: STARTUP grows as BBR's.
        let h = CouplingHandle::new();
        let mut a = mpbbr("cwnd_cap = \"bdp\"", h.subflow());
        let mut tp = established(&mut a, 0);
        tp.snd_cwnd = 100;
        ack_ms(&mut a, &mut tp, 50);
        assert_eq!((a.bbr_mode().name(), tp.snd_cwnd), ("startup", 101));
    }

    #[test]
    fn phase_len_own_ends_phases_after_the_subflows_own_min_rtt() {
        for (params, len_ms) in [
            ("", 81),
            ("phase_len = \"own\"", 41),
            ("rtt_prime = \"own\"", 41),
        ] {
            let (_h, mut a, mut tp) = pair(params, 3);
            let start = tp.now;
            while a.cycle_idx() == 3 {
                ack_ms(&mut a, &mut tp, 100);
            }
            assert_eq!((tp.now - start) / 1_000_000, len_ms, "{params}");
        }
    }

    #[test]
    fn regrouping_at_run_time_changes_alpha_on_the_next_ack() {
        let (h, mut a, mut tp) = pair("", 3);
        let rate = |tp: &TcpState, gain| bw_to_pacing_rate(tp, BW_10MBPS, gain);
        ack_ms(&mut a, &mut tp, 100);
        assert_eq!(tp.pacing_rate, rate(&tp, 128)); // α = 10/(10+10)
        h.set_group(1, 5);
        ack_ms(&mut a, &mut tp, 100);
        assert_eq!(tp.pacing_rate, rate(&tp, BBR_UNIT)); // alone: α = 1
        h.set_group(1, 0);
        ack_ms(&mut a, &mut tp, 100);
        assert_eq!(tp.pacing_rate, rate(&tp, 128));
        // B's estimate doubles: α = 20/(10+20) = 2/3, 171/256.
        publish_member(&h.subflow_slot(1), 2 * BW_10MBPS, 80_000);
        ack_ms(&mut a, &mut tp, 100);
        assert_eq!(tp.pacing_rate, rate(&tp, 171));
        // B's path goes down: A is alone.
        h.set_usable(1, false);
        ack_ms(&mut a, &mut tp, 100);
        assert_eq!(tp.pacing_rate, rate(&tp, BBR_UNIT));
    }

    #[test]
    fn align_phases_takes_the_phase_of_the_lowest_index_member_in_probe_bw() {
        let h = CouplingHandle::new();
        let (s0, s1, s2) = (h.subflow(), h.subflow(), h.subflow());
        let (mut b2, mut b1) = (
            mpbbr("align_phases = true", s2),
            mpbbr("align_phases = true", s1),
        );
        let mut tp2 = established(&mut b2, 0);
        let mut tp1 = established(&mut b1, 0);
        // Subflow 0 is in PROBE_BW, phase 5 since 7 ms; subflow 1 in phase 3.
        let tp0 = TcpState {
            srtt_us: 40_000,
            ..Default::default()
        };
        let published = |idx, start_us| {
            Some(ProbeBwPhase {
                cycle_idx: idx,
                start_us,
            })
        };
        MpBbrCoupling::new(s0.clone(), Params::default()).publish(
            &tp0,
            BW_10MBPS,
            40_000,
            published(5, 7000),
        );
        in_probe_bw(&mut b1, &mut tp1, BW_10MBPS, 3);
        assert_eq!(b1.cycle_idx(), 5);
        // Subflow 2 enters PROBE_BW: it takes subflow 0's phase, not subflow 1's nor its own
        // cycle_start.
        ack_ms(&mut b1, &mut tp1, 30);
        in_probe_bw(&mut b2, &mut tp2, BW_10MBPS, 2);
        assert_eq!(b2.cycle_idx(), 5);
        assert_eq!(h.slot(2).bbr_probe_bw, None); // published at its next ACK
        ack_ms(&mut b2, &mut tp2, 30);
        assert_eq!(h.slot(2).bbr_probe_bw, published(5, 7000));
        // With subflow 0 out of PROBE_BW, subflow 1 is the reference; alone, BBR's choice.
        MpBbrCoupling::new(s0, Params::default()).publish(&tp0, BW_10MBPS, 40_000, None);
        in_probe_bw(&mut b2, &mut tp2, BW_10MBPS, 2);
        assert_eq!(b2.cycle_idx(), 5); // subflow 1's (which took 0's)
        h.uncouple(2);
        in_probe_bw(&mut b2, &mut tp2, BW_10MBPS, 2);
        assert_eq!(b2.cycle_idx(), 2);
        // align_phases = false (default): BBR's choice.
        let (_h, a, _tp) = pair("", 6);
        assert_eq!(a.cycle_idx(), 6);
    }

    /// A pseudo-random but fixed script of hook calls: ACKs with varying samples, RTTs,
    /// inflight and losses, recoveries, an RTO, idle restarts, undo; long enough (about 25 s)
    /// to pass STARTUP, DRAIN, PROBE_BW cycles and two PROBE_RTTs. `step(i, call)` runs call `i`.
    fn script(mut each: impl FnMut(&mut dyn FnMut(&mut Bbr, &mut TcpState))) {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..20_000u64 {
            let mut r = |n: u64| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (x >> 33) % n
            };
            let (dt, acked, lost, extra_pkts, rtt, in_flight, round, app_limited) = (
                500 + r(1500),
                1 + r(3) as u32,
                (r(400) == 0) as u32,
                r(4) as i64,
                40_000 + r(5000) as i64,
                r(80) as u32,
                r(25) == 0,
                r(300) == 0,
            );
            // Bandwidth samples grow for the first 2000 ACKs, then plateau near 10 Mbit/s.
            let sample_pkts = (10 + i.min(2000) as i64 / 80) + extra_pkts;
            each(&mut |b: &mut Bbr, tp: &mut TcpState| {
                match i % 4000 {
                    1000 => {
                        b.ssthresh(tp);
                        b.set_state(tp, CaState::Recovery);
                        tp.ca_state = CaState::Recovery;
                    }
                    1100 | 3100 => tp.ca_state = CaState::Open,
                    2000 => {
                        tp.app_limited = tp.delivered.max(1);
                        b.cwnd_event(tp, CaEvent::TxStart);
                    }
                    2001 => tp.app_limited = 0,
                    3000 => {
                        b.ssthresh(tp);
                        b.set_state(tp, CaState::Loss);
                        tp.ca_state = CaState::Loss;
                    }
                    3500 => tp.snd_cwnd = b.undo_cwnd(tp),
                    _ => {}
                }
                ack(
                    b,
                    tp,
                    Ack {
                        dt_us: dt,
                        acked,
                        lost,
                        sample_pkts,
                        interval_us: 40_800,
                        rtt_us: rtt,
                        in_flight,
                        round,
                        app_limited,
                    },
                );
            });
        }
    }

    #[test]
    fn a_lone_subflow_is_bbr_hook_for_hook() {
        // BBR; MPTCP-BBR built without a slot (a single-path flow); and MPTCP-BBR whose group
        // has no other member (its connection's other subflow is in another group, publishing
        // a longer RTT and more bandwidth). Every output after every call is the same.
        let h = CouplingHandle::new();
        let (s0, s1) = (h.subflow(), h.subflow());
        h.set_group(1, 1);
        publish_member(&s1, 3 * BW_10MBPS, 90_000);
        let mut algos = [bbr(""), mpbbr("", CouplingSlot::alone()), mpbbr("", s0)];
        let mut tps: Vec<TcpState> = algos.iter_mut().map(|b| established(b, 0)).collect();
        let mut modes = std::collections::BTreeSet::new();
        let mut phases = std::collections::BTreeSet::new();
        let mut calls = 0;
        script(|call| {
            for (b, tp) in algos.iter_mut().zip(tps.iter_mut()) {
                call(b, tp);
            }
            calls += 1;
            let want = format!("{:?}", tps[0]);
            for k in 1..3 {
                assert_eq!(format!("{:?}", tps[k]), want, "algorithm {k}, call {calls}");
                assert_eq!(
                    (
                        algos[k].bbr_mode(),
                        algos[k].pacing_gain(),
                        algos[k].cwnd_gain()
                    ),
                    (
                        algos[0].bbr_mode(),
                        algos[0].pacing_gain(),
                        algos[0].cwnd_gain()
                    ),
                    "algorithm {k}, call {calls}"
                );
                assert_eq!(algos[k].path_model(&tps[k]), algos[0].path_model(&tps[0]));
            }
            modes.insert(algos[0].bbr_mode().name());
            if algos[0].bbr_mode().name() == "probe_bw" {
                phases.insert(algos[0].cycle_idx());
            }
        });
        // The script did exercise the whole state machine.
        assert_eq!(modes.len(), 4, "{modes:?}");
        assert_eq!(phases.len(), 8, "{phases:?}");
        assert_eq!(algos[2].name(), "mpbbr");
        assert_eq!(
            Some(h.slot(0).bbr_min_rtt_us),
            algos[0].path_model(&tps[0]).unwrap().min_rtt_us
        );
    }
}
