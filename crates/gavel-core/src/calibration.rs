//! Calibration of a judge against human labels: the labels people give (in the
//! store, e.g. from the web UI) and the stored record of a calibration run.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The execution a label judges: one case against one target, one repeat, in a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionKey {
    /// The run id.
    pub run_id: String,
    /// The case id.
    pub case_id: String,
    /// The target name.
    pub target: String,
    /// The repeat index (0-based).
    pub repeat_index: u32,
}

/// One person's label of one item of a label set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Label {
    /// The label set (a name people choose, e.g. `support-bot-2026-11`).
    pub label_set: String,
    /// The item's id, unique in the set (for a stored transcript, e.g.
    /// `run/case/target/repeat`).
    pub item_id: String,
    /// Who labelled it.
    pub labeller: String,
    /// The stored execution the label judges, when it is one.
    pub execution: Option<ExecutionKey>,
    /// A categorical label: `pass`/`fail`, or `A`/`B`/`tie` for a pair.
    pub label: Option<String>,
    /// A score on a Likert scale (1-5), when the label is ordinal.
    pub score: Option<f64>,
    /// A free comment.
    pub note: Option<String>,
    /// When it was given (RFC 3339, UTC).
    pub created_at: String,
}

/// A stored calibration run: which judge, on which labelled set, how well it
/// agreed with people, and the full report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRun {
    /// UUIDv7.
    pub id: String,
    /// When it ran (RFC 3339, UTC).
    pub created_at: String,
    /// The labelled set: a dataset name or a store label set.
    pub dataset: String,
    /// The judge: a model id, or a baseline's name.
    pub judge: String,
    /// Labelled items.
    pub items: u64,
    /// Items the judge gave a verdict on (errors and skips left out).
    pub judged: u64,
    /// Exact agreement with the human labels, 0..=1.
    pub agreement: Option<f64>,
    /// Cohen's kappa (quadratic-weighted on ordinal scales).
    pub kappa: Option<f64>,
    /// Whether the judge may gate: agreement of at least 80%.
    pub fit_to_gate: bool,
    /// The full report (statistics, confusion matrix, per-item verdicts).
    pub report: Value,
}
