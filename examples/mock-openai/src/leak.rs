//! Answers that give secrets back, for secret-leak tests: `…reject-key…`
//! models refuse the key with HTTP 401 and quote it, and `POST
//! /echo-headers/{status}/{pad}` (an http agent) answers with every request
//! header's value after `pad` filler characters.

use axum::Json;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// For a `…reject-key…` model: HTTP 401 quoting the bearer key. Named
/// `…reject-key-pad-N…`, the body is plain text, the key after `N` filler
/// characters (an error excerpt cuts it); otherwise OpenAI's JSON error.
pub(crate) fn reject_key(model: &str, headers: &HeaderMap) -> Option<Response> {
    let rest = &model[model.find("reject-key")? + "reject-key".len()..];
    let key = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let key = key.strip_prefix("Bearer ").unwrap_or(key);
    let pad = rest
        .strip_prefix("-pad-")
        .map(|n| {
            n.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|n| n.parse::<usize>().ok());
    Some(match pad {
        Some(pad) => (
            StatusCode::UNAUTHORIZED,
            format!("{}{key} is not a valid key", "k".repeat(pad)),
        )
            .into_response(),
        None => (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": {
                "message": format!("Incorrect API key provided: {key}."),
                "type": "invalid_request_error"
            }})),
        )
            .into_response(),
    })
}

/// Every request header as `name=value` (`authorization` first), after `pad`
/// filler characters: with
/// status 200 as `{"output": …}`, otherwise as a plain-text body of that status.
pub(crate) async fn echo_headers(
    Path((status, pad)): Path<(u16, usize)>,
    headers: HeaderMap,
) -> Response {
    let mut text = "h".repeat(pad);
    // `authorization` first: where a cut falls in it depends on `pad` alone.
    let mut all: Vec<_> = headers.iter().collect();
    all.sort_by_key(|(name, _)| *name != header::AUTHORIZATION);
    for (name, value) in all {
        text.push_str(&format!(
            "{name}={} ",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    match StatusCode::from_u16(status) {
        Ok(StatusCode::OK) => Json(json!({"output": text})).into_response(),
        Ok(status) => (status, text).into_response(),
        Err(_) => (StatusCode::BAD_REQUEST, "not a status").into_response(),
    }
}
