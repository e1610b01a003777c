//! Every PASS is earned, end to end against the local OpenAI-compatible server
//! (mock-openai): a budget-stopped run does not pass, required judges fail the
//! gate when absent, and transport retries (injected faults) are counted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

mod support;

use support::{Mock, gavel_command};

/// A suite with one case graded by `contains` and a judge; `judge` is the
/// suite's `judge:` block (YAML flow mapping), `agent` the target's model name.
fn suite(url: &str, judge: &str, agent: &str) -> String {
    format!(
        r#"
name: gates
judge: {judge}
targets:
  agent:
    type: chat
    model: openai-compatible:{agent}@{url}/v1
    system: You greet people.
cases:
  - id: greet
    input: Hello there
    criteria: Greets the user back.
    checks:
      - {{type: contains, value: "You said"}}
      - {{type: judge, scale: "1-5", threshold: 4}}
"#
    )
}

fn gavel(dir: &Path, args: &[&str]) -> Output {
    let db = format!("sqlite://{}", dir.join("g.db").display());
    let mut cmd = gavel_command(dir);
    cmd.args(args).args(["--db", &db]);
    cmd.output().unwrap()
}

fn shown(out: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The verdict of `kind` in the report's first result's first repeat.
fn verdict<'a>(report: &'a Value, kind: &str) -> &'a Value {
    report["detailed_results"][0]["repeats"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["kind"] == kind)
        .unwrap()
}

#[test]
fn required_judges_fail_the_gate_naming_the_unjudged_checks() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("loose.yaml"), suite(&mock.url, "{}", "agent")).unwrap();
    std::fs::write(
        d.join("strict.yaml"),
        suite(&mock.url, "{required: true}", "agent"),
    )
    .unwrap();
    let named = "judges are required but 1 judged check had no judge: greet [agent] judge";

    // No judge anywhere: the judge is skipped and the run passes with skipped checks.
    let out = gavel(d, &["run", "loose.yaml", "-o", "loose.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(
        shown(&out).contains("Passed with skipped checks"),
        "{}",
        shown(&out)
    );
    let loose = read(&d.join("loose.json"));
    assert_eq!(verdict(&loose, "judge")["status"], "skipped");
    assert_eq!(
        verdict(&loose, "judge")["evidence"]["judge_unavailable"],
        true
    );
    assert_eq!(loose["gate"]["judges"], Value::Null);

    // --require-judges: the judge is an error and the gate fails, naming it.
    let out = gavel(
        d,
        &["run", "loose.yaml", "--require-judges", "-o", "req.json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap()
        .to_owned();
    assert!(last.starts_with("FAIL"), "{last}");
    assert!(last.contains(named), "{last}");
    let req = read(&d.join("req.json"));
    let judge = verdict(&req, "judge");
    assert_eq!(judge["status"], "error", "{judge:#}");
    assert!(
        judge["reason"]
            .as_str()
            .unwrap()
            .contains("judges are required"),
        "{judge:#}"
    );
    assert_eq!(req["gate"]["passed"], false);
    assert_eq!(req["gate"]["exit_code"], 1);
    assert_eq!(req["gate"]["judges"]["unjudged"], 1);
    assert_eq!(req["gate"]["judges"]["passed"], false);

    // The suite setting asks the same.
    let out = gavel(d, &["run", "strict.yaml", "-o", "strict.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(shown(&out).contains(named), "{}", shown(&out));

    // `gavel report --require-judges` re-gates the first (skipping) run.
    let first = loose["run"]["id"].as_str().unwrap();
    let out = gavel(d, &["report", first, "--require-judges"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(shown(&out).contains(named), "{}", shown(&out));
    // …and the suite-required run stays failed when rebuilt without the flag.
    let required = read(&d.join("strict.json"))["run"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = gavel(d, &["report", &required]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));

    // With a judge, required judges pass.
    let judge_id = format!("openai-compatible:judge@{}/v1", mock.url);
    let out = gavel(
        d,
        &[
            "run",
            "loose.yaml",
            "--require-judges",
            "--judge",
            &judge_id,
            "-o",
            "ok.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let ok = read(&d.join("ok.json"));
    assert_eq!(verdict(&ok, "judge")["status"], "pass");
    assert_eq!(ok["gate"]["judges"]["passed"], true);
    assert_eq!(ok["gate"]["judges"]["unjudged"], 0);
}

#[test]
fn judge_and_target_retries_are_counted_in_verdicts_and_totalled() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The judge answers 429 (Retry-After: 0) to each request the first time,
    // the agent's model 503.
    let judge = format!(
        "{{model: \"openai-compatible:flaky-judge@{}/v1\"}}",
        mock.url
    );
    std::fs::write(d.join("s.yaml"), suite(&mock.url, &judge, "unstable-agent")).unwrap();

    let out = gavel(d, &["run", "s.yaml", "-o", "r.json", "-o", "r.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let r = read(&d.join("r.json"));
    let judge = verdict(&r, "judge");
    assert_eq!(judge["status"], "pass", "{judge:#}");
    assert_eq!(
        judge["evidence"]["attempts"], 1,
        "one answer asked for: {judge:#}"
    );
    assert_eq!(
        judge["evidence"]["transport"],
        json!({"attempts": 2, "retries": 1, "rate_limited": 1, "malformed": 0}),
        "{judge:#}"
    );
    let turn = &r["detailed_results"][0]["repeats"][0]["transcript"]["turns"][0];
    assert_eq!(
        turn["attempts"],
        json!({"attempts": 2, "retries": 1, "rate_limited": 0, "malformed": 0}),
        "{turn:#}"
    );
    assert_eq!(
        r["summary"]["transport"],
        json!({
            "target": {"attempts": 2, "retries": 1, "rate_limited": 0, "malformed": 0},
            "judges": {"attempts": 2, "retries": 1, "rate_limited": 1, "malformed": 0},
        })
    );
    let line =
        "Retries: targets 1 in 2 tries (0 rate-limited) · judges 1 in 2 tries (1 rate-limited)";
    assert!(shown(&out).contains(line), "{}", shown(&out));
    let md = std::fs::read_to_string(d.join("r.md")).unwrap();
    assert!(md.contains(line), "{md}");
    // 2 agent requests + 2 judge requests reached the server.
    assert_eq!(mock.requests(), 4);
}

#[test]
fn a_run_stopped_by_max_cost_after_3_of_8_cases_does_not_pass() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let priced = |n: usize| {
        let mut s = format!(
            "name: budget\njudge:\n  prices:\n    \"openai-compatible:agent@{url}/v1\": {{input_per_mtok: 1000.0, output_per_mtok: 1000.0}}\ntargets:\n  agent: {{type: chat, model: \"openai-compatible:agent@{url}/v1\"}}\ncases:\n",
            url = mock.url
        );
        for i in 0..n {
            s.push_str(&format!(
                "  - {{id: c{i}, input: Same question, checks: [{{type: contains, value: You said}}]}}\n"
            ));
        }
        s
    };
    // What one case costs, from a run of one.
    std::fs::write(d.join("one.yaml"), priced(1)).unwrap();
    let out = gavel(d, &["run", "one.yaml", "-o", "one.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let each = read(&d.join("one.json"))["summary"]["cost_usd"]
        .as_f64()
        .unwrap();
    assert!(each > 0.0);

    // A budget of 2.5 cases, one case at a time: the third reaches it.
    std::fs::write(d.join("eight.yaml"), priced(8)).unwrap();
    let budget = format!("{}", each * 2.5);
    let out = gavel(
        d,
        &[
            "run",
            "eight.yaml",
            "-j",
            "1",
            "--no-cache",
            "--max-cost",
            &budget,
            "-o",
            "eight.json",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", shown(&out));
    let r = read(&d.join("eight.json"));
    assert_eq!(r["summary"]["passed"], 3, "{:#}", r["summary"]);
    assert_eq!(r["summary"]["planned"], 8);
    assert_eq!(r["summary"]["not_run"], 5);
    assert_eq!(r["gate"]["passed"], false);
    assert_eq!(r["gate"]["verdict"], "INCOMPLETE");
    assert_eq!(r["gate"]["unfinished"]["reason"], "budget-stopped");
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap()
        .to_owned();
    assert!(last.starts_with("INCOMPLETE"), "{last}");
    assert!(
        last.contains("5 of 8 planned executions did not run"),
        "{last}"
    );
}
