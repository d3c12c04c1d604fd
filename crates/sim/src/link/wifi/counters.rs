//! The AP's counters as seed-004 Table 1 lists them (what OAL samples at 250 Hz), sampled into
//! `radio.parquet`: per queue backlog, qlen, drops (by cause) and requeues; the channel survey
//! (busy, tx and rx time, as nl80211's NL80211_SURVEY_INFO_TIME_{BUSY,TX,RX}); per station
//! signal, tx bitrate, retries, failures, tx and rx bytes (nl80211 STA_INFO_*).
//!
//! One row per port per sample: port `"s1"` is the AP's queue to station s1 and the AP's
//! transmit counters towards it; port `"s1:up"` is s1's own queue and transmit counters, whose
//! `tx_bytes` are the AP's rx bytes from s1. Every counter is cumulative from the start of the
//! run (differences give rates); the survey's three times are the AP's, repeated on each
//! row of a sample. In a cell of several APs ([`super::bss`]) a row's AP is its station's
//! (the `ap` column, written only when some cell has several) and its survey is that AP's.
//!
//! [GAP] choices:
//! - A queue's backlog and qlen are the queue's only (a qdisc's or a txq's), not the frame the
//!   transmitter is sending or retrying, nor the MPDUs it holds for its next A-MPDU (the
//!   driver's and hardware's queues).
//! - The survey counts a frame's whole air time when it starts. Busy time is the union of
//!   every PPDU on the air (data, Ack, BlockAck; not SIFS, DIFS or backoff); tx time the AP's
//!   own PPDUs (its data frames and the Acks it sends); rx time the PPDUs it receives
//!   (stations' data frames, their Acks), in a collision without the AP the longest frame.
//! - `airtime_ms` is the port's data PPDUs' air time (collisions and failures included, not
//!   the Acks): mac80211's per-station airtime, the base of the airtime shares.
//! - `signal_db` is the station's SNR (the model has no transmit power or noise floor in dBm;
//!   nl80211's signal is dBm): NaN for a station without `snr`/`snr_trace`.

use super::super::LinkModel;
use super::edca::Ac;
use super::{PortCounters, Wifi};
use crate::Nanos;

/// An AP's channel survey, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Survey {
    pub busy_ns: u64,
    pub tx_ns: u64,
    pub rx_ns: u64,
}

/// The columns of `radio.parquet` (struct of arrays), appended to at each sample. Names are
/// kept as indices (a 250 Hz series of a long run has millions of rows): `link` indexes the
/// world's links, `port` the link's ports (`LinkModel::port_names`; the station is the even
/// port of its pair, the direction "down" for an even port and "up" for an odd one), `ac` is
/// an [`Ac`] as u8.
#[derive(Debug, Default, Clone)]
pub struct RadioSeries {
    pub time_s: Vec<f64>,
    pub link: Vec<u32>,
    pub port: Vec<u16>,
    pub ac: Vec<u8>,
    pub backlog_bytes: Vec<u64>,
    pub qlen: Vec<u32>,
    pub overflow_drops: Vec<u64>,
    pub codel_drops: Vec<u64>,
    /// Frames given up at the retry limit (MAC drops; nl80211 tx_failed).
    pub mac_drops: Vec<u64>,
    pub requeues: Vec<u64>,
    pub tx_packets: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    pub tx_retries: Vec<u64>,
    pub collisions: Vec<u64>,
    pub phy_errors: Vec<u64>,
    pub internal_collisions: Vec<u64>,
    /// The PHY rate of the port's last transmission; NaN before the first.
    pub tx_bitrate_bps: Vec<f64>,
    pub signal_db: Vec<f64>,
    pub survey_busy_ms: Vec<f64>,
    pub survey_tx_ms: Vec<f64>,
    pub survey_rx_ms: Vec<f64>,
    /// The port's data PPDUs' air time so far (its share of the channel).
    pub airtime_ms: Vec<f64>,
    /// The index of the port's AP among its cell's ([`RadioCounters::ap_names`]; 0 for a
    /// cell of one AP and for an LTE cell).
    pub ap: Vec<u16>,
    // LTE rows' own columns (crates/sim link/lte/counters.rs); a WiFi row has NaN and 0s.
    // They are written to `radio.parquet` only when a row is an LTE cell's (`lte`).
    /// The UE's last CQI report used by the scheduler (NaN: none yet, fixed MCS, uplink).
    pub cqi: Vec<f64>,
    /// The MCS of the port's last new transport block (NaN: none yet, uplink).
    pub mcs: Vec<f64>,
    /// PRB·TTIs allocated to the port (first transmissions and HARQ retransmissions).
    pub prbs: Vec<u64>,
    /// Bits of the port's transport blocks decoded (TBS, no CRC): the capacity it received.
    pub tbs_bits: Vec<u64>,
    /// Transport blocks lost after `harq_max_tx` transmissions.
    pub harq_failures: Vec<u64>,
    /// PRB·TTIs allocated by every eNodeB of the link (cell-level).
    pub cell_prbs_used: Vec<u64>,
    /// PRBs per TTI of every eNodeB of the link together (`prbs` × `cells`).
    pub cell_prbs: Vec<u32>,
    /// Whether any row is an LTE cell's (the LTE columns are written).
    pub lte: bool,
}

/// The `ac` of a row without an access category (an LTE cell's): written as "".
pub const NO_AC: u8 = u8::MAX;

impl RadioSeries {
    pub fn len(&self) -> usize {
        self.time_s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }

    /// The `ac` column's names ("bk", "be", "vi", "vo").
    pub fn ac_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.ac.iter().map(|&a| ac_name(a))
    }

    /// Fills the LTE columns of the rows pushed since `from` (a WiFi cell's) with NaN and 0s.
    pub fn pad_lte(&mut self, from: usize) {
        let n = self.len() - from;
        let nan = std::iter::repeat_n(f64::NAN, n);
        self.cqi.extend(nan.clone());
        self.mcs.extend(nan);
        for c in [
            &mut self.prbs,
            &mut self.tbs_bits,
            &mut self.harq_failures,
            &mut self.cell_prbs_used,
        ] {
            c.extend(std::iter::repeat_n(0, n));
        }
        self.cell_prbs.extend(std::iter::repeat_n(0, n));
    }

    /// Removes every row.
    pub fn clear(&mut self) {
        self.truncate_from(f64::NEG_INFINITY);
    }

    /// Removes the rows sampled at `time_s` or later (a final sample replaces them).
    pub fn truncate_from(&mut self, time_s: f64) {
        let keep = self.time_s.partition_point(|&t| t < time_s);
        macro_rules! cut {
            ($($c:ident),*) => { $(self.$c.truncate(keep);)* };
        }
        cut!(
            time_s,
            link,
            port,
            ac,
            backlog_bytes,
            qlen,
            overflow_drops,
            codel_drops,
            mac_drops,
            requeues,
            tx_packets,
            tx_bytes,
            tx_retries,
            collisions,
            phy_errors,
            internal_collisions,
            tx_bitrate_bps,
            signal_db,
            survey_busy_ms,
            survey_tx_ms,
            survey_rx_ms,
            airtime_ms,
            ap,
            cqi,
            mcs,
            prbs,
            tbs_bits,
            harq_failures,
            cell_prbs_used,
            cell_prbs
        );
    }
}

/// An `ac` column value's name ("" for [`NO_AC`]).
pub fn ac_name(ac: u8) -> &'static str {
    if ac == NO_AC {
        ""
    } else {
        Ac::from_index(ac).name()
    }
}

/// How often a radio cell wants its counters sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RadioSampling {
    /// With the recorder's samples (`sample_interval` of the scenario).
    WithRecorder,
    Every(Nanos),
}

/// A radio cell's counter totals at the end of a run (summary.json, under the link).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RadioTotals {
    /// The AP's survey; with several APs, the channel's busy time and the sums of the APs'
    /// tx and rx times.
    pub survey: Survey,
    /// Per port, in port order: (port name, counters, access category).
    pub ports: Vec<(String, PortCounters, Ac)>,
    /// With several APs only (else empty): each AP's name and survey, and each station's AP
    /// (an index into `aps`).
    pub aps: Vec<(String, Survey)>,
    pub station_ap: Vec<usize>,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// A radio cell's totals as `summary.json` reports them (`links[].radio`, on both backends):
/// the AP's channel survey, drops by cause and requeues over every port, each port's
/// counters, and the drive-by stations' associations.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RadioSummary {
    pub survey_busy_ms: f64,
    pub survey_tx_ms: f64,
    pub survey_rx_ms: f64,
    pub overflow_drops: u64,
    pub codel_drops: u64,
    pub mac_drops: u64,
    pub requeues: u64,
    pub ports: Vec<RadioPortSummary>,
    /// Drive-by stations (`stations.NAME.driveby`); absent without any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub driveby: Vec<DrivebySummary>,
    /// With several APs on the channel ([`super::bss`]): each AP's survey and its own
    /// queues' and transmissions' totals; absent with one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aps: Vec<ApSummary>,
}

/// One of several APs of a cell over a run: its channel survey (busy time the channel's), and
/// over its own queues and transmissions (its stations' downlink ports) the drops by cause and
/// requeues.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ApSummary {
    pub ap: String,
    pub stations: Vec<String>,
    pub survey_busy_ms: f64,
    pub survey_tx_ms: f64,
    pub survey_rx_ms: f64,
    pub overflow_drops: u64,
    pub codel_drops: u64,
    pub mac_drops: u64,
    pub requeues: u64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RadioPortSummary {
    pub port: String,
    pub ac: &'static str,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub tx_retries: u64,
    pub mac_drops: u64,
    pub overflow_drops: u64,
    pub codel_drops: u64,
    pub requeues: u64,
    pub collisions: u64,
    pub phy_errors: u64,
    pub internal_collisions: u64,
    /// The port's AP, with several APs on the channel; absent with one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ap: Option<String>,
}

/// A drive-by station over a run: its associations (those starting before the run's end,
/// times as drawn, not cut at the end), its time with data connectivity within the run, and
/// the packets for and from it dropped without connectivity.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DrivebySummary {
    pub station: String,
    pub data_s: f64,
    pub offline_drops: u64,
    pub associations: Vec<AssociationSummary>,
}

/// One association, s: it starts, carries data from `data_from_s` (equal to `end_s` when it
/// carries none) and ends.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct AssociationSummary {
    pub start_s: f64,
    pub data_from_s: f64,
    pub end_s: f64,
}

impl RadioSummary {
    pub fn of(t: &RadioTotals, driveby: Vec<DrivebySummary>) -> Self {
        let ports: Vec<RadioPortSummary> = t
            .ports
            .iter()
            .enumerate()
            .map(|(p, (port, c, ac))| RadioPortSummary {
                port: port.clone(),
                ac: ac.name(),
                tx_packets: c.tx_packets,
                tx_bytes: c.tx_bytes,
                tx_retries: c.tx_retries,
                mac_drops: c.tx_failed,
                overflow_drops: c.overflow_drops,
                codel_drops: c.codel_drops,
                requeues: c.requeues,
                collisions: c.collisions,
                phy_errors: c.phy_errors,
                internal_collisions: c.internal_collisions,
                ap: t.station_ap.get(p / 2).map(|&k| t.aps[k].0.clone()),
            })
            .collect();
        let aps = t
            .aps
            .iter()
            .enumerate()
            .map(|(k, (name, survey))| {
                let own: Vec<&RadioPortSummary> = ports
                    .iter()
                    .enumerate()
                    .filter(|&(p, _)| p % 2 == 0 && t.station_ap[p / 2] == k)
                    .map(|(_, s)| s)
                    .collect();
                ApSummary {
                    ap: name.clone(),
                    stations: own.iter().map(|s| s.port.clone()).collect(),
                    survey_busy_ms: ms(survey.busy_ns),
                    survey_tx_ms: ms(survey.tx_ns),
                    survey_rx_ms: ms(survey.rx_ns),
                    overflow_drops: own.iter().map(|s| s.overflow_drops).sum(),
                    codel_drops: own.iter().map(|s| s.codel_drops).sum(),
                    mac_drops: own.iter().map(|s| s.mac_drops).sum(),
                    requeues: own.iter().map(|s| s.requeues).sum(),
                }
            })
            .collect();
        RadioSummary {
            survey_busy_ms: ms(t.survey.busy_ns),
            survey_tx_ms: ms(t.survey.tx_ns),
            survey_rx_ms: ms(t.survey.rx_ns),
            overflow_drops: ports.iter().map(|p| p.overflow_drops).sum(),
            codel_drops: ports.iter().map(|p| p.codel_drops).sum(),
            mac_drops: ports.iter().map(|p| p.mac_drops).sum(),
            requeues: ports.iter().map(|p| p.requeues).sum(),
            ports,
            driveby,
            aps,
        }
    }
}

/// What a radio cell offers the recorders (`LinkModel::radio`).
pub trait RadioCounters {
    fn radio_sampling(&self) -> RadioSampling;
    /// Appends one row per port at `now`, for link `link` (its index in the world).
    fn sample_radio(&self, now: Nanos, link: u32, out: &mut RadioSeries);
    fn radio_totals(&self) -> RadioTotals;
    /// Whether `summary.json` reports the cell's totals (`links[].radio`).
    fn in_summary(&self) -> bool {
        true
    }
    /// The drive-by stations over `[0, until]` (none by default).
    fn driveby_summary(&self, _until: Nanos) -> Vec<DrivebySummary> {
        Vec::new()
    }
    /// The cell's access points, named as `radio.parquet`'s `ap` column names them (none for
    /// a cell without: LTE).
    fn ap_names(&self) -> &[String] {
        &[]
    }
}

/// Whether any of `links` is a radio cell of several access points (`radio.parquet` then has
/// an `ap` column).
pub fn any_multi_ap<'a>(links: impl IntoIterator<Item = &'a super::super::AnyLink>) -> bool {
    links
        .into_iter()
        .any(|l| l.radio().is_some_and(|r| r.ap_names().len() > 1))
}

impl Wifi {
    /// The survey of the cell's (first) AP.
    pub fn survey(&self) -> Survey {
        self.survey.ap(0)
    }

    /// AP `k`'s survey (`k` indexes `aps`).
    pub fn ap_survey(&self, k: usize) -> Survey {
        self.survey.ap(k)
    }
}

impl RadioCounters for Wifi {
    fn radio_sampling(&self) -> RadioSampling {
        match self.sample_interval_ns {
            Some(ns) => RadioSampling::Every(ns),
            None => RadioSampling::WithRecorder,
        }
    }

    fn sample_radio(&self, now: Nanos, link: u32, out: &mut RadioSeries) {
        let t = now as f64 / 1e9;
        let from = out.len();
        for port in 0..self.ports.len() {
            let station = port / 2;
            let up = port % 2 == 1;
            let q = if up {
                &self.sta_queues[station]
            } else {
                &self.ap_queues[station]
            };
            let c = &self.counters[port];
            out.time_s.push(t);
            out.link.push(link);
            out.port.push(port as u16);
            out.ac.push(self.ac[station] as u8);
            out.backlog_bytes.push(q.len_bytes());
            out.qlen.push(q.len_packets() as u32);
            out.overflow_drops.push(c.overflow_drops);
            out.codel_drops.push(c.codel_drops);
            out.mac_drops.push(c.tx_failed);
            out.requeues.push(c.requeues);
            out.tx_packets.push(c.tx_packets);
            out.tx_bytes.push(c.tx_bytes);
            out.tx_retries.push(c.tx_retries);
            out.collisions.push(c.collisions);
            out.phy_errors.push(c.phy_errors);
            out.internal_collisions.push(c.internal_collisions);
            out.tx_bitrate_bps
                .push(c.last_mcs.map_or(f64::NAN, |m| self.phy.rate_bps(m) as f64));
            out.signal_db
                .push(self.snr[station].at(now).unwrap_or(f64::NAN));
            let ap = self.station_ap[station];
            let survey = self.survey.ap(ap);
            out.survey_busy_ms.push(ms(survey.busy_ns));
            out.survey_tx_ms.push(ms(survey.tx_ns));
            out.survey_rx_ms.push(ms(survey.rx_ns));
            out.airtime_ms.push(ms(c.airtime_ns));
            out.ap.push(ap as u16);
        }
        out.pad_lte(from);
    }

    fn radio_totals(&self) -> RadioTotals {
        let ports = self
            .port_names()
            .into_iter()
            .enumerate()
            .map(|(p, name)| (name, self.counters[p], self.ac[p / 2]))
            .collect();
        if self.aps.len() == 1 {
            return RadioTotals {
                survey: self.survey.ap(0),
                ports,
                ..Default::default()
            };
        }
        let aps: Vec<(String, Survey)> = (0..self.aps.len())
            .map(|k| (self.aps[k].clone(), self.survey.ap(k)))
            .collect();
        RadioTotals {
            survey: Survey {
                busy_ns: aps[0].1.busy_ns,
                tx_ns: aps.iter().map(|a| a.1.tx_ns).sum(),
                rx_ns: aps.iter().map(|a| a.1.rx_ns).sum(),
            },
            ports,
            aps,
            station_ap: self.station_ap.clone(),
        }
    }

    fn ap_names(&self) -> &[String] {
        &self.aps
    }

    fn driveby_summary(&self, until: Nanos) -> Vec<DrivebySummary> {
        let s = |ns: Nanos| ns as f64 / 1e9;
        let names = self.port_names();
        self.driveby
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let d = d.as_ref()?;
                Some(DrivebySummary {
                    station: names[2 * i].clone(),
                    data_s: s(d.data_ns_until(until)),
                    offline_drops: self.counters[2 * i].offline_drops
                        + self.counters[2 * i + 1].offline_drops,
                    associations: d
                        .associations_until(until)
                        .map(|a| AssociationSummary {
                            start_s: s(a.start),
                            data_from_s: s(a.data_from),
                            end_s: s(a.end),
                        })
                        .collect(),
                })
            })
            .collect()
    }
}
