//! NewReno: Linux's "reno" (net/ipv4/tcp_cong.c). With SACK and the sender's loss recovery
//! around it, this is what Linux runs as `net.ipv4.tcp_congestion_control = reno`.

use super::{reject_unknown, CcConfig, CongestionControl, ParamError};
use crate::state::TcpState;

pub struct Reno;

impl Reno {
    pub fn build(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        reject_unknown(config.params, &[])?;
        Ok(Box::new(Reno))
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp_reno_ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        tcp_reno_cong_avoid(tp, acked)
    }
}

/// tcp_reno_ssthresh (exported by tcp_cong.c, as here for every algorithm that halves like
/// Reno): half the window, at least 2.
pub fn tcp_reno_ssthresh(tp: &TcpState) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

/// tcp_reno_cong_avoid (exported by tcp_cong.c): when cwnd-limited, slow start below ssthresh
/// (tcp_slow_start), then one packet per window (tcp_cong_avoid_ai).
pub fn tcp_reno_cong_avoid(tp: &mut TcpState, acked: u32) {
    if !tp.is_cwnd_limited() {
        return;
    }
    let mut acked = acked;
    if tp.in_slow_start() {
        acked = tp.slow_start(acked);
        if acked == 0 {
            return;
        }
    }
    let w = tp.snd_cwnd;
    tp.cong_avoid_ai(w, acked);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssthresh_halves_with_floor_of_two() {
        let mut r = Reno;
        assert_eq!(
            r.ssthresh(&TcpState {
                snd_cwnd: 21,
                ..Default::default()
            }),
            10
        );
        assert_eq!(
            r.ssthresh(&TcpState {
                snd_cwnd: 3,
                ..Default::default()
            }),
            2
        );
    }

    #[test]
    fn slow_start_doubles_per_window_then_linear() {
        let mut r = Reno;
        let mut tp = TcpState {
            snd_cwnd: 10,
            snd_ssthresh: 20,
            is_cwnd_limited: true,
            ..Default::default()
        };
        r.cong_avoid(&mut tp, 10);
        assert_eq!(tp.snd_cwnd, 20);
        // Now in congestion avoidance: 20 acks grow cwnd by one.
        for _ in 0..20 {
            r.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 21);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut r = Reno;
        let mut tp = TcpState {
            snd_cwnd: 10,
            max_packets_out: 3,
            ..Default::default()
        };
        r.cong_avoid(&mut tp, 3);
        assert_eq!(tp.snd_cwnd, 10);
    }

    #[test]
    fn unknown_parameters_are_rejected() {
        let mut p = toml::Table::new();
        p.insert("beta".into(), toml::Value::Float(0.5));
        let e = Reno::build(&CcConfig::new(&p, 1)).err().unwrap();
        assert_eq!(e.key, "beta");
    }
}
