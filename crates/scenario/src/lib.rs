//! rove's scenario format, parsed and validated in one place for every backend.
//!
//! `parse` turns TOML text (plus `--set KEY=VALUE` overrides) into a [`Scenario`] whose values
//! are in engine units and whose references are resolved. Anything wrong gets a
//! [`ScenarioError`] naming the file and the key (or line) and saying what is accepted.

pub mod component;
pub mod error;
pub mod parse;
pub mod seed;
pub mod selection;
pub mod spec;
pub mod trace;
pub mod units;

pub use error::ScenarioError;
pub use parse::{parse, parse_action, parse_file, with_file, ParseOptions, MAX_SUBFLOWS};
pub use seed::stream_seed;
pub use spec::*;
