//! examples/conversations/agent-checks.yaml against the real example agent: it
//! passes as written, and each injected bug fails exactly the checks meant to
//! catch it. Also gavel's own `mcp-agent` target, run from a suite over the
//! example agent's MCP endpoint, surviving a revival.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;
use support::{agent_bin, free_port, workspace};

/// The kinds of the suite's judged checks, skipped offline.
const JUDGED: [&str; 2] = ["step-score", "grounding"];

/// (case id, check kind) pairs.
type Pairs = BTreeSet<(String, String)>;

/// Runs the suite (its agent started from the built binary, its database in a
/// temp dir) with `bug` injected; returns the failing `(case, check kind)` pairs
/// and every verdict's status.
fn run(bug: Option<&str>) -> (Pairs, Vec<(String, String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let suite =
        std::fs::read_to_string(workspace().join("examples/conversations/agent-checks.yaml"))
            .unwrap();
    let cargo_run = "[cargo, run, --quiet, -p, property-agent, --,";
    assert!(
        suite.contains(cargo_run),
        "the suite starts the agent with cargo run"
    );
    let suite = suite
        .replace(
            cargo_run,
            &format!("[{:?},", agent_bin().display().to_string()),
        )
        .replace(
            "cwd: ../..",
            &format!("cwd: {:?}", dir.path().display().to_string()),
        );
    let path = dir.path().join("agent-checks.yaml");
    std::fs::write(&path, suite).unwrap();
    let report = dir.path().join("r.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gavel"));
    cmd.args([
        "run",
        path.to_str().unwrap(),
        "--quiet",
        "-o",
        report.to_str().unwrap(),
    ])
    .arg("--db")
    .arg(format!(
        "sqlite://{}",
        dir.path().join("gavel.db").display()
    ))
    .current_dir(dir.path())
    .env("AGENT_CHECKS_PORT", free_port().to_string())
    .env("AGENT_CHECKS_DB", dir.path().join("agent.db"))
    .env_remove("PROPERTY_AGENT_BUG")
    .env_remove("GAVEL_DATABASE_URL")
    .env_remove("OPENAI_API_KEY")
    .env_remove("ANTHROPIC_API_KEY")
    .env_remove("GEMINI_API_KEY");
    if let Some(bug) = bug {
        cmd.env("PROPERTY_AGENT_BUG", bug);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.exists(),
        "no report; stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let mut failed = BTreeSet::new();
    let mut all = Vec::new();
    for result in report["detailed_results"].as_array().unwrap() {
        let id = result["id"].as_str().unwrap();
        for repeat in result["repeats"].as_array().unwrap() {
            for v in repeat["verdicts"].as_array().unwrap() {
                let (kind, status) = (v["kind"].as_str().unwrap(), v["status"].as_str().unwrap());
                let reason = v["reason"].as_str().unwrap_or_default();
                if status == "skipped" {
                    // Only the judged checks skip here: no judge model, or gated.
                    assert!(
                        JUDGED.contains(&kind)
                            && (reason.starts_with("no judge model")
                                || reason.starts_with("gated by")),
                        "{id}: {kind}: {reason}"
                    );
                } else if status != "pass" {
                    failed.insert((id.to_owned(), kind.to_owned()));
                }
                all.push((
                    id.to_owned(),
                    v["check"].as_str().unwrap().to_owned(),
                    format!("{status}: {}", v["reason"]),
                ));
            }
        }
    }
    (failed, all)
}

fn pairs(list: &[(&str, &str)]) -> Pairs {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn the_agent_checks_suite_passes_offline() {
    let (failed, all) = run(None);
    assert!(failed.is_empty(), "{all:#?}");
    assert_eq!(all.len(), 10, "{all:#?}");
    let skipped: Vec<&String> = all
        .iter()
        .filter(|(_, _, s)| s.starts_with("skipped"))
        .map(|(_, check, _)| check)
        .collect();
    assert_eq!(
        skipped.len(),
        2,
        "the step-score and the judge-read claim: {all:#?}"
    );
}

#[test]
fn each_bug_fails_exactly_its_checks() {
    let expected = [
        (
            "wrong-tool-args",
            pairs(&[
                ("revenue-call-verified", "tool-verification"),
                ("bookings-trajectory", "tool-verification"),
            ]),
        ),
        (
            "redundant-calls",
            pairs(&[
                ("listings-trajectory", "trajectory"),
                ("bookings-trajectory", "trajectory"),
            ]),
        ),
        ("wrong-total", pairs(&[("revenue-grounded", "grounding")])),
        (
            "no-persist",
            pairs(&[("conversation-persisted", "database")]),
        ),
    ];
    for (bug, want) in expected {
        let (failed, all) = run(Some(bug));
        assert_eq!(failed, want, "bug {bug}: {all:#?}");
    }
}

/// The example agent on a port it picks itself, and its base URL; killed on drop.
struct Agent {
    child: std::process::Child,
    url: String,
}

impl Agent {
    fn start() -> Agent {
        use std::io::BufRead;
        let mut child = Command::new(agent_bin())
            .args(["--addr", "127.0.0.1:0"])
            .env_remove("PROPERTY_AGENT_BUG")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().rsplit(' ').next().unwrap().to_owned();
        Agent { child, url }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_mcp_agent_target_calls_tools_and_keeps_its_conversation_across_a_revival() {
    let agent = Agent::start();
    let model = support::Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite = format!(
        r#"name: mcp
targets:
  gavel-agent:
    type: mcp-agent
    model: openai-compatible:tools@{model}/v1
    system: "Today is {{{{ date }}}}. Answer in {{{{ locale }}}}."
    vars: {{locale: en}}
    servers:
      - {{transport: streamable-http, url: "{agent}/mcp"}}
cases:
  - id: revenue-then-recall
    revival: true
    max_followups: 0
    rounds:
      - input: 'Use get_revenue_data with {{"listing_id": 3, "month": "2026-02"}}'
        expected_tools: [get_revenue_data]
        checks: [{{type: contains, value: "Tool results"}}]
      - input: What did I ask you before?
        checks: [{{type: contains, value: "Earlier you said: Use get_revenue_data"}}]
"#,
        model = model.url,
        agent = agent.url,
    );
    let path = dir.path().join("mcp.yaml");
    std::fs::write(&path, suite).unwrap();
    let report = dir.path().join("r.json");
    let db = dir.path().join("gavel.db");
    let out = Command::new(env!("CARGO_BIN_EXE_gavel"))
        .args(["run", path.to_str().unwrap(), "--quiet", "-o"])
        .arg(&report)
        .arg("--db")
        .arg(format!("sqlite://{}", db.display()))
        .env_remove("GAVEL_DATABASE_URL")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let repeat = &report["detailed_results"][0]["repeats"][0];
    let statuses: Vec<(&str, &str)> = repeat["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["kind"].as_str().unwrap(), v["status"].as_str().unwrap()))
        .collect();
    assert!(
        statuses.iter().all(|(_, s)| *s == "pass") && statuses.len() >= 3,
        "{statuses:?}\n{repeat:#}"
    );
    let turns = repeat["transcript"]["turns"].as_array().unwrap();
    let call = &turns[0]["tool_calls"][0];
    assert_eq!(call["name"], "get_revenue_data");
    assert_eq!(call["arguments"]["listing_id"], 3);
    assert!(call["result"].is_object(), "{call}");
}
