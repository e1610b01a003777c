//! What to export and where.

pub use gavel_core::otel::{Protocol, UnknownProtocol};

/// Export settings. Endpoint headers (`OTEL_EXPORTER_OTLP_HEADERS`) and
/// timeouts come from the standard variables, read by the OTLP exporter.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Base URL of the receiver (`http://host:4318` for HTTP, `http://host:4317`
    /// for gRPC); `None` reads `OTEL_EXPORTER_OTLP_ENDPOINT` (per-signal
    /// variables too), else the OTLP default on localhost.
    pub endpoint: Option<String>,
    /// The transport.
    pub protocol: Protocol,
    /// Leave out message texts and tool-call arguments and results.
    pub redact_content: bool,
    /// Also attach each `gen_ai.evaluation.result` as a span event (on by default).
    pub span_events: bool,
    /// Send `gen_ai.evaluation.result` log records (off for receivers without a
    /// logs endpoint, such as Phoenix).
    pub logs: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            endpoint: None,
            protocol: Protocol::default(),
            redact_content: false,
            span_events: true,
            logs: true,
        }
    }
}
