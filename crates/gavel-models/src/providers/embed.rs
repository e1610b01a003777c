//! Embeddings over OpenAI's `/v1/embeddings` wire format (OpenAI and every
//! compatible server), through genai like the chat providers.

use std::fmt;
use std::time::Duration;

use genai::adapter::AdapterKind;
use genai::resolver::{AuthData, Endpoint};
use genai::{Client, ModelIden, ServiceTarget};

use super::classify::classify;
use super::config::{ProviderConfig, resolve};
use super::model::genai_client;
use crate::layers::retry_transient;
use crate::{ErrorKind, ModelError, ModelId, ModelSettings, Provider};

/// An embeddings endpoint: `openai:` (`OPENAI_API_KEY`, `OPENAI_BASE_URL`) or
/// `openai-compatible:NAME@URL` (optional `OPENAI_COMPATIBLE_API_KEY`).
///
/// Each call is retried and timed out as chat calls are (`max_retries` and
/// `timeout` of the [`ModelSettings`]). `Debug` and error messages never show the key.
pub struct EmbeddingProvider {
    label: String,
    client: Client,
    target: ServiceTarget,
    per_try: Duration,
    max_retries: u32,
}

impl fmt::Debug for EmbeddingProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddingProvider")
            .field("id", &self.label)
            .finish_non_exhaustive()
    }
}

impl EmbeddingProvider {
    /// The provider for `id`, located and keyed by `config` (see
    /// [`provider`](crate::provider) for the variables read from the environment),
    /// its calls retried and timed out by `settings`.
    pub fn new(
        id: &ModelId,
        config: &ProviderConfig,
        settings: &ModelSettings,
    ) -> Result<Self, ModelError> {
        if !matches!(id.provider, Provider::OpenAi | Provider::OpenAiCompatible) {
            return Err(ModelError::new(
                ErrorKind::Permanent,
                format!(
                    "{id}: embeddings are supported for openai: and openai-compatible: models only"
                ),
            ));
        }
        let resolved = resolve(id, config, |name| std::env::var(name).ok())?;
        let label = match id.provider {
            Provider::OpenAiCompatible => format!(
                "{}:{}@{}",
                id.provider.prefix(),
                id.model,
                resolved.display_base
            ),
            _ => id.to_string(),
        };
        let auth = match &resolved.api_key {
            Some(key) => AuthData::from_single(key.clone()),
            // genai's OpenAI adapter insists on a key; a keyless server gets the URL
            // outright and no `Authorization` header.
            None => AuthData::RequestOverride {
                url: embeddings_url(&resolved.endpoint),
                headers: genai::Headers::from(vec![(
                    "Content-Type".to_owned(),
                    "application/json".to_owned(),
                )]),
            },
        };
        let client = genai_client(&label, config, &resolved.endpoint)?;
        let target = ServiceTarget {
            endpoint: Endpoint::from_owned(resolved.endpoint),
            auth,
            model: ModelIden::new(AdapterKind::OpenAI, id.model.clone()),
        };
        Ok(EmbeddingProvider {
            label,
            client,
            target,
            per_try: settings.timeout,
            max_retries: settings.max_retries,
        })
    }

    /// The id as shown in messages (URL credentials masked).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// One vector per text, in order. A failed call is classified like a chat
    /// call and retried when that is worth it; an answer with the wrong number of
    /// vectors, or indexes that do not cover the inputs, is a
    /// [`ErrorKind::Permanent`] error.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        retry_transient(&self.label, self.max_retries, || self.embed_once(texts)).await
    }

    /// One try, within the per-try deadline.
    async fn embed_once(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let call = self
            .client
            .embed_batch(self.target.clone(), texts.to_vec(), None);
        let response = match tokio::time::timeout(self.per_try, call).await {
            Ok(answer) => answer.map_err(|e| self.finish_error(classify(e)))?,
            Err(_) => {
                return Err(self.finish_error(ModelError::new(
                    ErrorKind::Timeout,
                    format!("timed out after {}s", self.per_try.as_secs_f64()),
                )));
            }
        };
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for embedding in response.embeddings {
            let slot = slots.get_mut(embedding.index).ok_or_else(|| {
                self.finish_error(ModelError::new(
                    ErrorKind::Permanent,
                    format!(
                        "answered an embedding with index {} for {} inputs",
                        embedding.index,
                        texts.len()
                    ),
                ))
            })?;
            *slot = Some(embedding.vector);
        }
        let given = slots.iter().filter(|s| s.is_some()).count();
        if given != texts.len() {
            return Err(self.finish_error(ModelError::new(
                ErrorKind::Permanent,
                format!(
                    "answered {given} distinct embeddings for {} inputs",
                    texts.len()
                ),
            )));
        }
        Ok(slots.into_iter().flatten().collect())
    }

    /// Prefixes the id and scrubs every registered secret from a failure's message.
    fn finish_error(&self, error: ModelError) -> ModelError {
        let message = format!("{}: {}", self.label, error.message);
        let message = gavel_core::secrets::redact(&message).into_owned();
        ModelError { message, ..error }
    }
}

/// The embeddings URL under an OpenAI base (`…/v1/` → `…/v1/embeddings`),
/// keeping a query string.
fn embeddings_url(endpoint: &str) -> String {
    match endpoint.split_once('?') {
        Some((path, query)) => format!("{path}embeddings?{query}"),
        None => format!("{endpoint}embeddings"),
    }
}
