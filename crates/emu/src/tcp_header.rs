//! Reading and fixing TCP/IPv4 headers in the emulator's packet buffers: the header offsets, an
//! option by kind, the timestamps, and the checksums, recomputed in full (RFC 1071) or updated
//! for one changed 16-bit word (RFC 1624). Used where the emulator acts on real packets: the
//! duplicate-ACK injector (dupack.rs) and OAL's window rewrite (oal.rs). Nothing allocates.

/// TCP header offset (IPv4 header length) and data offset, for a TCP/IPv4 packet.
pub fn tcp_offsets(pkt: &[u8]) -> Option<(usize, usize)> {
    if pkt.len() < 40 || pkt[0] >> 4 != 4 || pkt[9] != libc::IPPROTO_TCP as u8 {
        return None;
    }
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    let doff = (*pkt.get(ihl + 12)? >> 4) as usize * 4;
    (doff >= 20 && pkt.len() >= ihl + doff).then_some((ihl, doff))
}

/// The data of the first option of `kind` in a TCP/IPv4 packet (after its kind and length
/// bytes); `None` without one, or with malformed options before it.
pub fn tcp_option(pkt: &[u8], kind: u8) -> Option<&[u8]> {
    let (ihl, doff) = tcp_offsets(pkt)?;
    let opts = &pkt[ihl + 20..ihl + doff];
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => return None, // end of options
            1 => i += 1,      // no-op
            k => {
                let len = *opts.get(i + 1)? as usize;
                if len < 2 || i + len > opts.len() {
                    return None;
                }
                if k == kind {
                    return Some(&opts[i + 2..i + len]);
                }
                i += len;
            }
        }
    }
    None
}

/// The (TSval, TSecr) of a TCP/IPv4 packet's timestamp option (kind 8, RFC 7323 §3).
pub fn timestamps(pkt: &[u8]) -> Option<(u32, u32)> {
    let d = tcp_option(pkt, 8).filter(|d| d.len() == 8)?;
    Some((be32(d, 0), be32(d, 4)))
}

pub fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// The ones' complement sum of `b` as 16-bit big-endian words (RFC 1071), folded later.
pub fn sum16(b: &[u8], mut acc: u32) -> u32 {
    let mut chunks = b.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u32) << 8;
    }
    acc
}

/// Folds the carries of a ones' complement sum and complements it: the checksum field.
pub fn fold(mut acc: u32) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Recomputes the IPv4 header checksum and the TCP checksum of `pkt` (its IPv4 total length
/// is the packet's length).
pub fn fix_checksums(pkt: &mut [u8]) {
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    pkt[10] = 0;
    pkt[11] = 0;
    let ip = fold(sum16(&pkt[..ihl], 0));
    pkt[10..12].copy_from_slice(&ip.to_be_bytes());
    let tcp_len = pkt.len() - ihl;
    pkt[ihl + 16] = 0;
    pkt[ihl + 17] = 0;
    let mut acc = sum16(&pkt[12..20], 0); // source and destination addresses
    acc += libc::IPPROTO_TCP as u32 + tcp_len as u32;
    let tcp = fold(sum16(&pkt[ihl..], acc));
    pkt[ihl + 16..ihl + 18].copy_from_slice(&tcp.to_be_bytes());
}

/// The checksum after one 16-bit word of the summed data changed from `old` to `new`:
/// RFC 1624 Eqn. 3, HC' = ~(~HC + ~m + m'), in ones' complement arithmetic. (Eqn. 2, the
/// older RFC 1141 form, can give 0xffff where a recomputation gives 0x0000.)
pub fn checksum_adjust(checksum: u16, old: u16, new: u16) -> u16 {
    fold(u32::from(!checksum) + u32::from(!old) + u32::from(new))
}

/// Writes `new` into the TCP header's 16-bit field at `at` (an even offset from the TCP
/// header's start `ihl`) and updates the TCP checksum for it (RFC 1624).
pub fn set_tcp_word(pkt: &mut [u8], ihl: usize, at: usize, new: u16) {
    debug_assert!(at.is_multiple_of(2));
    let old = u16::from_be_bytes([pkt[ihl + at], pkt[ihl + at + 1]]);
    let sum = u16::from_be_bytes([pkt[ihl + 16], pkt[ihl + 17]]);
    pkt[ihl + at..ihl + at + 2].copy_from_slice(&new.to_be_bytes());
    pkt[ihl + 16..ihl + 18].copy_from_slice(&checksum_adjust(sum, old, new).to_be_bytes());
}
