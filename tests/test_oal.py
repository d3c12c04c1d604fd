"""OAL (seed-004): Table 3, Eq. 1, the items the engine records, the classifier and regressor
comparisons, and a scikit-learn tree exported to the engine predicting as scikit-learn does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rove import oal

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "oal" / "congested-ap.toml"


def test_loss_class_cut_points():
    cases = [(0.0, 0), (0.00999, 0), (0.01, 1), (0.04999, 1), (0.05, 2), (0.11999, 2),
             (0.12, 3), (1.0, 3)]
    for ratio, cls in cases:
        assert oal.loss_class(ratio) == cls, ratio


def test_eq1_on_the_papers_example():
    assert oal.eq1_load_kbytes(10, 1, 20, 1500, 0.1) == pytest.approx(290.625, abs=1e-12)
    drop_term = 48 * 0.1 * 1500 / 1024
    assert oal.eq1_load_kbytes(10, 1, 20, 1500, 0.1) - drop_term == pytest.approx(283.59375)


def test_information_gain_of_a_never_zero_feature_is_zero():
    ratio = np.array([0.0, 0.0, 0.1, 0.2])
    assert oal.information_gain(np.ones(4), ratio) == pytest.approx(0.0, abs=1e-9)
    # A feature non-zero exactly where the loss is: IG = H(ratio) − H(ratio | f) > 0.
    assert oal.information_gain(ratio > 0, ratio) > 0.9


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    import rove

    base = tmp_path_factory.mktemp("oal")
    scenario = base / "observe.toml"
    # CUBIC alone, observed: the controller records but does not act.
    scenario.write_text(SCENARIO.read_text() + "act = false\n")
    out = base / "run"
    rove.run(str(scenario), out=out, duration="15s")
    return oal.read_items(out / "features.parquet")


def test_items_carry_table3_labels(items):
    assert len(items) > 1000
    assert set(oal.AP_FEATURES + oal.CWND_FEATURES) <= set(items.columns)
    expect = items["loss_ratio_next"].map(oal.loss_class)
    assert (items["loss_class_next"].astype(int) == expect).all()


def test_feature_table_and_comparisons_run_on_held_out_data(items):
    table = oal.feature_table(items)
    assert [row["feature"] for row in table] == oal.AP_FEATURES
    results, _ = oal.compare_classifiers(items)
    assert set(results) == {"decision_tree", "random_forest", "svm", "knn", "mlp"}
    for r in results.values():
        assert len(r["f"]) == 4 and all(0.0 <= v <= 1.0 for v in r["f"])
    pytest.importorskip("xgboost")
    reg, _ = oal.compare_regressors(items)
    assert set(reg["XGBRegressor"]) == {"una_only", "table5"}


def test_exported_tree_predicts_in_the_engine_as_sklearn(items, tmp_path):
    from sklearn.tree import DecisionTreeClassifier

    from rove.learn import TreeModel, export_sklearn_tree

    ticks = items.drop_duplicates("time_s")
    x = ticks[oal.AP_FEATURES].to_numpy(dtype=float)
    y = ticks["loss_class_next"].to_numpy(dtype=int)
    tree = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=5, random_state=0).fit(x, y)
    path = export_sklearn_tree(tree, tmp_path / "oal-tree.json", feature_names=oal.AP_FEATURES)
    engine = TreeModel(str(path))
    classes = np.array([int(c) for c in tree.classes_])
    assert (classes[engine.predict_class(x.tolist())] == tree.predict(x)).all()
