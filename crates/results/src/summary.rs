//! `summary.json`'s text, written from Rust: the engine's summary (compact JSON, as
//! `serde_json::to_string` gives it) with `wall_s` added, laid out exactly as Python's
//! `json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False) + "\n"` lays out the same
//! dict (python/rove/results.py `summary_with_wall` and `summary_text`, which the kernel
//! backend's summaries still go through; tests/test_results_native.py holds the two to the same
//! bytes).
//!
//! What Python's layout is, and how each piece is reproduced:
//!
//! - two spaces per level, `": "` after a key, one item per line, `[]` and `{}` for empty
//!   containers; keys in the engine's order;
//! - strings as the engine wrote them: serde_json and Python escape the same characters the same
//!   way (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other controls as lowercase `\u00XX`,
//!   everything else, non-ASCII included, as itself), so a string token is copied unchanged;
//! - integers (a number without `.`, `e` or `E`, which Python reads as `int`) unchanged;
//! - floats as Python's `repr`: the shortest digits that read back to the same double (Rust's
//!   `{:e}` gives the same digits as Python's `dtoa` mode 0: both are the shortest, and of those
//!   the nearest), in positional notation when the decimal exponent `decpt` (value =
//!   0.d1d2... x 10^decpt) is in -3..=16, else `d.ddde±XX` with at least two exponent digits
//!   (CPython `Python/pystrtod.c`, `format_float_short`, mode `'r'`); a positional float with
//!   no fractional digits ends in `.0`;
//! - `wall_s`, rounded to 6 decimals as Python's `round(wall_s, 6)` (correctly rounded, as
//!   Rust's `{:.6}`), goes right after the top-level `seed`, or last when there is no `seed`;
//!   a `wall_s` in the engine's JSON is dropped first.
//!
//! NaN and infinities cannot occur: serde_json writes them as `null`, which stays `null`.

use crate::Error;

/// `summary.json`'s text (ending in a newline) for the engine's compact summary JSON and the
/// run's wall time.
pub fn summary_text(engine_json: &str, wall_s: f64) -> Result<String, Error> {
    let mut parser = Parser {
        text: engine_json.as_bytes(),
        at: 0,
    };
    let value = parser.value()?;
    parser.skip_space();
    if parser.at != parser.text.len() {
        return Err(parser.error("text after the summary"));
    }
    let Json::Object(entries) = value else {
        return Err(Error::Columns(
            "the engine's summary is not a JSON object".into(),
        ));
    };
    let wall = Json::Atom(python_float(round6(wall_s)).into());
    let mut top: Vec<(&str, Json)> = Vec::with_capacity(entries.len() + 1);
    let mut placed = false;
    for (key, value) in entries {
        if key == "\"wall_s\"" {
            continue;
        }
        let is_seed = key == "\"seed\"";
        top.push((key, value));
        if is_seed && !placed {
            top.push(("\"wall_s\"", wall.clone()));
            placed = true;
        }
    }
    if !placed {
        top.push(("\"wall_s\"", wall));
    }
    let mut out = String::with_capacity(engine_json.len() * 2);
    write(&Json::Object(top), 0, &mut out);
    out.push('\n');
    Ok(out)
}

/// `round(x, 6)` as Python computes it: the double nearest to `x` correctly rounded to six
/// decimals.
fn round6(x: f64) -> f64 {
    format!("{x:.6}").parse().unwrap_or(x)
}

/// A parsed JSON value; tokens keep the engine's text (a string with its quotes and escapes).
#[derive(Clone, Debug)]
enum Json<'a> {
    Object(Vec<(&'a str, Json<'a>)>),
    Array(Vec<Json<'a>>),
    /// A string, `true`, `false`, `null` or a number already in Python's form.
    Atom(std::borrow::Cow<'a, str>),
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, what: &str) -> Error {
        Error::Columns(format!(
            "the engine's summary JSON: {what} at byte {}",
            self.at
        ))
    }

    fn skip_space(&mut self) {
        while self.at < self.text.len() && self.text[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), Error> {
        if self.peek() != Some(byte) {
            return Err(self.error(&format!("expected {:?}", byte as char)));
        }
        self.at += 1;
        Ok(())
    }

    /// The text of `self.text[from..self.at]` (ASCII boundaries of a UTF-8 input).
    fn slice(&self, from: usize) -> &'a str {
        std::str::from_utf8(&self.text[from..self.at]).expect("cut at ASCII bytes")
    }

    fn value(&mut self) -> Result<Json<'a>, Error> {
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Json::Atom(self.string()?.into())),
            Some(b't' | b'f' | b'n') => {
                let from = self.at;
                while self.at < self.text.len() && self.text[self.at].is_ascii_alphabetic() {
                    self.at += 1;
                }
                match self.slice(from) {
                    word @ ("true" | "false" | "null") => Ok(Json::Atom(word.into())),
                    _ => Err(self.error("unknown word")),
                }
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("expected a value")),
        }
    }

    fn object(&mut self) -> Result<Json<'a>, Error> {
        self.expect(b'{')?;
        let mut entries = Vec::new();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(entries));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key"));
            }
            let key = self.string()?;
            self.expect(b':')?;
            entries.push((key, self.value()?));
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Json::Object(entries));
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self) -> Result<Json<'a>, Error> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value()?);
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    /// A string token with its quotes, as written.
    fn string(&mut self) -> Result<&'a str, Error> {
        let from = self.at;
        self.at += 1; // the opening quote
        while self.at < self.text.len() {
            match self.text[self.at] {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Ok(self.slice(from));
                }
                _ => self.at += 1,
            }
        }
        Err(self.error("unterminated string"))
    }

    fn number(&mut self) -> Result<Json<'a>, Error> {
        let from = self.at;
        while self.at < self.text.len()
            && matches!(
                self.text[self.at],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
            )
        {
            self.at += 1;
        }
        let token = self.slice(from);
        if !token.contains(['.', 'e', 'E']) {
            return Ok(Json::Atom(token.into())); // an integer: Python keeps its digits
        }
        let x: f64 = token.parse().map_err(|_| self.error("bad number"))?;
        Ok(Json::Atom(python_float(x).into()))
    }
}

/// `repr(x)` of a finite Python float (see the module doc).
pub fn python_float(x: f64) -> String {
    // "d.ddde-5" / "de7": the shortest round-trip digits and the exponent of the first. Where two
    // strings of that length are equally near x (562949953421312.25: ".2" and ".3"), Rust's `{:e}`
    // may write either, Python's repr the one x rounds to half-to-even; x correctly rounded to
    // that many digits (`{:.N$e}`, exact) is Python's choice whenever it reads back as x.
    let shortest = format!("{:e}", x.abs());
    let n = shortest.split_once('e').map_or(0, |(m, _)| m.len() - m.contains('.') as usize);
    let rounded = format!("{:.*e}", n.saturating_sub(1), x.abs());
    let sci = if rounded.parse::<f64>() == Ok(x.abs()) { rounded } else { shortest };
    let (mantissa, exp) = sci.split_once('e').expect("{:e} writes an exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().expect("{:e} writes an integer exponent");
    let decpt = exp + 1; // x = 0.d1d2... x 10^decpt
    let mut out = String::with_capacity(digits.len() + 8);
    if x.is_sign_negative() {
        out.push('-');
    }
    if x == 0.0 {
        out.push_str("0.0");
    } else if !(-3..=16).contains(&decpt) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&format!(
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        ));
    } else if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-decpt) as usize));
        out.push_str(&digits);
    } else if (decpt as usize) < digits.len() {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    } else {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', decpt as usize - digits.len()));
        out.push_str(".0");
    }
    out
}

fn indent(level: usize, out: &mut String) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', 2 * level));
}

fn write(value: &Json<'_>, level: usize, out: &mut String) {
    match value {
        Json::Atom(text) => out.push_str(text),
        Json::Object(entries) if entries.is_empty() => out.push_str("{}"),
        Json::Array(items) if items.is_empty() => out.push_str("[]"),
        Json::Object(entries) => {
            out.push('{');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(level + 1, out);
                out.push_str(key);
                out.push_str(": ");
                write(value, level + 1, out);
            }
            indent(level, out);
            out.push('}');
        }
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(level + 1, out);
                write(item, level + 1, out);
            }
            indent(level, out);
            out.push(']');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tie_between_two_shortest_strings_goes_as_pythons_repr() {
        // 562949953421312.25 (2^49 + 1/4): ".2" and ".3" are both 16 digits and 0.05 away;
        // repr(562949953421312.2) == '562949953421312.2' (found by the hypothesis test).
        assert_eq!(python_float(562949953421312.2), "562949953421312.2");
        assert_eq!(python_float(-562949953421312.2), "-562949953421312.2");
    }

    #[test]
    fn floats_are_written_as_python_repr_writes_them() {
        // Each right-hand side is CPython 3.11's repr() of the same double.
        for (x, repr) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (12.5, "12.5"),
            (1e-4, "0.0001"),
            (1.5e-4, "0.00015"),
            (1e-5, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (1e15, "1000000000000000.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (1e16, "1e+16"),
            (1.2345e16, "1.2345e+16"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.30000000000000004, "0.30000000000000004"),
            (123456.789, "123456.789"),
        ] {
            assert_eq!(python_float(x), repr, "{x:e}");
        }
    }

    #[test]
    fn wall_s_goes_after_seed_rounded_to_six_decimals() {
        let text = summary_text(r#"{"scenario":"demo","seed":3,"flows":[]}"#, 0.1234567).unwrap();
        assert_eq!(
            text,
            "{\n  \"scenario\": \"demo\",\n  \"seed\": 3,\n  \"wall_s\": 0.123457,\n  \"flows\": []\n}\n"
        );
    }

    #[test]
    fn without_seed_wall_s_comes_last_and_an_engine_wall_s_is_dropped() {
        let text = summary_text(r#"{"wall_s":9.0,"a":{}}"#, 2.0).unwrap();
        assert_eq!(text, "{\n  \"a\": {},\n  \"wall_s\": 2.0\n}\n");
    }

    #[test]
    fn nesting_strings_and_numbers_keep_their_text() {
        let engine = r#"{"seed":1,"flows":[{"name":"a \"b\"\\\n","x":[1,2.50,-3e-7,null,true]}],"n":18446744073709551615}"#;
        let text = summary_text(engine, 0.0).unwrap();
        let expected = "{\n  \"seed\": 1,\n  \"wall_s\": 0.0,\n  \"flows\": [\n    {\n      \
            \"name\": \"a \\\"b\\\"\\\\\\n\",\n      \"x\": [\n        1,\n        2.5,\n        \
            -3e-07,\n        null,\n        true\n      ]\n    }\n  ],\n  \
            \"n\": 18446744073709551615\n}\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn bad_json_is_an_error_not_a_panic() {
        for bad in [
            "",
            "[1]",
            "{\"a\":}",
            "{\"a\":1",
            "{\"a\":1} x",
            "{\"a\":tru}",
        ] {
            assert!(summary_text(bad, 0.0).is_err(), "{bad:?}");
        }
    }
}
