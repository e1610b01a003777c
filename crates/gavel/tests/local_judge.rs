//! `gavel run … --judge local:<the Gemma GGUF>`: a judged case on the local model,
//! its verdict parsed and stored like any other (pass or fail, whatever the model
//! says; never error).
#![allow(clippy::unwrap_used)]
#![cfg(feature = "local")]

use std::process::Command;

use serde_json::Value;

#[path = "../../gavel-local/tests/support/mod.rs"]
mod local_support;

const SUITE: &str = r#"
name: local-judge
judge:
  max_tokens: 160
targets:
  agent:
    type: command
    command: [sh, -c, 'while IFS= read -r line; do printf "{\"output\": \"Paris is the capital of France.\"}\n"; done']
cases:
  - id: capital
    input: What is the capital of France?
    criteria: Names Paris as the capital of France.
    checks:
      - {type: judge, scale: "1-5", threshold: 3}
"#;

#[test]
fn a_judged_case_runs_on_the_local_model_and_its_verdict_is_stored() {
    let Some(model) =
        local_support::gemma("a_judged_case_runs_on_the_local_model_and_its_verdict_is_stored")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.yaml");
    std::fs::write(&suite, SUITE).unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let report = dir.path().join("r.json");
    let judge = format!("local:{}?threads=1&ctx=2048", model.display());
    let out = Command::new(env!("CARGO_BIN_EXE_gavel"))
        .args(["run", suite.to_str().unwrap(), "--db", &db, "--quiet"])
        .args(["--judge", &judge, "-o", report.to_str().unwrap()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "a verdict, not an infrastructure error: {stderr}"
    );
    assert!(
        stderr.contains(&format!("judge: {judge} (named by --judge)")),
        "{stderr}"
    );

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let verdicts = &report["detailed_results"][0]["repeats"][0]["verdicts"];
    let verdict = verdicts
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["kind"] == "judge")
        .unwrap();
    let status = verdict["status"].as_str().unwrap();
    assert!(matches!(status, "pass" | "fail"), "{verdict:#}");
    let score = verdict["score"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&score), "{verdict:#}");
    assert!(
        verdict["evidence"]["input_tokens"].as_u64().unwrap() > 0,
        "{verdict:#}"
    );
    assert!(
        verdict["evidence"]["output_tokens"].as_u64().unwrap() > 0,
        "{verdict:#}"
    );
    assert_eq!(verdict["cost_usd"].as_f64(), Some(0.0), "{verdict:#}");
    assert_eq!(verdict["evidence"]["model"], judge.as_str(), "{verdict:#}");
}
