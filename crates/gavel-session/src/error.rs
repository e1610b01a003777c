//! Why a session could not run.

use gavel_core::LoadError;

/// A session's failure. [`SessionError::is_bad_input`] tells the caller's fault
/// (exit 2, HTTP 422) from the harness's (exit 3, HTTP 500).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The suites do not load or compile.
    #[error("{}", list(.0))]
    Load(Vec<LoadError>),
    /// Cases load but their checks do not compile.
    #[error("{}", list(.0))]
    Compile(Vec<gavel_checks::CheckError>),
    /// A flag, setting or request field is wrong.
    #[error("{field}: {message}")]
    Config {
        /// The flag or field, e.g. `--judge`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A suite written by others (stored through the web UI or its API) asks
    /// for what only the server's operator may configure (docs/SECURITY.md).
    #[error("{}", not_allowed(.0))]
    NotAllowed(Vec<gavel_core::capability::Finding>),
    /// The selection left nothing to run.
    #[error("no case matched the selection (tags, skip-tags, filter)")]
    NothingSelected,
    /// The cases compile but cannot be planned (e.g. an unknown target).
    #[error(transparent)]
    Plan(gavel_runner::RunnerError),
    /// The store failed.
    #[error("the store: {0}")]
    Store(#[from] gavel_store::StoreError),
    /// The targets could not be started.
    #[error("starting the targets: {0}")]
    Targets(gavel_runner::RunnerError),
    /// A labelled set cannot be read or judged.
    #[error(transparent)]
    Calibration(#[from] gavel_calibration::CalibrationError),
    /// A promptfoo config could not be converted.
    #[cfg(feature = "promptfoo")]
    #[error(transparent)]
    Promptfoo(#[from] gavel_promptfoo::ImportError),
    /// The run itself broke (a result could not be recorded).
    #[error(transparent)]
    Run(gavel_runner::RunnerError),
    /// A report file could not be written.
    #[error(transparent)]
    Report(#[from] gavel_report::ReportError),
}

impl SessionError {
    /// A configuration error about `field`.
    pub fn config(field: impl Into<String>, message: impl Into<String>) -> SessionError {
        SessionError::Config {
            field: field.into(),
            message: message.into(),
        }
    }

    /// Whether the input was at fault rather than the harness.
    pub fn is_bad_input(&self) -> bool {
        match self {
            SessionError::Load(_)
            | SessionError::Compile(_)
            | SessionError::Config { .. }
            | SessionError::NotAllowed(_)
            | SessionError::NothingSelected
            | SessionError::Plan(_)
            | SessionError::Calibration(_) => true,
            // A target's settings are wrong (a missing fixture, a malformed
            // `${VAR}`): the suite's fault, not the machine's.
            SessionError::Targets(gavel_runner::RunnerError::Target(
                gavel_targets::TargetError::Config { .. },
            )) => true,
            #[cfg(feature = "promptfoo")]
            SessionError::Promptfoo(_) => true,
            _ => false,
        }
    }
}

/// What is refused, one per line, each with what to do instead.
fn not_allowed(found: &[gavel_core::capability::Finding]) -> String {
    let lines: Vec<String> = found.iter().map(crate::trust::refusal).collect();
    lines.join("\n")
}

/// Errors one per line, then their count.
fn list(errors: &[impl std::fmt::Display]) -> String {
    let mut out: String = errors.iter().map(|e| format!("{e}\n")).collect();
    out.push_str(&format!(
        "{} error{} found",
        errors.len(),
        gavel_core::plural(errors.len())
    ));
    out
}
