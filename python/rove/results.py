"""The results schema: converting the engine's output and writing a results directory.

A results directory holds three files whose names and keys are an interface (DESIGN.md,
"Results"); the kernel backend writes the same ones:

- ``summary.json``: the engine's summary, in the engine's key order, plus ``wall_s``.
- ``timeseries.parquet``: one row per flow per sample time; a multipath flow adds one row per
  subflow (column ``subflow`` = 0, 1, ...; -1 on every flow's own row) and its reordering-buffer
  occupancy (``ofo_bytes``) on its own row.
- ``queue.parquet``: one row per link per sample time, with the packets that left the queue
  since the previous sample (``sojourn_count``) and their mean and largest queueing delay
  (``sojourn_mean_ms``, ``sojourn_max_ms``; NaN when none left). The whole run's distribution is
  in ``summary.json`` (``queue_delay_percentiles_ms`` per link): nothing is kept per packet.
- ``radio.parquet`` (only when the scenario has a WiFi cell): the cell's counters, one row per
  port per sample (docs/results.md lists the columns), the last rows equal to the link's
  ``radio`` totals in ``summary.json``.

Writing is atomic: the files go into a hidden temporary directory next to the destination, are
fsynced, and the directory is renamed into place only when all three are complete. An existing
destination is replaced only after that succeeded. A run interrupted at any point therefore leaves
either the previous results or none, never a directory that looks complete but is not.

The Parquet files are written from Rust (crates/results): writing results imports neither numpy
nor pyarrow, and the same data gives the same bytes (fixed zstd compression, no timestamps; the
footer holds only the Arrow schema and parquet-rs's version string). A simulator run's tables
stay in the engine (:class:`NativeTable`): ``rove._core.Simulation.write_table`` encodes each
straight to its file, and no column reaches Python unless a table or DataFrame of
:class:`RunResult` is asked for; only then are the columns copied out (:class:`RawTable`) and
pyarrow (and pandas) imported. Tables from elsewhere (the kernel backend's) go to the same writer
as :class:`RawTable` (``rove._core.write_parquet``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms at start-up)

from .outputs import OutputError, check_output_dir, remove_stale, staging_prefix

if TYPE_CHECKING:  # numpy and pyarrow are imported only where a table is actually built
    import numpy as np
    import pyarrow as pa

__all__ = [
    "NativeTable",
    "SUMMARY_FILE",
    "TIMESERIES_FILE",
    "QUEUE_FILE",
    "TIMESERIES_COLUMNS",
    "QUEUE_COLUMNS",
    "QUEUE_DELAY_KEYS",
    "ResultsError",
    "RawTable",
    "RunResult",
    "columns_to_table",
    "summary_with_wall",
    "write_results",
    "read_results",
]

SUMMARY_FILE = "summary.json"
TIMESERIES_FILE = "timeseries.parquet"
QUEUE_FILE = "queue.parquet"
FEATURES_FILE = "features.parquet"
RADIO_FILE = "radio.parquet"

# Column order of the files (the engine may add columns; they follow these, in its order).
TIMESERIES_COLUMNS = (
    "time_s", "flow", "cc", "cwnd_pkts", "ssthresh_pkts", "inflight_pkts", "pacing_rate_bps",
    "srtt_ms", "min_rtt_ms", "delivery_rate_bps", "bytes_acked", "bytes_delivered",
    "bytes_received", "retrans_segs", "ca_state", "cc_state", "subflow", "ofo_bytes",
)
QUEUE_COLUMNS = (
    "time_s", "link", "backlog_bytes", "backlog_pkts", "drops", "queue_drops", "loss_drops",
    "departed_bytes", "capacity_bytes", "sojourn_count", "sojourn_mean_ms", "sojourn_max_ms",
)

# The summary's per-link queueing-delay keys (rove_sim::link::QueueDelaySummary, on both backends).
QUEUE_DELAY_KEYS = (
    "mean_queue_delay_ms", "p95_queue_delay_ms", "p99_queue_delay_ms", "max_queue_delay_ms",
    "queue_delay_percentiles_ms",
)

# The feature recorders' leading columns (the rest follow in the engine's order).
FEATURES_COLUMNS = ("time_s", "flow", "subflow", "cc", "mode")

# Fixed Parquet settings of write_parquet (pyarrow; tables other than the results files, e.g. a
# sweep's summary table): the same data must give the same bytes on every run and machine. The
# results files are written from Rust with the same settings (crates/results): zstd level 1,
# dictionary encoding for the string columns only (_dictionary_columns).
_PARQUET_OPTIONS = dict(
    compression="zstd",
    compression_level=1,
    write_statistics=True,
    version="2.6",
    data_page_version="1.0",
)


def _dictionary_columns(table: "pa.Table") -> list[str]:
    """The columns write_parquet dictionary-encodes: the string ones (names, states), whose
    few distinct values a dictionary stores once; a numeric column is written plain, which is
    smaller and cheaper once zstd has compressed it (crates/results, ``properties``)."""
    import pyarrow as pa

    def stringy(t) -> bool:
        if pa.types.is_dictionary(t):
            t = t.value_type
        return pa.types.is_string(t) or pa.types.is_large_string(t)

    return [f.name for f in table.schema if stringy(f.type)]


class ResultsError(ValueError):
    """A directory that does not hold rove results (missing or unreadable files)."""


class RawTable:
    """A table as the engine's columns, not yet converted: ``(name, column)`` pairs in file
    order, a column being ``list[str]`` or ``(dtype, bytes)`` (the native contract; a third
    element, one byte per row with 0 for null, marks nulls).

    ``parts`` holds more than one such list when tables are concatenated (``features.parquet``:
    one per recorder; a column missing from one is null on its rows). Neither building nor
    writing one imports numpy or pyarrow; :meth:`to_arrow` does.
    """

    def __init__(self, parts: Sequence[Sequence[tuple[str, Any]]]):
        self.parts = [list(p) for p in parts]

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any], order: Sequence[str] = ()) -> "RawTable":
        """The engine's column dict, known columns first in schema order."""
        names = [c for c in order if c in columns] + [c for c in columns if c not in order]
        return cls([[(c, columns[c]) for c in names]])

    @classmethod
    def from_feature_logs(cls, logs: Sequence[Mapping[str, Any]]) -> "RawTable | None":
        """The feature recorders' columns (``finish()["features"]``) with a ``controller``
        column (the recorder's index among the scenario's feature recorders, int32); ``None``
        when none ran."""
        if not logs:
            return None
        parts = []
        for k, cols in enumerate(logs):
            (part,) = cls.from_columns(cols, FEATURES_COLUMNS).parts
            n = _column_len(part[0][1]) if part else 0
            parts.append(part + [("controller", ("<i4", k.to_bytes(4, "little", signed=True) * n))])
        return cls(parts)

    @property
    def num_rows(self) -> int:
        return sum(_column_len(p[0][1]) if p else 0 for p in self.parts)

    @property
    def column_names(self) -> list[str]:
        return list(dict.fromkeys(name for p in self.parts for name, _ in p))

    def write(self, path: str | os.PathLike) -> None:
        """Write the Parquet file (deterministic; see crates/results)."""
        from . import _core

        _core.write_parquet(os.fspath(path), self.parts)

    def to_arrow(self) -> "pa.Table":
        """The table in Arrow (what the file reads back as)."""
        import pyarrow as pa

        tables = [_items_to_table(p) for p in self.parts]
        if len(tables) == 1:
            return tables[0]
        return pa.concat_tables(tables, promote_options="default")


class NativeTable:
    """One table of a finished simulator run, still in the engine (``sim``, a
    ``rove._core.Simulation`` after ``finish_run()``; ``name``: ``"timeseries"``, ``"queue"``,
    ``"features"`` or ``"radio"``).

    :meth:`write` has Rust encode it to its Parquet file, with no column crossing into Python
    (the bytes :class:`RawTable` would write from the same columns); :meth:`raw` copies the
    columns out, and :meth:`to_arrow` makes the Arrow table from them. Holding one keeps the
    engine's world alive.
    """

    _ORDER = {"timeseries": TIMESERIES_COLUMNS, "queue": QUEUE_COLUMNS,
              "features": FEATURES_COLUMNS}

    def __init__(self, sim: Any, name: str):
        self.sim, self.name = sim, name

    @classmethod
    def of_run(cls, sim: Any) -> dict[str, "NativeTable"]:
        """Every table of the finished run ``sim``, by file name (``timeseries.parquet``,
        ``queue.parquet``, and ``features.parquet`` / ``radio.parquet`` when present)."""
        return {f"{name}.parquet": cls(sim, name) for name in sim.tables()}

    @property
    def num_rows(self) -> int:
        return self.sim.table_rows(self.name)

    @property
    def column_names(self) -> list[str]:
        return self.raw().column_names

    def write(self, path: str | os.PathLike) -> None:
        """Write the Parquet file from the engine's columns (deterministic; crates/results)."""
        self.sim.write_table(self.name, os.fspath(path))

    def raw(self) -> RawTable:
        """The columns, copied out of the engine (picklable, e.g. for a Ray task's result)."""
        order = self._ORDER.get(self.name, ())
        parts = [RawTable.from_columns(p, order).parts[0] for p in self.sim.table_columns(self.name)]
        return RawTable(parts)

    def to_arrow(self) -> "pa.Table":
        return self.raw().to_arrow()


_LAZY_TABLES = (RawTable, NativeTable)   # tables not yet in Arrow


def _column_len(value: Any) -> int:
    if isinstance(value, list):
        return len(value)
    if isinstance(value, tuple) and len(value) in (2, 3):
        return len(value[1]) // int(str(value[0])[2:])  # "<f8": 8-byte values
    raise TypeError(f"unexpected column of type {type(value).__name__}")


class RunResult:
    """What :func:`rove.run` returns.

    ``summary`` is the parsed ``summary.json`` (a dict), ``timeseries`` and ``queue`` are pandas
    DataFrames with the columns of the results schema, and ``out`` is the results directory
    written, or ``None``. The Arrow tables (``timeseries_table``, ``queue_table``,
    ``features_table``) are made on first use from the engine's columns (:class:`NativeTable`,
    :class:`RawTable`), and the DataFrames from them: a run that only writes its results
    imports neither pyarrow nor pandas.
    """

    def __init__(self, summary: dict, timeseries_table: "pa.Table | RawTable | NativeTable",
                 queue_table: "pa.Table | RawTable | NativeTable", out: Path | None = None,
                 features_table: "pa.Table | RawTable | NativeTable | None" = None,
                 radio_table: "pa.Table | RawTable | NativeTable | None" = None):
        self.summary = summary
        self._tables: dict = {"timeseries": timeseries_table, "queue": queue_table,
                              "features": features_table, "radio": radio_table}
        self.out = out
        self._frames: dict = {}

    def _table(self, name: str):
        table = self._tables[name]
        if isinstance(table, _LAZY_TABLES):
            table = self._tables[name] = table.to_arrow()
        return table

    def _set_table(self, name: str, table) -> None:
        self._tables[name] = table
        self._frames.pop(name, None)

    timeseries_table = property(lambda self: self._table("timeseries"),
                                lambda self, t: self._set_table("timeseries", t),
                                doc="One row per flow per sample time (Arrow table).")
    queue_table = property(lambda self: self._table("queue"),
                           lambda self, t: self._set_table("queue", t),
                           doc="One row per link per sample time (Arrow table).")
    features_table = property(lambda self: self._table("features"),
                              lambda self, t: self._set_table("features", t),
                              doc="What feature recorders recorded (Arrow table), or None.")
    radio_table = property(lambda self: self._table("radio"),
                           lambda self, t: self._set_table("radio", t),
                           doc="The radio cells' counters (Arrow table), or None.")

    def _frame(self, name: str):
        if name not in self._frames:
            self._frames[name] = table_to_frame(self._table(name))
        return self._frames[name]

    @property
    def features(self):
        """What feature-recording controllers recorded (``features.parquet``), or ``None``."""
        if self._tables["features"] is None:
            return None
        return self._frame("features")

    @property
    def radio(self):
        """The radio cells' counters (``radio.parquet``), or ``None`` without a radio cell."""
        if self._tables["radio"] is None:
            return None
        return self._frame("radio")

    @property
    def timeseries(self):
        """One row per flow per sample time (pandas DataFrame)."""
        return self._frame("timeseries")

    @property
    def queue(self):
        """One row per link per sample time (pandas DataFrame)."""
        return self._frame("queue")

    @property
    def flows(self):
        """The per-flow summary as a DataFrame (one row per flow)."""
        import pandas as pd

        return pd.DataFrame(self.summary.get("flows", []))

    @property
    def links(self):
        """The per-link summary as a DataFrame (one row per link)."""
        import pandas as pd

        return pd.DataFrame(self.summary.get("links", []))

    def __repr__(self) -> str:  # keep notebooks readable
        flows = ", ".join(
            f"{f.get('name')}: {f.get('goodput_mbps', float('nan')):.3g} Mbps"
            for f in self.summary.get("flows", [])[:6]
        )
        more = " ..." if len(self.summary.get("flows", [])) > 6 else ""
        return (
            f"RunResult(scenario={self.summary.get('scenario')!r}, "
            f"duration_s={self.summary.get('duration_s')}, flows=[{flows}{more}], "
            f"timeseries={self._tables['timeseries'].num_rows} rows, "
            f"queue={self._tables['queue'].num_rows} rows, "
            f"out={str(self.out) if self.out else None!r})"
        )


# --------------------------------------------------------------------------------------------
# Engine output -> Arrow


def _from_numpy(values: np.ndarray) -> pa.Array:
    """A primitive Arrow array over ``values``' bytes.

    Built from buffers rather than with ``pa.array``, which imports pandas (0.4 s) on first use.
    """
    import numpy as np
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    if values.dtype.byteorder == ">":
        values = values.astype(values.dtype.newbyteorder("<"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values),
                                 [None, pa.py_buffer(values)])


def _string_array(values: list) -> "pa.Array":
    import numpy as np
    import pyarrow as pa

    encoded = [str(v).encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    if offsets[-1] < 2**31:
        kind, offsets = pa.string(), offsets.astype(np.int32)
    else:
        kind = pa.large_string()
    return pa.Array.from_buffers(kind, len(encoded),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def _dictionary_array(values: list) -> pa.Array:
    """Dictionary-encoded strings; the dictionary in order of first appearance."""
    import numpy as np
    import pyarrow as pa

    if len(values) == 0:
        return pa.DictionaryArray.from_arrays(_from_numpy(np.zeros(0, np.int32)), _string_array([]))
    uniq, first, inverse = np.unique(np.asarray(values, dtype=str), return_index=True,
                                     return_inverse=True)
    order = np.argsort(first, kind="stable")  # dictionary entries by first appearance
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    indices = rank[inverse.reshape(-1)]
    return pa.DictionaryArray.from_arrays(_from_numpy(indices), _string_array(uniq[order].tolist()))


def _column_to_array(name: str, value: Any) -> pa.Array:
    """One column of the engine's ``finish()`` output as an Arrow array.

    Accepted shapes (the native contract): ``list[str]`` (dictionary-encoded here) and
    ``(dtype, bytes)`` for a numeric column.
    """
    if isinstance(value, list):
        return _dictionary_array(value)
    if isinstance(value, tuple) and len(value) in (2, 3):
        import numpy as np
        import pyarrow as pa

        array = _from_numpy(np.frombuffer(value[1], dtype=np.dtype(value[0])))
        if len(value) == 3:  # validity bytes: 0 marks a null
            valid = np.frombuffer(value[2], dtype=np.uint8) != 0
            if not valid.all():
                bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
                array = pa.Array.from_buffers(array.type, len(array),
                                              [bitmap, array.buffers()[1]],
                                              null_count=int((~valid).sum()))
        return array
    raise TypeError(f"column {name!r}: unexpected value of type {type(value).__name__}")


def columns_to_table(columns: Mapping[str, Any], order: tuple[str, ...] = ()) -> "pa.Table":
    """The engine's column dict as an Arrow table, known columns first in schema order."""
    (items,) = RawTable.from_columns(columns, order).parts
    return _items_to_table(items)


def _items_to_table(items: Sequence[tuple[str, Any]]) -> "pa.Table":
    import pyarrow as pa

    return pa.Table.from_arrays([_column_to_array(c, v) for c, v in items],
                                names=[c for c, _ in items])


# Numpy dtypes of the Arrow types a results file holds (the Rust writer's accepted dtypes).
_DTYPES = {"double": "<f8", "uint64": "<u8", "uint32": "<u4", "int32": "<i4", "int64": "<i8"}


def table_to_raw(table: "pa.Table") -> RawTable:
    """An Arrow table of the results schema as engine columns (for the Rust writer): numeric
    columns (nulls kept) and string columns (dictionary-encoded or not; written
    dictionary-encoded). Other types are a TypeError."""
    import numpy as np
    import pyarrow as pa

    items = []
    for name, col in zip(table.column_names, table.columns):
        kind = col.type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            if col.null_count:
                raise TypeError(f"column {name!r}: nulls in a string column cannot be written")
            items.append((name, [str(v) for v in col.to_pylist()]))
        elif str(kind) in _DTYPES:
            arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
            data = np.asarray(arr.fill_null(0) if arr.null_count else arr)
            data = data.astype(np.dtype(_DTYPES[str(kind)]), copy=False).tobytes()
            if arr.null_count:
                valid = np.asarray(arr.is_valid(), dtype=np.uint8).tobytes()
                items.append((name, (_DTYPES[str(kind)], data, valid)))
            else:
                items.append((name, (_DTYPES[str(kind)], data)))
        else:
            raise TypeError(f"column {name!r}: type {col.type} is not a results column type "
                            f"(accepted: {', '.join(_DTYPES)}, string)")
    return RawTable([items])


def summary_with_wall(summary_json: str, wall_s: float) -> dict:
    """The engine's summary with ``wall_s`` added after ``seed`` (DESIGN.md's key order)."""
    engine = json.loads(summary_json)
    if not isinstance(engine, dict):
        raise TypeError("the engine's summary_json is not a JSON object")
    out: dict = {}
    for key, value in engine.items():
        if key == "wall_s":
            continue
        out[key] = value
        if key == "seed":
            out["wall_s"] = round(wall_s, 6)
    if "wall_s" not in out:
        out["wall_s"] = round(wall_s, 6)
    return out


def summary_text(summary: dict | str) -> str:
    """``summary.json``'s exact text: the given key order, 2-space indent, trailing newline.

    A simulator run's text comes from Rust (``rove._core.summary_text(summary_json, wall_s)``,
    crates/results summary.rs), byte for byte what this function writes for
    ``summary_with_wall(summary_json, wall_s)``; given as a string, it is taken as it is."""
    if isinstance(summary, str):
        return summary
    return json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def table_to_frame(table: "pa.Table"):
    """An Arrow table as a pandas DataFrame (dictionary columns become categoricals)."""
    return table.to_pandas()


# --------------------------------------------------------------------------------------------
# Atomic writing


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


def replace_atomically(path: Path, write) -> None:
    """Create ``path`` through ``write(tmp)`` on a temporary file beside it, fsync it and rename
    it into place: readers see the old file or the complete new one, and an error or interrupt
    leaves nothing behind."""
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.partial-", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        _fsync_file(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes_atomically(path: Path, data: bytes) -> None:
    replace_atomically(path, lambda tmp: tmp.write_bytes(data))


def write_parquet(table: "pa.Table | RawTable | NativeTable", path: Path) -> None:
    """Write ``table`` deterministically (same table -> same bytes): a :class:`NativeTable` or
    :class:`RawTable` from Rust (the results files), an Arrow table with pyarrow (other tables,
    e.g. a sweep's summary table, which may hold types the results files do not)."""
    if isinstance(table, _LAZY_TABLES):
        table.write(path)
        return
    import pyarrow.parquet as pq

    pq.write_table(table, str(path), use_dictionary=_dictionary_columns(table), **_PARQUET_OPTIONS)


def _as_raw(table: "pa.Table | RawTable | NativeTable") -> "RawTable | NativeTable":
    return table if isinstance(table, _LAZY_TABLES) else table_to_raw(table)


def write_results(out: str | os.PathLike, summary: dict | str,
                  timeseries: "pa.Table | RawTable | NativeTable",
                  queue: "pa.Table | RawTable | NativeTable",
                  extra: Mapping[str, "pa.Table | RawTable | NativeTable"] | None = None,
                  files: Mapping[str, Path] | None = None, durable: bool = True) -> Path:
    """Write a results directory atomically; return its path.

    ``durable=False`` skips the fsyncs (of the files and directories: most of a small run's
    writing time on a busy disk). The rename still makes the directory appear whole or not at
    all to every process, so an interrupted run leaves nothing half-written; only a crash of
    the machine itself could leave a directory whose files are not on disk yet. Sweeps write
    their points so and check each point's files when they resume (:func:`is_whole`).

    ``summary`` is the summary (a dict), or ``summary.json``'s text as Rust made it for a
    simulator run (:func:`summary_text`). The tables are :class:`NativeTable` (a simulator
    run's, still in the engine),
    :class:`RawTable` (columns) or Arrow tables of the results schema (:func:`table_to_raw`);
    either way the Parquet files are written from Rust.
    ``extra`` maps further Parquet file names to tables (``features.parquet``, written when a
    feature-recording controller ran); ``files`` maps further file names to files already
    written elsewhere on the same file system (packet captures), moved in. An existing results
    directory at ``out`` is replaced,
    but only once the new one is complete; a directory that does not hold rove results (and is
    not empty) is never replaced, and neither is a file (:func:`rove.outputs.check_output_dir`
    is the policy; commands check it with ``force`` before they run).
    """
    out = Path(out)
    try:
        check_output_dir(out, "results", force=True)
    except OutputError as e:
        raise ResultsError(str(e)) from None
    parent = out.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale(out)
        tmp = Path(tempfile.mkdtemp(prefix=staging_prefix(out), dir=parent))
    except OSError as e:  # name the directory the user gave, not the hidden staging one
        raise ResultsError(f"{out}: cannot write the results directory: {e.strerror or e}") from None
    try:
        tables = {TIMESERIES_FILE: timeseries, QUEUE_FILE: queue, **(extra or {})}
        tables = {name: _as_raw(t) for name, t in tables.items()}  # Rust writes them all
        _write_into(tmp, out, parent, summary, tables, files or {}, durable)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ResultsError(f"{out}: cannot write the results directory: {e.strerror or e}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _write_into(tmp: Path, out: Path, parent: Path, summary: dict | str,
                tables: Mapping[str, "RawTable | NativeTable"], files: Mapping[str, Path],
                durable: bool = True) -> None:
    """Fill the staging directory ``tmp`` and rename it to ``out`` (the previous ``out``, if
    any, is moved aside first and removed only once the new one is in place)."""
    (tmp / SUMMARY_FILE).write_text(summary_text(summary), encoding="utf-8")
    for name, table in tables.items():
        write_parquet(table, tmp / name)
    for name, path in files.items():
        os.replace(path, tmp / name)
    if durable:
        for name in (*tables, SUMMARY_FILE, *files):
            _fsync_file(tmp / name)
    os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
    if durable:
        _fsync_dir(tmp)
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=staging_prefix(out, "old"), dir=parent))
        os.rename(out, old / "results")  # move the previous results aside ...
        try:
            os.rename(tmp, out)  # ... put the new ones in place ...
        except BaseException:
            os.rename(old / "results", out)
            raise
        shutil.rmtree(old, ignore_errors=True)  # ... and only then drop the old ones
    else:
        os.rename(tmp, out)
    if durable:
        _fsync_dir(parent)


def is_whole(directory: str | os.PathLike) -> bool:
    """Whether a results directory's files are complete: ``summary.json`` parses as a JSON
    object and each Parquet file starts and ends with Parquet's magic ``PAR1`` (its footer is
    written last). For directories written with ``durable=False`` after a machine crash."""
    d = Path(directory)
    try:
        if not isinstance(json.loads((d / SUMMARY_FILE).read_text(encoding="utf-8")), dict):
            return False
        for name in (TIMESERIES_FILE, QUEUE_FILE):
            with open(d / name, "rb") as f:
                head = f.read(4)
                f.seek(0, os.SEEK_END)
                if f.tell() < 12:
                    return False
                f.seek(-4, os.SEEK_END)
                if head != b"PAR1" or f.read(4) != b"PAR1":
                    return False
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return True


# --------------------------------------------------------------------------------------------
# Reading


def read_results(directory: str | os.PathLike) -> RunResult:
    """Read a results directory (of any backend) into a :class:`RunResult`.

    Raises :class:`ResultsError` with a one-line message naming the file when the directory or
    one of its files is missing or unreadable.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = Path(directory)
    if not d.exists():
        raise ResultsError(f"{d}: no such results directory")
    if not d.is_dir():
        raise ResultsError(f"{d}: not a directory (expected a results directory written by "
                           f"'rove run')")
    missing = [n for n in (SUMMARY_FILE, TIMESERIES_FILE, QUEUE_FILE) if not (d / n).is_file()]
    if missing:
        raise ResultsError(f"{d}: not a rove results directory: missing {', '.join(missing)} "
                           f"(a directory written by 'rove run' holds {SUMMARY_FILE}, "
                           f"{TIMESERIES_FILE} and {QUEUE_FILE})")
    try:
        summary = json.loads((d / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ResultsError(f"{d / SUMMARY_FILE}: unreadable: {_one_line(e)}") from None
    if not isinstance(summary, dict):
        raise ResultsError(f"{d / SUMMARY_FILE}: expected a JSON object")
    tables = {}
    for name, required in ((TIMESERIES_FILE, ("time_s", "flow")), (QUEUE_FILE, ("time_s", "link"))):
        try:
            table = pq.read_table(str(d / name))
        except (OSError, pa.ArrowException, ValueError) as e:
            raise ResultsError(f"{d / name}: unreadable Parquet: {_one_line(e)}") from None
        absent = [c for c in required if c not in table.column_names]
        if absent:
            raise ResultsError(f"{d / name}: missing column(s) {', '.join(absent)}")
        tables[name] = table
    features = None
    if (d / FEATURES_FILE).is_file():
        try:
            features = pq.read_table(str(d / FEATURES_FILE))
        except (OSError, pa.ArrowException, ValueError) as e:
            raise ResultsError(f"{d / FEATURES_FILE}: unreadable Parquet: {_one_line(e)}") from None
    radio = None
    if (d / RADIO_FILE).is_file():
        try:
            radio = pq.read_table(str(d / RADIO_FILE))
        except (OSError, pa.ArrowException, ValueError) as e:
            raise ResultsError(f"{d / RADIO_FILE}: unreadable Parquet: {_one_line(e)}") from None
    return RunResult(summary, tables[TIMESERIES_FILE], tables[QUEUE_FILE], out=d,
                     features_table=features, radio_table=radio)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__
