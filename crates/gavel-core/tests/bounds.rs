//! Every number, duration, count and file the loader reads is bounded, with an
//! error that names the file, line, column and field.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use gavel_core::load::{load_paths, parse_suite_str};

const TARGETS: &str = "targets:\n  a: {type: command, command: [cat]}\n";

/// The single error of loading `yaml` as `s.yaml`.
fn error(yaml: &str) -> String {
    let errors = parse_suite_str(yaml, "s.yaml".as_ref()).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors[0].to_string()
}

#[test]
fn durations_are_finite_positive_and_capped() {
    for (value, problem) in [
        (".inf", "not finite"),
        (".nan", "not finite"),
        ("1e300", "out of range"),
        ("0", "out of range"),
        ("-1", "out of range"),
        ("90000", "out of range"),
    ] {
        let yaml = format!("{TARGETS}cases:\n  - id: a\n    input: hi\n    timeout_s: {value}\n");
        let e = error(&yaml);
        assert!(e.starts_with("s.yaml:6:"), "{value}: {e}");
        assert!(e.contains("timeout_s"), "{value}: {e}");
        assert!(e.contains(problem), "{value}: {e}");
    }
    let e = error("targets:\n  a: {type: command, command: [cat], timeout_s: 1e300}\ncases: []\n");
    assert!(e.starts_with("s.yaml:2:"), "{e}");
    assert!(e.contains("at most 86400 (24 h)"), "{e}");
    let e = error(&format!("{TARGETS}judge:\n  timeout_s: 1e300\ncases: []\n"));
    assert!(e.starts_with("s.yaml:4:") && e.contains("timeout_s"), "{e}");
    let e = error(&format!(
        "{TARGETS}cases:\n  - id: a\n    input: hi\n    checks:\n      - type: latency\n        max_ms: 0\n"
    ));
    assert!(e.starts_with("s.yaml:7:") && e.contains("max_ms"), "{e}");
}

#[test]
fn durations_in_jsonl_name_their_line() {
    let errors = parse_suite_str(
        "{\"input\": \"a\"}\n{\"input\": \"b\", \"timeout_s\": 1e300}\n",
        "c.jsonl".as_ref(),
    )
    .unwrap_err();
    let e = errors[0].to_string();
    assert!(e.starts_with("c.jsonl:2:"), "{e}");
    assert!(e.contains("timeout_s"), "{e}");
}

#[test]
fn nan_is_refused_in_every_number() {
    let e = error(&format!(
        "{TARGETS}cases:\n  - id: a\n    input: hi\n    threshold: .nan\n"
    ));
    assert!(e.starts_with("s.yaml:6:"), "{e}");
    assert!(
        e.contains("cases[0].threshold") && e.contains("not finite"),
        "{e}"
    );
    let e = error(&format!(
        "{TARGETS}cases:\n  - id: a\n    input: hi\n    context: {{rate: -.inf}}\n"
    ));
    assert!(e.contains("cases[0].context.rate"), "{e}");
    let e = error(&format!("{TARGETS}judge:\n  max_cost: .nan\ncases: []\n"));
    assert!(e.contains("max_cost") && e.contains("not finite"), "{e}");
}

#[test]
fn counts_are_capped() {
    let e = error(&format!(
        "{TARGETS}cases:\n  - id: a\n    input: hi\n    repeat: 4294967295\n"
    ));
    assert!(e.starts_with("s.yaml:6:"), "{e}");
    assert!(
        e.contains("repeat") && e.contains("between 1 and 10000"),
        "{e}"
    );
    let e = error(&format!("{TARGETS}defaults:\n  rejudge: 1000\ncases: []\n"));
    assert!(
        e.contains("rejudge") && e.contains("between 0 and 100"),
        "{e}"
    );
    let e = error(&format!("{TARGETS}judge:\n  concurrency: 0\ncases: []\n"));
    assert!(
        e.contains("concurrency") && e.contains("between 1 and 1024"),
        "{e}"
    );
    // 200 cases × 10,000 repeats: each case is allowed, the run is not.
    let mut yaml = format!("{TARGETS}defaults:\n  repeat: 10000\ncases:\n");
    for i in 0..200 {
        yaml.push_str(&format!("  - id: c{i}\n    input: hi\n"));
    }
    let e = error(&yaml);
    assert!(e.contains("2000000 executions planned"), "{e}");
    assert!(e.contains("at most 1000000"), "{e}");
}

#[test]
fn byte_order_marks_are_accepted() {
    for (name, text) in [
        ("s.json", "\u{feff}{\"cases\": [{\"input\": \"hi\"}]}"),
        ("s.yaml", "\u{feff}cases:\n  - input: hi\n"),
        ("s.jsonl", "\u{feff}{\"input\": \"hi\"}\n"),
    ] {
        let suite =
            parse_suite_str(text, name.as_ref()).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(suite.cases.len(), 1, "{name}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, b"\xEF\xBB\xBF{\"cases\": [{\"input\": \"hi\"}]}").unwrap();
    assert_eq!(load_paths(&[path]).unwrap().cases.len(), 1);
}

#[test]
fn invalid_utf8_names_file_line_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, b"cases:\n  - input: h\xFFi\n").unwrap();
    let errors = load_paths(std::slice::from_ref(&path)).unwrap_err();
    let e = errors[0].to_string();
    assert_eq!(
        e,
        format!(
            "{}:2:13: invalid UTF-8 at line 2, column 13 (byte offset 19)",
            path.display()
        )
    );
}

#[test]
fn only_regular_files_are_read() {
    let errors = load_paths(&[PathBuf::from("/dev/zero")]).unwrap_err();
    assert_eq!(
        errors[0].to_string(),
        "/dev/zero: not a regular file: it is a device, FIFO or socket"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(
        &path,
        "datasets:\n  - file: /dev/zero\n    case: {input: x}\n",
    )
    .unwrap();
    let e = load_paths(&[path]).unwrap_err()[0].to_string();
    assert!(e.contains("dataset `/dev/zero`: not a regular file"), "{e}");
    assert!(e.contains("datasets.file"), "{e}");
}

#[test]
fn retries_are_capped() {
    let e = error(&format!(
        "{TARGETS}judge:\n  max_retries: 4294967295\ncases: []\n"
    ));
    assert!(
        e.starts_with("s.yaml:4:") && e.contains("between 0 and 100"),
        "{e}"
    );
    let e =
        error("targets:\n  a: {type: http, url: 'http://x/', retry: {attempts: 0}}\ncases: []\n");
    assert!(
        e.contains("`attempts`") && e.contains("between 1 and 100"),
        "{e}"
    );
}

#[test]
fn the_schema_still_describes_bounded_fields() {
    let schema = gavel_core::load::suite_schema().to_string();
    for field in [
        "timeout_s",
        "repeat",
        "rejudge",
        "variants",
        "max_cost",
        "retry",
        "backoff_ms",
    ] {
        assert!(
            schema.contains(&format!("\"{field}\"")),
            "{field} missing from the schema"
        );
    }
}
