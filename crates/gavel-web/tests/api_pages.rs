//! `GET /api/runs/{id}` a page at a time: the run's summary with one page of
//! its executions and a cursor, filters, bounded limits, and every execution
//! read exactly once when the pages are followed to the end.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use gavel_core::{Execution, RunRecord, RunStatus, Status, Transcript, Turn, Verdict};
use gavel_store::SnapshotCase;
use reqwest::StatusCode;
use serde_json::{Value, json};

mod support;

const RUN: &str = "019a0000-5555-7000-8000-000000000005";
/// Executions of the run: one per case, every seventh failing.
const N: usize = 230;

fn execution(i: usize) -> Execution {
    let status = if i.is_multiple_of(7) {
        Status::Fail
    } else {
        Status::Pass
    };
    Execution {
        case_id: format!("case-{i:03}"),
        case_name: format!("Case {i}"),
        target: "agent".into(),
        repeat_index: 0,
        tags: vec![],
        status,
        score: Some(if status == Status::Pass { 1.0 } else { 0.0 }),
        transcript: Transcript {
            session_id: format!("s{i}"),
            turns: vec![Turn {
                input: format!("ask {i}"),
                output: "ok".into(),
                ..Turn::default()
            }],
        },
        verdicts: vec![Verdict::new(
            "contains",
            gavel_core::CheckKind::Contains,
            status,
            "checked",
        )],
        reason: None,
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 1,
    }
}

async fn seed(store: &gavel_store::Store) {
    store
        .create_run(&RunRecord {
            id: RUN.into(),
            suite: "paged".into(),
            status: RunStatus::Completed,
            started_at: gavel_core::now_rfc3339(),
            finished_at: Some(gavel_core::now_rfc3339()),
            config: json!({}),
            planned: Some(N as u64),
        })
        .await
        .unwrap();
    let ids: Vec<String> = (0..N).map(|i| format!("case-{i:03}")).collect();
    let jsons: Vec<String> = ids
        .iter()
        .map(|id| json!({"id": id, "input": "hi"}).to_string())
        .collect();
    let cases: Vec<SnapshotCase<'_>> = ids
        .iter()
        .zip(&jsons)
        .map(|(id, json)| SnapshotCase {
            id,
            source: "paged.yaml:1",
            json,
        })
        .collect();
    store.append_cases(RUN, 0, &cases).await.unwrap();
    let executions: Vec<Execution> = (0..N).map(execution).collect();
    store.record_executions(RUN, &executions).await.unwrap();
}

async fn page(ui: &support::Ui, query: &str) -> Value {
    let (status, body) = ui.get(&format!("/api/runs/{RUN}{query}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_str(&body).unwrap()
}

#[tokio::test]
async fn a_run_is_read_a_page_at_a_time() {
    let ui = support::start(None).await;
    seed(&ui.store).await;

    // The first page: the whole run's counts, 100 executions by default,
    // the cases they ran, and where the next page starts.
    let first = page(&ui, "").await;
    assert_eq!(first["run"]["id"], RUN);
    assert_eq!(first["counts"]["total"], N);
    assert_eq!(first["counts"]["failed"], N.div_ceil(7));
    assert_eq!(first["executions"].as_array().unwrap().len(), 100);
    assert_eq!(first["cases"].as_array().unwrap().len(), 100);
    assert_eq!(first["page"]["limit"], 100);
    assert_eq!(first["page"]["matching"], N);
    assert!(first["page"]["next"].is_i64());

    // Followed to the end, the pages give every execution once, in order.
    let mut seen = Vec::new();
    let mut after = String::new();
    loop {
        let p = page(&ui, &format!("?limit=64{after}")).await;
        let executions = p["executions"].as_array().unwrap();
        assert!(executions.len() <= 64);
        seen.extend(
            executions
                .iter()
                .map(|e| e["case_id"].as_str().unwrap().to_owned()),
        );
        match p["page"]["next"].as_i64() {
            Some(next) => after = format!("&after={next}"),
            None => break,
        }
    }
    let expected: Vec<String> = (0..N).map(|i| format!("case-{i:03}")).collect();
    assert_eq!(seen, expected);
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), N);

    // Filtered by status and by text, counted over the whole run.
    let failed = page(&ui, "?status=fail&limit=500").await;
    let executions = failed["executions"].as_array().unwrap();
    assert_eq!(executions.len(), N.div_ceil(7));
    assert!(executions.iter().all(|e| e["status"] == "fail"));
    assert_eq!(failed["page"]["matching"], N.div_ceil(7));
    assert!(failed["page"]["next"].is_null());
    let found = page(&ui, "?q=CASE-14").await;
    assert_eq!(found["page"]["matching"], 10, "case-140 to case-149");

    // Bad paging is refused, naming the field.
    for (query, field) in [
        ("?limit=0", "limit"),
        ("?limit=501", "limit"),
        ("?status=passed", "status"),
    ] {
        let (status, body) = ui.get(&format!("/api/runs/{RUN}{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert!(body.contains(field), "{query}: {body}");
    }
    let (status, _) = ui
        .get("/api/runs/019a0000-0000-7000-8000-00000000dead")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
