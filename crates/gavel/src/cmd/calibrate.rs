//! `gavel calibrate`: a judge over human-labelled sets, its agreement with people,
//! and the stored calibration run a suite can require before it gates.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use gavel::calibration::{GatePolicy, Judge, LabelledTurn, Record, Report, judge_all, load_jsonl};
use gavel::checks::JudgeRuntime;
use gavel::store::Store;
use gavel::{CalibrationRun, Execution, ExecutionKey, JudgeSettings};
use gavel_models::{CacheStore, ModelPool, ModelSettings};
use serde_json::json;

use super::ModelArgs;
use super::{EXIT_BAD_INPUT, EXIT_INFRA, EXIT_OK, StoreArgs, print_load_errors};

#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    /// Labelled sets: JSONL files in the shared calibration schema (one report each).
    #[arg(required_unless_present = "labels")]
    files: Vec<PathBuf>,
    /// A label set in the store (people's labels of stored transcripts).
    #[arg(long, value_name = "SET")]
    labels: Option<String>,
    /// Criteria for store labels whose cases have none (or to override theirs).
    #[arg(long, requires = "labels")]
    criteria: Option<String>,
    /// Judge with a baseline instead of a model: `length` prefers longer answers.
    #[arg(long, value_parser = ["length"], conflicts_with = "judge")]
    baseline: Option<String>,
    /// Take judge settings (model, prices, templates, limits) from this suite file.
    #[arg(long, value_name = "FILE")]
    suite: Option<PathBuf>,
    /// Judge N items of each set, sampled across its strata (dataset × human
    /// label) in proportion, deterministically (seed 0): not its first N lines.
    #[arg(long)]
    limit: Option<usize>,
    /// Fewer labelled items than this make the judge not fit to gate.
    #[arg(long, value_name = "N", default_value_t = GatePolicy::default().min_items)]
    min_items: usize,
    /// Judge coverage (items with a verdict / items) under this makes the judge
    /// not fit to gate: abstentions count against it. 0 to 1.
    #[arg(long, value_name = "SHARE", default_value_t = GatePolicy::default().min_coverage,
          value_parser = share)]
    min_coverage: f64,
    /// Serve answers already in the model cache. Without it every item is a
    /// fresh call (answers are still written to the cache).
    #[arg(long)]
    use_cache: bool,
    /// Items judged at once.
    #[arg(short = 'j', long = "jobs", default_value_t = 4)]
    jobs: usize,
    /// Write the reports as JSON (an array, one per set).
    #[arg(short = 'o', long = "output", value_name = "FILE.json")]
    output: Option<PathBuf>,
    #[command(flatten)]
    models: ModelArgs,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn calibrate(args: CalibrateArgs) -> anyhow::Result<u8> {
    let settings = match &args.suite {
        Some(path) => match gavel::load::load_paths(std::slice::from_ref(path)) {
            Ok(suite) => suite.judge,
            Err(errors) => return Ok(print_load_errors(&errors)),
        },
        None => JudgeSettings::default(),
    };
    let store = Store::open(&args.store.db)
        .await
        .context("opening the store")?;
    let mut sets = Vec::new();
    for path in &args.files {
        match load_jsonl(path) {
            Ok(records) => sets.push((dataset_name(path), records)),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(EXIT_BAD_INPUT);
            }
        }
    }
    if let Some(set) = &args.labels {
        match store_records(&store, set, args.criteria.as_deref()).await? {
            Ok(records) => sets.push((set.clone(), records)),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(EXIT_BAD_INPUT);
            }
        }
    }
    let options = args.models.options();
    let choice = gavel_session::default_judge(&options, &settings).await;
    let choice_model = choice.model.clone();
    let (judge, judge_name) = match (&args.baseline, &choice.model) {
        (Some(b), _) => (Judge::Length, format!("baseline:{b}")),
        (None, Some(m)) => (
            Judge::Model {
                model: None,
                settings: Box::new(settings.clone()),
            },
            m.clone(),
        ),
        (None, None) => {
            eprintln!("error: {}", choice.why);
            eprintln!("       (or --baseline length for a model-free reference point)");
            return Ok(EXIT_BAD_INPUT);
        }
    };
    let pool = if args.use_cache {
        gavel_session::pool(options.cache, &settings, &store, false, args.jobs)
    } else {
        let cache: Arc<dyn CacheStore> = Arc::new(WriteOnlyCache(store.clone()));
        ModelPool::new(
            ModelSettings::from_judge(&settings),
            Some(cache),
            gavel_session::provider,
        )
    };
    let policy = GatePolicy {
        min_items: args.min_items,
        min_coverage: args.min_coverage,
        ..GatePolicy::default()
    };
    let judges = gavel_session::RunJudges {
        pool: &pool,
        default: choice,
    };
    let mut rt = JudgeRuntime::with_settings(&judges, &settings);
    rt.strict = true;

    let mut reports = Vec::new();
    let mut all_failed = true;
    for (name, mut records) in sets {
        let all = records.len();
        if let Some(limit) = args.limit {
            records = gavel::calibration::stratified_sample(records, limit, 0);
        }
        let fingerprint = match (&judge, &choice_model) {
            (Judge::Model { .. }, Some(model)) => {
                let kinds = gavel::calibration::template_kinds(&records);
                match gavel::calibration::fingerprint(model, &settings, &kinds) {
                    Ok(f) => Some(f),
                    Err(e) => {
                        eprintln!("error: {e}");
                        return Ok(EXIT_BAD_INPUT);
                    }
                }
            }
            _ => None,
        };
        let verdicts = judge_all(&judge, &records, &rt, args.jobs).await;
        let mut report = match Report::new(&name, &judge_name, &records, &verdicts, &policy) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(EXIT_BAD_INPUT);
            }
        };
        if records.len() < all {
            report.notes.push(format!(
                "--limit: {} of {all} items, sampled across strata (dataset × human label) in proportion, seed 0",
                records.len()
            ));
        }
        all_failed &= report.judged == 0;
        let id = uuid::Uuid::now_v7().to_string();
        store
            .save_calibration(&CalibrationRun {
                id: id.clone(),
                created_at: gavel::now_rfc3339(),
                dataset: name,
                judge: judge_name.clone(),
                items: report.items as u64,
                judged: report.judged as u64,
                agreement: report.agreement,
                kappa: report.kappa,
                fit_to_gate: report.fit_to_gate,
                fingerprint,
                report: serde_json::to_value(&report)?,
            })
            .await?;
        print!("{}", report.text());
        for e in report
            .results
            .iter()
            .filter_map(|r| r.error.as_ref())
            .take(3)
        {
            eprintln!("  without a verdict: {e}");
        }
        println!("  calibration run {id}\n");
        let mut value = serde_json::to_value(&report)?;
        value["calibration_id"] = json!(id);
        reports.push(value);
    }
    if let Some(path) = &args.output {
        std::fs::write(path, serde_json::to_string_pretty(&reports)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(if all_failed { EXIT_INFRA } else { EXIT_OK })
}

/// The file name without `.jsonl`.
fn dataset_name(path: &std::path::Path) -> String {
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
) -> anyhow::Result<Result<Vec<Record>, gavel::calibration::CalibrationError>> {
    let labels = store.labels(set).await?;
    if labels.is_empty() {
        return Ok(Err(gavel::calibration::CalibrationError::Set(format!(
            "the store holds no label in set `{set}`"
        ))));
    }
    let mut shown: HashMap<(String, String, String, u32), LabelledTurn> = HashMap::new();
    let runs: std::collections::BTreeSet<&str> = labels
        .iter()
        .filter_map(|l| l.execution.as_ref().map(|k| k.run_id.as_str()))
        .collect();
    for run in runs {
        let cases = store.cases(run).await?;
        let executions: Vec<Execution> = match store.executions(run).await {
            Ok(e) => e,
            Err(gavel::store::StoreError::NotFound(_)) => continue,
            Err(e) => return Err(e.into()),
        };
        for e in executions {
            let Some(last) = e.transcript.turns.last() else {
                continue;
            };
            let case = cases.iter().find(|c| c.id == e.case_id);
            shown.insert(
                (
                    run.to_owned(),
                    e.case_id.clone(),
                    e.target.clone(),
                    e.repeat_index,
                ),
                LabelledTurn {
                    input: last.input.clone(),
                    output: last.output.clone(),
                    criteria: case.and_then(|c| c.criteria.clone()),
                    reference: case.and_then(|c| c.expected_output.clone()),
                },
            );
        }
    }
    let find = |k: &ExecutionKey| {
        shown
            .get(&(
                k.run_id.clone(),
                k.case_id.clone(),
                k.target.clone(),
                k.repeat_index,
            ))
            .cloned()
    };
    Ok(gavel::calibration::records_from_labels(
        &labels, criteria, find,
    ))
}

/// Reads `--min-coverage`: a share from 0 to 1.
fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("`{text}` is not a share from 0 to 1 (e.g. 0.95)")),
    }
}

/// The model cache as `gavel calibrate` uses it by default: answers are kept,
/// never served, so a calibration always measures the judge afresh.
struct WriteOnlyCache(Store);

#[async_trait::async_trait]
impl CacheStore for WriteOnlyCache {
    async fn get(&self, _key: &str) -> Result<Option<String>, String> {
        Ok(None)
    }

    async fn put(&self, key: &str, model: &str, value: &str) -> Result<(), String> {
        self.0
            .cache_put(key, model, value)
            .await
            .map_err(|e| e.to_string())
    }
}
