//! Comparing a judge's verdicts with the human labels.

use std::fmt::Write as _;

use gavel_stats::Weights;
use serde::Serialize;

use crate::{CalibrationError, GATE_AGREEMENT, ItemVerdict, Record, ScaleSpec, Task};

/// A confusion matrix with its category names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Confusion {
    /// The categories, in row and column order.
    pub labels: Vec<String>,
    /// `counts[human][judge]`.
    pub counts: Vec<Vec<u64>>,
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
    /// Items without one (errors, skips).
    pub errors: usize,
    /// Exact agreement over the judged items.
    pub agreement: Option<f64>,
    /// Cohen's kappa.
    pub kappa: Option<f64>,
    /// The kappa's weighting: `none` or `quadratic`.
    pub kappa_weights: &'static str,
    /// Spearman's ρ between judge and human scores (pointwise sets).
    pub spearman: Option<f64>,
    /// Pearson's r between judge and human scores (pointwise sets).
    pub pearson: Option<f64>,
    /// Pairwise: the share of judged pairs with the same verdict in both orders.
    pub position_consistency: Option<f64>,
    /// Rows human, columns judge.
    pub confusion: Confusion,
    /// Agreement of at least 80%.
    pub fit_to_gate: bool,
    /// The judge's cost in US dollars, over the priced calls.
    pub cost_usd: Option<f64>,
    /// How the numbers were made, where a choice was made.
    pub notes: Vec<String>,
    /// Every item.
    pub results: Vec<ItemResult>,
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
        "pairwise" => &["A", "B", "tie"],
        "likert" => &["1", "2", "3", "4", "5"],
        _ => &["pass", "fail"],
    };
    names.iter().map(|s| (*s).to_owned()).collect()
}

/// A Likert mean rounded half up to a category ("4.5" → "5").
fn likert_category(score: f64) -> String {
    format!("{}", (score + 0.5).floor().clamp(1.0, 5.0) as i64)
}

impl Report {
    /// Compares `verdicts` (one per record, in order) with the records' labels.
    pub fn new(
        dataset: &str,
        judge: &str,
        records: &[Record],
        verdicts: &[ItemVerdict],
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
        let (mut human_ix, mut judge_ix) = (Vec::new(), Vec::new());
        let (mut human_scores, mut judge_scores) = (Vec::new(), Vec::new());
        let (mut consistent, mut cost) = (Vec::new(), None::<f64>);
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
                cost = Some(cost.unwrap_or(0.0) + c);
            }
            let item_consistent = verdict.orders.as_ref().map(|[a, b]| a == b);
            let decided = verdict.error.is_none();
            if let (true, Some(h), Some(j)) = (
                decided,
                index(&human),
                judge_label.as_deref().and_then(index),
            ) {
                human_ix.push(h);
                judge_ix.push(j);
                if let (Some(hs), Some(js)) = (record.human_score, verdict.score) {
                    human_scores.push(hs);
                    judge_scores.push(js);
                }
                consistent.extend(item_consistent);
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
        let matrix = gavel_stats::Confusion::new(labels.len(), &human_ix, &judge_ix)
            .ok_or_else(|| CalibrationError::Set(format!("{dataset}: a label is out of range")))?;
        let weights = if kind == "likert" {
            Weights::Quadratic
        } else {
            Weights::None
        };
        let agreement = matrix.agreement();
        let pointwise = kind != "pairwise";
        let mut notes = Vec::new();
        if kind == "pairwise" {
            notes.push("pairs whose two presentation orders disagree count as `tie`".into());
            if let Some(ScaleSpec::Pairwise { labels }) = Some(&first.scale)
                && !labels.iter().any(|l| l == "tie")
            {
                notes.push("the set has no ties: a judge's tie counts as a disagreement".into());
            }
        }
        if kind == "likert" {
            notes.push("kappa and agreement on the human mean rounded half up; Spearman and Pearson on the mean itself".into());
        }
        let judged = human_ix.len();
        Ok(Report {
            dataset: dataset.to_owned(),
            judge: judge.to_owned(),
            kind,
            items: records.len(),
            judged,
            errors: records.len() - judged,
            agreement,
            kappa: matrix.kappa(weights),
            kappa_weights: if kind == "likert" {
                "quadratic"
            } else {
                "none"
            },
            spearman: pointwise
                .then(|| gavel_stats::spearman(&judge_scores, &human_scores))
                .flatten(),
            pearson: pointwise
                .then(|| gavel_stats::pearson(&judge_scores, &human_scores))
                .flatten(),
            position_consistency: (!consistent.is_empty()).then(|| {
                consistent.iter().filter(|c| **c).count() as f64 / consistent.len() as f64
            }),
            confusion: Confusion {
                labels,
                counts: matrix.counts().to_vec(),
            },
            fit_to_gate: agreement.is_some_and(|a| a >= GATE_AGREEMENT),
            cost_usd: cost,
            notes,
            results,
        })
    }

    /// The report for people: the statistics, the confusion matrix and the gate.
    pub fn text(&self) -> String {
        let num = |v: Option<f64>| v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.3}"));
        let pct =
            |v: Option<f64>| v.map_or_else(|| "n/a".to_owned(), |v| format!("{:.1}%", v * 100.0));
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} · judge {} · {} · {} items, {} judged, {} without a verdict",
            self.dataset, self.judge, self.kind, self.items, self.judged, self.errors
        );
        let _ = writeln!(out, "  agreement            {}", pct(self.agreement));
        let _ = writeln!(
            out,
            "  Cohen's kappa        {} ({})",
            num(self.kappa),
            if self.kappa_weights == "quadratic" {
                "quadratic-weighted"
            } else {
                "unweighted"
            }
        );
        if self.kind != "pairwise" {
            let _ = writeln!(out, "  Spearman             {}", num(self.spearman));
            let _ = writeln!(out, "  Pearson              {}", num(self.pearson));
        } else {
            let _ = writeln!(
                out,
                "  position consistency {}",
                pct(self.position_consistency)
            );
        }
        if let Some(cost) = self.cost_usd {
            let _ = writeln!(out, "  cost                 ${cost:.4}");
        }
        let _ = writeln!(out, "  confusion (rows human, columns judge):");
        let width = self
            .confusion
            .labels
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(1)
            .max(5);
        let _ = write!(out, "    {:>width$}", "");
        for l in &self.confusion.labels {
            let _ = write!(out, " {l:>width$}");
        }
        out.push('\n');
        for (l, row) in self.confusion.labels.iter().zip(&self.confusion.counts) {
            let _ = write!(out, "    {l:>width$}");
            for c in row {
                let _ = write!(out, " {c:>width$}");
            }
            out.push('\n');
        }
        for note in &self.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        let _ = writeln!(
            out,
            "  {}",
            if self.fit_to_gate {
                "fit to gate (agreement ≥ 80%)".to_owned()
            } else {
                format!(
                    "NOT FIT TO GATE: agreement {} is under 80%",
                    pct(self.agreement)
                )
            }
        );
        out
    }
}
