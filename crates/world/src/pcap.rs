//! Packet captures: the packets that crossed a link, as a pcap file Wireshark, tshark and
//! tcptrace read (`rove run --pcap LINK`).
//!
//! A packet is written when it reaches the far end of the tapped link (after its queue, its
//! serialisation and its propagation delay: what a capture at the next hop's interface sees),
//! in event order, with the simulation's nanosecond clock (nanosecond pcap, magic 0xa1b23c4d;
//! link type 101, raw IPv4). Only headers are stored (the simulator carries no payload bytes):
//! each record's captured length is its headers, its original length the packet's size on the
//! wire, as a capture with a small snap length.
//!
//! Headers are synthesised from the simulator's packet, in the sizes the simulator charges:
//! - IPv4: flow k's sender is 10.1.H.L and its receiver 10.2.H.L, where H.L = k + 1 (so up to
//!   65535 flows); TTL 64, don't-fragment, a correct header checksum.
//! - TCP: the sender's port is 40000 + subflow, the receiver's 5201; sequence numbers in bytes
//!   from initial sequence numbers 1000 (sender) and 2000 (receiver), so relative and absolute
//!   numbers are easy to tell; flags SYN, SYN-ACK, ACK (with PSH on data); the window in
//!   units of 2^7 (the window scale every SYN announces: 7, Linux's for a 6 MB buffer);
//!   options as Linux lays them out: MSS, SACK-permitted, timestamps, NOP, window scale on a
//!   SYN (20 bytes); NOP, NOP, timestamps (12) on every other segment, then NOP, NOP and the
//!   SACK blocks on an ACK that has some. The TCP checksum is 0: it covers payload bytes the
//!   simulator does not have (Wireshark does not check it unless asked).
//! - Multipath subflows are plain TCP connections on their own ports (no MPTCP options).
//! - Unresponsive flows are UDP from port 40000 to 9000.

use rove_sim::packet::{Direction, Kind, Packet};
use rove_sim::Nanos;
use rove_tcp::Segments;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
const LINKTYPE_RAW: u32 = 101;
const ISN_SENDER: u32 = 1000;
const ISN_RECEIVER: u32 = 2000;
const WINDOW_SCALE: u8 = 7;
const SENDER_PORT: u16 = 40000;
const RECEIVER_PORT: u16 = 5201;
const UDP_PORT: u16 = 9000;

/// What the capture needs to know about a flow to write its headers.
#[derive(Debug, Clone, Copy)]
pub struct FlowInfo {
    pub segments: Segments,
    pub udp: bool,
}

pub struct Pcap {
    out: BufWriter<File>,
    pub packets: u64,
}

impl Pcap {
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        // global header: magic, version 2.4, thiszone 0, sigfigs 0, snaplen, network
        out.write_all(&PCAP_MAGIC_NS.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&65535u32.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(Pcap { out, packets: 0 })
    }

    /// Writes `p` (of a flow described by `flow`) as seen at time `now`.
    pub fn write(&mut self, now: Nanos, p: &Packet, flow: &FlowInfo) -> io::Result<()> {
        let mut buf = [0u8; 20 + 60];
        let (len, wire) = if flow.udp {
            udp_headers(p, &mut buf)
        } else {
            tcp_headers(p, flow.segments, &mut buf)
        };
        let secs = (now / 1_000_000_000) as u32;
        let nanos = (now % 1_000_000_000) as u32;
        self.out.write_all(&secs.to_le_bytes())?;
        self.out.write_all(&nanos.to_le_bytes())?;
        self.out.write_all(&(len as u32).to_le_bytes())?;
        self.out.write_all(&wire.to_le_bytes())?;
        self.out.write_all(&buf[..len])?;
        self.packets += 1;
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<u64> {
        self.out.flush()?;
        Ok(self.packets)
    }
}

/// The two IPv4 addresses of flow `k`: 10.1.H.L (sender) and 10.2.H.L (receiver), H.L = k + 1.
fn addresses(k: u32) -> ([u8; 4], [u8; 4]) {
    let n = (k + 1) as u16;
    let [h, l] = n.to_be_bytes();
    ([10, 1, h, l], [10, 2, h, l])
}

/// Writes an IPv4 header for a packet of `total` bytes and protocol `proto` into `b[..20]`.
fn ipv4(b: &mut [u8], total: u16, proto: u8, src: [u8; 4], dst: [u8; 4]) {
    b[0] = 0x45;
    b[1] = 0;
    b[2..4].copy_from_slice(&total.to_be_bytes());
    b[4..6].copy_from_slice(&0u16.to_be_bytes()); // identification
    b[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // don't fragment
    b[8] = 64;
    b[9] = proto;
    b[10..12].copy_from_slice(&[0, 0]);
    b[12..16].copy_from_slice(&src);
    b[16..20].copy_from_slice(&dst);
    let sum = checksum(&b[..20]);
    b[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// The Internet checksum (RFC 1071) of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in data.chunks(2) {
        let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn udp_headers(p: &Packet, b: &mut [u8]) -> (usize, u32) {
    let (src, dst) = addresses(p.flow);
    let wire = p.wire_bytes;
    ipv4(b, wire as u16, 17, src, dst);
    b[20..22].copy_from_slice(&SENDER_PORT.to_be_bytes());
    b[22..24].copy_from_slice(&UDP_PORT.to_be_bytes());
    b[24..26].copy_from_slice(&((wire - 20) as u16).to_be_bytes());
    b[26..28].copy_from_slice(&[0, 0]); // no checksum (allowed for UDP over IPv4)
    (28, wire)
}

/// TCP sequence number of segment `seq`'s first byte (the SYN takes one number).
fn byte_seq(isn: u32, segments: Segments, seq: u64) -> u32 {
    isn.wrapping_add(1)
        .wrapping_add(segments.bytes_before(seq) as u32)
}

fn tcp_headers(p: &Packet, segments: Segments, b: &mut [u8]) -> (usize, u32) {
    let (sender, receiver) = addresses(p.flow);
    let sport = SENDER_PORT + u16::from(p.subflow.unwrap_or(0));
    let (src, dst, src_port, dst_port) = match p.direction {
        Direction::Data => (sender, receiver, sport, RECEIVER_PORT),
        Direction::Ack => (receiver, sender, RECEIVER_PORT, sport),
    };
    const SYN: u8 = 0x02;
    const PSH: u8 = 0x08;
    const ACK: u8 = 0x10;
    let (seq, ack, flags, payload) = match p.kind {
        Kind::Syn => (ISN_SENDER, 0, SYN, 0),
        Kind::SynAck => (ISN_RECEIVER, ISN_SENDER.wrapping_add(1), SYN | ACK, 0),
        Kind::Segment => (
            byte_seq(ISN_SENDER, segments, p.seq),
            ISN_RECEIVER.wrapping_add(1),
            ACK | PSH,
            p.payload_bytes,
        ),
        Kind::Ack => (
            ISN_RECEIVER.wrapping_add(1),
            byte_seq(ISN_SENDER, segments, p.ack),
            ACK,
            0,
        ),
    };
    // Options, in Linux's layout.
    let t = &mut b[20..];
    let mut o = 20;
    let ts = |t: &mut [u8], at: usize| {
        t[at] = 8;
        t[at + 1] = 10;
        t[at + 2..at + 6].copy_from_slice(&p.tsval.to_be_bytes());
        t[at + 6..at + 10].copy_from_slice(&p.tsecr.to_be_bytes());
    };
    if matches!(p.kind, Kind::Syn | Kind::SynAck) {
        t[o..o + 4].copy_from_slice(&[2, 4, 0x05, 0xb4]); // MSS 1460
        t[o + 4..o + 6].copy_from_slice(&[4, 2]); // SACK permitted
        ts(t, o + 6);
        t[o + 16] = 1; // NOP
        t[o + 17..o + 20].copy_from_slice(&[3, 3, WINDOW_SCALE]);
        o += 20;
    } else {
        t[o..o + 2].copy_from_slice(&[1, 1]);
        ts(t, o + 2);
        o += 12;
        let blocks = p.sack_blocks();
        if !blocks.is_empty() {
            t[o..o + 2].copy_from_slice(&[1, 1]);
            t[o + 2] = 5;
            t[o + 3] = 2 + 8 * blocks.len() as u8;
            o += 4;
            for r in blocks {
                t[o..o + 4].copy_from_slice(&byte_seq(ISN_SENDER, segments, r.start).to_be_bytes());
                t[o + 4..o + 8]
                    .copy_from_slice(&byte_seq(ISN_SENDER, segments, r.end).to_be_bytes());
                o += 8;
            }
        }
    }
    let header = o;
    t[0..2].copy_from_slice(&src_port.to_be_bytes());
    t[2..4].copy_from_slice(&dst_port.to_be_bytes());
    t[4..8].copy_from_slice(&seq.to_be_bytes());
    t[8..12].copy_from_slice(&ack.to_be_bytes());
    t[12] = ((header / 4) as u8) << 4;
    t[13] = flags;
    let window = match p.kind {
        // A SYN's window is not scaled (RFC 7323 §2.2): Linux's initial 64240.
        Kind::Syn | Kind::SynAck => 64240,
        _ if p.direction == Direction::Ack => (p.rwnd_bytes >> WINDOW_SCALE).min(0xffff) as u16,
        // The data direction's window is the sender's receive window, which is not simulated:
        // the largest one.
        _ => 0xffff,
    };
    t[14..16].copy_from_slice(&window.to_be_bytes());
    t[16..18].copy_from_slice(&[0, 0]); // checksum: covers payload the simulator lacks
    t[18..20].copy_from_slice(&[0, 0]);
    let total = 20 + header as u32 + payload;
    ipv4(b, total as u16, 6, src, dst);
    (20 + header, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ipv4_checksum_of_a_header_with_its_checksum_is_zero() {
        let mut b = [0u8; 20];
        ipv4(&mut b, 1500, 6, [10, 1, 0, 1], [10, 2, 0, 1]);
        assert_eq!(checksum(&b), 0);
        // RFC 1071's example words sum to 0xddf2 and complement to 0x220d.
        assert_eq!(
            checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
    }

    #[test]
    fn data_segments_have_the_simulators_sizes_and_byte_sequence_numbers() {
        let segs = Segments {
            size_bytes: Some(10_000),
        };
        let info = FlowInfo {
            segments: segs,
            udp: false,
        };
        let mut p = Packet {
            kind: Kind::Segment,
            seq: 6,
            payload_bytes: 10_000 - 6 * 1448,
            wire_bytes: 52 + 10_000 - 6 * 1448,
            ..Default::default()
        };
        let mut b = [0u8; 80];
        let (len, wire) = tcp_headers(&p, info.segments, &mut b);
        assert_eq!((len, wire), (52, p.wire_bytes));
        assert_eq!(
            u32::from_be_bytes(b[24..28].try_into().unwrap()),
            1001 + 6 * 1448
        );
        // The ACK of the whole transfer acknowledges byte 10 000 (not 7 × 1448).
        p = Packet {
            kind: Kind::Ack,
            direction: Direction::Ack,
            ack: 7,
            rwnd_bytes: 128 * 1000,
            wire_bytes: 52,
            ..Default::default()
        };
        let (len, wire) = tcp_headers(&p, info.segments, &mut b);
        assert_eq!((len, wire), (52, 52));
        assert_eq!(
            u32::from_be_bytes(b[28..32].try_into().unwrap()),
            1001 + 10_000
        );
        assert_eq!(u16::from_be_bytes([b[34], b[35]]), 1000); // 128000 >> 7
    }
}
