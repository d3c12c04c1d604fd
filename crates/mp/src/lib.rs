//! Multipath transport (MPTCP-like, RFC 8684) for rove: one connection over several subflows.
//!
//! ```text
//!             application (in-order bytes, delivery times)
//!                   ^                          |
//!      receiver:  ReorderBuffer          DataSender  :sender
//!      (data-level rcv_nxt, OFO)   (DSN space, DATA_ACK, reinjection, window)
//!                   ^                          |  Scheduler (sched/): which subflow(s)
//!            TcpReceiver  ...  TcpReceiver   TcpSender ... TcpSender  (full rove-tcp endpoints)
//!                   ^              path 0 ... path n-1          |
//! ```
//!
//! * Each subflow is a complete rove-tcp sender/receiver pair with its own sequence space, loss
//!   recovery, RTO and congestion control. The sender is *fed*: it sends only what the
//!   connection's scheduler hands it ([`rove_tcp::DataSource::Fed`]), and each segment it sends
//!   carries the data sequence number (DSN) it was mapped to (the DSS option: [`Packet::dsn`]).
//! * The connection's data sequence space counts segments of `MSS` bytes (the last of a finite
//!   transfer shorter), as rove-tcp's sequence numbers do. The receiver acknowledges data-level
//!   progress in every subflow ACK (DATA_ACK, also in `Packet::dsn`); the sender forgets DSNs
//!   below it. One connection-level receive window (the flow's `rwnd`) bounds the DSNs in flight
//!   above the DATA_ACK, and therefore the reordering buffer.
//! * Subflow 0 opens the connection; the others send their SYN (MP_JOIN) when subflow 0 is
//!   established, one RTT of subflow 0 after it started, as Linux's path manager does once the
//!   MP_CAPABLE handshake completes.
//! * A subflow whose retransmission timer fires is *potentially failed* (multipath-tcp.org's
//!   `tp->pf`, upstream's `MPTCP_SUBFLOW_FLAG_STALE`): no scheduler uses it, and every DSN it
//!   holds that is not yet DATA_ACKed is queued for reinjection, which goes out before new data on
//!   another subflow that did not carry it (mptcp_reinject_data). It becomes usable again when
//!   an ACK acknowledges new data on it.
//! * A scheduler may plan ahead: it queues DSNs in per-subflow send queues at the connection
//!   (beyond the subflows' cwnd), which the subflows drain in order as their cwnd allows; a
//!   queued copy whose DSN was DATA_ACKed meanwhile is dropped, and the queue of a failed,
//!   paused or removed subflow is reinjected (see `sched`; BCCPS uses it).
//! * The reordering buffer delivers each DSN once, in order; duplicates (reinjections, redundant
//!   copies) are counted and dropped. Its occupancy is integrated over time, and the time from a
//!   segment's first hand-over to a subflow to its in-order delivery is the application delay.
//!
//! * When the connection window blocks new data, the subflow the scheduler would have used
//!   helps the segment at the DATA_ACK: slower subflows carrying it are penalised (cwnd halved,
//!   once per srtt) and it is retransmitted opportunistically on the faster subflow
//!   (multipath-tcp.org `mptcp_rcv_buf_optimization`, as `__mptcp_next_segment` calls it).
//!
//! Simplifications: no DSS checksum, no ADD_ADDR/REMOVE_ADDR (paths are given), no DATA_FIN
//! (a finite transfer is complete when its last DSN is DATA_ACKed), subflow receivers advertise
//! the connection's window (so subflow-level windows never bind), a bulk application always has
//! data queued (no send-buffer-limited wake-ups), one DSN per subflow segment. An application
//! that writes over time ([`ConnectionData::AppWrites`]) has an unbounded send buffer: its
//! writes never block.

pub mod connection;
pub mod coupling;
pub mod data_sender;
pub mod detect;
pub mod detection;
pub mod receiver;
pub mod reorder;
pub mod sched;
pub mod subflow;
pub mod wire;

pub use connection::{Connection, ConnectionConfig, ConnectionData};

/// Most subflows of one connection: the scenario's limit (seed 003 Ch. 4 opens up to 20 on one
/// path). Per-connection fixed arrays are sized for it.
pub const MAX_SUBFLOWS: usize = rove_scenario::MAX_SUBFLOWS;
/// A set of a connection's subflows, bit `i` for subflow `i` (the top bit is free for a flag).
pub type SubflowMask = u32;
const _: () = assert!(MAX_SUBFLOWS < SubflowMask::BITS as usize);
pub use rove_sim::packet::Packet;
pub use wire::SubflowNet;

