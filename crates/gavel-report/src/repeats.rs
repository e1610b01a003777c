//! Statistics over a case's repeats: mean and standard deviation of the scores,
//! pass rate, pass@k and pass^k.

use std::collections::BTreeMap;

use gavel_core::{Outcome, Status};
use serde::Serialize;

/// A case's repeat statistics (only for outcomes with more than one repeat).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatStats {
    /// Repeats run.
    pub n: u32,
    /// Repeats that passed.
    pub passed: u32,
    /// passed / n.
    pub pass_rate: f64,
    /// Mean score over the repeats that scored, 0..=1.
    pub mean: Option<f64>,
    /// Sample standard deviation of those scores.
    pub stddev: Option<f64>,
    /// pass@k for k = 1..=n: the chance at least one of k repeats passes.
    pub pass_at_k: BTreeMap<u32, f64>,
    /// pass^k for k = 1..=n: the chance all k repeats pass.
    pub pass_hat_k: BTreeMap<u32, f64>,
}

impl RepeatStats {
    /// The statistics of `o`'s repeats; `None` for a single execution.
    pub fn of(o: &Outcome) -> Option<RepeatStats> {
        let n = u32::try_from(o.executions.len()).ok()?;
        if n < 2 {
            return None;
        }
        let passed = u32::try_from(
            o.executions
                .iter()
                .filter(|e| e.status == Status::Pass)
                .count(),
        )
        .ok()?;
        let scores: Vec<f64> = o.executions.iter().filter_map(|e| e.score).collect();
        let per_k = |f: fn(u32, u32, u32) -> Option<f64>| {
            (1..=n)
                .filter_map(|k| f(n, passed, k).map(|v| (k, v)))
                .collect()
        };
        Some(RepeatStats {
            n,
            passed,
            pass_rate: f64::from(passed) / f64::from(n),
            mean: gavel_stats::mean(&scores),
            stddev: gavel_stats::stddev(&scores),
            pass_at_k: per_k(gavel_stats::pass_at_k),
            pass_hat_k: per_k(gavel_stats::pass_hat_k),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gavel_core::{Execution, Transcript};

    fn execution(i: u32, status: Status, score: f64) -> Execution {
        Execution {
            case_id: "c".into(),
            case_name: "c".into(),
            target: "t".into(),
            repeat_index: i,
            tags: vec![],
            status,
            score: Some(score),
            transcript: Transcript::default(),
            verdicts: vec![],
            reason: None,
            started_at: String::new(),
            duration_ms: 1,
        }
    }

    #[test]
    fn three_repeats_two_passed() {
        let o = &Outcome::group(vec![
            execution(0, Status::Pass, 1.0),
            execution(1, Status::Fail, 0.0),
            execution(2, Status::Pass, 0.5),
        ])[0];
        let s = RepeatStats::of(o).unwrap();
        assert_eq!((s.n, s.passed), (3, 2));
        assert_eq!(s.mean, Some(0.5));
        assert_eq!(s.stddev, Some(0.5));
        assert!((s.pass_at_k[&1] - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.pass_at_k[&2], 1.0);
        assert!((s.pass_hat_k[&2] - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.pass_hat_k[&3], 0.0);
        let single = &Outcome::group(vec![execution(0, Status::Pass, 1.0)])[0];
        assert_eq!(RepeatStats::of(single), None);
    }
}
