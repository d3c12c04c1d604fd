"""rove never deletes what it did not write (python/rove/outputs.py).

Every command that writes refuses a ``-o`` that exists and does not hold its own output, before
anything runs, and leaves it untouched byte for byte; replacing rove's own output takes
``--force``. Inputs must be regular files of sane size. Staging directories left by a killed
process are removed by the next run into the same place; a live process's are not.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rove
from rove.outputs import MAX_INPUT_BYTES, OutputError, check_output_dir, remove_stale

from conftest import SMALL_SCENARIO, run_cli

SCENARIO = SMALL_SCENARIO


def _tree(d: Path) -> dict[str, str]:
    """Every file under ``d`` with its SHA-256 (and every directory), to compare before/after."""
    out = {}
    for p in sorted(d.rglob("*")):
        rel = str(p.relative_to(d))
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
    return out


@pytest.fixture
def scenario(tmp_path) -> Path:
    s = tmp_path / "s.toml"
    s.write_text(textwrap.dedent(SCENARIO).lstrip())
    return s


def _one_line_exit_2(r) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rove: error: "), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


def test_run_into_the_scenarios_own_directory_is_refused_and_leaves_it_untouched(tmp_path):
    # The case that wiped a user's scenario: `rove run sc/k1.toml -o sc`.
    sc = tmp_path / "sc"
    sc.mkdir()
    (sc / "k1.toml").write_text(textwrap.dedent(SCENARIO).lstrip())
    (sc / "k2.toml").write_text("# a sibling\n")
    (sc / "notes").mkdir()
    (sc / "notes" / "todo.txt").write_text("keep me\n")
    before = _tree(sc)
    line = _one_line_exit_2(run_cli("run", "sc/k1.toml", "-o", "sc", cwd=tmp_path))
    assert "sc: exists and is not a rove results directory" in line
    assert _tree(sc) == before
    # --force does not make a foreign directory replaceable either.
    _one_line_exit_2(run_cli("run", "sc/k1.toml", "-o", "sc", "--force", cwd=tmp_path))
    assert _tree(sc) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".sc.")] == []


def test_replacing_earlier_results_needs_force(scenario, tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", scenario, "-o", out, "-q").returncode == 0
    first = (out / "summary.json").read_text()
    line = _one_line_exit_2(run_cli("run", scenario, "-o", out, "-q", "--seed", "2"))
    assert "--force" in line and str(out) in line
    assert (out / "summary.json").read_text() == first
    r = run_cli("run", scenario, "-o", out, "-q", "--seed", "2", "--force")
    assert r.returncode == 0, r.stderr
    assert '"seed": 2' in (out / "summary.json").read_text()


def test_an_empty_directory_is_accepted(scenario, tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    assert run_cli("run", scenario, "-o", out, "-q").returncode == 0
    assert (out / "summary.json").is_file()


def test_python_api_refuses_the_same(scenario, tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "data.csv").write_text("1,2\n")
    with pytest.raises(OutputError, match="not a rove results directory"):
        rove.run(scenario, out=foreign)
    assert (foreign / "data.csv").read_text() == "1,2\n"
    out = tmp_path / "res"
    rove.run(scenario, out=out)
    with pytest.raises(OutputError, match="force"):
        rove.run(scenario, out=out)
    assert rove.run(scenario, out=out, force=True).out == out


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "big", "dir"])
def test_inputs_must_be_regular_files_of_sane_size(special, tmp_path):
    if special == "/dev/zero":
        path = Path("/dev/zero")
        want = "not a regular file"
    elif special == "fifo":
        path = tmp_path / "pipe.toml"
        os.mkfifo(path)
        want = "not a regular file"
    elif special == "big":
        path = tmp_path / "big.toml"
        with open(path, "wb") as f:  # a sparse 1 GiB file: refused by its size, never read
            f.truncate(1 << 30)
        want = "too large"
    else:
        path = tmp_path
        want = "is a directory"
    for cmd in (["run", path, "-o", tmp_path / "out"], ["validate", path]):
        line = _one_line_exit_2(run_cli(*cmd, timeout=60))
        assert want in line and str(path) in line
    assert not (tmp_path / "out").exists()
    assert MAX_INPUT_BYTES < 1 << 30


def test_sweep_file_is_checked_the_same_way(tmp_path):
    line = _one_line_exit_2(run_cli("sweep", "/dev/zero", "-o", tmp_path / "sw", timeout=60))
    assert "/dev/zero" in line and "not a regular file" in line


def test_empty_output_path_is_a_clear_error(scenario):
    line = _one_line_exit_2(run_cli("run", scenario, "-o", ""))
    assert "-o: empty path" in line


def test_output_under_a_file_names_what_the_user_gave(scenario, tmp_path):
    (tmp_path / "afile").write_text("x")
    line = _one_line_exit_2(run_cli("run", scenario, "-o", tmp_path / "afile" / "out"))
    assert str(tmp_path / "afile" / "out") in line and ".partial" not in line


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a read-only tmpfs needs root")
def test_read_only_destination_error_names_the_given_directory(scenario, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(ro)], check=True)
    try:
        line = _one_line_exit_2(run_cli("run", scenario, "-o", ro / "out", "-q"))
    finally:
        subprocess.run(["umount", str(ro)], check=True)
    assert f"{ro / 'out'}: cannot write the results directory: Read-only file system" in line
    assert ".partial" not in line


def test_trace_synth_does_not_overwrite_without_force(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("precious\n")
    line = _one_line_exit_2(run_cli("trace", "synth", "constant", "-o", f, "--duration", "1s"))
    assert "--force" in line
    assert f.read_text() == "precious\n"
    assert run_cli("trace", "synth", "constant", "-o", f, "--duration", "1s",
                   "--force").returncode == 0
    assert f.read_text() != "precious\n"


def test_compare_output_must_be_new_or_an_earlier_comparison(scenario, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d, seed in ((a, "1"), (b, "2")):
        assert run_cli("run", scenario, "-o", d, "-q", "--seed", seed).returncode == 0
    line = _one_line_exit_2(run_cli("compare", a, b, "-o", a))  # a results dir, not a comparison
    assert "not a rove compare directory" in line
    assert _tree(a)  # untouched: still the run's files
    assert not (a / "compare.json").exists()


def test_stale_staging_of_a_dead_process_is_removed_and_a_live_ones_kept(scenario, tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".out.partial-{dead.pid}-abc123"
    stale.mkdir()
    (stale / "summary.json").write_text("{}")
    legacy = tmp_path / ".out.partial-kernel-q1w2e3"  # written before staging names held a pid
    legacy.mkdir()
    live = tmp_path / f".out.partial-{os.getpid()}-zzz"
    live.mkdir()
    other = tmp_path / f".other.partial-{dead.pid}-x"  # another destination's: not ours to touch
    other.mkdir()
    assert run_cli("run", scenario, "-o", tmp_path / "out", "-q").returncode == 0
    assert not stale.exists() and not legacy.exists()
    assert live.exists() and other.exists()
    assert sorted(p.name for p in remove_stale(tmp_path / "other")) == [other.name]


def test_check_output_dir_modifies_nothing(tmp_path):
    d = tmp_path / "x"
    d.mkdir()
    (d / "f").write_text("1")
    with pytest.raises(OutputError):
        check_output_dir(d)
    assert _tree(d) == {"f": hashlib.sha256(b"1").hexdigest()}


def test_a_reproduction_writes_only_into_its_own_or_a_new_directory(tmp_path):
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "chapter4.tex").write_text("precious\n")
    line = _one_line_exit_2(run_cli("reproduce", "bbrv2plus", "--quick", "--only", "loss",
                                    "-o", mine))
    assert "not the output of a reproduction" in line
    assert sorted(p.name for p in mine.iterdir()) == ["chapter4.tex"]
    from rove.outputs import check_study_dir, mark_study_dir

    out = tmp_path / "study"
    mark_study_dir(out, "bbrv2plus")  # what a first run leaves even if it is interrupted
    (out / "loss").mkdir()
    assert check_study_dir(out) == out  # resumed, not refused
