//! A run's kept decision is given back only while the run stands as it did
//! when it was decided, on a SQLite file and on PostgreSQL.

use gavel_core::{Execution, RunRecord, RunStatus, Status, Transcript};
use gavel_store::{Store, StoreError};
use serde_json::json;

mod support;

use support::{TestResult, on_postgres, on_sqlite};

const RUN_ID: &str = "019a0000-5555-7000-8000-000000000005";

fn execution(case: &str) -> Execution {
    Execution {
        case_id: case.into(),
        case_name: case.into(),
        target: "agent".into(),
        repeat_index: 0,
        tags: vec![],
        status: Status::Pass,
        score: Some(1.0),
        transcript: Transcript::default(),
        verdicts: vec![],
        reason: None,
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 1,
    }
}

async fn story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    let missing = store.decision_stamp(RUN_ID).await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(_))),
        "{missing:?}"
    );
    store
        .create_run(&RunRecord {
            id: RUN_ID.into(),
            suite: "kept".into(),
            status: RunStatus::Running,
            started_at: gavel_core::now_rfc3339(),
            finished_at: None,
            config: json!({}),
            planned: Some(3),
        })
        .await?;
    store
        .record_executions(RUN_ID, &[execution("a"), execution("b")])
        .await?;
    store
        .finish_run(RUN_ID, RunStatus::Completed, &gavel_core::now_rfc3339())
        .await?;
    let stamp = store.decision_stamp(RUN_ID).await?;
    assert_eq!(store.decision::<u32>(RUN_ID, &stamp).await?, None);
    store.save_decision(RUN_ID, &stamp, &7u32).await?;
    assert_eq!(store.decision::<u32>(RUN_ID, &stamp).await?, Some(7));
    assert_eq!(
        store.decision_stamp(RUN_ID).await?,
        stamp,
        "nothing changed"
    );
    // Kept as something else: not given back as a `String`.
    assert_eq!(store.decision::<String>(RUN_ID, &stamp).await?, None);
    // An execution recorded since (a resume's) makes it stale.
    store.record_executions(RUN_ID, &[execution("c")]).await?;
    let later = store.decision_stamp(RUN_ID).await?;
    assert_ne!(later, stamp);
    assert_eq!(store.decision::<u32>(RUN_ID, &later).await?, None);
    // So does another status, even with the same executions.
    store.save_decision(RUN_ID, &later, &8u32).await?;
    store
        .finish_run(RUN_ID, RunStatus::Interrupted, &gavel_core::now_rfc3339())
        .await?;
    let stopped = store.decision_stamp(RUN_ID).await?;
    assert_eq!(store.decision::<u32>(RUN_ID, &stopped).await?, None);
    assert_eq!(store.decision::<u32>(RUN_ID, &later).await?, Some(8));
    // A decision for a run that is not stored is refused.
    let other = store.save_decision("019a0000-0000-7000-8000-00000000dead", &later, &1u32);
    assert!(matches!(other.await, Err(StoreError::NotFound(_))));
    Ok(())
}

#[tokio::test]
async fn a_kept_decision_is_given_back_only_for_the_run_as_it_stood_on_sqlite() -> TestResult {
    on_sqlite(story).await
}

#[tokio::test]
async fn a_kept_decision_is_given_back_only_for_the_run_as_it_stood_on_postgres() -> TestResult {
    on_postgres(story).await
}
