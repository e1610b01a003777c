//! The `chat` target over a scripted model: system prompt and user message
//! rendering, the tool loop, usage, failures and missing credentials.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use gavel_core::TargetSpec;
use gavel_models::{
    ChatModel, ChatRequest, ChatResponse, ErrorKind, ModelError, ModelId, ModelSource, TokenUsage,
    ToolCallRequest,
};
use gavel_targets::{TargetError, TurnRequest};
use serde_json::json;

/// Answers from a script and records every request.
#[derive(Debug)]
struct Scripted {
    id: ModelId,
    answers: Mutex<Vec<Result<ChatResponse, ModelError>>>,
    seen: Mutex<Vec<ChatRequest>>,
}

#[async_trait::async_trait]
impl ChatModel for Scripted {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.seen.lock().unwrap().push(request.clone());
        self.answers.lock().unwrap().remove(0)
    }
    fn id(&self) -> &ModelId {
        &self.id
    }
}

struct One(Arc<Scripted>);

impl ModelSource for One {
    fn model(&self, _id: &str) -> Result<Arc<dyn ChatModel>, ModelError> {
        Ok(self.0.clone())
    }
}

fn scripted(answers: Vec<Result<ChatResponse, ModelError>>) -> Arc<Scripted> {
    Arc::new(Scripted {
        id: "openai:gpt-5-mini".parse().unwrap(),
        answers: Mutex::new(answers),
        seen: Mutex::new(Vec::new()),
    })
}

fn text(s: &str, cost: f64) -> Result<ChatResponse, ModelError> {
    Ok(ChatResponse {
        text: s.into(),
        usage: TokenUsage {
            input_tokens: 10,
            output_tokens: 5,
        },
        cost_usd: Some(cost),
        ..ChatResponse::default()
    })
}

fn spec() -> TargetSpec {
    serde_json::from_value(json!({
        "type": "chat",
        "model": "openai:gpt-5-mini",
        "system": "You manage properties. Today is {{ today }}. Respond in {{ locale }}.",
        "tools": [{"name": "get_listings", "description": "List listings", "result": [{"name": "Beach House"}]}]
    }))
    .unwrap()
}

#[tokio::test]
async fn runs_the_tool_loop_records_calls_and_sums_usage() {
    let tool_call = Ok(ChatResponse {
        tool_calls: vec![ToolCallRequest {
            id: "call_1".into(),
            name: "get_listings".into(),
            arguments: json!({}),
        }],
        usage: TokenUsage {
            input_tokens: 20,
            output_tokens: 3,
        },
        cost_usd: Some(0.001),
        ..ChatResponse::default()
    });
    let model = scripted(vec![
        tool_call,
        text("You have 1 listing: Beach House.", 0.002),
        text("Yes.", 0.0),
    ]);
    let target = gavel_targets::build("agent", &spec(), &One(model.clone())).unwrap();
    let mut session = target.open("s1").await.unwrap();
    let context = json!({"locale": "fr"});
    let turn = session
        .send(&TurnRequest {
            message: "What are my listings?",
            context: Some(&context),
            ..TurnRequest::new("s1", "c")
        })
        .await;
    assert!(turn.failure.is_none(), "{:?}", turn.failure);
    assert_eq!(turn.output, "You have 1 listing: Beach House.");
    assert_eq!(turn.tool_calls[0].name, "get_listings");
    assert_eq!(
        turn.tool_calls[0].result,
        Some(json!([{"name": "Beach House"}]))
    );
    let usage = turn.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (30, 8));
    assert!((usage.cost_usd.unwrap() - 0.003).abs() < 1e-12);
    let seen = model.seen.lock().unwrap().clone();
    let system = seen[0].system.clone().unwrap();
    assert!(
        system.contains("Respond in fr.") && !system.contains("{{"),
        "{system}"
    );
    assert_eq!(seen[0].tools[0].name, "get_listings");
    assert_eq!(
        seen[1].messages.last().unwrap().tool_call_id.as_deref(),
        Some("call_1"),
        "the tool result answers the call"
    );

    // The second message carries the whole conversation.
    let turn = session
        .send(&TurnRequest {
            message: "Sure?",
            context: Some(&context),
            round: 1,
            ..TurnRequest::new("s1", "c")
        })
        .await;
    assert_eq!(turn.output, "Yes.");
    assert_eq!(model.seen.lock().unwrap()[2].messages.len(), 5);
}

#[tokio::test]
async fn model_failures_are_turn_failures_with_the_right_transience() {
    let model = scripted(vec![
        Err(ModelError::new(ErrorKind::RateLimited, "429 slow down")),
        Err(ModelError::new(ErrorKind::Permanent, "400 bad request")),
    ]);
    let target = gavel_targets::build("agent", &spec(), &One(model)).unwrap();
    let mut session = target.open("s").await.unwrap();
    let ctx = json!({"locale": "en"});
    let t = session
        .send(&TurnRequest {
            message: "a",
            context: Some(&ctx),
            ..TurnRequest::new("s", "c")
        })
        .await;
    assert!(t.failure.as_ref().unwrap().transient);
    let t = session
        .send(&TurnRequest {
            message: "b",
            context: Some(&ctx),
            ..TurnRequest::new("s", "c")
        })
        .await;
    assert!(!t.failure.as_ref().unwrap().transient);
    assert!(t.failure.unwrap().message.contains("400"));
}

#[tokio::test]
async fn an_undefined_system_variable_fails_the_turn_and_no_credentials_make_the_target_unavailable()
 {
    let model = scripted(vec![]);
    let target = gavel_targets::build("agent", &spec(), &One(model)).unwrap();
    let mut session = target.open("s").await.unwrap();
    let t = session
        .send(&TurnRequest {
            message: "hi",
            ..TurnRequest::new("s", "c")
        })
        .await;
    assert!(t.failure.unwrap().message.contains("system prompt"));

    let err = gavel_targets::build("agent", &spec(), &common::NoModels).unwrap_err();
    assert!(matches!(err, TargetError::Unavailable { .. }));
    assert!(err.to_string().contains("NO_KEY is not set"));
}

#[tokio::test]
async fn a_user_template_replaces_each_message_and_the_turn_records_what_was_sent() {
    let model = scripted(vec![
        text("Bananas!", 0.0),
        text("Again.", 0.0),
        text("Short it is.", 0.0),
    ]);
    let spec: TargetSpec = serde_json::from_value(json!({
        "type": "chat",
        "model": "openai:gpt-5-mini",
        "user": "Write a tweet about {{ topic }} ({{ message }})"
    }))
    .unwrap();
    let target = gavel_targets::build("tweets", &spec, &One(model.clone())).unwrap();
    let mut session = target.open("s").await.unwrap();
    let context = json!({"topic": "bananas"});
    let first = session
        .send(&TurnRequest {
            message: "be brief",
            context: Some(&context),
            ..TurnRequest::new("s", "c")
        })
        .await;
    assert!(first.failure.is_none(), "{:?}", first.failure);
    assert_eq!(first.input, "Write a tweet about bananas (be brief)");
    // The context wins over the case's message.
    let context = json!({"topic": "nyc", "message": "from the context"});
    let second = session
        .send(&TurnRequest {
            message: "ignored",
            context: Some(&context),
            round: 1,
            ..TurnRequest::new("s", "c")
        })
        .await;
    assert_eq!(second.input, "Write a tweet about nyc (from the context)");
    let seen = model.seen.lock().unwrap().clone();
    let sent: Vec<&str> = seen[1]
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        sent,
        [
            "Write a tweet about bananas (be brief)",
            "Bananas!",
            "Write a tweet about nyc (from the context)"
        ]
    );

    // A follow-up (a reply to a clarifying question) goes as it is.
    let reply = session
        .send(&TurnRequest {
            message: "the short one",
            followup: true,
            round: 1,
            ..TurnRequest::new("s", "c")
        })
        .await;
    assert_eq!(reply.input, "the short one");

    // An undefined variable fails the turn; a template that does not parse, the build.
    let t = session
        .send(&TurnRequest {
            message: "hi",
            ..TurnRequest::new("s", "c")
        })
        .await;
    assert!(t.failure.unwrap().message.starts_with("user message:"));
    let bad: TargetSpec = serde_json::from_value(
        json!({"type": "chat", "model": "openai:gpt-5-mini", "user": "{{ open"}),
    )
    .unwrap();
    let err = gavel_targets::build("tweets", &bad, &One(scripted(vec![]))).unwrap_err();
    assert!(
        err.to_string().starts_with("target `tweets`: user: "),
        "{err}"
    );
}

/// A model at a local OpenAI-compatible server (wiremock) that answers with a
/// call of `tool` (the first `calls` requests, else every one), then with text.
async fn calling(tool: &str, calls: Option<u64>) -> (wiremock::MockServer, Arc<dyn ChatModel>) {
    use wiremock::matchers::{method, path};
    let server = wiremock::MockServer::start().await;
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": tool, "arguments": "{}"}}]
        }}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    });
    let call = wiremock::Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(body));
    match calls {
        Some(n) => call.up_to_n_times(n).mount(&server).await,
        None => call.mount(&server).await,
    }
    let text = json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Sorry, that failed."}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    });
    wiremock::Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(text))
        .mount(&server)
        .await;
    let model = gavel_models::provider_with(
        &"openai:gpt-4o-mini".parse().unwrap(),
        gavel_models::ProviderConfig::default()
            .with_api_key("sk-test")
            .with_base_url(format!("{}/v1", server.uri())),
    )
    .unwrap();
    (server, model)
}

struct Fixed(Arc<dyn ChatModel>);

impl ModelSource for Fixed {
    fn model(&self, _id: &str) -> Result<Arc<dyn ChatModel>, ModelError> {
        Ok(self.0.clone())
    }
}

#[tokio::test]
async fn running_out_of_steps_is_an_error_not_an_empty_answer() {
    let (server, model) = calling("get_listings", None).await;
    let spec: TargetSpec = serde_json::from_value(json!({
        "type": "chat",
        "model": "openai:gpt-4o-mini",
        "system": "Today is {{ today }} ({{ date }}).",
        "max_steps": 2,
        "tools": [{"name": "get_listings", "description": "List listings", "result": {"count": 3}}]
    }))
    .unwrap();
    let target = gavel_targets::build("agent", &spec, &Fixed(model)).unwrap();
    let mut session = target.open("s").await.unwrap();
    let turn = session
        .send(&TurnRequest {
            message: "Listings?",
            ..TurnRequest::new("s", "c")
        })
        .await;
    let failure = turn.failure.expect("out of steps is a failure");
    assert_eq!(failure, gavel_targets::tool_loop::out_of_steps(2));
    assert!(!failure.transient);
    assert_eq!(turn.output, "");
    assert_eq!(turn.tool_calls.len(), 2, "both steps' calls are recorded");
    assert_eq!(turn.usage.unwrap().input_tokens, 20);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    let first: serde_json::Value = requests[0].body_json().unwrap();
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        !system.contains("{{"),
        "both date variables render: {system}"
    );
}

#[tokio::test]
async fn a_tool_without_a_configured_result_answers_an_error_that_fails_tools_called() {
    let (_server, model) = calling("get_bookings", Some(1)).await;
    let spec: TargetSpec = serde_json::from_value(json!({
        "type": "chat", "model": "openai:gpt-4o-mini",
        "tools": [{"name": "get_bookings", "description": "Bookings"}]
    }))
    .unwrap();
    let target = gavel_targets::build("agent", &spec, &Fixed(model)).unwrap();
    let mut session = target.open("s").await.unwrap();
    let turn = session
        .send(&TurnRequest {
            message: "Bookings?",
            ..TurnRequest::new("s", "c")
        })
        .await;
    assert_eq!(turn.failure, None);
    assert_eq!(turn.output, "Sorry, that failed.");
    let result = turn.tool_calls[0].result.as_ref().unwrap();
    assert_eq!(
        result["error"],
        json!("no result configured for tool `get_bookings`")
    );

    // The failed call fails tools-called, unless the check allows errors.
    let transcript = gavel_core::Transcript {
        session_id: "s".into(),
        turns: vec![turn],
    };
    for (allow, status) in [
        (false, gavel_core::Status::Fail),
        (true, gavel_core::Status::Pass),
    ] {
        let yaml = format!(
            "cases:\n  - id: c\n    input: q\n    checks: [{{type: tools-called, tools: [get_bookings], allow_errors: {allow}}}]\n"
        );
        let suite = gavel_core::load::parse_suite_str(&yaml, "t.yaml".as_ref()).unwrap();
        let plan =
            gavel_checks::compile(&suite.cases[0], &gavel_core::JudgeSettings::default()).unwrap();
        let verdict = &plan.run_code(&transcript)[0];
        assert_eq!(verdict.status, status, "{}", verdict.reason);
    }
}
