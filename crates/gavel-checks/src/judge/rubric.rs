//! The multi-dimension `rubric` (seed 002): each dimension scored 1-5 with its
//! reasoning; the harness, not the judge, computes the weighted overall.

use std::collections::BTreeMap;

use gavel_core::CheckKind;
use gavel_core::{Evidence, Reading, RubricDimension, RubricReading, Status, Verdict};
use serde_json::json;

use super::answer::{self, RubricAnswer};
use super::pointwise::with_reasoning;
use super::{Material, Question, ask};
use crate::error::FieldError;
use crate::finding::VerdictHead;
use crate::names::quoted_list;
use crate::runtime::JudgeRuntime;
use crate::subject::Judged;

/// The kind of rubric verdicts.
pub(crate) const KIND: CheckKind = CheckKind::Rubric;

/// Every dimension, in prompt and schema order; `tool_usage` only when tools are
/// expected.
pub(crate) const DIMENSIONS: [&str; 6] = [
    "accuracy",
    "completeness",
    "format_compliance",
    "scope_adherence",
    "context_usage",
    "tool_usage",
];

/// The dimension that applies only when tools are expected.
const TOOL_USAGE: &str = "tool_usage";

/// Pass threshold on the overall 1-5 score when the check gives none.
pub(crate) const DEFAULT_THRESHOLD: f64 = 3.5;

/// Tolerance when comparing a weighted mean with the threshold.
const EPSILON: f64 = 1e-9;

/// A compiled rubric judge.
#[derive(Debug, Clone)]
pub(crate) struct RubricJudge {
    pub(crate) material: Material,
    /// Pass threshold on the overall 1-5 score.
    threshold: f64,
    /// The dimensions that apply, with their weights.
    dimensions: Vec<(&'static str, f64)>,
}

impl RubricJudge {
    /// Checks the threshold and weights; `tool_usage` applies when the material
    /// names expected tools.
    pub(crate) fn compile(
        material: Material,
        threshold: Option<f64>,
        weights: &BTreeMap<String, f64>,
    ) -> Result<Self, FieldError> {
        let threshold = threshold.unwrap_or(DEFAULT_THRESHOLD);
        if !(1.0..=5.0).contains(&threshold) {
            return Err(FieldError::new(
                "threshold",
                format!("{threshold} is outside the rubric's 1-5 scale"),
            ));
        }
        for (name, weight) in weights {
            if !DIMENSIONS.contains(&name.as_str()) {
                return Err(FieldError::new(
                    format!("weights.{name}"),
                    format!("unknown dimension; use {}", DIMENSIONS.join(", ")),
                ));
            }
            if !weight.is_finite() || *weight < 0.0 {
                return Err(FieldError::new(
                    format!("weights.{name}"),
                    "a weight is a number ≥ 0",
                ));
            }
        }
        let tools_expected = !material.expected_tools.is_empty();
        let dimensions: Vec<(&'static str, f64)> = DIMENSIONS
            .into_iter()
            .filter(|d| tools_expected || *d != TOOL_USAGE)
            .map(|d| (d, weights.get(d).copied().unwrap_or(1.0)))
            .collect();
        if dimensions.iter().map(|(_, w)| w).sum::<f64>() <= 0.0 {
            return Err(FieldError::new(
                "weights",
                "the weights of the dimensions that apply add up to 0",
            ));
        }
        Ok(RubricJudge {
            material,
            threshold,
            dimensions,
        })
    }

    /// Display name: `rubric "<criteria, shortened>"`.
    pub(crate) fn name(&self) -> String {
        format!(
            "rubric {}",
            quoted_list(std::slice::from_ref(&self.material.criteria))
        )
    }

    fn names(&self) -> Vec<&'static str> {
        self.dimensions.iter().map(|(d, _)| *d).collect()
    }

    /// The rubric's 1-5 overall mapped to 0..=1.
    fn normalise(overall: f64) -> f64 {
        ((overall - 1.0) / 4.0).clamp(0.0, 1.0)
    }

    /// Grades the judged turn. Never panics, never passes by default.
    pub(crate) async fn run(
        &self,
        head: VerdictHead<'_>,
        judged: &Judged<'_>,
        rt: &JudgeRuntime<'_>,
    ) -> Verdict {
        let threshold = Self::normalise(self.threshold);
        let template = &self.material.template;
        let names = self.names();
        let mut evidence = Evidence::default();
        let detail = &mut evidence.detail;
        detail.insert("criteria".into(), json!(self.material.criteria));
        detail.insert("threshold".into(), json!(self.threshold));

        if self.material.exact_match(&judged.turn.output) {
            let exact = RubricReading {
                overall: Some(5.0),
                ..RubricReading::default()
            };
            evidence.set_reading(head.kind, Reading::Rubric(exact));
            return head.exact_match(template, evidence, threshold);
        }

        let mut vars = self.material.vars(judged);
        vars.insert("tools_expected".into(), json!(names.contains(&TOOL_USAGE)));
        vars.insert("dimensions".into(), json!(names));
        let prompt = match head.render(template, vars, &evidence, threshold) {
            Ok(prompt) => prompt,
            Err(v) => return *v,
        };
        let question = Question {
            top_logprobs: None,
            model: self.material.model.as_deref(),
            template,
            prompt,
            schema_name: "rubric_verdict",
            schema: answer::rubric_schema(&names),
        };
        let (result, calls) = ask(rt, question, |v| answer::rubric(v, &names)).await;
        let mut verdict = match result {
            Err(failure) => failure.verdict(head, template, &calls, evidence),
            Ok(RubricAnswer::Flagged { flag, reasoning }) => {
                let detail = &mut evidence.detail;
                detail.insert("status".into(), json!(flag.marker()));
                detail.insert("transient".into(), json!(flag == answer::Flag::Transient));
                calls.evidence(template, &mut evidence);
                head.verdict(Status::Error, with_reasoning(flag.reason(), &reasoning))
                    .with_typed_evidence(evidence)
            }
            Ok(RubricAnswer::Scored {
                dimensions,
                reasoning,
                suggestions,
            }) => {
                let mut sum = 0.0;
                let mut total_weight = 0.0;
                let mut dims = BTreeMap::new();
                for (d, (name, weight)) in dimensions.iter().zip(&self.dimensions) {
                    sum += f64::from(d.score) * weight;
                    total_weight += weight;
                    let dimension = RubricDimension {
                        score: f64::from(d.score),
                        reasoning: d.reasoning.clone(),
                        weight: *weight,
                    };
                    dims.insert((*name).to_owned(), dimension);
                }
                let overall = sum / total_weight;
                evidence.detail.insert("status".into(), json!("ok"));
                let reading = RubricReading {
                    overall: Some(overall),
                    dimensions: dims,
                    improvement_suggestions: Some(suggestions),
                };
                evidence.set_reading(head.kind, Reading::Rubric(reading));
                calls.evidence(template, &mut evidence);
                let status = if overall + EPSILON >= self.threshold {
                    Status::Pass
                } else {
                    Status::Fail
                };
                let reason = if reasoning.is_empty() {
                    format!("overall {overall:.2} of 5 (the judge gave no reasoning)")
                } else {
                    reasoning
                };
                head.verdict(status, reason)
                    .with_score(Self::normalise(overall), None)
                    .with_typed_evidence(evidence)
            }
        };
        verdict.threshold = Some(threshold);
        verdict.cost_usd = calls.cost_usd;
        verdict
    }
}
