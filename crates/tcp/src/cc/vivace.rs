//! PCC Vivace (Dong et al., "PCC Vivace: Online-Learning Congestion Control", NSDI 2018), a
//! rate-based sender that learns its rate by gradient ascent on a utility function.
//!
//! Ported from the authors' code: the algorithm (utility, modes, rate steps) from PCC-Uspace
//! (github.com/PCCproject/PCC-Uspace, master, `src/pcc/pcc_vivace_sender.cpp`,
//! `pcc_sender.cpp`, `pcc_utility_manager.cpp`, `pcc_monitor_interval_queue.cpp`), whose
//! utility is the paper's; the mapping onto Linux's congestion-control hooks from the authors'
//! kernel module (github.com/PCCproject/PCC-Kernel, branch `vivace`, `src/tcp_pcc.c`: pacing
//! through `sk_pacing_rate`, cwnd = 2 · rate · srtt, infinite ssthresh, the Loss-state freeze).
//! The kernel module's own Vivace uses a linear utility (`rate − rate·(900·lat_infl +
//! 11·loss)/1000`) and different step rules; the Uspace code is the one with the paper's
//! `x^0.9` utility, so its rules are the ones followed here.
//!
//! # The algorithm
//!
//! Time is cut into *monitor intervals* (MIs) of about one RTT. Each MI sends at a fixed rate;
//! once every packet it sent has been acked or lost, its utility is
//!
//! ```text
//!   u(x) = x^t − b · x · dRTT/dT − c · x · L          (pcc_utility_manager.cpp,
//!                                                     CalculateUtilityProportional)
//!   x       = bytes sent · 8 / MI duration, in bit/µs (= Mbit/s)
//!   dRTT/dT = least-squares slope of the MI's RTT samples over their send times (≥ 0)
//!   L       = lost / (lost + delivered)
//!   t = 0.9, b = 900, c = 11.35   (kSendingRateExponent, kLatencyCoefficient,
//!                                  kVivaceLossCoefficient)
//! ```
//!
//! The sender has three modes (`PccSender::SenderMode`):
//!
//! - **STARTING**: one MI at rate r; if its utility beats the last one's, r doubles and the next
//!   MI runs; else r halves (back to the best rate) and PROBING starts.
//! - **PROBING**: `probing_pairs` pairs of MIs at r(1+ε) and r(1−ε), ε = 0.05, each pair in a
//!   random order. If the pairs agree (a majority says "up", or all say "down":
//!   `PccVivaceSender::CanMakeDecision`), DECISION_MADE starts in that direction from r(1±ε);
//!   otherwise probing repeats.
//! - **DECISION_MADE**: one MI per step; the rate moves by
//!   `Δr = θ · Mbit · Mbit · |Δu| / |Δr_prev|` (the utility gradient times θ = 1,
//!   `kUtilityGradientToRateChangeFactor`; Mbit = 2^20 bit), multiplied by the *confidence
//!   amplifier* `⌊(rounds + 1)/2⌋^1.2` (`kRateChangeAmplifyExponent`), capped by the *dynamic
//!   change boundary* ω = 0.05 + 0.05·k of the rate (`kInitialMaxStepSize`,
//!   `kIncrementalStepSize`; k grows by one each time the cap binds and shrinks by one each
//!   time it does not), and at least 500 kbit/s (`kMinRateChange`). As long as the utility
//!   keeps moving with the rate in the chosen direction the steps go on; otherwise the last
//!   step is undone (by a step computed the same way) and PROBING starts again.
//!
//! Between the MIs of a round whose utility is still pending, the sender keeps the central
//! rate r (`GetSendingRateForNonUsefulInterval`), so the link is never left idle.
//!
//! # Monitor intervals on rove's hooks
//!
//! An MI is opened at an ACK (in `cong_control`, where the pacing rate can be set, as the
//! kernel module's `start_interval` does); every segment handed to [`CongestionControl::
//! on_segment_sent`] while it is open belongs to it (its transmission index, send time and
//! bytes). It closes, at an ACK, once it has lasted one min RTT (`monitor_duration_ = min_rtt_
//! * 1.0`) and holds `mi_min_rtt_samples` RTT samples (`kMinReliableRtt` = 4). Its packets'
//! fates are counted as the kernel module counts them: the transmissions whose fate is known are
//! the first `sent − packets_in_flight` (in order), and each ACK's new `tp.delivered` and
//! `tp.lost` are shared among the MIs whose transmissions that watermark passed. RTT samples
//! (`rs.rtt_ns`, the newest delivered packet's) are given to the MI that sent that packet (its
//! send time is `now − rtt`), so the latency gradient is exact.
//!
//! # Hooks
//!
//! | tcp_congestion_ops | here |
//! |---|---|
//! | `init` | `pcc_init`: ssthresh = ∞, `SK_PACING_NEEDED`; the first rate from cwnd / RTT |
//! | `cong_control` | `pcc_process`: count fates, close/open MIs, decide, set pacing and cwnd |
//! | `ssthresh` | `pcc_ssthresh`: ∞ (PCC does not use it) |
//! | `undo_cwnd` | `pcc_undo_cwnd`: keep cwnd |
//! | `set_state` | `pcc_set_state`: entering Loss freezes and drops the MIs; leaving it restarts |
//! | `on_segment_sent` | `PccSender::OnPacketSent`: the packet joins the open MI |
//!
//! # cc_params (defaults from the reference)
//!
//! | key | default | source |
//! |---|---|---|
//! | `exponent` | 0.9 | t, `kSendingRateExponent` |
//! | `latency_coefficient` | 900 | b, `kLatencyCoefficient` |
//! | `loss_coefficient` | 11.35 | c, `kVivaceLossCoefficient` |
//! | `probing_step` | 0.05 | ε, `kProbingStepSize` |
//! | `probing_pairs` | 3 | `kNumIntervalGroupsInProbingPrimary` (the kernel module uses 2) |
//! | `gradient_factor` | 1.0 | θ, `kUtilityGradientToRateChangeFactor` |
//! | `amplify_exponent` | 1.2 | `kRateChangeAmplifyExponent` |
//! | `initial_max_step` | 0.05 | ω₀, `kInitialMaxStepSize` |
//! | `incremental_step` | 0.05 | δ, `kIncrementalStepSize` |
//! | `min_rate_kbps` | 500 | `kMinSendingRate` and `kMinRateChange` |
//! | `mi_min_rtt_samples` | 4 | `kMinReliableRtt` |
//! | `cwnd_gain` | 2 | `pcc_set_cwnd` (tcp_pcc.c): cwnd = 2 · rate · srtt |
//!
//! # Where this differs from the reference
//!
//! - Units: rates are f64 bit/s; the utility's x is bit/µs and the gradient's Mbit is 2^20 bit,
//!   both as in the Uspace code (its own mix of 10^6 and 2^20).
//! - MI boundaries fall on ACKs (the kernel module's choice), not on sends (Uspace's
//!   `CreateNewInterval`); which packets belong to an MI is still decided at send time.
//! - Fates are counted by watermark, as the kernel module does (`packets_counted`), not per
//!   packet as Uspace's interval queue does; L is lost/(lost+delivered) of those counts
//!   (Uspace: bytes lost / bytes sent).
//! - One RTT sample per ACK (the newest delivered packet's), not one per acked packet; the
//!   regression is over send time (Uspace: over packet number, divided by the per-packet
//!   transfer time at the MI's rate, the same slope for evenly paced packets).
//! - Uspace's RTT-sample reliability filter (ACK-burst detection), MI duration extension,
//!   RTT-trend tolerance (`ProcessRttTrend`, a PCC Proteus addition) and STARTING early exit on
//!   RTT inflation (disabled by its flags: tolerance 100×) are not modelled. Its general
//!   tolerance is: the gradient is taken as 0 when the regression's RMS error over the mean
//!   RTT is at least |gradient|, or, in STARTING, when |gradient| < 1000 / duration_µs; a
//!   negative gradient counts as 0 (Uspace master; the paper's formula has no clip).
//! - The MI's minimum length is the sender's windowed min RTT (`tcp_min_rtt`, 10 s window;
//!   Uspace: its own all-time minimum).
//! - The random order of each probing pair comes from the flow's seeded stream
//!   (`CcConfig.seed`), not `rand()`.
//! - The Hybrid/Scavenger utilities (PCC Proteus) are not ported.
//! - The first rate is cwnd · MSS / min(srtt, 100 ms) (Uspace: initial window · 1400 B /
//!   100 ms, scaled by 100 ms / first RTT when that is shorter); from the live cwnd, so a
//!   mid-connection switch starts near the current rate.
//! - Loss state (RTO): as the kernel module, MIs are dropped while in Loss and a new round
//!   starts (in the same mode) when it ends. Uspace has no Loss state.
//! - The gradient's tolerance uses the true regression residual. Uspace's
//!   `ComputeRttGradientError` evaluates the regression with the slope already divided by the
//!   per-packet transfer time, so its "error" is nearly the RTT samples' coefficient of
//!   variation (a little larger for a ramp). On the Verizon LTE trace below, Uspace's arithmetic
//!   gives 48.3 % retransmissions instead of 48.7 %.
//! - [GAP] App-limited MIs are not detected (neither reference does for Vivace).
//!
//! # On cellular traces
//!
//! On the zoo's Mahimahi LTE paths (scenarios/zoo/cellular.toml) Vivace retransmits 40–49 % of
//! its segments (CUBIC: about 2 %). This comes from the reference's rules, not from a defect
//! of the port: the ablations below rule out the port's own choices (the Uspace code itself was
//! not run; its RTT-sample reliability filter, not modelled, is the one untested difference).
//! On Verizon-LTE-short, STARTING ends at 11.3 Mbit/s (the trace carries 12 Mbit/s in its first
//! second) and the trace then falls to 1–7 Mbit/s; Vivace's central rate never goes below 11.04
//! Mbit/s, so about half of what it sends is dropped at the 250-packet buffer. Three things
//! keep it there, all as in Uspace:
//!
//! - Rounds are slow. An MI stays open until it holds 4 RTT samples of its own packets, so it
//!   lasts at least an RTT, which is 0.5–2 s behind the full buffer. A probing round of six MIs
//!   takes 2–4 s; five complete in 30 s (at 1.8, 3.5, 7.1, 24.2 and 29.3 s), none during the
//!   trace's 11–16 s outage.
//! - Utilities are noise. Between the r(1±ε) rates the loss term differs by about c·2εr ≈ 12
//!   at 11 Mbit/s, but the capacity seen by consecutive MIs often differs by 25 %, and the
//!   trace's RTT swings give MI slopes of 0.1 to 4, i.e. latency penalties of 10³ to 10⁵.
//! - A decision to decrease needs all three pairs to agree (`CanMakeDecision`), while a
//!   majority is enough to increase. On TMobile-LTE-short the seven rounds completing between
//!   10 and 26 s each had two pairs saying "decrease" (the loss term) and one flipped by an RTT
//!   spike, so none decided (nor did the eighth, at 29.7 s), and the central rate stayed at
//!   29.8 Mbit/s against 4.8–19 Mbit/s of capacity.
//!
//! Ablations on Verizon, retransmissions 48.7 % by default: fates counted per packet from
//! `skb_marked_lost` (as Uspace counts them) give the same summary to the printed digit
//! (4.724 Mbit/s, 479.1 ms, 48.71 %): the watermark attributes them correctly. Not freezing
//! the MIs in Loss gives 48.2 %, `cwnd_gain` = 1 gives 40.9 %, `probing_step` = 0.2 gives
//! 40.6 %, and `latency_coefficient` = 0 gives 81.6 % (STARTING then runs to 45 Mbit/s). The
//! scenario test in crates/world/tests/zoo4.rs pins this:
//! `vivace_on_a_mahimahi_lte_trace_keeps_its_rate_above_capacity_under_the_reference_rules`.

use std::collections::VecDeque;

use rove_sim::rng::Stream;
use rove_sim::Nanos;

use super::{params, reject_unknown, CcConfig, CongestionControl, ParamError};
use crate::state::{CaState, RateSample, TcpState, INFINITE_SSTHRESH};

/// Bits per "Mbit" in the gradient (pcc_vivace_sender.cpp: `kMegabit = 1024 * 1024`).
const MEGABIT: f64 = 1024.0 * 1024.0;
/// pcc_sender.cpp: `kInitialRtt` = 100 ms, the RTT the initial rate assumes.
const INITIAL_RTT_US: u64 = 100_000;
/// tcp_pcc.c, pcc_set_cwnd: cwnd is at least 4 packets.
const MIN_CWND: u32 = 4;
/// pcc_utility_manager.cpp, CalculateUtilityProportional: in STARTING (tolerance ratio 100 >
/// 50), gradients below 1000 / duration_µs are noise.
const STARTING_GRADIENT_NOISE_US: f64 = 1000.0;

const PARAM_KEYS: &[&str] = &[
    "exponent",
    "latency_coefficient",
    "loss_coefficient",
    "probing_step",
    "probing_pairs",
    "gradient_factor",
    "amplify_exponent",
    "initial_max_step",
    "incremental_step",
    "min_rate_kbps",
    "mi_min_rtt_samples",
    "cwnd_gain",
];

const TELEMETRY: &[&str] = &[
    "vivace_rate_mbps",
    "vivace_utility",
    "vivace_step_allowance",
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VivaceParams {
    pub exponent: f64,
    pub latency_coefficient: f64,
    pub loss_coefficient: f64,
    pub probing_step: f64,
    pub probing_pairs: u32,
    pub gradient_factor: f64,
    pub amplify_exponent: f64,
    pub initial_max_step: f64,
    pub incremental_step: f64,
    pub min_rate_kbps: f64,
    pub mi_min_rtt_samples: u32,
    pub cwnd_gain: f64,
}

impl Default for VivaceParams {
    fn default() -> Self {
        VivaceParams {
            exponent: 0.9,
            latency_coefficient: 900.0,
            loss_coefficient: 11.35,
            probing_step: 0.05,
            probing_pairs: 3,
            gradient_factor: 1.0,
            amplify_exponent: 1.2,
            initial_max_step: 0.05,
            incremental_step: 0.05,
            min_rate_kbps: 500.0,
            mi_min_rtt_samples: 4,
            cwnd_gain: 2.0,
        }
    }
}

impl VivaceParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = VivaceParams::default();
        let num = |key: &str, default: f64, lo: f64, hi: f64| -> Result<f64, ParamError> {
            let v = params::number(t, key)?.unwrap_or(default);
            if v < lo || v > hi {
                return Err(ParamError {
                    key: key.to_string(),
                    message: format!("{v} is out of range; accepted: a number in [{lo}, {hi}]"),
                });
            }
            Ok(v)
        };
        Ok(VivaceParams {
            exponent: num("exponent", d.exponent, 0.01, 1.0)?,
            latency_coefficient: num("latency_coefficient", d.latency_coefficient, 0.0, 1e6)?,
            loss_coefficient: num("loss_coefficient", d.loss_coefficient, 0.0, 1e6)?,
            probing_step: num("probing_step", d.probing_step, 0.001, 0.5)?,
            probing_pairs: params::integer(t, "probing_pairs", d.probing_pairs, 1, 16, "pairs")?,
            gradient_factor: num("gradient_factor", d.gradient_factor, 0.0, 1e6)?,
            amplify_exponent: num("amplify_exponent", d.amplify_exponent, 0.0, 10.0)?,
            initial_max_step: num("initial_max_step", d.initial_max_step, 0.001, 10.0)?,
            incremental_step: num("incremental_step", d.incremental_step, 0.0, 10.0)?,
            min_rate_kbps: num("min_rate_kbps", d.min_rate_kbps, 1.0, 1e7)?,
            mi_min_rtt_samples: params::integer(
                t,
                "mi_min_rtt_samples",
                d.mi_min_rtt_samples,
                2,
                1000,
                "RTT samples",
            )?,
            cwnd_gain: num("cwnd_gain", d.cwnd_gain, 1.0, 100.0)?,
        })
    }

    fn min_rate_bps(&self) -> f64 {
        self.min_rate_kbps * 1000.0
    }
}

/// The Vivace utility of sending at `x_mbps` (bit/µs) with RTT gradient `rtt_gradient` (s/s)
/// and loss rate `loss` (pcc_utility_manager.cpp: CalculateUtilityProportional with the
/// Vivace coefficients).
pub fn utility(p: &VivaceParams, x_mbps: f64, rtt_gradient: f64, loss: f64) -> f64 {
    x_mbps.powf(p.exponent)
        - p.latency_coefficient * rtt_gradient * x_mbps
        - p.loss_coefficient * loss * x_mbps
}

/// PccSender::SenderMode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Starting,
    Probing,
    DecisionMade,
}

/// PccSender::RateChangeDirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Increase,
    Decrease,
}

/// UtilityInfo: an MI's rate (bit/s) and utility.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UtilityInfo {
    pub rate: f64,
    pub utility: f64,
}

/// A monitor interval (MonitorInterval).
#[derive(Debug, Clone, Default)]
struct Mi {
    rate: f64,
    /// Transmissions [first_tx, end_tx) are this MI's.
    first_tx: u64,
    end_tx: u64,
    open: bool,
    first_sent: Nanos,
    last_sent: Nanos,
    bytes_sent: u64,
    /// Fates counted so far (shares of ACKs' delivered/lost, so fractional).
    delivered: f64,
    lost: f64,
    /// RTT samples: (send time µs, RTT µs).
    samples: Vec<(f64, f64)>,
}

/// The MI's statistics and utility (ComputeSimpleMetrics, ComputeRttGradient,
/// ComputeRttGradientError, DetermineToleranceGeneral, CalculateUtilityProportional).
fn mi_utility(p: &VivaceParams, mi: &Mi, mss: u32, starting: bool) -> f64 {
    if mi.delivered <= 0.0 {
        return 0.0; // tcp_pcc.c, pcc_calc_utility_vivace: nothing delivered
    }
    // The duration counts the last packet's transfer time at the MI's rate.
    let duration_us =
        (mi.last_sent - mi.first_sent) as f64 / 1e3 + mss as f64 * 8.0 / mi.rate * 1e6;
    let x = mi.bytes_sent as f64 * 8.0 / duration_us;
    let loss = mi.lost / (mi.lost + mi.delivered);
    let mut grad = rtt_gradient(&mi.samples);
    if starting && grad.abs() < STARTING_GRADIENT_NOISE_US / duration_us {
        grad = 0.0;
    }
    utility(p, x, grad.max(0.0), loss)
}

/// Least-squares slope of RTT over send time; 0 when it is within the regression's RMS error
/// relative to the mean RTT (DetermineToleranceGeneral) or when there are < 2 samples.
pub fn rtt_gradient(samples: &[(f64, f64)]) -> f64 {
    if samples.len() < 2 {
        return 0.0;
    }
    let n = samples.len() as f64;
    let mx = samples.iter().map(|s| s.0).sum::<f64>() / n;
    let my = samples.iter().map(|s| s.1).sum::<f64>() / n;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &(x, y) in samples {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
    }
    if sxx == 0.0 {
        return 0.0;
    }
    let slope = sxy / sxx;
    let cut = my - slope * mx;
    let sq: f64 = samples
        .iter()
        .map(|&(x, y)| (y - (slope * x + cut)).powi(2))
        .sum();
    let error = (sq / n).sqrt() / my;
    if error < slope.abs() {
        slope
    } else {
        0.0
    }
}

/// Whether the group's better MI is the higher-rate one (`increase_i`).
fn group_says_increase(a: &UtilityInfo, b: &UtilityInfo) -> bool {
    if a.utility > b.utility {
        a.rate > b.rate
    } else {
        a.rate < b.rate
    }
}

pub struct Vivace {
    p: VivaceParams,
    rng: Stream,
    pub mode: Mode,
    /// sending_rate_ (bit/s): the central rate in PROBING.
    pub rate: f64,
    pub direction: Direction,
    /// rounds_.
    pub rounds: u32,
    /// incremental_rate_change_step_allowance_ (k in ω = ω₀ + k·δ).
    pub allowance: u32,
    /// latest_utility_info_.
    pub latest: UtilityInfo,
    /// The round's MIs, oldest first.
    mis: VecDeque<Mi>,
    /// Directions of this probing round's MIs, chosen at random per pair.
    probe_up: Vec<bool>,
    /// Transmissions so far (data_segs_out) and the fate watermark.
    tx: u64,
    known: u64,
    delivered_base: u64,
    lost_base: u64,
    loss_state: bool,
    rate_set: bool,
}

impl Vivace {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        let p = VivaceParams::from_table(config.params)?;
        Ok(Box::new(Vivace::new(p, config.seed)))
    }

    pub fn new(p: VivaceParams, seed: u64) -> Self {
        Vivace {
            p,
            rng: Stream::new(seed, "vivace"),
            mode: Mode::Starting,
            rate: 0.0,
            direction: Direction::Increase,
            rounds: 1,
            allowance: 0,
            latest: UtilityInfo::default(),
            mis: VecDeque::new(),
            probe_up: Vec::new(),
            tx: 0,
            known: 0,
            delivered_base: 0,
            lost_base: 0,
            loss_state: false,
            rate_set: false,
        }
    }

    /// Useful MIs per round (CreateUsefulInterval's max_num_useful).
    fn round_len(&self) -> usize {
        match self.mode {
            Mode::Probing => 2 * self.p.probing_pairs as usize,
            _ => 1,
        }
    }

    /// The rate of the round's `i`-th MI (MaybeSetSendingRate).
    fn mi_rate(&mut self, i: usize) -> f64 {
        if self.mode != Mode::Probing {
            return self.rate;
        }
        let up = if i.is_multiple_of(2) {
            self.rng.uniform() < 0.5
        } else {
            !self.probe_up[i - 1]
        };
        self.probe_up.push(up);
        let eps = self.p.probing_step;
        self.rate * if up { 1.0 + eps } else { 1.0 - eps }
    }

    /// The rate to pace at now: the open MI's, else the central rate (the non-useful
    /// interval's, GetSendingRateForNonUsefulInterval).
    fn current_rate(&self) -> f64 {
        match self.mis.back() {
            Some(mi) if mi.open => mi.rate,
            _ => self.rate,
        }
        .max(self.p.min_rate_bps())
    }

    fn open_mi(&mut self) {
        let i = self.mis.len();
        let rate = self.mi_rate(i);
        self.mis.push_back(Mi {
            rate,
            first_tx: self.tx,
            end_tx: self.tx,
            open: true,
            ..Default::default()
        });
    }

    fn reset_round(&mut self) {
        self.mis.clear();
        self.probe_up.clear();
    }

    /// Shares this ACK's new fates among the MIs the watermark passed.
    fn count_fates(&mut self, tp: &TcpState) {
        let dd = tp.delivered.saturating_sub(self.delivered_base) as f64;
        let dl = tp.lost.saturating_sub(self.lost_base) as f64;
        self.delivered_base = tp.delivered;
        self.lost_base = tp.lost;
        let from = self.known;
        let to = self
            .tx
            .saturating_sub(tp.packets_in_flight() as u64)
            .max(from);
        self.known = to;
        if dd + dl == 0.0 {
            return;
        }
        if to == from {
            // No watermark movement: the fates belong to the MI at the watermark.
            if let Some(mi) = self
                .mis
                .iter_mut()
                .find(|m| m.first_tx <= from && from < m.end_tx)
            {
                mi.delivered += dd;
                mi.lost += dl;
            }
            return;
        }
        let span = (to - from) as f64;
        for mi in self.mis.iter_mut() {
            let lo = mi.first_tx.max(from);
            let hi = mi.end_tx.min(to);
            if hi > lo {
                let share = (hi - lo) as f64 / span;
                mi.delivered += dd * share;
                mi.lost += dl * share;
            }
        }
    }

    fn note_rtt(&mut self, tp: &TcpState, rs: &RateSample) {
        if rs.rtt_ns <= 0 {
            return;
        }
        let sent = tp.now.saturating_sub(rs.rtt_ns as u64);
        if let Some(mi) = self
            .mis
            .iter_mut()
            .rev()
            .find(|m| m.bytes_sent > 0 && m.first_sent <= sent && sent <= m.last_sent)
        {
            mi.samples.push((sent as f64 / 1e3, rs.rtt_ns as f64 / 1e3));
        }
    }

    /// Closes the open MI when it has lasted a min RTT with enough RTT samples, and opens the
    /// next of the round (CreateNewInterval).
    fn advance_mis(&mut self, tp: &TcpState) {
        let min_rtt_ns = tp.min_rtt_us.saturating_mul(1000);
        if let Some(mi) = self.mis.back_mut() {
            if mi.open
                && mi.bytes_sent > 0
                && tp.now.saturating_sub(mi.first_sent) >= min_rtt_ns
                && mi.samples.len() >= self.p.mi_min_rtt_samples as usize
            {
                mi.open = false;
            }
        }
        let open = self.mis.back().is_some_and(|m| m.open);
        if !open && self.mis.len() < self.round_len() {
            self.open_mi();
        }
    }

    /// The round is over when every MI is closed and every packet's fate is known.
    fn round_complete(&self) -> bool {
        self.mis.len() == self.round_len()
            && self.mis.iter().all(|m| !m.open && self.known >= m.end_tx)
    }

    /// PccVivaceSender::OnUtilityAvailable.
    pub fn on_utility_available(&mut self, info: &[UtilityInfo]) {
        let min_rate = self.p.min_rate_bps();
        match self.mode {
            Mode::Starting => {
                if info[0].utility > self.latest.utility {
                    self.rate *= 2.0;
                    self.latest = info[0];
                    self.rounds += 1;
                } else {
                    // PccSender::EnterProbing from STARTING: back to the better rate.
                    self.rate *= 0.5;
                    self.mode = Mode::Probing;
                    self.rounds = 1;
                }
            }
            Mode::Probing => {
                if self.can_make_decision(info) {
                    self.set_rate_change_direction(info);
                    self.enter_decision_made(info);
                } else {
                    // PccSender::EnterProbing in PROBING: stay at the central rate.
                    self.rounds += 1;
                }
                if (self.rounds > 1 || self.mode == Mode::DecisionMade) && self.rate <= min_rate {
                    self.rate = min_rate;
                    self.allowance = 0;
                    self.rounds = 1;
                    self.mode = Mode::Starting;
                }
            }
            Mode::DecisionMade => {
                let (u, r) = (info[0], self.latest);
                let up = self.direction == Direction::Increase;
                let consistent = (u.utility > r.utility && (u.rate > r.rate) == up)
                    || (u.utility < r.utility && (u.rate < r.rate) == up);
                let consistent = consistent && u.rate != r.rate;
                if consistent {
                    self.enter_decision_made(info);
                    self.latest = info[0];
                } else {
                    self.enter_probing_from_decision(info);
                }
            }
        }
    }

    /// PccVivaceSender::CanMakeDecision (primary utility): a majority of groups say increase,
    /// or all say decrease.
    fn can_make_decision(&self, info: &[UtilityInfo]) -> bool {
        let g = self.p.probing_pairs as usize;
        if info.len() < 2 * g {
            return false;
        }
        let inc = (0..g)
            .filter(|&i| group_says_increase(&info[2 * i], &info[2 * i + 1]))
            .count();
        inc > g / 2 || inc == 0
    }

    /// PccVivaceSender::SetRateChangeDirection; latest = the better MI of the last agreeing
    /// group.
    fn set_rate_change_direction(&mut self, info: &[UtilityInfo]) {
        let g = self.p.probing_pairs as usize;
        let inc = (0..g)
            .filter(|&i| group_says_increase(&info[2 * i], &info[2 * i + 1]))
            .count();
        self.direction = if inc > g - inc {
            Direction::Increase
        } else {
            Direction::Decrease
        };
        for i in 0..g {
            let (a, b) = (info[2 * i], info[2 * i + 1]);
            if group_says_increase(&a, &b) == (self.direction == Direction::Increase) {
                self.latest = if a.utility > b.utility { a } else { b };
            }
        }
    }

    /// PccVivaceSender::EnterDecisionMade.
    fn enter_decision_made(&mut self, info: &[UtilityInfo]) {
        let eps = self.p.probing_step;
        let from_probing = self.mode == Mode::Probing;
        if from_probing {
            self.rate *= match self.direction {
                Direction::Increase => 1.0 + eps,
                Direction::Decrease => 1.0 - eps,
            };
        }
        self.rounds = if from_probing { 1 } else { self.rounds + 1 };
        let change = self.compute_rate_change(info);
        match self.direction {
            Direction::Increase => self.rate += change,
            Direction::Decrease => self.rate -= change,
        }
        if self.rate < self.p.min_rate_bps() {
            self.rate = self.p.min_rate_bps();
            self.mode = Mode::Probing;
            self.rounds = 1;
            self.allowance = 0;
        } else {
            self.mode = Mode::DecisionMade;
        }
    }

    /// PccVivaceSender::EnterProbing: undo the last step, then probe.
    fn enter_probing_from_decision(&mut self, info: &[UtilityInfo]) {
        self.rounds = 1;
        let change = self.compute_rate_change(info);
        match self.direction {
            Direction::Increase => self.rate -= change,
            Direction::Decrease => self.rate += change,
        }
        if self.rate < self.p.min_rate_bps() {
            self.rate = self.p.min_rate_bps();
            self.allowance = 0;
        }
        self.mode = Mode::Probing;
    }

    /// PccVivaceSender::ComputeRateChange (bit/s): gradient · θ, the confidence amplifier in
    /// DECISION_MADE, the dynamic change boundary ω, at least the minimum change.
    pub fn compute_rate_change(&mut self, info: &[UtilityInfo]) -> f64 {
        let (d_rate, d_util) = if self.mode == Mode::Probing {
            let g = self.p.probing_pairs as usize;
            let d_rate = (info[0].rate - info[1].rate).abs();
            let mut d_util = 0.0;
            for i in 0..g {
                let (a, b) = (info[2 * i], info[2 * i + 1]);
                if group_says_increase(&a, &b) != (self.direction == Direction::Increase) {
                    continue;
                }
                d_util += (a.utility - b.utility).abs();
            }
            (d_rate, d_util / g as f64)
        } else {
            (
                (info[0].rate - self.latest.rate).abs(),
                (info[0].utility - self.latest.utility).abs(),
            )
        };
        let gradient = if d_rate > 0.0 {
            MEGABIT * d_util / d_rate
        } else {
            0.0
        };
        let mut change = gradient * MEGABIT * self.p.gradient_factor;
        if self.mode == Mode::DecisionMade {
            // static_cast<float>((rounds_ + 1) / 2): integer division first (= ⌈rounds/2⌉).
            let base = self.rounds.div_ceil(2) as f64;
            change *= base.powf(self.p.amplify_exponent);
        } else {
            self.allowance = 0;
        }
        let max_change =
            self.rate * (self.p.initial_max_step + self.p.incremental_step * self.allowance as f64);
        if change > max_change {
            change = max_change;
            self.allowance += 1;
        } else if self.allowance > 0 {
            self.allowance -= 1;
        }
        change.max(self.p.min_rate_bps())
    }

    /// tcp_pcc.c, start_interval + pcc_set_cwnd.
    fn apply_rate(&self, tp: &mut TcpState) {
        let rate = self.current_rate();
        tp.pacing_rate = (rate / 8.0) as u64;
        let rtt_us = if tp.srtt_us > 0 { tp.srtt_us } else { 1000 };
        let cwnd = self.p.cwnd_gain * rate / 8.0 * rtt_us as f64 / 1e6 / tp.mss_cache as f64;
        tp.snd_cwnd = (cwnd as u32).max(MIN_CWND).min(tp.snd_cwnd_clamp);
    }

    fn init_rate(&mut self, tp: &TcpState) {
        let rtt_us = if tp.srtt_us > 0 {
            tp.srtt_us.min(INITIAL_RTT_US)
        } else {
            INITIAL_RTT_US
        };
        self.rate = (tp.snd_cwnd as f64 * tp.mss_cache as f64 * 8.0 * 1e6 / rtt_us as f64)
            .max(self.p.min_rate_bps());
        self.rate_set = tp.srtt_us > 0;
    }
}

impl CongestionControl for Vivace {
    fn name(&self) -> &'static str {
        "vivace"
    }

    fn init(&mut self, tp: &mut TcpState) {
        tp.snd_ssthresh = INFINITE_SSTHRESH;
        tp.pacing_needed = true; // SK_PACING_NEEDED
        self.init_rate(tp);
        self.delivered_base = tp.delivered;
        self.lost_base = tp.lost;
        // Packets the previous algorithm left in flight count as transmissions before ours.
        self.tx = tp.packets_in_flight() as u64;
        self.known = 0;
        self.reset_round();
        self.apply_rate(tp);
    }

    fn ssthresh(&mut self, _tp: &TcpState) -> u32 {
        INFINITE_SSTHRESH
    }

    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        tp.snd_cwnd
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn on_segment_sent(&mut self, tp: &TcpState, _seq: u64, bytes: u32, _retrans: bool) {
        self.tx += 1;
        if let Some(mi) = self.mis.back_mut() {
            if mi.open {
                if mi.bytes_sent == 0 {
                    mi.first_sent = tp.now;
                    mi.first_tx = self.tx - 1;
                }
                mi.last_sent = tp.now;
                mi.bytes_sent += bytes as u64;
                mi.end_tx = self.tx;
            }
        }
    }

    /// pcc_process.
    fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) {
        if !self.rate_set && tp.srtt_us > 0 {
            // The first RTT sample (PccSender::OnCongestionEvent, !has_seen_valid_rtt_).
            self.init_rate(tp);
        }
        self.count_fates(tp);
        if !self.loss_state && tp.min_rtt_us != u64::MAX {
            self.note_rtt(tp, rs);
            if self.round_complete() {
                let starting = self.mode == Mode::Starting;
                let info: Vec<UtilityInfo> = self
                    .mis
                    .iter()
                    .map(|m| UtilityInfo {
                        rate: m.rate,
                        utility: mi_utility(&self.p, m, tp.mss_cache, starting),
                    })
                    .collect();
                self.reset_round();
                self.on_utility_available(&info);
            }
            self.advance_mis(tp);
        }
        self.apply_rate(tp);
    }

    /// pcc_set_state: Loss freezes the MIs; leaving it starts a fresh round.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss && !self.loss_state {
            self.loss_state = true;
            self.reset_round();
        } else if new_state != CaState::Loss && self.loss_state {
            self.loss_state = false;
            self.reset_round();
            self.known = self.tx.saturating_sub(tp.packets_in_flight() as u64);
        }
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        TELEMETRY
    }

    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = self.rate / 1e6;
        out[1] = self.latest.utility;
        out[2] = self.allowance as f64;
    }

    fn mode(&self, _tp: &TcpState) -> &'static str {
        if self.loss_state {
            return "loss";
        }
        match self.mode {
            Mode::Starting => "starting",
            Mode::Probing => "probing",
            Mode::DecisionMade => "decision_made",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vivace() -> Vivace {
        Vivace::new(VivaceParams::default(), 1)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn utility_is_rate_power_minus_latency_and_loss_penalties() {
        let p = VivaceParams::default();
        // 20^0.9 = 14.822689; 900·0.01·20 = 180; 11.35·0.02·20 = 4.54.
        assert!(close(utility(&p, 20.0, 0.01, 0.02), -169.717311));
        assert!(close(utility(&p, 20.0, 0.0, 0.0), 14.822689));
        // 10^0.9 − 11.35·0.05·10 = 7.943282 − 5.675.
        assert!(close(utility(&p, 10.0, 0.0, 0.05), 2.268282));
    }

    #[test]
    fn rtt_gradient_is_the_regression_slope_unless_within_its_error() {
        // RTT 100, 110, 120 µs at send times 0, 1000, 2000 µs: slope 0.01, no residual.
        let rising = [(0.0, 100.0), (1000.0, 110.0), (2000.0, 120.0)];
        assert!(close(rtt_gradient(&rising), 0.01));
        // 100, 110, 100, 110 µs: slope 0.002, RMS residual 4.47 µs / mean 105 = 0.043 ≥ 0.002:
        // within the noise, taken as 0.
        let noisy = [
            (0.0, 100.0),
            (1000.0, 110.0),
            (2000.0, 100.0),
            (3000.0, 110.0),
        ];
        assert_eq!(rtt_gradient(&noisy), 0.0);
        assert_eq!(rtt_gradient(&[(0.0, 100.0)]), 0.0);
    }

    #[test]
    fn starting_doubles_while_utility_grows_and_halves_into_probing_when_it_drops() {
        let mut v = vivace();
        v.rate = 1e7;
        v.on_utility_available(&[UtilityInfo {
            rate: 1e7,
            utility: 5.0,
        }]);
        assert_eq!((v.mode, v.rate), (Mode::Starting, 2e7));
        v.on_utility_available(&[UtilityInfo {
            rate: 2e7,
            utility: 4.0,
        }]);
        assert_eq!((v.mode, v.rate, v.rounds), (Mode::Probing, 1e7, 1));
    }

    #[test]
    fn probing_majority_decides_and_the_first_step_is_capped_by_the_change_boundary() {
        let mut v = vivace();
        v.mode = Mode::Probing;
        v.rate = 1e7;
        let i = |rate: f64, utility: f64| UtilityInfo { rate, utility };
        // Pairs 0 and 1 say up (by 0.8 each), pair 2 says down: 2 of 3 → INCREASE.
        let info = [
            i(1.05e7, 7.0),
            i(0.95e7, 6.2),
            i(0.95e7, 6.1),
            i(1.05e7, 6.9),
            i(1.05e7, 6.0),
            i(0.95e7, 6.2),
        ];
        v.on_utility_available(&info);
        assert_eq!(v.mode, Mode::DecisionMade);
        assert_eq!(v.direction, Direction::Increase);
        assert_eq!(v.latest, i(1.05e7, 6.9));
        // From r(1+ε) = 1.05e7: Δu = (0.8 + 0.8)/3, Δr = 1e6, change = 2^40·Δu/Δr = 586,406
        // > ω₀·rate = 525,000: capped, and the allowance grows to 1.
        assert!(close(v.rate, 1.05e7 + 525_000.0), "{}", v.rate);
        assert_eq!(v.allowance, 1);
    }

    #[test]
    fn decision_steps_grow_with_the_amplifier_and_the_boundary_and_reverse_into_probing() {
        let mut v = vivace();
        v.mode = Mode::DecisionMade;
        v.direction = Direction::Increase;
        v.rounds = 2;
        v.rate = 1.05e7;
        v.latest = UtilityInfo {
            rate: 1e7,
            utility: 5.0,
        };
        // Step 1: rounds 3, amplifier ⌊4/2⌋^1.2 = 2.297397; gradient 2^20·0.1/5e5 = 0.2097152;
        // change = 0.2097152·2^20·2.297397 = 505,202.88 < ω = 5 % of 1.05e7 = 525,000.
        v.on_utility_available(&[UtilityInfo {
            rate: 1.05e7,
            utility: 5.1,
        }]);
        assert_eq!(v.rounds, 3);
        assert!(close(v.rate, 1.05e7 + 505_202.879), "{}", v.rate);
        assert_eq!(v.allowance, 0);
        // Step 2: utility +0.5 over Δr = 505,202.88: change 2.5e6 > 5 % of the rate: capped
        // at 550,260.14, allowance 1.
        let r1 = v.rate;
        v.on_utility_available(&[UtilityInfo {
            rate: r1,
            utility: 5.6,
        }]);
        assert!(close(v.rate, r1 * 1.05), "{}", v.rate);
        assert_eq!(v.allowance, 1);
        // Step 3: capped at ω = 5 % + 5 % = 10 %, allowance 2.
        let r2 = v.rate;
        v.on_utility_available(&[UtilityInfo {
            rate: r2,
            utility: 7.0,
        }]);
        assert!(close(v.rate, r2 * 1.10), "{}", v.rate);
        assert_eq!(v.allowance, 2);
        // The utility falls as the rate rises: undo a step (rounds 1, amplifier 1, capped at
        // ω = 15 % of the rate; allowance 3) and probe.
        let r3 = v.rate;
        v.on_utility_available(&[UtilityInfo {
            rate: r3,
            utility: 1.0,
        }]);
        assert_eq!(v.mode, Mode::Probing);
        assert!(close(v.rate, r3 * 0.85), "{}", v.rate);
    }

    #[test]
    fn a_monitor_interval_is_sent_acked_and_ends_starting_round_by_doubling() {
        let mut v = vivace();
        let mut tp = TcpState {
            srtt_us: 10_000,
            min_rtt_us: 10_000,
            ..Default::default()
        };
        v.init(&mut tp);
        let r0 = v.rate;
        // 10 packets per 10 ms RTT = 11.584 Mbit/s.
        assert!(close(r0, 11_584_000.0));
        // One packet a millisecond, each acked 10 ms later with a 10 ms RTT sample.
        let mut sent: VecDeque<Nanos> = VecDeque::new();
        for ms in 0..60u64 {
            tp.now = ms * 1_000_000;
            while sent.front().is_some_and(|&t| t + 10_000_000 <= tp.now) {
                sent.pop_front();
                tp.packets_out -= 1;
                tp.delivered += 1;
                let rs = RateSample {
                    rtt_ns: 10_000_000,
                    acked_sacked: 1,
                    ..Default::default()
                };
                v.cong_control(&mut tp, &rs);
            }
            v.on_segment_sent(&tp, ms, 1448, false);
            tp.packets_out += 1;
            sent.push_back(tp.now);
        }
        // The MI opened at the first ACK (10 ms), closed at 23 ms (≥ 1 min RTT, 4 samples),
        // and its last packet was acked at 33 ms: utility > 0, so the rate doubled.
        assert_eq!(v.mode, Mode::Starting);
        assert!(v.rate >= 2.0 * r0, "{} vs {}", v.rate, r0);
        assert!(v.latest.utility > 0.0);
        assert_eq!(tp.pacing_rate, (v.current_rate() / 8.0) as u64);
    }

    #[test]
    fn fates_are_counted_for_the_monitor_interval_that_sent_them_under_loss_and_retransmission() {
        // Every 4th new packet is lost once, marked lost when the next packet's ACK arrives and
        // retransmitted at once, so later MIs carry earlier MIs' retransmissions (which are
        // delivered). One transmission a millisecond, a 10 ms RTT, no SACK reordering.
        let mut v = vivace();
        v.mode = Mode::Probing; // six MIs per round: the round outlives the MIs checked
        let mut tp = TcpState {
            srtt_us: 10_000,
            min_rtt_us: 10_000,
            ..Default::default()
        };
        v.init(&mut tp);
        // Pending ACKs: (arrival ns, lost, retransmission).
        let mut acks: VecDeque<(Nanos, bool, bool)> = VecDeque::new();
        let mut lost_tx: Vec<u64> = Vec::new(); // transmission indices that were lost
        let (mut tx, mut new_pkts, mut to_retransmit) = (0u64, 0u64, 0u32);
        let mut checked = 0;
        for ms in 0..400u64 {
            tp.now = ms * 1_000_000;
            while acks.front().is_some_and(|a| a.0 <= tp.now) {
                let (_, lost, retrans) = acks.pop_front().unwrap();
                if lost {
                    // Its successor's ACK reveals the hole: marked lost, to be retransmitted.
                    tp.lost_out += 1;
                    tp.lost += 1;
                    to_retransmit += 1;
                } else {
                    tp.packets_out -= 1;
                    tp.delivered += 1;
                    if retrans {
                        tp.lost_out -= 1;
                        tp.retrans_out -= 1;
                    }
                }
                let rs = RateSample {
                    rtt_ns: if lost || retrans { -1 } else { 10_000_000 },
                    ..Default::default()
                };
                v.cong_control(&mut tp, &rs);
            }
            let retrans = to_retransmit > 0;
            if retrans {
                to_retransmit -= 1;
                tp.retrans_out += 1;
            } else {
                tp.packets_out += 1;
                new_pkts += 1;
            }
            let lost = !retrans && new_pkts % 4 == 0;
            if lost {
                lost_tx.push(tx);
            }
            // A lost packet's "ACK" is its successor's, 1 ms later.
            let delay = if lost { 11_000_000 } else { 10_000_000 };
            acks.push_back((tp.now + delay, lost, retrans));
            v.on_segment_sent(&tp, tx, 1448, retrans);
            tx += 1;
            // Every MI whose packets all have a known fate holds exactly its own losses.
            for mi in v.mis.iter().filter(|m| !m.open && v.known >= m.end_tx) {
                let truth = lost_tx
                    .iter()
                    .filter(|&&i| mi.first_tx <= i && i < mi.end_tx)
                    .count() as f64;
                let sent = (mi.end_tx - mi.first_tx) as f64;
                assert!((mi.lost - truth).abs() < 1.0, "{} vs {truth}", mi.lost);
                assert!((mi.lost + mi.delivered - sent).abs() < 1e-6);
                checked += 1;
            }
        }
        assert!(checked > 0, "no MI was complete");
    }

    #[test]
    fn unknown_and_out_of_range_parameters_are_rejected_with_the_key() {
        let t: toml::Table = "probing_pairs = 2\nexponent = 0.8".parse().unwrap();
        let p = VivaceParams::from_table(&t).unwrap();
        assert_eq!((p.probing_pairs, p.exponent), (2, 0.8));
        let t: toml::Table = "omega = 1".parse().unwrap();
        assert_eq!(VivaceParams::from_table(&t).unwrap_err().key, "omega");
        let t: toml::Table = "exponent = 2.0".parse().unwrap();
        assert_eq!(VivaceParams::from_table(&t).unwrap_err().key, "exponent");
    }
}
