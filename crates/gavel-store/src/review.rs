//! The review queue: a run's executions (or pairs of them) one labeller has
//! not labelled yet, most informative first, ordered and paged by the store so
//! a page costs a few indexed reads at any run size.
//!
//! The order: items where the judge disagrees with another labeller's label;
//! then items of the stratum (target × judge status, or for pairs the two
//! statuses) with the fewest labels so far; then the judge nearest its
//! threshold (a pair: the closest scores); then recording order.

use std::collections::HashMap;

use gavel_core::{Execution, ExecutionKey};
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, FromRow, Row};

use crate::pages::read_page;
use crate::rows::from_i64;
use crate::{Store, StoreError};

/// Whose queue, of which run, and which part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// The run whose executions are queued.
    pub run_id: String,
    /// The labeller: items they labelled are left out.
    pub labeller: String,
    /// Items passed over at the head of the queue.
    pub skip: usize,
    /// At most this many items (at least 1).
    pub limit: usize,
}

/// What a pairwise queue pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pairing {
    /// Two targets' executions of the same case and repeat, in the run.
    Targets,
    /// The run's execution with the same case, target and repeat in this run.
    Run(String),
}

/// Why an item is where it is in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Informative {
    /// Other labellers' labels of the item.
    pub others: u64,
    /// Of those, how many disagree with the judge.
    pub disagree: u64,
    /// Labels so far in the item's stratum (of every labeller).
    pub stratum_labels: u64,
    /// How far the judge was from its threshold (a pair: the two scores apart).
    pub margin: Option<f64>,
}

/// One execution to label.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewItem {
    /// The execution, in full.
    pub execution: Execution,
    /// Why it is queued here.
    pub why: Informative,
}

/// Two executions of one case to compare, in their true order (A, B).
#[derive(Debug, Clone, Serialize)]
pub struct PairItem {
    /// The first execution: the run's (the alphabetically first target's).
    pub a: Execution,
    /// The second execution.
    pub b: Execution,
    /// Why it is queued here.
    pub why: Informative,
}

/// A page of a queue and how many items it holds in all.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewPage<T> {
    /// The items, most informative first.
    pub items: Vec<T>,
    /// Items the labeller has not labelled, skipped ones included.
    pub remaining: usize,
}

/// `$1` label set, `$2` run, `$3` labeller. An execution's label by `$3` in the
/// set takes it out of the queue.
const SINGLE_ROWS: &str = "FROM executions e \
     LEFT JOIN (SELECT case_id, target, repeat_index, COUNT(*) AS n, \
         SUM(CASE WHEN label = 'pass' THEN 1 ELSE 0 END) AS passes \
         FROM labels WHERE label_set = $1 AND run_id = $2 AND labeller <> $3 \
         AND pair_run_id IS NULL AND label IN ('pass', 'fail') \
         GROUP BY case_id, target, repeat_index) o \
       ON o.case_id = e.case_id AND o.target = e.target AND o.repeat_index = e.repeat_index \
     LEFT JOIN (SELECT x.target, x.status, COUNT(*) AS n FROM labels l JOIN executions x \
         ON x.run_id = l.run_id AND x.case_id = l.case_id AND x.target = l.target \
         AND x.repeat_index = l.repeat_index \
         WHERE l.label_set = $1 AND l.run_id = $2 AND l.pair_run_id IS NULL \
         GROUP BY x.target, x.status) c \
       ON c.target = e.target AND c.status = e.status \
     WHERE e.run_id = $2 AND NOT EXISTS (SELECT 1 FROM labels m WHERE m.run_id = e.run_id \
         AND m.case_id = e.case_id AND m.target = e.target AND m.repeat_index = e.repeat_index \
         AND m.label_set = $1 AND m.labeller = $3 AND m.pair_run_id IS NULL)";

const SINGLE_COLUMNS: &str = "SELECT e.id AS a_id, e.seq AS seq, \
     COALESCE(o.n, 0) AS others, \
     CASE WHEN e.status = 'pass' THEN COALESCE(o.n - o.passes, 0) \
          WHEN e.status = 'fail' THEN COALESCE(o.passes, 0) ELSE 0 END AS disagree, \
     COALESCE(c.n, 0) AS stratum, \
     (SELECT MIN(ABS(v.score - v.threshold)) FROM verdicts v WHERE v.execution_id = e.id \
         AND v.score IS NOT NULL AND v.threshold IS NOT NULL) AS margin ";

/// `$1` label set, `$2` run, `$3` labeller, `$4` the run B is from; `{pairs}`
/// how B matches A. The judge prefers A when A passed and B failed, B the
/// other way round.
const PAIR_ROWS: &str = "FROM executions a JOIN executions b ON b.run_id = $4 \
         AND b.case_id = a.case_id AND b.repeat_index = a.repeat_index AND {pairs} \
     LEFT JOIN (SELECT case_id, target, repeat_index, pair_target, pair_repeat_index, \
         COUNT(*) AS n, SUM(CASE WHEN label = 'A' THEN 1 ELSE 0 END) AS a_votes, \
         SUM(CASE WHEN label = 'B' THEN 1 ELSE 0 END) AS b_votes \
         FROM labels WHERE label_set = $1 AND run_id = $2 AND pair_run_id = $4 \
         AND labeller <> $3 GROUP BY case_id, target, repeat_index, pair_target, \
         pair_repeat_index) o \
       ON o.case_id = a.case_id AND o.target = a.target AND o.repeat_index = a.repeat_index \
         AND o.pair_target = b.target AND o.pair_repeat_index = b.repeat_index \
     LEFT JOIN (SELECT x.status AS a_status, y.status AS b_status, COUNT(*) AS n \
         FROM labels l JOIN executions x ON x.run_id = l.run_id AND x.case_id = l.case_id \
           AND x.target = l.target AND x.repeat_index = l.repeat_index \
         JOIN executions y ON y.run_id = l.pair_run_id AND y.case_id = l.case_id \
           AND y.target = l.pair_target AND y.repeat_index = l.pair_repeat_index \
         WHERE l.label_set = $1 AND l.run_id = $2 AND l.pair_run_id = $4 \
         GROUP BY x.status, y.status) c \
       ON c.a_status = a.status AND c.b_status = b.status \
     WHERE a.run_id = $2 AND NOT EXISTS (SELECT 1 FROM labels m WHERE m.run_id = a.run_id \
         AND m.case_id = a.case_id AND m.target = a.target AND m.repeat_index = a.repeat_index \
         AND m.label_set = $1 AND m.labeller = $3 AND m.pair_run_id = $4 \
         AND m.pair_target = b.target AND m.pair_repeat_index = b.repeat_index)";

const PAIR_COLUMNS: &str = "SELECT a.id AS a_id, b.id AS b_id, a.seq AS seq, \
     COALESCE(o.n, 0) AS others, \
     CASE WHEN a.status = 'pass' AND b.status = 'fail' THEN COALESCE(o.n - o.a_votes, 0) \
          WHEN a.status = 'fail' AND b.status = 'pass' THEN COALESCE(o.n - o.b_votes, 0) \
          ELSE 0 END AS disagree, \
     COALESCE(c.n, 0) AS stratum, ABS(a.score - b.score) AS margin ";

/// The queue's order over the columns above.
const ORDER: &str = " ORDER BY CASE WHEN q.disagree > 0 THEN 0 ELSE 1 END, q.stratum, \
     CASE WHEN q.margin IS NULL THEN 1 ELSE 0 END, q.margin, q.seq";

struct QueueRow {
    a_id: String,
    others: i64,
    disagree: i64,
    stratum: i64,
    margin: Option<f64>,
}

impl FromRow<'_, AnyRow> for QueueRow {
    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(QueueRow {
            a_id: row.try_get("a_id")?,
            others: row.try_get("others")?,
            disagree: row.try_get("disagree")?,
            stratum: row.try_get("stratum")?,
            margin: row.try_get("margin")?,
        })
    }
}

/// A pair's second execution and the columns of its first.
struct PairRow {
    b_id: String,
    row: QueueRow,
}

impl FromRow<'_, AnyRow> for PairRow {
    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(PairRow {
            b_id: row.try_get("b_id")?,
            row: QueueRow::from_row(row)?,
        })
    }
}

impl QueueRow {
    fn why(&self) -> Result<Informative, StoreError> {
        let count = |n: i64| from_i64(n, || "a review queue count".to_owned());
        Ok(Informative {
            others: count(self.others)?,
            disagree: count(self.disagree)?,
            stratum_labels: count(self.stratum)?,
            margin: self.margin,
        })
    }
}

impl Store {
    /// The run's label set: its suite's name (where `gavel calibrate --labels
    /// SUITE` reads the UI's labels).
    pub async fn label_set_of(&self, run_id: &str) -> Result<String, StoreError> {
        sqlx::query_scalar("SELECT suite FROM runs WHERE id = $1")
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("run `{run_id}`")))
    }

    /// A page of the run's executions `review.labeller` has not labelled.
    pub async fn review_queue(
        &self,
        review: &Review,
    ) -> Result<ReviewPage<ReviewItem>, StoreError> {
        let set = self.label_set_of(&review.run_id).await?;
        let binds = [set.as_str(), &review.run_id, &review.labeller];
        let remaining = self.count(SINGLE_ROWS, &binds).await?;
        let rows: Vec<QueueRow> = self
            .ordered(SINGLE_COLUMNS, SINGLE_ROWS, &binds, review)
            .await?;
        let ids: Vec<String> = rows.iter().map(|r| r.a_id.clone()).collect();
        let executions = self.queued(&review.run_id, &ids).await?;
        let mut items = Vec::with_capacity(rows.len());
        for (row, execution) in rows.iter().zip(executions) {
            items.push(ReviewItem {
                execution,
                why: row.why()?,
            });
        }
        Ok(ReviewPage { items, remaining })
    }

    /// A page of the pairs `review.labeller` has not labelled.
    pub async fn pair_queue(
        &self,
        review: &Review,
        pairing: &Pairing,
    ) -> Result<ReviewPage<PairItem>, StoreError> {
        let set = self.label_set_of(&review.run_id).await?;
        let (b_run, pairs) = match pairing {
            Pairing::Targets => (review.run_id.as_str(), "b.target > a.target"),
            Pairing::Run(b) => (b.as_str(), "b.target = a.target"),
        };
        let rows_sql = PAIR_ROWS.replace("{pairs}", pairs);
        let binds = [set.as_str(), &review.run_id, &review.labeller, b_run];
        let remaining = self.count(&rows_sql, &binds).await?;
        let rows: Vec<PairRow> = self
            .ordered(PAIR_COLUMNS, &rows_sql, &binds, review)
            .await?;
        let mut ids: Vec<String> = Vec::with_capacity(rows.len() * 2);
        for id in rows.iter().flat_map(|r| [&r.row.a_id, &r.b_id]) {
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        let executions = self.queued(&review.run_id, &ids).await?;
        let by_id: HashMap<&str, &Execution> =
            ids.iter().map(String::as_str).zip(&executions).collect();
        let mut items = Vec::with_capacity(rows.len());
        for row in &rows {
            if let (Some(a), Some(b)) = (
                by_id.get(row.row.a_id.as_str()),
                by_id.get(row.b_id.as_str()),
            ) {
                items.push(PairItem {
                    a: (*a).clone(),
                    b: (*b).clone(),
                    why: row.row.why()?,
                });
            }
        }
        Ok(ReviewPage { items, remaining })
    }

    /// The execution of `run_id` at `key`.
    pub async fn execution_at(
        &self,
        run_id: &str,
        key: &ExecutionKey,
    ) -> Result<Execution, StoreError> {
        let id: Option<String> = sqlx::query_scalar(
            "SELECT id FROM executions WHERE run_id = $1 AND case_id = $2 AND target = $3 \
             AND repeat_index = $4",
        )
        .bind(run_id)
        .bind(key.case_id.as_str())
        .bind(key.target.as_str())
        .bind(i64::from(key.repeat_index))
        .fetch_optional(&self.pool)
        .await?;
        let missing = || {
            StoreError::NotFound(format!(
                "execution {run_id}/{}/{}/{}",
                key.case_id, key.target, key.repeat_index
            ))
        };
        let id = id.ok_or_else(missing)?;
        read_page(self, &[id]).await?.pop().ok_or_else(missing)
    }

    /// The executions with these ids, every one of them.
    async fn queued(&self, run_id: &str, ids: &[String]) -> Result<Vec<Execution>, StoreError> {
        let executions = read_page(self, ids).await?;
        if executions.len() != ids.len() {
            return Err(StoreError::NotFound(format!(
                "executions of run `{run_id}` queued for review"
            )));
        }
        Ok(executions)
    }

    async fn count(&self, rows: &str, binds: &[&str]) -> Result<usize, StoreError> {
        let sql = format!("SELECT COUNT(*) {rows}");
        let mut query = sqlx::query_scalar(AssertSqlSafe(sql));
        for b in binds {
            query = query.bind(*b);
        }
        let n: i64 = query.fetch_one(&self.pool).await?;
        from_i64(n, || "a review queue's length".to_owned())
    }

    async fn ordered<R>(
        &self,
        columns: &str,
        rows: &str,
        binds: &[&str],
        review: &Review,
    ) -> Result<Vec<R>, StoreError>
    where
        R: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
    {
        let sql = format!(
            "SELECT * FROM ({columns}{rows}) q{ORDER} LIMIT {} OFFSET {}",
            review.limit.max(1),
            review.skip
        );
        let mut query = sqlx::query_as(AssertSqlSafe(sql));
        for b in binds {
            query = query.bind(*b);
        }
        Ok(query.fetch_all(&self.pool).await?)
    }
}
