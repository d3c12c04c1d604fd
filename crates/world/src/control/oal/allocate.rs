//! OAL's rate control arithmetic (seed-004 §6): the utility model's allocation (Eqs. 2–5), the
//! rate-to-window mapping, the receive-window rewrite of an ACK, and the authors' per-class
//! fraction rule kept as an ablation.
//!
//! **Eq. 5 is a Nash equilibrium, not a joint optimum.** Eq. 4 differentiates each flow's own
//! utility u_i = c_i ln x_i − x_i (1/(1 − l_i) − 1) with l_i from Eq. 2 (so the penalty is
//! x_i (Σx/C − 1)); setting it to zero with Σx = C gives x_i = √(C·c_i), and the constraint
//! Σ√c_i = √C makes the rates fill C exactly. The joint maximiser of Σ_i u_i is another point
//! (proportional to c_i); with equal weights both are C/n. The tests check Eq. 5 against a
//! numeric best-response equilibrium of Eqs. 2–3.

/// Eq. 5, seed-004: x_i = √(C·c_i) with the weights scaled so that Σ√c_i = √C (the paper's
/// constraint), i.e. x_i = C·√w_i / Σ√w_j for relative weights w. Writes one rate per weight
/// into `rates` (same length); zero or negative weights get rate 0. Rates are in the unit of
/// `capacity`.
pub fn utility_rates(capacity: f64, weights: &[f64], rates: &mut [f64]) {
    debug_assert_eq!(weights.len(), rates.len());
    let sum_sqrt: f64 = weights.iter().map(|&w| w.max(0.0).sqrt()).sum();
    for (x, &w) in rates.iter_mut().zip(weights) {
        *x = if sum_sqrt > 0.0 {
            capacity * w.max(0.0).sqrt() / sum_sqrt
        } else {
            0.0
        };
    }
}

/// Eq. 2: the congestion drop ratio every flow of the AP sees at total rate `total`.
pub fn drop_ratio(capacity: f64, total: f64) -> f64 {
    if total > capacity {
        1.0 - capacity / total
    } else {
        0.0
    }
}

/// Eq. 3: flow utility c ln x − x (1/(1 − l) − 1).
pub fn utility(c: f64, x: f64, l: f64) -> f64 {
    c * x.ln() - x * (1.0 / (1.0 - l) - 1.0)
}

/// The receive-window field an AP writes into an ACK, as bytes: the target `target_bytes`
/// encoded in the 16-bit field at window scale `wscale` (RFC 7323: the field is the window
/// shifted right by the scale), never above what the client advertised (`advertised_bytes`,
/// itself as its field carries it), and never below `floor_bytes` unless the client advertised
/// less. Returns the window the sender will read (`field << wscale`).
pub fn rewritten_window(advertised_bytes: u64, target_bytes: u64, floor_bytes: u64, wscale: u8) -> u64 {
    if target_bytes >= advertised_bytes {
        return advertised_bytes;
    }
    let advertised_field = (advertised_bytes >> wscale).min(u16::MAX as u64);
    // The floor rounds up to a whole unit of 2^wscale so it is never cut below.
    let floor_field = floor_bytes.div_ceil(1 << wscale);
    let target_field = (target_bytes >> wscale).max(floor_field);
    let field = target_field.min(advertised_field);
    // Never raise: the advertised value itself may not be a multiple of 2^wscale.
    (field << wscale).min(advertised_bytes)
}

/// Linux's receive window scale for a receiver whose window can reach `max_window_bytes`
/// (`tcp_select_initial_window`, net/ipv4/tcp_output.c: shift the space right until it fits
/// 16 bits, at most `TCP_MAX_WSCALE` = 14).
pub fn linux_wscale(max_window_bytes: u64) -> u8 {
    let mut space = max_window_bytes;
    let mut wscale = 0u8;
    while space > u16::MAX as u64 && wscale < 14 {
        space >>= 1;
        wscale += 1;
    }
    wscale
}

/// The authors' per-class rule (repository `createtree.c` `set_cwnd()`, seed-004 §2.5), the
/// ablation `allocation = "fraction"`: the window for a predicted class (0 Good, 1 Acceptable,
/// 2 Poor, 3 Bad) from the current window: keep, ×3/4, ×1/2, and 1 segment for Bad.
pub fn fraction_window(class: u8, window_bytes: f64, mss_bytes: f64) -> f64 {
    match class {
        0 => window_bytes,
        1 => window_bytes * 3.0 / 4.0,
        2 => window_bytes / 2.0,
        _ => mss_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A numeric Nash equilibrium of Eqs. 2–3: each flow in turn maximises its own utility
    /// given the others' rates (golden-section search on x_i), until nothing moves.
    fn best_response_equilibrium(capacity: f64, c: &[f64]) -> Vec<f64> {
        let n = c.len();
        let mut x = vec![capacity / n as f64 * 0.5; n];
        for _ in 0..2000 {
            let mut moved = 0.0f64;
            for i in 0..n {
                let others: f64 = x.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, v)| v).sum();
                let u = |xi: f64| utility(c[i], xi, drop_ratio(capacity, others + xi));
                let (mut a, mut b) = (1e-9 * capacity, 4.0 * capacity);
                let g = (5f64.sqrt() - 1.0) / 2.0;
                for _ in 0..200 {
                    let (m1, m2) = (b - g * (b - a), a + g * (b - a));
                    if u(m1) < u(m2) {
                        a = m1;
                    } else {
                        b = m2;
                    }
                }
                let new = (a + b) / 2.0;
                moved = moved.max((new - x[i]).abs());
                x[i] = new;
            }
            if moved < 1e-12 * capacity {
                break;
            }
        }
        x
    }

    #[test]
    fn eq5_rates_sum_to_capacity_and_match_the_numeric_equilibrium() {
        let capacity = 20e6;
        for relative in [vec![1.0, 1.0, 1.0], vec![1.0, 4.0, 9.0], vec![0.2, 3.0, 1.0, 7.5]] {
            let mut x = vec![0.0; relative.len()];
            utility_rates(capacity, &relative, &mut x);
            let sum: f64 = x.iter().sum();
            assert!((sum - capacity).abs() < 1e-6, "{sum}");
            // The weights the paper's constraint implies: c_i = x_i² / C, Σ√c_i = √C.
            let c: Vec<f64> = x.iter().map(|xi| xi * xi / capacity).collect();
            let sqrt_sum: f64 = c.iter().map(|v| v.sqrt()).sum();
            assert!((sqrt_sum - capacity.sqrt()).abs() < 1e-6 * capacity.sqrt());
            let eq = best_response_equilibrium(capacity, &c);
            for (a, b) in x.iter().zip(&eq) {
                assert!((a - b).abs() < 1e-6 * capacity, "Eq. 5 {a} vs numeric {b}");
            }
        }
        // Hand value: weights 1, 4, 9 → √ 1, 2, 3 → C/6, 2C/6, 3C/6.
        let mut x = [0.0; 3];
        utility_rates(6.0, &[1.0, 4.0, 9.0], &mut x);
        assert_eq!(x, [1.0, 2.0, 3.0]);
    }

    #[test]
    fn window_rewrite_scales_by_the_window_scale_and_never_raises() {
        for wscale in 0u8..=14 {
            let unit = 1u64 << wscale;
            // A client advertisement as its field carries it: 40000 units (or the field's max).
            let advertised = 40_000u64.min(u16::MAX as u64) * unit;
            let target = 12_345 * unit + unit - 1; // not a multiple of the unit
            let written = rewritten_window(advertised, target, 0, wscale);
            assert_eq!(written, 12_345 * unit, "wscale {wscale}");
            assert_eq!(written >> wscale, 12_345);
            // A target above the advertisement leaves the advertisement.
            assert_eq!(rewritten_window(advertised, advertised * 3, 0, wscale), advertised);
            // An advertisement not a multiple of the unit is never raised.
            let odd = advertised - 1;
            assert!(rewritten_window(odd, u64::MAX >> 20, 0, wscale) <= odd);
            // The floor rounds up to whole units, but not above the advertisement.
            assert_eq!(rewritten_window(advertised, 0, 2896, wscale), 2896u64.div_ceil(unit) * unit);
            assert_eq!(rewritten_window(1000, 0, 2896, wscale), (1000 >> wscale) << wscale);
        }
        // Hand values: wscale 7 (Linux's for a 6 MB buffer), target 100 kB → field 781.
        assert_eq!(rewritten_window(6_291_456, 100_000, 0, 7), 781 * 128);
        // The paper's Fig. 2 example, unscaled: 1000 → 800.
        assert_eq!(rewritten_window(1000, 800, 0, 0), 800);
    }

    #[test]
    fn linux_wscale_fits_the_window_in_16_bits() {
        assert_eq!(linux_wscale(65_535), 0);
        assert_eq!(linux_wscale(65_536), 1);
        assert_eq!(linux_wscale(6_291_456), 7); // tcp_rmem[2] = 6 MB
        assert_eq!(linux_wscale(1 << 40), 14);
    }

    #[test]
    fn fraction_rule_per_class() {
        assert_eq!(fraction_window(0, 8000.0, 1448.0), 8000.0);
        assert_eq!(fraction_window(1, 8000.0, 1448.0), 6000.0);
        assert_eq!(fraction_window(2, 8000.0, 1448.0), 4000.0);
        assert_eq!(fraction_window(3, 8000.0, 1448.0), 1448.0);
    }
}
