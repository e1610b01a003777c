//! A stored run's report, with the gate applied.

use std::collections::VecDeque;

use gavel_core::Execution;
use gavel_report::{CalibrationGate, Detail, Report, ReportBuilder};
use gavel_store::{ExecutionPages, PAGE_SIZE, Store, StoreError};

use crate::config::StoredConfig;
use crate::{GateConfig, SessionError};

/// Builds the report of stored run `run_id`, keeping `detail`. Its cases and
/// executions are read a page at a time, in report order, and folded into the
/// report case by case: with [`Detail::Summary`] it holds only the outcomes its
/// summary lists and their cases. Judges are required when `gate` or the run's
/// stored configuration says so.
pub async fn build(
    store: &Store,
    run_id: &str,
    gate: &GateConfig,
    calibration: Option<CalibrationGate>,
    detail: Detail,
) -> Result<Report, SessionError> {
    let run = store.run(run_id).await?;
    let mut cases = store.case_pages(&run.id, PAGE_SIZE);
    if detail == Detail::Summary {
        cases = cases.first_of_id();
    }
    let mut executions = Ahead {
        pages: store.execution_pages(&run.id, PAGE_SIZE).await?,
        page: VecDeque::new(),
    };
    let stored = serde_json::from_value::<StoredConfig>(run.config.clone());
    let mut builder =
        ReportBuilder::new(run, gate.min_pass_rate, detail).gate_tags(gate.tags.clone());
    while let Some(page) = cases.next_page().await? {
        for case in page {
            let id = case.id.clone();
            builder.push_case(case);
            while let Some(execution) = executions.next(Some(&id)).await? {
                builder.push_execution(execution);
            }
        }
    }
    // Those whose case is not in the snapshot.
    while let Some(execution) = executions.next(None).await? {
        builder.push_execution(execution);
    }
    let mut report = builder.finish();
    if let Some(c) = calibration {
        report.gate = report.gate.clone().with_calibration(c);
    }
    if gate.require_judges || stored.is_ok_and(|s| s.require_judges) {
        report.require_judges();
    }
    Ok(report)
}

/// A run's executions in report order, one page read ahead.
struct Ahead {
    pages: ExecutionPages,
    page: VecDeque<Execution>,
}

impl Ahead {
    /// The next execution, when it is of case `id` (any case: `None`).
    async fn next(&mut self, id: Option<&str>) -> Result<Option<Execution>, StoreError> {
        while self.page.is_empty() {
            match self.pages.next_page().await? {
                Some(page) => self.page = page.into(),
                None => return Ok(None),
            }
        }
        let of_case = |e: &Execution| id.is_none_or(|id| e.case_id == id);
        Ok(self.page.pop_front_if(|e| of_case(e)))
    }
}
