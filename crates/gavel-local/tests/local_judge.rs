//! The local judge on a real GGUF (Gemma 3 270M): constrained answers parse and
//! validate, one load serves concurrent calls, bad files give clear errors.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;

use gavel_local::LocalModel;
use gavel_models::{
    ChatModel, ChatRequest, ErrorKind, Message, ModelSettings, OutputSchema, layered,
};
use serde_json::{Value, json};

/// The pointwise judge's answer shape (gavel-checks `judge_verdict`).
fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "status": { "type": "string", "enum": ["ok", "[TRANSIENT]", "[ERROR]"] },
            "reasoning": { "type": "string", "maxLength": 160 },
            "score": { "type": ["integer", "null"] },
        },
        "required": ["status", "reasoning", "score"],
        "additionalProperties": false,
    })
}

fn judge_request(answer: &str) -> ChatRequest {
    ChatRequest {
        system: Some(
            "You grade answers. Reply with JSON: status \"ok\", a one-sentence reasoning, \
             and a score from 1 (wrong) to 5 (right)."
                .into(),
        ),
        messages: vec![Message::user(format!(
            "Question: What is the capital of France?\nAnswer: {answer}"
        ))],
        temperature: Some(0.0),
        max_tokens: Some(96),
        schema: Some(OutputSchema {
            name: "judge_verdict".into(),
            schema: verdict_schema(),
        }),
        ..ChatRequest::default()
    }
}

#[tokio::test]
async fn a_judge_answer_parses_and_validates_against_the_schema() {
    let Some(path) = support::gemma("a_judge_answer_parses_and_validates_against_the_schema")
    else {
        return;
    };
    let raw = gavel_local::provider(&support::id(&path, "")).unwrap();
    // Through the layers every provider gets: accounting prices it at 0.
    let model = layered(raw, &ModelSettings::default(), None);
    let answer = model.chat(&judge_request("Paris.")).await.unwrap();
    let value: Value = serde_json::from_str(&answer.text)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", answer.text));
    let validator = jsonschema::validator_for(&verdict_schema()).unwrap();
    assert!(validator.is_valid(&value), "{value}");
    assert_eq!(
        answer.finish_reason.as_deref(),
        Some("stop"),
        "{}",
        answer.text
    );
    assert!(answer.usage.input_tokens > 20, "{:?}", answer.usage);
    assert!(answer.usage.output_tokens > 5, "{:?}", answer.usage);
    assert_eq!(answer.cost_usd, Some(0.0));
}

#[tokio::test]
async fn concurrent_calls_share_one_load() {
    let Some(path) = support::gemma("concurrent_calls_share_one_load") else {
        return;
    };
    // Two ids (different options) naming one file.
    let a = LocalModel::open(&support::id(&path, "")).unwrap();
    let b = LocalModel::open(&support::id(&path, "&seed=3")).unwrap();
    assert!(
        !a.shares_weights_with(&b),
        "nothing is loaded before a call"
    );
    let models: Vec<Arc<dyn ChatModel>> = vec![
        Arc::new(a.clone()),
        Arc::new(b.clone()),
        Arc::new(a.clone()),
    ];
    let request = judge_request("Lyon.");
    let answers = futures::future::join_all(models.iter().map(|m| m.chat(&request))).await;
    let texts: Vec<String> = answers.into_iter().map(|a| a.unwrap().text).collect();
    assert!(a.shares_weights_with(&b));
    // Greedy decoding on shared weights: the same request, the same answer.
    assert_eq!(texts[0], texts[1]);
    assert_eq!(texts[1], texts[2]);
    serde_json::from_str::<Value>(&texts[0]).unwrap();
}

#[tokio::test]
async fn bad_files_and_ids_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.gguf");
    let text = dir.path().join("notes.gguf");
    std::fs::write(&text, "these are not weights\n").unwrap();
    let cases = [
        (format!("local:{}", missing.display()), "missing.gguf"),
        (format!("local:{}", text.display()), "not a GGUF"),
        (
            "local:no-such-model-anywhere".to_owned(),
            "no-such-model-anywhere",
        ),
        (
            format!("local:{}?ctx=lots", text.display()),
            "`ctx` must be",
        ),
    ];
    for (id, needle) in cases {
        let err = gavel_local::provider(&id.parse().unwrap()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Permanent, "{id}");
        assert!(err.message.contains(needle), "{id}: {}", err.message);
    }
}
