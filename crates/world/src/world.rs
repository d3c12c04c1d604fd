//! The simulated world and its event loop.
//!
//! Five kinds of event drive everything: a flow starts, a link's serializer is due, a packet
//! reaches the far end of a link, an endpoint's timer fires, and the recorder samples (plus
//! scheduled actions, controllers, measurement marks, and the wake-ups of applications that
//! write over time, `crate::workload`). Every flow
//! is a [`Transport`] over one or more subflows (a single-path flow has one), so one set of
//! events and one routing driver serve them all. A packet carries the id of its route (an entry
//! of the world's route table, fixed when the packet is sent) and its hop along it; changing a
//! subflow's route therefore changes what later packets take, not the packets in flight.
//!
//! Packets live in the arena and move by index; an endpoint's timer is armed lazily (one pending
//! event per subflow and timer; a deadline that moved later is re-armed when the early event
//! fires), so an ACK that pushes the RTO back costs no heap operation.

use crate::control::{Cadence, Controller};
use crate::element::{Fate, PathElement};
use crate::record::Recorder;
use crate::transport::Transport;
use crate::workload::FlowApp;
use rove_mp::SubflowNet;
use rove_scenario::Scenario;
use rove_sim::event::EventQueue;
use rove_sim::link::wifi::counters::RadioSampling;
use rove_sim::link::{AnyLink, LinkOutput, Offer};
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
    /// The scenario's action `0` (`[[actions]]`) is due.
    Action(u32),
    /// A packet a path element held back enters the link at its hop.
    Enter(PacketId),
    /// Controller `0`'s time cadence is due.
    Control(u32),
    /// The measurement window opens (0) or closes (1).
    Measure(u8),
    /// Flow `0`'s application asked to be woken (a frame or a response is due).
    App(u32),
    /// Radio link `0`'s counters are due (a cell with its own `sample_interval`).
    RadioSample(u32),
}

// The event queue moves events by value on every sift: keep them at 8 bytes (box a large
// variant's payload rather than grow the enum).
const _: () = assert!(std::mem::size_of::<Event>() <= 8);

/// One hop of a route: a link and the port of it the packet goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub link: u32,
    pub port: u16,
}

/// A route: the hops a packet crosses, in order.
pub type Route = Box<[Hop]>;

/// Every route of the world, each distinct sequence of hops once. Routes are only ever added,
/// so a route id in a packet in flight stays valid.
#[derive(Default)]
pub struct RouteTable {
    routes: Vec<Route>,
}

impl RouteTable {
    /// The id of the route over the scenario's `path`, added if new.
    pub fn id(&mut self, path: &[rove_scenario::Hop]) -> u32 {
        let route: Route = path
            .iter()
            .map(|h| Hop {
                link: h.link as u32,
                port: h.port,
            })
            .collect();
        match self.routes.iter().position(|r| *r == route) {
            Some(i) => i as u32,
            None => {
                self.routes.push(route);
                (self.routes.len() - 1) as u32
            }
        }
    }

    /// The routes of a subflow whose data crosses `path` and whose ACKs cross `ack_path`.
    pub fn subflow(
        &mut self,
        path: &[rove_scenario::Hop],
        ack_path: &[rove_scenario::Hop],
    ) -> SubflowRoutes {
        SubflowRoutes {
            data: self.id(path),
            ack: self.id(ack_path),
        }
    }

    #[inline]
    pub fn get(&self, id: u32) -> &[Hop] {
        &self.routes[id as usize]
    }
}

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
    /// The application writing over time (`workload = "video" | "requests"`), if any.
    pub app: Option<FlowApp>,
    /// Per subflow.
    pub routes: Vec<SubflowRoutes>,
    /// Per subflow and timer: the deadline of the pending timer event.
    pending: Vec<[Option<Nanos>; Timer::COUNT]>,
    /// A multipath flow whose paths carry a cost: its subflows' peak x/c (`crate::path_cost`).
    pub rate_peaks: Option<crate::path_cost::RatePeaks>,
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
            app: None,
            routes,
            pending,
            rate_peaks: None,
        }
    }

    /// The same flow, its sender fed by `app`.
    pub fn with_app(mut self, app: Option<FlowApp>) -> Self {
        self.app = app;
        self
    }

    pub fn is_multipath(&self) -> bool {
        matches!(self.transport, Transport::Multipath(_))
    }

    /// In-order payload bytes the receiving application got: an application's exact count
    /// (its writes' sizes), else the transport's.
    pub fn bytes_delivered(&self) -> u64 {
        match &self.app {
            Some(a) => a.bytes_delivered(),
            None => self.transport.bytes_delivered(),
        }
    }
}

pub struct World {
    pub scenario: Scenario,
    now: Nanos,
    pub(crate) queue: EventQueue<Event>,
    arena: PacketArena,
    pub links: Vec<AnyLink>,
    /// Per link: the path elements at its entry, in scenario order (usually none).
    elements: Vec<Vec<Box<dyn PathElement>>>,
    /// The route table packets index.
    pub routes: RouteTable,
    /// In scenario order.
    pub flows: Vec<Flow>,
    out: Vec<LinkOutput>,
    pub recorder: Recorder,
    /// Scheduled actions that could not be applied when due (e.g. a subflow removed twice).
    pub warnings: Vec<String>,
    /// Controllers (`[[controllers]]`); a slot is empty only while its controller runs.
    pub controllers: Vec<Option<Box<dyn Controller>>>,
    /// Per flow: (controller, every n ACKs, ACKs counted) of ACK-cadence controllers.
    ack_watch: Vec<Vec<(u32, u32, u32)>>,
    /// Scratch for the actions a controller returns.
    pending_actions: Vec<rove_scenario::spec::ActionSpec>,
    /// Per flow: its packets dropped on the way (queues, random loss, path elements).
    flow_drops: Vec<u64>,
    /// The counters when the measurement window opened and closed (`measure`); `None` while
    /// the run has not reached that time, and for an edge at the run's start or end.
    pub measure_marks: [Option<crate::window::Marks>; 2],
    /// Packet captures (`--pcap LINK`): usually none.
    captures: Vec<Capture>,
    /// Packets that reached the end of their route, by direction (data, ACK): the benchmark's
    /// "delivered packets".
    delivered: [u64; 2],
}

/// A pcap file of the packets that crossed one link (`crate::pcap`).
struct Capture {
    link: usize,
    pcap: crate::pcap::Pcap,
    /// The first write error; the capture stops there and `finish_captures` reports it.
    error: Option<String>,
}

/// What one flow sees of the world while it handles one event.
pub(crate) struct Net<'a> {
    now: Nanos,
    flow: u32,
    subflow_routes: &'a [SubflowRoutes],
    pending: &'a mut [[Option<Nanos>; Timer::COUNT]],
    routes: &'a RouteTable,
    queue: &'a mut EventQueue<Event>,
    arena: &'a mut PacketArena,
    links: &'a mut [AnyLink],
    elements: &'a mut [Vec<Box<dyn PathElement>>],
    out: &'a mut Vec<LinkOutput>,
    flow_drops: &'a mut [u64],
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
        let id = self.arena.alloc(p);
        let hop = self.routes.get(route)[0];
        enter(
            self.now,
            hop,
            id,
            self.elements,
            self.links,
            self.queue,
            self.arena,
            self.out,
            self.flow_drops,
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

/// Packet `id` reaches the entry of the link of `hop`: the path elements there see it, then
/// it is offered to the link.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn enter(
    now: Nanos,
    hop: Hop,
    id: PacketId,
    elements: &mut [Vec<Box<dyn PathElement>>],
    links: &mut [AnyLink],
    queue: &mut EventQueue<Event>,
    arena: &mut PacketArena,
    out: &mut Vec<LinkOutput>,
    flow_drops: &mut [u64],
) {
    let here = &mut elements[hop.link as usize];
    if !here.is_empty() {
        let p = arena.get_mut(id);
        for e in here.iter_mut() {
            match e.on_packet(now, p) {
                Fate::Pass => {}
                Fate::Drop => {
                    flow_drops[p.flow as usize] += 1;
                    arena.release(id);
                    return;
                }
                Fate::Hold(at) => {
                    queue.push(at.max(now), Event::Enter(id));
                    return;
                }
            }
        }
    }
    offer(now, hop, id, links, queue, arena, out, flow_drops);
}

/// Offers packet `id` to the link of `hop` and turns the link's requests into events.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn offer(
    now: Nanos,
    hop: Hop,
    id: PacketId,
    links: &mut [AnyLink],
    queue: &mut EventQueue<Event>,
    arena: &mut PacketArena,
    out: &mut Vec<LinkOutput>,
    flow_drops: &mut [u64],
) {
    let (bytes, flow) = {
        let p = arena.get(id);
        (p.wire_bytes, p.flow)
    };
    let packet = Offer {
        id,
        bytes,
        port: hop.port,
        flow,
    };
    if let Some(t) = links[hop.link as usize].offer(now, packet, out) {
        queue.push(t, Event::Service(hop.link));
    }
    drain(hop.link, out, queue, arena, flow_drops);
}

/// Turns what link `link` put in `out` into events: its deliveries go to the link's lane of the
/// event queue (a link delivers in time order, so they append to a FIFO instead of entering the
/// heap), its drops free their packets.
///
/// Often there is nothing (a busy link's offer only queues): that test is inlined at every
/// call, the work is not.
#[inline(always)]
fn drain(
    link: u32,
    out: &mut Vec<LinkOutput>,
    queue: &mut EventQueue<Event>,
    arena: &mut PacketArena,
    flow_drops: &mut [u64],
) {
    if !out.is_empty() {
        drain_outputs(link, out, queue, arena, flow_drops);
    }
}

/// [`drain`]'s work, when `out` holds something.
fn drain_outputs(
    link: u32,
    out: &mut Vec<LinkOutput>,
    queue: &mut EventQueue<Event>,
    arena: &mut PacketArena,
    flow_drops: &mut [u64],
) {
    // Indexed rather than `out.drain(..)`: the same order, without the drain guard's work.
    for &o in out.iter() {
        match o {
            LinkOutput::Deliver { id, at } => queue.push_lane(link as usize, at, Event::Arrive(id)),
            LinkOutput::Drop { id, .. } => {
                flow_drops[arena.get(id).flow as usize] += 1;
                arena.release(id);
            }
        }
    }
    out.clear();
}

impl World {
    pub(crate) fn new(
        scenario: Scenario,
        links: Vec<AnyLink>,
        elements: Vec<Vec<Box<dyn PathElement>>>,
        controllers: Vec<Box<dyn Controller>>,
        routes: RouteTable,
        flows: Vec<Flow>,
    ) -> Self {
        let mut queue = EventQueue::with_capacity(4096);
        // Start events in scenario order (ties at one time break by insertion order).
        for (i, f) in flows.iter().enumerate() {
            queue.push(f.start_ns, Event::Start(i as u32));
        }
        let recorder = Recorder::new();
        let flows_len = flows.len();
        let first_sample = scenario.sample_interval_ns;
        queue.push(first_sample, Event::Sample);
        let mut world = World {
            scenario,
            now: 0,
            queue,
            arena: PacketArena::with_capacity(4096),
            links,
            elements,
            routes,
            flows,
            out: Vec::with_capacity(64),
            recorder,
            warnings: Vec::new(),
            ack_watch: vec![Vec::new(); flows_len],
            flow_drops: vec![0; flows_len],
            delivered: [0; 2],
            controllers: Vec::new(),
            pending_actions: Vec::new(),
            measure_marks: [None, None],
            captures: Vec::new(),
        };
        world.schedule_actions();
        for c in controllers {
            world.add_controller(c);
        }
        let (from, to) = world.scenario.measure_ns;
        if from > 0 {
            world.queue.push(from, Event::Measure(0));
        }
        if to < world.scenario.duration_ns {
            world.queue.push(to, Event::Measure(1));
        }
        for (i, l) in world.links.iter().enumerate() {
            if let Some(RadioSampling::Every(ns)) = l.radio().map(|r| r.radio_sampling()) {
                world.queue.push(ns, Event::RadioSample(i as u32));
            }
        }
        world
    }

    /// Takes the radio cells' last sample at the end of the run (the rows `radio.parquet`
    /// ends with hold the totals the summary reports). Call once the run is over.
    pub fn finish_radio(&mut self) {
        let end = self.scenario.duration_ns;
        self.recorder.final_radio_sample(end, &self.links);
    }

    /// Adds a controller; it is first called one period in (time cadence) or at its first
    /// `n`th ACK.
    pub fn add_controller(&mut self, c: Box<dyn Controller>) {
        let i = self.controllers.len() as u32;
        match c.cadence() {
            Cadence::Every(ns) => self.queue.push(self.now + ns, Event::Control(i)),
            Cadence::Acks { flow, n } => self.ack_watch[flow].push((i, n, 0)),
        }
        self.controllers.push(Some(c));
    }

    /// Calls controller `i` and applies what it decided.
    fn run_controller(&mut self, i: u32) {
        let mut c = self.controllers[i as usize].take().expect("not re-entered");
        let mut actions = std::mem::take(&mut self.pending_actions);
        c.tick(self.now, self, &mut actions);
        self.controllers[i as usize] = Some(c);
        for a in actions.drain(..) {
            if let Err(e) = self.apply(&a) {
                let t = self.now as f64 / 1e9;
                self.warnings
                    .push(format!("controllers[{i}] at {t} s: {e}"));
            }
        }
        self.pending_actions = actions;
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

    /// Packets that reached the end of their route so far: (data segments, ACKs), SYNs and
    /// datagrams counted as data.
    pub fn packets_delivered(&self) -> (u64, u64) {
        (self.delivered[0], self.delivered[1])
    }

    pub fn peak_packets(&self) -> usize {
        self.arena.peak_live()
    }

    pub fn is_finished(&self) -> bool {
        self.now >= self.scenario.duration_ns
    }

    /// Packets of flow `flow` dropped on the way so far (queues, random loss, path elements).
    pub fn flow_drops(&self, flow: usize) -> u64 {
        self.flow_drops[flow]
    }

    /// The hops of route `route`.
    pub fn route(&self, route: u32) -> &[Hop] {
        self.routes.get(route)
    }

    /// Processes every event up to and including `t` (capped at the run's duration).
    pub fn run_until(&mut self, t: Nanos) {
        self.process(t, true);
    }

    /// Processes every event before `t` (capped at the run's duration) and stops the clock at
    /// `t`: a change applied now happens at `t`, before anything else due then, exactly as a
    /// scheduled `[[actions]]` entry at `t` would.
    pub fn advance_to(&mut self, t: Nanos) {
        self.process(t, false);
    }

    /// The event loop: every event due before `t` (and at `t` when `inclusive`), in order.
    fn process(&mut self, t: Nanos, inclusive: bool) {
        let end = t.min(self.scenario.duration_ns);
        while let Some((now, event)) = self.queue.pop_until(end, inclusive) {
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
                drain(
                    l,
                    &mut self.out,
                    &mut self.queue,
                    &mut self.arena,
                    &mut self.flow_drops,
                );
            }
            Event::Arrive(id) => self.arrive(id),
            Event::Enter(id) => {
                let p = self.arena.get(id);
                let hop = self.routes.get(p.route)[p.hop as usize];
                offer(
                    now,
                    hop,
                    id,
                    &mut self.links,
                    &mut self.queue,
                    &mut self.arena,
                    &mut self.out,
                    &mut self.flow_drops,
                );
            }
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
                self.recorder.sample(now, &self.flows, &mut self.links);
                for f in &mut self.flows {
                    if let Some(mut peaks) = f.rate_peaks.take() {
                        peaks.sample(now, f, &self.links, &self.routes);
                        f.rate_peaks = Some(peaks);
                    }
                }
                let next = now + self.scenario.sample_interval_ns;
                if next <= self.scenario.duration_ns {
                    self.queue.push(next, Event::Sample);
                }
            }
            Event::RadioSample(l) => {
                let link = &self.links[l as usize];
                let r = link.radio().expect("a radio sample is for a radio link");
                r.sample_radio(now, l, &mut self.recorder.radio);
                if let RadioSampling::Every(ns) = r.radio_sampling() {
                    if now + ns <= self.scenario.duration_ns {
                        self.queue.push(now + ns, Event::RadioSample(l));
                    }
                }
            }
            Event::Control(i) => {
                self.run_controller(i);
                if let Some(Cadence::Every(ns)) =
                    self.controllers[i as usize].as_ref().map(|c| c.cadence())
                {
                    self.queue.push(now + ns, Event::Control(i));
                }
            }
            Event::Measure(edge) => {
                self.measure_marks[edge as usize] = Some(crate::window::Marks::take(self));
            }
            Event::App(flow) => {
                let next = self.with_flow_parts(flow, |transport, app, net| {
                    let app = app
                        .as_mut()
                        .expect("a wake-up of a flow with an application");
                    app.on_wake(now, &mut |bytes| transport.write(bytes, net))
                });
                if let Some(at) = next {
                    self.queue.push(at.max(now), Event::App(flow));
                }
            }
            Event::Action(i) => {
                let action = self.scenario.actions[i as usize].clone();
                if let Err(e) = self.apply(&action) {
                    self.warnings
                        .push(format!("actions at {} s: {e}", now as f64 / 1e9));
                }
            }
        }
    }

    /// Runs `f` on multipath flow `flow`'s connection with the flow's view of the world.
    pub(crate) fn with_connection(
        &mut self,
        flow: usize,
        f: impl FnOnce(&mut rove_mp::Connection, &mut Net),
    ) {
        self.with_flow(flow as u32, |t, net| {
            if let Transport::Multipath(c) = t {
                f(c, net)
            }
        });
    }

    /// Adds a subflow over `routes` running `cc` to multipath flow `flow`.
    pub(crate) fn add_subflow(
        &mut self,
        flow: usize,
        routes: SubflowRoutes,
        cc: Box<dyn rove_tcp::cc::CongestionControl>,
    ) {
        let f = &mut self.flows[flow];
        f.routes.push(routes);
        f.pending.push([None; Timer::COUNT]);
        self.with_connection(flow, |c, net| {
            c.add_subflow(cc, net);
        });
        // The topology's grouping with the new path, for a detector's accuracy.
        let truth = crate::bottleneck::true_partition(
            &self.scenario,
            self.flows[flow].routes.iter().map(|r| {
                self.routes
                    .get(r.data)
                    .iter()
                    .map(|h| h.link as usize)
                    .collect::<Vec<_>>()
            }),
        );
        if let Some(d) = self.flows[flow]
            .transport
            .connection_mut()
            .and_then(|c| c.detection.as_mut())
        {
            d.set_truth(Some(truth));
        }
    }

    /// Runs `f` on flow `flow`'s transport with its view of the world.
    #[inline]
    fn with_flow(&mut self, flow: u32, f: impl FnOnce(&mut Transport, &mut Net)) {
        self.with_flow_parts(flow, |t, _, net| f(t, net))
    }

    /// Runs `f` on flow `flow`'s transport and application with its view of the world.
    #[inline]
    fn with_flow_parts<R>(
        &mut self,
        flow: u32,
        f: impl FnOnce(&mut Transport, &mut Option<FlowApp>, &mut Net) -> R,
    ) -> R {
        let Flow {
            transport,
            app,
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
            elements: &mut self.elements,
            out: &mut self.out,
            flow_drops: &mut self.flow_drops,
        };
        f(transport, app, &mut net)
    }

    /// A packet reached the far end of the link it was on: the next link of its route, or its
    /// endpoint.
    #[inline]
    fn arrive(&mut self, id: PacketId) {
        let p = *self.arena.get(id);
        if !self.captures.is_empty() {
            self.capture(&p);
        }
        let route = self.routes.get(p.route);
        // The packet after the next one off this link: fetch it into the cache now, a few
        // events before it is due (its slot was last touched a whole path delay ago).
        if let Some(&Event::Arrive(ahead)) =
            self.queue.lane_next(route[p.hop as usize].link as usize)
        {
            self.arena.prefetch(ahead);
        }
        let next = p.hop as usize + 1;
        if next < route.len() {
            self.arena.get_mut(id).hop = next as u16;
            enter(
                self.now,
                route[next],
                id,
                &mut self.elements,
                &mut self.links,
                &mut self.queue,
                &mut self.arena,
                &mut self.out,
                &mut self.flow_drops,
            );
            return;
        }
        self.arena.release(id);
        self.delivered[p.direction as usize] += 1;
        let sub = p.subflow.map_or(0, usize::from);
        self.with_flow(p.flow, |t, net| t.on_packet(sub, &p, net));
        if self.flows[p.flow as usize].app.is_some() {
            self.app_progress(p.flow);
        }
        if p.direction == Direction::Ack && !self.ack_watch[p.flow as usize].is_empty() {
            self.count_ack(p.flow as usize);
        }
    }

    /// A packet of flow `flow` (which has an application) arrived: tell the application, and
    /// wake it when it asks.
    fn app_progress(&mut self, flow: u32) {
        let now = self.now;
        let f = &mut self.flows[flow as usize];
        let (established, in_order) = (f.transport.is_established(), f.transport.in_order_segs());
        let app = f.app.as_mut().expect("checked by the caller");
        if let Some(at) = app.on_progress(now, established, in_order) {
            self.queue.push(at.max(now), Event::App(flow));
        }
    }

    /// Writes `p`, which just crossed its current hop's link, to that link's captures.
    #[cold]
    fn capture(&mut self, p: &Packet) {
        let link = self.routes.get(p.route)[p.hop as usize].link as usize;
        let spec = &self.scenario.flows[p.flow as usize];
        let info = crate::pcap::FlowInfo {
            // An application's writes end in short segments the capture does not know of: it
            // numbers bytes as if every segment were full.
            segments: rove_tcp::Segments {
                size_bytes: match spec.workload {
                    rove_scenario::spec::Workload::Bulk => spec.size_bytes,
                    _ => None,
                },
            },
            udp: !spec.workload.is_tcp(),
        };
        for c in self
            .captures
            .iter_mut()
            .filter(|c| c.link == link && c.error.is_none())
        {
            if let Err(e) = c.pcap.write(self.now, p, &info) {
                c.error = Some(e.to_string());
            }
        }
    }

    /// Writes the packets that cross link `name` from now on to a pcap file at `path`.
    pub fn add_capture(&mut self, name: &str, path: &std::path::Path) -> Result<(), String> {
        let Some(link) = self.links.iter().position(|l| l.name() == name) else {
            let names: Vec<&str> = self.links.iter().map(|l| l.name()).collect();
            return Err(format!(
                "no link named {name:?}; accepted: {}",
                names.join(", ")
            ));
        };
        let pcap = crate::pcap::Pcap::create(path)
            .map_err(|e| format!("{}: cannot create the capture: {e}", path.display()))?;
        self.captures.push(Capture {
            link,
            pcap,
            error: None,
        });
        Ok(())
    }

    /// Closes every capture; returns `(link name, packets written)` per capture, or the first
    /// error a capture met.
    pub fn finish_captures(&mut self) -> Result<Vec<(String, u64)>, String> {
        let mut done = Vec::new();
        for c in self.captures.drain(..) {
            let name = self.links[c.link].name().to_string();
            if let Some(e) = c.error {
                return Err(format!("capture of link {name}: {e}"));
            }
            let n = c
                .pcap
                .finish()
                .map_err(|e| format!("capture of link {name}: {e}"))?;
            done.push((name, n));
        }
        Ok(done)
    }

    /// An ACK reached flow `flow`'s sender: runs the ACK-cadence controllers that are due.
    fn count_ack(&mut self, flow: usize) {
        for k in 0..self.ack_watch[flow].len() {
            let (c, n, count) = &mut self.ack_watch[flow][k];
            *count += 1;
            if *count >= *n {
                *count = 0;
                let c = *c;
                self.run_controller(c);
            }
        }
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
