//! Algorithm 5 (thesis §5.4.4; seed 000 §4.5): the initial algorithm of a new subflow, from the
//! subflow-level predictions made so far for its destination's /24 prefix.
//!
//! ```text
//! predict_at_ip_prefix_level(prefix, predicted_cc):
//!     if prefix not in map: map[prefix] = {CC: 0 for every candidate}
//!     for CC: w[CC] ← w[CC] × α          # decay, 0 < α < 1
//!     w[predicted_cc] ← w[predicted_cc] + 1
//!     return argmax_CC w                 # IP_CC: a new subflow to this prefix starts with it
//! ```
//!
//! The thesis gives no value for α [GAP]: rove's default is 0.9 (the `decay` key), with which a
//! prediction weighs as much as the sum of all those made more than about 6.6 predictions
//! before it (0.9^6.6 ≈ 1/2), so a prefix's choice follows the last few periods. Ties go to the
//! first candidate in the model set's order.
//!
//! rove's subflows have no addresses: a subflow's "destination /24" is the last hop of its data
//! path (the link, and port, that delivers to the receiver), which plays the part of the
//! client network an address prefix names.

use crate::world::Hop;

/// One prefix's weights, one per candidate (in the model set's order).
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    prefix: Hop,
    weights: Vec<f64>,
}

/// The per-prefix weight map of Algorithm 5.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefixWeights {
    decay: f64,
    candidates: usize,
    /// Few prefixes per run (one per path): a vector searched linearly.
    entries: Vec<Entry>,
}

impl PrefixWeights {
    /// A map over `candidates` algorithms with decay `decay` (α, 0 < α < 1).
    pub fn new(candidates: usize, decay: f64) -> Self {
        assert!(decay > 0.0 && decay < 1.0, "0 < decay < 1");
        PrefixWeights {
            decay,
            candidates,
            entries: Vec::new(),
        }
    }

    /// Algorithm 5 on a subflow-level prediction of candidate `predicted` for `prefix`:
    /// returns the prefix's candidate now (IP_CC).
    pub fn update(&mut self, prefix: Hop, predicted: usize) -> usize {
        let i = match self.entries.iter().position(|e| e.prefix == prefix) {
            Some(i) => i,
            None => {
                self.entries.push(Entry {
                    prefix,
                    weights: vec![0.0; self.candidates],
                });
                self.entries.len() - 1
            }
        };
        let w = &mut self.entries[i].weights;
        for x in w.iter_mut() {
            *x *= self.decay;
        }
        w[predicted] += 1.0;
        first_max(w)
    }

    /// The prefix's candidate (IP_CC), or `None` before any prediction for it.
    pub fn best(&self, prefix: Hop) -> Option<usize> {
        self.weights(prefix).map(first_max)
    }

    /// The prefix's weights, in candidate order.
    pub fn weights(&self, prefix: Hop) -> Option<&[f64]> {
        self.entries
            .iter()
            .find(|e| e.prefix == prefix)
            .map(|e| e.weights.as_slice())
    }
}

/// Index of the first largest value.
fn first_max(w: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in w.iter().enumerate() {
        if x > w[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Hop = Hop { link: 3, port: 0 };
    const B: Hop = Hop { link: 4, port: 0 };

    #[test]
    fn the_weights_after_a_known_sequence() {
        // Candidates 0, 1, 2; α = 0.5. Predictions for A: 1, 1, 2, 2, 2.
        let mut m = PrefixWeights::new(3, 0.5);
        assert_eq!(m.best(A), None, "no prediction yet: the caller's default");
        assert_eq!(m.update(A, 1), 1); // w = [0, 1, 0]
        assert_eq!(m.update(A, 1), 1); // [0, 1.5, 0]
        assert_eq!(m.update(A, 2), 2); // [0, 0.75, 1]: one prediction of 2 outweighs two of 1
        assert_eq!(m.weights(A).unwrap(), [0.0, 0.75, 1.0]);
        assert_eq!(m.best(A), Some(2));
        assert_eq!(m.update(A, 2), 2); // [0, 0.375, 1.5]
        assert_eq!(m.update(A, 2), 2); // [0, 0.1875, 1.75]
        assert_eq!(m.weights(A).unwrap(), [0.0, 0.1875, 1.75]);
        // Another prefix has its own weights.
        assert_eq!(m.best(B), None);
        assert_eq!(m.update(B, 0), 0);
        assert_eq!(m.weights(B).unwrap(), [1.0, 0.0, 0.0]);
        assert_eq!(m.weights(A).unwrap(), [0.0, 0.1875, 1.75]);
    }

    #[test]
    fn ties_go_to_the_first_candidate() {
        let mut m = PrefixWeights::new(2, 0.5);
        m.update(A, 1); // [0, 1]
        m.update(A, 0); // [1, 0.5]
        m.update(A, 1); // [0.5, 1.25]
        assert_eq!(m.update(A, 0), 0); // [1.25, 0.625]
        let mut t = PrefixWeights::new(2, 0.5);
        t.entries.push(Entry {
            prefix: A,
            weights: vec![2.0, 2.0],
        });
        assert_eq!(t.best(A), Some(0));
    }
}
