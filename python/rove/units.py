"""Human units as the scenario format writes them (see docs/scenario-format.md).

The engine parses scenario files itself; these helpers exist for command-line options that are
not part of a scenario (``rove trace synth --duration 60s``) and for labelling plots. They accept
exactly the spellings the scenario reference lists.
"""

from __future__ import annotations

import re

__all__ = ["UnitError", "parse_time_ns", "format_duration"]


class UnitError(ValueError):
    """A quantity that is not a number followed by an accepted unit."""


_NUMBER = r"(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]+))?"

# Suffix -> nanoseconds. Case-insensitive, as the scenario reference says.
_TIME_UNITS_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "min": 60_000_000_000}
_TIME_RE = re.compile(r"^\s*" + _NUMBER + r"\s*(?P<unit>[a-zA-Z]+)\s*$")


def parse_time_ns(text: str) -> int:
    """Parse a time such as ``"20ms"``, ``"1.5s"`` or ``"2min"`` into whole nanoseconds.

    Fractions are rounded to the nearest nanosecond; negative values and missing units are
    rejected with a message that says what is accepted.
    """
    s = str(text).strip()
    accepted = "accepted: a number followed by ns, us, ms, s or min, e.g. \"60s\""
    if s.startswith("-"):
        raise UnitError(f"negative time {text!r}; {accepted}")
    m = _TIME_RE.match(s)
    if not m:
        raise UnitError(f"invalid time {text!r}; {accepted}")
    unit = m.group("unit").lower()
    if unit not in _TIME_UNITS_NS:
        raise UnitError(f"unknown time unit {m.group('unit')!r} in {text!r}; {accepted}")
    value = float(m.group("num") + (("e" + m.group("exp")) if m.group("exp") else ""))
    return int(round(value * _TIME_UNITS_NS[unit]))


def format_duration(seconds: float) -> str:
    """``30.0`` -> ``"30 s"``, ``0.25`` -> ``"0.25 s"`` (for one-line messages)."""
    return f"{seconds:g} s"
