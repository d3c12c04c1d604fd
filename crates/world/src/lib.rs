//! The simulated world: a scenario's links and flows, the event loop that runs them, and the
//! results they produce (summary and time series).

pub mod actions;
pub mod bottleneck;
pub mod build;
pub mod control;
pub mod datagram;
pub mod element;
pub mod estimate;
pub mod observe;
pub mod path_cost;
pub mod pcap;
pub mod record;
pub mod summary;
pub mod transport;
pub mod window;
pub mod workload;
pub mod world;

pub use build::{build, load, load_file, parse};
pub use estimate::{estimate, Estimate};
pub use rove_scenario::{ParseOptions, Scenario, ScenarioError};
pub use summary::{summarize, Summary};
pub use world::World;

/// Congestion-control algorithms the simulator knows.
pub fn cc_names() -> Vec<&'static str> {
    rove_tcp::cc::names()
}
