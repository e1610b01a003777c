//! `step-score` and a judge-extracted `grounding` claim end to end: a command
//! target that calls two tools, judged by the local OpenAI-compatible mock; the
//! verdicts are stored and read back from the store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;
use support::{Mock, gavel_command};

/// The agent answers every message with two tool calls and a total of 1; the mock
/// judge scores each step 1 and extracts 1 (the favourable instance of each
/// answer schema).
fn suite(url: &str) -> String {
    format!(
        r#"
name: step-judges
judge:
  model: openai-compatible:judge@{url}/v1
  prices:
    "openai-compatible:judge@{url}/v1": {{input_per_mtok: 2.0, output_per_mtok: 8.0}}
targets:
  agent:
    type: command
    command: [sh, -c, 'while IFS= read -r line; do printf "%s\n" "{{\"output\": \"February earned 1 dollar.\", \"tool_calls\": [{{\"name\": \"get_revenue_data\", \"arguments\": {{\"month\": \"2026-02\"}}, \"result\": {{\"total\": 1}}}}, {{\"name\": \"format_money\", \"arguments\": {{\"amount\": 1}}, \"result\": \"1 dollar\"}}]}}"; done']
    response: {{output: /output, tool_calls: /tool_calls}}
cases:
  - id: revenue
    input: How much revenue did the City Apartment make in February?
    checks:
      - type: step-score
        criteria: Each call fetches or formats what the question needs.
        weights: {{get_revenue_data: 2}}
      - type: grounding
        claim: {{judge: the total revenue for February}}
        oracle: {{value: 1}}
        tolerance: 0
"#
    )
}

fn gavel(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    gavel_command(dir).args(args).output().unwrap()
}

fn verdicts(report: &std::path::Path) -> Vec<Value> {
    let r: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    r["detailed_results"][0]["repeats"][0]["verdicts"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn step_scores_and_a_judged_claim_are_judged_and_stored() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite_file = dir.path().join("suite.yaml");
    std::fs::write(&suite_file, suite(&mock.url)).unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let report = dir.path().join("r.json");
    let out = gavel(
        dir.path(),
        &[
            "run",
            suite_file.to_str().unwrap(),
            "--db",
            &db,
            "--quiet",
            "-o",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Read back from the store, not from the run's own report.
    let stored = dir.path().join("stored.json");
    let out = gavel(
        dir.path(),
        &[
            "report",
            "latest",
            "--db",
            &db,
            "-o",
            stored.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let vs = verdicts(&stored);
    assert_eq!(vs.len(), 2, "{vs:#?}");

    let steps = &vs[0];
    assert_eq!(
        (&steps["kind"], &steps["status"]),
        (&"step-score".into(), &"pass".into()),
        "{steps:#}"
    );
    assert_eq!(steps["score"], 1.0);
    let listed = steps["evidence"]["steps"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{steps:#}");
    assert_eq!(listed[0]["tool"], "get_revenue_data");
    assert_eq!(listed[0]["weight"], 2.0);
    assert_eq!(listed[1]["tool"], "format_money");
    assert!(!listed[1]["explanation"].as_str().unwrap().is_empty());
    assert!(steps["evidence"]["template_hash"].as_str().unwrap().len() == 16);
    assert!(steps["cost_usd"].as_f64().unwrap() > 0.0, "{steps:#}");
    assert!(
        steps["reason"]
            .as_str()
            .unwrap()
            .starts_with("mean 1.00 >= threshold 0.5 over 2 tool calls"),
        "{steps:#}"
    );

    let grounding = &vs[1];
    assert_eq!(grounding["kind"], "grounding");
    assert_eq!(grounding["status"], "pass", "{grounding:#}");
    assert_eq!(grounding["evidence"]["claimed"], 1.0);
    assert_eq!(grounding["evidence"]["found"], true);
    assert_eq!(
        grounding["evidence"]["quantity"],
        "the total revenue for February"
    );
    assert!(grounding["evidence"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(
        grounding["evidence"]["raw"]
            .as_str()
            .unwrap()
            .contains("found")
    );
    assert!(grounding["cost_usd"].as_f64().unwrap() > 0.0);
    assert!(mock.requests() >= 3, "two step calls and one extraction");
}
