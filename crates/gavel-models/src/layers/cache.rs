//! The cache layer: answers kept under a content-addressed key, served with no call.

use std::fmt;
use std::sync::Arc;

use tokio::time::Instant;

use super::cache_key::cache_key;
use crate::{CacheStore, ChatModel, ChatRequest, ChatResponse, ErrorKind, ModelError, ModelId};

/// Finish reasons that mean the provider refused or filtered the answer (OpenAI
/// `content_filter`, Anthropic `refusal`, Gemini `SAFETY`, `RECITATION`,
/// `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`): such answers are never cached.
const REFUSALS: [&str; 7] = [
    "content_filter",
    "refusal",
    "safety",
    "recitation",
    "blocklist",
    "prohibited_content",
    "spii",
];

/// How the cache layer uses the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CacheMode {
    /// Serve hits, call the model on a miss and keep its answer (the default).
    #[default]
    ReadWrite,
    /// Neither read nor write (`--no-cache`).
    Off,
    /// Serve hits; a miss is an [`ErrorKind::CacheMiss`] error, never a call
    /// (`--cache-only`).
    Only,
}

/// Whether the answer may be kept: not a refusal or filtered answer.
fn cacheable(response: &ChatResponse) -> bool {
    response
        .finish_reason
        .as_deref()
        .is_none_or(|reason| !REFUSALS.iter().any(|r| reason.eq_ignore_ascii_case(r)))
}

/// Serves answers from a [`CacheStore`]; the outermost layer, so a hit spends no
/// rate-limit quota, no concurrency slot and no money.
///
/// A hit comes back with `cached: true`, `cost_usd: Some(0.0)` and the lookup's own
/// latency. Errors and refusals are never stored. The cache is best effort: a
/// store that fails to read counts as a miss, and one that fails to write loses the
/// entry, each with a warning, never failing the call.
pub struct Cached {
    inner: Arc<dyn ChatModel>,
    store: Arc<dyn CacheStore>,
    mode: CacheMode,
}

impl Cached {
    /// Caches `inner`'s answers in `store`, as `mode` says.
    pub fn new(inner: Arc<dyn ChatModel>, store: Arc<dyn CacheStore>, mode: CacheMode) -> Self {
        Cached { inner, store, mode }
    }

    /// The stored answer under `key`, if any and readable.
    async fn lookup(&self, key: &str) -> Option<ChatResponse> {
        let text = match self.store.get(key).await {
            Ok(found) => found?,
            Err(error) => {
                tracing::warn!(model = %self.inner.id(), key, %error, "model cache read failed; calling the model");
                return None;
            }
        };
        match serde_json::from_str(&text) {
            Ok(response) => Some(response),
            Err(error) => {
                tracing::warn!(model = %self.inner.id(), key, %error, "unreadable model cache entry; calling the model");
                None
            }
        }
    }

    async fn keep(&self, key: &str, response: &ChatResponse) {
        let model = self.inner.id().to_string();
        let text = match serde_json::to_string(response) {
            Ok(text) => text,
            Err(error) => {
                tracing::warn!(%model, key, %error, "cannot serialize a model answer for the cache");
                return;
            }
        };
        if let Err(error) = self.store.put(key, &model, &text).await {
            tracing::warn!(%model, key, %error, "model cache write failed; the answer is not cached");
        }
    }
}

#[async_trait::async_trait]
impl ChatModel for Cached {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        if self.mode == CacheMode::Off {
            return self.inner.chat(request).await;
        }
        let started = Instant::now();
        let key = cache_key(self.inner.id(), request);
        if let Some(mut hit) = self.lookup(&key).await {
            hit.cached = true;
            hit.cost_usd = Some(0.0);
            hit.latency_ms = elapsed_ms(started);
            tracing::debug!(model = %self.inner.id(), key, "model cache hit");
            return Ok(hit);
        }
        if self.mode == CacheMode::Only {
            return Err(ModelError::new(
                ErrorKind::CacheMiss,
                format!("{}: not in the cache (--cache-only)", self.inner.id()),
            ));
        }
        let response = self.inner.chat(request).await?;
        if cacheable(&response) {
            self.keep(&key, &response).await;
        }
        Ok(response)
    }

    fn id(&self) -> &ModelId {
        self.inner.id()
    }
}

impl fmt::Debug for Cached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cached")
            .field("mode", &self.mode)
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

/// Milliseconds since `started`, saturating.
pub(crate) fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_not_cacheable() {
        let mut response = ChatResponse::default();
        assert!(cacheable(&response));
        response.finish_reason = Some("stop".into());
        assert!(cacheable(&response));
        for reason in ["content_filter", "SAFETY", "refusal"] {
            response.finish_reason = Some(reason.into());
            assert!(!cacheable(&response), "{reason}");
        }
    }
}
