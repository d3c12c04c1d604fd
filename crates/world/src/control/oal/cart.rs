//! A CART decision-tree classifier trained inside the engine: OAL retrains its congestion
//! predictor every simulated second on the latest items (seed-004 §5.4), so training runs here,
//! between events, deterministically, instead of round-tripping to Python.
//!
//! The algorithm is scikit-learn's `DecisionTreeClassifier` with the authors' settings
//! (repository training script: `criterion = "entropy"`, `min_samples_split = 200`,
//! `min_samples_leaf = 400`, no depth limit), without its random feature permutation: at each
//! node every feature is sorted, every threshold halfway between two consecutive distinct values
//! is tried, and the split with the largest entropy decrease wins (the first feature, then the
//! lowest threshold, on ties). `x <= threshold` goes left, as in scikit-learn. A leaf predicts
//! its most frequent class (the lowest on ties).
//!
//! Training allocates its scratch once per call (once a second, never per packet); the tree is
//! a flat array walked without allocating.

/// Classes are small integers `0..MAX_CLASSES`.
pub const MAX_CLASSES: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeParams {
    pub min_samples_split: usize,
    pub min_samples_leaf: usize,
    pub max_depth: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    /// `u32::MAX` at a leaf.
    feature: u32,
    threshold: f64,
    left: u32,
    right: u32,
    class: u8,
}

/// A trained classification tree.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClassTree {
    nodes: Vec<Node>,
}

impl ClassTree {
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn n_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The class of row `x` (`None` before the first training).
    pub fn predict(&self, x: &[f64]) -> Option<u8> {
        let mut i = 0usize;
        loop {
            let n = self.nodes.get(i)?;
            if n.feature == u32::MAX {
                return Some(n.class);
            }
            i = if x[n.feature as usize] <= n.threshold {
                n.left
            } else {
                n.right
            } as usize;
        }
    }

    /// Trains on `n` rows of `f` features (`x` row-major) with labels `y` (< MAX_CLASSES).
    pub fn fit(x: &[f64], y: &[u8], f: usize, params: TreeParams) -> ClassTree {
        let n = y.len();
        debug_assert_eq!(x.len(), n * f);
        let mut tree = ClassTree { nodes: Vec::new() };
        if n == 0 {
            return tree;
        }
        let mut trainer = Trainer {
            x,
            y,
            f,
            params,
            order: vec![0; n],
            values: vec![0.0; n],
        };
        let mut idx: Vec<u32> = (0..n as u32).collect();
        trainer.grow(&mut tree, &mut idx, 0);
        tree
    }
}

struct Trainer<'a> {
    x: &'a [f64],
    y: &'a [u8],
    f: usize,
    params: TreeParams,
    order: Vec<u32>,
    values: Vec<f64>,
}

fn entropy(counts: &[usize; MAX_CLASSES], total: usize) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let t = total as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / t;
            -p * p.log2()
        })
        .sum()
}

fn majority(counts: &[usize; MAX_CLASSES]) -> u8 {
    let mut best = 0;
    for c in 1..MAX_CLASSES {
        if counts[c] > counts[best] {
            best = c;
        }
    }
    best as u8
}

impl Trainer<'_> {
    /// Grows the subtree of the rows `idx` at `depth`; returns its node index.
    fn grow(&mut self, tree: &mut ClassTree, idx: &mut [u32], depth: usize) -> u32 {
        let mut counts = [0usize; MAX_CLASSES];
        for &i in idx.iter() {
            counts[self.y[i as usize] as usize] += 1;
        }
        let at = tree.nodes.len() as u32;
        tree.nodes.push(Node {
            feature: u32::MAX,
            threshold: 0.0,
            left: 0,
            right: 0,
            class: majority(&counts),
        });
        let n = idx.len();
        let pure = counts.iter().filter(|&&c| c > 0).count() <= 1;
        if pure
            || depth >= self.params.max_depth
            || n < self.params.min_samples_split
            || n < 2 * self.params.min_samples_leaf
        {
            return at;
        }
        let Some((feature, threshold)) = self.best_split(idx, &counts) else {
            return at;
        };
        // Partition idx: left rows first, keeping their order (stable, deterministic).
        let mut left: Vec<u32> = Vec::with_capacity(n);
        let mut right: Vec<u32> = Vec::with_capacity(n);
        for &i in idx.iter() {
            if self.x[i as usize * self.f + feature] <= threshold {
                left.push(i);
            } else {
                right.push(i);
            }
        }
        let l = self.grow(tree, &mut left, depth + 1);
        let r = self.grow(tree, &mut right, depth + 1);
        let node = &mut tree.nodes[at as usize];
        node.feature = feature as u32;
        node.threshold = threshold;
        node.left = l;
        node.right = r;
        at
    }

    /// The (feature, threshold) with the largest entropy decrease that leaves at least
    /// `min_samples_leaf` rows on each side; `None` when no split decreases it.
    fn best_split(&mut self, idx: &[u32], counts: &[usize; MAX_CLASSES]) -> Option<(usize, f64)> {
        let n = idx.len();
        let parent = entropy(counts, n);
        let min_leaf = self.params.min_samples_leaf.max(1);
        let mut best: Option<(f64, usize, f64)> = None;
        for feature in 0..self.f {
            let order = &mut self.order[..n];
            order.copy_from_slice(idx);
            let x = self.x;
            let f = self.f;
            order.sort_by(|&a, &b| {
                x[a as usize * f + feature]
                    .total_cmp(&x[b as usize * f + feature])
                    .then(a.cmp(&b))
            });
            for (v, &i) in self.values[..n].iter_mut().zip(order.iter()) {
                *v = x[i as usize * f + feature];
            }
            let values = &self.values[..n];
            let mut left = [0usize; MAX_CLASSES];
            for k in 0..n - 1 {
                left[self.y[order[k] as usize] as usize] += 1;
                let n_left = k + 1;
                if values[k + 1] <= values[k] || n_left < min_leaf || n - n_left < min_leaf {
                    continue;
                }
                let mut right = *counts;
                for c in 0..MAX_CLASSES {
                    right[c] -= left[c];
                }
                let child = (n_left as f64 * entropy(&left, n_left)
                    + (n - n_left) as f64 * entropy(&right, n - n_left))
                    / n as f64;
                let gain = parent - child;
                if gain > 1e-12 && best.is_none_or(|(g, _, _)| gain > g) {
                    let mut threshold = values[k] / 2.0 + values[k + 1] / 2.0;
                    // As scikit-learn: a midpoint that rounds up to the upper value goes down.
                    if threshold >= values[k + 1] || !threshold.is_finite() {
                        threshold = values[k];
                    }
                    best = Some((gain, feature, threshold));
                }
            }
        }
        best.map(|(_, f, t)| (f, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOSE: TreeParams = TreeParams {
        min_samples_split: 2,
        min_samples_leaf: 1,
        max_depth: 32,
    };

    #[test]
    fn splits_halfway_between_values_and_predicts_the_majority() {
        // One feature: 0,1,2 → class 0; 10,11,12 → class 3. The split is at 6.
        let x = [0.0, 1.0, 2.0, 10.0, 11.0, 12.0];
        let y = [0, 0, 0, 3, 3, 3];
        let t = ClassTree::fit(&x, &y, 1, LOOSE);
        assert_eq!(t.n_nodes(), 3);
        assert_eq!(t.nodes[0].threshold, 6.0);
        assert_eq!(t.predict(&[6.0]), Some(0));
        assert_eq!(t.predict(&[6.1]), Some(3));
    }

    #[test]
    fn picks_the_informative_feature_and_respects_the_leaf_size() {
        // Feature 0 is noise, feature 1 decides: class = (x1 > 5) as 0/2.
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..100u32 {
            x.push(f64::from((i * 37) % 11));
            x.push(f64::from(i % 10));
            y.push(if i % 10 > 5 { 2 } else { 0 });
        }
        let t = ClassTree::fit(&x, &y, 2, LOOSE);
        assert_eq!(t.nodes[0].feature, 1);
        assert_eq!(t.nodes[0].threshold, 5.5);
        for i in 0..10 {
            assert_eq!(t.predict(&[0.0, f64::from(i)]), Some(if i > 5 { 2 } else { 0 }));
        }
        // With a leaf of at least 50 rows the only split allowed is at the median (4.5):
        // impure, and the left side (0..4) is all class 0.
        let t = ClassTree::fit(&x, &y, 2, TreeParams { min_samples_leaf: 50, ..LOOSE });
        assert_eq!(t.nodes[0].threshold, 4.5);
        assert_eq!(t.n_nodes(), 3);
    }

    #[test]
    fn no_rows_no_tree() {
        assert_eq!(ClassTree::fit(&[], &[], 3, LOOSE).predict(&[0.0; 3]), None);
    }
}
