//! Agreement between two raters over the same items: a confusion matrix, the
//! share of exact agreement and Cohen's kappa.

/// How far apart two categories count in a weighted kappa.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    /// Nominal categories: any disagreement counts fully.
    None,
    /// Ordinal categories: disagreement grows with the distance |i − j|.
    Linear,
    /// Ordinal categories: disagreement grows with (i − j)².
    Quadratic,
}

impl Weights {
    fn weight(self, i: usize, j: usize) -> f64 {
        let d = i.abs_diff(j) as f64;
        match self {
            Weights::None => f64::from(u8::from(i != j)),
            Weights::Linear => d,
            Weights::Quadratic => d * d,
        }
    }
}

/// A k × k confusion matrix: rows are the first rater (the human), columns the
/// second (the judge), categories numbered from 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confusion {
    counts: Vec<Vec<u64>>,
}

impl Confusion {
    /// Counts the pairs (`rows[i]`, `cols[i]`); `None` when the lengths differ or a
    /// category is not below `k`.
    pub fn new(k: usize, rows: &[usize], cols: &[usize]) -> Option<Confusion> {
        if rows.len() != cols.len() {
            return None;
        }
        let mut counts = vec![vec![0; k]; k];
        for (&r, &c) in rows.iter().zip(cols) {
            *counts.get_mut(r)?.get_mut(c)? += 1;
        }
        Some(Confusion { counts })
    }

    /// The counts, `counts()[human][judge]`.
    pub fn counts(&self) -> &[Vec<u64>] {
        &self.counts
    }

    /// How many pairs were counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().flatten().sum()
    }

    /// The share of pairs on the diagonal; `None` when empty.
    pub fn agreement(&self) -> Option<f64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let diagonal: u64 = (0..self.counts.len()).map(|i| self.counts[i][i]).sum();
        Some(diagonal as f64 / total as f64)
    }

    /// Cohen's kappa with the given weights: 1 − Σ w·observed / Σ w·expected, the
    /// expected counts from the margins. `None` when empty or when chance alone
    /// explains everything (both raters used one category).
    pub fn kappa(&self, weights: Weights) -> Option<f64> {
        let k = self.counts.len();
        let total = self.total() as f64;
        if total == 0.0 {
            return None;
        }
        let rows: Vec<f64> = self
            .counts
            .iter()
            .map(|r| r.iter().sum::<u64>() as f64)
            .collect();
        let cols: Vec<f64> = (0..k)
            .map(|j| self.counts.iter().map(|r| r[j]).sum::<u64>() as f64)
            .collect();
        let (mut observed, mut expected) = (0.0, 0.0);
        for (i, (row, row_total)) in self.counts.iter().zip(&rows).enumerate() {
            for (j, (count, col_total)) in row.iter().zip(&cols).enumerate() {
                let w = weights.weight(i, j);
                observed += w * *count as f64;
                expected += w * row_total * col_total / total;
            }
        }
        if expected == 0.0 {
            return None;
        }
        Some(1.0 - observed / expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_kappa() {
        // Two raters, 50 items: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no → κ = 0.4.
        let rows: Vec<usize> = [vec![0; 25], vec![1; 25]].concat();
        let cols: Vec<usize> = [vec![0; 20], vec![1; 5], vec![0; 10], vec![1; 15]].concat();
        let m = Confusion::new(2, &rows, &cols).unwrap();
        assert_eq!(m.counts(), &[vec![20, 5], vec![10, 15]]);
        assert_eq!(m.agreement(), Some(0.7));
        assert!((m.kappa(Weights::None).unwrap() - 0.4).abs() < 1e-12);
        // With two categories every weighting agrees.
        assert!((m.kappa(Weights::Quadratic).unwrap() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn quadratic_weights_forgive_near_misses() {
        let human = [0, 1, 2, 3, 4, 0, 1, 2, 3, 4];
        let near = [1, 1, 2, 3, 3, 0, 2, 2, 3, 4];
        let m = Confusion::new(5, &human, &near).unwrap();
        assert!(m.kappa(Weights::Quadratic).unwrap() > m.kappa(Weights::None).unwrap());
    }

    #[test]
    fn undefined_cases() {
        assert_eq!(Confusion::new(2, &[0], &[0, 1]), None);
        assert_eq!(Confusion::new(2, &[2], &[0]), None);
        let one = Confusion::new(2, &[0, 0], &[0, 0]).unwrap();
        assert_eq!(one.kappa(Weights::None), None);
        assert_eq!(Confusion::new(2, &[], &[]).unwrap().agreement(), None);
    }
}
