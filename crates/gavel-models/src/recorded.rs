//! A model call kept for the record: [`chat_recorded`] asks a model and
//! describes the call as a [`ModelCall`] (for transcripts and exports).

use std::time::Instant;

use gavel_core::{ModelCall, ModelCaller, Usage};

use crate::{ChatModel, ChatRequest, ChatResponse, ModelError};

/// Sends `request` to `model` for `caller`; the answer, and the call as a
/// [`ModelCall`] (`None` when the answer came from the cache: no call was made).
pub async fn chat_recorded(
    model: &dyn ChatModel,
    request: &ChatRequest,
    caller: ModelCaller,
) -> (Result<ChatResponse, ModelError>, Option<ModelCall>) {
    let started = Instant::now();
    let answer = model.chat(request).await;
    let id = model.id();
    let mut call = ModelCall {
        caller,
        model: format!("{}:{}", id.provider.prefix(), id.model),
        usage: None,
        latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        error: None,
    };
    match &answer {
        Ok(a) if a.cached => return (answer, None),
        Ok(a) => {
            call.usage = Some(Usage {
                input_tokens: a.usage.input_tokens,
                output_tokens: a.usage.output_tokens,
                cost_usd: a.cost_usd,
            });
        }
        Err(e) => call.error = Some(e.kind.as_str().to_owned()),
    }
    (answer, Some(call))
}
