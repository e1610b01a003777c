//! Pearson, Spearman and Kendall correlation.

/// Pearson's r; `None` when the lengths differ, under two pairs, or when either
/// side has no variance.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0))
}

/// Ranks from 1, ties sharing their average rank (NaNs rank last, in order).
pub fn ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut out = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = rank;
        }
        i = j + 1;
    }
    out
}

/// Spearman's ρ: Pearson's r of the tie-averaged ranks; `None` as for [`pearson`].
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() {
        return None;
    }
    pearson(&ranks(x), &ranks(y))
}

/// Kendall's τ-b (ties corrected, as SciPy's default): concordant minus
/// discordant pairs over √((n₀ − n₁)(n₀ − n₂)); `None` when the lengths differ,
/// under two pairs, or when either side is all ties. O(n²).
pub fn kendall(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let (mut score, mut untied_x, mut untied_y) = (0.0, 0.0, 0.0);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let (dx, dy) = (sign(x[i], x[j]), sign(y[i], y[j]));
            score += dx * dy;
            untied_x += dx.abs();
            untied_y += dy.abs();
        }
    }
    if untied_x == 0.0 || untied_y == 0.0 {
        return None;
    }
    Some((score / (untied_x * untied_y).sqrt()).clamp(-1.0, 1.0))
}

/// 1, −1 or 0 as `a` is above, below or equal to `b`.
fn sign(a: f64, b: f64) -> f64 {
    if a > b {
        1.0
    } else if a < b {
        -1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_share_the_average_rank() {
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
    }

    #[test]
    fn perfect_and_undefined_correlations() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((pearson(&x, &[2.0, 4.0, 6.0, 8.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((spearman(&x, &[1.0, 8.0, 27.0, 64.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((pearson(&x, &[4.0, 3.0, 2.0, 1.0]).unwrap() + 1.0).abs() < 1e-12);
        assert_eq!(pearson(&x, &[1.0; 4]), None);
        assert_eq!(pearson(&x, &[1.0]), None);
    }

    #[test]
    fn kendall_tau_b_corrects_for_ties() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((kendall(&x, &[10.0, 20.0, 30.0, 40.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((kendall(&x, &[4.0, 3.0, 2.0, 1.0]).unwrap() + 1.0).abs() < 1e-12);
        // 3 concordant, 0 discordant, 3 pairs tied in y: 3 / √(6 · 3).
        let tied = kendall(&x, &[1.0, 1.0, 1.0, 2.0]).unwrap();
        assert!((tied - 3.0 / 18f64.sqrt()).abs() < 1e-12, "{tied}");
        assert_eq!(kendall(&x, &[1.0; 4]), None);
        assert_eq!(kendall(&x, &[1.0]), None);
    }
}
