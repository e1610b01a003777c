//! A provider key goes only to the base URL the operator configured
//! (docs/SECURITY.md): a run started from the web with a judge at another
//! base URL, typed in the start form, sent to the API or stored in a case,
//! sends nothing there. Its own test binary: it sets the key in the process
//! environment before anything else runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use gavel_store::SuiteDoc;
use reqwest::StatusCode;
use serde_json::json;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

mod support;

const KEY: &str = "sk-canary-5f1d9c0e7a2b4d68";

#[tokio::test]
async fn a_provider_key_goes_only_to_the_base_url_the_operator_configured() {
    // SAFETY: the only test of this binary sets the variable before it starts
    // anything that reads the environment.
    unsafe { std::env::set_var("OPENAI_COMPATIBLE_API_KEY", KEY) };
    let foreign = MockServer::start().await;
    let configured = MockServer::start().await;
    for server in [&foreign, &configured] {
        Mock::given(any())
            .respond_with(ResponseTemplate::new(401))
            .mount(server)
            .await;
    }
    let judge = format!("openai-compatible:judge@{}/v1", configured.uri());
    let elsewhere = format!("openai-compatible:any@{}/v1", foreign.uri());
    let ui = support::start_judged(None, support::ECHO_TARGETS, Some(judge.parse().unwrap())).await;
    let csrf = ui.csrf().await;
    let judged = json!({"id": "a", "input": "hi", "criteria": "polite"});
    let doc = SuiteDoc::from_value(json!({ "cases": [judged] })).unwrap();
    ui.store.import_suite("s", &doc, "test").await.unwrap();

    // Typed in the start form: the form again, with why.
    let r = ui
        .client
        .post(format!("{}/runs", ui.base))
        .form(&[
            ("_csrf", csrf.as_str()),
            ("suite", "s"),
            ("judge", elsewhere.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text().await.unwrap().contains("provider credentials"));
    // Sent to the API.
    let r = ui
        .client
        .post(format!("{}/api/runs", ui.base))
        .header("x-csrf-token", &csrf)
        .json(&json!({"suite": "s", "judge": elsewhere}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    // Stored in a case before stored cases were checked.
    let stored = json!({"id": "b", "input": "hi", "checks": [
        {"type": "judge", "criteria": "polite", "model": elsewhere},
    ]});
    let doc = SuiteDoc::from_value(json!({ "cases": [stored] })).unwrap();
    ui.store.import_suite("old", &doc, "test").await.unwrap();
    let r = ui
        .client
        .post(format!("{}/api/runs", ui.base))
        .header("x-csrf-token", &csrf)
        .json(&json!({"suite": "old"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // The configured judge gets the key: the capture would have seen it.
    let r = ui
        .client
        .post(format!("{}/api/runs", ui.base))
        .header("x-csrf-token", &csrf)
        .json(&json!({"suite": "s"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let mut seen = Vec::new();
    for _ in 0..600 {
        seen = configured.received_requests().await.unwrap_or_default();
        if !seen.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let bearer = format!("Bearer {KEY}");
    assert!(
        seen.iter().any(|r| r
            .headers
            .get("authorization")
            .is_some_and(|v| v == bearer.as_str())),
        "the configured judge was called with the key"
    );
    let foreign_seen = foreign.received_requests().await.unwrap_or_default();
    assert!(
        foreign_seen.iter().all(|r| {
            r.headers
                .get("authorization")
                .is_none_or(|v| !v.to_str().unwrap_or_default().contains(&KEY[10..]))
        }),
        "the key reached a base URL nobody configured"
    );
    assert!(foreign_seen.is_empty(), "{} requests", foreign_seen.len());
}
