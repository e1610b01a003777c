//! Loaded models, shared: each GGUF file is loaded once per process, with the
//! llguidance token table built once beside it, and every `local:` model naming
//! that file (whatever its options) uses the same weights.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{LogOptions, send_logs_to_tracing};
use llguidance::ParserFactory;

/// A loaded GGUF model and what every call on it reuses.
pub(crate) struct Weights {
    /// The file it was loaded from (canonical).
    pub(crate) path: PathBuf,
    pub(crate) model: LlamaModel,
    /// The model's own chat template; `None` for a base model.
    pub(crate) template: Option<LlamaChatTemplate>,
    /// Builds JSON-Schema constraints over this model's vocabulary.
    pub(crate) grammars: ParserFactory,
    /// Tokens that end a JSON string, object or array (`"`, `}`, `]`, after any
    /// spaces): favoured at the end of a constrained answer's budget.
    pub(crate) closers: Vec<LlamaToken>,
    /// One generation at a time on these weights: contexts are made per call,
    /// and llama.cpp must not make two at once from one model.
    pub(crate) busy: Mutex<()>,
}

impl std::fmt::Debug for Weights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Weights")
            .field("path", &self.path)
            .field("chat_template", &self.template.is_some())
            .finish_non_exhaustive()
    }
}

/// llama.cpp's backend, set up once per process (its logs go to `tracing`).
pub(crate) fn backend() -> Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            send_logs_to_tracing(LogOptions::default());
            LlamaBackend::init().map_err(|e| format!("cannot start llama.cpp: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The weights of the GGUF file at `path`, loading them on first use. Loads are
/// serialized: two first calls for one file load it once.
pub(crate) fn load(path: &Path) -> Result<Arc<Weights>, String> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Arc<Weights>>>> = OnceLock::new();
    let key = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut loaded = LOADED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(weights) = loaded.get(&key) {
        return Ok(weights.clone());
    }
    let weights = Arc::new(read(&key)?);
    loaded.insert(key, weights.clone());
    Ok(weights)
}

fn read(path: &Path) -> Result<Weights, String> {
    let shown = path.display();
    crate::gguf::inspect(path)?;
    let backend = backend()?;
    let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
        .map_err(|e| format!("{shown}: llama.cpp cannot load this model: {e}"))?;
    let template = model.chat_template(None).ok();
    let mut grammars = ParserFactory::new_simple(&LlamaSampler::llguidance_tok_env(&model))
        .map_err(|e| {
            format!("{shown}: cannot build the token table for constrained output: {e}")
        })?;
    grammars.quiet();
    let closers = model
        .vocab()
        .tokens()
        .filter(|&token| {
            let piece = model.vocab().token_to_piece(token, false, None);
            matches!(piece.trim_ascii_start().first(), Some(b'"' | b'}' | b']'))
        })
        .collect();
    tracing::debug!(path = %shown, chat_template = template.is_some(), "loaded a local model");
    Ok(Weights {
        path: path.to_owned(),
        model,
        template,
        grammars,
        closers,
        busy: Mutex::new(()),
    })
}
