//! examples/cargo-test: its `cargo test` passes against the working agent, and
//! with the agent broken on purpose (`--features broken`) fails with a readable
//! explanation: the failing check, a diff of expected against actual, the transcript.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use support::workspace;

fn cargo_test(features: &[&str]) -> (bool, String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["test", "--offline", "-q", "-p", "cargo-test-example"])
        .args(features)
        .current_dir(workspace())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn example_crate_passes_and_fails_readably_when_broken() {
    let (ok, text) = cargo_test(&[]);
    assert!(ok, "the example's cargo test should pass:\n{text}");

    let (ok, text) = cargo_test(&["--features", "broken"]);
    assert!(!ok, "the broken agent should fail its test:\n{text}");
    for needle in [
        "case `refund-window` against",
        ": fail",
        "fail equals",
        "expected output (-) vs answer (+):",
        "- You can ask for a refund within 30 days of delivery.",
        "+ You can ask for a refund within 14 days of delivery.",
        "  Reply with your order number to start one.",
        "user: Can I get a refund?",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
}
