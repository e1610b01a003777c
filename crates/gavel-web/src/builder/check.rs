//! One check in the case builder: a structured editor per kind a person would
//! use, and the check as written in suite files. Keys an editor does not show
//! ride along in `extra`; a kind without an editor is edited as YAML.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The kinds with an editor: (type, what a person reads).
pub(crate) const KINDS: &[(&str, &str)] = &[
    ("contains", "Answer contains"),
    ("not-contains", "Answer does not contain"),
    ("regex", "Answer matches a pattern"),
    ("tools-called", "Tools were called"),
    ("required-keys", "JSON answer has fields"),
    ("numeric-fields", "JSON numbers equal"),
    ("json-schema", "JSON answer fits a schema"),
    ("latency", "Answers in time"),
    ("similar", "Means the same as an expected answer"),
    ("judge", "Judge criteria"),
    ("rubric", "Rubric (six dimensions, 1-5)"),
    ("pairwise", "Better than a baseline"),
    ("other", "Another check (YAML)"),
];

/// The judge scales offered.
pub(crate) const SCALES: &[&str] = &["0-1", "binary", "1-4", "1-5", "0-10"];

/// A check as the builder's fields, all text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CheckForm {
    /// The check's type (one of [`KINDS`]).
    #[serde(default)]
    pub(crate) kind: String,
    /// The main value: strings one per line, a pattern, names, a schema,
    /// milliseconds, an expected answer, a baseline, or (`other`) the check's YAML.
    #[serde(default)]
    pub(crate) value: String,
    /// Judge criteria.
    #[serde(default)]
    pub(crate) criteria: String,
    /// Pass threshold.
    #[serde(default)]
    pub(crate) threshold: String,
    /// Judge scale.
    #[serde(default)]
    pub(crate) scale: String,
    /// regex: `negate`; tools-called: `set`, `order` or `exact`; pairwise: `run` or `target`.
    #[serde(default)]
    pub(crate) option: String,
    /// The check's other keys, as JSON.
    #[serde(default)]
    pub(crate) extra: String,
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A string or a list of strings, one per line.
fn lines(value: &Value) -> String {
    match value {
        Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join("\n"),
        other => text(other),
    }
}

/// Lines back: one line is a string, several a list.
fn one_or_many(text: &str) -> Option<Value> {
    let items: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match items.as_slice() {
        [] => None,
        [one] => Some(Value::from(*one)),
        many => Some(Value::from(many.to_vec())),
    }
}

/// Comma-separated names.
pub(crate) fn names(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Names as comma-separated text.
pub(crate) fn joined(value: Option<&Value>) -> String {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().map(text).collect::<Vec<_>>().join(", "))
        .unwrap_or_default()
}

/// A number, or why not.
pub(crate) fn number(text: &str, what: &str) -> Result<Option<Value>, String> {
    match text.trim() {
        "" => Ok(None),
        t => t
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(|v| Some(Value::from(v)))
            .ok_or_else(|| format!("{what} `{t}` is not a number")),
    }
}

impl CheckForm {
    /// The editor of a check as stored.
    pub(crate) fn of(check: &Value) -> CheckForm {
        let mut rest = check.as_object().cloned().unwrap_or_default();
        let kind = rest.get("type").map(text).unwrap_or_default();
        let mut take = |key: &str| rest.remove(key).unwrap_or(Value::Null);
        let mut form = CheckForm {
            kind: kind.clone(),
            ..CheckForm::default()
        };
        match kind.as_str() {
            "contains" | "not-contains" => form.value = lines(&take("value")),
            "regex" => {
                form.value = text(&take("pattern"));
                if take("negate") == Value::Bool(true) {
                    form.option = "negate".into();
                }
            }
            "tools-called" => {
                form.value = joined(Some(&take("tools")));
                form.option = text(&take("mode"));
            }
            "required-keys" => form.value = joined(Some(&take("keys"))),
            "numeric-fields" => {
                form.value = take("values")
                    .as_object()
                    .map(|values| {
                        values
                            .iter()
                            .map(|(k, v)| format!("{k} = {v}"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .unwrap_or_default();
            }
            "json-schema" => {
                form.value = serde_json::to_string_pretty(&take("schema")).unwrap_or_default();
            }
            "latency" => form.value = text(&take("max_ms")),
            "similar" => {
                form.value = lines(&take("value"));
                form.threshold = text(&take("threshold"));
            }
            "judge" | "rubric" => {
                form.criteria = text(&take("criteria"));
                form.threshold = text(&take("threshold"));
                if kind == "judge" {
                    form.scale = text(&take("scale"));
                }
            }
            "pairwise" => {
                form.criteria = text(&take("criteria"));
                let against = take("against");
                match against.as_object().map(|a| a.iter().collect::<Vec<_>>()) {
                    Some(pairs) if pairs.len() == 1 => {
                        form.option = pairs[0].0.clone();
                        form.value = text(pairs[0].1);
                    }
                    _ => {
                        rest.insert("against".into(), against);
                    }
                }
            }
            _ => {
                return CheckForm {
                    kind: "other".into(),
                    value: serde_saphyr::to_string(check).unwrap_or_default(),
                    ..CheckForm::default()
                };
            }
        }
        rest.remove("type");
        if !rest.is_empty() {
            form.extra = Value::Object(rest).to_string();
        }
        form
    }

    /// The check as written in suite files, or what is wrong with the fields.
    pub(crate) fn to_check(&self) -> Result<Value, String> {
        if self.kind == "other" {
            let check: Value = serde_saphyr::from_str(&self.value).map_err(|e| e.to_string())?;
            return match check {
                Value::Object(_) => Ok(check),
                _ => Err("write the check as a mapping: `type: …` and its keys".into()),
            };
        }
        if !KINDS.iter().any(|(k, _)| *k == self.kind) {
            return Err(format!("unknown check kind `{}`", self.kind));
        }
        let mut check: Map<String, Value> = match self.extra.trim() {
            "" => Map::new(),
            extra => serde_json::from_str(extra)
                .map_err(|e| format!("the check's other keys are not a JSON object: {e}"))?,
        };
        check.insert("type".into(), Value::from(self.kind.as_str()));
        let mut set = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                check.insert(key.to_owned(), value);
            }
        };
        let value = self.value.trim();
        let required = |what: &str| {
            if value.is_empty() {
                Err(format!("give {what}"))
            } else {
                Ok(())
            }
        };
        match self.kind.as_str() {
            "contains" | "not-contains" => {
                required("the text, one per line")?;
                set("value", one_or_many(value));
            }
            "regex" => {
                required("a pattern")?;
                set("pattern", Some(Value::from(value)));
                set(
                    "negate",
                    (self.option == "negate").then_some(Value::Bool(true)),
                );
            }
            "tools-called" => {
                let tools = names(value);
                set("tools", (!tools.is_empty()).then(|| Value::from(tools)));
                let mode = self.option.trim();
                set("mode", (!mode.is_empty()).then(|| Value::from(mode)));
            }
            "required-keys" => {
                required("the keys, comma-separated")?;
                set("keys", Some(Value::from(names(value))));
            }
            "numeric-fields" => {
                required("`/pointer = number` lines")?;
                let mut values = Map::new();
                for line in value.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    let (key, n) = line
                        .split_once('=')
                        .ok_or_else(|| format!("`{line}`: write `/pointer = number`"))?;
                    let n = number(n, key.trim())?
                        .ok_or_else(|| format!("`{line}`: give a number after `=`"))?;
                    values.insert(key.trim().to_owned(), n);
                }
                set("values", Some(Value::Object(values)));
            }
            "json-schema" => {
                required("a JSON Schema")?;
                let schema: Value = serde_json::from_str(value)
                    .map_err(|e| format!("the schema is not JSON: {e}"))?;
                set("schema", Some(schema));
            }
            "latency" => {
                let ms = value
                    .parse::<u64>()
                    .map_err(|_| format!("`{value}` is not a whole number of milliseconds"))?;
                set("max_ms", Some(Value::from(ms)));
            }
            "similar" => {
                set("value", one_or_many(value));
                set("threshold", number(&self.threshold, "threshold")?);
            }
            "judge" | "rubric" | "pairwise" => {
                let criteria = self.criteria.trim();
                set(
                    "criteria",
                    (!criteria.is_empty()).then(|| Value::from(criteria)),
                );
                if self.kind != "pairwise" {
                    set("threshold", number(&self.threshold, "threshold")?);
                }
                let scale = self.scale.trim();
                if self.kind == "judge" && !scale.is_empty() {
                    if !SCALES.contains(&scale) {
                        return Err(format!("scale `{scale}` is not one of {SCALES:?}"));
                    }
                    set("scale", Some(Value::from(scale)));
                }
                if self.kind == "pairwise" && !check.contains_key("against") {
                    required("the baseline: a run id or `latest`, or a target")?;
                    let side = if self.option == "target" {
                        "target"
                    } else {
                        "run"
                    };
                    let mut against = Map::new();
                    against.insert(side.into(), Value::from(value));
                    check.insert("against".into(), Value::Object(against));
                }
            }
            _ => {}
        }
        Ok(Value::Object(check))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_editor_gives_back_the_check_it_was_given() {
        for check in [
            json!({"type": "contains", "value": "Ocean"}),
            json!({"type": "not-contains", "value": ["sorry", "cannot"]}),
            json!({"type": "regex", "pattern": "\\d+ Ocean", "negate": true}),
            json!({"type": "tools-called", "tools": ["search"], "mode": "order", "strict": true}),
            json!({"type": "tools-called"}),
            json!({"type": "required-keys", "keys": ["/data/total", "id"]}),
            json!({"type": "numeric-fields", "values": {"/total": 12.5}}),
            json!({"type": "json-schema", "schema": {"type": "object", "required": ["a"]}}),
            json!({"type": "latency", "max_ms": 2000}),
            json!({"type": "similar", "value": "Twelve listings", "threshold": 0.6}),
            json!({"type": "judge", "criteria": "Polite", "scale": "1-5", "threshold": 4.0, "model": "openai:gpt-4o"}),
            json!({"type": "rubric", "criteria": "Complete", "threshold": 3.5}),
            json!({"type": "pairwise", "against": {"run": "latest"}, "criteria": "More helpful"}),
            json!({"type": "stream", "min_deltas": 3}),
        ] {
            let form = CheckForm::of(&check);
            assert_eq!(form.to_check().unwrap(), check, "{form:?}");
        }
    }

    #[test]
    fn bad_fields_say_what_is_wrong() {
        let bad = |kind: &str, value: &str| {
            CheckForm {
                kind: kind.into(),
                value: value.into(),
                ..CheckForm::default()
            }
            .to_check()
            .unwrap_err()
        };
        assert!(bad("json-schema", "{not json").contains("not JSON"));
        assert!(bad("latency", "soon").contains("milliseconds"));
        assert!(bad("contains", " ").contains("give the text"));
        assert!(bad("numeric-fields", "/total: 3").contains("/pointer = number"));
        assert!(bad("nonsense", "x").contains("unknown check kind"));
    }
}
