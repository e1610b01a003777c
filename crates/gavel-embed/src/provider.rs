//! Provider embeddings: an OpenAI-compatible `/v1/embeddings` endpoint.

use std::sync::OnceLock;

use gavel_models::{EmbeddingProvider, ModelId, ModelSettings, ProviderConfig};

use crate::{EmbedError, Embedder};

/// Embeddings from a provider (`openai:text-embedding-3-small`,
/// `openai-compatible:NAME@URL`). Every answer must hold one vector per text,
/// all of one non-zero dimension, the same on every call.
#[derive(Debug)]
pub struct ProviderEmbedder {
    name: String,
    provider: EmbeddingProvider,
    dimension: OnceLock<usize>,
}

impl ProviderEmbedder {
    /// The embedder for `id`, configured by `config`, its calls retried and timed
    /// out by `settings`.
    pub fn new(
        id: &ModelId,
        config: &ProviderConfig,
        settings: &ModelSettings,
    ) -> Result<Self, EmbedError> {
        let provider = EmbeddingProvider::new(id, config, settings)
            .map_err(|e| EmbedError::Provider(e.message))?;
        Ok(ProviderEmbedder {
            name: provider.label().to_owned(),
            provider,
            dimension: OnceLock::new(),
        })
    }

    /// Checks every vector has the dimension of the first answer ever seen.
    fn check_dimensions(&self, vectors: &[Vec<f32>]) -> Result<(), EmbedError> {
        let Some(first) = vectors.first() else {
            return Ok(());
        };
        let expected = *self.dimension.get_or_init(|| first.len());
        if let Some((i, v)) = vectors
            .iter()
            .enumerate()
            .find(|(_, v)| v.is_empty() || v.len() != expected)
        {
            return Err(EmbedError::Provider(format!(
                "{}: embedding {i} has {} dimensions, expected {expected}",
                self.name,
                v.len()
            )));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Embedder for ProviderEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let vectors = self
            .provider
            .embed(texts)
            .await
            .map_err(|e| EmbedError::Provider(e.message))?;
        self.check_dimensions(&vectors)?;
        Ok(vectors)
    }
}
