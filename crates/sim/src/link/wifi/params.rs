//! A WiFi cell's own keys (`[links.NAME]` with `kind = "wifi"` and its
//! `[links.NAME.stations.STA]` tables): checked once when the scenario is parsed
//! ([`check`], through the registry's [`LinkKind`]), read again infallibly when the model is
//! built.

use super::super::radio::{bad, describe, read_direction, read_distance, read_speed, read_unit};
use super::bss::{self, SurveyRx};
use super::driveby::{self, DrivebyParams};
use super::edca::Ac;
use super::phy::{Phy, Standard};
use super::snr::{self, LinkBudget, Mobility, Snr};
use rove_scenario::parse::join;
use rove_scenario::{LinkKind, ModelShape};
use toml::{Table, Value};

/// The common link keys a WiFi cell takes: `delay` (after the air, e.g. the wire behind the AP)
/// and `buffer` (the limit of each DropTail queue: each AP queue per station, each station's).
const COMMON_KEYS: &[&str] = &["delay", "buffer"];
const OWN_KEYS: &[&str] = &[
    "standard",
    "mcs",
    "retry_limit",
    "aggregation",
    "width",
    "guard_interval",
    "spatial_streams",
    "ideal_fer",
    "edca",
    "aqm",
    "sample_interval",
    "scheduler",
    "tx_power",
    "noise_figure",
    "path_loss_exponent",
    "reference_loss",
    "aps",
    "survey_rx",
    "stations",
];
const STATION_KEYS: &[&str] = &[
    "snr",
    "snr_trace",
    "distance",
    "speed",
    "direction",
    "mcs",
    "ac",
    "driveby",
    "ap",
];

/// What the scenario parser knows of `kind = "wifi"`.
pub const KIND: LinkKind = LinkKind {
    kind: "wifi",
    common_keys: Some(COMMON_KEYS),
    own_keys: OWN_KEYS,
    check,
};

/// The standards the `standard` key names.
const STANDARDS: &[&str] = &["80211a", "80211n", "80211ac"];
/// Default `mcs`: 7, 54 Mbit/s.
pub const DEFAULT_MCS: usize = 7;
/// Default `retry_limit`: dot11ShortRetryLimit = 7 (802.11-2016 Annex C; every data frame is
/// short, as dot11RTSThreshold's default disables RTS/CTS). A frame is sent at most this many
/// times: it is discarded when its retry count reaches the limit (10.3.4.4).
pub const DEFAULT_RETRY_LIMIT: u32 = 7;
/// Default `ideal_fer`: [GAP] `mcs = "ideal"` takes the highest MCS whose frame error rate at
/// the current SNR is below 1 %, about ns-3's IdealWifiManager default (BerThreshold 1e-6 over
/// a 1500-byte frame's ~12300 bits: 1.2 %).
pub const DEFAULT_IDEAL_FER: f64 = 0.01;

/// mac80211's per-station CoDel parameters: `sta->cparams.target = MS2TIME(20)` and
/// `sta->cparams.interval = MS2TIME(100)` (net/mac80211/sta_info.c, `sta_info_alloc`; the
/// same values as `local->cparams` in tx.c `ieee80211_txq_setup_flows`).
pub const CODEL_TARGET_NS: crate::Nanos = 20_000_000;
pub const CODEL_INTERVAL_NS: crate::Nanos = 100_000_000;

/// The discipline of the cell's queues (`aqm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aqm {
    /// DropTail at `buffer` packets (the default, the cell's behaviour before `aqm`).
    DropTail,
    /// CoDel at mac80211's per-station target and interval, `buffer` still bounding the queue.
    CoDel,
}

/// The order the AP takes its stations' queues in (`scheduler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// Round robin, a frame (or an A-MPDU) per turn (the default).
    RoundRobin,
    /// mac80211's airtime-fairness deficit round robin.
    Airtime,
}

/// How a station's frames choose their MCS.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    Fixed(usize),
    /// The highest MCS whose FER at the current SNR is below `ideal_fer`.
    Ideal,
    Minstrel,
}

impl Rate {
    /// The highest rate frames may take.
    pub fn peak_bps(self, phy: &Phy) -> u64 {
        match self {
            Rate::Fixed(m) => phy.rate_bps(m),
            Rate::Ideal | Rate::Minstrel => phy.peak_bps(),
        }
    }
}

/// A WiFi cell as its keys describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct WifiParams {
    pub phy: Phy,
    pub aggregation: bool,
    pub retry_limit: u32,
    pub ideal_fer: f64,
    /// Key `edca`: four access categories (Table 9-155) instead of the DCF.
    pub edca: bool,
    pub aqm: Aqm,
    pub scheduler: Scheduler,
    /// Key `sample_interval`: how often the cell's counters are sampled into `radio.parquet`;
    /// `None`: at the recorder's sample interval.
    pub sample_interval_ns: Option<crate::Nanos>,
    /// Key `aps`: the access points sharing the channel ([`super::bss`]); one, named
    /// [`bss::DEFAULT_AP`], without the key.
    pub aps: Vec<String>,
    /// Key `survey_rx`: what an AP's survey counts as rx time.
    pub survey_rx: SurveyRx,
    /// In port order: station `i` has ports `2i` (AP to station) and `2i + 1` (its uplink).
    pub stations: Vec<Station>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Station {
    pub name: String,
    /// The rate choice of frames to and from this station.
    pub rate: Rate,
    pub snr: Snr,
    /// Key `ac`: the access category of the station's frames both ways (its AP queue's and
    /// its own); BE unless given (needs `edca = true`).
    pub ac: Ac,
    /// Key `driveby`: the station passes roadside APs ([`super::driveby`]); `None`: always
    /// associated.
    pub driveby: Option<DrivebyParams>,
    /// Key `ap`: the index in `aps` of the access point it is associated with.
    pub ap: usize,
}

type Res<T> = Result<T, (String, String)>;

fn check(t: &Table) -> Result<ModelShape, (String, String)> {
    let p = parse(t)?;
    let ports = p
        .stations
        .iter()
        .flat_map(|s| [s.name.clone(), format!("{}:up", s.name)])
        .collect();
    let peak_bps = p
        .stations
        .iter()
        .map(|s| s.rate.peak_bps(&p.phy))
        .max()
        .unwrap_or(0);
    Ok(ModelShape { ports, peak_bps })
}

/// Reads a WiFi cell's own keys; errors as (key relative to the link, message).
pub fn parse(t: &Table) -> Res<WifiParams> {
    let standard = match t.get("standard") {
        None => Standard::A,
        Some(Value::String(s)) if s == "80211a" => Standard::A,
        Some(Value::String(s)) if s == "80211n" => Standard::N,
        Some(Value::String(s)) if s == "80211ac" => Standard::Ac,
        Some(v) => {
            return Err(bad(
                "standard",
                v,
                &format!("one of {}", STANDARDS.join(", ")),
            ))
        }
    };
    let phy = read_phy(t, standard)?;
    let aggregation = match t.get("aggregation") {
        None | Some(Value::Boolean(false)) => false,
        Some(Value::Boolean(true)) if standard == Standard::A => {
            return Err((
                "aggregation".into(),
                "802.11a has no A-MPDU; aggregation needs standard = \"80211n\" or \"80211ac\""
                    .into(),
            ))
        }
        Some(Value::Boolean(true)) => true,
        Some(v) => return Err(bad("aggregation", v, "true or false")),
    };
    let mcs = match t.get("mcs") {
        None => Rate::Fixed(DEFAULT_MCS),
        Some(v) => read_mcs("mcs", v, &phy)?,
    };
    let ideal_fer = match t.get("ideal_fer") {
        None => DEFAULT_IDEAL_FER,
        Some(Value::Float(x)) if *x > 0.0 && *x < 1.0 => *x,
        Some(v) => {
            return Err(bad(
                "ideal_fer",
                v,
                "a frame error rate between 0 and 1 exclusive, like 0.01",
            ))
        }
    };
    let retry_limit = match t.get("retry_limit") {
        None => DEFAULT_RETRY_LIMIT,
        Some(Value::Integer(n)) if (1..=1_000_000).contains(n) => *n as u32,
        Some(v) => {
            return Err(bad(
                "retry_limit",
                v,
                "an integer from 1 to 1000000 (transmissions of a frame before it is dropped)",
            ))
        }
    };
    let edca = match t.get("edca") {
        None | Some(Value::Boolean(false)) => false,
        Some(Value::Boolean(true)) => true,
        Some(v) => return Err(bad("edca", v, "true or false")),
    };
    let aqm = match t.get("aqm") {
        None => Aqm::DropTail,
        Some(Value::String(s)) if s == "droptail" => Aqm::DropTail,
        Some(Value::String(s)) if s == "codel" => Aqm::CoDel,
        Some(v) => return Err(bad("aqm", v, "\"droptail\" or \"codel\"")),
    };
    let scheduler = match t.get("scheduler") {
        None => Scheduler::RoundRobin,
        Some(Value::String(s)) if s == "rr" => Scheduler::RoundRobin,
        Some(Value::String(s)) if s == "airtime" => Scheduler::Airtime,
        Some(v) => return Err(bad("scheduler", v, "\"rr\" or \"airtime\"")),
    };
    let sample_interval_ns = match t.get("sample_interval") {
        None => None,
        Some(Value::String(s)) => match rove_scenario::units::parse_time(s) {
            Ok(ns) if ns > 0 => Some(ns),
            _ => {
                return Err(bad(
                    "sample_interval",
                    &Value::String(s.clone()),
                    "a positive time like \"4ms\"",
                ))
            }
        },
        Some(v) => return Err(bad("sample_interval", v, "a positive time like \"4ms\"")),
    };
    let budget = read_budget(t, &phy)?;
    let aps = bss::read_aps(t)?;
    let survey_rx = bss::read_survey_rx(t)?;
    let looks_like = "a table of stations like [links.air.stations.s1] with snr = \"30dB\"";
    let stations = match t.get("stations") {
        Some(Value::Table(s)) if !s.is_empty() => s,
        None => {
            return Err((
                "stations".into(),
                format!("missing required key \"stations\" ({looks_like})"),
            ))
        }
        Some(v) => return Err(bad("stations", v, looks_like)),
    };
    if stations.len() > (u16::MAX / 2) as usize {
        return Err((
            "stations".into(),
            format!("at most {} stations", u16::MAX / 2),
        ));
    }
    let stations = stations
        .iter()
        .map(|(name, v)| station(name, v, mcs, &phy, edca, budget, &aps))
        .collect::<Res<Vec<_>>>()?;
    bss::check_every_ap_has_stations(&aps, stations.iter().map(|s| s.ap))?;
    Ok(WifiParams {
        phy,
        aggregation,
        retry_limit,
        ideal_fer,
        edca,
        aqm,
        scheduler,
        sample_interval_ns,
        aps: aps.names,
        survey_rx,
        stations,
    })
}

fn station(
    name: &str,
    v: &Value,
    link_mcs: Rate,
    phy: &Phy,
    edca: bool,
    budget: LinkBudget,
    aps: &bss::Aps,
) -> Res<Station> {
    let path = join("stations", name);
    if name.is_empty() || name.contains(':') {
        return Err((path, "a station name must be non-empty, without ':'".into()));
    }
    let Value::Table(t) = v else {
        return Err(bad(
            &path,
            v,
            "a table of station settings like snr = \"30dB\"",
        ));
    };
    if let Some(key) = t.keys().find(|k| !STATION_KEYS.contains(&k.as_str())) {
        return Err((
            join(&path, key),
            format!(
                "unknown key {key:?}; accepted keys: {}",
                STATION_KEYS.join(", ")
            ),
        ));
    }
    let mcs = match t.get("mcs") {
        None => link_mcs,
        Some(v) => read_mcs(&join(&path, "mcs"), v, phy)?,
    };
    let given: Vec<&str> = ["snr", "snr_trace", "distance"]
        .into_iter()
        .filter(|k| t.contains_key(*k))
        .collect();
    if given.len() > 1 {
        return Err((
            join(&path, given[1]),
            format!(
                "give one of snr, snr_trace or distance (mobility), not {}",
                given.join(" and ")
            ),
        ));
    }
    if t.get("distance").is_none() {
        if let Some(key) = ["speed", "direction"]
            .into_iter()
            .find(|k| t.contains_key(*k))
        {
            return Err((
                join(&path, key),
                "a moving station needs its start distance from the AP: distance = \"10m\"".into(),
            ));
        }
    }
    let snr = match (t.get("snr"), t.get("snr_trace"), t.get("distance")) {
        (Some(v), _, _) => Snr::Fixed(read_db(v).map_err(|m| (join(&path, "snr"), m))?),
        (_, Some(v), _) => Snr::Trace(read_trace(v).map_err(|m| (join(&path, "snr_trace"), m))?),
        (_, _, Some(_)) => Snr::Moving(mobility(t, &path)?, budget),
        (None, None, None) => Snr::Perfect,
    };
    let ac = match t.get("ac") {
        None => Ac::Be,
        Some(v) if !edca => {
            return Err((
                join(&path, "ac"),
                format!(
                    "an access category needs edca = true on the link (got ac = {})",
                    describe(v)
                ),
            ))
        }
        Some(Value::String(s)) if Ac::from_name(s).is_some() => Ac::from_name(s).expect("checked"),
        Some(v) => {
            return Err(bad(
                &join(&path, "ac"),
                v,
                "one of \"bk\", \"be\", \"vi\", \"vo\"",
            ))
        }
    };
    let driveby = match t.get("driveby") {
        None => None,
        Some(v) => Some(driveby::parse(&join(&path, "driveby"), v)?),
    };
    let ap = bss::read_station_ap(&path, t.get("ap"), aps)?;
    Ok(Station {
        name: name.to_string(),
        rate: mcs,
        snr,
        ac,
        driveby,
        ap,
    })
}

/// A station's `distance`, `speed` and `direction`.
fn mobility(t: &Table, path: &str) -> Res<Mobility> {
    let key = |k: &str| join(path, k);
    let distance_m = t
        .get("distance")
        .and_then(|v| read_distance(v).filter(|d| *d >= 0.0).map(|d| (v, d)));
    let Some((_, distance_m)) = distance_m else {
        let v = t.get("distance").expect("called with a distance");
        return Err(bad(
            &key("distance"),
            v,
            "a distance from the AP like \"10m\" (at least 0)",
        ));
    };
    let speed_m_s = match t.get("speed") {
        None => 0.0,
        Some(v) => read_speed(v).filter(|s| *s >= 0.0).ok_or_else(|| {
            bad(
                &key("speed"),
                v,
                "a speed like \"2m/s\" or \"5km/h\" (at least 0)",
            )
        })?,
    };
    let direction = read_direction(&key("direction"), t.get("direction"), "the AP")?;
    Ok(Mobility {
        distance_m,
        speed_m_s,
        direction,
    })
}

/// The cell's link budget for moving stations: `tx_power`, `noise_figure`,
/// `path_loss_exponent`, `reference_loss` ([`snr`] gives the sources of the defaults).
fn read_budget(t: &Table, phy: &Phy) -> Res<LinkBudget> {
    let number = |key: &str, unit: &str, default: f64, ok: fn(f64) -> bool, accepted: &str| match t
        .get(key)
    {
        None => Ok(default),
        Some(v) => read_unit(v, unit)
            .filter(|x| ok(*x))
            .ok_or_else(|| bad(key, v, accepted)),
    };
    let tx_power = number(
        "tx_power",
        "dBm",
        snr::DEFAULT_TX_POWER_DBM,
        |x| x.abs() < 100.0,
        "a power like \"16dBm\"",
    )?;
    let noise_figure = number(
        "noise_figure",
        "dB",
        snr::DEFAULT_NOISE_FIGURE_DB,
        |x| (0.0..50.0).contains(&x),
        "a noise figure like \"7dB\" (0 to 50)",
    )?;
    let exponent = number(
        "path_loss_exponent",
        "",
        snr::DEFAULT_PATH_LOSS_EXPONENT,
        |x| (1.0..=8.0).contains(&x),
        "a path-loss exponent from 1 to 8, like 3",
    )?;
    let reference_loss = number(
        "reference_loss",
        "dB",
        snr::DEFAULT_REFERENCE_LOSS_DB,
        |x| (0.0..200.0).contains(&x),
        "the path loss at 1 m like \"46.6777dB\" (0 to 200)",
    )?;
    Ok(LinkBudget::new(
        tx_power,
        noise_figure,
        phy.width_mhz,
        exponent,
        reference_loss,
    ))
}

/// `snr_trace`: a file of `time_s dB` lines (a path relative to the current directory), or an
/// inline array of `[time_s, dB]` pairs.
fn read_trace(v: &Value) -> Result<Vec<(crate::Nanos, f64)>, String> {
    let looks_like = "a file of \"time_s dB\" lines or an array like [[0, 30], [10, 12]]";
    match v {
        Value::String(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read SNR trace {file:?}: {e}"))?;
            snr::parse_trace(&text).map_err(|m| format!("SNR trace {file:?}: {m}"))
        }
        Value::Array(items) if !items.is_empty() => {
            let mut points = Vec::new();
            for item in items {
                let pair = match item {
                    Value::Array(p) if p.len() == 2 => p,
                    _ => {
                        return Err(format!(
                            "expected {looks_like}, got an item {}",
                            describe(item)
                        ))
                    }
                };
                let num = |x: &Value| match x {
                    Value::Integer(n) => Some(*n as f64),
                    Value::Float(f) => Some(*f),
                    _ => None,
                };
                let (Some(t), Some(db)) = (num(&pair[0]), num(&pair[1])) else {
                    return Err(format!(
                        "expected {looks_like}, got an item {}",
                        describe(item)
                    ));
                };
                snr::push_point(&mut points, t, db)?;
            }
            Ok(points)
        }
        v => Err(format!("expected {looks_like}, got {}", describe(v))),
    }
}

fn read_mcs(key: &str, v: &Value, phy: &Phy) -> Res<Rate> {
    let valid: Vec<String> = (0..phy.mcs_count())
        .filter(|&m| phy.valid(m))
        .map(|m| m.to_string())
        .collect();
    match v {
        Value::Integer(n) if *n >= 0 && phy.valid(*n as usize) => Ok(Rate::Fixed(*n as usize)),
        Value::String(s) if s == "ideal" => Ok(Rate::Ideal),
        Value::String(s) if s == "minstrel" => Ok(Rate::Minstrel),
        v => Err(bad(
            key,
            v,
            &format!(
                "a fixed MCS index valid for this standard, width and streams ({}; 802.11a: 0 = 6 Mbit/s, 7 = 54 Mbit/s), \"ideal\" or \"minstrel\"",
                valid.join(", ")
            ),
        )),
    }
}

/// `width`, `guard_interval` and `spatial_streams` (802.11n/ac only).
fn read_phy(t: &Table, standard: Standard) -> Res<Phy> {
    if standard == Standard::A {
        if let Some(key) = ["width", "guard_interval", "spatial_streams"]
            .into_iter()
            .find(|k| t.contains_key(*k))
        {
            return Err((
                key.into(),
                "802.11a has one 20 MHz channel, the long guard interval and one stream; this key is for standard = \"80211n\" or \"80211ac\"".into(),
            ));
        }
        return Ok(Phy::A);
    }
    let widths: &[(&str, u32)] = if standard == Standard::N {
        &[("20MHz", 20), ("40MHz", 40)]
    } else {
        &[("20MHz", 20), ("40MHz", 40), ("80MHz", 80)]
    };
    let names: Vec<String> = widths.iter().map(|(n, _)| format!("{n:?}")).collect();
    let width_mhz = match t.get("width") {
        None => 20,
        Some(Value::String(s)) => match widths.iter().find(|(n, _)| n == s) {
            Some(&(_, w)) => w,
            None => return Err(bad("width", &Value::String(s.clone()), &names.join(", "))),
        },
        Some(v) => return Err(bad("width", v, &names.join(", "))),
    };
    let short_gi = match t.get("guard_interval") {
        None => false,
        Some(Value::String(s)) if s == "long" || s == "800ns" => false,
        Some(Value::String(s)) if s == "short" || s == "400ns" => true,
        Some(v) => {
            return Err(bad(
                "guard_interval",
                v,
                "\"long\" (800 ns) or \"short\" (400 ns)",
            ))
        }
    };
    let streams = match t.get("spatial_streams") {
        None => 1,
        Some(Value::Integer(n)) if (1..=4).contains(n) => *n as u32,
        Some(v) => return Err(bad("spatial_streams", v, "an integer from 1 to 4")),
    };
    Ok(Phy {
        standard,
        width_mhz,
        short_gi,
        streams,
    })
}

/// `"30dB"` or a number of dB.
fn read_db(v: &Value) -> Result<f64, String> {
    read_unit(v, "dB").ok_or_else(|| format!("expected an SNR like \"30dB\", got {}", describe(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn stations_become_a_downlink_and_an_uplink_port_each() {
        let shape = check(&table(
            "mcs = 5\n[stations.s1]\nsnr = \"30dB\"\n[stations.s2]\nmcs = 7",
        ))
        .unwrap();
        assert_eq!(shape.ports, vec!["s1", "s1:up", "s2", "s2:up"]);
        assert_eq!(shape.peak_bps, 54_000_000);
        let p = parse(&table("mcs = 5\n[stations.s1]\nsnr = \"30dB\"")).unwrap();
        assert_eq!(p.stations[0].rate, Rate::Fixed(5));
        assert_eq!(p.stations[0].snr, Snr::Fixed(30.0));
        assert_eq!(p.retry_limit, 7);
    }

    #[test]
    fn bad_keys_name_the_key_and_what_is_accepted() {
        let e = parse(&table("[stations.s1]\nsnr = \"loud\"")).unwrap_err();
        assert_eq!(e.0, "stations.s1.snr");
        assert!(e.1.contains("30dB"), "{}", e.1);
        let e = parse(&table("[stations.s1]\nmcs = 8")).unwrap_err();
        assert_eq!(e.0, "stations.s1.mcs");
        let e = parse(&table("standard = \"80211g\"\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "standard");
        let e = parse(&table("width = \"40MHz\"\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "width");
        let e = parse(&table(
            "standard = \"80211n\"\nwidth = \"80MHz\"\n[stations.s1]",
        ))
        .unwrap_err();
        assert!(e.1.contains("\"40MHz\""), "{}", e.1);
        let e = parse(&table("standard = \"80211ac\"\nmcs = 9\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "mcs");
        assert!(e.1.contains("0, 1, 2, 3, 4, 5, 6, 7, 8;"), "{}", e.1);
        let p = parse(&table(
            "standard = \"80211ac\"\nwidth = \"80MHz\"\nguard_interval = \"short\"\nspatial_streams = 2\nmcs = 9\n[stations.s1]",
        ))
        .unwrap();
        assert_eq!(p.phy.rate_bps(9), 866_666_666);
        let e = parse(&table("mcs = \"fast\"\n[stations.s1]")).unwrap_err();
        assert!(e.1.contains("minstrel"), "{}", e.1);
        let e = parse(&table("[stations.s1]\nsnr_trace = [[0, 30], [0, 20]]")).unwrap_err();
        assert_eq!(e.0, "stations.s1.snr_trace");
        assert!(e.1.contains("increase"), "{}", e.1);
        let e = parse(&table("[stations.s1]\nsnr_trace = \"/nonexistent\"")).unwrap_err();
        assert!(e.1.contains("cannot read"), "{}", e.1);
        let e = parse(&table("ideal_fer = 2.0\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "ideal_fer");
        let p = parse(&table(
            "mcs = \"minstrel\"\n[stations.s1]\nsnr_trace = [[0, 30], [1.5, 12]]\nmcs = \"ideal\"",
        ))
        .unwrap();
        assert_eq!(p.stations[0].rate, Rate::Ideal);
        assert_eq!(
            p.stations[0].snr,
            Snr::Trace(vec![(0, 30.0), (1_500_000_000, 12.0)])
        );
        let e = parse(&table("[stations.s1]\nac = \"vo\"")).unwrap_err();
        assert_eq!(e.0, "stations.s1.ac");
        assert!(e.1.contains("edca = true"), "{}", e.1);
        let e = parse(&table("edca = true\n[stations.s1]\nac = \"video\"")).unwrap_err();
        assert_eq!(e.0, "stations.s1.ac");
        assert!(e.1.contains("\"vo\""), "{}", e.1);
        let e = parse(&table("edca = 1\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "edca");
        let e = parse(&table("aqm = \"red\"\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "aqm");
        assert!(e.1.contains("\"codel\""), "{}", e.1);
        let e = parse(&table("scheduler = \"wfq\"\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "scheduler");
        assert!(e.1.contains("\"airtime\""), "{}", e.1);
        let e = parse(&table("sample_interval = \"0ms\"\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "sample_interval");
        let e = parse(&table("sample_interval = 4\n[stations.s1]")).unwrap_err();
        assert!(e.1.contains("\"4ms\""), "{}", e.1);
        let p = parse(&table(
            "edca = true\naqm = \"codel\"\nsample_interval = \"4ms\"\n[stations.s1]\nac = \"vi\"\n[stations.s2]",
        ))
        .unwrap();
        assert!(p.edca);
        assert_eq!(p.aqm, Aqm::CoDel);
        assert_eq!(p.sample_interval_ns, Some(4_000_000));
        assert_eq!((p.stations[0].ac, p.stations[1].ac), (Ac::Vi, Ac::Be));
        let e = parse(&table("[stations.s1]\nspeed = 3")).unwrap_err();
        assert_eq!(e.0, "stations.s1.speed");
        assert!(e.1.contains("distance"), "{}", e.1);
        let e = parse(&table(
            "[stations.s1]\nspeed = 3\ndistance = \"5m\"\nsnr = 3",
        ))
        .unwrap_err();
        assert_eq!(e.0, "stations.s1.distance");
        assert!(e.1.contains("not snr and distance"), "{}", e.1);
        let e = parse(&table("[stations.s1]\ndistance = \"near\"")).unwrap_err();
        assert_eq!(e.0, "stations.s1.distance");
        assert!(e.1.contains("\"10m\""), "{}", e.1);
        let e = parse(&table("[stations.s1]\ndistance = 5\ndirection = \"up\"")).unwrap_err();
        assert_eq!(e.0, "stations.s1.direction");
        assert!(e.1.contains("towards the AP"), "{}", e.1);
        let e = parse(&table("[stations.s1]\ndistance = 5\nspeed = \"-2m/s\"")).unwrap_err();
        assert_eq!(e.0, "stations.s1.speed");
        let e = parse(&table("path_loss_exponent = 0.5\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "path_loss_exponent");
        assert!(e.1.contains("1 to 8"), "{}", e.1);
        let e = parse(&table("tx_power = \"loud\"\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "tx_power");
        let p = parse(&table(
            "standard = \"80211n\"\nwidth = \"40MHz\"\ntx_power = \"20dBm\"\nnoise_figure = \"5dB\"\npath_loss_exponent = 3.5\nreference_loss = \"40dB\"\n[stations.s1]\ndistance = \"10m\"\nspeed = \"7.2km/h\"\ndirection = \"forward\"",
        ))
        .unwrap();
        let Snr::Moving(m, b) = p.stations[0].snr else {
            panic!("{:?}", p.stations[0].snr)
        };
        assert_eq!((m.distance_m, m.speed_m_s, m.direction), (10.0, 2.0, -1.0));
        // N = -174 + 10 log10(40e6) + 5 = -92.9794 dBm; PL(10 m) = 40 + 35 = 75 dB.
        assert!((b.noise_dbm + 92.9794).abs() < 1e-4, "{}", b.noise_dbm);
        assert!((b.snr_db(10.0) - (20.0 - 75.0 + 92.9794)).abs() < 1e-4);
        assert_eq!(parse(&table("mcs = 1")).unwrap_err().0, "stations");
    }
}
