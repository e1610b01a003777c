//! The calibration gate: a suite can require its judges to be calibrated.

use gavel_calibration::NotCalibrated;
use gavel_checks::JudgeUse;
use gavel_core::JudgeSettings;
use gavel_report::CalibrationGate;
use gavel_store::{Store, StoreError};

/// The calibration gate of a suite whose `judge.calibration` names stored
/// calibration runs (`None` when it names none): every run exists, and every
/// judge configuration the suite grades with (`uses`, each with the first case
/// using it; the default judge `judge`, under `settings`) is covered by one
/// that meets the suite's policy ([`gavel_calibration::check_calibration`]).
pub async fn calibration(
    store: &Store,
    settings: &JudgeSettings,
    judge: Option<&str>,
    uses: &[(String, JudgeUse)],
) -> Result<Option<CalibrationGate>, StoreError> {
    let Some(required) = &settings.calibration else {
        return Ok(None);
    };
    let mut runs = Vec::new();
    let mut missing = None;
    for id in required.ids() {
        match store.calibration(id).await {
            Ok(run) => runs.push(run),
            Err(StoreError::NotFound(_)) => {
                missing.get_or_insert_with(|| NotCalibrated::Missing { id: id.clone() });
            }
            Err(e) => return Err(e),
        }
    }
    let checked = match missing {
        Some(e) => Err(e),
        None => gavel_calibration::check_calibration(&runs, required, uses, judge, settings),
    };
    Ok(Some(CalibrationGate {
        id: required.ids().join(", "),
        passed: checked.is_ok(),
        reason: checked.err().map(|e| e.to_string()),
    }))
}
