//! Human labels on executions, written from the web UI.

use serde::Serialize;

use crate::rows::{Float, from_i64};
use crate::{Store, StoreError};

/// A person's verdict on one execution (the web UI's labels; stored as calibration
/// labels in the set named after the run's suite).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Label {
    /// The run.
    pub run_id: String,
    /// The case id.
    pub case_id: String,
    /// The target's name.
    pub target: String,
    /// Which repeat (0-based).
    pub repeat_index: u32,
    /// `pass` or `fail`.
    pub label: String,
    /// Optional score on 0..1.
    pub score: Option<f64>,
    /// Who labelled it.
    pub who: String,
    /// Optional note.
    pub note: Option<String>,
    /// When (RFC 3339 UTC); filled by the store.
    pub created_at: String,
}

type LabelRow = (
    String,
    String,
    String,
    i64,
    String,
    Option<f64>,
    String,
    Option<String>,
    String,
);

impl Store {
    /// Adds a label. `label` must be `pass` or `fail`, `score` within 0..1.
    pub async fn add_label(&self, label: &Label) -> Result<(), StoreError> {
        if !matches!(label.label.as_str(), "pass" | "fail") {
            return Err(StoreError::invalid(
                "label",
                format!("`{}` is neither `pass` nor `fail`", label.label),
            ));
        }
        if label.score.is_some_and(|s| !(0.0..=1.0).contains(&s)) {
            return Err(StoreError::invalid("label score", "must be within 0..1"));
        }
        // Labels from the UI live in the calibration `labels` table, in the label set
        // named after the run's suite, so `gavel calibrate --labels SUITE` reads them.
        let suite = self.label_set_of(&label.run_id).await?;
        let item_id = format!(
            "{}/{}/{}/{}",
            label.run_id, label.case_id, label.target, label.repeat_index
        );
        sqlx::query(
            "INSERT INTO labels (label_set, item_id, labeller, run_id, case_id, target, \
             repeat_index, label, score, note, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (label_set, item_id, labeller) DO UPDATE SET \
             label = excluded.label, score = excluded.score, note = excluded.note, \
             created_at = excluded.created_at",
        )
        .bind(suite.as_str())
        .bind(item_id.as_str())
        .bind(label.who.as_str())
        .bind(label.run_id.as_str())
        .bind(label.case_id.as_str())
        .bind(label.target.as_str())
        .bind(i64::from(label.repeat_index))
        .bind(label.label.as_str())
        .bind(Float(label.score))
        .bind(label.note.as_deref())
        .bind(gavel_core::now_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every label of a run's executions, oldest first; a person's later label of
    /// the same execution replaces the earlier one.
    pub async fn run_labels(&self, run_id: &str) -> Result<Vec<Label>, StoreError> {
        let rows: Vec<LabelRow> = sqlx::query_as(
            "SELECT run_id, case_id, target, repeat_index, label, score, labeller, note, \
             created_at FROM labels \
             WHERE run_id = $1 AND label IS NOT NULL AND repeat_index IS NOT NULL \
             AND pair_run_id IS NULL \
             ORDER BY created_at, item_id, labeller",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(
                |(run_id, case_id, target, repeat, label, score, who, note, created_at)| {
                    Ok(Label {
                        repeat_index: from_i64(repeat, || format!("label of {case_id}"))?,
                        run_id,
                        case_id,
                        target,
                        label,
                        score,
                        who,
                        note,
                        created_at,
                    })
                },
            )
            .collect()
    }
}
