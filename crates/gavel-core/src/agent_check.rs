//! Specifications of the agent checks (seed 003): tool verification, trajectory
//! metrics, grounding against an oracle and checks on the agent's own database.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How expected arguments compare with the arguments of a call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArgsMatch {
    /// Every expected key is present with an equal value; other keys may be present.
    #[default]
    Subset,
    /// The arguments equal the expected object exactly.
    Exact,
}

/// One expected tool call of a `tool-verification` check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    /// The tool that must be called.
    pub tool: String,
    /// Expected arguments, compared by `match`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// How `arguments` compare (default `subset`).
    #[serde(default, rename = "match", skip_serializing_if = "is_default")]
    pub args_match: ArgsMatch,
    /// A JSON Schema the arguments must satisfy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// Argument field (a JSON pointer or a top-level key) → regex its value (as
    /// text) must match.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub patterns: BTreeMap<String, String>,
    /// Expected result, compared as a subset (objects) or exactly (other values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// This call's weight in the case score (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
}

/// Where the number the agent claimed is read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Claim {
    /// The first capture group (else the whole match) of a regex over the answer
    /// text; thousands separators and a currency sign are ignored.
    Regex(String),
    /// A JSON pointer into the answer parsed as JSON.
    Pointer(String),
    /// A judge reads the answer and extracts the number described here (e.g. "the
    /// total revenue for February"); it answers with whether the answer states one
    /// and its value. Needs a judge model: without one the check is skipped.
    Judge(String),
}

impl Claim {
    /// Whether a judge extracts the claim.
    pub fn is_judge(&self) -> bool {
        matches!(self, Claim::Judge(_))
    }
}

/// Where the true value comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Oracle {
    /// The value, inline.
    Value(f64),
    /// The first column of the first row of a SQL query.
    Sql {
        /// The database: a SQLite file path, a `sqlite:` URL or a `postgres://`
        /// URL (expanded: `${VAR}`).
        database: String,
        /// The query; `$1` is bound to the session id when it appears.
        query: String,
    },
    /// A command whose standard output is the number (program and arguments,
    /// expanded).
    Command(Vec<String>),
}

/// A row expectation of a `database` check: every key equals that column's value.
pub type RowExpectation = BTreeMap<String, Value>;

/// An agent check, written like any other check (see [`CheckSpec`](crate::CheckSpec)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolVerificationSpec {
    /// The expected calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ExpectedCall>,
    /// Calls that must not happen: a call of the tool whose arguments match
    /// (`arguments`, `schema` and `patterns`, as for expected calls) fails the
    /// check, e.g. a shell tool running `git push`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<ExpectedCall>,
    /// The calls must happen in the listed order; out-of-order calls are listed and
    /// fail the check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ordered: bool,
    /// A call that matches no expected call fails the check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// Pass threshold on the weighted case score, 0..=1 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
}

/// Trajectory thresholds; each given one must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectorySpec {
    /// At most this many tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<usize>,
    /// At most this share (0..=1) of calls repeating an earlier identical call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_redundancy: Option<f64>,
    /// At most this share (0..=1) of calls returning to a tool left earlier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_loopiness: Option<f64>,
    /// The optimal path (tool names), for efficiency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub optimal: Vec<String>,
    /// At least this efficiency (optimal length / actual length, 0..=1); needs
    /// `optimal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_efficiency: Option<f64>,
}

/// A grounding check: a claimed number against an oracle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroundingSpec {
    /// Where the claimed number is.
    pub claim: Claim,
    /// Where the true value comes from.
    pub oracle: Oracle,
    /// Relative tolerance (default 0.05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// Judge model for a `claim: {judge: …}` extraction (default: the suite's
    /// `judge.model`); only judge claims take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A check on the agent's own database; the session id is bound to `$1`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSpec {
    /// A SQLite file path, a `sqlite:` URL or a `postgres://` URL (expanded).
    pub database: String,
    /// The query, e.g. `SELECT role FROM messages WHERE session_id = $1`.
    pub query: String,
    /// At least this many rows (default 1: the conversation exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rows: Option<usize>,
    /// At most this many rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<usize>,
    /// Rows that must be present: each matches some row on every key given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowExpectation>,
}

/// Which steps a `step-score` check scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// Each tool call, in order.
    #[default]
    Tools,
    /// Each turn (one user message and the agent's answer), in order.
    Turns,
}

/// How the step scores of a `step-score` check combine into one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepAggregate {
    /// The weighted mean (every weight 1 unless `weights` says otherwise).
    #[default]
    Mean,
    /// The lowest step score (weights ignored).
    Min,
    /// The last step's score (weights ignored).
    Last,
}

/// Step weights of a `step-score` check; a step not named or beyond the list
/// weighs 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StepWeights {
    /// By position: the first step's weight, the second's… (`[1, 2, 1]`).
    ByStep(Vec<f64>),
    /// By tool name (`{search: 2}`); only with `steps: tools`.
    ByTool(BTreeMap<String, f64>),
}

/// A `step-score` check: a judge scores each step 0-1 with an explanation; the
/// scores are aggregated and compared with a threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepScoreSpec {
    /// What a good step does (required).
    pub criteria: String,
    /// Which steps are scored (default `tools`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub steps: StepKind,
    /// How the scores combine (default `mean`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub aggregate: StepAggregate,
    /// Weights for `mean`, by position or (for tool calls) by tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<StepWeights>,
    /// Pass threshold on the aggregate, 0..=1 (default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Judge model for this check (default: the suite's `judge.model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// An `argument-validity` check: every tool call's arguments against the JSON
/// Schema of its tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArgumentValiditySpec {
    /// The JSON Schema of each tool's arguments, by tool name; calls of other
    /// tools are not checked.
    pub schemas: BTreeMap<String, Value>,
    /// Pass threshold on the share of checked calls whose arguments are valid
    /// (default 1: every call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
}

/// A `handoff-correctness` check: the agents that took over, in order, against
/// the expected ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandoffSpec {
    /// The agents expected to act, in the order they take over (the first starts).
    pub handoffs: Vec<String>,
    /// No other handoff may happen (default: others may come between).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
}

/// A `collaboration-efficiency` check: handoffs beyond those needed and work one
/// agent repeats after another lower the score.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollaborationSpec {
    /// Handoffs the task needs (default: the agents that acted, minus one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_handoffs: Option<usize>,
    /// Pass threshold on the 0-1 score (default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
}
