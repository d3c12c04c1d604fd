//! An LTE cell (`kind = "lte"`): one eNodeB's FDD downlink scheduled in 1 ms TTIs over 6-100
//! PRBs among its UEs, and their uplinks.
//!
//! Ports: UE `u1` has `"u1"` (eNodeB to UE, port 2i) and `"u1:up"` (UE to eNodeB, port 2i + 1).
//!
//! **Downlink, per TTI** (TS 36.213 clause 7, one codeword, one layer):
//! 1. HARQ retransmissions due in this TTI go first, each on the PRBs of its first transmission
//!    (same TBS, 36.213 7.1.7.2); a UE gets at most one transport block per TTI.
//! 2. The other PRBs go to UEs with data in their RLC queue and a free HARQ process (8 per UE,
//!    36.213 7: 8 processes for FDD), in the scheduler's order: each takes the fewest PRBs whose
//!    TBS carries its whole queue, or all that are left. `pf`: largest r_i / R_i, r_i the TBS of
//!    its MCS over the whole band, R_i its throughput averaged exponentially over `pf_window`
//!    (Jalali et al. 2000); `maxci`: largest r_i; `rr`: in turn, the turn passing to the UE after
//!    the first one served.
//! 3. The MCS comes from the UE's CQI report (or its fixed `mcs`); the report describes the
//!    channel at the last multiple of `cqi_period` at least `cqi_delay` before the TTI
//!    ([`amc`]: SINR → CQI → MCS → TBS).
//! 4. Each transport block is received with probability 1 − BLER(MCS, SINR at this TTI); a
//!    retransmission combines its SINR with the earlier ones' (chase combining: SINRs added).
//!    A failed block is retransmitted 8 ms later (the FDD HARQ round trip: ACK/NACK at n + 4,
//!    36.213 7.3, retransmission at n + 8); after `harq_max_tx` transmissions it is lost.
//! 5. The UE's RLC reorders: a block's packets are delivered when it and every earlier block
//!    are decided, at its decoding (the end of its TTI) or later, plus `delay`.
//!
//! **RLC queue**: each UE's downlink packets wait in a FIFO of `rlc_buffer` bytes (a packet
//! that does not fit is dropped, a queue drop); transport blocks take bytes from its head,
//! segmenting packets across blocks. A packet with a segment in a lost block is lost (RLC UM:
//! the receiver discards an SDU missing a segment); it is counted as a MAC drop.
//!
//! **Uplink**: `uplink = "grants"` (default): a UE sends at the grant instants, multiples of
//! `grant_period`, up to `uplink_rate × grant_period` bytes each, what it queued before the
//! instant (whole packets; one larger than a grant takes a grant alone), received at the end of
//! the grant's TTI plus `delay`: ACKs of several downlink TTIs reach the sender together.
//! `uplink = "per_packet"` (the ablation): each packet is serialized at `uplink_rate` as it
//! comes. `uplink = "sr_bsr"` ([`request_grant`]): LTE's request-grant uplink, an idle UE
//! sending a scheduling request at its next opportunity (`sr_period`), the eNodeB granting
//! `grant_delay` later, the PUSCH `pusch_delay` after the grant, and grants of up to
//! `uplink_rate` × 1 ms every `bsr_grant_interval` while the UE's buffer status reports show
//! data. **Uplink HARQ** (`uplink_bler` > 0, every uplink): each transport block (a grant's, a
//! PUSCH's, a packet's) fails a transmission with probability `uplink_bler` and is retransmitted
//! 8 ms later, lost after `uplink_harq_max` transmissions; packets are released in sequence
//! (`uplink_in_order`).
//!
//! **Channel** ([`channel`]): a fixed mean SINR (`snr`) or one from the UE's distance, moving
//! along a line at `speed` (`backward`: away from the eNodeB, `forward`: towards it, passing it
//! and then away), through the TR 36.814 macro path loss, the eNodeB's `tx_power` and the UE's
//! `noise_figure`; times a fading channel (EPA, EVA, ETU, HST, or none).
//!
//! **Handover**: with `cells` > 1 the eNodeBs stand along the UEs' road at 0, `cell_spacing`,
//! 2 `cell_spacing`, ... m (a UE's `distance` is its position on it); each has its own PRBs
//! and schedules its own UEs. A UE is handed over to the nearest eNodeB when that one's mean
//! SINR beats its serving one's by `handover_hysteresis`; it is not scheduled for
//! `handover_interruption`, and its RLC queue is forwarded (`handover_rlc = "forward"`: the
//! queue and the pending HARQ retransmissions carry on after the interruption) or lost
//! (`"lost"`: queued packets and blocks awaiting retransmission dropped, as MAC drops).
//!
//! **Counters** ([`counters`]): per port CQI, MCS, PRBs, decoded TBS bits, HARQ
//! retransmissions and failures, the RLC queue and its drops, and the cell's PRB use, sampled
//! into `radio.parquet` every `sample_interval` (default: with the scenario's samples).
//!
//! Differences from the standards and [GAP] choices (besides those in [`amc`] and
//! [`channel`]):
//! - [GAP] no MAC, RLC or PDCP header bytes; no control-channel blocking; wideband CQI and
//!   wideband MCS (no subband scheduling); single layer (no MIMO); no inter-cell interference
//!   (SINR = SNR) and no shadowing.
//! - [GAP] a retransmission is sent exactly 8 ms after the previous transmission, ahead of new
//!   data (the downlink HARQ is asynchronous; eNodeBs commonly retransmit at the earliest).
//! - [GAP] the uplink is not scheduled among UEs; its errors (`uplink_bler`, default 0: none)
//!   are drawn independently per transmission (no combining gain), a retransmission takes no
//!   grant capacity, no t-Reordering timer ([`Lte::ul_block`]); with
//!   `uplink = "grants"` grants are periodic and of fixed size per UE (no scheduling request,
//!   no buffer status report: those are `"sr_bsr"`'s, with its own [GAP]s).
//! - [GAP] handover: decided on the mean SINR (no fading, no L3 filter, no time to trigger);
//!   the UE's fading process carries on across cells; no interference between cells; the
//!   uplink is not interrupted; a forwarded queue keeps its HARQ state (a real target cell
//!   would get PDCP SDUs, not HARQ processes).
//! - Not built yet: RLC AM retransmission, per-UE `snr_trace`, roads beside (not through) the
//!   eNodeBs.

pub mod amc;
pub mod channel;
pub mod counters;
mod params;
pub mod request_grant;
mod tbs_table;

pub use params::{LteParams, Scheduler, Uplink, DEEP_BYTES, KIND, SHALLOW_BYTES};
pub use request_grant::SrBsrParams;

use super::model::{LinkModel, Offer};
use super::{DropReason, LinkOutput, LinkStats};
use crate::packet::PacketId;
use crate::rng::Stream;
use crate::Nanos;
use amc::Amc;
use channel::{db, lin, Fading};
use counters::LteCounters;
use request_grant::RequestGrant;
use rove_scenario::spec::LinkSpec;
use std::collections::VecDeque;

/// TTI, ns (TS 36.211 4.1: a subframe of 1 ms).
pub const TTI_NS: Nanos = 1_000_000;
/// HARQ processes per UE (TS 36.213 7: 8 for FDD).
pub const HARQ_PROCESSES: usize = 8;
/// HARQ round trip: a block sent in subframe n is retransmitted in n + 8 (ACK/NACK in n + 4,
/// TS 36.213 7.3; the eNodeB's retransmission 4 subframes later).
pub const HARQ_RTT_NS: Nanos = 8 * TTI_NS;

/// A packet in a UE's RLC queue.
#[derive(Debug, Clone, Copy)]
struct Sdu {
    id: PacketId,
    bytes: u32,
    /// Bytes not yet put in a transport block.
    left: u32,
    enqueued_at: Nanos,
    /// The UE's sequence number of the block carrying its first segment.
    first_tb: Option<u64>,
}

/// A transport block in the UE's HARQ processes and reordering buffer.
#[derive(Debug, Clone)]
struct Tb {
    seq: u64,
    process: usize,
    prbs: u32,
    mcs: usize,
    bits: u32,
    transmissions: u32,
    /// Sum of the linear SINRs of its transmissions (chase combining).
    sinr_sum: f64,
    retransmit_at: Option<Nanos>,
    decoded_at: Option<Nanos>,
    lost: bool,
    /// Packets whose last byte it carries: (id, bytes, seq of the block with their first).
    completes: Vec<(PacketId, u32, u64)>,
}

impl Tb {
    fn decided(&self) -> bool {
        self.decoded_at.is_some() || self.lost
    }
}

struct UeState {
    p: params::Ue,
    fading: Fading,
    rlc: VecDeque<Sdu>,
    /// Bytes in `rlc` not yet in a block.
    rlc_bytes: u64,
    blocks: VecDeque<Tb>,
    next_seq: u64,
    harq_free_at: [Nanos; HARQ_PROCESSES],
    /// The highest sequence number of a lost block released so far.
    last_lost: Option<u64>,
    last_release: Nanos,
    /// PF's average throughput, bits per TTI.
    avg_bits: f64,
    /// The CQI report in use: (its measurement index, CQI).
    report: Option<(u64, usize)>,
    /// Uplink: deliveries not yet due (time, bytes); the grant being filled (time, bytes used).
    ul_pending: VecDeque<(Nanos, u32)>,
    ul_bytes: u64,
    ul_grant: (Nanos, u64),
    ul_busy_until: Nanos,
    /// Uplink HARQ (`uplink_bler` > 0): the grant being filled's transport block (its grant
    /// instant, and its packets' release: `None` if lost), and the last release so far.
    ul_tb: Option<(Nanos, Option<Nanos>)>,
    ul_release: Nanos,
    /// `uplink = "sr_bsr"`: its buffer and MAC state.
    rg: RequestGrant,
    /// The eNodeB serving it (0 with one cell), and the end of its handover interruption.
    serving: usize,
    interrupted_until: Nanos,
}

impl UeState {
    /// Its position on the road at `now`, m (eNodeB k at k · `cell_spacing`), if it has one.
    fn position(&self, now: Nanos) -> Option<f64> {
        let x0 = self.p.distance_m?;
        Some(x0 + self.p.direction * self.p.speed_m_s * now as f64 / 1e9)
    }

    /// Its mean SINR (dB) at `now` from eNodeB `k`: fixed, or from its distance.
    fn mean_sinr_db_from(&self, now: Nanos, k: usize, cell: &Cell) -> f64 {
        match (self.p.snr_db, self.position(now)) {
            (Some(s), _) => s,
            (None, Some(x)) => {
                let d = (x - k as f64 * cell.spacing_m).abs();
                cell.tx_power_dbm - channel::path_loss_db(d) - cell.noise_dbm
            }
            (None, None) => unreachable!("snr or distance (checked)"),
        }
    }

    fn sinr_lin(&mut self, now: Nanos, cell: &Cell) -> f64 {
        let mean = lin(self.mean_sinr_db_from(now, self.serving, cell));
        self.fading.effective_sinr(now, mean)
    }

    /// The eNodeB nearest to it at `now` (the strongest: every eNodeB has the same power).
    fn nearest(&self, now: Nanos, cell: &Cell) -> usize {
        match self.position(now) {
            Some(x) => ((x / cell.spacing_m).round().max(0.0) as usize).min(cell.count - 1),
            None => 0,
        }
    }
}

/// The constants the UEs' channels need.
struct Cell {
    tx_power_dbm: f64,
    noise_dbm: f64,
    count: usize,
    spacing_m: f64,
}

pub struct Lte {
    name: String,
    ports: Vec<String>,
    p: LteParams,
    cell: Cell,
    amc: Amc,
    delay_ns: Nanos,
    ues: Vec<UeState>,
    rng: Stream,
    /// Uplink HARQ's draws (its own stream: the downlink's draws are unchanged).
    ul_rng: Stream,
    /// The service time the model last asked for (a call at another time is stale).
    next_service: Option<Nanos>,
    /// The last TTI served (its start).
    last_tti: Option<Nanos>,
    /// `uplink = "sr_bsr"`: the uplink TTI the model last asked for, and the last one served.
    ul_next: Option<Nanos>,
    ul_last_tti: Option<Nanos>,
    /// `sr_bsr`: scratch for the packets one PDU completes.
    ul_sent: Vec<request_grant::Sent>,
    rr_turn: usize,
    peak_bps: u64,
    stats: LinkStats,
    /// Per port ([`counters`]), and the PRB·TTIs every eNodeB allocated.
    counters: Vec<LteCounters>,
    cell_prbs_used: u64,
}

/// The first TTI start at or after `now`, and after the TTI `last` served.
fn tti_after(now: Nanos, last: Option<Nanos>) -> Nanos {
    let t = now.div_ceil(TTI_NS) * TTI_NS;
    last.map_or(t, |last| t.max(last + TTI_NS))
}

impl Lte {
    pub fn new(spec: &LinkSpec, run_seed: u64) -> Self {
        let p = params::parse(&spec.model).expect("lte keys are checked when parsed");
        let label = |what: &str| format!("link:{}:{what}", spec.name);
        let ues_len = p.ues.len();
        let ues = p
            .ues
            .iter()
            .map(|u| {
                let mut rng = Stream::new(run_seed, &label(&format!("fading:{}", u.name)));
                UeState {
                    fading: Fading::new(u.fading, u.doppler_hz, p.prbs, &mut rng),
                    p: u.clone(),
                    rlc: VecDeque::new(),
                    rlc_bytes: 0,
                    blocks: VecDeque::new(),
                    next_seq: 0,
                    harq_free_at: [0; HARQ_PROCESSES],
                    last_lost: None,
                    last_release: 0,
                    avg_bits: 0.0,
                    report: None,
                    ul_pending: VecDeque::new(),
                    ul_bytes: 0,
                    ul_grant: (0, 0),
                    ul_busy_until: 0,
                    ul_tb: None,
                    ul_release: 0,
                    rg: RequestGrant::default(),
                    serving: 0,
                    interrupted_until: 0,
                }
            })
            .collect();
        let mut lte = Lte {
            name: spec.name.clone(),
            ports: spec.ports.clone(),
            cell: Cell {
                tx_power_dbm: p.tx_power_dbm,
                noise_dbm: channel::noise_dbm(p.prbs, p.noise_figure_db),
                count: p.cells as usize,
                spacing_m: p.cell_spacing_m,
            },
            amc: Amc::new(p.prbs, p.bler_sigma_db),
            peak_bps: u64::from(amc::tbs_bits(amc::MAX_MCS, p.prbs)) * 1000,
            p,
            delay_ns: spec.delay_ns,
            ues,
            rng: Stream::new(run_seed, &label("harq")),
            ul_rng: Stream::new(run_seed, &label("ul_harq")),
            next_service: None,
            last_tti: None,
            ul_next: None,
            ul_last_tti: None,
            ul_sent: Vec::new(),
            rr_turn: 0,
            stats: LinkStats::default(),
            counters: vec![LteCounters::default(); 2 * ues_len],
            cell_prbs_used: 0,
        };
        for u in &mut lte.ues {
            u.serving = u.nearest(0, &lte.cell);
        }
        lte
    }

    /// Hands UE `i` over to the nearest eNodeB when its mean SINR from it beats the serving
    /// one's by `handover_hysteresis` (an A3 event, TS 36.331 5.5.4.4, on the mean SINR: no
    /// fading, no time to trigger). The UE is not scheduled for `handover_interruption`; its
    /// RLC queue is forwarded to the target (its pending HARQ retransmissions resume after the
    /// interruption) or lost with them (MAC drops).
    fn check_handover(&mut self, i: usize, now: Nanos, out: &mut Vec<LinkOutput>) {
        let u = &self.ues[i];
        let target = u.nearest(now, &self.cell);
        if target == u.serving
            || u.mean_sinr_db_from(now, target, &self.cell)
                < u.mean_sinr_db_from(now, u.serving, &self.cell) + self.p.handover_hysteresis_db
        {
            return;
        }
        let resume = (now + self.p.handover_interruption_ns).div_ceil(TTI_NS) * TTI_NS;
        let u = &mut self.ues[i];
        u.serving = target;
        u.interrupted_until = resume;
        u.report = None;
        if self.p.handover_forward {
            let mut slot = resume;
            for b in u.blocks.iter_mut().filter(|b| b.retransmit_at.is_some()) {
                b.retransmit_at = Some(slot);
                slot += TTI_NS;
            }
            return;
        }
        for b in u.blocks.iter_mut().filter(|b| b.retransmit_at.is_some()) {
            b.retransmit_at = None;
            b.lost = true;
        }
        for sdu in u.rlc.drain(..) {
            out.push(LinkOutput::Drop {
                id: sdu.id,
                reason: DropReason::MacRetryLimit,
            });
            self.stats.mac_drops += 1;
            self.counters[2 * i].mac_drops += 1;
        }
        u.rlc_bytes = 0;
        self.release(i, out);
    }

    /// The MCS the eNodeB uses for UE `i` at TTI `now`, `None` if its CQI is out of range.
    fn mcs(&mut self, i: usize, now: Nanos) -> Option<usize> {
        if let Some(m) = self.ues[i].p.mcs {
            return Some(m);
        }
        let k = now.saturating_sub(self.p.cqi_delay_ns) / self.p.cqi_period_ns;
        let cqi = match self.ues[i].report {
            Some((kk, cqi)) if kk == k => cqi,
            _ => {
                let at = k * self.p.cqi_period_ns;
                let sinr = self.ues[i].sinr_lin(at, &self.cell);
                let cqi = Amc::cqi(db(sinr));
                self.ues[i].report = Some((k, cqi));
                cqi
            }
        };
        self.counters[2 * i].last_cqi = Some(cqi as u8);
        (cqi > 0).then(|| self.amc.mcs_for_cqi(cqi))
    }

    /// The next TTI start at or after `now` not yet served.
    fn next_tti(&self, now: Nanos) -> Nanos {
        tti_after(now, self.last_tti)
    }

    fn busy(&self) -> bool {
        self.ues
            .iter()
            .any(|u| u.rlc_bytes > 0 || u.blocks.iter().any(|b| b.retransmit_at.is_some()))
    }

    /// Serves the downlink TTI starting at `now`.
    fn tti(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) {
        // PF averages decay through TTIs the cell was idle.
        let idle = match self.last_tti {
            Some(last) => (now - last) / TTI_NS - 1,
            None => 0,
        };
        let keep = 1.0 - TTI_NS as f64 / self.p.pf_window_ns as f64;
        if idle > 0 {
            let f = keep.powi(idle.min(i32::MAX as u64) as i32);
            for u in &mut self.ues {
                u.avg_bits *= f;
            }
        }
        self.last_tti = Some(now);
        let n = self.ues.len();
        if self.cell.count > 1 {
            for i in 0..n {
                self.check_handover(i, now, out);
            }
        }
        let mut served_bits = vec![0u32; n];
        let mut prbs_left = vec![self.p.prbs; self.cell.count];
        // 1. Retransmissions.
        let mut retransmitting = vec![false; n];
        for i in 0..n {
            let due = self.ues[i]
                .blocks
                .iter()
                .position(|b| b.retransmit_at == Some(now));
            if let Some(k) = due {
                let prbs = self.ues[i].blocks[k].prbs;
                let c = self.ues[i].serving;
                prbs_left[c] = prbs_left[c].saturating_sub(prbs);
                retransmitting[i] = true;
                served_bits[i] = self.ues[i].blocks[k].bits;
                self.counters[2 * i].tx_retries += 1;
                self.counters[2 * i].prbs += u64::from(prbs);
                self.cell_prbs_used += u64::from(prbs);
                self.transmit(i, k, now);
            }
        }
        // 2. New data, in the scheduler's order.
        let mut candidates: Vec<(usize, usize, f64)> = Vec::new();
        for (i, &retx) in retransmitting.iter().enumerate() {
            let u = &self.ues[i];
            if retx
                || u.rlc_bytes == 0
                || u.interrupted_until > now
                || !u.harq_free_at.iter().any(|&f| f <= now)
            {
                continue;
            }
            let Some(mcs) = self.mcs(i, now) else {
                continue;
            };
            let rate = f64::from(amc::tbs_bits(mcs, self.p.prbs));
            let metric = match self.p.scheduler {
                Scheduler::ProportionalFair => rate / self.ues[i].avg_bits.max(1e-9),
                Scheduler::MaxCi => rate,
                Scheduler::RoundRobin => -(((i + n - self.rr_turn) % n) as f64),
            };
            candidates.push((i, mcs, metric));
        }
        // Highest metric first; ties to the lower index.
        candidates.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
        if self.p.scheduler == Scheduler::RoundRobin {
            if let Some(&(first, _, _)) = candidates.first() {
                self.rr_turn = (first + 1) % n;
            }
        }
        for (i, mcs, _) in candidates {
            let left = &mut prbs_left[self.ues[i].serving];
            if *left == 0 {
                continue;
            }
            let need = self.ues[i].rlc_bytes.saturating_mul(8);
            let prbs = (1..=*left)
                .find(|&k| u64::from(amc::tbs_bits(mcs, k)) >= need)
                .unwrap_or(*left);
            *left -= prbs;
            let bits = amc::tbs_bits(mcs, prbs);
            served_bits[i] = bits;
            let c = &mut self.counters[2 * i];
            c.prbs += u64::from(prbs);
            c.last_mcs = Some(mcs as u8);
            c.last_tbs_bits = Some(bits);
            self.cell_prbs_used += u64::from(prbs);
            let k = self.new_block(i, now, mcs, prbs, bits);
            self.transmit(i, k, now);
        }
        // 3. PF averages, releases.
        for (u, bits) in self.ues.iter_mut().zip(served_bits) {
            u.avg_bits = keep * u.avg_bits + (1.0 - keep) * f64::from(bits);
        }
        for i in 0..n {
            self.release(i, out);
        }
    }

    /// Fills a new transport block for UE `i` from its RLC queue; returns its index in `blocks`.
    fn new_block(&mut self, i: usize, now: Nanos, mcs: usize, prbs: u32, bits: u32) -> usize {
        let u = &mut self.ues[i];
        let seq = u.next_seq;
        u.next_seq += 1;
        let process = u
            .harq_free_at
            .iter()
            .position(|&f| f <= now)
            .expect("a free HARQ process (checked)");
        let mut room = bits / 8;
        let mut completes = Vec::new();
        while room > 0 {
            let Some(s) = u.rlc.front_mut() else {
                break;
            };
            if s.first_tb.is_none() {
                s.first_tb = Some(seq);
                self.stats.sojourn.record(now - s.enqueued_at);
            }
            let take = s.left.min(room);
            s.left -= take;
            room -= take;
            u.rlc_bytes -= u64::from(take);
            if s.left == 0 {
                completes.push((s.id, s.bytes, s.first_tb.expect("set above")));
                u.rlc.pop_front();
            }
        }
        u.blocks.push_back(Tb {
            seq,
            process,
            prbs,
            mcs,
            bits,
            transmissions: 0,
            sinr_sum: 0.0,
            retransmit_at: None,
            decoded_at: None,
            lost: false,
            completes,
        });
        u.blocks.len() - 1
    }

    /// Sends block `k` of UE `i` in the TTI at `now`: decoded, to be retransmitted, or lost.
    fn transmit(&mut self, i: usize, k: usize, now: Nanos) {
        let sinr = self.ues[i].sinr_lin(now, &self.cell);
        let max_tx = self.p.harq_max_tx;
        let u = &mut self.ues[i];
        let b = &mut u.blocks[k];
        b.transmissions += 1;
        b.sinr_sum += sinr;
        let bler = self.amc.bler(b.mcs, db(b.sinr_sum));
        let ok = self.rng.uniform() >= bler;
        u.harq_free_at[b.process] = now + HARQ_RTT_NS;
        let c = &mut self.counters[2 * i];
        if ok {
            b.decoded_at = Some(now + TTI_NS);
            b.retransmit_at = None;
            c.tbs_bits += u64::from(b.bits);
        } else if b.transmissions < max_tx {
            b.retransmit_at = Some(now + HARQ_RTT_NS);
            c.phy_errors += 1;
        } else {
            b.retransmit_at = None;
            b.lost = true;
            c.phy_errors += 1;
            c.harq_failures += 1;
        }
    }

    /// Delivers (or drops) the packets of UE `i`'s decided blocks at the head of its reordering
    /// buffer.
    fn release(&mut self, i: usize, out: &mut Vec<LinkOutput>) {
        let u = &mut self.ues[i];
        while u.blocks.front().is_some_and(Tb::decided) {
            let b = u.blocks.pop_front().expect("checked");
            if b.lost {
                u.last_lost = Some(b.seq);
            }
            let at = b.decoded_at.map(|d| d.max(u.last_release));
            if let Some(at) = at {
                u.last_release = at;
            }
            for (id, bytes, first) in b.completes {
                let doomed = u.last_lost.is_some_and(|l| l >= first);
                match at {
                    Some(at) if !doomed => {
                        out.push(LinkOutput::Deliver {
                            id,
                            at: at + self.delay_ns,
                        });
                        self.stats.departed_bytes += u64::from(bytes);
                        self.stats.departed_pkts += 1;
                        self.counters[2 * i].tx_packets += 1;
                        self.counters[2 * i].tx_bytes += u64::from(bytes);
                    }
                    _ => {
                        out.push(LinkOutput::Drop {
                            id,
                            reason: DropReason::MacRetryLimit,
                        });
                        self.stats.mac_drops += 1;
                        self.counters[2 * i].mac_drops += 1;
                    }
                }
            }
        }
    }

    /// A packet for UE `i`'s uplink: delivered at its grant (or serialized), known at once;
    /// with `sr_bsr`, buffered until its grant (returns the uplink TTI to serve, if idle).
    fn uplink(
        &mut self,
        i: usize,
        now: Nanos,
        packet: Offer,
        out: &mut Vec<LinkOutput>,
    ) -> Option<Nanos> {
        if let Uplink::SrBsr(_) = self.p.uplink {
            return self.request_grant_offer(i, now, packet, out);
        }
        let u = &mut self.ues[i];
        while u.ul_pending.front().is_some_and(|&(t, _)| t <= now) {
            let (_, b) = u.ul_pending.pop_front().expect("checked");
            u.ul_bytes -= u64::from(b);
        }
        if u.ul_bytes + u64::from(packet.bytes) > self.p.rlc_buffer_bytes {
            self.overflow(2 * i + 1, packet.id, out);
            return None;
        }
        let (sent_at, done) = match self.p.uplink {
            Uplink::Grants => {
                let period = self.p.grant_period_ns;
                let budget = self.p.uplink_bps * period / 8 / 1_000_000_000;
                let first = now.div_ceil(period) * period;
                let (mut g, mut used) = u.ul_grant;
                if g < first {
                    (g, used) = (first, 0);
                }
                if used > 0 && used + u64::from(packet.bytes) > budget {
                    (g, used) = (g + period, 0);
                }
                u.ul_grant = (g, used + u64::from(packet.bytes));
                (g, g + TTI_NS)
            }
            Uplink::PerPacket => {
                let start = now.max(u.ul_busy_until);
                u.ul_busy_until =
                    start + u64::from(packet.bytes) * 8 * 1_000_000_000 / self.p.uplink_bps;
                (start, u.ul_busy_until)
            }
            Uplink::SrBsr(_) => unreachable!("buffered by request_grant_offer"),
        };
        self.stats.sojourn.record(sent_at - now);
        u.ul_pending.push_back((done, packet.bytes));
        u.ul_bytes += u64::from(packet.bytes);
        // One transport block per grant (its packets share its fate) or per packet.
        let release = match (self.p.uplink, u.ul_tb) {
            (Uplink::Grants, Some((g, r))) if g == sent_at => r,
            _ => {
                let r = self.ul_block(i, done);
                self.ues[i].ul_tb = Some((sent_at, r));
                r
            }
        };
        let Some(done) = release else {
            self.ul_lost(i, packet.id, out);
            return None;
        };
        self.stats.departed_bytes += u64::from(packet.bytes);
        self.stats.departed_pkts += 1;
        self.counters[2 * i + 1].tx_packets += 1;
        self.counters[2 * i + 1].tx_bytes += u64::from(packet.bytes);
        out.push(LinkOutput::Deliver {
            id: packet.id,
            at: done + self.delay_ns,
        });
        None
    }

    /// Uplink HARQ (TS 36.213 8 and 9.1.2, TS 36.321 5.4.2.2: synchronous, a failed PUSCH
    /// transmission in subframe n is NACKed on the PHICH in n + 4 and retransmitted in n + 8):
    /// the fate of UE `i`'s transport block whose first transmission ends at `end`. Each
    /// transmission fails with probability `uplink_bler` (independently: [GAP] no combining
    /// gain); after `uplink_harq_max` failures the block is lost (`None`). Otherwise its packets
    /// are released when it is decoded, and not before an earlier block's (the eNodeB's RLC
    /// delivers in sequence, TS 36.322 5.1.2.2 and 5.1.3.2: a block sent while an earlier one is retransmitted
    /// waits for it; `uplink_in_order = false`, the ablation: released at its own decoding).
    /// With `uplink_bler` = 0 no draw: released at `end`.
    fn ul_block(&mut self, i: usize, end: Nanos) -> Option<Nanos> {
        if self.p.uplink_bler == 0.0 {
            return Some(end);
        }
        let c = &mut self.counters[2 * i + 1];
        let mut n = 1;
        let ok = loop {
            if self.ul_rng.uniform() >= self.p.uplink_bler {
                break true;
            }
            c.phy_errors += 1;
            if n == self.p.uplink_harq_max {
                break false;
            }
            n += 1;
        };
        c.tx_retries += u64::from(n - 1);
        let u = &mut self.ues[i];
        let own = end + u64::from(n - 1) * HARQ_RTT_NS;
        let decided = if self.p.uplink_in_order {
            own.max(u.ul_release)
        } else {
            own
        };
        u.ul_release = decided;
        if ok {
            Some(decided)
        } else {
            c.harq_failures += 1;
            None
        }
    }

    /// A packet of UE `i`'s uplink in a lost transport block: a MAC drop.
    fn ul_lost(&mut self, i: usize, id: PacketId, out: &mut Vec<LinkOutput>) {
        out.push(LinkOutput::Drop {
            id,
            reason: DropReason::MacRetryLimit,
        });
        self.stats.mac_drops += 1;
        self.counters[2 * i + 1].mac_drops += 1;
    }

    /// A packet refused by a full RLC queue (`rlc_buffer`) of port `port` (2i: UE i's downlink,
    /// 2i + 1: its uplink): a queue drop.
    fn overflow(&mut self, port: usize, id: PacketId, out: &mut Vec<LinkOutput>) {
        self.stats.queue_drops += 1;
        self.counters[port].overflow_drops += 1;
        out.push(LinkOutput::Drop {
            id,
            reason: DropReason::QueueFull,
        });
    }

    /// `sr_bsr`: buffers a packet in UE `i`'s uplink (dropped if `rlc_buffer` is full); returns
    /// the uplink TTI to serve when the uplink was idle.
    fn request_grant_offer(
        &mut self,
        i: usize,
        now: Nanos,
        packet: Offer,
        out: &mut Vec<LinkOutput>,
    ) -> Option<Nanos> {
        let rg = &mut self.ues[i].rg;
        if rg.buffered_bytes() + u64::from(packet.bytes) > self.p.rlc_buffer_bytes {
            self.overflow(2 * i + 1, packet.id, out);
            return None;
        }
        rg.push(packet.id, packet.bytes, now);
        if self.ul_next.is_some() {
            return None; // the uplink TTIs are running
        }
        let t = tti_after(now, self.ul_last_tti);
        self.ul_next = Some(t);
        Some(t)
    }

    /// `sr_bsr`: serves every UE's uplink in the TTI starting at `now`.
    fn uplink_tti(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) {
        let Uplink::SrBsr(p) = self.p.uplink else {
            unreachable!("uplink TTIs run with sr_bsr only");
        };
        self.ul_last_tti = Some(now);
        let max_grant_bytes = self.p.uplink_bps * TTI_NS / 8 / 1_000_000_000;
        let mut sent = std::mem::take(&mut self.ul_sent);
        for i in 0..self.ues.len() {
            sent.clear();
            let Some(pusch) = self.ues[i]
                .rg
                .tti(now, &p, max_grant_bytes, |s| sent.push(s))
            else {
                continue;
            };
            // One transport block per PUSCH: its packets share its fate, and a packet
            // segmented across blocks also its earlier segments'.
            let release = self.ul_block(i, pusch + TTI_NS);
            self.ues[i].rg.block_decided(release);
            for s in &sent {
                self.stats.sojourn.record(s.sent_at - s.arrived_at);
                let Some(at) = s.earlier.and(release) else {
                    self.ul_lost(i, s.id, out);
                    continue;
                };
                self.stats.departed_bytes += u64::from(s.bytes);
                self.stats.departed_pkts += 1;
                self.counters[2 * i + 1].tx_packets += 1;
                self.counters[2 * i + 1].tx_bytes += u64::from(s.bytes);
                out.push(request_grant::delivery(s, self.delay_ns, at));
            }
        }
        self.ul_next = self.ues.iter().any(|u| u.rg.busy()).then_some(now + TTI_NS);
        self.ul_sent = sent; // kept: no allocation per TTI
    }
}

impl LinkModel for Lte {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        KIND.kind
    }

    fn offer(&mut self, now: Nanos, packet: Offer, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        self.stats.arrived_pkts += 1;
        let i = usize::from(packet.port / 2);
        if !packet.port.is_multiple_of(2) {
            return self.uplink(i, now, packet, out);
        }
        let u = &mut self.ues[i];
        if u.rlc_bytes + u64::from(packet.bytes) > self.p.rlc_buffer_bytes {
            self.overflow(2 * i, packet.id, out);
            return None;
        }
        u.rlc.push_back(Sdu {
            id: packet.id,
            bytes: packet.bytes,
            left: packet.bytes,
            enqueued_at: now,
            first_tb: None,
        });
        u.rlc_bytes += u64::from(packet.bytes);
        if self.next_service.is_some() {
            return None; // the TTIs are running
        }
        let t = self.next_tti(now);
        self.next_service = Some(t);
        Some(t)
    }

    /// Serves the downlink TTI and (`sr_bsr`) the uplink TTI due at `now`; each runs while it
    /// has work, and the model asks for the earlier of their next TTIs.
    fn service(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        let downlink = self.next_service == Some(now);
        let uplink = self.ul_next == Some(now);
        if !downlink && !uplink {
            return None; // superseded
        }
        if downlink {
            self.tti(now, out);
            self.next_service = self.busy().then_some(now + TTI_NS);
        }
        if uplink {
            self.uplink_tti(now, out);
        }
        match (self.next_service, self.ul_next) {
            (Some(d), Some(u)) => Some(d.min(u)),
            (d, u) => d.or(u),
        }
    }

    fn stats(&self) -> &LinkStats {
        &self.stats
    }

    fn stats_mut(&mut self) -> &mut LinkStats {
        &mut self.stats
    }

    fn backlog_bytes(&self) -> u64 {
        self.ues
            .iter()
            .map(|u| u.rlc_bytes + u.ul_bytes + u.rg.buffered_bytes())
            .sum()
    }

    fn backlog_packets(&self) -> usize {
        self.ues
            .iter()
            .map(|u| u.rlc.len() + u.ul_pending.len() + u.rg.buffered_packets())
            .sum()
    }

    /// The peak rate (MCS 28 over every PRB) over `[0, until]`.
    fn capacity_bytes(&self, until: Nanos) -> f64 {
        self.peak_bps as f64 / 8.0 * until as f64 / 1e9
    }

    fn port(&self, name: &str) -> Option<u16> {
        self.ports.iter().position(|p| p == name).map(|i| i as u16)
    }

    fn port_names(&self) -> Vec<String> {
        self.ports.clone()
    }

    fn radio(&self) -> Option<&dyn super::wifi::counters::RadioCounters> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
