//! Seeded random streams, one per component.
//!
//! A component (a link's loss process, its jitter, a synthetic trace) draws from its own ChaCha8
//! stream seeded by `stream_seed(run_seed, label)`, where the label names the component
//! ("link:down:loss"). Streams are independent of how many other components exist, so adding a
//! flow does not perturb an unrelated link. ChaCha8 is portable: the same seed gives the same
//! numbers on every machine and every build.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use rove_scenario::stream_seed;

#[derive(Clone)]
pub struct Stream {
    rng: ChaCha8Rng,
}

impl Stream {
    pub fn new(run_seed: u64, label: &str) -> Self {
        Stream {
            rng: ChaCha8Rng::seed_from_u64(stream_seed(run_seed, label)),
        }
    }

    /// A uniform draw in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        self.rng.gen::<f64>()
    }

    /// A uniform 64-bit draw.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.gen()
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// A standard normal draw (Box-Muller on two uniforms; deterministic, no cached spare).
    pub fn standard_normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_label_same_draws_different_label_different_draws() {
        let mut a = Stream::new(7, "link:down:loss");
        let mut b = Stream::new(7, "link:down:loss");
        let mut c = Stream::new(7, "link:up:loss");
        let xa: Vec<f64> = (0..8).map(|_| a.uniform()).collect();
        let xb: Vec<f64> = (0..8).map(|_| b.uniform()).collect();
        let xc: Vec<f64> = (0..8).map(|_| c.uniform()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn standard_normal_has_unit_moments() {
        let mut s = Stream::new(1, "normal");
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| s.standard_normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        // Standard error of the mean is 1/sqrt(n) ~ 0.0022: 5 sigma bounds.
        assert!(mean.abs() < 0.012, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "var {var}");
    }
}
