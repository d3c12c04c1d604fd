//! `rove-kernel run`: one scenario on the real Linux stack.
//!
//! 1. Parse the scenario (the simulator's parser: same keys, same errors) and check what the
//!    kernel cannot do: an algorithm it lacks, `cc_params` (but those of "bbr2plus", which go
//!    into its eBPF map before the flows start: bpf_params.rs).
//! 2. Build the topology (topology.rs): two namespaces, TUN devices, addresses, routes.
//! 3. Start `rove-traffic server` for every flow in the receiver namespace and wait until they
//!    all listen, then the emulator
//!    (`rove-emu`) with the scenario's time 0 set a moment ahead, and wait for it to be ready.
//! 4. At each flow's start time, start `rove-traffic client` in the sender namespace: bulk flows
//!    (`size = inf`) run `--duration` until the scenario's end, sized flows `--bytes N`.
//! 5. At the scenario's end write both namespaces' MIB counters to `raw/netstat.json`
//!    (netstat.rs); then (after a grace period for clients to write their last line) stop
//!    everything, and write `raw/run.json` describing the run. The raw directory is built as
//!    `raw.partial-<pid>` and renamed to `raw` only when complete.
//!
//! Every stop signal (SIGINT, SIGTERM, SIGHUP) is blocked and collected at the waiting points,
//! so an interrupted run always unwinds through the guards: children are killed (by process
//! group), namespaces deleted, the partial raw directory removed.

use crate::netns::Netns;
use crate::procs::Procs;
use crate::sys::{self, monotonic_ns, pending_stop_signal, wait_stop_signal};
use crate::topology::{
    is_multipath, receiver_addr, routes, sender_addr, RouteSpec, Topology, TUN_NAME,
};
use crate::traffic::handoff::{Handoff, Switch, HANDOFF_CC};
use rove_scenario::{Nanos, Scenario, NS_PER_S};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// TCP port of every flow's server (each flow has its own receiver address).
pub const SERVER_PORT: u16 = 5201;
/// Time between starting the emulator and the scenario's time 0: the emulator attaches its
/// TUN devices and the servers finish starting meanwhile.
const T0_LEAD_NS: Nanos = 300_000_000;
/// How long after the scenario's end a client may take to finish and write its last line.
const CLIENT_GRACE: Duration = Duration::from_secs(3);
/// The emulator keeps running this long after the scenario's end on its own at most.
const EMU_SAFETY_S: f64 = 30.0;

#[derive(Debug)]
pub enum RunError {
    /// Bad input or an unusable machine (not root, no TUN): exit status 2.
    Usage(String),
    /// Something failed while running: exit status 1.
    Failed(String),
    /// A stop signal arrived: exit status 128 + signal.
    Interrupted(i32),
}

impl RunError {
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Usage(_) => 2,
            RunError::Failed(_) => 1,
            RunError::Interrupted(sig) => 128 + sig,
        }
    }

    pub fn message(&self) -> String {
        match self {
            RunError::Usage(m) | RunError::Failed(m) => m.clone(),
            RunError::Interrupted(sig) => {
                format!("interrupted by signal {sig}; everything the run made was removed")
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub scenario: PathBuf,
    pub out_dir: PathBuf,
    pub seed: Option<u64>,
    pub overrides: Vec<(String, String)>,
    pub emu_bin: PathBuf,
    pub traffic_bin: PathBuf,
    pub spin_us: u64,
}

/// Not root, or no `/dev/net/tun`: the one-line reason (exit status 2).
pub fn check_machine() -> Result<(), String> {
    if !sys::is_root() {
        return Err("the kernel backend needs root (it creates network namespaces and TUN devices); run as root".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err("/dev/net/tun is missing: the kernel backend needs TUN support (modprobe tun, or a container with /dev/net/tun)".into());
    }
    Ok(())
}

/// The congestion controls this kernel offers.
pub fn available_cc() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Parses the scenario and rejects what the kernel backend cannot run.
pub fn load_scenario(opts: &RunOptions) -> Result<Scenario, RunError> {
    let mut sc = crate::link_emu::parse_scenario(&opts.scenario, &opts.overrides, opts.seed)
        .map_err(|e| RunError::Usage(e.to_string()))?;
    let source = opts.scenario.display();
    let available = available_cc();
    let loadable = crate::bpf_cc::loadable();
    let sim_only = |key: &str, what: &str| {
        RunError::Usage(format!(
            "{source}: {key}: {what} runs on the simulator only for now; run without --backend kernel"
        ))
    };
    let selected = selection_switches(&sc, &available, &loadable)?;
    sc.actions.extend(selected);
    sc.controllers.clear();
    for (k, a) in sc.actions.iter().enumerate() {
        if let Some(what) = kernel_receiver_action(&sc, a) {
            what.map_err(|what| {
                RunError::Usage(format!(
                    "{source}: actions[{k}]: {what}; run without --backend kernel"
                ))
            })?;
            continue;
        }
        kernel_switch(&sc, a).map_err(|what| {
            RunError::Usage(format!(
                "{source}: actions[{k}]: {what}; run without --backend kernel"
            ))
        })?;
        if let rove_scenario::spec::Change::Cc { name, .. } = &a.change {
            if !available.is_empty() && !available.contains(name) && !loadable.contains(name) {
                return Err(RunError::Usage(format!(
                    "{source}: actions[{k}].cc: the kernel has no congestion control {name:?} and rove has no eBPF port of it; available: {}",
                    available.join(", ")
                )));
            }
        }
    }
    for (key, present) in [
        ("elements", !sc.elements.is_empty()),
        ("controllers", !sc.controllers.is_empty()),
    ] {
        if present {
            return Err(sim_only(key, &format!("[[{key}]]")));
        }
    }
    if sc.measure_ns != (0, sc.duration_ns) {
        return Err(sim_only("measure", "a measurement window"));
    }
    for (i, f) in sc.flows.iter().enumerate() {
        if f.workload != rove_scenario::Workload::Bulk {
            let key = format!("flows[{i}] ({}).workload", f.name);
            return Err(sim_only(
                &key,
                &format!("workload = {:?}", f.workload.name()),
            ));
        }
        if crate::bpf_params::WITH_PARAMS.contains(&f.cc.as_str()) {
            // BBRv2+'s parameters go through its eBPF map (bpf_params.rs), per destination
            // address: a multipath flow's subflows have several.
            if !f.cc_params.is_empty() && is_multipath(f) {
                return Err(RunError::Usage(format!(
                    "{source}: flows[{i}] ({}).cc_params: the kernel backend passes {}'s parameters to single-path flows only; remove cc_params or run on the simulator",
                    f.name, f.cc
                )));
            }
            if let Err((key, message)) = crate::bpf_params::resolve(&f.cc, &f.cc_params) {
                return Err(RunError::Usage(format!(
                    "{source}: flows[{i}] ({}).cc_params.{key}: {message}",
                    f.name
                )));
            }
        } else if let Some(key) = f.cc_params.keys().next() {
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).cc_params.{key}: cc_params cannot be applied on the kernel backend (the kernel's {} takes no per-flow parameters); remove cc_params or run on the simulator",
                f.name, f.cc
            )));
        }
        if !available.is_empty()
            && !available.iter().any(|a| a == &f.cc)
            && !loadable.contains(&f.cc)
        {
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).cc: the kernel has no congestion control {:?} and rove has no eBPF port of it; available: {}{}",
                f.name,
                f.cc,
                available.join(", "),
                if loadable.is_empty() {
                    String::new()
                } else {
                    format!("; loadable as eBPF: {}", loadable.join(", "))
                }
            )));
        }
    }
    // The in-kernel path manager's endpoints belong to the namespace, not to a connection:
    // every MPTCP connection in the sender namespace would open subflows from every endpoint.
    let mp: Vec<usize> = (0..sc.flows.len())
        .filter(|&i| is_multipath(&sc.flows[i]))
        .collect();
    for &i in &mp {
        let (f, m) = (
            &sc.flows[i],
            sc.flows[i].multipath.as_ref().expect("multipath"),
        );
        let kernel_max = crate::traffic::mptcp::MAX_SUBFLOWS;
        if m.paths.len() > kernel_max {
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).paths: {} subflows; upstream MPTCP allows at most {kernel_max} per connection (the simulator allows {}); run on the simulator",
                f.name,
                m.paths.len(),
                rove_scenario::MAX_SUBFLOWS
            )));
        }
        // Upstream MPTCP has one packet scheduler, the default one (net/mptcp/protocol.c,
        // mptcp_subflow_get_send: the subflow that would finish sending soonest, from its
        // pacing rate and queued bytes; the lowest-RTT subflow when both are free), and no
        // coupled congestion control: each subflow runs the socket's TCP_CONGESTION.
        if m.scheduler != "minrtt" {
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).scheduler: the kernel's MPTCP has only its default scheduler (rove's \"minrtt\"), not {:?}; remove the key or run on the simulator",
                f.name, m.scheduler
            )));
        }
        // rove's schedulers' parameters have no kernel counterpart (minrtt takes none anyway).
        if let Some(key) = m.scheduler_params.keys().next() {
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).scheduler_params.{key}: the kernel's MPTCP scheduler takes no parameters; remove scheduler_params or run on the simulator",
                f.name
            )));
        }
        // Path costs only feed the simulator's results (path_cost, peak x/c) and `tsc`.
        if m.costs.is_some() {
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).paths[0].cost: the kernel backend does not report path costs; remove cost or run on the simulator",
                f.name
            )));
        }
        // Shared-bottleneck detection regroups the simulator's coupling; the kernel's coupled
        // ports couple every subflow of a connection.
        if m.detector != "auto" || !m.detector_params.is_empty() {
            let key = if m.detector != "auto" {
                "detector".to_string()
            } else {
                format!(
                    "detector_params.{}",
                    m.detector_params.keys().next().unwrap()
                )
            };
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).{key}: the kernel backend runs no shared-bottleneck detector; remove the key or run on the simulator",
                f.name
            )));
        }
        // A receiver behaviour steers the sender through the simulator's receiver; the kernel
        // backend's receiver is the kernel's own (its emulator runs scheduled `dupacks` only).
        if let Some(r) = &m.receiver {
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).receiver: the kernel backend runs no receiver behaviour ({r:?}); remove the key or run on the simulator",
                f.name
            )));
        }
        // Upstream MPTCP has no coupled congestion control; rove's eBPF ports in
        // bpf_cc::COUPLED couple every subflow of their connection (crates/emu/bpf/mptcp_coupled.h).
        // "auto" couples a coupled algorithm, so on the kernel it is "connection" for those and
        // "uncoupled" for the others.
        let coupled = crate::bpf_cc::COUPLED.contains(&f.cc.as_str());
        if m.coupling == "connection" && !coupled {
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).coupling: \"connection\" on the kernel needs one of rove's eBPF coupled algorithms as cc ({}), not {:?}; use coupling = \"auto\" or \"uncoupled\", or run on the simulator",
                f.name,
                crate::bpf_cc::COUPLED.join(", "),
                f.cc
            )));
        }
        if m.coupling == "uncoupled" && coupled {
            return Err(RunError::Usage(format!(
                "{source}: flows[{i}] ({}).coupling: rove's eBPF {} couples every subflow of its connection; \"uncoupled\" runs on the simulator only",
                f.name, f.cc
            )));
        }
    }
    if mp.len() > 1 {
        return Err(RunError::Usage(format!(
            "{source}: flows[{}] ({}).paths: the kernel backend runs at most one multipath flow per scenario (the kernel's MPTCP endpoints are shared by every connection of a namespace); flows[{}] is multipath too",
            mp[1], sc.flows[mp[1]].name, mp[0]
        )));
    }
    Ok(sc)
}

/// The switches of the scenario's `[[controllers]] kind = "selection"` (phases = "time"), read by
/// the simulator's own reader (`rove_scenario::selection`): the same instants and handoff, run
/// as the client's live switches. `kind = "oal"` controllers run in the emulator (oal.rs; built
/// here once to check their keys). Any other controller is refused, naming it.
fn selection_switches(
    sc: &Scenario,
    available: &[String],
    loadable: &[String],
) -> Result<Vec<rove_scenario::spec::ActionSpec>, RunError> {
    use rove_scenario::component::build_components;
    use rove_scenario::selection::Selection;
    if let Some(c) = sc
        .controllers
        .iter()
        .find(|c| c.kind != "selection" && c.kind != "oal")
    {
        return Err(RunError::Usage(format!(
            "{}: {}: a controller of kind {:?} runs on the simulator only for now (the kernel backend runs kind = \"selection\" and \"oal\"); run without --backend kernel",
            sc.source, c.location, c.kind
        )));
    }
    crate::oal::build(sc).map_err(RunError::Usage)?;
    let selections: Vec<_> = sc
        .controllers
        .iter()
        .filter(|c| c.kind == "selection")
        .cloned()
        .collect();
    let built = build_components(&selections, sc, &[("selection", Selection::read)])
        .map_err(|e| RunError::Usage(e.to_string()))?;
    for (s, spec) in built.iter().zip(&selections) {
        let missing = |cc: &&String| {
            !available.is_empty() && !available.contains(*cc) && !loadable.contains(*cc)
        };
        if let Some(bad) = s.plan.iter().find(missing) {
            return Err(RunError::Usage(format!(
                "{}: {}.plan: the kernel has no congestion control {bad:?} and rove has no eBPF port of it; available: {}",
                sc.source,
                spec.location,
                available.join(", ")
            )));
        }
    }
    Ok(built.into_iter().flat_map(|s| s.switches).collect())
}

/// The kernel-side form of an `[[actions]]` entry: a live congestion-control switch of a
/// single-path flow after its start (the client's `--switches`); anything else is what the
/// kernel backend cannot do yet, as the error's text.
pub fn kernel_switch(
    sc: &Scenario,
    a: &rove_scenario::spec::ActionSpec,
) -> Result<(usize, Switch), String> {
    use rove_scenario::spec::{ActionTarget, Change, HandoffSpec};
    let (
        ActionTarget::Flow { flow, subflow },
        Change::Cc {
            name,
            params,
            handoff,
        },
    ) = (&a.target, &a.change)
    else {
        return Err("only congestion-control switches (flow = ..., cc = ...) run on the kernel backend for now".into());
    };
    let f = &sc.flows[*flow];
    if subflow.is_some() || is_multipath(f) {
        return Err(format!(
            "flow {:?}: switches of multipath flows run on the simulator only for now",
            f.name
        ));
    }
    if let Some(key) = params.keys().next() {
        return Err(format!(
            "cc_params.{key}: the kernel's algorithms take no per-flow parameters"
        ));
    }
    if a.at_ns <= f.start_ns {
        return Err(format!(
            "at = {} s is not after flow {:?}'s start ({} s): on the kernel a switch acts on a connected socket",
            secs(a.at_ns),
            f.name,
            secs(f.start_ns)
        ));
    }
    let handoff = match *handoff {
        HandoffSpec::Keep => Handoff::Keep,
        HandoffSpec::Set { cwnd, ssthresh } => Handoff::Set { cwnd, ssthresh },
        HandoffSpec::DelayScaled { samples } => Handoff::DelayScaled { samples },
    };
    Ok((
        *flow,
        Switch {
            at: Duration::from_nanos(a.at_ns - f.start_ns),
            cc: name.clone(),
            handoff,
        },
    ))
}

/// An `[[actions]]` entry that acts on a subflow's ACKs: `Some(Ok)` for `dupacks` on a
/// multipath flow's subflow (the emulator's injector, dupack.rs, runs it), `Some(Err)` for the
/// ones the kernel backend cannot run; `None` for any other action.
fn kernel_receiver_action(
    sc: &Scenario,
    a: &rove_scenario::spec::ActionSpec,
) -> Option<Result<(), String>> {
    use rove_scenario::spec::{ActionTarget, Change};
    match (&a.target, &a.change) {
        (ActionTarget::Flow { flow, subflow }, Change::DupAcks) => {
            let f = &sc.flows[*flow];
            // Upstream MPTCP's limit (MPTCP_PM_ADDR_MAX = 8): the emulator routes at most 8.
            let sub = subflow.unwrap_or(0);
            Some(if sub >= 8 {
                Err(format!(
                    "dupacks on subflow {sub} of flow {:?}: the kernel runs at most 8 subflows",
                    f.name
                ))
            } else {
                Ok(())
            })
        }
        (_, Change::WithholdAcks | Change::ReleaseAck) => Some(Err(
            "withhold_acks and release_ack run on the simulator only for now".into(),
        )),
        _ => None,
    }
}

/// Every switch of flow `i`, in time order.
fn switches_of(sc: &Scenario, i: usize) -> Vec<Switch> {
    let mut v: Vec<Switch> = sc
        .actions
        .iter()
        .filter_map(|a| kernel_switch(sc, a).ok())
        .filter(|(f, _)| *f == i)
        .map(|(_, s)| s)
        .collect();
    v.sort_by_key(|s| s.at);
    v
}

fn interrupted() -> Result<(), RunError> {
    match pending_stop_signal() {
        Some(sig) => Err(RunError::Interrupted(sig)),
        None => Ok(()),
    }
}

/// Waits until CLOCK_MONOTONIC reaches `until_ns` while watching the run: a stop signal, the
/// emulator ending, or a client failing (e.g. exit status 2 for an algorithm it cannot set)
/// end the run at once, with the child's own message, instead of at the scenario's end.
fn watch_until(
    until_ns: u64,
    procs: &mut Procs,
    emu: usize,
    clients: &[Option<usize>],
    raw: &Path,
) -> Result<(), RunError> {
    loop {
        let now = monotonic_ns();
        if now >= until_ns {
            return Ok(());
        }
        if let Some(sig) = wait_stop_signal((until_ns - now).min(50_000_000)) {
            return Err(RunError::Interrupted(sig));
        }
        if let Some(status) = procs.exited(emu) {
            let log = std::fs::read_to_string(raw.join("emu.log")).unwrap_or_default();
            return Err(RunError::Failed(format!(
                "rove-emu exited during the run ({status}): {}",
                log.trim()
            )));
        }
        for (i, c) in clients.iter().enumerate() {
            let Some(c) = *c else { continue };
            match procs.exited(c) {
                Some(status) if !status.success() => {
                    let log = std::fs::read_to_string(raw.join(format!("flow-{i}.log")))
                        .unwrap_or_default();
                    let last = log
                        .lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("no message");
                    let msg = format!("{} failed ({status}): {}", procs.label(c), last.trim());
                    return Err(if status.code() == Some(2) {
                        RunError::Usage(msg)
                    } else {
                        RunError::Failed(msg)
                    });
                }
                _ => {}
            }
        }
    }
}

/// Removes the partial raw directory unless the run completed.
struct PartialDir {
    path: PathBuf,
    keep: bool,
}

impl Drop for PartialDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn secs(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_S as f64
}

fn log_file(dir: &Path, name: &str) -> Result<std::fs::File, RunError> {
    std::fs::File::create(dir.join(name))
        .map_err(|e| RunError::Failed(format!("{}: {e}", dir.join(name).display())))
}

/// Listening TCP sockets on `SERVER_PORT` in namespace `ns` (from its `/proc/net/tcp`, read by
/// a thread inside the namespace).
fn listeners(ns: &str) -> std::io::Result<usize> {
    let ns = ns.to_string();
    std::thread::spawn(move || -> std::io::Result<usize> {
        let _in = sys::NetnsGuard::enter(&ns)?;
        let table = std::fs::read_to_string("/proc/thread-self/net/tcp")?;
        let port = format!(":{SERVER_PORT:04X}");
        // Columns: sl, local_address (HEXIP:HEXPORT), rem_address, st (0A = LISTEN), ...
        Ok(table
            .lines()
            .skip(1)
            .filter(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && cols[1].ends_with(&port) && cols[3] == "0A"
            })
            .count())
    })
    .join()
    .unwrap_or_else(|_| Err(std::io::Error::other("listener check panicked")))
}

/// The kernel's MPTCP path manager for the run's multipath flows (at most one per run, see
/// [`load_scenario`]): in the sender namespace, an endpoint with the `subflow` flag for each
/// further path's address, so the in-kernel path manager opens one subflow from each to the
/// server's address (net/mptcp/pm_kernel.c, `mptcp_pm_create_subflow_or_signal_addr`), and the
/// subflow limit on both sides (`ip mptcp limits`; the receiver accepts as many MP_JOINs). The
/// emulator tells the subflows apart by their source address, so each takes its own path.
fn configure_mptcp(topo: &Topology, routes: &[RouteSpec]) -> Result<(), String> {
    let extra: Vec<(usize, &RouteSpec)> = routes
        .iter()
        .enumerate()
        .filter(|(_, r)| r.subflow > 0)
        .collect();
    if extra.is_empty() {
        return Ok(());
    }
    for ns in [&topo.snd.name, &topo.rcv.name] {
        crate::sys::netns_sysctl(ns, "net.mptcp.enabled", "1").map_err(|e| {
            format!("cannot enable MPTCP in the namespaces (sysctl net.mptcp.enabled: {e}); a multipath flow needs a kernel with CONFIG_MPTCP")
        })?;
    }
    let k = extra.len();
    let mut snd = vec![format!("mptcp limits set subflows {k} add_addr_accepted 0")];
    for (r, _) in &extra {
        snd.push(format!(
            "mptcp endpoint add {} dev {TUN_NAME} subflow",
            sender_addr(*r)
        ));
    }
    crate::netns::ip_batch(&topo.snd.name, &snd)?;
    crate::netns::ip_batch(
        &topo.rcv.name,
        &[format!("mptcp limits set subflows {k} add_addr_accepted 0")],
    )
}

/// Writes each flow's resolved `cc_params` into its algorithm's map (bpf_params.rs), keyed by
/// the sender namespace and the flow's receiver address.
fn write_cc_params(
    sc: &Scenario,
    topo: &Topology,
) -> Result<crate::bpf_params::ParamEntries, String> {
    let mut entries = crate::bpf_params::ParamEntries::default();
    for (i, f) in sc.flows.iter().enumerate() {
        let value = crate::bpf_params::resolve(&f.cc, &f.cc_params)
            .map_err(|(key, message)| format!("flows[{i}].cc_params.{key}: {message}"))?;
        if let Some(value) = value {
            let ino = crate::bpf_params::netns_inode(&topo.snd.name)?;
            entries.write(&f.cc, ino, receiver_addr(i), &value)?;
        }
    }
    Ok(entries)
}

/// Writes `raw/netstat.json`: the sender and receiver namespaces' counters (netstat.rs).
fn write_netstat(raw: &Path, topo: &Topology) -> Result<(), RunError> {
    let read = |ns: &str| {
        crate::netstat::read(ns)
            .map_err(|e| RunError::Failed(format!("cannot read the namespace's counters: {e}")))
    };
    let doc =
        serde_json::json!({ "sender": read(&topo.snd.name)?, "receiver": read(&topo.rcv.name)? });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| RunError::Failed(e.to_string()))?;
    std::fs::write(raw.join("netstat.json"), text + "\n")
        .map_err(|e| RunError::Failed(format!("netstat.json: {e}")))
}

/// Waits until every server listens, so that no client connects to a port not yet open.
fn wait_listening(
    ns: &str,
    n: usize,
    procs: &mut Procs,
    servers: &[usize],
) -> Result<(), RunError> {
    let deadline = monotonic_ns() + 15 * NS_PER_S;
    loop {
        let up = listeners(ns)
            .map_err(|e| RunError::Failed(format!("cannot read the receivers' sockets: {e}")))?;
        if up >= n {
            return Ok(());
        }
        if let Some(&s) = servers.iter().find(|&&s| procs.exited(s).is_some()) {
            return Err(RunError::Failed(format!(
                "{} exited before listening (see its log in raw/)",
                procs.label(s)
            )));
        }
        if monotonic_ns() > deadline {
            return Err(RunError::Failed(format!(
                "only {up} of {n} traffic servers listen after 15 s"
            )));
        }
        if let Some(sig) = wait_stop_signal(10_000_000) {
            return Err(RunError::Interrupted(sig));
        }
    }
}

/// Runs the scenario; on success `DIR/raw/` holds the emulator's records, one JSONL file per
/// flow from its client, and `run.json`.
pub fn run(opts: &RunOptions) -> Result<PathBuf, RunError> {
    check_machine().map_err(RunError::Usage)?;
    let sc = load_scenario(opts)?;
    for (what, bin) in [
        ("rove-emu", &opts.emu_bin),
        ("rove-traffic", &opts.traffic_bin),
    ] {
        if !bin.is_file() {
            return Err(RunError::Usage(format!(
                "{what} not found at {} (build it with 'cargo build --release -p rove-emu', or name it with --{}-bin)",
                bin.display(),
                if what == "rove-emu" { "emu" } else { "traffic" }
            )));
        }
    }
    sys::block_stop_signals()
        .map_err(|e| RunError::Failed(format!("cannot block signals: {e}")))?;
    // The eBPF algorithms the flows need, registered for the run's length (declared first, so
    // released last: after every process and namespace of the run is gone).
    let mut ccs: Vec<String> = sc.flows.iter().map(|f| f.cc.clone()).collect();
    for i in 0..sc.flows.len() {
        for sw in switches_of(&sc, i) {
            if sw.needs_handoff_cc() {
                ccs.push(HANDOFF_CC.to_string());
            }
            ccs.push(sw.cc);
        }
    }
    let _bpf = crate::bpf_cc::acquire(&ccs, &available_cc()).map_err(RunError::Failed)?;

    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| RunError::Usage(format!("{}: {e}", opts.out_dir.display())))?;
    let partial = PartialDir {
        path: opts
            .out_dir
            .join(format!("raw.partial-{}", std::process::id())),
        keep: false,
    };
    let raw = partial.path.clone();
    let _ = std::fs::remove_dir_all(&raw);
    std::fs::create_dir_all(&raw)
        .map_err(|e| RunError::Failed(format!("{}: {e}", raw.display())))?;

    // Namespaces of earlier runs that were killed outright (SIGKILL leaves no chance to clean
    // up; their children die with them through PDEATHSIG) go first. Live runs are untouched.
    match crate::netns::sweep_stale() {
        Ok(removed) if !removed.is_empty() => eprintln!(
            "rove-kernel: removed stale namespaces: {}",
            removed.join(" ")
        ),
        Ok(_) => {}
        Err(e) => eprintln!("rove-kernel: warning: {e}"),
    }
    let run_id = crate::topology::new_run_id();
    let routes = routes(&sc);
    let topo = Topology::build(&run_id, sc.flows.len(), &routes).map_err(RunError::Failed)?;
    // Per-flow parameters of eBPF algorithms, written before any client starts.
    let _params = write_cc_params(&sc, &topo).map_err(RunError::Failed)?;
    // Declared after the topology, so dropped before it: processes die before their namespaces.
    let mut procs = Procs::new();
    interrupted()?;
    let multipath: Vec<bool> = sc.flows.iter().map(is_multipath).collect();
    configure_mptcp(&topo, &routes).map_err(RunError::Failed)?;

    let in_ns = |ns: &Netns, bin: &Path| {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &ns.name])
            .arg(bin)
            .stdin(Stdio::null());
        c
    };

    // Servers first: they only need to listen.
    let mut servers = Vec::new();
    for (i, _) in sc.flows.iter().enumerate() {
        let mut cmd = in_ns(&topo.rcv, &opts.traffic_bin);
        cmd.args([
            "server",
            "--bind",
            &format!("{}:{SERVER_PORT}", receiver_addr(i)),
        ]);
        if multipath[i] {
            cmd.arg("--mptcp");
        }
        let log = log_file(&raw, &format!("server-{i}.log"))?;
        cmd.stdout(
            log.try_clone()
                .map_err(|e| RunError::Failed(e.to_string()))?,
        )
        .stderr(log);
        servers.push(
            procs
                .spawn(&format!("rove-traffic server of flow {i}"), cmd)
                .map_err(RunError::Failed)?,
        );
    }

    wait_listening(&topo.rcv.name, servers.len(), &mut procs, &servers)?;

    // The emulator, with time 0 a moment ahead.
    let t0 = monotonic_ns() + T0_LEAD_NS;
    let emu_dir = raw.join("emu");
    let mut cmd = Command::new(&opts.emu_bin);
    cmd.arg("--scenario").arg(&opts.scenario);
    if let Some(seed) = opts.seed {
        cmd.args(["--seed", &seed.to_string()]);
    }
    for (k, v) in &opts.overrides {
        cmd.args(["--set", &format!("{k}={v}")]);
    }
    cmd.args([
        "--snd-ns",
        &topo.snd.name,
        "--rcv-ns",
        &topo.rcv.name,
        "--tun",
        TUN_NAME,
    ])
    .args([
        "--t0-mono-ns",
        &t0.to_string(),
        "--spin-us",
        &opts.spin_us.to_string(),
    ])
    .args([
        "--stop-after-s",
        &format!("{}", secs(sc.duration_ns) + EMU_SAFETY_S),
    ])
    .arg("--out")
    .arg(&emu_dir)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(log_file(&raw, "emu.log")?);
    let emu = procs.spawn("rove-emu", cmd).map_err(RunError::Failed)?;
    let stdout = procs
        .child_mut(emu)
        .stdout
        .take()
        .ok_or_else(|| RunError::Failed("rove-emu: no stdout".into()))?;
    // Wait for its "ready" line (read on a thread, so that signals are still noticed here).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let ready_by = monotonic_ns() + 10 * NS_PER_S;
    loop {
        if let Ok(line) = rx.try_recv() {
            if line.trim() == "ready" {
                break;
            }
            let log = std::fs::read_to_string(raw.join("emu.log")).unwrap_or_default();
            return Err(RunError::Failed(format!(
                "rove-emu did not start: {}",
                log.trim()
            )));
        }
        if monotonic_ns() > ready_by {
            return Err(RunError::Failed(
                "rove-emu did not report ready within 10 s".into(),
            ));
        }
        if let Some(sig) = wait_stop_signal(5_000_000) {
            return Err(RunError::Interrupted(sig));
        }
    }
    for &s in &servers {
        if let Some(status) = procs.exited(s) {
            let log = std::fs::read_to_string(raw.join(format!("server-{}.log", s - servers[0])))
                .unwrap_or_default();
            return Err(RunError::Failed(format!(
                "{} exited early ({status}): {}",
                procs.label(s),
                log.trim()
            )));
        }
    }

    // Clients at their start times.
    let mut order: Vec<usize> = (0..sc.flows.len()).collect();
    order.sort_by_key(|&i| (sc.flows[i].start_ns, i));
    let sample_ms = (sc.sample_interval_ns / 1_000_000).max(1);
    let mut clients = vec![None; sc.flows.len()];
    let mut launched_s = vec![None; sc.flows.len()];
    for &i in &order {
        let f = &sc.flows[i];
        if f.start_ns >= sc.duration_ns {
            continue; // starts after the end: never runs, as in the simulator
        }
        watch_until(t0 + f.start_ns, &mut procs, emu, &clients, &raw)?;
        let mut cmd = in_ns(&topo.snd, &opts.traffic_bin);
        cmd.args([
            "client",
            "--connect",
            &format!("{}:{SERVER_PORT}", receiver_addr(i)),
            "--cc",
            &f.cc,
        ]);
        if multipath[i] {
            cmd.arg("--mptcp");
        }
        match f.size_bytes {
            Some(n) => cmd.args(["--bytes", &n.to_string()]),
            None => cmd.args([
                "--duration",
                &format!("{}", secs(sc.duration_ns - f.start_ns)),
            ]),
        };
        let switches = switches_of(&sc, i);
        if !switches.is_empty() {
            let arg: Vec<String> = switches.iter().map(Switch::to_arg).collect();
            cmd.args(["--switches", &arg.join(",")]);
        }
        cmd.args(["--sample-ms", &sample_ms.to_string()])
            .arg("--out")
            .arg(raw.join(format!("flow-{i}.jsonl")))
            .stdout(Stdio::null())
            .stderr(log_file(&raw, &format!("flow-{i}.log"))?);
        launched_s[i] = Some(secs(monotonic_ns().saturating_sub(t0)));
        clients[i] = Some(
            procs
                .spawn(
                    &format!("rove-traffic client of flow {i} ({})", f.name),
                    cmd,
                )
                .map_err(RunError::Failed)?,
        );
    }
    watch_until(t0 + sc.duration_ns, &mut procs, emu, &clients, &raw)?;
    // The namespaces' MIB counters at the scenario's end, before the clients close (netstat.rs).
    write_netstat(&raw, &topo)?;

    // Give clients a moment to finish and write their final line, then stop everything.
    let grace_end = monotonic_ns() + CLIENT_GRACE.as_nanos() as u64;
    for c in clients.iter().flatten() {
        while procs.exited(*c).is_none() && monotonic_ns() < grace_end {
            if let Some(sig) = wait_stop_signal(10_000_000) {
                return Err(RunError::Interrupted(sig));
            }
        }
    }
    let client_ids: Vec<usize> = clients.iter().flatten().copied().collect();
    let client_status = procs.stop(&client_ids);
    procs.stop(&servers);
    let emu_status = procs.stop(&[emu]);
    if !emu_dir.join(crate::record::SUMMARY_FILE).is_file() {
        let log = std::fs::read_to_string(raw.join("emu.log")).unwrap_or_default();
        return Err(RunError::Failed(format!(
            "rove-emu ended without its summary ({:?}): {}",
            emu_status[0],
            log.trim()
        )));
    }

    let mut status_of = vec![None; sc.flows.len()];
    for (k, &c) in client_ids.iter().enumerate() {
        if let Some(i) = clients.iter().position(|x| *x == Some(c)) {
            status_of[i] = client_status[k].and_then(|s| s.code());
        }
    }
    let flows: Vec<serde_json::Value> = sc
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            serde_json::json!({
                "name": f.name, "cc": f.cc, "start_s": secs(f.start_ns), "launched_s": launched_s[i],
                "size_bytes": f.size_bytes, "sender": sender_addr(i).to_string(), "receiver": receiver_addr(i).to_string(),
                "path": f.path.iter().map(|h| h.name(&sc.links)).collect::<Vec<_>>(),
                "ack_path": f.ack_path.iter().map(|h| h.name(&sc.links)).collect::<Vec<_>>(),
                "samples": format!("flow-{i}.jsonl"), "client_exit": status_of[i],
                "multipath": multipath[i],
                "scheduler": f.multipath.as_ref().map(|m| m.scheduler.clone()),
                "coupling": f.multipath.as_ref().map(|m| m.coupling.clone()),
                // Every path of the flow: its sender address (a subflow's local address).
                "subflows": routes.iter().enumerate().filter(|(_, r)| r.flow == i).map(|(k, r)| serde_json::json!({
                    "subflow": r.subflow, "sender": sender_addr(k).to_string(),
                    "path": r.path.iter().map(|h| h.name(&sc.links)).collect::<Vec<_>>(),
                    "ack_path": r.ack_path.iter().map(|h| h.name(&sc.links)).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let run_json = serde_json::json!({
        "scenario": sc.name, "source": sc.source, "backend": "kernel", "seed": sc.seed,
        "duration_s": secs(sc.duration_ns), "sample_interval_s": secs(sc.sample_interval_ns),
        "run_id": run_id, "links": sc.links.iter().map(|l| l.name.clone()).collect::<Vec<_>>(),
        "flows": flows, "emu": "emu",
    });
    let text = serde_json::to_string_pretty(&run_json)
        .map_err(|e| RunError::Failed(e.to_string()))?
        + "\n";
    std::fs::write(raw.join("run.json"), text)
        .map_err(|e| RunError::Failed(format!("run.json: {e}")))?;

    drop(procs);
    drop(topo);
    let final_dir = opts.out_dir.join("raw");
    if final_dir.exists() {
        std::fs::remove_dir_all(&final_dir)
            .map_err(|e| RunError::Failed(format!("{}: {e}", final_dir.display())))?;
    }
    std::fs::rename(&raw, &final_dir)
        .map_err(|e| RunError::Failed(format!("{}: {e}", final_dir.display())))?;
    let mut partial = partial;
    partial.keep = true;
    Ok(final_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(toml: &str) -> Result<Scenario, RunError> {
        let dir = std::env::temp_dir().join(format!(
            "rove-orch-test-{}-{}",
            std::process::id(),
            toml.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.toml");
        std::fs::write(&path, toml).unwrap();
        let opts = RunOptions {
            scenario: path,
            out_dir: dir.clone(),
            seed: None,
            overrides: vec![],
            emu_bin: "x".into(),
            traffic_bin: "x".into(),
            spin_us: 0,
        };
        let r = load_scenario(&opts);
        let _ = std::fs::remove_dir_all(&dir);
        r
    }

    const BASE: &str = "duration = \"1s\"\n[links.l]\nrate = \"10Mbps\"\n[[flows]]\npath = [\"l\"]\nack_path = [\"l\"]\n";

    #[test]
    fn bbr2plus_cc_params_are_checked_by_the_simulators_parser() {
        let e = load(&format!(
            "{BASE}cc = \"bbr2plus\"\ncc_params = {{ theta = 0.5 }}\n"
        ))
        .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message().contains("flows[0] (flow0).cc_params.theta")
                && e.message().contains("from 1 to 4"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn cc_params_are_rejected_naming_the_key() {
        let e = load(&format!(
            "{BASE}cc = \"cubic\"\ncc_params = {{ beta = 0.5 }}\n"
        ))
        .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message().contains("flows[0] (flow0).cc_params.beta"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn an_algorithm_the_kernel_lacks_lists_the_available_ones() {
        if available_cc().is_empty() {
            return; // no /proc/sys/net/ipv4/tcp_available_congestion_control here
        }
        let e = load(&format!("{BASE}cc = \"vivace\"\n")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message().contains("flows[0] (flow0).cc") && e.message().contains("available:"),
            "{}",
            e.message()
        );
        assert!(load(&format!("{BASE}cc = \"reno\"\n")).is_ok());
    }

    const MP: &str = "duration = \"1s\"\n[links.a]\nrate = \"10Mbps\"\n[links.b]\nrate = \"10Mbps\"\n[links.c]\nrate = \"10Mbps\"\n[[flows]]\nname = \"one\"\ncc = \"reno\"\npath = [\"c\"]\nack_path = [\"c\"]\n[[flows]]\nname = \"mp\"\ncc = \"reno\"\npaths = [{ path = [\"a\"], ack_path = [\"b\"] }, { path = [\"b\"], ack_path = [\"a\"] }]\n";

    #[test]
    fn a_multipath_flow_gets_a_route_and_a_sender_address_per_path() {
        let sc = load(MP).unwrap();
        let r = routes(&sc);
        // Every flow's first path first (route i = flow i), then the further paths.
        let got: Vec<(usize, usize, Vec<usize>)> = r
            .iter()
            .map(|x| {
                (
                    x.flow,
                    x.subflow,
                    rove_scenario::Hop::links(&x.path).collect(),
                )
            })
            .collect();
        assert_eq!(got, vec![(0, 0, vec![2]), (1, 0, vec![0]), (1, 1, vec![1])]);
        assert_eq!(sender_addr(2).to_string(), "10.71.0.3");
    }

    #[test]
    fn receiver_behaviours_are_refused_and_dupacks_accepted() {
        let e = load(&format!("{MP}receiver = \"rtsc\"\n")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message()
                .contains("flows[1] (mp).receiver: the kernel backend runs no receiver behaviour"),
            "{}",
            e.message()
        );
        let action = |key: &str| {
            format!("{MP}[[actions]]\nat = \"0.5s\"\nflow = \"mp\"\nsubflow = 1\n{key} = true\n")
        };
        assert!(load(&action("dupacks")).is_ok());
        let e = load(&action("withhold_acks")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message()
                .contains("actions[0]: withhold_acks and release_ack run on the simulator only"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn multipath_limits_of_the_kernel_are_clear_errors() {
        let e = load(&format!("{MP}scheduler = \"blest\"\n")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message().contains("flows[1] (mp).scheduler") && e.message().contains("minrtt"),
            "{}",
            e.message()
        );
        let e = load(&format!("{MP}scheduler = \"bccps\"\n")).unwrap_err();
        assert!(
            e.message().contains("flows[1] (mp).scheduler"),
            "{}",
            e.message()
        );
        let e = load(&format!("{MP}detector = \"dwc\"\n")).unwrap_err();
        assert!(
            e.message()
                .contains("flows[1] (mp).detector: the kernel backend runs no"),
            "{}",
            e.message()
        );
        let e = load(&format!("{MP}scheduler_params = {{ rtt = \"srtt\" }}\n")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message().contains("flows[1] (mp).scheduler_params.rtt")
                && e.message().contains("no parameters"),
            "{}",
            e.message()
        );
        let costed = MP
            .replace("ack_path = [\"b\"] }", "ack_path = [\"b\"], cost = 1 }")
            .replace("ack_path = [\"a\"] }", "ack_path = [\"a\"], cost = 10 }");
        let e = load(&costed).unwrap_err();
        assert!(
            e.message()
                .contains("flows[1] (mp).paths[0].cost: the kernel backend does not report"),
            "{}",
            e.message()
        );
        let nine = MP.replace(
            "paths = [{ path = [\"a\"], ack_path = [\"b\"] }",
            "paths = [{ path = [\"a\"], ack_path = [\"b\"], subflows = 8 }",
        );
        let e = load(&nine).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message().contains("flows[1] (mp).paths: 9 subflows")
                && e.message().contains("at most 8"),
            "{}",
            e.message()
        );
        let two = format!("{MP}[[flows]]\nname = \"mp2\"\ncc = \"reno\"\npaths = [{{ path = [\"c\"], ack_path = [\"a\"] }}]\n");
        let e = load(&two).unwrap_err();
        assert!(
            e.message().contains("flows[2] (mp2).paths")
                && e.message().contains("at most one multipath flow"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn scenario_errors_are_usage_errors() {
        let e = load("duration = \"soon\"\n").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message().contains("duration"), "{}", e.message());
    }
}
