//! The http target against a local mock server.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{build_error, target};
use gavel_core::{ToolCall, Turn};
use gavel_targets::TurnRequest;
use serde_json::{Value, json};
use wiremock::matchers::{body_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn send(spec: Value, message: &str) -> Turn {
    let target = target(spec);
    let mut session = target.open("s-1").await.unwrap();
    let turn = session
        .send(&TurnRequest {
            message,
            ..TurnRequest::new("s-1", "case-1")
        })
        .await;
    session.close().await;
    turn
}

async fn answering(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn body_template_gets_context_history_and_ids_and_pointers_read_the_answer() {
    let server = MockServer::start().await;
    let expected_body = json!({
        "sid": "s-1",
        "input": {"text": "What now?", "ctx": {"user": "Ana", "plan": 2}},
        "hist": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello \"Ana\""},
        ],
        "meta": "case-1/2 after 2 messages",
    });
    let answer = json!({
        "data": {
            "answer": "Done",
            "calls": [{"name": "search", "arguments": {"q": "x"}, "result": [1, 2]}],
        },
    });
    Mock::given(method("PUT"))
        .and(path("/chat"))
        .and(body_json(&expected_body))
        .respond_with(ResponseTemplate::new(200).set_body_json(&answer))
        .expect(1)
        .mount(&server)
        .await;
    let target = target(json!({
        "type": "http",
        "url": format!("{}/chat", server.uri()),
        "method": "put",
        "body": {
            "sid": "{{ session_id }}",
            "input": {"text": "{{ message }}", "ctx": "{{ context }}"},
            "hist": "{{ history }}",
            "meta": "{{ case_id }}/{{ round }} after {{ history | length }} messages",
        },
        "response": {"output": "/data/answer", "tool_calls": "/data/calls"},
    }));
    assert_eq!(target.kind(), "http");
    let context = json!({"user": "Ana", "plan": 2});
    let history = [Turn {
        input: "Hi".into(),
        output: "Hello \"Ana\"".into(),
        ..Turn::default()
    }];
    let mut session = target.open("s-1").await.unwrap();
    let turn = session
        .send(&TurnRequest {
            round: 2,
            message: "What now?",
            context: Some(&context),
            history: &history,
            ..TurnRequest::new("s-1", "case-1")
        })
        .await;
    assert_eq!(turn.failure, None);
    assert_eq!(
        (turn.round, turn.input.as_str(), turn.output.as_str()),
        (2, "What now?", "Done")
    );
    assert_eq!(
        turn.tool_calls,
        [ToolCall {
            name: "search".into(),
            arguments: json!({"q": "x"}),
            result: Some(json!([1, 2])),
            ..Default::default()
        }]
    );
    assert_eq!(turn.response, Some(answer));
    session.close().await;
}

#[tokio::test]
async fn default_body_sends_null_context_and_default_pointers_apply() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_json(
            json!({"session_id": "s-1", "message": "a \"quoted\"\nline", "context": null}),
        ))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"output": "ok", "tool_calls": [{"name": "t", "input": {}}]})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let turn = send(
        json!({"type": "http", "url": server.uri()}),
        "a \"quoted\"\nline",
    )
    .await;
    assert_eq!(turn.failure, None);
    assert_eq!(turn.output, "ok");
    assert_eq!(turn.tool_calls[0].name, "t");
}

#[tokio::test]
async fn missing_output_pointer_names_it_and_keeps_the_response() {
    let server =
        answering(ResponseTemplate::new(200).set_body_json(json!({"reply": "hi", "id": 7}))).await;
    let turn = send(
        json!({"type": "http", "url": server.uri(), "response": {"output": "/answer"}}),
        "x",
    )
    .await;
    let failure = turn.failure.unwrap();
    assert!(!failure.transient);
    assert!(failure.message.contains("`/answer`"), "{}", failure.message);
    assert!(
        failure.message.contains("`reply`, `id`"),
        "{}",
        failure.message
    );
    assert_eq!(turn.response, Some(json!({"reply": "hi", "id": 7})));
}

#[tokio::test]
async fn malformed_tool_calls_name_the_pointer() {
    let server = answering(
        ResponseTemplate::new(200).set_body_json(json!({"output": "x", "calls": {"name": "t"}})),
    )
    .await;
    let turn = send(
        json!({"type": "http", "url": server.uri(), "response": {"output": "/output", "tool_calls": "/calls"}}),
        "x",
    )
    .await;
    let failure = turn.failure.unwrap();
    assert!(
        failure.message.contains("`/calls`") && failure.message.contains("found an object"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn non_json_body_is_a_transient_failure() {
    let server = answering(ResponseTemplate::new(200).set_body_string("<html>oops</html>")).await;
    let failure = send(json!({"type": "http", "url": server.uri()}), "x")
        .await
        .failure
        .unwrap();
    // A proxy's error page or a body cut short: worth another try.
    assert!(failure.transient);
    assert!(
        failure.message.starts_with("response is not JSON: "),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("<html>oops</html>"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn server_errors_and_rate_limits_are_transient_client_errors_are_not() {
    for (status, transient) in [
        (500, true),
        (503, true),
        (429, true),
        (400, false),
        (404, false),
    ] {
        let long_body = format!("{{\"error\": \"{}\"}}", "x".repeat(500));
        let server = answering(ResponseTemplate::new(status).set_body_string(long_body)).await;
        let turn = send(json!({"type": "http", "url": server.uri()}), "x").await;
        let failure = turn.failure.unwrap();
        assert_eq!(
            failure.transient, transient,
            "{status}: {}",
            failure.message
        );
        assert!(
            failure.message.contains(&format!("HTTP {status}")),
            "{}",
            failure.message
        );
        assert!(
            failure.message.contains("{\"error\": \"xxx"),
            "{}",
            failure.message
        );
        assert!(
            failure.message.len() < 400,
            "the body excerpt is bounded: {}",
            failure.message
        );
        assert!(turn.response.is_some(), "a JSON error body is kept");
    }
}

#[tokio::test]
async fn slow_answers_time_out_transiently() {
    let server = answering(
        ResponseTemplate::new(200)
            .set_body_json(json!({"output": "late"}))
            .set_delay(Duration::from_secs(5)),
    )
    .await;
    // The answer would come after 5 s: a failure now is the timeout's.
    let turn = send(
        json!({"type": "http", "url": server.uri(), "timeout_s": 0.2}),
        "x",
    )
    .await;
    let failure = turn.failure.unwrap();
    assert!(failure.transient);
    assert_eq!(failure.message, "timed out after 0.2s");
    assert!(turn.latency_ms >= 200);
}

#[tokio::test]
async fn refused_connections_are_transient() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let turn = send(
        json!({"type": "http", "url": format!("http://127.0.0.1:{port}/chat?key=s3cret")}),
        "x",
    )
    .await;
    let failure = turn.failure.unwrap();
    assert!(failure.transient, "{}", failure.message);
    assert!(
        failure
            .message
            .contains(&format!("POST http://127.0.0.1:{port}/chat")),
        "{}",
        failure.message
    );
    assert!(
        !failure.message.contains("s3cret"),
        "the query may hold a key: {}",
        failure.message
    );
}

#[tokio::test]
async fn one_client_serves_many_sessions() {
    let server = answering(ResponseTemplate::new(200).set_body_json(json!({"output": "ok"}))).await;
    let target = target(json!({"type": "http", "url": server.uri()}));
    let sessions = (0..8).map(|i| {
        let target = target.clone();
        async move {
            let id = format!("s-{i}");
            let mut session = target.open(&id).await.unwrap();
            session
                .send(&TurnRequest {
                    message: "hi",
                    ..TurnRequest::new(&id, "c")
                })
                .await
        }
    });
    for turn in futures::future::join_all(sessions).await {
        assert_eq!(turn.output, "ok");
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 8);
}

#[test]
fn bad_specs_name_the_target_and_field() {
    assert_eq!(
        build_error(json!({
            "type": "http", "url": "http://127.0.0.1/",
            "headers": {"Authorization": "Bearer ${GAVEL_TEST_SURELY_UNSET_TOKEN}"},
        })),
        "target `agent`: headers.Authorization: `Bearer ${GAVEL_TEST_SURELY_UNSET_TOKEN}`: \
         environment variable GAVEL_TEST_SURELY_UNSET_TOKEN is not set"
    );
    // A literal header value the stored suite snapshot left out (a resume).
    let err = build_error(json!({
        "type": "http", "url": "http://127.0.0.1/",
        "headers": {"X-Key": "[redacted]"},
    }));
    assert!(
        err.starts_with("target `agent`: headers.X-Key: its literal value is not stored"),
        "{err}"
    );
    let cases = [
        (
            json!({"type": "http", "url": "not a url"}),
            "target `agent`: url: ",
        ),
        (
            json!({"type": "http", "url": "ftp://x/"}),
            "target `agent`: url: scheme must be http or https",
        ),
        (
            json!({"type": "http", "url": "http://x/", "method": "GE T"}),
            "target `agent`: method: ",
        ),
        (
            json!({"type": "http", "url": "http://x/", "response": {"output": "answer"}}),
            "target `agent`: response.output: ",
        ),
        (
            json!({"type": "http", "url": "http://x/", "body": {"m": "{{ mesage }}"}}),
            "target `agent`: body: template `{{ mesage }}`: unknown variable `mesage`",
        ),
        (
            json!({"type": "http", "url": "http://x/", "body": {"m": "{% if %}"}}),
            "target `agent`: body: template `{% if %}`: ",
        ),
    ];
    for (spec, expected) in cases {
        let err = build_error(spec);
        assert!(err.starts_with(expected), "{err}");
    }
}

#[test]
fn template_globals_and_set_variables_are_accepted() {
    let spec = json!({
        "type": "http", "url": "http://127.0.0.1/",
        "body": {"rounds": "{% for i in range(round) %}{{ i }}{% endfor %}", "x": "{% set y = message %}{{ y }}"},
    });
    let _ = target(spec);
}

#[test]
fn out_of_range_timeouts_are_refused_when_the_spec_is_read() {
    for timeout in [json!(0), json!(-1), json!(1e300)] {
        let spec = json!({"type": "http", "url": "http://x/", "timeout_s": timeout});
        let err = serde_json::from_value::<gavel_core::TargetSpec>(spec).unwrap_err();
        assert!(err.to_string().contains("`timeout_s`"), "{err}");
    }
}
