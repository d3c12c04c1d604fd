//! MPTCP-SSCC's learned selection of a congestion control per uncoupled subflow (Yang's thesis
//! §5.4.3–5.4.5, seed 000 §4.4–4.6; issue 16 item 3), and the recorder of its training data.
//!
//! # Where it sits
//!
//! `cc = "sscc"` on a multipath flow runs three things. The receiver's RFC 8382 detection
//! (`rove_mp::detect::rfc8382`) groups the subflows that share a bottleneck; the subflows of a
//! group of two or more are *coupled* and run OLIA* (`olia_sbd`, `rove_tcp::cc::coupled::olia`);
//! every other subflow is *uncoupled*, and this controller (`kind = "sscc"`) gives it the
//! algorithm a learned model predicts will earn the best reward on its path for the next period:
//!
//! ```text
//!  every ACK of the flow ─▶ per subflow: its Data Unit accumulator (data_unit.rs, 20 ACKs)
//!                           coupled now and not on OLIA*?  ─▶ switch to olia_sbd
//!  a Data Unit closes ────▶ uncoupled, and `period` DUs since the last decision:
//!                           Algorithm 4: R̂_CC = M_CC(DU) for every candidate (models.rs);
//!                           the largest positive R̂ wins; switch if it is not the one running
//!                           Algorithm 5: the prefix's weights learn the choice (weights.rs)
//!  a subflow is established ─▶ uncoupled: its prefix's choice (Algorithm 5), else `initial`
//! ```
//!
//! A switch is a change like an `[[actions]]` entry's (`cc`, handoff `keep`: the kernel's
//! `setsockopt(TCP_CONGESTION)` keeps cwnd and ssthresh), applied by `World::apply` as every
//! controller's changes are; the coupling's bookkeeping (a subflow leaving the coupled
//! algorithms leaves its group's sums) is done there.
//!
//! # Keys of `kind = "sscc"`
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `flow` | (required) | a multipath flow with `cc = "sscc"` |
//! | `model` | the built-in set | a model set's `manifest.json` (`models.rs`), relative to the scenario file |
//! | `period` | 1 | Data Units between two predictions of a subflow (the thesis predicts at every DU) |
//! | `decay` | 0.9 | α of Algorithm 5, 0 < α < 1 [GAP] |
//! | `initial` | `"cubic"` | a new subflow's algorithm when its prefix has no prediction yet (the CC Switch Module's default, §5.4.5) |
//!
//! A flow with `cc = "sscc"` that no `kind = "sscc"` controller names gets one with these
//! defaults when the world is built, so `cc = "sscc"` alone runs detection, OLIA* and selection
//! (issue 16 item 3). Why a controller rather than `cc_params`: the selection watches a whole
//! connection and switches its subflows' algorithms, which is what controllers do in rove
//! (`tree_cc`, `selection`), through the one mechanism the world has for it; `cc_params` are an
//! algorithm's own, given to every subflow's instance (OLIA*'s here). To run MPTCP-SSCC's
//! coupling without the selection, use `cc = "olia_sbd"` with `detector = "rfc8382"`.
//!
//! # Choices where the thesis is silent [GAP]
//!
//! - **No candidate predicted above 0.** Algorithm 4 starts from `reward_max ← 0` and returns
//!   `None` when no model predicts more; the subflow then keeps its algorithm, and Algorithm 5
//!   learns nothing from that period.
//! - **The first algorithm** is set when the controller first sees the subflow established (at
//!   its SYN-ACK): its SYN and initial window have left under OLIA* (Reno alone), which every
//!   candidate sends alike (ten segments).
//! - **A subflow that leaves a coupled group** keeps OLIA* (Reno, alone) until its next decision.
//! - **The /24 prefix** is the subflow's data path's last hop (`weights.rs`); the weight map is
//!   the controller's, so per connection.
//!
//! # `kind = "data_units"`: the training data
//!
//! Records every Data Unit of every subflow of `flow` into `features.parquet` (columns
//! [`DU_COLUMNS`] beside `time_s` = the DU's `ts`, `flow`, `subflow`, `cc` = the algorithm that
//! ran during the DU, and `mode`, the sender's mode at its end), with its reward (Eq. 5.8). Keys:
//! `flow`; `acks` (20, ACKs per DU); `zeta` (5), `beta` (1.25) and `loss_unit` (`"bps"` or
//! `"fraction"`) for the reward. `rove train sscc` records with it and pairs each DU's fields
//! with the next DU's algorithm and reward ("in state DU_n, choosing CC for the next period
//! yielded R_{n+1}", §5.4.4's Training Data Collector).

mod data_unit;
pub mod models;
mod weights;

pub use data_unit::{
    delay_prime, AckReading, DataUnit, DuAccumulator, LossUnit, Reward, BETA, DU_ACKS, DU_FEATURES,
    ZETA,
};
pub use weights::PrefixWeights;

use super::{Cadence, Controller, FeatureLog};
use crate::world::Hop;
use crate::world::World;
use models::ModelSet;
use rove_scenario::component::{ComponentError, ComponentParams};
use rove_scenario::spec::{ActionSpec, ActionTarget, Change, ComponentSpec, HandoffSpec, Workload};
use rove_scenario::Scenario;
use rove_sim::{Nanos, NS_PER_S};

/// OLIA*, the algorithm of coupled subflows.
pub const COUPLED_CC: &str = "olia_sbd";
/// Algorithm 5's α when the scenario gives none [GAP] (see `weights.rs`).
pub const DECAY: f64 = 0.9;
/// A new subflow's algorithm before its prefix has a prediction: the CC Switch Module's
/// default, "Cubic if absent" (§5.4.5).
pub const INITIAL: &str = "cubic";

/// The numeric columns `kind = "data_units"` records, in order.
pub const DU_COLUMNS: &[&str] = &[
    "tput_mbps",
    "loss_mbps",
    "delay_ms",
    "delay_min_ms",
    "tput_max_mbps",
    "loss_fraction",
    "is_coupled",
    "span_ms",
    "reward",
];

fn err(key: &str, message: impl Into<String>) -> ComponentError {
    ComponentError {
        key: key.to_string(),
        message: message.into(),
    }
}

/// Whether subflow `sub` of `flow` is coupled: in a detected group of two or more open
/// subflows, or, without detection, in a connection whose algorithms are coupled together.
pub fn is_coupled(world: &World, flow: usize, sub: usize) -> bool {
    let Some(c) = world.flows[flow].transport.connection() else {
        return false;
    };
    let open = |i: usize| !c.subflows[i].closed;
    match &c.detection {
        Some(d) => {
            let g = d.groups();
            let mine = g[sub];
            (0..g.len()).filter(|&i| g[i] == mine && open(i)).count() >= 2
        }
        None => c.coupling.is_some() && (0..c.subflows.len()).filter(|&i| open(i)).count() >= 2,
    }
}

/// What has been read of one subflow's sender.
#[derive(Debug, Clone)]
struct Watch {
    acks: u64,
    rtt_samples: u64,
    acc: DuAccumulator,
    /// The algorithm at the DU's first ACK: the one that ran during it (switches happen at DU
    /// ends, after that DU's last ACK).
    cc: &'static str,
}

/// The Data Units of a flow's subflows, read from their senders at every ACK of the flow.
#[derive(Debug, Clone)]
struct FlowDus {
    flow: usize,
    acks_per_du: u32,
    subs: Vec<Watch>,
}

impl FlowDus {
    fn new(flow: usize, acks_per_du: u32) -> Self {
        FlowDus {
            flow,
            acks_per_du,
            subs: Vec::new(),
        }
    }

    /// Reads subflow `sub`'s ACKs since the last call; returns the DU the newest one closed and
    /// the algorithm that ran during it. Called at every ACK of the flow, so at most one new
    /// ACK per call.
    fn read(
        &mut self,
        world: &World,
        sub: usize,
        coupled: bool,
    ) -> Option<(DataUnit, &'static str)> {
        while self.subs.len() <= sub {
            self.subs.push(Watch {
                acks: 0,
                rtt_samples: 0,
                acc: DuAccumulator::new(self.acks_per_du),
                cc: "",
            });
        }
        let s = world.flows[self.flow].transport.sender(sub);
        let w = &mut self.subs[sub];
        let tp = &s.tp;
        if !w.acc.has_begun() {
            let Some(at) = s.stats.established_at else {
                return None;
            };
            w.acc.begin(at, tp.lost, tp.delivered);
            w.rtt_samples = s.stats.rtt.count();
            w.acks = s.stats.acks;
            w.cc = s.cc.name();
        }
        let new_acks = s.stats.acks - w.acks;
        if new_acks == 0 {
            return None;
        }
        if w.acc_is_fresh() {
            w.cc = s.cc.name();
        }
        w.acks = s.stats.acks;
        let samples = s.stats.rtt.count();
        let rtt_ns = (samples > w.rtt_samples)
            .then(|| s.stats.last_rtt_sample.map(|(_, rtt)| rtt))
            .flatten();
        w.rtt_samples = samples;
        let reading = AckReading {
            now: world.now(),
            rtt_ns,
            delivery_rate_bps: tp.delivery_rate_bps(),
            lost_pkts: tp.lost,
            delivered_pkts: tp.delivered,
            srtt_ns: tp.srtt_us * 1000,
            mss_bytes: tp.mss_cache,
        };
        let mut closed = None;
        for _ in 0..new_acks {
            if let Some(du) = w.acc.on_ack(&reading, coupled) {
                closed = Some((du, w.cc));
            }
        }
        closed
    }
}

impl Watch {
    /// No ACK of the DU in progress has been read yet.
    fn acc_is_fresh(&self) -> bool {
        self.acc.acks_in_progress() == 0
    }
}

/// The flow a DU controller watches: a TCP flow (`multipath`: a multipath one).
fn tcp_flow(
    p: &ComponentParams,
    scenario: &Scenario,
    multipath: bool,
) -> Result<usize, ComponentError> {
    let flow = p.flow("flow", scenario)?;
    let spec = &scenario.flows[flow];
    if matches!(spec.workload, Workload::Unresponsive { .. }) {
        return Err(err("flow", format!("{:?} is not a TCP flow", spec.name)));
    }
    if multipath && spec.multipath.is_none() {
        return Err(err(
            "flow",
            format!(
                "{:?} is not a multipath flow (its subflows are what is selected for)",
                spec.name
            ),
        ));
    }
    Ok(flow)
}

/// `kind = "data_units"`: records the Data Units of a flow's subflows (module documentation).
pub struct DataUnitRecorder {
    dus: FlowDus,
    reward: Reward,
    multipath: bool,
    log: FeatureLog,
}

impl DataUnitRecorder {
    pub fn build(
        p: &ComponentParams,
        scenario: &Scenario,
    ) -> Result<Box<dyn Controller>, ComponentError> {
        let flow = tcp_flow(p, scenario, false)?;
        let acks = match p.number("acks")? {
            None => DU_ACKS,
            Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= 1e6 => n as u32,
            Some(n) => {
                return Err(err(
                    "acks",
                    format!("{n} is not a whole number of ACKs from 1 to 1000000"),
                ))
            }
        };
        let zeta = match p.number("zeta")? {
            None => ZETA,
            Some(z) if z >= 0.0 && z.is_finite() => z,
            Some(z) => return Err(err("zeta", format!("{z} is not a loss sensitivity ≥ 0"))),
        };
        let beta = match p.number("beta")? {
            None => BETA,
            Some(b) if b >= 1.0 && b.is_finite() => b,
            Some(b) => return Err(err("beta", format!("{b} is not a delay tolerance ≥ 1"))),
        };
        let loss_unit = match p.string("loss_unit")? {
            None => LossUnit::Bps,
            Some(u) => LossUnit::parse(&u).ok_or_else(|| {
                err(
                    "loss_unit",
                    format!(
                        "unknown unit {u:?}; accepted: {}",
                        LossUnit::NAMES.join(", ")
                    ),
                )
            })?,
        };
        Ok(Box::new(DataUnitRecorder {
            dus: FlowDus::new(flow, acks),
            reward: Reward {
                zeta,
                beta,
                loss_unit,
            },
            multipath: scenario.flows[flow].multipath.is_some(),
            log: FeatureLog {
                names: DU_COLUMNS.to_vec(),
                values: vec![Vec::new(); DU_COLUMNS.len()],
                ..Default::default()
            },
        }))
    }
}

impl Controller for DataUnitRecorder {
    fn kind(&self) -> &'static str {
        "data_units"
    }

    fn cadence(&self) -> Cadence {
        Cadence::Acks {
            flow: self.dus.flow,
            n: 1,
        }
    }

    fn tick(&mut self, _now: Nanos, world: &World, _actions: &mut Vec<ActionSpec>) {
        let flow = self.dus.flow;
        for sub in 0..world.flows[flow].transport.subflow_count() {
            let coupled = is_coupled(world, flow, sub);
            let Some((du, cc)) = self.dus.read(world, sub, coupled) else {
                continue;
            };
            let log = &mut self.log;
            log.time_s.push(du.ts_ns as f64 / NS_PER_S as f64);
            log.flow.push(flow as u32);
            log.subflow
                .push(if self.multipath { sub as i32 } else { -1 });
            log.cc.push(cc);
            log.mode
                .push(world.flows[flow].transport.sender(sub).cc_mode());
            let f = du.features();
            let row = [
                f[0],
                f[1],
                f[2],
                f[3],
                f[4],
                du.loss_fraction,
                if du.is_coupled { 1.0 } else { 0.0 },
                du.span_ns as f64 / 1e6,
                self.reward.of(&du),
            ];
            for (col, x) in log.values.iter_mut().zip(row) {
                col.push(x);
            }
        }
    }

    fn features(&self) -> Option<&FeatureLog> {
        Some(&self.log)
    }
}

/// The selection controllers a scenario implies: one with the default keys for every multipath
/// flow with `cc = "sscc"` that no `kind = "sscc"` controller names (errors then name
/// `flows[N].KEY`).
pub fn implied(scenario: &Scenario) -> Vec<ComponentSpec> {
    scenario
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.cc == "sscc" && f.multipath.is_some())
        .filter(|(_, f)| {
            !scenario.controllers.iter().any(|c| {
                c.kind == "sscc" && c.params.get("flow").and_then(|v| v.as_str()) == Some(&f.name)
            })
        })
        .map(|(i, f)| {
            let mut params = toml::Table::new();
            params.insert("flow".into(), toml::Value::String(f.name.clone()));
            ComponentSpec {
                kind: "sscc".into(),
                params,
                location: format!("flows[{i}]"),
            }
        })
        .collect()
}

/// Per subflow: the selector's state.
#[derive(Debug, Clone, Copy, Default)]
struct Selected {
    /// Its first algorithm has been set (or it was coupled when established).
    started: bool,
    /// Data Units since its last prediction.
    since: u32,
}

/// `kind = "sscc"`: Algorithms 4 and 5 on a flow's uncoupled subflows (module documentation).
pub struct Selector {
    dus: FlowDus,
    set: ModelSet,
    weights: PrefixWeights,
    period: u32,
    initial: &'static str,
    subs: Vec<Selected>,
    /// The models' predictions (a buffer: a decision does not allocate).
    predicted: Vec<f64>,
}

impl Selector {
    pub fn build(
        p: &ComponentParams,
        scenario: &Scenario,
    ) -> Result<Box<dyn Controller>, ComponentError> {
        let flow = tcp_flow(p, scenario, true)?;
        let spec = &scenario.flows[flow];
        if spec.cc != "sscc" {
            return Err(err(
                "flow",
                format!(
                    "{:?} runs cc = {:?}; the selection runs on a flow with cc = \"sscc\" (OLIA* for its coupled subflows)",
                    spec.name, spec.cc
                ),
            ));
        }
        let set = match p.path("model", scenario)? {
            None => ModelSet::builtin(),
            Some(path) => ModelSet::load(&path),
        }
        .map_err(|e| err("model", e))?;
        let period = match p.number("period")? {
            None => 1,
            Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= 1e6 => n as u32,
            Some(n) => {
                return Err(err(
                    "period",
                    format!("{n} is not a whole number of Data Units from 1 to 1000000"),
                ))
            }
        };
        let decay = match p.number("decay")? {
            None => DECAY,
            Some(a) if a > 0.0 && a < 1.0 => a,
            Some(a) => return Err(err("decay", format!("{a} is not a decay α with 0 < α < 1"))),
        };
        let known = rove_tcp::cc::names();
        let initial = match p.string("initial")? {
            None => INITIAL,
            Some(name) => match known.iter().find(|k| **k == name) {
                Some(&cc) if !rove_tcp::cc::coupled::is_coupled(cc) => cc,
                Some(_) => return Err(err("initial", format!("{name:?} is a coupled algorithm; an uncoupled subflow runs a single-path one"))),
                None => return Err(err("initial", format!("unknown algorithm {name:?}; algorithms are: {}", known.join(", ")))),
            },
        };
        let n = set.candidates.len();
        Ok(Box::new(Selector {
            dus: FlowDus::new(flow, set.du_acks),
            weights: PrefixWeights::new(n, decay),
            set,
            period,
            initial,
            subs: Vec::new(),
            predicted: vec![0.0; n],
        }))
    }

    /// Algorithm 4 on an uncoupled subflow's Data Unit: the candidate with the largest
    /// predicted reward above 0 (the first on ties), or `None`.
    fn predict(&mut self, du: &DataUnit) -> Option<usize> {
        self.set.predict(&du.features(), &mut self.predicted);
        let mut best = None;
        let mut reward_max = 0.0;
        for (i, &r) in self.predicted.iter().enumerate() {
            if r > reward_max {
                best = Some(i);
                reward_max = r;
            }
        }
        best
    }
}

/// A subflow's "destination /24" (`weights.rs`): its data path's last hop.
fn prefix(world: &World, flow: usize, sub: usize) -> Hop {
    let route = world.route(world.flows[flow].routes[sub].data);
    *route.last().expect("a subflow's data path has a link")
}

fn switch(now: Nanos, flow: usize, sub: usize, cc: &str) -> ActionSpec {
    ActionSpec {
        at_ns: now,
        target: ActionTarget::Flow {
            flow,
            subflow: Some(sub),
        },
        change: Change::Cc {
            name: cc.to_string(),
            params: toml::Table::new(),
            handoff: HandoffSpec::Keep,
        },
    }
}

impl Controller for Selector {
    fn kind(&self) -> &'static str {
        "sscc"
    }

    fn cadence(&self) -> Cadence {
        Cadence::Acks {
            flow: self.dus.flow,
            n: 1,
        }
    }

    fn tick(&mut self, now: Nanos, world: &World, actions: &mut Vec<ActionSpec>) {
        let flow = self.dus.flow;
        let c = world.flows[flow]
            .transport
            .connection()
            .expect("a multipath flow");
        for sub in 0..c.subflows.len() {
            if self.subs.len() <= sub {
                self.subs.push(Selected::default());
            }
            let sf = &c.subflows[sub];
            if sf.closed {
                continue;
            }
            let coupled = is_coupled(world, flow, sub);
            let running = sf.sender.cc.name();
            if coupled && running != COUPLED_CC {
                // Moved into a coupled group: back to OLIA*.
                actions.push(switch(now, flow, sub, COUPLED_CC));
            }
            if !self.subs[sub].started && sf.sender.is_established() {
                self.subs[sub].started = true;
                if !coupled {
                    let first = match self.weights.best(prefix(world, flow, sub)) {
                        Some(i) => self.set.candidates[i],
                        None => self.initial,
                    };
                    if first != running {
                        actions.push(switch(now, flow, sub, first));
                    }
                }
            }
            let Some((du, _)) = self.dus.read(world, sub, coupled) else {
                continue;
            };
            if du.is_coupled || coupled {
                self.subs[sub].since = 0;
                continue;
            }
            self.subs[sub].since += 1;
            if self.subs[sub].since < self.period {
                continue;
            }
            self.subs[sub].since = 0;
            let Some(best) = self.predict(&du) else {
                continue; // nothing predicted above 0: keep the algorithm
            };
            self.weights.update(prefix(world, flow, sub), best);
            let cc = self.set.candidates[best];
            if cc != running {
                actions.push(switch(now, flow, sub, cc));
            }
        }
    }
}
