"""``rove train sscc`` (python/rove/train/sscc.py) without training: the environments it draws
(Table 5.4), the sweep it writes, the training pairs it reads from a run's Data Units, and the
committed model set (scenarios/sscc/model/) as the engine evaluates it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rove.train import sscc

ROOT = Path(__file__).resolve().parents[1]
MODEL_DIR = ROOT / "scenarios" / "sscc" / "model"


def test_environments_lie_in_table_5_4s_ranges_and_follow_the_seed():
    envs = sscc.draw_environments(200, seed=7, duration_s=30)
    assert envs == sscc.draw_environments(200, seed=7, duration_s=30)
    assert envs != sscc.draw_environments(200, seed=8, duration_s=30)
    for env in envs:
        for p in (env["a"], env["b"]):
            assert 5.0 <= p["rate_mbps"] <= 100.0
            assert 20.0 <= p["rtt_ms"] <= 400.0
            assert 0.1e6 <= p["buffer_bytes"] <= 50e6
            assert 0.0 <= p["loss"] <= 0.02
            assert 0.1e6 <= p["background_bytes"] <= 50e6
            assert 0.0 <= p["background_start_s"] <= 15.0
    # Log-uniform buffers: the median of 400 draws near the geometric middle, sqrt(0.1 * 50) MB.
    median = float(np.median([e[p]["buffer_bytes"] for e in envs for p in "ab"]))
    assert 1.2e6 < median < 4.5e6, median


def test_the_sweep_runs_every_candidate_on_every_environment(tmp_path):
    from rove.sweeps import expand_points, load_sweep

    envs = sscc.draw_environments(2, seed=1, duration_s=5)
    template = ROOT / "scenarios" / "sscc" / "train-env.toml"
    path = tmp_path / "bootstrap.toml"
    path.write_text(sscc.sweep_document(str(template), envs, runs=2, duration_s=5))
    points = expand_points(load_sweep(path))
    assert len(points) == 2 * 6 * 2
    assert {(p.case, p.seed) for p in points} == {(f"env00{i}", s) for i in (0, 1) for s in (1, 2)}
    # The committed sweep is the default scale's: 60 environments x 6 algorithms x 2 runs.
    assert len(expand_points(load_sweep(MODEL_DIR / "bootstrap.toml"))) == 720


def test_held_out_environments_are_the_last_fifth():
    names = [f"env{i:03d}" for i in range(60)]
    assert sscc.held_out_environments(names) == names[48:]
    assert sscc.held_out_environments(names[:2]) == ["env001"]
    assert sscc.held_out_environments(names[:1]) == []


def test_pairs_join_a_data_units_fields_with_the_next_ones_algorithm_and_reward(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    # Subflow 0: DUs at 1, 2, 3, 4 s; the third is coupled, so only (1 -> 2) pairs. Subflow 1:
    # DUs at 1.5, 2.5 s: one pair.
    rows = [  # subflow, time, cc, tput (the other features follow it), coupled, reward
        (0, 1.0, "cubic", 1.0, 0, 0.1), (0, 2.0, "bbr", 2.0, 0, 0.2),
        (0, 3.0, "bbr", 3.0, 1, 0.3), (0, 4.0, "bbr", 4.0, 0, 0.4),
        (1, 2.5, "vegas", 6.0, 0, 0.6), (1, 1.5, "cubic", 5.0, 0, 0.5),
    ]
    cols = {"subflow": [r[0] for r in rows], "time_s": [r[1] for r in rows],
            "cc": [r[2] for r in rows], "is_coupled": [float(r[4]) for r in rows],
            "reward": [r[5] for r in rows]}
    for k, name in enumerate(sscc.DU_FEATURES):
        cols[name] = [r[3] + k / 10 for r in rows]
    pq.write_table(pa.table(cols), tmp_path / "features.parquet")
    X, y, cc, n = sscc._pairs_of_run(tmp_path / "features.parquet")
    assert n == 6
    assert X[:, 0].tolist() == [1.0, 5.0]
    assert X[0].tolist() == pytest.approx([1.0, 1.1, 1.2, 1.3, 1.4])
    assert y.tolist() == [0.2, 0.6]
    assert cc.tolist() == ["bbr", "vegas"]


def test_a_training_run_records_data_units_for_the_pairs(tmp_path):
    """One short bootstrap run through the sweep's path: its features.parquet has the Data Unit
    columns, and its pairs carry the run's algorithm."""
    from rove.sweeps import run_point

    template = ROOT / "scenarios" / "sscc" / "train-env.toml"
    res = run_point(template.read_text(), str(template), str(template.parent),
                    {"duration": "3s", "flows.0.cc": "westwood"}, 1, str(tmp_path / "run"))
    assert res["status"] == "ok", res["error"]
    X, y, cc, n = sscc._pairs_of_run(tmp_path / "run" / "features.parquet")
    assert n > 20 and len(y) > 10
    assert set(cc) == {"westwood"}
    assert X.shape[1] == len(sscc.DU_FEATURES)
    # tput <= tput_max and delay' >= delay_min (data_unit.rs): Eq. 5.8 is at most 1.
    assert np.all(np.isfinite(y)) and np.all(y <= 1.0 + 1e-9), y.max()


def test_the_committed_model_set_is_small_and_evaluates_as_xgboost_does():
    xgb = pytest.importorskip("xgboost")
    from rove.learn import TreeModel

    manifest = json.loads((MODEL_DIR / "manifest.json").read_text())
    assert manifest["format"] == sscc.FORMAT
    assert manifest["features"] == list(sscc.DU_FEATURES)
    assert manifest["candidates"] == list(sscc.CANDIDATES)
    assert sum(f.stat().st_size for f in MODEL_DIR.iterdir()) < 300_000
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.uniform(0, 100, 500), rng.exponential(1.0, 500),
                         rng.uniform(20, 800, 500), rng.uniform(20, 400, 500),
                         rng.uniform(0, 100, 500)])
    for cc in sscc.CANDIDATES:
        path = MODEL_DIR / manifest["models"][cc]
        ref = xgb.XGBRegressor()
        ref.load_model(str(path))
        want = ref.predict(X).astype(float)
        got = np.asarray(TreeModel(str(path)).predict(X.tolist()), dtype=float).ravel()
        assert np.allclose(got, want, rtol=1e-5, atol=1e-5), cc


def test_an_unknown_trainer_is_refused_with_the_list():
    from rove.cli import CliError
    from rove.train import main

    with pytest.raises(CliError, match=r"unknown trainer 'foo' \(accepted: sscc\)"):
        main(["foo"])


def test_a_written_model_set_is_read_by_the_engine(tmp_path):
    """Models fitted on made-up pairs (BBR's reward high, every other candidate's low) and written
    as `rove train sscc` writes them: a scenario naming the manifest runs, and its subflows end
    on BBR."""
    pytest.importorskip("xgboost")
    import pandas as pd
    from rove.sweeps import run_point

    rng = np.random.default_rng(1)
    rows = []
    for env in ("env000", "env001"):
        for cc in sscc.CANDIDATES:
            X = rng.uniform(1, 50, (40, len(sscc.DU_FEATURES)))
            for x in X:
                rows.append({"env": env, "seed": 1, "cc": cc,
                             **dict(zip(sscc.DU_FEATURES, x)),
                             "reward": 0.9 if cc == "bbr" else 0.2})
    data = pd.DataFrame(rows)
    models, errors = sscc.fit_models(data, ["env001"])
    assert errors["bbr"]["rmse"] < 0.05 and errors["cubic"]["held_out_pairs"] == 40
    manifest = {"format": sscc.FORMAT, "version": sscc.VERSION,
                "features": list(sscc.DU_FEATURES), "du_acks": sscc.DU_ACKS,
                "candidates": list(sscc.CANDIDATES),
                "models": {cc: f"{cc}.json" for cc in sscc.CANDIDATES}}
    path = sscc.write_model_set(tmp_path / "models", models, manifest, "# sweep\n")
    text = f'''duration = "3s"
[links.a]
rate = "10Mbps"
delay = "10ms"
buffer = "50pkt"
[links.a_up]
rate = "1Gbps"
delay = "10ms"
[links.b]
rate = "10Mbps"
delay = "30ms"
buffer = "50pkt"
[links.b_up]
rate = "1Gbps"
delay = "30ms"
[[flows]]
name = "mp"
cc = "sscc"
detector = "none"
paths = [{{ path = ["a"], ack_path = ["a_up"] }}, {{ path = ["b"], ack_path = ["b_up"] }}]
[[controllers]]
kind = "sscc"
flow = "mp"
model = "{path}"
[[controllers]]
kind = "data_units"
flow = "mp"
'''
    res = run_point(text, "<test>", str(tmp_path), {}, 1, str(tmp_path / "run"))
    assert res["status"] == "ok", res["error"]
    import pyarrow.parquet as pq

    t = pq.read_table(tmp_path / "run" / "features.parquet").to_pandas()
    for sub in (0, 1):
        ccs = t[t["subflow"] == sub].sort_values("time_s")["cc"].tolist()
        assert ccs[0] == "cubic" and ccs[-1] == "bbr", ccs[:5]


def test_the_sweep_time_is_the_time_of_the_invocations_that_ran_points(tmp_path):
    """A resumed invocation that finds every point done adds no time: the manifest's
    ``sweep_wall_s`` stays the first invocation's 94.9 s, not the resume's 1.4 s; a directory
    whose sweep finished before the record existed has no known time."""
    t = sscc.record_sweep_time(tmp_path, 94.94, 720)
    assert t["sweep_wall_s"] == 94.9 and t["this_invocation_s"] == 94.94
    t = sscc.record_sweep_time(tmp_path, 1.4, 0)
    assert t["sweep_wall_s"] == 94.9
    assert t["invocations"] == [{"wall_s": 94.9, "points_run": 720},
                                {"wall_s": 1.4, "points_run": 0}]
    t = sscc.record_sweep_time(tmp_path, 10.3, 30)       # a grown sweep's new points
    assert t["sweep_wall_s"] == 105.2
    fresh = tmp_path / "old"
    fresh.mkdir()
    assert sscc.record_sweep_time(fresh, 1.4, 0)["sweep_wall_s"] is None


def test_completed_points_counts_finished_runs(tmp_path):
    for name, done in (("a", True), ("b", False), ("c", True)):
        d = tmp_path / "runs" / name
        d.mkdir(parents=True)
        if done:
            (d / "summary.json").write_text("{}")
    assert sscc.completed_points(tmp_path) == 2
    assert sscc.completed_points(tmp_path / "absent") == 0
