"""radio.parquet of an LTE cell (issue 14 item 6; crates/sim link/lte/counters.rs): its CQI,
MCS, PRBs and TBS bits over time, the LTE figure in the report, and ``rove trace record`` of a
UE's port."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

import rove
from rove.results import RADIO_FILE
from rove.trace_record import OPPORTUNITY_BYTES, record

REPO = Path(__file__).resolve().parent.parent

LTE_COLUMNS = ["cqi", "mcs", "prbs", "tbs_bits", "harq_failures", "cell_prbs_used", "cell_prbs"]

# One UE at a fixed 10 dB SINR without fading in a 20 MHz cell, saturated by 30 Mbit/s of CBR
# (more than the 22.92 Mbit/s its MCS carries); a BLER curve 0.1 dB wide, so its MCS (whose
# 10 % BLER point is near CQI 8's 8.1 dB) never fails at 10 dB.
CELL = """\
duration = "2s"
sample_interval = "10ms"
[links.cell]
kind = "lte"
prbs = 100
bler_sigma = "0.1dB"
[links.cell.ues.u1]
snr = 10
[[flows]]
name = "down"
workload = "cbr"
rate = "30Mbps"
path = ["cell:u1"]
"""
# By hand (TS 36.213): 10 dB reaches CQI 8 (8.1 dB; CQI 9 needs 10.3, Kawser et al. 2012);
# CQI 8 (16QAM, 490/1024) → MCS 13 over 100 PRBs (7.2.3, the crates' amc test); MCS 13 →
# I_TBS 12 (Table 7.1.7.1-1); TBS(12, 100 PRBs) = 22920 bits (Table 7.1.7.2.1-1) a 1 ms TTI.
TBS_BITS = 22_920


def test_a_one_ue_cell_at_a_fixed_sinr_has_the_tables_cqi_mcs_in_every_row(tmp_path):
    scenario = tmp_path / "cell.toml"
    scenario.write_text(CELL)
    out = tmp_path / "run"
    rove.run(str(scenario), out=out)
    table = pq.read_table(out / RADIO_FILE)
    assert table.column_names[-len(LTE_COLUMNS):] == LTE_COLUMNS
    df = table.to_pandas()
    assert list(df.port[:2]) == ["u1", "u1:up"] and set(df.ac) == {""}
    down = df[df.port == "u1"]
    # 10 ms samples over 2 s (the first at 10 ms, the last at the end): 200 rows per port.
    assert len(down) == 200 and down.time_s.iloc[-1] == 2.0
    assert (down.cqi == 8).all() and (down.mcs == 13).all()
    assert (down.signal_db == 10).all() and (down.tx_bitrate_bps == TBS_BITS * 1000).all()
    # Once the CBR has built a queue (from 100 ms on: 30 Mbit/s arriving, 22.92 served), every
    # 10 ms all 100 PRBs of 10 TTIs and ten decoded 22920-bit blocks; no HARQ activity.
    assert (down.cell_prbs == 100).all()
    # (The last row, at the run's end, also counts the TTI starting at 2 s: it is taken after
    # the run's last events.)
    busy = down[(down.time_s >= 0.1) & (down.time_s < 2.0)]
    assert down.prbs.iloc[-1] - busy.prbs.iloc[-1] == 100 * 11
    assert (np.diff(busy.prbs.to_numpy()) == 100 * 10).all()
    assert (np.diff(busy.cell_prbs_used.to_numpy()) == 100 * 10).all()
    assert (np.diff(busy.tbs_bits.to_numpy()) == TBS_BITS * 10).all()
    before = down[down.time_s < 2.0]
    assert (before.prbs <= 100 * np.rint(before.time_s * 1000)).all()
    assert (down.tx_retries == 0).all() and (down.harq_failures == 0).all()
    # TBS bits over a window (0.5-1.5 s) equal the capacity delivered: 1000 TTIs × 22920 bits
    # = 22.92 Mbit/s, and the packets delivered carry the same bytes to within one packet.
    a, b = (down.set_index(np.rint(down.time_s * 1000).astype(int)).loc[[500, 1500]]
            .itertuples())
    assert b.tbs_bits - a.tbs_bits == 1000 * TBS_BITS
    assert abs((b.tx_bytes - a.tx_bytes) - 1000 * TBS_BITS // 8) < 1500
    # The cell's totals are not in summary.json (its links[] entry is as before).
    summary = json.loads((out / "summary.json").read_text())
    assert "radio" not in next(l for l in summary["links"] if l["name"] == "cell")


def test_lte_mobility_the_ue_moving_away_loses_cqi(tmp_path):
    out = tmp_path / "run"
    rove.run(str(REPO / "scenarios" / "radio" / "lte-mobility.toml"), out=out)
    df = pq.read_table(out / RADIO_FILE).to_pandas()
    assert df.time_s.max() == 30.0

    def cqi(port, t0, t1):
        rows = df[(df.port == port) & (df.time_s >= t0) & (df.time_s < t1)]
        return float(np.nanmean(rows.cqi.to_numpy(dtype=float)))

    # u1 drives away from 200 m (SINR 36.6 dB) to 1.2 km (7.4 dB); u2 the reverse.
    away, towards = df[df.port == "u1"], df[df.port == "u2"]
    assert np.all(np.diff(away.signal_db.to_numpy()) < 0)
    assert np.all(np.diff(towards.signal_db.to_numpy()) > 0)
    print(f"u1 mean CQI: first 5 s {cqi('u1', 0, 5):.2f}, last 5 s {cqi('u1', 25, 30.1):.2f}; "
          f"u2: {cqi('u2', 0, 5):.2f}, {cqi('u2', 25, 30.1):.2f}")
    assert cqi("u1", 0, 5) >= 14 > 9 > cqi("u1", 25, 30.1)
    assert cqi("u2", 0, 5) < 9 < 14 <= cqi("u2", 25, 30.1)
    # Its PRB share follows: u1 gets fewer bits a PRB at the end than at the start.
    d = away.set_index(np.rint(away.time_s * 1000).astype(int))
    early = (d.tbs_bits[5000] - d.tbs_bits[10]) / (d.prbs[5000] - d.prbs[10])
    late = (d.tbs_bits[30000] - d.tbs_bits[25000]) / (d.prbs[30000] - d.prbs[25000])
    assert early > 2 * late


def test_the_report_draws_the_lte_figure(tmp_path):
    from rove.report import make_report

    scenario = tmp_path / "cell.toml"
    scenario.write_text(CELL)
    out = tmp_path / "run"
    rove.run(str(scenario), out=out)
    page = make_report(out)
    assert (out / "radio.png").stat().st_size > 10_000
    assert "radio.png" in page.read_text()


def test_a_recorded_lte_port_replays_at_the_capacity_it_received(tmp_path):
    """The UE's port, sampled every 1 ms, gives 22.92 Mbit/s of opportunities: 2 s × 22920
    bits a TTI / 12000 bits = 3820 (less the head packet's segment); replayed under the same
    load on a plain link, the same packets get through (2 packets' tolerance, as for WiFi)."""
    scenario = tmp_path / "cell.toml"
    scenario.write_text(CELL)
    rec = record(scenario, "cell:u1")
    assert rec.sample_interval_ms == 1.0 and rec.duration_ms == 2000
    assert len(rec.stamps) == rec.delivered_bytes // OPPORTUNITY_BYTES
    assert abs(len(rec.stamps) - 2 * TBS_BITS * 1000 // 12_000) <= 1, len(rec.stamps)
    trace = tmp_path / "u1.trace"
    trace.write_text(rec.text())
    cell = rove.run(str(scenario)).summary["flows"][0]["received_pkts"]
    replay = rove.run({"duration": "2s", "links": {"l": {"trace": str(trace)}},
                       "flows": [{"name": "down", "workload": "cbr", "rate": "30Mbps",
                                  "path": ["l"]}]}).summary["flows"][0]["received_pkts"]
    print(f"cell {cell} packets, trace {len(rec.stamps)} opportunities, replay {replay}")
    assert abs(replay - cell) <= 2, (cell, replay)


def test_the_kernel_backends_radio_csv_with_lte_columns_converts(tmp_path):
    from rove.kernel import LTE_RADIO_COLUMN_TYPES, RADIO_COLUMN_TYPES, convert_radio

    emu = tmp_path / "emu"
    emu.mkdir()
    header = [*RADIO_COLUMN_TYPES, *LTE_RADIO_COLUMN_TYPES]
    row = ["0.01", "cell", "u1", "u1", "down", "", "3000", "2", *["0"] * 10, "22920000", "10",
           "NaN", "NaN", "NaN", "NaN", "8", "13", "1000", "229200", "0", "1000", "100"]
    (emu / "radio.csv").write_text(",".join(header) + "\n" + ",".join(row) + "\n")
    df = convert_radio(tmp_path).to_arrow().to_pandas()
    assert list(df.columns) == header
    assert (df.cqi[0], df.mcs[0], df.tbs_bits[0], df.cell_prbs[0]) == (8, 13, 229200, 100)
