//! OpenTelemetry export: `gavel run --otel` sends a run as it happens;
//! `gavel export otel RUN_ID` sends a stored run. See docs/OTEL.md.

use clap::{Args, Subcommand};
use gavel_otel::{Exporter, OtelError, OtelSink, Protocol, Requested, Settings};
use gavel_session::GateConfig;

use super::{EXIT_BAD_INPUT, EXIT_INFRA, EXIT_OK, StoreArgs, plural};

/// Where and what to export (shared by `run --otel` and `export otel`).
#[derive(Debug, Clone, Args)]
pub(crate) struct OtelSettingsArgs {
    /// OTLP receiver base URL (default: OTEL_EXPORTER_OTLP_ENDPOINT, else
    /// localhost:4318 for HTTP, :4317 for gRPC). Headers come from OTEL_EXPORTER_OTLP_HEADERS.
    #[arg(long, value_name = "URL")]
    otel_endpoint: Option<String>,
    /// OTLP transport: http/protobuf (default), http/json or grpc (default:
    /// OTEL_EXPORTER_OTLP_PROTOCOL, else the suite's).
    #[arg(long, value_name = "PROTOCOL", value_parser = parse_protocol)]
    otel_protocol: Option<Protocol>,
    /// Leave message texts and tool-call arguments and results out of the
    /// export (also GAVEL_OTEL_REDACT=1).
    #[arg(long)]
    otel_redact: bool,
    /// Send verdicts as log records only, not also as span events.
    #[arg(long)]
    otel_no_span_events: bool,
    /// Send no log records (for receivers without a logs endpoint, e.g. Phoenix).
    #[arg(long)]
    otel_no_logs: bool,
}

impl OtelSettingsArgs {
    /// The request these flags make; `export` as given.
    fn requested(&self, export: bool) -> Requested {
        Requested {
            export,
            endpoint: self.otel_endpoint.clone(),
            protocol: self.otel_protocol,
            redact: self.otel_redact,
            no_span_events: self.otel_no_span_events,
            no_logs: self.otel_no_logs,
        }
    }
}

/// `gavel run`'s OpenTelemetry flags.
#[derive(Debug, Clone, Args)]
pub(crate) struct OtelArgs {
    /// Export the run to OpenTelemetry over OTLP as it happens: a trace per
    /// execution, verdicts as gen_ai.evaluation.result events (docs/OTEL.md).
    #[arg(long, conflicts_with = "distributed")]
    otel: bool,
    #[command(flatten)]
    settings: OtelSettingsArgs,
}

impl OtelArgs {
    /// The exporting sink when `--otel` is given or the suite's `otel` setting
    /// turns export on (inside the runtime: a gRPC channel runs on it).
    pub(crate) fn sink(
        &self,
        suite: Option<&gavel_core::otel::OtelSettings>,
    ) -> Result<Option<std::sync::Arc<OtelSink>>, OtelError> {
        gavel_otel::sink(&self.settings.requested(self.otel), suite)
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
    settings: OtelSettingsArgs,
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
    let settings = Settings::resolve(&a.settings.requested(true), None)?.unwrap_or_default();
    gavel_otel::export_run(Exporter::new(settings)?, store, &a.run, &a.gate).await
}

/// `--otel-protocol`.
fn parse_protocol(s: &str) -> Result<Protocol, String> {
    s.parse()
        .map_err(|e: gavel_otel::UnknownProtocol| e.to_string())
}
