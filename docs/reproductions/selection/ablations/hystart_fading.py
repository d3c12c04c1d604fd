"""Ablation (H1): where CUBIC+HyStart leaves slow start on the ns-3-like static cell, without
fading (the committed [GAP]) and with EPA fading at 5 Hz (a pedestrian channel: RTT noise),
10-s long downloads, seeds 1-10; NewReno beside.

    .venv/bin/python docs/reproductions/selection/ablations/hystart_fading.py   (from the repository root;
    its output: hystart_fading.txt)
"""
import statistics as st
import rove
from rove.reproduce.selection.runs import slow_start_exit

SEEDS = range(1, 11)
for label, ovr in (("no fading", {}), ("EPA 5 Hz", {"links.cell.ues.ue.fading": "epa",
                                                    "links.cell.ues.ue.doppler": "5Hz"})):
    for cc in ("cubic", "reno"):
        ex, g, rtt = [], [], []
        for s in SEEDS:
            r = rove.run("scenarios/selection/ns3-static.toml", seed=s,
                         overrides={**ovr, "flows.0.cc": cc, "duration": "10s"})
            ts = r.timeseries
            ts = ts[ts["flow"].astype(str) == "ue"] if "flow" in ts.columns else ts
            t, cw = slow_start_exit(ts)
            ex.append(cw); g.append(r.summary["flows"][0]["goodput_mbps"])
            rtt.append(float(ts["min_rtt_ms"][ts["min_rtt_ms"] > 0].min()))
        print(f"{label} {cc}: exit cwnd {st.mean(ex):.0f}±{st.stdev(ex):.0f} pkts, goodput "
              f"{st.mean(g):.1f}, min RTT {st.mean(rtt):.1f} ms", flush=True)
