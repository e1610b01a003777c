//! Team mode in the store: the work queue of distributed runs, human labels and the
//! per-run figures of the trends, on a SQLite file always and on a fresh PostgreSQL
//! database when `GAVEL_TEST_DATABASE_URL` names a server.

use std::collections::BTreeSet;
use std::error::Error;
use std::time::Duration;

use gavel_core::{Execution, ExecutionKey, RunRecord, RunStatus, Status, Transcript};
use gavel_store::{Label, Store, StoreError};
use serde_json::json;

mod support;

use support::{TestResult, on_postgres, on_sqlite};

const RUN_ID: &str = "019a0000-3333-7000-8000-000000000003";

async fn queue_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    assert!(
        store.claim("w0", Duration::from_secs(5)).await?.is_empty(),
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
            planned: None,
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

    let items: Vec<Vec<ExecutionKey>> = (0..6)
        .map(|i| vec![ExecutionKey::new(format!("case-{}", i / 2), "t", i % 2)])
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
        .pop()
        .ok_or("no claim")?;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut retaken = None;
    while let Some(claim) = store.claim("survivor", lease).await?.pop() {
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
        claims.push(task.await??.pop().ok_or("a claim came back empty")?);
    }
    Ok(claims)
}

fn execution(case: &str, target: &str, status: Status, score: Option<f64>) -> Execution {
    Execution {
        case_id: case.into(),
        case_name: case.into(),
        target: target.into(),
        repeat_index: 0,
        tags: vec![],
        status,
        score,
        transcript: Transcript::default(),
        verdicts: vec![],
        reason: None,
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 1,
    }
}

async fn labels_and_points_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    for (id, started_at) in [
        (
            "019a0000-6666-7000-8000-000000000001",
            "2026-01-01T00:00:00.000Z",
        ),
        (
            "019a0000-6666-7000-8000-000000000002",
            "2026-01-02T00:00:00.000Z",
        ),
    ] {
        store
            .create_run(&RunRecord {
                id: id.into(),
                suite: "trend".into(),
                status: RunStatus::Completed,
                started_at: started_at.into(),
                finished_at: None,
                config: json!({}),
                planned: None,
            })
            .await?;
    }
    let (first, second) = (
        "019a0000-6666-7000-8000-000000000001",
        "019a0000-6666-7000-8000-000000000002",
    );
    for e in [
        execution("a", "x", Status::Pass, Some(1.0)),
        execution("b", "x", Status::Fail, Some(0.5)),
        execution("a", "y", Status::Error, None),
    ] {
        store.record_execution(first, &e).await?;
    }
    store
        .record_execution(second, &execution("a", "x", Status::Pass, Some(0.75)))
        .await?;
    assert_eq!(store.executions(first).await?.len(), 3);

    let label = Label {
        run_id: first.into(),
        case_id: "b".into(),
        target: "x".into(),
        repeat_index: 0,
        label: "pass".into(),
        score: Some(0.8),
        who: "ana".into(),
        note: Some("the judge was too strict".into()),
        created_at: String::new(),
    };
    store.add_label(&label).await?;
    let bad = Label {
        label: "maybe".into(),
        ..label.clone()
    };
    assert!(matches!(
        store.add_label(&bad).await,
        Err(StoreError::Invalid { .. })
    ));
    let orphan = Label {
        run_id: "019a0000-6666-7000-8000-00000000dead".into(),
        ..label.clone()
    };
    assert!(matches!(
        store.add_label(&orphan).await,
        Err(StoreError::NotFound(_))
    ));
    let labels = store.run_labels(first).await?;
    assert_eq!(labels.len(), 1);
    assert!(!labels[0].created_at.is_empty());
    assert_eq!(
        Label {
            created_at: String::new(),
            ..labels[0].clone()
        },
        label
    );
    store.close().await;
    Ok(())
}

/// One driver per run: a second is told who holds it, a dead holder's run is
/// taken over, a released run is free; pairwise units are claimed together.
async fn driver_and_units_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    store
        .create_run(&RunRecord {
            id: RUN_ID.into(),
            suite: "queue".into(),
            status: RunStatus::Running,
            started_at: gavel_core::now_rfc3339(),
            finished_at: None,
            config: json!({}),
            planned: None,
        })
        .await?;
    let lease = Duration::from_secs(60);
    assert_eq!(store.drive_run(RUN_ID, "a", lease, None).await?, None);
    assert_eq!(
        store.drive_run(RUN_ID, "a", lease, None).await?,
        None,
        "renewed"
    );
    assert_eq!(
        store.drive_run(RUN_ID, "b", lease, None).await?.as_deref(),
        Some("a")
    );
    assert_eq!(store.drive_run(RUN_ID, "b", lease, Some("a")).await?, None);
    store.release_run(RUN_ID, "b").await?;
    assert_eq!(store.drive_run(RUN_ID, "c", lease, None).await?, None);

    let key = |case: &str, target: &str| ExecutionKey::new(case, target, 0);
    store
        .enqueue(
            RUN_ID,
            &[
                vec![key("pair", "a"), key("pair", "b")],
                vec![key("single", "a")],
            ],
        )
        .await?;
    let unit = store.claim("w", lease).await?;
    let claimed: Vec<_> = unit
        .iter()
        .map(|c| (c.case_id.as_str(), c.target.as_str()))
        .collect();
    assert_eq!(claimed, [("pair", "a"), ("pair", "b")]);
    let next = store.claim("w", lease).await?;
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].case_id, "single");
    assert!(store.claim("w", lease).await?.is_empty());
    store.close().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn driver_and_units_on_sqlite() -> TestResult {
    on_sqlite(driver_and_units_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn driver_and_units_on_postgres() -> TestResult {
    on_postgres(driver_and_units_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_on_sqlite() -> TestResult {
    on_sqlite(queue_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_on_postgres() -> TestResult {
    on_postgres(queue_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_and_points_on_sqlite() -> TestResult {
    on_sqlite(labels_and_points_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_and_points_on_postgres() -> TestResult {
    on_postgres(labels_and_points_story).await
}
