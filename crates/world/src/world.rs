//! The simulated world and its event loop.
//!
//! Five kinds of event drive everything: a flow starts, a link's serializer is due, a packet
//! reaches the far end of a link, an endpoint's timer fires, and the recorder samples. Every flow
//! is a [`Transport`] over one or more subflows (a single-path flow has one), so one set of
//! events and one routing driver serve them all. A packet carries the id of its route (an entry
//! of the world's route table, fixed when the packet is sent) and its hop along it; changing a
//! subflow's route therefore changes what later packets take, not the packets in flight.
//!
//! Packets live in the arena and move by index; an endpoint's timer is armed lazily (one pending
//! event per subflow and timer; a deadline that moved later is re-armed when the early event
//! fires), so an ACK that pushes the RTO back costs no heap operation.

use crate::record::Recorder;
use crate::transport::Transport;
use rove_mp::SubflowNet;
use rove_scenario::Scenario;
use rove_sim::event::EventQueue;
use rove_sim::link::{LinkModel, LinkOutput, Offer};
use rove_sim::packet::{Direction, Packet, PacketArena, PacketId};
use rove_sim::Nanos;
use rove_tcp::Timer;

#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// Flow `0` opens (its first subflow sends the SYN).
    Start(u32),
    /// Link `0`'s serializer is due.
    Service(u32),
    /// A packet reached the far end of the link it is on.
    Arrive(PacketId),
    /// Timer `timer` of subflow `sub` of flow `flow`.
    Timer {
        flow: u32,
        sub: u8,
        timer: Timer,
    },
    Sample,
}

/// One hop of a route: a link and the port of it the packet goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub link: u32,
    pub port: u16,
}

/// A route: the hops a packet crosses, in order.
pub type Route = Box<[Hop]>;

/// The routes one subflow's packets take (ids into [`World::routes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubflowRoutes {
    /// Sender to receiver.
    pub data: u32,
    /// Receiver to sender.
    pub ack: u32,
}

impl SubflowRoutes {
    fn get(&self, direction: Direction) -> u32 {
        match direction {
            Direction::Data => self.data,
            Direction::Ack => self.ack,
        }
    }
}

/// One flow of the scenario: its transport and where its subflows' packets go.
pub struct Flow {
    pub name: String,
    /// The algorithm the scenario gave the flow.
    pub cc_name: String,
    /// Multipath flows: the coupling as resolved ("connection" or "uncoupled").
    pub coupling: Option<String>,
    pub start_ns: Nanos,
    pub transport: Transport,
    /// Per subflow.
    pub routes: Vec<SubflowRoutes>,
    /// Per subflow and timer: the deadline of the pending timer event.
    pending: Vec<[Option<Nanos>; Timer::COUNT]>,
}

impl Flow {
    pub fn new(
        name: String,
        cc_name: String,
        coupling: Option<String>,
        start_ns: Nanos,
        transport: Transport,
        routes: Vec<SubflowRoutes>,
    ) -> Self {
        debug_assert_eq!(routes.len(), transport.subflow_count());
        let pending = vec![[None; Timer::COUNT]; routes.len()];
        Flow {
            name,
            cc_name,
            coupling,
            start_ns,
            transport,
            routes,
            pending,
        }
    }

    pub fn is_multipath(&self) -> bool {
        matches!(self.transport, Transport::Multipath(_))
    }
}

pub struct World {
    pub scenario: Scenario,
    now: Nanos,
    queue: EventQueue<Event>,
    arena: PacketArena,
    pub links: Vec<Box<dyn LinkModel>>,
    /// The route table packets index.
    pub routes: Vec<Route>,
    /// In scenario order.
    pub flows: Vec<Flow>,
    out: Vec<LinkOutput>,
    pub recorder: Recorder,
}

/// What one flow sees of the world while it handles one event.
struct Net<'a> {
    now: Nanos,
    flow: u32,
    subflow_routes: &'a [SubflowRoutes],
    pending: &'a mut [[Option<Nanos>; Timer::COUNT]],
    routes: &'a [Route],
    queue: &'a mut EventQueue<Event>,
    arena: &'a mut PacketArena,
    links: &'a mut [Box<dyn LinkModel>],
    out: &'a mut Vec<LinkOutput>,
}

impl SubflowNet for Net<'_> {
    #[inline]
    fn now(&self) -> Nanos {
        self.now
    }

    #[inline]
    fn transmit(&mut self, sub: usize, direction: Direction, mut p: Packet) {
        let route = self.subflow_routes[sub].get(direction);
        p.flow = self.flow;
        p.direction = direction;
        p.route = route;
        p.hop = 0;
        let flow = p.flow;
        let bytes = p.wire_bytes;
        let id = self.arena.alloc(p);
        let hop = self.routes[route as usize][0];
        offer(
            self.now, hop, id, bytes, flow, self.links, self.queue, self.arena, self.out,
        );
    }

    #[inline]
    fn arm(&mut self, sub: usize, timer: Timer, at: Nanos) {
        let slot = &mut self.pending[sub][timer.index()];
        if slot.is_none_or(|p| at < p) {
            *slot = Some(at);
            self.queue.push(
                at,
                Event::Timer {
                    flow: self.flow,
                    sub: sub as u8,
                    timer,
                },
            );
        }
    }
}

/// Offers packet `id` to the link of `hop` and turns the link's requests into events.
#[allow(clippy::too_many_arguments)]
#[inline]
fn offer(
    now: Nanos,
    hop: Hop,
    id: PacketId,
    bytes: u32,
    flow: u32,
    links: &mut [Box<dyn LinkModel>],
    queue: &mut EventQueue<Event>,
    arena: &mut PacketArena,
    out: &mut Vec<LinkOutput>,
) {
    let packet = Offer {
        id,
        bytes,
        port: hop.port,
        flow,
    };
    if let Some(t) = links[hop.link as usize].offer(now, packet, out) {
        queue.push(t, Event::Service(hop.link));
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
        links: Vec<Box<dyn LinkModel>>,
        routes: Vec<Route>,
        flows: Vec<Flow>,
    ) -> Self {
        let mut queue = EventQueue::with_capacity(4096);
        // Start events in scenario order (ties at one time break by insertion order).
        for (i, f) in flows.iter().enumerate() {
            queue.push(f.start_ns, Event::Start(i as u32));
        }
        let recorder = Recorder::new(links.len());
        let first_sample = scenario.sample_interval_ns;
        queue.push(first_sample, Event::Sample);
        World {
            scenario,
            now: 0,
            queue,
            arena: PacketArena::with_capacity(4096),
            links,
            routes,
            flows,
            out: Vec::with_capacity(64),
            recorder,
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

    /// The hops of route `route`.
    pub fn route(&self, route: u32) -> &[Hop] {
        &self.routes[route as usize]
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
            Event::Timer { flow, sub, timer } => {
                let slot = &mut self.flows[flow as usize].pending[sub as usize][timer.index()];
                if *slot != Some(now) {
                    return; // superseded by an earlier arm
                }
                *slot = None;
                self.with_flow(flow, |t, net| t.on_timer(sub as usize, timer, net));
            }
            Event::Start(flow) => self.with_flow(flow, |t, net| t.start(net)),
            Event::Sample => {
                self.recorder.sample(now, &self.flows, &self.links);
                let next = now + self.scenario.sample_interval_ns;
                if next <= self.scenario.duration_ns {
                    self.queue.push(next, Event::Sample);
                }
            }
        }
    }

    /// Runs `f` on flow `flow`'s transport with its view of the world.
    #[inline]
    fn with_flow(&mut self, flow: u32, f: impl FnOnce(&mut Transport, &mut Net)) {
        let Flow {
            transport,
            routes,
            pending,
            ..
        } = &mut self.flows[flow as usize];
        let mut net = Net {
            now: self.now,
            flow,
            subflow_routes: routes,
            pending,
            routes: &self.routes,
            queue: &mut self.queue,
            arena: &mut self.arena,
            links: &mut self.links,
            out: &mut self.out,
        };
        f(transport, &mut net);
    }

    /// A packet reached the far end of the link it was on: the next link of its route, or its
    /// endpoint.
    #[inline]
    fn arrive(&mut self, id: PacketId) {
        let p = *self.arena.get(id);
        let route = &self.routes[p.route as usize];
        let next = p.hop as usize + 1;
        if next < route.len() {
            self.arena.get_mut(id).hop = next as u16;
            offer(
                self.now,
                route[next],
                id,
                p.wire_bytes,
                p.flow,
                &mut self.links,
                &mut self.queue,
                &mut self.arena,
                &mut self.out,
            );
            return;
        }
        self.arena.release(id);
        let sub = p.subflow.map_or(0, usize::from);
        self.with_flow(p.flow, |t, net| t.on_packet(sub, &p, net));
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
