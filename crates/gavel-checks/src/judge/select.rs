//! `select-best`: one judge picks the best of several answers to the same case
//! (listwise), the answers shown in an order shuffled per comparison.
//!
//! The runner gathers the answers (the case's targets per repeat, or its repeats
//! and variants per target) and calls [`select_best`], which returns one verdict
//! per candidate:
//!
//! | candidate | status | score |
//! | --- | --- | --- |
//! | the one the judge picked | pass | 1.0 |
//! | the others | fail | 0.0 |
//! | one with no answer (its turn broke) | skipped | — |
//! | all, when fewer than two answered | skipped | — |
//! | all answered, when the judge failed | error (skipped without a model) | — |
//!
//! The order is a permutation drawn from a seed derived from the case and the
//! comparison's group (so it differs per repeat, and a re-run shows the same
//! order); the evidence records the seed, the order shown and the position
//! chosen, which the report counts as the judge's position bias.

use std::sync::Arc;

use gavel_core::judge::{SELECT_BEST_MAX_ANSWERS as MAX_CANDIDATES, SelectAmong};
use gavel_core::{CheckKind, Evidence, Reading, SelectBestReading, Status, Verdict};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::prompt::{fence, neutralise};
use super::{Calls, JudgeTemplate, Question, TemplateKind, ask};
use crate::finding::VerdictHead;
use crate::names::numbered;
use crate::runtime::JudgeRuntime;
use crate::transform::OutputTransform;

/// The kind of select-best verdicts.
const KIND: CheckKind = CheckKind::SelectBest;

/// The criteria when neither the check, its round nor the case gives any.
const DEFAULT_CRITERIA: &str = "Which answer serves the user's message best: correct, complete, relevant to what was asked, and clear.";

/// A case's `select-best` check, for the runner, which gathers the answers.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectBestSpec {
    /// Which executions are compared.
    pub among: SelectAmong,
    /// The criteria: the check's, else its round's, else the case's.
    pub criteria: Option<String>,
    /// The judge model id (`None`: the suite default).
    pub model: Option<String>,
    /// The round whose (last) answer is compared; `None`: the conversation's last.
    pub round: Option<usize>,
    /// The prompt template.
    pub template: JudgeTemplate,
    /// The case's `transform`, applied to every answer before they are compared.
    pub(crate) transform: Option<Arc<OutputTransform>>,
    /// Its number among the case's checks of one name and round, from the second.
    pub(crate) number: Option<usize>,
}

impl SelectBestSpec {
    /// The judge configuration it compares with.
    pub fn judge_use(&self) -> super::JudgeUse {
        super::JudgeUse::unscored(self.model.clone(), self.template.kind(), &self.name())
    }

    /// A check among `among` with the built-in template and nothing else set.
    pub fn new(among: SelectAmong) -> Self {
        SelectBestSpec {
            among,
            criteria: None,
            model: None,
            round: None,
            template: JudgeTemplate::builtin(TemplateKind::SelectBest),
            transform: None,
            number: None,
        }
    }

    /// Display name: `select-best among targets` or `select-best among repeats`
    /// (`… #2` for the second of one name in a case's round).
    pub fn name(&self) -> String {
        let name = match self.among {
            SelectAmong::Targets => "select-best among targets",
            SelectAmong::Repeats => "select-best among repeats",
        };
        numbered(name.to_owned(), self.number)
    }
}

/// One execution's answer in a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// What it is, for people: the target's name, or `repeat 2`.
    pub label: &'a str,
    /// The user message it replies to.
    pub input: &'a str,
    /// The answer; `None` when its turn broke (it is not compared).
    pub output: Option<&'a str>,
}

/// The answers of one comparison.
#[derive(Debug, Clone)]
pub struct SelectBestInput<'a> {
    /// The case compared.
    pub case_id: &'a str,
    /// Which comparison of the case this is (e.g. `repeat 0`, `target a`): with
    /// the case id, the seed of the order shown.
    pub group: &'a str,
    /// The candidates, in plan order.
    pub candidates: Vec<Candidate<'a>>,
}

/// The seed of a comparison's order: the first 8 bytes of SHA-256 over the case
/// id and the group.
fn seed(case_id: &str, group: &str) -> u64 {
    let digest = Sha256::new()
        .chain_update(case_id.as_bytes())
        .chain_update([0])
        .chain_update(group.as_bytes())
        .finalize();
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(bytes)
}

/// Asks the judge for the best of the answered candidates, each rewritten by the
/// case's `transform` and shown in a shuffled order; one verdict per candidate,
/// in the candidates' order. An answer the transform cannot read is `error` and
/// not compared. The judge's cost is on the first answered candidate's verdict,
/// so a run counts it once.
pub async fn select_best(
    spec: &SelectBestSpec,
    input: &SelectBestInput<'_>,
    rt: &JudgeRuntime<'_>,
) -> Vec<Verdict> {
    let Some(transform) = &spec.transform else {
        return compare(spec, input, rt).await;
    };
    let outputs: Vec<Option<Result<String, String>>> = input
        .candidates
        .iter()
        .map(|c| c.output.map(|o| transform.answer(o)))
        .collect();
    let rewritten = SelectBestInput {
        case_id: input.case_id,
        group: input.group,
        candidates: input
            .candidates
            .iter()
            .zip(&outputs)
            .map(|(c, output)| Candidate {
                output: output.as_ref().and_then(|o| o.as_deref().ok()),
                ..*c
            })
            .collect(),
    };
    let mut verdicts = compare(spec, &rewritten, rt).await;
    for (v, output) in verdicts.iter_mut().zip(&outputs) {
        if let Some(Err(why)) = output {
            *v = Verdict::new(&v.check, KIND, Status::Error, why.as_str()).in_round(spec.round);
        }
    }
    verdicts
}

/// [`select_best`] on the answers as given.
async fn compare(
    spec: &SelectBestSpec,
    input: &SelectBestInput<'_>,
    rt: &JudgeRuntime<'_>,
) -> Vec<Verdict> {
    let name = spec.name();
    let head = VerdictHead {
        name: &name,
        kind: KIND,
        round: spec.round,
    };
    let answered: Vec<usize> = (0..input.candidates.len())
        .filter(|&i| input.candidates[i].output.is_some())
        .collect();
    let no_answer =
        |_: &Candidate<'_>| head.verdict(Status::Skipped, "no answer of this execution to compare");
    if answered.len() < 2 || answered.len() > MAX_CANDIDATES {
        let labels: Vec<&str> = answered
            .iter()
            .map(|&i| input.candidates[i].label)
            .collect();
        let reason = if answered.len() < 2 {
            format!(
                "select-best needs at least 2 answers to compare; {} ({})",
                match labels.len() {
                    0 => "none answered".to_owned(),
                    _ => "only 1 answered".to_owned(),
                },
                if labels.is_empty() {
                    "-".to_owned()
                } else {
                    labels.join(", ")
                }
            )
        } else {
            format!(
                "select-best compares at most {MAX_CANDIDATES} answers; {} answered",
                labels.len()
            )
        };
        return input
            .candidates
            .iter()
            .map(|c| match c.output {
                Some(_) => head.verdict(Status::Skipped, reason.clone()),
                None => no_answer(c),
            })
            .collect();
    }

    let seed = seed(input.case_id, input.group);
    let mut order = answered.clone();
    order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let shown: Vec<&str> = order.iter().map(|&i| input.candidates[i].label).collect();
    let mut evidence = Evidence::default();
    let detail = &mut evidence.detail;
    detail.insert("among".into(), json!(spec.among));
    detail.insert("group".into(), json!(input.group));
    detail.insert("seed".into(), json!(format!("{seed:016x}")));
    detail.insert("order".into(), json!(shown));

    let (result, calls) = judge(spec, input, &order, rt).await;
    let mut verdicts = Vec::with_capacity(input.candidates.len());
    for (i, c) in input.candidates.iter().enumerate() {
        if c.output.is_none() {
            verdicts.push(no_answer(c));
            continue;
        }
        let mut evidence = evidence.clone();
        let position = order.iter().position(|&o| o == i).map_or(0, |p| p + 1);
        evidence.set_reading(
            head.kind,
            Reading::SelectBest(SelectBestReading { position }),
        );
        let mut v = match &result {
            Err(failure) => failure
                .clone()
                .verdict(head, &spec.template, &calls, evidence),
            Ok((best, reasoning)) => {
                let chosen = order[best - 1];
                let detail = &mut evidence.detail;
                detail.insert("chosen".into(), json!(input.candidates[chosen].label));
                detail.insert("chosen_position".into(), json!(best));
                calls.evidence(&spec.template, &mut evidence);
                let (status, score, reason) = if chosen == i {
                    (
                        Status::Pass,
                        1.0,
                        format!(
                            "best of {} answers ({}): {reasoning}",
                            order.len(),
                            shown.join(", ")
                        ),
                    )
                } else {
                    (
                        Status::Fail,
                        0.0,
                        format!(
                            "not the best of {} answers: the judge chose {} (shown at position {best}): {reasoning}",
                            order.len(),
                            input.candidates[chosen].label
                        ),
                    )
                };
                head.verdict(status, reason)
                    .with_score(score, None)
                    .with_typed_evidence(evidence)
            }
        };
        v.cost_usd = (Some(&i) == answered.first())
            .then_some(calls.cost_usd)
            .flatten();
        verdicts.push(v);
    }
    verdicts
}

/// One judge call over the answers in `order`: the 1-based position chosen and
/// the judge's reasoning, or why there is none.
async fn judge(
    spec: &SelectBestSpec,
    input: &SelectBestInput<'_>,
    order: &[usize],
    rt: &JudgeRuntime<'_>,
) -> (Result<(usize, String), super::Failure>, Calls) {
    let candidates: Vec<&Candidate<'_>> = order.iter().map(|&i| &input.candidates[i]).collect();
    let same_input = candidates.windows(2).all(|w| w[0].input == w[1].input);
    let answers: Vec<Value> = candidates
        .iter()
        .enumerate()
        .map(|(n, c)| {
            json!({
                "number": n + 1,
                "input": (!same_input).then(|| fence("user_input", c.input)),
                "answer": fence(&format!("answer_{}", n + 1), c.output.unwrap_or_default()),
            })
        })
        .collect();
    let criteria = spec
        .criteria
        .as_deref()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or(DEFAULT_CRITERIA);
    let vars = json!({
        "criteria": neutralise(criteria),
        "input": same_input.then(|| fence("user_input", candidates[0].input)),
        "answers": answers,
    });
    let prompt = match spec.template.render(&vars) {
        Ok(prompt) => prompt,
        Err(e) => {
            let failure = super::Failure::Error {
                reason: format!("cannot render the select-best template: {e}"),
                transient: false,
            };
            return (Err(failure), Calls::default());
        }
    };
    let n = order.len();
    let question = Question {
        top_logprobs: None,
        model: spec.model.as_deref(),
        template: &spec.template,
        prompt,
        schema_name: "select_best_verdict",
        schema: json!({
            "type": "object",
            "properties": {
                "reasoning": { "type": "string" },
                "best": { "type": "integer", "minimum": 1, "maximum": n },
            },
            "required": ["reasoning", "best"],
            "additionalProperties": false,
        }),
    };
    let (result, calls) = ask(rt, question, |value| {
        let best = value
            .get("best")
            .and_then(Value::as_u64)
            .filter(|b| (1..=n as u64).contains(b))
            .ok_or_else(|| {
                format!(
                    "best {:?} is not an answer number 1 to {n}",
                    value.get("best")
                )
            })?;
        let reasoning = value
            .get("reasoning")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Ok((best as usize, reasoning))
    })
    .await;
    (result, calls)
}

#[cfg(test)]
mod tests;
