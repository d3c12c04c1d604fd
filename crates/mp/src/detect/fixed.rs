//! Fixed partitions: `none` (every subflow independent) and a partition supplied by the caller,
//! e.g. the topology's ground truth (`truth`), which the world computes from the links each
//! subflow's path names. They observe nothing; they are the two ends detection is judged
//! between (no coupling, perfect detection).

use super::{canonical, Common, Detector};
use rove_sim::Nanos;
use rove_tcp::cc::ParamError;

pub struct Fixed {
    name: &'static str,
    /// Canonical set ids of the subflows the partition names; later subflows are singletons.
    partition: Vec<u32>,
    interval: Nanos,
}

impl Fixed {
    /// Every subflow in its own set.
    pub fn none() -> Self {
        Fixed {
            name: "none",
            partition: Vec::new(),
            interval: Common::default().interval,
        }
    }

    /// The fixed `partition` (`partition[i]` = set id of subflow i, any labels) under `name`
    /// (e.g. "truth"). Subflows beyond `partition.len()` are independent.
    pub fn new(name: &'static str, partition: &[u32]) -> Self {
        let mut partition = partition.to_vec();
        canonical(&mut partition);
        Fixed {
            name,
            partition,
            interval: Common::default().interval,
        }
    }

    /// The same, asked for every `interval` (default 100 ms).
    pub fn with_interval(mut self, interval: Nanos) -> Self {
        self.interval = interval;
        self
    }
}

/// The registry's constructor of `none`.
pub(super) fn build_none(
    _params: &toml::Table,
    common: Common,
    _subflows: usize,
) -> Result<Box<dyn Detector>, ParamError> {
    Ok(Box::new(Fixed::none().with_interval(common.interval)))
}

impl Detector for Fixed {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_ack(&mut self, _sub: usize, _obs: &super::AckObservation) {}

    fn on_loss_event(&mut self, _sub: usize, _now: Nanos) {}

    fn partition(&mut self, _now: Nanos, groups: &mut [u32]) {
        for (i, g) in groups.iter_mut().enumerate() {
            // Canonical ids are indices below partition.len(), so index i is free for a
            // subflow the partition does not name.
            *g = self.partition.get(i).copied().unwrap_or(i as u32);
        }
    }

    fn interval(&self) -> Nanos {
        self.interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::same_partition;

    #[test]
    fn none_keeps_every_subflow_apart_and_truth_reports_its_partition() {
        let mut g = [9u32; 3];
        Fixed::none().partition(0, &mut g);
        assert_eq!(g, [0, 1, 2]);

        let mut truth = Fixed::new("truth", &[5, 5, 2]);
        assert_eq!(truth.name(), "truth");
        let mut g = [0u32; 4];
        truth.partition(0, &mut g);
        assert_eq!(
            g,
            [0, 0, 2, 3],
            "a fourth subflow the truth does not name is alone"
        );
        assert!(same_partition(&g, &[1, 1, 0, 7]));
        let mut g = [0u32; 2];
        truth.partition(0, &mut g);
        assert_eq!(g, [0, 0]);
    }
}
