//! `gavel import promptfoo` end to end: a promptfoo config converted, validated
//! and run against the local OpenAI-compatible mock (targets and judge).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::Value;

mod support;

use support::{Mock, gavel_command};

fn config(url: &str) -> String {
    format!(
        r#"description: Echo agent
prompts:
  - "Tell me about {{{{topic}}}}"
providers:
  - id: openai:chat:agent
    label: agent
    config:
      apiBaseUrl: {url}/v1
      temperature: 0
defaultTest:
  options:
    provider:
      id: openai:chat:judge
      config:
        apiBaseUrl: {url}/v1
tests:
  - file://topics.csv
  - description: rubric
    vars:
      topic: whales
    assert:
      - type: icontains
        value: "{{{{ topic }}}}"
      - type: llm-rubric
        value: Talks about whales
      - type: javascript
        value: output.length > 3
      - type: g-eval
        value: Talks about whales
      - type: factuality
        value: The user asked about whales
      - type: webhook
        value: https://example.com/grade
"#
    )
}

const TOPICS: &str =
    "topic,__expected\nbeaches,contains: You said\nmountains,regex: mountains \\(agent\\)$\n";

fn gavel(dir: &Path, args: &[&str]) -> Output {
    gavel_command(dir).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_promptfoo_config_is_imported_validated_and_run() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("promptfooconfig.yaml"), config(&mock.url)).unwrap();
    std::fs::write(dir.path().join("topics.csv"), TOPICS).unwrap();

    // validate names the import command for a promptfoo file.
    let out = gavel(dir.path(), &["validate", "promptfooconfig.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("promptfooconfig.yaml looks like a promptfoo config: convert it with `gavel import promptfoo promptfooconfig.yaml -o suite.yaml`"),
        "{}",
        text(&out.stderr)
    );

    let out = gavel(
        dir.path(),
        &[
            "import",
            "promptfoo",
            "promptfooconfig.yaml",
            "-o",
            "suite.yaml",
        ],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: unmapped assert type 'webhook' at promptfooconfig.yaml:32"),
        "{err}"
    );
    assert!(
        err.contains("3 cases, 1 target; 1 item not mapped"),
        "{err}"
    );
    let suite = std::fs::read_to_string(dir.path().join("suite.yaml")).unwrap();
    assert!(
        suite.contains("# gavel import: unmapped assert type 'webhook' at promptfooconfig.yaml:32"),
        "{suite}"
    );

    let out = gavel(dir.path(), &["validate", "suite.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("ok: 3 cases (3 rounds), 1 target"),
        "{}",
        text(&out.stdout)
    );

    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let out = gavel(
        dir.path(),
        &["run", "suite.yaml", "--db", &db, "--quiet", "-o", "r.json"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let results = report["detailed_results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let verdicts = |id: &str| -> Vec<(String, String)> {
        let r = results
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id}: {report:#}"));
        r["repeats"][0]["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["kind"].as_str().unwrap().to_owned(),
                    v["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let pass = |k: &str| (k.to_owned(), "pass".to_owned());
    assert_eq!(verdicts("promptfooconfig-1"), [pass("contains")]);
    assert_eq!(verdicts("promptfooconfig-2"), [pass("regex")]);
    assert_eq!(
        verdicts("rubric"),
        [
            pass("icontains"),
            pass("script"), // the javascript assertion, run by node
            pass("judge"),
            pass("g-eval"),
            pass("factuality")
        ]
    );
    assert!(
        mock.requests() >= 7,
        "three agent answers, one judgement, G-Eval's steps and score, factuality"
    );
}

#[test]
fn run_on_a_promptfoo_config_names_the_import_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("promptfooconfig.yaml"),
        config("http://127.0.0.1:9"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("evals")).unwrap();
    std::fs::write(dir.path().join("evals/checks.yaml"), "tests: []\n").unwrap();
    std::fs::write(
        dir.path().join("evals/promptfooconfig.json"),
        "{\"prompts\": [\"hi\"]}",
    )
    .unwrap();

    let out = gavel(dir.path(), &["run", "promptfooconfig.yaml"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: promptfooconfig.yaml is a promptfoo config, not a gavel suite: convert it with `gavel import promptfoo promptfooconfig.yaml -o suite.yaml`, then `gavel run suite.yaml`"),
        "{err}"
    );
    // Refused before anything runs or a store is made.
    assert!(!dir.path().join(".gavel").exists());

    // A file of promptfoo's shape given by any name, and a directory's promptfooconfig.*.
    let out = gavel(dir.path(), &["run", "evals/checks.yaml", "evals"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for config in ["evals/checks.yaml", "evals/promptfooconfig.json"] {
        assert!(
            err.contains(&format!("`gavel import promptfoo {config} -o suite.yaml`")),
            "{config}: {err}"
        );
    }
}

#[test]
fn an_imported_suite_states_promptfoos_gate() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    // Four tests pass and one fails: 80%, gavel's default gate, but a failed
    // test fails a promptfoo job.
    let mut tests = String::new();
    for (i, expected) in ["You said", "You said", "You said", "You said", "nope"]
        .iter()
        .enumerate()
    {
        tests.push_str(&format!(
            "  - description: t{i}\n    assert:\n      - type: contains\n        value: {expected}\n"
        ));
    }
    let config = format!(
        "prompts: [\"Hello\"]\nproviders:\n  - id: openai:chat:agent\n    config:\n      apiBaseUrl: {}/v1\ntests:\n{tests}",
        mock.url
    );
    std::fs::write(dir.path().join("promptfooconfig.yaml"), config).unwrap();

    let out = gavel(
        dir.path(),
        &[
            "import",
            "promptfoo",
            "promptfooconfig.yaml",
            "-o",
            "suite.yaml",
        ],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("suite.yaml gates at a 100% pass rate"),
        "{err}"
    );
    let suite = std::fs::read_to_string(dir.path().join("suite.yaml")).unwrap();
    assert!(
        suite.contains("promptfoo fails the job when any test fails")
            && suite.contains("gate:\n  min_pass_rate: 100%\n"),
        "{suite}"
    );

    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "suite.yaml", "--db", &db, "--quiet"];
        args.extend_from_slice(extra);
        gavel(dir.path(), &args)
    };
    // 4 of 5 pass: the suite's own gate fails the run, as promptfoo would;
    // the flag still wins when given, and `gavel report` keeps the run's gate.
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let report = gavel(dir.path(), &["report", "latest", "--db", &db]);
    assert_eq!(report.status.code(), Some(1), "{}", text(&report.stdout));
    let out = run(&["--min-pass-rate", "80"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
