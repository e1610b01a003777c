//! BERT's configuration and weights, read from `config.json` and
//! `model.safetensors` (Hugging Face names, with or without a `bert.` prefix).

use safetensors::{Dtype, SafeTensors};

/// The fields of a BERT `config.json` the encoder uses.
#[derive(Debug, Clone, serde::Deserialize)]
pub(crate) struct BertConfig {
    pub(crate) vocab_size: usize,
    pub(crate) hidden_size: usize,
    pub(crate) num_hidden_layers: usize,
    pub(crate) num_attention_heads: usize,
    pub(crate) intermediate_size: usize,
    pub(crate) max_position_embeddings: usize,
    #[serde(default = "default_type_vocab_size")]
    pub(crate) type_vocab_size: usize,
    #[serde(default = "default_layer_norm_eps")]
    pub(crate) layer_norm_eps: f64,
    #[serde(default = "default_hidden_act")]
    pub(crate) hidden_act: String,
    #[serde(default)]
    pub(crate) position_embedding_type: Option<String>,
}

fn default_type_vocab_size() -> usize {
    2
}
fn default_layer_norm_eps() -> f64 {
    1e-12
}
fn default_hidden_act() -> String {
    "gelu".into()
}

impl BertConfig {
    /// Refuses configurations this encoder would compute wrongly.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.hidden_act != "gelu" {
            return Err(format!(
                "hidden_act: only \"gelu\" (the exact erf GELU) is supported, got {:?}",
                self.hidden_act
            ));
        }
        if let Some(kind) = &self.position_embedding_type
            && kind != "absolute"
        {
            return Err(format!(
                "position_embedding_type: only \"absolute\" is supported, got {kind:?}"
            ));
        }
        let heads = self.num_attention_heads;
        if heads == 0 || self.hidden_size == 0 || !self.hidden_size.is_multiple_of(heads) {
            return Err(format!(
                "hidden_size {} is not a multiple of num_attention_heads {heads}",
                self.hidden_size
            ));
        }
        for (field, value) in [
            ("vocab_size", self.vocab_size),
            ("intermediate_size", self.intermediate_size),
            ("max_position_embeddings", self.max_position_embeddings),
            ("type_vocab_size", self.type_vocab_size),
        ] {
            if value == 0 {
                return Err(format!("{field}: must be at least 1"));
            }
        }
        Ok(())
    }
}

/// A linear layer. `weight` is `in × out`, row-major: transposed from the
/// stored `out × in`, because gemm multiplies that layout ~10% faster.
pub(crate) struct Linear {
    pub(crate) weight: Vec<f32>,
    pub(crate) bias: Vec<f32>,
}

impl Linear {
    /// A layer from its stored `out × in` weight.
    fn from_stored(weight: &[f32], bias: Vec<f32>) -> Self {
        let (outputs, inputs) = (bias.len(), weight.len() / bias.len().max(1));
        let mut transposed = vec![0f32; weight.len()];
        for (o, row) in weight.chunks_exact(inputs).enumerate() {
            for (i, w) in row.iter().enumerate() {
                transposed[i * outputs + o] = *w;
            }
        }
        Linear {
            weight: transposed,
            bias,
        }
    }
}

/// Layer normalisation's scale and shift.
pub(crate) struct Norm {
    pub(crate) gamma: Vec<f32>,
    pub(crate) beta: Vec<f32>,
}

/// Token, position and token-type embeddings with their normalisation.
pub(crate) struct Embeddings {
    pub(crate) word: Vec<f32>,
    pub(crate) position: Vec<f32>,
    pub(crate) token_type: Vec<f32>,
    pub(crate) norm: Norm,
}

/// One transformer layer, with query, key and value fused into one product.
pub(crate) struct Layer {
    /// `hidden × 3·hidden`: query columns, then key columns, then value columns.
    pub(crate) qkv: Linear,
    pub(crate) attention_out: Linear,
    pub(crate) attention_norm: Norm,
    pub(crate) intermediate: Linear,
    pub(crate) output: Linear,
    pub(crate) output_norm: Norm,
}

/// Reads named tensors as `f32`, checking their shapes.
pub(crate) struct WeightFile<'a> {
    tensors: SafeTensors<'a>,
    prefix: &'static str,
}

impl<'a> WeightFile<'a> {
    /// Parses a safetensors buffer; names may carry a `bert.` prefix.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, String> {
        let tensors = SafeTensors::deserialize(bytes).map_err(|e| e.to_string())?;
        let prefix = if tensors.tensor("embeddings.word_embeddings.weight").is_ok() {
            ""
        } else {
            "bert."
        };
        Ok(WeightFile { tensors, prefix })
    }

    /// The tensor `name`, which must have `shape`.
    pub(crate) fn tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let view = self
            .tensors
            .tensor(&full)
            .map_err(|_| format!("tensor {full} is missing"))?;
        if view.shape() != shape {
            return Err(format!(
                "tensor {full}: shape {:?}, expected {shape:?}",
                view.shape()
            ));
        }
        let bytes = view.data();
        let values = match view.dtype() {
            Dtype::F32 => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::F16 => bytes
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            Dtype::BF16 => bytes
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            other => return Err(format!("tensor {full}: unsupported dtype {other:?}")),
        };
        Ok(values)
    }

    fn linear(&self, name: &str, outputs: usize, inputs: usize) -> Result<Linear, String> {
        let (weight, bias) = self.stored_linear(name, outputs, inputs)?;
        Ok(Linear::from_stored(&weight, bias))
    }

    /// A linear layer's `out × in` weight and its bias, as stored.
    fn stored_linear(
        &self,
        name: &str,
        outputs: usize,
        inputs: usize,
    ) -> Result<(Vec<f32>, Vec<f32>), String> {
        Ok((
            self.tensor(&format!("{name}.weight"), &[outputs, inputs])?,
            self.tensor(&format!("{name}.bias"), &[outputs])?,
        ))
    }

    fn norm(&self, name: &str, width: usize) -> Result<Norm, String> {
        Ok(Norm {
            gamma: self.tensor(&format!("{name}.weight"), &[width])?,
            beta: self.tensor(&format!("{name}.bias"), &[width])?,
        })
    }

    /// The embedding tables.
    pub(crate) fn embeddings(&self, config: &BertConfig) -> Result<Embeddings, String> {
        let h = config.hidden_size;
        Ok(Embeddings {
            word: self.tensor("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
            position: self.tensor(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, h],
            )?,
            token_type: self.tensor(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab_size, h],
            )?,
            norm: self.norm("embeddings.LayerNorm", h)?,
        })
    }

    /// Transformer layer `index`.
    pub(crate) fn layer(&self, config: &BertConfig, index: usize) -> Result<Layer, String> {
        let (h, i) = (config.hidden_size, config.intermediate_size);
        let at = |part: &str| format!("encoder.layer.{index}.{part}");
        let (q, k, v) = (
            self.stored_linear(&at("attention.self.query"), h, h)?,
            self.stored_linear(&at("attention.self.key"), h, h)?,
            self.stored_linear(&at("attention.self.value"), h, h)?,
        );
        Ok(Layer {
            qkv: Linear::from_stored(&[q.0, k.0, v.0].concat(), [q.1, k.1, v.1].concat()),
            attention_out: self.linear(&at("attention.output.dense"), h, h)?,
            attention_norm: self.norm(&at("attention.output.LayerNorm"), h)?,
            intermediate: self.linear(&at("intermediate.dense"), i, h)?,
            output: self.linear(&at("output.dense"), h, i)?,
            output_norm: self.norm(&at("output.LayerNorm"), h)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::BertConfig;

    fn config(overrides: serde_json::Value) -> Result<(), String> {
        let mut value = json!({
            "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
            "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 4,
        });
        if let (Some(base), Some(extra)) = (value.as_object_mut(), overrides.as_object()) {
            base.extend(extra.clone());
        }
        serde_json::from_value::<BertConfig>(value)
            .map_err(|e| e.to_string())?
            .validate()
    }

    #[test]
    fn configs_the_encoder_would_compute_wrongly_are_refused_by_field() {
        assert_eq!(config(json!({})), Ok(()));
        for (overrides, field) in [
            (json!({"hidden_act": "gelu_new"}), "hidden_act"),
            (
                json!({"position_embedding_type": "relative_key"}),
                "position_embedding_type",
            ),
            (json!({"num_attention_heads": 3}), "hidden_size"),
            (json!({"intermediate_size": 0}), "intermediate_size"),
            (json!({"type_vocab_size": 0}), "type_vocab_size"),
        ] {
            let err = config(overrides.clone()).unwrap_err();
            assert!(err.starts_with(field), "{overrides}: {err}");
        }
    }
}
