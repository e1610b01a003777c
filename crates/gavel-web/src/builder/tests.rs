use serde_json::json;

use super::*;

fn cases() -> Vec<Value> {
    vec![
        json!({"id": "one", "input": "Where is the beach house?", "tags": ["smoke"]}),
        json!({
            "id": "two-rounds", "name": "Booking", "description": "Books a stay",
            "rounds": [
                {"input": "Find a flat", "expected_tools": ["search"],
                 "checks": [{"type": "contains", "value": "Ocean"}]},
                {"input": "Book it", "criteria": "Confirms the booking", "threshold": 0.7,
                 "branch": "a"},
            ],
            "criteria": "Helpful", "threshold": 0.8,
            "checks": [{"type": "latency", "max_ms": 3000}],
            "repeat": 3, "context": {"user": "ana"},
        }),
    ]
}

#[test]
fn a_case_goes_through_the_form_unchanged() {
    for case in cases() {
        let form = CaseForm::of(&case);
        assert_eq!(form.to_case().unwrap(), case);
    }
}

#[test]
fn the_yaml_view_round_trips_exactly() {
    for case in cases() {
        let mut form = CaseForm::of(&case);
        form.action = "yaml".into();
        let mut errors = FieldErrors::new();
        assert!(form.apply(&mut errors));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(form.view, "yaml");
        assert_eq!(form.to_case().unwrap(), case, "saved from the YAML view");
        form.action = "form".into();
        assert!(form.apply(&mut errors));
        assert_eq!(
            form,
            CaseForm {
                add: "contains".into(),
                ..CaseForm::of(&case)
            },
            "back in the form"
        );
    }
}

#[test]
fn rounds_are_added_moved_and_removed() {
    let mut form = CaseForm::of(&cases()[1]);
    let mut errors = FieldErrors::new();
    for action in ["add-round", "round-up:2", "round-down:0", "remove-round:1"] {
        form.action = action.into();
        assert!(form.apply(&mut errors), "{action}");
    }
    let inputs: Vec<&str> = form.rounds.iter().map(|r| r.input.as_str()).collect();
    assert_eq!(inputs, ["", "Book it"]);
    form.rounds[0].add = "regex".into();
    form.action = "add-check:0".into();
    form.apply(&mut errors);
    form.action = "remove-check::0".into();
    form.apply(&mut errors);
    assert_eq!(form.rounds[0].checks[0].kind, "regex");
    assert!(
        form.checks.is_empty(),
        "the case's latency check is removed"
    );
    assert!(errors.is_empty(), "{errors:?}");
    form.action = "save".into();
    assert!(!form.apply(&mut errors));
}

#[test]
fn every_bad_field_is_named_where_it_shows() {
    let mut form = CaseForm::new();
    form.id = "bad id".into();
    form.threshold = "1.5".into();
    form.tags = "smoke, two words".into();
    form.rounds.push(RoundForm {
        input: "x".repeat(MAX_PROMPT_BYTES + 1),
        checks: vec![CheckForm {
            kind: "json-schema".into(),
            value: "{".into(),
            ..CheckForm::default()
        }],
        ..RoundForm::default()
    });
    let errors = form.to_case().unwrap_err();
    let fields: Vec<&str> = errors.keys().map(String::as_str).collect();
    assert_eq!(
        fields,
        [
            "id",
            "rounds.0.input",
            "rounds.1.checks.0",
            "rounds.1.input",
            "tags",
            "threshold"
        ]
    );
    assert!(errors["rounds.1.input"].contains("at most 256 KiB"));
}

#[test]
fn compile_errors_land_by_their_field() {
    let form = CaseForm::new();
    for (field, key) in [
        ("rounds[1].checks[0].pattern", "rounds.1.checks.0"),
        ("checks[2].schema", "checks.2"),
        ("rounds[0].threshold", "rounds.0.threshold"),
        ("input", "rounds.0.input"),
        ("repeat", "case"),
    ] {
        assert_eq!(error_key(&form, field), key);
    }
}
