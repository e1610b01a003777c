//! A live run's export: a [`gavel_session::Sink`] that sends each execution's
//! trace as soon as it is recorded.

use std::sync::{Arc, Mutex};

use gavel_core::RunRecord;
use gavel_report::Gate;
use gavel_session::{Event, Sink};

use crate::{Exporter, OtelError, RunSpan};

/// Exports a run as it happens. Add it to the run's `Sinks`, then call
/// [`OtelSink::finish`] with the gate once the session returned.
pub struct OtelSink {
    exporter: Exporter,
    state: Mutex<State>,
}

/// What the sink learnt from the events so far.
#[derive(Default)]
struct State {
    run: Option<RunSpan>,
    recorded: usize,
}

impl OtelSink {
    /// A sink sending through `exporter`.
    pub fn new(exporter: Exporter) -> OtelSink {
        OtelSink {
            exporter,
            state: Mutex::new(State::default()),
        }
    }

    /// Ends the run span with the stored run (its final status and end time)
    /// and the gate, then sends everything queued. Blocks until sent: call it
    /// off the async executor (`tokio::task::spawn_blocking`).
    pub fn finish(&self, run: &RunRecord, gate: Option<&Gate>) -> Result<(), OtelError> {
        let (span, recorded) = {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            (state.run.take(), state.recorded)
        };
        if let Some(span) = span {
            self.exporter.finish_run(span, run, recorded, gate);
        }
        self.exporter.shutdown()
    }

    /// [`OtelSink::finish`] on a blocking thread, for async callers.
    pub async fn finish_async(
        self: Arc<Self>,
        run: RunRecord,
        gate: Gate,
    ) -> Result<(), OtelError> {
        tokio::task::spawn_blocking(move || self.finish(&run, Some(&gate)))
            .await
            .map_err(|e| OtelError::Stopped(e.to_string()))?
    }
}

impl Sink for OtelSink {
    fn event(&self, event: &Event<'_>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
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
            Event::ExecutionStarted(_)
            | Event::Turn { .. }
            | Event::Verdict { .. }
            | Event::RunFinished(_) => {}
        }
    }
}
