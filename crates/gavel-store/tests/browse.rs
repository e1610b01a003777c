//! Browsing a run's executions a page at a time: by status, by text in the
//! case's id or name (literally: `%` and `_` are not wildcards), pages that
//! follow one another to the end, on SQLite and PostgreSQL.

use gavel_core::{Execution, RunRecord, RunStatus, Status, Transcript};
use gavel_store::{Browse, Store};
use serde_json::json;

mod support;

use support::{TestResult, on_postgres, on_sqlite};

const RUN_ID: &str = "019a0000-5555-7000-8000-000000000005";

fn execution(i: usize) -> Execution {
    let status = match i % 4 {
        0 => Status::Fail,
        1 => Status::Error,
        _ => Status::Pass,
    };
    Execution {
        case_id: format!("case-{i:03}"),
        case_name: if i == 42 {
            "Refund 100%_off".into()
        } else {
            format!("Case {i}")
        },
        target: "agent".into(),
        repeat_index: 0,
        tags: vec![],
        status,
        score: None,
        transcript: Transcript::default(),
        verdicts: vec![],
        reason: None,
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 1,
    }
}

/// Every page of `browse`, followed to the end: the case ids, and the count
/// each page reported.
async fn all_pages(
    store: &Store,
    mut browse: Browse,
) -> Result<(Vec<String>, Vec<usize>), gavel_store::StoreError> {
    let (mut ids, mut counts) = (Vec::new(), Vec::new());
    loop {
        let page = store.browse(RUN_ID, &browse).await?;
        assert!(page.executions.len() <= browse.limit);
        ids.extend(page.executions.iter().map(|e| e.case_id.clone()));
        counts.push(page.matching);
        match page.next {
            Some(next) => browse.after = Some(next),
            None => return Ok((ids, counts)),
        }
    }
}

async fn browse_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    store
        .create_run(&RunRecord {
            id: RUN_ID.into(),
            suite: "browse".into(),
            status: RunStatus::Running,
            started_at: gavel_core::now_rfc3339(),
            finished_at: None,
            config: json!({}),
            planned: None,
        })
        .await?;
    let executions: Vec<Execution> = (0..100).map(execution).collect();
    store.record_executions(RUN_ID, &executions).await?;

    let every = Browse {
        limit: 30,
        ..Browse::default()
    };
    let (ids, counts) = all_pages(&store, every).await?;
    let expected: Vec<String> = executions.iter().map(|e| e.case_id.clone()).collect();
    assert_eq!(ids, expected, "every execution once, in recording order");
    assert_eq!(counts, [100, 100, 100, 100]);

    let problems = Browse {
        statuses: vec![Status::Fail, Status::Error],
        limit: 7,
        ..Browse::default()
    };
    let (ids, counts) = all_pages(&store, problems).await?;
    assert_eq!(ids.len(), 50);
    assert!(counts.iter().all(|&c| c == 50));
    assert!(ids.iter().all(|id| {
        let i: usize = id["case-".len()..].parse().unwrap_or(2);
        i % 4 < 2
    }));

    // Text in the id or name, any case; `%` and `_` are literal.
    let search = |text: &str| Browse {
        search: text.into(),
        limit: 10,
        ..Browse::default()
    };
    assert_eq!(all_pages(&store, search("CASE-04")).await?.0.len(), 10);
    assert_eq!(all_pages(&store, search("100%_OFF")).await?.0, ["case-042"]);
    assert!(all_pages(&store, search("c%1")).await?.0.is_empty());
    assert!(all_pages(&store, search("case_00")).await?.0.is_empty());
    let page = store.browse(RUN_ID, &search("nothing like it")).await?;
    assert_eq!(
        (page.executions.len(), page.matching, page.next),
        (0, 0, None)
    );
    store.close().await;
    Ok(())
}

#[tokio::test]
async fn browse_on_sqlite() -> TestResult {
    on_sqlite(browse_story).await
}

#[tokio::test]
async fn browse_on_postgres() -> TestResult {
    on_postgres(browse_story).await
}
