//! A local OpenAI-compatible server whose answers script the tool calls.
#![allow(clippy::unwrap_used, dead_code)]

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::routing::post;
use gavel_models::{ChatModel, ProviderConfig, provider_with};
use serde_json::{Value, json};

/// Requests the scripted model received.
pub(crate) type Seen = Arc<Mutex<Vec<Value>>>;

/// An OpenAI Chat Completions answer.
fn completion(message: Value) -> Value {
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
}

/// The script: a question calls the tool; a tool result is read back;
/// "what did I ask first?" quotes the first user message of the history it got.
async fn script(State((seen, call)): State<(Seen, Value)>, Json(body): Json<Value>) -> Json<Value> {
    seen.lock().unwrap().push(body.clone());
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or_default();
    let answer = if last["role"] == "tool" {
        json!({"role": "assistant", "content": format!("Result: {}", last["content"].as_str().unwrap_or_default())})
    } else if last["content"]
        .as_str()
        .is_some_and(|c| c.contains("first"))
    {
        let first = messages
            .iter()
            .find(|m| m["role"] == "user")
            .map(|m| m["content"].clone());
        json!({"role": "assistant", "content": format!("You first asked: {}", first.unwrap_or_default())})
    } else {
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": call["name"], "arguments": call["arguments"].to_string()},
        }]})
    };
    Json(completion(answer))
}

/// A model at a local OpenAI-compatible server that calls `tool` with `arguments`.
pub(crate) async fn scripted_model(tool: &str, arguments: Value) -> (Arc<dyn ChatModel>, Seen) {
    let seen: Seen = Arc::default();
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(script))
        .with_state((seen.clone(), json!({"name": tool, "arguments": arguments})));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let model = provider_with(
        &"openai:gpt-4o-mini".parse().unwrap(),
        ProviderConfig::default()
            .with_api_key("sk-test")
            .with_base_url(url),
    )
    .unwrap();
    (model, seen)
}
