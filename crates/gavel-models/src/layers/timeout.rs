//! The timeout layer: each try has its own deadline.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::{ChatModel, ChatRequest, ChatResponse, ErrorKind, ModelError, ModelId};

/// Fails a call that takes longer than `per_call` with [`ErrorKind::Timeout`]
/// (which the retry layer outside it may retry, with a fresh deadline).
pub struct Timeout {
    inner: Arc<dyn ChatModel>,
    per_call: Duration,
}

impl Timeout {
    /// Gives each call to `inner` at most `per_call`.
    pub fn new(inner: Arc<dyn ChatModel>, per_call: Duration) -> Self {
        Timeout { inner, per_call }
    }
}

#[async_trait::async_trait]
impl ChatModel for Timeout {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        match tokio::time::timeout(self.per_call, self.inner.chat(request)).await {
            Ok(result) => result,
            Err(_) => Err(ModelError::new(
                ErrorKind::Timeout,
                format!(
                    "{}: timed out after {}s",
                    self.inner.id(),
                    self.per_call.as_secs_f64()
                ),
            )),
        }
    }

    fn id(&self) -> &ModelId {
        self.inner.id()
    }
}

impl fmt::Debug for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timeout")
            .field("per_call", &self.per_call)
            .field("inner", &self.inner)
            .finish()
    }
}
