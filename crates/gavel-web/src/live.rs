//! Runs watched live: each run started here has a sink of the session's events
//! that broadcasts a short record of every result as it lands; the run page
//! subscribes with server-sent events (`GET /runs/{id}/events`).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{Path, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use gavel_core::Status;
use gavel_session::{Event, Sink};
use serde::Serialize;
use tokio::sync::broadcast;

use crate::AppState;

/// Results a slow subscriber may fall behind by before it skips ahead.
const BACKLOG: usize = 1024;

/// One thing the live page shows.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum LiveEvent {
    /// The run's targets are ready: how many executions are coming.
    Started {
        planned: usize,
        judge: Option<String>,
    },
    /// A result is stored.
    Result {
        case_id: String,
        case_name: String,
        target: String,
        repeat_index: u32,
        status: Status,
        score: Option<f64>,
        duration_ms: u64,
        /// Of the executions planned, how many have landed.
        done: usize,
        /// Executions planned.
        planned: usize,
        /// Seconds left at the pace so far, once there is one.
        eta_s: Option<f64>,
        /// Results so far by status, this one included: what the page's
        /// counters show, so they agree with `done` whenever it was opened.
        counts: Counts,
    },
    /// The run ended.
    Finished {
        status: String,
        error: Option<String>,
    },
}

/// The runs being watched, by id.
#[derive(Clone, Default)]
pub(crate) struct Live(Arc<Mutex<HashMap<String, broadcast::Sender<LiveEvent>>>>);

impl Live {
    /// A sink for run `run_id`, broadcasting to its watchers.
    pub(crate) fn sink(&self, run_id: &str) -> Arc<LiveSink> {
        let (sender, _) = broadcast::channel(BACKLOG);
        self.lock().insert(run_id.to_owned(), sender.clone());
        Arc::new(LiveSink {
            live: self.clone(),
            run_id: run_id.to_owned(),
            sender,
            progress: Mutex::new(Progress::default()),
        })
    }

    /// Whether this server drives run `run_id` now (its events stream here).
    pub(crate) fn is_live(&self, run_id: &str) -> bool {
        self.lock().contains_key(run_id)
    }

    fn subscribe(&self, run_id: &str) -> Option<broadcast::Receiver<LiveEvent>> {
        self.lock().get(run_id).map(broadcast::Sender::subscribe)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, broadcast::Sender<LiveEvent>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Results of a run so far, by status.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct Counts {
    pass: usize,
    fail: usize,
    error: usize,
    skipped: usize,
}

impl Counts {
    fn add(&mut self, status: Status) {
        match status {
            Status::Pass => self.pass += 1,
            Status::Fail => self.fail += 1,
            Status::Error => self.error += 1,
            Status::Skipped => self.skipped += 1,
        }
    }
}

#[derive(Default)]
struct Progress {
    planned: usize,
    done: usize,
    counts: Counts,
    started: Option<Instant>,
}

/// Turns one run's session events into [`LiveEvent`]s.
pub(crate) struct LiveSink {
    live: Live,
    run_id: String,
    sender: broadcast::Sender<LiveEvent>,
    progress: Mutex<Progress>,
}

impl Sink for LiveSink {
    fn event(&self, event: &Event<'_>) {
        let mut progress = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        let live = match event {
            Event::RunStarted(start) => {
                progress.planned = start.planned;
                progress.started = Some(Instant::now());
                LiveEvent::Started {
                    planned: start.planned,
                    judge: start.judge.model.as_deref().map(gavel_store::mask_url),
                }
            }
            Event::ExecutionRecorded(e) => {
                progress.done += 1;
                progress.counts.add(e.status);
                let eta_s = progress.started.map(|t| {
                    let per = t.elapsed().as_secs_f64() / progress.done as f64;
                    per * progress.planned.saturating_sub(progress.done) as f64
                });
                LiveEvent::Result {
                    case_id: e.case_id.clone(),
                    case_name: e.case_name.clone(),
                    target: e.target.clone(),
                    repeat_index: e.repeat_index,
                    status: e.status,
                    score: e.score,
                    duration_ms: e.duration_ms,
                    done: progress.done,
                    planned: progress.planned,
                    eta_s,
                    counts: progress.counts,
                }
            }
            Event::RunFinished(end) => {
                let finished = LiveEvent::Finished {
                    status: end.status.as_str().to_owned(),
                    error: end.error.clone(),
                };
                let _ = self.sender.send(finished);
                self.live.lock().remove(&self.run_id);
                return;
            }
            _ => return,
        };
        // Nobody watching is fine.
        let _ = self.sender.send(live);
    }
}

/// `GET /runs/{id}/events`: the run's results as server-sent events while it
/// runs here; a run that is not running here gets one `finished` event.
pub(crate) async fn events(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let stream: std::pin::Pin<Box<dyn Stream<Item = LiveEvent> + Send>> =
        match state.live.subscribe(&id) {
            Some(receiver) => Box::pin(
                tokio_stream::wrappers::BroadcastStream::new(receiver)
                    .filter_map(|e| async move { e.ok() }),
            ),
            None => {
                let status = match state.store.run(&id).await {
                    Ok(run) => run.status.as_str().to_owned(),
                    Err(e) => return crate::WebError::from(e).into_response(),
                };
                let error = state.store.run_error(&id).await.ok().flatten();
                Box::pin(futures::stream::once(async move {
                    LiveEvent::Finished { status, error }
                }))
            }
        };
    // The stream ends when the server shuts down, so that it can.
    let stream = stream.take_until(state.runs.stopping().clone().cancelled_owned());
    let sse = stream.map(|e| {
        Ok::<_, Infallible>(
            SseEvent::default()
                .json_data(&e)
                .unwrap_or_else(|_| SseEvent::default().data("{}")),
        )
    });
    Sse::new(sse)
        .keep_alive(KeepAlive::default())
        .into_response()
}
