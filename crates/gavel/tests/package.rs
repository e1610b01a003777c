//! Every workspace crate is either ready for crates.io or `publish = false`:
//! `cargo package` packs every publishable crate together (workspace path
//! dependencies need a version; no verify build), offline, into a scratch target
//! directory. `gavel` on crates.io is another project: this one is `gavel-eval`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::Value;

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// The workspace's own packages, from `cargo metadata`.
fn packages() -> Vec<Value> {
    let out = cargo()
        .args([
            "metadata",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .current_dir(support::workspace())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    meta["packages"].as_array().unwrap().clone()
}

/// `publish = false` reads back as an empty registry list.
fn publishable(package: &Value) -> bool {
    package["publish"]
        .as_array()
        .is_none_or(|registries| !registries.is_empty())
}

#[test]
fn every_publishable_crate_packages() {
    let packages = packages();
    let names = |keep: bool| -> Vec<String> {
        let mut names: Vec<String> = packages
            .iter()
            .filter(|p| publishable(p) == keep)
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let published = names(true);
    // Test support, examples and mock servers stay home.
    assert_eq!(
        names(false),
        [
            "cargo-test-example",
            "gavel-testkit",
            "mock-openai",
            "property-agent"
        ],
        "every crate is published or `publish = false`"
    );
    assert!(published.iter().any(|n| n == "gavel-eval"), "{published:?}");
    assert!(!published.iter().any(|n| n == "gavel"), "{published:?}");
    let main = packages.iter().find(|p| p["name"] == "gavel-eval").unwrap();
    let targets = main["targets"].as_array().unwrap();
    for kind in ["lib", "bin"] {
        assert!(
            targets
                .iter()
                .any(|t| t["kind"][0] == kind && t["name"] == "gavel"),
            "gavel-eval's {kind} is named `gavel`"
        );
    }
    for package in packages.iter().filter(|p| publishable(p)) {
        for field in ["description", "license", "repository"] {
            assert!(
                package[field].as_str().is_some_and(|v| !v.is_empty()),
                "{} has no {field}",
                package["name"]
            );
        }
    }

    let target = tempfile::tempdir().unwrap();
    let mut package = cargo();
    package
        .args(["package", "--offline", "--no-verify", "--allow-dirty"])
        .arg("--target-dir")
        .arg(target.path())
        .current_dir(support::workspace());
    for name in &published {
        package.args(["-p", name]);
    }
    let out = package.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo package failed:\n{stderr}");
    assert!(
        !stderr.contains("warning: manifest"),
        "a crate lacks metadata:\n{stderr}"
    );
    for name in &published {
        let version = packages
            .iter()
            .find(|p| p["name"] == name.as_str())
            .unwrap()["version"]
            .as_str()
            .unwrap();
        let file = target
            .path()
            .join("package")
            .join(format!("{name}-{version}.crate"));
        assert!(file.is_file(), "{} was not written", file.display());
    }
}
