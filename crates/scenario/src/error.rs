//! The one error type of scenario handling.
//!
//! Every problem with a scenario (a TOML syntax error, an unknown key, a bad unit, a trace file
//! that cannot be read) becomes a [`ScenarioError`] that names the file, where in it the problem is,
//! and what is accepted, printed on one line:
//!
//! ```text
//! scenarios/demo.toml: links.down.rate: expected a rate like "20Mbps" (units: ...), got "20 furlongs"
//! ```

use std::fmt;

/// A problem with a scenario, a trace file or a `--set` override.
///
/// `Display` prints `"{file}: {location}: {message}"` on a single line: any line break that slipped
/// into a field (an OS error message, a TOML parser message) is printed as a space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file the problem is in: a scenario path, `"<dict>"`/`"<string>"` for in-memory
    /// scenarios, a trace path, or `"synth:KIND"` for synthetic-trace parameters.
    pub file: String,
    /// Where in the file: a key path (`links.down.rate`, `flows[1].path[0]`), `line N` (TOML syntax
    /// errors, trace lines), or `--set KEY` for an override that cannot be applied.
    pub location: String,
    /// What is wrong and what is accepted.
    pub message: String,
}

impl ScenarioError {
    pub fn new(
        file: impl Into<String>,
        location: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ScenarioError {
            file: file.into(),
            location: location.into(),
            message: message.into(),
        }
    }

    /// The same error with `prefix` put in front of its location, joined by a dot:
    /// `trace_params.mean` becomes `links.down.trace_params.mean`.
    pub fn within(mut self, prefix: &str) -> Self {
        if !prefix.is_empty() {
            self.location = if self.location.is_empty() {
                prefix.to_string()
            } else {
                format!("{prefix}.{}", self.location)
            };
        }
        self
    }

    /// The same error attributed to another file.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = file.into();
        self
    }
}

/// Writes `text` with every line break (and other control character) replaced by a space.
fn write_one_line(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    if !text.chars().any(char::is_control) {
        return f.write_str(text);
    }
    for c in text.chars() {
        if c.is_control() {
            f.write_str(" ")?;
        } else {
            write!(f, "{c}")?;
        }
    }
    Ok(())
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_one_line(f, &self.file)?;
        f.write_str(": ")?;
        write_one_line(f, &self.location)?;
        f.write_str(": ")?;
        write_one_line(f, &self.message)
    }
}

impl std::error::Error for ScenarioError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_file_location_message() {
        let e = ScenarioError::new("a.toml", "links.down.rate", "bad");
        assert_eq!(e.to_string(), "a.toml: links.down.rate: bad");
    }

    #[test]
    fn display_is_one_line() {
        let e = ScenarioError::new("a\nb", "line 3", "first\nsecond\r\n");
        let s = e.to_string();
        assert!(!s.contains('\n') && !s.contains('\r'), "{s:?}");
        assert_eq!(s, "a b: line 3: first second  ");
    }

    #[test]
    fn within_prefixes_the_location() {
        let e = ScenarioError::new("synth:cellular", "trace_params.mean", "bad");
        assert_eq!(
            e.within("links.down").location,
            "links.down.trace_params.mean"
        );
        let e = ScenarioError::new("f", "", "bad");
        assert_eq!(e.within("links.down").location, "links.down");
    }
}
