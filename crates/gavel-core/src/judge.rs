//! Judge configuration as written in suite files.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The score scale a pointwise judge uses; each level is labelled in the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Scale {
    /// 0 (fails the criteria) or 1 (meets them).
    #[serde(rename = "binary")]
    Binary,
    /// Integers 1 to 4.
    #[serde(rename = "1-4")]
    OneToFour,
    /// Integers 1 to 5.
    #[serde(rename = "1-5")]
    OneToFive,
    /// Integers 0 to 10.
    #[serde(rename = "0-10")]
    ZeroToTen,
    /// A number from 0.0 to 1.0 (seed 000's rubric).
    #[serde(rename = "0-1")]
    ZeroToOne,
}

impl Scale {
    /// Lowest and highest score.
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Scale::Binary | Scale::ZeroToOne => (0.0, 1.0),
            Scale::OneToFour => (1.0, 4.0),
            Scale::OneToFive => (1.0, 5.0),
            Scale::ZeroToTen => (0.0, 10.0),
        }
    }

    /// Whether only whole numbers are valid.
    pub fn integral(self) -> bool {
        !matches!(self, Scale::ZeroToOne)
    }

    /// The default pass threshold on this scale.
    pub fn default_threshold(self) -> f64 {
        match self {
            Scale::Binary => 1.0,
            Scale::OneToFour => 3.0,
            Scale::OneToFive => 4.0,
            Scale::ZeroToTen => 7.0,
            Scale::ZeroToOne => 0.7,
        }
    }

    /// Maps a score on this scale to 0..=1.
    pub fn normalise(self, score: f64) -> f64 {
        let (lo, hi) = self.bounds();
        ((score - lo) / (hi - lo)).clamp(0.0, 1.0)
    }

    /// The name as written in suite files.
    pub fn as_str(self) -> &'static str {
        match self {
            Scale::Binary => "binary",
            Scale::OneToFour => "1-4",
            Scale::OneToFive => "1-5",
            Scale::ZeroToTen => "0-10",
            Scale::ZeroToOne => "0-1",
        }
    }
}

/// A worked example shown to the judge (few-shot).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgeExample {
    /// The user message of the example, if it differs from the case's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The example answer.
    pub output: String,
    /// The score it deserves, on the judge's scale.
    pub score: f64,
    /// Why.
    pub reasoning: String,
}

/// What a pairwise judge compares the output with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairwiseAgainst {
    /// Another target's output for the same case in the same run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// A stored run's output for the same case (`latest` or a run id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// Most answers one `select-best` comparison shows its judge.
pub const SELECT_BEST_MAX_ANSWERS: usize = 26;

/// Which executions of a case a `select-best` check compares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SelectAmong {
    /// The case's targets, one comparison per repeat (and variant).
    #[default]
    Targets,
    /// The repeats and variants of the case on one target, one comparison per target.
    Repeats,
}

/// Per-model prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Dollars per million prompt tokens.
    pub input_per_mtok: f64,
    /// Dollars per million completion tokens.
    pub output_per_mtok: f64,
}

/// Suite-wide judge and model settings (`judge:` in a suite file).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgeSettings {
    /// The judge model id, e.g. `anthropic:claude-opus-4-5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The agent's own model id, to warn when the judge is the same model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_model: Option<String>,
    /// Scale for judges that name none (default 0-1, seed 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    /// Sampling temperature (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Answer length cap (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Per-call timeout in seconds (default 60).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
    /// Retries of transient failures (default 4).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::max_retries",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_retries: Option<u32>,
    /// Requests per minute per provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
    /// Tokens per minute per provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm: Option<u32>,
    /// Calls in flight per provider (default 16).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::concurrency",
        skip_serializing_if = "Option::is_none"
    )]
    pub concurrency: Option<usize>,
    /// Prices by model id, overriding the built-in table.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prices: BTreeMap<String, Price>,
    /// Prompt template overrides by judge kind (`judge`, `rubric`, `pairwise`,
    /// `choice`, `step`, `extract`): a minijinja file relative to the suite file.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub templates: BTreeMap<String, String>,
    /// Stop scheduling new work once the run has spent this many dollars.
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::max_cost",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_cost: Option<f64>,
    /// A stored calibration run (`gavel calibrate`) that must qualify the judge:
    /// its id, or `{id, metric, min, use_lower_bound}`. The gate fails unless the
    /// run's judge fingerprint matches this judge and it qualifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<crate::CalibrationRequirement>,
    /// Every judged check must be judged (`--require-judges`): one with no judge
    /// model or credentials is an `error`, not a skip, and the gate fails naming it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// The embedding model of `similar` checks: `all-MiniLM-L6-v2` (default, run
    /// locally), a model folder, or `openai:NAME` / `openai-compatible:NAME@URL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedder: Option<String>,
}

impl JudgeSettings {
    /// Fills every setting this one leaves unset from `other` (earlier files win);
    /// `required` holds when either requires judges.
    pub fn fill_from(&mut self, other: JudgeSettings) {
        fn fill<T>(mine: &mut Option<T>, theirs: Option<T>) {
            if mine.is_none() {
                *mine = theirs;
            }
        }
        fill(&mut self.model, other.model);
        fill(&mut self.agent_model, other.agent_model);
        fill(&mut self.scale, other.scale);
        fill(&mut self.temperature, other.temperature);
        fill(&mut self.max_tokens, other.max_tokens);
        fill(&mut self.timeout_s, other.timeout_s);
        fill(&mut self.max_retries, other.max_retries);
        fill(&mut self.rpm, other.rpm);
        fill(&mut self.tpm, other.tpm);
        fill(&mut self.concurrency, other.concurrency);
        fill(&mut self.max_cost, other.max_cost);
        fill(&mut self.calibration, other.calibration);
        fill(&mut self.embedder, other.embedder);
        // Any file requiring judges requires them for the run.
        self.required |= other.required;
        for (k, v) in other.prices {
            self.prices.entry(k).or_insert(v);
        }
        for (k, v) in other.templates {
            self.templates.entry(k).or_insert(v);
        }
    }
}
