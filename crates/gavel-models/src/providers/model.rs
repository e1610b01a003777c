//! One [`ChatModel`] over genai for every provider family: the request is
//! translated to genai's, genai writes the provider's native JSON, and the answer
//! (or failure) comes back translated and classified.

use std::fmt;
use std::time::{Duration, Instant};

use genai::adapter::AdapterKind;
use genai::chat::{
    ChatMessage, ChatOptions, ContentPart, JsonSpec, MessageContent, ReasoningEffort, StopReason,
    Tool, ToolCall, ToolResponse,
};
use genai::resolver::{AuthData, Endpoint};
use genai::{Client, ModelIden, ServiceTarget};
use serde_json::{Value, json};

use super::classify::{classify, excerpt, provider_message_value};
use super::config::{ProviderConfig, resolve};
use crate::{
    ChatModel, ChatRequest, ChatResponse, ErrorKind, Message, ModelError, ModelId, Provider, Role,
    TokenUsage, ToolCallRequest, ToolDef,
};

/// Anthropic requires `max_tokens`; this is sent when the request sets none.
const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 1024;

/// A provider behind genai.
pub(crate) struct ProviderModel {
    id: ModelId,
    client: Client,
    target: ServiceTarget,
    /// The id as shown in messages and logs: an `openai-compatible` URL masked.
    label: String,
    /// The base URL, masked, for `Debug`.
    display_base: String,
}

impl fmt::Debug for ProviderModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderModel")
            .field("id", &self.label)
            .field("base_url", &self.display_base)
            .finish_non_exhaustive()
    }
}

impl ProviderModel {
    pub(crate) fn new(id: ModelId, config: &ProviderConfig) -> Result<Self, ModelError> {
        let resolved = resolve(&id, config, |name| std::env::var(name).ok())?;
        let label = match id.provider {
            Provider::OpenAiCompatible => format!(
                "{}:{}@{}",
                id.provider.prefix(),
                id.model,
                resolved.display_base
            ),
            _ => id.to_string(),
        };
        let adapter = match id.provider {
            // `resolve` refuses local ids before this point.
            Provider::OpenAi | Provider::OpenAiCompatible | Provider::Local => AdapterKind::OpenAI,
            Provider::Anthropic => AdapterKind::Anthropic,
            Provider::Gemini => AdapterKind::Gemini,
        };
        let auth = match &resolved.api_key {
            Some(key) => AuthData::from_single(key.clone()),
            // A keyless OpenAI-compatible server (Ollama, llama.cpp…): genai's OpenAI
            // adapter insists on a key, so the URL and headers are given outright,
            // with no `Authorization` header at all.
            None => AuthData::RequestOverride {
                url: openai_chat_url(&resolved.endpoint),
                headers: genai::Headers::default(),
            },
        };
        let client = genai_client(&label, config, &resolved.endpoint)?;
        let target = ServiceTarget {
            endpoint: Endpoint::from_owned(resolved.endpoint),
            auth,
            model: ModelIden::new(adapter, id.model.clone()),
        };
        Ok(ProviderModel {
            id,
            label,
            client,
            target,
            display_base: resolved.display_base,
        })
    }

    fn is_openai_family(&self) -> bool {
        matches!(
            self.id.provider,
            Provider::OpenAi | Provider::OpenAiCompatible
        )
    }

    /// genai's request and options for `request`.
    fn genai_request(
        &self,
        request: &ChatRequest,
    ) -> Result<(genai::chat::ChatRequest, ChatOptions), ModelError> {
        let mut chat = genai::chat::ChatRequest::new(to_messages(&request.messages)?);
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            chat = chat.with_system(system);
        }
        // The raw body lets us check the answer's shape and explain bad answers.
        let mut options = ChatOptions::default().with_capture_raw_body(true);
        if let Some(temperature) = request.temperature {
            options = options.with_temperature(temperature);
        }
        let max_tokens = match self.id.provider {
            Provider::Anthropic => Some(request.max_tokens.unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS)),
            _ => request.max_tokens,
        };
        if let Some(max_tokens) = max_tokens {
            options = options.with_max_tokens(max_tokens);
        }
        if let Some(schema) = &request.schema {
            options = options.with_response_format(JsonSpec::new(
                schema_name(&schema.name),
                schema.schema.clone(),
            ));
        }
        match self.id.provider {
            Provider::OpenAi | Provider::OpenAiCompatible => {
                // genai reads a trailing `-low`/`-high`/`-max`… in a model name as a
                // reasoning effort and strips it (`qwen3-max` would go out as `qwen3`).
                // An explicit effort turns that off; a `Budget` is the one effort the
                // Chat Completions adapter never writes to the wire.
                options = options.with_reasoning_effort(ReasoningEffort::Budget(0));
                if !request.tools.is_empty() {
                    chat = chat.with_tools(request.tools.iter().map(genai_tool));
                }
                if let Some(fields) = request
                    .top_logprobs
                    .and_then(|top| super::logprobs::request(self.id.provider, &self.id.model, top))
                {
                    options = options.with_extra_body(fields);
                }
            }
            // genai turns some tool names into the provider's server-side tools
            // (Anthropic `web_search`, Gemini `googleSearch`, `codeExecution`…), so a
            // user's tool of that name would change meaning. These two get their
            // function tools written here, in the providers' documented shape.
            Provider::Anthropic if !request.tools.is_empty() => {
                let tools: Vec<Value> = request
                    .tools
                    .iter()
                    .map(|tool| {
                        json!({
                            "name": tool.name,
                            "description": tool.description,
                            "input_schema": tool.parameters,
                        })
                    })
                    .collect();
                options = options.with_extra_body(json!({ "tools": tools }));
            }
            Provider::Gemini if !request.tools.is_empty() => {
                let declarations: Vec<Value> = request
                    .tools
                    .iter()
                    .map(|tool| {
                        json!({
                            "name": tool.name,
                            "description": tool.description,
                            "parametersJsonSchema": tool.parameters,
                        })
                    })
                    .collect();
                options = options.with_extra_body(
                    json!({ "tools": [{ "functionDeclarations": declarations }] }),
                );
            }
            Provider::Anthropic | Provider::Gemini | Provider::Local => {}
        }
        Ok((chat, options))
    }

    /// Our response from genai's, after checking the raw body has the expected shape.
    fn answer_from(
        &self,
        mut response: genai::chat::ChatResponse,
    ) -> Result<ChatResponse, ModelError> {
        let mut logprobs = Vec::new();
        if let Some(raw) = response.captured_raw_body.take() {
            check_shape(self.id.provider, &raw)?;
            logprobs = super::logprobs::read(&raw);
        }
        let tool_calls: Vec<ToolCallRequest> = response
            .tool_calls()
            .into_iter()
            .map(|call| ToolCallRequest {
                id: call.call_id.clone(),
                name: call.fn_name.clone(),
                arguments: if call.fn_arguments.is_null() {
                    json!({})
                } else {
                    call.fn_arguments.clone()
                },
            })
            .collect();
        let usage = TokenUsage {
            input_tokens: tokens(response.usage.prompt_tokens),
            output_tokens: tokens(response.usage.completion_tokens),
        };
        let finish_reason = response
            .stop_reason
            .as_ref()
            .map(|reason| finish_reason(reason, !tool_calls.is_empty()));
        Ok(ChatResponse {
            text: response.texts().concat(),
            tool_calls,
            usage,
            cost_usd: None,
            latency_ms: 0,
            cached: false,
            finish_reason,
            logprobs,
            attempts: Default::default(),
        })
    }

    /// A 2xx body genai refused: read leniently when it is an OpenAI answer with
    /// broken tool arguments, else explained (what is missing, and the body).
    fn unreadable_answer(&self, raw: &Value, cause: &str) -> Result<ChatResponse, ModelError> {
        if self.is_openai_family()
            && let Some(response) = openai_lenient(raw)
        {
            return Ok(response);
        }
        check_shape(self.id.provider, raw)?;
        Err(ModelError::new(
            ErrorKind::Malformed,
            format!(
                "unexpected response ({}): {}",
                cause.lines().next().unwrap_or_default().trim(),
                excerpt(&raw.to_string())
            ),
        ))
    }

    /// The error for a failed call: classified, prefixed with the model id, and
    /// scrubbed of every registered secret (the API key, URL credentials) should
    /// the provider have echoed one.
    fn finish_error(&self, error: ModelError) -> ModelError {
        let message = format!("{}: {}", self.label, error.message);
        let message = gavel_core::secrets::redact(&message).into_owned();
        ModelError { message, ..error }
    }
}

/// The genai client of one provider model: its connect timeout and the
/// configured request timeout.
pub(super) fn genai_client(
    label: &str,
    config: &ProviderConfig,
    endpoint: &str,
) -> Result<Client, ModelError> {
    // genai's own HTTP client keeps only 4 idle connections per host, so at
    // `-j 32` most calls would open (and, with TLS, handshake) a new connection;
    // this one keeps every connection a run's concurrency needs.
    let mut web = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .gzip(true);
    if let Some(timeout) = config.timeout {
        web = web.timeout(timeout);
    }
    // A plain-HTTP endpoint (a local server) never handshakes TLS, so its client
    // skips loading the platform's root certificates; a redirect to HTTPS fails.
    if endpoint
        .get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
    {
        web = web.tls_certs_only([]);
    }
    let failed = |error: String| {
        ModelError::new(
            ErrorKind::Permanent,
            format!("{label}: cannot build the HTTP client: {error}"),
        )
    };
    let web = web.build().map_err(|e| failed(e.to_string()))?;
    Client::builder()
        .with_reqwest(web)
        .build()
        .map_err(|e| failed(e.to_string()))
}

/// How long to wait for a TCP connection to a provider.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

#[async_trait::async_trait]
impl ChatModel for ProviderModel {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let (chat, options) = self
            .genai_request(request)
            .map_err(|error| self.finish_error(error))?;
        let started = Instant::now();
        let outcome = self
            .client
            .exec_chat(self.target.clone(), chat, Some(&options))
            .await;
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let result = match outcome {
            Ok(response) => self.answer_from(response),
            // genai could not read the body (it is captured, so it is here).
            Err(genai::Error::ChatResponseGeneration {
                response_body,
                cause,
                ..
            }) => self.unreadable_answer(&response_body, &cause),
            Err(error) => Err(classify(error)),
        };
        match result {
            Ok(mut response) => {
                response.latency_ms = latency_ms;
                tracing::debug!(model = %self.label, latency_ms, "model call");
                Ok(response)
            }
            Err(error) => {
                let error = self.finish_error(error);
                tracing::debug!(model = %self.label, latency_ms, kind = ?error.kind, "model call failed");
                Err(error)
            }
        }
    }

    fn id(&self) -> &ModelId {
        &self.id
    }
}

/// genai's messages: consecutive tool results go into one message (Anthropic wants
/// them in one user turn, Gemini in one `functionResponse` turn).
fn to_messages(messages: &[Message]) -> Result<Vec<ChatMessage>, ModelError> {
    let mut out = Vec::with_capacity(messages.len());
    let mut results: Vec<ToolResponse> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if message.role != Role::Tool && !results.is_empty() {
            out.push(ChatMessage::from(std::mem::take(&mut results)));
        }
        match message.role {
            Role::Tool => {
                let call_id = message
                    .tool_call_id
                    .as_deref()
                    .filter(|id| !id.is_empty())
                    .ok_or_else(|| {
                        ModelError::new(
                            ErrorKind::Permanent,
                            format!("message {index} is a tool result without a tool_call_id"),
                        )
                    })?;
                results.push(ToolResponse::new(call_id, message.content.clone()));
            }
            Role::User => out.push(ChatMessage::user(message.content.clone())),
            Role::Assistant if message.tool_calls.is_empty() => {
                out.push(ChatMessage::assistant(message.content.clone()));
            }
            Role::Assistant => {
                let mut parts = Vec::with_capacity(message.tool_calls.len() + 1);
                if !message.content.is_empty() {
                    parts.push(ContentPart::Text(message.content.clone()));
                }
                parts.extend(message.tool_calls.iter().map(|call| {
                    ContentPart::ToolCall(ToolCall {
                        call_id: call.id.clone(),
                        fn_name: call.name.clone(),
                        fn_arguments: call.arguments.clone(),
                        thought_signatures: None,
                    })
                }));
                out.push(ChatMessage::assistant(MessageContent::from_parts(parts)));
            }
        }
    }
    if !results.is_empty() {
        out.push(ChatMessage::from(results));
    }
    Ok(out)
}

fn genai_tool(tool: &ToolDef) -> Tool {
    Tool::new(tool.name.clone())
        .with_description(tool.description.clone())
        .with_schema(tool.parameters.clone())
}

/// A schema name OpenAI accepts: `[a-zA-Z0-9_-]{1,64}`.
fn schema_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "output".to_owned()
    } else {
        cleaned
    }
}

fn tokens(count: Option<i32>) -> u64 {
    count.and_then(|n| u64::try_from(n).ok()).unwrap_or(0)
}

/// One vocabulary for every provider: `stop`, `length`, `tool_calls`,
/// `content_filter`, else the provider's own word.
fn finish_reason(reason: &StopReason, has_tool_calls: bool) -> String {
    match reason {
        // Gemini says STOP when it calls functions.
        StopReason::Completed(_) if has_tool_calls => "tool_calls".to_owned(),
        StopReason::Completed(_) | StopReason::StopSequence(_) => "stop".to_owned(),
        StopReason::MaxTokens(_) => "length".to_owned(),
        StopReason::ToolCall(_) => "tool_calls".to_owned(),
        StopReason::ContentFilter(_) => "content_filter".to_owned(),
        StopReason::Other(raw) => raw.clone(),
    }
}

/// A successful body must hold what the provider documents; genai is lenient
/// about some of it (an OpenAI body without `choices` reads as an empty answer).
fn check_shape(provider: Provider, raw: &Value) -> Result<(), ModelError> {
    if let Some(error) = raw.get("error").filter(|error| !error.is_null()) {
        let body = json!({ "error": error });
        return Err(ModelError::new(
            ErrorKind::Permanent,
            format!(
                "the provider answered with an error: {}",
                provider_message_value(&body)
            ),
        ));
    }
    let missing = |what: &str| {
        ModelError::new(
            ErrorKind::Malformed,
            format!("the response has no {what}: {}", excerpt(&raw.to_string())),
        )
    };
    match provider {
        Provider::OpenAi | Provider::OpenAiCompatible => {
            let Some(message) = raw.pointer("/choices/0/message").filter(|m| m.is_object()) else {
                return Err(missing("`choices[0].message`"));
            };
            // An answer says something: text, a refusal, or tool calls.
            let said = |key: &str| message.get(key).is_some_and(|v| !v.is_null());
            if !(said("content") || said("refusal") || said("tool_calls")) {
                return Err(missing(
                    "content, refusal or tool calls in `choices[0].message`",
                ));
            }
        }
        Provider::Anthropic => {
            if !raw.get("content").is_some_and(Value::is_array) {
                return Err(missing("`content` array"));
            }
        }
        Provider::Gemini => {
            let has_candidate = raw
                .get("candidates")
                .and_then(Value::as_array)
                .is_some_and(|candidates| !candidates.is_empty());
            if !has_candidate {
                if let Some(reason) = raw
                    .pointer("/promptFeedback/blockReason")
                    .and_then(Value::as_str)
                {
                    return Err(ModelError::new(
                        ErrorKind::Permanent,
                        format!("Gemini blocked the prompt ({reason})"),
                    ));
                }
                return Err(missing("`candidates`"));
            }
        }
        // No HTTP body: `resolve` refuses local ids.
        Provider::Local => {}
    }
    Ok(())
}

/// An OpenAI answer genai refused, read leniently: a tool call whose `arguments`
/// are not valid JSON (small local models do this) comes back with the raw string
/// as its arguments, for the agent or the judge to deal with, as invalid JSON text
/// is for structured output. `None` when the body is not an answer at all.
fn openai_lenient(raw: &Value) -> Option<ChatResponse> {
    let choice = raw.pointer("/choices/0")?;
    let message = choice.get("message")?.as_object()?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned();
    let tool_calls = match message.get("tool_calls") {
        Some(Value::Array(calls)) => calls
            .iter()
            .map(|call| {
                let arguments = match call.pointer("/function/arguments") {
                    Some(Value::String(raw)) => {
                        serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone()))
                    }
                    Some(Value::Null) | None => json!({}),
                    Some(other) => other.clone(),
                };
                Some(ToolCallRequest {
                    id: call.get("id")?.as_str()?.to_owned(),
                    name: call.pointer("/function/name")?.as_str()?.to_owned(),
                    arguments,
                })
            })
            .collect::<Option<Vec<_>>>()?,
        Some(Value::Null) | None => Vec::new(),
        Some(_) => return None,
    };
    let count = |pointer: &str| raw.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(|reason| finish_reason(&StopReason::from(reason.to_owned()), !tool_calls.is_empty()));
    Some(ChatResponse {
        text,
        tool_calls,
        usage: TokenUsage {
            input_tokens: count("/usage/prompt_tokens"),
            output_tokens: count("/usage/completion_tokens"),
        },
        cost_usd: None,
        latency_ms: 0,
        cached: false,
        finish_reason,
        logprobs: super::logprobs::read(raw),
        attempts: Default::default(),
    })
}

/// The Chat Completions URL under an OpenAI base (`…/v1/` → `…/v1/chat/completions`),
/// keeping a query string.
fn openai_chat_url(endpoint: &str) -> String {
    match endpoint.split_once('?') {
        Some((path, query)) => format!("{path}chat/completions?{query}"),
        None => format!("{endpoint}chat/completions"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_fit_openai() {
        assert_eq!(schema_name("judge verdict!"), "judge_verdict_");
        assert_eq!(schema_name(""), "output");
        assert_eq!(schema_name(&"a".repeat(100)).len(), 64);
        assert_eq!(schema_name("Verdict_v1-2"), "Verdict_v1-2");
    }

    #[test]
    fn finish_reasons_share_one_vocabulary() {
        let reason = |raw: &str| StopReason::from(raw.to_owned());
        assert_eq!(finish_reason(&reason("end_turn"), false), "stop");
        assert_eq!(finish_reason(&reason("STOP"), false), "stop");
        assert_eq!(finish_reason(&reason("STOP"), true), "tool_calls");
        assert_eq!(finish_reason(&reason("max_tokens"), false), "length");
        assert_eq!(finish_reason(&reason("MAX_TOKENS"), false), "length");
        assert_eq!(finish_reason(&reason("tool_use"), true), "tool_calls");
        assert_eq!(finish_reason(&reason("SAFETY"), false), "content_filter");
        assert_eq!(finish_reason(&reason("refusal"), false), "content_filter");
        assert_eq!(finish_reason(&reason("stop_sequence"), false), "stop");
        assert_eq!(finish_reason(&reason("pause_turn"), false), "pause_turn");
    }

    #[test]
    fn tool_results_are_grouped_and_need_ids() {
        let call = ToolCallRequest {
            id: "c1".into(),
            name: "f".into(),
            arguments: json!({}),
        };
        let tool = |id: Option<&str>| Message {
            role: Role::Tool,
            content: "r".into(),
            tool_calls: Vec::new(),
            tool_call_id: id.map(str::to_owned),
        };
        let messages = vec![
            Message::user("q"),
            Message {
                tool_calls: vec![
                    call.clone(),
                    ToolCallRequest {
                        id: "c2".into(),
                        ..call
                    },
                ],
                ..Message::assistant("")
            },
            tool(Some("c1")),
            tool(Some("c2")),
            Message::user("thanks"),
        ];
        let out = to_messages(&messages).unwrap();
        assert_eq!(out.len(), 4);
        assert_eq!(out[2].content.parts().len(), 2);

        let err = to_messages(&[tool(None)]).err().unwrap();
        assert_eq!(err.kind, ErrorKind::Permanent);
        assert!(err.message.contains("tool_call_id"), "{}", err.message);
    }

    #[test]
    fn chat_urls_keep_queries() {
        assert_eq!(
            openai_chat_url("http://h/v1/"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            openai_chat_url("http://h/v1/?a=b"),
            "http://h/v1/chat/completions?a=b"
        );
    }
}
