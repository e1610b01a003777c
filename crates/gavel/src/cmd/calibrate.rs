//! `gavel calibrate`: a judge over human-labelled sets, its agreement with people,
//! and the stored calibration run a suite can require before it gates.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use gavel::JudgeSettings;
use gavel::calibration::GatePolicy;
use gavel_session::ModelOptions;
use gavel_session::{CalibrateConfig, Calibrated};
use serde_json::json;

use super::{EXIT_INFRA, EXIT_OK, StoreArgs, print_load_errors, session_error};

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
    models: ModelOptions,
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
    let store = args.store.open().await?;
    let config = CalibrateConfig {
        files: args.files,
        labels: args.labels,
        criteria: args.criteria,
        length_baseline: args.baseline.is_some(),
        settings,
        limit: args.limit,
        policy: GatePolicy {
            min_items: args.min_items,
            min_coverage: args.min_coverage,
            ..GatePolicy::default()
        },
        use_cache: args.use_cache,
        jobs: args.jobs,
        models: args.models.clone(),
    };
    let print = |set: &Calibrated| {
        print!("{}", set.report.text());
        for e in set
            .report
            .results
            .iter()
            .filter_map(|r| r.error.as_ref())
            .take(3)
        {
            eprintln!("  without a verdict: {e}");
        }
        println!("  calibration run {}\n", set.id);
    };
    let sets = match gavel_session::calibrate(&config, &store, print).await {
        Ok(sets) => sets,
        Err(e) => return Ok(session_error(&e)),
    };
    if let Some(path) = &args.output {
        let reports: Vec<serde_json::Value> = sets
            .iter()
            .map(|set| {
                let mut value = serde_json::to_value(&set.report)?;
                value["calibration_id"] = json!(set.id);
                Ok(value)
            })
            .collect::<serde_json::Result<_>>()?;
        std::fs::write(path, serde_json::to_string_pretty(&reports)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(if sets.iter().all(|s| s.report.judged == 0) {
        EXIT_INFRA
    } else {
        EXIT_OK
    })
}

/// Reads `--min-coverage`: a share from 0 to 1.
fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("`{text}` is not a share from 0 to 1 (e.g. 0.95)")),
    }
}
