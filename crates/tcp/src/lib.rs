//! TCP for rove: a sender and a receiver whose machinery follows Linux (net/ipv4/tcp_*.c), and
//! congestion control algorithms behind [`cc::CongestionControl`], a trait whose hooks mirror
//! `struct tcp_congestion_ops`.
//!
//! Sequence numbers count segments (every segment carries `MSS` payload bytes but the last of a
//! finite flow); cwnd and the scoreboard counters are in packets, as in Linux.
//!
//! The endpoints never touch a clock or a socket: they are driven through [`Wire`], which gives
//! them the time, takes their packets and arms their timers. The simulator implements it; so can
//! any other driver.

pub mod cc;
pub mod kernel;
pub mod minmax;
pub mod rcvbuf;
pub mod receiver;
pub mod rtt;
pub mod sender;
pub mod state;

pub use rove_sim::packet::Packet;
use rove_sim::Nanos;

/// Payload bytes per segment: a 1500-byte MTU less IPv4 (20), TCP (20) and the timestamp
/// option (12), as Linux's mss_cache on Ethernet with timestamps.
pub const MSS: u32 = 1448;
/// Header bytes of a data segment or a bare ACK: IPv4 + TCP + timestamp option (aligned).
pub const HEADER_BYTES: u32 = 52;
/// SYN and SYN-ACK: IPv4 + TCP + MSS, SACK-permitted, timestamps, window scale (20 option bytes).
pub const SYN_BYTES: u32 = 60;

/// Bytes on the wire of an ACK carrying `blocks` SACK blocks (TCPOLEN_SACK_BASE_ALIGNED + 8 per block).
pub fn ack_wire_bytes(blocks: usize) -> u32 {
    HEADER_BYTES + if blocks > 0 { 4 + 8 * blocks as u32 } else { 0 }
}

/// A TCP timestamp value for time `now`: milliseconds, as Linux's tcp_time_stamp_ms.
/// Offset by one so that 0 never appears on the wire (0 means "no timestamp" to Linux).
pub fn ts_ms(now: Nanos) -> u32 {
    (now / 1_000_000) as u32 + 1
}

/// How the window is handed over when a connection switches its congestion control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handoff {
    /// What the new algorithm's `init` leaves (Linux's behaviour).
    Keep,
    /// cwnd (and optionally ssthresh), in packets, written after `init`.
    Set { cwnd: u32, ssthresh: Option<u32> },
    /// The delay-scaled handoff of seed-002 Eq. 6.3 (Molina's thesis): cwnd = sCWND·Dmin/sD,
    /// sCWND and sD the means of the last `samples` (cwnd, RTT) pairs the sender recorded (one
    /// per ACK carrying an RTT sample), Dmin the connection's min RTT; ssthresh = that cwnd.
    /// `samples` is 1..=[`HANDOFF_HISTORY`].
    DelayScaled { samples: u32 },
}

/// The most (cwnd, RTT) samples a sender keeps for [`Handoff::DelayScaled`].
pub const HANDOFF_HISTORY: usize = 32;

/// The timers an endpoint can arm. Each endpoint keeps its own deadline per timer; an armed
/// timer that fires early (the deadline moved later) is simply re-armed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Timer {
    /// Retransmission timeout (also the SYN retransmission timer).
    Rto,
    /// RACK reordering timer (ICSK_TIME_REO_TIMEOUT).
    Reorder,
    /// Internal pacing: the next segment may leave at this time.
    Pacing,
    /// Receiver's delayed-ACK timer.
    DelayedAck,
    /// Tail loss probe (RACK-TLP, RFC 8985 §7; ICSK_TIME_LOSS_PROBE).
    LossProbe,
    /// A multipath connection's scheduler wake-up (a rate limiter's next refill, see
    /// `rove_mp::sched::Scheduler::wake_at`); no TCP endpoint arms it.
    Scheduler,
    /// A multipath connection's receiver-behaviour wake-up (`rove_mp::receiver`); no TCP
    /// endpoint arms it.
    Receiver,
}

impl Timer {
    pub const COUNT: usize = 7;
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What an endpoint needs from whoever drives it.
pub trait Wire {
    fn now(&self) -> Nanos;
    /// Puts a packet on the endpoint's outgoing path. The driver fills in routing fields.
    fn transmit(&mut self, packet: Packet);
    /// Asks to be called back (`on_timer`) at or after `at`.
    fn arm(&mut self, timer: Timer, at: Nanos);
}

/// Where a sender's data comes from (the "data source" hook).
///
/// A bulk single-path flow sends its own byte stream ([`Segments`]: the application wrote
/// everything up front). A multipath subflow sends what its connection's scheduler hands it,
/// and a single-path flow whose application writes over time (a video source, a
/// request/response loop) what the application wrote, one segment at a time ([`FedSegments`]):
/// the write queue ends where the last segment handed over ends, the sender never "completes"
/// on its own (the connection or the application decides when the transfer is done), and a
/// segment keeps its payload size for its retransmissions.
#[derive(Debug, Clone)]
pub enum DataSource {
    Stream(Segments),
    Fed(FedSegments),
}

impl DataSource {
    /// Payload bytes of segment `seq`, for any `seq` from the oldest unacknowledged one to the
    /// end of the write queue.
    #[inline]
    pub fn payload(&self, seq: u64) -> u32 {
        match self {
            DataSource::Stream(s) => s.payload(seq),
            DataSource::Fed(f) => f.payload(seq),
        }
    }
}

/// The write queue of a subflow fed by a multipath connection: payload sizes of segments
/// `[base, base + len)`, where `base` is the oldest unacknowledged segment.
#[derive(Debug, Clone, Default)]
pub struct FedSegments {
    base: u64,
    payloads: std::collections::VecDeque<u32>,
}

impl FedSegments {
    #[inline]
    pub fn payload(&self, seq: u64) -> u32 {
        self.payloads[(seq - self.base) as usize]
    }

    /// One past the last segment handed over.
    pub fn end(&self) -> u64 {
        self.base + self.payloads.len() as u64
    }

    pub fn push(&mut self, payload: u32) {
        self.payloads.push_back(payload);
    }

    /// Forgets segments below `una` (cumulatively acknowledged).
    pub fn release_below(&mut self, una: u64) {
        while self.base < una && !self.payloads.is_empty() {
            self.payloads.pop_front();
            self.base += 1;
        }
    }
}

/// The payloads of the segments one application write of `bytes` becomes: full `MSS` segments
/// and a shorter last one. [GAP] Linux appends a write to the tail skb of the write queue while
/// that skb is unsent and has room (tcp_sendmsg_locked); rove starts every write on a fresh
/// segment, which is what Linux does whenever the previous write has already left (the usual
/// case for frames and responses written one inter-frame or think time apart).
pub fn segment_payloads(bytes: u64) -> impl Iterator<Item = u32> {
    let full = bytes / MSS as u64;
    let rest = (bytes % MSS as u64) as u32;
    std::iter::repeat_n(MSS, full as usize).chain((rest > 0).then_some(rest))
}

/// Payload sizes of a flow's segments: all `MSS` but the last of a finite flow.
#[derive(Debug, Clone, Copy)]
pub struct Segments {
    /// Total bytes to send, `None` for unlimited.
    pub size_bytes: Option<u64>,
}

impl Segments {
    /// Number of segments, `u64::MAX` for an unlimited flow.
    pub fn count(&self) -> u64 {
        match self.size_bytes {
            Some(b) => b.div_ceil(MSS as u64),
            None => u64::MAX,
        }
    }

    pub fn payload(&self, seq: u64) -> u32 {
        match self.size_bytes {
            Some(b) if seq + 1 == self.count() => (b - seq * MSS as u64) as u32,
            _ => MSS,
        }
    }

    /// Payload bytes in segments `[0, end)`.
    pub fn bytes_before(&self, end: u64) -> u64 {
        match self.size_bytes {
            Some(b) => (end * MSS as u64).min(b),
            None => end * MSS as u64,
        }
    }
}
