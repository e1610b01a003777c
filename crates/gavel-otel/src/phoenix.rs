//! Verdicts as Arize Phoenix span annotations (`POST /v1/span_annotations`),
//! when the export goes to Phoenix (`--otel-phoenix URL`): Phoenix shows
//! annotations, not span events, as a span's evaluations. Each annotation has
//! an identifier derived from its place in the execution, so sending a run
//! again updates them instead of adding copies (Phoenix upserts on name, span
//! and identifier).
//!
//! Annotations are sent in batches by a thread of their own, each after the
//! spans queued so far were flushed; Phoenix keeps an annotation whose span it
//! has not stored yet and tries it again.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use opentelemetry::trace::SpanId;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::{Value, json};

use crate::evaluation::Evaluation;
use crate::watch::Failure;

/// Annotations per request.
const BATCH: usize = 256;
/// Batches waiting for the sender at most (then the run waits for it).
const WAITING: usize = 16;
/// One request's time limit.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Phoenix's variable for its API key (sent as a bearer token).
const API_KEY_VAR: &str = "PHOENIX_API_KEY";

/// Sends annotations to one Phoenix.
pub(crate) struct Phoenix {
    /// `BASE/v1/span_annotations`.
    url: String,
    pending: Mutex<Vec<Value>>,
    sender: Mutex<Option<SyncSender<Vec<Value>>>>,
    worker: Mutex<Option<JoinHandle<()>>>,
    failure: Failure,
}

impl Phoenix {
    /// Annotations for the Phoenix at `base`, sent after `spans` flushed.
    pub(crate) fn new(base: &str, spans: SdkTracerProvider) -> Result<Phoenix, String> {
        let url = format!("{}/v1/span_annotations", base.trim_end_matches('/'));
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(key) = std::env::var(API_KEY_VAR).ok().filter(|k| !k.is_empty()) {
            let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {key}"))
                .map_err(|_| format!("{API_KEY_VAR} is not a valid header value"))?;
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        let (sender, batches) = sync_channel(WAITING);
        let failure = Failure::default();
        let worker = {
            let (url, failure) = (url.clone(), failure.clone());
            // A blocking client is built, and used, off any async executor.
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::builder()
                    .timeout(TIMEOUT)
                    .default_headers(headers)
                    .build();
                match client {
                    Ok(client) => send_all(&client, &url, &spans, &batches, &failure),
                    Err(e) => failure.keep_message(e.to_string()),
                }
            })
        };
        Ok(Phoenix {
            url,
            pending: Mutex::new(Vec::new()),
            sender: Mutex::new(Some(sender)),
            worker: Mutex::new(Some(worker)),
            failure,
        })
    }

    /// Queues the annotation of `eval` on span `span` (a judge model's when
    /// `by_model`; without explanation when `redact`); `identifier` is unique
    /// in the span's trace and the same each time the run is exported.
    pub(crate) fn annotate(
        &self,
        span: SpanId,
        eval: &Evaluation,
        by_model: bool,
        redact: bool,
        identifier: &str,
    ) {
        let mut result = json!({"label": eval.label});
        if let Some(score) = eval.score {
            result["score"] = json!(score);
        }
        if !redact {
            result["explanation"] = json!(&*eval.explanation);
        }
        let annotation = json!({
            "span_id": span.to_string(),
            // Phoenix keeps the name `note` for its notes.
            "name": if &*eval.name == "note" { "note (check)" } else { &*eval.name },
            "annotator_kind": if by_model { "LLM" } else { "CODE" },
            "identifier": identifier,
            "result": result,
        });
        let full = {
            let mut pending = lock(&self.pending);
            pending.push(annotation);
            (pending.len() >= BATCH).then(|| std::mem::take(&mut *pending))
        };
        if let Some(batch) = full {
            self.send(batch);
        }
    }

    /// Sends what is queued and waits until every batch was answered; the
    /// first failure, with where it was sent.
    pub(crate) fn finish(&self) -> Option<(String, String)> {
        let rest = std::mem::take(&mut *lock(&self.pending));
        if !rest.is_empty() {
            self.send(rest);
        }
        drop(lock(&self.sender).take());
        if let Some(worker) = lock(&self.worker).take()
            && worker.join().is_err()
        {
            return Some((self.receiver(), "the annotation thread panicked".to_owned()));
        }
        self.failure.first().map(|m| (self.receiver(), m))
    }

    /// Where annotations go, any password masked.
    fn receiver(&self) -> String {
        gavel_core::secrets::mask_url(&self.url)
    }

    fn send(&self, batch: Vec<Value>) {
        if let Some(sender) = lock(&self.sender).as_ref() {
            // The worker only stops when the channel closes.
            let _ = sender.send(batch);
        }
    }
}

/// The worker: each batch after flushing the spans queued so far.
fn send_all(
    client: &reqwest::blocking::Client,
    url: &str,
    spans: &SdkTracerProvider,
    batches: &Receiver<Vec<Value>>,
    failure: &Failure,
) {
    for batch in batches {
        if failure.first().is_some() {
            continue;
        }
        let _ = spans.force_flush();
        let answer = client
            .post(url)
            .json(&json!({ "data": batch }))
            .send()
            .map_err(|e| e.without_url().to_string())
            .and_then(|r| match r.status() {
                s if s.is_success() => Ok(()),
                s => Err(format!("HTTP {s}")),
            });
        if let Err(message) = answer {
            failure.keep_message(message);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
