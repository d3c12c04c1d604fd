//! An LTE cell's own keys (`[links.NAME]` with `kind = "lte"` and its `[links.NAME.ues.UE]`
//! tables): checked once when the scenario is parsed ([`check`], through the registry's
//! [`LinkKind`]), read again infallibly when the model is built.

use super::super::radio::{bad, read_direction, read_distance, read_speed, read_unit};
use super::amc;
use super::channel::{self, Profile};
use super::request_grant::SrBsrParams;
use rove_scenario::parse::join;
use rove_scenario::units::{parse_rate, parse_size, parse_time};
use rove_scenario::{LinkKind, ModelShape};
use toml::{Table, Value};

/// The common link key an LTE cell takes: `delay` (after the air, both ways: the core network
/// behind the eNodeB).
const COMMON_KEYS: &[&str] = &["delay"];
const OWN_KEYS: &[&str] = &[
    "prbs",
    "scheduler",
    "pf_window",
    "rlc_buffer",
    "harq_max_tx",
    "bler_sigma",
    "cqi_period",
    "cqi_delay",
    "uplink",
    "grant_period",
    "sr_period",
    "grant_delay",
    "pusch_delay",
    "sr_grant",
    "bsr_grant_interval",
    "uplink_rate",
    "uplink_bler",
    "uplink_harq_max",
    "uplink_in_order",
    "tx_power",
    "noise_figure",
    "carrier",
    "cells",
    "cell_spacing",
    "handover_hysteresis",
    "handover_interruption",
    "handover_rlc",
    "sample_interval",
    "ues",
];
const UE_KEYS: &[&str] = &[
    "snr",
    "distance",
    "speed",
    "direction",
    "fading",
    "doppler",
    "mcs",
];

/// What the scenario parser knows of `kind = "lte"`.
pub const KIND: LinkKind = LinkKind {
    kind: "lte",
    common_keys: Some(COMMON_KEYS),
    own_keys: OWN_KEYS,
    check,
};

/// `rlc_buffer = "shallow"`: 120 kB, about 80 packets of 1500 B (seed-002 §4.2 PA2.2: operator
/// O3's queue of about 80 packets).
pub const SHALLOW_BYTES: u64 = 120_000;
/// `rlc_buffer = "deep"` (the default): 7 MB (seed-003 Table 3.2: the LTE buffer implied by its
/// testbed, 6.9-7.6 MB; seed-002's "long" queue has no size, only that it never empties).
pub const DEEP_BYTES: u64 = 7_000_000;
/// Default `pf_window`: 1000 TTIs (Jalali, Padovani and Pankaj, "Data throughput of CDMA-HDR",
/// VTC 2000: t_c = 1000 slots).
const DEFAULT_PF_WINDOW_NS: u64 = 1_000_000_000;
/// [GAP] Default `harq_max_tx`: 4 transmissions of a transport block (the initial one and 3
/// retransmissions); the standard leaves the downlink's to the eNodeB.
const DEFAULT_HARQ_MAX_TX: u32 = 4;
/// [GAP] Default `cqi_period`: 5 ms (one of TS 36.213 Table 7.2.2-1A's periods, N_pd).
const DEFAULT_CQI_PERIOD_NS: u64 = 5_000_000;
/// Default `cqi_delay`: 4 ms, the CSI reference resource's n_CQI_ref = 4 for FDD (TS 36.213
/// 7.2.3): the report the eNodeB uses describes the channel 4 ms earlier.
const DEFAULT_CQI_DELAY_NS: u64 = 4_000_000;
/// [GAP] Default `uplink_harq_max`: 4 transmissions of an uplink transport block, as the
/// downlink's `harq_max_tx` (RRC configures the UE's maxHARQ-Tx, TS 36.321 5.4.2.1, one of
/// TS 36.331's n1-n8, n10, n12, n16, n20, n24, n28).
const DEFAULT_UPLINK_HARQ_MAX: u32 = 4;
/// [GAP] Default `grant_period`: 5 ms (an SR periodicity of TS 36.213 Table 10.1.5-1).
const DEFAULT_GRANT_PERIOD_NS: u64 = 5_000_000;
/// The `uplink = "sr_bsr"` keys (they apply to that uplink only).
const SR_BSR_KEYS: &[&str] = &[
    "sr_period",
    "grant_delay",
    "pusch_delay",
    "sr_grant",
    "bsr_grant_interval",
];
/// `sr_period`'s accepted values, ms: TS 36.213 Table 10.1.5-1's SR periodicities.
const SR_PERIODS_MS: &[u64] = &[1, 2, 5, 10, 20, 40, 80];
/// [GAP] Default `sr_period`: 10 ms, one of Table 10.1.5-1's periodicities (the operator
/// configures it per UE, `sr-ConfigIndex`; 5, 10 and 20 ms are the common middle of the table).
const DEFAULT_SR_PERIOD_NS: u64 = 10_000_000;
/// [GAP] Default `grant_delay`: 4 ms from the TTI of an SR (or of the PUSCH carrying a BSR) to
/// the grant: the 1 ms of the SR and the eNodeB's 3 ms to decode it and schedule, as in the
/// ITU latency analysis (TR 36.912 Annex B.2); the eNodeB's processing is the vendor's.
const DEFAULT_GRANT_DELAY_NS: u64 = 4_000_000;
/// Default `pusch_delay`: 4 ms, a grant in subframe n is for PUSCH in n + 4 (TS 36.213 8.0,
/// FDD).
const DEFAULT_PUSCH_DELAY_NS: u64 = 4_000_000;
/// [GAP] Default `sr_grant`: 512 bytes, the grant srsRAN's scheduler gives a UE that sent an SR
/// (`SR_GRANT_BYTES`); the standard leaves its size to the eNodeB.
const DEFAULT_SR_GRANT_BYTES: u64 = 512;
/// [GAP] Default `bsr_grant_interval`: 1 ms, a grant every TTI while the eNodeB believes the UE
/// has data (FDD's synchronous uplink HARQ, 8 processes, allows a new PUSCH every TTI).
const DEFAULT_BSR_GRANT_INTERVAL_NS: u64 = 1_000_000;
/// [GAP] Default `uplink_rate`: 20 Mbit/s.
const DEFAULT_UPLINK_BPS: u64 = 20_000_000;
/// Default `tx_power`: 46 dBm, a macro eNodeB over 10 MHz (TR 36.814 Table A.2.1.1-2).
const DEFAULT_TX_POWER_DBM: f64 = 46.0;
/// Default `noise_figure`: 9 dB, the UE's (TR 36.814 Table A.2.1.1-3).
const DEFAULT_NOISE_FIGURE_DB: f64 = 9.0;
/// Default `carrier`: 2 GHz (TR 36.814 Table A.2.1.1-2).
const DEFAULT_CARRIER_HZ: f64 = 2e9;
/// Default `cell_spacing`: 500 m, the inter-site distance of TR 36.814 Table A.2.1.1-2 (case 1).
const DEFAULT_CELL_SPACING_M: f64 = 500.0;
/// [GAP] Default `handover_hysteresis`: 3 dB (the A3 event's offset, TS 36.331 5.5.4.4, is
/// operator-set; 3 dB is common).
const DEFAULT_HANDOVER_HYSTERESIS_DB: f64 = 3.0;
/// Default `handover_interruption`: 50 ms, TS 36.133 5.1.2.1.2's T_interrupt for a known
/// target cell (T_search 0 + T_IU up to 30 ms + 20 ms).
const DEFAULT_HANDOVER_INTERRUPTION_NS: u64 = 50_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    ProportionalFair,
    RoundRobin,
    MaxCi,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uplink {
    /// Periodic grants carrying what the UE queued since the previous one.
    Grants,
    /// Each packet sent as it comes (the ablation).
    PerPacket,
    /// Scheduling requests and buffer status reports ([`super::request_grant`]).
    SrBsr(SrBsrParams),
}

/// An LTE cell as its keys describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct LteParams {
    pub prbs: u32,
    pub scheduler: Scheduler,
    pub pf_window_ns: u64,
    pub rlc_buffer_bytes: u64,
    pub harq_max_tx: u32,
    pub bler_sigma_db: f64,
    pub cqi_period_ns: u64,
    pub cqi_delay_ns: u64,
    pub uplink: Uplink,
    pub grant_period_ns: u64,
    pub uplink_bps: u64,
    /// Probability that a transmission of an uplink transport block fails (0: no uplink
    /// errors, no uplink HARQ).
    pub uplink_bler: f64,
    /// Transmissions of an uplink transport block before it is lost.
    pub uplink_harq_max: u32,
    /// Uplink packets released in order (the eNodeB's RLC reordering); `false`: the ablation,
    /// each transport block's packets released at its own decoding.
    pub uplink_in_order: bool,
    pub tx_power_dbm: f64,
    pub noise_figure_db: f64,
    pub carrier_hz: f64,
    /// eNodeBs along the road, at 0, `cell_spacing`, 2 `cell_spacing`, ... m.
    pub cells: u32,
    pub cell_spacing_m: f64,
    pub handover_hysteresis_db: f64,
    pub handover_interruption_ns: u64,
    /// At a handover the UE's RLC queue is forwarded to the target cell (true) or lost.
    pub handover_forward: bool,
    /// Key `sample_interval`: how often the cell's counters are sampled into `radio.parquet`;
    /// `None`: with the scenario's samples.
    pub sample_interval_ns: Option<u64>,
    /// In port order: UE `i` has ports `2i` (eNodeB to UE) and `2i + 1` (its uplink).
    pub ues: Vec<Ue>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ue {
    pub name: String,
    /// A fixed mean SINR, dB (`snr`); else from `distance` and path loss.
    pub snr_db: Option<f64>,
    /// Start distance from the eNodeB, m.
    pub distance_m: Option<f64>,
    pub speed_m_s: f64,
    /// +1 away from the eNodeB (`backward`), −1 towards it (`forward`).
    pub direction: f64,
    pub fading: Profile,
    /// Maximum Doppler, Hz (`doppler`, else from the speed).
    pub doppler_hz: f64,
    /// A fixed MCS (no link adaptation).
    pub mcs: Option<usize>,
}

type Res<T> = Result<T, (String, String)>;

fn check(t: &Table) -> Result<ModelShape, (String, String)> {
    let p = parse(t)?;
    let ports = p
        .ues
        .iter()
        .flat_map(|u| [u.name.clone(), format!("{}:up", u.name)])
        .collect();
    Ok(ModelShape {
        ports,
        peak_bps: u64::from(amc::tbs_bits(amc::MAX_MCS, p.prbs)) * 1000,
    })
}

/// Reads an LTE cell's own keys; errors as (key relative to the link, message).
pub fn parse(t: &Table) -> Res<LteParams> {
    let prbs = match t.get("prbs") {
        None => 100,
        Some(Value::Integer(n)) if (6..=100).contains(n) => *n as u32,
        Some(v) => {
            return Err(bad(
                "prbs",
                v,
                "an integer from 6 to 100 (PRBs: 6, 15, 25, 50, 75, 100 for 1.4-20 MHz)",
            ))
        }
    };
    let scheduler = match t.get("scheduler") {
        None => Scheduler::ProportionalFair,
        Some(Value::String(s)) if s == "pf" => Scheduler::ProportionalFair,
        Some(Value::String(s)) if s == "rr" => Scheduler::RoundRobin,
        Some(Value::String(s)) if s == "maxci" => Scheduler::MaxCi,
        Some(v) => return Err(bad("scheduler", v, "\"pf\", \"rr\" or \"maxci\"")),
    };
    let pf_window_ns = time(t, "pf_window", DEFAULT_PF_WINDOW_NS, 1_000_000)?;
    let rlc_buffer_bytes = match t.get("rlc_buffer") {
        None => DEEP_BYTES,
        Some(Value::String(s)) if s == "deep" => DEEP_BYTES,
        Some(Value::String(s)) if s == "shallow" => SHALLOW_BYTES,
        Some(Value::String(s)) if parse_size(s).is_ok_and(|b| b >= 1500) => {
            parse_size(s).expect("checked")
        }
        Some(v) => {
            return Err(bad(
                "rlc_buffer",
                v,
                "\"deep\" (7MB), \"shallow\" (120KB) or a size of at least 1500 B like \"2MB\"",
            ))
        }
    };
    let harq_max_tx = match t.get("harq_max_tx") {
        None => DEFAULT_HARQ_MAX_TX,
        Some(Value::Integer(n)) if (1..=8).contains(n) => *n as u32,
        Some(v) => return Err(bad("harq_max_tx", v, "an integer from 1 to 8")),
    };
    let bler_sigma_db = match t.get("bler_sigma") {
        None => 1.0,
        Some(v) => match read_unit(v, "dB") {
            Some(x) if x > 0.0 && x <= 10.0 => x,
            _ => {
                return Err(bad(
                    "bler_sigma",
                    v,
                    "a width like \"1dB\" (above 0, at most 10)",
                ))
            }
        },
    };
    let cqi_period_ns = time(t, "cqi_period", DEFAULT_CQI_PERIOD_NS, 1_000_000)?;
    let cqi_delay_ns = time(t, "cqi_delay", DEFAULT_CQI_DELAY_NS, 0)?;
    let uplink = match t.get("uplink") {
        None => Uplink::Grants,
        Some(Value::String(s)) if s == "grants" => Uplink::Grants,
        Some(Value::String(s)) if s == "per_packet" => Uplink::PerPacket,
        Some(Value::String(s)) if s == "sr_bsr" => Uplink::SrBsr(sr_bsr(t)?),
        Some(v) => return Err(bad("uplink", v, "\"grants\", \"per_packet\" or \"sr_bsr\"")),
    };
    if !matches!(uplink, Uplink::SrBsr(_)) {
        if let Some(key) = SR_BSR_KEYS.iter().find(|k| t.contains_key(**k)) {
            return Err((
                key.to_string(),
                format!("{key:?} applies to uplink = \"sr_bsr\" only"),
            ));
        }
    }
    if t.contains_key("grant_period") && !matches!(uplink, Uplink::Grants) {
        return Err((
            "grant_period".into(),
            "\"grant_period\" applies to uplink = \"grants\" only".into(),
        ));
    }
    let grant_period_ns = time(t, "grant_period", DEFAULT_GRANT_PERIOD_NS, 1_000_000)?;
    let sample_interval_ns = match t.get("sample_interval") {
        None => None,
        Some(_) => Some(time(t, "sample_interval", 0, 1_000_000)?),
    };
    if grant_period_ns % 1_000_000 != 0 {
        return Err((
            "grant_period".into(),
            "expected a whole number of 1 ms TTIs, like \"5ms\"".into(),
        ));
    }
    let uplink_bps = match t.get("uplink_rate") {
        None => DEFAULT_UPLINK_BPS,
        Some(Value::String(s)) if parse_rate(s).is_ok_and(|r| r >= 100_000) => {
            parse_rate(s).expect("checked")
        }
        Some(v) => {
            return Err(bad(
                "uplink_rate",
                v,
                "a rate of at least 100kbps like \"20Mbps\"",
            ))
        }
    };
    let uplink_bler = match t.get("uplink_bler") {
        None => 0.0,
        Some(Value::Float(x)) if (0.0..1.0).contains(x) => *x,
        Some(Value::Integer(0)) => 0.0,
        Some(v) => {
            return Err(bad(
                "uplink_bler",
                v,
                "a probability from 0 to below 1 like 0.1",
            ))
        }
    };
    let uplink_harq_max = match t.get("uplink_harq_max") {
        None => DEFAULT_UPLINK_HARQ_MAX,
        Some(Value::Integer(n)) if (1..=28).contains(n) => *n as u32,
        Some(v) => return Err(bad("uplink_harq_max", v, "an integer from 1 to 28")),
    };
    let uplink_in_order = match t.get("uplink_in_order") {
        None => true,
        Some(Value::Boolean(b)) => *b,
        Some(v) => return Err(bad("uplink_in_order", v, "true or false")),
    };
    let tx_power_dbm = match t.get("tx_power") {
        None => DEFAULT_TX_POWER_DBM,
        Some(v) => {
            read_unit(v, "dBm").ok_or_else(|| bad("tx_power", v, "a power like \"46dBm\""))?
        }
    };
    let noise_figure_db = match t.get("noise_figure") {
        None => DEFAULT_NOISE_FIGURE_DB,
        Some(v) => match read_unit(v, "dB") {
            Some(x) if x >= 0.0 => x,
            _ => {
                return Err(bad(
                    "noise_figure",
                    v,
                    "a noise figure like \"9dB\" (at least 0)",
                ))
            }
        },
    };
    let carrier_hz = match t.get("carrier") {
        None => DEFAULT_CARRIER_HZ,
        Some(v) => match read_hz(v) {
            Some(x) if x >= 1e8 => x,
            _ => {
                return Err(bad(
                    "carrier",
                    v,
                    "a frequency like \"2GHz\" (at least 100MHz)",
                ))
            }
        },
    };
    let cells = match t.get("cells") {
        None => 1,
        Some(Value::Integer(n)) if (1..=1000).contains(n) => *n as u32,
        Some(v) => {
            return Err(bad(
                "cells",
                v,
                "an integer from 1 to 1000 (eNodeBs along the road)",
            ))
        }
    };
    let cell_spacing_m = match t.get("cell_spacing") {
        None => DEFAULT_CELL_SPACING_M,
        Some(v) => match read_distance(v) {
            Some(d) if d >= 1.0 => d,
            _ => {
                return Err(bad(
                    "cell_spacing",
                    v,
                    "a distance between eNodeBs like \"500m\"",
                ))
            }
        },
    };
    let handover_hysteresis_db = match t.get("handover_hysteresis") {
        None => DEFAULT_HANDOVER_HYSTERESIS_DB,
        Some(v) => match read_unit(v, "dB") {
            Some(x) if x >= 0.0 => x,
            _ => {
                return Err(bad(
                    "handover_hysteresis",
                    v,
                    "a margin like \"3dB\" (at least 0)",
                ))
            }
        },
    };
    let handover_interruption_ns = time(
        t,
        "handover_interruption",
        DEFAULT_HANDOVER_INTERRUPTION_NS,
        0,
    )?;
    let handover_forward = match t.get("handover_rlc") {
        None => true,
        Some(Value::String(s)) if s == "forward" => true,
        Some(Value::String(s)) if s == "lost" => false,
        Some(v) => return Err(bad("handover_rlc", v, "\"forward\" or \"lost\"")),
    };
    let looks_like = "a table of UEs like [links.cell.ues.u1] with snr = \"20dB\"";
    let ues = match t.get("ues") {
        Some(Value::Table(s)) if !s.is_empty() => s,
        None => {
            return Err((
                "ues".into(),
                format!("missing required key \"ues\" ({looks_like})"),
            ))
        }
        Some(v) => return Err(bad("ues", v, looks_like)),
    };
    if ues.len() > (u16::MAX / 2) as usize {
        return Err(("ues".into(), format!("at most {} UEs", u16::MAX / 2)));
    }
    let ues = ues
        .iter()
        .map(|(name, v)| ue(name, v, carrier_hz))
        .collect::<Res<Vec<_>>>()?;
    Ok(LteParams {
        prbs,
        scheduler,
        pf_window_ns,
        rlc_buffer_bytes,
        harq_max_tx,
        bler_sigma_db,
        cqi_period_ns,
        cqi_delay_ns,
        uplink,
        grant_period_ns,
        sample_interval_ns,
        uplink_bps,
        uplink_bler,
        uplink_harq_max,
        uplink_in_order,
        tx_power_dbm,
        noise_figure_db,
        carrier_hz,
        cells,
        cell_spacing_m,
        handover_hysteresis_db,
        handover_interruption_ns,
        handover_forward,
        ues,
    })
}

fn ue(name: &str, v: &Value, carrier_hz: f64) -> Res<Ue> {
    let path = join("ues", name);
    if name.is_empty() || name.contains(':') {
        return Err((path, "a UE name must be non-empty, without ':'".into()));
    }
    let Value::Table(t) = v else {
        return Err(bad(&path, v, "a table of UE settings like snr = \"20dB\""));
    };
    if let Some(key) = t.keys().find(|k| !UE_KEYS.contains(&k.as_str())) {
        return Err((
            join(&path, key),
            format!("unknown key {key:?}; accepted keys: {}", UE_KEYS.join(", ")),
        ));
    }
    let key = |k: &str| join(&path, k);
    let snr_db = match t.get("snr") {
        None => None,
        Some(v) => {
            Some(read_unit(v, "dB").ok_or_else(|| bad(&key("snr"), v, "an SINR like \"20dB\""))?)
        }
    };
    let distance_m = match t.get("distance") {
        None => None,
        Some(v) => match read_distance(v) {
            Some(d) if d >= 0.0 => Some(d),
            _ => {
                return Err(bad(
                    &key("distance"),
                    v,
                    "a distance from the eNodeB like \"500m\" or \"1.2km\"",
                ))
            }
        },
    };
    match (snr_db, distance_m) {
        (None, None) => return Err((
            path,
            "needs snr = \"20dB\" (a fixed mean SINR) or distance = \"500m\" (SINR from path loss)"
                .into(),
        )),
        (Some(_), Some(_)) => {
            return Err((
                key("snr"),
                "give snr (a fixed mean SINR) or distance (SINR from path loss), not both".into(),
            ))
        }
        _ => {}
    }
    let speed_m_s = match t.get("speed") {
        None => 0.0,
        Some(v) => match read_speed(v) {
            Some(s) if s >= 0.0 => s,
            _ => {
                return Err(bad(
                    &key("speed"),
                    v,
                    "a speed like \"120km/h\" or \"30m/s\"",
                ))
            }
        },
    };
    let direction = read_direction(&key("direction"), t.get("direction"), "the eNodeB")?;
    let fading = match t.get("fading") {
        None => Profile::None,
        Some(Value::String(s)) => Profile::from_name(s).ok_or_else(|| {
            bad(
                &key("fading"),
                v,
                &format!("one of {}", Profile::NAMES.join(", ")),
            )
        })?,
        Some(v) => {
            return Err(bad(
                &key("fading"),
                v,
                &format!("one of {}", Profile::NAMES.join(", ")),
            ))
        }
    };
    let doppler_hz = match t.get("doppler") {
        None => channel::doppler_hz(speed_m_s, carrier_hz),
        Some(v) => match read_hz(v) {
            Some(x) if x >= 0.0 => x,
            _ => return Err(bad(&key("doppler"), v, "a frequency like \"70Hz\"")),
        },
    };
    let mcs = match t.get("mcs") {
        None => None,
        Some(Value::Integer(n)) if (0..=amc::MAX_MCS as i64).contains(n) => Some(*n as usize),
        Some(v) => {
            return Err(bad(
                &key("mcs"),
                v,
                "a fixed MCS index 0 to 28 (TS 36.213 Table 7.1.7.1-1)",
            ))
        }
    };
    Ok(Ue {
        name: name.to_string(),
        snr_db,
        distance_m,
        speed_m_s,
        direction,
        fading,
        doppler_hz,
        mcs,
    })
}

/// The `uplink = "sr_bsr"` keys.
fn sr_bsr(t: &Table) -> Res<SrBsrParams> {
    let sr_period_ns = time(t, "sr_period", DEFAULT_SR_PERIOD_NS, 1_000_000)?;
    if !SR_PERIODS_MS.contains(&(sr_period_ns / 1_000_000)) || sr_period_ns % 1_000_000 != 0 {
        return Err((
            "sr_period".into(),
            "expected an SR periodicity of TS 36.213 Table 10.1.5-1: \"1ms\", \"2ms\", \"5ms\", \"10ms\", \"20ms\", \"40ms\" or \"80ms\"".into(),
        ));
    }
    let grant_delay_ns = whole_ttis(t, "grant_delay", DEFAULT_GRANT_DELAY_NS)?;
    let pusch_delay_ns = whole_ttis(t, "pusch_delay", DEFAULT_PUSCH_DELAY_NS)?;
    let grant_interval_ns = whole_ttis(t, "bsr_grant_interval", DEFAULT_BSR_GRANT_INTERVAL_NS)?;
    let sr_grant_bytes = match t.get("sr_grant") {
        None => DEFAULT_SR_GRANT_BYTES,
        Some(Value::String(s)) if parse_size(s).is_ok_and(|b| b >= 1) => {
            parse_size(s).expect("checked")
        }
        Some(v) => return Err(bad("sr_grant", v, "a size of at least 1 B like \"512B\"")),
    };
    Ok(SrBsrParams {
        sr_period_ns,
        grant_delay_ns,
        pusch_delay_ns,
        sr_grant_bytes,
        grant_interval_ns,
    })
}

/// A time of whole 1 ms TTIs, at least one.
fn whole_ttis(t: &Table, key: &str, default: u64) -> Res<u64> {
    let ns = time(t, key, default, 1_000_000)?;
    if ns % 1_000_000 != 0 {
        return Err((
            key.into(),
            "expected a whole number of 1 ms TTIs, like \"4ms\"".into(),
        ));
    }
    Ok(ns)
}

fn time(t: &Table, key: &str, default: u64, min: u64) -> Res<u64> {
    match t.get(key) {
        None => Ok(default),
        Some(Value::String(s)) if parse_time(s).is_ok_and(|x| x >= min) => {
            Ok(parse_time(s).expect("checked"))
        }
        Some(v) => Err(bad(
            key,
            v,
            &format!("a time of at least {} ms like \"5ms\"", min / 1_000_000),
        )),
    }
}

/// Hz: `"2GHz"`, `"800MHz"`, `"70Hz"`, `"1.3kHz"`.
fn read_hz(v: &Value) -> Option<f64> {
    let Value::String(s) = v else {
        return None;
    };
    let s = s.trim();
    for (unit, scale) in [("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3), ("Hz", 1.0)] {
        if let Some(x) = s.strip_suffix(unit) {
            return x
                .trim()
                .parse::<f64>()
                .ok()
                .map(|x| x * scale)
                .filter(|x| x.is_finite());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn ues_become_a_downlink_and_an_uplink_port_each() {
        let shape = check(&table(
            "prbs = 50\n[ues.u1]\nsnr = \"20dB\"\n[ues.u2]\ndistance = \"1km\"\nspeed = \"120km/h\"",
        ))
        .unwrap();
        assert_eq!(shape.ports, vec!["u1", "u1:up", "u2", "u2:up"]);
        // MCS 28 over 50 PRBs: 36696 bits per 1 ms TTI.
        assert_eq!(shape.peak_bps, 36_696_000);
        let p = parse(&table(
            "[ues.u1]\ndistance = \"1.2km\"\nspeed = \"120km/h\"\ndirection = \"forward\"\nfading = \"eva\"",
        ))
        .unwrap();
        let u = &p.ues[0];
        assert_eq!(u.distance_m, Some(1200.0));
        assert!((u.speed_m_s - 33.333).abs() < 1e-3);
        assert_eq!(u.direction, -1.0);
        assert_eq!(u.fading, Profile::Eva);
        // f_d = v f_c / c = 33.33 m/s × 2 GHz / 299792458 m/s = 222.4 Hz.
        assert!((u.doppler_hz - 222.38).abs() < 0.01, "{}", u.doppler_hz);
        assert_eq!(p.prbs, 100);
        assert_eq!(p.rlc_buffer_bytes, DEEP_BYTES);
        assert_eq!(p.scheduler, Scheduler::ProportionalFair);
    }

    #[test]
    fn bad_keys_name_the_key_and_what_is_accepted() {
        let e = parse(&table("[ues.u1]\nsnr = \"loud\"")).unwrap_err();
        assert_eq!(e.0, "ues.u1.snr");
        assert!(e.1.contains("20dB"), "{}", e.1);
        let e = parse(&table("prbs = 120\n[ues.u1]\nsnr = 20")).unwrap_err();
        assert_eq!(e.0, "prbs");
        let e = parse(&table("[ues.u1]\nspeed = \"fast\"\nsnr = 3")).unwrap_err();
        assert_eq!(e.0, "ues.u1.speed");
        let e = parse(&table("[ues.u1]\nfading = \"rayleigh\"\nsnr = 3")).unwrap_err();
        assert!(e.1.contains("eva"), "{}", e.1);
        let e = parse(&table("[ues.u1]\nspeed = \"3km/h\"")).unwrap_err();
        assert_eq!(e.0, "ues.u1");
        let e = parse(&table("scheduler = \"fifo\"\n[ues.u1]\nsnr = 3")).unwrap_err();
        assert_eq!(e.0, "scheduler");
        let e = parse(&table("grant_period = \"2.5ms\"\n[ues.u1]\nsnr = 3")).unwrap_err();
        assert_eq!(e.0, "grant_period");
        // The periodic grants' key with another uplink would be ignored: refused instead.
        for uplink in ["per_packet", "sr_bsr"] {
            let e = parse(&table(&format!(
                "uplink = \"{uplink}\"\ngrant_period = \"5ms\"\n[ues.u1]\nsnr = 3"
            )))
            .unwrap_err();
            assert_eq!(e.0, "grant_period");
            assert!(e.1.contains("uplink = \"grants\" only"), "{}", e.1);
        }
        let e = parse(&table("uplink_bler = 1.0\n[ues.u1]\nsnr = 3")).unwrap_err();
        assert_eq!(e.0, "uplink_bler");
        let e = parse(&table("uplink_harq_max = 0\n[ues.u1]\nsnr = 3")).unwrap_err();
        assert_eq!(e.0, "uplink_harq_max");
        let p = parse(&table("[ues.u1]\nsnr = 3")).unwrap();
        assert_eq!((p.uplink_bler, p.uplink_harq_max), (0.0, 4));
        let p = parse(&table(
            "uplink_bler = 0.1\nuplink_harq_max = 5\n[ues.u1]\nsnr = 3",
        ))
        .unwrap();
        assert_eq!((p.uplink_bler, p.uplink_harq_max), (0.1, 5));
        assert!(p.uplink_in_order);
        let e = parse(&table("uplink_in_order = \"no\"\n[ues.u1]\nsnr = 3")).unwrap_err();
        assert_eq!(e.0, "uplink_in_order");
        let e = parse(&table(
            "uplink = \"sr_bsr\"\nsr_period = \"3ms\"\n[ues.u1]\nsnr = 3",
        ))
        .unwrap_err();
        assert_eq!(e.0, "sr_period");
        assert!(e.1.contains("10ms"), "{}", e.1);
        let e = parse(&table(
            "uplink = \"sr_bsr\"\ngrant_delay = \"3.5ms\"\n[ues.u1]\nsnr = 3",
        ))
        .unwrap_err();
        assert_eq!(e.0, "grant_delay");
        let e = parse(&table(
            "uplink = \"sr_bsr\"\nsr_grant = \"big\"\n[ues.u1]\nsnr = 3",
        ))
        .unwrap_err();
        assert_eq!(e.0, "sr_grant");
        assert!(e.1.contains("512B"), "{}", e.1);
        let e = parse(&table("sr_period = \"5ms\"\n[ues.u1]\nsnr = 3")).unwrap_err();
        assert_eq!(e.0, "sr_period");
        assert!(e.1.contains("sr_bsr"), "{}", e.1);
        let e = parse(&table("uplink = \"sr\"\n[ues.u1]\nsnr = 3")).unwrap_err();
        assert!(e.1.contains("sr_bsr"), "{}", e.1);
        let p = parse(&table(
            "uplink = \"sr_bsr\"\nsr_period = \"5ms\"\nsr_grant = \"1KB\"\n[ues.u1]\nsnr = 3",
        ))
        .unwrap();
        assert_eq!(
            p.uplink,
            Uplink::SrBsr(SrBsrParams {
                sr_period_ns: 5_000_000,
                grant_delay_ns: 4_000_000,
                pusch_delay_ns: 4_000_000,
                sr_grant_bytes: 1000,
                grant_interval_ns: 1_000_000,
            })
        );
        let e = parse(&table("sample_interval = \"0.5ms\"\n[ues.u1]\nsnr = 3")).unwrap_err();
        assert_eq!(e.0, "sample_interval");
        let p = parse(&table("sample_interval = \"1ms\"\n[ues.u1]\nsnr = 3")).unwrap();
        assert_eq!(p.sample_interval_ns, Some(1_000_000));
        assert_eq!(
            parse(&table("[ues.u1]\nsnr = 3"))
                .unwrap()
                .sample_interval_ns,
            None
        );
        assert_eq!(parse(&table("prbs = 6")).unwrap_err().0, "ues");
        let p = parse(&table("rlc_buffer = \"shallow\"\n[ues.u1]\nsnr = 3")).unwrap();
        assert_eq!(p.rlc_buffer_bytes, 120_000);
    }
}
