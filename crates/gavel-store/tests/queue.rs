//! The work queue of distributed runs, on a SQLite file always and on a fresh
//! PostgreSQL database when `GAVEL_TEST_DATABASE_URL` names a server.

use std::collections::BTreeSet;
use std::error::Error;
use std::time::Duration;

use gavel_core::{RunRecord, RunStatus};
use gavel_store::Store;
use serde_json::json;
use sqlx::{AssertSqlSafe, Connection, Executor};

type TestResult = Result<(), Box<dyn Error + Send + Sync>>;

const RUN_ID: &str = "019a0000-3333-7000-8000-000000000003";

async fn queue_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    assert!(
        store.claim("w0", Duration::from_secs(5)).await?.is_none(),
        "an empty queue has nothing to claim"
    );
    store
        .create_run(&RunRecord {
            id: RUN_ID.into(),
            suite: "queue".into(),
            status: RunStatus::Running,
            started_at: gavel_core::now_rfc3339(),
            finished_at: None,
            config: json!({}),
        })
        .await?;
    let suite = gavel_core::load::parse_suite_str(
        "targets:\n  t: {type: command, command: [cat]}\ncases:\n  - id: a\n    input: hi\n  - id: b\n    input: ho\n",
        "s.yaml".as_ref(),
    )
    .map_err(|e| format!("{e:?}"))?;
    store.save_cases(RUN_ID, &suite.cases).await?;
    store.save_suite(RUN_ID, &suite).await?;
    let loaded = store.suite(RUN_ID).await?;
    assert_eq!(loaded.targets, suite.targets);
    assert_eq!(
        loaded.cases, suite.cases,
        "cases come back with their source"
    );

    let items: Vec<(String, String, u32)> = (0..6)
        .map(|i| (format!("case-{}", i / 2), "t".to_owned(), i % 2))
        .collect();
    store.enqueue(RUN_ID, &items).await?;
    store.enqueue(RUN_ID, &items[..2]).await?; // enqueuing again adds nothing
    assert_eq!(store.queue_progress(RUN_ID).await?.total(), 6);

    // Concurrent claims never hand out one execution twice.
    let lease = Duration::from_secs(60);
    let claims = futures_claims(&store, lease, 4).await?;
    let ids: BTreeSet<_> = claims.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids.len(), 4);
    assert!(claims.iter().all(|c| c.attempts == 1));
    assert!(store.heartbeat(&claims[0], lease).await?);

    // A lease that expires is claimed again, and its old holder learns it lost it.
    let short = store
        .claim("dying", Duration::from_millis(1))
        .await?
        .ok_or("no claim")?;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut retaken = None;
    while let Some(claim) = store.claim("survivor", lease).await? {
        if claim.id == short.id {
            retaken = Some(claim.clone());
        }
        assert!(!store.complete(&claim).await?, "others are still claimed");
    }
    let retaken = retaken.ok_or("the expired claim was not taken again")?;
    assert_eq!(retaken.attempts, 2);
    assert!(!store.heartbeat(&short, lease).await?);

    let progress = store.queue_progress(RUN_ID).await?;
    assert_eq!((progress.claimed, progress.queued), (4, 0));
    let mut finished = Vec::new();
    for claim in &claims {
        finished.push(store.complete(claim).await?);
    }
    assert_eq!(
        finished,
        [false, false, false, true],
        "the last one finishes the run"
    );
    let run = store.run(RUN_ID).await?;
    assert_eq!(run.status, RunStatus::Completed);
    assert!(run.finished_at.is_some());
    assert_eq!(store.queue_progress(RUN_ID).await?.done, 6);
    store.close().await;
    Ok(())
}

/// `n` claims taken at the same time through clones of the store.
async fn futures_claims(
    store: &Store,
    lease: Duration,
    n: usize,
) -> Result<Vec<gavel_store::Claim>, Box<dyn Error + Send + Sync>> {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.claim(&format!("w{i}"), lease).await })
        })
        .collect();
    let mut claims = Vec::new();
    for task in tasks {
        claims.push(task.await??.ok_or("a claim came back empty")?);
    }
    Ok(claims)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_on_sqlite() -> TestResult {
    let dir = tempfile::tempdir()?;
    queue_story(format!("sqlite://{}", dir.path().join("q.db").display())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_on_postgres() -> TestResult {
    let Ok(admin_url) = std::env::var("GAVEL_TEST_DATABASE_URL") else {
        eprintln!("note: GAVEL_TEST_DATABASE_URL is not set; skipping the PostgreSQL queue test");
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
    let outcome = tokio::spawn(queue_story(format!("{base}/{database}"))).await;
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
