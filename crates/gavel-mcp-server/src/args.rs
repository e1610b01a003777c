//! The tools' arguments: their JSON Schemas (derived with schemars) are what
//! `tools/list` shows, and arguments are read against the same types, so a bad
//! one is an `invalid params` error naming its field.

use gavel_core::Status;
use gavel_store::EvaluatorType;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::ToolError;

/// Results per page unless `limit` says otherwise.
pub const DEFAULT_LIMIT: u32 = 100;
/// The largest `limit` accepted.
pub const MAX_LIMIT: u32 = 1000;

/// Arguments of `query_evaluations`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryArgs {
    /// Only runs of this suite.
    pub suite: Option<String>,
    /// Only this run (an id, or a unique prefix of 6+ characters).
    pub run: Option<String>,
    /// Only this target (the agent under test), by name.
    pub target: Option<String>,
    /// Only this case id.
    pub case: Option<String>,
    /// Only cases carrying this tag.
    pub tag: Option<String>,
    /// Only this check (evaluation) name, e.g. `judge` or `contains "hello"`; a
    /// human label's label set.
    pub check: Option<String>,
    /// Only this check kind, e.g. `rubric`, `contains`, `similar`; `label` for human labels.
    pub kind: Option<String>,
    /// Only this evaluator type.
    pub evaluator_type: Option<EvaluatorType>,
    /// Only this status.
    pub status: Option<Status>,
    /// Only verdicts of this model (as recorded by judges and similarity checks).
    pub model: Option<String>,
    /// At or after this time (RFC 3339, e.g. `2026-11-01T00:00:00Z`).
    pub since: Option<String>,
    /// Before this time (RFC 3339).
    pub until: Option<String>,
    /// Aggregate the matching evaluations instead of listing them. Percentiles
    /// interpolate linearly between ranks; `pass_rate` is pass / (pass + fail).
    pub aggregation: Option<Aggregation>,
    /// With `aggregation`: one group per distinct value of these fields.
    #[serde(default)]
    pub group_by: Vec<Field>,
    /// Results per page (default 100, at most 1000).
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// How to aggregate scores (or statuses, for `count` and `pass_rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// Mean score.
    Avg,
    /// Lowest score.
    Min,
    /// Highest score.
    Max,
    /// Median score.
    P50,
    /// 95th percentile score.
    P95,
    /// 99th percentile score.
    P99,
    /// Number of evaluations.
    Count,
    /// pass / (pass + fail); errors and skips are not decided.
    PassRate,
}

/// A field evaluations are grouped by.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// The run's suite.
    Suite,
    /// The run id.
    Run,
    /// The target (agent) name.
    Target,
    /// The case id.
    Case,
    /// Each tag of the case (an evaluation counts once per tag).
    Tag,
    /// The check (evaluation) name.
    Check,
    /// The check kind.
    Kind,
    /// llm, human, rule or classifier.
    EvaluatorType,
    /// The status.
    Status,
    /// The judging model.
    Model,
}

impl Field {
    /// The field's name in arguments and results.
    pub fn name(self) -> &'static str {
        match self {
            Field::Suite => "suite",
            Field::Run => "run",
            Field::Target => "target",
            Field::Case => "case",
            Field::Tag => "tag",
            Field::Check => "check",
            Field::Kind => "kind",
            Field::EvaluatorType => "evaluator_type",
            Field::Status => "status",
            Field::Model => "model",
        }
    }
}

/// Arguments of `list_runs`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRunsArgs {
    /// Only runs of this suite.
    pub suite: Option<String>,
    /// Runs per page (default 100, at most 1000).
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Arguments of `get_run`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetRunArgs {
    /// A run id, a unique prefix of 6+ characters, or `latest`.
    pub run: String,
}

/// Arguments of `compare_runs`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareRunsArgs {
    /// The baseline run: an id, a unique prefix, or `latest`.
    pub run_a: String,
    /// The candidate run: an id, a unique prefix, or `latest`.
    pub run_b: String,
    /// Cases per page (default 100, at most 1000); regressions come first.
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Arguments of `get_execution`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetExecutionArgs {
    /// The run: an id, a unique prefix, or `latest`.
    pub run: String,
    /// The case id.
    pub case: String,
    /// The target; may be left out when the case ran against one target.
    pub target: Option<String>,
    /// The repeat index (default 0).
    #[serde(default)]
    pub repeat: u32,
}

/// Reads a tool's arguments, naming the field that does not fit.
pub(crate) fn parse<T: DeserializeOwned>(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, ToolError> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        if path == "." {
            // Unknown and missing fields: serde's message names them.
            ToolError::Invalid {
                field: None,
                message,
            }
        } else {
            ToolError::Invalid {
                field: Some(path),
                message,
            }
        }
    })
}

/// The page size asked for, checked.
pub(crate) fn limit(limit: Option<u32>) -> Result<u32, ToolError> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(n @ 1..=MAX_LIMIT) => Ok(n),
        Some(n) => Err(ToolError::field(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}, got {n}"),
        )),
    }
}

/// An RFC 3339 time in the store's fixed-width UTC form, so text order is time order.
pub(crate) fn time_bound(field: &str, text: &str) -> Result<String, ToolError> {
    use time::format_description::well_known::Rfc3339;
    let parsed = time::OffsetDateTime::parse(text, &Rfc3339).map_err(|e| {
        ToolError::field(
            field,
            format!("`{text}` is not an RFC 3339 time like 2026-11-01T00:00:00Z ({e})"),
        )
    })?;
    let utc = parsed.to_offset(time::UtcOffset::UTC);
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    utc.format(&format)
        .map_err(|e| ToolError::field(field, format!("`{text}` cannot be stored ({e})")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
        value.as_object().cloned()
    }

    #[test]
    fn bad_arguments_name_their_field() {
        let err = parse::<QueryArgs>(args(json!({"aggregation": "p96"}))).unwrap_err();
        assert!(err.to_string().contains("`aggregation`"), "{err}");
        let err = parse::<QueryArgs>(args(json!({"group_by": ["check", "colour"]}))).unwrap_err();
        assert!(err.to_string().contains("`group_by[1]`"), "{err}");
        let err = parse::<QueryArgs>(args(json!({"agent": "x"}))).unwrap_err();
        assert!(err.to_string().contains("unknown field `agent`"), "{err}");
        let err = parse::<GetRunArgs>(args(json!({}))).unwrap_err();
        assert!(err.to_string().contains("missing field `run`"), "{err}");
        let err = limit(Some(5000)).unwrap_err();
        assert!(err.to_string().contains("`limit`"), "{err}");
        assert_eq!(limit(None).unwrap(), DEFAULT_LIMIT);
    }

    #[test]
    fn time_bounds_take_the_stored_form() {
        assert_eq!(
            time_bound("since", "2026-11-01T02:00:00+02:00").unwrap(),
            "2026-11-01T00:00:00.000Z"
        );
        let err = time_bound("until", "yesterday").unwrap_err();
        assert!(err.to_string().contains("`until`"), "{err}");
    }
}
