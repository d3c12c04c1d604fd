//! Scenario to world: links from their specs, one sender/receiver pair per flow, algorithms from
//! the registry (unknown `cc_params` rejected with the key that names them).

use crate::world::{Flow, World};
use rove_scenario::{ParseOptions, Scenario, ScenarioError};
use rove_sim::link::Link;
use rove_tcp::cc;
use rove_tcp::receiver::TcpReceiver;
use rove_tcp::sender::TcpSender;
use rove_tcp::Segments;

/// Parses `text` and builds the world it describes.
pub fn load(text: &str, opts: &ParseOptions) -> Result<World, ScenarioError> {
    let names = cc::names();
    let opts = ParseOptions { known_cc: &names, ..*opts };
    let scenario = rove_scenario::parse(text, &opts)?;
    build(scenario)
}

pub fn build(scenario: Scenario) -> Result<World, ScenarioError> {
    let links: Vec<Link> = scenario.links.iter().map(|spec| Link::new(spec, scenario.seed)).collect();
    let mut flows = Vec::with_capacity(scenario.flows.len());
    for (i, spec) in scenario.flows.iter().enumerate() {
        let err = |location: String, message: String| ScenarioError { file: scenario.source.clone(), location, message };
        let seed = rove_scenario::stream_seed(scenario.seed, &format!("flow:{}:cc", spec.name));
        let algo = match cc::build(&spec.cc, &cc::CcConfig::new(&spec.cc_params, seed)) {
            None => {
                return Err(err(format!("flows[{i}].cc"), format!("unknown algorithm \"{}\"; known: {}", spec.cc, cc::names().join(", "))))
            }
            Some(Err(e)) => return Err(err(format!("flows[{i}].cc_params.{}", e.key), e.message)),
            Some(Ok(a)) => a,
        };
        let segments = Segments { size_bytes: spec.size_bytes };
        flows.push(Flow::new(
            spec.name.clone(),
            spec.cc.clone(),
            spec.start_ns,
            spec.path.iter().map(|&l| l as u32).collect(),
            spec.ack_path.iter().map(|&l| l as u32).collect(),
            TcpSender::new(algo, segments),
            TcpReceiver::new(segments, spec.rwnd_bytes),
        ));
    }
    Ok(World::new(scenario, links, flows))
}
