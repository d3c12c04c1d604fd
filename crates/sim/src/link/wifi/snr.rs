//! A station's SNR over time: none (an error-free channel), fixed, or a trace of (time, dB)
//! points held from each point to the next ([GAP] a step function, no interpolation; before the
//! first point the first value holds). The channel is reciprocal: the AP's frames to the
//! station and the station's frames to the AP see the same SNR.

use crate::Nanos;

#[derive(Debug, Clone, PartialEq)]
pub enum Snr {
    /// No `snr` or `snr_trace`: every frame that does not collide is received.
    Perfect,
    Fixed(f64),
    /// (time, dB) points, times strictly increasing.
    Trace(Vec<(Nanos, f64)>),
}

impl Snr {
    /// The SNR at `now`, dB; `None` for a perfect channel.
    pub fn at(&self, now: Nanos) -> Option<f64> {
        match self {
            Snr::Perfect => None,
            Snr::Fixed(db) => Some(*db),
            Snr::Trace(points) => {
                let i = points.partition_point(|&(t, _)| t <= now);
                Some(points[i.saturating_sub(1)].1)
            }
        }
    }
}

/// Reads an SNR trace's text: one `time_s dB` pair a line (whitespace or a comma between),
/// `#` comments and blank lines ignored; times in seconds, strictly increasing, at least one
/// point. Errors name the line.
pub fn parse_trace(text: &str) -> Result<Vec<(Nanos, f64)>, String> {
    let mut points: Vec<(Nanos, f64)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        let bad = || {
            format!(
                "line {}: expected \"time_s dB\" like \"1.5 20\", got {line:?}",
                n + 1
            )
        };
        let [t, db] = fields[..] else {
            return Err(bad());
        };
        let (Ok(t), Ok(db)) = (t.parse::<f64>(), db.parse::<f64>()) else {
            return Err(bad());
        };
        push_point(&mut points, t, db).map_err(|m| format!("line {}: {m}", n + 1))?;
    }
    if points.is_empty() {
        return Err("no (time, dB) points".into());
    }
    Ok(points)
}

/// Appends a (seconds, dB) point, checking it.
pub fn push_point(points: &mut Vec<(Nanos, f64)>, t_s: f64, db: f64) -> Result<(), String> {
    if !((0.0..1e9).contains(&t_s) && db.is_finite()) {
        return Err(format!(
            "a time of at least 0 s and a finite dB, got ({t_s}, {db})"
        ));
    }
    let t = (t_s * 1e9).round() as Nanos;
    if points.last().is_some_and(|&(last, _)| t <= last) {
        return Err(format!(
            "times must increase, got {t_s} s after a later or equal one"
        ));
    }
    points.push((t, db));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_holds_each_value_until_the_next_point() {
        let s = Snr::Trace(parse_trace("# t dB\n0 30\n2.5, 10\n\n4 20 # later\n").unwrap());
        assert_eq!(s.at(0), Some(30.0));
        assert_eq!(s.at(2_499_999_999), Some(30.0));
        assert_eq!(s.at(2_500_000_000), Some(10.0));
        assert_eq!(s.at(100_000_000_000), Some(20.0));
        let s = Snr::Trace(parse_trace("1 5").unwrap());
        assert_eq!(s.at(0), Some(5.0));
        assert_eq!(Snr::Perfect.at(5), None);
    }

    #[test]
    fn bad_traces_name_the_line() {
        assert!(parse_trace("0 30\n1\n").unwrap_err().starts_with("line 2"));
        assert!(parse_trace("0 30\n0 20\n")
            .unwrap_err()
            .contains("increase"));
        assert!(parse_trace("# nothing\n").unwrap_err().contains("no (time"));
    }
}
