//! The OpenAI Chat Completions provider (and `openai-compatible`) against a local
//! server speaking its wire format: requests asserted field by field, answers
//! taken from OpenAI's documented examples.
#![allow(clippy::unwrap_used)]

#[path = "providers_util.rs"]
mod util;

use std::sync::Arc;
use std::time::Duration;

use gavel_core::Attempts;
use gavel_models::layers::{MALFORMED_RETRIES, Retry};
use gavel_models::{
    ChatModel, ChatRequest, ErrorKind, Message, OutputSchema, ProviderConfig, Role,
    ToolCallRequest, ToolDef, provider_with,
};
use serde_json::{Value, json};
use util::{bounded, header, only_body, only_request};
use wiremock::matchers::{header as header_is, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-0123456789abcdef";

fn model_at(id: &str, base_url: &str) -> Arc<dyn ChatModel> {
    provider_with(
        &id.parse().unwrap(),
        ProviderConfig::default()
            .with_api_key(KEY)
            .with_base_url(base_url),
    )
    .unwrap()
}

fn openai(server: &MockServer) -> Arc<dyn ChatModel> {
    model_at("openai:gpt-4o-mini", &format!("{}/v1", server.uri()))
}

async fn answer_with(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(server)
        .await;
}

fn hello() -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user("Hello!")],
        ..ChatRequest::default()
    }
}

/// The documented example answer of `POST /v1/chat/completions`.
fn documented_completion() -> Value {
    json!({
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1677652288,
        "model": "gpt-4o-mini",
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "\n\nHello there, how may I assist you today?",
                "refusal": null
            },
            "logprobs": null,
            "finish_reason": "stop"
        }],
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 12,
            "total_tokens": 21,
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0
            }
        }
    })
}

fn completion_with_content(content: &str) -> Value {
    let mut body = documented_completion();
    body["choices"][0]["message"]["content"] = json!(content);
    body
}

#[tokio::test]
async fn sends_the_chat_completions_request_and_reads_the_answer() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header_is("authorization", format!("Bearer {KEY}").as_str()))
        .and(header_is("content-type", "application/json"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(documented_completion())
                .set_delay(Duration::from_millis(120)),
        )
        .expect(1)
        .mount(&server)
        .await;

    let request = ChatRequest {
        system: Some("You are terse.".into()),
        messages: vec![
            Message::user("Hello!"),
            Message::assistant("Hi."),
            Message::user("How are you?"),
        ],
        temperature: Some(0.2),
        max_tokens: Some(50),
        sample: 3,
        template_hash: Some("abc".into()),
        ..ChatRequest::default()
    };
    let response = bounded(openai(&server).chat(&request)).await.unwrap();

    // The wire request, whole: the system prompt is the first message; sample and
    // template hash are never sent.
    assert_eq!(
        only_body(&server).await,
        json!({
            "model": "gpt-4o-mini",
            "stream": false,
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Hello!"},
                {"role": "assistant", "content": "Hi."},
                {"role": "user", "content": "How are you?"}
            ],
            "temperature": 0.2,
            "max_tokens": 50
        })
    );

    assert_eq!(response.text, "Hello there, how may I assist you today?");
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.usage.input_tokens, 9);
    assert_eq!(response.usage.output_tokens, 12);
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert!(response.latency_ms >= 120, "{}", response.latency_ms);
    assert!(!response.cached);
    assert_eq!(response.cost_usd, None);
}

#[tokio::test]
async fn reasoning_models_get_max_completion_tokens() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_completion()),
    )
    .await;
    let model = model_at("openai:gpt-5-mini", &format!("{}/v1", server.uri()));
    let request = ChatRequest {
        max_tokens: Some(64),
        ..hello()
    };
    bounded(model.chat(&request)).await.unwrap();
    let body = only_body(&server).await;
    assert_eq!(body["model"], "gpt-5-mini");
    assert_eq!(body["max_completion_tokens"], 64);
    assert!(body.get("max_tokens").is_none(), "{body}");
    assert!(body.get("reasoning_effort").is_none(), "{body}");
}

#[tokio::test]
async fn structured_output_sends_a_strict_json_schema() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(completion_with_content(
            r#"{"score": 4, "reasoning": "clear"}"#,
        )),
    )
    .await;
    let schema = json!({
        "type": "object",
        "properties": {
            "score": {"type": "integer"},
            "reasoning": {"type": "string"}
        },
        "required": ["score", "reasoning"],
        "additionalProperties": false
    });
    let request = ChatRequest {
        schema: Some(OutputSchema {
            name: "verdict".into(),
            schema: schema.clone(),
        }),
        ..hello()
    };
    let response = bounded(openai(&server).chat(&request)).await.unwrap();

    let body = only_body(&server).await;
    assert_eq!(
        body["response_format"],
        json!({
            "type": "json_schema",
            "json_schema": {"name": "verdict", "strict": true, "schema": schema}
        })
    );
    assert_eq!(response.text, r#"{"score": 4, "reasoning": "clear"}"#);
}

#[tokio::test]
async fn structured_output_schemas_are_made_strict_and_names_valid() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(completion_with_content("{}")),
    )
    .await;
    let request = ChatRequest {
        schema: Some(OutputSchema {
            name: "judge verdict".into(),
            schema: json!({
                "type": "object",
                "properties": {"score": {"type": "integer"}, "note": {"type": "string"}},
                "required": ["score"]
            }),
        }),
        ..hello()
    };
    bounded(openai(&server).chat(&request)).await.unwrap();
    let format = &only_body(&server).await["response_format"]["json_schema"];
    // OpenAI's strict mode needs every property required and no extras: the
    // schema sent is that narrowing of the one asked for (answers valid for it
    // are valid for the original, which the judge validates against).
    assert_eq!(format["name"], "judge_verdict");
    assert_eq!(
        format["schema"],
        json!({
            "type": "object",
            "properties": {"score": {"type": "integer"}, "note": {"type": "string"}},
            "required": ["score", "note"],
            "additionalProperties": false
        })
    );
}

#[tokio::test]
async fn structured_output_that_is_not_json_is_returned_not_an_error() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(completion_with_content("Score: four")),
    )
    .await;
    let request = ChatRequest {
        schema: Some(OutputSchema {
            name: "verdict".into(),
            schema: json!({"type": "object"}),
        }),
        ..hello()
    };
    let response = bounded(openai(&server).chat(&request)).await.unwrap();
    assert_eq!(response.text, "Score: four");
}

fn weather_tool() -> ToolDef {
    ToolDef {
        name: "get_current_weather".into(),
        description: "Get the current weather in a given location".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
            },
            "required": ["location"]
        }),
    }
}

fn documented_tool_call(arguments: &str) -> Value {
    json!({
        "id": "chatcmpl-abc123",
        "object": "chat.completion",
        "created": 1699896916,
        "model": "gpt-4o-mini",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_abc123",
                    "type": "function",
                    "function": {"name": "get_current_weather", "arguments": arguments}
                }]
            },
            "logprobs": null,
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
    })
}

#[tokio::test]
async fn tools_and_tool_results_go_out_and_tool_calls_come_back() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200)
            .set_body_json(documented_tool_call("{\n\"location\": \"Boston, MA\"\n}")),
    )
    .await;
    let request = ChatRequest {
        messages: vec![
            Message::user("What's the weather like in Paris today?"),
            Message {
                tool_calls: vec![ToolCallRequest {
                    id: "call_1".into(),
                    name: "get_current_weather".into(),
                    arguments: json!({"location": "Paris, France"}),
                }],
                ..Message::assistant("")
            },
            Message {
                role: Role::Tool,
                content: r#"{"temperature": 14}"#.into(),
                tool_calls: Vec::new(),
                tool_call_id: Some("call_1".into()),
            },
            Message::user("And in Boston?"),
        ],
        tools: vec![weather_tool()],
        ..ChatRequest::default()
    };
    let response = bounded(openai(&server).chat(&request)).await.unwrap();

    assert_eq!(
        only_body(&server).await,
        json!({
            "model": "gpt-4o-mini",
            "stream": false,
            "tools": [{
                "type": "function",
                "function": {
                    "name": "get_current_weather",
                    "description": "Get the current weather in a given location",
                    "parameters": weather_tool().parameters,
                    "strict": false
                }
            }],
            "messages": [
                {"role": "user", "content": "What's the weather like in Paris today?"},
                {"role": "assistant", "content": "", "tool_calls": [{
                    "type": "function",
                    "id": "call_1",
                    "function": {"name": "get_current_weather", "arguments": "{\"location\":\"Paris, France\"}"}
                }]},
                {"role": "tool", "content": "{\"temperature\": 14}", "tool_call_id": "call_1"},
                {"role": "user", "content": "And in Boston?"}
            ]
        })
    );

    assert_eq!(response.text, "");
    assert_eq!(
        response.tool_calls,
        vec![ToolCallRequest {
            id: "call_abc123".into(),
            name: "get_current_weather".into(),
            arguments: json!({"location": "Boston, MA"}),
        }]
    );
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.usage.input_tokens, 82);
    assert_eq!(response.usage.output_tokens, 17);
}

#[tokio::test]
async fn tool_arguments_that_are_not_json_come_back_as_the_raw_string() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_tool_call("{location: Boston")),
    )
    .await;
    let request = ChatRequest {
        tools: vec![weather_tool()],
        ..hello()
    };
    let response = bounded(openai(&server).chat(&request)).await.unwrap();
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].id, "call_abc123");
    assert_eq!(response.tool_calls[0].arguments, json!("{location: Boston"));
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.usage.input_tokens, 82);
}

fn rate_limit_body() -> Value {
    json!({"error": {
        "message": "Rate limit reached for gpt-4o-mini in organization org-123 on tokens per min (TPM): Limit 30000, Used 30000, Requested 100. Please try again in 200ms.",
        "type": "tokens",
        "param": null,
        "code": "rate_limit_exceeded"
    }})
}

#[tokio::test]
async fn rate_limits_carry_retry_after() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "7")
            .set_body_json(rate_limit_body()),
    )
    .await;
    let err = bounded(openai(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::RateLimited);
    assert_eq!(err.retry_after, Some(Duration::from_secs(7)));
    assert!(
        err.message.starts_with("openai:gpt-4o-mini: HTTP 429"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("Rate limit reached"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn retry_after_ms_is_preferred_when_present() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "1")
            .insert_header("retry-after-ms", "250")
            .set_body_json(rate_limit_body()),
    )
    .await;
    let err = bounded(openai(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::RateLimited);
    assert_eq!(err.retry_after, Some(Duration::from_millis(250)));
}

#[tokio::test]
async fn server_errors_are_transient() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(500).set_body_json(json!({"error": {
            "message": "The server had an error while processing your request. Sorry about that!",
            "type": "server_error", "param": null, "code": null
        }})),
    )
    .await;
    let err = bounded(openai(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transient);
    assert_eq!(err.retry_after, None);
    assert!(err.message.contains("HTTP 500"), "{}", err.message);
    assert!(err.message.contains("server_error"), "{}", err.message);
}

#[tokio::test]
async fn a_slow_server_times_out_without_hanging() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200)
            .set_body_json(documented_completion())
            .set_delay(Duration::from_secs(5)),
    )
    .await;
    let model = provider_with(
        &"openai:gpt-4o-mini".parse().unwrap(),
        ProviderConfig::default()
            .with_api_key(KEY)
            .with_base_url(format!("{}/v1", server.uri()))
            .with_timeout(Duration::from_millis(200)),
    )
    .unwrap();
    // Without the provider's own timeout the answer would come, after 5 s.
    let err = bounded(model.chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Timeout, "{}", err.message);
    assert!(err.message.contains("timed out"), "{}", err.message);
}

#[tokio::test]
async fn a_truncated_body_is_transient() {
    let url = util::truncated_server(r#"{"id": "chatcmpl-123", "choices": [{"ind"#, 400).await;
    let err = bounded(model_at("openai:gpt-4o-mini", &format!("{url}/v1")).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transient, "{}", err.message);
    assert!(
        err.message.contains("response body could not be read"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn json_cut_short_inside_a_complete_response_is_transient() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200)
            .set_body_raw(r#"{"id": "chatcmpl-123", "choices": ["#, "application/json"),
    )
    .await;
    let err = bounded(openai(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transient, "{}", err.message);
    assert!(err.message.contains("ended early"), "{}", err.message);
}

#[tokio::test]
async fn malformed_json_is_malformed_and_quotes_the_body() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_raw(
            r#"{"id": "chatcmpl-123", "choices": [oops]}"#,
            "application/json",
        ),
    )
    .await;
    let err = bounded(openai(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed);
    assert!(err.message.contains("not valid JSON"), "{}", err.message);
    assert!(
        err.message.contains(r#""choices": [oops]"#),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn an_answer_without_choices_is_malformed() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-123", "object": "chat.completion", "model": "gpt-4o-mini",
            "usage": {"prompt_tokens": 9, "completion_tokens": 0, "total_tokens": 9}
        })),
    )
    .await;
    let err = bounded(openai(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed);
    assert!(
        err.message.contains("choices[0].message"),
        "{}",
        err.message
    );
    assert!(err.message.contains("chatcmpl-123"), "{}", err.message);
}

#[tokio::test]
async fn bad_requests_are_permanent_with_the_providers_message() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": "Invalid schema for response_format 'verdict': 'required' is required to be supplied.",
            "type": "invalid_request_error",
            "param": "response_format",
            "code": null
        }})),
    )
    .await;
    let err = bounded(openai(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Permanent);
    assert_eq!(
        err.message,
        "openai:gpt-4o-mini: HTTP 400 Bad Request: invalid_request_error: Invalid schema for response_format 'verdict': 'required' is required to be supplied."
    );
}

#[tokio::test]
async fn refused_keys_are_auth_errors_and_the_key_is_never_shown() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(401).set_body_json(json!({"error": {
            "message": format!("Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys."),
            "type": "invalid_request_error",
            "param": null,
            "code": "invalid_api_key"
        }})),
    )
    .await;
    let model = openai(&server);
    let err = bounded(model.chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Auth);
    assert!(!err.message.contains(KEY), "{}", err.message);
    assert!(!format!("{err:?}").contains(KEY));
    assert!(err.message.contains("[redacted]"), "{}", err.message);

    let shown = format!("{model:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("openai:gpt-4o-mini"), "{shown}");
    assert!(shown.contains(&server.uri()), "{shown}");
}

#[tokio::test]
async fn forbidden_is_an_auth_error() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(403).set_body_json(json!({"error": {
            "message": "Country, region, or territory not supported", "type": "request_forbidden",
            "param": null, "code": "unsupported_country_region_territory"
        }})),
    )
    .await;
    let err = bounded(openai(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Auth);
}

#[tokio::test]
async fn a_refused_connection_is_transient() {
    let url = util::refused_url().await;
    let err = bounded(model_at("openai:gpt-4o-mini", &format!("{url}/v1")).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transient, "{}", err.message);
    assert!(err.message.contains("could not connect"), "{}", err.message);
}

#[tokio::test]
async fn missing_credentials_name_the_variable() {
    let err = provider_with(
        &"openai:gpt-4o-mini".parse().unwrap(),
        ProviderConfig::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorKind::NoCredentials);
    assert!(err.message.contains("OPENAI_API_KEY"), "{}", err.message);
}

#[tokio::test]
async fn openai_compatible_servers_need_no_key_and_get_the_model_name_verbatim() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_completion()),
    )
    .await;
    // `-max` is also a reasoning-effort suffix in genai: the name must still go
    // out whole.
    let id = format!("openai-compatible:qwen3-max@{}/v1", server.uri());
    let model =
        gavel_models::provider_with(&id.parse().unwrap(), ProviderConfig::default()).unwrap();
    let response = bounded(model.chat(&hello())).await.unwrap();
    assert_eq!(response.text, "Hello there, how may I assist you today?");

    let request = only_request(&server).await;
    assert_eq!(request.url.path(), "/v1/chat/completions");
    assert_eq!(header(&request, "authorization"), None);
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["model"], "qwen3-max");
    assert!(body.get("reasoning_effort").is_none(), "{body}");
    assert_eq!(model.id().to_string(), id);
}

#[tokio::test]
async fn openai_compatible_servers_get_a_bearer_key_when_given_one() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header_is("authorization", "Bearer local-key"))
        .respond_with(ResponseTemplate::new(200).set_body_json(documented_completion()))
        .expect(1)
        .mount(&server)
        .await;
    let id = format!("openai-compatible:llama3@{}/v1/", server.uri());
    let model = provider_with(
        &id.parse().unwrap(),
        ProviderConfig::default().with_api_key("local-key"),
    )
    .unwrap();
    bounded(model.chat(&hello())).await.unwrap();
    assert_eq!(only_body(&server).await["model"], "llama3");
}

#[tokio::test]
async fn an_error_inside_a_200_is_permanent() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(json!({"error": "model 'llama9' not found"})),
    )
    .await;
    let id = format!("openai-compatible:llama9@{}/v1", server.uri());
    let model = provider_with(&id.parse().unwrap(), ProviderConfig::default()).unwrap();
    let err = bounded(model.chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Permanent);
    assert!(
        err.message.contains("model 'llama9' not found"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn a_password_in_the_base_url_is_never_shown() {
    let server = MockServer::start().await;
    answer_with(&server, ResponseTemplate::new(500).set_body_string("boom")).await;
    let url = server.uri().replace("http://", "http://user:secretpw@");
    let id = format!("openai-compatible:llama3@{url}/v1");
    let model = provider_with(&id.parse().unwrap(), ProviderConfig::default()).unwrap();
    let err = bounded(model.chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transient);
    assert!(!err.message.contains("secretpw"), "{}", err.message);
    assert!(err.message.contains("boom"), "{}", err.message);
    let shown = format!("{model:?}");
    assert!(!shown.contains("secretpw"), "{shown}");
    assert!(shown.contains("***@127.0.0.1"), "{shown}");
}

// ------------------------------------------------- malformed answers, retried

/// A server answering `first` `n` times, then the documented completion.
async fn answering_after(first: ResponseTemplate, n: u64) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(first)
        .up_to_n_times(n)
        .mount(&server)
        .await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_completion()),
    )
    .await;
    server
}

fn retried(server: &MockServer) -> Retry {
    Retry::new(openai(server), 4)
}

#[tokio::test]
async fn empty_choices_are_asked_again_and_counted() {
    let empty = json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": []});
    let server = answering_after(ResponseTemplate::new(200).set_body_json(empty), 2).await;
    let answer = bounded(retried(&server).chat(&hello())).await.unwrap();
    assert!(answer.text.contains("Hello there"), "{}", answer.text);
    assert_eq!(
        answer.attempts,
        Attempts {
            attempts: 3,
            retries: 2,
            rate_limited: 0,
            malformed: 2
        }
    );
}

#[tokio::test]
async fn a_message_without_content_is_malformed_and_asked_again() {
    let silent = json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": null}, "finish_reason": "stop"}
    ]});
    let server = answering_after(ResponseTemplate::new(200).set_body_json(silent), 1).await;
    let err = bounded(openai(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed);
    assert!(
        err.message.contains("content, refusal or tool calls"),
        "{}",
        err.message
    );
    let answer = bounded(retried(&server).chat(&hello())).await.unwrap();
    assert_eq!(
        (answer.attempts.attempts, answer.attempts.malformed),
        (1, 0)
    );
}

#[tokio::test]
async fn malformed_answers_are_retried_a_bounded_number_of_times() {
    let server = answering_after(
        ResponseTemplate::new(200).set_body_raw("{oops}", "application/json"),
        100,
    )
    .await;
    let err = bounded(retried(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed);
    let tries = 1 + MALFORMED_RETRIES;
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        tries as usize
    );
    assert_eq!(
        (err.attempts.attempts, err.attempts.malformed),
        (tries, tries)
    );
}

#[tokio::test]
async fn rate_limits_are_counted_apart_from_malformed_answers() {
    let server = answering_after(
        ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_json(json!({"error": {"message": "slow down", "type": "requests"}})),
        1,
    )
    .await;
    let answer = bounded(retried(&server).chat(&hello())).await.unwrap();
    assert_eq!(
        answer.attempts,
        Attempts {
            attempts: 2,
            retries: 1,
            rate_limited: 1,
            malformed: 0
        }
    );
}

#[tokio::test]
async fn token_logprobs_are_asked_for_and_read_back() {
    let server = MockServer::start().await;
    let mut body = completion_with_content("{\"score\":4}");
    body["choices"][0]["logprobs"] = json!({"content": [
        {"token": "{\"score\":", "logprob": 0.0, "bytes": [], "top_logprobs": []},
        {"token": "4", "logprob": -0.2, "bytes": [52], "top_logprobs": [
            {"token": "4", "logprob": -0.2, "bytes": [52]},
            {"token": "5", "logprob": -1.8, "bytes": [53]}
        ]},
        {"token": "}", "logprob": 0.0, "bytes": [125], "top_logprobs": []}
    ]});
    answer_with(&server, ResponseTemplate::new(200).set_body_json(body)).await;
    let request = ChatRequest {
        top_logprobs: Some(5),
        ..hello()
    };
    let answer = bounded(openai(&server).chat(&request)).await.unwrap();
    let sent = only_body(&server).await;
    assert_eq!(
        (&sent["logprobs"], &sent["top_logprobs"]),
        (&json!(true), &json!(5))
    );
    assert_eq!(answer.logprobs.len(), 3);
    assert_eq!(answer.logprobs[1].token, "4");
    assert_eq!(answer.logprobs[1].top[1].token, "5");
    assert_eq!(answer.logprobs[1].top[1].logprob, -1.8);
}

#[tokio::test]
async fn logprobs_are_not_asked_for_unless_wanted_or_from_reasoning_models() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_completion()),
    )
    .await;
    let answer = bounded(openai(&server).chat(&hello())).await.unwrap();
    assert!(
        answer.logprobs.is_empty(),
        "the documented answer has `logprobs: null`"
    );
    let reasoning = model_at("openai:gpt-5-mini", &format!("{}/v1", server.uri()));
    let request = ChatRequest {
        top_logprobs: Some(5),
        ..hello()
    };
    bounded(reasoning.chat(&request)).await.unwrap();
    let requests = server.received_requests().await.unwrap();
    for r in requests {
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert!(body.get("logprobs").is_none(), "{body}");
    }
}
