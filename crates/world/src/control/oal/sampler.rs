//! The AP sampler: what seed-004 Table 1 samples on the AP, at its rates, with redundancy
//! removal, and the communication load that costs (Eq. 1).
//!
//! | record (Table 1) | rate | size (Eq. 1) | fields here |
//! |---|---|---|---|
//! | link, per station | 250 Hz | 64 B | signal, tx bitrate, tx bytes, rx bytes, tx retries, tx failed |
//! | channel | 250 Hz | 64 B | survey busy, tx, rx time; noise |
//! | queue, per AP queue | 250 Hz | 48 B | backlog, qlen, drops, requeues, bytes, packets |
//! | beacon, per neighbour AP | 10 Hz | 32 B | the neighbour heard |
//! | drop | each drop | 48 B | (an event) |
//! | packet | each packet | 64 B | (an event) |
//!
//! The cell's counters are read at every tick (`LinkModel::radio`, the same rows as
//! `radio.parquet`); every drop is counted by cause from the per-cause counters' differences,
//! so each drop is known to its tick (4 ms) and its cause exactly as the model decided it.
//!
//! Redundancy removal (seed-004 §4: the AP sends only the fields that changed since the last
//! sample sent). [GAP] The size of a partial record: a record with k of its F fields changed
//! costs ⌈size·k/F⌉ bytes, one with none is not sent; drop and packet records are events and
//! always sent. [GAP] Noise: the model has no noise floor, so the channel record's noise field
//! never changes (sent once). [GAP] Beacons: neighbours are the scenario's other WiFi cells,
//! each heard at 10 Hz; the model has no beacons, so a beacon record never changes after its
//! first. [GAP] x, the queues of Eq. 1, is the AP's queues: one per station here.
//!
//! **Eq. 1's example.** The paper gives r_s = 283.5 kB/s for z = 10, x = 1, y = 20,
//! r = 1500, η = 0.1; its formula gives 290.625 kB/s ([`eq1_load_kbytes`]); 283.59 is the
//! formula without the drop term 48ηr/1024 = 7.03, and the printed coefficient 0.316 for
//! 32·10/1024 is 0.3125.

use super::window::Tick;
use rove_sim::link::wifi::counters::RadioSeries;
use rove_sim::link::AnyLink;
use rove_sim::Nanos;

/// Record sizes of Eq. 1, bytes.
pub const LINK_RECORD: u64 = 64;
pub const CHANNEL_RECORD: u64 = 64;
pub const QUEUE_RECORD: u64 = 48;
pub const BEACON_RECORD: u64 = 32;
pub const DROP_RECORD: u64 = 48;
pub const PACKET_RECORD: u64 = 64;
/// Table 1: link, channel and queue records at 250 Hz; beacons at 10 Hz.
pub const FAST_HZ: u64 = 250;
pub const BEACON_HZ: u64 = 10;

/// Eq. 1, seed-004: the AP's sampling load in kbyte/s for z stations, x queues, y neighbour
/// APs, packet rate r (packets/s) and loss rate η.
pub fn eq1_load_kbytes(z: f64, x: f64, y: f64, r: f64, eta: f64) -> f64 {
    (250.0 * (64.0 * z + 64.0 + 48.0 * x) + 32.0 * 10.0 * y + 48.0 * eta * r + r * 64.0) / 1024.0
}

/// Bytes the sampler sent (or would have sent without redundancy removal).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Load {
    /// Every record at its rate, full size (what Eq. 1 counts).
    pub full_bytes: u64,
    /// Changed fields only.
    pub sent_bytes: u64,
    pub fast_samples: u64,
    pub beacons: u64,
    pub drops: u64,
    pub packets: u64,
}

/// Last values sent of one record, for redundancy removal.
#[derive(Debug, Clone)]
struct Record<const F: usize> {
    last: Option<[f64; F]>,
}

impl<const F: usize> Record<F> {
    /// Bytes the record costs when it now holds `v` (full `size` when first sent).
    fn send(&mut self, v: [f64; F], size: u64) -> u64 {
        let changed = match &self.last {
            None => F,
            // Bit equality: NaN (a signal not modelled) is "unchanged" when it stays NaN.
            Some(old) => old.iter().zip(&v).filter(|(a, b)| a.to_bits() != b.to_bits()).count(),
        };
        self.last = Some(v);
        (size * changed as u64).div_ceil(F as u64)
    }
}

/// Reads one AP's counters at each tick (of a WiFi cell with one or several APs).
pub struct ApSampler {
    link: usize,
    /// Per station of the cell: whether it is this AP's (its rows are sampled).
    own: Vec<bool>,
    stations: usize,
    neighbours: usize,
    rows: RadioSeries,
    /// Per port: cumulative (overflow + codel, mac, requeues, tx bytes, tx retries) at the last tick.
    prev: Vec<[u64; 5]>,
    prev_survey_ms: [f64; 3],
    link_records: Vec<Record<6>>,
    channel_record: Record<4>,
    queue_records: Vec<Record<6>>,
    beacon_records: Vec<Record<1>>,
    next_beacon: Nanos,
    pub load: Load,
    /// Run totals by cause, downlink (the AP's queues and transmissions).
    pub congestion_drops: u64,
    pub mac_drops: u64,
}

impl ApSampler {
    /// `own`: per station of the cell, whether it is associated with this AP.
    pub fn new(link: usize, own: Vec<bool>, neighbours: usize) -> Self {
        let cell_stations = own.len();
        ApSampler {
            link,
            stations: own.iter().filter(|&&o| o).count(),
            own,
            neighbours,
            rows: RadioSeries::default(),
            prev: vec![[0; 5]; 2 * cell_stations],
            prev_survey_ms: [0.0; 3],
            link_records: vec![Record { last: None }; cell_stations],
            channel_record: Record { last: None },
            queue_records: vec![Record { last: None }; cell_stations],
            beacon_records: vec![Record { last: None }; neighbours],
            next_beacon: 0,
            load: Load::default(),
            congestion_drops: 0,
            mac_drops: 0,
        }
    }

    /// Samples the cell at `now`: fills the counter part of `tick` (deltas since the last
    /// call, and the state now) and accounts the records sent.
    pub fn sample(&mut self, now: Nanos, links: &[AnyLink], tick: &mut Tick) {
        let radio = links[self.link].radio().expect("OAL's link is a WiFi cell (checked at build)");
        self.rows.clear();
        radio.sample_radio(now, self.link as u32, &mut self.rows);
        let r = &self.rows;
        let (mut signal_sum, mut signal_n, mut rate_sum, mut rate_n) = (0.0, 0, 0.0, 0);
        let mut all_drops = 0u64;
        let mut first_own = None;
        for row in 0..r.len() {
            let port = r.port[row] as usize;
            if !self.own[port / 2] {
                continue;
            }
            first_own.get_or_insert(row);
            let down = port % 2 == 0;
            let now_c = [
                r.overflow_drops[row] + r.codel_drops[row],
                r.mac_drops[row],
                r.requeues[row],
                r.tx_bytes[row],
                r.tx_retries[row],
            ];
            let prev = self.prev[port];
            let delta = |k: usize| (now_c[k] - prev[k]) as f64;
            all_drops += (now_c[0] - prev[0]) + (now_c[1] - prev[1]);
            tick.tx_failed += delta(1);
            if down {
                tick.congestion_drops += delta(0);
                tick.mac_drops += delta(1);
                tick.requeues += delta(2);
                tick.tx_bytes += delta(3);
                tick.tx_retries += delta(4);
                tick.backlog_bytes += r.backlog_bytes[row] as f64;
                tick.qlen_pkts += r.qlen[row] as f64;
                self.congestion_drops += now_c[0] - prev[0];
                self.mac_drops += now_c[1] - prev[1];
                if !r.signal_db[row].is_nan() {
                    signal_sum += r.signal_db[row];
                    signal_n += 1;
                }
                if !r.tx_bitrate_bps[row].is_nan() {
                    rate_sum += r.tx_bitrate_bps[row] / 1e6;
                    rate_n += 1;
                }
                let s = port / 2;
                self.load.sent_bytes += self.queue_records[s].send(
                    [
                        r.backlog_bytes[row] as f64,
                        r.qlen[row] as f64,
                        now_c[0] as f64,
                        now_c[2] as f64,
                        now_c[3] as f64,
                        r.tx_packets[row] as f64,
                    ],
                    QUEUE_RECORD,
                );
                // The station's link record: its signal and bitrate, the AP's tx to it and rx
                // from it (the up port's tx bytes, the next row).
                let up_tx = r.tx_bytes.get(row + 1).copied().unwrap_or(0);
                self.load.sent_bytes += self.link_records[s].send(
                    [
                        r.signal_db[row],
                        r.tx_bitrate_bps[row],
                        now_c[3] as f64,
                        up_tx as f64,
                        now_c[4] as f64,
                        now_c[1] as f64,
                    ],
                    LINK_RECORD,
                );
            } else {
                tick.rx_bytes += delta(3);
            }
            self.prev[port] = now_c;
        }
        tick.signal_db = if signal_n > 0 { signal_sum / signal_n as f64 } else { f64::NAN };
        tick.tx_bitrate_mbps = if rate_n > 0 { rate_sum / rate_n as f64 } else { 0.0 };
        if let Some(row) = first_own {
            // The AP's survey (the same on each of its rows).
            let survey = [r.survey_busy_ms[row], r.survey_tx_ms[row], r.survey_rx_ms[row]];
            tick.busy_ns += (survey[0] - self.prev_survey_ms[0]) * 1e6;
            tick.tx_ns += (survey[1] - self.prev_survey_ms[1]) * 1e6;
            tick.rx_ns += (survey[2] - self.prev_survey_ms[2]) * 1e6;
            self.prev_survey_ms = survey;
            self.load.sent_bytes += self
                .channel_record
                .send([survey[0], survey[1], survey[2], 0.0], CHANNEL_RECORD);
        }
        let z = self.stations as u64;
        self.load.fast_samples += 1;
        // The queues of Eq. 1's x are the AP's, one per station.
        self.load.full_bytes += LINK_RECORD * z + CHANNEL_RECORD + QUEUE_RECORD * z;
        self.load.drops += all_drops;
        self.load.full_bytes += DROP_RECORD * all_drops;
        self.load.sent_bytes += DROP_RECORD * all_drops;
        if now >= self.next_beacon {
            self.next_beacon = now + 1_000_000_000 / BEACON_HZ;
            self.load.beacons += 1;
            for b in &mut self.beacon_records {
                self.load.full_bytes += BEACON_RECORD;
                self.load.sent_bytes += b.send([1.0], BEACON_RECORD);
            }
        }
    }

    /// Packet records: one per packet the AP forwarded.
    pub fn packets(&mut self, n: u64) {
        self.load.packets += n;
        self.load.full_bytes += PACKET_RECORD * n;
        self.load.sent_bytes += PACKET_RECORD * n;
    }

    /// Station `s`'s signal at the last sample (NaN without an SNR).
    pub fn station_signal(&self, s: usize) -> f64 {
        let row = 2 * s;
        if row < self.rows.len() {
            self.rows.signal_db[row]
        } else {
            f64::NAN
        }
    }

    pub fn stations(&self) -> usize {
        self.stations
    }

    pub fn neighbours(&self) -> usize {
        self.neighbours
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq1_on_the_papers_example() {
        // z = 10, x = 1, y = 20, r = 1500, η = 0.1: the formula gives 290.625 kB/s.
        let r_s = eq1_load_kbytes(10.0, 1.0, 20.0, 1500.0, 0.1);
        assert!((r_s - 290.625).abs() < 1e-12, "{r_s}");
        // The paper's 283.5 is the formula without the drop term 48·η·r/1024 = 7.03125.
        let drop_term = 48.0 * 0.1 * 1500.0 / 1024.0;
        assert!((r_s - drop_term - 283.59375).abs() < 1e-12);
        // The printed simplification: 15.625z + 15.625 + 11.718x + 0.316y + 0.0468rη + 0.0625r,
        // with 0.3125 for 0.316 and 11.71875, 0.046875 unrounded.
        let simplified = 15.625 * 10.0 + 15.625 + 11.71875 + 0.3125 * 20.0 + 0.046875 * 150.0 + 0.0625 * 1500.0;
        assert!((simplified - r_s).abs() < 1e-12);
    }

    #[test]
    fn a_record_costs_its_changed_fields() {
        let mut r = Record::<6> { last: None };
        assert_eq!(r.send([1.0; 6], 48), 48);
        assert_eq!(r.send([1.0; 6], 48), 0);
        assert_eq!(r.send([1.0, 2.0, 1.0, 1.0, 1.0, 1.0], 48), 8);
        assert_eq!(r.send([f64::NAN; 6], 48), 48);
        assert_eq!(r.send([f64::NAN; 6], 48), 0);
        let mut c = Record::<4> { last: None };
        c.send([0.0; 4], 64);
        assert_eq!(c.send([1.0, 1.0, 1.0, 0.0], 64), 48);
    }
}
