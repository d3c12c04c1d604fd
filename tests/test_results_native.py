"""The results files written from Rust (crates/results: from the engine's tables through
rove._core.Simulation.write_table, from Python columns through rove._core.write_parquet).

`rove run` writes its Parquet files without numpy, pandas or pyarrow; what pyarrow reads back
must equal what the previous pyarrow writer wrote for the same engine columns (values, types,
dictionary columns and their dictionaries, column order), byte-deterministically, and the
engine's own tables must give the bytes the Python-side columns give.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rove
from rove import _core, results
from rove.results import (
    FEATURES_COLUMNS,
    QUEUE_COLUMNS,
    TIMESERIES_COLUMNS,
    NativeTable,
    RawTable,
    columns_to_table,
    read_results,
)

ROOT = Path(__file__).resolve().parents[1]

# Two flows (one multipath, so subflow rows and ofo_bytes), a lossy link (NaN sojourn means on
# empty samples), and two feature recorders: a run that touches every column kind.
SCENARIO = """
name = "native-writer"
duration = "3s"
seed = 7
sample_interval = "50ms"
[links.a]
rate = "20Mbps"
delay = "15ms"
buffer = "60pkt"
loss = 0.001
[links.b]
rate = "10Mbps"
delay = "30ms"
buffer = "80pkt"
[links.up]
rate = "1Gbps"
delay = "15ms"
[[flows]]
name = "single"
cc = "cubic"
path = ["a"]
ack_path = ["up"]
[[flows]]
name = "multi"
cc = "cubic"
paths = [
  { path = ["a"], ack_path = ["up"] },
  { path = ["b"], ack_path = ["up"] },
]
start = "0.5s"
[[controllers]]
kind = "features"
every = "100ms"
flow = "single"
[[controllers]]
kind = "features"
every = "250ms"
flow = "multi"
"""


def _old_writer(table: pa.Table, path: Path) -> None:
    """The pyarrow writer rove used before the Rust one (results.py, _PARQUET_OPTIONS)."""
    pq.write_table(table, str(path), compression="zstd", compression_level=3, use_dictionary=True,
                   write_statistics=True, version="2.6", data_page_version="1.0")


def _old_features_table(logs) -> pa.Table:
    """The previous features.parquet conversion (rove/__init__.py, _features_table)."""
    tables = []
    for k, cols in enumerate(logs):
        t = columns_to_table(cols, FEATURES_COLUMNS)
        tables.append(t.append_column("controller", pa.array([k] * t.num_rows, pa.int32())))
    return pa.concat_tables(tables, promote_options="default")


def assert_same_table(new: pa.Table, old: pa.Table) -> None:
    """Column order, types (dictionaries included), values (NaN = NaN, nulls where nulls),
    and each dictionary column's dictionary in the same order."""
    assert new.column_names == old.column_names
    assert new.schema.equals(old.schema, check_metadata=False), (new.schema, old.schema)
    for name in new.column_names:
        a, b = new.column(name).combine_chunks(), old.column(name).combine_chunks()
        if pa.types.is_dictionary(a.type):
            assert a.dictionary.to_pylist() == b.dictionary.to_pylist(), name
            assert a.indices.to_pylist() == b.indices.to_pylist(), name
        elif pa.types.is_floating(a.type):
            x, y = a.to_numpy(zero_copy_only=False), b.to_numpy(zero_copy_only=False)
            np.testing.assert_array_equal(x, y, err_msg=name)  # NaN == NaN here
            assert a.is_null().to_pylist() == b.is_null().to_pylist(), name
        else:
            assert a.to_pylist() == b.to_pylist(), name
    pd.testing.assert_frame_equal(new.to_pandas(), old.to_pandas())  # categoricals too


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One run: its raw columns (from the engine) and the results directory rove.run wrote."""
    d = tmp_path_factory.mktemp("native")
    (d / "s.toml").write_text(SCENARIO)
    sim = _core.Simulation(SCENARIO, str(d / "s.toml"), str(d), [], None)
    raw = sim.finish()
    rove.run(d / "s.toml", out=d / "out")
    return raw, d


def test_files_read_back_as_the_pyarrow_writer_wrote_them(run, tmp_path):
    raw, d = run
    for name, columns, order in (("timeseries", raw["timeseries"], TIMESERIES_COLUMNS),
                                 ("queue", raw["queue"], QUEUE_COLUMNS)):
        _old_writer(columns_to_table(columns, order), tmp_path / f"{name}.parquet")
        new = pq.read_table(d / "out" / f"{name}.parquet")
        old = pq.read_table(tmp_path / f"{name}.parquet")
        assert new.num_rows > 50, name
        assert_same_table(new, old)
    ts = pq.read_table(d / "out" / "timeseries.parquet")
    assert list(ts.column_names) == list(TIMESERIES_COLUMNS)
    assert ts.schema.field("flow").type == pa.dictionary(pa.int32(), pa.string())
    assert ts.schema.field("cwnd_pkts").type == pa.uint32()
    assert ts.schema.field("bytes_acked").type == pa.uint64()
    assert ts.schema.field("subflow").type == pa.int32()
    # The dictionary in order of first appearance (not sorted): "single" starts first.
    assert ts.column("flow").chunk(0).dictionary.to_pylist() == ["single", "multi"]
    assert sorted(set(ts.column("subflow").to_pylist())) == [-1, 0, 1]
    q = pq.read_table(d / "out" / "queue.parquet")
    assert q.column("sojourn_mean_ms").to_pandas().isna().any()  # NaN kept, not null
    assert q.column("sojourn_mean_ms").null_count == 0
    # The DataFrames keep their categoricals.
    back = read_results(d / "out")
    assert isinstance(back.timeseries["flow"].dtype, pd.CategoricalDtype)
    assert list(back.timeseries["flow"].cat.categories) == ["single", "multi"]


def test_features_file_equals_the_promoted_concatenation(run, tmp_path):
    raw, d = run
    logs = raw["features"]
    assert len(logs) == 2
    old = _old_features_table(logs)
    _old_writer(old, tmp_path / "features.parquet")
    new = pq.read_table(d / "out" / "features.parquet")
    assert new.column("controller").to_pylist().count(1) == len(logs[1]["mode"])
    # pyarrow's concatenation keeps one dictionary per recorder (chunks); the file has one.
    # What reads back must be the same rows.
    old_back = pq.read_table(tmp_path / "features.parquet")
    assert new.column_names == old_back.column_names
    assert new.to_pandas().equals(old_back.to_pandas())
    assert rove.run(d / "s.toml").features_table.to_pandas().equals(new.to_pandas())


def test_promotion_fills_missing_columns_with_nulls(tmp_path):
    f8 = lambda v: ("<f8", np.asarray(v, dtype="<f8").tobytes())  # noqa: E731
    logs = [
        {"time_s": f8([0.1, 0.2]), "flow": ["a", "a"], "cc": ["cubic", "cubic"],
         "mode": ["x", "y"], "rtt_ms": f8([40.0, 41.0])},
        {"time_s": f8([0.5]), "flow": ["b"], "cc": ["bbr"], "mode": ["z"],
         "loss": f8([0.25])},
    ]
    table = RawTable.from_feature_logs(logs)
    assert table.num_rows == 3
    table.write(tmp_path / "f.parquet")
    new = pq.read_table(tmp_path / "f.parquet")
    assert new.column_names == ["time_s", "flow", "cc", "mode", "rtt_ms", "controller", "loss"]
    assert new.column("rtt_ms").to_pylist() == [40.0, 41.0, None]
    assert new.column("loss").to_pylist() == [None, None, 0.25]
    assert new.column("controller").to_pylist() == [0, 0, 1]
    assert new.schema.field("controller").type == pa.int32()
    assert new.column("flow").to_pylist() == ["a", "a", "b"]
    old = _old_features_table(logs)
    assert new.to_pylist() == old.to_pylist()
    assert table.to_arrow().to_pylist() == old.to_pylist()
    # A column of two types cannot be promoted (pyarrow refuses too).
    logs[1]["rtt_ms"] = ("<u8", np.asarray([1], dtype="<u8").tobytes())
    with pytest.raises(ValueError, match=r'f2\.parquet: column "rtt_ms" is float64 in table 0 '
                                         r'but uint64 in table 1'):
        RawTable.from_feature_logs(logs).write(tmp_path / "f2.parquet")


def test_same_run_same_bytes(run, tmp_path):
    _, d = run
    rove.run(d / "s.toml", out=tmp_path / "again")
    for f in ("timeseries.parquet", "queue.parquet", "features.parquet"):
        assert (d / "out" / f).read_bytes() == (tmp_path / "again" / f).read_bytes(), f
    meta = pq.read_metadata(d / "out" / "timeseries.parquet")
    assert meta.created_by.startswith("parquet-rs version ")
    assert set(meta.metadata) == {b"ARROW:schema"}
    col = meta.row_group(0).column(0)
    assert col.compression == "ZSTD" and col.statistics is not None
    # pyarrow trusts every column's min/max (parquet-rs 60 would mark the float columns with a
    # column order pyarrow 26 does not know, and it would drop their statistics).
    for f in ("timeseries.parquet", "queue.parquet"):
        meta = pq.read_metadata(d / "out" / f)
        group = meta.row_group(0)
        lacking = [group.column(i).path_in_schema for i in range(meta.num_columns)
                   if not group.column(i).statistics.has_min_max]
        assert lacking == [], (f, lacking)
    ts = pq.read_metadata(d / "out" / "timeseries.parquet").row_group(0).column(0).statistics
    assert (ts.min, ts.max) == (0.05, 3.0)  # time_s: the first and last sample


def test_arrow_tables_with_nulls_go_through_the_same_writer(tmp_path):
    # The kernel backend hands write_results Arrow tables with all-null simulator-only columns.
    table = pa.table({
        "time_s": pa.array([0.1, 0.2], pa.float64()),
        "flow": pa.array(["a", "b"]).dictionary_encode(),
        "bytes_received": pa.nulls(2, pa.uint64()),
        "cwnd_pkts": pa.array([10, None], pa.uint32()),
    })
    results.table_to_raw(table).write(tmp_path / "t.parquet")
    back = pq.read_table(tmp_path / "t.parquet")
    assert back.schema.equals(table.schema.set(1, pa.field("flow", pa.dictionary(
        pa.int32(), pa.string()))), check_metadata=False)
    assert back.to_pylist() == table.to_pylist()
    with pytest.raises(TypeError, match="column 'ok': type bool"):
        results.table_to_raw(pa.table({"ok": [True]}))


def test_bad_columns_are_refused_with_the_column_named(tmp_path):
    with pytest.raises(ValueError, match=r'column "x": dtype "<f4"; accepted: <f8, <u8'):
        _core.write_parquet(str(tmp_path / "x.parquet"), [[("x", ("<f4", b"\0" * 4))]])
    with pytest.raises(ValueError, match=r'column "y" has 1 rows, column "x" has 2'):
        _core.write_parquet(str(tmp_path / "x.parquet"),
                            [[("x", ("<u8", b"\0" * 16)), ("y", ["a"])]])
    with pytest.raises(TypeError, match=r'column "z": expected list\[str\]'):
        _core.write_parquet(str(tmp_path / "x.parquet"), [[("z", 3)]])
    with pytest.raises(FileNotFoundError):
        _core.write_parquet(str(tmp_path / "no" / "x.parquet"), [[("x", ["a"])]])


def test_run_result_builds_tables_lazily(run):
    _, d = run
    r = rove.run(d / "s.toml")
    assert r.out is None
    assert isinstance(r._tables["timeseries"], NativeTable)  # still in the engine
    assert "rows" in repr(r) and isinstance(r._tables["timeseries"], NativeTable)
    assert r.timeseries_table.num_rows == pq.read_metadata(d / "out" / "timeseries.parquet").num_rows
    assert isinstance(r._tables["timeseries"], pa.Table)
    assert_same_table(r.queue_table, pq.read_table(d / "out" / "queue.parquet"))
    assert r.features_table.num_rows == pq.read_metadata(d / "out" / "features.parquet").num_rows


def test_engine_written_files_equal_the_columns_written_through_python(run, tmp_path):
    """Simulation.write_table (the tables built and encoded in Rust, tables.rs) writes the
    bytes RawTable writes from the columns finish() hands to Python, for every table."""
    raw, d = run
    python_side = {
        "timeseries": RawTable.from_columns(raw["timeseries"], TIMESERIES_COLUMNS),
        "queue": RawTable.from_columns(raw["queue"], QUEUE_COLUMNS),
        "features": RawTable.from_feature_logs(raw["features"]),
    }
    sim = _core.Simulation(SCENARIO, str(d / "s.toml"), str(d), [], None)
    sim.finish_run()
    assert sim.tables() == ["timeseries", "queue", "features"]
    for name, table in python_side.items():
        table.write(tmp_path / f"py-{name}.parquet")
        rows = sim.write_table(name, str(tmp_path / f"rs-{name}.parquet"))
        assert rows == table.num_rows == sim.table_rows(name) > 0, name
        assert ((tmp_path / f"rs-{name}.parquet").read_bytes()
                == (tmp_path / f"py-{name}.parquet").read_bytes()), name
        assert (tmp_path / f"rs-{name}.parquet").read_bytes() == (d / "out" / f"{name}.parquet").read_bytes()
    with pytest.raises(ValueError, match=r'no table "radio" in this run; its tables are: '
                                         r'timeseries, queue, features'):
        sim.write_table("radio", str(tmp_path / "r.parquet"))


def test_radio_table_written_by_the_engine_equals_the_python_path(tmp_path):
    scenario = ROOT / "scenarios" / "radio" / "wifi-3sta.toml"
    text = scenario.read_text()
    sim = _core.Simulation(text, str(scenario), str(scenario.parent), [("duration", '"2s"')], None)
    raw = sim.finish()
    assert "radio" in sim.tables()
    RawTable.from_columns(raw["radio"]).write(tmp_path / "py.parquet")
    sim.write_table("radio", str(tmp_path / "rs.parquet"))
    assert (tmp_path / "rs.parquet").read_bytes() == (tmp_path / "py.parquet").read_bytes()


def test_tables_exist_once_the_run_has_ended(tmp_path):
    sim = _core.Simulation(SCENARIO, "<s>", str(tmp_path), [], None)
    with pytest.raises(ValueError, match=r"call finish_run\(\) first"):
        sim.write_table("timeseries", str(tmp_path / "t.parquet"))
    first = sim.finish_run()
    assert sim.finish_run() == first  # the run ends once
    assert set(first) == {"summary_json", "warnings", "captures"}


def test_cli_run_imports_no_numpy_pandas_or_pyarrow(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    code = textwrap.dedent(f"""
        import sys
        from rove.cli import main
        status = main(["run", {str(scenario)!r}, "-o", {str(tmp_path / "out")!r}, "--quiet"])
        heavy = sorted(m for m in ("numpy", "pandas", "pyarrow") if m in sys.modules)
        print("status", status, "heavy", ",".join(heavy) or "-")
    """)
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["status", "0", "heavy", "-"], done.stdout + done.stderr
    for f in ("summary.json", "timeseries.parquet", "queue.parquet", "features.parquet"):
        assert (tmp_path / "out" / f).is_file(), f


# --------------------------------------------------------------------------------------------
# summary.json's text, made in Rust (crates/results summary.rs) as Python's json.dumps makes it

def _committed_scenarios() -> list[Path]:
    """Every committed scenario file: sweep documents (in a sweeps/ folder, or beside a model set
    with their top-level `scenario` key) are not scenarios."""
    return sorted(p for p in (ROOT / "scenarios").rglob("*.toml")
                  if "sweeps" not in p.parts and "scenario" not in tomllib.loads(p.read_text()))


@pytest.mark.parametrize("scenario", _committed_scenarios(), ids=lambda p: str(p.relative_to(ROOT)))
def test_summary_text_from_rust_is_pythons(scenario):
    # 5 s of each scenario; one whose flows start or measures end later runs at its own length.
    text = scenario.read_text()
    try:
        sim = _core.Simulation(text, str(scenario), str(scenario.parent), [("duration", '"5s"')],
                               None)
    except _core.ScenarioError as e:
        if "end of the run" not in str(e):
            raise
        sim = _core.Simulation(text, str(scenario), str(scenario.parent), [], None)
    engine = sim.finish_run()["summary_json"]
    for wall_s in (0.0, 0.1234565, 3.000000499, 1234.5678901):
        python = results.summary_text(results.summary_with_wall(engine, wall_s))
        assert _core.summary_text(engine, wall_s) == python


def test_summary_text_keeps_names_with_quotes_escapes_and_unicode(tmp_path):
    text = SCENARIO.replace('"single"', '"a \\"q\\" \\\\ é\\u0001\\t"')
    sim = _core.Simulation(text, "<s>", str(tmp_path), [], None)
    engine = sim.finish_run()["summary_json"]
    rust = _core.summary_text(engine, 0.5)
    assert rust == results.summary_text(results.summary_with_wall(engine, 0.5))
    assert '"a \\"q\\" \\\\ é\\u0001\\t"' in rust


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(body=st.dictionaries(st.sampled_from(["scenario", "seed", "flows", "x", "wall_s"]),
                            _json_values, max_size=5),
       wall_s=st.floats(0, 1e6))
def test_summary_text_lays_out_any_summary_as_json_dumps(body, wall_s):
    engine = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    python = results.summary_text(results.summary_with_wall(engine, wall_s))
    assert _core.summary_text(engine, wall_s) == python
