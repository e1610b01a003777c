//! Chat models for gavel: the [`ChatModel`] trait, provider implementations and
//! the layers every call goes through (cache → rate limit → concurrency → retry →
//! timeout → accounting → provider).

mod error;
mod id;
mod request;

pub mod layers;
mod pricing;
mod providers;
mod recorded;
mod retry_after;
mod stack;

pub use error::{ErrorKind, ModelError};
pub use id::{ModelId, ModelIdError, Provider};
pub use layers::CacheMode;
pub use pricing::{builtin_prices, price_for};
#[cfg(feature = "http")]
pub use providers::EmbeddingProvider;
pub use providers::{ProviderConfig, base_url, provider, provider_with};
pub use recorded::chat_recorded;
pub use request::{
    ChatRequest, ChatResponse, Message, OutputSchema, Role, TokenLogprob, TokenUsage,
    ToolCallRequest, ToolDef, TopLogprob,
};
pub use retry_after::retry_after;
pub use stack::{ModelPool, ModelSettings, layered};

/// A chat model: one request in, one response (or a classified error) out.
///
/// Providers only classify failures; the retry, rate-limit and timeout layers act
/// on the classification.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync + std::fmt::Debug {
    /// Sends one chat request.
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError>;
    /// The model this answers for.
    fn id(&self) -> &ModelId;
}

/// Hands out models by id, each built once with its layers (see `ModelPool`).
pub trait ModelSource: Send + Sync {
    /// The model for `id` (e.g. `openai:gpt-5-mini`), or why it is unavailable.
    fn model(&self, id: &str) -> Result<std::sync::Arc<dyn ChatModel>, ModelError>;
}

/// Rate-limit buckets shared by every process on one store, so that N workers
/// hold one RPM/TPM between them (implemented over the gavel store).
///
/// Each bucket is a GCRA: one cell every `period`, at most `burst` cells at once.
#[async_trait::async_trait]
pub trait SharedBuckets: Send + Sync {
    /// Takes `n` cells (`n ≤ burst`) of the bucket `key`: `None` when taken,
    /// `Some(wait)` when they are free only after `wait` (nothing taken).
    async fn take(
        &self,
        key: &str,
        period: std::time::Duration,
        burst: u32,
        n: u32,
    ) -> Result<Option<std::time::Duration>, Box<dyn std::error::Error + Send + Sync>>;
}

/// A key-value store for cached model answers (implemented over the gavel store).
#[async_trait::async_trait]
pub trait CacheStore: Send + Sync {
    /// The cached answer for `key`, if any.
    async fn get(&self, key: &str) -> Result<Option<String>, CacheError>;
    /// Keeps `value` (a serialized [`ChatResponse`]) under `key`.
    async fn put(&self, key: &str, model: &str, value: &str) -> Result<(), CacheError>;
}

/// A [`CacheStore`] could not read or keep an entry: the backing store's error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct CacheError(Box<dyn std::error::Error + Send + Sync>);

impl CacheError {
    /// Wraps the backing store's error (or a message).
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        CacheError(error.into())
    }
}
