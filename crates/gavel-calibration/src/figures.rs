//! The statistics of a report with their 95% intervals: Wilson for agreement, a
//! seeded percentile bootstrap (1,000 resamples) for kappa, Spearman and Kendall.

use gavel_stats::{Bootstrap, Confusion, Interval, Weights};

/// The confidence level of every interval.
const LEVEL: f64 = 0.95;

/// A statistic and its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    /// The value on the judged items.
    pub(crate) value: f64,
    /// The 95% interval; `None` when it cannot be drawn.
    pub(crate) interval: Option<Interval>,
}

/// Category pairs (human, judge) and score pairs (judge, human) of the judged items.
pub(crate) struct Pairs<'a> {
    pub(crate) categories: usize,
    pub(crate) human: &'a [usize],
    pub(crate) judge: &'a [usize],
    pub(crate) judge_scores: &'a [f64],
    pub(crate) human_scores: &'a [f64],
}

impl Pairs<'_> {
    fn confusion(&self, idx: impl Iterator<Item = usize> + Clone) -> Option<Confusion> {
        let h: Vec<usize> = idx.clone().map(|i| self.human[i]).collect();
        let j: Vec<usize> = idx.map(|i| self.judge[i]).collect();
        Confusion::new(self.categories, &h, &j)
    }

    /// Exact agreement with its Wilson interval.
    pub(crate) fn agreement(&self) -> Option<Estimate> {
        let n = self.human.len();
        let agreed = self.human.iter().zip(self.judge).filter(|(h, j)| h == j);
        let agreed = agreed.count();
        let value = self.confusion(0..n)?.agreement()?;
        Some(Estimate {
            value,
            interval: gavel_stats::wilson(agreed as u64, n as u64, LEVEL),
        })
    }

    /// Cohen's kappa with its bootstrap interval.
    pub(crate) fn kappa(&self, weights: Weights) -> Option<Estimate> {
        let value = self.confusion(0..self.human.len())?.kappa(weights)?;
        let interval = Bootstrap::default().percentile(self.human.len(), LEVEL, |idx| {
            self.confusion(idx.iter().copied())?.kappa(weights)
        });
        Some(Estimate { value, interval })
    }

    /// A correlation of judge against human scores with its bootstrap interval.
    pub(crate) fn correlation(&self, f: fn(&[f64], &[f64]) -> Option<f64>) -> Option<Estimate> {
        let value = f(self.judge_scores, self.human_scores)?;
        let interval = Bootstrap::default().percentile(self.judge_scores.len(), LEVEL, |idx| {
            let x: Vec<f64> = idx.iter().map(|&i| self.judge_scores[i]).collect();
            let y: Vec<f64> = idx.iter().map(|&i| self.human_scores[i]).collect();
            f(&x, &y)
        });
        Some(Estimate { value, interval })
    }
}
