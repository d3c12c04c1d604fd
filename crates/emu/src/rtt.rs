//! Per-ACK round-trip time samples taken at the sender's side of the emulator, the kernel
//! backend's counterpart of the simulator's `rtt_samples_ns` (crates/tcp/src/sender.rs).
//!
//! The simulator records, for every ACK that acknowledges new data, Linux's `seq_rtt_us`
//! (tcp_clean_rtx_queue): the time since the *oldest* newly acknowledged segment was sent, and
//! no sample when any of the acknowledged data was retransmitted (Karn). This module measures
//! the same at the sender's TUN device: a data segment is stamped when the emulator reads it,
//! an ACK when the emulator hands it back to the sender, so the sample is the round trip
//! outside the sender's host (its stack adds microseconds). When an ACK gives no cumulative
//! sample (it advances nothing, or only over retransmitted or already SACKed data), the oldest
//! newly SACKed, never retransmitted segment gives it, as Linux does (`tcp_ack_update_rtt`:
//! `if (seq_rtt_us < 0) seq_rtt_us = sack_rtt_us`, with `sack->first_sackt` from
//! `tcp_sacktag_one`), and as the simulator records (crates/tcp/src/sender.rs,
//! `acked_times.or(sacked_times)`). Without this, the samples taken during loss recovery —
//! when the queue is fullest — were missing on the kernel side only.
//!
//! Newly SACKed segments are found by walking each SACK block inwards from both of its ends
//! until an already SACKed segment: SACK blocks grow at their edges, so this finds them without
//! rescanning a block per ACK (a segment SACKed in the middle of a block, which needs two blocks
//! to merge around original data, is marked without giving a sample).

use rove_sim::Nanos;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy)]
struct Sent {
    seq: u32,
    end: u32,
    at: Nanos,
    retransmitted: bool,
    sacked: bool,
}

/// Sequence-number comparison modulo 2^32 (RFC 793's `SEG.SEQ < x`).
#[inline]
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[derive(Debug, Default)]
pub struct RttTracker {
    outstanding: VecDeque<Sent>,
    /// Highest end sequence sent so far; a segment starting below it is a retransmission.
    snd_max: Option<u32>,
}

/// The TCP fields the tracker needs from an IPv4 packet: `(seq, ack, payload_len, ack_flag)`.
#[inline]
pub fn tcp_fields(pkt: &[u8]) -> Option<(u32, u32, u32, bool)> {
    if pkt.len() < 20 || pkt[9] != libc::IPPROTO_TCP as u8 {
        return None;
    }
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    if pkt.len() < ihl + 20 {
        return None;
    }
    let t = &pkt[ihl..];
    let seq = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
    let ack = u32::from_be_bytes([t[8], t[9], t[10], t[11]]);
    let ack_flag = t[13] & 0x10 != 0;
    Some((
        seq,
        ack,
        crate::link_emu::tcp_payload_bytes(pkt) as u32,
        ack_flag,
    ))
}

/// The SACK blocks of a TCP/IPv4 packet's options (kind 5, RFC 2018), at most 4, into `out`;
/// returns how many.
#[inline]
pub fn sack_blocks(pkt: &[u8], out: &mut [(u32, u32); 4]) -> usize {
    if pkt.len() < 20 || pkt[9] != libc::IPPROTO_TCP as u8 {
        return 0;
    }
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    if pkt.len() < ihl + 20 {
        return 0;
    }
    let doff = (pkt[ihl + 12] >> 4) as usize * 4;
    let opts = &pkt[(ihl + 20).min(pkt.len())..(ihl + doff).min(pkt.len())];
    let mut i = 0;
    let mut n = 0;
    while i < opts.len() {
        match opts[i] {
            0 => break,  // end of options
            1 => i += 1, // no-op
            kind => {
                let Some(&len) = opts.get(i + 1) else { break };
                let len = len as usize;
                if len < 2 || i + len > opts.len() {
                    break;
                }
                if kind == 5 {
                    let mut k = i + 2;
                    while k + 8 <= i + len && n < out.len() {
                        let a =
                            u32::from_be_bytes([opts[k], opts[k + 1], opts[k + 2], opts[k + 3]]);
                        let b = u32::from_be_bytes([
                            opts[k + 4],
                            opts[k + 5],
                            opts[k + 6],
                            opts[k + 7],
                        ]);
                        out[n] = (a, b);
                        n += 1;
                        k += 8;
                    }
                }
                i += len;
            }
        }
    }
    n
}

impl RttTracker {
    /// A data segment leaves the sender at `at`.
    pub fn on_data(&mut self, seq: u32, payload: u32, at: Nanos) {
        if payload == 0 {
            return;
        }
        let end = seq.wrapping_add(payload);
        let is_retransmission = self.snd_max.is_some_and(|m| before(seq, m));
        if is_retransmission {
            for s in self.outstanding.iter_mut() {
                if before(s.seq, end) && before(seq, s.end) {
                    s.retransmitted = true;
                }
            }
        }
        if self.snd_max.is_none_or(|m| before(m, end)) {
            self.outstanding.push_back(Sent {
                seq,
                end,
                at,
                retransmitted: is_retransmission,
                sacked: false,
            });
            self.snd_max = Some(end);
        }
    }

    /// A cumulative ACK without SACK blocks reaches the sender at `at`: its RTT sample, if any.
    pub fn on_ack(&mut self, ack: u32, at: Nanos) -> Option<Nanos> {
        self.on_ack_sack(ack, &[], at)
    }

    /// An ACK with SACK blocks `sack` (`(start, end)` sequence numbers) reaches the sender at
    /// `at`: its RTT sample, if any (tcp_clean_rtx_queue's `first_ackt` unless retransmitted
    /// data was acked, else `first_sackt`).
    pub fn on_ack_sack(&mut self, ack: u32, sack: &[(u32, u32)], at: Nanos) -> Option<Nanos> {
        let mut oldest: Option<Nanos> = None;
        let mut retrans_acked = false;
        while let Some(s) = self.outstanding.front() {
            if before(ack, s.end) {
                break;
            }
            if s.retransmitted {
                retrans_acked = true;
            } else if !s.sacked {
                oldest.get_or_insert(s.at);
            }
            self.outstanding.pop_front();
        }
        let first_sackt = self.sacktag(ack, sack);
        match oldest {
            Some(sent) if !retrans_acked => Some(at.saturating_sub(sent)),
            _ => first_sackt.map(|sent| at.saturating_sub(sent)),
        }
    }

    /// Marks the segments newly covered by `sack`; the oldest send time among those never
    /// retransmitted.
    fn sacktag(&mut self, ack: u32, sack: &[(u32, u32)]) -> Option<Nanos> {
        let mut first: Option<Nanos> = None;
        for &(start, end) in sack {
            if !before(ack, end) || !before(start, end) {
                continue; // D-SACK or below the cumulative ACK
            }
            // First segment that ends after `start`, then walk inwards from both ends.
            let lo = self.outstanding.partition_point(|s| !before(start, s.end));
            let hi = self.outstanding.partition_point(|s| before(s.seq, end));
            let mut note = |s: &mut Sent| {
                s.sacked = true;
                if !s.retransmitted {
                    first = Some(first.map_or(s.at, |f: Nanos| f.min(s.at)));
                }
            };
            let mut i = lo;
            while i < hi {
                let s = &mut self.outstanding[i];
                if s.sacked || before(s.seq, start) || before(end, s.end) {
                    break;
                }
                note(s);
                i += 1;
            }
            let mut j = hi;
            while j > i {
                let s = &mut self.outstanding[j - 1];
                if s.sacked || before(s.seq, start) || before(end, s.end) {
                    break;
                }
                note(s);
                j -= 1;
            }
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_from_the_oldest_newly_acked_segment() {
        let mut t = RttTracker::default();
        t.on_data(1000, 100, 10);
        t.on_data(1100, 100, 20);
        t.on_data(1200, 100, 30);
        assert_eq!(t.on_ack(1000, 40), None); // acknowledges nothing new
        assert_eq!(t.on_ack(1200, 100), Some(90)); // two segments: the first one's time
        assert_eq!(t.on_ack(1300, 130), Some(100));
        assert_eq!(t.on_ack(1300, 140), None);
    }

    #[test]
    fn karn_no_sample_when_retransmitted_data_is_acked() {
        let mut t = RttTracker::default();
        t.on_data(0, 100, 0);
        t.on_data(100, 100, 10);
        t.on_data(0, 100, 500); // retransmission of the first segment
        assert_eq!(t.on_ack(100, 520), None);
        assert_eq!(t.on_ack(200, 530), Some(520));
    }

    #[test]
    fn sack_gives_a_sample_when_the_cumulative_ack_cannot() {
        let mut t = RttTracker::default();
        for k in 0..5u32 {
            t.on_data(k * 100, 100, 10 * k as u64); // sent at 0, 10, 20, 30, 40
        }
        // Segment 0 lost: ACKs stay at 0 and SACK segments 1.., each ACK the newly sacked one.
        assert_eq!(t.on_ack_sack(0, &[(100, 200)], 100), Some(90));
        assert_eq!(t.on_ack_sack(0, &[(100, 300)], 110), Some(90)); // segment 2, sent at 20
        assert_eq!(t.on_ack_sack(0, &[(100, 300)], 115), None); // nothing new
        t.on_data(0, 100, 120); // the retransmission
        assert_eq!(t.on_ack_sack(0, &[(100, 500)], 130), Some(100)); // segments 3 and 4: oldest
                                                                     // The cumulative ACK covers the retransmission and sacked data: Karn, no sample.
        assert_eq!(t.on_ack_sack(500, &[], 200), None);
    }

    #[test]
    fn cumulative_sample_skips_sacked_segments_and_dsack_is_ignored() {
        let mut t = RttTracker::default();
        t.on_data(0, 100, 0);
        t.on_data(100, 100, 10);
        t.on_data(200, 100, 20);
        assert_eq!(t.on_ack_sack(0, &[(200, 300)], 50), Some(30)); // SACK of the third
                                                                   // Cumulative ACK of the first two (reordered, not retransmitted): the first's time;
                                                                   // a D-SACK block below the ACK gives nothing.
        assert_eq!(t.on_ack_sack(300, &[(0, 100)], 60), Some(60));
    }

    #[test]
    fn parses_sack_blocks_among_other_options() {
        // IPv4 (20) + TCP (20) + options: NOP NOP TS(10) NOP NOP SACK(2 blocks: 18) = 32 → doff 13 words
        let opts: Vec<u8> = [
            vec![1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1, 5, 18],
            1000u32.to_be_bytes().to_vec(),
            2000u32.to_be_bytes().to_vec(),
            3000u32.to_be_bytes().to_vec(),
            4000u32.to_be_bytes().to_vec(),
        ]
        .concat();
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[9] = 6;
        p.extend_from_slice(&opts);
        p[32] = (((20 + opts.len()) / 4) as u8) << 4;
        let total = p.len() as u16;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        let mut out = [(0, 0); 4];
        assert_eq!(sack_blocks(&p, &mut out), 2);
        assert_eq!(&out[..2], &[(1000, 2000), (3000, 4000)]);
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut t = RttTracker::default();
        t.on_data(u32::MAX - 50, 100, 0);
        t.on_data(49, 100, 5);
        assert_eq!(t.on_ack(49, 60), Some(60));
        assert_eq!(t.on_ack(149, 70), Some(65));
    }

    #[test]
    fn parses_tcp_fields() {
        let mut p = vec![0u8; 52 + 10];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(62u16).to_be_bytes());
        p[9] = 6;
        p[24..28].copy_from_slice(&7u32.to_be_bytes());
        p[28..32].copy_from_slice(&9u32.to_be_bytes());
        p[32] = 8 << 4;
        p[33] = 0x10;
        assert_eq!(tcp_fields(&p), Some((7, 9, 10, true)));
    }
}
