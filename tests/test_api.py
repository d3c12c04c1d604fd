"""The Python API: rove.run / rove.validate, overrides, and the results schema."""

from __future__ import annotations

import json
import math
import tomllib

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import rove
from rove.cli import parse_value
from rove.results import QUEUE_COLUMNS, TIMESERIES_COLUMNS, read_results
from rove.units import UnitError, parse_time_ns

from conftest import SMALL_SCENARIO, small_scenario_dict

SUMMARY_KEYS = ["scenario", "backend", "duration_s", "seed", "wall_s", "events", "flows", "links",
                "jain_index"]
FLOW_KEYS = ["name", "cc", "goodput_mbps", "throughput_mbps", "mean_rtt_ms", "p95_rtt_ms",
             "retrans_rate", "fct_s", "start_s", "bytes_delivered"]
LINK_KEYS = ["name", "utilization", "mean_queue_delay_ms", "p95_queue_delay_ms", "drops",
             "queue_drops", "loss_drops"]


# ----------------------------------------------------------------------------- native module


def test_native_module_exports():
    assert "reno" in rove.CC_NAMES
    assert set(rove.SYNTH_KINDS) >= {"constant", "steps", "cellular"}
    assert issubclass(rove.ScenarioError, ValueError)


# ----------------------------------------------------------------------------- run(dict)


@pytest.fixture(scope="module")
def dict_run():
    return rove.run(small_scenario_dict())


def test_run_dict_returns_contract_frames(dict_run):
    r = dict_run
    assert r.out is None
    assert isinstance(r.timeseries, pd.DataFrame) and isinstance(r.queue, pd.DataFrame)
    assert list(r.timeseries.columns)[: len(TIMESERIES_COLUMNS)] == list(TIMESERIES_COLUMNS)
    assert list(r.queue.columns)[: len(QUEUE_COLUMNS)] == list(QUEUE_COLUMNS)
    # 2 s at the default 10 ms sample interval, one flow, two links
    assert 150 <= len(r.timeseries) <= 201
    assert set(r.timeseries["flow"].astype(str)) == {"bulk"}
    assert set(r.queue["link"].astype(str)) == {"down", "up"}
    assert (np.diff(r.timeseries["bytes_delivered"].to_numpy().astype(np.int64)) >= 0).all()
    q = r.queue
    assert q["sojourn_count"].sum() > 0
    # A row's mean and maximum are NaN exactly when no packet left the queue since the last one.
    empty = q["sojourn_count"] == 0
    assert (q["sojourn_mean_ms"].isna() == empty).all() and (q["sojourn_max_ms"].isna() == empty).all()
    assert (q["sojourn_max_ms"][~empty] >= q["sojourn_mean_ms"][~empty]).all()
    # The summary's distribution covers the same packets: its maximum is the rows' largest.
    for link in r.summary["links"]:
        rows = q[q["link"].astype(str) == link["name"]]
        if rows["sojourn_count"].sum():
            assert link["max_queue_delay_ms"] == rows["sojourn_max_ms"].max()
            pct = link["queue_delay_percentiles_ms"]
            assert len(pct) == 101 and pct == sorted(pct) and pct[-1] == link["max_queue_delay_ms"]


def test_run_dict_summary_keys_and_order(dict_run):
    s = dict_run.summary
    for k in SUMMARY_KEYS:
        assert k in s, k
    keys = list(s)
    assert keys.index("wall_s") == keys.index("seed") + 1
    assert s["backend"] == "sim"
    assert s["scenario"] == "small-dict"
    assert s["seed"] == 3
    assert s["duration_s"] == pytest.approx(2.0)
    assert s["wall_s"] > 0
    assert len(s["flows"]) == 1 and len(s["links"]) == 2
    for k in FLOW_KEYS:
        assert k in s["flows"][0], k
    for k in LINK_KEYS:
        assert k in s["links"][0], k
    # a 20 Mbit/s link with a 100-packet buffer is filled by one bulk flow within 2 s
    assert 5 < s["flows"][0]["goodput_mbps"] <= 20.0
    assert s["flows"][0]["fct_s"] is None


def test_run_result_helpers(dict_run):
    assert list(dict_run.flows["name"]) == ["bulk"]
    assert list(dict_run.links["name"]) == ["down", "up"]
    assert "small-dict" in repr(dict_run)


def test_run_writes_results_that_read_back(tmp_path):
    out = tmp_path / "res"
    r = rove.run(small_scenario_dict(), out=out, seed=11)
    assert r.out == out
    assert sorted(p.name for p in out.iterdir()) == ["queue.parquet", "summary.json",
                                                      "timeseries.parquet"]
    text = (out / "summary.json").read_text()
    assert text.endswith("}\n") and text.startswith("{\n  \"")
    on_disk = json.loads(text)
    assert on_disk == r.summary
    assert on_disk["seed"] == 11
    back = read_results(out)
    pd.testing.assert_frame_equal(back.timeseries, r.timeseries)
    assert list(back.queue.columns) == list(r.queue.columns)
    assert back.queue["link"].astype(str).tolist() == r.queue["link"].astype(str).tolist()


def test_run_path_with_overrides(write_scenario):
    path = write_scenario(SMALL_SCENARIO)
    r = rove.run(path, **{"duration": "1s", "links.down.rate": "10Mbps"})
    assert r.summary["duration_s"] == pytest.approx(1.0)
    assert r.summary["flows"][0]["goodput_mbps"] <= 10.0
    assert r.timeseries["time_s"].max() <= 1.0 + 1e-9


def test_run_count_expands_flows():
    d = small_scenario_dict()
    d["flows"][0]["count"] = 3
    info = rove.validate(d)
    assert [f["name"] for f in info["flows"]] == ["bulk.1", "bulk.2", "bulk.3"]
    r = rove.run(d, duration="1s")
    assert [f["name"] for f in r.summary["flows"]] == ["bulk.1", "bulk.2", "bulk.3"]
    assert list(r.timeseries["flow"].astype(str).unique()) == ["bulk.1", "bulk.2", "bulk.3"]
    assert 0 < r.summary["jain_index"] <= 1.0


def test_validate_path_and_dict(write_scenario):
    info = rove.validate(write_scenario(SMALL_SCENARIO))
    assert info["name"] == "small"
    assert info["duration_s"] == pytest.approx(2.0)
    assert info["seed"] == 7
    assert sorted(info["links"]) == ["down", "up"]
    assert info["flows"] == [{"name": "bulk", "cc": "reno"}]
    assert rove.validate(small_scenario_dict(), seed=5)["seed"] == 5


def test_bad_dict_raises_scenario_error_naming_dict():
    d = small_scenario_dict()
    d["links"]["down"]["rate"] = "-3Mbps"
    with pytest.raises(rove.ScenarioError) as e:
        rove.run(d)
    msg = str(e.value)
    assert msg.startswith("<dict>") and "rate" in msg and "\n" not in msg


def test_bad_override_raises_scenario_error():
    with pytest.raises(rove.ScenarioError) as e:
        rove.validate(small_scenario_dict(), **{"links.down.nonsense": 1})
    assert "nonsense" in str(e.value)


def test_missing_scenario_file_raises_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        rove.run(tmp_path / "nope.toml")


# ----------------------------------------------------------------------------- TOML literals


def test_toml_literal_examples():
    assert rove.toml_literal("10Mbps") == '"10Mbps"'
    assert rove.toml_literal(3) == "3"
    assert rove.toml_literal(0.25) == "0.25"
    assert rove.toml_literal(True) == "true"
    assert rove.toml_literal(["6Mbps", "24Mbps"]) == '["6Mbps", "24Mbps"]'
    assert rove.toml_literal({"period": "2s", "rates": ["1Mbps"]}) == \
        '{ period = "2s", rates = ["1Mbps"] }'
    assert rove.toml_literal(np.float64(0.5)) == "0.5"
    assert rove.toml_literal(np.int64(7)) == "7"
    with pytest.raises(TypeError):
        rove.toml_literal(object())


toml_values = st.recursive(
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(min_size=1, max_size=8), children, max_size=4),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(toml_values)
@example({"0\n": False})  # a key ending in a newline once passed as a bare key
def test_toml_literal_round_trips_through_tomllib(value):
    parsed = tomllib.loads("v = " + rove.toml_literal(value))["v"]
    assert parsed == value


@pytest.mark.parametrize("text,expected", [
    ("10Mbps", "10Mbps"),
    ("0.01", 0.01),
    ("3", 3),
    ("true", True),
    ("inf", "inf"),
    ('"quoted"', "quoted"),
    ('["6Mbps", "24Mbps"]', ["6Mbps", "24Mbps"]),
    ("{ period = '2s', rates = ['1Mbps'] }", {"period": "2s", "rates": ["1Mbps"]}),
    ("250pkt", "250pkt"),
])
def test_cli_value_parsing(text, expected):
    assert parse_value(text) == expected


def _tomllib_value(text: str):
    """What parse_value gave when it read values with Python's tomllib."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except Exception:
        return text


@given(toml_values)
def test_cli_value_parsing_reads_toml_literals_as_tomllib_does(value):
    """parse_value reads a value with the scenario's own TOML parser (Rust, the toml crate,
    rove._core.parse_toml_value) rather than tomllib (a Python import on every `rove run
    --set`): every TOML literal rove writes reads back as tomllib reads it."""
    text = rove.toml_literal(value)
    assert parse_value(text) == _tomllib_value(text) == value


@given(st.text(max_size=12))
@example("1979-05-27")  # a TOML date: tomllib gives a date, parse_value its text
@example("1e400")  # out of f64's range: tomllib gives inf, parse_value the text
@example("9223372036854775808")  # out of i64's range (the engine's integers)
@example("[1, 'a']")
def test_cli_value_parsing_agrees_with_tomllib_on_any_text(text):
    """Any text: a TOML value where tomllib reads one, the text itself where tomllib reads
    none. Where they differ, parse_value keeps the text: a date or time (no scenario key takes
    one), and a number out of the engine's range (an inf or an integer past i64, which the
    engine refused anyway)."""
    import datetime

    def differs(v) -> str | None:  # where parse_value may read v's text otherwise
        if isinstance(v, (datetime.date, datetime.time)):
            return "datetime"
        if (isinstance(v, float) and math.isinf(v)) or (type(v) is int
                                                          and not -2**63 <= v < 2**63):
            return "range"
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
        return next((d for d in map(differs, items) if d), None)

    expected = _tomllib_value(text)
    got = parse_value(text)
    if text.strip().lower() in ("inf", "+inf", "-inf") or differs(expected) is None:
        assert got == expected
    elif differs(expected) == "range":
        assert got == text
    else:  # a date or time reads as its text, alone or inside a list or table
        assert type(got) is (str if differs(expected) and not isinstance(expected, (list, dict))
                             else type(expected)), (got, expected)


# ----------------------------------------------------------------------------- units


@pytest.mark.parametrize("text,ns", [
    ("60s", 60_000_000_000), ("20ms", 20_000_000), ("1.5s", 1_500_000_000), ("2min", 120 * 10**9),
    ("0s", 0), ("250us", 250_000), ("7ns", 7), ("1e3ms", 10**9), ("30S", 30 * 10**9),
    (" 5 ms ", 5_000_000),
])
def test_parse_time(text, ns):
    assert parse_time_ns(text) == ns


@pytest.mark.parametrize("text", ["", "5", "-1s", "ten s", "5 fortnights", "s", "1.2.3s"])
def test_parse_time_rejects(text):
    with pytest.raises(UnitError):
        parse_time_ns(text)


def test_no_nan_in_summary(dict_run):
    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, float):
            assert math.isfinite(v)

    walk(dict_run.summary)
