//! A WiFi cell (`kind = "wifi"`): one channel shared by an access point and its stations (or by
//! several APs, each with its own stations: `aps`, [`bss`]), every
//! transmitter contending by the DCF of IEEE Std 802.11-2016 (10.3), on the 802.11a, HT or VHT
//! OFDM PHY (clauses 17, 19, 21; [`phy`]), optionally with A-MPDU aggregation and Block Ack
//! (10.24.7; `aggregation = true`, see `transmit_ampdus`: docs/radio.md lists its differences).
//!
//! Ports: station `s1` has `"s1"` (the AP's frames to it, port 2i) and `"s1:up"` (its frames to
//! the AP, port 2i + 1). The AP keeps one queue per station (mac80211's txq of that station in
//! its access category), served in turn by the AP's channel-access function for the category
//! (round robin, a frame or an A-MPDU per turn: mac80211's order without airtime fairness;
//! `scheduler = "airtime"`: mac80211's airtime-fairness DRR, see `next_station`);
//! each station has its own uplink queue. Each queue is DropTail at `buffer` packets or, with
//! `aqm = "codel"`, CoDel at mac80211's per-station target 20 ms and interval 100 ms
//! ([`params::CODEL_TARGET_NS`]); the frame a transmitter is sending (or retrying) has left its
//! queue. The cell's counters (seed-004 Table 1) are sampled into `radio.parquet`
//! ([`counters`]). A drive-by station (`stations.NAME.driveby`, [`driveby`]) passes roadside
//! APs: its frames go only in its associations' data periods; the AP's scheduler skips it
//! otherwise, and its packets are dropped (cause "offline") or held until the next period.
//!
//! Channel access, per channel-access function with a frame: without `edca`, one DCF per
//! transmitter (the AP and every station); with `edca = true` one EDCAF per access category
//! ([`edca`]: Table 9-155's AIFSN, CWmin, CWmax and TXOP limit), whose AIFS adds AIFSN − 2
//! idle slots to DIFS before its backoff counts; functions of one transmitter whose backoffs
//! end in the same slot resolve an internal collision (10.22.2.4: the highest category sends,
//! the others back off as after a collision).
//! - after the medium has been busy it waits DIFS (EIFS after a collision), then counts down a
//!   backoff drawn uniformly from [0, CW] by one at the end of every idle slot, frozen while
//!   the medium is busy; it transmits at the slot boundary where its counter reaches 0
//!   (10.3.4.3). A counter of 0 transmits as DIFS ends.
//! - backoffs ending in the same slot collide: every frame of the slot fails.
//! - success: the receiver answers SIFS later with an Ack at the highest basic rate not above
//!   the data rate (10.6.6.5); the sender resets CW to CWmin and draws a new backoff (the
//!   post-transmission backoff, counted even with nothing to send).
//! - failure: CW ← min(2·CW + 1, CWmax) and a new backoff; when the frame has been sent
//!   `retry_limit` times it is dropped (dot11ShortRetryLimit, 10.3.4.4), CW reset: a MAC drop,
//!   counted in `LinkStats::mac_drops` with cause [`DropReason::MacRetryLimit`], never as a
//!   queue drop.
//! - a frame reaching a transmitter whose backoff is over, while the medium has been idle for
//!   DIFS, goes at the next slot boundary; one arriving while the medium is busy starts a
//!   backoff (10.3.4.2).
//!
//! Differences from the standard and [GAP] choices:
//! - [GAP] after a collision every station, the colliding senders too, defers EIFS from the end
//!   of the longest frame (10.3.2.3.7 gives observers EIFS; the senders themselves would start
//!   their backoff after ACKTimeout = SIFS + slot + aRxPHYStartDelay = 50 µs, 44 µs earlier):
//!   one idle/busy timeline for the whole cell.
//! - PHY errors ([`error`], the NIST model as ns-3's): a frame that does not collide is
//!   received with the model's probability at its station's SNR then ([`snr`]); a frame lost
//!   to an error is retried like a collided one ([GAP] every station defers EIFS from its
//!   end). The Ack is taken as received ([GAP]). Draws from the stream `link:NAME:phy`, only
//!   where an error is possible.
//! - Rates ([`params::Rate`]): a fixed MCS, `"ideal"` (per transmission, the highest MCS whose
//!   FER at the current SNR is below `ideal_fer`; ns-3's IdealWifiManager uses the SNR of the
//!   last frame received instead) or `"minstrel"` ([`minstrel`], per transmitter and peer; a
//!   frame is dropped when its retry chain is exhausted or at the retry limit).
//! - No RTS/CTS, no fragmentation, no beacons or management frames, no propagation delay on
//!   the air (`delay` adds a fixed delay after it).
//! - EDCA ([`edca`] lists its differences): without `edca` every frame is best effort with
//!   DIFS and CWmin 15 (the DCF); [GAP] a station's frames take its `ac` both ways (one of the
//!   four txqs per station is used; no per-flow access category).
//! - The AP's queues: a single CoDel FIFO per txq, where mac80211's txq is an FQ tin (per-flow
//!   queues, DRR, CoDel per flow); no switch to 50 ms / 300 ms for slow stations; no ECN; the
//!   `buffer` limit per queue (mac80211's 8192 packets per radio); no AQL. The airtime
//!   scheduler's [GAP]s: the stations are a ring where an emptied queue keeps its place
//!   (mac80211 re-adds it at the head), one deficit per station, the data PPDU charged (not
//!   its Ack).
//! - Utilisation is counted against the peak PHY rate (`capacity_bytes`), so a saturated cell
//!   shows well under 1.

mod ampdu;
pub mod bss;
pub mod counters;
pub mod driveby;
pub mod edca;
pub mod error;
pub mod minstrel;
mod params;
pub mod phy;
mod snr;

pub use params::KIND;

use bss::Surveys;
use driveby::{Driveby, Offline};
use edca::{Ac, AccessParams};
use minstrel::{Chain, Minstrel};
use params::{Aqm, Rate, Scheduler};
use snr::Snr;

use super::model::{LinkModel, Offer};
use super::queue::{Queue, QueuedPacket};
use super::{DropReason, LinkOutput, LinkStats};
use crate::packet::PacketId;
use crate::rng::Stream;
use crate::Nanos;
use rove_scenario::spec::{LinkSpec, QueueSpec};
use std::collections::VecDeque;

/// mac80211's default airtime weight, µs (`IEEE80211_DEFAULT_AIRTIME_WEIGHT` = 256,
/// net/mac80211/sta_info.h): the deficit a station's txq gets per scheduling round.
const AIRTIME_WEIGHT_US: i64 = 256;

/// A PPDU of `port` taking `air_ns` as the surveys see it: its BSS (the AP of the port's
/// station), whether that AP sent it (an even port), and its air time.
fn ppdu_source(station_ap: &[usize], port: usize, air_ns: Nanos) -> (usize, bool, Nanos) {
    (station_ap[port / 2], port.is_multiple_of(2), air_ns)
}

/// A frame in a transmitter's hands (dequeued, being sent or retried).
#[derive(Debug, Clone)]
struct Frame {
    id: PacketId,
    bytes: u32,
    /// The station the frame goes to or comes from (its rate).
    station: usize,
    /// Its port: 2 · station (the AP's frame to it) or 2 · station + 1 (its own frame).
    port: usize,
    /// When it entered its queue (a frame put back is queued with it).
    enqueued_at: Nanos,
    /// Times it has been sent.
    attempts: u32,
    /// Its Minstrel retry chain (`mcs = "minstrel"`, sent alone), chosen when its transmitter
    /// took it.
    chain: Option<Chain>,
    /// With aggregation and Minstrel: the rate it samples (a probe frame heads its own
    /// A-MPDU), decided when it was taken from its queue.
    probe: Option<usize>,
}

/// Who a channel-access function belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// Access point `k` (its index in `aps`).
    Ap(usize),
    /// Station `i`.
    Station(usize),
}

/// A contender for the channel: one channel-access function (the DCF, or one EDCAF) of an AP
/// or of a station.
#[derive(Debug, Clone)]
struct Transmitter {
    owner: Owner,
    ac: Ac,
    access: AccessParams,
    /// An AP's: the stations whose queues it serves (in turn), and whose turn is next.
    serves: Vec<usize>,
    turn: usize,
    /// Idle slots still to wait (of AIFS − DIFS) before the backoff counts, as of `idle_from`.
    aifs_left: u32,
    frame: Option<Frame>,
    /// With aggregation: the frames after `frame` in its hands (MPDUs to retry, or taken from
    /// its queue but not yet sent), in order.
    held: VecDeque<Frame>,
    /// The backoff counter, as of the cell's `idle_from` boundary; `None`: no backoff running.
    backoff: Option<u32>,
    cw: u32,
    /// With aggregation and Minstrel: the rate chain of the A-MPDU being sent (its attempts
    /// walk the chain until a Block Ack comes back or the chain ends), see [`ampdu`].
    ppdu: Option<ampdu::PpduRate>,
}

impl Transmitter {
    fn new(owner: Owner, ac: Ac, access: AccessParams, serves: Vec<usize>) -> Self {
        Transmitter {
            owner,
            ac,
            access,
            serves,
            turn: 0,
            aifs_left: 0,
            frame: None,
            held: VecDeque::new(),
            backoff: None,
            cw: access.cw_min,
            ppdu: None,
        }
    }
}

/// A port's transmit counters (the AP's to a station, or a station's own), as mac80211's
/// station info counts them (`nl80211` STA_INFO_TX_*): frames delivered and their bytes,
/// retransmissions, frames given up, and why transmissions failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames acknowledged (tx_packets) and their IP bytes (tx_bytes).
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Transmissions after a frame's first (tx_retries).
    pub tx_retries: u64,
    /// Frames dropped at the retry limit (tx_failed).
    pub tx_failed: u64,
    /// Transmissions lost to a collision, and to a PHY error.
    pub collisions: u64,
    pub phy_errors: u64,
    /// The MCS of the port's last transmission (tx bitrate); `None` before the first.
    pub last_mcs: Option<usize>,
    /// Packets its queue refused (full: DropTail's limit, `buffer`), and CoDel dropped.
    pub overflow_drops: u64,
    pub codel_drops: u64,
    /// Frames taken from its queue for an A-MPDU that did not fit and were held back for the
    /// next one ([GAP] the analogue of a qdisc requeue: the driver could not take them).
    pub requeues: u64,
    /// Times its frame lost an internal collision to a higher access category of the same
    /// transmitter (10.22.2.4; never on the air).
    pub internal_collisions: u64,
    /// Packets dropped because its drive-by station had no data connectivity ([`driveby`]).
    pub offline_drops: u64,
    /// Air time of its data PPDUs, collided and failed ones included, ns (mac80211's per-
    /// station tx airtime, `ieee80211_sta_register_airtime`; [GAP] not the Ack or BlockAck).
    pub airtime_ns: u64,
}

pub struct Wifi {
    name: String,
    phy: phy::Phy,
    aggregation: bool,
    ports: Vec<String>,
    retry_limit: u32,
    /// Each station's rate choice (of its frames both ways) and SNR.
    rate: Vec<Rate>,
    snr: Vec<Snr>,
    ideal_fer: f64,
    /// Per port (the AP's controller for each station, each station's own): Minstrel's state,
    /// for stations with `mcs = "minstrel"`.
    minstrel: Vec<Option<Minstrel>>,
    /// Per port of a drive-by station with Minstrel: the controller as built, restarted at
    /// each association.
    minstrel_initial: Vec<Option<Minstrel>>,
    /// Per station, its drive-by schedule (`driveby`); `has_driveby`: any station has one.
    driveby: Vec<Option<Driveby>>,
    has_driveby: bool,
    /// PHY error draws (a stream of their own: an error-free cell draws nothing from it).
    phy_rng: Stream,
    counters: Vec<PortCounters>,
    delay_ns: Nanos,
    /// The AP's queues, one per station (in the station's access category: mac80211's txq
    /// of that station and TID), served in turn by the AP's function for that category.
    ap_queues: Vec<Queue>,
    sta_queues: Vec<Queue>,
    /// The channel-access functions: each AP's in turn (one under the DCF, one per access
    /// category its stations use under EDCA, lowest first), then one per station.
    tx: Vec<Transmitter>,
    /// Per port, the index in `tx` of the function that sends its frames.
    port_tx: Vec<usize>,
    /// Per station, its access category.
    ac: Vec<Ac>,
    /// The access points' names (`aps`; [`bss`]) and, per station, the index of its own.
    aps: Vec<String>,
    station_ap: Vec<usize>,
    /// Each AP's channel survey (busy, tx and rx time).
    survey: Surveys,
    /// Key `sample_interval`.
    sample_interval_ns: Option<Nanos>,
    /// `scheduler = "airtime"`: each station's airtime deficit, µs (mac80211's
    /// `sta->airtime[ac].deficit`; one access category per station); `None`: round robin.
    deficit: Option<Vec<i64>>,
    rng: Stream,
    /// The first slot boundary after the last busy period (its end plus DIFS or EIFS): backoff
    /// counters are as of this boundary; the boundaries are `idle_from + k · slot`.
    idle_from: Nanos,
    /// The service time the model last asked for (a call at another time is stale).
    next_service: Option<Nanos>,
    /// The data frame on the air (its start, end, bytes), for `unsent_bytes`.
    on_air: (Nanos, Nanos, u32),
    peak_bps: u64,
    stats: LinkStats,
}

impl Wifi {
    pub fn new(spec: &LinkSpec, run_seed: u64) -> Self {
        let p = params::parse(&spec.model).expect("wifi keys are checked when parsed");
        let n = p.stations.len();
        let label = |what: &str| format!("link:{}:{what}", spec.name);
        let minstrel = (0..2 * n)
            .map(|port| {
                (p.stations[port / 2].rate == Rate::Minstrel).then(|| {
                    Minstrel::new(
                        &mut Stream::new(run_seed, &label(&format!("minstrel{port}"))),
                        &p.phy,
                    )
                })
            })
            .collect::<Vec<_>>();
        let minstrel_initial = minstrel
            .iter()
            .enumerate()
            .map(|(port, m)| m.clone().filter(|_| p.stations[port / 2].driveby.is_some()))
            .collect();
        let driveby: Vec<Option<Driveby>> = p
            .stations
            .iter()
            .map(|s| {
                s.driveby.map(|d| {
                    Driveby::new(
                        d,
                        Stream::new(run_seed, &label(&format!("driveby:{}", s.name))),
                    )
                })
            })
            .collect();
        let ac: Vec<Ac> = p.stations.iter().map(|s| s.ac).collect();
        let station_ap: Vec<usize> = p.stations.iter().map(|s| s.ap).collect();
        // Each AP's functions: the DCF for all its stations, or an EDCAF per access category
        // its stations use; then each station's own.
        let mut tx = Vec::new();
        for k in 0..p.aps.len() {
            let own = |s: &usize| station_ap[*s] == k;
            if p.edca {
                let mut used: Vec<Ac> = (0..n).filter(own).map(|s| ac[s]).collect();
                used.sort();
                used.dedup();
                for a in used {
                    let serves = (0..n).filter(own).filter(|&s| ac[s] == a).collect();
                    tx.push(Transmitter::new(
                        Owner::Ap(k),
                        a,
                        AccessParams::edca(a),
                        serves,
                    ));
                }
            } else {
                tx.push(Transmitter::new(
                    Owner::Ap(k),
                    Ac::Be,
                    AccessParams::DCF,
                    (0..n).filter(own).collect(),
                ));
            }
        }
        let first_sta = tx.len();
        for (s, &a) in ac.iter().enumerate() {
            let access = if p.edca {
                AccessParams::edca(a)
            } else {
                AccessParams::DCF
            };
            tx.push(Transmitter::new(Owner::Station(s), a, access, Vec::new()));
        }
        let port_tx = (0..2 * n)
            .map(|port| {
                let s = port / 2;
                if port % 2 == 1 {
                    first_sta + s
                } else {
                    tx.iter()
                        .position(|t| t.owner == Owner::Ap(station_ap[s]) && t.serves.contains(&s))
                        .expect("every station has an AP function")
                }
            })
            .collect();
        let queue = match p.aqm {
            Aqm::DropTail => spec.queue.clone(),
            Aqm::CoDel => QueueSpec::CoDel {
                limit: spec.queue.limit(),
                target_ns: params::CODEL_TARGET_NS,
                interval_ns: params::CODEL_INTERVAL_NS,
            },
        };
        Wifi {
            name: spec.name.clone(),
            phy: p.phy,
            aggregation: p.aggregation,
            ports: spec.ports.clone(),
            retry_limit: p.retry_limit,
            rate: p.stations.iter().map(|s| s.rate).collect(),
            snr: p.stations.iter().map(|s| s.snr.clone()).collect(),
            ideal_fer: p.ideal_fer,
            minstrel,
            minstrel_initial,
            has_driveby: driveby.iter().any(Option::is_some),
            driveby,
            phy_rng: Stream::new(run_seed, &label("phy")),
            counters: vec![PortCounters::default(); 2 * n],
            delay_ns: spec.delay_ns,
            ap_queues: (0..n)
                .map(|i| Queue::new(&queue, run_seed, &label(&format!("ap{i}"))))
                .collect(),
            sta_queues: (0..n)
                .map(|i| Queue::new(&queue, run_seed, &label(&format!("sta{i}"))))
                .collect(),
            tx,
            port_tx,
            ac,
            survey: Surveys::new(p.aps.len(), p.survey_rx),
            aps: p.aps,
            station_ap,
            sample_interval_ns: p.sample_interval_ns,
            deficit: (p.scheduler == Scheduler::Airtime).then(|| vec![0; n]),
            rng: Stream::new(run_seed, &label("backoff")),
            idle_from: 0,
            next_service: None,
            on_air: (0, 0, 0),
            peak_bps: p
                .stations
                .iter()
                .map(|s| s.rate.peak_bps(&p.phy))
                .max()
                .unwrap_or(0),
            stats: LinkStats::default(),
        }
    }

    fn draw_backoff(&mut self, cw: u32) -> u32 {
        (self.rng.next_u64() % (u64::from(cw) + 1)) as u32
    }

    /// Counts down the idle slots that ended by `now` (only while the medium is idle): the
    /// counters are then as of the last boundary at or before `now`. A transmitter with a frame
    /// never passes 0 here (it is serviced at its boundary); one without ends its backoff.
    fn rebase(&mut self, now: Nanos) {
        if now < self.idle_from {
            return;
        }
        let slots = (now - self.idle_from) / phy::SLOT_NS;
        if slots == 0 {
            return;
        }
        let k = u32::try_from(slots).unwrap_or(u32::MAX);
        for t in &mut self.tx {
            // The first (AIFSN - 2) idle slots after DIFS are AIFS, not backoff (EDCA).
            let waited = t.aifs_left.min(k);
            t.aifs_left -= waited;
            if let Some(b) = t.backoff {
                let left = b.saturating_sub(k - waited);
                t.backoff = if left == 0 && t.frame.is_none() {
                    None
                } else {
                    Some(left)
                };
            }
        }
        self.idle_from += slots * phy::SLOT_NS;
    }

    /// The medium is busy until `t` (the end of a busy period plus DIFS or EIFS): every
    /// function waits its AIFS again from there.
    fn busy_until(&mut self, t: Nanos) {
        self.idle_from = t;
        for f in &mut self.tx {
            f.aifs_left = f.access.extra_slots();
        }
    }

    /// Takes the head of a queue (`station`'s at the AP, or its own), counting CoDel's drops
    /// against the port.
    fn dequeue(
        &mut self,
        ap: bool,
        station: usize,
        now: Nanos,
        out: &mut Vec<LinkOutput>,
    ) -> Option<QueuedPacket> {
        let q = if ap {
            &mut self.ap_queues[station]
        } else {
            &mut self.sta_queues[station]
        };
        let mut dropped = 0;
        let p = q.dequeue(now, out, &mut dropped);
        if dropped > 0 {
            self.stats.queue_drops += dropped;
            self.counters[2 * station + usize::from(!ap)].codel_drops += dropped;
        }
        p
    }

    /// Gives transmitter `i` its next frame from its queue, if it has none.
    fn load(&mut self, i: usize, now: Nanos, out: &mut Vec<LinkOutput>) {
        if self.tx[i].frame.is_some() {
            return;
        }
        if let Some(f) = self.tx[i].held.pop_front() {
            self.tx[i].frame = Some(f);
            return;
        }
        let (p, station, ap) = match self.tx[i].owner {
            Owner::Ap(_) => {
                let Some(s) = self.next_station(i) else {
                    return;
                };
                let Some(p) = self.dequeue(true, s, now, out) else {
                    return;
                };
                (p, s, true)
            }
            Owner::Station(s) => {
                if !self.online(s) {
                    return;
                }
                let Some(p) = self.dequeue(false, s, now, out) else {
                    return;
                };
                (p, s, false)
            }
        };
        self.stats.sojourn.record(now - p.enqueued_at);
        let port = if ap { 2 * station } else { 2 * station + 1 };
        let (chain, probe) = match self.minstrel[port].as_mut() {
            None => (None, None),
            // An A-MPDU's chain is chosen per aggregate; the frame only decides whether it
            // samples (mac80211's per-frame get_rate).
            Some(m) if self.aggregation => (None, m.sample_rate()),
            Some(m) => (Some(m.chain()), None),
        };
        self.tx[i].frame = Some(Frame {
            id: p.id,
            bytes: p.bytes,
            station,
            port,
            enqueued_at: p.enqueued_at,
            attempts: 0,
            chain,
            probe,
        });
    }

    /// The station whose queue the AP's function `i` serves next, if any has a frame.
    ///
    /// Round robin (the default): the next non-empty queue after the last one served.
    /// `scheduler = "airtime"`: mac80211's airtime-fairness DRR (net/mac80211/tx.c
    /// `ieee80211_next_txq`, Linux 5.4): the queue at the head is served while its station's
    /// deficit is not negative (`__ieee80211_schedule_txq` puts a served txq back at the head);
    /// a negative deficit gets the station's weight (256 µs) and the queue goes to the tail.
    fn next_station(&mut self, i: usize) -> Option<usize> {
        let t = &self.tx[i];
        let n = t.serves.len();
        let active = |k: usize| {
            let s = t.serves[k];
            !self.ap_queues[s].is_empty() && self.driveby[s].as_ref().is_none_or(|d| d.online)
        };
        let mut k = (0..n).map(|j| (t.turn + j) % n).find(|&k| active(k))?;
        let Some(deficit) = self.deficit.as_mut() else {
            let s = t.serves[k];
            self.tx[i].turn = (k + 1) % n;
            return Some(s);
        };
        // Each pass adds a weight to a negative deficit: the loop ends.
        while deficit[t.serves[k]] < 0 {
            deficit[t.serves[k]] += AIRTIME_WEIGHT_US;
            k = (1..=n).map(|j| (k + j) % n).find(|&k| active(k))?;
        }
        let s = t.serves[k];
        self.tx[i].turn = k;
        Some(s)
    }

    /// A PPDU of `port` took `air_ns` of the channel: the port's airtime counter and, with the
    /// airtime scheduler, its station's deficit are charged (`ieee80211_sta_register_airtime`:
    /// tx and rx airtime alike).
    fn charge_airtime(&mut self, port: usize, air_ns: Nanos) {
        self.counters[port].airtime_ns += air_ns;
        if let Some(d) = self.deficit.as_mut() {
            d[port / 2] -= (air_ns / 1_000) as i64;
        }
    }

    /// The highest MCS whose frame error rate for `bytes` at `snr_db` is below `ideal_fer`
    /// (MCS 0 when none is).
    fn ideal_mcs(&self, bytes: u32, snr_db: Option<f64>) -> usize {
        let valid = (0..self.phy.mcs_count()).filter(|&m| self.phy.valid(m));
        let Some(db) = snr_db else {
            return valid.max().unwrap_or(0);
        };
        valid
            .rev()
            .find(|&m| 1.0 - self.phy.data_success(bytes, m, db) < self.ideal_fer)
            .unwrap_or(0)
    }

    /// The MCS of a frame's next transmission at `now`.
    fn attempt_mcs(&self, f: &Frame, now: Nanos) -> usize {
        match self.rate[f.station] {
            Rate::Fixed(m) => m,
            Rate::Ideal => self.ideal_mcs(f.bytes, self.snr[f.station].at(now)),
            Rate::Minstrel => {
                let chain = f.chain.as_ref().expect("a minstrel frame has a chain");
                minstrel::chain_rate(chain, f.attempts)
                    .or_else(|| chain.last().map(|&(r, _)| r))
                    .expect("a chain has a slot")
            }
        }
    }

    /// Whether a frame that has failed `f.attempts` times is dropped: at the retry limit, or
    /// when its Minstrel chain is exhausted (the hardware's rate table ends).
    fn exhausted(&self, f: &Frame) -> bool {
        f.attempts >= self.retry_limit
            || f.chain
                .as_ref()
                .is_some_and(|c| minstrel::chain_rate(c, f.attempts).is_none())
    }

    /// Tells the frame's rate control how it went.
    fn report(&mut self, now: Nanos, f: &Frame, acked: bool) {
        if let (Some(m), Some(chain)) = (self.minstrel[f.port].as_mut(), f.chain.as_ref()) {
            m.tx_status(now, chain, f.attempts, acked);
        }
    }

    /// Transmitter `i`'s frame failed (a collision, a PHY error, or an internal collision
    /// (`internal`, not on the air)): CW doubles and a new backoff is drawn, or the frame is
    /// dropped at its retry limit (a MAC drop, CW reset).
    fn fail(&mut self, i: usize, now: Nanos, out: &mut Vec<LinkOutput>, internal: bool) {
        let f = self.tx[i].frame.as_mut().expect("a sender has a frame");
        f.attempts += 1;
        let f = f.clone();
        let c = &mut self.counters[f.port];
        if internal {
            c.internal_collisions += 1;
        } else if f.attempts > 1 {
            c.tx_retries += 1;
        }
        let cw = if self.exhausted(&f) {
            self.counters[f.port].tx_failed += 1;
            out.push(LinkOutput::Drop {
                id: f.id,
                reason: DropReason::MacRetryLimit,
            });
            self.stats.mac_drops += 1;
            self.report(now, &f, false);
            self.tx[i].frame = None;
            self.load(i, now, out);
            self.tx[i].access.cw_min
        } else {
            (2 * self.tx[i].cw + 1).min(self.tx[i].access.cw_max)
        };
        self.tx[i].cw = cw;
        self.tx[i].backoff = Some(self.draw_backoff(cw));
    }

    /// The earliest boundary at which a transmitter with a frame transmits.
    fn next_transmission(&self) -> Option<Nanos> {
        self.tx
            .iter()
            .filter(|t| t.frame.is_some())
            .filter_map(|t| t.backoff.map(|b| b + t.aifs_left))
            .min()
            .map(|k| self.idle_from + u64::from(k) * phy::SLOT_NS)
    }

    /// Asks for a service at `t` if no earlier one is outstanding.
    fn request(&mut self, t: Option<Nanos>) -> Option<Nanos> {
        match (t, self.next_service) {
            (Some(t), Some(pending)) if pending <= t => None,
            (Some(t), _) => {
                self.next_service = Some(t);
                Some(t)
            }
            (None, _) => None,
        }
    }

    /// Transmitter `i` has just been given a frame at `now`: a backoff that is over (or ends at
    /// this boundary with nothing to send) needs a new one if the medium is busy, else the
    /// frame goes at the next slot boundary (10.3.4.2, 10.22.2.2).
    fn start_access(&mut self, i: usize, now: Nanos) {
        if matches!(self.tx[i].backoff, None | Some(0)) {
            // The end of its DIFS or AIFS (EDCA: AIFSN - 2 slots after `idle_from`).
            let aifs_end = self.idle_from + u64::from(self.tx[i].aifs_left) * phy::SLOT_NS;
            self.tx[i].backoff = Some(if now < aifs_end {
                // The medium is busy (or within DIFS/AIFS): back off.
                let cw = self.tx[i].cw;
                self.draw_backoff(cw)
            } else if now == aifs_end {
                0
            } else {
                // Idle for DIFS and more: the next slot boundary.
                1
            });
        }
    }

    /// The frames whose backoff ends at `now` go on the air.
    fn transmit(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) {
        let mut senders: Vec<usize> = (0..self.tx.len())
            .filter(|&i| {
                let t = &self.tx[i];
                t.frame.is_some() && t.backoff == Some(0) && t.aifs_left == 0
            })
            .collect();
        if senders.is_empty() {
            return;
        }
        self.resolve_internal_collisions(&mut senders, now, out);
        if self.aggregation {
            self.transmit_ampdus(now, &senders, out);
            return;
        }
        let air: Vec<(usize, Nanos)> = senders
            .iter()
            .map(|&i| {
                let f = self.tx[i].frame.as_ref().expect("a sender has a frame");
                let mcs = self.attempt_mcs(f, now);
                (mcs, self.phy.data_ns(f.bytes, mcs))
            })
            .collect();
        if let [i] = senders[..] {
            let (mcs, air_ns) = air[0];
            let end = now + air_ns;
            let f = self.tx[i].frame.as_ref().expect("a sender has a frame");
            // The PHY error draw, only where an error is possible.
            let received = match self.snr[f.station].at(now) {
                None => true,
                Some(db) => {
                    let p = self.phy.data_success(f.bytes, mcs, db);
                    p >= 1.0 || self.phy_rng.uniform() < p
                }
            };
            let port = f.port;
            self.counters[port].last_mcs = Some(mcs);
            self.charge_airtime(port, air_ns);
            if !received {
                // [GAP] as after a collision: every station defers EIFS from the frame's end.
                self.counters[port].phy_errors += 1;
                let (bss, by_ap, _) = ppdu_source(&self.station_ap, port, air_ns);
                self.survey.frame(bss, by_ap, air_ns);
                self.busy_until(end + phy::eifs_ns());
                self.fail(i, now, out, false);
                return;
            }
            let mut f = self.tx[i].frame.take().expect("a sender has a frame");
            f.attempts += 1;
            let c = &mut self.counters[port];
            c.tx_packets += 1;
            c.tx_bytes += u64::from(f.bytes);
            if f.attempts > 1 {
                c.tx_retries += 1;
            }
            out.push(LinkOutput::Deliver {
                id: f.id,
                at: end + self.delay_ns,
            });
            self.report(end, &f, true);
            self.stats.departed_bytes += u64::from(f.bytes);
            self.stats.departed_pkts += 1;
            self.on_air = (now, end, f.bytes);
            let ack_ns = self.phy.ack_ns(mcs);
            let (bss, by_ap, _) = ppdu_source(&self.station_ap, port, air_ns);
            self.survey.exchange(bss, by_ap, air_ns, ack_ns);
            self.busy_until(end + phy::SIFS_NS + ack_ns + phy::DIFS_NS);
            let cw_min = self.tx[i].access.cw_min;
            self.tx[i].cw = cw_min;
            self.tx[i].backoff = Some(self.draw_backoff(cw_min));
            self.load(i, now, out);
            return;
        }
        let ports: Vec<usize> = senders
            .iter()
            .map(|&i| {
                self.tx[i]
                    .frame
                    .as_ref()
                    .expect("a sender has a frame")
                    .port
            })
            .collect();
        let bss = &self.station_ap;
        self.survey.collision(
            ports
                .iter()
                .zip(&air)
                .map(|(&port, &(_, a))| ppdu_source(bss, port, a)),
        );
        for (&port, &(_, a)) in ports.iter().zip(&air) {
            self.charge_airtime(port, a);
        }
        let longest = air.iter().map(|&(_, a)| a).max().expect("two senders");
        self.busy_until(now + longest + phy::eifs_ns());
        for (k, &i) in senders.iter().enumerate() {
            let port = self.tx[i]
                .frame
                .as_ref()
                .expect("a sender has a frame")
                .port;
            let c = &mut self.counters[port];
            c.collisions += 1;
            c.last_mcs = Some(air[k].0);
        }
        for i in senders {
            self.fail(i, now, out, false);
        }
    }

    /// 10.22.2.4: when functions of one transmitter reach the end of their backoff in the same
    /// slot, the highest access category transmits and each lower one backs off as after a
    /// collision (CW doubled, retry count up, dropped at the retry limit). Under the DCF every
    /// transmitter has one function and nothing happens.
    fn resolve_internal_collisions(
        &mut self,
        senders: &mut Vec<usize>,
        now: Nanos,
        out: &mut Vec<LinkOutput>,
    ) {
        let losers: Vec<usize> = senders
            .iter()
            .copied()
            .filter(|&i| {
                senders
                    .iter()
                    .any(|&j| self.tx[j].owner == self.tx[i].owner && self.tx[j].ac > self.tx[i].ac)
            })
            .collect();
        if losers.is_empty() {
            return;
        }
        senders.retain(|i| !losers.contains(i));
        for i in losers {
            self.fail(i, now, out, true);
        }
    }
}

/// Drive-by stations ([`driveby`]: `stations.NAME.driveby`).
impl Wifi {
    /// Whether station `s` has data connectivity (always, without `driveby`), as of the last
    /// [`advance_driveby`](Self::advance_driveby).
    fn online(&self, s: usize) -> bool {
        self.driveby[s].as_ref().is_none_or(|d| d.online)
    }

    fn offline_mode(&self, s: usize) -> Offline {
        self.driveby[s]
            .as_ref()
            .map_or(Offline::Drop, |d| d.params().offline)
    }

    /// A packet for or from a station without connectivity is dropped (cause "offline").
    fn drop_offline(&mut self, id: PacketId, port: usize, out: &mut Vec<LinkOutput>) {
        out.push(LinkOutput::Drop {
            id,
            reason: DropReason::Offline,
        });
        self.stats.offline_drops += 1;
        self.counters[port].offline_drops += 1;
    }

    /// Moves every drive-by station to `now`: one that lost its data connectivity is
    /// disconnected, one that gained it connected (both, when `now` is in a later association's
    /// data period than the last one seen).
    fn advance_driveby(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) {
        for s in 0..self.driveby.len() {
            let Some(d) = self.driveby[s].as_mut() else {
                continue;
            };
            let change = d.advance(now);
            if change.lost {
                self.disconnect(s, now, out);
            }
            if change.gained {
                self.connect(s, now, out);
            }
        }
    }

    /// Station `s`'s association ended (or it has no data connectivity any more): the frames
    /// for or from it in a transmitter's hands and, with `offline = "drop"`, every packet
    /// queued for or by it are dropped; with `"hold"` the frames go back to the head of their
    /// queue ([GAP] their retry count and rate chain reset). A transmitter left without a frame
    /// takes its next (the AP's: another station's).
    fn disconnect(&mut self, s: usize, now: Nanos, out: &mut Vec<LinkOutput>) {
        let mode = self.offline_mode(s);
        for i in 0..self.tx.len() {
            let t = &self.tx[i];
            let holds = t.frame.iter().chain(&t.held).any(|f| f.station == s);
            if !holds {
                continue;
            }
            self.tx[i].ppdu = None;
            let mut frames: Vec<Frame> = self.tx[i].frame.take().into_iter().collect();
            frames.extend(self.tx[i].held.drain(..));
            match mode {
                Offline::Drop => {
                    for f in frames {
                        self.drop_offline(f.id, f.port, out);
                    }
                }
                Offline::Hold => {
                    for f in frames.into_iter().rev() {
                        let q = if f.port.is_multiple_of(2) {
                            &mut self.ap_queues[s]
                        } else {
                            &mut self.sta_queues[s]
                        };
                        q.requeue_front(QueuedPacket {
                            id: f.id,
                            bytes: f.bytes,
                            enqueued_at: f.enqueued_at,
                        });
                    }
                }
            }
            self.load(i, now, out);
            if self.tx[i].frame.is_some() {
                self.start_access(i, now);
            }
        }
        if mode == Offline::Drop {
            let mut gone = Vec::new();
            self.ap_queues[s].flush(|p| gone.push((p.id, 2 * s)));
            self.sta_queues[s].flush(|p| gone.push((p.id, 2 * s + 1)));
            for (id, port) in gone {
                self.drop_offline(id, port, out);
            }
        }
    }

    /// Station `s` has data connectivity from `now` (a new association's set-up is over): its
    /// rate control starts afresh, and its queued frames (`offline = "hold"`) contend again.
    fn connect(&mut self, s: usize, now: Nanos, out: &mut Vec<LinkOutput>) {
        for port in [2 * s, 2 * s + 1] {
            if let Some(initial) = &self.minstrel_initial[port] {
                self.minstrel[port] = Some(Minstrel::restarted(initial, now));
            }
            let i = self.port_tx[port];
            if self.tx[i].frame.is_none() {
                self.load(i, now, out);
                if self.tx[i].frame.is_some() {
                    self.start_access(i, now);
                }
            }
        }
    }

    /// The next time the model must run: the next transmission, or a drive-by station's next
    /// change of connectivity when it matters (the end of a data period with packets for or
    /// from it, the start of one with packets held for it).
    fn next_event(&self, now: Nanos) -> Option<Nanos> {
        let t = self.next_transmission();
        if !self.has_driveby {
            return t;
        }
        let wake = self
            .driveby
            .iter()
            .enumerate()
            .filter_map(|(s, d)| {
                let d = d.as_ref()?;
                let queued = !self.ap_queues[s].is_empty() || !self.sta_queues[s].is_empty();
                let held = self
                    .tx
                    .iter()
                    .any(|t| t.frame.iter().chain(&t.held).any(|f| f.station == s));
                let matters = if d.online {
                    queued || held
                } else {
                    queued && d.params().offline == Offline::Hold
                };
                matters.then(|| d.next_change(now))
            })
            .min();
        match (t, wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// A cell's access points (`aps`, [`bss`]) and each station's, as an index into them, in
/// port order: read from the cell's keys, which the scenario's parser has checked (only these
/// keys are read: no station's SNR trace file is opened again).
pub fn access_points(model: &toml::Table) -> (Vec<String>, Vec<usize>) {
    let checked = "wifi keys are checked when parsed";
    let aps = bss::read_aps(model).expect(checked);
    let station_ap = match model.get("stations") {
        Some(toml::Value::Table(stations)) => stations
            .iter()
            .map(|(name, st)| {
                let path = format!("stations.{name}");
                bss::read_station_ap(&path, st.get("ap"), &aps).expect(checked)
            })
            .collect(),
        _ => Vec::new(),
    };
    (aps.names, station_ap)
}

impl Wifi {
    /// Port `p`'s transmit counters (port order as [`LinkModel::port_names`]).
    pub fn counters(&self, port: usize) -> &PortCounters {
        &self.counters[port]
    }
}

impl LinkModel for Wifi {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        KIND.kind
    }

    fn offer(&mut self, now: Nanos, packet: Offer, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        if self.has_driveby {
            self.rebase(now);
            self.advance_driveby(now, out);
        }
        self.stats.arrived_pkts += 1;
        let station = usize::from(packet.port / 2);
        let i = self.port_tx[usize::from(packet.port)];
        let online = self.online(station);
        if !online && self.offline_mode(station) == Offline::Drop {
            self.drop_offline(packet.id, usize::from(packet.port), out);
            return self.request(self.next_event(now));
        }
        let queue = if packet.port.is_multiple_of(2) {
            &mut self.ap_queues[station]
        } else {
            &mut self.sta_queues[station]
        };
        let p = QueuedPacket {
            id: packet.id,
            bytes: packet.bytes,
            enqueued_at: now,
        };
        if let Some(reason) =
            queue.enqueue(now, p, packet.flow, 0, out, &mut self.stats.queue_drops)
        {
            self.stats.queue_drops += 1;
            self.counters[usize::from(packet.port)].overflow_drops += 1;
            out.push(LinkOutput::Drop {
                id: packet.id,
                reason,
            });
            return if self.has_driveby {
                self.request(self.next_event(now))
            } else {
                None
            };
        }
        if !online || self.tx[i].frame.is_some() {
            // It waits behind the frame being sent, or (`offline = "hold"`) for its station's
            // next data period.
            return if self.has_driveby {
                self.request(self.next_event(now))
            } else {
                None
            };
        }
        self.rebase(now);
        self.load(i, now, out);
        self.start_access(i, now);
        let t = self.next_event(now);
        self.request(t)
    }

    fn service(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        if self.next_service != Some(now) {
            return None; // superseded by an earlier request
        }
        self.next_service = None;
        self.rebase(now);
        if self.has_driveby {
            self.advance_driveby(now, out);
        }
        self.transmit(now, out);
        let t = self.next_event(now);
        self.request(t)
    }

    fn stats(&self) -> &LinkStats {
        &self.stats
    }

    fn stats_mut(&mut self) -> &mut LinkStats {
        &mut self.stats
    }

    fn backlog_bytes(&self) -> u64 {
        let queued: u64 = self
            .ap_queues
            .iter()
            .chain(&self.sta_queues)
            .map(Queue::len_bytes)
            .sum();
        let held: u64 = self
            .tx
            .iter()
            .flat_map(|t| t.frame.iter().chain(&t.held))
            .map(|f| u64::from(f.bytes))
            .sum();
        queued + held
    }

    fn backlog_packets(&self) -> usize {
        let queued: usize = self
            .ap_queues
            .iter()
            .chain(&self.sta_queues)
            .map(Queue::len_packets)
            .sum();
        queued
            + self
                .tx
                .iter()
                .map(|t| usize::from(t.frame.is_some()) + t.held.len())
                .sum::<usize>()
    }

    /// The peak PHY rate over `[0, until]`.
    fn capacity_bytes(&self, until: Nanos) -> f64 {
        self.peak_bps as f64 / 8.0 * until as f64 / 1e9
    }

    fn unsent_bytes(&self, now: Nanos) -> f64 {
        let (start, end, bytes) = self.on_air;
        if end <= now || end <= start {
            return 0.0;
        }
        f64::from(bytes) * (end - now) as f64 / (end - start) as f64
    }

    fn port(&self, name: &str) -> Option<u16> {
        self.ports.iter().position(|p| p == name).map(|i| i as u16)
    }

    fn port_names(&self) -> Vec<String> {
        self.ports.clone()
    }

    fn radio(&self) -> Option<&dyn counters::RadioCounters> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
