//! Per-ACK round-trip time samples taken at the sender's side of the emulator, the kernel
//! backend's counterpart of the simulator's `rtt_samples_ns` (crates/tcp/src/sender.rs).
//!
//! The simulator records, for every ACK that acknowledges new data, Linux's `seq_rtt_us`
//! (tcp_clean_rtx_queue): the time since the *oldest* newly acknowledged segment was sent, and
//! no sample when any of the acknowledged data was retransmitted (Karn). This module measures
//! the same at the sender's TUN device: a data segment is stamped when the emulator reads it,
//! an ACK when the emulator hands it back to the sender, so the sample is the round trip
//! outside the sender's host (its stack adds microseconds). Only cumulative ACKs are used
//! (an ACK that only adds SACK blocks gives no sample here; Linux's `sack_rtt_us` feeds only
//! the RTO estimator when no cumulative sample exists).

use rove_sim::Nanos;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy)]
struct Sent {
    seq: u32,
    end: u32,
    at: Nanos,
    retransmitted: bool,
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
    Some((seq, ack, crate::link_emu::tcp_payload_bytes(pkt) as u32, ack_flag))
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
            self.outstanding.push_back(Sent { seq, end, at, retransmitted: is_retransmission });
            self.snd_max = Some(end);
        }
    }

    /// A (cumulative) ACK reaches the sender at `at`: the RTT sample it gives, if any.
    pub fn on_ack(&mut self, ack: u32, at: Nanos) -> Option<Nanos> {
        let mut oldest: Option<Nanos> = None;
        let mut retrans_acked = false;
        while let Some(s) = self.outstanding.front() {
            if before(ack, s.end) {
                break;
            }
            oldest.get_or_insert(s.at);
            retrans_acked |= s.retransmitted;
            self.outstanding.pop_front();
        }
        match oldest {
            Some(sent) if !retrans_acked => Some(at.saturating_sub(sent)),
            _ => None,
        }
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
