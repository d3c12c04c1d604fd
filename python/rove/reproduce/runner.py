"""Running a reproduction's experiments as sweeps.

An experiment is a committed sweep file (``scenarios/<study>/sweeps/NAME.toml``: a base scenario
and the full grid) run once per *series* (an algorithm with its parameters, applied to some of
the scenario's flows) and per *setting* (extra fixed keys, e.g. one network's trace). For each
pair :func:`run_series` writes a derived sweep file — the committed one with the series' and
setting's keys added to ``[fixed]`` and, in quick mode, a smaller grid, fewer seeds and shorter
runs — and runs it into its own directory, so every point is an ordinary sweep point: parallel,
resumable, written atomically. :func:`run_batch` runs all the pairs of an experiment with one
set of workers (:func:`rove.sweeps.run_specs`), the costliest points of all of them first.

A series whose keys the engine rejects (say a ``cc_params`` key this build does not know) is not
run: it is reported as not available, with the engine's message.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

__all__ = ["Series", "Setting", "Quick", "SeriesRun", "SeriesRequest", "derived_spec",
           "run_series", "run_batch", "repo_root", "safe_name"]


def repo_root() -> Path:
    """The source checkout this package lives in (``python/rove/reproduce/`` -> root)."""
    return Path(__file__).resolve().parents[3]


_UNSAFE = re.compile(r"[^A-Za-z0-9._+=-]+")


def safe_name(text: str) -> str:
    """``"bbr2 (α=20%)"`` -> ``"bbr2_20_"``: a directory name."""
    return _UNSAFE.sub("_", text).strip("._") or "x"


@dataclass(frozen=True)
class Series:
    """An algorithm with its parameters, run on the flows with the given indices."""

    key: str                                   # directory name and table key: "bbr2-a20"
    label: str                                 # for tables and plots: "BBRv2(20%, 0.3)"
    cc: str
    params: Mapping[str, Any] = field(default_factory=dict)
    flows: tuple[int, ...] = (0,)
    # Further overrides, applied before cc and cc_params: a multipath scheme's scheduler and
    # coupling ({"flows.0.scheduler": "blest"}), or a whole flow replaced ({"flows.0": {...}}).
    extra: Mapping[str, Any] = field(default_factory=dict)

    def overrides(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        for i in self.flows:
            out[f"flows.{i}.cc"] = self.cc
            out[f"flows.{i}.cc_params"] = dict(self.params)
        return out


@dataclass(frozen=True)
class Setting:
    """Extra fixed keys for one network of an experiment (``key`` names it in tables);
    ``cases``, when given, keeps only these cases of a sweep file with ``[cases]`` (a series
    that differs by case, such as a per-case plan, runs each case as its own setting)."""

    key: str
    label: str
    fixed: Mapping[str, Any] = field(default_factory=dict)
    cases: tuple[str, ...] | None = None


DEFAULT_SETTING = Setting("default", "default")


@dataclass(frozen=True)
class Quick:
    """How quick mode shrinks a sweep: grid keys replaced by shorter lists, fixed keys added
    (``duration``), the seeds, and (``cases``) the cases of a sweep with ``[cases]`` kept."""

    grid: Mapping[str, list] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    seeds: Sequence[int] = (1,)
    cases: Sequence[str] | None = None


@dataclass
class SeriesRun:
    """What one (series, setting) sweep gave: its table (one row per flow per point, with
    ``series``, ``series_label``, ``setting`` added) and where its runs are, or why it did not
    run."""

    series: Series
    setting: Setting
    directory: Path
    table: pd.DataFrame | None = None
    failures: list = field(default_factory=list)
    unavailable: str | None = None             # the engine's reason when the series was refused

    def run_dir(self, point: str) -> Path:
        return self.directory / "runs" / point


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    return tomllib


def derived_spec(committed: Path, extra_fixed: Mapping[str, Any], quick: Quick | None,
                 cases: Sequence[str] | None = None) -> dict:
    """The committed sweep file as a dict, with its scenario made absolute, ``extra_fixed``
    added to ``[fixed]``, only ``cases`` kept (when given) and, when ``quick`` is given, its
    grid, fixed keys, seeds and cases shrunk."""
    committed = Path(committed)
    doc = _toml().loads(committed.read_text(encoding="utf-8"))
    scen = Path(doc["scenario"])
    if not scen.is_absolute():
        scen = (committed.parent / scen).resolve()
    doc["scenario"] = str(scen)
    # A case's own scenario is relative to the committed file too; the derived file lives
    # elsewhere.
    for case in doc.get("cases", {}).values():
        if isinstance(case, dict) and "scenario" in case and not Path(case["scenario"]).is_absolute():
            case["scenario"] = str((committed.parent / case["scenario"]).resolve())
    filters = [f for f in (cases, quick.cases if quick is not None else None) if f is not None]
    if filters:
        _keep_cases(committed, doc, filters)
    grid = dict(doc.get("grid", {}))
    fixed = dict(doc.get("fixed", {}))
    if quick is not None:
        for k, v in quick.grid.items():
            if k not in grid:
                raise ValueError(f"{committed}: quick mode shrinks grid key {k!r}, which the "
                                 f"sweep file does not have")
            grid[k] = list(v)
        fixed.update(quick.fixed)
        doc.pop("repetitions", None)
        doc["seeds"] = list(quick.seeds)
    for k in extra_fixed:
        grid.pop(k, None)        # a setting pins a key the full grid varies
    fixed.update(extra_fixed)
    doc["grid"] = grid
    doc["fixed"] = fixed
    if not grid:
        doc.pop("grid")
    return doc


def _keep_cases(committed: Path, doc: dict, filters: Sequence[Sequence[str]]) -> None:
    """Keep only the cases of ``doc`` named in every one of ``filters`` (each name must be a
    case of the committed file)."""
    have = doc.get("cases", {})
    unknown = [c for f in filters for c in f if c not in have]
    if unknown:
        raise ValueError(f"{committed}: no case {', '.join(map(repr, unknown))} (cases: "
                         f"{', '.join(have) or 'none'})")
    doc["cases"] = {name: case for name, case in have.items()
                    if all(name in f for f in filters)}


def _write_spec(path: Path, doc: Mapping) -> None:
    import tomli_w

    from ..results import write_bytes_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomically(path, tomli_w.dumps(dict(doc)).encode("utf-8"))


def check_available(doc: Mapping, series: Series, setting: Setting) -> str | None:
    """``None`` when the engine accepts the series' and setting's keys on the base scenario,
    else the engine's one-line message."""
    import rove

    overrides = {**series.overrides(), **setting.fixed}
    try:
        rove.validate(doc["scenario"], overrides=overrides)
    except rove.ScenarioError as e:
        # "FILE: KEY: unknown parameter; accepted: <a long list>" -> "KEY: unknown parameter"
        text = " ".join(str(e).split())
        text = text.split("; accepted:")[0]
        return text.split(": ", 1)[1] if text.startswith(str(doc["scenario"])) else text
    return None


@dataclass(frozen=True)
class SeriesRequest:
    """One (series, setting) sweep to run: the committed sweep file, the directory, and how
    quick mode shrinks it."""

    committed: Path
    out: Path
    series: Series
    setting: Setting = DEFAULT_SETTING
    quick: Quick | None = None


def run_series(committed: Path, out: Path, series: Series, setting: Setting = DEFAULT_SETTING,
               quick: Quick | None = None, jobs: int = 2,
               log: Callable[[str], None] | None = None) -> SeriesRun:
    """Run ``committed`` for one series and setting into ``out`` (resuming what is there) and
    return its table; a series the engine refuses is returned with ``unavailable`` set."""
    return run_batch([SeriesRequest(committed, out, series, setting, quick)], jobs, log)[0]


def run_batch(requests: Sequence[SeriesRequest], jobs: int = 2,
              log: Callable[[str], None] | None = None) -> list[SeriesRun]:
    """Run every request's sweep (as :func:`run_series` does one) with one set of workers, the
    costliest points of all of them first (:func:`rove.sweeps.run_specs`): a worker never waits
    for the end of one series to start the next. Returns one :class:`SeriesRun` per request,
    in order."""
    from ..sweeps import load_sweep, run_specs

    results: list[SeriesRun] = []
    planned: list[tuple[SeriesRun, Any]] = []          # (its result, (spec, out))
    for req in requests:
        extra = {**req.series.overrides(), **req.setting.fixed}
        doc = derived_spec(req.committed, extra, req.quick, req.setting.cases)
        res = SeriesRun(req.series, req.setting, req.out)
        results.append(res)
        reason = check_available(doc, req.series, req.setting)
        if reason is not None:
            res.unavailable = reason
            if log is not None:
                log(f"  {req.series.label} [{req.setting.label}]: not available in this "
                    f"build: {reason}")
            continue
        # The derived sweep file sits beside the sweep directory (a sweep directory holds only
        # what rove sweep writes).
        spec_path = req.out.parent / f"{req.out.name}.sweep.toml"
        _write_spec(spec_path, doc)
        planned.append((res, (load_sweep(spec_path), req.out)))
    outcomes = run_specs([item for _, item in planned], jobs=jobs, log=None)
    for (res, _), (table, failures) in zip(planned, outcomes):
        _fill(res, table, failures, log)
    return results


def _fill(res: SeriesRun, table, failures: list, log: Callable[[str], None] | None) -> None:
    """Put a sweep's table (with ``series``, ``series_label`` and ``setting`` columns) and its
    failures into ``res``."""
    df = table.to_pandas()
    for col in df.columns:                      # categoricals make concatenation fragile
        if isinstance(df[col].dtype, pd.CategoricalDtype):
            df[col] = df[col].astype(object)
    df.insert(0, "setting", res.setting.key)
    df.insert(0, "series_label", res.series.label)
    df.insert(0, "series", res.series.key)
    res.table = df
    res.failures = list(failures)
    if log is not None:
        n = df["point"].nunique() if len(df) else 0
        log(f"  {res.series.label} [{res.setting.label}]: {n} points"
            + (f", {len(failures)} FAILED (see {res.directory / 'failures.json'})"
               if failures else ""))


def concat(runs: Sequence[SeriesRun]) -> pd.DataFrame:
    """All tables of ``runs`` in one (empty when none ran)."""
    frames = [r.table for r in runs if r.table is not None and len(r.table)]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True, sort=False)


def env_path(name: str) -> Path | None:
    v = os.environ.get(name)
    return Path(v) if v else None
