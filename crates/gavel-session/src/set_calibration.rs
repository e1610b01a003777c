//! Calibrating a judge on a stored label set for someone who may not choose
//! the judge (the web UI's review queue): the model and its settings are what a
//! run of the stored suite would grade with (the server's judge and files, the
//! stored suite's settings), checked against what the operator allows, so a
//! calibration spends the server's credentials only as its runs do.

use std::collections::BTreeSet;

use gavel_calibration::GatePolicy;
use gavel_core::load::SuiteSource;
use gavel_core::{CalibrationRequirement, CalibrationRun, JudgeSettings};
use gavel_store::Store;
use serde::Serialize;

use crate::trust::Allowed;
use crate::{CalibrateConfig, ModelOptions, SessionError, Sources, default_judge};

/// A label set and the suite whose judge it calibrates.
#[derive(Debug, Clone)]
pub struct SetCalibration {
    /// The store's label set.
    pub set: String,
    /// The suite runs load: the operator's files and the stored suite.
    pub sources: Sources,
    /// The operator's model choices (the server's `--judge`, cache).
    pub models: ModelOptions,
    /// What the operator allows stored suites to ask for.
    pub allowed: Allowed,
}

/// What calibrating would do, before anything is spent.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationPlan {
    /// The judge model, as shown to people (URL passwords masked); `None` when
    /// none is configured.
    pub judge: Option<String>,
    /// Why there is no judge, when there is none.
    pub why_none: Option<String>,
    /// Items labelled in the set (single and pairwise).
    pub items: usize,
    /// Of those, pairs (each judged in both orders).
    pub pairs: usize,
    /// The most model calls it makes: answers in the model cache are reused.
    pub calls: usize,
    /// The suite's bar (`judge.calibration`, its defaults where it sets none).
    pub policy: GatePolicy,
}

/// A stored calibration run held to the suite's bar.
#[derive(Debug, Clone, Serialize)]
pub struct SetCalibrated {
    /// The stored calibration run and its report.
    pub run: CalibrationRun,
    /// Why it does not meet the suite's bar; empty when it does.
    pub shortfalls: Vec<String>,
}

impl SetCalibration {
    /// The judge, the set's size and the most calls calibrating would make.
    pub async fn plan(&self, store: &Store) -> Result<CalibrationPlan, SessionError> {
        let settings = self.settings(store).await?;
        let choice = default_judge(&self.models, &settings).await;
        let labels = store.labels(&self.set).await?;
        let items: BTreeSet<&str> = labels.iter().map(|l| l.item_id.as_str()).collect();
        let pairs: BTreeSet<&str> = labels
            .iter()
            .filter(|l| l.pair.is_some())
            .map(|l| l.item_id.as_str())
            .collect();
        Ok(CalibrationPlan {
            judge: choice.model.as_deref().map(gavel_store::mask_url),
            why_none: choice.model.is_none().then(|| choice.why.clone()),
            items: items.len(),
            pairs: pairs.len(),
            calls: if choice.model.is_some() {
                items.len() + pairs.len()
            } else {
                0
            },
            policy: GatePolicy::of(&requirement(&settings)),
        })
    }

    /// Calibrates (answers in the model cache reused), stores one calibration
    /// run per kind of label in the set, and holds each to the suite's bar.
    pub async fn run(&self, store: &Store) -> Result<Vec<SetCalibrated>, SessionError> {
        let settings = self.settings(store).await?;
        let config = CalibrateConfig {
            labels: Some(self.set.clone()),
            settings,
            use_cache: true,
            models: self.models.clone(),
            ..CalibrateConfig::default()
        };
        let made = crate::calibrate(&config, store, |_| {}).await?;
        let ids: Vec<&str> = made.iter().map(|c| c.id.as_str()).collect();
        self.held(store, &ids).await
    }

    /// The stored calibration runs `ids`, each held to the suite's bar.
    pub async fn held(
        &self,
        store: &Store,
        ids: &[&str],
    ) -> Result<Vec<SetCalibrated>, SessionError> {
        let bar = requirement(&self.settings(store).await?);
        let mut held = Vec::with_capacity(ids.len());
        for id in ids {
            let run = store.calibration(id).await?;
            held.push(SetCalibrated {
                shortfalls: gavel_calibration::shortfalls(&run, &bar),
                run,
            });
        }
        Ok(held)
    }

    /// The judge settings a run of the sources grades with, once the stored
    /// suite is known to ask for nothing the operator does not allow.
    async fn settings(&self, store: &Store) -> Result<JudgeSettings, SessionError> {
        let mut inputs: Vec<SuiteSource> = Vec::with_capacity(self.sources.suites.len() + 1);
        if let Some(name) = &self.sources.stored {
            self.allowed.check_stored(store, name).await?;
            inputs.push(crate::stored_source(store, name).await?);
        }
        inputs.extend(self.sources.suites.iter().cloned());
        let loading = gavel_core::load::open(&inputs);
        let judge = loading.suite().judge.clone();
        loading.cases(|_| {}).map_err(SessionError::Load)?;
        Ok(judge)
    }
}

/// The suite's calibration bar; the default bar when it sets none.
fn requirement(settings: &JudgeSettings) -> CalibrationRequirement {
    settings
        .calibration
        .clone()
        .unwrap_or_else(|| CalibrationRequirement::id(""))
}
