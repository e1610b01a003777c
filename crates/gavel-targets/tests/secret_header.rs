//! Headers expanded from environment variables are sent but never shown.
//!
//! This file holds a single test so it can set an environment variable before any
//! other thread runs.

#![allow(clippy::unwrap_used)]

mod common;

use gavel_targets::TurnRequest;
use serde_json::json;
use wiremock::matchers::{header, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SECRET: &str = "tok-3f9a1c7e5b";

#[test]
fn header_from_env_is_sent_but_absent_from_debug_turns_and_failures() {
    // SAFETY: this is the only test in this binary and it sets the variable before
    // starting the runtime, so no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("GAVEL_TEST_SECRET_TOKEN", SECRET) };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(header("authorization", format!("Bearer {SECRET}").as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"output": "ok"})))
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401).set_body_string("no"))
            .mount(&server)
            .await;

        let spec = json!({
            "type": "http",
            "url": server.uri(),
            "headers": {"Authorization": "Bearer ${GAVEL_TEST_SECRET_TOKEN}"},
        });
        let target = common::target(spec);
        let debug = format!("{target:?}");
        assert!(!debug.contains(SECRET), "{debug}");
        assert!(debug.contains("authorization"), "{debug}");

        let mut session = target.open("s").await.unwrap();
        let turn = session
            .send(&TurnRequest {
                message: "hi",
                ..TurnRequest::new("s", "c")
            })
            .await;
        assert_eq!(turn.output, "ok");
        assert!(!serde_json::to_string(&turn).unwrap().contains(SECRET));

        // A failing target with the same secret under another header: the failure
        // message must not show it either.
        let wrong = json!({
            "type": "http",
            "url": server.uri(),
            "headers": {"X-Key": "${GAVEL_TEST_SECRET_TOKEN}"},
        });
        let mut session = common::target(wrong).open("s").await.unwrap();
        let turn = session
            .send(&TurnRequest {
                message: "hi",
                ..TurnRequest::new("s", "c")
            })
            .await;
        let failure = turn.failure.clone().unwrap();
        assert!(failure.message.contains("HTTP 401"), "{}", failure.message);
        assert!(!serde_json::to_string(&turn).unwrap().contains(SECRET));
    });
}
