//! The `selection` controller's keys and its phase schedule (seed-002 §2.6, §2.7, §2.11), in one
//! place for both backends: the simulator's controller (rove-world `control/selection.rs`) and
//! the kernel backend (rove-emu `orchestrate.rs`, which turns it into switch actions before the
//! run) both call [`Selection::read`], so they switch at the same instants with the same handoff.
//!
//! The time rule ([`thesis_phases`]) is the Python library's `rove.selection.thesis_phases`
//! (tests/test_selection_controller.py checks the two give the same phases for every direction,
//! speed and duration it tries):
//!
//! * start-up is the first 2 s ("The Start-up phase will be treated always as the first two
//!   seconds", thesis §6.3.2);
//! * the constrained area lasts 10, 5 and 2 s at 60, 120 and 300 km/h (ibid.); [GAP] at other
//!   speeds, the time to cross the same 166.7 m of road (60 km/h × 10 s);
//! * forward (the thesis's word: quality falling, away from the eNodeB): start-up, sustainer,
//!   constrained at the end of the run; backward (quality rising): start-up, constrained right
//!   after it, scaling; backward at exactly 300 km/h has start-up and scaling only (Table 6.8).
//!
//! [GAP] choices, each documented in docs/selection.md:
//! * the phases are timed from the flow's start and end at the run's end (the thesis's runs are
//!   one transfer each; its run length is not stated);
//! * a plan is one algorithm (a single-algorithm row of Table 6.8: no switch) or one per phase;
//! * a switch happens at each phase boundary where the plan's algorithm changes, with the
//!   handoff `delay_scaled` (Eq. 6.3 over the last `samples` = 7 samples) unless `keep` is given;
//! * `startup` and `constrained` override the two durations (for every speed).

use crate::component::{ComponentError, ComponentParams};
use crate::spec::{
    ActionSpec, ActionTarget, Change, HandoffSpec, Nanos, Scenario, Workload,
    HANDOFF_SAMPLES_DEFAULT, HANDOFF_SAMPLES_MAX,
};

/// Start-up: the first 2 s (thesis §6.3.2).
pub const STARTUP_S: f64 = 2.0;
/// The constrained area's duration at the thesis's three speeds (thesis §6.3.2): (km/h, s).
pub const CONSTRAINED_S: [(f64, f64); 3] = [(60.0, 10.0), (120.0, 5.0), (300.0, 2.0)];
/// [GAP] other speeds: the same stretch of road, 60 km/h × 10 s = 166.7 m (seed-002 §2.6 [I]).
/// Written as the Python library computes it, so both give the same bits.
pub const CONSTRAINED_M: f64 = 60.0 / 3.6 * 10.0;

/// One phase of a run, from the flow's start.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    pub name: &'static str,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
}

fn seconds_to_ns(s: f64) -> Nanos {
    (s * 1e9).round() as Nanos
}

/// The constrained area's duration in seconds at `speed_kmh`.
pub fn constrained_seconds(speed_kmh: f64) -> Result<f64, String> {
    if let Some((_, s)) = CONSTRAINED_S.iter().find(|(v, _)| *v == speed_kmh) {
        return Ok(*s);
    }
    if !(speed_kmh > 0.0 && speed_kmh.is_finite()) {
        return Err(format!(
            "{speed_kmh} km/h: a moving UE has a positive speed"
        ));
    }
    Ok(CONSTRAINED_M / (speed_kmh / 3.6))
}

/// The phase names of a use case: backward at exactly 300 km/h has no constrained phase.
pub fn phase_names(direction: &str, speed_kmh: f64) -> Result<&'static [&'static str], String> {
    match direction {
        "forward" => Ok(&["startup", "sustainer", "constrained"]),
        "backward" if speed_kmh == 300.0 => Ok(&["startup", "scaling"]),
        "backward" => Ok(&["startup", "constrained", "scaling"]),
        other => Err(format!(
            "{other:?}: expected \"forward\" (quality falling) or \"backward\" (quality rising)"
        )),
    }
}

/// The thesis's time rule over a run of `duration_ns` (see the module doc). `startup_ns` and
/// `constrained_ns` override the 2 s and the speed's constrained duration.
pub fn thesis_phases(
    direction: &str,
    speed_kmh: f64,
    duration_ns: Nanos,
    startup_ns: Option<Nanos>,
    constrained_ns: Option<Nanos>,
) -> Result<Vec<Phase>, String> {
    let names = phase_names(direction, speed_kmh)?;
    let startup = startup_ns.unwrap_or(seconds_to_ns(STARTUP_S));
    let con = match constrained_ns {
        Some(ns) => ns,
        None => seconds_to_ns(constrained_seconds(speed_kmh)?),
    };
    let con = if names.contains(&"constrained") {
        con
    } else {
        0
    };
    if duration_ns <= startup + con {
        return Err(format!(
            "the phases need a flow longer than {} s (start-up {} s, constrained {} s); it runs {} s",
            (startup + con) as f64 / 1e9,
            startup as f64 / 1e9,
            con as f64 / 1e9,
            duration_ns as f64 / 1e9
        ));
    }
    let bounds: Vec<Nanos> = match (direction, names.len()) {
        ("forward", _) => vec![0, startup, duration_ns - con, duration_ns],
        (_, 3) => vec![0, startup, startup + con, duration_ns],
        _ => vec![0, startup, duration_ns],
    };
    Ok(names
        .iter()
        .zip(bounds.windows(2))
        .map(|(name, b)| Phase {
            name,
            start_ns: b[0],
            end_ns: b[1],
        })
        .collect())
}

/// A speed: `"120km/h"` or `"30m/s"`, in km/h.
fn read_speed_kmh(spec: &str) -> Option<f64> {
    let s = spec.trim();
    let (number, factor) = if let Some(n) = s.strip_suffix("km/h") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("m/s") {
        (n, 3.6)
    } else {
        return None;
    };
    let v: f64 = number.trim().parse().ok()?;
    (v.is_finite() && v > 0.0).then_some(v * factor)
}

/// A `[[controllers]] kind = "selection"` table, read and checked, with the switches it makes.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub flow: usize,
    /// The algorithm of each phase (a one-algorithm plan repeated).
    pub plan: Vec<String>,
    pub phases: Vec<Phase>,
    pub handoff: HandoffSpec,
    /// The switches, at absolute scenario times, in time order: one at each phase boundary
    /// where the algorithm changes.
    pub switches: Vec<ActionSpec>,
}

fn err(key: &str, message: impl Into<String>) -> ComponentError {
    ComponentError {
        key: key.to_string(),
        message: message.into(),
    }
}

impl Selection {
    /// Reads the controller's keys: `flow`, `plan`, `direction`, `speed`, `phases`, `handoff`,
    /// `samples`, `startup`, `constrained`. Algorithm names are the backend's to check.
    pub fn read(p: &ComponentParams, scenario: &Scenario) -> Result<Selection, ComponentError> {
        let flow = p.flow("flow", scenario)?;
        let spec = &scenario.flows[flow];
        if spec.multipath.is_some() || !matches!(spec.workload, Workload::Bulk) {
            return Err(err(
                "flow",
                format!(
                    "{:?} is not a single-path TCP flow (selection switches one sender's algorithm)",
                    spec.name
                ),
            ));
        }
        match p.string("phases")?.as_deref() {
            None | Some("time") => {}
            Some(other) => {
                return Err(err(
                    "phases",
                    format!("{other:?} is not built; accepted: \"time\" (the thesis's time rule)"),
                ))
            }
        }
        let direction = p.string("direction")?.ok_or_else(|| {
            err(
                "direction",
                r#"missing required key "direction" ("forward": quality falling, or "backward": rising)"#,
            )
        })?;
        let speed_text = p.string("speed")?.ok_or_else(|| {
            err(
                "speed",
                r#"missing required key "speed" (a speed like "300km/h" or "30m/s")"#,
            )
        })?;
        let speed_kmh = read_speed_kmh(&speed_text).ok_or_else(|| {
            err(
                "speed",
                format!("{speed_text:?}: expected a positive speed like \"300km/h\" or \"30m/s\""),
            )
        })?;
        let names = phase_names(&direction, speed_kmh).map_err(|m| err("direction", m))?;

        let plan = p.strings("plan")?.ok_or_else(|| {
            err(
                "plan",
                r#"missing required key "plan" (the algorithm of each phase, a row of Table 6.8 like ["bbr", "illinois"])"#,
            )
        })?;
        if plan.len() != 1 && plan.len() != names.len() {
            return Err(err(
                "plan",
                format!(
                    "{} algorithms for {} phases ({}): give one per phase, or one for the whole run",
                    plan.len(),
                    names.len(),
                    names.join(", ")
                ),
            ));
        }
        if plan[0] != spec.cc {
            return Err(err(
                "plan",
                format!(
                    "starts with {:?} but flow {:?} sets up with cc = {:?}; the first phase's algorithm is the set-up choice (Option 1): make them equal",
                    plan[0], spec.name, spec.cc
                ),
            ));
        }
        let plan: Vec<String> = (0..names.len())
            .map(|k| plan[k.min(plan.len() - 1)].clone())
            .collect();

        let handoff = match p.string("handoff")?.as_deref() {
            None | Some("delay_scaled") => {
                let samples = match p.number("samples")? {
                    None => HANDOFF_SAMPLES_DEFAULT,
                    Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= HANDOFF_SAMPLES_MAX as f64 => {
                        n as u32
                    }
                    Some(n) => {
                        return Err(err(
                            "samples",
                            format!(
                                "{n}: a whole number of samples from 1 to {HANDOFF_SAMPLES_MAX}"
                            ),
                        ))
                    }
                };
                HandoffSpec::DelayScaled { samples }
            }
            Some("keep") => {
                if p.number("samples")?.is_some() {
                    return Err(err(
                        "samples",
                        "\"samples\" goes with handoff = \"delay_scaled\"",
                    ));
                }
                HandoffSpec::Keep
            }
            Some(other) => {
                return Err(err(
                    "handoff",
                    format!("unknown handoff {other:?}; accepted: delay_scaled, keep"),
                ))
            }
        };

        let startup = p.time("startup")?;
        let constrained = p.time("constrained")?;
        if startup == Some(0) {
            return Err(err("startup", "must be greater than 0"));
        }
        let run_ns = scenario.duration_ns.saturating_sub(spec.start_ns);
        let phases =
            thesis_phases(&direction, speed_kmh, run_ns, startup, constrained).map_err(|m| {
                err(
                    "speed",
                    format!(
                        "flow {:?} from {} s: {m}",
                        spec.name,
                        spec.start_ns as f64 / 1e9
                    ),
                )
            })?;

        let switches = (1..phases.len())
            .filter(|&k| plan[k] != plan[k - 1])
            .map(|k| ActionSpec {
                at_ns: spec.start_ns + phases[k].start_ns,
                target: ActionTarget::Flow {
                    flow,
                    subflow: None,
                },
                change: Change::Cc {
                    name: plan[k].clone(),
                    params: toml::Table::new(),
                    handoff,
                },
            })
            .filter(|a| a.at_ns < scenario.duration_ns)
            .collect();
        Ok(Selection {
            flow,
            plan,
            phases,
            handoff,
            switches,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn bounds(d: &str, v: f64, dur: Nanos) -> Vec<(&'static str, Nanos, Nanos)> {
        thesis_phases(d, v, dur, None, None)
            .unwrap()
            .into_iter()
            .map(|p| (p.name, p.start_ns, p.end_ns))
            .collect()
    }

    #[test]
    fn the_thesis_time_rule_at_its_three_speeds() {
        // §6.3.2: start-up 2 s; constrained 10/5/2 s at 60/120/300 km/h, at the end forward,
        // right after start-up backward; backward 300 km/h: start-up and scaling only.
        assert_eq!(
            bounds("forward", 60.0, 30 * S),
            [
                ("startup", 0, 2 * S),
                ("sustainer", 2 * S, 20 * S),
                ("constrained", 20 * S, 30 * S)
            ]
        );
        assert_eq!(
            bounds("backward", 120.0, 30 * S),
            [
                ("startup", 0, 2 * S),
                ("constrained", 2 * S, 7 * S),
                ("scaling", 7 * S, 30 * S)
            ]
        );
        assert_eq!(
            bounds("backward", 300.0, 30 * S),
            [("startup", 0, 2 * S), ("scaling", 2 * S, 30 * S)]
        );
        assert_eq!(
            bounds("forward", 300.0, 30 * S)[2],
            ("constrained", 28 * S, 30 * S)
        );
    }

    #[test]
    fn other_speeds_cross_the_same_166_7_m() {
        // 90 km/h = 25 m/s: 166.67 m in 6.667 s; 200 km/h backward keeps its constrained phase.
        assert_eq!(constrained_seconds(90.0).unwrap(), CONSTRAINED_M / 25.0);
        assert_eq!(bounds("forward", 90.0, 30 * S)[2].1, 23_333_333_333);
        assert_eq!(
            bounds("backward", 200.0, 30 * S)[1],
            ("constrained", 2 * S, 5 * S)
        );
        assert!(constrained_seconds(0.0).is_err());
    }

    #[test]
    fn a_run_too_short_for_its_phases_is_refused() {
        let e = thesis_phases("forward", 60.0, 12 * S, None, None).unwrap_err();
        assert!(e.contains("longer than 12 s"), "{e}");
        assert!(thesis_phases("backward", 300.0, 3 * S, None, None).is_ok());
        assert!(thesis_phases("sideways", 60.0, 30 * S, None, None).is_err());
    }

    #[test]
    fn speeds_read_in_km_h_or_m_s() {
        assert_eq!(read_speed_kmh("300km/h"), Some(300.0));
        assert_eq!(read_speed_kmh("25m/s"), Some(90.0));
        assert_eq!(read_speed_kmh("300"), None);
        assert_eq!(read_speed_kmh("-5km/h"), None);
    }
}
