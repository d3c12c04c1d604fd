//! Estimators BBR v1 (`tcp_bbr.c`) and BBRv2 (`tcp_bbr2.c`, which copies them from v1) share:
//! full-pipe detection and the ACK-aggregation ("extra_acked") estimator. Each algorithm keeps
//! one of each and feeds it its own bandwidth estimate and round starts.

use super::bbr::{
    mstamp_us, us_delta, ACK_EPOCH_ACKED_RESET_THRESH, BBR_SCALE, BBR_UNIT, BW_UNIT, FULL_BW_CNT,
    FULL_BW_THRESH,
};
use crate::state::{RateSample, TcpState};

/// bbr_check_full_bw_reached's state: the pipe is full once FULL_BW_CNT round starts in a row
/// brought less than FULL_BW_THRESH (25 %) growth of max_bw.
#[derive(Debug, Clone, Default)]
pub(super) struct FullPipe {
    /// bbr->full_bw_reached.
    pub reached: bool,
    /// bbr->full_bw_cnt: rounds without growth.
    pub cnt: u32,
    /// bbr->full_bw: the bandwidth growth is measured against.
    pub bw: u32,
}

impl FullPipe {
    /// bbr_check_full_bw_reached.
    pub fn check(&mut self, round_start: bool, rs: &RateSample, max_bw: u32) {
        if self.reached || !round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if max_bw >= bw_thresh {
            self.bw = max_bw;
            self.cnt = 0;
            return;
        }
        self.cnt += 1;
        self.reached = self.cnt >= FULL_BW_CNT;
    }

    /// Detection starts over (bbr_reset_full_bw and its callers).
    pub fn restart(&mut self) {
        *self = FullPipe::default();
    }
}

/// bbr_update_ack_aggregation's state: the packets ACKed beyond what the bandwidth estimate
/// explains since the start of an ACK epoch, max-filtered over two windows of rounds.
#[derive(Debug, Clone, Default)]
pub(super) struct AckAggregation {
    /// Start of the current ACK epoch, µs.
    pub epoch_mstamp: u64,
    /// Packets ACKed in the current epoch (20 bits in the kernel).
    pub epoch_acked: u32,
    /// Max extra ACKed in the two halves of the filter window.
    pub extra_acked: [u16; 2],
    /// Age of the current half, in rounds (5 bits).
    pub win_rtts: u32,
    pub win_idx: usize,
}

impl AckAggregation {
    /// bbr_extra_acked: max excess ACKed over the filter window.
    pub fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1]) as u32
    }

    /// A new ACK epoch starts at `now_us` (idle restart).
    pub fn restart_epoch(&mut self, now_us: u64) {
        self.epoch_mstamp = now_us;
        self.epoch_acked = 0;
    }

    /// bbr_update_ack_aggregation for one ACK. `bw` is the algorithm's bandwidth estimate
    /// (BW_UNIT), `win_rtts` the rounds per half of the filter window.
    pub fn update(
        &mut self,
        tp: &TcpState,
        rs: &RateSample,
        round_start: bool,
        bw: u32,
        win_rtts: u32,
    ) {
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1F);
            if self.win_rtts >= win_rtts {
                self.win_rtts = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        let delivered_us = mstamp_us(tp.delivered_mstamp);
        let epoch_us = us_delta(delivered_us, self.epoch_mstamp);
        let mut expected_acked = (bw as u64 * epoch_us / BW_UNIT).min(u32::MAX as u64) as u32;
        // Restart the epoch when ACKs come slower than expected, or after very many.
        if self.epoch_acked <= expected_acked
            || self.epoch_acked.saturating_add(rs.acked_sacked) >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.epoch_acked = 0;
            self.epoch_mstamp = delivered_us;
            expected_acked = 0;
        }
        self.epoch_acked = self
            .epoch_acked
            .saturating_add(rs.acked_sacked)
            .min(0xFFFFF);
        let extra = self
            .epoch_acked
            .saturating_sub(expected_acked)
            .min(tp.snd_cwnd);
        let slot = &mut self.extra_acked[self.win_idx];
        if extra > *slot as u32 {
            *slot = extra.min(u16::MAX as u32) as u16;
        }
    }
}

/// The model's telemetry both versions record (`CongestionControl::telemetry`): the bandwidth
/// estimate in bit/s (from packets per µs << BW_SCALE), the min RTT in ms (NaN before a
/// sample), and the pacing and cwnd gains in force, into `out[0..4]`.
pub(super) fn model_telemetry(
    bw: u32,
    min_rtt_us: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    tp: &TcpState,
    out: &mut [f64],
) {
    out[0] = super::bbr::bw_bps(tp, bw);
    out[1] = if min_rtt_us == u32::MAX {
        f64::NAN
    } else {
        min_rtt_us as f64 / 1e3
    };
    out[2] = pacing_gain as f64 / BBR_UNIT as f64;
    out[3] = cwnd_gain as f64 / BBR_UNIT as f64;
}
