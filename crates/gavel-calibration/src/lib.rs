//! Calibration of a judge against human labels.
//!
//! A labelled set is JSONL in the schema of the shared calibration data
//! ([`Record`]): an input, one response (pointwise) or two (pairwise), an optional
//! reference, and the human label (`pass`/`fail`, `A`/`B`/`tie`) or Likert score.
//! [`judge_all`] runs a [`Judge`] over the items — gavel's own `judge` and
//! `pairwise` judges through a model, or the `length` baseline — and
//! [`Report::new`] compares its verdicts with the people's:
//!
//! - agreement (exact), Cohen's kappa (unweighted on nominal labels,
//!   quadratic-weighted on Likert scores, the human mean rounded half up), a
//!   confusion matrix (rows human, columns judge);
//! - Spearman and Pearson between the judge's score and the human score
//!   (pointwise sets);
//! - position consistency (pairwise sets): the share of pairs whose verdict is the
//!   same in both presentation orders. Pairs whose orders disagree count as a
//!   `tie`; on sets without ties a judge's tie counts as a disagreement;
//! - `fit_to_gate`: agreement of at least [`GATE_AGREEMENT`]; a judge below is
//!   "not fit to gate".
//!
//! Items the judge gave no verdict on (errors, skips) stay out of the statistics
//! and are counted apart.
//!
//! ```
//! use gavel_calibration::{Judge, Record, Report, judge_all};
//! use gavel_checks::{JudgeRuntime, NoJudgeModels};
//!
//! let line = r#"{"id":"x-1","dataset":"x","task":"pairwise","criterion":"Which is better?","input":"Say hi","response_a":"Hello there, friend!","response_b":"Hi","human_label":"A","scale":{"type":"pairwise","labels":["A","B"]}}"#;
//! let records = vec![serde_json::from_str::<Record>(line).unwrap()];
//! let rt = JudgeRuntime::new(&NoJudgeModels);
//! let verdicts = futures::executor::block_on(judge_all(&Judge::Length, &records, &rt, 4));
//! let report = Report::new("x", "baseline:length", &records, &verdicts).unwrap();
//! assert_eq!(report.agreement, Some(1.0));
//! assert_eq!(report.position_consistency, Some(1.0));
//! assert!(report.fit_to_gate);
//! ```
#![deny(missing_docs)]

mod dataset;
mod error;
mod judge;
mod labels;
mod report;

pub use dataset::{Record, ScaleSpec, Task, load_jsonl};
pub use error::CalibrationError;
pub use judge::{ItemVerdict, Judge, judge_all};
pub use labels::{DEFAULT_CRITERION, LabelledTurn, records_from_labels};
pub use report::{Confusion, ItemResult, Report};

/// The agreement a judge needs with people to gate CI: 80%.
pub const GATE_AGREEMENT: f64 = 0.8;
