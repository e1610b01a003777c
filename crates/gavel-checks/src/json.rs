//! Checks on JSON (the output parsed, or the target's response): is-json,
//! json-schema, required-keys, numeric-fields.

use std::borrow::Cow;

use gavel_core::CheckKind;
use gavel_core::check::JsonSource;
use gavel_core::{CheckSpec, Turn};
use serde_json::{Number, Value, json};

use crate::check::CodeCheck;
use crate::compiled::Schema;
use crate::error::FieldError;
use crate::expected::Expected;
use crate::finding::Finding;
use crate::names::{bracket_list, short, truncate};
use crate::subject::Subject;

/// Schema violations spelled out in a reason.
const REASON_ERRORS: usize = 5;
/// Schema violations kept in the evidence.
const EVIDENCE_ERRORS: usize = 20;
/// Characters of one violation message kept.
const MESSAGE_CHARS: usize = 200;

/// A compiled JSON check: which JSON it reads and what it requires of it.
pub(crate) struct JsonCheck {
    from: JsonSource,
    rule: Rule,
}

enum Rule {
    IsJson,
    Schema {
        validator: Schema,
        title: Option<String>,
    },
    RequiredKeys(Vec<Key>),
    Numeric(Vec<NumericField>),
}

/// A key as written and the JSON pointer it stands for.
pub(crate) struct Key {
    pub(crate) written: String,
    pub(crate) pointer: String,
}

/// A numeric field and the number it must equal when present.
struct NumericField {
    key: Key,
    expected: Number,
}

impl JsonCheck {
    /// Compiles a JSON check; `spec` must be one of the JSON kinds.
    pub(crate) fn compile(spec: &CheckSpec, expected: &Expected<'_>) -> Result<Self, FieldError> {
        let (from, rule) = match spec {
            CheckSpec::IsJson { from } => (*from, Rule::IsJson),
            CheckSpec::JsonSchema { schema, from } => {
                let validator =
                    crate::compiled::schema(schema).map_err(|e| FieldError::new("schema", e))?;
                let title = schema
                    .get("title")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                (*from, Rule::Schema { validator, title })
            }
            CheckSpec::RequiredKeys { keys, from } => {
                if keys.is_empty() {
                    return Err(FieldError::new("keys", "give at least one key"));
                }
                (
                    *from,
                    Rule::RequiredKeys(keys.iter().map(|k| Key::new(k)).collect()),
                )
            }
            CheckSpec::NumericFields {
                values,
                fields,
                from,
            } => (
                *from,
                Rule::Numeric(numeric_fields(values, fields, expected.output)?),
            ),
            other => {
                return Err(FieldError::new(
                    "type",
                    format!("`{}` is not a JSON check", other.kind()),
                ));
            }
        };
        Ok(JsonCheck { from, rule })
    }
}

impl CodeCheck for JsonCheck {
    /// Display name, e.g. `required-keys [total, /data/items]`.
    fn name(&self) -> String {
        let written = |keys: Vec<&Key>| {
            bracket_list(&keys.iter().map(|k| k.written.clone()).collect::<Vec<_>>())
        };
        let mut name = match &self.rule {
            Rule::IsJson => "is-json".to_owned(),
            Rule::Schema { title: Some(t), .. } => {
                format!("json-schema {}", short(&format!("{t:?}")))
            }
            Rule::Schema { title: None, .. } => "json-schema".to_owned(),
            Rule::RequiredKeys(keys) => format!("required-keys {}", written(keys.iter().collect())),
            Rule::Numeric(fields) => format!(
                "numeric-fields {}",
                written(fields.iter().map(|f| &f.key).collect())
            ),
        };
        if self.from == JsonSource::Response {
            name.push_str(" (response)");
        }
        name
    }

    /// The check's type as written in suite files.
    fn kind(&self) -> CheckKind {
        match self.rule {
            Rule::IsJson => CheckKind::IsJson,
            Rule::Schema { .. } => CheckKind::JsonSchema,
            Rule::RequiredKeys(_) => CheckKind::RequiredKeys,
            Rule::Numeric(_) => CheckKind::NumericFields,
        }
    }

    /// Grades the answer's JSON.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let answer = subject.answer;
        let what = match self.from {
            JsonSource::Output => "output",
            JsonSource::Response => "response",
        };
        let doc = match read(self.from, answer) {
            Ok(doc) => doc,
            Err(reason) => {
                return Finding::fail(reason.clone(), json!({ "from": what, "error": reason }));
            }
        };
        match &self.rule {
            Rule::IsJson => Finding::pass(
                format!("the {what} is JSON ({})", gavel_core::json_type(&doc)),
                json!({ "from": what, "json_type": gavel_core::json_type(&doc) }),
            ),
            Rule::Schema { validator, .. } => schema(validator, &doc, what),
            Rule::RequiredKeys(keys) => required_keys(keys, &doc, what),
            Rule::Numeric(fields) => numeric(fields, &doc, what),
        }
    }
}

impl Key {
    /// `/a/b` stays a pointer; a bare key names a top-level member.
    pub(crate) fn new(written: &str) -> Self {
        let pointer = if written.starts_with('/') {
            written.to_owned()
        } else {
            format!("/{}", written.replace('~', "~0").replace('/', "~1"))
        };
        Key {
            written: written.to_owned(),
            pointer,
        }
    }
}

/// Resolves `values` and `fields` (from the expected output) into numeric fields.
fn numeric_fields(
    values: &std::collections::BTreeMap<String, f64>,
    fields: &[String],
    expected_output: Option<&Value>,
) -> Result<Vec<NumericField>, FieldError> {
    if values.is_empty() && fields.is_empty() {
        return Err(FieldError::new(
            "values",
            "give `values` (pointer: number) or `fields` (taken from `expected_output`)",
        ));
    }
    let mut out = Vec::new();
    for (written, value) in values {
        let expected = number_from_f64(*value)
            .ok_or_else(|| FieldError::new(format!("values.{written}"), "not a finite number"))?;
        out.push(NumericField {
            key: Key::new(written),
            expected,
        });
    }
    if fields.is_empty() {
        return Ok(out);
    }
    let source = expected_output.ok_or_else(|| {
        FieldError::new("fields", "`fields` takes its numbers from `expected_output`, but neither the round nor the case has one")
    })?;
    let parsed;
    let source = match source {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).map_err(|e| {
                FieldError::new(
                    "fields",
                    format!(
                        "`fields` takes its numbers from `expected_output`, which is not JSON: {e}"
                    ),
                )
            })?;
            &parsed
        }
        other => other,
    };
    for (i, written) in fields.iter().enumerate() {
        let key = Key::new(written);
        if out.iter().any(|f| f.key.pointer == key.pointer) {
            continue;
        }
        let expected = match source.pointer(&key.pointer) {
            Some(Value::Number(n)) => n.clone(),
            Some(other) => {
                return Err(FieldError::new(
                    format!("fields[{i}]"),
                    format!(
                        "`expected_output` has {} at {}, not a number",
                        gavel_core::json_type(other),
                        key.pointer
                    ),
                ));
            }
            None => {
                return Err(FieldError::new(
                    format!("fields[{i}]"),
                    format!("`expected_output` has no value at {}", key.pointer),
                ));
            }
        };
        out.push(NumericField { key, expected });
    }
    Ok(out)
}

/// The JSON a check reads, or why there is none.
fn read(from: JsonSource, answer: &Turn) -> Result<Cow<'_, Value>, String> {
    match from {
        JsonSource::Output => serde_json::from_str(&answer.output)
            .map(Cow::Owned)
            .map_err(|e| format!("output is not JSON: {e}")),
        JsonSource::Response => answer.response.as_ref().map(Cow::Borrowed).ok_or_else(|| {
            "the target returned no JSON response to read (`from: response` needs an http or command target answering JSON)"
                .to_owned()
        }),
    }
}

fn schema(validator: &Schema, doc: &Value, what: &str) -> Finding {
    let errors: Vec<(String, String)> = validator
        .violations(doc)
        .map(|v| (v.path, truncate(&v.message, MESSAGE_CHARS)))
        .collect();
    if errors.is_empty() {
        return Finding::pass(
            format!("the {what} matches the schema"),
            json!({ "from": what, "errors": [] }),
        );
    }
    let shown: Vec<String> = errors
        .iter()
        .take(REASON_ERRORS)
        .map(|(path, message)| {
            format!(
                "at {}: {message}",
                if path.is_empty() { "(root)" } else { path }
            )
        })
        .collect();
    let more = match errors.len().saturating_sub(REASON_ERRORS) {
        0 => String::new(),
        n => format!("; and {n} more"),
    };
    let count = errors.len();
    let plural = gavel_core::plural(count);
    let listed: Vec<Value> = errors
        .iter()
        .take(EVIDENCE_ERRORS)
        .map(|(path, message)| json!({ "path": path, "message": message }))
        .collect();
    Finding::fail(
        format!(
            "{count} schema violation{plural}: {}{more}",
            shown.join("; ")
        ),
        json!({ "from": what, "error_count": count, "errors": listed }),
    )
}

fn required_keys(keys: &[Key], doc: &Value, what: &str) -> Finding {
    let (present, missing): (Vec<&Key>, Vec<&Key>) =
        keys.iter().partition(|k| doc.pointer(&k.pointer).is_some());
    let names = |keys: &[&Key]| keys.iter().map(|k| k.written.clone()).collect::<Vec<_>>();
    let evidence = json!({ "from": what, "present": names(&present), "missing": names(&missing) });
    if missing.is_empty() {
        Finding::pass(format!("all {} keys present", keys.len()), evidence)
    } else {
        Finding::fail(
            format!("missing keys: {}", names(&missing).join(", ")),
            evidence,
        )
    }
}

fn numeric(fields: &[NumericField], doc: &Value, what: &str) -> Finding {
    let mut problems = Vec::new();
    let mut absent = Vec::new();
    let mut listed = Vec::new();
    for field in fields {
        let name = &field.key.written;
        let actual = doc.pointer(&field.key.pointer);
        let result = match actual {
            None => {
                absent.push(name.clone());
                "absent"
            }
            Some(Value::Number(n)) if numbers_equal(n, &field.expected) => "match",
            Some(Value::Number(n)) => {
                problems.push(format!("{name}: expected {}, got {n}", field.expected));
                "mismatch"
            }
            Some(other) => {
                let shown = truncate(&other.to_string(), 60);
                problems.push(format!(
                    "{name}: expected {}, got {shown} ({}, not a number)",
                    field.expected,
                    gavel_core::json_type(other)
                ));
                "not a number"
            }
        };
        listed.push(json!({ "field": name, "expected": field.expected, "actual": actual, "result": result }));
    }
    let evidence = json!({ "from": what, "fields": listed, "absent": absent });
    let absent_note = match absent.len() {
        0 => String::new(),
        _ => format!(" (absent, not checked: {})", absent.join(", ")),
    };
    if problems.is_empty() {
        let matched = fields.len() - absent.len();
        Finding::pass(
            format!("{matched} of {} fields match{absent_note}", fields.len()),
            evidence,
        )
    } else {
        Finding::fail(format!("{}{absent_note}", problems.join("; ")), evidence)
    }
}

/// A number as JSON: whole numbers as integers (shown `120`, not `120.0`).
fn number_from_f64(value: f64) -> Option<Number> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.fract() == 0.0 && value.abs() < EXACT {
        Some(Number::from(value as i64))
    } else {
        Number::from_f64(value)
    }
}

/// Numbers compare by value: `3 == 3.0`; integers exactly.
pub(crate) fn numbers_equal(a: &Number, b: &Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    matches!((a.as_f64(), b.as_f64()), (Some(x), Some(y)) if x == y)
}

/// JSON equality with numbers compared by value.
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| values_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The JSON pointer of the first place where `actual` differs from `expected`.
pub(crate) fn first_difference(actual: &Value, expected: &Value) -> Option<String> {
    fn walk(actual: &Value, expected: &Value, path: &mut String) -> bool {
        let len = path.len();
        let child = |path: &mut String, segment: &str, a: Option<&Value>, e: Option<&Value>| {
            path.push('/');
            path.push_str(&segment.replace('~', "~0").replace('/', "~1"));
            let found = match (a, e) {
                (Some(a), Some(e)) => walk(a, e, path),
                _ => true,
            };
            if !found {
                path.truncate(len);
            }
            found
        };
        match (actual, expected) {
            (Value::Array(a), Value::Array(e)) => {
                (0..a.len().max(e.len())).any(|i| child(path, &i.to_string(), a.get(i), e.get(i)))
            }
            (Value::Object(a), Value::Object(e)) => e
                .keys()
                .chain(a.keys().filter(|k| !e.contains_key(*k)))
                .any(|k| child(path, k, a.get(k), e.get(k))),
            _ => !values_equal(actual, expected),
        }
    }
    let mut path = String::new();
    walk(actual, expected, &mut path).then_some(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::Status;
    use serde_json::json;

    use super::*;
    use crate::testing::{case, compile_err, run_one, turn};

    #[test]
    fn differences_are_located_by_pointer() {
        let e = json!({"a": {"b": [1, 2]}, "c": 1});
        assert_eq!(
            first_difference(&json!({"a": {"b": [1, 2.0]}, "c": 1.0}), &e),
            None
        );
        assert_eq!(
            first_difference(&json!({"a": {"b": [1, 3]}, "c": 1}), &e).as_deref(),
            Some("/a/b/1")
        );
        assert_eq!(
            first_difference(&json!({"a": {"b": [1]}, "c": 1}), &e).as_deref(),
            Some("/a/b/1")
        );
        assert_eq!(
            first_difference(&json!({"a": {"b": [1, 2]}, "c": 1, "d/e": 0}), &e).as_deref(),
            Some("/d~1e")
        );
        assert_eq!(first_difference(&json!(2), &json!(1)).as_deref(), Some(""));
        assert!(numbers_equal(
            &Number::from(3),
            &Number::from_f64(3.0).unwrap()
        ));
        assert!(!numbers_equal(
            &Number::from(u64::MAX),
            &Number::from(u64::MAX - 1)
        ));
    }

    #[test]
    fn is_json_reads_output_or_response() {
        let c = case("input: q\nchecks: [{type: is-json}]\n");
        let v = run_one(&c, vec![turn(0, r#"{"a": 1}"#)]);
        assert_eq!(
            (v.status, v.kind.as_str(), v.check.as_str()),
            (Status::Pass, "is-json", "is-json")
        );
        let v = run_one(&c, vec![turn(0, "not json")]);
        assert_eq!(v.status, Status::Fail);
        assert!(v.reason.starts_with("output is not JSON: "), "{}", v.reason);

        let c = case("input: q\nchecks: [{type: is-json, from: response}]\n");
        let v = run_one(&c, vec![turn(0, "plain text")]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.check, "is-json (response)");
        assert!(v.reason.contains("no JSON response"), "{}", v.reason);
        let mut t = turn(0, "plain text");
        t.response = Some(json!({"output": "plain text"}));
        assert_eq!(run_one(&c, vec![t]).status, Status::Pass);
    }

    const SCHEMA_CASE: &str = "input: q\nchecks:\n  - type: json-schema\n    schema:\n      title: Listing\n      type: object\n      required: [name, price]\n      properties:\n        name: {type: string}\n        price: {type: number}\n";

    #[test]
    fn json_schema_lists_violations_with_paths() {
        let c = case(SCHEMA_CASE);
        let v = run_one(
            &c,
            vec![turn(0, r#"{"name": "Beach House", "price": 120}"#)],
        );
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, r#"json-schema "Listing""#);

        let v = run_one(&c, vec![turn(0, r#"{"name": 7}"#)]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.evidence.to_json()["error_count"], 2);
        assert!(
            v.reason.starts_with("2 schema violations: "),
            "{}",
            v.reason
        );
        assert!(
            v.reason.contains("at /name: 7 is not of type \"string\""),
            "{}",
            v.reason
        );
        assert!(
            v.reason
                .contains("at (root): \"price\" is a required property"),
            "{}",
            v.reason
        );
        let paths: Vec<&str> = v.evidence.detail["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap())
            .collect();
        assert!(paths.contains(&"/name") && paths.contains(&""), "{paths:?}");
    }

    #[test]
    fn json_schema_caps_the_violations_it_spells_out() {
        let c = case(
            "input: q\nchecks:\n  - type: json-schema\n    schema: {type: array, items: {type: string}}\n",
        );
        let v = run_one(&c, vec![turn(0, "[1, 2, 3, 4, 5, 6, 7]")]);
        assert_eq!(v.status, Status::Fail);
        assert!(
            v.reason.starts_with("7 schema violations: "),
            "{}",
            v.reason
        );
        assert!(v.reason.ends_with("; and 2 more"), "{}", v.reason);
        assert_eq!(v.reason.matches("at /").count(), 5, "{}", v.reason);
    }

    #[test]
    fn invalid_schema_is_a_compile_error() {
        let e = compile_err(
            "input: q\nchecks:\n  - type: is-json\n  - type: json-schema\n    schema: {type: strng}\n",
        );
        assert!(
            e.contains("case `c`: checks[1].schema: invalid JSON Schema: "),
            "{e}"
        );
    }

    #[test]
    fn required_keys_accept_bare_keys_and_pointers() {
        let c = case(
            "input: q\nchecks:\n  - type: required-keys\n    keys: [total, /data/items, a/b]\n",
        );
        let v = run_one(
            &c,
            vec![turn(
                0,
                r#"{"total": 2, "data": {"items": []}, "a/b": null}"#,
            )],
        );
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, "required-keys [total, /data/items, a/b]");

        let v = run_one(&c, vec![turn(0, r#"{"total": 2, "data": {}}"#)]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, "missing keys: /data/items, a/b");
        assert_eq!(
            v.evidence.to_json()["missing"],
            json!(["/data/items", "a/b"])
        );
        assert_eq!(v.evidence.to_json()["present"], json!(["total"]));
    }

    #[test]
    fn required_keys_from_response() {
        let c = case(
            "input: q\nchecks:\n  - type: required-keys\n    keys: [session_id]\n    from: response\n",
        );
        let mut t = turn(0, "hi");
        t.response = Some(json!({"session_id": "s"}));
        assert_eq!(run_one(&c, vec![t]).status, Status::Pass);
        let mut t = turn(0, "hi");
        t.response = Some(json!({"output": "hi"}));
        let v = run_one(&c, vec![t]);
        assert_eq!(
            (v.status, v.reason.as_str()),
            (Status::Fail, "missing keys: session_id")
        );
    }

    #[test]
    fn numeric_fields_must_match_exactly_when_present() {
        let c = case(
            "input: q\nchecks:\n  - type: numeric-fields\n    values: {/total: 120, count: 3}\n",
        );
        let v = run_one(&c, vec![turn(0, r#"{"total": 120.0, "count": 3}"#)]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.reason, "2 of 2 fields match");

        let v = run_one(&c, vec![turn(0, r#"{"total": 120}"#)]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.reason, "1 of 2 fields match (absent, not checked: count)");
        assert_eq!(v.evidence.to_json()["absent"], json!(["count"]));

        let v = run_one(&c, vec![turn(0, r#"{"total": 119.5, "count": "3"}"#)]);
        assert_eq!(v.status, Status::Fail);
        assert!(v.reason.contains("/total: expected 120"), "{}", v.reason);
        assert!(v.reason.contains("got 119.5"), "{}", v.reason);
        assert!(v.reason.contains("count: expected 3"), "{}", v.reason);
        assert!(v.reason.contains("not a number"), "{}", v.reason);
        assert_eq!(v.evidence.to_json()["fields"][1]["result"], "not a number");

        let v = run_one(&c, vec![turn(0, "total: 120")]);
        assert_eq!(v.status, Status::Fail);
        assert!(v.reason.starts_with("output is not JSON: "), "{}", v.reason);
    }

    #[test]
    fn numeric_fields_take_expected_values_from_expected_output() {
        let c = case(
            "input: q\nexpected_output: {totalAmount: 42.5, items: {count: 2}}\nchecks:\n  - type: numeric-fields\n    fields: [totalAmount, /items/count]\n",
        );
        let v = run_one(
            &c,
            vec![turn(0, r#"{"totalAmount": 42.5, "items": {"count": 2}}"#)],
        );
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        let v = run_one(
            &c,
            vec![turn(0, r#"{"totalAmount": 42.0, "items": {"count": 2}}"#)],
        );
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, "totalAmount: expected 42.5, got 42.0");

        let c = case(
            "input: q\nexpected_output: '{\"total\": 5}'\nchecks: [{type: numeric-fields, fields: [total]}]\n",
        );
        assert_eq!(
            run_one(&c, vec![turn(0, r#"{"total": 5}"#)]).status,
            Status::Pass
        );
    }

    #[test]
    fn numeric_fields_without_expected_numbers_are_compile_errors() {
        let e = compile_err("input: q\nchecks:\n  - type: numeric-fields\n    fields: [total]\n");
        assert!(
            e.contains("checks[0].fields: `fields` takes its numbers from `expected_output`"),
            "{e}"
        );
        let e = compile_err(
            "input: q\nexpected_output: {total: 1}\nchecks:\n  - type: numeric-fields\n    fields: [total, count]\n",
        );
        assert!(
            e.contains("checks[0].fields[1]: `expected_output` has no value at /count"),
            "{e}"
        );
        let e = compile_err(
            "input: q\nexpected_output: {total: one}\nchecks:\n  - type: numeric-fields\n    fields: [total]\n",
        );
        assert!(
            e.contains("checks[0].fields[0]: `expected_output` has a string at /total"),
            "{e}"
        );
        let e = compile_err("input: q\nchecks:\n  - type: numeric-fields\n");
        assert!(e.contains("checks[0].values: give `values`"), "{e}");
    }
}
