//! A station's SNR over time: none (an error-free channel), fixed, a trace of (time, dB)
//! points held from each point to the next ([GAP] a step function, no interpolation; before the
//! first point the first value holds), or from its distance to the AP as it moves
//! ([`Mobility`], [`LinkBudget`]). The channel is reciprocal: the AP's frames to the station
//! and the station's frames to the AP see the same SNR.
//!
//! Mobility: the station moves along a line through the AP at a constant speed, its distance
//! d(t) = |d0 + s·v·t| (s = +1 away, `"backward"`; −1 towards, `"forward"`, passing the AP and
//! going away on the other side), at least the reference distance d_ref = 1 m. Its SNR is
//! the link budget SNR = P_tx − PL(d) − N with
//! - the log-distance path loss PL(d) = PL(d_ref) + 10 n log10(d / d_ref) (Rappaport,
//!   "Wireless Communications", 2nd ed., §4.9.1, Eq. 4.68; ns-3's
//!   `LogDistancePropagationLossModel`): [GAP] n = `path_loss_exponent`, default 3, and
//!   PL(d_ref) = `reference_loss`, default 46.6777 dB, both ns-3's defaults (the reference
//!   loss is free space, Friis, at 1 m and 5.15 GHz: 20 log10(4π · 1 m · 5.15 GHz / c));
//! - [GAP] P_tx = `tx_power`, default 16.0206 dBm (40 mW), ns-3 `WifiPhy::TxPowerStart`;
//! - the noise N = −174 dBm/Hz (kT at 290 K) + 10 log10(channel width) + the receiver's noise
//!   figure, [GAP] `noise_figure` default 7 dB, ns-3 `WifiPhy::RxNoiseFigure`: −93.97 dBm over
//!   20 MHz.
//! With the defaults a station at 10 m has 33.3 dB, at 30 m 19.0 dB, at 50 m 12.3 dB. No
//! shadowing, no fading, no interference ([GAP]: the SNR is the mean link budget).

use crate::Nanos;

#[derive(Debug, Clone, PartialEq)]
pub enum Snr {
    /// No `snr` or `snr_trace`: every frame that does not collide is received.
    Perfect,
    Fixed(f64),
    /// (time, dB) points, times strictly increasing.
    Trace(Vec<(Nanos, f64)>),
    /// From the station's distance to the AP as it moves.
    Moving(Mobility, LinkBudget),
}

/// A station's movement along a line through the AP (keys `distance`, `speed`, `direction`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mobility {
    /// Distance from the AP at time 0, m.
    pub distance_m: f64,
    pub speed_m_s: f64,
    /// +1 away from the AP (`"backward"`), −1 towards it (`"forward"`).
    pub direction: f64,
}

impl Mobility {
    /// The distance from the AP at `now`, m (at least [`REFERENCE_DISTANCE_M`]).
    pub fn distance_at(&self, now: Nanos) -> f64 {
        let t = now as f64 / 1e9;
        (self.distance_m + self.direction * self.speed_m_s * t)
            .abs()
            .max(REFERENCE_DISTANCE_M)
    }
}

/// The log-distance model's reference distance d_ref, m (ns-3 `ReferenceDistance`, 1 m).
pub const REFERENCE_DISTANCE_M: f64 = 1.0;
/// [GAP] Default path-loss exponent n: 3, ns-3 `LogDistancePropagationLossModel::Exponent`.
pub const DEFAULT_PATH_LOSS_EXPONENT: f64 = 3.0;
/// [GAP] Default PL(d_ref), dB: 46.6777, ns-3 `ReferenceLoss` (Friis at 1 m, 5.15 GHz).
pub const DEFAULT_REFERENCE_LOSS_DB: f64 = 46.6777;
/// [GAP] Default transmit power, dBm: 16.0206 (40 mW), ns-3 `WifiPhy::TxPowerStart`.
pub const DEFAULT_TX_POWER_DBM: f64 = 16.0206;
/// [GAP] Default receiver noise figure, dB: 7, ns-3 `WifiPhy::RxNoiseFigure`.
pub const DEFAULT_NOISE_FIGURE_DB: f64 = 7.0;
/// Thermal noise density, dBm/Hz (kT at 290 K).
const THERMAL_DBM_PER_HZ: f64 = -174.0;

/// The cell's link budget (keys `tx_power`, `noise_figure`, `path_loss_exponent`,
/// `reference_loss`, and the channel `width`): the same for the AP and its stations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkBudget {
    pub tx_power_dbm: f64,
    pub path_loss_exponent: f64,
    pub reference_loss_db: f64,
    /// Thermal noise over the channel plus the noise figure, dBm.
    pub noise_dbm: f64,
}

impl LinkBudget {
    pub fn new(
        tx_power_dbm: f64,
        noise_figure_db: f64,
        width_mhz: u32,
        path_loss_exponent: f64,
        reference_loss_db: f64,
    ) -> Self {
        LinkBudget {
            tx_power_dbm,
            path_loss_exponent,
            reference_loss_db,
            noise_dbm: THERMAL_DBM_PER_HZ
                + 10.0 * (f64::from(width_mhz) * 1e6).log10()
                + noise_figure_db,
        }
    }

    /// PL(d) = PL(d_ref) + 10 n log10(d / d_ref), dB.
    pub fn path_loss_db(&self, distance_m: f64) -> f64 {
        self.reference_loss_db
            + 10.0
                * self.path_loss_exponent
                * (distance_m.max(REFERENCE_DISTANCE_M) / REFERENCE_DISTANCE_M).log10()
    }

    /// The SNR at `distance_m`, dB.
    pub fn snr_db(&self, distance_m: f64) -> f64 {
        self.tx_power_dbm - self.path_loss_db(distance_m) - self.noise_dbm
    }
}

impl Snr {
    /// The SNR at `now`, dB; `None` for a perfect channel.
    pub fn at(&self, now: Nanos) -> Option<f64> {
        match self {
            Snr::Perfect => None,
            Snr::Fixed(db) => Some(*db),
            Snr::Trace(points) => {
                let i = points.partition_point(|&(t, _)| t <= now);
                Some(points[i.saturating_sub(1)].1)
            }
            Snr::Moving(m, budget) => Some(budget.snr_db(m.distance_at(now))),
        }
    }
}

/// Reads an SNR trace's text: one `time_s dB` pair a line (whitespace or a comma between),
/// `#` comments and blank lines ignored; times in seconds, strictly increasing, at least one
/// point. Errors name the line.
pub fn parse_trace(text: &str) -> Result<Vec<(Nanos, f64)>, String> {
    let mut points: Vec<(Nanos, f64)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        let bad = || {
            format!(
                "line {}: expected \"time_s dB\" like \"1.5 20\", got {line:?}",
                n + 1
            )
        };
        let [t, db] = fields[..] else {
            return Err(bad());
        };
        let (Ok(t), Ok(db)) = (t.parse::<f64>(), db.parse::<f64>()) else {
            return Err(bad());
        };
        push_point(&mut points, t, db).map_err(|m| format!("line {}: {m}", n + 1))?;
    }
    if points.is_empty() {
        return Err("no (time, dB) points".into());
    }
    Ok(points)
}

/// Appends a (seconds, dB) point, checking it.
pub fn push_point(points: &mut Vec<(Nanos, f64)>, t_s: f64, db: f64) -> Result<(), String> {
    if !((0.0..1e9).contains(&t_s) && db.is_finite()) {
        return Err(format!(
            "a time of at least 0 s and a finite dB, got ({t_s}, {db})"
        ));
    }
    let t = (t_s * 1e9).round() as Nanos;
    if points.last().is_some_and(|&(last, _)| t <= last) {
        return Err(format!(
            "times must increase, got {t_s} s after a later or equal one"
        ));
    }
    points.push((t, db));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_holds_each_value_until_the_next_point() {
        let s = Snr::Trace(parse_trace("# t dB\n0 30\n2.5, 10\n\n4 20 # later\n").unwrap());
        assert_eq!(s.at(0), Some(30.0));
        assert_eq!(s.at(2_499_999_999), Some(30.0));
        assert_eq!(s.at(2_500_000_000), Some(10.0));
        assert_eq!(s.at(100_000_000_000), Some(20.0));
        let s = Snr::Trace(parse_trace("1 5").unwrap());
        assert_eq!(s.at(0), Some(5.0));
        assert_eq!(Snr::Perfect.at(5), None);
    }

    #[test]
    fn a_moving_station_has_the_link_budget_snr_of_its_distance() {
        let b = LinkBudget::new(16.0206, 7.0, 20, 3.0, 46.6777);
        // N = -174 + 10 log10(20e6) + 7 = -174 + 73.0103 + 7 = -93.9897 dBm.
        assert!((b.noise_dbm + 93.9897).abs() < 1e-4, "{}", b.noise_dbm);
        // 10 m: PL = 46.6777 + 30 = 76.6777; SNR = 16.0206 - 76.6777 + 93.9897 = 33.3326.
        assert!((b.snr_db(10.0) - 33.3326).abs() < 1e-4);
        // 30 m: PL = 46.6777 + 30 log10(30) = 46.6777 + 44.3136 = 90.9913; SNR 19.0190.
        assert!((b.snr_db(30.0) - 19.0190).abs() < 1e-4);
        // Under the reference distance the loss stays PL(1 m): 63.3326 dB.
        assert_eq!(b.snr_db(0.2), b.snr_db(1.0));
        assert!((b.snr_db(1.0) - 63.3326).abs() < 1e-4);
        // Away at 2 m/s from 10 m: 30 m at 10 s. Towards from 10 m: 0 m (1 m) at 5 s, 10 m
        // again at 10 s on the other side.
        let away = Mobility {
            distance_m: 10.0,
            speed_m_s: 2.0,
            direction: 1.0,
        };
        let s = Snr::Moving(away, b);
        assert!((s.at(10_000_000_000).unwrap() - 19.0190).abs() < 1e-4);
        let towards = Mobility {
            direction: -1.0,
            ..away
        };
        assert_eq!(towards.distance_at(5_000_000_000), 1.0);
        assert!((towards.distance_at(10_000_000_000) - 10.0).abs() < 1e-9);
        assert!((towards.distance_at(2_500_000_000) - 5.0).abs() < 1e-9);
    }

    #[test]
    fn bad_traces_name_the_line() {
        assert!(parse_trace("0 30\n1\n").unwrap_err().starts_with("line 2"));
        assert!(parse_trace("0 30\n0 20\n")
            .unwrap_err()
            .contains("increase"));
        assert!(parse_trace("# nothing\n").unwrap_err().contains("no (time"));
    }
}
