"""The study-agnostic core of ``rove reproduce``: experiments and their parts, running them
(resumably), the run log, the command line and the report.

A *study* (:class:`Study`) is one source document's (or one question's) experiments. Each
:class:`Experiment` either runs committed sweep files (its :class:`Part` s, once per algorithm
:class:`~rove.reproduce.runner.Series` and per network
:class:`~rove.reproduce.runner.Setting`, see :mod:`rove.reproduce.runner`) or has its own
``run`` function; either way it ends in a :class:`Context` that its ``analyse`` function turns
into a :class:`~rove.reproduce.document.Section` with the claims it checks and their verdicts
(:mod:`rove.reproduce.verdicts`). :func:`main` is every study's command line::

    rove reproduce NAME -o DIR [--quick] [--only EXP[,EXP...]] [-j N] [-q] [study options]

It writes ``DIR/report.md``, ``DIR/report.html`` and ``DIR/report.json`` after every experiment
(so an interrupted run leaves a report of what finished), appends the invocation to
``DIR/reproduce-log.json`` and resumes whatever an earlier invocation left in ``DIR``. The exit
status is 0 when every experiment ran and was analysed, 1 when one crashed or a run failed (its
section says which), 2 for bad options. One pool of worker processes serves the whole study
(:func:`rove.sweeps.worker_pool`); an experiment's series run as one batch, longest points first
(:func:`~rove.reproduce.runner.run_batch`), and its analysis runs in a thread while the next
experiment's points run.

An experiment marked ``counted=False`` measures something the source did not claim (rove's own
addition, an ablation): its section is reported beside the others and is left out of the
report's counts and overall verdict.

Adding a study: a folder ``rove/reproduce/NAME/`` whose ``__init__.py`` defines ``STUDY`` (a
:class:`Study`), and one line in :data:`rove.reproduce.STUDIES`.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from . import document
from .document import Document, Section, Table
from .measures import time_ms
from .runner import (DEFAULT_SETTING, Quick, Series, SeriesRequest, SeriesRun, Setting, concat,
                     derived_spec, repo_root, run_batch)
from ..sweeps import worker_pool
from .verdicts import HOLDS, NOT_MEASURED, combine

__all__ = ["Part", "Experiment", "Context", "Study", "run_experiment", "main", "read_log",
           "pyplot", "save_figure", "one_setting", "records", "run_with_records",
           "accept_sim_only"]


def one_setting(quick: bool) -> tuple[list[Setting], str | None]:
    """The settings of a part that runs one network: the default one."""
    return [DEFAULT_SETTING], None


@dataclass(frozen=True)
class Part:
    """One committed sweep file of an experiment, with its quick plan and its networks:
    ``settings(quick)`` gives the settings to run, or ``([], reason)`` when the part cannot run
    here (say its traces are absent); ``fixed`` keys are added to every setting's."""

    key: str
    sweep: str                                       # file name under the study's sweeps folder
    quick: Quick
    settings: Callable[[bool], tuple[list[Setting], str | None]] = one_setting
    fixed: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Context:
    """What an analysis sees: the experiment's runs, their joint table, where to draw, and
    whatever a custom ``run`` function gathered (``data``)."""

    exp_id: str
    out: Path                              # the report's directory (figures go here)
    quick: bool
    runs: list[SeriesRun] = field(default_factory=list)
    df: pd.DataFrame = field(default_factory=pd.DataFrame)   # all runs' rows (series/setting/part)
    skipped: dict[str, str] = field(default_factory=dict)   # part -> reason it did not run
    durations_s: dict[str, float] = field(default_factory=dict)   # part -> simulated seconds
    options: Mapping[str, Any] = field(default_factory=dict)      # the study's own options
    data: Any = None                       # what a custom run function gathered
    failures: list[str] = field(default_factory=list)             # runs that failed, one line each

    def labels(self) -> dict[str, str]:
        """series key -> label, in run order, for the series that ran."""
        out: dict[str, str] = {}
        for r in self.runs:
            if r.table is not None:
                out.setdefault(r.series.key, r.series.label)
        return out

    def unavailable(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in self.runs:
            if r.unavailable is not None:
                out.setdefault(r.series.key, r.unavailable)
        return out

    def figure(self, name: str) -> Path:
        return self.out / f"{self.exp_id}-{name}.png"


@dataclass(frozen=True)
class Experiment:
    """One experiment: sweep ``parts`` run for every ``series`` (the default runner), or a
    ``run(exp, out, quick, jobs, log, options) -> Context`` of its own; ``analyse`` turns the
    context into the report's section."""

    id: str
    title: str
    series: tuple[Series, ...] = ()
    parts: tuple[Part, ...] = ()
    analyse: Callable[[Context], Section] | None = None
    run: Callable[..., Context] | None = None
    counted: bool = True                    # False: rove's own addition, reported beside

    def __post_init__(self):
        if self.analyse is None:
            raise TypeError(f"experiment {self.id!r}: no analyse function")
        if self.run is None and not self.parts:
            raise TypeError(f"experiment {self.id!r}: neither parts nor a run function")


@dataclass(frozen=True)
class Study:
    """A study: its experiments and what its report and command line say.

    ``intro(info)`` gives the report's first paragraphs (``info``: :class:`RunInfo`);
    ``add_arguments(parser)`` adds the study's own options and ``prepare(args)`` checks them
    (raising :class:`rove.cli.CliError`) and returns the options every experiment's context
    gets; ``sweeps`` is the folder of the committed sweep files its parts name."""

    name: str
    title: str
    description: str
    experiments: tuple[Experiment, ...]
    intro: Callable[["RunInfo"], list[str]]
    quick_help: str
    sweeps: Path | None = None
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    prepare: Callable[[argparse.Namespace], Mapping[str, Any]] | None = None
    default_jobs: int = 2

    @property
    def experiment_ids(self) -> list[str]:
        return [e.id for e in self.experiments]


@dataclass
class RunInfo:
    """What an introduction may say about this invocation."""

    quick: bool
    started: str
    wall_s: float | None                   # None while running
    selected: list[str]
    log: list[dict]
    options: Mapping[str, Any]


# --------------------------------------------------------------------------------------------
# Figures: one pyplot set-up (rove.report's) and one way to write a PNG


def pyplot():
    """matplotlib.pyplot with rove's figure style (headless)."""
    from ..report import _pyplot

    return _pyplot()


def save_figure(fig, path: Path) -> str:
    """Write ``fig`` as a PNG to ``path`` atomically, close it, and return the file name."""
    from ..results import replace_atomically

    plt = pyplot()
    try:
        replace_atomically(path, lambda tmp: fig.savefig(tmp, dpi=90, bbox_inches="tight",
                                                         format="png"))
    finally:
        plt.close(fig)
    return Path(path).name


# --------------------------------------------------------------------------------------------
# Running


def _duration_s(doc: dict) -> float:
    """The simulated seconds of a derived sweep: its fixed ``duration`` or the scenario's."""
    if "duration" in doc.get("fixed", {}):
        return time_ms(doc["fixed"]["duration"]) / 1e3
    from .runner import _toml

    scen = _toml().loads(Path(doc["scenario"]).read_text(encoding="utf-8"))
    return time_ms(scen["duration"]) / 1e3


def run_parts(sweeps: Path, exp: Experiment, out: Path, quick: bool, jobs: int,
              log: Callable[[str], None], options: Mapping[str, Any]) -> Context:
    """The default runner: every part's sweep (a file in ``sweeps``) for every series and
    setting, into ``out/<experiment>/<part>/<series>[/<setting>]`` (resuming what is there).
    A custom ``run`` function may call it with parts it builds itself."""
    requests, parts, skipped, durations = [], [], {}, {}
    for part in exp.parts:
        settings, reason = part.settings(quick)
        if reason is not None:
            skipped[part.key] = reason
            log(f"  part {part.key}: skipped: {reason}")
            continue
        committed = Path(sweeps) / part.sweep
        q = part.quick if quick else None
        durations[part.key] = _duration_s(derived_spec(committed, {}, q))
        for series in exp.series:
            for setting in settings:
                if part.fixed:
                    setting = dataclasses.replace(setting, fixed={**setting.fixed, **part.fixed})
                d = out / exp.id / part.key / series.key
                if setting.key != DEFAULT_SETTING.key:
                    d = d / setting.key
                requests.append(SeriesRequest(committed, d, series, setting, q))
                parts.append(part.key)
    runs = run_batch(requests, jobs, log)       # all of them with one set of workers
    for r, key in zip(runs, parts):
        if r.table is not None:
            r.table.insert(0, "part", key)
    failures = [f"{len(r.failures)} point(s) of {r.series.label} [{r.setting.label}] failed: "
                f"{r.failures[0]['error']} (all in {r.directory / 'failures.json'})"
                for r in runs if r.failures]
    return Context(exp.id, out, quick, runs, concat(runs), skipped, durations, options,
                   failures=failures)


def records(ctx: Context, measure: Callable[[Path, pd.DataFrame], dict]) -> pd.DataFrame:
    """Per-run records of a sweep-run experiment, so that its analysis reads one small table
    (and its tests can hand-make it): one row per run of ``ctx`` with ``series``, ``setting``,
    ``point``, ``case``, ``seed``, the grid values (the sweep table's dotted columns) and
    ``measure(run directory, that run's summary rows)``."""
    out = []
    for r in ctx.runs:
        if r.table is None or not len(r.table):
            continue
        for point, g in r.table.groupby("point", sort=False):
            first = g.iloc[0]
            row = {"series": r.series.key, "setting": r.setting.key, "point": point,
                   "case": first["case"] if "case" in g.columns else "default",
                   "seed": int(first["seed"])}
            row.update({c: first[c] for c in g.columns if "." in c})
            row.update(measure(r.run_dir(point), g))
            out.append(row)
    return pd.DataFrame(out)


def run_with_records(sweeps: Path, measure: Callable[[Path, pd.DataFrame], dict]):
    """An experiment's ``run``: its parts as usual (:func:`run_parts`), then :func:`records`
    into ``ctx.data["runs"]``."""

    def run(exp, out, quick, jobs, log, options) -> Context:
        ctx = run_parts(sweeps, exp, out, quick, jobs, log, options)
        ctx.data = {"runs": records(ctx, measure)}
        return ctx

    return run


def run_experiment(study: Study, exp: Experiment, out: Path, quick: bool, jobs: int,
                   log: Callable[[str], None], options: Mapping[str, Any] | None = None
                   ) -> tuple[Section, list[str]]:
    """Run one experiment and analyse it: its section (failed runs noted in it) and the
    failed runs."""
    return analyse_experiment(exp, run_context(study, exp, out, quick, jobs, log, options))


def run_context(study: Study, exp: Experiment, out: Path, quick: bool, jobs: int,
                log: Callable[[str], None], options: Mapping[str, Any] | None = None
                ) -> Context:
    """Run one experiment's points (its own ``run`` or :func:`run_parts`)."""
    options = dict(options or {})
    if exp.run is not None:
        return exp.run(exp, out, quick, jobs, log, options)
    return run_parts(study.sweeps, exp, out, quick, jobs, log, options)


def analyse_experiment(exp: Experiment, ctx: Context) -> tuple[Section, list[str]]:
    """An experiment's section (failed runs noted in it) and its failed runs."""
    section = exp.analyse(ctx)
    section.counted = exp.counted
    section.notes += ctx.failures
    return section, list(ctx.failures)


def _failed_section(exp: Experiment, e: BaseException) -> Section:
    if os.environ.get("ROVE_DEBUG"):
        raise e
    why = f"{type(e).__name__}: {' '.join(str(e).split())}"
    return Section(exp.title, verdict=NOT_MEASURED, error=why, counted=exp.counted,
                   paragraphs=[f"**This experiment failed:** {why}"])


class _Analysis:
    """One experiment's analysis, in a thread of its own, so that the workers run the next
    experiment's points meanwhile (the analyses read and plot finished runs, with pandas and
    matplotlib, and would leave every worker idle for their duration). One at a time: the
    next starts once this one is joined, so pyplot is never used by two threads at once."""

    def __init__(self, exp: Experiment, ctx: Context, run_s: float):
        import threading

        self.exp, self.ctx, self.run_s = exp, ctx, run_s
        self.result: tuple[Section, list[str]] | None = None
        self.error: BaseException | None = None
        self.analyse_s = 0.0
        self.thread = threading.Thread(target=self._work, name=f"analyse-{exp.id}", daemon=True)
        self.thread.start()

    def _work(self) -> None:
        t0 = time.perf_counter()
        try:
            self.result = analyse_experiment(self.exp, self.ctx)
        except Exception as e:  # noqa: BLE001 - reported as the experiment's failure
            self.error = e
        self.analyse_s = time.perf_counter() - t0

    def join(self) -> tuple[Section, list[str], float]:
        """The section, the failed runs and the experiment's time (its runs and analysis)."""
        self.thread.join()
        if self.error is not None:
            return _failed_section(self.exp, self.error), ["analysis failed"], \
                self.run_s + self.analyse_s
        section, failures = self.result
        return section, failures, self.run_s + self.analyse_s


def _git_describe() -> str:
    try:
        res = subprocess.run(["git", "-C", str(repo_root()), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=5)
        return res.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


LOG_FILE = "reproduce-log.json"


def read_log(out: Path) -> list[dict]:
    """The invocations that wrote ``out`` (``DIR/reproduce-log.json``): a resumed run reruns
    nothing that is complete, so the report's run time is the sum over them."""
    try:
        data = json.loads((Path(out) / LOG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


def _append_log(out: Path, entry: dict) -> list[dict]:
    from ..results import write_bytes_atomically

    log = read_log(out) + [entry]
    write_bytes_atomically(out / LOG_FILE, (json.dumps(log, indent=2) + "\n").encode("utf-8"))
    return log


def runs_text(log: Sequence[dict]) -> str:
    """A sentence on the invocations that wrote a directory and their total time."""
    if not log:
        return ""
    parts = [f"{d.get('started', '?')}: {float(d.get('wall_s', 0)):.0f} s"
             + (" (quick)" if d.get("quick") else "") for d in log]
    total = sum(float(d.get("wall_s", 0)) for d in log)
    return (f" Invocations that wrote this directory (a resumed invocation reruns nothing that "
            f"is complete): {'; '.join(parts)}; total {total:.0f} s.")


def run_line(info: RunInfo) -> str:
    """The paragraph every report has: mode, experiments, when, how long, which commit."""
    mode = ("**quick** (`--quick`: shorter runs, smaller grids, fewer seeds; a smoke test, not "
            "the reference)" if info.quick else "**full**")
    return (f"Mode: {mode}. Experiments: {', '.join(info.selected)}. Started {info.started}; "
            + (f"run time {info.wall_s:.0f} s" if info.wall_s is not None else "in progress")
            + f"; rove commit {_git_describe()}." + runs_text(info.log))


def _summary(done: Sequence[tuple[Experiment, Section, float]]) -> Table:
    rows = []
    for exp, sec, wall in done:
        n = len(sec.claims)
        ok = sum(1 for c in sec.claims if c.verdict == HOLDS)
        verdict = f"**{sec.verdict}**" if exp.counted else f"{sec.verdict} (not counted)"
        rows.append([exp.id, sec.title, verdict, f"{ok} of {n}", f"{wall:.0f} s"])
    return Table(["experiment", "section", "verdict", "claims holding", "wall time"], rows)


# --------------------------------------------------------------------------------------------
# Command line


def accept_sim_only(p: argparse.ArgumentParser) -> None:
    """``--sim-only`` for a study that runs the simulator only: accepted, and it changes
    nothing, so that every study's command line reads alike (``.ci/run``)."""
    p.add_argument("--sim-only", action="store_true",
                   help="accepted for symmetry with the other studies: this study runs the "
                        "simulator only")


def _parse_only(study: Study, values: Sequence[str] | None) -> list[str]:
    from ..cli import CliError

    ids = study.experiment_ids
    if not values:
        return list(ids)
    chosen = []
    for v in values:
        for name in (x.strip() for x in v.split(",")):
            if not name:
                continue
            if name not in ids:
                raise CliError(f"--only: unknown experiment {name!r} (accepted: {', '.join(ids)})")
            if name not in chosen:
                chosen.append(name)
    if not chosen:
        raise CliError(f"--only: no experiment named (accepted: {', '.join(ids)})")
    return [e for e in ids if e in chosen]


def build_parser(study: Study) -> argparse.ArgumentParser:
    from ..cli import _Parser, _positive_int

    p = _Parser(prog=f"rove reproduce {study.name}",
                description=study.description + " Writes DIR/report.md, DIR/report.html and "
                                                "DIR/report.json; resumes an existing DIR.")
    p.add_argument("-o", "--out", metavar="DIR", required=True, help="output directory")
    p.add_argument("--quick", action="store_true", help=study.quick_help)
    p.add_argument("--only", action="append", metavar="EXP[,EXP...]",
                   help=f"run only these experiments ({', '.join(study.experiment_ids)})")
    p.add_argument("-j", "--jobs", type=_positive_int, default=study.default_jobs, metavar="N",
                   help=f"parallel worker processes per sweep (default {study.default_jobs})")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    if study.add_arguments is not None:
        study.add_arguments(p)
    return p


def _run_all(study: Study, selected, out: Path, args, log, options, done: list, write,
             status: int) -> int:
    """Run and analyse the selected experiments in order, each analysis in a thread while the
    next experiment's points run; return the exit status."""

    def settle(analysis: _Analysis) -> None:
        nonlocal status
        section, failures, wall = analysis.join()
        if failures:
            status = 1
        done.append((analysis.exp, section, wall))
        log(f"{analysis.exp.id}: {section.verdict} ({wall:.0f} s)")
        write(None, [])

    analysing: _Analysis | None = None
    for exp in (e for e in study.experiments if e.id in selected):
        log(f"{exp.id}: {exp.title}")
        t0 = time.perf_counter()
        try:
            ctx, crash = run_context(study, exp, out, args.quick, args.jobs, log, options), None
        except KeyboardInterrupt:
            raise
        except Exception as e:  # noqa: BLE001 - one experiment's failure is reported, not fatal
            ctx, crash = None, e
        run_s = time.perf_counter() - t0
        if analysing is not None:
            settle(analysing)
            analysing = None
        if ctx is not None:
            analysing = _Analysis(exp, ctx, run_s)
        else:
            status = 1
            section = _failed_section(exp, crash)
            done.append((exp, section, run_s))
            log(f"{exp.id}: {section.verdict} ({run_s:.0f} s)")
            write(None, [])
    if analysing is not None:
        settle(analysing)
    return status


def main(study: Study, argv: Sequence[str] | None = None) -> int:
    """``rove reproduce NAME ...``: run the study's (selected) experiments and write the
    report; see the module's docstring."""
    from ..cli import CliError
    from ..outputs import OutputError, check_study_dir, mark_study_dir

    args = build_parser(study).parse_args(argv)
    selected = _parse_only(study, args.only)
    options = dict(study.prepare(args)) if study.prepare is not None else {}
    try:
        out = check_study_dir(args.out)
    except OutputError as e:
        raise CliError(str(e)) from None
    if study.sweeps is not None and not Path(study.sweeps).is_dir():
        raise CliError(f"{study.sweeps}: not found; rove reproduce needs a source checkout of rove")
    mark_study_dir(out, study.name)
    log = (lambda line: None) if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    started = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t_all = time.perf_counter()
    done: list[tuple[Experiment, Section, float]] = []
    status = 0

    def write(wall_s, entries):
        info = RunInfo(args.quick, started, wall_s, selected, entries, options)
        doc = Document(study.title, study.intro(info), _summary(done), [s for _, s, _ in done])
        return document.write(doc, out)

    # Experiment k's analysis runs in a thread while experiment k+1's points run; the sweeps'
    # workers, shared by every experiment, are forked before that thread exists (a study
    # without sweep files runs none).
    with worker_pool(args.jobs if study.sweeps is not None else 1):
        status = _run_all(study, selected, out, args, log, options, done, write, status)
    total = time.perf_counter() - t_all
    entries = _append_log(out, {"started": started, "wall_s": round(total, 1),
                                "quick": bool(args.quick), "experiments": selected})
    md, html = write(total, entries)
    if not args.quiet:
        overall = combine(s.verdict for e, s, _ in done if e.counted)
        print(f"reproduce {study.name}: {len(done)} experiments in {total:.0f} s, overall "
              f"{overall} -> {html}")
    return status
