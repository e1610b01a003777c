//! The web UI's error type and how it answers.

use std::net::SocketAddr;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Everything a request or the server itself can fail with.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The address cannot be listened on.
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, #[source] std::io::Error),
    /// A non-loopback bind without an auth token or an account.
    #[error(
        "binding to {0} exposes the UI beyond this machine: make an account (`gavel users add NAME --role admin`) or set an auth token (--token or GAVEL_WEB_TOKEN)"
    )]
    Unprotected(SocketAddr),
    /// The store failed or lacks the record.
    #[error(transparent)]
    Store(#[from] gavel_store::StoreError),
    /// A template failed to render.
    #[error("rendering {0}: {1}")]
    Render(&'static str, minijinja::Error),
    /// The request is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// Starting a run failed.
    #[error("cannot start the run: {0}")]
    Launch(String),
    /// Something in this process failed (randomness, a worker thread).
    #[error("{0}")]
    Internal(String),
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let status = match &self {
            WebError::Store(gavel_store::StoreError::NotFound(_)) => StatusCode::NOT_FOUND,
            WebError::Store(gavel_store::StoreError::Invalid { .. }) | WebError::BadRequest(_) => {
                StatusCode::BAD_REQUEST
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        // JSON for everyone: the text is data, never markup.
        let body = serde_json::json!({ "error": self.to_string() });
        (status, axum::Json(body)).into_response()
    }
}
