//! The retry layer: transient failures are tried again, with backoff.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

use gavel_core::Attempts;

use crate::{ChatModel, ChatRequest, ChatResponse, ErrorKind, ModelError, ModelId};

/// The first backoff step; each further one doubles, up to [`MAX_DELAY`].
pub const BASE_DELAY: Duration = Duration::from_millis(500);
/// The longest backoff step (before jitter, which adds up to the step again).
pub const MAX_DELAY: Duration = Duration::from_secs(30);
/// The longest wait a provider's Retry-After can ask for.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// How many times a malformed answer ([`ErrorKind::Malformed`]) is asked
/// again (within `max_retries`) before it is returned as an error.
pub const MALFORMED_RETRIES: u32 = 2;

/// Tries a call again when it failed in a way worth retrying
/// ([`ErrorKind::is_retryable`]: rate-limited, transient, timed out), up to
/// `max_retries` times, then returns the last error; a malformed answer is asked
/// again at most [`MALFORMED_RETRIES`] times. Authentication, missing
/// credentials and permanent errors return at once. The answer (or error)
/// carries the tries in its `attempts`.
///
/// Between tries it waits the provider's Retry-After when the error carries one
/// (capped at [`MAX_RETRY_AFTER`]), otherwise an exponential backoff step from
/// [`BASE_DELAY`] to [`MAX_DELAY`] with jitter.
pub struct Retry {
    inner: Arc<dyn ChatModel>,
    max_retries: u32,
}

impl Retry {
    /// Retries `inner` up to `max_retries` times (0: never).
    pub fn new(inner: Arc<dyn ChatModel>, max_retries: u32) -> Self {
        Retry { inner, max_retries }
    }
}

#[async_trait::async_trait]
impl ChatModel for Retry {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let (result, attempts) = retry_counted(self.inner.id(), self.max_retries, || {
            self.inner.chat(request)
        })
        .await;
        match result {
            Ok(mut response) => {
                response.attempts = attempts;
                Ok(response)
            }
            Err(mut error) => {
                error.attempts = attempts;
                Err(error)
            }
        }
    }

    fn id(&self) -> &ModelId {
        self.inner.id()
    }
}

#[cfg(feature = "http")]
/// Runs `call` as [`Retry`] runs a chat call: again after each retryable
/// failure, up to `max_retries` times, waiting Retry-After or a backoff step;
/// `model` names the calls in debug logs. For calls that are not chat requests
/// (embeddings).
pub(crate) async fn retry_transient<T, F, Fut>(
    model: &(dyn fmt::Display + Sync),
    max_retries: u32,
    call: F,
) -> Result<T, ModelError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ModelError>>,
{
    retry_counted(model, max_retries, call).await.0
}

/// [`retry_transient`], with the tries it took.
async fn retry_counted<T, F, Fut>(
    model: &(dyn fmt::Display + Sync),
    max_retries: u32,
    mut call: F,
) -> (Result<T, ModelError>, Attempts)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ModelError>>,
{
    let attempts = AtomicU32::new(0);
    let rate_limited = AtomicU32::new(0);
    let malformed = AtomicU32::new(0);
    let backoff = ExponentialBuilder::default()
        .with_min_delay(BASE_DELAY)
        .with_max_delay(MAX_DELAY)
        .with_max_times(usize::try_from(max_retries).unwrap_or(usize::MAX))
        .with_jitter();
    let result = (|| {
        attempts.fetch_add(1, Ordering::Relaxed);
        let pending = call();
        let (rate_limited, malformed) = (&rate_limited, &malformed);
        async move {
            let result = pending.await;
            match result.as_ref().map_err(|e| e.kind) {
                Err(ErrorKind::RateLimited) => rate_limited.fetch_add(1, Ordering::Relaxed),
                Err(ErrorKind::Malformed) => malformed.fetch_add(1, Ordering::Relaxed),
                _ => 0,
            };
            result
        }
    })
    .retry(backoff)
    .sleep(tokio::time::sleep)
    .when(|error: &ModelError| {
        error.kind.is_retryable()
            || (error.kind == ErrorKind::Malformed
                && malformed.load(Ordering::Relaxed) <= MALFORMED_RETRIES)
    })
    .adjust(|error: &ModelError, step: Option<Duration>| {
        // `None`: the retries are spent.
        step.map(|step| {
            error
                .retry_after
                .map_or(step, |after| after.min(MAX_RETRY_AFTER))
        })
    })
    .notify(|error: &ModelError, wait: Duration| {
        tracing::debug!(%model, kind = ?error.kind, %error, ?wait, "retrying a model call");
    })
    .await;
    let attempts = attempts.into_inner();
    if attempts > 1 {
        tracing::debug!(%model, attempts, ok = result.is_ok(), "model call retried");
    }
    let counts = Attempts {
        attempts,
        retries: attempts.saturating_sub(1),
        rate_limited: rate_limited.into_inner(),
        malformed: malformed.into_inner(),
    };
    (result, counts)
}

impl fmt::Debug for Retry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retry")
            .field("max_retries", &self.max_retries)
            .field("inner", &self.inner)
            .finish()
    }
}
