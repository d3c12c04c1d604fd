//! The sender state a congestion-control algorithm sees: the subset of Linux's `struct tcp_sock`
//! that `tcp_congestion_ops` hooks read and write, with the kernel's names.

use rove_sim::Nanos;

/// TCP_INFINITE_SSTHRESH, include/net/tcp.h.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// TCP_INIT_CWND, include/net/tcp.h (RFC 6928).
pub const INIT_CWND: u32 = 10;

/// Congestion-avoidance state (enum tcp_ca_state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

impl CaState {
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// Flags passed to `in_ack_event` (enum tcp_ca_ack_event_flags, include/net/tcp.h).
pub const CA_ACK_SLOWPATH: u32 = 1 << 0;
pub const CA_ACK_WIN_UPDATE: u32 = 1 << 1;
/// ECN echo; rove models no ECN, so it is never set.
pub const CA_ACK_ECE: u32 = 1 << 2;

/// Events passed to `cwnd_event` (enum tcp_ca_event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight.
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of congestion window reduction.
    CompleteCwr,
    /// Loss timeout.
    Loss,
}

/// What a segment carried from its last transmission (the `tx` part of Linux's tcp_skb_cb, with
/// BBRv2's additions `tx.lost` and `tx.in_flight`). Passed to `skb_marked_lost`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TxRecord {
    /// tp->delivered when it was sent.
    pub delivered: u64,
    /// tp->lost when it was sent.
    pub lost: u64,
    /// Packets in flight just after it was sent, itself included.
    pub in_flight: u32,
    pub is_app_limited: bool,
    /// Its sequence number (segments) + 1.
    pub end_seq: u64,
}

/// A delivery-rate sample (struct rate_sample, tcp_rate.c).
#[derive(Debug, Clone, Copy, Default)]
pub struct RateSample {
    /// tp->delivered at the time the sampled packet was sent.
    pub prior_delivered: u64,
    /// Time of the sampled packet's delivered_mstamp; 0 when there is no valid sample.
    pub prior_mstamp: Nanos,
    /// Packets delivered over `interval_ns`; negative when invalid.
    pub delivered: i64,
    /// max(send interval, ack interval); negative when invalid.
    pub interval_ns: i64,
    pub snd_interval_ns: i64,
    pub rcv_interval_ns: i64,
    /// RTT of the most recently sent newly delivered packet; negative when none.
    pub rtt_ns: i64,
    /// Packets newly acked or sacked by this ACK.
    pub acked_sacked: u32,
    /// Packets newly marked lost by this ACK.
    pub losses: u32,
    /// packets_in_flight before this ACK.
    pub prior_in_flight: u32,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    /// Packets in flight when the sampled packet was sent, itself included (BBRv2's
    /// rs->tx_in_flight); 0 when there is no sample.
    pub tx_in_flight: u32,
    /// tp->lost when the sampled packet was sent (rs->prior_lost).
    pub prior_lost: u64,
    /// Packets marked lost since the sampled packet was sent (rs->lost = tp->lost - prior_lost).
    pub lost: u64,
    /// Sequence end of the last packet used for the sample (tcp_skb_sent_after tie-break).
    pub last_end_seq: u64,
}

/// Arguments of `pkts_acked` (struct ack_sample).
#[derive(Debug, Clone, Copy, Default)]
pub struct AckSample {
    pub pkts_acked: u32,
    /// RTT sample in microseconds, negative when none (Karn's rule).
    pub rtt_us: i64,
    pub in_flight: u32,
}

#[derive(Debug, Clone)]
pub struct TcpState {
    /// Current time (tp->tcp_mstamp), in nanoseconds.
    pub now: Nanos,
    pub mss_cache: u32,
    pub snd_cwnd: u32,
    pub snd_cwnd_cnt: u32,
    pub snd_cwnd_clamp: u32,
    pub snd_ssthresh: u32,
    pub prior_cwnd: u32,
    pub prior_ssthresh: u32,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// snd_nxt when the current recovery or loss episode started.
    pub high_seq: u64,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Packets delivered (acked or sacked), ever.
    pub delivered: u64,
    /// Packets marked lost, ever.
    pub lost: u64,
    pub total_retrans: u64,
    pub bytes_acked: u64,
    pub ca_state: CaState,
    /// Smoothed RTT in microseconds (unscaled), 0 before the first sample.
    pub srtt_us: u64,
    /// Mean deviation of the RTT, µs scaled by 4 (Linux `tp->mdev_us`), 0 before the first sample.
    pub mdev_us4: u64,
    /// Windowed minimum RTT in microseconds (tcp_min_rtt), u64::MAX before the first sample.
    pub min_rtt_us: u64,
    /// Pacing rate in bytes per second (sk_pacing_rate).
    pub pacing_rate: u64,
    /// Whether the algorithm asks for internal pacing (sk_pacing_status == SK_PACING_NEEDED).
    pub pacing_needed: bool,
    /// tp->app_limited: delivered count at which the app-limited period ends, 0 if not limited.
    pub app_limited: u64,
    pub delivered_mstamp: Nanos,
    pub first_tx_mstamp: Nanos,
    /// The last valid delivery-rate sample kept for tcp_info (rate_delivered / rate_interval).
    pub rate_delivered: u64,
    pub rate_interval_ns: u64,
    pub rate_app_limited: bool,
    /// Whether the sender was limited by cwnd in the current window (tcp_cwnd_validate).
    pub is_cwnd_limited: bool,
    pub max_packets_out: u32,
    pub cwnd_usage_seq: u64,
    /// Time of the last data transmission (tp->lsndtime).
    pub lsndtime: Nanos,
    /// Earliest departure time of the next segment under pacing (tp->tcp_wstamp_ns); at or
    /// before `now` when the next segment may leave at once.
    pub tcp_wstamp_ns: Nanos,
    /// Set by an algorithm's `cong_avoid` to call `tcp_enter_cwr` (as tcp_cdg.c does on a
    /// delay-gradient backoff); the sender enters CWR right after the hook returns and clears
    /// it. No other algorithm sets it.
    pub enter_cwr: bool,
}

impl Default for TcpState {
    fn default() -> Self {
        TcpState {
            now: 0,
            mss_cache: crate::MSS,
            snd_cwnd: INIT_CWND,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX,
            snd_ssthresh: INFINITE_SSTHRESH,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            snd_una: 0,
            snd_nxt: 0,
            high_seq: 0,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            delivered: 0,
            lost: 0,
            total_retrans: 0,
            bytes_acked: 0,
            ca_state: CaState::Open,
            srtt_us: 0,
            mdev_us4: 0,
            min_rtt_us: u64::MAX,
            pacing_rate: 0,
            pacing_needed: false,
            app_limited: 0,
            delivered_mstamp: 0,
            first_tx_mstamp: 0,
            rate_delivered: 0,
            rate_interval_ns: 0,
            rate_app_limited: false,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            lsndtime: 0,
            tcp_wstamp_ns: 0,
            enter_cwr: false,
        }
    }
}

impl TcpState {
    /// tcp_packets_in_flight: packets_out - (sacked_out + lost_out) + retrans_out.
    #[inline]
    pub fn packets_in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// tcp_in_slow_start.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }

    /// tcp_is_cwnd_limited: limited by cwnd in this window, or in slow start and cwnd below
    /// twice what was in flight.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        self.in_slow_start() && self.snd_cwnd < 2 * self.max_packets_out
    }

    /// tcp_in_cwnd_reduction: CWR or Recovery.
    #[inline]
    pub fn in_cwnd_reduction(&self) -> bool {
        matches!(self.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// tcp_current_ssthresh: in CWR/Recovery ssthresh, else max(ssthresh, 3/4 cwnd).
    pub fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.snd_ssthresh
        } else {
            self.snd_ssthresh
                .max((self.snd_cwnd >> 1) + (self.snd_cwnd >> 2))
        }
    }

    /// tcp_slow_start: grow cwnd by `acked` up to ssthresh; returns the acked count left over.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = (self.snd_cwnd.saturating_add(acked)).min(self.snd_ssthresh);
        let left = acked - (cwnd - self.snd_cwnd);
        self.snd_cwnd = cwnd.min(self.snd_cwnd_clamp);
        left
    }

    /// tcp_cong_avoid_ai: additive increase of one packet per `w` packets acked.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.snd_cwnd_cnt >= w {
            self.snd_cwnd_cnt = 0;
            self.snd_cwnd += 1;
        }
        self.snd_cwnd_cnt += acked;
        if self.snd_cwnd_cnt >= w {
            let delta = self.snd_cwnd_cnt / w;
            self.snd_cwnd_cnt -= delta * w;
            self.snd_cwnd += delta;
        }
        self.snd_cwnd = self.snd_cwnd.min(self.snd_cwnd_clamp);
    }

    /// Smoothed RTT in nanoseconds (0 before the first sample).
    pub fn srtt_ns(&self) -> Nanos {
        self.srtt_us * 1000
    }

    /// Delivery rate of the last kept sample, bits per second (tcp_info's tcpi_delivery_rate).
    pub fn delivery_rate_bps(&self) -> f64 {
        if self.rate_interval_ns == 0 {
            return 0.0;
        }
        self.rate_delivered as f64 * self.mss_cache as f64 * 8.0 * 1e9
            / self.rate_interval_ns as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut tp = TcpState {
            snd_cwnd: 10,
            snd_ssthresh: 12,
            ..Default::default()
        };
        assert_eq!(tp.slow_start(5), 3);
        assert_eq!(tp.snd_cwnd, 12);
    }

    #[test]
    fn congestion_avoidance_adds_one_packet_per_window() {
        let mut tp = TcpState {
            snd_cwnd: 10,
            snd_ssthresh: 5,
            ..Default::default()
        };
        for _ in 0..9 {
            tp.cong_avoid_ai(10, 1);
        }
        assert_eq!(tp.snd_cwnd, 10);
        tp.cong_avoid_ai(10, 1);
        assert_eq!(tp.snd_cwnd, 11);
        assert_eq!(tp.snd_cwnd_cnt, 0);
    }

    #[test]
    fn packets_in_flight_follows_rfc6675_pipe() {
        let tp = TcpState {
            packets_out: 20,
            sacked_out: 5,
            lost_out: 3,
            retrans_out: 2,
            ..Default::default()
        };
        assert_eq!(tp.packets_in_flight(), 14);
    }
}
