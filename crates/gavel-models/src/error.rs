//! Model errors, classified so the layers know what to do with them.

use std::time::Duration;

/// How a model call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No API key in the environment: checks using this model are skipped.
    NoCredentials,
    /// The provider refused the key (401/403).
    Auth,
    /// 429: slow down; `retry_after` says for how long when the provider did.
    RateLimited,
    /// 5xx, connection reset or refused, truncated body: worth retrying.
    Transient,
    /// The call took longer than its timeout: worth retrying.
    Timeout,
    /// The request or the answer is wrong in a way retrying cannot fix.
    Permanent,
    /// A successful answer whose body cannot be used (not JSON, no `choices`, no
    /// content): the retry layer tries again a bounded number of times
    /// ([`MALFORMED_RETRIES`](crate::layers::MALFORMED_RETRIES)), then
    /// returns it as an error.
    Malformed,
    /// `--cache-only` and the answer is not cached.
    CacheMiss,
}

impl ErrorKind {
    /// Whether the retry layer may try again.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimited | ErrorKind::Transient | ErrorKind::Timeout
        )
    }
}

/// A failed model call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// The class of failure.
    pub kind: ErrorKind,
    /// What happened, for people; never holds a credential.
    pub message: String,
    /// How long the provider asked us to wait (Retry-After).
    pub retry_after: Option<Duration>,
    /// The tries the call took, filled by the retry layer.
    pub attempts: gavel_core::Attempts,
}

impl ModelError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ModelError {
            kind,
            message: message.into(),
            retry_after: None,
            attempts: gavel_core::Attempts::default(),
        }
    }

    /// Sets the provider's Retry-After.
    pub fn retry_after(mut self, after: Option<Duration>) -> Self {
        self.retry_after = after;
        self
    }
}

impl ErrorKind {
    /// A short, stable name for the class (`rate_limited`, `timeout`, …), as
    /// OpenTelemetry's `error.type` wants it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NoCredentials => "no_credentials",
            ErrorKind::Auth => "auth",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Transient => "transient",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Permanent => "permanent",
            ErrorKind::Malformed => "malformed",
            ErrorKind::CacheMiss => "cache_miss",
        }
    }
}
