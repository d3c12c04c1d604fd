//! HighSpeed TCP (Floyd, RFC 3649), as Linux 6.18 `net/ipv4/tcp_highspeed.c`.
//!
//! # The algorithm
//!
//! Reno's AIMD (+1 packet per RTT, ×½ on loss) needs hours of loss-free transfer to fill a
//! 10 Gbit/s, 100 ms path. HighSpeed TCP keeps Reno's response below 38 packets and, above it,
//! makes both the additive increase `a(w)` and the multiplicative decrease `b(w)` functions of
//! the window: the larger the window, the larger the increase per RTT and the smaller the cut.
//! RFC 3649 Appendix B tabulates them; the kernel keeps 72 rows of that table
//! (`hstcp_aimd_vals`): the upper cwnd bound of each row and its decrease `b` scaled by 256.
//! The row index doubles as the increase: in row `ai`, `a(w) = ai + 1` packets per RTT.
//!
//! - **Slow start** is Reno's (`tcp_slow_start`).
//! - **Congestion avoidance**: first move `ai` so that `vals[ai-1].cwnd < cwnd <= vals[ai].cwnd`
//!   (a walk up or down from the previous row, stopping at the last row), then add `ai + 1` to
//!   `snd_cwnd_cnt` per ACK and grow cwnd by one whenever the count reaches cwnd: `a(w)/w` per
//!   ACK. As in the kernel, the increase is per ACK, not per packet acked (`acked` is ignored
//!   outside slow start).
//! - **ssthresh**: `max(cwnd − cwnd·md[ai]/256, 2)`, with the row last set by congestion
//!   avoidance (so a loss in slow start uses the row of the last congestion-avoidance ACK).
//! - **undo**: Reno's (`max(cwnd, prior_cwnd)`).
//! - **init** clamps `snd_cwnd_clamp` to `0xffffffff/128` so `cwnd·md` cannot overflow; the
//!   clamp stays after a switch to another algorithm, as in the kernel.
//!
//! # Where this differs from tcp_highspeed.c
//!
//! - Nothing in the arithmetic. tcp_highspeed.c has no module parameters; `cc_params` accepts
//!   none.

use super::{reject_unknown, CcConfig, CongestionControl, ParamError};
use crate::state::TcpState;

/// One row of hstcp_aimd_vals: the window's upper bound (packets) and the decrease b(w)·256.
#[derive(Debug, Clone, Copy)]
pub struct AimdVal {
    pub cwnd: u32,
    pub md: u32,
}

const fn v(cwnd: u32, md: u32) -> AimdVal {
    AimdVal { cwnd, md }
}

/// hstcp_aimd_vals, tcp_highspeed.c (RFC 3649 Appendix B; md = b(w) << 8).
pub const HSTCP_AIMD_VALS: [AimdVal; 72] = [
    v(38, 128),
    v(118, 112),
    v(221, 104),
    v(347, 98),
    v(495, 93),
    v(663, 89),
    v(851, 86),
    v(1058, 83),
    v(1284, 81),
    v(1529, 78),
    v(1793, 76),
    v(2076, 74),
    v(2378, 72),
    v(2699, 71),
    v(3039, 69),
    v(3399, 68),
    v(3778, 66),
    v(4177, 65),
    v(4596, 64),
    v(5036, 62),
    v(5497, 61),
    v(5979, 60),
    v(6483, 59),
    v(7009, 58),
    v(7558, 57),
    v(8130, 56),
    v(8726, 55),
    v(9346, 54),
    v(9991, 53),
    v(10661, 52),
    v(11358, 52),
    v(12082, 51),
    v(12834, 50),
    v(13614, 49),
    v(14424, 48),
    v(15265, 48),
    v(16137, 47),
    v(17042, 46),
    v(17981, 45),
    v(18955, 45),
    v(19965, 44),
    v(21013, 43),
    v(22101, 43),
    v(23230, 42),
    v(24402, 41),
    v(25618, 41),
    v(26881, 40),
    v(28193, 39),
    v(29557, 39),
    v(30975, 38),
    v(32450, 38),
    v(33986, 37),
    v(35586, 36),
    v(37253, 36),
    v(38992, 35),
    v(40808, 35),
    v(42707, 34),
    v(44694, 33),
    v(46776, 33),
    v(48961, 32),
    v(51258, 32),
    v(53677, 31),
    v(56230, 30),
    v(58932, 30),
    v(61799, 29),
    v(64851, 28),
    v(68113, 28),
    v(71617, 27),
    v(75401, 26),
    v(79517, 26),
    v(84035, 25),
    v(89053, 24),
];

/// HSTCP_AIMD_MAX, tcp_highspeed.c: ARRAY_SIZE(hstcp_aimd_vals).
const HSTCP_AIMD_MAX: usize = HSTCP_AIMD_VALS.len();

/// hstcp_init, tcp_highspeed.c: snd_cwnd_clamp ≤ 0xffffffff/128 so cwnd·md fits in a u32.
const HSTCP_CWND_CLAMP: u32 = 0xffff_ffff / 128;

pub struct HighSpeed {
    /// struct hstcp.ai: the table row the window is in.
    ai: usize,
}

impl HighSpeed {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        reject_unknown(config.params, &[])?;
        Ok(Box::new(HighSpeed { ai: 0 }))
    }

    /// Moves `ai` to the row holding `cwnd` (the walk of hstcp_cong_avoid).
    fn update_row(&mut self, cwnd: u32) {
        if cwnd > HSTCP_AIMD_VALS[self.ai].cwnd {
            while cwnd > HSTCP_AIMD_VALS[self.ai].cwnd && self.ai < HSTCP_AIMD_MAX - 1 {
                self.ai += 1;
            }
        } else if self.ai > 0 && cwnd <= HSTCP_AIMD_VALS[self.ai - 1].cwnd {
            while self.ai > 0 && cwnd <= HSTCP_AIMD_VALS[self.ai - 1].cwnd {
                self.ai -= 1;
            }
        }
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    /// hstcp_init.
    fn init(&mut self, tp: &mut TcpState) {
        self.ai = 0;
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(HSTCP_CWND_CLAMP);
    }

    /// hstcp_ssthresh: the multiplicative decrease b(w) of the current row.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cwnd = tp.snd_cwnd;
        let cut = ((cwnd as u64 * HSTCP_AIMD_VALS[self.ai].md as u64) >> 8) as u32;
        (cwnd - cut).max(2)
    }

    /// hstcp_cong_avoid.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            tp.slow_start(acked);
            return;
        }
        self.update_row(tp.snd_cwnd);
        // cwnd += a(w)/cwnd, a(w) = ai + 1.
        if tp.snd_cwnd < tp.snd_cwnd_clamp {
            tp.snd_cwnd_cnt += self.ai as u32 + 1;
            if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                tp.snd_cwnd_cnt -= tp.snd_cwnd;
                tp.snd_cwnd += 1;
            }
        }
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        &["highspeed_ai"]
    }

    fn telemetry(&self, _tp: &TcpState, out: &mut [f64]) {
        out[0] = self.ai as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ca_state(cwnd: u32) -> TcpState {
        TcpState {
            snd_cwnd: cwnd,
            snd_ssthresh: 2,
            is_cwnd_limited: true,
            ..Default::default()
        }
    }

    /// The row, a(w) and b(w)·256 HighSpeed uses at `cwnd` after one congestion-avoidance ACK,
    /// and the ssthresh it would then set.
    fn at(cwnd: u32) -> (usize, u32, u32, u32) {
        let mut h = HighSpeed { ai: 0 };
        let mut tp = ca_state(cwnd);
        h.init(&mut tp);
        h.cong_avoid(&mut tp, 1);
        let ss = h.ssthresh(&ca_state(cwnd));
        (h.ai, h.ai as u32 + 1, HSTCP_AIMD_VALS[h.ai].md, ss)
    }

    #[test]
    fn aimd_table_lookups_at_38_1000_and_10000_packets() {
        // cwnd 38 ≤ vals[0].cwnd = 38: row 0, a = 1 (Reno), b = 128/256 = 0.5;
        // ssthresh = 38 − 38·128/256 = 38 − 19 = 19.
        assert_eq!(at(38), (0, 1, 128, 38 - 38 * 128 / 256));
        // 851 = vals[6] < 1000 ≤ vals[7] = 1058: row 7, a = 8, b = 83/256 ≈ 0.324;
        // ssthresh = 1000 − (1000·83 >> 8) = 1000 − 324 = 676.
        assert_eq!(at(1000), (7, 8, 83, 1000 - ((1000 * 83) >> 8)));
        assert_eq!(at(1000).3, 676);
        // 9991 = vals[28] < 10000 ≤ vals[29] = 10661: row 29, a = 30, b = 52/256 ≈ 0.203;
        // ssthresh = 10000 − (10000·52 >> 8) = 10000 − 2031 = 7969.
        assert_eq!(at(10000), (29, 30, 52, 10000 - ((10000 * 52) >> 8)));
        assert_eq!(at(10000).3, 7969);
        // Just above a bound moves up a row; beyond the table stays in the last row.
        assert_eq!(at(39).0, 1);
        assert_eq!(at(1_000_000).0, HSTCP_AIMD_MAX - 1);
    }

    #[test]
    fn the_row_walks_down_when_the_window_shrinks() {
        let mut h = HighSpeed { ai: 29 };
        let mut tp = ca_state(1000);
        h.cong_avoid(&mut tp, 1);
        assert_eq!(h.ai, 7);
        let mut tp = ca_state(30);
        h.cong_avoid(&mut tp, 1);
        assert_eq!(h.ai, 0);
    }

    #[test]
    fn congestion_avoidance_adds_a_of_w_packets_per_window_of_acks() {
        // Row 7 at cwnd 1000: +8 to snd_cwnd_cnt per ACK, +1 packet each 1000 counted:
        // 125 ACKs (125·8 = 1000) grow cwnd by one; 124 do not.
        let mut h = HighSpeed { ai: 0 };
        let mut tp = ca_state(1000);
        for _ in 0..124 {
            h.cong_avoid(&mut tp, 2); // per ACK, whatever it acked
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1000, 124 * 8));
        h.cong_avoid(&mut tp, 2);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1001, 0));
    }

    #[test]
    fn slow_start_is_renos_and_ssthresh_has_a_floor_of_two() {
        let mut h = HighSpeed { ai: 0 };
        let mut tp = TcpState {
            snd_cwnd: 10,
            is_cwnd_limited: true,
            ..Default::default()
        };
        h.init(&mut tp);
        assert_eq!(tp.snd_cwnd_clamp, 0xffff_ffff / 128);
        h.cong_avoid(&mut tp, 10);
        assert_eq!(tp.snd_cwnd, 20);
        assert_eq!(h.ssthresh(&ca_state(3)), 2); // 3 − 1 = 2
        assert_eq!(h.ssthresh(&ca_state(2)), 2);
    }

    #[test]
    fn no_parameters_are_accepted() {
        let mut p = toml::Table::new();
        p.insert("ai".into(), toml::Value::Integer(1));
        let e = HighSpeed::build(&CcConfig::new(&p, 1)).err().unwrap();
        assert_eq!(e.key, "ai");
    }
}
