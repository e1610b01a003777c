//! Writing: runs, case snapshots, and executions as they land.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt::Write as _;

use gavel_core::{Case, Execution, ExecutionKey, RunRecord, RunStatus, Verdict};
use sqlx::error::ErrorKind;
use sqlx::{Any, Transaction};

use crate::rows::{from_i64, to_i64, to_json};
use crate::tx::{Param, WriteTx};
use crate::{Engine, Store, StoreError};

/// Executions from which finishing a run on PostgreSQL refreshes the planner's
/// statistics ([`Store::finish_run`]).
const ANALYZED_FROM: i64 = 1_000;

const INSERT_RUN: &str = "INSERT INTO runs \
         (id, suite, status, started_at, finished_at, config_json, planned) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// The next insertion sequence of a run: executions are numbered in order of
/// first recording.
const NEXT_SEQ: &str = "SELECT COALESCE(MAX(seq), -1) + 1 FROM executions WHERE run_id = $1";

/// Inserts executions, or updates those with the same key (keeping their id and
/// insertion sequence), and returns every row's id with its key.
const UPSERT_EXECUTIONS: &str = "INSERT INTO executions (id, run_id, seq, case_id, \
     case_name, target, repeat_index, tags_json, status, score, reason, started_at, \
     duration_ms, session_id, cost_usd)";
const UPSERT_EXECUTIONS_TAIL: &str = " ON CONFLICT (run_id, case_id, target, repeat_index) \
     DO UPDATE SET case_name = excluded.case_name, tags_json = excluded.tags_json, \
     status = excluded.status, score = excluded.score, reason = excluded.reason, \
     started_at = excluded.started_at, duration_ms = excluded.duration_ms, \
     session_id = excluded.session_id, cost_usd = excluded.cost_usd \
     RETURNING id, case_id, target, repeat_index";

/// Children first: tool calls reference turns.
const DELETE_CHILDREN: [&str; 3] = [
    "DELETE FROM tool_calls WHERE execution_id = $1",
    "DELETE FROM turns WHERE execution_id = $1",
    "DELETE FROM verdicts WHERE execution_id = $1",
];

/// Multi-row inserts: the statement heads, which [`insert_rows`] completes.
/// One case of a run's snapshot as text ([`Store::append_cases`]).
#[derive(Debug, Clone, Copy)]
pub struct SnapshotCase<'a> {
    /// The case id.
    pub id: &'a str,
    /// Where it was defined (`file:line`).
    pub source: &'a str,
    /// The case as JSON (without its source, which serde skips).
    pub json: &'a str,
}

const INSERT_CASES: &str = "INSERT INTO run_cases (run_id, seq, case_id, source, case_json)";
const INSERT_TURNS: &str = "INSERT INTO turns (execution_id, seq, round, input, output, \
     response_json, latency_ms, usage_json, failure_json, conversation_json)";
const INSERT_TOOL_CALLS: &str = "INSERT INTO tool_calls \
     (execution_id, turn_seq, seq, name, arguments_json, result_json)";
const INSERT_VERDICTS: &str = "INSERT INTO verdicts (execution_id, seq, round, check_name, \
     kind, status, score, threshold, reason, evidence_json, cost_usd)";

/// Most rows per multi-row statement: far below both engines' bind-parameter
/// limits (SQLite 32766, PostgreSQL 65535). Statements carry a power of two of
/// rows up to this, so each engine prepares a handful of shapes once.
const MAX_ROWS_PER_INSERT: usize = 64;

impl Store {
    /// Records a new run. Its id must not exist yet.
    pub async fn create_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        let config = to_json(&run.config, || format!("run {} config", run.id))?;
        let planned = match run.planned {
            Some(n) => Some(to_i64(n, || format!("run {} planned", run.id))?),
            None => None,
        };
        let config = gavel_core::secrets::redact(&config).into_owned();
        sqlx::query(INSERT_RUN)
            .bind(run.id.as_str())
            .bind(run.suite.as_str())
            .bind(run.status.as_str())
            .bind(run.started_at.as_str())
            .bind(run.finished_at.as_deref())
            .bind(config)
            .bind(planned)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Stores the exact cases a run used, in order, replacing any earlier snapshot of
    /// that run. `Case::source` (which serde skips) is kept in its own column.
    pub async fn save_cases<C: Borrow<Case> + Sync>(
        &self,
        run_id: &str,
        cases: &[C],
    ) -> Result<(), StoreError> {
        let json = cases
            .iter()
            .map(|case| {
                let case = case.borrow();
                to_json(case, || format!("case `{}` of run {run_id}", case.id))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let rows: Vec<SnapshotCase<'_>> = cases
            .iter()
            .zip(&json)
            .map(|(case, json)| SnapshotCase {
                id: &case.borrow().id,
                source: &case.borrow().source,
                json,
            })
            .collect();
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM run_cases WHERE run_id = $1")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        self.insert_cases(&mut tx, run_id, 0, &rows).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Adds `cases` to a run's snapshot, numbered from `first_seq` on: a large
    /// snapshot is stored a page at a time, in one transaction each.
    pub async fn append_cases(
        &self,
        run_id: &str,
        first_seq: usize,
        cases: &[SnapshotCase<'_>],
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        self.insert_cases(&mut tx, run_id, first_seq, cases).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn insert_cases(
        &self,
        tx: &mut impl WriteTx,
        run_id: &str,
        first_seq: usize,
        cases: &[SnapshotCase<'_>],
    ) -> Result<(), StoreError> {
        let rows = cases
            .iter()
            .enumerate()
            .map(|(i, case)| {
                let what = || format!("case `{}` of run {run_id}", case.id);
                Ok((to_i64(first_seq.saturating_add(i), what)?, case))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        insert_rows(self.engine, tx, INSERT_CASES, "", &rows, |(seq, case)| {
            [
                run_id.into(),
                (*seq).into(),
                case.id.into(),
                case.source.into(),
                case.json.into(),
            ]
        })
        .await
        .map_err(|e| run_missing(e, run_id))
    }

    /// Writes one execution with its turns, tool calls and verdicts in one
    /// transaction. The key is (run, case id, target, repeat index): writing a key
    /// again replaces what was stored under it, never duplicates it.
    ///
    /// Numbers read back exactly, except that SQLite stores a NaN score as NULL.
    pub async fn record_execution(&self, run_id: &str, e: &Execution) -> Result<(), StoreError> {
        self.record_executions(run_id, std::slice::from_ref(e))
            .await
    }

    /// Writes several executions, as [`Store::record_execution`] does each, in one
    /// transaction: all of them are kept or none; of a key given twice, the last is
    /// kept. The rows of the whole batch go in a few multi-row statements, so a
    /// batch costs about as many statements as a single execution. Model-cache
    /// entries staged meanwhile are written in the same transaction.
    ///
    /// A SQLite file is written on the caller's thread through the direct
    /// connection when its write lock is free; otherwise (or when that write fails
    /// in any way, undone) through the pool.
    pub async fn record_executions(
        &self,
        run_id: &str,
        executions: &[Execution],
    ) -> Result<(), StoreError> {
        // Convert everything before taking the write lock.
        let mut rows = Vec::with_capacity(executions.len());
        for e in executions {
            let what = |field: &str| {
                format!(
                    "execution {}/{}/{} {field}",
                    e.case_id, e.target, e.repeat_index
                )
            };
            rows.push(ExecutionValues {
                execution: e,
                tags: to_json(&e.tags, || what("tags"))?,
                duration_ms: to_i64(e.duration_ms, || what("duration_ms"))?,
                children: Children::of(e, &what)?,
                new_id: uuid::Uuid::now_v7().to_string(),
            });
        }
        let rows = last_per_key(rows);
        if let Some(direct) = &self.direct {
            let cached = self.cache_batch();
            if direct.write(async |tx| {
                write_executions(tx, Engine::Sqlite, run_id, &rows).await?;
                crate::cache::write_cache_entries(Engine::Sqlite, tx, &cached).await
            }) {
                self.cache_committed(cached);
                return Ok(());
            }
        }
        let mut tx = self.begin_write().await?;
        write_executions(&mut tx, self.engine, run_id, &rows).await?;
        self.commit_with_cache(tx).await
    }

    /// Sets a run's final status and end time, and writes the model-cache entries
    /// still staged. On PostgreSQL, a run of 1,000 executions or more then
    /// refreshes the planner's statistics of the tables it filled.
    pub async fn finish_run(
        &self,
        run_id: &str,
        status: RunStatus,
        finished_at: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query("UPDATE runs SET status = $2, finished_at = $3 WHERE id = $1")
            .bind(run_id)
            .bind(status.as_str())
            .bind(finished_at)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("run `{run_id}`")));
        }
        self.commit_with_cache(tx).await?;
        if self.engine == Engine::Postgres {
            self.analyze_if_large(run_id).await?;
        }
        Ok(())
    }

    /// `ANALYZE` of the run tables when `run_id` recorded `ANALYZED_FROM`
    /// executions or more. A large run read right after it is written (its
    /// report, a resume) is read before autovacuum has looked at the new rows:
    /// with the statistics of a smaller table, the planner scans all of `turns`
    /// and `verdicts` for every page (100,000 executions: 21 s, 3 s after this).
    /// `ANALYZE` samples a bounded number of rows, whatever the store's size.
    async fn analyze_if_large(&self, run_id: &str) -> Result<(), StoreError> {
        let (recorded,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM executions WHERE run_id = $1")
                .bind(run_id)
                .fetch_one(&self.pool)
                .await?;
        if recorded >= ANALYZED_FROM {
            sqlx::query("ANALYZE executions, turns, tool_calls, verdicts, run_cases")
                .execute(&self.pool)
                .await?;
        }
        Ok(())
    }

    /// Marks a run failed and keeps why (shown with the run in the UI and API).
    pub async fn fail_run(&self, run_id: &str, error: &str) -> Result<(), StoreError> {
        let error = gavel_core::secrets::redact(error);
        let done = sqlx::query(
            "UPDATE runs SET status = $2, error = $3, \
             finished_at = COALESCE(finished_at, $4) WHERE id = $1",
        )
        .bind(run_id)
        .bind(RunStatus::Failed.as_str())
        .bind(error.as_ref())
        .bind(gavel_core::now_rfc3339())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("run `{run_id}`")));
        }
        Ok(())
    }

    /// What run `run_id` has spent so far, in US dollars: the cost of every
    /// recorded execution, whichever process recorded it.
    pub async fn run_spent(&self, run_id: &str) -> Result<f64, StoreError> {
        let spent: Option<f64> =
            sqlx::query_scalar("SELECT SUM(cost_usd) FROM executions WHERE run_id = $1")
                .bind(run_id)
                .fetch_one(&self.pool)
                .await?;
        Ok(spent.unwrap_or(0.0))
    }

    /// Why a run failed, when it did and said.
    pub async fn run_error(&self, run_id: &str) -> Result<Option<String>, StoreError> {
        let error: Option<Option<String>> =
            sqlx::query_scalar("SELECT error FROM runs WHERE id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await?;
        error.ok_or_else(|| StoreError::NotFound(format!("run `{run_id}`")))
    }

    /// Adds a warning to a run: something went wrong beside its results (an
    /// export that failed), shown with the run in the UI and API.
    pub async fn warn_run(&self, run_id: &str, warning: &str) -> Result<(), StoreError> {
        let warning = gavel_core::secrets::redact(warning).replace('\n', " ");
        let done = sqlx::query(
            "UPDATE runs SET warnings = COALESCE(warnings || $3, '') || $2 WHERE id = $1",
        )
        .bind(run_id)
        .bind(warning)
        .bind("\n")
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("run `{run_id}`")));
        }
        Ok(())
    }

    /// A run's warnings, in the order they were added.
    pub async fn run_warnings(&self, run_id: &str) -> Result<Vec<String>, StoreError> {
        let warnings: Option<Option<String>> =
            sqlx::query_scalar("SELECT warnings FROM runs WHERE id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await?;
        let warnings = warnings.ok_or_else(|| StoreError::NotFound(format!("run `{run_id}`")))?;
        Ok(warnings
            .map(|w| w.lines().map(str::to_owned).collect())
            .unwrap_or_default())
    }

    /// Begins a transaction that will write. SQLite takes the write lock at once
    /// (`BEGIN IMMEDIATE`), so concurrent writers wait on the busy timeout instead of
    /// failing to upgrade a read lock; PostgreSQL's row locks need nothing special.
    pub(crate) async fn begin_write(&self) -> Result<Transaction<'static, Any>, sqlx::Error> {
        match self.engine {
            Engine::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Engine::Postgres => self.pool.begin().await,
        }
    }
}

/// A foreign-key violation on a run's child row means the run does not exist.
pub(crate) fn run_missing(error: impl Into<StoreError>, run_id: &str) -> StoreError {
    match error.into() {
        StoreError::Db(sqlx::Error::Database(db))
            if db.kind() == ErrorKind::ForeignKeyViolation =>
        {
            StoreError::NotFound(format!("run `{run_id}`"))
        }
        error => error,
    }
}

/// Writes `rows` (executions with their children) inside `tx`.
async fn write_executions(
    tx: &mut impl WriteTx,
    engine: Engine,
    run_id: &str,
    rows: &[ExecutionValues<'_>],
) -> Result<(), StoreError> {
    let next_seq = tx.fetch_i64(NEXT_SEQ, &[run_id.into()]).await?;
    let ids = upsert_executions(engine, tx, run_id, next_seq, rows).await?;
    let mut turns = Vec::new();
    let mut calls = Vec::new();
    let mut verdicts = Vec::new();
    for (row, id) in rows.iter().zip(&ids) {
        if *id != row.new_id {
            // The key was recorded before: replace its children.
            for delete in DELETE_CHILDREN {
                tx.execute(delete, &[id.as_str().into()]).await?;
            }
        }
        turns.extend(row.children.turns.iter().map(|t| (id.as_str(), t)));
        calls.extend(row.children.calls.iter().map(|c| (id.as_str(), c)));
        verdicts.extend(row.children.verdicts.iter().map(|v| (id.as_str(), v)));
    }
    insert_children(engine, tx, &turns, &calls, &verdicts).await
}

/// Inserts `rows` with as few multi-row statements as [`MAX_ROWS_PER_INSERT`]
/// allows: `head` (the insert up to its column list), the values, then `tail` (a
/// conflict clause, or nothing); `params` gives one row's values in column order.
pub(crate) async fn insert_rows<'r, T, const WIDTH: usize>(
    engine: Engine,
    tx: &mut impl WriteTx,
    head: &str,
    tail: &str,
    rows: &'r [T],
    params: impl Fn(&'r T) -> [Param<'r>; WIDTH],
) -> Result<(), StoreError> {
    let mut values = Vec::new();
    for chunk in chunks(rows) {
        let mut sql = values_sql(engine, head, WIDTH, chunk.len());
        sql.push_str(tail);
        values.clear();
        values.extend(chunk.iter().flat_map(&params));
        tx.execute(&sql, &values).await?;
    }
    Ok(())
}

/// `rows` in consecutive chunks of a power of two rows, at most
/// [`MAX_ROWS_PER_INSERT`], largest first.
fn chunks<T>(mut rows: &[T]) -> impl Iterator<Item = &[T]> {
    std::iter::from_fn(move || {
        let size = match rows.len() {
            0 => return None,
            n => MAX_ROWS_PER_INSERT.min(1 << n.ilog2()),
        };
        let (chunk, rest) = rows.split_at(size);
        rows = rest;
        Some(chunk)
    })
}

/// `HEAD VALUES (…), (…), …` with `width` placeholders in each of `rows` rows:
/// placeholders only, never data. PostgreSQL gets `$1, $2, …`; SQLite gets
/// anonymous `?`, because its driver looks each numbered parameter up by name, a
/// cost quadratic in their number.
fn values_sql(engine: Engine, head: &str, width: usize, rows: usize) -> String {
    let mut sql = format!("{head} VALUES ");
    for row in 0..rows {
        sql.push_str(if row == 0 { "(" } else { ", (" });
        for col in 1..=width {
            if col > 1 {
                sql.push_str(", ");
            }
            match engine {
                Engine::Sqlite => sql.push('?'),
                Engine::Postgres => {
                    let _ = write!(sql, "${}", row * width + col);
                }
            }
        }
        sql.push(')');
    }
    sql
}

/// One execution's own column values and child rows, converted before any lock is
/// taken.
struct ExecutionValues<'a> {
    execution: &'a Execution,
    tags: String,
    duration_ms: i64,
    children: Children<'a>,
    new_id: String,
}

/// The columns [`UPSERT_EXECUTIONS`] writes.
const EXECUTION_COLUMNS: usize = 15;

impl<'a> ExecutionValues<'a> {
    /// The row's values for [`UPSERT_EXECUTIONS`], numbered `seq` in `run_id`.
    fn params(&'a self, run_id: &'a str, seq: i64) -> [Param<'a>; EXECUTION_COLUMNS] {
        let e = self.execution;
        [
            self.new_id.as_str().into(),
            run_id.into(),
            seq.into(),
            e.case_id.as_str().into(),
            e.case_name.as_str().into(),
            e.target.as_str().into(),
            i64::from(e.repeat_index).into(),
            self.tags.as_str().into(),
            e.status.as_str().into(),
            e.score.into(),
            e.reason.as_deref().into(),
            e.started_at.as_str().into(),
            self.duration_ms.into(),
            e.transcript.session_id.as_str().into(),
            e.cost_usd().into(),
        ]
    }

    fn key(&self) -> ExecutionKey {
        self.execution.key()
    }
}

/// The rows of `rows` whose key (case, target, repeat) is not given again later,
/// in order: one statement cannot write a key twice.
fn last_per_key(rows: Vec<ExecutionValues<'_>>) -> Vec<ExecutionValues<'_>> {
    let last: HashMap<ExecutionKey, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| (row.key(), i))
        .collect();
    rows.into_iter()
        .enumerate()
        .filter(|(i, row)| last.get(&row.key()) == Some(i))
        .map(|(_, row)| row)
        .collect()
}

/// Inserts `rows` (or updates those under an existing key) inside `tx`, numbering
/// new ones from `next_seq`; returns the stored id of each, in order.
async fn upsert_executions(
    engine: Engine,
    tx: &mut impl WriteTx,
    run_id: &str,
    next_seq: i64,
    rows: &[ExecutionValues<'_>],
) -> Result<Vec<String>, StoreError> {
    let mut stored: HashMap<ExecutionKey, String> = HashMap::new();
    let mut seq = next_seq;
    let mut values = Vec::new();
    for chunk in chunks(rows) {
        let mut sql = values_sql(engine, UPSERT_EXECUTIONS, EXECUTION_COLUMNS, chunk.len());
        sql.push_str(UPSERT_EXECUTIONS_TAIL);
        values.clear();
        for row in chunk {
            values.extend(row.params(run_id, seq));
            seq += 1;
        }
        let returned = tx
            .fetch_keys(&sql, &values)
            .await
            .map_err(|err| run_missing(err, run_id))?;
        for (id, case, target, repeat) in returned {
            let repeat = from_i64(repeat, || format!("execution {case}/{target} repeat_index"))?;
            stored.insert(ExecutionKey::new(case, target, repeat), id);
        }
    }
    rows.iter()
        .map(|row| {
            let e = row.execution;
            stored.remove(&row.key()).ok_or_else(|| {
                StoreError::Db(sqlx::Error::Protocol(format!(
                    "no id returned for execution {}/{}/{}",
                    e.case_id, e.target, e.repeat_index
                )))
            })
        })
        .collect()
}

/// One execution's child rows as column values, converted before any lock is taken.
struct Children<'a> {
    turns: Vec<TurnValues<'a>>,
    calls: Vec<ToolCallValues<'a>>,
    verdicts: Vec<VerdictValues<'a>>,
}

struct TurnValues<'a> {
    seq: i64,
    round: i64,
    input: &'a str,
    output: &'a str,
    response: Option<String>,
    latency_ms: i64,
    usage: Option<String>,
    failure: Option<String>,
    conversation: Option<String>,
}

struct ToolCallValues<'a> {
    turn_seq: i64,
    seq: i64,
    name: &'a str,
    arguments: String,
    result: Option<String>,
}

struct VerdictValues<'a> {
    seq: i64,
    round: Option<i64>,
    verdict: &'a Verdict,
    evidence: Option<String>,
}

impl<'a> Children<'a> {
    fn of(e: &'a Execution, what: &impl Fn(&str) -> String) -> Result<Self, StoreError> {
        let mut children = Children {
            turns: Vec::new(),
            calls: Vec::new(),
            verdicts: Vec::new(),
        };
        for (turn_seq, turn) in e.transcript.turns.iter().enumerate() {
            let at = |field: &str| what(&format!("turn #{turn_seq} {field}"));
            let turn_seq = to_i64(turn_seq, || at("seq"))?;
            children.turns.push(TurnValues {
                conversation: crate::rows::conversation_json(turn)
                    .map(|j| to_json(&j, || at("conversation")))
                    .transpose()?,
                seq: turn_seq,
                round: to_i64(turn.round, || at("round"))?,
                input: &turn.input,
                output: &turn.output,
                response: turn
                    .response
                    .as_ref()
                    .map(|r| to_json(r, || at("response")))
                    .transpose()?,
                latency_ms: to_i64(turn.latency_ms, || at("latency_ms"))?,
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
            });
            for (seq, call) in turn.tool_calls.iter().enumerate() {
                children.calls.push(ToolCallValues {
                    turn_seq,
                    seq: to_i64(seq, || at("tool call seq"))?,
                    name: &call.name,
                    arguments: to_json(&call.arguments, || at("tool call arguments"))?,
                    result: call
                        .result
                        .as_ref()
                        .map(|r| to_json(r, || at("tool call result")))
                        .transpose()?,
                });
            }
        }
        for (seq, verdict) in e.verdicts.iter().enumerate() {
            let at = |field: &str| what(&format!("verdict #{seq} {field}"));
            children.verdicts.push(VerdictValues {
                seq: to_i64(seq, || at("seq"))?,
                round: verdict
                    .round
                    .map(|r| to_i64(r, || at("round")))
                    .transpose()?,
                verdict,
                // No evidence is stored as SQL NULL.
                evidence: match &verdict.evidence {
                    evidence if evidence.is_empty() => None,
                    evidence => Some(to_json(evidence, || at("evidence"))?),
                },
            });
        }
        Ok(children)
    }
}

/// Inserts child rows, each with its execution's id: turns before the tool calls
/// that reference them.
async fn insert_children(
    engine: Engine,
    tx: &mut impl WriteTx,
    turns: &[(&str, &TurnValues<'_>)],
    calls: &[(&str, &ToolCallValues<'_>)],
    verdicts: &[(&str, &VerdictValues<'_>)],
) -> Result<(), StoreError> {
    insert_rows(engine, tx, INSERT_TURNS, "", turns, |(id, t)| {
        [
            (*id).into(),
            t.seq.into(),
            t.round.into(),
            t.input.into(),
            t.output.into(),
            t.response.as_deref().into(),
            t.latency_ms.into(),
            t.usage.as_deref().into(),
            t.failure.as_deref().into(),
            t.conversation.as_deref().into(),
        ]
    })
    .await?;
    insert_rows(engine, tx, INSERT_TOOL_CALLS, "", calls, |(id, c)| {
        [
            (*id).into(),
            c.turn_seq.into(),
            c.seq.into(),
            c.name.into(),
            c.arguments.as_str().into(),
            c.result.as_deref().into(),
        ]
    })
    .await?;
    insert_rows(engine, tx, INSERT_VERDICTS, "", verdicts, |(id, v)| {
        let verdict = v.verdict;
        [
            (*id).into(),
            v.seq.into(),
            v.round.into(),
            verdict.check.as_str().into(),
            verdict.kind.as_str().into(),
            verdict.status.as_str().into(),
            verdict.score.into(),
            verdict.threshold.into(),
            verdict.reason.as_str().into(),
            v.evidence.as_deref().into(),
            verdict.cost_usd.into(),
        ]
    })
    .await
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunks_are_powers_of_two_largest_first() {
        let rows: Vec<usize> = (0..141).collect();
        let sizes: Vec<usize> = super::chunks(&rows).map(<[usize]>::len).collect();
        assert_eq!(sizes, [64, 64, 8, 4, 1]);
        assert_eq!(super::chunks(&rows).flatten().count(), 141);
        assert_eq!(super::chunks::<u8>(&[]).count(), 0);
    }

    #[test]
    fn values_sql_numbers_every_placeholder() {
        assert_eq!(
            super::values_sql(crate::Engine::Postgres, "INSERT INTO t (a, b)", 2, 2),
            "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)"
        );
        assert_eq!(
            super::values_sql(crate::Engine::Sqlite, "INSERT INTO t (a, b)", 2, 2),
            "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"
        );
    }
}
