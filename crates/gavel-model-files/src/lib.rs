//! Finds and fetches the model files gavel runs on the machine itself: encoder
//! folders (Hugging Face layout, for the `similar` check) and GGUF files (for
//! `local:` judges).
//!
//! A model is named by a path, a short name gavel knows ([`KNOWN`]), or a hub
//! repository `org/name` (plus `/FILE.gguf` for GGUF repositories holding several
//! files). [`ModelFiles::locate`] never touches the network; it looks, in order,
//! at the explicit path, `$GAVEL_MODELS` (default `~/.cache/gavel/models`) and the
//! Hugging Face cache. `ModelFiles::pull` (feature `pull`, on by default)
//! downloads from the hub.

mod catalog;
mod error;
mod listing;
mod locate;
#[cfg(feature = "pull")]
mod pull;

use std::path::{Path, PathBuf};

pub use catalog::{GEMMA_270M, KNOWN, KnownModel, MINILM, known};
pub use error::ModelFilesError;

/// What a model file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ModelKind {
    /// A folder with `config.json`, `tokenizer.json` and `model.safetensors`.
    Encoder,
    /// One `.gguf` file.
    Gguf,
}

impl ModelKind {
    /// The word used in listings and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelKind::Encoder => "encoder",
            ModelKind::Gguf => "gguf",
        }
    }
}

/// What `gavel models` does with the model files.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::Subcommand))]
pub enum ModelsAction {
    /// Installed models ($GAVEL_MODELS and the Hugging Face cache), and the known
    /// names not installed yet.
    List,
    /// Download a model from the Hugging Face hub into $GAVEL_MODELS.
    Pull {
        /// A known name (see `gavel models list`) or org/name/FILE.gguf.
        model: String,
    },
    /// Print where a model is, without any network; exit 2 if it is not installed.
    Path {
        /// A path, a known name, or a hub repository org/name[/FILE.gguf].
        model: String,
        /// What to look for when the name is not a known one.
        #[cfg_attr(feature = "cli", arg(long, value_enum, default_value = "gguf"))]
        kind: ModelKind,
    },
}

/// Where a model was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The path given.
    Explicit,
    /// The `$GAVEL_MODELS` folder.
    GavelModels,
    /// The Hugging Face cache.
    HuggingFaceCache,
    /// Downloaded from the hub just now.
    Downloaded,
}

impl Source {
    /// The word used in listings and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Explicit => "path",
            Source::GavelModels => "GAVEL_MODELS",
            Source::HuggingFaceCache => "huggingface cache",
            Source::Downloaded => "downloaded",
        }
    }
}

/// A model found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Its short name, hub repository or file name.
    pub name: String,
    /// The folder (encoder) or file (GGUF).
    pub path: PathBuf,
    /// What it is.
    pub kind: ModelKind,
    /// Where it was found.
    pub source: Source,
}

/// The places models are looked for and fetched from.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    /// gavel's own model folder (`$GAVEL_MODELS`).
    pub models_dir: PathBuf,
    /// The Hugging Face hub cache, if a home folder or `HF_HOME` says where.
    pub hf_cache: Option<PathBuf>,
    /// The hub's base URL (`HF_ENDPOINT`, default `https://huggingface.co`).
    pub endpoint: String,
}

impl ModelFiles {
    /// The places from the environment: `GAVEL_MODELS`, `HF_HUB_CACHE`,
    /// `HF_HOME`, `HF_ENDPOINT` and the home folder.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let home = var("HOME").map(PathBuf::from);
        let models_dir = var("GAVEL_MODELS")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".cache/gavel/models")))
            .unwrap_or_else(|| PathBuf::from(".gavel/models"));
        let hf_cache = var("HF_HUB_CACHE")
            .map(PathBuf::from)
            .or_else(|| var("HF_HOME").map(|h| Path::new(&h).join("hub")))
            .or_else(|| home.map(|h| h.join(".cache/huggingface/hub")));
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| "https://huggingface.co".to_owned());
        ModelFiles {
            models_dir,
            hf_cache,
            endpoint: endpoint.trim_end_matches('/').to_owned(),
        }
    }
}

/// [`ModelFiles::locate`] with the places from the environment.
pub fn locate(spec: &str, kind: ModelKind) -> Result<Located, ModelFilesError> {
    ModelFiles::from_env().locate(spec, kind)
}

/// [`ModelFiles::list`] with the places from the environment.
pub fn list() -> Vec<Located> {
    ModelFiles::from_env().list()
}

/// [`ModelFiles::pull`] with the places from the environment.
#[cfg(feature = "pull")]
pub async fn pull(spec: &str) -> Result<Located, ModelFilesError> {
    ModelFiles::from_env().pull(spec).await
}
