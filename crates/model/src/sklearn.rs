//! rove's export of scikit-learn trees: a small JSON file that `rove.learn.export_sklearn`
//! writes from a fitted `DecisionTreeClassifier`, `DecisionTreeRegressor`,
//! `RandomForestClassifier`/`Regressor`, `ExtraTreesClassifier`/`Regressor` or
//! `GradientBoostingRegressor`. Each tree is the arrays of the estimator's `tree_` attribute
//! (`sklearn.tree._tree.Tree`, documented in scikit-learn's "Understanding the decision tree
//! structure" example), unchanged:
//!
//! ```json
//! {
//!   "format": "rove-trees", "version": 1,
//!   "estimator": "sklearn.tree.DecisionTreeClassifier", "sklearn_version": "1.9.1",
//!   "task": "classification",            // or "regression"
//!   "n_features": 10,
//!   "feature_names": ["cwnd_pkts", ...],  // or null
//!   "classes": [0, 1, 2],                 // classification: classes_, numbers or strings
//!   "n_outputs": 3,                       // values per leaf (classes, or regression targets)
//!   "combine": "sum",                     // "sum" or "mean" (forests)
//!   "scale": 1.0,                         // optional, default 1: each tree's values times this
//!   "base": [0.0, 0.0, 0.0],              // optional, default zeros: where the sum starts
//!   "trees": [{
//!     "children_left": [1, -1, -1],       // -1: a leaf (sklearn's TREE_LEAF)
//!     "children_right": [2, -1, -1],
//!     "feature": [0, -2, -2],             // split feature (-2 at leaves)
//!     "threshold": [0.5, -2.0, -2.0],     // float64; x <= threshold goes left; "inf"/"-inf"
//!     "missing_go_to_left": [1, 0, 0],    // where NaN goes (sklearn ≥ 1.3; optional)
//!     "value": [[...], [...], [...]]      // per node, n_outputs values (read at leaves)
//!   }]
//! }
//! ```
//!
//! A threshold may be infinite: scikit-learn splits the missing values from all others with
//! threshold +inf (`_splitter.pyx`). JSON has no infinity, so the export writes `"inf"` (or
//! `"-inf"`) there.
//!
//! Outputs: `base + Σ_trees scale · value[leaf]` in float64, in tree order, divided by the
//! number of trees for `"mean"`. That is each estimator's own arithmetic:
//!
//! * a decision tree: `value[leaf]` (`Tree.predict`); for a classifier (scikit-learn ≥ 1.4)
//!   the class fractions `predict_proba` returns, and `predict` is their first argmax;
//! * a forest: `"mean"`, the sum from zero divided by the number of trees
//!   (`ForestClassifier.predict_proba`, `ForestRegressor.predict`; with `n_jobs = 1` the trees
//!   are added in order);
//! * gradient boosting (regression): `"sum"` from the init estimator's constant prediction
//!   with `scale` the learning rate (`_gradient_boosting.pyx` `predict_stages`:
//!   `out += scale * value`).

use crate::json::{self, field, Res};
use crate::{
    Builder, ClassRule, Combine, Label, Link, ModelError, SourceTree, SplitRule, Task, TreeModel,
};
use serde_json::Value;

/// The value of the `format` key.
pub const FORMAT: &str = "rove-trees";
/// The version this crate reads.
pub const VERSION: i64 = 1;

pub(crate) fn from_json(doc: &Value, file: &str) -> Result<TreeModel, ModelError> {
    read(doc, file).map_err(|message| ModelError {
        file: file.to_string(),
        message,
    })
}

fn count(doc: &Value, key: &str) -> Res<usize> {
    let n = json::integer(field(doc, key, "")?, key)?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| format!("{key} = {n}, must be 1 or more"))
}

fn read(doc: &Value, file: &str) -> Res<TreeModel> {
    let version = json::integer(field(doc, "version", "")?, "version")?;
    if version != VERSION {
        return Err(format!(
            "{FORMAT} version {version}; this engine reads version {VERSION}"
        ));
    }
    let n_features = count(doc, "n_features")?;
    let n_outputs = count(doc, "n_outputs")?;
    let estimator = match doc.get("estimator") {
        Some(v) => json::string(v, "estimator")?.to_string(),
        None => "scikit-learn trees".to_string(),
    };
    let task = match json::string(field(doc, "task", "")?, "task")? {
        "regression" => Task::Regression,
        "classification" => {
            let classes = json::array(field(doc, "classes", "")?, "classes")?
                .iter()
                .enumerate()
                .map(|(i, c)| match c {
                    Value::Number(n) => Ok(Label::Number(n.as_f64().unwrap_or(f64::NAN))),
                    Value::String(s) => Ok(Label::Text(s.clone())),
                    Value::Bool(b) => Ok(Label::Number(f64::from(u8::from(*b)))),
                    other => Err(format!(
                        "classes[{i}] should be a number or a string, is {}",
                        json::kind(other)
                    )),
                })
                .collect::<Res<Vec<_>>>()?;
            if classes.len() != n_outputs {
                return Err(format!(
                    "{} classes but n_outputs = {n_outputs} (a classifier has one output per class)",
                    classes.len()
                ));
            }
            Task::Classification { classes }
        }
        other => {
            return Err(format!(
                "task = {other:?}; expected \"classification\" or \"regression\""
            ))
        }
    };
    let mean = match json::string(field(doc, "combine", "")?, "combine")? {
        "mean" => true,
        "sum" => false,
        other => return Err(format!("combine = {other:?}; expected \"sum\" or \"mean\"")),
    };
    let scale = match doc.get("scale") {
        Some(v) => json::float(v, "scale")?,
        None => 1.0,
    };
    let base = match doc.get("base") {
        Some(v) => {
            let base = json::floats(v, "base")?;
            if base.len() != n_outputs {
                return Err(format!(
                    "base has {} values for n_outputs = {n_outputs}",
                    base.len()
                ));
            }
            base
        }
        None => vec![0.0; n_outputs],
    };
    let feature_names = json::names(doc.get("feature_names"), "feature_names")?;
    if let Some(names) = &feature_names {
        if names.len() != n_features {
            return Err(format!(
                "feature_names has {} names for n_features = {n_features}",
                names.len()
            ));
        }
    }

    let trees = json::array(field(doc, "trees", "")?, "trees")?;
    if trees.is_empty() {
        return Err("trees is empty".into());
    }
    let mut b = Builder::new(file, n_features, n_outputs);
    for (i, tree) in trees.iter().enumerate() {
        let tp = format!("trees[{i}]");
        let source = source_tree(tree, &tp, n_outputs)?;
        b.push(&source, 0, &tp).map_err(|e| e.message)?;
    }
    let description = format!("{estimator}, {} trees", trees.len());
    Ok(b.finish(
        description,
        feature_names,
        n_outputs,
        SplitRule::LessOrEqual,
        Combine::Sklearn { base, scale, mean },
        Link::Identity,
        task,
        ClassRule::ArgmaxOutputs,
    ))
}

fn source_tree(tree: &Value, tp: &str, width: usize) -> Res<SourceTree> {
    let get = |key: &str| field(tree, key, tp);
    let at = |key: &str| format!("{tp}.{key}");
    let left = json::integers(get("children_left")?, &at("children_left"))?;
    let missing_left = match tree.get("missing_go_to_left") {
        Some(v) => json::flags(v, &at("missing_go_to_left"))?,
        // Before scikit-learn 1.3 trees had no missing-value support: NaN <= t is false.
        None => vec![false; left.len()],
    };
    let rows = json::array(get("value")?, &at("value"))?;
    let mut values = Vec::with_capacity(rows.len() * width);
    for (i, row) in rows.iter().enumerate() {
        let row = json::floats(row, &format!("{tp}.value[{i}]"))?;
        if row.len() != width {
            return Err(format!(
                "{tp}.value[{i}] has {} values, expected n_outputs = {width}",
                row.len()
            ));
        }
        values.extend(row);
    }
    Ok(SourceTree {
        right: json::integers(get("children_right")?, &at("children_right"))?,
        feature: json::integers(get("feature")?, &at("feature"))?,
        threshold: json::floats_or_infinite(get("threshold")?, &at("threshold"))?,
        missing_left,
        values,
        left,
    })
}
