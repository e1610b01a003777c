//! Distributed runs (DESIGN.md §9): a run's executions go to the store's queue,
//! `gavel worker` processes run them, and the starting side waits and reports.

use std::collections::BTreeMap;
use std::time::Duration;

use gavel_core::{ExecutionKey, RunStatus};
use gavel_runner::{CancellationToken, Plan};
use gavel_store::{QueueProgress, Store, StoreError};

use crate::SessionError;

/// How often a waiting run looks at the queue: a tenth of a second, so that
/// noticing the end adds at most that to a run.
const POLL: Duration = Duration::from_millis(100);

/// Enqueues the plan's executions of `run_id` in units: the executions one
/// comparison reads are one unit, so one worker runs them together and grades
/// them as a local run does. A case with a select-best check is one unit; the
/// executions of one case and repeat that a pairwise check compares across
/// targets are one unit.
pub(crate) async fn enqueue(store: &Store, plan: &Plan, run_id: &str) -> Result<(), SessionError> {
    let mut units: Vec<Vec<ExecutionKey>> = Vec::new();
    let mut grouped: BTreeMap<(String, Option<u32>), usize> = BTreeMap::new();
    for item in plan.items() {
        let item = item.map_err(SessionError::Plan)?;
        let key = item.key();
        let group = if !item.checks.select_best().is_empty() {
            (item.case.id.clone(), None)
        } else if item
            .checks
            .pairwise()
            .iter()
            .any(|spec| spec.against.target.is_some())
        {
            (item.case.id.clone(), Some(item.repeat_index))
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
    Ok(store.enqueue(run_id, &units).await?)
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::RunRecord;

    use super::*;

    #[tokio::test]
    async fn a_cancelled_wait_marks_the_run_interrupted() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let run = RunRecord {
            id: "019a0000-0000-7000-8000-0000000000a1".to_owned(),
            suite: "s".to_owned(),
            status: RunStatus::Running,
            started_at: gavel_core::now_rfc3339(),
            finished_at: None,
            config: serde_json::json!({}),
            planned: Some(1),
        };
        store.create_run(&run).await.unwrap();
        let unit = vec![ExecutionKey::new("c1", "agent", 0)];
        store.enqueue(&run.id, &[unit]).await.unwrap();
        let cancel = CancellationToken::new();
        let mut seen = Vec::new();
        let waited = wait(&store, &run.id, &cancel, |p| {
            seen.push(p.to_string());
            cancel.cancel();
        });
        assert_eq!(waited.await.unwrap(), RunStatus::Interrupted);
        assert_eq!(seen, ["[0/1] 0 running, 1 queued"]);
        assert_eq!(
            store.run(&run.id).await.unwrap().status,
            RunStatus::Interrupted
        );
    }
}
