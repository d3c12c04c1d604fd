"""The radio figure of a run's report (``radio.png``): per radio cell in ``radio.parquet``
(issue 14 item 6), four panels over time, one line per port (``s1``: the AP's frames to s1;
``s1:up``: s1's own):

1. the capacity the cell gave each port (its delivered IP bytes, ``tx_bytes``, as a rate over
   100 ms windows) beside each flow's goodput (dashed): how much of a port's service each flow
   turned into goodput;
2. the PHY rate of each port's last transmission (``tx_bitrate_bps``: the MCS rate control
   chose) and, on the right axis, each station's SNR (``signal_db``, dotted);
3. airtime shares: each port's data frames' air time (``airtime_ms``) per unit of time, and the
   AP's channel survey busy time (black): the fraction of the channel each port used;
4. the AP's counters (seed-004 Table 1): each port's queue length (``qlen``) and the cell's
   drops by cause (cumulative, right axis): MAC drops at the retry limit, queue overflows,
   CoDel drops.

An LTE cell's rows (crates/sim link/lte/counters.rs: ``ac`` empty, its own columns) get four
panels of their own:

1. the capacity the cell gave each port: a downlink port's decoded transport blocks
   (``tbs_bits``), an uplink port's delivered bytes, as rates over 100 ms windows, beside each
   flow's goodput (dashed);
2. each UE's CQI report and the MCS of its last transport block (steps) and, on the right
   axis, its mean SINR (``signal_db``, dotted);
3. PRB shares: each port's PRBs (``prbs``) per PRB the cell had (``cell_prbs`` a TTI), and
   the cell's PRB utilisation (black);
4. each UE's RLC queue (``backlog_bytes``, KB) and the cell's drops by cause (cumulative,
   right axis): HARQ losses (``mac_drops``) and RLC queue overflows.

Works on either backend's results (the kernel backend writes the same ``radio.parquet``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["radio_links", "fig_radio", "is_lte"]

#: At most this many radio cells are drawn (one row of panels each).
MAX_CELLS = 2
#: At most this many ports get a line in each panel (the busiest by delivered bytes).
MAX_PORTS = 8


def radio_links(result) -> list[str]:
    """The radio cells with rows in ``radio.parquet`` (none without the file)."""
    radio = result.radio
    if radio is None or radio.empty:
        return []
    return [str(k) for k in dict.fromkeys(radio["link"].astype(str))][:MAX_CELLS]


def _per_second(time_s: np.ndarray, cumulative: np.ndarray, window_s: float):
    """(window mid times, increase of a cumulative counter per second) over ``window_s``."""
    from .report import flow_throughput

    # flow_throughput gives Mbit/s of cumulative bytes: bytes = units · 1e6 / 8 gives units/s.
    return flow_throughput(time_s, np.asarray(cumulative, dtype=float) * 1e6 / 8.0, window_s)


def is_lte(rows) -> bool:
    """Whether a cell's rows are an LTE cell's (its own columns, no access category)."""
    return "cqi" in rows and bool((rows["ac"].astype(str) == "").all())


def _goodput(ax, flows, colors, by_flow, w) -> int:
    """Each flow's goodput (dashed) on ``ax``; returns how many were drawn."""
    from .report import flow_throughput

    n = 0
    for name in flows:
        g = by_flow.get(name)
        if g is None or len(g) < 2:
            continue
        t, mbps = flow_throughput(g["time_s"].to_numpy(), g["bytes_delivered"].to_numpy(), w)
        ax.plot(t, mbps, lw=1.0, ls="--", color=colors[name],
                label=f"goodput {colors.label[name] or name}")
        n += 1
    return n


def _lte_panels(result, axes, link, rows, by_port, ports, color, flows, colors, by_flow):
    """An LTE cell's four panels (the module's second list)."""
    from .report import THROUGHPUT_WINDOW_S, _legend, _time_axis, _title, flow_throughput

    w = THROUGHPUT_WINDOW_S
    ax_cap, ax_mcs, ax_prb, ax_rlc = axes
    down = [p for p in ports if not p.endswith(":up")]
    for p in ports:
        g = by_port[p]
        cumulative = (g["tx_bytes"].to_numpy() if p.endswith(":up")
                      else g["tbs_bits"].to_numpy(dtype=float) / 8.0)
        t, mbps = flow_throughput(g["time_s"].to_numpy(), cumulative, w)
        ax_cap.plot(t, mbps, lw=1.2, color=color[p], label=f"port {p}")
    n_flows = _goodput(ax_cap, flows, colors, by_flow, w)
    ax_cap.set_ylabel(f"capacity given to each port\nand goodput (Mbit/s, {w * 1000:g} ms)")
    ax_cap.set_ylim(bottom=0)
    _legend(ax_cap, len(ports) + n_flows)
    ax_cap.set_title(_title(result, f"LTE cell {link}"))

    sinr_ax = None
    for p in down:
        g = by_port[p]
        t = g["time_s"].to_numpy()
        ax_mcs.plot(t, g["cqi"].to_numpy(dtype=float), lw=1.0, color=color[p],
                    drawstyle="steps-post", label=f"CQI {p}")
        ax_mcs.plot(t, g["mcs"].to_numpy(dtype=float), lw=1.0, ls="--", color=color[p],
                    drawstyle="steps-post", label=f"MCS {p}")
        sinr = g["signal_db"].to_numpy(dtype=float)
        if np.isfinite(sinr).any():
            sinr_ax = sinr_ax or ax_mcs.twinx()
            sinr_ax.plot(t, sinr, lw=1.0, ls=":", color=color[p])
    ax_mcs.set_ylabel("CQI (solid) and MCS\nof the last block (dashed)")
    ax_mcs.set_ylim(0, 29)
    if sinr_ax is not None:
        sinr_ax.set_ylabel("UE mean SINR (dB, dotted)")
        sinr_ax.grid(False)
    ax_mcs.legend(loc="lower left", fontsize=7, ncol=4)  # the right side has the SINR axis

    for p in down:
        g = by_port[p]
        per_ms = g["prbs"].to_numpy(dtype=float) / g["cell_prbs"].to_numpy(dtype=float).max()
        t, share = _per_second(g["time_s"].to_numpy(), per_ms / 1e3, w)
        ax_prb.plot(t, share, lw=1.0, color=color[p], label=f"port {p}")
    any_port = by_port[next(iter(by_port))]
    cell = any_port["cell_prbs_used"].to_numpy(dtype=float)
    cell_prbs = float(any_port["cell_prbs"].to_numpy(dtype=float).max())
    t, used = _per_second(any_port["time_s"].to_numpy(), cell / cell_prbs / 1e3, w)
    ax_prb.plot(t, used, lw=1.0, color="black", label="cell PRB utilisation")
    ax_prb.set_ylabel("PRB share\n(fraction of the cell's PRBs)")
    ax_prb.set_ylim(0, 1.05)
    _legend(ax_prb, len(down) + 1)

    for p in ports:
        g = by_port[p]
        ax_rlc.plot(g["time_s"].to_numpy(), g["backlog_bytes"].to_numpy() / 1e3, lw=1.0,
                    color=color[p], drawstyle="steps-post", label=f"queue {p}")
    drops_ax = ax_rlc.twinx()
    drops_ax.grid(False)
    for column, style in (("mac_drops", "-"), ("overflow_drops", "--")):
        total = rows.groupby("time_s", sort=True)[column].sum()
        label = "HARQ losses" if column == "mac_drops" else "RLC queue overflows"
        drops_ax.plot(total.index.to_numpy(), total.to_numpy(), lw=1.2, ls=style, color="0.3",
                      label=label)
    drops_ax.set_ylabel("drops in the cell (cumulative)")
    drops_ax.set_ylim(bottom=0, top=max(1.0, drops_ax.get_ylim()[1]))
    drops_ax.legend(loc="upper right", fontsize=7)
    ax_rlc.set_ylabel("RLC queue (KB)")
    ax_rlc.set_ylim(bottom=0)
    times = any_port["time_s"].to_numpy()
    ax_rlc.set_xlim(times[0] if len(times) else 0, None)
    ax_rlc.legend(loc="upper left", fontsize=7, ncol=4)  # the right side has the drops axis
    _time_axis(ax_rlc, result)


def fig_radio(result, flows, colors, by_flow):
    """The figure, or ``None`` when the run has no radio cell with counters."""
    from .report import THROUGHPUT_WINDOW_S, _legend, _pyplot, _time_axis, _title, flow_throughput

    links = radio_links(result)
    if not links:
        return None
    plt = _pyplot()
    radio = result.radio
    w = THROUGHPUT_WINDOW_S
    fig, axes = plt.subplots(4, len(links), figsize=(10 * len(links), 13), sharex=True,
                             squeeze=False)
    cmap = plt.get_cmap("tab10")
    for col, link in enumerate(links):
        rows = radio[radio["link"].astype(str) == link]
        by_port = {str(p): g for p, g in rows.groupby(rows["port"].astype(str), sort=False,
                                                       observed=True)}
        busiest = sorted(by_port, key=lambda p: -float(by_port[p]["tx_bytes"].iloc[-1]))
        ports = [p for p in busiest if float(by_port[p]["tx_bytes"].iloc[-1]) > 0][:MAX_PORTS]
        color = {p: cmap(i % 10) for i, p in enumerate(ports)}
        ax_cap, ax_rate, ax_air, ax_ctr = axes[:, col]
        if is_lte(rows):
            _lte_panels(result, axes[:, col], link, rows, by_port, ports, color, flows, colors,
                        by_flow)
            continue

        for p in ports:
            g = by_port[p]
            t, mbps = flow_throughput(g["time_s"].to_numpy(), g["tx_bytes"].to_numpy(), w)
            ax_cap.plot(t, mbps, lw=1.2, color=color[p], label=f"port {p}")
        n_flows = 0
        for name in flows:
            g = by_flow.get(name)
            if g is None or len(g) < 2:
                continue
            t, mbps = flow_throughput(g["time_s"].to_numpy(), g["bytes_delivered"].to_numpy(), w)
            ax_cap.plot(t, mbps, lw=1.0, ls="--", color=colors[name],
                        label=f"goodput {colors.label[name] or name}")
            n_flows += 1
        ax_cap.set_ylabel(f"capacity given to each port\nand goodput (Mbit/s, {w * 1000:g} ms)")
        ax_cap.set_ylim(bottom=0)
        _legend(ax_cap, len(ports) + n_flows)
        ax_cap.set_title(_title(result, f"radio cell {link}"))

        snr_ax = None
        for p in ports:
            g = by_port[p]
            ax_rate.plot(g["time_s"].to_numpy(), g["tx_bitrate_bps"].to_numpy() / 1e6, lw=1.0,
                         color=color[p], drawstyle="steps-post", label=f"port {p}")
            sig = g["signal_db"].to_numpy(dtype=float)
            if not p.endswith(":up") and np.isfinite(sig).any():
                snr_ax = snr_ax or ax_rate.twinx()
                snr_ax.plot(g["time_s"].to_numpy(), sig, lw=1.0, ls=":", color=color[p])
        ax_rate.set_ylabel("PHY rate of the last\ntransmission (Mbit/s)")
        ax_rate.set_ylim(bottom=0)
        if snr_ax is not None:
            snr_ax.set_ylabel("station SNR (dB, dotted)")
            snr_ax.grid(False)
        ax_rate.legend(loc="lower left", fontsize=7, ncol=4)  # the right side has the SNR axis

        if "airtime_ms" in rows:
            for p in ports:
                g = by_port[p]
                t, share = _per_second(g["time_s"].to_numpy(), g["airtime_ms"].to_numpy() / 1e3, w)
                ax_air.plot(t, share, lw=1.0, color=color[p], label=f"port {p}")
        any_port = by_port[busiest[0]]
        t, busy = _per_second(any_port["time_s"].to_numpy(),
                              any_port["survey_busy_ms"].to_numpy() / 1e3, w)
        ax_air.plot(t, busy, lw=1.0, color="black", label="channel busy (survey)")
        ax_air.set_ylabel("airtime share\n(fraction of time)")
        ax_air.set_ylim(0, 1.05)
        _legend(ax_air, len(ports) + 1)

        for p in ports:
            g = by_port[p]
            ax_ctr.plot(g["time_s"].to_numpy(), g["qlen"].to_numpy(), lw=1.0, color=color[p],
                        drawstyle="steps-post", label=f"qlen {p}")
        drops_ax = ax_ctr.twinx()
        drops_ax.grid(False)
        times = any_port["time_s"].to_numpy()
        for column, style in (("mac_drops", "-"), ("overflow_drops", "--"), ("codel_drops", ":")):
            total = rows.groupby("time_s", sort=True)[column].sum()
            drops_ax.plot(total.index.to_numpy(), total.to_numpy(), lw=1.2, ls=style,
                          color="0.3", label=column.replace("_", " "))
        drops_ax.set_ylabel("drops in the cell (cumulative)")
        drops_ax.set_ylim(bottom=0, top=max(1.0, drops_ax.get_ylim()[1]))
        drops_ax.legend(loc="upper right", fontsize=7)
        ax_ctr.set_ylabel("queue length (packets)")
        ax_ctr.set_ylim(bottom=0)
        ax_ctr.set_xlim(times[0] if len(times) else 0, None)
        ax_ctr.legend(loc="upper left", fontsize=7, ncol=4)  # the right side has the drops axis
        _time_axis(ax_ctr, result)
    return fig
