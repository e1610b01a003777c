//! Why an export could not be set up or did not complete.

/// An OpenTelemetry export failure. Messages never hold header values.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The OTLP exporter could not be built (bad endpoint, protocol, headers).
    #[error("OpenTelemetry exporter for {signal}: {message}")]
    Build {
        /// `traces` or `logs`.
        signal: &'static str,
        /// What the exporter builder said.
        message: String,
    },
    /// Flushing or shutting down a provider failed (the receiver refused or was unreachable).
    #[error("OpenTelemetry export of {signal} did not complete: {message}")]
    Export {
        /// `traces` or `logs`.
        signal: &'static str,
        /// What the SDK said.
        message: String,
    },
    /// The stored run could not be read.
    #[error(transparent)]
    Session(#[from] gavel_session::SessionError),
    /// The export thread stopped before it finished.
    #[error("OpenTelemetry export stopped: {0}")]
    Stopped(String),
}
