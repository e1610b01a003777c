//! A calibration session: a judge over human-labelled sets, its agreement with
//! people, and one stored calibration run per set that a suite can require
//! before it gates (`gavel calibrate`).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gavel_calibration::{
    CalibrationError, GatePolicy, Judge, LabelledTurn, Record, Report, judge_all, load_jsonl,
};
use gavel_checks::JudgeRuntime;
use gavel_core::{CalibrationRun, ExecutionRef, JudgeSettings};
use gavel_models::{CacheError, CacheStore, ModelPool, ModelSettings};
use gavel_store::{Store, StoreError};

use crate::{ModelOptions, RunJudges, SessionError, default_judge, pool, provider};

/// What to calibrate and how.
#[derive(Debug, Clone, Default)]
pub struct CalibrateConfig {
    /// Labelled sets: JSONL files in the shared calibration schema.
    pub files: Vec<PathBuf>,
    /// A label set in the store (people's labels of stored transcripts).
    pub labels: Option<String>,
    /// Criteria for store labels whose cases have none (or to override theirs).
    pub criteria: Option<String>,
    /// Judge with the length baseline (prefers longer answers) instead of a model.
    pub length_baseline: bool,
    /// Judge settings: model, prices, templates, limits.
    pub settings: JudgeSettings,
    /// Judge this many items of each set, sampled across its strata.
    pub limit: Option<usize>,
    /// When a judge is fit to gate.
    pub policy: GatePolicy,
    /// Serve answers already in the model cache (otherwise every call is fresh).
    pub use_cache: bool,
    /// Items judged at once.
    pub jobs: usize,
    /// The judge flag, cache mode and strictness.
    pub models: ModelOptions,
}

/// One set's calibration, as stored.
#[derive(Debug, Clone)]
pub struct Calibrated {
    /// The stored calibration run's id.
    pub id: String,
    /// The agreement report.
    pub report: Report,
}

/// Judges every set of `config`, stores one calibration run per set and hands
/// each to `on_set` as soon as it is stored. Sets are read before any judge call,
/// so a bad file is refused before anything is spent.
pub async fn calibrate(
    config: &CalibrateConfig,
    store: &Store,
    mut on_set: impl FnMut(&Calibrated),
) -> Result<Vec<Calibrated>, SessionError> {
    let sets = read_sets(config, store).await?;
    let settings = &config.settings;
    let choice = default_judge(&config.models, settings).await;
    let model = choice.model.clone();
    let (judge, judge_name) = match (config.length_baseline, &model) {
        (true, _) => (Judge::Length, "baseline:length".to_owned()),
        (false, Some(m)) => (
            Judge::Model {
                model: None,
                settings: Box::new(settings.clone()),
            },
            m.clone(),
        ),
        (false, None) => {
            return Err(SessionError::config(
                "--judge",
                format!(
                    "{} (or --baseline length for a model-free reference point)",
                    choice.why
                ),
            ));
        }
    };
    let pool = if config.use_cache {
        pool(config.models.cache(), settings, store, false, config.jobs)
    } else {
        let cache: Arc<dyn CacheStore> = Arc::new(WriteOnlyCache(store.clone()));
        ModelPool::new(ModelSettings::from_judge(settings), Some(cache), provider)
    };
    let judges = RunJudges {
        pool: &pool,
        default: choice,
    };
    let mut rt = JudgeRuntime::with_settings(&judges, settings);
    rt.strict = true;

    let mut done = Vec::new();
    for (name, mut records) in sets {
        let all = records.len();
        if let Some(limit) = config.limit {
            records = gavel_calibration::stratified_sample(records, limit, 0);
        }
        let fingerprint = match (&judge, &model) {
            (Judge::Model { .. }, Some(model)) => {
                let kinds = gavel_calibration::template_kinds(&records);
                Some(gavel_calibration::fingerprint(model, settings, &kinds)?)
            }
            _ => None,
        };
        let verdicts = judge_all(&judge, &records, &rt, config.jobs).await;
        let mut report = Report::new(&name, &judge_name, &records, &verdicts, &config.policy)?;
        if records.len() < all {
            report.notes.push(format!(
                "--limit: {} of {all} items, sampled across strata (dataset × human label) in proportion, seed 0",
                records.len()
            ));
        }
        let id = uuid::Uuid::now_v7().to_string();
        store
            .save_calibration(&CalibrationRun {
                id: id.clone(),
                created_at: gavel_core::now_rfc3339(),
                dataset: name,
                judge: judge_name.clone(),
                items: report.items as u64,
                judged: report.judged as u64,
                agreement: report.agreement,
                kappa: report.kappa,
                fit_to_gate: report.fit_to_gate,
                fingerprint,
                report: serde_json::to_value(&report).map_err(|e| StoreError::Invalid {
                    what: "the calibration report".into(),
                    message: e.to_string(),
                })?,
            })
            .await?;
        let set = Calibrated { id, report };
        on_set(&set);
        done.push(set);
    }
    Ok(done)
}

/// Every labelled set of `config`, named: the files by their stem, the store's
/// set by its name.
async fn read_sets(
    config: &CalibrateConfig,
    store: &Store,
) -> Result<Vec<(String, Vec<Record>)>, SessionError> {
    let mut sets = Vec::new();
    for path in &config.files {
        sets.push((dataset_name(path), load_jsonl(path)?));
    }
    if let Some(set) = &config.labels {
        let records = store_records(store, set, config.criteria.as_deref()).await?;
        sets.push((set.clone(), records));
    }
    Ok(sets)
}

/// The file name without `.jsonl`.
fn dataset_name(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// The store's label set as records, each with its execution's last turn.
async fn store_records(
    store: &Store,
    set: &str,
    criteria: Option<&str>,
) -> Result<Vec<Record>, SessionError> {
    let labels = store.labels(set).await?;
    if labels.is_empty() {
        return Err(
            CalibrationError::Set(format!("the store holds no label in set `{set}`")).into(),
        );
    }
    let mut shown: HashMap<ExecutionRef, LabelledTurn> = HashMap::new();
    let runs: BTreeSet<&str> = labels
        .iter()
        .filter_map(|l| l.execution.as_ref().map(|k| k.run_id.as_str()))
        .collect();
    for run in runs {
        let cases = store.cases(run).await?;
        let executions = match store.executions(run).await {
            Ok(e) => e,
            Err(StoreError::NotFound(_)) => continue,
            Err(e) => return Err(e.into()),
        };
        for e in executions {
            let Some(last) = e.transcript.turns.last() else {
                continue;
            };
            let case = cases.iter().find(|c| c.id == e.case_id);
            let key = ExecutionRef {
                run_id: run.to_owned(),
                key: e.key(),
            };
            let turn = LabelledTurn {
                input: last.input.clone(),
                output: last.output.clone(),
                criteria: case.and_then(|c| c.criteria.clone()),
                reference: case.and_then(|c| c.expected_output.clone()),
            };
            shown.insert(key, turn);
        }
    }
    Ok(gavel_calibration::records_from_labels(
        &labels,
        criteria,
        |k| shown.get(k).cloned(),
    )?)
}

/// The model cache as a calibration uses it by default: answers are kept, never
/// served, so a calibration always measures the judge afresh.
struct WriteOnlyCache(Store);

#[async_trait::async_trait]
impl CacheStore for WriteOnlyCache {
    async fn get(&self, _key: &str) -> Result<Option<String>, CacheError> {
        Ok(None)
    }

    async fn put(&self, key: &str, model: &str, value: &str) -> Result<(), CacheError> {
        self.0
            .cache_put(key, model, value)
            .await
            .map_err(CacheError::new)
    }
}
