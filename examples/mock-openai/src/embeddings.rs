//! `POST /v1/embeddings` with deterministic vectors.

use std::collections::BTreeSet;
use std::sync::Mutex;

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// Dimensions of every vector.
const DIMENSIONS: usize = 64;

/// The inputs of requests a `…flaky…` (or `…unstable…` chat) model has refused
/// once already.
static REFUSED: Mutex<BTreeSet<Vec<String>>> = Mutex::new(BTreeSet::new());

/// Answers an embeddings request in OpenAI's format (`input` a string or a list).
pub(crate) async fn embed(
    body: Result<Json<Value>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Ok(Json(request)) = body else {
        return error(StatusCode::BAD_REQUEST, "body is not JSON");
    };
    let inputs: Vec<String> = match &request["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => return error(StatusCode::BAD_REQUEST, "input must be a string or a list"),
    };
    let model = request["model"].as_str().unwrap_or("mock-embed").to_owned();
    if model.contains("fail-500") {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the embedding server broke",
        );
    }
    if model.contains("flaky") && refuse_first_time(&inputs) {
        let mut refused = error(StatusCode::TOO_MANY_REQUESTS, "slow down");
        refused
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("0"));
        return refused;
    }
    if model.contains("malformed") {
        return (StatusCode::OK, "{\"data\": [ not json").into_response();
    }
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let mut vector = vector_of(text);
            if model.contains("wrong-dims") && index == inputs.len() - 1 {
                vector.pop();
            }
            json!({"object": "embedding", "index": index, "embedding": vector})
        })
        .collect();
    let tokens: usize = inputs.iter().map(|t| t.split_whitespace().count()).sum();
    Json(json!({
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}
    }))
    .into_response()
}

/// Lower-cased words hashed (FNV-1a) into buckets, then L2-normalised.
fn vector_of(text: &str) -> Vec<f32> {
    let mut vector = vec![0f32; DIMENSIONS];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let hash = word
            .to_lowercase()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        vector[(hash % DIMENSIONS as u64) as usize] += 1.0;
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector
}

/// True the first time these inputs are seen.
pub(crate) fn refuse_first_time(inputs: &[String]) -> bool {
    REFUSED
        .lock()
        .map(|mut refused| refused.insert(inputs.to_vec()))
        .unwrap_or(false)
}

pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": "server_error"}})),
    )
        .into_response()
}
