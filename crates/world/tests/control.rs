//! Acting on a running world (issue 10): scheduled `[[actions]]`, the stepping form of the same
//! change, path elements that rewrite packets, subflows added and removed mid-transfer, link
//! changes, and controllers at both cadences.

use crate::common;

use common::{assert_complete_in_order, bottleneck, run, run_logged, world};
use rove_scenario::spec::{ActionSpec, ActionTarget, Change, HandoffSpec};
use rove_world::record::FlowSeries;
use rove_world::{summarize, World};

const SWITCH_AT_S: f64 = 10.0;
const BBR_MODES: [&str; 4] = ["startup", "drain", "probe_bw", "probe_rtt"];

/// One CUBIC flow over a 20 Mbit/s, 20 ms bottleneck with a 1-BDP-ish buffer, with `actions`.
fn cubic_flow(actions: &str) -> String {
    bottleneck(
        "20s",
        "",
        "rate = \"20Mbps\"\ndelay = \"20ms\"\nbuffer = \"100pkt\"",
        &[("a", "cubic", "")],
    ) + actions
}

fn row_at(f: &FlowSeries, t: f64) -> usize {
    (0..f.time_s.len())
        .find(|&i| f.flow[i] == 0 && (f.time_s[i] - t).abs() < 1e-9)
        .unwrap_or_else(|| panic!("no sample at {t} s"))
}

fn switch(handoff: HandoffSpec) -> ActionSpec {
    ActionSpec {
        at_ns: 10_000_000_000,
        target: ActionTarget::Flow {
            flow: 0,
            subflow: None,
        },
        change: Change::Cc {
            name: "bbr".into(),
            params: toml::Table::new(),
            handoff,
        },
    }
}

/// The stepping form of an action at 10 s: run to 10 s, look, apply. Returns the world, and the
/// cwnd just before and just after the switch.
fn stepped(handoff: HandoffSpec) -> (World, u32, u32) {
    let mut w = world(&cubic_flow(""));
    w.advance_to(10_000_000_000);
    let before = w.sender_view(0, 0).cwnd_pkts;
    assert_eq!(w.sender_view(0, 0).cc, "cubic");
    w.apply(&switch(handoff)).unwrap();
    let after = w.sender_view(0, 0).cwnd_pkts;
    w.run();
    (w, before, after)
}

#[test]
fn cubic_switched_to_bbr_at_10s_runs_bbr_modes_afterwards() {
    let (w, _) = run(&cubic_flow(
        "[[actions]]\nat = \"10s\"\nflow = \"a\"\ncc = \"bbr\"\nhandoff = \"keep\"\n",
    ));
    let f = &w.recorder.flows;
    let rows: Vec<usize> = (0..f.time_s.len()).filter(|&i| f.flow[i] == 0).collect();
    for &i in &rows {
        let t = f.time_s[i];
        let expected = if t < SWITCH_AT_S { "cubic" } else { "bbr" };
        assert_eq!(f.cc[i], expected, "live algorithm at {t} s");
        if t >= SWITCH_AT_S {
            assert!(
                BBR_MODES.contains(&f.cc_state[i]),
                "mode {} at {t} s",
                f.cc_state[i]
            );
        } else if t > 1.0 {
            assert!(
                !BBR_MODES.contains(&f.cc_state[i]),
                "CUBIC's mode {} at {t} s",
                f.cc_state[i]
            );
        }
    }
    let probe_bw = rows
        .iter()
        .filter(|&&i| f.time_s[i] > 12.0 && f.cc_state[i] == "probe_bw")
        .count();
    assert!(
        probe_bw > 100,
        "BBR cruising in probe_bw after the switch: {probe_bw} samples"
    );
    assert_eq!(w.sender_view(0, 0).cc, "bbr");
}

#[test]
fn keep_handoff_leaves_cwnd_continuous_and_set_writes_the_given_window() {
    let (_, before, after) = stepped(HandoffSpec::Keep);
    // bbr_init does not touch snd_cwnd: the window carries over exactly.
    assert_eq!(after, before, "cwnd across a keep switch");
    assert!(before > 10, "a CUBIC window worth handing over: {before}");
    let mut w = world(&cubic_flow(""));
    w.advance_to(10_000_000_000);
    w.apply(&switch(HandoffSpec::Set {
        cwnd: 40,
        ssthresh: Some(30),
    }))
    .unwrap();
    let tp = &w.flows[0].transport.sender(0).tp;
    assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (40, 30));
}

#[test]
fn a_scheduled_action_and_the_stepping_api_give_the_same_run() {
    for (handoff, text) in [
        (HandoffSpec::Keep, "handoff = \"keep\""),
        (
            HandoffSpec::Set {
                cwnd: 40,
                ssthresh: None,
            },
            "handoff = \"set\"\ncwnd = 40",
        ),
        (
            HandoffSpec::DelayScaled { samples: 5 },
            "handoff = \"delay_scaled\"\nsamples = 5",
        ),
    ] {
        let (scheduled, s1) = run(&cubic_flow(&format!(
            "[[actions]]\nat = \"10s\"\nflow = \"a\"\ncc = \"bbr\"\n{text}\n"
        )));
        let (stepped, _, _) = stepped(handoff);
        let s2 = summarize(&stepped);
        let (a, b) = (&scheduled.recorder.flows, &stepped.recorder.flows);
        assert_eq!(a.cwnd_pkts, b.cwnd_pkts, "{text}");
        assert_eq!(a.cc_state, b.cc_state, "{text}");
        assert_eq!(s1.flows[0].goodput_mbps, s2.flows[0].goodput_mbps, "{text}");
        // The 10 s sample comes right after the switch (the action is the first event then).
        assert_eq!(a.cc[row_at(a, SWITCH_AT_S)], "bbr", "{text}");
    }
}

/// One Reno flow with a fixed 200 KB window over a fat 100 Mbit/s, 40 ms path (BDP 500 KB), so
/// the receive window is what limits it.
fn window_limited(elements: &str) -> String {
    format!(
        r#"duration = "10s"
[links.down]
rate = "100Mbps"
delay = "20ms"
[links.up]
rate = "100Mbps"
delay = "20ms"
[[flows]]
name = "a"
cc = "reno"
path = ["down"]
ack_path = ["up"]
rwnd = "200KB"
rcv_buffer = "fixed"
{elements}"#
    )
}

fn max_inflight_bytes(w: &World) -> u64 {
    let f = &w.recorder.flows;
    (0..f.time_s.len())
        .filter(|&i| f.flow[i] == 0)
        .map(|i| f.inflight_pkts[i] as u64 * rove_tcp::MSS as u64)
        .max()
        .unwrap()
}

#[test]
fn a_path_element_that_halves_the_advertised_window_keeps_inflight_below_it() {
    let (plain, _) = run(&window_limited(""));
    let (halved, s) = run(&window_limited(
        "[[elements]]\nkind = \"rwnd\"\nlink = \"up\"\nflow = \"a\"\nscale = 0.5\n",
    ));
    let half = 100_000;
    assert!(
        max_inflight_bytes(&plain) > half,
        "without the element the flow uses its 200 KB: {}",
        max_inflight_bytes(&plain)
    );
    assert!(
        max_inflight_bytes(&halved) <= half,
        "inflight {} B above the halved window {half} B",
        max_inflight_bytes(&halved)
    );
    // The window, not the path, limits it: about half the 200 KB / 40 ms rate.
    assert!(
        s.flows[0].goodput_mbps > 15.0 && s.flows[0].goodput_mbps < 21.0,
        "{}",
        s.flows[0].goodput_mbps
    );
}

#[test]
fn a_receive_window_clamp_action_limits_inflight_from_its_time() {
    let (w, _) = run(&window_limited(
        "[[actions]]\nat = \"5s\"\nflow = \"a\"\nrwnd = \"64KB\"\n",
    ));
    let f = &w.recorder.flows;
    let rows: Vec<usize> = (0..f.time_s.len()).filter(|&i| f.flow[i] == 0).collect();
    let max_in = |from: f64, to: f64| {
        rows.iter()
            .filter(|&&i| f.time_s[i] >= from && f.time_s[i] < to)
            .map(|&i| f.inflight_pkts[i] as u64 * rove_tcp::MSS as u64)
            .max()
            .unwrap()
    };
    assert!(max_in(2.0, 5.0) > 150_000, "{}", max_in(2.0, 5.0));
    // The right edge never moves left, so the clamp takes hold within an RTT.
    assert!(max_in(5.2, 10.0) <= 65_536, "{}", max_in(5.2, 10.0));
}

const TWO_PATHS: &str = r#"duration = "25s"
[links.a_down]
rate = "10Mbps"
delay = "10ms"
buffer = "100pkt"
[links.a_up]
rate = "100Mbps"
delay = "10ms"
[links.b_down]
rate = "10Mbps"
delay = "30ms"
buffer = "100pkt"
[links.b_up]
rate = "100Mbps"
delay = "30ms"
[[flows]]
name = "mp"
cc = "cubic"
size = "25MB"
paths = [{ path = ["a_down"], ack_path = ["a_up"] }]
[[actions]]
at = "5s"
flow = "mp"
add_subflow = { path = ["b_down"], ack_path = ["b_up"] }
[[actions]]
at = "15s"
flow = "mp"
subflow = 1
remove = true
"#;

#[test]
fn a_subflow_added_at_5s_and_removed_at_15s_leaves_the_stream_complete_and_in_order() {
    let (w, s) = run_logged(world(TWO_PATHS));
    assert_complete_in_order(&w, &s, 25_000_000, "subflow added and removed");
    let c = w.flows[0].transport.connection().unwrap();
    assert_eq!(c.subflows.len(), 2);
    let added = &c.subflows[1];
    assert!(added.closed);
    assert_eq!(added.started_at, Some(5_000_000_000), "joined when added");
    assert!(
        added.segs_assigned > 1000,
        "the added subflow carried data: {}",
        added.segs_assigned
    );
    // After its removal only subflow 0 carries data: its throughput row stops growing.
    let f = &w.recorder.flows;
    let sub1 = |t: f64| {
        (0..f.time_s.len())
            .find(|&i| f.subflow[i] == 1 && (f.time_s[i] - t).abs() < 1e-9)
            .map(|i| f.bytes_delivered[i])
    };
    assert_eq!(sub1(16.0), sub1(20.0), "no data over the removed subflow");
    assert!(sub1(15.0).unwrap() > sub1(6.0).unwrap());
}

/// Path costs are fixed when the run is built (the `paths` entries'); an added subflow has none,
/// so `cost` on `add_subflow` is refused with the accepted keys instead of being ignored.
#[test]
fn a_cost_on_an_added_subflow_is_refused_naming_the_key() {
    let text = TWO_PATHS.replace(
        r#"add_subflow = { path = ["b_down"], ack_path = ["b_up"] }"#,
        r#"add_subflow = { path = ["b_down"], ack_path = ["b_up"], cost = 2 }"#,
    );
    let (at, msg) = common::parse_error(&text);
    assert_eq!(at, "actions[0].add_subflow.cost");
    assert!(msg.contains("path, ack_path"), "{msg}");
}

#[test]
fn a_link_rate_action_changes_the_rate_from_its_time() {
    let toml = bottleneck(
        "20s",
        "",
        "rate = \"20Mbps\"\ndelay = \"10ms\"\nbuffer = \"100pkt\"",
        &[("a", "cubic", "")],
    ) + "[[actions]]\nat = \"10s\"\nlink = \"down\"\nrate = \"5Mbps\"\n";
    let (w, s) = run(&toml);
    let early = w.goodput_mbps_between(0, 5.0, 10.0);
    let late = w.goodput_mbps_between(0, 13.0, 20.0);
    assert!(early > 18.0, "{early}");
    assert!(late > 4.5 && late <= 5.0, "{late}");
    // Utilisation is computed against the changed rate: still near 1, never above.
    assert!(
        s.links[0].utilization > 0.9 && s.links[0].utilization <= 1.0,
        "{}",
        s.links[0].utilization
    );
}

#[test]
fn the_feature_recorder_runs_at_its_time_and_ack_cadences() {
    let toml = cubic_flow(
        "[[controllers]]\nkind = \"features\"\nevery = \"100ms\"\nlink = \"down\"\n\
         [[controllers]]\nkind = \"features\"\nevery_acks = 50\nflow = \"a\"\n",
    );
    let (w, _) = run(&toml);
    let timed = w.controllers[0].as_ref().unwrap().features().unwrap();
    assert_eq!(timed.time_s.len(), 200, "20 s every 100 ms");
    assert_eq!(timed.names.len(), 14, "sender and link features");
    let srtt = timed.names.iter().position(|&n| n == "srtt_ms").unwrap();
    assert!(timed.values[srtt][100] > 40.0, "srtt over a 40 ms base RTT");
    let per_ack = w.controllers[1].as_ref().unwrap().features().unwrap();
    // Every packet of the ACK link reaches the sender but the few still in flight at the end
    // (20 ms of ACKs at ~850 per second).
    let departed = w.links[1].stats().departed_pkts;
    let rows = per_ack.time_s.len() as u64;
    assert!(
        rows <= departed / 50 && rows >= (departed - 40) / 50,
        "{rows} rows for {departed} ACKs at one row per 50"
    );
}

#[test]
fn bbr_telemetry_columns_appear_after_a_switch_and_are_nan_before() {
    let (w, _) = run(&cubic_flow(
        "[[actions]]\nat = \"10s\"\nflow = \"a\"\ncc = \"bbr\"\n",
    ));
    let f = &w.recorder.flows;
    let names: Vec<&str> = f.extra.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "bbr_bw_bps",
            "bbr_min_rtt_ms",
            "bbr_pacing_gain",
            "bbr_cwnd_gain"
        ]
    );
    let (_, bw) = &f.extra[0];
    let (_, min_rtt) = &f.extra[1];
    assert_eq!(bw.len(), f.time_s.len());
    for i in 0..f.time_s.len() {
        if f.time_s[i] < SWITCH_AT_S {
            assert!(bw[i].is_nan(), "no BBR before the switch");
        } else if f.time_s[i] > 15.0 {
            // The estimate tracks the 20 Mbit/s bottleneck (payload rate 19.3 Mbit/s).
            assert!(bw[i] > 17e6 && bw[i] < 21e6, "{} at {}", bw[i], f.time_s[i]);
            assert!(min_rtt[i] >= 40.0 && min_rtt[i] < 42.0, "{}", min_rtt[i]);
        }
    }
}

#[test]
fn bbr2_telemetry_adds_inflight_hi_once_loss_sets_it() {
    let toml = bottleneck(
        "20s",
        "",
        "rate = \"20Mbps\"\ndelay = \"20ms\"\nbuffer = \"20pkt\"",
        &[("a", "bbr2", "")],
    );
    let (w, _) = run(&toml);
    let f = &w.recorder.flows;
    let names: Vec<&str> = f.extra.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "bbr2_bw_bps",
            "bbr2_min_rtt_ms",
            "bbr2_pacing_gain",
            "bbr2_cwnd_gain",
            "bbr2_inflight_hi_pkts"
        ]
    );
    let last = f.time_s.len() - 1;
    let bw = f.extra[0].1[last];
    assert!(bw > 17e6 && bw < 21e6, "{bw}");
    // A 20-packet buffer under a 100-packet BDP: losses in STARTUP set inflight_hi.
    let hi = f.extra[4].1[last];
    assert!(hi.is_finite() && hi > 50.0 && hi < 200.0, "{hi}");
}

/// One CUBIC flow over a 20 Mbit/s, 20 ms bottleneck with a deep 1000-packet buffer (BDP 40 ms ×
/// 20 Mbit/s = 67 packets), switched to Reno at 10 s with `handoff`.
fn standing_queue(handoff: &str) -> (World, f64) {
    let toml = bottleneck(
        "14s",
        "",
        "rate = \"20Mbps\"\ndelay = \"20ms\"\nbuffer = \"1000pkt\"",
        &[("a", "cubic", "")],
    ) + &format!("[[actions]]\nat = \"10s\"\nflow = \"a\"\ncc = \"reno\"\n{handoff}\n");
    let (w, _) = run(&toml);
    let l = &w.recorder.links;
    let q: Vec<f64> = (0..l.time_s.len())
        .filter(|&k| l.link[k] == 0 && (10.5..12.0).contains(&l.time_s[k]))
        .map(|k| l.backlog_pkts[k] as f64)
        .collect();
    let mean = q.iter().sum::<f64>() / q.len() as f64;
    (w, mean)
}

#[test]
fn delay_scaled_handoff_drains_the_standing_queue_where_keep_does_not() {
    // Measured: CUBIC holds ≈ 890 packets at 10 s over a 67-packet BDP (a ≈ 780-packet queue
    // in 9-10 s). keep: Reno inherits cwnd 891, queue 825 packets in 10.5-12 s. delay_scaled
    // (Eq. 6.3, last 7 samples): cwnd = sCWND·Dmin/sD = 70 (≈ the BDP), ssthresh 70, queue 27
    // packets. Goodput 19.11 Mbit/s either way.
    let (keep, keep_q) = standing_queue("handoff = \"keep\"");
    let (scaled, scaled_q) = standing_queue("handoff = \"delay_scaled\"");
    let at = |w: &World| {
        let f = &w.recorder.flows;
        let i = row_at(f, SWITCH_AT_S);
        (f.cwnd_pkts[i - 1], f.cwnd_pkts[i], f.ssthresh_pkts[i])
    };
    let (k_before, k_after, _) = at(&keep);
    let (s_before, s_after, s_ssthresh) = at(&scaled);
    eprintln!(
        "keep: cwnd {k_before} -> {k_after}, queue {keep_q:.0}; delay_scaled: cwnd {s_before} -> {s_after} (ssthresh {s_ssthresh}), queue {scaled_q:.0}"
    );
    assert!(
        k_before > 500 && s_before > 500,
        "a standing queue to hand over"
    );
    assert!(
        k_after.abs_diff(k_before) <= 2,
        "keep carries the window over"
    );
    assert!(
        (60..=80).contains(&s_after),
        "delay_scaled cwnd {s_after} vs BDP 67"
    );
    assert_eq!(
        s_ssthresh, s_after,
        "delay_scaled leaves the new algorithm in congestion avoidance"
    );
    assert!(keep_q > 500.0, "keep: queue {keep_q:.0}");
    assert!(
        scaled_q < 0.1 * keep_q,
        "delay_scaled: queue {scaled_q:.0} vs {keep_q:.0}"
    );
}

#[test]
fn bad_handoff_keys_are_one_line_errors_naming_the_key_and_what_is_accepted() {
    for (action, key, says) in [
        (
            "handoff = \"scaled\"",
            "handoff",
            "accepted: keep, set, delay_scaled",
        ),
        (
            "handoff = \"delay_scaled\"\nsamples = 0",
            "samples",
            "from 1 to 32",
        ),
        (
            "handoff = \"delay_scaled\"\nsamples = 33",
            "samples",
            "from 1 to 32",
        ),
        (
            "handoff = \"delay_scaled\"\nsamples = \"7\"",
            "samples",
            "from 1 to 32, got",
        ),
        (
            "handoff = \"keep\"\nsamples = 7",
            "samples",
            "goes with handoff = \"delay_scaled\"",
        ),
        (
            "handoff = \"delay_scaled\"\ncwnd = 40",
            "cwnd",
            "goes with handoff = \"set\"",
        ),
    ] {
        let toml = cubic_flow(&format!(
            "[[actions]]\nat = \"10s\"\nflow = \"a\"\ncc = \"reno\"\n{action}\n"
        ));
        let e = match rove_world::load(&toml, &Default::default()) {
            Ok(_) => panic!("{action:?} accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(key) && e.contains(says), "{action:?}: {e}");
        assert!(!e.trim_end().contains('\n'), "{action:?}: {e}");
    }
    // And a good one parses, with 7 samples by default.
    let w = world(&cubic_flow(
        "[[actions]]\nat = \"10s\"\nflow = \"a\"\ncc = \"reno\"\nhandoff = \"delay_scaled\"\n",
    ));
    assert!(matches!(
        w.scenario.actions[0].change,
        Change::Cc {
            handoff: HandoffSpec::DelayScaled { samples: 7 },
            ..
        }
    ));
}
