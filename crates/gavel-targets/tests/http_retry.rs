//! The http target's `retry:` against local servers: 5xx, 429 with
//! Retry-After, refused connections, bodies reset or ended early, and empty or
//! malformed bodies are tried again and counted; permanent failures and targets
//! without `retry:` are sent once.

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::target;
use gavel_core::{Attempts, Turn};
use gavel_targets::TurnRequest;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
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

/// How a faulty answer breaks off after its head and part of its body.
#[derive(Clone, Copy)]
enum Break {
    /// The connection is reset (RST).
    Reset,
    /// The connection is closed before the declared length.
    Early,
}

/// A server on 127.0.0.1 whose first `faults` answers break off mid-body as
/// `how` says, then answer `{"output": "ok"}`; with the number of requests read.
async fn breaking(faults: usize, how: Break) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/chat", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            // One request per connection: the client reconnects after a fault.
            read_request(&mut socket).await;
            let n = count.fetch_add(1, Ordering::SeqCst);
            if n >= faults {
                let body = r#"{"output": "ok"}"#;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(format!("{head}{body}").as_bytes()).await;
                continue;
            }
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n";
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(br#"{"output": "half an ans"#).await;
            let _ = socket.flush().await;
            match how {
                Break::Reset => {
                    // A zero linger makes the close a reset.
                    socket.set_zero_linger().unwrap();
                    drop(socket);
                }
                Break::Early => {
                    let _ = socket.shutdown().await;
                }
            }
        }
    });
    (url, seen)
}

/// Reads one HTTP/1.1 request: its head and its `Content-Length` body.
async fn read_request(socket: &mut TcpStream) {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 4096];
    loop {
        let read = socket.read(&mut chunk).await.unwrap_or(0);
        if read == 0 {
            return;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buffer.len() >= end + 4 + length {
                return;
            }
        }
    }
}

#[tokio::test]
async fn a_body_reset_or_ended_early_is_retried() {
    for how in [Break::Reset, Break::Early] {
        let (url, seen) = breaking(2, how).await;
        let turn =
            send(json!({"type": "http", "url": url, "retry": {"attempts": 3, "backoff_ms": 1}}))
                .await;
        assert_eq!(turn.failure, None);
        assert_eq!(turn.output, "ok");
        assert_eq!(turn.attempts.unwrap().attempts, 3);
        assert_eq!(seen.load(Ordering::SeqCst), 3);
    }
}

#[tokio::test]
async fn a_body_cut_short_fails_transiently_when_the_tries_run_out() {
    let (url, seen) = breaking(5, Break::Early).await;
    let turn =
        send(json!({"type": "http", "url": url, "retry": {"attempts": 2, "backoff_ms": 1}})).await;
    let failure = turn.failure.unwrap();
    assert!(failure.transient, "{}", failure.message);
    assert!(
        failure.message.starts_with("POST http://127.0.0.1:"),
        "{}",
        failure.message
    );
    assert_eq!(turn.attempts.unwrap().attempts, 2);
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn empty_and_malformed_bodies_are_retried_and_counted() {
    for first in [
        ResponseTemplate::new(200),
        ResponseTemplate::new(200).set_body_string(r#"{"output": "tru"#),
    ] {
        let server = flaky(first, 1).await;
        let turn = send(spec(&server, json!({"attempts": 2, "backoff_ms": 1}))).await;
        assert_eq!(turn.failure, None);
        assert_eq!(turn.output, "ok");
        assert_eq!(
            turn.attempts,
            Some(Attempts {
                attempts: 2,
                retries: 1,
                rate_limited: 0,
                malformed: 1
            })
        );
    }
    let server = flaky(ResponseTemplate::new(200), 5).await;
    let failure = send(spec(&server, json!({"attempts": 2, "backoff_ms": 1})))
        .await
        .failure
        .unwrap();
    assert!(
        failure.message.ends_with("body: (empty body)"),
        "{}",
        failure.message
    );
}
