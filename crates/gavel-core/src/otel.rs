//! The suite's `otel` setting: export runs to OpenTelemetry without a flag.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum Protocol {
    /// OTLP/HTTP with protobuf bodies (`http/protobuf`, the OTLP default).
    #[default]
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    /// OTLP/HTTP with JSON bodies (`http/json`).
    #[serde(rename = "http/json")]
    HttpJson,
    /// OTLP/gRPC (`grpc`).
    #[serde(rename = "grpc")]
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

/// The suite's `otel:` block: `true` exports with the defaults; each field is
/// the same as a `gavel run` flag, and a flag given wins over its field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OtelSettings {
    /// OTLP receiver base URL (`--otel-endpoint`; default
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, else localhost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// `http/protobuf` (default), `http/json` or `grpc` (`--otel-protocol`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// Leave every agent-derived text out: messages, tool arguments and
    /// results, evaluation explanations, error messages (`--otel-redact`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redact: bool,
    /// Also attach verdicts as span events (default true; `--otel-no-span-events`).
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub span_events: bool,
    /// Send verdicts as log records (default true; `--otel-no-logs`).
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub logs: bool,
}

fn yes() -> bool {
    true
}

impl Default for OtelSettings {
    fn default() -> OtelSettings {
        OtelSettings {
            endpoint: None,
            protocol: None,
            redact: false,
            span_events: true,
            logs: true,
        }
    }
}

/// `otel: true`, `otel: false` or `otel: {…}` in a suite file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OtelSetting {
    /// On with the defaults, or off.
    Enabled(bool),
    /// On with these settings.
    With(OtelSettings),
}

impl OtelSetting {
    /// The settings when export is on.
    pub fn settings(self) -> Option<OtelSettings> {
        match self {
            OtelSetting::Enabled(true) => Some(OtelSettings::default()),
            OtelSetting::Enabled(false) => None,
            OtelSetting::With(s) => Some(s),
        }
    }
}
