//! Calibration of a judge against human labels.
//!
//! A labelled set is JSONL in the schema of the shared calibration data
//! ([`Record`]): an input, one response (pointwise) or two (pairwise), an optional
//! reference, and the human label (`pass`/`fail`, `A`/`B`/`tie`) or Likert score.
//! [`judge_all`] runs a [`Judge`] over the items — gavel's own `judge` and
//! `pairwise` judges through a model, or the `length` baseline — and
//! [`Report::new`] compares its verdicts with the people's:
//!
//! - coverage: the share of items the judge gave a verdict on (errors, refusals
//!   and skips are abstentions, left out of the statistics but counted against
//!   the judge), and agreement over all items with abstentions as disagreements;
//! - agreement (exact, Wilson 95% interval), Cohen's kappa (unweighted on nominal
//!   labels, quadratic-weighted on Likert scores, the human mean rounded half up;
//!   bootstrap interval), a confusion matrix (rows human, columns judge);
//! - Spearman, Kendall τ-b (bootstrap intervals) and Pearson between the judge's
//!   score and the human score (pointwise sets);
//! - position consistency (pairwise sets): the share of pairs whose verdict is the
//!   same in both presentation orders, and agreement over those pairs. Pairs whose
//!   orders disagree are `inconsistent`, a category that agrees with no label
//!   (so a judge that always picks the first answer gets no credit for ties);
//! - per-class recall (the true-pass and true-fail rates on binary sets), with
//!   Wilson intervals;
//! - `fit_to_gate` by a [`GatePolicy`] (at least 30 items, 95% coverage, 80%
//!   agreement, kappa 0.4 by default), every shortfall named in `not_fit`.
//!
//! [`rater_agreement`] tells how far the labellers of a set agree with one
//! another (Cohen's kappa for two, Krippendorff's alpha for any number).
//!
//! [`compare()`] sets two stored calibration runs of one set side by side, with
//! McNemar's exact test and a paired bootstrap on the items both judged.
//!
//! A calibration is bound to the judge's [`fingerprint`]; [`check_calibration`]
//! decides whether stored runs qualify every judge a suite grades with, by the
//! suite's own policy.
//!
//! ```
//! use gavel_calibration::{Judge, Record, Report, judge_all};
//! use gavel_checks::{JudgeRuntime, NoJudgeModels};
//!
//! let line = r#"{"id":"x-1","dataset":"x","task":"pairwise","criterion":"Which is better?","input":"Say hi","response_a":"Hello there, friend!","response_b":"Hi","human_label":"A","scale":{"type":"pairwise","labels":["A","B"]}}"#;
//! let records = vec![serde_json::from_str::<Record>(line).unwrap()];
//! let rt = JudgeRuntime::new(&NoJudgeModels);
//! let verdicts = futures::executor::block_on(judge_all(&Judge::Length, &records, &rt, 4));
//! let report = Report::new("x", "baseline:length", &records, &verdicts, &Default::default()).unwrap();
//! assert_eq!(report.agreement, Some(1.0));
//! assert_eq!(report.position_consistency, Some(1.0));
//! // One item is no evidence: not fit to gate, and the report says why.
//! assert!(!report.fit_to_gate);
//! assert!(report.not_fit[0].contains("only 1 labelled items"));
//! ```
#![deny(missing_docs)]

mod compare;
mod compare_text;
mod dataset;
mod error;
mod figures;
mod fingerprint;
mod gate;
mod judge;
mod labels;
mod policy;
mod raters;
mod report;
mod sample;
mod text;

pub use compare::{COMPARE_BOOTSTRAP, Comparison, Paired, Side, compare};
pub use dataset::{Record, ScaleSpec, Task, load_jsonl, template_kinds};
pub use error::CalibrationError;
pub use fingerprint::fingerprint;
pub use gate::{NotCalibrated, Uncalibrated, check_calibration, shortfalls};
pub use judge::{ItemVerdict, Judge, judge_all, judge_within, pointwise_scale};
pub use labels::{DEFAULT_CRITERION, LabelledTurn, records_from_labels};
pub use policy::GatePolicy;
pub use raters::{RaterAgreement, rater_agreement};
pub use report::{ClassRecall, Confusion, ItemResult, Report};
pub use sample::stratified_sample;
