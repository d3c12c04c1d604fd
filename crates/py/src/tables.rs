//! The results' tables built from a finished [`World`], column by column in file order: what
//! `timeseries.parquet`, `queue.parquet`, `features.parquet` and `radio.parquet` hold
//! (python/rove/results.py documents them). One definition serves both ways out:
//!
//! - [`columns`] feeds `Simulation.write_table`, which encodes the table straight to its
//!   Parquet file (crates/results): `rove run` and a sweep's points write their results
//!   without a Python object per row or per column;
//! - [`to_python`] gives the same columns in the shapes `finish()` always returned
//!   (`list[str]`, `(dtype, bytes)`), for the tables and DataFrames of `RunResult`.
//!
//! Name columns (`flow`, `link`, `cc`, the states, the radio's ports) are built as dictionary
//! keys ([`DictBuilder`]), not as a string per row; the file's bytes are those of the strings
//! (crates/results). The column order is the files' (results.py `TIMESERIES_COLUMNS`,
//! `QUEUE_COLUMNS`, `FEATURES_COLUMNS`; tests/test_results_native.py checks the bytes against
//! the Python path's).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use rove_results::{concat_promoted, Column, DictBuilder, Values};
use rove_sim::link::wifi::counters::any_multi_ap;
use rove_world::World;
use std::borrow::Cow;

/// One of the run's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Timeseries,
    Queue,
    Features,
    Radio,
}

impl Table {
    pub const ALL: [Table; 4] = [
        Table::Timeseries,
        Table::Queue,
        Table::Features,
        Table::Radio,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Timeseries => "timeseries",
            Table::Queue => "queue",
            Table::Features => "features",
            Table::Radio => "radio",
        }
    }

    pub fn from_name(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the run has this table: the time series and the queues always; the features
    /// when a controller recorded them, the radio counters when the scenario has a radio cell.
    pub fn present(self, world: &World) -> bool {
        match self {
            Table::Timeseries | Table::Queue => true,
            Table::Features => world
                .controllers
                .iter()
                .flatten()
                .any(|c| c.features().is_some()),
            Table::Radio => world.links.iter().any(|l| l.radio().is_some()),
        }
    }
}

/// The table's columns in file order (several parts for the features: one per recorder); the
/// numeric ones borrow the recorder's.
pub fn parts(world: &World, table: Table) -> Vec<Vec<Column<'_>>> {
    match table {
        Table::Timeseries => vec![timeseries(world)],
        Table::Queue => vec![queue(world)],
        Table::Features => features(world),
        Table::Radio => vec![radio(world)],
    }
}

/// The table as one list of columns (the features' parts concatenated, a column missing from
/// a part null on its rows, as pyarrow's `concat_tables(promote_options="default")`).
pub fn columns(world: &World, table: Table) -> Result<Vec<Column<'_>>, rove_results::Error> {
    let mut parts = parts(world, table);
    if parts.len() == 1 {
        return Ok(parts.pop().unwrap_or_default());
    }
    concat_promoted(parts)
}

fn col<'a>(name: &str, values: Values<'a>) -> Column<'a> {
    Column::new(name, values)
}

/// Names by index: row `i` holds `names[index[i]]`, written as dictionary keys (the file's
/// dictionary is built from the rows, so names that never appear cost nothing).
fn names_by_index(index: impl ExactSizeIterator<Item = usize>, names: &[&str]) -> Values<'static> {
    Values::Dict {
        keys: index.map(|i| i as i32).collect::<Vec<_>>().into(),
        entries: names
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into(),
    }
}

fn strs<'a>(rows: impl ExactSizeIterator<Item = &'a str>) -> Values<'static> {
    let mut dict = DictBuilder::with_capacity(rows.len());
    for s in rows {
        dict.push(s);
    }
    dict.into_values()
}

fn timeseries(world: &World) -> Vec<Column<'_>> {
    let s = &world.recorder.flows;
    // `flow` indexes the scenario's flows (single-path and multipath alike).
    let flow_names: Vec<&str> = world
        .scenario
        .flows
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    let mut out = vec![
        col("time_s", Values::F64(Cow::Borrowed(&s.time_s))),
        col(
            "flow",
            names_by_index(s.flow.iter().map(|&i| i as usize), &flow_names),
        ),
        // The algorithm live at each sample (an action or a controller may switch it).
        col("cc", strs(s.cc.iter().copied())),
        col("cwnd_pkts", Values::U32(Cow::Borrowed(&s.cwnd_pkts))),
        col(
            "ssthresh_pkts",
            Values::U32(Cow::Borrowed(&s.ssthresh_pkts)),
        ),
        col(
            "inflight_pkts",
            Values::U32(Cow::Borrowed(&s.inflight_pkts)),
        ),
        col(
            "pacing_rate_bps",
            Values::F64(Cow::Borrowed(&s.pacing_rate_bps)),
        ),
        col("srtt_ms", Values::F64(Cow::Borrowed(&s.srtt_ms))),
        col("min_rtt_ms", Values::F64(Cow::Borrowed(&s.min_rtt_ms))),
        col(
            "delivery_rate_bps",
            Values::F64(Cow::Borrowed(&s.delivery_rate_bps)),
        ),
        col("bytes_acked", Values::U64(Cow::Borrowed(&s.bytes_acked))),
        col(
            "bytes_delivered",
            Values::U64(Cow::Borrowed(&s.bytes_delivered)),
        ),
        col(
            "bytes_received",
            Values::U64(Cow::Borrowed(&s.bytes_received)),
        ),
        col("retrans_segs", Values::U64(Cow::Borrowed(&s.retrans_segs))),
        col("ca_state", strs(s.ca_state.iter().copied())),
        col("cc_state", strs(s.cc_state.iter().copied())),
        col("subflow", Values::I32(Cow::Borrowed(&s.subflow))),
        col("ofo_bytes", Values::U64(Cow::Borrowed(&s.ofo_bytes))),
    ];
    // Algorithm-specific columns (a multipath flow's coupling, ...) follow the schema's.
    for (name, values) in &s.extra {
        out.push(col(name, Values::F64(Cow::Borrowed(values))));
    }
    out
}

fn queue(world: &World) -> Vec<Column<'_>> {
    let s = &world.recorder.links;
    let link_names: Vec<&str> = world.links.iter().map(|l| l.name()).collect();
    vec![
        col("time_s", Values::F64(Cow::Borrowed(&s.time_s))),
        col(
            "link",
            names_by_index(s.link.iter().map(|&i| i as usize), &link_names),
        ),
        col(
            "backlog_bytes",
            Values::U64(Cow::Borrowed(&s.backlog_bytes)),
        ),
        col("backlog_pkts", Values::U32(Cow::Borrowed(&s.backlog_pkts))),
        col("drops", Values::U64(Cow::Borrowed(&s.drops))),
        col("queue_drops", Values::U64(Cow::Borrowed(&s.queue_drops))),
        col("loss_drops", Values::U64(Cow::Borrowed(&s.loss_drops))),
        col(
            "departed_bytes",
            Values::U64(Cow::Borrowed(&s.departed_bytes)),
        ),
        col(
            "capacity_bytes",
            Values::F64(Cow::Borrowed(&s.capacity_bytes)),
        ),
        // The packets that left the queue between samples i-1 and i.
        col(
            "sojourn_count",
            Values::U64(Cow::Borrowed(&s.sojourn_count)),
        ),
        col(
            "sojourn_mean_ms",
            Values::F64(Cow::Borrowed(&s.sojourn_mean_ms)),
        ),
        col(
            "sojourn_max_ms",
            Values::F64(Cow::Borrowed(&s.sojourn_max_ms)),
        ),
    ]
}

/// One part per feature-recording controller, each with a `controller` column last (the
/// recorder's index among them).
fn features(world: &World) -> Vec<Vec<Column<'_>>> {
    let flow_names: Vec<&str> = world
        .scenario
        .flows
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    let logs = world
        .controllers
        .iter()
        .flatten()
        .filter_map(|c| c.features());
    logs.enumerate()
        .map(|(k, log)| {
            let mut part = vec![
                col("time_s", Values::F64(Cow::Borrowed(&log.time_s))),
                col(
                    "flow",
                    names_by_index(log.flow.iter().map(|&i| i as usize), &flow_names),
                ),
                col("subflow", Values::I32(Cow::Borrowed(&log.subflow))),
                col("cc", strs(log.cc.iter().copied())),
                col("mode", strs(log.mode.iter().copied())),
            ];
            for (name, values) in log.names.iter().zip(&log.values) {
                part.push(col(name, Values::F64(Cow::Borrowed(values))));
            }
            for (name, value) in &log.tags {
                let rows = std::iter::repeat_n(0, log.time_s.len());
                part.push(col(name, names_by_index(rows, &[value.as_str()])));
            }
            part.push(col(
                "controller",
                Values::I32(vec![k as i32; log.time_s.len()].into()),
            ));
            part
        })
        .collect()
}

/// The radio cells' counters (crates/sim link/wifi/counters.rs `RadioSeries`).
fn radio(world: &World) -> Vec<Column<'_>> {
    let s = &world.recorder.radio;
    // Names from indices: the link's ports, the station of a port pair its even port, "down"
    // for an even port and "up" for an odd one.
    let ports: Vec<Vec<String>> = world.links.iter().map(|l| l.port_names()).collect();
    let rows = || {
        s.link
            .iter()
            .zip(&s.port)
            .map(|(&l, &p)| (l as usize, usize::from(p)))
    };
    let link_names: Vec<&str> = world.links.iter().map(|l| l.name()).collect();
    let mut out = vec![
        col("time_s", Values::F64(Cow::Borrowed(&s.time_s))),
        col(
            "link",
            names_by_index(s.link.iter().map(|&l| l as usize), &link_names),
        ),
        col("port", strs(rows().map(|(l, p)| ports[l][p].as_str()))),
        col(
            "station",
            strs(rows().map(|(l, p)| ports[l][p & !1].as_str())),
        ),
        col(
            "direction",
            strs(rows().map(|(_, p)| if p % 2 == 1 { "up" } else { "down" })),
        ),
        col("ac", strs(s.ac_names().collect::<Vec<_>>().into_iter())),
        col(
            "backlog_bytes",
            Values::U64(Cow::Borrowed(&s.backlog_bytes)),
        ),
        col("qlen", Values::U32(Cow::Borrowed(&s.qlen))),
    ];
    for (name, values) in [
        ("overflow_drops", &s.overflow_drops),
        ("codel_drops", &s.codel_drops),
        ("mac_drops", &s.mac_drops),
        ("requeues", &s.requeues),
        ("tx_packets", &s.tx_packets),
        ("tx_bytes", &s.tx_bytes),
        ("tx_retries", &s.tx_retries),
        ("collisions", &s.collisions),
        ("phy_errors", &s.phy_errors),
        ("internal_collisions", &s.internal_collisions),
    ] {
        out.push(col(name, Values::U64(Cow::Borrowed(values))));
    }
    for (name, values) in [
        ("tx_bitrate_bps", &s.tx_bitrate_bps),
        ("signal_db", &s.signal_db),
        ("survey_busy_ms", &s.survey_busy_ms),
        ("survey_tx_ms", &s.survey_tx_ms),
        ("survey_rx_ms", &s.survey_rx_ms),
        ("airtime_ms", &s.airtime_ms),
    ] {
        out.push(col(name, Values::F64(Cow::Borrowed(values))));
    }
    // An LTE cell's own columns (crates/sim link/lte/counters.rs), only in a run with one.
    if s.lte {
        for (name, values) in [("cqi", &s.cqi), ("mcs", &s.mcs)] {
            out.push(col(name, Values::F64(Cow::Borrowed(values))));
        }
        for (name, values) in [
            ("prbs", &s.prbs),
            ("tbs_bits", &s.tbs_bits),
            ("harq_failures", &s.harq_failures),
            ("cell_prbs_used", &s.cell_prbs_used),
        ] {
            out.push(col(name, Values::U64(Cow::Borrowed(values))));
        }
        out.push(col("cell_prbs", Values::U32(Cow::Borrowed(&s.cell_prbs))));
    }
    // The port's access point, only in a run with a cell of several (crates/sim
    // link/wifi/bss.rs); "" on an LTE cell's rows.
    if any_multi_ap(&world.links) {
        let aps: Vec<&[String]> = world
            .links
            .iter()
            .map(|l| l.radio().map_or(&[][..], |r| r.ap_names()))
            .collect();
        out.push(col(
            "ap",
            strs(s.link.iter().zip(&s.ap).map(|(&l, &k)| {
                aps[l as usize]
                    .get(usize::from(k))
                    .map_or("", String::as_str)
            })),
        ));
    }
    out
}

/// Columns as the Python contract has them: a dict of name -> `list[str]` or
/// `(dtype, bytes)` (little-endian values).
pub fn to_python<'py>(py: Python<'py>, columns: Vec<Column<'_>>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for c in columns {
        match &c.values {
            Values::F64(v) => d.set_item(c.name, numeric(py, "<f8", v, f64::to_le_bytes))?,
            Values::U64(v) => d.set_item(c.name, numeric(py, "<u8", v, u64::to_le_bytes))?,
            Values::U32(v) => d.set_item(c.name, numeric(py, "<u4", v, u32::to_le_bytes))?,
            Values::I32(v) => d.set_item(c.name, numeric(py, "<i4", v, i32::to_le_bytes))?,
            Values::I64(v) => d.set_item(c.name, numeric(py, "<i8", v, i64::to_le_bytes))?,
            Values::Str(v) => d.set_item(c.name, PyList::new(py, v.iter())?)?,
            Values::Dict { keys, entries } => {
                let rows = keys.iter().map(|&k| entries[k as usize].as_str());
                d.set_item(c.name, PyList::new(py, rows)?)?
            }
        }
    }
    Ok(d)
}

fn numeric<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    dtype: &'static str,
    values: &[T],
    le: fn(T) -> [u8; N],
) -> (&'static str, Bound<'py, PyBytes>) {
    let mut buf = Vec::with_capacity(values.len() * N);
    for &v in values {
        buf.extend_from_slice(&le(v));
    }
    (dtype, PyBytes::new(py, &buf))
}
