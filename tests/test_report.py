"""rove report: PNG figures and report.html from a results directory."""

from __future__ import annotations

import pytest

from rove import results
from rove.report import FIGURES, flow_throughput, make_report

from conftest import SMALL_SCENARIO, run_cli
from test_results_write import fake_finish, tables

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _check_report(d):
    for name in FIGURES:
        png = d / f"{name}.png"
        assert png.is_file(), png
        data = png.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000, name
    html = (d / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert html.count("<img ") == len(FIGURES)
    return html


def test_report_from_a_run(write_scenario, tmp_path):
    scenario = write_scenario(SMALL_SCENARIO)
    out = tmp_path / "res"
    r = run_cli("run", scenario, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "bulk" in r.stdout and "goodput" in r.stdout
    r = run_cli("report", out)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"report: {out / 'report.html'}"
    html = _check_report(out)
    assert "bulk" in html and "small" in html


def test_report_works_on_any_results_dir(tmp_path):
    """The report reads only the schema, so results of another backend work too."""
    raw, _ = fake_finish(n_samples=300, flows=("x", "y", "z"), links=("l1",))
    results.write_results(tmp_path / "r", *tables(raw))
    r = run_cli("report", tmp_path / "r")
    assert r.returncode == 0, r.stderr
    html = _check_report(tmp_path / "r").lower()
    for name in ("x", "y", "z", "l1", "fake"):
        assert f">{name}<" in html


def test_report_with_many_flows(tmp_path):
    raw, _ = fake_finish(n_samples=100, flows=tuple(f"f{i}" for i in range(25)),
                         links=tuple(f"l{i}" for i in range(10)))
    results.write_results(tmp_path / "r", *tables(raw))
    make_report(tmp_path / "r")
    _check_report(tmp_path / "r")


def test_flow_throughput_of_a_constant_rate():
    import numpy as np

    t = np.arange(1, 301) * 0.01  # 3 s of 10 ms samples
    b = t * 1.25e6  # 10 Mbit/s
    mid, mbps = flow_throughput(t, b, window_s=0.1)
    assert len(mid) == 29
    assert mbps == pytest.approx(np.full(29, 10.0))
