//! HTTP API: `POST /chat`, `GET /health`, `GET /sessions/{id}/messages`, and the
//! tools over MCP (Streamable HTTP) at `/mcp`.

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
        .route("/health", get(health))
        .route("/sessions/{id}/messages", get(messages))
        .nest_service("/mcp", crate::mcp::service(agent.clone()))
        .with_state(agent)
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(error_body(message))).into_response()
}

fn internal(e: &AgentError) -> Response {
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
