//! The receiver-side CoDel decision of Subflow Population Control (seed 003 §4.4, Algorithm 2
//! lines 2–3 and 12–18): pure arithmetic, no simulator state.
//!
//! The receiver cannot see the bottleneck's queue, only RTT samples. It reads a standing queue as
//! `RTT − RTT_min ≥ σ_RTT`: the sample exceeds the smallest one seen by at least the RTT's mean
//! deviation (the dissertation's replacement for CoDel's fixed 5 ms target, which relaxes itself
//! when the path is noisy). While the condition holds, an action (an intentional 3-dup-ACK, or
//! switching a subflow off) is due whenever the clock passes `t_dup`; each action counts and
//! moves `t_dup` on by CoDel's inverse-square-root law. The first sample below the target resets
//! the interval to 100 ms and the count to 0.
//!
//! * [`RttStats`]: RTT_min, SRTT and σ_RTT of the samples. σ_RTT is RFC 6298's RTTVAR (§2.2–2.3:
//!   RTTVAR ← ¾·RTTVAR + ¼·|SRTT − R|, then SRTT ← ⅞·SRTT + ⅛·R; the first sample gives
//!   SRTT = R, RTTVAR = R/2), in integer nanoseconds (divisions truncate).
//! * [`Schedule`]: Δ, cnt and t_dup. [GAP] Algorithm 2 line 13 prints `Δ ← Δ/√cnt`, which
//!   compounds (100, 70.7, 40.8, 20.4, 9.1 ms, ...), while the text calls the law "the same as
//!   original CoDel", `interval/√cnt` (100, 70.7, 57.7, 50 ms, ...; RFC 8289 §5.3's
//!   control law). [`ControlLaw::Standard`] is the default, [`ControlLaw::Compounding`] the
//!   printed line.
//!
//! [GAP] choices, each a parameter of `receiver = "spc"` (module `spc`):
//! * the order at a sample: the statistics take the sample first, then the condition is tested
//!   against them (Algorithm 2 names σ_RTT "the mean deviation of the RTT samples", this one
//!   included), so the first sample (R − RTT_min = 0) is always below the target;
//! * the initial `t_dup = 0`, `cnt = 0`, `Δ = interval` (the seed summary's suggestion): the
//!   first sample above the target acts at once (Algorithm 2 has no "above for a whole
//!   interval first" condition, unlike RFC 8289);
//! * RTT_min is the smallest sample of the whole run (Algorithm 2: "the smallest RTT sample"),
//!   not a windowed minimum.

use rove_sim::Nanos;

/// Δ at the start and after every sample below the target: "the interval starts at 100 ms"
/// (seed 003 §4.4; RFC 8289's default interval).
pub const INTERVAL_NS: Nanos = 100_000_000;

/// How Δ shrinks with the count of actions (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlLaw {
    /// Δ = interval/√cnt (RFC 8289 §5.3; "same with original CoDel", seed 003 §4.4).
    Standard,
    /// Δ ← Δ/√cnt, as Algorithm 2 line 13 is printed.
    Compounding,
}

impl ControlLaw {
    pub const NAMES: &'static [&'static str] = &["standard", "compounding"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "standard" => Some(ControlLaw::Standard),
            "compounding" => Some(ControlLaw::Compounding),
            _ => None,
        }
    }
}

/// RTT_min, SRTT and σ_RTT (RFC 6298's RTTVAR) of the receiver's RTT samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RttStats {
    /// `None` before the first sample.
    first: Option<()>,
    pub min_ns: Nanos,
    pub srtt_ns: Nanos,
    pub rttvar_ns: Nanos,
}

impl RttStats {
    /// Takes one sample `r` (RFC 6298 §2.2 for the first, §2.3 after).
    pub fn update(&mut self, r: Nanos) {
        if self.first.is_none() {
            self.first = Some(());
            self.min_ns = r;
            self.srtt_ns = r;
            self.rttvar_ns = r / 2;
            return;
        }
        self.min_ns = self.min_ns.min(r);
        // RTTVAR first, from the old SRTT (RFC 6298 §2.3: "the updates ... in this order").
        self.rttvar_ns = (3 * self.rttvar_ns + self.srtt_ns.abs_diff(r)) / 4;
        self.srtt_ns = (7 * self.srtt_ns + r) / 8;
    }

    /// At least one sample was taken.
    pub fn ready(&self) -> bool {
        self.first.is_some()
    }

    /// Algorithm 2 line 2: `σ_RTT ≤ RTT − RTT_min` for sample `r` (false before any sample).
    pub fn above_target(&self, r: Nanos) -> bool {
        self.ready() && r >= self.min_ns && r - self.min_ns >= self.rttvar_ns
    }
}

/// The CoDel schedule of actions: Δ, cnt, t_dup (Algorithm 2 lines 3 and 12–18).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    pub interval_ns: Nanos,
    pub law: ControlLaw,
    /// Actions taken since the condition last cleared.
    pub count: u32,
    /// Δ: the gap to the next action.
    pub delta_ns: Nanos,
    /// t_dup: no action before it.
    pub next_ns: Nanos,
}

impl Schedule {
    pub fn new(interval_ns: Nanos, law: ControlLaw) -> Self {
        Schedule {
            interval_ns,
            law,
            count: 0,
            delta_ns: interval_ns,
            next_ns: 0,
        }
    }

    /// Line 3: an action is due at `now` (the condition holds and `now ≥ t_dup`).
    pub fn due(&self, now: Nanos) -> bool {
        now >= self.next_ns
    }

    /// Lines 12–14, after an action at `now`: cnt ← cnt + 1, Δ by the law, t_dup ← now + Δ.
    pub fn acted(&mut self, now: Nanos) {
        self.count += 1;
        let root = (self.count as f64).sqrt();
        let base = match self.law {
            ControlLaw::Standard => self.interval_ns,
            ControlLaw::Compounding => self.delta_ns,
        };
        self.delta_ns = (base as f64 / root).round() as Nanos;
        self.next_ns = now + self.delta_ns;
    }

    /// Lines 17–18, at a sample below the target: Δ ← interval, cnt ← 0 (t_dup stays).
    pub fn reset(&mut self) {
        self.delta_ns = self.interval_ns;
        self.count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn rtt_stats_follow_rfc_6298_in_integer_nanoseconds() {
        let mut s = RttStats::default();
        assert!(!s.ready() && !s.above_target(50 * MS));
        s.update(50 * MS);
        // First sample: SRTT = 50, RTTVAR = 25, min 50.
        assert_eq!((s.min_ns, s.srtt_ns, s.rttvar_ns), (50 * MS, 50 * MS, 25 * MS));
        s.update(58 * MS);
        // RTTVAR = (3·25 + |50 − 58|)/4 = 83/4 = 20.75 ms; SRTT = (7·50 + 58)/8 = 51 ms.
        assert_eq!((s.min_ns, s.srtt_ns, s.rttvar_ns), (50 * MS, 51 * MS, 20_750_000));
        s.update(46 * MS);
        // RTTVAR = (3·20.75 + |51 − 46|)/4 = 67.25/4 = 16.8125 ms; SRTT = (357 + 46)/8 = 50.375.
        assert_eq!(
            (s.min_ns, s.srtt_ns, s.rttvar_ns),
            (46 * MS, 50_375_000, 16_812_500)
        );
    }

    #[test]
    fn the_target_is_the_mean_deviation_above_the_minimum() {
        let mut s = RttStats::default();
        s.update(50 * MS);
        // The first sample is its own minimum: 0 < RTTVAR = 25 ms.
        assert!(!s.above_target(50 * MS));
        // RTT − RTT_min = 25 ms = σ_RTT: "≥" holds; 24.999 ms does not.
        assert!(s.above_target(75 * MS));
        assert!(!s.above_target(75 * MS - 1));
        // Below the minimum (not yet taken into the stats): never above.
        assert!(!s.above_target(40 * MS));
    }

    #[test]
    fn a_steady_rtt_makes_the_deviation_decay_by_a_quarter() {
        let mut s = RttStats::default();
        s.update(40 * MS);
        for _ in 0..4 {
            s.update(40 * MS);
        }
        // 20 ms · (3/4)^4 = 6.328125 ms.
        assert_eq!(s.rttvar_ns, 6_328_125);
        // A 7 ms standing queue is above that target.
        assert!(s.above_target(47 * MS));
        assert!(!s.above_target(46 * MS));
    }

    #[test]
    fn the_standard_law_is_interval_over_root_count() {
        let mut c = Schedule::new(INTERVAL_NS, ControlLaw::Standard);
        // t_dup = 0: the first action is due at once.
        assert!(c.due(0));
        let mut gaps = Vec::new();
        let mut now = 1_000 * MS;
        for _ in 0..4 {
            assert!(c.due(now));
            c.acted(now);
            assert!(!c.due(now + c.delta_ns - 1));
            gaps.push(c.delta_ns);
            now += c.delta_ns;
        }
        // 100/√1, 100/√2, 100/√3, 100/√4 ms, rounded to the nanosecond.
        assert_eq!(gaps, vec![100_000_000, 70_710_678, 57_735_027, 50_000_000]);
        assert_eq!(c.count, 4);
    }

    #[test]
    fn the_compounding_law_divides_the_last_gap() {
        let mut c = Schedule::new(INTERVAL_NS, ControlLaw::Compounding);
        let mut gaps = Vec::new();
        let mut now = 0;
        for _ in 0..5 {
            c.acted(now);
            gaps.push(c.delta_ns);
            now += c.delta_ns;
        }
        // 100, 100/√2 = 70.711, 70.711/√3 = 40.825, 40.825/√4 = 20.412, 20.412/√5 = 9.129 ms,
        // each from the last gap rounded to the ns: 70_710_678/√3 = 40_824_828.98,
        // 40_824_829/2 = 20_412_414.5 (half rounds up), 20_412_415/√5 = 9_128_709.50.
        assert_eq!(
            gaps,
            vec![100_000_000, 70_710_678, 40_824_829, 20_412_415, 9_128_710]
        );
    }

    #[test]
    fn a_sample_below_the_target_resets_count_and_interval_but_not_t_dup() {
        let mut c = Schedule::new(INTERVAL_NS, ControlLaw::Standard);
        c.acted(0);
        c.acted(100 * MS);
        assert_eq!((c.count, c.delta_ns, c.next_ns), (2, 70_710_678, 170_710_678));
        c.reset();
        assert_eq!((c.count, c.delta_ns, c.next_ns), (0, INTERVAL_NS, 170_710_678));
        // The next action (once due) restarts the law at 100 ms.
        c.acted(200 * MS);
        assert_eq!((c.count, c.delta_ns, c.next_ns), (1, INTERVAL_NS, 300 * MS));
    }

    #[test]
    fn law_names_parse() {
        assert_eq!(ControlLaw::from_name("standard"), Some(ControlLaw::Standard));
        assert_eq!(ControlLaw::from_name("compounding"), Some(ControlLaw::Compounding));
        assert_eq!(ControlLaw::from_name("codel"), None);
    }
}
