//! `select-best` against a scripted judge: pass and fail by pick, error on a
//! broken call or a garbage answer, skip below two answers; the order shown.
#![allow(clippy::unwrap_used)]

use gavel_core::judge::SelectAmong;
use gavel_core::{JudgeSettings, Status};
use gavel_models::{ChatRequest, ErrorKind, ModelError};
use serde_json::json;

use super::*;
use crate::judge::testing::{Models, Scripted, reply};
use crate::runtime::NoJudgeModels;
use crate::testing::{case, reads_back};

fn spec() -> SelectBestSpec {
    crate::compile(
        &case("criteria: Accurate\ninput: q\nchecks: [{type: select-best}]\n"),
        &JudgeSettings::default(),
    )
    .unwrap()
    .select_best()[0]
        .clone()
}

fn input<'a>(group: &'a str, answers: &[(&'a str, Option<&'a str>)]) -> SelectBestInput<'a> {
    SelectBestInput {
        case_id: "c",
        group,
        candidates: answers
            .iter()
            .map(|&(label, output)| Candidate {
                label,
                input: "q",
                output,
            })
            .collect(),
    }
}

/// The answers in the order the prompt shows them.
fn shown(request: &ChatRequest, answers: &[&str]) -> Vec<String> {
    let prompt = &request.messages[0].content;
    let mut found: Vec<(usize, &str)> = answers
        .iter()
        .map(|a| (prompt.find(a).unwrap(), *a))
        .collect();
    found.sort();
    found.into_iter().map(|(_, a)| a.to_owned()).collect()
}

/// A judge that picks the answer containing `GOOD`, by its shown number.
fn fair() -> std::sync::Arc<Scripted> {
    Scripted::with(|r: &ChatRequest| {
        let prompt = &r.messages[0].content;
        let good = prompt.find("GOOD").unwrap();
        let number = prompt[..good].matches("## Answer ").count();
        reply(&format!(
            r#"{{"reasoning":"the GOOD one is accurate","best":{number}}}"#
        ))
    })
}

#[test]
fn compiles_with_criteria_among_and_template() {
    let s = spec();
    assert_eq!(s.criteria.as_deref(), Some("Accurate"));
    assert_eq!(s.among, SelectAmong::Targets);
    assert_eq!(s.name(), "select-best among targets");
    assert_eq!(s.template.kind(), TemplateKind::SelectBest);
    let plan = crate::compile(
        &case("input: q\nchecks: [{type: select-best, among: repeats}]\n"),
        &JudgeSettings::default(),
    )
    .unwrap();
    assert_eq!(plan.select_best()[0].among, SelectAmong::Repeats);
    assert!(plan.is_empty(), "the runner, not the plan, runs it");
}

#[tokio::test]
async fn the_pick_passes_and_the_others_fail() {
    let model = fair();
    let models = Models::new(model.clone());
    let answers = [
        ("a", Some("weak answer")),
        ("b", Some("GOOD answer")),
        ("c", Some("poor answer")),
    ];
    let verdicts = select_best(&spec(), &input("repeat 0", &answers), &models.runtime()).await;
    verdicts.iter().for_each(reads_back);
    let statuses: Vec<_> = verdicts.iter().map(|v| (v.status, v.score)).collect();
    assert_eq!(
        statuses,
        [
            (Status::Fail, Some(0.0)),
            (Status::Pass, Some(1.0)),
            (Status::Fail, Some(0.0))
        ]
    );
    assert!(
        verdicts[1].reason.starts_with("best of 3 answers"),
        "{}",
        verdicts[1].reason
    );
    assert!(
        verdicts[0].reason.contains("the judge chose b"),
        "{}",
        verdicts[0].reason
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "one call for the whole comparison");
    // The evidence records the order shown and where the winner stood.
    let order = shown(&requests[0], &["weak answer", "GOOD answer", "poor answer"]);
    let labels: Vec<&str> = order
        .iter()
        .map(|a| match a.as_str() {
            "weak answer" => "a",
            "GOOD answer" => "b",
            _ => "c",
        })
        .collect();
    assert_eq!(verdicts[1].evidence.to_json()["order"], json!(labels));
    let position = labels.iter().position(|l| *l == "b").unwrap() + 1;
    assert_eq!(verdicts[1].evidence.to_json()["position"], json!(position));
    assert_eq!(
        verdicts[0].evidence.to_json()["chosen_position"],
        json!(position)
    );
    assert_eq!(
        requests[0].schema.as_ref().unwrap().schema["properties"]["best"]["maximum"],
        json!(3)
    );
    // The cost is counted once, on the first candidate.
    let costs: Vec<_> = verdicts.iter().map(|v| v.cost_usd).collect();
    assert_eq!(costs, [Some(0.001), None, None]);
}

#[tokio::test]
async fn the_order_is_seeded_per_group_and_recorded() {
    let model = fair();
    let models = Models::new(model.clone());
    let answers: Vec<(String, String)> = (0..6)
        .map(|i| (format!("t{i}"), format!("answer number {i}")))
        .collect();
    let pairs: Vec<(&str, Option<&str>)> = answers
        .iter()
        .map(|(l, a)| (l.as_str(), Some(a.as_str())))
        .collect();
    let mut pairs = pairs;
    pairs[0].1 = Some("GOOD answer number 0");
    let orders: Vec<_> = ["repeat 0", "repeat 1", "repeat 0"]
        .into_iter()
        .map(|group| input(group, &pairs))
        .collect();
    let mut seen = Vec::new();
    for i in &orders {
        let v = select_best(&spec(), i, &models.runtime()).await;
        seen.push((
            v[0].evidence.to_json()["order"].clone(),
            v[0].evidence.to_json()["seed"].clone(),
        ));
    }
    assert_eq!(seen[0], seen[2], "the same group shows the same order");
    assert_ne!(seen[0].1, seen[1].1, "another repeat has another seed");
    assert_ne!(seen[0].0, seen[1].0, "and (for these seeds) another order");
}

#[tokio::test]
async fn garbage_answers_and_broken_calls_are_errors() {
    let answers = [("a", Some("one")), ("b", Some("two"))];
    let garbage = Scripted::new([
        reply("the first one"),
        reply(r#"{"reasoning":"x","best":3}"#),
        reply(r#"{"reasoning":"x","best":0}"#),
    ]);
    let models = Models::new(garbage);
    let v = select_best(&spec(), &input("repeat 0", &answers), &models.runtime()).await;
    assert!(v.iter().all(|v| v.status == Status::Error), "{v:?}");
    assert!(
        v[0].reason
            .starts_with("the judge gave no usable answer in 3 attempts"),
        "{}",
        v[0].reason
    );
    assert!(
        (v[0].cost_usd.unwrap() - 0.003).abs() < 1e-12,
        "three calls"
    );
    assert_eq!(v[1].cost_usd, None);

    let broken = Scripted::new([Err(ModelError::new(ErrorKind::Permanent, "HTTP 400"))]);
    let models = Models::new(broken);
    let v = select_best(&spec(), &input("repeat 0", &answers), &models.runtime()).await;
    assert!(v.iter().all(|v| v.status == Status::Error));
    assert_eq!(v[1].reason, "judge model call failed: HTTP 400");
}

#[tokio::test]
async fn fewer_than_two_answers_or_no_model_skip() {
    let model = fair();
    let models = Models::new(model.clone());
    let v = select_best(
        &spec(),
        &input("repeat 0", &[("a", Some("GOOD")), ("b", None)]),
        &models.runtime(),
    )
    .await;
    assert_eq!(v[0].status, Status::Skipped);
    assert_eq!(
        v[0].reason,
        "select-best needs at least 2 answers to compare; only 1 answered (a)"
    );
    assert_eq!(v[1].reason, "no answer of this execution to compare");
    assert!(model.requests().is_empty());

    let v = select_best(
        &spec(),
        &input("repeat 0", &[("a", Some("x")), ("b", Some("y"))]),
        &crate::runtime::JudgeRuntime::new(&NoJudgeModels),
    )
    .await;
    assert!(v.iter().all(|v| v.status == Status::Skipped), "{v:?}");
    assert!(v[0].reason.starts_with("no judge model"), "{}", v[0].reason);
}
