//! OpenTelemetry export: `gavel run --otel` sends a run as it happens;
//! `gavel export otel RUN_ID` sends a stored run. See docs/OTEL.md.

use std::sync::Arc;

use clap::{Args, Subcommand};
use gavel_core::otel::OtelSettings;
use gavel_otel::{Exporter, OtelSink, Protocol, Settings};
use gavel_session::{Finished, Sinks};

use gavel_session::GateConfig;

use super::{EXIT_INFRA, EXIT_OK, StoreArgs, plural};

/// Where and what to export (shared by `run --otel` and `export otel`).
#[derive(Debug, Clone, Args)]
pub(crate) struct OtelSettingsArgs {
    /// OTLP receiver base URL (default: OTEL_EXPORTER_OTLP_ENDPOINT, else
    /// localhost:4318 for HTTP, :4317 for gRPC). Headers come from OTEL_EXPORTER_OTLP_HEADERS.
    #[arg(long, value_name = "URL")]
    otel_endpoint: Option<String>,
    /// OTLP transport: http/protobuf (default), http/json or grpc.
    #[arg(long, value_name = "PROTOCOL", env = "OTEL_EXPORTER_OTLP_PROTOCOL", value_parser = parse_protocol)]
    otel_protocol: Option<Protocol>,
    /// Leave message texts and tool-call arguments and results out of the export.
    #[arg(long, env = "GAVEL_OTEL_REDACT")]
    otel_redact: bool,
    /// Send verdicts as log records only, not also as span events.
    #[arg(long)]
    otel_no_span_events: bool,
    /// Send no log records (for receivers without a logs endpoint, e.g. Phoenix).
    #[arg(long)]
    otel_no_logs: bool,
}

impl OtelSettingsArgs {
    /// Builds the exporter from the flags, each falling back on the suite's
    /// `otel` setting when not given (inside the runtime: a gRPC channel runs on it).
    fn exporter(&self, suite: Option<&OtelSettings>) -> anyhow::Result<Exporter> {
        let suite = suite.cloned().unwrap_or_default();
        Ok(Exporter::new(Settings {
            endpoint: self.otel_endpoint.clone().or(suite.endpoint),
            protocol: self.otel_protocol.or(suite.protocol).unwrap_or_default(),
            redact_content: self.otel_redact || suite.redact,
            span_events: !self.otel_no_span_events && suite.span_events,
            logs: !self.otel_no_logs && suite.logs,
        })?)
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
    /// `sinks` with the exporting sink added when `--otel` is given or the
    /// suite's `otel` setting turns export on, and that sink.
    pub(crate) fn attach(
        &self,
        sinks: Sinks,
        suite: Option<&OtelSettings>,
    ) -> anyhow::Result<(Sinks, Option<Arc<OtelSink>>)> {
        if !self.otel && suite.is_none() {
            return Ok((sinks, None));
        }
        let sink = Arc::new(OtelSink::new(self.settings.exporter(suite)?));
        Ok((sinks.with(sink.clone()), Some(sink)))
    }
}

/// Ends a live export with the run's gate and sends what is queued. A failed
/// export is reported and leaves the run's exit code alone: the run is stored.
pub(crate) async fn finish(sink: Option<Arc<OtelSink>>, finished: &Finished) {
    if let Some(sink) = sink {
        let gate = finished.report.gate.clone();
        if let Err(e) = sink.finish_async(finished.run.clone(), gate).await {
            eprintln!("warning: {e}");
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
    match gavel_otel::export_run(a.settings.exporter(None)?, &store, &a.run, &a.gate).await {
        Ok(count) => {
            eprintln!(
                "exported {count} execution{} to OpenTelemetry",
                plural(count)
            );
            Ok(EXIT_OK)
        }
        Err(gavel_otel::OtelError::Session(e)) => Ok(super::session_error(&e)),
        Err(e) => {
            eprintln!("error: {e}");
            Ok(EXIT_INFRA)
        }
    }
}

/// `--otel-protocol`.
fn parse_protocol(s: &str) -> Result<Protocol, String> {
    s.parse()
        .map_err(|e: gavel_otel::UnknownProtocol| e.to_string())
}
