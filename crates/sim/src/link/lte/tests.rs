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
