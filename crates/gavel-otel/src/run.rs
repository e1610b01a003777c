//! A run with the export it asks for: how every front door (the binary, the
//! web UI, the library) adds the exporting sink and ends it.

use std::sync::Arc;

use gavel_core::otel::OtelSettings;
use gavel_runner::CancellationToken;
use gavel_session::{Finished, Note, PreparedRun, Sinks};

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

/// Executes `prepared` with `sinks` and `export` (from [`sink`]), then ends the
/// export with the stored run and its gate. An export that fails becomes a
/// warning in [`Finished::notes`]: the run is stored and its status stands.
pub async fn execute(
    prepared: PreparedRun,
    sinks: Sinks,
    export: Option<Arc<OtelSink>>,
    cancel: &CancellationToken,
) -> Result<Finished, OtelError> {
    let sinks = match &export {
        Some(sink) => sinks.with(sink.clone()),
        None => sinks,
    };
    let mut finished = prepared.execute(&sinks, cancel).await?;
    if let Some(sink) = export {
        let (run, gate) = (finished.run.clone(), finished.report.gate.clone());
        if let Err(e) = sink.finish_async(run, gate).await {
            finished.notes.push(Note::warning(e.to_string()));
        }
    }
    Ok(finished)
}
