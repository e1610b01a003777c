//! Errors found while compiling a case's checks.

/// A case's checks cannot be compiled. This is bad input in the suite: it is reported
/// before anything runs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// One check (or the case's expectations it relies on) is invalid.
    ///
    /// Displays as `suite.yaml:12: case `list-listings`: checks[0].pattern: regex
    /// parse error: ...`.
    #[error("{source_loc}: case `{case_id}`: {field}: {message}")]
    Invalid {
        /// Where the field is (`file:line:column`), else where the case is
        /// defined (`file:line`, the case's `source`).
        source_loc: String,
        /// The case's id.
        case_id: String,
        /// The field path inside the case, e.g. `rounds[1].checks[0].pattern`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A judge prompt template override (`judge.templates`) cannot be used.
    ///
    /// Displays as `judge.templates.judge (prompts/judge.j2): cannot read: ...`.
    #[error("judge.templates.{kind} ({path}): {message}")]
    Template {
        /// The key in `judge.templates` (`judge`, `rubric`, `pairwise`, `choice`,
        /// `step` or `extract`).
        kind: String,
        /// The template file.
        path: String,
        /// What is wrong: unreadable, a syntax error, a missing block…
        message: String,
    },
}

/// A problem with one field of one check, before the case's location is known.
#[derive(Debug)]
pub(crate) struct FieldError {
    /// The field relative to the check (`pattern`, `fields[1]`), or empty for the
    /// check itself.
    pub(crate) field: String,
    /// What is wrong.
    pub(crate) message: String,
}

impl FieldError {
    /// An error about `field` of the check.
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A pass threshold on a 0-1 score: `value`, else `default`; the error names the
/// check's `threshold` field.
pub(crate) fn share_threshold(value: Option<f64>, default: f64) -> Result<f64, FieldError> {
    let threshold = value.unwrap_or(default);
    if threshold.is_finite() && (0.0..=1.0).contains(&threshold) {
        Ok(threshold)
    } else {
        Err(FieldError::new(
            "threshold",
            format!("threshold {threshold} is outside the 0-1 score"),
        ))
    }
}
