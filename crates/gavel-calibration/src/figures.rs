//! The statistics of a report with their 95% intervals: Wilson for agreement and
//! per-class recall, a seeded percentile bootstrap (1,000 resamples) for kappa,
//! Spearman and Kendall.
//!
//! Small sets must not look certain. Resamples where a statistic is undefined
//! (one label left, no variation) count as −1, its worst value, instead of
//! being dropped. Where every resample still gives the same value (perfect
//! agreement or ranking: the bootstrap cannot see the sampling error), the
//! unweighted kappa's lower bound is the kappa at the Wilson lower bound of the
//! agreement, chance agreement held ((p_low − p_e) / (1 − p_e)); the other
//! statistics get no interval ("too few items to bound"), so a lower-bound gate
//! on them does not pass.

use gavel_stats::{Bootstrap, Confusion, Interval, Weights};

/// The confidence level of every interval.
const LEVEL: f64 = 0.95;

/// The least value of kappa and of the correlations, which an undefined
/// resample counts as.
const WORST: f64 = -1.0;

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

/// An interval of zero width (rounding aside): the bootstrap saw no sampling
/// error.
fn degenerate(i: &Interval) -> bool {
    i.high - i.low < 1e-9
}

impl Pairs<'_> {
    fn confusion(&self, idx: impl Iterator<Item = usize> + Clone) -> Option<Confusion> {
        let h: Vec<usize> = idx.clone().map(|i| self.human[i]).collect();
        let j: Vec<usize> = idx.map(|i| self.judge[i]).collect();
        Confusion::new(self.categories, &h, &j)
    }

    fn agreed(&self) -> usize {
        self.human
            .iter()
            .zip(self.judge)
            .filter(|(h, j)| h == j)
            .count()
    }

    /// Exact agreement with its Wilson interval.
    pub(crate) fn agreement(&self) -> Option<Estimate> {
        let n = self.human.len();
        let value = self.confusion(0..n)?.agreement()?;
        Some(Estimate {
            value,
            interval: gavel_stats::wilson(self.agreed() as u64, n as u64, LEVEL),
        })
    }

    /// The chance agreement of the margins: Σ p_human(k) · p_judge(k).
    fn chance(&self) -> f64 {
        let n = self.human.len() as f64;
        (0..self.categories)
            .map(|k| {
                let h = self.human.iter().filter(|&&c| c == k).count() as f64;
                let j = self.judge.iter().filter(|&&c| c == k).count() as f64;
                (h / n) * (j / n)
            })
            .sum()
    }

    /// Cohen's kappa with its bootstrap interval (see the module's note on
    /// small sets).
    pub(crate) fn kappa(&self, weights: Weights) -> Option<Estimate> {
        let n = self.human.len();
        let value = self.confusion(0..n)?.kappa(weights)?;
        let interval = Bootstrap::default().percentile_counting_undefined(n, LEVEL, WORST, |idx| {
            self.confusion(idx.iter().copied())?.kappa(weights)
        });
        let interval = match interval {
            Some(i) if degenerate(&i) => match weights {
                Weights::None => {
                    let chance = self.chance();
                    gavel_stats::wilson(self.agreed() as u64, n as u64, LEVEL)
                        .filter(|_| chance < 1.0)
                        .map(|w| Interval {
                            low: ((w.low - chance) / (1.0 - chance)).min(i.low),
                            high: i.high,
                        })
                }
                _ => None,
            },
            other => other,
        };
        Some(Estimate { value, interval })
    }

    /// A correlation of judge against human scores with its bootstrap interval
    /// (none when every resample gives the same value).
    pub(crate) fn correlation(&self, f: fn(&[f64], &[f64]) -> Option<f64>) -> Option<Estimate> {
        let value = f(self.judge_scores, self.human_scores)?;
        let n = self.judge_scores.len();
        let interval = Bootstrap::default().percentile_counting_undefined(n, LEVEL, WORST, |idx| {
            let x: Vec<f64> = idx.iter().map(|&i| self.judge_scores[i]).collect();
            let y: Vec<f64> = idx.iter().map(|&i| self.human_scores[i]).collect();
            f(&x, &y)
        });
        Some(Estimate {
            value,
            interval: interval.filter(|i| !degenerate(i)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs<'a>(human: &'a [usize], judge: &'a [usize], scores: &'a [f64]) -> Pairs<'a> {
        Pairs {
            categories: 2,
            human,
            judge,
            judge_scores: scores,
            human_scores: scores,
        }
    }

    #[test]
    fn perfect_agreement_on_few_items_is_not_certain() {
        // Five items, judged perfectly: agreement's Wilson interval is
        // [56.6%, 100%]; kappa and Spearman must not claim [1, 1].
        let labels = [0, 0, 0, 1, 1];
        let scores = [1.0, 2.0, 3.0, 4.0, 5.0];
        let p = pairs(&labels, &labels, &scores);
        let agreement = p.agreement().unwrap().interval.unwrap();
        assert!((agreement.low - 0.566).abs() < 1e-3, "{agreement:?}");
        let kappa = p.kappa(Weights::None).unwrap();
        assert_eq!(kappa.value, 1.0);
        let ci = kappa.interval.unwrap();
        assert!(ci.low < 0.5, "{ci:?}");
        let rho = p.correlation(gavel_stats::spearman).unwrap();
        assert!((rho.value - 1.0).abs() < 1e-9);
        assert_eq!(rho.interval, None, "no interval rather than [1, 1]");

        // Forty perfect items: kappa's bound comes from Wilson's, still below 1.
        let many: Vec<usize> = (0..40).map(|i| i % 2).collect();
        let p = pairs(&many, &many, &[]);
        let ci = p.kappa(Weights::None).unwrap().interval.unwrap();
        let wilson = gavel_stats::wilson(40, 40, LEVEL).unwrap().low;
        assert!((ci.low - (wilson - 0.5) / 0.5).abs() < 1e-12, "{ci:?}");
        assert_eq!(ci.high, 1.0);
    }
}
