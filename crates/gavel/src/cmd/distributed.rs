//! `gavel run --distributed`: store the suite, enqueue the executions, and wait
//! while `gavel worker` processes run them.

use std::time::Duration;

use gavel::runner::Plan;
use gavel::store::Store;
use gavel::{RunStatus, Suite};

use super::report::emit;
use super::{EXIT_INTERRUPTED, EXIT_OK, ReportOutArgs};

/// How often the waiting run looks at the queue.
const POLL: Duration = Duration::from_millis(500);

/// Enqueues the plan's executions of `run_id`; unless `detach`, waits for the
/// workers to finish them, then reports like a local run.
pub(crate) async fn run(
    store: &Store,
    suite: &Suite,
    plan: &Plan,
    run_id: &str,
    out: &ReportOutArgs,
    detach: bool,
    quiet: bool,
) -> anyhow::Result<u8> {
    store.save_suite(run_id, suite).await?;
    let items: Vec<(String, String, u32)> = plan
        .items
        .iter()
        .map(|i| (i.case.id.clone(), i.target.clone(), i.repeat_index))
        .collect();
    store.enqueue(run_id, &items).await?;
    if detach {
        println!("{run_id}");
        return Ok(EXIT_OK);
    }
    eprintln!(
        "enqueued {} executions; waiting for `gavel worker` processes",
        items.len()
    );
    let mut last = None;
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {
                store.finish_run(run_id, RunStatus::Interrupted, &gavel::now_rfc3339()).await?;
                eprintln!("\ninterrupted: workers stop taking this run's executions");
                return Ok(EXIT_INTERRUPTED);
            }
            _ = tokio::time::sleep(POLL) => {}
        }
        let progress = store.queue_progress(run_id).await?;
        if !quiet && last != Some(progress) {
            eprintln!(
                "[{}/{}] {} running, {} queued",
                progress.done,
                progress.total(),
                progress.claimed,
                progress.queued
            );
            last = Some(progress);
        }
        if store.run(run_id).await?.status != RunStatus::Running {
            break;
        }
    }
    emit(store, run_id, None, out, None).await
}
