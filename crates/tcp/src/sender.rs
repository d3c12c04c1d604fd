//! The TCP sender, following Linux's tcp_input.c / tcp_output.c / tcp_rate.c / tcp_recovery.c.
//!
//! Per ACK, in the kernel's order (tcp_ack):
//! 1. SACK tagging (tcp_sacktag_write_queue): newly sacked segments are delivered.
//! 2. Cumulative ACK (tcp_clean_rtx_queue): segments below the ACK leave the scoreboard; RTT is
//!    sampled from the oldest of them unless any had been retransmitted (Karn), else from the
//!    oldest newly sacked never-retransmitted one, else from the echoed timestamp
//!    (tcp_ack_update_rtt).
//! 3. Loss detection by RACK (RFC 8985, tcp_recovery.c): a segment is lost when one sent
//!    sufficiently later has been delivered, after a reordering window (0 once three segments
//!    are sacked and no reordering was ever seen, min_rtt/4 otherwise).
//! 4. The congestion state machine (tcp_fastretrans_alert): Open, Disorder, Recovery, Loss.
//!    Then the transmission timer is re-armed (tcp_set_xmit_timer: a loss probe in Open or CWR,
//!    else the RTO) when the ACK advanced snd_una, or sacked data sent before the head's last
//!    transmission, and RACK did not arm its reordering timer.
//! 5. The delivery-rate sample (tcp_rate_gen), then congestion control: the algorithm's
//!    `cong_control`, or PRR (RFC 6937, tcp_cwnd_reduction) during Recovery and `cong_avoid`
//!    otherwise; then the default pacing rate (tcp_update_pacing_rate).
//! 6. Transmission (tcp_xmit_recovery, tcp_write_xmit): lost segments first, then new data,
//!    while packets in flight < cwnd and within the peer's window, paced when the algorithm
//!    asks for pacing.
//!
//! Undo: a reduction is undone when the ACK's echoed timestamp predates the first
//! retransmission of the episode (Eifel detection, tcp_packet_delayed): the original arrived, so
//! the retransmission was spurious (tcp_try_undo_loss after an RTO, tcp_try_undo_recovery at the
//! end of a fast recovery).
//!
//! D-SACK (RFC 2883) reports of duplicates count down the episode's retransmissions
//! (undo_retrans): when all of them prove spurious the reduction is undone as well
//! (tcp_try_undo_dsack), and each D-SACK widens RACK's reordering window by one step of
//! min_rtt/4 for the next 16 recoveries (tcp_rack_update_reo_wnd).
//!
//! Timers: like Linux (icsk_pending), one transmission timer holds the RTO, RACK's reordering
//! timeout or the tail loss probe; arming one replaces the other. Retransmitting the head of
//! the retransmit queue restarts the RTO (tcp_xmit_retransmit_queue), and re-arming the RTO
//! while the timer held a probe or the reordering timeout keeps counting from the head's last
//! transmission (tcp_rearm_rto). Timers are exact to the nanosecond: Linux's are in jiffies
//! (icsk_rto rounded up to 4 ms at HZ = 250, the timer wheel firing up to 1/8 of a long timeout
//! late, the pacing delay added by tcp_reset_xmit_timer) and its reordering timer waits 2
//! jiffies more (TCP_TIMEOUT_MIN).
//!
//! Simplifications, each a place where Linux does more: no TSO/GSO (every segment is sent on its
//! own), no F-RTO, a tail loss probe whose original also arrived still counts as a repaired loss
//! (Linux recognises the D-SACK of the probe), no ECN. The restart of cwnd after idle
//! (tcp_slow_start_after_idle_check) applies only to a sender whose application writes over
//! time ([`TcpSender::set_app_writes`]); a bulk sender is never idle with data to send, and a
//! bulk multipath subflow left unscheduled keeps its cwnd (Linux would restart it). The
//! RFC 2861 decay of an application-limited cwnd (tcp_cwnd_application_limited) is not modelled.
//!
//! An application that writes over time (a video source, a request/response loop) hands its
//! writes to the sender segment by segment ([`TcpSender::feed`]); what tcp_sendmsg does at a
//! write is done there: the app-limited mark (tcp_rate_check_app_limited) and, with the
//! net.ipv4.tcp_slow_start_after_idle sysctl (default 1), the restart of cwnd after an idle
//! period longer than the RTO (tcp_cwnd_restart, tcp_output.c).

use crate::cc::CongestionControl;
use crate::minmax::MinMax;
use crate::rtt::{RttEstimator, RTO_INIT_US};
use crate::state::{
    AckSample, CaEvent, CaState, RateSample, TcpState, TxRecord, CA_ACK_SLOWPATH,
    CA_ACK_WIN_UPDATE, INFINITE_SSTHRESH, INIT_CWND,
};
use crate::{
    ts_ms, DataSource, FedSegments, Handoff, Segments, Timer, Wire, HANDOFF_HISTORY, HEADER_BYTES,
    SYN_BYTES,
};
use rove_sim::histogram::Histogram;
use rove_sim::packet::{Kind, Packet, SeqRange, MAX_SACK_BLOCKS};
use rove_sim::Nanos;
use std::collections::VecDeque;

/// tcp_min_rtt_wlen: the min-RTT filter's window (300 s).
const MIN_RTT_WINDOW_NS: Nanos = 300_000_000_000;
/// tp->reordering default (sysctl_tcp_reordering, TCP_FASTRETRANS_THRESH).
const REORDERING: u32 = 3;
/// The window scale (RFC 7323) the sender takes its peer to announce: a Linux 6.18 receiver's
/// with the default sysctls (tcp_select_initial_window: `ilog2(max(space, tcp_rmem[2],
/// rmem_max)) - 15`, with tcp_rmem[2] = 32 MiB: 10; the kernel backend's SYN-ACKs carry
/// wscale 10). rove's receivers announce none (their packets have no options) and their
/// windows are not rounded to it; the sender reads an ACK's window field as `rwnd >> 10`.
pub const PEER_WSCALE: u32 = crate::rcvbuf::RMEM_MAX.ilog2() - 15;
/// TCP_RACK_RECOVERY_THRESH, include/net/tcp.h: recoveries a widened reo_wnd persists for.
const RACK_RECOVERY_THRESH: u32 = 16;
/// Linux paces only after the first 10 data segments (tcp_update_skb_after_send).
const UNPACED_SEGMENTS: u64 = 10;

// Scoreboard flags (TCPCB_SACKED_ACKED, TCPCB_LOST, TCPCB_SACKED_RETRANS, TCPCB_EVER_RETRANS).
const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;
const EVER_RETRANS: u8 = 8;

/// One outstanding segment: the fields Linux keeps in an skb's control block.
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// Time of the last transmission (skb->skb_mstamp_ns).
    xmit: Nanos,
    /// tcp_rate.c tx state, taken at the last transmission.
    first_tx: Nanos,
    /// 0 once the segment has been counted in a rate sample.
    delivered_mstamp: Nanos,
    delivered: u64,
    /// tp->lost and packets in flight (itself included) at the last transmission (BBRv2's
    /// tx.lost and tx.in_flight).
    lost: u64,
    in_flight: u32,
    app_limited: bool,
    flags: u8,
}

// ACK processing flags (a subset of Linux's FLAG_*).
const FLAG_DATA_ACKED: u32 = 1;
const FLAG_DATA_SACKED: u32 = 2;
const FLAG_SND_UNA_ADVANCED: u32 = 4;
/// Re-arm the transmit timer (loss probe or RTO) after this ACK, unless RACK armed its
/// reordering timer.
const FLAG_SET_XMIT_TIMER: u32 = 8;

/// What the one transmission timer holds (icsk_pending): Linux keeps the RTO, RACK's reordering
/// timeout and the tail loss probe in a single timer, so arming one cancels the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    /// ICSK_TIME_RETRANS: the retransmission timeout (also the SYN's).
    Retrans,
    /// ICSK_TIME_REO_TIMEOUT: RACK's reordering window ends.
    ReoTimeout,
    /// ICSK_TIME_LOSS_PROBE: the tail loss probe.
    LossProbe,
}

impl Pending {
    fn timer(self) -> Timer {
        match self {
            Pending::Retrans => Timer::Rto,
            Pending::ReoTimeout => Timer::Reorder,
            Pending::LossProbe => Timer::LossProbe,
        }
    }
}

/// RACK state (tp->rack).
#[derive(Debug, Clone, Copy, Default)]
struct Rack {
    /// Send time of the most recently sent delivered segment.
    mstamp: Nanos,
    end_seq: u64,
    /// RTT of the last delivered segment, ns.
    rtt_ns: Nanos,
    /// Whether a new segment was delivered since the last loss scan.
    advanced: bool,
    /// Whether reordering has been observed (tp->reord_seen).
    reord_seen: bool,
    /// A D-SACK arrived and reo_wnd should widen (tp->rack.dsack_seen).
    dsack_seen: bool,
    /// Reordering window in units of min_rtt/4 (tp->rack.reo_wnd_steps), at least 1.
    reo_wnd_steps: u32,
    /// Recoveries left before reo_wnd_steps falls back to 1 (tp->rack.reo_wnd_persist).
    reo_wnd_persist: u32,
    /// tp->delivered when reo_wnd last widened: at most one step per round trip.
    last_delivered: u64,
}

/// Counters for results.
#[derive(Debug, Clone, Default)]
pub struct SenderStats {
    /// Segments transmitted, retransmissions included.
    pub segs_sent: u64,
    pub retrans_segs: u64,
    /// Every RTT sample fed to the estimator (a bounded histogram, `rove_sim::histogram`).
    pub rtt: Histogram,
    pub established_at: Option<Nanos>,
    /// Congestion-window reductions undone as spurious (Eifel detection).
    pub undos: u64,
    /// Tail loss probes sent.
    pub loss_probes: u64,
    /// D-SACK blocks received (duplicates the receiver reported).
    pub dsacks: u64,
    /// Time the last byte of a finite flow was acknowledged.
    pub completed_at: Option<Nanos>,
    /// ACKs processed after establishment (Linux's `tcp_ack` calls past its check of the
    /// acknowledged sequence): what MPTCP-SSCC's Data Units count (seed 000 §4.4).
    pub acks: u64,
    /// The newest RTT sample (seq_rtt, as fed to the estimator) and the time it was taken: what a
    /// multipath connection's shared-bottleneck detector reads after each ACK.
    pub last_rtt_sample: Option<(Nanos, Nanos)>,
    /// Congestion windows restarted after idle (tcp_cwnd_restart).
    pub cwnd_restarts: u64,
    /// ACKs that took tcp_ack's fast path (Linux's `TcpExtTCPHPAcks`, LINUX_MIB_TCPHPACKS:
    /// header-predicted and advancing snd_una), and those that took its slow branch
    /// (`TcpExtTCPPureAcks`: every ACK here carries no data); see `ack_path`. Their sum is
    /// `acks` less the ACKs below snd_una (tcp_ack's `old_ack`, counted by neither).
    pub hp_acks: u64,
    pub pure_acks: u64,
}

pub struct TcpSender {
    pub tp: TcpState,
    pub cc: Box<dyn CongestionControl>,
    /// The byte stream of a single-path flow, or the write queue a multipath connection or an
    /// application feeds.
    source: DataSource,
    /// The application writes over time: a write does what tcp_sendmsg does (see the module
    /// documentation); false for bulk flows and the subflows of a bulk multipath flow.
    app_writes: bool,
    /// net.ipv4.tcp_slow_start_after_idle (Linux default 1), for a sender with `app_writes`.
    slow_start_after_idle: bool,
    /// A multipath connection's subflow ([`set_mptcp_subflow`](Self::set_mptcp_subflow)): never
    /// marked application-limited.
    mptcp_subflow: bool,
    /// End of the write queue: segments `[snd_nxt, total_segs)` may be sent as new data.
    total_segs: u64,
    /// Outstanding segments; index 0 is `tp.snd_una`.
    board: VecDeque<Seg>,
    rtt: RttEstimator,
    min_rtt: MinMax,
    rack: Rack,
    /// RTO backoff exponent (icsk_backoff) and expirations since progress (icsk_retransmits).
    backoff: u32,
    retransmits: u32,
    /// The transmission timer: what it holds and when it fires (icsk_pending, icsk_timeout).
    xmit_timer: Option<(Pending, Nanos)>,
    /// snd_nxt when the outstanding loss probe was sent (tp->tlp_high_seq).
    tlp_high_seq: Option<u64>,
    /// Whether that probe was a retransmission (tp->tlp_retrans).
    tlp_retrans: bool,
    /// TS value of the first retransmission of the current episode (tp->retrans_stamp).
    retrans_stamp: Option<u32>,
    /// Echoed timestamp of the ACK being processed (tp->rx_opt.rcv_tsecr).
    rcv_tsecr: u32,
    /// The peer's latest timestamp (tp->rx_opt.ts_recent), echoed on every segment so that the
    /// receiver can measure its RTT (tcp_rcv_rtt_measure_ts).
    ts_recent: u32,
    /// Earliest time the next segment may leave (tp->tcp_wstamp_ns).
    pace_next: Nanos,
    data_segs_out: u64,
    established: bool,
    syn_sent_at: Nanos,
    syn_retransmitted: bool,
    /// Peer's advertised window, in segments (the send limit: every ACK's window).
    peer_window_segs: u64,
    /// Header prediction's state (tcp_ack_update_window, tcp_fast_path_on): tp->snd_wnd, the
    /// window tcp_may_update_window last accepted (bytes, the field scaled by
    /// [`PEER_WSCALE`]), and the window field tp->pred_flags predicts (`None`: prediction off).
    hp_snd_wnd: u64,
    hp_pred_field: Option<u64>,
    prr_delivered: u32,
    prr_out: u32,
    undo_marker: bool,
    /// snd_una when the episode began (tp->undo_marker's sequence).
    undo_marker_seq: u64,
    /// Retransmissions of the episode not yet shown spurious by D-SACK; -1: none sent
    /// (tp->undo_retrans).
    undo_retrans: i64,
    /// Segments reported duplicated by D-SACK, ever (tp->dsack_dups).
    dsack_dups: u64,
    /// Lowest sequence that may be lost and not yet retransmitted (retransmit_skb_hint).
    retrans_hint: u64,
    /// Highest sacked sequence + 1, or snd_una (tp->highest_sack, for reordering detection).
    fack: u64,
    /// SACK blocks of the previous ACK, already processed (tp->recv_sack_cache).
    sack_cache: [SeqRange; MAX_SACK_BLOCKS],
    /// The delivery-rate sample of the last ACK (what `cong_control` saw).
    pub last_rate_sample: RateSample,
    pub stats: SenderStats,
    /// The last (cwnd, RTT) samples, for the delay-scaled handoff (read only on a switch).
    handoff_history: HandoffHistory,
}

/// A fixed ring of the last [`HANDOFF_HISTORY`] (cwnd in packets, RTT in µs) pairs: one per ACK
/// that carries an RTT sample, with the cwnd in force when the ACK arrived.
#[derive(Debug, Clone, Copy)]
struct HandoffHistory {
    samples: [(u32, u64); HANDOFF_HISTORY],
    next: usize,
    len: usize,
}

impl Default for HandoffHistory {
    fn default() -> Self {
        HandoffHistory {
            samples: [(0, 0); HANDOFF_HISTORY],
            next: 0,
            len: 0,
        }
    }
}

impl HandoffHistory {
    fn push(&mut self, cwnd: u32, rtt_us: u64) {
        self.samples[self.next] = (cwnd, rtt_us);
        self.next = (self.next + 1) % HANDOFF_HISTORY;
        self.len = (self.len + 1).min(HANDOFF_HISTORY);
    }

    /// Eq. 6.3: sCWND·Dmin/sD over the last `n` samples (fewer if fewer were recorded), at least
    /// 2 packets; None without samples or without a min RTT.
    fn delay_scaled_cwnd(&self, n: usize, min_rtt_us: u64) -> Option<u32> {
        let n = n.min(self.len);
        if n == 0 || min_rtt_us == u64::MAX {
            return None;
        }
        let (mut cwnds, mut rtts) = (0u64, 0u64);
        for k in 1..=n {
            let (c, r) = self.samples[(self.next + HANDOFF_HISTORY - k) % HANDOFF_HISTORY];
            cwnds += c as u64;
            rtts += r;
        }
        // (Σcwnd/n)·Dmin/(Σrtt/n): the n cancels.
        Some((cwnds * min_rtt_us / rtts.max(1)).clamp(2, u32::MAX as u64) as u32)
    }
}

impl TcpSender {
    /// A single-path sender of `segments`.
    pub fn new(cc: Box<dyn CongestionControl>, segments: Segments) -> Self {
        Self::with_source(cc, DataSource::Stream(segments))
    }

    /// A multipath subflow's sender: it sends only what [`feed`](Self::feed) hands it.
    pub fn new_fed(cc: Box<dyn CongestionControl>) -> Self {
        Self::with_source(cc, DataSource::Fed(FedSegments::default()))
    }

    fn with_source(cc: Box<dyn CongestionControl>, source: DataSource) -> Self {
        let total_segs = match &source {
            DataSource::Stream(s) => s.count(),
            DataSource::Fed(f) => f.end(),
        };
        let mut min_rtt = MinMax::default();
        min_rtt.reset(0, u64::MAX); // tcp_init_sock: minmax_reset(&tp->rtt_min, ..., ~0U)
        TcpSender {
            tp: TcpState::default(),
            cc,
            source,
            app_writes: false,
            mptcp_subflow: false,
            slow_start_after_idle: false,
            total_segs,
            board: VecDeque::with_capacity(256),
            rtt: RttEstimator::default(),
            min_rtt,
            rack: Rack {
                reo_wnd_steps: 1,
                ..Rack::default()
            },
            backoff: 0,
            retransmits: 0,
            xmit_timer: None,
            tlp_high_seq: None,
            tlp_retrans: false,
            retrans_stamp: None,
            rcv_tsecr: 0,
            ts_recent: 0,
            pace_next: 0,
            data_segs_out: 0,
            established: false,
            syn_sent_at: 0,
            syn_retransmitted: false,
            peer_window_segs: 10,
            hp_snd_wnd: 0,
            hp_pred_field: None,
            prr_delivered: 0,
            prr_out: 0,
            undo_marker: false,
            undo_marker_seq: 0,
            undo_retrans: -1,
            dsack_dups: 0,
            retrans_hint: 0,
            fack: 0,
            sack_cache: [SeqRange::default(); MAX_SACK_BLOCKS],
            last_rate_sample: RateSample::default(),
            stats: SenderStats::default(),
            handoff_history: HandoffHistory::default(),
        }
    }

    /// A sender fed by an application that writes over time (`rove_world`'s video and
    /// request/response workloads): each write marks the connection app-limited when nothing
    /// else is queued (tcp_rate_check_app_limited), and with `slow_start_after_idle`
    /// (net.ipv4.tcp_slow_start_after_idle, default 1) restarts cwnd after an idle period
    /// longer than the RTO (tcp_slow_start_after_idle_check, include/net/tcp.h).
    pub fn set_app_writes(&mut self, slow_start_after_idle: bool) {
        self.app_writes = true;
        self.slow_start_after_idle = slow_start_after_idle;
    }

    /// Marks this fed sender as a multipath connection's subflow. Linux runs
    /// tcp_rate_check_app_limited only from tcp_sendmsg on the socket the application writes
    /// to (the MPTCP socket); neither upstream MPTCP (net/mptcp) nor multipath-tcp.org's
    /// kernel runs it on a subflow, so a subflow's rate samples are never app-limited. Without
    /// this, a subflow the scheduler feeds one segment at a time would find its write queue
    /// empty after every segment and mark every sample app-limited (BBR then never leaves
    /// Startup: it needs three non-app-limited rounds without growth).
    pub fn set_mptcp_subflow(&mut self) {
        self.mptcp_subflow = true;
    }

    /// Appends one segment of `payload` bytes to a fed sender's write queue (a multipath
    /// scheduler's hand-over, or an application's write), at `now`; it leaves at the next
    /// [`push`](Self::push) that cwnd, the peer's window and pacing allow. Returns its sequence
    /// number. Panics on a sender of its own byte stream.
    pub fn feed(&mut self, payload: u32, now: Nanos) -> u64 {
        if self.app_writes && self.unsent_segs() == 0 {
            // tcp_sendmsg_locked: tcp_rate_check_app_limited with less than a segment unsent,
            // then tcp_skb_entail's tcp_slow_start_after_idle_check for the new segment.
            self.tp.now = now;
            if !self.mptcp_subflow {
                self.check_app_limited();
            }
            if self.slow_start_after_idle && self.established {
                self.slow_start_after_idle_check();
            }
        }
        let DataSource::Fed(f) = &mut self.source else {
            panic!("feed() on a sender of its own byte stream")
        };
        let seq = f.end();
        f.push(payload);
        self.total_segs = f.end();
        seq
    }

    /// tcp_slow_start_after_idle_check (include/net/tcp.h): nothing in flight, the algorithm
    /// does not control cwnd itself (BBR's cong_control does), and the last transmission is
    /// more than one RTO ago.
    fn slow_start_after_idle_check(&mut self) {
        if self.tp.packets_out > 0 || self.cc.has_cong_control() {
            return;
        }
        let idle_ns = self.tp.now.saturating_sub(self.tp.lsndtime);
        if idle_ns > self.rto_ns() {
            self.cwnd_restart(idle_ns);
        }
    }

    /// tcp_cwnd_restart (tcp_output.c; RFC 2861, RFC 5681 §4.1): ssthresh keeps the current
    /// window's 3/4, and cwnd halves once per RTO of idleness beyond the first, down to the
    /// restart window min(TCP_INIT_CWND, cwnd).
    fn cwnd_restart(&mut self, idle_ns: Nanos) {
        self.cc.cwnd_event(&mut self.tp, CaEvent::CwndRestart);
        self.tp.snd_ssthresh = self.tp.current_ssthresh();
        let restart_cwnd = INIT_CWND.min(self.tp.snd_cwnd);
        let mut cwnd = self.tp.snd_cwnd;
        let rto = self.rto_ns() as i128;
        let mut delta = idle_ns as i128;
        loop {
            delta -= rto;
            if delta <= 0 || cwnd <= restart_cwnd {
                break;
            }
            cwnd >>= 1;
        }
        self.tp.snd_cwnd = cwnd.max(restart_cwnd);
        self.stats.cwnd_restarts += 1;
    }

    /// Segments handed over (or written) but not yet sent once.
    pub fn unsent_segs(&self) -> u64 {
        self.total_segs.saturating_sub(self.tp.snd_nxt)
    }

    /// RTO expirations since the last forward progress (icsk_retransmits): a multipath
    /// connection takes a subflow with expirations as potentially failed.
    pub fn rto_expirations(&self) -> u32 {
        self.retransmits
    }

    /// Linux's tp->rttvar_us: the RTO's variance term (about 4·RTTVAR, never below the 200 ms
    /// minimum within an RTT window), µs. ECF reads it.
    pub fn rttvar_us(&self) -> u64 {
        self.rtt.rttvar_us
    }

    pub fn is_complete(&self) -> bool {
        self.stats.completed_at.is_some()
    }

    pub fn is_established(&self) -> bool {
        self.established
    }

    /// Opens the connection: sends the SYN and arms the SYN timer (TCP_TIMEOUT_INIT).
    pub fn start<W: Wire>(&mut self, w: &mut W) {
        self.syn_sent_at = w.now();
        self.send_syn(w);
    }

    fn send_syn<W: Wire>(&mut self, w: &mut W) {
        let now = w.now();
        w.transmit(Packet {
            kind: Kind::Syn,
            wire_bytes: SYN_BYTES,
            sent_at: now,
            tsval: ts_ms(now),
            ..Default::default()
        });
        let at = now + ((RTO_INIT_US * 1000) << self.backoff.min(6));
        self.reset_xmit_timer(Pending::Retrans, at, w);
    }

    /// A packet from the receiver arrived.
    pub fn on_packet<W: Wire>(&mut self, p: &Packet, w: &mut W) {
        if self.is_complete() {
            return;
        }
        self.tp.now = w.now();
        match p.kind {
            Kind::SynAck if !self.established => self.on_established(p, w),
            Kind::Ack => {
                if self.established {
                    self.on_ack(p, w);
                }
            }
            _ => {}
        }
    }

    fn on_established<W: Wire>(&mut self, p: &Packet, w: &mut W) {
        let now = w.now();
        self.established = true;
        self.stats.established_at = Some(now);
        self.peer_window_segs = p.rwnd_bytes / self.tp.mss_cache as u64;
        // tcp_rcv_synsent_state_process: the SYN-ACK's window is never scaled; then
        // tcp_finish_connect turns header prediction off when the peer scales its window
        // (pred_flags = 0) until tcp_ack_update_window first sees the window change.
        self.hp_snd_wnd = p.rwnd_bytes.min(u16::MAX as u64);
        self.hp_pred_field = None;
        self.ts_recent = p.tsval;
        // The SYN-ACK gives the first RTT sample unless the SYN was retransmitted (Karn).
        if !self.syn_retransmitted {
            self.rtt_sample(now - self.syn_sent_at, now - self.syn_sent_at);
        }
        self.backoff = 0;
        self.xmit_timer = None;
        if self.app_writes {
            // tcp_init_transfer: the idle clock starts at the establishment.
            self.tp.lsndtime = now;
        }
        self.cc.init(&mut self.tp);
        if !self.cc.has_cong_control() {
            self.update_pacing_rate();
        }
        self.push(w);
    }

    pub fn on_timer<W: Wire>(&mut self, timer: Timer, w: &mut W) {
        if self.is_complete() {
            return;
        }
        let now = w.now();
        self.tp.now = now;
        match timer {
            Timer::Pacing => {
                if self.pace_next > now {
                    w.arm(Timer::Pacing, self.pace_next);
                } else {
                    self.push(w);
                }
                return;
            }
            Timer::DelayedAck | Timer::Scheduler | Timer::Receiver => return,
            _ => {}
        }
        // tcp_write_timer_handler: a callback for what the timer no longer holds is stale.
        match self.xmit_timer {
            Some((what, at)) if what.timer() == timer => {
                if at > now {
                    w.arm(timer, at);
                    return;
                }
                match what {
                    Pending::Retrans => {
                        self.xmit_timer = None; // icsk_pending = 0
                        self.on_rto(w);
                    }
                    // These handlers re-arm the timer themselves, deciding by what it held.
                    Pending::ReoTimeout => self.on_reorder_timeout(w),
                    Pending::LossProbe => self.send_loss_probe(w),
                }
            }
            _ => {}
        }
    }

    // ---------------------------------------------------------------------------------------
    // ACK processing

    fn on_ack<W: Wire>(&mut self, p: &Packet, w: &mut W) {
        let now = w.now();
        if p.ack > self.tp.snd_nxt {
            return; // acks data never sent: ignore (Linux: tcp_ack returns -SKB_DROP_REASON_TCP_ACK_UNSENT_DATA)
        }
        self.stats.acks += 1;
        self.peer_window_segs = p.rwnd_bytes / self.tp.mss_cache as u64;
        self.rcv_tsecr = p.tsecr;
        // tcp_store_ts_recent; a pure sender sees ACKs only, their timestamps never go back.
        self.ts_recent = self.ts_recent.max(p.tsval);
        let prior_snd_una = self.tp.snd_una;
        let prior_delivered = self.tp.delivered;
        let prior_lost = self.tp.lost;
        let mut rs = RateSample {
            prior_in_flight: self.tp.packets_in_flight(),
            rtt_ns: -1,
            ..Default::default()
        };
        let mut flag = 0;
        // RTT candidates: (oldest, newest) send times of newly delivered, never-retransmitted segments.
        let mut acked_times: Option<(Nanos, Nanos)> = None;
        let mut sacked_times: Option<(Nanos, Nanos)> = None;

        // tcp_ack's prior_fack: the highest sacked sequence before this ACK (snd_una when
        // nothing is sacked), against which a filled hole is judged to be reordering.
        let prior_fack = if self.tp.sacked_out > 0 {
            self.fack
        } else {
            self.tp.snd_una
        };
        let mut blocks = p.sack_blocks();
        if self.check_dsack(blocks, p.ack, prior_snd_una) {
            blocks = &blocks[1..];
        }
        if !blocks.is_empty() {
            flag |= self.sacktag(blocks, &mut rs, &mut sacked_times);
        }
        // tcp_rcv_established's header prediction and tcp_ack's two branches, for the flags of
        // tcp_in_ack_event below.
        let ack_flags = self.ack_path(p, prior_snd_una);
        // FLAG_RETRANS_DATA_ACKED: a cum-acked segment had been retransmitted.
        let mut retrans_acked = false;
        let pkts_acked = if p.ack > self.tp.snd_una {
            self.clean_rtx_queue(
                p.ack,
                prior_fack,
                &mut rs,
                &mut acked_times,
                &mut retrans_acked,
            )
        } else {
            0
        };
        if pkts_acked > 0 {
            flag |= FLAG_DATA_ACKED | FLAG_SND_UNA_ADVANCED;
            self.retransmits = 0;
        }

        // tcp_clean_rtx_queue / tcp_ack_update_rtt: srtt from the oldest newly cum-acked
        // segment, unless any cum-acked segment had been retransmitted (Karn); else from the
        // oldest newly sacked one; else, when the ACK advances snd_una, from the echoed
        // timestamp (RFC 7323 RTTM; at least 1 ms). min RTT and rs.rtt from the newest
        // (newly sacked if any, else cum-acked).
        let acked_times = if retrans_acked { None } else { acked_times };
        let sack_rtt = sacked_times.map(|(oldest, _)| now - oldest);
        let mut seq_rtt = acked_times.map(|(oldest, _)| now - oldest).or(sack_rtt);
        let mut ca_rtt = sacked_times.or(acked_times).map(|(_, newest)| now - newest);
        if seq_rtt.is_none() && pkts_acked > 0 && self.rcv_tsecr != 0 {
            let delta = ts_ms(now).wrapping_sub(self.rcv_tsecr) as i32;
            if delta >= 0 {
                let rtt = delta.max(1) as Nanos * 1_000_000;
                seq_rtt = Some(rtt);
                ca_rtt = Some(rtt);
            }
        }
        if let (Some(seq_rtt), Some(ca_rtt)) = (seq_rtt, ca_rtt) {
            self.rtt_sample(seq_rtt, ca_rtt);
            rs.rtt_ns = ca_rtt as i64;
            self.handoff_history.push(self.tp.snd_cwnd, ca_rtt / 1000);
        }
        // tcp_clean_rtx_queue calls pkts_acked on every ACK, with the newest RTT sample.
        let sample = AckSample {
            pkts_acked,
            rtt_us: if rs.rtt_ns >= 0 { rs.rtt_ns / 1000 } else { -1 },
            in_flight: (self.tp.mss_cache as u64
                * (self.tp.delivered - rs.prior_delivered.min(self.tp.delivered)))
                as u32,
        };
        self.cc.pkts_acked(&mut self.tp, &sample);
        // tcp_ack: tcp_in_ack_event after tcp_clean_rtx_queue (snd_una advanced, pkts_acked
        // called) and before tcp_process_tlp_ack, since upstream commit 149dfb31615e, "tcp: reorganize
        // tcp_in_ack_event() and tcp_count_delivered()" (2025, in the 6.18 this machine runs; before it,
        // in_ack_event ran ahead of the retransmission queue's cleaning).
        if let Some(flags) = ack_flags {
            self.cc.in_ack_event(&mut self.tp, flags);
        }
        if pkts_acked > 0 {
            flag |= FLAG_SET_XMIT_TIMER;
        } else if let (Some(sack_rtt), Some(head)) = (sack_rtt, self.board.front()) {
            // tcp_clean_rtx_queue: a SACK-only ACK whose RTT sample comes from data sent before
            // the head's last (re)transmission re-arms the timer too (data sent after it must
            // not, or the timeout could keep extending in loss recovery).
            if sack_rtt > now - head.xmit {
                flag |= FLAG_SET_XMIT_TIMER;
            }
        }
        if let Some(high) = self.tlp_high_seq {
            self.process_tlp_ack(p.ack, high, flag);
        }
        self.check_complete(now);
        if self.is_complete() {
            return;
        }
        self.rack_update_reo_wnd(&rs);

        let dubious = flag & FLAG_DATA_ACKED == 0
            || flag & FLAG_DATA_SACKED != 0
            || self.tp.ca_state != CaState::Open;
        if dubious {
            self.fastretrans_alert(&mut flag, w);
        }
        // tcp_ack: "reset TLP/RTO timer when RACK doesn't set" (RACK's reordering timer, armed
        // in fastretrans_alert, clears the flag).
        if flag & FLAG_SET_XMIT_TIMER != 0 {
            self.set_xmit_timer(w);
        }

        let delivered = (self.tp.delivered - prior_delivered) as u32;
        let newly_lost = (self.tp.lost - prior_lost) as u32;
        self.rate_gen(delivered, newly_lost, &mut rs);
        self.cong_control(prior_snd_una, delivered, newly_lost, flag, &rs);
        self.last_rate_sample = rs;
        self.push(w);
    }

    /// Which path `p` takes through Linux 6.18's receive code (net/ipv4/tcp_input.c), and the
    /// flags tcp_in_ack_event passes to `in_ack_event` (`None` for an ACK below snd_una, which
    /// tcp_ack hands to `old_ack` before any of this: no counter, no in_ack_event).
    ///
    /// - **Header prediction** (tcp_rcv_established): an ACK takes the fast path when its flag
    ///   word matches tp->pred_flags (`(tcp_flag_word(th) & TCP_HP_BITS) == tp->pred_flags`:
    ///   the header length of a timestamps-only header, so no SACK or D-SACK option; only ACK
    ///   among the flags, PSH aside; and the window field tp->pred_flags holds), its sequence
    ///   is rcv_nxt (always, from a receiver that sends no data) and its timestamp passes PAWS
    ///   (rove's receivers' timestamps never go back). It is then `tcp_ack(sk, skb, 0)`; every
    ///   other ACK is `tcp_ack(sk, skb, FLAG_SLOWPATH | FLAG_UPDATE_TS_RECENT)`.
    /// - **pred_flags** (tcp_fast_path_on: header length, ACK, `snd_wnd >> snd_wscale`) is
    ///   zeroed by tcp_finish_connect when the peer scales its window, and set again only in
    ///   tcp_ack_update_window, "the only place where fast path is recovered for sending
    ///   TCP": when tcp_may_update_window accepts the ACK's window (it advances snd_una, or
    ///   the window grew or is zero, since a receiver that sends no data never advances
    ///   snd_wl1) and that window differs from tp->snd_wnd. The other places that zero it
    ///   (out-of-order data, urgent data, a full receive buffer, a zero window from us) concern
    ///   the sender's own receive side, idle here.
    /// - **tcp_ack**: `(flag & (FLAG_SLOWPATH | FLAG_SND_UNA_ADVANCED)) ==
    ///   FLAG_SND_UNA_ADVANCED` is the fast branch (LINUX_MIB_TCPHPACKS, FLAG_WIN_UPDATE);
    ///   everything else the slow branch (LINUX_MIB_TCPPUREACKS for an ACK without data),
    ///   which calls tcp_ack_update_window (FLAG_WIN_UPDATE when it accepts the window).
    /// - **tcp_in_ack_event** (since commit 149dfb31615e, "tcp: reorganize tcp_in_ack_event()
    ///   and tcp_count_delivered()"): `CA_ACK_WIN_UPDATE` for FLAG_WIN_UPDATE,
    ///   `CA_ACK_SLOWPATH` for FLAG_SLOWPATH, i.e. for every ACK header prediction refused. A
    ///   header-predicted ACK that does not advance snd_una (a duplicate ACK without SACK and
    ///   with the same window) gets neither.
    ///
    /// The window field is the ACK's window in units of 2^[`PEER_WSCALE`] bytes.
    fn ack_path(&mut self, p: &Packet, prior_snd_una: u64) -> Option<u32> {
        if p.ack < prior_snd_una {
            return None;
        }
        let field = (p.rwnd_bytes >> PEER_WSCALE).min(u16::MAX as u64);
        let nwin = field << PEER_WSCALE;
        let predicted = p.sack_len == 0 && self.hp_pred_field == Some(field);
        let advanced = p.ack > prior_snd_una;
        if predicted && advanced {
            self.stats.hp_acks += 1;
            return Some(CA_ACK_WIN_UPDATE);
        }
        self.stats.pure_acks += 1;
        // tcp_ack_update_window / tcp_may_update_window (ack_seq == snd_wl1).
        let mut flags = 0;
        if advanced || nwin > self.hp_snd_wnd || nwin == 0 {
            flags |= CA_ACK_WIN_UPDATE;
            if self.hp_snd_wnd != nwin {
                self.hp_snd_wnd = nwin;
                // tp->pred_flags = 0; tcp_fast_path_check(sk).
                self.hp_pred_field = Some(field);
            }
        }
        if !predicted {
            flags |= CA_ACK_SLOWPATH;
        }
        Some(flags)
    }

    /// tcp_check_dsack: is the first block a D-SACK (below the cumulative ACK, or inside the
    /// second block)? If so, count the duplicates against the episode's retransmissions.
    fn check_dsack(&mut self, blocks: &[SeqRange], ack: u64, prior_snd_una: u64) -> bool {
        let Some(&first) = blocks.first() else {
            return false;
        };
        let is_dsack = first.start < ack
            || blocks
                .get(1)
                .is_some_and(|second| first.start >= second.start && first.end <= second.end);
        if !is_dsack || first.end <= first.start {
            return false;
        }
        // tcp_dsack_seen: ignore D-SACKs for more duplicates than were ever retransmitted.
        let dup_segs = first.end - first.start;
        self.dsack_dups += dup_segs;
        if self.dsack_dups > self.tp.total_retrans {
            return true;
        }
        self.stats.dsacks += 1;
        self.rack.dsack_seen = true;
        if self.undo_marker && self.undo_retrans > 0 {
            if first.end <= prior_snd_una {
                // Already acked and forgotten: dumb counting.
                if first.end > self.undo_marker_seq {
                    self.undo_retrans = (self.undo_retrans - dup_segs as i64).max(0);
                }
            } else {
                // Still on the scoreboard: count retransmitted segments only.
                for seq in first.start.max(self.tp.snd_una)..first.end.min(self.tp.snd_nxt) {
                    let f = self.board[(seq - self.tp.snd_una) as usize].flags;
                    if f & EVER_RETRANS != 0
                        && seq + 1 > self.undo_marker_seq
                        && self.undo_retrans > 0
                    {
                        self.undo_retrans -= 1;
                    }
                }
            }
        }
        true
    }

    /// tcp_rack_update_reo_wnd: widen the reordering window once per round trip after a
    /// D-SACK; fall back to one step when the widening has expired.
    fn rack_update_reo_wnd(&mut self, rs: &RateSample) {
        if rs.prior_delivered == 0 {
            return;
        }
        if rs.prior_delivered < self.rack.last_delivered {
            self.rack.dsack_seen = false;
        }
        if self.rack.dsack_seen {
            self.rack.reo_wnd_steps = (self.rack.reo_wnd_steps + 1).min(0xFF);
            self.rack.dsack_seen = false;
            self.rack.last_delivered = self.tp.delivered;
            self.rack.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if self.rack.reo_wnd_persist == 0 {
            self.rack.reo_wnd_steps = 1;
        }
    }

    /// tcp_sacktag_write_queue: marks newly sacked segments. Returns FLAG_DATA_SACKED if any.
    fn sacktag(
        &mut self,
        blocks: &[SeqRange],
        rs: &mut RateSample,
        times: &mut Option<(Nanos, Nanos)>,
    ) -> u32 {
        let mut flag = 0;
        let cache = self.sack_cache;
        for b in blocks {
            let start = b.start.max(self.tp.snd_una);
            let end = b.end.min(self.tp.snd_nxt);
            if start >= end {
                continue;
            }
            // Skip the part an identical or overlapping block of the previous ACK already tagged.
            let mut pieces = [(start, end), (0, 0)];
            if let Some(c) = cache.iter().find(|c| c.start < end && start < c.end) {
                pieces = [(start, end.min(c.start)), (start.max(c.end), end)];
            }
            for (s, e) in pieces {
                for seq in s..e {
                    if self.tag_one_sacked(seq, rs, times) {
                        flag |= FLAG_DATA_SACKED;
                    }
                }
            }
        }
        self.sack_cache = [SeqRange::default(); MAX_SACK_BLOCKS];
        self.sack_cache[..blocks.len()].copy_from_slice(blocks);
        flag
    }

    /// tcp_sacktag_one for segment `seq`. Returns whether it was newly sacked.
    fn tag_one_sacked(
        &mut self,
        seq: u64,
        rs: &mut RateSample,
        times: &mut Option<(Nanos, Nanos)>,
    ) -> bool {
        let i = (seq - self.tp.snd_una) as usize;
        let seg = self.board[i];
        if seg.flags & SACKED != 0 {
            return false;
        }
        let mut flags = seg.flags;
        if flags & LOST != 0 {
            flags &= !LOST;
            self.tp.lost_out -= 1;
        }
        if flags & RETRANS != 0 {
            flags &= !RETRANS;
            self.tp.retrans_out -= 1;
        }
        flags |= SACKED;
        self.board[i].flags = flags;
        self.tp.sacked_out += 1;
        self.tp.delivered += 1;
        if seg.flags & EVER_RETRANS == 0 {
            // tcp_check_sack_reordering: a never-retransmitted segment below the highest
            // sacked one arrived late, so the path reorders.
            if seq < self.fack {
                self.rack.reord_seen = true;
            }
            note_time(times, seg.xmit);
        }
        self.fack = self.fack.max(seq + 1);
        self.rate_skb_delivered(seq, i, rs);
        self.rack_advance(seg, seq + 1);
        true
    }

    /// tcp_clean_rtx_queue: removes cumulatively acked segments. Returns how many.
    fn clean_rtx_queue(
        &mut self,
        ack: u64,
        prior_fack: u64,
        rs: &mut RateSample,
        times: &mut Option<(Nanos, Nanos)>,
        retrans_acked: &mut bool,
    ) -> u32 {
        // The segments below `ack` leave the scoreboard in one pass: their counts are summed
        // in locals and applied once after it (nothing in the pass reads them), so the loop
        // reads each segment and keeps its state in registers.
        let una = self.tp.snd_una;
        let acked = ack.saturating_sub(una) as usize;
        let (now, min_rtt_us) = (self.tp.now, self.tp.min_rtt_us);
        // The lowest newly acked segment that was neither sacked nor ever retransmitted.
        let mut reord = u64::MAX;
        let (mut sacked, mut delivered, mut lost, mut retrans, mut bytes) =
            (0u32, 0u64, 0u32, 0u32, 0u64);
        for (k, seg) in self.board.range(..acked).enumerate() {
            let seq = una + k as u64;
            if seg.flags & (RETRANS | EVER_RETRANS) != 0 {
                *retrans_acked = true;
            }
            if seg.flags & SACKED != 0 {
                sacked += 1;
            } else {
                delivered += 1;
                take_rate_sample(seg, seq, &mut self.tp.first_tx_mstamp, rs);
                if seg.flags & EVER_RETRANS == 0 {
                    reord = reord.min(seq);
                    note_time(times, seg.xmit);
                }
                self.rack.advance(seg, seq + 1, now, min_rtt_us);
            }
            if seg.flags & LOST != 0 {
                lost += 1;
            }
            if seg.flags & RETRANS != 0 {
                retrans += 1;
            }
            bytes += self.source.payload(seq) as u64;
        }
        self.board.drain(..acked);
        let tp = &mut self.tp;
        tp.sacked_out -= sacked;
        tp.delivered += delivered;
        tp.lost_out -= lost;
        tp.retrans_out -= retrans;
        tp.packets_out -= acked as u32;
        tp.bytes_acked += bytes;
        tp.snd_una += acked as u64;
        self.fack = self.fack.max(self.tp.snd_una);
        // "Non-retransmitted hole got filled? That's reordering" — judged against the highest
        // sack *before* this ACK: an ACK that cum-acks the segment below a fresh loss and sacks
        // the one above it (the receiver's immediate ACK on the first out-of-order arrival) is
        // not reordering (tcp_clean_rtx_queue, tcp_check_sack_reordering).
        let fack_now = if self.tp.sacked_out > 0 {
            self.fack
        } else {
            self.tp.snd_una
        };
        if reord < prior_fack && reord < fack_now {
            self.rack.reord_seen = true;
        }
        self.retrans_hint = self.retrans_hint.max(self.tp.snd_una);
        if let DataSource::Fed(f) = &mut self.source {
            f.release_below(self.tp.snd_una);
        }
        acked as u32
    }

    fn rtt_sample(&mut self, seq_rtt: Nanos, ca_rtt: Nanos) {
        let now = self.tp.now;
        // tcp_update_rtt_min
        self.tp.min_rtt_us =
            self.min_rtt
                .running_min(MIN_RTT_WINDOW_NS, now, (ca_rtt / 1000).max(1));
        self.rtt
            .sample(seq_rtt / 1000, self.tp.snd_una, self.tp.snd_nxt);
        self.tp.srtt_us = self.rtt.srtt_us();
        self.tp.mdev_us4 = self.rtt.mdev_us4;
        self.backoff = 0; // RFC 6298: reset backoff on a valid RTT measurement
        self.stats.rtt.record(seq_rtt);
        self.stats.last_rtt_sample = Some((now, seq_rtt));
    }

    fn check_complete(&mut self, now: Nanos) {
        if matches!(self.source, DataSource::Fed(_)) {
            return; // a fed subflow's queue runs dry between hand-overs: not the end
        }
        if self.tp.snd_una >= self.total_segs && self.stats.completed_at.is_none() {
            self.stats.completed_at = Some(now);
            self.xmit_timer = None;
        }
    }

    // ---------------------------------------------------------------------------------------
    // Delivery-rate sampling (tcp_rate.c)

    /// tcp_rate_skb_sent: snapshot the delivery state into the segment being sent.
    fn rate_skb_sent(&mut self, i: usize, now: Nanos) {
        if self.tp.packets_out == 0 {
            self.tp.first_tx_mstamp = now;
            self.tp.delivered_mstamp = now;
        }
        // Called before the segment is counted in flight: tcp_set_tx_in_flight adds it.
        let in_flight = self.tp.packets_in_flight() + 1;
        let seg = &mut self.board[i];
        seg.first_tx = self.tp.first_tx_mstamp;
        seg.delivered_mstamp = self.tp.delivered_mstamp;
        seg.delivered = self.tp.delivered;
        seg.lost = self.tp.lost;
        seg.in_flight = in_flight;
        seg.app_limited = self.tp.app_limited != 0;
    }

    /// tcp_rate_skb_delivered for board entry `i` (segment `seq`): see [`take_rate_sample`];
    /// the entry is then marked processed, so a sacked segment is not sampled again when
    /// cum-acked.
    fn rate_skb_delivered(&mut self, seq: u64, i: usize, rs: &mut RateSample) {
        take_rate_sample(&self.board[i], seq, &mut self.tp.first_tx_mstamp, rs);
        self.board[i].delivered_mstamp = 0;
    }

    /// tcp_rate_gen: finish the rate sample of this ACK.
    fn rate_gen(&mut self, delivered: u32, lost: u32, rs: &mut RateSample) {
        let tp = &mut self.tp;
        if tp.app_limited != 0 && tp.delivered > tp.app_limited {
            tp.app_limited = 0;
        }
        if delivered > 0 {
            tp.delivered_mstamp = tp.now;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        rs.lost = tp.lost.saturating_sub(rs.prior_lost);
        if rs.prior_mstamp == 0 {
            rs.delivered = -1;
            rs.interval_ns = -1;
            return;
        }
        rs.delivered = (tp.delivered - rs.prior_delivered) as i64;
        let snd = rs.interval_ns;
        let ack = (tp.now - rs.prior_mstamp) as i64;
        rs.interval_ns = snd.max(ack);
        rs.snd_interval_ns = snd;
        rs.rcv_interval_ns = ack;
        // An interval shorter than min_rtt means ACK compression or a stretched sample: unusable.
        if tp.min_rtt_us != u64::MAX && rs.interval_ns < (tp.min_rtt_us * 1000) as i64 {
            rs.interval_ns = -1;
            return;
        }
        // Keep the sample for tcp_info unless it is app-limited and slower than the kept one.
        if !rs.is_app_limited
            || (rs.delivered as u128) * (tp.rate_interval_ns as u128)
                >= (tp.rate_delivered as u128) * (rs.interval_ns as u128)
        {
            tp.rate_delivered = rs.delivered as u64;
            tp.rate_interval_ns = rs.interval_ns as u64;
            tp.rate_app_limited = rs.is_app_limited;
        }
    }

    /// tcp_rate_check_app_limited: the application has nothing more to send.
    fn check_app_limited(&mut self) {
        let tp = &mut self.tp;
        if tp.packets_in_flight() < tp.snd_cwnd && tp.lost_out <= tp.retrans_out {
            tp.app_limited = (tp.delivered + tp.packets_in_flight() as u64).max(1);
        }
    }

    // ---------------------------------------------------------------------------------------
    // RACK (tcp_recovery.c)

    fn rack_advance(&mut self, seg: Seg, end_seq: u64) {
        self.rack
            .advance(&seg, end_seq, self.tp.now, self.tp.min_rtt_us);
    }

    /// tcp_rack_reo_wnd.
    fn rack_reo_wnd(&self) -> Nanos {
        if !self.rack.reord_seen
            && (self.tp.ca_state >= CaState::Recovery || self.tp.sacked_out >= REORDERING)
        {
            return 0;
        }
        if self.tp.min_rtt_us == u64::MAX {
            return 0;
        }
        ((self.tp.min_rtt_us / 4) * 1000 * self.rack.reo_wnd_steps as u64).min(self.tp.srtt_ns())
    }

    /// tcp_rack_detect_loss: marks segments lost; returns the longest remaining wait (0: none).
    fn rack_detect_loss(&mut self) -> Nanos {
        let reo_wnd = self.rack_reo_wnd();
        let now = self.tp.now;
        let mut wait = 0;
        let mut from = 0;
        while let Some(i) = self.next_rack_candidate(from) {
            from = i + 1;
            let seg = self.board[i];
            let seq = self.tp.snd_una + i as u64;
            let sent_before_rack = self.rack.mstamp > seg.xmit
                || (self.rack.mstamp == seg.xmit && self.rack.end_seq > seq + 1);
            if !sent_before_rack {
                if seg.flags & EVER_RETRANS == 0 {
                    break; // every later never-retransmitted segment was sent later still
                }
                continue;
            }
            let remaining = (seg.xmit + self.rack.rtt_ns + reo_wnd) as i128 - now as i128;
            if remaining <= 0 {
                self.mark_lost(i, seq);
            } else {
                wait = wait.max(remaining as Nanos);
            }
        }
        wait
    }

    /// The first segment at or after board index `from` that RACK may mark lost: neither
    /// sacked nor already lost and waiting for its retransmission. In recovery most of the
    /// board is sacked; this skips those runs reading one flag byte per segment over the
    /// ring's two contiguous halves, instead of indexing the ring entry by entry.
    #[inline]
    fn next_rack_candidate(&self, from: usize) -> Option<usize> {
        let candidate =
            |s: &Seg| s.flags & SACKED == 0 && (s.flags & LOST == 0 || s.flags & RETRANS != 0);
        let (a, b) = self.board.as_slices();
        if from < a.len() {
            if let Some(k) = a[from..].iter().position(candidate) {
                return Some(from + k);
            }
        }
        let start = from.max(a.len()) - a.len();
        b.get(start..)?
            .iter()
            .position(candidate)
            .map(|k| a.len() + start + k)
    }

    /// tcp_rack_mark_lost: run detection if something new was delivered; arm the reorder timer
    /// in the transmission timer's place. Returns whether it did.
    fn rack_mark_lost<W: Wire>(&mut self, w: &mut W) -> bool {
        if !self.rack.advanced {
            return false;
        }
        self.rack.advanced = false;
        let wait = self.rack_detect_loss();
        if wait > 0 {
            // Linux adds TCP_TIMEOUT_MIN (2 jiffies); we wait exactly the remaining time.
            let at = self.tp.now + wait;
            self.reset_xmit_timer(Pending::ReoTimeout, at, w);
        }
        wait > 0
    }

    /// tcp_identify_packet_loss (RACK): a reordering timer armed by this ACK takes the place of
    /// the loss probe or RTO the ACK would have re-armed.
    fn identify_packet_loss<W: Wire>(&mut self, flag: &mut u32, w: &mut W) {
        if self.board.is_empty() {
            return;
        }
        if self.rack_mark_lost(w) {
            *flag &= !FLAG_SET_XMIT_TIMER;
        }
    }

    /// tcp_mark_skb_lost; tells the algorithm (skb_marked_lost) when the segment is newly
    /// counted as lost.
    fn mark_lost(&mut self, i: usize, seq: u64) {
        let flags = self.board[i].flags;
        if flags & SACKED != 0 {
            return;
        }
        if flags & LOST != 0 {
            if flags & RETRANS == 0 {
                return; // already lost, not yet retransmitted
            }
            // A retransmission lost again.
            self.board[i].flags &= !RETRANS;
            self.tp.retrans_out -= 1;
        } else {
            self.board[i].flags |= LOST;
            self.tp.lost_out += 1;
        }
        self.tp.lost += 1;
        self.retrans_hint = self.retrans_hint.min(seq);
        let seg = self.board[i];
        let tx = TxRecord {
            delivered: seg.delivered,
            lost: seg.lost,
            in_flight: seg.in_flight,
            is_app_limited: seg.app_limited,
            end_seq: seq + 1,
        };
        self.cc.skb_marked_lost(&mut self.tp, &tx);
    }

    /// tcp_rack_reo_timeout: mark what has waited long enough lost and retransmit it, then
    /// re-arm the RTO (segments still inside the window wait for the next ACK).
    fn on_reorder_timeout<W: Wire>(&mut self, w: &mut W) {
        let prior_in_flight = self.tp.packets_in_flight();
        let prior_lost = self.tp.lost;
        self.rack_detect_loss();
        if self.tp.packets_in_flight() != prior_in_flight {
            if self.tp.ca_state != CaState::Recovery {
                self.enter_recovery();
                if !self.cc.has_cong_control() {
                    let newly_lost = (self.tp.lost - prior_lost) as u32;
                    self.cwnd_reduction(1, newly_lost, 0);
                }
            }
            self.push(w);
        }
        if !matches!(self.xmit_timer, Some((Pending::Retrans, _))) {
            self.rearm_rto(w);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Congestion state machine (tcp_fastretrans_alert and friends)

    fn set_ca_state(&mut self, state: CaState) {
        self.cc.set_state(&mut self.tp, state);
        self.tp.ca_state = state;
    }

    fn fastretrans_alert<W: Wire>(&mut self, ack_flag: &mut u32, w: &mut W) {
        let flag = *ack_flag;
        if self.tp.packets_out == 0 && self.tp.sacked_out > 0 {
            self.tp.sacked_out = 0;
        }
        // D. Exit conditions: the episode ends when everything sent before it is acked.
        if self.tp.ca_state == CaState::Open {
            if self.tp.retrans_out == 0 {
                self.retrans_stamp = None;
            }
        } else if self.tp.snd_una >= self.tp.high_seq {
            match self.tp.ca_state {
                CaState::Cwr if self.tp.snd_una != self.tp.high_seq => {
                    self.end_cwnd_reduction();
                    self.set_ca_state(CaState::Open);
                }
                CaState::Recovery => {
                    self.try_undo_recovery();
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        // E. Process the state.
        match self.tp.ca_state {
            CaState::Recovery => {
                if self.try_undo_dsack() {
                    self.try_keep_open();
                }
                self.identify_packet_loss(ack_flag, w);
            }
            CaState::Loss => {
                // tcp_process_loss
                if flag & FLAG_SND_UNA_ADVANCED != 0 && self.try_undo_loss() {
                    return;
                }
                if self.tp.snd_una >= self.tp.high_seq {
                    self.try_undo_recovery();
                    return;
                }
                self.identify_packet_loss(ack_flag, w);
            }
            _ => {
                if self.tp.ca_state <= CaState::Disorder {
                    self.try_undo_dsack();
                }
                self.identify_packet_loss(ack_flag, w);
                if self.tp.lost_out == 0 {
                    self.try_to_open();
                    return;
                }
                self.enter_recovery();
            }
        }
    }

    /// tcp_try_to_open.
    fn try_to_open(&mut self) {
        if self.tp.retrans_out == 0 {
            self.retrans_stamp = None;
        }
        if self.tp.ca_state != CaState::Cwr {
            self.try_keep_open();
        }
    }

    /// tcp_try_keep_open: Disorder while anything is sacked, lost or retransmitted, else Open.
    fn try_keep_open(&mut self) {
        let state = if self.tp.sacked_out + self.tp.lost_out > 0 || self.tp.retrans_out > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.tp.ca_state != state {
            self.set_ca_state(state);
            self.tp.high_seq = self.tp.snd_nxt;
        }
    }

    /// tcp_packet_delayed: the ACK echoes a timestamp older than the first retransmission, so
    /// it was triggered by an original transmission.
    fn packet_delayed(&self) -> bool {
        self.retrans_stamp
            .is_some_and(|stamp| self.rcv_tsecr != 0 && self.rcv_tsecr < stamp)
    }

    /// tcp_may_undo: every retransmission of the episode was D-SACKed, or the ACK was
    /// triggered by an original transmission.
    fn may_undo(&self) -> bool {
        self.undo_marker && (self.undo_retrans == 0 || self.packet_delayed())
    }

    /// tcp_try_undo_dsack: all retransmissions of the episode proved unnecessary.
    fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker && self.undo_retrans == 0 {
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// tcp_init_undo.
    fn init_undo(&mut self) {
        self.undo_marker = true;
        self.undo_marker_seq = self.tp.snd_una;
        self.undo_retrans = if self.tp.retrans_out > 0 {
            self.tp.retrans_out as i64
        } else {
            -1
        };
    }

    /// tcp_try_undo_recovery: at the end of Recovery or Loss, undo if it proved spurious; Open.
    fn try_undo_recovery(&mut self) {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        } else if self.rack.reo_wnd_persist > 0 {
            self.rack.reo_wnd_persist -= 1;
        }
        self.set_ca_state(CaState::Open);
    }

    /// tcp_try_undo_loss: an ACK during Loss shows the timeout was spurious.
    fn try_undo_loss(&mut self) -> bool {
        if !self.may_undo() {
            return false;
        }
        self.undo_cwnd_reduction(true);
        self.retransmits = 0;
        self.set_ca_state(CaState::Open);
        true
    }

    /// tcp_undo_cwnd_reduction: restore cwnd and ssthresh from before the episode.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for seg in self.board.iter_mut() {
                seg.flags &= !LOST;
            }
            self.tp.lost_out = 0;
            self.retrans_hint = self.tp.snd_nxt;
        }
        if self.tp.prior_ssthresh > 0 {
            self.tp.snd_cwnd = self.cc.undo_cwnd(&self.tp);
            if self.tp.prior_ssthresh > self.tp.snd_ssthresh {
                self.tp.snd_ssthresh = self.tp.prior_ssthresh;
            }
        }
        self.undo_marker = false;
        self.rack.advanced = true; // re-examine losses
        self.stats.undos += 1;
    }

    /// tcp_enter_recovery.
    fn enter_recovery(&mut self) {
        self.tp.prior_ssthresh = 0;
        self.init_undo();
        if !self.tp.in_cwnd_reduction() {
            self.tp.prior_ssthresh = self.tp.current_ssthresh();
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
    }

    /// tcp_enter_cwr: a reduction the algorithm asked for (no loss); PRR then brings cwnd down
    /// to the new ssthresh over the next round, as in Recovery.
    fn enter_cwr(&mut self) {
        self.tp.prior_ssthresh = 0;
        if self.tp.ca_state < CaState::Cwr {
            self.undo_marker = false;
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
        }
    }

    /// tcp_init_cwnd_reduction.
    fn init_cwnd_reduction(&mut self) {
        self.tp.high_seq = self.tp.snd_nxt;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
    }

    /// tcp_end_cwnd_reduction: cwnd = ssthresh at the end of Recovery or CWR.
    fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        if self.tp.snd_ssthresh < INFINITE_SSTHRESH
            && (self.tp.ca_state == CaState::Cwr || self.undo_marker)
        {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// tcp_cwnd_reduction: Proportional Rate Reduction (RFC 6937) with the SSRB bound.
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, flag: u32) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        let tp = &mut self.tp;
        let delta = tp.snd_ssthresh as i64 - tp.packets_in_flight() as i64;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend =
                tp.snd_ssthresh as u64 * self.prr_delivered as u64 + tp.prior_cwnd as u64 - 1;
            (dividend / tp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut s =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if flag & FLAG_SND_UNA_ADVANCED != 0 && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        tp.snd_cwnd = (tp.packets_in_flight() as i64 + sndcnt).max(1) as u32;
    }

    /// tcp_cong_control.
    fn cong_control(
        &mut self,
        _prior_snd_una: u64,
        acked_sacked: u32,
        newly_lost: u32,
        flag: u32,
        rs: &RateSample,
    ) {
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.tp, rs);
            return;
        }
        if self.tp.in_cwnd_reduction() {
            self.cwnd_reduction(acked_sacked, newly_lost, flag);
        } else if flag & FLAG_DATA_ACKED != 0 {
            // tcp_may_raise_cwnd (no reordering above the default): grow on in-order delivery.
            self.cc.cong_avoid(&mut self.tp, acked_sacked);
            if self.tp.enter_cwr {
                self.tp.enter_cwr = false;
                self.enter_cwr();
            }
        }
        self.update_pacing_rate();
    }

    /// tcp_update_pacing_rate: 200 % of cwnd/srtt in slow start, 120 % after
    /// (sysctl_tcp_pacing_ss_ratio, sysctl_tcp_pacing_ca_ratio).
    fn update_pacing_rate(&mut self) {
        let tp = &mut self.tp;
        let ratio: u64 = if tp.snd_cwnd < tp.snd_ssthresh / 2 {
            200
        } else {
            120
        };
        let cwnd = tp.snd_cwnd.max(tp.packets_out) as u64;
        let srtt_us = tp.srtt_us.max(1);
        tp.pacing_rate = tp.mss_cache as u64 * cwnd * ratio * 10_000 / srtt_us;
    }

    // ---------------------------------------------------------------------------------------
    // Timeouts

    /// inet_csk_reset_xmit_timer: the one transmission timer now holds `what`, firing at `at`.
    fn reset_xmit_timer<W: Wire>(&mut self, what: Pending, at: Nanos, w: &mut W) {
        self.xmit_timer = Some((what, at));
        w.arm(what.timer(), at);
    }

    /// The RTO from now (tcp_reset_xmit_timer(ICSK_TIME_RETRANS, icsk_rto)).
    fn arm_rto<W: Wire>(&mut self, w: &mut W) {
        let at = self.tp.now + self.rtt.rto_ns(self.backoff);
        self.reset_xmit_timer(Pending::Retrans, at, w);
    }

    /// tcp_rearm_rto: the RTO from now; but when the timer held the reordering timeout or a loss
    /// probe, the RTO keeps counting from the head's last transmission (tcp_rto_delta_us), at
    /// least 1 µs ahead. No data outstanding: the timer is cleared.
    fn rearm_rto<W: Wire>(&mut self, w: &mut W) {
        let Some(head) = self.board.front() else {
            self.xmit_timer = None;
            return;
        };
        let now = self.tp.now;
        let rto = self.rtt.rto_ns(self.backoff);
        let at = match self.xmit_timer {
            Some((Pending::ReoTimeout | Pending::LossProbe, _)) => {
                (head.xmit + rto).max(now + 1_000)
            }
            _ => now + rto,
        };
        self.reset_xmit_timer(Pending::Retrans, at, w);
    }

    /// tcp_set_xmit_timer: a loss probe if one may be scheduled, else the RTO.
    fn set_xmit_timer<W: Wire>(&mut self, w: &mut W) {
        if !self.schedule_loss_probe(true, w) {
            self.rearm_rto(w);
        }
    }

    /// tcp_retransmit_timer.
    fn on_rto<W: Wire>(&mut self, w: &mut W) {
        if !self.established {
            self.syn_retransmitted = true;
            self.backoff += 1;
            self.send_syn(w);
            return;
        }
        if self.tp.packets_out == 0 {
            return;
        }
        self.enter_loss();
        self.backoff += 1;
        self.retransmits += 1;
        // Retransmit the head now, whatever cwnd and pacing say (tcp_retransmit_skb).
        self.retransmit(0, w);
        self.arm_rto(w);
        self.push(w);
    }

    /// tcp_enter_loss (with tcp_timeout_mark_lost).
    fn enter_loss(&mut self) {
        let now = self.tp.now;
        let rack_rtt = self.rack.rtt_ns;
        for i in 0..self.board.len() {
            // With RACK, recently sent segments are not yet deemed lost, the head always is.
            if i > 0 && rack_rtt > 0 && self.board[i].xmit + rack_rtt > now {
                continue;
            }
            let seq = self.tp.snd_una + i as u64;
            self.mark_lost(i, seq);
        }
        let state = self.tp.ca_state;
        if state <= CaState::Disorder
            || self.tp.high_seq <= self.tp.snd_una
            || (state == CaState::Loss && self.retransmits == 0)
        {
            self.tp.prior_ssthresh = self.tp.current_ssthresh();
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
            self.init_undo();
        }
        self.tp.snd_cwnd = self.tp.packets_in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.set_ca_state(CaState::Loss);
        self.tp.high_seq = self.tp.snd_nxt;
        self.tlp_high_seq = None;
    }

    // ---------------------------------------------------------------------------------------
    // Transmission (tcp_xmit_retransmit_queue, tcp_write_xmit)

    /// Sends what cwnd, the peer's window and pacing allow: lost segments first, then new data.
    pub fn push<W: Wire>(&mut self, w: &mut W) {
        if !self.established || self.is_complete() {
            return;
        }
        let now = w.now();
        self.tp.now = now;
        let mut sent = 0;
        let mut cwnd_limited = false;
        let mut rearm_timer = false;
        loop {
            if self.tp.pacing_needed && self.pace_next > now {
                w.arm(Timer::Pacing, self.pace_next);
                break;
            }
            if self.tp.packets_in_flight() >= self.tp.snd_cwnd {
                cwnd_limited = true;
                break;
            }
            if self.tp.lost_out > self.tp.retrans_out {
                if let Some(i) = self.next_lost() {
                    self.retransmit(i, w);
                    sent += 1;
                    // tcp_xmit_retransmit_queue: retransmitting the head restarts the RTO,
                    // unless the timer holds RACK's reordering timeout.
                    if i == 0 && !matches!(self.xmit_timer, Some((Pending::ReoTimeout, _))) {
                        rearm_timer = true;
                    }
                    continue;
                }
            }
            if self.tp.snd_nxt >= self.total_segs {
                if !self.mptcp_subflow {
                    self.check_app_limited();
                }
                break;
            }
            if self.tp.snd_nxt - self.tp.snd_una >= self.peer_window_segs.max(1) {
                break;
            }
            self.send_new(w);
            sent += 1;
        }
        if rearm_timer {
            self.arm_rto(w);
        }
        if sent > 0 {
            // One loss probe per tail-loss episode (tcp_write_xmit).
            self.schedule_loss_probe(false, w);
        }
        if sent > 0 || cwnd_limited {
            self.cwnd_validate(cwnd_limited);
        }
    }

    /// The first segment marked lost and not retransmitted, from the retransmit hint on.
    fn next_lost(&mut self) -> Option<usize> {
        let from = (self.retrans_hint.max(self.tp.snd_una) - self.tp.snd_una) as usize;
        for i in from..self.board.len() {
            let f = self.board[i].flags;
            if f & LOST != 0 && f & (SACKED | RETRANS) == 0 {
                self.retrans_hint = self.tp.snd_una + i as u64;
                return Some(i);
            }
        }
        self.retrans_hint = self.tp.snd_nxt;
        None
    }

    fn send_new<W: Wire>(&mut self, w: &mut W) {
        let now = self.tp.now;
        let seq = self.tp.snd_nxt;
        if self.tp.packets_in_flight() == 0 {
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        self.board.push_back(Seg {
            xmit: now,
            first_tx: 0,
            delivered_mstamp: 0,
            delivered: 0,
            lost: 0,
            in_flight: 0,
            app_limited: false,
            flags: 0,
        });
        let i = self.board.len() - 1;
        self.rate_skb_sent(i, now);
        let had_packets_out = self.tp.packets_out > 0;
        self.tp.snd_nxt += 1;
        self.tp.packets_out += 1;
        self.emit(seq, false, w);
        // tcp_event_new_data_sent
        if !had_packets_out || matches!(self.xmit_timer, Some((Pending::LossProbe, _))) {
            self.rearm_rto(w);
        }
    }

    fn retransmit<W: Wire>(&mut self, i: usize, w: &mut W) {
        let now = self.tp.now;
        let seq = self.tp.snd_una + i as u64;
        self.rate_skb_sent(i, now);
        let seg = &mut self.board[i];
        seg.xmit = now;
        if seg.flags & RETRANS == 0 {
            self.tp.retrans_out += 1;
        }
        seg.flags |= RETRANS | EVER_RETRANS;
        self.tp.total_retrans += 1;
        if self.retrans_stamp.is_none() {
            self.retrans_stamp = Some(ts_ms(now));
        }
        self.undo_retrans = self.undo_retrans.max(0) + 1;
        self.stats.retrans_segs += 1;
        self.emit(seq, true, w);
    }

    /// Puts segment `seq` on the wire and does the per-transmission bookkeeping.
    fn emit<W: Wire>(&mut self, seq: u64, retrans: bool, w: &mut W) {
        let now = self.tp.now;
        let payload = self.source.payload(seq);
        self.cc.on_segment_sent(&self.tp, seq, payload, retrans);
        let wire_bytes = payload + HEADER_BYTES;
        w.transmit(Packet {
            kind: Kind::Segment,
            seq,
            payload_bytes: payload,
            wire_bytes,
            sent_at: now,
            tsval: ts_ms(now),
            tsecr: self.ts_recent,
            ..Default::default()
        });
        self.stats.segs_sent += 1;
        self.data_segs_out += 1;
        self.tp.lsndtime = now;
        if self.tp.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        // tcp_update_skb_after_send: advance the pacing clock by this segment's share. Linux
        // counts skb->len of the write-queue skb, the payload (headers go on the clone).
        if self.tp.pacing_needed
            && self.tp.pacing_rate > 0
            && self.data_segs_out >= UNPACED_SEGMENTS
        {
            let len_ns = payload as u64 * 1_000_000_000 / self.tp.pacing_rate;
            self.pace_next = self.pace_next.max(now) + len_ns;
        }
        self.tp.tcp_wstamp_ns = self.pace_next;
    }

    /// tcp_cwnd_validate: remember whether this window was cwnd-limited.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let tp = &mut self.tp;
        if tp.snd_una >= tp.cwnd_usage_seq
            || is_cwnd_limited
            || (!tp.is_cwnd_limited && tp.packets_out > tp.max_packets_out)
        {
            tp.is_cwnd_limited = is_cwnd_limited;
            tp.max_packets_out = tp.packets_out;
            tp.cwnd_usage_seq = tp.snd_nxt;
        }
    }

    // ---------------------------------------------------------------------------------------
    // Tail loss probe (RFC 8985 §7; tcp_schedule_loss_probe, tcp_send_loss_probe,
    // tcp_process_tlp_ack)

    /// Arms the probe timeout (PTO) in place of the RTO when the connection is in Open or CWR
    /// with data outstanding: 2·srtt, plus TCP_RTO_MIN when a single packet is out (its ACK may
    /// be delayed) or TCP_TIMEOUT_MIN (2 ms) otherwise; never later than the RTO would fire.
    fn schedule_loss_probe<W: Wire>(&mut self, advancing_rto: bool, w: &mut W) -> bool {
        let tp = &self.tp;
        if tp.packets_out == 0 || !matches!(tp.ca_state, CaState::Open | CaState::Cwr) {
            return false;
        }
        let mut timeout = if tp.srtt_us > 0 {
            2 * tp.srtt_ns()
                + if tp.packets_out == 1 {
                    crate::rtt::RTO_MIN_US * 1000
                } else {
                    2_000_000
                }
        } else {
            RTO_INIT_US * 1000
        };
        let rto = self.rtt.rto_ns(self.backoff);
        let rto_delta = if advancing_rto {
            rto as i128
        } else {
            // tcp_rto_delta_us: time left until the head's RTO.
            let head_sent = self.board.front().map_or(tp.now, |s| s.xmit);
            rto as i128 - (tp.now - head_sent) as i128
        };
        if rto_delta > 0 {
            timeout = timeout.min(rto_delta as Nanos);
        }
        let at = tp.now + timeout;
        self.reset_xmit_timer(Pending::LossProbe, at, w);
        true
    }

    /// The probe timer fired: send one new segment if the window allows, else retransmit the
    /// highest outstanding one, whatever cwnd says. Then re-arm the RTO.
    fn send_loss_probe<W: Wire>(&mut self, w: &mut W) {
        if self.tlp_high_seq.is_none() && self.tp.packets_out > 0 {
            let can_send_new = self.tp.snd_nxt < self.total_segs
                && self.tp.snd_nxt - self.tp.snd_una < self.peer_window_segs.max(1);
            self.tlp_retrans = !can_send_new;
            if can_send_new {
                self.send_new(w);
            } else {
                // __tcp_retransmit_skb of the tail: marked ever-retransmitted, not counted in
                // retrans_out and not starting an undo episode.
                let i = self.board.len() - 1;
                let now = self.tp.now;
                let seq = self.tp.snd_una + i as u64;
                self.rate_skb_sent(i, now);
                self.board[i].xmit = now;
                self.board[i].flags |= EVER_RETRANS;
                self.tp.total_retrans += 1;
                self.stats.retrans_segs += 1;
                self.emit(seq, true, w);
            }
            self.tlp_high_seq = Some(self.tp.snd_nxt);
            self.stats.loss_probes += 1;
            // "Reset s.t. tcp_rearm_rto will restart timer from now."
            self.xmit_timer = None;
        }
        // Without a probe sent (one is outstanding) the RTO keeps counting from the head's
        // transmission (tcp_rearm_rto while the timer held the probe).
        self.rearm_rto(w);
    }

    /// tcp_process_tlp_ack, without DSACK: once the ACK passes the probe's snd_nxt, a
    /// retransmitted probe is taken to have repaired a loss and cwnd is reduced once (CWR).
    fn process_tlp_ack(&mut self, ack: u64, high: u64, flag: u32) {
        if ack < high {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_high_seq = None;
        } else if ack > high {
            self.tlp_high_seq = None;
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open();
        } else if flag & (FLAG_SND_UNA_ADVANCED | FLAG_DATA_ACKED | FLAG_DATA_SACKED) == 0 {
            self.tlp_high_seq = None;
        }
    }

    // ---------------------------------------------------------------------------------------
    // Observation

    /// The live congestion-control algorithm's name.
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    /// Switches the congestion control mid-connection, as `setsockopt(TCP_CONGESTION)` does
    /// (tcp_cong.c: tcp_set_congestion_control → tcp_reinit_congestion_control): the new
    /// algorithm starts from fresh private state, `prior_ssthresh` is cleared (no undo across
    /// the switch), and, on an established connection, its `init` runs on the live socket state
    /// (cwnd, ssthresh, RTT estimates and delivery counters carry over). Then `handoff` applies.
    pub fn set_congestion_control(&mut self, cc: Box<dyn CongestionControl>, handoff: Handoff) {
        self.cc.release(&mut self.tp);
        self.cc = cc;
        self.tp.prior_ssthresh = 0;
        if self.established {
            self.cc.init(&mut self.tp);
            if !self.cc.has_cong_control() {
                self.update_pacing_rate();
            }
        }
        match handoff {
            Handoff::Keep => {}
            Handoff::Set { cwnd, ssthresh } => {
                self.tp.snd_cwnd = cwnd.min(self.tp.snd_cwnd_clamp);
                if let Some(ss) = ssthresh {
                    self.tp.snd_ssthresh = ss;
                }
            }
            Handoff::DelayScaled { samples } => {
                // Without an RTT sample yet there is nothing to scale: as `keep`.
                if let Some(cwnd) = self
                    .handoff_history
                    .delay_scaled_cwnd(samples as usize, self.tp.min_rtt_us)
                {
                    self.tp.snd_cwnd = cwnd.min(self.tp.snd_cwnd_clamp);
                    self.tp.snd_ssthresh = self.tp.snd_cwnd;
                }
            }
        }
    }

    /// The algorithm's mode for the time series.
    pub fn cc_mode(&self) -> &'static str {
        self.cc.mode(&self.tp)
    }

    pub fn rto_ns(&self) -> Nanos {
        self.rtt.rto_ns(self.backoff)
    }

    /// What the transmission timer holds (the RTO, RACK's reordering timeout or the loss
    /// probe, as a [`Timer`]) and when it fires; None when it is not armed.
    pub fn xmit_timer(&self) -> Option<(Timer, Nanos)> {
        self.xmit_timer.map(|(what, at)| (what.timer(), at))
    }
}

/// tcp_rate_skb_delivered: the most recently sent delivered segment provides the sample
/// (`seg`, segment `seq`; `first_tx_mstamp` is the sender's `tp.first_tx_mstamp`). A segment
/// already counted in a sample (`delivered_mstamp` 0) gives nothing.
#[inline]
fn take_rate_sample(seg: &Seg, seq: u64, first_tx_mstamp: &mut Nanos, rs: &mut RateSample) {
    if seg.delivered_mstamp == 0 {
        return;
    }
    let sent_after = |t1: Nanos, t2: Nanos, s1: u64, s2: u64| t1 > t2 || (t1 == t2 && s1 > s2);
    if rs.prior_delivered == 0 && rs.prior_mstamp == 0
        || sent_after(seg.xmit, *first_tx_mstamp, seq + 1, rs.last_end_seq)
    {
        rs.prior_delivered = seg.delivered;
        rs.prior_mstamp = seg.delivered_mstamp;
        rs.is_app_limited = seg.app_limited;
        rs.is_retrans = seg.flags & EVER_RETRANS != 0;
        rs.last_end_seq = seq + 1;
        rs.prior_lost = seg.lost;
        rs.tx_in_flight = seg.in_flight;
        *first_tx_mstamp = seg.xmit;
        rs.interval_ns = (seg.xmit - seg.first_tx) as i64;
    }
}

impl Rack {
    /// tcp_rack_advance: segment `seg` (ending at `end_seq`) was delivered at `now`; the
    /// sender's min RTT is `min_rtt_us` (u64::MAX: none yet).
    #[inline]
    fn advance(&mut self, seg: &Seg, end_seq: u64, now: Nanos, min_rtt_us: u64) {
        let rtt = now - seg.xmit;
        // An ambiguous (retransmitted) segment with an implausibly short RTT says nothing.
        if seg.flags & EVER_RETRANS != 0 && min_rtt_us != u64::MAX && rtt < min_rtt_us * 1000 {
            return;
        }
        self.advanced = true;
        self.rtt_ns = rtt;
        if seg.xmit > self.mstamp || (seg.xmit == self.mstamp && end_seq > self.end_seq) {
            self.mstamp = seg.xmit;
            self.end_seq = end_seq;
        }
    }
}

/// Widens (oldest, newest) to include send time `t`.
fn note_time(times: &mut Option<(Nanos, Nanos)>, t: Nanos) {
    *times = Some(match *times {
        None => (t, t),
        Some((a, b)) => (a.min(t), b.max(t)),
    });
}

#[cfg(test)]
mod handoff_tests {
    use super::HandoffHistory;

    #[test]
    fn delay_scaled_cwnd_is_the_theses_worked_example() {
        // seed-002 §2.7: sCWND = 100, sD = 150 ms, Dmin = 60 ms → 100/(150/60) = 40 segments.
        let mut h = HandoffHistory::default();
        for (c, r) in [(90, 140_000), (110, 160_000), (100, 150_000)] {
            for _ in 0..2 {
                h.push(c, r);
            }
        }
        h.push(100, 150_000); // 7 samples: means 100 packets and 150 ms
        assert_eq!(h.delay_scaled_cwnd(7, 60_000), Some(40));
    }

    #[test]
    fn delay_scaled_cwnd_averages_only_the_last_samples_of_the_ring() {
        let mut h = HandoffHistory::default();
        assert_eq!(h.delay_scaled_cwnd(7, 60_000), None, "no samples: keep");
        for _ in 0..100 {
            h.push(1000, 600_000); // old samples, pushed out of the ring or out of the window
        }
        for _ in 0..7 {
            h.push(100, 150_000);
        }
        assert_eq!(h.delay_scaled_cwnd(7, 60_000), Some(40));
        // 8 samples: one old one in: (7·100 + 1000)·60/(7·150 + 600) = 61.8 → 61.
        assert_eq!(h.delay_scaled_cwnd(8, 60_000), Some(61));
        // Fewer recorded than asked: the mean of what there is; at least 2 packets.
        let mut h = HandoffHistory::default();
        h.push(3, 150_000);
        assert_eq!(h.delay_scaled_cwnd(7, 60_000), Some(2));
        assert_eq!(h.delay_scaled_cwnd(7, u64::MAX), None, "no min RTT");
    }
}
