//! Applications that write into a TCP connection over time (`workload = "video" |
//! "requests"`), on a single-path or a multipath flow alike. (Bulk transfers write everything
//! at the start and need no application; unresponsive sources are `crate::datagram`.)
//!
//! An application waits for its connection to be established, then writes chunks (frames,
//! responses) at times of its choosing through `Transport::write`: the sender sends what is
//! written and is app-limited when it has sent it all. A [`WriteLog`] follows each write to the
//! moment its last byte reaches the receiving application in order, which is what the
//! application's results measure. The world calls an application at three moments: the
//! connection is established, a wake-up it asked for is due (`Event::App`), and a packet of
//! its flow arrived (the in-order point may have moved).
//!
//! To add an application: a file here with its state and `start` / `on_wake` / `on_delivery`,
//! a variant of [`App`] (the registry, [`App::build`]), its keys in
//! `rove_scenario::parse::WORKLOADS`, and its results in `crate::summary`.

pub mod requests;
pub mod video;
pub mod write_log;

use requests::RequestLoop;
use rove_scenario::spec::{FlowSpec, Workload};
use rove_scenario::Scenario;
use rove_sim::histogram::Histogram;
use rove_sim::rng::Stream;
use rove_sim::Nanos;
use video::VideoSource;
use write_log::WriteLog;

/// What an application counts (a measurement window takes differences of two copies).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppStats {
    /// Writes made: frames written, responses written.
    pub writes: u64,
    /// Writes that reached the receiving application in full.
    pub delivered: u64,
    /// Video: delivered after their deadline.
    pub late: u64,
    /// Per delivered write: the frame delay, or the transfer's completion time.
    pub delay: Histogram,
    /// Video with a `required_delay` (seed 003's per-packet application delay): segments
    /// written, segments delivered in order, those delivered later than the required delay,
    /// and each delivered segment's delay from its frame's write (empty otherwise).
    pub packets_written: u64,
    pub packets_delivered: u64,
    pub packets_late: u64,
    pub packet_delay: Histogram,
}

pub enum App {
    Video(VideoSource),
    Requests(RequestLoop),
}

/// An application and whether it has started (its connection is established).
pub struct FlowApp {
    pub app: App,
    pub started: bool,
}

impl App {
    /// The registry: the application of flow `spec`'s workload, `None` for a bulk transfer or
    /// an unresponsive source. Random streams derive from the flow's name.
    pub fn build(scenario: &Scenario, spec: &FlowSpec) -> Option<App> {
        let stream = |what: &str| Stream::new(scenario.seed, &format!("flow:{}:{what}", spec.name));
        match &spec.workload {
            Workload::Video(v) => Some(App::Video(VideoSource::new(
                *v,
                spec.size_bytes,
                stream("frames"),
                stream("scenes"),
            ))),
            Workload::Requests(r) => {
                // The ACK path of subflow 0 (the flow's own for a single-path flow).
                let ack_path = &spec.ack_path;
                let request_delay_ns = ack_path
                    .iter()
                    .map(|h| scenario.links[h.link].delay_ns)
                    .sum();
                Some(App::Requests(RequestLoop::new(
                    r.clone(),
                    request_delay_ns,
                    stream("sizes"),
                    stream("think"),
                )))
            }
            Workload::Bulk | Workload::Unresponsive { .. } => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            App::Video(_) => "video",
            App::Requests(_) => "requests",
        }
    }

    pub fn log(&self) -> &WriteLog {
        match self {
            App::Video(v) => &v.log,
            App::Requests(r) => &r.log,
        }
    }

    pub fn stats(&self) -> &AppStats {
        match self {
            App::Video(v) => &v.stats,
            App::Requests(r) => &r.stats,
        }
    }

    /// Writes whose time has passed undelivered: video frames past their deadline (0 for
    /// requests, whose transfers have no deadline).
    pub fn overdue(&self, now: Nanos) -> u64 {
        match self {
            App::Video(v) => v.overdue(now),
            App::Requests(_) => 0,
        }
    }

    /// Video with a `required_delay`: segments not delivered whose required delay has passed.
    pub fn overdue_packets(&self, now: Nanos) -> u64 {
        match self {
            App::Video(v) => v.overdue_packets(now),
            App::Requests(_) => 0,
        }
    }
}

impl FlowApp {
    pub fn new(app: App) -> Self {
        FlowApp {
            app,
            started: false,
        }
    }

    /// In-order bytes the receiving application has (exact, from the writes' sizes).
    pub fn bytes_delivered(&self) -> u64 {
        self.app.log().bytes_delivered()
    }

    /// A packet of the flow arrived at `now`: the connection may be established (the
    /// application starts) or its in-order point may have moved to `in_order_seg`. Returns a
    /// wake-up the application asks for.
    pub fn on_progress(
        &mut self,
        now: Nanos,
        established: bool,
        in_order_seg: u64,
    ) -> Option<Nanos> {
        if !self.started {
            if !established {
                return None;
            }
            self.started = true;
            return match &mut self.app {
                App::Video(v) => v.start(now),
                App::Requests(r) => r.start(now),
            };
        }
        match &mut self.app {
            App::Video(v) => {
                v.on_delivery(now, in_order_seg);
                None
            }
            App::Requests(r) => r.on_delivery(now, in_order_seg),
        }
    }

    /// A wake-up it asked for is due: writes through `write`; returns the next wake-up.
    pub fn on_wake(&mut self, now: Nanos, write: &mut dyn FnMut(u64)) -> Option<Nanos> {
        match &mut self.app {
            App::Video(v) => v.on_wake(now, write),
            App::Requests(r) => r.on_wake(now, write),
        }
    }
}
