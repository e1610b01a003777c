//! The Gemini generateContent provider against a local server speaking its wire
//! format: requests asserted field by field, answers taken from the Gemini API's
//! documented examples.
#![allow(clippy::unwrap_used)]

#[path = "providers_util.rs"]
mod util;

use std::sync::Arc;
use std::time::Duration;

use gavel_models::{
    ChatModel, ChatRequest, ErrorKind, Message, OutputSchema, ProviderConfig, Role,
    ToolCallRequest, ToolDef, provider_with,
};
use serde_json::{Value, json};
use util::{bounded, header, only_body, only_request};
use wiremock::matchers::{header as header_is, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "AIzaSy-test-0123456789abcdef";
const PATH: &str = "/v1beta/models/gemini-2.5-flash:generateContent";

fn gemini_at(base_url: &str) -> Arc<dyn ChatModel> {
    provider_with(
        &"gemini:gemini-2.5-flash".parse().unwrap(),
        ProviderConfig::default()
            .with_api_key(KEY)
            .with_base_url(base_url),
    )
    .unwrap()
}

fn gemini(server: &MockServer) -> Arc<dyn ChatModel> {
    // GEMINI_BASE_URL is the API root; `/v1beta` is added.
    gemini_at(&server.uri())
}

async fn answer_with(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(PATH))
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

/// The documented example answer of `models.generateContent`.
fn documented_answer(text: &str) -> Value {
    json!({
        "candidates": [{
            "content": {"parts": [{"text": text}], "role": "model"},
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {
            "promptTokenCount": 4,
            "candidatesTokenCount": 9,
            "thoughtsTokenCount": 20,
            "totalTokenCount": 33,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 4}]
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mAitaLmkHPPlz7IPvtfUqQ4"
    })
}

fn google_error(code: u16, status: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message, "status": status}})
}

#[tokio::test]
async fn sends_the_generate_content_request_and_reads_the_answer() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(PATH))
        .and(header_is("x-goog-api-key", KEY))
        .and(header_is("content-type", "application/json"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(documented_answer("I'm doing well, thanks for asking!"))
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
        ..ChatRequest::default()
    };
    let response = bounded(gemini(&server).chat(&request)).await.unwrap();

    let wire = only_request(&server).await;
    // The key travels in the header only: not in the query, not as a bearer token.
    assert_eq!(wire.url.query(), None);
    assert_eq!(header(&wire, "authorization"), None);
    assert_eq!(
        serde_json::from_slice::<Value>(&wire.body).unwrap(),
        json!({
            "systemInstruction": {"parts": [{"text": "You are terse."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Hello!"}]},
                {"role": "model", "parts": [{"text": "Hi."}]},
                {"role": "user", "parts": [{"text": "How are you?"}]}
            ],
            "generationConfig": {"temperature": 0.2, "maxOutputTokens": 50}
        })
    );

    assert_eq!(response.text, "I'm doing well, thanks for asking!");
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.usage.input_tokens, 4);
    // Thinking tokens are output tokens (and billed as such).
    assert_eq!(response.usage.output_tokens, 29);
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert!(response.latency_ms >= 120, "{}", response.latency_ms);
    assert!(!response.cached);
    assert_eq!(response.cost_usd, None);
}

#[tokio::test]
async fn structured_output_sends_the_json_schema_as_is() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200)
            .set_body_json(documented_answer(r#"{"score": 4, "reasoning": "clear"}"#)),
    )
    .await;
    let schema = json!({
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": 1, "maximum": 5},
            "reasoning": {"type": "string"}
        },
        "required": ["reasoning", "score"]
    });
    let request = ChatRequest {
        schema: Some(OutputSchema {
            name: "verdict".into(),
            schema: schema.clone(),
        }),
        ..hello()
    };
    let response = bounded(gemini(&server).chat(&request)).await.unwrap();

    assert_eq!(
        only_body(&server).await["generationConfig"],
        json!({"responseMimeType": "application/json", "responseJsonSchema": schema})
    );
    assert_eq!(response.text, r#"{"score": 4, "reasoning": "clear"}"#);
}

#[tokio::test]
async fn structured_output_that_is_not_json_is_returned_not_an_error() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_answer("Score: four")),
    )
    .await;
    let request = ChatRequest {
        schema: Some(OutputSchema {
            name: "verdict".into(),
            schema: json!({"type": "object"}),
        }),
        ..hello()
    };
    let response = bounded(gemini(&server).chat(&request)).await.unwrap();
    assert_eq!(response.text, "Score: four");
}

fn weather_tool(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: "Get the current weather in a given location".into(),
        parameters: json!({
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"]
        }),
    }
}

/// The documented answer carrying a function call (Gemini 2.5 gives it no id).
fn documented_function_call() -> Value {
    json!({
        "candidates": [{
            "content": {
                "role": "model",
                "parts": [{"functionCall": {"name": "get_weather", "args": {"location": "Boston, MA"}}}]
            },
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {"promptTokenCount": 60, "candidatesTokenCount": 7, "totalTokenCount": 67},
        "modelVersion": "gemini-2.5-flash"
    })
}

#[tokio::test]
async fn tools_and_function_responses_go_out_and_function_calls_come_back() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_function_call()),
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
                // The first id is one this provider made up for an id-less Gemini
                // call: it is not sent back. The second is a real id: it is.
                tool_calls: vec![
                    call("call#get_weather#0", "Paris"),
                    call("call_2", "Boston, MA"),
                ],
                ..Message::assistant("Let me look.")
            },
            result("call#get_weather#0", "14°C"),
            result("call_2", "22°C"),
        ],
        tools: vec![weather_tool("get_weather")],
        ..ChatRequest::default()
    };
    let response = bounded(gemini(&server).chat(&request)).await.unwrap();

    assert_eq!(
        only_body(&server).await,
        json!({
            "systemInstruction": {"parts": [{"text": "Use the tools."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Paris and Boston?"}]},
                {"role": "model", "parts": [
                    {"text": "Let me look."},
                    {"functionCall": {"name": "get_weather", "args": {"location": "Paris"}}},
                    {"functionCall": {"id": "call_2", "name": "get_weather", "args": {"location": "Boston, MA"}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "get_weather", "response": {"name": "get_weather", "content": "14°C"}}},
                    {"functionResponse": {"id": "call_2", "name": "get_weather", "response": {"name": "get_weather", "content": "22°C"}}}
                ]}
            ],
            "tools": [{"functionDeclarations": [{
                "name": "get_weather",
                "description": "Get the current weather in a given location",
                "parametersJsonSchema": weather_tool("get_weather").parameters
            }]}]
        })
    );

    assert_eq!(response.text, "");
    assert_eq!(
        response.tool_calls,
        vec![ToolCallRequest {
            id: "call#get_weather#0".into(),
            name: "get_weather".into(),
            arguments: json!({"location": "Boston, MA"}),
        }]
    );
    // Gemini says STOP when it calls functions; the vocabulary says tool_calls.
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.usage.input_tokens, 60);
    assert_eq!(response.usage.output_tokens, 7);
}

#[tokio::test]
async fn tools_named_like_builtins_stay_function_declarations() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(documented_answer("ok")),
    )
    .await;
    let request = ChatRequest {
        tools: vec![weather_tool("googleSearch"), weather_tool("codeExecution")],
        ..hello()
    };
    bounded(gemini(&server).chat(&request)).await.unwrap();
    let body = only_body(&server).await;
    let names: Vec<&str> = body["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|declaration| declaration["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["googleSearch", "codeExecution"]);
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
    assert!(body.get("toolConfig").is_none(), "{body}");
}

#[tokio::test]
async fn rate_limits_take_the_delay_from_the_body() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(429).set_body_json(json!({"error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                 "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}
            ]
        }})),
    )
    .await;
    let err = bounded(gemini(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::RateLimited);
    assert_eq!(err.retry_after, Some(Duration::from_secs(37)));
    assert!(
        err.message.contains("RESOURCE_EXHAUSTED"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn rate_limits_honour_a_retry_after_header() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "3")
            .set_body_json(google_error(
                429,
                "RESOURCE_EXHAUSTED",
                "Resource has been exhausted.",
            )),
    )
    .await;
    let err = bounded(gemini(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::RateLimited);
    assert_eq!(err.retry_after, Some(Duration::from_secs(3)));
}

#[tokio::test]
async fn server_errors_are_transient() {
    for (code, status) in [(500, "INTERNAL"), (503, "UNAVAILABLE")] {
        let server = MockServer::start().await;
        answer_with(
            &server,
            ResponseTemplate::new(code).set_body_json(google_error(
                code,
                status,
                "The model is overloaded. Please try again later.",
            )),
        )
        .await;
        let err = bounded(gemini(&server).chat(&hello())).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Transient, "{code}");
        assert!(err.message.contains(status), "{}", err.message);
    }
}

#[tokio::test]
async fn a_slow_server_times_out_without_hanging() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200)
            .set_body_json(documented_answer("late"))
            .set_delay(Duration::from_secs(5)),
    )
    .await;
    let model = provider_with(
        &"gemini:gemini-2.5-flash".parse().unwrap(),
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
    let url = util::truncated_server(r#"{"candidates": [{"content": {"parts": [{"te"#, 300).await;
    let err = bounded(gemini_at(&url).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transient, "{}", err.message);
}

#[tokio::test]
async fn malformed_json_is_malformed_and_quotes_the_body() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_raw(r#"{"candidates": [nope]}"#, "application/json"),
    )
    .await;
    let err = bounded(gemini(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed);
    assert!(
        err.message.contains(r#"{"candidates": [nope]}"#),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn an_answer_without_candidates_is_malformed() {
    for body in [
        json!({"usageMetadata": {"promptTokenCount": 4, "totalTokenCount": 4}, "modelVersion": "gemini-2.5-flash"}),
        json!({"candidates": [], "modelVersion": "gemini-2.5-flash"}),
    ] {
        let server = MockServer::start().await;
        answer_with(&server, ResponseTemplate::new(200).set_body_json(&body)).await;
        let err = bounded(gemini(&server).chat(&hello())).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Malformed, "{body}");
        assert!(err.message.contains("`candidates`"), "{}", err.message);
        assert!(
            err.message.contains("gemini-2.5-flash\""),
            "{}",
            err.message
        );
    }
}

#[tokio::test]
async fn a_blocked_prompt_is_permanent_and_says_why() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(json!({
            "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [
                {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}
            ]},
            "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
            "modelVersion": "gemini-2.5-flash"
        })),
    )
    .await;
    let err = bounded(gemini(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Permanent);
    assert!(
        err.message.contains("blocked the prompt (SAFETY)"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn a_filtered_answer_is_an_empty_answer_not_an_error() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": [
                {"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH"}
            ]}],
            "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
            "modelVersion": "gemini-2.5-flash"
        })),
    )
    .await;
    let response = bounded(gemini(&server).chat(&hello())).await.unwrap();
    assert_eq!(response.text, "");
    assert_eq!(response.finish_reason.as_deref(), Some("content_filter"));
}

#[tokio::test]
async fn bad_requests_are_permanent_with_the_providers_message() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(400).set_body_json(google_error(
            400,
            "INVALID_ARGUMENT",
            "* GenerateContentRequest.contents: contents is not specified",
        )),
    )
    .await;
    let err = bounded(gemini(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Permanent);
    assert_eq!(
        err.message,
        "gemini:gemini-2.5-flash: HTTP 400 Bad Request: INVALID_ARGUMENT: * GenerateContentRequest.contents: contents is not specified"
    );
}

#[tokio::test]
async fn an_invalid_key_is_an_auth_error_though_gemini_says_400() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(400).set_body_json(json!({"error": {
            "code": 400,
            "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                         "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}]
        }})),
    )
    .await;
    let model = gemini(&server);
    let err = bounded(model.chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Auth);
    let shown = format!("{model:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("gemini:gemini-2.5-flash"), "{shown}");
}

#[tokio::test]
async fn permission_denied_is_an_auth_error() {
    let server = MockServer::start().await;
    answer_with(
        &server,
        ResponseTemplate::new(403).set_body_json(google_error(
            403,
            "PERMISSION_DENIED",
            "Method doesn't allow unregistered callers (callers without established identity).",
        )),
    )
    .await;
    let err = bounded(gemini(&server).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Auth);
}

#[tokio::test]
async fn a_refused_connection_is_transient() {
    let url = util::refused_url().await;
    let err = bounded(gemini_at(&url).chat(&hello())).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transient, "{}", err.message);
}

#[tokio::test]
async fn missing_credentials_name_both_variables() {
    let err = provider_with(
        &"gemini:gemini-2.5-flash".parse().unwrap(),
        ProviderConfig::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorKind::NoCredentials);
    assert!(err.message.contains("GEMINI_API_KEY"), "{}", err.message);
    assert!(err.message.contains("GOOGLE_API_KEY"), "{}", err.message);
}
