//! The providers: OpenAI Chat Completions (and every OpenAI-compatible server),
//! Anthropic Messages and Gemini generateContent, each speaking its own wire
//! format through [`genai`].
//!
//! A provider only translates and classifies: it sends one request, measures the
//! call, and turns every failure into a [`ModelError`] whose [`ErrorKind`] tells
//! the layers above what to do (retry, wait out `retry_after`, give up, skip).
//! It never retries, caches or prices anything itself.
//!
//! Build one with [`provider`] (credentials and base URLs from the environment,
//! as the official SDKs read them) or [`provider_with`] (explicit
//! [`ProviderConfig`], for tests and configuration files).
//!
//! [`ErrorKind`]: crate::ErrorKind

#[cfg(feature = "http")]
mod classify;
mod config;
#[cfg(feature = "http")]
mod embed;
#[cfg(feature = "http")]
mod logprobs;
#[cfg(feature = "http")]
mod model;

use std::sync::Arc;

pub use config::{ProviderConfig, base_url};
#[cfg(feature = "http")]
pub use embed::EmbeddingProvider;

use crate::{ChatModel, ModelError, ModelId};

/// The raw provider for `id`, configured from the environment.
///
/// | family | API key | base URL (default) |
/// | --- | --- | --- |
/// | `openai` | `OPENAI_API_KEY` | `OPENAI_BASE_URL` (`https://api.openai.com/v1`) |
/// | `openai-compatible` | `OPENAI_COMPATIBLE_API_KEY`, optional: no `Authorization` header without it; sent only to `OPENAI_COMPATIBLE_BASE_URL` when that is set | the URL in the id |
/// | `anthropic` | `ANTHROPIC_API_KEY` | `ANTHROPIC_BASE_URL` (`https://api.anthropic.com`) |
/// | `gemini` | `GEMINI_API_KEY`, else `GOOGLE_API_KEY` | `GEMINI_BASE_URL` (`https://generativelanguage.googleapis.com`) |
///
/// A missing key is an [`ErrorKind::NoCredentials`](crate::ErrorKind::NoCredentials)
/// error naming the variable, so the checks using this model are skipped with
/// that reason.
pub fn provider(id: &ModelId) -> Result<Arc<dyn ChatModel>, ModelError> {
    provider_with(id, ProviderConfig::from_env())
}

/// The raw provider for `id`, configured by `config`: explicit values win, and
/// the environment fills in the rest only when `config.read_env` is set.
///
/// Without the `http` feature there are no providers: every id is a
/// [`ErrorKind::Permanent`](crate::ErrorKind::Permanent) error saying so.
pub fn provider_with(
    id: &ModelId,
    config: ProviderConfig,
) -> Result<Arc<dyn ChatModel>, ModelError> {
    #[cfg(feature = "http")]
    return Ok(Arc::new(model::ProviderModel::new(id.clone(), &config)?));
    #[cfg(not(feature = "http"))]
    {
        let _ = config;
        Err(no_providers(id))
    }
}

/// Why a model id names no provider in a build without the `http` feature.
#[cfg(not(feature = "http"))]
fn no_providers(id: &ModelId) -> ModelError {
    ModelError::new(
        crate::ErrorKind::Permanent,
        format!(
            "{id}: this build has no hosted model providers (gavel-eval's `http` feature; the `gavel` binary has them)"
        ),
    )
}
