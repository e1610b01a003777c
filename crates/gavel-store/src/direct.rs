//! Reads and writes of a SQLite file without a thread hop: model-cache lookups,
//! whole runs' executions, and recording executions.
//!
//! sqlx runs each SQLite statement on its connection's own thread: two thread
//! wake-ups per statement, which at model-call rates cost more CPU than the
//! statement itself, and about one per row of a long result. A lookup by primary
//! key takes microseconds, and a batch of executions well under a millisecond,
//! so running them on the caller's thread is cheaper; with WAL a reader never
//! waits for the writer.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use futures::FutureExt;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};

use crate::StoreError;

/// Prepared statements kept: every shape of the multi-row writes (a power of two
/// rows each) with room to spare.
const STATEMENT_CACHE: usize = 64;

/// A connection to a SQLite file, used on the caller's thread. It never waits
/// for a lock: a busy database is an error, and the caller goes through the pool
/// instead. Once [closed](DirectConnection::close), every use fails the same way.
pub(crate) struct DirectConnection(Mutex<Option<Connection>>);

impl DirectConnection {
    /// Opens the existing file at `path` with the pool's settings (foreign keys,
    /// `synchronous = NORMAL`, memory temp store); `None` when it cannot be opened
    /// (the pool serves).
    pub(crate) fn open(path: &Path) -> Option<DirectConnection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).ok()?;
        // rusqlite waits 5 s on a busy database by default: that would block the
        // caller's thread, where a fallback costs nothing.
        conn.busy_timeout(Duration::ZERO).ok()?;
        conn.execute_batch(
            "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;",
        )
        .ok()?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Some(DirectConnection(Mutex::new(Some(conn))))
    }

    /// Runs `write` in a transaction that takes the write lock at once, on the
    /// caller's thread, and commits it; whether it committed. On any error (the
    /// lock is taken, a statement fails) nothing is kept. `write` must complete
    /// without waiting: it has only the connection to wait on, which never does.
    pub(crate) fn write(
        &self,
        write: impl AsyncFnOnce(&mut rusqlite::Transaction<'_>) -> Result<(), StoreError>,
    ) -> bool {
        let mut conn = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(Ok(mut tx)) = conn
            .as_mut()
            .map(|c| c.transaction_with_behavior(TransactionBehavior::Immediate))
        else {
            return false;
        };
        // Dropping the transaction rolls it back.
        matches!(write(&mut tx).now_or_never(), Some(Ok(()))) && tx.commit().is_ok()
    }

    /// Runs `read` on the connection, on the caller's thread; `None` once closed.
    pub(crate) fn read<T>(&self, read: impl FnOnce(&Connection) -> T) -> Option<T> {
        let conn = self.0.lock().unwrap_or_else(|p| p.into_inner());
        conn.as_ref().map(read)
    }

    /// Closes the connection (SQLite checkpoints the WAL and removes it with the
    /// last connection to the file).
    pub(crate) fn close(&self) {
        let conn = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(conn) = conn {
            let _ = conn.close();
        }
    }

    /// The model cache's answer under `key`, if any; an error once closed.
    pub(crate) fn cached_answer(&self, key: &str) -> rusqlite::Result<Option<String>> {
        self.read(|conn| {
            conn.prepare_cached("SELECT response_json FROM model_cache WHERE key = ?1")?
                .query_row([key], |row| row.get(0))
                .optional()
        })
        .unwrap_or(Err(rusqlite::Error::InvalidQuery))
    }
}

/// Every row of `sql` with `params`, each read with `read`, through the
/// statement cache; `None` when any step fails (the pool then reads).
pub(crate) fn all<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Option<Vec<T>> {
    let mut statement = conn.prepare_cached(sql).ok()?;
    let rows = statement.query_map(params, read).ok()?;
    rows.collect::<rusqlite::Result<Vec<T>>>().ok()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use gavel_core::{Status, Verdict};

    use super::DirectConnection;
    use crate::{Store, fixtures};

    #[tokio::test]
    async fn a_closed_store_leaves_no_wal_or_shm() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("closed.db");
        let store = Store::open(&format!("sqlite://{}", path.display())).await?;
        let run = fixtures::run("closed");
        store.create_run(&run).await?;
        store
            .record_executions(&run.id, &[fixtures::execution("a")])
            .await?;
        store.cache_put("k", "m", "answer").await?;
        let side = |suffix: &str| dir.path().join(format!("closed.db{suffix}"));
        assert!(side("-wal").exists(), "an open store writes ahead");
        store.close().await;
        for suffix in ["-wal", "-shm"] {
            assert!(!side(suffix).exists(), "closed.db{suffix} is left");
        }
        let again = Store::open(&format!("sqlite://{}", path.display())).await?;
        assert_eq!(
            again.executions(&run.id).await?.len(),
            1,
            "the WAL was checkpointed"
        );
        Ok(())
    }

    #[tokio::test]
    async fn reads_what_the_pool_committed() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("direct.db");
        let store = Store::open(&format!("sqlite://{}", path.display())).await?;
        let reader = DirectConnection::open(&path).ok_or("the direct connection did not open")?;
        let key = "k".repeat(64);
        assert_eq!(reader.cached_answer(&key)?, None);
        store.cache_put(&key, "m", "answer").await?;
        assert_eq!(reader.cached_answer(&key)?.as_deref(), Some("answer"));
        assert!(store.direct.is_some(), "a SQLite file store reads directly");
        Ok(())
    }

    /// Records a batch in `run_id`, then a batch that replaces one execution and
    /// adds another, with a model-cache entry staged before each.
    async fn record_story(store: &Store, run_id: &str) -> Result<(), crate::StoreError> {
        store.cache_stage("k1", "m", "first");
        let batch = [fixtures::execution("a"), fixtures::execution("b")];
        store.record_executions(run_id, &batch).await?;
        let mut replaced = fixtures::execution("a");
        replaced.status = Status::Fail;
        replaced.verdicts = vec![Verdict::new(
            "judge",
            gavel_core::CheckKind::Judge,
            Status::Fail,
            "off topic",
        )];
        replaced.transcript.turns[0].tool_calls.clear();
        store.cache_stage("k2", "m", "second");
        store
            .record_executions(run_id, &[replaced, fixtures::execution("c")])
            .await
    }

    #[tokio::test]
    async fn the_direct_write_stores_what_the_pool_stores() -> Result<(), Box<dyn std::error::Error>>
    {
        let dir = tempfile::tempdir()?;
        let direct =
            Store::open(&format!("sqlite://{}", dir.path().join("d.db").display())).await?;
        let mut pooled =
            Store::open(&format!("sqlite://{}", dir.path().join("p.db").display())).await?;
        pooled.direct = None;
        let run = fixtures::run("direct");
        direct.create_run(&run).await?;
        pooled.create_run(&run).await?;
        // The pool's one connection is taken: only the direct path can write.
        let held = direct.pool.acquire().await?;
        tokio::time::timeout(Duration::from_secs(10), record_story(&direct, &run.id)).await??;
        drop(held);
        record_story(&pooled, &run.id).await?;

        let run_id = run.id;
        let mut through_pool = direct.clone();
        through_pool.direct = None;
        let written = through_pool.executions(&run_id).await?;
        assert_eq!(written, pooled.executions(&run_id).await?);
        let cases: Vec<(&str, Status, usize)> = written
            .iter()
            .map(|e| (e.case_id.as_str(), e.status, e.verdicts.len()))
            .collect();
        assert_eq!(
            cases,
            [
                ("a", Status::Fail, 1),
                ("b", Status::Pass, 1),
                ("c", Status::Pass, 1)
            ]
        );
        assert!(written[0].transcript.turns[0].tool_calls.is_empty());
        for key in ["k1", "k2"] {
            let reader = direct.direct.as_ref().ok_or("no direct connection")?;
            assert!(reader.cached_answer(key)?.is_some(), "{key} committed");
        }
        assert!(
            direct.cache_batch().is_empty(),
            "committed entries leave the queue"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_locked_database_is_written_through_the_pool()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("locked.db");
        let store = Store::open(&format!("sqlite://{}", path.display())).await?;
        let run = fixtures::run("locked");
        store.create_run(&run).await?;
        let other = rusqlite::Connection::open(&path)?;
        other.execute_batch("BEGIN IMMEDIATE")?;
        let writing = tokio::spawn({
            let store = store.clone();
            let run_id = run.id.clone();
            async move {
                store
                    .record_executions(&run_id, &[fixtures::execution("a")])
                    .await
            }
        });
        // The direct write fails at once; the pool waits on its busy timeout.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            !writing.is_finished(),
            "no write while another holds the lock"
        );
        other.execute_batch("COMMIT")?;
        writing.await??;
        let written = store.executions(&run.id).await?;
        assert_eq!(written, [fixtures::execution("a")]);
        Ok(())
    }
}
