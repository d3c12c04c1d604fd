//! The detector as a whole: parameters, intervals and decisions, the feedback to the sender, and
//! synthetic OWD series of shared and distinct queues.

use super::*;
use crate::detect::{build as build_detector, same_partition};
use rove_sim::rng::Stream;

const MS: Nanos = NS_PER_MS;

fn table(text: &str) -> toml::Table {
    text.parse().unwrap()
}

fn detector(params: &str) -> Rfc8382 {
    Rfc8382::new(
        Rfc8382Params::from_table(&table(params)).unwrap(),
        Common::default(),
    )
}

fn segment(d: &mut Rfc8382, sub: usize, now: Nanos, owd_ms: f64) {
    d.on_segment(
        sub,
        &SegmentObservation {
            now,
            owd_ns: (owd_ms * 1e6) as i64,
            sender_lost_pkts: 0,
        },
    );
}

/// An ACK that left the receiver at `sent_at` reaches the sender.
fn ack(d: &mut Rfc8382, sent_at: Nanos) {
    d.on_ack(
        0,
        &AckObservation {
            now: sent_at + 10 * MS,
            sent_at,
            rtt_us: None,
            srtt_us: 0,
            model: None,
        },
    );
}

fn partition(d: &mut Rfc8382, n: usize) -> Vec<u32> {
    let mut g = vec![0; n];
    d.partition(0, &mut g);
    g
}

#[test]
fn the_defaults_are_table_5_1_and_bad_keys_are_named() {
    let p = Rfc8382Params::default();
    assert_eq!((p.t, p.n), (350 * MS, 50));
    let t = p.thresholds;
    assert_eq!(
        (t.c_s, t.c_h, t.p_f, t.p_s, p.p_v, t.p_mad, t.p_d, t.p_l),
        (-0.01, 0.3, 0.1, 0.1, 0.7, 0.1, 0.1, 0.1)
    );
    assert_eq!((p.decisions, p.together), (10, 5));
    assert_eq!(p.stabilisation, Stabilisation::Batch);
    assert_eq!(p.sample_spacing, 5 * MS);
    assert_eq!(Rfc8382Params::from_table(&toml::Table::new()).unwrap(), p);

    let d = build_detector("rfc8382", &table("t_ms = 200\np_v = 1.5"), 2).unwrap();
    assert_eq!(d.name(), "rfc8382");
    let e = build_detector("rfc8382", &table("q = 1"), 2).err().unwrap();
    assert_eq!(e.key, "q");
    assert_eq!(
        e.message,
        "unknown parameter; accepted: interval_ms, t_ms, n, c_s, c_h, p_f, p_s, p_v, p_mad, \
         p_d, p_l, decisions, together, stabilisation, sample_spacing_ms"
    );
    let e = build_detector("rfc8382", &table("p_mad = 2.0"), 2)
        .err()
        .unwrap();
    assert_eq!(
        (e.key.as_str(), e.message.as_str()),
        (
            "p_mad",
            "2 is out of range; accepted: a number in [0, 1] (a fraction)"
        )
    );
    let e = build_detector("rfc8382", &table("together = 7\ndecisions = 6"), 2)
        .err()
        .unwrap();
    assert_eq!(
        (e.key.as_str(), e.message.as_str()),
        (
            "together",
            "7 is more than `decisions` (6); accepted: an integer in 1..=6"
        )
    );
    let e = build_detector("rfc8382", &table("stabilisation = \"vote\""), 2)
        .err()
        .unwrap();
    assert_eq!(e.key, "stabilisation");
    assert!(
        e.message.contains("accepted: \"batch\", \"sliding\""),
        "{}",
        e.message
    );
}

#[test]
fn an_interval_ends_at_the_first_segment_of_a_later_one_and_one_decision_follows() {
    let mut d = detector("");
    segment(&mut d, 0, 1_000 * MS, 20.0); // origin: interval 0 is [1000, 1350) ms
    segment(&mut d, 0, 1_349 * MS, 20.0);
    assert_eq!(d.decisions_made, 0);
    // Interval 3 begins: intervals 0-2 end, one decision (the kernel's: once per arrival).
    segment(&mut d, 0, 2_100 * MS, 20.0);
    assert_eq!((d.current, d.decisions_made), (3, 1));
    // Subflow 0's features: interval 0 only (two samples, 5 ms apart and more).
    let f = d.features(0).unwrap();
    assert_eq!((f.intervals, f.mean_ns), (1, 20e6));
    // Its only interval has no reference for the skewness: not congested.
    assert_eq!(d.last_decision().unwrap()[0], grouping::NON_CONGESTED);
    assert_eq!(d.last_decision().unwrap()[1], grouping::ABSENT);
}

#[test]
fn loss_signals_follow_the_senders_count_one_per_segment() {
    let mut d = detector("sample_spacing_ms = 0");
    // The sender has marked 3 packets lost by the time these 5 segments arrive: the first
    // three carry a signal each.
    for (i, lost) in [3, 3, 3, 3, 3].into_iter().enumerate() {
        d.on_segment(
            0,
            &SegmentObservation {
                now: i as Nanos * MS,
                owd_ns: 20_000_000,
                sender_lost_pkts: lost,
            },
        );
    }
    segment(&mut d, 0, 400 * MS, 20.0);
    assert_eq!(d.features(0).unwrap().loss_rate, 3.0 / 5.0);
}

/// A shared queue or two distinct ones, sampled every ms on two subflows.
///
/// Each queue: per 350-ms interval a level drawn in [0, 3] ms, plus a sawtooth of period 100 ms
/// that is at `amplitude` 90 % of the time and empty 10 % (a buffer that is mostly full: most
/// samples lie above the mean: skew_est ≈ −0.8, congested). Shared: one queue, amplitude 20 ms,
/// base delays 10 and 30 ms, independent ±0.2 ms noise. Distinct: independent levels and
/// amplitudes 20 and 8 ms (var_est 3.7 and 1.8 ms with seed 1: split at the second stage).
fn owd_ms(
    shared: bool,
    levels: &[[f64; 2]],
    noise: &mut [Stream; 2],
    sub: usize,
    t_ms: u64,
) -> f64 {
    let k = (t_ms / 350) as usize;
    let q = if shared { 0 } else { sub };
    let amplitude = if shared || sub == 0 { 20.0 } else { 8.0 };
    let saw = if t_ms % 100 < 90 { amplitude } else { 0.0 };
    let base = [10.0, 30.0][sub];
    base + levels[k][q] + saw + 0.4 * (noise[sub].uniform() - 0.5)
}

fn feed(shared: bool, seed: u64, until_ms: u64) -> Rfc8382 {
    let mut d = detector("");
    let mut r = Stream::new(seed, "rfc8382-test:levels");
    let levels: Vec<[f64; 2]> = (0..=until_ms / 350)
        .map(|_| [3.0 * r.uniform(), 3.0 * r.uniform()])
        .collect();
    let mut noise = [
        Stream::new(seed, "rfc8382-test:noise0"),
        Stream::new(seed, "rfc8382-test:noise1"),
    ];
    for t in 0..until_ms {
        for sub in 0..2 {
            let owd = owd_ms(shared, &levels, &mut noise, sub, t);
            segment(&mut d, sub, t * MS, owd);
        }
        ack(&mut d, t * MS);
    }
    d
}

#[test]
fn subflows_on_one_queue_are_grouped_after_ten_decisions_and_distinct_queues_are_not() {
    for seed in 1..=3 {
        // Decision j is made at j·350 ms; the tenth, at 3.5 s, is merged and sent back.
        let mut d = feed(true, seed, 3_499);
        assert_eq!(d.decisions_made, 9);
        assert_eq!(partition(&mut d, 2), [0, 1], "alone before the first merge");
        let mut d = feed(true, seed, 20_000);
        let (a, b) = (d.features(0).unwrap(), d.features(1).unwrap());
        eprintln!("shared, seed {seed}: {a:?}\n  {b:?}");
        assert!(a.skew < -0.5 && b.skew < -0.5, "both congested");
        assert!(
            same_partition(&partition(&mut d, 2), &[0, 0]),
            "seed {seed}"
        );

        let mut d = feed(false, seed, 20_000);
        let (a, b) = (d.features(0).unwrap(), d.features(1).unwrap());
        eprintln!("distinct, seed {seed}: {a:?}\n  {b:?}");
        assert!(a.skew < C_S && b.skew < C_S, "both congested");
        assert!(
            b.var_ns < 0.9 * a.var_ns,
            "split by var_est: {} vs {}",
            b.var_ns,
            a.var_ns
        );
        assert_eq!(partition(&mut d, 2), [0, 1], "seed {seed}");
    }
}

#[test]
fn the_sender_applies_a_grouping_once_an_ack_sent_after_it_arrives() {
    // Feed the shared queue to just past the first merge (3.5 s) without ACKs from then on.
    let mut d = detector("");
    let mut r = Stream::new(1, "rfc8382-test:levels");
    let levels: Vec<[f64; 2]> = (0..=12).map(|_| [3.0 * r.uniform(), 0.0]).collect();
    let mut noise = [Stream::new(1, "n0"), Stream::new(1, "n1")];
    for t in 0..3_510 {
        for sub in 0..2 {
            let owd = owd_ms(true, &levels, &mut noise, sub, t);
            segment(&mut d, sub, t * MS, owd);
        }
    }
    assert_eq!((d.decisions_made, d.merges_made), (10, 1));
    ack(&mut d, 3_499 * MS); // left before the merge (made at 3500 ms)
    assert_eq!(partition(&mut d, 2), [0, 1]);
    ack(&mut d, 3_500 * MS);
    assert_eq!(partition(&mut d, 2), [0, 0]);
}

#[test]
fn batch_merges_every_ten_decisions_and_sliding_after_each_once_ten_exist() {
    for (params, merges) in [("", 1), ("stabilisation = \"sliding\"", 6)] {
        let mut d = detector(params);
        for k in 0..=15 {
            segment(&mut d, 0, k * 350 * MS, 20.0);
        }
        assert_eq!(d.decisions_made, 15);
        assert_eq!(d.merges_made, merges, "{params}");
    }
}

#[test]
fn a_new_subflow_starts_alone() {
    // Subflows 0 and 1 grouped on the shared queue; subflow 2 appears at 5 s on the same queue.
    let mut d = feed(true, 1, 5_000);
    assert!(same_partition(&partition(&mut d, 3), &[0, 0, 2]));
    segment(&mut d, 2, 5_000 * MS, 40.0);
    ack(&mut d, 5_000 * MS);
    assert!(same_partition(&partition(&mut d, 3), &[0, 0, 2]));
}
