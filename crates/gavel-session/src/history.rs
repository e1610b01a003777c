//! Stored runs side by side: two runs compared, and the trend over the latest.

use gavel_core::RunRecord;
use gavel_report::Comparison;
use gavel_report::trend::Trend;
use gavel_store::{Store, StoreError};

/// Compares stored run `b` (the candidate) with `a` (the baseline).
pub async fn compare(
    store: &Store,
    a: &RunRecord,
    b: &RunRecord,
) -> Result<Comparison, StoreError> {
    Ok(Comparison::new(
        a,
        store.executions(&a.id).await?,
        &store.cases(&a.id).await?,
        b,
        store.executions(&b.id).await?,
        &store.cases(&b.id).await?,
    ))
}

/// Pass rate and mean score per suite, tag, target and judge model over the
/// latest `last` runs.
pub async fn trend(store: &Store, last: u32) -> Result<Trend, StoreError> {
    let mut runs = Vec::new();
    for run in store.runs(last).await? {
        let executions = store.executions(&run.id).await?;
        runs.push((run, executions));
    }
    Ok(Trend::new(runs))
}
