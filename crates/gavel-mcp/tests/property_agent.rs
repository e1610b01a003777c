//! The mcp-agent target against the example agent's own MCP endpoint (Streamable
//! HTTP at `/mcp`), graded by the tool-verification check.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use gavel_core::{JudgeSettings, Status, Transcript};
use gavel_mcp::{McpAgent, McpServer};
use gavel_store::Store;
use gavel_targets::{Target, TurnRequest};
use serde_json::json;
use tokio::io::AsyncBufReadExt;

/// The example agent's binary, built if missing.
fn agent_bin() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let bin = target.join("debug/property-agent");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let ok = std::process::Command::new(cargo)
        .args(["build", "-q", "-p", "property-agent"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(ok.success(), "building property-agent failed");
    bin
}

/// The example agent, started on a free port, and its base URL.
async fn start_agent() -> (tokio::process::Child, String) {
    let mut agent_process = tokio::process::Command::new(agent_bin())
        .args(["--addr", "127.0.0.1:0"])
        .env_remove("PROPERTY_AGENT_BUG")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut line = String::new();
    tokio::io::BufReader::new(agent_process.stdout.take().unwrap())
        .read_line(&mut line)
        .await
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("property-agent listening on ")
        .unwrap()
        .to_owned();
    (agent_process, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_agents_tools_over_mcp() {
    let (_agent_process, base) = start_agent().await;
    let (model, _seen) = common::scripted_model(
        "get_revenue_data",
        json!({"listing_id": 3, "month": "2026-02"}),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite://{}", dir.path().join("g.db").display()))
        .await
        .unwrap();
    let agent = McpAgent::new(
        "property-mcp",
        model,
        vec![McpServer::StreamableHttp {
            url: format!("{base}/mcp"),
        }],
        Arc::new(store),
    )
    .unwrap();
    let mut session = agent.open("s1").await.unwrap();
    let turn = session
        .send(&TurnRequest {
            message: "Revenue of the City Apartment in February?",
            ..TurnRequest::new("s1", "c")
        })
        .await;
    session.close().await;
    assert_eq!(turn.failure, None);
    assert_eq!(
        turn.tool_calls[0].result.as_ref().unwrap()["total"],
        json!(4680)
    );

    // The recorded call is graded like any other target's.
    let yaml = "cases:\n  - id: c\n    input: q\n    checks:\n      - type: tool-verification\n        calls:\n          - tool: get_revenue_data\n            arguments: {listing_id: 3, month: '2026-02'}\n            result: {total: 4680, currency: USD}\n";
    let suite = gavel_core::load::parse_suite_str(yaml, "t.yaml".as_ref()).unwrap();
    let plan = gavel_checks::compile(&suite.cases[0], &JudgeSettings::default()).unwrap();
    let transcript = Transcript {
        session_id: "s1".into(),
        turns: vec![turn],
    };
    let verdict = &plan.run_code(&transcript)[0];
    assert_eq!(
        (verdict.status, verdict.score),
        (Status::Pass, Some(1.0)),
        "{}",
        verdict.reason
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_steps_is_the_same_error_as_on_a_chat_target() {
    let (_agent_process, base) = start_agent().await;
    let (model, _seen) = common::scripted_model("get_listings", json!({})).await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite://{}", dir.path().join("g.db").display()))
        .await
        .unwrap();
    let agent = McpAgent::new(
        "property-mcp",
        model,
        vec![McpServer::StreamableHttp {
            url: format!("{base}/mcp"),
        }],
        Arc::new(store),
    )
    .unwrap()
    .with_max_steps(1);
    let mut session = agent.open("s1").await.unwrap();
    let turn = session
        .send(&TurnRequest {
            message: "What are my listings?",
            ..TurnRequest::new("s1", "c")
        })
        .await;
    session.close().await;
    assert_eq!(
        turn.failure,
        Some(gavel_targets::tool_loop::out_of_steps(1)),
        "{turn:?}"
    );
    assert_eq!(turn.tool_calls[0].name, "get_listings");
    assert!(turn.tool_calls[0].result.is_some());
}
