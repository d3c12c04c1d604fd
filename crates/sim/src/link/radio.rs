//! What the radio link models (`wifi`, `lte`) share: the complementary error function of their
//! error models, and the wording of their key errors.

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
