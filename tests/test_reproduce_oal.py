"""`rove reproduce oal` end to end: the quick study writes a well-formed report in which every
experiment ran and states its claims, each with a verdict ("not measured" allowed: the quick
runs are short), and the controllers' reports reach summary.json;
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
    # the report's introduction describes the cell from its keys (802.11n, A-MPDU on)
    assert net.describe_cell() == "802.11n with Minstrel, A-MPDU aggregation, 30-packet DropTail queues"


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


def _table4(f_by_classifier: dict[str, list[float]], recall_only_good: set[str] = frozenset()):
    """One iteration's Table 4 results: every class held out (support 10), F as given, recall
    0 for Acceptable, Poor and Bad where the classifier predicts Good only."""
    from rove.reproduce.oal.tables import CLASSIFIERS

    out = {}
    for name in CLASSIFIERS:
        f = f_by_classifier.get(name, [0.5, 0.5, 0.5, 0.5])
        recall = [1.0, 0.0, 0.0, 0.0] if name in recall_only_good else [0.5, 0.5, 0.5, 0.5]
        out[name] = {"precision": f, "recall": recall, "f": f, "support": [10, 10, 10, 10]}
    return {"table4": out}


def _claims4(results):
    from rove.reproduce.oal.tables import table4_section

    _, claims = table4_section(results)
    return {c.quote: c.verdict for c in claims}


def test_table4_claims_judge_each_class_and_no_majority_class_predictor_wins():
    from rove.reproduce.oal import tables

    good = {"decision_tree": [0.9, 0.3, 0.2, 0.8], "random_forest": [0.9, 0.3, 0.25, 0.8]}
    v = _claims4([_table4(good)])
    assert v["DT and RF are nearly the same"] == HOLDS
    assert v["DT and RF are the best of the five candidates"] == HOLDS     # 0.55 > 0.5
    assert v["Accuracies are high for Good and Bad, low for Acceptable and Poor"] == HOLDS
    # Bad's F low: "high for Good and Bad" does not hold, whatever the mean of Good and Bad
    # (0.98 and 0.30: a mean of 0.64 above Acceptable's and Poor's 0.35).
    skewed = {"decision_tree": [0.98, 0.35, 0.35, 0.30]}
    assert _claims4([_table4(skewed)])[
        "Accuracies are high for Good and Bad, low for Acceptable and Poor"] == FAILS
    # Both trees predict Good only: their agreement and rank say nothing.
    only = {"decision_tree": [0.98, 0.0, 0.0, 0.0], "random_forest": [0.98, 0.0, 0.0, 0.0]}
    v = _claims4([_table4(only, {"decision_tree", "random_forest"})])
    assert v["DT and RF are nearly the same"] == NOT_MEASURED
    assert v["DT and RF are the best of the five candidates"] == NOT_MEASURED
    assert v["Accuracies are high for Good and Bad, low for Acceptable and Poor"] == FAILS
    # A tie with another candidate is not a win.
    tie = {"decision_tree": [0.5, 0.5, 0.5, 0.5], "random_forest": [0.9, 0.3, 0.25, 0.8]}
    assert _claims4([_table4(tie)])["DT and RF are the best of the five candidates"] == PARTLY
    assert tables.CLASSIFIERS[:2] == ("decision_tree", "random_forest")


def test_an_unbounded_change_counts_for_its_sign_only():
    """An iteration whose baseline had no congestion loss (change +∞ when OAL lost some)
    neither decides the claim alone nor is ignored: the finite iterations are judged, and an
    unbounded change against the paper's sign lowers the verdict one step."""
    # Loss cut claim (-25.2 %): two finite iterations that cut loss by about 25 %, one where
    # the baseline lost nothing and OAL did (+inf, against): holds -> partly.
    assert judge_change([-24.0, -26.0, float("inf")], -25.2)[0] == PARTLY
    # The finite iterations going the wrong way: an unbounded one of the paper's sign does not
    # rescue it (it used to decide the claim alone: partly).
    assert judge_change([-10.0, -12.0, float("inf")], 17.5)[0] == FAILS
    # Right sign and size, one unbounded change against: partly.
    assert judge_change([+10.0, +12.0, float("-inf")], 17.5)[0] == PARTLY
    # Throughput gain claim (+17.5 %): an unbounded change with the paper's sign changes nothing.
    assert judge_change([19.0, 20.0, 21.0, float("inf")], 17.5)[0] == HOLDS
    # Two finite changes of the wrong sign are not made partly by one of the right sign.
    assert judge_change([-5.0, -6.0, float("inf")], 17.5)[0] == FAILS
    _, text = judge_change([-24.0, -26.0, float("inf")], -25.2)
    assert "X = 0 < OAL in 1 of 3 iterations (change +∞)" in text
