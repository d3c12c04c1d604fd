//! CAIA Delay-Gradient (CDG; Hayes & Armitage, IFIP Networking 2011), as Linux 6.18
//! `net/ipv4/tcp_cdg.c`.
//!
//! # The algorithm
//!
//! CDG reads congestion from how the RTT *changes* from one RTT to the next, not from its level,
//! so it needs no estimate of the propagation delay. Each RTT it records the minimum and maximum
//! RTT sample (`rtt.min`, `rtt.max`, µs); at the RTT's end the gradients
//! `gmin = rtt.min − rtt_prev.min` and `gmax = rtt.max − rtt_prev.max` enter a moving window of
//! `window` (8) RTTs whose sums stand for the paper's smoothed gradients (without the division
//! by the window; a window not yet full is extrapolated: `sum·window/filled`). The gradient used
//! is `gmin` if positive, else `gmax`.
//!
//! - **Delay-gradient backoff.** With a positive gradient `g` (µs per window), back off with
//!   probability `1 − exp(−g·backoff_factor·10⁻⁶)` (`backoff_factor` = 42 is the paper's
//!   1000/(G·window) with G = 3): the steeper the queue grows, the likelier the backoff. The
//!   exponential is the kernel's fixed point `nexp_u32` and the draw a uniform u32
//!   (`get_random_u32`). A backoff records cwnd in the shadow window and enters CWR with
//!   ssthresh = `max(2, cwnd·backoff_beta/1024)` (0.7071); PRR then takes cwnd there.
//! - **Ineffective backoff.** A flow competing with loss-based flows backs off in vain: the
//!   queue is theirs. After `use_ineff` (5) backoffs with no sign of effect (a gradient sum of
//!   −32 µs or lower resets the count), CDG stops backing off on delay until one works.
//! - **Shadow window.** On a loss, a delay-based flow would have a smaller cwnd than its loss-based
//!   competitors and halve from there. CDG keeps `shadow_wnd`: the cwnd it would have without
//!   delay backoffs (grown with cwnd, raised to cwnd at each backoff, capped at cwnd when not
//!   cwnd-limited), and a loss halves the shadow instead: ssthresh = `max(2, shadow/2, cwnd/2)`
//!   with shadow = `min(shadow/2, cwnd)`.
//! - **Loss tolerance** (`use_tolerance`, off by default): classify the queue as full or not from
//!   the gradients' signs and ignore losses while it is not full.
//! - Growth is Reno's. Slow start ends by CDG's own HyStart:
//!   an ACK train (ACKs less than 3 ms apart, µs clock) lasting longer than
//!   `max(delay_min/2, 125 µs)`, or this RTT's minimum above `max(delay_min·9/8, 125 µs)` after 8
//!   samples; it runs at any cwnd, and the ACK train is reset when not cwnd-limited.
//! - Delayed ACKs: while nothing is sacked, an ACK for one packet after ACKs for several may be
//!   a delayed ACK; it only lowers an existing minimum (Hayes's filter, `delack` counts up to 5).
//!
//! # Hooks
//!
//! | tcp_congestion_ops | here |
//! |---|---|
//! | `init` (tcp_cdg_init) | `init`: rtt_seq = snd_nxt, shadow = cwnd |
//! | `cong_avoid` (tcp_cdg_cong_avoid) | `cong_avoid`: HyStart, per-RTT gradient and backoff, Reno growth |
//! | `pkts_acked` (tcp_cdg_acked) | `pkts_acked`: the RTT's min and max, delayed-ACK filter |
//! | `ssthresh` (tcp_cdg_ssthresh) | `ssthresh`: backoff β, tolerance, shadow window |
//! | `undo_cwnd` (tcp_cdg_undo_cwnd) | `undo_cwnd`: max(cwnd, cwnd at the last ssthresh) |
//! | `cwnd_event` (tcp_cdg_cwnd_event) | `cwnd_event`: reset on restart; new RTT at CWR end |
//! | `release` (tcp_cdg_release) | dropped with the algorithm |
//!
//! # Where this differs from tcp_cdg.c
//!
//! - `get_random_u32()` draws from a per-flow ChaCha8 stream seeded from the flow's `CcConfig`
//!   seed (label "cdg"), so a run is reproducible; the kernel's is the system CSPRNG.
//! - `tcp_enter_cwr` is requested through `TcpState::enter_cwr`, which the sender acts on right
//!   after `cong_avoid` returns (the kernel calls it inside `cong_avoid`; nothing happens in
//!   between). The sender's tcp_enter_cwr is Linux's: prior_ssthresh = 0, and below CWR:
//!   undo_marker cleared, tcp_init_cwnd_reduction (which calls `ssthresh`), state CWR.
//! - The gradient window is always allocated (the kernel falls back to window = 1, extrapolating
//!   ×window, when `kcalloc` fails; that path is unreachable here).
//! - `ack` of `cong_avoid` is `tp.snd_una` after the ACK; `after(ack, rtt_seq)` is a plain `>` on
//!   u64 segment numbers. The ACK-train clock is `tp.now` in µs truncated to u32, as
//!   `tp->tcp_mstamp`.
//! - `window` is a per-flow parameter (the kernel's is load-time only, 0444).
//! - The kernel's LINUX_MIB_TCPHYSTART* counters are not kept.

use super::{params, reject_unknown, CcConfig, CongestionControl, ParamError};
use crate::state::{AckSample, CaEvent, TcpState};
use rove_sim::rng::Stream;

/// HYSTART_ACK_TRAIN, tcp_cdg.c.
const HYSTART_ACK_TRAIN: u32 = 1;
/// HYSTART_DELAY, tcp_cdg.c.
const HYSTART_DELAY: u32 = 2;
/// tcp_cdg_hystart_update: ACKs closer than 3 ms (µs) continue a train.
const ACK_TRAIN_GAP_US: u32 = 3000;
/// tcp_cdg_hystart_update: floor of both HyStart thresholds, 125 µs.
const HYSTART_MIN_THRESH_US: u32 = 125;
/// tcp_cdg_hystart_update: samples per RTT before the delay test.
const HYSTART_MIN_SAMPLES: u16 = 8;
/// tcp_cdg_grad: a gradient sum at or below −32 µs shows a backoff took effect.
const EFFECTUAL_GRADIENT_US: i32 = -32;
/// tcp_cdg_grad (use_tolerance): gradients are rounded to multiples of 64 µs.
const TOLERANCE_ROUND_US: i32 = 64;
/// tcp_cdg_acked: at most 5 delayed ACKs are remembered.
const DELACK_MAX: u8 = 5;
/// tcp_cdg_ssthresh: backoff_beta is in units of 1/1024.
const BETA_SCALE: u32 = 1024;

/// Tunables: the module parameters of tcp_cdg.c.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CdgParams {
    /// tcp_cdg.c: window = 8 (RTTs of gradients, a power of two ≤ 256).
    pub window: u32,
    /// tcp_cdg.c: backoff_beta = 0.7071·1024 = 724 (√½).
    pub backoff_beta: u32,
    /// tcp_cdg.c: backoff_factor = 42 (= 1000/(G·window), G = 3).
    pub backoff_factor: u32,
    /// tcp_cdg.c: hystart_detect = 3 (1: ACK train, 2: delay threshold, 3: both, 0: off).
    pub hystart_detect: u32,
    /// tcp_cdg.c: use_ineff = 5 (backoffs without effect before ignoring delay; 0: off).
    pub use_ineff: u32,
    /// tcp_cdg.c: use_shadow = true.
    pub use_shadow: bool,
    /// tcp_cdg.c: use_tolerance = false.
    pub use_tolerance: bool,
}

impl Default for CdgParams {
    fn default() -> Self {
        CdgParams {
            window: 8,
            backoff_beta: 724, // (unsigned int)(0.7071 * 1024)
            backoff_factor: 42,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            use_ineff: 5,
            use_shadow: true,
            use_tolerance: false,
        }
    }
}

const PARAM_KEYS: &[&str] = &[
    "window",
    "backoff_beta",
    "backoff_factor",
    "hystart_detect",
    "use_ineff",
    "use_shadow",
    "use_tolerance",
];

impl CdgParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = CdgParams::default();
        let window = params::integer(t, "window", d.window, 1, 256, "RTTs, a power of two")?;
        if !window.is_power_of_two() {
            return Err(ParamError {
                key: "window".into(),
                message: format!("{window} is not a power of two; accepted: 1, 2, 4, ..., 256"),
            });
        }
        Ok(CdgParams {
            window,
            backoff_beta: params::integer(
                t,
                "backoff_beta",
                d.backoff_beta,
                0,
                BETA_SCALE,
                "a multiple of 1/1024: 724 is 0.7071",
            )?,
            backoff_factor: params::integer(
                t,
                "backoff_factor",
                d.backoff_factor,
                0,
                1_000_000,
                "1000/(G·window)",
            )?,
            hystart_detect: params::integer(
                t,
                "hystart_detect",
                d.hystart_detect,
                0,
                3,
                "0: off, 1: ACK train, 2: delay, 3: both",
            )?,
            use_ineff: params::integer(t, "use_ineff", d.use_ineff, 0, 65535, "backoffs; 0 = off")?,
            use_shadow: params::boolean(t, "use_shadow", d.use_shadow)?,
            use_tolerance: params::boolean(t, "use_tolerance", d.use_tolerance)?,
        })
    }
}

/// nexp_u32, tcp_cdg.c: exp(−ux·10⁻⁶)·U32_MAX in fixed point, for `ux` in micro-units.
///
/// The low 8 bits scale linearly (1 − x); each further set bit k of `ux >> 8` multiplies by
/// e^(−0.000256·2^k) from a 16-bit table, so e^−(a+b+...) = e^−a·e^−b·...; 0 from ux ≥ 2^24.
pub fn nexp_u32(ux: u32) -> u32 {
    // exp(−x)·65536 − 1 for x = 0, 0.000256·2^(k−1) (k = 1..16), tcp_cdg.c.
    const V: [u16; 17] = [
        65535, 65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422, 61378, 57484, 50423, 38795,
        22965, 8047, 987, 14,
    ];
    let mut msb = ux >> 8;
    if msb > u16::MAX as u32 {
        return 0; // the true value is ≤ 222/U32_MAX
    }
    let mut res = u32::MAX - (ux & 0xff) * (u32::MAX / 1_000_000);
    let mut i = 1;
    while msb != 0 {
        let y = if msb & 1 != 0 {
            V[i] as u64
        } else {
            V[0] as u64
        } + 1;
        res = ((res as u64 * y) >> 16) as u32;
        i += 1;
        msb >>= 1;
    }
    res
}

/// enum cdg_state, tcp_cdg.c.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum CdgState {
    #[default]
    Unknown,
    NonFull,
    Full,
    Backoff,
}

/// struct minmax of tcp_cdg.c: a pair of s32 (µs); "zero" (v64 == 0) when both are 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct MinMax {
    min: i32,
    max: i32,
}

impl MinMax {
    fn is_zero(self) -> bool {
        self.min == 0 && self.max == 0
    }
}

/// min_not_zero, include/linux/minmax.h.
fn min_not_zero(a: i32, b: i32) -> i32 {
    if a == 0 {
        b
    } else if b == 0 {
        a
    } else {
        a.min(b)
    }
}

/// before(), include/net/tcp.h, on u32 µs stamps.
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// struct cdg, tcp_cdg.c.
#[derive(Debug, Clone, Default)]
struct State {
    rtt: MinMax,
    rtt_prev: MinMax,
    /// The window of gradients (empty when window = 1, as the kernel leaves it unallocated).
    gradients: Vec<MinMax>,
    gsum: MinMax,
    gfilled: bool,
    tail: u8,
    state: CdgState,
    delack: u8,
    /// The RTT ends when an ACK passes this sequence.
    rtt_seq: u64,
    undo_cwnd: u32,
    shadow_wnd: u32,
    backoff_cnt: u16,
    sample_cnt: u16,
    delay_min: i32,
    last_ack: u32,
    round_start: u32,
}

pub struct Cdg {
    p: CdgParams,
    ca: State,
    rng: Stream,
}

impl Cdg {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        Ok(Box::new(Cdg::new(
            CdgParams::from_table(config.params)?,
            config.seed,
        )))
    }

    pub fn new(p: CdgParams, seed: u64) -> Self {
        let mut c = Cdg {
            p,
            ca: State::default(),
            rng: Stream::new(seed, "cdg"),
        };
        c.alloc_gradients();
        c
    }

    fn alloc_gradients(&mut self) {
        self.ca.gradients = if self.p.window > 1 {
            vec![MinMax::default(); self.p.window as usize]
        } else {
            Vec::new()
        };
    }

    /// get_random_u32.
    fn random_u32(&mut self) -> u32 {
        (self.rng.next_u64() >> 32) as u32
    }

    /// tcp_cdg_hystart_update.
    fn hystart_update(&mut self, tp: &mut TcpState) {
        let ca = &mut self.ca;
        ca.delay_min = min_not_zero(ca.delay_min, ca.rtt.min);
        if ca.delay_min == 0 {
            return;
        }
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now_us = (tp.now / 1000) as u32;
            if ca.last_ack == 0 || !tp.is_cwnd_limited() {
                ca.last_ack = now_us;
                ca.round_start = now_us;
            } else if before(now_us, ca.last_ack.wrapping_add(ACK_TRAIN_GAP_US)) {
                let base_owd = (ca.delay_min as u32 / 2).max(HYSTART_MIN_THRESH_US);
                ca.last_ack = now_us;
                if before(ca.round_start.wrapping_add(base_owd), now_us) {
                    tp.snd_ssthresh = tp.snd_cwnd;
                    return;
                }
            }
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 {
            if ca.sample_cnt < HYSTART_MIN_SAMPLES {
                ca.sample_cnt += 1;
            } else {
                let d = ca.delay_min as u32;
                let thresh = d.wrapping_add(d / 8).max(HYSTART_MIN_THRESH_US) as i32;
                if ca.rtt.min > thresh {
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }
    }

    /// tcp_cdg_grad: push this RTT's gradients into the window, return the (extrapolated) sum.
    fn grad(&mut self) -> i32 {
        let window = self.p.window as i32;
        let ca = &mut self.ca;
        let mut gmin = ca.rtt.min.wrapping_sub(ca.rtt_prev.min);
        let mut gmax = ca.rtt.max.wrapping_sub(ca.rtt_prev.max);
        if !ca.gradients.is_empty() {
            let t = ca.tail as usize;
            ca.gsum.min = ca
                .gsum
                .min
                .wrapping_add(gmin.wrapping_sub(ca.gradients[t].min));
            ca.gsum.max = ca
                .gsum
                .max
                .wrapping_add(gmax.wrapping_sub(ca.gradients[t].max));
            ca.gradients[t] = MinMax {
                min: gmin,
                max: gmax,
            };
            ca.tail = ((ca.tail as u32 + 1) & (self.p.window - 1)) as u8;
            gmin = ca.gsum.min;
            gmax = ca.gsum.max;
        }
        let mut grad = if gmin > 0 { gmin } else { gmax };
        // Extrapolate a window not yet full.
        if !ca.gfilled {
            if ca.tail == 0 {
                ca.gfilled = true;
            } else {
                grad = grad.wrapping_mul(window) / ca.tail as i32;
            }
        }
        if gmin <= EFFECTUAL_GRADIENT_US || gmax <= EFFECTUAL_GRADIENT_US {
            ca.backoff_cnt = 0;
        }
        if self.p.use_tolerance {
            let gmin = div_round_closest(gmin, TOLERANCE_ROUND_US);
            let gmax = div_round_closest(gmax, TOLERANCE_ROUND_US);
            if gmin > 0 && gmax <= 0 {
                ca.state = CdgState::Full;
            } else if (gmin > 0 && gmax > 0) || gmax < 0 {
                ca.state = CdgState::NonFull;
            }
        }
        grad
    }

    /// tcp_cdg_backoff: back off with probability 1 − exp(−grad·backoff_factor·10⁻⁶), unless
    /// the last `use_ineff` backoffs were ineffective.
    fn backoff(&mut self, tp: &mut TcpState, grad: u32) -> bool {
        let draw = self.random_u32();
        if draw <= nexp_u32(grad.wrapping_mul(self.p.backoff_factor)) {
            return false;
        }
        if self.p.use_ineff != 0 {
            self.ca.backoff_cnt = self.ca.backoff_cnt.wrapping_add(1);
            if self.ca.backoff_cnt as u32 > self.p.use_ineff {
                return false;
            }
        }
        self.ca.shadow_wnd = self.ca.shadow_wnd.max(tp.snd_cwnd);
        self.ca.state = CdgState::Backoff;
        tp.enter_cwr = true;
        true
    }
}

/// DIV_ROUND_CLOSEST for a signed dividend and a positive divisor, include/linux/math.h.
fn div_round_closest(x: i32, d: i32) -> i32 {
    if x > 0 {
        (x + d / 2) / d
    } else {
        (x - d / 2) / d
    }
}

impl CongestionControl for Cdg {
    fn name(&self) -> &'static str {
        "cdg"
    }

    /// tcp_cdg_init (the private area starts zeroed, as tcp_assign_congestion_control does).
    fn init(&mut self, tp: &mut TcpState) {
        self.ca = State::default();
        self.alloc_gradients();
        self.ca.rtt_seq = tp.snd_nxt;
        self.ca.shadow_wnd = tp.snd_cwnd;
    }

    /// tcp_cdg_cong_avoid (not called in CWR or Recovery).
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if tp.in_slow_start() && self.p.hystart_detect != 0 {
            self.hystart_update(tp);
        }
        if tp.snd_una > self.ca.rtt_seq && !self.ca.rtt.is_zero() {
            let mut grad = 0;
            if !self.ca.rtt_prev.is_zero() {
                grad = self.grad();
            }
            self.ca.rtt_seq = tp.snd_nxt;
            self.ca.rtt_prev = self.ca.rtt;
            self.ca.rtt = MinMax::default();
            self.ca.last_ack = 0;
            self.ca.sample_cnt = 0;
            if grad > 0 && self.backoff(tp, grad as u32) {
                return;
            }
        }
        if !tp.is_cwnd_limited() {
            self.ca.shadow_wnd = self.ca.shadow_wnd.min(tp.snd_cwnd);
            return;
        }
        let prior = tp.snd_cwnd;
        super::tcp_reno_cong_avoid(tp, acked);
        let incr = tp.snd_cwnd.wrapping_sub(prior);
        self.ca.shadow_wnd = self
            .ca
            .shadow_wnd
            .max(self.ca.shadow_wnd.wrapping_add(incr));
    }

    /// tcp_cdg_acked: this RTT's min and max sample, with the delayed-ACK filter.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if sample.rtt_us <= 0 {
            return;
        }
        let rtt_us = sample.rtt_us.min(i32::MAX as i64) as i32;
        let ca = &mut self.ca;
        if tp.sacked_out == 0 {
            if sample.pkts_acked == 1 && ca.delack > 0 {
                // A delayed ACK only lowers an existing non-zero minimum.
                ca.rtt.min = ca.rtt.min.min(rtt_us);
                ca.delack -= 1;
                return;
            } else if sample.pkts_acked > 1 && ca.delack < DELACK_MAX {
                ca.delack += 1;
            }
        }
        ca.rtt.min = min_not_zero(ca.rtt.min, rtt_us);
        ca.rtt.max = ca.rtt.max.max(rtt_us);
    }

    /// tcp_cdg_ssthresh.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cwnd = tp.snd_cwnd;
        self.ca.undo_cwnd = cwnd;
        if self.ca.state == CdgState::Backoff {
            let beta = self.p.backoff_beta.min(BETA_SCALE);
            return (((cwnd as u64 * beta as u64) >> 10) as u32).max(2);
        }
        if self.ca.state == CdgState::NonFull && self.p.use_tolerance {
            return cwnd;
        }
        self.ca.shadow_wnd = (self.ca.shadow_wnd >> 1).min(cwnd);
        if self.p.use_shadow {
            return self.ca.shadow_wnd.max(cwnd >> 1).max(2);
        }
        (cwnd >> 1).max(2)
    }

    /// tcp_cdg_undo_cwnd.
    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        tp.snd_cwnd.max(self.ca.undo_cwnd)
    }

    /// tcp_cdg_cwnd_event.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        match event {
            CaEvent::CwndRestart => {
                self.ca = State::default();
                self.alloc_gradients();
                self.ca.rtt_seq = tp.snd_nxt;
                self.ca.shadow_wnd = tp.snd_cwnd;
            }
            CaEvent::CompleteCwr => {
                self.ca.state = CdgState::Unknown;
                self.ca.rtt_seq = tp.snd_nxt;
                self.ca.rtt_prev = self.ca.rtt;
                self.ca.rtt = MinMax::default();
            }
            _ => {}
        }
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        &["cdg_shadow_wnd", "cdg_backoff_cnt"]
    }

    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = self.ca.shadow_wnd as f64;
        out[1] = self.ca.backoff_cnt as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdg() -> Cdg {
        Cdg::new(CdgParams::default(), 1)
    }

    #[test]
    fn nexp_matches_exp_within_its_fixed_point_error() {
        for ux in [
            0u32, 1, 255, 256, 1000, 4200, 42_000, 100_000, 420_000, 1_000_000, 5_000_000,
        ] {
            let exact = (-(ux as f64) * 1e-6).exp() * u32::MAX as f64;
            let got = nexp_u32(ux) as f64;
            assert!(
                (got - exact).abs() <= 1e-4 * u32::MAX as f64,
                "nexp_u32({ux}) = {got}, exp·U32_MAX = {exact}"
            );
        }
        // Exactly: 0 → U32_MAX (linear part 0, no table factor).
        assert_eq!(nexp_u32(0), u32::MAX);
        // 1 µ: U32_MAX − 1·(U32_MAX/10⁶) = 4294967295 − 4294 = 4294963001.
        assert_eq!(nexp_u32(1), u32::MAX - u32::MAX / 1_000_000);
        // 256 µ: msb = 1: U32_MAX·(65518 + 1) >> 16 = 4294967295·65519/65536.
        assert_eq!(nexp_u32(256), ((u32::MAX as u64 * 65519) >> 16) as u32);
        // ux ≥ 2^24: cut off to 0.
        assert_eq!(nexp_u32(1 << 24), 0);
        assert_ne!(nexp_u32((1 << 24) - 1), 0);
    }

    #[test]
    fn backoff_probability_at_chosen_gradients() {
        // P(backoff) = 1 − nexp(grad·42)/U32_MAX ≈ 1 − exp(−grad·42·10⁻⁶).
        // grad = 1000 µs: 1 − e^−0.042 = 0.0411; 10 ms: 1 − e^−0.42 = 0.343; 50 ms: 0.877.
        for (grad, p) in [(1000u32, 0.0411), (10_000, 0.343), (50_000, 0.877)] {
            let fixed = 1.0 - nexp_u32(grad * 42) as f64 / u32::MAX as f64;
            assert!((fixed - (1.0 - (-(grad as f64) * 42e-6).exp())).abs() < 1e-4);
            assert!((fixed - p).abs() < 1e-3, "grad {grad}: {fixed}");
            // And the seeded draws back off at that rate (use_ineff off so every draw counts).
            let mut c = Cdg::new(
                CdgParams {
                    use_ineff: 0,
                    ..Default::default()
                },
                7,
            );
            let n = 20_000;
            let mut hits = 0;
            for _ in 0..n {
                let mut tp = TcpState {
                    snd_cwnd: 100,
                    ..Default::default()
                };
                if c.backoff(&mut tp, grad) {
                    hits += 1;
                    assert!(tp.enter_cwr);
                }
            }
            let rate = hits as f64 / n as f64;
            assert!(
                (rate - p).abs() < 0.015,
                "grad {grad}: backoff rate {rate}, want {p}"
            );
        }
    }

    #[test]
    #[allow(clippy::identity_op)]
    fn gradients_are_summed_over_the_window_and_extrapolated_until_it_fills() {
        let mut c = cdg();
        // rtt.min rises 100 µs per RTT, rtt.max 200 µs.
        c.ca.rtt_prev = MinMax {
            min: 10_000,
            max: 12_000,
        };
        c.ca.rtt = MinMax {
            min: 10_100,
            max: 12_200,
        };
        // One gradient in a window of 8: gmin = 100 > 0, extrapolated 100·8/1 = 800.
        assert_eq!(c.grad(), 100 * 8 / 1);
        c.ca.rtt_prev = c.ca.rtt;
        c.ca.rtt = MinMax {
            min: 10_200,
            max: 12_400,
        };
        // Sum 200 over 2: 200·8/2 = 800.
        assert_eq!(c.grad(), 200 * 8 / 2);
        for _ in 0..6 {
            c.ca.rtt_prev = c.ca.rtt;
            c.ca.rtt.min += 100;
            c.ca.rtt.max += 200;
            c.grad();
        }
        assert!(c.ca.gfilled);
        // Full window: sum of the last 8 gmin = 800; a falling min (−50) replaces a +100.
        c.ca.rtt_prev = c.ca.rtt;
        c.ca.rtt.min -= 50;
        assert_eq!(c.grad(), 7 * 100 - 50);
        // gmin sum ≤ 0 → gmax: make min fall a lot; gmax = 7·200 + 0 − 200 ... the window's sum.
        c.ca.rtt_prev = c.ca.rtt;
        c.ca.rtt.min -= 1000;
        let g = c.grad();
        assert_eq!(g, c.ca.gsum.max);
        assert_eq!(c.ca.gsum.min, 6 * 100 - 50 - 1000);
    }

    #[test]
    fn a_backoff_enters_cwr_with_beta_and_raises_the_shadow_window() {
        let mut c = cdg();
        let mut tp = TcpState {
            snd_cwnd: 100,
            ..Default::default()
        };
        c.init(&mut tp);
        c.ca.shadow_wnd = 80;
        // grad so large that nexp is 0: P(backoff) = 1 − 0 (a draw of exactly 0 aside).
        assert!(c.backoff(&mut tp, 1_000_000));
        assert_eq!(
            (c.ca.shadow_wnd, c.ca.state, tp.enter_cwr),
            (100, CdgState::Backoff, true)
        );
        // The sender's tcp_enter_cwr calls ssthresh: max(2, 100·724 >> 10) = 70.
        assert_eq!(c.ssthresh(&tp), (100 * 724) >> 10);
        assert_eq!(c.ssthresh(&tp), 70);
        assert_eq!(c.ca.undo_cwnd, 100);
        // CWR ends: back to Unknown, a new RTT starts.
        c.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        assert_eq!(c.ca.state, CdgState::Unknown);
    }

    #[test]
    fn a_loss_halves_the_shadow_window_not_cwnd() {
        let mut c = cdg();
        let tp = TcpState {
            snd_cwnd: 60,
            ..Default::default()
        };
        // The shadow remembers 200 (the window before delay backoffs): shadow = min(200/2, 60)
        // = 60; ssthresh = max(2, 60, 60/2) = 60: a loss does not cut below where delay
        // backoffs already took cwnd.
        c.ca.shadow_wnd = 200;
        assert_eq!(c.ssthresh(&tp), 60);
        assert_eq!(c.ca.shadow_wnd, 60);
        // Shadow 100: min(50, 60) = 50 → ssthresh max(2, 50, 30) = 50.
        c.ca.shadow_wnd = 100;
        assert_eq!(c.ssthresh(&tp), 50);
        // Without the shadow: Reno's max(2, 60/2) = 30.
        let mut c = Cdg::new(
            CdgParams {
                use_shadow: false,
                ..Default::default()
            },
            1,
        );
        c.ca.shadow_wnd = 100;
        assert_eq!(c.ssthresh(&tp), 30);
    }

    #[test]
    fn shadow_window_grows_with_cwnd_and_is_capped_when_not_cwnd_limited() {
        let mut c = cdg();
        let mut tp = TcpState {
            snd_cwnd: 20,
            snd_ssthresh: 10,
            is_cwnd_limited: true,
            ..Default::default()
        };
        c.init(&mut tp);
        c.ca.shadow_wnd = 50;
        for _ in 0..20 {
            c.cong_avoid(&mut tp, 1);
        }
        // Reno +1 after 20 acked: shadow 50 + 1.
        assert_eq!((tp.snd_cwnd, c.ca.shadow_wnd), (21, 51));
        tp.is_cwnd_limited = false;
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.ca.shadow_wnd, 21);
    }

    #[test]
    fn ineffective_backoffs_stop_after_use_ineff_until_a_negative_gradient() {
        let mut c = cdg();
        let mut tp = TcpState {
            snd_cwnd: 100,
            ..Default::default()
        };
        // Five certain backoffs count up to use_ineff = 5; the sixth is refused.
        for i in 1..=5 {
            assert!(c.backoff(&mut tp, 1_000_000), "backoff {i}");
            assert_eq!(c.ca.backoff_cnt, i);
        }
        tp.enter_cwr = false;
        assert!(!c.backoff(&mut tp, 1_000_000));
        assert!(!tp.enter_cwr);
        assert_eq!(c.ca.backoff_cnt, 6);
        // A gradient sum of −32 µs shows the queue drained: the count resets.
        c.ca.rtt_prev = MinMax {
            min: 10_000,
            max: 12_000,
        };
        c.ca.rtt = MinMax {
            min: 9_968,
            max: 12_000,
        };
        c.grad();
        assert_eq!(c.ca.backoff_cnt, 0);
        assert!(c.backoff(&mut tp, 1_000_000));
        // −31 µs is not enough.
        let mut c = cdg();
        c.ca.backoff_cnt = 6;
        c.ca.rtt_prev = MinMax {
            min: 10_000,
            max: 12_000,
        };
        c.ca.rtt = MinMax {
            min: 9_969,
            max: 11_969,
        };
        c.grad();
        assert_eq!(c.ca.backoff_cnt, 6);
    }

    #[test]
    fn delayed_acks_only_lower_the_minimum() {
        let mut c = cdg();
        let mut tp = TcpState::default();
        let s = |n, us| AckSample {
            pkts_acked: n,
            rtt_us: us,
            in_flight: 0,
        };
        c.pkts_acked(&mut tp, &s(2, 10_000)); // delack 1
        c.pkts_acked(&mut tp, &s(1, 30_000)); // delayed: max unchanged, delack 0
        assert_eq!(
            (c.ca.rtt, c.ca.delack),
            (
                MinMax {
                    min: 10_000,
                    max: 10_000
                },
                0
            )
        );
        c.pkts_acked(&mut tp, &s(1, 30_000)); // not delayed now
        assert_eq!(c.ca.rtt.max, 30_000);
    }

    #[test]
    fn hystart_delay_exits_slow_start_above_nine_eighths_of_delay_min() {
        let mut c = Cdg::new(
            CdgParams {
                hystart_detect: HYSTART_DELAY,
                ..Default::default()
            },
            1,
        );
        let mut tp = TcpState {
            snd_cwnd: 20,
            is_cwnd_limited: true,
            ..Default::default()
        };
        c.init(&mut tp);
        c.ca.delay_min = 40_000;
        // Threshold max(40000 + 5000, 125) = 45000 µs, after 8 samples.
        c.ca.rtt.min = 45_001;
        for _ in 0..8 {
            c.hystart_update(&mut tp);
        }
        assert_eq!(tp.snd_ssthresh, crate::state::INFINITE_SSTHRESH);
        c.ca.rtt.min = 45_000;
        c.hystart_update(&mut tp);
        assert_eq!(tp.snd_ssthresh, crate::state::INFINITE_SSTHRESH);
        c.ca.rtt.min = 45_001;
        c.hystart_update(&mut tp);
        assert_eq!(tp.snd_ssthresh, 20);
    }

    #[test]
    fn hystart_ack_train_exits_when_it_outlasts_half_the_delay_min() {
        let mut c = Cdg::new(
            CdgParams {
                hystart_detect: HYSTART_ACK_TRAIN,
                ..Default::default()
            },
            1,
        );
        let mut tp = TcpState {
            now: 1_000_000_000,
            snd_cwnd: 20,
            is_cwnd_limited: true,
            ..Default::default()
        };
        c.init(&mut tp);
        c.ca.rtt.min = 40_000; // delay_min = 40 ms: base_owd = 20 ms
        c.hystart_update(&mut tp); // starts the train
                                   // ACKs 2 ms apart (< 3 ms): after 20 ms the train is not yet longer; after 22 ms it is.
        for _ in 0..10 {
            tp.now += 2_000_000;
            c.hystart_update(&mut tp);
        }
        assert_eq!(tp.snd_ssthresh, crate::state::INFINITE_SSTHRESH);
        tp.now += 2_000_000;
        c.hystart_update(&mut tp);
        assert_eq!(tp.snd_ssthresh, 20);
    }

    #[test]
    fn parameters_are_read_and_validated() {
        let t: toml::Table = "window = 16\nuse_shadow = false".parse().unwrap();
        let p = CdgParams::from_table(&t).unwrap();
        assert_eq!((p.window, p.use_shadow, p.backoff_beta), (16, false, 724));
        for bad in [
            "window = 12",
            "window = 512",
            "backoff_beta = 1025",
            "g = 3",
        ] {
            let t: toml::Table = bad.parse().unwrap();
            let key = bad.split(' ').next().unwrap();
            assert_eq!(CdgParams::from_table(&t).unwrap_err().key, key, "{bad}");
        }
    }
}
