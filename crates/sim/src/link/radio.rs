//! What the radio link models (`wifi`, `lte`) share: the complementary error function of their
//! error models, the reading of their unit-bearing keys (dB, distances, speeds, directions),
//! and the wording of their key errors.

use toml::Value;

/// The complementary error function (Numerical Recipes in C, 2nd ed., §6.2, `erfcc`: a
/// Chebyshev fit with fractional error below 1.2e-7 everywhere).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let ans = t * poly.exp();
    if x >= 0.0 {
        ans
    } else {
        2.0 - ans
    }
}

/// A key error: the key, and "expected ACCEPTED, got VALUE".
pub(crate) fn bad(key: &str, v: &Value, accepted: &str) -> (String, String) {
    (
        key.into(),
        format!("expected {accepted}, got {}", describe(v)),
    )
}

/// A value as a key error names it.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Table(_) => "a table".into(),
        Value::Array(_) => "an array".into(),
        other => format!("{other}"),
    }
}

/// A number, or a string of a number with `unit` (`"20dB"`).
pub(crate) fn read_unit(v: &Value, unit: &str) -> Option<f64> {
    let x = match v {
        Value::Integer(n) => *n as f64,
        Value::Float(f) => *f,
        Value::String(s) => s.trim().strip_suffix(unit)?.trim().parse().ok()?,
        _ => return None,
    };
    x.is_finite().then_some(x)
}

/// Metres: a number, `"500m"` or `"1.2km"`.
pub(crate) fn read_distance(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => {
            let s = s.trim();
            if let Some(km) = s.strip_suffix("km") {
                return km.trim().parse::<f64>().ok().map(|x| x * 1000.0);
            }
            s.strip_suffix('m')?.trim().parse().ok()
        }
        v => read_unit(v, ""),
    }
    .filter(|x: &f64| x.is_finite())
}

/// m/s: `"120km/h"`, `"30m/s"`, or a number of m/s.
pub(crate) fn read_speed(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => {
            let s = s.trim();
            if let Some(k) = s.strip_suffix("km/h") {
                return k.trim().parse::<f64>().ok().map(|x| x / 3.6);
            }
            s.strip_suffix("m/s")?.trim().parse().ok()
        }
        v => read_unit(v, ""),
    }
    .filter(|x: &f64| x.is_finite())
}

/// `direction`: +1 moving away from the cell (`"backward"`, the default), -1 towards it
/// (`"forward"`); `towards` names the cell in the error ("the eNodeB", "the AP").
pub(crate) fn read_direction(
    key: &str,
    v: Option<&Value>,
    towards: &str,
) -> Result<f64, (String, String)> {
    match v {
        None => Ok(1.0),
        Some(Value::String(s)) if s == "backward" => Ok(1.0),
        Some(Value::String(s)) if s == "forward" => Ok(-1.0),
        Some(v) => Err(bad(
            key,
            v,
            &format!("\"forward\" (towards {towards}) or \"backward\" (away from it)"),
        )),
    }
}
