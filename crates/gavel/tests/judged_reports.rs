//! Runs with a judge configured (the local `mock-openai` server): the quickstart
//! passes whole, and a seed 002 dataset's report holds every key of seed 002's
//! `test-report.json`, graded by the six-dimension rubric with its suggestions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::{Mock, agent_bin, free_port, gavel_command, workspace};

/// A targets file in `dir` that starts the example agent on a free port.
fn agent_targets(dir: &Path) -> String {
    let port = free_port();
    let targets = format!(
        "targets:\n  property-agent:\n    type: http\n    url: http://127.0.0.1:{port}/chat\n    response: {{output: /reply, tool_calls: /tool_calls}}\n    restart: {{url: \"http://127.0.0.1:{port}/restart\"}}\n    start:\n      command: [{bin:?}, --addr, \"127.0.0.1:{port}\"]\n      ready_url: http://127.0.0.1:{port}/health\n      timeout_s: 60\n",
        bin = agent_bin().display().to_string(),
    );
    let path = dir.join("targets.yaml");
    std::fs::write(&path, targets).unwrap();
    path.display().to_string()
}

/// `gavel run TARGETS SUITE --judge <mock> -o report.json`, and the report.
fn run_judged(suite: &str) -> (Output, Value) {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let targets = agent_targets(dir.path());
    let judge = format!("openai-compatible:mock@{}/v1", mock.url);
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let report = dir.path().join("report.json");
    let out = gavel_command(dir.path())
        .args([
            "run", &targets, suite, "--judge", &judge, "--db", &db, "--quiet",
        ])
        .arg("-o")
        .arg(&report)
        .env_remove("PROPERTY_AGENT_BUG")
        .output()
        .unwrap();
    let json = std::fs::read_to_string(&report)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (out, json)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_quickstart_passes_with_a_judge_configured() {
    let suite = workspace().join("examples/quickstart/suite.yaml");
    let (out, report) = run_judged(suite.to_str().unwrap());
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(report["summary"]["failed"], 0, "{:#}", report["summary"]);
    assert_eq!(report["summary"]["errors"], 0, "{:#}", report["summary"]);
    assert_eq!(report["summary"]["skipped"], 0, "judged cases ran");
    let asks = report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "ambiguous-asks-back")
        .unwrap();
    let turns = asks["repeats"][0]["transcript"]["turns"]
        .as_array()
        .unwrap();
    assert_eq!(turns.len(), 1, "the question is left unanswered");
}

/// Every key path of seed 002's report object (`a.b`, `list[].key`, `map.*.key`).
fn seed_002_key_paths() -> Vec<String> {
    let source =
        std::fs::read_to_string(workspace().join("testdata/seeds/002-test-report.ts")).unwrap();
    let mut stack: Vec<String> = Vec::new();
    let mut paths = Vec::new();
    for line in source.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let line = line.trim();
        if line.starts_with('}') {
            stack.pop();
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.contains(' ') {
            continue; // `const report = {`
        }
        let path = stack
            .iter()
            .chain([&key.to_owned()])
            .cloned()
            .collect::<Vec<_>>();
        paths.push(path.join("."));
        let value = value.trim();
        if value == "{" {
            stack.push(key.to_owned());
        } else if value.ends_with("({") {
            stack.push(format!("{key}[]"));
        } else if value.starts_with("Object.fromEntries") {
            // The seed's `tagResults` values: `{ pass: 0, total: 0 }`.
            paths.push(format!("{key}.*"));
            paths.push(format!("{key}.*.pass"));
            paths.push(format!("{key}.*.total"));
        }
    }
    paths
}

/// Whether `path` exists in `doc` (`[]`: in every element, `*`: in every entry).
fn has_path(doc: &Value, path: &[&str]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return true;
    };
    if first.ends_with("[]") {
        let Some(items) = doc
            .get(first.trim_end_matches("[]"))
            .and_then(Value::as_array)
        else {
            return false;
        };
        return !items.is_empty() && items.iter().all(|i| has_path(i, rest));
    }
    if *first == "*" {
        let Some(map) = doc.as_object() else {
            return false;
        };
        return !map.is_empty() && map.values().all(|v| has_path(v, rest));
    }
    doc.get(first).is_some_and(|v| has_path(v, rest))
}

#[test]
fn a_seed_002_dataset_report_has_every_key_of_the_seeds_report_and_rubric_suggestions() {
    let paths = seed_002_key_paths();
    assert_eq!(paths.len(), 27, "{paths:?}");
    let dataset = workspace().join("examples/seeds/validation-dataset.json");
    let (out, report) = run_judged(dataset.to_str().unwrap());
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    for path in &paths {
        let parts: Vec<&str> = path.split('.').collect();
        assert!(has_path(&report, &parts), "missing `{path}` in {report:#}");
    }
    for result in report["detailed_results"].as_array().unwrap() {
        let suggestions = result["suggestions"].as_str().unwrap_or_default();
        assert!(!suggestions.is_empty(), "{result:#}");
        let verdicts = result["repeats"][0]["verdicts"].as_array().unwrap();
        assert!(
            verdicts.iter().any(|v| v["kind"] == "rubric"),
            "success_criteria are graded by the rubric: {verdicts:?}"
        );
        assert!(!verdicts.iter().any(|v| v["kind"] == "judge"));
        assert!(
            result["scores"]["accuracy"].as_f64().is_some(),
            "{result:#}"
        );
    }
}
