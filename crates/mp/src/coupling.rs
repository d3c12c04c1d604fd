//! Congestion control of a connection's subflows: uncoupled (the flow's `cc` on each subflow,
//! each on its own) or coupled across the connection's subflows.
//!
//! Coupled algorithms (LIA, OLIA, BALIA, wVegas) live in rove-tcp (`cc/coupled/`) and share a
//! per-connection coupling handle through `CcConfig`. [`build_subflow_ccs`] is the one place
//! where a connection's subflow algorithms are built, and so the one place where that handle is
//! created and passed to each subflow; until those algorithms land it accepts "uncoupled" only.

use rove_tcp::cc::{self, CcConfig, CongestionControl};

/// Couplings this engine can build (the scenario's `coupling` key).
pub const COUPLINGS: &[&str] = &["uncoupled"];

/// A coupling or algorithm that cannot be built: the scenario key (relative to the flow) and
/// what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct CouplingError {
    pub key: String,
    pub message: String,
}

/// Builds the congestion control of each of a connection's `subflows` subflows.
///
/// * `coupling = "uncoupled"`: algorithm `cc` with `params` on every subflow, each independent.
/// * a coupled algorithm: [when rove-tcp's coupled algorithms land] create one coupling handle
///   for the connection here and build every subflow's algorithm from the registry by the
///   coupling's name with that handle in its `CcConfig`.
///
/// `seed_of(i)` gives subflow i's seed for the algorithm's own random choices.
pub fn build_subflow_ccs(
    coupling: &str,
    cc_name: &str,
    params: &toml::Table,
    subflows: usize,
    seed_of: impl Fn(usize) -> u64,
) -> Result<Vec<Box<dyn CongestionControl>>, CouplingError> {
    if coupling != "uncoupled" {
        return Err(CouplingError {
            key: "coupling".into(),
            message: format!("unknown coupling {coupling:?}; accepted: {}", COUPLINGS.join(", ")),
        });
    }
    (0..subflows)
        .map(|i| match cc::build(cc_name, &CcConfig { params, seed: seed_of(i) }) {
            None => Err(CouplingError {
                key: "cc".into(),
                message: format!("unknown algorithm {cc_name:?}; known: {}", cc::names().join(", ")),
            }),
            Some(Err(e)) => Err(CouplingError { key: format!("cc_params.{}", e.key), message: e.message }),
            Some(Ok(a)) => Ok(a),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncoupled_builds_the_flow_cc_per_subflow_and_others_are_refused() {
        let ccs = build_subflow_ccs("uncoupled", "cubic", &toml::Table::new(), 3, |i| i as u64).unwrap();
        assert_eq!(ccs.iter().map(|c| c.name()).collect::<Vec<_>>(), ["cubic"; 3]);
        let e = build_subflow_ccs("lia", "reno", &toml::Table::new(), 2, |_| 0).err().unwrap();
        assert_eq!(e.key, "coupling");
        assert!(e.message.contains("accepted: uncoupled"), "{}", e.message);
    }
}
