//! A stored run's report, with the gate applied.

use gavel_core::{Case, TagStats};
use gavel_report::{CalibrationGate, Gate, Report};
use gavel_store::Store;

use crate::config::StoredConfig;
use crate::{GateConfig, SessionError};

/// Builds the report of stored run `run_id`. `saved` are its cases as saved,
/// when the caller holds them; otherwise they are read back. Judges are
/// required when `gate` or the run's stored configuration says so.
pub async fn build(
    store: &Store,
    run_id: &str,
    saved: Option<Vec<Case>>,
    gate: &GateConfig,
    calibration: Option<CalibrationGate>,
) -> Result<Report, SessionError> {
    let run = store.run(run_id).await?;
    let cases = match saved {
        Some(cases) => cases,
        None => store.cases(run_id).await?,
    };
    let executions = store.executions(run_id).await?;
    let mut report = Report::new(run, cases, executions, gate.min_pass_rate);
    if !gate.tags.is_empty() {
        let gated = report
            .outcomes
            .iter()
            .filter(|o| o.tags.iter().any(|t| gate.tags.contains(t)));
        report.gate = Gate::new(
            &TagStats::of(gated),
            gate.min_pass_rate,
            report.gate.unfinished.clone(),
        );
    }
    if let Some(c) = calibration {
        report.gate = report.gate.clone().with_calibration(c);
    }
    let stored = serde_json::from_value::<StoredConfig>(report.run.config.clone());
    if gate.require_judges || stored.is_ok_and(|s| s.require_judges) {
        report.gate = report.gate.clone().with_required_judges(&report.outcomes);
    }
    Ok(report)
}
