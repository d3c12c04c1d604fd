"""`rove reproduce oal` end to end: the quick study writes a well-formed report in which every
experiment ran and every claim was judged, and the controllers' reports reach summary.json;
and the verdict logic on hand-made numbers (the paired percent changes, their criterion, the
network read from the scenario).

Measured: the quick run takes about 36 s of CPU (55 s of wall time on the project's 2-core
machine shared with other jobs, with the trigger ablation), most of it the Tables 4 and 6
models."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import quick_study_report
from rove.reproduce import oal as study
from rove.reproduce.oal.common import (BBR, NETWORK, OAL, judge_change, network, paired_changes,
                                       SCENARIO)
from rove.reproduce.verdicts import FAILS, HOLDS, NOT_MEASURED, PARTLY


def test_quick_oal_study_writes_a_complete_report(tmp_path):
    out = tmp_path / "oal"
    doc = quick_study_report("oal", out, len(study.EXPERIMENTS),
                             files=("report.md", "report.html", "schemes-iterations.png"))
    sections = doc["sections"]
    # Every scheme's run carries one OAL report per AP (summary.json's `controllers`).
    runs = sorted((out / "schemes" / "main").glob("*/it1/runs/*/summary.json"))
    assert len(runs) == 4
    for path in runs:
        reports = json.loads(path.read_text())["controllers"]
        assert [r["kind"] for r in reports] == ["oal"] * len(NETWORK.aps)
        assert all(r["report"]["ticks"] > 0 for r in reports)
    # rove's ablation (not counted): the observed-class trigger reaches its runs' controllers
    # and acts (OAL itself acted in no tick of the quick runs when this was written).
    observed = sorted((out / "trigger" / "main" / "oal-observed").glob("it*/runs/*/summary.json"))
    assert len(observed) == 2
    for path in observed:
        reports = json.loads(path.read_text())["controllers"]
        assert sum(r["report"]["acting_ticks"] for r in reports) > 0, path
    trigger = next(s for s in sections if s["title"].startswith("Predictor or enforcement"))
    assert trigger["counted"] is False


def test_the_network_is_read_from_the_scenario():
    net = network(SCENARIO)
    assert len(net.flow_ap) == 9
    assert set(net.flow_ap.values()) == set(net.aps)
    assert len(net.controller_ap) == len(net.aps)


def test_three_aps_on_one_channel_are_read_per_station_and_controller(tmp_path):
    # The multi-AP cell's syntax (`aps`, each station's `ap`, each controller's `ap`).
    text = ['duration = "10s"', '[links.wan]', 'rate = "100Mbps"',
            '[links.air]', 'kind = "wifi"', 'aps = ["ap1", "ap2", "ap3"]']
    for i in range(1, 10):
        text += [f"[links.air.stations.s{i}]", f'ap = "ap{(i - 1) // 3 + 1}"']
    for i in range(1, 10):
        text += ["[[flows]]", f'name = "s{i}"', f'path = ["wan", "air:s{i}"]']
    for k in (1, 2, 3):
        text += ["[[controllers]]", 'kind = "oal"', 'link = "air"', f'ap = "ap{k}"']
    path = tmp_path / "three-aps.toml"
    path.write_text("\n".join(text) + "\n")
    net = network(path)
    assert net.aps == ["ap1", "ap2", "ap3"]
    assert net.flow_ap["s1"] == "ap1" and net.flow_ap["s5"] == "ap2" and net.flow_ap["s9"] == "ap3"
    assert net.controller_ap == ["ap1", "ap2", "ap3"]


def _runs(metric: str, oal: list[float], bbr: list[float]) -> pd.DataFrame:
    rows = [{"setting": f"it{k}", "series": key, metric: v}
            for key, vs in ((OAL.key, oal), (BBR.key, bbr)) for k, v in enumerate(vs)]
    return pd.DataFrame(rows)


def test_paired_changes_are_per_iteration_percentages():
    runs = _runs("tput_mbps", [12.0, 11.0, 9.0], [10.0, 10.0, 10.0])
    assert paired_changes(runs, "tput_mbps", OAL.key, BBR.key) == pytest.approx([20, 10, -10])
    # A baseline without congestion losses: 0 against 0, +inf against any.
    runs = _runs("loss_ratio", [0.0, 0.01], [0.0, 0.0])
    assert paired_changes(runs, "loss_ratio", OAL.key, BBR.key) == [0.0, float("inf")]


def test_a_change_holds_with_the_papers_sign_size_and_beyond_its_standard_error():
    # mean +20 %, s.d. 1: within a factor 2 of +17.5 and far from 0.
    assert judge_change([19.0, 20.0, 21.0], 17.5)[0] == HOLDS
    # Right sign, too small (1 % against 17.5 %): partly.
    assert judge_change([0.5, 1.0, 1.5], 17.5)[0] == PARTLY
    # Right sign and size, within one standard error of 0 (mean 10, s.d. 30, s.e. 17.3).
    assert judge_change([40.0, 10.0, -20.0], 17.5)[0] == PARTLY
    # The other sign.
    assert judge_change([-5.0, -6.0], 17.5)[0] == FAILS
    # Lower is better: the same rule with the paper's negative number.
    assert judge_change([-25.0, -35.0], -30.0)[0] == HOLDS
    # OAL lost packets where the baseline lost none: the other direction than a cut.
    assert judge_change([0.0, float("inf")], -25.2)[0] == FAILS
    assert judge_change([12.0], 17.5)[0] == NOT_MEASURED
