//! The prompt text for a chat request: the model's own chat template from its
//! GGUF metadata, or, for a base model with none, a plain transcript.

use gavel_models::{ChatRequest, Role};
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};

/// The conversation as (role, text), the system prompt first.
fn turns(request: &ChatRequest) -> Result<Vec<(&'static str, &str)>, String> {
    if !request.tools.is_empty() {
        return Err(
            "a local model cannot call tools: use a provider for a tool-using agent".into(),
        );
    }
    let mut out = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        out.push(("system", system));
    }
    for message in &request.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => {
                return Err(
                    "a local model cannot read tool results: use a provider for a tool-using agent"
                        .into(),
                );
            }
        };
        out.push((role, message.content.as_str()));
    }
    Ok(out)
}

/// The prompt for `request` through `template` (the model's), ending where the
/// assistant's answer starts.
pub(crate) fn with_template(
    model: &LlamaModel,
    template: &LlamaChatTemplate,
    request: &ChatRequest,
) -> Result<String, String> {
    let messages = turns(request)?
        .into_iter()
        .map(|(role, text)| LlamaChatMessage::new(role.to_owned(), text.to_owned()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("a message cannot be passed to llama.cpp: {e}"))?;
    model
        .apply_chat_template(template, &messages, true)
        .map_err(|e| {
            format!("llama.cpp cannot apply this model's chat template (not one of the templates it knows?): {e}")
        })
}

/// The prompt for a base model, which has no chat template: the system prompt,
/// then each turn as `User:` / `Assistant:` paragraphs, ending with `Assistant:`.
pub(crate) fn plain(request: &ChatRequest) -> Result<String, String> {
    let mut out = String::new();
    for (role, text) in turns(request)? {
        match role {
            "system" => out.push_str(text),
            "user" => {
                out.push_str("User: ");
                out.push_str(text);
            }
            _ => {
                out.push_str("Assistant: ");
                out.push_str(text);
            }
        }
        out.push_str("\n\n");
    }
    out.push_str("Assistant:");
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use gavel_models::{Message, ToolDef};

    #[test]
    fn plain_transcript_ends_where_the_answer_starts() {
        let request = ChatRequest {
            system: Some("Grade the answer.".into()),
            messages: vec![
                Message::user("Q1"),
                Message::assistant("A1"),
                Message::user("Q2"),
            ],
            ..ChatRequest::default()
        };
        assert_eq!(
            plain(&request).unwrap(),
            "Grade the answer.\n\nUser: Q1\n\nAssistant: A1\n\nUser: Q2\n\nAssistant:"
        );
    }

    #[test]
    fn tools_are_refused_with_the_reason() {
        let request = ChatRequest {
            messages: vec![Message::user("hi")],
            tools: vec![ToolDef {
                name: "search".into(),
                description: "d".into(),
                parameters: serde_json::json!({"type": "object"}),
            }],
            ..ChatRequest::default()
        };
        assert!(plain(&request).unwrap_err().contains("cannot call tools"));
    }
}
