#!/usr/bin/env python3
"""Print rove's benchmark figures: `make bench` runs this after building `rove-bench`.

For each benchmark scenario given (default: bench/*.toml) it prints

1. the engine alone: ``target/release/rove-bench SCENARIO`` (wall time, events/s, peak RSS, as
   that binary prints them);
2. the full Python path: ``rove run SCENARIO -o build/bench/NAME --quiet`` in a fresh process,
   timed from outside (interpreter start, the run, converting and writing the Parquet files), with
   the engine's own ``wall_s`` from summary.json and the child's peak RSS.

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


def _engine(binary: Path, scenario: Path) -> int:
    print(f"$ {binary.relative_to(ROOT) if binary.is_relative_to(ROOT) else binary} {scenario}",
          flush=True)
    proc = subprocess.run([str(binary), str(scenario)], cwd=ROOT)
    return proc.returncode


def _python_path(scenario: Path) -> int:
    out = ROOT / "build" / "bench" / scenario.stem
    cmd = _rove_command() + ["run", str(scenario), "-o", str(out), "--quiet"]
    print(f"$ rove run {scenario} -o {out.relative_to(ROOT)} --quiet", flush=True)
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
    scenarios = [Path(a) for a in argv] or sorted((ROOT / "bench").glob("*.toml"))
    binary = ROOT / "target" / "release" / "rove-bench"
    status = 0
    for scenario in scenarios:
        print(f"== {scenario.name}", flush=True)
        if binary.exists():
            status |= _engine(binary, scenario)
        else:
            print(f"  {binary} not built (cargo build --release -p rove-world --bin rove-bench)")
            status |= 1
        status |= _python_path(scenario)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
