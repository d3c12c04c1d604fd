"""Bad input of every kind: one line on stderr naming the file and the key or line, exit 2.

Each case writes its files into a fresh directory, runs the ``rove`` entry point in a subprocess
and checks: exit status 2; stderr is exactly one line starting with ``rove: error:``; no traceback
or Rust panic; the line names the file (or option) and the key or line that is wrong; and a run
that failed left no results directory behind.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import subprocess

from conftest import rove_command, run_cli

BASE = """
name = "bad"
duration = "2s"
seed = 1

[links.down]
rate = "20Mbps"
delay = "10ms"

[links.up]
rate = "100Mbps"
delay = "10ms"

[[flows]]
name = "f"
cc = "reno"
path = ["down"]
ack_path = ["up"]
"""


def scenario(replace: dict[str, str] | None = None, append: str = "") -> str:
    text = BASE
    for old, new in (replace or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    return textwrap.dedent(text).lstrip() + textwrap.dedent(append)


@dataclass
class Case:
    """``args`` may use {scenario}, {dir} and {out}; ``names`` must all appear in the line
    (case-insensitive), and for each tuple in ``any_of`` at least one of its strings."""

    args: list[str]
    files: dict[str, str | bytes] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    any_of: list[tuple[str, ...]] = field(default_factory=list)


# A WiFi cell of two access points on one channel (crates/sim link/wifi/bss.rs), s2's `ap` to
# fill in.
TWO_APS = """
[links.air]
kind = "wifi"
aps = ["ap1", "ap2"]
[links.air.stations.s1]
ap = "ap1"
[links.air.stations.s2]
{s2}
"""

CASES: dict[str, Case] = {
    "wifi-station-without-its-ap": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario(append=TWO_APS.format(s2='snr = "30dB"'))},
        names=["s.toml", "links.air.stations.s2.ap", "missing required key", '"ap1", "ap2"']),
    "wifi-station-with-an-unknown-ap": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario(append=TWO_APS.format(s2='ap = "ap7"'))},
        names=["s.toml", "links.air.stations.s2.ap", '"ap7"']),
    "oal-on-several-aps-without-its-ap": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario(append=TWO_APS.format(s2='ap = "ap2"')
                            + '[[controllers]]\nkind = "oal"\nlink = "air"\n')},
        names=["s.toml", "controllers[0].ap", "several access points (ap1, ap2)"]),
    "unknown-top-level-key": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({"seed = 1": "seed = 1\nbogus_key = 1"})},
        names=["s.toml", "bogus_key"]),
    "unknown-link-key": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario({'delay = "10ms"\n\n[links.up]': 'delay = "10ms"\nbandwidth = "5Mbps"\n\n[links.up]'})},
        names=["s.toml", "bandwidth"]),
    "wrong-time-unit": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'delay = "10ms"\n\n[links.up]': 'delay = "10 parsecs"\n\n[links.up]'})},
        names=["s.toml", "delay"]),
    "wrong-rate-unit": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario({'rate = "20Mbps"': 'rate = "20MB"'})},
        names=["s.toml", "rate"]),
    "negative-rate": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'rate = "20Mbps"': 'rate = "-20Mbps"'})},
        names=["s.toml", "rate"]),
    "zero-rate": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'rate = "20Mbps"': 'rate = "0Mbps"'})},
        names=["s.toml", "rate"]),
    "missing-link": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario({'path = ["down"]': 'path = ["nowhere"]'})},
        names=["s.toml", "nowhere"]),
    "missing-duration": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'duration = "2s"\n': ''})},
        names=["s.toml", "duration"]),
    "toml-syntax-error": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'cc = "reno"': 'cc = "reno'})},
        names=["s.toml"], any_of=[("line", "column")]),
    "unknown-cc": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario({'cc = "reno"': 'cc = "warp-speed"'})},
        names=["s.toml", "cc"], any_of=[("warp-speed",)]),
    "count-zero": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario(append='count = 0\n')},
        names=["s.toml", "count"]),
    "loss-above-one": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'delay = "10ms"\n\n[links.up]': 'delay = "10ms"\nloss = 1.5\n\n[links.up]'})},
        names=["s.toml", "loss"]),
    "bad-buffer": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'delay = "10ms"\n\n[links.up]': 'delay = "10ms"\nbuffer = "lots"\n\n[links.up]'})},
        names=["s.toml", "buffer"]),
    "bad-queue-discipline": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'delay = "10ms"\n\n[links.up]': 'delay = "10ms"\nqueue = "red"\n\n[links.up]'})},
        names=["s.toml", "queue"]),
    "rate-and-trace": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'rate = "20Mbps"': 'rate = "20Mbps"\ntrace = "synth:constant"'}),},
        names=["s.toml"], any_of=[("rate", "trace")]),
    "missing-ack-path": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'ack_path = ["up"]\n': ''})},
        names=["s.toml", "ack_path"]),
    "empty-trace-file": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario({'rate = "20Mbps"': 'trace = "empty.trace"'}), "empty.trace": ""},
        names=["empty.trace"]),
    "unsorted-trace-file": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario({'rate = "20Mbps"': 'trace = "unsorted.trace"'}),
         "unsorted.trace": "1\n2\n5\n3\n8\n"},
        names=["unsorted.trace", "line"]),
    "garbage-in-trace-file": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'rate = "20Mbps"': 'trace = "garbage.trace"'}),
         "garbage.trace": "1\n2\nthree\n4\n"},
        names=["garbage.trace", "line"]),
    "unreadable-trace-file": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario({'rate = "20Mbps"': 'trace = "does-not-exist.trace"'})},
        names=["does-not-exist.trace"]),
    "bad-synth-trace-param": Case(
        ["validate", "{scenario}"],
        {"s.toml": scenario({'rate = "20Mbps"': 'trace = "synth:cellular"\ntrace_params = { median = "fast" }'})},
        names=["s.toml", "median"]),
    "not-utf8-scenario": Case(
        ["validate", "{scenario}"],
        {"s.toml": b"name = \"\xff\xfe\"\n"},
        names=["s.toml"]),
    "nonexistent-scenario-file": Case(
        ["run", "{dir}/no-such-scenario.toml", "-o", "{out}"],
        names=["no-such-scenario.toml"]),
    "scenario-is-a-directory": Case(
        ["validate", "{dir}"],
        names=["directory"]),
    "bad-set-no-equals": Case(
        ["run", "{scenario}", "-o", "{out}", "--set", "links.down.rate"],
        {"s.toml": scenario()},
        names=["--set", "links.down.rate"]),
    "bad-set-unknown-key": Case(
        ["run", "{scenario}", "-o", "{out}", "--set", "links.down.colour=blue"],
        {"s.toml": scenario()},
        names=["colour"]),
    "bad-set-wrong-unit": Case(
        ["validate", "{scenario}", "--set", "links.down.delay=5 fortnights"],
        {"s.toml": scenario()},
        names=["delay"]),
    "bad-seed-option": Case(
        ["run", "{scenario}", "-o", "{out}", "--seed", "minus-one"],
        {"s.toml": scenario()},
        names=["seed"]),
    "report-on-missing-dir": Case(
        ["report", "{dir}/no-results-here"],
        names=["no-results-here"]),
    "report-on-non-results-dir": Case(
        ["report", "{dir}"],
        {"unrelated.txt": "hello\n"},
        names=["summary.json"]),
    "report-on-corrupt-parquet": Case(
        ["report", "{dir}/res"],
        {"res/summary.json": "{}\n", "res/timeseries.parquet": "not parquet",
         "res/queue.parquet": "not parquet"},
        names=["timeseries.parquet"]),
    "bad-synth-kind": Case(
        ["trace", "synth", "wormhole", "-o", "{dir}/t.trace"],
        names=["wormhole"]),
    "bad-synth-param-no-equals": Case(
        ["trace", "synth", "constant", "-o", "{dir}/t.trace", "--param", "rate"],
        names=["--param"]),
    "bad-synth-param-unknown": Case(
        ["trace", "synth", "constant", "-o", "{dir}/t.trace", "--param", "flavour=mint"],
        names=["flavour"]),
    "bad-synth-duration": Case(
        ["trace", "synth", "constant", "-o", "{dir}/t.trace", "--duration", "ten"],
        names=["--duration"]),
    "loss-of-one-loses-everything": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario({'delay = "10ms"\n\n[links.up]': 'delay = "10ms"\nloss = 1\n\n[links.up]'})},
        names=["s.toml", "links.down.loss", "0 <= loss < 1"]),
    "buffer-smaller-than-a-packet": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario({'delay = "10ms"\n\n[links.up]': 'delay = "10ms"\nbuffer = "1B"\n\n[links.up]'})},
        names=["s.toml", "links.down.buffer", "1500"]),
    "rwnd-smaller-than-a-segment": Case(
        ["run", "{scenario}", "-o", "{out}"],
        {"s.toml": scenario(append='rwnd = "1B"\n')},
        names=["s.toml", "flows[0].rwnd", "1448"]),
    "unknown-subcommand": Case(
        ["fly", "{scenario}"],
        {"s.toml": scenario()},
        names=["fly"]),
}


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_bad_input_gives_one_line_error_and_exit_2(case_id, tmp_path):
    case = CASES[case_id]
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    subst = {"scenario": str(tmp_path / "s.toml"), "dir": str(tmp_path), "out": str(out)}
    args = [a.format(**subst) for a in case.args]

    r = run_cli(*args, cwd=tmp_path)

    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{r.stderr}"
    line = lines[0]
    assert line.startswith("rove: error: "), line
    low = line.lower()
    for name in case.names:
        assert name.lower() in low, f"{name!r} not named in: {line}"
    for alternatives in case.any_of:
        assert any(a.lower() in low for a in alternatives), f"none of {alternatives} in: {line}"
    assert not out.exists(), "a failed run must not leave a results directory"
    leftovers = [p.name for p in tmp_path.iterdir() if ".partial-" in p.name]
    assert not leftovers, leftovers


def test_at_least_fifteen_kinds_of_bad_input():
    assert len(CASES) >= 15


def test_unreadable_scenario_permissions(tmp_path):
    """A scenario file the user may not read is a one-line error naming it. Root reads any
    file through its capabilities, so as root (CI) the CLI runs without CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH (util-linux's setpriv, part of every Debian), instead of skipping."""
    import os
    import shutil

    s = tmp_path / "s.toml"
    s.write_text(scenario())
    s.chmod(0)
    prefix = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "running as root needs util-linux's setpriv to drop the capabilities"
        caps = "-dac_override,-dac_read_search"
        prefix = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]
    proc = subprocess.run(prefix + rove_command() + ["validate", str(s)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "s.toml" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("rove: error:")


def test_error_line_names_the_scenario_file_as_given(tmp_path):
    (tmp_path / "sub").mkdir()
    s = tmp_path / "sub" / "named-file.toml"
    s.write_text(scenario({'cc = "reno"': 'cc = "nope"'}))
    r = run_cli("validate", "sub/named-file.toml", cwd=tmp_path)
    assert r.returncode == 2
    assert "named-file.toml" in r.stderr


def test_no_subcommand_is_a_usage_error():
    r = run_cli()
    assert r.returncode == 2
    assert r.stderr.startswith("rove: error:")
    assert "Traceback" not in r.stderr
