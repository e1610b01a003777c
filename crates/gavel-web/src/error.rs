//! The web UI's error type and how it answers: bad requests with their
//! message, server failures with a generic one and an error id that the server
//! log carries with the details.

use std::net::SocketAddr;

use axum::http::{StatusCode, header};
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
    /// Too busy to answer now: try again in this many seconds.
    #[error("the server is busy: try again in {0} s")]
    Busy(u64),
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let status = match &self {
            WebError::Store(gavel_store::StoreError::NotFound(_)) => StatusCode::NOT_FOUND,
            WebError::Store(gavel_store::StoreError::Invalid { .. }) | WebError::BadRequest(_) => {
                StatusCode::BAD_REQUEST
            }
            WebError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        // JSON for everyone: the text is data, never markup.
        if status != StatusCode::INTERNAL_SERVER_ERROR {
            let body = serde_json::json!({ "error": self.to_string() });
            let mut answer = (status, axum::Json(body)).into_response();
            if let WebError::Busy(seconds) = self {
                answer
                    .headers_mut()
                    .insert(header::RETRY_AFTER, seconds.into());
            }
            return answer;
        }
        internal(&self)
    }
}

/// The answer to a failure inside the server: its details go to the log under
/// a new error id, the client gets only the id.
pub(crate) fn internal(error: &dyn std::error::Error) -> Response {
    let id =
        crate::auth::random_hex(6).unwrap_or_else(|_| uuid::Uuid::now_v7().simple().to_string());
    tracing::error!(error_id = %id, "request failed: {}", full_chain(error));
    let body = serde_json::json!({
        "error": format!("internal error {id}: the server's log has the details"),
        "error_id": id,
    });
    (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
}

/// An error and its sources, `: `-joined.
fn full_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}
