//! Times reading a whole run the way a report does, a page at a time: fills a
//! store with finished runs of N cases and N executions (one turn, one tool
//! call and one verdict each; one in 20 fails, one in 97 errors) and reads
//! each run's executions and snapshot cases in pages of
//! [`gavel_store::PAGE_SIZE`]. Prints figures; asserts nothing. Given a
//! store's URL it keeps the runs there: `gavel report` can then be timed on
//! them.
//!
//! ```text
//! cargo run -p gavel-store --example report_pages -- [URL] [N ...]
//! ```
//!
//! URL defaults to a new SQLite file in a temporary directory, N to 10000 and
//! 50000. Give a fresh PostgreSQL database to time that engine: each N adds a
//! run to the store.

use std::error::Error;
use std::time::Instant;

use gavel_core::{
    CheckKind, Execution, RunRecord, RunStatus, Status, ToolCall, Transcript, Turn, Verdict,
};
use gavel_store::{PAGE_SIZE, SnapshotCase, Store};
use serde_json::json;

/// Cases and executions written per transaction while filling.
const FILL_BATCH: usize = 1000;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let dir = tempfile::tempdir()?;
    let url = match args.next_if(|a| a.parse::<usize>().is_err()) {
        Some(url) => url,
        None => format!("sqlite://{}", dir.path().join("bench.db").display()),
    };
    let sizes: Vec<usize> = args.map(|a| a.parse()).collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() {
        vec![10_000, 50_000]
    } else {
        sizes
    };
    let store = Store::open(&url).await?;
    println!("store: {}", store.engine());
    for n in sizes {
        let run_id = uuid::Uuid::now_v7().to_string();
        let started = Instant::now();
        fill(&store, &run_id, n).await?;
        println!("{n} executions: filled in {:.1} s", secs(started));

        let started = Instant::now();
        let mut pages = store.execution_pages(&run_id, PAGE_SIZE).await?;
        let (mut count, mut read) = (0, 0);
        while let Some(page) = pages.next_page().await? {
            count += 1;
            read += page.len();
        }
        let elapsed = secs(started);
        println!(
            "  execution pages: {read} executions in {count} pages, {elapsed:.3} s \
             ({:.2} ms per page)",
            1000.0 * elapsed / f64::from(count.max(1))
        );

        let started = Instant::now();
        let mut pages = store.case_pages(&run_id, PAGE_SIZE).first_of_id();
        let (mut count, mut read) = (0, 0);
        while let Some(page) = pages.next_page().await? {
            count += 1;
            read += page.len();
        }
        let elapsed = secs(started);
        println!(
            "  case pages: {read} cases in {count} pages, {elapsed:.3} s \
             ({:.2} ms per page)",
            1000.0 * elapsed / f64::from(count.max(1))
        );
    }
    store.close().await;
    Ok(())
}

fn secs(since: Instant) -> f64 {
    since.elapsed().as_secs_f64()
}

/// A run of `n` cases, each with one execution.
async fn fill(store: &Store, run_id: &str, n: usize) -> Result<(), Box<dyn Error>> {
    store
        .create_run(&RunRecord {
            id: run_id.to_owned(),
            suite: "bench".to_owned(),
            status: RunStatus::Running,
            started_at: gavel_core::now_rfc3339(),
            finished_at: None,
            config: json!({}),
            planned: Some(u64::try_from(n)?),
        })
        .await?;
    let ids: Vec<String> = (0..n).map(|i| format!("case-{i:07}")).collect();
    let jsons: Vec<String> = ids
        .iter()
        .map(|id| json!({"id": id, "input": format!("ask {id}")}).to_string())
        .collect();
    for (page, chunk) in ids.chunks(FILL_BATCH).enumerate() {
        let cases: Vec<SnapshotCase<'_>> = chunk
            .iter()
            .enumerate()
            .map(|(i, id)| SnapshotCase {
                id,
                source: "bench.yaml:1",
                json: &jsons[page * FILL_BATCH + i],
            })
            .collect();
        store
            .append_cases(run_id, page * FILL_BATCH, &cases)
            .await?;
    }
    // Recorded last case first: report order is the snapshot's, not the recording's.
    let executions: Vec<Execution> = ids
        .iter()
        .enumerate()
        .rev()
        .map(|(i, id)| execution(id, i))
        .collect();
    for chunk in executions.chunks(FILL_BATCH) {
        store.record_executions(run_id, chunk).await?;
    }
    store
        .finish_run(run_id, RunStatus::Completed, &gavel_core::now_rfc3339())
        .await?;
    Ok(())
}

/// The execution of the `i`th case: one in 20 fails its check, one in 97
/// errors, the rest pass.
fn execution(case: &str, i: usize) -> Execution {
    let (status, verdict) = if i.is_multiple_of(97) {
        (Status::Error, Status::Skipped)
    } else if i.is_multiple_of(20) {
        (Status::Fail, Status::Fail)
    } else {
        (Status::Pass, Status::Pass)
    };
    Execution {
        case_id: case.to_owned(),
        case_name: case.to_owned(),
        target: "agent".to_owned(),
        repeat_index: 0,
        tags: vec!["bench".to_owned(), format!("shard-{}", i % 4)],
        status,
        score: Some(if status == Status::Pass { 1.0 } else { 0.0 }),
        transcript: Transcript {
            session_id: format!("session-{case}"),
            turns: vec![Turn {
                round: 0,
                input: format!("ask {case}"),
                output: "answer".to_owned(),
                response: None,
                tool_calls: vec![ToolCall {
                    name: "lookup".to_owned(),
                    arguments: json!({"q": case}),
                    result: None,
                    ..Default::default()
                }],
                model_calls: Vec::new(),
                latency_ms: 1,
                usage: None,
                failure: None,
                followup: false,
                branch: None,
                stream: None,
                harness_usage: None,
                attempts: None,
                agent: None,
                workspace: None,
            }],
        },
        verdicts: vec![Verdict::new(
            "contains",
            CheckKind::Contains,
            verdict,
            if verdict == Status::Pass {
                "found"
            } else {
                "`refund` not found in the answer"
            },
        )],
        reason: (status == Status::Error).then(|| "connection refused".to_owned()),
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 1,
    }
}
