#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use gavel_core::Status;
use gavel_models::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelId};

use crate::judge::testing::{Models, Scripted, reply};
use crate::testing::{case, compile, compile_err, transcript, turn};

/// A pointwise answer with `score` and `reasoning`.
pub(super) fn scored(score: f64, reasoning: &str) -> Result<ChatResponse, ModelError> {
    reply(&serde_json::json!({"status": "ok", "reasoning": reasoning, "score": score}).to_string())
}

pub(super) fn prompt(request: &ChatRequest) -> String {
    format!("{:?}", request.messages)
}

const PIPELINE: &str = "input: q\nchecks:\n  - type: procedural\n    stages:\n      - {name: format, check: {type: contains, value: Beach}}\n      - {name: accuracy, critical: true, criteria: Names the right house}\n      - {name: tone, criteria: Is polite}\n";

#[tokio::test]
async fn procedural_stages_pass_context_forward_and_a_critical_failure_stops() {
    let model = Scripted::with(|r| {
        if prompt(r).contains("Names the right house") {
            scored(0.2, "wrong house")
        } else {
            scored(1.0, "polite")
        }
    });
    let models = Models::new(model.clone());
    let plan = compile(&case(PIPELINE)).unwrap();
    let v = plan
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(
        (v.kind.as_str(), v.status),
        ("procedural", Status::Fail),
        "{v:#?}"
    );
    let stages = v.evidence.detail["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2, "{v:#?}");
    assert_eq!(stages[0]["name"], "format");
    assert_eq!(stages[0]["status"], "pass");
    assert_eq!(stages[1]["status"], "fail");
    assert_eq!(v.evidence.to_json()["stopped_at"], "accuracy");
    assert_eq!(v.evidence.to_json()["not_run"], serde_json::json!(["tone"]));
    assert!(
        v.reason.contains("critical stage `accuracy` stopped"),
        "{}",
        v.reason
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "tone never ran");
    assert!(
        prompt(&requests[0]).contains("- format: pass"),
        "the judge sees the earlier stage: {}",
        prompt(&requests[0])
    );

    // A good answer passes every stage; the last judge sees both before it.
    let good = Scripted::with(|_| scored(0.9, "fine"));
    let models = Models::new(good.clone());
    let v = plan
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(v.status, Status::Pass, "{v:#?}");
    assert_eq!(v.evidence.to_json()["stages"].as_array().unwrap().len(), 3);
    assert!(prompt(&good.requests()[1]).contains("- accuracy: pass (score 0.90): fine"));
    assert!((v.score.unwrap() - (1.0 + 0.9 + 0.9) / 3.0).abs() < 1e-9);
}

#[tokio::test]
async fn consensus_rounds_until_the_judges_agree_and_takes_the_median() {
    // The strict judge scores 0 until it sees the others' scores.
    let model = Scripted::with(|r| {
        let p = prompt(r);
        if p.contains("Strictly") && !p.contains("Other judges") {
            scored(0.0, "too vague")
        } else {
            scored(1.0, "names the house")
        }
    });
    let models = Models::new(model.clone());
    let c = case(
        "input: q\nchecks:\n  - type: consensus\n    criteria: Names the house\n    judges: [{}, {criteria: Strictly names the house}, {}]\n    max_rounds: 3\n",
    );
    let v = compile(&c)
        .unwrap()
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(
        (v.kind.as_str(), v.status),
        ("consensus", Status::Pass),
        "{v:#?}"
    );
    let rounds = v.evidence.detail["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{v:#?}");
    assert_eq!(rounds[0]["judges"].as_array().unwrap().len(), 3);
    assert_eq!(rounds[0]["judges"][1]["score"], 0.0);
    let var0 = rounds[0]["variance"].as_f64().unwrap();
    assert!((var0 - 2.0 / 9.0).abs() < 1e-9, "{var0}");
    assert_eq!(rounds[1]["variance"], 0.0);
    assert_eq!(v.evidence.to_json()["converged"], true);
    assert_eq!(v.score, Some(1.0));
    assert!(v.reason.contains("0.2222 → 0.0000"), "{}", v.reason);
    assert_eq!(model.requests().len(), 6, "3 judges × 2 rounds");

    // Judges that never agree stop at max_rounds with the median of the last round.
    let stubborn = Scripted::with(|r| {
        if prompt(r).contains("Strictly") {
            scored(0.0, "no")
        } else {
            scored(1.0, "yes")
        }
    });
    let models = Models::new(stubborn);
    let v = compile(&c)
        .unwrap()
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(v.evidence.to_json()["rounds"].as_array().unwrap().len(), 3);
    assert_eq!(v.evidence.to_json()["converged"], false);
    assert_eq!(v.score, Some(1.0), "median of 1, 0, 1");
}

/// A model that never answers in time.
#[derive(Debug)]
pub(super) struct Slow(pub(super) ModelId);

#[async_trait::async_trait]
impl ChatModel for Slow {
    async fn chat(&self, _request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        tokio::time::sleep(Duration::from_secs(30)).await;
        scored(1.0, "late")
    }

    fn id(&self) -> &ModelId {
        &self.0
    }
}

#[tokio::test]
async fn a_panel_past_its_timeout_is_an_error_that_keeps_the_stages_done() {
    let slow: Arc<dyn ChatModel> = Arc::new(Slow("openai:slow".parse().unwrap()));
    let models =
        move |_: Option<&str>| -> Result<Arc<dyn ChatModel>, ModelError> { Ok(slow.clone()) };
    let c = case(&format!("{PIPELINE}    timeout_ms: 50\n"));
    let v = compile(&c)
        .unwrap()
        .run(
            &transcript(vec![turn(0, "Beach House")]),
            &crate::JudgeRuntime::new(&models),
        )
        .await
        .remove(0);
    assert_eq!(v.status, Status::Error, "{v:#?}");
    assert!(
        v.reason.contains("timed out after 50 ms (1 stages done)"),
        "{}",
        v.reason
    );
    assert_eq!(v.evidence.to_json()["timed_out"], true);
    let stages = v.evidence.detail["stages"].as_array().unwrap();
    assert_eq!(
        (stages.len(), &stages[0]["name"]),
        (1, &serde_json::json!("format"))
    );
}

#[test]
fn panel_errors_name_the_field() {
    let e = compile_err(
        "input: q\nchecks:\n  - type: procedural\n    stages:\n      - {name: a, check: {type: contains, value: x}, criteria: y}\n",
    );
    assert!(
        e.contains("checks[0].stages[0]: stage `a` needs exactly one of"),
        "{e}"
    );
    let e = compile_err(
        "input: q\nchecks:\n  - type: procedural\n    stages:\n      - {name: a, check: {type: regex, pattern: '('}}\n",
    );
    assert!(e.contains("checks[0].stages[0].check.pattern"), "{e}");
    let e =
        compile_err("input: q\nchecks:\n  - type: consensus\n    criteria: c\n    judges: [{}]\n");
    assert!(
        e.contains("checks[0].judges: a consensus panel needs at least two judges"),
        "{e}"
    );
    let e = compile_err(
        "input: q\nchecks:\n  - type: consensus\n    criteria: c\n    judges: [{}, {model: 'nope'}]\n",
    );
    assert!(e.contains("checks[0].judges[1].model"), "{e}");
}
