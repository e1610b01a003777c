//! `gavel run`: the session runs; this maps flags in and results out.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use gavel::runner::CancellationToken;
use gavel_session::{ModelOptions, PreparedRun, RunConfig, Selection, Sinks, Sources};

use super::progress::Progress;
use super::{EXIT_INFRA, EXIT_INTERRUPTED, EXIT_OK, ReportOutArgs, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Suite files or directories (several merge into one run).
    #[arg(required_unless_present_any = ["suite", "resume"])]
    paths: Vec<PathBuf>,
    /// A suite stored in the database (`gavel import`), merged with any files given
    /// (e.g. its targets); the run records the case versions it used.
    #[arg(long, value_name = "NAME")]
    suite: Option<String>,
    /// Executions at once.
    #[arg(short = 'j', long = "jobs", default_value_t = 4, value_parser = gavel::bounds::parse_jobs)]
    jobs: usize,
    #[command(flatten)]
    selection: Selection,
    /// Per-execution timeout in seconds for cases that set none.
    #[arg(long, default_value = "120", value_parser = gavel::bounds::parse_seconds)]
    timeout: Duration,
    /// Finish an interrupted run (an id, a unique prefix, or `latest`) from its
    /// stored suite snapshot: recorded results are kept, errored ones run again.
    /// Suite arguments given must match the snapshot.
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
    models: ModelOptions,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    out: ReportOutArgs,
    #[command(flatten)]
    otel: super::export_otel::OtelArgs,
}

pub(crate) async fn run(args: RunArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let code = run_in(&store, args).await;
    store.close().await;
    code
}

/// `gavel run` on an open store.
async fn run_in(store: &gavel::store::Store, args: RunArgs) -> anyhow::Result<u8> {
    let config = RunConfig {
        sources: Sources {
            stored: args.suite.clone(),
            ..Sources::paths(args.paths.clone())
        },
        selection: args.selection.clone(),
        jobs: args.jobs,
        timeout: args.timeout,
        models: args.models.clone(),
        gate: args.out.gate.clone(),
        run_id: args.run_id,
        resume: args.resume.clone(),
        report: gavel::report::Detail::for_outputs(&args.out.outputs),
    };
    let prepared = match PreparedRun::new(store.clone(), config).await {
        Ok(p) => p,
        Err(e) => return Ok(super::session_error(&e)),
    };
    for note in prepared.notes() {
        eprintln!("{note}");
    }
    let judge = prepared.judge();
    match &judge.model {
        Some(model) => eprintln!("judge: {} ({})", gavel::store::mask_url(model), judge.why),
        None => eprintln!("judge: none, judged checks will be skipped: {}", judge.why),
    }
    let (planned, done) = prepared.planned();
    eprintln!(
        "run {} · suite {} · {planned} execution{} ({done} already recorded) · store {}",
        prepared.run_id(),
        prepared.suite().name,
        super::plural(planned),
        gavel::store::mask_url(&args.store.db),
    );
    let suite_otel = prepared.suite().otel.clone();
    if args.distributed {
        if suite_otel.is_some() {
            eprintln!(
                "warning: the suite's `otel` setting is ignored: --distributed runs are exported with `gavel export otel RUN_ID`"
            );
        }
        return distributed(prepared, store, &args).await;
    }
    let cancel = CancellationToken::new();
    super::watch_ctrl_c(cancel.clone());
    let progress = Arc::new(Progress::new(planned, !args.quiet));
    let (sinks, otel) = args
        .otel
        .attach(Sinks::new().with(progress.clone()), suite_otel.as_ref())?;
    let finished = match prepared.execute(&sinks, &cancel).await {
        Ok(f) => f,
        Err(e) => return Ok(super::session_error(&e)),
    };
    progress.finish();
    for note in &finished.notes {
        eprintln!("{note}");
    }
    super::export_otel::finish(otel, &finished).await;
    let code = super::report::emit(&finished.report, &args.out)?;
    if let Some(e) = &finished.error {
        eprintln!("error: {e}");
        return Ok(EXIT_INFRA);
    }
    match finished.outcome {
        Some(r) if r.interrupted => {
            eprintln!(
                "interrupted: {} executions recorded; finish with `gavel run --resume {}`",
                r.finished, finished.run.id
            );
            Ok(EXIT_INTERRUPTED)
        }
        _ => Ok(code),
    }
}

/// Enqueues the run for workers; unless detached, waits and reports.
async fn distributed(
    prepared: PreparedRun,
    store: &gavel::store::Store,
    args: &RunArgs,
) -> anyhow::Result<u8> {
    let run_id = match prepared.enqueue().await {
        Ok(id) => id,
        Err(e) => return Ok(super::session_error(&e)),
    };
    if args.detach {
        println!("{run_id}");
        return Ok(EXIT_OK);
    }
    eprintln!("enqueued; waiting for `gavel worker` processes");
    let quiet = args.quiet;
    tokio::select! {
        status = gavel_session::wait(store, &run_id, |p| {
            if !quiet {
                eprintln!("[{}/{}] {} running, {} queued", p.done, p.total(), p.claimed, p.queued);
            }
        }) => { status?; }
        _ = tokio::signal::ctrl_c() => {
            store.finish_run(&run_id, gavel::RunStatus::Interrupted, &gavel::now_rfc3339()).await?;
            eprintln!("\ninterrupted: workers stop taking this run's executions");
            return Ok(EXIT_INTERRUPTED);
        }
    }
    let detail = gavel::report::Detail::for_outputs(&args.out.outputs);
    let report =
        gavel_session::report::build(store, &run_id, None, &args.out.gate, None, detail).await?;
    super::report::emit(&report, &args.out)
}
