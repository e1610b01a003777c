//! A calibration session: a judge over human-labelled sets, its agreement with
//! people, and one stored calibration run per set that a suite can require
//! before it gates (`gavel calibrate`).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gavel_calibration::{
    CalibrationError, Comparison, GatePolicy, Judge, LabelledTurn, Record, Report, judge_within,
    load_jsonl,
};
use gavel_checks::JudgeRuntime;
use gavel_core::{CalibrationRun, ExecutionRef, JudgeSettings};
use gavel_models::{CacheError, CacheStore, ModelPool, ModelSettings};
use gavel_store::{Store, StoreError};

use crate::{ModelOptions, RunJudges, SessionError, default_judge, pool, provider};

/// What to calibrate and how. With the `cli` feature, also `gavel calibrate`'s flags.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct CalibrateConfig {
    /// Labelled sets: JSONL files in the shared calibration schema (one report each).
    #[cfg_attr(feature = "cli", arg(required_unless_present = "labels"))]
    pub files: Vec<PathBuf>,
    /// A label set in the store (people's labels of stored transcripts).
    #[cfg_attr(feature = "cli", arg(long, value_name = "SET"))]
    pub labels: Option<String>,
    /// Criteria for store labels whose cases have none (or to override theirs).
    #[cfg_attr(feature = "cli", arg(long, requires = "labels"))]
    pub criteria: Option<String>,
    /// Judge with a baseline instead of a model: `length` prefers longer answers.
    #[cfg_attr(feature = "cli", arg(long, value_enum, conflicts_with = "judge"))]
    pub baseline: Option<Baseline>,
    /// Take judge settings (model, prices, templates, limits) from this suite file.
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub suite: Option<PathBuf>,
    /// Judge settings when no `suite` is given.
    #[cfg_attr(feature = "cli", arg(skip))]
    pub settings: JudgeSettings,
    /// Judge N items of each set, sampled across its strata (dataset × human
    /// label) in proportion, deterministically (seed 0): not its first N lines.
    #[cfg_attr(feature = "cli", arg(long))]
    pub limit: Option<usize>,
    /// Fewer labelled items than this make the report say "not fit to gate". It
    /// describes only: a suite's gate holds the stored figures to its own
    /// `judge.calibration` bar.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = GatePolicy::default().min_items))]
    pub min_items: usize,
    /// Judge coverage (items with a verdict / items) under this makes the report
    /// say "not fit to gate" (abstentions count against the judge); it does not
    /// lower a suite's own bar. 0 to 1.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SHARE",
        default_value_t = GatePolicy::default().min_coverage, value_parser = gavel_core::bounds::parse_share))]
    pub min_coverage: f64,
    /// Serve answers already in the model cache. Without it (and without
    /// `--cache-only`) every item is a fresh call (answers are still written to
    /// the cache).
    #[cfg_attr(feature = "cli", arg(long))]
    pub use_cache: bool,
    /// Items judged at once.
    #[cfg_attr(feature = "cli", arg(short = 'j', long = "jobs", default_value_t = 4, value_parser = gavel_core::bounds::parse_jobs))]
    pub jobs: usize,
    /// The judge flag, cache mode and strictness.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub models: ModelOptions,
}

impl Default for CalibrateConfig {
    fn default() -> Self {
        let policy = GatePolicy::default();
        CalibrateConfig {
            files: Vec::new(),
            labels: None,
            criteria: None,
            baseline: None,
            suite: None,
            settings: JudgeSettings::default(),
            limit: None,
            min_items: policy.min_items,
            min_coverage: policy.min_coverage,
            use_cache: false,
            jobs: 4,
            models: ModelOptions::default(),
        }
    }
}

/// A model-free reference judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Baseline {
    /// Prefers the longer answer.
    Length,
}

/// One set's calibration, as stored: `calibration_id` and the report's fields in JSON.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Calibrated {
    /// The stored calibration run's id.
    #[serde(rename = "calibration_id")]
    pub id: String,
    /// The agreement report.
    #[serde(flatten)]
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
    let loaded = match &config.suite {
        Some(path) => Some(
            gavel_core::load::load_paths(std::slice::from_ref(path))
                .map_err(SessionError::Load)?
                .judge,
        ),
        None => None,
    };
    let settings = loaded.as_ref().unwrap_or(&config.settings);
    let sets = read_sets(config, store).await?;
    let choice = default_judge(&config.models, settings).await;
    let model = choice.model.clone();
    let (judge, judge_name) = match (config.baseline.is_some(), &model) {
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
    let cached = config.use_cache || config.models.cache_only;
    let pool = if cached {
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

    let policy = GatePolicy {
        min_items: config.min_items,
        min_coverage: config.min_coverage,
        ..GatePolicy::default()
    };
    let max_cost = config.models.max_cost.or(settings.max_cost);
    let mut done = Vec::new();
    for (name, mut records) in sets {
        let all = records.len();
        if let Some(limit) = config.limit {
            records = gavel_calibration::stratified_sample(records, limit, 0);
        }
        let fingerprint = match (&judge, &model) {
            (Judge::Model { .. }, Some(model)) => {
                let kinds = gavel_calibration::template_kinds(&records);
                let scored = records
                    .iter()
                    .find(|r| r.task == gavel_calibration::Task::Pointwise)
                    .map(|r| gavel_calibration::pointwise_scale(&r.scale, settings));
                Some(gavel_calibration::fingerprint(
                    model, settings, &kinds, scored,
                )?)
            }
            _ => None,
        };
        let verdicts = judge_within(&judge, &records, &rt, config.jobs, max_cost).await;
        let mut report = Report::new(&name, &judge_name, &records, &verdicts, &policy)?;
        if let Some(max) = max_cost {
            let unjudged = verdicts
                .iter()
                .filter(|v| v.error.as_deref().is_some_and(|e| e.contains("--max-cost")))
                .count();
            if unjudged > 0 {
                report.notes.push(format!(
                    "--max-cost: the ${max} budget was spent; {unjudged} items were not judged and count as abstentions"
                ));
            }
        }
        if cached && matches!(judge, Judge::Model { .. }) {
            report.notes.push(if config.models.cache_only {
                "--cache-only: answers only from the model cache, no call made; items not in it are abstentions".to_owned()
            } else {
                "--use-cache: answers already in the model cache were served, not asked afresh".to_owned()
            });
        }
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

/// Sets two stored calibration runs of one labelled set side by side, with
/// paired tests on their common items (`gavel calibrate compare A B`). An
/// unknown id or runs of different sets are bad input.
pub async fn compare_calibrations(
    store: &Store,
    a: &str,
    b: &str,
) -> Result<Comparison, SessionError> {
    let a = stored(store, "RUN_A", a).await?;
    let b = stored(store, "RUN_B", b).await?;
    Ok(gavel_calibration::compare(&a, &b)?)
}

/// The calibration run `id`; an unknown id is a fault of the argument `which`.
async fn stored(store: &Store, which: &str, id: &str) -> Result<CalibrationRun, SessionError> {
    store.calibration(id).await.map_err(|e| match e {
        StoreError::NotFound(what) => {
            SessionError::config(which, format!("no {what} in the store"))
        }
        e => e.into(),
    })
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
        // A report holds one kind: a set of single and pairwise labels is two.
        let (pairs, single): (Vec<Record>, Vec<Record>) = records
            .into_iter()
            .partition(|r| r.task == gavel_calibration::Task::Pairwise);
        match (single.is_empty(), pairs.is_empty()) {
            (_, true) => sets.push((set.clone(), single)),
            (true, false) => sets.push((set.clone(), pairs)),
            (false, false) => {
                sets.push((set.clone(), single));
                sets.push((format!("{set}:pairwise"), pairs));
            }
        }
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
        .flat_map(|l| l.execution.iter().chain(&l.pair))
        .map(|k| k.run_id.as_str())
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
