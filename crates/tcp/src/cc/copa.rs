//! Copa (Arun & Balakrishnan, "Copa: Practical Delay-Based Congestion Control for the Internet",
//! NSDI 2018), ported from the authors' reference sender, genericCC's `MarkovianCC`
//! (github.com/venkatarun95/genericCC: markoviancc.cc, rtt-window.cc, estimators.cc) in the
//! configuration Pantheon runs (`delta_conf=do_ss:auto:0.5`: slow start on, automatic mode
//! switching, default δ = 0.5).
//!
//! # The algorithm
//!
//! Copa aims at the rate that maximises `log(throughput) − δ·log(delay)` for Markovian
//! arrivals, `λ_t = 1/(δ·d_q)`, and moves its window toward it on every ACK:
//!
//! ```text
//!   RTTmin      = min RTT over max(10 s, 20·RTTmin)                     propagation delay
//!   RTTstanding = min RTT over srtt/2         (srtt: Copa's own EWMA, gain 1/16)
//!   d_q         = RTTstanding − RTTmin                                  queueing delay
//!   target      = RTTstanding / (δ·d_q)  packets  (λ_t = target/RTTstanding = 1/(δ·d_q))
//!   per ACK     cwnd ± v/(δ·cwnd)         + toward the target, − away from it
//!   pacing      2·cwnd / RTTstanding
//! ```
//!
//! At equilibrium the flow keeps `λ·d_q = 1/δ` packets queued (2 at δ = 0.5); the window
//! oscillates around it and the queue nearly empties every few RTTs (paper §2.2).
//!
//! **Velocity.** Once per RTT (when more than the latest RTT sample has passed since the last
//! update) the direction of the RTT's steps is compared with the previous RTT's: while it stays
//! the same for `velocity_rtts` RTTs the velocity `v` doubles each RTT; a change resets it to 1.
//! `v` is halved whenever it exceeds `δ·cwnd` (so one ACK never moves cwnd by more than about
//! one packet) and never drops below 1.
//!
//! **Slow start.** cwnd grows by one packet per packet acked (doubling per RTT) until it reaches
//! the target; the first 19 ACKs (`2·num_probe_pkts − 1`) leave the window alone (genericCC's
//! "first two RTTs are for probing").
//!
//! **Competitive mode** (`mode = "auto"`). If the queue did not nearly empty within the last
//! 4 srtt — the min RTT over that window stays above `RTTmin + 0.1·(max RTT over that window −
//! RTTmin)` — a buffer-filling flow shares the bottleneck and Copa runs AIMD on `1/δ`: `+1` per
//! RTT without loss, halved (δ doubled) on each ACK that reports a loss, δ never above the
//! default. Back in the default mode δ returns to its default once an RTT has passed since the
//! last loss-triggered change.
//!
//! **Heavy loss.** Every 2 RTTs (over ≥ 20 events), if more than 30 % of the packets were lost,
//! cwnd is cut to 0.7× (genericCC's `ReduceOnLoss`). Otherwise Copa does not react to loss.
//!
//! # Constants (genericCC; `cc_params` where tunable)
//!
//! | key | default | source |
//! |---|---|---|
//! | `delta` | 0.5 | Pantheon's `do_ss:auto:0.5`; paper §5 "δ = 0.5" (`default_delta`) |
//! | `mode` | `"auto"` | `auto:` (mode switching); `"default"` keeps δ constant (`constant_delta:`) |
//! | `velocity_rtts` | 2 | genericCC's code: doubles once the direction held this RTT and the last; the paper §2.2 says "start doubling only after the direction has remained the same for three RTTs": set 3 for it |
//! | `slow_start` | true | `do_ss:`; false starts straight in the velocity mode ([GAP]: genericCC asserts there) |
//!
//! Fixed: srtt gain 1/16 and the 10 s / 20·RTTmin min-RTT window, srtt/2 and 4·srtt windows
//! (rtt-window.cc); the 0.1 near-empty threshold (`RTTWindow::is_copa`); `num_probe_pkts` = 10
//! (initial window, 19 probe ACKs); minimum cwnd 2 and pacing `0.5·RTTstanding/cwnd` per packet
//! (`update_intersend_time`); the 0.3 loss rate, 2-RTT period, 20 events and 0.7 cut
//! (`ReduceOnLoss`).
//!
//! # Where this differs from genericCC
//!
//! genericCC is a user-space UDP sender with a receiver that acknowledges every packet; rove's
//! Copa is a TCP congestion-control module (`cong_control`, as BBR) inside a Linux-like sender:
//!
//! - **Per ACK, not per packet.** A TCP ACK may cover several packets (delayed ACKs, SACK); the
//!   per-packet steps are applied `acked_sacked` times at once: slow start adds `acked`, the
//!   window step is `acked·v/(δ·cwnd)`, the direction count moves by `acked`. The RTT sample is
//!   the ACK's newest (`rs.rtt_ns`, the most recently sent packet newly delivered), as genericCC
//!   samples each packet's own RTT; an ACK without a sample (Karn) updates nothing but losses.
//! - **Loss signal.** genericCC calls a packet lost when an ACK for a later one arrives; here a
//!   loss is what RACK/SACK marks (`rs.losses`, packets newly marked lost by this ACK). An ACK
//!   with losses counts as one "packet lost" event for δ (as genericCC's one `update_delta(true)`
//!   per ACK) and `rs.losses` lost packets for `ReduceOnLoss`.
//! - **TCP loss recovery.** Copa owns cwnd in every state (`has_cong_control`): no PRR in
//!   Recovery, no reduction at its end. `ssthresh` returns `tp.snd_ssthresh` unchanged (Copa has
//!   no ssthresh; its slow start is its own flag). After an RTO the sender sets cwnd to
//!   in-flight + 1 (tcp_enter_loss); the next ACK restores Copa's window — genericCC's
//!   `onTimeout` does nothing. Retransmissions go out under the same cwnd and pacing.
//! - **Window rounding.** genericCC's window is fractional and a packet may leave while fewer
//!   than `window` are in flight: `tp.snd_cwnd = ⌈cwnd⌉`.
//! - **Pacing.** `tp.pacing_rate = 2·cwnd·mss/RTTstanding` bytes/s with `tp.pacing_needed` set
//!   (sticky after a switch away, as Linux's `sk_pacing_status`); 0 (unpaced) during the probe
//!   ACKs, as genericCC's intersend time 0.
//! - **Velocity start** is a parameter, defaulting to the code's 2 RTTs (see `velocity_rtts`;
//!   the paper says 3).
//!   Otherwise the velocity bookkeeping is genericCC's, including its quirk that a tie (as many
//!   steps up as down in an RTT) counts as a change and flips the remembered direction, and its
//!   `(int)v·2` doubling (its `v < 0.006` branch is unreachable, v ≥ 1, and left out).
//! - **Mode window.** The paper checks for a nearly empty queue "in the last 5 RTTs"; the code,
//!   followed here, uses 4·srtt.
//! - **Mid-connection start** (`init` from a live socket): Copa starts from the live cwnd (at
//!   connection start that is TCP's initial window, 10 = `num_probe_pkts`) with fresh RTT
//!   windows, in slow start and with the 19 probe ACKs, as genericCC's `init()`.
//! - Unused genericCC machinery (the other utility modes, `interarrival`, `is_uniform`, loss-rate
//!   EWMAs, the unacknowledged-packet map) is left out; it does not affect the window in this
//!   configuration. Times are µs in f64 (genericCC: ms in double).

use std::collections::VecDeque;

use super::{params, reject_unknown, CcConfig, CongestionControl, ParamError};
use crate::state::{RateSample, TcpState};

/// markoviancc.hh: num_probe_pkts = 10, the initial window.
const NUM_PROBE_PKTS: u32 = 10;
/// markoviancc.cc update_intersend_time: "first two RTTs are for probing", num_pkts_acked <
/// 2·num_probe_pkts − 1.
const PROBE_ACKS: u64 = 2 * NUM_PROBE_PKTS as u64 - 1;
/// markoviancc.cc: `_the_window = max(2.0, _the_window)`.
const MIN_CWND: f64 = 2.0;
/// rtt-window.cc: srtt_alpha = 1/16.
const SRTT_ALPHA: f64 = 1.0 / 16.0;
/// rtt-window.cc: max_time = max(10e3 ms, 20·min_rtt): the min-RTT window, µs.
const MIN_RTT_WINDOW_US: f64 = 10e6;
/// rtt-window.cc: the min-RTT window is at least 20 min RTTs.
const MIN_RTT_WINDOW_RTTS: f64 = 20.0;
/// rtt-window.cc: unjittered_rtt (RTTstanding) over srtt·0.5.
const STANDING_SRTTS: f64 = 0.5;
/// rtt-window.cc: is_copa_min / is_copa_max over srtt·4.
const MODE_SRTTS: f64 = 4.0;
/// rtt-window.cc is_copa: "nearly empty" is min_rtt + 0.1·(max − min_rtt).
const NEARLY_EMPTY_FRACTION: f64 = 0.1;
/// markoviancc.cc update_intersend_time: intersend = 0.5·rtt/window, i.e. pace at 2·cwnd/rtt.
const PACING_GAIN: f64 = 2.0;
/// estimators.cc ReduceOnLoss: a window of 2 RTTs ...
const ROL_RTTS: f64 = 2.0;
/// ... over more than 20 events ...
const ROL_MIN_PKTS: u32 = 20;
/// ... reduces when more than 30 % were lost ...
const ROL_LOSS_RATE: f64 = 0.3;
/// ... by 0.7× (markoviancc.cc onACK: `_the_window *= 0.7`).
const ROL_CUT: f64 = 0.7;

const PARAM_KEYS: &[&str] = &["delta", "mode", "velocity_rtts", "slow_start"];

const COPA_TELEMETRY: &[&str] = &[
    "copa_cwnd",
    "copa_target_cwnd",
    "copa_delta",
    "copa_velocity",
    "copa_rtt_standing_ms",
    "copa_min_rtt_ms",
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopaParams {
    /// default_delta: 0.5 (Pantheon's `auto:0.5`).
    pub delta: f64,
    /// `auto:` mode switching (true) or `constant_delta:` (false).
    pub auto_mode: bool,
    /// RTTs the direction must hold before the velocity starts doubling (paper: 3).
    pub velocity_rtts: u32,
    /// `do_ss:` (true in Pantheon's configuration).
    pub slow_start: bool,
}

impl Default for CopaParams {
    fn default() -> Self {
        CopaParams {
            delta: 0.5,
            auto_mode: true,
            velocity_rtts: 2, // markoviancc.cc (the paper's text: 3)
            slow_start: true,
        }
    }
}

impl CopaParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = CopaParams::default();
        let delta = match params::number(t, "delta")? {
            None => d.delta,
            Some(x) if x > 0.0 && x <= 10.0 => x,
            Some(x) => {
                return Err(ParamError {
                    key: "delta".into(),
                    message: format!("{x} is out of range; accepted: a number in (0, 10]"),
                })
            }
        };
        Ok(CopaParams {
            delta,
            auto_mode: params::choice(t, "mode", "auto", &["auto", "default"])? == "auto",
            velocity_rtts: params::integer(t, "velocity_rtts", d.velocity_rtts, 2, 100, "RTTs")?,
            slow_start: params::boolean(t, "slow_start", d.slow_start)?,
        })
    }
}

/// ExtremeWindow (rtt-window.cc): the min (or max) of the samples of the last `max_time`,
/// kept as a monotone deque of (time, value); the oldest sample is dropped only while another
/// remains.
#[derive(Debug, Clone)]
pub(crate) struct ExtremeWindow {
    find_min: bool,
    vals: VecDeque<(f64, f64)>,
}

impl ExtremeWindow {
    fn new(find_min: bool) -> Self {
        ExtremeWindow {
            find_min,
            vals: VecDeque::new(),
        }
    }

    /// The extreme value; None before the first sample.
    fn get(&self) -> Option<f64> {
        self.vals.front().map(|v| v.1)
    }

    fn new_sample(&mut self, val: f64, now: f64, max_time: f64) {
        let dominated = |b: f64| if self.find_min { b > val } else { b < val };
        while self.vals.back().is_some_and(|b| dominated(b.1)) {
            self.vals.pop_back();
        }
        self.vals.push_back((now, val));
        while self.vals.len() > 1 && self.vals[0].0 < now - max_time {
            self.vals.pop_front();
        }
    }
}

/// RTTWindow (rtt-window.cc): Copa's own srtt and the four windowed extremes.
#[derive(Debug, Clone)]
pub(crate) struct RttWindow {
    srtt: f64,
    latest: f64,
    min_rtt: ExtremeWindow,
    standing: ExtremeWindow,
    mode_min: ExtremeWindow,
    mode_max: ExtremeWindow,
}

impl RttWindow {
    fn new() -> Self {
        RttWindow {
            srtt: 0.0,
            latest: 0.0,
            min_rtt: ExtremeWindow::new(true),
            standing: ExtremeWindow::new(true),
            mode_min: ExtremeWindow::new(true),
            mode_max: ExtremeWindow::new(false),
        }
    }

    /// RTTWindow::new_rtt_sample (µs).
    fn new_sample(&mut self, rtt: f64, now: f64) {
        if self.srtt == 0.0 {
            self.srtt = rtt;
        }
        self.srtt = SRTT_ALPHA * rtt + (1.0 - SRTT_ALPHA) * self.srtt;
        self.latest = rtt;
        // max(10 s, 20·min_rtt); infinite before the first sample (20·DBL_MAX overflows).
        let max_time = match self.min_rtt.get() {
            Some(m) => MIN_RTT_WINDOW_US.max(MIN_RTT_WINDOW_RTTS * m),
            None => f64::INFINITY,
        };
        self.min_rtt.new_sample(rtt, now, max_time);
        let standing = max_time.min(self.srtt * STANDING_SRTTS);
        self.standing.new_sample(rtt, now, standing);
        let mode = max_time.min(self.srtt * MODE_SRTTS);
        self.mode_min.new_sample(rtt, now, mode);
        self.mode_max.new_sample(rtt, now, mode);
    }

    fn min_rtt(&self) -> f64 {
        self.min_rtt.get().unwrap_or(0.0)
    }

    fn standing(&self) -> f64 {
        self.standing.get().unwrap_or(0.0)
    }

    /// RTTWindow::is_copa: the queue nearly emptied within the last 4 srtt.
    fn is_copa(&self) -> bool {
        let (Some(min), Some(lo), Some(hi)) =
            (self.min_rtt.get(), self.mode_min.get(), self.mode_max.get())
        else {
            return true;
        };
        lo < min + NEARLY_EMPTY_FRACTION * (hi - min)
    }
}

/// ReduceOnLoss (estimators.cc): true once per 2 RTTs if more than 30 % of the events were
/// losses.
#[derive(Debug, Clone, Default)]
struct ReduceOnLoss {
    num_lost: u32,
    num_pkts: u32,
    prev_win_time: f64,
}

impl ReduceOnLoss {
    fn update(&mut self, loss: bool, now: f64, rtt: f64) -> bool {
        if loss {
            self.num_lost += 1;
        }
        self.num_pkts += 1;
        if now > self.prev_win_time + ROL_RTTS * rtt && self.num_pkts > ROL_MIN_PKTS {
            let rate = self.num_lost as f64 / self.num_pkts as f64;
            self.prev_win_time = now;
            self.num_lost = 0;
            self.num_pkts = 0;
            return rate > ROL_LOSS_RATE;
        }
        false
    }
}

/// Copa's target window in packets, `RTTstanding/(δ·d_q)`: infinite on an empty queue.
pub(crate) fn target_window(rtt_standing: f64, min_rtt: f64, delta: f64) -> f64 {
    let dq = rtt_standing - min_rtt;
    if dq <= 0.0 {
        f64::INFINITY
    } else {
        rtt_standing / (dq * delta)
    }
}

pub struct Copa {
    p: CopaParams,
    rtt: RttWindow,
    /// `_the_window`, packets.
    cwnd: f64,
    slow_start: bool,
    /// num_pkts_acked.
    acked: u64,
    delta: f64,
    competitive: bool,
    prev_delta_update: Option<f64>,
    prev_delta_update_loss: f64,
    /// Velocity bookkeeping (update_intersend_time): last RTT boundary, steps up minus down
    /// this RTT, the previous RTT's direction, the velocity, same-direction RTTs so far.
    last_update_time: f64,
    update_dir: i64,
    prev_update_dir: i64,
    velocity: f64,
    same_rtts: u32,
    reduce_on_loss: ReduceOnLoss,
}

impl Copa {
    pub fn new(p: CopaParams) -> Self {
        Copa {
            p,
            rtt: RttWindow::new(),
            cwnd: NUM_PROBE_PKTS as f64,
            slow_start: p.slow_start,
            acked: 0,
            delta: p.delta,
            competitive: false,
            prev_delta_update: None,
            prev_delta_update_loss: 0.0,
            last_update_time: 0.0,
            update_dir: 1,
            prev_update_dir: 1,
            velocity: 1.0,
            same_rtts: 0,
            reduce_on_loss: ReduceOnLoss::default(),
        }
    }

    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        Ok(Box::new(Copa::new(CopaParams::from_table(config.params)?)))
    }

    /// The target window now (packets).
    fn target(&self) -> f64 {
        target_window(self.rtt.standing(), self.rtt.min_rtt(), self.delta)
    }

    /// MarkovianCC::update_delta (auto mode; constant δ otherwise). `cur_rtt` is the ACK's RTT
    /// sample, 0 for the loss call (as genericCC's `update_delta(true)`).
    fn update_delta(&mut self, pkt_lost: bool, cur_rtt: f64, now: f64) {
        if !self.p.auto_mode {
            return;
        }
        self.competitive = !self.rtt.is_copa();
        let default = self.p.delta;
        if !self.competitive {
            if self.prev_delta_update.is_none() || self.prev_delta_update_loss + cur_rtt < now {
                self.delta = default;
                self.prev_delta_update = Some(now);
            }
            return;
        }
        if self.prev_delta_update.is_none() {
            self.delta = default;
        }
        if pkt_lost && self.prev_delta_update_loss + cur_rtt < now {
            self.delta *= 2.0;
            self.prev_delta_update_loss = now;
        } else if self.prev_delta_update.is_none_or(|t| t + cur_rtt < now) {
            self.delta = 1.0 / (1.0 / self.delta + 1.0);
            self.prev_delta_update = Some(now);
        }
        self.delta = self.delta.min(default);
    }

    /// MarkovianCC::update_intersend_time: slow start, or one velocity-scaled step (times
    /// `acked`) toward the target.
    fn update_window(&mut self, acked: u32, now: f64) {
        if self.acked < PROBE_ACKS {
            return;
        }
        let target = self.target();
        let n = acked.max(1) as f64;
        if self.slow_start {
            self.cwnd += n;
            if self.cwnd >= target {
                self.slow_start = false;
            }
        } else {
            if self.last_update_time + self.rtt.latest < now {
                self.rtt_boundary();
                self.last_update_time = now;
                self.update_dir = 0;
            }
            if self.velocity > self.cwnd * self.delta {
                self.velocity /= 2.0;
            }
            self.velocity = self.velocity.max(1.0);
            let step = n * self.velocity / (self.delta * self.cwnd);
            if self.cwnd < target {
                self.update_dir += acked as i64;
                self.cwnd += step;
            } else {
                self.update_dir -= acked as i64;
                self.cwnd -= step;
            }
        }
        self.cwnd = self.cwnd.max(MIN_CWND);
    }

    /// Once per RTT: double the velocity while the direction holds (after `velocity_rtts`
    /// RTTs), reset it on a change.
    fn rtt_boundary(&mut self) {
        if self.prev_update_dir * self.update_dir > 0 {
            self.same_rtts += 1;
            if self.same_rtts + 1 >= self.p.velocity_rtts {
                self.velocity = self.velocity.trunc() * 2.0;
            }
        } else {
            self.velocity = 1.0;
            self.same_rtts = 0;
            self.prev_update_dir = -self.prev_update_dir;
        }
    }

    /// One ACK (MarkovianCC::onACK).
    fn on_ack(&mut self, rtt_us: Option<f64>, acked: u32, losses: u32, now: f64) {
        if let Some(rtt) = rtt_us {
            self.rtt.new_sample(rtt, now);
            self.update_delta(false, rtt, now);
            self.update_window(acked, now);
        }
        let latest = self.rtt.latest;
        let mut reduce = false;
        if losses > 0 {
            self.update_delta(true, 0.0, now);
            for _ in 0..losses {
                reduce |= self.reduce_on_loss.update(true, now, latest);
            }
        }
        reduce |= self.reduce_on_loss.update(false, now, latest);
        if reduce {
            self.cwnd = (self.cwnd * ROL_CUT).max(MIN_CWND);
        }
        self.acked += acked as u64;
    }

    /// Pacing rate in bytes/s: 2·cwnd/RTTstanding packets/s; 0 (unpaced) while probing.
    fn pacing_rate(&self, mss: u32) -> u64 {
        let standing = self.rtt.standing();
        if self.acked <= PROBE_ACKS || standing <= 0.0 {
            return 0;
        }
        (PACING_GAIN * self.cwnd * mss as f64 * 1e6 / standing) as u64
    }
}

impl CongestionControl for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    /// MarkovianCC::init, from the live window.
    fn init(&mut self, tp: &mut TcpState) {
        *self = Copa::new(self.p);
        self.cwnd = (tp.snd_cwnd as f64).max(MIN_CWND);
        tp.pacing_rate = 0;
        tp.pacing_needed = true;
    }

    /// Copa has no ssthresh: a loss leaves it as it is (the window is Copa's own).
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tp.snd_ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let rtt = (rs.rtt_ns >= 0).then_some(rs.rtt_ns as f64 / 1e3);
        self.on_ack(rtt, rs.acked_sacked, rs.losses, tp.now as f64 / 1e3);
        tp.snd_cwnd = (self.cwnd.ceil() as u32).min(tp.snd_cwnd_clamp);
        tp.pacing_rate = self.pacing_rate(tp.mss_cache);
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        COPA_TELEMETRY
    }

    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = self.cwnd;
        out[1] = self.target().min(1e9);
        out[2] = self.delta;
        out[3] = self.velocity;
        out[4] = self.rtt.standing() / 1e3;
        out[5] = self.rtt.min_rtt() / 1e3;
    }

    fn mode(&self, _tp: &TcpState) -> &'static str {
        if self.slow_start {
            "slow_start"
        } else if self.competitive {
            "competitive"
        } else {
            "default"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: f64 = 1e3; // µs

    /// A Copa past its probe ACKs and slow start, with RTTmin = 100 ms (sampled at t = 0) and
    /// RTTstanding = `standing_ms` (one sample at t = 1 s), cwnd `cwnd`, δ fixed at 0.5 (no
    /// mode switching: the queue has not emptied for 4 srtt).
    fn copa_at(cwnd: f64, standing_ms: f64) -> Copa {
        let mut c = Copa::new(CopaParams {
            auto_mode: false,
            ..Default::default()
        });
        c.rtt.new_sample(100.0 * MS, 0.0);
        c.rtt.new_sample(standing_ms * MS, 1000.0 * MS);
        c.acked = PROBE_ACKS + 1;
        c.slow_start = false;
        c.cwnd = cwnd;
        c.last_update_time = 1000.0 * MS;
        c
    }

    #[test]
    fn target_rate_is_one_over_delta_times_queueing_delay() {
        // RTTmin 100 ms, RTTstanding 110 ms: d_q = 10 ms; δ = 0.5:
        // target = 110/(0.5·10) = 22 packets, λ = 22/0.110 s = 200 pkt/s = 1/(0.5·0.010 s).
        let c = copa_at(10.0, 110.0);
        assert_eq!(c.rtt.min_rtt(), 100.0 * MS);
        assert_eq!(
            c.rtt.standing(),
            110.0 * MS,
            "the 100 ms sample is older than srtt/2"
        );
        assert!((c.target() - 22.0).abs() < 1e-9, "{}", c.target());
        let rate = c.target() / (c.rtt.standing() / 1e6);
        assert!((rate - 1.0 / (0.5 * 0.010)).abs() < 1e-6, "{rate}");
        // An empty queue: no target (slow start goes on).
        assert!(target_window(100.0, 100.0, 0.5).is_infinite());
        // RTTstanding 150 ms: d_q 50 ms, target 150/25 = 6.
        assert!((target_window(150.0 * MS, 100.0 * MS, 0.5) - 6.0).abs() < 1e-9);
    }

    #[test]
    fn standing_rtt_is_the_min_over_half_an_srtt() {
        let mut w = RttWindow::new();
        w.new_sample(100.0 * MS, 0.0);
        // srtt = 100 ms: the standing window is 50 ms.
        w.new_sample(120.0 * MS, 40.0 * MS);
        assert_eq!(
            w.standing(),
            100.0 * MS,
            "40 ms later the 100 ms sample is in the window"
        );
        w.new_sample(130.0 * MS, 60.0 * MS);
        // srtt = 1/16·130 + 15/16·(1/16·120 + 15/16·100) = 103.05 ms; 0 < 60 − 51.5: dropped.
        assert_eq!(w.standing(), 120.0 * MS);
        assert_eq!(w.min_rtt(), 100.0 * MS);
        let srtt = 130.0 / 16.0 + 15.0 / 16.0 * (120.0 / 16.0 + 15.0 / 16.0 * 100.0);
        assert!((w.srtt / MS - srtt).abs() < 1e-9);
    }

    #[test]
    fn window_steps_by_v_over_delta_cwnd_toward_the_target() {
        // Target 22 (d_q = 10 ms): cwnd 10 grows by 1/(0.5·10) = 0.2 per packet acked.
        let mut c = copa_at(10.0, 110.0);
        c.on_ack(Some(110.0 * MS), 1, 0, 1010.0 * MS);
        assert!((c.cwnd - 10.2).abs() < 1e-12, "{}", c.cwnd);
        // An ACK for 2 packets: twice the step, 2/(0.5·10.2).
        c.on_ack(Some(110.0 * MS), 2, 0, 1020.0 * MS);
        assert!((c.cwnd - (10.2 + 2.0 / 5.1)).abs() < 1e-12, "{}", c.cwnd);
        // Above the target (cwnd 30 > 22): down by 1/(0.5·30) = 1/15.
        let mut c = copa_at(30.0, 110.0);
        c.on_ack(Some(110.0 * MS), 1, 0, 1010.0 * MS);
        assert!((c.cwnd - (30.0 - 1.0 / 15.0)).abs() < 1e-12, "{}", c.cwnd);
    }

    #[test]
    fn velocity_doubles_once_the_direction_held_three_rtts_and_resets_on_a_change() {
        // The paper's rule (velocity_rtts = 3). Target 101/(0.5·1) = 202 packets, cwnd 100:
        // every step is up. One ACK every 30 ms and RTT samples of 101 ms: an RTT boundary
        // every 4th ACK (more than 101 ms apart).
        let mut c = copa_at(100.0, 101.0);
        c.p.velocity_rtts = 3;
        let mut t = 1000.0 * MS;
        let mut seen = Vec::new();
        for _ in 0..24 {
            t += 30.0 * MS;
            c.on_ack(Some(101.0 * MS), 1, 0, t);
            if c.last_update_time == t {
                seen.push(c.velocity);
            }
        }
        // Boundary 1 closes the RTT before the first ACK (up, as the initial direction): the
        // direction has held 2 RTTs, v stays 1; from the 3rd RTT on it doubles each RTT.
        assert_eq!(seen, vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0]);
        // Capped: v may not exceed δ·cwnd (0.5·~107): 64 > 53 is halved back to 32.
        for _ in 0..4 {
            t += 30.0 * MS;
            c.on_ack(Some(101.0 * MS), 1, 0, t);
        }
        assert_eq!(c.velocity, 32.0);
        // Now the queue grows (standing 150 ms: target 6): steps go down; the next boundary sees
        // the change and resets v to 1.
        c.rtt = RttWindow::new();
        c.rtt.new_sample(100.0 * MS, t - 1000.0 * MS);
        for _ in 0..5 {
            t += 30.0 * MS;
            c.on_ack(Some(150.0 * MS), 1, 0, t);
        }
        assert!(c.update_dir < 0);
        t += 200.0 * MS;
        c.on_ack(Some(150.0 * MS), 1, 0, t);
        assert_eq!(c.velocity, 1.0);
        assert_eq!(c.prev_update_dir, -1);
    }

    #[test]
    fn genericcc_velocity_rule_doubles_after_two_rtts() {
        let mut c = copa_at(100.0, 101.0);
        c.p.velocity_rtts = 2;
        c.update_dir = 3;
        c.rtt_boundary();
        assert_eq!(c.velocity, 2.0, "this RTT and the last went up");
        c.update_dir = 0; // a tie counts as a change and flips the remembered direction
        c.rtt_boundary();
        assert_eq!((c.velocity, c.prev_update_dir), (1.0, -1));
    }

    #[test]
    fn slow_start_adds_a_packet_per_packet_after_the_probe_acks_until_the_target() {
        let mut c = Copa::new(CopaParams::default());
        let mut t = 0.0;
        for _ in 0..PROBE_ACKS {
            t += MS;
            c.on_ack(Some(100.0 * MS), 1, 0, t);
        }
        assert_eq!(c.cwnd, 10.0, "the probe ACKs leave the window alone");
        assert_eq!(c.pacing_rate(1448), 0, "and do not pace");
        c.on_ack(Some(100.0 * MS), 2, 0, t + MS);
        assert_eq!(c.cwnd, 12.0);
        assert_eq!(c.pacing_rate(1448), (2.0 * 12.0 * 1448.0 / 0.1) as u64);
        assert!(c.slow_start);
        // A queue of 10 ms: target 22 is below 12 + 11: slow start ends at 23.
        c.on_ack(Some(110.0 * MS), 11, 0, t + 100.0 * MS);
        assert_eq!(c.cwnd, 23.0);
        assert!(!c.slow_start);
    }

    #[test]
    fn paces_at_twice_cwnd_over_the_standing_rtt() {
        let c = copa_at(20.0, 110.0);
        // 2·20·1448 B / 0.110 s = 526 545 B/s.
        assert_eq!(c.pacing_rate(1448), 526_545);
    }

    #[test]
    fn a_queue_that_never_empties_switches_to_competitive_aimd_on_one_over_delta() {
        // RTTmin 100 ms at t = 0, then 150 ms samples every 151 ms (one δ update per RTT).
        let mut c = Copa::new(CopaParams {
            slow_start: false,
            ..Default::default()
        });
        c.on_ack(Some(100.0 * MS), 1, 0, 0.0);
        let mut t = 0.0;
        let mut inv = vec![];
        let mut since = None;
        while inv.len() < 4 {
            t += 151.0 * MS;
            c.on_ack(Some(150.0 * MS), 1, 0, t);
            if c.competitive {
                since.get_or_insert(t);
                inv.push((1.0 / c.delta).round());
            } else {
                assert_eq!(c.delta, 0.5);
            }
        }
        // Competitive once the 100 ms sample left the 4-srtt window: at the third 150 ms
        // sample, t = 453 ms > 4·srtt = 4·(150 − 50·(15/16)³) = 435 ms; the window's min (150) is
        // not below 100 + 0.1·(150 − 100) = 105.
        assert_eq!(since, Some(453.0 * MS));
        assert!(!c.rtt.is_copa());
        assert_eq!(c.mode(&TcpState::default()), "competitive");
        // Additive increase of 1/δ by 1 per RTT: 2 → 3, 4, 5, 6.
        assert_eq!(inv, vec![3.0, 4.0, 5.0, 6.0]);
        // A loss halves 1/δ (δ doubles): 6 → 3 (the ACK's own RTT step came first: 7 → 3.5).
        t += MS;
        c.on_ack(Some(150.0 * MS), 1, 1, t);
        assert!((1.0 / c.delta - 3.0).abs() < 1e-9, "{}", 1.0 / c.delta);
        // Never below the default δ: two more losses give 1/δ = 2, not 0.75.
        c.on_ack(Some(150.0 * MS), 1, 1, t + MS);
        c.on_ack(Some(150.0 * MS), 1, 1, t + 2.0 * MS);
        assert_eq!(c.delta, 0.5);
        // The queue empties (a 101 ms sample, with 150 ms still in the 4-srtt window: below
        // 105): default mode.
        t += 200.0 * MS;
        c.on_ack(Some(101.0 * MS), 1, 0, t);
        assert!(!c.competitive);
        assert_eq!(c.mode(&TcpState::default()), "default");
    }

    #[test]
    fn default_mode_restores_the_default_delta_one_rtt_after_a_loss() {
        let mut c = copa_at(20.0, 110.0);
        c.p.auto_mode = true;
        c.rtt.new_sample(100.0 * MS, 1050.0 * MS); // the queue emptied: default mode
        c.delta = 0.25;
        c.prev_delta_update = Some(900.0 * MS);
        c.prev_delta_update_loss = 1000.0 * MS;
        c.on_ack(Some(110.0 * MS), 1, 0, 1100.0 * MS);
        assert!(!c.competitive);
        assert_eq!(
            c.delta, 0.25,
            "within an RTT (110 ms) of the last loss update"
        );
        c.on_ack(Some(110.0 * MS), 1, 0, 1111.0 * MS);
        assert_eq!(c.delta, 0.5);
    }

    #[test]
    fn more_than_30_percent_loss_over_two_rtts_cuts_the_window_to_0_7() {
        let mut c = copa_at(40.0, 100.0);
        c.p.auto_mode = false;
        let t = 1000.0 * MS;
        // 10 ACKs each reporting 1 loss: 10 lost of 20 events (not > 20 yet).
        for i in 0..10 {
            c.on_ack(None, 0, 1, t + i as f64 * MS);
        }
        assert_eq!(c.cwnd, 40.0);
        // The 21st event, 2 RTTs (200 ms) after the window start (0): 11/21 > 0.3.
        c.on_ack(None, 0, 1, t + 300.0 * MS);
        assert!((c.cwnd - 28.0).abs() < 1e-12, "{}", c.cwnd);
    }

    #[test]
    fn cong_control_sets_the_rounded_up_window_and_pacing() {
        let mut c = copa_at(10.0, 110.0);
        let mut tp = TcpState {
            now: 1_010_000_000,
            ..Default::default()
        };
        let rs = RateSample {
            rtt_ns: 110_000_000,
            acked_sacked: 1,
            ..Default::default()
        };
        c.cong_control(&mut tp, &rs);
        assert_eq!(tp.snd_cwnd, 11, "ceil(10.2)");
        assert_eq!(tp.pacing_rate, (2.0 * 10.2 * 1448.0 / 0.110) as u64);
        assert_eq!(
            c.ssthresh(&tp),
            tp.snd_ssthresh,
            "loss leaves ssthresh alone"
        );
    }

    #[test]
    fn parameters_are_typed_and_unknown_keys_rejected() {
        let t: toml::Table = "delta = 0.1\nmode = \"default\"\nvelocity_rtts = 2"
            .parse()
            .unwrap();
        let p = CopaParams::from_table(&t).unwrap();
        assert_eq!((p.delta, p.auto_mode, p.velocity_rtts), (0.1, false, 2));
        for bad in [
            "gamma = 1",
            "delta = 0",
            "mode = \"tcp\"",
            "velocity_rtts = 1",
        ] {
            let t: toml::Table = bad.parse().unwrap();
            let key = bad.split(' ').next().unwrap();
            assert_eq!(CopaParams::from_table(&t).unwrap_err().key, key);
        }
    }
}
