//! Distributed runs (DESIGN.md §9): a run's executions go to the store's queue,
//! `gavel worker` processes run them, and the starting side waits and reports.

use std::collections::BTreeMap;
use std::time::Duration;

use gavel_core::{ExecutionKey, RunStatus};
use gavel_runner::{CancellationToken, Plan};
use gavel_store::{QueueProgress, Store, StoreError};

/// How often a waiting run looks at the queue: a tenth of a second, so that
/// noticing the end adds at most that to a run.
const POLL: Duration = Duration::from_millis(100);

/// Enqueues the plan's executions of `run_id` in units: the executions one
/// comparison reads are one unit, so one worker runs them together and grades
/// them as a local run does. A case with a select-best check is one unit; the
/// executions of one case and repeat that a pairwise check compares across
/// targets are one unit.
pub(crate) async fn enqueue(store: &Store, plan: &Plan, run_id: &str) -> Result<(), StoreError> {
    let mut units: Vec<Vec<ExecutionKey>> = Vec::new();
    let mut grouped: BTreeMap<(&str, Option<u32>), usize> = BTreeMap::new();
    for item in &plan.items {
        let key = item.key();
        let group = if !item.checks.select_best().is_empty() {
            (item.case.id.as_str(), None)
        } else if item
            .checks
            .pairwise()
            .iter()
            .any(|spec| spec.against.target.is_some())
        {
            (item.case.id.as_str(), Some(item.repeat_index))
        } else {
            units.push(vec![key]);
            continue;
        };
        match grouped.get(&group) {
            Some(&unit) => units[unit].push(key),
            None => {
                grouped.insert(group, units.len());
                units.push(vec![key]);
            }
        }
    }
    store.enqueue(run_id, &units).await
}

/// Waits until the run's queue is worked off (or the run stops), calling
/// `progress` whenever it moved. When `cancel` fires first, the run is marked
/// interrupted, so workers stop taking its executions. Returns the run's final
/// status.
pub async fn wait(
    store: &Store,
    run_id: &str,
    cancel: &CancellationToken,
    mut progress: impl FnMut(QueueProgress),
) -> Result<RunStatus, StoreError> {
    let mut last = None;
    loop {
        let now = store.queue_progress(run_id).await?;
        if last != Some(now) {
            progress(now);
            last = Some(now);
        }
        let status = store.run(run_id).await?.status;
        if status != RunStatus::Running {
            return Ok(status);
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = cancel.cancelled() => {
                let status = RunStatus::Interrupted;
                store.finish_run(run_id, status, &gavel_core::now_rfc3339()).await?;
                return Ok(status);
            }
        }
    }
}
