//! The http target's `retry:` against a local mock server: 5xx, 429 with
//! Retry-After and refused connections are tried again and counted; permanent
//! failures and targets without `retry:` are sent once.

#![allow(clippy::unwrap_used)]

mod common;

use common::target;
use gavel_core::{Attempts, Turn};
use gavel_targets::TurnRequest;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn send(spec: Value) -> Turn {
    let target = target(spec);
    let mut session = target.open("s-1").await.unwrap();
    let turn = session
        .send(&TurnRequest {
            message: "hi",
            ..TurnRequest::new("s-1", "case-1")
        })
        .await;
    session.close().await;
    turn
}

/// A server answering `first` `n` times, then `{"output": "ok"}`.
async fn flaky(first: ResponseTemplate, n: u64) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(first)
        .up_to_n_times(n)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"output": "ok"})))
        .mount(&server)
        .await;
    server
}

fn spec(server: &MockServer, retry: Value) -> Value {
    json!({"type": "http", "url": server.uri(), "retry": retry})
}

#[tokio::test]
async fn server_errors_are_retried_and_counted() {
    let server = flaky(ResponseTemplate::new(503), 2).await;
    let turn = send(spec(&server, json!({"attempts": 3, "backoff_ms": 1}))).await;
    assert_eq!(turn.failure, None);
    assert_eq!(turn.output, "ok");
    assert_eq!(
        turn.attempts,
        Some(Attempts {
            attempts: 3,
            retries: 2,
            rate_limited: 0,
            malformed: 0
        })
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn rate_limits_honour_retry_after_and_are_counted_apart() {
    let server = flaky(
        ResponseTemplate::new(429).insert_header("retry-after", "0"),
        1,
    )
    .await;
    let turn = send(spec(&server, json!({"attempts": 2, "backoff_ms": 60000}))).await;
    // A 60 s backoff would outlast the test: the Retry-After of 0 s was used.
    assert_eq!(turn.output, "ok");
    let attempts = turn.attempts.unwrap();
    assert_eq!((attempts.attempts, attempts.rate_limited), (2, 1));
}

#[tokio::test]
async fn the_last_failure_stays_when_tries_run_out() {
    let server = flaky(ResponseTemplate::new(500).set_body_string("boom"), 5).await;
    let turn = send(spec(&server, json!({"attempts": 2, "backoff_ms": 1}))).await;
    let failure = turn.failure.unwrap();
    assert!(failure.transient);
    assert!(failure.message.contains("HTTP 500"), "{}", failure.message);
    assert_eq!(turn.attempts.unwrap().attempts, 2);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn refused_connections_are_retried() {
    // A port that was free a moment ago: nothing listens on it. (A dropped
    // MockServer goes back to wiremock's pool and may answer another test.)
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/chat");
    let turn =
        send(json!({"type": "http", "url": url, "retry": {"attempts": 3, "backoff_ms": 1}})).await;
    assert!(turn.failure.unwrap().transient);
    assert_eq!(turn.attempts.unwrap().retries, 2);
}

#[tokio::test]
async fn permanent_failures_and_targets_without_retry_are_sent_once() {
    let server = flaky(ResponseTemplate::new(400), 5).await;
    let turn = send(spec(&server, json!({"attempts": 3, "backoff_ms": 1}))).await;
    assert!(!turn.failure.unwrap().transient);
    assert_eq!(turn.attempts.unwrap().attempts, 1);
    let server = flaky(ResponseTemplate::new(503), 1).await;
    let turn = send(json!({"type": "http", "url": server.uri()})).await;
    assert!(turn.failure.unwrap().transient);
    assert_eq!(turn.attempts, None, "retry is off by default");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}
