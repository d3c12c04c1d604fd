"""Shared pieces of ``rove reproduce oal``: the network (which flow and which controller belong
to which AP), the stations' SNR traces of each iteration, the schemes (series), the paper's
numbers and the criteria fixed before the runs, and one run's record.

**Iterations.** The paper ran each scheme 10 times for 600 s (§8.1); its iterations differ by
what the campus air did. Here iteration k gives every station an SNR trace of its own, drawn
from ``numpy.random.default_rng(SNR_SEED_BASE + k)`` in station order and written under the
report's directory (``snr/``), and every scheme runs the same traces (paired iterations). The
engine's seed is the sweep's (1) in every iteration; its random streams (frame errors, backoff)
differ between iterations because the SNRs do. [GAP] the paper gives no placement, SNR or
mobility: each trace is a random walk in 1-s steps from a start drawn uniformly in
``SNR_START_DB``, each step N(0, ``SNR_STEP_DB``), clipped to ``SNR_RANGE_DB``.

**Measures** (§8.1, per iteration): an AP's throughput is the sum of its flows' goodputs; its
delay the mean of its flows' time-averaged sender srtt (the time series' 10-ms samples); its
jitter the mean of its flows' mean |srtt_{i+1} − srtt_i| over consecutive samples (the authors'
``compute_jitter.py`` takes consecutive RTT samples; [GAP] rove's are the sender's srtt every
10 ms); its congestion-loss ratio its OAL controller's (queue drops of downlink packets over
downlink arrivals, summary.json's ``controllers``), counted by an observing controller
(``act = false``) in the runs without OAL, so every scheme is measured by one instrument. The
network's value is the mean over the APs ("the mean throughput of the three APs"), its
fairness Jain's index over the APs (Eq. 6). With one AP (this build's setting, see the
package's docstring) Jain's index is taken over the stations instead.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..measures import srtt_samples
from ..runner import Series, Setting, _toml, repo_root
from ..verdicts import (FAILS, HOLDS, NOT_MEASURED, PARTLY, Claim, is_number, jain_index,
                        mean_sd)

SCENARIO = repo_root() / "scenarios" / "oal" / "reproduce.toml"
WHERE = "§8.2, Figs. 10-13"

# --------------------------------------------------------------------------------------------
# The network, as the scenario file describes it


@dataclass(frozen=True)
class Network:
    """Which AP each flow's station belongs to, and which AP each OAL controller serves, in
    the scenario's order."""

    flow_ap: dict[str, str]          # flow name -> its AP
    controller_ap: list[str]         # controller index -> its AP
    controllers: list[dict]          # the scenario's [[controllers]] as written
    stations: list[str]              # every station of the cell, in order
    cell: dict                       # the WiFi cell's keys as written (standard, mcs, ...)

    def describe_cell(self) -> str:
        """The cell's radio in words, from its keys ("802.11n with Minstrel, A-MPDU, 30-packet
        DropTail queues")."""
        c = self.cell
        std = str(c.get("standard", "80211a")).replace("80211", "802.11")
        mcs = c.get("mcs", "minstrel")
        rate = ("Minstrel" if mcs == "minstrel" else "the ideal MCS" if mcs == "ideal"
                else f"MCS {mcs}")
        agg = ", A-MPDU aggregation" if c.get("aggregation") else ""
        buf = str(c.get("buffer", "")).replace("pkt", "-packet ")
        queue = "CoDel" if c.get("queue") == "codel" else "DropTail"
        return f"{std} with {rate}{agg}, {buf}{queue} queues"

    @property
    def aps(self) -> list[str]:
        return list(dict.fromkeys(self.controller_ap))


def network(path: Path = SCENARIO) -> Network:
    """The study's network read from its scenario: a station's AP is its ``ap`` key (one
    cell with ``aps``), or the cell itself (one AP); a controller's is its ``ap`` or ``link``."""
    doc = _toml().loads(Path(path).read_text(encoding="utf-8"))
    station_ap, stations, cell = {}, [], {}
    for link, spec in doc["links"].items():
        if spec.get("kind") != "wifi":
            continue
        cell = {k: v for k, v in spec.items() if k != "stations"}
        for name, st in spec.get("stations", {}).items():
            station_ap[f"{link}:{name}"] = st.get("ap", link)
            stations.append(name)
    flow_ap = {}
    for f in doc["flows"]:
        down = [p for p in f["path"] if p in station_ap]
        if down:
            flow_ap[f["name"]] = station_ap[down[0]]
    ctls = [c for c in doc.get("controllers", []) if c.get("kind") == "oal"]
    return Network(flow_ap, [c.get("ap", c["link"]) for c in ctls], ctls, stations, cell)


NETWORK = network()

# --------------------------------------------------------------------------------------------
# Iterations: the stations' SNR traces

SNR_SEED_BASE = 4000            # iteration k's traces: default_rng(SNR_SEED_BASE + k)
SNR_START_DB = (18.0, 32.0)     # [GAP] start of each station's walk, uniform
SNR_STEP_DB = 1.0               # [GAP] s.d. of each 1-s step
SNR_RANGE_DB = (10.0, 40.0)     # [GAP] the walk is clipped to this


def snr_walk(rng: np.random.Generator, duration_s: float) -> list[list[float]]:
    """One station's SNR trace: ``[[t_s, dB], ...]`` every second from 0 to ``duration_s``."""
    n = int(math.ceil(duration_s)) + 1
    x = rng.uniform(*SNR_START_DB)
    out = []
    for t in range(n):
        out.append([float(t), round(float(x), 2)])
        x = float(np.clip(x + rng.normal(0.0, SNR_STEP_DB), *SNR_RANGE_DB))
    return out


def iteration_setting(k: int, duration_s: float, out: Path) -> Setting:
    """Iteration ``k``: every station's SNR trace written to ``out/snr/itK-STATION.txt`` and
    set on the scenario (one setting, the same for every scheme)."""
    rng = np.random.default_rng(SNR_SEED_BASE + k)
    fixed = {}
    d = Path(out) / "snr"
    d.mkdir(parents=True, exist_ok=True)
    doc = _toml().loads(SCENARIO.read_text(encoding="utf-8"))
    cells = [(link, name) for link, spec in doc["links"].items() if spec.get("kind") == "wifi"
             for name in spec.get("stations", {})]
    for link, name in cells:
        trace = snr_walk(rng, duration_s)
        path = d / f"it{k}-{name}.txt"
        text = "".join(f"{t:g} {db:g}\n" for t, db in trace)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        fixed[f"links.{link}.stations.{name}.snr_trace"] = str(path.resolve())
    return Setting(f"it{k}", f"iteration {k}", fixed)


# --------------------------------------------------------------------------------------------
# The schemes. Every one runs on all nine flows; the OAL controllers stay in every run, acting
# only in OAL's (the others observe: the same congestion-loss counter for every scheme;
# crates/world/tests/oal.rs `observing_only_leaves_the_run_unchanged`).

FLOWS = tuple(range(len(NETWORK.flow_ap)))


def controllers(act: bool, record: bool = False, trigger: str | None = None) -> list[dict]:
    return [{**c, "act": act, **({"record": True} if record else {}),
             **({"trigger": trigger} if trigger else {})}
            for c in NETWORK.controllers]


def scheme(key: str, label: str, cc: str, act: bool = False, record: bool = False,
           trigger: str | None = None) -> Series:
    return Series(key, label, cc, flows=FLOWS,
                  extra={"controllers": controllers(act, record, trigger)})


CUBIC = scheme("cubic", "CUBIC alone", "cubic")
OAL = scheme("oal", "OAL (CUBIC + AP control)", "cubic", act=True)
BBR = scheme("bbr", "BBR", "bbr")
VIVACE = scheme("vivace", "PCC Vivace", "vivace")
CUBIC_RECORDED = scheme("cubic-recorded", "CUBIC alone (items recorded)", "cubic", record=True)
# rove's ablation (not the paper's, not counted): OAL's enforcement triggered by the last
# observed window's class instead of the tree's prediction (the controller's `trigger` key).
OAL_OBSERVED = scheme("oal-observed", "OAL acting on the observed class (ablation)", "cubic",
                      act=True, trigger="observed")
SCHEMES = (OAL, BBR, VIVACE, CUBIC)
TRIGGER_SERIES = (OAL, OAL_OBSERVED, CUBIC)
BASELINES = (BBR, VIVACE)

# --------------------------------------------------------------------------------------------
# The paper's numbers (seed-004 §4, the body's §8.2; the abstract's differ: its "16.5 %, 25 %
# and 12.6 %" for throughput, delay and jitter are the body's throughput gain and its two
# congestion-loss cuts) and the criteria, fixed before the runs.

METRICS = (("tput_mbps", "throughput (Mbit/s)"), ("delay_ms", "delay, sender srtt (ms)"),
           ("jitter_ms", "jitter, mean |Δsrtt| (ms)"),
           ("loss_ratio", "congestion-loss ratio"))
PAPER_CHANGE = {  # percent change of OAL against (BBR, Vivace)
    "tput_mbps": (17.5, 16.5),
    "delay_ms": (-30.0, -26.0),
    "jitter_ms": (-16.0, -2.0),
    "loss_ratio": (-25.2, -12.6),
}
# A paper percentage p is reproduced (holds) when the mean over iterations of the paired
# per-iteration change d_k = 100 (OAL_k − X_k) / X_k has p's sign, is more than one standard
# error of that mean from 0, and is within a factor SIZE_FACTOR of p; partly when the mean has
# p's sign but misses the other two; does not hold when its sign is the other (or it is 0).
SIZE_FACTOR = 2.0
# "OAL is best in 7 of 10 iterations (throughput), 8 of 10 (congestion loss)": holds when OAL
# is best of the three schemes in at least the paper's share minus one iteration in ten;
# partly when in at least a third of the iterations (more than chance among three).
BEST_SHARE = {"tput_mbps": 0.7, "loss_ratio": 0.8}
BEST_SLACK, BEST_PARTLY = 0.1, 1 / 3


def paired_changes(runs: pd.DataFrame, metric: str, a: str, b: str) -> list[float]:
    """Per iteration (setting) where both ran, 100 (a − b) / b of ``metric``; where b is 0
    (BBR's congestion losses can be none), 0 when a is 0 too, else ±inf (a's sign)."""
    out = []
    for _, g in runs.groupby("setting", sort=True):
        va = g.loc[g["series"] == a, metric]
        vb = g.loc[g["series"] == b, metric]
        if not (len(va) and len(vb) and is_number(va.iloc[0]) and is_number(vb.iloc[0])):
            continue
        x, y = float(va.iloc[0]), float(vb.iloc[0])
        if y != 0:
            out.append(100.0 * (x - y) / y)
        else:
            out.append(0.0 if x == 0 else math.copysign(math.inf, x))
    return out


def judge_change(changes: list[float], paper: float) -> tuple[str, str]:
    """The verdict on a paper percentage (criterion below) and the numbers as text. An
    iteration whose baseline X was 0 while OAL's was not has no finite change (±∞): it speaks
    for the sign only, so the finite iterations are judged as usual and an unbounded one
    against the paper's sign takes a "holds" down to "partly" and anything less to "does not
    hold"; one with the paper's sign changes nothing."""
    if len(changes) < 2:
        return NOT_MEASURED, f"needs 2 iterations, has {len(changes)}"
    finite = [c for c in changes if not math.isinf(c)]
    unbounded = [c for c in changes if math.isinf(c)]
    if len(finite) >= 2:
        m, sd = mean_sd(finite)
        se = sd / math.sqrt(len(finite))
        text = f"{m:+.1f} % ± {sd:.1f} (s.e. {se:.1f}, {len(finite)} iterations)"
        if m == 0 or math.copysign(1, m) != math.copysign(1, paper):
            verdict = FAILS
        else:
            sized = abs(paper) / SIZE_FACTOR <= abs(m) <= abs(paper) * SIZE_FACTOR
            verdict = HOLDS if sized and abs(m) > se else PARTLY
    else:  # too few finite changes for a size: the sign of every change decides
        text = ", ".join(f"{c:+.1f} %" for c in finite) or "no finite change"
        signed = [c for c in changes if c != 0]
        verdict = (PARTLY if signed and all(math.copysign(1, c) == math.copysign(1, paper)
                                             for c in signed) else FAILS)
    if unbounded:
        against = sum(math.copysign(1, c) != math.copysign(1, paper) for c in unbounded)
        text += (f"; X = 0 < OAL in {len(unbounded)} of {len(changes)} iterations (change "
                 f"{'+' if unbounded[0] > 0 else '−'}∞)")
        if against:
            verdict = PARTLY if verdict == HOLDS else FAILS
    return verdict, text


CHANGE_CRITERION = (f"mean over iterations of the paired change 100 (OAL − X)/X: the paper's "
                    f"sign, more than one standard error from 0 and within a factor "
                    f"{SIZE_FACTOR:g} of its size: holds; its sign only: partly; else does "
                    f"not hold; an iteration with X = 0 (an unbounded change) against the "
                    f"paper's sign lowers the verdict one step")

# --------------------------------------------------------------------------------------------
# One run's record


def _ap_jain(values: dict[str, float]) -> float | None:
    xs = [v for v in values.values() if is_number(v)]
    return jain_index(xs) if len(xs) == len(values) else None


def measure(run_dir: Path, rows: pd.DataFrame) -> dict:
    """A run's record: per metric the network's value (mean over the APs) and Jain's index
    over the APs (over the stations with one AP), the per-AP values, and the OAL
    controllers' counts summed over the APs."""
    s = json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8"))
    goodput = {f["name"]: float(f["goodput_mbps"]) for f in s["flows"]}
    delay, jitter = {}, {}
    for name in NETWORK.flow_ap:
        v = srtt_samples(run_dir, name)
        delay[name] = float(v.mean()) if len(v) else float("nan")
        jitter[name] = float(np.abs(np.diff(v)).mean()) if len(v) > 1 else float("nan")
    reports = {e["index"]: e["report"] for e in s.get("controllers", []) if e["kind"] == "oal"}
    per_ap: dict[str, dict[str, float]] = {}
    for ap in NETWORK.aps:
        flows = [f for f, a in NETWORK.flow_ap.items() if a == ap]
        idx = [i for i, a in enumerate(NETWORK.controller_ap) if a == ap]
        rep = [reports[i] for i in idx if i in reports]
        per_ap[ap] = {
            "tput_mbps": sum(goodput[f] for f in flows),
            "delay_ms": float(np.mean([delay[f] for f in flows])),
            "jitter_ms": float(np.mean([jitter[f] for f in flows])),
            "loss_ratio": (float(rep[0]["congestion_loss_ratio"]) if rep
                           and is_number(rep[0].get("congestion_loss_ratio")) else float("nan")),
        }
    rec: dict = {"per_ap": per_ap}
    for m, _ in METRICS:
        vals = {ap: per_ap[ap][m] for ap in per_ap}
        rec[m] = float(np.mean(list(vals.values())))
        if len(per_ap) > 1:
            rec[f"{m}_jain"] = _ap_jain(vals)
        elif m == "tput_mbps":
            rec[f"{m}_jain"] = _ap_jain(goodput)
        elif m in ("delay_ms", "jitter_ms"):
            rec[f"{m}_jain"] = _ap_jain(delay if m == "delay_ms" else jitter)
        else:
            rec[f"{m}_jain"] = None      # one AP: one congestion-loss counter
    for key in ("ticks", "acting_ticks", "rewrites", "congestion_drops", "mac_drops",
                "stream_losses", "arrivals"):
        rec[key] = sum(float(r.get(key, 0)) for r in reports.values())
    rec["predicted_poor_bad"] = sum(float(r["predictions"]["poor"] + r["predictions"]["bad"])
                                    for r in reports.values())
    rec["labelled_poor_bad"] = sum(float(r["labels"][2] + r["labels"][3])
                                   for r in reports.values())
    rec["labelled"] = sum(float(sum(r["labels"])) for r in reports.values())
    return rec


def change_claim(runs: pd.DataFrame, metric: str, label: str, baseline: Series,
                 paper: float) -> Claim:
    changes = paired_changes(runs, metric, OAL.key, baseline.key)
    verdict, text = judge_change(changes, paper)
    return Claim(f"OAL's {label} is {paper:+g} % against {baseline.label}", WHERE,
                 text, CHANGE_CRITERION, verdict)
