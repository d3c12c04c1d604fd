//! The request-grant uplink (`uplink = "sr_bsr"`): a UE sends only on grants the eNodeB gives
//! it, and asks for them the way LTE's MAC does (TS 36.321 5.4.4 scheduling request, 5.4.5
//! buffer status reporting; TS 36.213 8.0 and 10.1.5).
//!
//! Per UE, at each TTI start t, in this order:
//! 1. **The eNodeB grants.** It reads each buffer status report (BSR) `grant_delay` after the
//!    TTI of the PUSCH that carried it, and keeps an estimate of the UE's buffer: the latest
//!    BSR it read less the bytes it granted since that BSR was built (as srsRAN's scheduler
//!    does: reported bytes less bytes allocated since). While the estimate is positive it grants
//!    min(estimate, `uplink_rate` × 1 ms) every `bsr_grant_interval`. A scheduling request (SR)
//!    sent in TTI s is answered by a grant of `sr_grant` bytes in TTI s + `grant_delay` (the SR
//!    is one bit: the eNodeB knows only that the UE has data). Both in one TTI: the larger.
//! 2. **The UE builds its MAC PDU** at the grant: bytes from the head of its buffer (RLC
//!    segments packets across grants, TS 36.322) and a BSR of what is left. The PDU goes on
//!    PUSCH in TTI t + `pusch_delay` (TS 36.213 8.0: n + 4 for FDD) and reaches the eNodeB at
//!    the end of that TTI, plus the link's `delay`; a packet is delivered with its last byte.
//!    The PDU's BSR cancels a pending SR (36.321 5.4.4).
//! 3. **The UE requests.** Data reaching an empty buffer triggers a regular BSR (36.321
//!    5.4.5); with no grant to carry it, an SR is pending and is sent at the UE's next SR
//!    opportunity, the TTIs at multiples of `sr_period` (TS 36.213 Table 10.1.5-1).
//!
//! So an idle UE's first packet waits for an SR opportunity, then `grant_delay` +
//! `pusch_delay` + 1 ms; packets reaching a UE whose buffer holds data wait for the BSR that
//! reports them and the grant that follows (`pusch_delay` + `grant_delay` later).
//!
//! [GAP] choices (the standards leave the eNodeB's scheduler to the vendor):
//! - the SR subframe offset is 0 for every UE; an SR is not repeated while the grant answering
//!   it is due (as if `sr-ProhibitTimer` covered `grant_delay`); no `dsr-TransMax`, no RACH.
//! - every PDU carries a BSR of the whole buffer, exact to the byte (a real UE sends a regular,
//!   periodic or padding BSR, quantised by TS 36.321 Table 6.1.3.1-1); no MAC/RLC header or
//!   BSR bytes.
//! - the eNodeB gives no proactive grants (none without a BSR or an SR).
//! - the UE builds a PDU at its grant's TTI: data arriving between the grant and the PUSCH
//!   waits for the next grant.
//! - no scheduling among UEs (each UE's uplink is its own); uplink HARQ (`uplink_bler`, in
//!   mod.rs) decides each PDU's transport block, and a packet segmented across PDUs is
//!   released with the last of its blocks and lost with any ([`SegmentFate`]).

use super::TTI_NS;
use crate::link::LinkOutput;
use crate::packet::PacketId;
use crate::Nanos;
use std::collections::VecDeque;

/// The request-grant uplink's keys, in ns and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SrBsrParams {
    /// `sr_period`: the UE's SR opportunities are the TTIs at its multiples.
    pub sr_period_ns: Nanos,
    /// `grant_delay`: from the TTI of an SR, or of the PUSCH carrying a BSR, to the grant.
    pub grant_delay_ns: Nanos,
    /// `pusch_delay`: from a grant to its PUSCH.
    pub pusch_delay_ns: Nanos,
    /// `sr_grant`: the size of the grant answering an SR.
    pub sr_grant_bytes: u64,
    /// `bsr_grant_interval`: how often the eNodeB grants a UE it believes has data.
    pub grant_interval_ns: Nanos,
}

/// A packet in the UE's uplink buffer.
#[derive(Debug, Clone, Copy)]
struct Sdu {
    id: PacketId,
    bytes: u32,
    /// Bytes not yet in a PDU.
    left: u32,
    arrived_at: Nanos,
    /// The fate of the transport blocks that carried its earlier segments (RLC segments a
    /// packet across grants; the eNodeB can reassemble it only when every segment decoded):
    /// the latest release, and whether one was lost.
    earlier: SegmentFate,
}

/// What a packet's transport blocks so far came to: the latest release time, or lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SegmentFate {
    pub released_at: Nanos,
    pub lost: bool,
}

impl SegmentFate {
    /// This fate and one more block's (`None`: lost after its last HARQ transmission): the
    /// packet is released with its last-decoded segment, or lost with any.
    pub fn and(self, block: Option<Nanos>) -> Option<Nanos> {
        match block {
            Some(at) if !self.lost => Some(at.max(self.released_at)),
            _ => None,
        }
    }
}

/// A BSR on its way to the eNodeB.
#[derive(Debug, Clone, Copy)]
struct Report {
    /// When the eNodeB can grant on it.
    usable_at: Nanos,
    /// The bytes it reports.
    bytes: u64,
    /// The eNodeB's granted-bytes total when it was built (its own grant included).
    granted_at_build: u64,
}

/// A packet that left in a PDU: delivered at `sent_at` + 1 ms + the link's delay.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    pub id: PacketId,
    pub bytes: u32,
    /// The start of its PUSCH TTI.
    pub sent_at: Nanos,
    pub arrived_at: Nanos,
    /// Its earlier segments' blocks, when it was segmented across grants.
    pub earlier: SegmentFate,
}

/// One UE's uplink buffer and MAC state, and the eNodeB's view of it.
#[derive(Debug, Default)]
pub struct RequestGrant {
    buffer: VecDeque<Sdu>,
    /// The last PDU built ended inside the head packet: that block's fate, once decided
    /// ([`RequestGrant::block_decided`]), belongs to the packet's earlier segments.
    head_segmented: bool,
    /// Bytes in `buffer` not yet in a PDU.
    buffered_bytes: u64,
    /// A regular BSR is triggered and not yet sent.
    sr_pending: bool,
    /// The TTI of the grant answering the SR sent.
    sr_grant_at: Option<Nanos>,
    reports: VecDeque<Report>,
    /// The eNodeB's latest BSR read: (bytes, granted total at its build).
    latest: (u64, u64),
    /// Bytes granted to this UE so far.
    granted_total: u64,
    last_grant_at: Option<Nanos>,
}

impl RequestGrant {
    /// Bytes waiting in the UE (not yet in a PDU).
    pub fn buffered_bytes(&self) -> u64 {
        self.buffered_bytes
    }

    pub fn buffered_packets(&self) -> usize {
        self.buffer.len()
    }

    /// Whether the UE needs TTIs: data to send or an SR under way.
    pub fn busy(&self) -> bool {
        self.buffered_bytes > 0 || self.sr_pending || self.sr_grant_at.is_some()
    }

    /// A packet reaches the UE's buffer at `now`.
    pub fn push(&mut self, id: PacketId, bytes: u32, now: Nanos) {
        if self.buffered_bytes == 0 {
            self.sr_pending = true; // a regular BSR: data reached an empty buffer
        }
        self.buffer.push_back(Sdu {
            id,
            bytes,
            left: bytes,
            arrived_at: now,
            earlier: SegmentFate::default(),
        });
        self.buffered_bytes += u64::from(bytes);
    }

    /// Runs the TTI starting at `t`; `max_grant_bytes` is `uplink_rate` × 1 ms. Packets whose
    /// last byte leaves go to `sent`. Returns the start of the PUSCH TTI of the PDU built (one
    /// transport block), if the UE had a grant.
    pub fn tti(
        &mut self,
        t: Nanos,
        p: &SrBsrParams,
        max_grant_bytes: u64,
        mut sent: impl FnMut(Sent),
    ) -> Option<Nanos> {
        let grant = self.grant(t, p, max_grant_bytes);
        if grant > 0 {
            self.build_pdu(t, grant, p, &mut sent);
            return Some(t + p.pusch_delay_ns);
        } else if self.sr_pending
            && self.sr_grant_at.is_none()
            && (t / TTI_NS).is_multiple_of(p.sr_period_ns / TTI_NS)
        {
            self.sr_grant_at = Some(t + p.grant_delay_ns);
        }
        None
    }

    /// The eNodeB's grant to this UE in TTI `t`, bytes (0: none).
    fn grant(&mut self, t: Nanos, p: &SrBsrParams, max_grant_bytes: u64) -> u64 {
        while self.reports.front().is_some_and(|r| r.usable_at <= t) {
            let r = self.reports.pop_front().expect("checked");
            self.latest = (r.bytes, r.granted_at_build);
        }
        let granted_since = self.granted_total - self.latest.1;
        let estimate = self.latest.0.saturating_sub(granted_since);
        let due = self
            .last_grant_at
            .is_none_or(|g| t >= g + p.grant_interval_ns);
        let mut grant = if due {
            estimate.min(max_grant_bytes)
        } else {
            0
        };
        if self.sr_grant_at == Some(t) {
            self.sr_grant_at = None;
            grant = grant.max(p.sr_grant_bytes);
        }
        if grant > 0 {
            self.granted_total += grant;
            self.last_grant_at = Some(t);
        }
        grant
    }

    /// Fills a PDU of `grant` bytes at TTI `t` from the head of the buffer, with its BSR.
    fn build_pdu(&mut self, t: Nanos, grant: u64, p: &SrBsrParams, sent: &mut impl FnMut(Sent)) {
        let sent_at = t + p.pusch_delay_ns;
        let mut room = grant;
        while room > 0 {
            let Some(s) = self.buffer.front_mut() else {
                break;
            };
            let take = u64::from(s.left).min(room) as u32;
            s.left -= take;
            room -= u64::from(take);
            self.buffered_bytes -= u64::from(take);
            if s.left == 0 {
                sent(Sent {
                    id: s.id,
                    bytes: s.bytes,
                    sent_at,
                    arrived_at: s.arrived_at,
                    earlier: s.earlier,
                });
                self.buffer.pop_front();
            }
        }
        self.head_segmented = room == 0 && self.buffer.front().is_some_and(|s| s.left < s.bytes);
        self.reports.push_back(Report {
            usable_at: sent_at + p.grant_delay_ns,
            bytes: self.buffered_bytes,
            granted_at_build: self.granted_total,
        });
        self.sr_pending = false;
    }
}

impl RequestGrant {
    /// The fate of the transport block last built ([`RequestGrant::tti`]'s PUSCH): its release
    /// time, or `None` when HARQ gave it up. A packet it carried only part of keeps it for
    /// its own release ([`SegmentFate::and`]).
    pub fn block_decided(&mut self, release: Option<Nanos>) {
        if !std::mem::take(&mut self.head_segmented) {
            return;
        }
        let head = &mut self.buffer.front_mut().expect("a segmented head").earlier;
        match release {
            Some(at) => head.released_at = head.released_at.max(at),
            None => head.lost = true,
        }
    }
}

/// Delivers a sent packet: at its release (the end of its PUSCH TTI, later after uplink HARQ
/// retransmissions) plus the link's delay.
pub fn delivery(s: &Sent, delay_ns: Nanos, release: Nanos) -> LinkOutput {
    debug_assert!(release >= s.sent_at + TTI_NS);
    LinkOutput::Deliver {
        id: s.id,
        at: release + delay_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn params() -> SrBsrParams {
        SrBsrParams {
            sr_period_ns: 10 * MS,
            grant_delay_ns: 4 * MS,
            pusch_delay_ns: 4 * MS,
            sr_grant_bytes: 512,
            grant_interval_ns: MS,
        }
    }

    /// Runs TTIs from `from` to `to` (exclusive); returns (id, PUSCH TTI in ms) sent.
    fn run(u: &mut RequestGrant, from: u64, to: u64, max_grant: u64) -> Vec<(PacketId, u64)> {
        let mut out = Vec::new();
        for ms in from..to {
            let _ = u.tti(ms * MS, &params(), max_grant, |s| {
                out.push((s.id, s.sent_at / MS))
            });
        }
        out
    }

    /// An idle UE's packet at 0.3 ms: SR at its next opportunity (10 ms), grant at 14 ms,
    /// PUSCH at 18 ms.
    #[test]
    fn an_idle_ue_waits_for_its_sr_opportunity_the_grant_and_the_pusch() {
        let mut u = RequestGrant::default();
        assert!(run(&mut u, 0, 1, 2500).is_empty());
        u.push(1, 60, MS * 3 / 10);
        assert!(u.busy());
        assert_eq!(run(&mut u, 1, 30, 2500), vec![(1, 18)]);
        assert!(!u.busy());
    }

    /// A packet larger than the SR grant: 512 B leave with the SR grant's PDU, whose BSR
    /// reports the other 988 B; the eNodeB reads it at PUSCH (4 ms after the grant) + 4 ms and
    /// grants them: the packet leaves on the PUSCH 4 ms after that grant.
    #[test]
    fn a_bsr_brings_the_grant_for_what_the_sr_grant_left() {
        let mut u = RequestGrant::default();
        u.push(7, 1500, 0);
        // SR at 0, grant at 4 (512 B), PUSCH at 8, BSR read at 12, grant at 12, PUSCH at 16.
        assert_eq!(run(&mut u, 0, 30, 2500), vec![(7, 16)]);
        assert_eq!(u.granted_total, 1500);
    }

    /// A packet segmented across two PDUs takes both blocks' fates: released with the later
    /// one (its first segment's block retransmitted past the second's), lost with either.
    #[test]
    fn a_segmented_packet_is_released_with_its_last_block_and_lost_with_any() {
        for (first, second, expected) in [
            (Some(30 * MS), Some(17 * MS), Some(30 * MS)), // first block late (out of order)
            (Some(9 * MS), Some(17 * MS), Some(17 * MS)),
            (None, Some(17 * MS), None), // first segment lost: the packet cannot be rebuilt
            (Some(9 * MS), None, None),
        ] {
            let mut u = RequestGrant::default();
            u.push(7, 1500, 0);
            let mut sent = Vec::new();
            for ms in 0..30 {
                if let Some(pusch) = u.tti(ms * MS, &params(), 2500, |s| sent.push(s)) {
                    // SR grant at 4 (512 B, PUSCH 8) ends inside the packet; BSR grant at 12.
                    u.block_decided(if pusch == 8 * MS { first } else { second });
                }
            }
            assert_eq!(sent.len(), 1);
            let fate = SegmentFate {
                released_at: first.unwrap_or(0),
                lost: first.is_none(),
            };
            assert_eq!(sent[0].earlier, fate);
            assert_eq!(sent[0].earlier.and(second), expected);
        }
    }

    /// While the eNodeB's estimate is above `uplink_rate` × 1 ms it grants that every TTI;
    /// a packet arriving while the buffer holds data sends no SR and rides a BSR-driven grant.
    #[test]
    fn bsr_grants_come_every_tti_up_to_the_rate_and_new_data_rides_them() {
        let mut u = RequestGrant::default();
        for k in 0..4 {
            u.push(k, 1000, 0);
        }
        // SR grant at 4 (512 B) → BSR 3488 read at 12; grants of 1000 B at 12, 13, 14, then
        // 488 B at 15: packets 0-3 on PUSCH 16, 17, 18, 19.
        let sent = run(&mut u, 0, 14, 1000);
        assert_eq!(sent, vec![(0, 16), (1, 17)]);
        u.push(9, 100, 14 * MS);
        assert!(!u.sr_pending, "data was buffered: no regular BSR");
        // Grant 14 (1000 B) takes packet 2's last 488 B and 512 B of packet 3, grant 15 the
        // estimate's last 488 B (packet 3's rest); packet 9, buffered before grant 14 was
        // built, is in its BSR (1488 − 1000 + 100 = 588 B), read at 22: granted 100 B then.
        let sent = run(&mut u, 14, 40, 1000);
        assert_eq!(sent, vec![(2, 18), (3, 19), (9, 26)]);
    }
}
