//! Requests and responses, provider-neutral.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool's result, answering an assistant tool call.
    Tool,
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// The text.
    pub content: String,
    /// Tool calls the assistant made in this message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    /// For `Role::Tool`: the id of the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Tool name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// Provider's call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON.
    pub arguments: Value,
}

/// Structured output: the answer must be JSON matching `schema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// A short name for the schema (OpenAI requires one).
    pub name: String,
    /// The JSON Schema.
    pub schema: Value,
}

/// A provider-neutral chat request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// System prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Answer length cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Structured output, through the provider's own mechanism.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<OutputSchema>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDef>,
    /// Sample index (e.g. the repeat): part of the cache key, never sent, so `n`
    /// repeats are `n` real samples while a re-run is served from the cache.
    #[serde(default)]
    pub sample: u32,
    /// Hash of the prompt template that produced this request: part of the cache key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_hash: Option<String>,
    /// Ask for the log probabilities of each answer token and of its `n` most
    /// likely alternatives (1-20), where the provider returns them (OpenAI and
    /// OpenAI-compatible Chat Completions, but not reasoning models); other
    /// providers answer without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u8>,
}

/// One answer token with its log probability and, when asked for, the most
/// likely tokens at its position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    /// The token's text.
    pub token: String,
    /// Its natural-log probability.
    pub logprob: f64,
    /// The most likely tokens at this position, most likely first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<TopLogprob>,
}

/// An alternative token at one answer position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopLogprob {
    /// The token's text.
    pub token: String,
    /// Its natural-log probability.
    pub logprob: f64,
}

/// Tokens spent by one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

/// A model's answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The answer text (the JSON text for structured output).
    pub text: String,
    /// Tool calls the model asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    /// Tokens spent.
    #[serde(default)]
    pub usage: TokenUsage,
    /// Cost in US dollars, when the price is known (0 when served from the cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Wall time of the call.
    #[serde(default)]
    pub latency_ms: u64,
    /// Served from the cache, with no model call.
    #[serde(default)]
    pub cached: bool,
    /// Why the model stopped (`stop`, `length`, `tool_calls`…), when said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The answer's tokens with their log probabilities, when the request asked
    /// for them and the provider returned them (cached with the answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logprobs: Vec<TokenLogprob>,
    /// The tries the call took (retries, 429s, malformed answers), filled by the
    /// retry layer; never cached. Judge answers re-asked because they did not
    /// parse are separate calls, not tries.
    #[serde(skip)]
    pub attempts: gavel_core::Attempts,
}
