//! Judge panels as written in suite files: `procedural` pipelines of stages and
//! `consensus` judges scoring over rounds (see docs/PANELS.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::check::CheckSpec;
use crate::judge::Scale;

/// One stage of a `procedural` panel: a check, or a judge with its own criteria.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PanelStage {
    /// The stage's name, shown in the record.
    pub name: String,
    /// A failing critical stage stops the pipeline: later stages do not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub critical: bool,
    /// The stage's check (any check but pairwise and panels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<Box<CheckSpec>>,
    /// Or a pointwise judge with these criteria, which also sees the verdicts and
    /// reasons of the stages before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// The judge's scale (with `criteria`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    /// The judge's pass threshold on its scale (with `criteria`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The judge's model (with `criteria`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A `procedural` panel: declared stages run in order, context flowing forward.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProceduralSpec {
    /// The stages, in order.
    pub stages: Vec<PanelStage>,
    /// The whole panel's time budget in milliseconds; past it the verdict is
    /// `error` and the stages done so far are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// One member of a `consensus` panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PanelJudge {
    /// The member's model (default: the suite's judge model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The member's own criteria (default: the panel's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
}

/// A `consensus` panel: judges score over rounds, seeing each other's scores and
/// reasons after the first, until the variance falls to `variance` or `max_rounds`
/// have run; the verdict is the median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsensusSpec {
    /// The members (at least two).
    pub judges: Vec<PanelJudge>,
    /// The criteria; defaults to the round's, then the case's `criteria`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// The scale (default: the suite's `judge.scale`, else 0-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    /// Pass threshold for the median, on the scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Rounds at most (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<u32>,
    /// Stop once the variance of the scores (normalised to 0-1) is at most this
    /// (default 0.01).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variance: Option<f64>,
    /// The whole panel's time budget in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}
