//! Learned models inside the engine: decision trees and tree ensembles trained in Python
//! (scikit-learn, XGBoost) and evaluated here, with the libraries' own arithmetic, so that a
//! controller's decision in a run is exactly what the model gave in Python.
//!
//! # Formats read
//!
//! * **XGBoost's JSON model** (`booster.save_model("m.json")`, or `XGBRegressor.save_model`):
//!   `gbtree` boosters with numerical splits and scalar leaves, objectives `reg:squarederror`,
//!   `reg:absoluteerror`, `reg:pseudohubererror`, `binary:logistic`, `reg:logistic`,
//!   `multi:softprob` and `multi:softmax`. Schema: `doc/model.schema` in the
//!   XGBoost repository ("JSON schema for XGBoost model"); see [`xgboost`] for the fields used.
//! * **rove's export of scikit-learn trees** (`format = "rove-trees"`), written by
//!   `rove.learn.export_sklearn` from a `DecisionTreeClassifier`, `DecisionTreeRegressor`,
//!   `RandomForest*`, `ExtraTrees*` or `GradientBoostingRegressor`: the arrays of each fitted
//!   tree's `tree_` attribute (sklearn's `sklearn.tree._tree.Tree`), unchanged. See [`sklearn`].
//!
//! [`TreeModel::load`] tells them apart by their top-level keys.
//!
//! # Exactly as the libraries predict
//!
//! Both libraries cast the input to float32 before comparing it with a threshold
//! (scikit-learn: `_validate_X_predict(..., dtype=np.float32)`, then `X[i, f] <= threshold` with
//! a float64 threshold in `_tree.pyx` `_apply_dense`; XGBoost: `DMatrix` stores float32 and the
//! predictor tests `fvalue < split_cond` in float32, `include/xgboost/tree_model.h`
//! `GetNextNode`). So every row is cast to `f32` here first, and each model keeps its library's
//! rule: `<=` for scikit-learn, `<` for XGBoost. A NaN input goes to the side the node says
//! (XGBoost `default_left`, scikit-learn `missing_go_to_left`).
//!
//! Sums follow the library too: scikit-learn adds in float64 in tree order (a forest then
//! divides by its number of trees); XGBoost adds leaf values to the base margin in float32, in
//! tree order, and applies its link (sigmoid, softmax) as its `src/common/math.h` does, in
//! float32 but for the softmax's float64 sum. Margins and scikit-learn outputs are then
//! bit-equal to the libraries'; probabilities depend on the C library's `expf` as XGBoost's do
//! (bit-equal with glibc's).
//!
//! # Representation
//!
//! All trees of a model share one flat array of nodes (24 bytes each), laid out depth-first so
//! a node's left child follows it; leaves point into one array of leaf values. Evaluating a
//! row walks indices and writes into a caller's buffer: nothing allocates.

mod json;
pub mod sklearn;
pub mod xgboost;

use std::fmt;
use std::path::Path;

/// What went wrong loading or using a model: the file and one line about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub file: String,
    pub message: String,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for ModelError {}

/// A class label as the library stored it: scikit-learn's `classes_` holds numbers or strings;
/// XGBoost's classes are `0..num_class`.
#[derive(Debug, Clone, PartialEq)]
pub enum Label {
    Number(f64),
    Text(String),
}

impl Label {
    /// The label as an index (a whole number from 0), if it is one.
    pub fn as_index(&self) -> Option<usize> {
        match *self {
            Label::Number(v) if v >= 0.0 && v.fract() == 0.0 && v < u32::MAX as f64 => {
                Some(v as usize)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Number(v) => write!(f, "{v}"),
            Label::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// What a model's outputs mean.
#[derive(Debug, Clone, PartialEq)]
pub enum Task {
    /// Each output is a predicted value (one per regression target).
    Regression,
    /// The outputs are class probabilities (for XGBoost `binary:logistic`, one output: the
    /// probability of class 1); `classes` labels the classes in order.
    Classification { classes: Vec<Label> },
}

/// How a threshold is compared with a feature (cast to float32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SplitRule {
    /// `x <= threshold` goes left (scikit-learn).
    LessOrEqual,
    /// `x < threshold` goes left (XGBoost).
    LessThan,
}

/// How the trees' leaf values become outputs.
#[derive(Debug, Clone, PartialEq)]
enum Combine {
    /// scikit-learn, float64: `out = base + Σ scale·leaf` in tree order, divided by the number
    /// of trees when `mean` (forests).
    Sklearn {
        base: Vec<f64>,
        scale: f64,
        mean: bool,
    },
    /// XGBoost, float32: `margin[g] = base_margin[g] + Σ leaf` over the trees of output group
    /// `g`, in tree order.
    Xgboost { base_margin: Vec<f32> },
}

/// The function from summed margins to outputs (XGBoost's `PredTransform`), in float32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Identity,
    Sigmoid,
    Softmax,
}

/// How a classifier picks its class (each library's `predict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClassRule {
    /// The first largest output (`numpy.argmax` of the probabilities: scikit-learn,
    /// `XGBClassifier.predict` under `multi:softprob`).
    ArgmaxOutputs,
    /// The first largest margin (XGBoost `multi:softmax`, whose booster returns the class).
    ArgmaxMargins,
    /// Class 1 when the single output (a probability) is above 0.5, else class 0
    /// (`XGBClassifier.predict` under `binary:logistic`).
    AboveHalf,
}

/// Marks a leaf in [`Node::feature`].
const LEAF: u32 = u32::MAX;

/// One node of the flat array. For a leaf, `feature == LEAF` and `left` is the offset of its
/// values in [`TreeModel::leaf_values`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    /// float64 for scikit-learn; for XGBoost a float32 value held exactly.
    threshold: f64,
    feature: u32,
    left: u32,
    right: u32,
    missing_left: bool,
}

/// A tree: its root in the node array and the first output its leaves add to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tree {
    root: u32,
    output: u32,
}

/// One tree as a source format gives it: parallel arrays indexed by node id, leaves marked by
/// `left == -1`. [`Builder::push`] checks and flattens it.
pub(crate) struct SourceTree {
    pub left: Vec<i64>,
    pub right: Vec<i64>,
    pub feature: Vec<i64>,
    pub threshold: Vec<f64>,
    pub missing_left: Vec<bool>,
    /// `width` values per node (only leaves' are read), node after node.
    pub values: Vec<f64>,
}

/// A decision tree or tree ensemble, ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeModel {
    file: String,
    description: String,
    n_features: usize,
    feature_names: Option<Vec<String>>,
    nodes: Vec<Node>,
    leaf_values: Vec<f64>,
    trees: Vec<Tree>,
    /// Values per leaf: each tree adds them to outputs `output .. output + leaf_width`.
    leaf_width: usize,
    n_outputs: usize,
    split: SplitRule,
    combine: Combine,
    link: Link,
    task: Task,
    class_rule: ClassRule,
}

/// Collects trees into a [`TreeModel`]'s flat arrays.
pub(crate) struct Builder {
    file: String,
    n_features: usize,
    leaf_width: usize,
    nodes: Vec<Node>,
    leaf_values: Vec<f64>,
    trees: Vec<Tree>,
}

impl Builder {
    pub fn new(file: &str, n_features: usize, leaf_width: usize) -> Self {
        Builder {
            file: file.to_string(),
            n_features,
            leaf_width,
            nodes: Vec::new(),
            leaf_values: Vec::new(),
            trees: Vec::new(),
        }
    }

    /// Checks tree `t` (`what` names it in errors: "tree 3") and appends it depth-first from
    /// node 0: every node reachable once (no cycle, no shared child), children in range, split
    /// features below the feature count. Unreachable nodes (XGBoost's deleted ones) are dropped.
    pub fn push(&mut self, t: &SourceTree, output: usize, what: &str) -> Result<(), ModelError> {
        let n = t.left.len();
        let w = self.leaf_width;
        if n == 0
            || [
                t.right.len(),
                t.feature.len(),
                t.threshold.len(),
                t.missing_left.len(),
            ]
            .iter()
            .any(|&l| l != n)
            || t.values.len() != n * w
        {
            return Err(self.err(format!(
                "{what}: its node arrays have different lengths (or none)"
            )));
        }
        // Indices are u32; a model this large would not fit in memory anyway.
        if self.nodes.len() + n >= LEAF as usize || self.leaf_values.len() + n * w >= LEAF as usize
        {
            return Err(self.err(format!("{what}: the model has more than 2^32 nodes")));
        }
        let root = self.nodes.len();
        let mut seen = vec![false; n];
        // (source node, index of the flat node whose child link waits for it, is-right-child)
        let mut stack: Vec<(usize, Option<(usize, bool)>)> = vec![(0, None)];
        while let Some((id, parent)) = stack.pop() {
            if seen[id] {
                return Err(self.err(format!(
                    "{what}: node {id} is reached twice (the children arrays do not form a tree)"
                )));
            }
            seen[id] = true;
            let at = self.nodes.len();
            if let Some((p, is_right)) = parent {
                if is_right {
                    self.nodes[p].right = at as u32;
                } else {
                    self.nodes[p].left = at as u32;
                }
            }
            let (l, r) = (t.left[id], t.right[id]);
            if l == -1 {
                if r != -1 {
                    return Err(self.err(format!(
                        "{what}: node {id} has no left child but a right child {r}"
                    )));
                }
                let offset = self.leaf_values.len() as u32;
                self.leaf_values
                    .extend_from_slice(&t.values[id * w..(id + 1) * w]);
                self.nodes.push(Node {
                    threshold: 0.0,
                    feature: LEAF,
                    left: offset,
                    right: 0,
                    missing_left: false,
                });
                continue;
            }
            let child = |c: i64| -> Result<usize, ModelError> {
                usize::try_from(c).ok().filter(|&c| c < n).ok_or_else(|| {
                    self.err(format!("{what}: node {id} has child {c}, outside 0..{n}"))
                })
            };
            let (l, r) = (child(l)?, child(r)?);
            let feature = usize::try_from(t.feature[id])
                .ok()
                .filter(|&f| f < self.n_features)
                .ok_or_else(|| {
                    self.err(format!(
                        "{what}: node {id} splits on feature {}, but the model has {} features",
                        t.feature[id], self.n_features
                    ))
                })?;
            if t.threshold[id].is_nan() {
                return Err(self.err(format!("{what}: node {id} has a NaN threshold")));
            }
            self.nodes.push(Node {
                threshold: t.threshold[id],
                feature: feature as u32,
                left: 0,
                right: 0,
                missing_left: t.missing_left[id],
            });
            // Right pushed first so the left child is laid out right after its parent.
            stack.push((r, Some((at, true))));
            stack.push((l, Some((at, false))));
        }
        self.trees.push(Tree {
            root: root as u32,
            output: output as u32,
        });
        Ok(())
    }

    fn err(&self, message: String) -> ModelError {
        ModelError {
            file: self.file.clone(),
            message,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        self,
        description: String,
        feature_names: Option<Vec<String>>,
        n_outputs: usize,
        split: SplitRule,
        combine: Combine,
        link: Link,
        task: Task,
        class_rule: ClassRule,
    ) -> TreeModel {
        TreeModel {
            file: self.file,
            description,
            n_features: self.n_features,
            feature_names,
            nodes: self.nodes,
            leaf_values: self.leaf_values,
            trees: self.trees,
            leaf_width: self.leaf_width,
            n_outputs,
            split,
            combine,
            link,
            task,
            class_rule,
        }
    }
}

impl TreeModel {
    /// Reads a model file: XGBoost's JSON model (top-level `"learner"`) or rove's export of
    /// scikit-learn trees (`"format": "rove-trees"`). Errors name the file.
    pub fn load(path: &Path) -> Result<TreeModel, ModelError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| ModelError {
            file: file.clone(),
            message: format!("cannot read the model file: {e}"),
        })?;
        let text = std::str::from_utf8(&bytes).map_err(|_| ModelError {
            file: file.clone(),
            message: "not a JSON text (XGBoost's binary .ubj models are not read: save the \
                      model with a .json name)"
                .into(),
        })?;
        TreeModel::from_json(text, &file)
    }

    /// Parses a model from JSON text; `file` names it in errors.
    pub fn from_json(text: &str, file: &str) -> Result<TreeModel, ModelError> {
        let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| ModelError {
            file: file.to_string(),
            message: format!("malformed JSON: {e}"),
        })?;
        if doc.get("learner").is_some() {
            xgboost::from_json(&doc, file)
        } else if doc.get("format").and_then(|f| f.as_str()) == Some(sklearn::FORMAT) {
            sklearn::from_json(&doc, file)
        } else {
            Err(ModelError {
                file: file.to_string(),
                message: format!(
                    "neither an XGBoost JSON model (no \"learner\" key) nor rove's export of \
                     scikit-learn trees (no \"format\": \"{}\")",
                    sklearn::FORMAT
                ),
            })
        }
    }

    /// The file the model came from.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// What the model is, for messages: "XGBoost multi:softprob, 40 trees".
    pub fn description(&self) -> &str {
        &self.description
    }

    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// The feature names the model was trained with, if the file records them.
    pub fn feature_names(&self) -> Option<&[String]> {
        self.feature_names.as_deref()
    }

    /// Values [`predict_into`](Self::predict_into) writes per row.
    pub fn n_outputs(&self) -> usize {
        self.n_outputs
    }

    pub fn n_trees(&self) -> usize {
        self.trees.len()
    }

    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The class labels of a classifier, in output order.
    pub fn classes(&self) -> Option<&[Label]> {
        match &self.task {
            Task::Classification { classes } => Some(classes),
            Task::Regression => None,
        }
    }

    fn err(&self, message: String) -> ModelError {
        ModelError {
            file: self.file.clone(),
            message,
        }
    }

    fn check(&self, x: &[f64], out: &[f64]) -> Result<(), ModelError> {
        if x.len() != self.n_features {
            return Err(self.err(format!(
                "the model expects {} features, got {}",
                self.n_features,
                x.len()
            )));
        }
        if out.len() != self.n_outputs {
            return Err(self.err(format!(
                "the model has {} outputs, got a buffer of {}",
                self.n_outputs,
                out.len()
            )));
        }
        Ok(())
    }

    /// Offset in `leaf_values` of the leaf row `x` reaches from `root`.
    #[inline]
    fn leaf(&self, root: u32, x: &[f64]) -> usize {
        let mut n = root as usize;
        loop {
            let node = &self.nodes[n];
            if node.feature == LEAF {
                return node.left as usize;
            }
            // Both libraries compare the float32 value of the feature (see the crate docs).
            let v = x[node.feature as usize] as f32;
            let go_left = if v.is_nan() {
                node.missing_left
            } else {
                match self.split {
                    SplitRule::LessOrEqual => v as f64 <= node.threshold,
                    SplitRule::LessThan => (v as f64) < node.threshold,
                }
            };
            n = if go_left { node.left } else { node.right } as usize;
        }
    }

    /// The summed margins before the link (XGBoost's `output_margin=True`); for scikit-learn
    /// models the same as [`predict_into`](Self::predict_into).
    pub fn margins_into(&self, x: &[f64], out: &mut [f64]) -> Result<(), ModelError> {
        self.check(x, out)?;
        self.sum(x, out);
        Ok(())
    }

    fn sum(&self, x: &[f64], out: &mut [f64]) {
        let w = self.leaf_width;
        match &self.combine {
            Combine::Sklearn { base, scale, mean } => {
                out.copy_from_slice(base);
                for t in &self.trees {
                    let leaf = &self.leaf_values[self.leaf(t.root, x)..][..w];
                    let dst = &mut out[t.output as usize..][..w];
                    for (o, v) in dst.iter_mut().zip(leaf) {
                        *o += scale * v;
                    }
                }
                if *mean {
                    let n = self.trees.len() as f64;
                    out.iter_mut().for_each(|o| *o /= n);
                }
            }
            Combine::Xgboost { base_margin } => {
                for (o, b) in out.iter_mut().zip(base_margin) {
                    *o = *b as f64;
                }
                for t in &self.trees {
                    let leaf = self.leaf(t.root, x);
                    for (k, o) in out[t.output as usize..][..w].iter_mut().enumerate() {
                        // A float32 sum, held in the f64 buffer exactly.
                        *o = (*o as f32 + self.leaf_values[leaf + k] as f32) as f64;
                    }
                }
            }
        }
    }

    /// The model's outputs for one row into `out` (length [`n_outputs`](Self::n_outputs)):
    /// predicted values, or class probabilities (`predict_proba`; XGBoost `binary:logistic`:
    /// the probability of class 1; `multi:softmax`: the probabilities `multi:softprob` would
    /// give). Does not allocate.
    pub fn predict_into(&self, x: &[f64], out: &mut [f64]) -> Result<(), ModelError> {
        self.check(x, out)?;
        self.sum(x, out);
        match self.link {
            Link::Identity => {}
            Link::Sigmoid => out.iter_mut().for_each(|o| *o = sigmoid(*o as f32) as f64),
            Link::Softmax => softmax(out),
        }
        Ok(())
    }

    /// A single-output model's prediction (a regressor with one target, or the probability of
    /// class 1 of an XGBoost binary classifier).
    pub fn predict_value(&self, x: &[f64]) -> Result<f64, ModelError> {
        if self.n_outputs != 1 {
            return Err(self.err(format!(
                "the model has {} outputs; read them with predict_into",
                self.n_outputs
            )));
        }
        let mut out = [0.0];
        self.predict_into(x, &mut out)?;
        Ok(out[0])
    }

    /// A classifier's predicted class, as an index into [`classes`](Self::classes), by the
    /// library's own rule (`predict`). `scratch` holds [`n_outputs`](Self::n_outputs) values.
    pub fn predict_class(&self, x: &[f64], scratch: &mut [f64]) -> Result<usize, ModelError> {
        if self.classes().is_none() {
            return Err(self.err("the model is a regressor, not a classifier".into()));
        }
        match self.class_rule {
            ClassRule::ArgmaxMargins => self.margins_into(x, scratch)?,
            ClassRule::ArgmaxOutputs | ClassRule::AboveHalf => self.predict_into(x, scratch)?,
        }
        Ok(match self.class_rule {
            ClassRule::ArgmaxOutputs | ClassRule::ArgmaxMargins => argmax(scratch),
            ClassRule::AboveHalf => usize::from(scratch[0] > 0.5),
        })
    }
}

/// Index of the first largest value (`numpy.argmax`, for values without NaN; a NaN is passed
/// over).
pub fn argmax(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] || (values[best].is_nan() && !v.is_nan()) {
            best = i;
        }
    }
    best
}

/// XGBoost's `common::Sigmoid` (`src/common/math.h`), in float32.
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// XGBoost's `common::Softmax` (`src/common/math.h`): subtract the largest margin and
/// exponentiate in float32, sum the exponentials in float64, divide by that sum cast to float32.
/// (The float64 sum is what makes the results bit-equal to XGBoost 3.2's on almost every row;
/// a float32 sum differs by an ulp on a quarter of them.)
fn softmax(out: &mut [f64]) {
    let max = out
        .iter()
        .map(|&v| v as f32)
        .fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0f64;
    for o in out.iter_mut() {
        let e = (*o as f32 - max).exp();
        sum += e as f64;
        *o = e as f64;
    }
    let sum = sum as f32;
    for o in out.iter_mut() {
        *o = (*o as f32 / sum) as f64;
    }
}

#[cfg(test)]
mod tests;
