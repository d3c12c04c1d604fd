"""Ablation (H5, low latency): BBR's whole-run PM (Eq. 6.1) with Linux 6.x's ACK-aggregation
allowance (rove's default) and without it (extra_acked_gain = 0, as the thesis's 4.x-era BBR),
beside CUBIC and NewReno, 4 low-latency use cases, seeds 1-10.

    .venv/bin/python docs/reproductions/selection/ablations/bbr_aggregation.py   (from the repository root;
    its output: bbr_aggregation.txt)
"""
import statistics as st
import rove
from rove.reproduce.selection.phases import run_values
from rove.selection.phases import Phase
import tempfile, pathlib

SEEDS = range(1, 11)
tmp = pathlib.Path(tempfile.mkdtemp())
for d, sp in (("forward", 60), ("backward", 60), ("forward", 300), ("backward", 300)):
    scn = f"scenarios/selection/aeroflex-low-{d}-{sp}.toml"
    out = {}
    for label, ovr in (("bbr", {"flows.0.cc": "bbr"}),
                       ("bbr-no-agg", {"flows.0.cc": "bbr", "flows.0.cc_params.extra_acked_gain": 0}),
                       ("cubic", {"flows.0.cc": "cubic"}), ("reno", {"flows.0.cc": "reno"})):
        pm, rt = [], []
        for s in SEEDS:
            cap = tmp / f"cap-{d}-{sp}-{s}"
            if not cap.exists():
                rove.run(scn, out=cap, seed=s, overrides={"flows": [{"name": "ue", "workload": "cbr", "rate": "100Mbps", "path": ["wan", "cell:ue"]}]})
            o = tmp / f"{label}-{d}-{sp}-{s}"
            r = rove.run(scn, out=o, seed=s, overrides=ovr)
            v = run_values(o, cap, "ue", [Phase("run", 0.0, float(r.summary["duration_s"]))])
            pm.append(float(v.iloc[0]["pm"])); rt.append(int(r.timeseries.retrans_segs.max()))
        out[label] = f"PM {st.mean(pm):.3f}±{st.stdev(pm):.3f}, retrans {st.mean(rt):.0f}"
    print(f"low {d[0].upper()}{sp}: " + "; ".join(f"{k} {v}" for k, v in out.items()), flush=True)
