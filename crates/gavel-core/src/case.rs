//! Suites and cases as loaded and resolved.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{CheckSpec, JudgeSettings, TargetSpec};

/// One round of a conversation: a user message and what to check in the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Round {
    /// The user message: a string, or an object sent as JSON text.
    #[serde(alias = "prompt")]
    pub input: Value,
    /// Checks on this round's turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckSpec>,
    /// Judge criteria for this round (`judge_prompt` in seed 000).
    #[serde(
        default,
        alias = "judge_prompt",
        skip_serializing_if = "Option::is_none"
    )]
    pub criteria: Option<String>,
    /// Expected output for this round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_output: Option<Value>,
    /// Tools this round's turn must call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_tools: Vec<String>,
    /// Judge threshold for this round.
    #[serde(
        default,
        alias = "judge_threshold",
        skip_serializing_if = "Option::is_none"
    )]
    pub threshold: Option<f64>,
    /// The branch this round belongs to. Unbranched rounds are the parent
    /// conversation; the rounds of each named branch continue from the parent in a
    /// forked session of their own, unseen by the other branches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The agent is expected to answer this round with a clarifying question:
    /// follow-up handling leaves it unanswered (no hint, no model reply), and a
    /// check fails the round unless the answer asks one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expect_clarification: bool,
}

impl Round {
    /// The message text sent to the target: strings as they are, other JSON as text.
    pub fn message(&self) -> String {
        match &self.input {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// One scenario. Accepts the native fields and the seeds' spellings: `prompt`,
/// `judge_prompt`, `judge_threshold`, `test_agent_revival` (seed 000) and
/// `success_criteria`, `mcp_calls_expected` (seed 002).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Stable id, unique in the suite (defaults to the name, else file and index).
    #[serde(default)]
    pub id: String,
    /// Human name (defaults to the id).
    #[serde(default)]
    pub name: String,
    /// What the case is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Tags for selection and per-tag statistics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// A single user message (string or object); shorthand for one round.
    #[serde(default, alias = "prompt", skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The conversation's rounds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<Round>,
    /// An object injected into every target call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
    /// The expected answer (text or JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_output: Option<Value>,
    /// What a retrieval step found for the question (a text or a list of chunks),
    /// read by the RAG metrics (`context-recall`, `context-relevance`,
    /// `context-faithfulness`); never sent to the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieved_context: Option<Value>,
    /// Rewrites every turn's output before the checks read it (a JSON pointer or a
    /// minijinja expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<crate::metric::Transform>,
    /// Tools the conversation must call.
    #[serde(
        default,
        alias = "mcp_calls_expected",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub expected_tools: Vec<String>,
    /// Checks on the last turn (tools-called: on the transcript).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckSpec>,
    /// Judge criteria (`judge_prompt`, `success_criteria`).
    #[serde(
        default,
        alias = "judge_prompt",
        alias = "success_criteria",
        skip_serializing_if = "Option::is_none"
    )]
    pub criteria: Option<String>,
    /// What grades `criteria` when no explicit `judge` or `rubric` check does:
    /// a pointwise `judge` (default) or seed 002's six-dimension `rubric`
    /// (the default for seed 002 `{"examples": …}` datasets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria_judge: Option<CriteriaJudge>,
    /// Judge pass threshold (`judge_threshold`).
    #[serde(
        default,
        alias = "judge_threshold",
        skip_serializing_if = "Option::is_none"
    )]
    pub threshold: Option<f64>,
    /// How many times to run the case (default 1).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::repeat",
        skip_serializing_if = "Option::is_none"
    )]
    pub repeat: Option<u32>,
    /// Judge the first repeat's output this many more times, to measure the
    /// judges' own spread apart from the agent's (default 0).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::rejudge",
        skip_serializing_if = "Option::is_none"
    )]
    pub rejudge: Option<u32>,
    /// Paraphrases of the input: each runs `repeat` times beside the input, and
    /// the case passes on the mean and spread of all their scores (robustness).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::variants",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variants: Vec<String>,
    /// With `variants`: the least mean score (0-1) over every run (default 0.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_mean: Option<f64>,
    /// With `variants`: the most standard deviation of those scores allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stddev: Option<f64>,
    /// Close and reopen the session after round 1 (`test_agent_revival`).
    #[serde(
        default,
        alias = "test_agent_revival",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub revival: bool,
    /// Targets to run against (default: every target of the suite).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// What this case adds to a `workspace` target: its own repository,
    /// commit, setup and post-run commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<crate::workspace::CaseWorkspace>,
    /// Per-execution timeout in seconds.
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
    /// Answers to the agent's clarifying questions, used in order; once they run
    /// out a model writes them (when one is available).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub followups: Vec<String>,
    /// Clarifying questions answered per round at most (default 2; 0 turns
    /// follow-up handling off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_followups: Option<u32>,
    /// With a single `input`: the agent should answer it with a clarifying
    /// question (moved onto the round by the loader; see
    /// [`Round::expect_clarification`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expect_clarification: bool,
    /// A model plays this user instead of fixed rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_user: Option<SimulatedUser>,
    /// Against `replay` targets: grade every recorded conversation that no other
    /// case names with this case's checks, one copy of the case per conversation,
    /// its id the conversation's (docs/REPLAY.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub each_conversation: bool,
    /// Where the case was defined (`file:line`), filled by the loader.
    #[serde(skip)]
    #[schemars(skip)]
    pub source: String,
}

/// The judge that a case's or round's `criteria` add.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CriteriaJudge {
    /// A pointwise judge on the suite's scale (seed 000).
    Judge,
    /// Seed 002's multi-dimension rubric: six dimensions 1-5, pass at 3.5.
    Rubric,
}

/// A user played by a model: who they are and what they want.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulatedUser {
    /// Who the user is and how they talk.
    pub persona: String,
    /// What the user wants to get done; the conversation stops once a judge
    /// finds it met.
    pub goal: String,
    /// User messages at most (default 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// The user model (default: the suite's judge model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Defaults applied to every case of a suite file that does not set its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteDefaults {
    /// Targets for cases that name none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// Judge threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Repeat count.
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::repeat",
        skip_serializing_if = "Option::is_none"
    )]
    pub repeat: Option<u32>,
    /// Extra judgements of the first repeat's output.
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::rejudge",
        skip_serializing_if = "Option::is_none"
    )]
    pub rejudge: Option<u32>,
    /// Least mean score of a case with variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_mean: Option<f64>,
    /// Most standard deviation of a case with variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stddev: Option<f64>,
    /// Per-execution timeout in seconds.
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
    /// Tags added to every case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Checks added to every case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckSpec>,
    /// What grades `criteria` for cases that do not say (`judge` or `rubric`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria_judge: Option<CriteriaJudge>,
    /// Context merged under each case's own context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
}

/// A loaded suite: resolved cases and the targets they run against.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    /// Suite name (the first named file's, else the first file's stem).
    pub name: String,
    /// The files it was loaded from.
    pub files: Vec<String>,
    /// Targets by name.
    pub targets: BTreeMap<String, TargetSpec>,
    /// The cases, defaults applied, rounds normalised, targets resolved.
    pub cases: Vec<Case>,
    /// Judge and model settings.
    pub judge: JudgeSettings,
    /// The suite's own gate (`gate:`; the first file that sets a field decides).
    #[serde(default)]
    pub gate: crate::gate::GateSettings,
    /// Non-fatal findings (e.g. cases with no target).
    pub warnings: Vec<String>,
    /// OpenTelemetry export of its runs, when a file turns it on (the first
    /// file that sets `otel` decides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otel: Option<crate::otel::OtelSettings>,
}

/// `N cases (R rounds), T targets in F files`.
impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = crate::plural;
        let (cases, targets, files) = (self.cases.len(), self.targets.len(), self.files.len());
        let rounds: usize = self.cases.iter().map(|c| c.rounds.len()).sum();
        write!(
            f,
            "{cases} case{} ({rounds} round{}), {targets} target{} in {files} file{}",
            s(cases),
            s(rounds),
            s(targets),
            s(files)
        )
    }
}

impl Case {
    /// The repeat count (at least 1).
    pub fn repeat_count(&self) -> u32 {
        self.repeat.unwrap_or(1).max(1)
    }

    /// The inputs a robustness case runs: its own, then each variant (one input
    /// for a case without variants).
    pub fn input_count(&self) -> u32 {
        u32::try_from(self.variants.len()).map_or(u32::MAX, |n| n.saturating_add(1))
    }

    /// The case as run with input `v` ([`input_count`](Self::input_count)):
    /// 0 is the case itself, `v` its variant `v - 1` as the first round's input.
    pub fn with_input(&self, v: u32) -> Case {
        let mut case = self.clone();
        let variant = usize::try_from(v)
            .ok()
            .and_then(|v| v.checked_sub(1))
            .and_then(|i| self.variants.get(i));
        if let (Some(text), Some(round)) = (variant, case.rounds.first_mut()) {
            round.input = Value::String(text.clone());
        }
        case
    }

    /// The least mean score of a robustness case (default 0.7).
    pub fn robust_min_mean(&self) -> f64 {
        self.min_mean.unwrap_or(0.7)
    }

    /// Extra judgements of the first repeat's output (default 0).
    pub fn rejudge_count(&self) -> u32 {
        self.rejudge.unwrap_or(0)
    }

    /// Clarifying questions answered per round at most (default 2).
    pub fn followup_limit(&self) -> u32 {
        self.max_followups.unwrap_or(2)
    }

    /// The branch names, in order of first appearance.
    pub fn branches(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for name in self.rounds.iter().filter_map(|r| r.branch.as_deref()) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn a_suite_shows_its_counts() {
        let suite = crate::load::parse_suite_str(
            "targets:\n  a: {type: command, command: [cat]}\ncases:\n  - id: one\n    input: hi\n  - id: two\n    rounds: [{input: a}, {input: b}]\n",
            "s.yaml".as_ref(),
        )
        .unwrap();
        assert_eq!(suite.to_string(), "2 cases (3 rounds), 1 target in 1 file");
    }
}
