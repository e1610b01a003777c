//! A step judge's answer — `{reasoning, score}`, the score from 0 to 1 — and how
//! the step scores combine.

use gavel_core::agent_check::StepAggregate;
use serde_json::{Value, json};

/// A scored step.
pub(super) struct Graded {
    /// The step's index among the steps.
    pub(super) index: usize,
    pub(super) score: f64,
    pub(super) weight: f64,
    pub(super) explanation: String,
}

/// `{"reasoning", "score"}`, the score a number from 0 to 1.
pub(super) fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "reasoning": { "type": "string" },
            "score": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "the step's score from 0 to 1",
            },
        },
        "required": ["reasoning", "score"],
        "additionalProperties": false,
    })
}

/// The explanation and score of a schema-valid answer; the score must lie in 0..=1.
pub(super) fn interpret(value: &Value) -> Result<(String, f64), String> {
    let score = value
        .get("score")
        .and_then(Value::as_f64)
        .ok_or("the score is missing")?;
    if !(score.is_finite() && (0.0..=1.0).contains(&score)) {
        return Err(format!("score {score} is outside 0 to 1"));
    }
    let reasoning = value
        .get("reasoning")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned();
    Ok((reasoning, score))
}

/// Combines the step scores; fails when a weighted mean has nothing to weigh.
pub(super) fn aggregate(method: StepAggregate, scores: &[Graded]) -> Result<f64, String> {
    let none = || "no step was scored".to_owned();
    match method {
        StepAggregate::Mean => {
            let total: f64 = scores.iter().map(|g| g.weight).sum();
            if total <= 0.0 {
                return Err("the steps' weights sum to 0: nothing to average".into());
            }
            Ok(scores.iter().map(|g| g.score * g.weight).sum::<f64>() / total)
        }
        StepAggregate::Min => scores
            .iter()
            .map(|g| g.score)
            .reduce(f64::min)
            .ok_or_else(none),
        StepAggregate::Last => scores.last().map(|g| g.score).ok_or_else(none),
    }
}
