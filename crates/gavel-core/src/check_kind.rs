//! [`CheckKind`]: the type of a check, as suite files write it and verdicts,
//! reports and the store record it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A check's type, e.g. `contains` or `tools-called`. Serialised as the word
/// suite files use; a stored word no kind answers to is an [`UnknownCheckKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckKind {
    /// `equals`
    Equals,
    /// `contains`
    Contains,
    /// `icontains`
    Icontains,
    /// `not-contains`
    NotContains,
    /// `regex`
    Regex,
    /// `is-json`
    IsJson,
    /// `json-schema`
    JsonSchema,
    /// `required-keys`
    RequiredKeys,
    /// `numeric-fields`
    NumericFields,
    /// `tools-called`
    ToolsCalled,
    /// `tool-verification`
    ToolVerification,
    /// `trajectory`
    Trajectory,
    /// `grounding`
    Grounding,
    /// `database`
    Database,
    /// `latency`
    Latency,
    /// `stream`
    Stream,
    /// `branch-isolation`
    BranchIsolation,
    /// `similar`
    Similar,
    /// `step-score`
    StepScore,
    /// A pointwise judge (`llm-judge`, an older name, reads as this).
    #[serde(alias = "llm-judge")]
    Judge,
    /// `rubric`
    Rubric,
    /// `pairwise`
    Pairwise,
    /// `select-best`
    SelectBest,
    /// `argument-validity`
    ArgumentValidity,
    /// `handoff-correctness`
    HandoffCorrectness,
    /// `collaboration-efficiency`
    CollaborationEfficiency,
    /// `procedural`
    Procedural,
    /// `consensus`
    Consensus,
    /// `reactive`
    Reactive,
    /// `dag`
    Dag,
    /// `contains-any`
    #[serde(rename = "contains-any")]
    ContainsAny,
    /// `icontains-any`
    #[serde(rename = "icontains-any")]
    IcontainsAny,
    /// `cost`
    #[serde(rename = "cost")]
    Cost,
    /// `script`
    #[serde(rename = "script")]
    Script,
    /// `g-eval`
    #[serde(rename = "g-eval")]
    GEval,
    /// `factuality`
    #[serde(rename = "factuality")]
    Factuality,
    /// `closed-qa`
    #[serde(rename = "closed-qa")]
    ClosedQa,
    /// `answer-relevance`
    #[serde(rename = "answer-relevance")]
    AnswerRelevance,
    /// `context-recall`
    #[serde(rename = "context-recall")]
    ContextRecall,
    /// `context-relevance`
    #[serde(rename = "context-relevance")]
    ContextRelevance,
    /// `context-faithfulness`
    #[serde(rename = "context-faithfulness")]
    ContextFaithfulness,
    /// `summarization`
    #[serde(rename = "summarization")]
    Summarization,
    /// `task-completion`
    TaskCompletion,
    /// `conversation-completeness`
    ConversationCompleteness,
    /// `turn-relevancy`
    TurnRelevancy,
    /// `context-retention`
    ContextRetention,
    /// `role-adherence`
    RoleAdherence,
    /// The implicit check of `expect_clarification`.
    Clarification,
}

impl CheckKind {
    /// Every kind.
    pub const ALL: [CheckKind; 48] = [
        CheckKind::Equals,
        CheckKind::Contains,
        CheckKind::Icontains,
        CheckKind::NotContains,
        CheckKind::Regex,
        CheckKind::IsJson,
        CheckKind::JsonSchema,
        CheckKind::RequiredKeys,
        CheckKind::NumericFields,
        CheckKind::ToolsCalled,
        CheckKind::ToolVerification,
        CheckKind::Trajectory,
        CheckKind::Grounding,
        CheckKind::Database,
        CheckKind::Latency,
        CheckKind::Stream,
        CheckKind::BranchIsolation,
        CheckKind::Similar,
        CheckKind::StepScore,
        CheckKind::Judge,
        CheckKind::Rubric,
        CheckKind::Pairwise,
        CheckKind::SelectBest,
        CheckKind::ArgumentValidity,
        CheckKind::HandoffCorrectness,
        CheckKind::CollaborationEfficiency,
        CheckKind::Procedural,
        CheckKind::Consensus,
        CheckKind::Reactive,
        CheckKind::Dag,
        CheckKind::ContainsAny,
        CheckKind::IcontainsAny,
        CheckKind::Cost,
        CheckKind::Script,
        CheckKind::GEval,
        CheckKind::Factuality,
        CheckKind::ClosedQa,
        CheckKind::AnswerRelevance,
        CheckKind::ContextRecall,
        CheckKind::ContextRelevance,
        CheckKind::ContextFaithfulness,
        CheckKind::Summarization,
        CheckKind::TaskCompletion,
        CheckKind::ConversationCompleteness,
        CheckKind::TurnRelevancy,
        CheckKind::ContextRetention,
        CheckKind::RoleAdherence,
        CheckKind::Clarification,
    ];

    /// The word suite files, reports and the store use.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::Equals => "equals",
            CheckKind::Contains => "contains",
            CheckKind::Icontains => "icontains",
            CheckKind::NotContains => "not-contains",
            CheckKind::Regex => "regex",
            CheckKind::IsJson => "is-json",
            CheckKind::JsonSchema => "json-schema",
            CheckKind::RequiredKeys => "required-keys",
            CheckKind::NumericFields => "numeric-fields",
            CheckKind::ToolsCalled => "tools-called",
            CheckKind::ToolVerification => "tool-verification",
            CheckKind::Trajectory => "trajectory",
            CheckKind::Grounding => "grounding",
            CheckKind::Database => "database",
            CheckKind::Latency => "latency",
            CheckKind::Stream => "stream",
            CheckKind::BranchIsolation => "branch-isolation",
            CheckKind::Similar => "similar",
            CheckKind::StepScore => "step-score",
            CheckKind::Judge => "judge",
            CheckKind::Rubric => "rubric",
            CheckKind::Pairwise => "pairwise",
            CheckKind::SelectBest => "select-best",
            CheckKind::ArgumentValidity => "argument-validity",
            CheckKind::HandoffCorrectness => "handoff-correctness",
            CheckKind::CollaborationEfficiency => "collaboration-efficiency",
            CheckKind::Procedural => "procedural",
            CheckKind::Consensus => "consensus",
            CheckKind::Reactive => "reactive",
            CheckKind::Dag => "dag",
            CheckKind::ContainsAny => "contains-any",
            CheckKind::IcontainsAny => "icontains-any",
            CheckKind::Cost => "cost",
            CheckKind::Script => "script",
            CheckKind::GEval => "g-eval",
            CheckKind::Factuality => "factuality",
            CheckKind::ClosedQa => "closed-qa",
            CheckKind::AnswerRelevance => "answer-relevance",
            CheckKind::ContextRecall => "context-recall",
            CheckKind::ContextRelevance => "context-relevance",
            CheckKind::ContextFaithfulness => "context-faithfulness",
            CheckKind::Summarization => "summarization",
            CheckKind::TaskCompletion => "task-completion",
            CheckKind::ConversationCompleteness => "conversation-completeness",
            CheckKind::TurnRelevancy => "turn-relevancy",
            CheckKind::ContextRetention => "context-retention",
            CheckKind::RoleAdherence => "role-adherence",
            CheckKind::Clarification => "clarification",
        }
    }
}

impl fmt::Display for CheckKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A check kind no [`CheckKind`] answers to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown check kind `{0}`")]
pub struct UnknownCheckKind(pub String);

impl FromStr for CheckKind {
    type Err = UnknownCheckKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "llm-judge" {
            return Ok(CheckKind::Judge);
        }
        CheckKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownCheckKind(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_through_serde_and_from_str() {
        for kind in CheckKind::ALL {
            let json = serde_json::to_value(kind).unwrap_or_default();
            assert_eq!(json, serde_json::json!(kind.as_str()));
            assert_eq!(kind.as_str().parse(), Ok(kind));
        }
        assert_eq!("llm-judge".parse(), Ok(CheckKind::Judge));
        assert_eq!(
            "nosuch".parse::<CheckKind>(),
            Err(UnknownCheckKind("nosuch".into()))
        );
    }
}
