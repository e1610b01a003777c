//! The Anthropic Messages provider against a local server speaking its wire
//! format: requests asserted field by field, answers taken from Anthropic's
//! documented examples.
#![allow(clippy::unwrap_used)]

#[path = "providers_util.rs"]
mod util;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use gavel_models::{
    ChatModel, ChatRequest, ErrorKind, Message, OutputSchema, ProviderConfig, Role,
    ToolCallRequest, ToolDef, provider_with,
};
use serde_json::{Value, json};
use util::{bounded, header, only_body, only_request};
use wiremock::matchers::{header as header_is, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-ant-test-0123456789abcdef";

fn anthropic_at(base_url: &str) -> Arc<dyn ChatModel> {
    provider_with(
        &"anthropic:claude-sonnet-4-5".parse().unwrap(),
        ProviderConfig::default()
            .with_api_key(KEY)
            .with_base_url(base_url),
    )
    .unwrap()
}

fn anthropic(server: &MockServer) -> Arc<dyn ChatModel> {
    // The SDKs' ANTHROPIC_BASE_URL is the API root; `/v1` is added.
    anthropic_at(&server.uri())
}

async fn answer_with(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
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

/// The documented example answer of `POST /v1/messages`.
fn documented_message(text: &str) -> Value {
    json!({
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": {"input_tokens": 2095, "output_tokens": 503}
    })
}

fn error_body(kind: &str, message: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"
    })
}

#[tokio::test]
async fn sends_the_messages_request_and_reads_the_answer() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header_is("x-api-key", KEY))
        .and(header_is("anthropic-version", "2023-06-01"))
        .and(header_is("content-type", "application/json"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(documented_message("Hi! My name is Claude."))
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
        ..ChatRequest::default()
    };
    let response = bounded(anthropic(&server).chat(&request)).await.unwrap();

    let wire = only_request(&server).await;
    assert_eq!(header(&wire, "authorization"), None);
    // The system prompt is a top-level field, not a message; max_tokens (required)
    // defaults to 1024.
    assert_eq!(
        serde_json::from_slice::<Value>(&wire.body).unwrap(),
        json!({
            "model": "claude-sonnet-4-5",
            "stream": false,
            "system": "You are terse.",
            "messages": [
                {"role": "user", "content": "Hello!"},
                {"role": "assistant", "content": "Hi."},
                {"role": "user", "content": "How are you?"}
            ],
            "temperature": 0.2,
            "max_tokens": 1024
        })
    );

    assert_eq!(response.text, "Hi! My name is Claude.");
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.usage.input_tokens, 2095);
    assert_eq!(response.usage.output_tokens, 503);
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert!(response.latency_ms >= 120, "{}", response.latency_ms);
    assert!(!response.cached);
    assert_eq!(response.cost_usd, None);
}

#[tokio::test]
async fn max_tokens_is_sent_as_given_and_length_stops_are_reported() {
    let server = MockServer::start().await;
    let mut body = documented_message("Hi! My na");
    body["stop_reason"] = json!("max_tokens");
    answer_with(&server, ResponseTemplate::new(200).set_body_json(body)).await;
    let request = ChatRequest {
        max_tokens: Some(5),
        ..hello()
    };
    let response = bounded(anthropic(&server).chat(&request)).await.unwrap();
    assert_eq!(only_body(&server).await["max_tokens"], 5);
    assert_eq!(response.finish_reason.as_deref(), Some("length"));
}

#[tokio::test]
async fn a_base_url_ending_in_v1_is_accepted() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_message("ok")),
    )
    .await;
    let model = anthropic_at(&format!("{}/v1/", server.uri()));
    bounded(model.chat(&hello())).await.unwrap();
    assert_eq!(only_request(&server).await.url.path(), "/v1/messages");
}

#[tokio::test]
async fn structured_output_uses_native_json_outputs() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200)
            .set_body_json(documented_message(r#"{"score": 4, "reasoning": "clear"}"#)),
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
    let response = bounded(anthropic(&server).chat(&request)).await.unwrap();

    let body = only_body(&server).await;
    assert_eq!(
        body["output_config"],
        json!({"format": {"type": "json_schema", "schema": schema}})
    );
    assert!(body.get("tools").is_none(), "{body}");
    assert_eq!(response.text, r#"{"score": 4, "reasoning": "clear"}"#);
}

#[tokio::test]
async fn structured_output_that_is_not_json_is_returned_not_an_error() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_message("Score: four")),
    )
    .await;
    let request = ChatRequest {
        schema: Some(OutputSchema {
            name: "verdict".into(),
            schema: json!({"type": "object", "properties": {"score": {"type": "integer"}}}),
        }),
        ..hello()
    };
    let response = bounded(anthropic(&server).chat(&request)).await.unwrap();
    assert_eq!(response.text, "Score: four");
    // Anthropic's JSON outputs need closed objects: genai adds
    // `additionalProperties: false` and leaves optional properties optional.
    assert_eq!(
        only_body(&server).await["output_config"]["format"]["schema"],
        json!({
            "type": "object",
            "properties": {"score": {"type": "integer"}},
            "additionalProperties": false
        })
    );
}

fn weather_tool(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
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

/// The documented answer of a tool-use turn: some text, then a `tool_use` block.
fn documented_tool_use() -> Value {
    json!({
        "id": "msg_01Aq9w938a90dw8q",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "text", "text": "I'll check the current weather in San Francisco for you."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
             "input": {"location": "San Francisco, CA", "unit": "celsius"}}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": null,
        "usage": {"input_tokens": 472, "output_tokens": 91}
    })
}

#[tokio::test]
async fn tools_and_tool_results_go_out_and_tool_calls_come_back() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_tool_use()),
    )
    .await;
    let result = |id: &str, content: &str| Message {
        role: Role::Tool,
        content: content.into(),
        tool_calls: Vec::new(),
        tool_call_id: Some(id.into()),
    };
    let call = |id: &str, city: &str| ToolCallRequest {
        id: id.into(),
        name: "get_weather".into(),
        arguments: json!({"location": city}),
    };
    let request = ChatRequest {
        system: Some("Use the tools.".into()),
        messages: vec![
            Message::user("Weather in Paris and Boston?"),
            Message {
                tool_calls: vec![call("toolu_1", "Paris"), call("toolu_2", "Boston, MA")],
                ..Message::assistant("Let me look.")
            },
            result("toolu_1", "14°C"),
            result("toolu_2", "22°C"),
        ],
        tools: vec![weather_tool("get_weather")],
        ..ChatRequest::default()
    };
    let response = bounded(anthropic(&server).chat(&request)).await.unwrap();

    assert_eq!(
        only_body(&server).await,
        json!({
            "model": "claude-sonnet-4-5",
            "stream": false,
            "system": "Use the tools.",
            "messages": [
                {"role": "user", "content": "Weather in Paris and Boston?"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"location": "Paris"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"location": "Boston, MA"}}
                ]},
                // Both results in one user turn, as Anthropic requires.
                {"role": "user", "content": [
                    {"type": "tool_result", "content": "14°C", "tool_use_id": "toolu_1"},
                    {"type": "tool_result", "content": "22°C", "tool_use_id": "toolu_2"}
                ]}
            ],
            "max_tokens": 1024,
            "tools": [{
                "name": "get_weather",
                "description": "Get the current weather in a given location",
                "input_schema": weather_tool("get_weather").parameters
            }]
        })
    );

    assert_eq!(
        response.text,
        "I'll check the current weather in San Francisco for you."
    );
    assert_eq!(
        response.tool_calls,
        vec![ToolCallRequest {
            id: "toolu_01A09q90qw90lq917835lq9".into(),
            name: "get_weather".into(),
            arguments: json!({"location": "San Francisco, CA", "unit": "celsius"}),
        }]
    );
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.usage.input_tokens, 472);
    assert_eq!(response.usage.output_tokens, 91);
}

#[tokio::test]
async fn a_tool_named_web_search_stays_the_users_tool() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_message("ok")),
    )
    .await;
    let request = ChatRequest {
        tools: vec![weather_tool("web_search")],
        ..hello()
    };
    bounded(anthropic(&server).chat(&request)).await.unwrap();
    let tools = &only_body(&server).await["tools"];
    assert_eq!(
        tools,
        &json!([{
            "name": "web_search",
            "description": "Get the current weather in a given location",
            "input_schema": weather_tool("web_search").parameters
        }])
    );
}

#[tokio::test]
async fn rate_limits_carry_retry_after_in_seconds() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "20")
            .set_body_json(error_body(
                "rate_limit_error",
                "This request would exceed your organization's rate limit of 50 requests per minute.",
            )),
    )
    .await;
    let err = bounded(anthropic(&server).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::RateLimited);
    assert_eq!(err.retry_after, Some(Duration::from_secs(20)));
    assert!(err.message.contains("rate_limit_error"), "{}", err.message);
}

#[tokio::test]
async fn rate_limits_carry_retry_after_as_an_http_date() {
    let server = MockServer::start().await;
    let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
    answer_with(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after", date.as_str())
            .set_body_json(error_body("rate_limit_error", "Slow down.")),
    )
    .await;
    let err = bounded(anthropic(&server).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::RateLimited);
    let waited = err.retry_after.unwrap();
    assert!(
        waited >= Duration::from_secs(28) && waited <= Duration::from_secs(30),
        "{waited:?}"
    );
}

#[tokio::test]
async fn overloaded_and_server_errors_are_transient() {
    for (status, kind) in [(529, "overloaded_error"), (500, "api_error")] {
        let server = MockServer::start().await;
        answer_with(
            &server,
            ResponseTemplate::new(status).set_body_json(error_body(kind, "Try again later.")),
        )
        .await;
        let err = bounded(anthropic(&server).chat(&hello()))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Transient, "{status}");
        assert!(err.message.contains(kind), "{}", err.message);
    }
}

#[tokio::test]
async fn a_slow_server_times_out_without_hanging() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200)
            .set_body_json(documented_message("late"))
            .set_delay(Duration::from_secs(5)),
    )
    .await;
    let model = provider_with(
        &"anthropic:claude-sonnet-4-5".parse().unwrap(),
        ProviderConfig::default()
            .with_api_key(KEY)
            .with_base_url(server.uri())
            .with_timeout(Duration::from_millis(200)),
    )
    .unwrap();
    // Without the provider's own timeout the answer would come, after 5 s.
    let err = bounded(model.chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Timeout, "{}", err.message);
}

#[tokio::test]
async fn a_truncated_body_is_transient() {
    let url = util::truncated_server(
        r#"{"id": "msg_01", "type": "message", "content": [{"ty"#,
        500,
    )
    .await;
    let err = bounded(anthropic_at(&url).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transient, "{}", err.message);
}

#[tokio::test]
async fn malformed_json_is_malformed_and_quotes_the_body() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200)
            .set_body_raw(r#"{"id": "msg_01", "content": <html>}"#, "application/json"),
    )
    .await;
    let err = bounded(anthropic(&server).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed);
    assert!(
        err.message.contains(r#""content": <html>"#),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn an_answer_without_content_is_malformed() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF", "type": "message", "role": "assistant",
            "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 0}
        })),
    )
    .await;
    let err = bounded(anthropic(&server).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed);
    assert!(err.message.contains("`content` array"), "{}", err.message);
    assert!(
        err.message.contains("msg_013Zva2CMHLNnXjNJJKqJ2EF"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn bad_requests_are_permanent_with_the_providers_message() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(400).set_body_json(error_body(
            "invalid_request_error",
            "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5",
        )),
    )
    .await;
    let err = bounded(anthropic(&server).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Permanent);
    assert_eq!(
        err.message,
        "anthropic:claude-sonnet-4-5: HTTP 400 Bad Request: invalid_request_error: max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5"
    );
}

#[tokio::test]
async fn refused_keys_are_auth_errors_and_the_key_is_never_shown() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(401).set_body_json(error_body(
            "authentication_error",
            &format!("invalid x-api-key {KEY}"),
        )),
    )
    .await;
    let model = anthropic(&server);
    let err = bounded(model.chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Auth);
    assert!(
        err.message.contains("authentication_error"),
        "{}",
        err.message
    );
    assert!(!err.message.contains(KEY), "{}", err.message);
    let shown = format!("{model:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("anthropic:claude-sonnet-4-5"), "{shown}");
}

#[tokio::test]
async fn permission_errors_are_auth_errors() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(403).set_body_json(error_body(
            "permission_error",
            "Your API key does not have permission to use the specified resource.",
        )),
    )
    .await;
    let err = bounded(anthropic(&server).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Auth);
}

#[tokio::test]
async fn a_refused_connection_is_transient() {
    let url = util::refused_url().await;
    let err = bounded(anthropic_at(&url).chat(&hello()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transient, "{}", err.message);
}

#[tokio::test]
async fn missing_credentials_name_the_variable() {
    let err = provider_with(
        &"anthropic:claude-sonnet-4-5".parse().unwrap(),
        ProviderConfig::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorKind::NoCredentials);
    assert!(err.message.contains("ANTHROPIC_API_KEY"), "{}", err.message);
}
