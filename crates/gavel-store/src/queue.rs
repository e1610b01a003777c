//! The work queue of distributed runs (DESIGN.md §9): a run enqueues its
//! executions in units (usually of one; executions that pair with each other form
//! one unit), workers claim a unit at a time under a lease they renew with
//! heartbeats, and a claim whose lease expired (its worker died) is taken again.
//!
//! PostgreSQL claims with `FOR UPDATE SKIP LOCKED`, so any number of workers claim
//! concurrently without waiting on each other; SQLite serialises claims through its
//! write lock (`BEGIN IMMEDIATE`). Results are written with
//! [`Store::record_execution`], which is idempotent: a late duplicate of a reclaimed
//! execution replaces, never adds.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gavel_core::{ExecutionKey, RunStatus, Suite};

use crate::rows::{from_i64, to_json};
use crate::{Engine, Store, StoreError};

/// Claimable: the head of a unit, queued, or claimed under an expired lease, of a
/// run still running.
const CLAIM_CANDIDATE: &str = "SELECT q.id FROM queue q JOIN runs r ON r.id = q.run_id \
     WHERE r.status = 'running' AND q.unit_head IS NULL \
       AND (q.state = 'queued' OR (q.state = 'claimed' AND q.lease_until_ms < $3)) \
     ORDER BY q.run_id, q.seq LIMIT 1";

/// One execution taken by a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The queue row's id.
    pub id: String,
    /// The run it belongs to.
    pub run_id: String,
    /// The case's id.
    pub case_id: String,
    /// The target's name.
    pub target: String,
    /// Which repeat (0-based).
    pub repeat_index: u32,
    /// How many times it was claimed, this claim included (more than 1: a worker
    /// holding it was lost).
    pub attempts: u32,
    /// The worker holding the claim.
    pub worker: String,
}

impl Claim {
    /// Which execution of its run is claimed.
    pub fn key(&self) -> ExecutionKey {
        ExecutionKey::new(&self.case_id, &self.target, self.repeat_index)
    }
}

/// A claimed queue row: id, run, case, target, repeat index, attempts.
type ClaimRow = (String, String, String, String, i64, i64);

/// How far a distributed run's queue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueProgress {
    /// Waiting for a worker.
    pub queued: u64,
    /// Held by a worker.
    pub claimed: u64,
    /// Finished and recorded.
    pub done: u64,
}

impl QueueProgress {
    /// Every execution of the queue.
    pub fn total(&self) -> u64 {
        self.queued + self.claimed + self.done
    }
}

/// `[DONE/TOTAL] C running, Q queued`.
impl std::fmt::Display for QueueProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let QueueProgress {
            queued,
            claimed,
            done,
        } = self;
        write!(
            f,
            "[{done}/{}] {claimed} running, {queued} queued",
            self.total()
        )
    }
}

/// Milliseconds since the Unix epoch, `lease` from now.
fn epoch_ms(lease: Duration) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from((now + lease).as_millis()).unwrap_or(i64::MAX)
}

impl Store {
    /// Stores the suite a run was started with (targets, judge settings, cases), so
    /// that workers elsewhere can run its executions. Replaces an earlier one.
    pub async fn save_suite(&self, run_id: &str, suite: &Suite) -> Result<(), StoreError> {
        let json = to_json(suite, || format!("suite of run {run_id}"))?;
        let json = gavel_core::secrets::redact(&json).into_owned();
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM run_suites WHERE run_id = $1")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO run_suites (run_id, suite_json) VALUES ($1, $2)")
            .bind(run_id)
            .bind(json)
            .execute(&mut *tx)
            .await
            .map_err(|e| crate::write::run_missing(e, run_id))?;
        tx.commit().await?;
        Ok(())
    }

    /// The suite stored with a run, its cases the exact ones the run saved (with
    /// their `source`).
    pub async fn suite(&self, run_id: &str) -> Result<Suite, StoreError> {
        let mut suite = self.suite_settings(run_id).await?;
        suite.cases = self.cases(run_id).await?;
        Ok(suite)
    }

    /// The suite stored with a run without its cases: its name, files, targets
    /// and judge settings (the cases are read with [`Store::case_pages`]).
    pub async fn suite_settings(&self, run_id: &str) -> Result<Suite, StoreError> {
        let json: Option<String> =
            sqlx::query_scalar("SELECT suite_json FROM run_suites WHERE run_id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await?;
        let json = json.ok_or_else(|| StoreError::NotFound(format!("suite of run `{run_id}`")))?;
        serde_json::from_str(&json)
            .map_err(|e| StoreError::corrupt(format!("suite of run {run_id}"), e))
    }

    /// Enqueues a run's executions, in order, in units claimed together: a
    /// unit's first execution is its head. Executions already queued for the
    /// run are left as they are.
    pub async fn enqueue(
        &self,
        run_id: &str,
        units: &[Vec<ExecutionKey>],
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        let mut seq: i64 =
            sqlx::query_scalar("SELECT COALESCE(MAX(seq), -1) + 1 FROM queue WHERE run_id = $1")
                .bind(run_id)
                .fetch_one(&mut *tx)
                .await?;
        for unit in units {
            let head = uuid::Uuid::now_v7().to_string();
            for (position, key) in unit.iter().enumerate() {
                let id = match position {
                    0 => head.clone(),
                    _ => uuid::Uuid::now_v7().to_string(),
                };
                sqlx::query(
                    "INSERT INTO queue (id, run_id, seq, case_id, target, repeat_index, state, attempts, unit_head) \
                     VALUES ($1, $2, $3, $4, $5, $6, 'queued', 0, $7) \
                     ON CONFLICT (run_id, case_id, target, repeat_index) DO NOTHING",
                )
                .bind(id)
                .bind(run_id)
                .bind(seq)
                .bind(key.case_id.as_str())
                .bind(key.target.as_str())
                .bind(i64::from(key.repeat_index))
                .bind((position > 0).then_some(head.as_str()))
                .execute(&mut *tx)
                .await
                .map_err(|e| crate::write::run_missing(e, run_id))?;
                seq += 1;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Claims the next unit of executions of any running run for `worker`, each
    /// held for `lease` unless renewed with [`Store::heartbeat`]; the head comes
    /// first. Empty when nothing is claimable.
    pub async fn claim(&self, worker: &str, lease: Duration) -> Result<Vec<Claim>, StoreError> {
        let sql = match self.engine {
            Engine::Postgres => format!(
                "UPDATE queue SET state = 'claimed', worker = $1, lease_until_ms = $2, \
                 attempts = attempts + 1 WHERE id = ({CLAIM_CANDIDATE} FOR UPDATE OF q SKIP LOCKED) \
                 RETURNING id, run_id, case_id, target, repeat_index, attempts"
            ),
            Engine::Sqlite => format!(
                "UPDATE queue SET state = 'claimed', worker = $1, lease_until_ms = $2, \
                 attempts = attempts + 1 WHERE id = ({CLAIM_CANDIDATE}) \
                 RETURNING id, run_id, case_id, target, repeat_index, attempts"
            ),
        };
        let mut tx = self.begin_write().await?;
        let row: Option<ClaimRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(worker)
            .bind(epoch_ms(lease))
            .bind(epoch_ms(Duration::ZERO))
            .fetch_optional(&mut *tx)
            .await?;
        let mut rows: Vec<ClaimRow> = row.into_iter().collect();
        if let Some((head, ..)) = rows.first() {
            let members: Vec<ClaimRow> = sqlx::query_as(
                "UPDATE queue SET state = 'claimed', worker = $1, lease_until_ms = $2, \
                 attempts = attempts + 1 WHERE unit_head = $3 AND state <> 'done' \
                 RETURNING id, run_id, case_id, target, repeat_index, attempts",
            )
            .bind(worker)
            .bind(epoch_ms(lease))
            .bind(head.as_str())
            .fetch_all(&mut *tx)
            .await?;
            rows.extend(members);
        }
        tx.commit().await?;
        rows.into_iter()
            .map(|(id, run_id, case_id, target, repeat, attempts)| {
                let what = || format!("queue row {id}");
                Ok(Claim {
                    repeat_index: from_i64(repeat, what)?,
                    attempts: from_i64(attempts, what)?,
                    id,
                    run_id,
                    case_id,
                    target,
                    worker: worker.to_owned(),
                })
            })
            .collect()
    }

    /// Renews a claim's lease. `false` when the claim is no longer this worker's
    /// (its lease expired and another worker took it, or it is done).
    pub async fn heartbeat(&self, claim: &Claim, lease: Duration) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE queue SET lease_until_ms = $1 \
             WHERE id = $2 AND worker = $3 AND state = 'claimed'",
        )
        .bind(epoch_ms(lease))
        .bind(claim.id.as_str())
        .bind(claim.worker.as_str())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Marks a claimed execution done (record its result first). When it was the
    /// run's last, the run is marked completed; returns whether this call did so.
    pub async fn complete(&self, claim: &Claim) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        if self.engine == Engine::Postgres {
            // Completions of one run take turns: otherwise two workers finishing the
            // last two executions at once each count the other's as not done yet
            // (read committed) and neither marks the run completed. SQLite's
            // `BEGIN IMMEDIATE` already serializes them.
            sqlx::query("SELECT id FROM runs WHERE id = $1 FOR UPDATE")
                .bind(claim.run_id.as_str())
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("UPDATE queue SET state = 'done', lease_until_ms = NULL WHERE id = $1")
            .bind(claim.id.as_str())
            .execute(&mut *tx)
            .await?;
        let left: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM queue WHERE run_id = $1 AND state <> 'done'")
                .bind(claim.run_id.as_str())
                .fetch_one(&mut *tx)
                .await?;
        let finished = if left == 0 {
            sqlx::query(
                "UPDATE runs SET status = $2, finished_at = $3 WHERE id = $1 AND status = 'running'",
            )
            .bind(claim.run_id.as_str())
            .bind(RunStatus::Completed.as_str())
            .bind(gavel_core::now_rfc3339())
            .execute(&mut *tx)
            .await?
            .rows_affected()
                > 0
        } else {
            false
        };
        tx.commit().await?;
        Ok(finished)
    }

    /// How far a run's queue is.
    pub async fn queue_progress(&self, run_id: &str) -> Result<QueueProgress, StoreError> {
        let rows: Vec<(String, i64)> =
            sqlx::query_as("SELECT state, COUNT(*) FROM queue WHERE run_id = $1 GROUP BY state")
                .bind(run_id)
                .fetch_all(&self.pool)
                .await?;
        let mut progress = QueueProgress::default();
        for (state, count) in rows {
            let count = from_i64(count, || format!("queue count of run {run_id}"))?;
            match state.as_str() {
                "queued" => progress.queued = count,
                "claimed" => progress.claimed = count,
                "done" => progress.done = count,
                other => {
                    return Err(StoreError::corrupt(
                        format!("queue state of run {run_id}"),
                        format!("unknown state `{other}`"),
                    ));
                }
            }
        }
        Ok(progress)
    }
}
