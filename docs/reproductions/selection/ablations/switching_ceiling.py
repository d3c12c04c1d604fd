"""The most any per-phase plan could gain on rove's cell: per use case and criterion, the
slot-weighted mean over phases of the best algorithm's mean per-phase value (each phase taken
from the single-algorithm runs, as the thesis builds Table 6.8 from Tables 6.2-6.7) over the
best single algorithm's mean whole-run value; and each algorithm's utilisation (mean goodput
over mean capacity) per phase.

    .venv/bin/python docs/reproductions/selection/ablations/switching_ceiling.py STUDY_DIR

STUDY_DIR is a `rove reproduce selection` output (its mobility/phase-values.parquet)."""
import sys

import pandas as pd

df = pd.read_parquet(f"{sys.argv[1]}/mobility/phase-values.parquet")
m = (df.groupby(["latency", "direction", "speed", "cc", "phase"])
     [["goodput_mbps", "capacity_mbps", "pm", "dpm", "slots"]].mean().reset_index())
for (lat, d, sp), g in m.groupby(["latency", "direction", "speed"]):
    run = g[g.phase == "run"].set_index("cc")
    ph = g[g.phase != "run"]
    out = [f"{lat} {d[0].upper()}{sp}"]
    for col in ("goodput_mbps", "pm", "dpm"):
        tot = w_sum = 0.0
        for _, gp in ph.groupby("phase"):
            w = gp.slots.mean()
            tot += w * gp[col].max()
            w_sum += w
        out.append(f"{col} ceiling {100 * (tot / w_sum / run[col].max() - 1):+.1f}% "
                   f"(best single {run[col].idxmax()})")
    print("; ".join(out))
u = m[m.phase != "run"].set_index(["latency", "direction", "speed", "phase", "cc"])
print((u.goodput_mbps / u.capacity_mbps).unstack("cc").round(2).to_string())
