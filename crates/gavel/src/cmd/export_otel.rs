//! OpenTelemetry export: `gavel run --otel` sends a run as it happens;
//! `gavel export otel RUN_ID` sends a stored run. See docs/OTEL.md.

use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};
use gavel_otel::{Exporter, OtelSink, Protocol, Settings};
use gavel_session::{Finished, Sinks};

use super::{EXIT_INFRA, EXIT_OK, StoreArgs};

/// Where and what to export (shared by `run --otel` and `export otel`).
#[derive(Debug, Clone, Args)]
pub(crate) struct OtelSettingsArgs {
    /// OTLP receiver base URL (default: OTEL_EXPORTER_OTLP_ENDPOINT, else
    /// localhost:4318 for HTTP, :4317 for gRPC). Headers come from OTEL_EXPORTER_OTLP_HEADERS.
    #[arg(long, value_name = "URL")]
    otel_endpoint: Option<String>,
    /// OTLP transport: http/protobuf, http/json or grpc.
    #[arg(long, value_name = "PROTOCOL", env = "OTEL_EXPORTER_OTLP_PROTOCOL", default_value = "http/protobuf", value_parser = parse_protocol)]
    otel_protocol: Protocol,
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
    /// Builds the exporter (inside the runtime: a gRPC channel runs on it).
    fn exporter(&self) -> anyhow::Result<Exporter> {
        Ok(Exporter::new(Settings {
            endpoint: self.otel_endpoint.clone(),
            protocol: self.otel_protocol,
            redact_content: self.otel_redact,
            span_events: !self.otel_no_span_events,
            logs: !self.otel_no_logs,
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
    /// `sinks` with the exporting sink added when `--otel` is given, and that sink.
    pub(crate) fn attach(&self, sinks: Sinks) -> anyhow::Result<(Sinks, Option<Arc<OtelSink>>)> {
        if !self.otel {
            return Ok((sinks, None));
        }
        let sink = Arc::new(OtelSink::new(self.settings.exporter()?));
        Ok((sinks.with(sink.clone()), Some(sink)))
    }
}

/// Ends a live export with the run's gate and sends what is queued. A failed
/// export is reported and leaves the run's exit code alone: the run is stored.
pub(crate) async fn finish(sink: Option<Arc<OtelSink>>, finished: &Finished) {
    let Some(sink) = sink else { return };
    let run = finished.run.clone();
    let gate = finished.report.gate.clone();
    let sent = tokio::task::spawn_blocking(move || sink.finish(&run, Some(&gate))).await;
    match sent {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("warning: {e}"),
        Err(e) => eprintln!("warning: OpenTelemetry export stopped: {e}"),
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
    /// Gate: minimum pass rate over decided cases, as 80, 80% or 0.8.
    #[arg(long, default_value = "80", value_parser = super::parse_rate)]
    min_pass_rate: f64,
    /// Gate only on cases with this tag (repeatable).
    #[arg(long = "gate-tag", value_name = "TAG")]
    gate_tags: Vec<String>,
    #[command(flatten)]
    settings: OtelSettingsArgs,
    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `gavel export`.
pub(crate) async fn export(args: ExportCommand) -> anyhow::Result<u8> {
    match args.to {
        Some(ExportTo::Otel(a)) => export_otel(a).await,
        None => super::library::export(args.suite).await,
    }
}

/// Sends stored run `args.run`, its executions and its gate.
async fn export_otel(args: ExportOtelArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let run = store.find_run(&args.run).await?;
    let gate = gavel_session::GateConfig {
        min_pass_rate: args.min_pass_rate,
        tags: args.gate_tags.clone(),
        require_judges: false,
    };
    let report = gavel_session::report::build(&store, &run.id, None, &gate, None).await?;
    let executions = store.executions(&run.id).await?;
    let exporter = args.settings.exporter()?;
    let count = executions.len();
    let sent = tokio::task::spawn_blocking(move || {
        gavel_otel::export_stored(exporter, &run, &executions, Some(&report.gate))
    })
    .await
    .context("OpenTelemetry export stopped")?;
    match sent {
        Ok(()) => {
            eprintln!(
                "exported {count} execution{} to OpenTelemetry",
                if count == 1 { "" } else { "s" }
            );
            Ok(EXIT_OK)
        }
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
