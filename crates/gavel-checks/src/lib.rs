//! Graders: a case's checks, compiled once, turn a transcript into
//! [`Verdict`](gavel_core::Verdict)s — deterministic checks first, then LLM judges.
//!
//! [`compile`] validates and compiles everything a case asks for (regexes, JSON
//! Schemas, expected values and tools, judge criteria, scales, thresholds, rubric
//! weights, judge templates) into a [`CheckPlan`]. Then, for one execution's
//! [`Transcript`](gavel_core::Transcript):
//! - [`CheckPlan::run_code`] runs the deterministic checks (sync, no model);
//! - [`CheckPlan::run`] runs those, then the checks that read outside the
//!   transcript (`grounding` oracles, `database`), then the judged checks (`judge`,
//!   `rubric`, panels, `step-score`, `grounding` with `claim: {judge}`,
//!   `branch-isolation` with `judge: true`) with the models of a [`JudgeRuntime`];
//! - [`CheckPlan::pairwise`] lists the `pairwise` checks; the runner finds the other
//!   answer and calls [`pairwise()`]. [`CheckPlan::select_best`] lists the
//!   `select-best` checks; the runner gathers the case's answers and calls
//!   [`select_best()`].
//!
//! Where a check looks:
//! - a round's `checks` read that round's turn (the last turn of the round when
//!   follow-ups added more);
//! - a case's `checks` read the last turn, except `tools-called` (every tool call of
//!   the transcript), `latency` (every turn) and `step-score` (every step);
//! - `expected_tools` (case or round) add a `tools-called` check in `set` mode;
//! - `expect_clarification: true` (a round, or a single-input case) adds a
//!   `clarification` check: the round's answer must be a clarifying question
//!   ([`looks_like_clarification`]);
//! - `criteria` (case or round) add a pointwise `judge` on that level unless the
//!   level has an explicit `judge` or `rubric`, which then uses those criteria.
//!
//! A turn that was never reached or broke gives `skipped`, never `fail`.
//!
//! JSON Schemas (`json-schema`, `argument-validity`, `tool-verification`'s call
//! schemas) need the `schema` feature (on by default; jsonschema): without it
//! [`compile`] refuses them on their field, naming the feature.
//!
//! Code checks gate judges: when a tool or structural check ([`GATING_KINDS`])
//! fails or breaks, the case's judges are `skipped` with "gated by <check>".
//! A judge of a branch's turn sees the parent rounds and that branch only.
//!
//! Judges:
//! - the judge sees the conversation before the judged turn, the user message, the
//!   answer, the criteria, the reference (`expected_output`, unless a `judge` says
//!   `reference: false`), the case's `context`, the expected tools and the tools
//!   called, and few-shot examples — every untrusted text fenced as data with a
//!   content-derived nonce, and unable to close its fence;
//! - it first decides whether the answer is an infrastructure failure
//!   (`[TRANSIENT]`) or an application error (`[ERROR]`): both give `error`, not a
//!   low score; then it reasons, then scores on a labelled scale (`binary`, `1-4`,
//!   `1-5`, `0-10`, `0-1`); a `rubric` scores six dimensions 1-5 and the harness
//!   weighs them;
//! - an answer equal to a string reference (trimmed) passes without a call;
//! - no judge model → `skipped` (`error` with [`JudgeRuntime::strict`]); a model
//!   error → `error`; an answer that is not schema-valid JSON or whose score the
//!   scale does not allow is asked again as a fresh call (at most
//!   [`MAX_ATTEMPTS`] calls), then `error` with the raw answer kept; without the
//!   `schema` feature no answer can be validated: a judge with a model is an
//!   `error` naming the feature, and the model is not called;
//! - every verdict's evidence records the model, tokens, latency, cache hit, raw
//!   answer, attempts (answers asked for), `transport` (the transport tries those
//!   calls took: retries and 429s, summed over a panel's members) and the prompt
//!   template's hash; `cost_usd` what it cost.
//!
//! ```
//! use gavel_core::{JudgeSettings, Status, Transcript, Turn};
//! use gavel_checks::{JudgeRuntime, NoJudgeModels};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let yaml = "cases:\n  - id: hello\n    input: Hi\n    criteria: Greets the user warmly\n    checks:\n      - type: contains\n        value: Hello\n";
//! let suite = gavel_core::load::parse_suite_str(yaml, "inline.yaml".as_ref())
//!     .map_err(|errors| format!("{errors:?}"))?;
//! let plan = gavel_checks::compile(&suite.cases[0], &JudgeSettings::default())?;
//! let transcript = Transcript {
//!     session_id: "s1".into(),
//!     turns: vec![Turn { output: "Hello there!".into(), ..Turn::default() }],
//! };
//!
//! // The deterministic part, synchronously.
//! let verdicts = plan.run_code(&transcript);
//! assert_eq!(verdicts[0].check, "contains \"Hello\"");
//! assert_eq!(verdicts[0].status, Status::Pass);
//!
//! // Everything, judges included: without a judge model the judge is skipped.
//! assert_eq!(plan.judge_count(), 1);
//! let runtime = JudgeRuntime::new(&NoJudgeModels);
//! let verdicts = futures::executor::block_on(plan.run(&transcript, &runtime));
//! assert_eq!(verdicts.len(), 2);
//! assert_eq!((verdicts[1].kind.as_str(), verdicts[1].status), ("judge", Status::Skipped));
//! assert!(verdicts[1].reason.starts_with("no judge model"));
//! # Ok(())
//! # }
//! ```

// The basement: what every check shares. These import nothing above them.
mod check;
mod error;
mod expected;
mod finding;
mod names;
mod runtime;
mod subject;

// Check kinds, each in its own module.
mod arguments;
mod branches;
mod clarify;
mod cost;
mod database;
mod grounding;
mod handoffs;
mod json;
mod judge;
mod latency;
mod panel;
mod script;
mod similar;
mod sql;
mod stream;
mod text;
mod tools;
mod trajectory;
mod transform;
mod verify;
mod workspace;

// Compiling and running: kind → compiler, and the plan that runs what compiled.
mod awaited;
mod code;
mod compiled;
mod gate;
mod plan;
mod registry;

#[cfg(test)]
mod testing;

pub use clarify::looks_like_clarification;
pub use error::CheckError;
pub use gate::GATING_KINDS;
pub use grounding::GROUND_TRUTH_UNAVAILABLE;
pub use judge::prompt::fence;
pub use judge::{
    Candidate, JudgeTemplate, JudgeUse, MAX_ATTEMPTS, PairwiseInput, PairwiseSpec, SelectBestInput,
    SelectBestSpec, TemplateKind, pairwise, select_best,
};
pub use plan::{CheckPlan, compile};
pub use runtime::{
    Embeddings, JudgeModels, JudgeRuntime, NO_JUDGE_MODEL, NoJudgeModels, no_judge_model,
};
pub use similar::DEFAULT_SIMILARITY_THRESHOLD;
