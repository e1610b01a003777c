//! Metric checks against a scripted judge: pass, fail, error and skip for each.
#![allow(clippy::unwrap_used)]

use gavel_core::{JudgeSettings, Status, Verdict};
use gavel_models::{ErrorKind, ModelError};
use serde_json::json;

use crate::judge::testing::{Models, Scripted, reply};
use crate::runtime::{JudgeRuntime, NoJudgeModels};
use crate::testing::{case, reads_back, transcript, turn};

/// The only verdict of a case with one metric check, the judge answering `answers`.
async fn graded(body: &str, output: &str, answers: &[&str]) -> Verdict {
    let plan = crate::compile(&case(body), &JudgeSettings::default()).unwrap();
    assert_eq!(plan.len(), 1, "{plan:?}");
    let model = Scripted::new(answers.iter().map(|a| reply(a)));
    let models = Models::new(model);
    let v = plan
        .run(&transcript(vec![turn(0, output)]), &models.runtime())
        .await
        .remove(0);
    reads_back(&v);
    v
}

/// The verdict with no judge model at all.
async fn unjudged(body: &str) -> Verdict {
    let plan = crate::compile(&case(body), &JudgeSettings::default()).unwrap();
    plan.run(
        &transcript(vec![turn(0, "x")]),
        &JudgeRuntime::new(&NoJudgeModels),
    )
    .await
    .remove(0)
}

/// The verdict when the judge model breaks.
async fn broken(body: &str) -> Verdict {
    let plan = crate::compile(&case(body), &JudgeSettings::default()).unwrap();
    let model = Scripted::new([Err(ModelError::new(ErrorKind::Permanent, "HTTP 400"))]);
    let models = Models::new(model);
    plan.run(&transcript(vec![turn(0, "x")]), &models.runtime())
        .await
        .remove(0)
}

pub(super) fn compile_err(body: &str) -> String {
    match crate::compile(&case(body), &JudgeSettings::default()) {
        Ok(plan) => panic!("expected a compile error, got {plan:?}"),
        Err(e) => e.to_string(),
    }
}

/// Skipped without a model, an error when the model breaks or the judge flags the output.
pub(super) async fn skips_and_errors(body: &str, flagged: &[&str]) {
    let v = unjudged(body).await;
    assert_eq!(v.status, Status::Skipped, "{}", v.reason);
    assert!(v.reason.starts_with("no judge model"), "{}", v.reason);
    let v = broken(body).await;
    assert_eq!(v.status, Status::Error, "{}", v.reason);
    assert_eq!(v.reason, "judge model call failed: HTTP 400");
    let v = graded(body, "HTTP 502 Bad Gateway", flagged).await;
    assert_eq!(v.status, Status::Error, "{}", v.reason);
    assert!(
        v.reason
            .starts_with("judge flagged the output as an infrastructure failure"),
        "{}",
        v.reason
    );
}

const STEPS: &str =
    r#"{"steps": ["Check the answer names a listing", "Check the price is given"]}"#;

#[tokio::test]
async fn g_eval_generates_steps_then_scores() {
    let body = "input: Cheapest listing?\ncriteria: Names the cheapest listing and its price\nchecks: [{type: g-eval}]\n";
    let v = graded(
        body,
        "The Cabin, $90",
        &[
            STEPS,
            r#"{"status":"ok","reasoning":"names both","score":5}"#,
        ],
    )
    .await;
    assert_eq!(
        (v.status, v.kind.as_str()),
        (Status::Pass, "g-eval"),
        "{}",
        v.reason
    );
    assert!(
        v.check.starts_with("g-eval \"Names the cheapest listing"),
        "{}",
        v.check
    );
    assert_eq!(v.score, Some(1.0));
    assert_eq!(v.threshold, Some(0.5));
    assert_eq!(
        v.evidence.to_json()["evaluation_steps"][1],
        "Check the price is given"
    );
    assert_eq!(v.evidence.to_json()["score_source"], "sampled");
    assert!(v.reason.starts_with("5/5 (sampled score"), "{}", v.reason);
    // Two calls: the steps, then the score.
    assert_eq!(v.cost_usd, Some(0.002));

    let v = graded(
        body,
        "Something",
        &[STEPS, r#"{"status":"ok","reasoning":"no price","score":2}"#],
    )
    .await;
    assert_eq!((v.status, v.score), (Status::Fail, Some(0.25)));

    // The steps are shown to the scoring call.
    let plan = crate::compile(&case(body), &JudgeSettings::default()).unwrap();
    let model = Scripted::new([
        reply(STEPS),
        reply(r#"{"status":"ok","reasoning":"r","score":4}"#),
    ]);
    let models = Models::new(model.clone());
    plan.run(&transcript(vec![turn(0, "x")]), &models.runtime())
        .await;
    let second = &model.requests()[1].messages[0].content;
    assert!(second.contains("2. Check the price is given"), "{second}");

    skips_and_errors(
        body,
        &[
            STEPS,
            r#"{"status":"[TRANSIENT]","reasoning":"gateway page","score":null}"#,
        ],
    )
    .await;
    // A broken steps call is an error saying so.
    let v = graded(body, "x", &["not json", "still not", "nope"]).await;
    assert_eq!(v.status, Status::Error);
    assert_eq!(v.evidence.to_json()["stage"], "evaluation steps");
}

#[tokio::test]
async fn g_eval_weighs_the_score_by_its_token_probabilities_when_given() {
    use gavel_models::{TokenLogprob, TopLogprob};
    let body = "input: q
criteria: Names the cheapest listing
checks: [{type: g-eval}]
";
    let text = r#"{"status":"ok","reasoning":"close","score":4}"#;
    let token = |t: &str, top: &[(&str, f64)]| TokenLogprob {
        token: t.to_owned(),
        logprob: 0.0,
        top: top
            .iter()
            .map(|(t, p)| TopLogprob {
                token: (*t).to_owned(),
                logprob: p.ln(),
            })
            .collect(),
    };
    let (before, after) = text.split_at(text.rfind('4').unwrap());
    let mut scored = reply(text).unwrap();
    scored.logprobs = vec![
        token(before, &[]),
        token("4", &[("4", 0.5), ("5", 0.25), ("3", 0.25)]),
        token(&after[1..], &[]),
    ];
    let plan = crate::compile(&case(body), &JudgeSettings::default()).unwrap();
    let model = Scripted::new([reply(STEPS), Ok(scored)]);
    let models = Models::new(model.clone());
    let v = plan
        .run(&transcript(vec![turn(0, "x")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(v.status, Status::Pass, "{}", v.reason);
    // 0.5·4 + 0.25·5 + 0.25·3 = 4 on 1-5 → 0.75.
    assert!((v.score.unwrap() - 0.75).abs() < 1e-9, "{:?}", v.score);
    assert_eq!(v.evidence.to_json()["score_source"], "logprobs");
    let p5 = v.evidence.to_json()["score_probabilities"]["5"]
        .as_f64()
        .unwrap();
    assert!((p5 - 0.25).abs() < 1e-9, "{p5}");
    assert!(
        v.reason
            .starts_with("4.00/5, weighted by the score tokens' probabilities; sampled 4"),
        "{}",
        v.reason
    );
    // The scoring call asked for them; the steps call did not.
    let requests = model.requests();
    assert_eq!(
        (requests[0].top_logprobs, requests[1].top_logprobs),
        (None, Some(5))
    );
}

#[tokio::test]
async fn factuality_passes_by_category() {
    let body = "input: Capital of France?\nexpected_output: Paris\nchecks: [{type: factuality}]\n";
    let v = graded(
        body,
        "It is Paris.",
        &[r#"{"status":"ok","reasoning":"same","category":"C"}"#],
    )
    .await;
    assert_eq!(
        (v.status, v.score),
        (Status::Pass, Some(1.0)),
        "{}",
        v.reason
    );
    assert!(
        v.reason.starts_with("category C, the same details"),
        "{}",
        v.reason
    );
    let v = graded(
        body,
        "Lyon",
        &[r#"{"status":"ok","reasoning":"differs","category":"D"}"#],
    )
    .await;
    assert_eq!((v.status, v.score), (Status::Fail, Some(0.0)));
    let strict =
        "input: q\nexpected_output: Paris\nchecks: [{type: factuality, pass_categories: [C]}]\n";
    let v = graded(
        strict,
        "Paris, in France",
        &[r#"{"status":"ok","reasoning":"more","category":"B"}"#],
    )
    .await;
    assert_eq!(v.status, Status::Fail);
    skips_and_errors(
        body,
        &[r#"{"status":"[TRANSIENT]","reasoning":"empty","category":null}"#],
    )
    .await;

    let e = compile_err("input: q\nchecks: [{type: factuality}]\n");
    assert!(
        e.contains("factuality needs a `reference`, or an `expected_output`"),
        "{e}"
    );
    let given = "input: q\nchecks: [{type: factuality, reference: Paris}]\n";
    let v = graded(
        given,
        "Paris",
        &[r#"{"status":"ok","reasoning":"same","category":"C"}"#],
    )
    .await;
    assert_eq!(v.status, Status::Pass);
    let e = compile_err(
        "input: q\nexpected_output: a\nchecks: [{type: factuality, pass_categories: [F]}]\n",
    );
    assert!(
        e.contains("checks[0].pass_categories: give one or more of A, B, C, D, E"),
        "{e}"
    );
}

#[tokio::test]
async fn closed_qa_is_yes_or_no() {
    let body = "input: Tell me a joke\nchecks: [{type: closed-qa, criteria: Is it funny?}]\n";
    let v = graded(
        body,
        "pun",
        &[r#"{"status":"ok","reasoning":"it is","meets":"Y"}"#],
    )
    .await;
    assert_eq!((v.status, v.kind.as_str()), (Status::Pass, "closed-qa"));
    let v = graded(
        body,
        "no",
        &[r#"{"status":"ok","reasoning":"it is not","meets":"N"}"#],
    )
    .await;
    assert_eq!(v.status, Status::Fail);
    assert_eq!(v.reason, "does not meet the criterion: it is not");
    skips_and_errors(
        body,
        &[r#"{"status":"[TRANSIENT]","reasoning":"timeout","meets":null}"#],
    )
    .await;
    let e = compile_err("input: q\nchecks: [{type: closed-qa}]\n");
    assert!(e.contains("closed-qa needs `criteria`"), "{e}");
}

pub(super) fn items(verdicts: &[(&str, &str)]) -> String {
    let items: Vec<_> = verdicts
        .iter()
        .map(|(text, v)| json!({"text": text, "reason": "because", "verdict": v}))
        .collect();
    json!({"status": "ok", "items": items}).to_string()
}

pub(super) const FLAGGED_ITEMS: &str = r#"{"status":"[TRANSIENT]","items":[]}"#;

#[tokio::test]
async fn answer_relevance_counts_relevant_statements() {
    let body = "input: Cheapest listing?\nchecks: [{type: answer-relevance, threshold: 0.6}]\n";
    let v = graded(
        body,
        "x",
        &[&items(&[
            ("The Cabin", "yes"),
            ("$90", "yes"),
            ("Weather is nice", "no"),
        ])],
    )
    .await;
    assert_eq!(
        (v.status, v.kind.as_str()),
        (Status::Pass, "answer-relevance"),
        "{}",
        v.reason
    );
    assert!((v.score.unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert!(
        v.reason
            .starts_with("2 of 3 statements relevant to the question; not: \"Weather is nice\""),
        "{}",
        v.reason
    );
    assert_eq!(v.evidence.to_json()["items"][2]["verdict"], "no");
    let v = graded(body, "x", &[&items(&[("a", "yes"), ("b", "no")])]).await;
    assert_eq!(v.status, Status::Fail);
    skips_and_errors(body, &[FLAGGED_ITEMS]).await;
}

const RAG: &str = "input: When was the Cabin built?\nexpected_output: The Cabin was built in 1920 by the Smiths.\nretrieved_context: ['The Cabin dates from 1920.', 'Parking is free.']\n";

#[tokio::test]
async fn context_recall_attributes_reference_claims() {
    let body = format!("{RAG}checks: [{{type: context-recall}}]\n");
    let v = graded(
        &body,
        "x",
        &[&items(&[
            ("built in 1920", "yes"),
            ("by the Smiths", "yes"),
        ])],
    )
    .await;
    assert_eq!(
        (v.status, v.score),
        (Status::Pass, Some(1.0)),
        "{}",
        v.reason
    );
    let v = graded(
        &body,
        "x",
        &[&items(&[("built in 1920", "no"), ("by the Smiths", "no")])],
    )
    .await;
    assert_eq!((v.status, v.score), (Status::Fail, Some(0.0)));
    skips_and_errors(&body, &[FLAGGED_ITEMS]).await;
    // The retrieved chunks are fenced and numbered for the judge.
    let plan = crate::compile(&case(&body), &JudgeSettings::default()).unwrap();
    let model = Scripted::new([reply(&items(&[("a", "yes")]))]);
    let models = Models::new(model.clone());
    plan.run(&transcript(vec![turn(0, "x")]), &models.runtime())
        .await;
    let prompt = &model.requests()[0].messages[0].content;
    assert!(
        prompt.contains("Chunk 2:\n<<<retrieved_context"),
        "{prompt}"
    );
    assert!(prompt.contains("Parking is free."), "{prompt}");
}

#[tokio::test]
async fn context_relevance_rules_on_every_chunk() {
    let body = format!("{RAG}checks: [{{type: context-precision}}]\n");
    let v = graded(&body, "x", &[&items(&[("1", "yes"), ("2", "no")])]).await;
    assert_eq!(
        (v.status, v.kind.as_str(), v.score),
        (Status::Pass, "context-relevance", Some(0.5)),
        "{}",
        v.reason
    );
    let strict = format!("{RAG}checks: [{{type: context-relevance, threshold: 0.9}}]\n");
    let v = graded(&strict, "x", &[&items(&[("1", "yes"), ("2", "no")])]).await;
    assert_eq!(v.status, Status::Fail);
    // One item per chunk, or the answer is asked again and then an error.
    let one = items(&[("1", "yes")]);
    let v = graded(&body, "x", &[&one, &one, &one]).await;
    assert_eq!(v.status, Status::Error);
    assert!(
        v.reason.contains("it rules on 1 chunks; there are 2"),
        "{}",
        v.reason
    );
    skips_and_errors(&body, &[FLAGGED_ITEMS]).await;
}

#[tokio::test]
async fn faithfulness_checks_each_claim_of_the_answer() {
    let body = format!("{RAG}checks: [{{type: faithfulness}}]\n");
    let v = graded(
        &body,
        "Built in 1920; it has a pool.",
        &[&items(&[("built in 1920", "yes"), ("has a pool", "no")])],
    )
    .await;
    assert_eq!(
        (v.status, v.kind.as_str(), v.score),
        (Status::Pass, "context-faithfulness", Some(0.5)),
        "{}",
        v.reason
    );
    assert!(
        v.reason
            .contains("1 of 2 claims supported by the retrieved context; not: \"has a pool\""),
        "{}",
        v.reason
    );
    let v = graded(&body, "x", &[&items(&[("has a pool", "no")])]).await;
    assert_eq!(v.status, Status::Fail);
    skips_and_errors(&body, &[FLAGGED_ITEMS]).await;

    let e = compile_err("input: q\nchecks: [{type: context-faithfulness}]\n");
    assert!(
        e.contains("retrieved_context: context-faithfulness: give the case's `retrieved_context`"),
        "{e}"
    );
    let e = compile_err("input: q\nretrieved_context: [1]\nchecks: [{type: faithfulness}]\n");
    assert!(e.contains("item 0 is a number, not a text"), "{e}");
}

#[tokio::test]
async fn summarization_takes_the_lower_of_alignment_and_coverage() {
    let body = "input: A long article about cabins.\nchecks: [{type: summarization}]\n";
    let answer = |claims: &[(&str, &str)], points: &[(&str, &str)]| {
        let list = |l: &[(&str, &str)]| -> Vec<serde_json::Value> {
            l.iter()
                .map(|(t, v)| json!({"text": t, "reason": "r", "verdict": v}))
                .collect()
        };
        json!({"status": "ok", "claims": list(claims), "key_points": list(points)}).to_string()
    };
    let v = graded(
        body,
        "x",
        &[&answer(&[("a", "yes")], &[("p", "yes"), ("q", "yes")])],
    )
    .await;
    assert_eq!(
        (v.status, v.score),
        (Status::Pass, Some(1.0)),
        "{}",
        v.reason
    );
    let v = graded(
        body,
        "x",
        &[&answer(
            &[("a", "yes")],
            &[("p", "yes"), ("q", "no"), ("r", "no")],
        )],
    )
    .await;
    assert_eq!(v.status, Status::Fail);
    assert!(
        v.reason
            .starts_with("1 of 3 key points of the source covered"),
        "{}",
        v.reason
    );
    assert_eq!(v.evidence.to_json()["claims_score"], 1.0);
    skips_and_errors(
        body,
        &[r#"{"status":"[TRANSIENT]","claims":[],"key_points":[]}"#],
    )
    .await;
}

#[tokio::test]
async fn metric_templates_are_overridable_and_thresholds_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fact.j2");
    std::fs::write(&path, "{% block system %}S{% endblock %}{% block user %}Q: {{ input }} R: {{ reference }} A: {{ output }}{% endblock %}").unwrap();
    let mut settings = JudgeSettings::default();
    settings
        .templates
        .insert("factuality".into(), path.display().to_string());
    let plan = crate::compile(
        &case("input: q\nexpected_output: Paris\nchecks: [{type: factuality}]\n"),
        &settings,
    )
    .unwrap();
    let model = Scripted::new([reply(r#"{"status":"ok","reasoning":"r","category":"A"}"#)]);
    let models = Models::new(model.clone());
    let v = plan
        .run(&transcript(vec![turn(0, "Paris")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(v.status, Status::Pass);
    assert_eq!(v.evidence.to_json()["template"], path.display().to_string());
    assert!(model.requests()[0].messages[0].content.starts_with("Q: "));

    let e = compile_err("input: q\nchecks: [{type: answer-relevance, threshold: 2}]\n");
    assert!(
        e.contains("checks[0].threshold: threshold 2 is outside the metric's 0-1 score"),
        "{e}"
    );
    let e = compile_err("input: q\nchecks: [{type: answer-relevance, pass_categories: [A]}]\n");
    assert!(e.contains("only factuality has categories"), "{e}");
}

/// An answer of empty lists (three times: an unusable answer is asked again).
async fn on_nothing(body: &str, empty: &str) -> Verdict {
    graded(body, "x", &[empty, empty, empty]).await
}

#[tokio::test]
async fn an_empty_claim_list_is_an_error_not_a_pass() {
    let empty = r#"{"status":"ok","items":[]}"#;
    let cases = [
        (
            "input: q\nchecks: [{type: answer-relevance}]\n".to_owned(),
            "it lists no statements",
        ),
        (
            format!("{RAG}checks: [{{type: context-recall}}]\n"),
            "it lists no reference claims",
        ),
        (
            format!("{RAG}checks: [{{type: faithfulness}}]\n"),
            "it lists no claims",
        ),
    ];
    for (body, reason) in &cases {
        let v = on_nothing(body, empty).await;
        assert_eq!(
            (v.status, v.score),
            (Status::Error, None),
            "{body}: {}",
            v.reason
        );
        assert!(v.reason.contains(reason), "{body}: {}", v.reason);
    }
    let body = "input: A long article.\nchecks: [{type: summarization}]\n";
    let no_claims =
        r#"{"status":"ok","claims":[],"key_points":[{"text":"p","reason":"r","verdict":"yes"}]}"#;
    let v = on_nothing(body, no_claims).await;
    assert_eq!(v.status, Status::Error, "{}", v.reason);
    assert!(
        v.reason.contains("it lists no claims of the summary"),
        "{}",
        v.reason
    );
    let no_points =
        r#"{"status":"ok","claims":[{"text":"c","reason":"r","verdict":"yes"}],"key_points":[]}"#;
    let v = on_nothing(body, no_points).await;
    assert_eq!(v.status, Status::Error, "{}", v.reason);
    assert!(v.reason.contains("it lists no key points"), "{}", v.reason);
    // One listed item is graded as usual.
    let v = graded(body, "x", &[r#"{"status":"ok","claims":[{"text":"c","reason":"r","verdict":"yes"}],"key_points":[{"text":"p","reason":"r","verdict":"yes"}]}"#]).await;
    assert_eq!(v.status, Status::Pass, "{}", v.reason);
}
