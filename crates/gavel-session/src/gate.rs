//! The calibration gate: a suite can require its judge to be calibrated.

use gavel_core::JudgeSettings;
use gavel_report::CalibrationGate;
use gavel_store::{Store, StoreError};

/// The calibration gate of a suite whose `judge.calibration` names a stored
/// calibration run (`None` when it names none): the run exists, was made with
/// `judge`, and agreed with people at least 80%.
pub async fn calibration(
    store: &Store,
    settings: &JudgeSettings,
    judge: Option<&str>,
) -> Result<Option<CalibrationGate>, StoreError> {
    let Some(id) = &settings.calibration else {
        return Ok(None);
    };
    let checked = require_calibrated(store, id, judge).await?;
    Ok(Some(CalibrationGate {
        id: id.clone(),
        passed: checked.is_ok(),
        reason: checked.err(),
    }))
}

async fn require_calibrated(
    store: &Store,
    id: &str,
    judge: Option<&str>,
) -> Result<Result<(), String>, StoreError> {
    let run = match store.calibration(id).await {
        Ok(run) => run,
        Err(StoreError::NotFound(_)) => {
            return Ok(Err(format!(
                "judge.calibration `{id}`: no such calibration run in the store (run `gavel calibrate` first)"
            )));
        }
        Err(e) => return Err(e),
    };
    let pct = run
        .agreement
        .map_or("n/a".to_owned(), |a| format!("{:.1}%", a * 100.0));
    Ok(if Some(run.judge.as_str()) != judge {
        Err(format!(
            "judge.calibration `{id}` calibrated judge {} but this run's judge is {}",
            run.judge,
            judge.unwrap_or("none")
        ))
    } else if !run.fit_to_gate {
        Err(format!(
            "judge.calibration `{id}`: the judge agreed with people {pct} on {}, under 80%: not fit to gate",
            run.dataset
        ))
    } else {
        Ok(())
    })
}
