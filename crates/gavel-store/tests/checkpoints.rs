//! Session checkpoints on every backend: a SQLite temp file always, PostgreSQL too
//! when `GAVEL_TEST_DATABASE_URL` names a server (a fresh database per test).

use std::error::Error;

use gavel_store::Store;

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
    gavel_testkit::on_fresh_postgres("the checkpoint story", checkpoint_story)
        .await
        .unwrap_or(Ok(()))
}
