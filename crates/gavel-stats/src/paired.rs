//! Paired tests for comparing two runs case by case: the Wilcoxon signed-rank
//! test on score differences and the exact sign test (McNemar's exact test) on
//! flips between pass and fail.
//!
//! The p-values follow SciPy's defaults (`scipy.stats.wilcoxon` with
//! `zero_method="wilcox"`, no continuity correction; `scipy.stats.binomtest`):
//! exact when there are at most 50 differences without ties or zeros, every sign
//! assignment enumerated when there are at most 13 differences, the normal
//! approximation with the tie correction otherwise.

use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

use crate::correlation::ranks;

/// A paired test's result.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PairedTest {
    /// Pairs that counted (non-zero differences, or flips).
    pub n: usize,
    /// The statistic: min(W+, W−) for Wilcoxon, the smaller count for the sign test.
    pub statistic: f64,
    /// The two-sided p-value.
    pub p_value: f64,
}

/// Exact two-sided tests up to this many differences without ties or zeros.
const EXACT_MAX: usize = 50;
/// Every sign assignment enumerated up to this many differences.
const ENUMERATE_MAX: usize = 13;

/// The Wilcoxon signed-rank test of `differences` (b − a per pair) against a
/// median of zero. Zero differences are dropped; `None` when none remain.
pub fn wilcoxon(differences: &[f64]) -> Option<PairedTest> {
    let total = differences.len();
    let d: Vec<f64> = differences
        .iter()
        .copied()
        .filter(|x| *x != 0.0 && !x.is_nan())
        .collect();
    let n = d.len();
    if n == 0 {
        return None;
    }
    let r = ranks(&d.iter().map(|x| x.abs()).collect::<Vec<_>>());
    let r_plus: f64 = d
        .iter()
        .zip(&r)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let r_all: f64 = r.iter().sum();
    let statistic = r_plus.min(r_all - r_plus);
    let has_ties = r.iter().any(|x| x.fract() != 0.0) || {
        let mut sorted = r.clone();
        sorted.sort_by(f64::total_cmp);
        sorted.windows(2).any(|w| w[0] == w[1])
    };
    let p_value = if !has_ties && n == total && n <= EXACT_MAX {
        exact(n, r_plus)
    } else if total <= ENUMERATE_MAX {
        enumerate(&r, r_plus)
    } else {
        asymptotic(&r, r_plus)?
    };
    Some(PairedTest {
        n,
        statistic,
        p_value,
    })
}

/// Exact null distribution of W+ for ranks 1..=n: counts of each sum.
fn exact(n: usize, r_plus: f64) -> f64 {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0.0f64; max + 1];
    counts[0] = 1.0;
    for rank in 1..=n {
        for s in (rank..=max).rev() {
            counts[s] += counts[s - rank];
        }
    }
    let total: f64 = counts.iter().sum();
    let at_most = |w: f64| -> f64 {
        counts
            .iter()
            .enumerate()
            .filter(|(s, _)| (*s as f64) <= w)
            .map(|(_, c)| c)
            .sum::<f64>()
            / total
    };
    let cdf = at_most(r_plus.ceil());
    let sf = 1.0 - at_most(r_plus.floor() - 1.0);
    (2.0 * cdf.min(sf)).min(1.0)
}

/// Every assignment of signs to the ranks: the share at least as extreme.
fn enumerate(r: &[f64], r_plus: f64) -> f64 {
    let n = r.len();
    let count = 1u64 << n;
    let (mut low, mut high) = (0u64, 0u64);
    let tolerance = 1e-9 * r.iter().sum::<f64>().max(1.0);
    for mask in 0..count {
        let w: f64 = (0..n).filter(|i| mask >> i & 1 == 1).map(|i| r[i]).sum();
        if w <= r_plus + tolerance {
            low += 1;
        }
        if w >= r_plus - tolerance {
            high += 1;
        }
    }
    (2.0 * low.min(high) as f64 / count as f64).min(1.0)
}

/// The normal approximation with the tie correction.
fn asymptotic(r: &[f64], r_plus: f64) -> Option<f64> {
    let n = r.len() as f64;
    let mean = n * (n + 1.0) / 4.0;
    let mut sorted = r.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|x| **x == sorted[i]).count();
        let t = j as f64;
        tie_term += t * t * t - t;
        i += j;
    }
    let variance = n * (n + 1.0) * (2.0 * n + 1.0) / 24.0 - tie_term / 48.0;
    if variance <= 0.0 {
        return None;
    }
    let z = (r_plus - mean) / variance.sqrt();
    let normal = Normal::standard();
    Some((2.0 * normal.sf(z.abs())).min(1.0))
}

/// The exact two-sided sign test: `up` pairs moved one way, `down` the other
/// (McNemar's exact test on the discordant pairs). `None` when both are 0.
pub fn sign_test(up: u64, down: u64) -> Option<PairedTest> {
    let n = up + down;
    if n == 0 {
        return None;
    }
    let k = up.min(down);
    let binomial = Binomial::new(0.5, n).ok()?;
    Some(PairedTest {
        n: usize::try_from(n).ok()?,
        statistic: k as f64,
        p_value: (2.0 * binomial.cdf(k)).min(1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_test_known_values() {
        let t = sign_test(8, 2).unwrap();
        // 2 * P(X <= 2), X ~ Bin(10, 0.5) = 2 * 56 / 1024.
        assert!((t.p_value - 112.0 / 1024.0).abs() < 1e-12);
        assert_eq!(sign_test(0, 0), None);
        assert_eq!(sign_test(3, 3).unwrap().p_value, 1.0);
    }

    #[test]
    fn wilcoxon_exact_small() {
        // All five differences positive: W- = 0, p = 2 / 32.
        let t = wilcoxon(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(t.statistic, 0.0);
        assert!((t.p_value - 2.0 / 32.0).abs() < 1e-12);
        assert_eq!(wilcoxon(&[0.0, 0.0]), None);
    }
}
