"""Writing a results directory: atomic, deterministic, and the schema from finish()'s shapes.

These tests build engine-shaped output by hand, so they check rove.results on its own.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rove import results
from rove.results import QUEUE_COLUMNS, TIMESERIES_COLUMNS, ResultsError, read_results


def fake_finish(n_samples=50, flows=("a", "b"), links=("down", "up")):
    """Output shaped like Simulation.finish() (see the native module contract)."""
    rng = np.random.default_rng(0)
    t = np.repeat(np.arange(1, n_samples + 1) * 0.01, len(flows))
    n = len(t)
    u4 = lambda v: ("<u4", np.asarray(v, dtype="<u4").tobytes())
    u8 = lambda v: ("<u8", np.asarray(v, dtype="<u8").tobytes())
    f8 = lambda v: ("<f8", np.asarray(v, dtype="<f8").tobytes())
    ts = {
        "time_s": f8(t), "flow": [flows[i % len(flows)] for i in range(n)], "cc": ["reno"] * n,
        "cwnd_pkts": u4(np.arange(n) % 40 + 10), "ssthresh_pkts": u4([2**31] * n),
        "inflight_pkts": u4(np.arange(n) % 30), "pacing_rate_bps": f8(np.full(n, 1e7)),
        "srtt_ms": f8(40 + rng.random(n)), "min_rtt_ms": f8(np.full(n, 40.0)),
        "delivery_rate_bps": f8(np.full(n, 9e6)), "bytes_acked": u8(np.arange(n) * 1000),
        "bytes_delivered": u8(np.arange(n) * 1000), "bytes_received": u8(np.arange(n) * 1000),
        "retrans_segs": u8(np.zeros(n)),
        "ca_state": ["open"] * n, "cc_state": ["cong_avoid"] * n,
        "subflow": ("<i4", np.full(n, -1, dtype="<i4").tobytes()), "ofo_bytes": u8(np.zeros(n)),
    }
    qt = np.repeat(np.arange(1, n_samples + 1) * 0.01, len(links))
    m = len(qt)
    counts = rng.integers(0, 5, size=m)
    means = np.where(counts > 0, rng.exponential(5, m), np.nan)
    q = {
        "time_s": f8(qt), "link": [links[i % len(links)] for i in range(m)],
        "backlog_bytes": u8(np.zeros(m)), "backlog_pkts": u4(np.zeros(m)), "drops": u8(np.zeros(m)),
        "queue_drops": u8(np.zeros(m)), "loss_drops": u8(np.zeros(m)),
        "departed_bytes": u8(np.arange(m) * 1500),
        "capacity_bytes": ("<f8", (np.arange(m) * 1500.0).astype("<f8").tobytes()),
        "sojourn_count": u8(counts), "sojourn_mean_ms": f8(means), "sojourn_max_ms": f8(2 * means),
    }
    summary = {"scenario": "fake", "backend": "sim", "duration_s": n_samples / 100, "seed": 1,
               "events": 123,
               "flows": [{"name": f, "cc": "reno", "goodput_mbps": 5.0, "throughput_mbps": 5.1,
                          "mean_rtt_ms": 41.0, "p95_rtt_ms": 48.5, "retrans_rate": 0.0,
                          "fct_s": None, "start_s": 0.0, "bytes_delivered": 1000} for f in flows],
               "links": [{"name": lk, "utilization": 0.5, "mean_queue_delay_ms": 3.0,
                          "p95_queue_delay_ms": 9.0, "drops": 0, "queue_drops": 0,
                          "loss_drops": 0} for lk in links],
               "jain_index": 1.0}
    return {"summary_json": json.dumps(summary), "timeseries": ts, "queue": q}, counts


def tables(raw):
    return (results.summary_with_wall(raw["summary_json"], 0.125),
            results.columns_to_table(raw["timeseries"], TIMESERIES_COLUMNS),
            results.columns_to_table(raw["queue"], QUEUE_COLUMNS))


def test_columns_to_table_types():
    raw, counts = fake_finish()
    summary, ts, q = tables(raw)
    assert ts.column_names == list(TIMESERIES_COLUMNS)
    assert q.column_names == list(QUEUE_COLUMNS)
    assert pa.types.is_dictionary(ts.schema.field("flow").type)
    assert ts.schema.field("cwnd_pkts").type == pa.uint32()
    assert ts.schema.field("bytes_acked").type == pa.uint64()
    assert q.schema.field("sojourn_count").type == pa.uint64()
    assert q.column("sojourn_count").to_pylist() == counts.tolist()
    assert q.schema.field("sojourn_mean_ms").type == pa.float64()
    assert list(summary) == ["scenario", "backend", "duration_s", "seed", "wall_s", "events",
                             "flows", "links", "jain_index"]


def test_write_is_deterministic_and_has_no_timestamps(tmp_path):
    raw, _ = fake_finish()
    summary, ts, q = tables(raw)
    results.write_results(tmp_path / "one", summary, ts, q)
    results.write_results(tmp_path / "two", summary, *tables(raw)[1:])
    for f in ("summary.json", "timeseries.parquet", "queue.parquet"):
        assert (tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes(), f
    meta = pq.read_metadata(tmp_path / "one" / "timeseries.parquet")
    keys = set((meta.metadata or {}).keys())
    assert keys <= {b"ARROW:schema"}, keys
    assert meta.row_group(0).column(0).compression == "ZSTD"
    text = (tmp_path / "one" / "summary.json").read_text()
    assert text.endswith("}\n") and '\n  "wall_s": 0.125,\n' in text


def test_results_round_trip(tmp_path):
    raw, counts = fake_finish()
    summary, ts, q = tables(raw)
    results.write_results(tmp_path / "r", summary, ts, q)
    back = read_results(tmp_path / "r")
    assert back.summary == summary
    assert list(back.timeseries.columns) == list(TIMESERIES_COLUMNS)
    assert back.queue["sojourn_count"].tolist() == counts.tolist()
    assert (back.queue["sojourn_mean_ms"].isna() == (counts == 0)).all()


def test_replacing_keeps_old_results_until_new_are_complete(tmp_path, monkeypatch):
    raw, _ = fake_finish()
    summary, ts, q = tables(raw)
    out = tmp_path / "res"
    results.write_results(out, summary, ts, q)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    calls = {"n": 0}
    real = results.write_parquet

    def interrupted(table, path):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        real(table, path)

    monkeypatch.setattr(results, "write_parquet", interrupted)
    with pytest.raises(KeyboardInterrupt):
        results.write_results(out, dict(summary, seed=99), ts, q)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert after == before, "an interrupted write must leave the previous results untouched"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"], "no temporary directory left"


def test_interrupted_first_write_leaves_nothing(tmp_path, monkeypatch):
    raw, _ = fake_finish()
    summary, ts, q = tables(raw)

    def boom(table, path):
        raise KeyboardInterrupt

    monkeypatch.setattr(results, "write_parquet", boom)
    with pytest.raises(KeyboardInterrupt):
        results.write_results(tmp_path / "res", summary, ts, q)
    assert list(tmp_path.iterdir()) == []


def test_replace_existing_results(tmp_path):
    raw, _ = fake_finish()
    summary, ts, q = tables(raw)
    out = tmp_path / "res"
    results.write_results(out, summary, ts, q)
    (out / "stale.png").write_bytes(b"old figure")
    results.write_results(out, dict(summary, seed=2), ts, q)
    assert json.loads((out / "summary.json").read_text())["seed"] == 2
    assert not (out / "stale.png").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]


def test_write_refuses_a_file_in_the_way(tmp_path):
    raw, _ = fake_finish()
    (tmp_path / "res").write_text("I am a file")
    with pytest.raises(ResultsError):
        results.write_results(tmp_path / "res", *tables(raw))


def test_read_results_errors(tmp_path):
    with pytest.raises(ResultsError, match="no such results directory"):
        read_results(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResultsError, match="missing summary.json"):
        read_results(tmp_path / "empty")


def test_metrics_hand_computed():
    from rove.metrics import jain_index, percentile

    # nearest rank: the smallest value with at least q of the values at or below it
    assert percentile([5, 1, 4, 2, 3], 0.95) == 5
    assert percentile([5, 1, 4, 2, 3], 0.4) == 2
    assert percentile(list(range(1, 101)), 0.95) == 95
    assert percentile([], 0.5) is None
    assert jain_index([30, 10]) == 0.8  # (40)^2 / (2 * 1000)
    assert jain_index([0, 0]) is None
