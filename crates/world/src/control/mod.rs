//! Controllers: observers that act during a run, at their own cadence. A controller sees the
//! world through [`crate::observe`] (per subflow: cwnd, ssthresh, RTTs, delivery rate,
//! inflight, losses, algorithm and mode; per link: backlog, drops, utilisation) and returns
//! changes ([`ActionSpec`]s), which the world applies exactly as it applies scheduled
//! `[[actions]]`: switch an algorithm, clamp a receive window, add/remove/pause a subflow,
//! change a link.
//!
//! A scenario names one with
//!
//! ```toml
//! [[controllers]]
//! kind = "features"     # from REGISTRY
//! every = "100ms"       # a time cadence, or: every_acks = 10 with flow = "a"
//! ...                   # its own keys
//! ```
//!
//! To add one: write `control/NAME.rs` with a type implementing [`Controller`] and a builder,
//! and add one line to [`REGISTRY`]. Prototype in Python first with `rove.Simulation`, which
//! drives the same `World::apply`.

mod features;
pub mod oal;
mod selection;
pub mod sscc;
mod tree_cc;

pub use features::{
    feature_names, feature_row, FeatureLog, LINK_FEATURES, MAX_FEATURES, SENDER_FEATURES,
};

use crate::world::World;
use rove_scenario::component::{build_components, ComponentError, ComponentParams};
use rove_scenario::spec::ActionSpec;
use rove_scenario::Scenario;
use rove_sim::Nanos;

/// When a controller is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cadence {
    /// Every `0` nanoseconds of simulated time, from the start.
    Every(Nanos),
    /// Every `n` ACKs that reach flow `flow`'s sender (any subflow).
    Acks { flow: usize, n: u32 },
}

pub trait Controller: Send + Sync {
    fn kind(&self) -> &'static str;

    /// Read when the controller is added and again after each call, so a time cadence may
    /// change from call to call (the selection controller's is the time to its next switch).
    fn cadence(&self) -> Cadence;

    /// Looks at the world at `now` and pushes the changes to apply now onto `actions` (their
    /// `at_ns` is ignored).
    fn tick(&mut self, now: Nanos, world: &World, actions: &mut Vec<ActionSpec>);

    /// What the controller recorded, if it records (the feature recorder), for the results.
    fn features(&self) -> Option<&FeatureLog> {
        None
    }

    /// A path element the controller needs on a link (OAL's packet monitor), taken once when
    /// the world is built.
    fn take_element(&mut self) -> Option<crate::element::Placed> {
        None
    }

    /// What the controller counted over the run, for tests and reports (`None`: nothing).
    fn report(&self) -> Option<serde_json::Value> {
        None
    }
}

type Builder = fn(&ComponentParams, &Scenario) -> Result<Box<dyn Controller>, ComponentError>;

/// Every built-in controller: (kind, constructor).
pub const REGISTRY: &[(&str, Builder)] = &[
    ("features", features::FeatureRecorder::build),
    ("selection", selection::Selection::build),
    ("tree_cc", tree_cc::TreeCc::build),
    ("data_units", sscc::DataUnitRecorder::build),
    ("sscc", sscc::Selector::build),
    ("oal", oal::Oal::build),
];

pub fn kinds() -> Vec<&'static str> {
    REGISTRY.iter().map(|(k, _)| *k).collect()
}

/// The cadence keys every controller takes: `every = "TIME"`, or `every_acks = N` with
/// `flow = "NAME"`.
pub fn read_cadence(p: &ComponentParams, scenario: &Scenario) -> Result<Cadence, ComponentError> {
    let every = p.time("every")?;
    let acks = p.number("every_acks")?;
    match (every, acks) {
        (Some(_), Some(_)) => Err(ComponentError {
            key: "every_acks".into(),
            message: "give every = \"TIME\" or every_acks = N, not both".into(),
        }),
        (Some(0), None) => Err(ComponentError {
            key: "every".into(),
            message: "must be greater than 0".into(),
        }),
        (Some(ns), None) => Ok(Cadence::Every(ns)),
        (None, Some(n)) if n >= 1.0 && n.fract() == 0.0 && n <= u32::MAX as f64 => Ok(Cadence::Acks {
            flow: p.flow("flow", scenario)?,
            n: n as u32,
        }),
        (None, Some(n)) => Err(ComponentError {
            key: "every_acks".into(),
            message: format!("{n} is not a whole number of ACKs from 1"),
        }),
        (None, None) => Err(ComponentError {
            key: "every".into(),
            message: "a controller needs a cadence: every = \"100ms\", or every_acks = N with flow = \"NAME\"".into(),
        }),
    }
}

/// Builds the scenario's `[[controllers]]`, then the ones its flows imply (a `cc = "sscc"`
/// multipath flow's selection, `sscc::implied`); errors name the controller's key.
pub fn build_all(
    scenario: &Scenario,
) -> Result<Vec<Box<dyn Controller>>, rove_scenario::ScenarioError> {
    let mut all = build_components(&scenario.controllers, scenario, REGISTRY)?;
    all.extend(build_components(
        &sscc::implied(scenario),
        scenario,
        REGISTRY,
    )?);
    Ok(all)
}
