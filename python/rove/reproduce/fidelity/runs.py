"""The fidelity study's scenarios and how they run: one generated scenario per :class:`Case`,
run on the simulator (in-process, :func:`rove.run`, one or more seeds) and on the kernel backend
(``python -m rove run --backend kernel``, one run at a time in real time, one or more runs).
A run whose ``summary.json`` exists is reused, so a study directory resumes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..measures import trace_mean_mbps  # noqa: F401  (re-exported)

ACK_LINK_RATE = "100Mbps"  # [GAP] ACKs are never the bottleneck
PACKET_BYTES = 1500


@dataclass
class Case:
    """One scenario of the study: an algorithm, a flow count, an RTT, a buffer over a fixed
    link or a trace, and the scenario itself."""

    id: str
    cc: str
    flows: int
    rtt_ms: float
    buffer_bdp: float | None             # None: the buffer is given in bytes (buffer_bytes)
    rate_mbps: float | None = None       # fixed link
    trace: Path | None = None            # trace-driven downlink
    duration_s: float = 30.0
    scenario: dict = field(default_factory=dict)
    buffer_bytes: float | None = None


def buffer_pkts(rate_mbps: float, rtt_ms: float, bdp: float) -> int:
    """``bdp`` bandwidth-delay products in packets of 1500 bytes (at least 2)."""
    bdp_bytes = rate_mbps * 1e6 / 8 * rtt_ms / 1e3
    return max(2, round(bdp * bdp_bytes / PACKET_BYTES))


def fmt_id(x: float) -> str:
    """``0.5`` -> ``"0p5"`` (for scenario ids)."""
    return f"{x:g}".replace(".", "p")


def scenario(name: str, down: dict, rtt_ms: float, cc: str, flows: int, duration_s: float) -> dict:
    """The study's scenario: ``flows`` bulk flows of ``cc`` over the ``down`` link, the RTT split
    evenly between it and a 100 Mbit/s ACK link."""
    half = f"{rtt_ms / 2:g}ms"
    flow = {"name": cc, "cc": cc, "path": ["down"], "ack_path": ["up"], "size": "inf"}
    if flows > 1:
        flow["count"] = flows
    return {
        "name": name,
        "duration": f"{duration_s:g}s",
        "seed": 1,
        "links": {"down": dict(down, delay=half, queue="droptail"),
                  "up": {"rate": ACK_LINK_RATE, "delay": half}},
        "flows": [flow],
    }


def default_traces_dir() -> Path | None:
    """``../shared/traces/mahimahi`` next to the checkout, else /work/shared/traces/mahimahi."""
    here = Path(__file__).resolve()
    for base in [p / "shared" / "traces" for p in here.parents[3:6]] + [Path("/work/shared/traces")]:
        d = base / "mahimahi"
        if d.is_dir() and any(d.glob("*.down")):
            return d
    return None


# --------------------------------------------------------------------------------------------
# Running


def kernel_backend_status(python: str = sys.executable) -> tuple[bool, str]:
    """Whether ``python -m rove run`` accepts ``--backend kernel``, and why not."""
    try:
        proc = subprocess.run([python, "-m", "rove", "run", "--help"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"cannot run '{python} -m rove run --help': {e}"
    if proc.returncode != 0:
        return False, f"'rove run --help' failed: {proc.stderr.strip().splitlines()[-1:]}"
    if "--backend" not in proc.stdout:
        return False, ("this build's 'rove run' has no --backend option (the kernel backend, "
                       "issue 5 items 1-4, is not merged here)")
    return True, "rove run --backend kernel"


def have(directory: Path) -> bool:
    return (directory / "summary.json").is_file()


def run_sim(scenario_file: Path, out: Path, seed: int | None = None) -> str | None:
    import rove

    try:
        rove.run(str(scenario_file), out=out, seed=seed)
    except Exception as e:  # noqa: BLE001 - one failed point must not end the whole report
        return f"{type(e).__name__}: {' '.join(str(e).split())}"
    return None


def run_kernel(scenario_file: Path, out: Path, duration_s: float,
               python: str = sys.executable, seed: int | None = None) -> str | None:
    cmd = [python, "-m", "rove", "run", "--backend", "kernel", str(scenario_file), "-o", str(out),
           "--quiet"] + ([] if seed is None else ["--seed", str(seed)])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=duration_s * 3 + 120)
    except subprocess.TimeoutExpired:
        return f"timed out after {duration_s * 3 + 120:.0f} s"
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return f"exit {proc.returncode}: {lines[-1] if lines else '(no message)'}"
    return None


def load_summary(d: Path) -> dict | None:
    try:
        return json.loads((Path(d) / "summary.json").read_text())
    except (OSError, ValueError):
        return None


@dataclass
class Outcome:
    """A case's runs: the simulator's (one per seed) and the kernel's (one per repetition),
    as results directories with their summaries, and why any did not run."""

    case: Case
    sim_dirs: list[Path] = field(default_factory=list)
    kernel_dirs: list[Path] = field(default_factory=list)
    sims: list[dict] = field(default_factory=list)
    kernels: list[dict] = field(default_factory=list)
    sim_error: str | None = None
    kernel_error: str | None = None
    compare_error: str | None = None

    @property
    def sim(self) -> dict | None:           # the first seed's summary
        return self.sims[0] if self.sims else None

    @property
    def kernel(self) -> dict | None:        # the first kernel run's summary
        return self.kernels[0] if self.kernels else None


def _write_scenario(path: Path, doc: dict) -> None:
    import tomli_w

    from ...results import write_bytes_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomically(path, tomli_w.dumps(doc).encode("utf-8"))


def _overlay(run_dir: Path, sim: Path, kernel: Path) -> str | None:
    """``rove compare`` of a simulator and a kernel run into ``run_dir/compare``."""
    from ...compare import compare

    try:
        compare([sim, kernel], out=run_dir / "compare")
    except Exception as e:  # noqa: BLE001 - a figure must not end the whole report
        return f"{type(e).__name__}: {' '.join(str(e).split())}"
    return None


class KernelRunner:
    """Runs kernel scenarios one at a time; after the same exit-2 message twice in a row (an
    unusable machine: not root, no TUN), the rest are skipped with that message instead of
    failing one by one."""

    def __init__(self, enabled: bool, run: Callable[..., str | None] | None = None):
        self.enabled = enabled
        self.run = run or run_kernel
        self.previous_usage_error: str | None = None
        self.skip: str | None = None

    def __call__(self, scen: Path, out: Path, duration_s: float,
                 seed: int | None = None) -> str | None:
        if self.skip:
            return f"not run: {self.skip}"
        err = (self.run(scen, out, duration_s) if seed is None
               else self.run(scen, out, duration_s, seed=seed))
        usage = err if (err or "").startswith("exit 2:") else None
        if usage and usage == self.previous_usage_error:
            self.skip = f"skipped after the same error twice ({usage})"
        self.previous_usage_error = usage
        return err


def shifted(doc: dict, offset_ms: float) -> dict:
    """The scenario with every flow starting ``offset_ms`` later."""
    import copy

    from ..measures import time_ms

    out = copy.deepcopy(doc)
    for f in out["flows"]:
        f["start"] = f"{time_ms(f.get('start', '0ms')) + offset_ms:g}ms"
    return out


def run_cases(cases: Sequence[Case], out: Path, kernel: KernelRunner,
              log: Callable[[str], None] = lambda s: None, sim_seeds: Sequence[int] = (1,),
              kernel_runs: int = 1, overlay: bool = True,
              start_step_ms: float = 0.0, kernel_seeds: bool = False) -> list[Outcome]:
    """Run every case into ``out`` (``scenarios/ID.toml``; ``runs/ID/sim`` and ``runs/ID/kernel``
    for one seed and one kernel run, ``runs/ID/sim-seedN`` and ``runs/ID/kernel-N`` for more),
    reusing results already there. With ``start_step_ms``, the simulator's seed N starts the
    flows (N − 1) × ``start_step_ms`` later (``scenarios/ID-seedN.toml``), sampling the start
    instant that the kernel's runs do not control. With ``kernel_seeds``, kernel run N runs
    seed N's scenario with ``--seed N``: the emulator draws a link's random loss from the same
    stream as the simulator (one link model), so runs at one seed drop the same packets (the
    same loss pattern, not independent samples of it), and kernel run N meets simulator seed
    N's pattern."""
    outcomes = []
    for i, c in enumerate(cases, 1):
        scen = out / "scenarios" / f"{c.id}.toml"
        _write_scenario(scen, c.scenario)
        run_dir = out / "runs" / c.id
        run_dir.mkdir(parents=True, exist_ok=True)
        o = Outcome(c)
        t0 = time.monotonic()
        def seed_scenario(seed: int) -> Path:
            if start_step_ms and seed != 1:
                path = out / "scenarios" / f"{c.id}-seed{seed}.toml"
                _write_scenario(path, shifted(c.scenario, (seed - 1) * start_step_ms))
                return path
            return scen

        for seed in sim_seeds:
            d = run_dir / ("sim" if len(sim_seeds) == 1 else f"sim-seed{seed}")
            seed_scen = seed_scenario(seed)
            err = None if have(d) else run_sim(seed_scen, d, seed)
            if err is None and load_summary(d) is not None:
                o.sim_dirs.append(d)
                o.sims.append(load_summary(d))
            else:
                o.sim_error = o.sim_error or err or f"{d}: no summary.json"
        if kernel.enabled:
            for k in range(1, kernel_runs + 1):
                d = run_dir / ("kernel" if kernel_runs == 1 else f"kernel-{k}")
                if kernel_seeds:
                    err = None if have(d) else kernel(seed_scenario(k), d, c.duration_s, seed=k)
                else:
                    err = None if have(d) else kernel(scen, d, c.duration_s)
                if err is None and load_summary(d) is not None:
                    o.kernel_dirs.append(d)
                    o.kernels.append(load_summary(d))
                else:
                    o.kernel_error = o.kernel_error or err or f"{d}: no summary.json"
        if overlay and o.sim_dirs and o.kernel_dirs:
            o.compare_error = _overlay(run_dir, o.sim_dirs[0], o.kernel_dirs[0])
        status = [f"sim {len(o.sims)}/{len(sim_seeds)}"
                  + ("" if o.sim_error is None else f" FAILED: {o.sim_error}")]
        if kernel.enabled:
            status.append(f"kernel {len(o.kernels)}/{kernel_runs}"
                          + ("" if o.kernel_error is None else f" FAILED: {o.kernel_error}"))
        log(f"  [{i}/{len(cases)}] {c.id}: {', '.join(status)} ({time.monotonic() - t0:.1f} s)")
        outcomes.append(o)
    return outcomes
