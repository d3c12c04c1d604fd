//! The PHY error model: a frame's success probability from its SNR, MCS and length, by the NIST
//! OFDM error-rate model (G. Pei and T. R. Henderson, "Validation of OFDM error rate model in
//! ns-3", Boeing, 2010), as ns-3 implements it (src/wifi/model/nist-error-rate-model.cc,
//! `NistErrorRateModel`):
//!
//! - the uncoded bit error rate of the constellation at SNR γ (linear): BPSK ½·erfc(√γ), QPSK
//!   ½·erfc(√(γ/2)), M-QAM ((√M − 1) / (√M · log2 √M)) · erfc(√(γ / k)) with
//!   k = ⌊2(M − 1)/3⌋ (ns-3's integer division: 10 for 16-QAM, 42 for 64-QAM);
//! - the convolutional code's first-event error bound from the Bhattacharyya parameter
//!   D = √(4p(1 − p)) and the code's distance spectrum (`CalculatePe`: rate ½ from Table 3.1.1,
//!   ⅔ and ¾ from Table 3.1.2 of the NIST report; ⅚ from Haccoun and Bégin, IEEE Trans.
//!   Commun. 32(3), 1984), capped at 1;
//! - a chunk of n bits succeeds with probability (1 − Pe)^n.
//!
//! A frame's success is its header chunk's (the 802.11a SIGNAL field: 24 bits at BPSK ½,
//! 6 Mbit/s) times its payload chunk's (N_SYM · N_DBPS bits at its MCS: the payload's duration
//! times its data rate, as ns-3's `InterferenceHelper` counts it).
//!
//! Differences from ns-3: the SNR is given (a station's `snr` or `snr_trace`), not computed from
//! transmit power, path loss and a noise figure, and it is constant over a frame (no
//! interference chunks); no preamble-detection threshold (ns-3 drops frames below about 4 dB
//! before the error model); erfc is Numerical Recipes' `erfcc` (relative error below 1.2e-7)
//! rather than the C library's.

/// A modulation of the 802.11 OFDM PHYs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modulation {
    Bpsk,
    Qpsk,
    /// M-QAM with this many points (16, 64, 256).
    Qam(u32),
}

/// A convolutional code rate, as ns-3's `bValue`: ½ (1), ⅔ (2), ¾ (3), ⅚ (5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeRate {
    Half,
    TwoThirds,
    ThreeQuarters,
    FiveSixths,
}

pub use super::super::radio::erfc;

/// The uncoded bit error rate at linear SNR `snr` (`GetBpskBer`, `GetQpskBer`, `GetQamBer`).
pub fn uncoded_ber(m: Modulation, snr: f64) -> f64 {
    match m {
        Modulation::Bpsk => 0.5 * erfc(snr.sqrt()),
        Modulation::Qpsk => 0.5 * erfc((snr / 2.0).sqrt()),
        Modulation::Qam(points) => {
            // ns-3 divides in integers: (2 (M - 1)) / 3.
            let k = f64::from((2 * (points - 1)) / 3);
            let bits_per_axis = f64::from(points).sqrt();
            (bits_per_axis - 1.0) / (bits_per_axis * bits_per_axis.log2()) * erfc((snr / k).sqrt())
        }
    }
}

/// The coded bit error bound Pe from the uncoded BER `p` (`CalculatePe`).
pub fn coded_pe(p: f64, rate: CodeRate) -> f64 {
    let d = (4.0 * p * (1.0 - p)).sqrt();
    // (first distance, weights) of each code's distance spectrum, and its 1/(2·bValue) factor.
    let (factor, first, weights): (f64, i32, &[f64]) = match rate {
        // Rate ½: distances 10, 12, ..., 26 (even only).
        CodeRate::Half => {
            let w = [
                36.0,
                211.0,
                1404.0,
                11633.0,
                77433.0,
                502690.0,
                3322763.0,
                21292910.0,
                134365911.0,
            ];
            return (0.5
                * w.iter()
                    .enumerate()
                    .map(|(i, c)| c * d.powi(10 + 2 * i as i32))
                    .sum::<f64>())
            .min(1.0);
        }
        CodeRate::TwoThirds => (
            1.0 / 4.0,
            6,
            &[
                3.0, 70.0, 285.0, 1276.0, 6160.0, 27128.0, 117019.0, 498860.0, 2103891.0, 8784123.0,
            ],
        ),
        CodeRate::ThreeQuarters => (
            1.0 / 6.0,
            5,
            &[
                42.0,
                201.0,
                1492.0,
                10469.0,
                62935.0,
                379644.0,
                2253373.0,
                13073811.0,
                75152755.0,
                428005675.0,
            ],
        ),
        CodeRate::FiveSixths => (
            1.0 / 10.0,
            4,
            &[
                92.0,
                528.0,
                8694.0,
                79453.0,
                792114.0,
                7375573.0,
                67884974.0,
                610875423.0,
                5427275376.0,
                47664215639.0,
            ],
        ),
    };
    (factor
        * weights
            .iter()
            .enumerate()
            .map(|(i, c)| c * d.powi(first + i as i32))
            .sum::<f64>())
    .min(1.0)
}

/// The probability that a chunk of `bits` bits at (`m`, `rate`) is received at linear SNR
/// `snr` (`GetFec*Ber`, which return a success rate despite their names).
pub fn chunk_success(m: Modulation, rate: CodeRate, snr: f64, bits: u64) -> f64 {
    let ber = uncoded_ber(m, snr);
    if ber == 0.0 {
        return 1.0;
    }
    let pe = coded_pe(ber, rate);
    (1.0 - pe).powf(bits as f64)
}

/// dB to a linear power ratio.
pub fn db_to_linear(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_tabulated_values() {
        // erfc(0) = 1, erfc(1) = 0.157299207, erfc(3) = 2.20904970e-5, erfc(5) = 1.53745979e-12
        // (Abramowitz and Stegun, Table 7.1; the last two from the asymptotic series).
        for (x, want) in [
            (0.0, 1.0),
            (1.0, 0.157_299_207),
            (3.0, 2.209_049_70e-5),
            (5.0, 1.537_459_79e-12),
            (-1.0, 1.842_700_793),
        ] {
            let got = erfc(x);
            assert!(
                ((got - want) / want).abs() < 2e-7,
                "erfc({x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn uncoded_ber_follows_the_nist_formulas() {
        // 64-QAM at 20 dB: 7/24 · erfc(√(100/42)) = 0.0084864 (erfc from Python's math.erfc).
        let b = uncoded_ber(Modulation::Qam(64), 100.0);
        assert!((b / 0.008_486_43 - 1.0).abs() < 1e-6, "{b}");
        // 16-QAM: 3/8 · erfc(√(γ/10)); BPSK at γ = 1: ½ erfc(1) = 0.0786496.
        let b = uncoded_ber(Modulation::Qam(16), 10.0);
        assert!((b / (0.375 * 0.157_299_207) - 1.0).abs() < 1e-6, "{b}");
        let b = uncoded_ber(Modulation::Bpsk, 1.0);
        assert!((b / 0.078_649_604 - 1.0).abs() < 1e-6, "{b}");
    }

    #[test]
    fn coded_pe_is_the_distance_spectrum_bound_capped_at_one() {
        // p = 1e-3: D = √(4e-3 · 0.999) = 0.063214; rate ¾: (42 D^5 + 201 D^6 + ... +
        // 428005675 D^14) / 6 = 1.09223e-5 (summed in Python).
        let pe = coded_pe(1e-3, CodeRate::ThreeQuarters);
        assert!((pe / 1.092_227e-5 - 1.0).abs() < 1e-5, "{pe}");
        assert_eq!(coded_pe(0.4, CodeRate::Half), 1.0);
    }
}
