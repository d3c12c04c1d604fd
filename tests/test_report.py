"""rove report: PNG figures and report.html from a results directory."""

from __future__ import annotations

import pytest
import pandas as pd

from rove import results
from rove.report import FIGURES, flow_throughput, make_report

from conftest import SMALL_SCENARIO, assert_drawn_png, run_cli
from test_results_write import fake_finish, tables

def _check_report(d):
    for name in FIGURES:
        png = d / f"{name}.png"
        assert png.is_file(), png
        assert_drawn_png(png)
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


# --------------------------------------------------------------------------------------------
# What the figures show (issue 21, item 5): read back from the matplotlib objects


def _figure_parts(result, flows=None):
    from rove import report

    flows = flows or report._flow_names(result)
    return report, flows, report.Palette(result, flows), report._by_flow(result)


def _demo(tmp_path):
    """scenarios/demo.toml: Reno over a synthetic cellular trace (a 375 KB buffer)."""
    from pathlib import Path

    out = tmp_path / "demo"
    scen = Path(__file__).resolve().parent.parent / "scenarios" / "demo.toml"
    r = run_cli("run", scen, "-o", out, "-q", "--set", "duration=10s")
    assert r.returncode == 0, r.stderr
    return results.read_results(out)


def test_throughput_shows_goodput_arrival_rate_and_capacity(tmp_path):
    res = _demo(tmp_path)
    report, flows, colors, by_flow = _figure_parts(res)
    fig = report._fig_throughput(res, flows, colors, by_flow)
    top, bottom = fig.axes[:2]
    assert "goodput" in top.get_ylabel() and "arrival rate" in bottom.get_ylabel()
    for ax in (top, bottom):
        labels = [ln.get_label() for ln in ax.get_lines()]
        assert labels == ["reno", "capacity of down"], labels
    # The capacity line is the trace's rate: its mean over the run is the link's mean capacity.
    cap = [ln for ln in top.get_lines() if ln.get_label() == "capacity of down"][0]
    q = res.queue[res.queue["link"] == "down"]
    mean_mbps = q["capacity_bytes"].iloc[-1] * 8 / q["time_s"].iloc[-1] / 1e6
    assert abs(cap.get_ydata().mean() - mean_mbps) < 0.05 * mean_mbps


def test_arrival_rate_does_not_spike_when_a_hole_fills(tmp_path):
    import numpy as np

    # Slow start overshoots the trace's capacity and loses a burst; when the retransmissions
    # fill the holes, in-order delivery jumps far above what the link can carry (to ~50 Mbit/s
    # at 2 s); arrivals never exceed the capacity of the window 20 ms earlier (the propagation
    # delay), whatever 100 ms window is taken.
    res = _demo(tmp_path)
    ts, q = res.timeseries, res.queue[res.queue["link"] == "down"]
    _, goodput = flow_throughput(ts["time_s"].to_numpy(), ts["bytes_delivered"].to_numpy())
    _, capacity = flow_throughput(q["time_s"].to_numpy(), q["capacity_bytes"].to_numpy())
    t = ts["time_s"].to_numpy()
    received = ts["bytes_received"].to_numpy(dtype=float)
    cap = np.interp(t, q["time_s"].to_numpy(), q["capacity_bytes"].to_numpy())
    # samples every 10 ms: a window is 10 samples, the delay 2
    arrived = received[12:] - received[2:-10]
    offered = cap[10:-2] - cap[:-12]
    assert (arrived <= offered + 1500).all(), (arrived - offered).max()
    assert goodput.max() > capacity.max()


def test_more_than_ten_flows_are_coloured_and_listed_by_algorithm(tmp_path):
    import pandas as pd  # noqa: F401  (the report reads through pandas)

    raw, _ = fake_finish(n_samples=50, flows=tuple(f"f{i}" for i in range(12)), links=("l1",))
    results.write_results(tmp_path / "r", *tables(raw))
    res = results.read_results(tmp_path / "r")
    for i, f in enumerate(res.summary["flows"]):
        f["cc"] = "cubic" if i < 8 else "bbr"
    report, flows, colors, by_flow = _figure_parts(res)
    assert colors.by_cc and colors.legend_items() == 2
    assert colors["f0"] == colors["f7"] != colors["f8"]
    labels = sorted(v for v in colors.label.values() if v)
    assert labels == ["bbr (4 flows)", "cubic (8 flows)"]
    few = report.Palette(res, flows[:3])
    assert not few.by_cc and len({few[f] for f in flows[:3]}) == 3


def test_multipath_subflows_are_labelled_with_their_links(tmp_path):
    from pathlib import Path

    out = tmp_path / "mp"
    scen = Path(__file__).resolve().parent.parent / "scenarios" / "multipath" / "wifi-lte.toml"
    r = run_cli("run", scen, "-o", out, "-q", "--set", "duration=5s")
    assert r.returncode == 0, r.stderr
    res = results.read_results(out)
    report, flows, colors, by_flow = _figure_parts(res)
    fig = report._fig_flow_metric(res, flows, colors, by_flow, "srtt_ms", "srtt", "RTT")
    labels = [ln.get_label() for ln in fig.axes[0].get_lines()]
    paths = [",".join(sf["path"]) for f in res.summary["flows"] for sf in f.get("subflows") or []]
    assert paths and all(any(f"({p})" in lab for lab in labels) for p in paths), labels
    fig = report._fig_multipath(res)
    labels = [ln.get_label() for ln in fig.axes[0].get_lines()]
    assert all(any(f"({p})" in lab for lab in labels) for p in paths), labels


def test_report_options_window_flows_and_output(write_scenario, tmp_path):
    res_dir = tmp_path / "res"
    r = run_cli("run", write_scenario(SMALL_SCENARIO + "count = 2\n"), "-o", res_dir, "-q")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "rep"
    r = run_cli("report", res_dir, "-o", out, "--from", "0.5s", "--to", "1.5s", "--flows", "bulk.2")
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").is_file() and not (res_dir / "report.html").exists()
    from rove import report

    res = report._restricted(results.read_results(res_dir), (0.5, 1.5))
    assert res.timeseries["time_s"].between(0.5, 1.5).all()
    bad = run_cli("report", res_dir, "--flows", "nope")
    assert bad.returncode == 2 and "no flow named 'nope'" in bad.stderr and "bulk.1" in bad.stderr


def test_each_runs_three_algorithms_and_report_compares_them(write_scenario, tmp_path):
    s = write_scenario(SMALL_SCENARIO)
    out = tmp_path / "each"
    r = run_cli("run", s, "--each", "flows.*.cc=cubic,bbr,bbr2plus", "-o", out)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (out / "runs").iterdir()) == [
        "cc=bbr,seed=7", "cc=bbr2plus,seed=7", "cc=cubic,seed=7"]
    r = run_cli("report", out)
    assert r.returncode == 0, r.stderr
    assert_drawn_png(out / "comparison.png")
    html = (out / "report.html").read_text()
    for cc in ("cubic", "bbr", "bbr2plus"):
        assert f"<td>{cc}</td>" in html
    import pandas as pd

    from rove.sweep_report import scheme_table

    table, panel_keys, schemes = scheme_table(pd.read_parquet(out / "summary.parquet"))
    assert sorted(schemes) == ["bbr", "bbr2plus", "cubic"] and panel_keys == []
    per_run = {p.name.split(",")[0][3:]: results.read_results(p).summary["flows"][0]
               for p in (out / "runs").iterdir()}
    for _, row in table.iterrows():  # one seed, one flow: the table is the runs' own numbers
        assert row["goodput_mbps"] == pytest.approx(per_run[row["scheme"]]["goodput_mbps"])


def test_report_of_several_results_directories_uses_their_names(write_scenario, tmp_path):
    s = write_scenario(SMALL_SCENARIO)
    for cc in ("reno", "cubic"):
        assert run_cli("run", s, "-o", tmp_path / cc, "-q", "--set", f"flows.0.cc={cc}").returncode == 0
    r = run_cli("report", tmp_path / "reno", tmp_path / "cubic")
    assert r.returncode == 2 and "-o OUT" in r.stderr
    r = run_cli("report", tmp_path / "reno", tmp_path / "cubic", "-o", tmp_path / "cmp")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "cmp" / "report.html").read_text()
    assert "<td>reno</td>" in html and "<td>cubic</td>" in html


def test_the_figure_check_fails_on_figures_that_show_nothing(tmp_path):
    """assert_drawn_png, which the figure tests use instead of the PNG magic bytes: empty axes
    and a blank image fail, the same axes with a line pass."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_xlabel("time (s)")
    fig.savefig(tmp_path / "empty.png")
    ax.plot([0, 1, 2], [0, 2, 1])
    fig.savefig(tmp_path / "line.png")
    plt.close(fig)
    blank = plt.figure(figsize=(6, 4))
    blank.savefig(tmp_path / "blank.png")
    plt.close(blank)
    for name in ("empty.png", "blank.png"):
        with pytest.raises(AssertionError):
            assert_drawn_png(tmp_path / name)
    assert_drawn_png(tmp_path / "line.png")


def test_markdown_page_of_a_sweep_with_cases(tmp_path):
    """`rove report SWEEP_DIR --markdown`: README.md with the sweep's title and description, one
    figure and one table per case in the sweep file's order, skipped cases named; refused for a
    results directory; replaced (stale figures removed) only with --force."""
    (tmp_path / "scenario.toml").write_text(SMALL_SCENARIO)
    (tmp_path / "sweep.toml").write_text(
        'title = "Tiny zoo"\ndescription = "Two algorithms, two buffers."\n'
        'scenario = "scenario.toml"\nseeds = [1, 2]\n[grid]\n"flows.0.cc" = ["reno", "bbr"]\n'
        '[fixed]\nduration = "1s"\n'
        '[cases.zz-deep]\nset = { "links.down.buffer" = "300pkt" }\n'
        '[cases.aa-shallow]\nset = { "links.down.buffer" = "10pkt" }\n'
        '[cases.gone]\nrequires = ["no-such.trace"]\n')
    out, page = tmp_path / "out", tmp_path / "page"
    assert run_cli("sweep", tmp_path / "sweep.toml", "-o", out, "-q").returncode == 0
    r = run_cli("report", out, "-o", page, "--markdown")
    assert r.returncode == 0, r.stderr
    text = (page / "README.md").read_text()
    assert text.startswith("# Tiny zoo\n\nTwo algorithms, two buffers.\n")
    assert text.index("## zz-deep") < text.index("## aa-shallow")  # the file's order
    assert "**gone: skipped**: no-such.trace absent" in text
    for i, case in enumerate(["zz-deep", "aa-shallow"], 1):
        assert f"![{case}](scenario-{i:02d}-{case}.png)" in text
        assert_drawn_png(page / f"scenario-{i:02d}-{case}.png")
    rows = [ln for ln in text.splitlines() if ln.startswith("| reno | 2 | ")]
    assert len(rows) == 2
    # The table's values are the mean over seeds of the runs' summaries.
    df = pd.read_parquet(out / "summary.parquet")
    deep = df[(df["case"] == "zz-deep") & (df["cc"] == "reno")]["goodput_mbps"].mean()
    assert rows[0].split(" | ")[2].split(" ")[0] == f"{deep:.2f}"
    # A second page into the same folder needs --force, and drops the old figures.
    (page / "scenario-99-old.png").write_bytes(b"x")
    assert run_cli("report", out, "-o", page, "--markdown").returncode == 2
    assert run_cli("report", out, "-o", page, "--markdown", "--force").returncode == 0
    assert not (page / "scenario-99-old.png").exists()
    # Not for a results directory.
    run_dir = next((out / "runs").iterdir())
    r = run_cli("report", run_dir, "--markdown")
    assert r.returncode == 2 and "--markdown" in r.stderr and len(r.stderr.splitlines()) == 1
