//! The cache layer: answers kept under a content-addressed key, served with no call.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;
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
///
/// Identical requests in flight at once (one cache key) make one call: the first
/// calls the model, the others wait for its answer and get it as a hit, so the
/// number of paid calls does not depend on how many run in parallel. If that call
/// fails or is cancelled, the next waiter calls the model itself.
pub struct Cached {
    inner: Arc<dyn ChatModel>,
    store: Arc<dyn CacheStore>,
    mode: CacheMode,
    in_flight: InFlight,
}

impl Cached {
    /// Caches `inner`'s answers in `store`, as `mode` says.
    pub fn new(inner: Arc<dyn ChatModel>, store: Arc<dyn CacheStore>, mode: CacheMode) -> Self {
        Cached {
            inner,
            store,
            mode,
            in_flight: Mutex::default(),
        }
    }

    /// The answer to `request` under `key`: looked up, or called for, once for all
    /// identical requests in flight; and whether this caller called the model.
    async fn answer(
        &self,
        key: &str,
        request: &ChatRequest,
    ) -> Result<(ChatResponse, bool), ModelError> {
        let joined = Joined::new(&self.in_flight, key);
        let mut called = false;
        let answer = joined
            .cell
            .get_or_try_init(|| async {
                if let Some(hit) = self.lookup(key).await {
                    tracing::debug!(model = %self.inner.id(), key, "model cache hit");
                    return Ok(hit);
                }
                if self.mode == CacheMode::Only {
                    return Err(ModelError::new(
                        ErrorKind::CacheMiss,
                        format!("{}: not in the cache (--cache-only)", self.inner.id()),
                    ));
                }
                called = true;
                let response = self.inner.chat(request).await?;
                if cacheable(&response) {
                    self.keep(key, &response).await;
                }
                Ok(response)
            })
            .await?
            .clone();
        Ok((answer, called))
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

/// Identical requests in flight, by cache key: one cell each, set by the call that
/// answered.
type InFlight = Mutex<HashMap<String, Arc<OnceCell<ChatResponse>>>>;

/// One caller's hold on the cell of its key. Dropped (answered, failed or
/// cancelled), it takes the cell out of the map once it is set, or once nobody else
/// waits on it: later callers then find the answer in the cache, or call afresh.
struct Joined<'a> {
    in_flight: &'a InFlight,
    key: &'a str,
    cell: Arc<OnceCell<ChatResponse>>,
}

impl<'a> Joined<'a> {
    fn new(in_flight: &'a InFlight, key: &'a str) -> Self {
        let cell = in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key.to_owned())
            .or_default()
            .clone();
        Joined {
            in_flight,
            key,
            cell,
        }
    }
}

impl Drop for Joined<'_> {
    fn drop(&mut self) {
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let ours = in_flight
            .get(self.key)
            .is_some_and(|cell| Arc::ptr_eq(cell, &self.cell));
        // Two holders: the map and this caller.
        if ours && (self.cell.initialized() || Arc::strong_count(&self.cell) == 2) {
            in_flight.remove(self.key);
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
        let (mut response, called) = self.answer(&key, request).await?;
        if !called {
            // From the cache, or shared with the identical call that made it.
            response.cached = true;
            response.cost_usd = Some(0.0);
            response.latency_ms = elapsed_ms(started);
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
