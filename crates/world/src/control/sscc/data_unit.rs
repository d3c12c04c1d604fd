//! MPTCP-SSCC's Data Units (thesis §5.4.3, Table 5.2; seed 000 §4.4) and their reward
//! (Eqs. 5.8–5.9, §5.4.4).
//!
//! A Data Unit (DU) summarises `N = 20` consecutive ACKs of one subflow: counting ACKs rather
//! than time gives subflows of very different RTTs windows of comparable sample size (the
//! thesis follows Antelope). [`DuAccumulator`] is fed one [`AckReading`] per ACK, read from the
//! subflow's sender after the ACK was processed, and closes a [`DataUnit`] at every 20th.
//!
//! # Fields (Table 5.2) and how each is measured here
//!
//! | field | Table 5.2 | here |
//! |---|---|---|
//! | `is_coupled` | latest value in the period | the detector's grouping at the DU's last ACK: in a group of two or more subflows |
//! | `ts` | generation time | the time of the DU's last ACK |
//! | `tput` | average delivery rate over the period | mean of the sender's delivery rate (`tcpi_delivery_rate`, the last kept `tcp_rate.c` sample) read at each of the DU's ACKs that has one |
//! | `loss` | loss rate over the period | bits of the segments marked lost during the DU per second of the DU's span ([`LossUnit::Bps`], the default); also kept as a fraction, lost / (delivered + lost) packets |
//! | `delay` | average packet delay over the period | mean of the RTT samples the DU's ACKs carried |
//! | `delay_min` | minimum delay so far | smallest RTT sample of the subflow so far |
//! | `tput_max` | maximum delivery rate so far | largest DU `tput` of the subflow so far, this DU's included |
//!
//! Choices where the thesis is silent [GAP]:
//!
//! - **Delivery rate per ACK**: the BCC program reads the socket at each `tcp_ack`; the socket's
//!   delivery rate is the last kept rate sample, so an ACK without a new sample repeats the
//!   previous one. ACKs before the first sample (rate 0) are left out of the mean.
//! - **`tput_max` over DU means**, not single ACK samples: one burst-compressed rate sample can
//!   be far above the path's rate, and a maximum of means keeps the reward's normaliser stable.
//!   Then `tput ≤ tput_max`, and the reward is at most 1 whenever `delay' ≥ delay_min`.
//! - **A DU without an RTT sample** (every ACK a duplicate, as in a long recovery): `delay` is the
//!   sender's smoothed RTT at the DU's end.
//! - **The span** of a DU runs from the previous DU's last ACK (the subflow's establishment for
//!   its first DU) to its own last ACK; `loss` in bit/s divides by it.
//!
//! # The reward (Eqs. 5.8–5.9)
//!
//! ```text
//!   R = ((tput − ζ·loss) / delay') / (tput_max / delay_min)                    (5.8)
//!   delay' = delay_min  if delay_min ≤ delay ≤ β·delay_min,  delay otherwise    (5.9)
//!   ζ = 5 (loss sensitivity), β = 1.25 (delay tolerance)
//! ```
//!
//! The thesis gives no unit for `loss` [GAP]. Eq. 5.8 subtracts it from a throughput, so rove
//! takes it, as Orca's reward (which Eq. 5.8 follows) does, as a rate in the throughput's unit:
//! the bits lost per second (`loss_unit = "bps"`, default). Then R has no unit at all, and
//! ζ = 5 means each lost bit costs as much as five delivered bits. `loss_unit = "fraction"`
//! takes `loss` as the fraction of packets lost with `tput` in Mbit/s (R then depends on the
//! throughput's unit, which is why it is not the default). Delays cancel in the ratio: any unit.

use rove_sim::Nanos;

/// N: ACKs per Data Unit (thesis §5.4.3: "N = 20 consecutive ACKs", following Antelope).
pub const DU_ACKS: u32 = 20;
/// ζ, loss sensitivity of the reward (Eq. 5.8, §5.4.4).
pub const ZETA: f64 = 5.0;
/// β, delay tolerance of the reward (Eq. 5.9, §5.4.4).
pub const BETA: f64 = 1.25;

/// A Data Unit's fields that the selection models read, in this order (Table 5.2's numeric
/// fields; `is_coupled` is not an input: coupled subflows are never predicted for).
pub const DU_FEATURES: &[&str] = &[
    "tput_mbps",
    "loss_mbps",
    "delay_ms",
    "delay_min_ms",
    "tput_max_mbps",
];

/// One Data Unit of one subflow (Table 5.2; the 4-tuple is the recorder's flow and subflow).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataUnit {
    /// Generation time: the DU's last ACK.
    pub ts_ns: Nanos,
    /// From the previous DU's last ACK (the establishment for the first) to this one's.
    pub span_ns: Nanos,
    pub is_coupled: bool,
    pub tput_bps: f64,
    pub loss_bps: f64,
    /// Packets marked lost over packets delivered plus lost, during the DU.
    pub loss_fraction: f64,
    pub delay_ms: f64,
    pub delay_min_ms: f64,
    pub tput_max_bps: f64,
}

impl DataUnit {
    /// The model inputs, in the order of [`DU_FEATURES`].
    pub fn features(&self) -> [f64; 5] {
        [
            self.tput_bps / 1e6,
            self.loss_bps / 1e6,
            self.delay_ms,
            self.delay_min_ms,
            self.tput_max_bps / 1e6,
        ]
    }
}

/// The unit of `loss` in Eq. 5.8 (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossUnit {
    /// Bits lost per second, against `tput` in bit/s: R has no unit.
    Bps,
    /// The fraction of packets lost, against `tput` in Mbit/s.
    Fraction,
}

impl LossUnit {
    pub const NAMES: &'static [&'static str] = &["bps", "fraction"];

    pub fn parse(name: &str) -> Option<LossUnit> {
        match name {
            "bps" => Some(LossUnit::Bps),
            "fraction" => Some(LossUnit::Fraction),
            _ => None,
        }
    }
}

/// Eq. 5.9: the delay the reward charges. Within the tolerance band [delay_min, β·delay_min]
/// every delay counts as delay_min, so a little queueing is not penalised.
pub fn delay_prime(delay: f64, delay_min: f64, beta: f64) -> f64 {
    if delay_min <= delay && delay <= beta * delay_min {
        delay_min
    } else {
        delay
    }
}

/// The reward of Eq. 5.8 with its constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reward {
    pub zeta: f64,
    pub beta: f64,
    pub loss_unit: LossUnit,
}

impl Default for Reward {
    fn default() -> Self {
        Reward {
            zeta: ZETA,
            beta: BETA,
            loss_unit: LossUnit::Bps,
        }
    }
}

impl Reward {
    /// Eq. 5.8 for `du`; 0 for a DU with no throughput sample yet or no delay.
    pub fn of(&self, du: &DataUnit) -> f64 {
        let (tput, loss, tput_max) = match self.loss_unit {
            LossUnit::Bps => (du.tput_bps, du.loss_bps, du.tput_max_bps),
            LossUnit::Fraction => (du.tput_bps / 1e6, du.loss_fraction, du.tput_max_bps / 1e6),
        };
        let delay = delay_prime(du.delay_ms, du.delay_min_ms, self.beta);
        if tput_max <= 0.0 || delay <= 0.0 || du.delay_min_ms <= 0.0 {
            return 0.0;
        }
        ((tput - self.zeta * loss) / delay) / (tput_max / du.delay_min_ms)
    }
}

/// What the sender says after one ACK.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AckReading {
    pub now: Nanos,
    /// The RTT sample this ACK gave, if any.
    pub rtt_ns: Option<Nanos>,
    /// The socket's delivery rate (0 before the first sample).
    pub delivery_rate_bps: f64,
    /// Cumulative packets marked lost and delivered (tp->lost, tp->delivered).
    pub lost_pkts: u64,
    pub delivered_pkts: u64,
    pub srtt_ns: Nanos,
    pub mss_bytes: u32,
}

/// Builds one subflow's Data Units from its ACKs; nothing allocates.
#[derive(Debug, Clone)]
pub struct DuAccumulator {
    acks_per_du: u32,
    /// Start of the DU in progress and the counters then; `None` before [`begin`](Self::begin).
    start: Option<(Nanos, u64, u64)>,
    acks: u32,
    rate_sum: f64,
    rate_n: u32,
    rtt_sum_ns: f64,
    rtt_n: u32,
    /// So far, over the subflow's life.
    delay_min_ns: Option<Nanos>,
    tput_max_bps: f64,
}

impl DuAccumulator {
    pub fn new(acks_per_du: u32) -> Self {
        assert!(acks_per_du >= 1);
        DuAccumulator {
            acks_per_du,
            start: None,
            acks: 0,
            rate_sum: 0.0,
            rate_n: 0,
            rtt_sum_ns: 0.0,
            rtt_n: 0,
            delay_min_ns: None,
            tput_max_bps: 0.0,
        }
    }

    /// Starts the first DU at `now` (the subflow's establishment) with the sender's lost and
    /// delivered counts then.
    pub fn begin(&mut self, now: Nanos, lost_pkts: u64, delivered_pkts: u64) {
        self.start = Some((now, lost_pkts, delivered_pkts));
    }

    pub fn has_begun(&self) -> bool {
        self.start.is_some()
    }

    /// ACKs of the DU in progress so far.
    pub fn acks_in_progress(&self) -> u32 {
        self.acks
    }

    /// Adds one ACK; returns the DU it completes. `is_coupled` is the subflow's grouping now.
    pub fn on_ack(&mut self, r: &AckReading, is_coupled: bool) -> Option<DataUnit> {
        if self.start.is_none() {
            self.begin(r.now, r.lost_pkts, r.delivered_pkts);
        }
        self.acks += 1;
        if r.delivery_rate_bps > 0.0 {
            self.rate_sum += r.delivery_rate_bps;
            self.rate_n += 1;
        }
        if let Some(rtt) = r.rtt_ns {
            self.rtt_sum_ns += rtt as f64;
            self.rtt_n += 1;
            self.delay_min_ns = Some(self.delay_min_ns.map_or(rtt, |m| m.min(rtt)));
        }
        if self.acks < self.acks_per_du {
            return None;
        }
        let (t0, lost0, delivered0) = self.start.expect("begun above");
        let span_ns = r.now.saturating_sub(t0);
        let lost = r.lost_pkts.saturating_sub(lost0);
        let delivered = r.delivered_pkts.saturating_sub(delivered0);
        let tput_bps = if self.rate_n > 0 {
            self.rate_sum / self.rate_n as f64
        } else {
            0.0
        };
        self.tput_max_bps = self.tput_max_bps.max(tput_bps);
        let delay_ns = if self.rtt_n > 0 {
            self.rtt_sum_ns / self.rtt_n as f64
        } else {
            r.srtt_ns as f64
        };
        let delay_min_ns = self.delay_min_ns.map_or(delay_ns, |m| m as f64);
        let du = DataUnit {
            ts_ns: r.now,
            span_ns,
            is_coupled,
            tput_bps,
            loss_bps: if span_ns > 0 {
                (lost * r.mss_bytes as u64 * 8) as f64 * 1e9 / span_ns as f64
            } else {
                0.0
            },
            loss_fraction: if lost + delivered > 0 {
                lost as f64 / (lost + delivered) as f64
            } else {
                0.0
            },
            delay_ms: delay_ns / 1e6,
            delay_min_ms: delay_min_ns / 1e6,
            tput_max_bps: self.tput_max_bps,
        };
        self.start = Some((r.now, r.lost_pkts, r.delivered_pkts));
        self.acks = 0;
        self.rate_sum = 0.0;
        self.rate_n = 0;
        self.rtt_sum_ns = 0.0;
        self.rtt_n = 0;
        Some(du)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn du(
        tput_mbps: f64,
        loss_mbps: f64,
        delay_ms: f64,
        delay_min_ms: f64,
        max_mbps: f64,
    ) -> DataUnit {
        DataUnit {
            ts_ns: 0,
            span_ns: 0,
            is_coupled: false,
            tput_bps: tput_mbps * 1e6,
            loss_bps: loss_mbps * 1e6,
            loss_fraction: 0.0,
            delay_ms,
            delay_min_ms,
            tput_max_bps: max_mbps * 1e6,
        }
    }

    #[test]
    fn delay_prime_is_delay_min_inside_the_tolerance_band_and_the_delay_outside() {
        // delay_min 40 ms, β = 1.25: the band is [40, 50] ms.
        assert_eq!(delay_prime(40.0, 40.0, BETA), 40.0);
        assert_eq!(delay_prime(45.0, 40.0, BETA), 40.0);
        assert_eq!(
            delay_prime(50.0, 40.0, BETA),
            40.0,
            "the band's top is inside"
        );
        assert_eq!(delay_prime(50.01, 40.0, BETA), 50.01);
        assert_eq!(delay_prime(80.0, 40.0, BETA), 80.0);
        // Below delay_min (cannot happen with delay_min the minimum so far): the delay itself.
        assert_eq!(delay_prime(39.0, 40.0, BETA), 39.0);
    }

    #[test]
    fn the_reward_on_hand_values() {
        let r = Reward::default();
        // Full rate inside the band, no loss: (10/40)/(10/40) = 1.
        assert_eq!(r.of(&du(10.0, 0.0, 48.0, 40.0, 10.0)), 1.0);
        // Half the best rate, delay 80 ms (outside the band), 0.2 Mbit/s lost:
        // ((5 − 5·0.2)/80)/(10/40) = (4/80)/(0.25) = 0.2.
        let x = r.of(&du(5.0, 0.2, 80.0, 40.0, 10.0));
        assert!((x - 0.2).abs() < 1e-12, "{x}");
        // Just outside the band, 50.5 ms: (8/50.5)/(8/40) = 40/50.5.
        let x = r.of(&du(8.0, 0.0, 50.5, 40.0, 8.0));
        assert!((x - 40.0 / 50.5).abs() < 1e-12, "{x}");
        // Losses above a fifth of the throughput make the reward negative: (1 − 5·0.4)/...
        assert!(r.of(&du(1.0, 0.4, 40.0, 40.0, 10.0)) < 0.0);
        // As a fraction with tput in Mbit/s: ((10 − 5·0.02)/40)/(20/40) = 9.9/20.
        let f = Reward {
            loss_unit: LossUnit::Fraction,
            ..Reward::default()
        };
        let mut d = du(10.0, 123.0, 40.0, 40.0, 20.0);
        d.loss_fraction = 0.02;
        assert!((f.of(&d) - 9.9 / 20.0).abs() < 1e-12);
        // Nothing measured yet: 0.
        assert_eq!(r.of(&du(0.0, 0.0, 40.0, 40.0, 0.0)), 0.0);
    }

    fn reading(
        now_ms: u64,
        rtt_ms: Option<u64>,
        rate_mbps: f64,
        lost: u64,
        delivered: u64,
    ) -> AckReading {
        AckReading {
            now: now_ms * MS,
            rtt_ns: rtt_ms.map(|r| r * MS),
            delivery_rate_bps: rate_mbps * 1e6,
            lost_pkts: lost,
            delivered_pkts: delivered,
            srtt_ns: 99 * MS,
            mss_bytes: 1000,
        }
    }

    #[test]
    fn a_data_unit_closes_every_n_acks_with_its_fields() {
        let mut acc = DuAccumulator::new(4);
        acc.begin(0, 0, 0);
        // ACKs at 10, 20, 30, 40 ms; RTT samples 50, 70 and none, 60; rates 0 (none yet), 8,
        // 10, 12 Mbit/s; 2 packets lost and 18 delivered by the 4th.
        assert_eq!(acc.on_ack(&reading(10, Some(50), 0.0, 0, 2), false), None);
        assert_eq!(acc.on_ack(&reading(20, Some(70), 8.0, 1, 6), false), None);
        assert_eq!(acc.on_ack(&reading(30, None, 10.0, 1, 12), true), None);
        let d = acc
            .on_ack(&reading(40, Some(60), 12.0, 2, 18), false)
            .unwrap();
        assert_eq!(d.ts_ns, 40 * MS);
        assert_eq!(d.span_ns, 40 * MS);
        assert!(!d.is_coupled, "the latest value");
        assert_eq!(
            d.tput_bps, 10e6,
            "mean of 8, 10, 12: the ACK without a sample left out"
        );
        assert_eq!(d.delay_ms, 60.0, "mean of 50, 70, 60");
        assert_eq!(d.delay_min_ms, 50.0);
        assert_eq!(d.tput_max_bps, 10e6);
        // 2 packets of 1000 B in 40 ms: 16000 bits / 0.04 s = 400 kbit/s; 2 of 20.
        assert!((d.loss_bps - 400e3).abs() < 1e-6, "{}", d.loss_bps);
        assert_eq!(d.loss_fraction, 0.1);
        // The next DU starts where this one ended; its minimum and maximum are "so far".
        for t in [50, 60, 70] {
            assert_eq!(acc.on_ack(&reading(t, None, 4.0, 2, 20), true), None);
        }
        let d = acc.on_ack(&reading(90, None, 4.0, 2, 22), true).unwrap();
        assert_eq!(d.span_ns, 50 * MS);
        assert!(d.is_coupled);
        assert_eq!(d.tput_bps, 4e6);
        assert_eq!(d.tput_max_bps, 10e6, "the largest DU so far");
        assert_eq!(d.delay_ms, 99.0, "no RTT sample: the smoothed RTT");
        assert_eq!(d.delay_min_ms, 50.0);
        assert_eq!((d.loss_bps, d.loss_fraction), (0.0, 0.0));
    }
}
