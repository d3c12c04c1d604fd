//! BBR v1 (Bottleneck Bandwidth and Round-trip propagation time), as Linux 6.x
//! `net/ipv4/tcp_bbr.c`.
//!
//! # The model
//!
//! BBR does not treat loss as its congestion signal. On every ACK it updates a two-number model
//! of the path from the delivery-rate sample (`tcp_rate.c`, [`RateSample`]):
//!
//! ```text
//!   btl_bw  = windowed max of delivered / interval, over 10 packet-timed round trips
//!   min_rtt = windowed min of RTT samples, over 10 seconds
//! ```
//!
//! and sets
//!
//! ```text
//!   pacing_rate = pacing_gain * btl_bw            (minus a 1 % margin)
//!   cwnd        = cwnd_gain * btl_bw * min_rtt    (+ ACK-aggregation allowance
//!                                                  + a TSO quantization budget, at least 4)
//! ```
//!
//! The gains are what the state machine changes:
//!
//! ```text
//!              |
//!              V
//!     +---> STARTUP  ----+        STARTUP    pacing 2/ln2 = 2.89, cwnd 2.89: double the
//!     |        |         |                   delivery rate every round, like slow start
//!     |        V         |        DRAIN      pacing 1/2.89, cwnd 2.89: empty the queue
//!     |      DRAIN   ----+                   STARTUP built, in about one round
//!     |        |         |        PROBE_BW   cwnd 2, pacing cycling over 8 phases of about
//!     |        V         |                   one min_rtt each: 1.25 (probe for more
//!     +---> PROBE_BW ----+                   bandwidth), 0.75 (drain what the probe
//!     |      ^    |      |                   queued), then 1.0 six times (cruise)
//!     |      |    |      |        PROBE_RTT  pacing 1, cwnd 4 packets for at least 200 ms
//!     |      +----+      |                   and one round: drain the queue so that a
//!     |                  |                   fresh min_rtt can be measured
//!     +---- PROBE_RTT <--+
//! ```
//!
//! * STARTUP ends when the pipe looks full: three consecutive round starts (not app-limited)
//!   at which the max-bandwidth estimate has not grown by 25 % over the last value that did.
//! * DRAIN ends as soon as the packets in flight (at the next departure time) fall to one
//!   estimated BDP (plus the quantization budget); then PROBE_BW, entered at a random phase of
//!   the cycle (any but the 0.75 one, so a flow never starts by yielding).
//! * A PROBE_BW phase ends after one min_rtt of (delivered) time; the 1.25 phase also needs
//!   inflight to reach 1.25 BDP (or a loss), the 0.75 phase ends early once inflight is at one
//!   BDP.
//! * PROBE_RTT is entered from any mode when min_rtt has not been refreshed (matched or
//!   lowered) for 10 s, unless the flow is restarting from idle. It ends 200 ms after inflight
//!   first fell to 4 packets, once a round has also passed; the flow then restores its cwnd
//!   and returns to PROBE_BW if STARTUP had filled the pipe, else to STARTUP.
//!
//! # Around the core
//!
//! * **Rounds** are packet-timed: a round ends when a packet sent after the previous round
//!   ended is delivered (`rs.prior_delivered >= next_rtt_delivered`).
//! * **App-limited** samples enter the max filter only if they do not lower it.
//! * **Long-term bandwidth (policer detection)**: after a loss, BBR measures delivery rate over
//!   intervals of 4 to 16 rounds that end on a loss with lost/delivered >= 20 %. Two consecutive
//!   such intervals with bandwidths within 1/8 (or 4 kbit/s) of each other mean a token-bucket
//!   policer: BBR then paces at their average (`lt_bw`) with gain 1 for 48 rounds.
//! * **ACK aggregation**: the excess of data ACKed over what `btl_bw` predicts since the start
//!   of an ACK epoch (`extra_acked`, max over 5-10 rounds, capped by cwnd and by 100 ms worth of
//!   `btl_bw`) is added to the cwnd target once the pipe has been filled.
//! * **Loss recovery**: on the first round of fast recovery BBR follows packet conservation
//!   (cwnd = inflight + newly acked, never more); afterwards cwnd grows towards the target by at
//!   most the packets acked. Lost packets are taken off cwnd. When recovery ends (or is undone),
//!   the cwnd saved when it began is restored. An RTO (Loss state) restarts full-pipe detection
//!   and counts as a round end for long-term sampling.
//! * **Pacing** starts at 2.89 · init_cwnd / srtt, and until STARTUP has filled the pipe the
//!   pacing rate only ever rises. Restarting from idle in PROBE_BW paces at 1.0 · btl_bw.
//!
//! # Units and arithmetic
//!
//! As in the kernel: bandwidth in packets per microsecond scaled by 2^24 (`BW_SCALE`), gains
//! scaled by 256 (`BBR_SCALE`, so `BBR_UNIT` is 1.0), min_rtt in microseconds, timestamps
//! `tp->tcp_mstamp`-like in microseconds and `tcp_jiffies32` of the kernel profile (HZ = 250),
//! derived from the simulator's nanosecond clock. So cwnd and pacing figures match the kernel's
//! to the packet and the byte.
//!
//! # Parameters (`cc_params`)
//!
//! All default to the kernel's constants. Gains are numbers (`2.885`, `2`) turned into
//! BBR_UNIT fixed point, 0 < gain < 4 as the kernel's 10-bit fields allow.
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `high_gain` | 739/256 (2.886) | STARTUP pacing and cwnd gain, and DRAIN's cwnd gain |
//! | `drain_gain` | 88/256, or 1/`high_gain` when that is set | DRAIN pacing gain |
//! | `cwnd_gain` | 2 | PROBE_BW cwnd gain |
//! | `probe_rtt_mode_ms` | 200 | time at 4 packets in PROBE_RTT; 0 disables PROBE_RTT |
//! | `min_rtt_win_sec` | 10 | min_rtt filter window |
//! | `extra_acked_gain` | 1 | gain on the ACK-aggregation allowance; 0 disables it |
//! | `lt_bw` | true | long-term bandwidth (policer) detection |
//! | `cycle_start` | random | fixed PROBE_BW start phase 0..7, for reproducible tests |
//!
//! # Where this differs from tcp_bbr.c
//!
//! * `rs->is_ack_delayed` (FLAG_ACK_MAYBE_DELAYED) is taken as false: the kernel sets it only
//!   for an ACK that covers a single runt (sub-MSS) segment, and rove's segments are full-sized
//!   but for the last one of a finite flow.
//! * The sender sends every segment on its own (no TSO/GSO, see `sender.rs`), but the cwnd
//!   quantization budget is still computed as the kernel's `bbr_tso_segs_goal`, so cwnd matches
//!   what Linux would use.
//! * Products that the kernel computes in u64 are computed in u128 and saturated, which gives
//!   the same values wherever the kernel's do not overflow (rates below ~2.9 Tbit/s).
//! * `extra_acked` is a u16 in the kernel; it is saturated rather than truncated here.
//!
//! # MPTCP-BBR
//!
//! `cc = "mpbbr"` is this BBR with an [`MpBbrCoupling`] (`coupled/mpbbr.rs`, which documents
//! the algorithm): the subflows of a shared-bottleneck set use the set's RTT' in their PROBE_BW
//! BDP and phase length, and pace their cruise phases at α. The hooks are [`Bbr::bdp_rtt_us`],
//! [`Bbr::phase_len_us`], [`Bbr::pacing_gain_in_force`], the cwnd cap in `set_cwnd`, the
//! aligned phase in `reset_probe_bw_mode` and the publishing after each ACK; without a
//! coupling (`cc = "bbr"`) each is the kernel's code path.

use super::bbr_model::{AckAggregation, FullPipe};
use super::coupled::mpbbr::{CwndCap, MpBbrCoupling, OwnModel, ProbeBwPhase};
use super::{reject_unknown, CcConfig, CongestionControl, ModelPhase, ParamError, PathModel};
use crate::minmax::MinMax;
use crate::state::{CaEvent, CaState, RateSample, TcpState, INIT_CWND};
use rove_sim::rng::Stream;
use rove_sim::Nanos;

// ---------------------------------------------------------------------------------------------
// Fixed-point scales

/// tcp_bbr.c: BW_SCALE. Bandwidth unit: packets per microsecond << 24 (~715 bit/s per unit).
pub(super) const BW_SCALE: u32 = 24;
/// Telemetry columns (`CongestionControl::telemetry`).
const BBR_TELEMETRY: &[&str] = &[
    "bbr_bw_bps",
    "bbr_min_rtt_ms",
    "bbr_pacing_gain",
    "bbr_cwnd_gain",
];
/// MPTCP-BBR's: BBR's (the pacing gain in force), then α (Eq. 6) and RTT' (Eq. 1).
const MPBBR_TELEMETRY: &[&str] = &[
    "bbr_bw_bps",
    "bbr_min_rtt_ms",
    "bbr_pacing_gain",
    "bbr_cwnd_gain",
    "mpbbr_alpha",
    "mpbbr_rtt_prime_ms",
];

/// tcp_bbr.c: BW_UNIT.
pub(super) const BW_UNIT: u64 = 1 << BW_SCALE;
/// tcp_bbr.c: BBR_SCALE. Fractions (gains) are scaled by 2^8.
pub(super) const BBR_SCALE: u32 = 8;
/// tcp_bbr.c: BBR_UNIT, a gain of 1.0.
pub(super) const BBR_UNIT: u32 = 1 << BBR_SCALE;

// ---------------------------------------------------------------------------------------------
// Constants of tcp_bbr.c (and the few of the stack it reads)

/// tcp_bbr.c: CYCLE_LEN, phases in the PROBE_BW pacing-gain cycle.
const CYCLE_LEN: u32 = 8;
/// tcp_bbr.c: bbr_bw_rtts = CYCLE_LEN + 2, the max-bandwidth filter's window in rounds.
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// tcp_bbr.c: bbr_min_rtt_win_sec, the min_rtt filter's window (seconds).
pub(super) const MIN_RTT_WIN_SEC: u32 = 10;
/// tcp_bbr.c: bbr_probe_rtt_mode_ms, the least time spent at the minimum cwnd in PROBE_RTT.
pub(super) const PROBE_RTT_MODE_MS: u32 = 200;
/// tcp_bbr.c: bbr_min_tso_rate (bit/s): below it, one segment per TSO burst.
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// tcp_bbr.c: bbr_pacing_margin_percent: pace 1 % below the estimate to keep queues low.
const PACING_MARGIN_PERCENT: u64 = 1;
/// tcp_bbr.c: bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1 (2/ln 2 ≈ 2.885): the smallest gain
/// that doubles the delivery rate every round, as slow start does.
pub(super) const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// tcp_bbr.c: bbr_drain_gain = BBR_UNIT * 1000 / 2885, the inverse of high_gain, to drain in
/// one round the queue STARTUP built.
pub(super) const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// tcp_bbr.c: bbr_cwnd_gain, steady-state cwnd gain (tolerates delayed and stretched ACKs).
pub(super) const CWND_GAIN: u32 = BBR_UNIT * 2;
/// tcp_bbr.c: bbr_pacing_gain[], the PROBE_BW cycle: probe, drain, then cruise six phases.
const PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// tcp_bbr.c: bbr_cycle_rand. The start phase is CYCLE_LEN - 1 - rand(7), then advanced once:
/// any phase but 1 (the 0.75 one).
const CYCLE_RAND: u32 = 7;
/// tcp_bbr.c: bbr_cwnd_min_target, the least cwnd BBR aims for (two 2-packet delayed-ACK
/// sequences), and PROBE_RTT's cwnd.
pub(super) const CWND_MIN_TARGET: u32 = 4;
/// tcp_bbr.c: bbr_full_bw_thresh, the growth (1.25x) that means there may be more bandwidth.
pub(super) const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// tcp_bbr.c: bbr_full_bw_cnt, rounds without such growth after which the pipe is full.
pub(super) const FULL_BW_CNT: u32 = 3;
/// tcp_bbr.c: bbr_lt_intvl_min_rtts, the least rounds in a long-term sampling interval.
const LT_INTVL_MIN_RTTS: u32 = 4;
/// tcp_bbr.c: bbr_lt_loss_thresh, lost/delivered (x256) above which an interval is lossy (~20 %).
const LT_LOSS_THRESH: u64 = 50;
/// tcp_bbr.c: bbr_lt_bw_ratio, two intervals' bandwidths within 1/8 are consistent.
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// tcp_bbr.c: bbr_lt_bw_diff, or within 4 kbit/s (in bytes per second).
const LT_BW_DIFF: u64 = 4000 / 8;
/// tcp_bbr.c: bbr_lt_bw_max_rtts, rounds for which a policed flow uses lt_bw.
const LT_BW_MAX_RTTS: u32 = 48;
/// tcp_bbr.c: bbr_extra_acked_gain, the gain on extra_acked added to the cwnd target.
pub(super) const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// tcp_bbr.c: bbr_extra_acked_win_rtts, rounds per half of the extra_acked max filter.
pub(super) const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// tcp_bbr.c: bbr_ack_epoch_acked_reset_thresh, packets after which an ACK epoch restarts.
pub(super) const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// tcp_bbr.c: bbr_extra_acked_max_us, the aggregation allowance is at most 100 ms of btl_bw.
pub(super) const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;

/// include/net/sock.h: sk_pacing_shift default (SK_DEFAULT_PACING_SHIFT = 10, ~1 ms of data
/// per TSO burst).
pub(super) const PACING_SHIFT: u32 = 10;
/// include/linux/netdevice.h: GSO_LEGACY_MAX_SIZE, 64 KB.
pub(super) const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
/// include/net/tcp.h: MAX_TCP_HEADER = L1_CACHE_ALIGN(128 + MAX_HEADER), 320 bytes with an
/// x86-64 distribution kernel's MAX_HEADER (LL_MAX_HEADER 128 + 48 for tunnels).
pub(super) const MAX_TCP_HEADER: u64 = 320;
/// tcp_bbr.c: bbr_tso_segs_goal's cap (0x7F, a 7-bit field in older kernels).
const TSO_SEGS_MAX: u32 = 0x7F;

/// USEC_PER_SEC, USEC_PER_MSEC.
const USEC_PER_SEC: u64 = 1_000_000;
pub(super) const USEC_PER_MSEC: u64 = 1_000;
/// CONFIG_HZ of the kernel modelled (crate::kernel): 250, one jiffy every 4 ms.
pub(super) use crate::kernel::HZ;

/// The gains are 10-bit fields of struct bbr (pacing_gain:10, cwnd_gain:10): < 4.0.
pub(super) const GAIN_FIELD_MAX: u32 = (1 << 10) - 1;

// ---------------------------------------------------------------------------------------------

/// enum bbr_mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    Startup,
    /// Drain any queue created during startup.
    Drain,
    /// Discover and share bandwidth: pace around the estimate.
    ProbeBw,
    /// Cut inflight to the minimum to probe min_rtt.
    ProbeRtt,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// Per-flow settings, from `cc_params`.
#[derive(Debug, Clone)]
struct Params {
    high_gain: u32,
    drain_gain: u32,
    cwnd_gain: u32,
    probe_rtt_mode_ms: u32,
    min_rtt_win_sec: u32,
    extra_acked_gain: u32,
    lt_bw: bool,
    /// A fixed PROBE_BW start phase instead of a random one.
    cycle_start: Option<u32>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            high_gain: HIGH_GAIN,
            drain_gain: DRAIN_GAIN,
            cwnd_gain: CWND_GAIN,
            probe_rtt_mode_ms: PROBE_RTT_MODE_MS,
            min_rtt_win_sec: MIN_RTT_WIN_SEC,
            extra_acked_gain: EXTRA_ACKED_GAIN,
            lt_bw: true,
            cycle_start: None,
        }
    }
}

/// BBR's `cc_params` keys (MPTCP-BBR accepts them too).
pub(super) const PARAM_KEYS: &[&str] = &[
    "high_gain",
    "drain_gain",
    "cwnd_gain",
    "probe_rtt_mode_ms",
    "min_rtt_win_sec",
    "extra_acked_gain",
    "lt_bw",
    "cycle_start",
];

impl Params {
    fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        Self::from_known_keys(t)
    }

    /// BBR's keys of `t`; the caller has rejected unknown ones.
    fn from_known_keys(t: &toml::Table) -> Result<Self, ParamError> {
        let mut p = Params::default();
        if let Some(g) = gain(t, "high_gain", false)? {
            p.high_gain = g;
            // Keep DRAIN the inverse of STARTUP unless drain_gain says otherwise.
            p.drain_gain = (BBR_UNIT * BBR_UNIT / g).max(1);
        }
        if let Some(g) = gain(t, "drain_gain", false)? {
            p.drain_gain = g;
        }
        if let Some(g) = gain(t, "cwnd_gain", false)? {
            p.cwnd_gain = g;
        }
        if let Some(g) = gain(t, "extra_acked_gain", true)? {
            p.extra_acked_gain = g;
        }
        if let Some(v) = integer(t, "probe_rtt_mode_ms", 0, 60_000)? {
            p.probe_rtt_mode_ms = v;
        }
        if let Some(v) = integer(t, "min_rtt_win_sec", 1, 3600)? {
            p.min_rtt_win_sec = v;
        }
        if let Some(v) = integer(t, "cycle_start", 0, CYCLE_LEN as i64 - 1)? {
            p.cycle_start = Some(v);
        }
        if let Some(v) = super::params::optional_boolean(t, "lt_bw")? {
            p.lt_bw = v;
        }
        Ok(p)
    }
}

pub(super) fn bad(key: &str, message: String) -> ParamError {
    ParamError {
        key: key.to_string(),
        message,
    }
}

/// A gain written as a number (2.885, 2) into BBR_UNIT fixed point, rounded to nearest.
fn gain(t: &toml::Table, key: &str, zero_ok: bool) -> Result<Option<u32>, ParamError> {
    let Some(v) = t.get(key) else { return Ok(None) };
    let x = match v {
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        _ => return Err(bad(key, format!("expected a number, got {v}"))),
    };
    let units = (x * BBR_UNIT as f64).round();
    let lo = if zero_ok { 0.0 } else { 1.0 };
    if !x.is_finite() || units < lo || units > GAIN_FIELD_MAX as f64 {
        let range = if zero_ok {
            "0 <= gain < 4"
        } else {
            "0 < gain < 4"
        };
        return Err(bad(
            key,
            format!(
                "expected a gain with {range} (a 10-bit fraction of 256 in tcp_bbr.c), got {x}"
            ),
        ));
    }
    Ok(Some(units as u32))
}

pub(super) fn integer(
    t: &toml::Table,
    key: &str,
    lo: i64,
    hi: i64,
) -> Result<Option<u32>, ParamError> {
    let Some(v) = t.get(key) else { return Ok(None) };
    match v.as_integer() {
        Some(i) if (lo..=hi).contains(&i) => Ok(Some(i as u32)),
        _ => Err(bad(
            key,
            format!("expected an integer from {lo} to {hi}, got {v}"),
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Clocks, as the kernel sees them

/// tcp_jiffies32 of the kernel modelled (crate::kernel: HZ = 250, from INITIAL_JIFFIES).
pub(super) use crate::kernel::{jiffies, msecs_to_jiffies};

/// A tcp_mstamp-like timestamp: microseconds.
#[inline]
pub(super) fn mstamp_us(t: Nanos) -> u64 {
    t / 1000
}

/// tcp_stamp_us_delta: t1 - t0, never negative.
#[inline]
pub(super) fn us_delta(t1: u64, t0: u64) -> u64 {
    t1.saturating_sub(t0)
}

/// after(a, b) on 32-bit jiffies: a is later than b, modulo wrap-around.
#[inline]
pub(super) fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

// ---------------------------------------------------------------------------------------------

/// BBR's congestion-control block (struct bbr).
pub struct Bbr {
    p: Params,
    rng: Stream,

    /// Min RTT in the min_rtt_win_sec window, µs (u32::MAX: none yet).
    min_rtt_us: u32,
    /// Jiffies when min_rtt_us was taken.
    min_rtt_stamp: u32,
    /// Jiffies at which PROBE_RTT may end; 0 while not yet at the minimum inflight.
    probe_rtt_done_stamp: u32,
    /// Windowed max delivery rate, BW_UNIT-scaled packets per µs, windowed over rounds.
    bw: MinMax,
    /// Packet-timed rounds elapsed.
    rtt_cnt: u64,
    /// tp.delivered at the end of the current round.
    next_rtt_delivered: u64,
    /// Start of the current gain-cycle phase (delivered_mstamp, µs).
    cycle_mstamp: u64,
    mode: Mode,
    /// CA state on the previous ACK.
    prev_ca_state: CaState,
    /// Packet conservation in the first round of recovery.
    packet_conservation: bool,
    /// This ACK starts a new packet-timed round.
    round_start: bool,
    /// Restarting after idle.
    idle_restart: bool,
    /// A PROBE_RTT round at the minimum inflight has passed.
    probe_rtt_round_done: bool,

    // Long-term (policer) bandwidth sampling.
    lt_is_sampling: bool,
    /// Rounds in the current long-term interval.
    lt_rtt_cnt: u32,
    /// Use lt_bw as the bandwidth estimate.
    lt_use_bw: bool,
    /// Long-term delivery rate, BW_UNIT-scaled packets per µs.
    lt_bw: u32,
    /// tp.delivered, delivered_mstamp (ms) and tp.lost at the start of the interval.
    lt_last_delivered: u64,
    lt_last_stamp: u32,
    lt_last_lost: u64,

    pacing_gain: u32,
    cwnd_gain: u32,
    /// Full-pipe detection (full_bw_reached, full_bw_cnt, full_bw).
    full: FullPipe,
    /// Current phase of the PROBE_BW cycle.
    cycle_idx: u32,
    has_seen_rtt: bool,
    /// cwnd before loss recovery or PROBE_RTT.
    prior_cwnd: u32,
    /// ACK aggregation (extra_acked and its epoch).
    ack_aggr: AckAggregation,
    /// MPTCP-BBR's coupling (`cc = "mpbbr"`); `None` for BBR.
    mp: Option<MpBbrCoupling>,
}

impl Bbr {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        let p = Params::from_table(config.params)?;
        Ok(Box::new(Bbr::new(p, config.seed, None)))
    }

    /// MPTCP-BBR (`coupled::mpbbr::build`, which has checked the keys of `config.params`).
    pub(super) fn build_coupled(config: &CcConfig, mp: MpBbrCoupling) -> Result<Self, ParamError> {
        let p = Params::from_known_keys(config.params)?;
        Ok(Bbr::new(p, config.seed, Some(mp)))
    }

    fn new(p: Params, seed: u64, mp: Option<MpBbrCoupling>) -> Self {
        let pacing_gain = p.high_gain;
        Bbr {
            p,
            rng: Stream::new(seed, "bbr"),
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain,
            cwnd_gain: pacing_gain,
            full: FullPipe::default(),
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            ack_aggr: AckAggregation::default(),
            mp,
        }
    }
}

/// Inspection, for tests and tools that hold a concrete `Bbr` (the registry hands out trait
/// objects, whose observable state is `tp` and `mode()`).
#[allow(dead_code)]
impl Bbr {
    /// The state-machine mode.
    pub fn bbr_mode(&self) -> Mode {
        self.mode
    }

    /// Current pacing gain, BBR_UNIT (256) = 1.0.
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }

    /// Current cwnd gain, BBR_UNIT (256) = 1.0.
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }

    /// The PROBE_BW phase (0: 1.25, 1: 0.75, 2..7: cruise).
    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }
}

impl Bbr {
    // -----------------------------------------------------------------------------------------
    // Estimates

    /// bbr_max_bw: the windowed max delivery rate.
    fn max_bw(&self) -> u32 {
        self.bw.get().min(u32::MAX as u64) as u32
    }

    /// bbr_bw: the bandwidth estimate, lt_bw while policed.
    pub fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// bbr_extra_acked: max excess ACKed over the last 5-10 rounds.

    // -----------------------------------------------------------------------------------------
    // Pacing

    /// bbr_init_pacing_rate_from_rtt: high_gain · cwnd / srtt (1 ms before any RTT sample).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpState) {
        let rtt_us = if tp.srtt_us > 0 {
            self.has_seen_rtt = true;
            tp.srtt_us.max(1)
        } else {
            USEC_PER_MSEC
        };
        let bw = (tp.snd_cwnd as u64 * BW_UNIT / rtt_us).min(u32::MAX as u64) as u32;
        tp.pacing_rate = bw_to_pacing_rate(tp, bw, self.p.high_gain);
    }

    /// bbr_set_pacing_rate: pace at bw · gain; before the pipe is full, only ever raise it.
    fn set_pacing_rate(&mut self, tp: &mut TcpState, bw: u32, gain: u32) {
        let rate = bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full.reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// bbr_tso_segs_goal: segments per TSO burst the kernel would aim for at this pacing rate
    /// (about 1 ms of data, at most 64 KB). rove's sender sends every segment on its own; the
    /// goal only sizes the cwnd quantization budget, as in Linux.
    fn tso_segs_goal(tp: &TcpState) -> u32 {
        let bytes = (tp.pacing_rate >> PACING_SHIFT).min(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
        let segs = ((bytes / tp.mss_cache.max(1) as u64) as u32).max(min_tso_segs(tp));
        segs.min(TSO_SEGS_MAX)
    }

    // -----------------------------------------------------------------------------------------
    // Congestion window

    /// bbr_save_cwnd: remember the last good cwnd, to restore after recovery or PROBE_RTT.
    fn save_cwnd(&mut self, tp: &TcpState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            // Recovery or PROBE_RTT has cut cwnd for now: keep the larger.
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// bbr_bdp: ceil(bw · min_rtt · gain) in packets; the initial window before any RTT.
    /// MPTCP-BBR: BDP_r = bw · RTT' in PROBE_BW (Eq. 2).
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        bdp(bw, self.bdp_rtt_us(), gain)
    }

    /// The RTT of the BDP: min_rtt; for MPTCP-BBR in PROBE_BW, its set's RTT' (Eq. 2).
    fn bdp_rtt_us(&self) -> u32 {
        match &self.mp {
            Some(mp) if self.mode == Mode::ProbeBw => mp.rtt_prime_us(self.min_rtt_us),
            _ => self.min_rtt_us,
        }
    }

    /// The length of a PROBE_BW phase: min_rtt; for MPTCP-BBR, as its `phase_len` says (RTT').
    fn phase_len_us(&self) -> u32 {
        match &self.mp {
            Some(mp) => mp.phase_len_us(self.min_rtt_us),
            None => self.min_rtt_us,
        }
    }

    /// The model MPTCP-BBR's coupling reads of this subflow.
    fn own_model(&self, tp: &TcpState) -> OwnModel {
        OwnModel {
            bw: self.bw(),
            mss: tp.mss_cache,
            min_rtt_us: self.min_rtt_us,
        }
    }

    /// The gain PROBE_BW's cruise phases pace at: 1.0; for MPTCP-BBR α (Eq. 4, 6), unless BBR
    /// is pacing at a policer's long-term rate.
    fn cruise_gain(&self, tp: &TcpState) -> u32 {
        match &self.mp {
            Some(mp) if !self.lt_use_bw => mp.cruise_gain(&self.own_model(tp)),
            _ => BBR_UNIT,
        }
    }

    /// The pacing gain in force: `pacing_gain` (the kernel's: 1.25, 0.75, 1 through the cycle);
    /// for MPTCP-BBR, α in a cruise phase. The phase's kind comes from the cycle index, so
    /// `pacing_gain` itself keeps telling cruise (1.0) from drain (0.75) phases.
    fn pacing_gain_in_force(&self, tp: &TcpState) -> u32 {
        let cruising = self.mode == Mode::ProbeBw
            && !self.lt_use_bw
            && PACING_GAIN[self.cycle_idx as usize] == BBR_UNIT;
        if self.mp.is_some() && cruising {
            self.cruise_gain(tp)
        } else {
            self.pacing_gain
        }
    }

    /// MPTCP-BBR with `cwnd_cap = "bdp"`: in PROBE_BW, cwnd at most BDP_r (Eq. 3 literally).
    fn coupled_cwnd_cap(&self, bw: u32) -> Option<u32> {
        match &self.mp {
            Some(mp) if mp.params().cwnd_cap == CwndCap::Bdp && self.mode == Mode::ProbeBw => {
                Some(self.bdp(bw, BBR_UNIT).max(CWND_MIN_TARGET))
            }
            _ => None,
        }
    }

    /// MPTCP-BBR: publishes this subflow's model for the other members of its set.
    fn publish(&self, tp: &TcpState) {
        if let Some(mp) = &self.mp {
            let phase = (self.mode == Mode::ProbeBw).then_some(ProbeBwPhase {
                cycle_idx: self.cycle_idx,
                start_us: self.cycle_mstamp,
            });
            mp.publish(tp, self.bw(), self.min_rtt_us, phase);
        }
    }

    /// bbr_quantization_budget: room for three TSO bursts (qdisc, NIC, receiver's GRO), an
    /// even count (fewer delayed ACKs), and 2 more in the probing phase so that small BDPs still
    /// get inflight above one BDP.
    fn quantization_budget(&self, tp: &TcpState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * Self::tso_segs_goal(tp));
        cwnd = cwnd.saturating_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// bbr_inflight: the inflight target for `gain`: BDP plus the quantization budget.
    fn inflight(&self, tp: &TcpState, bw: u32, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// bbr_packets_in_net_at_edt: packets likely still in the network when the next segment
    /// leaves (at tp.tcp_wstamp_ns): inflight now (plus the next burst if inflight is being
    /// raised) less what btl_bw delivers until then.
    fn packets_in_net_at_edt(&self, tp: &TcpState, inflight_now: u32) -> u32 {
        let now = tp.now;
        let edt = tp.tcp_wstamp_ns.max(now);
        let interval_us = (edt - now) / 1000;
        let interval_delivered =
            ((self.bw() as u128 * interval_us as u128) >> BW_SCALE).min(u32::MAX as u128) as u32;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += Self::tso_segs_goal(tp);
        }
        inflight_at_edt.saturating_sub(interval_delivered)
    }

    /// bbr_ack_aggregation_cwnd: extra cwnd for ACK aggregation, once the pipe has been filled.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.p.extra_acked_gain == 0 || !self.full.reached {
            return 0;
        }
        let max_aggr_cwnd = (self.bw() as u64 * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr_cwnd = ((self.p.extra_acked_gain as u64 * self.ack_aggr.extra_acked() as u64)
            >> BBR_SCALE) as u32;
        aggr_cwnd.min(max_aggr_cwnd)
    }

    /// bbr_set_cwnd_to_recover_or_restore: packet conservation in the first round of
    /// recovery, cwnd restored when recovery ends. Returns the cwnd to use and whether packet
    /// conservation decides it.
    fn cwnd_to_recover_or_restore(
        &mut self,
        tp: &TcpState,
        rs: &RateSample,
        acked: u32,
    ) -> (u32, bool) {
        let prev_state = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.snd_cwnd;
        // An ACK for P packets releases at most 2P: take off the lost ones here, grow towards
        // the target in set_cwnd.
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // First round of Recovery: conserve packets, starting a round now.
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered;
            // Cut cwnd the application, TSQ or TSO deferral left unused.
            cwnd = tp.packets_in_flight() + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Leaving loss recovery: restore the cwnd from before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(tp.packets_in_flight() + acked), true);
        }
        (cwnd, false)
    }

    /// bbr_set_cwnd: slow-start towards the target (while bandwidth grows, or after losses
    /// pulled cwnd below it), or snap down to it once the pipe has been filled.
    fn set_cwnd(&mut self, tp: &mut TcpState, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        if acked > 0 {
            let (c, conserving) = self.cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                // Room for data that seems to arrive in aggregates.
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(tp, target);
                if self.full.reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || tp.delivered < INIT_CWND as u64 {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            // Drain the queue and refresh min_rtt.
            tp.snd_cwnd = tp.snd_cwnd.min(CWND_MIN_TARGET);
        }
        if let Some(cap) = self.coupled_cwnd_cap(bw) {
            tp.snd_cwnd = tp.snd_cwnd.min(cap);
        }
    }

    // -----------------------------------------------------------------------------------------
    // PROBE_BW gain cycling

    /// bbr_is_next_cycle_phase: a phase lasts one min_rtt (MPTCP-BBR: RTT'); probing also
    /// waits for inflight to reach the phase's target (or a loss), draining stops early at one
    /// BDP.
    fn is_next_cycle_phase(&self, tp: &TcpState, rs: &RateSample) -> bool {
        let is_full_length = us_delta(mstamp_us(tp.delivered_mstamp), self.cycle_mstamp)
            > self.phase_len_us() as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// bbr_advance_cycle_phase.
    fn advance_cycle_phase(&mut self, tp: &TcpState) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = mstamp_us(tp.delivered_mstamp);
    }

    /// bbr_update_cycle_phase.
    fn update_cycle_phase(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// bbr_reset_startup_mode.
    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// bbr_reset_probe_bw_mode: PROBE_BW at a random phase other than the 0.75 one (or at
    /// `cycle_start`; MPTCP-BBR with `align_phases`: at another member's phase).
    fn reset_probe_bw_mode(&mut self, tp: &TcpState) {
        self.mode = Mode::ProbeBw;
        if let Some(phase) = self.mp.as_ref().and_then(|mp| mp.aligned_phase()) {
            self.cycle_idx = phase.cycle_idx;
            self.cycle_mstamp = phase.start_us;
            return;
        }
        self.cycle_idx = match self.p.cycle_start {
            // One before the wanted phase: advance_cycle_phase flips to it.
            Some(start) => (start + CYCLE_LEN - 1) & (CYCLE_LEN - 1),
            None => CYCLE_LEN - 1 - self.random_below(CYCLE_RAND),
        };
        self.advance_cycle_phase(tp);
    }

    /// get_random_u32_below(n), from the flow's own stream.
    fn random_below(&mut self, n: u32) -> u32 {
        ((self.rng.uniform() * n as f64) as u32).min(n - 1)
    }

    /// bbr_reset_mode: back to STARTUP unless the pipe has been filled.
    fn reset_mode(&mut self, tp: &TcpState) {
        if !self.full.reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Long-term (policer) bandwidth

    /// bbr_reset_lt_bw_sampling_interval: start a new interval.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpState) {
        self.lt_last_stamp = (mstamp_us(tp.delivered_mstamp) / USEC_PER_MSEC) as u32;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// bbr_reset_lt_bw_sampling: forget everything long-term.
    fn reset_lt_bw_sampling(&mut self, tp: &TcpState) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// bbr_lt_bw_interval_done: an interval gave `bw`; two consistent ones mean a policer.
    fn lt_bw_interval_done(&mut self, tp: &TcpState, bw: u32) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            let close_ratio = diff as u64 * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw as u64;
            let close_abs = rate_bytes_per_sec(tp, diff as u64, BBR_UNIT) <= LT_BW_DIFF;
            if close_ratio || close_abs {
                // Policed: use the average of the two intervals, at gain 1 to avoid drops.
                self.lt_bw = ((bw as u64 + self.lt_bw as u64) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// bbr_lt_bw_sampling: detect a token-bucket policer from two consecutive lossy intervals
    /// of consistent delivery rate, and model its rate.
    fn lt_bw_sampling(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.lt_use_bw {
            // Already policed: after lt_bw_max_rtts rounds, go back to probing.
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp);
                }
            }
            return;
        }
        // Start on the first loss, once the policer's bucket is empty; earlier samples include
        // bursts that overestimate its rate.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        // Running out of data would underestimate: start over.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval on a loss, when the bucket is surely empty.
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost - self.lt_last_lost;
        let delivered = tp.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t = ((mstamp_us(tp.delivered_mstamp) / USEC_PER_MSEC) as u32)
            .wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return; // less than a millisecond: wait
        }
        if t >= u32::MAX / USEC_PER_MSEC as u32 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let t_us = t as u64 * USEC_PER_MSEC;
        let bw = (delivered * BW_UNIT / t_us).min(u32::MAX as u64) as u32;
        self.lt_bw_interval_done(tp, bw);
    }

    // -----------------------------------------------------------------------------------------
    // The model

    /// bbr_update_bw: count rounds, sample long-term bandwidth, feed the max filter.
    fn update_bw(&mut self, tp: &TcpState, rs: &RateSample) {
        self.round_start = false;
        let Some(interval_us) = interval_us(rs) else {
            return;
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        if self.p.lt_bw {
            self.lt_bw_sampling(tp, rs);
        }
        let bw = (rs.delivered as u64 * BW_UNIT / interval_us).min(u32::MAX as u64);
        // An app-limited sample reflects the application, not the path: it may only raise the
        // estimate.
        if !rs.is_app_limited || bw >= self.max_bw() as u64 {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// bbr_update_ack_aggregation: the windowed max of packets ACKed beyond what btl_bw
    /// predicts since the epoch began.
    fn update_ack_aggregation(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.p.extra_acked_gain == 0 || rs.acked_sacked == 0 || interval_us(rs).is_none() {
            return;
        }
        let bw = self.bw();
        self.ack_aggr
            .update(tp, rs, self.round_start, bw, EXTRA_ACKED_WIN_RTTS);
    }

    /// bbr_check_full_bw_reached: the pipe is full after FULL_BW_CNT round starts without
    /// 25 % growth of the max bandwidth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        let max_bw = self.max_bw();
        self.full.check(self.round_start, rs, max_bw);
    }

    /// bbr_check_drain: STARTUP -> DRAIN once the pipe is full; DRAIN -> PROBE_BW once the
    /// queue is estimated drained.
    fn check_drain(&mut self, tp: &mut TcpState) {
        if self.mode == Mode::Startup && self.full.reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight())
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp);
        }
    }

    /// bbr_check_probe_rtt_done: leave PROBE_RTT once its time is up; restore cwnd.
    fn check_probe_rtt_done(&mut self, tp: &mut TcpState) {
        let now = jiffies(tp.now);
        if !(self.probe_rtt_done_stamp != 0 && after(now, self.probe_rtt_done_stamp)) {
            return;
        }
        self.min_rtt_stamp = now; // wait a while until the next PROBE_RTT
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.reset_mode(tp);
    }

    /// bbr_update_min_rtt: the 10 s min_rtt filter, and PROBE_RTT entry and exit.
    fn update_min_rtt(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let now = jiffies(tp.now);
        let win = self.p.min_rtt_win_sec.wrapping_mul(HZ);
        let filter_expired = after(now, self.min_rtt_stamp.wrapping_add(win));
        let rtt_us = if rs.rtt_ns >= 0 {
            Some(rs.rtt_ns as u64 / 1000)
        } else {
            None
        };
        // rs->is_ack_delayed is always false here (see the header).
        if let Some(rtt) = rtt_us {
            if rtt <= self.min_rtt_us as u64 || filter_expired {
                self.min_rtt_us = rtt.min(u32::MAX as u64) as u32;
                self.min_rtt_stamp = now;
            }
        }
        if self.p.probe_rtt_mode_ms > 0
            && filter_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt; // dip, drain the queue
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at 4 packets say nothing about bandwidth.
            tp.app_limited = (tp.delivered + tp.packets_in_flight() as u64).max(1);
            // Hold the minimum inflight for max(probe_rtt_mode_ms, one round).
            if self.probe_rtt_done_stamp == 0 && tp.packets_in_flight() <= CWND_MIN_TARGET {
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
        // An idle restart ends with the first ACK of new data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// bbr_update_gains: the mode's pacing and cwnd gains.
    fn update_gains(&mut self) {
        let (pacing, cwnd) = match self.mode {
            Mode::Startup => (self.p.high_gain, self.p.high_gain),
            // Pace slowly to drain, keep cwnd.
            Mode::Drain => (self.p.drain_gain, self.p.high_gain),
            Mode::ProbeBw => {
                let g = if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx as usize]
                };
                (g, self.p.cwnd_gain)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }

    /// bbr_update_model.
    fn update_model(&mut self, tp: &mut TcpState, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }
}

/// The sample's interval in µs, None when the sample is not a valid observation.
#[inline]
pub(super) fn interval_us(rs: &RateSample) -> Option<u64> {
    if rs.delivered < 0 || rs.interval_ns <= 0 {
        return None;
    }
    // tcp_rate.c keeps interval_us; a sub-microsecond interval is 0 there, hence invalid.
    let us = rs.interval_ns as u64 / 1000;
    (us > 0).then_some(us)
}

// ---------------------------------------------------------------------------------------------
// Arithmetic shared with bbr2.rs (tcp_bbr2.c keeps these from tcp_bbr.c unchanged)

/// bbr_rate_bytes_per_sec: `rate` (BW_UNIT packets/µs) times `gain`, less the pacing
/// margin, in bytes per second. The kernel's order of operations, so the same rounding.
pub(super) fn rate_bytes_per_sec(tp: &TcpState, rate: u64, gain: u32) -> u64 {
    let mut r = rate as u128 * tp.mss_cache as u128;
    r *= gain as u128;
    r >>= BBR_SCALE;
    r *= (USEC_PER_SEC / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
    (r >> BW_SCALE).min(u64::MAX as u128) as u64
}

/// bbr_bw_to_pacing_rate (sk_max_pacing_rate is unlimited).
pub(super) fn bw_to_pacing_rate(tp: &TcpState, bw: u32, gain: u32) -> u64 {
    rate_bytes_per_sec(tp, bw as u64, gain)
}

/// bbr_bdp: ceil(bw · min_rtt · gain) in packets; the initial window before any RTT
/// (`min_rtt_us` still u32::MAX).
pub(super) fn bdp(bw: u32, min_rtt_us: u32, gain: u32) -> u32 {
    if min_rtt_us == u32::MAX {
        return INIT_CWND;
    }
    let w = bw as u128 * min_rtt_us as u128;
    // Remove the BW_SCALE shift rounding up, so that an underestimate cannot feed on itself.
    let bdp = ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128);
    bdp.min(u32::MAX as u128) as u32
}

/// A bandwidth in BW_UNIT packets per µs as bit/s (of `mss_cache`-byte packets).
pub(super) fn bw_bps(tp: &TcpState, bw: u32) -> f64 {
    bw as f64 * tp.mss_cache as f64 * 8.0 * 1e6 / BW_UNIT as f64
}

/// bbr_min_tso_segs: one segment per burst below bbr_min_tso_rate, else two.
pub(super) fn min_tso_segs(tp: &TcpState) -> u32 {
    if tp.pacing_rate < MIN_TSO_RATE_BPS >> 3 {
        1
    } else {
        2
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        if self.mp.is_some() {
            "mpbbr"
        } else {
            "bbr"
        }
    }

    /// bbr_init.
    fn init(&mut self, tp: &mut TcpState) {
        self.prior_cwnd = 0;
        tp.snd_ssthresh = crate::state::INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = tp.min_rtt_us.min(u32::MAX as u64) as u32;
        self.min_rtt_stamp = jiffies(tp.now);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full.restart();
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.reset_startup_mode();
        self.pacing_gain = self.p.high_gain;
        self.cwnd_gain = self.p.high_gain;
        self.ack_aggr = AckAggregation {
            epoch_mstamp: mstamp_us(tp.now),
            ..AckAggregation::default()
        };
        tp.pacing_needed = true; // SK_PACING_NEEDED
        self.publish(tp);
    }

    /// bbr_ssthresh: entering loss recovery; save cwnd for when it ends. ssthresh is unchanged.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// bbr_main.
    fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) {
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain_in_force(tp));
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
        self.publish(tp);
    }

    /// bbr_set_state: an RTO restarts full-pipe detection and ends a round for long-term
    /// sampling, as a loss.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample {
                losses: 1,
                ..Default::default()
            };
            self.prev_ca_state = CaState::Loss;
            self.full.bw = 0;
            self.round_start = true;
            if self.p.lt_bw {
                self.lt_bw_sampling(tp, &rs);
            }
        }
    }

    /// bbr_cwnd_event: restarting from idle, pace at 1.0 · btl_bw in PROBE_BW (no need for
    /// more; MPTCP-BBR: its cruise gain), or see whether PROBE_RTT is already over.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if event != CaEvent::TxStart || tp.app_limited == 0 {
            return;
        }
        self.idle_restart = true;
        self.ack_aggr.restart_epoch(mstamp_us(tp.now));
        match self.mode {
            Mode::ProbeBw => {
                let bw = self.bw();
                let gain = self.cruise_gain(tp);
                self.set_pacing_rate(tp, bw, gain);
            }
            Mode::ProbeRtt => self.check_probe_rtt_done(tp),
            _ => {}
        }
        self.publish(tp);
    }

    /// bbr_undo_cwnd: a spurious slow-down; restart full-pipe detection and long-term sampling.
    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        self.full.bw = 0;
        self.full.cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        if self.mp.is_some() {
            MPBBR_TELEMETRY
        } else {
            BBR_TELEMETRY
        }
    }

    /// The model: bandwidth estimate (bbr_bw, in bit/s from packets per µs << 24), min RTT,
    /// and the gains in force; MPTCP-BBR adds α and RTT'.
    fn telemetry(&self, tp: &TcpState, out: &mut [f64]) {
        super::bbr_model::model_telemetry(
            self.bw(),
            self.min_rtt_us,
            self.pacing_gain_in_force(tp),
            self.cwnd_gain,
            tp,
            out,
        );
        if let Some(mp) = &self.mp {
            out[4] = mp.alpha(&self.own_model(tp));
            let rtt_prime = mp.rtt_prime_us(self.min_rtt_us);
            out[5] = if rtt_prime == u32::MAX {
                f64::NAN
            } else {
                rtt_prime as f64 / 1e3
            };
        }
    }

    fn path_model(&self, tp: &TcpState) -> Option<PathModel> {
        Some(PathModel {
            bw_bps: bw_bps(tp, self.bw()),
            min_rtt_us: (self.min_rtt_us != u32::MAX).then_some(self.min_rtt_us),
            phase: match self.mode {
                Mode::Startup => ModelPhase::Startup,
                Mode::Drain => ModelPhase::Drain,
                Mode::ProbeBw => ModelPhase::ProbeBw,
                Mode::ProbeRtt => ModelPhase::ProbeRtt,
            },
            pacing_gain: self.pacing_gain_in_force(tp) as f64 / BBR_UNIT as f64,
        })
    }

    fn mode(&self, _tp: &TcpState) -> &'static str {
        self.mode.name()
    }
}

/// The test helpers are shared with MPTCP-BBR's tests (`coupled/mpbbr.rs`).
#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// 10 Mbit/s of 1500-byte packets (833.33 pkt/s) in BBR's unit:
    /// 833.33e-6 pkt/µs · 2^24 = 13981.01, floored as the kernel's division does.
    pub(in crate::cc) const BW_10MBPS: u32 = 13_981;
    /// 40 ms.
    pub(in crate::cc) const RTT_40MS_US: u32 = 40_000;

    pub(in crate::cc) fn bbr(params: &str) -> Bbr {
        let t: toml::Table = toml::from_str(params).expect("valid toml");
        Bbr::new(Params::from_table(&t).expect("valid params"), 7, None)
    }

    /// MPTCP-BBR with `params` on `slot` (as `cc = "mpbbr"` builds it), with the seed of
    /// [`bbr`].
    pub(in crate::cc) fn mpbbr(params: &str, slot: crate::cc::CouplingSlot) -> Bbr {
        let t: toml::Table = toml::from_str(params).expect("valid toml");
        let config = CcConfig::new(&t, 7).with_coupling(slot.clone());
        let p = super::super::coupled::mpbbr::Params::from_table(&t).expect("valid params");
        Bbr::build_coupled(&config, MpBbrCoupling::new(slot, p)).expect("valid params")
    }

    /// A connection just established at `t_ms`, srtt = min_rtt = 40 ms, and BBR initialised.
    pub(in crate::cc) fn established(b: &mut Bbr, t_ms: u64) -> TcpState {
        let mut tp = TcpState {
            now: t_ms * 1_000_000,
            srtt_us: 40_000,
            min_rtt_us: 40_000,
            ..Default::default()
        };
        b.init(&mut tp);
        tp
    }

    /// Puts `b` in PROBE_BW at `phase` with btl_bw = `bw` and min_rtt 40 ms, as after STARTUP.
    pub(in crate::cc) fn in_probe_bw(b: &mut Bbr, tp: &mut TcpState, bw: u32, phase: u32) {
        b.full.reached = true;
        b.full.bw = bw;
        b.bw.reset(b.rtt_cnt, bw as u64);
        b.min_rtt_us = RTT_40MS_US;
        b.p.cycle_start = Some(phase);
        b.reset_probe_bw_mode(tp);
        b.update_gains();
        tp.pacing_rate = bw_to_pacing_rate(tp, bw, b.pacing_gain);
    }

    /// One ACK, `dt_us` after the previous one: `acked` packets delivered (`lost` newly lost),
    /// a rate sample of `sample_pkts` over `interval_us`, an RTT sample, `in_flight` packets
    /// before the ACK and after it; `round` says whether the sampled packet was sent after the
    /// current round began (so this ACK starts a new round).
    pub(in crate::cc) struct Ack {
        pub dt_us: u64,
        pub acked: u32,
        pub lost: u32,
        pub sample_pkts: i64,
        pub interval_us: i64,
        pub rtt_us: i64,
        pub in_flight: u32,
        pub round: bool,
        pub app_limited: bool,
    }

    impl Default for Ack {
        fn default() -> Self {
            // Steady state at 10 Mbit/s, 40 ms: 34 packets per 40.8 ms, one packet per 1.2 ms.
            Ack {
                dt_us: 1200,
                acked: 1,
                lost: 0,
                sample_pkts: 34,
                interval_us: 40_800,
                rtt_us: 41_000,
                in_flight: 34,
                round: false,
                app_limited: false,
            }
        }
    }

    pub(in crate::cc) fn ack(b: &mut Bbr, tp: &mut TcpState, a: Ack) {
        tp.now += a.dt_us * 1000;
        tp.delivered += a.acked as u64;
        tp.lost += a.lost as u64;
        if a.acked > 0 {
            tp.delivered_mstamp = tp.now;
        }
        tp.packets_out = a.in_flight;
        let prior_delivered = if a.round {
            b.next_rtt_delivered
        } else {
            b.next_rtt_delivered.saturating_sub(1)
        };
        let rs = RateSample {
            prior_delivered,
            prior_mstamp: 1,
            delivered: a.sample_pkts,
            interval_ns: a.interval_us * 1000,
            rtt_ns: if a.rtt_us >= 0 { a.rtt_us * 1000 } else { -1 },
            acked_sacked: a.acked,
            losses: a.lost,
            prior_in_flight: a.in_flight + a.acked,
            is_app_limited: a.app_limited,
            ..Default::default()
        };
        b.cong_control(tp, &rs);
    }

    /// BW_UNIT-scaled bandwidth of `pkts` packets per `us` microseconds.
    fn bw_of(pkts: u64, us: u64) -> u32 {
        (pkts * BW_UNIT / us) as u32
    }

    #[test]
    fn constants_match_the_kernel() {
        assert_eq!(HIGH_GAIN, 739); // 256 * 2885 / 1000 + 1
        assert_eq!(DRAIN_GAIN, 88); // 256 * 1000 / 2885
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
        assert_eq!(FULL_BW_THRESH, 320);
        assert_eq!(LT_BW_RATIO, 32);
        assert_eq!(LT_BW_DIFF, 500);
        // A high_gain given as a number keeps DRAIN its inverse: 65536 / 739 = 88.
        let b = bbr("high_gain = 2.885");
        assert_eq!((b.p.high_gain, b.p.drain_gain), (739, 88));
    }

    #[test]
    fn pacing_rate_is_bw_times_gain_less_one_percent_in_fixed_point() {
        let tp = TcpState::default(); // mss 1448
                                      // 13981 · 1448 · 256 >> 8 = 20_244_488; · 990_000 >> 24 = 1_194_598 B/s (9.557 Mbit/s,
                                      // against the exact 833.33 · 1448 · 0.99 = 1_194_600).
        assert_eq!(bw_to_pacing_rate(&tp, BW_10MBPS, BBR_UNIT), 1_194_598);
        // 1.25, 0.75, high_gain and drain_gain, each through the same truncations.
        assert_eq!(bw_to_pacing_rate(&tp, BW_10MBPS, 320), 1_493_248);
        assert_eq!(bw_to_pacing_rate(&tp, BW_10MBPS, 192), 895_949);
        assert_eq!(bw_to_pacing_rate(&tp, BW_10MBPS, 739), 3_448_470);
        assert_eq!(bw_to_pacing_rate(&tp, BW_10MBPS, 88), 410_643);
    }

    #[test]
    fn initial_pacing_rate_is_high_gain_times_init_cwnd_over_srtt() {
        let mut b = bbr("");
        let tp = established(&mut b, 40);
        // bw = 10 · 2^24 / 40_000 µs = 4194; · 1448 · 739 >> 8 · 990_000 >> 24 = 1_034_467 B/s
        // (2.885 · 10 · 1448 B / 40 ms · 0.99 = 1_033_908, give or take the truncations).
        assert_eq!(tp.pacing_rate, 1_034_467);
        assert!(tp.pacing_needed);
        assert_eq!(tp.snd_ssthresh, crate::state::INFINITE_SSTHRESH);
        assert_eq!(b.mode(&tp), "startup");
        assert_eq!((b.pacing_gain(), b.cwnd_gain()), (739, 739));
        assert_eq!(b.min_rtt_us, 40_000);
    }

    #[test]
    fn target_cwnd_is_bdp_times_gain_plus_the_quantization_budget() {
        // Without the ACK-aggregation allowance (tested on its own below): these synthetic
        // ACKs of 2-3 packets per 1.2 ms come faster than btl_bw and would add to the target.
        let mut b = bbr("extra_acked_gain = 0");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS, 2);
        // BDP = ceil(13981 · 40_000 / 2^24) = ceil(33.33) = 34 packets; with gain 2, ceil(66.67) = 67.
        assert_eq!(b.bdp(BW_10MBPS, BBR_UNIT), 34);
        assert_eq!(b.bdp(BW_10MBPS, CWND_GAIN), 67);
        // At 1.19 MB/s, 1 ms of data is 1166 bytes < 1 MSS: the TSO goal is bbr_min_tso_segs = 2,
        // the budget 3 · 2 = 6: 67 + 6 = 73, rounded up to even = 74.
        assert_eq!(Bbr::tso_segs_goal(&tp), 2);
        assert_eq!(b.inflight(&tp, BW_10MBPS, CWND_GAIN), 74);
        // In the 1.25 phase, 2 more.
        b.cycle_idx = 0;
        assert_eq!(b.inflight(&tp, BW_10MBPS, CWND_GAIN), 76);
        // cwnd converges to the target: +acked per ACK, capped at 74.
        b.cycle_idx = 2;
        tp.snd_cwnd = 70;
        ack(
            &mut b,
            &mut tp,
            Ack {
                acked: 2,
                ..Default::default()
            },
        );
        assert_eq!(tp.snd_cwnd, 72);
        ack(
            &mut b,
            &mut tp,
            Ack {
                acked: 3,
                ..Default::default()
            },
        );
        assert_eq!(tp.snd_cwnd, 74);
        ack(
            &mut b,
            &mut tp,
            Ack {
                acked: 3,
                ..Default::default()
            },
        );
        assert_eq!(tp.snd_cwnd, 74);
        // At 100 Mbit/s (bw 139810): pacing 11_945_988 B/s, 1 ms = 11_665 B = 8 segments,
        // budget 24; BDP·2 = ceil(666.7) = 667: 691, even: 692.
        let bw100 = BW_10MBPS * 10;
        tp.pacing_rate = bw_to_pacing_rate(&tp, bw100, BBR_UNIT);
        assert_eq!(tp.pacing_rate, 11_945_988);
        assert_eq!(Bbr::tso_segs_goal(&tp), 8);
        assert_eq!(b.inflight(&tp, bw100, CWND_GAIN), 692);
        // Below 1.2 Mbit/s, one segment per burst; at 1 Gbit/s+, 64 KB less headers = 45.
        tp.pacing_rate = 149_999;
        assert_eq!(Bbr::tso_segs_goal(&tp), 1);
        tp.pacing_rate = 1_000_000_000;
        assert_eq!(Bbr::tso_segs_goal(&tp), (65_536 - 1 - 320) / 1448);
    }

    #[test]
    fn bdp_is_the_initial_window_before_any_rtt_sample() {
        let b = bbr("");
        assert_eq!(b.min_rtt_us, u32::MAX);
        assert_eq!(b.bdp(BW_10MBPS, CWND_GAIN), INIT_CWND);
    }

    #[test]
    fn probe_bw_cycles_gains_five_quarters_three_quarters_then_six_ones() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS, 0);
        tp.snd_cwnd = 76;
        let mut seen = vec![b.pacing_gain()];
        let mut phase_start = tp.now;
        let mut lengths = vec![];
        // ACKs every ms with inflight held high (76 > 1.25 BDP + budget = 42 + 6 + 2 = 50), so
        // probing reaches its target and draining does not end early: every phase lasts
        // just over min_rtt.
        while seen.len() < 17 {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    dt_us: 1000,
                    in_flight: 76,
                    ..Default::default()
                },
            );
            if b.pacing_gain() != *seen.last().unwrap()
                || (b.pacing_gain() == BBR_UNIT
                    && tp.now - phase_start > 40_000_000
                    && b.cycle_mstamp == mstamp_us(tp.now))
            {
                seen.push(b.pacing_gain());
                lengths.push(tp.now - phase_start);
                phase_start = tp.now;
            }
        }
        assert_eq!(
            seen,
            [320, 192, 256, 256, 256, 256, 256, 256, 320, 192, 256, 256, 256, 256, 256, 256, 320]
        );
        // A phase ends on the first ACK more than min_rtt (40 ms) after it began: 41 ms.
        assert!(lengths.iter().all(|&l| l == 41_000_000), "{lengths:?}");
        // Pacing follows: 1.25 / 0.75 / 1 of btl_bw, less 1 %.
        assert_eq!(tp.pacing_rate, 1_493_248);
    }

    #[test]
    fn probing_waits_for_inflight_and_draining_stops_at_one_bdp() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS, 0);
        // 1.25 phase, inflight below 1.25·BDP + budget (42 + 6 + 2 = 50 with the +2 of phase 0,
        // plus the next TSO burst counted at the departure time): stays past min_rtt.
        for _ in 0..60 {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    dt_us: 1000,
                    in_flight: 40,
                    ..Default::default()
                },
            );
        }
        assert_eq!(
            b.cycle_idx, 0,
            "probing persists until inflight reaches its target"
        );
        // A loss ends it (the buffer may not hold 1.25 BDP).
        ack(
            &mut b,
            &mut tp,
            Ack {
                dt_us: 1000,
                in_flight: 40,
                lost: 1,
                ..Default::default()
            },
        );
        assert_eq!(b.cycle_idx, 1);
        // 0.75 phase: ends at once when inflight (before the ACK) is at most BDP + budget
        // (34 + 6 = 40).
        ack(
            &mut b,
            &mut tp,
            Ack {
                dt_us: 1000,
                in_flight: 45,
                ..Default::default()
            },
        );
        assert_eq!(b.cycle_idx, 1);
        ack(
            &mut b,
            &mut tp,
            Ack {
                dt_us: 1000,
                in_flight: 39,
                ..Default::default()
            },
        );
        assert_eq!(b.cycle_idx, 2);
    }

    #[test]
    fn random_start_phase_is_never_the_draining_one() {
        let mut counts = [0; 8];
        for seed in 0..400 {
            let mut b = Bbr::new(Params::default(), seed, None);
            let tp = TcpState::default();
            b.reset_probe_bw_mode(&tp);
            counts[b.cycle_idx as usize] += 1;
        }
        assert_eq!(counts[1], 0);
        // The other seven are equally likely: 400 / 7 = 57 each, give or take.
        assert!(
            counts
                .iter()
                .enumerate()
                .all(|(i, &c)| i == 1 || (30..90).contains(&c)),
            "{counts:?}"
        );
        // A fixed start is honoured, 1 included.
        for start in 0..8 {
            let mut b = bbr(&format!("cycle_start = {start}"));
            b.reset_probe_bw_mode(&TcpState::default());
            assert_eq!(b.cycle_idx, start);
        }
    }

    #[test]
    fn startup_ends_three_rounds_after_the_bandwidth_plateau_then_drain_then_probe_bw() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        tp.snd_cwnd = 10;
        // One ACK per round; the delivery rate doubles for 5 rounds, then stays at 10 Mbit/s.
        let rates = [875u64, 1750, 3500, 7000, 13_981, 13_981, 13_981, 13_981];
        let mut modes = vec![];
        for (i, r) in rates.iter().enumerate() {
            let pkts = (r * 40_000 / BW_UNIT).max(1) as i64;
            let interval = (pkts as u64 * BW_UNIT / r) as i64;
            ack(
                &mut b,
                &mut tp,
                Ack {
                    round: true,
                    sample_pkts: pkts,
                    interval_us: interval,
                    in_flight: 200,
                    ..Default::default()
                },
            );
            modes.push(b.mode(&tp));
            assert_eq!(b.rtt_cnt, i as u64 + 1);
        }
        // Round 5 reaches the plateau; rounds 6, 7 and 8 see no 25 % growth: DRAIN at round 8.
        assert_eq!(
            modes,
            [
                "startup", "startup", "startup", "startup", "startup", "startup", "startup",
                "drain"
            ]
        );
        assert_eq!((b.pacing_gain(), b.cwnd_gain()), (88, 739));
        // ssthresh is set to the one-BDP inflight target (BDP of the plateau + budget).
        let bw = b.max_bw();
        assert_eq!(tp.snd_ssthresh, b.inflight(&tp, bw, BBR_UNIT));
        // DRAIN lasts while inflight exceeds it; then PROBE_BW.
        let target = tp.snd_ssthresh;
        ack(
            &mut b,
            &mut tp,
            Ack {
                in_flight: target + 10,
                ..Default::default()
            },
        );
        assert_eq!(b.mode(&tp), "drain");
        ack(
            &mut b,
            &mut tp,
            Ack {
                in_flight: target,
                ..Default::default()
            },
        );
        assert_eq!(b.mode(&tp), "probe_bw");
        assert_ne!(b.cycle_idx, 1);
    }

    #[test]
    fn app_limited_rounds_do_not_count_towards_a_full_pipe() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        for _ in 0..10 {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    round: true,
                    app_limited: true,
                    ..Default::default()
                },
            );
        }
        assert_eq!(b.mode(&tp), "startup");
        assert!(!b.full.reached);
    }

    #[test]
    fn probe_rtt_after_ten_seconds_without_a_new_min_rtt_holds_four_packets_for_200ms() {
        // ACKs every ms outpace btl_bw (a packet per 1.2 ms): keep the aggregation allowance
        // out of cwnd so that the saved cwnd is the plain target.
        let mut b = bbr("extra_acked_gain = 0");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS, 2);
        tp.snd_cwnd = 74;
        // RTT samples of 41 ms never match min_rtt = 40 ms: the filter expires after 10 s.
        while b.mode(&tp) != "probe_rtt" {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    dt_us: 1000,
                    in_flight: 74,
                    ..Default::default()
                },
            );
        }
        // tcp_jiffies32 must be after min_rtt_stamp + 10 s (2500 jiffies of 4 ms, stamped in the
        // jiffy of time 0): the first ACK in jiffy 2501, at 10_004 ms.
        assert_eq!(tp.now, 10_004_000_000);
        assert_eq!(tp.snd_cwnd, 4);
        assert_eq!(b.prior_cwnd, 74);
        assert_eq!((b.pacing_gain(), b.cwnd_gain()), (BBR_UNIT, BBR_UNIT));
        // The expired filter took the sample: min_rtt is now 41 ms.
        assert_eq!(b.min_rtt_us, 41_000);
        assert!(
            tp.app_limited > 0,
            "samples in PROBE_RTT are marked app-limited"
        );
        // Inflight drains over 50 ms; the 200 ms clock starts when it reaches 4.
        for i in 0..50 {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    dt_us: 1000,
                    in_flight: 70 - i,
                    ..Default::default()
                },
            );
            assert_eq!(tp.snd_cwnd, 4);
        }
        ack(
            &mut b,
            &mut tp,
            Ack {
                dt_us: 1000,
                in_flight: 4,
                ..Default::default()
            },
        );
        let at_four = jiffies(tp.now);
        // msecs_to_jiffies(200) = 50 jiffies at HZ = 250.
        assert_eq!(b.probe_rtt_done_stamp, at_four + 50);
        // A round passes soon, but the mode holds for 200 ms: it ends on the first ACK after
        // done_stamp (tcp_jiffies32 strictly after it), 51 jiffies on.
        let mut rounds = 0;
        while b.mode(&tp) == "probe_rtt" {
            rounds += 1;
            ack(
                &mut b,
                &mut tp,
                Ack {
                    dt_us: 1000,
                    in_flight: 4,
                    round: rounds % 10 == 0,
                    ..Default::default()
                },
            );
            if b.mode(&tp) == "probe_rtt" {
                assert_eq!(tp.snd_cwnd, 4);
            }
        }
        assert_eq!(jiffies(tp.now), at_four + 51);
        // Back to PROBE_BW with the saved cwnd, and the min_rtt clock restarted.
        assert_eq!(b.mode(&tp), "probe_bw");
        assert!(tp.snd_cwnd >= 74, "cwnd restored: {}", tp.snd_cwnd);
        assert_eq!(b.min_rtt_stamp, at_four + 51);
    }

    #[test]
    fn probe_rtt_waits_for_a_round_as_well_as_200ms() {
        let mut b = bbr("probe_rtt_mode_ms = 200");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS, 2);
        b.mode = Mode::ProbeRtt;
        ack(
            &mut b,
            &mut tp,
            Ack {
                dt_us: 1000,
                in_flight: 4,
                ..Default::default()
            },
        );
        let stamp = b.probe_rtt_done_stamp;
        assert_ne!(stamp, 0);
        // 300 ms without a round start: still in PROBE_RTT.
        for _ in 0..300 {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    dt_us: 1000,
                    in_flight: 4,
                    ..Default::default()
                },
            );
        }
        assert_eq!(b.mode(&tp), "probe_rtt");
        ack(
            &mut b,
            &mut tp,
            Ack {
                dt_us: 1000,
                in_flight: 4,
                round: true,
                ..Default::default()
            },
        );
        assert_eq!(b.mode(&tp), "probe_bw");
    }

    #[test]
    fn probe_rtt_returns_to_startup_if_the_pipe_was_never_filled() {
        let mut b = bbr("probe_rtt_mode_ms = 0");
        let mut tp = established(&mut b, 0);
        // probe_rtt_mode_ms = 0 disables PROBE_RTT, as in the kernel.
        for _ in 0..12_000 {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    dt_us: 1000,
                    app_limited: true,
                    ..Default::default()
                },
            );
        }
        assert_eq!(b.mode(&tp), "startup");
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        // The min_rtt filter expires in the jiffy after 10 s (HZ = 250: at 10_004 ms).
        for _ in 0..10_004 {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    dt_us: 1000,
                    app_limited: true,
                    in_flight: 4,
                    ..Default::default()
                },
            );
        }
        assert_eq!(b.mode(&tp), "probe_rtt");
        for i in 0..250 {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    dt_us: 1000,
                    in_flight: 4,
                    round: i % 20 == 0,
                    app_limited: true,
                    ..Default::default()
                },
            );
        }
        assert_eq!(b.mode(&tp), "startup");
    }

    #[test]
    fn idle_restart_paces_at_one_times_bw_and_defers_probe_rtt() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS, 0);
        assert_eq!(tp.pacing_rate, 1_493_248);
        tp.app_limited = 100;
        b.cwnd_event(&mut tp, CaEvent::TxStart);
        assert!(b.idle_restart);
        assert_eq!(tp.pacing_rate, 1_194_598);
        // Not app-limited: no restart.
        let mut b2 = bbr("");
        let mut tp2 = established(&mut b2, 0);
        in_probe_bw(&mut b2, &mut tp2, BW_10MBPS, 0);
        b2.cwnd_event(&mut tp2, CaEvent::TxStart);
        assert!(!b2.idle_restart);
        // An expired min_rtt filter does not start PROBE_RTT while restarting from idle; the
        // first ACK that delivers data ends the restart.
        tp.now += 11_000_000_000;
        ack(
            &mut b,
            &mut tp,
            Ack {
                dt_us: 0,
                acked: 0,
                sample_pkts: -1,
                rtt_us: -1,
                ..Default::default()
            },
        );
        assert_eq!(b.mode(&tp), "probe_bw");
        assert!(b.idle_restart);
        // (Had that ACK carried an RTT sample, the expired filter would have taken it and
        // restarted its 10 s clock, as in the kernel.)
        ack(
            &mut b,
            &mut tp,
            Ack {
                rtt_us: -1,
                ..Default::default()
            },
        );
        assert!(!b.idle_restart);
        ack(
            &mut b,
            &mut tp,
            Ack {
                rtt_us: 50_000,
                ..Default::default()
            },
        );
        assert_eq!(b.mode(&tp), "probe_rtt");
    }

    #[test]
    fn pacing_rate_only_rises_until_the_pipe_is_full() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        let start = tp.pacing_rate;
        // A low first sample (2 packets in 40 ms) would pace slower: ignored in STARTUP.
        ack(
            &mut b,
            &mut tp,
            Ack {
                round: true,
                sample_pkts: 2,
                interval_us: 40_000,
                ..Default::default()
            },
        );
        assert_eq!(tp.pacing_rate, start);
        // A high one raises it: 2.885 · bw.
        ack(
            &mut b,
            &mut tp,
            Ack {
                round: true,
                sample_pkts: 34,
                interval_us: 40_800,
                ..Default::default()
            },
        );
        let bw = bw_of(34, 40_800);
        assert_eq!(tp.pacing_rate, bw_to_pacing_rate(&tp, bw, 739));
    }

    #[test]
    fn recovery_conserves_packets_for_a_round_then_restores_the_saved_cwnd() {
        let mut b = bbr("extra_acked_gain = 0");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS, 2);
        tp.snd_cwnd = 74;
        ack(
            &mut b,
            &mut tp,
            Ack {
                in_flight: 74,
                ..Default::default()
            },
        );
        // The sender enters Recovery: ssthresh() saves cwnd, then set_state, then the ACK.
        assert_eq!(b.ssthresh(&tp), tp.snd_ssthresh);
        assert_eq!(b.prior_cwnd, 74);
        b.set_state(&mut tp, CaState::Recovery);
        tp.ca_state = CaState::Recovery;
        // 3 lost, 1 sacked, 60 still in flight: cwnd = inflight + acked = 61.
        ack(
            &mut b,
            &mut tp,
            Ack {
                acked: 1,
                lost: 3,
                in_flight: 60,
                ..Default::default()
            },
        );
        assert!(b.packet_conservation);
        assert_eq!(tp.snd_cwnd, 61);
        // Still conserving: never below inflight + acked, never more.
        ack(
            &mut b,
            &mut tp,
            Ack {
                acked: 2,
                in_flight: 58,
                ..Default::default()
            },
        );
        assert_eq!(tp.snd_cwnd, 61);
        ack(
            &mut b,
            &mut tp,
            Ack {
                acked: 2,
                lost: 1,
                in_flight: 60,
                ..Default::default()
            },
        );
        assert_eq!(tp.snd_cwnd, 62);
        // A round later conservation stops: cwnd grows by at most the packets acked.
        ack(
            &mut b,
            &mut tp,
            Ack {
                acked: 2,
                in_flight: 60,
                round: true,
                ..Default::default()
            },
        );
        assert!(!b.packet_conservation);
        assert_eq!(tp.snd_cwnd, 64);
        // Recovery ends: the cwnd saved at its start comes back.
        tp.ca_state = CaState::Open;
        ack(
            &mut b,
            &mut tp,
            Ack {
                acked: 1,
                in_flight: 50,
                ..Default::default()
            },
        );
        assert_eq!(tp.snd_cwnd, 74);
    }

    #[test]
    fn an_rto_restarts_full_pipe_detection_and_starts_long_term_sampling() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        b.full.bw = 5000;
        b.set_state(&mut tp, CaState::Loss);
        assert_eq!(b.full.bw, 0);
        assert!(b.round_start);
        assert!(b.lt_is_sampling);
        assert_eq!(b.prev_ca_state, CaState::Loss);
        // With lt_bw = false there is no long-term sampling.
        let mut b = bbr("lt_bw = false");
        let mut tp = established(&mut b, 0);
        b.set_state(&mut tp, CaState::Loss);
        assert!(!b.lt_is_sampling);
    }

    /// A policer at `pkts_per_round` packets per 10 ms round, dropping `lost` per round.
    fn policed_round(b: &mut Bbr, tp: &mut TcpState, delivered: u32, lost: u32) {
        ack(
            b,
            tp,
            Ack {
                dt_us: 10_000,
                acked: delivered,
                lost,
                round: true,
                sample_pkts: delivered as i64,
                interval_us: 10_000,
                ..Default::default()
            },
        );
    }

    #[test]
    fn two_consistent_lossy_intervals_mean_a_policer_and_lt_bw_is_their_average() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS * 2, 2);
        // The first loss starts the first interval (at 10 ms, delivered 100, lost 30); its
        // round start is the interval's first round.
        policed_round(&mut b, &mut tp, 100, 30);
        assert!(b.lt_is_sampling);
        assert_eq!(
            (
                b.lt_last_delivered,
                b.lt_last_lost,
                b.lt_last_stamp,
                b.lt_rtt_cnt
            ),
            (100, 30, 10, 1)
        );
        // Rounds 2 and 3: fewer than bbr_lt_intvl_min_rtts (4).
        for _ in 0..2 {
            policed_round(&mut b, &mut tp, 100, 30);
        }
        assert_eq!(b.lt_bw, 0);
        // Round 4 ends on a loss with lost/delivered = 90/300 = 30 % >= 50/256 = 19.5 %:
        // bw = 300 packets in 30 ms = 300 · 2^24 / 30_000 = 167_772.
        policed_round(&mut b, &mut tp, 100, 30);
        assert_eq!(b.lt_bw, 167_772);
        assert!(!b.lt_use_bw);
        // Second interval at 90 % of that (within 1/8): 360 packets in 40 ms = 150_994;
        // |150_994 - 167_772| · 256 = 4_295_168 <= 32 · 167_772 = 5_368_704.
        for _ in 0..4 {
            policed_round(&mut b, &mut tp, 90, 30);
        }
        assert!(b.lt_use_bw);
        assert_eq!(b.lt_bw, (167_772 + 150_994) / 2);
        assert_eq!(b.bw(), 159_383);
        // Paced at gain 1 on lt_bw, all through PROBE_BW's cycle.
        assert_eq!(b.pacing_gain(), BBR_UNIT);
        assert_eq!(tp.pacing_rate, bw_to_pacing_rate(&tp, 159_383, BBR_UNIT));
        // After 48 rounds, back to the max filter and the gain cycle.
        for _ in 0..47 {
            policed_round(&mut b, &mut tp, 90, 0);
            assert!(b.lt_use_bw);
        }
        policed_round(&mut b, &mut tp, 90, 0);
        assert!(!b.lt_use_bw);
        assert_eq!(b.lt_bw, 0);
    }

    #[test]
    fn inconsistent_or_light_loss_intervals_do_not_mean_a_policer() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS * 2, 2);
        for _ in 0..4 {
            policed_round(&mut b, &mut tp, 100, 30);
        }
        assert_eq!(b.lt_bw, 167_772);
        // Second interval at 50 % (200 packets in 40 ms): not within 1/8 nor 4 kbit/s; it
        // becomes the new reference.
        for _ in 0..4 {
            policed_round(&mut b, &mut tp, 50, 30);
        }
        assert!(!b.lt_use_bw);
        assert_eq!(b.lt_bw, 83_886); // 200 · 2^24 / 40_000
                                     // Light loss (5 %): the interval never ends, and past 16 rounds sampling restarts.
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS * 2, 2);
        for _ in 0..17 {
            policed_round(&mut b, &mut tp, 100, 5);
        }
        assert_eq!(b.lt_bw, 0);
        assert!(b.lt_rtt_cnt <= 16);
    }

    #[test]
    fn ack_aggregation_adds_the_excess_acked_to_cwnd_once_the_pipe_is_full() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        in_probe_bw(&mut b, &mut tp, BW_10MBPS, 2);
        tp.snd_cwnd = 74;
        b.ack_aggr.epoch_mstamp = mstamp_us(tp.now);
        // Steady ACKs at the estimated rate (a packet per 1.2 ms, 0.99998 of btl_bw): at most
        // the rounding of expected_acked in excess.
        for _ in 0..50 {
            ack(
                &mut b,
                &mut tp,
                Ack {
                    in_flight: 70,
                    ..Default::default()
                },
            );
        }
        let before = b.ack_aggr.extra_acked();
        assert!(before <= 2, "{before}");
        // Then 20 packets ACKed at once, 1.2 ms after the previous ACK: 19 more than expected.
        ack(
            &mut b,
            &mut tp,
            Ack {
                acked: 20,
                in_flight: 70,
                ..Default::default()
            },
        );
        let extra = b.ack_aggr.extra_acked();
        assert_eq!(extra, before + 19);
        assert_eq!(b.ack_aggregation_cwnd(), extra);
        // The cwnd target grows by it: 67 + extra + 6, rounded up to even.
        tp.snd_cwnd = 200;
        ack(
            &mut b,
            &mut tp,
            Ack {
                in_flight: 70,
                ..Default::default()
            },
        );
        assert_eq!(tp.snd_cwnd, (67 + b.ack_aggr.extra_acked() + 6 + 1) & !1);
        // Capped at 100 ms of btl_bw: 13981 · 100_000 / 2^24 = 83 packets.
        b.ack_aggr.extra_acked = [500, 0];
        assert_eq!(b.ack_aggregation_cwnd(), 83);
        // extra_acked_gain = 0 turns it off.
        let b = bbr("extra_acked_gain = 0");
        assert_eq!(b.ack_aggregation_cwnd(), 0);
    }

    #[test]
    fn undo_resets_full_pipe_detection_and_keeps_cwnd() {
        let mut b = bbr("");
        let mut tp = established(&mut b, 0);
        b.full.bw = 100;
        b.full.cnt = 2;
        b.lt_bw = 77;
        tp.snd_cwnd = 33;
        assert_eq!(b.undo_cwnd(&tp), 33);
        assert_eq!((b.full.bw, b.full.cnt, b.lt_bw), (0, 0, 0));
    }

    #[test]
    fn parameters_are_validated() {
        let build = |s: &str| {
            let t: toml::Table = toml::from_str(s).unwrap();
            Bbr::build(&CcConfig::new(&t, 1)).err()
        };
        assert!(build("").is_none());
        assert!(build("high_gain = 2.5\ncwnd_gain = 2\nprobe_rtt_mode_ms = 100\nmin_rtt_win_sec = 5\nextra_acked_gain = 0.5\nlt_bw = false\ncycle_start = 3").is_none());
        assert_eq!(build("beta = 1").unwrap().key, "beta");
        assert_eq!(build("cwnd_gain = 4.5").unwrap().key, "cwnd_gain");
        assert_eq!(build("cwnd_gain = 0").unwrap().key, "cwnd_gain");
        assert_eq!(build("high_gain = \"fast\"").unwrap().key, "high_gain");
        assert_eq!(build("cycle_start = 8").unwrap().key, "cycle_start");
        assert_eq!(build("min_rtt_win_sec = 0").unwrap().key, "min_rtt_win_sec");
        assert_eq!(build("lt_bw = 1").unwrap().key, "lt_bw");
        let e = build("probe_rtt_mode_ms = -1").unwrap();
        assert!(e.message.contains("integer from 0"), "{}", e.message);
        let b = bbr("cwnd_gain = 2.5\nmin_rtt_win_sec = 5");
        assert_eq!(b.p.cwnd_gain, 640);
        assert_eq!(b.p.min_rtt_win_sec, 5);
    }
}
