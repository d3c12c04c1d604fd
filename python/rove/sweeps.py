"""Parameter sweeps: run a grid of scenario variants, in parallel, resumably.

A sweep file (TOML) names a scenario, a grid of ``--set`` keys with lists of values, optional
fixed overrides, and the seeds to repeat every combination with::

    scenario = "scenarios/demo.toml"      # relative to the sweep file
    repetitions = 3                       # seeds base, base+1, ... (or: seeds = [1, 7, 9])
    [grid]                                # the cartesian product of these lists
    "flows.0.cc" = ["reno", "cubic", "bbr"]
    "links.down.buffer" = ["50pkt", "500pkt"]
    [fixed]                               # overrides applied to every point
    duration = "20s"
    [cases.lossy]                         # optional: named scenarios, each with its overrides
    set = { "links.down.loss" = 0.01 }

Every case times every combination times every seed is a *point*. A point's results go to ``DIR/runs/<id>/``
(written atomically by :func:`rove.results.write_results`); a point whose directory holds
``summary.json`` is complete and is not run again, so running a sweep on an existing ``DIR``
resumes it. A point that fails (a scenario error only some combinations hit, an engine error) is
recorded in ``DIR/failures.json`` and the others go on. At the end ``DIR/summary.parquet`` holds
one row per flow per complete point (see :data:`FLOW_COLUMNS` and docs/sweeps.md).

Points run in local worker processes (``concurrent.futures.ProcessPoolExecutor``) or, with
``ray=ADDRESS`` / ``ray="local"``, as Ray tasks; the table is the same either way. The workers
live for the whole sweep (forked once the modules a run needs are imported) and take the
costliest points first (:func:`_schedule`); :func:`run_specs` runs several sweeps with one set of
workers, as ``rove reproduce`` does for the series of an experiment.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

__all__ = [
    "SweepError",
    "SweepSpec",
    "Point",
    "load_sweep",
    "expand_points",
    "run_sweep",
    "run_specs",
    "worker_pool",
    "sweep",
    "SUMMARY_TABLE",
    "FAILURES_FILE",
    "SWEEP_FILE",
    "RUNS_DIR",
]

SUMMARY_TABLE = "summary.parquet"
FAILURES_FILE = "failures.json"
SWEEP_FILE = "sweep.json"
RUNS_DIR = "runs"

SWEEP_KEYS = ("scenario", "repetitions", "seeds", "grid", "fixed", "cases", "title",
              "description")
CASE_KEYS = ("scenario", "set", "requires")
SKIPPED_FILE = "skipped.json"

# Columns of summary.parquet after ``point``, ``seed`` and the grid keys: the flow's summary
# fields (extra fields the engine adds, e.g. multipath's ofo_*, follow in order of appearance),
# then the run-level ``jain_index``, then ``link_<name>_<field>`` for every link.
FLOW_COLUMNS = ("flow", "cc", "start_s", "goodput_mbps", "throughput_mbps", "mean_rtt_ms",
                "p95_rtt_ms", "retrans_rate", "fct_s", "bytes_delivered")
LINK_FIELDS = ("utilization", "mean_queue_delay_ms", "p95_queue_delay_ms", "drops",
               "queue_drops", "loss_drops")
_INT_FIELDS = {"bytes_delivered", "drops", "queue_drops", "loss_drops"}
_RESERVED = {"point", "seed", "case", "jain_index"} | set(FLOW_COLUMNS)


class SweepError(ValueError):
    """A bad sweep file or output directory; the message is one line naming the file and key."""


@dataclass
class Case:
    """A named scenario of a sweep (``[cases.NAME]``): its file and its own overrides, and the
    files it needs (a trace that may be absent), without which it is skipped."""

    name: str | None                # None: the one implicit case of a sweep without [cases]
    scenario: Path
    overrides: dict[str, Any] = field(default_factory=dict)
    requires: list[str] = field(default_factory=list)   # as written in the sweep file
    base: Path = Path(".")          # the sweep file's folder, which ``requires`` is relative to

    def missing(self) -> list[str]:
        """The required files that are absent, as the sweep file names them."""
        return [f for f in self.requires if not (self.base / f).exists()]


@dataclass
class SweepSpec:
    """A parsed sweep file."""

    path: Path                      # the sweep file
    scenario: Path | None           # the scenario file (resolved against the sweep file)
    grid: dict[str, list]           # --set key -> values, in file order
    fixed: dict[str, Any]           # --set key -> value
    seeds: list[int]
    cases: list[Case] = field(default_factory=list)   # [cases.NAME], in file order
    title: str | None = None
    description: str | None = None  # Markdown, for the report

    def all_cases(self) -> list[Case]:
        """The cases to run: the file's, or the scenario itself as one unnamed case."""
        return self.cases or [Case(None, self.scenario)]


@dataclass
class Point:
    """One case (if the sweep has cases) and combination of grid values, with one seed."""

    id: str                         # directory name under DIR/runs/
    label: str                      # readable, for progress lines: "cc=bbr buffer=50pkt seed=2"
    values: dict[str, Any]          # grid key -> value
    seed: int
    overrides: list = field(default_factory=list)   # fixed, case, grid, as (key, value) pairs
    case: str | None = None


# --------------------------------------------------------------------------------------------
# Loading and expanding


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    return tomllib


def _flatten(table: Mapping, prefix: str = "") -> dict[str, Any]:
    """Dotted keys for nested tables: ``flows.0.cc = [...]`` written unquoted is a nested table
    in TOML; it means the same as the quoted key ``"flows.0.cc"``."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _seed_ok(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64


def load_sweep(path: str | os.PathLike) -> SweepSpec:
    """Read and check a sweep file; raise :class:`SweepError` (one line) when it is bad."""
    from .outputs import OutputError, check_input_file

    path = Path(path)
    try:
        data = check_input_file(path, "sweep").read_bytes()
    except OutputError as e:
        raise SweepError(str(e)) from None
    except OSError as e:
        raise SweepError(f"{path}: cannot read the sweep file: {e.strerror or e}") from None
    tomllib = _toml()
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise SweepError(f"{path}: not UTF-8 text (byte {e.start}); a sweep file is TOML") from None
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{path}: not valid TOML: {e}") from None

    unknown = [k for k in doc if k not in SWEEP_KEYS]
    if unknown:
        raise SweepError(f"{path}: {unknown[0]}: unknown key (accepted: {', '.join(SWEEP_KEYS)})")

    cases_raw = doc.get("cases")
    scen = doc.get("scenario")
    if scen is None and cases_raw is None:
        raise SweepError(f"{path}: scenario: missing; name the scenario file, e.g. "
                         f"scenario = \"scenarios/demo.toml\" (relative to the sweep file)")
    scenario = None if scen is None else _scenario_path(path, "scenario", scen)

    grid_raw = doc.get("grid", {})
    if not isinstance(grid_raw, Mapping):
        raise SweepError(f"{path}: grid: expected a table of KEY = [values], got {grid_raw!r}")
    grid = _flatten(grid_raw)
    for k, v in grid.items():
        if not isinstance(v, list):
            raise SweepError(f"{path}: grid.\"{k}\": expected a list of values, got {v!r} "
                             f"(a single value belongs in [fixed])")
        if not v:
            raise SweepError(f"{path}: grid.\"{k}\": empty list; give at least one value")
        if k == "seed":
            raise SweepError(f"{path}: grid.\"seed\": seeds are not a grid key; use "
                             f"seeds = [...] or repetitions = N")
        if k in _RESERVED or k.startswith("link_"):
            raise SweepError(f"{path}: grid.\"{k}\": clashes with a column of {SUMMARY_TABLE}")
        _no_repeats(v, f"{path}: grid.\"{k}\"")
    fixed_raw = doc.get("fixed", {})
    if not isinstance(fixed_raw, Mapping):
        raise SweepError(f"{path}: fixed: expected a table of KEY = value, got {fixed_raw!r}")
    fixed = _flatten(fixed_raw)
    for k in fixed:
        if k in grid:
            raise SweepError(f"{path}: fixed.\"{k}\": also a grid key; give it in one place")
    cases = [] if cases_raw is None else _load_cases(path, cases_raw, scenario, grid, fixed)
    texts = {}
    for k in ("title", "description"):
        v = doc.get(k)
        if v is not None and not isinstance(v, str):
            raise SweepError(f"{path}: {k}: expected a string, got {v!r}")
        texts[k] = v

    if "seeds" in doc and "repetitions" in doc:
        raise SweepError(f"{path}: seeds: give either seeds = [...] or repetitions = N, not both")
    if "seeds" in doc:
        seeds = doc["seeds"]
        if (not isinstance(seeds, list) or not seeds or not all(_seed_ok(s) for s in seeds)):
            raise SweepError(f"{path}: seeds: expected a non-empty list of integers >= 0, "
                             f"got {seeds!r}")
        if len(set(seeds)) != len(seeds):
            raise SweepError(f"{path}: seeds: a seed is listed twice: {seeds!r}")
        seeds = list(seeds)
    else:
        reps = doc.get("repetitions", 1)
        if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
            raise SweepError(f"{path}: repetitions: expected an integer >= 1, got {reps!r}")
        base = _base_seed(path, scenario or cases[0].scenario, fixed)
        seeds = [base + i for i in range(reps)]
    return SweepSpec(path=path, scenario=scenario, grid=grid, fixed=fixed, seeds=seeds,
                     cases=cases, **texts)


def _scenario_path(path: Path, where: str, scen: Any) -> Path:
    if not isinstance(scen, str) or not scen.strip():
        raise SweepError(f"{path}: {where}: expected a file path (string), got {scen!r}")
    scenario = Path(scen)
    if not scenario.is_absolute():
        scenario = path.parent / scenario
    if not scenario.is_file():
        raise SweepError(f"{path}: {where}: {scen!r}: no such file ({scenario})")
    return scenario


_CASE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def _load_cases(path: Path, raw: Any, scenario: Path | None, grid: Mapping,
                fixed: Mapping) -> list[Case]:
    """``[cases.NAME]`` tables: ``scenario`` (default: the sweep's), ``set`` (overrides) and
    ``requires`` (files, relative to the sweep file, without which the case is skipped)."""
    if not isinstance(raw, Mapping) or not raw:
        raise SweepError(f"{path}: cases: expected tables [cases.NAME], got {raw!r}")
    cases = []
    for name, body in raw.items():
        where = f"cases.{name}"
        if not _CASE_NAME.match(name):
            raise SweepError(f"{path}: {where}: a case name is letters, digits and . _ + - "
                             f"(starting with a letter or digit)")
        if not isinstance(body, Mapping):
            raise SweepError(f"{path}: {where}: expected a table (scenario, set, requires), "
                             f"got {body!r}")
        unknown = [k for k in body if k not in CASE_KEYS]
        if unknown:
            raise SweepError(f"{path}: {where}.{unknown[0]}: unknown key (accepted: "
                             f"{', '.join(CASE_KEYS)})")
        if "scenario" in body:
            scen = _scenario_path(path, f"{where}.scenario", body["scenario"])
        elif scenario is not None:
            scen = scenario
        else:
            raise SweepError(f"{path}: {where}.scenario: missing, and the sweep names no "
                             f"scenario = ... for it")
        sets = body.get("set", {})
        if not isinstance(sets, Mapping):
            raise SweepError(f"{path}: {where}.set: expected a table of KEY = value, got "
                             f"{sets!r}")
        sets = _flatten(sets)
        for k in sets:
            if k in grid or k in fixed:
                other = "grid" if k in grid else "fixed"
                raise SweepError(f"{path}: {where}.set.\"{k}\": also a {other} key; give it in "
                                 f"one place")
            if k == "seed":
                raise SweepError(f"{path}: {where}.set.\"seed\": seeds are the sweep's; use "
                                 f"seeds = [...] or repetitions = N")
        req = body.get("requires", [])
        if isinstance(req, str):
            req = [req]
        if not isinstance(req, list) or not all(isinstance(f, str) and f for f in req):
            raise SweepError(f"{path}: {where}.requires: expected a list of file paths, got "
                             f"{req!r}")
        cases.append(Case(name, scen, sets, list(req), path.parent))
    return cases


def _no_repeats(values: Sequence, where: str) -> None:
    """A grid key's values must differ (each is a point)."""
    seen = set()
    for x in values:
        ident = json.dumps(x, sort_keys=True, default=str)
        if ident in seen:
            raise SweepError(f"{where}: value {x!r} is listed twice")
        seen.add(ident)


def _base_seed(path: Path, scenario: Path, fixed: Mapping[str, Any]) -> int:
    """The seed repetitions count from: ``fixed.seed``, else the scenario's ``seed``, else 1."""
    if "seed" in fixed:
        s = fixed["seed"]
        if not _seed_ok(s):
            raise SweepError(f"{path}: fixed.\"seed\": expected an integer >= 0, got {s!r}")
        return s
    tomllib = _toml()
    try:
        doc = tomllib.loads(scenario.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise SweepError(f"{scenario}: cannot read the scenario: {_one_line(e)}") from None
    s = doc.get("seed", 1)
    if not _seed_ok(s):
        raise SweepError(f"{scenario}: seed: expected an integer >= 0, got {s!r}")
    return s


def _value_text(v: Any) -> str:
    """A grid value as written, for labels: strings bare, everything else as TOML."""
    if isinstance(v, str):
        return v
    from . import toml_literal

    return toml_literal(v)


_UNSAFE = re.compile(r"[^A-Za-z0-9._+=,-]+")
_MAX_ID = 120


def _short_names(keys: Sequence[str]) -> dict[str, str]:
    """The label of each grid key: its last dotted part, or more of it where that is ambiguous."""
    names = {}
    for k in keys:
        parts = k.split(".")
        for n in range(1, len(parts) + 1):
            cand = ".".join(parts[-n:])
            if sum(1 for o in keys if o == cand or o.endswith("." + cand)) == 1:
                names[k] = cand
                break
        else:
            names[k] = k
    return names


def expand_points(spec: SweepSpec, cases: Sequence[Case] | None = None) -> list[Point]:
    """Every case (slowest; default: all of them) times every combination of the grid (in file
    order, last key varying fastest) times every seed.

    A point's id is its readable label made filesystem-safe (``cc=bbr,buffer=50pkt,seed=2``);
    where that is too long or two labels would collide, a hash of the exact values is appended.
    """
    keys = list(spec.grid)
    short = _short_names(keys)
    combos = list(itertools.product(*(spec.grid[k] for k in keys))) if keys else [()]
    points = []
    for case in (spec.all_cases() if cases is None else cases):
        head = [] if case.name is None else [f"case={case.name}"]
        for combo in combos:
            values = dict(zip(keys, combo))
            for seed in spec.seeds:
                parts = head + [f"{short[k]}={_value_text(v)}" for k, v in values.items()]
                parts.append(f"seed={seed}")
                label = " ".join(parts)
                ident = _UNSAFE.sub("_", ",".join(parts)).strip("._") or "point"
                overrides = (list(spec.fixed.items()) + list(case.overrides.items())
                             + list(values.items()))
                points.append(Point(ident, label, values, seed, overrides, case.name))
    counts: dict[str, int] = {}
    for p in points:
        counts[p.id] = counts.get(p.id, 0) + 1
    for p in points:
        if counts[p.id] > 1 or len(p.id) > _MAX_ID:
            head = [] if p.case is None else [["case", p.case]]
            exact = json.dumps(head + [[k, v] for k, v in p.values.items()]
                               + [["seed", p.seed]], ensure_ascii=True, default=str)
            digest = hashlib.sha256(exact.encode()).hexdigest()[:10]
            p.id = f"{p.id[:_MAX_ID - 11]}-{digest}"
    return points


# --------------------------------------------------------------------------------------------
# Running one point (in a worker process, a Ray task, or in-process)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _simulate(text: str, source: str, base_dir: str, overrides, seed: int):
    """Run a scenario given as text; return ``(summary, timeseries, queue, extra)``, the tables
    as the engine's columns (:class:`rove.results.RawTable`: written from Rust, no Arrow on the
    way); ``extra`` maps further results files to their tables (``radio.parquet`` when the
    scenario has a radio cell, ``features.parquet`` when recording controllers ran, as
    ``rove run`` writes them), or is ``None``."""
    from . import _core, _overrides, drive
    from .results import (FEATURES_FILE, QUEUE_COLUMNS, RADIO_FILE, TIMESERIES_COLUMNS,
                          RawTable, summary_with_wall)

    t0 = time.perf_counter()
    sim = _core.Simulation(text, source, base_dir, _overrides(overrides), seed)
    drive(sim)
    raw = sim.finish()
    summary = summary_with_wall(raw["summary_json"], time.perf_counter() - t0)
    extra = {}
    if raw.get("radio") is not None:
        extra[RADIO_FILE] = RawTable.from_columns(raw["radio"])
    features = RawTable.from_feature_logs(raw.get("features") or [])
    if features is not None:
        extra[FEATURES_FILE] = features
    extra = extra or None
    return (summary, RawTable.from_columns(raw["timeseries"], TIMESERIES_COLUMNS),
            RawTable.from_columns(raw["queue"], QUEUE_COLUMNS), extra)


def _error_text(e: BaseException) -> str:
    names = {c.__name__ for c in type(e).__mro__}
    if names & {"ScenarioError", "ResultsError", "UnitError"}:
        return _one_line(e)
    return f"{type(e).__name__}: {_one_line(e)}"


def run_point(text: str, source: str, base_dir: str, overrides, seed: int,
              out: str | None) -> dict:
    """Run one point. With ``out`` the worker writes the results directory itself and returns
    ``{"status", "error", "wall_s"}``; without it (Ray, where the driver's disk may not be the
    worker's) it also returns ``"results"``: the summary and tables for the driver to write."""
    t0 = time.perf_counter()
    try:
        summary, ts, q, extra = _simulate(text, source, base_dir, overrides, seed)
        if out is not None:
            from .results import write_results

            write_results(out, summary, ts, q, extra=extra, durable=False)
            return {"status": "ok", "error": None, "wall_s": time.perf_counter() - t0}
        return {"status": "ok", "error": None, "wall_s": time.perf_counter() - t0,
                "results": (summary, ts, q, extra)}
    except Exception as e:  # noqa: BLE001 - a failed point is recorded, not fatal
        return {"status": "failed", "error": _error_text(e), "wall_s": time.perf_counter() - t0}


def _worker_init() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (it stops the workers with SIGTERM,
    which must then end the worker rather than run the CLI's handler inherited by fork)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


# --------------------------------------------------------------------------------------------
# The sweep


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _fingerprint(spec: SweepSpec, texts: Mapping[str | None, str]) -> dict:
    """What makes finished points of an earlier run reusable: the scenario text (each case's,
    with its overrides) and the fixed overrides. The grid, the seeds and the cases may grow;
    points are identified by their values."""
    fixed = {k: _value_text(v) for k, v in spec.fixed.items()}
    if not spec.cases:
        return {"scenario": str(spec.scenario), "scenario_sha256": _sha256(texts[None]),
                "fixed": fixed}
    cases = {c.name: {"scenario": str(c.scenario), "scenario_sha256": _sha256(texts[c.name]),
                      "set": {k: _value_text(v) for k, v in c.overrides.items()}}
             for c in spec.cases}
    return {"cases": cases, "fixed": fixed}


def _write_atomically(path: Path, data: bytes) -> None:
    from .results import write_bytes_atomically

    write_bytes_atomically(path, data)


def _prepare_out(out: Path, spec: SweepSpec, texts: Mapping[str | None, str]) -> None:
    if out.exists() and not out.is_dir():
        raise SweepError(f"{out}: exists and is not a directory (-o names the sweep's directory)")
    fp = _fingerprint(spec, texts)
    manifest = out / SWEEP_FILE
    old = None
    if manifest.is_file():
        try:
            old = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise SweepError(f"{manifest}: unreadable: {_one_line(e)}") from None
        for key in ("scenario_sha256", "fixed"):
            if old.get(key) != fp.get(key):
                what = "the scenario file" if key == "scenario_sha256" else "[fixed]"
                raise SweepError(f"{out}: holds the results of a different sweep ({what} changed "
                                 f"since); resume only with the same scenario and [fixed], or "
                                 f"write to a new directory")
        old_cases, new_cases = old.get("cases"), fp.get("cases")
        if (old_cases is None) != (new_cases is None):
            raise SweepError(f"{out}: holds the results of a different sweep (one with"
                             f"{'out' if old_cases is None else ''} [cases]); write to a new "
                             f"directory")
        for name in sorted(set(old_cases or ()) & set(new_cases or ())):
            if old_cases[name] != new_cases[name]:
                raise SweepError(f"{out}: holds the results of a different sweep (case {name}'s "
                                 f"scenario or overrides changed since); write to a new "
                                 f"directory")
        if new_cases is not None:  # cases may be added: keep the old ones' records too
            fp["cases"] = {**old_cases, **new_cases}
    elif out.is_dir() and any(out.iterdir()):
        if not (out / RUNS_DIR).is_dir():
            raise SweepError(f"{out}: exists and is not a sweep directory (no {SWEEP_FILE}); "
                             f"choose a new or empty directory")
    (out / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    for k in ("title", "description"):  # for the report; not part of the fingerprint
        if getattr(spec, k) is not None:
            fp[k] = getattr(spec, k)
    if fp != old:
        _write_atomically(manifest, (json.dumps(fp, indent=2) + "\n").encode())
    # Left-overs of an interrupted run: hidden temporary directories of the atomic writer.
    for tmp in (out / RUNS_DIR).glob(".*.partial-*"):
        shutil.rmtree(tmp, ignore_errors=True)


def _is_done(run_dir: Path) -> bool:
    """A point is done when its results directory is there and whole: points are written
    without fsync (``durable=False``), so after a machine crash a directory may be present
    with files not on disk; such a point runs again."""
    from .results import is_whole

    return (run_dir / "summary.json").is_file() and is_whole(run_dir)


def check_points(spec: SweepSpec, sources: Mapping[str | None, tuple], parallel: int = 1,
                 no_limit: bool = False, cases: Sequence[Case] | None = None) -> int:
    """Count the sweep's points and check every grid value against each case's scenario before
    anything runs; return the count.

    ``sources`` maps each case's name to its scenario's ``(text, source, base_dir)``; ``cases``
    are the cases to run (default: all). The count is computed, not expanded (a grid of 10^8
    points is refused in microseconds, see :data:`rove.guards.MAX_SWEEP_POINTS`). Each grid value
    is checked in one variant of each case: the first value of every key, then each other value
    of each key with the rest at their first values (so a misspelt key or a bad value fails
    here, exit 2, naming the grid key and case); every variant must also fit in memory,
    ``parallel`` of them at once.
    """
    from . import _core, _overrides
    from . import guards

    cases = spec.all_cases() if cases is None else list(cases)
    count = len(spec.seeds) * len(cases)
    for values in spec.grid.values():
        count *= len(values)
    guards.check_sweep_size(count, str(spec.path), no_limit=no_limit)
    first = {k: v[0] for k, v in spec.grid.items()}
    variants: list[tuple[str, dict]] = [("[fixed] and the first grid values", first)]
    for k, values in spec.grid.items():
        for x in values[1:]:
            variants.append((f"grid.\"{k}\" = {_value_text(x)}", {**first, k: x}))
    biggest = None
    for case in cases:
        text, source, base_dir = sources[case.name]
        at = "" if case.name is None else f"cases.{case.name}: "
        for where, values in variants:
            ovr = _overrides(list(spec.fixed.items()) + list(case.overrides.items())
                             + list(values.items()))
            try:
                est = guards.estimate(text, source, base_dir, ovr, spec.seeds[0])
                guards.check(est, source, no_limit=no_limit)
                _core.validate(text, source, base_dir, ovr, spec.seeds[0])
            except (_core.ScenarioError, guards.LimitError) as e:
                raise SweepError(f"{spec.path}: {at}{where}: {_one_line(e)}") from None
            if biggest is None or est["memory_bytes"] > biggest["memory_bytes"]:
                biggest = est
    if biggest is not None and min(parallel, count) > 1:
        try:
            guards.check(biggest, spec.path.name, no_limit=no_limit,
                         parallel=min(parallel, count))
        except guards.LimitError as e:
            raise SweepError(f"{spec.path}: {_one_line(e)}") from None
    return count


def run_sweep(path: str | os.PathLike, out: str | os.PathLike, jobs: int | None = None,
              ray: str | None = None, log: Callable[[str], None] | None = None,
              no_limit: bool = False):
    """Run (or resume) a sweep; return ``(summary_table, failures)``.

    ``summary_table`` is the Arrow table written to ``DIR/summary.parquet``; ``failures`` is the
    list written to ``DIR/failures.json`` (``[]`` when every point completed). ``log`` receives
    one line per finished point. The grid is counted and checked first (:func:`check_points`);
    ``no_limit`` lifts its size and memory limits.
    """
    return run_spec(load_sweep(path), out, jobs=jobs, ray=ray, log=log, no_limit=no_limit)


def each_spec(scenario: str | os.PathLike, each: Sequence[tuple[str, list]],
              fixed: Sequence[tuple[str, Any]] = (), seed: int | None = None) -> SweepSpec:
    """The sweep ``rove run SCENARIO --each KEY=V1,V2 ...`` stands for: the scenario once per
    value (per combination, with several keys), the ``--set`` overrides fixed, one seed (the
    scenario's, or ``seed``)."""
    path = Path(scenario)
    grid: dict[str, list] = {}
    for key, values in each:
        if key in grid:
            raise SweepError(f"--each {key}: given twice; list all its values in one --each")
        if not values:
            raise SweepError(f"--each {key}: no values; write --each {key}=A,B")
        _no_repeats(values, f"--each {key}")
        grid[key] = list(values)
    fixed_map = dict(fixed)
    for k in fixed_map:
        if k in grid:
            raise SweepError(f"--set {k}: also an --each key; give it in one place")
    seeds = [seed] if seed is not None else [_base_seed(path, path, fixed_map)]
    return SweepSpec(path=path, scenario=path, grid=grid, fixed=fixed_map, seeds=seeds)


def run_spec(spec: SweepSpec, out: str | os.PathLike, jobs: int | None = None,
             ray: str | None = None, log: Callable[[str], None] | None = None,
             no_limit: bool = False):
    """Run (or resume) the sweep ``spec`` into ``out`` (see :func:`run_sweep`)."""
    return run_specs([(spec, out)], jobs=jobs, ray=ray, log=log, no_limit=no_limit)[0]


def run_specs(items: Sequence[tuple[SweepSpec, str | os.PathLike]], jobs: int | None = None,
              ray: str | None = None, log: Callable[[str], None] | None = None,
              no_limit: bool = False) -> list[tuple[Any, list]]:
    """Run (or resume) several sweeps, each ``(spec, out)``, with one set of workers; return
    each one's ``(summary_table, failures)`` as :func:`run_sweep` does.

    Every sweep is checked and its directory prepared first (a bad one raises
    :class:`SweepError` before any point runs); then the points still to run, of all of them,
    go to the same workers, the costliest first (:func:`_schedule`), so that no worker waits for
    the end of one sweep before starting the next and the last points to finish are short ones.
    Each sweep's directory, progress lines and table are what running it alone gives.
    """
    if ray is not None:
        if not isinstance(ray, str) or not ray.strip():
            raise SweepError(f"--ray: expected a cluster address or 'local', got {ray!r}")
        _import_ray()
    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise SweepError(f"--jobs: expected an integer >= 1, got {jobs!r}")
    outs = [Path(out).resolve() for _, out in items]
    if len(set(outs)) != len(outs):
        raise SweepError("run_specs: two sweeps share an output directory")
    parallel = 1 if ray is not None else (jobs or default_jobs())
    sweeps = [_SweepRun.prepare(spec, Path(out), parallel, log, no_limit)
              for spec, out in items]
    tasks = [(s, p) for s in sweeps for p in s.todo]
    if tasks:
        if ray is not None:
            _run_ray(ray, _schedule(tasks, parallel=2))
        else:
            _run_local(jobs, tasks)
    return [s.finish() for s in sweeps]


@dataclass
class _SweepRun:
    """One sweep being run: its points, those left to run, and the failures so far."""

    spec: SweepSpec
    out: Path
    sources: dict                   # case name -> its scenario's (text, source, base_dir)
    points: list[Point]
    todo: list[Point]
    skipped: list[dict]
    log: Callable[[str], None] | None
    failures: dict = field(default_factory=dict)
    done: int = 0

    @classmethod
    def prepare(cls, spec: SweepSpec, out: Path, parallel: int,
                log: Callable[[str], None] | None, no_limit: bool) -> "_SweepRun":
        """Check the sweep, prepare its directory and find the points left to run."""
        from . import _scenario_source

        sources = {c.name: _scenario_source(c.scenario) for c in spec.all_cases()}
        cases, skipped = [], []
        for c in spec.all_cases():
            missing = c.missing()
            if missing:
                skipped.append({"case": c.name, "missing": missing})
                if log is not None:
                    log(f"case {c.name} skipped: {missing[0]} is absent")
            else:
                cases.append(c)
        check_points(spec, sources, parallel=parallel, no_limit=no_limit, cases=cases)
        _prepare_out(out, spec, {k: v[0] for k, v in sources.items()})
        points = expand_points(spec, cases)
        runs = out / RUNS_DIR
        todo = [p for p in points if not _is_done(runs / p.id)]
        done = len(points) - len(todo)
        if log is not None and done and todo:
            log(f"resuming {out}: {done} of {len(points)} points already complete")
        return cls(spec, out, sources, points, todo, skipped, log, done=done)

    @property
    def runs(self) -> Path:
        return self.out / RUNS_DIR

    def args(self, p: Point, out: bool = True) -> tuple:
        """``run_point``'s arguments for point ``p`` (``out=False``: return the results)."""
        return (*self.sources[p.case], p.overrides, p.seed,
                str(self.runs / p.id) if out else None)

    def finished(self, p: Point, res: dict) -> None:
        self.done += 1
        if res["status"] == "ok":
            self.failures.pop(p.id, None)
            status = "ok"
        else:
            self.failures[p.id] = {"point": p.id, "seed": p.seed,
                                   "values": {k: v for k, v in p.values.items()},
                                   "error": res["error"]}
            if p.case is not None:
                self.failures[p.id]["case"] = p.case
            status = f"FAILED: {res['error']}"
        if self.log is not None:
            self.log(f"[{self.done}/{len(self.points)}] {p.label}: {status} "
                     f"{res['wall_s']:.2f} s")

    def finish(self) -> tuple[Any, list]:
        """Write ``summary.parquet``, ``failures.json`` and ``skipped.json``; return the table
        and the failures."""
        fails = [self.failures[k] for k in sorted(self.failures)]
        table = summary_table(self.spec, self.points, self.runs)
        from .results import replace_atomically, write_parquet

        replace_atomically(self.out / SUMMARY_TABLE, lambda tmp: write_parquet(table, tmp))
        for name, entries in ((FAILURES_FILE, fails), (SKIPPED_FILE, self.skipped)):
            if entries:
                _write_atomically(self.out / name,
                                  (json.dumps(entries, indent=2, ensure_ascii=False,
                                              default=str) + "\n").encode())
            else:
                try:
                    (self.out / name).unlink()
                except FileNotFoundError:
                    pass
        return table, fails


def _schedule(tasks: list, parallel: int) -> list:
    """The order to hand ``tasks`` (``(sweep, point)`` pairs) to ``parallel`` workers.

    One worker: file order (each sweep's points as :func:`expand_points` lists them). More:
    longest first, by the engine's estimate of the point's events (``rove.guards.estimate``,
    simulated time times the link rates; within a factor of two of the real count), so that the
    last points to start are short and no worker sits idle while another finishes a long one
    (the LPT rule: Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Appl. Math.
    17(2), 1969, makespan at most 4/3 of the optimum). Ties keep file order. One estimate per
    case and grid combination (the seeds of a combination cost the same); a point the scenario
    rejects costs 0 and fails at once when it runs.
    """
    if parallel <= 1 or len(tasks) <= 1:
        return list(tasks)
    from . import _overrides
    from . import guards

    costs: dict[tuple, float] = {}

    def cost(task) -> float:
        s, p = task
        key = (id(s), p.case, json.dumps(p.overrides, sort_keys=True, default=str))
        if key not in costs:
            text, source, base_dir = s.sources[p.case]
            try:
                est = guards.estimate(text, source, base_dir, _overrides(p.overrides), p.seed)
                costs[key] = float(est["events"])
            except Exception:  # noqa: BLE001 - a rejected point: it fails when it runs
                costs[key] = 0.0
        return costs[key]

    return sorted(tasks, key=lambda t: -cost(t))


def default_jobs() -> int:
    """The CPUs this process may use (its affinity mask, which containers narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _warm_imports() -> None:
    """Import what running a point needs, once, in this process: the pool's workers are forked
    from it and inherit the modules instead of importing them on their first point."""
    from . import _core, drive, results  # noqa: F401


_SHARED_POOL: list = []        # the pool of an active worker_pool() block, if any


@contextlib.contextmanager
def worker_pool(jobs: int | None):
    """Keep one pool of ``jobs`` worker processes for every sweep run inside the block (each
    :func:`run_specs` call otherwise starts its own). The workers are forked here, at once:
    ``rove reproduce`` enters the block before it starts any thread (its analyses run in
    threads), and forking a process while another thread holds a lock can leave that lock held
    for good in the child."""
    jobs = jobs or default_jobs()
    if jobs <= 1 or _SHARED_POOL:
        yield
        return
    pool = _new_pool(jobs)
    _SHARED_POOL.append(pool)
    try:
        yield
    finally:
        _SHARED_POOL.clear()
        pool.shutdown(wait=True, cancel_futures=True)


def _new_pool(jobs: int):
    from concurrent.futures import ProcessPoolExecutor

    _warm_imports()
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
    pool.submit(int).result()        # fork every worker now (fork starts them all at once)
    return pool


def _run_local(jobs, tasks) -> None:
    """Run ``tasks`` (``(sweep, point)`` pairs) in this process (one job) or in a pool of
    worker processes: the :func:`worker_pool` one if a block is active, else one that lives
    until every task is done."""
    jobs = min(jobs or default_jobs(), len(tasks))
    if jobs == 1:
        for s, p in tasks:
            s.finished(p, run_point(*s.args(p)))
        return
    from concurrent.futures import FIRST_COMPLETED, wait

    tasks = _schedule(tasks, jobs)
    if _SHARED_POOL and getattr(_SHARED_POOL[0], "_broken", False):   # a worker died earlier
        _SHARED_POOL.clear()         # worker_pool() still shuts it down; this call starts its own
    shared = bool(_SHARED_POOL)
    pool = _SHARED_POOL[0] if shared else _new_pool(jobs)
    try:
        pending = {pool.submit(run_point, *s.args(p)): (s, p) for s, p in tasks}
        while pending:
            ready, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(ready, key=lambda f: (str(pending[f][0].out), pending[f][1].id)):
                s, p = pending.pop(fut)
                try:
                    res = fut.result()
                except Exception as e:  # noqa: BLE001 - e.g. a worker killed by the OOM killer
                    res = {"status": "failed", "error": f"worker died: {_error_text(e)}",
                           "wall_s": 0.0}
                s.finished(p, res)
    except BaseException:
        # Ctrl-C or SIGTERM: stop at once. Points not started are dropped; a worker stopped in
        # the middle of writing leaves only a hidden ".NAME.partial-*" directory (removed by the
        # next run), never a results directory that looks complete.
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                proc.terminate()
            except Exception:  # noqa: BLE001 - already gone
                pass
        pool.shutdown(wait=True, cancel_futures=True)
        _SHARED_POOL.clear()         # stopped: a later call in the block starts its own pool
        raise
    if not shared:
        pool.shutdown(wait=True)


def _import_ray():
    try:
        import ray
    except ImportError:
        raise SweepError("--ray: install ray to use --ray (pip install 'ray[default]'); it is "
                         "not one of rove's default dependencies") from None
    return ray


def _run_ray(address: str, tasks) -> None:
    ray_mod = _import_ray()

    import logging

    started = not ray_mod.is_initialized()
    if started:
        opts = dict(log_to_driver=False, logging_level=logging.ERROR)
        try:
            if address == "local":
                ray_mod.init(include_dashboard=False, **opts)
            else:
                ray_mod.init(address=address, **opts)
        except Exception as e:  # noqa: BLE001 - a bad address, a cluster that is down, ...
            raise SweepError(f"--ray {address}: cannot start or reach Ray: {_error_text(e)} "
                             f"(give a cluster address such as 'ray://HOST:10001', 'auto', "
                             f"or 'local')") from None
    try:
        _ray_tasks(ray_mod, tasks)
    finally:
        if started:
            ray_mod.shutdown()


def _ray_tasks(ray_mod, tasks) -> None:
    task = ray_mod.remote(run_point)
    refs = {task.remote(*s.args(p, out=False)): (s, p) for s, p in tasks}
    pending = list(refs)
    try:
        _ray_collect(ray_mod, refs, pending)
    except BaseException:
        for ref in refs:  # Ctrl-C: points not yet finished are not left running on the cluster
            try:
                ray_mod.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - finished already
                pass
        raise


def _ray_collect(ray_mod, refs, pending) -> None:
    from .results import write_results

    while pending:
        ready, pending = ray_mod.wait(pending, num_returns=1)
        for ref in ready:
            s, p = refs[ref]
            try:
                res = ray_mod.get(ref)
            except Exception as e:  # noqa: BLE001 - a lost task or worker
                res = {"status": "failed", "error": f"ray task failed: {_error_text(e)}",
                       "wall_s": 0.0}
            if res["status"] == "ok":
                summary, ts, q, extra = res.pop("results")
                write_results(s.runs / p.id, summary, ts, q, extra=extra, durable=False)
            s.finished(p, res)


# --------------------------------------------------------------------------------------------
# The summary table


def _nullable(values: Sequence, dtype) -> "pa.Array":
    """A primitive Arrow array (``None`` -> null), built from buffers: ``pa.array`` on a list
    imports pandas (0.3 s), which a sweep of quick runs would spend mostly on that."""
    import numpy as np
    import pyarrow as pa

    from .results import _from_numpy

    valid = np.array([v is not None for v in values], dtype=bool)
    if np.dtype(dtype) == np.bool_:
        data = np.packbits(np.array([bool(v) for v in values], dtype=bool), bitorder="little")
        kind = pa.bool_()
    else:
        data = np.array([0 if v is None else v for v in values], dtype=dtype)
        if valid.all():
            return _from_numpy(data)
        kind = pa.from_numpy_dtype(data.dtype)
    bitmap = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(kind, len(values), [bitmap, pa.py_buffer(data)],
                                 null_count=int((~valid).sum()))


def _strings(values: Sequence) -> "pa.Array":
    """Dictionary-encoded strings, like the other results files."""
    from .results import _dictionary_array

    if any(v is None for v in values):
        import pyarrow as pa

        return pa.array(values, type=pa.string()).dictionary_encode()
    return _dictionary_array([str(v) for v in values])


def _grid_array(values: list):
    kinds = {type(v) for v in values}
    if kinds <= {bool}:
        return _nullable(values, bool)
    if kinds <= {int}:
        return _nullable(values, "i8") if all(-2**63 <= v < 2**63 for v in values) else \
            _strings([_value_text(v) for v in values])
    if kinds <= {int, float}:
        return _nullable([float(v) for v in values], "f8")
    # strings, or mixed or composite values: as written (strings bare, others as TOML)
    return _strings([_value_text(v) for v in values])


def summary_table(spec: SweepSpec, points: Sequence[Point], runs: Path):
    """One row per flow per complete point, sorted by point id then flow order."""
    import pyarrow as pa

    rows: list[dict] = []
    link_names: list[str] = []
    extra: list[str] = []
    for p in sorted(points, key=lambda p: p.id):
        f = runs / p.id / "summary.json"
        if not f.is_file():
            continue
        try:
            s = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise SweepError(f"{f}: unreadable: {_one_line(e)}") from None
        links = {}
        for link in s.get("links", []):
            name = str(link.get("name"))
            if name not in link_names:
                link_names.append(name)
            links[name] = link
        for flow in s.get("flows", []):
            row = {"point": p.id, "seed": p.seed, "case": p.case,
                   **{k: p.values[k] for k in spec.grid}}
            for k, v in flow.items():
                if k == "name":
                    row["flow"] = v
                elif k not in FLOW_COLUMNS and not isinstance(v, (list, dict)):
                    if k not in extra:
                        extra.append(k)
                    row[k] = v
                else:
                    row[k] = v
            row["jain_index"] = s.get("jain_index")
            for name, link in links.items():
                for fld in LINK_FIELDS:
                    row[f"link_{name}_{fld}"] = link.get(fld)
            rows.append(row)

    cols: dict[str, Any] = {}
    cols["point"] = _strings([r["point"] for r in rows])
    cols["seed"] = _nullable([r["seed"] for r in rows], "u8")
    if spec.cases:
        cols["case"] = _strings([r["case"] for r in rows])
    for k in spec.grid:
        cols[k] = _grid_array([r[k] for r in rows]) if rows else _grid_array(list(spec.grid[k]))[:0]
    for k in ("flow", "cc"):
        cols[k] = _strings([r.get(k) for r in rows])
    numeric = [c for c in FLOW_COLUMNS if c not in ("flow", "cc")] + extra + ["jain_index"]
    numeric += [f"link_{n}_{fld}" for n in link_names for fld in LINK_FIELDS]
    for c in numeric:
        vals = [r.get(c) for r in rows]
        is_int = c in _INT_FIELDS or (c.startswith("link_") and
                                      any(c.endswith("_" + f) for f in _INT_FIELDS))
        if all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            if is_int and all(v is None or float(v).is_integer() for v in vals):
                cols[c] = _nullable([None if v is None else int(v) for v in vals], "i8")
            else:
                cols[c] = _nullable([None if v is None or (isinstance(v, float) and math.isnan(v))
                                     else float(v) for v in vals], "f8")
        else:
            cols[c] = _strings([None if v is None else str(v) for v in vals])
    return pa.Table.from_arrays(list(cols.values()), names=list(cols))


def sweep(path: str | os.PathLike, out: str | os.PathLike, jobs: int | None = None,
          ray: str | None = None, progress: bool = False, no_limit: bool = False):
    """Run (or resume) the sweep file ``path`` into ``out``; return the summary DataFrame.

    The DataFrame is ``DIR/summary.parquet``; ``df.attrs["failures"]`` lists the failed points
    (also in ``DIR/failures.json``). ``progress=True`` prints one line per finished point on
    stderr. Raises :class:`SweepError` for a bad sweep file or output directory.
    """
    log = (lambda line: print(line, file=sys.stderr, flush=True)) if progress else None
    table, failures = run_sweep(path, out, jobs=jobs, ray=ray, log=log, no_limit=no_limit)
    df = table.to_pandas()
    df.attrs["failures"] = failures
    return df
