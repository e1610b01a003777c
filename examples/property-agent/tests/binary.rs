//! End-to-end tests of the real `property-agent` binary: HTTP, `--stdio` and restart persistence.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::timeout;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const BIN: &str = env!("CARGO_BIN_EXE_property-agent");

/// A running HTTP agent, killed on drop.
struct Server {
    child: Child,
    base: String,
    http: reqwest::Client,
}

impl Server {
    /// Starts the binary on a free port with extra `args` and waits for its listening line.
    async fn start(args: &[&str]) -> Result<Self, Box<dyn std::error::Error>> {
        let mut child = Command::new(BIN)
            .args(["--addr", "127.0.0.1:0"])
            .args(args)
            .env_remove("PROPERTY_AGENT_BUG")
            .env_remove("PROPERTY_AGENT_DB")
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        timeout(
            Duration::from_secs(30),
            BufReader::new(stdout).read_line(&mut line),
        )
        .await??;
        let base = line
            .trim_end()
            .strip_prefix("property-agent listening on ")
            .ok_or_else(|| format!("unexpected first line {line:?}"))?
            .to_owned();
        assert!(
            base.starts_with("http://127.0.0.1:") && !base.ends_with(":0"),
            "{base}"
        );
        Ok(Self {
            child,
            base,
            http: reqwest::Client::new(),
        })
    }

    /// POSTs `body` to /chat; returns status and JSON body.
    async fn post(&self, body: &Value) -> Result<(u16, Value), Box<dyn std::error::Error>> {
        let response = self
            .http
            .post(format!("{}/chat", self.base))
            .json(body)
            .send()
            .await?;
        Ok((response.status().as_u16(), response.json().await?))
    }

    /// Sends one chat message that must succeed with HTTP 200.
    async fn chat(
        &self,
        session: &str,
        message: &str,
    ) -> Result<Value, Box<dyn std::error::Error>> {
        let (status, body) = self
            .post(&json!({"session_id": session, "message": message}))
            .await?;
        assert_eq!(status, 200, "{body}");
        Ok(body)
    }

    async fn get(&self, path: &str) -> Result<(u16, Value), Box<dyn std::error::Error>> {
        let response = self.http.get(format!("{}{path}", self.base)).send().await?;
        Ok((response.status().as_u16(), response.json().await?))
    }

    async fn kill(mut self) -> std::io::Result<()> {
        self.child.kill().await
    }
}

#[tokio::test]
async fn http_chat_round_trip() -> TestResult {
    let server = Server::start(&[]).await?;
    assert_eq!(server.get("/health").await?, (200, json!({"status": "ok"})));

    let body = server.chat("s1", "What are my listings?").await?;
    assert_eq!(
        body,
        json!({
            "session_id": "s1",
            "reply": "You have 3 listings: Beach House, Mountain Cabin and City Apartment.",
            "tool_calls": [{
                "name": "get_listings",
                "arguments": {},
                "result": [
                    {"id": 1, "name": "Beach House", "city": "Malibu"},
                    {"id": 2, "name": "Mountain Cabin", "city": "Aspen"},
                    {"id": 3, "name": "City Apartment", "city": "San Francisco"}
                ]
            }],
            "error": null
        })
    );
    let body = server
        .chat("s1", "What's the occupancy for the first one?")
        .await?;
    assert_eq!(body["reply"], "Beach House has an occupancy rate of 78%.");
    assert_eq!(body["tool_calls"][0]["name"], "get_listing_details");
    assert_eq!(body["tool_calls"][0]["arguments"], json!({"listing_id": 1}));

    let (status, body) = server
        .post(&json!({"session_id": "s2", "message": "How much revenue?", "context": {"user_name": "Ana"}}))
        .await?;
    assert_eq!(status, 200);
    assert!(
        body["reply"]
            .as_str()
            .is_some_and(|r| r.starts_with("Hi Ana, ") && r.contains("$100,360"))
    );

    let body = server.chat("s3", "What is the weather on Mars?").await?;
    assert_eq!(body["error"], "Out of domain");
    assert_eq!(body["tool_calls"], json!([]));
    let body = server.chat("s3", "   ").await?;
    assert_eq!(body["error"], "Empty prompt");

    let (status, messages) = server.get("/sessions/s1/messages").await?;
    assert_eq!(status, 200);
    let roles: Vec<&str> = messages
        .as_array()
        .ok_or("messages not an array")?
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(
        messages[2]["content"],
        "What's the occupancy for the first one?"
    );
    assert_eq!(server.get("/sessions/nope/messages").await?.0, 404);
    Ok(())
}

#[tokio::test]
async fn http_rejects_malformed_requests() -> TestResult {
    let server = Server::start(&[]).await?;
    let (status, body) = server.post(&json!({"message": "hi"})).await?;
    assert_eq!(status, 400);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("session_id")),
        "{body}"
    );
    let response = server
        .http
        .post(format!("{}/chat", server.base))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = response.json().await?;
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("bad request")),
        "{body}"
    );
    Ok(())
}

#[tokio::test]
async fn http_injected_bugs() -> TestResult {
    let server = Server::start(&["--bug", "crash-on-revenue,wrong-count"]).await?;
    let (status, body) = server
        .post(&json!({"session_id": "s", "message": "What was my revenue?"}))
        .await?;
    assert_eq!((status, body), (500, json!({"error": "internal"})));
    let body = server.chat("s", "What are my listings?").await?;
    assert_eq!(
        body["reply"],
        "You have 2 listings: Beach House and Mountain Cabin."
    );
    assert_eq!(
        body["tool_calls"][0]["result"].as_array().map(Vec::len),
        Some(3)
    );

    let output = Command::new(BIN)
        .args(["--addr", "127.0.0.1:0"])
        .env("PROPERTY_AGENT_BUG", "slow,bogus")
        .output()
        .await?;
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    for needle in [
        "bogus",
        "wrong-count",
        "skip-tools",
        "forget-context",
        "slow",
        "crash-on-revenue",
    ] {
        assert!(stderr.contains(needle), "{needle} missing from {stderr}");
    }
    Ok(())
}

#[tokio::test]
async fn stdio_mode_answers_one_line_per_request() -> TestResult {
    let mut child = Command::new(BIN)
        .arg("--stdio")
        .env_remove("PROPERTY_AGENT_BUG")
        .env_remove("PROPERTY_AGENT_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let input = [
        json!({"session_id": "s", "message": "What are my listings?"}).to_string(),
        "this is not json".to_owned(),
        json!({"session_id": "s", "message": "occupancy of the last one", "context": {"locale": "fr"}}).to_string(),
    ];
    stdin
        .write_all(format!("{}\n", input.join("\n")).as_bytes())
        .await?;
    drop(stdin); // EOF: the agent answers what it read and exits.
    let output = timeout(Duration::from_secs(30), child.wait_with_output()).await??;
    assert!(output.status.success());
    let lines: Vec<Value> = String::from_utf8(output.stdout)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["session_id"], "s");
    assert_eq!(lines[0]["tool_calls"][0]["name"], "get_listings");
    assert_eq!(lines[0]["error"], Value::Null);
    assert!(
        lines[1]["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("bad request: ")),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2]["reply"],
        "City Apartment has an occupancy rate of 91%."
    );
    Ok(())
}

#[tokio::test]
async fn file_database_survives_a_restart() -> TestResult {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("agent.db");
    let db = db.to_str().ok_or("non-utf8 temp path")?;

    let first = Server::start(&["--db", db]).await?;
    first.chat("persist", "What are my listings?").await?;
    first.kill().await?;

    let second = Server::start(&["--db", db]).await?;
    let body = second
        .chat("persist", "What's the occupancy for the first one?")
        .await?;
    assert_eq!(body["reply"], "Beach House has an occupancy rate of 78%.");
    assert_eq!(body["tool_calls"][0]["arguments"], json!({"listing_id": 1}));
    let (_, messages) = second.get("/sessions/persist/messages").await?;
    assert_eq!(messages.as_array().map(Vec::len), Some(4));
    // Seeding happened once: still exactly three listings.
    let body = second.chat("other", "list my properties").await?;
    assert_eq!(
        body["tool_calls"][0]["result"].as_array().map(Vec::len),
        Some(3)
    );
    Ok(())
}
