//! Opening a store: the URL forms, pool settings per engine, and migrations.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyConnection, AnyPool, Connection, Executor};

use crate::direct::DirectConnection;
use crate::migrations::MIGRATOR;
use crate::{Store, StoreError};
use gavel_core::secrets::{mask_url, register_url};

/// Why a `postgres://` URL is refused by a build without the `postgres` feature.
const NO_POSTGRES: &str = "this build has no PostgreSQL support (gavel-eval's `postgres` feature; the `gavel` binary has it): use a SQLite store";

/// The database engine behind a [`Store`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// SQLite: a local file (or memory), the embedded default.
    Sqlite,
    /// PostgreSQL: the team store and scale-out coordinator.
    Postgres,
}

impl Engine {
    /// The engine's name as shown to people: `sqlite` or `postgres`.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a store URL points, resolved.
#[derive(Debug, PartialEq)]
enum Location {
    /// A PostgreSQL URL, passed to the driver as given.
    Postgres(String),
    /// A SQLite database in memory: lives as long as the store's one connection.
    SqliteMemory(String),
    /// A SQLite file; `create` when the URL's mode allows creating it.
    SqliteFile {
        path: PathBuf,
        connect_url: String,
        create: bool,
    },
}

impl Location {
    /// Resolves `sqlite://PATH`, `sqlite:PATH`, `sqlite::memory:`, `postgres://…`,
    /// `postgresql://…`, or a plain path (a SQLite file).
    fn parse(url: &str) -> Result<Location, String> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            if cfg!(not(feature = "postgres")) {
                return Err(NO_POSTGRES.to_owned());
            }
            return Ok(Location::Postgres(url.to_owned()));
        }
        let rest = match url.strip_prefix("sqlite:") {
            Some(rest) => rest.strip_prefix("//").unwrap_or(rest),
            None => match url.split_once("://") {
                Some((scheme, _)) => {
                    return Err(format!(
                        "unsupported database URL scheme `{scheme}`: \
                         use sqlite://PATH or postgres://..."
                    ));
                }
                None => url,
            },
        };
        let (path, query) = match rest.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (rest, None),
        };
        let mode = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .find_map(|pair| pair.strip_prefix("mode="));
        if path == ":memory:" || mode == Some("memory") {
            return Ok(Location::SqliteMemory(url.to_owned()));
        }
        if path.is_empty() {
            return Err("the SQLite URL names no file".to_owned());
        }
        let path = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
        let query = match (query, mode) {
            (Some(query), Some(_)) => query.to_owned(),
            (Some(query), None) => format!("{query}&mode=rwc"),
            (None, _) => "mode=rwc".to_owned(),
        };
        let create = mode.is_none_or(|m| m == "rwc");
        let connect_url = format!("sqlite://{}?{query}", percent_encode_path(&path));
        Ok(Location::SqliteFile {
            path,
            connect_url,
            create,
        })
    }

    fn engine(&self) -> Engine {
        match self {
            Location::Postgres(_) => Engine::Postgres,
            Location::SqliteMemory(_) | Location::SqliteFile { .. } => Engine::Sqlite,
        }
    }

    fn connect_url(&self) -> &str {
        match self {
            Location::Postgres(url) | Location::SqliteMemory(url) => url,
            Location::SqliteFile { connect_url, .. } => connect_url,
        }
    }

    fn pool_options(&self) -> AnyPoolOptions {
        match self {
            Location::Postgres(_) => AnyPoolOptions::new(),
            // Every connection to `:memory:` would be a database of its own: keep one,
            // forever.
            Location::SqliteMemory(_) => AnyPoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .test_before_acquire(false)
                .after_connect(|conn, _| Box::pin(async move { sqlite_pragmas(conn).await })),
            // One connection: SQLite serializes writers anyway, and a lone connection
            // keeps its page cache, which every other connection's commit would
            // invalidate (measured: 37 page reads and 24 lock calls per recorded
            // case with the default pool, against a handful with one connection).
            // A local file cannot go stale: no ping (a round trip to the
            // connection's worker thread) before every acquire.
            Location::SqliteFile { .. } => AnyPoolOptions::new()
                .max_connections(1)
                .test_before_acquire(false)
                .after_connect(|conn, _| Box::pin(async move { sqlite_pragmas(conn).await }))
                .after_release(|conn, _| Box::pin(async move { out_of_transaction(conn).await })),
        }
    }
}

/// Whether a SQLite connection given back to the pool may be used again: not
/// while the driver still counts a transaction on it. SQLite rolls a
/// transaction back by itself on some errors (a full disk, `SQLITE_FULL`);
/// the driver's own ROLLBACK then fails and its count stays at one, so every
/// later BEGIN on that connection would fail with "attempted to call
/// begin_with at non-zero transaction depth" instead of the real error. Such
/// a connection is closed, and the pool opens a fresh one.
async fn out_of_transaction(conn: &mut AnyConnection) -> Result<bool, sqlx::Error> {
    if !conn.is_in_transaction() {
        return Ok(true);
    }
    // A dropped transaction's ROLLBACK is queued on the connection: the ping
    // runs after it.
    conn.ping().await?;
    Ok(!conn.is_in_transaction())
}

/// Per-connection SQLite settings: a writer waits up to 30 s for another writer's
/// lock (the runner writes from many tasks); foreign keys are enforced; and, with
/// WAL, `synchronous = NORMAL` skips the fsync per commit (a crashed process loses
/// nothing; only a power cut may lose the last commits, never consistency).
/// Statement journals and sorts stay in memory instead of temporary files.
async fn sqlite_pragmas(conn: &mut AnyConnection) -> Result<(), sqlx::Error> {
    conn.execute("PRAGMA busy_timeout = 30000").await?;
    conn.execute("PRAGMA foreign_keys = ON").await?;
    conn.execute("PRAGMA synchronous = NORMAL").await?;
    conn.execute("PRAGMA temp_store = MEMORY").await?;
    Ok(())
}

/// Applies the migrations not applied yet, one process at a time.
///
/// PostgreSQL: sqlx's migrator takes an advisory lock itself. SQLite: its
/// migrator takes no lock, so processes opening a new file at once would each
/// see no migration applied and all but one would fail (`table runs already
/// exists`). The check and the migrations run here inside one `BEGIN
/// IMMEDIATE` transaction: it takes the write lock first (waiting up to the
/// busy timeout), so a second process reads the list of applied migrations
/// only after the first has committed them. Each migration is a savepoint
/// within it.
async fn migrate(pool: &AnyPool, engine: Engine) -> Result<(), sqlx::migrate::MigrateError> {
    match engine {
        Engine::Postgres => MIGRATOR.run(pool).await,
        Engine::Sqlite => {
            let mut conn = pool.acquire().await?;
            let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
            // What `Migrator::run` calls, on the transaction's connection:
            // through `Acquire` on a transaction, `Store::open`'s future would be
            // `Send` only for some lifetimes (the workaround sqlx documents).
            MIGRATOR.run_direct(None, &mut *tx, false).await?;
            tx.commit().await?;
            Ok(())
        }
    }
}

/// Percent-encodes every byte of a path except unreserved characters and `/`, so
/// that the driver's URL parsing gives the path back exactly (`?`, `#`, `%`, spaces).
fn percent_encode_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The default store: a SQLite file in `.gavel/` under the working directory.
pub const DEFAULT_URL: &str = "sqlite://.gavel/gavel.db";

impl Store {
    /// Opens (and migrates) a store.
    ///
    /// `url` is `sqlite://PATH` (the file and its parent directories are created as
    /// needed; PATH is taken as written, not percent-decoded), `sqlite::memory:`
    /// (one connection, gone when the store is dropped), `postgres://…`, or a plain
    /// path, taken as a SQLite file. Migrations run on every open; those already
    /// applied are skipped, and processes opening one new store at once apply
    /// them once (one waits for the other's lock). SQLite files use WAL, a busy timeout and foreign keys.
    ///
    /// Errors name the URL with any password masked; the password is registered
    /// as a secret ([`gavel_core::secrets::register_url`]).
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        register_url(url);
        let masked = mask_url(url);
        let open_error = |source: sqlx::Error| StoreError::Open {
            url: masked.clone(),
            source,
        };

        let location =
            Location::parse(url).map_err(|m| open_error(sqlx::Error::Configuration(m.into())))?;
        if let Location::SqliteFile {
            path, create: true, ..
        } = &location
            && let Some(parent) = path.parent()
        {
            std::fs::create_dir_all(parent).map_err(|e| open_error(sqlx::Error::Io(e)))?;
        }
        // One plain connection first, for a prompt and precise error: the pool retries a
        // refused connection until its acquire timeout, then reports only the timeout.
        let probe = AnyConnection::connect(location.connect_url())
            .await
            .map_err(open_error)?;
        probe.close().await.map_err(open_error)?;
        let pool: AnyPool = location
            .pool_options()
            .connect(location.connect_url())
            .await
            .map_err(open_error)?;
        if let Location::SqliteFile { .. } = location {
            // Persistent in the file: readers no longer block the writer.
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await
                .map_err(open_error)?;
        }
        migrate(&pool, location.engine())
            .await
            .map_err(|source| StoreError::Migrate {
                url: masked.clone(),
                source,
            })?;
        let direct = match &location {
            Location::SqliteFile { path, .. } => DirectConnection::open(path).map(Arc::new),
            _ => None,
        };
        Ok(Store {
            pool,
            direct,
            engine: location.engine(),
            url: masked,
            cache_queue: Default::default(),
            cache_lookups: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "postgres"))]
    #[test]
    fn without_postgres_a_postgres_url_is_refused_saying_why() {
        let err = Location::parse("postgres://u:p@h/db").unwrap_err();
        assert!(err.contains("`postgres` feature"), "{err}");
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn urls_resolve_to_engines() {
        let pg = Location::parse("postgres://u:p@h/db").unwrap();
        assert_eq!(pg, Location::Postgres("postgres://u:p@h/db".into()));
        assert_eq!(
            Location::parse("postgresql://h/db").unwrap().engine(),
            Engine::Postgres
        );
        assert!(matches!(
            Location::parse("sqlite::memory:").unwrap(),
            Location::SqliteMemory(_)
        ));
        assert!(matches!(
            Location::parse("sqlite://:memory:").unwrap(),
            Location::SqliteMemory(_)
        ));
        assert!(
            Location::parse("mysql://h/db")
                .unwrap_err()
                .contains("`mysql`")
        );
        assert!(Location::parse("sqlite://").is_err());
    }

    #[test]
    fn sqlite_paths_become_absolute_encoded_urls() {
        let Location::SqliteFile {
            path,
            connect_url,
            create,
        } = Location::parse("sqlite:///tmp/a b/#1.db").unwrap()
        else {
            panic!("not a file");
        };
        assert_eq!(path, PathBuf::from("/tmp/a b/#1.db"));
        assert_eq!(connect_url, "sqlite:///tmp/a%20b/%231.db?mode=rwc");
        assert!(create);

        let Location::SqliteFile { path, .. } = Location::parse(".gavel/gavel.db").unwrap() else {
            panic!("not a file");
        };
        assert!(path.is_absolute() && path.ends_with(".gavel/gavel.db"));

        let Location::SqliteFile {
            connect_url,
            create,
            ..
        } = Location::parse("sqlite:/tmp/x.db?mode=ro").unwrap()
        else {
            panic!("not a file");
        };
        assert_eq!(connect_url, "sqlite:///tmp/x.db?mode=ro");
        assert!(!create);
    }

    /// Independent stores (each its own runtime, pool and connections, as in
    /// separate processes) opening one new file at once all migrate it.
    #[test]
    fn stores_opened_at_once_on_a_new_file_all_migrate() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("new.db").display());
        let start = Arc::new(std::sync::Barrier::new(10));
        let openers: Vec<_> = (0..10)
            .map(|_| {
                let (url, start) = (url.clone(), Arc::clone(&start));
                std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    start.wait();
                    runtime.block_on(async {
                        let store = Store::open(&url).await.map_err(|e| format!("{e:?}"))?;
                        store.close().await;
                        Ok::<(), String>(())
                    })
                })
            })
            .collect();
        for opener in openers {
            opener.join().unwrap().unwrap();
        }
    }

    #[tokio::test]
    async fn a_full_database_says_so_and_the_next_write_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("g.db").display());
        let store = Store::open(&url).await.unwrap();
        let run = crate::fixtures::run("full");
        store.create_run(&run).await.unwrap();
        // The pool's one connection may grow the file by a page or two: a
        // megabyte of case does not fit, as on a full disk.
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "PRAGMA max_page_count = {}",
            pages + 2
        )))
        .execute(&store.pool)
        .await
        .unwrap();
        let json = serde_json::json!({"id": "big", "input": "x".repeat(1 << 20)}).to_string();
        let case = crate::SnapshotCase {
            id: "big",
            source: "s.yaml:1",
            json: &json,
        };
        let full = store
            .append_cases(&run.id, 0, std::slice::from_ref(&case))
            .await
            .unwrap_err()
            .to_string();
        assert!(full.contains("full"), "{full}");
        // The connection the failed transaction left was closed, not reused:
        // the next write begins on a fresh one (without the page limit).
        store
            .append_cases(&run.id, 0, std::slice::from_ref(&case))
            .await
            .unwrap();
        store.close().await;
    }
}
