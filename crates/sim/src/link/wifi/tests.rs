//! The DCF's timing and retry behaviour on hand-built cells.

use super::*;
use rove_scenario::spec::{JitterSpec, LossSpec, QueueLimit, QueueSpec, Serializer};

fn cell(model: &str, buffer: u32) -> Wifi {
    let model: toml::Table = model.parse().unwrap();
    let shape = (KIND.check)(&model).unwrap();
    let spec = LinkSpec {
        name: "air".into(),
        kind: "wifi".into(),
        serializer: Serializer::Model {
            peak_bps: shape.peak_bps,
        },
        delay_ns: 0,
        queue: QueueSpec::DropTail {
            limit: QueueLimit::Packets(buffer),
        },
        loss: LossSpec::None,
        jitter: None::<JitterSpec>,
        outages: Vec::new(),
        ports: shape.ports,
        model,
    };
    Wifi::new(&spec, 1)
}

fn offer(w: &mut Wifi, now: Nanos, id: u32, port: u16, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
    w.offer(
        now,
        Offer {
            id,
            bytes: 1500,
            port,
            flow: 0,
        },
        out,
    )
}

/// Runs the cell's service calls until it asks for none, or `until`.
fn run(w: &mut Wifi, mut next: Option<Nanos>, until: Nanos, out: &mut Vec<LinkOutput>) {
    while let Some(t) = next.filter(|&t| t <= until) {
        next = w.service(t, out);
    }
}

#[test]
fn a_frame_to_an_idle_cell_goes_at_once_and_arrives_after_its_air_time() {
    let mut w = cell("[stations.s1]", 10);
    let mut out = Vec::new();
    // The medium has been idle since 0 (> DIFS by 1 ms): the next slot boundary.
    let t = offer(&mut w, 1_000_000, 1, 0, &mut out).unwrap();
    assert_eq!(t, 1_000_000 + phy::SLOT_NS - (1_000_000 % phy::SLOT_NS));
    run(&mut w, Some(t), u64::MAX, &mut out);
    assert_eq!(
        out,
        vec![LinkOutput::Deliver {
            id: 1,
            at: t + phy::data_ns(1500, 7)
        }]
    );
    assert_eq!(w.stats().departed_pkts, 1);
}

#[test]
fn one_saturated_station_sends_a_frame_per_difs_backoff_data_sifs_ack() {
    // One transmitter never collides: its frames are spaced by the data, SIFS, Ack and DIFS
    // plus its backoff (mean CWmin/2 = 7.5 slots), 248 + 16 + 28 + 34 + 67.5 = 393.5 µs.
    let mut w = cell("[stations.s1]", 100_000);
    let mut out = Vec::new();
    let mut next = None;
    for id in 0..20_000 {
        next = offer(&mut w, 0, id, 1, &mut out).or(next);
    }
    run(&mut w, next, u64::MAX, &mut out);
    let times: Vec<Nanos> = out
        .iter()
        .map(|o| match o {
            LinkOutput::Deliver { at, .. } => *at,
            LinkOutput::Drop { .. } => panic!("no drops without contention"),
        })
        .collect();
    assert_eq!(times.len(), 20_000);
    let mean_us = (times[19_999] - times[0]) as f64 / 19_999.0 / 1e3;
    assert!((mean_us - 393.5).abs() < 2.0, "mean spacing {mean_us} µs");
}

#[test]
fn the_ap_serves_its_stations_queues_in_turn() {
    let mut w = cell("[stations.a]\n[stations.b]", 100);
    let mut out = Vec::new();
    let mut next = None;
    for id in 0..4 {
        next = offer(&mut w, 0, id, 0, &mut out).or(next); // to a
    }
    for id in 10..12 {
        next = offer(&mut w, 0, id, 2, &mut out).or(next); // to b
    }
    run(&mut w, next, u64::MAX, &mut out);
    let ids: Vec<u32> = out
        .iter()
        .map(|o| match o {
            LinkOutput::Deliver { id, .. } => *id,
            LinkOutput::Drop { .. } => panic!(),
        })
        .collect();
    assert_eq!(ids, vec![0, 10, 1, 11, 2, 3]);
}

#[test]
fn collisions_past_the_retry_limit_are_mac_drops_not_queue_drops() {
    // 20 saturated stations with a retry limit of 1: every collided frame is dropped.
    let stations: String = (0..20).map(|i| format!("[stations.s{i}]\n")).collect();
    let mut w = cell(&format!("retry_limit = 1\n{stations}"), 1000);
    let mut out = Vec::new();
    let mut next = None;
    for i in 0..20u16 {
        for k in 0..500u32 {
            next = offer(&mut w, 0, u32::from(i) * 1000 + k, 2 * i + 1, &mut out).or(next);
        }
    }
    run(&mut w, next, 2_000_000_000, &mut out);
    let mac = out
        .iter()
        .filter(|o| {
            matches!(
                o,
                LinkOutput::Drop {
                    reason: DropReason::MacRetryLimit,
                    ..
                }
            )
        })
        .count() as u64;
    let s = w.stats();
    assert!(s.mac_drops > 100, "{s:?}");
    assert_eq!(s.mac_drops, mac);
    assert_eq!(s.queue_drops, 0);
    assert_eq!(s.drops(), s.mac_drops);
}

#[test]
fn the_cw_doubles_on_failure_up_to_cwmax() {
    let mut cw = phy::CW_MIN;
    let mut seen = vec![cw];
    for _ in 0..8 {
        cw = (2 * cw + 1).min(phy::CW_MAX);
        seen.push(cw);
    }
    assert_eq!(seen, vec![15, 31, 63, 127, 255, 511, 1023, 1023, 1023]);
}

#[test]
fn two_backoffs_ending_in_one_slot_collide_and_both_frames_fail() {
    let mut w = cell("retry_limit = 1\n[stations.a]\n[stations.b]", 10);
    let mut out = Vec::new();
    // Both get a frame at 0, the first boundary of an idle medium: both send at once.
    let t = offer(&mut w, 0, 1, 1, &mut out).unwrap();
    assert_eq!(t, 0);
    assert_eq!(offer(&mut w, 0, 2, 3, &mut out), None);
    assert_eq!(w.service(0, &mut out), None);
    let reason = DropReason::MacRetryLimit;
    assert_eq!(
        out,
        vec![
            LinkOutput::Drop { id: 1, reason },
            LinkOutput::Drop { id: 2, reason }
        ]
    );
    // The medium is busy for the frames, then EIFS: the next frame backs off from there.
    assert_eq!(w.idle_from, phy::data_ns(1500, 7) + phy::eifs_ns());
    assert_eq!(w.stats().mac_drops, 2);
    assert_eq!(w.stats().queue_drops, 0);
}

#[test]
fn a_collision_doubles_the_cw_and_the_frame_is_retried() {
    let mut w = cell("[stations.a]\n[stations.b]", 10);
    let mut out = Vec::new();
    let t = offer(&mut w, 0, 1, 1, &mut out).unwrap();
    offer(&mut w, 0, 2, 3, &mut out);
    let next = w.service(t, &mut out);
    assert!(out.is_empty());
    assert_eq!((w.tx[1].cw, w.tx[2].cw), (31, 31));
    assert_eq!(w.tx[1].frame.map(|f| f.attempts), Some(1));
    run(&mut w, next, u64::MAX, &mut out);
    let mut ids: Vec<u32> = out
        .iter()
        .map(|o| match o {
            LinkOutput::Deliver { id, .. } => *id,
            LinkOutput::Drop { .. } => panic!("retried, not dropped"),
        })
        .collect();
    ids.sort();
    assert_eq!(ids, vec![1, 2]);
}
