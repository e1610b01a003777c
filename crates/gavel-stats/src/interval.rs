//! Confidence intervals: Wilson's score interval for a proportion and a seeded
//! percentile bootstrap for any statistic of paired observations.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

/// A two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The lower bound.
    pub low: f64,
    /// The upper bound.
    pub high: f64,
}

/// The z value of a two-sided `level` (0.95 → 1.96); `None` outside (0, 1).
fn z_of(level: f64) -> Option<f64> {
    if !(level > 0.0 && level < 1.0) {
        return None;
    }
    let normal = Normal::new(0.0, 1.0).ok()?;
    Some(normal.inverse_cdf(0.5 + level / 2.0))
}

/// Wilson's score interval for `successes` out of `n` at confidence `level`
/// (e.g. 0.95); `None` when `n` is 0, `successes > n` or `level` is not in (0, 1).
pub fn wilson(successes: u64, n: u64, level: f64) -> Option<Interval> {
    if n == 0 || successes > n {
        return None;
    }
    let z = z_of(level)?;
    let (n, p) = (n as f64, successes as f64 / n as f64);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval {
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// How a bootstrap is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bootstrap {
    /// Resamples drawn.
    pub resamples: usize,
    /// The generator's seed: the same seed gives the same interval.
    pub seed: u64,
}

impl Default for Bootstrap {
    /// 1,000 resamples, seed 0.
    fn default() -> Self {
        Bootstrap {
            resamples: 1000,
            seed: 0,
        }
    }
}

impl Bootstrap {
    /// The percentile interval at `level` of `statistic` over `n` items, each
    /// resample `n` indices drawn with replacement (ChaCha8 seeded with `seed`).
    /// Resamples where the statistic is undefined are left out; `None` when `n`
    /// is 0, `level` is not in (0, 1) or no resample gives a value.
    pub fn percentile(
        &self,
        n: usize,
        level: f64,
        statistic: impl Fn(&[usize]) -> Option<f64>,
    ) -> Option<Interval> {
        self.draw(n, level, None, statistic)
    }

    /// As [`percentile`](Self::percentile), but a resample where the statistic
    /// is undefined counts as `worst` (e.g. −1 for a kappa or a correlation)
    /// instead of being left out: a small set whose resamples often lose a
    /// category widens the interval rather than hiding it.
    pub fn percentile_counting_undefined(
        &self,
        n: usize,
        level: f64,
        worst: f64,
        statistic: impl Fn(&[usize]) -> Option<f64>,
    ) -> Option<Interval> {
        self.draw(n, level, Some(worst), statistic)
    }

    fn draw(
        &self,
        n: usize,
        level: f64,
        undefined: Option<f64>,
        statistic: impl Fn(&[usize]) -> Option<f64>,
    ) -> Option<Interval> {
        if n == 0 || !(level > 0.0 && level < 1.0) {
            return None;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut sample = vec![0; n];
        let mut values = Vec::with_capacity(self.resamples);
        for _ in 0..self.resamples {
            for slot in &mut sample {
                *slot = rng.random_range(0..n);
            }
            values.extend(statistic(&sample).filter(|v| v.is_finite()).or(undefined));
        }
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let tail = (1.0 - level) / 2.0;
        Some(Interval {
            low: quantile(&values, tail),
            high: quantile(&values, 1.0 - tail),
        })
    }
}

/// The `q` quantile of sorted values, interpolated linearly (NumPy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_the_textbook() {
        // 81 of 263 at 95%: 0.2553 to 0.3662 (Newcombe 1998, and statsmodels).
        let i = wilson(81, 263, 0.95).unwrap();
        assert!((i.low - 0.255_3).abs() < 1e-4, "{i:?}");
        assert!((i.high - 0.366_2).abs() < 1e-4, "{i:?}");
        // 1/1 is not certainty.
        let one = wilson(1, 1, 0.95).unwrap();
        assert!(one.low < 0.25 && one.high == 1.0, "{one:?}");
        assert_eq!(wilson(0, 0, 0.95), None);
        assert_eq!(wilson(2, 1, 0.95), None);
    }

    #[test]
    fn bootstrap_is_deterministic_and_brackets_the_mean() {
        let xs: Vec<f64> = (0..50).map(|i| f64::from(i % 7)).collect();
        let mean = |idx: &[usize]| Some(idx.iter().map(|&i| xs[i]).sum::<f64>() / idx.len() as f64);
        let b = Bootstrap::default();
        let a = b.percentile(xs.len(), 0.95, mean).unwrap();
        assert_eq!(Some(a), b.percentile(xs.len(), 0.95, mean));
        let m = mean(&(0..50).collect::<Vec<_>>()).unwrap();
        assert!(a.low < m && m < a.high, "{a:?} {m}");
        let other = Bootstrap { seed: 1, ..b }.percentile(xs.len(), 0.95, mean);
        assert_ne!(Some(a), other);
        assert_eq!(b.percentile(0, 0.95, mean), None);
        assert_eq!(b.percentile(5, 0.95, |_| None), None);
        // Counted, undefined resamples pull the interval down to the worst value.
        let some_undefined = |idx: &[usize]| idx[0].is_multiple_of(2).then_some(1.0);
        assert_eq!(
            b.percentile(10, 0.95, some_undefined),
            Some(Interval {
                low: 1.0,
                high: 1.0
            })
        );
        let counted = b.percentile_counting_undefined(10, 0.95, -1.0, some_undefined);
        assert_eq!(
            counted,
            Some(Interval {
                low: -1.0,
                high: 1.0
            })
        );
    }
}
