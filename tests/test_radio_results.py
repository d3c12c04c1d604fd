"""radio.parquet: a WiFi cell's counters (seed-004 Table 1) as a time series in the results
directory, its last rows equal to the link's ``radio`` totals in summary.json (issue 14 item 6;
the columns are documented in docs/results.md)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

import rove
from rove.results import RADIO_FILE, read_results

CELL = {
    "duration": "3s",
    "seed": 3,
    "links": {
        "air": {
            "kind": "wifi",
            "mcs": 7,
            "edca": True,
            "aqm": "codel",
            "sample_interval": "4ms",
            "buffer": "200pkt",
            "stations": {"s1": {"snr": "30dB"}, "s2": {"snr": "14dB", "ac": "vi"}},
        },
        "wan": {"rate": "1Gbps", "delay": "10ms"},
        "wan_up": {"rate": "1Gbps", "delay": "10ms"},
    },
    "flows": [
        {"name": "d1", "cc": "cubic", "path": ["wan", "air:s1"], "ack_path": ["air:s1:up", "wan_up"]},
        {"name": "d2", "cc": "cubic", "path": ["wan", "air:s2"], "ack_path": ["air:s2:up", "wan_up"]},
    ],
}

COLUMNS = [
    "time_s", "link", "port", "station", "direction", "ac", "backlog_bytes", "qlen",
    "overflow_drops", "codel_drops", "mac_drops", "requeues", "tx_packets", "tx_bytes",
    "tx_retries", "collisions", "phy_errors", "internal_collisions", "tx_bitrate_bps",
    "signal_db", "survey_busy_ms", "survey_tx_ms", "survey_rx_ms", "airtime_ms",
]

COUNTERS = ["tx_packets", "tx_bytes", "tx_retries", "mac_drops", "overflow_drops", "codel_drops",
            "requeues", "collisions", "phy_errors", "internal_collisions"]


def test_radio_parquet_columns_and_totals_equal_the_summary(tmp_path):
    out = tmp_path / "run"
    rove.run(CELL, out=out)
    table = pq.read_table(out / RADIO_FILE)
    assert table.column_names == COLUMNS
    df = table.to_pandas()
    # 4 ms sampling over 3 s: 750 samples of 4 ports, the last at the end of the run.
    assert len(df) == 750 * 4
    times = sorted(df.time_s.unique())
    assert abs(times[1] - times[0] - 0.004) < 1e-12 and times[-1] == 3.0
    assert list(df.port[:4]) == ["s1", "s1:up", "s2", "s2:up"]
    assert list(df.ac[:4]) == ["be", "be", "vi", "vi"]
    summary = json.loads((out / "summary.json").read_text())
    radio = next(l for l in summary["links"] if l["name"] == "air")["radio"]
    last = df[df.time_s == 3.0].set_index("port")
    for p in radio["ports"]:
        for key in COUNTERS:
            assert last.loc[p["port"], key] == p[key], (p["port"], key)
    for key in ("overflow_drops", "codel_drops", "mac_drops", "requeues"):
        assert last[key].sum() == radio[key], key
    for key in ("survey_busy_ms", "survey_tx_ms", "survey_rx_ms"):
        assert (last[key] == radio[key]).all(), key
    # The counters only grow; the survey's busy time covers tx and rx, below the run's length.
    for port, rows in df.groupby("port"):
        assert rows.tx_packets.is_monotonic_increasing, port
    assert radio["survey_tx_ms"] + radio["survey_rx_ms"] <= radio["survey_busy_ms"] + 1e-9
    assert radio["survey_busy_ms"] <= 3000.0
    # s2 at 14 dB with MCS 7 loses frames to PHY errors; its MAC drops are not queue drops.
    assert radio["ports"][2]["phy_errors"] > 0
    link = next(l for l in summary["links"] if l["name"] == "air")
    assert link["mac_drops"] == radio["mac_drops"]
    # Each port's airtime is within the channel's busy time; the download's data frames (1500 B
    # at 54 Mbit/s: 248 us each, 20 us preamble plus 57 symbols) take at least that per frame.
    for _, row in last.iterrows():
        assert 0 <= row.airtime_ms <= row.survey_busy_ms + 1e-9
    assert last.loc["s1", "airtime_ms"] >= last.loc["s1", "tx_packets"] * 0.248 - 1e-6
    # The results reader gives the table back.
    res = read_results(out)
    assert list(res.radio.columns) == COLUMNS


def test_no_radio_file_without_a_radio_cell(tmp_path):
    out = tmp_path / "run"
    r = rove.run({"duration": "1s", "links": {"l": {"rate": "10Mbps", "delay": "10ms"}},
                  "flows": [{"path": ["l"], "ack_path": ["l"]}]}, out=out)
    assert not (out / RADIO_FILE).exists()
    assert r.radio is None


def test_same_seed_same_radio_bytes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    rove.run(CELL, out=a)
    rove.run(CELL, out=b)
    assert (a / RADIO_FILE).read_bytes() == (b / RADIO_FILE).read_bytes()


def test_each_sweep_point_has_its_radio_parquet(tmp_path):
    """A sweep over a WiFi cell writes each point's radio.parquet beside its summary, as
    ``rove run`` does: the same columns, its last rows equal to the point's radio totals."""
    import tomli_w

    (tmp_path / "cell.toml").write_text(tomli_w.dumps(CELL))
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('scenario = "cell.toml"\nrepetitions = 2\n[fixed]\nduration = "1s"\n')
    rove.sweep(sweep, tmp_path / "out", jobs=1)
    runs = sorted((tmp_path / "out" / "runs").iterdir())
    assert len(runs) == 2
    for run in runs:
        table = pq.read_table(run / RADIO_FILE)
        assert table.column_names == COLUMNS
        df = table.to_pandas()
        summary = json.loads((run / "summary.json").read_text())
        radio = next(l for l in summary["links"] if l["name"] == "air")["radio"]
        last = df[df.time_s == df.time_s.max()].set_index("port")
        assert df.time_s.max() == 1.0
        for p in radio["ports"]:
            assert last.loc[p["port"], "tx_packets"] == p["tx_packets"], (run.name, p["port"])


def test_the_report_draws_the_radio_figure_only_with_a_radio_cell(tmp_path):
    from rove.report import make_report

    out = tmp_path / "run"
    rove.run(CELL, out=out)
    page = make_report(out)
    assert (out / "radio.png").stat().st_size > 10_000
    assert "radio.png" in page.read_text()
    # A time window cuts radio.parquet's rows too.
    make_report(out, out=tmp_path / "window", window=(1.0, 2.0))
    assert (tmp_path / "window" / "radio.png").exists()
    plain = tmp_path / "plain"
    rove.run({"duration": "1s", "links": {"l": {"rate": "10Mbps", "delay": "10ms"}},
              "flows": [{"path": ["l"], "ack_path": ["l"]}]}, out=plain)
    make_report(plain)
    assert not (plain / "radio.png").exists()
