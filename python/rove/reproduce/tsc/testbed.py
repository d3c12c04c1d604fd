"""Ch. 3's testbed emulation: R-TSC against the conventional receiver on a video over LTE + WiFi
(seed-003 §3.6.3, Figs. 3.8-3.9; §5 row 13; the summary's §8.3 "R-TSC delay near the (3.10)
optimum vs CR").

``scenarios/tsc/ch3-testbed.toml`` (crates/world/tests/rtsc.rs's ``testbed``, its [GAP]s) at
(c_0, c_1) = (40, 8/12/15) Mbit/s, MPTCP-LIA with round robin, once with a conventional
receiver and once with ``receiver = "rtsc"``. Per run: the video's packet delay, from its
frame's write to its in-order delivery (send buffer + network + reordering: the dissertation's
application-level delay; the summary's ``packet_delay_mean_ms`` / ``_p95_ms``), the share within
d_req = 150 ms, the part of it after the hand-over to a subflow (``app_delay_mean_ms``: network +
reordering, so the rest is the send buffer), and each subflow's intentional duplicate-ACK
episodes (``subflows[].dupack_episodes``). Beside them the (3.10) optimum
(:func:`rove.models.mptcp_delay.minimize_delay`, C_a² = 1, rove's 1448-B segments), as the
Rust test computes it. The ablation of the Rust test runs too: the same rate as a smooth source
(1000 equal frames per second), reported beside, not judged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..document import Section, Table, fmt
from ..document import spread as pm
from ..runner import Series
from ..study import Context, pyplot, run_with_records, save_figure
from ..verdicts import FAILS, HOLDS, PARTLY, Claim, combine, judge_less, judge_range, median
from ...models import mptcp_delay as md
from . import lrf
from .common import recorded_runs

WHERE = "§3.6.3"
WIFI_KEY = "links.wifi.rate"
# §3.8.3 / Table 3.2: c_0 = 40 Mbit/s, T^p = (30, 15) ms, f = 35.85 Mbit/s.
LTE_MBPS = 40.0
TP_S = (0.030, 0.015)
APP_MBPS = 35.85
MSS_BYTES = 1448              # rove_tcp::MSS, the unit of crates/world/tests/rtsc.rs's optimum_ms
D_REQ_MS = 150                # the scenario's required_delay [GAP]
# "Near the (3.10) optimum": the mean packet delay within this factor of the bound
# (crates/world/tests/rtsc.rs, rtsc_on_the_testbed_setting_is_near_the_optimum_xfail).
NEAR_FACTOR = 1.5

# The Rust test's ablation: the same rate as 1000 equal frames per second.
SMOOTH = {"flows.0.gop": 1, "flows.0.fps": 1000, "flows.0.frame_jitter": 0.0}
CONVENTIONAL = Series("cr", "LIA + RR, conventional receiver", "lia")
RTSC = Series("rtsc", "LIA + RR, R-TSC receiver", "lia", extra={"flows.0.receiver": "rtsc"})
CONVENTIONAL_SMOOTH = Series("cr-smooth", "conventional, smooth source", "lia", extra=SMOOTH)
RTSC_SMOOTH = Series("rtsc-smooth", "R-TSC, smooth source", "lia",
                     extra={**SMOOTH, "flows.0.receiver": "rtsc"})
# Fig. 3.8(c), Fig. 3.9: LIA with Least-RTT-First ([12]; rove's `minrtt`) and the conventional
# receiver (§5 rows 11-12), measured by :mod:`.lrf`.
LRF = Series("lrf", "LIA + LRF, conventional receiver", "lia",
             extra={"flows.0.scheduler": "minrtt"})
# Not judged: the diagnosis of rows 11-12's disagreement, added after the c_0 = 40 runs: LRF
# with LTE just below the video's rate (c_0 = 34 < f = 35.85 Mbit/s), so LTE alone cannot
# carry it.
LRF_SLOW_LTE = Series("lrf-lte34", "LIA + LRF, LTE 34 Mbit/s (ablation)", "lia",
                      extra={"flows.0.scheduler": "minrtt", "links.lte.rate": "34Mbps"})
TESTBED_SERIES = (CONVENTIONAL, RTSC, CONVENTIONAL_SMOOTH, RTSC_SMOOTH)
ALL_SERIES = (*TESTBED_SERIES, LRF, LRF_SLOW_LTE)


def optimum_ms(wifi_mbps: float) -> float:
    """(3.10)'s bound at (40, ``wifi_mbps``) Mbit/s, in ms."""
    pps = lambda mbps: md.mbps_to_pps(mbps, MSS_BYTES)  # noqa: E731
    return float(md.minimize_delay(pps([LTE_MBPS, wifi_mbps]), list(TP_S), float(pps(APP_MBPS))
                                   ).bound) * 1e3


def measure(run_dir: Path, rows) -> dict:
    """What a run's summary.json holds for this experiment."""
    f = json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8"))["flows"][0]
    episodes = [int(s.get("dupack_episodes") or 0) for s in f.get("subflows", [])]
    return {"delay_mean_ms": f.get("packet_delay_mean_ms"),
            "delay_p95_ms": f.get("packet_delay_p95_ms"),
            "within": f.get("packets_within_required_delay"),
            "after_handover_ms": f.get("app_delay_mean_ms"),
            "goodput_mbps": f.get("goodput_mbps"),
            "episodes_lte": episodes[0] if episodes else 0,
            "episodes_wifi": episodes[1] if len(episodes) > 1 else 0,
            **lrf.measure(Path(run_dir), f)}


def run_testbed(sweeps: Path):
    return run_with_records(sweeps, measure)


def _wifi_rates(runs) -> list[float]:
    return sorted({float(str(v).removesuffix("Mbps")) for v in runs[WIFI_KEY]})


def _values(runs, series: Series, wifi: float, column: str) -> list[float]:
    m = runs[(runs["series"] == series.key)
             & (runs[WIFI_KEY].map(lambda v: float(str(v).removesuffix("Mbps"))) == wifi)]
    return [float(x) for x in m[column] if x is not None and x == x]


def analyse_testbed(ctx: Context) -> Section:
    s = Section("Ch. 3: R-TSC against the conventional receiver on the testbed setting "
                "(Figs. 3.8-3.9)")
    runs = recorded_runs(ctx, s)
    if runs is None:
        return s
    wifis = _wifi_rates(runs)
    s.paragraphs.append(
        "Setting (`scenarios/tsc/ch3-testbed.toml`, crates/world/tests/rtsc.rs's `testbed`): LTE "
        "40 Mbit/s, T^p 30 ms, 7 MB buffer; WiFi 8/12/15 Mbit/s, T^p 15 ms, 720 KB; MPTCP-LIA "
        "with round robin; a 35.85 Mbit/s video at 30 frames/s (GOP 12, I = 5 P, frame sizes "
        "±20 %), 20 s (10 s in quick mode). Delay: a packet's frame write to its in-order "
        f"delivery; d_req = {D_REQ_MS} ms [GAP]. The (3.10) optimum: C_a² = 1, 1448-B "
        "segments. \"Send buffer\" is the mean packet delay minus the mean delay after the "
        "hand-over to a subflow.")
    rows = []
    for wifi in wifis:
        for series in (*TESTBED_SERIES, LRF):
            mean_ = _values(runs, series, wifi, "delay_mean_ms")
            if not mean_:
                continue
            after = _values(runs, series, wifi, "after_handover_ms")
            rows.append([f"(40, {wifi:g})", series.label, f"{optimum_ms(wifi):.1f}",
                         pm(mean_, ".1f"), pm(_values(runs, series, wifi, "delay_p95_ms"), ".1f"),
                         pm(_values(runs, series, wifi, "within"), ".3f"),
                         pm([a - b for a, b in zip(mean_, after)], ".1f"),
                         pm(_values(runs, series, wifi, "episodes_lte"), ".1f"),
                         pm(_values(runs, series, wifi, "episodes_wifi"), ".1f")])
    s.tables.append(Table(["(c_0, c_1) Mbit/s", "receiver", "(3.10) bound (ms)",
                           "delay mean (ms)", "delay p95 (ms)", f"within {D_REQ_MS} ms",
                           "of it send buffer (ms)", "dup-ACK episodes LTE", "episodes WiFi"],
                          rows, "mean ± sd over seeds; the smooth-source rows are the ablation; "
                          "LRF's rows are §5 rows 11-12 (below)"))
    s.figures.append((_figure(ctx, runs, wifis),
                      "Mean packet delay per receiver against the (3.10) optimum."))
    s.claims += [_better_claim(runs, wifis), _near_claim(runs, wifis),
                 _mismatch_claim(runs, wifis), _episodes_claim(runs, wifis)]
    s.paragraphs.append(_ablation_text(runs, wifis))
    lrf.report(s, runs, wifis, _values, LRF, (CONVENTIONAL, RTSC), LRF_SLOW_LTE)
    s.verdict = combine(c.verdict for c in s.claims)
    return s


def _better_claim(runs, wifis) -> Claim:
    verdicts, parts = [], []
    for wifi in wifis:
        for col, name in (("delay_mean_ms", "mean"), ("delay_p95_ms", "p95")):
            a, b = _values(runs, RTSC, wifi, col), _values(runs, CONVENTIONAL, wifi, col)
            v, text = judge_less(a, b)
            verdicts.append(v)
            parts.append(f"(40, {wifi:g}) {name}: R-TSC {fmt(median(a), '.1f')} < conventional "
                         f"{fmt(median(b), '.1f')} ms: {v} ({text})")
    return Claim("R-TSC's delay is significantly better than the conventional receiver's",
                 f"{WHERE}, Figs. 3.8-3.9", "; ".join(parts),
                 "R-TSC's mean and p95 packet delay below the conventional receiver's at every "
                 "c_1, each judged over seeds (the difference beyond the larger s.d.: holds; "
                 "positive within it: partly); combined", combine(verdicts))


def _near_claim(runs, wifis) -> Claim:
    """Near the optimum: R-TSC's median mean delay ≤ NEAR_FACTOR × the bound (holds); else,
    closer to it than the conventional receiver (partly)."""
    verdicts, parts = [], []
    for wifi in wifis:
        bound = optimum_ms(wifi)
        r, c = _values(runs, RTSC, wifi, "delay_mean_ms"), \
            _values(runs, CONVENTIONAL, wifi, "delay_mean_ms")
        v = judge_range(median(r), (0.0, NEAR_FACTOR * bound))
        if v == FAILS and judge_less(r, c)[0] in (HOLDS, PARTLY):  # measured closer: partly
            v = PARTLY
        verdicts.append(v)
        parts.append(f"(40, {wifi:g}): bound {bound:.1f} ms; R-TSC {fmt(median(r), '.1f')} ms "
                     f"({fmt(median(r) / bound if r else None, '.2f')}× the bound), conventional "
                     f"{fmt(median(c), '.1f')} ms ({fmt(median(c) / bound if c else None, '.2f')}×)")
    return Claim("R-TSC's delay is near the (3.10) optimum (about 90 ms at (40, 12), summary "
                 "§8.3), the conventional receiver's is not", f"{WHERE}, §3.4, Fig. 3.9",
                 "; ".join(parts),
                 f"R-TSC's median mean packet delay ≤ {NEAR_FACTOR}× the (3.10) bound at every c_1 "
                 f"(holds; the criterion of crates/world/tests/rtsc.rs); above it but below the "
                 f"conventional receiver's, over seeds (partly); the same ratio is shown for both",
                 combine(verdicts))


def _mismatch_claim(runs, wifis) -> Claim:
    verdicts, parts = [], []
    for larger, smaller in zip(wifis[1:], wifis[:-1]):   # WiFi rates, smallest first
        a, b = _values(runs, CONVENTIONAL, larger, "delay_mean_ms"), \
            _values(runs, CONVENTIONAL, smaller, "delay_mean_ms")
        v, text = judge_less(a, b)
        verdicts.append(v)
        parts.append(f"c_1 {larger:g}: {fmt(median(a), '.1f')} < c_1 {smaller:g}: "
                     f"{fmt(median(b), '.1f')} ms: {v} ({text})")
    return Claim("Under RR with the conventional receiver, the delay grows as c_1 shrinks",
                 f"{WHERE}, Fig. 3.9", "; ".join(parts) or "one c_1 only",
                 "the conventional receiver's mean packet delay at the larger c_1 below that at "
                 "the next smaller, each pair over seeds (the larger s.d. as margin); combined",
                 combine(verdicts))


def _episodes_claim(runs, wifis) -> Claim:
    """Fig. 3.8: "both windows are held by 3-dup-ACKs"; a plain receiver sends none."""
    verdicts, parts = [], []
    for wifi in wifis:
        lte, wf = _values(runs, RTSC, wifi, "episodes_lte"), _values(runs, RTSC, wifi,
                                                                      "episodes_wifi")
        conv = _values(runs, CONVENTIONAL, wifi, "episodes_lte") + \
            _values(runs, CONVENTIONAL, wifi, "episodes_wifi")
        both = all(x > 0 for x in lte + wf) and lte and wf
        some = any(x > 0 for x in lte + wf)
        clean = all(x == 0 for x in conv)
        verdicts.append(HOLDS if both and clean else PARTLY if some and clean else FAILS)
        parts.append(f"(40, {wifi:g}): R-TSC episodes LTE {fmt(median(lte), '.1f')}, WiFi "
                     f"{fmt(median(wf), '.1f')} (median; fewest {fmt(min(lte + wf, default=None), '.0f')}); "
                     f"conventional {fmt(max(conv, default=None), '.0f')} at most")
    return Claim("R-TSC holds both subflows' windows with intentional triple duplicate ACKs",
                 f"{WHERE}, Fig. 3.8", "; ".join(parts),
                 "every R-TSC run has at least one episode on both subflows and no conventional "
                 "run has any (holds); episodes on one subflow only (partly)", combine(verdicts))


def _ablation_text(runs, wifis) -> str:
    parts = []
    for wifi in wifis:
        r = median(_values(runs, RTSC_SMOOTH, wifi, "delay_mean_ms"))
        c = median(_values(runs, CONVENTIONAL_SMOOTH, wifi, "delay_mean_ms"))
        parts.append(f"(40, {wifi:g}): R-TSC {fmt(r, '.1f')} ms, conventional {fmt(c, '.1f')} ms "
                     f"against a bound of {optimum_ms(wifi):.1f} ms")
    return ("Ablation (not judged): the same 35.85 Mbit/s as a smooth source (1000 equal frames "
            "per second, crates/world/tests/rtsc.rs's `rtsc_with_a_smooth_source_is_within_the_"
            "optimum_bound`): " + "; ".join(parts) + ". Where R-TSC is within the bound with a "
            "smooth source and not with the video, the difference is the send buffer: (3.10) "
            "with C_a² = 1 puts Σx* just above f, so R-TSC's caps leave little spare rate to "
            "drain an I-frame burst (five P-frames every 12 frames), which (3.1) with C_a² = 1 "
            "does not see.")


def _figure(ctx: Context, runs, wifis) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    width = 0.8 / len(TESTBED_SERIES)
    x = np.arange(len(wifis))
    for i, series in enumerate(TESTBED_SERIES):
        ms = [median(_values(runs, series, w, "delay_mean_ms")) for w in wifis]
        ax.bar(x + (i - (len(TESTBED_SERIES) - 1) / 2) * width,
               [m if m is not None else np.nan for m in ms], width, label=series.label)
    for j, w in enumerate(wifis):
        ax.plot([j - 0.45, j + 0.45], [optimum_ms(w)] * 2, color="k", lw=1.2,
                label="(3.10) optimum" if j == 0 else None)
    ax.set_xticks(x)
    ax.set_xticklabels([f"(40, {w:g})" for w in wifis])
    ax.set_xlabel("(c_0, c_1), Mbit/s")
    ax.set_ylabel("mean packet delay (ms), median over seeds")
    ax.set_yscale("log")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title("R-TSC vs conventional receiver (Fig. 3.9)")
    return save_figure(fig, ctx.figure("delay"))
