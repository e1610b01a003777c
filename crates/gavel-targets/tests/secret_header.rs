//! Headers expanded from environment variables are sent but never shown, not even
//! when the agent echoes them back in an answer or an error body.
//!
//! This file holds a single test so it can set an environment variable before any
//! other thread runs.

#![allow(clippy::unwrap_used)]

mod common;

use gavel_targets::TurnRequest;
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SECRET: &str = "tok-3f9a1c7e5b";
const LITERAL: &str = "literal-key-9917";

#[test]
fn header_from_env_is_sent_but_absent_from_debug_turns_and_failures() {
    // SAFETY: this is the only test in this binary and it sets the variable before
    // starting the runtime, so no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("GAVEL_TEST_SECRET_TOKEN", SECRET) };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/"))
            .and(header("authorization", format!("Bearer {SECRET}").as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"output": "ok"})))
            .expect(1)
            .mount(&server)
            .await;
        let echoed = format!("Bearer {SECRET} and {LITERAL}");
        Mock::given(method("POST"))
            .and(path("/echo-ok"))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"output": format!("you sent {echoed}"), "headers": {"authorization": echoed}}),
            ))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/echo-err"))
            .respond_with(
                ResponseTemplate::new(500).set_body_string(format!("<pre>bad: {echoed}</pre>")),
            )
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

        // An agent echoing the headers it got, in an answer and in an error body.
        for (route, failed) in [("echo-ok", false), ("echo-err", true)] {
            let echo = json!({
                "type": "http",
                "url": format!("{}/{route}", server.uri()),
                "headers": {
                    "Authorization": "Bearer ${GAVEL_TEST_SECRET_TOKEN}",
                    "X-Literal": LITERAL,
                    "Content-Type": "application/json",
                },
            });
            let mut session = common::target(echo).open("s").await.unwrap();
            let turn = session
                .send(&TurnRequest {
                    message: "hi",
                    ..TurnRequest::new("s", "c")
                })
                .await;
            assert_eq!(turn.failure.is_some(), failed, "{turn:?}");
            let text = serde_json::to_string(&turn).unwrap();
            assert!(!text.contains(SECRET) && !text.contains(LITERAL), "{text}");
            assert!(text.contains("[redacted]"), "{text}");
        }
        // Plain protocol header values are not secrets.
        assert_eq!(
            gavel_core::secrets::redact("application/json"),
            "application/json"
        );
    });
}
