//! Packets and the arena they live in.
//!
//! A packet is plain data: the fields a link needs (size) and the TCP header fields the endpoints
//! exchange. Sequence numbers count segments, not bytes (the sender knows each segment's payload
//! length), which keeps the scoreboard a ring of fixed-size entries. Packets are allocated from a
//! free list and referred to by a `PacketId`; after warm-up the hot path never allocates.

use crate::Nanos;

pub type PacketId = u32;

/// Maximum SACK blocks in one ACK: with the timestamp option, 3 fit in TCP's 40 option bytes.
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// Sender to receiver: data segments and the SYN.
    #[default]
    Data,
    /// Receiver to sender: ACKs and the SYN-ACK.
    Ack,
}

/// A half-open range of segment numbers `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeqRange {
    pub start: u64,
    pub end: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    #[default]
    Segment,
    Syn,
    SynAck,
    Ack,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Packet {
    /// Index of the flow (connection) this packet belongs to.
    pub flow: u32,
    pub direction: Direction,
    /// The route the packet travels: an index into the driver's route table, fixed when the
    /// packet is sent, so a route change (handover, moved path) leaves packets in flight alone.
    pub route: u32,
    /// Index of the hop within its route the packet is on now.
    pub hop: u16,
    pub kind: Kind,
    /// Bytes on the wire (IP + TCP headers + options + payload).
    pub wire_bytes: u32,
    /// Data: segment number. ACK: unused.
    pub seq: u64,
    /// Data: payload bytes.
    pub payload_bytes: u32,
    /// ACK: cumulative acknowledgment, the next segment expected.
    pub ack: u64,
    /// ACK: advertised receive window in bytes.
    pub rwnd_bytes: u64,
    /// ACK: SACK blocks, most recent first (RFC 2018 §4).
    pub sack: [SeqRange; MAX_SACK_BLOCKS],
    pub sack_len: u8,
    /// Time the packet left its sender (for diagnostics; endpoints keep their own send times).
    pub sent_at: Nanos,
    /// TCP timestamp option (RFC 7323), in milliseconds as Linux's tcp_time_stamp_ms: the
    /// sender's clock, and the value echoed back.
    pub tsval: u32,
    pub tsecr: u32,
    /// Multipath: the subflow of the connection `flow` this packet travels on; `None` for a
    /// single-path flow.
    pub subflow: Option<u8>,
    /// Multipath (RFC 8684 DSS option): on a data segment the data sequence number (in
    /// connection-level segments) it carries; on an ACK the DATA_ACK, the next data segment the
    /// connection's receiver expects. 0 for single-path flows.
    pub dsn: u64,
}

impl Packet {
    pub fn sack_blocks(&self) -> &[SeqRange] {
        &self.sack[..self.sack_len as usize]
    }
}

/// A slab of packets with a free list.
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    live: usize,
    peak_live: usize,
}

impl Default for PacketArena {
    fn default() -> Self {
        Self::with_capacity(4096)
    }
}

impl PacketArena {
    pub fn with_capacity(capacity: usize) -> Self {
        PacketArena {
            slots: Vec::with_capacity(capacity),
            free: Vec::new(),
            live: 0,
            peak_live: 0,
        }
    }

    pub fn alloc(&mut self, packet: Packet) -> PacketId {
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = packet;
                id
            }
            None => {
                self.slots.push(packet);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    pub fn release(&mut self, id: PacketId) {
        debug_assert!((id as usize) < self.slots.len());
        self.live -= 1;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    /// Asks the CPU to bring packet `id` into the cache ([`crate::prefetch`]): the world calls
    /// it for a packet it will handle a few events later. Changes no result.
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(p) = self.slots.get(id as usize) {
            crate::prefetch::prefetch(p);
        }
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets allocated and not yet released.
    pub fn live(&self) -> usize {
        self.live
    }

    pub fn peak_live(&self) -> usize {
        self.peak_live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_slots_are_reused() {
        let mut a = PacketArena::with_capacity(2);
        let p = a.alloc(Packet {
            seq: 1,
            ..Default::default()
        });
        let q = a.alloc(Packet {
            seq: 2,
            ..Default::default()
        });
        a.release(p);
        let r = a.alloc(Packet {
            seq: 3,
            ..Default::default()
        });
        assert_eq!(r, p);
        assert_eq!(a.get(r).seq, 3);
        assert_eq!(a.get(q).seq, 2);
        assert_eq!(a.live(), 2);
        assert_eq!(a.peak_live(), 2);
    }
}
