//! LLM judges: pointwise `judge`, multi-dimension `rubric`, `pairwise` and
//! `select-best`.
//!
//! What every judge shares lives here: the run-time inputs ([`JudgeRuntime`],
//! [`JudgeModels`]), what a judge shows the model about a turn, and one exchange
//! with the model ([`ask`]): render, call, validate, retry a bad answer, account.
//!
//! Failure handling, in one place:
//! - no model (the [`JudgeModels`] answers [`ErrorKind::NoCredentials`], see
//!   [`no_judge_model`]) → `skipped` with the reason, or `error` when `strict` or
//!   `require_judges`; either way flagged `judge_unavailable` in the evidence;
//! - `--cache-only` and not cached → `error`;
//! - any other model error → `error` (evidence `transient` says whether trying
//!   again may help); the model layers have already retried transient failures;
//! - an answer that is not JSON, breaks the schema, or carries a score the scale
//!   does not allow → asked again, at most [`MAX_ATTEMPTS`] calls in all, then
//!   `error` with the raw answer in the evidence. Never a default pass or a silent 0.
//!
//! A retry must be a fresh call, not the cached bad answer: the retried request
//! carries `template_hash` = `<hash>-retry<n>` (the hash is part of the cache key,
//! so the key differs while staying deterministic: a cached re-run replays the
//! same attempts) and, as conversation, the rejected answer and what was wrong.

mod answer;
pub(crate) mod choice;
pub(crate) mod compile;
pub(crate) mod extract;
mod geval;
pub(crate) mod metric;
mod pairwise;
mod pointwise;
pub(crate) mod prompt;
mod rubric;
mod select;
pub(crate) mod steps;
mod uses;

use gavel_core::workspace::WorkspaceState;
use gavel_core::{Attempts, Evidence, ModelCalls, ShortCircuit, Status, ToolCall, Turn, Verdict};
use gavel_models::{ChatRequest, ErrorKind, Message, ModelError, OutputSchema};
use serde_json::{Map, Value, json};

pub use pairwise::{PairwiseInput, PairwiseSpec, pairwise};
pub(crate) use pointwise::{PointwiseJudge, number};
pub use prompt::{JudgeTemplate, TemplateKind};
pub(crate) use rubric::RubricJudge;
pub use select::{Candidate, SelectBestInput, SelectBestSpec, select_best};
pub use uses::JudgeUse;

use crate::finding::{VerdictHead, merge};
use crate::names::truncate;
use crate::runtime::{JudgeRuntime, NO_JUDGE_MODEL};
use crate::subject::Judged;
use prompt::{Prompt, fence, neutralise};

/// Calls of one judge for one answer at most: the first and two retries.
pub const MAX_ATTEMPTS: u32 = 3;

/// What a judge of a turn shows the model besides the turn, fixed at compile time.
#[derive(Debug, Clone)]
pub(crate) struct Material {
    /// The criteria (the check's, else the round's, else the case's).
    pub(crate) criteria: String,
    /// The expected output shown as a reference, if any.
    pub(crate) reference: Option<Value>,
    /// The case's context.
    pub(crate) context: Option<Value>,
    /// The tools the judged turn was expected to call.
    pub(crate) expected_tools: Vec<String>,
    /// The judge model id (`None`: the suite default).
    pub(crate) model: Option<String>,
    /// The prompt template.
    pub(crate) template: JudgeTemplate,
}

/// Characters of each history message, tool argument and tool result shown.
const HISTORY_CHARS: usize = 2000;
const TOOL_CHARS: usize = 500;
/// Characters of a coding agent's diff a judge is shown.
const WORKSPACE_CHARS: usize = 20_000;
/// Characters of the end of a post-run command's output a judge is shown.
const COMMAND_CHARS: usize = 2_000;

impl Material {
    /// Whether the output equals the string reference, trimmed: the judge is not
    /// needed.
    pub(crate) fn exact_match(&self, output: &str) -> bool {
        matches!(&self.reference, Some(Value::String(r)) if r.trim() == output.trim())
    }

    /// The template variables shared by pointwise and rubric judges, untrusted text
    /// fenced.
    pub(crate) fn vars(&self, judged: &Judged<'_>) -> Map<String, Value> {
        let mut vars = Map::new();
        vars.insert("criteria".into(), neutralise(&self.criteria).into());
        vars.insert(
            "input".into(),
            fence("user_input", &judged.turn.input).into(),
        );
        vars.insert(
            "output".into(),
            fence("agent_output", &judged.turn.output).into(),
        );
        vars.insert("history".into(), history(judged.history));
        vars.insert(
            "context".into(),
            self.context
                .as_ref()
                .map_or(Value::Null, |c| fence("context", &as_text(c)).into()),
        );
        vars.insert(
            "reference".into(),
            self.reference
                .as_ref()
                .map_or(Value::Null, |r| fence("reference", &as_text(r)).into()),
        );
        vars.insert("tools_called".into(), tools_called(&judged.tool_calls));
        vars.insert(
            "workspace".into(),
            judged
                .turn
                .workspace
                .as_deref()
                .map_or(Value::Null, |w| fence("workspace", &workspace(w)).into()),
        );
        vars.insert(
            "withheld".into(),
            judged
                .withheld
                .as_ref()
                .map_or(Value::Null, |w| fence("other_branches", w).into()),
        );
        vars.insert(
            "expected_tools".into(),
            self.expected_tools
                .iter()
                .map(|t| neutralise(t))
                .collect::<Vec<_>>()
                .into(),
        );
        vars
    }
}

/// Strings as they are, other JSON pretty-printed.
fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
    }
}

/// `user: …` / `assistant: …` lines, fenced; null when there is no history. A
/// follow-up shows as the user answering the assistant's question; a turn whose
/// target named the agent shows `assistant (agent): …`.
fn history(turns: &[Turn]) -> Value {
    if turns.is_empty() {
        return Value::Null;
    }
    let lines: Vec<String> = turns
        .iter()
        .flat_map(|t| {
            [
                format!(
                    "{}: {}",
                    if t.followup {
                        "user (answering the assistant's question)"
                    } else {
                        "user"
                    },
                    truncate(&t.input, HISTORY_CHARS)
                ),
                match &t.agent {
                    Some(agent) => format!(
                        "assistant ({agent}): {}",
                        truncate(&t.output, HISTORY_CHARS)
                    ),
                    None => format!("assistant: {}", truncate(&t.output, HISTORY_CHARS)),
                },
            ]
        })
        .collect();
    fence("history", &lines.join("\n")).into()
}

/// What a coding agent left behind, for a judge: the changed files, the
/// diff and the post-run commands, each shortened, unfenced.
fn workspace(state: &WorkspaceState) -> String {
    let mut out = String::from("Changed files:\n");
    if state.changes.is_empty() {
        out.push_str("(none)\n");
    }
    for c in &state.changes {
        out.push_str(&format!(
            "{:?} {} (+{} -{})\n",
            c.kind, c.path, c.added, c.removed
        ));
    }
    if !state.diff.is_empty() {
        out.push_str("\nDiff:\n");
        out.push_str(&truncate(&state.diff, WORKSPACE_CHARS));
        out.push('\n');
    }
    for c in &state.commands {
        let ended = c.exit_code.map_or_else(
            || c.problem.clone().unwrap_or_default(),
            |e| format!("exit {e}"),
        );
        out.push_str(&format!("\nCommand `{}` ({ended}):\n", c.command));
        let mut tail = c.output.len().saturating_sub(COMMAND_CHARS);
        while !c.output.is_char_boundary(tail) {
            tail += 1;
        }
        out.push_str(&c.output[tail..]);
        out.push('\n');
    }
    out
}

/// `name(arguments) -> result` lines, fenced; null when no tool was called.
fn tools_called(calls: &[&ToolCall]) -> Value {
    if calls.is_empty() {
        return Value::Null;
    }
    let lines: Vec<String> = calls.iter().map(|c| tool_line(c)).collect();
    fence("tools_called", &lines.join("\n")).into()
}

/// `name(arguments) -> result` (`[agent] name(…)` when the call names its agent),
/// arguments and result shortened, unfenced.
pub(crate) fn tool_line(call: &ToolCall) -> String {
    let mut line = match &call.agent {
        Some(agent) => format!("[{agent}] "),
        None => String::new(),
    };
    line.push_str(&format!(
        "{}({})",
        call.name,
        truncate(&call.arguments.to_string(), TOOL_CHARS)
    ));
    if let Some(result) = &call.result {
        line.push_str(" -> ");
        line.push_str(&truncate(&as_text(result), TOOL_CHARS));
    }
    line
}

/// One question to the judge model.
pub(crate) struct Question<'a> {
    /// The judge model id (`None`: the suite default).
    pub(crate) model: Option<&'a str>,
    /// The template that rendered the prompt.
    pub(crate) template: &'a JudgeTemplate,
    /// The rendered prompt.
    pub(crate) prompt: Prompt,
    /// The answer schema's name and the schema.
    pub(crate) schema_name: &'static str,
    pub(crate) schema: Value,
    /// Alternatives per answer token whose log probabilities to ask for (G-Eval).
    pub(crate) top_logprobs: Option<u8>,
}

/// What one judge's model calls returned and cost.
#[derive(Debug, Clone, Default)]
pub(crate) struct Calls {
    pub(crate) model: Option<String>,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    pub(crate) latency_ms: u64,
    /// Summed over the calls whose price is known; `None` when none is.
    pub(crate) cost_usd: Option<f64>,
    /// Every call was served from the cache.
    pub(crate) cached: bool,
    /// Answers asked for: the first and each re-ask of an unusable answer.
    pub(crate) attempts: u32,
    /// The transport tries those calls took (retries, 429s), from the retry layer.
    pub(crate) transport: Attempts,
    /// The last answer's text.
    pub(crate) raw: Option<String>,
    /// Why each rejected answer was rejected.
    pub(crate) problems: Vec<String>,
    /// The accepted answer's token log probabilities, when asked for and returned.
    pub(crate) logprobs: Vec<gavel_models::TokenLogprob>,
}

impl Calls {
    /// The call parts of a verdict's evidence: the model, what the calls took
    /// and their transport tries typed, the template and answers as detail.
    pub(crate) fn evidence(&self, template: &JudgeTemplate, into: &mut Evidence) {
        into.model.clone_from(&self.model);
        into.calls = Some(ModelCalls {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            latency_ms: self.latency_ms,
            cached: self.cached,
            attempts: self.attempts,
        });
        into.transport = (self.transport.attempts > 0).then_some(self.transport);
        let detail = &mut into.detail;
        detail.insert("template".into(), json!(template.origin()));
        detail.insert("template_hash".into(), json!(template.hash()));
        detail.insert("raw".into(), json!(self.raw));
        if !self.problems.is_empty() {
            detail.insert("rejected".into(), json!(self.problems));
        }
    }

    /// The call parts as the fields of a call record nested in a check's
    /// evidence (a claim extracted, a choice made), after the record's own.
    pub(crate) fn record(&self, template: &JudgeTemplate, into: &mut Map<String, Value>) {
        let mut parts = Evidence::default();
        self.evidence(template, &mut parts);
        merge(into, &parts);
    }

    /// Adds another judge's calls (pairwise: both orders).
    pub(crate) fn add(&mut self, other: &Calls) {
        if self.model.is_none() {
            self.model.clone_from(&other.model);
        }
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.latency_ms += other.latency_ms;
        self.cost_usd = add_cost(self.cost_usd, other.cost_usd);
        self.cached = (self.attempts == 0 || self.cached) && (other.attempts == 0 || other.cached);
        self.attempts += other.attempts;
        self.transport.add(&other.transport);
    }
}

/// The sum of two costs, `None` only when neither is known.
pub(crate) fn add_cost(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

/// Why a judge gave no grade.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// No model or credentials (not strict).
    Skipped(String),
    /// No model or credentials while judges are required (`--strict`,
    /// `--require-judges`, `judge.required`): an `error`.
    Required(String),
    /// The model could not be called, or never answered usably.
    Error { reason: String, transient: bool },
}

impl Failure {
    fn from_model(e: &ModelError, rt: &JudgeRuntime<'_>) -> Self {
        let message = if e.message.trim().is_empty() {
            NO_JUDGE_MODEL.to_owned()
        } else {
            e.message.clone()
        };
        match e.kind {
            ErrorKind::NoCredentials if rt.require_judges => Failure::Required(format!(
                "{message} (judges are required: --require-judges or judge.required)"
            )),
            ErrorKind::NoCredentials if rt.strict => {
                Failure::Required(format!("{message} (--strict)"))
            }
            ErrorKind::NoCredentials => Failure::Skipped(message),
            ErrorKind::CacheMiss => Failure::Error {
                reason: format!("judge answer not in the cache (--cache-only): {message}"),
                transient: false,
            },
            kind => Failure::Error {
                reason: format!("judge model call failed: {message}"),
                transient: kind.is_retryable(),
            },
        }
    }

    /// The verdict: `skipped` or `error`, with the calls made so far in evidence.
    pub(crate) fn verdict(
        self,
        head: VerdictHead<'_>,
        template: &JudgeTemplate,
        calls: &Calls,
        mut evidence: Evidence,
    ) -> Verdict {
        evidence.judge_unavailable = matches!(self, Failure::Skipped(_) | Failure::Required(_));
        let (status, reason) = match self {
            Failure::Skipped(reason) => (Status::Skipped, reason),
            Failure::Required(reason) => {
                evidence.detail.insert("transient".into(), json!(false));
                (Status::Error, reason)
            }
            Failure::Error { reason, transient } => {
                evidence.detail.insert("transient".into(), json!(transient));
                (Status::Error, reason)
            }
        };
        calls.evidence(template, &mut evidence);
        let mut verdict = head.verdict(status, reason).with_typed_evidence(evidence);
        verdict.cost_usd = calls.cost_usd;
        verdict
    }
}

impl VerdictHead<'_> {
    /// The passing verdict of an answer equal to the reference: no model call, no cost.
    pub(crate) fn exact_match(
        self,
        template: &JudgeTemplate,
        mut evidence: Evidence,
        threshold: f64,
    ) -> Verdict {
        evidence
            .detail
            .insert("template_hash".into(), json!(template.hash()));
        evidence.short_circuit = Some(ShortCircuit::ExactMatch);
        let mut v = self
            .verdict(
                Status::Pass,
                "exact match with the expected output; judge not called",
            )
            .with_score(1.0, Some(threshold))
            .with_typed_evidence(evidence);
        v.cost_usd = Some(0.0);
        v
    }

    /// Renders `template`, or gives the `error` verdict saying why it could not.
    pub(crate) fn render(
        self,
        template: &JudgeTemplate,
        vars: Map<String, Value>,
        evidence: &Evidence,
        threshold: f64,
    ) -> Result<Prompt, Box<Verdict>> {
        template.render(&Value::Object(vars)).map_err(|e| {
            let mut evidence = evidence.clone();
            evidence
                .detail
                .insert("template_hash".into(), json!(template.hash()));
            let mut v = self
                .verdict(
                    Status::Error,
                    format!("cannot render the {} template: {e}", self.kind),
                )
                .with_typed_evidence(evidence);
            v.threshold = Some(threshold);
            Box::new(v)
        })
    }
}

/// Characters of a rejected answer sent back to the model with a retry.
const ECHO_CHARS: usize = 4000;

/// Asks the judge model `question` until `interpret` accepts a schema-valid answer,
/// at most [`MAX_ATTEMPTS`] calls; returns the accepted answer or why there is
/// none, with what the calls cost.
pub(crate) async fn ask<T>(
    rt: &JudgeRuntime<'_>,
    question: Question<'_>,
    interpret: impl Fn(&Value) -> Result<T, String>,
) -> (Result<T, Failure>, Calls) {
    let mut calls = Calls::default();
    let model = match rt.models.model(question.model) {
        Ok(model) => model,
        Err(e) => return (Err(Failure::from_model(&e, rt)), calls),
    };
    calls.model = Some(model.id().to_string());
    let schema = match crate::compiled::schema(&question.schema) {
        Ok(schema) => schema,
        Err(e) => {
            let reason = format!("the judge's answer cannot be validated: {e}");
            let failure = Failure::Error {
                reason,
                transient: false,
            };
            return (Err(failure), calls);
        }
    };
    let hash = match rt.rejudge {
        0 => question.template.hash().to_owned(),
        n => format!("{}-rejudge{n}", question.template.hash()),
    };
    let first = ChatRequest {
        system: question.prompt.system,
        messages: vec![Message::user(question.prompt.user)],
        temperature: Some(rt.temperature),
        max_tokens: Some(rt.max_tokens),
        schema: Some(OutputSchema {
            name: question.schema_name.to_owned(),
            schema: question.schema,
        }),
        sample: rt.sample,
        template_hash: Some(hash.clone()),
        top_logprobs: question.top_logprobs,
        ..ChatRequest::default()
    };
    // A retry is the first request plus the rejected answer, built only when needed.
    let mut retry: Option<ChatRequest> = None;
    calls.cached = true;
    loop {
        calls.attempts += 1;
        let response = match model.chat(retry.as_ref().unwrap_or(&first)).await {
            Ok(response) => response,
            Err(e) => {
                calls.cached = false;
                calls.transport.add(&e.attempts);
                return (Err(Failure::from_model(&e, rt)), calls);
            }
        };
        calls.transport.add(&response.attempts);
        calls.input_tokens += response.usage.input_tokens;
        calls.output_tokens += response.usage.output_tokens;
        calls.latency_ms += response.latency_ms;
        calls.cost_usd = add_cost(calls.cost_usd, response.cost_usd);
        calls.cached &= response.cached;
        let verdict = answer::parse(&response.text, &schema).and_then(|v| interpret(&v));
        let mut problem = match verdict {
            Ok(accepted) => {
                calls.raw = Some(response.text);
                calls.logprobs = response.logprobs;
                return (Ok(accepted), calls);
            }
            Err(problem) => problem,
        };
        if response.finish_reason.as_deref() == Some("length") {
            problem.push_str(" (the answer was cut at max_tokens)");
        }
        calls.problems.push(problem.clone());
        if calls.attempts >= MAX_ATTEMPTS {
            calls.raw = Some(response.text);
            let reason = format!(
                "the judge gave no usable answer in {} attempts: {problem}",
                calls.attempts
            );
            return (
                Err(Failure::Error {
                    reason,
                    transient: false,
                }),
                calls,
            );
        }
        // A fresh call: a cache key of its own, and the rejection as conversation.
        let mut next = first.clone();
        next.template_hash = Some(format!("{hash}-retry{}", calls.attempts));
        next.messages
            .push(Message::assistant(truncate(&response.text, ECHO_CHARS)));
        next.messages.push(Message::user(format!(
            "That answer was rejected: {problem}. Answer again with only the JSON object described, nothing else."
        )));
        calls.raw = Some(response.text);
        retry = Some(next);
    }
}

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
