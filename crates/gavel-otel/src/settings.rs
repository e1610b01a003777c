//! What to export and where.

/// The OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// OTLP/HTTP with protobuf bodies (`http/protobuf`, the OTLP default).
    #[default]
    HttpProtobuf,
    /// OTLP/HTTP with JSON bodies (`http/json`).
    HttpJson,
    /// OTLP/gRPC (`grpc`).
    Grpc,
}

impl Protocol {
    /// The word `OTEL_EXPORTER_OTLP_PROTOCOL` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::HttpJson => "http/json",
            Protocol::Grpc => "grpc",
        }
    }
}

impl std::str::FromStr for Protocol {
    type Err = UnknownProtocol;

    fn from_str(s: &str) -> Result<Protocol, UnknownProtocol> {
        match s.trim().to_ascii_lowercase().as_str() {
            "http/protobuf" => Ok(Protocol::HttpProtobuf),
            "http/json" => Ok(Protocol::HttpJson),
            "grpc" => Ok(Protocol::Grpc),
            _ => Err(UnknownProtocol(s.to_string())),
        }
    }
}

/// A protocol word that is none of `http/protobuf`, `http/json` and `grpc`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("`{0}` is not an OTLP protocol (http/protobuf, http/json or grpc)")]
pub struct UnknownProtocol(pub String);

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
