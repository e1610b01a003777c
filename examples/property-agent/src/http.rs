//! HTTP API: `POST /chat`, `POST /chat/stream` (SSE), `POST /sessions/fork`,
//! `POST /restart`, `GET /health`, `GET /sessions/{id}/messages`, and the tools
//! over MCP (Streamable HTTP) at `/mcp`.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use crate::agent::{Agent, AgentError};
use crate::api::{error_body, parse_request};

/// The service's routes.
pub(crate) fn router(agent: Agent) -> Router {
    Router::new()
        .route("/chat", post(chat))
        .route("/chat/stream", post(crate::sse::chat))
        .route("/sessions/fork", post(fork))
        .route("/restart", post(restart))
        .route("/health", get(health))
        .route("/sessions/{id}/messages", get(messages))
        .nest_service("/mcp", crate::mcp::service(agent.clone()))
        .with_state(agent)
}

pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(error_body(message))).into_response()
}

pub(crate) fn internal(e: &AgentError) -> Response {
    eprintln!("property-agent: internal error: {e}");
    error(StatusCode::INTERNAL_SERVER_ERROR, "internal")
}

async fn chat(State(agent): State<Agent>, body: Bytes) -> Response {
    let request = match parse_request(&body) {
        Ok(request) => request,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    match agent.respond(&request).await {
        Ok(response) => axum::Json(response).into_response(),
        Err(e) => internal(&e),
    }
}

/// `{"parent_session_id", "session_id"}`: the new session starts as a copy of the parent.
async fn fork(State(agent): State<Agent>, body: Bytes) -> Response {
    let parsed: Result<serde_json::Value, _> = serde_json::from_slice(&body);
    let field = |v: &serde_json::Value, name: &str| {
        v.get(name)
            .and_then(|s| s.as_str())
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    let (parent, child) = match &parsed {
        Ok(v) => match (field(v, "parent_session_id"), field(v, "session_id")) {
            (Some(p), Some(c)) => (p, c),
            (None, _) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "bad request: missing field `parent_session_id`",
                );
            }
            (_, None) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "bad request: missing field `session_id`",
                );
            }
        },
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("bad request: invalid JSON: {e}"),
            );
        }
    };
    match agent.fork(&parent, &child).await {
        Ok(true) => {
            axum::Json(json!({ "session_id": child, "parent_session_id": parent })).into_response()
        }
        Ok(false) => error(
            StatusCode::CONFLICT,
            "unknown parent session, or the new session exists",
        ),
        Err(e) => internal(&e),
    }
}

/// Drops the in-memory state, as a process restart would.
async fn restart(State(agent): State<Agent>) -> Response {
    agent.restart();
    axum::Json(json!({ "status": "restarted" })).into_response()
}

async fn health() -> Response {
    axum::Json(json!({ "status": "ok" })).into_response()
}

async fn messages(State(agent): State<Agent>, Path(id): Path<String>) -> Response {
    match agent.db().messages(&id).await {
        Ok(Some(messages)) => axum::Json(messages).into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, "unknown session"),
        Err(e) => internal(&AgentError::Db(e)),
    }
}
