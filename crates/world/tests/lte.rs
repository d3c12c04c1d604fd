//! An LTE cell (`kind = "lte"`) in whole runs: the TBS rate of one UE, proportional fairness,
//! a UE moving away, and CUBIC's slow-start exit under the uplink grant model.

use crate::common;

use common::{rows, run};
use rove_sim::link::lte::amc;

/// A cell of UEs (name, its TOML lines) each receiving `rate` of CBR datagrams, lasting
/// `duration`.
fn cell(cell_keys: &str, ues: &[(&str, &str)], rate: &str, duration: &str) -> String {
    let mut s = format!("duration = \"{duration}\"\n[links.cell]\nkind = \"lte\"\n{cell_keys}\n");
    for (name, keys) in ues {
        s += &format!("[links.cell.ues.{name}]\n{keys}\n");
    }
    for (name, _) in ues {
        s += &format!(
            "[[flows]]\nname = \"{name}\"\nworkload = \"cbr\"\nrate = \"{rate}\"\npath = [\"cell:{name}\"]\n"
        );
    }
    s
}

/// Payload bytes each flow received.
fn received_bytes(s: &rove_world::Summary) -> Vec<f64> {
    s.flows.iter().map(|f| f.bytes_delivered as f64).collect()
}

/// One UE at 30 dB without fading, saturated (100 Mbit/s offered), carries at least 95 % of the
/// TBS table's rate for its MCS: link adaptation gives CQI 15 → MCS 27 (I_TBS 25, 100 PRBs:
/// 63776 bits per 1 ms TTI), and a fixed `mcs = 28` the table's peak of 75376 bits per TTI.
/// Measured over 10 s: 63.776 and 75.377 Mbit/s of packets left the cell (100.0 % of the table
/// rate: every TTI full, no block error at 8.2 dB and 4.5 dB above the MCSs' 10 %-BLER SINR).
#[test]
fn one_ue_at_high_sinr_without_fading_carries_its_tbs_rate() {
    for (ue, mcs) in [("snr = \"30dB\"", 27), ("snr = \"30dB\"\nmcs = 28", 28)] {
        let (w, _) = run(&cell("prbs = 100", &[("u1", ue)], "100Mbps", "10s"));
        let stats = w.links[0].stats();
        let table_bps = f64::from(amc::tbs_bits(mcs, 100)) * 1000.0;
        let got_bps = stats.departed_bytes as f64 * 8.0 / 10.0;
        eprintln!(
            "MCS {mcs}: {:.3} of {:.3} Mbit/s ({:.1} %), mac drops {}",
            got_bps / 1e6,
            table_bps / 1e6,
            got_bps / table_bps * 100.0,
            stats.mac_drops
        );
        assert!(
            got_bps >= 0.95 * table_bps,
            "MCS {mcs}: {got_bps} of {table_bps}"
        );
        assert!(
            got_bps <= table_bps * 1.001,
            "MCS {mcs}: more than the table"
        );
    }
    assert_eq!(amc::tbs_bits(27, 100), 63776);
}

/// Proportional fairness: three saturated UEs at 5, 12 and 25 dB (CQI 6, 10 and 15: MCS 8, 18,
/// 27) each get the same share of their own peak (the TBS rate of its MCS over every PRB),
/// within 10 %.
/// Measured over 20 s (peaks 14.11 / 32.86 / 63.78 Mbit/s): pf shares 0.319, 0.309, 0.327
/// (their sum is under 1: HARQ retransmissions, first-transmission BLER 2.4 % at 5 dB and
/// 6.2 % at 12 dB); max-CI gives the 25 dB UE
/// everything (0, 0, 0.981); round robin 0.305, 0.327, 0.320.
#[test]
fn proportional_fair_gives_each_ue_the_same_share_of_its_own_peak() {
    let ues = [
        ("u1", "snr = \"5dB\""),
        ("u2", "snr = \"12dB\""),
        ("u3", "snr = \"25dB\""),
    ];
    let amc = amc::Amc::new(100, 1.0);
    let peaks: Vec<f64> = [5.0, 12.0, 25.0]
        .iter()
        .map(|&snr| {
            let mcs = amc.mcs_for_cqi(amc::Amc::cqi(snr));
            f64::from(amc::tbs_bits(mcs, 100)) * 1000.0 / 8.0 * 20.0
        })
        .collect();
    let mut shares_by = Vec::new();
    for sched in ["pf", "maxci", "rr"] {
        let (_, s) = run(&cell(
            &format!("scheduler = \"{sched}\""),
            &ues,
            "100Mbps",
            "20s",
        ));
        let shares: Vec<f64> = received_bytes(&s)
            .iter()
            .zip(&peaks)
            .map(|(b, p)| b / p)
            .collect();
        eprintln!(
            "{sched}: shares {shares:.3?} of peaks {:.2?} Mbit/s",
            peaks
                .iter()
                .map(|p| p * 8.0 / 20.0 / 1e6)
                .collect::<Vec<_>>()
        );
        shares_by.push(shares);
    }
    let pf = &shares_by[0];
    let mean = pf.iter().sum::<f64>() / 3.0;
    for (i, s) in pf.iter().enumerate() {
        assert!(
            (s / mean - 1.0).abs() < 0.10,
            "pf: UE {i} share {s:.3} vs mean {mean:.3}"
        );
    }
    assert!((mean - 1.0 / 3.0).abs() < 0.05, "pf: mean share {mean:.3}");
    let maxci = &shares_by[1];
    assert!(
        maxci[2] > 0.95 && maxci[0] < 0.01 && maxci[1] < 0.01,
        "maxci {maxci:?}"
    );
}

/// A UE driving away from the eNodeB at 120 km/h from 200 m (no fading): its SINR falls from
/// 36.6 dB to 7.4 dB at 1.2 km over 30 s (TR 36.814 path loss, 46 dBm, 9 dB noise figure over
/// 20 MHz), and with it the rate it gets, window after window; driving towards it from 1.2 km
/// the rate rises.
/// Measured, Mbit/s per 5 s window, backward: 63.8, 61.8, 48.5, 36.1, 28.0, 20.8;
/// forward: 20.7, 28.0, 36.0, 48.6, 61.7, 63.8.
#[test]
fn a_ue_moving_away_loses_rate_as_its_sinr_falls() {
    for (dir, start) in [("backward", "200m"), ("forward", "1200m")] {
        let ue = format!("distance = \"{start}\"\nspeed = \"120km/h\"\ndirection = \"{dir}\"");
        let mut cumulative = vec![0.0];
        for end in [5, 10, 15, 20, 25, 30] {
            let (w, _) = run(&cell("", &[("u1", &ue)], "100Mbps", &format!("{end}s")));
            cumulative.push(w.links[0].stats().departed_bytes as f64);
        }
        let windows: Vec<f64> = cumulative
            .windows(2)
            .map(|w| (w[1] - w[0]) * 8.0 / 5.0 / 1e6)
            .collect();
        eprintln!("{dir}: {windows:.1?} Mbit/s");
        let mut ordered = windows.clone();
        if dir == "forward" {
            ordered.reverse();
        }
        for w in ordered.windows(2) {
            assert!(w[1] <= w[0] * 1.001, "{dir}: {windows:?}");
        }
        assert!(ordered[5] < 0.5 * ordered[0], "{dir}: {windows:?}");
    }
}

/// Handover along a road of eNodeBs 2 km apart: a UE driving away from the first at 120 km/h
/// from 100 m (saturated, no fading) is handed over to the second at about 1091 m (3 dB
/// hysteresis: 37.6 log10(x / (2000 − x)) = 3), 29.7 s in, and its rate recovers as it nears
/// it, where alone with one eNodeB it keeps falling. At the handover its 7 MB RLC queue is
/// forwarded (`handover_rlc = "forward"`: no packet lost) or lost (`"lost"`: every queued
/// packet a MAC drop).
/// Measured, Mbit/s per 5 s window (0-40 s), one eNodeB: 63.8, 63.8, 57.4, 42.9, 32.7, 24.9,
/// 18.7, 14.5; three: the same to 25.0, then 34.6, 45.2 (both `handover_rlc` values alike: the
/// saturating source refills a lost queue at once). MAC drops: forwarded 0, lost
/// 4666 (the deep queue of 1500-byte packets: 7 MB / 1500 B).
#[test]
fn a_ue_handed_over_to_the_next_cell_recovers_its_rate_and_keeps_or_loses_its_queue() {
    let ue = "distance = \"100m\"\nspeed = \"120km/h\"";
    let windows = |cell_keys: &str| {
        let mut cumulative = vec![(0.0, 0)];
        for end in (5..=40).step_by(5) {
            let (w, _) = run(&cell(
                cell_keys,
                &[("u1", ue)],
                "100Mbps",
                &format!("{end}s"),
            ));
            let st = w.links[0].stats();
            cumulative.push((st.departed_bytes as f64, st.mac_drops));
        }
        let rates: Vec<f64> = cumulative
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) * 8.0 / 5.0 / 1e6)
            .collect();
        (rates, cumulative.last().unwrap().1)
    };
    let (one, _) = windows("");
    let (forward, forward_drops) = windows("cells = 3\ncell_spacing = \"2km\"");
    let (lost, lost_drops) = windows("cells = 3\ncell_spacing = \"2km\"\nhandover_rlc = \"lost\"");
    eprintln!("one cell {one:.1?}\nforward {forward:.1?} (mac drops {forward_drops})\nlost {lost:.1?} (mac drops {lost_drops})");
    for w in one.windows(2) {
        assert!(w[1] <= w[0] * 1.001, "one cell: {one:?}");
    }
    assert!(
        forward[7] > 1.5 * one[7],
        "forward {forward:?} vs one {one:?}"
    );
    let low = forward.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        forward[7] > low * 1.5,
        "recovers after the handover: {forward:?}"
    );
    assert_eq!(forward_drops, 0);
    assert!(lost_drops > 1000, "lost: {lost_drops}");
}

/// A TCP download over a 100 Mbit/s wired path of `wan_ms` each way and the cell (one UE at
/// 20 dB, no fading: CQI 12, MCS 22, 46.9 Mbit/s; a 1 MB RLC queue), its ACKs back over the
/// UE's uplink as `uplink_keys` (TOML lines: `uplink = "grants"`, every 5 ms; `"per_packet"`,
/// each on its own; `"sr_bsr"`, scheduling requests and buffer status reports).
fn download(cc: &str, cc_params: &str, uplink_keys: &str, wan_ms: u32, seed: u64) -> String {
    format!(
        r#"
duration = "2s"
sample_interval = "1ms"
seed = {seed}
[links.wan]
rate = "100Mbps"
delay = "{wan_ms}ms"
[links.wan_up]
rate = "100Mbps"
delay = "{wan_ms}ms"
[links.cell]
kind = "lte"
{uplink_keys}
rlc_buffer = "1MB"
[links.cell.ues.u1]
snr = "20dB"
[[flows]]
name = "down"
cc = "{cc}"
cc_params = {{ {cc_params} }}
path = ["wan", "cell:u1"]
ack_path = ["cell:u1:up", "wan_up"]
"#
    )
}

/// The slow-start exit: (time s, ssthresh) at the first 1 ms sample where ssthresh is set.
fn exit(cc: &str, cc_params: &str, uplink_keys: &str, wan_ms: u32, seed: u64) -> (f64, u32) {
    let (w, _) = run(&download(cc, cc_params, uplink_keys, wan_ms, seed));
    let f = &w.recorder.flows;
    let r = rows(f);
    let initial = f.ssthresh_pkts[r[0]];
    let i = *r
        .iter()
        .find(|&&i| f.ssthresh_pkts[i] != initial)
        .expect("slow start left within the run");
    (f.time_s[i], f.ssthresh_pkts[i])
}

const GRANTS: &str = "uplink = \"grants\"";
const PER_PACKET: &str = "uplink = \"per_packet\"";
const SR_BSR: &str = "uplink = \"sr_bsr\"";
/// seed-002's two latency classes as the wired path's one-way delay: "4G" (33 ms: a minimum
/// RTT of 68 ms with per-packet ACKs) and "low latency" (8 ms: 18 ms).
const LATENCIES_WAN_MS: [u32; 2] = [33, 8];

/// NewReno, without HyStart, leaves slow start at its first loss (the RLC queue full) whatever
/// the uplink: grants do not make it leave earlier.
/// Measured (time s, ssthresh), seeds 1-3: grants (0.677, 979) (0.657, 938) (0.667, 949);
/// per-packet (0.645, 954) (0.627, 915) (0.635, 928): grants 30 ms later (the ACKs wait for
/// their grant).
#[test]
fn uplink_grants_do_not_make_newreno_leave_slow_start_earlier() {
    for seed in 1..=3 {
        let grants = exit("reno", "", GRANTS, 20, seed);
        let per_ack = exit("reno", "", PER_PACKET, 20, seed);
        eprintln!("seed {seed}: reno grants {grants:?} per-ack {per_ack:?}");
        assert!(
            grants.0 >= per_ack.0,
            "seed {seed}: {grants:?} vs {per_ack:?}"
        );
        assert!(
            grants.1 > 600 && per_ack.1 > 600,
            "left by a loss, not early"
        );
    }
}

/// Expected failure (strict: the test fails if the assertion starts to hold). seed-002's
/// finding: ACKs batched by uplink grants make CUBIC's HyStart leave slow start earlier than
/// when each ACK goes up on its own. Measured (time s, ssthresh), seeds 1-3: grants
/// (0.327, 323) (0.387, 636) (0.392, 636); per-packet (0.275, 258) three times: with grants
/// CUBIC leaves *later*. Suspected cause: in this model the batching breaks HyStart's ACK
/// train (ACKs at most 2 ms apart; a 5 ms grant period puts 5 ms gaps in every train), which
/// is what ends slow start near the BDP with per-packet ACKs, while the delay test (the round's
/// minimum over its first 8 RTT samples above the minimum RTT by 5.25 ms) fires at the same
/// window either way (`hystart_detect = "delay"`: 323 with both uplinks); the RTT jumps of a
/// batch stay under the grant period. Grant periods of 8 and 10 ms, two more saturated UEs
/// sharing the cell, and Linux 4.10's HyStart give the same order; EVA fading at 120 km/h
/// (seeds 1-3: grants 30, 88, 322 against per-packet 322, 30, 88) mixes it. seed-002 saw the
/// effect in ns-3 and on real cells, where the downlink scheduler's compression of data from
/// several bursts into one TTI (and the UE's scheduling-request delay) make larger jumps than
/// this model's periodic grants.
#[test]
#[should_panic(expected = "grants make CUBIC leave slow start earlier")]
fn uplink_grants_make_cubic_leave_slow_start_earlier() {
    for seed in 1..=3 {
        let grants = exit("cubic", "", GRANTS, 20, seed);
        let per_ack = exit("cubic", "", PER_PACKET, 20, seed);
        eprintln!("seed {seed}: cubic grants {grants:?} per-ack {per_ack:?}");
        assert!(
            grants.1 < per_ack.1,
            "grants make CUBIC leave slow start earlier: seed {seed}: {grants:?} vs {per_ack:?}"
        );
    }
}

/// The request-grant uplink (`sr_bsr`, defaults: SR every 10 ms, grants 4 ms after an SR or
/// a BSR's PUSCH, PUSCH 4 ms after the grant) adds at least `grant_delay` + `pusch_delay` +
/// 1 ms = 9 ms to every ACK (an ACK reaching an idle UE just before an SR opportunity), and
/// at most an SR period more on the fastest: the flow's minimum RTT grows by 9-19 ms.
/// Measured at 2 s (seed 1): minimum RTT 68 → 80 ms at 4G latency, 18 → 27 ms at low latency.
#[test]
fn sr_bsr_uplink_adds_its_request_grant_cycle_to_the_minimum_rtt() {
    for wan in LATENCIES_WAN_MS {
        let min_rtt = |uplink: &str| {
            let (w, _) = run(&download("cubic", "", uplink, wan, 1));
            let f = &w.recorder.flows;
            *rows(f).last().map(|&i| &f.min_rtt_ms[i]).unwrap()
        };
        let (per_packet, sr_bsr) = (min_rtt(PER_PACKET), min_rtt(SR_BSR));
        eprintln!("wan {wan} ms: min RTT per-packet {per_packet} ms, sr_bsr {sr_bsr} ms");
        let added = sr_bsr - per_packet;
        assert!(
            (9.0..=19.0).contains(&added),
            "wan {wan} ms: {per_packet} → {sr_bsr}"
        );
    }
}

/// NewReno has no HyStart: with the request-grant uplink it still leaves slow start at its
/// first loss, not earlier than with per-packet ACKs, at both of seed-002's latencies.
/// Measured (time s, ssthresh), seeds 1-3: 4G latency sr_bsr (1.003, 1102) (1.011, 1137)
/// (1.011, 1135), per-packet (0.865, 1045) (0.865, 1045) (0.875, 1064); low latency sr_bsr
/// (0.558, 911) (0.566, 927) (0.562, 925), per-packet (0.441, 828) (0.437, 827) (0.444, 839).
#[test]
fn uplink_sr_bsr_does_not_make_newreno_leave_slow_start_earlier() {
    for wan in LATENCIES_WAN_MS {
        for seed in 1..=3 {
            let sr_bsr = exit("reno", "", SR_BSR, wan, seed);
            let per_ack = exit("reno", "", PER_PACKET, wan, seed);
            eprintln!("wan {wan} ms seed {seed}: reno sr_bsr {sr_bsr:?} per-ack {per_ack:?}");
            assert!(
                sr_bsr.0 >= per_ack.0 && sr_bsr.1 >= per_ack.1,
                "wan {wan} ms seed {seed}: {sr_bsr:?} vs {per_ack:?}"
            );
        }
    }
}

/// Expected failure (strict: the test fails if the assertion starts to hold). seed-002's
/// finding with the request-grant uplink (`sr_bsr`, its defaults): CUBIC leaves slow start
/// earlier (a lower ssthresh, every seed) than with per-packet ACKs, at both latencies.
/// Measured (time s, ssthresh), seeds 1-3:
/// - 4G latency: sr_bsr (0.795, 1276) three times; per-packet (0.512, 478) (0.512, 478)
///   (0.689, 1276); periodic grants (0.700, 1276) (0.700, 1276) (0.705, 1276).
/// - low latency: sr_bsr (0.230, 322) (0.230, 322) (0.230, 323); per-packet (0.121, 201)
///   (0.101, 125) (0.101, 125); periodic grants (0.125, 166) (0.160, 330) (0.160, 330).
///
/// CUBIC leaves *later*, as with periodic grants. Ablation (`hystart_detect`): the delay test
/// alone fires at the same window with either uplink (4G: 1276 both; low: 322-323 against
/// 324-330), when the RLC queue builds; the ACK train alone ends per-packet slow start early
/// (478, 478, 1428; 201, 125, 125) but never sr_bsr's (1543-1592; 1276-1298). Suspected cause:
/// the first ACKs of a round leave with the SR's grant and the rest wait for the grants its BSR
/// brings, `pusch_delay` + `grant_delay` = 8 ms later: every round's train has an 8 ms hole,
/// and HyStart's train test (ACKs at most 2 ms apart) never completes. The round-start jump
/// the suspected cause expected does not appear: ACKs reaching a UE that already holds data
/// wait for their BSR and its grant (about 13 ms), longer than the SR path's 9 ms minimum, so
/// a round's first 8 RTT samples are not above the minimum by the delay threshold. Ablation of
/// the SR (`sr_bsr_slow_start_exit_ablation`, ssthresh at 4G / low latency): `sr_period` 5 ms
/// and 20 ms leave as late as 10 ms; 1 ms gives (643, 643, 1276) / (88, 88, 88): earlier at low
/// latency only, by the delay test (the BSR path's 13 ms against the SR path's 9 ms), the
/// opposite of the round-start mechanism; `sr_grant` 100 B: (643, 643, 643) / (322, 332,
/// 332); 2500 B: 1276 / (636, 322, 636).
#[test]
#[should_panic(expected = "sr_bsr makes CUBIC leave slow start earlier")]
fn uplink_sr_bsr_makes_cubic_leave_slow_start_earlier() {
    for wan in LATENCIES_WAN_MS {
        for seed in 1..=3 {
            let sr_bsr = exit("cubic", "", SR_BSR, wan, seed);
            let per_ack = exit("cubic", "", PER_PACKET, wan, seed);
            eprintln!("wan {wan} ms seed {seed}: cubic sr_bsr {sr_bsr:?} per-ack {per_ack:?}");
            assert!(
                sr_bsr.1 < per_ack.1,
                "sr_bsr makes CUBIC leave slow start earlier: wan {wan} ms seed {seed}: {sr_bsr:?} vs {per_ack:?}"
            );
        }
    }
}

/// Not a check: prints CUBIC's slow-start exits (time s, ssthresh; seeds 1-3) at both
/// latencies for the per-packet, periodic-grant and request-grant uplinks and the request-grant
/// ablations quoted above. Run with `--ignored --nocapture`.
#[test]
#[ignore]
fn sr_bsr_slow_start_exit_ablation() {
    let sr = |keys: &str| format!("{SR_BSR}\n{keys}");
    let uplinks = [
        ("per_packet", PER_PACKET.to_string()),
        ("grants", GRANTS.to_string()),
        ("sr_bsr", SR_BSR.to_string()),
        ("sr_period 1ms", sr("sr_period = \"1ms\"")),
        ("sr_period 5ms", sr("sr_period = \"5ms\"")),
        ("sr_period 20ms", sr("sr_period = \"20ms\"")),
        ("sr_grant 100B", sr("sr_grant = \"100B\"")),
        ("sr_grant 2500B", sr("sr_grant = \"2500B\"")),
    ];
    for wan in LATENCIES_WAN_MS {
        for detect in ["both", "delay", "ack_train"] {
            let params = format!("hystart_detect = \"{detect}\"");
            for (name, keys) in &uplinks {
                let exits: Vec<(f64, u32)> = (1..=3)
                    .map(|seed| exit("cubic", &params, keys, wan, seed))
                    .collect();
                eprintln!("wan {wan} ms, hystart_detect {detect}, {name}: {exits:?}");
            }
        }
    }
}

/// Expected failure (strict: the test fails if the assertion starts to hold). The hypothesis
/// for seed-002's finding with uplink HARQ (`uplink_bler = 0.1`, 8 ms retransmissions, at most
/// 4 transmissions, in-order release): one failed block delays every ACK it carries, so with
/// batched ACKs (grants, `sr_bsr`) a round's first 8 RTT samples rise together and HyStart's
/// delay test leaves slow start earlier than with per-packet ACKs. Asserted: at each wired delay
/// (20 ms as the grants test; 33 and 8 ms, seed-002's 4G and low latency), grants or `sr_bsr`
/// leave with a lower ssthresh than per-packet for every seed.
/// Measured ssthresh (`uplink_harq_slow_start_exit_measurement`), seeds 1-3:
/// - 20 ms: per-packet 166/166/322 (0.262-0.317 s); grants 323/636/30; sr_bsr 168/168/30.
/// - 33 ms: per-packet 643 ×3 (0.57 s); grants 643/1276/1276; sr_bsr 1276 ×3 (0.81 s).
/// - 8 ms: per-packet 166/173/173 (0.13 s); grants 166/330/30; sr_bsr 322/166/30.
///
/// Mixed: a failed block early in slow start (cwnd 30, seed 3) ends it for grants and sr_bsr
/// (the hypothesised mechanism, once), but otherwise batched uplinks leave as late as without
/// HARQ, and per-packet ACKs now leave *earlier* than without HARQ (20 ms: 258 → 166): with
/// in-order release a failed packet's 8 ms holds every ACK sent behind it, a batch in effect.
/// Ablation (`uplink_in_order = false`, each block released at its own decoding): per-packet
/// returns to its no-HARQ exits (20 ms 258 ×3; 33 ms 478/478/1276; 8 ms 201/125/125: one
/// delayed ACK does not move the round's minimum), grants and sr_bsr barely move (20 ms
/// 323/608/30 and 168/168/30). `hystart_detect = "delay"` gives the default's exits for
/// every in-order row (the delay test ends slow start); `"ack_train"` alone never ends it
/// before the first loss with in-order HARQ (ssthresh 1212-1625). NewReno (first loss):
/// 20 ms per-packet 1011/1018/1016, grants 979/997/965, sr_bsr 1017/1074/1058; 33 ms
/// 1104/1121/1138, 1091/1132/1123, 1109/1130/1161; 8 ms 896/895/910, 865/874/975,
/// 945/959/905.
#[test]
#[should_panic(expected = "uplink HARQ makes CUBIC leave slow start earlier with batched ACKs")]
fn uplink_harq_makes_cubic_leave_slow_start_earlier_with_batched_acks() {
    let harq = |keys: &str| format!("{keys}\nuplink_bler = 0.1");
    for wan in [20, 33, 8] {
        let ssthresh = |keys: &str| -> Vec<u32> {
            (1..=3)
                .map(|seed| exit("cubic", "", &harq(keys), wan, seed).1)
                .collect()
        };
        let per_ack = ssthresh(PER_PACKET);
        let grants = ssthresh(GRANTS);
        let sr_bsr = ssthresh(SR_BSR);
        eprintln!("wan {wan} ms: per-packet {per_ack:?} grants {grants:?} sr_bsr {sr_bsr:?}");
        let earlier = |b: &[u32]| b.iter().zip(&per_ack).all(|(b, p)| b < p);
        assert!(
            earlier(&grants) || earlier(&sr_bsr),
            "uplink HARQ makes CUBIC leave slow start earlier with batched ACKs: wan {wan} ms: \
             per-packet {per_ack:?} grants {grants:?} sr_bsr {sr_bsr:?}"
        );
    }
}

const OUT_OF_ORDER: &str = "uplink_in_order = false";

/// Not a check: prints CUBIC's and NewReno's slow-start exits (time s, ssthresh; seeds 1-3) with
/// uplink HARQ (`uplink_bler = 0.1`) for the three uplinks at the wired delays of the tests
/// above (20 ms; 33 and 8 ms), and CUBIC's HyStart tests alone. Run with `--ignored
/// --nocapture`.
#[test]
#[ignore]
fn uplink_harq_slow_start_exit_measurement() {
    let harq = |keys: &str| format!("{keys}\nuplink_bler = 0.1");
    let uplinks = [
        ("per_packet", harq(PER_PACKET)),
        ("grants", harq(GRANTS)),
        ("sr_bsr", harq(SR_BSR)),
        (
            "per_packet out of order",
            harq(&format!("{PER_PACKET}\n{OUT_OF_ORDER}")),
        ),
        (
            "grants out of order",
            harq(&format!("{GRANTS}\n{OUT_OF_ORDER}")),
        ),
        (
            "sr_bsr out of order",
            harq(&format!("{SR_BSR}\n{OUT_OF_ORDER}")),
        ),
    ];
    for wan in [20, 33, 8] {
        for (cc, params) in [
            ("reno", ""),
            ("cubic", ""),
            ("cubic", "hystart_detect = \"delay\""),
            ("cubic", "hystart_detect = \"ack_train\""),
        ] {
            for (name, keys) in &uplinks {
                let exits: Vec<(f64, u32)> = (1..=3)
                    .map(|seed| exit(cc, params, keys, wan, seed))
                    .collect();
                eprintln!("wan {wan} ms, {cc} {{{params}}}, {name} + HARQ: {exits:?}");
            }
        }
    }
}

/// The cell's keys are checked when the scenario is parsed, each error naming the full key.
#[test]
fn bad_cell_keys_are_one_line_errors_naming_the_full_key() {
    let err = |keys: &str| {
        let text = format!(
            "duration = \"1s\"\n[links.cell]\nkind = \"lte\"\n{keys}\n[[flows]]\npath = [\"cell:u1\"]\nack_path = [\"cell:u1:up\"]\n"
        );
        common::parse_error(&text)
    };
    let (at, msg) = err("[links.cell.ues.u1]\nsnr = \"loud\"");
    assert_eq!(at, "links.cell.ues.u1.snr");
    assert!(msg.contains("20dB"), "{msg}");
    let (at, msg) = err("rate = \"10Mbps\"\n[links.cell.ues.u1]\nsnr = 20");
    assert_eq!(at, "links.cell.rate");
    assert!(msg.contains("kind \"lte\""), "{msg}");
    let (at, _) = err("[links.cell.ues.u1]\nsnr = 20\ndirection = \"sideways\"");
    assert_eq!(at, "links.cell.ues.u1.direction");
    let (at, msg) = err("[links.cell.ues.u2]\nsnr = 20");
    assert_eq!(at, "flows[0].path[0]");
    assert!(msg.contains("u2:up"), "{msg}");
}
