//! XGBoost's JSON model format (`Booster.save_model("m.json")`), schema `doc/model.schema` in
//! the XGBoost repository; checked against the files XGBoost 3.2 writes. The fields read:
//!
//! ```text
//! learner.learner_model_param   base_score  "5E-1", or "[8.9E-1]" / "[m0,m1,...]" (XGBoost ≥ 3.1)
//!                               num_class, num_feature, num_target  (numbers written as strings)
//! learner.objective.name        "reg:squarederror", "binary:logistic", "multi:softprob", ...
//! learner.feature_names         [] unless trained on named columns
//! learner.gradient_booster      name "gbtree"; model.trees[], model.tree_info[] (output group
//!                               of each tree: its class, or target)
//! trees[i]                      left_children, right_children (-1: a leaf), split_indices,
//!                               split_conditions (the leaf value at a leaf), default_left,
//!                               split_type (0: numerical), tree_param.size_leaf_vector
//! ```
//!
//! `base_score` is in output space (XGBoost's "Intercept" tutorial, `doc/tutorials/intercept.rst`):
//! the margin a model starts from is the objective's `ProbToMargin` of it, the logit
//! `-ln(1/p - 1)` for the logistic objectives and the value itself for the others. For
//! `multi:softprob`/`multi:softmax`, XGBoost ≥ 3.1 stores one value per class which it adds to
//! the margins as it is (checked: XGBoost 3.2's `predict(output_margin=True)` equals these values
//! plus the leaf sums).
//!
//! Every tree in the file is evaluated, as `Booster.predict` does by default. (XGBoost's
//! scikit-learn wrapper predicts a model trained with early stopping with its trees up to
//! `best_iteration` only: save such a model sliced, `booster[: best_iteration + 1]`.)
//!
//! Not read (a clear error): DART and linear boosters, categorical splits, vector-leaf trees
//! (`multi_strategy = "multi_output_tree"`), and objectives other than those listed in
//! [`OBJECTIVES`].

use crate::json::{self, field, Res};
use crate::{
    Builder, ClassRule, Combine, Label, Link, ModelError, SourceTree, SplitRule, Task, TreeModel,
};
use serde_json::Value;

/// The objectives read, with what their outputs are.
pub const OBJECTIVES: &[&str] = &[
    "reg:squarederror",
    "reg:linear",
    "reg:absoluteerror",
    "reg:pseudohubererror",
    "reg:logistic",
    "binary:logistic",
    "multi:softprob",
    "multi:softmax",
];

pub(crate) fn from_json(doc: &Value, file: &str) -> Result<TreeModel, ModelError> {
    read(doc, file).map_err(|message| ModelError {
        file: file.to_string(),
        message,
    })
}

fn read(doc: &Value, file: &str) -> Res<TreeModel> {
    let learner = field(doc, "learner", "")?;
    let params = field(learner, "learner_model_param", "learner")?;
    let p = "learner.learner_model_param";
    let n_features = json::integer(
        field(params, "num_feature", p)?,
        &format!("{p}.num_feature"),
    )?;
    let num_class = json::integer(field(params, "num_class", p)?, &format!("{p}.num_class"))?;
    // num_target appeared in XGBoost 2.0 (multi-target regression); older files have one target.
    let num_target = match params.get("num_target") {
        Some(v) => json::integer(v, &format!("{p}.num_target"))?,
        None => 1,
    };
    let n_features =
        usize::try_from(n_features).map_err(|_| format!("{p}.num_feature is negative"))?;
    let groups = num_class.max(num_target).max(1) as usize;

    let objective = json::string(
        field(
            field(learner, "objective", "learner")?,
            "name",
            "learner.objective",
        )?,
        "learner.objective.name",
    )?;
    let classes = |n: usize| Task::Classification {
        classes: (0..n).map(|k| Label::Number(k as f64)).collect(),
    };
    // (link, base_score is a probability, task, how predict picks a class)
    let (link, logistic_base, task, class_rule) = match objective {
        "reg:squarederror" | "reg:linear" | "reg:absoluteerror" | "reg:pseudohubererror" => (
            Link::Identity,
            false,
            Task::Regression,
            ClassRule::ArgmaxOutputs,
        ),
        "reg:logistic" => (
            Link::Sigmoid,
            true,
            Task::Regression,
            ClassRule::ArgmaxOutputs,
        ),
        "binary:logistic" => (Link::Sigmoid, true, classes(2), ClassRule::AboveHalf),
        "multi:softprob" => (
            Link::Softmax,
            false,
            classes(groups),
            ClassRule::ArgmaxOutputs,
        ),
        "multi:softmax" => (
            Link::Softmax,
            false,
            classes(groups),
            ClassRule::ArgmaxMargins,
        ),
        other => {
            return Err(format!(
                "unknown objective {other:?}; read: {}",
                OBJECTIVES.join(", ")
            ))
        }
    };
    let multiclass = objective.starts_with("multi:");
    if multiclass && num_class < 2 {
        return Err(format!(
            "{objective} with num_class = {num_class} (need 2 or more)"
        ));
    }
    if !multiclass && num_class > 1 {
        return Err(format!(
            "num_class = {num_class} with objective {objective}"
        ));
    }
    if logistic_base && groups != 1 {
        return Err(format!("{objective} with {groups} outputs (expected 1)"));
    }

    let base_margin = base_margin(field(params, "base_score", p)?, groups, logistic_base)?;

    let booster = field(learner, "gradient_booster", "learner")?;
    let name = json::string(
        field(booster, "name", "learner.gradient_booster")?,
        "learner.gradient_booster.name",
    )?;
    if name != "gbtree" {
        return Err(format!(
            "booster {name:?} is not read (only \"gbtree\"; DART and linear boosters are not)"
        ));
    }
    let mp = "learner.gradient_booster.model";
    let model = field(booster, "model", "learner.gradient_booster")?;
    let trees = json::array(field(model, "trees", mp)?, &format!("{mp}.trees"))?;
    let tree_info = json::integers(field(model, "tree_info", mp)?, &format!("{mp}.tree_info"))?;
    if tree_info.len() != trees.len() {
        return Err(format!(
            "{mp}.tree_info has {} entries for {} trees",
            tree_info.len(),
            trees.len()
        ));
    }

    let mut b = Builder::new(file, n_features, 1);
    for (i, (tree, &group)) in trees.iter().zip(&tree_info).enumerate() {
        let tp = format!("{mp}.trees[{i}]");
        let group = usize::try_from(group)
            .ok()
            .filter(|&g| g < groups)
            .ok_or_else(|| format!("{mp}.tree_info[{i}] = {group}, outside 0..{groups}"))?;
        let source = source_tree(tree, &tp)?;
        b.push(&source, group, &format!("tree {i}"))
            .map_err(|e| e.message)?;
    }

    let feature_names = json::names(learner.get("feature_names"), "learner.feature_names")?;
    if let Some(names) = &feature_names {
        if names.len() != n_features {
            return Err(format!(
                "learner.feature_names has {} names for {n_features} features",
                names.len()
            ));
        }
    }
    let description = format!("XGBoost {objective}, {} trees", trees.len());
    Ok(b.finish(
        description,
        feature_names,
        groups,
        SplitRule::LessThan,
        Combine::Xgboost { base_margin },
        link,
        task,
        class_rule,
    ))
}

/// `base_score` → the margin each output group starts from (see the module docs).
fn base_margin(v: &Value, groups: usize, logistic: bool) -> Res<Vec<f32>> {
    let path = "learner.learner_model_param.base_score";
    let text = json::string(v, path)?;
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
    let values: Vec<f32> = inner
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<f32>()
                .map_err(|_| format!("{path} = {text:?} is not a number or a list of numbers"))
        })
        .collect::<Res<_>>()?;
    let values = match values.len() {
        1 => vec![values[0]; groups],
        n if n == groups => values,
        n => return Err(format!("{path} has {n} values for {groups} outputs")),
    };
    if !logistic {
        return Ok(values);
    }
    values
        .into_iter()
        .map(|p| {
            if p > 0.0 && p < 1.0 {
                // LogisticRegression::ProbToMargin (src/objective/regression_loss.h), float32.
                Ok(-(1.0f32 / p - 1.0f32).ln())
            } else {
                Err(format!(
                    "{path} = {p} must lie in (0, 1) for a logistic objective"
                ))
            }
        })
        .collect()
}

fn source_tree(tree: &Value, tp: &str) -> Res<SourceTree> {
    let get = |key: &str| field(tree, key, tp);
    let at = |key: &str| format!("{tp}.{key}");
    if let Some(param) = tree.get("tree_param") {
        if let Some(v) = param.get("size_leaf_vector") {
            let size = json::integer(v, &at("tree_param.size_leaf_vector"))?;
            if size > 1 {
                return Err(format!(
                    "{tp} has vector leaves (size_leaf_vector = {size}): multi_output_tree \
                     models are not read; train with multi_strategy = \"one_output_per_tree\""
                ));
            }
        }
    }
    let left = json::integers(get("left_children")?, &at("left_children"))?;
    if let Some(types) = tree.get("split_type") {
        let types = json::integers(types, &at("split_type"))?;
        if let Some(node) = types
            .iter()
            .enumerate()
            .position(|(i, &t)| t != 0 && left.get(i).is_some_and(|&l| l != -1))
        {
            return Err(format!(
                "{tp} node {node} is a categorical split; only numerical splits are read"
            ));
        }
    }
    let conditions = json::floats(get("split_conditions")?, &at("split_conditions"))?;
    // Thresholds and leaf values are float32 in XGBoost (bst_float); hold them exactly as such.
    let as_f32: Vec<f64> = conditions.iter().map(|&c| c as f32 as f64).collect();
    Ok(SourceTree {
        right: json::integers(get("right_children")?, &at("right_children"))?,
        feature: json::integers(get("split_indices")?, &at("split_indices"))?,
        missing_left: json::flags(get("default_left")?, &at("default_left"))?,
        threshold: as_f32.clone(),
        // At a leaf, split_conditions holds the leaf value (RegTree::Node's union, written as is).
        values: as_f32,
        left,
    })
}
