"""OAL (seed-004, Lin & Jiang 2020): training data and models on the Python side.

The engine's ``[[controllers]] kind = "oal"`` with ``record = true`` writes one row per
downlink flow per sampling tick into ``features.parquet``: the AP's features over the feature
window (:data:`AP_FEATURES`, Table 2's radio factors), the flow's (UNA, its station's signal,
its retransmission ratio, ...), the sender's true cwnd (the paper's sender-side sniffer), and
the congestion-loss class of the following ``horizon`` (``loss_class_next``, Table 3). This
module turns those rows into the paper's tables:

* :func:`feature_table` — Kendall τ and information gain of each AP feature against the loss
  ratio (Table 2's analogue; IG as the authors' script computes it: the feature binarised as
  zero/non-zero, the loss ratio's values as classes, 1e-4 smoothing, log2);
* :func:`compare_classifiers` — decision tree, random forest, SVM, k-NN and MLP on a held-out
  split, per-class precision/recall/F (Table 4's analogue);
* :func:`compare_regressors` — cwnd regressors, R² on held-out data with UNA only and with the
  Table 5 features (Table 6's analogue); XGBoost's can be saved for the controller's
  ``cwnd_model``.

:func:`loss_class` and :func:`eq1_load_kbytes` are the paper's Table 3 and Eq. 1.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "AP_FEATURES", "CWND_FEATURES", "CLASS_NAMES", "loss_class", "eq1_load_kbytes",
    "read_items", "kendall_tau", "information_gain", "feature_table",
    "compare_classifiers", "compare_regressors",
]

#: The AP features of an item, in the engine's order (``crates/world/src/control/oal/window.rs``).
AP_FEATURES = [
    "backlog_bytes", "qlen_pkts", "channel_busy", "channel_tx", "channel_rx", "queue_drops",
    "queue_rx_pkts", "queue_rx_bytes", "requeues", "link_tx_retries", "link_tx_bytes",
    "link_rx_bytes", "link_tx_failed", "signal_db", "tx_bitrate_mbps", "data_rate_mbps",
]
#: Table 5's cwnd features as the engine has them (noise is not modelled).
CWND_FEATURES = ["una_pkts", "links_rate_mbps", "channel_tx", "station_signal_db",
                 "channel_busy", "retrans_ratio"]
CLASS_NAMES = ["good", "acceptable", "poor", "bad"]


def loss_class(ratio: float) -> int:
    """Table 3: Good < 1 % ≤ Acceptable < 5 % ≤ Poor < 12 % ≤ Bad (0–3)."""
    if ratio < 0.01:
        return 0
    if ratio < 0.05:
        return 1
    if ratio < 0.12:
        return 2
    return 3


def eq1_load_kbytes(z: float, x: float, y: float, r: float, eta: float) -> float:
    """Eq. 1: the AP's sampling load, kbyte/s (z stations, x queues, y neighbour APs, r packets/s,
    η loss rate). The paper's example (10, 1, 20, 1500, 0.1) gives 290.625, not its printed 283.5
    (which leaves out the drop term 48ηr/1024 = 7.03)."""
    return (250 * (64 * z + 64 + 48 * x) + 32 * 10 * y + 48 * eta * r + r * 64) / 1024


def read_items(path):
    """The OAL rows of a ``features.parquet`` (a run's), labelled ones only, as a DataFrame."""
    import pandas as pd

    df = pd.read_parquet(path)
    if "loss_class_next" not in df.columns:
        raise ValueError(f"{path}: no OAL items (run with [[controllers]] kind = \"oal\", record = true)")
    return df[df["loss_class_next"].notna()].reset_index(drop=True)


def kendall_tau(x, y) -> float:
    from scipy.stats import kendalltau

    tau = kendalltau(x, y).statistic
    return float("nan") if tau is None else float(tau)


def information_gain(feature, ratio, smoothing: float = 1e-4) -> float:
    """The authors' IG: H(ratio values) − H(ratio values | feature ≠ 0), log2, with ``smoothing``
    added to every count (so a feature that is never zero, or always, gains 0)."""
    feature = np.asarray(feature) != 0
    ratio = np.asarray(ratio)
    values = np.unique(ratio)

    def entropy(mask):
        counts = np.array([np.sum(ratio[mask] == v) for v in values], dtype=float) + smoothing
        p = counts / counts.sum()
        return float(-(p * np.log2(p)).sum())

    everything = np.ones(len(ratio), dtype=bool)
    h = entropy(everything)
    cond = 0.0
    for side in (feature, ~feature):
        w = side.sum() / len(ratio)
        if w > 0:
            cond += w * entropy(side)
    return h - cond


def tick_rows(items):
    """One row per tick of each AP (its features are the same on every flow's row); with several
    OAL controllers (one per AP of a multi-AP cell) the rows of a tick are told apart by the
    ``controller`` column."""
    return items.drop_duplicates(["time_s", "controller"] if "controller" in items else "time_s")


def feature_table(items, target: str = "loss_ratio_next"):
    """Table 2's analogue: per AP feature, Kendall τ and IG against the next window's loss ratio
    (one row per tick of each AP)."""
    ticks = tick_rows(items)
    return [
        {"feature": f, "kendall": kendall_tau(ticks[f], ticks[target]),
         "ig": information_gain(ticks[f], ticks[target])}
        for f in AP_FEATURES
    ]


def _split(n: int, test_size: float, seed: int):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(n)
    cut = int(round(n * (1 - test_size)))
    return idx[:cut], idx[cut:]


def compare_classifiers(items, test_size: float = 0.3, seed: int = 0):
    """Table 4's analogue: the five candidates of §5.3 on a held-out split (per tick rows), each
    with per-class precision, recall and F over the classes present. Returns (results, models)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.metrics import precision_recall_fscore_support
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    ticks = tick_rows(items)
    x = ticks[AP_FEATURES].to_numpy(dtype=float)
    y = ticks["loss_class_next"].to_numpy(dtype=int)
    train, test = _split(len(y), test_size, seed)
    candidates = {
        # The authors' settings (repository): entropy, min_samples_split 200, min_samples_leaf 400.
        "decision_tree": DecisionTreeClassifier(criterion="entropy", min_samples_split=200,
                                                min_samples_leaf=400, random_state=seed),
        "random_forest": RandomForestClassifier(n_estimators=100, random_state=seed),
        "svm": make_pipeline(StandardScaler(), SVC(random_state=seed)),
        "knn": make_pipeline(StandardScaler(), KNeighborsClassifier()),
        "mlp": make_pipeline(StandardScaler(), MLPClassifier(max_iter=500, random_state=seed)),
    }
    results, models = {}, {}
    labels = list(range(4))
    for name, model in candidates.items():
        model.fit(x[train], y[train])
        p, r, f, support = precision_recall_fscore_support(
            y[test], model.predict(x[test]), labels=labels, zero_division=0)
        results[name] = {"precision": p.tolist(), "recall": r.tolist(), "f": f.tolist(),
                         "support": support.tolist()}
        models[name] = model
    return results, models


def compare_regressors(items, test_size: float = 0.3, seed: int = 0):
    """Table 6's analogue: R² on held-out rows of each regressor of the sender's cwnd, from UNA
    only and from the Table 5 features. Returns (results, models with all features)."""
    from sklearn.ensemble import (AdaBoostRegressor, BaggingRegressor, ExtraTreesRegressor,
                                  GradientBoostingRegressor, RandomForestRegressor,
                                  VotingRegressor)
    from sklearn.linear_model import LinearRegression
    from xgboost import XGBRegressor

    y = items["cwnd_pkts"].to_numpy(dtype=float)
    train, test = _split(len(y), test_size, seed)

    def candidates():
        return {
            "GradientBoostingRegressor": GradientBoostingRegressor(random_state=seed),
            "RandomForestRegressor": RandomForestRegressor(random_state=seed),
            "LinearRegression": LinearRegression(),
            "VotingRegressor": VotingRegressor([
                ("gb", GradientBoostingRegressor(random_state=seed)),
                ("rf", RandomForestRegressor(random_state=seed)),
                ("lr", LinearRegression())]),
            "AdaBoostRegressor": AdaBoostRegressor(random_state=seed),
            "BaggingRegressor": BaggingRegressor(random_state=seed),
            "ExtraTreesRegressor": ExtraTreesRegressor(random_state=seed),
            "XGBRegressor": XGBRegressor(random_state=seed, n_jobs=1),
        }

    results, models = {}, {}
    for columns, key in ((["una_pkts"], "una_only"), (CWND_FEATURES, "table5")):
        x = items[columns].fillna(0.0).to_numpy(dtype=float)
        for name, model in candidates().items():
            model.fit(x[train], y[train])
            results.setdefault(name, {})[key] = float(model.score(x[test], y[test]))
            if key == "table5":
                models[name] = model
    return results, models
