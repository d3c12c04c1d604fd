//! C2TCP, Cellular Controlled Delay TCP (Abbasloo, Li, Xu, Chao: "Cellular Controlled Delay TCP
//! (C2TCP)", IFIP Networking 2018; "C2TCP: A Flexible Cellular TCP to Meet Stringent Delay
//! Requirements", IEEE JSAC 2019), ported from the authors' Linux 4.13.1 patch
//! (github.com/Soheil-ab/C2TCP, linux-patch/linux-4-13-1-orca-c2tcp-0521.patch, v2.2:
//! `c2tcp_pkts_acked` in net/ipv4/tcp_cubic.c), over rove's CUBIC by composition.
//!
//! # The algorithm
//!
//! C2TCP is a CoDel-like delay controller riding on a loss-based TCP (CUBIC in the reference,
//! where the C2TCP code is called at the end of CUBIC's `pkts_acked`). On every ACK with an RTT
//! sample:
//!
//! ```text
//!   minRTT   = min of all RTT samples (µs)
//!   setpoint = interval = ⌊minRTT_ms⌋·alpha        (ms; alpha = 2: twice the min RTT)
//!   rtt ≤ setpoint (good):   first_above = 0, n = 1; snd_cwnd_cnt += ⌊setpoint_ms/rtt_ms⌋
//!                            (an extra additive increase on top of CUBIC's)
//!   rtt > setpoint, first:   first_above = next = now + interval, n = 1
//!   rtt > setpoint, now > next (every sample of an interval was above the setpoint):
//!                            next = now + interval/√n, n += 1,
//!                            ssthresh = CUBIC's ssthresh (β·cwnd), cwnd = 1
//! ```
//!
//! So, as CoDel drops a packet, C2TCP resets the window to one packet when the delay has stayed
//! above the setpoint for a whole interval, then again after interval/√2, interval/√3, ... while
//! it stays there; one good sample ends the episode. Otherwise CUBIC runs unchanged.
//!
//! The arithmetic is the patch's: CoDel's time unit (ns >> 10, `codel_time_t`, u32), RTTs and
//! minRTT truncated to whole milliseconds before the comparison, `next_time` kept in µs and read
//! back through whole milliseconds, `1/√n` by CoDel's Newton step on a u16 (`Newton_step`,
//! `control_law` with `reciprocal_scale`).
//!
//! # Constants and `cc_params`
//!
//! | key | default | source |
//! |---|---|---|
//! | `alpha` | 2.0 | `TCP_C2TCP_ALPHA_INIT` 200 / `TCP_C2TCP_X_SCALE` 100 (the code's comment says 3; the value is 2) |
//! | `target` | none (`alpha`·minRTT) | a fixed setpoint in ms, as the IFIP 2018 patch's `tcp_c2tcp_target` sysctl (default there 100) |
//! | `interval` | none (= the setpoint) | a fixed interval in ms, as the IFIP patch's `tcp_c2tcp_interval` (default there 100) |
//! | CUBIC's keys | CUBIC's | passed to the base (`beta`, `hystart`, `hz`, ...) |
//!
//! Fixed: `REC_INV_SQRT_SHIFT` 16 and `CODEL_SHIFT` 10 (include/net/codel.h).
//!
//! # Where this differs from the reference
//!
//! - **The base** is rove's CUBIC (Linux 6.x tcp_cubic.c, with its HyStart in µs), not 4.13.1's;
//!   C2TCP runs after CUBIC's `pkts_acked` exactly where the patch calls it: only for ACKs with
//!   an RTT sample and not within one second (HZ jiffies) of the start of a CUBIC epoch
//!   ("discard delay samples right after fast recovery", bictcp_acked). CUBIC keeps its epoch
//!   start private, so this module mirrors it: an epoch starts at the first `cong_avoid` that
//!   reaches CUBIC's window update (cwnd-limited, past ssthresh) with no epoch, ends at every
//!   `ssthresh` (C2TCP's cuts included) and RTO, and shifts over idle time (TX_START).
//! - **Setpoint.** The JSAC/v2.2 code derives both setpoint and interval from the min RTT
//!   (`alpha`); the IFIP 2018 code (github.com/Soheil-ab/C2TCP-IFIP) used fixed sysctls
//!   (`target`, `interval`, 100 ms each) and an extra increase of `x_alpha + target/rtt` packets
//!   counted to cwnd with a single `cwnd++`; `target`/`interval` give its setpoint and interval,
//!   the increase rule stays v2.2's (`⌊setpoint/rtt⌋`, several packets at once when due).
//! - The patch's per-connection enable (`TCP_C2TCP_ENABLE` / the sysctl) is the choice of `cc =
//!   "c2tcp"`; its throughput/RTT averages for `INET_DIAG_C2TCPINFO` are not kept (they only
//!   feed user-space reports).
//! - **`first_above_time` and `next_time` are 64-bit** where the patch's are u32 µs: the patch's
//!   overflow when the codel clock (ns >> 10, u32) passes 2^32·1000/1024, in the last 103 s of
//!   every 73.3 min of the kernel's uptime, and C2TCP then makes no cut for up to 103 s (see
//!   `time_to_us`). Below that the two are the same numbers.
//! - The patch writes `first_above_time`, `next_time`, `cnt_rtt` and `rec_inv_sqrt` into
//!   `tcp_sock`; here they are the module's own state. The clock is the simulation's (from 0),
//!   the kernel's `ktime_get_ns` from boot: `first_above_time == 0` stays the "not above"
//!   marker.

use super::cubic::{Cubic, CubicParams};
use super::{params, CcConfig, CongestionControl, ParamError};
use crate::state::{AckSample, CaEvent, CaState, TcpState};

/// include/net/codel.h: CODEL_SHIFT, codel_time_t is ns >> 10.
const CODEL_SHIFT: u32 = 10;
/// include/net/codel.h: REC_INV_SQRT_SHIFT = 32 − 16 (rec_inv_sqrt is a u16).
const REC_INV_SQRT_SHIFT: u32 = 16;
/// tcp_cubic.c (patch): TCP_C2TCP_X_SCALE, alpha's unit is 1/100.
const X_SCALE: u32 = 100;
/// tcp_cubic.c (patch): TCP_C2TCP_ALPHA_INIT = 200, i.e. alpha 2.0.
const ALPHA_INIT: u32 = 200;

const OWN_KEYS: &[&str] = &["alpha", "target", "interval"];

const C2TCP_TELEMETRY: &[&str] = &[
    "c2tcp_min_rtt_ms",
    "c2tcp_setpoint_ms",
    "c2tcp_cuts",
    "c2tcp_above",
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct C2tcpParams {
    /// tp->c2tcp_alpha, in 1/100 (200).
    pub alpha: u32,
    /// A fixed setpoint (ms), or alpha·minRTT.
    pub target_ms: Option<u32>,
    /// A fixed interval (ms), or the setpoint.
    pub interval_ms: Option<u32>,
    pub cubic: CubicParams,
}

fn positive_ms(t: &toml::Table, key: &str) -> Result<Option<u32>, ParamError> {
    match params::number(t, key)? {
        None => Ok(None),
        Some(x) if x.fract() == 0.0 && (1.0..=60_000.0).contains(&x) => Ok(Some(x as u32)),
        Some(x) => Err(ParamError {
            key: key.into(),
            message: format!("{x} is out of range; accepted: whole milliseconds in 1..=60000"),
        }),
    }
}

impl C2tcpParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        let alpha = match params::number(t, "alpha")? {
            None => ALPHA_INIT,
            Some(x) if (0.01..=100.0).contains(&x) => (x * X_SCALE as f64).round() as u32,
            Some(x) => {
                return Err(ParamError {
                    key: "alpha".into(),
                    message: format!("{x} is out of range; accepted: a number in 0.01..=100"),
                })
            }
        };
        let target_ms = positive_ms(t, "target")?;
        let interval_ms = positive_ms(t, "interval")?;
        let mut base = t.clone();
        for k in OWN_KEYS {
            base.remove(*k);
        }
        let cubic = CubicParams::from_table(&base).map_err(|mut e| {
            if e.message.starts_with("unknown parameter") {
                e.message = format!("{}, {}", e.message, OWN_KEYS.join(", "));
            }
            e
        })?;
        Ok(C2tcpParams {
            alpha,
            target_ms,
            interval_ms,
            cubic,
        })
    }
}

/// MS2TIME: milliseconds to codel_time_t (u32).
fn ms2time(ms: u64) -> u32 {
    ((ms * 1_000_000) >> CODEL_SHIFT) as u32
}

/// codel_time_to_us, kept in 64 bits. The patch stores it in u32 fields (`first_above_time`,
/// `next_time`), where a codel time at or above 2^32·1000/1024 (the last 103 s of each 2^42 ns,
/// 73.3 min, of the clock) overflows; read back through whole milliseconds it then lies ~103 s
/// ahead, and no cut happens for that long. A kernel clock is there for 103 s of every 73.3 min
/// of uptime (measured: the eBPF port on this machine ran as plain CUBIC in such a window).
fn time_to_us(t: u32) -> u64 {
    ((t as u64) << CODEL_SHIFT) / 1000
}

/// codel_time_after_eq(a, b).
fn after_eq(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) as i32 >= 0
}

/// The patch's Newton_step: rec_inv_sqrt ≈ 1/√cnt (u16, 0xFFFF ≈ 1).
pub(crate) fn newton_step(rec_inv_sqrt: u16, cnt: u32) -> u16 {
    let invsqrt = (rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let mut val = (3u64 << 32).wrapping_sub(cnt as u64 * invsqrt2 as u64);
    val >>= 2;
    val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
    (val >> REC_INV_SQRT_SHIFT) as u16
}

/// control_law: t + interval·rec_inv_sqrt (reciprocal_scale).
pub(crate) fn control_law(t: u32, interval: u32, rec_inv_sqrt: u16) -> u32 {
    let scale = (rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    t.wrapping_add(((interval as u64 * scale as u64) >> 32) as u32)
}

pub struct C2tcp {
    p: C2tcpParams,
    cubic: Cubic,
    /// Mirror of CUBIC's epoch_start (jiffies, 0: none), for bictcp_acked's 1 s discard.
    epoch_start: u32,
    /// tp->c2tcp_min_urtt (µs, 0: none).
    min_urtt: u32,
    /// tp->first_above_time (µs, 0: not above; u64 where the patch's is u32: `time_to_us`).
    first_above_time: u64,
    /// tp->next_time (µs; u64 as `first_above_time`).
    next_time: u64,
    /// tp->cnt_rtt: n, the cut count of this episode plus one.
    cnt_rtt: u32,
    /// tp->rec_inv_sqrt: 1/√cnt_rtt in 1/65536.
    rec_inv_sqrt: u16,
    /// Cuts so far (telemetry).
    cuts: u64,
}

impl C2tcp {
    pub fn new(p: C2tcpParams) -> Self {
        C2tcp {
            p,
            cubic: Cubic::new(p.cubic),
            epoch_start: 0,
            min_urtt: 0,
            first_above_time: 0,
            next_time: 0,
            cnt_rtt: 1,
            rec_inv_sqrt: 0,
            cuts: 0,
        }
    }

    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        Ok(Box::new(C2tcp::new(C2tcpParams::from_table(
            config.params,
        )?)))
    }

    fn jiffies(&self, now: u64) -> u32 {
        crate::kernel::jiffies_at(now, self.p.cubic.hz)
    }

    /// The setpoint and the interval, ms: `alpha`·⌊minRTT_ms⌋/100 unless fixed.
    fn setpoint_interval_ms(&self) -> (u32, u32) {
        let auto = (self.min_urtt / 1000).wrapping_mul(self.p.alpha) / X_SCALE;
        let setpoint = self.p.target_ms.unwrap_or(auto);
        (setpoint, self.p.interval_ms.unwrap_or(auto))
    }

    /// c2tcp_pkts_acked (rtt_us ≥ 0).
    fn c2tcp_pkts_acked(&mut self, tp: &mut TcpState, rtt_us: u32) {
        if self.min_urtt == 0 || self.min_urtt > rtt_us {
            self.min_urtt = rtt_us;
        }
        let (setpoint_ms, interval_ms) = self.setpoint_interval_ms();
        let setpoint = ms2time(setpoint_ms as u64);
        let interval = ms2time(interval_ms as u64);
        let now = (tp.now >> CODEL_SHIFT) as u32;
        let rtt = ms2time((rtt_us / 1000) as u64);
        let next = ms2time(self.next_time / 1000);
        if after_eq(setpoint, rtt) {
            self.first_above_time = 0;
            self.cnt_rtt = 1;
            let inc = setpoint_ms / (rtt_us / 1000).max(1);
            tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.wrapping_add(inc);
            if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                let delta = tp.snd_cwnd_cnt / tp.snd_cwnd;
                tp.snd_cwnd_cnt -= delta * tp.snd_cwnd;
                tp.snd_cwnd = (tp.snd_cwnd + delta).min(tp.snd_cwnd_clamp);
            }
        } else if self.first_above_time == 0 {
            self.first_above_time = time_to_us(now.wrapping_add(interval));
            self.next_time = self.first_above_time;
            self.cnt_rtt = 1;
            self.rec_inv_sqrt = (!0u32 >> REC_INV_SQRT_SHIFT) as u16;
            self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, self.cnt_rtt);
        } else if now.wrapping_sub(next) as i32 > 0 {
            let next = control_law(now, interval, self.rec_inv_sqrt);
            self.next_time = time_to_us(next);
            self.cnt_rtt += 1;
            self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, self.cnt_rtt);
            tp.prior_ssthresh = tp.current_ssthresh();
            tp.snd_ssthresh = self.ssthresh(tp);
            tp.snd_cwnd = 1;
            tp.snd_cwnd_cnt = 0;
            self.cuts += 1;
        }
    }
}

impl CongestionControl for C2tcp {
    fn name(&self) -> &'static str {
        "c2tcp"
    }

    /// bictcp_init + init_c2tcp.
    fn init(&mut self, tp: &mut TcpState) {
        *self = C2tcp::new(self.p);
        self.cubic.init(tp);
    }

    /// CUBIC's (bictcp_recalc_ssthresh), which ends its epoch.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.epoch_start = 0;
        self.cubic.ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        // bictcp_update starts an epoch when cong_avoid gets past slow start with acks left.
        let updates = tp.is_cwnd_limited()
            && (!tp.in_slow_start() || tp.snd_cwnd.saturating_add(acked) > tp.snd_ssthresh);
        if updates && self.epoch_start == 0 {
            self.epoch_start = self.jiffies(tp.now);
        }
        self.cubic.cong_avoid(tp, acked);
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.epoch_start = 0;
        }
        self.cubic.set_state(tp, new_state);
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if event == CaEvent::TxStart && self.epoch_start != 0 {
            let now = self.jiffies(tp.now);
            let delta = now.wrapping_sub(self.jiffies(tp.lsndtime)) as i32;
            if delta > 0 {
                self.epoch_start = self.epoch_start.wrapping_add(delta as u32);
                if (now.wrapping_sub(self.epoch_start) as i32) < 0 {
                    self.epoch_start = now;
                }
            }
        }
        self.cubic.cwnd_event(tp, event);
    }

    /// bictcp_acked, then c2tcp_pkts_acked where the patch calls it.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        self.cubic.pkts_acked(tp, sample);
        if sample.rtt_us < 0 {
            return;
        }
        let now_j = self.jiffies(tp.now);
        if self.epoch_start != 0
            && (now_j.wrapping_sub(self.epoch_start) as i32) < self.p.cubic.hz as i32
        {
            return;
        }
        self.c2tcp_pkts_acked(tp, sample.rtt_us.min(i32::MAX as i64) as u32);
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        C2TCP_TELEMETRY
    }

    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = self.min_urtt as f64 / 1e3;
        out[1] = self.setpoint_interval_ms().0 as f64;
        out[2] = self.cuts as f64;
        out[3] = (self.first_above_time != 0) as u32 as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn c2tcp() -> C2tcp {
        C2tcp::new(C2tcpParams::from_table(&toml::Table::new()).unwrap())
    }

    fn sample(rtt_ms: u64) -> AckSample {
        AckSample {
            pkts_acked: 1,
            rtt_us: (rtt_ms * 1000) as i64,
            in_flight: 0,
        }
    }

    #[test]
    fn codel_units_and_the_inverse_square_root() {
        // MS2TIME(100) = 100·10⁶ >> 10 = 97656 (1.024 µs units); back to µs: 97656·1024/1000.
        assert_eq!(ms2time(100), 97_656);
        assert_eq!(time_to_us(97_656), 99_999);
        // CoDel's one Newton step per count, from 0xFFFF (≈ 1.0): n = 1 keeps 65535; n = 2 gives
        // 0.5 (not 1/√2: a single step from 1.0), then 0.5625, 0.4878, 0.4415 (1/√5 = 0.4472).
        let mut r = newton_step(0xFFFF, 1);
        assert_eq!(r, 65_535);
        let mut seq = vec![];
        for n in 2..=5 {
            r = newton_step(r, n);
            seq.push(r);
        }
        assert_eq!(seq, vec![32_769, 36_864, 31_968, 28_935]);
        // control_law: t + interval·rec/2¹⁶.
        assert_eq!(control_law(1000, 97_656, 32_768), 1000 + 48_828);
        assert_eq!(control_law(u32::MAX, 2, 32_768), 0, "wraps as codel_time_t");
    }

    #[test]
    fn setpoint_and_interval_are_alpha_times_the_min_rtt_in_whole_ms() {
        let mut c = c2tcp();
        c.min_urtt = 50_900; // 50.9 ms → 50 ms
        assert_eq!(c.setpoint_interval_ms(), (100, 100));
        let t: toml::Table = "alpha = 3.0".parse().unwrap();
        let mut c = C2tcp::new(C2tcpParams::from_table(&t).unwrap());
        c.min_urtt = 50_900;
        assert_eq!(c.setpoint_interval_ms(), (150, 150));
        let t: toml::Table = "target = 80\ninterval = 120".parse().unwrap();
        let mut c = C2tcp::new(C2tcpParams::from_table(&t).unwrap());
        c.min_urtt = 50_900;
        assert_eq!(c.setpoint_interval_ms(), (80, 120));
    }

    /// A C2TCP at cwnd 100 (congestion avoidance) with min RTT 50 ms (setpoint = interval =
    /// 100 ms), fed one 120 ms sample every 1 ms from t = 10 s for `ms` ms; the cut times (ms
    /// after the first sample above the setpoint).
    fn cuts_over(ms: u64) -> (C2tcp, TcpState, Vec<u64>) {
        let mut c = c2tcp();
        let mut tp = TcpState {
            snd_cwnd: 100,
            snd_ssthresh: 50,
            now: 9 * 1000 * MS,
            ..Default::default()
        };
        c.init(&mut tp);
        c.pkts_acked(&mut tp, &sample(50));
        let t0 = 10 * 1000 * MS;
        let mut cuts = vec![];
        for i in 0..ms {
            tp.now = t0 + i * MS;
            let before = c.cuts;
            c.pkts_acked(&mut tp, &sample(120));
            if c.cuts > before {
                assert_eq!(tp.snd_cwnd, 1);
                cuts.push(i);
                tp.snd_cwnd = 100; // as if it had regrown, to see the next ssthresh
            }
        }
        (c, tp, cuts)
    }

    #[test]
    fn delay_above_the_setpoint_for_an_interval_cuts_cwnd_to_one_then_at_interval_over_sqrt_n() {
        let (c, tp, cuts) = cuts_over(400);
        // First cut one interval (100 ms) after the first sample above; the next after
        // interval·65535/65536, then interval·0.5, ·0.5625, ·0.4878 (the Newton sequence),
        // each within a millisecond (ACKs every 1 ms, next_time read back in whole ms).
        assert_eq!(cuts, vec![100, 200, 251, 308, 357]);
        let gaps: Vec<u64> = cuts.windows(2).map(|w| w[1] - w[0]).collect();
        for (g, want) in gaps.iter().zip([100.0, 50.0, 56.25, 48.78]) {
            assert!((*g as f64 - want).abs() <= 1.5, "{gaps:?}");
        }
        assert_eq!(c.cnt_rtt, 6);
        // Each cut sets ssthresh as a loss would: CUBIC's β·cwnd = 100·717/1024 = 70; and
        // prior_ssthresh = tcp_current_ssthresh (for undo).
        assert_eq!(tp.snd_ssthresh, 100 * 717 / 1024);
        assert_eq!(tp.snd_cwnd_cnt, 0);
    }

    #[test]
    fn cuts_come_on_time_where_the_codel_clock_passes_the_u32_microsecond_range() {
        // The codel clock at 4,194,400,000 (≥ 2^32·1000/1024 = 4,194,304,000): first_above_time
        // = now + 100 ms in µs is 4,295,066,... > u32::MAX. In the patch's u32 it wrapped and
        // read back ~103 s ahead (no cut); here the first cut comes one interval later.
        let mut c = c2tcp();
        let base = 4_194_400_000u64 << CODEL_SHIFT;
        let mut tp = TcpState {
            snd_cwnd: 100,
            snd_ssthresh: 50,
            now: base - 1000 * MS,
            ..Default::default()
        };
        c.init(&mut tp);
        c.pkts_acked(&mut tp, &sample(50));
        let mut first_cut = None;
        for i in 0..400 {
            tp.now = base + i * MS;
            let before = c.cuts;
            c.pkts_acked(&mut tp, &sample(120));
            if c.cuts > before && first_cut.is_none() {
                first_cut = Some(i);
            }
        }
        assert!(c.first_above_time > u32::MAX as u64, "{}", c.first_above_time);
        assert_eq!(first_cut, Some(100));
    }

    #[test]
    fn one_sample_at_or_below_the_setpoint_ends_the_episode_and_adds_setpoint_over_rtt() {
        let (mut c, mut tp, _) = cuts_over(150);
        assert_ne!(c.first_above_time, 0);
        tp.snd_cwnd = 10;
        tp.snd_cwnd_cnt = 9;
        // 45 ms: the new min RTT (setpoint 90 ms), good; snd_cwnd_cnt += ⌊90/45⌋ = 2 → 11 ≥ 10:
        // cwnd 11, cnt 1.
        c.pkts_acked(&mut tp, &sample(45));
        assert_eq!((c.first_above_time, c.cnt_rtt), (0, 1));
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (11, 1));
        // A sample of exactly the setpoint is good too (codel_time_after_eq).
        c.pkts_acked(&mut tp, &sample(90));
        assert_eq!(tp.snd_cwnd_cnt, 2);
        assert_eq!(c.first_above_time, 0);
        tp.now += MS;
        c.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 500,
                in_flight: 0,
            },
        );
        assert_eq!(c.min_urtt, 500);
        // The min RTT is now 0.5 ms: setpoint ⌊0⌋·2 = 0 ms, and the sample (0 ms, truncated)
        // is good: 0/max(0, 1) = 0 added.
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (11, 2));
    }

    #[test]
    fn samples_within_a_second_of_a_cubic_epoch_start_are_ignored() {
        let mut c = c2tcp();
        let mut tp = TcpState {
            snd_cwnd: 100,
            snd_ssthresh: 50,
            is_cwnd_limited: true,
            now: 9 * 1000 * MS,
            ..Default::default()
        };
        c.init(&mut tp);
        c.pkts_acked(&mut tp, &sample(50));
        c.cong_avoid(&mut tp, 1); // CUBIC's epoch starts now
        assert_ne!(c.epoch_start, 0);
        for i in 1..=900 {
            tp.now = 9 * 1000 * MS + i * MS;
            c.pkts_acked(&mut tp, &sample(120));
        }
        assert_eq!(c.first_above_time, 0, "bictcp_acked returned before C2TCP");
        tp.now = 10 * 1000 * MS + 10 * MS;
        c.pkts_acked(&mut tp, &sample(120));
        assert_ne!(c.first_above_time, 0);
        // A loss (ssthresh) ends the epoch.
        c.ssthresh(&tp);
        assert_eq!(c.epoch_start, 0);
    }

    #[test]
    fn parameters_are_typed_cubics_pass_through_and_unknown_keys_rejected() {
        let t: toml::Table = "alpha = 1.5\nbeta = 819\nhystart = false".parse().unwrap();
        let p = C2tcpParams::from_table(&t).unwrap();
        assert_eq!((p.alpha, p.cubic.beta, p.cubic.hystart), (150, 819, false));
        let t: toml::Table = "setpoint = 1".parse().unwrap();
        let e = C2tcpParams::from_table(&t).unwrap_err();
        assert_eq!(e.key, "setpoint");
        assert!(
            e.message.ends_with("alpha, target, interval"),
            "{}",
            e.message
        );
        for bad in ["alpha = 0", "target = 0", "interval = 1.5", "beta = 2000"] {
            let t: toml::Table = bad.parse().unwrap();
            let key = bad.split(' ').next().unwrap();
            assert_eq!(C2tcpParams::from_table(&t).unwrap_err().key, key, "{bad}");
        }
    }
}
