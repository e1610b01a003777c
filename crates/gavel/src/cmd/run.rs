//! `gavel run`: the session runs; this maps flags in and results out.

use std::sync::Arc;

use clap::Args;
use gavel::runner::CancellationToken;
use gavel_session::progress::Progress;
use gavel_session::{PreparedRun, RunConfig, Sinks};

use super::{EXIT_INFRA, EXIT_INTERRUPTED, EXIT_OK, ReportOutArgs, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    config: RunConfig,
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
    let mut config = args.config.clone();
    config.report = gavel::report::Detail::for_outputs(&args.out.outputs);
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
    let otel = match args.otel.sink(suite_otel.as_ref()) {
        Ok(sink) => sink,
        Err(e) => return Ok(super::export_otel::otel_error(&e)),
    };
    let sinks = Sinks::new().with(progress.clone());
    let finished = match gavel_otel::execute(prepared, sinks, otel, &cancel).await {
        Ok(f) => f,
        Err(e) => return Ok(super::export_otel::otel_error(&e)),
    };
    progress.finish();
    for note in &finished.notes {
        eprintln!("{note}");
    }
    let code = super::report::emit(&finished.report, &args.out, &args.config.gate)?;
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
    let gate = &args.config.gate;
    let detail = gavel::report::Detail::for_outputs(&args.out.outputs);
    let report = gavel_session::report::build(store, &run_id, None, gate, None, detail).await?;
    super::report::emit(&report, &args.out, gate)
}
