//! A run's case snapshot a page at a time, in saved order: a report of a large
//! run folds its cases without holding them all.

use gavel_core::Case;
use sqlx::AssertSqlSafe;

use crate::rows::CaseRow;
use crate::{Store, StoreError};

/// Keeps only the first case of each id (the one [`Store::executions`] orders
/// by) in a statement over `run_cases r`.
pub(crate) const FIRST_OF_ID: &str = " AND NOT EXISTS (SELECT 1 FROM run_cases d \
     WHERE d.run_id = r.run_id AND d.case_id = r.case_id AND d.seq < r.seq)";

/// A run's saved cases, read [`CasePages::next_page`] by page (keyset on their
/// position). Nothing is held between pages but the position reached.
pub struct CasePages {
    store: Store,
    run_id: String,
    size: usize,
    /// Only the first case of each id.
    first_of_id: bool,
    cursor: Cursor,
}

/// Where a walk through a run's snapshot is: after the case at `seq`, if any,
/// and before the case at `before`, when bounded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cursor {
    after: i64,
    /// Cases at this position and later are not read yet (a run still being
    /// recorded: [`CasePages::before`]).
    pub(crate) before: Option<i64>,
    done: bool,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor {
            after: -1,
            before: None,
            done: false,
        }
    }
}

impl Cursor {
    /// The next page of `columns` (among them `seq`) from `run_cases r`, at most
    /// `size` rows, `first_of_id` keeping only the first case of each id; `None`
    /// once the snapshot was read (when bounded, once it was read up to the bound). `seq` returns a row's position. A SQLite
    /// file is read on the caller's thread (`direct` reads a row by position).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn next<T>(
        &mut self,
        store: &Store,
        run_id: &str,
        columns: &str,
        size: usize,
        first_of_id: bool,
        seq: impl Fn(&T) -> i64,
        direct: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<Vec<T>>, StoreError>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
    {
        if self.done {
            return Ok(None);
        }
        let filter = if first_of_id { FIRST_OF_ID } else { "" };
        let sql = format!(
            "SELECT {columns} FROM run_cases r WHERE r.run_id = $1 AND r.seq > $2 \
             AND r.seq < $3{filter} ORDER BY r.seq LIMIT $4"
        );
        let size = size.max(1);
        let limit = i64::try_from(size).unwrap_or(i64::MAX);
        let before = self.before.unwrap_or(i64::MAX);
        let read = store.direct.as_ref().and_then(|d| {
            d.read(|conn| {
                crate::direct::all(conn, &sql, (run_id, self.after, before, limit), direct)
            })
            .flatten()
        });
        let rows: Vec<T> = match read {
            Some(rows) => rows,
            None => {
                sqlx::query_as(AssertSqlSafe(sql))
                    .bind(run_id)
                    .bind(self.after)
                    .bind(before)
                    .bind(limit)
                    .fetch_all(&store.pool)
                    .await?
            }
        };
        self.done = rows.len() < size && self.before.is_none();
        match rows.last() {
            Some(last) => self.after = seq(last),
            None => return Ok(None),
        }
        Ok(Some(rows))
    }
}

impl Store {
    /// The cases `run_id` saved, `size` (at least 1) at a time, in the order of
    /// [`Store::cases`].
    pub fn case_pages(&self, run_id: &str, size: usize) -> CasePages {
        CasePages {
            store: self.clone(),
            run_id: run_id.to_owned(),
            size,
            first_of_id: false,
            cursor: Cursor::default(),
        }
    }
}

impl CasePages {
    /// Only the first case of each id: a later case with the id of an earlier
    /// one is left out.
    pub fn first_of_id(mut self) -> Self {
        self.first_of_id = true;
        self
    }

    /// Reads only the cases before position `cases` (in saved order) until
    /// raised, `None`: every case. A run still being recorded is read as far
    /// as its cases are whole.
    pub fn before(&mut self, cases: Option<usize>) {
        self.cursor.before = cases.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// The next page, in order; `None` once every case was read (up to the
    /// bound, when [`CasePages::before`] set one).
    pub async fn next_page(&mut self) -> Result<Option<Vec<Case>>, StoreError> {
        let rows = self
            .cursor
            .next(
                &self.store,
                &self.run_id,
                "r.seq, r.source, r.case_json",
                self.size,
                self.first_of_id,
                CaseRow::seq,
                CaseRow::from_sqlite,
            )
            .await?;
        rows.map(|rows| {
            rows.into_iter()
                .map(|row| row.into_case(&self.run_id))
                .collect()
        })
        .transpose()
    }
}
