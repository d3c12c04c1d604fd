//! `kind = "features"`: the feature recorder. At its cadence it records, for each subflow of
//! each watched flow, the [`SenderView`](crate::observe::SenderView) a controller sees (and,
//! with `link = "NAME"`, that link's [`LinkView`](crate::observe::LinkView)), into
//! `features.parquet`. A learned controller is trained in Python on exactly these columns and
//! evaluates its model on a row built by the same [`feature_row`] in the engine (`tree_cc`), so
//! training and use never drift apart.
//!
//! Keys: the cadence (`every`, or `every_acks` with `flow`), `flow` (record only this flow;
//! default every flow), `link` (add this link's columns).

use super::{read_cadence, Cadence, Controller};
use crate::observe::{LinkView, SenderView};
use crate::world::World;
use rove_scenario::component::{ComponentError, ComponentParams};
use rove_scenario::spec::ActionSpec;
use rove_scenario::Scenario;
use rove_sim::{Nanos, NS_PER_S};

/// The numeric feature columns, in order.
pub const SENDER_FEATURES: &[&str] = &[
    "cwnd_pkts",
    "ssthresh_pkts",
    "inflight_pkts",
    "srtt_ms",
    "min_rtt_ms",
    "delivery_rate_bps",
    "pacing_rate_bps",
    "lost_pkts",
    "retrans_segs",
    "bytes_acked",
];
pub const LINK_FEATURES: &[&str] = &[
    "link_backlog_bytes",
    "link_backlog_pkts",
    "link_drops",
    "link_utilization",
];

/// Most values a feature row holds: a sender's and a link's.
pub const MAX_FEATURES: usize = SENDER_FEATURES.len() + LINK_FEATURES.len();

/// The columns of a feature row, with or without a link's.
pub fn feature_names(with_link: bool) -> Vec<&'static str> {
    let mut names = SENDER_FEATURES.to_vec();
    if with_link {
        names.extend_from_slice(LINK_FEATURES);
    }
    names
}

/// Writes a feature row, a sender's features then (given `link`) the link's, in the order of
/// [`feature_names`], into `row`; returns how many it wrote. The recorder and the learned
/// controllers build their rows here, so a model sees what it was trained on.
pub fn feature_row(
    v: &SenderView,
    link: Option<&LinkView>,
    row: &mut [f64; MAX_FEATURES],
) -> usize {
    let sender = [
        v.cwnd_pkts as f64,
        v.ssthresh_pkts as f64,
        v.inflight_pkts as f64,
        v.srtt_ms,
        v.min_rtt_ms,
        v.delivery_rate_bps,
        v.pacing_rate_bps,
        v.lost_pkts as f64,
        v.retrans_segs as f64,
        v.bytes_acked as f64,
    ];
    row[..SENDER_FEATURES.len()].copy_from_slice(&sender);
    let Some(l) = link else {
        return SENDER_FEATURES.len();
    };
    row[SENDER_FEATURES.len()..].copy_from_slice(&[
        l.backlog_bytes as f64,
        l.backlog_pkts as f64,
        l.drops as f64,
        l.utilization,
    ]);
    MAX_FEATURES
}

/// Recorded rows, column by column.
#[derive(Debug, Default, Clone)]
pub struct FeatureLog {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub subflow: Vec<i32>,
    pub cc: Vec<&'static str>,
    pub mode: Vec<&'static str>,
    /// Column names of `values`.
    pub names: Vec<&'static str>,
    /// One vector per name.
    pub values: Vec<Vec<f64>>,
    /// Text columns with one value on every row (name, value), written after `values`: which
    /// AP an OAL controller of several on one channel ran on.
    pub tags: Vec<(&'static str, String)>,
}

pub struct FeatureRecorder {
    cadence: Cadence,
    flow: Option<usize>,
    link: Option<usize>,
    log: FeatureLog,
}

impl FeatureRecorder {
    pub fn build(
        p: &ComponentParams,
        scenario: &Scenario,
    ) -> Result<Box<dyn Controller>, ComponentError> {
        let cadence = read_cadence(p, scenario)?;
        let flow = match cadence {
            Cadence::Acks { flow, .. } => Some(flow),
            Cadence::Every(_) => match p.string("flow")? {
                None => None,
                Some(_) => Some(p.flow("flow", scenario)?),
            },
        };
        let link = match p.string("link")? {
            None => None,
            Some(_) => Some(p.link("link", scenario)?),
        };
        let names = feature_names(link.is_some());
        let values = vec![Vec::new(); names.len()];
        Ok(Box::new(FeatureRecorder {
            cadence,
            flow,
            link,
            log: FeatureLog {
                names,
                values,
                ..Default::default()
            },
        }))
    }
}

impl Controller for FeatureRecorder {
    fn kind(&self) -> &'static str {
        "features"
    }

    fn cadence(&self) -> Cadence {
        self.cadence
    }

    fn tick(&mut self, now: Nanos, world: &World, _actions: &mut Vec<ActionSpec>) {
        let t = now as f64 / NS_PER_S as f64;
        let link = self.link.map(|l| world.link_view(l));
        let flows = match self.flow {
            Some(f) => f..f + 1,
            None => 0..world.flows.len(),
        };
        for f in flows.filter(|&f| world.flows[f].transport.is_tcp()) {
            for sub in 0..world.flows[f].transport.subflow_count() {
                let v = world.sender_view(f, sub);
                let log = &mut self.log;
                log.time_s.push(t);
                log.flow.push(f as u32);
                log.subflow.push(if world.flows[f].is_multipath() {
                    sub as i32
                } else {
                    -1
                });
                log.cc.push(v.cc);
                log.mode.push(v.mode);
                let mut row = [0.0; MAX_FEATURES];
                let n = feature_row(&v, link.as_ref(), &mut row);
                for (col, x) in log.values.iter_mut().zip(&row[..n]) {
                    col.push(*x);
                }
            }
        }
    }

    fn features(&self) -> Option<&FeatureLog> {
        Some(&self.log)
    }
}
