//! Coding agents in a workspace, through the real `gavel` binary: the bundled
//! example, each stream format through a fake agent, cleanup of workspaces,
//! and a task set against two agent variants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::workspace;

/// A temp dir that is also the runs' `TMPDIR`, so their workspaces are seen.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let env = Env {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir(env.path("tmp")).unwrap();
        env
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn gavel(&self, args: &[&str]) -> Command {
        let mut cmd = support::gavel_command(self.dir.path());
        cmd.args(args)
            .env("TMPDIR", self.path("tmp"))
            .env_remove("CODING_AGENT_BUG");
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.gavel(args).output().unwrap()
    }

    /// The workspaces on disk, kept ones included.
    fn workspaces(&self) -> Vec<String> {
        let root = self.path("tmp/gavel-workspaces");
        let Ok(entries) = std::fs::read_dir(root) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The last turn of the first repeat of each result, by case id.
fn last_turns(report: &Value) -> Vec<(String, Value)> {
    report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let turns = r["repeats"][0]["transcript"]["turns"].as_array().unwrap();
            let id = format!(
                "{}/{}",
                r["id"].as_str().unwrap(),
                r["target"].as_str().unwrap()
            );
            (id, turns.last().unwrap().clone())
        })
        .collect()
}

#[test]
fn the_example_fixes_the_bug_and_fails_naming_the_post_run_command_when_it_does_not() {
    let env = Env::new();
    let suite = workspace().join("examples/coding-agent");
    let suite = suite.to_str().unwrap();
    let fixture =
        std::fs::read_to_string(workspace().join("examples/coding-agent/repo/calc.py")).unwrap();

    let report = env.path("good.json");
    let out = env.run(&["run", suite, "--quiet", "-o", report.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = json(&report);
    let (_, turn) = &last_turns(&report)[0];
    let ws = &turn["workspace"];
    assert_eq!(ws["changes"][0]["path"], "calc.py", "{ws}");
    assert_eq!(ws["changes"][0]["kind"], "modified");
    assert_eq!(
        (
            ws["changes"][0]["added"].as_u64(),
            ws["changes"][0]["removed"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert!(
        ws["diff"].as_str().unwrap().contains("+    return a + b"),
        "{ws}"
    );
    assert_eq!(ws["commands"][0]["name"], "tests");
    assert_eq!(ws["commands"][0]["exit_code"], 0, "{ws}");
    assert_eq!(ws["files"][0]["path"], "calc.py");
    // The agent's Claude Code stream: its tool calls with arguments and results,
    // and its tokens and cost.
    let calls = turn["tool_calls"].as_array().unwrap();
    let names: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Bash", "Read", "Edit", "Bash"]);
    assert_eq!(calls[2]["arguments"]["new_string"], "return a + b");
    assert!(
        calls[0]["result"]["error"]
            .as_str()
            .unwrap()
            .contains("FAILED"),
        "{}",
        calls[0]
    );
    assert_eq!(turn["usage"]["output_tokens"], 340);
    assert_eq!(turn["usage"]["cost_usd"], 0.0123);
    // The fixture is untouched and no workspace is left.
    assert_eq!(
        std::fs::read_to_string(workspace().join("examples/coding-agent/repo/calc.py")).unwrap(),
        fixture
    );
    assert_eq!(env.workspaces(), Vec::<String>::new());

    let mut bad = env.gavel(&["run", suite, "--quiet"]);
    bad.env("CODING_AGENT_BUG", "1");
    let out = bad.output().unwrap();
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(shown.contains("command tests"), "{shown}");
    assert!(shown.contains("`tests` exited 1, expected 0"), "{shown}");
    assert!(
        shown.contains("FAILED (failures=1)"),
        "the test output is shown: {shown}"
    );
    // `keep: failed` kept this one, where the report says.
    let kept = env.workspaces();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].starts_with("kept-"), "{kept:?}");
    assert!(shown.contains(&kept[0]), "{shown}");
    let left = std::fs::read_to_string(
        env.path("tmp/gavel-workspaces")
            .join(&kept[0])
            .join("calc.py"),
    )
    .unwrap();
    assert!(left.contains("return a - b"), "{left}");
}

/// A suite whose targets replay each recorded stream through `cat`, an agent
/// that prints a sample whatever it is asked.
fn stream_suite(env: &Env) -> PathBuf {
    let samples = workspace().join("crates/gavel-targets/tests/fixtures/agent-streams");
    env.write("repo/calc.py", "def add(a, b):\n    return a - b\n");
    let target = |format: &str, file: &str| {
        format!(
            "  {format}:\n    type: workspace\n    fixture: repo\n    format: {format}\n    agent: [cat, {:?}]\n    after: [{{name: listing, run: ls}}]\n",
            samples.join(file).display().to_string()
        )
    };
    let suite = format!(
        "targets:\n{}{}{}cases:\n  - id: fix\n    input: Fix add in calc.py.\n    checks:\n      - {{type: command, name: listing, contains: calc.py}}\n",
        target("claude-code", "claude-code.jsonl"),
        target("codex", "codex.jsonl"),
        target("jsonl", "generic.jsonl"),
    );
    env.write("streams.yaml", &suite)
}

#[test]
fn each_stream_format_becomes_the_transcript() {
    let env = Env::new();
    let suite = stream_suite(&env);
    let report = env.path("streams.json");
    let out = env.run(&[
        "run",
        suite.to_str().unwrap(),
        "--quiet",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let turns = last_turns(&json(&report));
    let turn = |target: &str| {
        turns
            .iter()
            .find(|(id, _)| id == &format!("fix/{target}"))
            .map(|(_, t)| t.clone())
            .unwrap()
    };
    let names = |t: &Value| -> Vec<String> {
        t["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };

    let claude = turn("claude-code");
    assert_eq!(names(&claude), ["Read", "Edit", "Bash"]);
    let bash = &claude["tool_calls"][2];
    assert_eq!(bash["arguments"]["command"], "python -m pytest -q");
    assert!(
        bash["result"].as_str().unwrap().contains("passed"),
        "{bash}"
    );
    assert!(claude["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(claude["usage"]["cost_usd"].as_f64().unwrap() > 0.0);
    assert!(!claude["output"].as_str().unwrap().is_empty());

    let codex = turn("codex");
    assert_eq!(names(&codex), ["shell", "file_change", "shell"]);
    assert_eq!(
        codex["tool_calls"][0]["result"]["exit_code"], 0,
        "{}",
        codex["tool_calls"][0]
    );
    assert!(codex["usage"]["output_tokens"].as_u64().unwrap() > 0);
    assert_eq!(codex["response"]["session"].as_str().unwrap().len(), 36);

    let generic = turn("jsonl");
    assert!(!names(&generic).is_empty());
    assert!(
        generic["tool_calls"][0]["result"].is_string()
            || generic["tool_calls"][0]["result"].is_object()
    );
    assert!(generic["usage"]["input_tokens"].as_u64().unwrap() > 0);

    for t in [&claude, &codex, &generic] {
        assert_eq!(t["workspace"]["commands"][0]["exit_code"], 0, "{t}");
        // `cat` changed nothing.
        assert!(
            t["workspace"]["changes"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "{t}"
        );
    }
}

/// A suite whose agent starts, says nothing and sleeps `secs` seconds.
fn sleeping_suite(env: &Env, secs: u32) -> PathBuf {
    env.write("repo/README.md", "nothing to see\n");
    env.write(
        "sleepy.yaml",
        &format!(
            "targets:\n  sleepy:\n    type: workspace\n    fixture: repo\n    agent: [sleep, \"{secs}\"]\ndefaults:\n  timeout_s: 120\ncases:\n  - id: wait\n    input: take your time\n"
        ),
    )
}

/// Starts a run of a suite whose agent sleeps `secs` seconds, and waits until
/// its workspace exists.
fn start_sleeping_run(env: &Env, secs: u32) -> std::process::Child {
    let suite = sleeping_suite(env, secs);
    let child = env
        .gavel(&["run", suite.to_str().unwrap(), "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while env.workspaces().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no workspace was made"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

#[cfg(unix)]
#[test]
fn interrupted_and_killed_runs_leave_no_workspace_behind() {
    let env = Env::new();

    // Ctrl-C: the execution in flight is dropped with its workspace and agent.
    let mut child = start_sleeping_run(&env, 30);
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert_eq!(env.workspaces(), Vec::<String>::new());

    // Killed outright: nothing runs at exit, so the next run sweeps it.
    let mut child = start_sleeping_run(&env, 2);
    child.kill().unwrap();
    child.wait().unwrap();
    let left = env.workspaces();
    assert_eq!(left.len(), 1, "a killed run cannot clean up: {left:?}");
    let next = env.path("next.yaml");
    std::fs::write(
        &next,
        "targets:\n  quick:\n    type: workspace\n    fixture: repo\n    agent: [\"true\"]\ncases:\n  - id: nothing\n    input: hi\n    checks: [{type: diff, max_files: 0}]\n",
    )
    .unwrap();
    let out = env.run(&["run", next.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(env.workspaces(), Vec::<String>::new(), "{}", text(&out));
}

/// An agent speaking gavel's generic JSON lines that fixes `f{i}.py` as the
/// task asks. `flaky` fails the first and third attempt at even tasks (attempts
/// are numbered with files made exclusively, so concurrent repeats agree).
const TASK_AGENT: &str = r#"
import json, os, re, sys
variant, attempts = sys.argv[1], sys.argv[2]
task = sys.stdin.read()
i = int(re.search(r"f(\d+)\.py", task).group(1))
n = 1
while True:
    try:
        os.close(os.open(os.path.join(attempts, f"{variant}-{i}-{n}"), os.O_CREAT | os.O_EXCL))
        break
    except FileExistsError:
        n += 1
def say(**event):
    print(json.dumps(event), flush=True)
say(type="message", content=f"Fixing f{i}.py (attempt {n}).")
path = f"f{i}.py"
old = open(path).read()
new = old if variant == "flaky" and i % 2 == 0 and n % 2 == 1 else old.replace("x - 1", "x + 1")
say(type="tool_call", id="1", name="edit", arguments={"path": path})
open(path, "w").write(new)
say(type="tool_result", id="1", result="ok")
say(type="usage", input_tokens=100, output_tokens=20, cost_usd=0.001)
say(type="final", content="Done.")
"#;

/// A git repository where commit `i` adds task `i`: `f{i}.py`, off by two,
/// and its test; every commit has a passing `test_base.py`.
fn task_repository(env: &Env, tasks: usize) -> Vec<String> {
    let repo = env.path("tasks-repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["init", "-q"]);
    std::fs::write(
        repo.join("test_base.py"),
        "import unittest\n\nclass Base(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n",
    )
    .unwrap();
    (0..tasks)
        .map(|i| {
            std::fs::write(repo.join(format!("f{i}.py")), format!("def f{i}(x):\n    return x - 1\n")).unwrap();
            std::fs::write(
                repo.join(format!("test_f{i}.py")),
                format!("import unittest\nfrom f{i} import f{i}\n\nclass T(unittest.TestCase):\n    def test(self):\n        self.assertEqual(f{i}(1), 2)\n"),
            )
            .unwrap();
            git(&["add", "-A"]);
            git(&["commit", "-qm", &format!("task {i}")]);
            git(&["rev-parse", "HEAD"])
        })
        .collect()
}

#[test]
fn a_task_set_against_two_agents_reports_pass_at_k_and_a_paired_comparison() {
    const TASKS: usize = 20;
    let env = Env::new();
    let commits = task_repository(&env, TASKS);
    let tasks: String = commits
        .iter()
        .enumerate()
        .map(|(i, commit)| {
            format!(
                "{}\n",
                serde_json::json!({
                    "instance_id": format!("task-{i:02}"),
                    "repo": "tasks-repo",
                    "base_commit": commit,
                    "problem_statement": format!("f{i} in f{i}.py must add one. Fix it."),
                    "test_command": format!("python3 -S -m unittest -q test_f{i}"),
                    "pass_to_pass": "python3 -S -m unittest -q test_base",
                })
            )
        })
        .collect();
    env.write("tasks.jsonl", &tasks);
    let agent = env.write("agent.py", TASK_AGENT);
    std::fs::create_dir(env.path("attempts")).unwrap();
    let target = |variant: &str| {
        format!(
            "  {variant}:\n    type: workspace\n    fixture: tasks-repo\n    format: jsonl\n    agent: [python3, -S, {agent:?}, {variant}, {attempts:?}]\n    env: {{PYTHONDONTWRITEBYTECODE: \"1\"}}\n",
            agent = agent.display().to_string(),
            attempts = env.path("attempts").display().to_string(),
        )
    };
    let suite = format!(
        "targets:\n{}{}datasets:\n  - file: tasks.jsonl\n    case:\n      id: \"{{{{ instance_id }}}}\"\n      input: \"{{{{ problem_statement }}}}\"\n      repeat: 3\n      workspace:\n        fixture: \"{{{{ repo }}}}\"\n        commit: \"{{{{ base_commit }}}}\"\n      checks:\n        - {{type: command, name: fail-to-pass, run: \"{{{{ test_command }}}}\"}}\n        - {{type: command, name: pass-to-pass, run: \"{{{{ pass_to_pass }}}}\"}}\n",
        target("good"),
        target("flaky"),
    );
    let suite = env.write("tasks.yaml", &suite);
    let report = env.path("tasks.json");
    let md = env.path("tasks.md");
    let out = env.run(&[
        "run",
        suite.to_str().unwrap(),
        "-o",
        report.to_str().unwrap(),
        "-o",
        md.to_str().unwrap(),
    ]);
    let shown = text(&out);
    assert!(shown.contains("Targets compared"), "{shown}");
    assert!(shown.contains("pass@3"), "{shown}");
    let report = json(&report);

    // pass@k and the sign test, computed here from the executions themselves.
    let results = report["detailed_results"].as_array().unwrap();
    assert_eq!(results.len(), 2 * TASKS);
    let passes = |target: &str, task: usize| -> usize {
        let r = results
            .iter()
            .find(|r| r["target"] == target && r["id"] == format!("task-{task:02}"))
            .unwrap();
        let repeats = r["repeats"].as_array().unwrap();
        assert_eq!(repeats.len(), 3);
        repeats.iter().filter(|e| e["status"] == "pass").count()
    };
    let cmp = &report["targets_compared"];
    for (row, target) in cmp["targets"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["flaky", "good"])
    {
        assert_eq!(row["target"], target);
        let c: Vec<usize> = (0..TASKS).map(|t| passes(target, t)).collect();
        let mean = |f: &dyn Fn(usize) -> f64| c.iter().map(|c| f(*c)).sum::<f64>() / TASKS as f64;
        let at1 = mean(&|c| c as f64 / 3.0);
        let at3 = mean(&|c| if c > 0 { 1.0 } else { 0.0 });
        let hat3 = mean(&|c| if c == 3 { 1.0 } else { 0.0 });
        assert!(
            (row["pass_at_k"]["1"].as_f64().unwrap() - at1).abs() < 1e-12,
            "{row}"
        );
        assert!(
            (row["pass_at_k"]["3"].as_f64().unwrap() - at3).abs() < 1e-12,
            "{row}"
        );
        assert!(
            (row["pass_hat_k"]["3"].as_f64().unwrap() - hat3).abs() < 1e-12,
            "{row}"
        );
    }
    // The flaky agent needs more than one try at half the tasks.
    assert!((cmp["targets"][0]["pass_at_k"]["1"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(cmp["targets"][0]["pass_at_k"]["3"], 1.0);
    assert_eq!(cmp["targets"][1]["pass_at_k"]["1"], 1.0);
    let pair = &cmp["pairs"][0];
    assert_eq!(
        (pair["a"].as_str(), pair["b"].as_str()),
        (Some("flaky"), Some("good"))
    );
    let good_better = (0..TASKS)
        .filter(|t| passes("good", *t) > passes("flaky", *t))
        .count();
    assert_eq!(pair["b_better"], good_better);
    assert_eq!(pair["a_better"], 0);
    // Two-sided exact sign test: 2 * 0.5^n with every discordant case one way.
    let p = 2.0 * 0.5f64.powi(good_better as i32);
    assert!(
        (pair["p_value"].as_f64().unwrap() - p).abs() < 1e-12,
        "{pair}"
    );
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("## Targets compared"), "{md}");
}
