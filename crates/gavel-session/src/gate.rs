//! The calibration gate: a suite can require its judge to be calibrated.

use gavel_calibration::NotCalibrated;
use gavel_core::JudgeSettings;
use gavel_report::CalibrationGate;
use gavel_store::{Store, StoreError};

/// The calibration gate of a suite whose `judge.calibration` names a stored
/// calibration run (`None` when it names none): the run exists, was made with
/// this judge (`judge`, under `settings`: the same fingerprint), and qualifies
/// it ([`gavel_calibration::check_calibration`]).
pub async fn calibration(
    store: &Store,
    settings: &JudgeSettings,
    judge: Option<&str>,
) -> Result<Option<CalibrationGate>, StoreError> {
    let Some(required) = &settings.calibration else {
        return Ok(None);
    };
    let checked = match store.calibration(&required.id).await {
        Ok(run) => gavel_calibration::check_calibration(&run, required, judge, settings),
        Err(StoreError::NotFound(_)) => Err(NotCalibrated::Missing {
            id: required.id.clone(),
        }),
        Err(e) => return Err(e),
    };
    Ok(Some(CalibrationGate {
        id: required.id.clone(),
        passed: checked.is_ok(),
        reason: checked.err().map(|e| e.to_string()),
    }))
}
