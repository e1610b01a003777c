//! Reading: runs (by id, short id, or recency), case snapshots, executions in full.

use std::collections::HashMap;

use futures::TryStreamExt;
use gavel_core::{Case, Execution, ExecutionKey, RunRecord, Status, ToolCall, Turn, Verdict};
use sqlx::{Any, Transaction};

use crate::direct::all;
use crate::rows::{
    CaseRow, ExecutionRow, RunRow, ToolCallRow, TurnRow, VerdictRow, from_i64, run_columns,
};
use crate::{Engine, Store, StoreError};

/// The fewest characters of a run id looked up as a prefix: shorter ones
/// would match too much.
pub const MIN_RUN_PREFIX: usize = 6;

const SELECT_RUN: &str = concat!("SELECT ", run_columns!(), " FROM runs WHERE id = $1");

/// The columns of [`ExecutionRow`], `FROM executions`.
macro_rules! execution_head {
    () => {
        "SELECT id, seq, case_id, case_name, target, repeat_index, \
             tags_json, status, score, reason, started_at, duration_ms, session_id \
         FROM executions"
    };
}

/// The columns of [`TurnRow`], `FROM turns t`.
macro_rules! turn_head {
    () => {
        "SELECT t.execution_id, t.seq, t.round, t.input, t.output, \
             t.response_json, t.latency_ms, t.usage_json, t.failure_json, t.conversation_json \
         FROM turns t"
    };
}

/// The columns of [`ToolCallRow`], `FROM tool_calls c`.
macro_rules! tool_call_head {
    () => {
        "SELECT c.execution_id, c.turn_seq, c.seq, c.name, c.arguments_json, c.result_json \
         FROM tool_calls c"
    };
}

/// The columns of [`VerdictRow`], `FROM verdicts v`.
macro_rules! verdict_head {
    () => {
        "SELECT v.execution_id, v.seq, v.round, v.check_name, v.kind, \
             v.status, v.score, v.threshold, v.reason, v.evidence_json, v.cost_usd \
         FROM verdicts v"
    };
}

pub(crate) use {execution_head, tool_call_head, turn_head, verdict_head};

const SELECT_EXECUTIONS: &str = concat!(execution_head!(), " WHERE run_id = $1");

const SELECT_TURNS: &str = concat!(
    turn_head!(),
    " JOIN executions e ON e.id = t.execution_id WHERE e.run_id = $1 ORDER BY t.seq"
);

const SELECT_TOOL_CALLS: &str = concat!(
    tool_call_head!(),
    " JOIN executions e ON e.id = c.execution_id \
     WHERE e.run_id = $1 ORDER BY c.turn_seq, c.seq"
);

const SELECT_VERDICTS: &str = concat!(
    verdict_head!(),
    " JOIN executions e ON e.id = v.execution_id WHERE e.run_id = $1 ORDER BY v.seq"
);

const SELECT_CASE_ORDER: &str =
    "SELECT case_id, MIN(seq) AS first_seq FROM run_cases WHERE run_id = $1 GROUP BY case_id";

impl Store {
    /// The run with this id, or with this unique id prefix of at least
    /// [`MIN_RUN_PREFIX`] characters (what people type). An ambiguous prefix
    /// is [`StoreError::Ambiguous`].
    pub async fn run(&self, run_id: &str) -> Result<RunRecord, StoreError> {
        let exact: Option<RunRow> = sqlx::query_as(SELECT_RUN)
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await?;
        if let Some(row) = exact {
            return row.into_record();
        }
        let not_found = || StoreError::NotFound(format!("run `{run_id}`"));
        if run_id.chars().count() < MIN_RUN_PREFIX {
            return Err(not_found());
        }
        // substr, not LIKE: no wildcard escaping, and case-sensitive on both engines.
        let ids: Vec<String> =
            sqlx::query_scalar("SELECT id FROM runs WHERE substr(id, 1, length($1)) = $1")
                .bind(run_id)
                .fetch_all(&self.pool)
                .await?;
        match ids.as_slice() {
            [] => Err(not_found()),
            [id] => {
                let row: Option<RunRow> = sqlx::query_as(SELECT_RUN)
                    .bind(id.as_str())
                    .fetch_optional(&self.pool)
                    .await?;
                row.ok_or_else(not_found)?.into_record()
            }
            many => Err(StoreError::Ambiguous {
                prefix: run_id.to_owned(),
                candidates: many.len(),
            }),
        }
    }

    /// The run a person means: `latest`, `previous` (the run before the latest),
    /// an id, or a unique prefix of one.
    pub async fn find_run(&self, reference: &str) -> Result<RunRecord, StoreError> {
        match reference {
            "latest" | "previous" => {
                let skip = usize::from(reference == "previous");
                self.runs(2).await?.into_iter().nth(skip).ok_or_else(|| {
                    StoreError::NotFound(format!(
                        "run `{reference}`: the store holds {skip} run{}",
                        gavel_core::plural(skip)
                    ))
                })
            }
            id => self.run(id).await,
        }
    }

    /// The run of `run`'s suite started last before it, if any: the baseline
    /// `gavel compare previous RUN` means, so that suites sharing a store are
    /// each compared with their own.
    pub async fn previous_of(&self, run: &RunRecord) -> Result<Option<RunRecord>, StoreError> {
        let row: Option<RunRow> = sqlx::query_as(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE suite = $1 AND id <> $2 AND (started_at < $3 OR (started_at = $3 AND id < $2)) \
             ORDER BY started_at DESC, id DESC LIMIT 1"
        ))
        .bind(run.suite.as_str())
        .bind(run.id.as_str())
        .bind(run.started_at.as_str())
        .fetch_optional(&self.pool)
        .await?;
        row.map(RunRow::into_record).transpose()
    }

    /// The most recently started run, if any.
    pub async fn latest_run(&self) -> Result<Option<RunRecord>, StoreError> {
        Ok(self.runs(1).await?.pop())
    }

    /// Up to `limit` runs, most recently started first.
    pub async fn runs(&self, limit: u32) -> Result<Vec<RunRecord>, StoreError> {
        let rows: Vec<RunRow> = sqlx::query_as(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs ORDER BY started_at DESC, id DESC LIMIT $1"
        ))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(RunRow::into_record).collect()
    }

    /// The cases a run used, in saved order, `source` restored. Empty when none were
    /// saved (or the run does not exist).
    pub async fn cases(&self, run_id: &str) -> Result<Vec<Case>, StoreError> {
        let rows: Vec<CaseRow> = sqlx::query_as(
            "SELECT seq, source, case_json FROM run_cases WHERE run_id = $1 ORDER BY seq",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(|row| row.into_case(run_id)).collect()
    }

    /// The first case the run saved with id `case_id`, `source` restored.
    pub async fn saved_case(&self, run_id: &str, case_id: &str) -> Result<Case, StoreError> {
        let row: Option<CaseRow> = sqlx::query_as(
            "SELECT seq, source, case_json FROM run_cases WHERE run_id = $1 AND case_id = $2 \
             ORDER BY seq LIMIT 1",
        )
        .bind(run_id)
        .bind(case_id)
        .fetch_optional(&self.pool)
        .await?;
        row.ok_or_else(|| StoreError::NotFound(format!("case `{case_id}` of run {run_id}")))?
            .into_case(run_id)
    }

    /// The keys and statuses of the executions already recorded for a run, in
    /// recording order: what `--resume` decides on.
    pub async fn recorded_keys(
        &self,
        run_id: &str,
    ) -> Result<Vec<(ExecutionKey, Status)>, StoreError> {
        let rows: Vec<(String, String, i64, String)> = sqlx::query_as(
            "SELECT case_id, target, repeat_index, status FROM executions WHERE run_id = $1 ORDER BY seq",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|(case_id, target, repeat, status)| {
                let what = || format!("execution {case_id}/{target}");
                let repeat = from_i64(repeat, || format!("{} repeat_index", what()))?;
                let status = status
                    .parse::<Status>()
                    .map_err(|e| StoreError::corrupt(what(), e))?;
                Ok((ExecutionKey::new(case_id, target, repeat), status))
            })
            .collect()
    }

    /// Every execution of a run in full (transcript turns with their tool calls,
    /// verdicts), ordered by the case's position in the saved cases, then target,
    /// then repeat index. Cases missing from the snapshot come last, in recording
    /// order. Read from one consistent snapshot, even while the run is writing.
    pub async fn executions(&self, run_id: &str) -> Result<Vec<Execution>, StoreError> {
        // A SQLite file is read on the caller's thread: through the pool, every
        // row would cross to sqlx's worker thread and back, waking one of them
        // per row. Should that read fail, the pool's answer (or error) stands.
        if let Some(direct) = &self.direct
            && let Some(executions) = direct
                .read(|conn| executions_direct(conn, run_id))
                .flatten()
        {
            return Ok(executions);
        }
        let mut tx = self.begin_read().await?;
        let rows: Vec<ExecutionRow> = sqlx::query_as(SELECT_EXECUTIONS)
            .bind(run_id)
            .fetch_all(&mut *tx)
            .await?;
        let mut assembly = Assembly::default();
        let calls: Vec<ToolCallRow> = sqlx::query_as(SELECT_TOOL_CALLS)
            .bind(run_id)
            .fetch_all(&mut *tx)
            .await?;
        for row in calls {
            assembly.call(row)?;
        }
        {
            let mut turns = sqlx::query_as::<_, TurnRow>(SELECT_TURNS)
                .bind(run_id)
                .fetch(&mut *tx);
            while let Some(row) = turns.try_next().await? {
                assembly.turn(row)?;
            }
        }
        {
            let mut verdicts = sqlx::query_as::<_, VerdictRow>(SELECT_VERDICTS)
                .bind(run_id)
                .fetch(&mut *tx);
            while let Some(row) = verdicts.try_next().await? {
                assembly.verdict(row)?;
            }
        }
        let case_seq: HashMap<String, i64> = sqlx::query_as(SELECT_CASE_ORDER)
            .bind(run_id)
            .fetch_all(&mut *tx)
            .await?
            .into_iter()
            .collect();
        tx.commit().await?;
        assembly.finish(rows, &case_seq)
    }

    /// Begins a read-only transaction that sees one snapshot. SQLite (WAL) gives a
    /// deferred transaction a snapshot at its first read; PostgreSQL needs
    /// `REPEATABLE READ` for more than one statement to share a snapshot.
    async fn begin_read(&self) -> Result<Transaction<'static, Any>, sqlx::Error> {
        match self.engine {
            Engine::Sqlite => self.pool.begin().await,
            Engine::Postgres => {
                self.pool
                    .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    .await
            }
        }
    }
}

/// A run's executions put together from their rows. Turns and verdicts are
/// converted as their rows arrive, so a large run never holds its raw rows and
/// their parsed form at once; tool calls must all arrive before the turns.
#[derive(Default)]
pub(crate) struct Assembly {
    calls_by_turn: HashMap<(String, i64), Vec<ToolCall>>,
    turns: HashMap<String, Vec<Turn>>,
    verdicts: HashMap<String, Vec<Verdict>>,
}

impl Assembly {
    pub(crate) fn call(&mut self, row: ToolCallRow) -> Result<(), StoreError> {
        let key = (row.execution_id.clone(), row.turn_seq);
        let call = row.into_tool_call()?;
        self.calls_by_turn.entry(key).or_default().push(call);
        Ok(())
    }

    pub(crate) fn turn(&mut self, row: TurnRow) -> Result<(), StoreError> {
        let calls = self
            .calls_by_turn
            .remove(&(row.execution_id.clone(), row.seq))
            .unwrap_or_default();
        let execution = row.execution_id.clone();
        let turn = row.into_turn(calls)?;
        self.turns.entry(execution).or_default().push(turn);
        Ok(())
    }

    pub(crate) fn verdict(&mut self, row: VerdictRow) -> Result<(), StoreError> {
        let execution = row.execution_id.clone();
        let verdict = row.into_verdict()?;
        self.verdicts.entry(execution).or_default().push(verdict);
        Ok(())
    }

    fn finish(
        self,
        rows: Vec<ExecutionRow>,
        case_seq: &HashMap<String, i64>,
    ) -> Result<Vec<Execution>, StoreError> {
        self.assemble(in_case_order(rows, case_seq))
    }

    /// The executions of `rows`, in their order, with their turns and verdicts.
    pub(crate) fn assemble(
        mut self,
        rows: Vec<ExecutionRow>,
    ) -> Result<Vec<Execution>, StoreError> {
        rows.into_iter()
            .map(|row| {
                let turns = self.turns.remove(&row.id).unwrap_or_default();
                let verdicts = self.verdicts.remove(&row.id).unwrap_or_default();
                row.into_execution(turns, verdicts)
            })
            .collect()
    }
}

/// [`Store::executions`] through the direct connection, in one read transaction;
/// `None` when any step fails (the pool then reads, and reports what is wrong).
fn executions_direct(conn: &rusqlite::Connection, run_id: &str) -> Option<Vec<Execution>> {
    let tx = conn.unchecked_transaction().ok()?;
    let rows = all(&tx, SELECT_EXECUTIONS, [run_id], ExecutionRow::from_sqlite)?;
    let mut assembly = Assembly::default();
    for row in all(&tx, SELECT_TOOL_CALLS, [run_id], ToolCallRow::from_sqlite)? {
        assembly.call(row).ok()?;
    }
    let mut turns = tx.prepare(SELECT_TURNS).ok()?;
    for row in turns.query_map([run_id], TurnRow::from_sqlite).ok()? {
        assembly.turn(row.ok()?).ok()?;
    }
    let mut verdicts = tx.prepare(SELECT_VERDICTS).ok()?;
    for row in verdicts.query_map([run_id], VerdictRow::from_sqlite).ok()? {
        assembly.verdict(row.ok()?).ok()?;
    }
    let case_seq: HashMap<String, i64> = all(&tx, SELECT_CASE_ORDER, [run_id], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?
    .into_iter()
    .collect();
    drop((turns, verdicts));
    tx.commit().ok()?;
    assembly.finish(rows, &case_seq).ok()
}

/// What the report order of executions is decided on.
pub(crate) trait Ordered {
    /// (case id, target, repeat index, recording sequence).
    fn order_key(&self) -> (&str, &str, i64, i64);
}

impl Ordered for ExecutionRow {
    fn order_key(&self) -> (&str, &str, i64, i64) {
        (&self.case_id, &self.target, self.repeat_index, self.seq)
    }
}

/// Sorts executions by (case position in the snapshot, case id, target, repeat
/// index, recording order): the executions of one (case, target) are adjacent.
/// Text is compared here, not in SQL, so both engines agree
/// whatever the database collation.
pub(crate) fn in_case_order<T: Ordered>(
    mut rows: Vec<T>,
    case_seq: &HashMap<String, i64>,
) -> Vec<T> {
    rows.sort_by_key(|row| row.order_key().3);
    let mut first_recorded: HashMap<String, i64> = HashMap::new();
    for row in &rows {
        let (case_id, _, _, seq) = row.order_key();
        if !first_recorded.contains_key(case_id) {
            first_recorded.insert(case_id.to_owned(), seq);
        }
    }
    let case_rank = |case_id: &str, seq: i64| match case_seq.get(case_id) {
        Some(first) => (0, *first),
        None => (1, first_recorded.get(case_id).copied().unwrap_or(seq)),
    };
    rows.sort_by(|a, b| {
        let (a, b) = (a.order_key(), b.order_key());
        case_rank(a.0, a.3)
            .cmp(&case_rank(b.0, b.3))
            .then_with(|| a.0.cmp(b.0))
            .then_with(|| a.1.cmp(b.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    rows
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[tokio::test]
    async fn direct_statements_select_the_row_fields_in_order()
    -> Result<(), Box<dyn std::error::Error>> {
        use crate::rows::{ExecutionRow, ToolCallRow, TurnRow, VerdictRow};
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}", dir.path().join("order.db").display());
        let store = Store::open(&url).await?;
        let direct = store
            .direct
            .as_ref()
            .ok_or("a SQLite file has a direct connection")?;
        let statements = [
            (super::SELECT_EXECUTIONS, ExecutionRow::COLUMNS),
            (super::SELECT_TURNS, TurnRow::COLUMNS),
            (super::SELECT_TOOL_CALLS, ToolCallRow::COLUMNS),
            (super::SELECT_VERDICTS, VerdictRow::COLUMNS),
        ];
        for (sql, fields) in statements {
            let names = direct
                .read(|conn| {
                    let statement = conn.prepare(sql).ok()?;
                    Some(statement.column_names().join(", "))
                })
                .flatten()
                .ok_or("the statement prepares")?;
            assert_eq!(names, fields.join(", "), "{sql}");
        }
        Ok(())
    }

    #[tokio::test]
    async fn the_direct_read_gives_what_the_pool_reads() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}", dir.path().join("direct.db").display());
        let store = Store::open(&url).await?;
        let run = crate::fixtures::run("direct");
        store.create_run(&run).await?;
        let recorded = vec![
            crate::fixtures::execution("b"),
            crate::fixtures::execution("a"),
        ];
        store.record_executions(&run.id, &recorded).await?;

        let direct = store
            .direct
            .as_ref()
            .ok_or("a SQLite file has a direct connection")?;
        let read = direct
            .read(|conn| super::executions_direct(conn, &run.id))
            .flatten()
            .ok_or("the direct read failed")?;
        let mut pooled = store.clone();
        pooled.direct = None;
        assert_eq!(read, pooled.executions(&run.id).await?);
        assert_eq!(read, recorded, "in recording order: no saved cases");
        Ok(())
    }
}
