//! A stored run's report, with the gate applied.

use gavel_core::Case;
use gavel_report::{CalibrationGate, Detail, Report, ReportBuilder};
use gavel_store::{PAGE_SIZE, Store};

use crate::config::StoredConfig;
use crate::{GateConfig, SessionError};

/// Builds the report of stored run `run_id`, keeping `detail`. `saved` are its
/// cases as saved, when the caller holds them; otherwise they are read back.
/// Executions are read a page at a time and folded into the report, so with
/// [`Detail::Summary`] it holds only the outcomes its summary lists. Judges are
/// required when `gate` or the run's stored configuration says so.
pub async fn build(
    store: &Store,
    run_id: &str,
    saved: Option<Vec<Case>>,
    gate: &GateConfig,
    calibration: Option<CalibrationGate>,
    detail: Detail,
) -> Result<Report, SessionError> {
    let run = store.run(run_id).await?;
    let cases = match saved {
        Some(cases) => cases,
        None => store.cases(&run.id).await?,
    };
    let mut pages = store.execution_pages(&run.id, PAGE_SIZE).await?;
    let stored = serde_json::from_value::<StoredConfig>(run.config.clone());
    let mut builder =
        ReportBuilder::new(run, cases, gate.min_pass_rate, detail).gate_tags(gate.tags.clone());
    while let Some(page) = pages.next_page().await? {
        for execution in page {
            builder.push_execution(execution);
        }
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
