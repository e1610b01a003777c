//! Judge panels end to end: `examples/panels` against the local OpenAI-compatible
//! fake; the JSON report keeps every stage, round, specialist and node.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

mod support;

use support::Mock;

/// The only verdict of `case`.
fn verdict(report: &Value, case: &str) -> Value {
    let d = report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == case)
        .unwrap_or_else(|| panic!("no {case} in {report:#}"));
    let vs = d["repeats"][0]["verdicts"].as_array().unwrap();
    assert_eq!(vs.len(), 1, "{vs:#?}");
    vs[0].clone()
}

#[test]
fn every_panel_kind_runs_against_the_fake_and_the_report_shows_every_stage_and_round() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/panels/suite.yaml");
    let suite = std::fs::read_to_string(example)
        .unwrap()
        .replace("http://127.0.0.1:8080", &mock.url);
    let suite_file = dir.path().join("suite.yaml");
    std::fs::write(&suite_file, suite).unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let run = |name: &str| -> Value {
        let report_file = dir.path().join(name);
        let mut cmd = support::gavel_command(dir.path());
        cmd.args([
            "run",
            suite_file.to_str().unwrap(),
            "--db",
            &db,
            "--quiet",
            "-o",
            report_file.to_str().unwrap(),
        ]);
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "two cases fail on purpose\n{stdout}\n{stderr}"
        );
        serde_json::from_str(&std::fs::read_to_string(&report_file).unwrap()).unwrap()
    };
    let report = run("r.json");

    let v = verdict(&report, "procedural-pipeline");
    assert_eq!(
        (&v["kind"], &v["status"]),
        (&"procedural".into(), &"pass".into()),
        "{v:#}"
    );
    let stages = v["evidence"]["stages"].as_array().unwrap();
    let names: Vec<&str> = stages.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["format", "accuracy", "tone"]);
    for s in stages {
        assert_eq!(s["status"], "pass", "{s:#}");
    }
    assert!(
        stages[1]["evidence"]["input_tokens"].as_u64().unwrap() > 0,
        "{v:#}"
    );
    assert_eq!(stages[2]["evidence"]["score"], 5);

    let v = verdict(&report, "procedural-critical-stop");
    assert_eq!(v["status"], "fail", "{v:#}");
    assert_eq!(v["evidence"]["stages"].as_array().unwrap().len(), 1);
    assert_eq!(v["evidence"]["stopped_at"], "lists-houses");
    assert_eq!(v["evidence"]["not_run"], serde_json::json!(["accuracy"]));

    let v = verdict(&report, "consensus-converges");
    assert_eq!(
        (&v["kind"], &v["status"]),
        (&"consensus".into(), &"pass".into()),
        "{v:#}"
    );
    let rounds = v["evidence"]["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{v:#}");
    let first: Vec<i64> = rounds[0]["judges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["raw_score"].as_i64().unwrap())
        .collect();
    assert_eq!(first, [5, 1, 5], "the harsh judge starts low");
    assert!((rounds[0]["variance"].as_f64().unwrap() - 2.0 / 9.0).abs() < 1e-9);
    assert_eq!(rounds[1]["variance"], 0.0);
    assert_eq!(v["evidence"]["converged"], true);
    assert_eq!(v["score"], 1.0);
    assert!(
        v["reason"].as_str().unwrap().contains("0.2222 → 0.0000"),
        "{v:#}"
    );

    let v = verdict(&report, "reactive-deep-dive");
    assert_eq!(
        (&v["kind"], &v["status"]),
        (&"reactive".into(), &"pass".into()),
        "{v:#}"
    );
    let steps = v["evidence"]["steps"].as_array().unwrap();
    let kinds: Vec<&str> = steps.iter().map(|s| s["step"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "router",
            "specialist",
            "specialist",
            "deep_dive",
            "synthesis"
        ],
        "{v:#}"
    );
    assert_eq!(v["evidence"]["routed_to"], json!(["accuracy", "safety"]));
    assert_eq!(steps[2]["status"], "fail", "the harsh safety specialist");
    assert!(steps[0]["evidence"].is_null() && steps[0]["input_tokens"].as_u64().unwrap() > 0);
    assert!(
        steps[3]["because"][0]
            .as_str()
            .unwrap()
            .contains("disagree"),
        "{v:#}"
    );

    let v = verdict(&report, "reactive-one-specialist");
    assert_eq!(v["status"], "pass", "{v:#}");
    assert_eq!(v["evidence"]["routed_to"], json!(["format"]));
    assert_eq!(v["evidence"]["deep_dive"], false);
    assert_eq!(v["evidence"]["steps"].as_array().unwrap().len(), 3);

    let v = verdict(&report, "dag-partial-path");
    assert_eq!(
        (&v["kind"], &v["status"]),
        (&"dag".into(), &"pass".into()),
        "{v:#}"
    );
    assert_eq!(
        v["evidence"]["nodes"],
        json!(["summary", "names-house", "completeness", "grade", "right"])
    );
    assert_eq!(v["score"], 0.5, "the partial edge weighs 0.5");
    let path = v["evidence"]["path"].as_array().unwrap();
    assert_eq!(path[2]["answer"], json!(["partial"]));
    assert_eq!(path[3]["evidence"]["score"], 1.0);

    let v = verdict(&report, "dag-no-path");
    assert_eq!(v["status"], "fail", "{v:#}");
    assert_eq!(
        v["evidence"]["nodes"],
        json!(["summary", "names-house", "missing"])
    );
    assert_eq!(v["score"], 0.1);

    // Judge noise: the first repeat's judge verdict re-judged twice, fresh calls.
    let noise = report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "judge-noise")
        .unwrap()
        .clone();
    let rejudged = |d: &Value| d["repeats"][0]["verdicts"][0]["evidence"]["rejudged"].clone();
    assert_eq!(
        rejudged(&noise),
        json!([
            {"status": "pass", "score": 1.0, "cost_usd": null, "cached": false},
            {"status": "pass", "score": 1.0, "cost_usd": null, "cached": false},
        ]),
        "{noise:#}"
    );
    assert!(noise["repeats"][1]["verdicts"][0]["evidence"]["rejudged"].is_null());
    assert_eq!(noise["judge_noise"]["checks"][0]["judgements"], 3);
    assert_eq!(noise["judge_noise"]["max_stddev"], 0.0);
    assert_eq!(noise["repeat_stats"]["n"], 2);

    // Robustness: every input run twice, decided on the mean and spread.
    let robust = report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "robust-variants")
        .unwrap()
        .clone();
    assert_eq!(robust["status"], "pass", "{robust:#}");
    let per_input = robust["robustness"]["per_input"].as_array().unwrap();
    assert_eq!(per_input.len(), 3, "{robust:#}");
    for i in per_input {
        assert_eq!(
            (&i["runs"], &i["mean"]),
            (&json!(2), &json!(1.0)),
            "{robust:#}"
        );
    }
    assert_eq!(robust["robustness"]["stddev"], 0.0);
    let inputs: Vec<&str> = robust["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["transcript"]["turns"][0]["input"].as_str().unwrap())
        .collect();
    assert_eq!(inputs.len(), 6);
    assert_eq!(inputs[1], "Which properties do I have listed?");
    assert_eq!(inputs[5], "Show me my listings, please.");

    // A second run is served from the cache, re-judgements included.
    let again = run("again.json");
    let noise = again["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "judge-noise")
        .unwrap()
        .clone();
    for r in rejudged(&noise).as_array().unwrap() {
        assert_eq!(r["cached"], true, "{noise:#}");
    }
}

#[test]
fn a_broken_panel_is_refused_at_load_naming_the_node_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        "cases:\n  - id: c\n    input: q\n    checks:\n      - type: dag\n        nodes:\n          - name: a\n            binary: Is it right?\n            yes: b\n            no: nowhere\n          - {name: b, verdict: pass}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gavel"))
        .args(["validate", file.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}:10:17: case `c`: checks[0].nodes[0].no: node `a` leads to `nowhere`, which is not a node (nodes: a, b)",
            file.display()
        )),
        "{stderr}"
    );
}
