//! `gavel-eval` with `default-features = false` is the engine alone: the dependency
//! graph has no web UI, MCP server, OpenTelemetry exporter, command line or
//! llama.cpp in it (read with `cargo tree`, nothing is built).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

fn tree(features: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "gavel-eval",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(features)
        .current_dir(support::workspace())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn library_without_default_features_is_lean() {
    let heavy = [
        "gavel-web ",
        "gavel-mcp-server ",
        "gavel-otel ",
        "gavel-promptfoo ",
        "gavel-local ",
        "llama-cpp-2 ",
        "axum ",
        "clap ",
        "mimalloc ",
    ];
    let lean = tree(&["--no-default-features"]);
    assert!(lean.contains("gavel-session "), "{lean}");
    for name in heavy {
        assert!(
            !lean.lines().any(|l| l.starts_with(name)),
            "{name}is in the lean build:\n{lean}"
        );
    }
    // The default build (the binary) has the command line and the web UI.
    let full = tree(&[]);
    for name in ["gavel-web ", "clap "] {
        assert!(
            full.lines().any(|l| l.starts_with(name)),
            "{name}missing:\n{full}"
        );
    }
}
