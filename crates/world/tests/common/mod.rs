//! Helpers shared by the scenario tests.
#![allow(dead_code)] // each test file uses a subset

use rove_world::record::FlowSeries;
use rove_world::{load, summarize, ParseOptions, Summary, World};

/// Builds the world a TOML scenario describes (panicking with the scenario error).
pub fn world(toml: &str) -> World {
    load(
        toml,
        &ParseOptions {
            source: "<test>",
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
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

/// A scenario of one bottleneck link "down" (its keys as TOML lines, e.g. `rate = "20Mbps"`)
/// with a 1 Gbit/s, 20 ms ACK link "up", and `flows` as (name, cc, cc_params inline-table
/// body) all over it, lasting `duration`. `extra` goes at the top level (e.g. sample_interval).
pub fn bottleneck(duration: &str, extra: &str, down: &str, flows: &[(&str, &str, &str)]) -> String {
    let mut s = format!("duration = \"{duration}\"\n{extra}\n[links.down]\n{down}\n[links.up]\nrate = \"1Gbps\"\ndelay = \"20ms\"\n");
    for (name, cc, params) in flows {
        s += &format!(
            "[[flows]]\nname = \"{name}\"\npath = [\"down\"]\nack_path = [\"up\"]\ncc = \"{cc}\"\ncc_params = {{ {params} }}\n"
        );
    }
    s
}

/// Runs a world whose flow 0 is multipath, logging the DSNs its application gets.
pub fn run_logged(mut w: World) -> (World, Summary) {
    w.flows[0]
        .transport
        .connection_mut()
        .unwrap()
        .reorder
        .delivery_log = Some(Vec::new());
    w.run();
    let s = summarize(&w);
    (w, s)
}

/// The application got every byte of the transfer, each DSN once and in order.
pub fn assert_complete_in_order(w: &World, s: &Summary, size: u64, what: &str) {
    let c = w.flows[0].transport.connection().unwrap();
    let log = c.reorder.delivery_log.as_deref().unwrap();
    let total = size.div_ceil(rove_tcp::MSS as u64);
    assert_eq!(log.len() as u64, total, "{what}: DSNs delivered");
    assert!(
        log.iter().enumerate().all(|(i, &d)| d == i as u64),
        "{what}: delivered out of order or twice"
    );
    assert_eq!(c.reorder.bytes_delivered, size, "{what}: bytes delivered");
    assert_eq!(s.flows[0].bytes_delivered, size, "{what}");
    assert!(
        s.flows[0]
            .multipath
            .as_ref()
            .unwrap()
            .download_time_s
            .is_some(),
        "{what}: did not finish"
    );
    assert_eq!(
        c.reorder.ofo_bytes, 0,
        "{what}: data left in the reordering buffer"
    );
}

/// Two disjoint 10 Mbit/s paths (20 and 40 ms one way, 100-packet buffers, 100 Mbit/s ACK
/// links), 15 s: one multipath flow "mp" whose uncoupled subflows all run `cc`.
pub fn two_path_multipath(cc: &str) -> String {
    format!(
        r#"
duration = "15s"
[links.a_down]
rate = "10Mbps"
delay = "20ms"
buffer = "100pkt"
[links.a_up]
rate = "100Mbps"
delay = "20ms"
[links.b_down]
rate = "10Mbps"
delay = "40ms"
buffer = "100pkt"
[links.b_up]
rate = "100Mbps"
delay = "40ms"
[[flows]]
name = "mp"
cc = "{cc}"
paths = [{{ path = ["a_down"], ack_path = ["a_up"] }}, {{ path = ["b_down"], ack_path = ["b_up"] }}]
"#
    )
}

/// Runs [`two_path_multipath`], checking that every subflow runs `cc`; returns the
/// connection's goodput and each subflow's throughput (Mbit/s).
pub fn run_on_two_subflows(cc: &str) -> (f64, Vec<f64>) {
    let (w, s) = run(&two_path_multipath(cc));
    for sub in 0..2 {
        assert_eq!(w.sender_view(0, sub).cc, cc, "{cc}: subflow {sub}");
    }
    let mp = s.flows[0].multipath.as_ref().unwrap();
    let per: Vec<f64> = mp.subflows.iter().map(|x| x.throughput_mbps).collect();
    let goodput = s.flows[0].goodput_mbps;
    eprintln!("{cc} multipath: {goodput:.2} Mbit/s, subflows {per:?}");
    (goodput, per)
}

/// One flow "a" over 20 Mbit/s with a 40 ms RTT and a 100-packet buffer, 15 s: `first` until
/// 5 s, switched to `cc` (handoff "keep": its `init` from the live state, as Linux's
/// setsockopt(TCP_CONGESTION)) until 10 s, then to `then`. Checks the live algorithm in every
/// time-series row; returns the world and the summary.
pub fn run_switched(first: &str, cc: &str, then: &str) -> (World, Summary) {
    let (w, s) = run(&(bottleneck(
        "15s",
        "",
        "rate = \"20Mbps\"\ndelay = \"20ms\"\nbuffer = \"100pkt\"",
        &[("a", first, "")],
    ) + &format!(
        "[[actions]]\nat = \"5s\"\nflow = \"a\"\ncc = \"{cc}\"\nhandoff = \"keep\"\n\
         [[actions]]\nat = \"10s\"\nflow = \"a\"\ncc = \"{then}\"\nhandoff = \"keep\"\n"
    )));
    let f = &w.recorder.flows;
    for i in rows(f) {
        let t = f.time_s[i];
        let want = if t < 5.0 {
            first
        } else if t < 10.0 {
            cc
        } else {
            then
        };
        assert_eq!(f.cc[i], want, "{cc}: live algorithm at {t} s");
    }
    (w, s)
}

/// Payload bytes flow `flow` (its connection-level rows) got between `t0` and `t1` (s), in
/// Mbit/s, from the time series.
pub fn goodput_between(f: &FlowSeries, flow: u32, t0: f64, t1: f64) -> f64 {
    let at = |t: f64| {
        let i = (0..f.time_s.len())
            .rev()
            .find(|&i| f.flow[i] == flow && f.subflow[i] == -1 && f.time_s[i] <= t + 1e-9)
            .unwrap_or_else(|| panic!("flow {flow} has no row at or before {t} s"));
        f.bytes_delivered[i]
    };
    (at(t1) - at(t0)) as f64 * 8.0 / (t1 - t0) / 1e6
}

/// The first link's mean queueing delay (ms).
pub fn mean_queue_ms(s: &Summary) -> f64 {
    s.links[0].queue_delay.mean_queue_delay_ms.unwrap()
}

/// The error a scenario's parse gives, as (location, message); the error must be one line.
#[allow(dead_code)]
pub fn parse_error(text: &str) -> (String, String) {
    let e = rove_world::parse(
        text,
        &rove_world::ParseOptions {
            source: "<test>",
            ..Default::default()
        },
    )
    .map(|_| ())
    .unwrap_err();
    assert!(!e.to_string().contains('\n'), "{e}");
    (e.location, e.message)
}
