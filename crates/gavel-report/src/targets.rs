//! Targets side by side over the same cases (two agents, or two versions of
//! one): each target's pass rate, pass@k and pass^k averaged over its cases,
//! and for each pair of targets the cases one passed more often than the
//! other, with the exact sign test (McNemar's on the discordant cases).

use std::collections::BTreeMap;

use gavel_core::Outcome;
use serde::Serialize;

/// The comparison of a run's targets; only for runs with two or more.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetComparison {
    /// One row per target, by name.
    pub targets: Vec<TargetRow>,
    /// One row per pair of targets, in name order.
    pub pairs: Vec<PairRow>,
}

/// One target's results averaged over its cases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetRow {
    /// The target.
    pub target: String,
    /// Cases it ran.
    pub cases: usize,
    /// The mean over cases of the share of repeats that passed, 0..=1.
    pub pass_rate: f64,
    /// pass@k for each k every case reached (its fewest repeats): the mean
    /// over cases of the chance that at least one of k repeats passes.
    pub pass_at_k: BTreeMap<u32, f64>,
    /// pass^k likewise: the chance that all k repeats pass.
    pub pass_hat_k: BTreeMap<u32, f64>,
}

/// Two targets over the cases both ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairRow {
    /// The first target (in name order).
    pub a: String,
    /// The second.
    pub b: String,
    /// Cases both ran.
    pub cases: usize,
    /// Cases `a` passed more often than `b`.
    pub a_better: usize,
    /// Cases `b` passed more often than `a`.
    pub b_better: usize,
    /// The two-sided exact sign test's p-value over the cases one did better
    /// (`None`: neither did better on any case).
    pub p_value: Option<f64>,
}

impl TargetComparison {
    /// The targets as a table: header, then one row per target; pass@k and
    /// pass^k for the k every target has.
    pub(crate) fn target_table(&self) -> Vec<Vec<String>> {
        let ks: Vec<u32> = self
            .targets
            .first()
            .map(|t| t.pass_at_k.keys().copied().collect())
            .unwrap_or_default();
        let ks: Vec<u32> = ks
            .into_iter()
            .filter(|k| self.targets.iter().all(|t| t.pass_at_k.contains_key(k)))
            .collect();
        let mut header = vec!["Target".to_owned(), "Cases".into(), "Pass rate".into()];
        header.extend(ks.iter().map(|k| format!("pass@{k}")));
        header.extend(ks.iter().filter(|k| **k > 1).map(|k| format!("pass^{k}")));
        let mut rows = vec![header];
        for t in &self.targets {
            let mut row = vec![t.target.clone(), t.cases.to_string(), share(t.pass_rate)];
            row.extend(
                ks.iter()
                    .map(|k| t.pass_at_k.get(k).map_or("–".into(), |v| share(*v))),
            );
            row.extend(
                ks.iter()
                    .filter(|k| **k > 1)
                    .map(|k| t.pass_hat_k.get(k).map_or("–".into(), |v| share(*v))),
            );
            rows.push(row);
        }
        rows
    }

    /// The pairs as a table: header, then one row per pair.
    pub(crate) fn pair_table(&self) -> Vec<Vec<String>> {
        let mut rows = vec![
            [
                "A",
                "B",
                "Cases",
                "A better",
                "B better",
                "Same",
                "Sign test p",
            ]
            .map(str::to_owned)
            .to_vec(),
        ];
        for p in &self.pairs {
            rows.push(vec![
                p.a.clone(),
                p.b.clone(),
                p.cases.to_string(),
                p.a_better.to_string(),
                p.b_better.to_string(),
                (p.cases - p.a_better - p.b_better).to_string(),
                p.p_value.map_or("–".into(), |v| format!("{v:.4}")),
            ]);
        }
        rows
    }
}

/// A share 0..=1 as a percentage.
fn share(v: f64) -> String {
    crate::text::pct(Some(v * 100.0))
}

/// Folds outcomes into a [`TargetComparison`]. The outcomes of one case come
/// one after another, as reports read them from the store.
#[derive(Default)]
pub(crate) struct TargetsFold {
    /// The case being read, and each target's share of passing repeats on it.
    current: Option<(String, BTreeMap<String, f64>)>,
    rows: BTreeMap<String, RowSums>,
    pairs: BTreeMap<(String, String), PairRow>,
}

#[derive(Default)]
struct RowSums {
    cases: usize,
    pass_rate: f64,
    /// k → (sum over cases, cases that reached k).
    at_k: BTreeMap<u32, (f64, usize)>,
    hat_k: BTreeMap<u32, (f64, usize)>,
}

impl TargetsFold {
    /// Adds one outcome.
    pub(crate) fn push(&mut self, o: &Outcome) {
        if self
            .current
            .as_ref()
            .is_none_or(|(case, _)| *case != o.case_id)
        {
            self.close_case();
            self.current = Some((o.case_id.clone(), BTreeMap::new()));
        }
        if let Some((_, rates)) = &mut self.current {
            rates.insert(o.target.clone(), o.pass_rate);
        }
        let row = self.rows.entry(o.target.clone()).or_default();
        row.cases += 1;
        row.pass_rate += o.pass_rate;
        if let Some(stats) = crate::repeats::RepeatStats::of(o) {
            for (k, v) in stats.pass_at_k {
                let slot = row.at_k.entry(k).or_default();
                slot.0 += v;
                slot.1 += 1;
            }
            for (k, v) in stats.pass_hat_k {
                let slot = row.hat_k.entry(k).or_default();
                slot.0 += v;
                slot.1 += 1;
            }
        }
    }

    /// Counts the case just read into each pair of its targets.
    fn close_case(&mut self) {
        let Some((_, rates)) = self.current.take() else {
            return;
        };
        let rates: Vec<(&String, &f64)> = rates.iter().collect();
        for (i, (a, ra)) in rates.iter().enumerate() {
            for (b, rb) in &rates[i + 1..] {
                let pair = self
                    .pairs
                    .entry(((*a).clone(), (*b).clone()))
                    .or_insert_with(|| PairRow {
                        a: (*a).clone(),
                        b: (*b).clone(),
                        cases: 0,
                        a_better: 0,
                        b_better: 0,
                        p_value: None,
                    });
                pair.cases += 1;
                if ra > rb {
                    pair.a_better += 1;
                } else if rb > ra {
                    pair.b_better += 1;
                }
            }
        }
    }

    /// The comparison, when two or more targets ran.
    pub(crate) fn finish(mut self) -> Option<TargetComparison> {
        self.close_case();
        if self.rows.len() < 2 {
            return None;
        }
        let targets = self
            .rows
            .into_iter()
            .map(|(target, sums)| {
                let all = sums.cases;
                TargetRow {
                    target,
                    cases: all,
                    pass_rate: sums.pass_rate / all.max(1) as f64,
                    pass_at_k: every_case(sums.at_k, all),
                    pass_hat_k: every_case(sums.hat_k, all),
                }
            })
            .collect();
        let pairs = self
            .pairs
            .into_values()
            .map(|mut pair| {
                pair.p_value = gavel_stats::sign_test(pair.a_better as u64, pair.b_better as u64)
                    .map(|t| t.p_value);
                pair
            })
            .collect();
        Some(TargetComparison { targets, pairs })
    }
}

/// The means of the k that every one of `cases` cases reached.
fn every_case(sums: BTreeMap<u32, (f64, usize)>, cases: usize) -> BTreeMap<u32, f64> {
    sums.into_iter()
        .filter(|(_, (_, n))| *n == cases)
        .map(|(k, (sum, n))| (k, sum / n as f64))
        .collect()
}

#[cfg(test)]
mod tests {
    use gavel_core::{Execution, Status, Transcript};

    use super::*;

    fn outcome(case: &str, target: &str, passes: &[bool]) -> Outcome {
        let executions = passes
            .iter()
            .enumerate()
            .map(|(i, pass)| Execution {
                case_id: case.into(),
                case_name: case.into(),
                target: target.into(),
                repeat_index: i as u32,
                tags: Vec::new(),
                status: if *pass { Status::Pass } else { Status::Fail },
                score: None,
                transcript: Transcript::default(),
                verdicts: Vec::new(),
                reason: None,
                started_at: String::new(),
                duration_ms: 0,
            })
            .collect();
        Outcome::group(executions).remove(0)
    }

    #[test]
    fn pass_at_k_and_the_sign_test_over_cases() {
        let mut fold = TargetsFold::default();
        // a passes every case at least once in 3; b only the first.
        for (case, a, b) in [
            ("t1", [true, true, true], [true, true, false]),
            ("t2", [true, false, false], [false, false, false]),
            ("t3", [false, true, true], [false, false, false]),
        ] {
            fold.push(&outcome(case, "a", &a));
            fold.push(&outcome(case, "b", &b));
        }
        let cmp = fold.finish().expect("two targets");
        let a = &cmp.targets[0];
        assert_eq!((a.target.as_str(), a.cases), ("a", 3));
        assert!((a.pass_rate - 6.0 / 9.0).abs() < 1e-12);
        assert!((a.pass_at_k[&1] - 6.0 / 9.0).abs() < 1e-12);
        assert!((a.pass_at_k[&3] - 1.0).abs() < 1e-12);
        // pass^3: only t1 passes all three.
        assert!((a.pass_hat_k[&3] - 1.0 / 3.0).abs() < 1e-12);
        let b = &cmp.targets[1];
        assert!((b.pass_at_k[&3] - 1.0 / 3.0).abs() < 1e-12);
        let pair = &cmp.pairs[0];
        assert_eq!((pair.cases, pair.a_better, pair.b_better), (3, 3, 0));
        // 2 * P(X <= 0), X ~ Bin(3, 0.5) = 2 / 8.
        assert!((pair.p_value.expect("discordant cases") - 0.25).abs() < 1e-12);
    }

    #[test]
    fn one_target_is_no_comparison() {
        let mut fold = TargetsFold::default();
        fold.push(&outcome("t1", "a", &[true]));
        assert_eq!(fold.finish(), None);
    }
}
