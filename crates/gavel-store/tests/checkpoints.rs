//! Session checkpoints on every backend: a SQLite temp file always, PostgreSQL too
//! when `GAVEL_TEST_DATABASE_URL` names a server (a fresh database per test).

use std::error::Error;

use gavel_store::Store;
use sqlx::{AssertSqlSafe, Connection, Executor};

type TestResult = Result<(), Box<dyn Error + Send + Sync>>;

async fn checkpoint_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    assert_eq!(store.checkpoint_get("agent", "s1").await?, None);
    let first = r#"{"messages":[{"role":"user","content":"Zürich ✓"}]}"#;
    store.checkpoint_put("agent", "s1", first).await?;
    assert_eq!(
        store.checkpoint_get("agent", "s1").await?.as_deref(),
        Some(first)
    );
    // Sessions and targets are kept apart.
    assert_eq!(store.checkpoint_get("agent", "s2").await?, None);
    assert_eq!(store.checkpoint_get("other", "s1").await?, None);
    // A later checkpoint replaces the earlier one.
    let second = r#"{"messages":[]}"#;
    store.checkpoint_put("agent", "s1", second).await?;
    assert_eq!(
        store.checkpoint_get("agent", "s1").await?.as_deref(),
        Some(second)
    );
    store.close().await;
    // It survives reopening the store.
    let store = Store::open(&url).await?;
    assert_eq!(
        store.checkpoint_get("agent", "s1").await?.as_deref(),
        Some(second)
    );
    store.close().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_on_sqlite() -> TestResult {
    let dir = tempfile::tempdir()?;
    checkpoint_story(format!(
        "sqlite://{}",
        dir.path().join("gavel.db").display()
    ))
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_on_postgres() -> TestResult {
    let Ok(admin_url) = std::env::var("GAVEL_TEST_DATABASE_URL") else {
        eprintln!(
            "note: GAVEL_TEST_DATABASE_URL is not set; skipping the PostgreSQL checkpoint test"
        );
        return Ok(());
    };
    let database = format!("gavel_test_{}", uuid::Uuid::now_v7().simple());
    let mut admin = sqlx::PgConnection::connect(&admin_url).await?;
    admin
        .execute(AssertSqlSafe(format!("CREATE DATABASE {database}")))
        .await?;
    let (base, _) = admin_url
        .rsplit_once('/')
        .ok_or("GAVEL_TEST_DATABASE_URL has no database")?;
    let outcome = tokio::spawn(checkpoint_story(format!("{base}/{database}"))).await;
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
