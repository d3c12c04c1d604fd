//! From TOML text to a validated [`Scenario`].
//!
//! Three steps:
//!
//! 1. The text is parsed as TOML (syntax errors are reported as `line N`).
//! 2. `--set KEY=VALUE` overrides are applied to the document, in order (errors: `--set KEY`).
//! 3. The document is walked by hand, key by key, so that every error names the exact key path
//!    (`links.down.rate`, `flows[1].path[0]`, `links.down.rate_steps[2].at`) and says what is
//!    accepted. Unknown keys are errors at every level. Rate schedules are expanded, trace files
//!    loaded and synthetic traces generated, so the result needs no further checking.
//!
//! The format itself is described in `docs/scenario-format.md`; this file follows it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::{Table, Value};

use crate::error::ScenarioError;
use crate::seed::stream_seed;
use crate::spec::{
    FlowSpec, Hop, JitterDistribution, JitterSpec, LinkKind, LinkSpec, LossSpec, MultipathSpec,
    Nanos, Outage, Process, QueueLimit, QueueSpec, RateChange, Scenario, Serializer, SubflowPath,
    Workload, NS_PER_MS,
};
use crate::trace;
use crate::units::{self, format_time, Quantity};

/// How to parse a scenario: where it came from, overrides, and what the engine knows.
#[derive(Debug, Clone, Copy)]
pub struct ParseOptions<'a> {
    /// File the text came from; used in error messages and for the default scenario name.
    /// `"<dict>"` or `"<string>"` for scenarios built in memory.
    pub source: &'a str,
    /// Directory that relative trace paths are resolved against (the scenario file's directory);
    /// `None`: the current directory.
    pub base_dir: Option<&'a Path>,
    /// `--set KEY=VALUE` overrides, applied to the TOML document before validation, in order.
    /// KEY is a dotted path (`seed`, `links.down.rate`, `flows.0.cc`; numbers index arrays);
    /// VALUE is read as a TOML value when it is one (`10`, `0.5`, `true`, `[...]`, `{...}`,
    /// `"quoted"`) and as a string otherwise (`20Mbps`).
    pub overrides: &'a [(String, String)],
    /// Seed override (`--seed N`), applied after the overrides.
    pub seed: Option<u64>,
    /// Congestion-control names the engine knows, for validating `flows[].cc`. An empty list
    /// accepts any name (for tools that check the format without an engine).
    pub known_cc: &'a [&'a str],
    /// Multipath scheduler names the engine knows, for `flows[].scheduler`; empty accepts any.
    pub known_schedulers: &'a [&'a str],
    /// Congestion-control couplings the engine knows, for `flows[].coupling`; empty accepts any.
    pub known_couplings: &'a [&'a str],
    /// Shared-bottleneck detectors the engine knows, for `flows[].detector`; empty accepts any.
    pub known_detectors: &'a [&'a str],
    /// Receiver behaviours the engine knows, for `flows[].receiver`; empty accepts any.
    pub known_receivers: &'a [&'a str],
    /// Link models the engine knows, for `links.NAME.kind` and each model's own keys; empty
    /// accepts any kind, parsed as a point-to-point link.
    pub known_link_kinds: &'a [LinkKind],
    /// Path elements and controllers the engine knows, for `elements[].kind` and
    /// `controllers[].kind`; empty accepts any.
    pub known_elements: &'a [&'a str],
    pub known_controllers: &'a [&'a str],
}

impl Default for ParseOptions<'_> {
    fn default() -> Self {
        ParseOptions {
            source: "<string>",
            base_dir: None,
            overrides: &[],
            seed: None,
            known_cc: &[],
            known_schedulers: &[],
            known_couplings: &[],
            known_detectors: &[],
            known_receivers: &[],
            known_link_kinds: &[],
            known_elements: &[],
            known_controllers: &[],
        }
    }
}

mod actions;
mod workload;
pub use actions::parse_action;
pub use workload::{workload_names, DEFAULT_PACKET_BYTES, WORKLOADS};

/// Default link model (`links.NAME.kind`): a point-to-point link with one queue and one
/// serializer (`rove_sim::link::Link`).
pub const DEFAULT_LINK_KIND: &str = "p2p";
/// Default root seed (`seed` key).
pub const DEFAULT_SEED: u64 = 1;
/// The smallest receive window a sender can use: one full segment (MSS 1448 B with timestamps,
/// as the TCP crate sends).
const MIN_RWND_BYTES: u64 = 1448;

/// Default `sample_interval`: 10 ms (DESIGN.md, results).
pub const DEFAULT_SAMPLE_INTERVAL_NS: Nanos = 10 * NS_PER_MS;
/// Default `buffer`: 1000 packets, Linux's default `txqueuelen`.
pub const DEFAULT_BUFFER: QueueLimit = QueueLimit::Packets(1000);
/// fq_codel's default limit: 10240 packets (sch_fq_codel.c, `sch->limit = 10*1024`).
pub const FQ_CODEL_DEFAULT_LIMIT: u32 = 10 * 1024;
/// The queue disciplines' own keys (each takes a subset).
const QUEUE_PARAM_KEYS: &[&str] = &[
    "codel_target",
    "codel_interval",
    "fq_flows",
    "fq_quantum",
    "pie_target",
    "pie_tupdate",
    "pie_alpha",
    "pie_beta",
    "pie_max_burst",
];
/// Default `codel_target`: 5 ms, RFC 8289 §4.3.
pub const DEFAULT_CODEL_TARGET_NS: Nanos = 5 * NS_PER_MS;
/// Default `codel_interval`: 100 ms, RFC 8289 §4.3.
pub const DEFAULT_CODEL_INTERVAL_NS: Nanos = 100 * NS_PER_MS;
/// Default `rwnd`: 6 MiB (6291456 bytes), the default `tcp_rmem` maximum of older kernels (6.18:
/// 32 MiB); with `rcv_buffer = "auto"` it caps the auto-tuned window.
pub const DEFAULT_RWND_BYTES: u64 = 6 << 20;
/// Receive-buffer modes (key `rcv_buffer`): Linux's auto-tuning (default for single-path
/// flows), or a window fixed at `rwnd` (a locked SO_RCVBUF; the only mode of multipath flows,
/// whose window is the connection's).
pub const RCV_BUFFER_MODES: &[&str] = &["auto", "fixed"];
/// [GAP] skb->truesize of a full segment (key `rcv_truesize`): what Linux 6.18 shows on the
/// kernel backend's TUN devices (rove-tcp `rcvbuf::DEFAULT_TRUESIZE`).
pub const DEFAULT_RCV_TRUESIZE: u64 = 2304;
/// Default congestion control of a flow.
pub const DEFAULT_CC: &str = "reno";
/// Most rate changes one `rate_cycle` may expand to over a run (16 MB of schedule).
pub const MAX_RATE_CHANGES: u64 = 1_000_000;
/// Most flows a scenario may hold after `count` expansion.
pub const MAX_FLOWS: u64 = 100_000;

const TOP_KEYS: &[&str] = &[
    "name",
    "duration",
    "seed",
    "sample_interval",
    "measure",
    "links",
    "flows",
    "actions",
    "elements",
    "controllers",
];
const LINK_KEYS: &[&str] = &[
    "rate",
    "trace",
    "trace_params",
    "delay",
    "queue",
    "buffer",
    "loss",
    "jitter",
    "jitter_distribution",
    "jitter_reorder",
    "rate_steps",
    "rate_cycle",
    "outages",
    "kind",
    "ports",
];
const FLOW_KEYS: &[&str] = &[
    "name",
    "cc",
    "cc_params",
    "path",
    "ack_path",
    "start",
    "size",
    "count",
    "stagger",
    "rwnd",
    "rcv_buffer",
    "rcv_truesize",
    "paths",
    "scheduler",
    "scheduler_params",
    "coupling",
    "detector",
    "detector_params",
    "receiver",
    "receiver_params",
    "workload",
    "slow_start_after_idle",
];
/// Keys of a TCP flow that an unresponsive one does not take.
const TCP_ONLY_KEYS: &[&str] = &[
    "cc",
    "cc_params",
    "ack_path",
    "rwnd",
    "rcv_buffer",
    "rcv_truesize",
    "paths",
    "scheduler",
    "scheduler_params",
    "coupling",
    "detector",
    "detector_params",
    "receiver",
    "receiver_params",
    "slow_start_after_idle",
];
/// Keys of an `add_subflow` action's table (one subflow). No `cost`: path costs are the
/// `paths` entries' (the scheduler's and the results' path cost are fixed when the run is built),
/// so a subflow added at run time has none, and the key is refused rather than ignored.
const SUBFLOW_PATH_KEYS: &[&str] = &["path", "ack_path"];
/// Keys of a `paths` entry: a subflow's, and how many subflows open over it.
const PATHS_ENTRY_KEYS: &[&str] = &["path", "ack_path", "cost", "subflows"];
/// Default multipath scheduler: minRTT, the default of Linux MPTCP (multipath-tcp.org
/// `mptcp_sched.c` "default", upstream `mptcp_subflow_get_send`).
pub const DEFAULT_SCHEDULER: &str = "minrtt";
/// Default coupling of a multipath flow's congestion control: "auto" (coupled over the
/// connection when `cc` is a coupled algorithm, else uncoupled; rove-mp `coupling::COUPLINGS`).
pub const DEFAULT_COUPLING: &str = "auto";
/// The default `detector` of a multipath flow: the flow's algorithm's own (MPTCP-BBR's S1 + S2
/// for `mpbbr`, RFC 8382 for `sscc`), none for the others.
pub const DEFAULT_DETECTOR: &str = "auto";
/// Most subflows of one multipath flow: Subflow Population Control opens "up to 20 subflows" on
/// one path (seed 003 §4.4 and §4.5, dissertation Ch. 4). The kernel backend keeps upstream
/// MPTCP's own limit of 8 (rove-emu refuses more).
pub const MAX_SUBFLOWS: usize = 20;
const SERIALIZER_KEYS: &[&str] = &["rate", "rate_cycle", "trace"];
const SYNTH_PREFIX: &str = "synth:";

/// Parses and validates a scenario.
pub fn parse(text: &str, opts: &ParseOptions) -> Result<Scenario, ScenarioError> {
    let mut doc = parse_toml(text, opts.source)?;
    for (key, value) in opts.overrides {
        apply_override(&mut doc, key, value)
            .map_err(|message| ScenarioError::new(opts.source, format!("--set {key}"), message))?;
    }
    Validator::new(opts).scenario(&doc)
}

/// Reads the scenario file at `path` and hands its text to `f` with `opts`, whose `source` is
/// then the file's name and `base_dir` its directory (relative trace paths resolve beside the
/// file). An unreadable file is an error naming it. Every tool that takes a scenario path
/// reads it here, whatever it does with the text (parse_file, the world's load_file, the
/// emulator's parse_scenario).
pub fn with_file<T>(
    path: &Path,
    opts: ParseOptions,
    f: impl FnOnce(&str, &ParseOptions) -> Result<T, ScenarioError>,
) -> Result<T, ScenarioError> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        ScenarioError::new(
            &source,
            "file",
            format!("cannot read the scenario file: {e}"),
        )
    })?;
    let opts = ParseOptions {
        source: &source,
        base_dir: Some(path.parent().unwrap_or(Path::new(""))),
        ..opts
    };
    f(&text, &opts)
}

/// Reads the scenario file at `path` and parses it, resolving trace paths against its directory.
pub fn parse_file(
    path: &Path,
    overrides: &[(String, String)],
    seed: Option<u64>,
    known_cc: &[&str],
) -> Result<Scenario, ScenarioError> {
    let opts = ParseOptions {
        overrides,
        seed,
        known_cc,
        ..Default::default()
    };
    with_file(path, opts, parse)
}

/// Parses TOML, turning a syntax error into `line N: invalid TOML: ...`.
fn parse_toml(text: &str, file: &str) -> Result<Table, ScenarioError> {
    text.parse::<Table>().map_err(|e| {
        let location = match e.span() {
            Some(span) => format!("line {}", line_of(text, span.start)),
            None => "TOML".to_string(),
        };
        // toml's message may span lines ("invalid table header\nduplicate key `down` ..."):
        // keep every part, on one line.
        let parts: Vec<&str> = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        ScenarioError::new(
            file,
            location,
            format!("invalid TOML: {}", parts.join(": ")),
        )
    })
}

/// 1-based line number of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

// ---------------------------------------------------------------------------------------------
// Overrides
// ---------------------------------------------------------------------------------------------

/// Reads an override's VALUE: a TOML value when it is one (`10`, `0.5`, `true`, `[..]`, `{..}`,
/// `"quoted"`), otherwise the text itself as a string (`20Mbps`, `cubic`).
pub fn parse_value_literal(text: &str) -> Value {
    format!("value = {text}")
        .parse::<Table>()
        .ok()
        .filter(|t| t.len() == 1)
        .and_then(|mut t| t.remove("value"))
        .unwrap_or_else(|| Value::String(text.to_string()))
}

/// Applies `KEY=VALUE` to the document. Missing tables on the way are created; an array's entry
/// is named by its index (`flows.0`), by its `name` key (`flows.cubic`) or all at once
/// (`flows.*`); an index past the end or an unknown name is an error. Returns the error message.
pub fn apply_override(doc: &mut Table, key: &str, value: &str) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!(
            "expected a dotted key like links.down.rate or flows.0.cc, got {key:?}"
        ));
    }
    let mut root = Value::Table(std::mem::take(doc));
    let result = set_path(&mut root, &parts, "", parse_value_literal(value));
    if let Value::Table(table) = root {
        *doc = table;
    }
    result
}

/// Sets `parts` below `node` (whose own dotted path is `walked`) to `value`.
fn set_path(node: &mut Value, parts: &[&str], walked: &str, value: Value) -> Result<(), String> {
    let Some((&head, rest)) = parts.split_first() else {
        *node = value;
        return Ok(());
    };
    let here = if walked.is_empty() {
        head.to_string()
    } else {
        format!("{walked}.{head}")
    };
    match node {
        Value::Table(table) => {
            if rest.is_empty() {
                table.insert(head.to_string(), value);
                return Ok(());
            }
            let child = table
                .entry(head)
                .or_insert_with(|| Value::Table(Table::new()));
            set_path(child, rest, &here, value)
        }
        Value::Array(items) => {
            let len = items.len();
            if head == "*" {
                // Every entry: `flows.*.cc=bbr`.
                if items.is_empty() {
                    return Err(format!("{walked} has no entries for {walked}.* to set"));
                }
                for (i, child) in items.iter_mut().enumerate() {
                    set_path(child, rest, &format!("{walked}.{i}"), value.clone())?;
                }
                return Ok(());
            }
            let index = match head.parse::<usize>() {
                Ok(index) => index,
                // An entry by its `name`: `flows.cubic.cc=bbr`.
                Err(_) => {
                    let names: Vec<&str> = items
                        .iter()
                        .filter_map(|v| v.get("name").and_then(Value::as_str))
                        .collect();
                    items
                        .iter()
                        .position(|v| v.get("name").and_then(Value::as_str) == Some(head))
                        .ok_or_else(|| {
                            if names.is_empty() {
                                format!(
                                    "{walked} is an array; index it with a number like \
                                     {walked}.0 or {walked}.*, not {head:?}"
                                )
                            } else {
                                format!(
                                    "{walked} has no entry named {head:?}; accepted: a name \
                                     ({}), an index (0 to {}) or *",
                                    names.join(", "),
                                    len.saturating_sub(1)
                                )
                            }
                        })?
                }
            };
            let child = items.get_mut(index).ok_or_else(|| {
                format!(
                    "index {index} is out of range: {walked} has {len} entries (0 to {})",
                    len.saturating_sub(1)
                )
            })?;
            set_path(child, rest, &here, value)
        }
        other => Err(format!(
            "{walked} is {}, so it has no key {head:?}",
            describe(other)
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Reading values (shared with trace.rs). Readers return the message only; callers add the key.
// ---------------------------------------------------------------------------------------------

/// An error at a key path, before the file is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValueError {
    pub location: String,
    pub message: String,
}

impl ValueError {
    pub(crate) fn new(location: impl Into<String>, message: impl Into<String>) -> Self {
        ValueError {
            location: location.into(),
            message: message.into(),
        }
    }
}

/// A value as it should appear in a message: `"20 furlongs"`, `the number 20`, `an array`.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Integer(i) => format!("the number {i}"),
        Value::Float(f) => format!("the number {f}"),
        Value::Boolean(b) => format!("the boolean {b}"),
        Value::Datetime(d) => format!("the date-time {d}"),
        Value::Array(_) => "an array".to_string(),
        Value::Table(_) => "a table".to_string(),
    }
}

/// `prefix.key`, quoting `key` when it is not a bare TOML key.
pub fn join(prefix: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    };
    if prefix.is_empty() {
        key
    } else {
        format!("{prefix}.{key}")
    }
}

/// `prefix[i]`.
fn index(prefix: &str, i: usize) -> String {
    format!("{prefix}[{i}]")
}

/// Rejects keys of `table` (at key path `path`) that are not in `accepted`.
pub(crate) fn check_keys(table: &Table, path: &str, accepted: &[&str]) -> Result<(), ValueError> {
    match table.keys().find(|k| !accepted.contains(&k.as_str())) {
        None => Ok(()),
        Some(key) => {
            let hint = closest(key, accepted)
                .map(|c| format!(" (did you mean {c:?}?)"))
                .unwrap_or_default();
            Err(ValueError::new(
                join(path, key),
                format!(
                    "unknown key {key:?}{hint}; accepted keys: {}",
                    accepted.join(", ")
                ),
            ))
        }
    }
}

/// The accepted key nearest to a mistyped one, if it is near (edit distance ≤ 2).
fn closest<'k>(key: &str, accepted: &[&'k str]) -> Option<&'k str> {
    accepted
        .iter()
        .map(|&candidate| (edit_distance(key, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= 2 && distance < candidate.len())
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance, case-insensitive.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

fn read_quantity<T>(
    value: &Value,
    kind: Quantity,
    parse: fn(&str) -> Result<T, String>,
) -> Result<T, String> {
    match value {
        Value::String(text) => parse(text),
        other => Err(format!(
            "expected {}, got {}; quantities are strings with units",
            kind.expected(),
            describe(other)
        )),
    }
}

pub(crate) fn read_time(value: &Value) -> Result<Nanos, String> {
    read_quantity(value, Quantity::Time, units::parse_time)
}

pub(crate) fn read_rate(value: &Value) -> Result<u64, String> {
    read_quantity(value, Quantity::Rate, units::parse_rate)
}

pub(crate) fn read_size(value: &Value) -> Result<u64, String> {
    read_quantity(value, Quantity::Size, units::parse_size)
}

fn read_queue_limit(value: &Value) -> Result<QueueLimit, String> {
    read_quantity(value, Quantity::QueueLimit, units::parse_queue_limit)
}

/// A finite number, integer or float.
pub(crate) fn read_number(value: &Value) -> Result<f64, String> {
    match value {
        Value::Integer(i) => Ok(*i as f64),
        Value::Float(f) if f.is_finite() => Ok(*f),
        other => Err(format!("expected a number, got {}", describe(other))),
    }
}

/// A probability: a number in [0, 1].
fn read_probability(value: &Value) -> Result<f64, String> {
    match read_number(value) {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "expected a probability in [0, 1], got {}",
            describe(value)
        )),
    }
}

fn read_string(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        other => Err(format!("expected a string, got {}", describe(other))),
    }
}

/// A name: a non-empty string.
fn read_name(value: &Value) -> Result<String, String> {
    let name = read_string(value)?;
    if name.trim().is_empty() {
        return Err("a name must not be empty".to_string());
    }
    Ok(name)
}

fn read_bool(value: &Value) -> Result<bool, String> {
    match value {
        Value::Boolean(b) => Ok(*b),
        other => Err(format!("expected true or false, got {}", describe(other))),
    }
}

/// `seed`: an integer ≥ 0.
fn read_seed(value: &Value) -> Result<u64, String> {
    match value {
        Value::Integer(i) if *i >= 0 => Ok(*i as u64),
        other => Err(format!(
            "expected a whole number ≥ 0, got {}",
            describe(other)
        )),
    }
}

/// `count`: an integer ≥ 1.
fn read_count(value: &Value) -> Result<u64, String> {
    match value {
        Value::Integer(i) if *i >= 1 => Ok(*i as u64),
        other => Err(format!(
            "expected a whole number ≥ 1, got {}",
            describe(other)
        )),
    }
}

/// A flow's `size`: a size > 0, or `"inf"` (`None`).
fn read_flow_size(value: &Value) -> Result<Option<u64>, String> {
    match value {
        Value::String(s) if s.trim().eq_ignore_ascii_case("inf") => Ok(None),
        Value::Float(f) if *f == f64::INFINITY => Ok(None),
        Value::String(_) => match read_size(value) {
            Ok(0) => Err("must be greater than 0 (or \"inf\" for an unlimited flow)".to_string()),
            Ok(bytes) => Ok(Some(bytes)),
            Err(message) => Err(format!("{message}; or \"inf\" for an unlimited flow")),
        },
        other => Err(format!(
            "expected {} or \"inf\", got {}",
            Quantity::Size.expected(),
            describe(other)
        )),
    }
}

/// The scenario name used when the file gives none: the file stem of `source`.
fn default_name(source: &str) -> String {
    if source.starts_with('<') {
        return "scenario".to_string();
    }
    Path::new(source)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .map_or_else(|| "scenario".to_string(), str::to_string)
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

type Res<T> = Result<T, ScenarioError>;

/// Walks a scenario document; holds what every error needs (the file) and a cache of trace files
/// so that links sharing a trace share its memory.
struct Validator<'a> {
    opts: &'a ParseOptions<'a>,
    traces: RefCell<HashMap<PathBuf, Arc<Vec<u32>>>>,
}

impl<'a> Validator<'a> {
    fn new(opts: &'a ParseOptions<'a>) -> Self {
        Validator {
            opts,
            traces: RefCell::new(HashMap::new()),
        }
    }

    fn err(&self, location: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError::new(self.opts.source, location, message)
    }

    fn keys(&self, table: &Table, path: &str, accepted: &[&str]) -> Res<()> {
        check_keys(table, path, accepted).map_err(|e| self.err(e.location, e.message))
    }

    /// `table.key` read with `read`, or `None` when absent.
    fn get<T>(
        &self,
        table: &Table,
        path: &str,
        key: &str,
        read: impl Fn(&Value) -> Result<T, String>,
    ) -> Res<Option<T>> {
        table
            .get(key)
            .map(|v| read(v).map_err(|m| self.err(join(path, key), m)))
            .transpose()
    }

    /// `table.key` read with `read`; absent is an error that says what it should look like.
    fn require<T>(
        &self,
        table: &Table,
        path: &str,
        key: &str,
        read: impl Fn(&Value) -> Result<T, String>,
        looks_like: &str,
    ) -> Res<T> {
        self.get(table, path, key, read)?.ok_or_else(|| {
            self.err(
                join(path, key),
                format!("missing required key {key:?} ({looks_like})"),
            )
        })
    }

    /// Rejects zero for a quantity that must be positive.
    fn positive(&self, value: u64, location: impl FnOnce() -> String) -> Res<u64> {
        if value == 0 {
            return Err(self.err(location(), "must be greater than 0"));
        }
        Ok(value)
    }

    fn scenario(&self, doc: &Table) -> Res<Scenario> {
        self.keys(doc, "", TOP_KEYS)?;
        let name = self
            .get(doc, "", "name", read_name)?
            .unwrap_or_else(|| default_name(self.opts.source));
        let duration_ns = self.require(doc, "", "duration", read_time, r#"a time like "30s""#)?;
        self.positive(duration_ns, || "duration".to_string())?;
        let file_seed = self.get(doc, "", "seed", read_seed)?;
        let seed = self.opts.seed.or(file_seed).unwrap_or(DEFAULT_SEED);
        let sample_interval_ns = self
            .get(doc, "", "sample_interval", read_time)?
            .unwrap_or(DEFAULT_SAMPLE_INTERVAL_NS);
        self.positive(sample_interval_ns, || "sample_interval".to_string())?;
        if sample_interval_ns > duration_ns {
            return Err(self.err(
                "sample_interval",
                format!(
                    "{} is longer than the run (duration = {}); it must not exceed the duration",
                    format_time(sample_interval_ns),
                    format_time(duration_ns)
                ),
            ));
        }
        let measure_ns = self.measure(doc, duration_ns)?;
        let links = self.links(doc, duration_ns, seed)?;
        let flows = self.flows(doc, &links, duration_ns)?;
        let actions = self.actions(doc, &links, &flows, duration_ns)?;
        let elements = self.components(doc, "elements", self.opts.known_elements)?;
        let controllers = self.components(doc, "controllers", self.opts.known_controllers)?;
        Ok(Scenario {
            name,
            source: self.opts.source.to_string(),
            duration_ns,
            seed,
            sample_interval_ns,
            measure_ns,
            links,
            flows,
            actions,
            elements,
            controllers,
            base_dir: self.opts.base_dir.map(Path::to_path_buf),
        })
    }

    /// Key `measure = ["FROM", "TO"]`: 0 ≤ FROM < TO ≤ duration; default the whole run.
    fn measure(&self, doc: &Table, duration_ns: Nanos) -> Res<(Nanos, Nanos)> {
        let looks_like = r#"a window like ["10s", "60s"] (from, to)"#;
        let items = match doc.get("measure") {
            None => return Ok((0, duration_ns)),
            Some(Value::Array(items)) if items.len() == 2 => items,
            Some(other) => {
                return Err(self.err(
                    "measure",
                    format!("expected {looks_like}, got {}", describe(other)),
                ))
            }
        };
        let from = read_time(&items[0]).map_err(|m| self.err("measure[0]", m))?;
        let to = read_time(&items[1]).map_err(|m| self.err("measure[1]", m))?;
        if from >= to {
            return Err(self.err(
                "measure",
                format!(
                    "the window must open before it closes: {} is not before {}",
                    format_time(from),
                    format_time(to)
                ),
            ));
        }
        if to > duration_ns {
            return Err(self.err(
                "measure[1]",
                format!(
                    "{} is after the end of the run ({})",
                    format_time(to),
                    format_time(duration_ns)
                ),
            ));
        }
        Ok((from, to))
    }

    // --- links --------------------------------------------------------------------------------

    fn links(&self, doc: &Table, duration_ns: Nanos, seed: u64) -> Res<Vec<LinkSpec>> {
        let looks_like = r#"a table of links like [links.down] with rate = "20Mbps""#;
        let links = match doc.get("links") {
            None => {
                return Err(self.err(
                    "links",
                    format!("missing required key \"links\" ({looks_like})"),
                ))
            }
            Some(Value::Table(links)) => links,
            Some(other) => {
                return Err(self.err(
                    "links",
                    format!("expected {looks_like}, got {}", describe(other)),
                ))
            }
        };
        if links.is_empty() {
            return Err(self.err("links", "at least one link is required"));
        }
        links
            .iter()
            .map(|(name, value)| self.link(name, value, duration_ns, seed))
            .collect()
    }

    fn link(&self, name: &str, value: &Value, duration_ns: Nanos, seed: u64) -> Res<LinkSpec> {
        let path = join("links", name);
        if name.trim().is_empty() {
            return Err(self.err(path, "a link name must not be empty"));
        }
        let Value::Table(t) = value else {
            return Err(self.err(
                &path,
                format!(
                    "expected a table of link settings like [links.{name}] with rate = \"20Mbps\", got {}",
                    describe(value)
                ),
            ));
        };
        let kind = self
            .get(t, &path, "kind", read_string)?
            .unwrap_or_else(|| DEFAULT_LINK_KIND.to_string());
        let known = self.opts.known_link_kinds;
        let info = known.iter().find(|k| k.kind == kind);
        if !known.is_empty() && info.is_none() {
            let names: Vec<&str> = known.iter().map(|k| k.kind).collect();
            return Err(self.err(
                join(&path, "kind"),
                format!("unknown link kind {kind:?}; known: {}", names.join(", ")),
            ));
        }
        if let Some(
            info @ LinkKind {
                common_keys: Some(common),
                ..
            },
        ) = info
        {
            return self.model_link(name, t, &path, info, common);
        }
        self.keys(t, &path, &[LINK_KEYS, QUEUE_PARAM_KEYS].concat())?;
        Ok(LinkSpec {
            name: name.to_string(),
            kind,
            serializer: self.serializer(name, t, &path, duration_ns, seed)?,
            delay_ns: self.get(t, &path, "delay", read_time)?.unwrap_or(0),
            queue: self.queue(t, &path)?,
            loss: self.loss(t, &path)?,
            jitter: self.jitter(t, &path)?,
            outages: self.outages(t, &path)?,
            ports: self.ports(t, &path)?,
            model: Table::new(),
        })
    }

    /// A link of a model with its own keys (`LinkKind::common_keys` is `Some`): the common keys
    /// it takes, read as for any link, and its own keys, checked by the model. A common key it
    /// does not take is an error naming the kind.
    fn model_link(
        &self,
        name: &str,
        t: &Table,
        path: &str,
        info: &LinkKind,
        common: &[&str],
    ) -> Res<LinkSpec> {
        let accepted: Vec<&str> = ["kind"]
            .iter()
            .chain(common)
            .chain(info.own_keys)
            .copied()
            .collect();
        let all_common = [LINK_KEYS, QUEUE_PARAM_KEYS].concat();
        if let Some(key) = t
            .keys()
            .find(|k| all_common.contains(&k.as_str()) && !accepted.contains(&k.as_str()))
        {
            return Err(self.err(
                join(path, key),
                format!(
                    "{key} does not apply to a link of kind {:?}; its keys are: {}",
                    info.kind,
                    accepted.join(", ")
                ),
            ));
        }
        self.keys(t, path, &accepted)?;
        let model: Table = t
            .iter()
            .filter(|(k, _)| info.own_keys.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let shape = (info.check)(&model)
            .map_err(|(key, message)| self.err(format!("{path}.{key}"), message))?;
        Ok(LinkSpec {
            name: name.to_string(),
            kind: info.kind.to_string(),
            serializer: Serializer::Model {
                peak_bps: shape.peak_bps,
            },
            delay_ns: self.get(t, path, "delay", read_time)?.unwrap_or(0),
            queue: self.queue(t, path)?,
            loss: LossSpec::None,
            jitter: None,
            outages: Vec::new(),
            ports: shape.ports,
            model,
        })
    }

    /// `ports = ["a", "b"]`: named destinations of the link, each with its own queue.
    fn ports(&self, t: &Table, path: &str) -> Res<Vec<String>> {
        let key = join(path, "ports");
        let looks_like = r#"an array of port names like ["ue1", "ue2"]"#;
        let items = match t.get("ports") {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) if !items.is_empty() => items,
            Some(other) => {
                return Err(self.err(
                    &key,
                    format!("expected {looks_like}, got {}", describe(other)),
                ))
            }
        };
        if items.len() > u16::MAX as usize {
            return Err(self.err(&key, format!("at most {} ports", u16::MAX)));
        }
        let mut names: Vec<String> = Vec::with_capacity(items.len());
        for (j, item) in items.iter().enumerate() {
            let item_path = index(&key, j);
            let name = match item {
                Value::String(n) if !n.is_empty() && !n.contains(':') => n.clone(),
                _ => {
                    return Err(self.err(
                        item_path,
                        format!(
                            "expected a port name (non-empty, without ':'), got {}",
                            describe(item)
                        ),
                    ))
                }
            };
            if names.contains(&name) {
                return Err(self.err(item_path, format!("port {name:?} appears twice")));
            }
            names.push(name);
        }
        Ok(names)
    }

    /// Exactly one of `rate` (with optional `rate_steps`), `rate_cycle` and `trace`.
    fn serializer(
        &self,
        name: &str,
        t: &Table,
        path: &str,
        duration_ns: Nanos,
        seed: u64,
    ) -> Res<Serializer> {
        let given: Vec<&str> = SERIALIZER_KEYS
            .iter()
            .copied()
            .filter(|k| t.contains_key(*k))
            .collect();
        match given.as_slice() {
            [] => {
                return Err(self.err(
                    path,
                    "a link needs exactly one of rate, rate_cycle or trace; none is given",
                ))
            }
            [first, second, ..] => {
                return Err(self.err(
                    join(path, second),
                    format!(
                        "{first} and {second} are both given; a link takes exactly one of rate, rate_cycle or trace"
                    ),
                ))
            }
            [_] => {}
        }
        if t.contains_key("rate_steps") && !t.contains_key("rate") {
            return Err(self.err(
                join(path, "rate_steps"),
                "rate_steps applies only to a fixed-rate link (rate = ...); with rate_cycle or trace the rate is already set over time",
            ));
        }
        if let Some(value) = t.get("rate_cycle") {
            self.no_trace_params(t, path)?;
            return self.rate_cycle(value, &join(path, "rate_cycle"), duration_ns);
        }
        if t.contains_key("trace") {
            return self.trace(name, t, path, duration_ns, seed);
        }
        self.no_trace_params(t, path)?;
        let rate_bps = self.require(t, path, "rate", read_rate, r#"a rate like "20Mbps""#)?;
        self.positive(rate_bps, || join(path, "rate"))?;
        let changes = match t.get("rate_steps") {
            None => Vec::new(),
            Some(steps) => self.rate_steps(steps, &join(path, "rate_steps"), duration_ns)?,
        };
        Ok(Serializer::Rate { rate_bps, changes })
    }

    fn no_trace_params(&self, t: &Table, path: &str) -> Res<()> {
        if t.contains_key("trace_params") {
            return Err(self.err(
                join(path, "trace_params"),
                "trace_params applies only to a synthetic trace (trace = \"synth:KIND\")",
            ));
        }
        Ok(())
    }

    /// `rate_steps = [{ at = TIME, rate = RATE }, ...]`: `at` > 0 and strictly increasing; steps
    /// at or after the end of the run are dropped.
    fn rate_steps(&self, value: &Value, path: &str, duration_ns: Nanos) -> Res<Vec<RateChange>> {
        let looks_like = r#"an array of steps like [{ at = "10s", rate = "5Mbps" }]"#;
        let Value::Array(items) = value else {
            return Err(self.err(
                path,
                format!("expected {looks_like}, got {}", describe(value)),
            ));
        };
        let mut changes = Vec::new();
        let mut previous_at: Option<Nanos> = None;
        for (i, item) in items.iter().enumerate() {
            let item_path = index(path, i);
            let Value::Table(step) = item else {
                return Err(self.err(
                    item_path,
                    format!(
                        r#"expected a step like {{ at = "10s", rate = "5Mbps" }}, got {}"#,
                        describe(item)
                    ),
                ));
            };
            self.keys(step, &item_path, &["at", "rate"])?;
            let at_ns = self.require(step, &item_path, "at", read_time, r#"a time like "10s""#)?;
            let rate_bps = self.require(
                step,
                &item_path,
                "rate",
                read_rate,
                r#"a rate like "5Mbps""#,
            )?;
            self.positive(rate_bps, || join(&item_path, "rate"))?;
            if at_ns == 0 {
                return Err(self.err(
                    join(&item_path, "at"),
                    "must be greater than 0: the link's rate applies from time 0",
                ));
            }
            if let Some(previous) = previous_at.filter(|&p| at_ns <= p) {
                return Err(self.err(
                    join(&item_path, "at"),
                    format!(
                        "{} is not after the previous step's at ({}); at must be strictly increasing",
                        format_time(at_ns),
                        format_time(previous)
                    ),
                ));
            }
            previous_at = Some(at_ns);
            if at_ns < duration_ns {
                changes.push(RateChange { at_ns, rate_bps });
            }
        }
        Ok(changes)
    }

    /// `rate_cycle = { period = TIME, rates = [RATE, ...] }`, expanded into rate changes at every
    /// `period` up to the end of the run.
    fn rate_cycle(&self, value: &Value, path: &str, duration_ns: Nanos) -> Res<Serializer> {
        let Value::Table(cycle) = value else {
            return Err(self.err(
                path,
                format!(
                    r#"expected a table like {{ period = "2s", rates = ["20Mbps", "25Mbps"] }}, got {}"#,
                    describe(value)
                ),
            ));
        };
        self.keys(cycle, path, &["period", "rates"])?;
        let period_ns = self.require(cycle, path, "period", read_time, r#"a time like "2s""#)?;
        self.positive(period_ns, || join(path, "period"))?;
        let rates = self.rate_list(cycle, path)?;
        let mut changes = Vec::new();
        if rates.len() > 1 {
            let boundaries = (duration_ns - 1) / period_ns;
            if boundaries > MAX_RATE_CHANGES {
                return Err(self.err(
                    join(path, "period"),
                    format!(
                        "a period of {} makes {boundaries} rate changes over the run; at most {MAX_RATE_CHANGES} are supported",
                        format_time(period_ns)
                    ),
                ));
            }
            let mut current = rates[0];
            for k in 1..=boundaries {
                let rate_bps = rates[(k % rates.len() as u64) as usize];
                if rate_bps != current {
                    changes.push(RateChange {
                        at_ns: k * period_ns,
                        rate_bps,
                    });
                    current = rate_bps;
                }
            }
        }
        Ok(Serializer::Rate {
            rate_bps: rates[0],
            changes,
        })
    }

    /// `rates` of a `rate_cycle`: a non-empty array of rates > 0.
    fn rate_list(&self, cycle: &Table, path: &str) -> Res<Vec<u64>> {
        let rates_path = join(path, "rates");
        let looks_like = r#"an array of rates like ["20Mbps", "25Mbps"]"#;
        let items = match cycle.get("rates") {
            None => {
                return Err(self.err(
                    rates_path,
                    format!("missing required key \"rates\" ({looks_like})"),
                ))
            }
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.err(
                    rates_path,
                    format!("expected {looks_like}, got {}", describe(other)),
                ))
            }
        };
        if items.is_empty() {
            return Err(self.err(rates_path, "must hold at least one rate"));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let at = index(&rates_path, i);
                let rate = read_rate(item).map_err(|m| self.err(&at, m))?;
                self.positive(rate, || at.clone())
            })
            .collect()
    }

    /// `trace = "PATH"` (a Mahimahi file, relative to the scenario's directory) or
    /// `trace = "synth:KIND"` with `trace_params`.
    fn trace(
        &self,
        name: &str,
        t: &Table,
        path: &str,
        duration_ns: Nanos,
        seed: u64,
    ) -> Res<Serializer> {
        let trace_path = join(path, "trace");
        let spec = self.require(
            t,
            path,
            "trace",
            read_string,
            r#"a file path or "synth:KIND""#,
        )?;
        let (ops, origin) = if let Some(kind) = spec.strip_prefix(SYNTH_PREFIX) {
            let ops = self.synth_trace(name, kind, t, path, duration_ns, seed)?;
            (Arc::new(ops), spec.clone())
        } else {
            self.no_trace_params(t, path)?;
            if spec.trim().is_empty() {
                return Err(self.err(
                    trace_path,
                    "expected a Mahimahi trace file path or \"synth:KIND\", got an empty string",
                ));
            }
            let file = self.resolve(&spec);
            let ops = self
                .load_trace(&file)
                .map_err(|e| self.err(&trace_path, trace_file_message(&e)))?;
            (ops, file.display().to_string())
        };
        match ops.last().copied() {
            Some(period_ms) if period_ms > 0 => Ok(Serializer::Trace {
                opportunities_ms: ops,
                period_ms,
                origin,
            }),
            _ => Err(self.err(
                trace_path,
                "the trace's last timestamp must be greater than 0",
            )),
        }
    }

    fn synth_trace(
        &self,
        name: &str,
        kind: &str,
        t: &Table,
        path: &str,
        duration_ns: Nanos,
        seed: u64,
    ) -> Res<Vec<u32>> {
        if !trace::synth_kinds().contains(&kind) {
            return Err(self.err(
                join(path, "trace"),
                format!(
                    "unknown synthetic trace kind {kind:?}; kinds are: {}",
                    trace::synth_kinds().join(", ")
                ),
            ));
        }
        let no_params = Table::new();
        let params = match t.get("trace_params") {
            None => &no_params,
            Some(Value::Table(params)) => params,
            Some(other) => {
                return Err(self.err(
                    join(path, "trace_params"),
                    format!(
                        r#"expected a table like {{ mean = "12Mbps" }}, got {}"#,
                        describe(other)
                    ),
                ))
            }
        };
        let duration_ms = u32::try_from(duration_ns.div_ceil(NS_PER_MS)).map_err(|_| {
            self.err(
                "duration",
                format!(
                    "{} is too long for a synthetic trace (at most 4294967295ms)",
                    format_time(duration_ns)
                ),
            )
        })?;
        let link_seed = stream_seed(seed, &format!("links.{name}.trace"));
        trace::synth(kind, params, duration_ms, link_seed)
            .map_err(|e| e.within(path).in_file(self.opts.source))
    }

    fn resolve(&self, spec: &str) -> PathBuf {
        let path = Path::new(spec);
        match self.opts.base_dir {
            Some(base) if path.is_relative() => base.join(path),
            _ => path.to_path_buf(),
        }
    }

    fn load_trace(&self, file: &Path) -> Res<Arc<Vec<u32>>> {
        if let Some(ops) = self.traces.borrow().get(file) {
            return Ok(Arc::clone(ops));
        }
        let ops = trace::load_mahimahi_shared(file)?;
        self.traces
            .borrow_mut()
            .insert(file.to_path_buf(), Arc::clone(&ops));
        Ok(ops)
    }

    // --- queue, loss, jitter, outages ---------------------------------------------------------

    fn queue(&self, t: &Table, path: &str) -> Res<QueueSpec> {
        let discipline = self.get(t, path, "queue", read_string)?;
        let discipline = discipline.as_deref().unwrap_or("droptail");
        // Each discipline's own default limit: Linux's for fq_codel (10240 packets) and PIE
        // (1000 packets, which is also rove's default for the others).
        let default_limit = match discipline {
            "fq_codel" => QueueLimit::Packets(FQ_CODEL_DEFAULT_LIMIT),
            _ => DEFAULT_BUFFER,
        };
        let limit = self
            .get(t, path, "buffer", read_queue_limit)?
            .unwrap_or(default_limit);
        if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(self.err(
                join(path, "buffer"),
                "must be greater than 0 (a queue of size zero drops every packet)",
            ));
        }
        if let QueueLimit::Bytes(b @ 1..=1499) = limit {
            return Err(self.err(
                join(path, "buffer"),
                format!(
                    "{b} B holds no full-size packet (1500 B), so every data packet would be \
                     dropped; accepted: at least 1500B, or a count like \"1pkt\""
                ),
            ));
        }
        // The keys each discipline takes; any other discipline's key is an error.
        let own: &[&str] = match discipline {
            "droptail" => &[],
            "codel" => &["codel_target", "codel_interval"],
            "fq_codel" => &["codel_target", "codel_interval", "fq_flows", "fq_quantum"],
            "pie" => &[
                "pie_target",
                "pie_tupdate",
                "pie_alpha",
                "pie_beta",
                "pie_max_burst",
            ],
            other => {
                return Err(self.err(
                    join(path, "queue"),
                    format!(
                        "unknown queue discipline {other:?}; accepted: droptail, codel, \
                         fq_codel, pie"
                    ),
                ))
            }
        };
        for key in QUEUE_PARAM_KEYS {
            if t.contains_key(*key) && !own.contains(key) {
                return Err(self.err(
                    join(path, key),
                    format!("{key} does not apply to queue = \"{discipline}\""),
                ));
            }
        }
        let time = |key: &str, default: Nanos| -> Res<Nanos> {
            let v = self.get(t, path, key, read_time)?.unwrap_or(default);
            self.positive(v, || join(path, key))
        };
        let int = |key: &str, default: u32, min: u32, max: u32| -> Res<u32> {
            let v = self
                .get(t, path, key, read_number)?
                .unwrap_or(f64::from(default));
            if v.fract() != 0.0 || v < f64::from(min) || v > f64::from(max) {
                return Err(self.err(
                    join(path, key),
                    format!("{v} is out of range; accepted: {min} to {max}"),
                ));
            }
            Ok(v as u32)
        };
        Ok(match discipline {
            "droptail" => QueueSpec::DropTail { limit },
            "codel" => QueueSpec::CoDel {
                limit,
                target_ns: time("codel_target", DEFAULT_CODEL_TARGET_NS)?,
                interval_ns: time("codel_interval", DEFAULT_CODEL_INTERVAL_NS)?,
            },
            "fq_codel" => QueueSpec::FqCodel {
                limit,
                target_ns: time("codel_target", DEFAULT_CODEL_TARGET_NS)?,
                interval_ns: time("codel_interval", DEFAULT_CODEL_INTERVAL_NS)?,
                // sch_fq_codel.c fq_codel_init: flows_cnt = 1024 (at most 65536);
                // quantum = psched_mtu = 1514 (at least 256)
                flows: int("fq_flows", 1024, 1, 65536)?,
                quantum: int("fq_quantum", 1514, 256, 1 << 20)?,
            },
            _ => QueueSpec::Pie {
                limit,
                // include/net/pie.h pie_params_init / pie_vars_init
                target_ns: time("pie_target", 15 * NS_PER_MS)?,
                tupdate_ns: time("pie_tupdate", 15 * NS_PER_MS)?,
                alpha: int("pie_alpha", 2, 0, 32)?,
                beta: int("pie_beta", 20, 0, 32)?,
                max_burst_ns: time("pie_max_burst", 150 * NS_PER_MS)?,
            },
        })
    }

    /// `loss = P`, `loss = { model = "bernoulli", p = P }` or a Gilbert-Elliott table.
    fn loss(&self, t: &Table, path: &str) -> Res<LossSpec> {
        let loss_path = join(path, "loss");
        let bernoulli = |p: f64| {
            if p == 0.0 {
                LossSpec::None
            } else {
                LossSpec::Bernoulli { p }
            }
        };
        match t.get("loss") {
            None => Ok(LossSpec::None),
            Some(value @ (Value::Integer(_) | Value::Float(_))) => {
                match read_probability(value).map_err(|m| self.err(loss_path.clone(), m))? {
                    p if p >= 1.0 => Err(self.err(
                        loss_path,
                        "1 loses every packet, so nothing would arrive; accepted: 0 <= loss < 1 \
                         (a Gilbert-Elliott model may lose everything in its bad state)",
                    )),
                    p => Ok(bernoulli(p)),
                }
            }
            Some(Value::Table(model)) => self.loss_model(model, &loss_path, bernoulli),
            Some(other) => Err(self.err(
                loss_path,
                format!(
                    r#"expected a probability in [0, 1] or a table like {{ model = "gilbert-elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3 }}, got {}"#,
                    describe(other)
                ),
            )),
        }
    }

    fn loss_model(
        &self,
        model: &Table,
        path: &str,
        bernoulli: impl Fn(f64) -> LossSpec,
    ) -> Res<LossSpec> {
        let kind = self.require(
            model,
            path,
            "model",
            read_string,
            r#""bernoulli" or "gilbert-elliott""#,
        )?;
        match kind.as_str() {
            "bernoulli" => {
                self.keys(model, path, &["model", "p"])?;
                let p = self.require(
                    model,
                    path,
                    "p",
                    read_probability,
                    "a probability in [0, 1]",
                )?;
                Ok(bernoulli(p))
            }
            "gilbert-elliott" => {
                let keys = [
                    "model",
                    "p_good_to_bad",
                    "p_bad_to_good",
                    "loss_in_bad",
                    "loss_in_good",
                ];
                self.keys(model, path, &keys)?;
                let probability = "a probability in [0, 1]";
                Ok(LossSpec::GilbertElliott {
                    p_good_to_bad: self.require(
                        model,
                        path,
                        "p_good_to_bad",
                        read_probability,
                        probability,
                    )?,
                    p_bad_to_good: self.require(
                        model,
                        path,
                        "p_bad_to_good",
                        read_probability,
                        probability,
                    )?,
                    loss_in_good: self
                        .get(model, path, "loss_in_good", read_probability)?
                        .unwrap_or(0.0),
                    loss_in_bad: self
                        .get(model, path, "loss_in_bad", read_probability)?
                        .unwrap_or(1.0),
                })
            }
            other => Err(self.err(
                join(path, "model"),
                format!("unknown loss model {other:?}; accepted: bernoulli, gilbert-elliott"),
            )),
        }
    }

    fn jitter(&self, t: &Table, path: &str) -> Res<Option<JitterSpec>> {
        let amount_ns = self.get(t, path, "jitter", read_time)?;
        if amount_ns.is_none() {
            for key in ["jitter_distribution", "jitter_reorder"] {
                if t.contains_key(key) {
                    return Err(self.err(
                        join(path, key),
                        format!("{key} applies only with jitter = TIME (the spread of the delay)"),
                    ));
                }
            }
        }
        let distribution = match self
            .get(t, path, "jitter_distribution", read_string)?
            .as_deref()
        {
            None | Some("gaussian") => JitterDistribution::Gaussian,
            Some("uniform") => JitterDistribution::Uniform,
            Some(other) => {
                return Err(self.err(
                    join(path, "jitter_distribution"),
                    format!("unknown jitter distribution {other:?}; accepted: gaussian, uniform"),
                ))
            }
        };
        let reorder = self
            .get(t, path, "jitter_reorder", read_bool)?
            .unwrap_or(false);
        Ok(amount_ns
            .filter(|&amount| amount > 0)
            .map(|amount_ns| JitterSpec {
                amount_ns,
                distribution,
                reorder,
            }))
    }

    /// `outages = [{ at = TIME, for = TIME }, ...]`, returned sorted by start; they must not
    /// overlap (touching is fine: `[1s, 2s)` and `[2s, 3s)`).
    fn outages(&self, t: &Table, path: &str) -> Res<Vec<Outage>> {
        let Some(value) = t.get("outages") else {
            return Ok(Vec::new());
        };
        let outages_path = join(path, "outages");
        let Value::Array(items) = value else {
            return Err(self.err(
                outages_path,
                format!(
                    r#"expected an array like [{{ at = "10s", for = "2s" }}], got {}"#,
                    describe(value)
                ),
            ));
        };
        let mut outages: Vec<(usize, Outage)> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_path = index(&outages_path, i);
            let Value::Table(outage) = item else {
                return Err(self.err(
                    item_path,
                    format!(
                        r#"expected an outage like {{ at = "10s", for = "2s" }}, got {}"#,
                        describe(item)
                    ),
                ));
            };
            self.keys(outage, &item_path, &["at", "for"])?;
            let start_ns =
                self.require(outage, &item_path, "at", read_time, r#"a time like "10s""#)?;
            let length_ns =
                self.require(outage, &item_path, "for", read_time, r#"a time like "2s""#)?;
            self.positive(length_ns, || join(&item_path, "for"))?;
            let end_ns = start_ns.checked_add(length_ns).ok_or_else(|| {
                self.err(
                    join(&item_path, "for"),
                    "the outage ends too late to represent",
                )
            })?;
            outages.push((i, Outage { start_ns, end_ns }));
        }
        outages.sort_by_key(|&(i, o)| (o.start_ns, i));
        for pair in outages.windows(2) {
            let (earlier, later) = (pair[0], pair[1]);
            if later.1.start_ns < earlier.1.end_ns {
                let (first, second) = if earlier.0 < later.0 {
                    (earlier, later)
                } else {
                    (later, earlier)
                };
                return Err(self.err(
                    index(&outages_path, second.0),
                    format!(
                        "overlaps outages[{}] ([{}, {})); outages must not overlap",
                        first.0,
                        format_time(first.1.start_ns),
                        format_time(first.1.end_ns)
                    ),
                ));
            }
        }
        Ok(outages.into_iter().map(|(_, o)| o).collect())
    }

    // --- flows --------------------------------------------------------------------------------

    fn flows(&self, doc: &Table, links: &[LinkSpec], duration_ns: Nanos) -> Res<Vec<FlowSpec>> {
        let looks_like = "an array of tables [[flows]], each with path and ack_path";
        let items = match doc.get("flows") {
            None => {
                return Err(self.err(
                    "flows",
                    format!("missing required key \"flows\" ({looks_like})"),
                ))
            }
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.err(
                    "flows",
                    format!("expected {looks_like}, got {}", describe(other)),
                ))
            }
        };
        if items.is_empty() {
            return Err(self.err("flows", "at least one flow is required"));
        }
        let mut owner_of_name: HashMap<String, usize> = HashMap::new();
        let mut flows = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = index("flows", i);
            let Value::Table(t) = item else {
                return Err(self.err(
                    path,
                    format!("expected a table [[flows]], got {}", describe(item)),
                ));
            };
            let accepted: Vec<&str> = FLOW_KEYS
                .iter()
                .copied()
                .chain(workload::workload_keys())
                .collect();
            self.keys(t, &path, &accepted)?;
            let flow = self.flow(t, &path, i, links, duration_ns)?;
            let count = self.get(t, &path, "count", read_count)?.unwrap_or(1);
            if flows.len() as u64 + count > MAX_FLOWS {
                return Err(self.err(
                    join(&path, "count"),
                    format!("the scenario would hold more than {MAX_FLOWS} flows"),
                ));
            }
            let starts = self.flow_starts(t, &path, count, duration_ns)?;
            for (name, start_ns) in expanded_names(&flow.name, count).into_iter().zip(starts) {
                if let Some(&other) = owner_of_name.get(&name) {
                    return Err(self.err(
                        join(&path, "name"),
                        format!(
                            "duplicate flow name {name:?}: flows[{other}] has it too; flow names must be unique (with count = N, a flow named x stands for x.1 ... x.N)"
                        ),
                    ));
                }
                owner_of_name.insert(name.clone(), i);
                flows.push(FlowSpec {
                    name,
                    start_ns,
                    ..flow.clone()
                });
            }
        }
        Ok(flows)
    }

    /// One `[[flows]]` entry, before `count` expansion.
    fn flow(
        &self,
        t: &Table,
        path: &str,
        i: usize,
        links: &[LinkSpec],
        duration_ns: Nanos,
    ) -> Res<FlowSpec> {
        let name = self
            .get(t, path, "name", read_name)?
            .unwrap_or_else(|| format!("flow{i}"));
        let workload = self.workload(t, path)?;
        if !workload.is_tcp() {
            return self.unresponsive_flow(t, path, name, workload, links, duration_ns);
        }
        let slow_start_after_idle = self
            .get(t, path, "slow_start_after_idle", read_bool)?
            .unwrap_or(true);
        if workload == Workload::Bulk && t.contains_key("slow_start_after_idle") {
            return Err(self.err(
                join(path, "slow_start_after_idle"),
                "applies to flows whose application writes over time (workload = \"video\" or \"requests\"); a bulk flow is never idle",
            ));
        }
        let cc = self
            .get(t, path, "cc", read_string)?
            .unwrap_or_else(|| DEFAULT_CC.to_string());
        self.known_cc(&cc, path)?;
        let cc_params = self.cc_params(t, path)?;
        let multipath = self.multipath(t, path, links)?;
        let (path_links, ack_links) = match &multipath {
            Some(mp) => (mp.paths[0].path.clone(), mp.paths[0].ack_path.clone()),
            None => {
                for key in [
                    "scheduler",
                    "scheduler_params",
                    "coupling",
                    "detector",
                    "detector_params",
                    "receiver",
                    "receiver_params",
                ] {
                    if t.contains_key(key) {
                        return Err(self.err(
                            join(path, key),
                            format!("{key:?} applies to multipath flows only: name the paths with paths = [{{path = [...], ack_path = [...]}}, ...]"),
                        ));
                    }
                }
                (
                    self.link_list(t, path, "path", links)?,
                    self.link_list(t, path, "ack_path", links)?,
                )
            }
        };
        let start_ns = self.flow_start(t, path, duration_ns)?;
        let size_bytes = self.get(t, path, "size", read_flow_size)?.flatten();
        let rwnd_bytes = self
            .get(t, path, "rwnd", read_size)?
            .unwrap_or(DEFAULT_RWND_BYTES);
        self.positive(rwnd_bytes, || join(path, "rwnd"))?;
        if rwnd_bytes < MIN_RWND_BYTES {
            return Err(self.err(
                join(path, "rwnd"),
                format!(
                    "{rwnd_bytes} B is less than one segment ({MIN_RWND_BYTES} B), so the \
                     sender could never send; accepted: at least {MIN_RWND_BYTES}B"
                ),
            ));
        }
        let rcv_buffer = self.get(t, path, "rcv_buffer", read_string)?;
        let rcv_autotune = match rcv_buffer.as_deref() {
            None => multipath.is_none(),
            Some("fixed") => false,
            Some("auto") if multipath.is_some() => {
                return Err(self.err(
                    join(path, "rcv_buffer"),
                    "a multipath flow's window is the connection-level rwnd: only \"fixed\" is accepted here".to_string(),
                ))
            }
            Some("auto") => true,
            Some(other) => {
                return Err(self.err(
                    join(path, "rcv_buffer"),
                    format!("unknown receive-buffer mode {other:?}; accepted: auto, fixed"),
                ))
            }
        };
        let rcv_truesize = self
            .get(t, path, "rcv_truesize", read_size)?
            .unwrap_or(DEFAULT_RCV_TRUESIZE);
        if rcv_truesize <= 1448 || rcv_truesize > 1 << 20 {
            return Err(self.err(
                join(path, "rcv_truesize"),
                format!("{rcv_truesize} B is not the memory of a buffered 1448-byte segment: accepted 1449 B to 1 MiB"),
            ));
        }
        Ok(FlowSpec {
            name,
            cc,
            cc_params,
            path: path_links,
            ack_path: ack_links,
            start_ns,
            size_bytes,
            rwnd_bytes,
            rcv_autotune,
            rcv_truesize,
            multipath,
            workload,
            slow_start_after_idle,
        })
    }

    /// Key `start` of a flow: before the end of the run.
    /// The first start time (`start = TIME`, or the first of `start = [TIME, ...]`).
    fn flow_start(&self, t: &Table, path: &str, duration_ns: Nanos) -> Res<Nanos> {
        let start_ns = match t.get("start") {
            Some(Value::Array(items)) if !items.is_empty() => read_time(&items[0])
                .map_err(|m| self.err(format!("{}[0]", join(path, "start")), m))?,
            _ => self.get(t, path, "start", read_time)?.unwrap_or(0),
        };
        self.check_start(start_ns, join(path, "start"), duration_ns)
    }

    /// The start of each of the `count` flows an entry stands for: all at `start`; or
    /// `start + k·stagger` for the k-th (k = 0, 1, ...); or one per entry of a `start` list.
    fn flow_starts(
        &self,
        t: &Table,
        path: &str,
        count: u64,
        duration_ns: Nanos,
    ) -> Res<Vec<Nanos>> {
        let stagger = self.get(t, path, "stagger", read_time)?;
        if let Some(Value::Array(items)) = t.get("start") {
            if stagger.is_some() {
                return Err(self.err(
                    join(path, "stagger"),
                    "give either stagger or a list of start times, not both",
                ));
            }
            if items.len() as u64 != count {
                return Err(self.err(
                    join(path, "start"),
                    format!(
                        "{} start times for count = {count}; a list of start times has one per flow",
                        items.len()
                    ),
                ));
            }
            return items
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let at = format!("{}[{k}]", join(path, "start"));
                    let ns = read_time(v).map_err(|m| self.err(at.clone(), m))?;
                    self.check_start(ns, at, duration_ns)
                })
                .collect();
        }
        let first = self.flow_start(t, path, duration_ns)?;
        let step = stagger.unwrap_or(0);
        if stagger.is_some() && count < 2 {
            return Err(self.err(
                join(path, "stagger"),
                "staggers the starts of count = N flows; this entry has count = 1",
            ));
        }
        (0..count)
            .map(|k| {
                let ns = first.saturating_add(step.saturating_mul(k));
                self.check_start(ns, join(path, "stagger"), duration_ns)
            })
            .collect()
    }

    fn check_start(&self, start_ns: Nanos, location: String, duration_ns: Nanos) -> Res<Nanos> {
        if start_ns >= duration_ns {
            return Err(self.err(
                location,
                format!(
                    "the flow starts at {}, at or after the end of the run (duration = {}), so it would never send",
                    format_time(start_ns),
                    format_time(duration_ns)
                ),
            ));
        }
        Ok(start_ns)
    }

    /// `cc` (at key path `path`) is an algorithm the engine knows.
    pub(super) fn known_cc(&self, cc: &str, path: &str) -> Res<()> {
        let known = self.opts.known_cc;
        if !known.is_empty() && !known.contains(&cc) {
            return Err(self.err(
                join(path, "cc"),
                format!(
                    "unknown congestion control {cc:?}; known: {}",
                    known.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// Key `cc_params`: a table (the algorithm checks its keys), empty when absent.
    pub(super) fn cc_params(&self, t: &Table, path: &str) -> Res<Table> {
        match t.get("cc_params") {
            None => Ok(Table::new()),
            Some(Value::Table(params)) => Ok(params.clone()),
            Some(other) => Err(self.err(
                join(path, "cc_params"),
                format!(
                    "expected a table like {{ hystart = false }}, got {}",
                    describe(other)
                ),
            )),
        }
    }

    /// A multipath flow's `paths`, `scheduler` and `coupling`; `None` without `paths`.
    fn multipath(&self, t: &Table, path: &str, links: &[LinkSpec]) -> Res<Option<MultipathSpec>> {
        let looks_like = r#"an array of tables like [{path = ["wifi_down"], ack_path = ["wifi_up"]}, {path = ["lte_down"], ack_path = ["lte_up"]}]"#;
        let items = match t.get("paths") {
            None => return Ok(None),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.err(
                    join(path, "paths"),
                    format!("expected {looks_like}, got {}", describe(other)),
                ))
            }
        };
        for key in ["path", "ack_path"] {
            if t.contains_key(key) {
                return Err(self.err(
                    join(path, key),
                    format!("a multipath flow names its links in \"paths\" only; remove {key:?} (or remove \"paths\" for a single-path flow)"),
                ));
            }
        }
        let list_path = join(path, "paths");
        if items.is_empty() || items.len() > MAX_SUBFLOWS {
            return Err(self.err(
                list_path,
                format!("must hold 1 to {MAX_SUBFLOWS} paths (one subflow each, or `subflows` each), got {}; expected {looks_like}", items.len()),
            ));
        }
        let mut paths = Vec::with_capacity(items.len());
        let mut costs = Vec::with_capacity(items.len());
        // Which `paths` entry each subflow came from (an entry with `subflows = n` opens n).
        let mut entry_of = Vec::with_capacity(items.len());
        for (j, item) in items.iter().enumerate() {
            let item_path = index(&list_path, j);
            let Value::Table(pt) = item else {
                return Err(self.err(
                    item_path,
                    format!(
                        "expected a table like {{path = [\"down\"], ack_path = [\"up\"]}}, got {}",
                        describe(item)
                    ),
                ));
            };
            self.keys(pt, &item_path, PATHS_ENTRY_KEYS)?;
            let sub = SubflowPath {
                path: self.link_list(pt, &item_path, "path", links)?,
                ack_path: self.link_list(pt, &item_path, "ack_path", links)?,
            };
            // Several subflows may share links (MPTCP opens several subflows between the same
            // addresses on different ports, RFC 8684 §3.2; seed 003 Ch. 4 opens 20 on one path).
            let count = self.get(pt, &item_path, "subflows", read_count)?.unwrap_or(1);
            if paths.len() as u64 + count > MAX_SUBFLOWS as u64 {
                return Err(self.err(
                    join(&item_path, "subflows"),
                    format!("the flow would have more than {MAX_SUBFLOWS} subflows (the most a multipath flow may have; seed 003 Ch. 4 opens up to 20)"),
                ));
            }
            let cost = self.get(pt, &item_path, "cost", read_number)?;
            if let Some(c) = cost {
                if !(0.0..=1e12).contains(&c) {
                    return Err(self.err(
                        join(&item_path, "cost"),
                        format!("{c} is out of range; accepted: a number from 0 to 1e12 (cost per Mbit/s of the path)"),
                    ));
                }
            }
            for _ in 0..count {
                paths.push(sub.clone());
                costs.push(cost);
                entry_of.push(j);
            }
        }
        let costs = match costs.iter().filter(|c| c.is_some()).count() {
            0 => None,
            n if n == costs.len() => Some(costs.into_iter().flatten().collect()),
            _ => {
                let k = costs
                    .iter()
                    .position(|c| c.is_none())
                    .expect("one is missing");
                return Err(self.err(
                    join(&index(&list_path, entry_of[k]), "cost"),
                    "missing: give `cost` on every paths entry or on none",
                ));
            }
        };
        let scheduler = self
            .get(t, path, "scheduler", read_string)?
            .unwrap_or_else(|| DEFAULT_SCHEDULER.to_string());
        let known = self.opts.known_schedulers;
        if !known.is_empty() && !known.contains(&scheduler.as_str()) {
            return Err(self.err(
                join(path, "scheduler"),
                format!(
                    "unknown scheduler {scheduler:?}; accepted: {}",
                    known.join(", ")
                ),
            ));
        }
        let scheduler_params = match t.get("scheduler_params") {
            None => Table::new(),
            Some(Value::Table(params)) => params.clone(),
            Some(other) => {
                return Err(self.err(
                    join(path, "scheduler_params"),
                    format!(
                        "expected a table like {{ rtt = \"rtprop\" }}, got {}",
                        describe(other)
                    ),
                ))
            }
        };
        let coupling = self
            .get(t, path, "coupling", read_string)?
            .unwrap_or_else(|| DEFAULT_COUPLING.to_string());
        let known = self.opts.known_couplings;
        if !known.is_empty() && !known.contains(&coupling.as_str()) {
            return Err(self.err(
                join(path, "coupling"),
                format!(
                    "unknown coupling {coupling:?}; accepted: {}",
                    known.join(", ")
                ),
            ));
        }
        let detector = self
            .get(t, path, "detector", read_string)?
            .unwrap_or_else(|| DEFAULT_DETECTOR.to_string());
        let known = self.opts.known_detectors;
        if !known.is_empty() && !known.contains(&detector.as_str()) {
            return Err(self.err(
                join(path, "detector"),
                format!(
                    "unknown detector {detector:?}; accepted: {}",
                    known.join(", ")
                ),
            ));
        }
        let detector_params = match t.get("detector_params") {
            None => Table::new(),
            Some(Value::Table(params)) => params.clone(),
            Some(other) => {
                return Err(self.err(
                    join(path, "detector_params"),
                    format!(
                        "expected a table like {{ interval_ms = 100 }}, got {}",
                        describe(other)
                    ),
                ))
            }
        };
        let receiver = self.get(t, path, "receiver", read_string)?;
        let known = self.opts.known_receivers;
        if let Some(r) = &receiver {
            if !known.is_empty() && !known.contains(&r.as_str()) {
                return Err(self.err(
                    join(path, "receiver"),
                    format!("unknown receiver {r:?}; accepted: {}", known.join(", ")),
                ));
            }
        }
        let receiver_params = match t.get("receiver_params") {
            None => Table::new(),
            Some(Value::Table(params)) if receiver.is_some() => params.clone(),
            Some(Value::Table(_)) => {
                return Err(self.err(
                    join(path, "receiver_params"),
                    "goes with receiver = \"NAME\" (a plain receiver takes no parameters)",
                ))
            }
            Some(other) => {
                return Err(self.err(
                    join(path, "receiver_params"),
                    format!(
                        "expected a table like {{ update_ms = 10 }}, got {}",
                        describe(other)
                    ),
                ))
            }
        };
        Ok(Some(MultipathSpec {
            paths,
            costs,
            scheduler,
            scheduler_params,
            coupling,
            detector,
            detector_params,
            receiver,
            receiver_params,
        }))
    }

    /// `path` / `ack_path`: a non-empty array of existing link names, none twice; as indices.
    /// A path: link names, or `"LINK:PORT"` for a link with ports.
    fn link_list(&self, t: &Table, path: &str, key: &str, links: &[LinkSpec]) -> Res<Vec<Hop>> {
        let list_path = join(path, key);
        let looks_like =
            r#"an array of link names like ["down"] (or "LINK:PORT" for a link with ports)"#;
        let items = match t.get(key) {
            None => {
                return Err(self.err(
                    list_path,
                    format!("missing required key {key:?} ({looks_like})"),
                ))
            }
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.err(
                    list_path,
                    format!("expected {looks_like}, got {}", describe(other)),
                ))
            }
        };
        if items.is_empty() {
            return Err(self.err(
                list_path,
                format!("must name at least one link ({looks_like})"),
            ));
        }
        let names: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
        let mut hops: Vec<Hop> = Vec::with_capacity(items.len());
        for (j, item) in items.iter().enumerate() {
            let item_path = index(&list_path, j);
            let Value::String(entry) = item else {
                return Err(self.err(
                    item_path,
                    format!("expected a link name, got {}", describe(item)),
                ));
            };
            // A link named "a:b" (a quoted TOML key) is itself, whatever follows the colon; else
            // the longest prefix before a colon that names a link is the link, the rest its
            // port (a port name may hold colons: a WiFi station's uplink `"air:s1:up"`).
            let (link, port) = if names.contains(&entry.as_str()) {
                (entry.as_str(), None)
            } else {
                let split = entry
                    .rmatch_indices(':')
                    .map(|(i, _)| (&entry[..i], &entry[i + 1..]))
                    .find(|(l, _)| names.contains(l));
                match split.or_else(|| entry.rsplit_once(':')) {
                    Some((l, p)) => (l, Some(p)),
                    None => (entry.as_str(), None),
                }
            };
            let Some(link_index) = names.iter().position(|l| *l == link) else {
                return Err(self.err(
                    item_path,
                    format!("unknown link {link:?}; links are: {}", names.join(", ")),
                ));
            };
            let ports = &links[link_index].ports;
            let port = match (port, ports.is_empty()) {
                (None, true) => 0,
                (Some(p), true) => {
                    return Err(self.err(
                        item_path,
                        format!("link {link:?} has no ports (name it as {link:?}, or give it ports = [...]), so {p:?} names none"),
                    ))
                }
                (None, false) => {
                    return Err(self.err(
                        item_path,
                        format!(
                            "link {link:?} has ports: name one, as {:?}; its ports are: {}",
                            format!("{link}:{}", ports[0]),
                            ports.join(", ")
                        ),
                    ))
                }
                (Some(p), false) => match ports.iter().position(|x| x == p) {
                    Some(i) => i as u16,
                    None => {
                        return Err(self.err(
                            item_path,
                            format!("link {link:?} has no port {p:?}; its ports are: {}", ports.join(", ")),
                        ))
                    }
                },
            };
            if hops.iter().any(|h| h.link == link_index) {
                return Err(self.err(
                    item_path,
                    format!("link {link:?} appears twice in this path"),
                ));
            }
            hops.push(Hop {
                link: link_index,
                port,
            });
        }
        Ok(hops)
    }
}

/// Names of `count` identical flows: `name` alone, or `name.1` ... `name.N`.
fn expanded_names(name: &str, count: u64) -> Vec<String> {
    if count == 1 {
        vec![name.to_string()]
    } else {
        (1..=count).map(|k| format!("{name}.{k}")).collect()
    }
}

/// A trace-file error as part of a scenario error's message.
fn trace_file_message(e: &ScenarioError) -> String {
    if e.location.starts_with("line ") {
        format!("in trace file {:?}, {}: {}", e.file, e.location, e.message)
    } else {
        format!("in trace file {:?}: {}", e.file, e.message)
    }
}
