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


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def pytest_report_header(config):
    traces = shared_traces_dir()
    return [f"rove: {' '.join(rove_command())}",
            f"shared traces: {traces if traces else 'absent (tests that need them are skipped)'}"]


os.environ.setdefault("MPLBACKEND", "Agg")
