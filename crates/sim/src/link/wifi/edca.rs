//! EDCA access categories (IEEE Std 802.11-2016 10.22.2): each QoS transmitter runs one
//! channel-access function (EDCAF) per access category, each with its own AIFS, CW bounds and
//! TXOP limit, from the default EDCA parameter set (9.4.2.29, Table 9-155).
//!
//! With `edca = false` (the default) every transmitter has a single DCF function (10.3.2.3.5:
//! DIFS = AIFS with AIFSN 2; aCWmin, aCWmax), as the cell was before EDCA existed.
//!
//! Differences from the standard and [GAP] choices:
//! - every transmitter, the AP too, uses Table 9-155 (see [`AccessParams::edca`]);
//! - without aggregation a TXOP holds one frame (no SIFS-separated frame bursts within the
//!   TXOP limit); with it the limit bounds the A-MPDU's air time;
//! - the backoff counts from the end of AIFS as the DCF's does from DIFS (10.22.2.2's rule
//!   that an EDCAF may decrement at the AIFS slot boundary itself is not modelled, as in ns-3);
//! - an internal collision counts against the losing frame's retry limit (as the standard's
//!   QSRC increment) but not as a retransmission in `tx_retries` (nothing went on the air);
//! - no admission control, no parameter updates from beacons.

use super::phy;
use crate::Nanos;

/// An access category (Table 10-1's UP-to-AC mapping: BK = UP 1/2, BE = 0/3, VI = 4/5,
/// VO = 6/7), in increasing priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ac {
    Bk,
    Be,
    Vi,
    Vo,
}

impl Ac {
    /// The key's spelling (`ac = "vo"`).
    pub const NAMES: [&'static str; 4] = ["bk", "be", "vi", "vo"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The category of `Ac as u8`.
    pub fn from_index(i: u8) -> Ac {
        [Ac::Bk, Ac::Be, Ac::Vi, Ac::Vo][usize::from(i)]
    }

    pub fn from_name(s: &str) -> Option<Ac> {
        match s {
            "bk" => Some(Ac::Bk),
            "be" => Some(Ac::Be),
            "vi" => Some(Ac::Vi),
            "vo" => Some(Ac::Vo),
            _ => None,
        }
    }
}

/// One channel-access function's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessParams {
    /// AIFS = aSIFSTime + AIFSN × aSlotTime (10.22.2.4, Equation 10-3); the DCF's DIFS is
    /// AIFSN 2 (10.3.2.3.5).
    pub aifsn: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// The TXOP limit (0: one MPDU or one A-MPDU per access, 10.22.2.8).
    pub txop_ns: Nanos,
}

impl AccessParams {
    /// The DCF (no QoS): DIFS, aCWmin 15, aCWmax 1023 (Table 17-21).
    pub const DCF: AccessParams = AccessParams {
        aifsn: 2,
        cw_min: phy::CW_MIN,
        cw_max: phy::CW_MAX,
        txop_ns: 0,
    };

    /// The default EDCA parameter set, Table 9-155, for the OFDM PHYs this cell models
    /// (clauses 17, 19, 21: aCWmin 15, aCWmax 1023, Table 17-21 / 19-25 / 21-29):
    ///
    /// | AC | CWmin                 | CWmax                 | AIFSN | TXOP limit (cl. 17/19/21) |
    /// |----|-----------------------|-----------------------|-------|---------------------------|
    /// | BK | aCWmin = 15           | aCWmax = 1023         | 7     | 0                         |
    /// | BE | aCWmin = 15           | aCWmax = 1023         | 3     | 0                         |
    /// | VI | (aCWmin+1)/2 − 1 = 7  | aCWmin = 15           | 2     | 3.008 ms                  |
    /// | VO | (aCWmin+1)/4 − 1 = 3  | (aCWmin+1)/2 − 1 = 7  | 2     | 1.504 ms                  |
    ///
    /// [GAP] every transmitter, the AP too, uses this table (the STA defaults,
    /// dot11EDCATable); an AP advertises it in its beacons and, by Annex C's
    /// dot11QAPEDCATable (hostapd's `tx_queue_data*` defaults), may use AIFSN 1 for VI/VO
    /// itself: not modelled.
    // (aCWmin + 1)/2 − 1 is written as the table writes it, not as a div_ceil.
    #[allow(clippy::manual_div_ceil)]
    pub fn edca(ac: Ac) -> AccessParams {
        let (a_min, a_max) = (phy::CW_MIN, phy::CW_MAX);
        match ac {
            Ac::Bk => AccessParams {
                aifsn: 7,
                cw_min: a_min,
                cw_max: a_max,
                txop_ns: 0,
            },
            Ac::Be => AccessParams {
                aifsn: 3,
                cw_min: a_min,
                cw_max: a_max,
                txop_ns: 0,
            },
            Ac::Vi => AccessParams {
                aifsn: 2,
                cw_min: (a_min + 1) / 2 - 1,
                cw_max: a_min,
                txop_ns: 3_008_000,
            },
            Ac::Vo => AccessParams {
                aifsn: 2,
                cw_min: (a_min + 1) / 4 - 1,
                cw_max: (a_min + 1) / 2 - 1,
                txop_ns: 1_504_000,
            },
        }
    }

    /// The idle slots this function waits after DIFS before its backoff counts: AIFS − DIFS
    /// = (AIFSN − 2) slots (also after EIFS: EIFS − DIFS + AIFS, 10.22.2.4).
    pub fn extra_slots(&self) -> u32 {
        self.aifsn - 2
    }

    /// The A-MPDU's air-time limit: the 4 ms aPPDUMaxTime, or the TXOP limit if shorter.
    pub fn ppdu_limit_ns(&self) -> Nanos {
        if self.txop_ns == 0 {
            phy::AMPDU_MAX_NS
        } else {
            self.txop_ns.min(phy::AMPDU_MAX_NS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_9_155_for_the_ofdm_phys() {
        let p = |ac| {
            let a = AccessParams::edca(ac);
            (a.aifsn, a.cw_min, a.cw_max, a.txop_ns)
        };
        assert_eq!(p(Ac::Bk), (7, 15, 1023, 0));
        assert_eq!(p(Ac::Be), (3, 15, 1023, 0));
        assert_eq!(p(Ac::Vi), (2, 7, 15, 3_008_000));
        assert_eq!(p(Ac::Vo), (2, 3, 7, 1_504_000));
        // AIFS[BE] = 16 + 3 × 9 = 43 µs; DIFS = 34 µs; AIFS[BK] = 79 µs.
        assert_eq!(AccessParams::edca(Ac::Be).extra_slots(), 1);
        assert_eq!(AccessParams::edca(Ac::Bk).extra_slots(), 5);
        assert_eq!(AccessParams::DCF.extra_slots(), 0);
        assert_eq!(AccessParams::edca(Ac::Vo).ppdu_limit_ns(), 1_504_000);
        assert_eq!(AccessParams::edca(Ac::Be).ppdu_limit_ns(), 4_000_000);
    }

    #[test]
    fn names_round_trip() {
        for ac in [Ac::Bk, Ac::Be, Ac::Vi, Ac::Vo] {
            assert_eq!(Ac::from_name(ac.name()), Some(ac));
        }
        assert_eq!(Ac::from_name("video"), None);
    }
}
