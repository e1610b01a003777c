//! Specifications of `script` checks, metric checks (G-Eval, factuality, RAG and
//! the rest) and the output `transform`, as written in suite files.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::check_kind::Metric;

/// What a `script` check writes to the script's standard input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScriptInput {
    /// The judged turn (default).
    #[default]
    Turn,
    /// The whole transcript.
    Transcript,
}

/// A check written in any language: gavel runs a command with the turn (or the
/// transcript) as JSON on stdin and reads `{pass, score, reason}` from stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptSpec {
    /// The program and its arguments, run directly (no shell); `$VAR` expanded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// A command line run by `sh -c`, for suites that ask for a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// What the script reads on stdin (default: the turn).
    #[serde(default, skip_serializing_if = "is_default")]
    pub input: ScriptInput,
    /// Seconds before the process is killed and the check is an `error` (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    /// Pass threshold on the score when the script gives a score without `pass`
    /// (default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
}

/// A metric check's settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// The criteria (G-Eval, closed-QA); defaults to the round's, then the case's
    /// `criteria`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// Pass threshold on the 0-1 score (default 0.5; factuality and closed-QA pass
    /// by category).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The reference (factuality, context recall, G-Eval); defaults to the round's,
    /// then the case's `expected_output`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<serde_json::Value>,
    /// Judge model for this check (default: the suite's `judge.model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Factuality: the categories that pass (default A, B, C, E).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_categories: Option<Vec<String>>,
    /// Role adherence: each agent's role, by agent name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub roles: std::collections::BTreeMap<String, String>,
}

/// How the output is rewritten before the checks read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Transform {
    /// A JSON pointer into the output parsed as JSON (`/answer/text`); a string
    /// found is the new output, any other value its JSON text.
    Pointer(String),
    /// A minijinja expression over `output` (the text) and `json` (the output
    /// parsed as JSON, or none): `output | upper`, `json.items | length`.
    Expression(String),
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
