//! The simulated world and its event loop.
//!
//! Five kinds of event drive everything: a flow starts, a link's serializer is due, a packet
//! reaches the far end of a link, an endpoint's timer fires, and the recorder samples. A
//! multipath flow (a `rove_mp::Connection`) has its own start and timer events, per subflow, and
//! its packets say which subflow's path they travel (`Packet::subflow`). Packets
//! live in the arena and move by index; an endpoint's timer is armed lazily (one pending event
//! per flow and timer; a deadline that moved later is re-armed when the early event fires), so
//! an ACK that pushes the RTO back costs no heap operation.

use crate::record::Recorder;
use rove_mp::{Connection, SubflowNet};
use rove_scenario::Scenario;
use rove_sim::event::EventQueue;
use rove_sim::link::{Link, LinkOutput};
use rove_sim::packet::{Direction, Packet, PacketArena, PacketId};
use rove_sim::Nanos;
use rove_tcp::receiver::TcpReceiver;
use rove_tcp::sender::TcpSender;
use rove_tcp::{Timer, Wire};

#[derive(Debug, Clone, Copy)]
pub enum Event {
    Start(u32),
    Service(u32),
    Arrive(PacketId),
    Timer {
        flow: u32,
        timer: Timer,
    },
    /// A multipath connection opens (its first subflow sends the SYN).
    ConnectionStart(u32),
    SubflowTimer {
        conn: u32,
        sub: u8,
        timer: Timer,
    },
    Sample,
}

pub struct Flow {
    pub name: String,
    pub cc_name: String,
    pub start_ns: Nanos,
    pub path: Vec<u32>,
    pub ack_path: Vec<u32>,
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    pending: [Option<Nanos>; Timer::COUNT],
}

impl Flow {
    pub fn new(
        name: String,
        cc_name: String,
        start_ns: Nanos,
        path: Vec<u32>,
        ack_path: Vec<u32>,
        sender: TcpSender,
        receiver: TcpReceiver,
    ) -> Self {
        Flow {
            name,
            cc_name,
            start_ns,
            path,
            ack_path,
            sender,
            receiver,
            pending: [None; Timer::COUNT],
        }
    }
}

/// A multipath flow: the connection and the routes of its subflows.
pub struct MpFlow {
    pub name: String,
    pub cc_name: String,
    pub coupling: String,
    pub start_ns: Nanos,
    /// Per subflow: forward links and ACK links.
    pub paths: Vec<SubflowRoute>,
    pub conn: Connection,
    pending: Vec<[Option<Nanos>; Timer::COUNT]>,
}

#[derive(Debug, Clone)]
pub struct SubflowRoute {
    pub path: Vec<u32>,
    pub ack_path: Vec<u32>,
}

impl MpFlow {
    pub fn new(
        name: String,
        cc_name: String,
        coupling: String,
        start_ns: Nanos,
        paths: Vec<SubflowRoute>,
        conn: Connection,
    ) -> Self {
        let pending = vec![[None; Timer::COUNT]; paths.len()];
        MpFlow {
            name,
            cc_name,
            coupling,
            start_ns,
            paths,
            conn,
            pending,
        }
    }
}

/// Where scenario flow i lives in the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowRef {
    /// `World::flows[i]`.
    Single(usize),
    /// `World::connections[i]`.
    Multi(usize),
}

pub struct World {
    pub scenario: Scenario,
    now: Nanos,
    queue: EventQueue<Event>,
    arena: PacketArena,
    pub links: Vec<Link>,
    /// Single-path flows, in scenario order.
    pub flows: Vec<Flow>,
    /// Multipath flows, in scenario order.
    pub connections: Vec<MpFlow>,
    /// Scenario flow index to the flow or connection.
    pub order: Vec<FlowRef>,
    out: Vec<LinkOutput>,
    pub recorder: Recorder,
}

/// What an endpoint sees of the world while it handles one event.
struct Net<'a> {
    now: Nanos,
    flow: u32,
    /// Direction of the packets this endpoint sends.
    side: Direction,
    route: &'a [u32],
    pending: &'a mut [Option<Nanos>; Timer::COUNT],
    queue: &'a mut EventQueue<Event>,
    arena: &'a mut PacketArena,
    links: &'a mut [Link],
    out: &'a mut Vec<LinkOutput>,
}

impl Wire for Net<'_> {
    #[inline]
    fn now(&self) -> Nanos {
        self.now
    }

    #[inline]
    fn transmit(&mut self, mut p: Packet) {
        p.flow = self.flow;
        p.direction = self.side;
        p.hop = 0;
        let bytes = p.wire_bytes;
        let id = self.arena.alloc(p);
        let link = self.route[0];
        offer(
            self.now, link, id, bytes, self.links, self.queue, self.arena, self.out,
        );
    }

    #[inline]
    fn arm(&mut self, timer: Timer, at: Nanos) {
        let slot = &mut self.pending[timer.index()];
        if slot.is_none_or(|p| at < p) {
            *slot = Some(at);
            self.queue.push(
                at,
                Event::Timer {
                    flow: self.flow,
                    timer,
                },
            );
        }
    }
}

/// What a multipath connection sees of the world while it handles one event.
struct MpNet<'a> {
    now: Nanos,
    conn: u32,
    paths: &'a [SubflowRoute],
    pending: &'a mut [[Option<Nanos>; Timer::COUNT]],
    queue: &'a mut EventQueue<Event>,
    arena: &'a mut PacketArena,
    links: &'a mut [Link],
    out: &'a mut Vec<LinkOutput>,
}

impl SubflowNet for MpNet<'_> {
    #[inline]
    fn now(&self) -> Nanos {
        self.now
    }

    #[inline]
    fn transmit(&mut self, sub: usize, direction: Direction, mut p: Packet) {
        p.flow = self.conn;
        p.direction = direction;
        p.hop = 0;
        let route = &self.paths[sub];
        let link = match direction {
            Direction::Data => route.path[0],
            Direction::Ack => route.ack_path[0],
        };
        let bytes = p.wire_bytes;
        let id = self.arena.alloc(p);
        offer(
            self.now, link, id, bytes, self.links, self.queue, self.arena, self.out,
        );
    }

    #[inline]
    fn arm(&mut self, sub: usize, timer: Timer, at: Nanos) {
        let slot = &mut self.pending[sub][timer.index()];
        if slot.is_none_or(|p| at < p) {
            *slot = Some(at);
            self.queue.push(
                at,
                Event::SubflowTimer {
                    conn: self.conn,
                    sub: sub as u8,
                    timer,
                },
            );
        }
    }
}

/// Offers packet `id` to link `link` and turns the link's requests into events.
#[allow(clippy::too_many_arguments)]
#[inline]
fn offer(
    now: Nanos,
    link: u32,
    id: PacketId,
    bytes: u32,
    links: &mut [Link],
    queue: &mut EventQueue<Event>,
    arena: &mut PacketArena,
    out: &mut Vec<LinkOutput>,
) {
    if let Some(t) = links[link as usize].offer(now, id, bytes, out) {
        queue.push(t, Event::Service(link));
    }
    drain(out, queue, arena);
}

#[inline]
fn drain(out: &mut Vec<LinkOutput>, queue: &mut EventQueue<Event>, arena: &mut PacketArena) {
    for o in out.drain(..) {
        match o {
            LinkOutput::Deliver { id, at } => queue.push(at, Event::Arrive(id)),
            LinkOutput::Drop { id, .. } => arena.release(id),
        }
    }
}

impl World {
    pub(crate) fn new(
        scenario: Scenario,
        links: Vec<Link>,
        flows: Vec<Flow>,
        connections: Vec<MpFlow>,
        order: Vec<FlowRef>,
    ) -> Self {
        let mut queue = EventQueue::with_capacity(4096);
        // Start events in scenario order (ties at one time break by insertion order).
        for r in &order {
            match *r {
                FlowRef::Single(i) => queue.push(flows[i].start_ns, Event::Start(i as u32)),
                FlowRef::Multi(i) => {
                    queue.push(connections[i].start_ns, Event::ConnectionStart(i as u32))
                }
            }
        }
        let recorder = Recorder::new(links.len(), order.len());
        let first_sample = scenario.sample_interval_ns;
        queue.push(first_sample, Event::Sample);
        World {
            scenario,
            now: 0,
            queue,
            arena: PacketArena::with_capacity(4096),
            links,
            flows,
            connections,
            order,
            out: Vec::with_capacity(64),
            recorder,
        }
    }

    /// The connection of scenario flow `flow`, if it is a multipath flow.
    pub fn connection(&self, flow: usize) -> Option<&MpFlow> {
        match self.order.get(flow) {
            Some(&FlowRef::Multi(i)) => Some(&self.connections[i]),
            _ => None,
        }
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    pub fn duration_ns(&self) -> Nanos {
        self.scenario.duration_ns
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.queue.popped()
    }

    pub fn peak_packets(&self) -> usize {
        self.arena.peak_live()
    }

    pub fn is_finished(&self) -> bool {
        self.now >= self.scenario.duration_ns
    }

    /// Processes every event up to and including `t` (capped at the run's duration).
    pub fn run_until(&mut self, t: Nanos) {
        let end = t.min(self.scenario.duration_ns);
        while let Some(next) = self.queue.peek_time() {
            if next > end {
                break;
            }
            let (now, event) = self.queue.pop().expect("peeked");
            self.now = now;
            self.dispatch(event);
        }
        self.now = self.now.max(end);
    }

    pub fn run(&mut self) {
        self.run_until(self.scenario.duration_ns);
    }

    fn dispatch(&mut self, event: Event) {
        let now = self.now;
        match event {
            Event::Service(l) => {
                if let Some(t) = self.links[l as usize].service(now, &mut self.out) {
                    self.queue.push(t, Event::Service(l));
                }
                drain(&mut self.out, &mut self.queue, &mut self.arena);
            }
            Event::Arrive(id) => self.arrive(id),
            Event::Timer { flow, timer } => {
                let f = &mut self.flows[flow as usize];
                if f.pending[timer.index()] != Some(now) {
                    return; // superseded by an earlier arm
                }
                f.pending[timer.index()] = None;
                let Flow {
                    sender,
                    receiver,
                    path,
                    ack_path,
                    pending,
                    ..
                } = f;
                if timer == Timer::DelayedAck {
                    let mut net = Net {
                        now,
                        flow,
                        side: Direction::Ack,
                        route: ack_path,
                        pending,
                        queue: &mut self.queue,
                        arena: &mut self.arena,
                        links: &mut self.links,
                        out: &mut self.out,
                    };
                    receiver.on_timer(timer, &mut net);
                } else {
                    let mut net = Net {
                        now,
                        flow,
                        side: Direction::Data,
                        route: path,
                        pending,
                        queue: &mut self.queue,
                        arena: &mut self.arena,
                        links: &mut self.links,
                        out: &mut self.out,
                    };
                    sender.on_timer(timer, &mut net);
                }
            }
            Event::Start(flow) => {
                let Flow {
                    sender,
                    path,
                    pending,
                    ..
                } = &mut self.flows[flow as usize];
                let mut net = Net {
                    now,
                    flow,
                    side: Direction::Data,
                    route: path,
                    pending,
                    queue: &mut self.queue,
                    arena: &mut self.arena,
                    links: &mut self.links,
                    out: &mut self.out,
                };
                sender.start(&mut net);
            }
            Event::ConnectionStart(c) => {
                let MpFlow {
                    conn,
                    paths,
                    pending,
                    ..
                } = &mut self.connections[c as usize];
                let mut net = MpNet {
                    now,
                    conn: c,
                    paths,
                    pending,
                    queue: &mut self.queue,
                    arena: &mut self.arena,
                    links: &mut self.links,
                    out: &mut self.out,
                };
                conn.start(&mut net);
            }
            Event::SubflowTimer {
                conn: c,
                sub,
                timer,
            } => {
                let MpFlow {
                    conn,
                    paths,
                    pending,
                    ..
                } = &mut self.connections[c as usize];
                let slot = &mut pending[sub as usize][timer.index()];
                if *slot != Some(now) {
                    return; // superseded by an earlier arm
                }
                *slot = None;
                let mut net = MpNet {
                    now,
                    conn: c,
                    paths,
                    pending,
                    queue: &mut self.queue,
                    arena: &mut self.arena,
                    links: &mut self.links,
                    out: &mut self.out,
                };
                conn.on_timer(sub as usize, timer, &mut net);
            }
            Event::Sample => {
                self.recorder.sample(
                    now,
                    &self.order,
                    &self.flows,
                    &self.connections,
                    &self.links,
                );
                let next = now + self.scenario.sample_interval_ns;
                if next <= self.scenario.duration_ns {
                    self.queue.push(next, Event::Sample);
                }
            }
        }
    }

    /// A packet reached the far end of the link it was on: next link, or its endpoint.
    #[inline]
    fn arrive(&mut self, id: PacketId) {
        let now = self.now;
        let p = *self.arena.get(id);
        if let Some(sub) = p.subflow {
            self.arrive_multipath(id, &p, sub as usize);
            return;
        }
        let flow = p.flow;
        let f = &mut self.flows[flow as usize];
        let route = match p.direction {
            Direction::Data => &f.path,
            Direction::Ack => &f.ack_path,
        };
        let next = p.hop as usize + 1;
        if next < route.len() {
            self.arena.get_mut(id).hop = next as u16;
            let link = route[next];
            offer(
                now,
                link,
                id,
                p.wire_bytes,
                &mut self.links,
                &mut self.queue,
                &mut self.arena,
                &mut self.out,
            );
            return;
        }
        self.arena.release(id);
        let Flow {
            sender,
            receiver,
            path,
            ack_path,
            pending,
            ..
        } = f;
        match p.direction {
            Direction::Data => {
                let mut net = Net {
                    now,
                    flow,
                    side: Direction::Ack,
                    route: ack_path,
                    pending,
                    queue: &mut self.queue,
                    arena: &mut self.arena,
                    links: &mut self.links,
                    out: &mut self.out,
                };
                receiver.on_packet(&p, &mut net);
            }
            Direction::Ack => {
                let mut net = Net {
                    now,
                    flow,
                    side: Direction::Data,
                    route: path,
                    pending,
                    queue: &mut self.queue,
                    arena: &mut self.arena,
                    links: &mut self.links,
                    out: &mut self.out,
                };
                sender.on_packet(&p, &mut net);
            }
        }
    }
}

impl World {
    /// `arrive` for a packet of a multipath connection's subflow `sub`.
    fn arrive_multipath(&mut self, id: PacketId, p: &Packet, sub: usize) {
        let now = self.now;
        let c = p.flow;
        let MpFlow {
            conn,
            paths,
            pending,
            ..
        } = &mut self.connections[c as usize];
        let route = match p.direction {
            Direction::Data => &paths[sub].path,
            Direction::Ack => &paths[sub].ack_path,
        };
        let next = p.hop as usize + 1;
        if next < route.len() {
            self.arena.get_mut(id).hop = next as u16;
            let link = route[next];
            offer(
                now,
                link,
                id,
                p.wire_bytes,
                &mut self.links,
                &mut self.queue,
                &mut self.arena,
                &mut self.out,
            );
            return;
        }
        self.arena.release(id);
        let mut net = MpNet {
            now,
            conn: c,
            paths,
            pending,
            queue: &mut self.queue,
            arena: &mut self.arena,
            links: &mut self.links,
            out: &mut self.out,
        };
        conn.on_packet(sub, p, p.direction, &mut net);
    }
}

impl World {
    /// Goodput of flow `flow` between simulated times `from_s` and `to_s` (seconds), from the
    /// recorder's samples of in-order bytes delivered, in Mbit/s. Both times are rounded down to
    /// the sample at or before them (the run's start counts as zero bytes).
    pub fn goodput_mbps_between(&self, flow: usize, from_s: f64, to_s: f64) -> f64 {
        let s = &self.recorder.flows;
        let at = |t: f64| -> u64 {
            (0..s.time_s.len())
                .filter(|&i| {
                    s.flow[i] as usize == flow && s.subflow[i] < 0 && s.time_s[i] <= t + 1e-12
                })
                .last()
                .map_or(0, |i| s.bytes_delivered[i])
        };
        (at(to_s) - at(from_s)) as f64 * 8.0 / (to_s - from_s) / 1e6
    }
}
