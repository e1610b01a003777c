//! `pip install gavel-eval`: maturin builds the wheel from crates/gavel/pyproject.toml
//! (binary mode: the `gavel` command, no Python code), pip installs it into a
//! fresh virtualenv without any index, and the installed `gavel` runs the
//! quickstart against the example agent.
//!
//! The wheel is what ships (the default features, no llama.cpp) built with the
//! dev profile, in this build's target directory: cargo resolves features for
//! `gavel-eval` alone there, so the first run compiles the binary's graph once
//! more and later runs only what changed. maturin comes from scripts/setup
//! (`.gavel/maturin`) or PATH; without it the test is skipped saying so, and
//! fails under CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gavel_testkit::{Need, skip};
use support::{example_targets, free_port, without_credentials, workspace};

/// maturin from scripts/setup's virtualenv, else from PATH.
fn maturin() -> Option<PathBuf> {
    let local = workspace().join(".gavel/maturin/bin/maturin");
    if local.is_file() {
        return Some(local);
    }
    Command::new("maturin")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        .then(|| PathBuf::from("maturin"))
}

fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.status.success(), "{what} failed:\n{}", text(&out));
    out
}

/// The one `.whl` file maturin wrote into `dir`.
fn wheel_in(dir: &Path) -> PathBuf {
    let wheels: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    wheels.into_iter().next().unwrap()
}

#[test]
fn pip_installed_wheel_runs_the_quickstart() {
    let Some(maturin) = maturin() else {
        return skip(
            Need::Maturin,
            "maturin is not installed (run scripts/setup)",
        );
    };
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");

    let mut build = Command::new(&maturin);
    build
        .args(["build", "--offline", "--profile", "dev", "--manifest-path"])
        .arg(workspace().join("crates/gavel/Cargo.toml"))
        .arg("--out")
        .arg(&dist)
        .current_dir(workspace());
    run(&mut build, "maturin build");
    let wheel = wheel_in(&dist);
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        name.starts_with(&format!("gavel_eval-{version}-py3-none-")),
        "{name}"
    );

    let venv = tmp.path().join("venv");
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    );
    run(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--no-index", "--disable-pip-version-check"])
            .arg(&wheel),
        "pip install --no-index",
    );
    let gavel = venv.join("bin/gavel");
    assert!(
        gavel.is_file(),
        "the wheel put no gavel in {}",
        venv.display()
    );

    let installed = run(Command::new(&gavel).arg("--version"), "gavel --version");
    assert_eq!(
        String::from_utf8_lossy(&installed.stdout).trim(),
        format!("gavel {version}")
    );

    // The quickstart, its agent launched from its binary on a free port.
    let targets = example_targets("quickstart", tmp.path());
    let suite = workspace().join("examples/quickstart/suite.yaml");
    let db = format!("sqlite://{}", tmp.path().join("gavel.db").display());
    let report = tmp.path().join("report.json");
    let mut quickstart = Command::new(&gavel);
    quickstart
        .arg("run")
        .args([&targets, &suite])
        .args(["--db", &db, "-o"])
        .arg(&report)
        .current_dir(tmp.path())
        .env("PROPERTY_AGENT_PORT", free_port().to_string());
    without_credentials(&mut quickstart).env_remove("PROPERTY_AGENT_BUG");
    let out = run(&mut quickstart, "the installed gavel run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("PASS: pass rate 100%"), "{}", text(&out));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["summary"]["total"], 11, "{report}");
    assert_eq!(report["summary"]["passed"], 10, "{report}");
    assert_eq!(report["summary"]["skipped"], 1, "{report}");
}
