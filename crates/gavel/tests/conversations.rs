//! The `examples/conversations` suite with the real `gavel` binary against the real
//! example agent: it passes offline, and each of the agent's conversation bugs
//! fails exactly the checks that should catch it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;
use support::{example_targets, free_port, workspace};

/// Runs the suite (its own targets file, the agent launched from its binary
/// rather than `cargo run`) with `bug` injected; returns the JSON report.
fn run(bug: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let examples = workspace().join("examples/conversations");
    let targets_file = example_targets("conversations", dir.path());
    let report = dir.path().join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_gavel"))
        .args([
            "run",
            targets_file.to_str().unwrap(),
            examples.join("suite.yaml").to_str().unwrap(),
            "--db",
            &format!("sqlite://{}", dir.path().join("gavel.db").display()),
            "--quiet",
            "-o",
            report.to_str().unwrap(),
        ])
        .current_dir(dir.path())
        .env("PROPERTY_AGENT_PORT", free_port().to_string())
        .env("PROPERTY_AGENT_REVIVAL_PORT", free_port().to_string())
        .env("PROPERTY_AGENT_BUG", bug)
        .env("TMPDIR", dir.path())
        .env_remove("GAVEL_DATABASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("GEMINI_API_KEY")
        .output()
        .unwrap();
    assert!(
        report.exists(),
        "no report; stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap()
}

/// The verdicts of every case's first execution: (case, check, status, reason).
fn verdicts(report: &Value) -> Vec<(String, String, String, String)> {
    let mut all = Vec::new();
    for result in report["detailed_results"].as_array().unwrap() {
        let case = result["id"].as_str().unwrap();
        for v in result["repeats"][0]["verdicts"].as_array().unwrap() {
            all.push((
                case.to_owned(),
                v["check"].as_str().unwrap().to_owned(),
                v["status"].as_str().unwrap().to_owned(),
                v["reason"].as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    all
}

/// `case: check` of every verdict with this status.
fn with_status(report: &Value, status: &str) -> BTreeSet<String> {
    verdicts(report)
        .into_iter()
        .filter(|(_, _, s, _)| s == status)
        .map(|(case, check, _, _)| format!("{case}: {check}"))
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn turns(report: &Value, case: &str) -> Vec<Value> {
    report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == case)
        .unwrap()["repeats"][0]["transcript"]["turns"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn the_suite_passes_offline_with_follow_ups_branches_and_streams_recorded() {
    let report = run("");
    assert_eq!(with_status(&report, "fail"), BTreeSet::new());
    assert_eq!(with_status(&report, "error"), BTreeSet::new());
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
    assert_eq!(report["summary"]["errors"], 0);
    assert_eq!(report["summary"]["total"], 6);
    // Only judges are skipped (no judge model here), each saying why.
    for (case, check, status, reason) in verdicts(&report) {
        if status == "skipped" {
            assert!(
                check.starts_with("judge") || check == "branch-isolation (judge)",
                "{case}: {check}: {reason}"
            );
            assert!(reason.starts_with("no judge model"), "{case}: {reason}");
        }
    }

    // The clarifying question was answered from the case's hint, marked a follow-up.
    let t = turns(&report, "follow-up");
    assert_eq!(t.len(), 2);
    assert!(
        t[0]["output"]
            .as_str()
            .unwrap()
            .contains("Which listing do you mean")
    );
    assert_eq!(t[0].get("followup"), None);
    assert_eq!(
        (t[1]["input"].as_str(), t[1]["followup"].as_bool()),
        (Some("The Mountain Cabin"), Some(true))
    );

    // Branch turns carry their branch; the stream's shape is kept.
    let t = turns(&report, "branching");
    let branches: Vec<Option<&str>> = t.iter().map(|t| t["branch"].as_str()).collect();
    assert_eq!(branches, [None, Some("beach"), Some("last")]);
    let t = turns(&report, "streaming");
    assert_eq!(t[0]["stream"]["done"], true);
    assert!(t[0]["stream"]["deltas"].as_u64().unwrap() > 1);
    assert_eq!(t[0]["tool_calls"][0]["name"], "get_listings");
}

#[test]
fn each_bug_fails_exactly_the_checks_that_catch_it() {
    let cases: [(&str, &[&str]); 5] = [
        (
            "ignore-clarification",
            &[
                "follow-up: icontains \"mountain cabin\", \"64%\"",
                "follow-up: not-contains \"which listing do you mean\"",
            ],
        ),
        (
            "lose-on-restart",
            &[
                "revival-http: regex /Beach House has an occupancy rate of 78%/",
                "revival-stdio: regex /Beach House has an occupancy rate of 78%/",
            ],
        ),
        (
            "leak-branches",
            &[
                "branching: icontains \"city apartment\", \"91%\"",
                "branching: branch-isolation [beach]",
            ],
        ),
        (
            "no-done",
            &["streaming: stream (deltas >= 1, done, non-empty, first token <= 5000 ms)"],
        ),
        (
            "empty-stream",
            &[
                "streaming: stream (deltas >= 1, done, non-empty, first token <= 5000 ms)",
                "streaming: contains \"Beach House\"",
            ],
        ),
    ];
    for (bug, expected) in cases {
        let report = run(bug);
        assert_eq!(with_status(&report, "fail"), set(expected), "bug {bug}");
        assert_eq!(with_status(&report, "error"), BTreeSet::new(), "bug {bug}");
        if bug == "no-done" || bug == "empty-stream" {
            // The stream check gates the judge.
            let judge = verdicts(&report)
                .into_iter()
                .find(|(case, check, _, _)| case == "streaming" && check.starts_with("judge"))
                .unwrap();
            assert_eq!(judge.2, "skipped");
            assert!(judge.3.starts_with("gated by stream"), "{}", judge.3);
        }
    }
}
