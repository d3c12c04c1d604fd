//! Congestion control of a connection's subflows: uncoupled (the flow's `cc` on each subflow,
//! each on its own) or coupled across the connection's subflows.
//!
//! Coupled algorithms (LIA, OLIA, BALIA, wVegas) live in rove-tcp (`cc/coupled/`) and share a
//! per-connection coupling handle through `CcConfig`. [`build_subflow_ccs`] is the one place
//! where a connection's subflow algorithms are built, and so the one place where that handle is
//! created and passed to each subflow; until those algorithms land it accepts "uncoupled" only.

use rove_tcp::cc::{self, coupled, CcConfig, CongestionControl, CouplingHandle};

/// Couplings this engine can build (the scenario's `coupling` key):
/// * `"auto"` (the default): `"connection"` when the flow's `cc` is a coupled algorithm,
///   else `"uncoupled"`;
/// * `"uncoupled"`: `cc` on every subflow, each on its own (a coupled algorithm alone in its
///   group: LIA, OLIA and BALIA are then Reno);
/// * `"connection"`: every subflow's coupled `cc` in one coupling group over the connection
///   (RFC 6356's setting); `cc` must be a coupled algorithm.
pub const COUPLINGS: &[&str] = &["auto", "uncoupled", "connection"];

/// A coupling or algorithm that cannot be built: the scenario key (relative to the flow) and
/// what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct CouplingError {
    pub key: String,
    pub message: String,
}

/// A connection's subflow algorithms and, when they are coupled, the handle they share (for a
/// scheme that regroups subflows at run time, e.g. BCCPS or MPTCP-SSCC).
pub struct SubflowCcs {
    pub ccs: Vec<Box<dyn CongestionControl>>,
    pub coupling: Option<CouplingHandle>,
}

/// Builds the congestion control of each of a connection's `subflows` subflows: algorithm `cc`
/// with `params`, coupled over the connection or not as `coupling` says (see [`COUPLINGS`]).
/// `seed_of(i)` gives subflow i's seed for the algorithm's own random choices.
pub fn build_subflow_ccs(
    coupling: &str,
    cc_name: &str,
    params: &toml::Table,
    subflows: usize,
    seed_of: impl Fn(usize) -> u64,
) -> Result<SubflowCcs, CouplingError> {
    let coupled = coupled::is_coupled(cc_name);
    let shared = match coupling {
        "auto" => coupled,
        "uncoupled" => false,
        "connection" if coupled => true,
        "connection" => {
            return Err(CouplingError {
                key: "coupling".into(),
                message: format!(
                    "\"connection\" needs a coupled algorithm as cc, got {cc_name:?}; coupled: {}",
                    coupled::NAMES.join(", ")
                ),
            })
        }
        other => {
            return Err(CouplingError {
                key: "coupling".into(),
                message: format!(
                    "unknown coupling {other:?}; accepted: {}",
                    COUPLINGS.join(", ")
                ),
            })
        }
    };
    let handle = shared.then(CouplingHandle::new);
    let ccs = (0..subflows)
        .map(|i| {
            let mut config = CcConfig::new(params, seed_of(i));
            if let Some(h) = &handle {
                config = config.with_coupling(h.subflow());
            }
            match cc::build(cc_name, &config) {
                None => Err(CouplingError {
                    key: "cc".into(),
                    message: format!(
                        "unknown algorithm {cc_name:?}; known: {}",
                        cc::names().join(", ")
                    ),
                }),
                Some(Err(e)) => Err(CouplingError {
                    key: format!("cc_params.{}", e.key),
                    message: e.message,
                }),
                Some(Ok(a)) => Ok(a),
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(SubflowCcs {
        ccs,
        coupling: handle,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_path_cc_runs_on_every_subflow_and_bad_couplings_are_named() {
        let none = toml::Table::new();
        for coupling in ["auto", "uncoupled"] {
            let b = build_subflow_ccs(coupling, "cubic", &none, 3, |i| i as u64).unwrap();
            assert_eq!(
                b.ccs.iter().map(|c| c.name()).collect::<Vec<_>>(),
                ["cubic"; 3]
            );
            assert!(b.coupling.is_none());
        }
        let e = build_subflow_ccs("lia", "reno", &none, 2, |_| 0)
            .err()
            .unwrap();
        assert_eq!(e.key, "coupling");
        assert!(
            e.message.contains("accepted: auto, uncoupled, connection"),
            "{}",
            e.message
        );
        let e = build_subflow_ccs("connection", "cubic", &none, 2, |_| 0)
            .err()
            .unwrap();
        assert!(
            e.message.contains("coupled: lia, olia, balia, wvegas"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_coupled_cc_shares_one_handle_over_the_connection_unless_uncoupled() {
        let none = toml::Table::new();
        for coupling in ["auto", "connection"] {
            let b = build_subflow_ccs(coupling, "olia", &none, 3, |i| i as u64).unwrap();
            assert_eq!(
                b.ccs.iter().map(|c| c.name()).collect::<Vec<_>>(),
                ["olia"; 3]
            );
            assert_eq!(b.coupling.expect("shared").len(), 3);
        }
        assert!(build_subflow_ccs("uncoupled", "lia", &none, 2, |_| 0)
            .unwrap()
            .coupling
            .is_none());
    }
}
