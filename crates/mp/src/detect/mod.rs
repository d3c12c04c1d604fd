//! Shared-bottleneck detection: which subflows of a multipath connection cross the same
//! bottleneck.
//!
//! # The concept
//!
//! A coupled congestion control should be coupled only where subflows really compete: subflows
//! behind one bottleneck must together take no more than one flow's share there, while subflows
//! on disjoint bottlenecks may each take a full share ("bottleneck fairness", seed-001 §1). The
//! sender cannot see the topology; it can only correlate what each subflow measures (RTT
//! samples, losses, a BBR-family path model) and guess a *partition* of the subflows into
//! shared-bottleneck sets. A detector turns those observations into such a partition:
//!
//! ```text
//!   connection ── on_ack(sub, AckObservation) ──▶ Detector ── partition(now, groups) ──▶ coupling
//!              ── on_loss_event(sub, now)     ──▶          (groups[i] = set id of subflow i)
//!   receiver   ── on_segment(sub, SegmentObservation) ──▶   (receiver-side detectors only)
//! ```
//!
//! Most detectors watch the sender's ACKs. A receiver-side detector (`rfc8382`) watches the data
//! segments as they arrive ([`Detector::on_segment`]: the one-way delay from the sender's
//! timestamp, and the sender's loss count that the segment signals) and sends its grouping back
//! on the ACKs ([`AckObservation::sent_at`] tells when an ACK left the receiver).
//!
//! A partition is a `&[u32]` of set ids, one per subflow: equal ids share a bottleneck, the values
//! mean nothing else. [`canonical`] rewrites ids as the index of each set's first member, so that
//! equal partitions are equal slices; [`same_partition`] compares two partitions up to
//! relabelling (what the detection-accuracy metric counts, seed-001 §2.3: the fraction of 100 ms
//! samples whose partition equals the topology's).
//!
//! # The detectors
//!
//! | name | file | signals | summary |
//! |---|---|---|---|
//! | `bccps` | [`bccps`] | RTT rises in PROBE_BW, PROBE_RTT entries | BCCPS's S1 + S2 (seed-001 §2.3) |
//! | `dwc` | [`dwc`] | loss events + srtt above a delay threshold | the DWC baseline (seed-001 §3) |
//! | `rfc8382` | [`rfc8382`] | one-way delays and loss signals at the receiver | RFC 8382 SBD as MPTCP-SSCC uses it (seed-000 §4.3) |
//! | `none` | [`fixed`] | — | every subflow independent |
//! | (`truth`) | [`fixed`] | — | a fixed partition supplied by the caller ([`Fixed::new`]) |
//!
//! * **bccps** (Wei et al., TVT 2021). S1: while subflows are in BBR's PROBE_BW, an RTT that
//!   rises linearly (a least-squares fit over one RTprop) at the same time (within one RTprop)
//!   on two subflows is a vote that they share a bottleneck; two votes in the last three make
//!   them a *candidate* pair, and candidate pairs join into candidate sets (connected
//!   components). S2: a candidate set is *confirmed* when all its members enter PROBE_RTT within
//!   ±(200 ms + max RTprop) of each other (behind one bottleneck, one subflow's PROBE_RTT drains
//!   the queue and the others refresh their min_rtt, so their 10 s timers line up), and
//!   cancelled otherwise. Only confirmed sets are reported by default. The paper gives no
//!   threshold; every number is the summary's suggested default [GAP] and a parameter. Subflows
//!   without a path model (non-BBR congestion control) never pair: see [`bccps`].
//! * **dwc** (Hassayoun, Iyengar, Ros, ICNP 2011). When a subflow has a loss event, every
//!   other subflow that shows a congestion signal (a loss event, or an srtt above
//!   minRTT + 0.5·(maxRTT − minRTT)) within one srtt of it is grouped with it; otherwise the
//!   pair is separated. The DWC paper itself was not available; the threshold and window are
//!   the summary's [GAP] choices, see [`dwc`].
//! * **rfc8382** (RFC 8382; MPTCP-SBD; MPTCP-SSCC's Dynamic Coupling Module, thesis §5.4.2).
//!   At the receiver, per subflow and per 350-ms interval, the one-way delays' mean, skewness,
//!   variability (mean absolute deviation) and the frequency of mean crossings over the last 50
//!   intervals (Eqs. 5.1–5.7), plus the loss rate; subflows are split into non-congested and
//!   congested ones, and the congested ones grouped by similar statistics (Fig. 5.6); ten
//!   decisions are merged pairwise (together in ≥ 5) into the grouping the receiver sends back.
//!   Non-congested subflows and groups of one are uncoupled. See [`rfc8382`].
//! * **none** / **truth**: fixed partitions, the baselines of "no coupling" and "perfect
//!   detection". The caller builds `truth` from the topology with [`Fixed::new`].
//!
//! # Parameters
//!
//! Every detector accepts `interval_ms` (integer 1..=60000, default 100): how often the
//! connection should call [`Detector::partition`] ([`Detector::interval`]). The period is not
//! in any source [GAP]; 100 ms is the sampling period of the summary's accuracy metric. The
//! other keys are each detector's own (see their files); an unknown key is rejected with the
//! accepted list.
//!
//! To add a detector: write `detect/NAME.rs` implementing [`Detector`] with a `build` function
//! and its `PARAM_KEYS`, and add one line to [`REGISTRY`].
//!
//! Sets are kept as 64-bit masks, so a detector follows at most [`MAX_SUBFLOWS`] subflows;
//! observations of higher indices are ignored (the connection's scheduler bit sets allow 8).

pub mod bccps;
pub mod dwc;
pub mod fixed;
#[cfg(test)]
pub(crate) mod fluid;
pub mod rfc8382;

pub use bccps::Bccps;
pub use dwc::Dwc;
pub use fixed::Fixed;
pub use rfc8382::Rfc8382;

use rove_sim::{Nanos, NS_PER_MS};
use rove_tcp::cc::params;
use rove_tcp::cc::{reject_unknown, ParamError, PathModel};

/// What the connection tells a detector about one ACK of one subflow.
#[derive(Debug, Clone, Copy)]
pub struct AckObservation {
    pub now: Nanos,
    /// This ACK's RTT sample, µs (None when it carried none).
    pub rtt_us: Option<u64>,
    /// The subflow's smoothed RTT, µs (0 before a sample).
    pub srtt_us: u64,
    /// The subflow's path model when its congestion control has one (BBR family).
    pub model: Option<PathModel>,
    /// When the ACK left the receiver (a receiver-side detector's grouping rides on ACKs).
    pub sent_at: Nanos,
}

/// What the receiver tells a detector about one data segment of one subflow (receiver-side
/// detectors; [`Detector::on_segment`]).
#[derive(Debug, Clone, Copy)]
pub struct SegmentObservation {
    /// Arrival time at the receiver.
    pub now: Nanos,
    /// One-way delay: the receiver's clock minus the sender's timestamp on the segment, ns. Only
    /// differences and statistics of it may be used: the two clocks need not agree.
    pub owd_ns: i64,
    /// Packets the sender has marked lost on this subflow, ever: what MPTCP-SSCC's timestamp
    /// option signals to the receiver, one loss per segment (its L bit).
    pub sender_lost_pkts: u64,
}

pub trait Detector: Send + Sync {
    fn name(&self) -> &'static str;
    /// Every ACK of subflow `sub` (indices from 0; a subflow added later first appears here).
    fn on_ack(&mut self, sub: usize, obs: &AckObservation);
    /// Subflow `sub` entered a loss event (fast recovery or an RTO) at `now`.
    fn on_loss_event(&mut self, sub: usize, now: Nanos);
    /// A data segment of subflow `sub` reached the receiver. The connection calls it only when
    /// a detection runs; sender-side detectors ignore it.
    fn on_segment(&mut self, _sub: usize, _obs: &SegmentObservation) {}
    /// The grouping at `now`: `groups[i]` is subflow i's shared-bottleneck set id (equal ids share
    /// a bottleneck, distinct ids are independent; the values carry no other meaning). Called
    /// periodically by the connection (every [`Detector::interval`]); periodic work may happen
    /// here.
    fn partition(&mut self, now: Nanos, groups: &mut [u32]);
    /// How often the connection should call [`Detector::partition`] (the `interval_ms`
    /// parameter every detector accepts).
    fn interval(&self) -> Nanos {
        DEFAULT_INTERVAL_MS as Nanos * NS_PER_MS
    }
}

/// Detection interval [GAP]: the sampling period of seed-001 §2.3's suggested accuracy metric.
pub const DEFAULT_INTERVAL_MS: u32 = 100;
/// Subflows a detector follows (sets are u64 bit masks).
pub const MAX_SUBFLOWS: usize = 64;
/// Keys every detector accepts.
pub const COMMON_KEYS: &[&str] = &["interval_ms"];

/// The parameters every detector shares, read by [`build`].
#[derive(Debug, Clone, Copy)]
pub struct Common {
    pub interval: Nanos,
}

impl Default for Common {
    fn default() -> Self {
        Common {
            interval: DEFAULT_INTERVAL_MS as Nanos * NS_PER_MS,
        }
    }
}

type Builder = fn(&toml::Table, Common, usize) -> Result<Box<dyn Detector>, ParamError>;

/// Every detector rove knows: (name, its own parameter keys, constructor). Add a line here for
/// a new detector. (`truth` is not here: it needs the topology, see [`Fixed::new`].)
pub const REGISTRY: &[(&str, &[&str], Builder)] = &[
    ("none", &[], fixed::build_none),
    ("bccps", bccps::PARAM_KEYS, bccps::build),
    ("dwc", dwc::PARAM_KEYS, dwc::build),
    ("rfc8382", rfc8382::PARAM_KEYS, rfc8382::build),
];

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _, _)| *n).collect()
}

/// Builds detector `name` for a connection that starts with `subflows` subflows. An unknown
/// name is an error on the key `detector`; an unknown parameter is rejected with the accepted
/// keys (the common ones and the detector's own).
pub fn build(
    name: &str,
    params: &toml::Table,
    subflows: usize,
) -> Result<Box<dyn Detector>, ParamError> {
    let Some((_, keys, builder)) = REGISTRY.iter().find(|(n, _, _)| *n == name) else {
        return Err(ParamError {
            key: "detector".to_string(),
            message: format!(
                "unknown detector \"{name}\"; accepted: {}",
                names().join(", ")
            ),
        });
    };
    let accepted: Vec<&str> = COMMON_KEYS.iter().chain(keys.iter()).copied().collect();
    reject_unknown(params, &accepted)?;
    if subflows > MAX_SUBFLOWS {
        return Err(ParamError {
            key: "subflows".to_string(),
            message: format!("{subflows} subflows; a detector follows at most {MAX_SUBFLOWS}"),
        });
    }
    let common = Common {
        interval: params::integer(params, "interval_ms", DEFAULT_INTERVAL_MS, 1, 60_000, "ms")?
            as Nanos
            * NS_PER_MS,
    };
    builder(params, common, subflows)
}

/// A real number in `[min, max]` (`unit` says what it measures); `default` when absent.
pub(crate) fn real(
    t: &toml::Table,
    key: &str,
    default: f64,
    min: f64,
    max: f64,
    unit: &str,
) -> Result<f64, ParamError> {
    match params::number(t, key)? {
        None => Ok(default),
        Some(x) if (min..=max).contains(&x) => Ok(x),
        Some(x) => Err(ParamError {
            key: key.to_string(),
            message: format!("{x} is out of range; accepted: a number in [{min}, {max}] ({unit})"),
        }),
    }
}

/// Rewrites set ids in place as the index of each set's first member: `[7, 3, 7, 9]` becomes
/// `[0, 1, 0, 3]`. Two partitions are equal up to relabelling iff their canonical forms are equal.
pub fn canonical(groups: &mut [u32]) {
    // From the back: positions before i still hold their original ids, so the first position
    // holding groups[i]'s id is found among them (or is i itself).
    for i in (0..groups.len()).rev() {
        let id = groups[i];
        let first = groups[..i].iter().position(|&g| g == id).unwrap_or(i);
        groups[i] = first as u32;
    }
}

/// Whether `a` and `b` group the same subflows together (equal up to relabelling).
pub fn same_partition(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && (0..a.len()).all(|i| (0..i).all(|j| (a[i] == a[j]) == (b[i] == b[j])))
}

/// Union–find over at most [`MAX_SUBFLOWS`] elements, on the stack (connected components of a
/// pair relation, for the detectors' sets).
pub(crate) struct UnionFind {
    parent: [u8; MAX_SUBFLOWS],
}

impl UnionFind {
    pub fn new() -> Self {
        let mut parent = [0u8; MAX_SUBFLOWS];
        for (i, p) in parent.iter_mut().enumerate() {
            *p = i as u8;
        }
        UnionFind { parent }
    }

    pub fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] as usize != x {
            let up = self.parent[x] as usize;
            self.parent[x] = self.parent[up];
            x = up;
        }
        x
    }

    pub fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        // The smaller index becomes the root, so roots are deterministic.
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        self.parent[hi] = lo as u8;
    }

    /// Writes each element's root into `groups` (elements past the union–find's size stay
    /// singletons).
    pub fn write(&mut self, groups: &mut [u32]) {
        for (i, g) in groups.iter_mut().enumerate() {
            *g = if i < MAX_SUBFLOWS {
                self.find(i) as u32
            } else {
                i as u32
            };
        }
    }
}

/// The bit of subflow `i` in a set mask.
#[inline]
pub(crate) fn bit(i: usize) -> u64 {
    1u64 << i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn canonical_labels_sets_by_their_first_member() {
        let mut g = [7, 3, 7, 9];
        canonical(&mut g);
        assert_eq!(g, [0, 1, 0, 3]);
        let mut g = [5, 5, 5];
        canonical(&mut g);
        assert_eq!(g, [0, 0, 0]);
        let mut g = [2, 1, 0];
        canonical(&mut g);
        assert_eq!(g, [0, 1, 2]);
        // Ids that collide with indices are not confused with them.
        let mut g = [1, 0, 1, 0];
        canonical(&mut g);
        assert_eq!(g, [0, 1, 0, 1]);
        let mut g: [u32; 0] = [];
        canonical(&mut g);
    }

    #[test]
    fn same_partition_ignores_labels_only() {
        assert!(same_partition(&[0, 0, 1], &[4, 4, 9]));
        assert!(same_partition(&[0, 1, 2], &[2, 1, 0]));
        assert!(!same_partition(&[0, 0, 1], &[0, 1, 1]));
        assert!(!same_partition(&[0, 0], &[0, 1]));
        assert!(!same_partition(&[0, 0], &[0, 0, 0]), "lengths differ");
        assert!(same_partition(&[], &[]));
    }

    #[test]
    fn union_find_joins_components_with_the_smallest_root() {
        let mut uf = UnionFind::new();
        uf.union(3, 1);
        uf.union(4, 3);
        let mut g = [0u32; 6];
        uf.write(&mut g);
        assert_eq!(g, [0, 1, 2, 1, 1, 5]);
    }

    #[test]
    fn build_knows_the_registry_and_rejects_unknown_names_and_keys() {
        for name in names() {
            let d = build(name, &toml::Table::new(), 2).unwrap();
            assert_eq!(d.name(), name);
            assert_eq!(d.interval(), 100 * NS_PER_MS);
        }
        let d = build("dwc", &table("interval_ms = 250"), 2).unwrap();
        assert_eq!(d.interval(), 250 * NS_PER_MS);
        let e = build("nope", &toml::Table::new(), 2).err().unwrap();
        assert_eq!(e.key, "detector");
        assert_eq!(
            e.message,
            "unknown detector \"nope\"; accepted: none, bccps, dwc, rfc8382"
        );
        let e = build("none", &table("r2_min = 0.5"), 2).err().unwrap();
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            ("r2_min", "unknown parameter; accepted: interval_ms")
        );
        let e = build("bccps", &table("votes = 2"), 2).err().unwrap();
        assert!(
            e.message
                .starts_with("unknown parameter; accepted: interval_ms, couple,"),
            "{}",
            e.message
        );
        let e = build("dwc", &table("interval_ms = 0"), 2).err().unwrap();
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            (
                "interval_ms",
                "0 is out of range; accepted: an integer in 1..=60000 (ms)"
            )
        );
        let e = build("dwc", &table("delay_threshold = 1.5"), 2)
            .err()
            .unwrap();
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            (
                "delay_threshold",
                "1.5 is out of range; accepted: a number in [0, 1] (fraction of maxRTT − minRTT above minRTT)"
            )
        );
        assert_eq!(
            build("none", &toml::Table::new(), 65).err().unwrap().key,
            "subflows"
        );
    }
}
