//! A WiFi station moving within its cell: its SNR from its distance to the AP through the
//! log-distance path loss and the link budget (docs/radio.md, `wifi/snr.rs`), and the rate the
//! cell's rate control then gives it.

use crate::common;

use common::run;

/// One 802.11a station starting `distance` from the AP and moving at 2 m/s (`direction`),
/// sending 40 Mbit/s of 1500-byte CBR uplink (saturating: at most 30.5 Mbit/s at 54 Mbit/s)
/// for 30 s with rate control `mcs`; the cell sampled every 10 ms.
fn moving(mcs: &str, distance: &str, direction: &str) -> String {
    format!(
        r#"
duration = "30s"
[links.air]
kind = "wifi"
mcs = {mcs}
retry_limit = 1000000
[links.air.stations.s1]
distance = "{distance}"
speed = "2m/s"
direction = "{direction}"
[[flows]]
name = "s1"
workload = "cbr"
rate = "40Mbps"
path = ["air:s1:up"]
"#
    )
}

/// The station's uplink throughput per 5 s window, Mbit/s, from `radio.parquet`'s rows of
/// port "s1:up" (cumulative tx bytes), and its `signal_db` at 10 s.
fn windows(toml: &str) -> (Vec<f64>, f64) {
    let (w, _) = run(toml);
    let r = &w.recorder.radio;
    let up = |i: usize| r.port[i] == 1;
    let bytes_at = |t: f64| {
        (0..r.len())
            .filter(|&i| up(i) && r.time_s[i] <= t + 1e-9)
            .map(|i| r.tx_bytes[i])
            .next_back()
            .unwrap_or(0) as f64
    };
    let rates = (0..6)
        .map(|k| {
            let (a, b) = (5.0 * k as f64, 5.0 * (k + 1) as f64);
            (bytes_at(b) - bytes_at(a)) * 8.0 / 5.0 / 1e6
        })
        .collect();
    let signal = (0..r.len())
        .find(|&i| up(i) && (r.time_s[i] - 10.0).abs() < 1e-9)
        .map(|i| r.signal_db[i])
        .expect("a sample at 10 s");
    (rates, signal)
}

/// A station walking away from the AP at 2 m/s from 5 m (to 65 m at 30 s) loses rate as its
/// SNR falls; one walking towards it from 65 m gains it. With the default budget (16.02 dBm,
/// 7 dB noise figure: noise -93.99 dBm over 20 MHz; PL = 46.68 + 30 log10(d)) the SNR is
/// 21.39 dB at 25 m (the walker away at 10 s; PL 88.62 dB), 54 Mbit/s works to about 20 m
/// (24 dB) and at 65 m (8.9 dB) only 9-12 Mbit/s do.
/// Measured, Mbit/s per 5 s window, away: `ideal` 30.5, 29.0, 23.1, 17.0, 14.1, 11.0;
/// `minstrel` 30.2, 29.2, 21.8, 16.8, 13.1, 11.5; towards: `ideal` 11.0, 14.0, 17.0, 23.0,
/// 29.1, 30.5; `minstrel` 11.5, 13.6, 17.2, 22.2, 29.5, 30.5.
#[test]
fn a_station_moving_away_from_the_ap_loses_rate_as_its_snr_falls() {
    for mcs in ["\"ideal\"", "\"minstrel\""] {
        for (direction, start) in [("backward", "5m"), ("forward", "65m")] {
            let (rates, signal) = windows(&moving(mcs, start, direction));
            eprintln!("{mcs} {direction}: {rates:.1?} Mbit/s, signal at 10 s {signal:.3} dB");
            let mut ordered = rates.clone();
            if direction == "forward" {
                ordered.reverse();
            }
            for w in ordered.windows(2) {
                assert!(w[1] <= w[0] * 1.01, "{mcs} {direction}: {rates:?}");
            }
            assert!(
                ordered[5] < 0.5 * ordered[0],
                "{mcs} {direction}: {rates:?}"
            );
            // 25 m away at 10 s (5 + 20 m, or 65 - 20 m = 45 m towards).
            let expected = if direction == "backward" {
                21.3944
            } else {
                // PL(45 m) = 46.6777 + 30 log10(45) = 96.2741: 13.7362 dB.
                13.7362
            };
            assert!((signal - expected).abs() < 1e-3, "{signal}");
        }
    }
}
