//! A run's executions a page at a time, in the order [`Store::executions`]
//! gives them: a report of a large run folds them without holding them all.

use std::collections::{HashMap, VecDeque};

use gavel_core::Execution;
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, FromRow, Row};

use crate::cases::{Cursor, FIRST_OF_ID};
use crate::read::{
    Assembly, Ordered, execution_head, in_case_order, tool_call_head, turn_head, verdict_head,
};
use crate::rows::{ExecutionRow, ToolCallRow, TurnRow, VerdictRow, from_i64};
use crate::{Store, StoreError};

/// Executions read per page by default: one statement per table, well under
/// both engines' limit on bound parameters.
pub const PAGE_SIZE: usize = 256;

/// What the executions of a page of the snapshot's cases (those with `seq`
/// from `$2` to `$3`; [`FIRST_OF_ID`] follows) are ordered by: the page's
/// cases, found by their key, joined to their executions through the
/// `UNIQUE (run_id, case_id, target, repeat_index)` index, on both engines
/// whatever their statistics. Not `e.case_id IN (…)` with a bound on `e.seq`:
/// planners then walk the `(run_id, seq)` index, the whole run for every page.
/// Executions recorded after the pages were opened are dropped as read.
const SELECT_CASE_KEYS: &str = "SELECT e.id, e.seq, e.case_id, e.target, e.repeat_index \
     FROM run_cases r JOIN executions e ON e.run_id = r.run_id AND e.case_id = r.case_id \
     WHERE r.run_id = $1 AND r.seq >= $2 AND r.seq <= $3";

/// What the executions whose case is not in the snapshot are ordered by: those
/// recorded by the time the pages were opened (`seq` up to `$2`). One walk of
/// the run, after the last page of cases.
const SELECT_UNSAVED_KEYS: &str = "SELECT e.id, e.seq, e.case_id, e.target, e.repeat_index \
     FROM executions e WHERE e.run_id = $1 AND e.seq <= $2 AND NOT EXISTS \
     (SELECT 1 FROM run_cases c WHERE c.run_id = e.run_id AND c.case_id = e.case_id)";

/// What a run's executions are ordered by.
struct KeyRow {
    id: String,
    seq: i64,
    case_id: String,
    target: String,
    repeat_index: i64,
}

impl FromRow<'_, AnyRow> for KeyRow {
    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(KeyRow {
            id: row.try_get("id")?,
            seq: row.try_get("seq")?,
            case_id: row.try_get("case_id")?,
            target: row.try_get("target")?,
            repeat_index: row.try_get("repeat_index")?,
        })
    }
}

impl KeyRow {
    /// A row of [`SELECT_CASE_KEYS`]'s columns from the direct SQLite connection.
    fn from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(KeyRow {
            id: row.get(0)?,
            seq: row.get(1)?,
            case_id: row.get(2)?,
            target: row.get(3)?,
            repeat_index: row.get(4)?,
        })
    }
}

impl Ordered for KeyRow {
    fn order_key(&self) -> (&str, &str, i64, i64) {
        (&self.case_id, &self.target, self.repeat_index, self.seq)
    }
}

/// A run's executions in report order, read [`ExecutionPages::next_page`] by
/// page. The snapshot's cases are walked a page at a time (the first case of
/// each id), their executions' keys read and ordered; only the ids of those not
/// read yet are held, and at the end those of the executions whose case is not
/// in the snapshot. Executions recorded after the pages were opened are not
/// read; each page is a few reads of the store.
pub struct ExecutionPages {
    store: Store,
    run_id: String,
    size: usize,
    /// The sequence of the last execution recorded when the pages were opened;
    /// `None` when there was none.
    through: Option<i64>,
    /// How far the snapshot's cases were walked.
    cases: Cursor,
    /// Whether the executions whose case is not in the snapshot were queued.
    unsaved: bool,
    /// Ids of executions queued, in order, not read yet.
    ids: VecDeque<String>,
    /// Executions not read yet.
    remaining: usize,
    /// The run is still being recorded: only cases before the cursor's bound
    /// are read ([`ExecutionPages::before`]).
    growing: bool,
    /// Executions given in pages so far.
    given: usize,
}

impl Store {
    /// The executions of `run_id`, `size` (at least 1) at a time, in the order
    /// of [`Store::executions`].
    pub async fn execution_pages(
        &self,
        run_id: &str,
        size: usize,
    ) -> Result<ExecutionPages, StoreError> {
        let (count, through) = recorded(self, run_id).await?;
        Ok(ExecutionPages {
            store: self.clone(),
            run_id: run_id.to_owned(),
            size: size.max(1),
            through,
            cases: Cursor::default(),
            unsaved: false,
            ids: VecDeque::new(),
            remaining: count,
            growing: false,
            given: 0,
        })
    }

    /// [`Store::execution_pages`] of a run still being recorded: the
    /// executions of its cases before position `cases` only (in saved order),
    /// each of which must have every execution recorded, until raised with
    /// [`ExecutionPages::before`]; once that is `None` (the run recorded),
    /// the rest as [`Store::execution_pages`] would read it.
    pub fn growing_execution_pages(
        &self,
        run_id: &str,
        size: usize,
        cases: usize,
    ) -> ExecutionPages {
        let mut pages = ExecutionPages {
            store: self.clone(),
            run_id: run_id.to_owned(),
            size: size.max(1),
            through: Some(i64::MAX),
            cases: Cursor::default(),
            unsaved: false,
            ids: VecDeque::new(),
            remaining: 0,
            growing: true,
            given: 0,
        };
        pages.cases.before = Some(to_position(cases));
        pages
    }
}

/// How many executions `run_id` recorded, and the sequence of the last.
async fn recorded(store: &Store, run_id: &str) -> Result<(usize, Option<i64>), StoreError> {
    let (count, through): (i64, Option<i64>) =
        sqlx::query_as("SELECT COUNT(*), MAX(seq) FROM executions WHERE run_id = $1")
            .bind(run_id)
            .fetch_one(&store.pool)
            .await?;
    Ok((
        from_i64(count, || format!("run {run_id} execution count"))?,
        through,
    ))
}

/// A case position as stored.
fn to_position(cases: usize) -> i64 {
    i64::try_from(cases).unwrap_or(i64::MAX)
}

impl ExecutionPages {
    /// Executions not read yet (of pages opened growing, known once they
    /// are read to the end).
    pub fn remaining(&self) -> usize {
        self.remaining
    }

    /// Pages opened growing ([`Store::growing_execution_pages`]) read the
    /// cases before position `cases` now; `None` once the run is recorded:
    /// every case, then the executions whose case is not in the snapshot, as
    /// far as recorded now.
    pub async fn before(&mut self, cases: Option<usize>) -> Result<(), StoreError> {
        if !self.growing {
            return Ok(());
        }
        if let Some(cases) = cases {
            self.cases.before = Some(to_position(cases));
            return Ok(());
        }
        let (count, through) = recorded(&self.store, &self.run_id).await?;
        self.growing = false;
        self.cases.before = None;
        self.through = through;
        self.remaining = count.saturating_sub(self.given);
        Ok(())
    }

    /// The next page, in order; `None` once every execution was read.
    pub async fn next_page(&mut self) -> Result<Option<Vec<Execution>>, StoreError> {
        while self.ids.len() < self.size && self.queue_more().await? {}
        let take = self.size.min(self.ids.len());
        let ids: Vec<String> = self.ids.drain(..take).collect();
        if ids.is_empty() {
            return Ok(None);
        }
        self.remaining = self.remaining.saturating_sub(ids.len());
        self.given += ids.len();
        read_page(&self.store, &ids).await.map(Some)
    }

    /// Queues, in order, the ids of the executions of the next page of the
    /// snapshot's cases or, after the last, of those whose case is not in the
    /// snapshot; `false` once every execution was queued.
    async fn queue_more(&mut self) -> Result<bool, StoreError> {
        let Some(through) = self.through else {
            return Ok(false);
        };
        let pool = &self.store.pool;
        let cases: Option<Vec<(i64, String)>> = self
            .cases
            .next(
                &self.store,
                &self.run_id,
                "r.seq, r.case_id",
                self.size,
                true,
                |row: &(i64, String)| row.0,
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .await?;
        let (keys, case_seq): (Vec<KeyRow>, HashMap<String, i64>) = match cases {
            Some(cases) => {
                // A page of cases is never empty.
                let (Some(&(first, _)), Some(&(last, _))) = (cases.first(), cases.last()) else {
                    return Ok(true);
                };
                let sql = format!("{SELECT_CASE_KEYS}{FIRST_OF_ID}");
                let run_id = self.run_id.as_str();
                let read = self.store.direct.as_ref().and_then(|d| {
                    d.read(|conn| {
                        crate::direct::all(conn, &sql, (run_id, first, last), KeyRow::from_sqlite)
                    })
                    .flatten()
                });
                let mut keys: Vec<KeyRow> = match read {
                    Some(keys) => keys,
                    None => {
                        sqlx::query_as(AssertSqlSafe(sql))
                            .bind(run_id)
                            .bind(first)
                            .bind(last)
                            .fetch_all(pool)
                            .await?
                    }
                };
                keys.retain(|key| key.seq <= through);
                (keys, cases.into_iter().map(|(seq, id)| (id, seq)).collect())
            }
            None if self.growing => return Ok(false),
            None if !self.unsaved => {
                self.unsaved = true;
                let keys = sqlx::query_as(SELECT_UNSAVED_KEYS)
                    .bind(self.run_id.as_str())
                    .bind(through)
                    .fetch_all(pool)
                    .await?;
                (keys, HashMap::new())
            }
            None => return Ok(false),
        };
        let ordered = in_case_order(keys, &case_seq);
        self.ids.extend(ordered.into_iter().map(|k| k.id));
        Ok(true)
    }
}

/// `$from, …` for `n` bound parameters.
pub(crate) fn placeholders(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The page's statements: `head` with `key IN ($1, …, $n)` for the page's ids.
fn page_sql(ids: &[String], head: &str, key: &str, order: &str) -> String {
    let list = placeholders(1, ids.len());
    format!("{head} WHERE {key} IN ({list}){order}")
}

/// The executions with these ids, in this order (an id no longer stored is left out).
pub(crate) async fn read_page(store: &Store, ids: &[String]) -> Result<Vec<Execution>, StoreError> {
    // `IN ()` is a syntax error on PostgreSQL.
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    // A SQLite file is read on the caller's thread, as `Store::executions` reads
    // it; should that read fail, the pool's answer (or error) stands.
    if let Some(direct) = &store.direct
        && let Some(page) = direct.read(|conn| read_page_direct(conn, ids)).flatten()
    {
        return Ok(page);
    }
    let sql = |head: &str, key: &str, order: &str| AssertSqlSafe(page_sql(ids, head, key, order));
    let mut tx = store.pool.begin().await?;
    let rows: Vec<ExecutionRow> = bind_all(sqlx::query_as(sql(execution_head!(), "id", "")), ids)
        .fetch_all(&mut *tx)
        .await?;
    let mut assembly = Assembly::default();
    let calls: Vec<ToolCallRow> = bind_all(
        sqlx::query_as(sql(
            tool_call_head!(),
            "c.execution_id",
            " ORDER BY c.turn_seq, c.seq",
        )),
        ids,
    )
    .fetch_all(&mut *tx)
    .await?;
    for row in calls {
        assembly.call(row)?;
    }
    let turns: Vec<TurnRow> = bind_all(
        sqlx::query_as(sql(turn_head!(), "t.execution_id", " ORDER BY t.seq")),
        ids,
    )
    .fetch_all(&mut *tx)
    .await?;
    for row in turns {
        assembly.turn(row)?;
    }
    let verdicts: Vec<VerdictRow> = bind_all(
        sqlx::query_as(sql(verdict_head!(), "v.execution_id", " ORDER BY v.seq")),
        ids,
    )
    .fetch_all(&mut *tx)
    .await?;
    for row in verdicts {
        assembly.verdict(row)?;
    }
    tx.commit().await?;
    in_page_order(assembly, rows, ids)
}

/// [`read_page`] on the direct SQLite connection; `None` when any read fails.
fn read_page_direct(conn: &rusqlite::Connection, ids: &[String]) -> Option<Vec<Execution>> {
    let tx = conn.unchecked_transaction().ok()?;
    let mut assembly = Assembly::default();
    let executions = {
        // A full page's statements are the same text each time: prepared once.
        let prepare = |head: &str, key: &str, order: &str| {
            tx.prepare_cached(&page_sql(ids, head, key, order)).ok()
        };
        let params = || rusqlite::params_from_iter(ids.iter());
        let mut statement = prepare(execution_head!(), "id", "")?;
        let executions = statement
            .query_map(params(), ExecutionRow::from_sqlite)
            .ok()?
            .collect::<rusqlite::Result<Vec<_>>>()
            .ok()?;
        let mut statement = prepare(
            tool_call_head!(),
            "c.execution_id",
            " ORDER BY c.turn_seq, c.seq",
        )?;
        for row in statement
            .query_map(params(), ToolCallRow::from_sqlite)
            .ok()?
        {
            assembly.call(row.ok()?).ok()?;
        }
        let mut statement = prepare(turn_head!(), "t.execution_id", " ORDER BY t.seq")?;
        for row in statement.query_map(params(), TurnRow::from_sqlite).ok()? {
            assembly.turn(row.ok()?).ok()?;
        }
        let mut statement = prepare(verdict_head!(), "v.execution_id", " ORDER BY v.seq")?;
        for row in statement
            .query_map(params(), VerdictRow::from_sqlite)
            .ok()?
        {
            assembly.verdict(row.ok()?).ok()?;
        }
        executions
    };
    tx.commit().ok()?;
    in_page_order(assembly, executions, ids).ok()
}

/// Assembles a page's executions in the order of `ids`.
fn in_page_order(
    assembly: Assembly,
    mut rows: Vec<ExecutionRow>,
    ids: &[String],
) -> Result<Vec<Execution>, StoreError> {
    let position: HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    rows.sort_by_key(|row| position.get(row.id.as_str()).copied());
    assembly.assemble(rows)
}

/// `query` with every id bound, in order.
fn bind_all<'q, T>(
    mut query: sqlx::query::QueryAs<'q, sqlx::Any, T, sqlx::any::AnyArguments>,
    ids: &'q [String],
) -> sqlx::query::QueryAs<'q, sqlx::Any, T, sqlx::any::AnyArguments> {
    for id in ids {
        query = query.bind(id.as_str());
    }
    query
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[tokio::test]
    async fn pages_give_what_one_read_gives() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}", dir.path().join("pages.db").display());
        let store = Store::open(&url).await?;
        let run = crate::fixtures::run("pages");
        store.create_run(&run).await?;
        // Out of report order: case b's second target and repeat come first.
        let mut recorded: Vec<_> = ["b", "e", "b", "a", "b", "c"]
            .into_iter()
            .map(crate::fixtures::execution)
            .collect();
        recorded[0].target = "zeta".to_owned();
        recorded[2].repeat_index = 1;
        store.record_executions(&run.id, &recorded).await?;
        let whole = store.executions(&run.id).await?;
        for size in [1, 2, 5, 100] {
            let mut pages = store.execution_pages(&run.id, size).await?;
            assert_eq!(pages.remaining(), whole.len());
            let mut read = Vec::new();
            while let Some(page) = pages.next_page().await? {
                assert!(page.len() <= size, "a page holds at most {size}");
                read.extend(page);
            }
            assert_eq!(read, whole, "pages of {size}");
        }
        // The pages above came from the direct SQLite connection: it reads
        // them, in report order, without falling back to the pool.
        let mut pages = store.execution_pages(&run.id, 100).await?;
        while pages.queue_more().await? {}
        let ids: Vec<String> = pages.ids.into_iter().collect();
        let direct = store
            .direct
            .as_ref()
            .ok_or("a SQLite file store reads directly")?;
        let read = direct
            .read(|conn| super::read_page_direct(conn, &ids))
            .flatten();
        assert_eq!(read.as_ref(), Some(&whole));
        Ok(())
    }
}
