//! Mean, variance, standard deviation and percentiles.

/// The arithmetic mean; `None` for no values.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The sample variance (divided by n − 1); `None` under two values.
pub fn variance(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    Some(xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64)
}

/// The sample standard deviation (n − 1); `None` under two values.
pub fn stddev(xs: &[f64]) -> Option<f64> {
    variance(xs).map(f64::sqrt)
}

/// The `p`th percentile (`p` in 0..=100) of values sorted ascending, by linear
/// interpolation between the closest ranks (numpy's default, Hyndman-Fan type 7):
/// rank `p/100 × (n − 1)`. `None` for no values or `p` outside 0..=100.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let below = rank.floor() as usize;
    let above = rank.ceil() as usize;
    let (lo, hi) = (*sorted.get(below)?, *sorted.get(above)?);
    Some(lo + (hi - lo) * (rank - below as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile_sorted(&xs, 50.0), Some(3.0));
        assert_eq!(percentile_sorted(&xs, 0.0), Some(1.0));
        assert_eq!(percentile_sorted(&xs, 100.0), Some(5.0));
        // rank 0.95 × 4 = 3.8: 4 + 0.8 × (5 − 4)
        let p95 = percentile_sorted(&xs, 95.0).unwrap_or_default();
        assert!((p95 - 4.8).abs() < 1e-12, "{p95}");
        assert_eq!(percentile_sorted(&[7.0], 99.0), Some(7.0));
        assert_eq!(percentile_sorted(&[], 50.0), None);
        assert_eq!(percentile_sorted(&xs, 101.0), None);
    }

    #[test]
    fn sample_statistics() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), Some(5.0));
        assert!((variance(&xs).unwrap() - 32.0 / 7.0).abs() < 1e-12);
        assert_eq!(stddev(&[1.0]), None);
        assert_eq!(mean(&[]), None);
    }
}
