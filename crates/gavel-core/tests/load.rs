//! Every loader: native YAML/JSON, JSONL, CSV/JSONL datasets, seed formats, and
//! the merge rules across files.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gavel_core::load::load_paths;
use serde_json::json;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn seeds() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/seeds")
}

#[test]
fn csv_and_jsonl_datasets_expand_through_the_template() {
    let suite = load_paths(&[fixture("data-suite.yaml")]).unwrap();
    let ids: Vec<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["csv-2", "csv-3", "rows-1", "rows-3"]);
    let csv = &suite.cases[0];
    assert_eq!(csv.rounds[0].input, json!("How many listings do I have?"));
    assert_eq!(csv.tags, ["count", "data"]);
    assert_eq!(csv.repeat_count(), 2);
    assert!(csv.source.ends_with("questions.csv:2:1"), "{}", csv.source);
    let jsonl = &suite.cases[2];
    assert_eq!(
        jsonl.threshold,
        Some(0.5),
        "whole-leaf variables keep their JSON type"
    );
    assert_eq!(
        jsonl.context,
        Some(json!({"locale": "en", "user": "ana"})),
        "case context wins over defaults"
    );
    assert_eq!(jsonl.targets, ["agent"]);
    let gavel_core::TargetSpec::Command(cmd) = &suite.targets["agent"] else {
        panic!()
    };
    assert!(
        Path::new(cmd.cwd.as_deref().unwrap()).is_absolute(),
        "cwd resolved against the suite's folder"
    );
}

#[test]
fn jsonl_cases_accept_seed_spellings() {
    let suite = load_paths(&[fixture("cases.jsonl")]).unwrap();
    assert_eq!(suite.cases.len(), 2);
    let c = &suite.cases[1];
    assert_eq!(c.criteria.as_deref(), Some("be nice"));
    assert_eq!(c.threshold, Some(0.8));
    assert_eq!(c.source, format!("{}:2", fixture("cases.jsonl").display()));
    assert!(
        !suite.warnings.is_empty(),
        "no target: a warning, not an error"
    );
}

#[test]
fn seed_002_dataset_and_seed_000_dicts_load_unchanged() {
    let suite = load_paths(&[seeds()]).unwrap();
    let ex = suite.cases.iter().find(|c| c.id == "example_1").unwrap();
    assert_eq!(ex.expected_tools, ["get_listings"]);
    assert!(
        ex.criteria
            .as_deref()
            .unwrap()
            .starts_with("Must list all three")
    );
    assert_eq!(ex.context.as_ref().unwrap()["user_name"], "Ana");
    let multi = suite
        .cases
        .iter()
        .find(|c| c.name == "multi_round_conversation")
        .unwrap();
    assert_eq!(multi.id, "multi-round-conversation");
    assert!(multi.revival);
    assert_eq!(multi.rounds.len(), 2);
    assert!(
        multi.rounds[1]
            .criteria
            .as_deref()
            .unwrap()
            .contains("first listing")
    );
}

#[test]
fn a_targets_only_file_gives_its_targets_to_files_without_any() {
    let dir = tempfile::tempdir().unwrap();
    // `y` stays a string: YAML 1.2 booleans only.
    std::fs::write(
        dir.path().join("t.yaml"),
        "targets:\n  a: {type: command, command: [x]}\n  b: {type: command, command: [y]}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("own.yaml"),
        "targets:\n  c: {type: command, command: [z]}\ncases:\n  - {id: own, input: hi}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("plain.json"),
        r#"[{"id": "plain", "input": "hi"}]"#,
    )
    .unwrap();
    let suite = load_paths(&[dir.path().to_owned()]).unwrap();
    let targets = |id: &str| {
        suite
            .cases
            .iter()
            .find(|c| c.id == id)
            .unwrap()
            .targets
            .clone()
    };
    assert_eq!(targets("own"), ["c"]);
    assert_eq!(targets("plain"), ["a", "b", "c"]);
}

#[test]
fn every_problem_is_reported_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.yaml");
    std::fs::write(
        &f,
        "cases:\n  - {id: a, input: hi}\n  - {id: a, input: again}\n  - {id: b, input: x, rounds: [{input: y}]}\n  - {id: c}\n  - {id: d, input: x, targets: [nope]}\n",
    )
    .unwrap();
    let errors = load_paths(std::slice::from_ref(&f)).unwrap_err();
    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    let shown = f.display().to_string();
    assert_eq!(text.len(), 4, "{text:#?}");
    assert!(
        text[0].starts_with(&format!(
            "{shown}:3: id: case `a`: duplicate case id `a` (first defined at {shown}:2)"
        )),
        "{}",
        text[0]
    );
    assert!(
        text[1].contains(":4: input: case `b`: give `input`"),
        "{}",
        text[1]
    );
    assert!(
        text[2].contains(":5: input: case `c`: a case needs"),
        "{}",
        text[2]
    );
    assert!(
        text[3].contains(":6: targets: case `d`: unknown target `nope` (no targets are defined)"),
        "{}",
        text[3]
    );
}

#[test]
fn bad_dataset_rows_name_the_row() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.csv"), "q\nfirst\n").unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        "datasets:\n  - file: d.csv\n    case: {input: '{{ question }}'}\n",
    )
    .unwrap();
    let errors = load_paths(&[dir.path().join("s.yaml")]).unwrap_err();
    assert!(
        errors[0].to_string().contains("d.csv:2:1:"),
        "{}",
        errors[0]
    );
    assert!(errors[0].to_string().contains("undefined"), "{}", errors[0]);
}

#[test]
fn duplicate_ids_in_a_large_dataset_name_both_places_across_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = String::from("n\n");
    for n in 0..5000 {
        rows.push_str(&format!("{n}\n"));
    }
    // Line 5002 repeats row 2500 (line 2502); line 5003 repeats a.yaml's case.
    rows.push_str("2500\nfrom-a\n");
    std::fs::write(dir.path().join("rows.csv"), rows).unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "cases:\n  - {id: row-x, input: hi}\n  - {id: row-from-a, input: hi}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        "datasets:\n  - file: rows.csv\n    case: {id: 'row-{{ n }}', input: hi}\n",
    )
    .unwrap();
    let errors = load_paths(&[dir.path().to_owned()]).unwrap_err();
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    let (a, csv) = (dir.path().join("a.yaml"), dir.path().join("rows.csv"));
    let (a, csv) = (a.display(), csv.display());
    assert_eq!(
        shown,
        [
            format!(
                "{csv}:5002:1: id: case `row-2500`: duplicate case id `row-2500` (first defined at {csv}:2502:1)"
            ),
            format!(
                "{csv}:5003:1: id: case `row-from-a`: duplicate case id `row-from-a` (first defined at {a}:3)"
            ),
        ]
    );
}

#[test]
fn csv_is_rejected_as_a_case_file_and_missing_paths_are_named() {
    let errors = load_paths(&[fixture("questions.csv"), fixture("nope.yaml")]).unwrap_err();
    assert_eq!(errors.len(), 2);
    assert!(
        errors.iter().any(|e| e.message.contains("datasets:")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.to_string().contains("nope.yaml: No such file")),
        "{errors:?}"
    );
}

#[test]
fn native_json_suite_reports_unknown_fields_with_position() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.json");
    std::fs::write(&f, "{\n  \"cases\": [\n    {\"id\": \"a\", \"input\": \"x\", \"expected_tool\": [\"t\"]}\n  ]\n}\n").unwrap();
    let errors = load_paths(&[f]).unwrap_err();
    assert_eq!(errors[0].location.line, Some(3));
    assert!(
        errors[0].message.contains("did you mean `expected_tools`?"),
        "{}",
        errors[0]
    );
}

#[test]
fn variants_need_one_input_and_a_stddev_ceiling() {
    let load = |case: &str| {
        gavel_core::load::parse_suite_str(
            &format!("defaults:\n  min_mean: 0.6\ncases:\n  - id: r\n{case}"),
            Path::new("v.yaml"),
        )
    };
    let suite = load("    input: q\n    variants: [q1, q2]\n    max_stddev: 0.1\n").unwrap();
    let case = &suite.cases[0];
    assert_eq!(case.input_count(), 3);
    assert_eq!(case.min_mean, Some(0.6), "from the defaults");
    assert_eq!(case.with_input(2).rounds[0].input, json!("q2"));
    let message = |case: &str| {
        load(case)
            .unwrap_err()
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let e = message("    input: q\n    variants: [q1]\n");
    assert!(
        e.contains("case `r`: a case with `variants` needs `max_stddev`"),
        "{e}"
    );
    let e =
        message("    rounds: [{input: a}, {input: b}]\n    variants: [q1]\n    max_stddev: 0.1\n");
    assert!(e.contains("several rounds"), "{e}");
    let e = message("    input: q\n    max_stddev: 0.1\n");
    assert!(e.contains("this case has none"), "{e}");
    let e = message("    input: q\n    variants: [q1]\n    max_stddev: 2\n");
    assert!(e.contains("max_stddev 2 must be between 0 and 1"), "{e}");
}

#[test]
fn cases_are_handed_on_one_at_a_time_with_the_settings_of_every_file() {
    let dir = tempfile::tempdir().unwrap();
    // The first file's cases run against a target the second file defines.
    std::fs::write(
        dir.path().join("a.yaml"),
        "cases:\n  - id: one\n    input: hi\n  - id: two\n    input: ho\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.yaml"),
        "targets:\n  bot: {type: command, command: [cat]}\ncases:\n  - id: three\n    input: hey\n",
    )
    .unwrap();
    let sources = [gavel_core::load::SuiteSource::Path(dir.path().to_owned())];
    let loading = gavel_core::load::open(&sources);
    assert_eq!(loading.suite().targets.keys().collect::<Vec<_>>(), ["bot"]);
    let mut seen = Vec::new();
    let suite = loading
        .cases(|case| seen.push((case.id, case.targets, case.source)))
        .unwrap();
    assert!(suite.cases.is_empty(), "the cases were handed on, not kept");
    let a = dir.path().join("a.yaml").display().to_string();
    assert_eq!(
        seen,
        [
            ("one".into(), vec!["bot".to_owned()], format!("{a}:2")),
            ("two".into(), vec!["bot".to_owned()], format!("{a}:4")),
            (
                "three".into(),
                vec!["bot".to_owned()],
                format!("{}:4", dir.path().join("b.yaml").display())
            ),
        ]
    );
}

#[test]
fn a_case_is_handed_on_before_a_later_one_fails_and_every_problem_is_returned() {
    let text = "targets:\n  bot: {type: command, command: [cat]}\ncases:\n  - id: one\n    input: hi\n  - id: one\n    input: again\n  - id: bad\n    input: hi\n    tresh: 1\n";
    let sources = [gavel_core::load::SuiteSource::Text {
        text: text.into(),
        path: "s.yaml".into(),
    }];
    let mut seen = Vec::new();
    let errors = gavel_core::load::open(&sources)
        .cases(|case| seen.push(case.id))
        .unwrap_err();
    assert_eq!(seen, ["one", "one"]);
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(
        shown[0].contains("duplicate case id `one` (first defined at s.yaml:4)"),
        "{shown:?}"
    );
    assert!(
        shown[1].starts_with("s.yaml:10:5") && shown[1].contains("unknown field `tresh`"),
        "{shown:?}"
    );
}

#[test]
fn a_file_changed_between_the_two_passes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, "cases:\n  - id: one\n    input: hi\n").unwrap();
    let sources = [gavel_core::load::SuiteSource::Path(path.clone())];
    let loading = gavel_core::load::open(&sources);
    std::fs::write(&path, "cases:\n  - id: two\n    input: ho\n").unwrap();
    let errors = loading.cases(|_| {}).unwrap_err();
    assert!(
        errors[0]
            .to_string()
            .contains("the file changed while it was being loaded"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_malformed_environment_variable_is_refused_naming_the_target_field() {
    let yaml = "targets:\n  agent:\n    type: command\n    command: [sh, -c, 'echo $0 $HOME $$', '${1X}']\n    env: {KEY: '${TOKEN'}\ncases:\n  - input: hi\n";
    let errors = gavel_core::load::parse_suite_str(yaml, Path::new("s.yaml")).unwrap_err();
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(
        shown[0].contains("targets.agent.command[3]")
            && shown[0].contains("`${1X}` is not a variable"),
        "{shown:?}"
    );
    assert!(
        shown[1].contains("targets.agent.env.KEY") && shown[1].contains("is not closed"),
        "{shown:?}"
    );
    // `$0`, `$HOME` and `$$` are not variables to expand: the suite loads.
    let fine = "targets:\n  agent:\n    type: command\n    command: [sh, -c, 'echo $0 $HOME $$ ${HOME:-/}']\ncases:\n  - input: hi\n";
    gavel_core::load::parse_suite_str(fine, Path::new("s.yaml")).unwrap();
}

#[test]
fn values_of_the_wrong_shape_name_the_field_in_plain_words() {
    for (yaml, expected) in [
        (
            "cases:\n  - input: hi\n    threshold: high\n",
            "s.yaml:3:16: cases[0].threshold: expected a number",
        ),
        (
            "cases:\n  - input: hi\n    tags: {a: 1}\n",
            "s.yaml:3:11: cases[0].tags: expected a list",
        ),
        (
            "cases:\n  - input: hi\n    repeat: many\n",
            "s.yaml:3:13: cases[0].repeat: expected a whole number, 0 or more",
        ),
        (
            "defaults:\n  threshold: x\ncases:\n  - input: hi\n",
            "s.yaml:2:14: defaults.threshold: expected a number",
        ),
    ] {
        let errors = gavel_core::load::parse_suite_str(yaml, Path::new("s.yaml")).unwrap_err();
        assert_eq!(errors[0].to_string(), expected, "{yaml}");
    }
    // Inside a check (read by its `type`) the check is named, in plain words.
    for (yaml, words) in [
        (
            "cases:\n  - input: hi\n    checks: [{type: contains, value: {a: 1}}]\n",
            "expected a text or a list of texts",
        ),
        (
            "cases:\n  - input: hi\n    checks: [{type: judge, scale: {likert: 5, x: 1}}]\n",
            "expected a mapping with one key, the kind, and its settings under it",
        ),
    ] {
        let errors = gavel_core::load::parse_suite_str(yaml, Path::new("s.yaml")).unwrap_err();
        let shown = errors[0].to_string();
        assert!(shown.contains("cases[0].checks[0]"), "{shown}");
        assert!(shown.ends_with(words), "{shown}");
        assert!(
            !shown.contains("untagged") && !shown.contains("single key"),
            "{shown}"
        );
    }
}
