//! The `chat` target over a scripted model: system prompt rendering, the tool
//! loop, usage, failures and missing credentials.
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
