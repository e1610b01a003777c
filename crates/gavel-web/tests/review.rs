//! The review queue over a real socket: viewers read it and cannot label;
//! bad label fields are refused by name with what was typed kept; a pair is
//! stored in its true order whatever order it was shown in; two labellers'
//! agreement (Cohen's kappa) through the API; calibrating with no judge
//! configured is refused with the reason; the run page has no label form.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gavel_core::{Execution, RunRecord, RunStatus, Status, Transcript, Turn};
use gavel_store::{Role, SuiteDoc};
use reqwest::StatusCode;
use serde_json::{Value, json};

mod support;

use support::{Browser, Ui};

const RUN: &str = "019a0000-8888-7000-8000-000000000008";

async fn seed(ui: &Ui) {
    let cases: Vec<Value> = (0..4)
        .map(|i| json!({"id": format!("c{i}"), "input": format!("question {i}")}))
        .collect();
    let doc = SuiteDoc::from_value(json!({ "cases": cases })).unwrap();
    ui.store
        .import_suite("support", &doc, "test")
        .await
        .unwrap();
    ui.store
        .create_run(&RunRecord {
            id: RUN.into(),
            suite: "support".into(),
            status: RunStatus::Completed,
            started_at: gavel_core::now_rfc3339(),
            finished_at: Some(gavel_core::now_rfc3339()),
            config: json!({}),
            planned: None,
        })
        .await
        .unwrap();
    for i in 0..4 {
        for target in ["x", "y"] {
            let execution = Execution {
                case_id: format!("c{i}"),
                case_name: format!("Case {i}"),
                target: target.into(),
                repeat_index: 0,
                tags: vec![],
                status: if i % 2 == 0 {
                    Status::Pass
                } else {
                    Status::Fail
                },
                score: None,
                transcript: Transcript {
                    session_id: "s".into(),
                    turns: vec![Turn {
                        input: format!("question {i}"),
                        output: format!("answer {i} from {target}"),
                        ..Turn::default()
                    }],
                },
                verdicts: vec![],
                reason: None,
                started_at: gavel_core::now_rfc3339(),
                duration_ms: 1,
            };
            ui.store.record_execution(RUN, &execution).await.unwrap();
        }
    }
}

impl Ui {
    async fn post_as(
        &self,
        who: &Browser,
        path: &str,
        form: &[(&str, &str)],
    ) -> (StatusCode, String) {
        let mut form = form.to_vec();
        form.push(("_csrf", &who.csrf));
        let r = self
            .client
            .post(format!("{}{path}", self.base))
            .header("cookie", &who.cookie)
            .form(&form)
            .send()
            .await
            .unwrap();
        (r.status(), r.text().await.unwrap())
    }

    async fn json_as(&self, who: &Browser, path: &str) -> (StatusCode, Value) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .header("cookie", &who.cookie)
            .send()
            .await
            .unwrap();
        (r.status(), r.json().await.unwrap_or(Value::Null))
    }
}

fn single(case: &str, target: &str, label: &str, score: &str) -> Vec<(&'static str, String)> {
    vec![
        ("mode", "single".into()),
        ("skip", "0".into()),
        ("case_id", case.into()),
        ("target", target.into()),
        ("repeat_index", "0".into()),
        ("label", label.into()),
        ("score", score.into()),
        ("note", "kept note".into()),
    ]
}

fn pairs<'a>(form: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    form.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[tokio::test]
async fn editors_label_single_and_pairwise_and_viewers_only_read() {
    let ui = support::start(None).await;
    seed(&ui).await;
    let ed = ui.signed_in_as("ed", Role::Editor).await;
    let al = ui.signed_in_as("al", Role::Editor).await;
    let vi = ui.signed_in_as("vi", Role::Viewer).await;
    let queue = format!("/runs/{RUN}/review");

    // A viewer reads the queue, without a control to label with.
    let (status, page) = ui.get_as(&vi.cookie, &queue).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("id=\"viewer-note\""), "{page}");
    assert!(!page.contains("id=\"label-form\""));
    let (status, _) = ui
        .post_as(&vi, &queue, &pairs(&single("c0", "x", "pass", "")))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // Bad fields are named, the typed note kept, nothing stored.
    let (status, page) = ui
        .post_as(&ed, &queue, &pairs(&single("c0", "x", "pass", "lots")))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains("id=\"error-score\""), "{page}");
    assert!(page.contains("`lots` is not a number from 0 to 1"));
    assert!(page.contains("value=\"kept note\""));
    let (status, page) = ui
        .post_as(&ed, &queue, &pairs(&single("c0", "x", "maybe", "")))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains("id=\"error-label\""), "{page}");
    assert!(ui.store.run_labels(RUN).await.unwrap().is_empty());

    // Two labellers on the same four executions: κ 0.5 (po 0.75, pe 0.5).
    let votes = [
        ("ed", ["pass", "pass", "fail", "fail"]),
        ("al", ["pass", "fail", "fail", "fail"]),
    ];
    for (who, labels) in votes {
        let as_who = if who == "ed" { &ed } else { &al };
        for (i, label) in labels.iter().enumerate() {
            let form = single(&format!("c{i}"), "x", label, "0.5");
            let (status, _) = ui.post_as(as_who, &queue, &pairs(&form)).await;
            assert_eq!(status, StatusCode::SEE_OTHER);
        }
    }
    let labels = ui.store.run_labels(RUN).await.unwrap();
    assert_eq!(labels.len(), 8);
    assert!(
        labels
            .iter()
            .any(|l| l.who == "al" && l.note.as_deref() == Some("kept note"))
    );
    let (status, agreement) = ui.json_as(&vi, &format!("/api/runs/{RUN}/agreement")).await;
    assert_eq!(status, StatusCode::OK);
    let single_kind = &agreement["kinds"][0];
    assert_eq!(single_kind["kind"], "single");
    assert_eq!(single_kind["shared"], 4);
    assert!(
        (single_kind["kappa"].as_f64().unwrap() - 0.5).abs() < 1e-12,
        "{agreement}"
    );
    let (_, page) = ui.get_as(&ed.cookie, &queue).await;
    assert!(
        page.contains("Cohen's κ <span class=\"kappa\">0.5</span>"),
        "{page}"
    );

    // Pairwise: the left side, whichever target it shows, maps to its true side.
    let (_, page) = ui
        .get_as(&ed.cookie, &format!("{queue}?mode=pairwise"))
        .await;
    let left =
        &page[page.find("id=\"side-left\"").unwrap()..page.find("id=\"side-right\"").unwrap()];
    let case = left
        .split("answer ")
        .nth(1)
        .unwrap()
        .chars()
        .next()
        .unwrap();
    let left_is_x = left.contains(" from x");
    let form = [
        ("mode", "pairwise"),
        ("skip", "0"),
        ("case_id", &format!("c{case}")),
        ("target", "x"),
        ("repeat_index", "0"),
        ("pair_run", RUN),
        ("pair_target", "y"),
        ("pair_repeat_index", "0"),
        ("choice", "left"),
    ];
    let (status, _) = ui.post_as(&ed, &queue, &form).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let stored = ui.store.run_pair_labels(RUN).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].label, if left_is_x { "A" } else { "B" });
    assert_eq!(stored[0].shown_swapped, !left_is_x);
    let mut bad = form.to_vec();
    bad[8] = ("choice", "up");
    let (status, page) = ui.post_as(&ed, &queue, &bad).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains("id=\"error-choice\""), "{page}");

    // The API states pairs in the true order, checked.
    let url = format!("{}/api/runs/{RUN}/pair-labels", ui.base);
    let post = |body: Value| {
        ui.client
            .post(&url)
            .header("cookie", &al.cookie)
            .header("x-csrf-token", &al.csrf)
            .json(&body)
            .send()
    };
    let body = json!({"case_id": "c1", "target": "x", "repeat_index": 0,
        "pair": {"run_id": RUN, "target": "y", "repeat_index": 0}, "label": "sideways"});
    let r = post(body.clone()).await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(r.text().await.unwrap().contains("is not `A`, `B` or `tie`"));
    let mut good = body;
    good["label"] = json!("tie");
    assert_eq!(post(good).await.unwrap().status(), StatusCode::CREATED);
    let (_, listed) = ui
        .json_as(&vi, &format!("/api/runs/{RUN}/pair-labels"))
        .await;
    assert_eq!(listed.as_array().unwrap().len(), 2);
    let (status, queued) = ui
        .json_as(
            &al,
            &format!("/api/runs/{RUN}/review?mode=pairwise&limit=10"),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        queued["remaining"], 3,
        "al labelled one of four pairs: {queued}"
    );
    let (status, _) = ui
        .json_as(&al, &format!("/api/runs/{RUN}/review?limit=0"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // No judge is configured: calibrating is refused with the reason, on the
    // page and through the API, and nothing is stored.
    let (_, page) = ui.get_as(&ed.cookie, &queue).await;
    assert!(page.contains("Judge <code>none</code>"), "{page}");
    assert!(
        !page.contains("id=\"calibrate\""),
        "no button without a judge"
    );
    let (status, page) = ui
        .post_as(&ed, &format!("{queue}/calibrate"), &[("mode", "single")])
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains("id=\"error-calibrate\""), "{page}");
    assert!(ui.store.calibrations().await.unwrap().is_empty());

    // The run page links to the queue and has no label form.
    let (_, page) = ui.get_as(&ed.cookie, &format!("/runs/{RUN}")).await;
    assert!(page.contains(&format!("href=\"/runs/{RUN}/review\"")));
    assert!(!page.contains("Human label"));
    assert!(!page.contains("/labels\""));
}
