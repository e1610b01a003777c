//! Why an export could not be set up or did not complete.

/// An OpenTelemetry export failure. Messages never hold header values.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// A setting variable holds a value it cannot take.
    #[error("{name}: {message}")]
    Variable {
        /// The variable.
        name: &'static str,
        /// What is wrong with its value.
        message: String,
    },
    /// The OTLP exporter could not be built (bad endpoint, protocol, headers).
    #[error("OpenTelemetry exporter for {signal}: {message}")]
    Build {
        /// `traces` or `logs`.
        signal: &'static str,
        /// What the exporter builder said.
        message: String,
    },
    /// An export failed: the receiver refused it or was unreachable (or the
    /// pipeline could not be shut down).
    #[error("OpenTelemetry export of {signal} to {receiver} failed: {message}")]
    Export {
        /// `traces` or `logs`.
        signal: &'static str,
        /// Where it was sent (any password in the URL masked).
        receiver: String,
        /// What the exporter said.
        message: String,
    },
    /// The stored run could not be read, or the run could not be prepared or executed.
    #[error(transparent)]
    Session(#[from] gavel_session::SessionError),
    /// The export thread stopped before it finished.
    #[error("OpenTelemetry export stopped: {0}")]
    Stopped(String),
}

impl OtelError {
    /// Whether the settings are at fault (exit 2, HTTP 422) rather than the
    /// receiver or the machine.
    pub fn is_bad_input(&self) -> bool {
        match self {
            OtelError::Variable { .. } | OtelError::Build { .. } => true,
            OtelError::Session(e) => e.is_bad_input(),
            OtelError::Export { .. } | OtelError::Stopped(_) => false,
        }
    }
}
