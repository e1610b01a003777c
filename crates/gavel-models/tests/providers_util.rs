//! Helpers shared by the provider wire tests (`providers_*.rs` include this file
//! as a module). Every server here listens on 127.0.0.1 only.
#![allow(dead_code, clippy::unwrap_used)]

use std::future::Future;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wiremock::MockServer;

/// A server that answers every request with a 200 whose `Content-Length` says
/// `declared` bytes but which sends only `body`, then closes the connection.
pub(crate) async fn truncated_server(body: &'static str, declared: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                read_request(&mut socket).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {declared}\r\n\r\n"
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(body.as_bytes()).await;
                let _ = socket.flush().await;
                let _ = socket.shutdown().await;
            });
        }
    });
    format!("http://{address}")
}

/// Reads one HTTP/1.1 request (head and `Content-Length` body).
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

/// A URL on which nothing listens: connecting is refused.
pub(crate) async fn refused_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{address}")
}

/// The one request `server` received.
pub(crate) async fn only_request(server: &MockServer) -> wiremock::Request {
    let mut requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "expected exactly one request");
    requests.remove(0)
}

/// The JSON body of the one request `server` received.
pub(crate) async fn only_body(server: &MockServer) -> Value {
    let request = only_request(server).await;
    serde_json::from_slice(&request.body).unwrap()
}

/// The value of `name` in `request`'s headers.
pub(crate) fn header<'a>(request: &'a wiremock::Request, name: &str) -> Option<&'a str> {
    request
        .headers
        .get(name)
        .map(|value| value.to_str().unwrap())
}

/// Runs `call`, failing the test if it takes more than 10 s: no provider call may hang.
pub(crate) async fn bounded<F: Future>(call: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call hung")
}
