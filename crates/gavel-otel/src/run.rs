//! A run with the export it asks for: how every front door (the binary, the
//! web UI, the library) adds the exporting sink and ends it.

use std::sync::Arc;

use gavel_core::otel::OtelSettings;
use gavel_runner::CancellationToken;
use gavel_session::{Finished, PreparedRun, Sinks};

use crate::{Exporter, OtelError, OtelSink, Requested, Settings};

/// The exporting sink of a run that `requested` or `suite` (the suite's `otel`
/// setting) asks to export, merged as [`Settings::resolve`] does; `None` when
/// neither asks. Call inside a Tokio runtime (a gRPC channel runs on it).
pub fn sink(
    requested: &Requested,
    suite: Option<&OtelSettings>,
) -> Result<Option<Arc<OtelSink>>, OtelError> {
    Settings::resolve(requested, suite)?
        .map(|s| Ok(Arc::new(OtelSink::new(Exporter::new(s)?))))
        .transpose()
}

/// A run executed with its export.
pub struct Executed {
    /// What the session returned: the run is stored and its status stands.
    pub finished: Finished,
    /// Why the export failed, when it did (an [`OtelError::Export`] naming
    /// the receiver): front doors warn, and `gavel run` exits 3 unless the
    /// gate failed (docs/OTEL.md).
    pub export_failed: Option<OtelError>,
}

/// Executes `prepared` with `sinks` and `export` (from [`sink`]), then ends the
/// export with the stored run and its gate.
pub async fn execute(
    prepared: PreparedRun,
    sinks: Sinks,
    export: Option<Arc<OtelSink>>,
    cancel: &CancellationToken,
) -> Result<Executed, OtelError> {
    let sinks = match &export {
        Some(sink) => sinks.with(sink.clone()),
        None => sinks,
    };
    let finished = prepared.execute(&sinks, cancel).await?;
    let export_failed = match export {
        Some(sink) => {
            let (run, gate) = (finished.run.clone(), finished.report.gate.clone());
            sink.finish_async(run, gate).await.err()
        }
        None => None,
    };
    Ok(Executed {
        finished,
        export_failed,
    })
}
