//! rove's scenario format, parsed and validated in one place for every backend.
//!
//! `parse` turns TOML text (plus `--set KEY=VALUE` overrides) into a [`Scenario`] whose values
//! are in engine units and whose references are resolved. Anything wrong gets a
//! [`ScenarioError`] naming the file and the key (or line) and saying what is accepted.

pub mod spec;
pub mod error;
pub mod units;
pub mod parse;
pub mod trace;
pub mod seed;

pub use error::ScenarioError;
pub use parse::{parse, parse_file, ParseOptions};
pub use seed::stream_seed;
pub use spec::*;
