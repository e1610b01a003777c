//! `gavel run`: the session runs; this maps flags in and results out.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use gavel_otel::OtelSink;
use gavel_session::progress::Progress;
use gavel_session::{PreparedRun, RunConfig, Sinks};

use gavel::load::SuiteSource;
use gavel::report::Outputs;

use super::{EXIT_BAD_INPUT, EXIT_INFRA, EXIT_INTERRUPTED, EXIT_OK, StoreLocation};

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
    store: StoreLocation,
    #[command(flatten)]
    out: Outputs,
    /// Export the run to OpenTelemetry over OTLP as it happens: a trace per
    /// execution, verdicts as gen_ai.evaluation.result events (docs/OTEL.md).
    #[arg(long, conflicts_with = "distributed")]
    otel: bool,
    #[command(flatten)]
    otel_settings: gavel_otel::Requested,
}

pub(crate) async fn run(args: RunArgs) -> anyhow::Result<u8> {
    let paths: Vec<PathBuf> = args
        .config
        .sources
        .suites
        .iter()
        .filter_map(|source| match source {
            SuiteSource::Path(path) => Some(path.clone()),
            SuiteSource::Text { .. } => None,
        })
        .collect();
    if super::promptfoo::refuse_run(&paths) {
        return Ok(EXIT_BAD_INPUT);
    }
    let store = args.store.open().await?;
    let code = run_in(&store, args).await;
    store.close().await;
    code
}

/// `gavel run` on an open store.
async fn run_in(store: &gavel::store::Store, args: RunArgs) -> anyhow::Result<u8> {
    let mut config = args.config.clone();
    if let Err(e) = args.out.writers() {
        eprintln!("error: {e}");
        return Ok(super::EXIT_BAD_INPUT);
    }
    config.report_files = args.out.files.clone();
    let prepared = match PreparedRun::new(store.clone(), config).await {
        Ok(p) => p,
        Err(e) => return Ok(super::session_error(&e)),
    };
    for note in prepared.notes() {
        eprintln!("{note}");
    }
    eprintln!("judge: {}", prepared.judge());
    eprintln!("{prepared} · store {}", args.store.shown());
    let suite_otel = prepared.suite().otel.clone();
    if args.distributed {
        if suite_otel.is_some() {
            eprintln!(
                "warning: the suite's `otel` setting is ignored: --distributed runs are exported with `gavel export otel RUN_ID`"
            );
        }
        return distributed(prepared, store, &args).await;
    }
    let cancel = super::cancel_on_ctrl_c(
        "interrupting: finishing the record; press Ctrl-C again to quit at once",
    );
    let progress = Arc::new(Progress::new(prepared.planned().0, !args.quiet));
    let requested = gavel_otel::Requested {
        export: args.otel,
        ..args.otel_settings.clone()
    };
    let otel = match gavel_otel::sink(&requested, suite_otel.as_ref()) {
        Ok(sink) => sink,
        Err(e) => return Ok(super::export_otel::otel_error(&e)),
    };
    let sinks = OtelSink::added(otel.as_ref(), Sinks::new().with(progress.clone()));
    let finished = prepared.execute(&sinks, &cancel).await;
    let export_failed = OtelSink::failure(otel.as_ref()).await;
    let finished = match finished {
        Ok(f) => f,
        Err(e) => {
            let code = super::session_error(&e);
            return Ok(super::export_otel::export_failed(
                export_failed.as_ref(),
                code,
            ));
        }
    };
    progress.finish();
    for note in &finished.notes {
        eprintln!("{note}");
    }
    let code = super::report::emit(&finished.report, &args.out)?;
    let code = super::export_otel::export_failed(export_failed.as_ref(), code);
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
    let cancel = super::cancel_on_ctrl_c("interrupted: workers stop taking this run's executions");
    gavel_session::wait(store, &run_id, &cancel, |p| {
        if !args.quiet {
            eprintln!("{p}");
        }
    })
    .await?;
    if cancel.is_cancelled() {
        return Ok(EXIT_INTERRUPTED);
    }
    let regate = gavel_session::Regate::default();
    let files = args.out.writers()?;
    let report = gavel_session::report::write(store, &run_id, &regate, files).await?;
    super::report::emit(&report, &args.out)
}
