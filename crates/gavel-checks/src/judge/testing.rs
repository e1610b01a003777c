//! A scripted judge model for tests: canned answers, every request recorded.
#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use gavel_models::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelId, TokenUsage};

use crate::runtime::{JudgeModels, JudgeRuntime};

type Responder = dyn Fn(&ChatRequest) -> Result<ChatResponse, ModelError> + Send + Sync;

/// A chat model that answers from a script (in order) or a function of the request.
pub(crate) struct Scripted {
    id: ModelId,
    script: Mutex<VecDeque<Result<ChatResponse, ModelError>>>,
    responder: Option<Box<Responder>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripted").field("id", &self.id).finish()
    }
}

/// A successful answer with `text`: 100 input tokens, 20 output, 7 ms, $0.001.
pub(crate) fn reply(text: &str) -> Result<ChatResponse, ModelError> {
    Ok(ChatResponse {
        text: text.to_owned(),
        usage: TokenUsage {
            input_tokens: 100,
            output_tokens: 20,
        },
        cost_usd: Some(0.001),
        latency_ms: 7,
        ..ChatResponse::default()
    })
}

impl Scripted {
    /// Answers these, in order; then a permanent "script exhausted" error.
    pub(crate) fn new(
        script: impl IntoIterator<Item = Result<ChatResponse, ModelError>>,
    ) -> Arc<Self> {
        Arc::new(Scripted {
            id: "openai:judge-mock".parse().unwrap(),
            script: Mutex::new(script.into_iter().collect()),
            responder: None,
            requests: Mutex::new(Vec::new()),
        })
    }

    /// Answers with `f(request)`.
    pub(crate) fn with(
        f: impl Fn(&ChatRequest) -> Result<ChatResponse, ModelError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Scripted {
            id: "openai:judge-mock".parse().unwrap(),
            script: Mutex::new(VecDeque::new()),
            responder: Some(Box::new(f)),
            requests: Mutex::new(Vec::new()),
        })
    }

    /// Every request received, in order.
    pub(crate) fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl ChatModel for Scripted {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        if let Some(f) = &self.responder {
            return f(request);
        }
        self.script.lock().unwrap().pop_front().unwrap_or_else(|| {
            Err(ModelError::new(
                gavel_models::ErrorKind::Permanent,
                "script exhausted",
            ))
        })
    }

    fn id(&self) -> &ModelId {
        &self.id
    }
}

/// Judge models that always hand out `model`, recording the ids asked for.
pub(crate) struct Models {
    pub(crate) model: Arc<Scripted>,
    pub(crate) asked: Mutex<Vec<Option<String>>>,
}

impl Models {
    pub(crate) fn new(model: Arc<Scripted>) -> Self {
        Models {
            model,
            asked: Mutex::new(Vec::new()),
        }
    }

    /// A default runtime over these models.
    pub(crate) fn runtime(&self) -> JudgeRuntime<'_> {
        JudgeRuntime::new(self)
    }
}

impl JudgeModels for Models {
    fn model(&self, id: Option<&str>) -> Result<Arc<dyn ChatModel>, ModelError> {
        self.asked.lock().unwrap().push(id.map(str::to_owned));
        Ok(self.model.clone())
    }
}
