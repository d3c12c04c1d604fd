//! Drive-by WiFi (`stations.NAME.driveby`): a station in a car passing roadside access points,
//! as seed-000 chapter 3 (F. Yang's thesis, §3.5) measured provider-managed WiFi from moving
//! cars in four cities.
//!
//! The station alternates between **associations** (link-layer connectivity with one roadside
//! AP) and **holes** (no AP in reach). An association carries data only after its set-up
//! (authentication, association, EAP, DHCP and the first TCP exchange: "time until the first
//! TCP ACK", measured from the association's start); some associations never carry data (their
//! DHCP or TCP set-up failed). So, along the run:
//!
//! ```text
//!   |<------- association ------->|<---- hole ---->|<--- association --- ...
//!   |<- set-up ->|<---- data ---->|                |
//!   start        data_from        end              next start
//! ```
//!
//! Association lengths, hole lengths and the set-up failures are drawn one association at a
//! time from the stream `link:LINK:driveby:STATION` of the run's seed, so the schedule is the
//! same on both backends and does not depend on the traffic.
//!
//! **Cities** (`driveby = "bologna" | "la" | "macao" | "paris"`, or `city = ...` in a table whose
//! other keys override the city's values), from the thesis's printed numbers:
//!
//! | city | association mean, CV | hole mean, CV | set-up | no data |
//! |---|---|---|---|---|
//! | bologna | 16.74 s, 1.50 | 12.23 s, 3.87 | 1.09 s | 21.5 % |
//! | la | 29.28 s, 1.12 | 33.08 s, 3.87 | 2.76 s | 19.7 % |
//! | macao | 21.27 s, 1.91 | 112.27 s, 3.87 | 1.48 s | 12.5 % |
//! | paris | 16.58 s, 1.39 | 5.7 s, 1.04 | 1.11 s | 63.4 % |
//!
//! - association mean: §3.5.2's mean link-layer connectivity duration;
//! - association CV (standard deviation over mean): Table 3.2's mean ± standard deviation per
//!   band (5 GHz, 2.4 GHz), mixed by Table 3.1's associations per band ([`mixture_cv`]; the
//!   mixture's mean equals §3.5.2's city mean to the printed digits, a check that the rows
//!   are the same associations). [GAP] Paris has no Table 3.2 row (2.4 GHz only): the mean of
//!   the three other cities' 2.4 GHz CVs.
//! - hole mean: §3.5.2's mean link-layer connectivity hole; CV: "the mean values are skewed
//!   from their median by a factor of 4x" (Bologna, LA, Macao), which a log-normal turns into
//!   CV = √(4² − 1) = 3.87 ([`cv_of_mean_over_median`]). [GAP] Paris, where "the mean is not too
//!   far from the median" (a uniformly dense area): mean/median = 1/ln 2, an exponential's
//!   (APs met as a Poisson process), CV 1.04.
//! - set-up: §3.5.1's mean "time until the first TCP ACK" (association, EAP, DHCP and the TCP
//!   handshake, from the association's start). [GAP] constant: only the mean is printed, and
//!   the association and DHCP times it is made of are "not heavy-tailed, with the means only
//!   lightly skewed from the medians". [GAP] It includes one round trip to the thesis's
//!   server, which the simulated path then adds again.
//! - no data (`setup_failure`): the associations without a TCP test, 1 − TCP tests / link-layer
//!   associations of Table 3.1 (failed DHCP, Paris's "DHCP issue" above all, and failed TCP
//!   set-ups). Associations shorter than the set-up carry nothing either (of the log-normal
//!   associations below, 1.5 % in LA to 6.3 % in Macao), on top of this fraction ([GAP]: not
//!   subtracted from it; the thesis's failures include some of them).
//!
//! [GAP] The distributions' family is not printed ("heavy-tailed"): associations and holes are
//! log-normal with the mean and CV above (σ² = ln(1 + CV²), μ = ln(mean) − σ²/2); a CV of 0
//! makes them constant. [GAP] The run starts as an association starts (`start = "hole"`: with a
//! hole).
//!
//! **Packets without connectivity** (`offline`, [GAP]): `"drop"` (default) drops every packet
//! for or from the station outside its data periods, and at the end of an association the
//! packets still queued for it at the AP, in its own queue, or in a transmitter's hands (the
//! AP it leaves cannot reach it, and the next AP is another AP; on a real AP mac80211 purges a
//! departing station's queues) — cause `"offline"`, never a queue or MAC drop. `"hold"` keeps
//! them queued until the next data period (as an outage of a point-to-point link: one AP whose
//! coverage has gaps); frames in a transmitter's hands go back to the head of their queue.
//!
//! Differences from the thesis's drives: one TCP connection (or datagram flow) lives across
//! associations, where X-Perf started a test per association (the IP address changed); the
//! station's SNR is its `snr`/`snr_trace` whatever the AP; the cell's other stations are with
//! every AP the car meets. Rate control (Minstrel) starts afresh at each association, as a new
//! mac80211 station entry does.

use super::super::radio::bad;
use crate::rng::Stream;
use crate::Nanos;
use rove_scenario::parse::join;
use toml::Value;

/// The keys of a `driveby` table.
pub const KEYS: &[&str] = &[
    "city",
    "window_mean",
    "window_cv",
    "hole_mean",
    "hole_cv",
    "setup",
    "setup_failure",
    "start",
    "offline",
];

/// The cities of seed-000 chapter 3, as `city` names them.
pub const CITIES: &[&str] = &["bologna", "la", "macao", "paris"];

/// What happens to a station's packets while it has no data connectivity (`offline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offline {
    /// Dropped (cause "offline"), and its queues emptied when an association ends.
    Drop,
    /// Kept in their queues until the next data period.
    Hold,
}

/// Whether the run starts with an association or with a hole (`start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Association,
    Hole,
}

/// A station's drive-by parameters (times in ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrivebyParams {
    pub window_mean_ns: Nanos,
    pub window_cv: f64,
    pub hole_mean_ns: Nanos,
    pub hole_cv: f64,
    pub setup_ns: Nanos,
    pub setup_failure: f64,
    pub start: Start,
    pub offline: Offline,
}

/// One band of Table 3.2 (seed-000): its associations (Table 3.1), and their link-layer
/// duration's mean and standard deviation, s.
type Band = (f64, f64, f64);

/// The coefficient of variation of a mixture of bands (each `(count, mean, sd)`):
/// E[X²] = Σ n_k (sd_k² + mean_k²) / N, mean = Σ n_k mean_k / N.
pub fn mixture_cv(bands: &[Band]) -> f64 {
    let n: f64 = bands.iter().map(|b| b.0).sum();
    let mean = bands.iter().map(|b| b.0 * b.1).sum::<f64>() / n;
    let second = bands
        .iter()
        .map(|b| b.0 * (b.2 * b.2 + b.1 * b.1))
        .sum::<f64>()
        / n;
    (second - mean * mean).sqrt() / mean
}

/// A log-normal's CV given its mean over its median r: mean/median = exp(σ²/2), so
/// CV² = exp(σ²) − 1 = r² − 1.
pub fn cv_of_mean_over_median(r: f64) -> f64 {
    (r * r - 1.0).sqrt()
}

/// Table 3.2 (mean ± stdev of the link-layer connectivity duration, s, per band) with Table
/// 3.1's link-layer associations per band ("5 GHz assoc.", "2.4 GHz assoc.").
const BOLOGNA_BANDS: [Band; 2] = [(283.0, 26.22, 39.62), (1218.0, 14.54, 19.56)];
const LA_BANDS: [Band; 2] = [(1377.0, 30.09, 33.38), (479.0, 26.94, 30.67)];
const MACAO_BANDS: [Band; 2] = [(4076.0, 20.22, 40.33), (1336.0, 24.52, 41.57)];

/// §3.5.2: "the mean values are skewed from their median by a factor of 4x" (link-layer holes
/// in Bologna, LA and Macao).
const HOLE_MEAN_OVER_MEDIAN: f64 = 4.0;

fn secs(s: f64) -> Nanos {
    (s * 1e9).round() as Nanos
}

/// A city's parameters (the table in the module doc; `offline = "drop"`, starting with an
/// association).
pub fn city(name: &str) -> Option<DrivebyParams> {
    let holes_4x = cv_of_mean_over_median(HOLE_MEAN_OVER_MEDIAN);
    // (association mean s, its CV, hole mean s, its CV, time until the first TCP ACK s,
    //  TCP tests, link-layer associations): §3.5.2, Table 3.2, §3.5.1, Table 3.1.
    let (window_s, window_cv, hole_s, hole_cv, setup_s, tcp_tests, associations) = match name {
        "bologna" => (
            16.74,
            mixture_cv(&BOLOGNA_BANDS),
            12.23,
            holes_4x,
            1.09,
            1179.0,
            1501.0,
        ),
        "la" => (
            29.28,
            mixture_cv(&LA_BANDS),
            33.08,
            holes_4x,
            2.76,
            1490.0,
            1856.0,
        ),
        "macao" => (
            21.27,
            mixture_cv(&MACAO_BANDS),
            112.27,
            holes_4x,
            1.48,
            4736.0,
            5412.0,
        ),
        "paris" => {
            // [GAP] no Table 3.2 row: the other cities' 2.4 GHz CVs, averaged; holes as an
            // exponential's mean/median, 1/ln 2 (see the module doc).
            let cv_24 = [BOLOGNA_BANDS[1], LA_BANDS[1], MACAO_BANDS[1]]
                .iter()
                .map(|b| b.2 / b.1)
                .sum::<f64>()
                / 3.0;
            let hole_cv = cv_of_mean_over_median(1.0 / std::f64::consts::LN_2);
            (16.58, cv_24, 5.7, hole_cv, 1.11, 664.0, 1812.0)
        }
        _ => return None,
    };
    Some(DrivebyParams {
        window_mean_ns: secs(window_s),
        window_cv,
        hole_mean_ns: secs(hole_s),
        hole_cv,
        setup_ns: secs(setup_s),
        setup_failure: 1.0 - tcp_tests / associations,
        start: Start::Association,
        offline: Offline::Drop,
    })
}

type Res<T> = Result<T, (String, String)>;

/// Reads `stations.NAME.driveby` (`key`): a city's name, or a table of [`KEYS`]. Without
/// `city`, `window_mean`, `hole_mean` and `setup` are required and the rest default to
/// constant lengths (CVs 0), no failures, an association first and `offline = "drop"`.
pub fn parse(key: &str, v: &Value) -> Res<DrivebyParams> {
    let cities = CITIES
        .iter()
        .map(|c| format!("{c:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let looks_like = format!(
        "a city ({cities}) or a table like {{ window_mean = \"20s\", hole_mean = \"10s\", setup = \"1s\" }}"
    );
    let t = match v {
        Value::String(name) => {
            return city(name).ok_or_else(|| bad(key, v, &format!("one of {cities}")));
        }
        Value::Table(t) => t,
        _ => return Err(bad(key, v, &looks_like)),
    };
    if let Some(k) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err((
            join(key, k),
            format!("unknown key {k:?}; accepted keys: {}", KEYS.join(", ")),
        ));
    }
    let base = match t.get("city") {
        None => None,
        Some(Value::String(name)) => Some(city(name).ok_or_else(|| {
            bad(
                &join(key, "city"),
                &Value::String(name.clone()),
                &format!("one of {cities}"),
            )
        })?),
        Some(v) => return Err(bad(&join(key, "city"), v, &format!("one of {cities}"))),
    };
    let time = |k: &str, positive: bool| -> Res<Option<Nanos>> {
        let what = if positive {
            "a positive time like \"20s\""
        } else {
            "a time like \"1.5s\""
        };
        match t.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => match rove_scenario::units::parse_time(s) {
                Ok(ns) if ns > 0 || !positive => Ok(Some(ns)),
                _ => Err(bad(&join(key, k), &Value::String(s.clone()), what)),
            },
            Some(v) => Err(bad(&join(key, k), v, what)),
        }
    };
    let number = |k: &str, ok: fn(f64) -> bool, what: &str| -> Res<Option<f64>> {
        match t.get(k) {
            None => Ok(None),
            Some(Value::Float(x)) if ok(*x) => Ok(Some(*x)),
            Some(Value::Integer(n)) if ok(*n as f64) => Ok(Some(*n as f64)),
            Some(v) => Err(bad(&join(key, k), v, what)),
        }
    };
    let required = |k: &str, got: Option<Nanos>| -> Res<Nanos> {
        got.ok_or_else(|| {
            (
                join(key, k),
                format!("missing: give {k}, or a city ({cities}) whose value it takes"),
            )
        })
    };
    let cv_ok: fn(f64) -> bool = |x| x.is_finite() && (0.0..=100.0).contains(&x);
    let cv_what = "a coefficient of variation (standard deviation over mean) from 0 to 100";
    let window_mean = time("window_mean", true)?.or(base.map(|b| b.window_mean_ns));
    let hole_mean = time("hole_mean", false)?.or(base.map(|b| b.hole_mean_ns));
    let setup = time("setup", false)?.or(base.map(|b| b.setup_ns));
    let start = match t.get("start") {
        None => base.map_or(Start::Association, |b| b.start),
        Some(Value::String(s)) if s == "association" => Start::Association,
        Some(Value::String(s)) if s == "hole" => Start::Hole,
        Some(v) => return Err(bad(&join(key, "start"), v, "\"association\" or \"hole\"")),
    };
    let offline = match t.get("offline") {
        None => Offline::Drop,
        Some(Value::String(s)) if s == "drop" => Offline::Drop,
        Some(Value::String(s)) if s == "hold" => Offline::Hold,
        Some(v) => return Err(bad(&join(key, "offline"), v, "\"drop\" or \"hold\"")),
    };
    Ok(DrivebyParams {
        window_mean_ns: required("window_mean", window_mean)?,
        window_cv: number("window_cv", cv_ok, cv_what)?
            .or(base.map(|b| b.window_cv))
            .unwrap_or(0.0),
        hole_mean_ns: required("hole_mean", hole_mean)?,
        hole_cv: number("hole_cv", cv_ok, cv_what)?
            .or(base.map(|b| b.hole_cv))
            .unwrap_or(0.0),
        setup_ns: required("setup", setup)?,
        setup_failure: number(
            "setup_failure",
            |x| (0.0..=1.0).contains(&x),
            "a probability from 0 to 1",
        )?
        .or(base.map(|b| b.setup_failure))
        .unwrap_or(0.0),
        start,
        offline,
    })
}

/// One association: it starts at `start`, carries data in `[data_from, end)` (nothing when
/// `data_from == end`: its set-up failed or outlasted it) and ends at `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Association {
    pub start: Nanos,
    pub data_from: Nanos,
    pub end: Nanos,
}

impl Association {
    pub fn carries_data_at(&self, t: Nanos) -> bool {
        self.data_from <= t && t < self.end
    }
}

/// A draw from a log-normal of `mean_ns` and coefficient of variation `cv` (the mean itself
/// when `cv` is 0, without a draw).
fn lognormal_ns(rng: &mut Stream, mean_ns: Nanos, cv: f64) -> Nanos {
    if cv == 0.0 || mean_ns == 0 {
        return mean_ns;
    }
    let sigma2 = (1.0 + cv * cv).ln();
    let mu = (mean_ns as f64).ln() - sigma2 / 2.0;
    (mu + sigma2.sqrt() * rng.standard_normal()).exp().round() as Nanos
}

/// The associations of one station, in order, drawn as they are needed.
#[derive(Clone)]
pub struct Schedule {
    p: DrivebyParams,
    rng: Stream,
    next_start: Option<Nanos>,
}

impl Schedule {
    pub fn new(p: DrivebyParams, rng: Stream) -> Self {
        Schedule {
            p,
            rng,
            next_start: None,
        }
    }

    pub fn params(&self) -> &DrivebyParams {
        &self.p
    }
}

impl Iterator for Schedule {
    type Item = Association;

    /// Per association: its length, then (when `setup_failure` > 0) whether it carries data,
    /// then the hole after it.
    fn next(&mut self) -> Option<Association> {
        let p = self.p;
        let start = match self.next_start {
            Some(t) => t,
            None if p.start == Start::Hole => {
                lognormal_ns(&mut self.rng, p.hole_mean_ns, p.hole_cv)
            }
            None => 0,
        };
        let end = start.saturating_add(lognormal_ns(&mut self.rng, p.window_mean_ns, p.window_cv));
        let failed = self.rng.chance(p.setup_failure);
        let data_from = if failed {
            end
        } else {
            start.saturating_add(p.setup_ns).min(end)
        };
        let hole = lognormal_ns(&mut self.rng, p.hole_mean_ns, p.hole_cv);
        self.next_start = Some(end.saturating_add(hole));
        Some(Association {
            start,
            data_from,
            end,
        })
    }
}

/// What changed for a station when the clock moved on ([`Driveby::advance`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Change {
    /// It had data connectivity and lost it (its association ended, or a later one began).
    pub lost: bool,
    /// It has data connectivity now and did not have it (or had it with an earlier AP).
    pub gained: bool,
}

/// A drive-by station's state: its schedule and the association now (or the next one).
#[derive(Clone)]
pub struct Driveby {
    /// The schedule as it was at the start (for the run's whole list of associations).
    initial: Schedule,
    schedule: Schedule,
    /// The association covering the last time seen, or the next one during a hole.
    pub current: Association,
    /// Index of `current` in the schedule.
    index: u64,
    /// Whether the station had data connectivity at the last time seen.
    pub online: bool,
}

impl Driveby {
    pub fn new(p: DrivebyParams, rng: Stream) -> Self {
        let initial = Schedule::new(p, rng);
        let mut schedule = initial.clone();
        let current = schedule.next().expect("the schedule never ends");
        Driveby {
            initial,
            schedule,
            online: current.carries_data_at(0),
            current,
            index: 0,
        }
    }

    pub fn params(&self) -> &DrivebyParams {
        self.schedule.params()
    }

    /// Moves to `now` (never earlier than the last call).
    pub fn advance(&mut self, now: Nanos) -> Change {
        let before = (self.online, self.index);
        while now >= self.current.end {
            self.current = self.schedule.next().expect("the schedule never ends");
            self.index += 1;
        }
        self.online = self.current.carries_data_at(now);
        let other_ap = self.index != before.1;
        Change {
            lost: before.0 && (other_ap || !self.online),
            gained: self.online && (other_ap || !before.0),
        }
    }

    /// When the station's connectivity next changes after the last time seen: the start of
    /// the current association's data period, or its end.
    pub fn next_change(&self, now: Nanos) -> Nanos {
        if now < self.current.data_from {
            self.current.data_from
        } else {
            self.current.end
        }
    }

    /// The associations that start before `until`, from the run's start.
    pub fn associations_until(&self, until: Nanos) -> impl Iterator<Item = Association> {
        self.initial.clone().take_while(move |a| a.start < until)
    }

    /// Time with data connectivity in `[0, until)`.
    pub fn data_ns_until(&self, until: Nanos) -> Nanos {
        self.associations_until(until)
            .map(|a| a.end.min(until).saturating_sub(a.data_from))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml::Table;

    fn fixed(window_s: u64, hole_s: u64, setup_s: u64) -> DrivebyParams {
        DrivebyParams {
            window_mean_ns: window_s * 1_000_000_000,
            window_cv: 0.0,
            hole_mean_ns: hole_s * 1_000_000_000,
            hole_cv: 0.0,
            setup_ns: setup_s * 1_000_000_000,
            setup_failure: 0.0,
            start: Start::Association,
            offline: Offline::Drop,
        }
    }

    const S: Nanos = 1_000_000_000;

    #[test]
    fn constant_lengths_give_the_hand_schedule() {
        // Associations of 10 s every 15 s (5-s holes), data after 1 s of set-up.
        let got: Vec<Association> = Schedule::new(fixed(10, 5, 1), Stream::new(1, "t"))
            .take(3)
            .collect();
        let want = |k: u64| Association {
            start: 15 * k * S,
            data_from: (15 * k + 1) * S,
            end: (15 * k + 10) * S,
        };
        assert_eq!(got, vec![want(0), want(1), want(2)]);
        let mut p = fixed(10, 5, 1);
        p.start = Start::Hole;
        let first = Schedule::new(p, Stream::new(1, "t")).next().unwrap();
        assert_eq!((first.start, first.data_from), (5 * S, 6 * S));
        // A set-up longer than the association: it carries nothing.
        let a = Schedule::new(fixed(2, 5, 3), Stream::new(1, "t"))
            .next()
            .unwrap();
        assert_eq!(a.data_from, a.end);
    }

    #[test]
    fn advance_reports_lost_and_gained_connectivity() {
        let mut d = Driveby::new(fixed(10, 5, 1), Stream::new(1, "t"));
        assert!(!d.online);
        assert_eq!(d.next_change(0), S);
        assert_eq!(
            d.advance(S),
            Change {
                lost: false,
                gained: true
            }
        );
        assert_eq!(d.next_change(S), 10 * S);
        assert_eq!(d.advance(9 * S), Change::default());
        assert_eq!(
            d.advance(10 * S),
            Change {
                lost: true,
                gained: false
            }
        );
        assert_eq!(d.current.start, 15 * S);
        assert_eq!(d.next_change(10 * S), 16 * S);
        // From one data period straight into a later one (nothing seen between): both.
        assert_eq!(
            d.advance(16 * S),
            Change {
                lost: false,
                gained: true
            }
        );
        assert_eq!(
            d.advance(31 * S),
            Change {
                lost: true,
                gained: true
            }
        );
        assert_eq!(d.data_ns_until(40 * S), 9 * S + 9 * S + 9 * S);
        assert_eq!(d.associations_until(40 * S).count(), 3);
    }

    #[test]
    fn city_parameters_from_the_thesis_tables() {
        // Hand: Bologna's Table 3.2 rows mixed by 283 and 1218 associations: mean
        // (283·26.22 + 1218·14.54)/1501 = 16.742 (§3.5.2 prints 16.74); E[X²] =
        // (283·(39.62² + 26.22²) + 1218·(19.56² + 14.54²))/1501 = 907.61, sd 25.05, CV 1.496.
        let b = city("bologna").unwrap();
        assert!((b.window_cv - 1.4962).abs() < 1e-3, "{}", b.window_cv);
        // LA: sd 32.73 over 29.28, CV 1.118; Macao: sd 40.68 over 21.28, CV 1.911.
        assert!((city("la").unwrap().window_cv - 1.118).abs() < 1e-3);
        assert!((city("macao").unwrap().window_cv - 1.911).abs() < 1e-3);
        // Holes: mean 4x the median, CV sqrt(15) = 3.873; Paris 1/ln 2: sqrt(1/ln²2 - 1) = 1.040.
        assert!((b.hole_cv - 15f64.sqrt()).abs() < 1e-12);
        let p = city("paris").unwrap();
        assert!((p.hole_cv - 1.0400).abs() < 1e-3, "{}", p.hole_cv);
        // Paris's association CV: (19.56/14.54 + 30.67/26.94 + 41.57/24.52)/3 = 1.3931.
        assert!((p.window_cv - 1.3931).abs() < 1e-3, "{}", p.window_cv);
        // No data: 1 - 1179/1501 = 0.2145 (Bologna), 1 - 664/1812 = 0.6336 (Paris).
        assert!((b.setup_failure - 0.2145).abs() < 1e-4);
        assert!((p.setup_failure - 0.6336).abs() < 1e-4);
        assert_eq!(
            (b.window_mean_ns, b.hole_mean_ns, b.setup_ns),
            (16_740_000_000, 12_230_000_000, 1_090_000_000)
        );
        let m = city("macao").unwrap();
        assert_eq!(
            (m.hole_mean_ns, m.setup_ns),
            (112_270_000_000, 1_480_000_000)
        );
        assert_eq!(city("la").unwrap().setup_ns, 2_760_000_000);
        assert!(city("rome").is_none());
    }

    #[test]
    fn drawn_schedules_have_the_city_means_and_medians() {
        // 40,000 associations per city. Standard errors of the sample means: CV/sqrt(n), 0.95 %
        // for Macao's associations and 1.9 % for the holes (CV 3.87); bands of 4 and 8 %.
        for name in CITIES {
            let p = city(name).unwrap();
            let n = 40_000;
            let assoc: Vec<Association> = Schedule::new(p, Stream::new(7, name)).take(n).collect();
            let windows: Vec<f64> = assoc.iter().map(|a| (a.end - a.start) as f64).collect();
            let mut holes: Vec<f64> = assoc
                .windows(2)
                .map(|w| (w[1].start - w[0].end) as f64)
                .collect();
            let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
            let w = mean(&windows) / p.window_mean_ns as f64;
            let h = mean(&holes) / p.hole_mean_ns as f64;
            holes.sort_by(f64::total_cmp);
            let median_ratio = p.hole_mean_ns as f64 / holes[holes.len() / 2];
            let want_ratio = (1.0 + p.hole_cv * p.hole_cv).sqrt();
            let dead = assoc.iter().filter(|a| a.data_from == a.end).count() as f64 / n as f64;
            eprintln!(
                "{name}: association mean x{w:.4}, hole mean x{h:.4}, hole mean/median \
                 {median_ratio:.3} (want {want_ratio:.3}), no data {dead:.4} (failures {:.4})",
                p.setup_failure
            );
            assert!((w - 1.0).abs() < 0.04, "{name}: association mean x{w}");
            assert!((h - 1.0).abs() < 0.08, "{name}: hole mean x{h}");
            assert!(
                (median_ratio / want_ratio - 1.0).abs() < 0.03,
                "{name}: {median_ratio}"
            );
            // The failures, plus the associations shorter than the set-up: P(W < setup) of the
            // log-normal, Φ((ln setup − μ)/σ) (by hand: Bologna 0.024, LA 0.015, Macao 0.063,
            // Paris 0.019; so 0.233, 0.209, 0.180, 0.640 of the associations).
            let sigma2 = (1.0 + p.window_cv * p.window_cv).ln();
            let mu = (p.window_mean_ns as f64).ln() - sigma2 / 2.0;
            let z = ((p.setup_ns as f64).ln() - mu) / sigma2.sqrt();
            let short = 0.5 * crate::link::radio::erfc(-z / std::f64::consts::SQRT_2);
            let want = p.setup_failure + (1.0 - p.setup_failure) * short;
            eprintln!("  shorter than the set-up {short:.4}: want {want:.4}");
            assert!((dead - want).abs() < 0.01, "{name}: {dead} against {want}");
        }
    }

    #[test]
    fn keys_are_checked() {
        let v = |s: &str| -> Value {
            toml::from_str::<Table>(&format!("d = {s}")).unwrap()["d"].clone()
        };
        assert_eq!(
            parse("driveby", &v("\"macao\"")).unwrap(),
            city("macao").unwrap()
        );
        let e = parse("driveby", &v("\"rome\"")).unwrap_err();
        assert_eq!(e.0, "driveby");
        assert!(e.1.contains("\"paris\""), "{}", e.1);
        let p = parse(
            "driveby",
            &v("{ city = \"la\", setup = \"0s\", offline = \"hold\" }"),
        )
        .unwrap();
        assert_eq!(
            (p.setup_ns, p.offline, p.window_mean_ns),
            (0, Offline::Hold, 29_280_000_000)
        );
        let p = parse(
            "driveby",
            &v("{ window_mean = \"10s\", hole_mean = \"5s\", setup = \"1s\" }"),
        )
        .unwrap();
        assert_eq!(p, fixed(10, 5, 1));
        let e = parse("driveby", &v("{ window_mean = \"10s\", setup = \"1s\" }")).unwrap_err();
        assert_eq!(e.0, "driveby.hole_mean");
        let e = parse("driveby", &v("{ city = \"la\", speed = 3 }")).unwrap_err();
        assert_eq!(e.0, "driveby.speed");
        assert!(e.1.contains("window_cv"), "{}", e.1);
        let e = parse("driveby", &v("{ city = \"la\", window_mean = \"0s\" }")).unwrap_err();
        assert_eq!(e.0, "driveby.window_mean");
        let e = parse("driveby", &v("{ city = \"la\", setup_failure = 1.5 }")).unwrap_err();
        assert_eq!(e.0, "driveby.setup_failure");
        let e = parse("driveby", &v("{ city = \"la\", hole_cv = -1 }")).unwrap_err();
        assert_eq!(e.0, "driveby.hole_cv");
        let e = parse("driveby", &v("{ city = \"la\", offline = \"keep\" }")).unwrap_err();
        assert!(e.1.contains("\"hold\""), "{}", e.1);
        let e = parse("driveby", &v("3")).unwrap_err();
        assert!(e.1.contains("window_mean"), "{}", e.1);
    }
}
