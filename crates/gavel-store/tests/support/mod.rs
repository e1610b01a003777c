//! Stories run on a SQLite file, and on a fresh PostgreSQL database when
//! `GAVEL_TEST_DATABASE_URL` names a server.

use std::error::Error;
use std::future::Future;

use sqlx::{AssertSqlSafe, Connection, Executor};

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

/// Runs `story` on a fresh PostgreSQL database, dropped afterwards.
pub(crate) async fn on_postgres<F, Fut>(story: F) -> TestResult
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = TestResult> + Send + 'static,
{
    let Ok(admin_url) = std::env::var("GAVEL_TEST_DATABASE_URL") else {
        eprintln!("note: GAVEL_TEST_DATABASE_URL is not set; skipping a PostgreSQL test");
        return Ok(());
    };
    let database = format!("gavel_test_{}", uuid::Uuid::now_v7().simple());
    let mut admin = sqlx::PgConnection::connect(&admin_url).await?;
    admin
        .execute(AssertSqlSafe(format!("CREATE DATABASE {database}")))
        .await?;
    let base = admin_url
        .rsplit_once('/')
        .ok_or("no database in the URL")?
        .0;
    let outcome = tokio::spawn(story(format!("{base}/{database}"))).await;
    admin
        .execute(AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {database} WITH (FORCE)"
        )))
        .await?;
    admin.close().await?;
    match outcome {
        Ok(result) => result,
        Err(join) => std::panic::resume_unwind(join.into_panic()),
    }
}
