//! The gavel vocabulary and suite loading.
//!
//! A [`Suite`] holds [`Case`]s and the [`TargetSpec`]s that reach the agent under
//! test. Running a case against a target yields an [`Execution`]: a [`Transcript`]
//! of [`Turn`]s and the [`Verdict`]s of its checks. Executions of one case roll up
//! into an [`Outcome`], and outcomes into a [`Summary`].
//!
//! ```
//! let yaml = "cases:\n  - id: hello\n    input: Hi\n    checks:\n      - type: contains\n        value: Hello\n";
//! let suite = gavel_core::load::parse_suite_str(yaml, "inline.yaml".as_ref()).unwrap();
//! assert_eq!(suite.cases[0].id, "hello");
//! ```

pub mod agent_check;
pub mod bounds;
pub mod calibration;
pub mod capability;
pub mod case;
pub mod check;
pub mod check_kind;
pub mod error;
pub mod evidence;
pub mod gate;
pub mod judge;
pub mod load;
pub mod metric;
pub mod otel;
pub mod outcome;
pub mod panel;
pub mod run;
pub mod secrets;
pub mod status;
pub mod target;
pub mod template;
pub mod transcript;
pub mod verdict;
pub mod workspace;

pub use calibration::{
    CalibrationRequirement, CalibrationRun, DEFAULT_MIN_AGREEMENT, DEFAULT_MIN_COVERAGE,
    DEFAULT_MIN_ITEMS, DEFAULT_MIN_KAPPA, ExecutionRef, GateMetric, JudgeFingerprint, Label,
};
pub use case::{Case, CriteriaJudge, Round, SimulatedUser, Suite, SuiteDefaults};
pub use check::{CheckSpec, OneOrMany};
pub use check_kind::{CheckKind, EvaluatorType, UnknownCheckKind, UnknownEvaluatorType};
pub use error::{LoadError, Location};
pub use evidence::{
    Evidence, Favoured, JudgeScore, ModelCalls, PairwiseOrder, PairwiseReading, Reading,
    Rejudgement, RubricDimension, RubricReading, SelectBestReading, ShortCircuit, StepScore,
    StepScores, ToolCallGrade, ToolVerifications, TrajectoryReading,
};
pub use judge::{JudgeSettings, Scale};
pub use metric::{Metric, MetricSpec, ScriptInput, ScriptSpec, Transform};
pub use outcome::{
    Execution, ExecutionKey, Outcome, PairwiseStats, SelectBestStats, Summary, TagStats,
};
pub use run::{RunRecord, RunStatus, UnknownRunStatus};
pub use status::{Status, UnknownStatus};
pub use target::TargetSpec;
pub use transcript::{
    Attempts, ModelCall, ModelCaller, StreamStats, TargetFailure, ToolCall, Transcript, Turn, Usage,
};
pub use verdict::Verdict;

/// The current time as fixed-width RFC 3339 UTC text (`2026-01-02T03:04:05.678Z`),
/// which sorts as text in every store.
pub fn now_rfc3339() -> String {
    rfc3339(chrono::Utc::now())
}

/// The first and last milliseconds written with a four-digit year:
/// `-9999-01-01T00:00:00.000Z` and `9999-12-31T23:59:59.999Z`.
const MS_RANGE: std::ops::RangeInclusive<i64> = -377_705_116_800_000..=253_402_300_799_999;

/// A time given in epoch milliseconds, written as [`now_rfc3339`] writes the
/// present (out of range: the epoch for times before, the last millisecond of
/// year 9999 for times after).
pub fn rfc3339_of_ms(ms: i64) -> String {
    let ms = if MS_RANGE.contains(&ms) {
        ms
    } else if ms < 0 {
        0
    } else {
        *MS_RANGE.end()
    };
    chrono::DateTime::from_timestamp_millis(ms).map_or_else(String::new, rfc3339)
}

fn rfc3339(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// `""` for one, `"s"` otherwise: the plural ending of a counted English noun.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A JSON value's type with its article, for messages: `a string`, `null`, `an array`.
pub fn json_type(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn epoch_milliseconds_are_written_as_now_is() {
        assert_eq!(super::rfc3339_of_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            super::rfc3339_of_ms(1_764_300_000_123),
            "2025-11-28T03:20:00.123Z"
        );
        assert_eq!(super::rfc3339_of_ms(i64::MAX), "9999-12-31T23:59:59.999Z");
        assert_eq!(
            super::rfc3339_of_ms(253_402_300_800_000),
            "9999-12-31T23:59:59.999Z"
        );
        assert_eq!(
            super::rfc3339_of_ms(-377_705_116_800_000),
            "-9999-01-01T00:00:00.000Z"
        );
        assert_eq!(
            super::rfc3339_of_ms(-377_705_116_800_001),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(super::rfc3339_of_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            super::rfc3339_of_ms(-62_135_596_800_001),
            "0000-12-31T23:59:59.999Z"
        );
        assert_eq!(super::now_rfc3339().len(), 24);
    }
}
