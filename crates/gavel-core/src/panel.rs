//! Judge panels as written in suite files: `procedural` pipelines of stages,
//! `consensus` judges scoring over rounds, `reactive` routers and specialists, and
//! `dag` decision graphs (see docs/PANELS.md).

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
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_ms",
        skip_serializing_if = "Option::is_none"
    )]
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
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_ms: Option<u64>,
}

/// One specialist of a `reactive` panel: a pointwise judge the router may pick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Specialist {
    /// The specialist's name (`accuracy`, `safety`…), what the router picks.
    pub name: String,
    /// What the specialist grades.
    pub criteria: String,
    /// When the router should pick it (default: its criteria).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// The specialist's scale (default: the suite's `judge.scale`, else 0-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    /// The specialist's pass threshold on its scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The specialist's model (default: the suite's judge model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// The deep-dive judge of a `reactive` panel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeepDive {
    /// What it examines (default: the picked specialists' criteria).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// Its model (default: the suite's judge model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A `reactive` panel: a router picks specialists, each judges, a deep dive runs
/// when one is unsure or they disagree, and a synthesis judge gives the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReactiveSpec {
    /// The specialists the router picks from (at least one).
    pub specialists: Vec<Specialist>,
    /// The router's model (default: the suite's judge model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_model: Option<String>,
    /// Specialists that judge whatever the router picks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub always: Vec<String>,
    /// The deep-dive judge's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deep_dive: Option<DeepDive>,
    /// A specialist whose score (0-1) is closer than this to its threshold is
    /// unsure, which calls the deep dive (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<f64>,
    /// Specialists disagree when their scores (0-1) spread wider than this, which
    /// calls the deep dive (default 0.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_spread: Option<f64>,
    /// The synthesis judge's criteria (default: the case's, else every picked
    /// specialist's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// The synthesis judge's scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    /// The synthesis judge's pass threshold on its scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The synthesis judge's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The whole panel's time budget in milliseconds.
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_ms: Option<u64>,
}

/// An edge of a `dag` panel: the next node's name, or the name with a weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum DagEdge {
    /// The next node.
    To(String),
    /// The next node, and a weight (0-1) that multiplies the final score.
    Weighted {
        /// The next node.
        to: String,
        /// Multiplies the score of the leaf reached (default 1).
        weight: f64,
    },
}

impl DagEdge {
    /// The node the edge leads to.
    pub fn to(&self) -> &str {
        match self {
            DagEdge::To(to) | DagEdge::Weighted { to, .. } => to,
        }
    }

    /// The edge's weight (1 when not given).
    pub fn weight(&self) -> f64 {
        match self {
            DagEdge::To(_) => 1.0,
            DagEdge::Weighted { weight, .. } => *weight,
        }
    }
}

/// One branch of a `score` node: taken when the score (0-1) is at least `min`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScoreBranch {
    /// The lowest score (0-1) that takes this branch; the last branch has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Where it leads.
    pub next: DagEdge,
}

/// A node of a `dag` panel: exactly one of `task`, `binary`, `choose`, `score`
/// or `verdict`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DagNode {
    /// The node's name, which edges refer to.
    pub name: String,
    /// A task node: an instruction whose written answer later nodes see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// A binary judgement node: a yes/no question, with `yes` and `no` edges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// A non-binary judgement node: a question answered by one of `options`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choose: Option<String>,
    /// A conditional score node: criteria scored by a judge, then `branches`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<String>,
    /// A verdict leaf: `pass` or `fail`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::Status>,
    /// The leaf's score (0-1; default 1 for pass, 0 for fail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The next node after a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<DagEdge>,
    /// A binary node's edge for yes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yes: Option<DagEdge>,
    /// A binary node's edge for no.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no: Option<DagEdge>,
    /// A non-binary node's answers and their edges.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub options: std::collections::BTreeMap<String, DagEdge>,
    /// A score node's branches, highest `min` first, the last without `min`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<ScoreBranch>,
    /// A score node's scale (default: the suite's `judge.scale`, else 0-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    /// The model of this node's judge (default: the suite's judge model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A `dag` panel: a decision graph walked from its first node (or `start`) to a
/// verdict leaf.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DagSpec {
    /// The nodes.
    pub nodes: Vec<DagNode>,
    /// The first node (default: the first listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// The longest path allowed, in nodes (default 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
    /// The whole panel's time budget in milliseconds.
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_ms: Option<u64>,
}
