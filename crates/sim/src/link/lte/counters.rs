//! The LTE cell's counters, sampled into `radio.parquet` as the WiFi cell's are (issue 14
//! item 6): one row per port per sample, port `"u1"` the eNodeB's downlink to UE u1 and
//! `"u1:up"` u1's uplink. Counters are cumulative from the start of the run.
//!
//! The WiFi columns an LTE row fills, with the meaning they have there:
//! - `backlog_bytes`, `qlen`: the UE's RLC queue, bytes not yet in a transport block and its
//!   packets (downlink); the uplink's packets not yet received (uplink).
//! - `overflow_drops`: packets dropped at a full RLC queue (`rlc_buffer`).
//! - `mac_drops`: packets lost with a transport block after `harq_max_tx` transmissions (or
//!   dropped at a handover with `handover_rlc = "lost"`).
//! - `tx_packets`, `tx_bytes`: packets delivered, their IP bytes.
//! - `tx_retries`: HARQ retransmissions of transport blocks; `phy_errors`: transmissions the
//!   UE failed to decode (NACKs).
//! - `tx_bitrate_bps`: the downlink's last new transport block's TBS per 1 ms TTI (the rate
//!   the scheduler gave the UE in that TTI); the uplink's `uplink_rate`.
//! - `signal_db`: the UE's mean SINR (dB) from its serving eNodeB, without fading.
//!
//! `ac` is "", `codel_drops`, `requeues`, `collisions`, `internal_collisions` are 0, the
//! survey and `airtime_ms` NaN. Own columns ([`RadioSeries`]): `cqi`, `mcs`, `prbs`,
//! `tbs_bits`, `harq_failures`, `cell_prbs_used`, `cell_prbs`. PRB utilisation over a window is
//! Δ`cell_prbs_used` / (Δt in ms × `cell_prbs`); a port's PRB share Δ`prbs` / the same.
//!
//! [GAP] `cqi` is the last report the scheduler used (reports are read when the UE has data
//! to schedule): NaN before the first, and it stays at the last while the UE's queue is empty.

use super::super::wifi::counters::{
    RadioCounters, RadioSampling, RadioSeries, RadioTotals, Survey, NO_AC,
};
use super::Lte;
use crate::Nanos;

/// One port's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LteCounters {
    pub overflow_drops: u64,
    pub mac_drops: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub tx_retries: u64,
    pub phy_errors: u64,
    pub prbs: u64,
    pub tbs_bits: u64,
    pub harq_failures: u64,
    /// The last CQI report the scheduler used, the MCS and TBS of the last new block.
    pub last_cqi: Option<u8>,
    pub last_mcs: Option<u8>,
    pub last_tbs_bits: Option<u32>,
}

impl RadioCounters for Lte {
    fn radio_sampling(&self) -> RadioSampling {
        match self.p.sample_interval_ns {
            Some(ns) => RadioSampling::Every(ns),
            None => RadioSampling::WithRecorder,
        }
    }

    fn sample_radio(&self, now: Nanos, link: u32, out: &mut RadioSeries) {
        let t = now as f64 / 1e9;
        let opt = |x: Option<u8>| x.map_or(f64::NAN, f64::from);
        out.lte = true;
        for (i, u) in self.ues.iter().enumerate() {
            for up in [false, true] {
                let port = 2 * i + usize::from(up);
                let c = &self.counters[port];
                let (backlog, qlen, rate) = if up {
                    // Packets not yet sent: those waiting for their grant (`per_packet`,
                    // `grants`) or in the UE's buffer (`sr_bsr`); one of the two is empty.
                    let waiting = u.ul_pending.iter().filter(|&&(at, _)| at > now);
                    let (n, bytes) =
                        waiting.fold((0u32, 0u64), |(n, b), &(_, x)| (n + 1, b + u64::from(x)));
                    (
                        bytes + u.rg.buffered_bytes(),
                        n + u.rg.buffered_packets() as u32,
                        self.p.uplink_bps as f64,
                    )
                } else {
                    let rate = c.last_tbs_bits.map_or(f64::NAN, |b| f64::from(b) * 1e3);
                    (u.rlc_bytes, u.rlc.len() as u32, rate)
                };
                out.time_s.push(t);
                out.link.push(link);
                out.port.push(port as u16);
                out.ac.push(NO_AC);
                out.backlog_bytes.push(backlog);
                out.qlen.push(qlen);
                out.overflow_drops.push(c.overflow_drops);
                out.codel_drops.push(0);
                out.mac_drops.push(c.mac_drops);
                out.requeues.push(0);
                out.tx_packets.push(c.tx_packets);
                out.tx_bytes.push(c.tx_bytes);
                out.tx_retries.push(c.tx_retries);
                out.collisions.push(0);
                out.phy_errors.push(c.phy_errors);
                out.internal_collisions.push(0);
                out.tx_bitrate_bps.push(rate);
                out.signal_db
                    .push(u.mean_sinr_db_from(now, u.serving, &self.cell));
                out.survey_busy_ms.push(f64::NAN);
                out.survey_tx_ms.push(f64::NAN);
                out.survey_rx_ms.push(f64::NAN);
                out.airtime_ms.push(f64::NAN);
                out.cqi.push(opt(c.last_cqi));
                out.mcs.push(opt(c.last_mcs));
                out.prbs.push(c.prbs);
                out.tbs_bits.push(c.tbs_bits);
                out.harq_failures.push(c.harq_failures);
                out.cell_prbs_used.push(self.cell_prbs_used);
                out.cell_prbs.push(self.p.prbs * self.p.cells);
                out.ap.push(0);
            }
        }
    }

    /// Not reported in `summary.json` (its `links[]` entry is unchanged).
    fn radio_totals(&self) -> RadioTotals {
        RadioTotals {
            survey: Survey::default(),
            ports: Vec::new(),
            ..Default::default()
        }
    }

    fn in_summary(&self) -> bool {
        false
    }
}
