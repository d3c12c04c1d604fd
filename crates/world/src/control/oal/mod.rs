//! `kind = "oal"`: OAL, on-AP learning (seed-004, Lin & Jiang 2020): a WiFi access point that
//! predicts its own congestion losses and slows unmodified TCP senders before its queues
//! overflow, by rewriting the receive window in the stations' uplink ACKs.
//!
//! ```text
//!   every tick (4 ms, Table 1's 250 Hz)
//!   ┌────────────┐ counters ┌──────────────┐ item: features of the last `window`,
//!   │ WiFi cell  │────────▶│ ApSampler     │ labelled `horizon` later with the loss class
//!   └────────────┘          │ + Monitor     │ of (t, t + horizon]   (Table 3)
//!        ▲   packets ──────▶│ (packets)     │────────────┐
//!        │                  └──────────────┘            ▼
//!        │ ACK rwnd                          latest `items` items ─▶ CART tree, every `retrain`
//!        │ rewritten                                                    │
//!   ┌────┴───────┐  Poor/Bad predicted: C(t), x_i = √(C·c_i),           ▼
//!   │ Monitor    │◀─ W_i = x_i·RTT_i if W_i < ĉwnd_i  ◀──── predict the class of the next window
//!   └────────────┘
//! ```
//!
//! Each tick the controller reads the cell's counters ([`sampler`]: Table 1's records, their
//! load and Eq. 1) and the packet monitor's counts ([`monitor`], a path element the controller
//! places at the cell's entry), pushes the tick into sliding windows ([`window`]), labels the
//! item from `horizon` ago with the congestion-loss class that followed it, and keeps the
//! latest `items` items. Every `retrain` it trains a decision tree on them ([`cart`], in the
//! engine: a retrain costs milliseconds and keeps runs deterministic, where stepping Python
//! would cost a round trip each second; on the kernel backend on a worker thread, [`trainer`]), and every tick it predicts the class of the next
//! window. On Poor or Bad (§6: "when the predicted state is 'poor' or 'bad'") it allocates
//! the rate C(t) of the last non-congested window among the flows with arrivals by Eq. 5
//! ([`allocate`]), turns each rate into a window W_i = x_i·RTT_i with the flow's round trip
//! through the AP, and has the monitor write it into the flow's ACKs while W_i is below the
//! flow's estimated cwnd (a cwnd regressor from `cwnd_model`, else UNA); on Good or Acceptable
//! ACKs pass untouched.
//!
//! Keys (defaults, and where they come from):
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `link` | required | the WiFi cell (`kind = "wifi"`) |
//! | `ap` | the cell's only AP | the access point (of the cell's `aps`) it runs on: required when the cell has several; it samples that AP's counters and acts on its stations' flows only |
//! | `every` | `"4ms"` | sampling tick (Table 1: 250 Hz) |
//! | `window` | `"100ms"` | [GAP] the feature window |
//! | `horizon` | `"100ms"` | [GAP] the label window after an item (§1.1: about the wired RTT 2T) |
//! | `retrain` | `"1s"` | §5.4: a tree every second |
//! | `items` | `10000` | §5.4: the latest 10 000 items |
//! | `min_items` | `1000` | [GAP] items before the first tree |
//! | `min_samples_split`, `min_samples_leaf`, `max_depth` | 200, 400, 64 | the authors' training script (repository; depth unlimited there) |
//! | `model` | none | a fixed classifier on `AP_FEATURES` (rove.learn's export of a scikit-learn tree); no retraining |
//! | `allocation` | `"utility"` | Eq. 5; `"fraction"`: the repository's per-class rule (ablation) |
//! | `weights` | equal | [GAP] c_i, one per downlink flow through the cell in scenario order |
//! | `cwnd_model` | none | a regressor on `CWND_FEATURES` (XGBoost JSON) giving ĉwnd in segments; [GAP] without it ĉwnd = UNA |
//! | `min_window` | `"2896B"` | [GAP] the least window written (2 segments, Linux's least cwnd) |
//! | `hold` | `"0ms"` | [GAP] how long targets stay written after the last Poor/Bad prediction (0: until the next tick's) |
//! | `act` | `true` | `false`: sample and predict only (collecting training data) |
//! | `record` | `false` | write every item to `features.parquet`, one row per flow, with its label |
//!
//! The controller is two parts: [`Oal`], the logic, which reads the cell's counters (the links)
//! and its packet monitor at each tick and sets the monitor's targets, and the simulator's
//! [`Controller`] around it, which places the monitor on the cell and calls [`Oal::step`] at
//! its cadence. The kernel backend's emulator runs the same [`Oal`] on its real clock and
//! feeds the monitor real packets (`crates/emu/src/oal.rs`, docs/oal.md).
//!
//! Further [GAP]s: C(t) is the AP's delivered rate over the last feature window whose observed
//! class was Good or Acceptable ("the data rate of its nearest noncongested time slot");
//! congestion losses are the AP's queue drops (overflow and CoDel) of downlink packets, counted
//! by cause from the model (the packet stream's count minus MAC drops is reported beside it);
//! a target holds until the next tick's prediction, or `hold` after it; the window scale of a flow is Linux's for
//! its receiver's largest window (`tcp_select_initial_window`), as rove's packets carry windows
//! in bytes.

pub mod allocate;
pub mod cart;
pub mod monitor;
pub mod sampler;
pub mod trainer;
pub mod window;

use super::{Cadence, Controller, FeatureLog};
use crate::element::Placed;
use crate::observe::SenderView;
use crate::world::World;
use allocate::{fraction_window, linux_wscale, utility_rates};
use cart::{ClassTree, TreeParams};
use monitor::{FlowSeen, Monitor, MonitorElement};
use rove_model::TreeModel;
use rove_scenario::component::{ComponentError, ComponentParams};
use rove_scenario::spec::ActionSpec;
use rove_scenario::Scenario;
use rove_sim::link::AnyLink;
use rove_sim::{Nanos, NS_PER_S};
use sampler::ApSampler;
use trainer::Trainer;
use std::sync::{Arc, Mutex};
use window::{loss_class, Tick, TickWindow, AP_FEATURES, N_AP_FEATURES};

/// The features of a flow's cwnd regression (seed-004 Table 5, noise left out: not modelled).
pub const CWND_FEATURES: &[&str] = &[
    "una_pkts",
    "links_rate_mbps",
    "channel_tx",
    "station_signal_db",
    "channel_busy",
    "retrans_ratio",
];

/// Per-flow columns of a recorded row, after the AP's.
const FLOW_COLUMNS: &[&str] = &[
    "una_pkts",
    "links_rate_mbps",
    "station_signal_db",
    "retrans_ratio",
    "flow_rate_mbps",
    "ap_rtt_ms",
    "cwnd_pkts",
    "srtt_ms",
    "loss_ratio",
    "loss_class",
    "predicted_class",
    "acting",
    "loss_ratio_next",
    "loss_class_next",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Allocation {
    Utility,
    Fraction,
}

/// One flow's arrivals and retransmissions over the feature window.
struct FlowWindow {
    arrivals: Vec<(u64, u64, u64)>,
    next: usize,
    sum: (u64, u64, u64),
}

impl FlowWindow {
    fn push(&mut self, v: (u64, u64, u64)) {
        let old = self.arrivals[self.next];
        self.sum = (self.sum.0 - old.0 + v.0, self.sum.1 - old.1 + v.1, self.sum.2 - old.2 + v.2);
        self.arrivals[self.next] = v;
        self.next = (self.next + 1) % self.arrivals.len();
    }
}

/// The latest items: AP features and the next window's class, in a ring.
struct Items {
    x: Vec<f64>,
    y: Vec<u8>,
    next: usize,
    len: usize,
    cap: usize,
}

impl Items {
    fn push(&mut self, f: &[f64; N_AP_FEATURES], class: u8) {
        self.x[self.next * N_AP_FEATURES..(self.next + 1) * N_AP_FEATURES].copy_from_slice(f);
        self.y[self.next] = class;
        self.next = (self.next + 1) % self.cap;
        self.len = (self.len + 1).min(self.cap);
    }

    /// The items in ring order (oldest first once full): the training set.
    fn ordered(&self, x: &mut Vec<f64>, y: &mut Vec<u8>) {
        x.clear();
        y.clear();
        let start = if self.len == self.cap { self.next } else { 0 };
        for k in 0..self.len {
            let i = (start + k) % self.cap;
            x.extend_from_slice(&self.x[i * N_AP_FEATURES..(i + 1) * N_AP_FEATURES]);
            y.push(self.y[i]);
        }
    }
}

/// What the controller counted over the run (its report).
#[derive(Debug, Clone, Default)]
pub struct OalReport {
    pub ticks: u64,
    pub retrains: u64,
    pub predictions: [u64; 4],
    /// The items' labels (next window's class), per class.
    pub labels: [u64; 4],
    pub acting_ticks: u64,
    pub rewrites: u64,
    /// Congestion losses by the model's own causes (AP queue drops of downlink packets).
    pub congestion_drops: u64,
    /// The AP MAC's drops of downlink frames (retry limit).
    pub mac_drops: u64,
    /// Losses as the packet stream sees them (downlink retransmissions at the AP).
    pub stream_losses: u64,
    /// Downlink data segments that reached the AP.
    pub arrivals: u64,
    pub load: sampler::Load,
    pub duration_s: f64,
    pub stations: usize,
    pub neighbours: usize,
}

impl OalReport {
    /// The paper's congestion-loss count: all losses from the packet stream minus MAC losses.
    pub fn stream_congestion_losses(&self) -> i64 {
        self.stream_losses as i64 - self.mac_drops as i64
    }

    /// Eq. 1 with the rates the run measured (z stations, x = z queues, y neighbours, r
    /// packets/s through the AP, η drops per packet), kbyte/s.
    pub fn eq1_kbytes(&self) -> f64 {
        let r = self.load.packets as f64 / self.duration_s;
        let eta = if self.load.packets > 0 {
            self.load.drops as f64 / self.load.packets as f64
        } else {
            0.0
        };
        let z = self.stations as f64;
        sampler::eq1_load_kbytes(z, z, self.neighbours as f64, r, eta)
    }

    /// Congestion drops over downlink arrivals at the AP.
    pub fn congestion_loss_ratio(&self) -> f64 {
        self.congestion_drops as f64 / (self.arrivals as f64).max(1.0)
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "ticks": self.ticks,
            "retrains": self.retrains,
            "predictions": {
                "good": self.predictions[0], "acceptable": self.predictions[1],
                "poor": self.predictions[2], "bad": self.predictions[3],
            },
            "labels": self.labels,
            "acting_ticks": self.acting_ticks,
            "rewrites": self.rewrites,
            "congestion_drops": self.congestion_drops,
            "mac_drops": self.mac_drops,
            "stream_losses": self.stream_losses,
            "arrivals": self.arrivals,
            "congestion_loss_ratio": self.congestion_loss_ratio(),
            "stream_congestion_losses": self.stream_congestion_losses(),
            "load_full_kbytes_s": self.load.full_bytes as f64 / 1024.0 / self.duration_s,
            "load_sent_kbytes_s": self.load.sent_bytes as f64 / 1024.0 / self.duration_s,
            "eq1_kbytes_s": self.eq1_kbytes(),
        })
    }
}

/// OAL's logic: sampling, items, training, prediction and the targets it gives the monitor.
pub struct Oal {
    /// The WiFi cell (index among the scenario's links).
    link: usize,
    tick_ns: Nanos,
    window_s: f64,
    retrain_ns: Nanos,
    next_retrain: Nanos,
    min_items: usize,
    tree_params: TreeParams,
    fixed_model: Option<TreeModel>,
    allocation: Allocation,
    /// Per world flow (0 for flows not through the cell).
    weights: Vec<f64>,
    cwnd_model: Option<TreeModel>,
    act: bool,
    /// How long a Poor/Bad prediction keeps the targets written.
    hold_ns: Nanos,
    acting_until: Nanos,
    /// The last congested class predicted (the fraction rule's class while holding).
    held_class: u8,
    record: Option<FeatureLog>,
    /// Per tick of the label window: the first recorded row of that tick (for its label).
    pending_rows: Vec<Option<usize>>,
    sampler: ApSampler,
    monitor: Arc<Mutex<Monitor>>,
    window: TickWindow,
    label_window: TickWindow,
    /// The feature vectors of the last `horizon` ticks, waiting for their labels.
    pending: Vec<Option<[f64; N_AP_FEATURES]>>,
    pending_next: usize,
    flow_windows: Vec<FlowWindow>,
    items: Items,
    tree: ClassTree,
    trainer: Trainer,
    train_x: Vec<f64>,
    train_y: Vec<u8>,
    /// C(t): the AP's delivered rate of the last non-congested window, bit/s.
    capacity_bps: Option<f64>,
    /// Scratch: the monitor's flows this tick, and their targets.
    seen: Vec<FlowSeen>,
    targets: Vec<(usize, Option<u64>)>,
    /// Scratch for the allocation (per tracked flow).
    active: Vec<usize>,
    active_weights: Vec<f64>,
    rates: Vec<f64>,
    scratch: Vec<f64>,
    report: OalReport,
}

fn err(key: &str, message: impl Into<String>) -> ComponentError {
    ComponentError {
        key: key.to_string(),
        message: message.into(),
    }
}

fn whole(p: &ComponentParams, key: &'static str, default: usize, min: usize) -> Result<usize, ComponentError> {
    match p.number(key)? {
        None => Ok(default),
        Some(v) if v.fract() == 0.0 && v >= min as f64 && v <= 1e9 => Ok(v as usize),
        Some(v) => Err(err(key, format!("{v} is not a whole number from {min}"))),
    }
}

fn load_model(p: &ComponentParams, key: &'static str, scenario: &Scenario, names: &[&str]) -> Result<Option<TreeModel>, ComponentError> {
    let Some(path) = p.path(key, scenario)? else {
        return Ok(None);
    };
    let m = TreeModel::load(&path).map_err(|e| err(key, e.to_string()))?;
    if m.n_features() != names.len() {
        return Err(err(key, format!("{} takes {} features; it must take {} ({})", m.file(), m.n_features(), names.len(), names.join(", "))));
    }
    if let Some(trained) = m.feature_names() {
        if trained.iter().zip(names).any(|(a, b)| a != b) {
            return Err(err(key, format!("{} was trained on columns {}; it must be {}", m.file(), trained.join(", "), names.join(", "))));
        }
    }
    Ok(Some(m))
}

impl Oal {
    /// The simulator's controller: the logic, and its monitor placed at the cell's entry.
    pub fn build(p: &ComponentParams, scenario: &Scenario) -> Result<Box<dyn Controller>, ComponentError> {
        let oal = Oal::new(p, scenario)?;
        let element = Placed {
            link: oal.link,
            element: Box::new(MonitorElement { shared: oal.monitor.clone() }),
        };
        Ok(Box::new(OalController { oal, element: Some(element) }))
    }

    /// The logic from the controller's keys (checked: unknown keys and bad values are errors).
    pub fn new(p: &ComponentParams, scenario: &Scenario) -> Result<Oal, ComponentError> {
        let link = p.link("link", scenario)?;
        let spec = &scenario.links[link];
        if spec.kind != "wifi" {
            return Err(err("link", format!("{:?} is a {:?} link; OAL runs on a WiFi cell (kind = \"wifi\")", spec.name, spec.kind)));
        }
        // The AP it runs on (one of several on the channel: crates/sim link/wifi/bss.rs), and
        // its stations.
        let (aps, station_ap) = rove_sim::link::wifi::access_points(&spec.model);
        let ap = match p.string("ap")? {
            None if aps.len() > 1 => {
                return Err(err("ap", format!("the cell {:?} has several access points ({}); name the one this controller runs on", spec.name, aps.join(", "))))
            }
            None => 0,
            Some(name) => aps.iter().position(|a| *a == name).ok_or_else(|| {
                err("ap", format!("unknown access point {name:?}; the cell {:?} has {}", spec.name, aps.join(", ")))
            })?,
        };
        let own: Vec<bool> = station_ap.iter().map(|&a| a == ap).collect();
        let stations = own.iter().filter(|&&o| o).count();
        // Neighbours: the other WiFi cells' APs and the other APs on this channel.
        let neighbours = scenario.links.iter().filter(|l| l.kind == "wifi").count() - 1 + aps.len() - 1;
        let positive = |key: &'static str, default: Nanos| -> Result<Nanos, ComponentError> {
            match p.time(key)? {
                None => Ok(default),
                Some(0) => Err(err(key, "must be greater than 0")),
                Some(ns) => Ok(ns),
            }
        };
        let tick_ns = positive("every", 4_000_000)?; // Table 1: 250 Hz
        let window_ns = positive("window", 100_000_000)?;
        let horizon_ns = positive("horizon", 100_000_000)?;
        let retrain_ns = positive("retrain", NS_PER_S)?; // §5.4: every second
        for (key, ns) in [("window", window_ns), ("horizon", horizon_ns)] {
            if ns % tick_ns != 0 {
                return Err(err(key, format!("{} ms is not a whole number of ticks (every = {} ms)", ns as f64 / 1e6, tick_ns as f64 / 1e6)));
            }
        }
        let items_cap = whole(p, "items", 10_000, 1)?; // §5.4
        let min_items = whole(p, "min_items", 1000, 1)?;
        let tree_params = TreeParams {
            min_samples_split: whole(p, "min_samples_split", 200, 2)?, // repository's script
            min_samples_leaf: whole(p, "min_samples_leaf", 400, 1)?,
            max_depth: whole(p, "max_depth", 64, 1)?,
        };
        let fixed_model = load_model(p, "model", scenario, AP_FEATURES)?;
        if let Some(m) = &fixed_model {
            let ok = m.classes().is_some_and(|c| c.iter().all(|l| l.as_index().is_some_and(|k| k < 4)));
            if !ok {
                return Err(err("model", format!("{} is not a classifier of the loss classes 0-3", m.file())));
            }
        }
        let allocation = match p.string("allocation")?.as_deref() {
            None | Some("utility") => Allocation::Utility,
            Some("fraction") => Allocation::Fraction,
            Some(other) => return Err(err("allocation", format!("unknown allocation {other:?}; accepted: \"utility\" (Eq. 5), \"fraction\" (the per-class rule)"))),
        };
        let cwnd_model = load_model(p, "cwnd_model", scenario, CWND_FEATURES)?;
        let floor_bytes = p.size("min_window")?.unwrap_or(2 * u64::from(rove_tcp::MSS));
        let act = p.boolean("act")?.unwrap_or(true);
        let hold_ns = p.time("hold")?.unwrap_or(0);
        let record = p.boolean("record")?.unwrap_or(false);

        // The downlink flows through the cell: their data path ends at one of its AP ports.
        let mut flows = vec![FlowSeen::UNTRACKED; scenario.flows.len()];
        for (i, f) in scenario.flows.iter().enumerate() {
            if f.multipath.is_some() {
                continue;
            }
            if let Some(h) = f.path.iter().find(|h| h.link == link && h.port % 2 == 0 && own[h.port as usize / 2]) {
                flows[i] = FlowSeen {
                    tracked: true,
                    station: h.port as usize / 2,
                    wscale: linux_wscale(f.rwnd_bytes),
                    ..FlowSeen::UNTRACKED
                };
            }
        }
        let tracked: Vec<usize> = (0..flows.len()).filter(|&i| flows[i].tracked).collect();
        let mut weights = vec![0.0; flows.len()];
        match p.numbers("weights")? {
            None => tracked.iter().for_each(|&i| weights[i] = 1.0),
            Some(w) if w.len() == tracked.len() && w.iter().all(|&v| v > 0.0 && v.is_finite()) => {
                tracked.iter().zip(&w).for_each(|(&i, &v)| weights[i] = v)
            }
            Some(w) => {
                let names: Vec<&str> = tracked.iter().map(|&i| scenario.flows[i].name.as_str()).collect();
                return Err(err("weights", format!("{} weights given; give one positive number per downlink flow through the cell, in order: {}", w.len(), names.join(", "))));
            }
        }
        let monitor = Arc::new(Mutex::new(Monitor::new(flows, floor_bytes)));
        let window_ticks = (window_ns / tick_ns) as usize;
        let horizon_ticks = (horizon_ns / tick_ns) as usize;
        let record = record.then(|| {
            let names: Vec<&'static str> = AP_FEATURES.iter().chain(FLOW_COLUMNS).copied().collect();
            FeatureLog {
                values: vec![Vec::new(); names.len()],
                names,
                // Which AP's rows, when the channel has several.
                tags: if aps.len() > 1 { vec![("ap", aps[ap].clone())] } else { Vec::new() },
                ..Default::default()
            }
        });
        let n_flows = scenario.flows.len();
        // The fixed model's outputs (a tree trained on fewer than the 4 classes has fewer).
        let model_outputs = fixed_model.as_ref().map_or(4, |m| m.n_outputs());
        Ok(Oal {
            link,
            tick_ns,
            window_s: window_ns as f64 / 1e9,
            retrain_ns,
            next_retrain: retrain_ns,
            min_items,
            tree_params,
            fixed_model,
            allocation,
            weights,
            cwnd_model,
            act,
            hold_ns,
            acting_until: 0,
            held_class: 0,
            record,
            pending_rows: vec![None; horizon_ticks],
            sampler: ApSampler::new(link, own, neighbours),
            monitor,
            window: TickWindow::new(window_ticks),
            label_window: TickWindow::new(horizon_ticks),
            pending: vec![None; horizon_ticks],
            pending_next: 0,
            flow_windows: (0..n_flows)
                .map(|_| FlowWindow { arrivals: vec![(0, 0, 0); window_ticks], next: 0, sum: (0, 0, 0) })
                .collect(),
            items: Items { x: vec![0.0; items_cap * N_AP_FEATURES], y: vec![0; items_cap], next: 0, len: 0, cap: items_cap },
            tree: ClassTree::default(),
            trainer: Trainer::Inline,
            train_x: Vec::new(),
            train_y: Vec::new(),
            capacity_bps: None,
            seen: Vec::with_capacity(n_flows),
            targets: Vec::with_capacity(n_flows),
            active: Vec::with_capacity(n_flows),
            active_weights: Vec::with_capacity(n_flows),
            rates: Vec::with_capacity(n_flows),
            scratch: vec![0.0; model_outputs],
            report: OalReport {
                stations,
                neighbours,
                ..Default::default()
            },
        })
    }

    /// The WiFi cell's index among the scenario's links.
    pub fn link(&self) -> usize {
        self.link
    }

    /// The sampling tick.
    pub fn tick_ns(&self) -> Nanos {
        self.tick_ns
    }

    /// Whether it records items (`record = true`: rows need the senders' true state).
    pub fn records(&self) -> bool {
        self.record.is_some()
    }

    /// Trains its trees on a worker thread that first runs `setup` (the emulator's real clock
    /// must not wait for a retrain; [`trainer`]).
    pub fn train_in_background(&mut self, setup: fn()) {
        if self.fixed_model.is_none() {
            self.trainer = Trainer::background(setup);
        }
    }

    /// The packet monitor whose targets [`Oal::step`] sets.
    pub fn monitor(&self) -> &Arc<Mutex<Monitor>> {
        &self.monitor
    }

    /// What the controller counted so far.
    pub fn report(&self) -> &OalReport {
        &self.report
    }

    fn predict(&mut self, f: &[f64; N_AP_FEATURES]) -> Option<u8> {
        match &self.fixed_model {
            Some(m) => m
                .predict_class(f, &mut self.scratch)
                .ok()
                .and_then(|c| m.classes().and_then(|cl| cl[c].as_index()))
                .map(|k| k as u8),
            None => self.tree.predict(f),
        }
    }

    /// The flow's cwnd estimate, segments: the regressor's, or UNA.
    fn cwnd_estimate(&self, row: &[f64; 6]) -> f64 {
        match &self.cwnd_model {
            Some(m) => m.predict_value(row).unwrap_or(row[0]),
            None => row[0],
        }
    }

    /// The Table 5 features of flow `i` (`CWND_FEATURES` order).
    fn cwnd_row(&self, i: usize, seen: &FlowSeen, f: &[f64; N_AP_FEATURES]) -> [f64; 6] {
        let (pkts, _, retrans) = self.flow_windows[i].sum;
        [
            seen.una_pkts() as f64,
            f[10] * 8.0 / self.window_s / 1e6, // link_tx_bytes over the window
            f[3],
            self.sampler.station_signal(seen.station),
            f[2],
            if pkts > 0 { retrans as f64 / pkts as f64 } else { 0.0 },
        ]
    }
}

/// The simulator's controller: [`Oal`] at its cadence, its monitor a path element on the cell.
struct OalController {
    oal: Oal,
    element: Option<Placed>,
}

impl Controller for OalController {
    fn kind(&self) -> &'static str {
        "oal"
    }

    fn cadence(&self) -> Cadence {
        Cadence::Every(self.oal.tick_ns)
    }

    fn take_element(&mut self) -> Option<Placed> {
        self.element.take()
    }

    fn features(&self) -> Option<&FeatureLog> {
        self.oal.record.as_ref()
    }

    fn report(&self) -> Option<serde_json::Value> {
        Some(self.oal.report.to_json())
    }

    fn tick(&mut self, now: Nanos, world: &World, _actions: &mut Vec<ActionSpec>) {
        self.oal.step(now, &world.links, Some(&|i| world.sender_view(i, 0)));
    }
}

impl Oal {
    /// One tick at `now`: samples the cell (`links[link]`), takes the monitor's counts, labels,
    /// retrains, predicts, and sets the monitor's targets. `senders` gives a flow's true state
    /// for recorded rows (the simulator's; `None`: no rows are recorded).
    pub fn step(&mut self, now: Nanos, links: &[AnyLink], senders: Option<&dyn Fn(usize) -> SenderView>) {
        let mut tick = Tick::default();
        self.sampler.sample(now, links, &mut tick);
        let n_flows = self.flow_windows.len();
        // The packet stream since the last tick (flows' snapshots for the allocation below).
        let mut seen = std::mem::take(&mut self.seen);
        {
            let mut m = self.monitor.lock().expect("single-threaded");
            for (i, f) in m.flows.iter_mut().enumerate() {
                if !f.tracked {
                    continue;
                }
                tick.arrivals_pkts += f.arrivals_pkts as f64;
                self.report.arrivals += f.arrivals_pkts;
                tick.arrivals_bytes += f.arrivals_bytes as f64;
                tick.retransmissions += f.retransmissions as f64;
                self.flow_windows[i].push((f.arrivals_pkts, f.arrivals_bytes, f.retransmissions));
                f.arrivals_pkts = 0;
                f.arrivals_bytes = 0;
                f.retransmissions = 0;
            }
            tick.datapath_bytes = m.datapath_bytes as f64;
            self.sampler.packets(m.datapath_pkts);
            m.datapath_bytes = 0;
            m.datapath_pkts = 0;
            self.report.rewrites = m.rewrites;
            self.report.stream_losses = m.retransmissions;
            seen.clone_from(&m.flows);
        }
        self.report.ticks += 1;
        self.report.congestion_drops = self.sampler.congestion_drops;
        self.report.mac_drops = self.sampler.mac_drops;
        self.report.load = self.sampler.load;
        self.report.duration_s = now as f64 / NS_PER_S as f64;

        self.window.push(tick);
        self.label_window.push(tick);
        let mut f = [0.0; N_AP_FEATURES];
        self.window.features(self.window_s, &mut f);

        // The item from `horizon` ago now has its label: the class of the ticks since.
        let next_ratio = self.label_window.sum().congestion_ratio();
        let slot = self.pending_next;
        if let Some(old) = self.pending[slot].take() {
            self.items.push(&old, loss_class(next_ratio));
            self.report.labels[loss_class(next_ratio) as usize] += 1;
        }
        if let (Some(log), Some(first)) = (self.record.as_mut(), self.pending_rows[slot].take()) {
            let base = AP_FEATURES.len() + FLOW_COLUMNS.len();
            for row in first..log.time_s.len() {
                if log.time_s[row] > log.time_s[first] {
                    break;
                }
                log.values[base - 2][row] = next_ratio;
                log.values[base - 1][row] = f64::from(loss_class(next_ratio));
            }
        }
        if self.window.is_full() {
            self.pending[slot] = Some(f);
        }
        self.pending_next = (slot + 1) % self.pending.len();

        if let Some(tree) = self.trainer.finished(&mut self.train_x, &mut self.train_y) {
            self.tree = tree;
            self.report.retrains += 1;
        }
        if self.fixed_model.is_none() && now >= self.next_retrain {
            self.next_retrain = now + self.retrain_ns;
            if self.items.len >= self.min_items && !self.trainer.busy() {
                self.items.ordered(&mut self.train_x, &mut self.train_y);
                if let Some(tree) = self.trainer.start(&mut self.train_x, &mut self.train_y, self.tree_params) {
                    self.tree = tree;
                    self.report.retrains += 1;
                }
            }
        }

        // C(t): the delivered rate of the last window that was not congested.
        let now_ratio = self.window.sum().congestion_ratio();
        let now_class = loss_class(now_ratio);
        if self.window.is_full() && now_class <= 1 {
            self.capacity_bps = Some(self.window.sum().tx_bytes * 8.0 / self.window_s);
        }
        let predicted = if self.window.is_full() { self.predict(&f) } else { None };
        if let Some(c) = predicted {
            self.report.predictions[c as usize] += 1;
        }

        // Targets per flow.
        let mss = f64::from(rove_tcp::MSS);
        let mut targets = std::mem::take(&mut self.targets);
        targets.clear();
        let trigger = match self.allocation {
            Allocation::Utility => 2,
            Allocation::Fraction => 1,
        };
        if let Some(c) = predicted.filter(|&c| c >= trigger) {
            self.acting_until = now + self.hold_ns;
            self.held_class = c;
        }
        let held = predicted.is_some_and(|c| c >= trigger) || now < self.acting_until;
        let acting = self.act
            && held
            && (self.allocation == Allocation::Fraction || self.capacity_bps.is_some());
        self.active.clear();
        self.active_weights.clear();
        for i in 0..n_flows {
            if seen[i].tracked && self.flow_windows[i].sum.0 > 0 {
                self.active.push(i);
                self.active_weights.push(self.weights[i]);
            }
        }
        if acting && !self.active.is_empty() {
            self.report.acting_ticks += 1;
            self.rates.clear();
            self.rates.resize(self.active.len(), 0.0);
            if let Some(c) = self.capacity_bps {
                utility_rates(c, &self.active_weights, &mut self.rates);
            }
            for (k, &i) in self.active.iter().enumerate() {
                let cwnd_bytes = self.cwnd_estimate(&self.cwnd_row(i, &seen[i], &f)) * mss;
                let target = match self.allocation {
                    Allocation::Utility => seen[i].min_rtt_ns().map(|rtt| self.rates[k] / 8.0 * rtt as f64 / 1e9),
                    Allocation::Fraction => Some(fraction_window(self.held_class, cwnd_bytes, mss)),
                };
                let t = target.filter(|&w| w < cwnd_bytes).map(|w| w.max(0.0) as u64);
                targets.push((i, t));
            }
        }
        {
            let mut m = self.monitor.lock().expect("single-threaded");
            for f in m.flows.iter_mut() {
                f.target_bytes = None;
            }
            for &(i, t) in &targets {
                m.flows[i].target_bytes = t;
            }
        }
        if let Some(senders) = senders {
            self.record_rows(now, senders, &seen, &targets, &f, (now_ratio, now_class, predicted), slot);
        }
        self.seen = seen;
        self.targets = targets;
    }
}

impl Oal {
    /// Appends this tick's rows (one per downlink flow) to the recorded items; their labels
    /// are filled in `horizon` later.
    #[allow(clippy::too_many_arguments)]
    fn record_rows(
        &mut self,
        now: Nanos,
        senders: &dyn Fn(usize) -> SenderView,
        seen: &[FlowSeen],
        targets: &[(usize, Option<u64>)],
        f: &[f64; N_AP_FEATURES],
        (now_ratio, now_class, predicted): (f64, u8, Option<u8>),
        slot: usize,
    ) {
        let n_flows = seen.len();

        if self.record.is_some() && self.window.is_full() {
            let t = now as f64 / NS_PER_S as f64;
            let mut rows: Vec<(usize, [f64; 12], &'static str, &'static str)> = Vec::new();
            for i in 0..n_flows {
                if !seen[i].tracked {
                    continue;
                }
                let v = senders(i);
                let c = self.cwnd_row(i, &seen[i], f);
                let (_, bytes, _) = self.flow_windows[i].sum;
                rows.push((
                    i,
                    [
                        c[0],
                        c[1],
                        c[3],
                        c[5],
                        bytes as f64 * 8.0 / self.window_s / 1e6,
                        seen[i].min_rtt_ns().map_or(f64::NAN, |r| r as f64 / 1e6),
                        f64::from(v.cwnd_pkts),
                        v.srtt_ms,
                        now_ratio,
                        f64::from(now_class),
                        predicted.map_or(f64::NAN, f64::from),
                        if targets.iter().any(|&(j, w)| j == i && w.is_some()) { 1.0 } else { 0.0 },
                    ],
                    v.cc,
                    v.mode,
                ));
            }
            let log = self.record.as_mut().expect("checked");
            self.pending_rows[slot] = (!rows.is_empty()).then_some(log.time_s.len());
            for (i, vals, cc, mode) in rows {
                log.time_s.push(t);
                log.flow.push(i as u32);
                log.subflow.push(-1);
                log.cc.push(cc);
                log.mode.push(mode);
                let all = f.iter().chain(vals.iter()).chain([f64::NAN, f64::NAN].iter());
                for (col, x) in log.values.iter_mut().zip(all) {
                    col.push(*x);
                }
            }
        }
    }
}
