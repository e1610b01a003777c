//! The runner with judges: models resolved per run, budgets, unavailable targets
//! and pairwise and select-best comparisons, over a scripted model.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gavel_core::{Execution, Status, Suite};
use gavel_models::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelId};
use gavel_runner::{
    Baselines, CancellationToken, ExecuteOptions, PlanOptions, PreparedTargets, Recorder,
};
use gavel_targets::{FnReply, FnRequest, FnTarget, Target};

/// A judge that always gives the top score at a fixed price, counting its calls.
#[derive(Debug)]
struct Judge {
    id: ModelId,
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl ChatModel for Judge {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let schema = request
            .schema
            .as_ref()
            .map(|s| s.schema.to_string())
            .unwrap_or_default();
        let text = if schema.contains("winner") {
            r#"{"reasoning": "A is better.", "winner": "A"}"#
        } else if schema.contains("best") {
            r#"{"reasoning": "The first is best.", "best": 1}"#
        } else {
            r#"{"status": "ok", "reasoning": "Meets the criteria.", "score": 1.0}"#
        };
        Ok(ChatResponse {
            text: text.into(),
            cost_usd: Some(0.01),
            ..ChatResponse::default()
        })
    }
    fn id(&self) -> &ModelId {
        &self.id
    }
}

fn judge() -> Arc<Judge> {
    Arc::new(Judge {
        id: "openai:gpt-5-mini".parse().unwrap(),
        calls: AtomicUsize::new(0),
    })
}

fn suite(yaml: &str) -> Suite {
    gavel_core::load::parse_suite_str(yaml, Path::new("t.yaml")).unwrap()
}

fn agent(text: &'static str) -> Arc<dyn Target> {
    Arc::new(FnTarget::new(move |_req: FnRequest| async move {
        FnReply::text(text)
    }))
}

async fn execute(
    s: &Suite,
    targets: PreparedTargets,
    judge: Arc<Judge>,
    max_cost: Option<f64>,
) -> (Vec<Execution>, gavel_runner::RunReport) {
    let plan = gavel_runner::plan(s, &PlanOptions::default()).unwrap();
    let baselines = Baselines::new();
    let models =
        move |_id: Option<&str>| -> Result<Arc<dyn ChatModel>, ModelError> { Ok(judge.clone()) };
    let options = ExecuteOptions {
        concurrency: 1,
        max_cost,
        judges: &models,
        ..ExecuteOptions::new(&s.judge, &baselines)
    };
    let mut out: Vec<Execution> = Vec::new();
    let mut recorders: [&mut dyn Recorder; 1] = [&mut out];
    let report = gavel_runner::execute(
        &plan,
        &targets,
        "run",
        &options,
        &CancellationToken::new(),
        &mut recorders,
    )
    .await
    .unwrap();
    (out, report)
}

#[tokio::test]
async fn judges_run_with_the_resolved_model_and_their_cost_counts() {
    let s = suite(
        "targets:\n  a: {type: command, command: [x]}\ncases:\n  - {id: c, input: hi, criteria: Be nice.}\n",
    );
    let j = judge();
    let targets = PreparedTargets::from_targets(BTreeMap::from([("a".to_owned(), agent("hello"))]));
    let (out, _) = execute(&s, targets, j.clone(), None).await;
    assert_eq!(out[0].status, Status::Pass, "{:?}", out[0].verdicts);
    assert_eq!(out[0].verdicts[0].kind, gavel_core::CheckKind::Judge);
    assert_eq!(out[0].cost_usd(), Some(0.01));
    assert_eq!(j.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_budget_stops_scheduling_and_keeps_what_ran() {
    let cases: String = (0..10)
        .map(|i| format!("  - {{id: c{i}, input: hi, criteria: Be nice.}}\n"))
        .collect();
    let s = suite(&format!(
        "targets:\n  a: {{type: command, command: [x]}}\ncases:\n{cases}"
    ));
    let targets = PreparedTargets::from_targets(BTreeMap::from([("a".to_owned(), agent("hello"))]));
    let (out, report) = execute(&s, targets, judge(), Some(0.03)).await;
    assert!(report.budget_stopped);
    assert!(out.len() >= 3 && out.len() < 10, "{} ran", out.len());
    assert_eq!(report.finished, out.len());
}

#[tokio::test]
async fn an_unavailable_target_is_skipped_with_its_reason() {
    let s = suite(
        "targets:\n  a: {type: command, command: [x]}\ncases:\n  - {id: c, input: hi, checks: [{type: contains, value: x}]}\n",
    );
    let mut targets = PreparedTargets::from_targets(BTreeMap::new());
    targets
        .unavailable
        .insert("a".into(), "OPENAI_API_KEY is not set".into());
    let (out, _) = execute(&s, targets, judge(), None).await;
    assert_eq!(out[0].status, Status::Skipped);
    assert_eq!(
        out[0].reason.as_deref(),
        Some("target `a` is unavailable: OPENAI_API_KEY is not set")
    );
}

#[tokio::test]
async fn pairwise_waits_for_the_other_target_and_the_reference_gets_no_verdict() {
    let s = suite(
        "targets:\n  a: {type: command, command: [x]}\n  b: {type: command, command: [y]}\ncases:\n  - id: c\n    input: hi\n    checks: [{type: pairwise, against: {target: b}, criteria: Friendlier.}]\n",
    );
    let slow_b: Arc<dyn Target> = Arc::new(FnTarget::new(|_req: FnRequest| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        "meh"
    }));
    let targets = PreparedTargets::from_targets(BTreeMap::from([
        ("a".to_owned(), agent("Hello, friend!")),
        ("b".to_owned(), slow_b),
    ]));
    let j = judge();
    let (out, _) = execute(&s, targets, j.clone(), None).await;
    let a = out.iter().find(|e| e.target == "a").unwrap();
    let b = out.iter().find(|e| e.target == "b").unwrap();
    assert_eq!(a.verdicts.len(), 1);
    assert_eq!(a.verdicts[0].kind, gavel_core::CheckKind::Pairwise);
    assert_eq!(
        a.verdicts[0].score,
        Some(0.5),
        "the scripted judge always says A: the orders disagree → tie"
    );
    assert_eq!(j.calls.load(Ordering::SeqCst), 2, "both orders");
    assert!(
        b.verdicts.is_empty(),
        "the reference target is not compared with itself"
    );
}

fn three_targets() -> PreparedTargets {
    PreparedTargets::from_targets(BTreeMap::from([
        ("a".to_owned(), agent("Answer from a")),
        ("b".to_owned(), agent("Answer from b")),
        ("c".to_owned(), agent("Answer from c")),
    ]))
}

#[tokio::test]
async fn select_best_judges_each_repeat_of_the_targets_once() {
    let s = suite(
        "targets:\n  a: {type: command, command: [x]}\n  b: {type: command, command: [y]}\n  c: {type: command, command: [z]}\ncases:\n  - id: c\n    input: hi\n    repeat: 2\n    checks: [{type: select-best, criteria: Friendliest.}]\n",
    );
    let j = judge();
    let (out, _) = execute(&s, three_targets(), j.clone(), None).await;
    assert_eq!(out.len(), 6);
    assert_eq!(j.calls.load(Ordering::SeqCst), 2, "one call per repeat");
    for repeat in 0..2 {
        let group: Vec<&Execution> = out.iter().filter(|e| e.repeat_index == repeat).collect();
        let verdicts: Vec<_> = group.iter().map(|e| &e.verdicts[0]).collect();
        assert!(
            verdicts
                .iter()
                .all(|v| v.kind == gavel_core::CheckKind::SelectBest)
        );
        let winners: Vec<_> = group.iter().filter(|e| e.status == Status::Pass).collect();
        assert_eq!(winners.len(), 1, "{verdicts:?}");
        // This judge always picks the answer shown first: the order decides.
        let order = &verdicts[0].evidence.detail["order"];
        assert_eq!(order[0], winners[0].target.as_str());
        assert_eq!(
            winners[0].verdicts[0]
                .evidence
                .select_best()
                .map(|s| s.position),
            Some(1)
        );
        let cost: f64 = group.iter().filter_map(|e| e.cost_usd()).sum();
        assert!((cost - 0.01).abs() < 1e-12, "the call is counted once");
    }
    let seeds: Vec<_> = out
        .iter()
        .map(|e| e.verdicts[0].evidence.detail["seed"].clone())
        .collect();
    assert_ne!(
        seeds[0], seeds[5],
        "each repeat is shuffled with its own seed"
    );
}

#[tokio::test]
async fn select_best_among_repeats_and_with_one_answer() {
    let s = suite(
        "targets:\n  a: {type: command, command: [x]}\ncases:\n  - id: r\n    input: hi\n    repeat: 3\n    checks: [{type: select-best, among: repeats}]\n  - id: t\n    input: hi\n    checks: [{type: select-best}]\n",
    );
    let targets = PreparedTargets::from_targets(BTreeMap::from([("a".to_owned(), agent("hello"))]));
    let j = judge();
    let (out, _) = execute(&s, targets, j.clone(), None).await;
    let repeats: Vec<&Execution> = out.iter().filter(|e| e.case_id == "r").collect();
    assert_eq!(repeats.len(), 3);
    assert_eq!(
        repeats.iter().filter(|e| e.status == Status::Pass).count(),
        1
    );
    assert_eq!(repeats[0].verdicts[0].evidence.detail["group"], "target a");
    let alone = out.iter().find(|e| e.case_id == "t").unwrap();
    assert_eq!(alone.status, Status::Skipped);
    assert_eq!(
        alone.verdicts[0].reason,
        "select-best needs at least 2 answers to compare; only 1 answered (a)"
    );
    assert_eq!(
        j.calls.load(Ordering::SeqCst),
        1,
        "only the repeats are judged"
    );
}
