//! Reading a component's own keys (a path element's or a controller's table): typed getters that
//! name the key in their errors, and a final check that rejects the keys nobody read.

use crate::error::ScenarioError;
use crate::parse::{describe, read_number, read_rate, read_size, read_time};
use crate::spec::{ComponentSpec, Nanos, Scenario};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// A key of a component and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentError {
    pub key: String,
    pub message: String,
}

pub struct ComponentParams<'a> {
    spec: &'a ComponentSpec,
    read: RefCell<Vec<&'static str>>,
}

type Res<T> = Result<T, ComponentError>;

fn error(key: &str, message: impl Into<String>) -> ComponentError {
    ComponentError {
        key: key.to_string(),
        message: message.into(),
    }
}

impl<'a> ComponentParams<'a> {
    pub fn new(spec: &'a ComponentSpec) -> Self {
        ComponentParams {
            spec,
            read: RefCell::new(Vec::new()),
        }
    }

    fn get<T>(
        &self,
        key: &'static str,
        read: impl Fn(&toml::Value) -> Result<T, String>,
    ) -> Res<Option<T>> {
        self.read.borrow_mut().push(key);
        self.spec
            .params
            .get(key)
            .map(|v| read(v).map_err(|m| error(key, m)))
            .transpose()
    }

    fn required<T>(&self, key: &'static str, value: Option<T>, looks_like: &str) -> Res<T> {
        value.ok_or_else(|| error(key, format!("missing required key {key:?} ({looks_like})")))
    }

    pub fn number(&self, key: &'static str) -> Res<Option<f64>> {
        self.get(key, read_number)
    }

    pub fn time(&self, key: &'static str) -> Res<Option<Nanos>> {
        self.get(key, read_time)
    }

    pub fn size(&self, key: &'static str) -> Res<Option<u64>> {
        self.get(key, read_size)
    }

    pub fn rate(&self, key: &'static str) -> Res<Option<u64>> {
        self.get(key, read_rate)
    }

    pub fn string(&self, key: &'static str) -> Res<Option<String>> {
        self.get(key, |v| match v {
            toml::Value::String(s) => Ok(s.clone()),
            other => Err(format!("expected a string, got {}", describe(other))),
        })
    }

    /// A list of strings: `key = ["a", "b"]`.
    pub fn strings(&self, key: &'static str) -> Res<Option<Vec<String>>> {
        self.get(key, |v| {
            let looks_like = r#"a list of strings like ["cubic", "bbr"]"#;
            match v {
                toml::Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        toml::Value::String(s) => Ok(s.clone()),
                        other => Err(format!(
                            "expected {looks_like}, got {} in it",
                            describe(other)
                        )),
                    })
                    .collect(),
                other => Err(format!("expected {looks_like}, got {}", describe(other))),
            }
        })
    }

    /// A boolean (key `key`).
    pub fn boolean(&self, key: &'static str) -> Res<Option<bool>> {
        self.get(key, |v| match v {
            toml::Value::Boolean(b) => Ok(*b),
            other => Err(format!("expected true or false, got {}", describe(other))),
        })
    }

    /// A list of numbers (key `key`).
    pub fn numbers(&self, key: &'static str) -> Res<Option<Vec<f64>>> {
        self.get(key, |v| {
            let looks_like = "a list of numbers like [1, 2.5]";
            match v {
                toml::Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        toml::Value::Integer(i) => Ok(*i as f64),
                        toml::Value::Float(f) => Ok(*f),
                        other => Err(format!("expected {looks_like}, got {} in it", describe(other))),
                    })
                    .collect(),
                other => Err(format!("expected {looks_like}, got {}", describe(other))),
            }
        })
    }

    /// A file path (key `key`), resolved as trace paths are: a relative path against the
    /// scenario file's directory ([`Scenario::base_dir`]). Whether the file exists is the
    /// reader's to say.
    pub fn path(&self, key: &'static str, scenario: &Scenario) -> Res<Option<PathBuf>> {
        let Some(spec) = self.string(key)? else {
            return Ok(None);
        };
        if spec.trim().is_empty() {
            return Err(error(key, "expected a file path, got an empty string"));
        }
        let path = Path::new(&spec);
        Ok(Some(match &scenario.base_dir {
            Some(base) if path.is_relative() => base.join(path),
            _ => path.to_path_buf(),
        }))
    }

    /// A flow named by key `key` (required): its scenario index.
    pub fn flow(&self, key: &'static str, scenario: &Scenario) -> Res<usize> {
        let name = self.required(key, self.string(key)?, "a flow name")?;
        scenario
            .flows
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = scenario
                    .flows
                    .iter()
                    .take(20)
                    .map(|f| f.name.as_str())
                    .collect();
                error(
                    key,
                    format!("unknown flow {name:?}; flows are: {}", names.join(", ")),
                )
            })
    }

    /// A link named by key `key` (required): its scenario index.
    pub fn link(&self, key: &'static str, scenario: &Scenario) -> Res<usize> {
        let name = self.required(key, self.string(key)?, "a link name")?;
        scenario
            .links
            .iter()
            .position(|l| l.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = scenario.links.iter().map(|l| l.name.as_str()).collect();
                error(
                    key,
                    format!("unknown link {name:?}; links are: {}", names.join(", ")),
                )
            })
    }

    /// Rejects every key no getter asked for, listing the accepted ones.
    pub fn finish(self) -> Res<()> {
        let read = self.read.into_inner();
        for key in self.spec.params.keys() {
            if !read.contains(&key.as_str()) {
                let mut accepted = vec!["kind"];
                accepted.extend(read.iter().copied());
                return Err(error(
                    key,
                    format!("unknown key; accepted: {}", accepted.join(", ")),
                ));
            }
        }
        Ok(())
    }
}

/// Builds every component of `specs` (a scenario's `[[elements]]` or `[[controllers]]`) with the
/// builder `registry` lists for its kind (already validated by the parser), rejects the keys
/// the builder did not read, and names the component's key in every error.
pub fn build_components<T>(
    specs: &[ComponentSpec],
    scenario: &Scenario,
    registry: &[(
        &str,
        fn(&ComponentParams, &Scenario) -> Result<T, ComponentError>,
    )],
) -> Result<Vec<T>, ScenarioError> {
    specs
        .iter()
        .map(|spec| {
            let (_, build) = registry
                .iter()
                .find(|(k, _)| *k == spec.kind)
                .expect("kind validated by the parser");
            let params = ComponentParams::new(spec);
            let built = build(&params, scenario).and_then(|c| params.finish().map(|_| c));
            built.map_err(|e| {
                ScenarioError::new(
                    &scenario.source,
                    format!("{}.{}", spec.location, e.key),
                    e.message,
                )
            })
        })
        .collect()
}
