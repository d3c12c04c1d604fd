//! Helpers shared by the scenario tests.
#![allow(dead_code)] // each test file uses a subset

use rove_world::record::FlowSeries;
use rove_world::{load, summarize, ParseOptions, Summary, World};

/// Builds the world a TOML scenario describes (panicking with the scenario error).
pub fn world(toml: &str) -> World {
    load(toml, &ParseOptions { source: "<test>", ..Default::default() }).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a TOML scenario to its end; returns the world (time series, endpoints) and its summary.
pub fn run(toml: &str) -> (World, Summary) {
    let mut w = world(toml);
    w.run();
    let s = summarize(&w);
    (w, s)
}

/// Time-series rows of flow 0.
pub fn rows(f: &FlowSeries) -> Vec<usize> {
    (0..f.time_s.len()).filter(|&i| f.flow[i] == 0).collect()
}
