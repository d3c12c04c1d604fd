"""Shared helpers for rove's Python tests.

The CLI is tested as a user meets it: through the installed ``rove`` entry point in a
subprocess. Scenario files are written into pytest's tmp_path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def rove_command() -> list[str]:
    """The ``rove`` console script next to this interpreter, else on PATH, else ``-m``."""
    exe = Path(sys.executable).with_name("rove")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("rove")
    if found:
        return [found]
    return [sys.executable, "-m", "rove.cli"]


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args, cwd=None, timeout=300, env=None) -> CliResult:
    proc = subprocess.run(rove_command() + [str(a) for a in args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def assert_drawn_png(path, min_width: int = 300, min_height: int = 200,
                     min_colours: int = 8, min_ink: float = 0.01,
                     min_coloured_px: int = 50) -> None:
    """``path`` is a PNG that decodes, is at least ``min_width`` × ``min_height`` pixels, and
    has something drawn on it: at least ``min_colours`` distinct colours, at least ``min_ink``
    of its pixels differ from the most common (background) colour, and at least
    ``min_coloured_px`` pixels are coloured (not grey: axes, ticks and text are black or grey,
    data are drawn in colour), so a figure whose axes hold no data fails. The PNG magic bytes
    alone say nothing of what a figure shows."""
    from PIL import Image

    with Image.open(path) as im:
        assert im.format == "PNG", f"{path}: {im.format}, not PNG"
        im = im.convert("RGB")
        w, h = im.size
        assert w >= min_width and h >= min_height, f"{path}: {w}x{h} pixels"
        colours = im.getcolors(maxcolors=w * h)
    colours.sort(reverse=True)
    assert len(colours) >= min_colours, f"{path}: only {len(colours)} colours (blank?)"
    ink = 1 - colours[0][0] / (w * h)
    assert ink >= min_ink, f"{path}: {ink:.2%} of the pixels drawn"
    coloured = sum(n for n, (r, g, b) in colours if max(r, g, b) - min(r, g, b) > 40)
    assert coloured >= min_coloured_px, f"{path}: {coloured} pixels in colour (no data drawn?)"


def shared_traces_dir() -> Path | None:
    """``../shared/traces/mahimahi`` relative to the repo, or /work/shared/traces/mahimahi."""
    for base in (REPO.parent / "shared" / "traces", Path("/work/shared/traces")):
        d = base / "mahimahi"
        if d.is_dir() and any(d.iterdir()):
            return d
    return None


@pytest.fixture
def write_scenario(tmp_path):
    """Write a scenario file (dedented TOML) into tmp_path and return its path."""

    def _write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return _write


SMALL_SCENARIO = """
name = "small"
duration = "2s"
seed = 7

[links.down]
rate = "20Mbps"
delay = "10ms"
buffer = "100pkt"

[links.up]
rate = "20Mbps"
delay = "10ms"

[[flows]]
name = "bulk"
cc = "reno"
path = ["down"]
ack_path = ["up"]
"""


def small_scenario_dict(**top) -> dict:
    d = {
        "name": "small-dict",
        "duration": "2s",
        "seed": 3,
        "links": {
            "down": {"rate": "20Mbps", "delay": "10ms", "buffer": "100pkt"},
            "up": {"rate": "20Mbps", "delay": "10ms"},
        },
        "flows": [{"name": "bulk", "cc": "reno", "path": ["down"], "ack_path": ["up"]}],
    }
    d.update(top)
    return d


def quick_study_report(name: str, out: Path, experiments: int, files=("report.md", "report.html"),
                       args=("--sim-only",), refused=None, unrun=lambda title: False) -> dict:
    """Runs `rove reproduce NAME --quick` into `out` and checks what every study's quick report
    must be: exit 0, a well-formed report.json, the named files written, one section per
    experiment (`experiments` of them), none crashed, and every section's claims judged with no
    verdict in `refused` (default: NOT_AVAILABLE, a series refused). A section whose title
    `unrun` accepts (run only with the kernel) must have every claim NOT_MEASURED instead.
    Returns the report's JSON."""
    import json
    from rove.cli import main as cli_main
    from rove.reproduce.document import check_json
    from rove.reproduce.verdicts import NOT_AVAILABLE, NOT_MEASURED

    refused = (NOT_AVAILABLE,) if refused is None else refused
    assert cli_main(["reproduce", name, "--quick", *args, "-q", "-o", str(out)]) == 0
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert check_json(json.dumps(doc)) == []
    for f in files:
        assert (out / f).stat().st_size > 0, f
    assert len(doc["sections"]) == experiments
    for s in doc["sections"]:
        title = s["title"]
        assert not s.get("error"), f"{title}: {s.get('error')}"
        verdicts = [c["verdict"] for c in s["claims"]]
        if unrun(title):
            assert all(v == NOT_MEASURED for v in verdicts), f"{title}: {verdicts}"
            continue
        assert verdicts, title
        assert not set(refused) & set(verdicts), f"{title}: a series was refused: {verdicts}"
    return doc


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def pytest_report_header(config):
    traces = shared_traces_dir()
    return [f"rove: {' '.join(rove_command())}",
            f"shared traces: {traces if traces else 'absent (tests that need them are skipped)'}"]


os.environ.setdefault("MPLBACKEND", "Agg")
