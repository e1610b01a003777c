//! What checks need at run time: the judge models, sampling settings and the
//! embedder, shared by every check of an execution.

use std::sync::Arc;

use gavel_embed::{Batcher, EmbedError};
use gavel_models::{ChatModel, ErrorKind, ModelError};

/// The skip reason when no judge model is configured or reachable.
pub const NO_JUDGE_MODEL: &str = "no judge model: set judge.model in the suite or --judge (e.g. local:FILE.gguf), export OPENAI_API_KEY/ANTHROPIC_API_KEY/GEMINI_API_KEY, or serve an OpenAI-compatible model on 127.0.0.1:11434";

/// The error a [`JudgeModels`] returns when there is no judge model: kind
/// [`ErrorKind::NoCredentials`], message [`NO_JUDGE_MODEL`]. Judges turn it into
/// `skipped` (or `error` when strict).
pub fn no_judge_model() -> ModelError {
    ModelError::new(ErrorKind::NoCredentials, NO_JUDGE_MODEL)
}

/// Resolves judge model ids to chat models.
pub trait JudgeModels: Send + Sync {
    /// The model for `id` (`None`: the suite's default judge model). Answer
    /// [`no_judge_model()`] (or any `NoCredentials` error) when there is none.
    fn model(&self, id: Option<&str>) -> Result<Arc<dyn ChatModel>, ModelError>;
}

impl<F> JudgeModels for F
where
    F: Fn(Option<&str>) -> Result<Arc<dyn ChatModel>, ModelError> + Send + Sync,
{
    fn model(&self, id: Option<&str>) -> Result<Arc<dyn ChatModel>, ModelError> {
        self(id)
    }
}

/// No judge model at all: every judge is skipped (an error when strict).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoJudgeModels;

impl JudgeModels for NoJudgeModels {
    fn model(&self, _id: Option<&str>) -> Result<Arc<dyn ChatModel>, ModelError> {
        Err(no_judge_model())
    }
}

/// What judges need at run time.
#[derive(Clone, Copy)]
pub struct JudgeRuntime<'a> {
    /// Resolves a model id (`None` = the suite default) to a chat model.
    pub models: &'a dyn JudgeModels,
    /// Sampling temperature (default 0).
    pub temperature: f64,
    /// Answer length cap (default 1024).
    pub max_tokens: u32,
    /// The repeat index: `ChatRequest.sample`, part of the cache key.
    pub sample: u32,
    /// The re-judgement index (0: the first judgement): a re-judgement's template
    /// hash ends in `-rejudge<n>`, so each is a fresh call yet cached on a re-run.
    pub rejudge: u32,
    /// `--strict`: a judge skipped for want of a model or credentials is an error.
    pub strict: bool,
    /// What `similar` checks embed with (`None`: they are skipped).
    pub embeddings: Option<&'a Embeddings>,
}

impl std::fmt::Debug for JudgeRuntime<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgeRuntime")
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("sample", &self.sample)
            .field("rejudge", &self.rejudge)
            .field("strict", &self.strict)
            .finish_non_exhaustive()
    }
}

impl<'a> JudgeRuntime<'a> {
    /// Defaults: temperature 0, 1024 tokens, sample 0, first judgement, not strict.
    pub fn new(models: &'a dyn JudgeModels) -> Self {
        JudgeRuntime {
            models,
            temperature: 0.0,
            max_tokens: 1024,
            sample: 0,
            rejudge: 0,
            strict: false,
            embeddings: None,
        }
    }

    /// Defaults overridden by the suite's `judge.temperature` and `judge.max_tokens`.
    pub fn with_settings(
        models: &'a dyn JudgeModels,
        settings: &gavel_core::JudgeSettings,
    ) -> Self {
        let mut rt = Self::new(models);
        if let Some(t) = settings.temperature {
            rt.temperature = t;
        }
        if let Some(m) = settings.max_tokens {
            rt.max_tokens = m;
        }
        rt
    }
}

/// What `similar` checks embed with, shared by every execution of a run.
#[derive(Debug, Clone)]
pub enum Embeddings {
    /// The embedder, batched across checks and cached.
    Ready(Batcher),
    /// None could be set up: `similar` checks are `skipped` with this error when
    /// the model is not installed ([`EmbedError::is_missing`]), else `error`.
    Unavailable(EmbedError),
}
