//! The http target's session operations and streams against a local mock server:
//! restart (command, endpoint, readiness), fork, NDJSON answers.

#![allow(clippy::unwrap_used)]

mod common;

use common::{build_error, target};
use gavel_targets::TurnRequest;
use serde_json::json;
use wiremock::matchers::{body_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn restart_runs_the_command_calls_the_endpoint_and_waits_until_ready() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/restart"))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(ResponseTemplate::new(200))
        .expect(1..)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("restarted");
    let t = target(json!({
        "type": "http",
        "url": format!("{}/chat", server.uri()),
        "restart": {
            "command": ["touch", marker.to_str().unwrap()],
            "url": format!("{}/restart", server.uri()),
            "ready_url": format!("{}/health", server.uri()),
        },
    }));
    let session = t.open("s").await.unwrap();
    assert!(t.revive(session, "s").await.is_ok());
    assert!(marker.exists());

    // A failing command or endpoint is a failure naming what broke.
    let t = target(json!({
        "type": "http",
        "url": format!("{}/chat", server.uri()),
        "restart": {"command": ["false"]},
    }));
    let session = t.open("s").await.unwrap();
    let e = t.revive(session, "s").await.err().unwrap();
    assert!(
        e.message
            .starts_with("target `agent`: restart: `false` failed"),
        "{}",
        e.message
    );
    let t = target(json!({
        "type": "http",
        "url": format!("{}/chat", server.uri()),
        "restart": {"url": format!("{}/missing", server.uri())},
    }));
    let session = t.open("s").await.unwrap();
    let e = t.revive(session, "s").await.err().unwrap();
    assert_eq!(
        e.message,
        "target `agent`: restart: the endpoint answered HTTP 404 Not Found"
    );
}

#[tokio::test]
async fn fork_sends_both_ids_and_reports_refusals() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/fork/p"))
        .and(body_json(json!({"from": "p", "to": "p~a"})))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/fork/gone"))
        .respond_with(ResponseTemplate::new(409).set_body_string("unknown parent"))
        .mount(&server)
        .await;
    let t = target(json!({
        "type": "http",
        "url": format!("{}/chat", server.uri()),
        "fork": {
            "url": format!("{}/fork/{{{{ parent_session_id }}}}", server.uri()),
            "body": {"from": "{{ parent_session_id }}", "to": "{{ session_id }}"},
        },
    }));
    t.fork("p", "p~a").await.unwrap();
    let e = t.fork("gone", "gone~a").await.unwrap_err();
    assert_eq!(
        (e.message.as_str(), e.transient),
        (
            "target `agent`: fork answered HTTP 409 Conflict: unknown parent",
            false
        )
    );
}

#[tokio::test]
async fn an_ndjson_stream_becomes_a_turn_with_its_shape() {
    let server = MockServer::start().await;
    let body = "{\"kind\":\"tool\",\"name\":\"search\",\"arguments\":{\"q\":\"x\"}}\n\
                {\"kind\":\"out\",\"result\":[1]}\n\
                {\"kind\":\"tok\",\"t\":\"Hel\"}\n{\"kind\":\"tok\",\"t\":\"lo\"}\n{\"kind\":\"end\"}\n";
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/x-ndjson"))
        .mount(&server)
        .await;
    let t = target(json!({
        "type": "http",
        "url": format!("{}/chat", server.uri()),
        "stream": {"format": "ndjson", "kind": "/kind", "delta": "tok", "text": "/t",
                   "tool_call": "tool", "tool_result": "out", "done": "end"},
    }));
    let mut session = t.open("s").await.unwrap();
    let turn = session
        .send(&TurnRequest {
            message: "Hi",
            ..TurnRequest::new("s", "c")
        })
        .await;
    assert_eq!(turn.failure, None);
    assert_eq!(turn.output, "Hello");
    assert_eq!(turn.tool_calls[0].name, "search");
    assert_eq!(turn.tool_calls[0].result, Some(json!([1])));
    let stats = turn.stream.unwrap();
    assert_eq!((stats.events, stats.deltas, stats.done), (5, 2, true));
}

#[test]
fn bad_session_settings_name_the_field() {
    let e = build_error(json!({"type": "http", "url": "http://x/chat", "restart": {}}));
    assert!(e.contains("restart: give `command`, `url` or both"), "{e}");
    let e = build_error(json!({"type": "http", "url": "http://x/chat", "stream": {"text": "t"}}));
    assert!(e.contains("stream.text: `t` is not a JSON pointer"), "{e}");
}
