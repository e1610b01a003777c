//! `step-score`: a judge scores each step — each tool call, or each turn — 0 to 1
//! with an explanation, one call per step, a few in flight at once; the scores
//! combine by weighted mean, min or last against a threshold.
//!
//! The judge of a step sees the user's message of the step's turn, the
//! conversation before that turn, the tool calls made earlier in the turn and the
//! step itself (tool name, arguments and result; or the turn's answer and tool
//! calls), all fenced. It fails closed: a step whose answer is not schema-valid or
//! whose score is outside 0..1, after the retries of [`ask`], or whose call breaks,
//! makes the check `error`; without a judge model it is `skipped`; so is a
//! transcript with no step to score.

use futures::StreamExt;
use futures::future::BoxFuture;
use gavel_core::CheckKind;
use gavel_core::agent_check::{StepAggregate, StepKind, StepScoreSpec, StepWeights};
use gavel_core::{Evidence, Reading, Status, StepScore, StepScores, Transcript, Turn, Verdict};
use serde_json::{Map, Value, json};

use super::compile::{Env, Level, check_model, field};
use super::prompt::fence;
use super::{Calls, Failure, Material, Question, ask, tool_line};
use crate::check::{AwaitedCheck, Input};
use crate::error::FieldError;
use crate::finding::VerdictHead;
use crate::names::{quoted_list, truncate};
use crate::runtime::JudgeRuntime;
use crate::subject::Judged;
use crate::subject::{position, seen_before};
use answer::{Graded, aggregate, interpret, schema};

/// The kind of `step-score` verdicts.
const KIND: CheckKind = CheckKind::StepScore;

/// The pass threshold when the check gives none.
const DEFAULT_THRESHOLD: f64 = 0.5;

/// Step judgements of one check in flight at once.
const CONCURRENT_STEPS: usize = 4;

/// Characters of the weakest step's explanation quoted in the reason.
const REASON_CHARS: usize = 200;

/// A compiled `step-score` check.
#[derive(Debug)]
pub(crate) struct StepJudge {
    material: Material,
    steps: StepKind,
    aggregate: StepAggregate,
    weights: Option<StepWeights>,
    threshold: f64,
}

/// One step: a tool call of a turn, or a turn.
struct Step<'a> {
    /// The step's turn.
    turn: &'a Turn,
    /// The tool call's index in its turn (tool steps).
    call: Option<usize>,
    weight: f64,
}

impl Step<'_> {
    /// `step 2 get_bookings` or `step 2 (round 3)`, numbered from 1.
    fn label(&self, number: usize) -> String {
        match self.call.and_then(|c| self.turn.tool_calls.get(c)) {
            Some(call) => format!("step {number} {}", call.name),
            None => format!("step {number} (round {})", self.turn.round + 1),
        }
    }
}

/// What one step's judge said, with its calls.
struct Scored {
    result: Result<(String, f64), Failure>,
    calls: Calls,
}

impl StepJudge {
    /// Compiles the check at `at`; errors carry absolute field paths.
    pub(crate) fn compile(
        spec: &StepScoreSpec,
        at: &str,
        env: &Env<'_>,
        level: &Level<'_>,
    ) -> Result<Self, FieldError> {
        if spec.criteria.trim().is_empty() {
            return Err(FieldError::new(
                field(at, "criteria"),
                "say what a good step does",
            ));
        }
        check_model(spec.model.as_ref(), field(at, "model"))?;
        let threshold = spec.threshold.unwrap_or(DEFAULT_THRESHOLD);
        if !(threshold.is_finite() && (0.0..=1.0).contains(&threshold)) {
            return Err(FieldError::new(
                field(at, "threshold"),
                format!("threshold {threshold} is outside 0 to 1"),
            ));
        }
        let weights = field(at, "weights");
        let bad = |w: f64| !(w.is_finite() && w >= 0.0);
        match &spec.weights {
            Some(StepWeights::ByTool(_)) if spec.steps == StepKind::Turns => {
                return Err(FieldError::new(
                    weights,
                    "weights by tool name need `steps: tools`; give a list, one weight per turn",
                ));
            }
            Some(StepWeights::ByTool(map)) => {
                if let Some((name, w)) = map.iter().find(|(_, w)| bad(**w)) {
                    return Err(FieldError::new(
                        format!("{weights}.{name}"),
                        format!("weight {w} must be a number >= 0"),
                    ));
                }
            }
            Some(StepWeights::ByStep(list)) => {
                if let Some((i, w)) = list.iter().enumerate().find(|(_, w)| bad(**w)) {
                    return Err(FieldError::new(
                        format!("{weights}[{i}]"),
                        format!("weight {w} must be a number >= 0"),
                    ));
                }
            }
            None => {}
        }
        Ok(StepJudge {
            material: env.material(
                spec.criteria.clone(),
                None,
                level,
                spec.model.as_ref(),
                &env.templates.step,
            ),
            steps: spec.steps,
            aggregate: spec.aggregate,
            weights: spec.weights.clone(),
            threshold,
        })
    }

    /// The steps of `turns`, in order, each with its weight.
    fn steps<'a>(&self, turns: &[&'a Turn]) -> Vec<Step<'a>> {
        let mut steps: Vec<Step<'a>> = match self.steps {
            StepKind::Turns => turns
                .iter()
                .map(|turn| Step {
                    turn,
                    call: None,
                    weight: 1.0,
                })
                .collect(),
            StepKind::Tools => turns
                .iter()
                .flat_map(|turn| {
                    (0..turn.tool_calls.len()).map(move |c| Step {
                        turn,
                        call: Some(c),
                        weight: 1.0,
                    })
                })
                .collect(),
        };
        for (i, step) in steps.iter_mut().enumerate() {
            step.weight = match &self.weights {
                None => 1.0,
                Some(StepWeights::ByStep(list)) => list.get(i).copied().unwrap_or(1.0),
                Some(StepWeights::ByTool(map)) => step
                    .call
                    .and_then(|c| step.turn.tool_calls.get(c))
                    .and_then(|call| map.get(&call.name))
                    .copied()
                    .unwrap_or(1.0),
            };
        }
        steps
    }

    /// Scores every step of `turns` (the scope's turns of `transcript`).
    async fn run(
        &self,
        head: VerdictHead<'_>,
        turns: &[&Turn],
        transcript: &Transcript,
        rt: &JudgeRuntime<'_>,
    ) -> Verdict {
        let template = &self.material.template;
        let mut evidence = Evidence::default();
        let detail = &mut evidence.detail;
        detail.insert("criteria".into(), json!(self.material.criteria));
        detail.insert("steps_scored".into(), json!(steps_str(self.steps)));
        detail.insert("aggregate".into(), json!(aggregate_str(self.aggregate)));
        detail.insert("threshold".into(), json!(self.threshold));
        let steps = self.steps(turns);
        if steps.is_empty() {
            let why = match self.steps {
                StepKind::Tools => "no step to score: no tool was called",
                StepKind::Turns => "no step to score: no turn was played",
            };
            detail.insert("template_hash".into(), json!(template.hash()));
            return head
                .verdict(Status::Skipped, why)
                .with_typed_evidence(evidence);
        }
        let total = steps.len();
        // Collected first: a stream over a closure would make this future not `Send`.
        let asks: Vec<_> = steps
            .iter()
            .enumerate()
            .map(|(i, step)| self.score(step, i + 1, total, transcript, rt))
            .collect();
        let scored: Vec<Scored> = futures::stream::iter(asks)
            .buffered(CONCURRENT_STEPS)
            .collect()
            .await;

        let mut calls = Calls::default();
        let mut listed = Vec::new();
        let mut failure = None;
        let mut scores = Vec::new();
        for (i, (step, s)) in steps.iter().zip(scored).enumerate() {
            calls.add(&s.calls);
            let mut entry = StepScore {
                step: i + 1,
                round: step.turn.round,
                tool: step
                    .call
                    .and_then(|c| step.turn.tool_calls.get(c))
                    .map(|call| call.name.clone()),
                score: None,
                explanation: None,
                failure: None,
                detail: Map::from_iter([
                    ("weight".to_owned(), json!(step.weight)),
                    ("attempts".to_owned(), json!(s.calls.attempts)),
                ]),
            };
            match s.result {
                Ok((explanation, score)) => {
                    entry.score = Some(score);
                    entry.explanation = Some(explanation.clone());
                    scores.push(Graded {
                        index: i,
                        score,
                        weight: step.weight,
                        explanation,
                    });
                }
                Err(f) => {
                    entry.detail.insert("raw".into(), json!(s.calls.raw));
                    let f = match f {
                        Failure::Error { reason, transient } => Failure::Error {
                            reason: format!("{}: {reason}", step.label(i + 1)),
                            transient,
                        },
                        skipped => skipped,
                    };
                    entry.failure = Some(match &f {
                        Failure::Error { reason, .. }
                        | Failure::Skipped(reason)
                        | Failure::Required(reason) => reason.clone(),
                    });
                    // An error outweighs a skip: report the first error, else the first skip.
                    let is_error = matches!(f, Failure::Error { .. } | Failure::Required(_));
                    if failure.is_none()
                        || (is_error && matches!(failure, Some(Failure::Skipped(_))))
                    {
                        failure = Some(f);
                    }
                }
            }
            listed.push(entry);
        }
        evidence.set_reading(head.kind, Reading::Steps(StepScores { steps: listed }));
        if let Some(f) = failure {
            let mut verdict = f.verdict(head, template, &calls, evidence);
            verdict.threshold = Some(self.threshold);
            return verdict;
        }
        let aggregate = match aggregate(self.aggregate, &scores) {
            Ok(a) => a,
            Err(why) => {
                let f = Failure::Error {
                    reason: why,
                    transient: false,
                };
                return f.verdict(head, template, &calls, evidence);
            }
        };
        evidence.detail.insert("score".into(), json!(aggregate));
        calls.evidence(template, &mut evidence);
        let status = if aggregate >= self.threshold {
            Status::Pass
        } else {
            Status::Fail
        };
        let reason = self.reason(status, aggregate, &steps, &scores);
        let mut verdict = head
            .verdict(status, reason)
            .with_score(aggregate, Some(self.threshold))
            .with_typed_evidence(evidence);
        verdict.cost_usd = calls.cost_usd;
        verdict
    }

    /// `mean 0.72 >= 0.5 over 3 tool calls; weakest: step 2 get_bookings (0.40): …`.
    fn reason(
        &self,
        status: Status,
        aggregate: f64,
        steps: &[Step<'_>],
        scores: &[Graded],
    ) -> String {
        let compared = if status == Status::Pass { ">=" } else { "<" };
        let what = match (self.steps, steps.len()) {
            (StepKind::Tools, 1) => "tool call",
            (StepKind::Tools, _) => "tool calls",
            (StepKind::Turns, 1) => "turn",
            (StepKind::Turns, _) => "turns",
        };
        let mut reason = format!(
            "{} {aggregate:.2} {compared} threshold {} over {} {what}",
            aggregate_str(self.aggregate),
            self.threshold,
            steps.len()
        );
        let weakest = scores.iter().fold(None::<&Graded>, |low, g| match low {
            Some(l) if l.score <= g.score => Some(l),
            _ => Some(g),
        });
        if let Some(g) = weakest {
            reason.push_str(&format!(
                "; weakest: {} ({:.2})",
                steps[g.index].label(g.index + 1),
                g.score
            ));
            if !g.explanation.is_empty() {
                reason.push_str(&format!(": {}", truncate(&g.explanation, REASON_CHARS)));
            }
        }
        reason
    }

    /// Asks the judge about one step.
    async fn score(
        &self,
        step: &Step<'_>,
        number: usize,
        total: usize,
        transcript: &Transcript,
        rt: &JudgeRuntime<'_>,
    ) -> Scored {
        let template = &self.material.template;
        let history = seen_before(
            transcript,
            position(transcript, step.turn),
            step.turn.branch.as_deref(),
        );
        let (earlier, shown) = match step.call {
            Some(c) => (
                step.turn.tool_calls.iter().take(c).collect(),
                step.turn
                    .tool_calls
                    .get(c)
                    .map(|call| fence("tool_call", &tool_line(call)))
                    .unwrap_or_default(),
            ),
            None => (
                step.turn.tool_calls.iter().collect(),
                fence("agent_output", &step.turn.output),
            ),
        };
        let judged = Judged {
            history: &history,
            turn: step.turn,
            tool_calls: earlier,
            withheld: None,
        };
        let mut vars = self.material.vars(&judged);
        vars.remove("output");
        vars.insert(
            "step_kind".into(),
            json!(if step.call.is_some() { "tool" } else { "turn" }),
        );
        vars.insert("step_number".into(), json!(number));
        vars.insert("steps_total".into(), json!(total));
        vars.insert("step".into(), json!(shown));
        let prompt = match template.render(&Value::Object(vars)) {
            Ok(prompt) => prompt,
            Err(e) => {
                return Scored {
                    result: Err(Failure::Error {
                        reason: format!("cannot render the step template: {e}"),
                        transient: false,
                    }),
                    calls: Calls::default(),
                };
            }
        };
        let question = Question {
            top_logprobs: None,
            model: self.material.model.as_deref(),
            template,
            prompt,
            schema_name: "step_score",
            schema: schema(),
        };
        let (result, calls) = ask(rt, question, interpret).await;
        Scored { result, calls }
    }
}

impl AwaitedCheck for StepJudge {
    /// Display name: `step-score "<criteria>" (tools, mean)`.
    fn name(&self) -> String {
        format!(
            "{KIND} {} ({}, {})",
            quoted_list(std::slice::from_ref(&self.material.criteria)),
            steps_str(self.steps),
            aggregate_str(self.aggregate)
        )
    }

    fn kind(&self) -> CheckKind {
        KIND
    }

    fn judges(&self) -> Vec<crate::JudgeUse> {
        vec![crate::JudgeUse::of(
            &self.material,
            &AwaitedCheck::name(self),
        )]
    }

    fn grade<'a>(
        &'a self,
        head: VerdictHead<'a>,
        input: &'a Input<'a>,
        rt: &'a JudgeRuntime<'a>,
    ) -> BoxFuture<'a, Verdict> {
        Box::pin(self.run(head, &input.subject.turns, input.transcript, rt))
    }
}

fn steps_str(kind: StepKind) -> &'static str {
    match kind {
        StepKind::Tools => "tools",
        StepKind::Turns => "turns",
    }
}

fn aggregate_str(method: StepAggregate) -> &'static str {
    match method {
        StepAggregate::Mean => "mean",
        StepAggregate::Min => "min",
        StepAggregate::Last => "last",
    }
}

mod answer;
#[cfg(test)]
mod tests;
