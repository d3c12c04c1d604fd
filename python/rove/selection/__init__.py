"""Congestion-control selection and switching over LTE with mobility (Atxutegi 2018,
../shared/research/seed-002.md): the thesis's policy as a library a script or a controller calls.

    from rove import selection
    selection.option1(selection.Context(min_rtt_ms=68, direction="backward", speed_kmh=300),
                      "goodput").cc                                   # 'bbr' (Table 6.1)
    selection.option2_plan("goodput", "4g", "backward", 300)          # ('bbr', 'illinois')
    selection.thesis_phases("backward", 300, 30)                      # start-up, scaling
    selection.handoff_cwnd(100, 150, 60)                              # 40 (Eq. 6.3)
    selection.controller_spec("goodput", "4g", "backward", 300, flow="ue")  # [[controllers]]
    selection.performance_metric(20e6, 25e6, 90, 68, 3)               # Eq. 6.1 per 100 ms

Pure Python, no third-party imports. docs/selection.md describes every function and [GAP].
"""

from .controller import controller_spec
from .handoff import (bdp_bytes, connections_to_fill, handoff_cwnd, handoff_from_samples,
                      hystart_delay_threshold_ms)
from .metric import MeanMetric, Sample, mean_performance_metric, performance_metric
from .phases import Phase, PhaseDetector, constrained_seconds, phase_at, thesis_phases
from .policy import (Choice, Context, derive_table_6_8, exclusions, option1, option2_plan,
                     select_per_phase, switches)
from .tables import (CANDIDATES, CRITERIA, OPTION1, OPTION2, SINGLE_ALGORITHM_ROWS,
                     THESIS_OVERRIDES, USE_CASES, phases_of, use_case_name)

__all__ = [
    "controller_spec", "bdp_bytes", "connections_to_fill", "handoff_cwnd", "handoff_from_samples",
    "hystart_delay_threshold_ms", "MeanMetric", "Sample", "mean_performance_metric",
    "performance_metric", "Phase", "PhaseDetector", "constrained_seconds", "phase_at",
    "thesis_phases", "Choice", "Context", "derive_table_6_8", "exclusions", "option1",
    "option2_plan", "select_per_phase", "switches", "CANDIDATES", "CRITERIA", "OPTION1",
    "OPTION2", "SINGLE_ALGORITHM_ROWS", "THESIS_OVERRIDES", "USE_CASES", "phases_of",
    "use_case_name",
]
