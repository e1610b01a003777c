//! The embedder of a run's `similar` checks: `--embedder`, else the suite's
//! `judge.embedder`, else all-MiniLM-L6-v2 run locally; cached in the store and
//! batched across cases.

use std::collections::HashMap;
use std::sync::Arc;

use gavel_checks::Embeddings;
use gavel_embed::{Batcher, EmbedderSpec, EmbeddingCache, EmbeddingCacheError};
use gavel_runner::Plan;
use gavel_store::Store;

use crate::{Note, SessionError};

/// The run's embeddings, or `None` when no selected case has a `similar` check
/// (nothing is loaded then). A spec that cannot be parsed is bad input; a model
/// that is not installed (or cannot be set up) reaches the checks, which say so.
/// What was chosen goes to `notes`.
pub(crate) fn for_plan(
    flag: Option<&str>,
    suite: &gavel_core::JudgeSettings,
    plan: &Plan,
    store: &Store,
    notes: &mut Vec<Note>,
) -> Result<Option<Embeddings>, SessionError> {
    if !plan.uses_embeddings() {
        return Ok(None);
    }
    let spec: EmbedderSpec = match flag.or(suite.embedder.as_deref()) {
        Some(s) => s
            .parse()
            .map_err(|e| SessionError::config("--embedder", format!("{e}")))?,
        None => EmbedderSpec::default(),
    };
    Ok(Some(
        match spec.build(&gavel_models::ModelSettings::from_judge(suite)) {
            Ok(embedder) => {
                notes.push(Note::info(format!(
                    "similar checks embed with {}",
                    embedder.model()
                )));
                Embeddings::Ready(Batcher::new(
                    embedder,
                    Arc::new(StoreEmbeddings(store.clone())),
                ))
            }
            Err(e) => {
                notes.push(Note::warning(format!("similar checks cannot run: {e}")));
                Embeddings::Unavailable(e)
            }
        },
    ))
}

/// The gavel store as the embedding cache.
struct StoreEmbeddings(Store);

#[async_trait::async_trait]
impl EmbeddingCache for StoreEmbeddings {
    async fn get(
        &self,
        model: &str,
        hashes: &[String],
    ) -> Result<HashMap<String, Vec<f32>>, EmbeddingCacheError> {
        self.0
            .embeddings_get(model, hashes)
            .await
            .map_err(EmbeddingCacheError::new)
    }

    async fn put(
        &self,
        model: &str,
        entries: &[(String, Vec<f32>)],
    ) -> Result<(), EmbeddingCacheError> {
        self.0
            .embeddings_put(model, entries)
            .await
            .map_err(EmbeddingCacheError::new)
    }
}
