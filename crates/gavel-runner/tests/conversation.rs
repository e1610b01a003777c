//! Conversations in the runner: follow-ups (hints, limit, model detector),
//! branches with isolated histories, revival, and the simulated user.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gavel_checks::NoJudgeModels;
use gavel_core::{Case, Status};
use gavel_models::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelId};
use gavel_runner::run_case;
use gavel_targets::{FnReply, FnRequest, FnTarget};

fn case(yaml: &str) -> Case {
    let suite = gavel_core::load::parse_suite_str(yaml, Path::new("t.yaml")).unwrap();
    suite.cases.into_iter().next().unwrap()
}

/// A model answering each call with the next scripted text (the last one repeats),
/// keeping the requests; each call costs $0.001 (100 + 10 tokens).
#[derive(Debug)]
struct Scripted {
    id: ModelId,
    answers: Vec<&'static str>,
    calls: AtomicUsize,
    seen: std::sync::Mutex<Vec<ChatRequest>>,
}

#[async_trait::async_trait]
impl ChatModel for Scripted {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(request.clone());
        let text = self.answers[n.min(self.answers.len() - 1)];
        Ok(ChatResponse {
            text: text.into(),
            usage: gavel_models::TokenUsage {
                input_tokens: 100,
                output_tokens: 10,
            },
            cost_usd: Some(0.001),
            ..ChatResponse::default()
        })
    }
    fn id(&self) -> &ModelId {
        &self.id
    }
}

fn scripted(answers: Vec<&'static str>) -> Arc<Scripted> {
    Arc::new(Scripted {
        id: "openai:gpt-5-mini".parse().unwrap(),
        answers,
        calls: AtomicUsize::new(0),
        seen: std::sync::Mutex::new(Vec::new()),
    })
}

/// Asks "Which city do you mean?" until told a city.
fn asking_agent() -> FnTarget<impl Fn(FnRequest) -> std::future::Ready<FnReply> + Send + Sync> {
    FnTarget::new(|req: FnRequest| {
        let reply = match req.message.as_str() {
            "Paris" | "Lyon" => format!("Sunny in {}.", req.message),
            _ => "Which city do you mean?".to_owned(),
        };
        std::future::ready(FnReply::text(reply))
    })
}

/// No chat models (http targets need none).
struct NoModels;

impl gavel_models::ModelSource for NoModels {
    fn model(&self, _id: &str) -> Result<Arc<dyn ChatModel>, ModelError> {
        Err(gavel_checks::no_judge_model())
    }
}

const SECS: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_clarifying_question_is_answered_from_the_hints() {
    let c = case(
        "cases:\n  - id: c\n    input: Weather?\n    followups: [Paris]\n    checks: [{type: contains, value: Sunny in Paris}]\n",
    );
    let e = run_case(&c, &asking_agent(), SECS, &NoJudgeModels)
        .await
        .unwrap();
    assert_eq!(e.status, Status::Pass, "{:?}", e.verdicts);
    let turns = &e.transcript.turns;
    assert_eq!(turns.len(), 2);
    assert_eq!((turns[0].followup, turns[1].followup), (false, true));
    assert_eq!((turns[1].round, turns[1].input.as_str()), (0, "Paris"));
}

#[tokio::test]
async fn follow_ups_stop_at_the_limit_and_without_an_answer() {
    let c = case(
        "cases:\n  - id: c\n    input: Weather?\n    max_followups: 2\n    followups: [x, y, z]\n",
    );
    let e = run_case(&c, &asking_agent(), SECS, &NoJudgeModels)
        .await
        .unwrap();
    let inputs: Vec<&str> = e
        .transcript
        .turns
        .iter()
        .map(|t| t.input.as_str())
        .collect();
    assert_eq!(inputs, ["Weather?", "x", "y"]);
    // No hint and no model: the question stays unanswered.
    let c = case("cases:\n  - id: c\n    input: Weather?\n");
    let e = run_case(&c, &asking_agent(), SECS, &NoJudgeModels)
        .await
        .unwrap();
    assert_eq!(e.transcript.turns.len(), 1);
    // Turned off.
    let c = case(
        "cases:\n  - id: c\n    input: Weather?\n    max_followups: 0\n    followups: [Paris]\n",
    );
    let e = run_case(&c, &asking_agent(), SECS, &NoJudgeModels)
        .await
        .unwrap();
    assert_eq!(e.transcript.turns.len(), 1);
}

#[tokio::test]
async fn the_model_detector_decides_and_writes_the_reply() {
    let model = scripted(vec![
        r#"{"needs_followup": true, "followup_response": "Lyon"}"#,
    ]);
    let m = model.clone();
    let models =
        move |_id: Option<&str>| -> Result<Arc<dyn ChatModel>, ModelError> { Ok(m.clone()) };
    let c =
        case("cases:\n  - id: c\n    input: Weather?\n    description: The user lives in Lyon.\n");
    let e = run_case(&c, &asking_agent(), SECS, &models).await.unwrap();
    let inputs: Vec<&str> = e
        .transcript
        .turns
        .iter()
        .map(|t| t.input.as_str())
        .collect();
    assert_eq!(inputs, ["Weather?", "Lyon"]);
    // One call: the final answer has no `?`, so no model call is spent on it.
    assert_eq!(model.calls.load(Ordering::SeqCst), 1);
    // The detector's call is booked on the turn it read, and in the case's cost.
    let spent = e.transcript.turns[0].harness_usage.unwrap();
    assert_eq!((spent.input_tokens, spent.output_tokens), (100, 10));
    assert_eq!(e.transcript.turns[1].harness_usage, None);
    assert_eq!(e.cost_usd(), Some(0.001));
    let request = model.seen.lock().unwrap()[0].clone();
    assert_eq!(request.schema.as_ref().unwrap().name, "followup");
    assert!(
        request.messages[0]
            .content
            .contains("The user lives in Lyon.")
    );

    // The model saying "no" wins over the question form.
    let model = scripted(vec![
        r#"{"needs_followup": false, "followup_response": ""}"#,
    ]);
    let models =
        move |_id: Option<&str>| -> Result<Arc<dyn ChatModel>, ModelError> { Ok(model.clone()) };
    let c = case("cases:\n  - id: c\n    input: Weather?\n    followups: [Paris]\n");
    let e = run_case(&c, &asking_agent(), SECS, &models).await.unwrap();
    assert_eq!(e.transcript.turns.len(), 1);
}

#[tokio::test]
async fn an_expected_clarifying_question_is_left_unanswered_and_checked() {
    // A judge model that would answer every question: it is never asked.
    let model = scripted(vec![
        r#"{"needs_followup": true, "followup_response": "Lyon"}"#,
    ]);
    let m = model.clone();
    let models =
        move |_id: Option<&str>| -> Result<Arc<dyn ChatModel>, ModelError> { Ok(m.clone()) };
    let c = case(
        "cases:\n  - id: c\n    input: Weather?\n    expect_clarification: true\n    followups: [Paris]\n",
    );
    let e = run_case(&c, &asking_agent(), SECS, &models).await.unwrap();
    assert_eq!(e.status, Status::Pass, "{:?}", e.verdicts);
    assert_eq!(e.transcript.turns.len(), 1);
    assert_eq!(model.calls.load(Ordering::SeqCst), 0);
    assert_eq!(e.verdicts[0].kind, gavel_core::CheckKind::Clarification);

    // On a round: that round's question stays; the next round goes on.
    let c = case(
        "cases:\n  - id: c\n    rounds:\n      - {input: Weather?, expect_clarification: true}\n      - {input: Paris, checks: [{type: contains, value: Sunny in Paris}]}\n",
    );
    let e = run_case(&c, &asking_agent(), SECS, &models).await.unwrap();
    assert_eq!(e.status, Status::Pass, "{:?}", e.verdicts);
    let inputs: Vec<&str> = e
        .transcript
        .turns
        .iter()
        .map(|t| t.input.as_str())
        .collect();
    assert_eq!(inputs, ["Weather?", "Paris"]);

    // An agent that answers instead of asking fails the round.
    let answering = FnTarget::new(|_req: FnRequest| std::future::ready(FnReply::text("Sunny.")));
    let c = case("cases:\n  - id: c\n    input: Weather?\n    expect_clarification: true\n");
    let e = run_case(&c, &answering, SECS, &NoJudgeModels)
        .await
        .unwrap();
    assert_eq!(e.status, Status::Fail, "{:?}", e.verdicts);
}

#[tokio::test]
async fn branches_see_the_parent_and_themselves_only() {
    // Answers with the user messages it has seen in this conversation.
    let agent = FnTarget::new(|req: FnRequest| async move {
        let mut seen: Vec<String> = req.history.iter().map(|t| t.input.clone()).collect();
        seen.push(req.message.clone());
        FnReply::text(format!("{} @ {}", seen.join(" > "), req.session_id))
    });
    let c = case(
        "cases:\n  - id: c\n    rounds:\n      - input: root\n      - {branch: a, input: alpha}\n      - {branch: a, input: alpha2}\n      - {branch: b, input: beta}\n    checks:\n      - type: branch-isolation\n        markers: {a: alpha, b: beta}\n",
    );
    let e = run_case(&c, &agent, SECS, &NoJudgeModels).await.unwrap();
    assert_eq!(e.status, Status::Pass, "{:?}", e.verdicts);
    let t = &e.transcript.turns;
    let sid = &e.transcript.session_id;
    assert_eq!(t[0].output, format!("root @ {sid}"));
    assert_eq!(t[2].output, format!("root > alpha > alpha2 @ {sid}~a"));
    assert_eq!(t[3].output, format!("root > beta @ {sid}~b"));
    let branches: Vec<Option<&str>> = t.iter().map(|t| t.branch.as_deref()).collect();
    assert_eq!(branches, [None, Some("a"), Some("a"), Some("b")]);
    assert_eq!(t.iter().map(|t| t.round).collect::<Vec<_>>(), [0, 1, 2, 3]);

    // A leaking agent (one shared conversation) fails the isolation check.
    let shared = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let leaky = FnTarget::new(move |req: FnRequest| {
        let shared = Arc::clone(&shared);
        async move {
            let mut all = shared.lock().unwrap();
            all.push(req.message.clone());
            FnReply::text(all.join(" > "))
        }
    });
    let e = run_case(&c, &leaky, SECS, &NoJudgeModels).await.unwrap();
    assert_eq!(e.status, Status::Fail);
    let v = e
        .verdicts
        .iter()
        .find(|v| v.kind == gavel_core::CheckKind::BranchIsolation)
        .unwrap();
    assert_eq!(
        v.reason,
        "branch `b` shows `alpha`, which only branch `a` had (round 4)"
    );
}

#[tokio::test]
async fn http_targets_without_fork_or_restart_say_so() {
    let yaml = "targets:\n  t:\n    type: http\n    url: http://127.0.0.1:9/chat\ncases:\n  - id: c\n    rounds: [{input: a}, {input: b, branch: x}]\n";
    let suite = gavel_core::load::parse_suite_str(yaml, Path::new("t.yaml")).unwrap();
    let target = gavel_targets::build("t", &suite.targets["t"], &NoModels).unwrap();
    // Round 1 cannot connect: the conversation stops before the fork.
    let e = run_case(&suite.cases[0], target.as_ref(), SECS, &NoJudgeModels)
        .await
        .unwrap();
    assert_eq!(e.status, Status::Error);
    let fork = target.fork("p", "c").await.unwrap_err();
    assert_eq!(
        fork.message,
        "target `t`: branching needs `fork` (the endpoint that copies a session) in the http target's config"
    );
    let session = target.open("p").await.unwrap();
    let revived = target.revive(session, "p").await.err().unwrap();
    assert!(
        revived.message.contains("revival needs `restart`"),
        "{}",
        revived.message
    );
}

#[tokio::test]
async fn a_simulated_user_talks_until_the_goal_is_met() {
    let model = scripted(vec![
        r#"{"goal_met": false, "message": "Weather in Paris?"}"#,
        r#"{"goal_met": false, "message": "Paris"}"#,
        r#"{"goal_met": true, "message": ""}"#,
    ]);
    let m = model.clone();
    let models =
        move |_id: Option<&str>| -> Result<Arc<dyn ChatModel>, ModelError> { Ok(m.clone()) };
    let c = case(
        "cases:\n  - id: c\n    simulated_user:\n      persona: Terse traveller\n      goal: Learn the weather in Paris\n      max_turns: 5\n    max_followups: 0\n    checks: [{type: contains, value: Sunny in Paris}]\n",
    );
    let e = run_case(&c, &asking_agent(), SECS, &models).await.unwrap();
    assert_eq!(e.status, Status::Pass, "{:?}", e.verdicts);
    let inputs: Vec<&str> = e
        .transcript
        .turns
        .iter()
        .map(|t| t.input.as_str())
        .collect();
    assert_eq!(inputs, ["Weather in Paris?", "Paris"]);
    assert_eq!(model.calls.load(Ordering::SeqCst), 3);
    // The user model's calls: the first message's on the first turn, each later
    // call on the turn it read.
    let spent: Vec<u64> = e
        .transcript
        .turns
        .iter()
        .map(|t| t.harness_usage.map_or(0, |u| u.input_tokens))
        .collect();
    assert_eq!(spent, [200, 100]);
    assert!((e.cost_usd().unwrap() - 0.003).abs() < 1e-12);

    // The limit holds; without a model the case is skipped, saying why.
    let c = case(
        "cases:\n  - id: c\n    simulated_user: {persona: p, goal: g, max_turns: 1}\n    max_followups: 0\n",
    );
    let model = scripted(vec![r#"{"goal_met": false, "message": "Hi"}"#]);
    let models =
        move |_id: Option<&str>| -> Result<Arc<dyn ChatModel>, ModelError> { Ok(model.clone()) };
    let e = run_case(&c, &asking_agent(), SECS, &models).await.unwrap();
    assert_eq!(e.transcript.turns.len(), 1);
    let e = run_case(&c, &asking_agent(), SECS, &NoJudgeModels)
        .await
        .unwrap();
    assert_eq!(e.status, Status::Skipped);
    assert!(
        e.reason
            .unwrap()
            .starts_with("no model for the simulated user")
    );
}
