#!/usr/bin/env python3
"""Check that an engine change leaves every result bit-for-bit the same.

    bench/same_results.py save DIR     # on the old build: write the reference outputs to DIR
    bench/same_results.py check DIR    # on the new build: rerun and compare with DIR

Two kinds of output are kept for each case:

- the engine's own: ``target/release/rove-bench SCENARIO [--set ...] --dump FILE`` writes the
  summary and every time-series column in Rust's ``{:?}`` form (floats in shortest round-trip
  form, so equal text means equal bits); cheap, so it covers every scenario in scenarios/
  (sweep files aside), every algorithm on the benchmark dumbbell and every multipath scheduler;
- the whole Python path (``--rove``): ``rove run`` of every committed scenario and of the
  benchmarks' main variants into DIR/rove/NAME, then summary.json with ``wall_s`` removed and
  the Parquet files' tables (and their bytes), and the list of files.

Exit status 0 when everything matches, 1 (listing what differs) otherwise.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# ROVE_BENCH: another build of rove-bench (e.g. a copy of the old one).
BENCH = Path(os.environ.get("ROVE_BENCH", ROOT / "target" / "release" / "rove-bench"))
ALGORITHMS = ("reno", "cubic", "bbr", "bbr2", "bbr2plus", "bbr3", "vegas", "westwood", "illinois",
              "veno", "highspeed", "htcp", "yeah", "cdg", "copa", "c2tcp", "vivace")
SCHEDULERS = ("minrtt", "roundrobin", "redundant", "blest", "ecf")


def committed_scenarios() -> list[Path]:
    """Every committed scenario file: sweep documents (in a sweeps/ folder, or beside a model set
    with their top-level `scenario` key) are not scenarios."""
    return [
        p
        for p in sorted((ROOT / "scenarios").rglob("*.toml"))
        if "sweeps" not in p.parts and "scenario" not in tomllib.loads(p.read_text())
    ]


def engine_cases() -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, scenario, overrides) of every engine-level case."""
    cases = []
    for p in committed_scenarios():
        rel = p.relative_to(ROOT)
        cases.append((str(rel).replace("/", "_"), str(rel), ()))
    for cc in ALGORITHMS:
        cases.append((f"dumbbell-{cc}", "bench/dumbbell-10x100.toml", (f"flows.0.cc={cc}",)))
    for sched in SCHEDULERS:
        cases.append((f"2path-{sched}", "bench/wifi-lte-2path.toml", (f"flows.0.scheduler={sched}",)))
    for cc in ("cubic", "bbr"):
        cases.append((f"trace-{cc}", "bench/trace-1flow.toml", (f"flows.0.cc={cc}",)))
    for name in sorted((ROOT / "bench").glob("scale-*.toml")):
        cases.append((name.stem, str(name.relative_to(ROOT)), ("duration=5s",)))
    return cases


# The Python path: demo, the benchmark dumbbell per algorithm, multipath, a trace, the WiFi cell,
# then every other committed scenario (sweep files aside).
ROVE_CASES = [
    ("demo", "scenarios/demo.toml", ()),
    ("dumbbell-reno", "bench/dumbbell-10x100.toml", ("flows.0.cc=reno",)),
    ("dumbbell-cubic", "bench/dumbbell-10x100.toml", ("flows.0.cc=cubic",)),
    ("dumbbell-bbr", "bench/dumbbell-10x100.toml", ("flows.0.cc=bbr",)),
    ("multipath", "scenarios/multipath/wifi-lte.toml", ()),
    ("trace", "bench/trace-1flow.toml", ()),
    ("wifi-3sta", "scenarios/radio/wifi-3sta.toml", ()),
]
ROVE_CASES += [
    (str(p.relative_to(ROOT)).replace("/", "_"), str(p.relative_to(ROOT)), ())
    for p in committed_scenarios()
    if str(p.relative_to(ROOT)) not in {scenario for _, scenario, _ in ROVE_CASES}
]


def _sets(overrides: tuple[str, ...]) -> list[str]:
    return [a for kv in overrides for a in ("--set", kv)]


def run_engine(out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name, scenario, overrides in engine_cases():
        cmd = [str(BENCH), scenario, *_sets(overrides), "--dump", str(out / f"{name}.txt")]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            failed.append(f"{name}: rove-bench exit {r.returncode}: {r.stderr.strip()}")
    return failed


def run_rove(out: Path) -> list[str]:
    rove = Path(sys.executable).parent / "rove"
    failed = []
    for name, scenario, overrides in ROVE_CASES:
        cmd = [str(rove), "run", scenario, "-o", str(out / name), "--quiet", "--force",
               *_sets(overrides)]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            failed.append(f"{name}: rove run exit {r.returncode}: {r.stderr.strip()}")
    return failed


def compare_rove(ref: Path, new: Path) -> list[str]:
    import pyarrow.parquet as pq

    diffs = []
    for name, _, _ in ROVE_CASES:
        a, b = ref / name, new / name
        sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
        sa.pop("wall_s", None)
        sb.pop("wall_s", None)
        if sa != sb:
            diffs.append(f"rove/{name}/summary.json differs (wall_s aside)")
        files_a, files_b = (sorted(p.name for p in d.iterdir()) for d in (a, b))
        if files_a != files_b:
            diffs.append(f"rove/{name}: files {files_a} before, {files_b} now")
        for f in sorted(p.name for p in a.glob("*.parquet")):
            if not (b / f).exists():
                diffs.append(f"rove/{name}/{f} missing")
            elif filecmp.cmp(a / f, b / f, shallow=False):
                continue
            # Different bytes: say whether the contents differ too (NaN equal to NaN, which
            # Arrow's Table.equals does not count as equal).
            elif not pq.read_table(a / f).to_pandas().equals(pq.read_table(b / f).to_pandas()):
                diffs.append(f"rove/{name}/{f}: tables differ")
            else:
                diffs.append(f"rove/{name}/{f}: same table, different bytes")
    return diffs


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("save", "check"))
    ap.add_argument("dir", type=Path)
    ap.add_argument("--rove", action="store_true", help="also compare the whole Python path")
    args = ap.parse_args(argv)
    target = args.dir if args.mode == "save" else args.dir / "new"
    problems = run_engine(target / "engine")
    if args.rove:
        problems += run_rove(target / "rove")
    if args.mode == "check":
        for name, _, _ in engine_cases():
            a, b = args.dir / "engine" / f"{name}.txt", target / "engine" / f"{name}.txt"
            if not a.exists():
                problems.append(f"engine/{name}: no reference (run save first)")
            elif b.exists() and not filecmp.cmp(a, b, shallow=False):
                problems.append(f"engine/{name}: differs")
        if args.rove:
            problems += compare_rove(args.dir / "rove", target / "rove")
    for p in problems:
        print(p)
    n = len(engine_cases()) + (len(ROVE_CASES) if args.rove else 0)
    print(f"{args.mode}: {n} cases, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
