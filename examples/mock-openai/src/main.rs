//! A local server speaking the OpenAI Chat Completions wire format with
//! deterministic answers: structured-output requests get the most favourable
//! instance of their JSON Schema (the least favourable for a model named
//! `…harsh…` until it is shown other judges' scores; enum values tagged `#value`
//! in the prompt win), other requests an echo naming the model (or a fixed reply).
//!
//! Requests that offer tools get scripted tool calls (see [`tools`]).
//!
//! `POST /v1/embeddings` answers deterministic vectors: words hashed into 64
//! dimensions, so equal texts embed equally and shared words raise the cosine.
//! Models named `…fail-500…`, `…malformed…` or `…wrong-dims…` answer HTTP 500,
//! a body that is not JSON, or a vector one dimension short, for error tests;
//! `…flaky…` models (chat and embeddings) refuse each request the first time it
//! is seen, with 429 and `Retry-After: 0`; `…unstable…` chat models answer 503
//! the first time instead: faults injected for retry tests. `…echo-key…` models
//! echo the request's `Authorization` header in their answer (in a judge's
//! reasoning too), for secret-leak tests, and `…reject-key…` models refuse the
//! key with HTTP 401, quoting it; `POST /echo-headers/{status}/{pad}` echoes every
//! request header (see [`leak`]). `…logprobs…` models answer with token
//! log probabilities when asked (see [`logprobs`]).
//!
//! `mock-openai [--addr 127.0.0.1:0] [--latency-ms N] [--reply TEXT]` prints
//! `mock-openai listening on http://ADDR` once bound. `GET /stats` returns
//! `{"requests": N}`: how many completion requests it answered (faults included);
//! `GET /arrivals` returns `{"arrivals_us": [...]}`: when each completion request
//! arrived, in microseconds since the server started (tests count requests per
//! time window with it).

mod embeddings;
mod leak;
mod logprobs;
mod schema;
mod tools;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::Parser;
use serde_json::{Value, json};

/// Command-line options.
#[derive(Debug, Parser)]
#[command(
    name = "mock-openai",
    about = "Local OpenAI-compatible chat server for tests"
)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: String,
    /// Delay before every answer, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Fixed reply for plain (non-structured) requests instead of an echo.
    #[arg(long)]
    reply: Option<String>,
}

struct Mock {
    latency: Duration,
    reply: Option<String>,
    requests: AtomicU64,
    started: Instant,
    arrivals_us: Mutex<Vec<u64>>,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let mock = Arc::new(Mock {
        latency: Duration::from_millis(args.latency_ms),
        reply: args.reply,
        requests: AtomicU64::new(0),
        started: Instant::now(),
        arrivals_us: Mutex::new(Vec::new()),
    });
    let app = Router::new()
        .route("/v1/chat/completions", post(complete))
        .route("/chat/completions", post(complete))
        .route("/v1/embeddings", post(embeddings::embed))
        .route("/embeddings", post(embeddings::embed))
        .route("/echo-headers/{status}/{pad}", post(leak::echo_headers))
        .route("/stats", get(stats))
        .route("/arrivals", get(arrivals))
        .route("/health", get(|| async { Json(json!({"status": "ok"})) }))
        .with_state(mock);
    let listener = match tokio::net::TcpListener::bind(&args.addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mock-openai: cannot listen on {}: {e}", args.addr);
            return std::process::ExitCode::from(2);
        }
    };
    match listener.local_addr() {
        Ok(addr) => println!("mock-openai listening on http://{addr}"),
        Err(e) => eprintln!("mock-openai: {e}"),
    }
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("mock-openai: {e}");
        return std::process::ExitCode::from(1);
    }
    std::process::ExitCode::SUCCESS
}

async fn stats(State(mock): State<Arc<Mock>>) -> Json<Value> {
    Json(json!({"requests": mock.requests.load(Ordering::Relaxed)}))
}

async fn arrivals(State(mock): State<Arc<Mock>>) -> Json<Value> {
    let arrivals = mock
        .arrivals_us
        .lock()
        .map(|a| a.clone())
        .unwrap_or_default();
    Json(json!({"arrivals_us": arrivals}))
}

async fn complete(
    State(mock): State<Arc<Mock>>,
    headers: axum::http::HeaderMap,
    body: Result<Json<Value>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Ok(Json(request)) = body else {
        return (
            StatusCode::BAD_REQUEST,
            Json(
                json!({"error": {"message": "body is not JSON", "type": "invalid_request_error"}}),
            ),
        )
            .into_response();
    };
    mock.requests.fetch_add(1, Ordering::Relaxed);
    let arrived = u64::try_from(mock.started.elapsed().as_micros()).unwrap_or(u64::MAX);
    if let Ok(mut arrivals) = mock.arrivals_us.lock() {
        arrivals.push(arrived);
    }
    if let Some(fault) = injected_fault(&request) {
        return fault;
    }
    if let Some(refusal) = leak::reject_key(request["model"].as_str().unwrap_or_default(), &headers)
    {
        return refusal;
    }
    if !mock.latency.is_zero() {
        // tokio's timer works in whole milliseconds and rounds up, which made answers
        // about a millisecond late; a thread's sleep keeps to a fraction of one.
        let latency = mock.latency;
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(latency)).await;
    }
    let prompt_chars: usize = request["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| m["content"].as_str().map_or(0, str::len))
                .sum()
        })
        .unwrap_or(0);
    let mut message = tools::answer(&request)
        .unwrap_or_else(|| json!({"role": "assistant", "content": plain_answer(&mock, &request)}));
    if request["model"]
        .as_str()
        .is_some_and(|m| m.contains("echo-key"))
    {
        echo_key(&mut message, &headers);
    }
    let content = message["content"].as_str().unwrap_or_default();
    let finish = if message["tool_calls"].is_array() {
        "tool_calls"
    } else {
        "stop"
    };
    let completion_tokens = (content.len() / 4).max(1);
    let prompt_tokens = (prompt_chars / 4).max(1);
    let logprobs = logprobs::of(&request, content);
    let answer = json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 0,
        "model": request["model"],
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": logprobs,
            "finish_reason": finish
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens
        }
    });
    (StatusCode::OK, Json(answer)).into_response()
}

/// The first time a `…flaky…` model sees a request: 429 with `Retry-After: 0`;
/// an `…unstable…` one: 503. `None` otherwise.
fn injected_fault(request: &Value) -> Option<Response> {
    let model = request["model"].as_str()?;
    let status = if model.contains("flaky") {
        StatusCode::TOO_MANY_REQUESTS
    } else if model.contains("unstable") {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        return None;
    };
    let seen = [model.to_owned(), request["messages"].to_string()];
    if !embeddings::refuse_first_time(&seen) {
        return None;
    }
    let mut fault = embeddings::error(status, "injected fault: try again");
    if status == StatusCode::TOO_MANY_REQUESTS {
        fault
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("0"));
    }
    Some(fault)
}

/// Puts the request's `Authorization` value into the answer: after a plain
/// answer, and into every string of a structured one (still valid JSON).
fn echo_key(message: &mut Value, headers: &axum::http::HeaderMap) {
    let key = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let Some(content) = message["content"].as_str() else {
        return;
    };
    let echoed = match serde_json::from_str::<Value>(content) {
        Ok(mut structured @ Value::Object(_)) => {
            append_to_strings(&mut structured, key);
            structured.to_string()
        }
        _ => format!("{content} (you sent {key})"),
    };
    message["content"] = Value::String(echoed);
}

fn append_to_strings(value: &mut Value, key: &str) {
    match value {
        Value::String(s) if s.contains(' ') => s.push_str(&format!(" (you sent {key})")),
        Value::Array(items) => items.iter_mut().for_each(|v| append_to_strings(v, key)),
        Value::Object(map) => map.values_mut().for_each(|v| append_to_strings(v, key)),
        _ => {}
    }
}

/// The answer to a request that offers no tools: a schema instance or an echo.
fn plain_answer(mock: &Mock, request: &Value) -> String {
    let prompt = request["messages"].to_string();
    match request.pointer("/response_format/json_schema/schema") {
        Some(schema) if is_harsh(request) => schema::harsh(schema, &prompt).to_string(),
        Some(schema) => schema::favourable(schema, &prompt).to_string(),
        None => mock.reply.clone().unwrap_or_else(|| {
            format!(
                "You said: {} ({})",
                last_user_message(request),
                request["model"].as_str().unwrap_or("model")
            )
        }),
    }
}

/// A model named `…harsh…` gives the lowest scores until it is shown other
/// judges' scores (a consensus panel's later rounds).
fn is_harsh(request: &Value) -> bool {
    request["model"]
        .as_str()
        .is_some_and(|m| m.contains("harsh"))
        && !request["messages"].to_string().contains("Other judges")
}

fn last_user_message(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}
