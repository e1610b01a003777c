//! Stories run on a SQLite file, and on a fresh PostgreSQL database when
//! `GAVEL_TEST_DATABASE_URL` names a server (required under CI).

use std::error::Error;
use std::future::Future;

/// What a story returns.
pub(crate) type TestResult = Result<(), Box<dyn Error + Send + Sync>>;

/// Runs `story` on a fresh SQLite file.
pub(crate) async fn on_sqlite<F, Fut>(story: F) -> TestResult
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = TestResult>,
{
    let dir = tempfile::tempdir()?;
    story(format!("sqlite://{}", dir.path().join("q.db").display())).await
}

/// Runs `story` on a fresh PostgreSQL database, dropped afterwards; skipped
/// without `GAVEL_TEST_DATABASE_URL`, except under CI ([`gavel_testkit`]).
pub(crate) async fn on_postgres<F, Fut>(story: F) -> TestResult
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = TestResult> + Send + 'static,
{
    let what = std::thread::current()
        .name()
        .unwrap_or("a store story")
        .to_owned();
    gavel_testkit::on_fresh_postgres(&what, story)
        .await
        .unwrap_or(Ok(()))
}
