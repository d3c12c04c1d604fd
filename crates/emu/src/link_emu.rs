//! The link emulator: real packets from TUN devices through `rove_sim::link::Link`, on the
//! real clock.
//!
//! The links are the simulator's own (`Link::new(&LinkSpec, seed)` with the run's seed), so
//! queue, serializer, loss, jitter and outages behave identically on both backends. The
//! emulator plays the part of the simulator's event loop (crates/world/src/world.rs):
//!
//! - a packet read from the sender side's TUN is classified to its flow by address
//!   (topology.rs) and offered to the first link of the flow's `path` at the current time; a
//!   packet from the receiver side goes to the first link of the flow's `ack_path`;
//! - a link's `Deliver { at }` becomes an event at `at`: the packet is offered to the next link
//!   of its route, or written to the far side's TUN;
//! - a link asking to be serviced at `t` becomes an event at `t`.
//!
//! Events are handled at their own (model) time, not at the moment the loop gets to them, so a
//! late wake-up delays a packet's exit but never the link's schedule: the serializer's rate is
//! exact on average whatever the scheduling noise. Times handed to a link never go backwards:
//! a packet is stamped with the clock read just after it was read (so never before it
//! arrived), and every event due by that time is handled before it is offered.
//!
//! Waiting: `ppoll` on the two TUN descriptors and a signalfd with a timeout up to the next
//! event, less `spin_ns` (default 0), which the loop then busy-polls, and at least
//! `min_sleep_ns` (default 50 µs: at high packet rates one wake-up moves several packets).
//! Timer slack is set to 1 ns and rove-emu runs under SCHED_FIFO, so a wake-up is late by tens
//! of µs at p99. rove-emu also keeps the hosts' stacks off its core (isolate.rs).

use crate::dupack::DupAckInjector;
use crate::oal::KernelOal;
use crate::record::{EmuSummary, FlowCounters, FlowTotals, LinkTotals, Recorder, SubflowTotals};
use crate::rtt::{sack_blocks, tcp_fields, RttTracker};
use crate::sys::{cpu_seconds, monotonic_ns, set_min_timer_slack};
use crate::topology::{flow_of, RECEIVER_NET, SENDER_NET};
use crate::tun::Tun;
use rove_scenario::spec::{ActionTarget, Change};
use rove_scenario::{ParseOptions, Scenario, ScenarioError};
use rove_sim::link::wifi::counters::RadioSampling;
use rove_sim::link::{model as link_model, AnyLink, LinkOutput, Offer};
use rove_sim::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::RawFd;
use std::path::PathBuf;

/// Largest packet read from a TUN device (the MTU is 1500; room for a larger one configured
/// by hand, which is then carried, not truncated).
const BUF_BYTES: usize = 9216;
/// Packets read from one device before the loop looks at its events again: bounds how late a
/// due delivery can be while a burst arrives.
const READ_BATCH: usize = 64;
/// Longest single wait when no event is pending, so the stop time is noticed.
const IDLE_WAIT_NS: Nanos = 50_000_000;
/// Default busy-poll window before an event is due. Measured on a loaded 2-core machine
/// (docs/kernel-backend.md): under SCHED_FIFO the timer wake-up alone gives a p99 lateness of
/// 30-65 µs at 25 % of a core for 100 Mbps, while a 50 µs spin gains little and costs 70 %;
/// so no spin by default (`--spin-us` sets one).
pub const DEFAULT_SPIN_NS: Nanos = 0;
/// Default shortest sleep. A wake-up from `ppoll` cost about as much CPU as moving a packet
/// (profiled at 1 Gbit/s: 40 % of the emulator's time in `schedule_hrtimeout_range_clock`,
/// one wake-up per 12 µs departure); with a floor of 50 µs a wake-up moves every packet due
/// by then, so at high packet rates a packet leaves at most ~50 µs late, and at packet spacings
/// above 50 µs (100 Mbit/s and below with 1500-byte packets) nothing changes. [GAP] the value:
/// measured in docs/kernel-backend.md; `--min-sleep-us` sets another (0: the old behaviour).
pub const DEFAULT_MIN_SLEEP_NS: Nanos = 50_000;
/// Default CPU wake-up latency requested while the emulator runs (sys::hold_cpu_latency): 0,
/// idle CPUs poll. Measured in docs/kernel-backend.md ("Idle CPUs"): without it, the vCPUs'
/// halt made the hosts' stacks answer hundreds of µs late; `--cpu-latency-us off` drops it.
pub const DEFAULT_CPU_LATENCY_US: u32 = 0;

#[derive(Debug, Clone)]
pub struct EmuOptions {
    /// CLOCK_MONOTONIC time of the scenario's time 0.
    pub t0_mono_ns: u64,
    /// Stop by itself at this emulator time (a safety net should the orchestrator vanish).
    pub stop_at_ns: Option<Nanos>,
    pub spin_ns: Nanos,
    /// Shortest sleep: an event due sooner than this is handled after a sleep this long
    /// (together with whatever else fell due meanwhile) instead of by a wake-up of its own.
    pub min_sleep_ns: Nanos,
    /// The CPU wake-up latency (µs) requested for the run and held (sys::hold_cpu_latency), if
    /// any: reported in the summary beside the lateness it bears on.
    pub cpu_latency_us: Option<u32>,
    pub out_dir: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Service(u32),
    Arrive(u32),
    Sample,
    /// A radio cell's counters, at the cell's own `sample_interval`.
    RadioSample(u32),
    /// The radio cells' last sample, at the scenario's end (their totals for the summary).
    RadioEnd,
    /// An `[[actions]]` `dupacks` entry: arm route r's duplicate-ACK injector (dupack.rs).
    DupAcks(u32),
    /// OAL controller k's sampling tick (oal.rs).
    OalTick(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Read from the sender namespace, travels the flow's `path`.
    Data,
    /// Read from the receiver namespace, travels the flow's `ack_path`.
    Ack,
}

struct Slot {
    len: u32,
    flow: u32,
    side: Side,
    hop: u16,
    buf: Box<[u8]>,
}

/// Packet buffers, allocated on first need and reused (nothing allocates once warm).
struct Slab {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl Slab {
    fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        self.slots.push(Slot {
            len: 0,
            flow: 0,
            side: Side::Data,
            hop: 0,
            buf: vec![0u8; BUF_BYTES].into_boxed_slice(),
        });
        (self.slots.len() - 1) as u32
    }

    fn release(&mut self, id: u32) {
        self.free.push(id);
    }
}

/// One path of one flow (topology::routes): route `r` owns sender address `sender_addr(r)`.
struct Route {
    flow: u32,
    subflow: u32,
    /// (link, port) of each hop.
    path: Vec<(u32, u16)>,
    ack_path: Vec<(u32, u16)>,
}

/// Lateness histogram in µs (last bucket: everything later).
struct Lateness {
    buckets: Vec<u64>,
    max_ns: Nanos,
}

impl Lateness {
    fn record(&mut self, ns: Nanos) {
        let i = ((ns / 1000) as usize).min(self.buckets.len() - 1);
        self.buckets[i] += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    fn p99_us(&self) -> f64 {
        let total: u64 = self.buckets.iter().sum();
        if total == 0 {
            return 0.0;
        }
        let rank = (total as f64 * 0.99).ceil() as u64;
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return i as f64 + 1.0;
            }
        }
        self.buckets.len() as f64
    }
}

pub struct Emulator {
    scenario: Scenario,
    opts: EmuOptions,
    links: Vec<AnyLink>,
    routes: Vec<Route>,
    flows: Vec<FlowCounters>,
    rtts: Vec<RttTracker>,
    /// Per route: the duplicate-ACK injector (idle unless an action arms it).
    dupacks: Vec<DupAckInjector>,
    /// `[[controllers]] kind = "oal"`: each watches (and rewrites ACKs at) its WiFi cell.
    oals: Vec<KernelOal>,
    slab: Slab,
    heap: BinaryHeap<Reverse<(Nanos, u64, Ev)>>,
    seq: u64,
    out: Vec<LinkOutput>,
    rec: Recorder,
    unclassified: u64,
    write_errors: u64,
    lateness: Lateness,
    write_time: Lateness,
}

/// Parses a scenario file for the kernel backend with the engine's link models (their kinds,
/// their own keys and ports), as the simulator does.
pub fn parse_scenario(
    path: &std::path::Path,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> Result<Scenario, ScenarioError> {
    let kinds = link_model::kinds();
    let opts = ParseOptions {
        overrides,
        seed,
        known_link_kinds: &kinds,
        ..Default::default()
    };
    rove_scenario::with_file(path, opts, rove_scenario::parse)
}

impl Emulator {
    pub fn new(scenario: Scenario, opts: EmuOptions) -> io::Result<Emulator> {
        let links: Vec<AnyLink> = scenario
            .links
            .iter()
            .map(|l| link_model::build(l, scenario.seed))
            .collect();
        let routes: Vec<Route> = crate::topology::routes(&scenario)
            .into_iter()
            .map(|r| Route {
                flow: r.flow as u32,
                subflow: r.subflow as u32,
                path: r.path.iter().map(|h| (h.link as u32, h.port)).collect(),
                ack_path: r.ack_path.iter().map(|h| (h.link as u32, h.port)).collect(),
            })
            .collect();
        let rec = Recorder::create(&opts.out_dir, scenario.duration_ns, &links)?;
        let mut oals = crate::oal::build(&scenario).map_err(io::Error::other)?;
        oals.iter_mut().for_each(KernelOal::train_in_background);
        let mut emu = Emulator {
            // Counters and RTT trackers per route (a multipath flow's subflows apart).
            flows: vec![FlowCounters::default(); routes.len()],
            rtts: (0..routes.len()).map(|_| RttTracker::default()).collect(),
            dupacks: vec![DupAckInjector::default(); routes.len()],
            oals,
            links,
            routes,
            slab: Slab {
                slots: Vec::with_capacity(4096),
                free: Vec::with_capacity(4096),
            },
            heap: BinaryHeap::with_capacity(4096),
            seq: 0,
            out: Vec::with_capacity(64),
            rec,
            unclassified: 0,
            write_errors: 0,
            lateness: Lateness {
                buckets: vec![0; 100_001],
                max_ns: 0,
            },
            write_time: Lateness {
                buckets: vec![0; 100_001],
                max_ns: 0,
            },
            opts,
            scenario,
        };
        let first = emu.scenario.sample_interval_ns;
        emu.push(first, Ev::Sample);
        // Radio cells (radio.csv), as the simulator samples them: with the other samples or at
        // their own interval, and a last time at the scenario's end.
        let mut radio = false;
        for i in 0..emu.links.len() {
            let Some(r) = emu.links[i].radio() else {
                continue;
            };
            radio = true;
            if let RadioSampling::Every(ns) = r.radio_sampling() {
                emu.push(ns, Ev::RadioSample(i as u32));
            }
        }
        if radio {
            let end = emu.scenario.duration_ns;
            emu.push(end, Ev::RadioEnd);
        }
        // OAL's ticks, as the simulator's controller cadence: the first one tick after time 0.
        for k in 0..emu.oals.len() {
            let every = emu.oals[k].tick_ns();
            emu.push(every, Ev::OalTick(k as u32));
        }
        // `dupacks` actions (the orchestrator accepts no other kind of action for the emulator).
        for k in 0..emu.scenario.actions.len() {
            let a = &emu.scenario.actions[k];
            if let (
                ActionTarget::Flow {
                    flow,
                    subflow: Some(sub),
                },
                Change::DupAcks,
            ) = (a.target, &a.change)
            {
                let at = a.at_ns;
                if let Some(r) = emu
                    .routes
                    .iter()
                    .position(|r| r.flow as usize == flow && r.subflow as usize == sub)
                {
                    emu.push(at, Ev::DupAcks(r as u32));
                }
            }
        }
        Ok(emu)
    }

    /// Emulator time: nanoseconds since the scenario's time 0 (0 before it).
    #[inline]
    fn now(&self) -> Nanos {
        monotonic_ns().saturating_sub(self.opts.t0_mono_ns)
    }

    #[inline]
    fn push(&mut self, t: Nanos, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, ev)));
    }

    /// Runs until a stop signal arrives on `sigfd` or the stop time passes; then writes the
    /// summary. `snd` and `rcv` are the TUN devices of the sender and receiver namespaces.
    pub fn run(&mut self, snd: &Tun, rcv: &Tun, sigfd: RawFd) -> io::Result<()> {
        set_min_timer_slack();
        let cpu0 = cpu_seconds();
        let wall0 = monotonic_ns();
        let stop_at = self.opts.stop_at_ns.unwrap_or(Nanos::MAX);
        let mut fds = [
            libc::pollfd {
                fd: snd.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: rcv.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: sigfd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let mut last_now = 0;
        loop {
            let now = self.now();
            last_now = now.max(last_now);
            if now >= stop_at {
                break;
            }
            self.run_due(now, snd, rcv)?;
            let got =
                self.read_side(Side::Data, snd, rcv)? + self.read_side(Side::Ack, snd, rcv)?;
            if got > 0 {
                continue;
            }
            let next = self
                .heap
                .peek()
                .map_or(now + IDLE_WAIT_NS, |Reverse((t, _, _))| *t)
                .min(stop_at);
            let now2 = self.now();
            if next <= now2 {
                continue;
            }
            let wait = next - now2;
            if wait <= self.opts.spin_ns {
                continue; // busy-poll the last stretch
            }
            let sleep = (wait - self.opts.spin_ns)
                .max(self.opts.min_sleep_ns)
                .min(IDLE_WAIT_NS);
            let ts = libc::timespec {
                tv_sec: (sleep / 1_000_000_000) as libc::time_t,
                tv_nsec: (sleep % 1_000_000_000) as libc::c_long,
            };
            // SAFETY: `fds` and `ts` are valid for the call; no signal mask change.
            let r = unsafe {
                libc::ppoll(
                    fds.as_mut_ptr(),
                    fds.len() as libc::nfds_t,
                    &ts,
                    std::ptr::null(),
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EINTR) {
                    return Err(e);
                }
            }
            if r > 0 && fds[2].revents != 0 {
                break; // a stop signal
            }
        }
        self.rec.flush()?;
        let cpu_s = cpu_seconds() - cpu0;
        let wall_s = (monotonic_ns() - wall0) as f64 / 1e9;
        self.write_summary(last_now, cpu_s, wall_s)
    }

    /// Handles every event due at or before `now`, each at its own time.
    fn run_due(&mut self, now: Nanos, snd: &Tun, rcv: &Tun) -> io::Result<()> {
        while let Some(&Reverse((t, _, ev))) = self.heap.peek() {
            if t > now {
                break;
            }
            self.heap.pop();
            match ev {
                Ev::Service(l) => {
                    if let Some(next) = self.links[l as usize].service(t, &mut self.out) {
                        self.push(next, Ev::Service(l));
                    }
                    self.drain(l, t)?;
                }
                Ev::Arrive(id) => self.arrive(id, t, snd, rcv)?,
                Ev::Sample => {
                    self.rec.sample(t, &mut self.links)?;
                    for l in 0..self.links.len() {
                        let with_recorder = self.links[l]
                            .radio()
                            .is_some_and(|r| r.radio_sampling() == RadioSampling::WithRecorder);
                        if with_recorder {
                            self.rec.radio_sample(t, l, &self.links[l])?;
                        }
                    }
                    self.push(t + self.scenario.sample_interval_ns, Ev::Sample);
                }
                Ev::RadioSample(l) => {
                    let link = &self.links[l as usize];
                    self.rec.radio_sample(t, l as usize, link)?;
                    if let Some(RadioSampling::Every(ns)) = link.radio().map(|r| r.radio_sampling())
                    {
                        self.push(t + ns, Ev::RadioSample(l));
                    }
                }
                Ev::RadioEnd => self.rec.radio_end(t, &self.links)?,
                Ev::DupAcks(r) => self.dupacks[r as usize].arm(),
                Ev::OalTick(k) => {
                    let oal = &mut self.oals[k as usize];
                    oal.step(t, &self.links);
                    // Until the scenario's end, as the simulator's controllers.
                    let next = t + oal.tick_ns();
                    if next <= self.scenario.duration_ns {
                        self.push(next, Ev::OalTick(k));
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads up to READ_BATCH packets from `tun` and offers each to its route's first link.
    /// Reads up to READ_BATCH packets from the `side` device and offers each to its route's
    /// first link. Each packet is stamped with the clock read after it was read (never before
    /// it arrived, whatever the scheduler did between two calls), once every event due by then
    /// has been handled, so that the links' times never go backwards.
    fn read_side(&mut self, side: Side, snd: &Tun, rcv: &Tun) -> io::Result<usize> {
        let tun = match side {
            Side::Data => snd,
            Side::Ack => rcv,
        };
        let mut got = 0;
        while got < READ_BATCH {
            let id = self.slab.alloc();
            let n = match tun.recv(&mut self.slab.slots[id as usize].buf) {
                Ok(Some(n)) => n,
                Ok(None) => {
                    self.slab.release(id);
                    break;
                }
                Err(e) => {
                    self.slab.release(id);
                    return Err(io::Error::new(
                        e.kind(),
                        format!("reading {} in {}: {e}", tun.name, tun.netns),
                    ));
                }
            };
            got += 1;
            let now = self.now();
            // The slot is not in any queue yet: handling events cannot touch it.
            self.run_due(now, snd, rcv)?;
            let slot = &mut self.slab.slots[id as usize];
            let Some(flow) = classify(&slot.buf[..n], side).filter(|&f| f < self.routes.len())
            else {
                self.unclassified += 1;
                self.slab.release(id);
                continue;
            };
            let n = match side {
                Side::Data => {
                    self.dupacks[flow].on_data(&slot.buf[..n]);
                    n
                }
                Side::Ack => self.dupacks[flow].on_ack(&mut slot.buf, n),
            };
            slot.len = n as u32;
            slot.flow = flow as u32;
            slot.side = side;
            slot.hop = 0;
            let c = &mut self.flows[flow];
            match side {
                Side::Data => {
                    c.data_pkts_in += 1;
                    if let Some((seq, _, payload, _)) = tcp_fields(&slot.buf[..n]) {
                        if payload > 0 {
                            c.data_segs_in += 1;
                            c.payload_bytes_in += payload as u64;
                        }
                        self.rtts[flow].on_data(seq, payload, now);
                    }
                }
                Side::Ack => c.ack_pkts_in += 1,
            }
            let route = &self.routes[flow];
            let (link, port) = match side {
                Side::Data => route.path[0],
                Side::Ack => route.ack_path[0],
            };
            self.offer(link, port, id, now)?;
        }
        Ok(got)
    }

    #[inline]
    fn offer(&mut self, link: u32, port: u16, id: u32, now: Nanos) -> io::Result<()> {
        let slot = &mut self.slab.slots[id as usize];
        // OAL's monitor sees (and may rewrite) the packets entering its cell.
        for oal in self.oals.iter_mut().filter(|o| o.link() == link) {
            let flow = self.routes[slot.flow as usize].flow as usize;
            oal.on_packet(
                now,
                flow,
                slot.side == Side::Data,
                &mut slot.buf[..slot.len as usize],
            );
        }
        let slot = &self.slab.slots[id as usize];
        let packet = Offer {
            id,
            bytes: slot.len,
            port,
            flow: slot.flow,
        };
        if let Some(t) = self.links[link as usize].offer(now, packet, &mut self.out) {
            self.push(t, Ev::Service(link));
        }
        self.drain(link, now)
    }

    /// Turns link outputs into events (deliveries) or records (drops).
    fn drain(&mut self, link: u32, now: Nanos) -> io::Result<()> {
        for i in 0..self.out.len() {
            match self.out[i] {
                LinkOutput::Deliver { id, at } => {
                    self.seq += 1;
                    self.heap.push(Reverse((at, self.seq, Ev::Arrive(id))));
                }
                LinkOutput::Drop { id, reason } => {
                    let bytes = self.slab.slots[id as usize].len as usize;
                    self.rec
                        .drop(now, self.links[link as usize].name(), reason, bytes)?;
                    self.slab.release(id);
                }
            }
        }
        self.out.clear();
        Ok(())
    }

    /// A packet reached the far end of a link at `t`: next link, or out of the far TUN.
    fn arrive(&mut self, id: u32, t: Nanos, snd: &Tun, rcv: &Tun) -> io::Result<()> {
        let slot = &mut self.slab.slots[id as usize];
        let route = &self.routes[slot.flow as usize];
        let hops = match slot.side {
            Side::Data => &route.path,
            Side::Ack => &route.ack_path,
        };
        let next = slot.hop as usize + 1;
        if next < hops.len() {
            slot.hop = next as u16;
            let (link, port) = hops[next];
            return self.offer(link, port, id, t);
        }
        let pkt = &slot.buf[..slot.len as usize];
        let (tun, c) = match slot.side {
            Side::Data => (rcv, &mut self.flows[slot.flow as usize]),
            Side::Ack => (snd, &mut self.flows[slot.flow as usize]),
        };
        match slot.side {
            Side::Data => {
                c.data_pkts_out += 1;
                c.payload_bytes_out += tcp_payload_bytes(pkt) as u64;
            }
            Side::Ack => c.ack_pkts_out += 1,
        }
        let rtt = match (slot.side, tcp_fields(pkt)) {
            (Side::Ack, Some((_, ack, _, true))) => {
                let mut blocks = [(0u32, 0u32); 4];
                let n = sack_blocks(pkt, &mut blocks);
                self.rtts[slot.flow as usize].on_ack_sack(ack, &blocks[..n], t)
            }
            _ => None,
        };
        let before = monotonic_ns();
        if tun.send(pkt).is_err() {
            self.write_errors += 1;
        }
        // A write into a TUN runs the receiving stack (and whatever it triggers, e.g. a TCP
        // sender's next segments) on this thread: its cost is recorded apart.
        self.write_time.record(monotonic_ns() - before);
        if let Some(rtt) = rtt {
            let route = &self.routes[slot.flow as usize];
            self.rec
                .rtt(route.flow as usize, route.subflow as usize, t, rtt)?;
        }
        let late = self.now().saturating_sub(t);
        self.lateness.record(late);
        self.slab.release(id);
        Ok(())
    }

    fn write_summary(&self, ran_ns: Nanos, cpu_s: f64, wall_s: f64) -> io::Result<()> {
        let duration = self.scenario.duration_ns;
        let summary = EmuSummary {
            ran_s: ran_ns as f64 / 1e9,
            duration_s: duration as f64 / 1e9,
            links: self
                .links
                .iter()
                .enumerate()
                .map(|(i, l)| LinkTotals {
                    name: l.name().to_string(),
                    kind: l.kind(),
                    arrived_pkts: l.stats().arrived_pkts,
                    departed_pkts: l.stats().departed_pkts,
                    departed_bytes: l.stats().departed_bytes,
                    capacity_bytes: l.capacity_bytes(duration),
                    drops: l.stats().drops(),
                    queue_drops: l.stats().queue_drops,
                    loss_drops: l.stats().loss_drops,
                    backlog_pkts_at_end: l.backlog_packets(),
                    queue_delay: self.rec.queue_delay(i),
                    radio: self.rec.radio_at_end(i),
                })
                .collect(),
            flows: self
                .scenario
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let mut sum = FlowCounters::default();
                    for (r, c) in self.routes.iter().zip(&self.flows) {
                        if r.flow as usize == i {
                            sum.add(c);
                        }
                    }
                    FlowTotals {
                        name: f.name.clone(),
                        counters: sum,
                    }
                })
                .collect(),
            subflows: self
                .routes
                .iter()
                .zip(&self.flows)
                .map(|(r, c)| SubflowTotals {
                    flow: r.flow as usize,
                    subflow: r.subflow as usize,
                    counters: *c,
                })
                .collect(),
            unclassified_pkts: self.unclassified,
            write_errors: self.write_errors,
            lateness_max_us: self.lateness.max_ns as f64 / 1e3,
            lateness_p99_us: self.lateness.p99_us(),
            cpu_latency_us: self.opts.cpu_latency_us,
            write_max_us: self.write_time.max_ns as f64 / 1e3,
            write_p99_us: self.write_time.p99_us(),
            cpu_s,
            cpu_fraction: if wall_s > 0.0 { cpu_s / wall_s } else { 0.0 },
            oal: {
                let names: Vec<String> =
                    self.scenario.flows.iter().map(|f| f.name.clone()).collect();
                self.oals.iter().map(|o| o.summary(&names)).collect()
            },
        };
        crate::record::write_summary(&self.opts.out_dir, &summary)
    }
}

/// The flow of an IPv4 packet read on `side`, by address (see topology.rs).
#[inline]
fn classify(pkt: &[u8], side: Side) -> Option<usize> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let src = [pkt[12], pkt[13], pkt[14], pkt[15]];
    let dst = [pkt[16], pkt[17], pkt[18], pkt[19]];
    match side {
        Side::Data => flow_of(src, SENDER_NET),
        Side::Ack => flow_of(dst, SENDER_NET).filter(|_| flow_of(src, RECEIVER_NET).is_some()),
    }
}

/// TCP payload bytes of an IPv4 packet (0 for anything else or a malformed header).
#[inline]
pub fn tcp_payload_bytes(pkt: &[u8]) -> usize {
    if pkt.len() < 20 || pkt[9] != libc::IPPROTO_TCP as u8 {
        return 0;
    }
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    let total = (u16::from_be_bytes([pkt[2], pkt[3]]) as usize).min(pkt.len());
    if total < ihl + 20 {
        return 0;
    }
    let doff = (pkt[ihl + 12] >> 4) as usize * 4;
    total.saturating_sub(ihl + doff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, payload: usize, doff_words: u8) -> Vec<u8> {
        let hdr = if proto == 6 {
            doff_words as usize * 4
        } else {
            8
        };
        let total = 20 + hdr + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = proto;
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        if proto == 6 {
            p[20 + 12] = doff_words << 4;
        }
        p
    }

    #[test]
    fn tcp_payload_excludes_headers_and_options() {
        let p = ipv4([10, 71, 0, 1], [10, 72, 0, 1], 6, 1448, 8);
        assert_eq!(p.len(), 1500);
        assert_eq!(tcp_payload_bytes(&p), 1448);
        assert_eq!(
            tcp_payload_bytes(&ipv4([10, 71, 0, 1], [10, 72, 0, 1], 17, 100, 0)),
            0
        );
        assert_eq!(tcp_payload_bytes(&[0x45, 0, 0]), 0);
    }

    #[test]
    fn classify_by_address_and_side() {
        let data = ipv4([10, 71, 0, 3], [10, 72, 0, 3], 6, 10, 5);
        assert_eq!(classify(&data, Side::Data), Some(2));
        let ack = ipv4([10, 72, 0, 3], [10, 71, 0, 3], 6, 0, 5);
        assert_eq!(classify(&ack, Side::Ack), Some(2));
        assert_eq!(classify(&ack, Side::Data), None);
        let mut v6 = data.clone();
        v6[0] = 0x60;
        assert_eq!(classify(&v6, Side::Data), None);
    }
}
