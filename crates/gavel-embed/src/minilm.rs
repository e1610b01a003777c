//! all-MiniLM-L6-v2 (any BERT sentence-transformers model with mean pooling) in
//! Rust: gavel's packed BERT encoder and the model's own `tokenizer.json`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokenizers::{Tokenizer, TruncationParams, TruncationStrategy};

use crate::bert::{BertConfig, BertEncoder};
use crate::{EmbedError, Embedder};

/// Sentences per forward pass (sentence-transformers' default batch size).
const BATCH: usize = 32;

/// sentence-transformers' `max_seq_length` when `sentence_bert_config.json` is absent.
const DEFAULT_MAX_SEQ: usize = 256;

/// A sentence-transformers BERT encoder loaded from a Hugging Face folder
/// (`config.json`, `tokenizer.json`, `model.safetensors`, and optionally
/// `sentence_bert_config.json` and `1_Pooling/config.json`).
///
/// Cheap to clone: clones share the loaded weights.
#[derive(Clone)]
pub struct MiniLm {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    encoder: BertEncoder,
    tokenizer: Tokenizer,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm")
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

impl MiniLm {
    /// Loads the model in `dir`; `name` identifies it in cache keys and messages.
    pub fn load(dir: &Path, name: &str) -> Result<Self, EmbedError> {
        let config_path = dir.join("config.json");
        let config: BertConfig = serde_json::from_str(&read(&config_path)?)
            .map_err(|e| bad(&config_path, format!("not a BERT config: {e}")))?;
        config.validate().map_err(|e| bad(&config_path, e))?;
        check_pooling(dir)?;
        let max_seq = max_seq_length(dir)?.min(config.max_position_embeddings);

        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| bad(&tokenizer_path, e.to_string()))?;
        // tokenizer.json carries its own truncation (128) and fixed padding; the
        // sentence-transformers recipe truncates at max_seq_length and pads per batch.
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_seq,
                strategy: TruncationStrategy::LongestFirst,
                ..TruncationParams::default()
            }))
            .map_err(|e| bad(&tokenizer_path, e.to_string()))?;
        tokenizer.with_padding(None);

        let weights_path = dir.join("model.safetensors");
        let weights = std::fs::read(&weights_path).map_err(|e| missing_file(&weights_path, &e))?;
        let encoder = BertEncoder::load(config, &weights).map_err(|e| bad(&weights_path, e))?;
        Ok(MiniLm {
            inner: Arc::new(Inner {
                name: name.to_owned(),
                encoder,
                tokenizer,
            }),
        })
    }

    /// Embeds texts synchronously on the calling thread (the encoder itself uses
    /// rayon's threads): one unit-length vector per text, in order.
    pub fn encode(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.encode(texts)
    }
}

impl Inner {
    fn encode(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // sentence-transformers strips every input before tokenizing.
        let stripped: Vec<&str> = texts.iter().map(|t| t.trim()).collect();
        let encodings = self
            .tokenizer
            .encode_batch(stripped, true)
            .map_err(|e| EmbedError::Inference(format!("tokenizer: {e}")))?;
        let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
        // Longest first, so each batch pads to nearly its own length.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids[i].len()));
        let mut out = vec![Vec::new(); ids.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| ids[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.forward(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    /// One forward pass, mean pooling over each sentence's tokens, L2
    /// normalisation (sentence-transformers' `Pooling` and `Normalize`).
    fn forward(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let hidden = self.encoder.forward(batch).map_err(EmbedError::Inference)?;
        let width = self.encoder.hidden_size();
        let mut rows = hidden.chunks_exact(width);
        let mut out = Vec::with_capacity(batch.len());
        for ids in batch {
            let mut mean = vec![0f32; width];
            for row in rows.by_ref().take(ids.len()) {
                mean.iter_mut().zip(row).for_each(|(m, x)| *m += x);
            }
            let count = (ids.len() as f32).max(1e-9);
            mean.iter_mut().for_each(|m| *m /= count);
            let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            mean.iter_mut().for_each(|m| *m /= norm);
            out.push(mean);
        }
        Ok(out)
    }
}

#[async_trait::async_trait]
impl Embedder for MiniLm {
    fn model(&self) -> &str {
        &self.inner.name
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inner = Arc::clone(&self.inner);
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || inner.encode(&texts))
            .await
            .map_err(|e| EmbedError::Inference(format!("encoder task: {e}")))?
    }
}

/// `max_seq_length` from `sentence_bert_config.json`, else 256.
fn max_seq_length(dir: &Path) -> Result<usize, EmbedError> {
    let path = dir.join("sentence_bert_config.json");
    if !path.exists() {
        return Ok(DEFAULT_MAX_SEQ);
    }
    let value: serde_json::Value =
        serde_json::from_str(&read(&path)?).map_err(|e| bad(&path, e.to_string()))?;
    match value.get("max_seq_length") {
        None => Ok(DEFAULT_MAX_SEQ),
        Some(n) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                bad(
                    &path,
                    format!("max_seq_length: expected a positive integer, got {n}"),
                )
            }),
    }
}

/// The pooling this encoder implements is mean pooling; refuse any other.
fn check_pooling(dir: &Path) -> Result<(), EmbedError> {
    let path = dir.join("1_Pooling").join("config.json");
    if !path.exists() {
        return Ok(());
    }
    let value: serde_json::Value =
        serde_json::from_str(&read(&path)?).map_err(|e| bad(&path, e.to_string()))?;
    if value.get("pooling_mode_mean_tokens") == Some(&serde_json::Value::Bool(true)) {
        Ok(())
    } else {
        Err(bad(
            &path,
            "only mean pooling (pooling_mode_mean_tokens: true) is supported".into(),
        ))
    }
}

fn read(path: &Path) -> Result<String, EmbedError> {
    std::fs::read_to_string(path).map_err(|e| missing_file(path, &e))
}

fn missing_file(path: &Path, e: &std::io::Error) -> EmbedError {
    bad(path, format!("cannot read: {e}"))
}

fn bad(path: &Path, message: String) -> EmbedError {
    EmbedError::BadModel {
        path: PathBuf::from(path),
        message,
    }
}
