//! BBR v2 ("v2alpha"), as Google's `net/ipv4/tcp_bbr2.c` (github.com/google/bbr, branch
//! v2alpha), the version the BBRv2+ thesis (seed 000, chapter 4) patches.
//!
//! # The model
//!
//! BBRv2 keeps BBR v1's model (a max-filtered bottleneck bandwidth and a min-filtered RTprop,
//! [`super::bbr`]) and adds bounds learned from loss:
//!
//! ```text
//!   max_bw      = max(bw_hi[0], bw_hi[1])       max delivery rate over the last two ProbeBW
//!                                               cycles (the window advances once per cycle)
//!   bw_lo       short-term lower bound on rate      } cut to max(latest, (1 - beta) * itself)
//!   inflight_lo short-term lower bound on inflight  } at the end of every round with a loss,
//!                                                     reset (to infinity) when probing starts
//!   inflight_hi long-term upper bound on inflight: set when a probe's loss rate exceeds
//!               loss_thresh (alpha), raised 1, 2, 4, ... packets per round while probing
//!               up without such loss
//!
//!   bw          = min(max_bw, bw_lo)
//!   pacing_rate = pacing_gain * bw   (less 1 %)
//!   cwnd        = min(cwnd_gain * bw * min_rtt + ACK aggregation + TSO budget,
//!                     cap, inflight_lo),  at least 4
//!   cap         = inflight_hi                       in DOWN, REFILL, UP
//!               = inflight_hi * (1 - headroom)      in CRUISE and PROBE_RTT
//! ```
//!
//! "Too much loss" is judged per rate sample: the packets lost while the sampled packet was in
//! flight exceed `loss_thresh` of what was in flight when it was sent
//! (`bbr2_is_inflight_too_high`).
//!
//! # The state machine
//!
//! ```text
//!             |
//!             V
//!          STARTUP   pacing 2.89, cwnd 2.89. Exits when bw stops growing 25 % for 3
//!             |      rounds, or at the end of a round in Recovery with >= full_loss_cnt (8)
//!             V      loss events and too much loss (then inflight_hi = 1 BDP).
//!           DRAIN    pacing 1/2.89 until inflight <= 1 BDP.
//!             |
//!             V
//!   +-> PROBE_BW: DOWN (0.75) --> CRUISE (1.0) --> REFILL (1.0) --> UP (1.25) --+
//!   |     ^                                                                     |
//!   |     +---------------------------------------------------------------------+
//!   |
//!   +-- PROBE_RTT  (every probe_rtt_win_ms = 5 s without a new RTprop sample: cwnd
//!                  0.5 * BDP for 200 ms and one round, then PROBE_BW at CRUISE)
//! ```
//!
//! * DOWN: pacing 0.75 to drain the probe's queue; picks the next probe time: a wall-clock
//!   wait of 2 s + U[0, 1) s and a Reno-coexistence bound of min(63, target inflight) rounds
//!   (started at 0 or 1 at random). Leaves for CRUISE once inflight <= min(BDP, headroom'd
//!   inflight_hi); for REFILL once the probe time has come.
//! * CRUISE: pacing 1.0; bw_lo/inflight_lo adapt to loss; REFILL when the probe time comes.
//! * REFILL: bw_lo and inflight_lo reset; one round at pacing 1.0 to fill the pipe, then UP.
//! * UP: pacing 1.25, cwnd capped by inflight_hi, which grows exponentially (1, 2, 4, ...
//!   packets per round) while cwnd-limited and the loss rate stays below loss_thresh. UP ends
//!   (to DOWN) when the loss rate goes above loss_thresh (inflight_hi is then cut to
//!   max(tx_in_flight, (1 - beta) * target inflight)), or when inflight has reached 1.25 BDP
//!   after at least one min_rtt.
//! * UP also ends when, after an earlier probe found too much loss, inflight reaches that
//!   probe's inflight_hi ("risky"). When the ACKs of a probe have come back (one round after
//!   DOWN began), the bw_hi window advances; if the probe had stopped as risky and no excess
//!   loss came back, a new probe (REFILL) starts at once.
//!
//! # Around the core
//!
//! * **Loss recovery**: unlike v1 there is no packet conservation and cwnd is not reduced by
//!   the lost packets; loss acts through bw_lo / inflight_lo (per loss round, outside probes)
//!   and inflight_hi (per probe). An RTO (Loss state) seeds inflight_lo with the cwnd from
//!   before it, outside probes, and restarts full-pipe detection; leaving Loss restores the
//!   saved cwnd. A recovery undone as spurious restores bw_lo, inflight_lo and inflight_hi
//!   as they were when it began (`bbr_undo`).
//! * **Rounds, pacing, ACK aggregation, PROBE_RTT's 200 ms / one round** are v1's (see
//!   `bbr.rs`), except: the bandwidth sample rounds up; the aggregation allowance is used in
//!   STARTUP too, with a 1-round window there (`bbr_extra_acked_in_startup`); the cwnd
//!   quantization budget floors cwnd at three TSO bursts instead of adding them
//!   (`bbr_cwnd_tso_budget = 1`); the TSO goal adds 64 KB / 2^(min_rtt / 512 µs).
//! * **RTprop**: the 10 s min_rtt filter is fed by a 5 s one (`probe_rtt_min_us`), whose
//!   expiry triggers PROBE_RTT, so BBRv2 drains for an RTT sample about every 5 s.
//!
//! # Parameters (`cc_params`)
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `loss_thresh` | 0.02 (5/256) | alpha: loss rate per sample above which inflight is too high |
//! | `beta` | 0.3 (76/256) | cut of bw_lo / inflight_lo per loss round, and of inflight_hi |
//! | `headroom` | 0.15 (38/256) | share of inflight_hi left free in CRUISE and PROBE_RTT |
//! | `full_loss_cnt` | 8 | loss events in a STARTUP round needed to exit on loss (0..15; 0 disables) |
//! | `probe_rtt_win_ms` | 5000 | PROBE_RTT when no RTT sample matched RTprop for this long (<= min_rtt_win_sec * 1000) |
//! | `probe_rtt_mode_ms` | 200 | time at the low cwnd in PROBE_RTT; 0 disables PROBE_RTT |
//! | `probe_rtt_cwnd_gain` | 0.5 (128/256) | PROBE_RTT cwnd as a fraction of BDP, 0..1 (0: 4 packets, as v1) |
//! | `min_rtt_win_sec` | 10 | RTprop filter window |
//! | `bw_probe_base_ms` | 2000 | fixed part of the wall-clock wait between probes |
//! | `bw_probe_rand_ms` | 1000 | random part of it, U[0, this) |
//! | `bw_probe_max_rounds` | 63 | the Reno-coexistence bound's ceiling, rounds |
//! | `bw_probe_rand_rounds` | 2 | random start of the round counter, U{0, .., this - 1} |
//! | `extra_acked_gain` | 1 | gain on the ACK-aggregation allowance; 0 disables it |
//!
//! # BBRv2+ (`cc = "bbr2plus"`)
//!
//! The thesis's BBRv2+ is this state machine with the pieces of [`plus`] switched on (its own
//! module documents them and their `cc_params`); "bbr2" has them all off.
//!
//! # BBRv3 (`cc = "bbr3"`)
//!
//! Google's v3 (tcp_bbr.c on the v3 branch) is this state machine with retuned gains and a few
//! fixes, switched on by `Params::v3`; [`v3`] lists each change with its source.
//!
//! Fractions are given as numbers (0.02) and stored as the kernel does, in 1/256 units,
//! truncated (0.3 -> 76/256, as `BBR_UNIT * 30 / 100`). Random choices come from the flow's own
//! stream (`CcConfig::seed`), so runs are reproducible.
//!
//! # Where this differs from tcp_bbr2.c (v2alpha)
//!
//! Read against the v2alpha branch's `tcp_bbr2.c` (the revision with `bbr_cwnd_tso_budget`,
//! `bbr_tso_rtt_shift` and `bbr_extra_acked_in_startup`).
//!
//! * **ECN** (DCTCP-style `ecn_alpha`, the ECN exit of STARTUP, the ECN cut of inflight_lo,
//!   ECN re-probing) is omitted: rove's links do not mark. So is PLB.
//! * **`rs->tx_in_flight`, `rs->lost` and `skb_marked_lost`** are the sender's, as v2alpha's
//!   tcp_rate.c and tcp_mark_skb_lost provide them ([`RateSample::tx_in_flight`],
//!   [`RateSample::lost`], [`CongestionControl::skb_marked_lost`] with the segment's
//!   [`TxRecord`]). rove's segments are one packet each (`tcp_skb_pcount` = 1), and a segment
//!   is never marked lost once SACKed, so the kernel's `!scb->tx.delivered_mstamp` check has
//!   nothing to skip.
//! * Left out: the fast path (`bbr_fast_path`, a CPU saving that does not change the result
//!   when its conditions hold), `usage_based_cwnd` (off by default), `refill_add_inc` (0 by
//!   default), the debug fields. `undo` (on by default) is kept.
//! * As in `bbr.rs`: rove sends no TSO bursts, but the quantization budget is the kernel's
//!   (`bbr_cwnd_tso_budget = 1`: at least three bursts of `bbr_tso_segs_goal`); products the
//!   kernel computes in u64 are computed in u128 and saturated.

use super::bbr::{
    after, bad, bdp, bw_to_pacing_rate, integer, interval_us, jiffies, min_tso_segs,
    msecs_to_jiffies, mstamp_us, us_delta, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT, CWND_GAIN,
    CWND_MIN_TARGET, DRAIN_GAIN, EXTRA_ACKED_GAIN, EXTRA_ACKED_MAX_US, EXTRA_ACKED_WIN_RTTS,
    GAIN_FIELD_MAX, GSO_LEGACY_MAX_SIZE, HIGH_GAIN, HZ, MAX_TCP_HEADER, MIN_RTT_WIN_SEC,
    PACING_SHIFT, PROBE_RTT_MODE_MS, USEC_PER_MSEC,
};
use super::bbr_model::{AckAggregation, FullPipe};
use super::{reject_unknown, CcConfig, CongestionControl, ModelPhase, ParamError, PathModel};
use crate::state::{CaEvent, CaState, RateSample, TcpState, TxRecord, INIT_CWND};
use rove_sim::rng::Stream;

mod kernel;
mod plus;
mod snapshots;
pub use kernel::{bbr2plus_kernel_params, BBR2_PARAM_FIELDS};
use plus::{Plus, PlusState, PLUS_DOWN_SLIGHTLY_GAIN, PLUS_PRE_UP_GAIN};
use snapshots::{SnapRing, TxRecords};

mod v3;

// ---------------------------------------------------------------------------------------------
// Constants of tcp_bbr2.c (v2alpha). Those it keeps from tcp_bbr.c (fixed-point scales, v1's
// gains, full-pipe, min_rtt and ACK-aggregation constants, the TSO sizes) come from bbr.rs.

/// tcp_bbr2.c: bbr_startup_cwnd_gain = BBR_UNIT * 2885 / 1000 + 1 (STARTUP and DRAIN).
const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// tcp_bbr2.c: bbr_pacing_gain[] indexed by enum bbr_pacing_gain_phase
/// (UP = 0: 5/4, DOWN = 1: 3/4, CRUISE = 2: 1, REFILL = 3: 1).
const PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT];
/// tcp_bbr2.c: bbr_bw_probe_pif_gain = BBR_UNIT * 5 / 4: UP ends once inflight reaches this
/// many BDPs (after one min_rtt).
const BW_PROBE_PIF_GAIN: u32 = BBR_UNIT * 5 / 4;
/// tcp_bbr2.c: bbr_full_loss_cnt, loss events in a STARTUP round to exit on loss.
const FULL_LOSS_CNT: u32 = 8;
/// tcp_bbr2.c: loss_events_in_round is a 4-bit saturating counter.
const LOSS_EVENTS_MAX: u32 = 0xF;
/// tcp_bbr2.c: bbr_loss_thresh = BBR_UNIT * 2 / 100 (alpha).
const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// tcp_bbr2.c: bbr_beta = BBR_UNIT * 30 / 100.
const BETA: u32 = BBR_UNIT * 30 / 100;
/// tcp_bbr2.c: bbr_inflight_headroom = BBR_UNIT * 15 / 100.
const HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// tcp_bbr2.c: bbr_bw_probe_max_rounds, ceiling of the Reno-coexistence round bound.
const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// tcp_bbr2.c: bbr_bw_probe_rand_rounds, the round counter starts at U{0, 1}.
const BW_PROBE_RAND_ROUNDS: u32 = 2;
/// tcp_bbr2.c: bbr_bw_probe_base_us = 2 * USEC_PER_SEC.
const BW_PROBE_BASE_MS: u32 = 2000;
/// tcp_bbr2.c: bbr_bw_probe_rand_us = 1 * USEC_PER_SEC.
const BW_PROBE_RAND_MS: u32 = 1000;
/// tcp_bbr2.c: bbr_bw_probe_reno_gain = BBR_UNIT: the round bound is 1.0 * target inflight.
const BW_PROBE_RENO_GAIN: u32 = BBR_UNIT;
/// tcp_bbr2.c: bbr_probe_rtt_win_ms.
const PROBE_RTT_WIN_MS: u32 = 5000;
/// tcp_bbr2.c: bbr_probe_rtt_cwnd_gain = BBR_UNIT * 1 / 2.
const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// tcp_bbr2.c: bbr_bw_probe_up_rounds is capped at 30 (1 << 30 packets per round).
const PROBE_UP_ROUNDS_MAX: u32 = 30;

/// tcp_bbr2.c: bbr_tso_rtt_shift, halve the RTT-based TSO allowance per 2^9 µs of min_rtt.
const TSO_RTT_SHIFT: u32 = 9;

// ---------------------------------------------------------------------------------------------

/// enum bbr_mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// enum bbr_pacing_gain_phase: the PROBE_BW sub-state (index into PACING_GAIN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
    /// BBRv2+ ProbeTry, first round (pacing 1.10).
    PreUp = 4,
    /// BBRv2+ ProbeTry, second round (pacing 1.0), which decides UP or DOWN_SLIGHTLY.
    Guard = 5,
    /// BBRv2+ continuous probing: one round at 1.0 collecting UP's feedback.
    PostUp = 6,
    /// BBRv2+ after a failed ProbeTry (pacing 0.90); otherwise as DOWN.
    DownSlightly = 7,
}

/// The pacing gain of a PROBE_BW sub-state (DOWN's is a parameter: BBRv3 changed it).
fn phase_pacing_gain(p: &Params, phase: Phase) -> u32 {
    match phase {
        Phase::Down => p.probe_down_gain,
        Phase::PreUp => PLUS_PRE_UP_GAIN,
        Phase::Guard | Phase::PostUp => BBR_UNIT,
        Phase::DownSlightly => PLUS_DOWN_SLIGHTLY_GAIN,
        p => PACING_GAIN[p as usize],
    }
}

/// enum bbr_ack_phase: where the ACKs of a bandwidth probe are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

#[derive(Debug, Clone)]
struct Params {
    plus: Plus,
    /// BBRv3's state-machine changes ([`v3`]); off for "bbr2" and "bbr2plus".
    v3: bool,
    /// STARTUP's pacing gain (and the initial pacing rate's), STARTUP's and DRAIN's cwnd gain.
    startup_pacing_gain: u32,
    startup_cwnd_gain: u32,
    /// PROBE_BW DOWN's pacing gain.
    probe_down_gain: u32,
    /// UP's cwnd gain is cwnd_gain + this many quarters (tcp_bbr.c v3: bbr_bw_probe_cwnd_gain;
    /// v2alpha has none: 0).
    bw_probe_cwnd_gain: u32,
    loss_thresh: u32,
    beta: u32,
    headroom: u32,
    full_loss_cnt: u32,
    probe_rtt_win_ms: u32,
    probe_rtt_mode_ms: u32,
    probe_rtt_cwnd_gain: u32,
    min_rtt_win_sec: u32,
    bw_probe_base_ms: u32,
    bw_probe_rand_ms: u32,
    bw_probe_max_rounds: u32,
    bw_probe_rand_rounds: u32,
    extra_acked_gain: u32,
    /// Where rs->tx_in_flight, rs->lost and the lost packets' records come from ("bbr2" and
    /// "bbr2plus": `tx_records`, [`snapshots`]).
    tx_records: TxRecords,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            plus: Plus::default(),
            v3: false,
            startup_pacing_gain: HIGH_GAIN,
            startup_cwnd_gain: STARTUP_CWND_GAIN,
            probe_down_gain: PACING_GAIN[Phase::Down as usize],
            bw_probe_cwnd_gain: 0,
            loss_thresh: LOSS_THRESH,
            beta: BETA,
            headroom: HEADROOM,
            full_loss_cnt: FULL_LOSS_CNT,
            probe_rtt_win_ms: PROBE_RTT_WIN_MS,
            probe_rtt_mode_ms: PROBE_RTT_MODE_MS,
            probe_rtt_cwnd_gain: PROBE_RTT_CWND_GAIN,
            min_rtt_win_sec: MIN_RTT_WIN_SEC,
            bw_probe_base_ms: BW_PROBE_BASE_MS,
            bw_probe_rand_ms: BW_PROBE_RAND_MS,
            bw_probe_max_rounds: BW_PROBE_MAX_ROUNDS,
            bw_probe_rand_rounds: BW_PROBE_RAND_ROUNDS,
            extra_acked_gain: EXTRA_ACKED_GAIN,
            tx_records: TxRecords::PerPacket,
        }
    }
}

const PARAM_KEYS: &[&str] = &[
    "loss_thresh",
    "beta",
    "headroom",
    "full_loss_cnt",
    "probe_rtt_win_ms",
    "probe_rtt_mode_ms",
    "probe_rtt_cwnd_gain",
    "min_rtt_win_sec",
    "bw_probe_base_ms",
    "bw_probe_rand_ms",
    "bw_probe_max_rounds",
    "bw_probe_rand_rounds",
    "extra_acked_gain",
];

/// The keys of the algorithms with an eBPF port ("bbr2", "bbr2plus"), beside [`PARAM_KEYS`].
const PORT_PARAM_KEYS: &[&str] = &["tx_records"];

impl Params {
    /// BBRv2's parameters ("bbr2").
    fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        let keys: Vec<&str> = PARAM_KEYS.iter().chain(PORT_PARAM_KEYS).copied().collect();
        reject_unknown(t, &keys)?;
        Self::parse(t, Params::default())
    }

    /// `tx_records`: "per_packet" (default) or "snapshots" ([`snapshots`]).
    fn parse_tx_records(&mut self, t: &toml::Table) -> Result<(), ParamError> {
        self.tx_records = match crate::cc::params::choice(
            t,
            "tx_records",
            "per_packet",
            &["per_packet", "snapshots"],
        )? {
            "snapshots" => TxRecords::Snapshots,
            _ => TxRecords::PerPacket,
        };
        Ok(())
    }

    fn parse(t: &toml::Table, mut p: Params) -> Result<Self, ParamError> {
        for (key, field) in [
            ("loss_thresh", &mut p.loss_thresh),
            ("beta", &mut p.beta),
            ("headroom", &mut p.headroom),
            ("probe_rtt_cwnd_gain", &mut p.probe_rtt_cwnd_gain),
        ] {
            if let Some(v) = fraction(t, key)? {
                *field = v;
            }
        }
        for (key, field, lo, hi) in [
            (
                "full_loss_cnt",
                &mut p.full_loss_cnt,
                0,
                LOSS_EVENTS_MAX as i64,
            ),
            ("probe_rtt_win_ms", &mut p.probe_rtt_win_ms, 1, 3_600_000),
            ("probe_rtt_mode_ms", &mut p.probe_rtt_mode_ms, 0, 60_000),
            ("min_rtt_win_sec", &mut p.min_rtt_win_sec, 1, 3600),
            ("bw_probe_base_ms", &mut p.bw_probe_base_ms, 0, 3_600_000),
            ("bw_probe_rand_ms", &mut p.bw_probe_rand_ms, 0, 3_600_000),
            ("bw_probe_max_rounds", &mut p.bw_probe_max_rounds, 1, 255),
            ("bw_probe_rand_rounds", &mut p.bw_probe_rand_rounds, 0, 255),
        ] {
            if let Some(v) = integer(t, key, lo, hi)? {
                *field = v;
            }
        }
        if let Some(v) = gain(t, "extra_acked_gain")? {
            p.extra_acked_gain = v;
        }
        p.parse_tx_records(t)?;
        // tcp_bbr2.c: bbr_probe_rtt_win_ms must be <= bbr_min_rtt_win_sec * MSEC_PER_SEC.
        if p.probe_rtt_win_ms > p.min_rtt_win_sec * 1000 {
            return Err(bad(
                "probe_rtt_win_ms",
                format!(
                    "{} ms is longer than the min_rtt filter window ({} s); accepted: at most min_rtt_win_sec * 1000",
                    p.probe_rtt_win_ms, p.min_rtt_win_sec
                ),
            ));
        }
        Ok(p)
    }
}

/// A fraction 0 <= x <= 1 into 1/256 units, truncated as the kernel's `BBR_UNIT * n / 100`.
fn fraction(t: &toml::Table, key: &str) -> Result<Option<u32>, ParamError> {
    let Some(x) = crate::cc::params::number(t, key)? else {
        return Ok(None);
    };
    if !x.is_finite() || !(0.0..=1.0).contains(&x) {
        return Err(bad(
            key,
            format!("expected a fraction from 0 to 1, got {x}"),
        ));
    }
    Ok(Some((x * BBR_UNIT as f64 + 1e-9).floor() as u32))
}

/// A gain 0 <= g < 4 into BBR_UNIT fixed point, rounded to nearest.
/// A BBRv2+ RTT factor (θ, γ): a gain of at least 1.
fn factor_at_least_one(t: &toml::Table, key: &str) -> Result<Option<u32>, ParamError> {
    match gain(t, key)? {
        Some(v) if v < BBR_UNIT => Err(bad(
            key,
            format!(
                "expected a factor from 1 to 4, got {}",
                v as f64 / BBR_UNIT as f64
            ),
        )),
        other => Ok(other),
    }
}

fn gain(t: &toml::Table, key: &str) -> Result<Option<u32>, ParamError> {
    let Some(x) = crate::cc::params::number(t, key)? else {
        return Ok(None);
    };
    let units = (x * BBR_UNIT as f64).round();
    if !x.is_finite() || units < 0.0 || units > GAIN_FIELD_MAX as f64 {
        return Err(bad(
            key,
            format!("expected a gain with 0 <= gain < 4, got {x}"),
        ));
    }
    Ok(Some(units as u32))
}

// ---------------------------------------------------------------------------------------------

/// BBRv2's congestion-control block (struct bbr in tcp_bbr2.c).
pub struct Bbr2 {
    /// "bbr2", "bbr2plus" or "bbr3".
    name: &'static str,
    p: Params,
    rng: Stream,

    min_rtt_us: u32,
    min_rtt_stamp: u32,
    probe_rtt_done_stamp: u32,
    /// Min RTT in the probe_rtt_win_ms window, µs, and when it was taken (jiffies).
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: u32,
    next_rtt_delivered: u64,
    cycle_mstamp: u64,
    mode: Mode,
    prev_ca_state: CaState,
    /// min(cwnd at init, 127) (bbr->init_cwnd).
    init_cwnd: u32,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    pacing_gain: u32,
    cwnd_gain: u32,
    full: FullPipe,
    /// BBRv3's bbr->full_bw_now: bw has plateaued (3 rounds without 25 % growth) since the
    /// estimator was last reset. Always false for "bbr2" and "bbr2plus".
    full_bw_now: bool,
    /// This ACK's delivery-rate sample (bbr_context.sample_bw), BW_UNIT.
    sample_bw: u32,
    cycle_idx: Phase,
    has_seen_rtt: bool,
    prior_cwnd: u32,

    ack_aggr: AckAggregation,

    // BBRv2 model.
    /// Max delivery rate of the previous and the current probe cycle.
    bw_hi: [u32; 2],
    /// Lower bound on the rate; u32::MAX when unset.
    bw_lo: u32,
    /// Upper bound on inflight; u32::MAX when unset.
    inflight_hi: u32,
    /// Lower bound on inflight; u32::MAX when unset.
    inflight_lo: u32,
    /// Max sample rate and delivered count over the current loss round.
    bw_latest: u32,
    inflight_latest: u32,
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_events_in_round: u32,
    /// Rounds since the last probe (the Reno-coexistence counter).
    rounds_since_probe: u32,
    /// Wall-clock wait before the next probe, µs.
    probe_wait_us: u64,
    /// Packets ACKed per inflight_hi increment in UP, and the running count.
    probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    bw_probe_up_rounds: u32,
    /// The ACKs being received are of a bandwidth probe (react to loss once per probe).
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    ack_phase: AckPhase,
    /// bw_lo, inflight_lo, inflight_hi when recovery began (for undo).
    undo_bw_lo: u32,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,

    /// BBRv2+ state (Table 4.1, seed 000); unused by "bbr2".
    ps: PlusState,

    /// The eBPF port's send-time snapshots (`tx_records = "snapshots"`), else None.
    snaps: Option<Box<SnapRing>>,
}

impl Bbr2 {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        let p = Params::from_table(config.params)?;
        Ok(Box::new(Bbr2::new(p, config.seed)))
    }

    /// "bbr2plus": this state machine with the BBRv2+ pieces on (Table 4.2 defaults).
    pub fn build_plus(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        let p = Params::from_table_plus(config.params)?;
        let mut b = Bbr2::new(p, config.seed);
        b.name = "bbr2plus";
        Ok(Box::new(b))
    }

    fn new(p: Params, seed: u64) -> Self {
        let (pacing_gain, cwnd_gain) = (p.startup_pacing_gain, p.startup_cwnd_gain);
        let snaps = (p.tx_records == TxRecords::Snapshots).then(Box::default);
        Bbr2 {
            name: "bbr2",
            p,
            rng: Stream::new(seed, "bbr2"),
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_min_us: u32::MAX,
            probe_rtt_min_stamp: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            init_cwnd: INIT_CWND,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            pacing_gain,
            cwnd_gain,
            full: FullPipe::default(),
            full_bw_now: false,
            sample_bw: 0,
            cycle_idx: Phase::Cruise,
            has_seen_rtt: false,
            prior_cwnd: 0,
            ack_aggr: AckAggregation::default(),
            bw_hi: [0; 2],
            bw_lo: u32::MAX,
            inflight_hi: u32::MAX,
            inflight_lo: u32::MAX,
            bw_latest: 0,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            loss_events_in_round: 0,
            rounds_since_probe: 0,
            probe_wait_us: 0,
            probe_up_cnt: u32::MAX,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            ack_phase: AckPhase::Init,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            ps: PlusState::default(),
            snaps,
        }
    }

    /// The PROBE_BW sub-state (meaningful in PROBE_BW only).
    #[allow(dead_code)]
    pub fn phase(&self) -> Phase {
        self.cycle_idx
    }

    #[allow(dead_code)]
    pub fn bbr_mode(&self) -> Mode {
        self.mode
    }
}

impl Bbr2 {
    // -----------------------------------------------------------------------------------------
    // Estimates

    /// bbr_max_bw: max(bw_hi[0], bw_hi[1]).
    fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// bbr_bw: min(max_bw, bw_lo).
    fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }

    // -----------------------------------------------------------------------------------------
    // Pacing (as tcp_bbr.c)

    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpState) {
        let rtt_us = if tp.srtt_us > 0 {
            self.has_seen_rtt = true;
            tp.srtt_us.max(1)
        } else {
            USEC_PER_MSEC
        };
        let bw = (tp.snd_cwnd as u64 * BW_UNIT / rtt_us).min(u32::MAX as u64) as u32;
        tp.pacing_rate = bw_to_pacing_rate(tp, bw, self.p.startup_pacing_gain);
    }

    fn set_pacing_rate(&mut self, tp: &mut TcpState, bw: u32, gain: u32) {
        let rate = bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full.reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// bbr_tso_segs_goal: about 1 ms of data at the pacing rate, plus an allowance of
    /// 64 KB / 2^(min_rtt / 512 µs) (bbr_tso_rtt_shift), at most 64 KB.
    fn tso_segs_goal(&self, tp: &TcpState) -> u32 {
        let min_segs = min_tso_segs(tp);
        let mut bytes = tp.pacing_rate >> PACING_SHIFT;
        let r = self.min_rtt_us >> TSO_RTT_SHIFT;
        if r < u32::BITS {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
        let bytes = bytes.min(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
        ((bytes / tp.mss_cache.max(1) as u64) as u32).max(min_segs)
    }

    // -----------------------------------------------------------------------------------------
    // Inflight arithmetic

    /// bbr_bdp: ceil(bw · min_rtt · gain) packets; the initial window before any RTT.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        bdp(bw, self.min_rtt_us, gain)
    }

    /// bbr_quantization_budget with bbr_cwnd_tso_budget = 1 ("flooring", v2alpha's default):
    /// at least three TSO bursts and 4 packets; 2 more packets in UP (v2's cycle_idx 0).
    fn quantization_budget(&self, tp: &TcpState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(tp)).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// bbr_inflight: BDP · gain plus the quantization budget.
    fn inflight(&self, tp: &TcpState, bw: u32, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// bbr2_target_inflight: min(1 BDP at the current bw, cwnd), the volume a Reno flow would
    /// aim for.
    fn target_inflight(&self, tp: &TcpState) -> u32 {
        self.inflight(tp, self.bw(), BBR_UNIT).min(tp.snd_cwnd)
    }

    /// bbr2_inflight_with_headroom: inflight_hi less `headroom` of it (at least 1 packet).
    fn inflight_with_headroom(&self) -> u32 {
        headroom_cap(self.inflight_hi, self.p.headroom)
    }

    fn packets_in_net_at_edt(&self, tp: &TcpState, inflight_now: u32) -> u32 {
        let now = tp.now;
        let edt = tp.tcp_wstamp_ns.max(now);
        let interval_us = (edt - now) / 1000;
        let interval_delivered =
            ((self.bw() as u128 * interval_us as u128) >> BW_SCALE).min(u32::MAX as u128) as u32;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(tp);
        }
        inflight_at_edt.saturating_sub(interval_delivered)
    }

    fn ack_aggregation_cwnd(&self) -> u32 {
        // bbr_extra_acked_in_startup = 1: also before the pipe is full.
        if self.p.extra_acked_gain == 0 {
            return 0;
        }
        let max_aggr_cwnd = (self.bw() as u64 * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr_cwnd = ((self.p.extra_acked_gain as u64 * self.ack_aggr.extra_acked() as u64)
            >> BBR_SCALE) as u32;
        aggr_cwnd.min(max_aggr_cwnd)
    }

    /// bbr2_probe_rtt_cwnd: probe_rtt_cwnd_gain · BDP, at least 4 packets.
    fn probe_rtt_cwnd(&self) -> u32 {
        if self.p.probe_rtt_cwnd_gain == 0 {
            return CWND_MIN_TARGET;
        }
        self.bdp(self.bw(), self.p.probe_rtt_cwnd_gain)
            .max(CWND_MIN_TARGET)
    }

    // -----------------------------------------------------------------------------------------
    // cwnd

    fn save_cwnd(&mut self, tp: &TcpState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// bbr2_set_cwnd: toward cwnd_gain · BDP (+ aggregation, + TSO budget).
    fn set_cwnd(&mut self, tp: &mut TcpState, acked: u32, bw: u32, gain: u32) {
        // v2alpha has no packet conservation in recovery: losses act through inflight_lo.
        let mut cwnd = tp.snd_cwnd;
        if acked > 0 {
            let mut target = self.compensated_bdp(bw, gain);
            target = target.saturating_add(self.ack_aggregation_cwnd());
            target = self.quantization_budget(tp, target);
            if self.full.reached {
                cwnd = cwnd.saturating_add(acked).min(target);
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// bbr2_bound_cwnd_for_inflight_model: cap cwnd by inflight_hi (with headroom in CRUISE
    /// and PROBE_RTT) and by inflight_lo.
    fn bound_cwnd_for_inflight_model(&self, tp: &mut TcpState) {
        let mut cap = u32::MAX;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt
            || (self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Cruise)
        {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        tp.snd_cwnd = tp.snd_cwnd.min(cap);
    }

    // -----------------------------------------------------------------------------------------
    // Congestion signals and bounds

    /// bbr2_take_bw_hi_sample.
    fn take_bw_hi_sample(&mut self, bw: u32) {
        self.bw_hi[1] = self.bw_hi[1].max(bw);
    }

    /// bbr2_advance_bw_hi_filter: forget the older cycle's max.
    fn advance_bw_hi_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return; // no samples in this cycle yet
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// bbr2_reset_lower_bounds.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = u32::MAX;
        self.inflight_lo = u32::MAX;
    }

    /// bbr2_reset_congestion_signals.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// bbr2_is_probing_bandwidth: STARTUP, REFILL or UP (the lower bounds do not adapt then).
    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw
                && matches!(
                    self.cycle_idx,
                    Phase::Refill | Phase::Up | Phase::PreUp | Phase::Guard | Phase::PostUp
                ))
    }

    /// bbr2_adapt_lower_bounds: once per round with a loss, outside bandwidth probes, cut
    /// bw_lo and inflight_lo by beta (not below what the round delivered).
    fn adapt_lower_bounds(&mut self, tp: &TcpState) {
        if self.is_probing_bandwidth() {
            return;
        }
        if self.loss_in_round {
            // bbr2_init_lower_bounds
            if self.bw_lo == u32::MAX {
                self.bw_lo = self.max_bw();
            }
            if self.inflight_lo == u32::MAX {
                self.inflight_lo = tp.snd_cwnd;
            }
            // bbr2_loss_lower_bounds
            let (bw_lo, inflight_lo) = loss_lower_bounds(
                self.bw_lo,
                self.inflight_lo,
                self.bw_latest,
                self.inflight_latest,
                self.p.beta,
            );
            self.bw_lo = bw_lo;
            self.inflight_lo = inflight_lo;
        }
        self.bw_lo = self.bw_lo.max(1);
    }

    /// bbr2_update_congestion_signals: bw_hi sample, loss-round bookkeeping, lower bounds.
    fn update_congestion_signals(&mut self, tp: &TcpState, rs: &RateSample, sample_bw: u32) {
        self.loss_round_start = false;
        if interval_us(rs).is_none() || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.take_bw_hi_sample(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self
            .inflight_latest
            .max(rs.delivered.max(0).min(u32::MAX as i64) as u32);
        if rs.prior_delivered < self.loss_round_delivered {
            return;
        }
        self.loss_round_delivered = tp.delivered;
        self.loss_round_start = true;
        self.adapt_lower_bounds(tp);
        self.loss_in_round = false;
        if !self.p.v3 {
            self.advance_latest_delivery_signals(rs, sample_bw);
        }
    }

    /// The per-round restart of the "latest" filters: this sample's rate and volume. v2alpha
    /// does it inside update_congestion_signals; v3 at the end of bbr_main
    /// (bbr_advance_latest_delivery_signals).
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u32) {
        self.bw_latest = sample_bw;
        self.inflight_latest = rs.delivered.max(0).min(u32::MAX as i64) as u32;
    }

    /// bbr2_is_inflight_too_high: lost > loss_thresh · tx_in_flight.
    fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        loss_too_high(sat_u32(rs.lost), rs.tx_in_flight, self.p.loss_thresh)
    }

    /// bbr2_handle_inflight_too_high: cut inflight_hi to max(tx_in_flight, (1-beta) · target
    /// inflight) and stop probing.
    fn handle_inflight_too_high(&mut self, tp: &TcpState, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false; // react once per probe
        if !rs.is_app_limited {
            self.inflight_hi =
                inflight_hi_cut(rs.tx_in_flight, self.target_inflight(tp), self.p.beta);
        }
        if self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Up | Phase::PostUp) {
            self.start_bw_probe_down(tp);
        }
    }

    /// bbr2_raise_inflight_hi_slope: in UP, inflight_hi grows by 1 << rounds packets in this
    /// round: one packet per cwnd / 2^rounds packets ACKed.
    fn raise_inflight_hi_slope(&mut self, tp: &TcpState) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(PROBE_UP_ROUNDS_MAX);
        self.probe_up_cnt = (tp.snd_cwnd / growth_this_round).max(1);
    }

    /// bbr2_probe_inflight_hi_upward.
    fn probe_inflight_hi_upward(&mut self, tp: &TcpState, rs: &RateSample) {
        if !tp.is_cwnd_limited() || tp.snd_cwnd < self.inflight_hi {
            if !self.p.v3 {
                self.bw_probe_up_acks = 0; // v2alpha: "don't accumulate unused credits"
            }
            return; // inflight_hi is not in use: do not grow it
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    /// bbr2_adapt_upper_bounds: follow the probe's ACKs, cut inflight_hi on excess loss or
    /// raise it where more proved safe. Returns true when it decided a state transition.
    fn adapt_upper_bounds(&mut self, tp: &TcpState, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The ACKs of the probe are all back.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited && self.probe_end_bw_advance() {
                self.advance_bw_hi_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, rs);
            }
        } else {
            if self.inflight_hi == u32::MAX {
                return false;
            }
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
                self.probe_inflight_hi_upward(tp, rs);
            }
        }
        false
    }

    /// bbr2_skb_marked_lost for a lost skb of `pcount` packets whose send-time records are
    /// `rs.tx_in_flight`, `rs.lost` (packets lost since it was sent) and `rs.is_app_limited`:
    /// the loss round starts at the first loss; while probing, a loss rate above loss_thresh
    /// cuts inflight_hi to where the rate crossed it (bbr2_inflight_hi_from_lost_skb) and ends
    /// the probe. v2alpha calls it per lost skb (pcount 1 here: rove's segments are one
    /// packet); the eBPF port once per ACK for the ACK's losses ([`snapshots`]).
    fn losses_marked(&mut self, tp: &TcpState, rs: &RateSample, pcount: u32) {
        if !self.loss_in_round {
            self.loss_round_delivered = tp.delivered; // first loss in this round trip
        }
        self.loss_in_round = true;
        if !self.bw_probe_samples {
            return; // not a packet sent while probing for bandwidth
        }
        if self.is_inflight_too_high(rs) {
            let mut cut = *rs;
            cut.tx_in_flight = inflight_hi_from_lost(
                rs.tx_in_flight,
                sat_u32(rs.lost),
                self.p.loss_thresh,
                pcount,
            );
            self.handle_inflight_too_high(tp, &cut);
        }
    }

    // -----------------------------------------------------------------------------------------
    // PROBE_BW sub-states

    fn random_below(&mut self, n: u32) -> u32 {
        if n == 0 {
            return 0;
        }
        ((self.rng.uniform() * n as f64) as u32).min(n - 1)
    }

    /// bbr2_pick_probe_wait: 0 or 1 rounds already counted; 2 s + U[0, 1 s) of wall clock.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.random_below(self.p.bw_probe_rand_rounds);
        let rand_us =
            (self.rng.uniform() * self.p.bw_probe_rand_ms as f64 * USEC_PER_MSEC as f64) as u64;
        self.probe_wait_us = self.p.bw_probe_base_ms as u64 * USEC_PER_MSEC + rand_us;
    }

    /// bbr2_start_bw_probe_up.
    fn start_bw_probe_up(&mut self, tp: &TcpState) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_mstamp = mstamp_us(tp.now);
        self.v3_on_probe_up();
        self.enter_phase(Phase::Up);
        self.plus_on_probe_up();
        self.raise_inflight_hi_slope(tp);
    }

    /// bbr2_start_bw_probe_refill: forget the lower bounds, refill the pipe for a round.
    fn start_bw_probe_refill(&mut self, tp: &TcpState, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.enter_phase(Phase::Refill);
    }

    /// bbr2_start_bw_probe_down.
    fn start_bw_probe_down(&mut self, tp: &TcpState) {
        self.reset_congestion_signals();
        self.probe_up_cnt = u32::MAX;
        self.pick_probe_wait();
        self.plus_pick_probe_wait_rounds();
        self.cycle_mstamp = mstamp_us(tp.now);
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.enter_phase(Phase::Down);
    }

    /// bbr2_start_bw_probe_cruise.
    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != u32::MAX {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.enter_phase(Phase::Cruise);
    }

    /// bbr2_has_elapsed_in_phase.
    fn has_elapsed_in_phase(&self, tp: &TcpState, interval_us: u64) -> bool {
        mstamp_us(tp.now) > self.cycle_mstamp + interval_us
    }

    /// bbr2_is_reno_coexistence_probe_time: probe at least every min(63, target inflight)
    /// rounds, about as often as Reno would grow its window by the same amount.
    fn is_reno_coexistence_probe_time(&self, tp: &TcpState) -> bool {
        let target = self.target_inflight(tp);
        let reno_rounds = ((target as u64 * BW_PROBE_RENO_GAIN as u64) >> BBR_SCALE) as u32;
        let rounds = self.p.bw_probe_max_rounds.min(reno_rounds);
        self.rounds_since_probe >= rounds
    }

    /// bbr2_check_time_to_probe_bw's test: the wall-clock wait or the Reno-coexistence bound
    /// (and, in BBRv2+'s ProbeBW, the CRUISE-round wait).
    fn is_time_to_probe_bw(&self, tp: &TcpState) -> bool {
        self.has_elapsed_in_phase(tp, self.probe_wait_us)
            || self.is_reno_coexistence_probe_time(tp)
            || self.plus_probe_rounds_over()
    }

    /// bbr2_check_time_to_cruise: below the headroom'd inflight_hi and at most one BDP.
    fn check_time_to_cruise(&self, tp: &TcpState, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// bbr2_update_cycle_phase.
    fn update_cycle_phase(&mut self, tp: &TcpState, rs: &RateSample) {
        if !self.full.reached {
            return;
        }
        if self.adapt_upper_bounds(tp, rs) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.plus_count_cruise_round();
                if self.is_time_to_probe_bw(tp) {
                    if self.plus_end_cruise() {
                        return; // Algorithm 2 restarted from STARTUP
                    }
                    self.start_bw_probe_refill(tp, 0);
                }
            }
            Phase::Refill => {
                if self.round_start {
                    if self.plus_after_refill() {
                        self.enter_phase(Phase::PreUp);
                    } else {
                        self.bw_probe_samples = true;
                        self.start_bw_probe_up(tp);
                    }
                }
            }
            Phase::PreUp | Phase::Guard => self.plus_probe_try_step(tp),
            Phase::PostUp => self.plus_post_up_step(tp),
            Phase::Up => {
                let mut is_risky = false;
                let mut is_queuing = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    is_risky = true;
                } else if self.p.v3 {
                    is_queuing = self.v3_probe_up_plateaued(tp);
                } else if us_delta(mstamp_us(tp.now), self.cycle_mstamp) > self.min_rtt_us as u64
                    && inflight >= self.inflight(tp, bw, BW_PROBE_PIF_GAIN)
                {
                    is_queuing = true;
                }
                if is_risky {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(tp);
                } else if is_queuing {
                    self.prev_probe_too_high = false;
                    self.plus_end_probe_up(tp);
                }
            }
            Phase::Down | Phase::DownSlightly => {
                if self.is_time_to_probe_bw(tp) {
                    self.start_bw_probe_refill(tp, 0);
                    return;
                }
                if self.check_time_to_cruise(tp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // STARTUP, DRAIN, PROBE_RTT

    /// bbr_check_full_bw_reached (as v1).
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.p.v3 {
            return self.v3_check_full_bw_reached(rs);
        }
        let max_bw = self.max_bw();
        self.full.check(self.round_start, rs, max_bw);
    }

    /// bbr_reset_full_bw (v3; v2alpha clears full_bw and full_bw_cnt where it restarts the
    /// estimator, and has no full_bw_now).
    fn reset_full_bw(&mut self) {
        self.full.bw = 0;
        self.full.cnt = 0;
        self.full_bw_now = false;
    }

    /// bbr2_check_loss_too_high_in_startup: at the end of a round in Recovery with at least
    /// full_loss_cnt loss events and a loss rate above loss_thresh, the pipe is full; the BDP
    /// becomes inflight_hi.
    fn check_loss_too_high_in_startup(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.full.reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < LOSS_EVENTS_MAX {
            self.loss_events_in_round += 1;
        }
        if self.p.full_loss_cnt > 0
            && self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.p.full_loss_cnt
            && self.is_inflight_too_high(rs)
        {
            // bbr2_handle_queue_too_high_in_startup; v3 keeps at least what the round delivered.
            self.full.reached = true;
            let bdp = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.inflight_hi = if self.p.v3 {
                bdp.max(self.inflight_latest)
            } else {
                bdp
            };
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// bbr2_check_drain.
    fn check_drain(&mut self, tp: &mut TcpState) {
        if self.mode == Mode::Startup && self.full.reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight())
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
        }
    }

    /// bbr2_exit_probe_rtt: to PROBE_BW (DOWN then CRUISE at once), or back to STARTUP.
    fn exit_probe_rtt(&mut self, tp: &TcpState) {
        self.reset_lower_bounds();
        if self.full.reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// bbr2_check_probe_rtt_done.
    fn check_probe_rtt_done(&mut self, tp: &mut TcpState) {
        let now = jiffies(tp.now);
        if !(self.probe_rtt_done_stamp != 0 && after(now, self.probe_rtt_done_stamp)) {
            return;
        }
        self.probe_rtt_min_stamp = now; // next PROBE_RTT in probe_rtt_win_ms
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(tp);
    }

    /// bbr2_update_min_rtt: the 5 s probe_rtt_min filter (PROBE_RTT trigger) feeding the
    /// 10 s min_rtt filter; PROBE_RTT entry and exit.
    fn update_min_rtt(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let now = jiffies(tp.now);
        let probe_rtt_expired = after(
            now,
            self.probe_rtt_min_stamp
                .wrapping_add(msecs_to_jiffies(self.p.probe_rtt_win_ms)),
        );
        if rs.rtt_ns >= 0 {
            let rtt = (rs.rtt_ns as u64 / 1000).min(u32::MAX as u64) as u32;
            // v2alpha refreshes on an equal RTT (<=), v3 only on a lower one (<).
            let lower = rtt < self.probe_rtt_min_us || (rtt == self.probe_rtt_min_us && !self.p.v3);
            if lower || probe_rtt_expired {
                self.probe_rtt_min_us = rtt;
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = after(
            now,
            self.min_rtt_stamp
                .wrapping_add(self.p.min_rtt_win_sec.wrapping_mul(HZ)),
        );
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if self.p.probe_rtt_mode_ms > 0
            && probe_rtt_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            tp.app_limited = (tp.delivered + tp.packets_in_flight() as u64).max(1);
            if self.probe_rtt_done_stamp == 0 && tp.packets_in_flight() <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp =
                    now.wrapping_add(msecs_to_jiffies(self.p.probe_rtt_mode_ms));
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// bbr_update_ack_aggregation (as v1).
    fn update_ack_aggregation(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.p.extra_acked_gain == 0 || rs.acked_sacked == 0 || interval_us(rs).is_none() {
            return;
        }
        // bbr_extra_acked_in_startup: a 1-round window until the pipe is full.
        let win_rtts = if self.full.reached {
            EXTRA_ACKED_WIN_RTTS
        } else {
            1
        };
        let bw = self.bw();
        self.ack_aggr.update(tp, rs, self.round_start, bw, win_rtts);
    }

    /// bbr_update_round_start, with v2's rounds_since_probe counter.
    fn update_round_start(&mut self, tp: &TcpState, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_ns <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.round_start = true;
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
        }
    }

    /// bbr2_update_gains.
    fn update_gains(&mut self) {
        let (pacing, cwnd) = match self.mode {
            Mode::Startup => (self.p.startup_pacing_gain, self.p.startup_cwnd_gain),
            Mode::Drain => (DRAIN_GAIN, self.p.startup_cwnd_gain),
            Mode::ProbeBw if self.cycle_idx == Phase::Up => (
                phase_pacing_gain(&self.p, Phase::Up),
                CWND_GAIN + BBR_UNIT * self.p.bw_probe_cwnd_gain / 4,
            ),
            Mode::ProbeBw => (phase_pacing_gain(&self.p, self.cycle_idx), CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }
}

fn sat_u32(x: u64) -> u32 {
    x.min(u32::MAX as u64) as u32
}

/// bbr2_is_inflight_too_high's test: lost > tx_in_flight · loss_thresh (1/256 units).
fn loss_too_high(lost: u32, tx_in_flight: u32, loss_thresh: u32) -> bool {
    if lost == 0 || tx_in_flight == 0 {
        return false;
    }
    let thresh = (tx_in_flight as u64 * loss_thresh as u64) >> BBR_SCALE;
    lost as u64 > thresh
}

/// bbr2_inflight_hi_from_lost_skb for a lost skb of `pcount` packets: the inflight at which the
/// loss rate crossed loss_thresh, solving (lost_prev + prefix) / (inflight_prev + prefix) =
/// loss_thresh.
fn inflight_hi_from_lost(tx_in_flight: u32, lost: u32, loss_thresh: u32, pcount: u32) -> u32 {
    let (Some(inflight_prev), Some(lost_prev)) =
        (tx_in_flight.checked_sub(pcount), lost.checked_sub(pcount))
    else {
        return u32::MAX;
    };
    let loss_budget =
        (inflight_prev as u64 * loss_thresh as u64 + BBR_UNIT as u64 - 1) >> BBR_SCALE;
    let lost_prefix = if lost_prev as u64 >= loss_budget {
        0
    } else {
        let divisor = (BBR_UNIT - loss_thresh.min(BBR_UNIT - 1)) as u64;
        ((loss_budget - lost_prev as u64) << BBR_SCALE) / divisor
    };
    (inflight_prev as u64 + lost_prefix).min(u32::MAX as u64) as u32
}

/// bbr2_handle_inflight_too_high's cut: max(tx_in_flight, target · (1 - beta)).
fn inflight_hi_cut(tx_in_flight: u32, target_inflight: u32, beta: u32) -> u32 {
    let cut = (target_inflight as u64 * (BBR_UNIT - beta) as u64) >> BBR_SCALE;
    (tx_in_flight as u64).max(cut) as u32
}

/// bbr2_loss_lower_bounds: (max(bw_latest, bw_lo · (1 - beta)), max(inflight_latest,
/// inflight_lo · (1 - beta))).
fn loss_lower_bounds(
    bw_lo: u32,
    inflight_lo: u32,
    bw_latest: u32,
    inflight_latest: u32,
    beta: u32,
) -> (u32, u32) {
    let cut = (BBR_UNIT - beta) as u64;
    let bw = bw_latest.max(((bw_lo as u64 * cut) >> BBR_SCALE) as u32);
    let inflight = inflight_latest.max(((inflight_lo as u64 * cut) >> BBR_SCALE) as u32);
    (bw, inflight)
}

/// bbr2_inflight_with_headroom's arithmetic: inflight_hi less max(1, headroom · inflight_hi),
/// at least 4 packets; unbounded while inflight_hi is.
fn headroom_cap(inflight_hi: u32, headroom: u32) -> u32 {
    if inflight_hi == u32::MAX {
        return u32::MAX;
    }
    let room = (((inflight_hi as u64 * headroom as u64) >> BBR_SCALE) as u32).max(1);
    inflight_hi.saturating_sub(room).max(CWND_MIN_TARGET)
}

/// Telemetry columns (`CongestionControl::telemetry`); BBRv2+ runs this machine too.
const BBR2_TELEMETRY: &[&str] = &[
    "bbr2_bw_bps",
    "bbr2_min_rtt_ms",
    "bbr2_pacing_gain",
    "bbr2_cwnd_gain",
    "bbr2_inflight_hi_pkts",
];

impl CongestionControl for Bbr2 {
    fn name(&self) -> &'static str {
        self.name
    }

    /// bbr2_init.
    fn init(&mut self, tp: &mut TcpState) {
        let now = jiffies(tp.now);
        self.prior_cwnd = 0;
        tp.snd_ssthresh = crate::state::INFINITE_SSTHRESH;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = CaState::Open;
        self.init_cwnd = tp.snd_cwnd.min(0x7F);
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.probe_rtt_min_us = tp.min_rtt_us.min(u32::MAX as u64) as u32;
        self.probe_rtt_min_stamp = now;
        self.min_rtt_us = self.probe_rtt_min_us;
        self.min_rtt_stamp = now;
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full.restart();
        self.cycle_mstamp = 0;
        self.cycle_idx = Phase::Cruise;
        self.mode = Mode::Startup;
        self.pacing_gain = self.p.startup_pacing_gain;
        self.cwnd_gain = self.p.startup_cwnd_gain;
        self.ack_aggr = AckAggregation {
            epoch_mstamp: mstamp_us(tp.now),
            ..AckAggregation::default()
        };
        self.bw_hi = [0; 2];
        self.inflight_hi = u32::MAX;
        self.reset_lower_bounds();
        self.reset_congestion_signals();
        // Start the loss rounds after the first full flight is ACKed.
        self.loss_round_delivered = tp.delivered + 1;
        self.loss_round_start = false;
        self.loss_events_in_round = 0;
        self.probe_up_cnt = u32::MAX;
        self.bw_probe_up_acks = 0;
        self.bw_probe_up_rounds = 0;
        self.bw_probe_samples = false;
        self.prev_probe_too_high = false;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Init;
        self.pick_probe_wait();
        self.v3_init(tp);
        if let Some(snaps) = &mut self.snaps {
            snaps.clear(); // bbr2_init: the ring is empty
        }
        tp.pacing_needed = true;
    }

    /// bbr2_ssthresh: entering recovery; save cwnd and the loss-adapted bounds for undo.
    /// ssthresh is unchanged.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.save_cwnd(tp);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tp.snd_ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// bbr2_skb_marked_lost: the loss round starts at the first loss; while probing, a loss
    /// rate above loss_thresh over the flight up to this packet cuts inflight_hi to where the
    /// rate crossed it (bbr2_inflight_hi_from_lost_skb) and ends the probe.
    fn skb_marked_lost(&mut self, tp: &mut TcpState, tx: &TxRecord) {
        if self.snaps.is_some() {
            return; // the port has no such hook: its cong_control does this once per ACK
        }
        let rs = RateSample {
            tx_in_flight: tx.in_flight,
            lost: tp.lost.saturating_sub(tx.lost),
            is_app_limited: tx.is_app_limited,
            ..Default::default()
        };
        self.losses_marked(tp, &rs, 1);
    }

    /// bbr2_main. With `tx_records = "snapshots"`, as the eBPF port: the sample's send-time
    /// records are estimated from the snapshot ring, the ACK's losses marked first, and a
    /// snapshot taken at the end ([`snapshots`]).
    fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let estimated;
        let rs = match &self.snaps {
            Some(snaps) => {
                estimated = snaps.estimate(tp, rs);
                if rs.losses > 0 {
                    self.losses_marked(tp, &estimated, rs.losses);
                }
                &estimated
            }
            None => rs,
        };
        self.update_round_start(tp, rs);
        self.plus_update_rtt_rounds(tp, rs);
        self.sample_bw = match interval_us(rs) {
            // DIV_ROUND_UP, as bbr_calculate_bw_sample.
            Some(us) => (rs.delivered as u64 * BW_UNIT)
                .div_ceil(us)
                .min(u32::MAX as u64) as u32,
            None => 0,
        };
        let sample_bw = self.sample_bw;
        self.plus_note_bw_sample(sample_bw);
        // bbr2_update_model
        self.update_congestion_signals(tp, rs, sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.plus_maybe_advance_bw_filter();
        self.update_cycle_phase(tp, rs);
        self.update_min_rtt(tp, rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs.acked_sacked, bw, self.cwnd_gain);
        self.bound_cwnd_for_inflight_model(tp);
        if self.p.v3 && self.loss_round_start {
            self.advance_latest_delivery_signals(rs, sample_bw);
        }
        self.prev_ca_state = tp.ca_state;
        if let Some(snaps) = &mut self.snaps {
            snaps.record(tp, rs.acked_sacked);
        }
    }

    /// bbr2_set_state: an RTO restarts full-pipe detection; outside probes, inflight_lo starts
    /// from the cwnd before the RTO so the loss round can cut it. Leaving Loss restores cwnd.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            if self.p.v3 {
                self.reset_full_bw();
            } else {
                self.full.bw = 0;
            }
            if !self.is_probing_bandwidth() && self.inflight_lo == u32::MAX {
                self.inflight_lo = tp.snd_cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        }
    }

    /// bbr2_cwnd_event: restarting from idle in PROBE_BW paces at 1.0 · bw.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if event != CaEvent::TxStart || tp.app_limited == 0 {
            return;
        }
        self.idle_restart = true;
        self.ack_aggr.restart_epoch(mstamp_us(tp.now));
        match self.mode {
            Mode::ProbeBw => {
                let bw = self.bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            }
            Mode::ProbeRtt => self.check_probe_rtt_done(tp),
            _ => {}
        }
    }

    /// bbr2_undo_cwnd (bbr_undo = true): a spurious recovery; restart full-pipe detection,
    /// restore the bounds saved in ssthresh and the cwnd from before.
    fn undo_cwnd(&mut self, _tp: &TcpState) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.prior_cwnd
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        BBR2_TELEMETRY
    }

    /// The model: bandwidth estimate (bbr2_bw, bit/s), min RTT, the gains in force, and the
    /// long-term inflight bound inflight_hi (NaN while unset).
    fn telemetry(&self, tp: &TcpState, out: &mut [f64]) {
        crate::cc::bbr_model::model_telemetry(
            self.bw(),
            self.min_rtt_us,
            self.pacing_gain,
            self.cwnd_gain,
            tp,
            out,
        );
        out[4] = if self.inflight_hi == u32::MAX {
            f64::NAN
        } else {
            self.inflight_hi as f64
        };
    }

    fn path_model(&self, tp: &TcpState) -> Option<PathModel> {
        Some(PathModel {
            bw_bps: super::bbr::bw_bps(tp, self.bw()),
            min_rtt_us: (self.min_rtt_us != u32::MAX).then_some(self.min_rtt_us),
            phase: match self.mode {
                Mode::Startup => ModelPhase::Startup,
                Mode::Drain => ModelPhase::Drain,
                Mode::ProbeBw => ModelPhase::ProbeBw,
                Mode::ProbeRtt => ModelPhase::ProbeRtt,
            },
            pacing_gain: self.pacing_gain as f64 / BBR_UNIT as f64,
        })
    }

    fn mode(&self, _tp: &TcpState) -> &'static str {
        match self.mode {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeRtt => "probe_rtt",
            Mode::ProbeBw => match self.cycle_idx {
                Phase::Down => "probe_bw_down",
                Phase::Cruise => "probe_bw_cruise",
                Phase::Refill => "probe_bw_refill",
                Phase::Up => "probe_bw_up",
                Phase::PreUp => "probe_bw_pre_up",
                Phase::Guard => "probe_bw_guard",
                Phase::PostUp => "probe_bw_post_up",
                Phase::DownSlightly => "probe_bw_down_slightly",
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 Mbit/s of 1500-byte packets in BW_UNIT: 833.33e-6 pkt/µs · 2^24, floored.
    pub(super) const BW_10MBPS: u32 = 13_981;

    pub(super) fn bbr2(params: &str) -> Bbr2 {
        let t: toml::Table = toml::from_str(params).expect("valid toml");
        Bbr2::new(Params::from_table(&t).expect("valid params"), 7)
    }

    /// An established flow (srtt = min_rtt = 40 ms), put in PROBE_BW `phase` with
    /// max_bw = 10 Mbit/s.
    pub(super) fn in_probe_bw(b: &mut Bbr2, phase: Phase) -> TcpState {
        let mut tp = TcpState {
            now: 1_000_000_000,
            srtt_us: 40_000,
            min_rtt_us: 40_000,
            ..Default::default()
        };
        b.init(&mut tp);
        b.full.reached = true;
        b.bw_hi = [BW_10MBPS, 0];
        b.mode = Mode::ProbeBw;
        b.cycle_idx = phase;
        b.update_gains();
        tp.pacing_rate = bw_to_pacing_rate(&tp, BW_10MBPS, BBR_UNIT);
        tp
    }

    #[test]
    fn constants_match_tcp_bbr2_c() {
        assert_eq!(LOSS_THRESH, 5); // BBR_UNIT * 2 / 100
        assert_eq!(BETA, 76); // BBR_UNIT * 30 / 100
        assert_eq!(HEADROOM, 38); // BBR_UNIT * 15 / 100
        assert_eq!(PROBE_RTT_CWND_GAIN, 128);
        assert_eq!(PACING_GAIN, [320, 192, 256, 256]); // UP, DOWN, CRUISE, REFILL
        assert_eq!((HIGH_GAIN, DRAIN_GAIN, CWND_GAIN), (739, 88, 512));
        // Fractions given as numbers truncate as the kernel's BBR_UNIT * n / 100 does.
        let b = bbr2("loss_thresh = 0.2\nbeta = 0.3\nheadroom = 0.15\nfull_loss_cnt = 15\nprobe_rtt_cwnd_gain = 0.5");
        assert_eq!(
            (
                b.p.loss_thresh,
                b.p.beta,
                b.p.headroom,
                b.p.full_loss_cnt,
                b.p.probe_rtt_cwnd_gain
            ),
            (51, 76, 38, 15, 128)
        );
        let b = bbr2("beta = 0");
        assert_eq!(b.p.beta, 0);
    }

    #[test]
    fn bad_parameters_are_named() {
        for (src, key) in [
            ("alpha = 0.1", "alpha"),
            ("loss_thresh = 2", "loss_thresh"),
            ("beta = \"x\"", "beta"),
            ("full_loss_cnt = 16", "full_loss_cnt"),
            ("probe_rtt_cwnd_gain = 5", "probe_rtt_cwnd_gain"),
            ("probe_rtt_win_ms = 20000", "probe_rtt_win_ms"),
        ] {
            let t: toml::Table = toml::from_str(src).unwrap();
            let e = Params::from_table(&t)
                .err()
                .unwrap_or_else(|| panic!("{src} accepted"));
            assert_eq!(e.key, key);
        }
        let t: toml::Table = toml::from_str("tx_records = \"estimated\"").unwrap();
        let e = Params::from_table(&t).unwrap_err();
        assert_eq!(e.key, "tx_records");
        assert!(
            e.message.contains("\"per_packet\", \"snapshots\""),
            "{}",
            e.message
        );
        // Only the algorithms with an eBPF port take it.
        let t: toml::Table = toml::from_str("tx_records = \"snapshots\"").unwrap();
        assert!(Params::from_table(&t).is_ok() && Params::from_table_plus(&t).is_ok());
        assert!(Params::from_table_v3(&t).is_err());
    }

    #[test]
    fn loss_rate_threshold_is_lost_over_tx_in_flight_in_256ths() {
        // alpha = 5/256: 100 · 5 >> 8 = 1 packet may be lost, 2 is too many.
        assert!(!loss_too_high(1, 100, LOSS_THRESH));
        assert!(loss_too_high(2, 100, LOSS_THRESH));
        // Below 52 packets in flight the threshold truncates to 0: any loss is too much.
        assert!(loss_too_high(1, 50, LOSS_THRESH));
        // alpha = 51/256 (0.2): 100 · 51 >> 8 = 19.
        assert!(!loss_too_high(19, 100, 51));
        assert!(loss_too_high(20, 100, 51));
        // No loss, or no inflight known: never too high.
        assert!(!loss_too_high(0, 100, 0));
        assert!(!loss_too_high(5, 0, LOSS_THRESH));
    }

    #[test]
    fn inflight_hi_cut_is_the_larger_of_tx_in_flight_and_0_7_target() {
        // target 50: 50 · (256 - 76) >> 8 = 9000 >> 8 = 35.
        assert_eq!(inflight_hi_cut(30, 50, BETA), 35);
        assert_eq!(inflight_hi_cut(40, 50, BETA), 40);
        // beta = 0: no cut below the target.
        assert_eq!(inflight_hi_cut(30, 50, 0), 50);
    }

    #[test]
    fn inflight_hi_from_a_lost_packet_is_where_the_loss_rate_crossed_alpha() {
        // 100 in flight before the packet, 5 lost before it, alpha 5/256:
        // budget = ceil(99 · 5 / 256) = 2 <= lost_prev 4: the rate had crossed already: 99.
        assert_eq!(inflight_hi_from_lost(100, 5, LOSS_THRESH, 1), 99);
        // 1 lost before it at alpha 51/256 (0.2): budget = ceil(199 · 51 / 256) = 40;
        // prefix = (40 - 0) · 256 / (256 - 51) = 49: 199 + 49 = 248.
        assert_eq!(inflight_hi_from_lost(200, 1, 51, 1), 248);
        assert_eq!(inflight_hi_from_lost(0, 1, 51, 1), u32::MAX);
        // The eBPF port's one skb of an ACK's 3 losses: inflight_prev 197, lost_prev 2;
        // budget = ceil(197 · 51 / 256) = 40; prefix = (40 - 2) · 256 / 205 = 47: 244.
        assert_eq!(inflight_hi_from_lost(200, 5, 51, 3), 244);
        assert_eq!(inflight_hi_from_lost(200, 2, 51, 3), u32::MAX);
    }

    #[test]
    fn quantization_budget_floors_at_three_tso_bursts_and_adds_2_in_up() {
        let mut b = bbr2("");
        let tp = in_probe_bw(&mut b, Phase::Cruise);
        // 1.19 MB/s: 1166 bytes per ms < 1 MSS: goal bbr_min_tso_segs = 2; min_rtt 40 ms
        // >> 9 = 78: no RTT allowance.
        assert_eq!(b.tso_segs_goal(&tp), 2);
        assert_eq!(b.inflight(&tp, BW_10MBPS, BBR_UNIT), 34); // ceil(33.33)
        assert_eq!(b.inflight(&tp, BW_10MBPS, CWND_GAIN), 67);
        assert_eq!(b.quantization_budget(&tp, 3), 6);
        b.cycle_idx = Phase::Up;
        assert_eq!(b.inflight(&tp, BW_10MBPS, BBR_UNIT), 36);
        // A 1 ms min_rtt: + 64 KB >> 1 = 32 KB of allowance: 22 segments.
        b.min_rtt_us = 1000;
        assert_eq!(b.tso_segs_goal(&tp), (1_194_598 / 1024 + 32_768) / 1448);
    }

    #[test]
    fn handle_inflight_too_high_in_up_cuts_inflight_hi_and_goes_down() {
        let mut b = bbr2("");
        let mut tp = in_probe_bw(&mut b, Phase::Up);
        tp.snd_cwnd = 80;
        b.inflight_hi = 80;
        b.bw_probe_samples = true;
        // Target inflight: min(BDP 34 (floored at 3 TSO bursts = 6) + 2 in UP = 36, cwnd 80) = 36;
        // · 180 >> 8 = 25.
        assert_eq!(b.target_inflight(&tp), 36);
        b.handle_inflight_too_high(
            &tp,
            &RateSample {
                tx_in_flight: 60,
                lost: 5,
                ..Default::default()
            },
        );
        assert_eq!(b.inflight_hi, 60);
        assert_eq!(b.cycle_idx, Phase::Down);
        assert!(b.prev_probe_too_high && !b.bw_probe_samples);
        tp.snd_cwnd = 80;
        b.inflight_hi = 80;
        b.cycle_idx = Phase::Up;
        b.handle_inflight_too_high(
            &tp,
            &RateSample {
                tx_in_flight: 20,
                lost: 5,
                ..Default::default()
            },
        );
        assert_eq!(b.inflight_hi, 25);
    }

    #[test]
    fn skb_marked_lost_while_probing_cuts_inflight_hi_where_the_loss_rate_crossed_alpha() {
        let mut b = bbr2("");
        let mut tp = in_probe_bw(&mut b, Phase::Up);
        tp.snd_cwnd = 80;
        tp.delivered = 1000;
        b.inflight_hi = 80;
        b.bw_probe_samples = true;
        b.loss_in_round = false;
        // One loss of a packet sent with 60 in flight: 1 <= 60 · 5 >> 8 = 1, not too high. The
        // loss round starts here.
        tp.lost = 1;
        let tx = TxRecord {
            delivered: 900,
            lost: 0,
            in_flight: 60,
            is_app_limited: false,
            end_seq: 950,
        };
        b.skb_marked_lost(&mut tp, &tx);
        assert!(b.loss_in_round);
        assert_eq!(b.loss_round_delivered, 1000);
        assert_eq!((b.inflight_hi, b.cycle_idx), (80, Phase::Up));
        // The tenth: lost_prev 9 >= ceil(59 · 5 / 256) = 2, so the rate had crossed before this
        // packet: inflight_hi = 59 (> 0.7 · target 36 = 25), and the probe ends.
        tp.delivered = 1010;
        tp.lost = 10;
        b.skb_marked_lost(&mut tp, &tx);
        assert_eq!(
            b.loss_round_delivered, 1000,
            "the loss round started at the first loss"
        );
        assert_eq!(b.inflight_hi, 59);
        assert_eq!(b.cycle_idx, Phase::Down);
        assert!(b.prev_probe_too_high && !b.bw_probe_samples);
        // Once per probe: further losses leave inflight_hi alone.
        tp.lost = 30;
        b.skb_marked_lost(
            &mut tp,
            &TxRecord {
                in_flight: 40,
                ..tx
            },
        );
        assert_eq!(b.inflight_hi, 59);
        // An app-limited packet ends the probe without cutting inflight_hi.
        let mut b = bbr2("");
        let mut tp = in_probe_bw(&mut b, Phase::Up);
        tp.snd_cwnd = 80;
        b.inflight_hi = 80;
        b.bw_probe_samples = true;
        tp.lost = 10;
        b.skb_marked_lost(
            &mut tp,
            &TxRecord {
                is_app_limited: true,
                ..tx
            },
        );
        assert_eq!((b.inflight_hi, b.cycle_idx), (80, Phase::Down));
    }

    /// `tx_records = "snapshots"` (the eBPF port's estimator): skb_marked_lost does nothing; an
    /// ACK's losses are marked once in cong_control, as one skb of `rs.losses` packets, with the
    /// send-time state estimated from the snapshot taken after an earlier ACK.
    #[test]
    fn with_snapshots_an_acks_losses_are_marked_once_from_the_rings_estimates() {
        let mut b = bbr2("tx_records = \"snapshots\"");
        let mut tp = in_probe_bw(&mut b, Phase::Up);
        tp.snd_cwnd = 80;
        b.inflight_hi = 80;
        b.bw_probe_samples = true;
        b.loss_in_round = false;
        tp.lost = 10;
        let tx = TxRecord {
            delivered: 900,
            lost: 0,
            in_flight: 60,
            is_app_limited: false,
            end_seq: 950,
        };
        b.skb_marked_lost(&mut tp, &tx);
        assert!(!b.loss_in_round, "not the port's hook");
        assert_eq!(b.inflight_hi, 80);
        // A snapshot after an ACK at delivered 900, lost 0: 59 in flight, 1 acked, cwnd 80:
        // max(min(80, 60), 60) = 60.
        let snap = TcpState {
            delivered: 900,
            lost: 0,
            packets_out: 59,
            ..tp
        };
        b.snaps.as_mut().unwrap().record(&snap, 1);
        // An ACK sampling a packet sent then (prior_delivered 950) that marks 3 packets lost,
        // 10 lost since: 10 > 60 · 5 >> 8 = 1, too high. inflight_hi_from_lost_skb with
        // pcount 3: inflight_prev 57, lost_prev 7 >= ceil(57 · 5 / 256) = 2, so 57 (above
        // 0.7 · target 36 = 25); the probe ends.
        tp.delivered = 1010;
        let rs = RateSample {
            prior_delivered: 950,
            delivered: 10,
            interval_ns: 40_000_000,
            acked_sacked: 10,
            losses: 3,
            ..Default::default()
        };
        b.cong_control(&mut tp, &rs);
        assert!(b.loss_in_round);
        assert_eq!(
            b.loss_round_delivered, 1010,
            "the loss round starts at this ACK"
        );
        assert_eq!(b.inflight_hi, 57);
        assert!(b.prev_probe_too_high && !b.bw_probe_samples);
        assert_ne!(b.cycle_idx, Phase::Up);
        // The ACK left its own snapshot (delivered 1010, lost 10; nothing in flight, 10 acked:
        // max(min(cwnd, 10), 1) = 10).
        let e = b.snaps.as_ref().unwrap().estimate(
            &tp,
            &RateSample {
                prior_delivered: 1010,
                ..Default::default()
            },
        );
        assert_eq!((e.tx_in_flight, e.lost), (10, 0));
    }

    #[test]
    fn lower_bounds_are_cut_by_beta_but_not_below_the_latest_round() {
        // 1000 · 180 >> 8 = 703; 100 · 180 >> 8 = 70.
        assert_eq!(loss_lower_bounds(1000, 100, 500, 50, BETA), (703, 70));
        assert_eq!(loss_lower_bounds(1000, 100, 800, 80, BETA), (800, 80));
        // In CRUISE, a round with a loss starts the bounds at max_bw and cwnd and cuts them.
        let mut b = bbr2("");
        let mut tp = in_probe_bw(&mut b, Phase::Cruise);
        tp.snd_cwnd = 40;
        b.loss_in_round = true;
        b.bw_latest = 0;
        b.inflight_latest = 0;
        b.adapt_lower_bounds(&tp);
        assert_eq!(b.bw_lo, ((BW_10MBPS as u64 * 180) >> 8) as u32); // 9830
        assert_eq!(b.inflight_lo, 28); // 40 · 180 >> 8
                                       // Probing (UP) leaves them alone.
        b.cycle_idx = Phase::Up;
        b.adapt_lower_bounds(&tp);
        assert_eq!(b.inflight_lo, 28);
        // A loss round in CRUISE through the per-ACK path: bw then is min(max_bw, bw_lo).
        b.cycle_idx = Phase::Cruise;
        assert_eq!(b.bw(), 9830);
    }

    #[test]
    fn headroom_leaves_15_percent_of_inflight_hi_in_cruise() {
        // 100 · 38 >> 8 = 14: cap 86. Small inflight_hi: at least 1 packet of room, at least 4.
        assert_eq!(headroom_cap(100, HEADROOM), 86);
        assert_eq!(headroom_cap(10, HEADROOM), 9);
        assert_eq!(headroom_cap(4, HEADROOM), 4);
        assert_eq!(headroom_cap(u32::MAX, HEADROOM), u32::MAX);
        // cwnd bound: CRUISE by the headroom'd inflight_hi, UP by inflight_hi, both by inflight_lo.
        let mut b = bbr2("");
        let mut tp = in_probe_bw(&mut b, Phase::Cruise);
        b.inflight_hi = 100;
        tp.snd_cwnd = 120;
        b.bound_cwnd_for_inflight_model(&mut tp);
        assert_eq!(tp.snd_cwnd, 86);
        b.cycle_idx = Phase::Up;
        tp.snd_cwnd = 120;
        b.bound_cwnd_for_inflight_model(&mut tp);
        assert_eq!(tp.snd_cwnd, 100);
        b.inflight_lo = 50;
        tp.snd_cwnd = 120;
        b.bound_cwnd_for_inflight_model(&mut tp);
        assert_eq!(tp.snd_cwnd, 50);
        // PROBE_RTT: headroom too, and a cwnd of half a BDP: ceil(34.3 / 2) = 17.
        b.mode = Mode::ProbeRtt;
        b.inflight_lo = u32::MAX;
        tp.snd_cwnd = 120;
        b.bound_cwnd_for_inflight_model(&mut tp);
        assert_eq!(tp.snd_cwnd, 86);
        b.min_rtt_us = 40_000;
        assert_eq!(b.probe_rtt_cwnd(), 17);
    }

    #[test]
    fn probe_up_grows_inflight_hi_by_1_2_4_packets_per_round() {
        let mut b = bbr2("");
        let mut tp = in_probe_bw(&mut b, Phase::Refill);
        tp.snd_cwnd = 40;
        tp.is_cwnd_limited = true;
        b.inflight_hi = 40;
        b.start_bw_probe_refill(&tp, 0);
        b.start_bw_probe_up(&tp);
        assert_eq!(b.probe_up_cnt, 40); // 1 packet per cwnd ACKed in the first round
        let one = RateSample {
            acked_sacked: 1,
            ..Default::default()
        };
        let mut growth = vec![];
        for _ in 0..3 {
            let before = b.inflight_hi;
            b.round_start = false;
            // A round: one ACK per packet of the cwnd at its start. cwnd follows inflight_hi
            // up ACK by ACK (it grows by the packets acked and inflight_hi caps it), as it
            // must for inflight_hi to keep growing.
            for _ in 0..tp.snd_cwnd {
                b.probe_inflight_hi_upward(&tp, &one);
                tp.snd_cwnd = b.inflight_hi;
            }
            growth.push(b.inflight_hi - before);
            b.round_start = true;
            b.probe_inflight_hi_upward(&tp, &RateSample::default());
        }
        assert_eq!(growth, [1, 2, 4]);
        // Not cwnd-limited: no growth, no credit kept.
        tp.is_cwnd_limited = false;
        let before = b.inflight_hi;
        b.round_start = false;
        for _ in 0..100 {
            b.probe_inflight_hi_upward(&tp, &one);
        }
        assert_eq!((b.inflight_hi, b.bw_probe_up_acks), (before, 0));
    }

    #[test]
    fn reno_coexistence_bound_is_min_of_63_and_target_inflight_rounds() {
        let mut b = bbr2("");
        let mut tp = in_probe_bw(&mut b, Phase::Cruise);
        b.min_rtt_us = 40_000;
        tp.snd_cwnd = 1000;
        // Target inflight: the BDP, 34 packets: 34 rounds.
        b.rounds_since_probe = 33;
        assert!(!b.is_reno_coexistence_probe_time(&tp));
        b.rounds_since_probe = 34;
        assert!(b.is_reno_coexistence_probe_time(&tp));
        // A big BDP: capped at 63 rounds.
        b.bw_hi = [BW_10MBPS * 10, 0];
        b.rounds_since_probe = 62;
        assert!(!b.is_reno_coexistence_probe_time(&tp));
        b.rounds_since_probe = 63;
        assert!(b.is_reno_coexistence_probe_time(&tp));
        // The wall-clock wait is 2 s + U[0, 1) s, the round counter starts at 0 or 1.
        for _ in 0..50 {
            b.pick_probe_wait();
            assert!(
                (2_000_000..3_000_000).contains(&b.probe_wait_us),
                "{}",
                b.probe_wait_us
            );
            assert!(b.rounds_since_probe <= 1);
        }
    }

    #[test]
    fn startup_exits_on_excess_loss_after_full_loss_cnt_events_in_a_recovery_round() {
        let mut b = bbr2("");
        let mut tp = TcpState {
            now: 1_000_000_000,
            srtt_us: 40_000,
            min_rtt_us: 40_000,
            ..Default::default()
        };
        b.init(&mut tp);
        b.bw_hi = [0, BW_10MBPS];
        tp.ca_state = CaState::Recovery;
        let lossy = RateSample {
            losses: 1,
            tx_in_flight: 100,
            lost: 10,
            ..Default::default()
        };
        // Seven loss events, then the round ends with the eighth: still below full_loss_cnt.
        for _ in 0..7 {
            b.loss_round_start = false;
            b.check_loss_too_high_in_startup(&tp, &lossy);
        }
        assert!(!b.full.reached);
        b.loss_round_start = true;
        b.check_loss_too_high_in_startup(&tp, &lossy);
        assert!(b.full.reached);
        // inflight_hi = 1 BDP, floored at 3 TSO bursts (3 · 2 packets at 1.03 MB/s): 34.
        assert_eq!(b.inflight_hi, 34);
        // With a loss rate under alpha, the same count does not end STARTUP.
        let mut b = bbr2("");
        b.init(&mut tp);
        let mild = RateSample {
            losses: 1,
            tx_in_flight: 1000,
            lost: 7,
            ..Default::default()
        };
        for _ in 0..10 {
            b.loss_round_start = false;
            b.check_loss_too_high_in_startup(&tp, &mild);
        }
        b.loss_round_start = true;
        b.check_loss_too_high_in_startup(&tp, &mild);
        assert!(!b.full.reached);
    }

    #[test]
    fn modes_are_named_by_probe_bw_sub_state() {
        let mut b = bbr2("");
        let tp = in_probe_bw(&mut b, Phase::Down);
        assert_eq!(b.mode(&tp), "probe_bw_down");
        for (phase, name) in [
            (Phase::Cruise, "probe_bw_cruise"),
            (Phase::Refill, "probe_bw_refill"),
            (Phase::Up, "probe_bw_up"),
        ] {
            b.cycle_idx = phase;
            assert_eq!(b.mode(&tp), name);
        }
        b.mode = Mode::ProbeRtt;
        assert_eq!(b.mode(&tp), "probe_rtt");
    }
}
