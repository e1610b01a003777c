//! The accounting layer: what a call cost and how long it took.

use std::fmt;
use std::sync::Arc;

use gavel_core::judge::Price;
use tokio::time::Instant;

use super::cache::elapsed_ms;
use crate::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelId, TokenUsage};

/// Prices each answer from its token usage (`cost_usd`; left as the provider set
/// it, usually unknown, when there is no price) and measures its latency when the
/// provider did not. The innermost layer: it sees each try on its own.
pub struct Accounting {
    inner: Arc<dyn ChatModel>,
    price: Option<Price>,
}

impl Accounting {
    /// Accounts for `inner`'s calls at `price` (see [`price_for`](crate::price_for)).
    pub fn new(inner: Arc<dyn ChatModel>, price: Option<Price>) -> Self {
        Accounting { inner, price }
    }
}

/// The dollars `usage` costs at `price`.
pub fn cost_usd(usage: TokenUsage, price: Price) -> f64 {
    // u64 → f64 is exact up to 2^53 tokens.
    (usage.input_tokens as f64 * price.input_per_mtok
        + usage.output_tokens as f64 * price.output_per_mtok)
        / 1_000_000.0
}

#[async_trait::async_trait]
impl ChatModel for Accounting {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let started = Instant::now();
        let mut response = self.inner.chat(request).await?;
        if response.latency_ms == 0 {
            response.latency_ms = elapsed_ms(started);
        }
        if let Some(price) = self.price {
            response.cost_usd = Some(cost_usd(response.usage, price));
        }
        Ok(response)
    }

    fn id(&self) -> &ModelId {
        self.inner.id()
    }
}

impl fmt::Debug for Accounting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Accounting")
            .field("price", &self.price)
            .field("inner", &self.inner)
            .finish()
    }
}
