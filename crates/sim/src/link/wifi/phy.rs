//! The 802.11a OFDM PHY's timing (IEEE Std 802.11-2016, clause 17) and the MAC framing that
//! sets a data frame's length (clause 9).

use super::error::{self, CodeRate, Modulation};
use crate::Nanos;

const US: Nanos = 1_000;

/// aSlotTime, 9 µs (802.11-2016 Table 17-21, 20 MHz channel spacing).
pub const SLOT_NS: Nanos = 9 * US;
/// aSIFSTime, 16 µs (Table 17-21).
pub const SIFS_NS: Nanos = 16 * US;
/// DIFS = aSIFSTime + 2 × aSlotTime = 34 µs (10.3.2.3.5).
pub const DIFS_NS: Nanos = SIFS_NS + 2 * SLOT_NS;
/// aCWmin, 15 (Table 17-21).
pub const CW_MIN: u32 = 15;
/// aCWmax, 1023 (Table 17-21).
pub const CW_MAX: u32 = 1023;
/// T_PREAMBLE 16 µs + T_SIGNAL 4 µs: the PLCP preamble and header (Table 17-5).
const PLCP_NS: Nanos = 20 * US;
/// T_SYM, one OFDM symbol with its guard interval, 4 µs (Table 17-5).
const SYMBOL_NS: Nanos = 4 * US;
/// The PPDU's SERVICE field (16 bits) and tail (6 bits) (17.3.5.2, 17.3.5.3; N_SYM in 17.4.3).
const SERVICE_TAIL_BITS: u64 = 16 + 6;

/// A data frame's MAC header (24 B: frame control, duration, three addresses, sequence
/// control; 9.3.2.1) and FCS (4 B).
pub const MAC_HEADER_FCS_BYTES: u32 = 28;
/// The LLC/SNAP header before an IP packet (8 B; IEEE 802.2 with RFC 1042 encapsulation).
pub const LLC_SNAP_BYTES: u32 = 8;
/// An Ack frame: frame control, duration, RA, FCS (14 B; 9.3.1.4).
const ACK_BYTES: u32 = 14;

/// Data bits per OFDM symbol (N_DBPS) of the eight 802.11a rates, by MCS index 0-7:
/// 6, 9, 12, 18, 24, 36, 48, 54 Mbit/s (Table 17-4).
const N_DBPS: [u32; 8] = [24, 36, 48, 72, 96, 144, 192, 216];
/// The rates of the BSSBasicRateSet: [GAP] the mandatory rates 6, 12 and 24 Mbit/s (17.3.5.5
/// names them mandatory; an AP's basic rate set is configuration), as MCS indices.
const BASIC_MCS: [usize; 3] = [0, 2, 4];
/// The lowest mandatory rate, 6 Mbit/s, at which EIFS's AckTxTime is counted (10.3.2.3.7).
const LOWEST_MCS: usize = 0;

/// The modulation and code rate of the eight 802.11a rates (Table 17-4).
const MODES: [(Modulation, CodeRate); 8] = [
    (Modulation::Bpsk, CodeRate::Half),
    (Modulation::Bpsk, CodeRate::ThreeQuarters),
    (Modulation::Qpsk, CodeRate::Half),
    (Modulation::Qpsk, CodeRate::ThreeQuarters),
    (Modulation::Qam(16), CodeRate::Half),
    (Modulation::Qam(16), CodeRate::ThreeQuarters),
    (Modulation::Qam(64), CodeRate::TwoThirds),
    (Modulation::Qam(64), CodeRate::ThreeQuarters),
];
/// The SIGNAL field: one symbol at BPSK ½ (17.3.4), 24 bits.
const SIGNAL_BITS: u64 = 24;

/// Number of 802.11a MCS indices.
pub const MCS_COUNT: usize = N_DBPS.len();

/// N_DBPS of an MCS index.
pub fn n_dbps(mcs: usize) -> u32 {
    N_DBPS[mcs]
}

/// The PHY rate of an 802.11a MCS index, bit/s: N_DBPS bits per 4 µs symbol.
pub fn rate_bps(mcs: usize) -> u64 {
    u64::from(N_DBPS[mcs]) * 250_000
}

/// TXTIME of a PSDU of `bytes` at `mcs` (17.4.3, Equation 17-29): preamble and SIGNAL, then
/// N_SYM = ⌈(16 + 8·LENGTH + 6) / N_DBPS⌉ symbols.
pub fn txtime_ns(bytes: u32, mcs: usize) -> Nanos {
    let bits = SERVICE_TAIL_BITS + 8 * u64::from(bytes);
    PLCP_NS + SYMBOL_NS * bits.div_ceil(u64::from(N_DBPS[mcs]))
}

/// N_SYM · N_DBPS: the bits of a PSDU of `bytes` at `mcs`, padded to whole symbols.
fn payload_bits(bytes: u32, mcs: usize) -> u64 {
    let n_dbps = u64::from(N_DBPS[mcs]);
    (SERVICE_TAIL_BITS + 8 * u64::from(bytes)).div_ceil(n_dbps) * n_dbps
}

/// The probability that a data frame carrying an IP packet of `ip_bytes` at `mcs` is received
/// at `snr_db` ([`error`]: the SIGNAL field's success times the payload's).
pub fn data_success(ip_bytes: u32, mcs: usize, snr_db: f64) -> f64 {
    let snr = error::db_to_linear(snr_db);
    let (m, r) = MODES[mcs];
    let (hm, hr) = MODES[0];
    let psdu = ip_bytes + LLC_SNAP_BYTES + MAC_HEADER_FCS_BYTES;
    error::chunk_success(hm, hr, snr, SIGNAL_BITS)
        * error::chunk_success(m, r, snr, payload_bits(psdu, mcs))
}

/// The air time of a data frame carrying an IP packet of `ip_bytes`.
pub fn data_ns(ip_bytes: u32, mcs: usize) -> Nanos {
    txtime_ns(ip_bytes + LLC_SNAP_BYTES + MAC_HEADER_FCS_BYTES, mcs)
}

/// The rate of the Ack answering a frame sent at `mcs`: the highest rate of the
/// BSSBasicRateSet not above the eliciting frame's (10.6.6.5.2).
pub fn ack_mcs(mcs: usize) -> usize {
    BASIC_MCS
        .iter()
        .copied()
        .filter(|&b| rate_bps(b) <= rate_bps(mcs))
        .max()
        .unwrap_or(LOWEST_MCS)
}

/// The air time of the Ack answering a frame sent at `mcs`.
pub fn ack_ns(mcs: usize) -> Nanos {
    txtime_ns(ACK_BYTES, ack_mcs(mcs))
}

/// EIFS = aSIFSTime + AckTxTime at the lowest mandatory rate + DIFS (10.3.2.3.7): how long a
/// station defers after a frame it could not receive (a collision).
pub fn eifs_ns() -> Nanos {
    SIFS_NS + txtime_ns(ACK_BYTES, LOWEST_MCS) + DIFS_NS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_the_eight_80211a_rates() {
        let mbps: Vec<u64> = (0..MCS_COUNT).map(|m| rate_bps(m) / 1_000_000).collect();
        assert_eq!(mbps, vec![6, 9, 12, 18, 24, 36, 48, 54]);
    }

    #[test]
    fn a_1500_byte_packet_at_54_mbits_takes_248_us() {
        // PSDU 1536 B: (16 + 12288 + 6) / 216 = 56.99 -> 57 symbols; 20 + 57·4 = 248 µs.
        assert_eq!(data_ns(1500, 7), 248 * US);
        // At 6 Mbit/s: 12310 / 24 = 512.9 -> 513 symbols; 20 + 2052 = 2072 µs.
        assert_eq!(data_ns(1500, 0), 2072 * US);
    }

    #[test]
    fn acks_go_at_the_highest_basic_rate_not_above_the_data_rate() {
        assert_eq!(ack_mcs(7), 4); // 54 -> 24 Mbit/s
        assert_eq!(ack_mcs(3), 2); // 18 -> 12
        assert_eq!(ack_mcs(1), 0); // 9 -> 6
                                   // 14 B at 24 Mbit/s: (16 + 112 + 6) / 96 -> 2 symbols, 28 µs; at 6: 6 symbols, 44 µs.
        assert_eq!(ack_ns(7), 28 * US);
        assert_eq!(ack_ns(0), 44 * US);
    }

    #[test]
    fn frame_error_rates_follow_the_nist_model() {
        // A 1500 B packet (PSDU 1536 B), FER = 1 - success, against an independent Python
        // evaluation of ns-3's NistErrorRateModel (math.erfc; header 24 bits at BPSK ½, payload
        // N_SYM · N_DBPS bits): (mcs, snr dB, FER).
        for (mcs, snr, fer) in [
            (0, 3.5, 0.420_354),
            (0, 4.0, 0.089_721),
            (1, 7.0, 0.063_656),
            (3, 10.0, 0.065_872),
            (4, 13.0, 0.420_137),
            (5, 16.5, 0.143_661),
            (6, 21.0, 0.285_953),
            (7, 22.0, 0.496_022),
            (7, 24.0, 0.000_998_89),
        ] {
            let got = 1.0 - data_success(1500, mcs, snr);
            assert!(
                (got - fer).abs() / fer < 0.01,
                "mcs {mcs} at {snr} dB: FER {got}, want {fer}"
            );
        }
        // At 30 dB every rate is error-free to double precision.
        assert!(1.0 - data_success(1500, 7, 30.0) < 1e-15);
    }

    #[test]
    fn difs_is_34_us_and_eifs_94_us() {
        assert_eq!(DIFS_NS, 34 * US);
        assert_eq!(eifs_ns(), (16 + 44 + 34) * US);
    }
}
