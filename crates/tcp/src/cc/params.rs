//! Reading `cc_params`: one set of typed getters every algorithm uses, with one wording of
//! errors (the key, what was given, what is accepted). Each algorithm turns its table into its
//! own typed parameter struct once, when the scenario is built (so `rove validate` reports a
//! bad parameter), and first rejects unknown keys with [`super::reject_unknown`].

use super::ParamError;

fn bad(key: &str, message: String) -> ParamError {
    ParamError {
        key: key.to_string(),
        message,
    }
}

/// `true` or `false`; `default` when absent.
pub fn boolean(t: &toml::Table, key: &str, default: bool) -> Result<bool, ParamError> {
    Ok(optional_boolean(t, key)?.unwrap_or(default))
}

/// `true` or `false`, or `None` when absent.
pub fn optional_boolean(t: &toml::Table, key: &str) -> Result<Option<bool>, ParamError> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
        Some(v) => Err(bad(
            key,
            format!(
                "expected a boolean (true or false), got {} {v}",
                v.type_str()
            ),
        )),
    }
}

/// An integer in `min..=max` (`unit` names what it counts); `default` when absent.
pub fn integer(
    t: &toml::Table,
    key: &str,
    default: u32,
    min: u32,
    max: u32,
    unit: &str,
) -> Result<u32, ParamError> {
    match t.get(key) {
        None => Ok(default),
        Some(toml::Value::Integer(i)) if (min as i64..=max as i64).contains(i) => Ok(*i as u32),
        Some(toml::Value::Integer(i)) => Err(bad(
            key,
            format!("{i} is out of range; accepted: an integer in {min}..={max} ({unit})"),
        )),
        Some(v) => Err(bad(
            key,
            format!(
                "expected an integer in {min}..={max} ({unit}), got {} {v}",
                v.type_str()
            ),
        )),
    }
}

/// A finite number (integer or float), or `None` when absent.
pub fn number(t: &toml::Table, key: &str) -> Result<Option<f64>, ParamError> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::Float(f)) if f.is_finite() => Ok(Some(*f)),
        Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
        Some(v) => Err(bad(
            key,
            format!("expected a number, got {} {v}", v.type_str()),
        )),
    }
}

/// One of `accepted`; `default` when absent.
pub fn choice<'a>(
    t: &toml::Table,
    key: &str,
    default: &'a str,
    accepted: &[&'a str],
) -> Result<&'a str, ParamError> {
    match t.get(key) {
        None => Ok(default),
        Some(toml::Value::String(s)) => accepted
            .iter()
            .find(|a| **a == s.as_str())
            .copied()
            .ok_or_else(|| {
                let list: Vec<String> = accepted.iter().map(|a| format!("\"{a}\"")).collect();
                bad(
                    key,
                    format!("unknown value \"{s}\"; accepted: {}", list.join(", ")),
                )
            }),
        Some(v) => Err(bad(
            key,
            format!("expected a string, got {} {v}", v.type_str()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn getters_read_defaults_values_and_name_the_key_in_errors() {
        let t = table("a = true\nn = 5\nx = 2.5\ns = \"two\"");
        assert!(boolean(&t, "a", false).unwrap());
        assert!(!boolean(&t, "missing", false).unwrap());
        assert_eq!(integer(&t, "n", 1, 1, 10, "packets").unwrap(), 5);
        assert_eq!(number(&t, "x").unwrap(), Some(2.5));
        assert_eq!(number(&t, "n").unwrap(), Some(5.0));
        assert_eq!(choice(&t, "s", "one", &["one", "two"]).unwrap(), "two");
        let e = integer(&t, "n", 1, 1, 4, "packets").unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            (
                "n",
                "5 is out of range; accepted: an integer in 1..=4 (packets)"
            )
        );
        let e = boolean(&t, "n", false).unwrap_err();
        assert_eq!(
            e.message,
            "expected a boolean (true or false), got integer 5"
        );
        let e = choice(&t, "s", "one", &["one", "three"]).unwrap_err();
        assert_eq!(
            e.message,
            "unknown value \"two\"; accepted: \"one\", \"three\""
        );
        assert!(number(&t, "s")
            .unwrap_err()
            .message
            .starts_with("expected a number"));
    }
}
