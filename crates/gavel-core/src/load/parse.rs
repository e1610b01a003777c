//! Reading one file into its raw parts, in any of the accepted shapes.

use std::collections::BTreeMap;

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};
use serde_json::Value;
use serde_saphyr::Spanned;

use super::explain::{self, Reader, Whole};
use super::finite::Outline;
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

/// A gavel suite file: targets, defaults, cases and data-driven datasets. Its
/// cases are read in a second pass, one at a time ([`cases`]): here they are
/// only counted.
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
    #[serde(default, alias = "test_cases", rename = "cases")]
    #[schemars(with = "Vec<Case>")]
    _cases: Vec<IgnoredAny>,
    /// Seed 002's dataset cases: their `criteria` (`success_criteria`) are graded
    /// by the six-dimension rubric unless `defaults.criteria_judge` says `judge`.
    #[serde(default)]
    #[schemars(with = "Vec<Case>")]
    examples: Vec<IgnoredAny>,
    /// Data-driven cases: one per CSV/JSONL row, rendered from a template.
    #[serde(default)]
    datasets: Vec<DatasetSpec>,
    /// Export runs of this suite to OpenTelemetry (`true`, or settings).
    #[serde(default)]
    otel: Option<crate::otel::OtelSetting>,
    /// The suite's gate: the minimum pass rate its runs must reach.
    #[serde(default)]
    gate: crate::gate::GateSettings,
}

/// The keys of a suite file that hold cases, read by [`cases`].
pub(crate) const CASE_KEYS: &[&str] = &["cases", "test_cases", "examples"];

/// How a file holds its cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A suite: a mapping with `cases`, `targets`, ...
    Suite,
    /// A list of cases.
    List,
    /// One case (seed 000's dict).
    Case,
    /// JSONL: one case per non-empty line.
    Lines,
}

/// A file's parts other than its cases.
#[derive(Debug, Default)]
pub(crate) struct Header {
    pub(crate) name: Option<String>,
    pub(crate) targets: BTreeMap<String, TargetSpec>,
    pub(crate) defaults: SuiteDefaults,
    pub(crate) judge: JudgeSettings,
    pub(crate) datasets: Vec<DatasetSpec>,
    pub(crate) otel: Option<crate::otel::OtelSetting>,
    pub(crate) gate: crate::gate::GateSettings,
}

impl From<SuiteFile> for Header {
    fn from(f: SuiteFile) -> Self {
        let mut defaults = f.defaults;
        if !f.examples.is_empty() {
            defaults.criteria_judge.get_or_insert(CriteriaJudge::Rubric);
        }
        Header {
            name: f.name,
            targets: f.targets,
            defaults,
            judge: f.judge,
            datasets: f.datasets,
            otel: f.otel,
            gate: f.gate,
        }
    }
}

/// The keys that mark a top-level mapping as a suite rather than a single case.
pub(crate) const SUITE_KEYS: &[&str] = &[
    "judge",
    "cases",
    "examples",
    "test_cases",
    "targets",
    "defaults",
    "datasets",
    "otel",
    "gate",
];

/// The first pass over a YAML or JSON text: its shape and header, with every
/// number checked finite. A top-level list is a list of cases; a mapping
/// without suite keys is one case (seed 000's dict). The cases themselves are
/// read by [`cases`].
pub(crate) fn header(text: &str, file: &str, json: bool) -> Result<(Shape, Header), LoadError> {
    if json {
        // serde_json gives the precise position of JSON syntax errors.
        serde_json::from_str::<IgnoredAny>(text).map_err(|e| json_error(&e, file))?;
    }
    let options = serde_saphyr::options! {
        strict_booleans: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::PassThrough,
    };
    let outline: Outline = serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| explain::yaml_error(&e, text, file, Whole::<Outline>::new()))?;
    match outline {
        Outline::List => Ok((Shape::List, Header::default())),
        Outline::Map { suite: false, .. } => Ok((Shape::Case, Header::default())),
        Outline::Map {
            suite: true,
            header,
            examples,
        } => {
            // The header read as JSON values is typed without a second pass
            // over the text; only when that fails is the text read as a suite,
            // for the error at its line and column (or for a value only YAML
            // types, such as a number given for a string).
            let suite = match serde_json::from_value::<SuiteFile>(Value::Object(header)) {
                Ok(suite) => suite,
                Err(_) => yaml::<SuiteFile>(text, file)?,
            };
            let mut header = Header::from(suite);
            if examples > 0 {
                header
                    .defaults
                    .criteria_judge
                    .get_or_insert(CriteriaJudge::Rubric);
            }
            Ok((Shape::Suite, header))
        }
        Outline::Empty => Err(LoadError::new(Location::file(file), "the file is empty")),
        Outline::Scalar => Err(LoadError::new(
            Location::at(file, 1, 1),
            "expected a suite (a mapping with `cases`), a list of cases, or one case",
        )),
    }
}

/// The second pass: hands each case of a text of `shape` to `each` with the
/// line it starts on, in document order, holding one case at a time.
pub(crate) fn cases(
    text: &str,
    file: &str,
    shape: Shape,
    each: &mut dyn FnMut(Case, Option<u64>),
) -> Result<(), LoadError> {
    if shape == Shape::Lines {
        return jsonl(text, file, each);
    }
    serde_saphyr::with_deserializer_from_str_with_options(text, explain::options(), |de| {
        read_cases(de, shape, each)
    })
    .map_err(|e| explain::yaml_error(&e, text, file, Cases(shape)))
}

/// Reads the cases of a text of `shape` from `de`, handing each to `each`.
fn read_cases<'de, D: Deserializer<'de>>(
    de: D,
    shape: Shape,
    each: &mut dyn FnMut(Case, Option<u64>),
) -> Result<(), D::Error> {
    match shape {
        Shape::Suite => de.deserialize_map(SuiteCases(each)),
        Shape::List => de.deserialize_seq(CaseList(each)),
        Shape::Case | Shape::Lines => Spanned::<Case>::deserialize(de).map(|c| line_of(c, each)),
    }
}

/// The cases of a text of one shape, read again only to find where one fails.
struct Cases(Shape);

impl Reader for Cases {
    fn read<'de, D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        read_cases(de, self.0, &mut |_, _| {})
    }
}

fn line_of(c: Spanned<Case>, each: &mut dyn FnMut(Case, Option<u64>)) {
    let line = c.referenced.line();
    each(c.value, (line > 0).then_some(line));
}

/// A suite mapping, read for the cases under [`CASE_KEYS`] only (the rest was
/// read by [`header`]).
struct SuiteCases<'a>(&'a mut dyn FnMut(Case, Option<u64>));

impl<'de> Visitor<'de> for SuiteCases<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a suite")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if CASE_KEYS.contains(&key.as_str()) {
                map.next_value_seed(CaseList(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// A list of cases, each handed on as soon as it is read.
struct CaseList<'a>(&'a mut dyn FnMut(Case, Option<u64>));

impl<'de> DeserializeSeed<'de> for CaseList<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CaseList<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of cases")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(case) = seq.next_element::<Spanned<Case>>()? {
            line_of(case, self.0);
        }
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// Deserializes YAML (or JSON, a subset of it) with location-rich errors. Only
/// YAML 1.2 booleans count (`y`, `no`, `on` stay strings); duplicate keys are errors.
pub(crate) fn yaml<T: DeserializeOwned>(text: &str, file: &str) -> Result<T, LoadError> {
    serde_saphyr::from_str_with_options(text, explain::options())
        .map_err(|e| explain::yaml_error(&e, text, file, Whole::<T>::new()))
}

/// Converts a serde_json error into a load error at its line and column.
pub(crate) fn json_error(e: &serde_json::Error, file: &str) -> LoadError {
    let message = e.to_string();
    let message = message.split(" at line ").next().unwrap_or(&message);
    LoadError::new(
        Location::at(file, e.line() as u64, e.column() as u64),
        explain::plain(message),
    )
}

/// A JSONL file's cases: one per non-empty line.
fn jsonl(text: &str, file: &str, each: &mut dyn FnMut(Case, Option<u64>)) -> Result<(), LoadError> {
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut de = serde_json::Deserializer::from_str(line);
        let case: Case = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let mut err = json_error(e.inner(), file);
            err.location.line = Some(i as u64 + 1);
            match path.as_str() {
                "" | "." | "?" => err,
                _ => err.field(path),
            }
        })?;
        de.end().map_err(|e| {
            let mut err = json_error(&e, file);
            err.location.line = Some(i as u64 + 1);
            err
        })?;
        each(case, Some(i as u64 + 1));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both passes: the file's cases.
    fn parse_text(text: &str, file: &str, json: bool) -> Result<Vec<Case>, LoadError> {
        let (shape, _) = header(text, file, json)?;
        let mut found = Vec::new();
        cases(text, file, shape, &mut |case, _| found.push(case))?;
        Ok(found)
    }

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
    fn examples_are_graded_by_the_rubric_unless_the_defaults_say_otherwise() {
        let (_, h) = header("examples:\n  - input: hi\n", "f", false).unwrap();
        assert_eq!(h.defaults.criteria_judge, Some(CriteriaJudge::Rubric));
        let (_, h) = header("cases:\n  - input: hi\n", "f", false).unwrap();
        assert_eq!(h.defaults.criteria_judge, None);
        let yaml = "defaults: {criteria_judge: judge}\nexamples:\n  - input: hi\n";
        let (_, h) = header(yaml, "f", false).unwrap();
        assert_eq!(h.defaults.criteria_judge, Some(CriteriaJudge::Judge));
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
                .len(),
            2
        );
        assert_eq!(
            parse_text("name: x\nprompt: hi\n", "f", false)
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            parse_text("examples:\n  - input: hi\n", "f", false)
                .unwrap()
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
