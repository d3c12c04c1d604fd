//! RFC 8382's grouping (Fig. 5.6 of the thesis, seed 000 §4.3) and its stabilisation over the
//! last D decisions, with the [CODE] details of MPTCP-SBD's `mptcp_sbd.c`.
//!
//! # One decision
//!
//! ```text
//!   absent      no sample in the last N intervals: in no group (a new subflow)
//!   congested   skew_est < c_s,  or skew_est < c_h and congested at the last decision (PB),
//!               or loss rate ≥ p_l;                       the others: the non-congested group
//!   congested subflows, split in three stages (each group of a stage is split by the next):
//!     1. sorted by freq_est, descending: split between neighbours whose freq_est differ by ≥ p_f
//!     2. sorted by var_est, descending: split where high − low ≥ p_mad · high
//!     3. if a member's loss rate ≥ p_l: sorted by loss rate, split where high − low ≥ p_d · high;
//!        else sorted by skew_est, split where high − low ≥ p_s
//! ```
//!
//! "high" and "low" are the two neighbours in the sorted order (the kernel's `is_grouped_*`); a
//! group of one is not split further. Equal keys never split (a difference of 0), except that
//! the relative tests split two zeros (0 ≥ p·0), as the kernel's do.
//!
//! # Stabilisation ([CODE] `merge_observations`)
//!
//! The last D decisions are merged pairwise: a subflow that was in the non-congested group in at
//! least `together` of them is non-congested; otherwise it opens a set, and every later subflow
//! (by index) that was in the same group as it (the non-congested group included) in at least
//! `together` decisions joins that set. Subflows are taken in index order and an unassigned one
//! opens the next set, so a subflow near two sets joins the last one that claims it (the
//! kernel's order). The sender uncouples the non-congested subflows, subflows in no set and
//! sets of one, and couples each other set (thesis §5.4.2).

use super::stats::Features;
use crate::detect::MAX_SUBFLOWS;

/// A subflow's label in one decision: [`NON_CONGESTED`], [`ABSENT`], or a congested group 1..
pub type Label = u8;
/// The non-congested group (the kernel's reserved "99").
pub const NON_CONGESTED: Label = 0;
/// No samples: in no group.
pub const ABSENT: Label = u8::MAX;

/// One grouping decision: each subflow's label.
pub type Decision = [Label; MAX_SUBFLOWS];

/// The thresholds of Table 5.1 that the grouping reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub c_s: f64,
    pub c_h: f64,
    pub p_f: f64,
    pub p_s: f64,
    pub p_mad: f64,
    pub p_d: f64,
    pub p_l: f64,
}

/// Whether a subflow with `f` is congested, given whether it was at the last decision (PB).
pub fn is_congested(f: &Features, previously: bool, t: &Thresholds) -> bool {
    f.skew < t.c_s || (f.skew < t.c_h && previously) || f.loss_rate >= t.p_l
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Freq,
    Var,
    LossOrSkew,
    Done,
}

impl Stage {
    fn next(self) -> Stage {
        match self {
            Stage::Freq => Stage::Var,
            Stage::Var => Stage::LossOrSkew,
            Stage::LossOrSkew | Stage::Done => Stage::Done,
        }
    }
}

/// One decision over the subflows' features (`None`: absent). `previously_congested[i]` is read
/// as PB and set to whether subflow i is congested now.
pub fn decide(
    features: &[Option<Features>],
    previously_congested: &mut [bool],
    t: &Thresholds,
) -> Decision {
    let mut decision = [ABSENT; MAX_SUBFLOWS];
    let mut congested = [0usize; MAX_SUBFLOWS];
    let mut n = 0;
    for (i, f) in features.iter().enumerate().take(MAX_SUBFLOWS) {
        let Some(f) = f else {
            previously_congested[i] = false;
            continue;
        };
        let now = is_congested(f, previously_congested[i], t);
        previously_congested[i] = now;
        if now {
            congested[n] = i;
            n += 1;
        } else {
            decision[i] = NON_CONGESTED;
        }
    }
    let mut next = NON_CONGESTED + 1;
    split(
        features,
        &mut congested[..n],
        Stage::Freq,
        t,
        &mut decision,
        &mut next,
    );
    decision
}

/// Splits `members` (all congested) at `stage`, labelling each final group.
fn split(
    features: &[Option<Features>],
    members: &mut [usize],
    stage: Stage,
    t: &Thresholds,
    decision: &mut Decision,
    next: &mut Label,
) {
    if members.len() <= 1 || stage == Stage::Done {
        if !members.is_empty() {
            for &i in members.iter() {
                decision[i] = *next;
            }
            *next += 1;
        }
        return;
    }
    let f = |i: usize| features[i].expect("congested subflows have features");
    let by_loss = stage == Stage::LossOrSkew && members.iter().any(|&i| f(i).loss_rate >= t.p_l);
    let key = |i: usize| match stage {
        Stage::Freq => f(i).freq,
        Stage::Var => f(i).var_ns,
        Stage::LossOrSkew if by_loss => f(i).loss_rate,
        _ => f(i).skew,
    };
    let apart = |high: f64, low: f64| match stage {
        Stage::Freq => high - low >= t.p_f,
        Stage::Var => high - low >= t.p_mad * high,
        Stage::LossOrSkew if by_loss => high - low >= t.p_d * high,
        _ => high - low >= t.p_s,
    };
    // Descending; ties by index, so that the order (and the labels) are deterministic.
    members.sort_unstable_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
    let mut cuts = [0usize; MAX_SUBFLOWS + 1];
    let mut ncuts = 1; // cuts[0] = 0
    for i in 1..members.len() {
        if apart(key(members[i - 1]), key(members[i])) {
            cuts[ncuts] = i;
            ncuts += 1;
        }
    }
    cuts[ncuts] = members.len();
    for c in 0..ncuts {
        let (from, to) = (cuts[c], cuts[c + 1]);
        split(
            features,
            &mut members[from..to],
            stage.next(),
            t,
            decision,
            next,
        );
    }
}

/// What the merge of D decisions says of each subflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merged {
    /// In no decision (or, after the merge, claimed by no set).
    Unassigned,
    NonCongested,
    /// Set number s (1..).
    Set(u8),
}

/// The stabilisation: merges `decisions` (the last D) for `n` subflows, a pair together when in
/// the same group in at least `together` of them.
pub fn merge(decisions: &[Decision], n: usize, together: u32) -> [Merged; MAX_SUBFLOWS] {
    let n = n.min(MAX_SUBFLOWS);
    let mut merged = [Merged::Unassigned; MAX_SUBFLOWS];
    let mut next_set = 1u8;
    for i in 0..n {
        if merged[i] != Merged::Unassigned {
            continue;
        }
        let mut present = false;
        let mut non_congested = 0u32;
        let mut with = [0u32; MAX_SUBFLOWS];
        for d in decisions {
            let label = d[i];
            if label == ABSENT {
                continue;
            }
            present = true;
            non_congested += (label == NON_CONGESTED) as u32;
            for j in i + 1..n {
                with[j] += (d[j] == label) as u32;
            }
        }
        if !present {
            continue;
        }
        let mine = if non_congested >= together {
            Merged::NonCongested
        } else {
            next_set += 1;
            Merged::Set(next_set - 1)
        };
        merged[i] = mine;
        for j in i + 1..n {
            if with[j] >= together {
                merged[j] = mine;
            }
        }
    }
    merged
}

/// The partition the sender applies: the members of a set of two or more share the id of the
/// set's first member; every other subflow (non-congested, unassigned, alone in its set) is
/// alone (its own index).
pub fn sender_partition(merged: &[Merged; MAX_SUBFLOWS], n: usize) -> [u8; MAX_SUBFLOWS] {
    let n = n.min(MAX_SUBFLOWS);
    let mut out = [0u8; MAX_SUBFLOWS];
    for (i, o) in out.iter_mut().enumerate() {
        *o = i as u8;
    }
    for i in 0..n {
        if let Merged::Set(s) = merged[i] {
            let first = (0..n).find(|&j| merged[j] == Merged::Set(s)).unwrap_or(i);
            let size = (0..n).filter(|&j| merged[j] == Merged::Set(s)).count();
            if size >= 2 {
                out[i] = first as u8;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 5.1's thresholds.
    const T: Thresholds = Thresholds {
        c_s: -0.01,
        c_h: 0.3,
        p_f: 0.1,
        p_s: 0.1,
        p_mad: 0.1,
        p_d: 0.1,
        p_l: 0.1,
    };

    fn feat(skew: f64, var_ms: f64, freq: f64, loss_rate: f64) -> Option<Features> {
        Some(Features {
            mean_ns: 50e6,
            skew,
            var_ns: var_ms * 1e6,
            freq,
            loss_rate,
            intervals: 50,
        })
    }

    fn decide_fresh(features: &[Option<Features>]) -> Vec<Label> {
        let mut pb = vec![false; features.len()];
        decide(features, &mut pb, &T)[..features.len()].to_vec()
    }

    #[test]
    fn congestion_by_skew_by_hysteresis_and_by_loss() {
        let f = |skew, loss| feat(skew, 1.0, 0.1, loss).unwrap();
        assert!(is_congested(&f(-0.02, 0.0), false, &T), "skew below c_s");
        assert!(
            !is_congested(&f(-0.01, 0.0), false, &T),
            "c_s itself is not below"
        );
        assert!(
            !is_congested(&f(0.2, 0.0), false, &T),
            "between c_s and c_h, not before"
        );
        assert!(
            is_congested(&f(0.2, 0.0), true, &T),
            "between c_s and c_h, congested before"
        );
        assert!(!is_congested(&f(0.3, 0.0), true, &T), "c_h itself ends it");
        assert!(is_congested(&f(0.5, 0.1), false, &T), "loss rate at p_l");
        assert!(!is_congested(&f(0.5, 0.099), false, &T));
        // PB is updated by each decision. Both congested (labels ≥ 1); their skews (−0.5 and
        // 0.2) then split them at the third stage.
        let mut pb = [false, true];
        let d = decide(
            &[feat(-0.5, 1.0, 0.1, 0.0), feat(0.2, 1.0, 0.1, 0.0)],
            &mut pb,
            &T,
        );
        assert_eq!(pb, [true, true]);
        assert_eq!(d[..2], [2, 1]);
        let mut pb = [true, true];
        decide(&[None, feat(0.4, 1.0, 0.1, 0.0)], &mut pb, &T);
        assert_eq!(pb, [false, false], "absent and non-congested");
    }

    #[test]
    fn the_non_congested_group_and_absent_subflows() {
        let d = decide_fresh(&[feat(0.1, 1.0, 0.1, 0.0), None, feat(0.0, 5.0, 0.0, 0.0)]);
        assert_eq!(d, [NON_CONGESTED, ABSENT, NON_CONGESTED]);
    }

    /// Stage 1: freq_est 0.30, 0.25, 0.10 (sorted): 0.30 − 0.25 = 0.05 < p_f together; 0.25 −
    /// 0.10 = 0.15 ≥ p_f apart. Equal var and skew keep the first two together.
    #[test]
    fn stage_one_splits_by_frequency() {
        let d = decide_fresh(&[
            feat(-0.5, 2.0, 0.10, 0.0),
            feat(-0.5, 2.0, 0.30, 0.0),
            feat(-0.5, 2.0, 0.25, 0.0),
        ]);
        // Groups are labelled in the order they are finished: {1, 2} (higher freq) first.
        assert_eq!(d, [2, 1, 1]);
    }

    /// Stage 2: var_est 10, 9.5, 8 ms (sorted): 10 − 9.5 = 0.5 < 0.1·10 together; 9.5 − 8 = 1.5
    /// ≥ 0.1·9.5 = 0.95 apart (same freq_est).
    #[test]
    fn stage_two_splits_by_relative_variability() {
        let d = decide_fresh(&[
            feat(-0.5, 8.0, 0.1, 0.0),
            feat(-0.5, 9.5, 0.1, 0.0),
            feat(-0.5, 10.0, 0.1, 0.0),
        ]);
        assert_eq!(d, [2, 1, 1]);
    }

    /// Stage 3 without high loss: skew_est −0.05, −0.12, −0.30 (sorted descending): −0.05 −
    /// (−0.12) = 0.07 < p_s together; −0.12 − (−0.30) = 0.18 ≥ p_s apart.
    #[test]
    fn stage_three_splits_by_skewness_without_high_loss() {
        let d = decide_fresh(&[
            feat(-0.30, 5.0, 0.1, 0.0),
            feat(-0.05, 5.0, 0.1, 0.05),
            feat(-0.12, 5.0, 0.1, 0.0),
        ]);
        assert_eq!(d, [2, 1, 1]);
    }

    /// Stage 3 with a member at ≥ p_l: by loss rate instead. Loss 0.30, 0.28, 0.20 (sorted):
    /// 0.30 − 0.28 = 0.02 < 0.1·0.30 together; 0.28 − 0.20 = 0.08 ≥ 0.028 apart — although
    /// their skews (−0.5, 0.2, −0.4: congested by loss) would have split differently.
    #[test]
    fn stage_three_splits_by_loss_rate_when_a_member_loses_much() {
        let d = decide_fresh(&[
            feat(-0.5, 5.0, 0.1, 0.20),
            feat(0.2, 5.0, 0.1, 0.30),
            feat(-0.4, 5.0, 0.1, 0.28),
        ]);
        assert_eq!(d, [2, 1, 1]);
    }

    #[test]
    fn the_stages_nest_and_a_group_of_one_is_final() {
        // Freq splits {0} from {1, 2, 3}; var splits {3} from {1, 2}; skew splits {1} from {2}.
        let d = decide_fresh(&[
            feat(-0.5, 5.0, 0.4, 0.0),
            feat(-0.5, 5.0, 0.1, 0.0),
            feat(-0.1, 5.0, 0.1, 0.0),
            feat(-0.5, 1.0, 0.1, 0.0),
        ]);
        assert_eq!(d, [1, 3, 2, 4]);
    }

    fn decision(labels: &[Label]) -> Decision {
        let mut d = [ABSENT; MAX_SUBFLOWS];
        d[..labels.len()].copy_from_slice(labels);
        d
    }

    #[test]
    fn a_pair_together_in_five_of_ten_decisions_is_grouped_and_in_four_is_not() {
        // Subflows 0 and 1 congested together in 5 decisions, apart in 5.
        let mut ds: Vec<Decision> = (0..5).map(|_| decision(&[1, 1])).collect();
        ds.extend((0..5).map(|_| decision(&[1, 2])));
        let m = merge(&ds, 2, 5);
        assert_eq!(m[..2], [Merged::Set(1), Merged::Set(1)]);
        assert_eq!(sender_partition(&m, 2)[..2], [0, 0]);
        // Together in 4 only: two sets of one, each alone at the sender.
        ds[4] = decision(&[1, 2]);
        let m = merge(&ds, 2, 5);
        assert_eq!(m[..2], [Merged::Set(1), Merged::Set(2)]);
        assert_eq!(sender_partition(&m, 2)[..2], [0, 1]);
    }

    #[test]
    fn a_subflow_non_congested_in_five_decisions_is_non_congested() {
        // Decisions 0-4: subflows 0 and 1 non-congested, 2 congested; 5-9: 0 in group 1, 1
        // and 2 in group 2. Subflow 0 is non-congested (5 of 10), and subflow 1, "together"
        // with it in the non-congested group five times, follows it. Subflow 2, with subflow 0
        // never: a set of one (subflow 1 was taken first).
        let ds: Vec<Decision> = (0..10)
            .map(|k| decision(if k < 5 { &[0, 0, 1] } else { &[1, 2, 2] }))
            .collect();
        let m = merge(&ds, 3, 5);
        assert_eq!(
            m[..3],
            [Merged::NonCongested, Merged::NonCongested, Merged::Set(1)]
        );
        assert_eq!(
            sender_partition(&m, 3)[..3],
            [0, 1, 2],
            "non-congested and a set of one: all alone"
        );
        // The kernel's order: a subflow congested in all ten decisions, but in subflow 0's
        // group in five of them, follows subflow 0 into the non-congested group.
        let ds: Vec<Decision> = (0..10)
            .map(|k| decision(if k < 5 { &[0, 1, 1] } else { &[1, 1, 2] }))
            .collect();
        let m = merge(&ds, 3, 5);
        assert_eq!(
            m[..3],
            [Merged::NonCongested, Merged::NonCongested, Merged::Set(1)]
        );
    }

    #[test]
    fn absent_subflows_stay_unassigned_and_alone() {
        let ds: Vec<Decision> = (0..10).map(|_| decision(&[ABSENT, 1, 1])).collect();
        let m = merge(&ds, 3, 5);
        assert_eq!(m[..3], [Merged::Unassigned, Merged::Set(1), Merged::Set(1)]);
        assert_eq!(sender_partition(&m, 3)[..3], [0, 1, 1]);
    }
}
