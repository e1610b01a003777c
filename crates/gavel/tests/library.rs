//! Test cases in the store: `gavel import` and `gavel export` round-trip suite
//! files losslessly, every change is a new case version with its author, and a run
//! of a stored suite records the versions it used.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Output;

use gavel::store::Store;
use serde_json::Value;
use support::workspace;

/// `gavel ARGS` with the store chosen by `GAVEL_DATABASE_URL`, as a team would.
fn gavel(db: &str, args: &[&str]) -> Output {
    let out = support::gavel_command(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(args)
        .env("GAVEL_DATABASE_URL", db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gavel {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn yaml_value(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap()
}

/// Cases as the loader resolves them, `source` (a file:line) left out.
fn loaded(text: &str) -> gavel::Suite {
    let mut suite = gavel::load::parse_suite_str(text, Path::new("suite.yaml")).unwrap();
    for case in &mut suite.cases {
        case.source.clear();
    }
    suite
}

#[test]
fn import_export_round_trips_the_examples() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    for (name, file) in [
        ("quickstart", "examples/quickstart/suite.yaml"),
        ("quickstart-targets", "examples/quickstart/targets.yaml"),
        ("seeds", "examples/seeds/test_cases.yaml"),
    ] {
        let path = workspace().join(file);
        gavel(&db, &["import", path.to_str().unwrap(), "--name", name]);
        let exported = String::from_utf8(gavel(&db, &["export", name]).stdout).unwrap();
        let original = std::fs::read_to_string(&path).unwrap();
        // Same document, key order included; comments are not kept.
        assert_eq!(
            serde_json::to_string(&yaml_value(&exported)).unwrap(),
            serde_json::to_string(&yaml_value(&original)).unwrap(),
            "{file} changed on the way through the store:\n{exported}"
        );
        let (a, b) = (loaded(&exported), loaded(&original));
        assert_eq!((&a.cases, &a.targets), (&b.cases, &b.targets), "{file}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cases_are_versioned_and_runs_record_their_versions() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let file = dir.path().join("suite.yaml");
    let agent =
        "[sh, -c, 'while IFS= read -r l; do printf \"{\\\"output\\\": \\\"ok\\\"}\\n\"; done']";
    let v1 = format!(
        "name: versions\ntargets:\n  echo: {{type: command, command: {agent}}}\ncases:\n  - id: first\n    input: one\n    checks: [{{type: contains, value: ok}}]\n  - id: second\n    input: two\n    checks: [{{type: contains, value: ok}}]\n  - id: third\n    input: three\n"
    );
    std::fs::write(&file, &v1).unwrap();
    let file = file.to_str().unwrap();
    let out = gavel(&db, &["import", file, "--author", "alice"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 added"));

    // Bob edits `second` and drops `third`; `first` stays as it was.
    let v2 = v1
        .replace("input: two", "input: two, edited")
        .replace("  - id: third\n    input: three\n", "");
    std::fs::write(file, v2).unwrap();
    let out = gavel(&db, &["import", file, "--author", "bob"]);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        said.contains("0 added, 1 changed, 1 unchanged, 1 removed"),
        "{said}"
    );

    let store = Store::open(&db).await.unwrap();
    let history = store.case_history("versions", "second").await.unwrap();
    let who: Vec<_> = history
        .iter()
        .map(|v| (v.version, v.changed_by.as_str()))
        .collect();
    assert_eq!(who, [(1, "alice"), (2, "bob")]);
    assert_eq!(history[1].case.as_ref().unwrap()["input"], "two, edited");
    let third = store.case_history("versions", "third").await.unwrap();
    assert_eq!(third.len(), 2);
    assert!(third[1].case.is_none(), "the second version deletes it");
    let live: Vec<_> = store
        .latest_cases("versions")
        .await
        .unwrap()
        .into_iter()
        .map(|v| (v.key, v.version))
        .collect();
    assert_eq!(live, [("first".into(), 1), ("second".into(), 2)]);

    // A run of the stored suite records the exact versions it used.
    gavel(&db, &["run", "--suite", "versions", "--quiet"]);
    let run = store.latest_run().await.unwrap().unwrap();
    let used = store.run_case_versions(&run.id, None).await.unwrap();
    assert_eq!(
        used,
        [
            ("versions".into(), "first".into(), 1),
            ("versions".into(), "second".into(), 2)
        ]
    );
    let inputs: Vec<_> = store
        .executions(&run.id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.transcript.turns[0].input.clone())
        .collect();
    assert_eq!(inputs, ["one", "two, edited"]);
    store.close().await;
}

#[test]
fn a_bad_file_is_refused_with_its_location_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let file = dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        "cases:\n  - id: x\n    input: hi\n    threshold: high\n",
    )
    .unwrap();
    let out = support::gavel_command(dir.path())
        .args(["import", file.to_str().unwrap(), "--db", &db])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("bad.yaml:4"), "{said}");
    let out = support::gavel_command(dir.path())
        .args(["export", "bad", "--db", &db])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("suite `bad`"));
}
