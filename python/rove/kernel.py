"""The kernel backend, Python side: run ``rove-kernel`` and turn its raw files into results.

``rove run --backend kernel SCENARIO -o DIR`` calls :func:`run_kernel`, which

1. runs ``rove-kernel run SCENARIO -o STAGING`` (crates/emu: namespaces, the link emulator
   ``rove-emu``, ``rove-traffic`` servers and clients); it writes ``STAGING/raw/``;
2. converts the raw files (:func:`convert`) into the simulator's schema — ``summary.json``,
   ``timeseries.parquet``, ``queue.parquet`` with the same keys and column types — and writes
   them atomically with :func:`rove.results.write_results`;
3. moves the raw files to ``DIR/raw/`` beside them.

Raw files (see crates/emu/src/record.rs and orchestrate.rs): ``run.json`` (the run's flows,
links and timing), ``flow-<i>.jsonl`` (the client's TCP_INFO samples and a ``final`` line),
``emu/queue.jsonl`` (per link per sample: backlog, drop counters, departed bytes, sojourns),
``emu/rtt.csv`` (per-ACK RTT samples), ``emu/drops.csv``, ``emu/radio.csv`` (a radio cell's
counters: :func:`convert_radio` makes ``radio.parquet`` of them) and ``emu/emu_summary.json``
(totals, capacity, a radio cell's totals, per-flow packet counts).

Where the kernel cannot give what the simulator reports, the nearest measurable quantity is
used; each is marked [GAP] below and listed in docs/kernel-backend.md.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from .metrics import jain_index, percentile
from .outputs import remove_stale, staging_prefix
from .results import (
    QUEUE_COLUMNS,
    QUEUE_DELAY_KEYS,
    RADIO_FILE,
    TIMESERIES_COLUMNS,
    RawTable,
    ResultsError,
    RunResult,
    columns_to_table,
    write_results,
)

__all__ = ["KernelError", "find_binary", "run_kernel", "convert", "convert_radio"]

BINARIES = ("rove-kernel", "rove-emu", "rove-traffic")


class KernelError(RuntimeError):
    """The kernel backend could not run (the message is one line)."""

    def __init__(self, message: str, exit_status: int = 1):
        super().__init__(message)
        self.exit_status = exit_status


def _repo_root() -> Path:
    return Path(__file__).resolve().parent.parent.parent


def find_binary(name: str) -> Path | None:
    """``name`` from ``$ROVE_BIN_DIR``, the checkout's ``target/release``, or ``PATH``."""
    candidates = []
    if os.environ.get("ROVE_BIN_DIR"):
        candidates.append(Path(os.environ["ROVE_BIN_DIR"]) / name)
    candidates.append(_repo_root() / "target" / "release" / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    found = shutil.which(name)
    return Path(found) if found else None


def run_kernel(scenario: str | os.PathLike, out: str | os.PathLike, seed: int | None = None,
               overrides: Iterable[tuple[str, str]] = (), traffic_bin: str | None = None) -> RunResult:
    """Run ``scenario`` on the kernel backend and write a results directory ``out``.

    ``overrides`` are ``(KEY, VALUE-as-TOML-text)`` pairs, as ``rove run --set`` gives them.
    ``traffic_bin`` replaces ``rove-traffic`` (also ``$ROVE_TRAFFIC``). Raises
    :class:`KernelError` when the run fails; a SIGINT/SIGTERM received meanwhile is passed on
    to ``rove-kernel``, which removes everything it made before it exits.
    """
    kernel = find_binary("rove-kernel")
    if kernel is None:
        raise KernelError("rove-kernel not found (build it with 'make setup' or "
                          "'cargo build --release -p rove-emu'; or set ROVE_BIN_DIR)", 2)
    out = Path(out)
    parent = out.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale(out)
        staging = Path(tempfile.mkdtemp(prefix=staging_prefix(out) + "kernel-", dir=parent))
    except OSError as e:  # name the directory the user gave, not the hidden staging one
        raise KernelError(f"{out}: cannot write the results directory: {e.strerror or e}", 2) \
            from None
    cmd = [str(kernel), "run", str(scenario), "-o", str(staging)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    for key, value in overrides:
        cmd += ["--set", f"{key}={value}"]
    traffic = traffic_bin or os.environ.get("ROVE_TRAFFIC") or find_binary("rove-traffic")
    if traffic:
        cmd += ["--traffic-bin", str(traffic)]
    emu = find_binary("rove-emu")
    if emu:
        cmd += ["--emu-bin", str(emu)]
    t0 = time.perf_counter()
    try:
        _run_child(cmd)
        wall_s = time.perf_counter() - t0
        summary, ts, q = convert(staging / "raw", wall_s)
        radio = convert_radio(staging / "raw")
        written = write_results(out, summary, ts, q,
                                extra={RADIO_FILE: radio} if radio is not None else None)
        os.rename(staging / "raw", written / "raw")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return RunResult(summary, ts, q, out=written, radio_table=radio)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

# What the kernel backend cannot measure: the payload that reached the receiver in any order
# (its senders see acknowledgments, not arrivals) and a link's offered capacity over time (the
# emulator does not report it). Written as nulls, not zeros, so both backends have one schema.
# Columns the kernel backend cannot measure, written as nulls (never as a made-up 0): the
# receiving side's arrivals and a link's offered capacity, and the multipath receiver's
# reordering-buffer occupancy (``ofo_bytes``: the receiver's MPTCP reordering queue is not
# visible from the sender) [GAP].
SIMULATOR_ONLY_COLUMNS = {"bytes_received": "uint64", "capacity_bytes": "float64",
                          "ofo_bytes": "uint64"}


def _with_nulls(table, order: Sequence[str]):
    """``table`` with a null column for each simulator-only column of ``order``, in place."""
    import pyarrow as pa

    for name, kind in SIMULATOR_ONLY_COLUMNS.items():
        if name in order and name not in table.column_names:
            at = sum(1 for c in order[:order.index(name)] if c in table.column_names)
            table = table.add_column(at, name, pa.nulls(table.num_rows, pa.type_for_alias(kind)))
    return table


def _die_with_parent(parent_pid: int):
    """A ``preexec_fn`` that has the child receive SIGTERM when this process dies (even by
    ``kill -9``): ``rove-kernel`` then removes its namespaces, processes and staging files and
    exits, instead of running on as an orphan. Exits at once if the parent is already gone."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def setup() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(128 + int(signal.SIGTERM))

    return setup


def _run_child(cmd: Sequence[str]) -> None:
    """Run ``rove-kernel``; on an exception here (Ctrl-C, the CLI's SIGTERM) stop it with
    SIGTERM and wait, so that its clean-up runs before we exit."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=_die_with_parent(os.getpid()))
    try:
        _, err = proc.communicate()
    except BaseException:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    if proc.returncode != 0:
        lines = [ln for ln in (err or "").splitlines() if ln.strip()]
        msg = lines[-1] if lines else f"rove-kernel exited with status {proc.returncode}"
        msg = msg.removeprefix("rove-kernel: error: ")
        if proc.returncode in (130, 143):
            raise KeyboardInterrupt()
        raise KernelError(msg, 2 if proc.returncode == 2 else 1)


# --------------------------------------------------------------------------------------------
# Raw -> results


# radio.parquet's columns and their types, as the simulator writes them (crates/py
# radio_columns; str = a text column).
RADIO_COLUMN_TYPES = {
    "time_s": "<f8", "link": str, "port": str, "station": str, "direction": str, "ac": str,
    "backlog_bytes": "<u8", "qlen": "<u4", "overflow_drops": "<u8", "codel_drops": "<u8",
    "mac_drops": "<u8", "requeues": "<u8", "tx_packets": "<u8", "tx_bytes": "<u8",
    "tx_retries": "<u8", "collisions": "<u8", "phy_errors": "<u8", "internal_collisions": "<u8",
    "tx_bitrate_bps": "<f8", "signal_db": "<f8", "survey_busy_ms": "<f8", "survey_tx_ms": "<f8",
    "survey_rx_ms": "<f8", "airtime_ms": "<f8",
}
# The columns radio.csv (and radio.parquet) add when the scenario has an LTE cell (crates/emu
# record.rs LTE_RADIO_COLUMNS); after them, "ap" (text) when a WiFi cell has several access
# points.
LTE_RADIO_COLUMN_TYPES = {
    "cqi": "<f8", "mcs": "<f8", "prbs": "<u8", "tbs_bits": "<u8", "harq_failures": "<u8",
    "cell_prbs_used": "<u8", "cell_prbs": "<u4",
}


def convert_radio(raw: str | os.PathLike) -> RawTable | None:
    """``radio.parquet``'s table from a kernel run's ``emu/radio.csv`` (the emulator samples
    its radio cells as the simulator does, the last rows at the scenario's end: the cells'
    totals in ``summary.json``), or ``None`` when the scenario has no radio cell."""
    import csv

    path = Path(raw) / "emu" / "radio.csv"
    if not path.is_file():
        return None
    with path.open(newline="", encoding="utf-8") as f:
        rows = csv.reader(f)
        header = next(rows, None)
        types = {**RADIO_COLUMN_TYPES, **LTE_RADIO_COLUMN_TYPES, "ap": str}
        base, lte = list(RADIO_COLUMN_TYPES), list(LTE_RADIO_COLUMN_TYPES)
        if header not in (base, base + lte, base + ["ap"], base + lte + ["ap"]):
            raise ResultsError(f"{path}: unexpected columns {header} (expected "
                               f"{', '.join(RADIO_COLUMN_TYPES)}, and with an LTE cell "
                               f"{', '.join(LTE_RADIO_COLUMN_TYPES)}, then ap with a WiFi "
                               f"cell of several access points)")
        data = list(zip(*rows)) or [()] * len(header)
    columns: dict[str, Any] = {}
    for name, values in zip(header, data):
        kind = types[name]
        if kind is str:
            columns[name] = list(values)
        elif kind == "<f8":
            columns[name] = _col(kind, [float(v) for v in values])
        else:
            columns[name] = _col(kind, [int(v) for v in values])
    return RawTable.from_columns(columns, header)


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except ValueError:
                        break  # a line cut short by a killed writer ends the file
    except FileNotFoundError:
        pass
    return rows


def _num(x, default=0.0) -> float:
    return default if x is None else float(x)


def _col(dtype: str, values) -> tuple[str, bytes]:
    return dtype, np.asarray(values, dtype=np.dtype(dtype)).tobytes()


#: Keys of an emulator OAL entry (emu_summary.json) that are not the controller's report.
_EMU_OAL_EXTRAS = ("index", "flows", "step_max_us", "step_total_ms")


def convert(raw: str | os.PathLike, wall_s: float = 0.0):
    """``(summary dict, timeseries table, queue table)`` from a kernel run's raw directory."""
    raw = Path(raw)
    try:
        run = json.loads((raw / "run.json").read_text(encoding="utf-8"))
        emu = json.loads((raw / "emu" / "emu_summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ResultsError(f"{raw}: not a complete kernel run ({e})") from None
    duration = float(run["duration_s"])
    eps = 1e-9

    # ---- per-ACK RTT samples the emulator took at the senders' side (crates/emu/src/rtt.rs);
    # columns flow, time_s, rtt_ms[, subflow] (the path of a multipath flow; older files lack it)
    rtt_by_flow: dict[int, np.ndarray] = {}
    rtt_by_subflow: dict[tuple[int, int], np.ndarray] = {}
    rtt_file = raw / "emu" / "rtt.csv"
    if rtt_file.is_file() and rtt_file.stat().st_size > 0:
        data = np.loadtxt(rtt_file, delimiter=",", skiprows=1, ndmin=2)
        if data.size:
            data = data[data[:, 1] <= duration + eps]
            for i in np.unique(data[:, 0]).astype(int):
                rows = data[data[:, 0] == i]
                rtt_by_flow[int(i)] = rows[:, 2]
                if data.shape[1] > 3:
                    for k in np.unique(rows[:, 3]).astype(int):
                        rtt_by_subflow[(int(i), int(k))] = rows[rows[:, 3] == k, 2]

    # ---- flows: TCP_INFO samples from the clients
    ts_cols: dict[str, list] = {c: [] for c in TIMESERIES_COLUMNS}
    flows_out = []
    limits_out = []
    emu_subflows = emu.get("subflows", [])
    for i, f in enumerate(run["flows"]):
        rows = _read_jsonl(raw / f["samples"])
        samples = [r for r in rows if not r.get("final")]
        final = next((r for r in rows if r.get("final")), None)
        if f.get("launched_s") is not None and not samples and final is None:
            log = raw / f"flow-{i}.log"
            why = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            raise KernelError(f"flow {f['name']}: the traffic generator wrote no samples"
                              + (f" ({why[0]})" if why else ""))
        launched = _num(f.get("launched_s"), f["start_s"])
        multipath = bool(f.get("multipath"))
        # A subflow's index is the path its local address belongs to (run.json: subflows).
        index_of = {str(sf["sender"]): int(sf["subflow"]) for sf in f.get("subflows", [])}
        first_seen: dict[int, float] = {}
        last_sub: dict[int, dict] = {}
        for s in samples:
            t = launched + float(s["t_s"])
            if t > duration + eps:
                continue
            subs = []
            for sf in s.get("subflows") or []:
                k = index_of.get(str(sf.get("local") or "").rsplit(":", 1)[0])
                if k is not None:
                    subs.append((k, sf))
                    first_seen.setdefault(k, t)
                    last_sub[k] = sf
            row = dict(s)
            if multipath and subs:
                # The connection's row: summed over its subflows, the lowest RTTs (as the
                # simulator's multipath row); bytes acked and retransmissions are data-level.
                for key in ("cwnd_pkts", "inflight_pkts", "pacing_rate_bps", "delivery_rate_bps"):
                    vals = [sf.get(key) for _, sf in subs]
                    row[key] = None if any(v is None for v in vals) else sum(vals)
                for key in ("srtt_ms", "min_rtt_ms"):
                    vals = [sf[key] for _, sf in subs if sf.get(key)]
                    row[key] = min(vals) if vals else None
            _append_sample(ts_cols, t, f, row, -1, int(s.get("bytes_acked") or 0))
            if multipath and "subflow" in ts_cols:
                for k, sf in sorted(subs, key=lambda x: x[0]):
                    # [GAP] bytes_delivered of a subflow row: its bytes acked (the simulator:
                    # payload that arrived on it); the sender cannot see the receiver.
                    _append_sample(ts_cols, t, f, sf, k, int(sf.get("bytes_acked") or 0))
        summary_flow = _flow_summary(f, samples, final, emu["flows"][i], launched, duration,
                                     rtt_by_flow.get(i))
        if multipath:
            summary_flow.update(_multipath_summary(
                f, summary_flow, [x for x in emu_subflows if int(x["flow"]) == i],
                {k: rtt_by_subflow.get((i, k)) for k in range(len(f.get("subflows", [])))},
                first_seen, last_sub, launched, duration))
        flows_out.append(summary_flow)
        limits_out.append(_tcp_limits(f, samples, launched, duration))

    ts_columns: dict[str, Any] = {}
    for name in TIMESERIES_COLUMNS:
        if name in SIMULATOR_ONLY_COLUMNS:
            continue
        v = ts_cols[name]
        if name in ("flow", "cc", "ca_state", "cc_state"):
            ts_columns[name] = v
        elif name in ("cwnd_pkts", "ssthresh_pkts", "inflight_pkts"):
            ts_columns[name] = _col("<u4", v)
        elif name in ("bytes_acked", "bytes_delivered", "retrans_segs"):
            ts_columns[name] = _col("<u8", v)
        elif name == "subflow":
            ts_columns[name] = _col("<i4", v)
        else:
            ts_columns[name] = _col("<f8", v)
    timeseries = _with_nulls(columns_to_table(ts_columns, TIMESERIES_COLUMNS), TIMESERIES_COLUMNS)

    # ---- links: the emulator's samples
    q_rows = [r for r in _read_jsonl(raw / "emu" / "queue.jsonl") if r["time_s"] <= duration + eps]
    last_row: dict[str, dict] = {r["link"]: r for r in q_rows}
    q_columns: dict[str, Any] = {
        "time_s": _col("<f8", [r["time_s"] for r in q_rows]),
        "link": [r["link"] for r in q_rows],
    }
    for name, dtype in (("backlog_bytes", "<u8"), ("backlog_pkts", "<u4"), ("drops", "<u8"),
                        ("queue_drops", "<u8"), ("loss_drops", "<u8"), ("departed_bytes", "<u8"),
                        ("sojourn_count", "<u8")):
        q_columns[name] = _col(dtype, [r[name] for r in q_rows])
    for name in ("sojourn_mean_ms", "sojourn_max_ms"):
        q_columns[name] = _col("<f8", [math.nan if r[name] is None else r[name] for r in q_rows])
    queue = _with_nulls(columns_to_table(q_columns, QUEUE_COLUMNS), QUEUE_COLUMNS)

    links_out = []
    for link in emu["links"]:
        name = link["name"]
        last = last_row.get(name, {})
        cap = float(link.get("capacity_bytes") or 0.0)
        departed = last.get("departed_bytes", 0)
        entry = {
            "name": name,
            "utilization": departed / cap if cap > 0 else 0.0,
            # The emulator's histogram of the link's sojourns over the duration: the same code
            # (rove_sim::link::QueueDelaySummary) as the simulator's summary.
            **{k: link.get(k) for k in QUEUE_DELAY_KEYS},
            "drops": last.get("drops", 0),
            "queue_drops": last.get("queue_drops", 0),
            "loss_drops": last.get("loss_drops", 0),
        }
        # As the simulator's summary: MAC drops on every link model but the point-to-point
        # link, offline drops on a WiFi cell with drive-by stations, a radio cell's totals.
        radio = link.get("radio")
        if link.get("kind", "p2p") != "p2p":
            entry["mac_drops"] = last.get("mac_drops", 0)
        if radio and radio.get("driveby"):
            entry["offline_drops"] = last.get("offline_drops", 0)
        if radio is not None:
            entry["radio"] = radio
        links_out.append(entry)

    goodputs = [f["goodput_mbps"] for f in flows_out]
    summary = {
        "scenario": run["scenario"],
        "backend": "kernel",
        "duration_s": duration,
        "seed": run["seed"],
        "wall_s": round(wall_s, 6),
        # The simulator counts events; the emulator's nearest count is packets offered to links.
        "events": sum(int(l.get("arrived_pkts", 0)) for l in emu["links"]),
        "flows": flows_out,
        "links": links_out,
        "jain_index": jain_index(goodputs),
        "emulator": {k: emu.get(k) for k in ("cpu_s", "cpu_fraction", "lateness_p99_us",
                                              "lateness_max_us", "cpu_latency_us", "write_p99_us",
                                              "write_max_us", "unclassified_pkts",
                                              "write_errors")},
        # What limited each kernel sender (TCP_INFO chrono times; no simulator counterpart).
        "tcp_limits": limits_out,
    }
    netstat = _netstat(raw)
    if netstat is not None:
        summary["netstat"] = netstat
    # The controllers' reports, as the simulator's summary has them (index, kind, report); the
    # emulator's extras (per-flow rewrites, step cost) stay in emu_summary.json.
    controllers = [{"index": int(o["index"]), "kind": "oal",
                    "report": {k: v for k, v in o.items() if k not in _EMU_OAL_EXTRAS}}
                   for o in emu.get("oal", [])]
    if controllers:
        summary["controllers"] = sorted(controllers, key=lambda c: c["index"])
    anomalies = impossible_states(ts_cols)
    if anomalies:
        summary["kernel_anomalies"] = anomalies
    warnings = unfinished_warnings(flows_out) + [
        f"flow {a['flow']}{'' if a['subflow'] < 0 else ' subflow %d' % a['subflow']}: the "
        f"kernel reported an impossible congestion state at {a['time_s']:.3f} s (cwnd "
        f"{a['cwnd_pkts']}, ssthresh {a['ssthresh_pkts']} packets); what follows is not the "
        f"congestion control's behaviour (docs/kernel-backend.md, \"Impossible congestion "
        f"states\")" for a in anomalies]
    if warnings:
        summary["warnings"] = warnings
    return summary, timeseries, queue


def _netstat(raw: Path) -> dict | None:
    """The sender and receiver namespaces' MIB counters at the scenario's end
    (``raw/netstat.json``, crates/emu/src/netstat.rs), the nonzero ones: ``{"sender": {"TcpExt":
    {"TCPHPAcks": n, ...}, "Tcp": {...}}, "receiver": {...}}``. The namespaces are the run's own,
    so these are the run's counts, every flow's together; ``None`` for runs made before the
    file existed."""
    path = raw / "netstat.json"
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ResultsError(f"{path}: {e}") from None
    return {side: {group: {k: v for k, v in sorted(vals.items()) if v}
                   for group, vals in sorted(groups.items()) if any(vals.values())}
            for side, groups in doc.items()}


def _append_sample(ts_cols: dict, t: float, f: dict, s: dict, subflow: int,
                   delivered: int) -> None:
    """One timeseries row from a TCP_INFO reading ``s`` (a flow's, or one subflow's)."""
    ts_cols["time_s"].append(t)
    ts_cols["flow"].append(f["name"])
    ts_cols["cc"].append(s.get("cc") or f["cc"])  # the socket's own: a live switch shows
    ts_cols["cwnd_pkts"].append(int(s.get("cwnd_pkts") or 0))
    ts_cols["ssthresh_pkts"].append(min(int(s.get("ssthresh_pkts") or 0), 2**32 - 1))
    ts_cols["inflight_pkts"].append(int(s.get("inflight_pkts") or 0))
    ts_cols["pacing_rate_bps"].append(_num(s.get("pacing_rate_bps"), math.nan))
    ts_cols["srtt_ms"].append(_num(s.get("srtt_ms")))
    ts_cols["min_rtt_ms"].append(_num(s.get("min_rtt_ms")))
    ts_cols["delivery_rate_bps"].append(_num(s.get("delivery_rate_bps")))
    ts_cols["bytes_acked"].append(int(s.get("bytes_acked") or 0))
    # [GAP] the kernel sender cannot see the receiving application; bytes acked is in-order
    # data the receiver holds, the closest measure of bytes delivered.
    ts_cols["bytes_delivered"].append(delivered)
    ts_cols["retrans_segs"].append(int(s.get("retrans_segs") or 0))
    ts_cols["ca_state"].append(str(s.get("ca_state", "")))
    # [GAP] TCP_INFO does not expose the algorithm's own mode (BBR's STARTUP/PROBE_BW need
    # INET_DIAG); marked as not available.
    ts_cols["cc_state"].append("n/a")
    if "subflow" in ts_cols:
        ts_cols["subflow"].append(subflow)


def _multipath_summary(f: dict, flow: dict, emu_subflows: list, rtts: dict, first_seen: dict,
                       last_sub: dict, launched: float, duration: float) -> dict:
    """The keys the simulator adds for a multipath flow, in its order; what the kernel cannot
    measure from the sender is null ([GAP]: reordering buffer, application delay, duplicates,
    reinjections, the scheduler's own counters, subflow failures)."""
    active = max((flow["fct_s"] if flow["fct_s"] is not None else duration - flow["start_s"]),
                 1e-9)
    by_index = {int(x["subflow"]): x for x in emu_subflows}
    received = sum(int(x.get("payload_bytes_out") or 0) for x in emu_subflows)
    subflows = []
    for sf in f.get("subflows", []):
        k = int(sf["subflow"])
        c = by_index.get(k, {})
        got = int(c.get("payload_bytes_out") or 0)
        segs = int(c.get("data_segs_in") or 0)
        r = rtts.get(k)
        retrans = int((last_sub.get(k) or {}).get("retrans_segs") or 0)
        subflows.append({
            "index": k,
            "path": sf["path"],
            "ack_path": sf["ack_path"],
            # [GAP] the first subflow starts with the client; a joining subflow's SYN time is not
            # visible, its first TCP_INFO reading (every sample interval) stands for both.
            "start_s": launched if k == 0 else first_seen.get(k),
            "established_s": first_seen.get(k),
            "throughput_mbps": got * 8 / active / 1e6,
            "share": got / received if received else 0.0,
            "mean_rtt_ms": float(np.mean(r)) if r is not None and len(r) else None,
            "p95_rtt_ms": percentile(r, 0.95) if r is not None and len(r) else None,
            "retrans_rate": retrans / segs if segs else 0.0,
            "segs_sent": segs,
            "failures": None,
        })
    return {
        "scheduler": f.get("scheduler", "minrtt"),
        "coupling": f.get("coupling", "uncoupled"),
        "ofo_mean_bytes": None,
        "ofo_max_bytes": None,
        "app_delay_mean_ms": None,
        "app_delay_p50_ms": None,
        "app_delay_p95_ms": None,
        "app_delay_p99_ms": None,
        "app_delay_max_ms": None,
        "download_time_s": flow["fct_s"],
        "duplicate_segs": None,
        "reinjected_segs": None,
        "opportunistic_segs": None,
        "penalizations": None,
        "subflows": subflows,
    }


def _tcp_limits(f: dict, samples: list, launched: float, duration: float) -> dict:
    """Shares of the sender's busy time limited by the peer's receive window and by its own
    send buffer (``tcpi_rwnd_limited``, ``tcpi_sndbuf_limited`` over ``tcpi_busy_time``: the
    kernel's chrono_stat, net/ipv4/tcp_output.c), the largest advertised window seen."""
    inside = [s for s in samples if launched + float(s["t_s"]) <= duration + 1e-9]
    last = inside[-1] if inside else {}
    busy = last.get("busy_us")
    out = {"name": f["name"], "busy_s": None if busy is None else busy / 1e6,
           "rwnd_limited_frac": None, "sndbuf_limited_frac": None,
           "max_snd_wnd_bytes": max((int(s["snd_wnd_bytes"]) for s in inside
                                     if s.get("snd_wnd_bytes") is not None), default=None)}
    if busy:
        for key in ("rwnd_limited", "sndbuf_limited"):
            v = last.get(f"{key}_us")
            out[f"{key}_frac"] = None if v is None else v / busy
    return out


def _flow_summary(f: dict, samples: list, final: dict | None, counters: dict, launched: float,
                  duration: float, rtt_ms: np.ndarray | None = None) -> dict:
    start = float(f["start_s"])
    fct = final.get("fct_s") if final else None
    if fct is not None:
        # A sized flow that completed: its bytes over its completion time (from its start).
        fct = float(fct) + (launched - start)
        acked = int(final.get("bytes_acked") or 0)
        active = fct
    else:
        # Bulk or unfinished: bytes acked by the end of the run, over the time since its start.
        inside = [s for s in samples if launched + float(s["t_s"]) <= duration + 1e-9]
        acked = int(inside[-1].get("bytes_acked") or 0) if inside else 0
        active = duration - start
    active = max(active, 1e-9)
    # RTT: every per-ACK sample, as the simulator does (taken by the emulator at the sender's
    # side, Karn's rule, the oldest newly acked segment: crates/emu/src/rtt.rs). Without them
    # (an older raw directory), the smoothed RTT the client read every sample interval.
    if rtt_ms is not None and len(rtt_ms):
        rtts = rtt_ms
    else:
        rtts = [float(s["srtt_ms"]) for s in samples if s.get("srtt_ms")]
    # Cumulative counters over the whole flow, as the emulator's segment count is.
    retrans = max((int(s.get("retrans_segs") or 0) for s in samples), default=0)
    segs = int(counters.get("data_segs_in") or 0)
    return {
        "name": f["name"],
        "cc": f["cc"],
        "start_s": start,
        "goodput_mbps": acked * 8 / active / 1e6,
        # Payload the emulator delivered to the receiver side, duplicates included.
        "throughput_mbps": int(counters.get("payload_bytes_out") or 0) * 8 / active / 1e6,
        "mean_rtt_ms": float(np.mean(rtts)) if len(rtts) else None,
        "p95_rtt_ms": percentile(rtts, 0.95),
        "retrans_rate": retrans / segs if segs else 0.0,
        "fct_s": fct,
        **_completion(f.get("size_bytes"), acked),
        "bytes_delivered": acked,
    }


def _completion(size: int | None, delivered: int) -> dict:
    """``completed`` and ``bytes_left`` of a finite flow (null for an unbounded one), as the
    simulator's summary has them."""
    if size is None:
        return {"completed": None, "bytes_left": None}
    left = max(0, int(size) - int(delivered))
    return {"completed": left == 0, "bytes_left": left}


# No rove scenario comes near 2^24 packets in flight (24 GB at 1448 B); a window or threshold
# above it that is not TCP_INFINITE_SSTHRESH (include/net/tcp.h) is a corrupted socket state.
IMPOSSIBLE_PKTS = 1 << 24
TCP_INFINITE_SSTHRESH = 0x7FFFFFFF


def impossible_states(ts_cols: dict) -> list[dict]:
    """The first sample of each flow/subflow whose cwnd or ssthresh no congestion control can
    have produced (see IMPOSSIBLE_PKTS), as dicts of flow, subflow, time_s, cwnd_pkts,
    ssthresh_pkts."""
    first: dict[tuple[str, int], dict] = {}
    subflows = ts_cols.get("subflow") or [-1] * len(ts_cols["time_s"])
    for t, flow, sub, cwnd, ssth in zip(ts_cols["time_s"], ts_cols["flow"], subflows,
                                        ts_cols["cwnd_pkts"], ts_cols["ssthresh_pkts"]):
        bad = cwnd >= IMPOSSIBLE_PKTS or (IMPOSSIBLE_PKTS <= ssth != TCP_INFINITE_SSTHRESH)
        if bad and (flow, sub) not in first:
            first[(flow, sub)] = {"flow": flow, "subflow": int(sub), "time_s": round(t, 6),
                                  "cwnd_pkts": int(cwnd), "ssthresh_pkts": int(ssth)}
    # A multipath connection's row sums its subflows: report the subflow, not both.
    return [a for (flow, sub), a in first.items()
            if sub >= 0 or not any(f == flow and k >= 0 for f, k in first)]


def unfinished_warnings(flows: Sequence[dict]) -> list[str]:
    """The simulator's wording (crates/world/src/summary.rs) for finite flows left unfinished."""
    return [f"flow {f['name']} did not finish: {f['bytes_left']} of its bytes had not reached "
            f"the receiving application when the run ended (fct_s is null; a longer duration "
            f"lets it finish)" for f in flows if f.get("completed") is False]


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - a debugging aid
    """``python -m rove.kernel RAW_DIR``: print the summary converted from a raw directory."""
    argv = list(sys.argv[1:] if argv is None else argv)
    summary, _, _ = convert(argv[0])
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
