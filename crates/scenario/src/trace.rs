//! Mahimahi traces: reading and writing trace files, and generating synthetic ones.
//!
//! A Mahimahi trace (as read by `mm-link`) is a text file with one non-negative integer per line:
//! a millisecond timestamp at which the link may deliver one 1500-byte packet (a *delivery
//! opportunity*). Several lines with the same timestamp are several opportunities in that
//! millisecond. Timestamps never decrease, and the trace repeats with a period equal to its last
//! timestamp, so the last timestamp must be greater than zero.
//!
//! Synthetic traces ([`synth`]) are what `rove trace synth KIND` writes and what a scenario's
//! `trace = "synth:KIND"` generates in memory:
//!
//! * `constant` (`rate`): opportunities evenly spread so that every window of the trace carries the
//!   rate: opportunity k (k = 1, 2, ...) at `ceil(k · 12000 bit / rate)` ms. At 12 Mbit/s that
//!   is one per millisecond, at timestamps 1, 2, 3, ...
//! * `steps` (`rates`, `period`): the same fluid construction with a rate that steps cyclically
//!   through `rates`, one step per `period`, starting with the first at time 0.
//! * `cellular` (`mean`, `min`, `max`, `sigma`, `coherence`, `outage_rate`, `outage`): a random
//!   capacity process; see [`synth`] for its exact definition.
//!
//! All synthetic timestamps lie in `1..=duration_ms` and the last one is always `duration_ms`, so
//! that the trace's period is the requested duration. Where the process itself put no opportunity
//! in the last millisecond, one is added there: a bias of at most one opportunity (1500 bytes) per
//! period, which keeps the period equal to the duration instead of silently shortening the run's
//! repeating pattern.
//!
//! A scenario's trace files are read through [`load_mahimahi_shared`], which parses a file once
//! per process for as long as its bytes stay the same (a sweep's worker runs many points over
//! the same traces).

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Poisson, StandardNormal};

use crate::error::ScenarioError;
use crate::parse::{check_keys, read_number, read_rate, read_time, ValueError};
use crate::spec::{Nanos, NS_PER_MS, TRACE_OPPORTUNITY_BYTES};
use crate::units::format_rate;

/// Bits one delivery opportunity carries.
const OPPORTUNITY_BITS: u64 = TRACE_OPPORTUNITY_BYTES as u64 * 8;

/// Largest synthetic trace generated, in opportunities (200 MB of timestamps). Beyond it a fixed
/// rate link says the same thing at no memory cost.
pub const MAX_SYNTH_OPPORTUNITIES: u64 = 50_000_000;

/// Largest `outage_rate` of `synth:cellular`: one outage per millisecond of up time.
const MAX_OUTAGE_RATE_PER_S: f64 = 1000.0;

/// The kinds `synth` generates.
pub fn synth_kinds() -> &'static [&'static str] {
    &["constant", "steps", "cellular"]
}

// ---------------------------------------------------------------------------------------------
// Reading and writing trace files
// ---------------------------------------------------------------------------------------------

/// Reads a Mahimahi trace file: millisecond timestamps, one per line.
///
/// Blank lines at the end and spaces around a number are accepted; anything else that is not a
/// non-negative integer, a timestamp smaller than the one before it, an empty trace or a trace
/// whose last timestamp is 0 (its period would be zero) is an error naming the file and the line.
pub fn load_mahimahi(path: &Path) -> Result<Vec<u32>, ScenarioError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        ScenarioError::new(&file, "file", format!("cannot read the trace file: {e}"))
    })?;
    parse_mahimahi(&bytes, &file)
}

/// Most bytes of trace files (their text plus their parsed timestamps) [`load_mahimahi_shared`]
/// keeps per process: a choice, room for the six public Mahimahi traces (10 MB) several times
/// over; a file larger than this is parsed each time.
pub const SHARED_TRACE_BYTES: usize = 64 << 20;

/// One parsed trace file kept by [`load_mahimahi_shared`].
struct SharedTrace {
    path: std::path::PathBuf,
    bytes: Vec<u8>,
    ops: Arc<Vec<u32>>,
}

impl SharedTrace {
    fn size(&self) -> usize {
        self.bytes.len() + 4 * self.ops.len()
    }
}

/// The trace files this process parsed, oldest first.
static SHARED_TRACES: Mutex<Vec<SharedTrace>> = Mutex::new(Vec::new());

/// [`load_mahimahi`], parsing each file once per process: a process that builds many scenarios
/// over the same traces (a sweep's worker running its points, a study checking its series) reads
/// the file every time but parses it only when its bytes differ from those parsed before, which
/// are compared in full, so a trace changed on disk is never served stale. Kept: the files most
/// recently parsed, up to [`SHARED_TRACE_BYTES`] in all.
pub fn load_mahimahi_shared(path: &Path) -> Result<Arc<Vec<u32>>, ScenarioError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        ScenarioError::new(&file, "file", format!("cannot read the trace file: {e}"))
    })?;
    let mut shared = SHARED_TRACES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = shared.iter().find(|t| t.path == path && t.bytes == bytes) {
        return Ok(Arc::clone(&t.ops));
    }
    let ops = Arc::new(parse_mahimahi(&bytes, &file)?);
    shared.retain(|t| t.path != path);
    let entry = SharedTrace {
        path: path.to_path_buf(),
        bytes,
        ops: Arc::clone(&ops),
    };
    if entry.size() <= SHARED_TRACE_BYTES {
        let mut total: usize = shared.iter().map(SharedTrace::size).sum::<usize>() + entry.size();
        while total > SHARED_TRACE_BYTES {
            total -= shared.remove(0).size();
        }
        shared.push(entry);
    }
    Ok(ops)
}

/// Parses the contents of a Mahimahi trace; `file` names it in errors. One pass over the bytes,
/// no allocation per line.
pub fn parse_mahimahi(bytes: &[u8], file: &str) -> Result<Vec<u32>, ScenarioError> {
    let line_count = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let mut ops: Vec<u32> = Vec::with_capacity(line_count);
    let mut first_blank_line: Option<usize> = None;
    for (index, raw_line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = index + 1;
        let line = raw_line.trim_ascii();
        if line.is_empty() {
            first_blank_line.get_or_insert(line_no);
            continue;
        }
        if let Some(blank) = first_blank_line {
            return Err(ScenarioError::new(
                file,
                format!("line {blank}"),
                "blank line inside the trace; only trailing blank lines are accepted",
            ));
        }
        let timestamp = parse_timestamp(line).map_err(|why| {
            ScenarioError::new(
                file,
                format!("line {line_no}"),
                format!(
                    "expected a non-negative integer millisecond timestamp, got {:?}{why}",
                    shorten(line)
                ),
            )
        })?;
        if let Some(&previous) = ops.last() {
            if timestamp < previous {
                return Err(ScenarioError::new(
                    file,
                    format!("line {line_no}"),
                    format!(
                        "timestamp {timestamp} is smaller than the one before it ({previous}); \
                         timestamps must not decrease"
                    ),
                ));
            }
        }
        ops.push(timestamp);
    }
    match ops.last() {
        None => Err(ScenarioError::new(
            file,
            "line 1",
            "the trace holds no timestamps",
        )),
        Some(0) => Err(ScenarioError::new(
            file,
            format!("line {}", ops.len()),
            "the last timestamp is 0, so the trace would repeat with a period of zero; \
             the last timestamp must be > 0",
        )),
        Some(_) => Ok(ops),
    }
}

/// Parses an ASCII decimal u32; the error is a hint to append to the message.
fn parse_timestamp(digits: &[u8]) -> Result<u32, &'static str> {
    let mut value: u32 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return Err("");
        }
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u32::from(b - b'0')))
            .ok_or(" (larger than 4294967295)")?;
    }
    Ok(value)
}

/// A line for an error message: lossy UTF-8, at most 40 characters.
fn shorten(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.into_owned(),
    }
}

/// Writes a trace in Mahimahi format, one timestamp per line.
pub fn write_mahimahi(ops: &[u32], w: impl Write) -> io::Result<()> {
    let mut out = BufWriter::new(w);
    for op in ops {
        writeln!(out, "{op}")?;
    }
    out.flush()
}

// ---------------------------------------------------------------------------------------------
// Synthetic traces
// ---------------------------------------------------------------------------------------------

/// Generates a synthetic trace of `duration_ms` milliseconds.
///
/// `params` holds the kind's parameters as TOML values (rates and times as strings with units,
/// `sigma` and `outage_rate` as numbers); missing ones take their defaults (see the format
/// reference). Errors name `synth:KIND` as the file and `trace_params.KEY` as the location; a
/// scenario caller prefixes the link's key path.
///
/// The `cellular` process, step by step (one step per millisecond, m = 0, 1, ...):
///
/// * The log-capacity `x` is an AR(1) (discretised Ornstein-Uhlenbeck) process with correlation
///   time `coherence` and stationary standard deviation `sigma`: `x₀ ~ N(0, sigma²)`,
///   `x_{m+1} = a·x_m + sigma·√(1−a²)·z`, `a = exp(−1 ms / coherence)`, `z ~ N(0, 1)`.
/// * The capacity is `clamp(median · eˣ, min, max)`.
/// * Outages alternate with up periods: up periods are exponential with mean `1/outage_rate`
///   seconds (a Poisson arrival process while the link is up), outages exponential with mean
///   `outage`. A millisecond whose start lies in an outage has capacity zero. The long-run up
///   fraction is `1 / (1 + outage_rate · outage)`.
/// * The number of opportunities of millisecond m is Poisson with mean
///   `capacity · 1 ms / 12000 bit`; they get timestamp `m + 1`.
///
/// Random numbers come from ChaCha8 seeded with `seed`, so a seed gives the same trace everywhere.
pub fn synth(
    kind: &str,
    params: &toml::Table,
    duration_ms: u32,
    seed: u64,
) -> Result<Vec<u32>, ScenarioError> {
    let file = format!("synth:{kind}");
    let fail = |e: ValueError| ScenarioError::new(&file, e.location, e.message);
    if !synth_kinds().contains(&kind) {
        return Err(ScenarioError::new(
            &file,
            "kind",
            format!(
                "unknown synthetic trace kind {kind:?}; kinds are: {}",
                synth_kinds().join(", ")
            ),
        ));
    }
    if duration_ms == 0 {
        return Err(ScenarioError::new(
            &file,
            "duration",
            "a synthetic trace needs a duration of at least 1ms",
        ));
    }
    match kind {
        "constant" => {
            let rate_bps = ConstantParams::read(params).map_err(fail)?;
            check_size(rate_bps, duration_ms, "rate").map_err(fail)?;
            Ok(fluid_trace(duration_ms, |_| {
                u128::from(rate_bps) * u128::from(NS_PER_MS)
            }))
        }
        "steps" => {
            let steps = StepsParams::read(params).map_err(fail)?;
            let peak = steps.rates_bps.iter().copied().max().unwrap_or(0);
            check_size(peak, duration_ms, "rates").map_err(fail)?;
            Ok(fluid_trace(duration_ms, |ms| steps.capacity_in_ms(ms)))
        }
        _ => {
            let cell = CellularParams::read(params).map_err(fail)?;
            check_size(cell.max_bps as u64, duration_ms, "max").map_err(fail)?;
            Ok(cell.generate(duration_ms, seed))
        }
    }
}

/// Rejects parameters that would generate more than [`MAX_SYNTH_OPPORTUNITIES`].
fn check_size(peak_bps: u64, duration_ms: u32, key: &str) -> Result<(), ValueError> {
    let estimate =
        u128::from(peak_bps) * u128::from(duration_ms) / 1000 / u128::from(OPPORTUNITY_BITS);
    if estimate > u128::from(MAX_SYNTH_OPPORTUNITIES) {
        return Err(ValueError::new(
            format!("trace_params.{key}"),
            format!(
                "{} over {duration_ms}ms would make a trace of about {estimate} opportunities, \
                 more than the {MAX_SYNTH_OPPORTUNITIES} supported; use a fixed-rate link \
                 (rate = ...) or a shorter duration",
                format_rate(peak_bps)
            ),
        ));
    }
    Ok(())
}

/// Capacity accumulated per opportunity, in bit·ns (bits × 10⁹, so rate_bps × ns adds up exactly).
const OPPORTUNITY_CREDIT: u128 = OPPORTUNITY_BITS as u128 * 1_000_000_000;

/// Turns a deterministic capacity into opportunities: `capacity(m)` is the capacity of millisecond
/// `[m, m+1)` in bit·ns; an opportunity is emitted at timestamp `m + 1` each time the accumulated
/// capacity reaches another 12000 bits. For a constant rate this puts opportunity k at
/// `ceil(k · 12000 / rate)` ms exactly.
fn fluid_trace(duration_ms: u32, mut capacity: impl FnMut(u32) -> u128) -> Vec<u32> {
    let mut ops = Vec::new();
    let mut credit: u128 = 0;
    for ms in 0..duration_ms {
        credit += capacity(ms);
        while credit >= OPPORTUNITY_CREDIT {
            ops.push(ms + 1);
            credit -= OPPORTUNITY_CREDIT;
        }
    }
    end_at(ops, duration_ms)
}

/// Makes `duration_ms` the last timestamp, adding one opportunity there if needed.
fn end_at(mut ops: Vec<u32>, duration_ms: u32) -> Vec<u32> {
    if ops.last() != Some(&duration_ms) {
        ops.push(duration_ms);
    }
    ops
}

/// Reads a rate parameter, > 0, with a default.
fn positive_rate(params: &toml::Table, key: &str, default_bps: u64) -> Result<u64, ValueError> {
    let rate = optional(params, key, read_rate)?.unwrap_or(default_bps);
    if rate == 0 {
        return Err(param_error(key, "must be greater than 0"));
    }
    Ok(rate)
}

/// Reads `trace_params.KEY` with `read`, or `None` when absent.
fn optional<T>(
    params: &toml::Table,
    key: &str,
    read: impl Fn(&toml::Value) -> Result<T, String>,
) -> Result<Option<T>, ValueError> {
    params
        .get(key)
        .map(|v| read(v).map_err(|m| param_error(key, m)))
        .transpose()
}

fn param_error(key: &str, message: impl Into<String>) -> ValueError {
    ValueError::new(format!("trace_params.{key}"), message)
}

/// Parameters of `synth:constant`.
struct ConstantParams;

impl ConstantParams {
    fn read(params: &toml::Table) -> Result<u64, ValueError> {
        check_keys(params, "trace_params", &["rate"])?;
        positive_rate(params, "rate", 12_000_000)
    }
}

/// Parameters of `synth:steps`.
struct StepsParams {
    rates_bps: Vec<u64>,
    period_ns: Nanos,
}

impl StepsParams {
    fn read(params: &toml::Table) -> Result<Self, ValueError> {
        check_keys(params, "trace_params", &["rates", "period"])?;
        let rates_bps = match params.get("rates") {
            None => vec![6_000_000, 24_000_000],
            Some(value) => read_rate_list(value)?,
        };
        let period_ns = optional(params, "period", read_time)?.unwrap_or(2_000_000_000);
        if period_ns < NS_PER_MS {
            return Err(param_error(
                "period",
                "must be at least 1ms (traces have millisecond resolution)",
            ));
        }
        Ok(StepsParams {
            rates_bps,
            period_ns,
        })
    }

    /// Capacity of millisecond `[ms, ms+1)` in bit·ns; a step boundary inside it splits it.
    fn capacity_in_ms(&self, ms: u32) -> u128 {
        let mut t = u64::from(ms) * NS_PER_MS;
        let end = t + NS_PER_MS;
        let mut credit = 0u128;
        while t < end {
            let step = t / self.period_ns;
            let step_end = end.min((step + 1).saturating_mul(self.period_ns));
            let rate = self.rates_bps[(step % self.rates_bps.len() as u64) as usize];
            credit += u128::from(rate) * u128::from(step_end - t);
            t = step_end;
        }
        credit
    }
}

/// `rates = ["6Mbps", "24Mbps"]`: a non-empty list of rates ≥ 0, at least one of them > 0.
fn read_rate_list(value: &toml::Value) -> Result<Vec<u64>, ValueError> {
    let Some(items) = value.as_array() else {
        return Err(param_error(
            "rates",
            r#"expected a list of rates like ["6Mbps", "24Mbps"]"#,
        ));
    };
    if items.is_empty() {
        return Err(param_error("rates", "must hold at least one rate"));
    }
    let rates = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            read_rate(item).map_err(|m| ValueError::new(format!("trace_params.rates[{i}]"), m))
        })
        .collect::<Result<Vec<u64>, ValueError>>()?;
    if rates.iter().all(|&r| r == 0) {
        return Err(param_error(
            "rates",
            "at least one rate must be greater than 0",
        ));
    }
    Ok(rates)
}

/// Parameters of `synth:cellular` (see [`synth`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellularParams {
    /// Median capacity before clamping and outages, bit/s (key `median`; the mean of the
    /// log-normal process is `median·exp(sigma²/2)`, higher, and clamping and outages move it).
    pub median_bps: f64,
    pub min_bps: f64,
    pub max_bps: f64,
    /// Standard deviation of the log-capacity.
    pub sigma: f64,
    /// Correlation time of the log-capacity, in ms.
    pub coherence_ms: f64,
    /// Outages per second of up time.
    pub outage_rate_per_s: f64,
    /// Mean outage length, in ms.
    pub outage_ms: f64,
}

impl Default for CellularParams {
    /// The defaults of the format reference.
    fn default() -> Self {
        CellularParams {
            median_bps: 12e6,
            min_bps: 0.5e6,
            max_bps: 40e6,
            sigma: 0.5,
            coherence_ms: 500.0,
            outage_rate_per_s: 0.02,
            outage_ms: 300.0,
        }
    }
}

impl CellularParams {
    const KEYS: &'static [&'static str] = &[
        "median",
        "min",
        "max",
        "sigma",
        "coherence",
        "outage_rate",
        "outage",
    ];

    /// Reads and checks `synth:cellular` parameters (errors as [`synth`] reports them).
    pub fn from_table(params: &toml::Table) -> Result<Self, ScenarioError> {
        Self::read(params).map_err(|e| ScenarioError::new("synth:cellular", e.location, e.message))
    }

    /// Reads and checks the parameters: `0 ≤ min ≤ median ≤ max`, `median > 0`, `sigma ≥ 0`,
    /// `coherence > 0`, `0 ≤ outage_rate ≤ 1000`, `outage ≥ 1ms`.
    pub(crate) fn read(params: &toml::Table) -> Result<Self, ValueError> {
        if params.contains_key("mean") {
            // The key was called `mean` until it was found to be the median (`mean = 20Mbps`
            // gave traces averaging 25.5 Mbit/s).
            return Err(param_error(
                "mean",
                "renamed to `median`: the value is the capacity's median before clamping and \
                 outages, not its mean (`rove trace synth` prints a trace's mean rate)",
            ));
        }
        check_keys(params, "trace_params", Self::KEYS)?;
        let d = CellularParams::default();
        let rate = |key: &str, default: f64| -> Result<f64, ValueError> {
            Ok(optional(params, key, read_rate)?.map_or(default, |r| r as f64))
        };
        let ms = |key: &str, default: f64| -> Result<f64, ValueError> {
            Ok(optional(params, key, read_time)?.map_or(default, |ns| ns as f64 / 1e6))
        };
        let number = |key: &str, default: f64| -> Result<f64, ValueError> {
            let value = optional(params, key, read_number)?.unwrap_or(default);
            if value < 0.0 {
                return Err(param_error(key, format!("must be ≥ 0, got {value}")));
            }
            Ok(value)
        };
        let p = CellularParams {
            median_bps: rate("median", d.median_bps)?,
            min_bps: rate("min", d.min_bps)?,
            max_bps: rate("max", d.max_bps)?,
            sigma: number("sigma", d.sigma)?,
            coherence_ms: ms("coherence", d.coherence_ms)?,
            outage_rate_per_s: number("outage_rate", d.outage_rate_per_s)?,
            outage_ms: ms("outage", d.outage_ms)?,
        };
        if p.median_bps <= 0.0 {
            return Err(param_error("median", "must be greater than 0"));
        }
        if p.min_bps > p.median_bps {
            return Err(param_error(
                "min",
                format!(
                    "must not exceed median ({})",
                    format_rate(p.median_bps as u64)
                ),
            ));
        }
        if p.max_bps < p.median_bps {
            return Err(param_error(
                "max",
                format!(
                    "must not be below median ({})",
                    format_rate(p.median_bps as u64)
                ),
            ));
        }
        if p.coherence_ms <= 0.0 {
            return Err(param_error("coherence", "must be greater than 0"));
        }
        if p.outage_ms < 1.0 {
            return Err(param_error(
                "outage",
                "must be at least 1ms (traces have millisecond resolution)",
            ));
        }
        if p.outage_rate_per_s > MAX_OUTAGE_RATE_PER_S {
            return Err(param_error(
                "outage_rate",
                format!("must be at most {MAX_OUTAGE_RATE_PER_S} per second (one per millisecond)"),
            ));
        }
        Ok(p)
    }

    /// Runs the process for `duration_ms` milliseconds.
    fn generate(&self, duration_ms: u32, seed: u64) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let a = (-1.0 / self.coherence_ms).exp();
        let innovation = self.sigma * (1.0 - a * a).sqrt();
        let mut log_capacity = self.sigma * rng.sample::<f64, _>(StandardNormal);
        let mut outages = OutageProcess::new(self.outage_rate_per_s, self.outage_ms, &mut rng);
        let expected = self.median_bps * f64::from(duration_ms) / 1000.0 / OPPORTUNITY_BITS as f64;
        let mut ops = Vec::with_capacity(expected.min(MAX_SYNTH_OPPORTUNITIES as f64) as usize + 1);
        for ms in 0..duration_ms {
            let down = outages.is_down(f64::from(ms), &mut rng);
            let capacity_bps =
                (self.median_bps * log_capacity.exp()).clamp(self.min_bps, self.max_bps);
            if !down {
                let count = poisson(capacity_bps / 1000.0 / OPPORTUNITY_BITS as f64, &mut rng);
                ops.extend(std::iter::repeat_n(ms + 1, count));
            }
            log_capacity = a * log_capacity + innovation * rng.sample::<f64, _>(StandardNormal);
        }
        end_at(ops, duration_ms)
    }

    /// Long-run mean capacity in bit/s implied by the parameters: the mean of the clamped
    /// log-normal (by numerical integration) times the up fraction `1 / (1 + outage_rate·outage)`.
    pub fn expected_mean_bps(&self) -> f64 {
        let up_fraction = 1.0 / (1.0 + self.outage_rate_per_s * self.outage_ms / 1000.0);
        up_fraction * self.clamped_lognormal_mean()
    }

    /// E[clamp(median·e^{sigma·Z}, min, max)] for Z ~ N(0,1), by Simpson's rule over z in [-10, 10].
    fn clamped_lognormal_mean(&self) -> f64 {
        const STEPS: usize = 20_000; // even
        let (lo, hi) = (-10.0f64, 10.0f64);
        let h = (hi - lo) / STEPS as f64;
        let f = |z: f64| {
            let density = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
            (self.median_bps * (self.sigma * z).exp()).clamp(self.min_bps, self.max_bps) * density
        };
        let mut sum = f(lo) + f(hi);
        for i in 1..STEPS {
            let weight = if i % 2 == 1 { 4.0 } else { 2.0 };
            sum += weight * f(lo + i as f64 * h);
        }
        sum * h / 3.0
    }
}

/// Alternating up periods (exponential, mean 1/rate) and outages (exponential, mean `outage_ms`),
/// in milliseconds since the start of the trace.
struct OutageProcess {
    up_time: Option<Exp<f64>>,
    down_time: Option<Exp<f64>>,
    /// Start of the next outage (infinite when outages are off).
    next_start_ms: f64,
    /// End of the current or last outage.
    end_ms: f64,
}

impl OutageProcess {
    fn new(rate_per_s: f64, outage_ms: f64, rng: &mut ChaCha8Rng) -> Self {
        let up_time = Exp::new(rate_per_s / 1000.0)
            .ok()
            .filter(|_| rate_per_s > 0.0);
        let down_time = Exp::new(1.0 / outage_ms).ok();
        let next_start_ms = up_time.map_or(f64::INFINITY, |d| d.sample(rng));
        OutageProcess {
            up_time,
            down_time,
            next_start_ms,
            end_ms: f64::NEG_INFINITY,
        }
    }

    /// Whether time `t_ms` (visited in increasing order) lies in an outage.
    fn is_down(&mut self, t_ms: f64, rng: &mut ChaCha8Rng) -> bool {
        while t_ms >= self.next_start_ms {
            let (Some(up), Some(down)) = (self.up_time, self.down_time) else {
                break;
            };
            self.end_ms = self.next_start_ms + down.sample(rng);
            self.next_start_ms = self.end_ms + up.sample(rng);
        }
        t_ms < self.end_ms
    }
}

/// One Poisson draw with the given mean (0 for a mean that is not positive and finite).
fn poisson(mean: f64, rng: &mut ChaCha8Rng) -> usize {
    match Poisson::new(mean) {
        Ok(dist) if mean > 0.0 => {
            let draw: f64 = dist.sample(rng);
            draw as usize
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().expect("test TOML")
    }

    #[test]
    fn parses_a_trace_with_trailing_blank_lines_and_crlf() {
        let ops = parse_mahimahi(b"0\n0\n3\r\n 7 \n10\n\n\n", "t").unwrap();
        assert_eq!(ops, vec![0, 0, 3, 7, 10]);
        assert_eq!(parse_mahimahi(b"5", "t").unwrap(), vec![5]);
    }

    #[test]
    fn trace_errors_name_the_file_and_line() {
        let e = parse_mahimahi(b"1\n2\nx3\n", "a.down").unwrap_err();
        assert_eq!((e.file.as_str(), e.location.as_str()), ("a.down", "line 3"));
        assert!(
            e.message.contains("non-negative integer") && e.message.contains("\"x3\""),
            "{e}"
        );

        let e = parse_mahimahi(b"1\n-2\n", "t").unwrap_err();
        assert_eq!(e.location, "line 2");

        let e = parse_mahimahi(b"1\n2.5\n", "t").unwrap_err();
        assert_eq!(e.location, "line 2");

        let e = parse_mahimahi(b"1\n5\n4\n", "t").unwrap_err();
        assert_eq!(e.location, "line 3");
        assert!(
            e.message.contains("smaller than the one before it (5)"),
            "{e}"
        );

        let e = parse_mahimahi(b"\n\n", "t").unwrap_err();
        assert!(e.message.contains("no timestamps"), "{e}");
        let e = parse_mahimahi(b"", "t").unwrap_err();
        assert!(e.message.contains("no timestamps"), "{e}");

        let e = parse_mahimahi(b"0\n0\n", "t").unwrap_err();
        assert_eq!(e.location, "line 2");
        assert!(e.message.contains("period of zero"), "{e}");

        let e = parse_mahimahi(b"1\n\n2\n", "t").unwrap_err();
        assert_eq!(e.location, "line 2");
        assert!(e.message.contains("blank line"), "{e}");

        let e = parse_mahimahi(b"1\n99999999999\n", "t").unwrap_err();
        assert!(e.message.contains("larger than"), "{e}");

        let e = parse_mahimahi(&[b'1', b'\n', 0xff, 0xfe, b'\n'], "t").unwrap_err();
        assert_eq!(e.location, "line 2");
    }

    #[test]
    fn unreadable_file_is_an_error() {
        let e = load_mahimahi(Path::new("/nonexistent/rove/x.down")).unwrap_err();
        assert_eq!(e.file, "/nonexistent/rove/x.down");
        assert!(e.message.contains("cannot read"), "{e}");
    }

    #[test]
    fn write_then_read_round_trips() {
        let ops = vec![0, 1, 1, 5, 1000];
        let mut out = Vec::new();
        write_mahimahi(&ops, &mut out).unwrap();
        assert_eq!(out, b"0\n1\n1\n5\n1000\n");
        assert_eq!(parse_mahimahi(&out, "t").unwrap(), ops);
    }

    #[test]
    fn constant_12mbps_is_one_opportunity_per_ms() {
        let ops = synth("constant", &table(r#"rate = "12Mbps""#), 1000, 1).unwrap();
        assert_eq!(ops, (1..=1000).collect::<Vec<u32>>());
        // The default rate is 12 Mbps too.
        assert_eq!(
            synth("constant", &toml::Table::new(), 50, 1).unwrap(),
            (1..=50).collect::<Vec<_>>()
        );
    }

    #[test]
    fn constant_rates_are_exact_over_the_period() {
        // 6 Mbps: one opportunity every 2 ms.
        let ops = synth("constant", &table(r#"rate = "6Mbps""#), 10, 1).unwrap();
        assert_eq!(ops, vec![2, 4, 6, 8, 10]);
        // 30 Mbps: 2.5 per ms, ceil(k / 2.5): 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, ...
        let ops = synth("constant", &table(r#"rate = "30Mbps""#), 1000, 1).unwrap();
        assert_eq!(ops.len(), 2500);
        assert_eq!(&ops[..7], &[1, 1, 2, 2, 2, 3, 3]);
        // 5 Mbps over 5 ms: opportunities at ceil(2.4 k) = 3 (k=1), 5 (k=2): exact, nothing added.
        let ops = synth("constant", &table(r#"rate = "5Mbps""#), 5, 1).unwrap();
        assert_eq!(ops, vec![3, 5]);
        // 5 Mbps over 4 ms: the last opportunity would be at 3, so one is added at 4.
        let ops = synth("constant", &table(r#"rate = "5Mbps""#), 4, 1).unwrap();
        assert_eq!(ops, vec![3, 4]);
    }

    #[test]
    fn steps_follow_the_rates_cyclically() {
        let params = table(
            r#"rates = ["12Mbps", "24Mbps"]
period = "10ms""#,
        );
        let ops = synth("steps", &params, 40, 1).unwrap();
        let per_ms = |ms: u32| ops.iter().filter(|&&t| t == ms).count();
        assert_eq!((1..=10).map(per_ms).collect::<Vec<_>>(), vec![1; 10]);
        assert_eq!((11..=20).map(per_ms).collect::<Vec<_>>(), vec![2; 10]);
        assert_eq!((21..=30).map(per_ms).collect::<Vec<_>>(), vec![1; 10]);
        assert_eq!(ops.len(), 60);
        // Defaults: 6 and 24 Mbps, 2 s each: (6 + 24) Mbps × 2 s / 12000 bit.
        let ops = synth("steps", &toml::Table::new(), 4000, 1).unwrap();
        assert_eq!(ops.len(), 5000);
        assert_eq!(*ops.last().unwrap(), 4000);
    }

    #[test]
    fn steps_split_a_millisecond_at_a_boundary() {
        // 1.5 ms steps of 12 and 0 Mbps: ms [1, 2) is half at 12, half at 0 Mbps.
        let params = table(
            r#"rates = ["12Mbps", "0Mbps"]
period = "1.5ms""#,
        );
        let ops = synth("steps", &params, 6, 1).unwrap();
        // Capacity per ms in opportunities: 1, 0.5, 0, 1, 0.5, 0 → cumulative 1, 1.5, 1.5, 2.5, 3, 3.
        assert_eq!(ops, vec![1, 4, 5, 6]);
    }

    #[test]
    fn cellular_is_deterministic_per_seed() {
        let params = toml::Table::new();
        let a = synth("cellular", &params, 20_000, 7).unwrap();
        let b = synth("cellular", &params, 20_000, 7).unwrap();
        let c = synth("cellular", &params, 20_000, 8).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(*a.last().unwrap(), 20_000);
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        assert!(a[0] >= 1);
    }

    #[test]
    fn cellular_mean_matches_its_parameters() {
        let duration_ms = 600_000;
        for (text, seed) in [
            ("", 1u64),
            (
                r#"median = "20Mbps"
sigma = 1.0
min = "1Mbps"
max = "50Mbps"
outage_rate = 0.1
outage = "1s""#,
                2,
            ),
        ] {
            let params = table(text);
            let expected_bps = CellularParams::read(&params).unwrap().expected_mean_bps();
            let ops = synth("cellular", &params, duration_ms, seed).unwrap();
            let measured_bps =
                ops.len() as f64 * OPPORTUNITY_BITS as f64 / (f64::from(duration_ms) / 1000.0);
            let ratio = measured_bps / expected_bps;
            assert!(
                (0.85..=1.15).contains(&ratio),
                "params {text:?}: measured {measured_bps:.0} bps, expected {expected_bps:.0} bps"
            );
        }
    }

    #[test]
    fn cellular_mean_key_is_refused_as_renamed_to_median() {
        // `mean = 20Mbps` made traces averaging 25.5 Mbit/s: the value was the median.
        let e = CellularParams::read(&table(r#"mean = "20Mbps""#)).unwrap_err();
        assert_eq!(e.location, "trace_params.mean");
        assert!(e.message.contains("renamed to `median`"), "{}", e.message);
        let p = CellularParams::read(&table(r#"median = "20Mbps""#)).unwrap();
        assert_eq!(p.median_bps, 20e6);
    }

    #[test]
    fn cellular_expectation_is_right_without_clamping() {
        // Lognormal mean: median × exp(sigma² / 2).
        let p = CellularParams {
            min_bps: 0.0,
            max_bps: 1e30,
            outage_rate_per_s: 0.0,
            ..CellularParams::default()
        };
        let exact = 12e6 * (0.125f64).exp();
        assert!((p.expected_mean_bps() / exact - 1.0).abs() < 1e-6);
    }

    #[test]
    fn cellular_outages_silence_the_link() {
        // Outages of 1 s on average, 1 per second of up time: about half the time is down.
        let params = table(
            r#"outage_rate = 1
outage = "1s"
sigma = 0"#,
        );
        let ops = synth("cellular", &params, 100_000, 3).unwrap();
        let busy_ms = {
            let mut seen = ops.clone();
            seen.dedup();
            seen.len()
        };
        assert!((35_000..65_000).contains(&busy_ms), "{busy_ms}");
    }

    #[test]
    fn synth_parameter_errors_name_the_parameter() {
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "constant",
                r#"rate = "0Mbps""#,
                "trace_params.rate",
                "greater than 0",
            ),
            (
                "constant",
                r#"rate = 12"#,
                "trace_params.rate",
                "expected a rate",
            ),
            (
                "constant",
                r#"speed = "1Mbps""#,
                "trace_params.speed",
                "accepted keys: rate",
            ),
            (
                "steps",
                r#"rates = []"#,
                "trace_params.rates",
                "at least one",
            ),
            (
                "steps",
                r#"rates = ["1Mbps", "x"]"#,
                "trace_params.rates[1]",
                "expected a rate",
            ),
            (
                "steps",
                r#"rates = ["0bps"]"#,
                "trace_params.rates",
                "greater than 0",
            ),
            (
                "steps",
                r#"period = "0.5ms""#,
                "trace_params.period",
                "at least 1ms",
            ),
            ("cellular", r#"sigma = -1"#, "trace_params.sigma", "≥ 0"),
            (
                "cellular",
                r#"sigma = "big""#,
                "trace_params.sigma",
                "expected a number",
            ),
            (
                "cellular",
                r#"median = "0Mbps""#,
                "trace_params.median",
                "greater than 0",
            ),
            (
                "cellular",
                r#"min = "20Mbps""#,
                "trace_params.min",
                "must not exceed median",
            ),
            (
                "cellular",
                r#"max = "1Mbps""#,
                "trace_params.max",
                "must not be below median",
            ),
            (
                "cellular",
                r#"coherence = "0s""#,
                "trace_params.coherence",
                "greater than 0",
            ),
            (
                "cellular",
                r#"outage = "0s""#,
                "trace_params.outage",
                "at least 1ms",
            ),
            (
                "cellular",
                r#"outage_rate = 5000"#,
                "trace_params.outage_rate",
                "at most 1000",
            ),
            (
                "cellular",
                r#"medain = "1Mbps""#,
                "trace_params.medain",
                "did you mean \"median\"",
            ),
            (
                "constant",
                r#"rate = "100Gbps""#,
                "trace_params.rate",
                "fixed-rate link",
            ),
        ];
        for &(kind, text, location, phrase) in cases {
            let e = synth(kind, &table(text), 60_000, 1).unwrap_err();
            assert_eq!(e.file, format!("synth:{kind}"), "{text}");
            assert_eq!(e.location, location, "{text}: {e}");
            assert!(e.message.contains(phrase), "{text}: {e}");
        }
        let e = synth("wifi", &toml::Table::new(), 10, 1).unwrap_err();
        assert!(e.message.contains("constant, steps, cellular"), "{e}");
        let e = synth("constant", &toml::Table::new(), 0, 1).unwrap_err();
        assert_eq!(e.location, "duration");
    }

    #[test]
    fn a_shared_trace_is_parsed_once_and_again_when_its_file_changes() {
        let dir = std::env::temp_dir().join(format!("rove-shared-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.down");
        std::fs::write(&path, "1\n2\n2\n5\n").unwrap();
        let a = load_mahimahi_shared(&path).unwrap();
        let b = load_mahimahi_shared(&path).unwrap();
        assert_eq!(*a, [1, 2, 2, 5]);
        assert!(
            Arc::ptr_eq(&a, &b),
            "the second load is the first one's parse"
        );
        // Same length, other contents: parsed again, never the stale timestamps.
        std::fs::write(&path, "1\n3\n3\n5\n").unwrap();
        let c = load_mahimahi_shared(&path).unwrap();
        assert_eq!(*c, [1, 3, 3, 5]);
        assert!(!Arc::ptr_eq(&a, &c));
        // A bad file is an error each time (errors are not kept).
        std::fs::write(&path, "1\nx\n").unwrap();
        assert!(load_mahimahi_shared(&path).is_err());
        assert!(load_mahimahi_shared(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn real_trace_loads_when_present() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces/mahimahi/TMobile-LTE-short.down");
        if !path.exists() {
            println!("skipped: {} is absent", path.display());
            return;
        }
        let ops = load_mahimahi(&path).unwrap();
        assert!(ops.len() > 100_000);
        assert!(ops.windows(2).all(|w| w[0] <= w[1]));
        assert!(*ops.last().unwrap() > 0);
    }
}
