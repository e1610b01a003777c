//! What can go wrong while embedding.

use std::path::PathBuf;

/// An embedding failure. [`EmbedError::Missing`] means the model is not installed
/// (checks are `skipped` with its message); everything else is an `error`.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The model files are not installed; the message says how to install them.
    #[error("{0}")]
    Missing(String),
    /// A model file exists but cannot be read or used.
    #[error("{path}: {message}")]
    BadModel {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The encoder failed while running.
    #[error("embedding failed: {0}")]
    Inference(String),
    /// The embeddings provider failed or answered something unusable.
    #[error("{0}")]
    Provider(String),
    /// The embedder spec (`--embedder`, `embedder:`) is not understood.
    #[error("{0}")]
    Spec(String),
}

impl EmbedError {
    /// Whether this says the model is not installed (a skip, not an error).
    pub fn is_missing(&self) -> bool {
        matches!(self, EmbedError::Missing(_))
    }
}
