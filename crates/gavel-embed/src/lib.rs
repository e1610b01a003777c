//! Sentence embeddings for gavel's `similar` check.
//!
//! - `MiniLm` (feature `local`, on by default): all-MiniLM-L6-v2 run in Rust
//!   (gavel's packed BERT encoder + tokenizers), offline, with
//!   sentence-transformers' exact recipe: inputs stripped, truncated to
//!   `max_seq_length` (256) tokens, mean pooling over the attention mask, L2
//!   normalisation. Batches are sorted by length and never padded. Without the
//!   feature a local encoder is [`EmbedError::Missing`], saying so.
//! - `ProviderEmbedder` (feature `http`, on by default): an OpenAI-compatible
//!   `/v1/embeddings` endpoint.
//! - [`Batcher`]: shares one [`Embedder`] between concurrent checks: texts arriving
//!   within a few milliseconds go out as one batch (up to 32), and an
//!   [`EmbeddingCache`] (the store) answers the texts it has seen before.
//!
//! ```no_run
//! use gavel_embed::{Embedder, EmbedderSpec, cosine};
//!
//! # async fn demo() -> Result<(), gavel_embed::EmbedError> {
//! // all-MiniLM-L6-v2 from $GAVEL_MODELS or the Hugging Face cache.
//! let encoder = EmbedderSpec::default().local()?;
//! let texts = ["The cat sat on the mat.".to_owned(), "A cat was sitting on a rug.".to_owned()];
//! let vectors = encoder.embed(&texts).await?;
//! assert!(cosine(&vectors[0], &vectors[1]) > 0.5);
//! # Ok(())
//! # }
//! ```

mod batcher;
#[cfg(feature = "local")]
mod bert;
mod error;
#[cfg(feature = "local")]
mod minilm;
#[cfg(feature = "http")]
mod provider;
mod spec;

use std::fmt::Debug;

pub use batcher::{Batcher, EmbeddingCache, EmbeddingCacheError, NoCache};
pub use error::EmbedError;
#[cfg(feature = "local")]
pub use minilm::MiniLm;
#[cfg(feature = "http")]
pub use provider::ProviderEmbedder;
pub use spec::{DEFAULT_EMBEDDER, EmbedderSpec};

/// Turns texts into vectors, one per text, in order.
#[async_trait::async_trait]
pub trait Embedder: Send + Sync + Debug {
    /// The model's name, part of every cache key (e.g. `all-MiniLM-L6-v2`).
    fn model(&self) -> &str;
    /// Embeds a batch of texts.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// The cosine similarity of two vectors (0 when either is all zeros).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut dot, mut aa, mut bb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        return 0.0;
    }
    dot / (aa.sqrt() * bb.sqrt())
}

#[cfg(test)]
mod tests {
    use super::cosine;

    #[test]
    fn cosine_of_parallel_orthogonal_and_zero_vectors() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-12);
        assert!(cosine(&[1.0, 0.0], &[0.0, 3.0]).abs() < 1e-12);
        assert!((cosine(&[1.0, 0.0], &[-1.0, 0.0]) + 1.0).abs() < 1e-12);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }
}
