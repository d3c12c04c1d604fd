//! Several access points on one channel (`aps = ["ap1", "ap2", "ap3"]`, each station's
//! `ap = "ap1"`): one BSS per AP, all in one contention domain, as seed-004's testbed had
//! three APs on one 2.4 GHz channel.
//!
//! - Every AP has its own channel-access functions (the DCF, or one EDCAF per access category
//!   its stations use), which serve only its own stations' queues; every function of every AP
//!   and station counts its own backoff, and any two transmissions in the same slot collide
//!   (one idle/busy timeline for the whole channel: every transmitter hears every other, no
//!   hidden or exposed nodes, no capture).
//! - Internal collisions (10.22.2.4) are between the functions of one AP only.
//! - Counters: the per-queue and per-station counters are per port, so each AP has its own
//!   (its stations' ports); each AP keeps its own channel survey ([`Surveys`]): the busy time
//!   is the channel's (every PPDU, whoever sent it), the tx time its own PPDUs (its data frames
//!   and the Acks it sends), the rx time what it receives (`survey_rx`, below).
//! - Without `aps` the cell has one AP, named [`DEFAULT_AP`]: the model and its outputs are
//!   exactly those of a cell before the key existed.
//!
//! [GAP] choices:
//! - `survey_rx = "all"` (default): an AP's rx time counts every PPDU on the air it did not
//!   send, its own BSS's and the other APs' alike, as a real radio's receive-frame cycle
//!   counter does (ath9k's `rx_frame` from AR_RFCNT, reported as NL80211_SURVEY_INFO_TIME_RX:
//!   the MAC filters by address after the PHY has received the frame). `"bss"`: only the PPDUs
//!   of its own BSS (its stations' frames and Acks to it), so that busy − tx − rx is the time
//!   the other BSSs took. In a collision an AP that sent counts its own PPDU as tx; one that
//!   did not counts the longest PPDU it receives as rx. With one AP both are the same.
//! - An AP without stations is refused: the model has no beacons or management frames, so it
//!   would never transmit.

use super::super::radio::{bad, describe};
use super::counters::Survey;
use crate::Nanos;
use rove_scenario::parse::join;
use toml::{Table, Value};

/// The name of a cell's single AP when `aps` is not given.
pub const DEFAULT_AP: &str = "ap";

type Res<T> = Result<T, (String, String)>;

/// What an AP's survey counts as rx time (`survey_rx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurveyRx {
    /// Every PPDU it did not send (the default).
    All,
    /// The PPDUs of its own BSS it did not send.
    Bss,
}

/// The cell's access points as the keys give them.
#[derive(Debug, Clone, PartialEq)]
pub struct Aps {
    pub names: Vec<String>,
    /// Whether `aps` was given (a station's `ap` needs it).
    pub given: bool,
}

/// Reads `aps`: a non-empty list of distinct names (without ':'), or one AP when absent.
pub fn read_aps(t: &Table) -> Res<Aps> {
    let looks_like = "a non-empty list of access point names like [\"ap1\", \"ap2\"]";
    let items = match t.get("aps") {
        None => {
            return Ok(Aps {
                names: vec![DEFAULT_AP.to_string()],
                given: false,
            })
        }
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(v) => return Err(bad("aps", v, looks_like)),
    };
    let mut names: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let name = match item {
            Value::String(s) if !s.is_empty() && !s.contains(':') => s,
            other => {
                return Err((
                    "aps".into(),
                    format!(
                        "expected {looks_like} (each non-empty, without ':'), got an item {}",
                        describe(other)
                    ),
                ))
            }
        };
        if names.contains(name) {
            return Err((
                "aps".into(),
                format!("{name:?} is listed twice; each access point once"),
            ));
        }
        names.push(name.clone());
    }
    Ok(Aps { names, given: true })
}

/// Reads `survey_rx`.
pub fn read_survey_rx(t: &Table) -> Res<SurveyRx> {
    match t.get("survey_rx") {
        None => Ok(SurveyRx::All),
        Some(Value::String(s)) if s == "all" => Ok(SurveyRx::All),
        Some(Value::String(s)) if s == "bss" => Ok(SurveyRx::Bss),
        Some(v) => Err(bad(
            "survey_rx",
            v,
            "\"all\" (every PPDU the AP did not send) or \"bss\" (its own BSS's only)",
        )),
    }
}

/// The index in `aps` of the AP a station (at `path`) names in its `ap` key: required when
/// the cell has several, optional with one, refused without `aps`.
pub fn read_station_ap(path: &str, v: Option<&Value>, aps: &Aps) -> Res<usize> {
    let key = join(path, "ap");
    let listed = || {
        aps.names
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match v {
        Some(v) if !aps.given => Err((
            key,
            format!(
                "a station's ap needs the link's list of access points, like aps = [\"ap1\", \"ap2\"] (got ap = {})",
                describe(v)
            ),
        )),
        None if aps.names.len() > 1 => Err((
            key,
            format!(
                "missing required key \"ap\": the cell has several access points; name one of {}",
                listed()
            ),
        )),
        None => Ok(0),
        Some(Value::String(s)) => aps
            .names
            .iter()
            .position(|n| n == s)
            .ok_or_else(|| bad(&key, &Value::String(s.clone()), &format!("one of {}", listed()))),
        Some(v) => Err(bad(&key, v, &format!("one of {}", listed()))),
    }
}

/// Refuses an AP that no station names.
pub fn check_every_ap_has_stations(
    aps: &Aps,
    station_aps: impl Iterator<Item = usize> + Clone,
) -> Res<()> {
    match (0..aps.names.len()).find(|&k| !station_aps.clone().any(|a| a == k)) {
        None => Ok(()),
        Some(k) => Err((
            "aps".into(),
            format!(
                "access point {:?} has no stations (give one ap = {:?}); the model has no beacons, so it would never transmit",
                aps.names[k], aps.names[k]
            ),
        )),
    }
}

/// Every AP's channel survey. A PPDU is described by its BSS (the AP index) and whether that
/// AP sent it (`by_ap`) or one of its stations did.
#[derive(Debug, Clone)]
pub struct Surveys {
    per_ap: Vec<Survey>,
    rx: SurveyRx,
}

impl Surveys {
    pub fn new(aps: usize, rx: SurveyRx) -> Self {
        Surveys {
            per_ap: vec![Survey::default(); aps],
            rx,
        }
    }

    /// AP `k`'s survey.
    pub fn ap(&self, k: usize) -> Survey {
        self.per_ap[k]
    }

    /// Whether AP `k` counts as rx a PPDU of BSS `bss` it did not send.
    fn hears(&self, k: usize, bss: usize) -> bool {
        k == bss || self.rx == SurveyRx::All
    }

    /// A PPDU alone on the air.
    pub fn frame(&mut self, bss: usize, by_ap: bool, air_ns: Nanos) {
        for k in 0..self.per_ap.len() {
            let hears = self.hears(k, bss);
            let s = &mut self.per_ap[k];
            s.busy_ns += air_ns;
            if by_ap && k == bss {
                s.tx_ns += air_ns;
            } else if hears {
                s.rx_ns += air_ns;
            }
        }
    }

    /// A PPDU and its Ack (or BlockAck), sent back by its receiver in the same BSS.
    pub fn exchange(&mut self, bss: usize, by_ap: bool, air_ns: Nanos, ack_ns: Nanos) {
        self.frame(bss, by_ap, air_ns);
        self.frame(bss, !by_ap, ack_ns);
    }

    /// PPDUs starting together (a collision): (BSS, sent by its AP, air time) each. The
    /// channel is busy for the longest; an AP that sent counts its own as tx, another the
    /// longest it receives as rx.
    pub fn collision(&mut self, ppdus: impl Iterator<Item = (usize, bool, Nanos)> + Clone) {
        let longest = ppdus.clone().map(|p| p.2).max().unwrap_or(0);
        for k in 0..self.per_ap.len() {
            let own = ppdus
                .clone()
                .filter(|&(bss, by_ap, _)| by_ap && bss == k)
                .map(|p| p.2)
                .max();
            let heard = ppdus
                .clone()
                .filter(|&(bss, _, _)| self.hears(k, bss))
                .map(|p| p.2)
                .max();
            let s = &mut self.per_ap[k];
            s.busy_ns += longest;
            match (own, heard) {
                (Some(a), _) => s.tx_ns += a,
                (None, Some(a)) => s.rx_ns += a,
                (None, None) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn without_aps_there_is_one_default_ap_and_a_station_ap_is_refused() {
        let aps = read_aps(&table("")).unwrap();
        assert_eq!(aps.names, vec!["ap"]);
        assert!(!aps.given);
        assert_eq!(read_station_ap("stations.s1", None, &aps), Ok(0));
        let e =
            read_station_ap("stations.s1", Some(&Value::String("ap".into())), &aps).unwrap_err();
        assert_eq!(e.0, "stations.s1.ap");
        assert!(e.1.contains("aps = ["), "{}", e.1);
    }

    #[test]
    fn bad_aps_name_the_key_and_what_is_accepted() {
        for text in [
            "aps = []",
            "aps = \"ap1\"",
            "aps = [1]",
            "aps = [\"\"]",
            "aps = [\"a:b\"]",
        ] {
            let e = read_aps(&table(text)).unwrap_err();
            assert_eq!(e.0, "aps", "{text}");
            assert!(e.1.contains("[\"ap1\", \"ap2\"]"), "{text}: {}", e.1);
        }
        let e = read_aps(&table("aps = [\"a\", \"b\", \"a\"]")).unwrap_err();
        assert_eq!(e.0, "aps");
        assert!(e.1.contains("\"a\" is listed twice"), "{}", e.1);
        let e = read_survey_rx(&table("survey_rx = \"own\"")).unwrap_err();
        assert_eq!(e.0, "survey_rx");
        assert!(e.1.contains("\"bss\""), "{}", e.1);
    }

    #[test]
    fn a_station_names_one_of_several_aps() {
        let aps = read_aps(&table("aps = [\"ap1\", \"ap2\"]")).unwrap();
        let ap = |v: Option<Value>| read_station_ap("stations.s1", v.as_ref(), &aps);
        assert_eq!(ap(Some(Value::String("ap2".into()))), Ok(1));
        let e = ap(None).unwrap_err();
        assert_eq!(e.0, "stations.s1.ap");
        assert!(e.1.contains("missing required key \"ap\""), "{}", e.1);
        assert!(e.1.contains("\"ap1\", \"ap2\""), "{}", e.1);
        let e = ap(Some(Value::String("ap3".into()))).unwrap_err();
        assert_eq!(e.0, "stations.s1.ap");
        assert_eq!(e.1, "expected one of \"ap1\", \"ap2\", got \"ap3\"");
        let e = ap(Some(Value::Integer(1))).unwrap_err();
        assert_eq!(e.1, "expected one of \"ap1\", \"ap2\", got 1");
        // One AP listed: `ap` may be left out.
        let one = read_aps(&table("aps = [\"x\"]")).unwrap();
        assert_eq!(read_station_ap("stations.s1", None, &one), Ok(0));
        let e = check_every_ap_has_stations(&aps, [0, 0].into_iter()).unwrap_err();
        assert_eq!(e.0, "aps");
        assert!(e.1.contains("\"ap2\" has no stations"), "{}", e.1);
        assert!(check_every_ap_has_stations(&aps, [1, 0].into_iter()).is_ok());
    }

    #[test]
    fn each_ap_counts_its_own_ppdus_as_tx_and_what_it_hears_as_rx() {
        for (rx, heard_from_other_bss) in [(SurveyRx::All, true), (SurveyRx::Bss, false)] {
            let mut s = Surveys::new(2, rx);
            // AP 0 sends 100 to its station (Ack 10 back); a station of AP 1 sends 200 up
            // (AP 1's Ack 20).
            s.exchange(0, true, 100, 10);
            s.exchange(1, false, 200, 20);
            let other = |ns: u64| if heard_from_other_bss { ns } else { 0 };
            assert_eq!(
                s.ap(0),
                Survey {
                    busy_ns: 330,
                    tx_ns: 100,
                    rx_ns: 10 + other(220)
                }
            );
            assert_eq!(
                s.ap(1),
                Survey {
                    busy_ns: 330,
                    tx_ns: 20,
                    rx_ns: 200 + other(110)
                }
            );
            // AP 0 (300) collides with a station of AP 1 (50): AP 0 sent, AP 1 receives its
            // station's 50 ("bss") or the longest, AP 0's 300 ("all").
            let mut s = Surveys::new(2, rx);
            s.collision([(0, true, 300), (1, false, 50)].into_iter());
            assert_eq!(
                s.ap(0),
                Survey {
                    busy_ns: 300,
                    tx_ns: 300,
                    rx_ns: 0
                }
            );
            let rx1 = if heard_from_other_bss { 300 } else { 50 };
            assert_eq!(
                s.ap(1),
                Survey {
                    busy_ns: 300,
                    tx_ns: 0,
                    rx_ns: rx1
                }
            );
        }
    }
}
