//! The eBPF port's stand-in for v2alpha's per-packet send records (`cc_params.tx_records =
//! "snapshots"`), so the simulator can run BBRv2 and BBRv2+ as the kernel backend's port does
//! (crates/emu/bpf/bbr2_common.h, docs/kernel-backend.md "BBRv2").
//!
//! v2alpha records, for every packet at send time, the packets in flight and `tp->lost`
//! (`scb->tx.in_flight`, `tx.lost`), and the rate sample of an ACK carries those of the packet
//! it sampled (`rs->tx_in_flight`, `rs->lost`); its `skb_marked_lost` hook sees each lost
//! packet's own records. A stock kernel has neither, so the port keeps a ring of per-ACK
//! snapshots and handles an ACK's losses once, at the start of `cong_control`:
//!
//! - after each `cong_control` it records (`tp->delivered`, `tp->lost`, an in-flight estimate)
//!   in a ring of [`SNAP_RING`] entries; the estimate is what the ACK leaves in flight plus what
//!   it releases, capped by the new cwnd, at least one more than in flight:
//!   `max(min(cwnd, in_flight + acked_sacked), in_flight + 1)` [GAP in the port];
//! - a rate sample's send-time state is the newest snapshot with `delivered <=
//!   rs->prior_delivered` (sequence comparison modulo 2^32; binary search), else the oldest
//!   kept; `tx_in_flight` = its in-flight, `lost` = `tp->lost` − its lost (modulo 2^32); an
//!   empty ring gives 0 and 0;
//! - an ACK with `rs->losses > 0` does the work of `skb_marked_lost` once, for the ACK's losses
//!   as one lost skb of `rs->losses` packets, with that ACK's estimates.
//!
//! This module is the same estimator as the port's, operation for operation (u32 sequence
//! arithmetic included), so a simulator run with it records hook calls the port must reproduce
//! exactly (tests/test_bpf_replay.py). It allocates once, when the algorithm is built.

use crate::state::{RateSample, TcpState};

/// bbr2_common.h SNAP_RING: send-time snapshots kept (a power of 2).
pub const SNAP_RING: usize = 128;
/// The binary search's steps: log2(SNAP_RING) + 1 (bbr2_common.h SNAP_BITS + 1).
const SEARCH_STEPS: u32 = SNAP_RING.trailing_zeros() + 1;

/// Where v2alpha's per-packet send records come from (`cc_params.tx_records`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxRecords {
    /// The sender's exact per-packet records (v2alpha's tcp_rate.c), `skb_marked_lost` per lost
    /// packet: the default.
    PerPacket,
    /// The eBPF port's per-ACK snapshots ([`SnapRing`]), losses once per ACK.
    Snapshots,
}

#[derive(Debug, Clone, Copy, Default)]
struct Snap {
    delivered: u32,
    lost: u32,
    in_flight: u32,
}

/// The ring of per-ACK snapshots (bbr2_common.h `snap`, `snap_count`).
#[derive(Debug, Clone)]
pub struct SnapRing {
    snaps: [Snap; SNAP_RING],
    /// Snapshots written; the ring holds the last SNAP_RING.
    count: u32,
}

impl Default for SnapRing {
    fn default() -> Self {
        SnapRing {
            snaps: [Snap::default(); SNAP_RING],
            count: 0,
        }
    }
}

/// before() of include/net/tcp.h: `a` precedes `b` modulo 2^32.
fn seq_after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

impl SnapRing {
    /// bbr2_init: the ring is empty.
    pub fn clear(&mut self) {
        self.count = 0;
    }

    /// bbr2_snapshot, at the end of `cong_control` (cwnd already set for this ACK).
    pub fn record(&mut self, tp: &TcpState, acked_sacked: u32) {
        let in_flight = tcp_packets_in_flight(tp);
        let est = tp.snd_cwnd.min(in_flight.wrapping_add(acked_sacked));
        let i = self.count as usize & (SNAP_RING - 1);
        self.snaps[i] = Snap {
            delivered: tp.delivered as u32,
            lost: tp.lost as u32,
            in_flight: est.max(in_flight.wrapping_add(1)),
        };
        self.count = self.count.wrapping_add(1);
    }

    /// bbr2_tx_of: `rs` with `tx_in_flight` and `lost` replaced by the estimates of the state
    /// the sampled packet was sent in.
    pub fn estimate(&self, tp: &TcpState, rs: &RateSample) -> RateSample {
        let mut out = *rs;
        out.tx_in_flight = 0;
        out.lost = 0;
        let n = self.count.min(SNAP_RING as u32);
        if n == 0 {
            return out;
        }
        let first = self.count.wrapping_sub(n);
        let want = rs.prior_delivered as u32;
        let (mut lo, mut hi) = (0u32, n);
        for _ in 0..SEARCH_STEPS {
            if lo >= hi {
                break;
            }
            let mid = (lo + hi) / 2;
            let idx = first.wrapping_add(mid) as usize & (SNAP_RING - 1);
            if seq_after(self.snaps[idx].delivered, want) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let idx = first.wrapping_add(lo.saturating_sub(1)) as usize & (SNAP_RING - 1);
        out.tx_in_flight = self.snaps[idx].in_flight;
        out.lost = (tp.lost as u32).wrapping_sub(self.snaps[idx].lost) as u64;
        out
    }
}

/// tcp_packets_in_flight as the kernel computes it in u32: packets_out − (sacked_out +
/// lost_out) + retrans_out.
fn tcp_packets_in_flight(tp: &TcpState) -> u32 {
    tp.packets_out
        .wrapping_sub(tp.sacked_out.wrapping_add(tp.lost_out))
        .wrapping_add(tp.retrans_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(delivered: u64, lost: u64, cwnd: u32, packets_out: u32) -> TcpState {
        TcpState {
            delivered,
            lost,
            snd_cwnd: cwnd,
            packets_out,
            ..Default::default()
        }
    }

    #[test]
    fn a_sample_takes_the_newest_snapshot_sent_before_it() {
        let mut ring = SnapRing::default();
        // ACKs at delivered 10, 20, 30 with lost 0, 1, 3: in flight 20 with 2 acked under
        // cwnd 30 -> max(min(30, 22), 21) = 22; then 25 + 5 capped at cwnd 28 -> 28.
        ring.record(&tp(10, 0, 30, 20), 2);
        ring.record(&tp(20, 1, 28, 25), 5);
        ring.record(&tp(30, 3, 40, 40), 0); // min(40, 40) = 40 < 41: 41
        let now = tp(35, 4, 40, 40);
        let rs = |prior| RateSample {
            prior_delivered: prior,
            ..Default::default()
        };
        let e = ring.estimate(&now, &rs(25)); // newest with delivered <= 25: the second
        assert_eq!((e.tx_in_flight, e.lost), (28, 3));
        let e = ring.estimate(&now, &rs(30));
        assert_eq!((e.tx_in_flight, e.lost), (41, 1));
        let e = ring.estimate(&now, &rs(5)); // older than every snapshot: the oldest
        assert_eq!((e.tx_in_flight, e.lost), (22, 4));
        let e = SnapRing::default().estimate(&now, &rs(25));
        assert_eq!((e.tx_in_flight, e.lost), (0, 0));
    }

    #[test]
    fn the_ring_keeps_the_last_128_and_compares_modulo_2_32() {
        let mut ring = SnapRing::default();
        // 200 ACKs, delivered wrapping past 2^32 at the 100th: u32::MAX - 99 + k.
        let base = u32::MAX as u64 - 99;
        for k in 0..200u64 {
            ring.record(&tp(base + k, k, 100, 50 + k as u32 % 7), 1);
        }
        let now = tp(base + 250, 300, 100, 50);
        let rs = |prior: u64| RateSample {
            prior_delivered: prior,
            ..Default::default()
        };
        // delivered base + 150 is snapshot 150 (kept: 72..199): lost 300 - 150, in flight
        // (packets_out 50 + 150 % 7 = 53) max(min(100, 53 + 1), 53 + 1) = 54.
        let e = ring.estimate(&now, &rs(base + 150));
        assert_eq!((e.tx_in_flight, e.lost), (54, 150));
        // Older than the oldest kept (72): the oldest, lost 300 - 72.
        let e = ring.estimate(&now, &rs(base + 10));
        assert_eq!(e.lost, 228);
    }
}
