//! `rove._core`: the thin Python face of the simulator. Parsing, running and summarising all
//! happen in Rust; this module converts arguments in and results out. A finished run's tables
//! stay in the engine: `Simulation.write_table` encodes one straight to its Parquet file
//! (tables.rs, crates/results), and only `table_columns` / `finish` hand columns to Python,
//! numeric ones as `(dtype, bytes)` pairs that numpy reads without copying element by element.

use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use rove_scenario::{trace, ParseOptions, ScenarioError as CoreError};
use rove_world::{load, summarize, World};
use std::path::Path;

mod parquet;
mod tables;

use tables::Table;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario, trace or parameter is invalid."
);

fn scenario_err(e: CoreError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

fn parse_options<'a>(
    source: &'a str,
    base_dir: Option<&'a str>,
    overrides: &'a [(String, String)],
    seed: Option<u64>,
) -> ParseOptions<'a> {
    ParseOptions {
        source,
        base_dir: base_dir.map(Path::new),
        overrides,
        seed,
        ..Default::default()
    }
}

/// What running the scenario will cost (events, memory; `rove_world::estimate`), as JSON. Only
/// parses: nothing per flow is built, so a scenario too large to build is still estimated.
#[pyfunction]
#[pyo3(signature = (text, source, base_dir, overrides, seed))]
fn estimate(
    text: &str,
    source: &str,
    base_dir: Option<&str>,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<String> {
    let scenario = rove_world::parse(text, &parse_options(source, base_dir, &overrides, seed))
        .map_err(scenario_err)?;
    serde_json::to_string(&rove_world::estimate(&scenario))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

fn load_world(
    text: &str,
    source: &str,
    base_dir: Option<&str>,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> PyResult<World> {
    load(text, &parse_options(source, base_dir, overrides, seed)).map_err(scenario_err)
}

/// Parses and validates a scenario (building its world, so algorithm parameters are checked
/// too) and returns an outline of it.
#[pyfunction]
#[pyo3(signature = (text, source, base_dir, overrides, seed))]
fn validate<'py>(
    py: Python<'py>,
    text: &str,
    source: &str,
    base_dir: Option<&str>,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let world = load_world(text, source, base_dir, &overrides, seed)?;
    let s = &world.scenario;
    let d = PyDict::new(py);
    d.set_item("name", &s.name)?;
    d.set_item("duration_s", s.duration_ns as f64 / 1e9)?;
    d.set_item("seed", s.seed)?;
    d.set_item(
        "links",
        s.links.iter().map(|l| l.name.clone()).collect::<Vec<_>>(),
    )?;
    let flows = PyList::empty(py);
    for f in &s.flows {
        let fd = PyDict::new(py);
        fd.set_item("name", &f.name)?;
        fd.set_item("cc", &f.cc)?;
        if let Some(mp) = &f.multipath {
            fd.set_item("subflows", mp.paths.len())?;
            fd.set_item("scheduler", &mp.scheduler)?;
            fd.set_item("coupling", &mp.coupling)?;
        }
        flows.append(fd)?;
    }
    d.set_item("flows", flows)?;
    Ok(d)
}

#[pyclass(module = "rove._core")]
struct Simulation {
    world: World,
    /// What ending the run gave (`finish_run`), kept so that it runs once.
    ended: Option<Ended>,
}

/// The end of a run: the summary and what the world reported as it closed.
struct Ended {
    summary_json: String,
    warnings: Vec<String>,
    captures: Vec<(String, u64)>,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (text, source, base_dir, overrides, seed))]
    fn new(
        text: &str,
        source: &str,
        base_dir: Option<&str>,
        overrides: Vec<(String, String)>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        Ok(Simulation {
            world: load_world(text, source, base_dir, &overrides, seed)?,
            ended: None,
        })
    }

    #[getter]
    fn duration_ns(&self) -> u64 {
        self.world.duration_ns()
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.world.now()
    }

    #[getter]
    fn events(&self) -> u64 {
        self.world.events()
    }

    /// Advances the simulation to `t_ns` (capped at the duration), without holding the GIL.
    /// A pending Ctrl-C or SIGTERM handler runs within a fraction of a second (see `sliced`).
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        let end = t_ns.min(self.world.duration_ns());
        sliced(py, &mut self.world, end, |w, t| w.run_until(t))
    }

    /// Processes every event before `t_ns` and stops the clock there, so that a change applied
    /// next happens at `t_ns` first (the stepping API's `run_until`).
    fn advance_to(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        let end = t_ns.min(self.world.duration_ns());
        // Every slice but the last is inclusive (processing events at a slice's end belongs to
        // the same run as processing them at the start of the next one).
        sliced(py, &mut self.world, end, |w, t| {
            if t < end {
                w.run_until(t)
            } else {
                w.advance_to(t)
            }
        })
    }

    /// Writes the packets that cross link `link` from now on to a pcap file at `path`
    /// (`rove_world::pcap`); an unknown link is a ValueError naming the accepted ones.
    fn capture_pcap(&mut self, link: &str, path: &str) -> PyResult<()> {
        self.world
            .add_capture(link, Path::new(path))
            .map_err(PyValueError::new_err)
    }

    /// Runs to the end if needed and returns the summary and the time series: the dict of
    /// `finish_run` with the tables' columns added (`timeseries`, `queue`: a dict of columns
    /// each; `features`: one dict per recording controller; `radio`: a dict or None).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = self.finish_run(py)?;
        let world = &self.world;
        for table in [Table::Timeseries, Table::Queue] {
            d.set_item(
                table.name(),
                tables::to_python(py, tables::columns(world, table).map_err(results_err)?)?,
            )?;
        }
        let features = PyList::empty(py);
        for mut part in tables::parts(world, Table::Features) {
            part.pop(); // the `controller` column: RawTable.from_feature_logs adds it
            features.append(tables::to_python(py, part)?)?;
        }
        d.set_item("features", features)?;
        if Table::Radio.present(world) {
            let radio = tables::columns(world, Table::Radio).map_err(results_err)?;
            d.set_item("radio", tables::to_python(py, radio)?)?;
        } else {
            d.set_item("radio", py.None())?;
        }
        Ok(d)
    }

    /// Runs to the end if needed and ends the run (once; later calls give the same): returns
    /// `{"summary_json", "warnings", "captures"}`. The tables stay in the engine until
    /// `write_table` or `table_columns` asks for them.
    fn finish_run<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.ended.is_none() {
            let duration = self.world.duration_ns();
            sliced(py, &mut self.world, duration, |w, t| w.run_until(t))?;
            let world = &mut self.world;
            world.finish_radio();
            let summary_json = serde_json::to_string(&summarize(world))
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            let captures = world.finish_captures().map_err(PyValueError::new_err)?;
            self.ended = Some(Ended {
                summary_json,
                warnings: world.warnings.clone(),
                captures,
            });
        }
        let ended = self.ended.as_ref().expect("ended above");
        let d = PyDict::new(py);
        d.set_item("summary_json", &ended.summary_json)?;
        d.set_item("warnings", ended.warnings.clone())?;
        d.set_item("captures", ended.captures.clone())?;
        Ok(d)
    }

    /// The tables this run has, by name: `timeseries`, `queue`, and `features` (a controller
    /// recorded features) and `radio` (a radio cell) when present. Only after `finish_run`.
    fn tables(&self) -> PyResult<Vec<&'static str>> {
        self.check_ended()?;
        Ok(Table::ALL
            .into_iter()
            .filter(|t| t.present(&self.world))
            .map(Table::name)
            .collect())
    }

    /// Writes table `name`'s Parquet file at `path` from the engine's columns (crates/results),
    /// without the GIL while it encodes; returns its number of rows.
    fn write_table(&self, py: Python<'_>, name: &str, path: &str) -> PyResult<usize> {
        let table = self.table(name)?;
        let columns = tables::columns(&self.world, table).map_err(results_err)?;
        let rows = rove_results::num_rows(&columns).map_err(results_err)?;
        py.allow_threads(|| rove_results::write_parquet(Path::new(path), &columns))
            .map_err(|e| match e {
                rove_results::Error::Io(e) => e.into(),
                e => results_err(e),
            })?;
        Ok(rows)
    }

    /// Table `name`'s columns as `finish()` gives them, one dict per part (the features: one
    /// per recording controller, each with its `controller` column).
    fn table_columns<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyList>> {
        let table = self.table(name)?;
        let out = PyList::empty(py);
        for part in tables::parts(&self.world, table) {
            out.append(tables::to_python(py, part)?)?;
        }
        Ok(out)
    }

    /// Table `name`'s number of rows.
    fn table_rows(&self, name: &str) -> PyResult<usize> {
        let table = self.table(name)?;
        Ok(tables::parts(&self.world, table)
            .iter()
            .map(|p| p.first().map_or(0, |c| c.values.len()))
            .sum())
    }

    /// Names of the scenario's flows, in order.
    #[getter]
    fn flow_names(&self) -> Vec<String> {
        self.world.flows.iter().map(|f| f.name.clone()).collect()
    }

    #[getter]
    fn link_names(&self) -> Vec<String> {
        self.world
            .links
            .iter()
            .map(|l| l.name().to_string())
            .collect()
    }

    /// Per subflow of flow `name` (one entry for a single-path flow): what a controller sees.
    fn flow_stats<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyList>> {
        let w = &self.world;
        let f = w
            .flow_index(name)
            .ok_or_else(|| unknown("flow", name, w.flows.iter().map(|f| f.name.as_str())))?;
        let out = PyList::empty(py);
        if let rove_world::transport::Transport::Datagram { source, sink } = &w.flows[f].transport {
            let d = PyDict::new(py);
            d.set_item("workload", source.kind())?;
            d.set_item("sent_pkts", source.sent_pkts)?;
            d.set_item("received_pkts", sink.received_pkts)?;
            d.set_item("bytes_delivered", sink.payload_bytes)?;
            out.append(d)?;
            return Ok(out);
        }
        for sub in 0..w.flows[f].transport.subflow_count() {
            let v = w.sender_view(f, sub);
            let d = PyDict::new(py);
            d.set_item("subflow", sub)?;
            d.set_item("cc", v.cc)?;
            d.set_item("mode", v.mode)?;
            d.set_item("ca_state", v.ca_state)?;
            d.set_item("cwnd_pkts", v.cwnd_pkts)?;
            d.set_item("ssthresh_pkts", v.ssthresh_pkts)?;
            d.set_item("inflight_pkts", v.inflight_pkts)?;
            d.set_item("srtt_ms", v.srtt_ms)?;
            d.set_item("min_rtt_ms", v.min_rtt_ms)?;
            d.set_item("delivery_rate_bps", v.delivery_rate_bps)?;
            d.set_item("pacing_rate_bps", v.pacing_rate_bps)?;
            d.set_item("lost_pkts", v.lost_pkts)?;
            d.set_item("retrans_segs", v.retrans_segs)?;
            d.set_item("bytes_acked", v.bytes_acked)?;
            d.set_item("bytes_delivered", w.bytes_delivered(f))?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// Link `name`'s counters.
    fn link_stats<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        let w = &self.world;
        let l = w
            .link_index(name)
            .ok_or_else(|| unknown("link", name, w.links.iter().map(|l| l.name())))?;
        let v = w.link_view(l);
        let d = PyDict::new(py);
        d.set_item("backlog_bytes", v.backlog_bytes)?;
        d.set_item("backlog_pkts", v.backlog_pkts)?;
        d.set_item("drops", v.drops)?;
        d.set_item("departed_bytes", v.departed_bytes)?;
        d.set_item("utilization", v.utilization)?;
        Ok(d)
    }

    /// Applies an action now: `text` is one `[[actions]]` table as TOML (`at` defaults to now).
    fn act(&mut self, text: &str) -> PyResult<()> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ScenarioError::new_err(e.message().to_string()))?;
        let names = rove_world::cc_names();
        let opts = ParseOptions {
            source: &self.world.scenario.source,
            known_cc: &names,
            ..Default::default()
        };
        let now = self.world.now();
        let action = rove_scenario::parse_action(&table, &self.world.scenario, now, &opts)
            .map_err(scenario_err)?;
        if action.at_ns > now {
            return Err(ScenarioError::new_err(
                "action: at: the stepping API applies actions now; run_until the time first",
            ));
        }
        self.world
            .apply(&action)
            .map_err(|e| ScenarioError::new_err(format!("action: {e}")))
    }
}

impl Simulation {
    fn check_ended(&self) -> PyResult<()> {
        if self.ended.is_none() {
            return Err(PyValueError::new_err(
                "the run's tables exist once it has ended: call finish_run() first",
            ));
        }
        Ok(())
    }

    /// The present table called `name` (after `finish_run`).
    fn table(&self, name: &str) -> PyResult<Table> {
        self.check_ended()?;
        let present: Vec<&str> = Table::ALL
            .into_iter()
            .filter(|t| t.present(&self.world))
            .map(Table::name)
            .collect();
        match Table::from_name(name) {
            Some(t) if t.present(&self.world) => Ok(t),
            _ => Err(PyValueError::new_err(format!(
                "no table {name:?} in this run; its tables are: {}",
                present.join(", ")
            ))),
        }
    }
}

fn results_err(e: rove_results::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn unknown<'a>(what: &str, name: &str, known: impl Iterator<Item = &'a str>) -> PyErr {
    let known: Vec<&str> = known.take(20).collect();
    ScenarioError::new_err(format!(
        "unknown {what} {name:?}; {what}s are: {}",
        known.join(", ")
    ))
}

/// Converts a Python value (str, bool, int, float, list, dict) to TOML.
fn to_toml(v: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
    if v.is_instance_of::<PyBool>() {
        Ok(toml::Value::Boolean(v.extract()?))
    } else if v.is_instance_of::<PyInt>() {
        Ok(toml::Value::Integer(v.extract()?))
    } else if v.is_instance_of::<PyFloat>() {
        Ok(toml::Value::Float(v.extract()?))
    } else if v.is_instance_of::<PyString>() {
        Ok(toml::Value::String(v.extract()?))
    } else if let Ok(list) = v.downcast::<PyList>() {
        list.iter()
            .map(|x| to_toml(&x))
            .collect::<PyResult<Vec<_>>>()
            .map(toml::Value::Array)
    } else if let Ok(dict) = v.downcast::<PyDict>() {
        Ok(toml::Value::Table(dict_to_table(dict)?))
    } else {
        Err(PyTypeError::new_err(format!(
            "cannot express {} in TOML",
            v.get_type().name()?
        )))
    }
}

/// A command-line value as TOML reads it (the value of `v = TEXT`), or `None` when `TEXT` is
/// not a TOML value (python/rove/cli.py `parse_value` then keeps the text as a string). The
/// scenario's own parser (the `toml` crate) reads it, so `rove run` needs no Python TOML
/// module; a date or time (no scenario key takes one) comes back as its text.
#[pyfunction]
fn parse_toml_value(py: Python<'_>, text: &str) -> PyResult<Option<PyObject>> {
    match format!("v = {text}").parse::<toml::Table>() {
        Ok(mut table) => table.remove("v").map(|v| from_toml(py, v)).transpose(),
        Err(_) => Ok(None),
    }
}

/// Converts a TOML value to Python (str, bool, int, float, list, dict), the inverse of
/// [`to_toml`]; a datetime becomes its TOML text.
fn from_toml(py: Python<'_>, v: toml::Value) -> PyResult<PyObject> {
    Ok(match v {
        toml::Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Boolean(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        toml::Value::Datetime(d) => d.to_string().into_pyobject(py)?.into_any().unbind(),
        toml::Value::Array(items) => {
            let items = items
                .into_iter()
                .map(|x| from_toml(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        toml::Value::Table(t) => {
            let d = PyDict::new(py);
            for (k, x) in t {
                d.set_item(k, from_toml(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

fn dict_to_table(d: &Bound<'_, PyDict>) -> PyResult<toml::Table> {
    let mut t = toml::Table::new();
    for (k, v) in d.iter() {
        t.insert(k.extract::<String>()?, to_toml(&v)?);
    }
    Ok(t)
}

/// Generates a synthetic Mahimahi trace (millisecond timestamps).
#[pyfunction]
fn synth_trace(
    kind: &str,
    params: &Bound<'_, PyDict>,
    duration_ms: u32,
    seed: u64,
) -> PyResult<Vec<u32>> {
    trace::synth(kind, &dict_to_table(params)?, duration_ms, seed).map_err(scenario_err)
}

/// `summary.json`'s text for the engine's summary JSON and the run's wall time: `wall_s` after
/// `seed`, laid out byte for byte as results.py's `summary_text(summary_with_wall(...))`
/// (crates/results summary.rs).
#[pyfunction]
fn summary_text(summary_json: &str, wall_s: f64) -> PyResult<String> {
    rove_results::summary_text(summary_json, wall_s).map_err(results_err)
}

/// Reads and validates a Mahimahi trace file.
#[pyfunction]
fn load_trace(path: &str) -> PyResult<Vec<u32>> {
    trace::load_mahimahi(Path::new(path)).map_err(scenario_err)
}

/// The selection controller's phases (`rove_scenario::selection::thesis_phases`, the schedule
/// both backends use): `[(name, start_s, end_s)]`, for tests that pin it to
/// `rove.selection.thesis_phases`.
#[pyfunction]
#[pyo3(signature = (direction, speed_kmh, duration_s, startup_s=None, constrained_s=None))]
fn selection_phases(
    direction: &str,
    speed_kmh: f64,
    duration_s: f64,
    startup_s: Option<f64>,
    constrained_s: Option<f64>,
) -> PyResult<Vec<(&'static str, f64, f64)>> {
    let ns = |s: f64| (s * 1e9).round() as u64;
    rove_scenario::selection::thesis_phases(
        direction,
        speed_kmh,
        ns(duration_s),
        startup_s.map(ns),
        constrained_s.map(ns),
    )
    .map(|phases| {
        phases
            .into_iter()
            .map(|p| (p.name, p.start_ns as f64 / 1e9, p.end_ns as f64 / 1e9))
            .collect()
    })
    .map_err(PyValueError::new_err)
}

/// A decision tree or tree ensemble (`rove_model`: an XGBoost JSON model or rove's export of
/// scikit-learn trees), evaluated as the engine's controllers evaluate it.
#[pyclass(module = "rove._core", name = "TreeModel", frozen)]
struct PyTreeModel {
    model: rove_model::TreeModel,
}

#[pymethods]
impl PyTreeModel {
    /// Loads the model at `path`; a bad file is a ValueError naming it.
    #[new]
    fn new(path: &str) -> PyResult<Self> {
        rove_model::TreeModel::load(Path::new(path))
            .map(|model| PyTreeModel { model })
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.model.n_features()
    }

    #[getter]
    fn n_outputs(&self) -> usize {
        self.model.n_outputs()
    }

    #[getter]
    fn description(&self) -> &str {
        self.model.description()
    }

    #[getter]
    fn feature_names(&self) -> Option<Vec<String>> {
        self.model.feature_names().map(<[String]>::to_vec)
    }

    /// A classifier's class labels (floats or strings) in output order; None for a regressor.
    #[getter]
    fn classes<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(classes) = self.model.classes() else {
            return Ok(None);
        };
        let out = PyList::empty(py);
        for c in classes {
            match c {
                rove_model::Label::Number(v) => out.append(*v)?,
                rove_model::Label::Text(s) => out.append(s)?,
            }
        }
        Ok(Some(out))
    }

    /// Outputs per row (`n_outputs` each): predicted values or class probabilities.
    fn predict(&self, rows: Vec<Vec<f64>>) -> PyResult<Vec<Vec<f64>>> {
        self.each(rows, |m, x, out| m.predict_into(x, out))
    }

    /// Summed margins per row, before the link (XGBoost's `output_margin=True`).
    fn margins(&self, rows: Vec<Vec<f64>>) -> PyResult<Vec<Vec<f64>>> {
        self.each(rows, |m, x, out| m.margins_into(x, out))
    }

    /// A classifier's predicted class per row, as an index into `classes`.
    fn predict_class(&self, rows: Vec<Vec<f64>>) -> PyResult<Vec<usize>> {
        let mut scratch = vec![0.0; self.model.n_outputs()];
        rows.iter()
            .map(|x| self.model.predict_class(x, &mut scratch))
            .collect::<Result<_, _>>()
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

impl PyTreeModel {
    fn each(
        &self,
        rows: Vec<Vec<f64>>,
        f: impl Fn(&rove_model::TreeModel, &[f64], &mut [f64]) -> Result<(), rove_model::ModelError>,
    ) -> PyResult<Vec<Vec<f64>>> {
        rows.iter()
            .map(|x| {
                let mut out = vec![0.0; self.model.n_outputs()];
                f(&self.model, x, &mut out).map(|_| out)
            })
            .collect::<Result<_, _>>()
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// Wall time between two looks at Python's pending signals while the engine runs.
const SIGNAL_CHECK_WALL: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs `step(world, t)` up to `end` in slices of simulated time sized to take about
/// [`SIGNAL_CHECK_WALL`] each (doubling and halving as the run goes), without the GIL, and lets
/// Python run its signal handlers between slices: Ctrl-C stops any run promptly, however much
/// happens in a simulated second. Slicing does not change results: every event up to a slice's
/// end is processed before the next slice starts, as in one call.
fn sliced(
    py: Python<'_>,
    world: &mut World,
    end: u64,
    step: impl Fn(&mut World, u64) + Sync,
) -> PyResult<()> {
    let mut slice: u64 = 1_000_000; // 1 ms of simulated time to begin with
    loop {
        let now = world.now();
        let t = if end.saturating_sub(now) <= slice {
            end
        } else {
            now + slice
        };
        let started = std::time::Instant::now();
        py.allow_threads(|| step(&mut *world, t));
        if t >= end {
            return Ok(());
        }
        py.check_signals()?;
        let took = started.elapsed();
        if took < SIGNAL_CHECK_WALL / 2 {
            slice = slice.saturating_mul(2);
        } else if took > SIGNAL_CHECK_WALL * 2 {
            slice = (slice / 2).max(1);
        }
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A panic reaches Python as rove._core.PanicException carrying its message, which the CLI
    // prints as one line; Rust's default hook would print a second report (and a backtrace
    // hint) on stderr first.
    std::panic::set_hook(Box::new(|_| {}));
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("CC_NAMES", rove_world::cc_names())?;
    m.add("SYNTH_KINDS", trace::synth_kinds().to_vec())?;
    // The feature columns a controller's row holds (`features.parquet`), in order: the
    // sender's, then a watched link's.
    m.add(
        "SENDER_FEATURES",
        rove_world::control::SENDER_FEATURES.to_vec(),
    )?;
    m.add("LINK_FEATURES", rove_world::control::LINK_FEATURES.to_vec())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(parquet::write_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(summary_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse_toml_value, m)?)?;
    m.add_function(wrap_pyfunction!(synth_trace, m)?)?;
    m.add_function(wrap_pyfunction!(load_trace, m)?)?;
    m.add_function(wrap_pyfunction!(selection_phases, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_class::<PyTreeModel>()?;
    Ok(())
}
