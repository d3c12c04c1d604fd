//! RTT estimation and the retransmission timeout, as Linux computes them
//! (tcp_input.c: tcp_rtt_estimator, tcp_set_rto; tcp.h: TCP_RTO_MIN/MAX, TCP_TIMEOUT_INIT).
//!
//! Linux keeps srtt scaled by 8 and mdev by 4, in microseconds, and sets
//! RTO = srtt + rttvar where rttvar is the largest mdev seen over the last RTT and never below
//! the 200 ms minimum: so RTO is about srtt + 200 ms on a quiet path, not max(200 ms, ...).

use rove_sim::Nanos;

/// TCP_RTO_MIN, include/net/tcp.h (HZ/5).
pub const RTO_MIN_US: u64 = 200_000;
/// TCP_RTO_MAX, include/net/tcp.h (120 s).
pub const RTO_MAX_US: u64 = 120_000_000;
/// TCP_TIMEOUT_INIT, include/net/tcp.h (1 s, RFC 6298).
pub const RTO_INIT_US: u64 = 1_000_000;

#[derive(Debug, Clone)]
pub struct RttEstimator {
    /// Smoothed RTT << 3, microseconds; 0 before the first sample.
    pub srtt_us8: u64,
    /// Mean deviation << 2, microseconds.
    pub mdev_us4: u64,
    /// Maximal mdev over the last RTT, microseconds.
    pub mdev_max_us: u64,
    /// Smoothed mdev_max: the variance term of RTO.
    pub rttvar_us: u64,
    /// rtt_seq: the window over which mdev_max is tracked ends when snd_una passes it.
    pub rtt_seq: u64,
    /// Current RTO before backoff, microseconds.
    pub rto_us: u64,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator {
            srtt_us8: 0,
            mdev_us4: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            rto_us: RTO_INIT_US,
        }
    }
}

impl RttEstimator {
    /// Feeds one RTT measurement `m_us` (tcp_rtt_estimator), then recomputes RTO (tcp_set_rto).
    pub fn sample(&mut self, m_us: u64, snd_una: u64, snd_nxt: u64) {
        let m_us = m_us.max(1) as i64;
        let mut srtt = self.srtt_us8 as i64;
        if srtt != 0 {
            let mut m = m_us - (srtt >> 3); // error in the estimate
            srtt += m; // srtt = 7/8 srtt + 1/8 new
            let mut mdev = self.mdev_us4 as i64;
            if m < 0 {
                m = -m - (mdev >> 2);
                // Shrink mdev slowly when the RTT falls: 1/32 gain instead of 1/4.
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= mdev >> 2;
            }
            mdev += m; // mdev = 3/4 mdev + 1/4 new
            self.mdev_us4 = mdev.max(0) as u64;
            if self.mdev_us4 > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us4;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if snd_una > self.rtt_seq {
                // One RTT has passed: decay rttvar towards the window's mdev_max.
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = RTO_MIN_US;
            }
        } else {
            srtt = m_us << 3;
            self.mdev_us4 = (m_us << 1) as u64; // makes the first RTO about 3 RTT
            self.rttvar_us = self.mdev_us4.max(RTO_MIN_US);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
        self.srtt_us8 = srtt.max(1) as u64;
        self.rto_us = ((self.srtt_us8 >> 3) + self.rttvar_us).min(RTO_MAX_US);
    }

    pub fn srtt_us(&self) -> u64 {
        self.srtt_us8 >> 3
    }

    pub fn has_sample(&self) -> bool {
        self.srtt_us8 != 0
    }

    /// The retransmission timeout after `backoff` expirations, in nanoseconds.
    pub fn rto_ns(&self, backoff: u32) -> Nanos {
        (self.rto_us << backoff.min(20)).min(RTO_MAX_US) * 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_sets_srtt_and_rto_of_srtt_plus_max_of_2rtt_and_200ms() {
        let mut e = RttEstimator::default();
        e.sample(40_000, 0, 10);
        assert_eq!(e.srtt_us(), 40_000);
        assert_eq!(e.mdev_us4, 80_000);
        assert_eq!(e.rttvar_us, 200_000); // max(2 * 40 ms, 200 ms)
        assert_eq!(e.rto_us, 240_000);
    }

    #[test]
    fn steady_rtt_keeps_rto_at_srtt_plus_rto_min() {
        let mut e = RttEstimator::default();
        let mut una = 0;
        for _ in 0..200 {
            una += 10;
            e.sample(100_000, una, una + 10);
        }
        assert_eq!(e.srtt_us(), 100_000);
        assert_eq!(e.rto_us, 300_000);
        assert_eq!(e.rto_ns(2), 1_200_000_000);
    }

    #[test]
    fn srtt_moves_one_eighth_toward_a_new_sample() {
        let mut e = RttEstimator::default();
        e.sample(80_000, 0, 1);
        e.sample(160_000, 0, 1);
        assert_eq!(e.srtt_us(), 90_000); // 80 + (160 - 80) / 8
    }
}
