//! The kernel backend's receiver-side duplicate-ACK injector: the emulator's form of an
//! `[[actions]]` `dupacks = true` entry (what `rove_mp::receiver`'s held ACK does in the
//! simulator), acting on a real kernel subflow's ACKs as they cross the emulator from the
//! receiver namespace (seed 003's R-TSC trick: intentional triple duplicate ACKs halve the
//! sender's window without delaying any application byte).
//!
//! The receiving kernel acknowledges everything as usual; the emulator rewrites the subflow's
//! ACKs on their way back:
//! 1. **armed** at the action's time: the next ACK's number A is passed on, and A becomes the
//!    held number (the segment [A, A + MSS) is the pretended hole; the receiver has it);
//! 2. **holding**: every later ACK of the subflow leaves with ACK number A and one SACK block
//!    [A + MSS, its real ACK number) in place of its own SACK blocks (checksums and lengths
//!    fixed). The sender sees duplicate ACKs with ≥ 3 segments SACKed above A: RACK marks A lost
//!    at once (reo_wnd is 0 at tp->reordering SACKed segments), it retransmits A, enters
//!    Recovery and reduces cwnd to ssthresh (half with Reno). The emulator notes the
//!    retransmission's TSval on the data side;
//! 3. the hold ends at the first ACK whose TSecr is at least that TSval (the receiver has seen
//!    data sent after the retransmission): it passes with its real number and no SACK option.
//!    Earlier ones stay held, because an ACK ending Recovery with an older echo would make the
//!    sender undo the reduction (Eifel, tcp_packet_delayed), and the receiver's D-SACK of the
//!    duplicate is replaced with the held block (a D-SACK would undo it too, tcp_try_undo_dsack).
//!
//! Needs the TCP timestamp option (Linux's default) and SACK. IPv4 only, as the emulator.
//! Nothing allocates: the ACK is rewritten in its slot (its buffer has room for the options).

use crate::tcp_header::{be32, fix_checksums, tcp_offsets, timestamps};

/// An episode's state on one route (a subflow).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Idle,
    Armed,
    /// Holding ACK number `ack`; `retrans_tsval`: the TSval of the held segment's retransmission.
    Holding {
        ack: u32,
        retrans_tsval: Option<u32>,
    },
}

/// One route's injector.
#[derive(Debug, Clone, Default)]
pub struct DupAckInjector {
    state: State,
    /// The largest payload seen on the route's data side: the pretended hole's length.
    mss: u32,
    /// Episodes begun and ended; ACKs rewritten.
    pub episodes: u64,
    pub episodes_answered: u64,
    pub rewritten_acks: u64,
}

impl DupAckInjector {
    /// Arms an episode (the action's time); ignored while one runs.
    pub fn arm(&mut self) {
        if self.state == State::Idle {
            self.state = State::Armed;
        }
    }

    pub fn is_active(&self) -> bool {
        self.state != State::Idle
    }

    /// A data packet of the route left the sender: learns the MSS, and notes the held
    /// segment's retransmission.
    pub fn on_data(&mut self, pkt: &[u8]) {
        let Some((ihl, doff)) = tcp_offsets(pkt) else {
            return;
        };
        let total = (u16::from_be_bytes([pkt[2], pkt[3]]) as usize).min(pkt.len());
        let payload = total.saturating_sub(ihl + doff) as u32;
        self.mss = self.mss.max(payload);
        if let State::Holding {
            ack,
            retrans_tsval: None,
        } = self.state
        {
            if payload > 0 && be32(pkt, ihl + 4) == ack {
                let tsval = timestamps(pkt).map(|t| t.0);
                self.state = State::Holding {
                    ack,
                    retrans_tsval: tsval,
                };
            }
        }
    }

    /// An ACK of the route read from the receiver side, `len` bytes of `buf` (which has room
    /// for its options to grow to 40 bytes): rewritten in place while an episode holds; returns its new length.
    pub fn on_ack(&mut self, buf: &mut [u8], len: usize) -> usize {
        if self.state == State::Idle {
            return len;
        }
        let Some((ihl, doff)) = tcp_offsets(&buf[..len]) else {
            return len;
        };
        if buf[ihl + 13] & 0x10 == 0 || buf[ihl + 13] & 0x07 != 0 {
            return len; // not an ACK, or SYN/FIN/RST
        }
        let real_ack = be32(buf, ihl + 8);
        match self.state {
            State::Idle => len,
            State::Armed if self.mss > 0 => {
                self.state = State::Holding {
                    ack: real_ack,
                    retrans_tsval: None,
                };
                self.episodes += 1;
                len
            }
            State::Armed => len,
            State::Holding { ack, retrans_tsval } => {
                let echo = timestamps(&buf[..len]).map(|t| t.1);
                let answered = matches!((retrans_tsval, echo),
                    (Some(r), Some(e)) if e.wrapping_sub(r) as i32 >= 0);
                if answered {
                    self.state = State::Idle;
                    self.episodes_answered += 1;
                    return self.rewrite(buf, len, ihl, doff, real_ack, None);
                }
                let hole_end = ack.wrapping_add(self.mss);
                let block =
                    (real_ack.wrapping_sub(hole_end) as i32 > 0).then_some((hole_end, real_ack));
                self.rewritten_acks += 1;
                self.rewrite(buf, len, ihl, doff, ack, block)
            }
        }
    }

    /// Sets the ACK number to `ack` and replaces the SACK option with `block` (none: no SACK
    /// option), keeping the other options; fixes lengths and checksums. Returns the new length.
    fn rewrite(
        &mut self,
        buf: &mut [u8],
        len: usize,
        ihl: usize,
        doff: usize,
        ack: u32,
        block: Option<(u32, u32)>,
    ) -> usize {
        // The options without SACK, then the new block, padded with NOPs to a 4-byte multiple.
        let mut opts = [0u8; 40];
        let mut n = 0;
        let old = ihl + 20..ihl + doff;
        let mut i = old.start;
        while i < old.end {
            match buf[i] {
                0 => break,
                1 => i += 1,
                kind => {
                    let l = buf.get(i + 1).copied().unwrap_or(0) as usize;
                    if l < 2 || i + l > old.end {
                        break;
                    }
                    if kind != 5 {
                        opts[n..n + l].copy_from_slice(&buf[i..i + l]);
                        n += l;
                    }
                    i += l;
                }
            }
        }
        if let Some((a, b)) = block {
            if n + 10 <= 40 {
                opts[n] = 5;
                opts[n + 1] = 10;
                opts[n + 2..n + 6].copy_from_slice(&a.to_be_bytes());
                opts[n + 6..n + 10].copy_from_slice(&b.to_be_bytes());
                n += 10;
            }
        }
        while n % 4 != 0 {
            opts[n] = 1; // NOP
            n += 1;
        }
        let new_doff = 20 + n;
        let payload = len - (ihl + doff);
        let new_len = ihl + new_doff + payload;
        if new_len > buf.len() {
            return len; // no room: pass it as it is
        }
        buf.copy_within(ihl + doff..len, ihl + new_doff);
        buf[ihl + 20..ihl + 20 + n].copy_from_slice(&opts[..n]);
        buf[ihl + 8..ihl + 12].copy_from_slice(&ack.to_be_bytes());
        buf[ihl + 12] = ((new_doff / 4) as u8) << 4 | (buf[ihl + 12] & 0x0f);
        buf[2..4].copy_from_slice(&(new_len as u16).to_be_bytes());
        fix_checksums(&mut buf[..new_len]);
        new_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp_header::{fold, sum16};

    /// A TCP/IPv4 packet from 10.72.0.1 to 10.71.0.1 with `options` (a multiple of 4 bytes).
    fn tcp(seq: u32, ack: u32, flags: u8, options: &[u8], payload: usize) -> Vec<u8> {
        let doff = 20 + options.len();
        let total = 20 + doff + payload;
        let mut p = vec![0u8; total + 64];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 72, 0, 1]);
        p[16..20].copy_from_slice(&[10, 71, 0, 1]);
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[28..32].copy_from_slice(&ack.to_be_bytes());
        p[32] = ((doff / 4) as u8) << 4;
        p[33] = flags;
        p[40..40 + options.len()].copy_from_slice(options);
        fix_checksums(&mut p[..total]);
        p.truncate(total);
        p.resize(total + 64, 0);
        p
    }

    fn ts(tsval: u32, tsecr: u32) -> Vec<u8> {
        let mut o = vec![1, 1, 8, 10];
        o.extend(tsval.to_be_bytes());
        o.extend(tsecr.to_be_bytes());
        o
    }

    /// The ones' complement sum over the pseudo-header and segment is 0xffff when valid.
    fn checksums_valid(p: &[u8]) -> bool {
        let total = u16::from_be_bytes([p[2], p[3]]) as usize;
        let ip_ok = fold(sum16(&p[..20], 0)) == 0;
        let acc = sum16(&p[12..20], 0) + 6 + (total - 20) as u32;
        ip_ok && fold(sum16(&p[20..total], acc)) == 0
    }

    #[test]
    fn an_episode_holds_the_ack_with_a_sack_block_until_an_echo_of_the_retransmission() {
        let mut inj = DupAckInjector::default();
        inj.on_data(&tcp(1000, 0, 0x10, &ts(50, 7), 1448));
        inj.arm();
        // The first ACK after arming passes and sets the held number.
        let mut a = tcp(5, 5000, 0x10, &ts(8, 50), 0);
        let len = a.len() - 64;
        assert_eq!(inj.on_ack(&mut a, len), len);
        assert_eq!(be32(&a, 28), 5000);
        // The next ones: ACK 5000, SACK [6448, real), a valid packet 8 bytes longer (TS and
        // SACK without the NOPs: 20 option bytes instead of 12).
        for (k, real) in [9344u32, 12240, 15136].iter().enumerate() {
            let mut a = tcp(5, *real, 0x10, &ts(9 + k as u32, 51), 0);
            let len = a.len() - 64;
            let n = inj.on_ack(&mut a, len);
            assert_eq!(n, len + 8);
            assert_eq!(be32(&a, 28), 5000);
            let mut blocks = [(0, 0); 4];
            assert_eq!(crate::rtt::sack_blocks(&a[..n], &mut blocks), 1);
            assert_eq!(blocks[0], (6448, *real));
            assert_eq!(
                timestamps(&a[..n]),
                Some((9 + k as u32, 51)),
                "other options kept"
            );
            assert!(checksums_valid(&a[..n]));
        }
        // The retransmission of 5000 goes by (TSval 60); an ACK echoing 55 (older data, with
        // the receiver's D-SACK) stays held, its D-SACK replaced.
        inj.on_data(&tcp(5000, 0, 0x10, &ts(60, 9), 1448));
        let mut dsack = ts(12, 55);
        dsack.extend([1, 1, 5, 10]);
        dsack.extend(5000u32.to_be_bytes());
        dsack.extend(6448u32.to_be_bytes());
        let mut a = tcp(5, 16584, 0x10, &dsack, 0);
        let len = a.len() - 64;
        let n = inj.on_ack(&mut a, len);
        let mut blocks = [(0, 0); 4];
        assert_eq!(crate::rtt::sack_blocks(&a[..n], &mut blocks), 1);
        assert_eq!((be32(&a, 28), blocks[0]), (5000, (6448, 16584)));
        assert!(checksums_valid(&a[..n]));
        // An ACK echoing 60: released with its real number.
        let mut a = tcp(5, 18032, 0x10, &ts(13, 60), 0);
        let len = a.len() - 64;
        let n = inj.on_ack(&mut a, len);
        assert_eq!((n, be32(&a, 28)), (len, 18032));
        assert!(checksums_valid(&a[..n]));
        assert!(!inj.is_active());
        assert_eq!(
            (inj.episodes, inj.episodes_answered, inj.rewritten_acks),
            (1, 1, 4)
        );
    }
}
