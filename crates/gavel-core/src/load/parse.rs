//! Reading one file into its raw parts, in any of the accepted shapes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_saphyr::Spanned;

use crate::error::did_you_mean;
use crate::{Case, CriteriaJudge, JudgeSettings, LoadError, Location, SuiteDefaults, TargetSpec};

/// A data-driven block: one case per dataset row.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DatasetSpec {
    /// CSV or JSONL file, relative to the suite file.
    pub(crate) file: String,
    /// The case template; `{{ column }}` is replaced in string fields.
    #[schemars(with = "Case")]
    pub(crate) case: Value,
}

/// A gavel suite file: targets, defaults, cases and data-driven datasets.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "gavel suite")]
pub(crate) struct SuiteFile {
    /// The suite's name.
    #[serde(default)]
    name: Option<String>,
    /// What the suite covers.
    #[serde(default, rename = "description")]
    _description: Option<String>,
    /// Targets (agents under test) by name.
    #[serde(default)]
    targets: BTreeMap<String, TargetSpec>,
    /// Defaults for every case of this file.
    #[serde(default)]
    defaults: SuiteDefaults,
    /// Judge and model settings.
    #[serde(default)]
    judge: JudgeSettings,
    /// The cases (`test_cases` also accepted).
    #[serde(default, alias = "test_cases")]
    #[schemars(with = "Vec<Case>")]
    cases: Vec<Spanned<Case>>,
    /// Seed 002's dataset cases: their `criteria` (`success_criteria`) are graded
    /// by the six-dimension rubric unless `defaults.criteria_judge` says `judge`.
    #[serde(default)]
    #[schemars(with = "Vec<Case>")]
    examples: Vec<Spanned<Case>>,
    /// Data-driven cases: one per CSV/JSONL row, rendered from a template.
    #[serde(default)]
    datasets: Vec<DatasetSpec>,
    /// Export runs of this suite to OpenTelemetry (`true`, or settings).
    #[serde(default)]
    otel: Option<crate::otel::OtelSetting>,
}

/// One parsed file: its parts, each case with the line it starts on.
#[derive(Debug, Default)]
pub(crate) struct ParsedFile {
    pub(crate) name: Option<String>,
    pub(crate) targets: BTreeMap<String, TargetSpec>,
    pub(crate) defaults: SuiteDefaults,
    pub(crate) judge: JudgeSettings,
    pub(crate) cases: Vec<(Case, Option<u64>)>,
    pub(crate) datasets: Vec<DatasetSpec>,
    pub(crate) otel: Option<crate::otel::OtelSetting>,
}

impl From<SuiteFile> for ParsedFile {
    fn from(f: SuiteFile) -> Self {
        let mut defaults = f.defaults;
        if !f.examples.is_empty() {
            defaults.criteria_judge.get_or_insert(CriteriaJudge::Rubric);
        }
        ParsedFile {
            name: f.name,
            targets: f.targets,
            defaults,
            judge: f.judge,
            cases: f.cases.into_iter().chain(f.examples).map(line_of).collect(),
            datasets: f.datasets,
            otel: f.otel,
        }
    }
}

fn line_of(c: Spanned<Case>) -> (Case, Option<u64>) {
    let line = c.referenced.line();
    (c.value, (line > 0).then_some(line))
}

fn with_cases(cases: Vec<Spanned<Case>>) -> ParsedFile {
    ParsedFile {
        cases: cases.into_iter().map(line_of).collect(),
        ..ParsedFile::default()
    }
}

/// The keys that mark a top-level mapping as a suite rather than a single case.
const SUITE_KEYS: &[&str] = &[
    "judge",
    "cases",
    "examples",
    "test_cases",
    "targets",
    "defaults",
    "datasets",
    "otel",
];

/// Parses YAML or JSON text into a suite file. A top-level list is a list of cases;
/// a mapping without suite keys is one case (seed 000's dict).
pub(crate) fn parse_text(text: &str, file: &str, json: bool) -> Result<ParsedFile, LoadError> {
    if json {
        // serde_json gives the precise position of JSON syntax errors.
        serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| json_error(&e, file))?;
    }
    no_non_finite(text, file)?;
    // A block key such as `cases:` at the start of a line marks a suite, the
    // usual shape: one parse then, not two. Anything else (or a guess that does
    // not parse as a suite) is settled by reading the shape first.
    if has_suite_key_line(text)
        && let Ok(suite) = yaml::<SuiteFile>(text, file)
    {
        return Ok(suite.into());
    }
    let shape: Value = yaml(text, file)?;
    match &shape {
        Value::Array(_) => Ok(with_cases(yaml(text, file)?)),
        Value::Object(map) if !SUITE_KEYS.iter().any(|k| map.contains_key(*k)) => {
            Ok(with_cases(vec![yaml(text, file)?]))
        }
        Value::Object(_) => Ok(yaml::<SuiteFile>(text, file)?.into()),
        Value::Null => Err(LoadError::new(Location::file(file), "the file is empty")),
        _ => Err(LoadError::new(
            Location::at(file, 1, 1),
            "expected a suite (a mapping with `cases`), a list of cases, or one case",
        )),
    }
}

/// Refuses NaN and infinities anywhere in the text, at their line and column.
fn no_non_finite(text: &str, file: &str) -> Result<(), LoadError> {
    let options = serde_saphyr::options! {
        strict_booleans: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::PassThrough,
    };
    serde_saphyr::from_str_with_options::<super::finite::Finite>(text, options)
        .map(|_| ())
        .map_err(|e| saphyr_error(&e, file))
}

/// True when a line starts with one of the [`SUITE_KEYS`] followed by `:`.
fn has_suite_key_line(text: &str) -> bool {
    text.lines().any(|line| {
        SUITE_KEYS.iter().any(|key| {
            line.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
    })
}

/// Deserializes YAML (or JSON, a subset of it) with location-rich errors. Only
/// YAML 1.2 booleans count (`y`, `no`, `on` stay strings); duplicate keys are errors.
pub(crate) fn yaml<T: DeserializeOwned>(text: &str, file: &str) -> Result<T, LoadError> {
    let options = serde_saphyr::options! { strict_booleans: true };
    serde_saphyr::from_str_with_options(text, options).map_err(|e| saphyr_error(&e, file))
}

/// A YAML reader's error at its line and column, with a "did you mean".
fn saphyr_error(e: &serde_saphyr::Error, file: &str) -> LoadError {
    let location = match e.location() {
        Some(l) => Location::at(file, l.line(), l.column()),
        None => Location::file(file),
    };
    LoadError::new(location, did_you_mean(&first_line(&e.to_string())))
}

/// Strips serde-saphyr's `error: line L column C:` prefix and its snippet.
fn first_line(rendered: &str) -> String {
    let line = rendered.lines().next().unwrap_or_default();
    let line = line.strip_prefix("error: ").unwrap_or(line);
    match line.split_once(": ") {
        Some((head, rest)) if head.starts_with("line ") => rest.to_owned(),
        _ => line.to_owned(),
    }
}

/// Converts a serde_json error into a load error at its line and column.
pub(crate) fn json_error(e: &serde_json::Error, file: &str) -> LoadError {
    let message = e.to_string();
    let message = message.split(" at line ").next().unwrap_or(&message);
    LoadError::new(
        Location::at(file, e.line() as u64, e.column() as u64),
        did_you_mean(message),
    )
}

/// Parses a JSONL file: one case per non-empty line.
pub(crate) fn parse_jsonl(text: &str, file: &str) -> Result<ParsedFile, LoadError> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: Case = serde_json::from_str(line).map_err(|e| {
            let mut err = json_error(&e, file);
            err.location.line = Some(i as u64 + 1);
            err
        })?;
        cases.push((case, Some(i as u64 + 1)));
    }
    Ok(ParsedFile {
        cases,
        ..ParsedFile::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_case_field_names_line_column_and_suggestion() {
        let err = parse_text(
            "cases:\n  - id: a\n    input: hi\n    tresh: 1\n",
            "s.yaml",
            false,
        )
        .unwrap_err();
        assert_eq!(err.location, Location::at("s.yaml", 4, 5));
        assert!(
            err.message.contains("unknown field `tresh`"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("did you mean `threshold`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn json_syntax_error_names_line_and_column() {
        let err = parse_text(
            "{\n  \"cases\": [\n    {\"id\": \"a\",}\n  ]\n}",
            "s.json",
            true,
        )
        .unwrap_err();
        assert_eq!(err.location.line, Some(3));
        assert!(err.location.column.is_some());
    }

    #[test]
    fn shapes_list_single_and_suite() {
        assert_eq!(
            parse_text("- prompt: hi\n- prompt: ho\n", "f", false)
                .unwrap()
                .cases
                .len(),
            2
        );
        assert_eq!(
            parse_text("name: x\nprompt: hi\n", "f", false)
                .unwrap()
                .cases
                .len(),
            1
        );
        assert_eq!(
            parse_text("examples:\n  - input: hi\n", "f", false)
                .unwrap()
                .cases
                .len(),
            1
        );
        // A flow list whose second line starts `cases:` is still a list.
        let list = parse_text("[{input: a,\ncases: 1}]\n", "f", false).unwrap_err();
        assert!(list.to_string().contains("unknown field `cases`"), "{list}");
        let empty = parse_text("# nothing\n", "f", false).unwrap_err();
        assert_eq!(empty.to_string(), "f: the file is empty");
        let scalar = parse_text("cases\n", "f", false).unwrap_err();
        assert!(
            scalar.to_string().starts_with("f:1:1: expected a suite"),
            "{scalar}"
        );
    }
}
