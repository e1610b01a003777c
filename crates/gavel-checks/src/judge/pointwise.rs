//! The pointwise `judge`: one score on a labelled scale, reasoning first, error
//! detection before that.

use std::sync::OnceLock;

use gavel_core::CheckKind;
use gavel_core::judge::JudgeExample;
use gavel_core::{Evidence, JudgeScore, Reading, Scale, Status, Verdict};
use serde_json::{Value, json};

use super::answer::{self, PointwiseAnswer};
use super::prompt::{fence, neutralise};
use super::{Material, Question, ask};
use crate::finding::VerdictHead;
use crate::names::quoted_list;
use crate::runtime::JudgeRuntime;
use crate::subject::Judged;

/// The kind of pointwise judge verdicts.
pub(crate) const KIND: CheckKind = CheckKind::Judge;

/// A compiled pointwise judge.
#[derive(Debug, Clone)]
pub(crate) struct PointwiseJudge {
    pub(crate) material: Material,
    pub(crate) scale: Scale,
    /// Pass threshold on the scale.
    pub(crate) threshold: f64,
    /// Few-shot examples, scores on the scale.
    pub(crate) examples: Vec<JudgeExample>,
}

/// The labelled levels of a scale, best first.
fn levels(scale: Scale) -> &'static [(&'static str, &'static str)] {
    match scale {
        Scale::Binary => &[
            ("1", "pass: the answer meets every criterion"),
            ("0", "fail: the answer misses at least one criterion"),
        ],
        Scale::OneToFour => &[
            ("4", "excellent: fully meets every criterion"),
            ("3", "good: meets the criteria, with minor issues"),
            ("2", "poor: significant gaps or errors"),
            (
                "1",
                "failing: does not meet the criteria, or is wrong or irrelevant",
            ),
        ],
        Scale::OneToFive => &[
            ("5", "excellent: fully meets every criterion"),
            ("4", "good: meets the criteria, with minor issues"),
            (
                "3",
                "acceptable: the core is right, some elements missing or inaccurate",
            ),
            ("2", "poor: significant gaps or inaccuracies"),
            (
                "1",
                "failing: does not meet the criteria, or is wrong or irrelevant",
            ),
        ],
        Scale::ZeroToTen => &[
            ("10", "perfect: fully meets every criterion"),
            ("8-9", "good: meets the criteria, with minor issues"),
            ("6-7", "acceptable: some elements missing"),
            ("4-5", "partial: significant gaps"),
            ("1-3", "poor: fails most of the criteria"),
            ("0", "wrong, irrelevant or empty"),
        ],
        Scale::ZeroToOne => &[
            ("1.0", "perfect response that fully meets all criteria"),
            (
                "0.8 or more",
                "good response that meets most criteria, with minor issues",
            ),
            (
                "0.6 to 0.8",
                "acceptable response with some missing elements",
            ),
            ("0.4 to 0.6", "partial response with significant gaps"),
            ("below 0.4", "poor response that fails to meet the criteria"),
        ],
    }
}

/// A JSON value built once per scale and cloned for each use: what every judge
/// call of a scale sends is the same.
pub(crate) struct PerScale {
    built: [OnceLock<Value>; 5],
    build: fn(Scale) -> Value,
}

impl PerScale {
    pub(crate) const fn new(build: fn(Scale) -> Value) -> Self {
        PerScale {
            built: [const { OnceLock::new() }; 5],
            build,
        }
    }

    pub(crate) fn get(&self, scale: Scale) -> Value {
        let slot = match scale {
            Scale::Binary => 0,
            Scale::OneToFour => 1,
            Scale::OneToFive => 2,
            Scale::ZeroToTen => 3,
            Scale::ZeroToOne => 4,
        };
        self.built[slot].get_or_init(|| (self.build)(scale)).clone()
    }
}

/// The `scale` template variable: name, bounds, integrality and labelled levels.
pub(crate) fn scale_vars(scale: Scale) -> Value {
    static VARS: PerScale = PerScale::new(build_scale_vars);
    VARS.get(scale)
}

fn build_scale_vars(scale: Scale) -> Value {
    let (min, max) = scale.bounds();
    json!({
        "name": scale.as_str(),
        "min": number(scale, min),
        "max": number(scale, max),
        "integral": scale.integral(),
        "levels": levels(scale)
            .iter()
            .map(|(score, label)| json!({ "score": score, "label": label }))
            .collect::<Vec<_>>(),
    })
}

/// A score as JSON: whole on integral scales (`4`, not `4.0`).
pub(crate) fn number(scale: Scale, score: f64) -> Value {
    if scale.integral() && score.fract() == 0.0 {
        json!(score as i64)
    } else {
        json!(score)
    }
}

impl PointwiseJudge {
    /// Display name: `judge "<criteria, shortened>"`.
    pub(crate) fn name(&self) -> String {
        format!(
            "judge {}",
            quoted_list(std::slice::from_ref(&self.material.criteria))
        )
    }

    /// Grades the judged turn. Never panics, never passes by default.
    pub(crate) async fn run(
        &self,
        head: VerdictHead<'_>,
        judged: &Judged<'_>,
        rt: &JudgeRuntime<'_>,
    ) -> Verdict {
        let scale = self.scale;
        let threshold = scale.normalise(self.threshold);
        let template = &self.material.template;
        let reading = |score| Reading::Score(JudgeScore { scale, score });
        let mut evidence = Evidence::default();
        let criteria = json!(self.material.criteria);
        evidence.detail.insert("criteria".into(), criteria);
        evidence.set_reading(head.kind, reading(None));
        let detail = &mut evidence.detail;
        detail.insert("threshold".into(), number(scale, self.threshold));
        detail.insert(
            "reference_shown".into(),
            json!(self.material.reference.is_some()),
        );

        if self.material.exact_match(&judged.turn.output) {
            evidence.set_reading(head.kind, reading(Some(scale.bounds().1)));
            return head.exact_match(template, evidence, threshold);
        }

        let mut vars = self.material.vars(judged);
        vars.insert("scale".into(), scale_vars(scale));
        vars.insert("examples".into(), self.examples_vars(scale));
        let prompt = match head.render(template, vars, &evidence, threshold) {
            Ok(prompt) => prompt,
            Err(v) => return *v,
        };
        let question = Question {
            top_logprobs: None,
            model: self.material.model.as_deref(),
            template,
            prompt,
            schema_name: "judge_verdict",
            schema: answer::pointwise_schema(scale),
        };
        let (result, calls) = ask(rt, question, |v| answer::pointwise(v, scale)).await;
        let mut verdict = match result {
            Err(failure) => failure.verdict(head, template, &calls, evidence),
            Ok(PointwiseAnswer::Flagged { flag, reasoning }) => {
                let detail = &mut evidence.detail;
                detail.insert("status".into(), json!(flag.marker()));
                detail.insert("transient".into(), json!(flag == answer::Flag::Transient));
                calls.evidence(template, &mut evidence);
                head.verdict(Status::Error, with_reasoning(flag.reason(), &reasoning))
                    .with_typed_evidence(evidence)
            }
            Ok(PointwiseAnswer::Scored { reasoning, score }) => {
                evidence.detail.insert("status".into(), json!("ok"));
                evidence.set_reading(head.kind, reading(Some(score)));
                calls.evidence(template, &mut evidence);
                let status = if score >= self.threshold {
                    Status::Pass
                } else {
                    Status::Fail
                };
                let reason = if reasoning.is_empty() {
                    "(the judge gave no reasoning)".to_owned()
                } else {
                    reasoning
                };
                head.verdict(status, reason)
                    .with_score(scale.normalise(score), None)
                    .with_typed_evidence(evidence)
            }
        };
        verdict.threshold = Some(threshold);
        verdict.cost_usd = calls.cost_usd;
        verdict
    }

    fn examples_vars(&self, scale: Scale) -> Value {
        self.examples
            .iter()
            .map(|ex| {
                json!({
                    "input": ex.input.as_deref().map(|i| fence("example_input", i)),
                    "output": fence("example_output", &ex.output),
                    "score": number(scale, ex.score),
                    "reasoning": neutralise(&ex.reasoning),
                })
            })
            .collect::<Vec<_>>()
            .into()
    }
}

/// `"<what>: <reasoning>"`, or `what` alone when the judge said nothing more.
pub(crate) fn with_reasoning(what: &str, reasoning: &str) -> String {
    if reasoning.is_empty() {
        what.to_owned()
    } else {
        format!("{what}: {reasoning}")
    }
}
