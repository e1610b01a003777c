//! Errors from building targets and starting their processes.
//!
//! Failures while talking to a target during a run are not errors of this kind:
//! they land in [`gavel_core::Turn::failure`] so the case is reported as `error`.

/// Something went wrong before the run could talk to a target: bad spec, missing
/// environment variable, or a start process that never became ready.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// A field of the target spec is invalid or cannot be expanded.
    #[error("target `{target}`: {field}: {message}")]
    Config {
        /// The target's name in the suite.
        target: String,
        /// The field path, e.g. `headers.Authorization` or `start.command[0]`.
        field: String,
        /// What is wrong with it (never a secret value).
        message: String,
    },
    /// The target cannot be used in this environment (e.g. its model has no
    /// credentials): its executions are skipped with this reason.
    #[error("target `{target}` is unavailable: {reason}")]
    Unavailable {
        /// The target's name in the suite.
        target: String,
        /// Why, e.g. `OPENAI_API_KEY is not set`.
        reason: String,
    },
    /// The target's start process could not be spawned or never became ready.
    #[error("target `{target}`: start: {message}")]
    Start {
        /// The target's name in the suite.
        target: String,
        /// What happened, followed by the last lines the process printed.
        message: String,
    },
}

impl TargetError {
    /// A configuration error in the field `field` of target `target`.
    pub fn config(target: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        TargetError::Config {
            target: target.to_owned(),
            field: field.into(),
            message: message.into(),
        }
    }

    pub(crate) fn start(target: &str, message: impl Into<String>) -> Self {
        TargetError::Start {
            target: target.to_owned(),
            message: message.into(),
        }
    }
}

/// Expands `${VAR}` in one field, naming the target and field on error.
pub(crate) fn expand(
    target: &str,
    field: impl FnOnce() -> String,
    value: &str,
) -> Result<String, TargetError> {
    gavel_core::template::expand_env(value)
        .map_err(|e| TargetError::config(target, field(), e.to_string()))
}

/// Expands `${VAR}` in a field whose value is a secret (a header, a process's
/// environment): the values are registered for redaction
/// ([`gavel_core::template::expand_secret`]).
pub(crate) fn expand_secret(
    target: &str,
    field: impl FnOnce() -> String,
    value: &str,
) -> Result<String, TargetError> {
    gavel_core::template::expand_secret(value)
        .map_err(|e| TargetError::config(target, field(), e.to_string()))
}

/// Expands a process's `env` value `key` like [`expand_secret`]; written out
/// under a name that marks a secret ([`gavel_core::secrets::is_secret_name`]),
/// the value is registered too.
pub(crate) fn expand_env_value(
    target: &str,
    field: impl FnOnce() -> String,
    key: &str,
    value: &str,
) -> Result<String, TargetError> {
    let expanded = expand_secret(target, field, value)?;
    if gavel_core::secrets::is_secret_name(key) {
        gavel_core::secrets::register(&expanded);
    }
    Ok(expanded)
}

/// Parses a timeout in seconds (`None` → `default`), rejecting non-positive or
/// non-finite values.
pub(crate) fn timeout(
    target: &str,
    field: &str,
    value: Option<f64>,
    default: f64,
) -> Result<std::time::Duration, TargetError> {
    let secs = value.unwrap_or(default);
    if !(secs.is_finite() && secs > 0.0) {
        return Err(TargetError::config(
            target,
            field,
            format!("must be a positive number of seconds, got {secs}"),
        ));
    }
    std::time::Duration::try_from_secs_f64(secs)
        .map_err(|e| TargetError::config(target, field, e.to_string()))
}
