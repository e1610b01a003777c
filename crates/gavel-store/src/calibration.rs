//! Human labels and calibration runs.

use gavel_core::{CalibrationRun, ExecutionKey, ExecutionRef, Label};
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::rows::{Float, from_i64, from_json, to_i64, to_json};
use crate::{Store, StoreError};

/// Inserts a label, or replaces the labeller's earlier label of the same item.
const UPSERT_LABEL: &str = "INSERT INTO labels \
         (label_set, item_id, labeller, run_id, case_id, target, repeat_index, label, score, \
         note, created_at, pair_run_id, pair_target, pair_repeat_index) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
     ON CONFLICT (label_set, item_id, labeller) DO UPDATE SET \
         run_id = excluded.run_id, case_id = excluded.case_id, target = excluded.target, \
         repeat_index = excluded.repeat_index, label = excluded.label, score = excluded.score, \
         note = excluded.note, created_at = excluded.created_at, \
         pair_run_id = excluded.pair_run_id, pair_target = excluded.pair_target, \
         pair_repeat_index = excluded.pair_repeat_index";

const SELECT_LABELS: &str = "SELECT label_set, item_id, labeller, run_id, case_id, target, \
         repeat_index, label, score, note, created_at, pair_run_id, pair_target, \
         pair_repeat_index \
     FROM labels WHERE label_set = $1 ORDER BY item_id, labeller";

const INSERT_CALIBRATION: &str = "INSERT INTO calibration_runs \
         (id, created_at, dataset, judge, items, judged, agreement, kappa, fit_to_gate, \
         report_json, fingerprint_json) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

const CALIBRATION_COLUMNS: &str = "id, created_at, dataset, judge, items, judged, agreement, \
     kappa, fit_to_gate, report_json, fingerprint_json";

impl Store {
    /// Keeps a label, replacing the same labeller's earlier label of the item.
    /// A label needs a `label` or a `score`.
    pub async fn put_label(&self, label: &Label) -> Result<(), StoreError> {
        let what = || format!("label {}/{}", label.label_set, label.item_id);
        if label.label.is_none() && label.score.is_none() {
            return Err(StoreError::invalid(
                what(),
                "it has neither a label nor a score",
            ));
        }
        let repeat = label
            .execution
            .as_ref()
            .map(|e| to_i64(e.key.repeat_index, what))
            .transpose()?;
        let key = label.execution.as_ref();
        let pair = label.pair.as_ref();
        if pair.is_some_and(|p| key.is_none_or(|k| k.key.case_id != p.key.case_id)) {
            return Err(StoreError::invalid(
                what(),
                "a pair's executions must be of one stored case",
            ));
        }
        let pair_repeat = pair.map(|p| to_i64(p.key.repeat_index, what)).transpose()?;
        sqlx::query(UPSERT_LABEL)
            .bind(label.label_set.as_str())
            .bind(label.item_id.as_str())
            .bind(label.labeller.as_str())
            .bind(key.map(|k| k.run_id.as_str()))
            .bind(key.map(|k| k.key.case_id.as_str()))
            .bind(key.map(|k| k.key.target.as_str()))
            .bind(repeat)
            .bind(label.label.as_deref())
            .bind(Float(label.score))
            .bind(label.note.as_deref())
            .bind(label.created_at.as_str())
            .bind(pair.map(|p| p.run_id.as_str()))
            .bind(pair.map(|p| p.key.target.as_str()))
            .bind(pair_repeat)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Every label of a set, by item then labeller.
    pub async fn labels(&self, label_set: &str) -> Result<Vec<Label>, StoreError> {
        let rows = sqlx::query(SELECT_LABELS)
            .bind(label_set)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(label_from_row).collect()
    }

    /// Stores a calibration run. Its id must not exist yet.
    pub async fn save_calibration(&self, run: &CalibrationRun) -> Result<(), StoreError> {
        let what = || format!("calibration run {}", run.id);
        sqlx::query(INSERT_CALIBRATION)
            .bind(run.id.as_str())
            .bind(run.created_at.as_str())
            .bind(run.dataset.as_str())
            .bind(run.judge.as_str())
            .bind(to_i64(run.items, what)?)
            .bind(to_i64(run.judged, what)?)
            .bind(Float(run.agreement))
            .bind(Float(run.kappa))
            .bind(i64::from(run.fit_to_gate))
            .bind(to_json(&run.report, what)?)
            .bind(
                run.fingerprint
                    .as_ref()
                    .map(|f| to_json(f, what))
                    .transpose()?,
            )
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The calibration run with this id.
    pub async fn calibration(&self, id: &str) -> Result<CalibrationRun, StoreError> {
        let sql = format!("SELECT {CALIBRATION_COLUMNS} FROM calibration_runs WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("calibration run `{id}`")))?;
        calibration_from_row(&row)
    }

    /// Every calibration run, newest first.
    pub async fn calibrations(&self) -> Result<Vec<CalibrationRun>, StoreError> {
        let sql = format!(
            "SELECT {CALIBRATION_COLUMNS} FROM calibration_runs ORDER BY created_at DESC, id DESC"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(calibration_from_row).collect()
    }
}

fn label_from_row(row: &AnyRow) -> Result<Label, StoreError> {
    let label_set: String = row.try_get("label_set")?;
    let item_id: String = row.try_get("item_id")?;
    let run_id: Option<String> = row.try_get("run_id")?;
    let case_id: Option<String> = row.try_get("case_id")?;
    let target: Option<String> = row.try_get("target")?;
    let repeat: Option<i64> = row.try_get("repeat_index")?;
    let pair_run: Option<String> = row.try_get("pair_run_id")?;
    let pair_target: Option<String> = row.try_get("pair_target")?;
    let pair_repeat: Option<i64> = row.try_get("pair_repeat_index")?;
    let at = |run_id, case_id: &str, target, repeat| -> Result<_, StoreError> {
        let repeat = from_i64(repeat, || {
            format!("label {label_set}/{item_id} repeat_index")
        })?;
        Ok(ExecutionRef {
            run_id,
            key: ExecutionKey::new(case_id, target, repeat),
        })
    };
    let (execution, pair) = match (run_id, case_id, target, repeat) {
        (Some(run_id), Some(case_id), Some(target), Some(repeat)) => {
            let pair = match (pair_run, pair_target, pair_repeat) {
                (Some(run), Some(target), Some(repeat)) => Some(at(run, &case_id, target, repeat)?),
                _ => None,
            };
            (Some(at(run_id, &case_id, target, repeat)?), pair)
        }
        _ => (None, None),
    };
    Ok(Label {
        labeller: row.try_get("labeller")?,
        execution,
        pair,
        label: row.try_get("label")?,
        score: row.try_get("score")?,
        note: row.try_get("note")?,
        created_at: row.try_get("created_at")?,
        label_set,
        item_id,
    })
}

fn calibration_from_row(row: &AnyRow) -> Result<CalibrationRun, StoreError> {
    let id: String = row.try_get("id")?;
    let what = |column: &str| format!("calibration run {id} {column}");
    let items: i64 = row.try_get("items")?;
    let judged: i64 = row.try_get("judged")?;
    let fit: i64 = row.try_get("fit_to_gate")?;
    let report: String = row.try_get("report_json")?;
    let fingerprint: Option<String> = row.try_get("fingerprint_json")?;
    Ok(CalibrationRun {
        created_at: row.try_get("created_at")?,
        dataset: row.try_get("dataset")?,
        judge: row.try_get("judge")?,
        items: from_i64(items, || what("items"))?,
        judged: from_i64(judged, || what("judged"))?,
        agreement: row.try_get("agreement")?,
        kappa: row.try_get("kappa")?,
        fit_to_gate: fit != 0,
        report: from_json(&report, || what("report_json"))?,
        fingerprint: fingerprint
            .map(|f| from_json(&f, || what("fingerprint_json")))
            .transpose()?,
        id,
    })
}
