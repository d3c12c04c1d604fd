//! The connection: subflows, the data sequence space on both sides, and the scheduler loop
//! (reinjections, then the subflows' send queues, then the scheduler; `sched` module
//! documentation).

use crate::data_sender::DataSender;
use crate::detect::{AckObservation, SegmentObservation};
use crate::detection::Detection;
use crate::receiver::{ReceiverAction, ReceiverBehaviour, ReceiverView, SegmentArrival};
use crate::reorder::ReorderBuffer;
use crate::sched::{Pick, SchedContext, Scheduler, SubflowInfo, MAX_QUEUED_SEGS};
use crate::subflow::Subflow;
use crate::wire::{Stamp, SubWire, SubflowNet};
use crate::{SubflowMask, MAX_SUBFLOWS};
use rove_sim::histogram::Histogram;
use rove_sim::packet::{Direction, Kind, Packet};
use rove_sim::Nanos;
use rove_tcp::cc::{CongestionControl, CouplingHandle};
use rove_tcp::receiver::TcpReceiver;
use rove_tcp::sender::TcpSender;
use rove_tcp::{segment_payloads, Segments, Timer};

/// What the connection sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionData {
    /// A bulk transfer of `size_bytes` (`None`: unlimited), written at the start.
    Bulk { size_bytes: Option<u64> },
    /// What an application writes over time ([`Connection::write`]); the subflows do at each
    /// hand-over what tcp_sendmsg does at a write (`TcpSender::set_app_writes`).
    AppWrites { slow_start_after_idle: bool },
}

/// What a connection is built from.
pub struct ConnectionConfig {
    /// One congestion-control instance per subflow (see `coupling::build_subflow_ccs`).
    pub ccs: Vec<Box<dyn CongestionControl>>,
    /// The handle the subflows' coupled algorithms share, if they are coupled.
    pub coupling: Option<CouplingHandle>,
    pub scheduler: Box<dyn Scheduler>,
    pub data: ConnectionData,
    /// The connection-level receive window, bytes.
    pub rwnd_bytes: u64,
    pub start_ns: Nanos,
    /// Shared-bottleneck detection, which regroups `coupling` at run time (`None`: the coupling
    /// keeps the groups it was built with).
    pub detection: Option<Detection>,
    /// What the receiver does with its ACKs beyond a plain receiver (`receiver` module;
    /// `None`: a plain receiver).
    pub receiver: Option<Box<dyn ReceiverBehaviour>>,
}

pub struct Connection {
    pub subflows: Vec<Subflow>,
    pub data: DataSender,
    pub reorder: ReorderBuffer,
    scheduler: Box<dyn Scheduler>,
    /// The subflows' coupling (coupled algorithms only): a scheme that couples only some
    /// subflows regroups them through it at run time.
    pub coupling: Option<CouplingHandle>,
    /// Shared-bottleneck detection: fed every ACK and loss event, consulted every interval; its
    /// grouping is the coupling's.
    pub detection: Option<Detection>,
    pub start_ns: Nanos,
    /// The other subflows have sent their MP_JOIN SYN.
    joined: bool,
    /// Application delay of every delivered DSN: first hand-over to a subflow to in-order
    /// delivery (a bounded histogram, `rove_sim::histogram`).
    pub app_delay: Histogram,
    /// DSNs handed over again after their subflow failed.
    pub reinjected_segs: u64,
    /// Opportunistic retransmissions (the window-blocking DSN sent again on a faster subflow)
    /// and penalisations (a slow subflow's cwnd halved), see `receive_buffer_optimization`.
    pub opportunistic_segs: u64,
    pub penalizations: u64,
    /// Per subflow: time it last penalised the others (tp->mptcp->last_rbuf_opti).
    last_rbuf_opti: Vec<Option<Nanos>>,
    rwnd_bytes: u64,
    /// `Some(slow_start_after_idle)` when an application writes over time.
    app_writes: Option<bool>,
    /// Weight of each subflow's loss-rate EWMA (the scheduler's `loss_rate_weight`).
    loss_rate_weight: f64,
    /// The scheduler reads `SubflowInfo`'s extended fields (`Scheduler::uses_extended_info`).
    scheduler_uses_extended_info: bool,
    /// Scratch: the scheduler's view of the subflows.
    infos: Vec<SubflowInfo>,
    /// The receiver behaviour, if any, and the scratch its actions go to.
    receiver: Option<Box<dyn ReceiverBehaviour>>,
    receiver_actions: Vec<ReceiverAction>,
}

impl Connection {
    pub fn new(config: ConnectionConfig) -> Self {
        assert!(
            !config.ccs.is_empty() && config.ccs.len() <= MAX_SUBFLOWS,
            "1 to {MAX_SUBFLOWS} subflows"
        );
        let n = config.ccs.len();
        let loss_rate_weight = config.scheduler.loss_rate_weight();
        let scheduler_uses_extended_info = config.scheduler.uses_extended_info();
        let (data, app_writes) = match config.data {
            ConnectionData::Bulk { size_bytes } => {
                (DataSender::new(size_bytes, config.rwnd_bytes), None)
            }
            ConnectionData::AppWrites {
                slow_start_after_idle,
            } => (
                DataSender::app_written(config.rwnd_bytes),
                Some(slow_start_after_idle),
            ),
        };
        let subflows = config
            .ccs
            .into_iter()
            .map(|cc| new_subflow(cc, config.rwnd_bytes, app_writes))
            .collect();
        let mut c = Connection {
            subflows,
            data,
            reorder: ReorderBuffer::new(config.start_ns),
            scheduler: config.scheduler,
            coupling: config.coupling,
            detection: config.detection,
            start_ns: config.start_ns,
            joined: false,
            app_delay: Histogram::default(),
            reinjected_segs: 0,
            opportunistic_segs: 0,
            penalizations: 0,
            last_rbuf_opti: vec![None; n],
            rwnd_bytes: config.rwnd_bytes,
            app_writes,
            loss_rate_weight,
            scheduler_uses_extended_info,
            infos: vec![SubflowInfo::default(); n],
            receiver: config.receiver,
            receiver_actions: Vec::with_capacity(8),
        };
        c.apply_detected_groups();
        c
    }

    /// Puts every subflow in the coupling group the detection says (at the start: each alone).
    fn apply_detected_groups(&mut self) {
        if let (Some(d), Some(coupling)) = (&self.detection, &self.coupling) {
            for (i, &g) in d.groups().iter().enumerate() {
                coupling.set_group(i, g);
            }
        }
    }

    /// Detection's part of an event of subflow `sub`: the ACK's observation (`rtt_samples`
    /// before the event, to tell whether it carried an RTT sample, and when the ACK left the
    /// receiver), a loss event if one began (`loss_events` before), then the periodic
    /// consultation and regrouping.
    fn detect(&mut self, sub: usize, ack: Option<(u64, Nanos)>, loss_events: u64, now: Nanos) {
        let Some(d) = &mut self.detection else {
            return;
        };
        let sf = &self.subflows[sub];
        if let Some((samples_before, sent_at)) = ack {
            let tp = &sf.sender.tp;
            let rtt_us = (sf.sender.stats.rtt.count() > samples_before)
                .then(|| sf.sender.stats.last_rtt_sample.map(|(_, rtt)| rtt / 1000))
                .flatten();
            let obs = AckObservation {
                now,
                sent_at,
                rtt_us,
                srtt_us: tp.srtt_us,
                model: sf.sender.cc.path_model(tp),
            };
            d.detector_mut().on_ack(sub, &obs);
        }
        if sf.loss_events > loss_events {
            d.detector_mut().on_loss_event(sub, now);
        }
        if d.advance(now) {
            self.apply_detected_groups();
        }
    }

    /// The application writes `bytes` (an application-written connection): new DSNs, handed
    /// to the subflows as the scheduler decides.
    pub fn write<N: SubflowNet>(&mut self, bytes: u64, net: &mut N) {
        for payload in segment_payloads(bytes) {
            self.data.write(payload);
        }
        self.schedule(net);
    }

    /// The first subflow is established (MP_CAPABLE handshake done): the application may start.
    pub fn is_established(&self) -> bool {
        self.subflows[0].sender.is_established()
    }

    pub fn scheduler_name(&self) -> &'static str {
        self.scheduler.name()
    }

    /// A finite transfer whose last DSN was DATA_ACKed.
    pub fn is_complete(&self) -> bool {
        self.data.completed_at.is_some()
    }

    /// Opens the connection: subflow 0 sends its SYN (MP_CAPABLE).
    pub fn start<N: SubflowNet>(&mut self, net: &mut N) {
        self.start_subflow(0, net);
        self.arm_receiver_wake(net);
    }

    /// The receiver behaviour's name (`None`: a plain receiver).
    pub fn receiver_name(&self) -> Option<&'static str> {
        self.receiver.as_ref().map(|b| b.name())
    }

    /// The receiver behaviour, to read its state (its report).
    pub fn receiver_behaviour(&self) -> Option<&dyn ReceiverBehaviour> {
        self.receiver.as_deref()
    }

    /// Applies a receiver action to subflow `sub`'s receiver now (a behaviour's, or a
    /// scenario `[[actions]]` entry's, `dupacks` / `withhold_acks` / `release_ack`).
    pub fn apply_receiver_action<N: SubflowNet>(&mut self, action: ReceiverAction, net: &mut N) {
        let sub = match action {
            ReceiverAction::DupAcks { sub }
            | ReceiverAction::Withhold { sub }
            | ReceiverAction::Release { sub } => sub,
        };
        let Some(sf) = self.subflows.get_mut(sub) else {
            return;
        };
        if sf.closed {
            return;
        }
        match action {
            ReceiverAction::DupAcks { .. } => {
                sf.receiver.hold_next_ack();
            }
            ReceiverAction::Withhold { .. } => sf.receiver.withhold_acks(true),
            ReceiverAction::Release { .. } => {
                let data_ack = self.reorder.rcv_nxt;
                sf.receiver.release_ack(&mut SubWire {
                    net,
                    sub,
                    stamp: Stamp::DataAck(data_ack),
                });
            }
        }
    }

    /// Applies the actions the behaviour pushed, then arms its next wake-up.
    fn apply_receiver_actions<N: SubflowNet>(&mut self, net: &mut N) {
        let mut actions = std::mem::take(&mut self.receiver_actions);
        for &a in &actions {
            self.apply_receiver_action(a, net);
        }
        actions.clear();
        self.receiver_actions = actions; // keep its capacity
        self.arm_receiver_wake(net);
    }

    fn arm_receiver_wake<N: SubflowNet>(&mut self, net: &mut N) {
        if let Some(at) = self.receiver.as_ref().and_then(|b| b.wake_at()) {
            if at > net.now() {
                net.arm(0, Timer::Receiver, at);
            }
        }
    }

    /// Shows data segment `p` of subflow `sub` to the receiver behaviour (before the subflow
    /// receiver acknowledges it) and applies what it asks.
    fn receiver_sees<N: SubflowNet>(&mut self, sub: usize, p: &Packet, net: &mut N) {
        let Some(behaviour) = self.receiver.as_mut() else {
            return;
        };
        let now = net.now();
        let receiver = &self.subflows[sub].receiver;
        let rcv_nxt = receiver.rcv_nxt();
        let arrival = SegmentArrival {
            now,
            sub,
            seq: p.seq,
            in_order: p.seq == rcv_nxt,
            duplicate: p.seq < rcv_nxt || receiver.holds_out_of_order(p.seq),
            dsn: p.dsn,
            payload_bytes: p.payload_bytes,
            sent_at: p.sent_at,
            echo_rtt_ns: (p.tsecr > 0)
                .then(|| (rove_tcp::ts_ms(now).saturating_sub(p.tsecr)) as Nanos * 1_000_000),
        };
        let view = ReceiverView {
            subflows: &self.subflows,
            reorder: &self.reorder,
        };
        behaviour.on_segment(&arrival, &view, &mut self.receiver_actions);
        self.apply_receiver_actions(net);
    }

    fn start_subflow<N: SubflowNet>(&mut self, i: usize, net: &mut N) {
        let now = net.now();
        let Subflow {
            sender,
            map,
            started_at,
            ..
        } = &mut self.subflows[i];
        *started_at = Some(now);
        sender.start(&mut SubWire {
            net,
            sub: i,
            stamp: Stamp::Dsn(map),
        });
    }

    /// A packet of subflow `sub` reached its end: a data segment or SYN at the receiver, an ACK
    /// or SYN-ACK at the sender.
    pub fn on_packet<N: SubflowNet>(
        &mut self,
        sub: usize,
        p: &Packet,
        direction: Direction,
        net: &mut N,
    ) {
        if self.subflows[sub].closed {
            return; // a closed subflow's stragglers (its RST would have torn it down)
        }
        let now = net.now();
        match direction {
            Direction::Data => {
                if p.kind == Kind::Segment {
                    self.receiver_sees(sub, p, net);
                    if let Some(d) = &mut self.detection {
                        // A receiver-side detector's sample: the segment's send time is the
                        // sender's timestamp (MPTCP-SSCC's timestamp option).
                        let obs = SegmentObservation {
                            now,
                            owd_ns: now as i64 - p.sent_at as i64,
                            sender_lost_pkts: self.subflows[sub].sender.tp.lost,
                        };
                        d.detector_mut().on_segment(sub, &obs);
                    }
                    let delivered = self.reorder.on_segment(p.dsn, p.payload_bytes, now);
                    for dsn in delivered {
                        if let Some(t) = self.data.first_tx(dsn) {
                            self.app_delay.record(now - t);
                        }
                    }
                }
                let data_ack = self.reorder.rcv_nxt;
                self.subflows[sub].receiver.on_packet(
                    p,
                    &mut SubWire {
                        net,
                        sub,
                        stamp: Stamp::DataAck(data_ack),
                    },
                );
            }
            Direction::Ack => {
                if self.is_complete() {
                    return;
                }
                if p.kind == Kind::Ack {
                    self.data.on_data_ack(p.dsn, now);
                    for sf in &mut self.subflows {
                        sf.drop_acked_queued(self.data.una);
                    }
                }
                let weight = self.loss_rate_weight;
                let sf = &mut self.subflows[sub];
                let (prior_state, prior_rtos) =
                    (sf.sender.tp.ca_state, sf.sender.rto_expirations());
                let (rtt_samples, loss_events) = (sf.sender.stats.rtt.count(), sf.loss_events);
                {
                    let Subflow { sender, map, .. } = sf;
                    sender.on_packet(
                        p,
                        &mut SubWire {
                            net,
                            sub,
                            stamp: Stamp::Dsn(map),
                        },
                    );
                    map.release_below(sender.tp.snd_una);
                }
                sf.note_loss_events(prior_state, prior_rtos, weight);
                sf.note_srtt();
                if sf.potentially_failed && sf.sender.rto_expirations() == 0 {
                    sf.potentially_failed = false; // new data acknowledged: the path works again
                }
                self.detect(sub, Some((rtt_samples, p.sent_at)), loss_events, now);
                if sub == 0 && !self.joined && self.subflows[0].sender.is_established() {
                    // MP_JOIN: the other subflows open once the first is established.
                    self.joined = true;
                    for i in 1..self.subflows.len() {
                        self.start_subflow(i, net);
                    }
                }
                if !self.is_complete() {
                    self.schedule(net);
                }
            }
        }
    }

    pub fn on_timer<N: SubflowNet>(&mut self, sub: usize, timer: Timer, net: &mut N) {
        if timer == Timer::Receiver {
            if let Some(b) = self.receiver.as_mut() {
                let view = ReceiverView {
                    subflows: &self.subflows,
                    reorder: &self.reorder,
                };
                b.on_wake(net.now(), &view, &mut self.receiver_actions);
                self.apply_receiver_actions(net);
            }
            return;
        }
        if timer == Timer::Scheduler {
            // The scheduler's own wake-up (`Scheduler::wake_at`), armed on subflow 0 whether
            // or not that subflow is still open.
            if !self.is_complete() {
                self.schedule(net);
            }
            return;
        }
        if self.subflows[sub].closed {
            return;
        }
        if timer == Timer::DelayedAck {
            let data_ack = self.reorder.rcv_nxt;
            self.subflows[sub].receiver.on_timer(
                timer,
                &mut SubWire {
                    net,
                    sub,
                    stamp: Stamp::DataAck(data_ack),
                },
            );
            return;
        }
        if self.is_complete() {
            return;
        }
        let weight = self.loss_rate_weight;
        let sf = &mut self.subflows[sub];
        let (prior_state, prior_rtos) = (sf.sender.tp.ca_state, sf.sender.rto_expirations());
        let loss_events = sf.loss_events;
        {
            let Subflow { sender, map, .. } = sf;
            sender.on_timer(
                timer,
                &mut SubWire {
                    net,
                    sub,
                    stamp: Stamp::Dsn(map),
                },
            );
        }
        sf.note_loss_events(prior_state, prior_rtos, weight);
        if sf.sender.rto_expirations() > 0 && sf.sender.is_established() && !sf.potentially_failed {
            // The path looks down: stop using it and reinject what it holds (mptcp_reinject_data).
            sf.potentially_failed = true;
            sf.failures += 1;
            for dsn in sf.map.held() {
                self.data.queue_reinjection(dsn);
            }
            self.reinject_send_queue(sub);
        }
        self.detect(sub, None, loss_events, net.now());
        self.schedule(net);
    }

    /// Opens a new subflow running `cc` (an MP_JOIN, as the path manager does when an address
    /// is added): at once if the connection's other subflows have joined, else with them.
    /// Returns its index.
    pub fn add_subflow<N: SubflowNet>(
        &mut self,
        cc: Box<dyn CongestionControl>,
        net: &mut N,
    ) -> usize {
        assert!(
            self.subflows.len() < MAX_SUBFLOWS,
            "at most {MAX_SUBFLOWS} subflows"
        );
        let i = self.subflows.len();
        self.subflows
            .push(new_subflow(cc, self.rwnd_bytes, self.app_writes));
        self.infos.push(SubflowInfo::default());
        self.last_rbuf_opti.push(None);
        if let Some(d) = &mut self.detection {
            d.add_subflow(); // alone until the detector groups it
            if let Some(h) = &self.coupling {
                h.subflow_slot(i);
            }
            self.apply_detected_groups();
        }
        if self.joined {
            self.start_subflow(i, net);
        }
        i
    }

    /// Closes subflow `sub` (REMOVE_ADDR, or the path manager giving a subflow up): it sends
    /// nothing more, and every DSN it held that is not DATA_ACKed yet is reinjected on the
    /// others (mptcp_reinject_data).
    pub fn remove_subflow<N: SubflowNet>(&mut self, sub: usize, net: &mut N) {
        let sf = &mut self.subflows[sub];
        if sf.closed {
            return;
        }
        sf.closed = true;
        for dsn in sf.map.held() {
            if dsn >= self.data.una {
                self.data.queue_reinjection(dsn);
            }
        }
        self.reinject_send_queue(sub);
        if !self.is_complete() {
            self.schedule(net);
        }
    }

    /// Pauses (`true`) or resumes subflow `sub`: a paused subflow keeps what it has in flight
    /// but is given no new data (MP_PRIO backup); what waits in its send queue is reinjected.
    pub fn set_paused<N: SubflowNet>(&mut self, sub: usize, paused: bool, net: &mut N) {
        self.subflows[sub].paused = paused;
        let moved = if paused {
            self.reinject_send_queue(sub)
        } else {
            0
        };
        if !self.is_complete() && (!paused || moved > 0) {
            self.schedule(net);
        }
    }

    /// Empties subflow `sub`'s send queue into the reinjection queue (its DSNs go out on the
    /// other subflows), but for DSNs another subflow carried or still queues: those arrive, or
    /// are reinjected when that subflow fails in turn.
    /// Returns how many DSNs it queued for reinjection.
    fn reinject_send_queue(&mut self, sub: usize) -> usize {
        let mut queue = std::mem::take(&mut self.subflows[sub].queue);
        self.subflows[sub].queue_bytes = 0;
        let mut moved = 0;
        for &(dsn, _) in &queue {
            let carried_elsewhere = self.data.carried(dsn) & !(1 << sub) != 0;
            let queued_elsewhere = self
                .subflows
                .iter()
                .enumerate()
                .any(|(j, o)| j != sub && o.may_queue() && o.queues(dsn));
            if !carried_elsewhere && !queued_elsewhere {
                self.data.queue_reinjection(dsn);
                moved += 1;
            }
        }
        queue.clear();
        self.subflows[sub].queue = queue; // keep its capacity
        moved
    }

    /// Queued DSNs dropped because they were DATA_ACKed first, over all subflows.
    pub fn queue_drops(&self) -> u64 {
        self.subflows.iter().map(|s| s.queue_drops).sum()
    }

    /// Clamps the connection-level receive window (TCP_WINDOW_CLAMP on an MPTCP socket): the
    /// sender's window over the DATA_ACK and what every subflow receiver advertises.
    pub fn set_window_clamp(&mut self, bytes: u64) {
        self.rwnd_bytes = bytes;
        self.data.set_window(bytes);
        for sf in &mut self.subflows {
            sf.receiver.set_window_clamp(bytes);
        }
    }

    fn refresh_infos(&mut self) {
        let extended = self.scheduler_uses_extended_info;
        for (info, sf) in self.infos.iter_mut().zip(&self.subflows) {
            let tp = &sf.sender.tp;
            info.usable = sf.is_usable();
            info.srtt_us = tp.srtt_us;
            info.rttvar_us = sf.sender.rttvar_us();
            info.min_srtt_us = sf.min_srtt_us;
            info.max_srtt_us = sf.max_srtt_us;
            info.cwnd = tp.snd_cwnd;
            info.ssthresh = tp.snd_ssthresh;
            info.in_flight = tp.packets_in_flight();
            info.unsent = sf.sender.unsent_segs().min(u32::MAX as u64) as u32;
            info.mss = tp.mss_cache;
            if !extended {
                continue; // the rest keep their defaults (SubflowInfo's documentation)
            }
            let model = sf.sender.cc.path_model(tp);
            let min_rtt_us = (tp.min_rtt_us != u64::MAX).then_some(tp.min_rtt_us);
            info.joining = sf.is_joining();
            info.queued_segs = sf.queue.len() as u32;
            info.queued_bytes = sf.queue_bytes;
            info.btl_bw_bps = model.map_or(0.0, |m| m.bw_bps);
            info.rtprop_us = model
                .and_then(|m| m.min_rtt_us.map(u64::from))
                .or(min_rtt_us)
                .unwrap_or(0);
            info.phase = model.map(|m| m.phase);
            info.loss_rate = sf.loss_rate;
        }
    }

    /// Hands data to subflows until nothing more can go: reinjections first (on the fastest
    /// available subflow that did not carry the DSN), then the heads of the subflows' send
    /// queues (to those with cwnd space), then whatever the scheduler picks.
    fn schedule<N: SubflowNet>(&mut self, net: &mut N) {
        let now = net.now();
        let mut blocked_noted = false;
        loop {
            self.refresh_infos();
            if let Some(dsn) = self.data.next_reinjection() {
                let carried = self.data.carried(dsn);
                let candidate = (0..self.infos.len())
                    .filter(|&i| carried & (1 << i) == 0 && self.infos[i].available())
                    .min_by_key(|&i| (self.infos[i].srtt_us, i));
                if let Some(s) = candidate {
                    self.data.pop_reinjection();
                    self.reinjected_segs += 1;
                    self.subflows[s].segs_reinjected += 1;
                    self.data.note_handed_over(dsn, now); // a queued DSN's first hand-over
                    self.assign(s, dsn, net);
                    continue;
                }
            }
            if let Some(s) = (0..self.infos.len())
                .find(|&i| !self.subflows[i].queue.is_empty() && self.infos[i].available())
            {
                let dsn = self.subflows[s].dequeue().expect("queued");
                // Skip a DSN the subflow already carried (reinjected to it meanwhile).
                if self.data.carried(dsn) & (1 << s) == 0 {
                    self.data.note_handed_over(dsn, now);
                    self.assign(s, dsn, net);
                }
                continue;
            }
            let can_send_new = self.data.can_send_new();
            if !can_send_new && self.data.has_unsent() && !blocked_noted {
                self.data.window_blocked += 1;
                blocked_noted = true;
            }
            let cx = SchedContext {
                now,
                subflows: &self.infos,
                can_send_new,
                data_una: self.data.una,
                dsn_next: self.data.next,
                queued_bytes: self.data.queued_bytes(),
                send_window_bytes: self.rwnd_bytes,
                window_blocked: self.data.window_blocked,
                penalizations: self.penalizations,
                next_payload_bytes: if self.scheduler_uses_extended_info {
                    self.data.next_payload()
                } else {
                    0
                },
            };
            let window_blocked = !can_send_new && self.data.has_unsent();
            if window_blocked && self.scheduler.uses_receive_buffer_optimization() {
                // The connection window is full: ask the scheduler which subflow it would use
                // for new data, and let that subflow help the segment holding the window back
                // (mptcp_sched.c: __mptcp_next_segment → mptcp_rcv_buf_optimization(sk, 1)).
                let cx = SchedContext {
                    can_send_new: true,
                    ..cx
                };
                match self.scheduler.pick(&cx) {
                    Pick::New(mask) if mask != 0 => {
                        let sub = mask.trailing_zeros() as usize;
                        if sub < self.subflows.len()
                            && self.receive_buffer_optimization(sub, now, net)
                        {
                            continue;
                        }
                    }
                    _ => {}
                }
                break;
            }
            match self.scheduler.pick(&cx) {
                Pick::New(mask) if can_send_new => {
                    // Only subflows that can take it (a scheduler's mistake must not loop).
                    let mask = (0..self.infos.len())
                        .filter(|&i| mask & (1 << i) != 0 && self.infos[i].available())
                        .fold(0, |m: SubflowMask, i| m | 1 << i);
                    if mask == 0 {
                        break;
                    }
                    let dsn = self.data.new_dsn(now);
                    for s in 0..self.subflows.len() {
                        if mask & (1 << s) != 0 {
                            self.assign(s, dsn, net);
                        }
                    }
                }
                Pick::Existing { sub, dsn }
                    if dsn >= self.data.una
                        && dsn < self.data.next
                        && self.infos.get(sub).is_some_and(|i| i.available()) =>
                {
                    self.assign(sub, dsn, net);
                }
                Pick::Enqueue(mask) if can_send_new => {
                    // Only open subflows whose queue is under the guard.
                    let mask = (0..self.subflows.len())
                        .filter(|&i| {
                            let sf = &self.subflows[i];
                            mask & (1 << i) != 0
                                && sf.may_queue()
                                && (sf.queue.len() as u32) < MAX_QUEUED_SEGS
                        })
                        .fold(0, |m: SubflowMask, i| m | 1 << i);
                    if mask == 0 {
                        break;
                    }
                    let payload = self.data.next_payload();
                    let dsn = self.data.new_queued_dsn();
                    for s in 0..self.subflows.len() {
                        if mask & (1 << s) != 0 {
                            self.subflows[s].enqueue(dsn, payload);
                        }
                    }
                }
                _ => break,
            }
        }
        if let Some(at) = self.scheduler.wake_at() {
            if at > now {
                net.arm(0, Timer::Scheduler, at);
            }
        }
    }

    /// multipath-tcp.org's mptcp_rcv_buf_optimization (with penalisation), for subflow `sub`
    /// that would send new data were the connection window not full. The DSN at the DATA_ACK
    /// (the one holding the window) is in flight on other subflows:
    /// * penalise: at most once per srtt of `sub`, every slower subflow carrying it that is in
    ///   the Open state has its cwnd halved (and ssthresh halved unless in slow start);
    /// * opportunistic retransmission: if `sub` has not carried it, send it on `sub` when a
    ///   carrier has cwnd ≤ 4 or every carrier is more than 4 times slower than `sub`.
    ///
    /// Returns whether the DSN was handed to `sub`.
    fn receive_buffer_optimization<N: SubflowNet>(
        &mut self,
        sub: usize,
        now: Nanos,
        net: &mut N,
    ) -> bool {
        let head = self.data.una;
        if head >= self.data.next {
            return false;
        }
        let carried = self.data.carried(head);
        let srtt = self.subflows[sub].sender.tp.srtt_us;
        let may_penalize = self.last_rbuf_opti[sub].is_none_or(|t| now >= t + srtt * 1000);
        if may_penalize {
            for j in 0..self.subflows.len() {
                let tp = &mut self.subflows[j].sender.tp;
                if j != sub
                    && carried & (1 << j) != 0
                    && srtt < tp.srtt_us
                    && tp.ca_state == rove_tcp::state::CaState::Open
                {
                    let prior_cwnd = tp.snd_cwnd;
                    tp.snd_cwnd = (tp.snd_cwnd >> 1).max(1);
                    if prior_cwnd >= tp.snd_ssthresh {
                        tp.snd_ssthresh = (tp.snd_ssthresh >> 1).max(2);
                    }
                    self.last_rbuf_opti[sub] = Some(now);
                    self.penalizations += 1;
                }
            }
        }
        if carried & (1 << sub) != 0 {
            return false;
        }
        let mut do_retrans = false;
        for j in 0..self.subflows.len() {
            if j == sub || carried & (1 << j) == 0 {
                continue;
            }
            let tp = &self.subflows[j].sender.tp;
            if tp.snd_cwnd <= 4 {
                do_retrans = true;
                break;
            }
            if 4 * srtt >= tp.srtt_us {
                do_retrans = false;
                break;
            }
            do_retrans = true;
        }
        self.refresh_infos();
        if !do_retrans || !self.infos[sub].available() {
            return false;
        }
        self.opportunistic_segs += 1;
        self.assign(sub, head, net);
        true
    }

    /// Maps `dsn` to subflow `s`'s next sequence number and lets the subflow send.
    fn assign<N: SubflowNet>(&mut self, s: usize, dsn: u64, net: &mut N) {
        let payload = self.data.payload(dsn);
        self.data.note_carried(dsn, s);
        let Subflow {
            sender,
            map,
            segs_assigned,
            bytes_assigned,
            ..
        } = &mut self.subflows[s];
        let seq = sender.feed(payload, net.now());
        map.push(seq, dsn);
        *segs_assigned += 1;
        *bytes_assigned += payload as u64;
        sender.push(&mut SubWire {
            net,
            sub: s,
            stamp: Stamp::Dsn(map),
        });
    }

    /// Time-averaged reordering-buffer occupancy from the start to `now`, bytes.
    pub fn mean_ofo_bytes(&self, now: Nanos) -> f64 {
        self.reorder.mean_ofo_bytes(self.start_ns, now)
    }
}

/// A subflow: a fed sender (doing tcp_sendmsg's work at each hand-over when an application
/// writes over time) and a receiver advertising the connection's window (a subflow's own byte
/// count is not the application's: the connection's reordering buffer is).
fn new_subflow(
    cc: Box<dyn CongestionControl>,
    rwnd_bytes: u64,
    app_writes: Option<bool>,
) -> Subflow {
    let mut sender = TcpSender::new_fed(cc);
    sender.set_mptcp_subflow();
    if let Some(slow_start_after_idle) = app_writes {
        sender.set_app_writes(slow_start_after_idle);
    }
    Subflow::new(
        sender,
        TcpReceiver::new(Segments { size_bytes: None }, rwnd_bytes),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched;
    use rove_tcp::MSS;

    /// A driver that keeps what the connection sends, for the test to deliver by hand.
    #[derive(Default)]
    struct MockNet {
        now: Nanos,
        sent: Vec<(usize, Direction, Packet)>,
    }

    impl SubflowNet for MockNet {
        fn now(&self) -> Nanos {
            self.now
        }
        fn transmit(&mut self, sub: usize, direction: Direction, packet: Packet) {
            self.sent.push((sub, direction, packet));
        }
        fn arm(&mut self, _sub: usize, _timer: Timer, _at: Nanos) {}
    }

    impl MockNet {
        /// Takes the packets subflow `sub` sent in `direction`, oldest first.
        fn take(&mut self, sub: usize, direction: Direction) -> Vec<Packet> {
            let (mine, rest) = self
                .sent
                .drain(..)
                .partition(|(s, d, _)| *s == sub && *d == direction);
            self.sent = rest;
            mine.into_iter().map(|(_, _, p)| p).collect()
        }
    }

    fn connection(scheduler: &str, size_bytes: Option<u64>) -> Connection {
        let scheduler = sched::build(scheduler, &toml::Table::new())
            .unwrap()
            .unwrap();
        connection_with(scheduler, size_bytes)
    }

    fn connection_with(scheduler: Box<dyn Scheduler>, size_bytes: Option<u64>) -> Connection {
        let built =
            crate::coupling::build_subflow_ccs("uncoupled", "reno", &toml::Table::new(), 2, |_| 1)
                .unwrap();
        let mut c = Connection::new(ConnectionConfig {
            ccs: built.ccs,
            coupling: built.coupling,
            scheduler,
            data: ConnectionData::Bulk { size_bytes },
            rwnd_bytes: 6 << 20,
            start_ns: 0,
            detection: None,
            receiver: None,
        });
        c.reorder.delivery_log = Some(Vec::new());
        c
    }

    /// Delivers `packets` to the far end of subflow `sub` at the net's time.
    fn deliver(
        c: &mut Connection,
        net: &mut MockNet,
        sub: usize,
        direction: Direction,
        packets: Vec<Packet>,
    ) {
        for p in packets {
            c.on_packet(sub, &p, direction, net);
        }
    }

    fn dsns(packets: &[Packet]) -> Vec<u64> {
        packets
            .iter()
            .filter(|p| p.kind == Kind::Segment)
            .map(|p| p.dsn)
            .collect()
    }

    const MS: Nanos = 1_000_000;

    #[test]
    fn second_subflow_joins_one_rtt_later_and_min_rtt_fills_the_fast_path_first() {
        let mut c = connection("minrtt", None);
        let mut net = MockNet::default();
        c.start(&mut net);
        let syn = net.take(0, Direction::Data);
        assert_eq!(syn.len(), 1);
        assert!(net.sent.is_empty(), "only subflow 0 opens at the start");
        deliver(&mut c, &mut net, 0, Direction::Data, syn);
        let synack = net.take(0, Direction::Ack);
        // Subflow 0's RTT is 10 ms: it is established at 10 ms, and only then does subflow 1
        // send its SYN (MP_JOIN). Subflow 0 alone takes the initial window, DSNs 0..9.
        net.now = 10 * MS;
        deliver(&mut c, &mut net, 0, Direction::Ack, synack);
        assert_eq!(c.subflows[1].started_at, Some(10 * MS));
        let join = net.take(1, Direction::Data);
        assert_eq!(join.len(), 1);
        assert_eq!(join[0].kind, Kind::Syn);
        let first = net.take(0, Direction::Data);
        assert_eq!(dsns(&first), (0..10).collect::<Vec<_>>());
        // Subflow 1's RTT is 100 ms: established at 110 ms. Subflow 0 has its cwnd (10) in
        // flight, so subflow 1 takes DSNs 10..19.
        deliver(&mut c, &mut net, 1, Direction::Data, join);
        let join_ack = net.take(1, Direction::Ack);
        net.now = 110 * MS;
        deliver(&mut c, &mut net, 1, Direction::Ack, join_ack);
        let second = net.take(1, Direction::Data);
        assert_eq!(dsns(&second), (10..20).collect::<Vec<_>>());
        // Subflow 0's segments arrive (120 ms) and their ACKs return (130 ms): slow start doubles
        // its cwnd to 20, and with subflow 1 full the 20 new DSNs go on subflow 0.
        net.now = 120 * MS;
        deliver(&mut c, &mut net, 0, Direction::Data, first);
        assert_eq!((c.reorder.rcv_nxt, c.reorder.ofo_bytes), (10, 0));
        let acks = net.take(0, Direction::Ack);
        assert_eq!(acks.last().unwrap().dsn, 10, "DATA_ACK");
        net.now = 130 * MS;
        deliver(&mut c, &mut net, 0, Direction::Ack, acks);
        assert_eq!(c.data.una, 10);
        assert_eq!(c.subflows[0].sender.tp.snd_cwnd, 20);
        let third = net.take(0, Direction::Data);
        assert_eq!(dsns(&third), (20..40).collect::<Vec<_>>());
        // The fast path's data arrives before the slow path's: held in the reordering buffer.
        net.now = 135 * MS;
        deliver(&mut c, &mut net, 0, Direction::Data, third);
        assert_eq!(
            (c.reorder.rcv_nxt, c.reorder.ofo_bytes),
            (10, 20 * MSS as u64)
        );
        // Then DSNs 10..19 fill the gap: all 40 delivered, in order, once.
        net.now = 160 * MS;
        deliver(&mut c, &mut net, 1, Direction::Data, second);
        assert_eq!(
            (
                c.reorder.rcv_nxt,
                c.reorder.ofo_bytes,
                c.reorder.ofo_max_bytes
            ),
            (40, 0, 20 * MSS as u64)
        );
        assert_eq!(
            c.reorder.delivery_log.as_deref().unwrap(),
            &(0..40).collect::<Vec<_>>()[..]
        );
        // Application delay: DSNs 20..39 handed over at 130 ms and delivered at 160 ms (the
        // shortest), DSN 0 handed over at 10 ms and delivered at 120 ms.
        assert_eq!(c.app_delay.count(), 40);
        assert_eq!(c.app_delay.min(), Some(30 * MS));
        assert!(c.app_delay.max().unwrap() >= 120 * MS - 10 * MS);
    }

    #[test]
    fn an_rto_marks_the_subflow_failed_and_reinjects_its_data_on_the_other() {
        let mut c = connection("minrtt", Some(30 * MSS as u64));
        let mut net = MockNet::default();
        c.start(&mut net);
        let syn = net.take(0, Direction::Data);
        deliver(&mut c, &mut net, 0, Direction::Data, syn);
        let synack = net.take(0, Direction::Ack);
        net.now = 10 * MS;
        deliver(&mut c, &mut net, 0, Direction::Ack, synack);
        let lost = net.take(0, Direction::Data); // DSNs 0..9: the path goes down, never arrive
        let join = net.take(1, Direction::Data);
        deliver(&mut c, &mut net, 1, Direction::Data, join);
        let join_ack = net.take(1, Direction::Ack);
        net.now = 60 * MS;
        deliver(&mut c, &mut net, 1, Direction::Ack, join_ack);
        assert_eq!(
            dsns(&net.take(1, Direction::Data)),
            (10..20).collect::<Vec<_>>()
        );
        // Subflow 0's tail loss probe, then its RTO fire (the mock does not run timers: call
        // them at times past their deadlines). The probe retransmits the tail, DSN 9.
        net.now = 1_000 * MS;
        c.on_timer(0, Timer::LossProbe, &mut net);
        assert_eq!(dsns(&net.take(0, Direction::Data)), [9]);
        assert!(
            !c.subflows[0].potentially_failed,
            "a loss probe is not a failure"
        );
        net.now = 5_000 * MS;
        c.on_timer(0, Timer::Rto, &mut net);
        assert!(c.subflows[0].potentially_failed);
        assert_eq!(c.subflows[0].failures, 1);
        assert_eq!(
            dsns(&net.take(0, Direction::Data)),
            [0],
            "subflow 0 retransmits its head itself"
        );
        // Its DSNs 0..9 wait for reinjection on subflow 1, which has no cwnd space yet.
        assert_eq!(c.data.reinject.len(), 10);
        assert_eq!(c.reinjected_segs, 0);
        drop(lost);
        c.subflows[1].sender.tp.snd_cwnd = 40; // room for the test's purpose
        c.on_timer(1, Timer::Pacing, &mut net); // any event runs the scheduler
        let again = net.take(1, Direction::Data);
        // Reinjections first, then the rest of the 30-segment transfer.
        assert_eq!(dsns(&again), (0..10).chain(20..30).collect::<Vec<_>>());
        assert_eq!(c.reinjected_segs, 10);
        assert_eq!(again[9].payload_bytes, MSS);
    }

    /// A scheduler that queues each of the first `dsns` new DSNs on the subflows of `mask`.
    struct QueueOn {
        mask: SubflowMask,
        dsns: u64,
    }

    impl Scheduler for QueueOn {
        fn name(&self) -> &'static str {
            "queue-on"
        }
        fn pick(&mut self, cx: &SchedContext) -> Pick {
            if cx.can_send_new && cx.dsn_next < self.dsns {
                Pick::Enqueue(self.mask)
            } else {
                Pick::Wait
            }
        }
    }

    /// Opens a connection scheduled by `QueueOn { mask, dsns }`; subflow 0 is established at
    /// 10 ms (RTT 10 ms), when subflow 1 sends its MP_JOIN SYN (returned).
    fn queueing_connection(mask: SubflowMask, dsns: u64) -> (Connection, MockNet, Vec<Packet>) {
        let mut c = connection_with(Box::new(QueueOn { mask, dsns }), None);
        let mut net = MockNet::default();
        c.start(&mut net);
        let syn = net.take(0, Direction::Data);
        deliver(&mut c, &mut net, 0, Direction::Data, syn);
        let synack = net.take(0, Direction::Ack);
        net.now = 10 * MS;
        deliver(&mut c, &mut net, 0, Direction::Ack, synack);
        let join = net.take(1, Direction::Data);
        (c, net, join)
    }

    #[test]
    fn queued_data_goes_beyond_cwnd_and_is_fed_first_as_acks_open_the_window() {
        // 25 DSNs queued on subflow 0, whose initial cwnd is 10: DSNs 0..9 leave at once, 15
        // wait in its send queue.
        let (mut c, mut net, _join) = queueing_connection(0b01, 25);
        let first = net.take(0, Direction::Data);
        assert_eq!(dsns(&first), (0..10).collect::<Vec<_>>());
        assert_eq!(c.subflows[0].queue.len(), 15);
        assert_eq!(c.subflows[0].queue_bytes, 15 * MSS as u64);
        assert_eq!(c.data.next, 25, "the queued DSNs exist at the connection");
        assert_eq!(c.data.first_tx(10), None, "queued, not handed over yet");
        // Their ACKs return at 20 ms: slow start doubles cwnd to 20, and the queue's 15 DSNs go
        // out first, in order; the scheduler has nothing more to add.
        net.now = 15 * MS;
        deliver(&mut c, &mut net, 0, Direction::Data, first);
        let acks = net.take(0, Direction::Ack);
        net.now = 20 * MS;
        deliver(&mut c, &mut net, 0, Direction::Ack, acks);
        assert_eq!(c.subflows[0].sender.tp.snd_cwnd, 20);
        assert_eq!(
            dsns(&net.take(0, Direction::Data)),
            (10..25).collect::<Vec<_>>()
        );
        assert!(c.subflows[0].queue.is_empty());
        assert_eq!(c.subflows[0].queue_bytes, 0);
        // The application delay of a queued DSN starts at its hand-over (20 ms), not at the
        // time it was queued (10 ms).
        assert_eq!(c.data.first_tx(10), Some(20 * MS));
    }

    #[test]
    fn queued_copies_of_data_acked_dsns_are_dropped() {
        // DSNs 0..4 queued on both subflows: subflow 0 sends them at once; subflow 1 is still
        // joining, so its copies wait.
        let (mut c, mut net, join) = queueing_connection(0b11, 5);
        let first = net.take(0, Direction::Data);
        assert_eq!(dsns(&first), (0..5).collect::<Vec<_>>());
        assert_eq!(c.subflows[1].queue.len(), 5);
        assert!(c.subflows[1].is_joining());
        // DSNs 0..3 arrive over subflow 0: DATA_ACK 4 reaches the sender, and subflow 1's
        // copies of DSNs 0..3 are dropped unsent.
        net.now = 15 * MS;
        deliver(&mut c, &mut net, 0, Direction::Data, first[..4].to_vec());
        let acks = net.take(0, Direction::Ack);
        assert_eq!(acks.last().unwrap().dsn, 4);
        net.now = 20 * MS;
        deliver(&mut c, &mut net, 0, Direction::Ack, acks);
        assert_eq!(c.data.una, 4);
        assert_eq!((c.subflows[1].queue_drops, c.queue_drops()), (4, 4));
        assert_eq!(c.subflows[1].queue.len(), 1);
        // Subflow 1 is established at 60 ms: it sends its one remaining copy, DSN 4.
        deliver(&mut c, &mut net, 1, Direction::Data, join);
        let join_ack = net.take(1, Direction::Ack);
        net.now = 60 * MS;
        deliver(&mut c, &mut net, 1, Direction::Ack, join_ack);
        assert_eq!(dsns(&net.take(1, Direction::Data)), [4]);
        assert!(c.subflows[1].queue.is_empty());
    }

    #[test]
    fn a_failed_subflows_send_queue_is_reinjected_on_the_other() {
        // 25 DSNs queued on subflow 0: 0..9 in flight (never to arrive), 10..24 queued.
        let (mut c, mut net, join) = queueing_connection(0b01, 25);
        let lost = net.take(0, Direction::Data);
        assert_eq!(dsns(&lost), (0..10).collect::<Vec<_>>());
        deliver(&mut c, &mut net, 1, Direction::Data, join);
        let join_ack = net.take(1, Direction::Ack);
        net.now = 60 * MS;
        deliver(&mut c, &mut net, 1, Direction::Ack, join_ack);
        assert!(
            net.take(1, Direction::Data).is_empty(),
            "the scheduler gives subflow 1 nothing"
        );
        // Subflow 0's tail loss probe, then its RTO (the mock runs no timers: called past their
        // deadlines); the RTO marks it potentially failed: its 10 DSNs in flight and 15 queued
        // are queued for reinjection, oldest first, and subflow 1 takes the first 10 (its cwnd).
        net.now = 1_000 * MS;
        c.on_timer(0, Timer::LossProbe, &mut net);
        net.now = 5_000 * MS;
        c.on_timer(0, Timer::Rto, &mut net);
        assert!(c.subflows[0].potentially_failed);
        assert!(c.subflows[0].queue.is_empty());
        // The RTO is subflow 0's first loss event: q = 1/8 · lost / sent.
        let sf = &c.subflows[0];
        let (lost, sent) = (sf.sender.tp.lost, sf.sender.stats.segs_sent);
        assert!(lost >= 1 && sent >= 11, "{lost} of {sent}");
        assert_eq!(sf.loss_events, 1);
        assert_eq!(sf.loss_rate, 0.125 * lost as f64 / sent as f64);
        assert_eq!(
            dsns(&net.take(1, Direction::Data)),
            (0..10).collect::<Vec<_>>()
        );
        assert_eq!(c.data.reinject.len(), 15);
        // With room (cwnd raised for the test) it takes the formerly queued 10..24.
        c.subflows[1].sender.tp.snd_cwnd = 40;
        c.on_timer(1, Timer::Pacing, &mut net);
        assert_eq!(
            dsns(&net.take(1, Direction::Data)),
            (10..25).collect::<Vec<_>>()
        );
        assert_eq!(c.reinjected_segs, 25);
    }

    #[test]
    fn dsns_another_subflow_still_queues_are_not_reinjected() {
        // DSNs 0..24 queued on both subflows; subflow 0 sends 0..9 and queues 10..24, subflow 1
        // (joining) queues 0..24. Subflow 0 fails before subflow 1 is established: only its
        // 10 DSNs in flight are reinjected (mptcp_reinject_data); its queued 10..24 are left to
        // subflow 1's queue.
        let (mut c, mut net, join) = queueing_connection(0b11, 25);
        assert_eq!(
            dsns(&net.take(0, Direction::Data)),
            (0..10).collect::<Vec<_>>()
        );
        net.now = 1_000 * MS;
        c.on_timer(0, Timer::LossProbe, &mut net);
        net.now = 5_000 * MS;
        c.on_timer(0, Timer::Rto, &mut net);
        assert!(c.subflows[0].potentially_failed);
        assert_eq!(c.data.reinject.len(), 10);
        // Subflow 1 is established: the 10 reinjections go first, then its queue, whose copies
        // of DSNs 0..9 it has carried already (skipped).
        deliver(&mut c, &mut net, 1, Direction::Data, join);
        let join_ack = net.take(1, Direction::Ack);
        net.now = 5_050 * MS;
        c.subflows[1].sender.tp.snd_cwnd = 40;
        deliver(&mut c, &mut net, 1, Direction::Ack, join_ack);
        assert_eq!(
            dsns(&net.take(1, Direction::Data)),
            (0..25).collect::<Vec<_>>()
        );
        assert!(c.subflows[1].queue.is_empty());
    }
}
