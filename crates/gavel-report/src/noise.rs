//! The judges' own spread on one agent output (`rejudge: k`), kept apart from
//! the agent's spread across repeats, and the table both are shown in.

use gavel_core::{Outcome, Verdict};
use serde::Serialize;

use crate::repeats::RepeatStats;
use crate::{Report, text};

/// How much one judged check moved when judging the same output again.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckNoise {
    /// The check's name.
    pub check: String,
    /// Judgements made: the first and its re-judgements.
    pub judgements: u32,
    /// Mean of the scores given, 0..=1.
    pub mean: Option<f64>,
    /// Sample standard deviation of those scores.
    pub stddev: Option<f64>,
    /// Re-judgements whose status differs from the first judgement's.
    pub flips: u32,
}

/// A case's judge noise: every re-judged check of its first repeat.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeNoise {
    /// Per re-judged check.
    pub checks: Vec<CheckNoise>,
    /// The largest score standard deviation among the checks.
    pub max_stddev: Option<f64>,
    /// Flips over all re-judgements, 0..=1.
    pub flip_rate: f64,
}

impl JudgeNoise {
    /// The noise of `o`'s re-judged verdicts; `None` when none was re-judged.
    pub fn of(o: &Outcome) -> Option<JudgeNoise> {
        let checks: Vec<CheckNoise> = o
            .executions
            .iter()
            .flat_map(|e| &e.verdicts)
            .filter_map(check_noise)
            .collect();
        if checks.is_empty() {
            return None;
        }
        let rejudged: u32 = checks.iter().map(|c| c.judgements - 1).sum();
        let flips: u32 = checks.iter().map(|c| c.flips).sum();
        Some(JudgeNoise {
            max_stddev: checks.iter().filter_map(|c| c.stddev).reduce(f64::max),
            flip_rate: f64::from(flips) / f64::from(rejudged.max(1)),
            checks,
        })
    }
}

fn check_noise(v: &Verdict) -> Option<CheckNoise> {
    let again = &v.evidence.rejudged;
    if again.is_empty() {
        return None;
    }
    let scores: Vec<f64> = std::iter::once(v.score)
        .chain(again.iter().map(|r| r.score))
        .flatten()
        .collect();
    let flips = again.iter().filter(|r| r.status != v.status).count();
    Some(CheckNoise {
        check: v.check.clone(),
        judgements: u32::try_from(again.len() + 1).ok()?,
        mean: gavel_stats::mean(&scores),
        stddev: gavel_stats::stddev(&scores),
        flips: u32::try_from(flips).ok()?,
    })
}

/// The header of the spread table.
pub(crate) const SPREAD_HEADER: [&str; 10] = [
    "Case",
    "Target",
    "Runs",
    "Pass rate",
    "Mean",
    "Stddev",
    "pass@n",
    "pass^n",
    "Judge stddev",
    "Judge flips",
];

/// One row per outcome with repeats or re-judgements: the agent's spread across
/// repeats (mean, stddev, pass rate, pass@n, pass^n at n = the repeats) beside
/// the judges' own spread on one output.
pub(crate) fn spread_rows(report: &Report) -> Vec<[String; 10]> {
    report.outcomes.iter().filter_map(spread_row).collect()
}

/// The outcome's row of the spread table, when it has repeats or rejudged checks.
pub(crate) fn spread_row(o: &Outcome) -> Option<[String; 10]> {
    let repeats = RepeatStats::of(o);
    let noise = JudgeNoise::of(o);
    if repeats.is_none() && noise.is_none() {
        return None;
    }
    let at_n = |m: Option<&std::collections::BTreeMap<u32, f64>>| {
        text::pct(
            repeats
                .as_ref()
                .and_then(|r| m?.get(&r.n).map(|p| p * 100.0)),
        )
    };
    Some([
        o.case_id.clone(),
        o.target.clone(),
        o.executions.len().to_string(),
        text::pct(Some(o.pass_rate * 100.0)),
        text::score(repeats.as_ref().and_then(|r| r.mean).or(o.score)),
        text::score(repeats.as_ref().and_then(|r| r.stddev)),
        at_n(repeats.as_ref().map(|r| &r.pass_at_k)),
        at_n(repeats.as_ref().map(|r| &r.pass_hat_k)),
        text::score(noise.as_ref().and_then(|n| n.max_stddev)),
        noise.as_ref().map_or_else(
            || "-".to_owned(),
            |n| {
                let flips: u32 = n.checks.iter().map(|c| c.flips).sum();
                let of: u32 = n.checks.iter().map(|c| c.judgements - 1).sum();
                format!("{flips}/{of}")
            },
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use gavel_core::{Execution, Status, Transcript};
    use serde_json::json;

    #[test]
    fn rejudged_verdicts_give_the_judge_spread_and_flips() {
        let mut v = Verdict::new(
            "judge \"x\"",
            gavel_core::CheckKind::Judge,
            Status::Pass,
            "ok",
        )
        .with_score(0.8, None);
        v = v.with_evidence(json!({"rejudged": [
            {"status": "pass", "score": 0.8},
            {"status": "fail", "score": 0.4},
            {"status": "pass", "score": 1.0},
        ]}));
        let plain = Verdict::new(
            "contains",
            gavel_core::CheckKind::Contains,
            Status::Pass,
            "ok",
        );
        let e = Execution {
            case_id: "c".into(),
            case_name: "c".into(),
            target: "t".into(),
            repeat_index: 0,
            tags: vec![],
            status: Status::Pass,
            score: Some(0.8),
            transcript: Transcript::default(),
            verdicts: vec![plain, v],
            reason: None,
            started_at: String::new(),
            duration_ms: 1,
        };
        let o = &gavel_core::Outcome::group(vec![e])[0];
        let n = JudgeNoise::of(o).unwrap();
        assert_eq!(n.checks.len(), 1);
        let c = &n.checks[0];
        assert_eq!((c.judgements, c.flips), (4, 1));
        assert!((c.mean.unwrap() - 0.75).abs() < 1e-12);
        // Sample stddev of 0.8, 0.8, 0.4, 1.0.
        let expected = ((0.0025 + 0.0025 + 0.1225 + 0.0625) / 3.0_f64).sqrt();
        assert!((n.max_stddev.unwrap() - expected).abs() < 1e-12);
        assert!((n.flip_rate - 1.0 / 3.0).abs() < 1e-12);
    }
}
