//! A run's cases and executions read a page at a time come in the order of one
//! whole read, on a SQLite file always and on a fresh PostgreSQL database when
//! `GAVEL_TEST_DATABASE_URL` names a server.

use gavel_core::{Case, Execution, RunRecord, RunStatus, Status, Transcript, Verdict};
use gavel_store::Store;
use serde_json::json;

mod support;

use support::{TestResult, on_postgres, on_sqlite};

const RUN_ID: &str = "019a0000-4444-7000-8000-000000000004";

fn case(id: &str) -> Result<Case, serde_json::Error> {
    serde_json::from_value(json!({ "id": id, "input": format!("ask {id}") }))
}

fn execution(case: &str, target: &str, repeat: u32) -> Execution {
    Execution {
        case_id: case.into(),
        case_name: case.into(),
        target: target.into(),
        repeat_index: repeat,
        tags: vec![],
        status: Status::Pass,
        score: Some(1.0),
        transcript: Transcript::default(),
        verdicts: vec![Verdict::new(
            "contains",
            gavel_core::CheckKind::Contains,
            Status::Pass,
            format!("{case} {target} {repeat}"),
        )],
        reason: None,
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 1,
    }
}

/// A run of `suite` just started.
fn running(id: &str, suite: &str) -> RunRecord {
    RunRecord {
        id: id.into(),
        suite: suite.into(),
        status: RunStatus::Running,
        started_at: gavel_core::now_rfc3339(),
        finished_at: None,
        config: json!({}),
        planned: None,
    }
}

/// Every page of `size` (none larger), in order.
async fn paged(store: &Store, size: usize) -> Result<Vec<Execution>, gavel_store::StoreError> {
    let mut pages = store.execution_pages(RUN_ID, size).await?;
    let mut read = Vec::new();
    while let Some(page) = pages.next_page().await? {
        assert!(page.len() <= size, "a page holds at most {size}");
        read.extend(page);
    }
    assert_eq!(pages.remaining(), 0);
    Ok(read)
}

async fn pages_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    store.create_run(&running(RUN_ID, "pages")).await?;
    // Not in id order, a case saved twice (its first place counts), a case
    // that never runs, and enough cases for several pages of them.
    let mut ids = vec!["m", "b", "z", "b", "never", "a"];
    let bulk: Vec<String> = (0..7).map(|i| format!("bulk-{}", 6 - i)).collect();
    ids.extend(bulk.iter().map(String::as_str));
    let snapshot = ids
        .iter()
        .map(|id| case(id))
        .collect::<Result<Vec<_>, _>>()?;
    store.save_cases(RUN_ID, &snapshot).await?;

    // Recorded out of report order, with cases missing from the snapshot
    // ("ghost", "orphan") between and after the others.
    let mut recorded = vec![
        execution("z", "beta", 1),
        execution("orphan", "alpha", 0),
        execution("b", "beta", 0),
        execution("z", "alpha", 0),
        execution("ghost", "beta", 0),
        execution("b", "alpha", 1),
        execution("b", "alpha", 0),
        execution("z", "beta", 0),
        execution("ghost", "alpha", 0),
        execution("orphan", "alpha", 1),
        execution("a", "alpha", 0),
    ];
    recorded.extend(bulk.iter().map(|id| execution(id, "alpha", 0)));
    recorded.push(execution("m", "alpha", 0));
    store.record_executions(RUN_ID, &recorded).await?;

    let whole = store.executions(RUN_ID).await?;
    assert_eq!(whole.len(), recorded.len());
    let order: Vec<(&str, &str, u32)> = whole
        .iter()
        .take(8)
        .map(|e| (e.case_id.as_str(), e.target.as_str(), e.repeat_index))
        .collect();
    assert_eq!(
        order,
        [
            ("m", "alpha", 0),
            ("b", "alpha", 0),
            ("b", "alpha", 1),
            ("b", "beta", 0),
            ("z", "alpha", 0),
            ("z", "beta", 0),
            ("z", "beta", 1),
            ("a", "alpha", 0),
        ]
    );
    let tail: Vec<&str> = whole[whole.len() - 4..]
        .iter()
        .map(|e| e.case_id.as_str())
        .collect();
    assert_eq!(tail, ["orphan", "orphan", "ghost", "ghost"]);
    for size in [1, 2, 3, 5, 256] {
        assert_eq!(paged(&store, size).await?, whole, "pages of {size}");
    }

    // Executions recorded once the pages are open are not read.
    let mut pages = store.execution_pages(RUN_ID, 4).await?;
    store
        .record_execution(RUN_ID, &execution("a", "gamma", 0))
        .await?;
    let mut read = Vec::new();
    while let Some(page) = pages.next_page().await? {
        read.extend(page);
    }
    assert_eq!(read, whole);

    let saved = store.cases(RUN_ID).await?;
    assert_eq!(saved, snapshot);
    for size in [1, 4, 100] {
        let mut all = Vec::new();
        let mut cases = store.case_pages(RUN_ID, size);
        while let Some(page) = cases.next_page().await? {
            assert!(!page.is_empty() && page.len() <= size);
            all.extend(page);
        }
        assert_eq!(all, saved, "case pages of {size}");
        let mut first = Vec::new();
        let mut cases = store.case_pages(RUN_ID, size).first_of_id();
        while let Some(page) = cases.next_page().await? {
            first.extend(page);
        }
        let mut expected = saved.clone();
        expected.remove(3);
        assert_eq!(first, expected, "first cases of each id, pages of {size}");
    }
    let mut none = store.case_pages("no-such-run", 10);
    assert_eq!(none.next_page().await?, None);
    assert_eq!(paged(&store, 3).await.map(|e| e.len())?, whole.len() + 1);
    Ok(())
}

#[tokio::test]
async fn pages_on_sqlite() -> TestResult {
    on_sqlite(pages_story).await
}

#[tokio::test]
async fn pages_on_postgres() -> TestResult {
    on_postgres(pages_story).await
}

/// When `turns` was last analyzed by hand (`ANALYZE`; autovacuum sets another column).
async fn last_analyze(
    url: &str,
) -> Result<Option<String>, Box<dyn std::error::Error + Send + Sync>> {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let mut raw = sqlx::AnyConnection::connect(url).await?;
    Ok(sqlx::query_scalar(
        "SELECT CAST(last_analyze AS TEXT) FROM pg_stat_user_tables WHERE relname = 'turns'",
    )
    .fetch_one(&mut raw)
    .await?)
}

/// Finishing a run of 1,000 executions on PostgreSQL refreshes the planner's
/// statistics, so its report is read through the indexes at once; a smaller
/// run leaves them to autovacuum.
#[tokio::test]
async fn finishing_a_large_run_analyzes_on_postgres() -> TestResult {
    on_postgres(|url| async move {
        let store = Store::open(&url).await?;
        for (run_id, executions) in [
            (RUN_ID, 999),
            ("019a0000-4444-7000-8000-000000000005", 1_000),
        ] {
            store.create_run(&running(run_id, "large")).await?;
            let recorded: Vec<Execution> = (0..executions)
                .map(|i| execution(&format!("c{i}"), "alpha", 0))
                .collect();
            store.record_executions(run_id, &recorded).await?;
            store
                .finish_run(run_id, RunStatus::Completed, &gavel_core::now_rfc3339())
                .await?;
            let analyzed = last_analyze(&url).await?;
            assert_eq!(
                analyzed.is_some(),
                executions >= 1_000,
                "{executions}: {analyzed:?}"
            );
        }
        Ok(())
    })
    .await
}

/// Reads every page open now.
async fn drain(
    pages: &mut gavel_store::ExecutionPages,
) -> Result<Vec<Execution>, gavel_store::StoreError> {
    let mut read = Vec::new();
    while let Some(page) = pages.next_page().await? {
        read.extend(page);
    }
    Ok(read)
}

/// A run read while it is recorded: only the cases told whole are read, in
/// report order, and once the run is recorded the rest; together they are the
/// whole read.
async fn growing_story(url: String) -> TestResult {
    const GROWING: &str = "019a0000-4444-7000-8000-000000000005";
    let store = Store::open(&url).await?;
    store.create_run(&running(GROWING, "growing")).await?;
    let ids: Vec<String> = (0..12).map(|i| format!("c{i:02}")).collect();
    let snapshot = ids
        .iter()
        .map(|id| case(id))
        .collect::<Result<Vec<_>, _>>()?;
    store.save_cases(GROWING, &snapshot).await?;
    let of = |range: std::ops::Range<usize>| -> Vec<Execution> {
        range
            .rev()
            .flat_map(|i| {
                [
                    execution(&ids[i], "beta", 0),
                    execution(&ids[i], "alpha", 0),
                ]
            })
            .collect()
    };
    // Cases 0 to 4 whole, and one execution of case 8 early.
    let mut first = of(0..5);
    first.push(execution(&ids[8], "alpha", 0));
    store.record_executions(GROWING, &first).await?;

    let mut pages = store.growing_execution_pages(GROWING, 3, 0);
    let mut read = drain(&mut pages).await?;
    assert!(read.is_empty(), "no case is whole yet");
    pages.before(Some(5)).await?;
    read.extend(drain(&mut pages).await?);
    assert_eq!(read.len(), 10, "the five whole cases");
    let mut cases = store.case_pages(GROWING, 2);
    cases.before(Some(5));
    let mut listed = Vec::new();
    while let Some(page) = cases.next_page().await? {
        listed.extend(page);
    }
    assert_eq!(listed, snapshot[..5], "cases before position 5");

    let mut rest = of(5..12);
    rest.retain(|e| !(e.case_id == ids[8] && e.target == "alpha"));
    rest.push(execution("orphan", "alpha", 0));
    store.record_executions(GROWING, &rest).await?;
    pages.before(Some(9)).await?;
    read.extend(drain(&mut pages).await?);
    assert_eq!(read.len(), 18);
    pages.before(None).await?;
    read.extend(drain(&mut pages).await?);
    assert_eq!(
        read,
        store.executions(GROWING).await?,
        "the whole read, in order"
    );
    assert_eq!(pages.remaining(), 0);
    Ok(())
}

#[tokio::test]
async fn growing_pages_on_sqlite() -> TestResult {
    on_sqlite(growing_story).await
}

#[tokio::test]
async fn growing_pages_on_postgres() -> TestResult {
    on_postgres(growing_story).await
}
