"""Resource guards: a run that cannot fit is refused before it starts, with the estimate.

The engine estimates a scenario's cost from the parsed file alone (``rove._core.estimate``,
crates/world/src/estimate.rs: events, peak memory and its parts); nothing is built. The policy
lives here:

- the estimated peak memory must fit in the memory this process may use (``MemAvailable``, and
  the cgroup's limit where one is set), with a margin for everything else on the machine;
- ``sample_interval`` is at least 1 ms: finer sampling is almost always a typo (``"1ns"``), and
  costs a row per flow per sample;
- a sweep has at most :data:`MAX_SWEEP_POINTS` points.

``ROVE_MEMORY_LIMIT`` (bytes, or with a unit: ``4GiB``, ``500MB``) caps the memory rove plans
for, below what the machine has: on a machine shared with others, or to see a refusal happen.

Each limit is lifted by ``no_limit=True`` (``--no-limit`` on the command line). Refusals raise
:class:`LimitError`, a one-line message the CLI prints with exit status 2.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

__all__ = ["LimitError", "MIN_SAMPLE_INTERVAL_NS", "MAX_SWEEP_POINTS", "MEMORY_SHARE",
           "available_memory", "estimate", "check", "check_sweep_size", "describe"]

MIN_SAMPLE_INTERVAL_NS = 1_000_000
# [GAP] a choice: a sweep of 100 000 points is ~8 hours of 0.3 s runs on one core; a grid much
# larger than that is a mistake far more often than a plan.
MAX_SWEEP_POINTS = 100_000
# Share of the available memory one run (or all of a sweep's parallel runs) may plan to use.
MEMORY_SHARE = 0.8


class LimitError(ValueError):
    """A run or sweep beyond a resource limit (the message is one line, with the estimate)."""


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_available() -> int | None:
    """What the cgroup (v2) still lets this process use, where it sets a limit."""
    try:
        rel = Path("/proc/self/cgroup").read_text().strip().split("::", 1)[1]
        base = Path("/sys/fs/cgroup") / rel.lstrip("/")
        limit = (base / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((base / "memory.current").read_text().strip()))
    except (OSError, ValueError, IndexError):
        return None


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def _env_limit() -> int | None:
    text = os.environ.get("ROVE_MEMORY_LIMIT", "").strip()
    if not text:
        return None
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise LimitError(f"ROVE_MEMORY_LIMIT: {text!r} is not a size (accepted: a number of bytes "
                         f"or one with a unit: kB, MB, GB, KiB, MiB, GiB)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def available_memory() -> int | None:
    """Bytes this process may still allocate (capped by ``ROVE_MEMORY_LIMIT``), or ``None``
    when the system does not say."""
    known = [m for m in (_meminfo_available(), _cgroup_available(), _env_limit()) if m is not None]
    return min(known) if known else None


def estimate(text: str, source: str, base_dir: str | None, overrides, seed) -> dict:
    """The engine's estimate for a scenario (parsing only)."""
    from . import _core

    return json.loads(_core.estimate(text, source, base_dir, overrides, seed))


def _size(n: float) -> str:
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{int(n)} B"


def _count(n: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{int(n)}"


def describe(est: dict) -> str:
    """``~1.6 M events, ~190 MiB peak memory`` (for validate's line and refusals)."""
    return f"~{_count(est['events'])} events, ~{_size(est['memory_bytes'])} peak memory"


def _biggest_part(est: dict) -> str:
    parts = {
        "flow state": (est["flow_state_bytes"],
                       f"{est['flows']:,} flows; fewer flows (count)"),
        "time series": (est["series_bytes"],
                        f"{est['samples']:,} samples x {est['flows']:,} flows; a longer "
                        f"sample_interval or a shorter duration"),
        "queue records": (est["queue_bytes"],
                          f"{_count(est['link_crossings'])} packets cross links; a shorter "
                          f"duration or slower links"),
    }
    name, (size, hint) = max(parts.items(), key=lambda kv: kv[1][0])
    return f"{name} {_size(size)} from {hint}"


def check(est: dict, source: str, no_limit: bool = False, parallel: int = 1,
          available: int | None = None) -> None:
    """Raise :class:`LimitError` if a run with estimate ``est`` (``parallel`` of them at once)
    breaks a limit; ``no_limit`` lifts every limit."""
    if no_limit:
        return
    interval = est["sample_interval_ns"]
    if interval < MIN_SAMPLE_INTERVAL_NS:
        raise LimitError(f"{source}: sample_interval: {interval} ns is below the 1 ms minimum "
                         f"({est['samples']:,} samples per flow, {describe(est)}); use "
                         f"--no-limit if you mean it")
    if available is None:
        available = available_memory()
    if available is None:
        return  # the system does not say; nothing to compare with
    need = est["memory_bytes"] * parallel
    budget = available * MEMORY_SHARE
    if need > budget:
        runs = f" for {parallel} parallel runs" if parallel > 1 else ""
        fix = (f"; fewer parallel runs (--jobs) would fit" if parallel > 1
               and est["memory_bytes"] <= budget else "")
        raise LimitError(f"{source}: needs about {_size(need)} of memory{runs} "
                         f"(~{_count(est['events'])} events; the largest part: "
                         f"{_biggest_part(est)}), more than "
                         f"{MEMORY_SHARE:.0%} of the {_size(available)} available{fix}; "
                         f"use --no-limit to run anyway")


def check_sweep_size(points: int, source: str, no_limit: bool = False) -> None:
    if no_limit or points <= MAX_SWEEP_POINTS:
        return
    raise LimitError(f"{source}: the grid has {points:,} points (grid combinations x seeds), "
                     f"more than {MAX_SWEEP_POINTS:,}; use --no-limit if you mean it")

