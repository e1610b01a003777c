//! Seed 003's conversation metrics against a scripted judge: pass, fail, error
//! and skip for each, over multi-turn, multi-agent transcripts.
#![allow(clippy::unwrap_used)]

use gavel_core::{JudgeSettings, Status, Turn, Verdict};

use super::tests::{FLAGGED_ITEMS, compile_err, items, skips_and_errors};
use crate::judge::testing::{Models, Scripted, reply};
use crate::testing::{case, transcript, turn};

/// Two rounds: the triage agent asks, the billing agent refunds.
fn conversation() -> Vec<Turn> {
    let mut first = turn(0, "Which order?");
    first.input = "I want a refund.".into();
    first.agent = Some("triage".into());
    let mut second = turn(1, "Order A1 is refunded.");
    second.input = "Order A1.".into();
    second.agent = Some("billing".into());
    vec![first, second]
}

const ROUNDS: &str = "rounds: [{input: I want a refund.}, {input: Order A1.}]\n";

/// The only verdict of `check` on the two-round conversation, and the prompt.
async fn judged(check: &str, answers: &[&str]) -> (Verdict, String) {
    let body = format!("{ROUNDS}checks: [{check}]\n");
    let plan = crate::compile(&case(&body), &JudgeSettings::default()).unwrap();
    assert_eq!(plan.len(), 1, "{plan:?}");
    let model = Scripted::new(answers.iter().map(|a| reply(a)));
    let models = Models::new(model.clone());
    let v = plan
        .run(&transcript(conversation()), &models.runtime())
        .await
        .remove(0);
    let prompt = model
        .requests()
        .first()
        .map(|r| r.messages[0].content.clone())
        .unwrap_or_default();
    (v, prompt)
}

#[tokio::test]
async fn task_completion_scores_the_conversation_and_its_tools() {
    let check = "{type: task-completion, criteria: Refund the order}";
    let (v, prompt) = judged(
        check,
        &[r#"{"status":"ok","reasoning":"refunded","score":5}"#],
    )
    .await;
    assert_eq!(
        (v.status, v.score, v.kind.as_str()),
        (Status::Pass, Some(1.0), "task-completion"),
        "{}",
        v.reason
    );
    assert_eq!(v.check, "task-completion \"Refund the order\"");
    assert_eq!(v.reason, "5/5: refunded");
    assert!(prompt.contains("### Turn 2"), "{prompt}");
    assert!(prompt.contains("The agent (billing):"), "{prompt}");
    let (v, _) = judged(
        check,
        &[r#"{"status":"ok","reasoning":"asked only","score":2}"#],
    )
    .await;
    assert_eq!((v.status, v.score), (Status::Fail, Some(0.25)));
    skips_and_errors(
        "input: q\nchecks: [{type: task-completion}]\n",
        &[r#"{"status":"[TRANSIENT]","reasoning":"502","score":null}"#],
    )
    .await;
}

#[tokio::test]
async fn conversation_completeness_counts_satisfied_intentions() {
    let check = "{type: conversation-completeness}";
    let (v, _) = judged(check, &[&items(&[("get a refund", "yes")])]).await;
    assert_eq!(
        (v.status, v.score),
        (Status::Pass, Some(1.0)),
        "{}",
        v.reason
    );
    let (v, _) = judged(
        check,
        &[&items(&[("get a refund", "yes"), ("get a receipt", "no")])],
    )
    .await;
    assert_eq!(
        (v.status, v.score),
        (Status::Pass, Some(0.5)),
        "0.5 reaches 0.5"
    );
    assert!(
        v.reason
            .starts_with("1 of 2 user intentions satisfied; not: \"get a receipt\""),
        "{}",
        v.reason
    );
    let (v, _) = judged(
        "{type: conversation-completeness, threshold: 0.8}",
        &[&items(&[("get a refund", "yes"), ("get a receipt", "no")])],
    )
    .await;
    assert_eq!(v.status, Status::Fail);
    skips_and_errors(
        "input: q\nchecks: [{type: conversation-completeness}]\n",
        &[FLAGGED_ITEMS],
    )
    .await;
}

#[tokio::test]
async fn turn_relevancy_and_context_retention_rule_on_every_turn() {
    for kind in ["turn-relevancy", "context-retention"] {
        let check = format!("{{type: {kind}}}");
        let (v, _) = judged(&check, &[&items(&[("1", "yes"), ("2", "yes")])]).await;
        assert_eq!(
            (v.status, v.score),
            (Status::Pass, Some(1.0)),
            "{kind}: {}",
            v.reason
        );
        let strict = format!("{{type: {kind}, threshold: 0.9}}");
        let (v, _) = judged(&strict, &[&items(&[("1", "yes"), ("2", "no")])]).await;
        assert_eq!((v.status, v.score), (Status::Fail, Some(0.5)), "{kind}");
        assert!(
            v.reason.contains("1 of 2 agent answers"),
            "{kind}: {}",
            v.reason
        );
        // One item per turn, or the answer is asked again and then an error.
        let one = items(&[("1", "yes")]);
        let (v, _) = judged(&check, &[&one, &one, &one]).await;
        assert_eq!(v.status, Status::Error, "{kind}");
        assert!(
            v.reason.contains("it rules on 1 turns; there are 2"),
            "{kind}: {}",
            v.reason
        );
        skips_and_errors(&format!("input: q\nchecks: [{check}]\n"), &[FLAGGED_ITEMS]).await;
    }
}

#[tokio::test]
async fn role_adherence_shows_each_agents_role() {
    let check = "{type: role-adherence, roles: {triage: Finds out what the user needs and hands over, billing: Handles refunds}}";
    let (v, prompt) = judged(check, &[&items(&[("1", "yes"), ("2", "yes")])]).await;
    assert_eq!(
        (v.status, v.score),
        (Status::Pass, Some(1.0)),
        "{}",
        v.reason
    );
    assert!(prompt.contains("- billing: Handles refunds"), "{prompt}");
    assert!(prompt.contains("The agent (triage):"), "{prompt}");
    let (v, _) = judged(check, &[&items(&[("1", "no"), ("2", "no")])]).await;
    assert_eq!((v.status, v.score), (Status::Fail, Some(0.0)));
    let (v, _) = judged(check, &[FLAGGED_ITEMS]).await;
    assert_eq!(v.status, Status::Error, "{}", v.reason);
    let e = compile_err("input: q\nchecks: [{type: role-adherence}]\n");
    assert!(e.contains("role-adherence needs `roles`"), "{e}");
    let e = compile_err("input: q\nchecks: [{type: turn-relevancy, roles: {a: b}}]\n");
    assert!(
        e.contains("checks[0].roles: only role-adherence has roles"),
        "{e}"
    );
}

#[tokio::test]
async fn role_adherence_skips_a_conversation_that_names_no_agent() {
    let body = "input: q\nchecks: [{type: role-adherence, roles: {triage: Asks}}]\n";
    let plan = crate::compile(&case(body), &JudgeSettings::default()).unwrap();
    let model = Scripted::new([reply(&items(&[("1", "yes")]))]);
    let models = Models::new(model.clone());
    let v = plan
        .run(&transcript(vec![turn(0, "x")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!((v.status, v.score), (Status::Skipped, None), "{}", v.reason);
    assert!(
        v.reason
            .starts_with("the target named no agent on any turn"),
        "{}",
        v.reason
    );
    assert!(model.requests().is_empty(), "the judge was not asked");
}
