//! What the emulator writes into its output directory (the orchestrator's `raw/`), read by
//! `python/rove/kernel.py`:
//!
//! - `queue.jsonl`: one JSON object per link per sample time (every `sample_interval` of the
//!   emulator's clock, which starts at the scenario's time 0): the columns of the simulator's
//!   `queue.parquet` — `time_s`, `link`, `backlog_bytes`, `backlog_pkts`, `drops`,
//!   `queue_drops`, `loss_drops`, `mac_drops`, `offline_drops`, `departed_bytes` (cumulative
//!   counters) and `sojourn_count`,
//!   `sojourn_mean_ms`, `sojourn_max_ms` (null when none), the packets that left the queue since
//!   the previous sample and their mean and largest queueing delay.
//! - `drops.csv`: one line per dropped packet: `time_s,link,cause,bytes` with cause `loss`
//!   (random loss on entry), `queue` (tail drop), `aqm` (CoDel), `mac` (a radio MAC's retry
//!   limit) or `offline` (a drive-by WiFi station without connectivity).
//! - `rtt.csv`: one line per RTT sample: `flow,time_s,rtt_ms` (flow index; see rtt.rs).
//! - `radio.csv` (only with a radio cell): the cells' counters, one line per port per sample
//!   with the columns of the simulator's `radio.parquet` (crates/sim link/wifi/counters.rs), in
//!   its order ([`RADIO_COLUMNS`]), names as text and NaN for a missing value; sampled with the
//!   other samples or at a cell's own `sample_interval`, never at or after the scenario's end,
//!   and a last time exactly at its end (as the simulator's last rows: the cell's totals);
//!   the LTE columns after them with an LTE cell, then `ap` with a WiFi cell of several APs.
//! - `emu_summary.json`, written when the emulator stops: per link the totals and the capacity
//!   over the scenario's duration (for `utilization`) and the queueing delays of the packets
//!   that left the queue until the last sample within the duration (the summary's
//!   `mean_queue_delay_ms` ... `queue_delay_percentiles_ms`), a radio cell's totals at the
//!   scenario's end (`radio`: the simulator's `links[].radio`), per flow the packets and payload
//!   bytes seen, and the emulator's own CPU time.
//!
//! JSON Lines and CSV rather than a binary format: a 30 s run at 100 Mbps writes ~2 MB, which
//! Python reads in well under a second, and a person can look at the files.

use rove_sim::histogram::Histogram;
use rove_sim::link::wifi::counters::{ac_name, any_multi_ap, RadioSeries, RadioSummary};
use rove_sim::link::{AnyLink, DropReason, QueueDelaySummary};
use rove_sim::Nanos;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub const QUEUE_FILE: &str = "queue.jsonl";
pub const DROPS_FILE: &str = "drops.csv";
pub const SUMMARY_FILE: &str = "emu_summary.json";
pub const RTT_FILE: &str = "rtt.csv";
pub const RADIO_FILE: &str = "radio.csv";

/// The columns of `radio.csv`: those of the simulator's `radio.parquet`, in its order.
/// The columns `radio.csv` adds after [`RADIO_COLUMNS`] when the scenario has an LTE cell
/// (crates/sim link/lte/counters.rs).
pub const LTE_RADIO_COLUMNS: &[&str] = &[
    "cqi",
    "mcs",
    "prbs",
    "tbs_bits",
    "harq_failures",
    "cell_prbs_used",
    "cell_prbs",
];

pub const RADIO_COLUMNS: &[&str] = &[
    "time_s",
    "link",
    "port",
    "station",
    "direction",
    "ac",
    "backlog_bytes",
    "qlen",
    "overflow_drops",
    "codel_drops",
    "mac_drops",
    "requeues",
    "tx_packets",
    "tx_bytes",
    "tx_retries",
    "collisions",
    "phy_errors",
    "internal_collisions",
    "tx_bitrate_bps",
    "signal_db",
    "survey_busy_ms",
    "survey_tx_ms",
    "survey_rx_ms",
    "airtime_ms",
];

/// Per-flow counters kept by the emulator (TCP payload bytes: IP length minus IP and TCP
/// headers, so they compare with the simulator's payload counts).
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct FlowCounters {
    /// Data-direction packets read from the sender side.
    pub data_pkts_in: u64,
    /// Of those, segments carrying payload (what TCP counts as segments sent, retransmissions
    /// included).
    pub data_segs_in: u64,
    pub payload_bytes_in: u64,
    /// Data-direction packets and payload written to the receiver side (duplicates included).
    pub data_pkts_out: u64,
    pub payload_bytes_out: u64,
    /// ACK-direction packets read from the receiver side and written to the sender side.
    pub ack_pkts_in: u64,
    pub ack_pkts_out: u64,
}

impl FlowCounters {
    pub fn add(&mut self, o: &FlowCounters) {
        self.data_pkts_in += o.data_pkts_in;
        self.data_segs_in += o.data_segs_in;
        self.payload_bytes_in += o.payload_bytes_in;
        self.data_pkts_out += o.data_pkts_out;
        self.payload_bytes_out += o.payload_bytes_out;
        self.ack_pkts_in += o.ack_pkts_in;
        self.ack_pkts_out += o.ack_pkts_out;
    }
}

pub struct Recorder {
    queue: BufWriter<File>,
    drops: BufWriter<File>,
    rtt: BufWriter<File>,
    line: String,
    /// The scenario's duration, and per link its queueing delays as of the last sample within
    /// it (what the summary reports, as the simulator's covers the run's duration).
    duration_ns: Nanos,
    sojourn_at_end: Vec<Histogram>,
    /// `radio.csv` (with a radio cell), the names of each link and its ports, the rows of one
    /// sample (reused), and each cell's totals at the scenario's end.
    radio: Option<BufWriter<File>>,
    radio_names: Vec<(String, Vec<String>)>,
    radio_rows: RadioSeries,
    /// Whether `radio.csv` has the LTE columns.
    radio_lte: bool,
    /// Whether `radio.csv` has the `ap` column (a cell of several access points).
    radio_ap: bool,
    radio_end: Vec<Option<RadioSummary>>,
}

fn cause(reason: DropReason) -> &'static str {
    match reason {
        DropReason::Loss => "loss",
        DropReason::QueueFull => "queue",
        DropReason::Aqm => "aqm",
        DropReason::MacRetryLimit => "mac",
        DropReason::Offline => "offline",
    }
}

fn create(dir: &Path, name: &str) -> io::Result<BufWriter<File>> {
    let path = dir.join(name);
    let f = File::create(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    Ok(BufWriter::with_capacity(1 << 16, f))
}

impl Recorder {
    pub fn create(dir: &Path, duration_ns: Nanos, links: &[AnyLink]) -> io::Result<Recorder> {
        std::fs::create_dir_all(dir)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        let queue = create(dir, QUEUE_FILE)?;
        let mut drops = create(dir, DROPS_FILE)?;
        writeln!(drops, "time_s,link,cause,bytes")?;
        let mut rtt = create(dir, RTT_FILE)?;
        writeln!(rtt, "flow,time_s,rtt_ms,subflow")?;
        let radio_lte = links
            .iter()
            .any(|l| l.kind() == rove_sim::link::lte::KIND.kind);
        let radio_ap = any_multi_ap(links);
        let radio = if links.iter().any(|l| l.radio().is_some()) {
            let mut f = create(dir, RADIO_FILE)?;
            write!(f, "{}", RADIO_COLUMNS.join(","))?;
            if radio_lte {
                write!(f, ",{}", LTE_RADIO_COLUMNS.join(","))?;
            }
            if radio_ap {
                write!(f, ",ap")?;
            }
            writeln!(f)?;
            Some(f)
        } else {
            None
        };
        Ok(Recorder {
            queue,
            drops,
            rtt,
            line: String::with_capacity(4096),
            duration_ns,
            sojourn_at_end: Vec::new(),
            radio,
            radio_names: links
                .iter()
                .map(|l| (l.name().to_string(), l.port_names()))
                .collect(),
            radio_rows: RadioSeries::default(),
            radio_lte,
            radio_ap,
            radio_end: vec![None; links.len()],
        })
    }

    /// One `radio.csv` row per port of radio cell `i` at `now` (none at or after the scenario's
    /// end: [`radio_end`](Self::radio_end) takes the last).
    pub fn radio_sample(&mut self, now: Nanos, i: usize, link: &AnyLink) -> io::Result<()> {
        if now >= self.duration_ns {
            return Ok(());
        }
        self.write_radio(now, i, link)
    }

    /// The radio cells' last rows at the scenario's end, and their totals for the summary.
    pub fn radio_end(&mut self, now: Nanos, links: &[AnyLink]) -> io::Result<()> {
        for (i, l) in links.iter().enumerate() {
            if let Some(r) = l.radio() {
                self.write_radio(now, i, l)?;
                if !r.in_summary() {
                    continue;
                }
                self.radio_end[i] = Some(RadioSummary::of(
                    &r.radio_totals(),
                    r.driveby_summary(self.duration_ns),
                ));
            }
        }
        Ok(())
    }

    /// Cell `i`'s totals at the scenario's end (`None`: not a radio cell, or the run stopped
    /// before its end).
    pub fn radio_at_end(&self, i: usize) -> Option<RadioSummary> {
        self.radio_end.get(i).cloned().flatten()
    }

    fn write_radio(&mut self, now: Nanos, i: usize, link: &AnyLink) -> io::Result<()> {
        use std::fmt::Write as _;
        let (Some(file), Some(r)) = (self.radio.as_mut(), link.radio()) else {
            return Ok(());
        };
        let rows = &mut self.radio_rows;
        rows.clear();
        r.sample_radio(now, i as u32, rows);
        let (name, ports) = &self.radio_names[i];
        for k in 0..rows.len() {
            let p = usize::from(rows.port[k]);
            self.line.clear();
            // Names and the station (its even port) as the simulator's radio.parquet has them.
            let _ = write!(
                self.line,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                rows.time_s[k],
                name,
                ports[p],
                ports[p & !1],
                if p % 2 == 1 { "up" } else { "down" },
                ac_name(rows.ac[k]),
                rows.backlog_bytes[k],
                rows.qlen[k],
                rows.overflow_drops[k],
                rows.codel_drops[k],
                rows.mac_drops[k],
                rows.requeues[k],
                rows.tx_packets[k],
                rows.tx_bytes[k],
                rows.tx_retries[k],
                rows.collisions[k],
                rows.phy_errors[k],
                rows.internal_collisions[k],
                rows.tx_bitrate_bps[k],
                rows.signal_db[k],
                rows.survey_busy_ms[k],
                rows.survey_tx_ms[k],
                rows.survey_rx_ms[k],
                rows.airtime_ms[k],
            );
            if self.radio_lte {
                let _ = write!(
                    self.line,
                    ",{},{},{},{},{},{},{}",
                    rows.cqi[k],
                    rows.mcs[k],
                    rows.prbs[k],
                    rows.tbs_bits[k],
                    rows.harq_failures[k],
                    rows.cell_prbs_used[k],
                    rows.cell_prbs[k],
                );
            }
            if self.radio_ap {
                let aps = r.ap_names();
                let ap = aps.get(usize::from(rows.ap[k])).map_or("", String::as_str);
                let _ = write!(self.line, ",{ap}");
            }
            self.line.push('\n');
            file.write_all(self.line.as_bytes())?;
        }
        Ok(())
    }

    /// One `queue.jsonl` row per link; takes each link's sojourn interval.
    pub fn sample(&mut self, now: Nanos, links: &mut [AnyLink]) -> io::Result<()> {
        use std::fmt::Write as _;
        if now <= self.duration_ns {
            self.sojourn_at_end = links
                .iter()
                .map(|l| l.stats().sojourn.all.clone())
                .collect();
        }
        let opt = |x: Option<f64>| {
            x.map_or("null".to_string(), |v| {
                format!("{}", (v * 1e3).round() / 1e3)
            })
        };
        for l in links.iter_mut() {
            self.line.clear();
            let (backlog_bytes, backlog_pkts) = (l.backlog_bytes(), l.backlog_packets());
            let name = serde_json::to_string(l.name()).unwrap_or_default();
            let s = l.stats_mut();
            let soj = s.sojourn.take_interval();
            // Microsecond resolution is ample for queueing delays and keeps lines short.
            let _ = writeln!(
                self.line,
                "{{\"time_s\":{},\"link\":{},\"backlog_bytes\":{},\"backlog_pkts\":{},\"drops\":{},\"queue_drops\":{},\"loss_drops\":{},\"mac_drops\":{},\"offline_drops\":{},\"departed_bytes\":{},\"sojourn_count\":{},\"sojourn_mean_ms\":{},\"sojourn_max_ms\":{}}}",
                now as f64 / 1e9,
                name,
                backlog_bytes,
                backlog_pkts,
                s.drops(),
                s.queue_drops,
                s.loss_drops,
                s.mac_drops,
                s.offline_drops,
                s.departed_bytes,
                soj.count,
                opt(soj.mean_ms()),
                opt(soj.max_ms()),
            );
            self.queue.write_all(self.line.as_bytes())?;
        }
        Ok(())
    }

    /// Link `i`'s queueing delays over the scenario's duration (its last sample within it).
    pub fn queue_delay(&self, i: usize) -> QueueDelaySummary {
        self.sojourn_at_end
            .get(i)
            .map(QueueDelaySummary::of)
            .unwrap_or_default()
    }

    pub fn drop(
        &mut self,
        now: Nanos,
        link: &str,
        reason: DropReason,
        bytes: usize,
    ) -> io::Result<()> {
        writeln!(
            self.drops,
            "{},{},{},{}",
            now as f64 / 1e9,
            link,
            cause(reason),
            bytes
        )
    }

    /// One per-ACK RTT sample of a flow's path `subflow` (0 for a single-path flow).
    pub fn rtt(&mut self, flow: usize, subflow: usize, now: Nanos, rtt: Nanos) -> io::Result<()> {
        writeln!(
            self.rtt,
            "{},{},{},{}",
            flow,
            now as f64 / 1e9,
            (rtt as f64 / 1e3).round() / 1e3,
            subflow
        )
    }

    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(f) = self.radio.as_mut() {
            f.flush()?;
        }
        self.queue.flush()?;
        self.rtt.flush()?;
        self.drops.flush()
    }
}

#[derive(serde::Serialize)]
pub struct LinkTotals {
    pub name: String,
    /// The link model (`links.NAME.kind`).
    pub kind: &'static str,
    pub arrived_pkts: u64,
    pub departed_pkts: u64,
    pub departed_bytes: u64,
    pub capacity_bytes: f64,
    pub drops: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    pub backlog_pkts_at_end: usize,
    #[serde(flatten)]
    pub queue_delay: QueueDelaySummary,
    /// A radio cell's totals at the scenario's end (the simulator's `links[].radio`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub radio: Option<RadioSummary>,
}

#[derive(serde::Serialize)]
pub struct FlowTotals {
    pub name: String,
    #[serde(flatten)]
    pub counters: FlowCounters,
}

/// The counters of one path of a flow (a multipath flow's subflow; single-path flows have one).
#[derive(serde::Serialize)]
pub struct SubflowTotals {
    pub flow: usize,
    pub subflow: usize,
    #[serde(flatten)]
    pub counters: FlowCounters,
}

#[derive(serde::Serialize)]
pub struct EmuSummary {
    /// Emulator time when it stopped (s since the scenario's time 0).
    pub ran_s: f64,
    pub duration_s: f64,
    pub links: Vec<LinkTotals>,
    pub flows: Vec<FlowTotals>,
    /// Per path of each flow (routes in topology::routes order).
    pub subflows: Vec<SubflowTotals>,
    /// Packets read that belong to no flow (not IPv4, or an unknown address); dropped.
    pub unclassified_pkts: u64,
    /// Packets the TUN device refused on write.
    pub write_errors: u64,
    /// Largest lateness of an event the emulator handled, and its 99th percentile (µs): how far
    /// behind the model's times the real clock was when a packet left.
    pub lateness_max_us: f64,
    pub lateness_p99_us: f64,
    /// The CPU wake-up latency (µs) held during the run (link_emu::EmuOptions), None: none.
    pub cpu_latency_us: Option<u32>,
    /// Time spent in one write into a TUN device (the receiving stack runs in it), max and p99.
    pub write_max_us: f64,
    pub write_p99_us: f64,
    /// CPU time of the emulator (user + system), and over its running time.
    pub cpu_s: f64,
    pub cpu_fraction: f64,
    /// Per `kind = "oal"` controller: its report (the simulator's keys), the ACK rewrites per
    /// flow, and the wall-clock cost of its steps (oal.rs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub oal: Vec<serde_json::Value>,
}

pub fn write_summary(dir: &Path, summary: &EmuSummary) -> io::Result<()> {
    let path = dir.join(SUMMARY_FILE);
    let text = serde_json::to_string_pretty(summary).map_err(io::Error::other)?;
    let tmp = dir.join(format!(".{SUMMARY_FILE}.partial"));
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, &path)
}
