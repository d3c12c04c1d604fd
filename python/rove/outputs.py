"""Where rove may write: output directories and input files, checked before anything runs.

rove never deletes what it did not write. A command's ``-o DIR`` is accepted when ``DIR`` does not
exist, is empty, or holds what rove wrote there before (``--force`` / ``force=True`` to replace
that); any other directory is refused with a one-line error, untouched. rove recognises its own
directories by what it writes into them: a results directory holds ``summary.json``,
``timeseries.parquet`` and ``queue.parquet``; a comparison ``compare.json``; a report
``report.html``; a sweep's Markdown page ``README.md`` and the marker ``.rove-page``.

Atomic writers stage into hidden siblings ``.NAME.partial-PID-*`` (and move replaced results aside
into ``.NAME.old-PID-*``). A process killed hard (``kill -9``, power loss) leaves them behind; the
next run into the same place removes those whose process is gone (:func:`remove_stale`).

Inputs (scenario and sweep files) must be regular files of at most :data:`MAX_INPUT_BYTES`: a
special file (``/dev/zero``, a FIFO) or a huge file is refused before it is read.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

__all__ = ["OutputError", "MAX_INPUT_BYTES", "KINDS", "check_output_dir", "check_study_dir",
           "mark_study_dir", "staging_prefix", "remove_stale", "check_input_file"]

# A scenario or sweep file is a few kB; 4 MiB leaves room for generated ones (thousands of flows)
# while refusing a file that is obviously not a scenario before reading it into memory.
MAX_INPUT_BYTES = 4 * 1024 * 1024

# The files that mark a directory as written by rove, per kind of output.
KINDS = {
    "results": ("summary.json", "timeseries.parquet", "queue.parquet"),
    "compare": ("compare.json",),
    "report": ("report.html",),
    "page": ("README.md", ".rove-page"),     # rove report --markdown (a sweep's Markdown page)
}


class OutputError(ValueError):
    """An output or input path rove refuses (the message is one line, for the user)."""


def _is_rove_dir(d: Path, kind: str) -> bool:
    return all((d / name).is_file() for name in KINDS[kind])


def check_output_dir(out: str | os.PathLike, kind: str = "results", force: bool = False,
                     option: str = "-o") -> Path:
    """Check that ``out`` may receive a new output of ``kind``; return it as a Path.

    Refuses (``OutputError``): a path that exists and is not a directory; a non-empty directory
    that does not hold rove output of ``kind``; one that does, unless ``force``. An empty or
    missing directory is fine (its parent is created by the writer). Nothing is modified here.
    """
    if os.fspath(out) == "":  # Path("") would be the current directory
        raise OutputError(f"{option}: empty path; name a directory to write")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: exists and is not a directory ({option} names a directory "
                          f"to write)")
    if not out.is_dir():
        for parent in out.absolute().parents:  # the first one that exists must be a directory
            if parent.exists():
                if not parent.is_dir():
                    raise OutputError(f"{out}: cannot be created: {parent} is not a directory")
                break
        return out
    try:
        entries = sorted(p.name for p in out.iterdir())
    except OSError as e:
        raise OutputError(f"{out}: cannot read the directory: {e.strerror or e}") from None
    if not entries:
        return out
    if not _is_rove_dir(out, kind):
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        want = ", ".join(KINDS[kind])
        raise OutputError(f"{out}: exists and is not a rove {kind} directory (it holds {shown}; "
                          f"one holds {want}); rove will not replace it: choose a new or empty "
                          f"directory")
    if not force:
        raise OutputError(f"{out}: already holds rove {kind} from an earlier run; add --force "
                          f"to replace them, or choose another directory")
    return out


# Files by which a reproduction's directory is recognised (resumed, never replaced): the marker
# every study writes first (so an interrupted first run is recognised too), and the files of
# directories written before the marker existed.
STUDY_MARKER = ".rove-study"
STUDY_MARKERS = (STUDY_MARKER, "reproduce-log.json", "report.md")


def mark_study_dir(out: Path, study: str) -> None:
    """Create ``out`` and mark it as a reproduction's output (see :func:`check_study_dir`)."""
    out.mkdir(parents=True, exist_ok=True)
    marker = out / STUDY_MARKER
    if not marker.is_file():
        marker.write_text(study + "\n", encoding="utf-8")


def check_study_dir(out: str | os.PathLike, option: str = "-o") -> Path:
    """A reproduction writes into ``out`` and resumes what is there: accept a new or empty
    directory, or one a reproduction wrote (it holds one of :data:`STUDY_MARKERS`); refuse any
    other, untouched."""
    if os.fspath(out) == "":
        raise OutputError(f"{option}: empty path; name a directory to write")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: exists and is not a directory ({option} names the output "
                          f"directory)")
    if not out.is_dir() or not any(out.iterdir()):
        return out
    if any((out / m).is_file() for m in STUDY_MARKERS):
        return out
    shown = ", ".join(sorted(p.name for p in out.iterdir())[:3])
    raise OutputError(f"{out}: exists and is not the output of a reproduction (it holds {shown}, "
                      f"...; one holds {' or '.join(STUDY_MARKERS)}); rove will not write into "
                      f"it: choose a new or empty directory")


def staging_prefix(out: Path, what: str = "partial") -> str:
    """The prefix of a hidden staging directory beside ``out``, owned by this process."""
    return f".{out.name}.{what}-{os.getpid()}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def remove_stale(out: Path) -> list[Path]:
    """Remove the staging directories beside ``out`` left by processes that no longer exist;
    return what was removed. Those of a live process (a concurrent run) are left alone."""
    out = Path(out)
    parent = out.absolute().parent
    removed = []
    if not parent.is_dir():
        return removed
    for what in ("partial", "old"):
        for p in parent.glob(f".{out.name}.{what}-*"):
            pid_text = p.name[len(f".{out.name}.{what}-"):].split("-", 1)[0]
            if pid_text.isdigit() and _pid_alive(int(pid_text)):
                continue  # a run in progress (ours or a concurrent one)
            # no pid: written by a rove older than this scheme, whose process cannot be told
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            removed.append(p)
    return removed


def check_input_file(path: str | os.PathLike, what: str = "scenario",
                     limit: int = MAX_INPUT_BYTES) -> Path:
    """Check that ``path`` is a readable regular file of at most ``limit`` bytes.

    A missing or unreadable file raises ``OSError`` (as ``open`` would); a directory, a special
    file or a file over the limit raises :class:`OutputError`.
    """
    path = Path(path)
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{path}: is a directory, expected a {what} file")
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(f"{path}: not a regular file (a device, FIFO or socket); a {what} is "
                          f"a TOML file")
    if st.st_size > limit:
        raise OutputError(f"{path}: {st.st_size / 2**20:.1f} MiB is too large for a {what} file "
                          f"(at most {limit // 2**20} MiB); is it the right file?")
    with open(path, "rb"):  # PermissionError here, with the file's name, as reading would
        pass
    return path
