//! CUBIC with HyStart, as Linux 6.x `net/ipv4/tcp_cubic.c` (Linux's default congestion control).
//!
//! # The window function
//!
//! CUBIC grows cwnd as a cubic function of the time since the last congestion event, not of the
//! number of RTTs, so flows with different RTTs converge to similar windows:
//!
//! ```text
//!     W(t) = C·(t − K)³ + W_max        K = ∛(W_max·(1 − β) / C)
//! ```
//!
//! `W_max` is the window at the last loss, the window is cut to `β·W_max` (β = 717/1024 ≈ 0.7),
//! and `K` is the time the curve takes to climb back to `W_max`. The curve is concave below
//! `W_max` (fast regrowth, then a plateau where the last loss happened) and convex above it
//! (cautious, then accelerating probing for new bandwidth). C = 0.4 packets/s³.
//!
//! # How the kernel evaluates it (bictcp_update)
//!
//! An *epoch* starts at the first `cong_avoid` after a window reduction (`epoch_start`, in
//! jiffies). Time is measured in units of 1/1024 s (`BICTCP_HZ` = 10 bits), so that
//! `C·(t − K)³` becomes `cube_rtt_scale·offs³ >> 40` with `cube_rtt_scale = bic_scale·10 = 410`
//! (410/1024 ≈ 0.4), and `K = cubic_root(cube_factor·(W_max − cwnd))` with
//! `cube_factor = 2⁴⁰ / 410`. The target is evaluated one minimum RTT ahead (`t` includes
//! `delay_min`), and turned into `cnt`: grow cwnd by one packet every `cnt` packets acked
//! (`tcp_cong_avoid_ai`), `cnt = cwnd / (target − cwnd)`, so cwnd reaches the target within about
//! one RTT. `cnt` is recomputed at most once per jiffy, and not at all while cwnd is unchanged
//! for up to HZ/32. Two bounds apply: `cnt ≤ 20` in the first epoch (no `W_max` known yet: at
//! least +5 % per RTT), and `cnt ≥ 2` always (at most +50 % per RTT).
//!
//! **TCP friendliness.** CUBIC also tracks the window a Reno flow with the same β would have
//! (`tcp_cwnd`, one packet per `(cwnd·beta_scale) >> 3` packets acked, with
//! `beta_scale = 8·(1024 + β)/3/(1024 − β) = 15`, i.e. the AIMD increase 3(1 − β)/(1 + β) ≈ 0.53
//! packets per RTT), and never grows slower than it. This dominates at small windows and short
//! RTTs.
//!
//! **Fast convergence.** When a loss happens below the previous `W_max`, the flow is probably
//! losing bandwidth to a newcomer, so it remembers a lower `W_max = cwnd·(1 + β)/2` and releases
//! bandwidth sooner. In any case ssthresh = `max(cwnd·β, 2)`.
//!
//! # HyStart (hybrid slow start)
//!
//! In slow start, HyStart looks for the point where cwnd fills the path, and leaves slow start
//! there (`ssthresh = cwnd`) instead of overflowing the buffer. Each round (one window of data,
//! ended when snd_una passes the `end_seq` recorded at the round's start) it runs two detectors,
//! once cwnd ≥ `hystart_low_window` (16):
//!
//! - **ACK train**: ACKs closely spaced (≤ `hystart_ack_delta_us`, 2 ms, apart) form a train; if
//!   the train lasts longer than `delay_min/2` (plus `hystart_ack_delay`, a TSO/GRO cushion of up
//!   to 1 ms derived from the pacing rate; the whole `delay_min` when the flow is paced), the
//!   window already spans the path's delay-bandwidth product.
//! - **Delay increase**: the minimum RTT over the first 8 samples of a round
//!   (`HYSTART_MIN_SAMPLES`) exceeds `delay_min` by `clamp(delay_min/8, 4 ms, 16 ms)`: a queue is
//!   building.
//!
//! Once found, HyStart stays off until the state is reset by an RTO (`TCP_CA_Loss`). RTT samples
//! in the first second after an epoch starts are discarded (they reflect the queue left by the
//! recovery).
//!
//! # HyStart variants (cc_params)
//!
//! **`hystart_version = "4.10"`**: HyStart as Linux 4.10's tcp_cubic.c (the kernel of seed-002's
//! thesis; the same code ran from 3.x to 5.5), before the 2019-2020 series that moved it to µs
//! ("tcp_cubic: switch bictcp_clock() to usec resolution", "tcp_cubic: tweak Hystart detection
//! for short RTT flows", "tcp_cubic: fix spurious HYSTART_DELAY exit upon drop in min RTT"):
//! - RTT samples and `delay_min` in ms<<3 (`delay = (rtt_us << 3) / USEC_PER_MSEC`, at least
//!   1); the delay threshold `clamp(delay_min >> 3, 4<<3, 16<<3)` (HYSTART_DELAY_MIN/MAX).
//!   `delay_min` also sets the cubic's look-ahead, `msecs_to_jiffies(delay_min >> 3)`.
//! - `bictcp_clock()` in ms for the round start and the ACK train.
//! - ACK train: `(s32)(now − last_ack) <= hystart_ack_delta` (2 ms: `hystart_ack_delta_us`/1000)
//!   and `now − round_start > delay_min >> 4` (half the min RTT): no `hystart_ack_delay` cushion,
//!   no whole-RTT threshold when paced.
//! - `curr_rtt` is the minimum of the round's first HYSTART_MIN_SAMPLES (8) samples only
//!   (reset to 0), the test runs on every later sample; 6.x keeps the minimum over all samples.
//! - The round restarts in `cong_avoid` (`hystart && after(ack, end_seq)`, in slow start and
//!   cwnd-limited), not in `hystart_update`; `hystart_low_window` is checked in `bictcp_acked`.
//!
//! **`hystart_delay_checks = N`** (seed-002 §3.2(c), the thesis's "triple delay check", N = 3;
//! default 1 = Linux): the delay exit fires only once the delay test has fired in N rounds. A
//! round counts once, when its test (after HYSTART_MIN_SAMPLES samples) first fires.
//! [GAP] The thesis does not say whether the rounds may be apart: `hystart_delay_count =
//! "cumulative"` (default: any N rounds since the start or the last RTO) or `"consecutive"` (a
//! round whose test was evaluated and did not fire resets the count; a round too short to be
//! evaluated neither counts nor resets). The ACK train is unaffected. Applies to both versions.
//!
//! **`hystart = "hystart++"`**: HyStart++, RFC 9406 §4.2, in place of Linux's HyStart (no ACK
//! train): per round (ended when snd_una passes windowEnd = snd_nxt at the round start) the
//! minimum RTT of the round is compared, after N_RTT_SAMPLE (8) samples, with the previous
//! round's; a rise of RttThresh = clamp(lastRoundMinRTT/8, 4 ms, 16 ms) or more enters
//! Conservative Slow Start (mode `"css"`): growth per ACK min(N, L)/CSS_GROWTH_DIVISOR (4).
//! If a CSS round's minimum (after 8 samples) falls below the RTT that triggered CSS, slow start
//! resumes; after CSS_ROUNDS (5) rounds, the partial first one included, ssthresh = cwnd and
//! CUBIC's congestion avoidance takes over. In slow start the growth per ACK is min(N, L)
//! (§4.2), L = 8 segments unpaced and unlimited when paced (§4.3; `tp.pacing_needed`).
//! HyStart++ runs in the initial slow start only (ssthresh still infinite, §4.2: "only for the
//! initial slow start"); after a loss, an RTO or the end of CSS, slow start is the standard one
//! (RFC 9406 leaves loss handling to the congestion control: CUBIC's ssthresh). Differences:
//! the RFC counts bytes, this counts segments (the CSS remainder of the division by 4 is carried
//! to the next ACK); the round ends when snd_una passes windowEnd, Linux's `after()`, not when
//! it reaches it. The Linux HyStart keys (`hystart_version`, `hystart_detect`,
//! `hystart_low_window`, `hystart_ack_delta_us`, `hystart_delay_*`) are rejected with it.
//!
//! # Hooks
//!
//! | tcp_congestion_ops | here | what |
//! |---|---|---|
//! | `init` | [`CongestionControl::init`] | reset, start a HyStart round |
//! | `ssthresh` | `ssthresh` | end the epoch, W_max (fast convergence), `cwnd·β` |
//! | `cong_avoid` | `cong_avoid` | slow start, then `bictcp_update` + `tcp_cong_avoid_ai` |
//! | `set_state` | `set_state` | full reset on `TCP_CA_Loss` (RTO) |
//! | `cwnd_event` | `cwnd_event` | `CA_EVENT_TX_START`: shift the epoch over idle time |
//! | `pkts_acked` | `pkts_acked` | `delay_min`, HyStart |
//! | `undo_cwnd` | default (`tcp_reno_undo_cwnd`) | `max(cwnd, prior_cwnd)` |
//!
//! # Time and units
//!
//! The kernel keeps epoch times in jiffies (`tcp_jiffies32`) and HyStart times in microseconds
//! (`tcp_mstamp`), both as wrapping u32. Here both are derived from `tp.now` (ns): jiffies =
//! `now·HZ/10⁹` plus Linux's `INITIAL_JIFFIES` (−300 s), microseconds = `now/1000`, truncated to
//! u32 exactly like the kernel's fields. HZ defaults to the kernel profile's ([`crate::kernel::HZ`], 250) and is a parameter (`hz`), since it is
//! a kernel build option (100/250/300/1000) and changes CUBIC's time granularity (epoch times,
//! the HZ/32 hold-off, the rounding of delay_min to jiffies). To compare with a particular
//! kernel, set it to that kernel's CONFIG_HZ (`hz = 250` on many distribution kernels).
//!
//! # Where this differs from tcp_cubic.c
//!
//! - `cubic_root` is the kernel's (table lookup + one Newton-Raphson step), bit for bit.
//! - The TCP-friendliness `while (ack_cnt > delta)` loop is computed with one division (as the
//!   kernel's own `bpf_cubic.c` does), identical in result; `delta` is floored at 1 so a
//!   degenerate `beta` cannot loop forever (the kernel would).
//! - Sequence numbers count segments and are u64, so `after(snd_una, end_seq)` is a plain `>`.
//! - `sk_pacing_status != SK_PACING_NONE` is `tp.pacing_needed` (there is no fq qdisc here).
//! - `sk_gso_max_size` is a parameter (`gso_max_size`, default 65536, `GSO_LEGACY_MAX_SIZE`): the
//!   simulator has no GSO, but a Linux host on veth or a NIC has it; the kernel subtracts
//!   `MAX_TCP_HEADER + 1` (a few hundred bytes), left out since the term is capped at 1 ms below
//!   ~2 Gbit/s anyway. 0 models a device without GSO (term 0).
//! - `initial_ssthresh` (module parameter, default 0 = off) is not offered.

use super::{params, reject_unknown, CcConfig, CongestionControl, ParamError};
use crate::state::{AckSample, CaEvent, CaState, TcpState, INFINITE_SSTHRESH};

/// BICTCP_BETA_SCALE, tcp_cubic.c: beta is in units of 1/1024.
const BICTCP_BETA_SCALE: u32 = 1024;
/// BICTCP_HZ, tcp_cubic.c: CUBIC's time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;

/// HYSTART_ACK_TRAIN, tcp_cubic.c.
const HYSTART_ACK_TRAIN: u8 = 0x1;
/// HYSTART_DELAY, tcp_cubic.c.
const HYSTART_DELAY: u8 = 0x2;
/// HYSTART_MIN_SAMPLES, tcp_cubic.c: RTT samples per round before the delay test.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// HYSTART_DELAY_MIN, tcp_cubic.c: 4 ms, lower clamp of the delay-increase threshold (µs).
const HYSTART_DELAY_MIN_US: u32 = 4000;
/// HYSTART_DELAY_MAX, tcp_cubic.c: 16 ms, upper clamp of the delay-increase threshold (µs).
const HYSTART_DELAY_MAX_US: u32 = 16000;
/// USEC_PER_MSEC: hystart_ack_delay's cap, 1 ms (µs).
const HYSTART_ACK_DELAY_MAX_US: u64 = 1000;
/// HYSTART_DELAY_MIN, Linux 4.10 tcp_cubic.c: `(4U<<3)`, 4 ms in ms<<3.
const HYSTART_DELAY_MIN_4_10: u32 = 4 << 3;
/// HYSTART_DELAY_MAX, Linux 4.10 tcp_cubic.c: `(16U<<3)`, 16 ms in ms<<3.
const HYSTART_DELAY_MAX_4_10: u32 = 16 << 3;

/// RFC 9406 §4.3: MIN_RTT_THRESH = 4 msec (µs here).
const HSPP_MIN_RTT_THRESH_US: u32 = 4000;
/// RFC 9406 §4.3: MAX_RTT_THRESH = 16 msec (µs here).
const HSPP_MAX_RTT_THRESH_US: u32 = 16000;
/// RFC 9406 §4.3: MIN_RTT_DIVISOR = 8.
const HSPP_MIN_RTT_DIVISOR: u32 = 8;
/// RFC 9406 §4.3: N_RTT_SAMPLE = 8.
const HSPP_N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: CSS_GROWTH_DIVISOR = 4.
const HSPP_CSS_GROWTH_DIVISOR: u32 = 4;
/// RFC 9406 §4.3: CSS_ROUNDS = 5.
const HSPP_CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: "L = infinity if paced, L = 8 if non-paced" (segments per ACK).
const HSPP_L_NON_PACED: u32 = 8;

/// Which Linux HyStart: today's (µs clock, since 5.6/5.8) or Linux 4.10's (ms<<3 units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HystartVersion {
    /// Linux ≥ 5.8 tcp_cubic.c (the default).
    Linux6,
    /// Linux 4.10 tcp_cubic.c, the kernel of seed-002's thesis.
    Linux4_10,
}

/// How `hystart_delay_checks` counts rounds whose delay test fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayCount {
    /// Every such round counts, whatever came between.
    Cumulative,
    /// A round whose delay test was evaluated and did not fire resets the count.
    Consecutive,
}

/// Tunables: the module parameters of tcp_cubic.c, settable per flow through `cc_params`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CubicParams {
    /// tcp_cubic.c: fast_convergence = 1.
    pub fast_convergence: bool,
    /// tcp_cubic.c: beta = 717 (/1024, ≈ 0.7).
    pub beta: u32,
    /// tcp_cubic.c: bic_scale = 41 (/1024 · 10 = C ≈ 0.4).
    pub bic_scale: u32,
    /// tcp_cubic.c: tcp_friendliness = 1.
    pub tcp_friendliness: bool,
    /// tcp_cubic.c: hystart = 1.
    pub hystart: bool,
    /// `hystart = "hystart++"`: RFC 9406 HyStart++ in place of Linux's HyStart.
    pub hystart_pp: bool,
    /// Which Linux HyStart (`hystart_version`, "6.x" or "4.10").
    pub hystart_version: HystartVersion,
    /// seed-002's "triple delay check": the delay exit needs this many rounds whose delay test
    /// fired (1 = Linux; 3 = the thesis's modified CUBIC).
    pub hystart_delay_checks: u32,
    /// Whether those rounds may be apart (cumulative) or must follow each other (consecutive).
    pub hystart_delay_count: DelayCount,
    /// tcp_cubic.c: hystart_detect = HYSTART_ACK_TRAIN | HYSTART_DELAY.
    pub hystart_detect: u8,
    /// tcp_cubic.c: hystart_low_window = 16 (packets).
    pub hystart_low_window: u32,
    /// tcp_cubic.c: hystart_ack_delta_us = 2000.
    pub hystart_ack_delta_us: u32,
    /// CONFIG_HZ: the jiffy rate. 1000 by default (one jiffy = 1 ms).
    pub hz: u32,
    /// sk->sk_gso_max_size in bytes, used by hystart_ack_delay. GSO_LEGACY_MAX_SIZE, netdevice.h.
    pub gso_max_size: u32,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            fast_convergence: true,
            beta: 717,
            bic_scale: 41,
            tcp_friendliness: true,
            hystart: true,
            hystart_pp: false,
            hystart_version: HystartVersion::Linux6,
            hystart_delay_checks: 1,
            hystart_delay_count: DelayCount::Cumulative,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            hz: crate::kernel::HZ,
            gso_max_size: 65536,
        }
    }
}

const PARAM_KEYS: &[&str] = &[
    "hystart",
    "hystart_version",
    "hystart_delay_checks",
    "hystart_delay_count",
    "hystart_detect",
    "fast_convergence",
    "tcp_friendliness",
    "beta",
    "bic_scale",
    "hystart_low_window",
    "hystart_ack_delta_us",
    "hz",
    "gso_max_size",
];

impl CubicParams {
    /// Reads `cc_params`: unknown keys, wrong types and out-of-range values are errors.
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = CubicParams::default();
        let p = CubicParams {
            fast_convergence: params::boolean(t, "fast_convergence", d.fast_convergence)?,
            beta: params::integer(
                t,
                "beta",
                d.beta,
                1,
                BICTCP_BETA_SCALE - 1,
                "a multiple of 1/1024: 717 is 0.7",
            )?,
            bic_scale: params::integer(
                t,
                "bic_scale",
                d.bic_scale,
                1,
                1024,
                "C = bic_scale·10/1024: 41 is 0.4",
            )?,
            tcp_friendliness: params::boolean(t, "tcp_friendliness", d.tcp_friendliness)?,
            hystart: get_hystart(t)?.0,
            hystart_pp: get_hystart(t)?.1,
            hystart_version: get_choice(
                t,
                "hystart_version",
                &[
                    ("6.x", HystartVersion::Linux6),
                    ("4.10", HystartVersion::Linux4_10),
                ],
                d.hystart_version,
            )?,
            hystart_delay_checks: params::integer(
                t,
                "hystart_delay_checks",
                d.hystart_delay_checks,
                1,
                255,
                "rounds whose delay test fired before the delay exit: 1 = Linux, 3 = seed-002's triple check",
            )?,
            hystart_delay_count: get_choice(
                t,
                "hystart_delay_count",
                &[
                    ("cumulative", DelayCount::Cumulative),
                    ("consecutive", DelayCount::Consecutive),
                ],
                d.hystart_delay_count,
            )?,
            hystart_detect: get_detect(t, d.hystart_detect)?,
            hystart_low_window: params::integer(
                t,
                "hystart_low_window",
                d.hystart_low_window,
                0,
                1 << 30,
                "packets",
            )?,
            hystart_ack_delta_us: params::integer(
                t,
                "hystart_ack_delta_us",
                d.hystart_ack_delta_us,
                0,
                1_000_000,
                "microseconds",
            )?,
            hz: params::integer(
                t,
                "hz",
                d.hz,
                100,
                1000,
                "a CONFIG_HZ value: 100, 250, 300 or 1000",
            )?,
            gso_max_size: params::integer(
                t,
                "gso_max_size",
                d.gso_max_size,
                0,
                1 << 20,
                "bytes; 0 = no GSO",
            )?,
        };
        if p.hystart_pp {
            // These tune Linux's HyStart; HyStart++ has its own fixed constants (RFC 9406 §4.3).
            for k in [
                "hystart_version",
                "hystart_detect",
                "hystart_low_window",
                "hystart_ack_delta_us",
                "hystart_delay_checks",
                "hystart_delay_count",
            ] {
                if t.contains_key(k) {
                    return Err(ParamError {
                        key: k.into(),
                        message: "tunes Linux's HyStart, not hystart = \"hystart++\" (RFC 9406)"
                            .into(),
                    });
                }
            }
        }
        if !crate::kernel::HZ_CHOICES.contains(&p.hz) {
            return Err(ParamError {
                key: "hz".into(),
                message: format!(
                    "{} is not a CONFIG_HZ value; accepted: 100, 250, 300, 1000",
                    p.hz
                ),
            });
        }
        Ok(p)
    }
}

/// `hystart`: true (Linux's HyStart), false (none) or "hystart++" (RFC 9406). Returns
/// (hystart, hystart_pp).
fn get_hystart(t: &toml::Table) -> Result<(bool, bool), ParamError> {
    match t.get("hystart") {
        None => Ok((true, false)),
        Some(toml::Value::Boolean(b)) => Ok((*b, false)),
        Some(toml::Value::String(s)) if s == "hystart++" => Ok((true, true)),
        Some(v) => Err(ParamError {
            key: "hystart".into(),
            message: format!(
                "expected a boolean (true: Linux's HyStart) or \"hystart++\" (RFC 9406), got {} {v}",
                v.type_str()
            ),
        }),
    }
}

/// A string key with a fixed set of values.
fn get_choice<T: Copy>(
    t: &toml::Table,
    key: &str,
    choices: &[(&str, T)],
    default: T,
) -> Result<T, ParamError> {
    let Some(v) = t.get(key) else {
        return Ok(default);
    };
    let names: Vec<String> = choices.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    let found = v
        .as_str()
        .and_then(|s| choices.iter().find(|(n, _)| *n == s).map(|&(_, c)| c));
    found.ok_or_else(|| ParamError {
        key: key.into(),
        message: format!("got {v}; accepted: {}", names.join(", ")),
    })
}

/// `hystart_detect`: "both", "ack_train", "delay" or "none" (or the kernel's bit mask 0..=3).
fn get_detect(t: &toml::Table, default: u8) -> Result<u8, ParamError> {
    const ACCEPTED: &str =
        "accepted: \"both\", \"ack_train\", \"delay\", \"none\" (or the kernel's mask 0..=3)";
    let err = |what: String| ParamError {
        key: "hystart_detect".into(),
        message: format!("{what}; {ACCEPTED}"),
    };
    match t.get("hystart_detect") {
        None => Ok(default),
        Some(toml::Value::String(s)) => match s.as_str() {
            "both" => Ok(HYSTART_ACK_TRAIN | HYSTART_DELAY),
            "ack_train" => Ok(HYSTART_ACK_TRAIN),
            "delay" => Ok(HYSTART_DELAY),
            "none" => Ok(0),
            _ => Err(err(format!("unknown detector \"{s}\""))),
        },
        Some(toml::Value::Integer(i)) if (0..=3).contains(i) => Ok(*i as u8),
        Some(v) => Err(err(format!("got {} {v}", v.type_str()))),
    }
}

/// The scale factors cubictcp_register precomputes from beta and bic_scale.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scales {
    /// 8·(1024 + β)/3/(1024 − β): packets acked (×8, per cwnd packet) per Reno-equivalent increment.
    beta_scale: u32,
    /// bic_scale·10: C in units of 2^-10 packets/s³ (at the nominal 100 ms RTT it was named for).
    cube_rtt_scale: u32,
    /// 2^40 / (bic_scale·10): 1/C scaled so that cubic_root gives K in units of 2^-10 s.
    cube_factor: u64,
}

impl Scales {
    fn new(beta: u32, bic_scale: u32) -> Self {
        Scales {
            beta_scale: 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta),
            cube_rtt_scale: bic_scale * 10,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / (bic_scale as u64 * 10),
        }
    }
}

/// The part of `struct bictcp` that bictcp_reset clears.
#[derive(Debug, Clone, Copy, Default)]
struct Bic {
    /// Grow cwnd by one packet per `cnt` packets acked.
    cnt: u32,
    /// W_max: the window at the last loss (lowered by fast convergence), packets.
    last_max_cwnd: u32,
    /// cwnd at the last cnt computation.
    last_cwnd: u32,
    /// Time of the last cnt computation, jiffies.
    last_time: u32,
    /// The cubic's plateau: W_max, or cwnd when the epoch started above W_max.
    bic_origin_point: u32,
    /// K: time from the epoch start to the origin point, in 2^-10 s.
    bic_k: u32,
    /// Minimum RTT seen, µs (0: none yet).
    delay_min: u32,
    /// Linux 4.10's delay_min: minimum RTT in ms<<3 (0: none yet); `hystart_version = "4.10"`.
    delay_min_ms8: u32,
    /// Start of the current epoch, jiffies (0: no epoch).
    epoch_start: u32,
    /// Packets acked, for the Reno-equivalent window.
    ack_cnt: u32,
    /// The Reno-equivalent window (TCP friendliness), packets.
    tcp_cwnd: u32,
}

/// The HyStart part of `struct bictcp`, reset per round by bictcp_hystart_reset.
#[derive(Debug, Clone, Copy, Default)]
struct HyStart {
    /// RTT samples taken this round (up to HYSTART_MIN_SAMPLES).
    sample_cnt: u8,
    /// Whether the slow-start exit point was found (cleared only by bictcp_reset).
    found: bool,
    /// Start of the round, µs (u32, as tcp_mstamp).
    round_start: u32,
    /// The round ends when snd_una passes this sequence.
    end_seq: u64,
    /// Time of the last ACK of the current train, µs.
    last_ack: u32,
    /// Minimum RTT of this round's samples, µs (4.10: ms<<3, of the first 8 samples, 0 = none).
    curr_rtt: u32,
    /// Rounds whose delay test fired (`hystart_delay_checks`), cleared only by bictcp_reset.
    delay_hits: u32,
    /// Whether this round's delay test has fired (it counts once per round).
    delay_counted: bool,
    /// Whether this round's delay test was evaluated (enough samples).
    delay_evaluated: bool,
}

/// RFC 9406 §4.2 state (`hystart = "hystart++"`). RTTs in µs, `u32::MAX` is "infinity".
#[derive(Debug, Clone, Copy)]
struct HyStartPP {
    /// windowEnd: the round ends when snd_una passes it.
    window_end: u64,
    /// lastRoundMinRTT.
    last_round_min_rtt: u32,
    /// currentRoundMinRTT.
    current_round_min_rtt: u32,
    /// rttSampleCount.
    rtt_sample_count: u32,
    /// cssBaselineMinRtt: infinity outside Conservative Slow Start.
    css_baseline_min_rtt: u32,
    /// CSS rounds begun, the partial round of the entry included.
    css_rounds: u32,
    /// Segments acked in CSS not yet turned into growth (the remainder of the division by
    /// CSS_GROWTH_DIVISOR: the RFC counts bytes, cwnd here counts segments).
    css_acked: u32,
}

impl Default for HyStartPP {
    fn default() -> Self {
        HyStartPP {
            window_end: 0,
            last_round_min_rtt: u32::MAX,
            current_round_min_rtt: u32::MAX,
            rtt_sample_count: 0,
            css_baseline_min_rtt: u32::MAX,
            css_rounds: 0,
            css_acked: 0,
        }
    }
}

impl HyStartPP {
    fn in_css(&self) -> bool {
        self.css_baseline_min_rtt != u32::MAX
    }
}

pub struct Cubic {
    p: CubicParams,
    scales: Scales,
    bic: Bic,
    hs: HyStart,
    pp: HyStartPP,
}

impl Cubic {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        Ok(Box::new(Cubic::new(CubicParams::from_table(
            config.params,
        )?)))
    }

    pub fn new(p: CubicParams) -> Self {
        Cubic {
            p,
            scales: Scales::new(p.beta, p.bic_scale),
            bic: Bic::default(),
            hs: HyStart::default(),
            pp: HyStartPP::default(),
        }
    }

    /// tcp_jiffies32 at `now_ns`: jiffies since boot, starting from INITIAL_JIFFIES (−300 s) as in
    /// the kernel, as a wrapping u32.
    fn jiffies(&self, now_ns: u64) -> u32 {
        crate::kernel::jiffies_at(now_ns, self.p.hz)
    }

    /// usecs_to_jiffies: rounds up.
    fn usecs_to_jiffies(&self, us: u32) -> u64 {
        crate::kernel::usecs_to_jiffies_at(us, self.p.hz)
    }

    /// bictcp_clock_us: tcp_mstamp in µs, truncated to u32.
    fn clock_us(now_ns: u64) -> u32 {
        (now_ns / 1000) as u32
    }

    /// Linux 4.10's bictcp_clock: milliseconds (`ktime_get_real` in ms below HZ 1000,
    /// `jiffies_to_msecs(jiffies)` at HZ 1000; only differences matter), truncated to u32.
    fn clock_ms(now_ns: u64) -> u32 {
        (now_ns / 1_000_000) as u32
    }

    /// bictcp_reset.
    fn reset(&mut self) {
        self.bic = Bic::default();
        self.hs.found = false;
        self.hs.delay_hits = 0;
    }

    /// bictcp_hystart_reset: start a new round at the current time and snd_nxt.
    fn hystart_reset(&mut self, tp: &TcpState) {
        let (now, no_rtt) = match self.p.hystart_version {
            HystartVersion::Linux6 => (Self::clock_us(tp.now), u32::MAX),
            HystartVersion::Linux4_10 => (Self::clock_ms(tp.now), 0),
        };
        self.hs.round_start = now;
        self.hs.last_ack = now;
        self.hs.end_seq = tp.snd_nxt;
        self.hs.curr_rtt = no_rtt;
        self.hs.sample_cnt = 0;
        // The triple delay check: a round that evaluated the delay test without it firing
        // breaks a consecutive run.
        if self.p.hystart_delay_count == DelayCount::Consecutive
            && self.hs.delay_evaluated
            && !self.hs.delay_counted
        {
            self.hs.delay_hits = 0;
        }
        self.hs.delay_evaluated = false;
        self.hs.delay_counted = false;
    }

    /// The delay test fired: count the round (once) and say whether `hystart_delay_checks`
    /// rounds have now fired (always, at the Linux default of 1).
    fn delay_check_exits(&mut self) -> bool {
        if !self.hs.delay_counted {
            self.hs.delay_counted = true;
            self.hs.delay_hits += 1;
        }
        self.hs.delay_hits >= self.p.hystart_delay_checks
    }

    /// The look-ahead of the cubic target, jiffies: usecs_to_jiffies(delay_min) (6.x), or
    /// msecs_to_jiffies(delay_min >> 3) (4.10's ms<<3 delay_min).
    fn delay_min_jiffies(&self) -> u64 {
        match self.p.hystart_version {
            HystartVersion::Linux6 => self.usecs_to_jiffies(self.bic.delay_min),
            HystartVersion::Linux4_10 => {
                self.usecs_to_jiffies((self.bic.delay_min_ms8 >> 3).saturating_mul(1000))
            }
        }
    }

    /// The cubic's target window at jiffy `now_j`, evaluated one `delay_min` ahead:
    /// origin ± C·(t − K)³ in the kernel's fixed point.
    fn cubic_target(&self, now_j: u32) -> u32 {
        let b = &self.bic;
        // (s32)(jiffies − epoch_start), sign-extended to u64 as in the kernel, plus delay_min.
        let mut t = now_j.wrapping_sub(b.epoch_start) as i32 as i64 as u64;
        t = t.wrapping_add(self.delay_min_jiffies());
        t = (t << BICTCP_HZ) / self.p.hz as u64; // jiffies to 2^-10 s
        let k = b.bic_k as u64;
        let offs = k.abs_diff(t);
        let cube = (self.scales.cube_rtt_scale as u64)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            .wrapping_mul(offs);
        let delta = (cube >> (10 + 3 * BICTCP_HZ)) as u32;
        if t < k {
            b.bic_origin_point.wrapping_sub(delta)
        } else {
            b.bic_origin_point.wrapping_add(delta)
        }
    }

    /// Starts an epoch at jiffy `now_j` with window `cwnd`: the origin and K of the new curve.
    fn start_epoch(&mut self, now_j: u32, cwnd: u32, acked: u32) {
        let b = &mut self.bic;
        b.epoch_start = now_j;
        b.ack_cnt = acked;
        b.tcp_cwnd = cwnd;
        if b.last_max_cwnd <= cwnd {
            b.bic_k = 0;
            b.bic_origin_point = cwnd;
        } else {
            b.bic_k = cubic_root(
                self.scales
                    .cube_factor
                    .wrapping_mul((b.last_max_cwnd - cwnd) as u64),
            );
            b.bic_origin_point = b.last_max_cwnd;
        }
    }

    /// bictcp_update: recompute `cnt` for window `cwnd` after `acked` packets were acked.
    fn update(&mut self, now_ns: u64, cwnd: u32, acked: u32) {
        let now_j = self.jiffies(now_ns);
        self.bic.ack_cnt = self.bic.ack_cnt.wrapping_add(acked);

        if self.bic.last_cwnd == cwnd
            && (now_j.wrapping_sub(self.bic.last_time) as i32) <= (self.p.hz / 32) as i32
        {
            return;
        }
        // The cubic function updates cnt at most once per jiffy.
        if !(self.bic.epoch_start != 0 && now_j == self.bic.last_time) {
            self.bic.last_cwnd = cwnd;
            self.bic.last_time = now_j;
            if self.bic.epoch_start == 0 {
                self.start_epoch(now_j, cwnd, acked);
            }
            let target = self.cubic_target(now_j);
            self.bic.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                cwnd.wrapping_mul(100)
            };
            // No W_max yet (first epoch): at least 5 % growth per RTT.
            if self.bic.last_max_cwnd == 0 && self.bic.cnt > 20 {
                self.bic.cnt = 20;
            }
        }
        if self.p.tcp_friendliness {
            self.tcp_friendliness(cwnd);
        }
        // At most one packet per two acked: cwnd × 1.5 per RTT.
        self.bic.cnt = self.bic.cnt.max(2);
    }

    /// The TCP-friendly region: advance the Reno-equivalent window and never grow slower than it.
    fn tcp_friendliness(&mut self, cwnd: u32) {
        let b = &mut self.bic;
        let delta = (cwnd.wrapping_mul(self.scales.beta_scale) >> 3).max(1);
        if b.ack_cnt > delta {
            // while (ack_cnt > delta) { ack_cnt -= delta; tcp_cwnd++; }
            let n = (b.ack_cnt - 1) / delta;
            b.ack_cnt -= n * delta;
            b.tcp_cwnd = b.tcp_cwnd.wrapping_add(n);
        }
        if b.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (b.tcp_cwnd - cwnd);
            b.cnt = b.cnt.min(max_cnt);
        }
    }

    /// hystart_ack_delay: a cushion for TSO/GRO aggregation, 4 GSO packets at the pacing rate,
    /// at most 1 ms (µs).
    fn hystart_ack_delay(&self, tp: &TcpState) -> u32 {
        if tp.pacing_rate == 0 {
            return 0;
        }
        (self.p.gso_max_size as u64 * 4 * 1_000_000 / tp.pacing_rate).min(HYSTART_ACK_DELAY_MAX_US)
            as u32
    }

    /// hystart_update: per RTT sample in slow start, the ACK-train and delay-increase detectors.
    fn hystart_update(&mut self, tp: &mut TcpState, delay_us: u32) {
        if tp.snd_una > self.hs.end_seq {
            self.hystart_reset(tp);
        }
        if tp.snd_cwnd < self.p.hystart_low_window {
            return;
        }
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0 && self.ack_train_found(tp) {
            self.hs.found = true;
            tp.snd_ssthresh = tp.snd_cwnd;
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 && self.delay_increase_found(delay_us) {
            self.hs.found = true;
            tp.snd_ssthresh = tp.snd_cwnd;
        }
    }

    /// ACK-train detection: this ACK extends a train of closely spaced ACKs that has lasted
    /// longer than half the minimum RTT (the whole of it when paced).
    fn ack_train_found(&mut self, tp: &TcpState) -> bool {
        let now = Self::clock_us(tp.now);
        if now.wrapping_sub(self.hs.last_ack) as i32 > self.p.hystart_ack_delta_us as i32 {
            return false;
        }
        self.hs.last_ack = now;
        let mut threshold = self.bic.delay_min.wrapping_add(self.hystart_ack_delay(tp));
        // Pacing might have delayed packets up to RTT/2 during slow start.
        if !tp.pacing_needed {
            threshold >>= 1;
        }
        // (s32)(now − round_start) > threshold: a signed/unsigned comparison in C, so unsigned.
        now.wrapping_sub(self.hs.round_start) > threshold
    }

    /// Delay-increase detection: the minimum of this round's first samples exceeds delay_min by
    /// the clamped threshold.
    fn delay_increase_found(&mut self, delay_us: u32) -> bool {
        self.hs.curr_rtt = self.hs.curr_rtt.min(delay_us);
        if self.hs.sample_cnt < HYSTART_MIN_SAMPLES {
            self.hs.sample_cnt += 1;
            return false;
        }
        self.hs.delay_evaluated = true;
        let d = self.bic.delay_min;
        self.hs.curr_rtt > d.wrapping_add(hystart_delay_thresh(d >> 3)) && self.delay_check_exits()
    }

    /// Linux 4.10's hystart_update (bictcp_acked checked cwnd ≥ hystart_low_window; the round
    /// is reset in cong_avoid). Times in ms, `delay` and delay_min in ms<<3.
    fn hystart_update_4_10(&mut self, tp: &mut TcpState, delay: u32) {
        let mut found = false;
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = Self::clock_ms(tp.now);
            // hystart_ack_delta = 2 (ms, an int: a signed comparison).
            let ack_delta_ms = (self.p.hystart_ack_delta_us / 1000) as i32;
            if now.wrapping_sub(self.hs.last_ack) as i32 <= ack_delta_ms {
                self.hs.last_ack = now;
                // (s32)(now − round_start) > delay_min >> 4: half the min RTT in ms, no
                // ack_delay cushion, no pacing case; compared unsigned, as in C.
                if now.wrapping_sub(self.hs.round_start) > self.bic.delay_min_ms8 >> 4 {
                    found = true;
                }
            }
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 {
            // curr_rtt is the minimum of the round's first HYSTART_MIN_SAMPLES samples only.
            if self.hs.sample_cnt < HYSTART_MIN_SAMPLES {
                if self.hs.curr_rtt == 0 || self.hs.curr_rtt > delay {
                    self.hs.curr_rtt = delay;
                }
                self.hs.sample_cnt += 1;
            } else {
                self.hs.delay_evaluated = true;
                let d = self.bic.delay_min_ms8;
                if self.hs.curr_rtt > d.wrapping_add(hystart_delay_thresh_4_10(d >> 3))
                    && self.delay_check_exits()
                {
                    found = true;
                }
            }
        }
        if found {
            self.hs.found = true;
            tp.snd_ssthresh = tp.snd_cwnd;
        }
    }

    /// HyStart++ applies to the initial slow start only (RFC 9406 §4.2: "only for the initial
    /// slow start (when ssthresh is at its initial value ...)"); a loss, an RTO or the end of
    /// CSS sets ssthresh and ends it for the rest of the connection.
    fn hystart_pp_active(&self, tp: &TcpState) -> bool {
        self.p.hystart_pp && tp.snd_ssthresh == INFINITE_SSTHRESH
    }

    /// RFC 9406 §4.2, per RTT sample: rounds, the per-round min RTT, the exit to CSS on a delay
    /// increase, the return to slow start when the RTT falls back below the CSS baseline, and
    /// the exit to congestion avoidance after CSS_ROUNDS rounds of CSS.
    fn hystart_pp_update(&mut self, tp: &mut TcpState, rtt_us: u32) {
        let pp = &mut self.pp;
        if tp.snd_una > pp.window_end {
            // "When windowEnd is ACKed, the current round ends and windowEnd is set to SND.NXT."
            pp.window_end = tp.snd_nxt;
            pp.last_round_min_rtt = pp.current_round_min_rtt;
            pp.current_round_min_rtt = u32::MAX;
            pp.rtt_sample_count = 0;
            if pp.in_css() {
                // "If CSS_ROUNDS rounds are complete, enter congestion avoidance by setting
                // the ssthresh to the current cwnd" (the entry's partial round counts).
                if pp.css_rounds >= HSPP_CSS_ROUNDS {
                    pp.css_baseline_min_rtt = u32::MAX;
                    tp.snd_ssthresh = tp.snd_cwnd;
                    return;
                }
                pp.css_rounds += 1;
            }
        }
        pp.current_round_min_rtt = pp.current_round_min_rtt.min(rtt_us);
        pp.rtt_sample_count += 1;
        if pp.rtt_sample_count < HSPP_N_RTT_SAMPLE || pp.current_round_min_rtt == u32::MAX {
            return;
        }
        if !pp.in_css() {
            if pp.last_round_min_rtt == u32::MAX {
                return;
            }
            let thresh = hystart_pp_rtt_thresh(pp.last_round_min_rtt);
            if pp.current_round_min_rtt as u64 >= pp.last_round_min_rtt as u64 + thresh as u64 {
                // "exit slow start and enter CSS"
                pp.css_baseline_min_rtt = pp.current_round_min_rtt;
                pp.css_rounds = 1;
                pp.css_acked = 0;
            }
        } else if pp.current_round_min_rtt < pp.css_baseline_min_rtt {
            // "resume slow start including HyStart++": the exit was spurious (jitter).
            pp.css_baseline_min_rtt = u32::MAX;
        }
    }

    /// RFC 9406 §4.2 growth per ACK: min(N, L) segments in slow start, a CSS_GROWTH_DIVISOR-th
    /// of that in CSS (remainders carried to the next ACK).
    fn hystart_pp_grow(&mut self, tp: &mut TcpState, acked: u32) {
        let l = if tp.pacing_needed {
            u32::MAX
        } else {
            HSPP_L_NON_PACED
        };
        let mut grow = acked.min(l);
        if self.pp.in_css() {
            self.pp.css_acked += grow;
            grow = self.pp.css_acked / HSPP_CSS_GROWTH_DIVISOR;
            self.pp.css_acked %= HSPP_CSS_GROWTH_DIVISOR;
        }
        tp.slow_start(grow); // ssthresh is infinite: all of it
    }

    /// For tests: (W_max, K in 2^-10 s, cnt).
    #[cfg(test)]
    fn epoch(&self) -> (u32, u32, u32) {
        (self.bic.last_max_cwnd, self.bic.bic_k, self.bic.cnt)
    }
}

/// HYSTART_DELAY_THRESH, tcp_cubic.c: clamp(x, 4 ms, 16 ms).
fn hystart_delay_thresh(x_us: u32) -> u32 {
    x_us.clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US)
}

/// HYSTART_DELAY_THRESH, Linux 4.10 tcp_cubic.c: clamp(x, 4<<3, 16<<3), in ms<<3.
fn hystart_delay_thresh_4_10(x_ms8: u32) -> u32 {
    x_ms8.clamp(HYSTART_DELAY_MIN_4_10, HYSTART_DELAY_MAX_4_10)
}

/// RFC 9406 §4.2: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR,
/// MAX_RTT_THRESH)), µs.
fn hystart_pp_rtt_thresh(last_round_min_rtt_us: u32) -> u32 {
    (last_round_min_rtt_us / HSPP_MIN_RTT_DIVISOR)
        .clamp(HSPP_MIN_RTT_THRESH_US, HSPP_MAX_RTT_THRESH_US)
}

/// cubic_root, tcp_cubic.c: ∛a by a table lookup on the top bits and one Newton-Raphson step
/// (average error ≈ 0.195 %, per the kernel). Bit-exact with the kernel's.
pub fn cubic_root(a: u64) -> u32 {
    // For x in [0..63]: v[x] = cbrt(x << 18) − 1, so cbrt(x) = (v[x] + 10) >> 6
    // (precomputed then refined by hand by Willy Tarreau, per the kernel).
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, //
        123, 129, 134, 138, 143, 147, 151, 156, //
        157, 161, 164, 168, 170, 173, 176, 179, //
        181, 185, 187, 190, 192, 194, 197, 199, //
        200, 202, 204, 206, 209, 211, 213, 215, //
        217, 219, 221, 222, 224, 225, 227, 229, //
        231, 232, 234, 236, 237, 239, 240, 242, //
        244, 245, 246, 248, 250, 251, 252, 254, //
    ];
    let fls = 64 - a.leading_zeros(); // fls64: 1-based index of the top bit, 0 for 0
    if fls < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    // b ≈ fls/3 − 1 (84/256 ≈ 1/3): the top 6 bits of a, in groups of three bits, index V.
    let b = ((fls * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let mut x = ((V[shift] as u32 + 10) << b) >> 6;
    // One Newton-Raphson step: x = (2x + a/x²)/3, with x·(x − 1) for x² and ·341/1024 for /3.
    // u32 arithmetic as in the kernel; no overflow: 2x + a/x² ≈ 3·∛a < 2^23 for any u64 a.
    let x_sq = x as u64 * (x as u64 - 1);
    x = (2 * x).wrapping_add((a / x_sq) as u32);
    x.wrapping_mul(341) >> 10
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// cubictcp_init.
    fn init(&mut self, tp: &mut TcpState) {
        self.reset();
        if self.p.hystart {
            self.hystart_reset(tp);
        }
        self.pp = HyStartPP {
            window_end: tp.snd_nxt,
            ..HyStartPP::default()
        };
    }

    /// cubictcp_recalc_ssthresh: end the epoch, remember W_max (lowered by fast convergence when
    /// this loss came below the last one), and cut to cwnd·β.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cwnd = tp.snd_cwnd;
        let b = &mut self.bic;
        b.epoch_start = 0;
        b.last_max_cwnd = if cwnd < b.last_max_cwnd && self.p.fast_convergence {
            cwnd.wrapping_mul(BICTCP_BETA_SCALE + self.p.beta) / (2 * BICTCP_BETA_SCALE)
        } else {
            cwnd
        };
        (cwnd.wrapping_mul(self.p.beta) / BICTCP_BETA_SCALE).max(2)
    }

    /// cubictcp_cong_avoid.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if tp.in_slow_start() {
            if self.hystart_pp_active(tp) {
                self.hystart_pp_grow(tp, acked);
                return;
            }
            // Linux 4.10 starts a new HyStart round here, `after(ack, ca->end_seq)`.
            if self.p.hystart_version == HystartVersion::Linux4_10
                && self.p.hystart
                && tp.snd_una > self.hs.end_seq
            {
                self.hystart_reset(tp);
            }
            acked = tp.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(tp.now, tp.snd_cwnd, acked);
        tp.cong_avoid_ai(self.bic.cnt, acked);
    }

    /// cubictcp_state: an RTO forgets everything, W_max included.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    /// cubictcp_cwnd_event: after an idle period, shift the epoch so the curve resumes where it
    /// left off instead of jumping ahead by the idle time.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if event != CaEvent::TxStart {
            return;
        }
        let now = self.jiffies(tp.now);
        let delta = now.wrapping_sub(self.jiffies(tp.lsndtime)) as i32;
        if self.bic.epoch_start != 0 && delta > 0 {
            self.bic.epoch_start = self.bic.epoch_start.wrapping_add(delta as u32);
            if (now.wrapping_sub(self.bic.epoch_start) as i32) < 0 {
                self.bic.epoch_start = now; // after(epoch_start, now)
            }
        }
    }

    /// cubictcp_acked: track delay_min, and run HyStart in slow start.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Discard delay samples right after fast recovery.
        let now_j = self.jiffies(tp.now);
        if self.bic.epoch_start != 0
            && (now_j.wrapping_sub(self.bic.epoch_start) as i32) < self.p.hz as i32
        {
            return;
        }
        let delay = (sample.rtt_us.min(u32::MAX as i64) as u32).max(1);
        if self.bic.delay_min == 0 || self.bic.delay_min > delay {
            self.bic.delay_min = delay;
        }
        if self.p.hystart_pp {
            // Later slow starts (after a loss or an RTO) are standard ones: no Linux HyStart.
            if self.hystart_pp_active(tp) && tp.in_slow_start() {
                self.hystart_pp_update(tp, delay);
            }
            return;
        }
        match self.p.hystart_version {
            HystartVersion::Linux6 => {
                if !self.hs.found && tp.in_slow_start() && self.p.hystart {
                    self.hystart_update(tp, delay);
                }
            }
            HystartVersion::Linux4_10 => {
                // delay = (rtt_us << 3) / USEC_PER_MSEC, at least 1.
                let delay = (((sample.rtt_us as u64) << 3) / 1000).max(1) as u32;
                if self.bic.delay_min_ms8 == 0 || self.bic.delay_min_ms8 > delay {
                    self.bic.delay_min_ms8 = delay;
                }
                if !self.hs.found
                    && self.p.hystart
                    && tp.in_slow_start()
                    && tp.snd_cwnd >= self.p.hystart_low_window
                {
                    self.hystart_update_4_10(tp, delay);
                }
            }
        }
    }

    /// "css" while HyStart++ is in Conservative Slow Start.
    fn mode(&self, tp: &TcpState) -> &'static str {
        if self.hystart_pp_active(tp) && self.pp.in_css() {
            "css"
        } else if tp.in_slow_start() {
            "slow_start"
        } else {
            "cong_avoid"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::INFINITE_SSTHRESH;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    /// CUBIC at HZ=1000, so jiffies are milliseconds in the hand-computed values below.
    fn cubic() -> Cubic {
        Cubic::new(CubicParams {
            hz: 1000,
            ..Default::default()
        })
    }

    fn params(kv: &[(&str, toml::Value)]) -> toml::Table {
        kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    fn build_err(kv: &[(&str, toml::Value)]) -> ParamError {
        let t = params(kv);
        match Cubic::build(&CcConfig::new(&t, 1)) {
            Ok(_) => panic!("{kv:?} accepted"),
            Err(e) => e,
        }
    }

    fn ack(rtt_us: i64) -> AckSample {
        AckSample {
            pkts_acked: 1,
            rtt_us,
            in_flight: 0,
        }
    }

    // ---- cubic_root and the scale factors ----

    #[test]
    fn scale_factors_are_the_kernels() {
        let s = Scales::new(717, 41);
        assert_eq!(s.beta_scale, 15); // 8·1741/3 = 4642, /307 = 15
        assert_eq!(s.cube_rtt_scale, 410);
        assert_eq!(s.cube_factor, 2_681_735_677); // 2^40 / 410, truncated
    }

    #[test]
    fn cubic_root_of_known_cubes() {
        for (a, r) in [
            (0u64, 0u32),
            (1, 1),
            (8, 2),
            (27, 3),
            (64, 4),
            (125, 5),
            (1000, 10),
            (1_000_000, 100),
            (1 << 30, 1024),
        ] {
            assert_eq!(cubic_root(a), r, "cbrt({a})");
        }
        // Everywhere else within the kernel's stated accuracy (0.195 % on average): 1 % + 1.
        for n in [7u64, 50, 99, 333, 1234, 4317, 65_536, 1_000_000, 2_000_000] {
            let got = cubic_root(n * n * n) as f64;
            assert!(
                (got - n as f64).abs() <= 1.0 + 0.01 * n as f64,
                "cbrt({n}³) = {got}"
            );
        }
    }

    // ---- K and the window function ----

    /// A CUBIC that lost at `w_max` and whose epoch starts at `now` with cwnd = ssthresh.
    fn after_loss(w_max: u32, now: u64) -> (Cubic, TcpState) {
        let mut c = cubic();
        let mut tp = TcpState {
            now,
            snd_cwnd: w_max,
            ..Default::default()
        };
        c.init(&mut tp);
        let ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = ssthresh;
        tp.snd_ssthresh = ssthresh;
        tp.is_cwnd_limited = true;
        c.cong_avoid(&mut tp, 1); // starts the epoch
        (c, tp)
    }

    #[test]
    fn k_is_the_cube_root_of_w_max_times_1_minus_beta_over_c() {
        // W_max = 100: ssthresh = 100·717/1024 = 70, W_max − cwnd = 30 packets.
        // K = ∛(30 / (410/1024)) s = 4.2153 s = 4316.5 units of 2^-10 s.
        let (c, tp) = after_loss(100, 10 * S);
        assert_eq!(tp.snd_cwnd, 70);
        let (w_max, k, _) = c.epoch();
        assert_eq!(w_max, 100);
        assert!((k as f64 - 4316.5).abs() <= 0.003 * 4316.5, "K = {k}");
        // W_max = 1000: cwnd 700, K = ∛(300/0.4004) = 9.0815 s = 9299.5 units.
        let (c, _) = after_loss(1000, 10 * S);
        let k = c.epoch().1 as f64;
        assert!((k - 9299.5).abs() <= 0.003 * 9299.5, "K = {k}");
    }

    #[test]
    fn target_after_t_seconds_is_c_times_t_minus_k_cubed_plus_w_max() {
        let w_max = 1000;
        let t0 = 10 * S;
        let (c, _) = after_loss(w_max, t0);
        let k_s = c.epoch().1 as f64 / 1024.0;
        let c_coef = 410.0 / 1024.0;
        for t_ms in [0u64, 1000, 3000, 5000, 9082, 12_000, 15_000] {
            let target = c.cubic_target(c.jiffies(t0 + t_ms * MS));
            let t = t_ms as f64 / 1000.0; // delay_min is 0 here: no look-ahead
            let w = c_coef * (t - k_s).powi(3) + w_max as f64;
            // Time is quantised to 2^-10 s and the cube truncated: ±1 packet, plus the slope
            // (≤ 3·C·(t−K)² packets/s) times one quantum.
            let slope = 3.0 * c_coef * (t - k_s).powi(2);
            assert!(
                (target as f64 - w).abs() <= 1.0 + slope / 1024.0,
                "t = {t}: target {target}, W(t) {w:.2}"
            );
        }
        // At t = 0 the curve starts at cwnd = β·W_max = 700. By hand, the kernel's cubic_root of
        // a = 2681735677·300 = 804520703100: fls = 40, b = 12, a >> 36 = 11, v[11] = 138,
        // x0 = (148 << 12) >> 6 = 9472; Newton: (2·9472 + a/(9472·9471) = 8968)·341 >> 10 = 9294
        // (exact 9299.5). K is a hair short, so the curve starts one packet higher.
        assert_eq!(c.epoch().1, 9294);
        assert_eq!(c.cubic_target(c.jiffies(t0)), 701);
    }

    #[test]
    fn target_looks_one_delay_min_ahead() {
        let (mut c, _) = after_loss(1000, 10 * S);
        c.bic.delay_min = 100_000; // 100 ms
        let ahead = c.cubic_target(c.jiffies(12 * S));
        c.bic.delay_min = 0;
        assert_eq!(ahead, c.cubic_target(c.jiffies(12 * S + 100 * MS)));
    }

    #[test]
    fn cnt_is_cwnd_over_the_distance_to_the_target_with_the_kernels_bounds() {
        let (mut c, mut tp) = after_loss(1000, 10 * S);
        // One second later: target = 1000 − 0.4004·(8.0815 s)³ ≈ 788.7 (kernel: 788); cwnd 700.
        tp.now = 11 * S;
        c.cong_avoid(&mut tp, 1);
        let target = c.cubic_target(c.jiffies(11 * S));
        assert_eq!(c.epoch().2, 700 / (target - 700));
        // First epoch (no W_max): cnt is capped at 20 even on a flat curve.
        let mut c = cubic();
        let mut tp = TcpState {
            now: S,
            snd_cwnd: 100,
            snd_ssthresh: 50,
            is_cwnd_limited: true,
            ..Default::default()
        };
        c.init(&mut tp);
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.epoch().2, 20);
        // Never below 2: far below the curve, cwnd at most 1.5× per RTT.
        let (mut c, mut tp) = after_loss(1000, 10 * S);
        tp.snd_cwnd = 10;
        tp.snd_ssthresh = 10;
        tp.now += 100 * MS;
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.epoch().2, 2);
    }

    #[test]
    fn cnt_is_recomputed_at_most_once_per_jiffy_and_not_while_cwnd_is_unchanged() {
        let (mut c, mut tp) = after_loss(1000, 10 * S);
        let last_time = c.bic.last_time;
        tp.now += 10 * MS; // same cwnd, within HZ/32 = 31 jiffies: nothing recomputed
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.bic.last_time, last_time);
        tp.now += 22 * MS; // 32 ms since: recomputed
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.bic.last_time, c.jiffies(tp.now));
    }

    // ---- ssthresh and fast convergence ----

    #[test]
    fn recalc_ssthresh_with_and_without_fast_convergence() {
        let mut c = cubic();
        let mut tp = TcpState {
            snd_cwnd: 100,
            ..Default::default()
        };
        c.init(&mut tp);
        // First loss: W_max = cwnd; ssthresh = 100·717/1024 = 70.
        assert_eq!(c.ssthresh(&tp), 70);
        assert_eq!(c.epoch().0, 100);
        // Second loss below the first: W_max = 80·(1024+717)/2048 = 68 (139280/2048 = 68.01);
        // ssthresh = 80·717/1024 = 56.
        tp.snd_cwnd = 80;
        assert_eq!(c.ssthresh(&tp), 56);
        assert_eq!(c.epoch().0, 68);
        // A loss above W_max: W_max = cwnd.
        tp.snd_cwnd = 90;
        assert_eq!(c.ssthresh(&tp), 63);
        assert_eq!(c.epoch().0, 90);
        // Without fast convergence a lower loss still sets W_max = cwnd.
        let mut c = Cubic::new(CubicParams {
            fast_convergence: false,
            ..Default::default()
        });
        tp.snd_cwnd = 100;
        c.ssthresh(&tp);
        tp.snd_cwnd = 80;
        assert_eq!(c.ssthresh(&tp), 56);
        assert_eq!(c.epoch().0, 80);
        // ssthresh is at least 2.
        tp.snd_cwnd = 2;
        assert_eq!(c.ssthresh(&tp), 2);
    }

    #[test]
    fn ssthresh_ends_the_epoch() {
        let (mut c, tp) = after_loss(100, 10 * S);
        assert_ne!(c.bic.epoch_start, 0);
        c.ssthresh(&tp);
        assert_eq!(c.bic.epoch_start, 0);
    }

    // ---- TCP friendliness ----

    /// Runs `rounds` RTTs of `rtt_ms`, each acking cwnd packets one at a time, evenly spread.
    fn run_rounds(c: &mut Cubic, tp: &mut TcpState, rounds: u32, rtt_ms: u64) {
        for _ in 0..rounds {
            let n = tp.snd_cwnd as u64;
            let start = tp.now;
            for i in 0..n {
                tp.now = start + i * rtt_ms * MS / n;
                c.cong_avoid(tp, 1);
            }
            tp.now = start + rtt_ms * MS;
        }
    }

    #[test]
    fn tcp_friendly_region_grows_at_least_like_reno_with_cubics_beta() {
        // A 10 ms RTT just after a loss at W_max = 100: the cubic regrows 30 packets over K =
        // 4.2 s, i.e. about 0.07 packets per RTT at first; Reno with beta 0.7 adds
        // 3(1 − β)/(1 + β) = 0.53 packets per RTT, so over 100 RTTs (1 s) the Reno-equivalent
        // window wins. The cubic alone gives W(1 s) = 100 − 0.4·3.2³ ≈ 87.
        let reno_per_rtt = 3.0 * (1.0 - 717.0 / 1024.0) / (1.0 + 717.0 / 1024.0);
        let (mut c, mut tp) = after_loss(100, 10 * S);
        run_rounds(&mut c, &mut tp, 100, 10);
        let friendly = tp.snd_cwnd;
        let mut c2 = Cubic::new(CubicParams {
            tcp_friendliness: false,
            ..Default::default()
        });
        let mut tp2 = TcpState {
            now: 10 * S,
            snd_cwnd: 100,
            ..Default::default()
        };
        c2.init(&mut tp2);
        tp2.snd_cwnd = c2.ssthresh(&tp2);
        tp2.snd_ssthresh = tp2.snd_cwnd;
        tp2.is_cwnd_limited = true;
        run_rounds(&mut c2, &mut tp2, 100, 10);
        let cubic_only = tp2.snd_cwnd;
        let reno = 70.0 + 100.0 * reno_per_rtt; // 123
        assert!(
            friendly as f64 >= reno - 2.0,
            "friendly cwnd {friendly} < Reno-equivalent {reno:.1}"
        );
        assert!(
            friendly as f64 <= reno + 2.0,
            "friendly cwnd {friendly} above Reno-equivalent {reno:.1}"
        );
        assert!((85..=90).contains(&cubic_only), "cubic alone: {cubic_only}");
    }

    // ---- HyStart ----

    /// A CUBIC in slow start at `cwnd` with a HyStart round open up to snd_nxt = 1000.
    fn slow_start(p: CubicParams, cwnd: u32) -> (Cubic, TcpState) {
        let mut c = Cubic::new(p);
        let mut tp = TcpState {
            now: 5 * S,
            snd_cwnd: cwnd,
            snd_nxt: 0,
            ..Default::default()
        };
        c.init(&mut tp);
        tp.snd_nxt = 1000;
        tp.snd_una = 1; // passes end_seq = 0: the first sample opens a new round
        (c, tp)
    }

    #[test]
    fn hystart_delay_detection_fires_on_the_ninth_sample_above_the_clamped_threshold() {
        // delay_min = 100 ms: threshold = clamp(100 ms / 8, 4, 16) = 12.5 ms.
        let delay_only = CubicParams {
            hystart_detect: HYSTART_DELAY,
            ..Default::default()
        };
        for (rtt, fires) in [(112_500i64, false), (112_501, true)] {
            let (mut c, mut tp) = slow_start(delay_only, 20);
            c.pkts_acked(&mut tp, &ack(100_000));
            tp.snd_una = 1001; // a new round
            tp.snd_nxt = 2000;
            for i in 1..=8 {
                tp.now += 3 * MS;
                c.pkts_acked(&mut tp, &ack(rtt));
                assert!(
                    !c.hs.found && tp.snd_ssthresh == INFINITE_SSTHRESH,
                    "fired after {i} samples"
                );
            }
            tp.now += 3 * MS;
            c.pkts_acked(&mut tp, &ack(rtt));
            assert_eq!(c.hs.found, fires, "rtt {rtt}");
            assert_eq!(tp.snd_ssthresh, if fires { 20 } else { INFINITE_SSTHRESH });
        }
    }

    #[test]
    fn hystart_delay_threshold_is_clamped_to_4_and_16_ms() {
        assert_eq!(hystart_delay_thresh(10_000 >> 3), 4000);
        assert_eq!(hystart_delay_thresh(80_000 >> 3), 10_000);
        assert_eq!(hystart_delay_thresh(200_000 >> 3), 16_000);
    }

    #[test]
    fn hystart_needs_the_low_window_and_a_cwnd_in_slow_start() {
        let delay_only = CubicParams {
            hystart_detect: HYSTART_DELAY,
            ..Default::default()
        };
        let (mut c, mut tp) = slow_start(delay_only, 15); // below hystart_low_window = 16
        c.pkts_acked(&mut tp, &ack(10_000));
        for _ in 0..20 {
            c.pkts_acked(&mut tp, &ack(50_000));
        }
        assert!(!c.hs.found);
        let (mut c, mut tp) = slow_start(
            CubicParams {
                hystart: false,
                ..delay_only
            },
            20,
        );
        c.pkts_acked(&mut tp, &ack(10_000));
        for _ in 0..20 {
            c.pkts_acked(&mut tp, &ack(50_000));
        }
        assert!(!c.hs.found && tp.snd_ssthresh == INFINITE_SSTHRESH);
    }

    #[test]
    fn hystart_ack_train_fires_when_the_train_outlasts_half_the_min_rtt() {
        // delay_min = 100 ms; pacing rate 1 MB/s: ack_delay = min(1 ms, 65536·4/1e6 s) = 1 ms.
        // Unpaced, threshold = (100 + 1)/2 = 50.5 ms from the round start.
        let train_only = CubicParams {
            hystart_detect: HYSTART_ACK_TRAIN,
            ..Default::default()
        };
        for (paced, fires_at_ms) in [(false, 51u64), (true, 102)] {
            let (mut c, mut tp) = slow_start(train_only, 40);
            tp.pacing_rate = 1_000_000;
            tp.pacing_needed = paced;
            c.pkts_acked(&mut tp, &ack(100_000)); // opens the round at t0
            let t0 = tp.now;
            let mut fired = None;
            for ms in 1..=150 {
                tp.now = t0 + ms * MS; // ACKs 1 ms apart: one train
                c.pkts_acked(&mut tp, &ack(100_000));
                if c.hs.found {
                    fired = Some(ms);
                    break;
                }
            }
            assert_eq!(fired, Some(fires_at_ms), "paced {paced}");
            assert_eq!(tp.snd_ssthresh, 40);
        }
    }

    #[test]
    fn hystart_ack_train_breaks_on_a_gap_longer_than_ack_delta() {
        let train_only = CubicParams {
            hystart_detect: HYSTART_ACK_TRAIN,
            ..Default::default()
        };
        let (mut c, mut tp) = slow_start(train_only, 40);
        c.pkts_acked(&mut tp, &ack(100_000));
        let t0 = tp.now;
        for ms in (3..=300).step_by(3) {
            tp.now = t0 + ms * MS; // 3 ms apart: > hystart_ack_delta_us
            c.pkts_acked(&mut tp, &ack(100_000));
        }
        assert!(!c.hs.found);
    }

    #[test]
    fn hystart_ack_delay_is_four_gso_packets_at_the_pacing_rate_capped_at_1ms() {
        let c = cubic();
        let tp = |rate| TcpState {
            pacing_rate: rate,
            ..Default::default()
        };
        assert_eq!(c.hystart_ack_delay(&tp(0)), 0);
        assert_eq!(c.hystart_ack_delay(&tp(1_000_000)), 1000);
        assert_eq!(c.hystart_ack_delay(&tp(1_000_000_000)), 262); // 262144 B at 1 GB/s
    }

    #[test]
    fn rtt_samples_in_the_first_second_of_an_epoch_are_ignored() {
        let (mut c, mut tp) = after_loss(100, 10 * S);
        c.bic.delay_min = 50_000;
        tp.now += 999 * MS;
        c.pkts_acked(&mut tp, &ack(20_000));
        assert_eq!(c.bic.delay_min, 50_000);
        tp.now += MS;
        c.pkts_acked(&mut tp, &ack(20_000));
        assert_eq!(c.bic.delay_min, 20_000);
    }

    // ---- Linux 4.10 HyStart (hystart_version = "4.10") ----

    fn v4_10(detect: u8) -> CubicParams {
        CubicParams {
            hystart_version: HystartVersion::Linux4_10,
            hystart_detect: detect,
            ..Default::default()
        }
    }

    /// Feeds the first sample (`delay_min`), then starts a new round the 4.10 way: cong_avoid
    /// sees an ACK past end_seq.
    fn open_round_4_10(c: &mut Cubic, tp: &mut TcpState, delay_min_us: i64) {
        c.pkts_acked(tp, &ack(delay_min_us));
        tp.snd_una = 1001;
        tp.snd_nxt = 2000;
        tp.is_cwnd_limited = true;
        c.cong_avoid(tp, 1); // cwnd 20 → 21, new round at end_seq 2000 (4.10)
    }

    #[test]
    fn linux_4_10_delay_threshold_is_clamped_to_4_and_16_ms_in_ms_shifted_3() {
        // delay_min >> 3 in ms<<3 units: 10 ms = 80 → 10 → 32 (4 ms); 100 ms = 800 → 100
        // (12.5 ms); 200 ms = 1600 → 200 → 128 (16 ms).
        assert_eq!(hystart_delay_thresh_4_10(80 >> 3), 32);
        assert_eq!(hystart_delay_thresh_4_10(800 >> 3), 100);
        assert_eq!(hystart_delay_thresh_4_10(1600 >> 3), 128);
    }

    #[test]
    fn linux_4_10_delay_exit_compares_in_eighths_of_a_ms() {
        // delay_min = 100 ms = 800 (ms<<3); threshold 800 + 100 = 900 = 112.5 ms. A sample of
        // 112.501 ms is (112501 << 3)/1000 = 900: not above (6.x fires at 112.501 ms, see
        // above); 112.625 ms is 901: fires, on the 9th sample of the round.
        for (rtt, fires) in [(112_501i64, false), (112_624, false), (112_625, true)] {
            let (mut c, mut tp) = slow_start(v4_10(HYSTART_DELAY), 20);
            open_round_4_10(&mut c, &mut tp, 100_000);
            assert_eq!((c.bic.delay_min_ms8, c.hs.end_seq), (800, 2000));
            for i in 1..=8 {
                tp.now += 3 * MS;
                c.pkts_acked(&mut tp, &ack(rtt));
                assert!(!c.hs.found, "fired after {i} samples");
            }
            tp.now += 3 * MS;
            c.pkts_acked(&mut tp, &ack(rtt));
            assert_eq!(c.hs.found, fires, "rtt {rtt}");
            assert_eq!(tp.snd_ssthresh, if fires { 21 } else { INFINITE_SSTHRESH });
        }
    }

    #[test]
    fn linux_4_10_curr_rtt_is_the_min_of_the_first_8_samples_only() {
        // Eight samples at 120 ms, then one at 100 ms: 4.10's curr_rtt stays 960 (120 ms) and
        // exits; 6.x takes the 9th sample into the minimum (100 ms) and does not.
        for (version, exits) in [
            (HystartVersion::Linux4_10, true),
            (HystartVersion::Linux6, false),
        ] {
            let p = CubicParams {
                hystart_version: version,
                hystart_detect: HYSTART_DELAY,
                ..Default::default()
            };
            let (mut c, mut tp) = slow_start(p, 20);
            open_round_4_10(&mut c, &mut tp, 100_000);
            for _ in 0..8 {
                tp.now += 3 * MS;
                c.pkts_acked(&mut tp, &ack(120_000));
            }
            tp.now += 3 * MS;
            c.pkts_acked(&mut tp, &ack(100_000));
            assert_eq!(c.hs.found, exits, "{version:?}");
        }
    }

    #[test]
    fn linux_4_10_ack_train_fires_past_half_the_min_rtt_in_ms_paced_or_not() {
        // delay_min = 100 ms = 800; 800 >> 4 = 50 ms. ACKs 1 ms apart (≤ hystart_ack_delta,
        // 2 ms): fires on the ACK 51 ms after the round start, with no ack_delay cushion and no
        // doubling when paced (6.x: 51 and 102 ms, see above).
        for paced in [false, true] {
            let (mut c, mut tp) = slow_start(v4_10(HYSTART_ACK_TRAIN), 40);
            tp.pacing_rate = 1_000_000;
            tp.pacing_needed = paced;
            open_round_4_10(&mut c, &mut tp, 100_000);
            let t0 = tp.now;
            let mut fired = None;
            for ms in 1..=150 {
                tp.now = t0 + ms * MS;
                c.pkts_acked(&mut tp, &ack(100_000));
                if c.hs.found {
                    fired = Some(ms);
                    break;
                }
            }
            assert_eq!(fired, Some(51), "paced {paced}");
            assert_eq!(tp.snd_ssthresh, 41);
        }
    }

    #[test]
    fn linux_4_10_round_starts_in_cong_avoid_not_in_pkts_acked() {
        let (mut c, mut tp) = slow_start(v4_10(HYSTART_DELAY), 20);
        c.pkts_acked(&mut tp, &ack(100_000));
        // snd_una is past end_seq, but pkts_acked does not start a round in 4.10.
        assert_eq!((c.hs.end_seq, c.hs.sample_cnt), (0, 1));
        tp.is_cwnd_limited = true;
        tp.now += 7 * MS;
        c.cong_avoid(&mut tp, 1);
        assert_eq!((c.hs.end_seq, c.hs.sample_cnt, c.hs.curr_rtt), (1000, 0, 0));
        assert_eq!(c.hs.round_start, Cubic::clock_ms(tp.now));
    }

    #[test]
    fn linux_4_10_cubic_looks_ahead_by_the_ms_rounded_delay_min() {
        // delay_min 100.9 ms: 4.10 keeps 807 (ms<<3) and looks ahead msecs_to_jiffies(100)
        // = 100 jiffies at HZ 1000; 6.x usecs_to_jiffies(100900) = 101.
        let p = CubicParams {
            hz: 1000,
            hystart_version: HystartVersion::Linux4_10,
            ..Default::default()
        };
        let mut c = Cubic::new(p);
        c.bic.delay_min_ms8 = (100_900u64 * 8 / 1000) as u32;
        c.bic.delay_min = 100_900;
        assert_eq!(c.bic.delay_min_ms8, 807);
        assert_eq!(c.delay_min_jiffies(), 100);
        assert_eq!(cubic().usecs_to_jiffies(100_900), 101);
    }

    // ---- the triple delay check (hystart_delay_checks) ----

    /// Opens a new round (6.x: hystart_update sees snd_una past end_seq) and feeds `n` samples
    /// of `rtt_us`, 3 ms apart. Returns whether HyStart found the exit.
    fn delay_round(c: &mut Cubic, tp: &mut TcpState, rtt_us: i64, n: u32) -> bool {
        tp.snd_una = tp.snd_nxt + 1;
        tp.snd_nxt += 1000;
        for _ in 0..n {
            tp.now += 3 * MS;
            c.pkts_acked(tp, &ack(rtt_us));
        }
        c.hs.found
    }

    fn triple(count: DelayCount) -> (Cubic, TcpState) {
        let p = CubicParams {
            hystart_detect: HYSTART_DELAY,
            hystart_delay_checks: 3,
            hystart_delay_count: count,
            ..Default::default()
        };
        let (mut c, mut tp) = slow_start(p, 20);
        c.pkts_acked(&mut tp, &ack(100_000)); // delay_min 100 ms: threshold 112.5 ms
        (c, tp)
    }

    const HIT: i64 = 120_000; // above 112.5 ms
    const CLEAN: i64 = 105_000; // below

    #[test]
    fn triple_check_counts_a_round_once_however_many_samples_exceed() {
        let (mut c, mut tp) = triple(DelayCount::Cumulative);
        assert!(!delay_round(&mut c, &mut tp, HIT, 40));
        assert_eq!(c.hs.delay_hits, 1);
        assert!(!delay_round(&mut c, &mut tp, HIT, 40));
        assert!(delay_round(&mut c, &mut tp, HIT, 9), "third round exits");
        assert_eq!(c.hs.delay_hits, 3);
        assert_eq!(tp.snd_ssthresh, 20);
    }

    #[test]
    fn triple_check_cumulative_counts_across_clean_rounds() {
        let (mut c, mut tp) = triple(DelayCount::Cumulative);
        assert!(!delay_round(&mut c, &mut tp, HIT, 9));
        assert!(!delay_round(&mut c, &mut tp, HIT, 9));
        assert!(!delay_round(&mut c, &mut tp, CLEAN, 9));
        assert_eq!(c.hs.delay_hits, 2);
        assert!(delay_round(&mut c, &mut tp, HIT, 9));
    }

    #[test]
    fn triple_check_consecutive_restarts_after_a_clean_evaluated_round() {
        let (mut c, mut tp) = triple(DelayCount::Consecutive);
        assert!(!delay_round(&mut c, &mut tp, HIT, 9));
        assert!(!delay_round(&mut c, &mut tp, HIT, 9));
        assert!(!delay_round(&mut c, &mut tp, CLEAN, 9)); // evaluated (9 samples), clean
        assert!(!delay_round(&mut c, &mut tp, HIT, 9)); // the run restarts here...
        assert_eq!(c.hs.delay_hits, 1);
        assert!(!delay_round(&mut c, &mut tp, HIT, 9));
        // ...and a round too short to evaluate (8 samples) neither counts nor breaks it.
        assert!(!delay_round(&mut c, &mut tp, CLEAN, 8));
        assert_eq!(c.hs.delay_hits, 2);
        assert!(delay_round(&mut c, &mut tp, HIT, 9));
    }

    #[test]
    fn triple_check_default_of_one_is_linux() {
        let (mut c, mut tp) = slow_start(
            CubicParams {
                hystart_detect: HYSTART_DELAY,
                ..Default::default()
            },
            20,
        );
        c.pkts_acked(&mut tp, &ack(100_000));
        assert!(delay_round(&mut c, &mut tp, HIT, 9));
    }

    #[test]
    fn triple_check_applies_to_linux_4_10_too_and_an_rto_clears_it() {
        let p = CubicParams {
            hystart_delay_checks: 2,
            ..v4_10(HYSTART_DELAY)
        };
        let (mut c, mut tp) = slow_start(p, 20);
        open_round_4_10(&mut c, &mut tp, 100_000);
        for _ in 0..9 {
            c.pkts_acked(&mut tp, &ack(HIT));
        }
        assert_eq!((c.hs.delay_hits, c.hs.found), (1, false));
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!(c.hs.delay_hits, 0);
    }

    // ---- HyStart++ (RFC 9406) ----

    fn hspp(cwnd: u32) -> (Cubic, TcpState) {
        let p = CubicParams {
            hystart_pp: true,
            ..Default::default()
        };
        let mut c = Cubic::new(p);
        let mut tp = TcpState {
            now: 5 * S,
            snd_cwnd: cwnd,
            snd_nxt: 0,
            is_cwnd_limited: true,
            ..Default::default()
        };
        c.init(&mut tp);
        (c, tp)
    }

    /// A HyStart++ round: snd_una passes windowEnd, then `n` samples of `rtt_us`.
    fn pp_round(c: &mut Cubic, tp: &mut TcpState, rtt_us: i64, n: u32) {
        tp.snd_una = tp.snd_nxt + 1;
        tp.snd_nxt += 1000;
        for _ in 0..n {
            tp.now += MS;
            c.pkts_acked(tp, &ack(rtt_us));
        }
    }

    #[test]
    fn hystart_pp_rtt_thresh_is_an_eighth_of_the_last_round_clamped_to_4_and_16_ms() {
        assert_eq!(hystart_pp_rtt_thresh(20_000), 4000); // 2.5 ms → 4 ms
        assert_eq!(hystart_pp_rtt_thresh(80_000), 10_000);
        assert_eq!(hystart_pp_rtt_thresh(200_000), 16_000); // 25 ms → 16 ms
    }

    #[test]
    fn hystart_pp_enters_css_on_the_8th_sample_of_a_round_at_last_min_plus_thresh() {
        // lastRoundMinRTT 80 ms: RttThresh 10 ms, so CSS needs currentRoundMinRTT ≥ 90 ms.
        for (rtt, enters) in [(89_999i64, false), (90_000, true)] {
            let (mut c, mut tp) = hspp(20);
            pp_round(&mut c, &mut tp, 80_000, 8);
            pp_round(&mut c, &mut tp, rtt, 7);
            assert!(!c.pp.in_css(), "7 samples are not enough");
            pp_round_more(&mut c, &mut tp, rtt, 1);
            assert_eq!(c.pp.in_css(), enters, "rtt {rtt}");
            if enters {
                assert_eq!(c.pp.css_baseline_min_rtt, 90_000);
                assert_eq!(c.mode(&tp), "css");
                assert_eq!(
                    tp.snd_ssthresh, INFINITE_SSTHRESH,
                    "CSS is still slow start"
                );
            }
        }
        // The first round has no lastRoundMinRTT: no exit whatever the RTT.
        let (mut c, mut tp) = hspp(20);
        pp_round(&mut c, &mut tp, 500_000, 20);
        assert!(!c.pp.in_css());
    }

    /// More samples in the current round.
    fn pp_round_more(c: &mut Cubic, tp: &mut TcpState, rtt_us: i64, n: u32) {
        for _ in 0..n {
            tp.now += MS;
            c.pkts_acked(tp, &ack(rtt_us));
        }
    }

    fn in_css() -> (Cubic, TcpState) {
        let (mut c, mut tp) = hspp(20);
        pp_round(&mut c, &mut tp, 80_000, 8);
        pp_round(&mut c, &mut tp, 95_000, 8);
        assert!(c.pp.in_css());
        (c, tp)
    }

    #[test]
    fn hystart_pp_grows_by_min_n_l_in_slow_start_and_a_quarter_of_that_in_css() {
        // Slow start, unpaced: L = 8, so an ACK of 20 segments adds 8; paced: L = ∞, 20.
        for (paced, grown) in [(false, 8), (true, 20)] {
            let (mut c, mut tp) = hspp(20);
            tp.pacing_needed = paced;
            c.cong_avoid(&mut tp, 20);
            assert_eq!(tp.snd_cwnd, 20 + grown, "paced {paced}");
        }
        // CSS: one segment per ACK, cwnd + 1/4 each: +1 after 4 ACKs, +2 after 8.
        let (mut c, mut tp) = in_css();
        for (acks, cwnd) in [(3, 20), (1, 21), (4, 22)] {
            for _ in 0..acks {
                c.cong_avoid(&mut tp, 1);
            }
            assert_eq!(tp.snd_cwnd, cwnd);
        }
        // An ACK of 20 in CSS, unpaced: min(20, 8)/4 = 2.
        c.cong_avoid(&mut tp, 20);
        assert_eq!(tp.snd_cwnd, 24);
    }

    #[test]
    fn hystart_pp_css_ends_in_congestion_avoidance_after_5_rounds_counting_the_partial_one() {
        let (mut c, mut tp) = in_css(); // entered mid-round: round 1 of CSS
        for round in 2..=5 {
            pp_round(&mut c, &mut tp, 95_000, 8);
            assert_eq!(c.pp.css_rounds, round);
            assert_eq!(tp.snd_ssthresh, INFINITE_SSTHRESH);
        }
        tp.snd_cwnd = 33;
        pp_round(&mut c, &mut tp, 95_000, 1); // the 5th round is complete
        assert_eq!(tp.snd_ssthresh, 33);
        assert_eq!(c.mode(&tp), "cong_avoid");
        // And HyStart++ is over: CUBIC's own congestion avoidance from here.
        assert!(!c.hystart_pp_active(&tp));
    }

    #[test]
    fn hystart_pp_css_returns_to_slow_start_when_the_rtt_falls_below_the_baseline() {
        let (mut c, mut tp) = in_css(); // baseline 95 ms
        pp_round(&mut c, &mut tp, 94_999, 7);
        assert!(c.pp.in_css(), "7 samples are not enough");
        pp_round_more(&mut c, &mut tp, 94_999, 1);
        assert!(!c.pp.in_css());
        assert_eq!(c.mode(&tp), "slow_start");
        let cwnd = tp.snd_cwnd;
        c.cong_avoid(&mut tp, 4);
        assert_eq!(tp.snd_cwnd, cwnd + 4, "full slow-start growth again");
    }

    #[test]
    fn hystart_pp_is_only_for_the_initial_slow_start() {
        // After a loss (ssthresh set), slow start is the standard one: no L cap, no CSS.
        let (mut c, mut tp) = hspp(20);
        tp.snd_ssthresh = 100;
        c.cong_avoid(&mut tp, 20);
        assert_eq!(tp.snd_cwnd, 40);
        pp_round(&mut c, &mut tp, 80_000, 8);
        pp_round(&mut c, &mut tp, 200_000, 9);
        assert!(!c.pp.in_css());
        assert!(!c.hs.found, "nor Linux's HyStart");
        assert_eq!(tp.snd_ssthresh, 100);
    }

    // ---- state and events ----

    #[test]
    fn loss_state_forgets_w_max_and_rearms_hystart() {
        let (mut c, mut tp) = after_loss(100, 10 * S);
        c.hs.found = true;
        c.bic.delay_min = 40_000;
        tp.snd_nxt = 777;
        c.set_state(&mut tp, CaState::Recovery);
        assert_eq!(c.epoch().0, 100);
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!(c.epoch(), (0, 0, 0));
        assert_eq!(c.bic.delay_min, 0);
        assert!(!c.hs.found);
        assert_eq!(c.hs.end_seq, 777);
    }

    #[test]
    fn tx_start_after_idle_shifts_the_epoch_by_the_idle_time() {
        let (mut c, mut tp) = after_loss(100, 10 * S);
        let epoch = c.bic.epoch_start;
        tp.lsndtime = 11 * S;
        tp.now = 11 * S + 500 * MS;
        c.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(c.bic.epoch_start, epoch.wrapping_add(500));
        // Never moved past now.
        c.bic.epoch_start = c.jiffies(tp.now) - 10;
        tp.lsndtime = tp.now - 200 * MS;
        c.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(c.bic.epoch_start, c.jiffies(tp.now));
        // No epoch: nothing to shift.
        let mut c = cubic();
        c.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(c.bic.epoch_start, 0);
    }

    #[test]
    fn jiffies_start_at_minus_300_seconds_and_follow_hz() {
        let c = cubic();
        assert_eq!(c.jiffies(0), (-300_000i32) as u32);
        assert_eq!(c.jiffies(300 * S + 5 * MS), 5);
        let c250 = Cubic::new(CubicParams::default());
        assert_eq!(c250.p.hz, 250, "default CONFIG_HZ");
        assert_eq!(c250.jiffies(300 * S + 9 * MS), 2);
        assert_eq!(c250.usecs_to_jiffies(4001), 2);
    }

    // ---- parameters ----

    #[test]
    fn parameters_are_read_and_validated() {
        let t = params(&[
            ("hystart", toml::Value::Boolean(false)),
            ("hystart_detect", toml::Value::String("delay".into())),
            ("beta", toml::Value::Integer(512)),
            ("bic_scale", toml::Value::Integer(82)),
            ("hz", toml::Value::Integer(250)),
        ]);
        let p = CubicParams::from_table(&t).unwrap();
        assert!(!p.hystart);
        assert_eq!(p.hystart_detect, HYSTART_DELAY);
        assert_eq!((p.beta, p.bic_scale, p.hz), (512, 82, 250));
        assert_eq!(
            CubicParams::from_table(&toml::Table::new()).unwrap(),
            CubicParams::default()
        );

        let e = build_err(&[("hystrat", toml::Value::Boolean(false))]);
        assert_eq!(e.key, "hystrat");
        assert!(e.message.contains("hystart_low_window"), "{}", e.message);
        let e = build_err(&[("hystart", toml::Value::String("no".into()))]);
        assert_eq!(e.key, "hystart");
        assert!(e.message.contains("expected a boolean"), "{}", e.message);
        let e = build_err(&[("beta", toml::Value::Float(0.7))]);
        assert_eq!(e.key, "beta");
        assert!(
            e.message.contains("expected an integer in 1..=1023"),
            "{}",
            e.message
        );
        let e = build_err(&[("beta", toml::Value::Integer(1024))]);
        assert!(e.message.contains("out of range"), "{}", e.message);
        let e = build_err(&[("hystart_detect", toml::Value::String("train".into()))]);
        assert_eq!(e.key, "hystart_detect");
        assert!(e.message.contains("\"ack_train\""), "{}", e.message);
        let e = build_err(&[("hz", toml::Value::Integer(200))]);
        assert_eq!(e.key, "hz");
    }

    #[test]
    fn hystart_variant_parameters_are_read_and_validated() {
        let p = CubicParams::from_table(&params(&[
            ("hystart_version", toml::Value::String("4.10".into())),
            ("hystart_delay_checks", toml::Value::Integer(3)),
            (
                "hystart_delay_count",
                toml::Value::String("consecutive".into()),
            ),
        ]))
        .unwrap();
        assert_eq!(p.hystart_version, HystartVersion::Linux4_10);
        assert_eq!(p.hystart_delay_checks, 3);
        assert_eq!(p.hystart_delay_count, DelayCount::Consecutive);
        let p = CubicParams::from_table(&params(&[(
            "hystart",
            toml::Value::String("hystart++".into()),
        )]))
        .unwrap();
        assert!(p.hystart && p.hystart_pp);

        let e = build_err(&[("hystart", toml::Value::String("hystart+".into()))]);
        assert_eq!(e.key, "hystart");
        assert!(e.message.contains("\"hystart++\""), "{}", e.message);
        let e = build_err(&[("hystart_version", toml::Value::String("5.4".into()))]);
        assert_eq!(e.key, "hystart_version");
        assert!(e.message.contains("\"6.x\", \"4.10\""), "{}", e.message);
        let e = build_err(&[("hystart_delay_count", toml::Value::String("some".into()))]);
        assert_eq!(e.key, "hystart_delay_count");
        assert!(e.message.contains("\"cumulative\""), "{}", e.message);
        let e = build_err(&[("hystart_delay_checks", toml::Value::Integer(0))]);
        assert_eq!(e.key, "hystart_delay_checks");
        let e = build_err(&[
            ("hystart", toml::Value::String("hystart++".into())),
            ("hystart_delay_checks", toml::Value::Integer(3)),
        ]);
        assert_eq!(e.key, "hystart_delay_checks");
        assert!(e.message.contains("RFC 9406"), "{}", e.message);
        assert!(!e.message.contains('\n'));
    }
}
