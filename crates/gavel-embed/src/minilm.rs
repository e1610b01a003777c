//! all-MiniLM-L6-v2 (any BERT sentence-transformers model with mean pooling) in
//! Rust: candle's `BertModel` and the model's own `tokenizer.json`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Tokenizer, TruncationParams, TruncationStrategy};

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
    model: BertModel,
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
        let config: Config = serde_json::from_str(&read(&config_path)?)
            .map_err(|e| bad(&config_path, format!("not a BERT config: {e}")))?;
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
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| bad(&weights_path, e.to_string()))?;
        let model = BertModel::load(vb, &config).map_err(|e| bad(&weights_path, e.to_string()))?;
        Ok(MiniLm {
            inner: Arc::new(Inner {
                name: name.to_owned(),
                model,
                tokenizer,
            }),
        })
    }

    /// Embeds texts synchronously on the calling thread (the encoder itself uses
    /// candle's CPU threads): one unit-length vector per text, in order.
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

    /// One padded forward pass, mean pooling over the mask, L2 normalisation.
    fn forward(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let device = &self.model.device;
        let width = batch.iter().map(|ids| ids.len()).max().unwrap_or(0).max(1);
        let mut flat_ids = vec![0u32; batch.len() * width];
        let mut flat_mask = vec![0u32; batch.len() * width];
        for (row, ids) in batch.iter().enumerate() {
            flat_ids[row * width..row * width + ids.len()].copy_from_slice(ids);
            flat_mask[row * width..row * width + ids.len()].fill(1);
        }
        let shape = (batch.len(), width);
        let ids = Tensor::from_vec(flat_ids, shape, device)?;
        let mask = Tensor::from_vec(flat_mask, shape, device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
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
