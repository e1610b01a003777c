//! Sending a message again after a transient failure, as a target's `retry:`
//! asks: the server's Retry-After is honoured, otherwise an exponential backoff
//! with jitter. The turn records how many tries it took.

#[cfg(feature = "http")]
use std::future::Future;
#[cfg(feature = "http")]
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backon::ExponentialBuilder;
#[cfg(feature = "http")]
use backon::Retryable;
use gavel_core::Attempts;
#[cfg(feature = "http")]
use gavel_core::Turn;
use gavel_core::target::RetrySpec;

/// The first wait when the spec sets none.
const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
/// The longest backoff step (before jitter).
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The longest wait a server's Retry-After can ask for.
#[cfg(feature = "http")]
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// A target's retry settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    attempts: u32,
    backoff: Duration,
}

impl RetryPolicy {
    /// The policy of a target's `retry:` (the loader has bounded its numbers).
    pub(crate) fn from_spec(spec: &RetrySpec) -> Self {
        RetryPolicy {
            attempts: spec.attempts.max(1),
            backoff: spec
                .backoff_ms
                .map_or(DEFAULT_BACKOFF, Duration::from_millis),
        }
    }

    /// The waits between tries: one fewer than the tries, doubling, with jitter.
    pub(crate) fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::default()
            .with_min_delay(self.backoff)
            .with_max_delay(MAX_BACKOFF.max(self.backoff))
            .with_max_times(usize::try_from(self.attempts - 1).unwrap_or(usize::MAX))
            .with_jitter()
    }
}

/// One try: the turn as it came back, and what the server said about waiting.
#[cfg(feature = "http")]
#[derive(Debug)]
pub(crate) struct Try {
    pub(crate) turn: Turn,
    /// The server's Retry-After, when it sent one.
    pub(crate) retry_after: Option<Duration>,
    /// Whether the answer was 429 Too Many Requests.
    pub(crate) rate_limited: bool,
    /// Whether the answer was a success whose body could not be used.
    pub(crate) malformed: bool,
}

#[cfg(feature = "http")]
impl Try {
    /// A try with nothing to say about waiting.
    pub(crate) fn of(turn: Turn) -> Self {
        Try {
            turn,
            retry_after: None,
            rate_limited: false,
            malformed: false,
        }
    }
}

#[cfg(feature = "http")]
/// Runs `try_once` once without a policy; with one, again after each transient
/// failure until the tries run out. The turn of the last try is returned, with
/// the tries counted in [`Turn::attempts`] when a policy is set.
pub(crate) async fn send<F, Fut>(policy: Option<RetryPolicy>, mut try_once: F) -> Turn
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Try>,
{
    let Some(policy) = policy else {
        return try_once().await.turn;
    };
    let tries = AtomicU32::new(0);
    let limited = AtomicU32::new(0);
    let malformed = AtomicU32::new(0);
    let backoff = policy.backoff();
    let result = (|| {
        tries.fetch_add(1, Ordering::Relaxed);
        let pending = try_once();
        let (limited, malformed) = (&limited, &malformed);
        async move {
            let tried = pending.await;
            if tried.rate_limited {
                limited.fetch_add(1, Ordering::Relaxed);
            }
            if tried.malformed {
                malformed.fetch_add(1, Ordering::Relaxed);
            }
            match &tried.turn.failure {
                Some(failure) if failure.transient => Err(tried),
                _ => Ok(tried),
            }
        }
    })
    .retry(backoff)
    .sleep(tokio::time::sleep)
    .adjust(|tried: &Try, step: Option<Duration>| {
        step.map(|step| {
            tried
                .retry_after
                .map_or(step, |after| after.min(MAX_RETRY_AFTER))
        })
    })
    .await;
    let mut turn = match result {
        Ok(tried) | Err(tried) => tried.turn,
    };
    let mut attempts = counted(tries.into_inner(), limited.into_inner());
    attempts.malformed = malformed.into_inner();
    turn.attempts = Some(attempts);
    turn
}

/// The counts of `tries` tries, `rate_limited` of them answered 429.
pub(crate) fn counted(tries: u32, rate_limited: u32) -> Attempts {
    Attempts {
        attempts: tries,
        retries: tries.saturating_sub(1),
        rate_limited,
        malformed: 0,
    }
}
