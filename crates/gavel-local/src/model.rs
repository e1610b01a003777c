//! [`LocalModel`]: a `local:` model id as a [`ChatModel`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use gavel_model_files::ModelKind;
use gavel_models::{
    ChatModel, ChatRequest, ChatResponse, ErrorKind, ModelError, ModelId, Provider, TokenUsage,
};

use crate::gguf::{GgufInfo, inspect};
use crate::options::{LocalOptions, LocalSpec};
use crate::weights::{Weights, load};

/// A GGUF model run in-process by llama.cpp.
///
/// Opening one finds the file and reads its header; the weights are loaded on
/// the first call, once per file for the whole process, and shared by every
/// `LocalModel` naming that file. Calls on one file run one at a time, each on
/// a blocking thread off the async runtime. Answers to requests with an output
/// schema are constrained to it token by token, so they always parse.
///
/// Clones share one handle.
#[derive(Debug, Clone)]
pub struct LocalModel(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    id: ModelId,
    path: PathBuf,
    info: GgufInfo,
    options: LocalOptions,
    weights: OnceLock<Arc<Weights>>,
}

/// How long the two phases of one call took, for benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// Reading the prompt.
    pub prompt: Duration,
    /// Writing the answer.
    pub generate: Duration,
}

impl LocalModel {
    /// The model for a `local:` id: its GGUF file found (a path, or a name looked
    /// up by `gavel-model-files`, never downloaded) and its header checked. A bad
    /// id, a missing file or one that is not a GGUF model is a
    /// [`ErrorKind::Permanent`] error that says which.
    pub fn open(id: &ModelId) -> Result<Self, ModelError> {
        let permanent = |message: String| ModelError::new(ErrorKind::Permanent, message);
        if id.provider != Provider::Local {
            return Err(permanent(format!("{id} is not a local: model")));
        }
        let spec: LocalSpec = id.model.parse().map_err(|e| permanent(format!("{e}")))?;
        let path = gavel_model_files::locate(&spec.model, ModelKind::Gguf)
            .map_err(|e| permanent(format!("{id}: {e}")))?
            .path;
        let info = inspect(&path).map_err(|e| permanent(format!("{id}: {e}")))?;
        Ok(LocalModel(Arc::new(Inner {
            id: id.clone(),
            path,
            info,
            options: spec.options,
            weights: OnceLock::new(),
        })))
    }

    /// The GGUF file.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// What the file's header says (its name, whether it has a chat template).
    pub fn info(&self) -> &GgufInfo {
        &self.0.info
    }

    /// Whether `self` and `other` run on one loaded copy of the weights (both
    /// must have answered a call or been [`load`](Self::load)ed).
    pub fn shares_weights_with(&self, other: &LocalModel) -> bool {
        match (self.0.weights.get(), other.0.weights.get()) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Loads the weights now (blocking) rather than on the first call.
    pub fn load(&self) -> Result<(), ModelError> {
        self.weights().map(drop)
    }

    fn weights(&self) -> Result<Arc<Weights>, ModelError> {
        let inner = &self.0;
        if let Some(weights) = inner.weights.get() {
            return Ok(weights.clone());
        }
        let weights = load(&inner.path)
            .map_err(|e| ModelError::new(ErrorKind::Permanent, format!("{}: {e}", inner.id)))?;
        Ok(inner.weights.get_or_init(|| weights).clone())
    }

    /// [`ChatModel::chat`], with how long the prompt and the answer took.
    pub async fn chat_timed(
        &self,
        request: &ChatRequest,
    ) -> Result<(ChatResponse, Timings), ModelError> {
        let started = Instant::now();
        let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
        let (model, request, flag) = (self.clone(), request.clone(), cancel.0.clone());
        let generation = tokio::task::spawn_blocking(move || {
            let weights = model.weights()?;
            crate::generate::generate(&weights, &model.0.options, &request, &flag)
                .map_err(|e| ModelError::new(ErrorKind::Permanent, format!("{}: {e}", model.0.id)))
        })
        .await
        .map_err(|e| {
            ModelError::new(
                ErrorKind::Permanent,
                format!("{}: the llama.cpp thread failed: {e}", self.0.id),
            )
        })??;
        let response = ChatResponse {
            text: generation.text,
            usage: TokenUsage {
                input_tokens: generation.prompt_tokens.into(),
                output_tokens: generation.output_tokens.into(),
            },
            cost_usd: Some(0.0),
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            finish_reason: Some(generation.finish_reason.to_owned()),
            ..ChatResponse::default()
        };
        let timings = Timings {
            prompt: generation.prompt_time,
            generate: generation.generate_time,
        };
        Ok((response, timings))
    }
}

/// Tells the blocking generation to stop when the call is dropped (its
/// timeout passed, or the run was cancelled), so the model is free sooner.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[async_trait::async_trait]
impl ChatModel for LocalModel {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.chat_timed(request).await.map(|(response, _)| response)
    }

    fn id(&self) -> &ModelId {
        &self.0.id
    }
}
