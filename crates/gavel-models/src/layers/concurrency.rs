//! The concurrency layer: at most N calls in flight.

use std::fmt;
use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::{ChatModel, ChatRequest, ChatResponse, ErrorKind, ModelError, ModelId};

/// Holds each call until one of the semaphore's permits is free, and keeps it for
/// the whole call, retries and their waits included. Share the semaphore between
/// models that share a provider.
pub struct Concurrency {
    inner: Arc<dyn ChatModel>,
    semaphore: Arc<Semaphore>,
}

impl Concurrency {
    /// Limits `inner` to the permits of `semaphore`.
    pub fn new(inner: Arc<dyn ChatModel>, semaphore: Arc<Semaphore>) -> Self {
        Concurrency { inner, semaphore }
    }
}

#[async_trait::async_trait]
impl ChatModel for Concurrency {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let _permit = self.semaphore.acquire().await.map_err(|_| {
            ModelError::new(
                ErrorKind::Permanent,
                format!("{}: the model's call limiter was closed", self.inner.id()),
            )
        })?;
        self.inner.chat(request).await
    }

    fn id(&self) -> &ModelId {
        self.inner.id()
    }
}

impl fmt::Debug for Concurrency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Concurrency")
            .field("available", &self.semaphore.available_permits())
            .field("inner", &self.inner)
            .finish()
    }
}
