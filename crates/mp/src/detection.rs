//! A connection's shared-bottleneck detection at run time: the detector it consults
//! ([`crate::detect`]), the grouping in force (which the connection applies to its coupling), and
//! how often that grouping equals the topology's true partition.
//!
//! The connection feeds every ACK and loss event to the detector and calls [`Detection::advance`]
//! after each of its events; every [`Detector::interval`] the detector's partition is read and,
//! when it differs from the one in force, becomes the new grouping. No timer is needed: the
//! grouping changes only when the detector is consulted, and it is consulted on the first event
//! after each interval ends (a bulk connection has an event every few packets).
//!
//! **Accuracy** (seed-001 §2.3's suggested definition, [GAP]: the paper names the metric but not
//! its definition): at every multiple of [`ACCURACY_SAMPLE_NS`] after the connection's start, the
//! grouping in force is compared with the true partition, up to relabelling; the accuracy is the
//! fraction of samples that match. The grouping in force at a sample instant is the one set at
//! the last event before it, so the samples between two events are counted, exactly, when the
//! second event arrives ([`Detection::counts_at`] counts them for a mark without changing
//! anything). With no true partition (the topology cannot tell), no accuracy is kept.

use crate::detect::{canonical, same_partition, Detector};
use rove_sim::{Nanos, NS_PER_MS};

/// Accuracy sampling period [GAP]: seed-001 §2.3's suggestion, 100 ms.
pub const ACCURACY_SAMPLE_NS: Nanos = 100 * NS_PER_MS;

pub struct Detection {
    detector: Box<dyn Detector>,
    /// The grouping in force (canonical set ids, one per subflow).
    groups: Vec<u32>,
    /// The detector's answer, before it is compared with `groups`.
    scratch: Vec<u32>,
    /// The topology's partition (canonical), when known.
    truth: Option<Vec<u32>>,
    start_ns: Nanos,
    next_eval: Nanos,
    /// The next accuracy sample's time.
    next_sample: Nanos,
    samples: u64,
    matches: u64,
    /// Times the grouping in force changed.
    pub regroupings: u64,
}

impl Detection {
    /// Detection for a connection of `subflows` subflows starting at `start_ns`. The grouping
    /// starts with every subflow alone (the paper: a subflow is coupled once a set is found).
    pub fn new(
        detector: Box<dyn Detector>,
        truth: Option<Vec<u32>>,
        subflows: usize,
        start_ns: Nanos,
    ) -> Self {
        let truth = truth.map(|mut t| {
            canonical(&mut t);
            t
        });
        Detection {
            next_eval: start_ns + detector.interval(),
            detector,
            groups: (0..subflows as u32).collect(),
            scratch: vec![0; subflows],
            truth,
            start_ns,
            next_sample: start_ns + ACCURACY_SAMPLE_NS,
            samples: 0,
            matches: 0,
            regroupings: 0,
        }
    }

    pub fn name(&self) -> &'static str {
        self.detector.name()
    }

    pub fn detector_mut(&mut self) -> &mut dyn Detector {
        self.detector.as_mut()
    }

    /// The grouping in force: `groups()[i]` is subflow i's set id.
    pub fn groups(&self) -> &[u32] {
        &self.groups
    }

    /// A subflow was added: alone until the detector says otherwise; in the truth, alone too
    /// unless the caller gives its set with [`Detection::set_truth`].
    pub fn add_subflow(&mut self) {
        let i = self.groups.len() as u32;
        self.groups.push(i);
        self.scratch.push(i);
        if let Some(t) = &mut self.truth {
            t.push(i);
        }
    }

    /// Replaces the true partition (a path changed).
    pub fn set_truth(&mut self, truth: Option<Vec<u32>>) {
        self.truth = truth.map(|mut t| {
            canonical(&mut t);
            t
        });
    }

    fn matches_truth(&self) -> bool {
        self.truth
            .as_deref()
            .is_some_and(|t| same_partition(t, &self.groups))
    }

    /// Samples due by `now` that the grouping in force would count (and how many match), as of
    /// `now`, without changing anything: what a measurement mark reads.
    pub fn counts_at(&self, now: Nanos) -> (u64, u64) {
        if self.truth.is_none() {
            return (0, 0);
        }
        let pending = if now >= self.next_sample {
            (now - self.next_sample) / ACCURACY_SAMPLE_NS + 1
        } else {
            0
        };
        let hits = if self.matches_truth() { pending } else { 0 };
        (self.samples + pending, self.matches + hits)
    }

    /// The accuracy over the whole run so far (`None` without a truth or before a sample).
    pub fn accuracy_at(&self, now: Nanos) -> Option<f64> {
        let (n, m) = self.counts_at(now);
        (n > 0).then(|| m as f64 / n as f64)
    }

    /// Brings detection up to `now`: counts the accuracy samples due (with the grouping in force
    /// until now), then, if the detector is due, reads its partition. Returns `true` when the
    /// grouping in force changed (the caller regroups its coupling from [`Detection::groups`]).
    pub fn advance(&mut self, now: Nanos) -> bool {
        let (n, m) = self.counts_at(now);
        if n > self.samples {
            let passed = (n - self.samples) * ACCURACY_SAMPLE_NS;
            self.next_sample += passed;
        }
        self.samples = n;
        self.matches = m;
        if now < self.next_eval {
            return false;
        }
        let interval = self.detector.interval().max(1);
        self.next_eval = now - (now - self.start_ns) % interval + interval;
        self.detector.partition(now, &mut self.scratch);
        canonical(&mut self.scratch);
        if self.scratch == self.groups {
            return false;
        }
        self.groups.copy_from_slice(&self.scratch);
        self.regroupings += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{AckObservation, Fixed};

    /// A detector that reports whatever partition the test sets.
    struct Scripted(Vec<u32>);

    impl Detector for Scripted {
        fn name(&self) -> &'static str {
            "scripted"
        }
        fn on_ack(&mut self, _sub: usize, _obs: &AckObservation) {}
        fn on_loss_event(&mut self, _sub: usize, _now: Nanos) {}
        fn partition(&mut self, _now: Nanos, groups: &mut [u32]) {
            groups.copy_from_slice(&self.0);
        }
    }

    const MS: Nanos = NS_PER_MS;

    #[test]
    fn accuracy_counts_each_100_ms_sample_with_the_grouping_in_force_then() {
        // Truth: both subflows share a bottleneck. The detector says so from the start, but the
        // grouping changes only when it is consulted (every 100 ms, at the first event after).
        let mut d = Detection::new(Box::new(Scripted(vec![5, 5])), Some(vec![1, 1]), 2, 0);
        assert_eq!(d.groups(), [0, 1], "everyone alone at the start");
        // An event at 250 ms: samples at 100 and 200 ms saw the initial grouping (wrong); the
        // detector is then consulted and groups them.
        assert!(d.advance(250 * MS));
        assert_eq!(d.groups(), [0, 0]);
        assert_eq!(d.counts_at(250 * MS), (2, 0));
        // Nothing until 1000 ms: samples at 300..1000 (8 of them) all match.
        assert_eq!(d.counts_at(1000 * MS), (10, 8));
        assert_eq!(d.accuracy_at(1000 * MS), Some(0.8));
        assert!(!d.advance(1000 * MS), "same partition: no regrouping");
        assert_eq!((d.counts_at(1000 * MS), d.regroupings), ((10, 8), 1));
    }

    #[test]
    fn the_detector_is_consulted_once_per_interval_on_the_grid_of_the_start() {
        let mut d = Detection::new(Box::new(Scripted(vec![0, 1])), None, 2, 30 * MS);
        assert!(!d.advance(50 * MS), "not due before 130 ms");
        assert_eq!(d.next_eval, 130 * MS);
        d.detector = Box::new(Scripted(vec![2, 2]));
        assert!(d.advance(345 * MS));
        assert_eq!(
            d.next_eval,
            430 * MS,
            "the next multiple of 100 ms after the start"
        );
        assert_eq!(d.accuracy_at(400 * MS), None, "no truth, no accuracy");
    }

    #[test]
    fn a_fixed_true_partition_is_perfectly_accurate_from_the_first_consultation() {
        let det = Box::new(Fixed::new("truth", &[0, 0, 2]));
        let mut d = Detection::new(det, Some(vec![4, 4, 9]), 3, 0);
        assert!(d.advance(100 * MS));
        assert_eq!(d.groups(), [0, 0, 2]);
        assert_eq!(
            d.counts_at(1_000 * MS),
            (10, 9),
            "the sample at 100 ms saw the start's"
        );
        d.add_subflow();
        assert_eq!(d.groups(), [0, 0, 2, 3]);
    }
}
