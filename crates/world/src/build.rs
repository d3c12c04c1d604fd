//! Scenario to world: links from their specs, one sender/receiver pair per single-path flow, one
//! `rove_mp::Connection` per multipath flow, algorithms from the registries (unknown `cc_params`
//! rejected with the key that names them).

use crate::world::{Flow, FlowRef, MpFlow, SubflowRoute, World};
use rove_mp::{coupling, sched, Connection, ConnectionConfig};
use rove_scenario::{FlowSpec, MultipathSpec, ParseOptions, Scenario, ScenarioError};
use rove_sim::link::Link;
use rove_tcp::cc;
use rove_tcp::receiver::TcpReceiver;
use rove_tcp::sender::TcpSender;
use rove_tcp::Segments;

/// Parses `text` and builds the world it describes.
pub fn load(text: &str, opts: &ParseOptions) -> Result<World, ScenarioError> {
    let names = cc::names();
    let schedulers = sched::names();
    let opts = ParseOptions {
        known_cc: &names,
        known_schedulers: &schedulers,
        known_couplings: coupling::COUPLINGS,
        ..*opts
    };
    let scenario = rove_scenario::parse(text, &opts)?;
    build(scenario)
}

pub fn build(scenario: Scenario) -> Result<World, ScenarioError> {
    let links: Vec<Link> = scenario
        .links
        .iter()
        .map(|spec| Link::new(spec, scenario.seed))
        .collect();
    let mut flows = Vec::with_capacity(scenario.flows.len());
    let mut connections = Vec::new();
    let mut order = Vec::with_capacity(scenario.flows.len());
    for (i, spec) in scenario.flows.iter().enumerate() {
        let err = |location: String, message: String| ScenarioError {
            file: scenario.source.clone(),
            location,
            message,
        };
        if let Some(mp) = &spec.multipath {
            order.push(FlowRef::Multi(connections.len()));
            connections.push(
                build_connection(&scenario, spec, mp)
                    .map_err(|(key, message)| err(format!("flows[{i}].{key}"), message))?,
            );
            continue;
        }
        let seed = rove_scenario::stream_seed(scenario.seed, &format!("flow:{}:cc", spec.name));
        let algo = match cc::build(&spec.cc, &cc::CcConfig::new(&spec.cc_params, seed)) {
            None => {
                return Err(err(
                    format!("flows[{i}].cc"),
                    format!(
                        "unknown algorithm \"{}\"; known: {}",
                        spec.cc,
                        cc::names().join(", ")
                    ),
                ))
            }
            Some(Err(e)) => return Err(err(format!("flows[{i}].cc_params.{}", e.key), e.message)),
            Some(Ok(a)) => a,
        };
        let segments = Segments {
            size_bytes: spec.size_bytes,
        };
        order.push(FlowRef::Single(flows.len()));
        flows.push(Flow::new(
            spec.name.clone(),
            spec.cc.clone(),
            spec.start_ns,
            spec.path.iter().map(|&l| l as u32).collect(),
            spec.ack_path.iter().map(|&l| l as u32).collect(),
            TcpSender::new(algo, segments),
            receiver(spec, segments),
        ));
    }
    Ok(World::new(scenario, links, flows, connections, order))
}

/// A single-path flow's receiver: Linux's auto-tuned window, or a fixed one (`rcv_buffer`).
fn receiver(spec: &rove_scenario::FlowSpec, segments: rove_tcp::Segments) -> TcpReceiver {
    let r = TcpReceiver::new(segments, spec.rwnd_bytes);
    if spec.rcv_autotune {
        r.autotuned(spec.rcv_truesize)
    } else {
        r
    }
}

/// A multipath flow's connection; errors as (key relative to the flow, message).
fn build_connection(
    scenario: &Scenario,
    spec: &FlowSpec,
    mp: &MultipathSpec,
) -> Result<MpFlow, (String, String)> {
    let built = coupling::build_subflow_ccs(
        &mp.coupling,
        &spec.cc,
        &spec.cc_params,
        mp.paths.len(),
        |sub| {
            rove_scenario::stream_seed(
                scenario.seed,
                &format!("flow:{}:subflow:{sub}:cc", spec.name),
            )
        },
    )
    .map_err(|e| (e.key, e.message))?;
    let scheduler = sched::build(&mp.scheduler).ok_or_else(|| {
        (
            "scheduler".to_string(),
            format!(
                "unknown scheduler {:?}; accepted: {}",
                mp.scheduler,
                sched::names().join(", ")
            ),
        )
    })?;
    // The coupling as resolved ("auto" becomes what it chose), for the results.
    let coupling = if built.coupling.is_some() {
        "connection"
    } else {
        "uncoupled"
    };
    let conn = Connection::new(ConnectionConfig {
        ccs: built.ccs,
        coupling: built.coupling,
        scheduler,
        size_bytes: spec.size_bytes,
        rwnd_bytes: spec.rwnd_bytes,
        start_ns: spec.start_ns,
    });
    let paths = mp
        .paths
        .iter()
        .map(|p| SubflowRoute {
            path: p.path.iter().map(|&l| l as u32).collect(),
            ack_path: p.ack_path.iter().map(|&l| l as u32).collect(),
        })
        .collect();
    Ok(MpFlow::new(
        spec.name.clone(),
        spec.cc.clone(),
        coupling.to_string(),
        spec.start_ns,
        paths,
        conn,
    ))
}
