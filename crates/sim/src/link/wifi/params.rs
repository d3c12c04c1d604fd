//! A WiFi cell's own keys (`[links.NAME]` with `kind = "wifi"` and its
//! `[links.NAME.stations.STA]` tables): checked once when the scenario is parsed
//! ([`check`], through the registry's [`LinkKind`]), read again infallibly when the model is
//! built.

use super::phy;
use rove_scenario::parse::join;
use rove_scenario::{LinkKind, ModelShape};
use toml::{Table, Value};

/// The common link keys a WiFi cell takes: `delay` (after the air, e.g. the wire behind the AP)
/// and `buffer` (the limit of each DropTail queue: each AP queue per station, each station's).
const COMMON_KEYS: &[&str] = &["delay", "buffer"];
const OWN_KEYS: &[&str] = &["standard", "mcs", "retry_limit", "aggregation", "stations"];
const STATION_KEYS: &[&str] = &["snr", "mcs"];

/// What the scenario parser knows of `kind = "wifi"`.
pub const KIND: LinkKind = LinkKind {
    kind: "wifi",
    common_keys: Some(COMMON_KEYS),
    own_keys: OWN_KEYS,
    check,
};

/// The standards the `standard` key names; only 802.11a is built.
const STANDARDS: &[&str] = &["80211a", "80211n", "80211ac"];
/// Default `mcs`: 7, 54 Mbit/s.
pub const DEFAULT_MCS: usize = 7;
/// Default `retry_limit`: dot11ShortRetryLimit = 7 (802.11-2016 Annex C; every data frame is
/// short, as dot11RTSThreshold's default disables RTS/CTS). A frame is sent at most this many
/// times: it is discarded when its retry count reaches the limit (10.3.4.4).
pub const DEFAULT_RETRY_LIMIT: u32 = 7;

/// A WiFi cell as its keys describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct WifiParams {
    pub retry_limit: u32,
    /// In port order: station `i` has ports `2i` (AP to station) and `2i + 1` (its uplink).
    pub stations: Vec<Station>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Station {
    pub name: String,
    /// The 802.11a MCS of frames to and from this station.
    pub mcs: usize,
    /// [GAP] stored, unused in this step: no PHY error model yet (every frame that does not
    /// collide is received).
    pub snr_db: Option<f64>,
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
        .map(|s| phy::rate_bps(s.mcs))
        .max()
        .unwrap_or(0);
    Ok(ModelShape { ports, peak_bps })
}

/// Reads a WiFi cell's own keys; errors as (key relative to the link, message).
pub fn parse(t: &Table) -> Res<WifiParams> {
    let standard = match t.get("standard") {
        None => "80211a",
        Some(Value::String(s)) if STANDARDS.contains(&s.as_str()) => s.as_str(),
        Some(v) => {
            return Err(bad(
                "standard",
                v,
                &format!("one of {}", STANDARDS.join(", ")),
            ))
        }
    };
    if standard != "80211a" {
        return Err((
            "standard".into(),
            format!("{standard:?} is not built yet (802.11n/ac with A-MPDU are a later step); accepted now: \"80211a\""),
        ));
    }
    if let Some(v) = t.get("aggregation") {
        match v {
            Value::Boolean(false) => {}
            Value::Boolean(true) => {
                return Err((
                    "aggregation".into(),
                    "A-MPDU aggregation is not built yet (802.11a has none); accepted now: false"
                        .into(),
                ))
            }
            v => return Err(bad("aggregation", v, "false")),
        }
    }
    let mcs = match t.get("mcs") {
        None => DEFAULT_MCS,
        Some(v) => read_mcs("mcs", v)?,
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
        .map(|(name, v)| station(name, v, mcs))
        .collect::<Res<Vec<_>>>()?;
    Ok(WifiParams {
        retry_limit,
        stations,
    })
}

fn station(name: &str, v: &Value, link_mcs: usize) -> Res<Station> {
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
                "unknown key {key:?}; accepted keys: {} (snr_trace and mobility are not built yet)",
                STATION_KEYS.join(", ")
            ),
        ));
    }
    let mcs = match t.get("mcs") {
        None => link_mcs,
        Some(v) => read_mcs(&join(&path, "mcs"), v)?,
    };
    let snr_db = t
        .get("snr")
        .map(|v| read_db(v).map_err(|m| (join(&path, "snr"), m)))
        .transpose()?;
    Ok(Station {
        name: name.to_string(),
        mcs,
        snr_db,
    })
}

fn read_mcs(key: &str, v: &Value) -> Res<usize> {
    match v {
        Value::Integer(n) if (0..phy::MCS_COUNT as i64).contains(n) => Ok(*n as usize),
        Value::String(s) if s == "ideal" || s == "minstrel" => Err((
            key.into(),
            format!("mcs = {s:?} is not built yet; accepted now: a fixed index 0 to 7 (802.11a: 0 = 6 Mbit/s, 7 = 54 Mbit/s)"),
        )),
        v => Err(bad(key, v, "a fixed index 0 to 7 (802.11a: 0 = 6 Mbit/s, 7 = 54 Mbit/s)")),
    }
}

/// `"30dB"` or a number of dB.
fn read_db(v: &Value) -> Result<f64, String> {
    let x = match v {
        Value::Integer(n) => Some(*n as f64),
        Value::Float(f) => Some(*f),
        Value::String(s) => s
            .trim()
            .strip_suffix("dB")
            .and_then(|n| n.trim().parse().ok()),
        _ => None,
    };
    match x {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(format!(
            "expected an SNR like \"30dB\", got {}",
            describe(v)
        )),
    }
}

fn bad(key: &str, v: &Value, accepted: &str) -> (String, String) {
    (
        key.into(),
        format!("expected {accepted}, got {}", describe(v)),
    )
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Table(_) => "a table".into(),
        Value::Array(_) => "an array".into(),
        other => format!("{other}"),
    }
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
        assert_eq!(p.stations[0].mcs, 5);
        assert_eq!(p.stations[0].snr_db, Some(30.0));
        assert_eq!(p.retry_limit, 7);
    }

    #[test]
    fn bad_keys_name_the_key_and_what_is_accepted() {
        let e = parse(&table("[stations.s1]\nsnr = \"loud\"")).unwrap_err();
        assert_eq!(e.0, "stations.s1.snr");
        assert!(e.1.contains("30dB"), "{}", e.1);
        let e = parse(&table("[stations.s1]\nmcs = 8")).unwrap_err();
        assert_eq!(e.0, "stations.s1.mcs");
        let e = parse(&table("standard = \"80211n\"\n[stations.s1]")).unwrap_err();
        assert_eq!(e.0, "standard");
        assert!(e.1.contains("not built yet"), "{}", e.1);
        let e = parse(&table("mcs = \"minstrel\"\n[stations.s1]")).unwrap_err();
        assert!(e.1.contains("not built yet"), "{}", e.1);
        let e = parse(&table("[stations.s1]\nspeed = 3")).unwrap_err();
        assert_eq!(e.0, "stations.s1.speed");
        assert_eq!(parse(&table("mcs = 1")).unwrap_err().0, "stations");
    }
}
