//! Writing: runs, case snapshots, and executions as they land.

use gavel_core::{Case, Execution, RunRecord, RunStatus, Turn, Verdict};
use sqlx::error::ErrorKind;
use sqlx::{Any, Transaction};

use crate::rows::{Float, to_i64, to_json};
use crate::{Engine, Store, StoreError};

const INSERT_RUN: &str = "INSERT INTO runs (id, suite, status, started_at, finished_at, config_json) \
     VALUES ($1, $2, $3, $4, $5, $6)";

const INSERT_CASE: &str =
    "INSERT INTO run_cases (run_id, seq, case_id, source, case_json) VALUES ($1, $2, $3, $4, $5)";

/// Inserts the execution, or updates the one with the same key (keeping its id and
/// insertion sequence). `seq` is the next in the run: order of first recording.
const UPSERT_EXECUTION: &str = "INSERT INTO executions (id, run_id, seq, case_id, case_name, target, repeat_index, \
         tags_json, status, score, reason, started_at, duration_ms, session_id) \
     VALUES ($1, $2, (SELECT COALESCE(MAX(seq), -1) + 1 FROM executions WHERE run_id = $2), \
         $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
     ON CONFLICT (run_id, case_id, target, repeat_index) DO UPDATE SET \
         case_name = excluded.case_name, tags_json = excluded.tags_json, status = excluded.status, \
         score = excluded.score, reason = excluded.reason, started_at = excluded.started_at, \
         duration_ms = excluded.duration_ms, session_id = excluded.session_id \
     RETURNING id";

/// Children first: tool calls reference turns.
const DELETE_CHILDREN: [&str; 3] = [
    "DELETE FROM tool_calls WHERE execution_id = $1",
    "DELETE FROM turns WHERE execution_id = $1",
    "DELETE FROM verdicts WHERE execution_id = $1",
];

const INSERT_TURN: &str = "INSERT INTO turns (execution_id, seq, round, input, output, response_json, latency_ms, \
         usage_json, failure_json) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

const INSERT_TOOL_CALL: &str = "INSERT INTO tool_calls (execution_id, turn_seq, seq, name, arguments_json, \
         result_json) VALUES ($1, $2, $3, $4, $5, $6)";

const INSERT_VERDICT: &str = "INSERT INTO verdicts (execution_id, seq, round, check_name, kind, status, score, \
         threshold, reason, evidence_json, cost_usd) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

impl Store {
    /// Records a new run. Its id must not exist yet.
    pub async fn create_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        let config = to_json(&run.config, || format!("run {} config", run.id))?;
        sqlx::query(INSERT_RUN)
            .bind(run.id.as_str())
            .bind(run.suite.as_str())
            .bind(run.status.as_str())
            .bind(run.started_at.as_str())
            .bind(run.finished_at.as_deref())
            .bind(config)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Stores the exact cases a run used, in order, replacing any earlier snapshot of
    /// that run. `Case::source` (which serde skips) is kept in its own column.
    pub async fn save_cases(&self, run_id: &str, cases: &[Case]) -> Result<(), StoreError> {
        let rows = cases
            .iter()
            .enumerate()
            .map(|(seq, case)| {
                let what = || format!("case `{}` of run {run_id}", case.id);
                Ok((to_i64(seq, what)?, case, to_json(case, what)?))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM run_cases WHERE run_id = $1")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        for (seq, case, json) in rows {
            sqlx::query(INSERT_CASE)
                .bind(run_id)
                .bind(seq)
                .bind(case.id.as_str())
                .bind(case.source.as_str())
                .bind(json)
                .execute(&mut *tx)
                .await
                .map_err(|e| run_missing(e, run_id))?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Writes one execution with its turns, tool calls and verdicts in one
    /// transaction. The key is (run, case id, target, repeat index): writing a key
    /// again replaces what was stored under it, never duplicates it.
    pub async fn record_execution(&self, run_id: &str, e: &Execution) -> Result<(), StoreError> {
        // Convert everything before taking the write lock.
        let what = |field: &str| {
            format!(
                "execution {}/{}/{} {field}",
                e.case_id, e.target, e.repeat_index
            )
        };
        let tags = to_json(&e.tags, || what("tags"))?;
        let repeat_index = i64::from(e.repeat_index);
        let duration_ms = to_i64(e.duration_ms, || what("duration_ms"))?;
        let turns = e
            .transcript
            .turns
            .iter()
            .enumerate()
            .map(|(seq, turn)| NewTurn::new(seq, turn, &what))
            .collect::<Result<Vec<_>, _>>()?;
        let verdicts = e
            .verdicts
            .iter()
            .enumerate()
            .map(|(seq, verdict)| NewVerdict::new(seq, verdict, &what))
            .collect::<Result<Vec<_>, _>>()?;

        let mut tx = self.begin_write().await?;
        let id: String = sqlx::query_scalar(UPSERT_EXECUTION)
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(run_id)
            .bind(e.case_id.as_str())
            .bind(e.case_name.as_str())
            .bind(e.target.as_str())
            .bind(repeat_index)
            .bind(tags)
            .bind(e.status.as_str())
            .bind(Float(e.score))
            .bind(e.reason.as_deref())
            .bind(e.started_at.as_str())
            .bind(duration_ms)
            .bind(e.transcript.session_id.as_str())
            .fetch_one(&mut *tx)
            .await
            .map_err(|err| run_missing(err, run_id))?;
        for delete in DELETE_CHILDREN {
            sqlx::query(delete)
                .bind(id.as_str())
                .execute(&mut *tx)
                .await?;
        }
        for turn in turns {
            turn.insert(&id, &mut tx).await?;
        }
        for verdict in verdicts {
            verdict.insert(&id, &mut tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Sets a run's final status and end time.
    pub async fn finish_run(
        &self,
        run_id: &str,
        status: RunStatus,
        finished_at: &str,
    ) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE runs SET status = $2, finished_at = $3 WHERE id = $1")
            .bind(run_id)
            .bind(status.as_str())
            .bind(finished_at)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("run `{run_id}`")));
        }
        Ok(())
    }

    /// Begins a transaction that will write. SQLite takes the write lock at once
    /// (`BEGIN IMMEDIATE`), so concurrent writers wait on the busy timeout instead of
    /// failing to upgrade a read lock; PostgreSQL's row locks need nothing special.
    async fn begin_write(&self) -> Result<Transaction<'static, Any>, sqlx::Error> {
        match self.engine {
            Engine::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Engine::Postgres => self.pool.begin().await,
        }
    }
}

/// A foreign-key violation on a run's child row means the run does not exist.
fn run_missing(error: sqlx::Error, run_id: &str) -> StoreError {
    match &error {
        sqlx::Error::Database(db) if db.kind() == ErrorKind::ForeignKeyViolation => {
            StoreError::NotFound(format!("run `{run_id}`"))
        }
        _ => StoreError::Db(error),
    }
}

/// A turn and its tool calls, converted to column values.
struct NewTurn<'a> {
    seq: i64,
    turn: &'a Turn,
    round: i64,
    latency_ms: i64,
    response: Option<String>,
    usage: Option<String>,
    failure: Option<String>,
    /// (seq, name, arguments, result) per tool call, in order.
    calls: Vec<(i64, &'a str, String, Option<String>)>,
}

impl<'a> NewTurn<'a> {
    fn new(seq: usize, turn: &'a Turn, what: &impl Fn(&str) -> String) -> Result<Self, StoreError> {
        let at = |field: &str| what(&format!("turn #{seq} {field}"));
        let calls = turn
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let seq = to_i64(i, || at("tool call seq"))?;
                let args = to_json(&c.arguments, || at("tool call arguments"))?;
                let result = c
                    .result
                    .as_ref()
                    .map(|r| to_json(r, || at("tool call result")))
                    .transpose()?;
                Ok((seq, c.name.as_str(), args, result))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(NewTurn {
            seq: to_i64(seq, || at("seq"))?,
            turn,
            round: to_i64(turn.round, || at("round"))?,
            latency_ms: to_i64(turn.latency_ms, || at("latency_ms"))?,
            response: turn
                .response
                .as_ref()
                .map(|r| to_json(r, || at("response")))
                .transpose()?,
            usage: turn
                .usage
                .as_ref()
                .map(|u| to_json(u, || at("usage")))
                .transpose()?,
            failure: turn
                .failure
                .as_ref()
                .map(|f| to_json(f, || at("failure")))
                .transpose()?,
            calls,
        })
    }

    async fn insert(
        self,
        execution_id: &str,
        tx: &mut Transaction<'static, Any>,
    ) -> Result<(), StoreError> {
        sqlx::query(INSERT_TURN)
            .bind(execution_id)
            .bind(self.seq)
            .bind(self.round)
            .bind(self.turn.input.as_str())
            .bind(self.turn.output.as_str())
            .bind(self.response)
            .bind(self.latency_ms)
            .bind(self.usage)
            .bind(self.failure)
            .execute(&mut **tx)
            .await?;
        for (seq, name, arguments, result) in self.calls {
            sqlx::query(INSERT_TOOL_CALL)
                .bind(execution_id)
                .bind(self.seq)
                .bind(seq)
                .bind(name)
                .bind(arguments)
                .bind(result)
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }
}

/// A verdict converted to column values.
struct NewVerdict<'a> {
    seq: i64,
    verdict: &'a Verdict,
    round: Option<i64>,
    evidence: Option<String>,
}

impl<'a> NewVerdict<'a> {
    fn new(
        seq: usize,
        verdict: &'a Verdict,
        what: &impl Fn(&str) -> String,
    ) -> Result<Self, StoreError> {
        let at = |field: &str| what(&format!("verdict #{seq} {field}"));
        Ok(NewVerdict {
            seq: to_i64(seq, || at("seq"))?,
            verdict,
            round: verdict
                .round
                .map(|r| to_i64(r, || at("round")))
                .transpose()?,
            // JSON null is stored as SQL NULL.
            evidence: match &verdict.evidence {
                serde_json::Value::Null => None,
                evidence => Some(to_json(evidence, || at("evidence"))?),
            },
        })
    }

    async fn insert(
        self,
        execution_id: &str,
        tx: &mut Transaction<'static, Any>,
    ) -> Result<(), StoreError> {
        let v = self.verdict;
        sqlx::query(INSERT_VERDICT)
            .bind(execution_id)
            .bind(self.seq)
            .bind(self.round)
            .bind(v.check.as_str())
            .bind(v.kind.as_str())
            .bind(v.status.as_str())
            .bind(Float(v.score))
            .bind(Float(v.threshold))
            .bind(v.reason.as_str())
            .bind(self.evidence)
            .bind(Float(v.cost_usd))
            .execute(&mut **tx)
            .await?;
        Ok(())
    }
}
