"""``rove compare``: two results directories side by side with their ratio B/A (issue 5, item 5).

The arithmetic is checked on hand-written summaries; the command on two simulator runs of one
small scenario (two seeds / two buffer sizes), with the expected ratios computed by hand from
the two summary.json files.
"""

from __future__ import annotations

import json
import math

import pytest

import rove
from rove.compare import CompareError, compare, compare_summaries, format_table, ratio

from conftest import assert_drawn_png, run_cli

SCENARIO = {
    "name": "cmp",
    "duration": "3s",
    "seed": 1,
    "links": {
        "down": {"rate": "10Mbps", "delay": "10ms", "buffer": "40pkt", "loss": 0.01},
        "up": {"rate": "100Mbps", "delay": "10ms"},
    },
    "flows": [
        {"name": "bulk", "cc": "cubic", "path": ["down"], "ack_path": ["up"]},
        {"name": "short", "cc": "reno", "path": ["down"], "ack_path": ["up"], "size": "500KB"},
    ],
}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("compare")
    a, b = base / "a", base / "b"
    rove.run(SCENARIO, out=a)
    rove.run(SCENARIO, out=b, seed=7, **{"links.down.buffer": "120pkt"})
    return a, b


def _summary(flows, links=()):
    return {"flows": list(flows), "links": list(links)}


def test_ratio_is_b_over_a_with_the_edge_cases_named():
    assert ratio(10.0, 12.0) == pytest.approx(1.2)
    assert ratio(0, 0) == 1.0  # e.g. no drops on either side
    assert ratio(0, 3) == math.inf
    assert ratio(None, 3) is None and ratio(3, None) is None
    assert ratio(float("nan"), 1.0) is None


def test_rows_hold_hand_computed_ratios():
    sa = _summary([{"name": "f", "cc": "cubic", "goodput_mbps": 8.0, "mean_rtt_ms": 40.0,
                    "p95_rtt_ms": 50.0, "retrans_rate": 0.02, "fct_s": None}],
                  [{"name": "down", "utilization": 0.8, "mean_queue_delay_ms": 10.0,
                    "p95_queue_delay_ms": 20.0, "drops": 0}])
    sb = _summary([{"name": "f", "cc": "cubic", "goodput_mbps": 9.0, "mean_rtt_ms": 44.0,
                    "p95_rtt_ms": 45.0, "retrans_rate": 0.01, "fct_s": None}],
                  [{"name": "down", "utilization": 0.9, "mean_queue_delay_ms": 15.0,
                    "p95_queue_delay_ms": 30.0, "drops": 0},
                   {"name": "extra", "utilization": 0.1}])
    rows, notes = compare_summaries([sa, sb], ["A", "B"])
    got = {(r.name, r.metric): r.ratios[0] for r in rows}
    assert got[("f", "goodput_mbps")] == pytest.approx(1.125)
    assert got[("f", "mean_rtt_ms")] == pytest.approx(1.1)
    assert got[("f", "p95_rtt_ms")] == pytest.approx(0.9)
    assert got[("f", "retrans_rate")] == pytest.approx(0.5)
    assert got[("f", "fct_s")] is None
    assert got[("down", "mean_queue_delay_ms")] == pytest.approx(1.5)
    assert got[("down", "drops")] == 1.0
    assert not any(r.name == "extra" for r in rows)
    assert notes == ["links only in B (not compared): extra"]
    table = format_table(rows, ["A", "B"])
    assert "1.125" in table and "0.500" in table and "B/A" in table


def test_flows_are_matched_by_name_not_position():
    fa = [{"name": "x", "goodput_mbps": 1.0}, {"name": "y", "goodput_mbps": 4.0}]
    fb = [{"name": "y", "goodput_mbps": 2.0}, {"name": "x", "goodput_mbps": 3.0}]
    rows, _ = compare_summaries([_summary(fa), _summary(fb)], ["A", "B"])
    got = {(r.name, r.metric): r.ratios[0] for r in rows}
    assert got[("x", "goodput_mbps")] == pytest.approx(3.0)
    assert got[("y", "goodput_mbps")] == pytest.approx(0.5)


def test_different_flow_names_are_an_error_naming_them():
    with pytest.raises(CompareError) as e:
        compare_summaries([_summary([{"name": "a"}, {"name": "b"}]),
                           _summary([{"name": "a"}, {"name": "c"}])], ["dirA", "dirB"])
    msg = str(e.value)
    assert "only in dirA: b" in msg and "only in dirB: c" in msg and "\n" not in msg


def test_cli_prints_both_runs_and_their_ratios(two_runs):
    a, b = two_runs
    sa = json.loads((a / "summary.json").read_text())
    sb = json.loads((b / "summary.json").read_text())
    res = run_cli("compare", a, b)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert f"{a.name} = {a} (sim backend" in out and f"{b.name} = {b} (sim backend" in out
    for f in ("bulk", "short"):
        fa = next(x for x in sa["flows"] if x["name"] == f)
        fb = next(x for x in sb["flows"] if x["name"] == f)
        expected = fb["goodput_mbps"] / fa["goodput_mbps"]
        line = next(ln for ln in out.splitlines() if ln.split()[:1] == [f])
        assert "goodput" in line and line.split()[-1] == f"{expected:.3f}", line
    # the short flow finished on both sides: its FCT ratio is printed
    fct_a = next(x for x in sa["flows"] if x["name"] == "short")["fct_s"]
    fct_b = next(x for x in sb["flows"] if x["name"] == "short")["fct_s"]
    assert fct_a and fct_b
    assert f"{fct_b / fct_a:.3f}" in out
    drops_a = next(x for x in sa["links"] if x["name"] == "down")["drops"]
    drops_b = next(x for x in sb["links"] if x["name"] == "down")["drops"]
    assert drops_a > 0
    drop_line = next(ln for ln in out.splitlines() if ln.strip().startswith("drops"))
    assert drop_line.split()[-1] == f"{drops_b / drops_a:.3f}"


def test_cli_out_writes_figures_and_documents(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "cmp"
    res = run_cli("compare", a, b, "-o", out)
    assert res.returncode == 0, res.stderr
    for name in ("goodput.png", "cwnd.png", "rtt.png", "queue_sojourn_cdf.png", "compare.md",
                 "compare.html", "compare.json"):
        assert (out / name).stat().st_size > 0, name
        if name.endswith(".png"):
            assert_drawn_png(out / name)
    doc = json.loads((out / "compare.json").read_text())
    assert {r["name"] for r in doc["rows"] if r["kind"] == "flow"} == {"bulk", "short"}
    md = (out / "compare.md").read_text()
    assert "| bulk | goodput (Mbit/s) |" in md and "![Goodput over time](goodput.png)" in md
    assert "data:image/png;base64," in (out / "compare.html").read_text()


def test_api_returns_the_rows(two_runs):
    a, b = two_runs
    c = compare([a, b])
    assert c.files == []
    assert {(r.kind, r.name) for r in c.rows} >= {("flow", "bulk"), ("link", "down")}


def test_missing_directory_exits_2_with_one_line(two_runs, tmp_path):
    a, _ = two_runs
    res = run_cli("compare", a, tmp_path / "nope")
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("rove: error: ")
    assert "nope: no such results directory" in res.stderr


def test_mismatched_flows_exit_2_with_one_line_listing_them(two_runs, tmp_path):
    a, _ = two_runs
    other = dict(SCENARIO, flows=[dict(SCENARIO["flows"][0], name="other")])
    rove.run(other, out=tmp_path / "c")
    res = run_cli("compare", a, tmp_path / "c")
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert "flows differ" in res.stderr
    assert "bulk" in res.stderr and "short" in res.stderr and "other" in res.stderr


def test_the_table_and_figures_name_the_directories(tmp_path):
    from rove.compare import labels

    assert labels(tmp_path / "cubic", tmp_path / "bbr") == ["cubic", "bbr"]
    # the same name in two places: the paths tell them apart
    assert labels(tmp_path / "a" / "run", tmp_path / "b" / "run") == [
        str(tmp_path / "a" / "run"), str(tmp_path / "b" / "run")]


def test_three_directories_each_against_the_first(two_runs, tmp_path):
    a, b = two_runs
    c = tmp_path / "third"
    rove.run(dict(SCENARIO, seed=99), out=c)
    sc = [json.loads((d / "summary.json").read_text()) for d in (a, b, c)]
    res = run_cli("compare", a, b, c, "-o", tmp_path / "cmp3")
    assert res.returncode == 0, res.stderr
    head = next(ln for ln in res.stdout.splitlines() if ln.startswith("flow "))
    assert head.split() == ["flow", "metric", a.name, b.name, "third", f"{b.name}/{a.name}",
                            f"third/{a.name}"]
    line = next(ln for ln in res.stdout.splitlines() if ln.split()[:1] == ["bulk"])
    g = [next(f for f in s["flows"] if f["name"] == "bulk")["goodput_mbps"] for s in sc]
    assert line.split()[-2:] == [f"{g[1] / g[0]:.3f}", f"{g[2] / g[0]:.3f}"]
    doc = json.loads((tmp_path / "cmp3" / "compare.json").read_text())
    assert doc["names"] == [a.name, b.name, "third"]
    row = next(r for r in doc["rows"] if r["name"] == "bulk" and r["metric"] == "goodput_mbps")
    assert row["values"] == pytest.approx(g) and len(row["ratios"]) == 2
    assert run_cli("compare", a).returncode == 2  # one directory is not a comparison
