//! `gavel run`: load, plan, start targets, execute, store, report, gate.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use gavel::runner::{CancellationToken, ExecuteOptions, PlanOptions, PreparedTargets, Recorder};
use gavel::store::Store;
use gavel::{RunRecord, RunStatus};
use serde_json::json;

use super::models::{self, ModelArgs};
use super::progress::Progress;
use super::report::{StoreRecorder, emit};
use super::{
    EXIT_BAD_INPUT, EXIT_INFRA, EXIT_INTERRUPTED, ReportOutArgs, StoreArgs, print_load_errors,
};
use super::{distributed, library};

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Suite files or directories (several merge into one run).
    #[arg(required_unless_present = "suite")]
    paths: Vec<PathBuf>,
    /// A suite stored in the database (`gavel import`), merged with any files given
    /// (e.g. its targets); the run records the case versions it used.
    #[arg(long, value_name = "NAME")]
    suite: Option<String>,
    /// Executions at once.
    #[arg(short = 'j', long = "jobs", default_value_t = 4)]
    jobs: usize,
    /// Only cases with this tag (repeatable: any of them).
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// Leave out cases with this tag (repeatable).
    #[arg(long = "skip-tag", value_name = "TAG")]
    skip_tags: Vec<String>,
    /// Only cases whose id or name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Run every case this many times.
    #[arg(long)]
    repeat: Option<u32>,
    /// Per-execution timeout in seconds for cases that set none.
    #[arg(long, default_value_t = 120.0)]
    timeout: f64,
    /// Finish an interrupted run (an id, a unique prefix, or `latest`): recorded results are kept, errored ones run again.
    #[arg(long, value_name = "RUN_ID")]
    resume: Option<String>,
    /// The new run's id (a UUID; default: a fresh one). For tools that start runs.
    #[arg(long, hide = true, conflicts_with = "resume")]
    run_id: Option<uuid::Uuid>,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
    /// Enqueue the executions for `gavel worker` processes instead of running them here.
    #[arg(long, conflicts_with = "resume")]
    distributed: bool,
    /// With --distributed: print the run id and exit instead of waiting for the workers.
    #[arg(long, requires = "distributed")]
    detach: bool,
    #[command(flatten)]
    models: ModelArgs,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    out: ReportOutArgs,
}

pub(crate) async fn run(args: RunArgs) -> anyhow::Result<u8> {
    let open = || async {
        Store::open(&args.store.db)
            .await
            .context("opening the store")
    };
    // A stored suite is read before loading; otherwise bad files are reported
    // without touching the store.
    let scratch = tempfile::tempdir().context("creating a scratch directory")?;
    let mut paths = args.paths.clone();
    let mut versions = Vec::new();
    let mut store = None;
    if let Some(name) = &args.suite {
        let opened = open().await?;
        let (path, used) = library::materialize(&opened, name, scratch.path()).await?;
        paths.insert(0, path);
        versions = used;
        store = Some(opened);
    }
    let suite = match gavel::load::load_paths(&paths) {
        Ok(s) => s,
        Err(errors) => return Ok(print_load_errors(&errors)),
    };
    for w in &suite.warnings {
        eprintln!("warning: {w}");
    }
    if suite.targets.is_empty() {
        eprintln!(
            "error: no target is defined: give a suite file with `targets:` alongside the cases"
        );
        return Ok(EXIT_BAD_INPUT);
    }
    let store = match store {
        Some(store) => store,
        None => open().await?,
    };
    let (run, done) = match &args.resume {
        Some(id) => resume(&store, id).await?,
        None => (new_run(&suite, &args), Default::default()),
    };
    let options = PlanOptions {
        tags: args.tags.clone(),
        skip_tags: args.skip_tags.clone(),
        filter: args.filter.clone(),
        repeat: args.repeat,
        done,
    };
    let plan = match gavel::runner::plan(&suite, &options) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_BAD_INPUT);
        }
    };
    if plan.items.is_empty() && plan.already_done == 0 {
        eprintln!("error: no case matched the selection (tags, skip-tags, filter)");
        return Ok(EXIT_BAD_INPUT);
    }
    let baselines = models::baselines(&plan, &store).await?;
    let judge = models::default_judge(&args.models, &suite.judge).await;
    match &judge.model {
        Some(model) => eprintln!("judge: {model} ({})", judge.why),
        None => eprintln!("judge: none, judged checks will be skipped: {}", judge.why),
    }
    for w in models::hierarchy_warnings(&suite, judge.model.as_deref()) {
        eprintln!("warning: {w}");
    }
    let pool = models::pool(&args.models, &suite.judge, &store, true);
    if args.resume.is_none() {
        store.create_run(&run).await?;
        store.save_cases(&run.id, &plan.cases).await?;
        store.save_run_case_versions(&run.id, &versions).await?;
    }
    eprintln!(
        "run {} · suite {} · {} execution{} ({} already recorded) · store {}",
        run.id,
        suite.name,
        plan.items.len(),
        if plan.items.len() == 1 { "" } else { "s" },
        plan.already_done,
        gavel::store::mask_url(&args.store.db),
    );
    if args.distributed {
        return distributed::run(
            &store,
            &suite,
            &plan,
            &run.id,
            &args.out,
            args.detach,
            args.quiet,
        )
        .await;
    }
    // From here on the plan holds the only copy of the cases a run needs.
    let suite = gavel::Suite {
        cases: Vec::new(),
        ..suite
    };

    let targets =
        match PreparedTargets::prepare(&suite, &plan, &pool, &models::store_targets(&pool, &store))
            .await
        {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                store
                    .finish_run(&run.id, RunStatus::Failed, &gavel::now_rfc3339())
                    .await?;
                return Ok(EXIT_INFRA);
            }
        };
    let cancel = CancellationToken::new();
    watch_ctrl_c(cancel.clone());
    let mut progress = Progress::new(plan.items.len(), !args.quiet);
    let mut recorder = StoreRecorder(&store, &run.id);
    let mut recorders: [&mut dyn Recorder; 2] = [&mut recorder, &mut progress];
    let judges = models::RunJudges {
        pool: &pool,
        default: judge,
    };
    let embeddings = match super::embeddings::for_plan(
        args.models.embedder.as_deref(),
        &suite.judge,
        &plan,
        &store,
    ) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e:#}");
            store
                .finish_run(&run.id, RunStatus::Failed, &gavel::now_rfc3339())
                .await?;
            targets.stop().await;
            return Ok(EXIT_BAD_INPUT);
        }
    };
    let options = ExecuteOptions {
        embeddings: embeddings.as_ref(),
        concurrency: args.jobs,
        default_timeout: Duration::from_secs_f64(args.timeout.max(0.001)),
        judges: &judges,
        strict: args.models.strict,
        max_cost: args.models.max_cost.or(suite.judge.max_cost),
        ..ExecuteOptions::new(&suite.judge, &baselines)
    };
    let outcome =
        gavel::runner::execute(&plan, &targets, &run.id, &options, &cancel, &mut recorders).await;
    progress.finish();
    targets.stop().await;
    let status = match &outcome {
        Ok(r) if r.interrupted => RunStatus::Interrupted,
        Ok(r) if r.budget_stopped => RunStatus::BudgetStopped,
        Ok(_) => RunStatus::Completed,
        Err(_) => RunStatus::Failed,
    };
    store
        .finish_run(&run.id, status, &gavel::now_rfc3339())
        .await?;
    let calibration = match &suite.judge.calibration {
        None => None,
        Some(required) => {
            let checked = super::calibrate::require_calibrated(
                &store,
                required,
                judges.default.model.as_deref(),
                &suite.judge,
            )
            .await?;
            if let Err(why) = &checked {
                eprintln!("gate failed: {why}");
            }
            Some(gavel::report::CalibrationGate {
                id: required.id.clone(),
                passed: checked.is_ok(),
                reason: checked.err(),
            })
        }
    };
    // The report reads every result back from the store: free the run's plan and
    // models first, so the two are never held at once. A new run's cases, as
    // saved, come out of the plan; a resumed run's are read back.
    drop((pool, baselines, suite));
    let saved = match args.resume {
        None => Some(plan.into_cases()),
        Some(_) => {
            drop(plan);
            None
        }
    };
    let report_code = emit(&store, &run.id, saved, &args.out, calibration).await?;
    match outcome {
        Err(e) => {
            eprintln!("error: {e}");
            Ok(EXIT_INFRA)
        }
        Ok(r) if r.interrupted => {
            eprintln!(
                "interrupted: {} executions recorded; finish with `gavel run … --resume {}`",
                r.finished, run.id
            );
            Ok(EXIT_INTERRUPTED)
        }
        Ok(_) => Ok(report_code),
    }
}

fn new_run(suite: &gavel::Suite, args: &RunArgs) -> RunRecord {
    let targets: serde_json::Map<String, serde_json::Value> = suite
        .targets
        .iter()
        .map(|(name, spec)| (name.clone(), json!(spec.kind())))
        .collect();
    RunRecord {
        id: args.run_id.unwrap_or_else(uuid::Uuid::now_v7).to_string(),
        suite: suite.name.clone(),
        status: RunStatus::Running,
        started_at: gavel::now_rfc3339(),
        finished_at: None,
        config: json!({
            "files": suite.files,
            "tags": args.tags,
            "skip_tags": args.skip_tags,
            "filter": args.filter,
            "repeat": args.repeat,
            "jobs": args.jobs,
            "timeout_s": args.timeout,
            "min_pass_rate": args.out.min_pass_rate,
            "targets": targets,
        }),
    }
}

async fn resume(
    store: &Store,
    id: &str,
) -> anyhow::Result<(RunRecord, std::collections::HashSet<(String, String, u32)>)> {
    let run = if id == "latest" {
        store
            .latest_run()
            .await?
            .context("the store holds no run to resume")?
    } else {
        store.run(id).await?
    };
    // Executions that errored (target down, provider out) are run again; the new
    // result replaces the old one.
    let done = store
        .recorded_keys(&run.id)
        .await?
        .into_iter()
        .filter(|(_, status)| *status != gavel::Status::Error)
        .map(|(key, _)| key)
        .collect();
    Ok((run, done))
}

/// First Ctrl-C: stop gracefully (keep results, mark interrupted). Second: exit now.
fn watch_ctrl_c(cancel: CancellationToken) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ninterrupting: finishing the record; press Ctrl-C again to quit at once");
            cancel.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
        }
    });
}
