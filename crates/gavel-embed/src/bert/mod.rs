//! A BERT encoder for sentence embeddings, built for CPU throughput.
//!
//! It computes what Hugging Face's `BertModel` computes, laid out differently:
//! - no padding: the batch's tokens are packed into one `tokens × hidden`
//!   matrix, so the dense layers never multiply padding, and attention runs
//!   per sentence, so no mask is needed;
//! - query, key and value are one product, and each bias and residual is
//!   added in the pass that follows its product (GELU, layer normalisation);
//! - GELU, softmax and layer normalisation are vectorisable loops (no libm
//!   calls), and every step runs on all of rayon's threads.
//!
//! candle's `BertModel` pads every batch, runs its element-wise operations on
//! one thread and computes the exact GELU with scalar libm `erff`: on 2 threads
//! that made it 0.75× sentence-transformers' speed.

mod kernels;
mod weights;

use rayon::prelude::*;

use kernels::{Addend, Mat, Rhs, Threads};
pub(crate) use weights::BertConfig;
use weights::{Embeddings, Layer, WeightFile};

/// BERT's weights and the forward pass over packed sentences.
pub(crate) struct BertEncoder {
    config: BertConfig,
    embeddings: Embeddings,
    layers: Vec<Layer>,
}

impl BertEncoder {
    /// Reads the weights from a safetensors buffer.
    pub(crate) fn load(config: BertConfig, safetensors: &[u8]) -> Result<Self, String> {
        config.validate()?;
        let file = WeightFile::parse(safetensors)?;
        let embeddings = file.embeddings(&config)?;
        let layers = (0..config.num_hidden_layers)
            .map(|index| file.layer(&config, index))
            .collect::<Result<_, _>>()?;
        Ok(BertEncoder {
            config,
            embeddings,
            layers,
        })
    }

    /// The width of each token's hidden state.
    pub(crate) fn hidden_size(&self) -> usize {
        self.config.hidden_size
    }

    /// The last hidden states of `sentences` (token ids, none longer than
    /// `max_position_embeddings`): one `hidden_size` row per token, sentences
    /// one after another.
    pub(crate) fn forward(&self, sentences: &[&[u32]]) -> Result<Vec<f32>, String> {
        let h = self.config.hidden_size;
        let mut hidden = self.embed(sentences)?;
        let tokens = hidden.len() / h;
        let mut qkv = vec![0f32; tokens * 3 * h];
        let mut context = vec![0f32; tokens * h];
        let mut attended = vec![0f32; tokens * h];
        let mut intermediate = vec![0f32; tokens * self.config.intermediate_size];
        let lengths: Vec<usize> = sentences.iter().map(|s| s.len()).collect();
        let eps = self.eps();
        for layer in &self.layers {
            product(&mut qkv, &hidden, &layer.qkv);
            kernels::add_bias(&mut qkv, &layer.qkv.bias);
            self.attention(&qkv, &lengths, &mut context);
            product(&mut attended, &context, &layer.attention_out);
            add_and_norm(
                &mut attended,
                &layer.attention_out,
                &hidden,
                &layer.attention_norm,
                eps,
            );
            product(&mut intermediate, &attended, &layer.intermediate);
            kernels::bias_gelu(&mut intermediate, &layer.intermediate.bias);
            product(&mut hidden, &intermediate, &layer.output);
            add_and_norm(
                &mut hidden,
                &layer.output,
                &attended,
                &layer.output_norm,
                eps,
            );
        }
        Ok(hidden)
    }

    fn eps(&self) -> f32 {
        self.config.layer_norm_eps as f32
    }

    /// Word + position + token-type (0) embeddings, normalised.
    fn embed(&self, sentences: &[&[u32]]) -> Result<Vec<f32>, String> {
        let h = self.config.hidden_size;
        let table = &self.embeddings;
        let token_type = &table.token_type[..h];
        let tokens: usize = sentences.iter().map(|s| s.len()).sum();
        let mut hidden = Vec::with_capacity(tokens * h);
        for ids in sentences {
            if ids.len() > self.config.max_position_embeddings {
                return Err(format!(
                    "a sentence of {} tokens exceeds max_position_embeddings {}",
                    ids.len(),
                    self.config.max_position_embeddings
                ));
            }
            for (position, &id) in ids.iter().enumerate() {
                let id = id as usize;
                if id >= self.config.vocab_size {
                    return Err(format!(
                        "token id {id} is outside the vocabulary ({})",
                        self.config.vocab_size
                    ));
                }
                let word = &table.word[id * h..(id + 1) * h];
                let place = &table.position[position * h..(position + 1) * h];
                hidden.extend(
                    word.iter()
                        .zip(place)
                        .zip(token_type)
                        .map(|((w, p), t)| w + p + t),
                );
            }
        }
        let norm = &table.norm;
        kernels::layer_norm(&mut hidden, None, &norm.gamma, &norm.beta, self.eps());
        Ok(hidden)
    }

    /// Multi-head self-attention of each sentence over its own tokens, the
    /// sentences in parallel: `context` gets each head's output in its columns.
    fn attention(&self, qkv: &[f32], lengths: &[usize], context: &mut [f32]) {
        let h = self.config.hidden_size;
        let heads = self.config.num_attention_heads;
        let width = h / heads;
        let scale = 1.0 / (width as f32).sqrt();
        let mut parts = Vec::with_capacity(lengths.len());
        let (mut rest, mut start) = (context, 0);
        for &len in lengths {
            let (part, tail) = rest.split_at_mut(len * h);
            parts.push((start, len, part));
            rest = tail;
            start += len;
        }
        parts.into_par_iter().for_each(|(start, len, out)| {
            let rows = Mat {
                data: &qkv[start * 3 * h..(start + len) * 3 * h],
                rows: len,
                cols: 3 * h,
                stride: 3 * h,
            };
            let mut scores = vec![0f32; len * len];
            for head in 0..heads {
                let query = rows.columns(head * width, width);
                let key = rows.columns(h + head * width, width);
                let value = rows.columns(2 * h + head * width, width);
                kernels::matmul(
                    &mut scores,
                    len,
                    query,
                    Rhs::Transposed(key),
                    scale,
                    Threads::One,
                );
                kernels::softmax_rows(&mut scores, len);
                kernels::matmul(
                    &mut out[head * width..],
                    h,
                    Mat::dense(&scores, len),
                    Rhs::Plain(value),
                    1.0,
                    Threads::One,
                );
            }
        });
    }
}

/// `out = input · weight` (the bias is added by the pass that follows), on
/// all threads.
fn product(out: &mut [f32], input: &[f32], layer: &weights::Linear) {
    let (outputs, inputs) = (layer.bias.len(), layer.weight.len() / layer.bias.len());
    kernels::matmul(
        out,
        outputs,
        Mat::dense(input, inputs),
        Rhs::Plain(Mat::dense(&layer.weight, outputs)),
        1.0,
        Threads::All,
    );
}

/// `rows = layer_norm(rows + bias + residual)`: the end of an attention or
/// feed-forward block, whose product `rows` left out `layer`'s bias.
fn add_and_norm(
    rows: &mut [f32],
    layer: &weights::Linear,
    residual: &[f32],
    norm: &weights::Norm,
    eps: f32,
) {
    let addend = Addend {
        bias: &layer.bias,
        residual,
    };
    kernels::layer_norm(rows, Some(addend), &norm.gamma, &norm.beta, eps);
}
