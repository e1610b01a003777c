//! `gavel-eval` with `default-features = false` is the engine alone: the dependency
//! graph has no JSON Schema validator, HTTP stack, PostgreSQL driver, embedding
//! encoder, MCP, web UI, OpenTelemetry exporter, promptfoo importer, command line
//! or llama.cpp in it,
//! and each of those comes back with its feature (read with `cargo tree`,
//! nothing is built).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeSet;
use std::process::Command;

/// The most packages the lean graph may hold (libraries, proc-macros and what
/// build scripts use; each name and version once). docs/library.md gives the
/// figure a new project builds; this bound catches a heavy dependency slipping
/// back in.
const LEAN_MAX: usize = 175;

/// What no build needs, each with why: sqlx's proc macros (the migrations are
/// listed and rows read by hand, so sqlx is built once, not again for the
/// macros), and ICU4X (url's IDNA back end is pinned to unicode-rs).
const NEVER: [(&str, &str); 2] = [
    (
        "sqlx-macros",
        "gavel-store reads rows by hand and lists its migrations",
    ),
    (
        "icu_normalizer",
        "gavel-eval pins idna_adapter to ~1.1 (unicode-rs)",
    ),
];

/// What the lean library must not build, each with the feature that brings it.
const HEAVY: [(&str, &str); 15] = [
    ("jsonschema", "schema"),
    ("reqwest", "http"),
    ("genai", "http"),
    ("aws-lc-sys", "http"),
    ("sqlx-postgres", "postgres"),
    ("tokenizers", "embed"),
    ("gemm", "embed"),
    ("rmcp", "mcp"),
    ("axum", "web"),
    ("gavel-web", "web"),
    ("gavel-promptfoo", "promptfoo"),
    ("gavel-otel", "otel"),
    ("gavel-mcp-server", "cli"),
    ("clap", "cli"),
    ("llama-cpp-2", "local"),
];

/// The packages (`name vX.Y.Z`) `gavel-eval` builds with `features`.
fn packages(features: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "gavel-eval",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
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
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| {
            // `name vX.Y.Z (path) (*)`: keep the name and version.
            let mut words = line.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect()
}

fn has(packages: &BTreeSet<String>, name: &str) -> bool {
    packages.iter().any(|p| p.split(' ').next() == Some(name))
}

#[test]
fn library_without_default_features_is_lean() {
    let lean = packages(&["--no-default-features"]);
    assert!(has(&lean, "gavel-session"), "{lean:?}");
    assert!(has(&lean, "sqlx-sqlite"), "SQLite is the engine's store");
    for (name, feature) in HEAVY {
        assert!(
            !has(&lean, name),
            "{name} (feature `{feature}`) is in the lean build"
        );
    }
    for (name, why) in NEVER {
        assert!(!has(&lean, name), "{name} is in the lean build: {why}");
    }
    assert!(
        lean.len() <= LEAN_MAX,
        "the lean library builds {} packages, more than {LEAN_MAX}:\n{lean:?}",
        lean.len()
    );
    println!("lean library: {} packages", lean.len());
}

#[test]
fn each_feature_brings_its_dependencies_back() {
    for (name, feature) in HEAVY {
        if feature == "local" {
            continue; // llama.cpp needs cmake and libclang: not built by default.
        }
        let with = packages(&["--no-default-features", "--features", feature]);
        assert!(has(&with, name), "feature `{feature}` lacks {name}");
    }
    // The default build (the binary) has them all but llama.cpp, and none of
    // what no build needs.
    let full = packages(&[]);
    for (name, why) in NEVER {
        assert!(!has(&full, name), "{name} is in the default build: {why}");
    }
    for (name, feature) in HEAVY {
        assert_eq!(
            has(&full, name),
            feature != "local",
            "{name} in the default build"
        );
    }
}
