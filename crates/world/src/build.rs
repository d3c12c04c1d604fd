//! Scenario to world: links from their specs, one transport per flow (a sender/receiver pair for
//! a single-path flow, a `rove_mp::Connection` for a multipath one), the route table their
//! subflows use, algorithms and schedulers from the registries (unknown `cc_params` and
//! `scheduler_params` rejected with the key that names them).

use crate::datagram::{DatagramSink, DatagramSource};
use crate::transport::Transport;
use crate::workload::{App, FlowApp};
use crate::world::{Flow, RouteTable, World};
use crate::{control, element};
use rove_mp::detect::{self, Fixed};
use rove_mp::detection::Detection;
use rove_mp::{coupling, receiver, sched, Connection, ConnectionConfig, ConnectionData};
use rove_scenario::{FlowSpec, MultipathSpec, ParseOptions, Scenario, ScenarioError};
use rove_sim::link::{model as link_model, AnyLink};
use rove_tcp::cc;
use rove_tcp::receiver::TcpReceiver;
use rove_tcp::sender::TcpSender;
use rove_tcp::Segments;

/// Parses `text` and builds the world it describes.
pub fn load(text: &str, opts: &ParseOptions) -> Result<World, ScenarioError> {
    build(parse(text, opts)?)
}

/// Reads the scenario file at `path` and builds its world, trace paths resolved against the
/// file's directory (what the examples and tools that take a scenario path need).
pub fn load_file(
    path: &std::path::Path,
    overrides: &[(String, String)],
) -> Result<World, ScenarioError> {
    let opts = ParseOptions {
        overrides,
        ..Default::default()
    };
    rove_scenario::with_file(path, opts, load)
}

/// Parses and checks `text` against the engine's registries, without building anything (so a
/// scenario's cost can be estimated before it is paid).
pub fn parse(text: &str, opts: &ParseOptions) -> Result<Scenario, ScenarioError> {
    let names = cc::names();
    let schedulers = sched::names();
    let detectors = detector_names();
    let receivers = receiver::names();
    let link_kinds = link_model::kinds();
    let element_kinds = element::kinds();
    let controller_kinds = control::kinds();
    let opts = ParseOptions {
        known_link_kinds: &link_kinds,
        known_elements: &element_kinds,
        known_controllers: &controller_kinds,
        known_cc: &names,
        known_schedulers: &schedulers,
        known_couplings: coupling::COUPLINGS,
        known_detectors: &detectors,
        known_receivers: &receivers,
        ..*opts
    };
    rove_scenario::parse(text, &opts)
}

pub fn build(scenario: Scenario) -> Result<World, ScenarioError> {
    let links: Vec<AnyLink> = scenario
        .links
        .iter()
        .map(|spec| link_model::build(spec, scenario.seed))
        .collect();
    let mut flows = Vec::with_capacity(scenario.flows.len());
    let mut routes = RouteTable::default();
    for (i, spec) in scenario.flows.iter().enumerate() {
        let err = |location: String, message: String| ScenarioError {
            file: scenario.source.clone(),
            location,
            message,
        };
        let app = App::build(&scenario, spec).map(FlowApp::new);
        if let Some(mp) = &spec.multipath {
            flows.push(
                build_connection(&scenario, spec, mp, app.is_some(), &mut routes)
                    .map_err(|(key, message)| err(format!("flows[{i}].{key}"), message))?
                    .with_app(app),
            );
            continue;
        }
        let transport = match spec.workload {
            rove_scenario::Workload::Unresponsive {
                process,
                rate_bps,
                packet_bytes,
            } => {
                let label = format!("flow:{}:workload", spec.name);
                Transport::Datagram {
                    source: DatagramSource::new(
                        process,
                        rate_bps,
                        packet_bytes,
                        spec.start_ns,
                        spec.size_bytes,
                        rove_sim::rng::Stream::new(scenario.seed, &label),
                    ),
                    sink: DatagramSink::default(),
                }
            }
            _ => {
                let seed =
                    rove_scenario::stream_seed(scenario.seed, &format!("flow:{}:cc", spec.name));
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
                    Some(Err(e)) => {
                        return Err(err(format!("flows[{i}].cc_params.{}", e.key), e.message))
                    }
                    Some(Ok(a)) => a,
                };
                if app.is_some() {
                    // The application feeds the sender; the receiver numbers bytes as if every
                    // segment were full (its window is in segments anyway), and the application
                    // counts the exact bytes delivered.
                    let mut sender = TcpSender::new_fed(algo);
                    sender.set_app_writes(spec.slow_start_after_idle);
                    Transport::Tcp {
                        sender,
                        receiver: receiver(spec, Segments { size_bytes: None }),
                    }
                } else {
                    let segments = Segments {
                        size_bytes: spec.size_bytes,
                    };
                    Transport::Tcp {
                        sender: TcpSender::new(algo, segments),
                        receiver: receiver(spec, segments),
                    }
                }
            }
        };
        // An unresponsive flow's ACK path is empty: it sends nothing back.
        let subflow = routes.subflow(&spec.path, &spec.ack_path);
        flows.push(
            Flow::new(
                spec.name.clone(),
                spec.cc.clone(),
                None,
                spec.start_ns,
                transport,
                vec![subflow],
            )
            .with_app(app),
        );
    }
    let mut elements: Vec<Vec<_>> = (0..links.len()).map(|_| Vec::new()).collect();
    for placed in element::build_all(&scenario)? {
        elements[placed.link].push(placed.element);
    }
    check_action_algorithms(&scenario)?;
    let mut controllers = control::build_all(&scenario)?;
    // Elements a controller places for itself (OAL's packet monitor), after the scenario's.
    for c in &mut controllers {
        if let Some(placed) = c.take_element() {
            elements[placed.link].push(placed.element);
        }
    }
    Ok(World::new(
        scenario,
        links,
        elements,
        controllers,
        routes,
        flows,
    ))
}

/// Builds (and drops) every algorithm an `[[actions]]` entry switches to, so a bad `cc_params`
/// is reported before the run rather than when the action is due.
fn check_action_algorithms(scenario: &Scenario) -> Result<(), ScenarioError> {
    for a in &scenario.actions {
        let rove_scenario::Change::Cc { name, params, .. } = &a.change else {
            continue;
        };
        if let Some(Err(e)) = cc::build(name, &cc::CcConfig::new(params, 0)) {
            return Err(ScenarioError {
                file: scenario.source.clone(),
                location: format!(
                    "actions (at {} s).cc_params.{}",
                    a.at_ns as f64 / 1e9,
                    e.key
                ),
                message: e.message,
            });
        }
    }
    Ok(())
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

/// A multipath flow's connection (fed by an application when `app_writes`); errors as (key
/// relative to the flow, message).
fn build_connection(
    scenario: &Scenario,
    spec: &FlowSpec,
    mp: &MultipathSpec,
    app_writes: bool,
    routes: &mut RouteTable,
) -> Result<Flow, (String, String)> {
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
    let scheduler = match sched::build(&mp.scheduler, &mp.scheduler_params) {
        None => {
            return Err((
                "scheduler".to_string(),
                format!(
                    "unknown scheduler {:?}; accepted: {}",
                    mp.scheduler,
                    sched::names().join(", ")
                ),
            ))
        }
        Some(Err(e)) => return Err((format!("scheduler_params.{}", e.key), e.message)),
        Some(Ok(s)) => s,
    };
    let mut scheduler = scheduler;
    scheduler
        .set_path_costs(mp.paths.len(), mp.costs.as_deref())
        .map_err(|e| (format!("scheduler_params.{}", e.key), e.message))?;
    let detection = build_detection(scenario, spec, mp)?;
    let receiver = match &mp.receiver {
        None => None,
        Some(name) => match receiver::build(name, &mp.receiver_params) {
            None => {
                return Err((
                    "receiver".to_string(),
                    format!(
                        "unknown receiver {name:?}; accepted: {}",
                        receiver::names().join(", ")
                    ),
                ))
            }
            Some(Err(e)) => return Err((format!("receiver_params.{}", e.key), e.message)),
            Some(Ok(b)) => Some(b),
        },
    };
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
        data: if app_writes {
            ConnectionData::AppWrites {
                slow_start_after_idle: spec.slow_start_after_idle,
            }
        } else {
            ConnectionData::Bulk {
                size_bytes: spec.size_bytes,
            }
        },
        rwnd_bytes: spec.rwnd_bytes,
        start_ns: spec.start_ns,
        detection,
        receiver,
    });
    let subflows = mp
        .paths
        .iter()
        .map(|p| routes.subflow(&p.path, &p.ack_path))
        .collect();
    let mut flow = Flow::new(
        spec.name.clone(),
        spec.cc.clone(),
        Some(coupling.to_string()),
        spec.start_ns,
        Transport::Multipath(conn),
        subflows,
    );
    if mp.costs.is_some() {
        flow.rate_peaks = Some(crate::path_cost::RatePeaks::new(scenario.measure_ns));
    }
    Ok(flow)
}

/// The `detector` names a multipath flow accepts: the registry's, `"truth"` (the topology's own
/// grouping, `crate::bottleneck`) and `"auto"` (the algorithm's own with `coupling = "auto"`:
/// `bccps` for `mpbbr`, `rfc8382` for `sscc`; no detection otherwise).
pub fn detector_names() -> Vec<&'static str> {
    let mut names = vec!["auto", "truth"];
    names.extend(detect::names());
    names
}

/// A multipath flow's shared-bottleneck detection (`None`: the coupling stays as built): the
/// detector its `detector` names, with the topology's true partition for the accuracy.
fn build_detection(
    scenario: &Scenario,
    spec: &FlowSpec,
    mp: &MultipathSpec,
) -> Result<Option<Detection>, (String, String)> {
    let name = match mp.detector.as_str() {
        // MPTCP-BBR couples what its own detection finds (seed-001 Algorithm 1), unless the
        // scenario fixes the coupling itself ("connection": one set; "uncoupled": none).
        "auto" if spec.cc == "mpbbr" && mp.coupling == "auto" => "bccps",
        // MPTCP-SSCC couples what the receiver's RFC 8382 detection groups (seed-000 §4.3).
        "auto" if spec.cc == "sscc" && mp.coupling == "auto" => "rfc8382",
        "auto" => {
            if let Some(key) = mp.detector_params.keys().next() {
                return Err((
                    format!("detector_params.{key}"),
                    format!(
                        "no detector runs for cc {:?} unless `detector` names one; accepted: {}",
                        spec.cc,
                        detector_names().join(", ")
                    ),
                ));
            }
            return Ok(None);
        }
        other => other,
    };
    let truth = crate::bottleneck::true_partition_of(scenario, &mp.paths);
    let detector: Box<dyn detect::Detector> = if name == "truth" {
        if let Some(key) = mp.detector_params.keys().next() {
            return Err((
                format!("detector_params.{key}"),
                "the \"truth\" detector takes no parameters".to_string(),
            ));
        }
        Box::new(Fixed::new("truth", &truth))
    } else {
        detect::build(name, &mp.detector_params, mp.paths.len()).map_err(|e| {
            if e.key == "detector" || e.key == "subflows" {
                (e.key, e.message)
            } else {
                (format!("detector_params.{}", e.key), e.message)
            }
        })?
    };
    Ok(Some(Detection::new(
        detector,
        Some(truth),
        mp.paths.len(),
        spec.start_ns,
    )))
}
