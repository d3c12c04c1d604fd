#!/usr/bin/env python3
"""Print rove's benchmark figures: `make bench` runs this after building `rove-bench`.

For each benchmark scenario given (default: bench/dumbbell-10x100.toml) it prints

1. the engine alone, once per algorithm (reno, cubic, bbr, bbr2, bbr2plus), each run in its own process:
   ``target/release/rove-bench SCENARIO --set flows.0.cc=ALGO`` (wall time, events/s, peak RSS,
   as that binary prints them);
2. the full Python path: ``rove run SCENARIO -o build/bench/NAME --quiet --force`` in a fresh process,
   timed from outside (interpreter start, the run, converting and writing the Parquet files), with
   the engine's own ``wall_s`` from summary.json and the child's peak RSS.

With no arguments it also runs bench/wifi-lte-2path.toml (one two-path multipath connection) the
same way, and once per multipath scheduler, and bench/lte-10ue.toml (an LTE cell of 10 UEs,
60 s; the cc of flow 0 per algorithm) the same way; then it runs bench/trace-1flow.toml once per algorithm over each Mahimahi
trace in ../shared/traces/mahimahi/ (skipped, saying so, when that folder is absent).

Figures are printed, not asserted: targets live here and in the notes, not in timed tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _rove_command() -> list[str]:
    exe = Path(sys.executable).parent / "rove"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "rove.cli"]


def _run_measured(cmd: list[str]) -> tuple[int, int]:
    """Run ``cmd`` in ROOT; return (exit status, the child's own peak RSS in KiB)."""
    proc = subprocess.Popen(cmd, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_maxrss


ALGORITHMS = ("reno", "cubic", "bbr", "bbr2", "bbr2plus", "bbr3", "vegas", "westwood", "illinois",
              "veno", "highspeed", "htcp", "yeah", "cdg", "copa", "c2tcp", "vivace")
SCHEDULERS = ("minrtt", "roundrobin", "redundant", "blest", "ecf")
MULTIPATH_BENCH = ROOT / "bench" / "wifi-lte-2path.toml"
LTE_BENCH = ROOT / "bench" / "lte-10ue.toml"
TRACES = ROOT.parent / "shared" / "traces" / "mahimahi"


def _engine(binary: Path, scenario: Path, overrides: tuple[str, ...] = ()) -> int:
    """One engine run in its own process, so its peak memory is its own."""
    cmd = [str(binary), str(scenario)]
    for kv in overrides:
        cmd += ["--set", kv]
    proc = subprocess.run(cmd, cwd=ROOT)
    return proc.returncode


def _per_algorithm(binary: Path, scenario: Path) -> int:
    status = 0
    for cc in ALGORITHMS:
        status |= _engine(binary, scenario, (f"flows.0.cc={cc}",))
    return status


def _per_scheduler(binary: Path, scenario: Path) -> int:
    status = 0
    for sched in SCHEDULERS:
        status |= _engine(binary, scenario, (f"flows.0.scheduler={sched}",))
    return status


def _traces(binary: Path) -> int:
    """One flow per algorithm over each Mahimahi trace in ../shared/traces/mahimahi/."""
    template = ROOT / "bench" / "trace-1flow.toml"
    if not TRACES.is_dir():
        print(f"== traces: skipped, {TRACES} is absent")
        return 0
    status = 0
    for trace in sorted(p for p in TRACES.iterdir() if p.suffix in (".up", ".down")):
        print(f"== {trace.name} (one flow, {template.name})", flush=True)
        for cc in ALGORITHMS:
            status |= _engine(binary, template, (f"links.down.trace={trace}", f"flows.0.cc={cc}"))
    return status


def _python_path(scenario: Path) -> int:
    out = ROOT / "build" / "bench" / scenario.stem
    # --force: build/bench/ is the benchmark's own scratch space, rewritten by every `make bench`
    cmd = _rove_command() + ["run", str(scenario), "-o", str(out), "--quiet", "--force"]
    print(f"$ rove run {scenario} -o {out.relative_to(ROOT)} --quiet --force", flush=True)
    t0 = time.perf_counter()
    returncode, peak_kib = _run_measured(cmd)
    wall = time.perf_counter() - t0
    if returncode != 0:
        print(f"  rove run failed with exit status {returncode}")
        return returncode
    summary = json.loads((out / "summary.json").read_text())
    engine_wall = summary.get("wall_s")
    events = summary.get("events")
    rate = f"{events / engine_wall / 1e6:.2f} M events/s" if events and engine_wall else "n/a"
    ts_bytes = (out / "timeseries.parquet").stat().st_size
    q_bytes = (out / "queue.parquet").stat().st_size
    print(f"  python path: wall {wall:.3f} s total (process start to results written), "
          f"engine {engine_wall:.3f} s ({rate}), peak RSS {peak_kib / 1024:.0f} MB")
    print(f"  results: timeseries.parquet {ts_bytes / 1e6:.2f} MB, queue.parquet "
          f"{q_bytes / 1e6:.2f} MB, {summary.get('duration_s')} s simulated, "
          f"{len(summary.get('flows', []))} flows, Jain index {_fmt(summary.get('jain_index'))}")
    return 0


def _fmt(x) -> str:
    return f"{x:.4f}" if isinstance(x, float) else str(x)


def main(argv: list[str]) -> int:
    scenarios = [Path(a) for a in argv] or [ROOT / "bench" / "dumbbell-10x100.toml", MULTIPATH_BENCH,
                                            LTE_BENCH]
    binary = ROOT / "target" / "release" / "rove-bench"
    if not binary.exists():
        print(f"{binary} not built (cargo build --release -p rove-world --bin rove-bench)")
        return 1
    status = 0
    for scenario in scenarios:
        print(f"== {scenario.name} (engine only, per algorithm; then the whole Python path)", flush=True)
        status |= _per_algorithm(binary, scenario)
        if scenario.resolve() == MULTIPATH_BENCH.resolve():
            status |= _per_scheduler(binary, scenario)
        status |= _python_path(scenario)
    if not argv:
        status |= _traces(binary)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
