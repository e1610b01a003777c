//! OpenTelemetry export: `gavel run --otel` sends a run as it happens;
//! `gavel export otel RUN_ID` sends a stored run. See docs/OTEL.md.

use clap::{Args, Subcommand};
use gavel_otel::{Exporter, OtelError, OtelSink, Requested, Settings};
use gavel_session::GateConfig;

use super::{EXIT_BAD_INPUT, EXIT_INFRA, EXIT_OK, StoreArgs, plural};

/// `gavel run`'s OpenTelemetry flags.
#[derive(Debug, Clone, Args)]
pub(crate) struct OtelArgs {
    /// Export the run to OpenTelemetry over OTLP as it happens: a trace per
    /// execution, verdicts as gen_ai.evaluation.result events (docs/OTEL.md).
    #[arg(long, conflicts_with = "distributed")]
    otel: bool,
    #[command(flatten)]
    settings: Requested,
}

impl OtelArgs {
    /// The exporting sink when `--otel` is given or the suite's `otel` setting
    /// turns export on (inside the runtime: a gRPC channel runs on it).
    pub(crate) fn sink(
        &self,
        suite: Option<&gavel_core::otel::OtelSettings>,
    ) -> Result<Option<std::sync::Arc<OtelSink>>, OtelError> {
        let requested = Requested {
            export: self.otel,
            ..self.settings.clone()
        };
        gavel_otel::sink(&requested, suite)
    }
}

/// Prints an export that could not start or finish; its exit code.
pub(crate) fn otel_error(e: &OtelError) -> u8 {
    match e {
        OtelError::Session(e) => super::session_error(e),
        e => {
            eprintln!("error: {e}");
            if e.is_bad_input() {
                EXIT_BAD_INPUT
            } else {
                EXIT_INFRA
            }
        }
    }
}

/// `gavel export`: a stored suite as YAML, or a stored run to OpenTelemetry.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct ExportCommand {
    #[command(subcommand)]
    to: Option<ExportTo>,
    #[command(flatten)]
    suite: super::library::ExportArgs,
}

#[derive(Debug, Subcommand)]
enum ExportTo {
    /// Send a stored run to OpenTelemetry over OTLP (docs/OTEL.md).
    Otel(ExportOtelArgs),
}

#[derive(Debug, Args)]
struct ExportOtelArgs {
    /// A run id, a unique prefix of one, `latest` or `previous`.
    run: String,
    #[command(flatten)]
    gate: GateConfig,
    #[command(flatten)]
    settings: Requested,
    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `gavel export`.
pub(crate) async fn export(args: ExportCommand) -> anyhow::Result<u8> {
    let a = match args.to {
        Some(ExportTo::Otel(a)) => a,
        None => return super::library::export(args.suite).await,
    };
    let store = a.store.open().await?;
    match export_stored(&a, &store).await {
        Ok(count) => {
            eprintln!(
                "exported {count} execution{} to OpenTelemetry",
                plural(count)
            );
            Ok(EXIT_OK)
        }
        Err(e) => Ok(otel_error(&e)),
    }
}

/// Sends the stored run `a` names; how many executions were sent.
async fn export_stored(
    a: &ExportOtelArgs,
    store: &gavel::store::Store,
) -> Result<usize, OtelError> {
    let requested = Requested {
        export: true,
        ..a.settings.clone()
    };
    let settings = Settings::resolve(&requested, None)?.unwrap_or_default();
    gavel_otel::export_run(Exporter::new(settings)?, store, &a.run, &a.gate).await
}
