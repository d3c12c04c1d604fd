"""Sweeps: `rove sweep SWEEP.toml -o DIR` and `rove.sweep` (docs/sweeps.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import time
import textwrap
from pathlib import Path

import pandas as pd
import pytest

import rove
from rove.cli import main as cli_main
from rove.sweeps import SweepError, expand_points, load_sweep

from conftest import SMALL_SCENARIO, run_cli

# Two flows sharing the bottleneck, so there is a fairness index and two rows per point.
SCENARIO = SMALL_SCENARIO.replace('ack_path = ["up"]', 'ack_path = ["up"]\ncount = 2')

SWEEP_2x2x2 = """
scenario = "scenario.toml"
repetitions = 2
[grid]
"flows.0.cc" = ["reno", "cubic"]
"links.down.buffer" = ["20pkt", "100pkt"]
[fixed]
duration = "2s"
"""


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@pytest.fixture
def sweep_dir(tmp_path):
    """A scenario and a 2x2 grid x 2 seeds sweep file in tmp_path; returns the sweep file."""
    _write(tmp_path / "scenario.toml", SCENARIO)
    return _write(tmp_path / "sweep.toml", SWEEP_2x2x2)


def _progress_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("[")]


# --------------------------------------------------------------------------------------------
# Expansion


def test_grid_expansion_count_and_ids_are_deterministic(tmp_path):
    _write(tmp_path / "scenario.toml", SCENARIO)
    f = _write(tmp_path / "sweep.toml", """
        scenario = "scenario.toml"
        repetitions = 3
        [grid]
        "flows.0.cc" = ["reno", "cubic", "bbr"]
        links.down.buffer = ["50pkt", "500pkt"]   # unquoted dotted key: same as quoted
        [fixed]
        duration = "1s"
    """)
    spec = load_sweep(f)
    assert list(spec.grid) == ["flows.0.cc", "links.down.buffer"]
    assert spec.seeds == [7, 8, 9]  # the scenario's seed, then +1, +2
    points = expand_points(spec)
    assert len(points) == 3 * 2 * 3
    ids = [p.id for p in points]
    assert len(set(ids)) == len(ids)
    assert ids == [p.id for p in expand_points(load_sweep(f))]
    assert ids[0] == "cc=reno,buffer=50pkt,seed=7"
    assert points[0].label == "cc=reno buffer=50pkt seed=7"
    assert ids[-1] == "cc=bbr,buffer=500pkt,seed=9"
    assert points[0].overrides == [("duration", "1s"), ("flows.0.cc", "reno"),
                                   ("links.down.buffer", "50pkt")]


def test_example_sweep_file_is_valid(repo):
    spec = load_sweep(repo / "scenarios" / "sweeps" / "cc-vs-buffer.toml")
    assert spec.scenario.resolve() == (repo / "scenarios" / "demo.toml").resolve()
    points = expand_points(spec)
    assert len(points) == 12 and points[-1].id == "cc=bbr,buffer=500pkt,seed=2"
    rove.validate(spec.scenario, seed=points[0].seed, overrides=points[0].overrides)


def test_ids_are_filesystem_safe_and_unique_when_labels_collide(tmp_path):
    _write(tmp_path / "scenario.toml", SCENARIO)
    f = _write(tmp_path / "sweep.toml", """
        scenario = "scenario.toml"
        seeds = [1, 7]
        [grid]
        "links.down.trace" = ["traces/a b", "traces/a_b"]
        "links.up.delay" = ["10ms"]
        "links.down.delay" = ["5ms"]
    """)
    points = expand_points(load_sweep(f))
    ids = [p.id for p in points]
    assert len(ids) == 4 and len(set(ids)) == 4
    for i in ids:
        assert "/" not in i and " " not in i and not i.startswith(".")
    # Ambiguous last parts get more of the key.
    assert points[0].label.startswith("trace=traces/a b up.delay=10ms down.delay=5ms seed=1")


# --------------------------------------------------------------------------------------------
# Running


def test_small_sweep_writes_runs_and_summary(sweep_dir):
    out = sweep_dir.parent / "out"
    r = run_cli("sweep", sweep_dir, "-o", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    lines = _progress_lines(r.stderr)
    assert len(lines) == 8 and all(": ok " in ln for ln in lines), r.stderr
    assert {ln.split("]")[0] for ln in lines} == {f"[{i}/8" for i in range(1, 9)}
    runs = sorted(p.name for p in (out / "runs").iterdir())
    assert len(runs) == 8
    for name in runs:
        for f in ("summary.json", "timeseries.parquet", "queue.parquet"):
            assert (out / "runs" / name / f).is_file()
    assert not (out / "failures.json").exists()

    df = pd.read_parquet(out / "summary.parquet")
    assert len(df) == 8 * 2
    assert list(df.columns[:4]) == ["point", "seed", "flows.0.cc", "links.down.buffer"]
    for c in ("flow", "cc", "goodput_mbps", "throughput_mbps", "mean_rtt_ms", "p95_rtt_ms",
              "retrans_rate", "fct_s", "jain_index", "link_down_utilization",
              "link_down_mean_queue_delay_ms", "link_down_drops", "link_up_utilization"):
        assert c in df.columns, c
    assert list(df["point"].astype(str)) == sorted(df["point"].astype(str))
    assert set(df["seed"]) == {7, 8}
    # Values come straight from each run's summary.json.
    for point, rows in df.groupby("point", observed=True, sort=False):
        s = json.loads((out / "runs" / str(point) / "summary.json").read_text())
        assert s["seed"] == rows["seed"].iloc[0]
        assert list(rows["flow"].astype(str)) == [f["name"] for f in s["flows"]]
        assert list(rows["cc"].astype(str)) == [f["cc"] for f in s["flows"]]
        assert list(rows["goodput_mbps"]) == [f["goodput_mbps"] for f in s["flows"]]
        assert list(rows["retrans_rate"]) == [f["retrans_rate"] for f in s["flows"]]
        assert (rows["jain_index"] == s["jain_index"]).all()
        down = next(link for link in s["links"] if link["name"] == "down")
        assert (rows["link_down_utilization"] == down["utilization"]).all()
        assert (rows["link_down_drops"] == down["drops"]).all()
        # The grid values are those of the point (the first flow's cc is the grid's).
        assert str(rows["flows.0.cc"].iloc[0]) == s["flows"][0]["cc"]
    # The grid value reached the run: 20 packets at 20 Mbps queue for at most 12 ms.
    by_buf = df.groupby("links.down.buffer", observed=True)["link_down_p95_queue_delay_ms"].max()
    assert by_buf["20pkt"] <= 12.5 < by_buf["100pkt"]


def test_a_point_holds_exactly_what_rove_run_writes(tmp_path, repo):
    """Every file `rove run` writes, the WiFi cell's radio.parquet too, byte for byte
    (summary.json but its wall_s)."""
    scenario = repo / "scenarios" / "radio" / "wifi-3sta.toml"
    sweep = _write(tmp_path / "sweep.toml", f"""
        scenario = "{scenario}"
        seeds = [5]
        [fixed]
        duration = "2s"
        """)
    out = tmp_path / "out"
    assert run_cli("sweep", sweep, "-o", out, "-q").returncode == 0
    (point,) = (out / "runs").iterdir()
    r = run_cli("run", scenario, "-o", tmp_path / "run", "--seed", "5", "--set", "duration=2s",
                "-q")
    assert r.returncode == 0, r.stderr
    files = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert files == ["queue.parquet", "radio.parquet", "summary.json", "timeseries.parquet"]
    assert sorted(p.name for p in point.iterdir()) == files
    for f in files:
        a, b = (point / f).read_bytes(), (tmp_path / "run" / f).read_bytes()
        if f == "summary.json":
            a, b = (json.loads(x) for x in (a, b))
            a.pop("wall_s"), b.pop("wall_s")
        assert a == b, f


def test_resume_runs_only_missing_points_and_same_table(sweep_dir):
    out = sweep_dir.parent / "out"
    assert run_cli("sweep", sweep_dir, "-o", out, "-q").returncode == 0
    table = (out / "summary.parquet").read_bytes()
    runs = sorted((out / "runs").iterdir())
    mtimes = {p.name: (p / "summary.json").stat().st_mtime_ns for p in runs}
    victim = runs[3]
    import shutil

    shutil.rmtree(victim)
    # A stale temporary directory of an interrupted writer is cleaned up.
    (out / "runs" / f".{victim.name}.partial-xyz").mkdir()
    r = run_cli("sweep", sweep_dir, "-o", out)
    assert r.returncode == 0, r.stderr
    lines = _progress_lines(r.stderr)
    assert len(lines) == 1 and lines[0].startswith("[8/8] ") and ": ok " in lines[0], r.stderr
    assert "7 of 8 points already complete" in r.stderr
    for p in sorted((out / "runs").iterdir()):
        if p.name != victim.name:
            assert (p / "summary.json").stat().st_mtime_ns == mtimes[p.name]
    assert (victim / "summary.json").is_file()
    assert not any(p.name.startswith(".") for p in (out / "runs").iterdir())
    assert (out / "summary.parquet").read_bytes() == table
    # Nothing left to do: nothing runs, the table is rewritten identically.
    r = run_cli("sweep", sweep_dir, "-o", out)
    assert r.returncode == 0 and _progress_lines(r.stderr) == []
    assert (out / "summary.parquet").read_bytes() == table


def test_a_point_whose_files_are_not_whole_runs_again(sweep_dir):
    # Points are written without fsync; after a machine crash a point's directory can be there
    # with a Parquet file cut short. Resuming checks each point's files (PAR1 at both ends,
    # summary.json parses) and runs such a point again.
    out = sweep_dir.parent / "out"
    assert run_cli("sweep", sweep_dir, "-o", out, "-q").returncode == 0
    table = (out / "summary.parquet").read_bytes()
    victim = sorted((out / "runs").iterdir())[2]
    ts = victim / "timeseries.parquet"
    whole = ts.read_bytes()
    ts.write_bytes(whole[: len(whole) // 2])
    r = run_cli("sweep", sweep_dir, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "7 of 8 points already complete" in r.stderr
    assert ts.read_bytes() == whole
    assert (out / "summary.parquet").read_bytes() == table


def test_interrupted_sweep_resumes_with_only_the_missing_points(tmp_path):
    _write(tmp_path / "scenario.toml", SCENARIO)
    f = _write(tmp_path / "sweep.toml", """
        scenario = "scenario.toml"
        seeds = [1, 2, 3, 4, 5, 6]
        [fixed]
        duration = "40s"
        "links.down.rate" = "200Mbps"
    """)
    out = tmp_path / "out"
    from conftest import rove_command

    proc = subprocess.Popen(rove_command() + ["sweep", str(f), "-o", str(out), "-j", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "runs").is_dir() and any(p.name.startswith("seed=")
                                           for p in (out / "runs").iterdir()):
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and not (out / "summary.parquet").exists()
    done = {p.name for p in (out / "runs").iterdir() if not p.name.startswith(".")}
    assert 1 <= len(done) < 6
    for name in done:  # whatever exists is complete
        assert (out / "runs" / name / "summary.json").is_file()
    r = run_cli("sweep", f, "-o", out, "-j", "2")
    assert r.returncode == 0, r.stderr
    ran = {ln.split("] ")[1].split(":")[0] for ln in _progress_lines(r.stderr)}
    assert ran == {f"seed={s}" for s in range(1, 7)} - done
    assert len(pd.read_parquet(out / "summary.parquet")) == 6 * 2


def test_same_sweep_twice_gives_identical_table(sweep_dir):
    a, b = sweep_dir.parent / "a", sweep_dir.parent / "b"
    assert run_cli("sweep", sweep_dir, "-o", a, "-q", "--jobs", "1").returncode == 0
    assert run_cli("sweep", sweep_dir, "-o", b, "-q", "--jobs", "2").returncode == 0
    assert (a / "summary.parquet").read_bytes() == (b / "summary.parquet").read_bytes()


def test_a_bad_grid_value_fails_before_any_point_runs(tmp_path):
    _write(tmp_path / "scenario.toml", SCENARIO)
    f = _write(tmp_path / "sweep.toml", """
        scenario = "scenario.toml"
        [grid]
        "links.down.rate" = ["10Mbps", "-5Mbps"]
        "flows.0.cc" = ["reno", "cubic"]
        [fixed]
        duration = "1s"
    """)
    out = tmp_path / "out"
    r = run_cli("sweep", f, "-o", out, "--jobs", "2")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and 'grid."links.down.rate" = -5Mbps' in lines[0], r.stderr
    assert not out.exists()


def test_failed_point_is_recorded_and_others_complete(tmp_path):
    # Each value is valid with the others' first values, so the sweep starts; the combination
    # duration = 1s with sample_interval = 2s is not, and fails when its point runs.
    _write(tmp_path / "scenario.toml", SCENARIO)
    f = _write(tmp_path / "sweep.toml", """
        scenario = "scenario.toml"
        [grid]
        "duration" = ["4s", "1s"]
        "sample_interval" = ["10ms", "2s"]
    """)
    out = tmp_path / "out"
    r = run_cli("sweep", f, "-o", out, "--jobs", "2")
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    failed = [ln for ln in _progress_lines(r.stderr) if "FAILED" in ln]
    assert len(failed) == 1 and "duration=1s sample_interval=2s" in failed[0], failed
    fails = json.loads((out / "failures.json").read_text())
    assert [x["point"] for x in fails] == ["duration=1s,sample_interval=2s,seed=7"]
    assert all("sample_interval" in x["error"] and "\n" not in x["error"] for x in fails)
    assert fails[0]["values"] == {"duration": "1s", "sample_interval": "2s"}
    assert sorted(p.name for p in (out / "runs").iterdir()) == [
        "duration=1s,sample_interval=10ms,seed=7", "duration=4s,sample_interval=10ms,seed=7",
        "duration=4s,sample_interval=2s,seed=7"]
    df = pd.read_parquet(out / "summary.parquet")
    assert len(df) == 3 * 2
    # A rerun tries the failed point again (only it) and still reports it.
    r = run_cli("sweep", f, "-o", out)
    assert r.returncode == 1
    assert len(_progress_lines(r.stderr)) == 1


def test_python_api_returns_the_summary_frame(sweep_dir):
    out = sweep_dir.parent / "out"
    df = rove.sweep(sweep_dir, out, jobs=1)
    assert len(df) == 16 and df.attrs["failures"] == []
    pd.testing.assert_frame_equal(df, pd.read_parquet(out / "summary.parquet"))


# --------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("text, expect", [
    ('scenario = "scenario.toml"\nrepetition = 2\n', "repetition: unknown key"),
    ('scenario = "scenario.toml"\n[grid]\n"flows.0.cc" = []\n', 'grid."flows.0.cc": empty list'),
    ('scenario = "scenario.toml"\n[grid]\n"flows.0.cc" = "reno"\n',
     'grid."flows.0.cc": expected a list'),
    ('repetitions = 2\n', "scenario: missing"),
    ('scenario = "nope.toml"\n', "scenario: 'nope.toml': no such file"),
    ('scenario = "scenario.toml"\nrepetitions = 0\n', "repetitions: expected an integer >= 1"),
    ('scenario = "scenario.toml"\nseeds = [1, 1]\n', "seeds: a seed is listed twice"),
    ('scenario = "scenario.toml"\n[grid]\nseed = [1, 2]\n', 'grid."seed": seeds are not'),
    ('scenario = "scenario.toml"\n[grid\n', "not valid TOML"),
])
def test_bad_sweep_file_is_one_line_exit_2(tmp_path, capsys, text, expect):
    _write(tmp_path / "scenario.toml", SCENARIO)
    f = tmp_path / "sweep.toml"
    f.write_text(text, encoding="utf-8")
    # In-process (the subprocess path is covered by the other tests): the same main().
    assert cli_main(["sweep", str(f), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rove: error: "), err
    assert str(f) in lines[0] and expect in lines[0], lines[0]
    assert not (tmp_path / "out").exists()
    with pytest.raises(SweepError):
        load_sweep(f)


def test_missing_sweep_file_and_bad_jobs(tmp_path):
    r = run_cli("sweep", tmp_path / "none.toml", "-o", tmp_path / "out")
    assert r.returncode == 2 and r.stderr.startswith("rove: error: ")
    assert "none.toml" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    _write(tmp_path / "scenario.toml", SCENARIO)
    f = _write(tmp_path / "sweep.toml", 'scenario = "scenario.toml"\n')
    r = run_cli("sweep", f, "-o", tmp_path / "out", "--jobs", "0")
    assert r.returncode == 2 and "--jobs" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_resume_refuses_a_different_sweep(sweep_dir):
    out = sweep_dir.parent / "out"
    assert run_cli("sweep", sweep_dir, "-o", out, "-q").returncode == 0
    _write(sweep_dir, SWEEP_2x2x2.replace('duration = "2s"', 'duration = "1s"'))
    r = run_cli("sweep", sweep_dir, "-o", out, "-q")
    assert r.returncode == 2 and "different sweep" in r.stderr, r.stderr
    # Growing the grid is fine: only the new points run.
    _write(sweep_dir, SWEEP_2x2x2.replace('["20pkt", "100pkt"]', '["20pkt", "100pkt", "50pkt"]'))
    r = run_cli("sweep", sweep_dir, "-o", out)
    assert r.returncode == 0 and len(_progress_lines(r.stderr)) == 4, r.stderr


def test_out_that_is_not_a_sweep_directory(sweep_dir):
    other = sweep_dir.parent / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    r = run_cli("sweep", sweep_dir, "-o", other)
    assert r.returncode == 2 and "not a sweep directory" in r.stderr


# --------------------------------------------------------------------------------------------
# Ray

HAVE_RAY = importlib.util.find_spec("ray") is not None


def test_ray_missing_is_a_clear_error(sweep_dir, tmp_path):
    # Runs whether or not ray is installed: a stand-in package that fails to import shadows it.
    blocker = tmp_path / "no-ray" / "ray"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('ray is blocked for this test')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(blocker.parent)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    r = run_cli("sweep", sweep_dir, "-o", sweep_dir.parent / "out", "--ray", "local", env=env)
    assert r.returncode == 2
    assert "install ray to use --ray" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (sweep_dir.parent / "out").exists()


@pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (pip install ray)")
def test_ray_local_gives_the_same_table(sweep_dir):
    a, b = sweep_dir.parent / "local", sweep_dir.parent / "ray"
    assert run_cli("sweep", sweep_dir, "-o", a, "-q").returncode == 0
    r = run_cli("sweep", sweep_dir, "-o", b, "-q", "--ray", "local", env={**os.environ})
    assert r.returncode == 0, r.stderr
    assert (a / "summary.parquet").read_bytes() == (b / "summary.parquet").read_bytes()


# --------------------------------------------------------------------------------------------
# Cases: named scenarios of one sweep

SWEEP_CASES = """
title = "two paths"
scenario = "scenario.toml"
seeds = [3]
[grid]
"flows.0.cc" = ["reno", "cubic"]
[fixed]
duration = "1s"
[cases.lossy]
set = { "links.down.loss" = 0.02 }
[cases.slow]
scenario = "slow.toml"
[cases.traced]
requires = ["traces/absent.down"]
set = { "links.down.buffer" = "30pkt" }
"""


@pytest.fixture
def cases_sweep(tmp_path):
    _write(tmp_path / "scenario.toml", SCENARIO)
    _write(tmp_path / "slow.toml", SCENARIO.replace('rate = "20Mbps"', 'rate = "2Mbps"', 1))
    return _write(tmp_path / "sweep.toml", SWEEP_CASES)


def test_cases_expand_slowest_in_file_order_with_their_overrides(cases_sweep):
    spec = load_sweep(cases_sweep)
    assert [c.name for c in spec.cases] == ["lossy", "slow", "traced"]
    assert spec.cases[1].scenario.name == "slow.toml" and spec.cases[0].scenario.name == \
        "scenario.toml"
    points = expand_points(spec)
    assert [p.id for p in points] == [
        "case=lossy,cc=reno,seed=3", "case=lossy,cc=cubic,seed=3",
        "case=slow,cc=reno,seed=3", "case=slow,cc=cubic,seed=3",
        "case=traced,cc=reno,seed=3", "case=traced,cc=cubic,seed=3"]
    # fixed, then the case's, then the grid's
    assert points[0].overrides == [("duration", "1s"), ("links.down.loss", 0.02),
                                   ("flows.0.cc", "reno")]
    assert points[2].overrides == [("duration", "1s"), ("flows.0.cc", "reno")]
    assert spec.title == "two paths"


def test_cases_run_with_their_scenario_and_a_case_absent_file_is_skipped(cases_sweep):
    out = cases_sweep.parent / "out"
    r = run_cli("sweep", cases_sweep, "-o", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert "case traced skipped: traces/absent.down is absent" in r.stderr
    assert "skipped cases" in r.stdout and "skipped.json" in r.stdout
    skipped = json.loads((out / "skipped.json").read_text())
    assert skipped == [{"case": "traced", "missing": ["traces/absent.down"]}]
    df = pd.read_parquet(out / "summary.parquet")
    assert list(df.columns[:4]) == ["point", "seed", "case", "flows.0.cc"]
    assert sorted(set(df["case"].astype(str))) == ["lossy", "slow"]
    by_case = df.groupby("case", observed=True)
    # 2 % random loss reached the lossy case only; the slow case ran its own 2 Mbit/s file.
    assert (by_case.get_group("lossy")["link_down_loss_drops"] > 0).all()
    assert (by_case.get_group("slow")["link_down_loss_drops"] == 0).all()
    assert by_case["goodput_mbps"].max()["slow"] < 2.0 < by_case["goodput_mbps"].max()["lossy"]
    # The missing file appears: the case runs on the next call, the others are kept.
    (cases_sweep.parent / "traces").mkdir()
    (cases_sweep.parent / "traces" / "absent.down").write_text("1\n")
    r = run_cli("sweep", cases_sweep, "-o", out)
    assert r.returncode == 0 and len(_progress_lines(r.stderr)) == 2, r.stderr
    assert not (out / "skipped.json").exists()
    df = pd.read_parquet(out / "summary.parquet")
    assert set(df["case"].astype(str)) == {"lossy", "slow", "traced"}


def test_resume_refuses_a_changed_case_and_accepts_a_new_one(cases_sweep):
    out = cases_sweep.parent / "out"
    assert run_cli("sweep", cases_sweep, "-o", out, "-q").returncode == 0
    _write(cases_sweep, SWEEP_CASES.replace("0.02", "0.05"))
    r = run_cli("sweep", cases_sweep, "-o", out, "-q")
    assert r.returncode == 2 and "case lossy's scenario or overrides changed" in r.stderr
    _write(cases_sweep, SWEEP_CASES + '[cases.deep]\nset = { "links.down.buffer" = "400pkt" }\n')
    r = run_cli("sweep", cases_sweep, "-o", out)
    assert r.returncode == 0 and len(_progress_lines(r.stderr)) == 2, r.stderr
    assert "deep" in json.loads((out / "sweep.json").read_text())["cases"]


@pytest.mark.parametrize("text, expect", [
    ('scenario = "scenario.toml"\n[grid]\n"flows.0.cc" = ["reno"]\n'
     '[cases.a]\nset = { "flows.0.cc" = "cubic" }\n', 'cases.a.set."flows.0.cc": also a grid key'),
    ('scenario = "scenario.toml"\n[fixed]\nduration = "1s"\n'
     '[cases.a]\nset = { duration = "2s" }\n', 'cases.a.set."duration": also a fixed key'),
    ('scenario = "scenario.toml"\n[cases.a]\nsets = {}\n', "cases.a.sets: unknown key"),
    ('[cases.a]\nset = {}\n', "cases.a.scenario: missing"),
    ('scenario = "scenario.toml"\n[cases.a]\nscenario = "nope.toml"\n',
     "cases.a.scenario: 'nope.toml': no such file"),
    ('scenario = "scenario.toml"\n[cases."-x"]\n', 'cases.-x: a case name is'),
    ('scenario = "scenario.toml"\n[cases.a]\nrequires = [1]\n', "cases.a.requires: expected"),
    ('scenario = "scenario.toml"\ncases = 3\n', "cases: expected tables"),
    ('scenario = "scenario.toml"\ntitle = 3\n', "title: expected a string"),
])
def test_bad_cases_are_one_line_exit_2(tmp_path, capsys, text, expect):
    _write(tmp_path / "scenario.toml", SCENARIO)
    f = tmp_path / "sweep.toml"
    f.write_text(text, encoding="utf-8")
    assert cli_main(["sweep", str(f), "-o", str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_a_case_value_the_scenario_rejects_fails_before_any_point_runs(cases_sweep):
    _write(cases_sweep, SWEEP_CASES.replace("0.02", "2.0"))
    out = cases_sweep.parent / "out"
    r = run_cli("sweep", cases_sweep, "-o", out)
    assert r.returncode == 2 and "cases.lossy:" in r.stderr and "loss" in r.stderr, r.stderr
    assert not (out / "runs").exists()
