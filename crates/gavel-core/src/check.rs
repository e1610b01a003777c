//! Check specifications as written in suite files.
//!
//! A check given on a round applies to that round's turn. A check given on the case
//! applies to the last turn, except `tools-called`, `tool-verification` and
//! `trajectory`, which look at every tool call of the transcript, `latency` and
//! `stream`, which hold for every turn, `branch-isolation`, which compares the
//! branches, `step-score`, which scores every step of the transcript, and
//! `database`, which reads the agent's database once the conversation is over.

use std::collections::BTreeMap;

use crate::CheckKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent_check::{
    ArgumentValiditySpec, CollaborationSpec, DatabaseSpec, GroundingSpec, HandoffSpec,
    StepScoreSpec, ToolVerificationSpec, TrajectorySpec,
};
use crate::judge::{JudgeExample, PairwiseAgainst, Scale, SelectAmong};
use crate::metric::{Metric, MetricSpec, ScriptSpec};
use crate::panel::{ConsensusSpec, DagSpec, ProceduralSpec, ReactiveSpec};

/// One or several strings: `value: x` or `value: [x, y]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single string.
    One(String),
    /// Several strings.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings, one or many.
    pub fn as_slice(&self) -> &[String] {
        match self {
            OneOrMany::One(s) => std::slice::from_ref(s),
            OneOrMany::Many(v) => v,
        }
    }
}

/// Which JSON a JSON check reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JsonSource {
    /// The answer text, parsed as JSON.
    #[default]
    Output,
    /// The target's whole JSON response (http and command targets).
    Response,
}

/// How tools-called compares the calls made with the tools expected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolMatch {
    /// Every expected tool was called at least once, in any order.
    #[default]
    Set,
    /// The expected tools appear in this order (other calls may come between).
    Order,
    /// Exactly the expected calls, in this order, nothing else.
    Exact,
}

/// A deterministic check, selected by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CheckSpec {
    /// The output equals `value` (or the case's `expected_output`). A string compares
    /// as text (trimmed unless `trim: false`); any other JSON value compares with the
    /// output parsed as JSON.
    Equals {
        /// The expected value; defaults to the case's `expected_output`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
        /// Compare text case-insensitively.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        ignore_case: bool,
        /// Trim surrounding whitespace before comparing text (default true).
        #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
        trim: bool,
    },
    /// The output contains every given string (`contains-all` is the same check).
    #[serde(alias = "contains-all")]
    Contains {
        /// The string or strings that must appear.
        value: OneOrMany,
    },
    /// The output contains every given string, ignoring case (`icontains-all`).
    #[serde(alias = "icontains-all")]
    Icontains {
        /// The string or strings that must appear.
        value: OneOrMany,
    },
    /// The output contains at least one of the given strings.
    ContainsAny {
        /// The strings, one of which must appear.
        value: OneOrMany,
    },
    /// The output contains at least one of the given strings, ignoring case.
    IcontainsAny {
        /// The strings, one of which must appear.
        value: OneOrMany,
    },
    /// The output contains none of the given strings (case-insensitive).
    NotContains {
        /// The string or strings that must not appear.
        value: OneOrMany,
    },
    /// The output matches a regular expression (Rust `regex` syntax).
    Regex {
        /// The pattern.
        pattern: String,
        /// Fail when the pattern matches instead.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        negate: bool,
    },
    /// The output (or response) parses as JSON.
    IsJson {
        /// Which JSON to read.
        #[serde(default, skip_serializing_if = "is_default")]
        from: JsonSource,
    },
    /// The JSON validates against a JSON Schema.
    JsonSchema {
        /// The schema, inline.
        schema: Value,
        /// Which JSON to read.
        #[serde(default, skip_serializing_if = "is_default")]
        from: JsonSource,
    },
    /// Each key (a JSON pointer like `/data/total`, or a bare top-level key) is present.
    RequiredKeys {
        /// The keys that must be present.
        keys: Vec<String>,
        /// Which JSON to read.
        #[serde(default, skip_serializing_if = "is_default")]
        from: JsonSource,
    },
    /// Numeric fields must equal the given values exactly when present. With `fields`
    /// only, the expected values come from the case's `expected_output` at the same
    /// pointers.
    NumericFields {
        /// Pointer → expected number.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        values: BTreeMap<String, f64>,
        /// Pointers whose expected values come from `expected_output`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fields: Vec<String>,
        /// Which JSON to read.
        #[serde(default, skip_serializing_if = "is_default")]
        from: JsonSource,
    },
    /// The expected tools were called; missing and unexpected tools are listed.
    ToolsCalled {
        /// Expected tools; defaults to the case's (or round's) `expected_tools`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tools: Option<Vec<String>>,
        /// How to compare.
        #[serde(default, skip_serializing_if = "is_default")]
        mode: ToolMatch,
        /// Also fail when a tool outside the expected set was called.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        strict: bool,
        /// Count an expected call that returned an error (a result with an
        /// `error` key, or `isError: true`) as made; by default it fails the check.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        allow_errors: bool,
    },
    /// Each expected tool call checked: tool, arguments, result; weighted score
    /// per call and per case; missing, unexpected and out-of-order calls listed.
    ToolVerification(ToolVerificationSpec),
    /// Trajectory metrics over the transcript's tool calls, with thresholds.
    Trajectory(TrajectorySpec),
    /// A number the agent claimed against an oracle, within a relative tolerance.
    Grounding(GroundingSpec),
    /// SQL against the agent's own database, the session id bound to `$1`.
    Database(DatabaseSpec),
    /// The turn answered within a time budget.
    Latency {
        /// The budget in milliseconds.
        #[serde(deserialize_with = "crate::bounds::de::max_ms")]
        max_ms: u64,
    },
    /// The turns cost at most `max_usd` in all, as the target reported their usage.
    /// A target that reports no cost gives `skipped`.
    Cost {
        /// The budget in US dollars.
        max_usd: f64,
    },
    /// A check in any language: a command reads the turn (or transcript) as JSON on
    /// stdin and prints `{pass, score, reason}`.
    Script(ScriptSpec),
    /// A file the coding agent left in its workspace: exists, contains, matches.
    File(crate::workspace::FileCheckSpec),
    /// The coding agent's changes: paths that had to change, paths it may touch,
    /// size.
    Diff(crate::workspace::DiffCheckSpec),
    /// A command run in the workspace after the agent: its exit code and output.
    Command(crate::workspace::CommandCheckSpec),
    /// G-Eval (Liu et al., 2023): evaluation steps generated from the criteria,
    /// then a 1-5 score, normalised to 0-1.
    GEval(MetricSpec),
    /// Factuality against the expected output: categories A-E.
    Factuality(MetricSpec),
    /// Closed-QA: does the answer meet the criteria for the question (yes/no).
    ClosedQa(MetricSpec),
    /// Answer relevance: the share of the answer's statements relevant to the question.
    AnswerRelevance(MetricSpec),
    /// RAG context recall: the share of the expected output's claims the case's
    /// `retrieved_context` supports.
    ContextRecall(MetricSpec),
    /// RAG context relevance (precision): the share of `retrieved_context` chunks
    /// relevant to the question.
    #[serde(alias = "context-precision")]
    ContextRelevance(MetricSpec),
    /// RAG faithfulness: the share of the answer's claims `retrieved_context` supports.
    #[serde(alias = "faithfulness")]
    ContextFaithfulness(MetricSpec),
    /// Summarization: the summary's claims supported by the source (the input) and
    /// the source's key points covered; the score is the lower of the two.
    Summarization(MetricSpec),
    /// The answer arrived as a sound stream: at least `min_deltas` text deltas, the
    /// completion signal, non-empty text and, when given, the first delta within
    /// `max_first_token_ms`. No judge needed.
    Stream {
        /// Text deltas required at least (default 1).
        #[serde(default = "one", skip_serializing_if = "is_one")]
        min_deltas: u64,
        /// Require the completion signal (default true).
        #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
        require_done: bool,
        /// Require non-blank text (default true).
        #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
        non_empty: bool,
        /// Time to first token budget in milliseconds.
        #[serde(
            default,
            deserialize_with = "crate::bounds::de::max_first_token_ms",
            skip_serializing_if = "Option::is_none"
        )]
        max_first_token_ms: Option<u64>,
    },
    /// No branch shows what only another branch was told: each branch's markers
    /// (case-insensitive) must not appear in any other branch's answers and, with
    /// `judge: true`, a judge shown the other branches' user messages finds no
    /// sign of them in each branch's answers. A leak found either way fails.
    BranchIsolation {
        /// Branch name → text only that branch may show.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        markers: BTreeMap<String, OneOrMany>,
        /// Also ask a judge, branch by branch, whether the branch shows context
        /// only another branch had (runs with the judges, after the code checks).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        judge: bool,
        /// Judge model for `judge: true` (default: the suite's `judge.model`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// The answer means what the expected output says: the cosine similarity of
    /// their sentence embeddings (all-MiniLM-L6-v2 unless the suite's
    /// `judge.embedder` or `--embedder` name another model) is at least
    /// `threshold`. With several acceptable answers the best match counts.
    Similar {
        /// The acceptable answer or answers; defaults to the case's `expected_output`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<OneOrMany>,
        /// Pass threshold on the cosine similarity, -1 to 1 (default 0.4).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        threshold: Option<f64>,
    },
    /// A judge scores each step (tool call or turn) 0-1 with an explanation; the
    /// scores aggregate by weighted mean, min or last against a threshold.
    StepScore(StepScoreSpec),
    /// An LLM judge scores the answer against criteria (pointwise).
    Judge {
        /// The criteria; defaults to the round's, then the case's `criteria`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        criteria: Option<String>,
        /// The scale (default: the suite's `judge.scale`, else 0-1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scale: Option<Scale>,
        /// Pass threshold on the scale (default: the round's, then the case's
        /// `threshold`, else the scale's default).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        threshold: Option<f64>,
        /// Judge model for this check (default: the suite's `judge.model`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Show the expected output to the judge as a reference (default true
        /// when there is one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reference: Option<bool>,
        /// Worked examples (few-shot).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        examples: Vec<JudgeExample>,
    },
    /// A multi-dimension rubric (seed 002): accuracy, completeness, format
    /// compliance, scope adherence, context usage and, when tools are expected,
    /// tool usage, each 1-5; overall = weighted mean.
    Rubric {
        /// The success criteria; defaults to the round's, then the case's `criteria`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        criteria: Option<String>,
        /// Pass threshold on the overall 1-5 score (default 3.5).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        threshold: Option<f64>,
        /// Dimension weights (default 1 each).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        weights: BTreeMap<String, f64>,
        /// Judge model for this check.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Compare the answer with another one, in both orders; a win counts only when
    /// both orders agree.
    Pairwise {
        /// What to compare with.
        against: PairwiseAgainst,
        /// The comparison criteria; defaults to the case's `criteria`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        criteria: Option<String>,
        /// Judge model for this check.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Whether a tie on which the two orders disagree (position bias: the
        /// judge favoured a position, not an answer) passes; by default it fails.
        /// A tie both orders agree on passes either way.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        biased_ties_pass: bool,
    },
    /// Listwise: the answers of several executions of the case (its targets, or
    /// its repeats and variants) shown to one judge in a shuffled order; the one
    /// it picks as best passes, the others fail.
    SelectBest {
        /// The comparison criteria; defaults to the round's, then the case's
        /// `criteria`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        criteria: Option<String>,
        /// Which executions are compared (default: the case's targets, per repeat).
        #[serde(default, skip_serializing_if = "is_default")]
        among: SelectAmong,
        /// Judge model for this check.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// How far the agent completed its task (judged from the conversation).
    TaskCompletion(MetricSpec),
    /// The share of the user's intentions the agent satisfied (judged).
    ConversationCompleteness(MetricSpec),
    /// The share of the agent's answers relevant to the conversation (judged).
    TurnRelevancy(MetricSpec),
    /// The share of the agent's answers that keep what the user said (judged).
    ContextRetention(MetricSpec),
    /// The share of answers that stay in their agent's `roles` (judged).
    RoleAdherence(MetricSpec),
    /// Every tool call's arguments valid against its tool's JSON Schema.
    ArgumentValidity(ArgumentValiditySpec),
    /// The agents took over in the expected order (multi-agent transcripts).
    HandoffCorrectness(HandoffSpec),
    /// Few handoffs beyond those needed, and no work one agent repeats after
    /// another (multi-agent transcripts).
    CollaborationEfficiency(CollaborationSpec),
    /// A judge panel: declared stages (checks or judges) run in order, context
    /// flowing forward; a failing critical stage stops the pipeline.
    Procedural(ProceduralSpec),
    /// A judge panel: several judges score over rounds until they agree.
    Consensus(ConsensusSpec),
    /// A judge panel: a router picks specialists, a deep dive runs when they are
    /// unsure or disagree, a synthesis judge gives the verdict.
    Reactive(ReactiveSpec),
    /// A judge panel: a declared decision graph walked to a verdict leaf.
    Dag(DagSpec),
}

fn yes() -> bool {
    true
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl CheckSpec {
    /// The check's type as written in suite files.
    pub fn kind(&self) -> CheckKind {
        match self {
            CheckSpec::Equals { .. } => CheckKind::Equals,
            CheckSpec::Contains { .. } => CheckKind::Contains,
            CheckSpec::Icontains { .. } => CheckKind::Icontains,
            CheckSpec::ContainsAny { .. } => CheckKind::ContainsAny,
            CheckSpec::IcontainsAny { .. } => CheckKind::IcontainsAny,
            CheckSpec::Cost { .. } => CheckKind::Cost,
            CheckSpec::Script(_) => CheckKind::Script,
            CheckSpec::File(_) => CheckKind::File,
            CheckSpec::Diff(_) => CheckKind::Diff,
            CheckSpec::Command(_) => CheckKind::Command,
            CheckSpec::NotContains { .. } => CheckKind::NotContains,
            CheckSpec::Regex { .. } => CheckKind::Regex,
            CheckSpec::IsJson { .. } => CheckKind::IsJson,
            CheckSpec::JsonSchema { .. } => CheckKind::JsonSchema,
            CheckSpec::RequiredKeys { .. } => CheckKind::RequiredKeys,
            CheckSpec::NumericFields { .. } => CheckKind::NumericFields,
            CheckSpec::ToolsCalled { .. } => CheckKind::ToolsCalled,
            CheckSpec::ToolVerification(_) => CheckKind::ToolVerification,
            CheckSpec::Trajectory(_) => CheckKind::Trajectory,
            CheckSpec::Grounding(_) => CheckKind::Grounding,
            CheckSpec::Database(_) => CheckKind::Database,
            CheckSpec::Latency { .. } => CheckKind::Latency,
            CheckSpec::Stream { .. } => CheckKind::Stream,
            CheckSpec::BranchIsolation { .. } => CheckKind::BranchIsolation,
            CheckSpec::Similar { .. } => CheckKind::Similar,
            CheckSpec::StepScore(_) => CheckKind::StepScore,
            CheckSpec::Judge { .. } => CheckKind::Judge,
            CheckSpec::Rubric { .. } => CheckKind::Rubric,
            CheckSpec::Pairwise { .. } => CheckKind::Pairwise,
            CheckSpec::SelectBest { .. } => CheckKind::SelectBest,
            CheckSpec::ArgumentValidity(_) => CheckKind::ArgumentValidity,
            CheckSpec::HandoffCorrectness(_) => CheckKind::HandoffCorrectness,
            CheckSpec::CollaborationEfficiency(_) => CheckKind::CollaborationEfficiency,
            CheckSpec::Procedural(_) => CheckKind::Procedural,
            CheckSpec::Consensus(_) => CheckKind::Consensus,
            CheckSpec::Reactive(_) => CheckKind::Reactive,
            CheckSpec::Dag(_) => CheckKind::Dag,
            CheckSpec::GEval(_) => Metric::GEval.kind(),
            CheckSpec::Factuality(_) => Metric::Factuality.kind(),
            CheckSpec::ClosedQa(_) => Metric::ClosedQa.kind(),
            CheckSpec::AnswerRelevance(_) => Metric::AnswerRelevance.kind(),
            CheckSpec::ContextRecall(_) => Metric::ContextRecall.kind(),
            CheckSpec::ContextRelevance(_) => Metric::ContextRelevance.kind(),
            CheckSpec::ContextFaithfulness(_) => Metric::ContextFaithfulness.kind(),
            CheckSpec::Summarization(_) => Metric::Summarization.kind(),
            CheckSpec::TaskCompletion(_) => Metric::TaskCompletion.kind(),
            CheckSpec::ConversationCompleteness(_) => Metric::ConversationCompleteness.kind(),
            CheckSpec::TurnRelevancy(_) => Metric::TurnRelevancy.kind(),
            CheckSpec::ContextRetention(_) => Metric::ContextRetention.kind(),
            CheckSpec::RoleAdherence(_) => Metric::RoleAdherence.kind(),
        }
    }

    /// The metric and its settings, for a metric check.
    pub fn metric(&self) -> Option<(Metric, &MetricSpec)> {
        Some(match self {
            CheckSpec::GEval(s) => (Metric::GEval, s),
            CheckSpec::Factuality(s) => (Metric::Factuality, s),
            CheckSpec::ClosedQa(s) => (Metric::ClosedQa, s),
            CheckSpec::AnswerRelevance(s) => (Metric::AnswerRelevance, s),
            CheckSpec::ContextRecall(s) => (Metric::ContextRecall, s),
            CheckSpec::ContextRelevance(s) => (Metric::ContextRelevance, s),
            CheckSpec::ContextFaithfulness(s) => (Metric::ContextFaithfulness, s),
            CheckSpec::Summarization(s) => (Metric::Summarization, s),
            CheckSpec::TaskCompletion(s) => (Metric::TaskCompletion, s),
            CheckSpec::ConversationCompleteness(s) => (Metric::ConversationCompleteness, s),
            CheckSpec::TurnRelevancy(s) => (Metric::TurnRelevancy, s),
            CheckSpec::ContextRetention(s) => (Metric::ContextRetention, s),
            CheckSpec::RoleAdherence(s) => (Metric::RoleAdherence, s),
            _ => return None,
        })
    }
}
