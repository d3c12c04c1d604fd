//! `kind = "tree_cc"`: picks a flow's congestion control with a learned tree model. At its
//! cadence it builds the flow's feature row exactly as the feature recorder does
//! ([`feature_row`]: the sender's columns, then `link`'s when given), evaluates the model
//! (`rove_model`: a scikit-learn tree or forest exported by `rove.learn`, or an XGBoost JSON
//! model), and when the chosen algorithm is not the one running, switches to it (Linux's
//! `setsockopt(TCP_CONGESTION)`, window kept: `handoff = "keep"`, the algorithm's default
//! parameters).
//!
//! The model scores the names in `choices`:
//!
//! * a classifier picks a class by its library's `predict`; a class labelled with a name picks
//!   that name, a class labelled with a whole number k picks `choices[k]`;
//! * a regressor has one output per choice (a multi-output tree, or XGBoost with
//!   `num_target = len(choices)`), each the predicted reward of that choice; the largest wins
//!   (the first on ties).
//!
//! Keys: `model` (path, relative to the scenario file like trace paths), `flow` (a single-path
//! TCP flow), `choices` (algorithm names), `link` (optional: add that link's features), and
//! the cadence (`every`, or `every_acks`).
//!
//! Checked when the scenario is built: the model file reads, takes as many features as the row
//! has (and, if it records feature names, the same names in the same order), and every class
//! or output maps to a choice.

use super::features::{feature_names, feature_row, MAX_FEATURES};
use super::{read_cadence, Cadence, Controller};
use crate::world::World;
use rove_model::{argmax, Label, Task, TreeModel};
use rove_scenario::component::{ComponentError, ComponentParams};
use rove_scenario::spec::{ActionSpec, ActionTarget, Change, HandoffSpec, Workload};
use rove_scenario::Scenario;
use rove_sim::Nanos;

pub struct TreeCc {
    cadence: Cadence,
    flow: usize,
    link: Option<usize>,
    model: TreeModel,
    choices: Vec<String>,
    /// A classifier's class index → index into `choices`; `None` for a regressor.
    class_choice: Option<Vec<usize>>,
    /// The model's outputs (a buffer, so a tick does not allocate).
    scratch: Vec<f64>,
}

fn err(key: &str, message: impl Into<String>) -> ComponentError {
    ComponentError {
        key: key.to_string(),
        message: message.into(),
    }
}

impl TreeCc {
    pub fn build(
        p: &ComponentParams,
        scenario: &Scenario,
    ) -> Result<Box<dyn Controller>, ComponentError> {
        let cadence = read_cadence(p, scenario)?;
        // every_acks counts this same flow's ACKs (read_cadence reads key `flow` too).
        let flow = p.flow("flow", scenario)?;
        let spec = &scenario.flows[flow];
        if spec.multipath.is_some() || !matches!(spec.workload, Workload::Bulk) {
            return Err(err(
                "flow",
                format!(
                    "{:?} is not a single-path TCP flow (tree_cc switches one sender's algorithm)",
                    spec.name
                ),
            ));
        }
        let link = match p.string("link")? {
            None => None,
            Some(_) => Some(p.link("link", scenario)?),
        };

        let known = rove_tcp::cc::names();
        let choices = p.strings("choices")?.ok_or_else(|| {
            err(
                "choices",
                r#"missing required key "choices" (algorithm names like ["cubic", "bbr"])"#,
            )
        })?;
        if choices.is_empty() {
            return Err(err("choices", "needs at least one algorithm name"));
        }
        if let Some(bad) = choices.iter().find(|c| !known.contains(&c.as_str())) {
            return Err(err(
                "choices",
                format!(
                    "unknown algorithm {bad:?}; algorithms are: {}",
                    known.join(", ")
                ),
            ));
        }

        let path = p
            .path("model", scenario)?
            .ok_or_else(|| err("model", r#"missing required key "model" (a model file: XGBoost JSON, or rove.learn's export of scikit-learn trees)"#))?;
        let model = TreeModel::load(&path).map_err(|e| err("model", e.to_string()))?;

        let names = feature_names(link.is_some());
        if model.n_features() != names.len() {
            return Err(err(
                "model",
                format!(
                    "{} takes {} features, but this controller's rows have {} ({}{})",
                    model.file(),
                    model.n_features(),
                    names.len(),
                    names.join(", "),
                    if link.is_some() {
                        ""
                    } else {
                        "; add link = \"NAME\" for the link's 4"
                    }
                ),
            ));
        }
        if let Some(trained) = model.feature_names() {
            if let Some(i) = (0..names.len()).find(|&i| trained[i] != names[i]) {
                return Err(err(
                    "model",
                    format!(
                        "{} was trained on feature {:?} in column {i}, where this controller gives {:?} (columns: {})",
                        model.file(),
                        trained[i],
                        names[i],
                        names.join(", ")
                    ),
                ));
            }
        }

        let class_choice = match model.task() {
            Task::Classification { classes } => Some(map_classes(classes, &choices, model.file())?),
            Task::Regression if model.n_outputs() == choices.len() => None,
            Task::Regression => {
                return Err(err(
                    "model",
                    format!(
                        "{} is a regressor with {} outputs; as a scorer of choices it needs one output per choice ({})",
                        model.file(),
                        model.n_outputs(),
                        choices.len()
                    ),
                ))
            }
        };
        let scratch = vec![0.0; model.n_outputs()];
        Ok(Box::new(TreeCc {
            cadence,
            flow,
            link,
            model,
            choices,
            class_choice,
            scratch,
        }))
    }
}

/// Class index → choice index: a name picks itself, a whole number k picks `choices[k]`.
fn map_classes(
    classes: &[Label],
    choices: &[String],
    file: &str,
) -> Result<Vec<usize>, ComponentError> {
    classes
        .iter()
        .map(|label| {
            let found = match label {
                Label::Text(name) => choices.iter().position(|c| c == name),
                Label::Number(_) => label.as_index().filter(|&k| k < choices.len()),
            };
            found.ok_or_else(|| {
                err(
                    "choices",
                    format!(
                        "{file} predicts class {label}, which picks none of choices [{}] (a class names an algorithm, or is a whole number k picking choices[k])",
                        choices.join(", ")
                    ),
                )
            })
        })
        .collect()
}

impl Controller for TreeCc {
    fn kind(&self) -> &'static str {
        "tree_cc"
    }

    fn cadence(&self) -> Cadence {
        self.cadence
    }

    fn tick(&mut self, now: Nanos, world: &World, actions: &mut Vec<ActionSpec>) {
        let view = world.sender_view(self.flow, 0);
        let link = self.link.map(|l| world.link_view(l));
        let mut row = [0.0; MAX_FEATURES];
        let n = feature_row(&view, link.as_ref(), &mut row);
        let x = &row[..n];
        // Feature and output counts were checked when the controller was built.
        let choice = match &self.class_choice {
            Some(map) => self
                .model
                .predict_class(x, &mut self.scratch)
                .map(|c| map[c]),
            None => self
                .model
                .predict_into(x, &mut self.scratch)
                .map(|_| argmax(&self.scratch)),
        };
        let Ok(choice) = choice else { return };
        let name = &self.choices[choice];
        if view.cc != name {
            actions.push(ActionSpec {
                at_ns: now,
                target: ActionTarget::Flow {
                    flow: self.flow,
                    subflow: None,
                },
                change: Change::Cc {
                    name: name.clone(),
                    params: toml::Table::new(),
                    handoff: HandoffSpec::Keep,
                },
            });
        }
    }
}
