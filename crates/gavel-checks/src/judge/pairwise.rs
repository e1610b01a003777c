//! `pairwise`: the output against another answer to the same prompt, judged in both
//! orders.
//!
//! The judge is asked twice: A = output, B = other; then A = other, B = output.
//! Each answer maps back to output-vs-other:
//!
//! | both orders say | status | score | reason starts with |
//! | --- | --- | --- | --- |
//! | output better | pass | 1.0 | `win` |
//! | other better | fail | 0.0 | `loss` |
//! | tie | pass | 0.5 | `tie` |
//! | different things | fail (pass with `biased_ties_pass`) | 0.5 | `tie` (evidence `position_bias: true`) |
//!
//! Disagreement between the orders means the judge's preference followed the
//! position (or was unsure): it is scored as a tie, and the evidence records
//! `position_bias: true` and, per order, which position (`A`, `B` or `tie`) and
//! which answer it favoured, so runs can count how often the judge is biased.
//! Such a tie is no evidence that the output holds its own, so it fails (with
//! no threshold: the score did not decide it) unless the check sets
//! `biased_ties_pass: true`. Identical answers (trimmed) are a tie without any call.

use std::sync::Arc;

use gavel_core::CheckKind;
use gavel_core::judge::PairwiseAgainst;
use gavel_core::{
    Evidence, Favoured, PairwiseOrder, PairwiseReading, Reading, ShortCircuit, Status, Verdict,
};
use serde_json::json;

use super::answer::{self, PairwiseAnswer, Winner};
use super::prompt::{fence, neutralise};
use super::{Calls, Failure, JudgeTemplate, Question, TemplateKind, ask};
use crate::finding::VerdictHead;
use crate::names::numbered;
use crate::runtime::JudgeRuntime;
use crate::transform::OutputTransform;

/// The kind of pairwise verdicts.
pub(crate) const KIND: CheckKind = CheckKind::Pairwise;

/// The criteria when neither the check, the case nor the caller gives any.
const DEFAULT_CRITERIA: &str = "Which answer serves the user's message better: correct, complete, relevant to what was asked, and clear.";

/// A case's pairwise check, for the runner, which finds the other answer.
#[derive(Debug, Clone, PartialEq)]
pub struct PairwiseSpec {
    /// What to compare with: another target of the run, or a stored run.
    pub against: PairwiseAgainst,
    /// The criteria: the check's, else its round's, else the case's.
    pub criteria: Option<String>,
    /// The judge model id (`None`: the suite default).
    pub model: Option<String>,
    /// The round whose (last) answer is compared; `None`: the conversation's last
    /// answer.
    pub round: Option<usize>,
    /// The prompt template (the built-in one unless the suite overrides it).
    pub template: JudgeTemplate,
    /// Whether a tie on which the two orders disagree passes (default: it fails).
    pub biased_ties_pass: bool,
    /// The case's `transform`, applied to both answers before they are compared.
    pub(crate) transform: Option<Arc<OutputTransform>>,
    /// Its number among the case's checks of one name and round, from the second.
    pub(crate) number: Option<usize>,
}

impl PairwiseSpec {
    /// The judge configuration it compares with.
    pub fn judge_use(&self) -> super::JudgeUse {
        super::JudgeUse::unscored(self.model.clone(), self.template.kind(), &self.name())
    }

    /// A pairwise check against `against` with the built-in template and nothing
    /// else set.
    pub fn new(against: PairwiseAgainst) -> Self {
        PairwiseSpec {
            against,
            criteria: None,
            model: None,
            round: None,
            template: JudgeTemplate::builtin(TemplateKind::Pairwise),
            biased_ties_pass: false,
            transform: None,
            number: None,
        }
    }

    /// Display name: `pairwise vs target "b"` or `pairwise vs run "latest"`
    /// (`… #2` for the second of one name in a case's round).
    pub fn name(&self) -> String {
        let name = match (&self.against.target, &self.against.run) {
            (Some(target), _) => format!("pairwise vs target {target:?}"),
            (None, Some(run)) => format!("pairwise vs run {run:?}"),
            (None, None) => "pairwise".to_owned(),
        };
        numbered(name, self.number)
    }
}

/// The two answers to compare.
#[derive(Debug, Clone, Copy)]
pub struct PairwiseInput<'a> {
    /// The user message both answers reply to.
    pub prompt: &'a str,
    /// The answer under test.
    pub output: &'a str,
    /// The answer it is compared with.
    pub other: &'a str,
    /// What the other answer is, for people (`target b`, `run 0193…`).
    pub other_label: &'a str,
    /// Criteria used when the spec has none (may be empty: then a general
    /// "which answer serves the user better").
    pub criteria: &'a str,
}

/// How an answer the judge favoured reads in a reason.
fn describe(favoured: Favoured) -> &'static str {
    match favoured {
        Favoured::Output => "this output",
        Favoured::Other => "the other answer",
        Favoured::Neither => "neither",
    }
}

/// Compares the output with the other answer in both orders, each rewritten by
/// the case's `transform` first. Never panics, never passes by default: a failed
/// call, or an answer the transform cannot read, gives `error` (a missing model
/// `skipped`).
pub async fn pairwise(
    spec: &PairwiseSpec,
    input: &PairwiseInput<'_>,
    rt: &JudgeRuntime<'_>,
) -> Verdict {
    let Some(transform) = &spec.transform else {
        return compare(spec, input, rt).await;
    };
    let rewritten = transform.answer(input.output).and_then(|output| {
        let other = transform
            .answer(input.other)
            .map_err(|why| format!("{} ({})", why, input.other_label))?;
        Ok((output, other))
    });
    match rewritten {
        Ok((output, other)) => {
            let input = PairwiseInput {
                output: &output,
                other: &other,
                ..*input
            };
            compare(spec, &input, rt).await
        }
        Err(why) => Verdict::new(spec.name(), KIND, Status::Error, why).in_round(spec.round),
    }
}

/// [`pairwise`] on the answers as given.
async fn compare(spec: &PairwiseSpec, input: &PairwiseInput<'_>, rt: &JudgeRuntime<'_>) -> Verdict {
    let name = spec.name();
    let head = VerdictHead {
        name: &name,
        kind: KIND,
        round: spec.round,
    };
    let template = &spec.template;
    let mut evidence = Evidence::default();
    evidence
        .detail
        .insert("other".into(), json!(input.other_label));

    if input.output.trim() == input.other.trim() {
        evidence.short_circuit = Some(ShortCircuit::Identical);
        let unbiased = PairwiseReading {
            position_bias: false,
            orders: Vec::new(),
        };
        evidence.detail.insert("outcome".into(), json!("tie"));
        evidence.set_reading(head.kind, Reading::Pairwise(unbiased));
        evidence
            .detail
            .insert("template_hash".into(), json!(template.hash()));
        let mut v = head
            .verdict(
                Status::Pass,
                format!(
                    "tie with {}: the answers are identical; judge not called",
                    input.other_label
                ),
            )
            .with_score(0.5, Some(0.5))
            .with_typed_evidence(evidence);
        v.cost_usd = Some(0.0);
        return v;
    }

    let criteria = spec
        .criteria
        .as_deref()
        .filter(|c| !c.trim().is_empty())
        .or(Some(input.criteria).filter(|c| !c.trim().is_empty()))
        .unwrap_or(DEFAULT_CRITERIA);
    let render = |a: &str, b: &str| {
        template.render(&json!({
            "criteria": neutralise(criteria),
            "input": fence("user_input", input.prompt),
            "answer_a": fence("answer_a", a),
            "answer_b": fence("answer_b", b),
        }))
    };
    let prompts = render(input.output, input.other)
        .and_then(|first| render(input.other, input.output).map(|second| (first, second)));
    let (first, second) = match prompts {
        Ok(prompts) => prompts,
        Err(e) => {
            evidence
                .detail
                .insert("template_hash".into(), json!(template.hash()));
            return head
                .verdict(
                    Status::Error,
                    format!("cannot render the pairwise template: {e}"),
                )
                .with_typed_evidence(evidence);
        }
    };
    let question = |prompt| Question {
        top_logprobs: None,
        model: spec.model.as_deref(),
        template,
        prompt,
        schema_name: "pairwise_verdict",
        schema: answer::pairwise_schema(),
    };
    let (q1, q2) = (question(first), question(second));
    let ((r1, c1), (r2, c2)) =
        futures::join!(ask(rt, q1, answer::pairwise), ask(rt, q2, answer::pairwise));
    let mut calls = Calls::default();
    calls.add(&c1);
    calls.add(&c2);

    let (a1, a2) = match (r1, r2) {
        (Ok(a1), Ok(a2)) => (a1, a2),
        (r1, r2) => {
            let failure = [r1.err(), r2.err()]
                .into_iter()
                .flatten()
                .min_by_key(|f| matches!(f, Failure::Skipped(_)))
                .unwrap_or(Failure::Error {
                    reason: "the pairwise judge failed".into(),
                    transient: false,
                });
            let mut v = failure.verdict(head, template, &calls, evidence);
            set_raws(&mut v.evidence, &c1, &c2);
            v.threshold = Some(0.5);
            return v;
        }
    };

    let favoured1 = match a1.winner {
        Winner::A => Favoured::Output,
        Winner::B => Favoured::Other,
        Winner::Tie => Favoured::Neither,
    };
    let favoured2 = match a2.winner {
        Winner::A => Favoured::Other,
        Winner::B => Favoured::Output,
        Winner::Tie => Favoured::Neither,
    };
    let position_bias = favoured1 != favoured2;
    let label = input.other_label;
    let (status, score, outcome, reason) = match (favoured1, favoured2) {
        (Favoured::Output, Favoured::Output) => (
            Status::Pass,
            1.0,
            "win",
            format!("win over {label} in both orders: {}", a1.reasoning),
        ),
        (Favoured::Other, Favoured::Other) => (
            Status::Fail,
            0.0,
            "loss",
            format!("loss to {label} in both orders: {}", a1.reasoning),
        ),
        (Favoured::Neither, Favoured::Neither) => (
            Status::Pass,
            0.5,
            "tie",
            format!("tie with {label}: {}", a1.reasoning),
        ),
        (f1, f2) => (
            if spec.biased_ties_pass {
                Status::Pass
            } else {
                Status::Fail
            },
            0.5,
            "tie",
            format!(
                "tie with {label}: the two orders disagree (with this output shown first the judge favoured {}, shown second {}), a sign of position bias; {}",
                describe(f1),
                describe(f2),
                if spec.biased_ties_pass {
                    "passed as the check sets biased_ties_pass"
                } else {
                    "a biased tie fails unless the check sets biased_ties_pass: true"
                }
            ),
        ),
    };
    evidence.detail.insert("outcome".into(), json!(outcome));
    let reading = PairwiseReading {
        position_bias,
        orders: vec![
            order(&a1, Favoured::Output, favoured1),
            order(&a2, Favoured::Other, favoured2),
        ],
    };
    evidence.set_reading(head.kind, Reading::Pairwise(reading));
    calls.evidence(template, &mut evidence);
    set_raws(&mut evidence, &c1, &c2);
    // A failing biased tie was not decided by its score (0.5 reaches 0.5).
    let threshold = (status == Status::Pass || !position_bias).then_some(0.5);
    let mut v = head
        .verdict(status, reason)
        .with_score(score, threshold)
        .with_typed_evidence(evidence);
    v.cost_usd = calls.cost_usd;
    v
}

/// One order's record: what was in position A, and the position and the answer
/// the judge favoured.
fn order(answer: &PairwiseAnswer, in_a: Favoured, favoured: Favoured) -> PairwiseOrder {
    PairwiseOrder {
        a: in_a,
        favoured_position: answer.winner.as_str().to_owned(),
        favoured,
        reasoning: answer.reasoning.clone(),
    }
}

/// `raw`: both orders' raw answers.
fn set_raws(evidence: &mut Evidence, c1: &Calls, c2: &Calls) {
    evidence
        .detail
        .insert("raw".into(), json!([c1.raw, c2.raw]));
}
