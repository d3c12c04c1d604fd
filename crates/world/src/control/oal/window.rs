//! OAL's items: the AP's per-tick counter deltas kept in a ring, summed over a sliding window
//! into features, and the congestion-loss classes of seed-004 Table 3 that label them.

/// Table 3, seed-004 (from the ICFA/PingER loss classes): Good < 1 % ≤ Acceptable < 5 % ≤
/// Poor < 12 % ≤ Bad. Returns 0 Good, 1 Acceptable, 2 Poor, 3 Bad.
pub fn loss_class(ratio: f64) -> u8 {
    if ratio < 0.01 {
        0
    } else if ratio < 0.05 {
        1
    } else if ratio < 0.12 {
        2
    } else {
        3
    }
}

/// Names of the classes, in order.
pub const CLASS_NAMES: [&str; 4] = ["good", "acceptable", "poor", "bad"];

/// What the AP saw in one sampling tick (deltas), and its state at the tick's end.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tick {
    /// Downlink packets and bytes that reached the AP's queues (the packet stream).
    pub arrivals_pkts: f64,
    pub arrivals_bytes: f64,
    /// Bytes of every packet the AP forwarded, both directions (the datapath's data rate).
    pub datapath_bytes: f64,
    /// Downlink packets dropped by the AP's queues (overflow, CoDel): congestion losses.
    pub congestion_drops: f64,
    /// Downlink frames the AP's MAC gave up on (retry limit): non-congestion losses.
    pub mac_drops: f64,
    /// Downlink segments the packet stream saw again (retransmissions: its loss count).
    pub retransmissions: f64,
    pub busy_ns: f64,
    pub tx_ns: f64,
    pub rx_ns: f64,
    pub requeues: f64,
    pub tx_retries: f64,
    pub tx_bytes: f64,
    pub rx_bytes: f64,
    /// Frames dropped at the retry limit on every port (nl80211 tx_failed).
    pub tx_failed: f64,
    // State at the tick's end (not summed).
    pub backlog_bytes: f64,
    pub qlen_pkts: f64,
    pub signal_db: f64,
    pub tx_bitrate_mbps: f64,
}

impl Tick {
    fn add(&mut self, o: &Tick, sign: f64) {
        self.arrivals_pkts += sign * o.arrivals_pkts;
        self.arrivals_bytes += sign * o.arrivals_bytes;
        self.datapath_bytes += sign * o.datapath_bytes;
        self.congestion_drops += sign * o.congestion_drops;
        self.mac_drops += sign * o.mac_drops;
        self.retransmissions += sign * o.retransmissions;
        self.busy_ns += sign * o.busy_ns;
        self.tx_ns += sign * o.tx_ns;
        self.rx_ns += sign * o.rx_ns;
        self.requeues += sign * o.requeues;
        self.tx_retries += sign * o.tx_retries;
        self.tx_bytes += sign * o.tx_bytes;
        self.rx_bytes += sign * o.rx_bytes;
        self.tx_failed += sign * o.tx_failed;
    }

    /// The congestion-loss ratio of the packets that arrived: congestion drops over arrivals
    /// (0 without arrivals).
    pub fn congestion_ratio(&self) -> f64 {
        if self.arrivals_pkts > 0.0 {
            (self.congestion_drops / self.arrivals_pkts).min(1.0)
        } else {
            0.0
        }
    }
}

/// The AP features of an item, in order (the columns a tree is trained on): seed-004 Table 2's
/// radio factors as this cell has them, over the feature window.
pub const AP_FEATURES: &[&str] = &[
    "backlog_bytes",
    "qlen_pkts",
    "channel_busy",
    "channel_tx",
    "channel_rx",
    "queue_drops",
    "queue_rx_pkts",
    "queue_rx_bytes",
    "requeues",
    "link_tx_retries",
    "link_tx_bytes",
    "link_rx_bytes",
    "link_tx_failed",
    "signal_db",
    "tx_bitrate_mbps",
    "data_rate_mbps",
];

pub const N_AP_FEATURES: usize = 16;
const _: () = assert!(AP_FEATURES.len() == N_AP_FEATURES);

/// The last `len` ticks and their sum.
#[derive(Debug, Clone)]
pub struct TickWindow {
    ticks: Vec<Tick>,
    next: usize,
    filled: usize,
    sum: Tick,
}

impl TickWindow {
    pub fn new(len: usize) -> Self {
        TickWindow {
            ticks: vec![Tick::default(); len.max(1)],
            next: 0,
            filled: 0,
            sum: Tick::default(),
        }
    }

    pub fn len_ticks(&self) -> usize {
        self.ticks.len()
    }

    pub fn push(&mut self, t: Tick) {
        if self.filled == self.ticks.len() {
            let old = self.ticks[self.next];
            self.sum.add(&old, -1.0);
        } else {
            self.filled += 1;
        }
        self.sum.add(&t, 1.0);
        self.ticks[self.next] = t;
        self.next = (self.next + 1) % self.ticks.len();
    }

    /// Sums over the window (whole-number counts, so exact in f64 whatever the order).
    pub fn sum(&self) -> &Tick {
        &self.sum
    }

    /// The newest tick.
    pub fn last(&self) -> Tick {
        self.ticks[(self.next + self.ticks.len() - 1) % self.ticks.len()]
    }

    pub fn is_full(&self) -> bool {
        self.filled == self.ticks.len()
    }

    /// The AP features over the window (`window_s` long), in [`AP_FEATURES`] order.
    pub fn features(&self, window_s: f64, out: &mut [f64; N_AP_FEATURES]) {
        let s = &self.sum;
        let last = self.last();
        let window_ns = window_s * 1e9;
        *out = [
            last.backlog_bytes,
            last.qlen_pkts,
            s.busy_ns / window_ns,
            s.tx_ns / window_ns,
            s.rx_ns / window_ns,
            s.congestion_drops,
            s.arrivals_pkts,
            s.arrivals_bytes,
            s.requeues,
            s.tx_retries,
            s.tx_bytes,
            s.rx_bytes,
            s.tx_failed,
            last.signal_db,
            last.tx_bitrate_mbps,
            s.datapath_bytes * 8.0 / window_s / 1e6,
        ];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table3_cut_points() {
        assert_eq!(loss_class(0.0), 0);
        assert_eq!(loss_class(0.0099999), 0);
        assert_eq!(loss_class(0.01), 1);
        assert_eq!(loss_class(0.0499999), 1);
        assert_eq!(loss_class(0.05), 2);
        assert_eq!(loss_class(0.1199999), 2);
        assert_eq!(loss_class(0.12), 3);
        assert_eq!(loss_class(1.0), 3);
    }

    #[test]
    fn window_sums_the_last_ticks() {
        let mut w = TickWindow::new(3);
        for k in 1..=5 {
            w.push(Tick {
                arrivals_pkts: k as f64,
                congestion_drops: 1.0,
                backlog_bytes: 100.0 * k as f64,
                ..Default::default()
            });
        }
        assert_eq!(w.sum().arrivals_pkts, 3.0 + 4.0 + 5.0);
        assert_eq!(w.sum().congestion_drops, 3.0);
        assert_eq!(w.last().backlog_bytes, 500.0);
        assert_eq!(w.sum().congestion_ratio(), 0.25);
    }
}
