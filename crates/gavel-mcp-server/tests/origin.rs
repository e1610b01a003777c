//! `gavel mcp --http` checks `Origin` as the MCP specification asks: a browser
//! page of another origin gets 403, this server's own loopback origins and
//! clients that send no `Origin` (not browsers) are served.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;

use gavel_store::Store;
use reqwest::StatusCode;
use tokio_util::sync::CancellationToken;

/// An MCP `initialize` request to `addr`, with `origin` if any: its status.
async fn initialize(addr: SocketAddr, origin: Option<&str>) -> StatusCode {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "origin-test", "version": "0"}
        }
    });
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    request.send().await.unwrap().status()
}

#[tokio::test]
async fn a_foreign_origin_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite://{}", dir.path().join("g.db").display()))
        .await
        .unwrap();
    let stop = CancellationToken::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let server = tokio::spawn(gavel_mcp_server::serve_http(
        store,
        "127.0.0.1:0".parse().unwrap(),
        stop.clone(),
        move |bound| {
            let _ = tx.send(bound);
        },
    ));
    let addr = rx.await.unwrap();
    let port = addr.port();
    for foreign in [
        "http://evil.example".to_owned(),
        "https://evil.example".to_owned(),
        "null".to_owned(),
        format!("http://localhost:{}", port.wrapping_add(1)),
        format!("https://127.0.0.1:{port}"),
    ] {
        assert_eq!(
            initialize(addr, Some(&foreign)).await,
            StatusCode::FORBIDDEN,
            "{foreign}"
        );
    }
    for own in [
        format!("http://localhost:{port}"),
        format!("http://127.0.0.1:{port}"),
        format!("http://[::1]:{port}"),
    ] {
        assert_eq!(initialize(addr, Some(&own)).await, StatusCode::OK, "{own}");
    }
    assert_eq!(initialize(addr, None).await, StatusCode::OK, "no Origin");
    stop.cancel();
    server.await.unwrap().unwrap();
}
