//! Metric checks graded by a judge, each with its own shipped, overridable
//! template: G-Eval, factuality, closed-QA, answer relevance, the RAG trio
//! (context recall, context relevance, faithfulness), summarization, and seed
//! 003's conversation metrics (task completion, conversation completeness, turn
//! relevancy, context retention, role adherence), which read every turn of the
//! conversation with the agent that gave it.
//!
//! Every metric scores 0-1. The claim-by-claim metrics list what the judge checked
//! (each statement, claim or chunk with its verdict and reason) in the evidence and
//! score the share judged "yes". As with every judge: no model → `skipped`, a
//! broken call or unusable answer → `error`, an output the judge flags as an
//! infrastructure or application failure → `error`.

use gavel_core::CheckKind;
use gavel_core::{Evidence, Metric, MetricSpec, Status, Turn, Verdict};
use serde_json::{Map, Value, json};

use super::answer::{self, status_schema};
use super::compile::{Env, Level, check_model, field};
use super::prompt::{JudgeTemplate, TemplateKind, fence, neutralise};
use super::{Calls, Material, Question, ask};
use crate::error::FieldError;
use crate::finding::VerdictHead;
use crate::names::{quoted_list, truncate};
use crate::runtime::JudgeRuntime;
use crate::subject::Judged;

/// Pass threshold on the 0-1 score unless the check gives one.
const DEFAULT_THRESHOLD: f64 = 0.5;
/// Retrieved chunks a RAG metric shows the judge at most.
const MAX_CHUNKS: usize = 50;
/// Alternatives per answer token whose probabilities G-Eval asks for: enough to
/// hold every score 1-5.
const GEVAL_TOP_LOGPROBS: u8 = 5;
/// Characters of an agent's name shown to the judge.
const AGENT_CHARS: usize = 64;
/// Why role adherence skips a conversation whose turns name no agent.
const NO_AGENTS: &str = "the target named no agent on any turn, so no answer has a role to keep (http and command targets read it at `response.agent`, `/agent` by default)";
/// Factuality categories that pass by default (D, a disagreement, fails).
const FACTUALITY_PASS: [&str; 4] = ["A", "B", "C", "E"];
/// What each factuality category means.
const CATEGORIES: [(&str, &str); 5] = [
    ("A", "a subset of the reference, fully consistent with it"),
    ("B", "a superset of the reference, fully consistent with it"),
    ("C", "the same details as the reference"),
    ("D", "disagrees with the reference"),
    (
        "E",
        "differs from the reference only in ways that do not matter",
    ),
];

/// A compiled metric check.
#[derive(Debug, Clone)]
pub(crate) struct MetricJudge {
    metric: Metric,
    material: Material,
    /// The retrieved chunks (RAG metrics), as written in the case.
    retrieved: Vec<String>,
    threshold: f64,
    /// Factuality: the categories that pass.
    pass_categories: Vec<String>,
    /// G-Eval: the template that writes the evaluation steps.
    steps_template: Option<JudgeTemplate>,
    /// Role adherence: each agent's role, by agent name.
    roles: Vec<(String, String)>,
}

/// Whether a metric reads every turn of the conversation (`turns` in its template).
fn reads_conversation(metric: Metric) -> bool {
    matches!(
        metric,
        Metric::TaskCompletion
            | Metric::ConversationCompleteness
            | Metric::TurnRelevancy
            | Metric::ContextRetention
            | Metric::RoleAdherence
    )
}

/// Whether a metric's judge gives one item per turn of the conversation.
fn per_turn(metric: Metric) -> bool {
    matches!(
        metric,
        Metric::TurnRelevancy | Metric::ContextRetention | Metric::RoleAdherence
    )
}

impl MetricJudge {
    /// The judge configurations of check `name`: its metric's template, and
    /// G-Eval's step-writing one.
    pub(crate) fn judges(&self, name: &str) -> Vec<super::JudgeUse> {
        let mut uses = vec![super::JudgeUse::of(&self.material, name)];
        if let Some(steps) = &self.steps_template {
            let mut writer = super::JudgeUse::of(&self.material, name);
            writer.kind = steps.kind();
            uses.push(writer);
        }
        uses
    }

    /// Compiles a metric check at `at`; errors carry absolute field paths.
    pub(crate) fn compile(
        metric: Metric,
        spec: &MetricSpec,
        at: &str,
        env: &Env<'_>,
        level: &Level<'_>,
    ) -> Result<Self, FieldError> {
        check_model(spec.model.as_ref(), field(at, "model"))?;
        let threshold = spec.threshold.unwrap_or(DEFAULT_THRESHOLD);
        if !(threshold.is_finite() && (0.0..=1.0).contains(&threshold)) {
            return Err(FieldError::new(
                field(at, "threshold"),
                format!("threshold {threshold} is outside the metric's 0-1 score"),
            ));
        }
        let needs = |what: &str| FieldError::new(at, format!("{} needs {what}", metric.as_str()));
        let own = spec.criteria.as_deref().filter(|c| !c.trim().is_empty());
        let criteria = own.or(level.criteria.as_ref().map(|(c, _)| *c));
        let criteria = match (metric, criteria) {
            (Metric::GEval | Metric::ClosedQa, None) => {
                return Err(needs("`criteria`: on the check, the round or the case"));
            }
            (_, c) => c.unwrap_or_default().to_owned(),
        };
        let reference = spec.reference.as_ref().or(level.reference);
        if matches!(metric, Metric::Factuality | Metric::ContextRecall) && reference.is_none() {
            return Err(needs(
                "a `reference`, or an `expected_output` on the round or the case",
            ));
        }
        let rag = matches!(
            metric,
            Metric::ContextRecall | Metric::ContextRelevance | Metric::ContextFaithfulness
        );
        let retrieved = if rag {
            chunks(env.retrieved_context).map_err(|why| {
                FieldError::new("retrieved_context", format!("{}: {why}", metric.as_str()))
            })?
        } else {
            Vec::new()
        };
        let pass_categories = match (&spec.pass_categories, metric) {
            (Some(_), m) if m != Metric::Factuality => {
                return Err(FieldError::new(
                    field(at, "pass_categories"),
                    "only factuality has categories",
                ));
            }
            (Some(list), _) => {
                let list: Vec<String> = list.iter().map(|c| c.trim().to_uppercase()).collect();
                if list.is_empty() || list.iter().any(|c| !CATEGORIES.iter().any(|(k, _)| k == c)) {
                    return Err(FieldError::new(
                        field(at, "pass_categories"),
                        "give one or more of A, B, C, D, E",
                    ));
                }
                list
            }
            (None, _) => FACTUALITY_PASS.iter().map(|c| (*c).to_owned()).collect(),
        };
        let roles = match (metric, spec.roles.is_empty()) {
            (Metric::RoleAdherence, true) => {
                return Err(needs("`roles`: each agent's role, by agent name"));
            }
            (Metric::RoleAdherence, false) => spec
                .roles
                .iter()
                .map(|(agent, role)| (agent.clone(), role.clone()))
                .collect(),
            (_, false) => {
                return Err(FieldError::new(
                    field(at, "roles"),
                    "only role-adherence has roles",
                ));
            }
            (_, true) => Vec::new(),
        };
        let template = env.templates.metric(TemplateKind::Metric(metric));
        let material = env.material(criteria, reference, level, spec.model.as_ref(), &template);
        Ok(MetricJudge {
            metric,
            material,
            retrieved,
            threshold,
            pass_categories,
            steps_template: (metric == Metric::GEval)
                .then(|| env.templates.metric(TemplateKind::GEvalSteps)),
            roles,
        })
    }

    /// The kind of its verdicts.
    pub(crate) fn kind(&self) -> CheckKind {
        self.metric.kind()
    }

    /// Display name: `g-eval "<criteria>"`, or the metric's name.
    pub(crate) fn name(&self) -> String {
        match self.metric {
            Metric::TaskCompletion if !self.material.criteria.trim().is_empty() => format!(
                "{} {}",
                self.kind(),
                quoted_list(std::slice::from_ref(&self.material.criteria))
            ),
            Metric::GEval | Metric::ClosedQa => format!(
                "{} {}",
                self.kind(),
                quoted_list(std::slice::from_ref(&self.material.criteria))
            ),
            _ => self.kind().to_string(),
        }
    }

    /// Grades the judged turn. Never panics, never passes by default.
    pub(crate) async fn run(
        &self,
        head: VerdictHead<'_>,
        judged: &Judged<'_>,
        rt: &JudgeRuntime<'_>,
    ) -> Verdict {
        let turns: Vec<&Turn> = judged.history.iter().chain([judged.turn]).collect();
        if self.metric == Metric::RoleAdherence && turns.iter().all(|t| t.agent.is_none()) {
            let mut v = head.verdict(Status::Skipped, NO_AGENTS);
            v.threshold = Some(self.threshold);
            return v;
        }
        let mut evidence = Evidence::default();
        let detail = &mut evidence.detail;
        detail.insert("metric".into(), json!(self.kind()));
        detail.insert("threshold".into(), json!(self.threshold));
        let mut spent = Calls::default();
        let mut vars = self.material.vars(judged);
        vars.insert(
            "retrieved_context".into(),
            self.retrieved
                .iter()
                .map(|c| fence("retrieved_context", c))
                .collect::<Vec<_>>()
                .into(),
        );
        if reads_conversation(self.metric) {
            vars.insert("turns".into(), conversation(&turns));
            vars.insert(
                "roles".into(),
                self.roles
                    .iter()
                    .map(|(agent, role)| json!({"agent": neutralise(agent), "role": neutralise(role)}))
                    .collect::<Vec<_>>()
                    .into(),
            );
        }
        if let Some(steps_template) = &self.steps_template {
            match self.steps(head, steps_template, &evidence, rt).await {
                Ok((steps, calls)) => {
                    spent.add(&calls);
                    let detail = &mut evidence.detail;
                    detail.insert("evaluation_steps".into(), json!(steps));
                    detail.insert("steps_template_hash".into(), json!(steps_template.hash()));
                    vars.insert("steps".into(), json!(steps));
                }
                Err(v) => return *v,
            }
        }
        let template = &self.material.template;
        let prompt = match head.render(template, vars, &evidence, self.threshold) {
            Ok(prompt) => prompt,
            Err(v) => return *v,
        };
        let question = Question {
            // G-Eval weighs each score by its probability where the provider says.
            top_logprobs: (self.metric == Metric::GEval).then_some(GEVAL_TOP_LOGPROBS),
            model: self.material.model.as_deref(),
            template,
            prompt,
            schema_name: "metric_verdict",
            schema: schema(self.metric),
        };
        let items = match self.metric {
            Metric::ContextRelevance => Some((self.retrieved.len(), "chunk")),
            m if per_turn(m) => Some((turns.len(), "turn")),
            _ => None,
        };
        let (result, calls) = ask(rt, question, |v| read(self.metric, v, items)).await;
        spent.add(&calls);
        spent.raw = calls.raw.clone();
        spent.problems = calls.problems.clone();
        let mut verdict = match result {
            Err(failure) => failure.verdict(head, template, &spent, evidence),
            Ok(Reading::Flagged { flag, reasoning }) => {
                let detail = &mut evidence.detail;
                detail.insert("status".into(), json!(flag.marker()));
                detail.insert("transient".into(), json!(flag == answer::Flag::Transient));
                spent.evidence(template, &mut evidence);
                head.verdict(
                    Status::Error,
                    super::pointwise::with_reasoning(flag.reason(), &reasoning),
                )
                .with_typed_evidence(evidence)
            }
            Ok(Reading::Graded(graded)) => {
                let weighted = calls
                    .raw
                    .as_deref()
                    .and_then(|raw| super::geval::weighted_score(raw, &calls.logprobs));
                let (score, pass, reason) = self.grade(&graded, weighted, &mut evidence.detail);
                spent.evidence(template, &mut evidence);
                head.verdict(if pass { Status::Pass } else { Status::Fail }, reason)
                    .with_score(score, None)
                    .with_typed_evidence(evidence)
            }
        };
        verdict.threshold = Some(self.threshold);
        verdict.cost_usd = spent.cost_usd;
        verdict
    }

    /// G-Eval's evaluation steps, written by the judge from the criteria (the
    /// model cache keeps them, so a re-run grades with the same steps).
    async fn steps(
        &self,
        head: VerdictHead<'_>,
        template: &JudgeTemplate,
        evidence: &Evidence,
        rt: &JudgeRuntime<'_>,
    ) -> Result<(Vec<String>, Calls), Box<Verdict>> {
        let mut vars = Map::new();
        vars.insert(
            "criteria".into(),
            super::prompt::neutralise(&self.material.criteria).into(),
        );
        let prompt = head.render(template, vars, evidence, self.threshold)?;
        let question = Question {
            top_logprobs: None,
            model: self.material.model.as_deref(),
            template,
            prompt,
            schema_name: "evaluation_steps",
            schema: json!({
                "type": "object",
                "properties": { "steps": {
                    "type": "array", "items": { "type": "string" }, "minItems": 1, "maxItems": 12
                } },
                "required": ["steps"],
                "additionalProperties": false,
            }),
        };
        let (result, calls) = ask(rt, question, |v| {
            let steps: Vec<String> = v["steps"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str())
                        .map(str::trim)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            if steps.iter().any(String::is_empty) {
                Err("an evaluation step is empty".to_owned())
            } else {
                Ok(steps)
            }
        })
        .await;
        match result {
            Ok(steps) => Ok((steps, calls)),
            Err(failure) => {
                let mut evidence = evidence.clone();
                evidence
                    .detail
                    .insert("stage".into(), json!("evaluation steps"));
                let mut v = failure.verdict(head, template, &calls, evidence);
                v.threshold = Some(self.threshold);
                Err(Box::new(v))
            }
        }
    }

    /// The score, whether it passes and the reason, with what the judge found
    /// added to the evidence.
    fn grade(
        &self,
        graded: &Graded,
        weighted: Option<super::geval::Weighted>,
        evidence: &mut Map<String, Value>,
    ) -> (f64, bool, String) {
        let threshold = self.threshold;
        match graded {
            Graded::Score { reasoning, score } if self.metric == Metric::GEval => {
                evidence.insert("score".into(), json!(score));
                let (used, how) = match weighted {
                    Some(w) => {
                        evidence.insert("score_source".into(), json!("logprobs"));
                        evidence.insert("score_probabilities".into(), json!(w.probabilities));
                        (
                            w.score,
                            format!(
                                "{:.2}/5, weighted by the score tokens' probabilities; sampled {score}",
                                w.score
                            ),
                        )
                    }
                    None => {
                        evidence.insert("score_source".into(), json!("sampled"));
                        (
                            *score,
                            format!(
                                "{score}/5 (sampled score; the provider returned no token probabilities)"
                            ),
                        )
                    }
                };
                let normalised = (used - 1.0) / 4.0;
                (
                    normalised,
                    normalised >= threshold,
                    format!("{how}: {reasoning}"),
                )
            }
            Graded::Score { reasoning, score } => {
                let normalised = (score - 1.0) / 4.0;
                evidence.insert("score".into(), json!(score));
                (
                    normalised,
                    normalised >= threshold,
                    format!("{score}/5: {reasoning}"),
                )
            }
            Graded::Category {
                reasoning,
                category,
            } => {
                let meaning = CATEGORIES
                    .iter()
                    .find(|(k, _)| k == category)
                    .map_or("", |(_, m)| *m);
                evidence.insert("category".into(), json!(category));
                evidence.insert("pass_categories".into(), json!(self.pass_categories));
                let pass = self.pass_categories.contains(category);
                let reason = format!("category {category}, {meaning}: {reasoning}");
                (if pass { 1.0 } else { 0.0 }, pass, reason)
            }
            Graded::YesNo { reasoning, yes } => {
                evidence.insert("meets".into(), json!(if *yes { "Y" } else { "N" }));
                let what = if *yes {
                    "meets the criterion"
                } else {
                    "does not meet the criterion"
                };
                (
                    f64::from(u8::from(*yes)),
                    *yes,
                    format!("{what}: {reasoning}"),
                )
            }
            Graded::Items(lists) => {
                let mut lowest: Option<(f64, String)> = None;
                for (label, items) in lists {
                    evidence.insert(
                        (*label).into(),
                        json!(items.iter().map(Item::json).collect::<Vec<_>>()),
                    );
                    let (score, summary) = summarise(self.metric, label, items);
                    evidence.insert(format!("{label}_score"), json!(score));
                    if lowest.as_ref().is_none_or(|(s, _)| score < *s) {
                        lowest = Some((score, summary));
                    } else if let Some((_, text)) = &mut lowest {
                        text.push_str("; ");
                        text.push_str(&summary);
                    }
                }
                // Every metric has a list, and `read` refuses an empty one.
                let (score, reason) = lowest.unwrap_or_default();
                (score, score >= threshold, reason)
            }
        }
    }
}

/// The conversation's turns for the template: number, agent, input and output,
/// the texts fenced and shortened as history is.
fn conversation(turns: &[&Turn]) -> Value {
    turns
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({
                "number": i + 1,
                "agent": t.agent.as_deref().map(|a| neutralise(&truncate(a, AGENT_CHARS))),
                "input": fence("turn_input", &truncate(&t.input, super::HISTORY_CHARS)),
                "output": fence("turn_output", &truncate(&t.output, super::HISTORY_CHARS)),
            })
        })
        .collect::<Vec<_>>()
        .into()
}

/// The retrieved context as chunks: a string is one chunk, a list of strings many.
fn chunks(value: Option<&Value>) -> Result<Vec<String>, String> {
    let list = match value {
        None => {
            return Err("give the case's `retrieved_context` (a text or a list of texts)".into());
        }
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!(
                    "item {i} is {}, not a text",
                    gavel_core::json_type(other)
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(format!(
                "{} is not a text or a list of texts",
                gavel_core::json_type(other)
            ));
        }
    };
    if list.iter().all(|c| c.trim().is_empty()) {
        return Err("it is empty".into());
    }
    if list.len() > MAX_CHUNKS {
        return Err(format!("{} chunks; at most {MAX_CHUNKS}", list.len()));
    }
    Ok(list)
}

/// One statement, claim, chunk or key point the judge ruled on.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    text: String,
    reason: String,
    yes: bool,
}

impl Item {
    fn json(&self) -> Value {
        json!({ "text": self.text, "verdict": if self.yes { "yes" } else { "no" }, "reason": self.reason })
    }
}

/// What a metric's answer says, once valid.
#[derive(Debug, Clone, PartialEq)]
enum Graded {
    Score {
        reasoning: String,
        score: f64,
    },
    Category {
        reasoning: String,
        category: String,
    },
    YesNo {
        reasoning: String,
        yes: bool,
    },
    /// Named lists of items (one list for most, two for summarization).
    Items(Vec<(&'static str, Vec<Item>)>),
}

#[derive(Debug, Clone, PartialEq)]
enum Reading {
    Flagged {
        flag: answer::Flag,
        reasoning: String,
    },
    Graded(Graded),
}

/// The lists a claim-by-claim metric's answer holds.
fn lists(metric: Metric) -> &'static [&'static str] {
    match metric {
        Metric::Summarization => &["claims", "key_points"],
        _ => &["items"],
    }
}

/// The answer schema of a metric (strict-compatible, reasoning before the grade).
fn schema(metric: Metric) -> Value {
    let nullable = |t: Value| json!({ "anyOf": [t, { "type": "null" }] });
    let graded = |key: &str, grade: Value| {
        json!({
            "type": "object",
            "properties": {
                "status": status_schema(),
                "reasoning": { "type": "string" },
                key: nullable(grade),
            },
            "required": ["status", "reasoning", key],
            "additionalProperties": false,
        })
    };
    match metric {
        Metric::GEval | Metric::TaskCompletion => graded(
            "score",
            json!({ "type": "integer", "minimum": 1, "maximum": 5 }),
        ),
        Metric::Factuality => graded(
            "category",
            json!({ "type": "string", "enum": ["A", "B", "C", "D", "E"] }),
        ),
        Metric::ClosedQa => graded("meets", json!({ "type": "string", "enum": ["Y", "N"] })),
        _ => {
            let item = json!({
                "type": "object",
                "properties": {
                    "text": { "type": "string" },
                    "reason": { "type": "string" },
                    "verdict": { "type": "string", "enum": ["yes", "no"] },
                },
                "required": ["text", "reason", "verdict"],
                "additionalProperties": false,
            });
            let mut properties = Map::new();
            properties.insert("status".into(), status_schema());
            let mut required = vec![json!("status")];
            for name in lists(metric) {
                properties.insert((*name).into(), json!({ "type": "array", "items": item }));
                required.push(json!(name));
            }
            json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            })
        }
    }
}

/// Reads a schema-valid answer; `items` is how many items it must give and of
/// what (one per retrieved chunk, or per turn), when the metric says.
fn read(metric: Metric, value: &Value, items: Option<(usize, &str)>) -> Result<Reading, String> {
    let reasoning = answer::text(value, "reasoning");
    if let Some(flag) = answer::flag(value) {
        return Ok(Reading::Flagged { flag, reasoning });
    }
    let missing = |key: &str| format!("status \"ok\" needs a `{key}`");
    let graded = match metric {
        Metric::GEval | Metric::TaskCompletion => Graded::Score {
            score: value["score"].as_f64().ok_or_else(|| missing("score"))?,
            reasoning,
        },
        Metric::Factuality => Graded::Category {
            category: value["category"]
                .as_str()
                .ok_or_else(|| missing("category"))?
                .to_owned(),
            reasoning,
        },
        Metric::ClosedQa => Graded::YesNo {
            yes: value["meets"].as_str().ok_or_else(|| missing("meets"))? == "Y",
            reasoning,
        },
        _ => {
            let expected = items;
            let mut out = Vec::new();
            for name in lists(metric) {
                let judged: Vec<Item> = value[*name]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|i| Item {
                                text: answer::text(i, "text"),
                                reason: answer::text(i, "reason"),
                                yes: i["verdict"] == "yes",
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if judged.is_empty() {
                    let (what, _) = ruled_on(metric, name);
                    return Err(format!(
                        "it lists no {what}: with nothing checked there is no score"
                    ));
                }
                if let Some((count, what)) = expected
                    && judged.len() != count
                {
                    return Err(format!(
                        "it rules on {} {what}s; there are {count}: give one item per {what}",
                        judged.len()
                    ));
                }
                out.push((*name, judged));
            }
            Graded::Items(out)
        }
    };
    Ok(Reading::Graded(graded))
}

/// What a metric's list (`label`) holds, and what its "yes" means.
fn ruled_on(metric: Metric, label: &str) -> (&'static str, &'static str) {
    match (metric, label) {
        (Metric::AnswerRelevance, _) => ("statements", "relevant to the question"),
        (Metric::ContextRecall, _) => ("reference claims", "supported by the retrieved context"),
        (Metric::ContextRelevance, _) => ("retrieved chunks", "relevant to the question"),
        (Metric::ContextFaithfulness, _) => ("claims", "supported by the retrieved context"),
        (Metric::ConversationCompleteness, _) => ("user intentions", "satisfied"),
        (Metric::TurnRelevancy, _) => ("agent answers", "relevant to the conversation"),
        (Metric::ContextRetention, _) => ("agent answers", "keeping what the user said earlier"),
        (Metric::RoleAdherence, _) => ("agent answers", "in their agent's role"),
        (_, "key_points") => ("key points of the source", "covered"),
        _ => ("claims of the summary", "supported by the source"),
    }
}

/// The share of items judged "yes" and a sentence saying so, naming the "no"s.
fn summarise(metric: Metric, label: &str, items: &[Item]) -> (f64, String) {
    let (what, yes) = ruled_on(metric, label);
    let good = items.iter().filter(|i| i.yes).count();
    let score = good as f64 / items.len() as f64;
    let mut text = format!("{good} of {} {what} {yes}", items.len());
    let bad: Vec<String> = items
        .iter()
        .filter(|i| !i.yes)
        .map(|i| format!("{:?} ({})", crate::names::short(&i.text), i.reason))
        .collect();
    if !bad.is_empty() {
        text.push_str("; not: ");
        text.push_str(&bad.join("; "));
    }
    (score, text)
}

#[cfg(test)]
mod conversation_tests;
#[cfg(test)]
mod tests;
