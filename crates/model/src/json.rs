//! Reading fields of a parsed JSON model with errors that name the field's path
//! (`learner.gradient_booster.model.trees[3].split_indices`).

use serde_json::Value;

pub(crate) type Res<T> = Result<T, String>;

/// The name of a JSON value's type, for errors.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `v[key]`, required.
pub(crate) fn field<'a>(v: &'a Value, key: &str, path: &str) -> Res<&'a Value> {
    match v {
        Value::Object(m) => m
            .get(key)
            .ok_or_else(|| format!("{} is missing", join(path, key))),
        other => Err(format!("{path} should be an object, is {}", kind(other))),
    }
}

pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

pub(crate) fn array<'a>(v: &'a Value, path: &str) -> Res<&'a Vec<Value>> {
    v.as_array()
        .ok_or_else(|| format!("{path} should be an array, is {}", kind(v)))
}

pub(crate) fn string<'a>(v: &'a Value, path: &str) -> Res<&'a str> {
    v.as_str()
        .ok_or_else(|| format!("{path} should be a string, is {}", kind(v)))
}

/// A whole number, written as a number or (XGBoost's parameters) as a string: `"4"`.
pub(crate) fn integer(v: &Value, path: &str) -> Res<i64> {
    let parsed = match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    parsed.ok_or_else(|| format!("{path} should be a whole number, is {v}"))
}

pub(crate) fn float(v: &Value, path: &str) -> Res<f64> {
    v.as_f64()
        .ok_or_else(|| format!("{path} should be a number, is {}", kind(v)))
}

pub(crate) fn integers(v: &Value, path: &str) -> Res<Vec<i64>> {
    array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_i64()
                .ok_or_else(|| format!("{path}[{i}] should be a whole number, is {x}"))
        })
        .collect()
}

pub(crate) fn floats(v: &Value, path: &str) -> Res<Vec<f64>> {
    array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| float(x, &format!("{path}[{i}]")))
        .collect()
}

/// Numbers, where the strings `"inf"` and `"-inf"` stand for infinities (JSON has none).
pub(crate) fn floats_or_infinite(v: &Value, path: &str) -> Res<Vec<f64>> {
    array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| match x {
            Value::String(s) if s == "inf" => Ok(f64::INFINITY),
            Value::String(s) if s == "-inf" => Ok(f64::NEG_INFINITY),
            other => float(other, &format!("{path}[{i}]")),
        })
        .collect()
}

/// Booleans written as `true`/`false` or as 0/1 (XGBoost's `default_left`).
pub(crate) fn flags(v: &Value, path: &str) -> Res<Vec<bool>> {
    array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| match x {
            Value::Bool(b) => Ok(*b),
            Value::Number(n) if n.as_u64() == Some(0) => Ok(false),
            Value::Number(n) if n.as_u64() == Some(1) => Ok(true),
            other => Err(format!(
                "{path}[{i}] should be 0, 1 or a boolean, is {other}"
            )),
        })
        .collect()
}

/// A list of strings, or null / absent.
pub(crate) fn names(v: Option<&Value>, path: &str) -> Res<Option<Vec<String>>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let names = array(v, path)?
                .iter()
                .enumerate()
                .map(|(i, x)| string(x, &format!("{path}[{i}]")).map(str::to_string))
                .collect::<Res<Vec<_>>>()?;
            Ok(if names.is_empty() { None } else { Some(names) })
        }
    }
}
