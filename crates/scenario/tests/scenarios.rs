//! Scenario parsing end to end: good scenarios resolve to the expected specs, bad ones fail with
//! an error that names the key (or line) and says what is accepted.

use std::path::{Path, PathBuf};

use rove_scenario::{
    parse, ActionTarget, Change, FlowSpec, HandoffSpec, Hop, JitterDistribution, JitterSpec,
    LinkKind, LossSpec, ModelShape, Outage, ParseOptions, Process, QueueLimit, QueueSpec,
    RateChange, Scenario, ScenarioError, Serializer, SubflowPath, Workload, NS_PER_MS, NS_PER_S,
};

const KNOWN_CC: &[&str] = &["reno", "cubic", "bbr"];

/// The point-to-point link, and a stand-in radio model with its own keys: `cells = N` makes
/// ports `c0`, `c0:up`, ... (the engine's registry gives the real ones).
const LINK_KINDS: &[LinkKind] = &[
    LinkKind {
        kind: "p2p",
        common_keys: None,
        own_keys: &[],
        check: |_| Ok(ModelShape::default()),
    },
    LinkKind {
        kind: "radio",
        common_keys: Some(&["delay", "buffer"]),
        own_keys: &["cells"],
        check: |t| match t.get("cells").and_then(|v| v.as_integer()) {
            Some(n @ 1..=9) => Ok(ModelShape {
                ports: (0..n)
                    .flat_map(|i| [format!("c{i}"), format!("c{i}:up")])
                    .collect(),
                peak_bps: 1_000_000,
            }),
            _ => Err(("cells".into(), "expected 1 to 9".into())),
        },
    },
];

fn options<'a>(overrides: &'a [(String, String)], base_dir: Option<&'a Path>) -> ParseOptions<'a> {
    ParseOptions {
        source: "test.toml",
        base_dir,
        overrides,
        seed: None,
        known_cc: KNOWN_CC,
        known_schedulers: &["minrtt", "blest"],
        known_couplings: &["auto", "uncoupled", "connection"],
        known_detectors: &["auto", "truth", "none", "bccps", "dwc"],
        known_receivers: &[],
        known_link_kinds: LINK_KINDS,
        known_elements: &[],
        known_controllers: &[],
    }
}

fn parse_ok(text: &str) -> Scenario {
    parse(text, &options(&[], None)).unwrap_or_else(|e| panic!("unexpected error: {e}"))
}

fn parse_err_with(
    text: &str,
    overrides: &[(&str, &str)],
    base_dir: Option<&Path>,
) -> ScenarioError {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match parse(text, &options(&overrides, base_dir)) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "error is not one line: {line:?}");
            assert!(line.starts_with("test.toml: "), "{line}");
            e
        }
    }
}

/// Asserts that `text` fails at `location` with a message containing `phrase`.
fn assert_error(text: &str, location: &str, phrase: &str) {
    assert_error_with(text, &[], None, location, phrase);
}

fn assert_error_with(
    text: &str,
    overrides: &[(&str, &str)],
    base_dir: Option<&Path>,
    location: &str,
    phrase: &str,
) {
    let e = parse_err_with(text, overrides, base_dir);
    assert_eq!(e.location, location, "wrong location in: {e}");
    assert!(e.message.contains(phrase), "expected {phrase:?} in: {e}");
}

/// A valid scenario whose `[links.down]` body is `down`.
fn with_down(down: &str) -> String {
    format!(
        r#"duration = "10s"

[links.down]
{down}

[links.up]
rate = "20Mbps"

[[flows]]
path = ["down"]
ack_path = ["up"]
"#
    )
}

/// A valid scenario whose single flow has the extra lines `flow`.
fn with_flow(flow: &str) -> String {
    format!(
        r#"duration = "10s"

[links.down]
rate = "20Mbps"

[links.up]
rate = "20Mbps"

[[flows]]
{flow}
"#
    )
}

const PATHS: &str = r#"path = ["down"]
ack_path = ["up"]"#;

/// A scratch directory for trace files, unique per test.
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rove-scenario-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

// ---------------------------------------------------------------------------------------------
// Good scenarios
// ---------------------------------------------------------------------------------------------

const DEMO: &str = r#"
name = "demo"
duration = "30s"
seed = 1

[links.down]
trace = "synth:cellular"      # or a Mahimahi file path, or: rate = "20Mbps"
delay = "20ms"
queue = "droptail"            # or "codel"
buffer = "375KB"              # or "250pkt"
loss = 0.0

[links.up]
rate = "100Mbps"
delay = "20ms"

[[flows]]
name = "reno"
cc = "reno"
path = ["down"]
ack_path = ["up"]

[[flows]]
name = "cubic"
cc = "cubic"
path = ["down"]
ack_path = ["up"]
start = "5s"
"#;

#[test]
fn the_demo_parses() {
    let s = parse_ok(DEMO);
    assert_eq!(s.name, "demo");
    assert_eq!(s.source, "test.toml");
    assert_eq!(s.duration_ns, 30 * NS_PER_S);
    assert_eq!(s.seed, 1);
    assert_eq!(s.sample_interval_ns, 10 * NS_PER_MS);
    let names: Vec<&str> = s.links.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["down", "up"]);

    let down = &s.links[0];
    match &down.serializer {
        Serializer::Trace {
            opportunities_ms,
            period_ms,
            origin,
        } => {
            assert_eq!(*period_ms, 30_000);
            assert_eq!(origin, "synth:cellular");
            assert_eq!(opportunities_ms.last(), Some(&30_000));
            assert!(opportunities_ms.len() > 10_000);
        }
        other => panic!("expected a trace, got {other:?}"),
    }
    assert_eq!(down.delay_ns, 20 * NS_PER_MS);
    assert_eq!(
        down.queue,
        QueueSpec::DropTail {
            limit: QueueLimit::Bytes(375_000)
        }
    );
    assert_eq!(down.loss, LossSpec::None);
    assert_eq!(down.jitter, None);
    assert!(down.outages.is_empty());

    let up = &s.links[1];
    assert_eq!(
        up.serializer,
        Serializer::Rate {
            rate_bps: 100_000_000,
            changes: vec![]
        }
    );
    assert_eq!(
        up.queue,
        QueueSpec::DropTail {
            limit: QueueLimit::Packets(1000)
        }
    );

    assert_eq!(s.flows.len(), 2);
    assert_eq!(
        s.flows[0],
        FlowSpec {
            name: "reno".into(),
            cc: "reno".into(),
            cc_params: toml::Table::new(),
            path: hops(&[0]),
            ack_path: hops(&[1]),
            start_ns: 0,
            size_bytes: None,
            rwnd_bytes: 6 * 1024 * 1024,
            rcv_autotune: true,
            rcv_truesize: 2304,
            multipath: None,
            workload: Workload::Bulk,
            slow_start_after_idle: true,
        }
    );
    assert_eq!(s.flows[1].start_ns, 5 * NS_PER_S);
    assert_eq!(s.flows[1].cc, "cubic");
}

#[test]
fn defaults_fill_in() {
    let s = parse_ok(&with_flow(PATHS));
    assert_eq!(s.name, "test");
    assert_eq!(s.seed, 1);
    assert_eq!(s.flows[0].name, "flow0");
    assert_eq!(s.flows[0].cc, "reno");
    assert_eq!(s.flows[0].rwnd_bytes, 6_291_456);
    assert!(s.flows[0].rcv_autotune);
    assert_eq!(s.flows[0].rcv_truesize, 2304);
    assert_eq!(s.links[0].delay_ns, 0);

    let from_dict = ParseOptions {
        source: "<dict>",
        ..ParseOptions::default()
    };
    assert_eq!(
        parse(&with_flow(PATHS), &from_dict).unwrap().name,
        "scenario"
    );
    let from_path = ParseOptions {
        source: "scenarios/bbr-vs-cubic.toml",
        ..ParseOptions::default()
    };
    assert_eq!(
        parse(&with_flow(PATHS), &from_path).unwrap().name,
        "bbr-vs-cubic"
    );
}

#[test]
fn links_keep_the_order_of_the_file() {
    let s = parse_ok(
        r#"duration = "1s"
[links.zeta]
rate = "1Mbps"
[links.alpha]
rate = "1Mbps"
[links.mid]
rate = "1Mbps"
[[flows]]
path = ["alpha", "mid"]
ack_path = ["zeta"]
"#,
    );
    let names: Vec<&str> = s.links.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    assert_eq!(links(&s.flows[0].path), vec![1, 2]);
    assert_eq!(links(&s.flows[0].ack_path), vec![0]);
}

#[test]
fn rate_cycle_expands_over_the_run() {
    let text = with_down(r#"rate_cycle = { period = "2s", rates = ["20Mbps", "25Mbps"] }"#)
        .replace(r#"duration = "10s""#, r#"duration = "7s""#);
    let s = parse_ok(&text);
    let change = |s: u64, mbps: u64| RateChange {
        at_ns: s * NS_PER_S,
        rate_bps: mbps * 1_000_000,
    };
    assert_eq!(
        s.links[0].serializer,
        Serializer::Rate {
            rate_bps: 20_000_000,
            changes: vec![change(2, 25), change(4, 20), change(6, 25)]
        }
    );
    // A change exactly at the end of the run is not included.
    let text = with_down(r#"rate_cycle = { period = "5s", rates = ["20Mbps", "25Mbps"] }"#);
    let s = parse_ok(&text);
    assert_eq!(
        s.links[0].serializer,
        Serializer::Rate {
            rate_bps: 20_000_000,
            changes: vec![change(5, 25)]
        }
    );
    // One rate: no changes.
    let s = parse_ok(&with_down(
        r#"rate_cycle = { period = "1ms", rates = ["3Mbps"] }"#,
    ));
    assert_eq!(
        s.links[0].serializer,
        Serializer::Rate {
            rate_bps: 3_000_000,
            changes: vec![]
        }
    );
}

#[test]
fn rate_steps_expand_up_to_the_end() {
    let s = parse_ok(&with_down(
        r#"rate = "10Mbps"
rate_steps = [{ at = "1s", rate = "5Mbps" }, { at = "2.5s", rate = "15Mbps" }, { at = "10s", rate = "1Mbps" }]"#,
    ));
    assert_eq!(
        s.links[0].serializer,
        Serializer::Rate {
            rate_bps: 10_000_000,
            changes: vec![
                RateChange {
                    at_ns: NS_PER_S,
                    rate_bps: 5_000_000
                },
                RateChange {
                    at_ns: 2_500 * NS_PER_MS,
                    rate_bps: 15_000_000
                },
            ]
        }
    );
}

#[test]
fn queue_loss_jitter_and_outages() {
    let s = parse_ok(&with_down(
        r#"rate = "10Mbps"
queue = "codel"
buffer = "250pkt"
loss = { model = "gilbert-elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3 }
jitter = "5ms"
jitter_distribution = "uniform"
jitter_reorder = true
outages = [{ at = "5s", for = "1s" }, { at = "1s", for = "2s" }, { at = "3s", for = "1s" }]"#,
    ));
    let down = &s.links[0];
    assert_eq!(
        down.queue,
        QueueSpec::CoDel {
            limit: QueueLimit::Packets(250),
            target_ns: 5 * NS_PER_MS,
            interval_ns: 100 * NS_PER_MS
        }
    );
    assert_eq!(
        down.loss,
        LossSpec::GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.3,
            loss_in_good: 0.0,
            loss_in_bad: 1.0
        }
    );
    assert_eq!(
        down.jitter,
        Some(JitterSpec {
            amount_ns: 5 * NS_PER_MS,
            distribution: JitterDistribution::Uniform,
            reorder: true
        })
    );
    let outage = |a: u64, b: u64| Outage {
        start_ns: a * NS_PER_S,
        end_ns: b * NS_PER_S,
    };
    assert_eq!(down.outages, vec![outage(1, 3), outage(3, 4), outage(5, 6)]);

    let s = parse_ok(&with_down(
        r#"rate = "10Mbps"
loss = { model = "bernoulli", p = 0.01 }
jitter = "2ms""#,
    ));
    assert_eq!(s.links[0].loss, LossSpec::Bernoulli { p: 0.01 });
    assert_eq!(
        s.links[0].jitter.map(|j| (j.distribution, j.reorder)),
        Some((JitterDistribution::Gaussian, false))
    );
    let s = parse_ok(&with_down(
        "rate = \"10Mbps\"\nloss = 0\ncodel_target = \"1ms\"\nqueue = \"codel\"",
    ));
    assert_eq!(s.links[0].loss, LossSpec::None); // an integer is a probability too
}

#[test]
fn count_expands_flows() {
    let s = parse_ok(&with_flow(&format!(
        "name = \"bulk\"\ncount = 3\nsize = \"10MB\"\n{PATHS}"
    )));
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["bulk.1", "bulk.2", "bulk.3"]);
    assert!(s.flows.iter().all(|f| f.size_bytes == Some(10_000_000)));
    let s = parse_ok(&with_flow(&format!("size = \"inf\"\ncount = 1\n{PATHS}")));
    assert_eq!(s.flows[0].name, "flow0");
    assert_eq!(s.flows[0].size_bytes, None);
}

#[test]
fn overrides_apply_in_order_then_the_seed() {
    let overrides: Vec<(String, String)> = [
        ("flows.0.cc", "cubic"),
        ("links.down.rate", "5Mbps"),
        ("links.down.delay", "\"30ms\""),
        ("seed", "7"),
        ("flows.0.cc_params", "{ hystart = false }"),
        ("name", "sweep-point"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let text = with_flow(PATHS);
    let s = parse(&text, &options(&overrides, None)).unwrap();
    assert_eq!(s.flows[0].cc, "cubic");
    assert_eq!(
        s.links[0].serializer,
        Serializer::Rate {
            rate_bps: 5_000_000,
            changes: vec![]
        }
    );
    assert_eq!(s.links[0].delay_ns, 30 * NS_PER_MS);
    assert_eq!(s.seed, 7);
    assert_eq!(s.name, "sweep-point");
    assert_eq!(
        s.flows[0].cc_params.get("hystart"),
        Some(&toml::Value::Boolean(false))
    );
    let with_seed = ParseOptions {
        seed: Some(9),
        ..options(&overrides, None)
    };
    assert_eq!(parse(&text, &with_seed).unwrap().seed, 9);
}

#[test]
fn overrides_address_flows_by_name_and_all_at_once() {
    let text = format!(
        "{}\n[[flows]]\nname = \"a\"\npath = [\"down\"]\nack_path = [\"up\"]\ncount = 2\n\
         [[flows]]\nname = \"b\"\npath = [\"down\"]\nack_path = [\"up\"]\n",
        with_down("rate = \"10Mbps\"")
            .replace("[[flows]]\npath = [\"down\"]\nack_path = [\"up\"]\n", "")
    );
    let set = |pairs: &[(&str, &str)]| -> Result<Scenario, ScenarioError> {
        let o: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(&text, &options(&o, None))
    };
    let s = set(&[("flows.b.cc", "cubic")]).unwrap();
    let ccs: Vec<&str> = s.flows.iter().map(|f| f.cc.as_str()).collect();
    assert_eq!(ccs, ["reno", "reno", "cubic"]); // a.1, a.2 (count = 2), b
    let s = set(&[("flows.*.cc", "bbr"), ("flows.a.cc", "cubic")]).unwrap();
    let ccs: Vec<&str> = s.flows.iter().map(|f| f.cc.as_str()).collect();
    assert_eq!(ccs, ["cubic", "cubic", "bbr"]);
    let e = set(&[("flows.c.cc", "bbr")]).unwrap_err();
    assert_eq!(e.location, "--set flows.c.cc");
    assert!(
        e.message
            .contains("no entry named \"c\"; accepted: a name (a, b), an index (0 to 1) or *"),
        "{e}"
    );
}

#[test]
fn count_staggers_starts_or_takes_a_list() {
    let starts = |extra: &str| -> Result<Vec<u64>, ScenarioError> {
        let text = with_flow(&format!("{PATHS}\nname = \"f\"\ncount = 3\n{extra}"));
        parse(&text, &options(&[], None)).map(|s| s.flows.iter().map(|f| f.start_ns).collect())
    };
    assert_eq!(starts("").unwrap(), [0, 0, 0]);
    assert_eq!(
        starts("start = \"1s\"\nstagger = \"2s\"").unwrap(),
        [NS_PER_S, 3 * NS_PER_S, 5 * NS_PER_S]
    );
    assert_eq!(
        starts("start = [\"0s\", \"500ms\", \"4s\"]").unwrap(),
        [0, 500 * NS_PER_MS, 4 * NS_PER_S]
    );
    let e = starts("stagger = \"5s\"").unwrap_err(); // the third would start at 10 s = the end
    assert_eq!(e.location, "flows[0].stagger");
    let e = starts("start = [\"0s\", \"1s\"]").unwrap_err();
    assert!(e.message.contains("2 start times for count = 3"), "{e}");
    let e = starts("start = [\"0s\", \"1s\", \"11s\"]").unwrap_err();
    assert_eq!(e.location, "flows[0].start[2]");
    let e = starts("start = [\"0s\", \"1s\", \"2s\"]\nstagger = \"1s\"").unwrap_err();
    assert!(e.message.contains("not both"), "{e}");
}

#[test]
fn trace_files_resolve_relative_to_the_scenario() {
    let dir = scratch_dir("trace-files");
    std::fs::write(dir.join("small.down"), "0\n1\n1\n3\n4\n").unwrap();
    let text = with_down("trace = \"small.down\"");
    let s = parse(&text, &options(&[], Some(&dir))).unwrap();
    match &s.links[0].serializer {
        Serializer::Trace {
            opportunities_ms,
            period_ms,
            origin,
        } => {
            assert_eq!(opportunities_ms.as_slice(), &[0, 1, 1, 3, 4]);
            assert_eq!(*period_ms, 4);
            assert_eq!(Path::new(origin), dir.join("small.down"));
        }
        other => panic!("expected a trace, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn synthetic_traces_depend_on_seed_and_link_name() {
    let text = r#"duration = "20s"
[links.a]
trace = "synth:cellular"
[links.b]
trace = "synth:cellular"
[[flows]]
path = ["a"]
ack_path = ["b"]
"#;
    let ops = |s: &Scenario, i: usize| match &s.links[i].serializer {
        Serializer::Trace {
            opportunities_ms, ..
        } => opportunities_ms.as_ref().clone(),
        other => panic!("expected a trace, got {other:?}"),
    };
    let first = parse_ok(text);
    let again = parse_ok(text);
    assert_eq!(ops(&first, 0), ops(&again, 0));
    assert_ne!(
        ops(&first, 0),
        ops(&first, 1),
        "links must get different traces"
    );
    let reseeded = parse(
        text,
        &ParseOptions {
            seed: Some(2),
            ..options(&[], None)
        },
    )
    .unwrap();
    assert_ne!(ops(&first, 0), ops(&reseeded, 0));
    // Adding a flow or another link does not change a link's trace.
    let more = text.replace(
        "[[flows]]",
        "[links.c]\nrate = \"1Mbps\"\n[[flows]]\npath = [\"c\"]\nack_path = [\"b\"]\n[[flows]]",
    );
    assert_eq!(ops(&first, 0), ops(&parse_ok(&more), 0));
}

#[test]
fn synthetic_trace_params_reach_the_generator() {
    let s = parse_ok(&with_down(
        "trace = \"synth:constant\"\ntrace_params = { rate = \"24Mbps\" }",
    ));
    match &s.links[0].serializer {
        Serializer::Trace {
            opportunities_ms,
            period_ms,
            ..
        } => {
            assert_eq!(*period_ms, 10_000);
            assert_eq!(opportunities_ms.len(), 20_000);
        }
        other => panic!("expected a trace, got {other:?}"),
    }
}

#[test]
fn the_real_tmobile_trace_loads_when_present() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/mahimahi");
    if !traces.join("TMobile-LTE-short.down").exists() {
        println!("skipped: {} is absent", traces.display());
        return;
    }
    let text = with_down("trace = \"TMobile-LTE-short.down\"");
    let s = parse(&text, &options(&[], Some(&traces))).unwrap();
    match &s.links[0].serializer {
        Serializer::Trace {
            opportunities_ms,
            period_ms,
            ..
        } => {
            assert!(opportunities_ms.len() > 100_000);
            assert_eq!(Some(period_ms), opportunities_ms.last());
        }
        other => panic!("expected a trace, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Bad scenarios: each names the key and says what is accepted
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_top_level_key() {
    assert_error(
        &format!("colour = \"red\"\n{}", with_flow(PATHS)),
        "colour",
        "unknown key \"colour\"",
    );
    assert_error(
        &with_flow(PATHS).replace("duration", "durration"),
        "durration",
        "did you mean \"duration\"",
    );
}

#[test]
fn unknown_link_key_lists_the_accepted_ones() {
    assert_error(
        &with_down("rate = \"20Mbps\"\nbandwith = \"5Mbps\""),
        "links.down.bandwith",
        "accepted keys: rate, trace, trace_params, delay",
    );
}

#[test]
fn unknown_flow_key() {
    assert_error(
        &with_flow(&format!("{PATHS}\nalgorithm = \"bbr\"")),
        "flows[0].algorithm",
        "unknown key",
    );
}

#[test]
fn wrong_unit() {
    assert_error(
        &with_down("rate = \"20 furlongs\""),
        "links.down.rate",
        r#"expected a rate like "20Mbps" (units: bps, Kbps, Mbps, Gbps, kbit, mbit, gbit), got "20 furlongs""#,
    );
    assert_error(
        &with_down("rate = \"20Mbps\"\ndelay = \"20\""),
        "links.down.delay",
        "unit is missing",
    );
    assert_error(
        &with_down("rate = 20"),
        "links.down.rate",
        "quantities are strings with units",
    );
}

#[test]
fn negative_rate() {
    assert_error(
        &with_down("rate = \"-5Mbps\""),
        "links.down.rate",
        "negative",
    );
}

#[test]
fn zero_rate() {
    assert_error(
        &with_down("rate = \"0Mbps\""),
        "links.down.rate",
        "greater than 0",
    );
}

#[test]
fn missing_link_in_path() {
    assert_error(
        &with_flow("path = [\"down\", \"x\"]\nack_path = [\"up\"]"),
        "flows[0].path[1]",
        "unknown link \"x\"; links are: down, up",
    );
}

#[test]
fn empty_path() {
    assert_error(
        &with_flow("path = []\nack_path = [\"up\"]"),
        "flows[0].path",
        "at least one link",
    );
    assert_error(
        &with_flow("path = [\"down\"]"),
        "flows[0].ack_path",
        "missing required key",
    );
}

#[test]
fn link_twice_in_a_path() {
    assert_error(
        &with_flow("path = [\"down\", \"down\"]\nack_path = [\"up\"]"),
        "flows[0].path[1]",
        "appears twice",
    );
}

#[test]
fn both_rate_and_trace() {
    assert_error(
        &with_down("rate = \"20Mbps\"\ntrace = \"synth:constant\""),
        "links.down.trace",
        "rate and trace are both given",
    );
}

#[test]
fn neither_rate_nor_trace() {
    assert_error(
        &with_down("delay = \"5ms\""),
        "links.down",
        "exactly one of rate, rate_cycle or trace",
    );
}

#[test]
fn unknown_cc_lists_the_known_ones() {
    assert_error(
        &with_flow(&format!("cc = \"vegas\"\n{PATHS}")),
        "flows[0].cc",
        "unknown congestion control \"vegas\"; known: reno, cubic, bbr",
    );
}

#[test]
fn count_zero() {
    assert_error(
        &with_flow(&format!("count = 0\n{PATHS}")),
        "flows[0].count",
        "whole number ≥ 1",
    );
    assert_error(
        &with_flow(&format!("count = 2.0\n{PATHS}")),
        "flows[0].count",
        "whole number ≥ 1",
    );
}

#[test]
fn duration_missing_or_zero() {
    assert_error(
        &with_flow(PATHS).replace("duration = \"10s\"", ""),
        "duration",
        "missing required key \"duration\"",
    );
    assert_error(
        &with_flow(PATHS).replace("10s", "0s"),
        "duration",
        "greater than 0",
    );
}

#[test]
fn loss_above_one() {
    assert_error(
        &with_down("rate = \"20Mbps\"\nloss = 1.5"),
        "links.down.loss",
        "probability in [0, 1], got the number 1.5",
    );
    assert_error(
        &with_down("rate = \"20Mbps\"\nloss = nan"),
        "links.down.loss",
        "probability in [0, 1]",
    );
}

#[test]
fn bad_loss_models() {
    assert_error(
        &with_down(
            "rate = \"20Mbps\"\nloss = { model = \"gilbert-elliott\", p_good_to_bad = 0.1 }",
        ),
        "links.down.loss.p_bad_to_good",
        "missing required key",
    );
    assert_error(
        &with_down("rate = \"20Mbps\"\nloss = { model = \"markov\" }"),
        "links.down.loss.model",
        "accepted: bernoulli, gilbert-elliott",
    );
    assert_error(
        &with_down("rate = \"20Mbps\"\nloss = { model = \"bernoulli\", p = 0.1, q = 0.2 }"),
        "links.down.loss.q",
        "accepted keys: model, p",
    );
    assert_error(
        &with_down("rate = \"20Mbps\"\nloss = \"1%\""),
        "links.down.loss",
        "gilbert-elliott",
    );
}

#[test]
fn bad_jitter_distribution() {
    assert_error(
        &with_down("rate = \"20Mbps\"\njitter = \"5ms\"\njitter_distribution = \"pareto\""),
        "links.down.jitter_distribution",
        "accepted: gaussian, uniform",
    );
    assert_error(
        &with_down("rate = \"20Mbps\"\njitter_reorder = true"),
        "links.down.jitter_reorder",
        "only with jitter",
    );
}

#[test]
fn overlapping_outages() {
    assert_error(
        &with_down("rate = \"20Mbps\"\noutages = [{ at = \"1s\", for = \"2s\" }, { at = \"2s\", for = \"1s\" }]"),
        "links.down.outages[1]",
        "overlaps outages[0] ([1s, 3s))",
    );
    assert_error(
        &with_down("rate = \"20Mbps\"\noutages = [{ at = \"5s\", for = \"1s\" }, { at = \"1s\", for = \"20s\" }]"),
        "links.down.outages[1]",
        "overlaps outages[0]",
    );
    assert_error(
        &with_down("rate = \"20Mbps\"\noutages = [{ at = \"5s\", for = \"0s\" }]"),
        "links.down.outages[0].for",
        "greater than 0",
    );
}

#[test]
fn rate_steps_not_increasing() {
    assert_error(
        &with_down(
            "rate = \"20Mbps\"\nrate_steps = [{ at = \"1s\", rate = \"5Mbps\" }, { at = \"2s\", rate = \"6Mbps\" }, { at = \"2s\", rate = \"7Mbps\" }]",
        ),
        "links.down.rate_steps[2].at",
        "strictly increasing",
    );
    assert_error(
        &with_down("rate = \"20Mbps\"\nrate_steps = [{ at = \"0s\", rate = \"5Mbps\" }]"),
        "links.down.rate_steps[0].at",
        "greater than 0",
    );
}

#[test]
fn rate_steps_need_a_fixed_rate() {
    assert_error(
        &with_down("trace = \"synth:constant\"\nrate_steps = [{ at = \"1s\", rate = \"5Mbps\" }]"),
        "links.down.rate_steps",
        "only to a fixed-rate link",
    );
}

#[test]
fn bad_rate_cycle() {
    assert_error(
        &with_down("rate_cycle = { period = \"2s\", rates = [\"20Mbps\", \"0Mbps\"] }"),
        "links.down.rate_cycle.rates[1]",
        "greater than 0",
    );
    assert_error(
        &with_down("rate_cycle = { period = \"1ns\", rates = [\"20Mbps\", \"10Mbps\"] }"),
        "links.down.rate_cycle.period",
        "at most",
    );
    assert_error(
        &with_down("rate_cycle = { rates = [\"20Mbps\"] }"),
        "links.down.rate_cycle.period",
        "missing required key",
    );
}

#[test]
fn unreadable_trace_file() {
    let dir = scratch_dir("unreadable");
    assert_error_with(
        &with_down("trace = \"missing.down\""),
        &[],
        Some(&dir),
        "links.down.trace",
        "cannot read",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_trace_files_name_file_and_line() {
    let dir = scratch_dir("bad-traces");
    let cases = [
        ("empty.down", "\n", "no timestamps"),
        (
            "unsorted.down",
            "1\n5\n3\n",
            "line 3: timestamp 3 is smaller than the one before it (5)",
        ),
        (
            "words.down",
            "1\nabc\n",
            "line 2: expected a non-negative integer",
        ),
        ("zero.down", "0\n0\n", "period of zero"),
    ];
    for (file, contents, phrase) in cases {
        std::fs::write(dir.join(file), contents).unwrap();
        let e = parse_err_with(&with_down(&format!("trace = \"{file}\"")), &[], Some(&dir));
        assert_eq!(e.location, "links.down.trace", "{e}");
        assert!(
            e.message.contains(phrase) && e.message.contains(file),
            "{file}: {e}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn toml_syntax_error_reports_the_line() {
    let text = "duration = \"10s\"\n\n[links.down]\nrate = \"20Mbps\"\ndelay = 20ms\n";
    assert_error(text, "line 5", "invalid TOML");
    let text = "duration = \"10s\"\nduration = \"20s\"\n";
    assert_error(text, "line 2", "duplicate key");
}

#[test]
fn set_to_an_unknown_key_fails_validation() {
    assert_error_with(
        &with_flow(PATHS),
        &[("links.down.bandwidth", "5Mbps")],
        None,
        "links.down.bandwidth",
        "unknown key",
    );
    assert_error_with(
        &with_flow(PATHS),
        &[("links.down.rate", "5 parsecs")],
        None,
        "links.down.rate",
        "expected a rate",
    );
    // A new link created by --set needs a serializer like any other.
    assert_error_with(
        &with_flow(PATHS),
        &[("links.extra.delay", "1ms")],
        None,
        "links.extra",
        "exactly one of",
    );
}

#[test]
fn set_with_an_index_out_of_range() {
    assert_error_with(
        &with_flow(PATHS),
        &[("flows.3.cc", "bbr")],
        None,
        "--set flows.3.cc",
        "index 3 is out of range: flows has 1 entries",
    );
    assert_error_with(
        &with_flow(PATHS),
        &[("flows.first.cc", "bbr")],
        None,
        "--set flows.first.cc",
        "index it with a number",
    );
    assert_error_with(
        &with_flow(PATHS),
        &[("duration.x", "1")],
        None,
        "--set duration.x",
        "has no key \"x\"",
    );
    assert_error_with(
        &with_flow(PATHS),
        &[("links..rate", "1")],
        None,
        "--set links..rate",
        "dotted key",
    );
}

#[test]
fn duplicate_flow_names() {
    let text = format!(
        "{}\n[[flows]]\nname = \"flow0\"\n{PATHS}\n",
        with_flow(PATHS)
    );
    assert_error(
        &text,
        "flows[1].name",
        "duplicate flow name \"flow0\": flows[0] has it too",
    );
    let text = format!(
        "{}\n[[flows]]\nname = \"a.2\"\n{PATHS}\n",
        with_flow(&format!("name = \"a\"\ncount = 2\n{PATHS}"))
    );
    assert_error(&text, "flows[1].name", "duplicate flow name \"a.2\"");
}

#[test]
fn start_at_or_after_the_end() {
    assert_error(
        &with_flow(&format!("start = \"10s\"\n{PATHS}")),
        "flows[0].start",
        "never send",
    );
}

#[test]
fn bad_sample_interval() {
    assert_error(
        &format!("sample_interval = \"11s\"\n{}", with_flow(PATHS)),
        "sample_interval",
        "must not exceed the duration",
    );
    assert_error(
        &format!("sample_interval = \"0ms\"\n{}", with_flow(PATHS)),
        "sample_interval",
        "greater than 0",
    );
}

#[test]
fn bad_synthetic_traces() {
    assert_error(
        &with_down("trace = \"synth:cellular\"\ntrace_params = { median = \"fast\" }"),
        "links.down.trace_params.median",
        "expected a rate",
    );
    assert_error(
        &with_down("trace = \"synth:wifi\""),
        "links.down.trace",
        "kinds are: constant, steps, cellular",
    );
    assert_error(
        &with_down("rate = \"5Mbps\"\ntrace_params = { rate = \"5Mbps\" }"),
        "links.down.trace_params",
        "only to a synthetic trace",
    );
}

#[test]
fn bad_queues() {
    assert_error(
        &with_down("rate = \"5Mbps\"\nqueue = \"red\""),
        "links.down.queue",
        "accepted: droptail, codel, fq_codel, pie",
    );
    assert_error(
        &with_down("rate = \"5Mbps\"\nbuffer = \"0pkt\""),
        "links.down.buffer",
        "greater than 0",
    );
    assert_error(
        &with_down("rate = \"5Mbps\"\nbuffer = \"10 packets\""),
        "links.down.buffer",
        "pkt, pkts",
    );
    assert_error(
        &with_down("rate = \"5Mbps\"\ncodel_target = \"1ms\""),
        "links.down.codel_target",
        "does not apply to queue = \"droptail\"",
    );
    assert_error(
        &with_down("rate = \"5Mbps\"\nqueue = \"codel\"\npie_target = \"10ms\""),
        "links.down.pie_target",
        "does not apply to queue = \"codel\"",
    );
    assert_error(
        &with_down("rate = \"5Mbps\"\nqueue = \"fq_codel\"\nfq_quantum = 100"),
        "links.down.fq_quantum",
        "accepted: 256 to 1048576",
    );
    assert_error(
        &with_down("rate = \"5Mbps\"\nqueue = \"pie\"\npie_alpha = 1.5"),
        "links.down.pie_alpha",
        "accepted: 0 to 32",
    );
}

#[test]
fn fq_codel_and_pie_take_linux_defaults() {
    let s = parse_ok(&with_down("rate = \"5Mbps\"\nqueue = \"fq_codel\""));
    assert_eq!(
        s.links[0].queue,
        QueueSpec::FqCodel {
            limit: QueueLimit::Packets(10240),
            target_ns: 5 * NS_PER_MS,
            interval_ns: 100 * NS_PER_MS,
            flows: 1024,
            quantum: 1514
        }
    );
    let s = parse_ok(&with_down(
        "rate = \"5Mbps\"\nqueue = \"pie\"\nbuffer = \"200pkt\"\npie_target = \"20ms\"",
    ));
    assert_eq!(
        s.links[0].queue,
        QueueSpec::Pie {
            limit: QueueLimit::Packets(200),
            target_ns: 20 * NS_PER_MS,
            tupdate_ns: 15 * NS_PER_MS,
            alpha: 2,
            beta: 20,
            max_burst_ns: 150 * NS_PER_MS
        }
    );
}

#[test]
fn bad_shapes() {
    assert_error(
        "duration = \"1s\"\n[[links]]\nrate = \"1Mbps\"\n[[flows]]\npath = [\"down\"]\nack_path = [\"down\"]\n",
        "links",
        "a table of links like [links.down]",
    );
    assert_error(
        "duration = \"1s\"\n[links.a]\nrate = \"1Mbps\"\n",
        "flows",
        "missing required key \"flows\"",
    );
    assert_error(
        "duration = \"1s\"\nflows = []\n[links.a]\nrate = \"1Mbps\"\n",
        "flows",
        "at least one flow",
    );
    assert_error(
        "duration = \"1s\"\nlinks = {}\n[[flows]]\npath = [\"a\"]\nack_path = [\"a\"]\n",
        "links",
        "at least one link",
    );
    assert_error(
        &format!("seed = -1\n{}", with_flow(PATHS)),
        "seed",
        "whole number ≥ 0",
    );
    assert_error(
        &with_flow(&format!("size = \"0B\"\n{PATHS}")),
        "flows[0].size",
        "greater than 0",
    );
    assert_error(
        &with_flow(&format!("size = 100\n{PATHS}")),
        "flows[0].size",
        "or \"inf\"",
    );
    assert_error(
        &with_flow(&format!("name = \"\"\n{PATHS}")),
        "flows[0].name",
        "must not be empty",
    );
    assert_error(
        &with_flow("path = \"down\"\nack_path = [\"up\"]"),
        "flows[0].path",
        "array of link names",
    );
}

// ---------------------------------------------------------------------------------------------
// Multipath flows
// ---------------------------------------------------------------------------------------------

/// Links down, up, down2, up2 and one flow with `flow` as its body.
fn with_mp_flow(flow: &str) -> String {
    format!(
        r#"duration = "10s"

[links.down]
rate = "20Mbps"
[links.up]
rate = "20Mbps"
[links.down2]
rate = "10Mbps"
[links.up2]
rate = "10Mbps"

[[flows]]
{flow}
"#
    )
}

const MP_PATHS: &str =
    r#"paths = [{ path = ["down"], ack_path = ["up"] }, { path = ["down2"], ack_path = ["up2"] }]"#;

#[test]
fn multipath_flow_parses_with_defaults() {
    let s = parse_ok(&with_mp_flow(MP_PATHS));
    let f = &s.flows[0];
    let mp = f.multipath.as_ref().expect("multipath");
    assert_eq!(mp.scheduler, "minrtt");
    assert_eq!(mp.coupling, "auto");
    assert_eq!(
        mp.paths,
        vec![
            SubflowPath {
                path: hops(&[0]),
                ack_path: hops(&[1])
            },
            SubflowPath {
                path: hops(&[2]),
                ack_path: hops(&[3])
            }
        ]
    );
    assert_eq!(
        (f.path.clone(), f.ack_path.clone()),
        (hops(&[0]), hops(&[1])),
        "path mirrors subflow 0"
    );
    let s = parse_ok(&with_mp_flow(&format!(
        "{MP_PATHS}\nscheduler = \"blest\"\ncount = 2"
    )));
    assert_eq!(s.flows.len(), 2);
    assert_eq!(s.flows[1].multipath.as_ref().unwrap().scheduler, "blest");
    assert!(parse_ok(&with_flow(PATHS)).flows[0].multipath.is_none());
    assert!(mp.scheduler_params.is_empty());
    // scheduler_params is kept as written; the scheduler checks it when the world is built.
    let s = parse_ok(&with_mp_flow(&format!(
        "{MP_PATHS}\nscheduler = \"blest\"\nscheduler_params = {{ rtt = \"rtprop\", cap = 2 }}"
    )));
    let params = &s.flows[0].multipath.as_ref().unwrap().scheduler_params;
    assert_eq!(params.get("rtt").and_then(|v| v.as_str()), Some("rtprop"));
    assert_eq!(params.get("cap").and_then(|v| v.as_integer()), Some(2));
}

#[test]
fn path_costs_are_given_on_every_path_or_on_none() {
    // seed 003's a_s: WiFi 1, LTE 10 per Mbit/s.
    let costed = r#"paths = [{ path = ["down"], ack_path = ["up"], cost = 1 }, { path = ["down2"], ack_path = ["up2"], cost = 10.5 }]"#;
    let s = parse_ok(&with_mp_flow(costed));
    assert_eq!(
        s.flows[0].multipath.as_ref().unwrap().costs,
        Some(vec![1.0, 10.5])
    );
    assert_eq!(
        parse_ok(&with_mp_flow(MP_PATHS)).flows[0]
            .multipath
            .as_ref()
            .unwrap()
            .costs,
        None
    );
    assert_error(
        &with_mp_flow(
            r#"paths = [{ path = ["down"], ack_path = ["up"], cost = 1 }, { path = ["down2"], ack_path = ["up2"] }]"#,
        ),
        "flows[0].paths[1].cost",
        "missing: give `cost` on every paths entry or on none",
    );
    assert_error(
        &with_mp_flow(
            r#"paths = [{ path = ["down"], ack_path = ["up"], cost = -1 }, { path = ["down2"], ack_path = ["up2"], cost = 1 }]"#,
        ),
        "flows[0].paths[0].cost",
        "-1 is out of range; accepted: a number from 0 to 1e12",
    );
}

#[test]
fn a_video_may_name_its_required_packet_delay() {
    let s = parse_ok(&with_flow(&format!(
        "workload = \"video\"\nbitrate = \"4Mbps\"\nrequired_delay = \"300ms\"\n{PATHS}"
    )));
    let Workload::Video(v) = &s.flows[0].workload else {
        panic!("a video")
    };
    assert_eq!(v.required_delay_ns, Some(300 * NS_PER_MS));
    assert_error(
        &with_flow(&format!(
            "workload = \"video\"\nbitrate = \"4Mbps\"\nrequired_delay = \"0s\"\n{PATHS}"
        )),
        "flows[0].required_delay",
        "",
    );
}

#[test]
fn multipath_errors_name_the_key() {
    assert_error(
        &with_mp_flow(&format!("{MP_PATHS}\nscheduler = \"fastest\"")),
        "flows[0].scheduler",
        "unknown scheduler \"fastest\"; accepted: minrtt, blest",
    );
    assert_error(
        &with_mp_flow(&format!("{MP_PATHS}\ncoupling = \"lia\"")),
        "flows[0].coupling",
        "unknown coupling \"lia\"; accepted: auto, uncoupled, connection",
    );
    assert_error(
        &with_mp_flow(&format!("{MP_PATHS}\n{PATHS}")),
        "flows[0].path",
        "in \"paths\" only",
    );
    assert_error(
        &with_flow(&format!("{PATHS}\nscheduler = \"minrtt\"")),
        "flows[0].scheduler",
        "multipath flows only",
    );
    assert_error(
        &with_flow(&format!("{PATHS}\nscheduler_params = {{ rtt = \"srtt\" }}")),
        "flows[0].scheduler_params",
        "multipath flows only",
    );
    assert_error(
        &with_mp_flow(&format!("{MP_PATHS}\nscheduler_params = \"srtt\"")),
        "flows[0].scheduler_params",
        "expected a table like { rtt = \"rtprop\" }",
    );
    assert_error(
        &with_mp_flow("paths = []"),
        "flows[0].paths",
        "1 to 20 paths",
    );
    assert_error(
        &with_mp_flow("paths = \"down\""),
        "flows[0].paths",
        "expected an array of tables",
    );
    assert_error(
        &with_mp_flow(
            r#"paths = [{ path = ["down"], ack_path = ["up"] }, { path = ["nowhere"], ack_path = ["up2"] }]"#,
        ),
        "flows[0].paths[1].path[0]",
        "unknown link \"nowhere\"",
    );
    assert_error(
        &with_mp_flow(r#"paths = [{ path = ["down"], ack_path = ["up"] }, { path = ["down2"] }]"#),
        "flows[0].paths[1].ack_path",
        "missing required key",
    );
    assert_error(
        &with_mp_flow(r#"paths = [{ path = ["down"], ack_path = ["up"], rate = 1 }]"#),
        "flows[0].paths[0].rate",
        "",
    );
    assert_error(
        &with_mp_flow(r#"paths = [{ path = ["down"], ack_path = ["up"], subflows = 0 }]"#),
        "flows[0].paths[0].subflows",
        "expected a whole number ≥ 1",
    );
    assert_error(
        &with_mp_flow(
            r#"paths = [{ path = ["down"], ack_path = ["up"], subflows = 19 }, { path = ["down2"], ack_path = ["up2"], subflows = 2 }]"#,
        ),
        "flows[0].paths[1].subflows",
        "more than 20 subflows",
    );
    assert_error(
        &with_mp_flow(&format!(
            "paths = [{}]",
            vec![r#"{ path = ["down"], ack_path = ["up"] }"#; 21].join(", ")
        )),
        "flows[0].paths",
        "got 21",
    );
    assert_error(
        &with_mp_flow(
            r#"paths = [{ path = ["down"], ack_path = ["up"], subflows = 2, cost = 1 }, { path = ["down2"], ack_path = ["up2"] }]"#,
        ),
        "flows[0].paths[1].cost",
        "on every paths entry or on none",
    );
}

/// Seed 003 Ch. 4 opens up to 20 subflows on one path: entries may repeat links, and
/// `subflows = n` opens n subflows over one entry's links (costs copied to each).
#[test]
fn several_subflows_may_share_one_path() {
    let same = parse_ok(&with_mp_flow(
        r#"paths = [{ path = ["down"], ack_path = ["up"] }, { path = ["down"], ack_path = ["up2"] }]"#,
    ));
    let mp = same.flows[0].multipath.as_ref().expect("multipath");
    assert_eq!(mp.paths.len(), 2);
    assert_eq!(mp.paths[0].path, mp.paths[1].path);
    let twenty = parse_ok(&with_mp_flow(
        r#"paths = [{ path = ["down"], ack_path = ["up"], subflows = 18, cost = 2 }, { path = ["down2"], ack_path = ["up2"], subflows = 2, cost = 1 }]"#,
    ));
    let mp = twenty.flows[0].multipath.as_ref().expect("multipath");
    assert_eq!(mp.paths.len(), 20);
    assert!(mp.paths[..18].iter().all(|p| p.path == hops(&[0]) && p.ack_path == hops(&[1])));
    assert!(mp.paths[18..].iter().all(|p| p.path == hops(&[2]) && p.ack_path == hops(&[3])));
    let mut costs = vec![2.0; 18];
    costs.extend([1.0, 1.0]);
    assert_eq!(mp.costs.as_deref(), Some(&costs[..]));
}

#[test]
fn multipath_overrides_reach_into_paths() {
    let text = with_mp_flow(MP_PATHS);
    let overrides = vec![(
        "flows.0.paths.1.path".to_string(),
        r#"["nowhere"]"#.to_string(),
    )];
    let e = parse(&text, &options(&overrides, None)).unwrap_err();
    assert_eq!(e.location, "flows[0].paths[1].path[0]");
}

#[test]
fn receive_buffer_modes_and_their_errors() {
    let s = parse_ok(&with_flow(&format!("{PATHS}\nrcv_buffer = \"fixed\"")));
    assert!(!s.flows[0].rcv_autotune);
    let s = parse_ok(&with_flow(&format!(
        "{PATHS}\nrcv_buffer = \"auto\"\nrcv_truesize = \"4KiB\""
    )));
    assert!(s.flows[0].rcv_autotune);
    assert_eq!(s.flows[0].rcv_truesize, 4096);
    // A multipath flow's window is the connection's: fixed by default, "auto" refused.
    assert!(!parse_ok(&with_mp_flow(MP_PATHS)).flows[0].rcv_autotune);
    assert_error(
        &with_mp_flow(&format!("{MP_PATHS}\nrcv_buffer = \"auto\"")),
        "flows[0].rcv_buffer",
        "only \"fixed\" is accepted here",
    );
    assert_error(
        &with_flow(&format!("{PATHS}\nrcv_buffer = \"big\"")),
        "flows[0].rcv_buffer",
        "unknown receive-buffer mode \"big\"; accepted: auto, fixed",
    );
    assert_error(
        &with_flow(&format!("{PATHS}\nrcv_truesize = \"1000B\"")),
        "flows[0].rcv_truesize",
        "accepted 1449 B to 1 MiB",
    );
}

#[test]
fn link_kind_defaults_to_p2p_and_unknown_kinds_list_the_known_ones() {
    let s = parse_ok(&with_down("rate = \"10Mbps\""));
    assert_eq!(s.links[0].kind, "p2p");
    assert_error(
        &with_down("kind = \"wifi\"\nrate = \"10Mbps\""),
        "links.down.kind",
        "unknown link kind \"wifi\"; known: p2p",
    );
}

fn with_action(action: &str) -> String {
    format!(
        "{}\n[[actions]]\n{action}\n",
        with_flow(&format!("name = \"a\"\n{PATHS}"))
    )
}

#[test]
fn actions_parse_sorted_by_time_with_their_targets() {
    let text = format!(
        "{}\n[[actions]]\nat = \"5s\"\nlink = \"down\"\nrate = \"5Mbps\"\n\n[[actions]]\nat = \"2s\"\nflow = \"a\"\ncc = \"bbr\"\nhandoff = \"set\"\ncwnd = 40\n",
        with_flow(&format!("name = \"a\"\n{PATHS}"))
    );
    let s = parse_ok(&text);
    assert_eq!(s.actions.len(), 2);
    assert_eq!(s.actions[0].at_ns, 2_000_000_000);
    assert_eq!(
        s.actions[0].change,
        Change::Cc {
            name: "bbr".into(),
            params: toml::Table::new(),
            handoff: HandoffSpec::Set {
                cwnd: 40,
                ssthresh: None
            }
        }
    );
    assert_eq!(s.actions[1].target, ActionTarget::Link(0));
    assert_eq!(s.actions[1].change, Change::LinkRate(5_000_000));
}

#[test]
fn bad_actions_name_their_key() {
    for (action, location, message) in [
        (
            "at = \"1s\"\nflow = \"b\"\ncc = \"bbr\"",
            "actions[0].flow",
            "unknown flow \"b\"",
        ),
        (
            "at = \"1s\"\nflow = \"a\"\ncc = \"vegas\"",
            "actions[0].cc",
            "unknown congestion control",
        ),
        (
            "at = \"1s\"\nflow = \"a\"\ncc = \"bbr\"\ncwnd = 4",
            "actions[0].cwnd",
            "goes with handoff = \"set\"",
        ),
        (
            "at = \"1s\"\nflow = \"a\"\ncc = \"bbr\"\nhandoff = \"set\"",
            "actions[0].cwnd",
            "needs cwnd",
        ),
        (
            "at = \"1s\"\nflow = \"a\"\ncc = \"bbr\"\nrwnd = \"1MB\"",
            "actions[0].rwnd",
            "one change per action",
        ),
        ("at = \"1s\"\nflow = \"a\"", "actions[0]", "changes nothing"),
        (
            "at = \"1s\"\nflow = \"a\"\nrate = \"1Mbps\"",
            "actions[0].rate",
            "changes a link",
        ),
        (
            "at = \"1s\"\nflow = \"a\"\nremove = true",
            "actions[0].remove",
            "multipath flows only",
        ),
        (
            "at = \"11s\"\nflow = \"a\"\ncc = \"bbr\"",
            "actions[0].at",
            "after the end of the run",
        ),
        (
            "flow = \"a\"\ncc = \"bbr\"",
            "actions[0].at",
            "missing required key \"at\"",
        ),
        (
            "at = \"1s\"\nlink = \"down\"\ndelay = 5",
            "actions[0].delay",
            "expected a time",
        ),
    ] {
        assert_error(&with_action(action), location, message);
    }
}

#[test]
fn components_need_a_known_kind_and_keep_their_keys() {
    let opts_known = |text: &str| {
        let mut o = options(&[], None);
        o.known_controllers = &["features"];
        rove_scenario::parse(text, &o)
    };
    let base = with_flow(&format!("name = \"a\"\n{PATHS}"));
    let s = opts_known(&format!(
        "{base}\n[[controllers]]\nkind = \"features\"\nevery = \"1s\"\n"
    ))
    .unwrap();
    assert_eq!(s.controllers[0].kind, "features");
    assert_eq!(s.controllers[0].location, "controllers[0]");
    assert!(
        s.controllers[0].params.contains_key("every")
            && !s.controllers[0].params.contains_key("kind")
    );
    let e = opts_known(&format!("{base}\n[[controllers]]\nkind = \"drwa\"\n")).unwrap_err();
    assert_eq!(e.location, "controllers[0].kind");
    assert!(e.message.contains("known: features"), "{}", e.message);
}

#[test]
fn unresponsive_workloads_parse_and_reject_tcp_keys() {
    let s = parse_ok(&with_flow(
        "name = \"flood\"\nworkload = \"onoff\"\nrate = \"8Mbps\"\non = \"1s\"\noff = \"500ms\"\npath = [\"down\"]",
    ));
    assert_eq!(
        s.flows[0].workload,
        Workload::Unresponsive {
            process: Process::OnOff {
                on_ns: NS_PER_S,
                off_ns: NS_PER_S / 2
            },
            rate_bps: 8_000_000,
            packet_bytes: 1500
        }
    );
    assert_eq!(s.flows[0].cc, "onoff");
    assert!(s.flows[0].ack_path.is_empty());
    for (flow, location, message) in [
        (
            "workload = \"cbr\"\nrate = \"1Mbps\"\ncc = \"reno\"\npath = [\"down\"]",
            "flows[0].cc",
            "belongs to a TCP flow",
        ),
        (
            "workload = \"cbr\"\nrate = \"1Mbps\"\nPATHS",
            "flows[0].ack_path",
            "belongs to a TCP flow",
        ),
        (
            "workload = \"cbr\"\npath = [\"down\"]",
            "flows[0].rate",
            "missing required key \"rate\"",
        ),
        (
            "workload = \"udp\"\npath = [\"down\"]",
            "flows[0].workload",
            "accepted: bulk, cbr, poisson, onoff",
        ),
        (
            "workload = \"cbr\"\nrate = \"1Mbps\"\non = \"1s\"\npath = [\"down\"]",
            "flows[0].on",
            "\"on\" belongs to workload = \"onoff\", not \"cbr\"",
        ),
        (
            "rate = \"1Mbps\"\nPATHS",
            "flows[0].rate",
            "\"rate\" belongs to workload = \"cbr\", \"poisson\" or \"onoff\", not \"bulk\"",
        ),
        (
            "workload = \"cbr\"\nrate = \"1Mbps\"\npacket_size = \"10B\"\npath = [\"down\"]",
            "flows[0].packet_size",
            "29 B to 65535 B",
        ),
    ] {
        assert_error(&with_flow(&flow.replace("PATHS", PATHS)), location, message);
    }
}

#[test]
fn video_and_request_workloads_parse_with_their_defaults_and_reject_other_keys() {
    let s = parse_ok(&with_flow(&format!(
        "workload = \"video\"\nbitrate = \"4Mbps\"\ngop = 10\n{PATHS}"
    )));
    assert_eq!(
        s.flows[0].workload,
        Workload::Video(rove_scenario::VideoSpec {
            fps: 30.0,
            bitrate_bps: 4_000_000,
            gop: 10,
            i_to_p: 5.0,
            b_frames: 0,
            b_to_p: 0.5,
            scene_spread: 0.0,
            scene_ns: 5 * NS_PER_S,
            frame_jitter: 0.0,
            deadline_ns: 150 * NS_PER_MS,
            required_delay_ns: None,
        })
    );
    assert!(s.flows[0].slow_start_after_idle);
    let s = parse_ok(&with_flow(&format!(
        "workload = \"video\"\nbitrate = \"4Mbps\"\nb_frames = 2\nb_to_p = 0.3\nscene_spread = 0.5\nscene = \"2s\"\n{PATHS}"
    )));
    let Workload::Video(v) = &s.flows[0].workload else {
        panic!("{:?}", s.flows[0].workload)
    };
    assert_eq!(
        (v.gop, v.b_frames, v.b_to_p, v.scene_spread, v.scene_ns),
        (12, 2, 0.3, 0.5, 2 * NS_PER_S)
    );
    let s = parse_ok(&with_flow(&format!(
        "workload = \"requests\"\nsizes = [\"10KB\", \"1MB\"]\nthink = \"1s\"\nthink_dist = \"exponential\"\nrequests = 4\nslow_start_after_idle = false\n{PATHS}"
    )));
    assert_eq!(
        s.flows[0].workload,
        Workload::Requests(rove_scenario::RequestSpec {
            sizes: rove_scenario::ResponseSizes::List {
                bytes: vec![10_000, 1_000_000],
                random: false
            },
            think: rove_scenario::ThinkTime::Exponential(NS_PER_S),
            max_requests: Some(4),
        })
    );
    assert!(!s.flows[0].slow_start_after_idle);
    for (flow, location, message) in [
        (
            "workload = \"video\"\nPATHS",
            "flows[0].bitrate",
            "missing required key \"bitrate\"",
        ),
        (
            "fps = 30\nPATHS",
            "flows[0].fps",
            "\"fps\" belongs to workload = \"video\", not \"bulk\"",
        ),
        (
            "workload = \"video\"\nbitrate = \"1Mbps\"\nthink = \"1s\"\nPATHS",
            "flows[0].think",
            "belongs to workload = \"requests\"",
        ),
        (
            "workload = \"video\"\nbitrate = \"1Mbps\"\nframe_jitter = 1.5\nPATHS",
            "flows[0].frame_jitter",
            "accepted: 0 <= frame_jitter < 1",
        ),
        (
            "workload = \"video\"\nbitrate = \"1Mbps\"\ngop = 3\nb_frames = 3\nPATHS",
            "flows[0].b_frames",
            "accepted: 0 <= b_frames < gop",
        ),
        (
            "workload = \"video\"\nbitrate = \"1Mbps\"\nb_to_p = 0\nPATHS",
            "flows[0].b_to_p",
            "accepted: 0 < b_to_p <= 1000",
        ),
        (
            "workload = \"video\"\nbitrate = \"1Mbps\"\nscene_spread = 1\nPATHS",
            "flows[0].scene_spread",
            "accepted: 0 <= scene_spread < 1",
        ),
        (
            "workload = \"video\"\nbitrate = \"1Mbps\"\nscene = \"0s\"\nPATHS",
            "flows[0].scene",
            "",
        ),
        (
            "workload = \"requests\"\nPATHS",
            "flows[0].sizes",
            "missing required key \"sizes\"",
        ),
        (
            "workload = \"requests\"\nsize = \"1MB\"\nPATHS",
            "flows[0].size",
            "sizes are its responses",
        ),
        (
            "workload = \"requests\"\nsize_dist = \"weibull\"\nPATHS",
            "flows[0].size_dist",
            "accepted: lognormal, pareto",
        ),
        (
            "workload = \"requests\"\nsize_dist = \"lognormal\"\nsize_median = \"100KB\"\nsize_alpha = 1.2\nPATHS",
            "flows[0].size_alpha",
            "belongs to size_dist = \"pareto\"",
        ),
        (
            "workload = \"requests\"\nsizes = [\"1KB\"]\nsize_dist = \"pareto\"\nsize_min = \"1KB\"\nsize_alpha = 1.2\nPATHS",
            "flows[0].sizes",
            "either a sizes list or a size_dist",
        ),
        (
            "workload = \"requests\"\nsizes = [\"1KB\"]\nthink_dist = \"gamma\"\nPATHS",
            "flows[0].think_dist",
            "accepted: fixed, exponential",
        ),
        (
            "slow_start_after_idle = true\nPATHS",
            "flows[0].slow_start_after_idle",
            "a bulk flow is never idle",
        ),
        (
            "workload = \"video\"\nbitrate = \"1Mbps\"\nfsp = 30\nPATHS",
            "flows[0].fsp",
            "did you mean \"fps\"",
        ),
    ] {
        assert_error(&with_flow(&flow.replace("PATHS", PATHS)), location, message);
    }
}

#[test]
fn measure_windows_parse_and_bad_ones_name_their_key() {
    let flow = format!("name = \"a\"\n{PATHS}");
    let s = parse_ok(&with_flow(&flow));
    assert_eq!(s.measure_ns, (0, 10 * NS_PER_S), "the whole run by default");
    let s = parse_ok(&format!("measure = [\"2s\", \"8s\"]\n{}", with_flow(&flow)));
    assert_eq!(s.measure_ns, (2 * NS_PER_S, 8 * NS_PER_S));
    for (measure, location, message) in [
        ("[\"8s\", \"2s\"]", "measure", "must open before it closes"),
        (
            "[\"2s\", \"11s\"]",
            "measure[1]",
            "after the end of the run",
        ),
        ("[\"2s\"]", "measure", "expected a window like"),
        ("[\"2s\", 5]", "measure[1]", "expected a time"),
    ] {
        assert_error(
            &format!("measure = {measure}\n{}", with_flow(&flow)),
            location,
            message,
        );
    }
}

/// A path over these links' single ports.
fn hops(links: &[usize]) -> Vec<Hop> {
    links.iter().map(|&link| Hop { link, port: 0 }).collect()
}

/// The links of a path.
fn links(path: &[Hop]) -> Vec<usize> {
    Hop::links(path).collect()
}

// ---- links with ports ----

const PORTED: &str = r#"
duration = "1s"
[links.cell]
rate = "20Mbps"
ports = ["ue1", "ue2"]
[links.up]
rate = "20Mbps"
[[flows]]
name = "a"
cc = "reno"
path = ["cell:ue2"]
ack_path = ["up"]
"#;

#[test]
fn a_path_names_a_port_as_link_colon_port() {
    let s = parse_ok(PORTED);
    assert_eq!(s.links[0].ports, vec!["ue1", "ue2"]);
    assert_eq!(s.links[1].ports, Vec::<String>::new());
    assert_eq!(s.flows[0].path, vec![Hop { link: 0, port: 1 }]);
    assert_eq!(s.flows[0].ack_path, vec![Hop { link: 1, port: 0 }]);
    assert_eq!(s.flows[0].path[0].name(&s.links), "cell:ue2");
    assert_eq!(s.flows[0].ack_path[0].name(&s.links), "up");
}

#[test]
fn port_mistakes_name_the_entry_and_what_is_accepted() {
    let with_path = |p: &str| PORTED.replace(r#"path = ["cell:ue2"]"#, &format!("path = [{p}]"));
    assert_error(
        &with_path(r#""cell:ue3""#),
        "flows[0].path[0]",
        "has no port \"ue3\"; its ports are: ue1, ue2",
    );
    assert_error(
        &with_path(r#""cell""#),
        "flows[0].path[0]",
        "has ports: name one, as \"cell:ue1\"",
    );
    assert_error(
        &with_path(r#""cell:ue1", "up:x""#),
        "flows[0].path[1]",
        "link \"up\" has no ports",
    );
    assert_error(
        &with_path(r#""cell:ue1", "cell:ue2""#),
        "flows[0].path[1]",
        "appears twice",
    );
    let ports = |v: &str| PORTED.replace(r#"ports = ["ue1", "ue2"]"#, &format!("ports = {v}"));
    assert_error(
        &ports(r#"["ue1", "ue1"]"#),
        "links.cell.ports[1]",
        "appears twice",
    );
    assert_error(&ports(r#"["a:b"]"#), "links.cell.ports[0]", "without ':'");
    assert_error(&ports("[]"), "links.cell.ports", "an array of port names");
    assert_error(&ports("3"), "links.cell.ports", "an array of port names");
}

#[test]
fn a_coupling_group_action_names_a_subflow_of_a_multipath_flow() {
    let base = r#"
duration = "10s"
[links.a]
rate = "10Mbps"
[links.b]
rate = "10Mbps"
[links.up]
rate = "10Mbps"
[[flows]]
name = "mp"
cc = "reno"
paths = [{ path = ["a"], ack_path = ["up"] }, { path = ["b"], ack_path = ["up"] }]
[[flows]]
name = "sp"
path = ["a"]
ack_path = ["up"]
"#;
    let s = parse_ok(&format!(
        "{base}[[actions]]\nat = \"5s\"\nflow = \"mp\"\nsubflow = 1\ncoupling_group = 3\n"
    ));
    assert_eq!(s.actions[0].change, Change::CouplingGroup(3));
    assert_eq!(
        s.actions[0].target,
        ActionTarget::Flow {
            flow: 0,
            subflow: Some(1)
        }
    );
    assert_error(
        &format!("{base}[[actions]]\nat = \"5s\"\nflow = \"mp\"\ncoupling_group = 3\n"),
        "actions[0].subflow",
        "needs subflow = K",
    );
    assert_error(
        &format!(
            "{base}[[actions]]\nat = \"5s\"\nflow = \"sp\"\nsubflow = 0\ncoupling_group = 3\n"
        ),
        "actions[0].subflow",
        "subflow selects a subflow of a multipath flow",
    );
    assert_error(
        &format!(
            "{base}[[actions]]\nat = \"5s\"\nflow = \"mp\"\nsubflow = 1\ncoupling_group = -1\n"
        ),
        "actions[0].coupling_group",
        "",
    );
}

#[test]
fn a_model_kind_takes_its_own_keys_and_names_ports_with_colons() {
    let s = parse_ok(
        r#"
duration = "1s"
[links.air]
kind = "radio"
cells = 2
buffer = "50pkt"
delay = "1ms"
[[flows]]
path = ["air:c1"]
ack_path = ["air:c1:up"]
"#,
    );
    let air = &s.links[0];
    assert_eq!(air.ports, vec!["c0", "c0:up", "c1", "c1:up"]);
    assert_eq!(
        air.serializer,
        Serializer::Model {
            peak_bps: 1_000_000
        }
    );
    assert_eq!(air.model.get("cells").and_then(|v| v.as_integer()), Some(2));
    assert_eq!(s.flows[0].path, vec![Hop { link: 0, port: 2 }]);
    assert_eq!(s.flows[0].ack_path, vec![Hop { link: 0, port: 3 }]);
    assert_eq!(s.flows[0].ack_path[0].name(&s.links), "air:c1:up");
}

#[test]
fn a_model_kind_rejects_common_keys_it_does_not_take_and_reports_its_own_errors() {
    let base = "duration = \"1s\"\n[[flows]]\npath = [\"air:c0\"]\nack_path = [\"air:c0:up\"]\n[links.air]\nkind = \"radio\"\n";
    let e = parse(
        &format!("{base}cells = 1\nrate = \"10Mbps\""),
        &options(&[], None),
    )
    .unwrap_err();
    assert_eq!(e.location, "links.air.rate");
    assert!(e.message.contains("kind \"radio\""), "{e}");
    let e = parse(&format!("{base}cells = 10"), &options(&[], None)).unwrap_err();
    assert_eq!(e.location, "links.air.cells");
    assert_eq!(e.message, "expected 1 to 9");
    let e = parse(&format!("{base}cells = 1\ncels = 2"), &options(&[], None)).unwrap_err();
    assert_eq!(e.location, "links.air.cels");
    assert!(e.message.contains("did you mean \"cells\""), "{e}");
}
