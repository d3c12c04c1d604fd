//! The topology's answer to "which subflows share a bottleneck": the ground truth a
//! shared-bottleneck detector's accuracy is measured against (`detector` on a multipath flow),
//! and what `detector = "truth"` couples by.
//!
//! [GAP] Neither seed 001 nor seed 000 defines the true partition beyond "the topology". rove
//! takes each subflow's *narrow link*: the link of its data path with the lowest nominal capacity
//! (a fixed rate's initial value, a trace's mean delivery rate, a radio cell's peak rate; the
//! first such link on the path when several tie). Subflows whose narrow link is the same link
//! share a bottleneck (whatever the port: a cell's or an access point's destinations share its
//! air time); others do not. This is the capacity bottleneck, not the congestion bottleneck of a
//! particular moment: a lightly loaded narrow link still counts. Scenarios whose bottleneck is
//! elsewhere should not be judged by it.

use rove_scenario::{Hop, Scenario, Serializer};

/// A link's nominal capacity, bit/s.
pub fn nominal_capacity_bps(s: &Serializer) -> f64 {
    match s {
        Serializer::Rate { rate_bps, .. } => *rate_bps as f64,
        Serializer::Trace {
            opportunities_ms,
            period_ms,
            ..
        } => {
            // One 1500-byte delivery opportunity per line, repeating every period (mm-link).
            opportunities_ms.len() as f64 * 1500.0 * 8.0 * 1000.0 / (*period_ms).max(1) as f64
        }
        Serializer::Model { peak_bps } => *peak_bps as f64,
    }
}

/// The narrow link of a data path given by its link indices: lowest nominal capacity, the first
/// on ties.
pub fn narrow_link(scenario: &Scenario, links: impl IntoIterator<Item = usize>) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for l in links {
        let c = nominal_capacity_bps(&scenario.links[l].serializer);
        if best.is_none_or(|(_, b)| c < b) {
            best = Some((l, c));
        }
    }
    best.map(|(l, _)| l)
}

/// The true partition of subflows with these data paths (each a list of link indices): entry i
/// is the narrow link of path i (equal entries share a bottleneck).
pub fn true_partition<P, L>(scenario: &Scenario, paths: P) -> Vec<u32>
where
    P: IntoIterator<Item = L>,
    L: IntoIterator<Item = usize>,
{
    paths
        .into_iter()
        .map(|p| narrow_link(scenario, p).map_or(u32::MAX, |l| l as u32))
        .collect()
}

/// The true partition of a scenario's multipath flow's subflows (its `paths`).
pub fn true_partition_of(scenario: &Scenario, paths: &[rove_scenario::SubflowPath]) -> Vec<u32> {
    true_partition(scenario, paths.iter().map(|p| Hop::links(&p.path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> Scenario {
        let opts = rove_scenario::ParseOptions {
            source: "<test>",
            ..Default::default()
        };
        crate::build::parse(text, &opts).unwrap_or_else(|e| panic!("{e}"))
    }

    const TOPOLOGY: &str = r#"
duration = "1s"
[links.acc0]
rate = "100Mbps"
[links.acc1]
rate = "100Mbps"
[links.btl]
rate = "10Mbps"
[links.other]
rate = "10Mbps"
[links.ack]
rate = "100Mbps"
[[flows]]
cc = "reno"
paths = [
  { path = ["acc0", "btl"], ack_path = ["ack"] },
  { path = ["acc1", "btl"], ack_path = ["ack"] },
  { path = ["acc1", "other"], ack_path = ["ack"] },
  { path = ["acc0"], ack_path = ["ack"] },
]
"#;

    #[test]
    fn subflows_share_a_bottleneck_when_their_narrow_link_is_the_same() {
        let s = scenario(TOPOLOGY);
        let mp = s.flows[0].multipath.as_ref().unwrap();
        let t = true_partition_of(&s, &mp.paths);
        let idx = |n: &str| s.links.iter().position(|l| l.name == n).unwrap() as u32;
        // btl and other tie at 10 Mbit/s but are different links; acc0 alone is its own narrow
        // link (100 Mbit/s).
        assert_eq!(t, [idx("btl"), idx("btl"), idx("other"), idx("acc0")]);
    }

    #[test]
    fn a_trace_counts_its_mean_delivery_rate() {
        let s = Serializer::Trace {
            opportunities_ms: std::sync::Arc::new(vec![1, 1, 2, 4]),
            period_ms: 4,
            origin: String::new(),
        };
        // 4 packets of 1500 B per 4 ms = 12 Mbit/s
        assert_eq!(nominal_capacity_bps(&s), 12e6);
    }
}
