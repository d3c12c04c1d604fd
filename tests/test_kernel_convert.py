"""rove.kernel.convert on a hand-made raw directory: the kernel backend's raw files -> the
simulator's results schema, with hand-computed figures. Needs no root."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rove.kernel import KernelError, convert
from rove.results import QUEUE_COLUMNS, TIMESERIES_COLUMNS


def _write_raw(raw: Path, *, samples=True, rtt=True) -> None:
    (raw / "emu").mkdir(parents=True)
    run = {
        "scenario": "hand", "backend": "kernel", "seed": 4, "duration_s": 2.0,
        "sample_interval_s": 0.01, "links": ["down", "up"],
        "flows": [
            {"name": "bulk", "cc": "cubic", "start_s": 0.0, "launched_s": 0.001,
             "size_bytes": None, "samples": "flow-0.jsonl"},
            {"name": "sized", "cc": "reno", "start_s": 0.5, "launched_s": 0.502,
             "size_bytes": 1_000_000, "samples": "flow-1.jsonl"},
        ],
    }
    (raw / "run.json").write_text(json.dumps(run))

    def sample(t, acked, srtt=50.0, retrans=0):
        return {"t_s": t, "cwnd_pkts": 10, "ssthresh_pkts": 2**31 - 1, "inflight_pkts": 5,
                "pacing_rate_bps": 1e6, "delivery_rate_bps": 9e6, "srtt_ms": srtt,
                "min_rtt_ms": 40.0, "bytes_acked": acked, "bytes_sent": acked,
                "retrans_segs": retrans, "ca_state": "open", "cc": "x"}

    lines0 = [sample(0.5, 500_000), sample(1.0, 1_000_000), sample(1.999, 2_000_000, retrans=3),
              sample(2.5, 9_999_999)]  # past the end: ignored
    lines1 = [sample(0.2, 400_000, srtt=60.0)]
    if samples:
        (raw / "flow-0.jsonl").write_text(
            "\n".join(json.dumps(x) for x in lines0) + '\n{"final": true, "fct_s": null, "bytes_acked": 9999999}\n')
        (raw / "flow-1.jsonl").write_text(
            json.dumps(lines1[0]) + '\n{"final": true, "fct_s": 0.998, "bytes_acked": 1000000}\n')
    emu = {
        "links": [
            {"name": "down", "arrived_pkts": 100, "departed_bytes": 1, "capacity_bytes": 5_000_000.0,
             # the emulator's histogram over the duration (what the simulator's summary reports)
             "mean_queue_delay_ms": 2.5, "p95_queue_delay_ms": 4.0, "p99_queue_delay_ms": 4.0,
             "max_queue_delay_ms": 4.0, "queue_delay_percentiles_ms": [1.0] * 26 + [4.0] * 75},
            {"name": "up", "arrived_pkts": 50, "departed_bytes": 1, "capacity_bytes": 5_000_000.0},
        ],
        "flows": [{"name": "bulk", "data_segs_in": 300, "payload_bytes_out": 2_500_000},
                  {"name": "sized", "data_segs_in": 700, "payload_bytes_out": 1_000_000}],
        "cpu_s": 0.1, "cpu_fraction": 0.05, "lateness_p99_us": 30.0, "lateness_max_us": 90.0,
        "unclassified_pkts": 0, "write_errors": 0,
    }
    (raw / "emu" / "emu_summary.json").write_text(json.dumps(emu))
    rows = []
    for t, link, departed, soj in ((1.0, "down", 2_000_000, [1.0, 2.0, 3.0]), (1.0, "up", 10, []),
                                   (2.0, "down", 4_000_000, [4.0]), (2.0, "up", 20, [0.5]),
                                   (2.01, "down", 4_100_000, [99.0])):  # past the end: ignored
        rows.append({"time_s": t, "link": link, "backlog_bytes": 3000, "backlog_pkts": 2,
                     "drops": 5, "queue_drops": 4, "loss_drops": 1, "departed_bytes": departed,
                     "sojourn_count": len(soj),
                     "sojourn_mean_ms": sum(soj) / len(soj) if soj else None,
                     "sojourn_max_ms": max(soj) if soj else None})
    (raw / "emu" / "queue.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if rtt:
        (raw / "emu" / "rtt.csv").write_text("flow,time_s,rtt_ms\n0,0.5,40\n0,1.0,60\n1,0.9,45\n0,2.5,999\n")


def test_summary_figures(tmp_path):
    _write_raw(tmp_path)
    summary, ts, q = convert(tmp_path, wall_s=3.25)
    assert list(summary)[:9] == ["scenario", "backend", "duration_s", "seed", "wall_s", "events",
                                 "flows", "links", "jain_index"]
    assert summary["backend"] == "kernel" and summary["events"] == 150 and summary["wall_s"] == 3.25
    bulk, sized = summary["flows"]
    # Bulk: bytes acked by the end (the 1.999 s sample) over the 2 s since its start.
    assert bulk["goodput_mbps"] == pytest.approx(2_000_000 * 8 / 2.0 / 1e6)
    assert bulk["throughput_mbps"] == pytest.approx(2_500_000 * 8 / 2.0 / 1e6)
    assert bulk["mean_rtt_ms"] == pytest.approx(50.0)  # per-ACK samples 40 and 60 (2.5 s cut)
    assert bulk["retrans_rate"] == pytest.approx(3 / 300)
    assert bulk["fct_s"] is None
    # Sized: completed; its fct counts the 2 ms launch delay.
    assert sized["fct_s"] == pytest.approx(1.0)
    assert sized["goodput_mbps"] == pytest.approx(1_000_000 * 8 / 1.0 / 1e6)
    assert sized["bytes_delivered"] == 1_000_000
    down = summary["links"][0]
    assert down["utilization"] == pytest.approx(4_000_000 / 5_000_000)
    assert down["mean_queue_delay_ms"] == pytest.approx(2.5)
    assert down["p95_queue_delay_ms"] == 4.0
    assert (down["drops"], down["queue_drops"], down["loss_drops"]) == (5, 4, 1)
    assert summary["emulator"]["lateness_p99_us"] == 30.0
    assert tuple(ts.column_names) == TIMESERIES_COLUMNS
    assert tuple(q.column_names) == QUEUE_COLUMNS
    assert ts.num_rows == 4  # three bulk samples within the run, one sized
    assert ts.column("time_s").to_pylist()[0] == pytest.approx(0.501)
    assert q.num_rows == 4
    assert q.column("sojourn_count").to_pylist() == [3, 0, 1, 1]
    assert q.column("sojourn_mean_ms").to_pylist()[0] == 2.0
    assert math.isnan(q.column("sojourn_max_ms").to_pylist()[1])  # nothing left the queue
    assert down["queue_delay_percentiles_ms"][50] == 4.0
    # what the kernel backend cannot measure is null, never a made-up 0 (issue 11: ofo_bytes
    # used to be written as 0)
    for name in ("ofo_bytes", "bytes_received"):
        assert ts.column(name).null_count == ts.num_rows, name


def test_the_namespaces_counters_are_in_the_summary_nonzero_only(tmp_path):
    _write_raw(tmp_path)
    summary, _, _ = convert(tmp_path)
    assert "netstat" not in summary  # a raw directory from before raw/netstat.json
    (tmp_path / "netstat.json").write_text(json.dumps({
        "sender": {"TcpExt": {"TCPHPAcks": 3668, "TCPPureAcks": 1910, "TCPTimeouts": 0},
                   "IpExt": {"InNoRoutes": 0}, "Tcp": {"InSegs": 5598}},
        "receiver": {"TcpExt": {"DelayedACKs": 12}}}))
    summary, _, _ = convert(tmp_path)
    assert summary["netstat"] == {
        "sender": {"Tcp": {"InSegs": 5598},
                   "TcpExt": {"TCPHPAcks": 3668, "TCPPureAcks": 1910}},
        "receiver": {"TcpExt": {"DelayedACKs": 12}}}


def test_srtt_fallback_without_rtt_samples(tmp_path):
    _write_raw(tmp_path, rtt=False)
    summary, _, _ = convert(tmp_path)
    assert summary["flows"][0]["mean_rtt_ms"] == pytest.approx(50.0)
    assert summary["flows"][1]["p95_rtt_ms"] == pytest.approx(60.0)


def test_a_flow_without_samples_is_an_error(tmp_path):
    _write_raw(tmp_path, samples=False)
    (tmp_path / "flow-0.log").write_text("rove-traffic: error: connect: refused\n")
    with pytest.raises(KernelError, match="bulk.*connect: refused"):
        convert(tmp_path)


def test_incomplete_raw_directory(tmp_path):
    from rove.results import ResultsError

    with pytest.raises(ResultsError, match="not a complete kernel run"):
        convert(tmp_path)


def test_impossible_congestion_states_are_flagged_once_per_subflow():
    # A window or threshold of 2^24 packets or more (not TCP_INFINITE_SSTHRESH) is no congestion
    # control's doing: the first such sample of each subflow is reported, the connection's
    # summed row is not reported beside its subflow, and ssthresh = 2^31 - 1 is not flagged.
    from rove.kernel import impossible_states

    inf = 2**31 - 1
    cols = {"time_s": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0],
            "flow": ["m"] * 9,
            "subflow": [-1, 0, 1, -1, 0, 1, -1, 0, 1],
            "cwnd_pkts": [30, 10, 20, 230353887, 230353880, 7, 10**9, 10**9 - 7, 7],
            "ssthresh_pkts": [inf, inf, inf, 2165326096, 2165326096, 7, 5, 5, 7]}
    assert impossible_states(cols) == [{"flow": "m", "subflow": 0, "time_s": 2.0,
                                        "cwnd_pkts": 230353880, "ssthresh_pkts": 2165326096}]
    single = {"time_s": [0.5, 0.6], "flow": ["t", "t"], "subflow": [-1, -1],
              "cwnd_pkts": [16_777_215, 16_777_216], "ssthresh_pkts": [inf, 3]}
    assert impossible_states(single) == [{"flow": "t", "subflow": -1, "time_s": 0.6,
                                          "cwnd_pkts": 16_777_216, "ssthresh_pkts": 3}]
    assert impossible_states({"time_s": [1.0], "flow": ["t"], "subflow": [-1],
                              "cwnd_pkts": [10], "ssthresh_pkts": [inf]}) == []
