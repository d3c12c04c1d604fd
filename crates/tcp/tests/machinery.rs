//! The sender's Linux machinery driven packet by packet through a scripted wire: RACK timing,
//! spurious-RTO undo, app-limited marking, tail loss probes.

use rove_sim::packet::{Kind, Packet, SeqRange};
use rove_sim::Nanos;
use rove_tcp::cc::{build, CcConfig};
use rove_tcp::sender::TcpSender;
use rove_tcp::state::CaState;
use rove_tcp::{ts_ms, Segments, Timer, Wire};

const MS: Nanos = 1_000_000;

#[derive(Default)]
struct Script {
    now: Nanos,
    sent: Vec<(Nanos, Packet)>,
    timers: Vec<(Timer, Nanos)>,
}

impl Wire for Script {
    fn now(&self) -> Nanos {
        self.now
    }
    fn transmit(&mut self, p: Packet) {
        self.sent.push((self.now, p));
    }
    fn arm(&mut self, t: Timer, at: Nanos) {
        self.timers.push((t, at));
    }
}

impl Script {
    /// Data segments sent at or after `from`, as (time, seq).
    fn segments_since(&self, from: Nanos) -> Vec<(Nanos, u64)> {
        self.sent
            .iter()
            .filter(|(t, p)| *t >= from && p.kind == Kind::Segment)
            .map(|(t, p)| (*t, p.seq))
            .collect()
    }
    /// When the most recently armed reordering timer fires.
    fn reorder_deadline(&self) -> Nanos {
        self.timers
            .iter()
            .rev()
            .find(|(t, _)| *t == Timer::Reorder)
            .expect("reorder timer armed")
            .1
    }
    /// Fires every armed timer of kind `kind` due at or before `until`, in time order.
    fn fire(&mut self, s: &mut TcpSender, kind: Timer, at: Nanos) {
        self.now = at;
        s.on_timer(kind, self);
    }
}

fn reno(size_bytes: Option<u64>) -> TcpSender {
    let p = toml::Table::new();
    let cc = build("reno", &CcConfig::new(&p, 1)).unwrap().unwrap();
    TcpSender::new(cc, Segments { size_bytes })
}

/// Opens the connection with a 40 ms handshake RTT: the sender then has sent its initial
/// window of 10 segments at t = 40 ms.
fn established(size_bytes: Option<u64>) -> (TcpSender, Script) {
    let mut s = reno(size_bytes);
    let mut w = Script::default();
    s.start(&mut w);
    w.now = 40 * MS;
    let syn_ack = Packet {
        kind: Kind::SynAck,
        rwnd_bytes: 6 << 20,
        tsecr: ts_ms(0),
        ..Default::default()
    };
    s.on_packet(&syn_ack, &mut w);
    (s, w)
}

fn ack(ack: u64, sack: &[SeqRange], tsecr: u32) -> Packet {
    let mut p = Packet {
        kind: Kind::Ack,
        ack,
        rwnd_bytes: 6 << 20,
        tsecr,
        ..Default::default()
    };
    p.sack[..sack.len()].copy_from_slice(sack);
    p.sack_len = sack.len() as u8;
    p
}

#[test]
fn initial_window_is_ten_segments_after_the_handshake() {
    let (s, w) = established(None);
    assert_eq!(w.segments_since(0).len(), 10);
    assert_eq!(s.tp.srtt_us, 40_000);
    assert_eq!(s.tp.min_rtt_us, 40_000);
}

#[test]
fn rack_marks_a_loss_one_reordering_window_after_a_later_packet_is_acked() {
    let (mut s, mut w) = established(None);
    // At 80 ms segment 1 is sacked, segment 0 is not: one SACKed segment, no reordering seen,
    // so RACK waits the reordering window min_rtt/4 = 10 ms before calling 0 lost.
    w.now = 80 * MS;
    s.on_packet(
        &ack(0, &[SeqRange { start: 1, end: 2 }], ts_ms(40 * MS)),
        &mut w,
    );
    assert!(
        w.segments_since(80 * MS).iter().all(|&(_, seq)| seq != 0),
        "no retransmission yet"
    );
    let reo = w.reorder_deadline();
    // Segment 0 was sent at 40 ms; RACK's RTT is 40 ms; deadline 40 + 40 + 10 = 90 ms.
    assert_eq!(reo, 90 * MS);
    w.fire(&mut s, Timer::Reorder, reo);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert!(
        w.segments_since(90 * MS).contains(&(90 * MS, 0)),
        "segment 0 retransmitted at 90 ms"
    );
}

#[test]
fn rack_marks_at_once_when_three_segments_are_sacked() {
    let (mut s, mut w) = established(None);
    w.now = 80 * MS;
    // DupThresh: with three segments sacked above the hole the reordering window is zero.
    s.on_packet(
        &ack(0, &[SeqRange { start: 1, end: 4 }], ts_ms(40 * MS)),
        &mut w,
    );
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert!(w.segments_since(80 * MS).contains(&(80 * MS, 0)));
}

#[test]
fn a_fast_retransmit_of_the_head_restarts_the_rto() {
    // tcp_xmit_retransmit_queue: retransmitting the head of the retransmit queue re-arms the
    // one transmission timer as an RTO from now, replacing the loss probe armed in Open.
    let (mut s, mut w) = established(None);
    // Ten segments sent at 40 ms; loss probe at 40 + 2 srtt + 2 ms = 122 ms.
    assert_eq!(s.xmit_timer(), Some((Timer::LossProbe, 122 * MS)));
    w.now = 80 * MS;
    s.on_packet(&ack(0, &[sack(1, 4)], ts_ms(40 * MS)), &mut w);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert!(
        w.segments_since(80 * MS).contains(&(80 * MS, 0)),
        "head retransmitted at 80 ms"
    );
    // The SACK RTT sample (40 ms) leaves srtt at 40 ms and rttvar at its 200 ms floor:
    // RTO 240 ms, from the retransmission at 80 ms.
    assert_eq!(s.rto_ns(), 240 * MS);
    assert_eq!(s.xmit_timer(), Some((Timer::Rto, 320 * MS)));
}

#[test]
fn a_sack_of_data_sent_before_the_head_retransmission_restarts_the_rto() {
    // tcp_clean_rtx_queue: a SACK-only ACK whose RTT sample comes from data sent before the
    // head was last (re)transmitted re-arms the RTO from now (one from data sent after it does
    // not, else the timeout could keep extending in loss recovery; the first ACK below, whose
    // sample comes from data sent with the head's original, re-arms nothing).
    let (mut s, mut w) = established(None);
    w.now = 80 * MS;
    s.on_packet(&ack(0, &[sack(1, 4)], ts_ms(40 * MS)), &mut w);
    assert_eq!(s.xmit_timer(), Some((Timer::Rto, 320 * MS)));
    // 90 ms: segments 4 and 5 (sent at 40 ms, before the head's retransmission at 80 ms) are
    // sacked. RTT sample 50 ms: srtt = 40 + 10/8 = 41.25 ms, rttvar stays 200 ms, so the RTO
    // restarts at 90 + 241.25 ms.
    w.now = 90 * MS;
    s.on_packet(&ack(0, &[sack(1, 6)], ts_ms(40 * MS)), &mut w);
    assert_eq!(s.tp.srtt_us, 41_250);
    assert_eq!(s.xmit_timer(), Some((Timer::Rto, 331_250_000)));
}

#[test]
fn the_reordering_timer_takes_the_place_of_the_loss_probe_and_the_rto() {
    // One transmission timer (icsk_pending): RACK's reordering timeout replaces the loss probe,
    // and an ACK that would re-arm the probe or RTO (here it cum-acks segment 0) leaves it.
    let (mut s, mut w) = established(None);
    assert_eq!(s.xmit_timer(), Some((Timer::LossProbe, 122 * MS)));
    w.now = 80 * MS;
    s.on_packet(&ack(1, &[sack(2, 3)], ts_ms(40 * MS)), &mut w);
    // Segment 1, sent at 40 ms, RACK RTT 40 ms, window min_rtt/4 = 10 ms: 90 ms.
    assert_eq!(s.xmit_timer(), Some((Timer::Reorder, 90 * MS)));
    // A stale loss-probe callback does nothing.
    w.fire(&mut s, Timer::LossProbe, 122 * MS - 1);
    assert_eq!(s.stats.loss_probes, 0);
    w.fire(&mut s, Timer::Reorder, 90 * MS);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert!(w.segments_since(90 * MS).contains(&(90 * MS, 1)));
    // tcp_rack_reo_timeout re-arms the RTO: counted from the head's (re)transmission at 90 ms,
    // RTO 240 ms.
    assert_eq!(s.xmit_timer(), Some((Timer::Rto, 330 * MS)));
}

#[test]
fn a_loss_probe_not_sent_leaves_the_rto_counting_from_the_head() {
    // tcp_send_loss_probe with a probe still outstanding sends nothing and calls
    // tcp_rearm_rto while the timer holds the probe: the RTO then counts from the head's last
    // transmission (tcp_rto_delta_us), not from now.
    let (mut s, mut w) = established(Some(10 * 1448));
    w.fire(&mut s, Timer::LossProbe, 122 * MS);
    assert_eq!(s.stats.loss_probes, 1);
    // A probe sent: the RTO restarts from now, 122 + 240 ms.
    assert_eq!(s.xmit_timer(), Some((Timer::Rto, 362 * MS)));
    // 162 ms: segments 0-4 (sent at 40 ms) are cum-acked. RTT 122 ms: srtt = 40 + 82/8 =
    // 50.25 ms, rttvar 200 ms, RTO 250.25 ms. The probe (snd_nxt 10) is still outstanding.
    w.now = 162 * MS;
    s.on_packet(&ack(5, &[], ts_ms(40 * MS)), &mut w);
    assert_eq!(s.rto_ns(), 250_250_000);
    // Loss probe re-armed at 162 + 2 srtt + 2 ms = 264.5 ms.
    assert_eq!(s.xmit_timer(), Some((Timer::LossProbe, 264_500_000)));
    w.fire(&mut s, Timer::LossProbe, 264_500_000);
    assert_eq!(s.stats.loss_probes, 1, "one probe at a time");
    // The head (segment 5) was sent at 40 ms: RTO at 40 + 250.25 ms.
    assert_eq!(s.xmit_timer(), Some((Timer::Rto, 290_250_000)));
}

fn sack(start: u64, end: u64) -> SeqRange {
    SeqRange { start, end }
}

#[test]
fn the_ack_that_reveals_a_loss_is_not_reordering() {
    let (mut s, mut w) = established(None);
    // Segment 1 is dropped. The receiver's immediate ACK on segment 2's out-of-order arrival
    // cum-acks segment 0 (held for a delayed ACK) and sacks 2 in one packet. Linux judges the
    // filled "hole" against the highest sack *before* this ACK (prior_fack = snd_una = 0), so
    // it is not reordering; the reordering window stays zero once three segments are sacked,
    // and segment 1 is retransmitted at once.
    w.now = 80 * MS;
    s.on_packet(&ack(1, &[sack(2, 3)], ts_ms(40 * MS)), &mut w);
    w.now = 81 * MS;
    s.on_packet(&ack(1, &[sack(2, 5)], ts_ms(40 * MS)), &mut w);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert!(w.segments_since(81 * MS).contains(&(81 * MS, 1)));
}

#[test]
fn a_late_segment_below_the_highest_sack_is_reordering() {
    let (mut s, mut w) = established(None);
    // Segment 0 arrives after segment 1 (sacked first): genuine reordering. From then on RACK
    // keeps its min_rtt/4 = 10 ms window even with three segments sacked above a hole.
    w.now = 80 * MS;
    s.on_packet(&ack(0, &[sack(1, 2)], ts_ms(40 * MS)), &mut w);
    w.now = 81 * MS;
    s.on_packet(&ack(2, &[], ts_ms(40 * MS)), &mut w);
    w.now = 82 * MS;
    s.on_packet(&ack(2, &[sack(3, 6)], ts_ms(40 * MS)), &mut w);
    assert!(
        w.segments_since(82 * MS).iter().all(|&(_, seq)| seq != 2),
        "segment 2 waits for the reordering window"
    );
    // Sent at 40 ms, RACK RTT 42 ms (segment 5, sent at 40, sacked at 82), window 10 ms.
    let reo = w.reorder_deadline();
    assert_eq!(reo, 92 * MS);
}

/// Fires the live transmission timer (the loss probe, then the RTO) until the RTO has put the
/// sender in Loss. Returns the time of the RTO.
fn time_out(s: &mut TcpSender, w: &mut Script) -> Nanos {
    for _ in 0..4 {
        let (kind, at) = *w
            .timers
            .iter()
            .rev()
            .find(|(t, _)| matches!(t, Timer::Rto | Timer::LossProbe))
            .unwrap();
        w.fire(s, kind, at);
        if s.tp.ca_state == CaState::Loss {
            return at;
        }
    }
    panic!("no retransmission timeout");
}

#[test]
fn a_spurious_retransmission_timeout_is_undone_by_the_echoed_timestamp() {
    let (mut s, mut w) = established(None);
    let rto_at = time_out(&mut s, &mut w);
    assert_eq!(s.tp.snd_cwnd, 1);
    assert_eq!(s.tp.snd_ssthresh, 5);
    // The ACK of the original transmissions arrives late: it echoes their 40 ms timestamp,
    // earlier than the retransmission, so the timeout was spurious and is undone.
    w.now = rto_at + 10 * MS;
    s.on_packet(&ack(11, &[], ts_ms(40 * MS)), &mut w);
    assert_eq!(s.stats.undos, 1);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert!(s.tp.snd_cwnd >= 10, "cwnd restored, got {}", s.tp.snd_cwnd);
    assert!(
        s.tp.snd_ssthresh > 5,
        "ssthresh restored, got {}",
        s.tp.snd_ssthresh
    );
}

#[test]
fn a_genuine_timeout_is_not_undone() {
    let (mut s, mut w) = established(None);
    let rto_at = time_out(&mut s, &mut w);
    // This ACK echoes the retransmission's timestamp: the retransmission was needed.
    w.now = rto_at + 40 * MS;
    s.on_packet(&ack(1, &[], ts_ms(rto_at)), &mut w);
    assert_eq!(s.stats.undos, 0);
    assert!(
        s.tp.snd_cwnd <= 3,
        "cwnd stays reduced, got {}",
        s.tp.snd_cwnd
    );
    assert_eq!(s.tp.snd_ssthresh, 5);
}

#[test]
fn a_tail_loss_probe_fires_two_rtts_after_the_last_send() {
    let (mut s, mut w) = established(Some(10 * 1448));
    // Ten segments out, nothing more to send: PTO = 2 srtt + 2 ms = 82 ms after 40 ms.
    let (kind, at) = *w
        .timers
        .iter()
        .rev()
        .find(|(t, _)| matches!(t, Timer::LossProbe))
        .unwrap();
    assert_eq!(at, 40 * MS + 82 * MS);
    w.fire(&mut s, kind, at);
    // No new data: the probe retransmits the highest segment.
    assert_eq!(w.segments_since(at), vec![(at, 9)]);
    assert_eq!(s.stats.loss_probes, 1);
}

#[test]
fn samples_are_marked_app_limited_when_the_application_runs_dry() {
    // Five segments only, with a window of ten: the sender runs out of data.
    let (mut s, mut w) = established(Some(5 * 1448));
    assert_eq!(w.segments_since(0).len(), 5);
    // tcp_rate_check_app_limited: the app-limited period lasts until what is in flight now
    // (5 packets) has been delivered.
    assert_eq!(s.tp.app_limited, 5);
    // Segments 1..3 are sacked at 80 ms: 0 is lost and retransmitted inside that period...
    w.now = 80 * MS;
    s.on_packet(
        &ack(0, &[SeqRange { start: 1, end: 4 }], ts_ms(40 * MS)),
        &mut w,
    );
    assert!(w.segments_since(80 * MS).contains(&(80 * MS, 0)));
    assert!(
        !s.last_rate_sample.is_app_limited,
        "segments sent before running dry give ordinary samples"
    );
    // ...so the sample its ACK produces is marked app-limited.
    w.now = 120 * MS;
    s.on_packet(&ack(4, &[], ts_ms(80 * MS)), &mut w);
    let rs = s.last_rate_sample;
    assert!(
        rs.is_app_limited,
        "the sample of a segment sent while app-limited is marked"
    );
    assert_eq!((rs.delivered, rs.interval_ns), (1, 40 * MS as i64));
    // tcp_rate_gen keeps an app-limited sample for tcp_info only if it is not slower than the
    // kept one (3 packets / 40 ms here), so the reported rate stays the unlimited one.
    assert!(!s.tp.rate_app_limited);
    assert_eq!((s.tp.rate_delivered, s.tp.rate_interval_ns), (3, 40 * MS));
    // A bulk sender is never app-limited.
    let (b, _) = established(None);
    assert_eq!(b.tp.app_limited, 0);
}

#[test]
fn a_spurious_fast_retransmit_is_undone_when_its_duplicate_is_dsacked() {
    let (mut s, mut w) = established(None);
    // Three segments sacked above segment 0: fast retransmit of 0 at 80 ms.
    w.now = 80 * MS;
    s.on_packet(
        &ack(0, &[SeqRange { start: 1, end: 4 }], ts_ms(40 * MS)),
        &mut w,
    );
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    let ssthresh = s.tp.snd_ssthresh;
    assert_eq!(ssthresh, 5);
    // The original 0 was only delayed: it fills the hole (this ACK carries no timestamp
    // evidence: it echoes the retransmission's time)...
    w.now = 85 * MS;
    s.on_packet(&ack(4, &[], ts_ms(80 * MS)), &mut w);
    assert_eq!(s.stats.undos, 0);
    // ...and the retransmission arrives as a duplicate, reported by a D-SACK below the ACK.
    w.now = 120 * MS;
    s.on_packet(
        &ack(4, &[SeqRange { start: 0, end: 1 }], ts_ms(80 * MS)),
        &mut w,
    );
    assert_eq!(s.stats.dsacks, 1);
    assert_eq!(
        s.stats.undos, 1,
        "every retransmission of the episode was D-SACKed"
    );
    assert!(
        s.tp.snd_ssthresh > ssthresh,
        "ssthresh restored to {}",
        s.tp.snd_ssthresh
    );
    assert!(s.tp.snd_cwnd >= 10, "cwnd restored, got {}", s.tp.snd_cwnd);
}

#[test]
fn rate_samples_carry_inflight_at_send_and_losses_since() {
    let (mut s, mut w) = established(None);
    // The initial window went out back to back: segment k left with k + 1 packets in flight.
    // Segments 1..3 sacked: the newest delivered (3) gives the sample; 0 is marked lost.
    w.now = 80 * MS;
    s.on_packet(
        &ack(0, &[SeqRange { start: 1, end: 4 }], ts_ms(40 * MS)),
        &mut w,
    );
    let rs = s.last_rate_sample;
    assert_eq!(rs.tx_in_flight, 4);
    assert_eq!((rs.prior_lost, rs.lost, rs.losses), (0, 1, 1));
}

/// Reno that logs the hooks the sender calls, for the tests below.
struct Logged {
    inner: Box<dyn rove_tcp::cc::CongestionControl>,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl rove_tcp::cc::CongestionControl for Logged {
    fn name(&self) -> &'static str {
        "logged"
    }
    fn ssthresh(&mut self, tp: &rove_tcp::state::TcpState) -> u32 {
        self.inner.ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut rove_tcp::state::TcpState, acked: u32) {
        self.inner.cong_avoid(tp, acked)
    }
    fn in_ack_event(&mut self, _tp: &mut rove_tcp::state::TcpState, flags: u32) {
        self.log.lock().unwrap().push(format!("ack_event {flags}"));
    }
    fn release(&mut self, _tp: &mut rove_tcp::state::TcpState) {
        self.log.lock().unwrap().push("release".into());
    }
    fn on_segment_sent(
        &mut self,
        _tp: &rove_tcp::state::TcpState,
        seq: u64,
        bytes: u32,
        retrans: bool,
    ) {
        self.log
            .lock()
            .unwrap()
            .push(format!("sent {seq} {bytes} {retrans}"));
    }
}

fn logged() -> (
    TcpSender,
    Script,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    let (mut s, w) = established(None);
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let p = toml::Table::new();
    let inner = build("reno", &CcConfig::new(&p, 1)).unwrap().unwrap();
    s.set_congestion_control(
        Box::new(Logged {
            inner,
            log: log.clone(),
        }),
        rove_tcp::Handoff::Keep,
    );
    (s, w, log)
}

#[test]
fn in_ack_event_flags_follow_tcp_ack_fast_and_slow_paths() {
    use rove_tcp::state::{CA_ACK_SLOWPATH, CA_ACK_WIN_UPDATE};
    let (mut s, mut w, log) = logged();
    w.now = 80 * MS;
    // The first ACK: tcp_finish_connect left header prediction off (the peer scales its
    // window); this ACK's window differs from the SYN-ACK's unscaled one, which turns it on.
    s.on_packet(&ack(1, &[], ts_ms(40 * MS)), &mut w);
    // A pure cumulative advance, same window, no SACK: the fast path.
    s.on_packet(&ack(2, &[], ts_ms(40 * MS)), &mut w);
    // A SACK block: the slow path.
    s.on_packet(
        &ack(2, &[SeqRange { start: 3, end: 4 }], ts_ms(40 * MS)),
        &mut w,
    );
    // A new advertised window: slow path with a window update.
    let mut a = ack(4, &[], ts_ms(40 * MS));
    a.rwnd_bytes = 1 << 20;
    s.on_packet(&a, &mut w);
    let events: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.starts_with("ack_event"))
        .cloned()
        .collect();
    assert_eq!(
        events,
        [
            format!("ack_event {}", CA_ACK_SLOWPATH | CA_ACK_WIN_UPDATE),
            format!("ack_event {CA_ACK_WIN_UPDATE}"),
            format!("ack_event {CA_ACK_SLOWPATH}"),
            format!("ack_event {}", CA_ACK_SLOWPATH | CA_ACK_WIN_UPDATE),
        ]
    );
}

#[test]
fn the_send_hook_sees_every_segment_and_release_runs_on_a_switch() {
    let (mut s, mut w, log) = logged();
    w.now = 80 * MS;
    s.on_packet(&ack(2, &[], ts_ms(40 * MS)), &mut w);
    let sent: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.starts_with("sent"))
        .cloned()
        .collect();
    // Two segments acked in slow start: cwnd 12, so 4 new segments (10..13), none retransmitted.
    assert_eq!(
        sent,
        [
            "sent 10 1448 false",
            "sent 11 1448 false",
            "sent 12 1448 false",
            "sent 13 1448 false"
        ]
    );
    // A retransmission (RACK after a SACK and the reordering window) is flagged as one.
    s.on_packet(
        &ack(2, &[SeqRange { start: 3, end: 4 }], ts_ms(40 * MS)),
        &mut w,
    );
    let reo = w.reorder_deadline();
    w.fire(&mut s, Timer::Reorder, reo);
    assert!(
        log.lock().unwrap().iter().any(|e| e == "sent 2 1448 true"),
        "{:?}",
        log.lock().unwrap()
    );
    let p = toml::Table::new();
    s.set_congestion_control(
        build("cubic", &CcConfig::new(&p, 1)).unwrap().unwrap(),
        rove_tcp::Handoff::Keep,
    );
    assert_eq!(log.lock().unwrap().last().unwrap(), "release");
    assert_eq!(s.cc_name(), "cubic");
}

#[test]
fn an_ack_covering_a_retransmission_takes_its_rtt_from_the_echoed_timestamp() {
    // tcp_clean_rtx_queue sets FLAG_RETRANS_DATA_ACKED when any cum-acked segment was
    // retransmitted: no RTT from the cum-acked segments at all (Karn), even from a
    // never-retransmitted one among them; tcp_ack_update_rtt then falls back to the echoed
    // timestamp since the ACK advances snd_una.
    let (mut s, mut w) = established(None);
    w.now = 80 * MS;
    s.on_packet(&ack(0, &[sack(1, 4)], ts_ms(40 * MS)), &mut w);
    assert!(w.segments_since(80 * MS).contains(&(80 * MS, 0)));
    assert_eq!(s.tp.srtt_us, 40_000);
    // 130 ms: segments 0 (retransmitted at 80 ms) to 4 (never retransmitted, sent at 40 ms)
    // are cum-acked; the ACK echoes the retransmission's timestamp. RTT 131 - 81 = 50 ms
    // (timestamps in ms), not segment 4's 90 ms: srtt = 40 + 10/8 = 41.25 ms.
    w.now = 130 * MS;
    s.on_packet(&ack(5, &[], ts_ms(80 * MS)), &mut w);
    assert_eq!(s.tp.srtt_us, 41_250);
}

#[test]
fn a_retransmission_timeout_ends_the_loss_probe_episode() {
    // tcp_enter_loss clears tlp_high_seq: after an RTO undone as spurious, the next probe
    // timeout sends a probe again (it would otherwise find the old probe "outstanding", send
    // nothing and let the RTO count from the head).
    let (mut s, mut w) = established(Some(10 * 1448));
    w.fire(&mut s, Timer::LossProbe, 122 * MS);
    assert_eq!(s.stats.loss_probes, 1);
    assert_eq!(s.xmit_timer(), Some((Timer::Rto, 362 * MS)));
    w.fire(&mut s, Timer::Rto, 362 * MS);
    assert_eq!(s.tp.ca_state, CaState::Loss);
    // The originals' ACK (echoing 40 ms) arrives: Eifel undo, Open again, a probe re-armed.
    w.now = 380 * MS;
    s.on_packet(&ack(5, &[], ts_ms(40 * MS)), &mut w);
    assert_eq!(s.tp.ca_state, CaState::Open);
    let (kind, at) = s.xmit_timer().unwrap();
    assert_eq!(kind, Timer::LossProbe);
    w.fire(&mut s, kind, at);
    assert_eq!(s.stats.loss_probes, 2);
    assert_eq!(w.segments_since(at), vec![(at, 9)]);
}

/// An algorithm that records the flags of every `in_ack_event` (Reno otherwise).
struct AckEvents(std::sync::Arc<std::sync::Mutex<Vec<u32>>>);

impl rove_tcp::cc::CongestionControl for AckEvents {
    fn name(&self) -> &'static str {
        "ack_events"
    }
    fn ssthresh(&mut self, tp: &rove_tcp::state::TcpState) -> u32 {
        (tp.snd_cwnd / 2).max(2)
    }
    fn in_ack_event(&mut self, _tp: &mut rove_tcp::state::TcpState, flags: u32) {
        self.0.lock().unwrap().push(flags);
    }
}

#[test]
fn acks_take_the_fast_path_as_linux_header_prediction_allows() {
    use rove_tcp::state::{CA_ACK_SLOWPATH as SLOW, CA_ACK_WIN_UPDATE as WIN};
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut s = TcpSender::new(
        Box::new(AckEvents(events.clone())),
        Segments { size_bytes: None },
    );
    let mut w = Script::default();
    s.start(&mut w);
    w.now = 40 * MS;
    s.on_packet(
        &Packet {
            kind: Kind::SynAck,
            rwnd_bytes: 6 << 20,
            tsecr: ts_ms(0),
            ..Default::default()
        },
        &mut w,
    );
    // The window field is rwnd >> 10 (the peer's wscale): 6 MiB is 6144 units.
    let win = |ack_no: u64, rwnd: u64, sack: &[SeqRange]| {
        let mut p = ack(ack_no, sack, ts_ms(0));
        p.rwnd_bytes = rwnd;
        p
    };
    let full = 6u64 << 20;
    let steps: [(Packet, Option<u32>, &str); 8] = [
        // tcp_finish_connect left pred_flags 0 (the peer scales its window): slow path; the
        // window differs from the SYN-ACK's (65535, unscaled): header prediction on.
        (win(2, full, &[]), Some(WIN | SLOW), "first ACK"),
        (
            win(4, full, &[]),
            Some(WIN),
            "same field, advances: fast path",
        ),
        // 1100 B less: field 6142, not 6144 (in MSS units both are 4344 segments).
        (win(6, full - 1100, &[]), Some(WIN | SLOW), "field changed"),
        (win(8, full - 1100, &[]), Some(WIN), "fast path again"),
        // A SACK option changes the header length: slow path; no advance, same window: not
        // a window update.
        (
            win(8, full - 1100, &[SeqRange { start: 9, end: 10 }]),
            Some(SLOW),
            "SACK",
        ),
        // Header-predicted but not advancing: tcp_ack's slow branch without FLAG_SLOWPATH.
        (win(8, full - 1100, &[]), Some(0), "predicted duplicate ACK"),
        // A smaller window on an ACK that does not advance: tcp_may_update_window refuses it,
        // snd_wnd and pred_flags stay...
        (win(8, 5 << 20, &[]), Some(SLOW), "refused window"),
        // ...so the old field is predicted again.
        (
            win(10, full - 1100, &[]),
            Some(WIN),
            "old field still predicted",
        ),
    ];
    let mut expected = Vec::new();
    for (p, flags, what) in steps {
        w.now += MS;
        s.on_packet(&p, &mut w);
        expected.extend(flags);
        assert_eq!(*events.lock().unwrap(), expected, "{what}");
    }
    // An ACK below snd_una goes to tcp_ack's old_ack: no in_ack_event, no counter.
    w.now += MS;
    s.on_packet(&win(4, full - 1100, &[]), &mut w);
    assert_eq!(*events.lock().unwrap(), expected, "old ACK");
    // LINUX_MIB_TCPHPACKS / TCPPUREACKS.
    assert_eq!((s.stats.hp_acks, s.stats.pure_acks), (3, 5));
}
