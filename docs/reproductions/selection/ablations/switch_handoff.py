"""Ablation: the thesis's switching plans on rove's cell with Eq. 6.3's handoff vs keeping the
window, against the single algorithms, whole-run goodput, seeds 1-10.

    .venv/bin/python docs/reproductions/selection/ablations/switch_handoff.py   (from the repository root;
    its output: switch_handoff.txt)
"""
import sys, statistics as st
import rove
from rove.reproduce.selection.switching import selection_controller

CASES = [("4g", "backward", 300, ("bbr", "illinois")),
         ("4g", "forward", 300, ("cubic", "cubic", "westwood")),
         ("4g", "forward", 60, ("reno", "illinois", "cubic"))]
SEEDS = range(1, 11)

def goodput(scn, seed, ovr):
    r = rove.run(scn, seed=seed, overrides=ovr)
    f = [x for x in r.summary["flows"] if x["name"] == "ue"][0]
    return f["goodput_mbps"]

for lat, d, sp, plan in CASES:
    scn = f"scenarios/selection/aeroflex-{lat}-{d}-{sp}.toml"
    res = {}
    for cc in sorted(set(plan)):
        res[cc] = [goodput(scn, s, {"flows.0.cc": cc}) for s in SEEDS]
    for handoff in ("delay_scaled", "keep"):
        c = selection_controller(plan, d, sp); c["handoff"] = handoff
        if handoff == "keep": del c["samples"]
        res["plan/" + handoff] = [goodput(scn, s, {"flows.0.cc": plan[0], "controllers": [c]}) for s in SEEDS]
    print(f"{lat} {d[0].upper()}{sp} {'/'.join(plan)}: " + "; ".join(
        f"{k} {st.mean(v):.2f}±{st.stdev(v):.2f}" for k, v in res.items()), flush=True)
