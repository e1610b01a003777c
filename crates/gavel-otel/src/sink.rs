//! A live run's export: a [`gavel_session::Sink`] that sends each execution's
//! trace as soon as it is recorded, and ends the run span with the gate the
//! run finished with.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use gavel_core::otel::OtelSettings;
use gavel_session::{Event, Sink, Sinks};

use crate::exporter::RunEnded;
use crate::{Exporter, OtelError, Requested, RunSpan, Settings};

/// Exports a run as it happens. Add it to the run's `Sinks` like any sink; on
/// [`Event::RunFinished`] it ends the run span and sends what is queued on a
/// thread of its own. [`OtelSink::ended`] then tells whether the export
/// reached its receiver.
pub struct OtelSink {
    exporter: Arc<Exporter>,
    state: Mutex<State>,
}

/// What the sink learnt from the events so far.
#[derive(Default)]
struct State {
    run: Option<RunSpan>,
    recorded: usize,
    /// Ending the export (after [`Event::RunFinished`]).
    ending: Option<JoinHandle<Result<(), OtelError>>>,
}

impl OtelSink {
    /// A sink sending through `exporter`.
    pub fn new(exporter: Exporter) -> OtelSink {
        OtelSink {
            exporter: Arc::new(exporter),
            state: Mutex::new(State::default()),
        }
    }

    /// Waits until everything is sent, once the session returned: `Err`
    /// names the receiver when an export failed (front doors warn; `gavel
    /// run` exits 3 unless the gate failed, docs/OTEL.md). A run that never
    /// finished (it failed before it started) is shut down here.
    pub async fn ended(&self) -> Result<(), OtelError> {
        let ending = self.lock().ending.take();
        let exporter = self.exporter.clone();
        tokio::task::spawn_blocking(move || match ending {
            Some(thread) => thread
                .join()
                .map_err(|_| OtelError::Stopped("the export thread panicked".to_owned()))?,
            None => exporter.shutdown(),
        })
        .await
        .map_err(|e| OtelError::Stopped(e.to_string()))?
    }

    /// `sinks` with `export` added, when a run is exported.
    pub fn added(export: Option<&Arc<OtelSink>>, sinks: Sinks) -> Sinks {
        match export {
            Some(export) => sinks.with(export.clone()),
            None => sinks,
        }
    }

    /// Why `export` failed ([`OtelSink::ended`]), when a run is exported.
    pub async fn failure(export: Option<&Arc<OtelSink>>) -> Option<OtelError> {
        match export {
            Some(export) => export.ended().await.err(),
            None => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Sink for OtelSink {
    fn event(&self, event: &Event<'_>) {
        let mut state = self.lock();
        match event {
            Event::RunStarted(start) => {
                let span = self.exporter.start_run(&start.run);
                state.run = Some(span);
            }
            Event::ExecutionRecorded(e) => {
                if let Some(span) = &state.run {
                    self.exporter.execution(span, e);
                    state.recorded += 1;
                }
            }
            Event::RunFinished(end) => {
                let (span, recorded) = (state.run.take(), state.recorded);
                let (status, finished_at, gate) =
                    (end.status, end.finished_at.clone(), end.gate.clone());
                let exporter = self.exporter.clone();
                // Sending blocks until the receiver answers or the export times
                // out: not on the thread that emits the run's events.
                state.ending = Some(std::thread::spawn(move || {
                    if let Some(span) = span {
                        let end = RunEnded {
                            status,
                            finished_at: Some(&finished_at),
                            recorded,
                        };
                        exporter.finish_run(span, &end, gate.as_ref());
                    }
                    exporter.shutdown()
                }));
            }
            Event::ExecutionStarted(_) | Event::Turn { .. } | Event::Verdict { .. } => {}
        }
    }
}

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
