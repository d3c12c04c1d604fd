//! Seed 003 Ch. 3's rate model for R-TSC, as pure functions: the delay-optimal subflow rates
//! of (3.10) and the window cap that makes a subflow average a target rate.
//!
//! **(3.10)** minimise T^s(x) + max_r T_r^n(x_r) over x ≥ 0 with Σ x_r ≥ f and x_r ≤ c_r,
//! where T^s is Kingman's send-buffer delay (3.1), (f/Σx)/(Σx − f)·(1 + C_a²)/2, and T_r^n the
//! closed-loop forward delay (3.2), c_r T_r^p/(c_r − x_r) − T_r^p/2. For a fixed sum rate the
//! max is least when every used subflow has the same delay D (the dissertation's remark), so
//! x_r(D) = max(0, c_r (D − T_r^p/2)/(D + T_r^p/2)) and the problem is one-dimensional:
//! g(D) = T^s(Σ x(D)) + D over D > D_lo, where Σ x(D_lo) = f. This is the model library's
//! water-filling solver (`rove.models.mptcp_delay.minimize_delay`, method "waterfill"): the same
//! log-spaced scan of 400 points, then a golden-section search between the best point's
//! neighbours (the library uses bounded Brent there; both stop at a 1e-12 s bracket), and
//! `delay_optimum_python_cases.toml` holds cases both must agree on.
//!
//! **Window cap.** R-TSC halves a subflow's window whenever it exceeds a cap W̄, so the
//! window cycles between β·W̄ and W̄, and the cap is the one whose cycle averages x*. The
//! dissertation searches W̄ ∈ [W^BDP, 2·W^BDP] with its LIA rate model (3.13)–(3.20); here the
//! cap inverts the single-flow cycle (3.6)–(3.9) in closed form, which is that model for an
//! uncoupled subflow (and for one subflow, the dissertation's own (3.20) case):
//! * x* ≥ (1 + β)/2 · c: the window reaches the queue; x = c(1 − β²)/(1 − 2βρ + ρ²) with
//!   ρ = W^BDP/W̄ ((3.9) for β = 1/2), so ρ = β + √(β² − 1 + c(1 − β²)/x*);
//! * below: the window never reaches the BDP, RTT = T^p and x = (1 + β)/2 · W̄/T^p ((3.8)'s
//!   phase-1 rate in the continuous limit), so W̄ = 2 x* T^p/(1 + β).
//!
//! Both meet at W̄ = W^BDP. Rates in packets/s, times in s, windows in packets.

/// Kingman's send-buffer delay (3.1), s: `inf` when Σx ≤ f.
pub fn kingman_send_delay(total_pps: f64, f_pps: f64, ca2: f64) -> f64 {
    if total_pps <= f_pps {
        return f64::INFINITY;
    }
    (f_pps / total_pps) / (total_pps - f_pps) * (1.0 + ca2) / 2.0
}

/// x_r(D): the rate whose (3.2) forward delay is `d_s` (0 when D ≤ T^p/2).
pub fn rate_at_delay(d_s: f64, c_pps: f64, tp_s: f64) -> f64 {
    (c_pps * (d_s - tp_s / 2.0) / (d_s + tp_s / 2.0)).max(0.0)
}

fn total_at(d_s: f64, c: &[f64], tp: &[f64]) -> f64 {
    c.iter()
        .zip(tp)
        .map(|(&c, &t)| rate_at_delay(d_s, c, t))
        .sum()
}

/// The solution of (3.10).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayOptimum {
    /// The common forward delay D of the used subflows, s.
    pub network_delay_s: f64,
    /// T^s at the optimum, s.
    pub send_delay_s: f64,
    /// The bound T^s + D, s.
    pub bound_s: f64,
}

/// Points of the scan before the golden-section search (the model library's `scan_points`).
const SCAN_POINTS: usize = 400;

/// Golden-section steps at most. Each narrows the bracket by 0.618, so 1e-12 s is reached in
/// under 150 steps from any bracket below 1e18 s; the cap ends the search where it cannot be
/// reached (a delay above about 4000 s, where f64's spacing exceeds 1e-12 s), leaving every
/// search that ended before unchanged.
const GOLDEN_STEPS: usize = 500;

/// Solves (3.10) for capacities `c_pps` and propagation RTTs `tp_s` (one per subflow), the
/// application rate `f_pps` and C_a² `ca2`; writes the rates into `x_pps` (same length).
/// `None` (and `x_pps` untouched) when Σc ≤ f: no finite delay exists.
pub fn minimize_delay(
    c_pps: &[f64],
    tp_s: &[f64],
    f_pps: f64,
    ca2: f64,
    x_pps: &mut [f64],
) -> Option<DelayOptimum> {
    debug_assert!(c_pps.len() == tp_s.len() && tp_s.len() == x_pps.len());
    if c_pps.is_empty() || c_pps.iter().sum::<f64>() <= f_pps || !(f_pps > 0.0) {
        return None;
    }
    // D_lo: Σ x(D) = f, by bisection (Σ x(D) rises from 0 at min T^p/2 to Σc).
    let lo0 = tp_s.iter().cloned().fold(f64::INFINITY, f64::min) / 2.0;
    let mut hi = lo0 * 2.0 + 1e-3;
    while total_at(hi, c_pps, tp_s) <= f_pps {
        hi *= 2.0;
    }
    let mut lo = lo0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if total_at(mid, c_pps, tp_s) <= f_pps {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let d_lo = hi;
    let g = |d: f64| kingman_send_delay(total_at(d, c_pps, tp_s), f_pps, ca2) + d;
    // g → ∞ at D_lo and grows like D far out: scan D_lo + (D_hi − D_lo)·geomspace(1e-9, 1),
    // doubling D_hi until D_hi alone exceeds the scan's best.
    let mut d_hi = d_lo * 2.0;
    let (mut best_i, mut best, mut grid_at);
    loop {
        let span = d_hi - d_lo;
        grid_at = move |i: usize| {
            let e = -9.0 + 9.0 * i as f64 / (SCAN_POINTS - 1) as f64;
            d_lo + 10f64.powf(e) * span
        };
        best_i = 0;
        best = f64::INFINITY;
        for i in 0..SCAN_POINTS {
            let v = g(grid_at(i));
            if v < best {
                best = v;
                best_i = i;
            }
        }
        if d_hi >= best {
            break;
        }
        d_hi *= 2.0;
    }
    let (mut a, mut b) = (
        grid_at(best_i.saturating_sub(1)),
        grid_at((best_i + 1).min(SCAN_POINTS - 1)),
    );
    // Golden-section search on [a, b].
    let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
    let (mut x1, mut x2) = (b - inv_phi * (b - a), a + inv_phi * (b - a));
    let (mut f1, mut f2) = (g(x1), g(x2));
    let mut steps = 0;
    while b - a > 1e-12 && steps < GOLDEN_STEPS {
        steps += 1;
        if f1 <= f2 {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - inv_phi * (b - a);
            f1 = g(x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + inv_phi * (b - a);
            f2 = g(x2);
        }
    }
    let golden = if f1 <= f2 { x1 } else { x2 };
    let d = if g(golden) <= best {
        golden
    } else {
        grid_at(best_i)
    };
    for ((x, &c), &t) in x_pps.iter_mut().zip(c_pps).zip(tp_s) {
        *x = rate_at_delay(d, c, t);
    }
    let ts = kingman_send_delay(x_pps.iter().sum(), f_pps, ca2);
    Some(DelayOptimum {
        network_delay_s: d,
        send_delay_s: ts,
        bound_s: ts + d,
    })
}

/// The window cap (packets) whose loss cycle with decrease factor `beta` averages `x_pps` on a
/// path of capacity `c_pps` and propagation RTT `tp_s` (module documentation); `None` when
/// x ≥ c (no cap holds a subflow below its capacity less than the path does).
pub fn window_cap(x_pps: f64, c_pps: f64, tp_s: f64, beta: f64) -> Option<f64> {
    if !(x_pps < c_pps) || !(x_pps > 0.0) {
        return None;
    }
    let w_bdp = c_pps * tp_s;
    if x_pps >= (1.0 + beta) / 2.0 * c_pps {
        let rho = beta + (beta * beta - 1.0 + c_pps * (1.0 - beta * beta) / x_pps).sqrt();
        Some(w_bdp / rho)
    } else {
        Some(2.0 * x_pps * tp_s / (1.0 + beta))
    }
}

/// (3.9) generalised to β: the mean rate of a flow whose window cycles between β·W and W
/// (the forward form of [`window_cap`], for its tests).
pub fn cycle_rate(w_cap: f64, c_pps: f64, tp_s: f64, beta: f64) -> f64 {
    let w_bdp = c_pps * tp_s;
    if w_cap <= w_bdp {
        return (1.0 + beta) / 2.0 * w_cap / tp_s;
    }
    let rho = w_bdp / w_cap;
    if rho <= beta {
        c_pps
    } else {
        c_pps * (1.0 - beta * beta) / (1.0 - 2.0 * beta * rho + rho * rho)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An application rate a hair below Σc puts the optimum's common delay D near 1e7 s,
    /// where f64's spacing (2e-9 s) exceeds the golden-section search's 1e-12 s tolerance: the
    /// search must still end (it once spun forever, hanging an R-TSC run whose capacity
    /// estimates summed to just above its rate estimate).
    #[test]
    fn terminates_when_the_application_rate_is_a_hair_below_the_capacity() {
        let (c, tp) = ([3000.0, 1000.0], [0.030, 0.015]);
        let mut x = [0.0; 2];
        let o = minimize_delay(&c, &tp, 3999.99999, 1.0, &mut x).unwrap();
        // x_r(D) ≈ c_r (1 − T_r/D) far out, so Σx = f at D ≈ Σ c_r T_r / (Σc − f) ≈ 1.05e7 s.
        assert!(o.network_delay_s > 1e6 && o.bound_s.is_finite(), "{o:?}");
        assert!(x.iter().sum::<f64>() > 3999.99999, "{x:?}");
    }

    /// Mbit/s of 1440-byte packets to packets/s (the summary's worked vectors use MSS 1440).
    fn pps(mbps: f64) -> f64 {
        mbps * 1e6 / 8.0 / 1440.0
    }

    #[test]
    fn section_3_5_worked_vectors() {
        // seed-003 §3.5: C_a² = 1, T^p = (30, 15) ms, f = 35.85 Mbit/s:
        // (40, 15) → 74.4 ms, (40, 12) → 87.5 ms, (40, 8) → 115.3 ms, x* as tabled.
        for (c1, bound_ms, x0, x1, tn_ms) in [
            (15.0, 74.4, 25.44, 12.00, 67.4),
            (12.0, 87.5, 27.28, 9.93, 79.3),
            (8.0, 115.3, 29.96, 6.93, 104.5),
        ] {
            let c = [pps(40.0), pps(c1)];
            let mut x = [0.0; 2];
            let o = minimize_delay(&c, &[0.030, 0.015], pps(35.85), 1.0, &mut x).unwrap();
            assert!((o.bound_s * 1e3 - bound_ms).abs() < 0.05, "{c1}: {o:?}");
            assert!(
                (o.network_delay_s * 1e3 - tn_ms).abs() < 0.05,
                "{c1}: {o:?}"
            );
            // The summary tables x* to 0.01 Mbit/s (its 25.44 is 25.434 here and in the model
            // library, within that last digit).
            assert!((x[0] / pps(1.0) - x0).abs() < 0.01, "{c1}: {x:?}");
            assert!((x[1] / pps(1.0) - x1).abs() < 0.01, "{c1}: {x:?}");
            // Every used subflow has the common delay D (3.2).
            for (i, tp) in [0.030, 0.015].iter().enumerate() {
                let tn = c[i] * tp / (c[i] - x[i]) - tp / 2.0;
                assert!((tn - o.network_delay_s).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn infeasible_demand_has_no_optimum() {
        let mut x = [7.0; 2];
        assert_eq!(
            minimize_delay(&[100.0, 50.0], &[0.03, 0.015], 150.0, 1.0, &mut x),
            None
        );
        assert_eq!(x, [7.0; 2]);
    }

    /// Every case of `delay_optimum_python_cases.toml` (the model library's minimize_delay):
    /// the same rates and bound, to 1e-9 relative.
    #[test]
    fn solver_equals_the_python_model() {
        let doc: toml::Table = include_str!("delay_optimum_python_cases.toml")
            .parse()
            .unwrap();
        let cases = doc["case"].as_array().unwrap();
        assert!(cases.len() >= 20);
        let floats = |v: &toml::Value| -> Vec<f64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_float().unwrap())
                .collect()
        };
        for case in cases {
            let t = case.as_table().unwrap();
            let (c, tp, want) = (floats(&t["c"]), floats(&t["tp"]), floats(&t["x"]));
            let mut x = vec![0.0; c.len()];
            let o = minimize_delay(
                &c,
                &tp,
                t["f"].as_float().unwrap(),
                t["ca2"].as_float().unwrap(),
                &mut x,
            )
            .unwrap();
            let bound = t["bound"].as_float().unwrap();
            assert!(
                (o.bound_s - bound).abs() <= 1e-9 * bound,
                "{}: {} vs {bound}",
                t["name"],
                o.bound_s
            );
            for (g, w) in x.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-6 * c.iter().sum::<f64>(),
                    "{}: {x:?} vs {want:?}",
                    t["name"]
                );
            }
        }
    }

    #[test]
    fn window_cap_inverts_the_cycle_rate() {
        // (3.9) test vectors: ρ = 0.5 → c, 0.75 → 0.923c, 1 → 0.75c (β = 1/2).
        let (c, tp) = (1000.0, 0.04); // W^BDP = 40 packets
        assert_eq!(cycle_rate(80.0, c, tp, 0.5), c);
        assert!(
            (cycle_rate(40.0 / 0.75, c, tp, 0.5) / c - 0.75 / (1.0 - 0.75 + 0.5625)).abs() < 1e-12
        );
        assert!((cycle_rate(40.0, c, tp, 0.5) - 0.75 * c).abs() < 1e-9);
        // Below the BDP: a cap of 20 packets averages 15 packets per T^p = 375 packets/s.
        assert!((cycle_rate(20.0, c, tp, 0.5) - 375.0).abs() < 1e-9);
        assert_eq!(window_cap(375.0, c, tp, 0.5), Some(20.0));
        assert!(
            (window_cap(750.0, c, tp, 0.5).unwrap() - 40.0).abs() < 1e-9,
            "meets at the BDP"
        );
        for beta in [0.5, 0.7] {
            for frac in [0.1, 0.5, 0.74, 0.8, 0.9, 0.99] {
                let w = window_cap(frac * c, c, tp, beta).unwrap();
                assert!(
                    (cycle_rate(w, c, tp, beta) / c - frac).abs() < 1e-12,
                    "{beta} {frac}"
                );
            }
        }
        assert_eq!(window_cap(c, c, tp, 0.5), None);
    }
}
