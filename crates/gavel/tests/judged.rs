//! Judges end to end: deterministic checks, `judge`, `rubric`, `pairwise` and `select-best`
//! against a local OpenAI-compatible server; the cache; missing credentials.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

mod support;

use support::{Mock, gavel_command};

fn suite(url: &str, judge: &str) -> String {
    format!(
        r#"
name: judged
judge:
  model: {judge}
  prices:
    "openai-compatible:judge@{url}/v1": {{input_per_mtok: 2.0, output_per_mtok: 8.0}}
    "openai-compatible:agent@{url}/v1": {{input_per_mtok: 1.0, output_per_mtok: 4.0}}
    "openai-compatible:other@{url}/v1": {{input_per_mtok: 1.0, output_per_mtok: 4.0}}
targets:
  agent:
    type: chat
    model: openai-compatible:agent@{url}/v1
    system: You manage properties.
  other:
    type: chat
    model: openai-compatible:other@{url}/v1
    system: You manage properties, tersely.
cases:
  - id: mixed
    input: What are my listings?
    expected_output: Beach House, Mountain Cabin, City Apartment
    criteria: Names the user's listings.
    checks:
      - {{type: contains, value: "You said"}}
      - {{type: judge, scale: "1-5", threshold: 4}}
      - {{type: rubric}}
      - {{type: pairwise, against: {{target: other}}, biased_ties_pass: true}}
"#
    )
}

fn gavel(dir: &Path, args: &[&str], env_off: &[&str]) -> Output {
    let mut cmd = gavel_command(dir);
    cmd.args(args);
    for var in env_off {
        cmd.env_remove(var);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn verdicts(report: &Path, case: &str) -> Vec<Value> {
    let r: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let d = r["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == case && d["target"] == "agent")
        .unwrap()
        .clone();
    d["repeats"][0]["verdicts"].as_array().unwrap().clone()
}

fn kind<'a>(vs: &'a [Value], kind: &str) -> &'a Value {
    vs.iter()
        .find(|v| v["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} verdict in {vs:#?}"))
}

#[test]
fn a_mixed_suite_is_judged_stored_and_served_from_the_cache_the_second_time() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite_file = dir.path().join("suite.yaml");
    std::fs::write(
        &suite_file,
        suite(
            &mock.url,
            &format!("openai-compatible:judge@{}/v1", mock.url),
        ),
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let report: PathBuf = dir.path().join("r.json");
    let args = [
        "run",
        suite_file.to_str().unwrap(),
        "--db",
        &db,
        "--quiet",
        "-o",
        report.to_str().unwrap(),
    ];

    let out = gavel(dir.path(), &args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let vs = verdicts(&report, "mixed");
    assert_eq!(kind(&vs, "contains")["status"], "pass");
    for k in ["judge", "rubric"] {
        let v = kind(&vs, k);
        assert_eq!(v["status"], "pass", "{v:#}");
        assert!(
            !v["reason"].as_str().unwrap().is_empty(),
            "reasoning is stored: {v:#}"
        );
        assert!(v["evidence"]["input_tokens"].as_u64().unwrap() > 0, "{v:#}");
        assert!(
            v["cost_usd"].as_f64().unwrap() > 0.0,
            "priced from the suite's table: {v:#}"
        );
        assert_eq!(v["evidence"]["cached"], false);
    }
    assert_eq!(kind(&vs, "judge")["score"], 1.0, "5 on 1-5 normalises to 1");
    assert!(
        kind(&vs, "rubric")["evidence"]["dimensions"].is_object()
            || kind(&vs, "rubric")["evidence"]["accuracy"].is_object()
            || kind(&vs, "rubric")["evidence"]
                .to_string()
                .contains("accuracy")
    );
    let pairwise = kind(&vs, "pairwise");
    assert_eq!(
        pairwise["score"], 0.5,
        "the mock always answers A: the orders disagree, a tie: {pairwise:#}"
    );
    assert_eq!(
        pairwise["status"], "pass",
        "a biased tie passes only with biased_ties_pass: {pairwise:#}"
    );
    assert_eq!(pairwise["evidence"]["position_bias"], true);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        summary["summary"]["pairwise"]["comparisons"], 1,
        "position bias is counted per run"
    );
    assert_eq!(summary["summary"]["pairwise"]["position_bias"], 1);
    assert!(
        text(&out.stdout)
            .contains("Pairwise: 1 comparisons judged in both orders, 1 with position bias"),
        "{}",
        text(&out.stdout)
    );
    let calls = mock.requests();
    assert!(
        calls >= 6,
        "2 target calls, judge, rubric, 2 pairwise orders: {calls}"
    );

    // The same run configuration again: every model answer comes from the cache.
    let out = gavel(dir.path(), &args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        mock.requests(),
        calls,
        "a second run with the cache makes no model calls"
    );
    let again = verdicts(&report, "mixed");
    assert_eq!(
        kind(&again, "judge")["evidence"]["cached"],
        true,
        "{again:#?}"
    );

    // --cache-only with a cold cache: judges error instead of calling the model.
    let cold = format!("sqlite://{}", dir.path().join("cold.db").display());
    let out = gavel(
        dir.path(),
        &[
            "run",
            suite_file.to_str().unwrap(),
            "--db",
            &cold,
            "--quiet",
            "--cache-only",
        ],
        &[],
    );
    assert_eq!(mock.requests(), calls, "--cache-only never calls a model");
    assert_ne!(out.status.code(), Some(0));
}

/// Identical model requests in flight at once make one call: six targets that
/// answer alike, judged, cost as many calls with 32 executions in flight as with one.
#[test]
fn paid_calls_do_not_depend_on_parallelism() {
    let mock = Mock::start_with(&["--latency-ms", "150"]);
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("openai-compatible:agent@{}/v1", mock.url);
    let targets: String = (0..6)
        .map(|n| format!("  t{n}: {{type: chat, model: \"{agent}\"}}\n"))
        .collect();
    let cases: String = (0..4)
        .map(|n| {
            format!(
                "  - {{id: c{n}, input: \"question {n}\", criteria: Answers., \
                 checks: [{{type: judge}}]}}\n"
            )
        })
        .collect();
    let suite_file = dir.path().join("suite.yaml");
    std::fs::write(
        &suite_file,
        format!(
            "name: alike\njudge:\n  model: openai-compatible:judge@{}/v1\ntargets:\n{targets}cases:\n{cases}",
            mock.url
        ),
    )
    .unwrap();
    let mut calls = Vec::new();
    for jobs in ["1", "32"] {
        let before = mock.requests();
        let db = format!(
            "sqlite://{}",
            dir.path().join(format!("j{jobs}.db")).display()
        );
        let out = gavel(
            dir.path(),
            &[
                "run",
                suite_file.to_str().unwrap(),
                "--db",
                &db,
                "--quiet",
                "-j",
                jobs,
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        calls.push(mock.requests() - before);
    }
    assert_eq!(
        calls,
        [8, 8],
        "4 distinct agent requests and 4 distinct judge requests, at -j 1 and -j 32"
    );
}

#[test]
fn without_credentials_judges_are_skipped_with_the_reason_and_code_checks_still_run() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite_file = dir.path().join("suite.yaml");
    std::fs::write(&suite_file, suite(&mock.url, "openai:gpt-5-mini")).unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let report = dir.path().join("r.json");
    let args = [
        "run",
        suite_file.to_str().unwrap(),
        "--db",
        &db,
        "--quiet",
        "-o",
        report.to_str().unwrap(),
    ];
    let out = gavel(dir.path(), &args, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let vs = verdicts(&report, "mixed");
    assert_eq!(kind(&vs, "contains")["status"], "pass");
    for k in ["judge", "rubric", "pairwise"] {
        let v = kind(&vs, k);
        assert_eq!(v["status"], "skipped", "{v:#}");
        assert!(
            v["reason"]
                .as_str()
                .unwrap()
                .contains("OPENAI_API_KEY is not set"),
            "{v:#}"
        );
    }
    // --strict turns the missing credentials into errors for CI.
    let mut strict = args.to_vec();
    strict.push("--strict");
    let out = gavel(dir.path(), &strict, &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
}

#[test]
fn select_best_marks_one_winner_and_reports_the_positions_chosen() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let url = &mock.url;
    let suite_file = dir.path().join("best.yaml");
    std::fs::write(
        &suite_file,
        format!(
            r#"
name: best
judge:
  model: openai-compatible:judge@{url}/v1
targets:
  agent: {{type: chat, model: "openai-compatible:agent@{url}/v1"}}
  other: {{type: chat, model: "openai-compatible:other@{url}/v1"}}
cases:
  - id: best
    input: What are my listings?
    repeat: 2
    checks: [{{type: select-best, criteria: Names the listings.}}]
"#
        ),
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let report = dir.path().join("r.json");
    let args = [
        "run",
        suite_file.to_str().unwrap(),
        "--db",
        &db,
        "--quiet",
        "-o",
        report.to_str().unwrap(),
    ];
    let out = gavel(dir.path(), &args, &[]);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    // The mock picks the last answer shown: one winner per repeat, the order decides.
    let mut winners = 0;
    for d in r["detailed_results"].as_array().unwrap() {
        for repeat in d["repeats"].as_array().unwrap() {
            let v = &repeat["verdicts"][0];
            assert_eq!(v["kind"], "select-best", "{v:#}");
            if v["status"] == "pass" {
                winners += 1;
                assert_eq!(v["evidence"]["position"], 2, "{v:#}");
            } else {
                assert_eq!(v["status"], "fail", "{v:#}");
            }
        }
    }
    assert_eq!(winners, 2, "one winner in each of the 2 repeats");
    let best = &r["summary"]["select_best"];
    assert_eq!(best["comparisons"], 2, "{best}");
    assert_eq!(
        best["chosen_by_position"],
        serde_json::json!([0, 2]),
        "{best}"
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Select-best: 2 comparisons")
            && stdout.contains("position 1 0 (0%), position 2 2 (100%)"),
        "{stdout}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "each repeat has a loser: {stdout}"
    );
}
