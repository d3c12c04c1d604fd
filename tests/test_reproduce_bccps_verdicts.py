"""The analyses of ``rove reproduce bccps`` judged on hand-made numbers: for each counted
experiment a table where its claims hold and one where they fail (and, where a scheme can be
missing, one where a claim is not measured, which must never count as support). The numbers are
chosen by hand from each claim's printed criterion, so a criterion that accepts any outcome
fails here."""

from __future__ import annotations

import pandas as pd

from rove.reproduce import bccps as study
from rove.reproduce.bccps import common
from rove.reproduce.bccps.fairness import analyse_detection, analyse_disjoint, analyse_shared
from rove.reproduce.bccps.throughput import analyse_delay, analyse_loss, analyse_ofo
from rove.reproduce.bccps.transfers import analyse_file_size, analyse_mouse, analyse_wifi_lte
from rove.reproduce.runner import DEFAULT_SETTING, SeriesRun
from rove.reproduce.study import Context
from rove.reproduce.verdicts import FAILS, HOLDS, NOT_AVAILABLE, PARTLY

SERIES = {s.key: s for s in (common.BCCPS, common.MPBBR_LRF, common.MPBBR_RR, common.LIA_LRF,
                             common.BALIA_LRF, common.BLEST_LIA, common.BBR_LRF, study.DET_S1S2,
                             study.DET_DWC, study.SP0, study.SP1)}
SEEDS = (1, 2, 3)
# Per-seed jitter around a mean: ±1 %, so a 10 % difference is well beyond one s.d.
JITTER = (0.99, 1.0, 1.01)


def context(tmp_path, exp_id: str, rows: list[dict], unavailable: dict | None = None) -> Context:
    df = pd.DataFrame(rows)
    df["series_label"] = df["series"].map(lambda k: SERIES[k].label)
    df["setting"] = "default"
    df["part"] = "main"
    df["point"] = [f"p{i}" for i in range(len(df))]
    runs = [SeriesRun(SERIES[k], DEFAULT_SETTING, tmp_path, df[df["series"] == k])
            for k in dict.fromkeys(df["series"])]
    for k, why in (unavailable or {}).items():
        runs.append(SeriesRun(SERIES[k], DEFAULT_SETTING, tmp_path, None, unavailable=why))
    return Context(exp_id, tmp_path, True, runs, df, {}, {"main": 60.0})


def rows_of(series: str, flows: dict[str, dict], case="default", **keys) -> list[dict]:
    """One run per seed of ``series``: ``flows[name]`` the flow's columns (means; jittered)."""
    out = []
    for seed, j in zip(SEEDS, JITTER):
        for name, cols in flows.items():
            out.append({"series": series, "case": case, "seed": seed, "flow": name, **keys,
                        **{c: v * j if isinstance(v, float) else v for c, v in cols.items()}})
    return out


def verdicts(sec) -> list[str]:
    return [c.verdict for c in sec.claims]


# --------------------------------------------------------------------------------------------
# Fairness


def shared_rows(ratio: dict[str, float]) -> list[dict]:
    rows = []
    for series, r in ratio.items():
        for case in ("d10", "d20"):
            rows += rows_of(series, {"mptcp": {"goodput_mbps": 5.0 * r}, "bbr": {"goodput_mbps": 5.0}},
                            case)
    return rows


def test_shared_fairness_holds_when_mpbbr_is_near_one_and_above_lia_balia(tmp_path):
    sec = analyse_shared(context(tmp_path, "fairness-shared",
                                 shared_rows({"mpbbr-lrf": 1.02, "lia-lrf": 0.6, "balia-lrf": 0.7,
                                              "bbr-lrf": 1.9})))
    assert verdicts(sec) == [HOLDS, HOLDS] and sec.verdict == HOLDS


def test_shared_fairness_fails_outside_the_band_and_below_lia(tmp_path):
    # 1.3 is outside 0.85-1.15; LIA's 1.5 is above it
    sec = analyse_shared(context(tmp_path, "fairness-shared",
                                 shared_rows({"mpbbr-lrf": 1.3, "lia-lrf": 1.5, "balia-lrf": 1.5})))
    assert verdicts(sec) == [FAILS, FAILS] and sec.verdict == FAILS


def test_shared_fairness_without_lia_is_not_available_never_support(tmp_path):
    ctx = context(tmp_path, "fairness-shared", shared_rows({"mpbbr-lrf": 1.0, "balia-lrf": 0.7}),
                  unavailable={"lia-lrf": "unknown algorithm"})
    sec = analyse_shared(ctx)
    assert verdicts(sec) == [HOLDS, NOT_AVAILABLE] and sec.verdict == PARTLY


def test_disjoint_fairness_divides_by_both_background_flows(tmp_path):
    rows = []
    for series, mp in {"mpbbr-lrf": 9.8, "lia-lrf": 5.0, "balia-lrf": 6.0}.items():
        rows += rows_of(series, {"mptcp": {"goodput_mbps": mp}, "bbr0": {"goodput_mbps": 5.0},
                                 "bbr1": {"goodput_mbps": 5.0}})
    sec = analyse_disjoint(context(tmp_path, "fairness-disjoint", rows))
    assert verdicts(sec) == [HOLDS, HOLDS]
    assert "0.980" in sec.claims[0].measured      # 9.8 / (5 + 5), the median of the seeds


# --------------------------------------------------------------------------------------------
# Detection


def detection_rows(ours: float, dwc: float) -> list[dict]:
    rows = []
    for case in ("shared-d10", "shared-d20", "disjoint-dynamic"):
        rows += rows_of("s1s2", {"mptcp": {"detection_accuracy": ours}}, case)
        rows += rows_of("dwc", {"mptcp": {"detection_accuracy": dwc}}, case)
    return rows


def test_detection_holds_when_s1s2_beats_dwc_in_every_case(tmp_path):
    sec = analyse_detection(context(tmp_path, "detection", detection_rows(0.9, 0.6)))
    assert verdicts(sec) == [HOLDS]


def test_detection_fails_when_dwc_is_better(tmp_path):
    sec = analyse_detection(context(tmp_path, "detection", detection_rows(0.5, 0.8)))
    assert verdicts(sec) == [FAILS]


# --------------------------------------------------------------------------------------------
# Throughput: loss, delay, OFO


def loss_rows(gp: dict[str, float]) -> list[dict]:
    rows = []
    for series, g in gp.items():
        for loss in (0.001, 0.005, 0.02):
            rows += rows_of(series, {"mptcp": {"goodput_mbps": g}}, **{"links.btl1.loss": loss})
    return rows


def test_loss_claims_hold_for_a_clear_winner_and_equal_rr_lrf(tmp_path):
    sec = analyse_loss(context(tmp_path, "loss", loss_rows(
        {"bccps": 14.0, "mpbbr-rr": 10.0, "mpbbr-lrf": 10.2, "lia-lrf": 6.0, "balia-lrf": 7.0})))
    # BCCPS best; RR ≈ LRF; H2: 14 / 10.2 = 1.37 ≥ 1.3 against every scheme at loss ≥ 0.5 %
    assert verdicts(sec) == [HOLDS, HOLDS, HOLDS]


def test_loss_h2_is_partly_where_the_gain_is_below_30_percent_somewhere(tmp_path):
    sec = analyse_loss(context(tmp_path, "loss", loss_rows(
        {"bccps": 12.0, "mpbbr-rr": 10.0, "mpbbr-lrf": 10.0, "lia-lrf": 6.0, "balia-lrf": 7.0})))
    # 12 / 10 = 1.2 < 1.3 against RR and LRF, ≥ 1.3 against LIA and BALIA
    assert verdicts(sec)[2] == PARTLY


def test_delay_claims(tmp_path):
    rows = []
    for d, (b, o) in {"d10": (14.0, 12.0), "d30": (12.0, 9.0), "d50": (10.0, 6.0)}.items():
        for series, g in {"bccps": b, "mpbbr-rr": o, "mpbbr-lrf": o, "lia-lrf": 5.0,
                          "balia-lrf": 5.0}.items():
            rows += rows_of(series, {"mptcp": {"goodput_mbps": g}}, d)
    sec = analyse_delay(context(tmp_path, "delay", rows))
    # falls with delay; the gap widens (2 -> 4); H2 at d30 (12/9 = 1.33) and d50 (10/6)
    assert verdicts(sec) == [HOLDS, HOLDS, HOLDS]


def test_ofo_claims_and_h1(tmp_path):
    rows = []
    for case in ("equal", "hetero"):
        for series, ofo in {"bccps": 10_000.0, "blest-lia": 30_000.0, "mpbbr-rr": 60_000.0,
                            "mpbbr-lrf": 50_000.0}.items():
            rows += rows_of(series, {"mptcp": {"ofo_mean_bytes": ofo, "goodput_mbps": 9.0}}, case)
    sec = analyse_ofo(context(tmp_path, "ofo", rows))
    # BCCPS < BLEST < RR, LRF; H1: 10k/30k = 0.33 ≤ 0.5 against all three
    assert verdicts(sec) == [HOLDS, HOLDS, HOLDS]
    rows = [dict(r, ofo_mean_bytes=r["ofo_mean_bytes"] * (4 if r["series"] == "bccps" else 1))
            for r in rows]
    sec = analyse_ofo(context(tmp_path, "ofo", rows))
    # 40k: above BLEST's 30k (fails); H1 40/60 = 0.67 > 0.5 everywhere (fails)
    assert verdicts(sec) == [FAILS, HOLDS, FAILS]


# --------------------------------------------------------------------------------------------
# Transfers


def test_file_size_normalises_to_the_best_single_path(tmp_path):
    rows = []
    for case in ("d10", "d20"):
        for size in ("30KB", "100KB", "1MB"):
            small = size != "1MB"
            times = {"sp0": 1.0, "sp1": 1.2, "bccps": 0.8,
                     "mpbbr-rr": 1.3 if small else 0.95, "mpbbr-lrf": 1.3 if small else 0.95}
            for series, t in times.items():
                rows += rows_of(series, {"mptcp": {"fct_s": t}}, case, **{"flows.0.size": size})
    sec = analyse_file_size(context(tmp_path, "file-size", rows))
    # ≤ 100 KB: best single path (1.0) below RR and LRF (1.3), BCCPS (0.8) below it; 1 MB:
    # BCCPS below RR and LRF (0.95); d20: BCCPS below everything at every size
    assert verdicts(sec) == [HOLDS, HOLDS, HOLDS, HOLDS]
    rr = next(r for r in sec.tables[0].rows if r[0] == common.MPBBR_RR.label)
    assert rr[1].startswith("1.30 ±"), rr      # 1.3 s over the best single path's 1.0 s


def test_mouse_fails_when_bccps_is_slower(tmp_path):
    rows = rows_of("bccps", {"mptcp": {"fct_s": 0.3}}) + rows_of("mpbbr-rr", {"mptcp": {"fct_s": 0.2}}) \
        + rows_of("mpbbr-lrf", {"mptcp": {"fct_s": 0.2}})
    assert verdicts(analyse_mouse(context(tmp_path, "mouse", rows))) == [FAILS]


def test_wifi_lte_bulk_and_web_claims(tmp_path):
    rows = []
    for series, (t, ofo) in {"lia-lrf": (60.0, 40_000.0), "mpbbr-lrf": (40.0, 60_000.0),
                             "bccps": (30.0, 10_000.0)}.items():
        rows += rows_of(series, {"mptcp": {"fct_s": t, "ofo_mean_bytes": ofo,
                                           "goodput_mbps": 800.0 / t}}, "bulk")
    for case, f in (("web-wikipedia", 0.9), ("web-amazon", 0.8), ("web-instagram", 0.7)):
        for series, t in {"lia-lrf": 1.0, "mpbbr-lrf": 0.95, "bccps": f}.items():
            rows += rows_of(series, {"mptcp": {"fct_s": t, "ofo_mean_bytes": 1000.0}}, case)
    sec = analyse_wifi_lte(context(tmp_path, "wifi-lte", rows))
    v = verdicts(sec)
    # bulk: BCCPS < MPTCP-BBR < legacy; OFO BCCPS lowest; legacy < MPTCP-BBR; web: BCCPS best,
    # the gain grows with page size; H1: 10/60 and 10/40 ≤ 0.5; H2: 40/30 = 1.33 and 60/30 = 2
    assert v == [HOLDS] * 8, v
