//! Attribute names and small attribute helpers.

use opentelemetry::{KeyValue, StringValue};

/// The GenAI operation (`invoke_agent`, `execute_tool`, `chat`).
pub(crate) const OPERATION: &str = "gen_ai.operation.name";
/// Who provides the model or agent (the conventions' list, or `_OTHER`).
pub(crate) const PROVIDER: &str = "gen_ai.provider.name";
/// The class of error a failed operation ended with.
pub(crate) const ERROR_TYPE: &str = "error.type";
/// OpenInference's span kind (`AGENT`, `TOOL`, `LLM`), which Arize Phoenix
/// reads to show a span.
pub(crate) const OPENINFERENCE_KIND: &str = "openinference.span.kind";
/// The session id of a conversation.
pub(crate) const CONVERSATION: &str = "gen_ai.conversation.id";
/// The event name of a verdict.
pub(crate) const EVALUATION_EVENT: &str = "gen_ai.evaluation.result";

/// A string attribute: a `&'static str` or an `Arc<str>` is sent as it is, a
/// `String` is moved (nothing is copied).
pub(crate) fn text(key: &'static str, value: impl Into<StringValue>) -> KeyValue {
    KeyValue::new(key, value.into())
}

/// An integer attribute (saturating at `i64::MAX`).
pub(crate) fn int(key: &'static str, value: impl TryInto<i64>) -> KeyValue {
    KeyValue::new(key, value.try_into().unwrap_or(i64::MAX))
}

/// A model id (`provider:model`, `openai-compatible:model@URL`) as
/// `gen_ai.request.model` then `gen_ai.provider.name` (the conventions' name
/// where gavel's prefix differs: `gemini` is `gcp.gemini`; `_OTHER` without a
/// prefix). The URL part of an `@URL` id is left out: it is configuration,
/// not the model's name.
pub(crate) fn model(id: &str) -> [KeyValue; 2] {
    let (provider, name) = match id.split_once(':') {
        Some(("gemini" | "google", rest)) => ("gcp.gemini", rest),
        Some((p, rest)) => (p, rest),
        None => ("_OTHER", id),
    };
    let name = name.split_once('@').map_or(name, |(n, _)| n);
    [
        text("gen_ai.request.model", name.to_owned()),
        text(PROVIDER, provider.to_owned()),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_split_into_provider_and_model_without_urls() {
        let kvs = model("openai-compatible:qwen@http://user:pw@host:8080/v1");
        let shown: Vec<String> = kvs
            .iter()
            .map(|k| format!("{}={}", k.key, k.value))
            .collect();
        assert_eq!(
            shown,
            [
                "gen_ai.request.model=qwen",
                "gen_ai.provider.name=openai-compatible"
            ]
        );
        assert_eq!(model("gpt")[0].value.as_str(), "gpt");
        assert_eq!(model("gpt")[1].value.as_str(), "_OTHER");
        assert_eq!(
            model("gemini:gemini-2.5-pro")[1].value.as_str(),
            "gcp.gemini"
        );
    }
}
