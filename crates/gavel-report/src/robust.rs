//! Robustness (seed 001): a case with paraphrase `variants` runs every input
//! `repeat` times and passes only when the mean of all its scores reaches
//! `min_mean` and their standard deviation stays within `max_stddev`.

use gavel_core::{Case, Outcome, Status};
use serde::Serialize;

/// One input's runs: the case's own input (0) or a variant (1..).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputMean {
    /// 0 for the case's input, `v` for variant `v`.
    pub input: u32,
    /// Its runs that scored.
    pub runs: u32,
    /// Their mean score, 0..=1.
    pub mean: Option<f64>,
}

/// A robustness case's figures and decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Robustness {
    /// Mean score over every run of every input.
    pub mean: Option<f64>,
    /// Sample standard deviation of those scores.
    pub stddev: Option<f64>,
    /// The least mean allowed.
    pub min_mean: f64,
    /// The most standard deviation allowed.
    pub max_stddev: f64,
    /// `pass`, `fail`, or `error` when a run errored (no verdict on part of it).
    pub status: Status,
    /// Per input, in order.
    pub per_input: Vec<InputMean>,
}

impl Robustness {
    /// The figures of `o`, a run of `case`; `None` unless the case has variants.
    pub fn of(case: &Case, o: &Outcome) -> Option<Robustness> {
        let max_stddev = case.max_stddev.filter(|_| !case.variants.is_empty())?;
        let inputs = case.input_count();
        let scores: Vec<f64> = o.executions.iter().filter_map(|e| e.score).collect();
        let per_input = (0..inputs)
            .map(|v| {
                let mine: Vec<f64> = o
                    .executions
                    .iter()
                    .filter(|e| e.repeat_index % inputs == v)
                    .filter_map(|e| e.score)
                    .collect();
                InputMean {
                    input: v,
                    runs: u32::try_from(mine.len()).unwrap_or(u32::MAX),
                    mean: gavel_stats::mean(&mine),
                }
            })
            .collect();
        let mean = gavel_stats::mean(&scores);
        let stddev = gavel_stats::stddev(&scores);
        let min_mean = case.robust_min_mean();
        let status = if o.executions.iter().any(|e| e.status == Status::Error) {
            Status::Error
        } else if mean.is_none() {
            o.status
        } else if mean.is_some_and(|m| m >= min_mean) && stddev.unwrap_or(0.0) <= max_stddev {
            Status::Pass
        } else {
            Status::Fail
        };
        Some(Robustness {
            mean,
            stddev,
            min_mean,
            max_stddev,
            status,
            per_input,
        })
    }
}

/// Decides every robustness outcome by its mean and spread (not run by run).
pub(crate) fn decide<'a>(outcomes: &mut [Outcome], case: impl Fn(&str) -> Option<&'a Case>) {
    for o in outcomes {
        let Some(case) = case(&o.case_id) else {
            continue;
        };
        if let Some(r) = Robustness::of(case, o) {
            o.status = r.status;
            o.score = r.mean;
        }
    }
}

/// The header of the robustness table.
pub(crate) const ROBUST_HEADER: [&str; 6] = [
    "Case",
    "Target",
    "Status",
    "Mean (min)",
    "Stddev (max)",
    "Mean per input",
];

/// One row per robustness outcome.
pub(crate) fn robust_rows(report: &crate::Report) -> Vec<[String; 6]> {
    report
        .outcomes
        .iter()
        .filter_map(|o| robust_row(report.case(&o.case_id)?, o))
        .collect()
}

/// The outcome's row of the robustness table, when its case has variants and a
/// spread limit.
pub(crate) fn robust_row(case: &Case, o: &Outcome) -> Option<[String; 6]> {
    let r = Robustness::of(case, o)?;
    let per: Vec<String> = r
        .per_input
        .iter()
        .map(|i| {
            let who = if i.input == 0 {
                "input".to_owned()
            } else {
                format!("variant {}", i.input)
            };
            format!("{who} {}", crate::text::score(i.mean))
        })
        .collect();
    Some([
        o.case_id.clone(),
        o.target.clone(),
        r.status.as_str().to_owned(),
        format!("{} ({:.2})", crate::text::score(r.mean), r.min_mean),
        format!("{} ({:.2})", crate::text::score(r.stddev), r.max_stddev),
        per.join(", "),
    ])
}
