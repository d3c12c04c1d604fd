//! The selection's models: one regressor per candidate algorithm (Algorithm 4's `M_CC`), each
//! predicting the reward (Eq. 5.8) of running that algorithm for the next period from the
//! subflow's latest Data Unit ([`DU_FEATURES`]).
//!
//! A model set is a manifest, `manifest.json`, beside one model file per candidate:
//!
//! ```json
//! {"format": "rove-sscc-models", "version": 1,
//!  "features": ["tput_mbps", "loss_mbps", "delay_ms", "delay_min_ms", "tput_max_mbps"],
//!  "du_acks": 20,
//!  "candidates": ["bbr", "cubic", "vegas", "c2tcp", "westwood", "illinois"],
//!  "models": {"bbr": "bbr.json", "cubic": "cubic.json", ...},
//!  "reward": {...}, "training": {...}}
//! ```
//!
//! Model files are XGBoost JSON regressors (`XGBRegressor.save_model`) or scikit-learn trees
//! exported by `rove.learn`, evaluated by `rove_model` exactly as their library predicts. The
//! manifest's `reward` and `training` say how the set was made (`rove train sscc` writes them)
//! and are not read here. The set `rove train sscc` made for the repository
//! (`scenarios/sscc/model/`) is compiled into the engine: it is the default, and a scenario
//! needs no file for it.

use super::data_unit::DU_FEATURES;
use rove_model::{Task, TreeModel};
use std::path::Path;

/// The manifest's `format`.
pub const FORMAT: &str = "rove-sscc-models";
pub const VERSION: u64 = 1;

/// The default model set, compiled in: (file name, text).
const BUILTIN: &[(&str, &str)] = &[
    (
        "manifest.json",
        include_str!("../../../../../scenarios/sscc/model/manifest.json"),
    ),
    (
        "bbr.json",
        include_str!("../../../../../scenarios/sscc/model/bbr.json"),
    ),
    (
        "cubic.json",
        include_str!("../../../../../scenarios/sscc/model/cubic.json"),
    ),
    (
        "vegas.json",
        include_str!("../../../../../scenarios/sscc/model/vegas.json"),
    ),
    (
        "c2tcp.json",
        include_str!("../../../../../scenarios/sscc/model/c2tcp.json"),
    ),
    (
        "westwood.json",
        include_str!("../../../../../scenarios/sscc/model/westwood.json"),
    ),
    (
        "illinois.json",
        include_str!("../../../../../scenarios/sscc/model/illinois.json"),
    ),
];

/// Where the builtin set says it comes from, in messages.
pub const BUILTIN_ORIGIN: &str = "the built-in model set (scenarios/sscc/model/manifest.json)";

#[derive(serde::Deserialize)]
struct Manifest {
    format: String,
    version: u64,
    features: Vec<String>,
    du_acks: u32,
    candidates: Vec<String>,
    models: std::collections::BTreeMap<String, String>,
}

/// A loaded model set.
pub struct ModelSet {
    /// Where it was read from (a manifest path, or [`BUILTIN_ORIGIN`]).
    pub origin: String,
    /// The ACKs per Data Unit its models were trained on.
    pub du_acks: u32,
    /// Candidate algorithms, in the manifest's order (ties go to the first).
    pub candidates: Vec<&'static str>,
    /// One model per candidate, in the same order.
    pub models: Vec<TreeModel>,
}

impl ModelSet {
    /// The compiled-in default set.
    pub fn builtin() -> Result<ModelSet, String> {
        Self::read(BUILTIN_ORIGIN, |name| {
            BUILTIN
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, text)| text.to_string())
                .ok_or_else(|| format!("{name} is not part of the built-in set"))
        })
    }

    /// The set whose manifest is at `path` (model files relative to its directory).
    pub fn load(path: &Path) -> Result<ModelSet, String> {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let manifest = path.to_path_buf();
        Self::read(&path.display().to_string(), |name| {
            let file = if name == "manifest.json" {
                manifest.clone()
            } else {
                dir.join(name)
            };
            std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))
        })
    }

    /// Reads a set: `read("manifest.json")` gives the manifest, `read(file)` each model.
    fn read(
        origin: &str,
        read: impl Fn(&str) -> Result<String, String>,
    ) -> Result<ModelSet, String> {
        let text = read("manifest.json")?;
        let m: Manifest = serde_json::from_str(&text)
            .map_err(|e| format!("{origin}: not a model set manifest ({e})"))?;
        if m.format != FORMAT || m.version != VERSION {
            return Err(format!(
                "{origin}: format {:?} version {}, expected {FORMAT:?} version {VERSION}",
                m.format, m.version
            ));
        }
        if m.features != DU_FEATURES {
            return Err(format!(
                "{origin}: trained on features [{}]; the engine's Data Units give [{}]",
                m.features.join(", "),
                DU_FEATURES.join(", ")
            ));
        }
        if m.du_acks == 0 {
            return Err(format!("{origin}: du_acks must be at least 1"));
        }
        if m.candidates.is_empty() {
            return Err(format!("{origin}: no candidate algorithms"));
        }
        let known = rove_tcp::cc::names();
        let mut candidates = Vec::new();
        let mut models = Vec::new();
        for name in &m.candidates {
            let Some(&cc) = known.iter().find(|k| **k == name.as_str()) else {
                return Err(format!(
                    "{origin}: unknown candidate algorithm {name:?}; algorithms are: {}",
                    known.join(", ")
                ));
            };
            if rove_tcp::cc::coupled::is_coupled(cc) {
                return Err(format!(
                    "{origin}: candidate {cc:?} is a coupled algorithm; candidates run on uncoupled subflows"
                ));
            }
            if candidates.contains(&cc) {
                return Err(format!("{origin}: candidate {cc:?} listed twice"));
            }
            let file = m.models.get(name).ok_or_else(|| {
                format!("{origin}: no model file for candidate {name:?} in \"models\"")
            })?;
            let model =
                TreeModel::from_json(&read(file)?, file).map_err(|e| format!("{origin}: {e}"))?;
            check_model(&model).map_err(|e| format!("{origin}: {file}: {e}"))?;
            candidates.push(cc);
            models.push(model);
        }
        Ok(ModelSet {
            origin: origin.to_string(),
            du_acks: m.du_acks,
            candidates,
            models,
        })
    }

    /// Predicted reward of each candidate for Data Unit features `x`, into `out`.
    pub fn predict(&self, x: &[f64], out: &mut [f64]) {
        for (model, y) in self.models.iter().zip(out.iter_mut()) {
            // Feature and output counts were checked when the set was read.
            *y = model.predict_value(x).unwrap_or(f64::NEG_INFINITY);
        }
    }
}

/// A candidate's model: a single-output regressor over the Data Unit's features.
fn check_model(model: &TreeModel) -> Result<(), String> {
    if model.task() != &Task::Regression || model.n_outputs() != 1 {
        return Err(
            "a candidate's model must be a single-output regressor (the predicted reward)".into(),
        );
    }
    if model.n_features() != DU_FEATURES.len() {
        return Err(format!(
            "takes {} features; a Data Unit has {} ({})",
            model.n_features(),
            DU_FEATURES.len(),
            DU_FEATURES.join(", ")
        ));
    }
    if let Some(names) = model.feature_names() {
        if names != DU_FEATURES {
            return Err(format!(
                "trained on features [{}], expected [{}]",
                names.join(", "),
                DU_FEATURES.join(", ")
            ));
        }
    }
    Ok(())
}
