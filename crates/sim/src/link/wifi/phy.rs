//! The OFDM PHYs' timing (IEEE Std 802.11-2016: 802.11a clause 17, HT clause 19, VHT clause
//! 21) and the MAC framing that sets a data frame's length (clause 9). The free functions are
//! 802.11a's; [`Phy`] gives every standard's.

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

/// The standards the cell builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standard {
    /// 802.11a (clause 17): the eight OFDM rates, 20 MHz.
    A,
    /// 802.11n HT (clause 19), HT-mixed format, BCC, 20 or 40 MHz.
    N,
    /// 802.11ac VHT (clause 21), BCC, 20, 40 or 80 MHz.
    Ac,
}

/// A cell's PHY: standard, channel width, guard interval and spatial streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phy {
    pub standard: Standard,
    pub width_mhz: u32,
    pub short_gi: bool,
    pub streams: u32,
}

/// The modulation and code rate of HT MCS 0-7 and VHT MCS 0-9 per stream (Tables 19-27 ff.,
/// 21-30 ff.).
const HT_MODES: [(Modulation, CodeRate); 10] = [
    (Modulation::Bpsk, CodeRate::Half),
    (Modulation::Qpsk, CodeRate::Half),
    (Modulation::Qpsk, CodeRate::ThreeQuarters),
    (Modulation::Qam(16), CodeRate::Half),
    (Modulation::Qam(16), CodeRate::ThreeQuarters),
    (Modulation::Qam(64), CodeRate::TwoThirds),
    (Modulation::Qam(64), CodeRate::ThreeQuarters),
    (Modulation::Qam(64), CodeRate::FiveSixths),
    (Modulation::Qam(256), CodeRate::ThreeQuarters),
    (Modulation::Qam(256), CodeRate::FiveSixths),
];
/// The non-HT reference rate of HT/VHT MCS 0-9, as 802.11a MCS indices (10.6.6.5.2,
/// Table 10-7 and 10-8 in 802.11-2016): 6, 12, 18, 24, 36, 48, 54, 54, 54, 54 Mbit/s.
const NON_HT_REFERENCE: [usize; 10] = [0, 2, 3, 4, 5, 6, 7, 7, 7, 7];
/// A QoS Data frame's MAC header (26 B: with QoS Control, 9.3.2.1) and FCS (4 B), as HT and
/// VHT stations send.
const QOS_HEADER_FCS_BYTES: u32 = 30;

impl Phy {
    pub const A: Phy = Phy {
        standard: Standard::A,
        width_mhz: 20,
        short_gi: false,
        streams: 1,
    };

    /// MCS indices per stream: 8 (a, HT) or 10 (VHT).
    pub fn mcs_count(&self) -> usize {
        match self.standard {
            Standard::A | Standard::N => 8,
            Standard::Ac => 10,
        }
    }

    /// Data subcarriers N_SD (Tables 19-6, 21-5).
    fn n_sd(&self) -> u32 {
        match self.width_mhz {
            20 => 52,
            40 => 108,
            _ => 234,
        }
    }

    /// Whether `mcs` exists at this width and stream count: VHT combinations whose N_DBPS per
    /// encoder is not an integer are excluded (21.5; as Linux's
    /// `minstrel_get_valid_vht_rates`): MCS 9 at 20 MHz (except 3 streams), MCS 6 at 80 MHz with
    /// 3 streams.
    pub fn valid(&self, mcs: usize) -> bool {
        if mcs >= self.mcs_count() {
            return false;
        }
        match (self.standard, self.width_mhz, self.streams, mcs) {
            (Standard::Ac, 20, s, 9) => s == 3,
            (Standard::Ac, 80, 3, 6) => false,
            _ => true,
        }
    }

    pub fn mode(&self, mcs: usize) -> (Modulation, CodeRate) {
        match self.standard {
            Standard::A => MODES[mcs],
            _ => HT_MODES[mcs],
        }
    }

    /// Data bits per OFDM symbol: 802.11a's table, else N_SD · N_BPSCS · R · N_SS.
    pub fn n_dbps(&self, mcs: usize) -> u32 {
        if self.standard == Standard::A {
            return N_DBPS[mcs];
        }
        let (m, r) = HT_MODES[mcs];
        let bits = match m {
            Modulation::Bpsk => 1,
            Modulation::Qpsk => 2,
            Modulation::Qam(p) => p.trailing_zeros(),
        };
        let (num, den) = match r {
            CodeRate::Half => (1, 2),
            CodeRate::TwoThirds => (2, 3),
            CodeRate::ThreeQuarters => (3, 4),
            CodeRate::FiveSixths => (5, 6),
        };
        self.n_sd() * bits * num / den * self.streams
    }

    /// The symbol time with its guard interval, ns: 4 µs, or 3.6 µs with the short GI.
    fn symbol_ns(&self) -> Nanos {
        if self.short_gi {
            3_600
        } else {
            4_000
        }
    }

    /// The PHY rate, bit/s.
    pub fn rate_bps(&self, mcs: usize) -> u64 {
        u64::from(self.n_dbps(mcs)) * 1_000_000_000 / self.symbol_ns()
    }

    /// The highest rate of any valid MCS.
    pub fn peak_bps(&self) -> u64 {
        (0..self.mcs_count())
            .filter(|&m| self.valid(m))
            .map(|m| self.rate_bps(m))
            .max()
            .unwrap_or(0)
    }

    /// N_ES, the BCC encoders: [GAP] one per 300 Mbit/s (HT) or 600 Mbit/s (VHT) of the
    /// long-GI rate, which gives the standard's tables' values for the rates of up to 4
    /// streams at up to 80 MHz except a few VHT rates near the boundaries.
    fn n_es(&self, mcs: usize) -> u64 {
        let long_gi = u64::from(self.n_dbps(mcs)) * 250_000;
        match self.standard {
            Standard::A => 1,
            Standard::N => long_gi.div_ceil(300_000_000).max(1),
            Standard::Ac => long_gi.div_ceil(600_000_000).max(1),
        }
    }

    /// The preamble and PHY headers before the data symbols, ns: 802.11a 20 µs; HT-mixed
    /// L-STF + L-LTF 16, L-SIG 4, HT-SIG 8, HT-STF 4, N_LTF · 4 (19.4.3, Eq. 19-135); VHT
    /// 16 + 4 + VHT-SIG-A 8 + VHT-STF 4 + N_VHTLTF · 4 + VHT-SIG-B 4 (21.4.3). N_LTF for 1-4
    /// streams: 1, 2, 4, 4 (Tables 19-13, 21-13).
    pub fn preamble_ns(&self) -> Nanos {
        let n_ltf = [1, 2, 4, 4][(self.streams as usize).clamp(1, 4) - 1];
        match self.standard {
            Standard::A => PLCP_NS,
            Standard::N => (16 + 4 + 8 + 4 + 4 * n_ltf) * US,
            Standard::Ac => (16 + 4 + 8 + 4 + 4 * n_ltf + 4) * US,
        }
    }

    /// TXTIME of a PSDU of `bytes` at `mcs`: the preamble, then N_SYM = ⌈(8·LENGTH + 16 +
    /// 6·N_ES) / N_DBPS⌉ symbols; with the short GI the symbols take T_SYM · ⌈T_SYMS · N_SYM /
    /// T_SYM⌉ (Eq. 19-136).
    pub fn txtime_ns(&self, bytes: u32, mcs: usize) -> Nanos {
        let bits = 8 * u64::from(bytes) + 16 + 6 * self.n_es(mcs);
        let n_sym = bits.div_ceil(u64::from(self.n_dbps(mcs)));
        let symbols = if self.short_gi {
            SYMBOL_NS * (3_600 * n_sym).div_ceil(SYMBOL_NS)
        } else {
            SYMBOL_NS * n_sym
        };
        self.preamble_ns() + symbols
    }

    /// A data frame's PSDU carrying an IP packet of `ip_bytes`: LLC/SNAP, the MAC header and
    /// FCS (QoS Data for HT/VHT), and for VHT the A-MPDU delimiter every VHT PSDU has (a
    /// single-MPDU A-MPDU, 4 B; 10.13.8).
    pub fn psdu_bytes(&self, ip_bytes: u32) -> u32 {
        match self.standard {
            Standard::A => ip_bytes + LLC_SNAP_BYTES + MAC_HEADER_FCS_BYTES,
            Standard::N => ip_bytes + LLC_SNAP_BYTES + QOS_HEADER_FCS_BYTES,
            Standard::Ac => ip_bytes + LLC_SNAP_BYTES + QOS_HEADER_FCS_BYTES + 4,
        }
    }

    /// The air time of a data frame carrying an IP packet of `ip_bytes`.
    pub fn data_ns(&self, ip_bytes: u32, mcs: usize) -> Nanos {
        self.txtime_ns(self.psdu_bytes(ip_bytes), mcs)
    }

    /// The 802.11a rate of the Ack answering a frame at `mcs`: the highest basic rate not above
    /// its (non-HT reference) rate (10.6.6.5.2).
    pub fn ack_mcs(&self, mcs: usize) -> usize {
        match self.standard {
            Standard::A => ack_mcs(mcs),
            _ => ack_mcs(NON_HT_REFERENCE[mcs]),
        }
    }

    /// The air time of the Ack (a non-HT PPDU) answering a frame at `mcs`.
    pub fn ack_ns(&self, mcs: usize) -> Nanos {
        txtime_ns(ACK_BYTES, self.ack_mcs(mcs))
    }

    /// The probability that a data frame carrying `ip_bytes` at `mcs` is received at `snr_db`
    /// ([`error`]): its PHY header's success (802.11a SIGNAL 24 bits; HT/VHT L-SIG 24 and
    /// HT-SIG / VHT-SIG-A 48 bits, [GAP] VHT-SIG-B left out, all at BPSK ½) times its payload's
    /// (N_SYM · N_DBPS bits). [GAP] each stream at the station's SNR (no MIMO loss).
    pub fn data_success(&self, ip_bytes: u32, mcs: usize, snr_db: f64) -> f64 {
        let snr = error::db_to_linear(snr_db);
        let (m, r) = self.mode(mcs);
        let header_bits = match self.standard {
            Standard::A => SIGNAL_BITS,
            _ => SIGNAL_BITS + 48,
        };
        let n_dbps = u64::from(self.n_dbps(mcs));
        let bits = 8 * u64::from(self.psdu_bytes(ip_bytes)) + 16 + 6 * self.n_es(mcs);
        error::chunk_success(Modulation::Bpsk, CodeRate::Half, snr, header_bits)
            * error::chunk_success(m, r, snr, bits.div_ceil(n_dbps) * n_dbps)
    }
}

/// A-MPDU limits: 64 MPDUs (the Block Ack window, 10.24.7.7), a PPDU of at most 4 ms
/// (mac80211's limit, as issue 14 asks; the standard's aPPDUMaxTime is 5.484 ms for VHT), and
/// the longest A-MPDU an HT peer takes (Maximum A-MPDU Length Exponent 3: 65535 B, 9.4.2.56.3)
/// or a VHT peer (exponent 7: 1048575 B, 9.4.2.158.2).
pub const AMPDU_MAX_MPDUS: usize = 64;
pub const AMPDU_MAX_NS: Nanos = 4_000 * US;
/// A compressed BlockAck: frame control, duration, RA, TA, BA control, starting sequence
/// control, a 64-bit bitmap, FCS (32 B; 9.3.1.9).
const BLOCK_ACK_BYTES: u32 = 32;

impl Phy {
    /// The longest A-MPDU, bytes.
    pub fn ampdu_max_bytes(&self) -> u64 {
        match self.standard {
            Standard::Ac => 1_048_575,
            _ => 65_535,
        }
    }

    /// An A-MPDU subframe: the 4-byte delimiter, the MPDU (LLC/SNAP, QoS header and FCS around
    /// the IP packet) and padding to a multiple of 4 bytes (10.13.8; the last subframe's
    /// padding does not count, [GAP] kept here: at most 3 bytes).
    pub fn subframe_bytes(&self, ip_bytes: u32) -> u32 {
        (4 + ip_bytes + LLC_SNAP_BYTES + QOS_HEADER_FCS_BYTES).next_multiple_of(4)
    }

    /// The air time of an A-MPDU of subframes carrying these IP packets.
    pub fn ampdu_ns(&self, ip_bytes: impl IntoIterator<Item = u32>, mcs: usize) -> Nanos {
        let len: u32 = ip_bytes.into_iter().map(|b| self.subframe_bytes(b)).sum();
        self.txtime_ns(len, mcs)
    }

    /// The PPDU header's success probability at `snr_db` (as in [`Phy::data_success`]).
    pub fn header_success(&self, snr_db: f64) -> f64 {
        let bits = match self.standard {
            Standard::A => SIGNAL_BITS,
            _ => SIGNAL_BITS + 48,
        };
        error::chunk_success(
            Modulation::Bpsk,
            CodeRate::Half,
            error::db_to_linear(snr_db),
            bits,
        )
    }

    /// One A-MPDU subframe's success at `snr_db` given its PPDU's header was received: its
    /// bits as a chunk at the MCS ([GAP] ns-3 computes the chunks of an A-MPDU per MPDU in the
    /// same way, from their durations).
    pub fn subframe_success(&self, ip_bytes: u32, mcs: usize, snr_db: f64) -> f64 {
        let (m, r) = self.mode(mcs);
        let bits = 8 * u64::from(self.subframe_bytes(ip_bytes));
        error::chunk_success(m, r, error::db_to_linear(snr_db), bits)
    }

    /// The air time of the BlockAck answering an A-MPDU at `mcs` (at the Ack's rate).
    pub fn block_ack_ns(&self, mcs: usize) -> Nanos {
        txtime_ns(BLOCK_ACK_BYTES, self.ack_mcs(mcs))
    }
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
    fn the_phy_value_of_80211a_is_the_free_functions() {
        let a = Phy::A;
        for mcs in 0..MCS_COUNT {
            assert_eq!(a.rate_bps(mcs), rate_bps(mcs));
            for bytes in [40, 576, 1500] {
                assert_eq!(a.data_ns(bytes, mcs), data_ns(bytes, mcs));
                let (x, y) = (
                    a.data_success(bytes, mcs, 20.0),
                    data_success(bytes, mcs, 20.0),
                );
                assert_eq!(x, y);
            }
            assert_eq!(a.ack_ns(mcs), ack_ns(mcs));
        }
        assert_eq!(a.peak_bps(), 54_000_000);
    }

    #[test]
    fn ht_and_vht_rates_are_the_standards_tables() {
        let ht = |width_mhz, short_gi, streams| Phy {
            standard: Standard::N,
            width_mhz,
            short_gi,
            streams,
        };
        // Table 19-27 (20 MHz, 1 stream): 6.5 ... 65 Mbit/s, 72.2 with the short GI; Table
        // 19-28 (40 MHz): 13.5 ... 135, 150 with the short GI; 2 streams double.
        let mbps = |p: Phy| -> Vec<f64> {
            (0..p.mcs_count())
                .filter(|&m| p.valid(m))
                .map(|m| (p.rate_bps(m) as f64 / 1e5).round() / 10.0)
                .collect()
        };
        assert_eq!(
            mbps(ht(20, false, 1)),
            vec![6.5, 13.0, 19.5, 26.0, 39.0, 52.0, 58.5, 65.0]
        );
        assert_eq!(ht(20, true, 1).rate_bps(7), 72_222_222);
        assert_eq!(ht(40, false, 1).rate_bps(7), 135_000_000);
        assert_eq!(ht(40, true, 2).rate_bps(7), 300_000_000);
        let vht = |width_mhz, short_gi, streams| Phy {
            standard: Standard::Ac,
            width_mhz,
            short_gi,
            streams,
        };
        // Table 21-30 (20 MHz, 1 SS): MCS 8 78 Mbit/s, no MCS 9; 80 MHz 1 SS MCS 9: 390, 433.3
        // with the short GI; 80 MHz 3 SS has no MCS 6.
        assert_eq!(vht(20, false, 1).rate_bps(8), 78_000_000);
        assert!(!vht(20, false, 1).valid(9));
        assert_eq!(vht(80, false, 1).rate_bps(9), 390_000_000);
        assert_eq!(vht(80, true, 1).rate_bps(9), 433_333_333);
        assert!(!vht(80, false, 3).valid(6));
        assert_eq!(vht(80, true, 2).peak_bps(), 866_666_666);
    }

    #[test]
    fn ht_and_vht_frame_times() {
        // HT-mixed, 20 MHz, 1 stream, MCS 7 (N_DBPS 260): PSDU 1500 + 8 + 30 = 1538 B,
        // N_SYM = ⌈(12304 + 16 + 6) / 260⌉ = 48; 36 µs of preamble + 48 · 4 = 228 µs; with the
        // short GI 4 · ⌈3.6 · 48 / 4⌉ = 4 · 44 = 176 → 212 µs.
        let p = Phy {
            standard: Standard::N,
            width_mhz: 20,
            short_gi: false,
            streams: 1,
        };
        assert_eq!(p.preamble_ns(), 36 * US);
        assert_eq!(p.data_ns(1500, 7), 228 * US);
        assert_eq!(
            Phy {
                short_gi: true,
                ..p
            }
            .data_ns(1500, 7),
            212 * US
        );
        // Its Ack: non-HT reference 54 Mbit/s → 24 Mbit/s, 28 µs.
        assert_eq!(p.ack_ns(7), 28 * US);
        // VHT 80 MHz 1 SS MCS 9 (N_DBPS 1560): PSDU 1542 B, ⌈(12336 + 16 + 6) / 1560⌉ = 8
        // symbols; 40 µs of preamble + 32 = 72 µs.
        let v = Phy {
            standard: Standard::Ac,
            width_mhz: 80,
            short_gi: false,
            streams: 1,
        };
        assert_eq!(v.data_ns(1500, 9), 72 * US);
    }

    #[test]
    fn difs_is_34_us_and_eifs_94_us() {
        assert_eq!(DIFS_NS, 34 * US);
        assert_eq!(eifs_ns(), (16 + 44 + 34) * US);
    }
}
