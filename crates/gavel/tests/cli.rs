//! The real `gavel` binary against the real example agent, in temp dirs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{agent_bin, free_port, workspace};

/// A temp dir with a targets file that starts the example agent on a free port.
struct Env {
    dir: tempfile::TempDir,
    port: u16,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let targets = format!(
            "targets:\n  property-agent:\n    type: http\n    url: http://127.0.0.1:{port}/chat\n    response: {{output: /reply, tool_calls: /tool_calls}}\n    restart: {{url: \"http://127.0.0.1:{port}/restart\"}}\n    start:\n      command: [{bin:?}, --addr, \"127.0.0.1:{port}\"]\n      ready_url: http://127.0.0.1:{port}/health\n      timeout_s: 60\n",
            bin = agent_bin().display().to_string(),
        );
        std::fs::write(dir.path().join("targets.yaml"), targets).unwrap();
        Env { dir, port }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn db(&self) -> String {
        format!("sqlite://{}", self.path("gavel.db").display())
    }

    fn gavel(&self, args: &[&str]) -> Command {
        let mut cmd = support::gavel_command(self.dir.path());
        cmd.args(args).env_remove("PROPERTY_AGENT_BUG");
        cmd
    }

    fn run_quickstart(&self, extra: &[&str], bug: Option<&str>) -> Output {
        let targets = self.path("targets.yaml");
        let suite = workspace().join("examples/quickstart/suite.yaml");
        let db = self.db();
        let mut args = vec![
            "run",
            targets.to_str().unwrap(),
            suite.to_str().unwrap(),
            "--db",
            &db,
            "--quiet",
        ];
        args.extend_from_slice(extra);
        let mut cmd = self.gavel(&args);
        if let Some(bug) = bug {
            cmd.env("PROPERTY_AGENT_BUG", bug);
        }
        cmd.output().unwrap()
    }
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Counts `<testcase` elements and reads the root's `tests` attribute.
fn junit_counts(path: &Path) -> (usize, Option<String>) {
    use quick_xml::events::Event;
    let xml = std::fs::read_to_string(path).unwrap();
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut cases, mut tests) = (0, None);
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testcase" => cases += 1,
            Event::Start(e) if e.name().as_ref() == b"testsuites" => {
                tests = e
                    .try_get_attribute("tests")
                    .unwrap()
                    .map(|a| text(&a.value));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    (cases, tests)
}

#[test]
fn quickstart_passes_stores_and_reports_in_every_format() {
    let env = Env::new();
    let (j, x, m, h) = (
        env.path("out/r.json"),
        env.path("r.xml"),
        env.path("r.md"),
        env.path("r.html"),
    );
    let out = env.run_quickstart(
        &[
            "-o",
            j.to_str().unwrap(),
            "-o",
            x.to_str().unwrap(),
            "-o",
            m.to_str().unwrap(),
            "-o",
            h.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("PASS: pass rate 100%"),
        "{}",
        text(&out.stdout)
    );
    // The store was checkpointed and closed at exit: no write-ahead log is left.
    for side in ["gavel.db-wal", "gavel.db-shm"] {
        assert!(!env.path(side).exists(), "{side} is left after gavel run");
    }
    let report = json(&j);
    // 11 cases: 10 pass; the judge-only case is skipped, with the reason, as no
    // judge model is configured here.
    assert_eq!(report["summary"]["total"], 11);
    assert_eq!(report["summary"]["passed"], 10);
    assert_eq!(report["summary"]["skipped"], 1);
    assert_eq!(report["summary"]["pass_rate"], 100.0);
    assert_eq!(report["detailed_results"].as_array().unwrap().len(), 11);
    assert_eq!(junit_counts(&x), (11, Some("11".into())));
    assert!(
        std::fs::read_to_string(&m)
            .unwrap()
            .contains("| Pass rate |")
            || std::fs::read_to_string(&m).unwrap().contains("Pass rate")
    );
    assert!(
        std::fs::read_to_string(&h)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );

    // The same reports come back from the store alone.
    let x2 = env.path("again.xml");
    let db = env.db();
    let out = env
        .gavel(&["report", "latest", "--db", &db, "-o", x2.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(junit_counts(&x2), (11, Some("11".into())));
    let run_id = report["run"]["id"].as_str().unwrap();
    let out = env
        .gavel(&["report", &run_id[..8], "--db", &db])
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).contains("10 passed"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn an_injected_bug_fails_the_relevant_cases_and_the_gate() {
    let env = Env::new();
    let j = env.path("r.json");
    let out = env.run_quickstart(&["-o", j.to_str().unwrap()], Some("wrong-count"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let report = json(&j);
    let failed: Vec<&str> = report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "fail")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        [
            "list-listings",
            "occupancy-follow-up",
            "context-survives-revival"
        ]
    );
    assert!(
        text(&out.stdout).contains("missing \"City Apartment\""),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_target_that_is_down_is_an_error_not_a_failure() {
    let env = Env::new();
    let suite = env.path("down.yaml");
    std::fs::write(
        &suite,
        format!("targets:\n  down: {{type: http, url: 'http://127.0.0.1:{}/chat', timeout_s: 2}}\ncases:\n  - {{id: a, input: hi, checks: [{{type: contains, value: x}}]}}\n", env.port),
    )
    .unwrap();
    let db = env.db();
    let out = env
        .gavel(&["run", suite.to_str().unwrap(), "--db", &db, "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("1 errors") || text(&out.stdout).contains("1 error"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn validate_names_file_line_column_and_exits_2() {
    let env = Env::new();
    let syntax = env.path("syntax.yaml");
    std::fs::write(&syntax, "cases:\n  - id: a\n    input: [hi\n").unwrap();
    let unknown = env.path("unknown.yaml");
    std::fs::write(
        &unknown,
        "cases:\n  - id: a\n    input: hi\n    judge_treshold: 0.7\n",
    )
    .unwrap();
    for (file, needle) in [
        (&syntax, "syntax.yaml:3:12:"),
        (
            &unknown,
            "unknown.yaml:4:5: cases[0].judge_treshold: unknown field `judge_treshold`",
        ),
    ] {
        let out = env
            .gavel(&["validate", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains(needle), "{}", text(&out.stderr));
    }
    let out = env
        .gavel(&["validate", unknown.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        text(&out.stderr).contains("did you mean `judge_threshold`?"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn seed_formats_load_and_run_unchanged() {
    let env = Env::new();
    let seeds = workspace().join("examples/seeds");
    let out = env
        .gavel(&["validate", seeds.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("warning: no target is defined"));
    let (targets, db, j) = (env.path("targets.yaml"), env.db(), env.path("r.json"));
    let out = env
        .gavel(&[
            "run",
            targets.to_str().unwrap(),
            seeds.to_str().unwrap(),
            "--db",
            &db,
            "--quiet",
            "-o",
            j.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let report = json(&j);
    assert_eq!(report["summary"]["total"], 4);
    // Judge criteria wait for a judge model: skipped with the reason, never passed or failed.
    let example_2 = report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "example_2")
        .unwrap();
    assert_eq!(example_2["status"], "skipped");
}

#[test]
fn ctrl_c_keeps_results_marks_the_run_interrupted_and_resume_finishes_it() {
    let env = Env::new();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_gavel"))
        .args(["run", env.path("targets.yaml").to_str().unwrap()])
        .arg(workspace().join("examples/quickstart/suite.yaml"))
        .args(["--db", &env.db(), "--quiet", "-j", "1"])
        .current_dir(env.dir.path())
        .env("PROPERTY_AGENT_BUG", "slow")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until at least one slow execution (1.5 s each) has been recorded.
    let deadline = Instant::now() + Duration::from_secs(60);
    let db = env.path("gavel.db");
    while Instant::now() < deadline && !(db.exists() && stored_executions(&env) >= 1) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("interrupted"),
        "{}",
        text(&out.stdout)
    );
    let kept = stored_executions(&env);
    assert!((1..11).contains(&kept), "{kept} executions kept");

    let j = env.path("r.json");
    let out = env.run_quickstart(&["--resume", "latest", "-o", j.to_str().unwrap()], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(
        json(&j)["summary"]["total"],
        11,
        "the resumed run holds every case exactly once"
    );
    assert!(
        text(&out.stderr).contains(&format!("({kept} already recorded)")),
        "{}",
        text(&out.stderr)
    );
}

/// Executions stored so far, read through `gavel report`'s JSON.
fn stored_executions(env: &Env) -> usize {
    let j = env.path("probe.json");
    let db = env.db();
    let out = env
        .gavel(&["report", "latest", "--db", &db, "-o", j.to_str().unwrap()])
        .output()
        .unwrap();
    if !j.exists() || out.status.code() == Some(2) {
        return 0;
    }
    json(&j)["summary"]["total"].as_u64().unwrap_or(0) as usize
}

#[test]
fn schema_describes_the_suite_format() {
    let env = Env::new();
    let out = env.gavel(&["schema"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(schema["properties"]["cases"].is_object(), "{schema}");
    assert!(text(&out.stdout).contains("tools-called"));
}

#[test]
fn models_path_and_list_look_in_gavel_models_without_network() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("gemma-3-270m-q4_k_m.gguf");
    std::fs::write(&gguf, b"GGUF\x03\x00\x00\x00").unwrap();
    let gavel = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_gavel"))
            .args(args)
            .env("GAVEL_MODELS", dir.path())
            .env("HF_HUB_CACHE", dir.path().join("hf"))
            .output()
            .unwrap()
    };

    let out = gavel(&["models", "path", "gemma-3-270m-q4_k_m"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), gguf.display().to_string());

    let out = gavel(&["models", "path", "all-MiniLM-L6-v2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("encoder model `all-MiniLM-L6-v2` is not installed"),
        "{err}"
    );
    assert!(err.contains("scripts/setup"), "{err}");

    let out = gavel(&["models", "list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    assert!(
        listing.contains("gemma-3-270m-q4_k_m.gguf  gguf"),
        "{listing}"
    );
    assert!(listing.contains("not installed"), "{listing}");
    assert!(listing.contains("all-MiniLM-L6-v2"), "{listing}");
}

#[test]
fn a_bad_judge_flag_exits_2_before_anything_runs() {
    let env = Env::new();
    let out = env.run_quickstart(&["--judge", "nosuch:model"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--judge") && text(&out.stderr).contains("nosuch"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !env.path("gavel.db").exists(),
        "nothing was stored, no target started"
    );
}

#[test]
fn resume_runs_the_stored_snapshot_and_refuses_an_edited_suite() {
    let env = Env::new();
    let suite = env.path("s.yaml");
    let write = |value: &str| {
        std::fs::write(
            &suite,
            format!("cases:\n  - {{id: a, input: hi, checks: [{{type: contains, value: {value}}}]}}\n  - {{id: b, input: ho}}\n"),
        )
        .unwrap()
    };
    write("hi");
    let db = env.db();
    let targets = env.path("targets.yaml");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", targets.to_str().unwrap(), "--db", &db, "--quiet"];
        args.extend_from_slice(extra);
        env.gavel(&args).output().unwrap()
    };
    let first = run(&[suite.to_str().unwrap()]);
    assert!(
        first.status.code().is_some_and(|c| c <= 1),
        "{}",
        text(&first.stderr)
    );

    write("changed");
    let refused = run(&[suite.to_str().unwrap(), "--resume", "latest"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("case `a` changed"),
        "{}",
        text(&refused.stderr)
    );

    // Without suite arguments the stored snapshot is finished as planned.
    let out = env
        .gavel(&["run", "--resume", "latest", "--db", &db, "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("stored suite snapshot"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_second_process_cannot_drive_a_run_that_is_running() {
    let env = Env::new();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gavel"))
        .args(["run", env.path("targets.yaml").to_str().unwrap()])
        .arg(workspace().join("examples/quickstart/suite.yaml"))
        .args(["--db", &env.db(), "--quiet", "-j", "1"])
        .current_dir(env.dir.path())
        .env("PROPERTY_AGENT_BUG", "slow")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let db = env.path("gavel.db");
    while Instant::now() < deadline && !(db.exists() && stored_executions(&env) >= 1) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let second = env
        .gavel(&["run", "--resume", "latest", "--db", &env.db(), "--quiet"])
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(second.status.code(), Some(2), "{}", text(&second.stderr));
    assert!(
        text(&second.stderr).contains("is being run by process"),
        "{}",
        text(&second.stderr)
    );
}

/// Ten processes opening one new SQLite store at once all migrate it (one
/// applies the migrations; the others wait for its lock and find them
/// applied) instead of failing on `table runs already exists`.
#[test]
fn processes_opening_a_new_store_at_once_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("new.db").display());
    let children: Vec<_> = (0..10)
        .map(|_| {
            support::gavel_command(dir.path())
                .args(["users", "list", "--db", &db])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
