//! Hand-built trees with hand-computed outputs; the comparison with scikit-learn's and
//! XGBoost's own predictions on random inputs is `tests/test_tree_models.py`.

use super::*;
use serde_json::{json, Value};

fn model(doc: Value) -> TreeModel {
    TreeModel::from_json(&doc.to_string(), "m.json").unwrap()
}

fn error(doc: Value) -> String {
    TreeModel::from_json(&doc.to_string(), "m.json")
        .unwrap_err()
        .to_string()
}

/// x0 <= 0.5 ? A : (x1 <= 2 ? B : C), leaves given as rows of values (node 2's, an internal
/// node's, is filled in by `sklearn`).
fn sk_tree(a: Value, b: Value, c: Value) -> Value {
    json!({
        "children_left": [1, -1, 3, -1, -1],
        "children_right": [2, -1, 4, -1, -1],
        "feature": [0, -2, 1, -2, -2],
        "threshold": [0.5, -2.0, 2.0, -2.0, -2.0],
        "missing_go_to_left": [0, 0, 1, 0, 0],
        "value": [a.clone(), a, [], b, c],
    })
}

fn sklearn(task: &str, n_outputs: usize, combine: &str, trees: Vec<Value>) -> Value {
    let mut doc = json!({
        "format": "rove-trees", "version": 1,
        "task": task, "n_features": 2, "n_outputs": n_outputs,
        "combine": combine, "trees": trees,
    });
    // Internal nodes' values are not read; give them the right width anyway.
    for t in doc["trees"].as_array_mut().unwrap() {
        t["value"][2] = json!(vec![0.0; n_outputs]);
    }
    doc
}

fn regressor_tree() -> Value {
    sklearn(
        "regression",
        1,
        "sum",
        vec![sk_tree(json!([1.0]), json!([3.0]), json!([4.0]))],
    )
}

#[test]
fn sklearn_tree_sends_values_at_the_threshold_left() {
    let m = model(regressor_tree());
    assert_eq!(m.predict_value(&[0.5, 0.0]).unwrap(), 1.0);
    assert_eq!(m.predict_value(&[0.6, 2.0]).unwrap(), 3.0);
    assert_eq!(m.predict_value(&[0.6, 2.5]).unwrap(), 4.0);
    assert_eq!(m.predict_value(&[-7.0, 99.0]).unwrap(), 1.0);
}

#[test]
fn sklearn_tree_compares_the_float32_value_of_a_feature() {
    // float32(0.1) = 0.100000001490116..., above the float64 threshold 0.1: sklearn sends it
    // right (it casts X to float32), where a float64 comparison would send it left.
    let mut doc = regressor_tree();
    doc["trees"][0]["threshold"][0] = json!(0.1);
    let m = model(doc);
    assert_eq!(m.predict_value(&[0.1, 0.0]).unwrap(), 3.0);
    assert_eq!(m.predict_value(&[0.09999999, 0.0]).unwrap(), 1.0);
}

#[test]
fn sklearn_tree_sends_nan_where_the_node_says() {
    let m = model(regressor_tree());
    // Node 0: missing_go_to_left = 0 -> node 2; node 2: missing_go_to_left = 1 -> leaf 3.
    assert_eq!(m.predict_value(&[f64::NAN, f64::NAN]).unwrap(), 3.0);
    assert_eq!(m.predict_value(&[0.0, f64::NAN]).unwrap(), 1.0);
}

#[test]
fn sklearn_classifier_gives_fractions_and_the_first_largest_class() {
    let mut doc = sklearn(
        "classification",
        2,
        "sum",
        vec![sk_tree(
            json!([0.25, 0.75]),
            json!([0.5, 0.5]),
            json!([1.0, 0.0]),
        )],
    );
    doc["classes"] = json!(["bbr", "cubic"]);
    let m = model(doc);
    let mut out = [0.0; 2];
    m.predict_into(&[0.0, 0.0], &mut out).unwrap();
    assert_eq!(out, [0.25, 0.75]);
    assert_eq!(m.predict_class(&[0.0, 0.0], &mut out).unwrap(), 1);
    // A tie goes to the first class, as numpy.argmax.
    assert_eq!(m.predict_class(&[1.0, 0.0], &mut out).unwrap(), 0);
    assert_eq!(m.predict_class(&[1.0, 3.0], &mut out).unwrap(), 0);
    assert_eq!(
        m.classes().unwrap(),
        &[Label::Text("bbr".into()), Label::Text("cubic".into())]
    );
}

#[test]
fn forest_averages_its_trees() {
    let t1 = sk_tree(json!([1.0]), json!([3.0]), json!([4.0]));
    let t2 = sk_tree(json!([2.0]), json!([6.0]), json!([9.0]));
    let m = model(sklearn("regression", 1, "mean", vec![t1, t2]));
    assert_eq!(m.predict_value(&[0.0, 0.0]).unwrap(), 1.5);
    assert_eq!(m.predict_value(&[1.0, 9.0]).unwrap(), 6.5);
}

#[test]
fn gradient_boosting_sums_scaled_trees_from_its_base() {
    let t1 = sk_tree(json!([1.0]), json!([3.0]), json!([4.0]));
    let t2 = sk_tree(json!([2.0]), json!([6.0]), json!([8.0]));
    let mut doc = sklearn("regression", 1, "sum", vec![t1, t2]);
    doc["base"] = json!([10.0]);
    doc["scale"] = json!(0.5);
    let m = model(doc);
    assert_eq!(
        m.predict_value(&[0.0, 0.0]).unwrap(),
        10.0 + 0.5 * 1.0 + 0.5 * 2.0
    );
    assert_eq!(
        m.predict_value(&[1.0, 2.0]).unwrap(),
        10.0 + 0.5 * 3.0 + 0.5 * 6.0
    );
}

#[test]
fn trees_are_laid_out_depth_first_with_the_left_child_next() {
    let m = model(regressor_tree());
    assert_eq!(m.nodes.len(), 5);
    // Source order 0,1,2,3,4 is already depth-first; left children follow their parent.
    assert_eq!((m.nodes[0].left, m.nodes[0].right), (1, 2));
    assert_eq!((m.nodes[2].left, m.nodes[2].right), (3, 4));
    assert_eq!(m.leaf_values, vec![1.0, 3.0, 4.0]);
}

/// An XGBoost JSON model as XGBoost 3.2 writes it, with the given trees.
fn xgb(
    objective: &str,
    base_score: &str,
    num_class: usize,
    trees: Vec<Value>,
    info: Vec<usize>,
) -> Value {
    json!({
        "learner": {
            "attributes": {},
            "feature_names": [],
            "feature_types": [],
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": trees.len().to_string()},
                    "iteration_indptr": [],
                    "tree_info": info,
                    "trees": trees,
                },
                "name": "gbtree"
            },
            "learner_model_param": {
                "base_score": base_score, "boost_from_average": "1",
                "num_class": num_class.to_string(), "num_feature": "2", "num_target": "1"
            },
            "objective": {"name": objective}
        },
        "version": [3, 2, 0]
    })
}

/// x1 < t ? left : right, NaN to the left when `default_left`.
fn xgb_stump(t: f64, left: f64, right: f64, default_left: bool) -> Value {
    json!({
        "base_weights": [0.0, left, right],
        "default_left": [u8::from(default_left), 0, 0],
        "id": 0,
        "left_children": [1, -1, -1],
        "right_children": [2, -1, -1],
        "parents": [2147483647, 0, 0],
        "split_conditions": [t, left, right],
        "split_indices": [1, 0, 0],
        "split_type": [0, 0, 0],
        "tree_param": {"num_deleted": "0", "num_feature": "2", "num_nodes": "3", "size_leaf_vector": "1"}
    })
}

#[test]
fn xgboost_regressor_sums_in_float32_from_base_score() {
    let m = model(xgb(
        "reg:squarederror",
        "[5E-1]",
        0,
        vec![
            xgb_stump(1.5, 0.1, -0.3, true),
            xgb_stump(2.0, 0.2, 0.7, false),
        ],
        vec![0, 0],
    ));
    let f = |a: f32, b: f32| ((0.5f32 + a) + b) as f64;
    assert_eq!(m.predict_value(&[0.0, 1.0]).unwrap(), f(0.1, 0.2));
    // x < t goes left: at exactly 1.5, right in the first tree, left in the second.
    assert_eq!(m.predict_value(&[0.0, 1.5]).unwrap(), f(-0.3, 0.2));
    assert_eq!(m.predict_value(&[0.0, 2.0]).unwrap(), f(-0.3, 0.7));
    // NaN: default_left in the first tree, right in the second.
    assert_eq!(m.predict_value(&[0.0, f64::NAN]).unwrap(), f(0.1, 0.7));
}

#[test]
fn xgboost_compares_float32_features_with_float32_thresholds() {
    // The threshold 0.1 is float32(0.1) = 0.100000001490116...; the input 0.1 becomes the same
    // float32, which is not below it: right. A float64 comparison (0.1 < 0.1000000015) would go left.
    let m = model(xgb(
        "reg:squarederror",
        "0",
        0,
        vec![xgb_stump(0.1, 1.0, 2.0, false)],
        vec![0],
    ));
    assert_eq!(m.predict_value(&[0.0, 0.1]).unwrap(), 2.0);
    assert_eq!(m.predict_value(&[0.0, 0.0999999]).unwrap(), 1.0);
}

#[test]
fn xgboost_binary_logistic_starts_from_the_logit_of_base_score() {
    // base_score 0.5 -> margin 0; leaves +-1 -> sigmoid(1) = 0.7310586 (float32).
    let m = model(xgb(
        "binary:logistic",
        "5E-1",
        0,
        vec![xgb_stump(0.0, -1.0, 1.0, false)],
        vec![0],
    ));
    let p = m.predict_value(&[0.0, 3.0]).unwrap();
    assert_eq!(p, (1.0f32 / (1.0 + (-1.0f32).exp())) as f64);
    assert!((p - 0.731_058_6).abs() < 1e-7);
    let mut s = [0.0];
    assert_eq!(m.predict_class(&[0.0, 3.0], &mut s).unwrap(), 1);
    assert_eq!(m.predict_class(&[0.0, -3.0], &mut s).unwrap(), 0);
    // base_score 0.2: margin ln(0.2/0.8) = -1.3862944.
    let m = model(xgb(
        "binary:logistic",
        "[2E-1]",
        0,
        vec![xgb_stump(0.0, 0.0, 0.0, false)],
        vec![0],
    ));
    let mut margin = [0.0];
    m.margins_into(&[0.0, 0.0], &mut margin).unwrap();
    assert!((margin[0] - (-1.386_294_4)).abs() < 1e-6);
    assert!((m.predict_value(&[0.0, 0.0]).unwrap() - 0.2).abs() < 1e-7);
}

#[test]
fn xgboost_softprob_adds_each_tree_to_its_class_and_normalises() {
    let trees = vec![
        xgb_stump(0.0, 1.0, 0.0, false), // class 0
        xgb_stump(0.0, 0.0, 1.0, false), // class 1
        xgb_stump(0.0, 0.5, 0.5, false), // class 2
    ];
    let m = model(xgb("multi:softprob", "[0,0,1E-1]", 3, trees, vec![0, 1, 2]));
    let mut margins = [0.0; 3];
    m.margins_into(&[0.0, -1.0], &mut margins).unwrap();
    assert_eq!(margins, [1.0, 0.0, 0.6f32 as f64]);
    let mut p = [0.0; 3];
    m.predict_into(&[0.0, -1.0], &mut p).unwrap();
    let e = [0.0f32, -1.0, 0.6 - 1.0].map(f32::exp);
    let sum: f32 = e.iter().sum();
    for k in 0..3 {
        assert!((p[k] - (e[k] / sum) as f64).abs() < 1e-7);
    }
    assert_eq!(m.predict_class(&[0.0, -1.0], &mut p).unwrap(), 0);
    assert_eq!(m.predict_class(&[0.0, 1.0], &mut p).unwrap(), 1);
    assert_eq!(m.classes().unwrap().len(), 3);
}

#[test]
fn errors_name_the_file_and_what_was_wrong() {
    let e = error(xgb(
        "count:poisson",
        "0",
        0,
        vec![xgb_stump(0.0, 1.0, 2.0, false)],
        vec![0],
    ));
    assert!(
        e.starts_with("m.json: unknown objective \"count:poisson\"; read: reg:squarederror"),
        "{e}"
    );

    let e = TreeModel::from_json("{\"learner\": ", "m.json")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("m.json: malformed JSON"), "{e}");

    let e = error(json!({"trees": []}));
    assert!(e.contains("neither an XGBoost JSON model"), "{e}");

    let mut doc = xgb(
        "reg:squarederror",
        "0",
        0,
        vec![xgb_stump(0.0, 1.0, 2.0, false)],
        vec![0],
    );
    doc["learner"]["gradient_booster"]["model"]["trees"][0]["split_indices"][0] = json!(5);
    let e = error(doc);
    assert_eq!(
        e,
        "m.json: tree 0: node 0 splits on feature 5, but the model has 2 features"
    );

    let mut doc = xgb(
        "reg:squarederror",
        "0",
        0,
        vec![xgb_stump(0.0, 1.0, 2.0, false)],
        vec![0],
    );
    doc["learner"]["gradient_booster"]["name"] = json!("dart");
    assert!(error(doc).contains("booster \"dart\" is not read"));

    let mut doc = xgb(
        "reg:squarederror",
        "0",
        0,
        vec![xgb_stump(0.0, 1.0, 2.0, false)],
        vec![0],
    );
    doc["learner"]["gradient_booster"]["model"]["trees"][0]["split_type"][0] = json!(1);
    assert!(error(doc).contains("node 0 is a categorical split"));

    let mut doc = xgb(
        "reg:squarederror",
        "0",
        0,
        vec![xgb_stump(0.0, 1.0, 2.0, false)],
        vec![0],
    );
    doc["learner"]["gradient_booster"]["model"]["trees"][0]["left_children"] = json!([1, 0, -1]);
    doc["learner"]["gradient_booster"]["model"]["trees"][0]["right_children"] = json!([2, 2, -1]);
    let e = error(doc);
    assert!(e.contains("node 0 is reached twice"), "{e}");

    let mut doc = regressor_tree();
    doc["trees"][0].as_object_mut().unwrap().remove("threshold");
    assert_eq!(error(doc), "m.json: trees[0].threshold is missing");

    let m = model(regressor_tree());
    let e = m.predict_value(&[1.0, 2.0, 3.0]).unwrap_err().to_string();
    assert_eq!(e, "m.json: the model expects 2 features, got 3");

    let e = TreeModel::load(Path::new("/nonexistent/m.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("/nonexistent/m.json: cannot read the model file"),
        "{e}"
    );
}

#[test]
fn argmax_takes_the_first_largest() {
    assert_eq!(argmax(&[1.0, 3.0, 3.0, 2.0]), 1);
    assert_eq!(argmax(&[f64::NAN, 1.0]), 1);
    assert_eq!(argmax(&[5.0]), 0);
}
