//! Reads of a SQLite file without a thread hop: model-cache lookups and whole
//! runs' executions.
//!
//! sqlx runs each SQLite statement on its connection's own thread: two thread
//! wake-ups per statement, which at model-call rates cost more CPU than the
//! lookup itself, and about one per row of a long result. A lookup by primary
//! key takes microseconds, so reading on the caller's thread is cheaper, and
//! with WAL a reader never waits for the writer.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

/// A read-only connection to a SQLite file, used on the caller's thread. It sees
/// what has been committed; it never waits for a lock (a busy database is an
/// error, and the caller reads through the pool instead).
pub(crate) struct DirectReader(Mutex<Connection>);

impl DirectReader {
    /// Opens `path` read-only; `None` when it cannot be opened (the pool serves).
    pub(crate) fn open(path: &Path) -> Option<DirectReader> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).ok()?;
        // rusqlite waits 5 s on a busy database by default: that would block the
        // caller's thread, where a fallback costs nothing.
        conn.busy_timeout(Duration::ZERO).ok()?;
        Some(DirectReader(Mutex::new(conn)))
    }

    /// Runs `read` on the connection, on the caller's thread.
    pub(crate) fn read<T>(&self, read: impl FnOnce(&Connection) -> T) -> T {
        let conn = self.0.lock().unwrap_or_else(|p| p.into_inner());
        read(&conn)
    }

    /// The model cache's answer under `key`, if any.
    pub(crate) fn cached_answer(&self, key: &str) -> rusqlite::Result<Option<String>> {
        self.read(|conn| {
            conn.prepare_cached("SELECT response_json FROM model_cache WHERE key = ?1")?
                .query_row([key], |row| row.get(0))
                .optional()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::DirectReader;
    use crate::Store;

    #[tokio::test]
    async fn reads_what_the_pool_committed() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("direct.db");
        let store = Store::open(&format!("sqlite://{}", path.display())).await?;
        let reader = DirectReader::open(&path).ok_or("the direct reader did not open")?;
        let key = "k".repeat(64);
        assert_eq!(reader.cached_answer(&key)?, None);
        store.cache_put(&key, "m", "answer").await?;
        assert_eq!(reader.cached_answer(&key)?.as_deref(), Some("answer"));
        assert!(store.direct.is_some(), "a SQLite file store reads directly");
        Ok(())
    }
}
