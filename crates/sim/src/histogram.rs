//! A bounded histogram of durations with a stated relative error, in the manner of
//! HdrHistogram (Gil Tene): a value falls into the bucket named by its highest set bit and the
//! next `k` bits below it, so each power-of-two range is cut into 2^k equal buckets and the
//! middle of a bucket is within 2^-(k+1) of every value in it; values below 2^k have buckets of
//! their own (exact). Bucketing is a few integer instructions (no logarithm), which matters: a
//! run records one RTT sample per ACK. Count, sum (hence the mean), minimum and maximum are
//! exact; quantiles are within the relative error of the exact nearest-rank value (clamped to
//! the exact minimum and maximum). Memory does not grow with the number of samples: a run's
//! distributions (RTT, one-way and application delay) no longer grow with its length. Only the
//! range of buckets between the smallest and the largest value seen is held (an RTT spread over
//! 20–200 ms needs ~4 KiB rather than the 37 KiB of the whole range; an empty histogram none),
//! so thousands of flows cost little.

use crate::Nanos;

/// Relative error of quantiles: at most 0.5 %. [GAP] a choice: tight enough that a p95 RTT
/// moves by less than the noise between seeds; with it, k = 7 sub-bucket bits (2^-8 = 0.39 %
/// actual bound) and 4.7k buckets (37 KiB when all are held) cover 1 ns to 73 minutes.
pub const DEFAULT_RELATIVE_ERROR: f64 = 0.005;
/// Values are kept apart up to 2^42 ns (73 minutes); larger ones count in a last (overflow)
/// bucket, whose quantiles are the exact maximum.
const MAX_BITS: u32 = 42;

/// Buckets held beyond a new value when the held range grows, so that values drifting slowly
/// (a queue filling) reallocate rarely.
const GROW_SLACK: usize = 64;

#[derive(Debug, Clone)]
pub struct Histogram {
    /// Sub-bucket bits: each power-of-two range holds 2^k buckets.
    k: u32,
    /// Number of buckets of the whole range (see `index`); the last is the overflow.
    n: usize,
    /// buckets[j] counts the values of bucket lo + j; buckets outside the held range are empty.
    lo: usize,
    buckets: Vec<u64>,
    count: u64,
    sum: u128,
    min: Nanos,
    max: Nanos,
}

/// Equal when they hold the same samples' counts, whatever range each happens to hold.
impl PartialEq for Histogram {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (
            self.lo.min(other.lo),
            (self.lo + self.buckets.len()).max(other.lo + other.buckets.len()),
        );
        self.k == other.k
            && self.count == other.count
            && self.sum == other.sum
            && self.min == other.min
            && self.max == other.max
            && (a..b).all(|i| self.bucket(i) == other.bucket(i))
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new(DEFAULT_RELATIVE_ERROR)
    }
}

impl Histogram {
    /// A histogram whose quantiles are within `relative_error` (0 < α < 1) of the exact ones.
    pub fn new(relative_error: f64) -> Self {
        assert!(relative_error > 0.0 && relative_error < 1.0);
        // The middle of a bucket is within 2^-(k+1) of its values: the smallest k with
        // 2^-(k+1) <= α.
        let k = ((0.5 / relative_error).log2().ceil().max(0.0) as u32).min(20);
        let n = (1usize << k) * (MAX_BITS - k + 2) as usize + 1;
        Histogram {
            k,
            n,
            lo: 0,
            buckets: Vec::new(),
            count: 0,
            sum: 0,
            min: Nanos::MAX,
            max: 0,
        }
    }

    /// The bucket of `x`: values below 2^k are their own bucket; above, the highest set bit p
    /// and the k bits below it.
    #[inline]
    fn index(&self, x: Nanos) -> usize {
        let k = self.k;
        if x < 1 << k {
            return x as usize;
        }
        let p = 63 - x.leading_zeros();
        let sub = ((x >> (p - k)) as usize) & ((1 << k) - 1);
        let i = (1usize << k) + ((p - k) as usize) * (1 << k) + sub;
        i.min(self.n - 1)
    }

    /// The count of bucket `i` (zero outside the held range).
    #[inline]
    fn bucket(&self, i: usize) -> u64 {
        i.checked_sub(self.lo)
            .and_then(|j| self.buckets.get(j))
            .copied()
            .unwrap_or(0)
    }

    /// Grows the held range to include buckets `[from, to]` (with some slack), keeping counts.
    #[cold]
    fn hold(&mut self, from: usize, to: usize) {
        let (lo, hi) = if self.buckets.is_empty() {
            (from, to)
        } else {
            (from.min(self.lo), to.max(self.lo + self.buckets.len() - 1))
        };
        let new_lo = if lo < self.lo || self.buckets.is_empty() {
            lo.saturating_sub(GROW_SLACK)
        } else {
            self.lo
        };
        let held_hi = self.lo + self.buckets.len();
        let new_hi = if hi >= held_hi || self.buckets.is_empty() {
            (hi + GROW_SLACK).min(self.n - 1)
        } else {
            held_hi - 1
        };
        let mut buckets = vec![0; new_hi - new_lo + 1];
        if !self.buckets.is_empty() {
            let start = self.lo - new_lo; // the held range only grows
            buckets[start..start + self.buckets.len()].copy_from_slice(&self.buckets);
        }
        self.lo = new_lo;
        self.buckets = buckets;
    }

    /// The middle of bucket `i` (its value, for the exact buckets below 2^k).
    fn value_of(&self, i: usize) -> f64 {
        let k = self.k;
        let per = 1usize << k;
        if i < per {
            return i as f64;
        }
        let shift = ((i - per) / per) as u32; // p - k
        let sub = ((i - per) % per) as u64;
        let lower = ((per as u64 + sub) << shift) as f64;
        lower + ((1u64 << shift) as f64 - 1.0) / 2.0
    }

    /// Records one value (O(1); allocates only when the value lies outside the range held).
    #[inline]
    pub fn record(&mut self, x: Nanos) {
        let i = self.index(x);
        match i.checked_sub(self.lo) {
            Some(j) if j < self.buckets.len() => self.buckets[j] += 1,
            _ => {
                self.hold(i, i);
                self.buckets[i - self.lo] += 1;
            }
        }
        self.count += 1;
        self.sum += x as u128;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The exact sum of the samples.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// The exact mean, `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    pub fn min(&self) -> Option<Nanos> {
        (self.count > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<Nanos> {
        (self.count > 0).then_some(self.max)
    }

    /// The nearest-rank `q`-quantile (the smallest value with at least `q` of the samples at or
    /// below it), within the relative error; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<Nanos> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (j, &c) in self.buckets.iter().enumerate() {
            let i = self.lo + j;
            seen += c;
            if seen >= rank {
                if i == self.n - 1 {
                    return Some(self.max); // the overflow bucket
                }
                let estimate = self.value_of(i).round() as Nanos;
                return Some(estimate.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// The 0th (the minimum), 1st, ..., 100th nearest-rank percentiles; empty when empty.
    pub fn percentiles(&self) -> Vec<Nanos> {
        if self.count == 0 {
            return Vec::new();
        }
        let mut out = vec![self.min];
        out.extend((1..=100).map(|i| self.quantile(i as f64 / 100.0).unwrap_or(self.max)));
        out
    }

    /// Adds `other`'s samples (same relative error).
    pub fn merge(&mut self, other: &Histogram) {
        assert_eq!(self.k, other.k, "same relative error");
        if !other.buckets.is_empty() {
            self.hold(other.lo, other.lo + other.buckets.len() - 1);
            let offset = other.lo - self.lo;
            for (a, b) in self.buckets[offset..].iter_mut().zip(other.buckets.iter()) {
                *a += b;
            }
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The samples recorded since `earlier` (a clone of this histogram taken before): counts and
    /// sums subtract exactly; the extremes are this histogram's (bounds of the window's range,
    /// used only to clamp estimates).
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        assert_eq!(self.k, earlier.k, "same relative error");
        let mut h = self.clone();
        for (j, &b) in earlier.buckets.iter().enumerate() {
            if b > 0 {
                // A bucket holding earlier values is held here too: ranges only grow.
                h.buckets[earlier.lo + j - h.lo] -= b;
            }
        }
        h.count -= earlier.count;
        h.sum -= earlier.sum;
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact nearest-rank percentile, as the summary computed it from every sample.
    fn exact(xs: &[Nanos], q: f64) -> Nanos {
        let mut v = xs.to_vec();
        v.sort_unstable();
        let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
        v[rank - 1]
    }

    /// A small xorshift generator, so the test needs no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn check(xs: &[Nanos], what: &str) {
        let mut h = Histogram::default();
        for &x in xs {
            h.record(x);
        }
        for q in [0.0, 0.01, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0] {
            let (e, a) = (exact(xs, q) as f64, h.quantile(q).unwrap() as f64);
            // Within α, or within rounding to whole nanoseconds for tiny values.
            assert!(
                (a - e).abs() <= DEFAULT_RELATIVE_ERROR * e + 1.0,
                "{what}: q{q}: {a} vs exact {e}"
            );
        }
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / xs.len() as f64;
        assert!(
            (h.mean().unwrap() - mean).abs() <= 1e-9 * mean,
            "{what}: mean"
        );
        assert_eq!(h.min(), xs.iter().min().copied());
        assert_eq!(h.max(), xs.iter().max().copied());
    }

    #[test]
    fn quantiles_are_within_the_relative_error_of_the_exact_ones() {
        let mut r = Rng(0x9e3779b97f4a7c15);
        let uniform: Vec<Nanos> = (0..50_000)
            .map(|_| 20_000_000 + (r.next() * 80e6) as Nanos)
            .collect();
        check(&uniform, "uniform 20-100 ms");
        let lognormal: Vec<Nanos> = (0..50_000)
            .map(|_| {
                // Box-Muller normal, then exp: median 40 ms, sigma 1.
                let z = (-2.0 * r.next().max(1e-300).ln()).sqrt()
                    * (std::f64::consts::TAU * r.next()).cos();
                (40e6 * z.exp()) as Nanos
            })
            .collect();
        check(&lognormal, "lognormal");
        let bimodal: Vec<Nanos> = (0..50_000)
            .map(|i| {
                if i % 3 == 0 {
                    5_000_000 + (r.next() * 1e5) as Nanos
                } else {
                    300_000_000 + (r.next() * 1e7) as Nanos
                }
            })
            .collect();
        check(&bimodal, "bimodal 5 ms / 300 ms");
    }

    #[test]
    fn edge_cases_zero_one_sample_and_equal_values() {
        let h = Histogram::default();
        assert_eq!((h.quantile(0.5), h.mean(), h.min()), (None, None, None));
        check(&[0], "a zero");
        check(&[7], "one sample");
        check(&[0, 0, 5, 1_000_000_000], "zeros and large");
        check(&vec![40_000_000; 1000], "all equal");
        check(&[1 << 50, 1], "beyond the range: the exact max");
    }

    #[test]
    fn memory_is_bounded_by_the_range_and_windows_subtract() {
        let mut h = Histogram::default();
        assert_eq!(h.buckets.len(), 0, "an empty histogram holds no buckets");
        assert!(h.n < 5000, "{} buckets in the whole range", h.n);
        for x in 1..=1000u64 {
            h.record(x * 1000);
        }
        // 1-1000 µs span 10 octaves of 128 buckets, plus the slack on each side.
        assert!(
            h.buckets.len() <= 10 * 128 + 2 * GROW_SLACK,
            "{}",
            h.buckets.len()
        );
        let mark = h.clone();
        for x in 1..=1000u64 {
            h.record(x * 1_000_000);
        }
        let mut wide = h.clone();
        for x in 0..1_000_000u64 {
            wide.record(x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20); // spread over 2^44 ns
        }
        assert!(
            wide.buckets.len() <= wide.n,
            "never more than the whole range"
        );
        let w = h.since(&mark);
        assert_eq!(w.count(), 1000);
        assert!((w.mean().unwrap() - 500.5e6).abs() < 1.0);
        let p50 = w.quantile(0.5).unwrap() as f64;
        assert!((p50 - 500e6).abs() <= 0.005 * 500e6 + 1.0, "{p50}");
        let mut m = mark.clone();
        m.merge(&w);
        assert_eq!(m.count(), 2000);
        assert_eq!(
            m, h,
            "merging the window back gives the whole, whatever ranges each held"
        );
    }

    #[test]
    fn values_arriving_in_any_order_give_the_same_histogram() {
        let xs: Vec<Nanos> = (0..20_000u64)
            .map(|i| (i * 7919) % 300_000_000 + 5)
            .collect();
        let mut up = Histogram::default();
        let mut down = Histogram::default();
        let mut sorted = xs.clone();
        sorted.sort_unstable();
        for &x in &sorted {
            up.record(x);
        }
        for &x in sorted.iter().rev() {
            down.record(x);
        }
        assert_eq!(up, down);
        for q in [0.01, 0.5, 0.95, 0.99] {
            assert_eq!(up.quantile(q), down.quantile(q));
        }
    }
}
