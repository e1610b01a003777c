//! The mcp-agent target against the published `@modelcontextprotocol/server-everything`
//! (installed by scripts/setup.d/40-mcp-servers.sh into .gavel/npm) over stdio,
//! Streamable HTTP and the legacy HTTP+SSE transport, with a model served by a
//! local OpenAI-compatible server that scripts the tool calls. The conversation
//! survives a revival through the store's checkpoint.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

mod common;

use gavel_mcp::{McpAgent, McpServer};
use gavel_store::Store;
use gavel_targets::{Target, TurnRequest};
use serde_json::json;

/// The server's entry point, or `None` (after saying why) when node is absent;
/// under CI that fails the test instead.
fn everything() -> Option<PathBuf> {
    if let Err(e) = std::process::Command::new("node").arg("--version").output() {
        gavel_testkit::skip(
            gavel_testkit::Need::Node,
            format_args!("node cannot start ({e}), so the MCP server-everything tests do not run"),
        );
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let entry =
        root.join(".gavel/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "{} is missing: run scripts/setup (scripts/setup.d/40-mcp-servers.sh)",
        entry.display()
    );
    Some(entry)
}

/// Runs two rounds with a revival between them and checks tools, prompt and memory.
async fn converse(servers: Vec<McpServer>) {
    let (model, seen) = common::scripted_model("get-sum", json!({"a": 2, "b": 3})).await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!(
        "sqlite://{}",
        dir.path().join("gavel.db").display()
    ))
    .await
    .unwrap();
    let mut vars = serde_json::Map::new();
    vars.insert("locale".into(), json!("en-GB"));
    let agent = McpAgent::new("everything", model, servers, Arc::new(store.clone()))
        .unwrap()
        .with_system("Today is {{ date }}. Answer in {{ locale }}.", vars)
        .unwrap();
    assert_eq!(agent.kind(), "mcp-agent");

    let mut session = agent.open("s1").await.unwrap();
    let first = session
        .send(&TurnRequest {
            message: "What is 2 plus 3?",
            ..TurnRequest::new("s1", "c")
        })
        .await;
    assert_eq!(first.failure, None);
    assert_eq!(first.tool_calls.len(), 1, "{first:?}");
    let call = &first.tool_calls[0];
    assert_eq!(
        (call.name.as_str(), &call.arguments),
        ("get-sum", &json!({"a": 2, "b": 3}))
    );
    let result = call.result.as_ref().unwrap().to_string();
    assert!(result.contains('5'), "{result}");
    assert!(
        first.output.starts_with("Result: ") && first.output.contains('5'),
        "{}",
        first.output
    );
    {
        let seen = seen.lock().unwrap();
        let system = &seen[0]["messages"][0];
        assert_eq!(system["role"], "system");
        let text = system["content"].as_str().unwrap();
        assert!(
            text.starts_with("Today is 20") && text.ends_with("Answer in en-GB."),
            "{text}"
        );
        let tools: Vec<&str> = seen[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert!(
            tools.contains(&"get-sum") && tools.contains(&"echo"),
            "{tools:?}"
        );
    }

    // Revival: the session is closed for real (the MCP connections end) and
    // reopened with the same id; the conversation comes back from the store.
    session.close().await;
    assert!(
        store
            .checkpoint_get("everything", "s1")
            .await
            .unwrap()
            .is_some()
    );
    let mut revived = agent.open("s1").await.unwrap();
    let second = revived
        .send(&TurnRequest {
            round: 1,
            message: "What did I ask first?",
            ..TurnRequest::new("s1", "c")
        })
        .await;
    assert_eq!(second.failure, None);
    assert_eq!(second.output, "You first asked: \"What is 2 plus 3?\"");
    assert!(second.tool_calls.is_empty());
    revived.close().await;

    // Another session starts empty.
    let mut other = agent.open("s2").await.unwrap();
    let fresh = other
        .send(&TurnRequest {
            message: "What did I ask first?",
            ..TurnRequest::new("s2", "c")
        })
        .await;
    assert_eq!(fresh.output, "You first asked: \"What did I ask first?\"");
    other.close().await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_server_with_revival() {
    let Some(entry) = everything() else { return };
    converse(vec![McpServer::Stdio {
        command: vec!["node".into(), entry.display().to_string(), "stdio".into()],
        env: Default::default(),
    }])
    .await;
}

/// Starts server-everything over HTTP in `mode` on a free port; killed on drop.
async fn http_server(entry: &Path, mode: &str) -> (tokio::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = tokio::process::Command::new("node")
        .args([entry.to_str().unwrap(), mode])
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (child, port);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("server-everything {mode} did not listen on {port}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_server_with_revival() {
    let Some(entry) = everything() else { return };
    let (_child, port) = http_server(&entry, "streamableHttp").await;
    converse(vec![McpServer::StreamableHttp {
        url: format!("http://127.0.0.1:{port}/mcp"),
    }])
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sse_server_with_revival() {
    let Some(entry) = everything() else { return };
    let (_child, port) = http_server(&entry, "sse").await;
    converse(vec![McpServer::Sse {
        url: format!("http://127.0.0.1:{port}/sse"),
    }])
    .await;
}
