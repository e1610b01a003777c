//! pass@k and pass^k over n repeats of which c passed.

/// pass@k: the chance that at least one of k repeats drawn without replacement
/// from the n observed passes (the unbiased estimator 1 − C(n−c, k) / C(n, k)).
/// `None` when k is 0 or exceeds n, or c exceeds n.
pub fn pass_at_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    Some(1.0 - choose_ratio(n - c, n, k))
}

/// pass^k: the chance that all k repeats drawn without replacement from the n
/// observed pass (C(c, k) / C(n, k)). `None` as for [`pass_at_k`].
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    Some(choose_ratio(c, n, k))
}

/// C(a, k) / C(n, k) for a ≤ n, as a product (no overflow): 0 when a < k.
fn choose_ratio(a: u32, n: u32, k: u32) -> f64 {
    if a < k {
        return 0.0;
    }
    (0..k)
        .map(|i| f64::from(a - i) / f64::from(n - i))
        .product()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // 5 repeats, 2 passed.
        assert_eq!(pass_at_k(5, 2, 1), Some(0.4));
        assert!((pass_at_k(5, 2, 2).unwrap() - 0.7).abs() < 1e-12);
        assert_eq!(pass_at_k(5, 2, 4), Some(1.0));
        assert_eq!(pass_hat_k(5, 2, 1), Some(0.4));
        assert!((pass_hat_k(5, 2, 2).unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(pass_hat_k(5, 2, 3), Some(0.0));
        assert_eq!(pass_hat_k(3, 3, 3), Some(1.0));
        assert_eq!(pass_at_k(3, 1, 4), None);
        assert_eq!(pass_at_k(3, 1, 0), None);
    }
}
