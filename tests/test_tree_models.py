"""Tree models evaluated by the engine (crates/model) equal scikit-learn's and XGBoost's own
predictions, on thousands of random inputs that include values exactly at (and one float32 step
either side of) the models' thresholds, and NaN; and the ``tree_cc`` controller switches a
flow's algorithm as its model says."""

from __future__ import annotations

import json

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed (make setup "
                              "installs it: Makefile PY_DEPS)")
xgb = pytest.importorskip("xgboost", reason="xgboost is not installed (make setup installs "
                          "xgboost-cpu: Makefile PY_DEPS)")

from sklearn.ensemble import (ExtraTreesRegressor, GradientBoostingRegressor,  # noqa: E402
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

import rove  # noqa: E402
from rove.learn import TreeModel, export_sklearn_tree, feature_names  # noqa: E402

N_INPUTS = 6000
N_FEATURES = 6


def training_data(rng, n=1500, nan_fraction=0.0):
    """Features of mixed kinds (whole numbers like packet counts, reals, a heavy tail) and a
    target that depends on several of them, with noise."""
    X = np.column_stack([
        rng.integers(0, 60, n).astype(float),       # like cwnd_pkts
        rng.normal(0, 1, n),
        rng.exponential(50.0, n),                   # like srtt_ms
        rng.uniform(-1e6, 1e6, n),                  # like a rate
        rng.integers(0, 3, n).astype(float),
        rng.normal(100, 0.001, n),                  # narrow: float32 rounding matters
    ])
    y = (X[:, 0] / 20 + np.sin(X[:, 1] * 2) + np.log1p(X[:, 2]) / 2 + X[:, 3] / 1e6
         + X[:, 4] + (X[:, 5] - 100) * 500 + rng.normal(0, 0.3, n))
    if nan_fraction:
        X[rng.random(X.shape) < nan_fraction] = np.nan
    return X, y


def thresholds_of_sklearn(model):
    trees = [model] if hasattr(model, "tree_") else (
        list(model.estimators_.ravel()) if isinstance(model.estimators_, np.ndarray)
        else model.estimators_)
    out = {f: [] for f in range(N_FEATURES)}
    for t in trees:
        for f, thr, left in zip(t.tree_.feature, t.tree_.threshold, t.tree_.children_left):
            # +inf splits the missing values from all others; sklearn refuses infinite inputs.
            if left != -1 and np.isfinite(thr):
                out[int(f)].append(float(thr))
    return out


def thresholds_of_xgboost(path):
    model = json.loads(path.read_text())["learner"]["gradient_booster"]["model"]
    out = {f: [] for f in range(N_FEATURES)}
    for t in model["trees"]:
        for f, thr, left in zip(t["split_indices"], t["split_conditions"], t["left_children"]):
            if left != -1:
                out[int(f)].append(float(thr))
    return out


def random_inputs(rng, thresholds, n=N_INPUTS, nan_fraction=0.0):
    """Random rows like the training data; in a third of the cells the value is one of that
    feature's thresholds exactly, or the next float32 above or below it."""
    X, _ = training_data(rng, n)
    for f, thr in thresholds.items():
        if not thr:
            continue
        at = rng.random(n) < 1 / 3
        t = np.asarray(thr)[rng.integers(0, len(thr), at.sum())]
        t32 = t.astype(np.float32)
        step = rng.integers(-1, 2, at.sum())  # -1, 0, +1
        nudged = np.where(step < 0, np.nextafter(t32, np.float32(-np.inf)),
                          np.where(step > 0, np.nextafter(t32, np.float32(np.inf)), t32))
        # Half exactly the (float64) threshold, half float32 values around it.
        X[at, f] = np.where(rng.random(at.sum()) < 0.5, t, nudged.astype(np.float64))
    if nan_fraction:
        X[rng.random(X.shape) < nan_fraction] = np.nan
    return X


def rust(path):
    return TreeModel(str(path))


# scikit-learn: exact equality (float64 sums in the library's order, float32 comparisons)


def test_decision_tree_classifier_probabilities_and_classes_equal_sklearns(tmp_path):
    rng = np.random.default_rng(1)
    X, y = training_data(rng)
    labels = np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75]))  # classes 0..3
    clf = DecisionTreeClassifier(random_state=0, min_samples_leaf=3).fit(X, labels)
    path = export_sklearn_tree(clf, tmp_path / "dtc.json")
    m = rust(path)
    Xt = random_inputs(rng, thresholds_of_sklearn(clf))
    assert m.classes == [0.0, 1.0, 2.0, 3.0] and m.n_outputs == 4
    np.testing.assert_array_equal(np.array(m.predict(Xt.tolist())), clf.predict_proba(Xt))
    np.testing.assert_array_equal(clf.classes_[m.predict_class(Xt.tolist())], clf.predict(Xt))


def test_decision_tree_classifier_with_named_classes_equals_sklearns(tmp_path):
    rng = np.random.default_rng(2)
    X, y = training_data(rng)
    names = np.array(["bbr", "cubic", "reno"])[np.digitize(y, np.quantile(y, [0.3, 0.7]))]
    clf = DecisionTreeClassifier(random_state=0, max_depth=8).fit(X, names)
    m = rust(export_sklearn_tree(clf, tmp_path / "named.json"))
    assert m.classes == ["bbr", "cubic", "reno"]
    Xt = random_inputs(rng, thresholds_of_sklearn(clf))
    np.testing.assert_array_equal(np.array(m.classes)[m.predict_class(Xt.tolist())],
                                  clf.predict(Xt))


def test_decision_tree_regressor_values_equal_sklearns(tmp_path):
    rng = np.random.default_rng(3)
    X, y = training_data(rng)
    reg = DecisionTreeRegressor(random_state=0).fit(X, y)
    m = rust(export_sklearn_tree(reg, tmp_path / "dtr.json"))
    Xt = random_inputs(rng, thresholds_of_sklearn(reg))
    np.testing.assert_array_equal(np.array(m.predict(Xt.tolist()))[:, 0], reg.predict(Xt))


def test_sklearn_tree_trained_with_missing_values_sends_nan_where_sklearn_does(tmp_path):
    rng = np.random.default_rng(4)
    X, y = training_data(rng, nan_fraction=0.1)
    reg = DecisionTreeRegressor(random_state=0, max_depth=10).fit(X, y)
    m = rust(export_sklearn_tree(reg, tmp_path / "nan.json"))
    Xt = random_inputs(rng, thresholds_of_sklearn(reg), nan_fraction=0.1)
    assert np.isnan(Xt).any()
    np.testing.assert_array_equal(np.array(m.predict(Xt.tolist()))[:, 0], reg.predict(Xt))


def test_forests_and_gradient_boosting_equal_sklearns(tmp_path):
    rng = np.random.default_rng(5)
    X, y = training_data(rng)
    labels = (y > np.median(y)).astype(int)
    rfc = RandomForestClassifier(n_estimators=15, max_depth=9, random_state=0).fit(X, labels)
    rfr = RandomForestRegressor(n_estimators=15, max_depth=9, random_state=0).fit(X, y)
    etr = ExtraTreesRegressor(n_estimators=10, max_depth=9, random_state=0).fit(X, y)
    gbr = GradientBoostingRegressor(n_estimators=40, max_depth=3, learning_rate=0.1,
                                    random_state=0).fit(X, y)
    for est in (rfc, rfr, etr, gbr):
        m = rust(export_sklearn_tree(est, tmp_path / f"{type(est).__name__}.json"))
        Xt = random_inputs(rng, thresholds_of_sklearn(est), n=2000)
        out = np.array(m.predict(Xt.tolist()))
        if est is rfc:
            np.testing.assert_array_equal(out, rfc.predict_proba(Xt))
            np.testing.assert_array_equal(rfc.classes_[m.predict_class(Xt.tolist())],
                                          rfc.predict(Xt))
        else:
            np.testing.assert_array_equal(out[:, 0], est.predict(Xt))


def test_exported_feature_names_come_from_a_dataframe(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    X, y = training_data(rng, n=300)
    cols = [f"f{i}" for i in range(N_FEATURES)]
    reg = DecisionTreeRegressor(max_depth=3).fit(pd.DataFrame(X, columns=cols), y)
    assert rust(export_sklearn_tree(reg, tmp_path / "df.json")).feature_names == cols


# XGBoost: margins equal (float32 sums in tree order), outputs within 1e-6 relative (its link
# uses the C library's expf), classes equal.


def xgb_data(rng, kind):
    X, y = training_data(rng, n=2000, nan_fraction=0.05)
    if kind == "binary":
        y = (y > np.nanmedian(y)).astype(int)
    elif kind == "multi":
        y = np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75]))
    return X, y


@pytest.mark.parametrize("objective,kind", [
    ("reg:squarederror", "reg"),
    ("reg:absoluteerror", "reg"),
    ("binary:logistic", "binary"),
    ("multi:softprob", "multi"),
    ("multi:softmax", "multi"),
])
def test_xgboost_predictions_equal_xgboosts(tmp_path, objective, kind):
    rng = np.random.default_rng(7)
    X, y = xgb_data(rng, kind)
    params = {"objective": objective, "max_depth": 6, "eta": 0.3, "seed": 0, "nthread": 1}
    if kind == "multi":
        params["num_class"] = 4
    booster = xgb.train(params, xgb.DMatrix(X, label=y), num_boost_round=30)
    path = tmp_path / "m.json"
    booster.save_model(str(path))
    m = rust(path)
    Xt = random_inputs(rng, thresholds_of_xgboost(path), nan_fraction=0.05)
    assert np.isnan(Xt).any()
    d = xgb.DMatrix(Xt)
    rows = Xt.tolist()

    want_margin = booster.predict(d, output_margin=True).reshape(len(Xt), -1)
    np.testing.assert_array_equal(np.array(m.margins(rows), dtype=np.float32), want_margin)

    got = np.array(m.predict(rows))
    if objective == "multi:softmax":
        np.testing.assert_array_equal(m.predict_class(rows), booster.predict(d))
        return
    want = booster.predict(d).reshape(len(Xt), -1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    if kind == "binary":
        np.testing.assert_array_equal(m.predict_class(rows), (want[:, 0] > 0.5).astype(int))
    elif kind == "multi":
        np.testing.assert_array_equal(m.predict_class(rows), np.argmax(want, axis=1))


def test_xgboost_sklearn_api_models_equal_their_predict(tmp_path):
    rng = np.random.default_rng(8)
    X, y = xgb_data(rng, "multi")
    clf = xgb.XGBClassifier(n_estimators=20, max_depth=4, n_jobs=1).fit(X, y)
    clf.save_model(str(tmp_path / "clf.json"))
    m = rust(tmp_path / "clf.json")
    Xt = random_inputs(rng, thresholds_of_xgboost(tmp_path / "clf.json"), n=2000,
                       nan_fraction=0.05)
    np.testing.assert_array_equal(m.predict_class(Xt.tolist()), clf.predict(Xt))
    np.testing.assert_allclose(m.predict(Xt.tolist()), clf.predict_proba(Xt), rtol=1e-6,
                               atol=1e-7)


def test_xgboost_multi_target_regressor_equals_xgboosts(tmp_path):
    # One output per target, each tree assigned to its target by tree_info: how a model scoring
    # each algorithm (a reward per choice, for tree_cc) is trained.
    rng = np.random.default_rng(11)
    X, y = training_data(rng, n=2000, nan_fraction=0.05)
    Y = np.column_stack([y, -y, np.nan_to_num(X[:, 2]) / 10])
    reg = xgb.XGBRegressor(n_estimators=20, max_depth=5, n_jobs=1).fit(X, Y)
    reg.save_model(str(tmp_path / "mt.json"))
    m = rust(tmp_path / "mt.json")
    assert m.n_outputs == 3 and m.classes is None
    Xt = random_inputs(rng, thresholds_of_xgboost(tmp_path / "mt.json"), nan_fraction=0.05)
    np.testing.assert_array_equal(np.array(m.predict(Xt.tolist()), dtype=np.float32),
                                  reg.predict(Xt))


def test_model_errors_name_the_file():
    with pytest.raises(ValueError, match=r"nowhere\.json: cannot read the model file"):
        TreeModel("nowhere.json")


def test_a_row_of_the_wrong_width_is_an_error(tmp_path):
    rng = np.random.default_rng(9)
    X, y = training_data(rng, n=200)
    m = rust(export_sklearn_tree(DecisionTreeRegressor(max_depth=2).fit(X, y), tmp_path / "m.json"))
    with pytest.raises(ValueError, match=r"m\.json: the model expects 6 features, got 2"):
        m.predict([[1.0, 2.0]])


# The tree_cc controller


SCENARIO = """
duration = "8s"
seed = 3
[links.down]
rate = "20Mbps"
delay = "20ms"
buffer = "100pkt"
[links.up]
rate = "1Gbps"
delay = "20ms"
[[flows]]
name = "a"
cc = "cubic"
path = ["down"]
ack_path = ["up"]
[[controllers]]
kind = "features"
every = "100ms"
flow = "a"
"""


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_tree_cc_switches_the_algorithm_as_its_model_says(tmp_path, kind):
    # Train on what the recorder wrote in a first run: "bbr" once 3 s have passed (the tree
    # learns a threshold on a growing counter such as bytes_acked), "cubic" before. A classifier
    # names the algorithm; a regressor scores each choice (1 for the right one) and the largest
    # wins.
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    first = rove.run(scenario).features
    cols = feature_names()
    choices = np.array(["cubic", "bbr"])
    labels = np.where(first.time_s >= 3.0, "bbr", "cubic")
    if kind == "classifier":
        model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(first[cols], labels)
        choose = model.predict
    else:
        rewards = np.column_stack([labels == c for c in choices]).astype(float)
        model = DecisionTreeRegressor(max_depth=2, random_state=0).fit(first[cols], rewards)
        choose = lambda rows: choices[np.argmax(model.predict(rows), axis=1)]  # noqa: E731
    assert (choose(first[cols]) == labels).all()
    (tmp_path / "models").mkdir()
    export_sklearn_tree(model, tmp_path / "models" / "cc.json")

    # The model path is relative to the scenario file, as trace paths are.
    scenario.write_text(SCENARIO + """
[[controllers]]
kind = "tree_cc"
model = "models/cc.json"
flow = "a"
every = "100ms"
choices = ["cubic", "bbr"]
""")
    r = rove.run(scenario)
    f = r.features
    # The recorder ticks first at each instant: row i is what tree_cc saw at that tick, and the
    # algorithm the next row records is the model's choice for row i.
    chosen = choose(f[cols])
    assert list(f.cc[1:]) == list(chosen[:-1])
    assert f.cc.iloc[0] == "cubic" and set(chosen) == {"cubic", "bbr"}
    switch_s = float(f.time_s[f.cc == "bbr"].min())
    assert 2.5 <= switch_s <= 3.5

    ts = r.timeseries
    assert set(ts.cc[ts.time_s < switch_s - 0.1]) == {"cubic"}
    assert set(ts.cc[ts.time_s > switch_s + 0.1]) == {"bbr"}


def test_tree_cc_rejects_a_model_with_other_features(tmp_path):
    rng = np.random.default_rng(10)
    X, y = training_data(rng, n=200)
    export_sklearn_tree(DecisionTreeClassifier(max_depth=2).fit(X[:, :3], y > 0),
                        tmp_path / "m.json")
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO + """
[[controllers]]
kind = "tree_cc"
model = "m.json"
flow = "a"
every = "100ms"
choices = ["cubic", "bbr"]
""")
    with pytest.raises(rove.ScenarioError,
                       match=r"controllers\[1\]\.model: .*m\.json takes 3 features, but this "
                             r"controller's rows have 10 \(cwnd_pkts, "):
        rove.run(scenario)
    scenario.write_text(SCENARIO + """
[[controllers]]
kind = "tree_cc"
model = "absent.json"
flow = "a"
every = "100ms"
choices = ["cubic", "bbr"]
""")
    with pytest.raises(rove.ScenarioError,
                       match=r"controllers\[1\]\.model: .*absent\.json: cannot read the model"):
        rove.run(scenario)
