"""Several sweeps with one set of workers (`rove.sweeps.run_specs`, which `rove reproduce` uses
for all the series of an experiment) and the order points are handed to the workers in."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from rove.sweeps import SweepError, load_sweep, run_spec, run_specs
from rove.sweeps import _schedule, _SweepRun

from conftest import SMALL_SCENARIO

SCENARIO = SMALL_SCENARIO.replace('ack_path = ["up"]', 'ack_path = ["up"]\ncount = 2')

# Two sweeps of the same scenario: durations 1 s and 3 s, and two algorithms.
SWEEP_A = """
scenario = "scenario.toml"
seeds = [1, 2]
[grid]
duration = ["1s", "3s"]
[fixed]
"flows.0.cc" = "reno"
"""
SWEEP_B = """
scenario = "scenario.toml"
repetitions = 1                      # the scenario's seed, 7
[grid]
"flows.0.cc" = ["cubic", "bbr"]
[fixed]
duration = "2s"
"""


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@pytest.fixture
def two_sweeps(tmp_path):
    _write(tmp_path / "scenario.toml", SCENARIO)
    return (load_sweep(_write(tmp_path / "a.toml", SWEEP_A)),
            load_sweep(_write(tmp_path / "b.toml", SWEEP_B)))


def _runs(out: Path) -> dict[str, dict]:
    """Each run's summary.json without its wall-clock time."""
    res = {}
    for f in sorted((out / "runs").glob("*/summary.json")):
        s = json.loads(f.read_text())
        s.pop("wall_s", None)
        res[f.parent.name] = s
    return res


def test_sweeps_run_together_give_what_each_gives_alone(two_sweeps, tmp_path):
    a, b = two_sweeps
    run_spec(a, tmp_path / "alone-a", jobs=1)
    run_spec(b, tmp_path / "alone-b", jobs=1)
    log: list[str] = []
    results = run_specs([(a, tmp_path / "both-a"), (b, tmp_path / "both-b")], jobs=2,
                        log=log.append)
    assert [len(t) for t, _ in results] == [4 * 2, 2 * 2]      # points x 2 flows
    assert [f for _, f in results] == [[], []]
    for name in ("a", "b"):
        alone, both = tmp_path / f"alone-{name}", tmp_path / f"both-{name}"
        assert (both / "summary.parquet").read_bytes() == (alone / "summary.parquet").read_bytes()
        assert _runs(both) == _runs(alone)
        for q in ("timeseries.parquet", "queue.parquet"):
            for run in (alone / "runs").iterdir():
                assert (both / "runs" / run.name / q).read_bytes() == (run / q).read_bytes()
    # each sweep counts its own points in the progress lines
    assert sorted(ln.split("]")[0] + "]" for ln in log) == \
        ["[1/2]", "[1/4]", "[2/2]", "[2/4]", "[3/4]", "[4/4]"]
    # resuming: nothing left, nothing runs, the tables are rewritten identically
    before = (tmp_path / "both-a" / "summary.parquet").read_bytes()
    log.clear()
    run_specs([(a, tmp_path / "both-a"), (b, tmp_path / "both-b")], jobs=2, log=log.append)
    assert log == []
    assert (tmp_path / "both-a" / "summary.parquet").read_bytes() == before


def test_two_sweeps_may_not_share_a_directory(two_sweeps, tmp_path):
    a, b = two_sweeps
    with pytest.raises(SweepError, match="share an output directory"):
        run_specs([(a, tmp_path / "x"), (b, tmp_path / "x")], jobs=1)


def test_longest_points_go_first_with_several_workers(two_sweeps, tmp_path):
    a, b = two_sweeps
    runs = [_SweepRun.prepare(spec, tmp_path / n, 2, None, False)
            for spec, n in ((a, "a"), (b, "b"))]
    tasks = [(s, p) for s in runs for p in s.todo]
    in_file_order = [p.id for _, p in tasks]
    assert in_file_order == ["duration=1s,seed=1", "duration=1s,seed=2", "duration=3s,seed=1",
                             "duration=3s,seed=2", "cc=cubic,seed=7", "cc=bbr,seed=7"]
    # one worker: file order
    assert [p.id for _, p in _schedule(tasks, 1)] == in_file_order
    # two: by the engine's estimate of events, which is proportional to the duration here
    # (one 20 Mbit/s bottleneck shared by both flows): 3 s, then 2 s, then 1 s; ties keep
    # file order
    assert [p.id for _, p in _schedule(tasks, 2)] == [
        "duration=3s,seed=1", "duration=3s,seed=2", "cc=cubic,seed=7", "cc=bbr,seed=7",
        "duration=1s,seed=1", "duration=1s,seed=2"]


def test_worker_pool_keeps_one_set_of_workers_for_every_sweep(two_sweeps, tmp_path,
                                                              monkeypatch):
    import rove.sweeps as sweeps

    a, b = two_sweeps
    made = []
    real = sweeps._new_pool
    monkeypatch.setattr(sweeps, "_new_pool", lambda jobs: made.append(jobs) or real(jobs))
    with sweeps.worker_pool(2):
        assert made == [2]
        workers = set(sweeps._SHARED_POOL[0]._processes)
        assert len(workers) == 2                     # forked when the block starts
        run_specs([(a, tmp_path / "a")], jobs=2)
        run_specs([(b, tmp_path / "b")], jobs=2)
        assert made == [2] and set(sweeps._SHARED_POOL[0]._processes) == workers
    assert sweeps._SHARED_POOL == []
    assert len(list((tmp_path / "a" / "runs").iterdir())) == 4
    # outside a block, every call starts (and stops) its own
    run_specs([(b, tmp_path / "b2")], jobs=2)
    assert made == [2, 2]
    assert (tmp_path / "b2" / "summary.parquet").read_bytes() == \
        (tmp_path / "b" / "summary.parquet").read_bytes()
