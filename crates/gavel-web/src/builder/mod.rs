//! The case builder: a stored case as structured fields (rounds, each with its
//! own checks and criteria, and checks for the whole case), the builder's
//! actions (add, remove and reorder rounds and checks, switch to YAML), and the
//! fields turned back into the case, with a message for each bad field.
//!
//! The form carries everything it does not show in `extra` fields, so a case
//! goes through the form and back unchanged; the YAML view is the case itself.

mod check;
mod try_check;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub(crate) use check::names;
pub(crate) use check::{CheckForm, KINDS, SCALES};
use check::{joined, number};
pub(crate) use try_check::{Tried, try_check};

/// Field key (`id`, `rounds.1.input`, `checks.0`, `yaml`, `case`) → what is wrong.
pub(crate) type FieldErrors = BTreeMap<String, String>;

/// A prompt longer than this is refused (a person typed or pasted it).
pub(crate) const MAX_PROMPT_BYTES: usize = 256 * 1024;

/// One round: the user's message and what to check about the answer to it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct RoundForm {
    pub(crate) input: String,
    pub(crate) criteria: String,
    pub(crate) expected_tools: String,
    pub(crate) threshold: String,
    pub(crate) checks: Vec<CheckForm>,
    /// The round's other keys, as JSON.
    pub(crate) extra: String,
    /// The kind of check its "add check" button adds.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) add: String,
}

/// The whole builder form.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CaseForm {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) description: String,
    /// Comma-separated.
    pub(crate) tags: String,
    /// Rounds in order; one round with nothing but a message is a plain prompt.
    pub(crate) rounds: Vec<RoundForm>,
    /// For the whole case (the last answer, or the whole conversation).
    pub(crate) criteria: String,
    pub(crate) expected_tools: String,
    pub(crate) threshold: String,
    pub(crate) checks: Vec<CheckForm>,
    /// The case's other keys, as JSON.
    pub(crate) extra: String,
    /// The kind of check the case's "add check" button adds.
    pub(crate) add: String,
    /// An answer to try checks on (never stored).
    pub(crate) sample: String,
    /// `yaml` while the YAML view is open.
    pub(crate) view: String,
    /// The case as YAML, in the YAML view.
    pub(crate) yaml: String,
    /// Who saves (recorded with the version).
    pub(crate) author: String,
    /// Which button was pressed (empty: save).
    pub(crate) action: String,
}

/// Each case key with the spellings the loader also accepts, canonical first.
const SPELLINGS: &[&[&str]] = &[
    &["input", "prompt"],
    &["criteria", "judge_prompt", "success_criteria"],
    &["threshold", "judge_threshold"],
    &["expected_tools", "mcp_calls_expected"],
];

/// Removes `key` (under any spelling) from `map`.
fn take(map: &mut Map<String, Value>, key: &str) -> Value {
    let spellings = SPELLINGS
        .iter()
        .find(|s| s[0] == key)
        .copied()
        .unwrap_or(std::slice::from_ref(&key));
    spellings
        .iter()
        .filter_map(|k| map.remove(*k))
        .next()
        .unwrap_or(Value::Null)
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn extra(rest: Map<String, Value>) -> String {
    if rest.is_empty() {
        String::new()
    } else {
        Value::Object(rest).to_string()
    }
}

fn checks_of(value: &Value) -> Vec<CheckForm> {
    value
        .as_array()
        .map(|c| c.iter().map(CheckForm::of).collect())
        .unwrap_or_default()
}

impl RoundForm {
    fn of(round: &Value) -> RoundForm {
        let mut rest = round.as_object().cloned().unwrap_or_default();
        RoundForm {
            input: text(&take(&mut rest, "input")),
            criteria: text(&take(&mut rest, "criteria")),
            expected_tools: joined(Some(&take(&mut rest, "expected_tools"))),
            threshold: text(&take(&mut rest, "threshold")),
            checks: checks_of(&take(&mut rest, "checks")),
            extra: extra(rest),
            add: String::new(),
        }
    }

    /// Whether the round is nothing but a message.
    fn is_plain(&self) -> bool {
        [
            &self.criteria,
            &self.expected_tools,
            &self.threshold,
            &self.extra,
        ]
        .iter()
        .all(|f| f.trim().is_empty())
            && self.checks.is_empty()
    }
}

impl CaseForm {
    /// The form of a stored case.
    pub(crate) fn of(case: &Value) -> CaseForm {
        let mut rest = case.as_object().cloned().unwrap_or_default();
        let input = take(&mut rest, "input");
        let rounds = match take(&mut rest, "rounds") {
            Value::Array(rounds) if !rounds.is_empty() => {
                rounds.iter().map(RoundForm::of).collect()
            }
            _ => vec![RoundForm {
                input: text(&input),
                ..RoundForm::default()
            }],
        };
        CaseForm {
            id: text(&take(&mut rest, "id")),
            name: text(&take(&mut rest, "name")),
            description: text(&take(&mut rest, "description")),
            tags: joined(Some(&take(&mut rest, "tags"))),
            rounds,
            criteria: text(&take(&mut rest, "criteria")),
            expected_tools: joined(Some(&take(&mut rest, "expected_tools"))),
            threshold: text(&take(&mut rest, "threshold")),
            checks: checks_of(&take(&mut rest, "checks")),
            extra: extra(rest),
            ..CaseForm::default()
        }
    }

    /// An empty form: one round.
    pub(crate) fn new() -> CaseForm {
        CaseForm {
            rounds: vec![RoundForm::default()],
            add: "contains".into(),
            ..CaseForm::default()
        }
    }

    /// Builds the case, or says what is wrong with each field. In the YAML
    /// view the case is the YAML as written.
    pub(crate) fn to_case(&self) -> Result<Value, FieldErrors> {
        if self.view == "yaml" {
            return yaml_case(&self.yaml);
        }
        let mut errors = FieldErrors::new();
        let mut case: Map<String, Value> = match self.extra.trim() {
            "" => Map::new(),
            extra => serde_json::from_str(extra).unwrap_or_else(|e| {
                errors.insert("case".into(), format!("the case's other keys: {e}"));
                Map::new()
            }),
        };
        let id = self.id.trim();
        if let Err(why) = crate::api::check_case_id(id) {
            errors.insert("id".into(), why.into());
        }
        case.insert("id".into(), Value::from(id));
        for (key, value) in [("name", &self.name), ("description", &self.description)] {
            if !value.trim().is_empty() {
                case.insert(key.into(), Value::from(value.trim()));
            }
        }
        let tags = names(&self.tags);
        if let Some(bad) = tags.iter().find(|t| t.contains(char::is_whitespace)) {
            errors.insert(
                "tags".into(),
                format!("tag `{bad}` holds a space; separate tags with commas"),
            );
        }
        if !tags.is_empty() {
            case.insert("tags".into(), Value::from(tags));
        }
        match self.rounds.as_slice() {
            [] => {
                errors.insert("rounds.0.input".into(), "give the user's message".into());
            }
            [one] if one.is_plain() => {
                let input = one.input.trim();
                if let Some(e) = prompt_error(input) {
                    errors.insert("rounds.0.input".into(), e);
                }
                case.insert("input".into(), Value::from(input));
            }
            rounds => {
                let built: Vec<Value> = rounds
                    .iter()
                    .enumerate()
                    .map(|(i, r)| round(r, &format!("rounds.{i}."), &mut errors))
                    .collect();
                case.insert("rounds".into(), Value::from(built));
            }
        }
        common(
            &mut case,
            "",
            [&self.criteria, &self.expected_tools, &self.threshold],
            &self.checks,
            &mut errors,
        );
        if errors.is_empty() {
            Ok(Value::Object(case))
        } else {
            Err(errors)
        }
    }

    /// The check at `at`: `R:J` (round R's check J) or `:J` (the case's).
    pub(crate) fn check_at(&self, at: &str) -> Option<&CheckForm> {
        let (round, j) = at.split_once(':')?;
        let j: usize = j.parse().ok()?;
        match round {
            "" => self.checks.get(j),
            r => self.rounds.get(r.parse::<usize>().ok()?)?.checks.get(j),
        }
    }

    /// Applies a builder action (anything but save); `false` for save.
    pub(crate) fn apply(&mut self, errors: &mut FieldErrors) -> bool {
        let action = std::mem::take(&mut self.action);
        let mut parts = action.split(':');
        let (verb, a, b) = (
            parts.next().unwrap_or_default(),
            parts.next().and_then(|p| p.parse::<usize>().ok()),
            parts.next().and_then(|p| p.parse::<usize>().ok()),
        );
        let rounds = self.rounds.len();
        match (verb, a, b) {
            ("" | "save", _, _) => return false,
            ("add-round", _, _) => self.rounds.push(RoundForm::default()),
            ("remove-round", Some(i), _) if i < rounds => {
                self.rounds.remove(i);
                if self.rounds.is_empty() {
                    self.rounds.push(RoundForm::default());
                }
            }
            ("round-up", Some(i), _) if i > 0 && i < rounds => self.rounds.swap(i - 1, i),
            ("round-down", Some(i), _) if i + 1 < rounds => self.rounds.swap(i, i + 1),
            ("add-check", None, _) => self.checks.push(new_check(&self.add)),
            ("add-check", Some(i), _) if i < rounds => {
                let kind = self.rounds[i].add.clone();
                self.rounds[i].checks.push(new_check(&kind));
            }
            ("remove-check", None, Some(j)) if j < self.checks.len() => {
                self.checks.remove(j);
            }
            ("remove-check", Some(i), Some(j)) if i < rounds && j < self.rounds[i].checks.len() => {
                self.rounds[i].checks.remove(j);
            }
            ("yaml", _, _) => match self.to_case() {
                Ok(case) => {
                    self.yaml = serde_saphyr::to_string(&case).unwrap_or_default();
                    self.view = "yaml".into();
                }
                Err(e) => errors.extend(e),
            },
            ("form", _, _) => match yaml_case(&self.yaml) {
                Ok(case) => {
                    let sample = std::mem::take(&mut self.sample);
                    let author = std::mem::take(&mut self.author);
                    *self = CaseForm {
                        sample,
                        author,
                        add: "contains".into(),
                        ..CaseForm::of(&case)
                    };
                }
                Err(e) => errors.extend(e),
            },
            _ => {
                errors.insert("case".into(), format!("unknown action `{action}`"));
            }
        }
        true
    }
}

fn new_check(kind: &str) -> CheckForm {
    CheckForm {
        kind: if KINDS.iter().any(|(k, _)| *k == kind) {
            kind.to_owned()
        } else {
            "contains".to_owned()
        },
        ..CheckForm::default()
    }
}

fn prompt_error(input: &str) -> Option<String> {
    if input.is_empty() {
        Some("give the user's message".into())
    } else if input.len() > MAX_PROMPT_BYTES {
        Some(format!(
            "this message is {} bytes; a message holds at most {} KiB",
            input.len(),
            MAX_PROMPT_BYTES / 1024
        ))
    } else {
        None
    }
}

fn round(form: &RoundForm, at: &str, errors: &mut FieldErrors) -> Value {
    let mut round: Map<String, Value> = match form.extra.trim() {
        "" => Map::new(),
        extra => serde_json::from_str(extra).unwrap_or_else(|e| {
            errors.insert(format!("{at}input"), format!("the round's other keys: {e}"));
            Map::new()
        }),
    };
    let input = form.input.trim();
    if let Some(e) = prompt_error(input) {
        errors.insert(format!("{at}input"), e);
    }
    round.insert("input".into(), Value::from(input));
    common(
        &mut round,
        at,
        [&form.criteria, &form.expected_tools, &form.threshold],
        &form.checks,
        errors,
    );
    Value::Object(round)
}

/// Criteria, expected tools, threshold and checks: the same on a case and a round.
fn common(
    map: &mut Map<String, Value>,
    at: &str,
    [criteria, tools, threshold]: [&String; 3],
    checks: &[CheckForm],
    errors: &mut FieldErrors,
) {
    if !criteria.trim().is_empty() {
        map.insert("criteria".into(), Value::from(criteria.trim()));
    }
    let tools = names(tools);
    if !tools.is_empty() {
        map.insert("expected_tools".into(), Value::from(tools));
    }
    match number(threshold, "threshold") {
        Ok(Some(t)) if t.as_f64().is_some_and(|t| (0.0..=1.0).contains(&t)) => {
            map.insert("threshold".into(), t);
        }
        Ok(None) => {}
        _ => {
            errors.insert(
                format!("{at}threshold"),
                format!("`{}` is not a number from 0 to 1", threshold.trim()),
            );
        }
    }
    let mut built = Vec::new();
    for (j, check) in checks.iter().enumerate() {
        match check.to_check() {
            Ok(c) => built.push(c),
            Err(e) => {
                errors.insert(format!("{at}checks.{j}"), e);
            }
        }
    }
    if !built.is_empty() {
        map.insert("checks".into(), Value::from(built));
    }
}

/// The case written as YAML: one mapping.
fn yaml_case(yaml: &str) -> Result<Value, FieldErrors> {
    let fail = |m: String| Err(FieldErrors::from([("yaml".to_owned(), m)]));
    match serde_saphyr::from_str::<Value>(yaml) {
        Ok(case @ Value::Object(_)) => Ok(case),
        Ok(_) => fail("write the case as a mapping: `id: …`, `input: …`".into()),
        Err(e) => fail(e.to_string()),
    }
}

/// Where a compile error's case field (`rounds[1].checks[0].pattern`) shows in
/// the form: by that check, that round field, or the case field; `yaml` in the
/// YAML view.
pub(crate) fn error_key(form: &CaseForm, field: &str) -> String {
    if form.view == "yaml" {
        return "yaml".into();
    }
    let parts: Vec<&str> = field
        .split(['[', ']', '.'])
        .filter(|s| !s.is_empty())
        .collect();
    let shown = ["input", "criteria", "expected_tools", "threshold"];
    match parts.as_slice() {
        ["rounds", i, "checks", j, ..] => format!("rounds.{i}.checks.{j}"),
        ["rounds", i, f, ..] if shown.contains(f) => format!("rounds.{i}.{f}"),
        ["rounds", i, ..] => format!("rounds.{i}.input"),
        ["checks", j, ..] => format!("checks.{j}"),
        ["input" | "prompt", ..] => "rounds.0.input".into(),
        [
            f @ ("id" | "name" | "tags" | "criteria" | "expected_tools" | "threshold"),
            ..,
        ] => (*f).to_owned(),
        _ => "case".into(),
    }
}

#[cfg(test)]
mod tests;
