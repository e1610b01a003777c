//! `POST /chat/stream`: the answer as server-sent events — `tool_call` and
//! `tool_result` for each tool, `delta`s of text, then `done` (`error` on failure).

use std::convert::Infallible;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::agent::Agent;
use crate::api::{ChatResponse, parse_request};
use crate::bugs::Bug;
use crate::http::error;

/// Answers like `POST /chat`, streamed.
pub(crate) async fn chat(State(agent): State<Agent>, body: Bytes) -> Response {
    let request = match parse_request(&body) {
        Ok(request) => request,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let events = match agent.respond(&request).await {
        Ok(response) => events(&response, &agent),
        Err(e) => {
            eprintln!("property-agent: internal error: {e}");
            vec![json!({"type": "error", "message": "internal"})]
        }
    };
    let stream = futures::stream::iter(
        events
            .into_iter()
            .map(|data| Ok::<_, Infallible>(Event::default().data(data.to_string()))),
    );
    Sse::new(stream).into_response()
}

/// The events of one answer, bugs applied.
fn events(response: &ChatResponse, agent: &Agent) -> Vec<Value> {
    let mut events = Vec::new();
    for (i, call) in response.tool_calls.iter().enumerate() {
        let id = format!("call-{}", i + 1);
        events.push(
            json!({"type": "tool_call", "id": id, "name": call.name, "arguments": call.arguments}),
        );
        events.push(json!({"type": "tool_result", "id": id, "result": call.result}));
    }
    if !agent.has(Bug::EmptyStream) {
        events.extend(
            words(&response.reply)
                .into_iter()
                .map(|text| json!({"type": "delta", "text": text})),
        );
    }
    if !agent.has(Bug::NoDone) {
        events.push(
            json!({"type": "done", "session_id": response.session_id, "error": response.error}),
        );
    }
    events
}

/// The text in word-sized pieces, spaces kept, so the pieces join back to it.
fn words(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if c == ' ' {
            pieces.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

#[cfg(test)]
mod tests {
    #[test]
    fn words_join_back_to_the_text() {
        let pieces = super::words("You have 3 listings.");
        assert_eq!(pieces, ["You ", "have ", "3 ", "listings."]);
        assert_eq!(pieces.concat(), "You have 3 listings.");
        assert!(super::words("").is_empty());
    }
}
