"""rove: a transport laboratory for mobile networks.

The engine is a deterministic discrete-event simulator written in Rust (``rove._core``); this
package loads scenarios, drives runs, writes and reads results, and draws reports.

    >>> import rove
    >>> r = rove.run("scenarios/demo.toml", **{"links.down.buffer": "100pkt"})
    >>> r.summary["flows"][0]["goodput_mbps"]
    >>> r.timeseries.plot(x="time_s", y="cwnd_pkts")

A scenario is a TOML file (see docs/scenario-format.md) or the same structure as a dict.
"""

from __future__ import annotations

# Standard modules under private names: ``import rove`` exposes rove's API, not ``rove.os``.
import json as _json
import math as _math
import os as _os
import re as _re
import shutil as _shutil
import sys as _sys
import time as _time
from pathlib import Path as _Path
from collections.abc import Callable, Iterable, Mapping

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms at start-up)

if TYPE_CHECKING:  # annotations only
    from typing import Any

from . import _core, guards
from ._core import CC_NAMES, ScenarioError
from .guards import LimitError
from .outputs import OutputError, check_input_file, check_output_dir
from .results import (
    FEATURES_FILE,
    QUEUE_FILE,
    RADIO_FILE,
    TIMESERIES_FILE,
    NativeTable,
    ResultsError,
    RunResult,
    read_results,
    write_results,
)

__version__ = "0.1.0"

__all__ = [
    "CC_NAMES",
    "LimitError",
    "OutputError",
    "SYNTH_KINDS",
    "ResultsError",
    "RunResult",
    "ScenarioError",
    "Simulation",
    "load_trace",
    "read_results",
    "run",
    "sweep",
    "synth_trace",
    "toml_literal",
    "validate",
]

SYNTH_KINDS = list(getattr(_core, "SYNTH_KINDS", ["constant", "steps", "cellular"]))

from .simulation import Simulation  # noqa: E402  (uses the helpers below at call time)
load_trace = _core.load_trace
synth_trace = _core.synth_trace

# --------------------------------------------------------------------------------------------
# Scenario text and overrides


def _scenario_source(scenario) -> tuple[str, str, str | None]:
    """``(text, source, base_dir)`` for the engine from a path or a dict.

    A dict is written out as TOML and named ``<dict>``; relative trace paths in it are taken
    relative to the current directory. A missing or unreadable file raises ``OSError``; a file
    that is not UTF-8 text raises :class:`ScenarioError`.
    """
    if isinstance(scenario, Mapping):
        import tomli_w

        try:
            text = tomli_w.dumps(_plain(scenario))
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"<dict>: cannot be written as TOML: {e}") from None
        return text, "<dict>", _os.getcwd()
    if isinstance(scenario, (str, _os.PathLike)):
        path = check_input_file(scenario, "scenario")  # a regular file of sane size
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ScenarioError(f"{path}: not UTF-8 text (byte {e.start}); a scenario is a TOML "
                                f"file") from None
        return text, str(path), str(path.absolute().parent)
    raise TypeError(f"scenario must be a path or a dict, not {type(scenario).__name__}")


def _plain(value):
    """Turn mappings/tuples/numpy scalars into plain dicts/lists/Python numbers for tomli-w."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, _os.PathLike):
        return _os.fspath(value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalar
        return value.item()
    return value


_BARE_KEY = _re.compile(r"[A-Za-z0-9_-]+")  # fullmatch: "$" would accept a trailing newline


def _toml_string(text: str) -> str:
    # JSON string escapes (\" \\ \n \t \uXXXX) are all valid in a TOML basic string; TOML also
    # forbids a raw DEL, which JSON leaves alone.
    return _json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def toml_literal(value: Any) -> str:
    """``value`` as TOML literal text: ``"10Mbps"`` -> ``'"10Mbps"'``, ``3`` -> ``'3'``,
    ``True`` -> ``'true'``, lists and dicts as inline arrays and tables."""
    value = _plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if _math.isnan(value):
            return "nan"
        if _math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_toml_key(k)} = {toml_literal(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write a {type(value).__name__} as a TOML value: {value!r}")


def _overrides(overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] | None) -> list[tuple[str, str]]:
    if not overrides:
        return []
    items = overrides.items() if isinstance(overrides, Mapping) else overrides
    return [(str(k), toml_literal(v)) for k, v in items]


# --------------------------------------------------------------------------------------------
# Public API


def validate(scenario, seed: int | None = None, overrides=None, no_limit: bool = False,
             **kw_overrides) -> dict:
    """Parse and check a scenario without running it.

    Returns ``{"name", "duration_s", "seed", "links": [...], "flows": [{"name", "cc"}, ...],
    "estimate": {...}}`` (the run's estimated cost, :mod:`rove.guards`); raises
    :class:`ScenarioError` with a one-line message naming the file and the key or line, and
    :class:`rove.guards.LimitError` for a run that cannot fit (unless ``no_limit``).
    Overrides are given as keyword arguments with dotted keys,
    ``validate(path, **{"links.down.rate": "10Mbps"})``, or as ``overrides=`` (a dict or pairs
    whose values are already Python values).
    """
    text, source, base_dir = _scenario_source(scenario)
    ovr = _overrides(overrides) + _overrides(kw_overrides)
    est = _guarded(text, source, base_dir, ovr, seed, no_limit)
    info = _core.validate(text, source, base_dir, ovr, seed)
    info["estimate"] = est
    return info


def _guarded(text: str, source: str, base_dir, ovr, seed, no_limit: bool) -> dict:
    """The scenario's estimated cost, checked against the limits (:mod:`rove.guards`) before
    anything is built."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                             or not 0 <= seed < 2**64):
        raise ScenarioError(f"{source}: seed: expected an integer in [0, 2^64), got {seed!r}")
    est = guards.estimate(text, source, base_dir, ovr, seed)
    guards.check(est, source, no_limit=no_limit)
    return est


def run(scenario, out: str | _os.PathLike | None = None, seed: int | None = None,
        progress: bool = False, overrides=None, force: bool = False, no_limit: bool = False,
        pcap: Iterable[str] = (), **kw_overrides) -> RunResult:
    """Run a scenario on the simulator and return its results.

    ``scenario`` is a path to a TOML file or a dict of the same shape. ``out``, if given, is a
    results directory to write (atomically; see :mod:`rove.results`). ``seed`` overrides the
    scenario's seed. ``progress=True`` shows a progress bar on stderr once the run has taken more
    than a second. ``force=True`` replaces the results an earlier run left in ``out``; a
    non-empty directory that does not hold rove results is never replaced
    (:class:`rove.outputs.OutputError`). A run estimated not to fit in memory, or sampled more
    often than every millisecond, is refused (:class:`rove.guards.LimitError`) unless
    ``no_limit=True``. ``pcap`` names links whose packets are written to ``out/LINK.pcap``
    (needs ``out``; see :mod:`rove_world::pcap` in crates/world/src/pcap.rs). Any other keyword
    argument is an override with a dotted key, e.g.
    ``rove.run("x.toml", **{"links.down.rate": "10Mbps", "duration": "5s"})``.

    Returns a :class:`RunResult` with ``.summary`` (dict), ``.timeseries`` and ``.queue``
    (pandas DataFrames) and ``.out``.
    """
    if out is not None:
        check_output_dir(out, "results", force=force)
    text, source, base_dir = _scenario_source(scenario)
    ovr = _overrides(overrides) + _overrides(kw_overrides)
    _guarded(text, source, base_dir, ovr, seed, no_limit)
    pcap = list(pcap)
    if pcap and out is None:
        raise ValueError("pcap= needs out= (the captures are written into the results directory)")
    t0 = _time.perf_counter()
    sim = _core.Simulation(text, source, base_dir, ovr, seed)
    with _captures(sim, pcap, out) as files:
        drive(sim, progress=progress, desc=_scenario_name(source))
        ended = sim.finish_run()
        wall_s = _time.perf_counter() - t0
        return _result_from_sim(sim, ended, wall_s, out, files)


class _captures:
    """Packet captures of ``links`` staged beside ``out`` (removed if the run fails)."""

    def __init__(self, sim, links, out):
        self.sim, self.links, self.out, self.stage = sim, links, out, None

    def __enter__(self) -> dict:
        if not self.links:
            return {}
        import tempfile

        from .outputs import remove_stale, staging_prefix

        out = _Path(self.out)
        parent = out.absolute().parent
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale(out)
        self.stage = _Path(tempfile.mkdtemp(prefix=staging_prefix(out) + "pcap-", dir=parent))
        files = {}
        for link in dict.fromkeys(self.links):
            name = _re.sub(r"[^A-Za-z0-9._-]", "_", link) + ".pcap"
            try:
                self.sim.capture_pcap(link, str(self.stage / name))
            except ValueError as e:
                _shutil.rmtree(self.stage, ignore_errors=True)  # __exit__ does not run
                raise ScenarioError(f"--pcap {link}: {e}") from None
            files[name] = self.stage / name
        return files

    def __exit__(self, *exc) -> None:
        if self.stage is not None:
            _shutil.rmtree(self.stage, ignore_errors=True)


def sweep(path: str | _os.PathLike, out: str | _os.PathLike, jobs: int | None = None,
          ray: str | None = None, progress: bool = False, no_limit: bool = False):
    """Run (or resume) the sweep file ``path`` into the directory ``out``; return the summary
    table (``out/summary.parquet``) as a DataFrame, one row per flow per complete point.

    ``jobs`` worker processes (default: the number of CPUs), or Ray tasks with ``ray=ADDRESS``
    or ``ray="local"``. Failed points are in ``df.attrs["failures"]`` (and ``out/failures.json``).
    See :mod:`rove.sweeps` and docs/sweeps.md.
    """
    from .sweeps import sweep as _sweep

    return _sweep(path, out, jobs=jobs, ray=ray, progress=progress, no_limit=no_limit)


def _scenario_name(source: str) -> str:
    return _Path(source).stem if source != "<dict>" else "scenario"


def _result_from_sim(sim, ended: Mapping[str, Any], wall_s: float, out, files=None) -> RunResult:
    """The :class:`RunResult` of the finished run ``sim`` (``ended``: its ``finish_run()``), its
    results directory written first when ``out`` is given. Every file's contents are made in
    Rust: ``summary.json``'s text (``_core.summary_text``, which the summary dict is read back
    from) and the tables, which stay in the engine (:class:`rove.results.NativeTable`) and
    reach Python only when the result's tables are asked for, so neither writing nor returning
    them imports numpy or pyarrow."""
    text = _core.summary_text(ended["summary_json"], wall_s)   # summary.json, made in Rust
    summary = _json.loads(text)
    tables = NativeTable.of_run(sim)
    ts, q = tables.pop(TIMESERIES_FILE), tables.pop(QUEUE_FILE)
    written = (write_results(out, text, ts, q, extra=tables, files=files)
               if out is not None else None)
    return RunResult(summary, ts, q, out=written, features_table=tables.get(FEATURES_FILE),
                     radio_table=tables.get(RADIO_FILE))


def drive(sim, progress: bool = False, desc: str = "rove", chunks: int = 100,
          show_after_s: float = 1.0, on_chunk: Callable[[], None] | None = None) -> None:
    """Advance ``sim`` to its end in ``chunks`` steps of simulated time.

    Running in steps returns control to Python regularly, so Ctrl-C (and SIGTERM, where the CLI
    turns it into an exception) interrupts a long run promptly. With ``progress=True`` a tqdm
    bar appears on stderr once ``show_after_s`` seconds of wall time have passed.
    """
    duration = int(sim.duration_ns)
    step = max(1, -(-duration // chunks))
    t0 = _time.perf_counter()
    bar = None
    try:
        t = int(sim.now_ns)
        while t < duration:
            t = min(duration, t + step)
            sim.run_until(t)
            if on_chunk is not None:
                on_chunk()
            if progress and bar is None and _time.perf_counter() - t0 >= show_after_s and t < duration:
                from tqdm import tqdm

                # A terminal that reports a size of 0x0 (a bare pty) would get no bar at all.
                size = _shutil.get_terminal_size((80, 24))
                bar = tqdm(total=round(duration / 1e9, 3), desc=desc, file=_sys.stderr,
                           unit="s", leave=False, ncols=min(100, size.columns), nrows=size.lines,
                           smoothing=0,
                           bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:g} s "
                                      "simulated [{elapsed}<{remaining}]")
                bar.start_t -= _time.perf_counter() - t0  # count the time before the bar
            if bar is not None:
                bar.n = round(t / 1e9, 3)
                bar.refresh()
    finally:
        if bar is not None:
            bar.close()
