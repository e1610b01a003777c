//! `gavel init` in an empty folder, then `gavel run` against the example agent;
//! shell completions; `--help` teaching exit codes and examples.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Output};

use support::{agent_bin, free_port, gavel_command};

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The example agent on its own (gavel does not start it: `init` scaffolds a
/// suite for an agent that is already running), killed on drop.
struct Agent(std::process::Child);

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_healthy(port: u16) {
    for _ in 0..600 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the example agent never listened on {port}");
}

#[test]
fn init_then_run_passes_against_the_http_example_agent() {
    let port = free_port();
    let _agent = Agent(
        Command::new(agent_bin())
            .args(["--addr", &format!("127.0.0.1:{port}")])
            .env_remove("PROPERTY_AGENT_BUG")
            .spawn()
            .unwrap(),
    );
    wait_healthy(port);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/chat");
    let init = gavel_command(dir.path())
        .args([
            "init",
            "--http",
            &url,
            "--output",
            "/reply",
            "--tool-calls",
            "/tool_calls",
        ])
        .args(["--input", "What are my listings?", "--name", "listings"])
        .output()
        .unwrap();
    assert_eq!(init.status.code(), Some(0), "{}", text(&init));
    assert!(text(&init).contains("next: gavel run"), "{}", text(&init));

    let run = gavel_command(dir.path())
        .args(["run", "gavel.yaml", "--quiet", "-o", "report.json"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["summary"]["passed"], 2, "{report}");
    assert_eq!(report["summary"]["total"], 2, "{report}");

    // A second init keeps the file; --force replaces it.
    let again = gavel_command(dir.path())
        .args(["init", "--http", &url])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(
        text(&again).contains("already exists (use --force"),
        "{}",
        text(&again)
    );
}

#[test]
fn init_then_run_passes_against_the_command_example_agent() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!(
        "'{}' --stdio --db '{}'",
        agent_bin().display(),
        dir.path().join("agent.db").display()
    );
    let init = gavel_command(dir.path())
        .args(["init", "--command", &line, "--output", "/reply"])
        .args(["--input", "What are my listings?"])
        .output()
        .unwrap();
    assert_eq!(init.status.code(), Some(0), "{}", text(&init));
    let run = gavel_command(dir.path())
        .args(["run", ".", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
}

#[test]
fn init_without_an_agent_and_without_a_terminal_says_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let out = gavel_command(dir.path())
        .arg("init")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("give --http URL or --command COMMAND_LINE"),
        "{}",
        text(&out)
    );
    let bad = gavel_command(dir.path())
        .args(["init", "--http", "localhost:1/chat"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad).contains("--http: `localhost:1/chat` is not an http"),
        "{}",
        text(&bad)
    );
    assert!(!dir.path().join("gavel.yaml").exists());
}

#[test]
fn completions_are_scripts_each_shell_accepts() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = gavel_command(dir.path())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out));
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(
            script.contains("init") && script.contains("run"),
            "{shell}: {script}"
        );
    }
    // bash loads its script and registers the completion for `gavel`.
    if Command::new("bash").arg("--version").output().is_ok() {
        let script = dir.path().join("gavel.bash");
        let out = gavel_command(dir.path())
            .args(["completions", "bash"])
            .output()
            .unwrap();
        std::fs::write(&script, out.stdout).unwrap();
        let check = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source '{}' && complete -p gavel",
                script.display()
            ))
            .output()
            .unwrap();
        assert!(check.status.success(), "{}", text(&check));
        assert!(String::from_utf8_lossy(&check.stdout).contains("gavel"));
    }
    let bad = gavel_command(dir.path())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn help_lists_exit_codes_and_examples() {
    let out = gavel_command(std::path::Path::new("."))
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "Exit codes:",
        "  2    bad input",
        "  3    the run did not finish",
        "nothing was\n       decided",
        "Examples:",
        "gavel init --http",
        "gavel completions bash",
        "init ",
        "completions ",
    ] {
        assert!(help.contains(needle), "`{needle}` missing from:\n{help}");
    }
    // An unfinished run exits 3, as the README says, not 1.
    let gate = help.lines().find(|l| l.starts_with("  1 ")).unwrap();
    assert!(!gate.contains("finish"), "{gate}");
}
