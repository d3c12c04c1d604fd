"""Learned models for the engine's controllers: train in Python, evaluate in Rust.

The features a controller sees are defined once, in Rust (``crates/world/src/control/features.rs``),
and recorded by ``kind = "features"`` into ``features.parquet`` under the column names
:func:`feature_names` returns. Train on those columns, in that order; then

* an XGBoost model is saved with XGBoost's own ``model.save_model("m.json")`` (JSON), and
* a scikit-learn tree, forest or gradient-boosting regressor with :func:`export_sklearn_tree`,

and a controller (``kind = "tree_cc"``) loads the file by path. :class:`TreeModel` evaluates a
file exactly as the engine does (the ``rove_model`` crate), for checking a model before a run.

The export format (``"format": "rove-trees"``) is documented in ``crates/model/src/sklearn.rs``
and ``docs/architecture.md``: each tree is the arrays of the estimator's ``tree_``
(``children_left``, ``children_right``, ``feature``, ``threshold``, ``missing_go_to_left``,
``value``), unchanged, plus how trees combine (``"sum"`` from ``base`` with ``scale``, or
``"mean"``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from . import _core

__all__ = ["TreeModel", "export_sklearn_tree", "feature_names", "FORMAT", "VERSION"]

#: Evaluates a model file as the engine does: ``TreeModel(path).predict(rows)`` gives each row's
#: outputs (values, or class probabilities), ``.predict_class(rows)`` a classifier's class index
#: per row (into ``.classes``), ``.margins(rows)`` XGBoost's margins before its link.
TreeModel = _core.TreeModel

FORMAT = "rove-trees"
VERSION = 1


def feature_names(link: bool = False) -> list[str]:
    """The columns of a controller's feature row, in order: the sender's, then (``link=True``,
    a controller with ``link = "NAME"``) the link's. Select exactly these from
    ``features.parquet`` to train a model a controller will evaluate."""
    return list(_core.SENDER_FEATURES) + (list(_core.LINK_FEATURES) if link else [])


def export_sklearn_tree(model, path, feature_names: list[str] | None = None) -> Path:
    """Writes a fitted scikit-learn tree model to ``path`` in rove's ``rove-trees`` JSON.

    Exported: ``DecisionTreeClassifier``, ``DecisionTreeRegressor``,
    ``RandomForestClassifier``/``Regressor``, ``ExtraTreesClassifier``/``Regressor`` and
    ``GradientBoostingRegressor`` (with its default constant init, or ``init="zero"``).
    Classifiers must be single-output. ``feature_names`` (default: ``feature_names_in_`` when
    trained on a DataFrame) is recorded, and a controller checks it against its own columns.
    Returns the path written.
    """
    from sklearn.base import is_classifier
    from sklearn.dummy import DummyRegressor
    import sklearn
    from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor,
                                  GradientBoostingRegressor, RandomForestClassifier,
                                  RandomForestRegressor)
    from sklearn.tree import BaseDecisionTree

    name = type(model).__name__
    if not hasattr(model, "n_features_in_"):
        raise ValueError(f"{name} is not fitted")
    scale, base = 1.0, None
    if isinstance(model, BaseDecisionTree):
        estimators, combine = [model], "sum"
    elif isinstance(model, (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier,
                            ExtraTreesRegressor)):
        # ForestClassifier.predict_proba / ForestRegressor.predict: sum from zero, / n_trees.
        estimators, combine = list(model.estimators_), "mean"
    elif isinstance(model, GradientBoostingRegressor):
        # _gb.py _raw_predict: init prediction, then predict_stages adds
        # learning_rate * value for each stage.
        estimators, combine = list(model.estimators_[:, 0]), "sum"
        scale = float(model.learning_rate)
        if model.init_ == "zero":
            base = [0.0]
        elif isinstance(model.init_, DummyRegressor):
            constant = model.init_.predict(np.zeros((1, model.n_features_in_)))
            base = [float(np.asarray(constant, dtype=np.float64).ravel()[0])]
        else:
            raise ValueError(f"{name} with init={type(model.init_).__name__}: the init "
                             f"prediction depends on the input and cannot be exported")
    else:
        raise TypeError(f"cannot export {name}; exported: DecisionTreeClassifier, "
                        f"DecisionTreeRegressor, RandomForest*, ExtraTrees*, "
                        f"GradientBoostingRegressor")

    classifier = is_classifier(model)
    if classifier and getattr(model, "n_outputs_", 1) != 1:
        raise ValueError(f"{name} has {model.n_outputs_} outputs; only single-output "
                         f"classifiers are exported")
    trees = [_tree_arrays(e.tree_, classifier) for e in estimators]
    n_outputs = len(trees[0]["value"][0])
    if feature_names is None and hasattr(model, "feature_names_in_"):
        feature_names = [str(n) for n in model.feature_names_in_]
    if feature_names is not None:
        feature_names = [str(n) for n in feature_names]
        if len(feature_names) != model.n_features_in_:
            raise ValueError(f"{len(feature_names)} feature names for "
                             f"{model.n_features_in_} features")
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "estimator": f"{type(model).__module__.split('._')[0]}.{name}",
        "sklearn_version": sklearn.__version__,
        "task": "classification" if classifier else "regression",
        "n_features": int(model.n_features_in_),
        "feature_names": feature_names,
        "n_outputs": n_outputs,
        "combine": combine,
        "scale": scale,
        "trees": trees,
    }
    if base is not None:
        doc["base"] = base
    if classifier:
        doc["classes"] = np.asarray(model.classes_).tolist()
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    # allow_nan=False: a NaN threshold or value would not be JSON; Python writes every float
    # as its shortest round-trip decimal, which the engine reads back to the same bits.
    tmp.write_text(json.dumps(doc, allow_nan=False))
    os.replace(tmp, path)
    return path


def _tree_arrays(tree, classifier: bool) -> dict:
    """One ``sklearn.tree._tree.Tree``'s arrays; ``value`` per node as the estimator's own
    prediction reads it."""
    value = np.asarray(tree.value, dtype=np.float64)
    if classifier:
        value = value[:, 0, :]
        # scikit-learn >= 1.4 stores class fractions, which predict_proba returns as they are;
        # older versions stored weighted counts, which predict_proba divided by their sum.
        sums = value.sum(axis=1, keepdims=True)
        if not np.allclose(sums[sums > 0], 1.0):
            value = value / np.where(sums == 0.0, 1.0, sums)
    else:
        value = value[:, :, 0]
    arrays = {
        "children_left": tree.children_left.tolist(),
        "children_right": tree.children_right.tolist(),
        "feature": tree.feature.tolist(),
        # A split of the missing values from all others has threshold +inf, which JSON cannot
        # write as a number: infinite thresholds are written as the strings "inf" / "-inf".
        "threshold": [t if np.isfinite(t) else ("inf" if t > 0 else "-inf")
                      for t in tree.threshold.tolist()],
        "value": value.tolist(),
    }
    if hasattr(tree, "missing_go_to_left"):  # scikit-learn >= 1.3
        arrays["missing_go_to_left"] = [int(b) for b in tree.missing_go_to_left]
    return arrays
