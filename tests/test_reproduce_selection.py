"""`rove reproduce selection` end to end: every committed scenario of ``scenarios/selection/``
validates, every sweep expands and validates for every algorithm (and every switching plan) it
runs with, and the quick simulator-only study writes a well-formed report in which every
experiment ran. The verdict logic on hand-made numbers is
tests/test_reproduce_selection_verdicts.py.

Measured: the quick run (``--quick --sim-only``) takes 12-13 s on the project's 2-core machine
(the 300 km/h use cases at both latencies, one seed; the other experiments shortened to one or
two seeds)."""

from __future__ import annotations

from pathlib import Path

import pytest

import rove
from conftest import quick_study_report
from rove.reproduce import selection as study
from rove.reproduce.runner import DEFAULT_SETTING, check_available, derived_spec
from rove.reproduce.selection import mobility, switching
from rove.reproduce.selection.common import CAPACITY, CCAS, case_info, case_key
from rove.selection import switches
from rove.selection.tables import OPTION2
from rove.sweeps import expand_points, load_sweep

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((REPO / "scenarios" / "selection").glob("*.toml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_committed_scenario_validates(path):
    info = rove.validate(path)
    assert info["flows"], path


def _parts():
    """(part, series) of every sweep-run experiment and the mobility sweep's five algorithms and
    capacity run."""
    out = []
    for exp in study.EXPERIMENTS:
        for part in exp.parts:
            out += [(part, s) for s in exp.series]
    return out + [(mobility.MOBILITY, s) for s in (*CCAS, CAPACITY)]


@pytest.mark.parametrize("part,series", _parts(),
                         ids=lambda x: getattr(x, "key", getattr(x, "id", None)) or "x")
def test_every_sweep_validates_for_its_series(part, series):
    """The engine accepts every series' keys on its sweep (a refused series would be reported
    "not available" and its claims never count)."""
    committed = study.SWEEPS / part.sweep
    extra = {**series.overrides(), **part.fixed}
    doc = derived_spec(committed, extra, None)
    assert check_available(doc, series, DEFAULT_SETTING) is None


THESIS_PLANS = sorted({(case_key(lat, d, sp), tuple(p)) for (_, lat, d, sp), p in OPTION2.items()
                       if switches(p)})


@pytest.mark.parametrize("case,plan", THESIS_PLANS, ids=lambda x: "-".join(x) if
                         isinstance(x, tuple) else x)
def test_every_thesis_plan_validates_on_its_use_case(case, plan):
    """The switching runs' selection controller (Table 6.8's plans that switch) is accepted on
    its use case's scenario, as the switching experiment runs it."""
    lat, d, sp = case_info(case)
    scenario = REPO / "scenarios" / "selection" / f"aeroflex-{lat}-{d}-{sp}.toml"
    series = switching.plan_series(plan, d, sp)
    rove.validate(scenario, overrides=series.overrides())


def test_every_sweep_file_expands():
    files = sorted(study.SWEEPS.glob("*.toml"))
    assert len(files) == 6
    for f in files:
        assert expand_points(load_sweep(f)), f


def test_the_full_mobility_sweep_is_the_twelve_use_cases_at_ten_seeds():
    points = expand_points(load_sweep(study.SWEEPS / "mobility.toml"))
    assert len(points) == 12 * 10


def test_quick_sim_only_study_writes_a_complete_report(tmp_path):
    out = tmp_path / "selection"
    quick_study_report("selection", out, len(study.EXPERIMENTS))
    # the switching runs ran: rove's and the thesis's plans on the quick use cases
    assert any((out / "switching").iterdir())
