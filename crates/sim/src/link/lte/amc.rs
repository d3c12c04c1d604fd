//! Link adaptation: SINR → CQI → MCS → transport block size, and the first-transmission block
//! error rate of an MCS at a SINR.
//!
//! - CQI: TS 36.213 Table 7.2.3-1 (modulation, code rate × 1024); the UE reports the highest
//!   CQI whose transport block it would receive with BLER ≤ 10 % (7.2.3). [GAP] The SINR at
//!   which each CQI reaches 10 % BLER: Kawser et al., "Downlink SNR to CQI Mapping for Different
//!   Multiple Antenna Techniques in LTE", IJIEE 2(5), 2012 (SISO, AWGN), [`CQI_SINR_DB`].
//! - CQI → MCS (7.2.3): the MCS of the CQI's modulation whose effective code rate, in the CSI
//!   reference resource, is closest to the CQI's code rate. The reference resource (7.2.3): the
//!   first 3 OFDM symbols for control, normal cyclic prefix, CRS of 2 antenna ports: 12 × 14 −
//!   36 − 12 = 120 resource elements per PRB pair ([`RE_PER_PRB`]), and a transport block of
//!   TBS + 24 CRC bits.
//! - MCS → (Q_m, I_TBS): Table 7.1.7.1-1; TBS: Table 7.1.7.2.1-1 ([`super::tbs_table`]).
//! - [GAP] BLER of the first transmission of MCS m at SINR γ (dB): a Gaussian-CDF curve in dB,
//!   the shape of Mezzavilla et al., "A lightweight and accurate link abstraction model for the
//!   simulation of LTE networks in ns-3", MSWiM 2012 (BLER = ½ erfc((γ − b)/(√2 c))), placed so
//!   that BLER = 10 % at the MCS's threshold, with width c = `bler_sigma` (default 1 dB). An
//!   MCS's threshold interpolates [`CQI_SINR_DB`] linearly in spectral efficiency (Q_m × its
//!   effective code rate), extrapolating the last segment above CQI 15 (MCS 28: 25.5 dB).

use super::super::radio::erfc;
use super::tbs_table::TBS;

/// Resource elements per PRB pair for data in the CSI reference resource (TS 36.213 7.2.3:
/// 3 control symbols, normal CP, 2 CRS ports): 168 − 36 − 12.
pub const RE_PER_PRB: u32 = 120;

/// CRC bits per transport block (TS 36.212 5.3.2: a 24-bit CRC).
pub const TB_CRC_BITS: u32 = 24;

/// Highest MCS index with a TBS (TS 36.213 Table 7.1.7.1-1; 29-31 are retransmission-only).
pub const MAX_MCS: usize = 28;

/// TS 36.213 Table 7.1.7.1-1: (modulation order Q_m, TBS index) per MCS index 0-28.
#[rustfmt::skip]
const MCS_TABLE: [(u32, usize); 29] = [
    (2, 0), (2, 1), (2, 2), (2, 3), (2, 4), (2, 5), (2, 6), (2, 7), (2, 8), (2, 9),
    (4, 9), (4, 10), (4, 11), (4, 12), (4, 13), (4, 14), (4, 15),
    (6, 15), (6, 16), (6, 17), (6, 18), (6, 19), (6, 20), (6, 21), (6, 22), (6, 23), (6, 24),
    (6, 25), (6, 26),
];

/// TS 36.213 Table 7.2.3-1: (modulation order, code rate × 1024) for CQI 1-15 (index 0 is CQI 1;
/// CQI 0 is "out of range").
#[rustfmt::skip]
pub const CQI_TABLE: [(u32, u32); 15] = [
    (2, 78), (2, 120), (2, 193), (2, 308), (2, 449), (2, 602),
    (4, 378), (4, 490), (4, 616),
    (6, 466), (6, 567), (6, 666), (6, 772), (6, 873), (6, 948),
];

/// [GAP] SINR (dB) at which CQI 1-15 reaches 10 % BLER: Kawser et al. 2012 (SISO, AWGN).
#[rustfmt::skip]
pub const CQI_SINR_DB: [f64; 15] = [
    -6.7, -4.7, -2.3, 0.2, 2.4, 4.3, 5.9, 8.1, 10.3, 11.7, 14.1, 16.3, 18.7, 21.0, 22.7,
];

/// Q⁻¹(0.1): a BLER curve crosses 10 % this many widths above its midpoint.
const Z_10_PERCENT: f64 = 1.281_551_565_545;

/// (Q_m, I_TBS) of an MCS (TS 36.213 Table 7.1.7.1-1).
pub fn mcs_entry(mcs: usize) -> (u32, usize) {
    MCS_TABLE[mcs]
}

/// Transport block size, bits, of `mcs` over `prbs` PRBs (TS 36.213 7.1.7.2.1, one layer).
pub fn tbs_bits(mcs: usize, prbs: u32) -> u32 {
    let (_, itbs) = MCS_TABLE[mcs];
    TBS[itbs][prbs as usize - 1]
}

/// The spectral efficiency of a CQI, bits per resource element (Q_m × code rate).
pub fn cqi_efficiency(cqi: usize) -> f64 {
    let (qm, rate) = CQI_TABLE[cqi - 1];
    f64::from(qm) * f64::from(rate) / 1024.0
}

/// The effective code rate of `mcs` over `prbs` PRBs in the CSI reference resource.
pub fn mcs_code_rate(mcs: usize, prbs: u32) -> f64 {
    let (qm, _) = MCS_TABLE[mcs];
    f64::from(tbs_bits(mcs, prbs) + TB_CRC_BITS) / f64::from(RE_PER_PRB * prbs * qm)
}

/// Link adaptation for a cell of `prbs` PRBs: the MCS of each CQI and the 10 %-BLER SINR of
/// each MCS, computed once.
#[derive(Debug, Clone)]
pub struct Amc {
    /// MCS of CQI 1-15 (index 0: CQI 1).
    cqi_mcs: [usize; 15],
    /// 10 %-BLER SINR of MCS 0-28, dB.
    mcs_threshold_db: [f64; MAX_MCS + 1],
    /// Width of the BLER curves, dB.
    sigma_db: f64,
}

impl Amc {
    pub fn new(prbs: u32, sigma_db: f64) -> Self {
        let mut cqi_mcs = [0; 15];
        for (c, slot) in cqi_mcs.iter_mut().enumerate() {
            let (qm, rate) = CQI_TABLE[c];
            let target = f64::from(rate) / 1024.0;
            // 7.2.3: same modulation, effective code rate closest to the CQI's (the lower MCS
            // on a tie).
            *slot = (0..=MAX_MCS)
                .filter(|&m| MCS_TABLE[m].0 == qm)
                .min_by(|&a, &b| {
                    let da = (mcs_code_rate(a, prbs) - target).abs();
                    let db = (mcs_code_rate(b, prbs) - target).abs();
                    da.total_cmp(&db).then(a.cmp(&b))
                })
                .expect("every modulation has MCSs");
        }
        let mut mcs_threshold_db = [0.0; MAX_MCS + 1];
        for (m, slot) in mcs_threshold_db.iter_mut().enumerate() {
            let eff = f64::from(MCS_TABLE[m].0) * mcs_code_rate(m, prbs);
            *slot = threshold_at_efficiency(eff);
        }
        Amc {
            cqi_mcs,
            mcs_threshold_db,
            sigma_db,
        }
    }

    /// The CQI a UE reports at `sinr_db`: the highest whose 10 %-BLER SINR it reaches; 0 (out of
    /// range) below CQI 1's.
    pub fn cqi(sinr_db: f64) -> usize {
        CQI_SINR_DB.iter().take_while(|&&t| sinr_db >= t).count()
    }

    /// The MCS the eNodeB uses for a reported CQI (1-15).
    pub fn mcs_for_cqi(&self, cqi: usize) -> usize {
        self.cqi_mcs[cqi - 1]
    }

    /// The SINR (dB) at which `mcs`'s first transmission has 10 % BLER.
    pub fn threshold_db(&self, mcs: usize) -> f64 {
        self.mcs_threshold_db[mcs]
    }

    /// Block error rate of `mcs` at `sinr_db`.
    pub fn bler(&self, mcs: usize, sinr_db: f64) -> f64 {
        q_function((sinr_db - self.mcs_threshold_db[mcs]) / self.sigma_db + Z_10_PERCENT)
    }
}

/// The 10 %-BLER SINR of a spectral efficiency: [`CQI_SINR_DB`] interpolated linearly between the
/// CQIs' efficiencies, the end segments extended.
fn threshold_at_efficiency(eff: f64) -> f64 {
    let seg = (1..14).find(|&i| eff < cqi_efficiency(i + 1)).unwrap_or(14);
    let (e0, e1) = (cqi_efficiency(seg), cqi_efficiency(seg + 1));
    let (t0, t1) = (CQI_SINR_DB[seg - 1], CQI_SINR_DB[seg]);
    t0 + (eff - e0) * (t1 - t0) / (e1 - e0)
}

/// Q(x) = ½ erfc(x / √2), the standard normal tail.
pub fn q_function(x: f64) -> f64 {
    0.5 * erfc(x / std::f64::consts::SQRT_2)
}
