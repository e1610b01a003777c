//! Checks on the answer text: equals, contains (all), icontains (all),
//! contains-any, icontains-any, not-contains, regex.

use gavel_core::CheckKind;
use gavel_core::CheckSpec;
use regex::Regex;
use serde_json::{Value, json};

use crate::check::CodeCheck;
use crate::error::FieldError;
use crate::expected::Expected;
use crate::finding::Finding;
use crate::json::{first_difference, values_equal};
use crate::names::{quoted_list, short, truncate};
use crate::subject::Subject;

/// Characters of the actual output shown in a reason.
const SHOWN_CHARS: usize = 200;

/// A compiled text check.
pub(crate) enum TextCheck {
    /// The output equals a text.
    EqualsText {
        expected: String,
        ignore_case: bool,
        trim: bool,
    },
    /// The output, parsed as JSON, equals a JSON value.
    EqualsJson { expected: Value },
    /// The output contains every string, or with `any` at least one
    /// (`ignore_case` for the icontains kinds).
    Contains {
        values: Vec<String>,
        ignore_case: bool,
        any: bool,
    },
    /// The output contains none of the strings, ignoring case.
    NotContains { values: Vec<String> },
    /// The output matches (or with `negate`, does not match) a pattern.
    Regex { regex: Regex, negate: bool },
}

impl TextCheck {
    /// Compiles a text check; `spec` must be one of the text kinds.
    pub(crate) fn compile(spec: &CheckSpec, expected: &Expected<'_>) -> Result<Self, FieldError> {
        let strings = |values: &[String]| {
            if values.is_empty() {
                Err(FieldError::new("value", "give at least one string"))
            } else {
                Ok(values.to_vec())
            }
        };
        Ok(match spec {
            CheckSpec::Equals {
                value,
                ignore_case,
                trim,
            } => {
                let value = value.as_ref().or(expected.output).ok_or_else(|| {
                    FieldError::new(
                        "value",
                        "equals needs a `value`, or an `expected_output` on the round or the case",
                    )
                })?;
                match value {
                    Value::String(s) => TextCheck::EqualsText {
                        expected: s.clone(),
                        ignore_case: *ignore_case,
                        trim: *trim,
                    },
                    other => TextCheck::EqualsJson {
                        expected: other.clone(),
                    },
                }
            }
            CheckSpec::Contains { value } => TextCheck::Contains {
                values: strings(value.as_slice())?,
                ignore_case: false,
                any: false,
            },
            CheckSpec::Icontains { value } => TextCheck::Contains {
                values: strings(value.as_slice())?,
                ignore_case: true,
                any: false,
            },
            CheckSpec::ContainsAny { value } => TextCheck::Contains {
                values: strings(value.as_slice())?,
                ignore_case: false,
                any: true,
            },
            CheckSpec::IcontainsAny { value } => TextCheck::Contains {
                values: strings(value.as_slice())?,
                ignore_case: true,
                any: true,
            },
            CheckSpec::NotContains { value } => TextCheck::NotContains {
                values: strings(value.as_slice())?,
            },
            CheckSpec::Regex { pattern, negate } => {
                let regex = crate::compiled::regex(pattern)
                    .map_err(|e| FieldError::new("pattern", e.to_string()))?;
                TextCheck::Regex {
                    regex,
                    negate: *negate,
                }
            }
            other => {
                return Err(FieldError::new(
                    "type",
                    format!("`{}` is not a text check", other.kind()),
                ));
            }
        })
    }
}

impl CodeCheck for TextCheck {
    /// Display name, e.g. `contains "Beach House"` or `regex /\d+ listings/`.
    fn name(&self) -> String {
        match self {
            TextCheck::EqualsText { expected, .. } => {
                format!("equals {}", short(&format!("{expected:?}")))
            }
            TextCheck::EqualsJson { expected } => {
                format!("equals {}", short(&expected.to_string()))
            }
            TextCheck::Contains { values, .. } | TextCheck::NotContains { values } => {
                format!("{} {}", self.kind(), quoted_list(values))
            }
            TextCheck::Regex { regex, negate } => {
                format!(
                    "{}regex /{}/",
                    if *negate { "not " } else { "" },
                    short(regex.as_str())
                )
            }
        }
    }

    /// The check's type as written in suite files.
    fn kind(&self) -> CheckKind {
        match self {
            TextCheck::EqualsText { .. } | TextCheck::EqualsJson { .. } => CheckKind::Equals,
            TextCheck::Contains {
                ignore_case, any, ..
            } => match (ignore_case, any) {
                (false, false) => CheckKind::Contains,
                (true, false) => CheckKind::Icontains,
                (false, true) => CheckKind::ContainsAny,
                (true, true) => CheckKind::IcontainsAny,
            },
            TextCheck::NotContains { .. } => CheckKind::NotContains,
            TextCheck::Regex { .. } => CheckKind::Regex,
        }
    }

    /// Grades the answer's text.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let answer = subject.answer;
        let output = answer.output.as_str();
        match self {
            TextCheck::EqualsText {
                expected,
                ignore_case,
                trim,
            } => equals_text(output, expected, *ignore_case, *trim),
            TextCheck::EqualsJson { expected } => equals_json(output, expected),
            TextCheck::Contains {
                values,
                ignore_case,
                any,
            } => contains(output, values, *ignore_case, *any),
            TextCheck::NotContains { values } => not_contains(output, values),
            TextCheck::Regex { regex, negate } => matches(output, regex, *negate),
        }
    }
}

fn equals_text(output: &str, expected: &str, ignore_case: bool, trim: bool) -> Finding {
    let prepare = |s: &str| {
        let s = if trim { s.trim() } else { s };
        if ignore_case {
            s.to_lowercase()
        } else {
            s.to_owned()
        }
    };
    let (actual, wanted) = (prepare(output), prepare(expected));
    let evidence = json!({ "expected": expected, "actual": truncate(output, SHOWN_CHARS) });
    if actual == wanted {
        return Finding::pass("the output equals the expected text", evidence);
    }
    let at = actual
        .chars()
        .zip(wanted.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let mut evidence = evidence;
    evidence["first_difference_at"] = json!(at);
    Finding::fail(
        format!(
            "the output differs from the expected text at character {at}: expected {:?}, got {:?}",
            truncate(expected, SHOWN_CHARS),
            truncate(output, SHOWN_CHARS)
        ),
        evidence,
    )
}

fn equals_json(output: &str, expected: &Value) -> Finding {
    let actual: Value = match serde_json::from_str(output) {
        Ok(v) => v,
        Err(e) => {
            return Finding::fail(
                format!("output is not JSON: {e}"),
                json!({ "expected": expected, "actual": truncate(output, SHOWN_CHARS) }),
            );
        }
    };
    if values_equal(&actual, expected) {
        return Finding::pass(
            "the output equals the expected JSON",
            json!({ "expected": expected }),
        );
    }
    let path = first_difference(&actual, expected).unwrap_or_default();
    let shown = if path.is_empty() {
        "(root)".to_owned()
    } else {
        path.clone()
    };
    Finding::fail(
        format!("the output JSON differs from the expected JSON at {shown}"),
        json!({ "expected": expected, "actual": actual, "first_difference": path }),
    )
}

fn contains(output: &str, values: &[String], ignore_case: bool, any: bool) -> Finding {
    let haystack = if ignore_case {
        output.to_lowercase()
    } else {
        output.to_owned()
    };
    let (found, missing): (Vec<&String>, Vec<&String>) = values.iter().partition(|v| {
        if ignore_case {
            haystack.contains(&v.to_lowercase())
        } else {
            haystack.contains(v.as_str())
        }
    });
    let evidence = json!({ "found": found, "missing": missing });
    if any {
        return if found.is_empty() {
            Finding::fail(format!("found none of {}", list(&missing)), evidence)
        } else {
            Finding::pass(format!("found {}", list(&found)), evidence)
        };
    }
    if missing.is_empty() {
        Finding::pass(format!("found {}", list(&found)), evidence)
    } else {
        Finding::fail(format!("missing {}", list(&missing)), evidence)
    }
}

fn not_contains(output: &str, values: &[String]) -> Finding {
    let haystack = output.to_lowercase();
    let found: Vec<&String> = values
        .iter()
        .filter(|v| haystack.contains(&v.to_lowercase()))
        .collect();
    let evidence = json!({ "forbidden": values, "found": found });
    if found.is_empty() {
        Finding::pass(
            format!("none of {} found", list(&values.iter().collect::<Vec<_>>())),
            evidence,
        )
    } else {
        Finding::fail(format!("found forbidden {}", list(&found)), evidence)
    }
}

fn matches(output: &str, regex: &Regex, negate: bool) -> Finding {
    let found = regex
        .find(output)
        .map(|m| truncate(m.as_str(), SHOWN_CHARS));
    let pattern = regex.as_str();
    let evidence = json!({ "pattern": pattern, "matched": found });
    match (found, negate) {
        (Some(m), false) => Finding::pass(format!("matched {m:?}"), evidence),
        (None, false) => Finding::fail(format!("no match for /{pattern}/"), evidence),
        (None, true) => Finding::pass(format!("no match for /{pattern}/, as required"), evidence),
        (Some(m), true) => Finding::fail(
            format!("matched {m:?}, which must not match /{pattern}/"),
            evidence,
        ),
    }
}

/// `"a", "b"`, for reasons.
fn list(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::Status;
    use serde_json::json;

    use crate::testing::{case, compile_err, run_one, turn};

    #[test]
    fn contains_any_needs_one_and_contains_all_needs_every() {
        let c = case("input: q\nchecks: [{type: contains-any, value: [Beach, Cabin]}]\n");
        let v = run_one(&c, vec![turn(0, "The Cabin is free")]);
        assert_eq!((v.status, v.kind.as_str()), (Status::Pass, "contains-any"));
        assert_eq!(v.check, "contains-any \"Beach\", \"Cabin\"");
        assert_eq!(v.reason, "found \"Cabin\"");
        let v = run_one(&c, vec![turn(0, "the cabin is free")]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, "found none of \"Beach\", \"Cabin\"");

        let c = case("input: q\nchecks: [{type: icontains-any, value: [Beach, Cabin]}]\n");
        let v = run_one(&c, vec![turn(0, "the cabin is free")]);
        assert_eq!((v.status, v.kind.as_str()), (Status::Pass, "icontains-any"));
        let v = run_one(&c, vec![turn(0, "the villa is free")]);
        assert_eq!(v.status, Status::Fail);

        let c = case("input: q\nchecks: [{type: contains-all, value: [Beach, Cabin]}]\n");
        let v = run_one(&c, vec![turn(0, "Beach and Cabin")]);
        assert_eq!((v.status, v.kind.as_str()), (Status::Pass, "contains"));
        let v = run_one(&c, vec![turn(0, "Beach only")]);
        assert_eq!(
            (v.status, v.reason.as_str()),
            (Status::Fail, "missing \"Cabin\"")
        );
        let c = case("input: q\nchecks: [{type: icontains-all, value: [beach, cabin]}]\n");
        let v = run_one(&c, vec![turn(0, "BEACH and CABIN")]);
        assert_eq!((v.status, v.kind.as_str()), (Status::Pass, "icontains"));

        // No answer: skipped, never failed.
        let mut broken = turn(0, "");
        broken.failure = Some(gavel_core::TargetFailure {
            message: "timeout".into(),
            transient: true,
        });
        let c = case("input: q\nchecks: [{type: contains-any, value: [a]}]\n");
        assert_eq!(run_one(&c, vec![broken]).status, Status::Skipped);
        let e = compile_err("input: q\nchecks: [{type: icontains-any, value: []}]\n");
        assert!(
            e.contains("checks[0].value: give at least one string"),
            "{e}"
        );
    }

    #[test]
    fn equals_text_trims_and_can_ignore_case() {
        let c = case("input: q\nchecks:\n  - type: equals\n    value: Beach House\n");
        let v = run_one(&c, vec![turn(0, "  Beach House\n")]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, "equals \"Beach House\"");
        assert_eq!(v.kind, gavel_core::CheckKind::Equals);
        assert_eq!(v.score, Some(1.0));

        let v = run_one(&c, vec![turn(0, "beach house")]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.score, Some(0.0));
        assert!(v.reason.contains("at character 0"), "{}", v.reason);
        assert_eq!(v.evidence.to_json()["expected"], "Beach House");

        let c = case(
            "input: q\nchecks:\n  - type: equals\n    value: Beach House\n    ignore_case: true\n",
        );
        assert_eq!(
            run_one(&c, vec![turn(0, "beach HOUSE")]).status,
            Status::Pass
        );

        let c = case("input: q\nchecks:\n  - type: equals\n    value: ok\n    trim: false\n");
        assert_eq!(run_one(&c, vec![turn(0, "ok\n")]).status, Status::Fail);
    }

    #[test]
    fn equals_falls_back_to_round_then_case_expected_output() {
        let yaml = "expected_output: case answer\nrounds:\n  - input: a\n    expected_output: round answer\n    checks: [{type: equals}]\n  - input: b\n    checks: [{type: equals}]\n";
        let c = case(yaml);
        let plan = crate::testing::compile(&c).unwrap();
        let verdicts = crate::testing::run_all(
            &plan,
            &crate::testing::transcript(vec![turn(0, "round answer"), turn(1, "case answer")]),
        );
        assert_eq!(verdicts[0].status, Status::Pass, "{}", verdicts[0].reason);
        assert_eq!(verdicts[0].check, "equals \"round answer\"");
        assert_eq!(verdicts[1].status, Status::Pass, "{}", verdicts[1].reason);
        assert_eq!(verdicts[1].check, "equals \"case answer\"");
    }

    #[test]
    fn equals_json_compares_values_numerically() {
        let c = case(
            "input: q\nexpected_output: {total: 3, items: [1, 2]}\nchecks: [{type: equals}]\n",
        );
        let v = run_one(&c, vec![turn(0, r#"{"items": [1.0, 2], "total": 3.0}"#)]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);

        let v = run_one(&c, vec![turn(0, r#"{"items": [1, 5], "total": 3}"#)]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.evidence.to_json()["first_difference"], "/items/1");
        assert!(v.reason.contains("/items/1"), "{}", v.reason);

        let v = run_one(&c, vec![turn(0, "three")]);
        assert_eq!(v.status, Status::Fail);
        assert!(v.reason.starts_with("output is not JSON: "), "{}", v.reason);
    }

    #[test]
    fn equals_without_value_or_expected_output_is_a_compile_error() {
        let e = compile_err("input: q\nchecks:\n  - type: equals\n");
        assert!(e.contains("checks[0].value: equals needs a `value`"), "{e}");
    }

    #[test]
    fn contains_lists_missing_strings() {
        let c = case("input: q\nchecks:\n  - type: contains\n    value: [Beach House, Villa]\n");
        let v = run_one(&c, vec![turn(0, "We have Beach House and Villa Rosa")]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, r#"contains "Beach House", "Villa""#);

        let v = run_one(&c, vec![turn(0, "We have the beach house")]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, r#"missing "Beach House", "Villa""#);
        assert_eq!(
            v.evidence.to_json()["missing"],
            json!(["Beach House", "Villa"])
        );
    }

    #[test]
    fn icontains_ignores_case() {
        let c = case("input: q\nchecks:\n  - type: icontains\n    value: beach house\n");
        assert_eq!(
            run_one(&c, vec![turn(0, "The BEACH House")]).status,
            Status::Pass
        );
        let v = run_one(&c, vec![turn(0, "The villa")]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.kind, gavel_core::CheckKind::Icontains);
        assert_eq!(v.reason, r#"missing "beach house""#);
    }

    #[test]
    fn not_contains_is_case_insensitive_and_names_what_it_found() {
        let c = case("input: q\nchecks:\n  - type: not-contains\n    value: [error, sorry]\n");
        assert_eq!(run_one(&c, vec![turn(0, "All good")]).status, Status::Pass);
        let v = run_one(&c, vec![turn(0, "Sorry, I cannot")]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, r#"found forbidden "sorry""#);
        assert_eq!(v.evidence.to_json()["found"], json!(["sorry"]));
    }

    #[test]
    fn empty_string_lists_are_rejected() {
        let e = compile_err("input: q\nchecks:\n  - type: contains\n    value: []\n");
        assert!(
            e.contains("checks[0].value: give at least one string"),
            "{e}"
        );
    }

    #[test]
    fn regex_matches_and_negates() {
        let c = case("input: q\nchecks:\n  - type: regex\n    pattern: '\\d+ listings'\n");
        let v = run_one(&c, vec![turn(0, "Found 12 listings.")]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, r"regex /\d+ listings/");
        assert_eq!(v.evidence.to_json()["matched"], "12 listings");
        let v = run_one(&c, vec![turn(0, "Found some listings.")]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, r"no match for /\d+ listings/");

        let c = case(
            "input: q\nchecks:\n  - type: regex\n    pattern: '(?i)error'\n    negate: true\n",
        );
        assert_eq!(run_one(&c, vec![turn(0, "fine")]).status, Status::Pass);
        let v = run_one(&c, vec![turn(0, "an ERROR occurred")]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.check, "not regex /(?i)error/");
        assert!(v.reason.contains("\"ERROR\""), "{}", v.reason);
    }

    #[test]
    fn bad_regex_is_a_compile_error_naming_the_field() {
        let e = compile_err(
            "rounds:\n  - input: a\n  - input: b\n    checks:\n      - type: regex\n        pattern: '(unclosed'\n",
        );
        assert!(
            e.starts_with("t.yaml:2: case `c`: rounds[1].checks[0].pattern: regex parse error"),
            "{e}"
        );
    }

    #[test]
    fn long_arguments_are_shortened_in_names() {
        let long = "x".repeat(100);
        let c = case(&format!(
            "input: q\nchecks:\n  - type: contains\n    value: {long}\n"
        ));
        let v = run_one(&c, vec![turn(0, &long)]);
        assert!(v.check.ends_with('…'), "{}", v.check);
        assert!(v.check.chars().count() < 60, "{}", v.check);
    }
}
