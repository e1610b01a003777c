//! Comparing a judge's verdicts with the human labels.

use gavel_stats::{Interval, Weights};
use serde::{Deserialize, Serialize};

use crate::figures::Pairs;
use crate::policy::coverage;
use crate::{CalibrationError, GatePolicy, ItemVerdict, Record, ScaleSpec, Task};

/// A confusion matrix with its category names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Confusion {
    /// The categories, in row and column order.
    pub labels: Vec<String>,
    /// `counts[human][judge]`.
    pub counts: Vec<Vec<u64>>,
}

/// How many of the judged items people gave one label the judge labelled the
/// same: the true-pass rate for `pass`, the true-fail rate for `fail`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRecall {
    /// The human label (`pass`, `fail`, `A`, `B`, `tie`, `1`…`5`).
    pub label: String,
    /// Judged items people gave that label.
    pub items: usize,
    /// Of those, the items the judge labelled the same.
    pub matched: usize,
    /// `matched / items`.
    pub recall: f64,
    /// Wilson 95% interval of `recall`.
    pub ci: Option<Interval>,
}

/// One item's human label and judge verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemResult {
    /// The record id.
    pub id: String,
    /// The human category (`A`, `pass`, `4`…).
    pub human: String,
    /// The human score (Likert mean, or 1/0), when there is one.
    pub human_score: Option<f64>,
    /// The judge's category; `None` when it gave no verdict.
    pub judge: Option<String>,
    /// The judge's score, when there is one.
    pub judge_score: Option<f64>,
    /// Pairwise: whether both presentation orders gave the same verdict.
    pub consistent: Option<bool>,
    /// Why the judge gave no verdict.
    pub error: Option<String>,
    /// The judge's reasoning, to read where it disagrees with people.
    pub reasoning: Option<String>,
}

/// How well a judge agreed with people on one labelled set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The labelled set.
    pub dataset: String,
    /// The judge (model id or baseline).
    pub judge: String,
    /// `pairwise`, `binary` or `likert`.
    pub kind: &'static str,
    /// Labelled items.
    pub items: usize,
    /// Items with a verdict.
    pub judged: usize,
    /// Items without one: abstentions (errors, refusals, skips).
    pub errors: usize,
    /// `judged / items`: below the policy's minimum the judge is not fit to gate.
    pub coverage: f64,
    /// Exact agreement over the judged items.
    pub agreement: Option<f64>,
    /// Wilson 95% interval of `agreement`.
    pub agreement_ci: Option<Interval>,
    /// Exact agreement over every item, abstentions counted as disagreements.
    pub agreement_all_items: Option<f64>,
    /// Cohen's kappa.
    pub kappa: Option<f64>,
    /// Bootstrap 95% interval of `kappa`.
    pub kappa_ci: Option<Interval>,
    /// The kappa's weighting: `none` or `quadratic`.
    pub kappa_weights: &'static str,
    /// Spearman's ρ between judge and human scores (pointwise sets).
    pub spearman: Option<f64>,
    /// Bootstrap 95% interval of `spearman`.
    pub spearman_ci: Option<Interval>,
    /// Kendall's τ-b between judge and human scores (pointwise sets).
    pub kendall: Option<f64>,
    /// Bootstrap 95% interval of `kendall`.
    pub kendall_ci: Option<Interval>,
    /// Pearson's r between judge and human scores (pointwise sets).
    pub pearson: Option<f64>,
    /// Per human label among the judged items, the share the judge labelled the
    /// same (true-pass and true-fail rates on binary sets).
    pub recall: Vec<ClassRecall>,
    /// Pairwise: the share of judged pairs with the same verdict in both orders.
    pub position_consistency: Option<f64>,
    /// Pairwise: judged pairs with the same verdict in both orders.
    pub consistent_pairs: Option<usize>,
    /// Pairwise: exact agreement over the position-consistent pairs only.
    pub consistent_agreement: Option<f64>,
    /// Rows human, columns judge.
    pub confusion: Confusion,
    /// The criteria `fit_to_gate` was decided by.
    pub policy: GatePolicy,
    /// Whether the judge may gate: no entry in `not_fit`.
    pub fit_to_gate: bool,
    /// Why the judge is not fit to gate, one reason each.
    pub not_fit: Vec<String>,
    /// The judge's cost in US dollars, over the priced calls.
    pub cost_usd: Option<f64>,
    /// How the numbers were made, where a choice was made.
    pub notes: Vec<String>,
    /// Every item.
    pub results: Vec<ItemResult>,
}

/// Per human label with judged items, the share the judge labelled the same.
fn recalls(labels: &[String], counts: &[Vec<u64>]) -> Vec<ClassRecall> {
    labels
        .iter()
        .zip(counts)
        .enumerate()
        .filter_map(|(k, (label, row))| {
            let items: u64 = row.iter().sum();
            (items > 0).then(|| ClassRecall {
                label: label.clone(),
                items: items as usize,
                matched: row[k] as usize,
                recall: row[k] as f64 / items as f64,
                ci: gavel_stats::wilson(row[k], items, 0.95),
            })
        })
        .collect()
}

/// The kind of a set: every record must share it.
fn kind_of(record: &Record) -> &'static str {
    match (&record.task, &record.scale) {
        (Task::Pairwise, _) => "pairwise",
        (_, ScaleSpec::Likert { .. }) => "likert",
        _ => "binary",
    }
}

/// The category labels of a kind.
fn categories(kind: &str) -> Vec<String> {
    let names: &[&str] = match kind {
        "pairwise" => &["A", "B", "tie", crate::judge::INCONSISTENT],
        "likert" => &["1", "2", "3", "4", "5"],
        _ => &["pass", "fail"],
    };
    names.iter().map(|s| (*s).to_owned()).collect()
}

/// A Likert mean rounded half up to a category ("4.5" → "5").
pub(crate) fn likert_category(score: f64) -> String {
    format!("{}", (score + 0.5).floor().clamp(1.0, 5.0) as i64)
}

/// The judged items' categories and scores, gathered in one pass.
#[derive(Default)]
struct Judged {
    human: Vec<usize>,
    judge: Vec<usize>,
    human_scores: Vec<f64>,
    judge_scores: Vec<f64>,
    /// Per judged pair: (both orders the same, agreed with people).
    pairs: Vec<(bool, bool)>,
    cost: Option<f64>,
}

/// The notes that say how a kind's numbers were made.
fn notes_of(kind: &str, scale: &ScaleSpec) -> Vec<String> {
    let mut notes = vec![
        "abstentions (errors, refusals, no verdict) are left out of the statistics and count against the judge through coverage; `agreement_all_items` counts them as disagreements".to_owned(),
        "95% intervals: Wilson for agreement and recall; percentile bootstrap (1,000 resamples, seed 0) for kappa, Spearman and Kendall, resamples where the statistic is undefined counted as -1; where every resample gives the same value, kappa's lower bound is the kappa at agreement's Wilson lower bound and the correlations get no interval".to_owned(),
    ];
    if kind == "pairwise" {
        notes.push("pairs whose two presentation orders disagree are `inconsistent`, which agrees with no label: a judge that always picks the first answer is not credited with the ties".into());
        if let ScaleSpec::Pairwise { labels } = scale
            && !labels.iter().any(|l| l == "tie")
        {
            notes.push("the set has no ties: a judge's tie counts as a disagreement".into());
        }
    }
    if kind == "likert" {
        notes.push("kappa and agreement on the human mean rounded half up (2.5 → 3); Spearman, Kendall and Pearson on the mean itself".into());
    }
    notes
}

impl Report {
    /// Compares `verdicts` (one per record, in order) with the records' labels,
    /// and decides by `policy` whether the judge is fit to gate.
    pub fn new(
        dataset: &str,
        judge: &str,
        records: &[Record],
        verdicts: &[ItemVerdict],
        policy: &GatePolicy,
    ) -> Result<Report, CalibrationError> {
        let first = records
            .first()
            .ok_or_else(|| CalibrationError::Set(format!("{dataset}: no labelled item")))?;
        let kind = kind_of(first);
        if let Some(other) = records.iter().find(|r| kind_of(r) != kind) {
            return Err(CalibrationError::Set(format!(
                "{dataset}: record `{}` is {} but `{}` is {kind}: report each kind apart",
                other.id,
                kind_of(other),
                first.id
            )));
        }
        if records.len() != verdicts.len() {
            return Err(CalibrationError::Set(format!(
                "{dataset}: {} records but {} verdicts",
                records.len(),
                verdicts.len()
            )));
        }
        let labels = categories(kind);
        let index = |name: &str| labels.iter().position(|l| l == name);
        let mut results = Vec::with_capacity(records.len());
        let mut j = Judged::default();
        for (record, verdict) in records.iter().zip(verdicts) {
            let human = match kind {
                "likert" => likert_category(record.human_score.unwrap_or(f64::NAN)),
                _ => record.human_label.clone().unwrap_or_default(),
            };
            let judge_label = match kind {
                "likert" => verdict.score.map(likert_category),
                _ => verdict.label.clone(),
            };
            if let Some(c) = verdict.cost_usd {
                j.cost = Some(j.cost.unwrap_or(0.0) + c);
            }
            let item_consistent = verdict.orders.as_ref().map(|[a, b]| a == b);
            if let (None, Some(h), Some(ji)) = (
                &verdict.error,
                index(&human),
                judge_label.as_deref().and_then(index),
            ) {
                j.human.push(h);
                j.judge.push(ji);
                if let (Some(hs), Some(js)) = (record.human_score, verdict.score) {
                    j.human_scores.push(hs);
                    j.judge_scores.push(js);
                }
                j.pairs.extend(item_consistent.map(|c| (c, h == ji)));
            }
            results.push(ItemResult {
                id: record.id.clone(),
                human,
                human_score: record.human_score,
                judge: judge_label,
                judge_score: verdict.score,
                consistent: item_consistent,
                error: verdict.error.clone(),
                reasoning: verdict.reasoning.clone(),
            });
        }
        let matrix = gavel_stats::Confusion::new(labels.len(), &j.human, &j.judge)
            .ok_or_else(|| CalibrationError::Set(format!("{dataset}: a label is out of range")))?;
        let weights = if kind == "likert" {
            Weights::Quadratic
        } else {
            Weights::None
        };
        let pairs = Pairs {
            categories: labels.len(),
            human: &j.human,
            judge: &j.judge,
            judge_scores: &j.judge_scores,
            human_scores: &j.human_scores,
        };
        let pointwise = kind != "pairwise";
        let agreement = pairs.agreement();
        let kappa = pairs.kappa(weights);
        let correlation = |f| pointwise.then(|| pairs.correlation(f)).flatten();
        let (spearman, kendall) = (
            correlation(gavel_stats::spearman),
            correlation(gavel_stats::kendall),
        );
        let judged = j.human.len();
        let share = |part: usize, of: usize| (of > 0).then(|| part as f64 / of as f64);
        let consistent: Vec<bool> = j.pairs.iter().filter(|p| p.0).map(|p| p.1).collect();
        let agreed = j.human.iter().zip(&j.judge).filter(|(h, ji)| h == ji);
        let recall = recalls(&labels, matrix.counts());
        let not_fit = policy.judge(
            records.len(),
            judged,
            &recall,
            agreement.map(|a| a.value),
            kappa.map(|k| k.value),
        );
        Ok(Report {
            dataset: dataset.to_owned(),
            judge: judge.to_owned(),
            kind,
            items: records.len(),
            judged,
            errors: records.len() - judged,
            coverage: coverage(records.len(), judged),
            agreement: agreement.map(|a| a.value),
            agreement_ci: agreement.and_then(|a| a.interval),
            agreement_all_items: share(agreed.count(), records.len()),
            kappa: kappa.map(|k| k.value),
            kappa_ci: kappa.and_then(|k| k.interval),
            kappa_weights: if kind == "likert" {
                "quadratic"
            } else {
                "none"
            },
            spearman: spearman.map(|e| e.value),
            spearman_ci: spearman.and_then(|e| e.interval),
            kendall: kendall.map(|e| e.value),
            kendall_ci: kendall.and_then(|e| e.interval),
            pearson: pointwise
                .then(|| gavel_stats::pearson(&j.judge_scores, &j.human_scores))
                .flatten(),
            recall,
            position_consistency: share(consistent.len(), j.pairs.len()),
            consistent_pairs: (!pointwise).then_some(consistent.len()),
            consistent_agreement: share(
                consistent.iter().filter(|a| **a).count(),
                consistent.len(),
            ),
            confusion: Confusion {
                labels,
                counts: matrix.counts().to_vec(),
            },
            policy: policy.clone(),
            fit_to_gate: not_fit.is_empty(),
            not_fit,
            cost_usd: j.cost,
            notes: notes_of(kind, &first.scale),
            results,
        })
    }
}
