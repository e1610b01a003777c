//! One embedder shared by concurrent checks: cache first, then texts collected
//! for a few milliseconds into batches.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};

use crate::{EmbedError, Embedder};

/// Texts per batch at most.
const MAX_BATCH: usize = 32;

/// How long the first text of a batch waits for others to join it.
const WINDOW: Duration = Duration::from_millis(5);

/// Where embeddings are kept between runs, keyed by model and text hash (the
/// store implements it).
#[async_trait::async_trait]
pub trait EmbeddingCache: Send + Sync {
    /// The cached vectors among `hashes` for `model`, by hash.
    async fn get(
        &self,
        model: &str,
        hashes: &[String],
    ) -> Result<HashMap<String, Vec<f32>>, EmbeddingCacheError>;
    /// Keeps vectors for `model` under their text hashes.
    async fn put(
        &self,
        model: &str,
        entries: &[(String, Vec<f32>)],
    ) -> Result<(), EmbeddingCacheError>;
}

/// An [`EmbeddingCache`] could not read or keep vectors: the backing store's error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct EmbeddingCacheError(Box<dyn std::error::Error + Send + Sync>);

impl EmbeddingCacheError {
    /// Wraps the backing store's error (or a message).
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        EmbeddingCacheError(error.into())
    }
}

/// No cache: every text is embedded.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCache;

#[async_trait::async_trait]
impl EmbeddingCache for NoCache {
    async fn get(
        &self,
        _: &str,
        _: &[String],
    ) -> Result<HashMap<String, Vec<f32>>, EmbeddingCacheError> {
        Ok(HashMap::new())
    }

    async fn put(&self, _: &str, _: &[(String, Vec<f32>)]) -> Result<(), EmbeddingCacheError> {
        Ok(())
    }
}

/// A pending request: texts and where their vectors go.
struct Request {
    texts: Vec<String>,
    reply: oneshot::Sender<Result<Vec<Vec<f32>>, EmbedError>>,
}

/// Batches and caches the calls of many concurrent callers to one [`Embedder`].
///
/// Cheap to clone. Create it inside a Tokio runtime: it spawns the task that
/// collects texts and calls the embedder, one batch at a time.
#[derive(Clone)]
pub struct Batcher {
    model: String,
    cache: Arc<dyn EmbeddingCache>,
    queue: mpsc::UnboundedSender<Request>,
}

impl std::fmt::Debug for Batcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batcher")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl Batcher {
    /// A batcher over `embedder`, with `cache` in front of it.
    pub fn new(embedder: Arc<dyn Embedder>, cache: Arc<dyn EmbeddingCache>) -> Self {
        let (queue, requests) = mpsc::unbounded_channel();
        let model = embedder.model().to_owned();
        tokio::spawn(collect(embedder, requests));
        Batcher {
            model,
            cache,
            queue,
        }
    }

    /// The embedder's model name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// One vector per text, in order: cached vectors from the cache, the rest
    /// embedded together with other callers' texts and then cached. A cache that
    /// fails is logged and bypassed.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let hashes: Vec<String> = texts.iter().map(|t| text_hash(t)).collect();
        let mut found = self
            .cache
            .get(&self.model, &hashes)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(model = %self.model, "embedding cache unreadable: {e}");
                HashMap::new()
            });
        let mut missing: Vec<(String, String)> = Vec::new();
        for (text, hash) in texts.iter().zip(&hashes) {
            if !found.contains_key(hash) && !missing.iter().any(|(h, _)| h == hash) {
                missing.push((hash.clone(), text.clone()));
            }
        }
        if !missing.is_empty() {
            let (reply, answer) = oneshot::channel();
            let request = Request {
                texts: missing.iter().map(|(_, t)| t.clone()).collect(),
                reply,
            };
            self.queue
                .send(request)
                .map_err(|_| EmbedError::Inference("the embedding task has stopped".into()))?;
            let vectors = answer
                .await
                .map_err(|_| EmbedError::Inference("the embedding task has stopped".into()))??;
            let entries: Vec<(String, Vec<f32>)> = missing
                .into_iter()
                .map(|(hash, _)| hash)
                .zip(vectors)
                .collect();
            if let Err(e) = self.cache.put(&self.model, &entries).await {
                tracing::warn!(model = %self.model, "embedding cache not written: {e}");
            }
            found.extend(entries);
        }
        hashes
            .iter()
            .map(|h| {
                found
                    .get(h)
                    .cloned()
                    .ok_or_else(|| EmbedError::Inference("an embedding went missing".into()))
            })
            .collect()
    }
}

/// The cache key of a text: hex SHA-256 of its UTF-8 bytes.
fn text_hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Collects requests into batches of up to [`MAX_BATCH`] texts (waiting at most
/// [`WINDOW`] after the first) and answers each from one embedder call.
async fn collect(embedder: Arc<dyn Embedder>, mut requests: mpsc::UnboundedReceiver<Request>) {
    while let Some(first) = requests.recv().await {
        let mut count = first.texts.len();
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + WINDOW;
        while count < MAX_BATCH {
            match tokio::time::timeout_at(deadline, requests.recv()).await {
                Ok(Some(request)) => {
                    count += request.texts.len();
                    batch.push(request);
                }
                Ok(None) | Err(_) => break,
            }
        }
        // Each distinct text once.
        let mut unique: Vec<String> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for request in &batch {
            for text in &request.texts {
                index.entry(text.clone()).or_insert_with(|| {
                    unique.push(text.clone());
                    unique.len() - 1
                });
            }
        }
        let result = embedder.embed(&unique).await;
        for request in batch {
            let answer = match &result {
                Ok(vectors) => Ok(request
                    .texts
                    .iter()
                    .filter_map(|t| index.get(t).and_then(|&i| vectors.get(i)).cloned())
                    .collect()),
                Err(e) => Err(e.clone()),
            };
            // A caller that stopped waiting no longer needs its answer.
            let _ = request.reply.send(answer);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Embeds a text as [length, 1] and records each batch it was given.
    #[derive(Debug, Default)]
    struct Recording {
        batches: Mutex<Vec<Vec<String>>>,
        fail: bool,
    }

    #[async_trait::async_trait]
    impl Embedder for Recording {
        fn model(&self) -> &str {
            "recording"
        }

        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.batches.lock().unwrap().push(texts.to_vec());
            if self.fail {
                return Err(EmbedError::Inference("boom".into()));
            }
            Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect())
        }
    }

    #[derive(Default)]
    struct MemoryCache(Mutex<HashMap<(String, String), Vec<f32>>>);

    #[async_trait::async_trait]
    impl EmbeddingCache for MemoryCache {
        async fn get(
            &self,
            model: &str,
            hashes: &[String],
        ) -> Result<HashMap<String, Vec<f32>>, EmbeddingCacheError> {
            let map = self.0.lock().unwrap();
            Ok(hashes
                .iter()
                .filter_map(|h| {
                    map.get(&(model.to_owned(), h.clone()))
                        .map(|v| (h.clone(), v.clone()))
                })
                .collect())
        }

        async fn put(
            &self,
            model: &str,
            entries: &[(String, Vec<f32>)],
        ) -> Result<(), EmbeddingCacheError> {
            let mut map = self.0.lock().unwrap();
            for (h, v) in entries {
                map.insert((model.to_owned(), h.clone()), v.clone());
            }
            Ok(())
        }
    }

    fn strings(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| (*t).to_owned()).collect()
    }

    #[tokio::test]
    async fn concurrent_callers_share_one_batch_and_the_cache_answers_repeats() {
        let embedder = Arc::new(Recording::default());
        let cache = Arc::new(MemoryCache::default());
        let batcher = Batcher::new(embedder.clone(), cache.clone());
        let calls = (0..10).map(|i| {
            let batcher = batcher.clone();
            async move { batcher.embed(&strings(&["same", &"x".repeat(i + 1)])).await }
        });
        let answers = futures::future::join_all(calls).await;
        for (i, answer) in answers.into_iter().enumerate() {
            assert_eq!(
                answer.unwrap(),
                vec![vec![4.0, 1.0], vec![(i + 1) as f32, 1.0]]
            );
        }
        let batches = embedder.batches.lock().unwrap().clone();
        assert_eq!(batches.len(), 1, "{batches:?}");
        assert_eq!(batches[0].len(), 11, "`same` is embedded once");

        // Everything is cached now: no new embedder call.
        let again = batcher.embed(&strings(&["same", "xx"])).await.unwrap();
        assert_eq!(again, vec![vec![4.0, 1.0], vec![2.0, 1.0]]);
        assert_eq!(embedder.batches.lock().unwrap().len(), 1);
        assert_eq!(cache.0.lock().unwrap().len(), 11);
    }

    #[tokio::test]
    async fn batches_hold_at_most_32_texts() {
        let embedder = Arc::new(Recording::default());
        let batcher = Batcher::new(embedder.clone(), Arc::new(NoCache));
        let calls = (0..40).map(|i| {
            let batcher = batcher.clone();
            async move { batcher.embed(&[format!("text {i}")]).await }
        });
        for answer in futures::future::join_all(calls).await {
            answer.unwrap();
        }
        let sizes: Vec<usize> = embedder
            .batches
            .lock()
            .unwrap()
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(sizes.iter().sum::<usize>(), 40);
        assert!(sizes.iter().all(|&n| n <= MAX_BATCH), "{sizes:?}");
        assert_eq!(sizes[0], MAX_BATCH, "{sizes:?}");
    }

    #[tokio::test]
    async fn an_embedder_error_reaches_every_caller_and_nothing_is_cached() {
        let embedder = Arc::new(Recording {
            fail: true,
            ..Recording::default()
        });
        let cache = Arc::new(MemoryCache::default());
        let batcher = Batcher::new(embedder, cache.clone());
        let err = batcher.embed(&strings(&["a"])).await.unwrap_err();
        assert_eq!(err.to_string(), "embedding failed: boom");
        assert!(cache.0.lock().unwrap().is_empty());
    }

    #[test]
    fn text_hashes_are_sha256_hex() {
        assert_eq!(
            text_hash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
