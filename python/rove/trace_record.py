"""``rove trace record``: the capacity a radio port received over a run, as a Mahimahi trace.

A radio cell's ``radio.parquet`` holds, per port and sample, the bytes it has delivered so far
(``tx_bytes``: the IP bytes of the frames the port's transmitter got through, cumulative from
the start; crates/sim link/wifi/counters.rs for a WiFi cell, link/lte/counters.rs for an LTE
cell, whose ``tx_bytes`` are the packets the UE's RLC delivered, or the eNodeB received from
its uplink). :func:`record` turns that series into delivery
opportunities of 1500 bytes (one line per opportunity, its millisecond; trace.rs in
crates/scenario describes the format): the service the port got, which a trace-driven link
(``trace = FILE``, or Mahimahi's ``mm-link``) can replay to any other transport.

It reads either a results directory written by ``rove run`` (the cell's samples, every
``sample_interval``), or runs a scenario first with the cell sampled every millisecond
(``links.LINK.sample_interval = "1ms"``): then each opportunity sits in the millisecond its
bytes were counted (when their frame went on the air).

How bytes become opportunities: the cumulative count is cut into whole 1500-byte
opportunities (a remainder waits for the next sample; at most 1499 bytes of the run are left
out at its end); the k opportunities completed between two samples t0 < t1 are spread evenly
over that interval, the j-th at ceil(t0 + j·(t1 − t0)/k) ms (the fluid construction of
``rove trace synth constant``). With 1-ms samples that puts them in the millisecond of the
sample. [GAP] Within a coarser interval the bytes' true times are unknown; evenly spread is
a choice.

What the trace is: the capacity the port *received*, i.e. what its traffic used. A port whose
flows do not saturate it records their demand, not the cell's capacity; a saturating load
(an unresponsive ``cbr`` flow above the port's rate) records its capacity under that load,
with the cell's contention, rate control, PHY errors and, for a drive-by station, its holes.
A Mahimahi trace repeats with the period of its last timestamp, so a run that ends in a hole
gives a trace shorter than the run; ``TraceRecording.duration_ms`` says how long the run was.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from .results import RADIO_FILE, SUMMARY_FILE, ResultsError, read_results

__all__ = ["TraceRecordError", "TraceRecording", "record", "opportunities"]

#: Bytes a Mahimahi delivery opportunity carries (rove_scenario::TRACE_OPPORTUNITY_BYTES).
OPPORTUNITY_BYTES = 1500

#: The link kinds with counters in ``radio.parquet``.
RADIO_KINDS = ("wifi", "lte")

#: The radio cells' sampling when ``record`` runs a scenario itself: one sample a millisecond,
#: a Mahimahi trace's resolution.
RUN_SAMPLE_INTERVAL = "1ms"


class TraceRecordError(ResultsError):
    """A source or port ``rove trace record`` cannot record (the message is one line)."""


@dataclass
class TraceRecording:
    """A recorded trace: ``stamps`` (millisecond timestamps, one per opportunity, never
    decreasing), the ``port`` (``"LINK:PORT"``), the run's length, the bytes the port
    delivered and how often they were sampled."""

    stamps: list[int]
    port: str
    duration_ms: int
    delivered_bytes: int
    sample_interval_ms: float

    @property
    def mean_mbps(self) -> float:
        """The trace's rate over the run (not over its period)."""
        return len(self.stamps) * OPPORTUNITY_BYTES * 8 / (self.duration_ms / 1000) / 1e6

    def text(self) -> str:
        return "".join(f"{t}\n" for t in self.stamps)


def opportunities(times_s: Sequence[float], cumulative_bytes: Sequence[int]) -> list[int]:
    """Millisecond timestamps of the 1500-byte opportunities in a cumulative byte count sampled
    at ``times_s`` (increasing, the first interval starting at 0): see the module doc."""
    stamps: list[int] = []
    t0_ms, done = 0.0, 0
    last_bytes = 0
    for t, b in zip(times_s, cumulative_bytes):
        b = int(b)
        if b < last_bytes:
            raise TraceRecordError(f"tx_bytes decreases at {t} s (from {last_bytes} to {b}): "
                                   f"not a cumulative count")
        last_bytes = b
        t1_ms = float(t) * 1000.0
        total = b // OPPORTUNITY_BYTES
        k = total - done
        if k > 0:
            span = t1_ms - t0_ms
            # ceil, but a product that should be whole and came out a hair above is not moved
            # to the next millisecond.
            stamps.extend(max(1, math.ceil(t0_ms + j * span / k - 1e-9)) for j in range(1, k + 1))
            done = total
        t0_ms = t1_ms
    return stamps


def _split_port(port: str) -> tuple[str, str]:
    link, sep, name = port.partition(":")
    if not sep or not link or not name:
        raise TraceRecordError(f"--port: expected LINK:PORT like \"air:s1\" or \"air:s1:up\", "
                               f"got {port!r}")
    return link, name


def _from_table(radio, port: str, source: str, duration_ms: int) -> TraceRecording:
    """The recording of ``port`` from a ``radio.parquet`` DataFrame."""
    link, name = _split_port(port)
    links = sorted(set(radio["link"]))
    if link not in links:
        raise TraceRecordError(f"{source}: {link!r} is not a radio cell with counters in "
                               f"{RADIO_FILE} (cells: {', '.join(links)})")
    rows = radio[radio["link"] == link]
    ports = list(dict.fromkeys(rows["port"]))
    if name not in ports:
        raise TraceRecordError(f"{source}: link {link!r} has no port {name!r} (ports: "
                               + ", ".join(f"{link}:{p}" for p in ports) + ")")
    rows = rows[rows["port"] == name]
    times = rows["time_s"].to_numpy()
    stamps = opportunities(times, rows["tx_bytes"].to_numpy())
    if not stamps or stamps[-1] <= 0:
        raise TraceRecordError(f"{source}: port {port} received less than one 1500-byte "
                               f"opportunity in the run; a trace needs at least one")
    interval = float(times[1] - times[0]) * 1000.0 if len(times) > 1 else float(duration_ms)
    return TraceRecording(stamps=stamps, port=port, duration_ms=duration_ms,
                          delivered_bytes=int(rows["tx_bytes"].to_numpy()[-1]),
                          sample_interval_ms=round(interval, 6))


def _radio_of(result, source: str):
    radio = result.radio
    if radio is None:
        raise TraceRecordError(f"{source}: no {RADIO_FILE}: the run has no radio cell with "
                               f"counters (a WiFi or LTE cell, kind = \"wifi\" or \"lte\")")
    return radio


def record(source: str | Path, port: str, seed: int | None = None,
           overrides: Iterable[tuple[str, Any]] = ()) -> TraceRecording:
    """Record what ``port`` (``"LINK:PORT"``) received: from the results directory ``source``,
    or by running the scenario file ``source`` (with ``seed`` and ``overrides``, its cell
    sampled every millisecond)."""
    src = Path(source)
    if src.is_dir():
        if seed is not None or list(overrides):
            raise TraceRecordError(f"{src}: --seed and --set apply to a scenario, not to a "
                                   f"results directory")
        if not (src / SUMMARY_FILE).is_file():
            raise TraceRecordError(f"{src}: neither a scenario file nor a results directory "
                                   f"(no {SUMMARY_FILE})")
        result = read_results(src)
        duration_ms = round(float(result.summary["duration_s"]) * 1000)
        return _from_table(_radio_of(result, str(src)), port, str(src), duration_ms)
    import rove

    link, _ = _split_port(port)
    try:
        doc = tomllib.loads(src.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise TraceRecordError(f"{src}: neither a results directory nor a readable scenario "
                               f"file ({e})") from None
    spec = (doc.get("links") or {}).get(link)
    if not isinstance(spec, dict):
        names = ", ".join(doc.get("links") or {}) or "none"
        raise TraceRecordError(f"--port {port}: the scenario has no link {link!r} (links: "
                               f"{names})")
    if spec.get("kind") not in RADIO_KINDS:
        raise TraceRecordError(f"--port {port}: link {link!r} is of kind "
                               f"{spec.get('kind', 'p2p')!r}; trace record reads a radio "
                               f"cell's counters (kind = \"wifi\" or \"lte\")")
    ovr = [*overrides, (f"links.{link}.sample_interval", RUN_SAMPLE_INTERVAL)]
    result = rove.run(str(src), seed=seed, overrides=ovr)
    duration_ms = round(float(result.summary["duration_s"]) * 1000)
    return _from_table(_radio_of(result, str(src)), port, str(src), duration_ms)
