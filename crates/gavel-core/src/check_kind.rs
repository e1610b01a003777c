//! [`CheckKind`]: the type of a check, as suite files write it and verdicts,
//! reports and the store record it; [`Metric`], the kinds graded by a metric
//! judge; and [`EvaluatorType`], who or what gives a kind's verdicts.
//!
//! Every kind is declared once, in the `check_kinds!` list below: its word, the
//! older words it is also read by, and its evaluator. The enums, the list of
//! every kind, the words and the properties all follow from that list, so a
//! new kind is one line there (and, being a new variant, one arm in each
//! exhaustive `match` over kinds and check specs).

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who or what produced an evaluation.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EvaluatorType {
    /// A model judged: judge, rubric, pairwise, step-score, metric and panel checks.
    Llm,
    /// A person labelled the execution (calibration labels); no check kind.
    Human,
    /// A deterministic check or a probe (contains, regex, tools-called, script, …).
    Rule,
    /// A trained model scored without judging: embedding similarity.
    Classifier,
}

impl EvaluatorType {
    /// Every evaluator type.
    pub const ALL: [EvaluatorType; 4] = [
        EvaluatorType::Llm,
        EvaluatorType::Human,
        EvaluatorType::Rule,
        EvaluatorType::Classifier,
    ];

    /// The word used in queries and results: `llm`, `human`, `rule`, `classifier`.
    pub fn as_str(self) -> &'static str {
        match self {
            EvaluatorType::Llm => "llm",
            EvaluatorType::Human => "human",
            EvaluatorType::Rule => "rule",
            EvaluatorType::Classifier => "classifier",
        }
    }
}

impl FromStr for EvaluatorType {
    type Err = UnknownEvaluatorType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EvaluatorType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownEvaluatorType(s.to_owned()))
    }
}

/// An evaluator type no [`EvaluatorType`] answers to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown evaluator type `{0}`")]
pub struct UnknownEvaluatorType(pub String);

/// Declares the check kinds: `Variant = "word" (aliases: "older", …), Evaluator;`
/// for kinds compiled their own way, `Variant = "word";` under `metrics` for the
/// metric kinds (judged, each also a [`Metric`]).
macro_rules! check_kinds {
    (
        kinds {
            $( $(#[doc = $doc:literal])* $kind:ident = $word:literal
                $((aliases: $($alias:literal),+))?, $evaluator:ident; )*
        }
        metrics {
            $( $(#[doc = $mdoc:literal])* $metric:ident = $mword:literal; )*
        }
    ) => {
        /// A check's type, e.g. `contains` or `tools-called`. Serialised as the
        /// word suite files use; a stored word no kind answers to is an
        /// [`UnknownCheckKind`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum CheckKind {
            $( $(#[doc = $doc])* #[serde(rename = $word $($(, alias = $alias)+)?)] $kind, )*
            $( $(#[doc = $mdoc])* #[serde(rename = $mword)] $metric, )*
        }

        /// The metrics gavel computes with a judge, each with its own shipped
        /// template; each is also a [`CheckKind`] of the same word.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Metric {
            $( $(#[doc = $mdoc])* $metric, )*
        }

        impl CheckKind {
            /// Every kind.
            pub const ALL: [CheckKind; [$(stringify!($kind),)* $(stringify!($metric),)*].len()] =
                [$(CheckKind::$kind,)* $(CheckKind::$metric,)*];

            /// The word suite files, reports and the store use.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( CheckKind::$kind => $word, )*
                    $( CheckKind::$metric => $mword, )*
                }
            }

            /// Older words suite files and stores may still hold for this kind.
            pub fn aliases(self) -> &'static [&'static str] {
                match self {
                    $( CheckKind::$kind => &[$($($alias),+)?], )*
                    $( CheckKind::$metric => &[], )*
                }
            }

            /// Who or what gives this kind's verdicts (never
            /// [`EvaluatorType::Human`]).
            pub fn evaluator(self) -> EvaluatorType {
                match self {
                    $( CheckKind::$kind => EvaluatorType::$evaluator, )*
                    $( CheckKind::$metric => EvaluatorType::Llm, )*
                }
            }

            /// The metric a metric kind is graded by.
            pub fn metric(self) -> Option<Metric> {
                match self {
                    $( CheckKind::$metric => Some(Metric::$metric), )*
                    _ => None,
                }
            }
        }

        impl Metric {
            /// Every metric.
            pub const ALL: [Metric; [$(stringify!($metric),)*].len()] = [$(Metric::$metric,)*];

            /// The metric's check kind.
            pub fn kind(self) -> CheckKind {
                match self {
                    $( Metric::$metric => CheckKind::$metric, )*
                }
            }
        }
    };
}

check_kinds! {
    kinds {
        /// `equals`
        Equals = "equals", Rule;
        /// `contains`
        Contains = "contains", Rule;
        /// `icontains`
        Icontains = "icontains", Rule;
        /// `not-contains`
        NotContains = "not-contains", Rule;
        /// `regex`
        Regex = "regex", Rule;
        /// `is-json`
        IsJson = "is-json", Rule;
        /// `json-schema`
        JsonSchema = "json-schema", Rule;
        /// `required-keys`
        RequiredKeys = "required-keys", Rule;
        /// `numeric-fields`
        NumericFields = "numeric-fields", Rule;
        /// `tools-called`
        ToolsCalled = "tools-called", Rule;
        /// `tool-verification`
        ToolVerification = "tool-verification", Rule;
        /// `trajectory`
        Trajectory = "trajectory", Rule;
        /// `grounding`
        Grounding = "grounding", Rule;
        /// `database`
        Database = "database", Rule;
        /// `latency`
        Latency = "latency", Rule;
        /// `stream`
        Stream = "stream", Rule;
        /// `branch-isolation`
        BranchIsolation = "branch-isolation", Rule;
        /// `similar`
        Similar = "similar", Classifier;
        /// `step-score`
        StepScore = "step-score", Llm;
        /// A pointwise judge (`llm-judge`, an older name, reads as this).
        Judge = "judge" (aliases: "llm-judge"), Llm;
        /// `rubric`
        Rubric = "rubric", Llm;
        /// `pairwise`
        Pairwise = "pairwise", Llm;
        /// `select-best`
        SelectBest = "select-best", Llm;
        /// `argument-validity`
        ArgumentValidity = "argument-validity", Rule;
        /// `handoff-correctness`
        HandoffCorrectness = "handoff-correctness", Rule;
        /// `collaboration-efficiency`
        CollaborationEfficiency = "collaboration-efficiency", Rule;
        /// `procedural`
        Procedural = "procedural", Llm;
        /// `consensus`
        Consensus = "consensus", Llm;
        /// `reactive`
        Reactive = "reactive", Llm;
        /// `dag`
        Dag = "dag", Llm;
        /// `contains-any`
        ContainsAny = "contains-any", Rule;
        /// `icontains-any`
        IcontainsAny = "icontains-any", Rule;
        /// `cost`
        Cost = "cost", Rule;
        /// `script`
        Script = "script", Rule;
        /// The implicit check of `expect_clarification`.
        Clarification = "clarification", Rule;
        /// `file`: a file a coding agent left in its workspace.
        File = "file", Rule;
        /// `diff`: a coding agent's changes.
        Diff = "diff", Rule;
        /// `command`: a command run in the workspace after the agent.
        Command = "command", Rule;
    }
    metrics {
        /// G-Eval: evaluation steps generated from the criteria, then a 1-5 score.
        GEval = "g-eval";
        /// The answer against the reference: categories A-E.
        Factuality = "factuality";
        /// Does the answer meet the criteria for the question: yes or no.
        ClosedQa = "closed-qa";
        /// The share of the answer's statements relevant to the question.
        AnswerRelevance = "answer-relevance";
        /// The share of the reference's claims the retrieved context supports.
        ContextRecall = "context-recall";
        /// The share of retrieved chunks relevant to the question.
        ContextRelevance = "context-relevance";
        /// The share of the answer's claims the retrieved context supports.
        ContextFaithfulness = "context-faithfulness";
        /// The summary's claims supported by the source and its key points covered.
        Summarization = "summarization";
        /// How far the agent completed its task, from the conversation and its tool calls.
        TaskCompletion = "task-completion";
        /// The share of the user's intentions over the conversation the agent satisfied.
        ConversationCompleteness = "conversation-completeness";
        /// The share of the agent's answers relevant to the conversation so far.
        TurnRelevancy = "turn-relevancy";
        /// The share of the agent's answers that keep what the user said earlier.
        ContextRetention = "context-retention";
        /// The share of answers that stay in the role of the agent that gave them.
        RoleAdherence = "role-adherence";
    }
}

impl Metric {
    /// The check type as written in suite files.
    pub fn as_str(self) -> &'static str {
        self.kind().as_str()
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
        CheckKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s || k.aliases().contains(&s))
            .ok_or_else(|| UnknownCheckKind(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn words_round_trip_through_serde_and_from_str() {
        for kind in CheckKind::ALL {
            let json = serde_json::to_value(kind).unwrap_or_default();
            assert_eq!(json, serde_json::json!(kind.as_str()));
            assert_eq!(kind.as_str().parse(), Ok(kind));
            for alias in kind.aliases() {
                assert_eq!(alias.parse(), Ok(kind));
                assert_eq!(
                    serde_json::from_value(serde_json::json!(alias)).ok(),
                    Some(kind)
                );
            }
            // Words go into SQL lists unquoted.
            assert!(
                kind.as_str()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{kind}"
            );
        }
        assert_eq!("llm-judge".parse(), Ok(CheckKind::Judge));
        assert_eq!(
            "nosuch".parse::<CheckKind>(),
            Err(UnknownCheckKind("nosuch".into()))
        );
    }

    #[test]
    fn metrics_are_the_judged_metric_kinds() {
        for metric in Metric::ALL {
            assert_eq!(metric.kind().metric(), Some(metric));
            assert_eq!(metric.kind().evaluator(), EvaluatorType::Llm);
            assert_eq!(metric.as_str(), metric.kind().as_str());
        }
        for metric in Metric::ALL {
            let spec: crate::CheckSpec =
                serde_json::from_value(serde_json::json!({"type": metric.as_str()}))
                    .unwrap_or_else(|e| panic!("{metric:?}: {e}"));
            assert_eq!(spec.kind(), metric.kind());
            assert_eq!(spec.metric().map(|(m, _)| m), Some(metric));
        }
        let metrics = CheckKind::ALL.iter().filter(|k| k.metric().is_some());
        assert_eq!(metrics.count(), Metric::ALL.len());
        assert_eq!(CheckKind::Similar.evaluator(), EvaluatorType::Classifier);
        assert_eq!(CheckKind::Contains.evaluator(), EvaluatorType::Rule);
        assert_eq!("human".parse(), Ok(EvaluatorType::Human));
        assert!("robot".parse::<EvaluatorType>().is_err());
    }

    #[test]
    fn every_check_spec_type_is_a_kind_and_every_written_kind_a_spec() {
        let schema =
            serde_json::to_value(schemars::schema_for!(crate::CheckSpec)).unwrap_or_default();
        // The variants of the spec, each a schema whose `type` is one word.
        let variants = schema["oneOf"].as_array().cloned().unwrap_or_default();
        let written: BTreeSet<String> = variants
            .iter()
            .filter_map(|v| v["properties"]["type"]["const"].as_str())
            .map(str::to_owned)
            .collect();
        assert_eq!(variants.len(), written.len(), "{schema}");
        let kinds: BTreeSet<String> = CheckKind::ALL
            .into_iter()
            .filter(|k| *k != CheckKind::Clarification)
            .map(|k| k.as_str().to_owned())
            .collect();
        assert_eq!(written, kinds);
    }
}
