"""Multipath flows through the Python path: results schema, report, CLI and errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rove
from rove.report import make_report
from rove.results import read_results

ROOT = Path(__file__).resolve().parent.parent
WIFI_LTE = ROOT / "scenarios" / "multipath" / "wifi-lte.toml"
SHARED = ROOT / "scenarios" / "multipath" / "shared-bottleneck.toml"


@pytest.fixture(scope="module")
def wifi_lte(tmp_path_factory):
    out = tmp_path_factory.mktemp("mp") / "wifi-lte"
    return rove.run(str(WIFI_LTE), out=str(out), **{"duration": "5s", "flows.0.size": "2MB"})


def test_summary_has_the_multipath_fields(wifi_lte):
    f = wifi_lte.summary["flows"][0]
    for key in ("scheduler", "coupling", "ofo_mean_bytes", "ofo_max_bytes", "app_delay_mean_ms",
                "app_delay_p50_ms", "app_delay_p95_ms", "app_delay_p99_ms", "app_delay_max_ms",
                "download_time_s",
                "duplicate_segs", "reinjected_segs", "subflows"):
        assert key in f, key
    assert f["scheduler"] == "minrtt" and f["coupling"] == "uncoupled"
    assert f["bytes_delivered"] == 2_000_000
    assert f["download_time_s"] is not None and f["download_time_s"] <= f["fct_s"]
    assert f["app_delay_p50_ms"] <= f["app_delay_p95_ms"] <= f["app_delay_p99_ms"] \
        <= f["app_delay_max_ms"]
    assert [s["path"] for s in f["subflows"]] == [["wifi_down"], ["lte_down"]]
    assert sum(s["share"] for s in f["subflows"]) == pytest.approx(1.0)


def test_timeseries_has_subflow_rows_and_reordering_buffer(wifi_lte):
    ts = wifi_lte.timeseries
    assert {"subflow", "ofo_bytes"} <= set(ts.columns)
    assert sorted(ts["subflow"].unique().tolist()) == [-1, 0, 1]
    own = ts[ts["subflow"] == -1]
    assert own["ofo_bytes"].max() > 0
    # Connection rows count delivered bytes; subflow rows what arrived on each subflow.
    assert own["bytes_delivered"].iloc[-1] == 2_000_000
    subs = ts[ts["subflow"] >= 0].groupby("subflow")["bytes_delivered"].max()
    assert subs.sum() >= 2_000_000


def test_results_and_report_round_trip(wifi_lte):
    back = read_results(wifi_lte.out)
    assert back.summary["flows"][0]["subflows"] == wifi_lte.summary["flows"][0]["subflows"]
    html = make_report(wifi_lte.out)
    assert html.exists() and "mptcp" in html.read_text()
    assert (Path(wifi_lte.out) / "multipath.png").stat().st_size > 10_000
    assert html.read_text().count("<img ") == 6


def test_mixed_single_and_multipath_flows_keep_scenario_order():
    r = rove.run(str(SHARED), **{"duration": "3s"})
    names = [f["name"] for f in r.summary["flows"]]
    assert names == ["mptcp", "tcp"]
    assert "subflows" in r.summary["flows"][0] and "subflows" not in r.summary["flows"][1]
    tcp = r.timeseries[r.timeseries["flow"] == "tcp"]
    assert (tcp["subflow"] == -1).all() and (tcp["ofo_bytes"] == 0).all()


def test_validate_describes_multipath_flows():
    info = rove.validate(str(WIFI_LTE), **{"flows.0.scheduler": "blest"})
    assert info["flows"][0]["subflows"] == 2 and info["flows"][0]["scheduler"] == "blest"


@pytest.mark.parametrize("key,value,message", [
    ("flows.0.scheduler", "fastest", "accepted: minrtt, roundrobin, redundant, blest, ecf, bccps, tsc"),
    ("flows.0.coupling", "lia", "accepted: auto, uncoupled, connection"),
    ("flows.0.paths.1.path", ["nowhere"], "flows[0].paths[1].path[0]"),
])
def test_bad_multipath_keys_are_named(key, value, message):
    with pytest.raises(rove.ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
        rove.validate(str(WIFI_LTE), **{key: value})


def test_cli_prints_subflows(tmp_path):
    out = tmp_path / "r"
    proc = subprocess.run([sys.executable, "-m", "rove.cli", "run", str(WIFI_LTE), "-o", str(out),
                           "--set", "duration=2s"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "subflow 0 (wifi_down)" in proc.stdout and "subflow 1 (lte_down)" in proc.stdout
    assert json.loads((out / "summary.json").read_text())["flows"][0]["scheduler"] == "minrtt"
