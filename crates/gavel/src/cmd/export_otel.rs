//! OpenTelemetry export: `gavel run --otel` sends a run as it happens;
//! `gavel export otel RUN_ID` sends a stored run. See docs/OTEL.md.

use clap::{Args, Subcommand};
use gavel_otel::{OtelError, Requested};
use gavel_session::Regate;

use super::{EXIT_INFRA, EXIT_OK, StoreLocation, plural};

/// Prints an export that could not start or finish; its exit code.
pub(crate) fn otel_error(e: &OtelError) -> u8 {
    if let OtelError::Session(e) = e {
        return super::session_error(e);
    }
    eprintln!("error: {e}");
    super::refused(e.is_bad_input())
}

/// Warns of an export that failed (it names the receiver and the error) and
/// returns the exit code with it: a run's `code` of 0 becomes 3; a failed gate
/// (1) or any other code stands.
pub(crate) fn export_failed(failed: Option<&OtelError>, code: u8) -> u8 {
    match failed {
        Some(e) => {
            eprintln!("warning: {e}");
            match code {
                EXIT_OK => EXIT_INFRA,
                other => other,
            }
        }
        None => code,
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
    Otel {
        /// A run id, a unique prefix of one, `latest` or `previous`.
        run: String,
        #[command(flatten)]
        gate: Regate,
        #[command(flatten)]
        settings: Requested,
        #[command(flatten)]
        store: StoreLocation,
    },
}

/// Runs `gavel export`.
pub(crate) async fn export(args: ExportCommand) -> anyhow::Result<u8> {
    let Some(ExportTo::Otel {
        run,
        gate,
        settings,
        store,
    }) = args.to
    else {
        return super::library::export(args.suite).await;
    };
    let store = store.open().await?;
    match gavel_otel::export_run(&settings, &store, &run, &gate).await {
        Ok(count) => {
            eprintln!(
                "exported {count} execution{} to OpenTelemetry",
                plural(count)
            );
            Ok(EXIT_OK)
        }
        Err(e @ OtelError::Export { .. }) => Ok(export_failed(Some(&e), EXIT_OK)),
        Err(e) => Ok(otel_error(&e)),
    }
}
