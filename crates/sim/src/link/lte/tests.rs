use super::amc::{self, Amc};
use super::channel::{self, Fading, Profile};
use super::tbs_table::TBS;
use crate::rng::Stream;

#[test]
fn tbs_lookups_match_table_7_1_7_2_1_1() {
    // Values read by hand from TS 36.213 Table 7.1.7.2.1-1 (I_TBS row, N_PRB column).
    assert_eq!(TBS[0][0], 16); // I_TBS 0, 1 PRB
    assert_eq!(TBS[26][0], 712); // I_TBS 26, 1 PRB
    assert_eq!(TBS[6][0], 328); // the standard's odd entry
    assert_eq!(TBS[9][49], 7992); // I_TBS 9, 50 PRBs
    assert_eq!(TBS[15][24], 7736); // I_TBS 15, 25 PRBs
    assert_eq!(TBS[26][5], 4392); // I_TBS 26, 6 PRBs (1.4 MHz peak)
    assert_eq!(TBS[26][24], 18336); // I_TBS 26, 25 PRBs (5 MHz)
    assert_eq!(TBS[26][49], 36696); // I_TBS 26, 50 PRBs (10 MHz)
    assert_eq!(TBS[26][99], 75376); // I_TBS 26, 100 PRBs (20 MHz): 75.4 Mbit/s
    assert_eq!(TBS[26][109], 75376); // I_TBS 26, 110 PRBs
                                     // MCS → I_TBS (Table 7.1.7.1-1): MCS 9 and 10 share I_TBS 9, 16 and 17 share 15, 28 is 26.
    assert_eq!(amc::mcs_entry(9), (2, 9));
    assert_eq!(amc::mcs_entry(10), (4, 9));
    assert_eq!(amc::mcs_entry(16), (4, 15));
    assert_eq!(amc::mcs_entry(17), (6, 15));
    assert_eq!(amc::tbs_bits(28, 100), 75376);
    assert_eq!(amc::tbs_bits(10, 50), 7992);
    // Peak: MCS 28 over 100 PRBs, one TB per 1 ms TTI: 75.376 Mbit/s.
    assert_eq!(u64::from(amc::tbs_bits(28, 100)) * 1000, 75_376_000);
    // Every I_TBS row grows with N_PRB (but for the 328 at N_PRB 1).
    for (i, row) in TBS.iter().enumerate() {
        for n in 1..109 {
            assert!(row[n + 1] >= row[n], "I_TBS {i}, N_PRB {}", n + 2);
        }
    }
}

#[test]
fn cqi_from_sinr_and_mcs_from_cqi() {
    assert_eq!(Amc::cqi(-7.0), 0);
    assert_eq!(Amc::cqi(-6.7), 1);
    assert_eq!(Amc::cqi(10.0), 8);
    assert_eq!(Amc::cqi(22.7), 15);
    assert_eq!(Amc::cqi(40.0), 15);
    // TS 36.213 7.2.3: same modulation, closest effective code rate in the reference resource
    // (120 REs per PRB, TBS + 24 CRC bits). By hand, CQI 15 (64QAM, 948/1024 = 0.926):
    // MCS 27 (I_TBS 25, 100 PRBs) gives 0.886, MCS 28 (75376 + 24) / (120 · 100 · 6) = 1.047:
    // MCS 27. CQI 7 (16QAM, 378/1024 = 0.369): MCS 11.
    let amc = Amc::new(100, 1.0);
    let mcs: Vec<usize> = (1..=15).map(|c| amc.mcs_for_cqi(c)).collect();
    assert_eq!(
        mcs,
        vec![0, 0, 2, 4, 6, 8, 11, 13, 15, 18, 20, 22, 24, 26, 27]
    );
    assert!((amc::mcs_code_rate(28, 100) - 75_400.0 / 72_000.0).abs() < 1e-12);
}

#[test]
fn bler_is_ten_percent_at_an_mcs_threshold_and_falls_with_sinr() {
    let amc = Amc::new(100, 1.0);
    // CQI 15 efficiency 5.5547 at 22.7 dB, CQI 14 5.1152 at 21.0 dB: 3.868 dB per bit/RE;
    // MCS 28's efficiency 6 × 1.0472 = 6.283 → 22.7 + 0.728 × 3.868 = 25.52 dB.
    assert!(
        (amc.threshold_db(28) - 25.52).abs() < 0.01,
        "{}",
        amc.threshold_db(28)
    );
    for m in 0..=amc::MAX_MCS {
        let t = amc.threshold_db(m);
        assert!((amc.bler(m, t) - 0.1).abs() < 1e-6, "MCS {m}");
        // Q(1.2816 + 1.0449) = Q(2.3263) = 1 %.
        assert!((amc.bler(m, t + 1.0449) - 0.01).abs() < 1e-4, "MCS {m}");
        assert!(amc.bler(m, t - 3.0) > 0.9);
    }
    assert!((amc::q_function(0.0) - 0.5).abs() < 1e-7);
    assert!((amc::q_function(1.959_964) - 0.025).abs() < 1e-7);
}

#[test]
fn path_loss_noise_and_doppler_by_hand() {
    // TR 36.814: 128.1 + 37.6 log10(d km).
    assert!((channel::path_loss_db(1000.0) - 128.1).abs() < 1e-9);
    assert!((channel::path_loss_db(100.0) - 90.5).abs() < 1e-9);
    assert!((channel::path_loss_db(10.0) - channel::path_loss_db(35.0)).abs() < 1e-9);
    // −174 dBm/Hz + 10 log10(100 × 180 kHz) + 9 dB = −174 + 72.553 + 9.
    assert!((channel::noise_dbm(100, 9.0) + 92.447).abs() < 1e-3);
    // 300 km/h at 2 GHz: 83.33 m/s × 2e9 / 299792458 = 555.9 Hz.
    assert!((channel::doppler_hz(300.0 / 3.6, 2e9) - 555.94).abs() < 0.01);
    assert_eq!(channel::subband_prbs(100), 8);
    assert_eq!(channel::subband_prbs(50), 6);
    assert_eq!(channel::subband_prbs(6), 6);
}

#[test]
fn faded_channels_keep_the_mean_power_and_vary_at_the_doppler_rate() {
    for profile in [Profile::Epa, Profile::Eva, Profile::Etu, Profile::Hst] {
        // One PRB (one subband): the capacity mean is the channel gain itself.
        let mut f = Fading::new(profile, 100.0, 6, &mut Stream::new(3, "fade"));
        let n = 20_000;
        // Samples 1 ms apart over 20 s: 2000 Doppler periods.
        let mean: f64 = (0..n)
            .map(|k| f.effective_sinr(k * 1_000_000, 1.0))
            .sum::<f64>()
            / n as f64;
        // Mean |H|² is 1 over a frequency-flat band; for 6 PRBs of a dispersive channel the
        // gain is still unit-mean.
        assert!((mean - 1.0).abs() < 0.1, "{profile:?}: {mean}");
    }
    // Rayleigh (EVA at one subband) fades deeply: some TTIs 10 dB below the mean.
    let mut f = Fading::new(Profile::Eva, 100.0, 6, &mut Stream::new(3, "fade"));
    let deep = (0..20_000u64)
        .filter(|&k| f.effective_sinr(k * 1_000_000, 1.0) < 0.1)
        .count();
    assert!(deep > 100, "{deep}");
    // A Doppler of 0 is a static channel; `none` is the mean.
    let mut f = Fading::new(Profile::Eva, 0.0, 100, &mut Stream::new(3, "fade"));
    let a = f.effective_sinr(0, 100.0);
    assert_eq!(a, f.effective_sinr(5_000_000_000, 100.0));
    let mut f = Fading::new(Profile::None, 100.0, 100, &mut Stream::new(3, "fade"));
    assert_eq!(f.effective_sinr(123, 42.0), 42.0);
}

mod counters {
    //! The cell's `radio.parquet` counters on a hand-built one-UE cell.
    use super::super::super::wifi::counters::{RadioCounters, RadioSeries};
    use super::super::super::{LinkModel, LinkOutput, Offer};
    use super::super::{Lte, KIND, TTI_NS};
    use crate::Nanos;
    use rove_scenario::spec::{JitterSpec, LinkSpec, LossSpec, QueueLimit, QueueSpec, Serializer};

    fn cell(model: &str) -> Lte {
        let model: toml::Table = model.parse().unwrap();
        let shape = (KIND.check)(&model).unwrap();
        let spec = LinkSpec {
            name: "cell".into(),
            kind: "lte".into(),
            serializer: Serializer::Model {
                peak_bps: shape.peak_bps,
            },
            delay_ns: 0,
            queue: QueueSpec::DropTail {
                limit: QueueLimit::Packets(1000),
            },
            loss: LossSpec::None,
            jitter: None::<JitterSpec>,
            outages: Vec::new(),
            ports: shape.ports,
            model,
        };
        Lte::new(&spec, 1)
    }

    /// Offers `n` 1500-byte packets to port `port` at `now`; returns the service time asked.
    fn offer(
        l: &mut Lte,
        now: Nanos,
        n: u32,
        port: u16,
        out: &mut Vec<LinkOutput>,
    ) -> Option<Nanos> {
        let mut next = None;
        for id in 0..n {
            let offer = Offer {
                id,
                bytes: 1500,
                port,
                flow: 0,
            };
            next = l.offer(now, offer, out).or(next);
        }
        next
    }

    /// A 20 MHz cell, one UE at a fixed 10 dB SINR without fading, a BLER curve so narrow
    /// (0.1 dB) that its MCS never fails 1.9 dB above its threshold, 2000 packets queued at 0
    /// (3 MB: more than the 100 ms it is served), sampled every 10 ms.
    #[test]
    fn a_one_ue_cell_at_a_fixed_sinr_reports_the_tables_cqi_mcs_and_tbs() {
        let mut l = cell("prbs = 100\nbler_sigma = \"0.1dB\"\n[ues.u1]\nsnr = 10");
        let mut out = Vec::new();
        let mut next = offer(&mut l, 0, 2000, 0, &mut out);
        assert_eq!(next, Some(0));
        let mut rows = RadioSeries::default();
        let mut t = 0;
        while t <= 100 * TTI_NS {
            if t % (10 * TTI_NS) == 0 {
                l.sample_radio(t, 0, &mut rows);
            }
            if next == Some(t) {
                next = l.service(t, &mut out);
            }
            t += TTI_NS;
        }
        assert!(rows.lte);
        assert_eq!(rows.len(), 2 * 11); // "u1" and "u1:up" at 0, 10, ..., 100 ms
                                        // By hand: CQI from TS 36.213 Table 7.2.3-1 at the Kawser et al. thresholds: 10 dB
                                        // reaches CQI 8's 8.1 dB, not CQI 9's 10.3: CQI 8 (16QAM, 490/1024). Its MCS over 100
                                        // PRBs: 13 (amc test above). MCS 13 → I_TBS 12 (Table 7.1.7.1-1); TBS(I_TBS 12, 100
                                        // PRBs) = 22920 bits (Table 7.1.7.2.1-1): 22.92 Mbit/s.
        const TBS: u64 = 22_920;
        for k in 0..rows.len() {
            let down = rows.port[k] == 0;
            let ms = (rows.time_s[k] * 1e3).round() as u64;
            assert_eq!(rows.signal_db[k], 10.0);
            assert_eq!(rows.cell_prbs[k], 100);
            if !down {
                assert!(rows.cqi[k].is_nan() && rows.mcs[k].is_nan());
                assert_eq!(rows.tx_bytes[k], 0);
                continue;
            }
            // A sample at t is taken before the TTI at t is served: t/1 ms TTIs so far.
            let ttis = ms;
            if ttis == 0 {
                assert!(rows.cqi[k].is_nan() && rows.mcs[k].is_nan());
            } else {
                assert_eq!((rows.cqi[k], rows.mcs[k]), (8.0, 13.0), "row {k}");
                assert_eq!(rows.tx_bitrate_bps[k], (TBS * 1000) as f64);
            }
            // Every TTI all 100 PRBs, one decoded block of 22920 bits, no HARQ activity.
            assert_eq!(rows.prbs[k], 100 * ttis);
            assert_eq!(rows.cell_prbs_used[k], 100 * ttis);
            assert_eq!(rows.tbs_bits[k], TBS * ttis);
            assert_eq!((rows.tx_retries[k], rows.phy_errors[k]), (0, 0));
            assert_eq!((rows.harq_failures[k], rows.mac_drops[k]), (0, 0));
            // Delivered bytes: the whole packets in those bits (the TBS is whole bytes; 2865
            // bytes a TTI); the head packet's segment sent so far is not yet delivered.
            let sent = TBS / 8 * ttis;
            assert_eq!(rows.tx_bytes[k], sent / 1500 * 1500, "row {k}");
            assert_eq!(rows.tx_packets[k], sent / 1500);
            assert_eq!(rows.backlog_bytes[k], 2000 * 1500 - sent);
            assert_eq!(rows.qlen[k] as u64, 2000 - sent / 1500);
        }
        // Over the window 20-90 ms: TBS bits = delivered capacity, 70 TTIs × 22920 bits, and
        // the cell's PRB utilisation 1.
        let at = |ms: u64| {
            (0..rows.len())
                .find(|&k| rows.port[k] == 0 && (rows.time_s[k] * 1e3).round() as u64 == ms)
                .unwrap()
        };
        let (a, b) = (at(20), at(90));
        assert_eq!(rows.tbs_bits[b] - rows.tbs_bits[a], 70 * TBS);
        let util = (rows.cell_prbs_used[b] - rows.cell_prbs_used[a]) as f64 / (70.0 * 100.0);
        assert_eq!(util, 1.0);
        // The delivered IP bytes over the window are within one packet of it.
        let delivered = (rows.tx_bytes[b] - rows.tx_bytes[a]) as i64;
        assert!(
            (delivered - (70 * TBS / 8) as i64).abs() < 1500,
            "{delivered}"
        );
    }

    #[test]
    fn a_full_rlc_queue_counts_overflow_drops_on_its_port() {
        // "shallow" = 120 KB: 80 packets fit, 20 are dropped.
        let mut l = cell("rlc_buffer = \"shallow\"\n[ues.u1]\nsnr = 10\n[ues.u2]\nsnr = 10");
        let mut out = Vec::new();
        offer(&mut l, 0, 100, 2, &mut out);
        let mut rows = RadioSeries::default();
        l.sample_radio(0, 3, &mut rows);
        assert_eq!(rows.port, vec![0, 1, 2, 3]);
        assert_eq!(rows.link, vec![3; 4]);
        assert_eq!(rows.overflow_drops, vec![0, 0, 20, 0]);
        assert_eq!(rows.qlen, vec![0, 0, 80, 0]);
        assert_eq!(rows.backlog_bytes[2], 120_000);
    }

    /// The request-grant uplink's backlog is the UE's buffer (it was read from the grant
    /// uplinks' queue only, so it showed 0): three 300-byte packets reach an idle UE at 0.5 ms,
    /// and none can leave before the grant answering the SR of the 10 ms opportunity, so the
    /// uplink row at 5 ms holds all three.
    #[test]
    fn the_request_grant_uplinks_backlog_is_the_ues_buffer() {
        let mut l = cell("uplink = \"sr_bsr\"\n[ues.u1]\nsnr = 10");
        let mut out = Vec::new();
        for id in 0..3 {
            let offer = Offer {
                id,
                bytes: 300,
                port: 1,
                flow: 0,
            };
            l.offer(TTI_NS / 2, offer, &mut out);
        }
        let mut rows = RadioSeries::default();
        l.sample_radio(5 * TTI_NS, 0, &mut rows);
        assert_eq!((rows.qlen[1], rows.backlog_bytes[1]), (3, 900));
    }
}

mod uplink_harq {
    //! Uplink HARQ (`uplink_bler`): a failed transport block is retransmitted 8 ms later (TS
    //! 36.213 8 / 9.1.2), its packets released when it is decoded and not before an earlier
    //! block's. The expected times replay the link's `ul_harq` stream by hand.
    use super::super::super::{LinkModel, LinkOutput, Offer};
    use super::super::{Lte, KIND};
    use crate::rng::Stream;
    use crate::Nanos;
    use rove_scenario::spec::{JitterSpec, LinkSpec, LossSpec, QueueLimit, QueueSpec, Serializer};

    const MS: Nanos = 1_000_000;

    fn cell(model: &str) -> Lte {
        let model: toml::Table = model.parse().unwrap();
        let shape = (KIND.check)(&model).unwrap();
        let spec = LinkSpec {
            name: "cell".into(),
            kind: "lte".into(),
            serializer: Serializer::Model {
                peak_bps: shape.peak_bps,
            },
            delay_ns: 10 * MS,
            queue: QueueSpec::DropTail {
                limit: QueueLimit::Packets(1000),
            },
            loss: LossSpec::None,
            jitter: None::<JitterSpec>,
            outages: Vec::new(),
            ports: shape.ports,
            model,
        };
        Lte::new(&spec, 1)
    }

    /// Offers 1500-byte packets to u1's uplink at the given times (ms); returns the outputs.
    fn send(l: &mut Lte, at_ms: &[u64]) -> Vec<LinkOutput> {
        let mut out = Vec::new();
        for (id, &t) in at_ms.iter().enumerate() {
            let offer = Offer {
                id: id as u32,
                bytes: 1500,
                port: 1,
                flow: 0,
            };
            assert_eq!(l.offer(t * MS, offer, &mut out), None);
        }
        out
    }

    /// The transmissions of the next blocks by hand: failures (probability `bler`) before the
    /// first success, `None` after `max` failures.
    fn fates(n: usize, bler: f64, max: u64) -> Vec<Option<u64>> {
        let mut rng = Stream::new(1, "link:cell:ul_harq");
        (0..n)
            .map(|_| (1..=max).find(|_| rng.uniform() >= bler))
            .collect()
    }

    fn delivered(out: &[LinkOutput]) -> Vec<Option<Nanos>> {
        out.iter()
            .map(|o| match *o {
                LinkOutput::Deliver { at, .. } => Some(at),
                LinkOutput::Drop { .. } => None,
            })
            .collect()
    }

    /// Grants every 5 ms (12.5 kB each at 20 Mbit/s): packets at 1, 2 ms go in the 5 ms grant's
    /// block, at 6, 7 ms in the 10 ms one's, at 11, 16, 21 ms in the 15, 20, 25 ms ones'. A
    /// block sent in the TTI at g is received at g + 1 ms + 8 ms per failed transmission, its
    /// packets delivered 10 ms (`delay`) later, not before an earlier block is decided.
    #[test]
    fn grants_one_block_per_grant_retransmitted_8_ms_later_in_order() {
        let mut l = cell("uplink_bler = 0.5\n[ues.u1]\nsnr = 10");
        let out = send(&mut l, &[1, 2, 6, 7, 11, 16, 21]);
        // Seed 1's draws at BLER 0.5 (checked so that the case tested is the one described):
        // block 1 is received at its first transmission, block 2 at its fourth, block 3 fails
        // all four, blocks 4 and 5 are received at their first.
        let f = fates(5, 0.5, 4);
        assert_eq!(f, vec![Some(1), Some(4), None, Some(1), Some(1)]);
        let d = |ms: u64| Some(ms * MS);
        assert_eq!(
            delivered(&out),
            vec![
                d(16), // block 1: 5 + 1 ms, + 10 ms
                d(16),
                d(45), // block 2: 10 + 1 + 3 × 8 = 35 ms, + 10 ms
                d(45),
                None,  // block 3: lost, decided at 15 + 1 + 3 × 8 = 40 ms
                d(50), // block 4: received at 21 ms, held behind block 3 until 40 ms
                d(50), // block 5: received at 26 ms, likewise
            ]
        );
    }

    /// Per packet at 20 Mbit/s: a 1500-byte packet takes 0.6 ms; each is its own block.
    #[test]
    fn per_packet_one_block_per_packet() {
        let mut l = cell("uplink = \"per_packet\"\nuplink_bler = 0.5\n[ues.u1]\nsnr = 10");
        let out = send(&mut l, &[1, 2, 6, 7, 11]);
        let f = fates(5, 0.5, 4);
        assert_eq!(f, vec![Some(1), Some(4), None, Some(1), Some(1)]);
        // Serialized by t + 0.6 ms; + 8 ms per failed transmission; in order; + 10 ms.
        let us = |x: u64| Some(x * 1000);
        assert_eq!(
            delivered(&out),
            vec![
                us(11_600), // 1.6 ms
                us(36_600), // 2.6 + 24 ms
                None,       // lost, decided at 6.6 + 24 = 30.6 ms
                us(40_600), // 7.6 ms, held until 30.6 ms
                us(40_600), // 11.6 ms, likewise
            ]
        );
        // The ablation: each block released at its own decoding.
        let mut l = cell(
            "uplink = \"per_packet\"\nuplink_bler = 0.5\nuplink_in_order = false\n[ues.u1]\nsnr = 10",
        );
        let out = send(&mut l, &[1, 2, 6, 7, 11]);
        assert_eq!(
            delivered(&out),
            vec![us(11_600), us(36_600), None, us(17_600), us(21_600)]
        );
    }

    /// `uplink_harq_max = 1`: a failed block is lost at once, its packets MAC drops; the default
    /// (`uplink_bler` = 0) delivers at the grant's TTI's end.
    #[test]
    fn a_block_failing_every_transmission_is_lost_and_bler_zero_is_today() {
        let mut l = cell("uplink_bler = 0.5\nuplink_harq_max = 1\n[ues.u1]\nsnr = 10");
        let out = send(&mut l, &[1, 2, 6]);
        // The draws above: block 1 (grant 5 ms) is received, block 2 (grant 10 ms) fails its
        // one transmission: its packet is dropped.
        let d = |ms: u64| Some(ms * MS);
        assert_eq!(delivered(&out), vec![d(16), d(16), None]);
        let mut l = cell("[ues.u1]\nsnr = 10");
        let out = send(&mut l, &[1, 2, 6]);
        assert_eq!(delivered(&out), vec![d(16), d(16), d(21)]);
    }
}
