"""The congestion-control zoo (issue 12 item 5): scenarios/sweeps/zoo.toml, the sweep that
`make zoo` runs into docs/zoo/README.md, stays in step with the engine's algorithms and valid."""

from __future__ import annotations

import rove
from rove.sweeps import check_points, expand_points, load_sweep

# On one path the coupled multipath algorithms are Reno-like (MPTCP-BBR: BBR) by construction
# (their coupling needs subflows); the zoo compares the single-path ones.
COUPLED = {"lia", "olia", "balia", "wvegas", "mpbbr", "olia_sbd", "sscc"}


def _zoo(repo):
    return load_sweep(repo / "scenarios" / "sweeps" / "zoo.toml")


def test_the_zoo_runs_every_single_path_algorithm_of_the_engine(repo):
    listed = _zoo(repo).grid["flows.0.cc"]
    assert len(listed) == len(set(listed))
    assert set(listed) == set(rove._core.CC_NAMES) - COUPLED


def test_the_zoo_cases_cover_the_issue_paths(repo):
    spec = _zoo(repo)
    names = [c.name for c in spec.cases]
    buffers = [c.overrides["links.down.buffer"] for c in spec.cases
               if "links.down.buffer" in c.overrides]
    assert buffers == ["50pkt", "100pkt", "200pkt", "400pkt", "800pkt"]  # 0.5-8 BDP of 100 pkt
    assert any(c.overrides.get("links.down.loss") == 0.01 for c in spec.cases)
    assert any("links.down.jitter" in c.overrides for c in spec.cases)
    lte = [c for c in spec.cases if c.scenario.name == "cellular.toml"]
    assert [c.name for c in lte] == ["lte-att-driving", "lte-tmobile", "lte-verizon"]
    assert all(c.requires for c in lte)
    assert len(names) == 10 and len(spec.seeds) == 3


def test_every_zoo_point_is_a_valid_scenario(repo):
    """Every case (those whose traces are here) with every algorithm passes the engine's
    checks, as `rove sweep` checks them before running."""
    from rove import _scenario_source

    spec = _zoo(repo)
    cases = [c for c in spec.cases if not c.missing()]
    skipped = [c.name for c in spec.cases if c.missing()]
    if skipped:
        print(f"zoo cases not checked, their traces are absent: {', '.join(skipped)}")
    sources = {c.name: _scenario_source(c.scenario) for c in cases}
    n = check_points(spec, sources, cases=cases)
    assert n == len(cases) * len(spec.grid["flows.0.cc"]) * 3
    assert len(expand_points(spec, cases)) == n
