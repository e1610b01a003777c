//! The rate-limit layer: requests and (estimated) tokens per minute.

use std::fmt;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelId, SharedBuckets};

/// A budget of cells (requests or tokens) replenished evenly over each minute: a
/// GCRA (generic cell rate algorithm), the one the shared buckets in the store
/// keep: one cell frees every `period`, at most `burst` are free at once.
///
/// The clock is `tokio::time::Instant` and waiting is `tokio::time::sleep`, so
/// tokio's paused test clock drives it and tests of the spacing take no time.
///
/// A limit made [`shared`](RateLimit::shared) takes its cells from a bucket in the
/// store instead, the same for every process on that store; if the store cannot
/// be reached, the process's own limiter holds the call.
pub struct RateLimit {
    /// The theoretical arrival time: when every cell taken so far has freed
    /// again (`None` before the first take).
    tat: Mutex<Option<Instant>>,
    per_minute: NonZeroU32,
    burst: NonZeroU32,
    period: Duration,
    shared: Option<(Arc<dyn SharedBuckets>, String)>,
}

impl RateLimit {
    /// `per_minute` cells a minute, at most `burst` of them at once.
    pub fn per_minute(per_minute: NonZeroU32, burst: NonZeroU32) -> RateLimit {
        let burst = burst.min(per_minute);
        // Replenish one cell every minute / per_minute; at least one nanosecond.
        let period = Duration::from_nanos((60_000_000_000 / u64::from(per_minute.get())).max(1));
        RateLimit {
            tat: Mutex::new(None),
            per_minute,
            burst,
            period,
            shared: None,
        }
    }

    /// The same limit, its cells taken from the bucket `key` of `buckets`, which
    /// every process sharing that store draws from.
    pub fn shared(mut self, buckets: Arc<dyn SharedBuckets>, key: String) -> RateLimit {
        self.shared = Some((buckets, key));
        self
    }

    /// A requests-per-minute limit. The burst is one second's worth (at least one
    /// request), so requests are spread evenly over the minute: no sliding minute
    /// ever sees more than `rpm + rpm/60` of them, and providers that enforce their
    /// limit over sub-minute windows are not tripped by a burst at start.
    pub fn requests_per_minute(rpm: NonZeroU32) -> RateLimit {
        let burst = NonZeroU32::new(rpm.get().div_ceil(60)).unwrap_or(NonZeroU32::MIN);
        RateLimit::per_minute(rpm, burst)
    }

    /// A tokens-per-minute limit. The burst is the whole minute's budget: one prompt
    /// may carry thousands of tokens, and a smaller bucket would have to undercount
    /// it (a request never waits for more cells than the bucket holds).
    pub fn tokens_per_minute(tpm: NonZeroU32) -> RateLimit {
        RateLimit::per_minute(tpm, tpm)
    }

    /// The most cells one acquisition takes.
    pub fn burst(&self) -> NonZeroU32 {
        self.burst
    }

    /// Waits until `n` cells are free and takes them; `n` is capped at the burst
    /// size (a larger request waits for a full bucket) and raised to at least one.
    pub async fn acquire(&self, n: u64) {
        let n = u32::try_from(n)
            .ok()
            .and_then(NonZeroU32::new)
            .unwrap_or(NonZeroU32::MIN)
            .min(self.burst);
        if let Some((buckets, key)) = &self.shared {
            loop {
                match buckets
                    .take(key, self.period, self.burst.get(), n.get())
                    .await
                {
                    Ok(None) => return,
                    Ok(Some(wait)) => tokio::time::sleep(wait).await,
                    Err(error) => {
                        tracing::warn!(
                            "shared rate limit `{key}` unavailable ({error}); this process's own limit holds the call"
                        );
                        break;
                    }
                }
            }
        }
        while let Some(wait) = self.take(n) {
            tokio::time::sleep(wait).await;
        }
    }

    /// Takes `n` cells (`n` ≤ burst) if they are free now: `None`, else how long
    /// until they are (nothing taken). The bucket holds `burst` cells: `n` of them
    /// are free once the arrival time of the last of them, `tat + (n - 1) ·
    /// period`, is at most `(burst - 1) · period` ahead of now.
    fn take(&self, n: NonZeroU32) -> Option<Duration> {
        let now = Instant::now();
        let mut tat = self.tat.lock().unwrap_or_else(PoisonError::into_inner);
        let last = tat.unwrap_or(now) + self.period.saturating_mul(n.get() - 1);
        let horizon = now + self.period.saturating_mul(self.burst.get() - 1);
        if last > horizon {
            return Some(last - horizon);
        }
        *tat = Some(tat.map_or(now, |t| t.max(now)) + self.period.saturating_mul(n.get()));
        None
    }
}

impl fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimit")
            .field("per_minute", &self.per_minute)
            .field("burst", &self.burst)
            .field("shared", &self.shared.as_ref().map(|(_, key)| key))
            .finish()
    }
}

/// Holds each call until the request limit (RPM) and the token limit (TPM) allow
/// it. Tokens are estimated before the call as a quarter of the prompt's characters
/// (system prompt, messages, tool calls, tool definitions and output schema).
///
/// It sits outside the retry layer: a retried call took its cells once, and waits
/// out the provider's Retry-After without taking more.
pub struct RateLimited {
    inner: Arc<dyn ChatModel>,
    requests: Option<Arc<RateLimit>>,
    tokens: Option<Arc<RateLimit>>,
}

impl RateLimited {
    /// Limits `inner` by `requests` (RPM) and `tokens` (TPM), either optional. Share
    /// the limits between models that share a provider's quota.
    pub fn new(
        inner: Arc<dyn ChatModel>,
        requests: Option<Arc<RateLimit>>,
        tokens: Option<Arc<RateLimit>>,
    ) -> Self {
        RateLimited {
            inner,
            requests,
            tokens,
        }
    }
}

/// The prompt's size in tokens, roughly: characters / 4.
pub fn estimate_prompt_tokens(request: &ChatRequest) -> u64 {
    let json_chars = |value: &serde_json::Value| match value {
        serde_json::Value::String(s) => s.chars().count(),
        other => other.to_string().chars().count(),
    };
    let mut chars = request.system.as_deref().map_or(0, |s| s.chars().count());
    for message in &request.messages {
        chars += message.content.chars().count();
        for call in &message.tool_calls {
            chars += call.name.chars().count() + json_chars(&call.arguments);
        }
    }
    for tool in &request.tools {
        chars += tool.name.chars().count()
            + tool.description.chars().count()
            + json_chars(&tool.parameters);
    }
    if let Some(schema) = &request.schema {
        chars += json_chars(&schema.schema);
    }
    u64::try_from(chars / 4).unwrap_or(u64::MAX)
}

#[async_trait::async_trait]
impl ChatModel for RateLimited {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        if let Some(requests) = &self.requests {
            requests.acquire(1).await;
        }
        if let Some(tokens) = &self.tokens {
            tokens.acquire(estimate_prompt_tokens(request)).await;
        }
        self.inner.chat(request).await
    }

    fn id(&self) -> &ModelId {
        self.inner.id()
    }
}

impl fmt::Debug for RateLimited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimited")
            .field("requests", &self.requests)
            .field("tokens", &self.tokens)
            .field("inner", &self.inner)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    #[test]
    fn tokens_are_a_quarter_of_the_characters() {
        let request = ChatRequest {
            system: Some("x".repeat(40)),
            messages: vec![
                Message::user("y".repeat(400)),
                Message::assistant("ü".repeat(80)),
            ],
            ..ChatRequest::default()
        };
        assert_eq!(estimate_prompt_tokens(&request), 130);
    }

    #[tokio::test(start_paused = true)]
    async fn bursts_are_capped_and_cells_replenish_evenly() {
        let rpm = RateLimit::requests_per_minute(NonZeroU32::new(120).unwrap());
        assert_eq!(rpm.burst().get(), 2);
        let start = Instant::now();
        for _ in 0..6 {
            rpm.acquire(1).await;
        }
        // Two at once, then one every 500 ms.
        assert_eq!(start.elapsed(), Duration::from_millis(2000));

        let tpm = RateLimit::tokens_per_minute(NonZeroU32::new(6000).unwrap());
        let start = Instant::now();
        tpm.acquire(6000).await;
        tpm.acquire(1_000_000).await; // capped: waits for one full bucket
        assert_eq!(start.elapsed(), Duration::from_secs(60));
    }
}
