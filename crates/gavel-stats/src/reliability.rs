//! Agreement among any number of raters, some items rated by only some of
//! them: Krippendorff's alpha.

/// Krippendorff's alpha for nominal categories (numbered below `k`): `units`
/// holds each item's ratings, one per rater who rated it. Items with fewer
/// than two ratings cannot be paired and are left out. 1 − D_o / D_e over the
/// coincidence matrix; `None` when no pair is left or every rating is of one
/// category (no disagreement is expected), or a category is not below `k`.
pub fn krippendorff_alpha(k: usize, units: &[Vec<usize>]) -> Option<f64> {
    let mut coincidence = vec![vec![0.0; k]; k];
    for ratings in units.iter().filter(|r| r.len() >= 2) {
        let weight = 1.0 / (ratings.len() - 1) as f64;
        for (i, &c) in ratings.iter().enumerate() {
            for (j, &d) in ratings.iter().enumerate() {
                if i != j {
                    *coincidence.get_mut(c)?.get_mut(d)? += weight;
                }
            }
        }
    }
    let margins: Vec<f64> = coincidence.iter().map(|row| row.iter().sum()).collect();
    let n: f64 = margins.iter().sum();
    let (mut observed, mut expected) = (0.0, 0.0);
    for c in 0..k {
        for d in (0..k).filter(|&d| d != c) {
            observed += coincidence[c][d];
            expected += margins[c] * margins[d];
        }
    }
    if n < 2.0 || expected == 0.0 {
        return None;
    }
    Some(1.0 - (n - 1.0) * observed / expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn krippendorffs_own_example_with_missing_ratings() {
        // Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability":
        // four observers, twelve units, categories 1-5, nominal α = 0.743.
        let units: Vec<Vec<usize>> = [
            &[1, 1, 1][..],
            &[2, 2, 3, 2],
            &[3, 3, 3, 3],
            &[3, 3, 3, 3],
            &[2, 2, 2, 2],
            &[1, 2, 3, 4],
            &[4, 4, 4, 4],
            &[1, 1, 2, 1],
            &[2, 2, 2, 2],
            &[5, 5, 5],
            &[1, 1],
            &[3],
        ]
        .iter()
        .map(|u| u.iter().map(|c| c - 1).collect())
        .collect();
        let alpha = krippendorff_alpha(5, &units).unwrap();
        assert!((alpha - 0.743).abs() < 5e-4, "{alpha}");
    }

    #[test]
    fn perfect_one_category_and_lone_ratings() {
        assert_eq!(krippendorff_alpha(2, &[vec![0, 0], vec![1, 1]]), Some(1.0));
        assert_eq!(krippendorff_alpha(2, &[vec![0, 0], vec![0, 0]]), None);
        assert_eq!(krippendorff_alpha(2, &[vec![0], vec![1]]), None);
        assert_eq!(krippendorff_alpha(2, &[vec![0, 2]]), None);
    }
}
