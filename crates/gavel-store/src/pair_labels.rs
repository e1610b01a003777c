//! People's comparisons of two executions of one case (the review queue's
//! pairwise labels), stored in the calibration `labels` table of the run's set.

use gavel_core::ExecutionKey;
use serde::Serialize;

use crate::rows::{from_i64, to_i64};
use crate::{Store, StoreError};

/// The execution a pair compares the run's with (B).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct PairSide {
    /// Its run (the run itself when two targets are compared).
    pub run_id: String,
    /// Its target.
    pub target: String,
    /// Its repeat (0-based).
    pub repeat_index: u32,
}

/// A person's comparison of execution A (of the run) with execution B of the
/// same case, in that true order whatever order they were shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairLabel {
    /// A's run.
    pub run_id: String,
    /// The case both executions ran.
    pub case_id: String,
    /// A's target.
    pub target: String,
    /// A's repeat (0-based).
    pub repeat_index: u32,
    /// B.
    pub pair: PairSide,
    /// `A`, `B` or `tie`.
    pub label: String,
    /// Who labelled it.
    pub who: String,
    /// Optional note.
    pub note: Option<String>,
    /// Whether B was shown first.
    pub shown_swapped: bool,
    /// The same person's label when shown the pair again in the other order
    /// (`A`, `B` or `tie`, true order).
    pub recheck: Option<String>,
    /// When (RFC 3339 UTC); filled by the store.
    pub created_at: String,
}

impl PairLabel {
    /// The item's id in the label set: both executions' keys.
    pub fn item_id(&self) -> String {
        let a = ExecutionKey::new(&self.case_id, &self.target, self.repeat_index);
        let b = ExecutionKey::new(&self.case_id, &self.pair.target, self.pair.repeat_index);
        PairLabel::item_id_of(&self.run_id, &a, &self.pair.run_id, &b)
    }

    /// The id of the pair of `run_id`'s execution `a` and `pair_run`'s `b`
    /// (of the same case).
    pub fn item_id_of(run_id: &str, a: &ExecutionKey, pair_run: &str, b: &ExecutionKey) -> String {
        format!(
            "{run_id}/{}/{}/{}|{pair_run}/{}/{}",
            a.case_id, a.target, a.repeat_index, b.target, b.repeat_index
        )
    }

    fn what(&self) -> String {
        format!("pair label {}", self.item_id())
    }
}

/// Checks a pairwise label's value.
fn check_choice(what: &str, label: &str) -> Result<(), StoreError> {
    match label {
        "A" | "B" | "tie" => Ok(()),
        other => Err(StoreError::invalid(
            what,
            format!("`{other}` is not `A`, `B` or `tie`"),
        )),
    }
}

const UPSERT_PAIR: &str = "INSERT INTO labels (label_set, item_id, labeller, run_id, case_id, \
         target, repeat_index, pair_run_id, pair_target, pair_repeat_index, label, note, \
         shown_swapped, recheck_label, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, NULL, $14) \
     ON CONFLICT (label_set, item_id, labeller) DO UPDATE SET label = excluded.label, \
         note = excluded.note, shown_swapped = excluded.shown_swapped, recheck_label = NULL, \
         created_at = excluded.created_at";

const SELECT_PAIRS: &str = "SELECT run_id, case_id, target, repeat_index, pair_run_id, \
         pair_target, pair_repeat_index, label, labeller, note, shown_swapped, recheck_label, \
         created_at FROM labels";

type PairRow = (
    String,
    String,
    String,
    i64,
    String,
    String,
    i64,
    String,
    String,
    Option<String>,
    Option<i64>,
    Option<String>,
    String,
);

/// Of its pairwise labels, a labeller sees one again in the other order after
/// every this many.
const RECHECK_EVERY: i64 = 4;

impl Store {
    /// Keeps a pairwise label, replacing the same person's earlier label of the
    /// pair (and its recheck). Both executions must be stored, of one case.
    pub async fn add_pair_label(&self, label: &PairLabel) -> Result<(), StoreError> {
        let what = label.what();
        check_choice(&what, &label.label)?;
        let set = self.label_set_of(&label.run_id).await?;
        for (run, target, repeat) in [
            (&label.run_id, &label.target, label.repeat_index),
            (
                &label.pair.run_id,
                &label.pair.target,
                label.pair.repeat_index,
            ),
        ] {
            let found: Option<i64> = sqlx::query_scalar(
                "SELECT seq FROM executions WHERE run_id = $1 AND case_id = $2 \
                 AND target = $3 AND repeat_index = $4",
            )
            .bind(run.as_str())
            .bind(label.case_id.as_str())
            .bind(target.as_str())
            .bind(to_i64(repeat, || what.clone())?)
            .fetch_optional(&self.pool)
            .await?;
            if found.is_none() {
                return Err(StoreError::NotFound(format!(
                    "execution {run}/{}/{target}/{repeat}",
                    label.case_id
                )));
            }
        }
        sqlx::query(UPSERT_PAIR)
            .bind(set.as_str())
            .bind(label.item_id())
            .bind(label.who.as_str())
            .bind(label.run_id.as_str())
            .bind(label.case_id.as_str())
            .bind(label.target.as_str())
            .bind(to_i64(label.repeat_index, || what.clone())?)
            .bind(label.pair.run_id.as_str())
            .bind(label.pair.target.as_str())
            .bind(to_i64(label.pair.repeat_index, || what.clone())?)
            .bind(label.label.as_str())
            .bind(label.note.as_deref())
            .bind(i64::from(label.shown_swapped))
            .bind(gavel_core::now_rfc3339())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Records `label.recheck`: the person's label of a pair they labelled
    /// before, shown again in the other order.
    pub async fn recheck_pair_label(&self, label: &PairLabel) -> Result<(), StoreError> {
        let what = label.what();
        let Some(recheck) = &label.recheck else {
            return Err(StoreError::invalid(what, "it has no recheck label"));
        };
        check_choice(&what, recheck)?;
        let set = self.label_set_of(&label.run_id).await?;
        let done = sqlx::query(
            "UPDATE labels SET recheck_label = $1 \
             WHERE label_set = $2 AND item_id = $3 AND labeller = $4",
        )
        .bind(recheck.as_str())
        .bind(set.as_str())
        .bind(label.item_id())
        .bind(label.who.as_str())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("{what} by `{}`", label.who)));
        }
        Ok(())
    }

    /// Every pairwise label of the run's executions (as A), oldest first.
    pub async fn run_pair_labels(&self, run_id: &str) -> Result<Vec<PairLabel>, StoreError> {
        let sql = format!(
            "{SELECT_PAIRS} WHERE run_id = $1 AND pair_run_id IS NOT NULL \
             ORDER BY created_at, item_id, labeller"
        );
        let rows: Vec<PairRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(run_id)
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter().map(pair_from_row).collect()
    }

    /// The pair `labeller` should see again in the other order now, if any: the
    /// oldest not seen again, once they have given [`RECHECK_EVERY`] pairwise
    /// labels of this pairing per recheck.
    pub async fn due_recheck(
        &self,
        run_id: &str,
        pair_run: &str,
        labeller: &str,
    ) -> Result<Option<PairLabel>, StoreError> {
        let (given, rechecked): (i64, Option<i64>) = sqlx::query_as(
            "SELECT COUNT(*), SUM(CASE WHEN recheck_label IS NULL THEN 0 ELSE 1 END) \
             FROM labels WHERE run_id = $1 AND pair_run_id = $2 AND labeller = $3",
        )
        .bind(run_id)
        .bind(pair_run)
        .bind(labeller)
        .fetch_one(&self.pool)
        .await?;
        if given < RECHECK_EVERY * (rechecked.unwrap_or(0) + 1) {
            return Ok(None);
        }
        let sql = format!(
            "{SELECT_PAIRS} WHERE run_id = $1 AND pair_run_id = $2 AND labeller = $3 \
             AND recheck_label IS NULL ORDER BY created_at, item_id LIMIT 1"
        );
        let row: Option<PairRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(run_id)
            .bind(pair_run)
            .bind(labeller)
            .fetch_optional(&self.pool)
            .await?;
        row.map(pair_from_row).transpose()
    }
}

fn pair_from_row(row: PairRow) -> Result<PairLabel, StoreError> {
    let (run_id, case_id, target, repeat, pair_run, pair_target, pair_repeat) =
        (row.0, row.1, row.2, row.3, row.4, row.5, row.6);
    let what = || format!("pair label of {run_id}/{case_id}");
    Ok(PairLabel {
        repeat_index: from_i64(repeat, what)?,
        pair: PairSide {
            run_id: pair_run,
            target: pair_target,
            repeat_index: from_i64(pair_repeat, what)?,
        },
        label: row.7,
        who: row.8,
        note: row.9,
        shown_swapped: row.10.unwrap_or(0) != 0,
        recheck: row.11,
        created_at: row.12,
        run_id,
        case_id,
        target,
    })
}
