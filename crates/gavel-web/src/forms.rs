//! The case form: a stored case shown as fields, and fields checked one by one and
//! turned back into the case, keeping everything the form does not edit (checks,
//! context, targets, …).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The fields a person edits, as text.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CaseForm {
    #[serde(default)]
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) description: String,
    /// A single prompt…
    #[serde(default)]
    pub(crate) input: String,
    /// …or rounds, as a YAML list.
    #[serde(default)]
    pub(crate) rounds: String,
    /// Comma-separated tool names.
    #[serde(default)]
    pub(crate) expected_tools: String,
    #[serde(default)]
    pub(crate) criteria: String,
    #[serde(default)]
    pub(crate) threshold: String,
    /// Comma-separated tags.
    #[serde(default)]
    pub(crate) tags: String,
}

/// The fields of the form, by name.
pub(crate) const FIELDS: &[&str] = &[
    "id",
    "name",
    "description",
    "input",
    "rounds",
    "expected_tools",
    "criteria",
    "threshold",
    "tags",
];

/// Field name → what is wrong with it.
pub(crate) type FieldErrors = BTreeMap<&'static str, String>;

/// Each canonical key with the spellings the loader also accepts.
const SPELLINGS: &[(&str, &[&str])] = &[
    ("input", &["input", "prompt"]),
    (
        "criteria",
        &["criteria", "judge_prompt", "success_criteria"],
    ),
    ("threshold", &["threshold", "judge_threshold"]),
    ("expected_tools", &["expected_tools", "mcp_calls_expected"]),
];

fn spellings(key: &'static str) -> &'static [&'static str] {
    SPELLINGS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(&[], |(_, s)| *s)
}

fn field<'a>(case: &'a Map<String, Value>, key: &'static str) -> Option<&'a Value> {
    match spellings(key) {
        [] => case.get(key),
        names => names.iter().find_map(|n| case.get(*n)),
    }
}

fn text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn list(value: Option<&Value>) -> String {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|v| text(Some(v)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

impl CaseForm {
    /// The form of a stored case.
    pub(crate) fn of(case: &Value) -> CaseForm {
        let empty = Map::new();
        let case = case.as_object().unwrap_or(&empty);
        CaseForm {
            id: text(field(case, "id")),
            name: text(field(case, "name")),
            description: text(field(case, "description")),
            input: text(field(case, "input")),
            rounds: field(case, "rounds")
                .filter(|r| r.as_array().is_some_and(|a| !a.is_empty()))
                .and_then(|r| serde_saphyr::to_string(r).ok())
                .unwrap_or_default(),
            expected_tools: list(field(case, "expected_tools")),
            criteria: text(field(case, "criteria")),
            threshold: text(field(case, "threshold")),
            tags: list(field(case, "tags")),
        }
    }

    /// Checks every field and builds the case over `base` (the stored case when
    /// editing), or says what is wrong with each field.
    pub(crate) fn into_case(self, base: Option<&Value>) -> Result<Value, FieldErrors> {
        let mut errors = FieldErrors::new();
        let mut case = base.and_then(Value::as_object).cloned().unwrap_or_default();
        for (_, names) in SPELLINGS {
            for name in *names {
                case.remove(*name);
            }
        }
        for key in ["id", "name", "description", "rounds", "tags"] {
            case.remove(key);
        }

        let id = self.id.trim();
        if id.is_empty() {
            errors.insert("id", "an id is required".into());
        } else if !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            errors.insert("id", "use letters, digits, `-`, `_` and `.` only".into());
        }
        let mut set = |key: &str, value: Value| {
            case.insert(key.to_owned(), value);
        };
        set("id", Value::from(id));
        for (key, value) in [("name", &self.name), ("description", &self.description)] {
            if !value.trim().is_empty() {
                set(key, Value::from(value.trim()));
            }
        }
        let tags = split(&self.tags);
        if let Some(bad) = tags.iter().find(|t| t.contains(char::is_whitespace)) {
            errors.insert(
                "tags",
                format!("tag `{bad}` holds a space; separate tags with commas"),
            );
        }
        if !tags.is_empty() {
            set("tags", Value::from(tags));
        }
        match (self.input.trim().is_empty(), self.rounds.trim().is_empty()) {
            (true, true) => {
                errors.insert("input", "give a prompt, or rounds".into());
            }
            (false, false) => {
                errors.insert("rounds", "give a prompt or rounds, not both".into());
            }
            (false, true) => set("input", Value::from(self.input.trim())),
            (true, false) => match rounds(&self.rounds) {
                Ok(rounds) => set("rounds", rounds),
                Err(message) => {
                    errors.insert("rounds", message);
                }
            },
        }
        let tools = split(&self.expected_tools);
        if !tools.is_empty() {
            set("expected_tools", Value::from(tools));
        }
        if !self.criteria.trim().is_empty() {
            set("criteria", Value::from(self.criteria.trim()));
        }
        match self.threshold.trim() {
            "" => {}
            t => match t.parse::<f64>() {
                Ok(v) if (0.0..=1.0).contains(&v) => set("threshold", Value::from(v)),
                _ => {
                    errors.insert("threshold", format!("`{t}` is not a number from 0 to 1"));
                }
            },
        }
        let case = Value::Object(case);
        if errors.is_empty()
            && let Err(e) = serde_json::from_value::<gavel_core::Case>(case.clone())
        {
            errors.insert("case", e.to_string());
        }
        if errors.is_empty() {
            Ok(case)
        } else {
            Err(errors)
        }
    }
}

/// Comma-separated items, trimmed, empty ones dropped.
fn split(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Rounds written as a YAML list, each checked as a round.
fn rounds(text: &str) -> Result<Value, String> {
    let value: Value = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    let items = value
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or("rounds are a YAML list: `- input: …` per round")?;
    for (i, item) in items.iter().enumerate() {
        serde_json::from_value::<gavel_core::Round>(item.clone())
            .map_err(|e| format!("round {}: {e}", i + 1))?;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_bad_field_is_named() {
        let form = CaseForm {
            id: "bad id".into(),
            threshold: "1.5".into(),
            tags: "smoke, two words".into(),
            ..CaseForm::default()
        };
        let errors = form.into_case(None).unwrap_err();
        let fields: Vec<_> = errors.keys().copied().collect();
        assert_eq!(fields, ["id", "input", "tags", "threshold"]);
    }

    #[test]
    fn editing_keeps_what_the_form_does_not_show_and_writes_canonical_keys() {
        let stored = json!({
            "name": "Seed case",
            "prompt": "What are my listings?",
            "judge_threshold": 0.7,
            "checks": [{"type": "contains", "value": "Beach"}],
        });
        let mut form = CaseForm::of(&stored);
        assert_eq!(form.input, "What are my listings?");
        assert_eq!(form.threshold, "0.7");
        form.id = "listings".into();
        form.tags = "smoke, listings".into();
        let case = form.into_case(Some(&stored)).unwrap();
        assert_eq!(
            case,
            json!({
                "checks": [{"type": "contains", "value": "Beach"}],
                "id": "listings",
                "name": "Seed case",
                "tags": ["smoke", "listings"],
                "input": "What are my listings?",
                "threshold": 0.7,
            })
        );
    }

    #[test]
    fn rounds_are_checked_round_by_round() {
        let form = CaseForm {
            id: "multi".into(),
            rounds: "- input: hi\n- input: there\n  colour: red\n".into(),
            ..CaseForm::default()
        };
        let errors = form.into_case(None).unwrap_err();
        assert!(errors["rounds"].starts_with("round 2:"), "{errors:?}");
    }
}
