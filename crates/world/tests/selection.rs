//! The selection controller (issue 17 item 2): seed-002's Option 2 plan switched at the phase
//! boundaries of the thesis's time rule, with Eq. 6.3's handoff.

use crate::common;

use common::{bottleneck, rows, run, world};
use rove_scenario::spec::ActionSpec;
use rove_world::control::{Cadence, Controller};
use rove_world::World;
use std::sync::{Arc, Mutex};

const S: u64 = 1_000_000_000;

fn committed(name: &str) -> String {
    let path = format!(
        "{}/../../scenarios/selection/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Records, per ACK of flow 0 that carried an RTT sample, the pair the sender's handoff ring
/// holds: (the cwnd in force when the ACK arrived = the cwnd after the previous ACK, the ACK's
/// RTT sample in µs). Also the sender's min RTT after each ACK.
struct AckLog {
    log: Arc<Mutex<Vec<(u32, u64)>>>,
    cwnd_before: u32,
}

impl Controller for AckLog {
    fn kind(&self) -> &'static str {
        "ack_log"
    }
    fn cadence(&self) -> Cadence {
        Cadence::Acks { flow: 0, n: 1 }
    }
    fn tick(&mut self, _now: u64, world: &World, _actions: &mut Vec<ActionSpec>) {
        let s = world.flows[0].transport.sender(0);
        if s.last_rate_sample.rtt_ns > 0 {
            let rtt_us = s.last_rate_sample.rtt_ns as u64 / 1000;
            self.log.lock().unwrap().push((self.cwnd_before, rtt_us));
        }
        self.cwnd_before = s.tp.snd_cwnd;
    }
}

#[test]
fn the_lte_backward_300_plan_switches_bbr_to_illinois_at_2s_with_eq_6_3() {
    // G-4G B300: BBR for start-up, Illinois from 2 s. Measured: the last 7 ACK samples before
    // 2 s are cwnd 314 with RTTs 86.3-92.4 ms, Dmin 68.27 ms: floor(2198 · 68270 / 625773) =
    // 239, and the sender holds 239 right after the switch (printed with --nocapture).
    let text = committed("lte-backward-300.toml");
    let mut w = world(&text);
    let log = Arc::new(Mutex::new(Vec::new()));
    w.add_controller(Box::new(AckLog {
        log: log.clone(),
        cwnd_before: w.flows[0].transport.sender(0).tp.snd_cwnd,
    }));
    w.advance_to(2 * S); // every event before 2 s
    let min_rtt_us = w.flows[0].transport.sender(0).tp.min_rtt_us;
    assert_eq!(w.sender_view(0, 0).cc, "bbr");
    let last7: Vec<(u32, u64)> = log.lock().unwrap().iter().rev().take(7).copied().collect();
    w.advance_to(2 * S + 1); // the events at 2 s: the controller's switch first
    let after = w.flows[0].transport.sender(0).tp.snd_cwnd;
    assert_eq!(
        w.sender_view(0, 0).cc,
        "illinois",
        "switched exactly at 2 s"
    );
    // Eq. 6.3: CWND = sCWND / (sD / Dmin) = floor(Σcwnd · Dmin / Σrtt) over the last 7.
    let cwnds: u64 = last7.iter().map(|&(c, _)| c as u64).sum();
    let rtts: u64 = last7.iter().map(|&(_, r)| r).sum();
    let expected = (cwnds * min_rtt_us / rtts).max(2) as u32;
    println!(
        "last 7 (cwnd, rtt us): {last7:?}; Dmin {min_rtt_us} us; Eq. 6.3 {expected}; after {after}"
    );
    assert_eq!(
        after, expected,
        "samples {last7:?}, Dmin {min_rtt_us} us: Eq. 6.3 gives {expected}"
    );
    assert!(
        (after as u64) < cwnds / 7,
        "the handoff takes out the standing queue: {after} vs sCWND {}",
        cwnds / 7
    );
    w.run();
    // The time series: BBR before 2 s, Illinois from the 2 s sample on.
    let f = &w.recorder.flows;
    for i in rows(f) {
        let want = if f.time_s[i] < 2.0 - 1e-9 {
            "bbr"
        } else {
            "illinois"
        };
        assert_eq!(f.cc[i], want, "at {} s", f.time_s[i]);
    }
}

/// One flow over a 20 Mbit/s, 20 ms bottleneck for 30 s, from `start` s, with a selection
/// controller.
fn simple(start: &str, cc: &str, controller: &str) -> String {
    let flow = bottleneck(
        "30s",
        "",
        "rate = \"20Mbps\"\ndelay = \"20ms\"\nbuffer = \"100pkt\"",
        &[("a", cc, "")],
    );
    let flow = if start.is_empty() {
        flow
    } else {
        flow + &format!("start = \"{start}\"\n")
    };
    flow + "[[controllers]]\nkind = \"selection\"\nflow = \"a\"\n" + controller
}

/// (time of the first sample, algorithm) at each change of the time series' algorithm.
fn changes(w: &World) -> Vec<(f64, String)> {
    let f = &w.recorder.flows;
    let mut out: Vec<(f64, String)> = Vec::new();
    for i in rows(f) {
        if out.last().map(|(_, c)| *c != f.cc[i]).unwrap_or(true) {
            out.push((f.time_s[i], f.cc[i].to_string()));
        }
    }
    out
}

#[test]
fn a_forward_plan_switches_after_startup_and_into_the_constrained_area() {
    // Forward at 60 km/h over a flow from 1 s to 30 s: start-up 1-3 s, sustainer 3-19 s,
    // constrained the last 10 s, 19-30 s (the phases count from the flow's start).
    let (w, _) = run(&simple(
        "1s",
        "reno",
        "plan = [\"reno\", \"cubic\", \"bbr\"]\ndirection = \"forward\"\nspeed = \"60km/h\"\n",
    ));
    let got = changes(&w);
    let names: Vec<&str> = got.iter().map(|(_, c)| c.as_str()).collect();
    assert_eq!(names, ["reno", "cubic", "bbr"], "{got:?}");
    assert!(
        (got[1].0 - 3.0).abs() < 1e-9 && (got[2].0 - 20.0).abs() < 1e-9,
        "{got:?}"
    );
}

#[test]
fn a_repeated_algorithm_is_not_switched_and_a_one_algorithm_plan_never_switches() {
    let (w, _) = run(&simple(
        "",
        "reno",
        "plan = [\"reno\", \"reno\", \"cubic\"]\ndirection = \"backward\"\nspeed = \"120km/h\"\nhandoff = \"keep\"\n",
    ));
    // backward 120 km/h: start-up 0-2 s, constrained 2-7 s, scaling 7-30 s.
    let got = changes(&w);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        (got[1].0 - 7.0).abs() < 1e-9 && got[1].1 == "cubic",
        "{got:?}"
    );
    let (w, _) = run(&simple(
        "",
        "reno",
        "plan = [\"reno\"]\ndirection = \"forward\"\nspeed = \"300km/h\"\n",
    ));
    assert_eq!(changes(&w).len(), 1);
}

#[test]
fn keep_hands_the_window_over_unchanged() {
    // BBR -> CUBIC keeping the window: cubic's init leaves snd_cwnd as it is.
    let mut w = world(&simple(
        "",
        "bbr",
        "plan = [\"bbr\", \"cubic\"]\ndirection = \"backward\"\nspeed = \"300km/h\"\nhandoff = \"keep\"\n",
    ));
    w.advance_to(2 * S);
    let before = w.sender_view(0, 0).cwnd_pkts;
    w.advance_to(2 * S + 1);
    assert_eq!(w.sender_view(0, 0).cc, "cubic");
    assert_eq!(w.sender_view(0, 0).cwnd_pkts, before);
}

#[test]
fn bad_keys_are_one_line_errors_naming_the_key() {
    let base = "direction = \"backward\"\nspeed = \"300km/h\"\n";
    for (cc, controller, key, says) in [
        (
            "cubic",
            "plan = [\"bbr\", \"illinois\"]\n",
            "plan",
            "sets up with cc = \"cubic\"",
        ),
        (
            "bbr",
            "plan = [\"bbr\", \"fast\"]\n",
            "plan",
            "unknown algorithm \"fast\"",
        ),
        (
            "bbr",
            "plan = [\"bbr\", \"reno\", \"cubic\"]\n",
            "plan",
            "3 algorithms for 2 phases",
        ),
        (
            "bbr",
            "plan = [\"bbr\"]\nphases = \"detect\"\n",
            "phases",
            "not built",
        ),
        (
            "bbr",
            "plan = [\"bbr\"]\nhandoff = \"set\"\n",
            "handoff",
            "accepted: delay_scaled, keep",
        ),
        (
            "bbr",
            "plan = [\"bbr\"]\nhandoff = \"keep\"\nsamples = 7\n",
            "samples",
            "goes with",
        ),
        (
            "bbr",
            "plan = [\"bbr\"]\nsamples = 40\n",
            "samples",
            "from 1 to 32",
        ),
        (
            "bbr",
            "plan = [\"bbr\"]\nevery = \"100ms\"\n",
            "every",
            "unknown key",
        ),
        (
            "bbr",
            "plan = [\"bbr\"]\nstartup = \"30s\"\n",
            "speed",
            "longer than 30 s",
        ),
    ] {
        let text = simple("", cc, &format!("{controller}{base}"));
        let e = match rove_world::load(&text, &Default::default()) {
            Ok(_) => panic!("{controller:?} accepted"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains(&format!("controllers[0].{key}")) && e.contains(says),
            "{controller:?}: {e}"
        );
        assert!(!e.trim_end().contains('\n'), "{e}");
    }
    for (controller, key, says) in [
        (
            "direction = \"sideways\"\nspeed = \"60km/h\"\n",
            "direction",
            "\"forward\"",
        ),
        (
            "direction = \"forward\"\nspeed = \"60\"\n",
            "speed",
            "like \"300km/h\"",
        ),
        ("speed = \"60km/h\"\n", "direction", "missing required key"),
    ] {
        let text = simple("", "bbr", &format!("plan = [\"bbr\"]\n{controller}"));
        let e = rove_world::load(&text, &Default::default())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains(&format!("controllers[0].{key}")) && e.contains(says),
            "{controller:?}: {e}"
        );
    }
}
