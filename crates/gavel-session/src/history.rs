//! Stored runs side by side: two runs compared, and the trend over the latest.

use gavel_core::RunRecord;
use gavel_report::Comparison;
use gavel_report::trend::Trend;
use gavel_store::{Store, StoreError};

/// Two stored runs to compare and how many regressions are allowed; with the
/// `cli` feature, `gavel compare`'s arguments.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct RunPair {
    /// The baseline run: an id, a unique prefix of one, or `previous` (the run
    /// of the candidate's suite started before it).
    pub run_a: String,
    /// The candidate run: an id, a unique prefix, or `latest`.
    #[cfg_attr(feature = "cli", arg(default_value = "latest"))]
    pub run_b: String,
    /// Exit 1 when there are more regressions than this.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub max_regressions: usize,
}

impl RunPair {
    /// Finds both runs and compares them ([`compare`]).
    pub async fn compare(&self, store: &Store) -> Result<Comparison, StoreError> {
        let b = store.find_run(&self.run_b).await?;
        let a = match self.run_a.as_str() {
            "previous" => store.previous_of(&b).await?.ok_or_else(|| {
                StoreError::NotFound(format!(
                    "run `previous`: suite `{}` has no run before {}",
                    b.suite, b.id
                ))
            })?,
            reference => store.find_run(reference).await?,
        };
        compare(store, &a, &b).await
    }
}

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
